/* test_parse.c - CUnit suite for the parser (src/parser/pld_parse.c).
 *
 * Shape tests parse each construct of docs/ir_text_grammar.md §2 and compare
 * an S-expression dump of the tree (pld_sexpr.h). Error tests assert the exact
 * first diagnostic (line:col and message). The OOM test fails the Nth
 * allocation for N = 0, 1, 2, ... until parsing succeeds and requires a clean
 * PLD_E_NOMEM every time before (ASan's leak check covers the cleanup). */
#include "pld_lex.h"
#include "pld_sexpr.h"
#include "pld_test.h"
#ifdef PLD_HAVE_CHECK
#include "pld_check.h"
#endif

static const char *const HDR = "@pl.function\ndef f(x: pl.Scalar[pl.INT32]):\n";

static void dump_diags(const pld_program_t *p)
{
    pld_buf_t b;
    pld_buf_init(&b);
    pld_diag_render(&p->diags, "    ", &b);
    fprintf(stderr, "%s", pld_buf_str(&b));
    pld_buf_fini(&b);
}

/* Parses src and requires it to parse without any diagnostic. */
static pld_program_t *parse_ok_at(const char *src, int line)
{
    pld_program_t *p = pld_parse_text("t.pld", src, strlen(src));
    if (!p) {
        CU_FAIL("out of memory");
        return NULL;
    }
    if (!p->parsed_ok || p->diags.head) {
        fprintf(stderr, "\ntest_parse.c:%d: unexpected diagnostics for:\n%s\n", line, src);
        dump_diags(p);
        CU_FAIL("text did not parse cleanly");
    }
    return p;
}
#define PARSE_OK(src) parse_ok_at((src), __LINE__)

static char *cat2(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    char *s = malloc(na + nb + 1);
    memcpy(s, a, na);
    memcpy(s + na, b, nb + 1);
    return s;
}

/* Body lines (already indented by 4) inside `def f`: compares the dump. */
static void expect_body_at(const char *body, const char *want, int line)
{
    char *src = cat2(HDR, body);
    pld_program_t *p = parse_ok_at(src, line);
    if (p && p->nfuncs == 1) {
        pld_buf_t b;
        pld_buf_init(&b);
        sx_block(&p->funcs[0]->body, 0, &b);
        if (strcmp(pld_buf_str(&b), want) != 0) {
            fprintf(stderr, "\ntest_parse.c:%d: tree differs for:\n%s\n-- expected:\n%s-- found:\n%s", line, body,
                    want, pld_buf_str(&b));
            CU_FAIL("tree differs");
        }
        pld_buf_fini(&b);
    } else if (p) {
        CU_FAIL("expected one function");
    }
    pld_program_destroy(p);
    free(src);
}
#define EXPECT_BODY(body, want) expect_body_at((body), (want), __LINE__)

/* One expression (as the value of `y = EXPR`): compares the dump. */
static void expect_expr_at(const char *expr, const char *want, int line)
{
    char *a = cat2("    y = ", expr);
    char *body = cat2(a, "\n");
    char *w = cat2("assign y = ", want);
    char *w2 = cat2(w, "\n");
    expect_body_at(body, w2, line);
    free(a);
    free(body);
    free(w);
    free(w2);
}
#define EXPECT_EXPR(expr, want) expect_expr_at((expr), (want), __LINE__)

/* Parses src and requires its first diagnostic to be an error at line:col with msg. */
static void expect_error_at(const char *src, unsigned line, unsigned col, const char *msg, int srcline)
{
    pld_program_t *p = pld_parse_text("t.pld", src, strlen(src));
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    const pld_diag_t *d = p->diags.head;
    while (d && d->sev != PLD_SEV_ERROR)
        d = d->next;
    if (!d || d->span.line != line || d->span.col != col || strcmp(d->msg, msg) != 0) {
        fprintf(stderr, "\ntest_parse.c:%d: expected error %u:%u: %s\nfor:\n%s\nfound:\n", srcline, line, col, msg,
                src);
        dump_diags(p);
        CU_FAIL("first error differs");
    }
    CU_ASSERT_FALSE(p->parsed_ok);
    CU_ASSERT_EQUAL(pld_parse_program(p) == PLD_OK, 0); /* status agrees on a re-run too */
    pld_program_destroy(p);
}
#define EXPECT_ERROR(src, line, col, msg) expect_error_at((src), (line), (col), (msg), __LINE__)

/* Same, for a body fragment inside `def f` (line numbers count from the body's first line = 3). */
static void expect_body_error_at(const char *body, unsigned line, unsigned col, const char *msg, int srcline)
{
    char *src = cat2(HDR, body);
    expect_error_at(src, line, col, msg, srcline);
    free(src);
}
#define EXPECT_BODY_ERROR(body, line, col, msg) expect_body_error_at((body), (line), (col), (msg), __LINE__)

static int n_errors(const pld_program_t *p)
{
    return p->diags.n_errors;
}

/* ===================================================================== module */

static void test_parse_imports(void)
{
    pld_program_t *p = PARSE_OK("import pypto.language as pl\nimport pypto.language.distributed as pld\n"
                                "import os\nfrom pypto import language as X, ir\n"
                                "from a.b import (c as d,\n    e,)\n");
    CU_ASSERT_EQUAL_FATAL(p->nimports, 7);
    CU_ASSERT_STRING_EQUAL(p->imports[0].module, "pypto.language");
    CU_ASSERT_STRING_EQUAL(p->imports[0].alias, "pl");
    CU_ASSERT_PTR_NULL(p->imports[0].from_name);
    CU_ASSERT_STRING_EQUAL(p->imports[1].module, "pypto.language.distributed");
    CU_ASSERT_STRING_EQUAL(p->imports[1].alias, "pld");
    CU_ASSERT_STRING_EQUAL(p->imports[2].module, "os");
    CU_ASSERT_PTR_NULL(p->imports[2].alias);
    CU_ASSERT_STRING_EQUAL(p->imports[3].module, "pypto");
    CU_ASSERT_STRING_EQUAL(p->imports[3].from_name, "language");
    CU_ASSERT_STRING_EQUAL(p->imports[3].alias, "X");
    CU_ASSERT_STRING_EQUAL(p->imports[4].from_name, "ir");
    CU_ASSERT_STRING_EQUAL(p->imports[4].alias, "ir");
    CU_ASSERT_STRING_EQUAL(p->imports[5].module, "a.b");
    CU_ASSERT_STRING_EQUAL(p->imports[5].from_name, "c");
    CU_ASSERT_STRING_EQUAL(p->imports[5].alias, "d");
    CU_ASSERT_STRING_EQUAL(p->imports[6].module, "a.b");
    CU_ASSERT_STRING_EQUAL(p->imports[6].from_name, "e");
    CU_ASSERT_STRING_EQUAL(p->imports[6].alias, "e");
    CU_ASSERT_EQUAL(p->imports[0].span.line, 1);
    CU_ASSERT_EQUAL(p->nfuncs, 0);
    CU_ASSERT_PTR_NULL(p->class_name);
    pld_program_destroy(p);
}

static void test_parse_constants_and_dynamic_dims(void)
{
    pld_program_t *p = PARSE_OK("# sizes\nROWS = 4\nCOLS: int = 64\nSCALE = 0.5\nNAME = 'x'\nDIMS = [ROWS, COLS]\n"
                                "PAIR = 1, 2\nBYTES = ROWS * COLS * 4\nNR = pl.dynamic(\"NR\")\n");
    CU_ASSERT_EQUAL_FATAL(p->nconsts, 8);
    const char *names[] = {"ROWS", "COLS", "SCALE", "NAME", "DIMS", "PAIR", "BYTES", "NR"};
    const char *vals[] = {"4", "64", "0.5f", "'x'", "[list ROWS COLS]", "(tuple 1 2)", "(* (* ROWS COLS) 4)",
                          "(call (. pl dynamic) 'NR')"};
    for (int i = 0; i < 8; i++) {
        pld_buf_t b;
        pld_buf_init(&b);
        sx_expr(p->consts[i].value, &b);
        CU_ASSERT_STRING_EQUAL(p->consts[i].name, names[i]);
        if (strcmp(pld_buf_str(&b), vals[i]) != 0)
            fprintf(stderr, "\nconst %s: expected %s, found %s\n", names[i], vals[i], pld_buf_str(&b));
        CU_ASSERT_STRING_EQUAL(pld_buf_str(&b), vals[i]);
        pld_buf_fini(&b);
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(p->consts[0].comments);
    CU_ASSERT_STRING_EQUAL(p->consts[0].comments->text, "sizes");
    CU_ASSERT_EQUAL(p->consts[1].span.line, 3);
    pld_program_destroy(p);
}

static void test_parse_program_class(void)
{
    const char *src = "# pypto.program: Demo\nimport pypto.language as pl\n\n@pl.program\nclass Demo:\n"
                      "    \"\"\"Class docstring.\"\"\"\n\n"
                      "    @pl.function(type=pl.FunctionType.InCore)\n"
                      "    def k(self, a: pl.Tensor[[4, 8], pl.FP32], b: pl.Out[pl.Tensor[[4, 8], pl.FP32]],) "
                      "-> pl.Tensor[[4, 8], pl.FP32]:\n"
                      "        return b\n\n"
                      "    def helper(self):\n        return 1 +* 2\n\n"
                      "    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)\n"
                      "    def host(self, a: pl.Tensor[[4, 8], pl.FP32]):\n        pass\n";
    pld_program_t *p = PARSE_OK(src);
    CU_ASSERT_STRING_EQUAL(p->class_name, "Demo");
    CU_ASSERT_EQUAL(p->class_span.line, 5);
    CU_ASSERT_EQUAL(p->class_span.col, 7);
    CU_ASSERT_EQUAL(p->class_deco->kind, PLD_EX_ATTR);
    /* the undecorated method is skipped whole (its body is never parsed) */
    CU_ASSERT_EQUAL_FATAL(p->nfuncs, 2);
    const pld_func_t *k = p->funcs[0];
    CU_ASSERT_STRING_EQUAL(k->name, "k");
    CU_ASSERT_TRUE(k->has_self);
    CU_ASSERT_EQUAL(k->nparams, 2);
    CU_ASSERT_STRING_EQUAL(k->params[0].name, "a");
    CU_ASSERT_STRING_EQUAL(k->params[1].name, "b");
    CU_ASSERT_EQUAL(k->params[1].span.line, 9);
    CU_ASSERT_PTR_NOT_NULL(k->ret_ann);
    CU_ASSERT_EQUAL(k->deco->kind, PLD_EX_CALL);
    CU_ASSERT_EQUAL(k->deco_span.line, 8);
    CU_ASSERT_FALSE(k->is_raw);
    CU_ASSERT_FALSE(k->is_inline);
    pld_buf_t b;
    pld_buf_init(&b);
    sx_expr(k->params[1].ann, &b);
    CU_ASSERT_STRING_EQUAL(pld_buf_str(&b),
                           "(sub (. pl Out) (sub (. pl Tensor) [list 4 8] (. pl FP32)))");
    pld_buf_reset(&b);
    sx_expr(k->deco, &b);
    CU_ASSERT_STRING_EQUAL(pld_buf_str(&b), "(call (. pl function) type=(. (. pl FunctionType) InCore))");
    pld_buf_fini(&b);
    CU_ASSERT_STRING_EQUAL(p->funcs[1]->name, "host");
    CU_ASSERT_PTR_NULL(p->funcs[1]->ret_ann);
    CU_ASSERT_EQUAL(p->funcs[1]->body.n, 1);
    pld_program_destroy(p);
}

static void test_parse_program_decorator_forms(void)
{
    pld_program_t *p = PARSE_OK("@pl.program(strict_ssa=True)\nclass A():\n    pass\n");
    CU_ASSERT_STRING_EQUAL(p->class_name, "A");
    CU_ASSERT_EQUAL(p->class_deco->kind, PLD_EX_CALL);
    CU_ASSERT_EQUAL(p->nfuncs, 0);
    pld_program_destroy(p);
}

static void test_parse_top_level_function_without_self(void)
{
    pld_program_t *p = PARSE_OK("@pl.function(type=pl.FunctionType.InCore)\n"
                                "def kernel(self: pl.Scalar[pl.INT32], x: pl.Tensor[[M, 4], pl.FP32]):\n"
                                "    return x\n");
    CU_ASSERT_PTR_NULL(p->class_name);
    CU_ASSERT_EQUAL_FATAL(p->nfuncs, 1);
    /* outside a class `self` is an ordinary (annotated) parameter */
    CU_ASSERT_FALSE(p->funcs[0]->has_self);
    CU_ASSERT_EQUAL(p->funcs[0]->nparams, 2);
    pld_program_destroy(p);
}

static void test_parse_inline_and_stacked_decorators(void)
{
    pld_program_t *p = PARSE_OK("@pl.program\nclass A:\n    @pl.inline\n    def h(self, x: pl.Scalar[pl.INT32]):\n"
                                "        return x\n\n    @staticmethod\n    @pl.function\n"
                                "    def g(self):\n        return 1\n");
    CU_ASSERT_EQUAL_FATAL(p->nfuncs, 2);
    CU_ASSERT_TRUE(p->funcs[0]->is_inline);
    CU_ASSERT_FALSE(p->funcs[1]->is_inline);
    /* of two decorators the pl.function one is kept */
    pld_buf_t b;
    pld_buf_init(&b);
    sx_expr(p->funcs[1]->deco, &b);
    CU_ASSERT_STRING_EQUAL(pld_buf_str(&b), "(. pl function)");
    pld_buf_fini(&b);
    pld_program_destroy(p);
}

static void test_parse_subworker_body_captured_raw(void)
{
    const char *src = "@pl.program\nclass A:\n"
                      "    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)\n"
                      "    def sw(x: pl.Tensor[[4], pl.FP32]):\n"
                      "        import torch\n        try:\n            y = x += 1\n"
                      "        except Exception as e:\n            raise ValueError(f\"bad {e}\")\n\n"
                      "    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)\n"
                      "    def abstract(x: pl.Tensor[[4], pl.FP32]):\n        ...\n"
                      "    @pl.function(level=pl.Level.CHIP, role=pl.Role.SubWorker)\n"
                      "    def chip_sw(self, x: pl.Tensor[[4], pl.FP32]):\n        return x\n";
    pld_program_t *p = PARSE_OK(src);
    CU_ASSERT_EQUAL_FATAL(p->nfuncs, 3);
    CU_ASSERT_TRUE(p->funcs[0]->is_raw);
    CU_ASSERT_FALSE(p->funcs[0]->has_self);
    CU_ASSERT_STRING_EQUAL(p->funcs[0]->raw_body, "import torch\ntry:\n    y = x += 1\nexcept Exception as e:\n"
                                                  "    raise ValueError(f\"bad {e}\")\n");
    CU_ASSERT_TRUE(p->funcs[1]->is_raw);
    CU_ASSERT_STRING_EQUAL(p->funcs[1]->raw_body, "...\n");
    /* below HOST a SubWorker is parsed normally */
    CU_ASSERT_FALSE(p->funcs[2]->is_raw);
    CU_ASSERT_TRUE(p->funcs[2]->has_self);
    CU_ASSERT_EQUAL(p->funcs[2]->body.n, 1);
    pld_program_destroy(p);
}

static void test_parse_function_comments_attached(void)
{
    pld_program_t *p = PARSE_OK("@pl.program\nclass A:\n    # about g\n    @pl.function\n    def g(self):\n"
                                "        # lead\n        x = 1  # trail\n        return x\n");
    CU_ASSERT_EQUAL_FATAL(p->nfuncs, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p->funcs[0]->comments);
    CU_ASSERT_STRING_EQUAL(p->funcs[0]->comments->text, "about g");
    const pld_stmt_t *s = p->funcs[0]->body.stmts[0];
    CU_ASSERT_PTR_NOT_NULL_FATAL(s->comments);
    CU_ASSERT_STRING_EQUAL(s->comments->text, "lead");
    CU_ASSERT_PTR_NOT_NULL_FATAL(s->comments->next);
    CU_ASSERT_STRING_EQUAL(s->comments->next->text, "trail");
    CU_ASSERT_PTR_NULL(p->funcs[0]->body.stmts[1]->comments);
    pld_program_destroy(p);
}

static void test_parse_return_annotation_tuple(void)
{
    pld_program_t *p = PARSE_OK("@pl.function\ndef f(a: pl.Scalar[pl.INT32],\n      b: pl.Scalar[pl.INT32],\n"
                                ") -> tuple[pl.Scalar[pl.INT32], pl.Scalar[pl.INT32],]:\n    return a, b\n");
    pld_buf_t b;
    pld_buf_init(&b);
    sx_expr(p->funcs[0]->ret_ann, &b);
    CU_ASSERT_STRING_EQUAL(pld_buf_str(&b),
                           "(sub tuple (sub (. pl Scalar) (. pl INT32)) (sub (. pl Scalar) (. pl INT32)))");
    pld_buf_fini(&b);
    pld_program_destroy(p);
}

static void test_parse_module_docstring_and_ignored_statement(void)
{
    const char *src = "\"\"\"Module doc.\"\"\"\nif __name__ == '__main__':\n    main()\nX = 1\n";
    pld_program_t *p = pld_parse_text("t.pld", src, strlen(src));
    CU_ASSERT_TRUE(p->parsed_ok);
    CU_ASSERT_EQUAL(p->diags.n_errors, 0);
    CU_ASSERT_EQUAL(p->diags.n_warnings, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p->diags.head);
    CU_ASSERT_EQUAL(p->diags.head->sev, PLD_SEV_WARNING);
    CU_ASSERT_EQUAL(p->diags.head->span.line, 2);
    CU_ASSERT_STRING_EQUAL(p->diags.head->msg,
                           "module-level statement ignored (only constants, imports and the program are read)");
    CU_ASSERT_EQUAL(p->nconsts, 1);
    pld_program_destroy(p);
}

/* ================================================================= statements */

static void test_parse_assignments(void)
{
    EXPECT_BODY("    a = 1\n    b: pl.Scalar[pl.INT32] = a\n    c, d = self.g(a)\n    (e, g) = h\n"
                "    i, = j\n    (k, l), m = n\n    t[0:2, :] = u\n",
                "assign a = 1\n"
                "assign b : (sub (. pl Scalar) (. pl INT32)) = a\n"
                "assign (tuple c d) = (call (. self g) a)\n"
                "assign (tuple e g) = h\n"
                "assign (tuple i,) = j\n"
                "assign (tuple (tuple k l) m) = n\n"
                "assign (sub t (slice 0 2 _) (slice _ _ _)) = u\n");
}

static void test_parse_expression_statements(void)
{
    EXPECT_BODY("    pld.system.notify(flags, right, [me, 0], 1, op=pld.NotifyOp.Set)\n    pl.yield_(a, b)\n"
                "    ...\n",
                "expr (call (. (. pld system) notify) flags right [list me 0] 1 op=(. (. pld NotifyOp) Set))\n"
                "expr (call (. pl yield_) a b)\n"
                "expr ...\n");
}

static void test_parse_return_forms(void)
{
    EXPECT_BODY("    if x:\n        return\n    if x:\n        return a\n    if x:\n        return a, b\n"
                "    return (a, b)\n",
                "if x\n  return\nif x\n  return a\nif x\n  return a b\nreturn (tuple a b)\n");
}

static void test_parse_pass_break_continue(void)
{
    EXPECT_BODY("    while x:\n        pass\n        break\n        continue\n",
                "while x\n  pass\n  break\n  continue\n");
}

static void test_parse_docstrings_dropped(void)
{
    EXPECT_BODY("    \"\"\"Doc\n    string.\"\"\"\n    x = 1\n    'mid-body string'\n", "assign x = 1\n");
}

static void test_parse_semicolons(void)
{
    EXPECT_BODY("    a = 1; b = 2;\n    pass; c = 3\n", "assign a = 1\nassign b = 2\npass\nassign c = 3\n");
}

static void test_parse_for_forms(void)
{
    EXPECT_BODY("    for i in pl.range(n):\n        pass\n"
                "    for i, (acc,) in pl.range(0, n, 1, init_values=(z,)):\n        acc2 = pl.yield_(acc)\n"
                "    for i, (a, b) in pl.parallel(4, init_values=[p, q], attrs={\"k\": 1}):\n        pass\n"
                "    for (a, b) in pl.while_(init_values=(p, q)):\n        pl.cond(a < b)\n"
                "    for a, b in pl.while_(init_values=(p, q)):\n        pass\n",
                "for i in (call (. pl range) n)\n  pass\n"
                "for (tuple i (tuple acc,)) in (call (. pl range) 0 n 1 init_values=(tuple z,))\n"
                "  assign acc2 = (call (. pl yield_) acc)\n"
                "for (tuple i (tuple a b)) in (call (. pl parallel) 4 init_values=[list p q] attrs={dict 'k':1})\n"
                "  pass\n"
                "for (tuple a b) in (call (. pl while_) init_values=(tuple p q))\n  expr (call (. pl cond) (< a b))\n"
                "for (tuple a b) in (call (. pl while_) init_values=(tuple p q))\n  pass\n");
}

static void test_parse_while(void)
{
    EXPECT_BODY("    while i < n and ok:\n        i = i + 1\n",
                "while (and (< i n) ok)\n  assign i = (+ i 1)\n");
}

static void test_parse_if_elif_else(void)
{
    EXPECT_BODY("    if a:\n        x = 1\n    elif b:\n        x = 2\n    elif c:\n        x = 3\n    else:\n"
                "        x = 4\n    if d:\n        pass\n    else:\n        pass\n",
                "if/elif a\n  assign x = 1\nelse\n  if/elif b\n    assign x = 2\n  else\n    if c\n"
                "      assign x = 3\n    else\n      assign x = 4\n"
                "if d\n  pass\nelse\n  pass\n");
    /* elif chains are marked els_is_elif on the outer if */
    char *src = cat2(HDR, "    if a:\n        pass\n    elif b:\n        pass\n");
    pld_program_t *p = PARSE_OK(src);
    const pld_stmt_t *s = p->funcs[0]->body.stmts[0];
    CU_ASSERT_TRUE(s->u.if_.els_is_elif);
    CU_ASSERT_EQUAL(s->u.if_.els.n, 1);
    CU_ASSERT_FALSE(s->u.if_.els.stmts[0]->u.if_.els_is_elif);
    pld_program_destroy(p);
    free(src);
}

static void test_parse_one_line_suites(void)
{
    EXPECT_BODY("    if c: x = 1\n    else: x = 2; y = 3\n    for i in pl.range(2): pass\n    while c: break\n",
                "if c\n  assign x = 1\nelse\n  assign x = 2\n  assign y = 3\n"
                "for i in (call (. pl range) 2)\n  pass\nwhile c\n  break\n");
}

static void test_parse_with_forms(void)
{
    EXPECT_BODY("    with pl.at(level=pl.Level.CORE_GROUP):\n        pass\n"
                "    with pl.spmd(4, sync_start=True) as s:\n        pass\n"
                "    with pl.at(pl.Level.CHIP, pl.Role.Orchestrator, name_hint=\"x\") as t:\n        pass\n",
                "with (call (. pl at) level=(. (. pl Level) CORE_GROUP))\n  pass\n"
                "with (call (. pl spmd) 4 sync_start=True) as s\n  pass\n"
                "with (call (. pl at) (. (. pl Level) CHIP) (. (. pl Role) Orchestrator) name_hint='x') as t\n"
                "  pass\n");
}

static void test_parse_statement_spans(void)
{
    char *src = cat2(HDR, "    y = a + b\n    for i in pl.range(3):\n        pass\n");
    pld_program_t *p = PARSE_OK(src);
    const pld_stmt_t *s = p->funcs[0]->body.stmts[0];
    CU_ASSERT_EQUAL(s->span.line, 3);
    CU_ASSERT_EQUAL(s->span.col, 5);
    CU_ASSERT_EQUAL(s->span.len, 9);
    const pld_expr_t *v = s->u.assign.value;
    CU_ASSERT_EQUAL(v->span.col, 9);
    CU_ASSERT_EQUAL(v->span.len, 5);
    CU_ASSERT_EQUAL(v->u.bin.b->span.col, 13);
    const pld_stmt_t *f = p->funcs[0]->body.stmts[1];
    CU_ASSERT_EQUAL(f->span.line, 4);
    CU_ASSERT_EQUAL(f->u.for_.body.stmts[0]->span.line, 5);
    CU_ASSERT_EQUAL(f->u.for_.body.stmts[0]->span.col, 9);
    pld_program_destroy(p);
    free(src);
}

/* ================================================================ expressions */

static void test_parse_atoms(void)
{
    EXPECT_EXPR("[a, 1, 2.5, 'str', True, False, None, ...]", "[list a 1 2.5f 'str' True False None ...]");
    EXPECT_EXPR("()", "(tuple)");
    EXPECT_EXPR("(a)", "a");
    EXPECT_EXPR("(a,)", "(tuple a,)");
    EXPECT_EXPR("(a, b)", "(tuple a b)");
    EXPECT_EXPR("(a, b,)", "(tuple a b,)");
    EXPECT_EXPR("a, b", "(tuple a b)");
    EXPECT_EXPR("[]", "[list]");
    EXPECT_EXPR("[a, b,]", "[list a b]");
    EXPECT_EXPR("{}", "{dict}");
    EXPECT_EXPR("{\"k\": 1, \"v\": [2],}", "{dict 'k':1 'v':[list 2]}");
}

static void test_parse_precedence_arith(void)
{
    EXPECT_EXPR("a + b * c", "(+ a (* b c))");
    EXPECT_EXPR("a * b + c", "(+ (* a b) c)");
    EXPECT_EXPR("a - b - c", "(- (- a b) c)");
    EXPECT_EXPR("a - (b - c)", "(- a (- b c))");
    EXPECT_EXPR("a / b // c % d", "(% (// (/ a b) c) d)");
    EXPECT_EXPR("(a + b) * c", "(* (+ a b) c)");
}

static void test_parse_precedence_power_and_unary(void)
{
    EXPECT_EXPR("-a ** b", "(neg (** a b))");
    EXPECT_EXPR("a ** -b", "(** a (neg b))");
    EXPECT_EXPR("a ** b ** c", "(** a (** b c))");
    EXPECT_EXPR("(a ** b) ** c", "(** (** a b) c)");
    EXPECT_EXPR("-a * b", "(* (neg a) b)");
    EXPECT_EXPR("- - a", "(neg (neg a))");
    EXPECT_EXPR("+a", "(pos a)");
    EXPECT_EXPR("~a & b", "(& (~ a) b)");
    EXPECT_EXPR("-1", "(neg 1)");
    EXPECT_EXPR("x - -1", "(- x (neg 1))");
}

static void test_parse_precedence_bitwise_and_shift(void)
{
    EXPECT_EXPR("a | b ^ c & d << e + f", "(| a (^ b (& c (<< d (+ e f)))))");
    EXPECT_EXPR("a << b >> c", "(>> (<< a b) c)");
    EXPECT_EXPR("a & b | c", "(| (& a b) c)");
}

static void test_parse_precedence_comparison_and_boolean(void)
{
    EXPECT_EXPR("a + 1 < b * 2", "(< (+ a 1) (* b 2))");
    EXPECT_EXPR("a == b", "(== a b)");
    EXPECT_EXPR("a != b", "(!= a b)");
    EXPECT_EXPR("a <= b", "(<= a b)");
    EXPECT_EXPR("a >= b", "(>= a b)");
    EXPECT_EXPR("a > b", "(> a b)");
    EXPECT_EXPR("not a == b", "(not (== a b))");
    EXPECT_EXPR("a and b or c and d", "(or (and a b) (and c d))");
    EXPECT_EXPR("not a and b", "(and (not a) b)");
    EXPECT_EXPR("a or b or c", "(or (or a b) c)");
    EXPECT_EXPR("(a < b) == c", "(== (< a b) c)");
    /* printer-only pseudo operator: between 'or' and 'and' */
    EXPECT_EXPR("a xor b and c or d", "(or (xor a (and b c)) d)");
}

static void test_parse_trailers(void)
{
    EXPECT_EXPR("pl.tile.load(x, [0, 0], [4, 8])", "(call (. (. pl tile) load) x [list 0 0] [list 4 8])");
    EXPECT_EXPR("f()", "(call f)");
    EXPECT_EXPR("f(a, b=1, c=d,)", "(call f a b=1 c=d)");
    EXPECT_EXPR("pl.FP32.get_byte()", "(call (. (. pl FP32) get_byte))");
    EXPECT_EXPR("x[0]", "(sub x 0)");
    EXPECT_EXPR("x[r][0]", "(sub (sub x r) 0)");
    EXPECT_EXPR("x[0, 1,]", "(sub x 0 1)");
    EXPECT_EXPR("x[1:2]", "(sub x (slice 1 2 _))");
    EXPECT_EXPR("x[:, ::2]", "(sub x (slice _ _ _) (slice _ _ 2))");
    EXPECT_EXPR("x[a:]", "(sub x (slice a _ _))");
    EXPECT_EXPR("x[:b]", "(sub x (slice _ b _))");
    EXPECT_EXPR("f(x)(y)[0].z", "(. (sub (call (call f x) y) 0) z)");
    EXPECT_EXPR("(a + b).c", "(. (+ a b) c)");
    EXPECT_EXPR("'ab' 'cd'", "'abcd'");
}

static void test_parse_numbers(void)
{
    EXPECT_EXPR("9223372036854775807", "9223372036854775807");
    EXPECT_EXPR("0x10 + 0o10 + 0b10", "(+ (+ 16 8) 2)");
    EXPECT_EXPR("1e-07", "9.9999999999999995e-08f");
    EXPECT_EXPR("1_000", "1000");
    EXPECT_EXPR("0x_ff + 0o_17 + 0b_1", "(+ (+ 255 15) 1)");
}

static void test_parse_multiline_call(void)
{
    /* ruff splits long calls and signatures over lines; trailing commas everywhere */
    EXPECT_BODY("    y = pld.remote_load(\n        pool,\n        me,\n        [0, 0],\n        [ROWS, COLS],\n"
                "        valid_shape=[HALF, COLS],\n    )\n",
                "assign y = (call (. pld remote_load) pool me [list 0 0] [list ROWS COLS] "
                "valid_shape=[list HALF COLS])\n");
}

/* ===================================================================== errors */

static void test_parse_error_unclosed_paren(void)
{
    /* reported at the bracket, once, as Python does */
    const char *src = "@pl.function\ndef f(x: pl.Scalar[pl.INT32]):\n    y = g(x,\n    z = 2\n";
    EXPECT_ERROR(src, 3, 10, "'(' was never closed");
    pld_program_t *p = pld_parse_text("t.pld", src, strlen(src));
    CU_ASSERT_EQUAL(n_errors(p), 1);
    pld_program_destroy(p);
    /* at end of file */
    EXPECT_ERROR("X = [1,\n  (2,\n", 2, 3, "'(' was never closed");
    EXPECT_BODY_ERROR("    y = {\"a\": 1\n", 3, 9, "'{' was never closed");
}

static void test_parse_error_unclosed_paren_rendered(void)
{
    const char *src = "@pl.function\ndef f(x: pl.Scalar[pl.INT32]):\n    y = g(x,\n    z = 2\n";
    pld_program_t *p = pld_parse_text("prog.pld", src, strlen(src));
    pld_buf_t b;
    pld_buf_init(&b);
    pld_diag_render(&p->diags, NULL, &b);
    const char *want = "prog.pld:3:10: error: '(' was never closed\n"
                       "    3 |     y = g(x,\n"
                       "      |          ^\n";
    if (strcmp(pld_buf_str(&b), want) != 0)
        fprintf(stderr, "\nrendered:\n%s", pld_buf_str(&b));
    CU_ASSERT_STRING_EQUAL(pld_buf_str(&b), want);
    pld_buf_fini(&b);
    pld_program_destroy(p);
}

/* Exactly one error, at line:col with msg (no cascade after it). */
static void expect_only_error_at(const char *src, unsigned line, unsigned col, const char *msg, int srcline)
{
    expect_error_at(src, line, col, msg, srcline);
    pld_program_t *p = pld_parse_text("t.pld", src, strlen(src));
    if (n_errors(p) != 1) {
        fprintf(stderr, "\ntest_parse.c:%d: expected exactly one error for:\n%s\nfound:\n", srcline, src);
        dump_diags(p);
    }
    CU_ASSERT_EQUAL(n_errors(p), 1);
    pld_program_destroy(p);
}
#define EXPECT_ONLY_BODY_ERROR(body, line, col, msg)                                                              \
    do {                                                                                                          \
        char *src_ = cat2(HDR, (body));                                                                           \
        expect_only_error_at(src_, (line), (col), (msg), __LINE__);                                               \
        free(src_);                                                                                               \
    } while (0)

static void test_parse_error_in_multiline_call(void)
{
    /* an error on a later line of a call whose ')' does come: reported at the
     * offending token, not as "'(' was never closed" + "unmatched ')'" */
    EXPECT_ONLY_BODY_ERROR("    y = g(x,\n          a b)\n    z = 2\n", 4, 13,
                           "expected ',' or ')' in call arguments, found name 'b'");
    EXPECT_ONLY_BODY_ERROR("    y = g(x,\n          lambda: 1)\n    z = 2\n", 4, 11,
                           "lambda expressions are not supported");
    EXPECT_ONLY_BODY_ERROR("    y = g(\n        x,\n        1 +,\n    )\n    z = 2\n", 5, 12,
                           "expected an expression, found ','");
    EXPECT_ONLY_BODY_ERROR("    y = g(x,\n          $)\n    z = 2\n", 4, 11, "invalid character '$' in program text");
    EXPECT_ONLY_BODY_ERROR("    y = g(x, [1,\n          2 3])\n    z = 2\n", 4, 13,
                           "expected ',' or ']', found integer 3");
    /* an unterminated string inside a split call whose ')' comes later */
    EXPECT_ONLY_BODY_ERROR("    y = g(x,\n          \"abc,\n          y)\n    z = 2\n", 4, 11,
                           "unterminated string literal");
    /* recovery goes on after the call: the next broken statement is reported too */
    const char *src = "@pl.function\ndef f(x: pl.Scalar[pl.INT32]):\n    y = g(x,\n          a b)\n    z = 2 +\n";
    pld_program_t *p = pld_parse_text("t.pld", src, strlen(src));
    CU_ASSERT_EQUAL(n_errors(p), 2);
    CU_ASSERT_EQUAL(p->diags.head->next->span.line, 5);
    pld_program_destroy(p);
}

static void test_parse_error_unclosed_paren_with_later_closers(void)
{
    /* the inner '(' is closed on the next line, the outer one never: one error
     * at the outer one; the ')' that closed the inner one is not "unmatched" */
    EXPECT_ONLY_BODY_ERROR("    y = g(x, h(1,\n          a b)\n    z = 2\n", 3, 10, "'(' was never closed");
    EXPECT_ONLY_BODY_ERROR("    y = g(\n        h(1,\n        a b\n    )\n    z = 2\n", 3, 10, "'(' was never closed");
    /* a string holding ')' does not close it */
    EXPECT_ONLY_BODY_ERROR("    y = g(x,\n    z = ')'\n", 3, 10, "'(' was never closed");
}

static void test_parse_error_unexpected_indent(void)
{
    EXPECT_ERROR("X = 1\n    Y = 2\n", 2, 5, "unexpected indent");
    EXPECT_BODY_ERROR("    a = 1\n        b = 2\n    c = 3\n", 4, 9, "unexpected indent");
    EXPECT_ERROR("@pl.function\ndef f(x: pl.Scalar[pl.INT32]):\nreturn x\n", 3, 1,
                 "expected an indented block, found keyword 'return'");
}

static void test_parse_error_dedent_mismatch(void)
{
    EXPECT_BODY_ERROR("    if x:\n        a = 1\n      b = 2\n", 5, 7,
                      "unindent does not match any outer indentation level");
}

static void test_parse_error_augmented_assignment(void)
{
    EXPECT_BODY_ERROR("    x += 1\n", 3, 7, "augmented assignment is not supported; write 'x = x + ...'");
    EXPECT_BODY_ERROR("    x **= 2\n", 3, 7, "augmented assignment is not supported; write 'x = x + ...'");
}

static void test_parse_error_chained_comparison(void)
{
    EXPECT_BODY_ERROR("    y = a < b < c\n", 3, 15,
                      "chained comparisons are not supported; combine two comparisons with 'and'");
    EXPECT_BODY_ERROR("    if 0 <= i == j:\n        pass\n", 3, 15,
                      "chained comparisons are not supported; combine two comparisons with 'and'");
}

static void test_parse_error_rejected_expressions(void)
{
    EXPECT_BODY_ERROR("    f = lambda x: x\n", 3, 9, "lambda expressions are not supported");
    EXPECT_BODY_ERROR("    y = g(lambda: 1)\n", 3, 11, "lambda expressions are not supported");
    EXPECT_BODY_ERROR("    y = yield x\n", 3, 9, "'yield' is not supported; use pl.yield_(...)");
    EXPECT_BODY_ERROR("    y = await x\n", 3, 9, "'await' is not supported");
    EXPECT_BODY_ERROR("    y = a if c else b\n", 3, 11,
                      "conditional expressions (a if c else b) are not supported; use an if statement");
    EXPECT_BODY_ERROR("    y = (n := 3)\n", 3, 12, "assignment expressions (:=) are not supported");
    EXPECT_BODY_ERROR("    y = [i for i in r]\n", 3, 12, "comprehensions are not supported");
    EXPECT_BODY_ERROR("    y = f(i for i in r)\n", 3, 13, "comprehensions are not supported");
    EXPECT_BODY_ERROR("    y = f(*args)\n", 3, 11, "argument unpacking (*args / **kwargs) is not supported");
    EXPECT_BODY_ERROR("    y = f(**kw)\n", 3, 11, "argument unpacking (*args / **kwargs) is not supported");
    EXPECT_BODY_ERROR("    y = f(a=1, a=2)\n", 3, 16, "keyword argument 'a' repeated");
    EXPECT_BODY_ERROR("    y = f(a=1, 2)\n", 3, 16, "positional argument follows keyword argument");
    EXPECT_BODY_ERROR("    y = x[]\n", 3, 11, "empty subscript");
    EXPECT_BODY_ERROR("    y = a @ b\n", 3, 11, "the '@' operator is not supported; use pl.matmul");
    EXPECT_BODY_ERROR("    y = a in b\n", 3, 11, "'in' / 'is' comparisons are not supported");
    EXPECT_BODY_ERROR("    y = a is None\n", 3, 11, "'in' / 'is' comparisons are not supported");
    EXPECT_BODY_ERROR("    y = a not in b\n", 3, 11, "'in' / 'is' comparisons are not supported");
    /* ".1" lexes as a float, as in Python */
    EXPECT_BODY_ERROR("    y = x.1\n", 3, 10, "expected end of statement, found float literal");
    EXPECT_BODY_ERROR("    y = x.\n", 3, 11, "expected an attribute name after '.', found newline");
    EXPECT_BODY_ERROR("    y = (1, 2\n    z = 3\n", 3, 9, "'(' was never closed");
    EXPECT_BODY_ERROR("    y = \n", 3, 9, "expected an expression, found newline");
    EXPECT_BODY_ERROR("    y = f(a b)\n", 3, 13, "expected ',' or ')' in call arguments, found name 'b'");
}

static void test_parse_error_rejected_statements(void)
{
    EXPECT_BODY_ERROR("    del x\n", 3, 5, "'del' statements are not supported in pldrun programs");
    EXPECT_BODY_ERROR("    global x\n", 3, 5, "'global' statements are not supported in pldrun programs");
    EXPECT_BODY_ERROR("    nonlocal x\n", 3, 5, "'nonlocal' statements are not supported in pldrun programs");
    EXPECT_BODY_ERROR("    raise E\n", 3, 5, "'raise' statements are not supported in pldrun programs");
    EXPECT_BODY_ERROR("    assert x\n", 3, 5, "'assert' statements are not supported in pldrun programs");
    EXPECT_BODY_ERROR("    try:\n        pass\n    except E:\n        pass\n", 3, 5,
                      "'try' statements are not supported in pldrun programs");
    EXPECT_BODY_ERROR("    import os\n", 3, 5,
                      "'import' inside a function statements are not supported in pldrun programs");
    EXPECT_BODY_ERROR("    def g():\n        pass\n", 3, 5,
                      "nested 'def' statements are not supported in pldrun programs");
    EXPECT_BODY_ERROR("    class C:\n        pass\n", 3, 5,
                      "nested 'class' statements are not supported in pldrun programs");
    EXPECT_BODY_ERROR("    while x:\n        pass\n    else:\n        pass\n", 5, 5,
                      "'while ... else' is not supported");
    EXPECT_BODY_ERROR("    for i in r:\n        pass\n    else:\n        pass\n", 5, 5,
                      "'for ... else' is not supported");
    EXPECT_BODY_ERROR("    for x[0] in r:\n        pass\n", 3, 9,
                      "invalid loop target; expected a name or a tuple of names");
    EXPECT_BODY_ERROR("    with a, b:\n        pass\n", 3, 11,
                      "only one context manager per 'with' statement is supported");
    EXPECT_BODY_ERROR("    else:\n        pass\n", 3, 5, "'else' without a matching 'if'");
    EXPECT_BODY_ERROR("    elif x:\n        pass\n", 3, 5, "'elif' without a matching 'if'");
    EXPECT_BODY_ERROR("    a.b: int = 1\n", 3, 5, "only a single name can be annotated");
    EXPECT_BODY_ERROR("    a: int\n", 3, 11, "annotated assignment needs a value ('name: type = value')");
    EXPECT_BODY_ERROR("    f(x) = 1\n", 3, 5, "cannot assign to this expression");
    EXPECT_BODY_ERROR("    a + 1 = 2\n", 3, 5, "cannot assign to this expression");
    EXPECT_BODY_ERROR("    a = b = 1\n", 3, 11, "chained assignment (a = b = c) is not supported");
    EXPECT_BODY_ERROR("    if x\n        pass\n", 3, 9, "expected ':', found newline");
    EXPECT_BODY_ERROR("    with pl.at() as 3:\n        pass\n", 3, 21, "expected a name after 'as', found integer 3");
}

static void test_parse_error_signatures(void)
{
    EXPECT_ERROR("@pl.function\ndef f(x):\n    pass\n", 2, 7, "parameter 'x' needs a type annotation");
    EXPECT_ERROR("@pl.function\ndef f(x: int = 1):\n    pass\n", 2, 14, "default parameter values are not supported");
    EXPECT_ERROR("@pl.function\ndef f(x: int, x: int):\n    pass\n", 2, 15, "duplicate parameter 'x'");
    EXPECT_ERROR("@pl.function\ndef f(*args):\n    pass\n", 2, 7,
                 "*args, **kwargs and positional-only markers are not supported in signatures");
    EXPECT_ERROR("@pl.function\ndef f(a: int, /):\n    pass\n", 2, 15,
                 "*args, **kwargs and positional-only markers are not supported in signatures");
    EXPECT_ERROR("@pl.function\ndef (x: int):\n    pass\n", 2, 5, "expected a function name, found '('");
    EXPECT_ERROR("@pl.function\nx = 1\n", 2, 1, "expected 'class' or 'def' after the decorator, found name 'x'");
}

static void test_parse_error_module_level(void)
{
    EXPECT_ERROR("class A:\n    pass\n", 1, 1, "the program class must be decorated with @pl.program");
    EXPECT_ERROR("def f():\n    pass\n", 1, 1, "a top-level function must be decorated with @pl.function");
    EXPECT_ERROR("print(1)\n", 1, 1,
                 "unsupported module-level statement (expected an import, a constant, or the @pl.program class)");
    EXPECT_ERROR("@pl.program\nclass A:\n    pass\n@pl.program\nclass B:\n    pass\n", 5, 7,
                 "a program text may define only one @pl.program class");
    EXPECT_ERROR("@pl.program\nclass A:\n    x = 1\n", 3, 5,
                 "expected a decorated method (@pl.function) in the program class");
    EXPECT_ERROR("@pl.program\nclass A(Base):\n    pass\n", 2, 9,
                 "expected ')' (base classes are not supported), found name 'Base'");
    EXPECT_ERROR("from m import *\n", 1, 15, "expected an explicit name ('import *' is not supported), found '*'");
    EXPECT_ERROR("import\n", 1, 7, "expected a module name, found newline");
}

static void test_parse_error_recovery_reports_several(void)
{
    /* panic-mode recovery: one error per broken statement, parsing goes on */
    const char *src = "@pl.program\nclass A:\n    @pl.function\n    def f(self, x: pl.Scalar[pl.INT32]):\n"
                      "        x += 1\n        y = a < b < c\n        z = 1\n        del z\n"
                      "    @pl.function\n    def g(self):\n        w = lambda: 0\n";
    pld_program_t *p = pld_parse_text("t.pld", src, strlen(src));
    CU_ASSERT_EQUAL(n_errors(p), 4);
    const pld_diag_t *d = p->diags.head;
    unsigned lines[] = {5, 6, 8, 11};
    for (int i = 0; i < 4 && d; i++, d = d->next)
        CU_ASSERT_EQUAL(d->span.line, lines[i]);
    CU_ASSERT_FALSE(p->parsed_ok);
    /* both functions still exist after recovery */
    CU_ASSERT_EQUAL(p->nfuncs, 2);
    pld_program_destroy(p);
}

static void test_parse_error_limit_twenty(void)
{
    pld_buf_t b;
    pld_buf_init(&b);
    pld_buf_puts(&b, HDR);
    for (int i = 0; i < 30; i++)
        pld_buf_printf(&b, "    x%d += 1\n", i);
    pld_program_t *p = pld_parse_text("t.pld", pld_buf_str(&b), b.len);
    CU_ASSERT_EQUAL(p->diags.n_errors, 20);
    CU_ASSERT_TRUE(p->diags.truncated);
    pld_buf_t r;
    pld_buf_init(&r);
    pld_diag_render(&p->diags, NULL, &r);
    CU_ASSERT_PTR_NOT_NULL(strstr(pld_buf_str(&r), "t.pld: note: too many errors (limit 20); stopping\n"));
    pld_buf_fini(&r);
    pld_buf_fini(&b);
    pld_program_destroy(p);
}

/* The NUL-byte error at `off` in the (len-byte) text: line and column. */
static void expect_nul_at(const char *src, size_t len, unsigned line, unsigned col, int srcline)
{
    pld_program_t *p = pld_program_create("t.pld", src, len);
    CU_ASSERT_EQUAL(pld_parse_program(p), PLD_E_SYNTAX);
    const pld_diag_t *d = p->diags.head;
    int ok = d && n_errors(p) == 1 && strcmp(d->msg, "the program text contains a NUL byte") == 0 &&
             d->span.line == line && d->span.col == col && d->span.len == 1 &&
             d->span.off == (uint32_t)((const char *)memchr(src, '\0', len) - src);
    if (!ok)
        fprintf(stderr, "\ntest_parse.c:%d: NUL byte: expected %u:%u, found %u:%u '%s'\n", srcline, line, col,
                d ? (unsigned)d->span.line : 0u, d ? (unsigned)d->span.col : 0u, d ? d->msg : "-");
    CU_ASSERT(ok);
    pld_program_destroy(p);
}
#define EXPECT_NUL_AT(lit, line, col) expect_nul_at((lit), sizeof(lit) - 1, (line), (col), __LINE__)

static void test_parse_error_nul_byte_column(void)
{
    /* columns count characters (a UTF-8 sequence is one) with tabs to 8, as
     * for every other diagnostic, not bytes */
    EXPECT_NUL_AT("X = 1\nY = \"\xc3\xa9\xc3\xa9\0\"\n", 2, 8);
    EXPECT_NUL_AT("X = 1\n\t\0\n", 2, 9);
    EXPECT_NUL_AT("# \xe2\x86\x92 \0\n", 1, 5);
    /* \r\n and a lone \r end lines as for tokens; a BOM takes no column */
    EXPECT_NUL_AT("X = 1\r\nY = 2\rZ\0\n", 3, 2);
    EXPECT_NUL_AT("\xef\xbb\xbfX\0\n", 1, 2);
}

static void test_parse_error_status_codes(void)
{
    pld_program_t *p = pld_program_create("t.pld", "x = (\n", 6);
    CU_ASSERT_EQUAL(pld_parse_program(p), PLD_E_SYNTAX);
    CU_ASSERT_FALSE(p->parsed_ok);
    CU_ASSERT_TRUE(pld_diag_has_errors(&p->diags));
    pld_program_destroy(p);
    p = pld_program_create("t.pld", "X = 1\n", 6);
    CU_ASSERT_EQUAL(pld_parse_program(p), PLD_OK);
    CU_ASSERT_TRUE(p->parsed_ok);
    pld_program_destroy(p);
    /* empty text is a valid (empty) program for the parser */
    p = pld_program_create("t.pld", "", 0);
    CU_ASSERT_EQUAL(pld_parse_program(p), PLD_OK);
    pld_program_destroy(p);
}

/* ======================================================================= OOM */

/* A real program exercising most constructs (imports, constants, class,
 * SubWorker capture, loops with init_values, if/else, with, comments, strings). */
static const char *const OOM_PROGRAM =
    "# pypto.program: NeighborMail\n"
    "import pypto.language as pl\n"
    "import pypto.language.distributed as pld\n\n"
    "ROWS = 4\nCOLS = 64\nNR = pl.dynamic(\"NR\")\n\n\n"
    "@pl.program\n"
    "class NeighborMail:\n"
    "    \"\"\"Doc.\"\"\"\n\n"
    "    @pl.function(type=pl.FunctionType.InCore)\n"
    "    def mail(\n        self,\n        inp: pl.Tensor[[ROWS, COLS], pl.FP32],\n"
    "        box: pl.InOut[pld.DistributedTensor[[ROWS, COLS], pl.FP32]],\n"
    "        flags: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],\n"
    "    ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:\n"
    "        ctx = pld.get_comm_ctx(box)\n        me = pld.rank(ctx)\n        n = pld.nranks(ctx)\n"
    "        right = (me + 1) % n\n"
    "        mine: pl.Tile[[ROWS, COLS], pl.FP32] = pl.load(inp, [0, 0], [ROWS, COLS])\n"
    "        pld.tile.remote_store(mine, box, right, [0, 0])  # push right\n"
    "        pld.system.notify(flags, right, [me, 0], 1, op=pld.NotifyOp.Set)\n"
    "        for i, (acc, cnt) in pl.range(0, n, 1, init_values=(mine, 0)):\n"
    "            # accumulate\n"
    "            if i == me:\n                acc2 = pl.add(acc, mine)\n                c2 = cnt + 1\n"
    "            else:\n                acc2 = acc\n                c2 = cnt\n"
    "            acc3, c3 = pl.yield_(acc2, c2)\n"
    "        while n > 0 and not (me < 0):\n            n = n - 1\n"
    "        with pl.at(level=pl.Level.CORE_GROUP, name_hint='x'):\n            y = x[0:2, :]\n"
    "        s = 'a\\tb' \"c\"\n"
    "        return acc3\n\n"
    "    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)\n"
    "    def sub(x: pl.Tensor[[4], pl.FP32]):\n        import torch\n        return torch.zeros(4)\n\n"
    "    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)\n"
    "    def host_orch(self, inputs: pl.Tensor[[NR, ROWS, COLS], pl.FP32]) -> pl.Tensor[[NR, ROWS, COLS], pl.FP32]:\n"
    "        box_buf = pld.alloc_window_buffer(ROWS * COLS * pl.FP32.get_byte())\n"
    "        for r in pl.range(pld.world_size()):\n"
    "            box = pld.window(box_buf, [ROWS, COLS], dtype=pl.FP32)\n"
    "            self.mail(inputs[r], box, device=r, attrs={\"k\": -1.5e-3})\n"
    "        return inputs\n";

static void print_program(const pld_program_t *p, pld_buf_t *b)
{
    pld_ast_print(p, b);
}

typedef pld_status_t (*stage_fn)(pld_program_t *p);

static pld_status_t stage_parse(pld_program_t *p)
{
    return pld_parse_program(p);
}

#ifdef PLD_HAVE_CHECK
static pld_status_t stage_parse_check(pld_program_t *p)
{
    pld_status_t st = pld_parse_program(p);
    if (st != PLD_OK)
        return st;
    pld_check_opts_t o;
    memset(&o, 0, sizeof o);
    o.ranks = 4;
    return pld_check_program(p, &o);
}
#endif

/* Fails allocation N (N = 0, 1, ...) until the stage succeeds without a
 * refused allocation; every earlier run must end in a clean PLD_E_NOMEM. */
static void oom_loop(const char *name, const char *src, stage_fn stage, pld_status_t want_ok)
{
    pld_program_t *ref = pld_program_create(name, src, strlen(src));
    CU_ASSERT_EQUAL_FATAL(stage(ref), want_ok);
    pld_buf_t want;
    pld_buf_init(&want);
    print_program(ref, &want);
    pld_program_destroy(ref);

    long n;
    int done = 0;
    for (n = 0; n < 100000 && !done; n++) {
        pld_mem_fail_after(n);
        pld_program_t *p = pld_program_create(name, src, strlen(src));
        if (!p) {
            CU_ASSERT(pld_mem_failures() > 0);
            pld_mem_fail_after(-1);
            continue;
        }
        pld_status_t st = stage(p);
        long failures = pld_mem_failures();
        /* rendering must survive a list that recorded an OOM */
        pld_buf_t r;
        pld_buf_init(&r);
        pld_diag_render(&p->diags, NULL, &r);
        pld_buf_fini(&r);
        pld_mem_fail_after(-1);
        if (failures == 0) {
            CU_ASSERT_EQUAL(st, want_ok);
            pld_buf_t got;
            pld_buf_init(&got);
            print_program(p, &got);
            CU_ASSERT_STRING_EQUAL(pld_buf_str(&got), pld_buf_str(&want));
            pld_buf_fini(&got);
            done = 1;
        } else if (st != PLD_E_NOMEM) {
            fprintf(stderr, "\n%s: allocation %ld refused but the status is '%s', not 'out of memory'\n", name, n,
                    pld_status_name(st));
            CU_FAIL("OOM not reported as PLD_E_NOMEM");
        }
        pld_program_destroy(p);
    }
    CU_ASSERT_TRUE(done);
    printf(" [%s: %ld allocation points] ", name, n);
    pld_buf_fini(&want);
}

static void test_parse_oom_every_allocation(void)
{
    oom_loop("oom.pld", OOM_PROGRAM, stage_parse, PLD_OK);
}

static void test_parse_oom_with_syntax_errors(void)
{
    /* error paths (diagnostics, recovery) must be OOM-clean too */
    oom_loop("oom_err.pld",
             "@pl.function\ndef f(x: pl.Scalar[pl.INT32]):\n    x += 1\n    y = (a,\n    z = a < b < c\n"
             "    w = 'unterminated\n    v = $\n    return f(a=1, 2)\n",
             stage_parse, PLD_E_SYNTAX);
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, f);
    fclose(f);
    s[got] = '\0';
    *len = got;
    return s;
}

static void test_parse_oom_real_example(void)
{
    const char *path = PLD_EXAMPLES_DIR "/04_neighbor_mail.printed.pld";
    size_t len;
    char *src = read_file(path, &len);
    if (!src) {
        printf(" [skipped: %s not found] ", path);
        return;
    }
    oom_loop(path, src, stage_parse, PLD_OK);
    free(src);
}

#ifdef PLD_HAVE_CHECK
static void test_parse_oom_with_checker(void)
{
    const char *path = PLD_EXAMPLES_DIR "/04_neighbor_mail.printed.pld";
    size_t len;
    char *src = read_file(path, &len);
    if (!src) {
        printf(" [skipped: %s not found] ", path);
        return;
    }
    oom_loop(path, src, stage_parse_check, PLD_OK);
    free(src);
}
#endif

static CU_TestInfo module_tests[] = {
    {"test_parse_imports", test_parse_imports},
    {"test_parse_constants_and_dynamic_dims", test_parse_constants_and_dynamic_dims},
    {"test_parse_program_class", test_parse_program_class},
    {"test_parse_program_decorator_forms", test_parse_program_decorator_forms},
    {"test_parse_top_level_function_without_self", test_parse_top_level_function_without_self},
    {"test_parse_inline_and_stacked_decorators", test_parse_inline_and_stacked_decorators},
    {"test_parse_subworker_body_captured_raw", test_parse_subworker_body_captured_raw},
    {"test_parse_function_comments_attached", test_parse_function_comments_attached},
    {"test_parse_return_annotation_tuple", test_parse_return_annotation_tuple},
    {"test_parse_module_docstring_and_ignored_statement", test_parse_module_docstring_and_ignored_statement},
    CU_TEST_INFO_NULL,
};

static CU_TestInfo stmt_tests[] = {
    {"test_parse_assignments", test_parse_assignments},
    {"test_parse_expression_statements", test_parse_expression_statements},
    {"test_parse_return_forms", test_parse_return_forms},
    {"test_parse_pass_break_continue", test_parse_pass_break_continue},
    {"test_parse_docstrings_dropped", test_parse_docstrings_dropped},
    {"test_parse_semicolons", test_parse_semicolons},
    {"test_parse_for_forms", test_parse_for_forms},
    {"test_parse_while", test_parse_while},
    {"test_parse_if_elif_else", test_parse_if_elif_else},
    {"test_parse_one_line_suites", test_parse_one_line_suites},
    {"test_parse_with_forms", test_parse_with_forms},
    {"test_parse_statement_spans", test_parse_statement_spans},
    CU_TEST_INFO_NULL,
};

static CU_TestInfo expr_tests[] = {
    {"test_parse_atoms", test_parse_atoms},
    {"test_parse_precedence_arith", test_parse_precedence_arith},
    {"test_parse_precedence_power_and_unary", test_parse_precedence_power_and_unary},
    {"test_parse_precedence_bitwise_and_shift", test_parse_precedence_bitwise_and_shift},
    {"test_parse_precedence_comparison_and_boolean", test_parse_precedence_comparison_and_boolean},
    {"test_parse_trailers", test_parse_trailers},
    {"test_parse_numbers", test_parse_numbers},
    {"test_parse_multiline_call", test_parse_multiline_call},
    CU_TEST_INFO_NULL,
};

static CU_TestInfo error_tests[] = {
    {"test_parse_error_unclosed_paren", test_parse_error_unclosed_paren},
    {"test_parse_error_unclosed_paren_rendered", test_parse_error_unclosed_paren_rendered},
    {"test_parse_error_in_multiline_call", test_parse_error_in_multiline_call},
    {"test_parse_error_nul_byte_column", test_parse_error_nul_byte_column},
    {"test_parse_error_unclosed_paren_with_later_closers", test_parse_error_unclosed_paren_with_later_closers},
    {"test_parse_error_unexpected_indent", test_parse_error_unexpected_indent},
    {"test_parse_error_dedent_mismatch", test_parse_error_dedent_mismatch},
    {"test_parse_error_augmented_assignment", test_parse_error_augmented_assignment},
    {"test_parse_error_chained_comparison", test_parse_error_chained_comparison},
    {"test_parse_error_rejected_expressions", test_parse_error_rejected_expressions},
    {"test_parse_error_rejected_statements", test_parse_error_rejected_statements},
    {"test_parse_error_signatures", test_parse_error_signatures},
    {"test_parse_error_module_level", test_parse_error_module_level},
    {"test_parse_error_recovery_reports_several", test_parse_error_recovery_reports_several},
    {"test_parse_error_limit_twenty", test_parse_error_limit_twenty},
    {"test_parse_error_status_codes", test_parse_error_status_codes},
    CU_TEST_INFO_NULL,
};

/* Regression: interning a name under OOM used to yield a PLD_T_NAME token
 * with a NULL text that the parser dereferenced (fixed in pld_lex.c). */
static CU_TestInfo oom_tests[] = {
    {"test_parse_oom_every_allocation", test_parse_oom_every_allocation},
    {"test_parse_oom_with_syntax_errors", test_parse_oom_with_syntax_errors},
    {"test_parse_oom_real_example", test_parse_oom_real_example},
#ifdef PLD_HAVE_CHECK
    {"test_parse_oom_with_checker", test_parse_oom_with_checker},
#endif
    CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
    {"parse_module", NULL, NULL, NULL, NULL, module_tests},
    {"parse_statements", NULL, NULL, NULL, NULL, stmt_tests},
    {"parse_expressions", NULL, NULL, NULL, NULL, expr_tests},
    {"parse_errors", NULL, NULL, NULL, NULL, error_tests},
    {"parse_oom", NULL, NULL, NULL, NULL, oom_tests},
    CU_SUITE_INFO_NULL,
};

int main(void)
{
    return pld_test_main(suites);
}
