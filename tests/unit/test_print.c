/* test_print.c - CUnit suite for the AST printer (src/parser/pld_print.c).
 *
 * Exact output for each construct (precedence parentheses, literals, tuples,
 * comments, elif chains, raw SubWorker bodies), and the contract of pld_ast.h:
 * print -> parse -> print is a fixed point, over every file of
 * tests/examples (copy of shared/examples) (*.pld, *.dsl.py) and programs/ (globbed at run time; the
 * directories come from PLD_EXAMPLES_DIR / PLD_PROGRAMS_DIR). A failure names
 * the file and the first differing line. */
#include "pld_test.h"

#include <dirent.h>
#include <sys/stat.h>

/* ------------------------------------------------------------------ helpers */

static char *print_of(const char *src, int *ok)
{
    pld_program_t *p = pld_parse_text("t.pld", src, strlen(src));
    *ok = p && p->parsed_ok;
    pld_buf_t b;
    pld_buf_init(&b);
    if (p)
        pld_ast_print(p, &b);
    char *s = strdup(pld_buf_str(&b));
    pld_buf_fini(&b);
    pld_program_destroy(p);
    return s;
}

/* print(parse(src)) must equal want exactly, and be a fixed point. */
static void expect_print_at(const char *src, const char *want, int line)
{
    int ok1, ok2;
    char *got = print_of(src, &ok1);
    if (!ok1) {
        fprintf(stderr, "\ntest_print.c:%d: input does not parse:\n%s\n", line, src);
        CU_FAIL("input does not parse");
    } else if (strcmp(got, want) != 0) {
        fprintf(stderr, "\ntest_print.c:%d: printed text differs\n-- input:\n%s\n-- expected:\n%s-- found:\n%s", line,
                src, want, got);
        CU_FAIL("printed text differs");
    } else {
        char *again = print_of(got, &ok2);
        if (!ok2 || strcmp(again, got) != 0) {
            fprintf(stderr, "\ntest_print.c:%d: not a fixed point:\n%s\n-- reprinted:\n%s", line, got, again);
            CU_FAIL("print is not a fixed point");
        } else {
            CU_PASS("printed as expected, fixed point");
        }
        free(again);
    }
    free(got);
}
#define EXPECT_PRINT(src, want) expect_print_at((src), (want), __LINE__)

/* `y = EXPR` inside `def f` printed back: compares just the expression. */
static void expect_expr_print_at(const char *expr, const char *want, int line)
{
    const char *hdr = "@pl.function\ndef f(x: pl.Scalar[pl.INT32]):\n    y = ";
    size_t n = strlen(hdr) + strlen(expr) + 2;
    char *src = malloc(n);
    snprintf(src, n, "%s%s\n", hdr, expr);
    size_t m = strlen(hdr) + strlen(want) + 2;
    char *w = malloc(m);
    snprintf(w, m, "%s%s\n", hdr, want);
    expect_print_at(src, w, line);
    free(src);
    free(w);
}
#define EXPECT_EXPR_PRINT(expr, want) expect_expr_print_at((expr), (want), __LINE__)

/* ---------------------------------------------------------- exact printing */

static void test_print_module_layout(void)
{
    EXPECT_PRINT("import pypto.language as pl\nfrom pypto import language as X, ir\nimport os\n"
                 "N = 4\nNR = pl.dynamic(\"NR\")\nP = 1, 2\n"
                 "@pl.program\nclass A:\n    @pl.function(type=pl.FunctionType.InCore)\n"
                 "    def k(self, a: pl.Tensor[[N, 8], pl.FP32]) -> pl.Tensor[[N, 8], pl.FP32]:\n        return a\n"
                 "    @pl.function\n    def g(self):\n        return\n",
                 "import pypto.language as pl\nfrom pypto import language as X\nfrom pypto import ir\nimport os\n\n"
                 "N = 4\nNR = pl.dynamic(\"NR\")\nP = 1, 2\n\n"
                 "@pl.program\nclass A:\n    @pl.function(type=pl.FunctionType.InCore)\n"
                 "    def k(self, a: pl.Tensor[[N, 8], pl.FP32]) -> pl.Tensor[[N, 8], pl.FP32]:\n        return a\n\n"
                 "    @pl.function\n    def g(self):\n        return\n");
}

/* Conditional expressions (module constants only): lowest precedence, the
 * else branch chains without parentheses. */
static void test_print_conditional_constants(void)
{
    EXPECT_PRINT("A = 1 if B else 2\n"
                 "C = (1 if B else 2) + 3\n"
                 "D = (1 if B else 2) if (3 if B else 4) else 5 if B else 6\n"
                 "E = f(x if B else y, [1 if B else 2])\n"
                 "F = (a or b) if not c else -(1 if B else 2)\n"
                 "G = max(1, 2) if N // 2 % 3 else min(4, 5)\n",
                 "A = 1 if B else 2\n"
                 "C = (1 if B else 2) + 3\n"
                 "D = (1 if B else 2) if (3 if B else 4) else 5 if B else 6\n"
                 "E = f(x if B else y, [1 if B else 2])\n"
                 "F = a or b if not c else -(1 if B else 2)\n"
                 "G = max(1, 2) if N // 2 % 3 else min(4, 5)\n\n");
}

static void test_print_empty_class_and_block(void)
{
    EXPECT_PRINT("@pl.program\nclass A:\n    \"\"\"Only a docstring.\"\"\"\n", "@pl.program\nclass A:\n    pass\n");
    EXPECT_PRINT("@pl.function\ndef f():\n    \"\"\"Doc.\"\"\"\n", "@pl.function\ndef f():\n    pass\n");
}

static void test_print_top_level_function(void)
{
    EXPECT_PRINT("@pl.function\ndef f(a: pl.Scalar[pl.INT32],\n      b: pl.Scalar[pl.INT32],) -> "
                 "tuple[pl.Scalar[pl.INT32], pl.Scalar[pl.INT32]]:\n    return a, b\n",
                 "@pl.function\ndef f(a: pl.Scalar[pl.INT32], b: pl.Scalar[pl.INT32]) -> "
                 "tuple[pl.Scalar[pl.INT32], pl.Scalar[pl.INT32]]:\n    return a, b\n");
}

static void test_print_statements(void)
{
    EXPECT_PRINT("@pl.function\ndef f(x: pl.Scalar[pl.INT32]):\n"
                 "    a: pl.Scalar[pl.INT32] = x\n    b, c = g(x)\n    (d, e) = h\n    i, = j\n    t[0:2, :] = u\n"
                 "    for k in pl.range(4):\n        continue\n"
                 "    for k, (acc,) in pl.range(0, 4, 1, init_values=(z,)):\n        acc2 = pl.yield_(acc)\n"
                 "    for (p, q) in pl.while_(init_values=(p0, q0)):\n        pl.cond(p < q)\n"
                 "    while a:\n        break\n"
                 "    with pl.at(level=pl.Level.CORE_GROUP) as s:\n        pass\n"
                 "    if a: b = 1\n    else: b = 2\n"
                 "    return a, b\n",
                 "@pl.function\ndef f(x: pl.Scalar[pl.INT32]):\n"
                 "    a: pl.Scalar[pl.INT32] = x\n    b, c = g(x)\n    d, e = h\n    i, = j\n    t[0:2, :] = u\n"
                 "    for k in pl.range(4):\n        continue\n"
                 "    for k, (acc,) in pl.range(0, 4, 1, init_values=(z,)):\n        acc2 = pl.yield_(acc)\n"
                 "    for p, q in pl.while_(init_values=(p0, q0)):\n        pl.cond(p < q)\n"
                 "    while a:\n        break\n"
                 "    with pl.at(level=pl.Level.CORE_GROUP) as s:\n        pass\n"
                 "    if a:\n        b = 1\n    else:\n        b = 2\n"
                 "    return a, b\n");
}

static void test_print_elif_chain(void)
{
    EXPECT_PRINT("@pl.function\ndef f(x: pl.Scalar[pl.INT32]):\n    if a:\n        pass\n    elif b:\n        pass\n"
                 "    else:\n        if c:\n            pass\n",
                 "@pl.function\ndef f(x: pl.Scalar[pl.INT32]):\n    if a:\n        pass\n    elif b:\n        pass\n"
                 "    else:\n        if c:\n            pass\n");
}

static void test_print_comments(void)
{
    /* leading comments stay above their statement; a trailing comment moves
     * above it (as PyPTO's printer does); a comment before a decorator stays */
    EXPECT_PRINT("# header\nX = 1\n@pl.program\nclass A:\n    # about g\n    @pl.function\n"
                 "    def g(self):\n        # lead\n        #\n        y = 1  # trail\n        if y:\n"
                 "            # inside\n            pass\n",
                 "# header\nX = 1\n\n@pl.program\nclass A:\n    # about g\n    @pl.function\n"
                 "    def g(self):\n        # lead\n        #\n        # trail\n        y = 1\n        if y:\n"
                 "            # inside\n            pass\n");
}

static void test_print_module_comments(void)
{
    /* comments before the imports and before the program's decorator are kept;
     * a trailing comment on an import or a module constant moves above it;
     * comments before a module docstring (dropped) go with the next item */
    EXPECT_PRINT("# header 1\n#\n# header 2\nimport pypto.language as pl  # the DSL\n"
                 "from m import (a,  # first\n    b)\n# about doc\n\"\"\"doc\"\"\"\n# before X\nX = 1  # trail X\n"
                 "Y = 2\n\n# about the program\n@pl.program\nclass A:\n    pass\n",
                 "# header 1\n#\n# header 2\n# the DSL\nimport pypto.language as pl\n# first\nfrom m import a\n"
                 "from m import b\n\n# about doc\n# before X\n# trail X\nX = 1\nY = 2\n\n# about the program\n"
                 "@pl.program\nclass A:\n    pass\n");
    /* comments after the last statement of the file stay at its end */
    EXPECT_PRINT("@pl.program\nclass A:\n    pass\n    # end of A\n# end of file\n",
                 "@pl.program\nclass A:\n    pass\n\n# end of A\n# end of file\n");
    /* a trailing comment on the last constant stays with it, not with the class */
    EXPECT_PRINT("N = pl.dynamic(\"N\")  # rows\n@pl.program\nclass A:\n    pass\n",
                 "# rows\nN = pl.dynamic(\"N\")\n\n@pl.program\nclass A:\n    pass\n");
}

static void test_print_subworker_raw_body(void)
{
    EXPECT_PRINT("@pl.program\nclass A:\n    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)\n"
                 "    def sw(x: pl.Tensor[[4], pl.FP32]):\n\timport torch\n\n\tif x:\n\t    raise E(f'{x}')\n",
                 "@pl.program\nclass A:\n    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)\n"
                 "    def sw(x: pl.Tensor[[4], pl.FP32]):\n        import torch\n\n        if x:\n"
                 "            raise E(f'{x}')\n");
}

static void test_print_precedence_parentheses(void)
{
    EXPECT_EXPR_PRINT("(a + b) * c", "(a + b) * c");
    EXPECT_EXPR_PRINT("a + (b * c)", "a + b * c");
    EXPECT_EXPR_PRINT("(a - b) - c", "a - b - c");
    EXPECT_EXPR_PRINT("a - (b - c)", "a - (b - c)");
    EXPECT_EXPR_PRINT("a / (b * c)", "a / (b * c)");
    EXPECT_EXPR_PRINT("-(a ** b)", "-a ** b");
    EXPECT_EXPR_PRINT("(-a) ** b", "(-a) ** b");
    EXPECT_EXPR_PRINT("a ** (b ** c)", "a ** b ** c");
    EXPECT_EXPR_PRINT("(a ** b) ** c", "(a ** b) ** c");
    EXPECT_EXPR_PRINT("a ** -b", "a ** -b");
    EXPECT_EXPR_PRINT("-(-a)", "--a");
    EXPECT_EXPR_PRINT("not (a and b)", "not (a and b)");
    EXPECT_EXPR_PRINT("(not a) and b", "not a and b");
    EXPECT_EXPR_PRINT("(a or b) and c", "(a or b) and c");
    EXPECT_EXPR_PRINT("(a < b) == c", "(a < b) == c");
    EXPECT_EXPR_PRINT("a < (b == c)", "a < (b == c)");
    EXPECT_EXPR_PRINT("(a | b) & c", "(a | b) & c");
    EXPECT_EXPR_PRINT("a << (b + c)", "a << b + c");
    EXPECT_EXPR_PRINT("(a << b) + c", "(a << b) + c");
    EXPECT_EXPR_PRINT("(a + b).c", "(a + b).c");
    EXPECT_EXPR_PRINT("(a + b)[0]", "(a + b)[0]");
    EXPECT_EXPR_PRINT("(-a)(b)", "(-a)(b)");
    EXPECT_EXPR_PRINT("(1).real", "(1).real");
    EXPECT_EXPR_PRINT("a xor (b or c)", "a xor (b or c)");
    EXPECT_EXPR_PRINT("(a xor b) or c", "a xor b or c");
}

static void test_print_literals(void)
{
    EXPECT_EXPR_PRINT("1.0", "1.0");
    EXPECT_EXPR_PRINT(".5", "0.5");
    EXPECT_EXPR_PRINT("5.", "5.0");
    EXPECT_EXPR_PRINT("1e-7", "1e-07");
    EXPECT_EXPR_PRINT("1E5", "1e+05"); /* shortest %g that round-trips (Python would say 100000.0) */
    EXPECT_EXPR_PRINT("1e16", "1e+16");
    EXPECT_EXPR_PRINT("0.10000000000000001", "0.1");
    EXPECT_EXPR_PRINT("1e999", "inf");
    EXPECT_EXPR_PRINT("0x1F", "31");
    EXPECT_EXPR_PRINT("1_000", "1000");
    EXPECT_EXPR_PRINT("9223372036854775807", "9223372036854775807");
    EXPECT_EXPR_PRINT("True", "True");
    EXPECT_EXPR_PRINT("None", "None");
    EXPECT_EXPR_PRINT("...", "...");
    EXPECT_EXPR_PRINT("'a\"b'", "\"a\\\"b\"");
    EXPECT_EXPR_PRINT("r'\\d'", "\"\\\\d\"");
    EXPECT_EXPR_PRINT("'\\t\\n\\r\\x01'", "\"\\t\\n\\r\\x01\"");
    EXPECT_EXPR_PRINT("'ab' 'cd'", "\"abcd\"");
    EXPECT_EXPR_PRINT("'''multi\nline'''", "\"multi\\nline\"");
    EXPECT_EXPR_PRINT("'\\u00e9'", "\"\xc3\xa9\"");
}

static void test_print_sequences(void)
{
    EXPECT_EXPR_PRINT("()", "()");
    EXPECT_EXPR_PRINT("(a,)", "(a,)");
    EXPECT_EXPR_PRINT("(a)", "a");
    EXPECT_EXPR_PRINT("(a, b,)", "(a, b)");
    EXPECT_EXPR_PRINT("a, b", "(a, b)");
    EXPECT_EXPR_PRINT("[a, b,]", "[a, b]");
    EXPECT_EXPR_PRINT("[]", "[]");
    EXPECT_EXPR_PRINT("{\"k\": 1, \"v\": [2],}", "{\"k\": 1, \"v\": [2]}");
    EXPECT_EXPR_PRINT("x[a:b, ::2, :]", "x[a:b, ::2, :]");
    EXPECT_EXPR_PRINT("f(a, k=b,)", "f(a, k=b)");
    EXPECT_EXPR_PRINT("pl.Tuple[A, B,]", "pl.Tuple[A, B]");
}

static void test_print_oom_sets_flag(void)
{
    const char *src = "@pl.function\ndef f(x: pl.Scalar[pl.INT32]):\n    return x + 1\n";
    pld_program_t *p = pld_parse_text("t.pld", src, strlen(src));
    CU_ASSERT_FATAL(p && p->parsed_ok);
    for (long n = 0; n < 4; n++) {
        pld_buf_t b;
        pld_buf_init(&b);
        pld_mem_fail_after(n);
        pld_ast_print(p, &b);
        long failures = pld_mem_failures();
        pld_mem_fail_after(-1);
        CU_ASSERT_EQUAL(b.oom, failures > 0);
        pld_buf_fini(&b);
    }
    pld_program_destroy(p);
}

/* ------------------------------------------------------ corpus round trips */

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 8192, n = 0, got;
    char *s = malloc(cap);
    while ((got = fread(s + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 >= cap)
            s = realloc(s, cap *= 2);
    }
    fclose(f);
    s[n] = '\0';
    *len = n;
    return s;
}

static int has_suffix(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

typedef struct file_list {
    char **v;
    int n, cap;
} file_list_t;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Collects files under dir (recursively when recurse) ending in one of suffixes. */
static void collect(file_list_t *fl, const char *dir, const char *const *suffixes, int recurse)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            if (recurse)
                collect(fl, path, suffixes, recurse);
            continue;
        }
        for (const char *const *s = suffixes; *s; s++) {
            if (has_suffix(e->d_name, *s)) {
                if (fl->n == fl->cap)
                    fl->v = realloc(fl->v, (size_t)(fl->cap = fl->cap ? fl->cap * 2 : 64) * sizeof *fl->v);
                fl->v[fl->n++] = strdup(path);
                break;
            }
        }
    }
    closedir(d);
}

static void free_list(file_list_t *fl)
{
    for (int i = 0; i < fl->n; i++)
        free(fl->v[i]);
    free(fl->v);
}

/* Reports the first line where a and b differ. */
static void report_diff(const char *file, const char *what, const char *a, const char *b)
{
    int line = 1;
    const char *la = a, *lb = b;
    while (*a && *a == *b) {
        if (*a == '\n') {
            line++;
            la = a + 1;
            lb = b + 1;
        }
        a++;
        b++;
    }
    const char *ea = strchr(la, '\n'), *eb = strchr(lb, '\n');
    fprintf(stderr, "\n%s: %s; first difference at printed line %d:\n  first:  %.*s\n  second: %.*s\n", file, what,
            line, ea ? (int)(ea - la) : (int)strlen(la), la, eb ? (int)(eb - lb) : (int)strlen(lb), lb);
}

static void render_diags(const char *file, const pld_program_t *p)
{
    pld_buf_t b;
    pld_buf_init(&b);
    pld_diag_render(&p->diags, "    ", &b);
    fprintf(stderr, "\n%s: does not parse:\n%s", file, pld_buf_str(&b));
    pld_buf_fini(&b);
}

/* Returns the printed text of the file (owned), or NULL when it does not parse. */
static char *roundtrip_file(const char *file, int allow_errors, int *checked)
{
    size_t len;
    char *src = read_file(file, &len);
    if (!src) {
        fprintf(stderr, "\n%s: cannot read\n", file);
        CU_FAIL("cannot read a corpus file");
        return NULL;
    }
    pld_program_t *p = pld_parse_text(file, src, len);
    char *printed = NULL;
    if (!p->parsed_ok) {
        if (!allow_errors) {
            render_diags(file, p);
            CU_FAIL("corpus file does not parse");
        }
    } else {
        pld_buf_t a, b;
        pld_buf_init(&a);
        pld_buf_init(&b);
        pld_ast_print(p, &a);
        pld_program_t *q = pld_parse_text(file, pld_buf_str(&a), a.len);
        if (!q->parsed_ok) {
            fprintf(stderr, "\n%s: the printed text does not parse:\n%s\n", file, pld_buf_str(&a));
            render_diags(file, q);
            CU_FAIL("printed text does not parse");
        } else {
            pld_ast_print(q, &b);
            if (strcmp(pld_buf_str(&a), pld_buf_str(&b)) != 0) {
                report_diff(file, "print -> parse -> print is not a fixed point", pld_buf_str(&a), pld_buf_str(&b));
                CU_FAIL("print -> parse -> print is not a fixed point");
            } else {
                CU_PASS("fixed point");
            }
        }
        (*checked)++;
        printed = strdup(pld_buf_str(&a));
        pld_program_destroy(q);
        pld_buf_fini(&a);
        pld_buf_fini(&b);
    }
    pld_program_destroy(p);
    free(src);
    return printed;
}

static int dir_exists(const char *dir)
{
    struct stat st;
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

static void test_print_fixed_point_shared_examples(void)
{
    if (!dir_exists(PLD_EXAMPLES_DIR)) {
        printf(" [skipped: %s not found] ", PLD_EXAMPLES_DIR);
        return;
    }
    static const char *const suffixes[] = {".pld", ".dsl.py", NULL};
    file_list_t fl = {0};
    collect(&fl, PLD_EXAMPLES_DIR, suffixes, 0);
    qsort(fl.v, (size_t)fl.n, sizeof *fl.v, cmp_str);
    int checked = 0;
    for (int i = 0; i < fl.n; i++)
        free(roundtrip_file(fl.v[i], 0, &checked));
    CU_ASSERT(fl.n >= 24); /* 8 programs x (dsl, printed, printed_fmt) */
    CU_ASSERT_EQUAL(checked, fl.n);
    printf(" [%d files] ", checked);
    free_list(&fl);
}

/* A program's `# expect-error:` directive marks it as invalid on purpose. */
static int expects_error(const char *file)
{
    size_t len;
    char *s = read_file(file, &len);
    int r = s && strstr(s, "# expect-error:") != NULL;
    free(s);
    return r;
}

static void test_print_fixed_point_programs(void)
{
    static const char *const suffixes[] = {".pld", NULL};
    file_list_t fl = {0};
    collect(&fl, PLD_PROGRAMS_DIR, suffixes, 1);
    qsort(fl.v, (size_t)fl.n, sizeof *fl.v, cmp_str);
    int checked = 0;
    for (int i = 0; i < fl.n; i++)
        free(roundtrip_file(fl.v[i], expects_error(fl.v[i]), &checked));
    CU_ASSERT(fl.n > 0);
    printf(" [%d files] ", checked);
    free_list(&fl);
}

/* The raw and the ruff-formatted printer outputs of the same program are the
 * same tree: pldrun prints them identically. */
static void test_print_raw_and_formatted_agree(void)
{
    if (!dir_exists(PLD_EXAMPLES_DIR)) {
        printf(" [skipped: %s not found] ", PLD_EXAMPLES_DIR);
        return;
    }
    static const char *const suffixes[] = {".printed.pld", NULL};
    file_list_t fl = {0};
    collect(&fl, PLD_EXAMPLES_DIR, suffixes, 0);
    qsort(fl.v, (size_t)fl.n, sizeof *fl.v, cmp_str);
    int checked = 0;
    for (int i = 0; i < fl.n; i++) {
        char fmt[4096];
        size_t n = strlen(fl.v[i]) - strlen(".printed.pld");
        snprintf(fmt, sizeof fmt, "%.*s.printed_fmt.pld", (int)n, fl.v[i]);
        int dummy = 0;
        char *a = roundtrip_file(fl.v[i], 0, &dummy);
        char *b = roundtrip_file(fmt, 0, &dummy);
        if (a && b && strcmp(a, b) != 0) {
            report_diff(fmt, "prints differently from the raw .printed.pld", a, b);
            CU_FAIL("raw and formatted printer output differ after print");
        }
        checked += a && b;
        free(a);
        free(b);
    }
    CU_ASSERT(checked >= 8);
    free_list(&fl);
}

static CU_TestInfo exact_tests[] = {
    {"test_print_module_layout", test_print_module_layout},
    {"test_print_empty_class_and_block", test_print_empty_class_and_block},
    {"test_print_conditional_constants", test_print_conditional_constants},
    {"test_print_top_level_function", test_print_top_level_function},
    {"test_print_statements", test_print_statements},
    {"test_print_elif_chain", test_print_elif_chain},
    {"test_print_comments", test_print_comments},
    {"test_print_module_comments", test_print_module_comments},
    {"test_print_subworker_raw_body", test_print_subworker_raw_body},
    {"test_print_precedence_parentheses", test_print_precedence_parentheses},
    {"test_print_literals", test_print_literals},
    {"test_print_sequences", test_print_sequences},
    {"test_print_oom_sets_flag", test_print_oom_sets_flag},
    CU_TEST_INFO_NULL,
};

static CU_TestInfo corpus_tests[] = {
    {"test_print_fixed_point_shared_examples", test_print_fixed_point_shared_examples},
    {"test_print_fixed_point_programs", test_print_fixed_point_programs},
    {"test_print_raw_and_formatted_agree", test_print_raw_and_formatted_agree},
    CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
    {"print_exact", NULL, NULL, NULL, NULL, exact_tests},
    {"print_corpus", NULL, NULL, NULL, NULL, corpus_tests},
    CU_SUITE_INFO_NULL,
};

int main(void)
{
    return pld_test_main(suites);
}
