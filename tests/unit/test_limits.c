/* test_limits.c - CUnit suite for the front end's size and nesting limits
 * (PLD_PARSE_MAX_DEPTH, PLD_LEX_MAX_INDENT, PLD_LEX_MAX_BRACKETS, the error
 * limit). Generated programs nest far past the limits; each must end in a
 * clear diagnostic, never a crash (the ASan build turns a stack overflow into
 * a failure). The checker runs too when it is linked. */
#include "pld_lex.h"
#include "pld_test.h"
#ifdef PLD_HAVE_CHECK
#include "pld_check.h"
#endif

static const char *const HDR = "@pl.function\ndef f(x: pl.Scalar[pl.INT32]):\n";

/* Parses (and checks) the text, renders the diagnostics and prints the tree:
 * none of it may crash. Returns the program (owned). */
static pld_program_t *run_front_end(const char *src, size_t len)
{
    pld_program_t *p = pld_parse_text("deep.pld", src, len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
#ifdef PLD_HAVE_CHECK
    if (p->parsed_ok) {
        pld_check_opts_t o;
        memset(&o, 0, sizeof o);
        o.ranks = 4;
        pld_check_program(p, &o);
    }
#endif
    pld_buf_t b;
    pld_buf_init(&b);
    pld_diag_render(&p->diags, NULL, &b);
    pld_buf_reset(&b);
    pld_ast_print(p, &b);
    pld_buf_fini(&b);
    return p;
}

/* The first error must carry `msg` (exact) and lie on `line` (0: any line). */
static void expect_first_error_at(const pld_program_t *p, unsigned line, const char *msg, int srcline)
{
    const pld_diag_t *d = p->diags.head;
    while (d && d->sev != PLD_SEV_ERROR)
        d = d->next;
    if (!d || strcmp(d->msg, msg) != 0 || (line && d->span.line != line)) {
        fprintf(stderr, "\ntest_limits.c:%d: expected first error '%s' on line %u, found '%s' on line %u\n", srcline,
                msg, line, d ? d->msg : "(none)", d ? (unsigned)d->span.line : 0u);
        CU_FAIL("first error differs");
    }
    CU_ASSERT_FALSE(p->parsed_ok);
    /* one clear error, not a cascade: a limit error ends the reading (the
     * parser's depth limit stops the lexer; the lexer's bracket and block
     * limits end its token stream), so nothing follows it */
    if (p->diags.n_errors != 1)
        fprintf(stderr, "\ntest_limits.c:%d: expected one error, found %d\n", srcline, p->diags.n_errors);
    CU_ASSERT_EQUAL(p->diags.n_errors, 1);
}
#define EXPECT_FIRST_ERROR(p, line, msg) expect_first_error_at((p), (line), (msg), __LINE__)

static const char *const TOO_DEEP = "program nested too deeply (limit 100 levels)";

/* `    y = ` + open*n + "x" + close*n */
static pld_program_t *nested_expr(const char *open, const char *close, int n)
{
    pld_buf_t b;
    pld_buf_init(&b);
    pld_buf_puts(&b, HDR);
    pld_buf_puts(&b, "    y = ");
    for (int i = 0; i < n; i++)
        pld_buf_puts(&b, open);
    pld_buf_puts(&b, "x");
    for (int i = 0; i < n; i++)
        pld_buf_puts(&b, close);
    pld_buf_puts(&b, "\n    return y\n");
    pld_program_t *p = run_front_end(pld_buf_str(&b), b.len);
    pld_buf_fini(&b);
    return p;
}

static void test_limits_150_nested_parentheses(void)
{
    pld_program_t *p = nested_expr("(", ")", 150);
    EXPECT_FIRST_ERROR(p, 3, TOO_DEEP);
    pld_program_destroy(p);
}

static void test_limits_nested_parentheses_below_limit_parse(void)
{
    /* real programs nest a handful of levels; 60 must still parse */
    pld_program_t *p = nested_expr("(", ")", 60);
    CU_ASSERT_TRUE(p->parsed_ok);
    CU_ASSERT_EQUAL(p->diags.n_errors, 0);
    pld_program_destroy(p);
}

static void test_limits_250_nested_brackets(void)
{
    /* past the lexer's bracket limit (200) as well as the parser's depth */
    pld_program_t *p = nested_expr("[", "]", 250);
    EXPECT_FIRST_ERROR(p, 3, TOO_DEEP);
    pld_program_destroy(p);
    p = nested_expr("{1: ", "}", 250);
    EXPECT_FIRST_ERROR(p, 3, TOO_DEEP);
    pld_program_destroy(p);
}

static void test_limits_150_nested_calls_and_subscripts(void)
{
    pld_program_t *p = nested_expr("pl.f(", ")", 150);
    EXPECT_FIRST_ERROR(p, 3, TOO_DEEP);
    pld_program_destroy(p);
    p = nested_expr("x[", "]", 150);
    EXPECT_FIRST_ERROR(p, 3, TOO_DEEP);
    pld_program_destroy(p);
}

static void test_limits_150_nested_unary_operators(void)
{
    pld_program_t *p = nested_expr("-", "", 150);
    EXPECT_FIRST_ERROR(p, 3, TOO_DEEP);
    pld_program_destroy(p);
    p = nested_expr("not ", "", 150);
    EXPECT_FIRST_ERROR(p, 3, TOO_DEEP);
    pld_program_destroy(p);
    p = nested_expr("~", "", 150);
    EXPECT_FIRST_ERROR(p, 3, TOO_DEEP);
    pld_program_destroy(p);
}

/* 150 nested compound statements with `kw` headers ("if x:", "while x:", ...). */
static pld_program_t *nested_blocks(const char *header, int n, int tabs)
{
    pld_buf_t b;
    pld_buf_init(&b);
    pld_buf_puts(&b, HDR);
    for (int i = 0; i < n; i++) {
        for (int k = 0; k <= i; k++)
            pld_buf_puts(&b, tabs ? "\t" : "    ");
        pld_buf_printf(&b, "%s\n", header);
    }
    for (int k = 0; k <= n; k++)
        pld_buf_puts(&b, tabs ? "\t" : "    ");
    pld_buf_puts(&b, "pass\n    return x\n");
    pld_program_t *p = run_front_end(pld_buf_str(&b), b.len);
    pld_buf_fini(&b);
    return p;
}

static void test_limits_150_nested_if_blocks(void)
{
    pld_program_t *p = nested_blocks("if x:", 150, 0);
    EXPECT_FIRST_ERROR(p, 0, TOO_DEEP);
    CU_ASSERT(p->diags.head && p->diags.head->span.line < 110);
    pld_program_destroy(p);
}

static void test_limits_150_nested_loops_and_with(void)
{
    pld_program_t *p = nested_blocks("for i in pl.range(2):", 150, 0);
    EXPECT_FIRST_ERROR(p, 0, TOO_DEEP);
    pld_program_destroy(p);
    p = nested_blocks("while x:", 150, 0);
    EXPECT_FIRST_ERROR(p, 0, TOO_DEEP);
    pld_program_destroy(p);
    p = nested_blocks("with pl.at(level=pl.Level.CORE_GROUP):", 150, 0);
    EXPECT_FIRST_ERROR(p, 0, TOO_DEEP);
    pld_program_destroy(p);
}

static void test_limits_150_nested_blocks_with_tabs(void)
{
    pld_program_t *p = nested_blocks("if x:", 150, 1);
    EXPECT_FIRST_ERROR(p, 0, TOO_DEEP);
    pld_program_destroy(p);
}

static void test_limits_nested_blocks_below_limit_parse(void)
{
    pld_program_t *p = nested_blocks("if x:", 40, 0);
    CU_ASSERT_TRUE(p->parsed_ok);
    CU_ASSERT_EQUAL(p->diags.n_errors, 0);
    pld_program_destroy(p);
}

static void test_limits_indentation_levels_in_lexer(void)
{
    /* the lexer's own limit (100 indentation levels) holds without the parser */
    pld_buf_t b;
    pld_buf_init(&b);
    for (int i = 0; i < 150; i++) {
        for (int k = 0; k < i; k++)
            pld_buf_putc(&b, ' ');
        pld_buf_puts(&b, "if x:\n");
    }
    pld_program_t *p = pld_program_create("deep.pld", pld_buf_str(&b), b.len);
    pld_lexer_t *lx = pld_lex_create(p);
    int indents = 0, errors = 0, guard = 0;
    pld_token_t t;
    while ((t = pld_lex_next(lx)).kind != PLD_T_EOF && guard++ < 100000) {
        indents += t.kind == PLD_T_INDENT;
        errors += t.kind == PLD_T_ERROR;
    }
    CU_ASSERT_EQUAL(indents, PLD_LEX_MAX_INDENT);
    /* one error, then the token stream ends (no DEDENTs, no repeat) */
    CU_ASSERT_EQUAL(errors, 1);
    CU_ASSERT_EQUAL(p->diags.n_errors, 1);
    CU_ASSERT_TRUE(pld_lex_stopped(lx));
    CU_ASSERT_PTR_NOT_NULL_FATAL(p->diags.head);
    CU_ASSERT_STRING_EQUAL(p->diags.head->msg, "too many nested blocks (limit 100)");
    CU_ASSERT_EQUAL(p->diags.head->span.line, 102);
    pld_lex_destroy(lx);
    pld_program_destroy(p);
    pld_buf_fini(&b);
}

static void test_limits_brackets_in_lexer(void)
{
    pld_buf_t b;
    pld_buf_init(&b);
    for (int i = 0; i < 250; i++)
        pld_buf_putc(&b, '(');
    pld_program_t *p = pld_program_create("deep.pld", pld_buf_str(&b), b.len);
    pld_lexer_t *lx = pld_lex_create(p);
    int guard = 0;
    while (pld_lex_next(lx).kind != PLD_T_EOF && guard++ < 100000)
        ;
    CU_ASSERT_EQUAL(pld_lex_depth(lx), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p->diags.head);
    CU_ASSERT_STRING_EQUAL(p->diags.head->msg, "too many nested brackets (limit 200)");
    /* once: not for each of the 50 brackets past the limit, nor "never closed" */
    CU_ASSERT_EQUAL(p->diags.n_errors, 1);
    CU_ASSERT_EQUAL(p->diags.head->span.col, 201);
    pld_lex_destroy(lx);
    pld_program_destroy(p);
    pld_buf_fini(&b);
}

static void test_limits_many_flat_statements(void)
{
    /* size is not depth: 20,000 statements and 500 functions are fine */
    pld_buf_t b;
    pld_buf_init(&b);
    pld_buf_puts(&b, "@pl.program\nclass Big:\n");
    for (int f = 0; f < 500; f++) {
        pld_buf_printf(&b, "    @pl.function\n    def f%d(self, x: pl.Scalar[pl.INT32]) -> pl.Scalar[pl.INT32]:\n", f);
        for (int s = 0; s < 40; s++)
            pld_buf_printf(&b, "        x = x + %d\n", s);
        pld_buf_puts(&b, "        return x\n");
    }
    pld_program_t *p = pld_parse_text("big.pld", pld_buf_str(&b), b.len);
    CU_ASSERT_TRUE(p->parsed_ok);
    CU_ASSERT_EQUAL(p->nfuncs, 500);
    CU_ASSERT_EQUAL(p->funcs[499]->body.n, 41);
    pld_program_destroy(p);
    pld_buf_fini(&b);
}

static void test_limits_error_cascade_is_capped(void)
{
    /* 500 broken statements: at most 20 errors are kept, then a note */
    pld_buf_t b;
    pld_buf_init(&b);
    pld_buf_puts(&b, HDR);
    for (int i = 0; i < 500; i++)
        pld_buf_puts(&b, (i % 3 == 0) ? "    x += 1\n" : (i % 3 == 1) ? "    y = (a,\n    )]\n" : "    $\n");
    pld_program_t *p = run_front_end(pld_buf_str(&b), b.len);
    CU_ASSERT_EQUAL(p->diags.n_errors, 20);
    CU_ASSERT_TRUE(p->diags.truncated);
    pld_program_destroy(p);
    pld_buf_fini(&b);
}

/* --------------------------------------------------------- long chains */

/* Chains that the parser builds iteratively (left-associative operators,
 * trailers) make a tree as deep as the chain; every recursive pass (printer,
 * checker, interpreter) would overflow the stack at some 10,000 levels. The
 * parser limits the tree height (PLD_PARSE_MAX_HEIGHT). Long chains are split
 * over lines inside parentheses, as ruff would, so that the lexer's per-line
 * work stays small. */
static const char *const TOO_TALL =
    "expression nested too deeply (limit 1000 levels); split it into several statements";

/* `    y = (first` + "\n     link" * n + ")" when multiline, else one line. */
static pld_program_t *chain(const char *first, const char *link, int n, int multiline)
{
    pld_buf_t b;
    pld_buf_init(&b);
    pld_buf_puts(&b, HDR);
    pld_buf_puts(&b, multiline ? "    y = (" : "    y = ");
    pld_buf_puts(&b, first);
    for (int i = 0; i < n; i++) {
        if (multiline)
            pld_buf_puts(&b, "\n     ");
        pld_buf_puts(&b, link);
    }
    pld_buf_puts(&b, multiline ? ")\n    return y\n" : "\n    return y\n");
    pld_program_t *p = run_front_end(pld_buf_str(&b), b.len);
    pld_buf_fini(&b);
    return p;
}

static void test_limits_long_binary_chains(void)
{
    pld_program_t *p = chain("x", " + x", 5000, 0);
    EXPECT_FIRST_ERROR(p, 3, TOO_TALL);
    pld_program_destroy(p);
    p = chain("x", " + x", 100000, 1);
    EXPECT_FIRST_ERROR(p, 3, TOO_TALL);
    pld_program_destroy(p);
    p = chain("x", " and x", 100000, 1);
    EXPECT_FIRST_ERROR(p, 3, TOO_TALL);
    pld_program_destroy(p);
}

static void test_limits_long_trailer_chains(void)
{
    pld_program_t *p = chain("x", ".a", 100000, 1);
    EXPECT_FIRST_ERROR(p, 3, TOO_TALL);
    pld_program_destroy(p);
    p = chain("x", "[0]", 100000, 1);
    EXPECT_FIRST_ERROR(p, 3, TOO_TALL);
    pld_program_destroy(p);
    p = chain("pl.f", "()", 100000, 1);
    EXPECT_FIRST_ERROR(p, 3, TOO_TALL);
    pld_program_destroy(p);
}

static void test_limits_long_power_chain(void)
{
    /* ** is right-recursive in the parser: the depth limit applies */
    pld_program_t *p = chain("x", " ** x", 3000, 0);
    EXPECT_FIRST_ERROR(p, 3, TOO_DEEP);
    pld_program_destroy(p);
}

static void test_limits_long_elif_chain(void)
{
    pld_buf_t b;
    pld_buf_init(&b);
    pld_buf_puts(&b, HDR);
    pld_buf_puts(&b, "    if x:\n        pass\n");
    for (int i = 0; i < 100000; i++)
        pld_buf_puts(&b, "    elif x:\n        pass\n");
    pld_program_t *p = run_front_end(pld_buf_str(&b), b.len);
    EXPECT_FIRST_ERROR(p, 0, TOO_DEEP);
    pld_program_destroy(p);
    pld_buf_fini(&b);
}

static void test_limits_chain_below_limit_checks(void)
{
    /* 900 terms: under the height limit, and every pass copes with it */
    pld_program_t *p = chain("x", " + x", 900, 0);
    CU_ASSERT_TRUE(p->parsed_ok);
    CU_ASSERT_EQUAL(p->diags.n_errors, 0);
    pld_program_destroy(p);
}

/* ------------------------------------------- errors inside split calls */

/* An error on a later line of a call split over lines (as ruff formats them)
 * used to be reported as "'(' was never closed" at the call's '(' (error_here
 * in pld_parse.c), after which the real ')' read as "unmatched ')'". */
static void test_limits_error_in_multiline_call(void)
{
    const char *src = "@pl.function\ndef f(x: pl.Scalar[pl.INT32]):\n    y = pl.add(x,\n               x x)\n"
                      "    return y\n";
    pld_program_t *p = run_front_end(src, strlen(src));
    EXPECT_FIRST_ERROR(p, 4, "expected ',' or ')' in call arguments, found name 'x'");
    CU_ASSERT_EQUAL(p->diags.head->span.col, 18);
    pld_program_destroy(p);
}

static void test_limits_multiline_power_chain(void)
{
    /* the depth error of a `**` chain split over lines is the depth error */
    pld_program_t *p = chain("x", " ** x", 3000, 1);
    EXPECT_FIRST_ERROR(p, 0, TOO_DEEP);
    CU_ASSERT(p->diags.head->span.line > 3);
    pld_program_destroy(p);
}

static CU_TestInfo limits_tests[] = {
    {"test_limits_150_nested_parentheses", test_limits_150_nested_parentheses},
    {"test_limits_nested_parentheses_below_limit_parse", test_limits_nested_parentheses_below_limit_parse},
    {"test_limits_250_nested_brackets", test_limits_250_nested_brackets},
    {"test_limits_150_nested_calls_and_subscripts", test_limits_150_nested_calls_and_subscripts},
    {"test_limits_150_nested_unary_operators", test_limits_150_nested_unary_operators},
    {"test_limits_150_nested_if_blocks", test_limits_150_nested_if_blocks},
    {"test_limits_150_nested_loops_and_with", test_limits_150_nested_loops_and_with},
    {"test_limits_150_nested_blocks_with_tabs", test_limits_150_nested_blocks_with_tabs},
    {"test_limits_nested_blocks_below_limit_parse", test_limits_nested_blocks_below_limit_parse},
    {"test_limits_indentation_levels_in_lexer", test_limits_indentation_levels_in_lexer},
    {"test_limits_brackets_in_lexer", test_limits_brackets_in_lexer},
    {"test_limits_many_flat_statements", test_limits_many_flat_statements},
    {"test_limits_error_cascade_is_capped", test_limits_error_cascade_is_capped},
    {"test_limits_long_binary_chains", test_limits_long_binary_chains},
    {"test_limits_long_trailer_chains", test_limits_long_trailer_chains},
    {"test_limits_long_power_chain", test_limits_long_power_chain},
    {"test_limits_long_elif_chain", test_limits_long_elif_chain},
    {"test_limits_chain_below_limit_checks", test_limits_chain_below_limit_checks},
    {"test_limits_error_in_multiline_call", test_limits_error_in_multiline_call},
    {"test_limits_multiline_power_chain", test_limits_multiline_power_chain},
    CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
    {"limits", NULL, NULL, NULL, NULL, limits_tests},
    CU_SUITE_INFO_NULL,
};

int main(void)
{
    return pld_test_main(suites);
}
