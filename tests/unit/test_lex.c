/* test_lex.c - CUnit suite for the lexer (src/parser/pld_lex.c).
 * Every test lexes a small text and asserts exact token kinds, values, spans
 * and diagnostics (docs/ir_text_grammar.md §5). */
#include "pld_lex.h"
#include "pld_test.h"

#include <stdint.h>

#define MAX_TOKS 512

typedef struct lexed {
    pld_program_t *p;
    pld_token_t t[MAX_TOKS];
    int n;
} lexed_t;

/* Lexes src up to and including EOF (or MAX_TOKS tokens). */
static lexed_t *lex_all(const char *src)
{
    lexed_t *L = calloc(1, sizeof *L);
    L->p = pld_program_create("t.pld", src, strlen(src));
    pld_lexer_t *lx = pld_lex_create(L->p);
    while (L->n < MAX_TOKS) {
        L->t[L->n] = pld_lex_next(lx);
        if (L->t[L->n++].kind == PLD_T_EOF)
            break;
    }
    pld_lex_destroy(lx);
    return L;
}

static void lexed_free(lexed_t *L)
{
    pld_program_destroy(L->p);
    free(L);
}

static void print_kinds(const char *label, const pld_tok_kind_t *k, int n)
{
    fprintf(stderr, "  %s:", label);
    for (int i = 0; i < n; i++)
        fprintf(stderr, " %s", pld_tok_name(k[i]));
    fprintf(stderr, "\n");
}

/* Asserts the exact token-kind sequence (ending with PLD_T_EOF). */
static void expect_kinds_at(const lexed_t *L, const pld_tok_kind_t *want, int n, const char *src, int line)
{
    int ok = L->n == n;
    for (int i = 0; ok && i < n; i++)
        ok = L->t[i].kind == want[i];
    if (!ok) {
        pld_tok_kind_t got[MAX_TOKS];
        for (int i = 0; i < L->n; i++)
            got[i] = L->t[i].kind;
        fprintf(stderr, "\ntest_lex.c:%d: token kinds differ for text:\n%s\n", line, src);
        print_kinds("expected", want, n);
        print_kinds("found   ", got, L->n);
    }
    CU_ASSERT(ok);
}

#define KINDS(...) (const pld_tok_kind_t[]){__VA_ARGS__}, (int)(sizeof((const pld_tok_kind_t[]){__VA_ARGS__}) / sizeof(pld_tok_kind_t))
#define EXPECT_KINDS(L, src, ...) expect_kinds_at((L), KINDS(__VA_ARGS__), (src), __LINE__)

/* Asserts that diagnostic number idx is an error at line:col with message msg. */
static void expect_diag_at(const pld_program_t *p, int idx, unsigned line, unsigned col, const char *msg, int srcline)
{
    const pld_diag_t *d = p->diags.head;
    for (int i = 0; d && i < idx; i++)
        d = d->next;
    if (!d) {
        fprintf(stderr, "\ntest_lex.c:%d: expected diagnostic #%d '%s', found none\n", srcline, idx, msg);
        CU_FAIL("missing diagnostic");
        return;
    }
    if (d->span.line != line || d->span.col != col || strcmp(d->msg, msg) != 0) {
        fprintf(stderr, "\ntest_lex.c:%d: expected %u:%u: %s\n                 found    %u:%u: %s\n", srcline, line,
                col, msg, (unsigned)d->span.line, (unsigned)d->span.col, d->msg);
        CU_FAIL("diagnostic differs");
    }
    CU_ASSERT_EQUAL(d->sev, PLD_SEV_ERROR);
}
#define EXPECT_DIAG(p, idx, line, col, msg) expect_diag_at((p), (idx), (line), (col), (msg), __LINE__)

static int n_diags(const pld_program_t *p)
{
    int n = 0;
    for (const pld_diag_t *d = p->diags.head; d; d = d->next)
        n++;
    return n;
}

/* ------------------------------------------------------------------ kinds */

static void test_lex_simple_statement(void)
{
    const char *src = "x = a.b(1, 2.5, 's')\n";
    lexed_t *L = lex_all(src);
    EXPECT_KINDS(L, src, PLD_T_NAME, PLD_T_ASSIGN, PLD_T_NAME, PLD_T_DOT, PLD_T_NAME, PLD_T_LPAREN, PLD_T_INT,
                 PLD_T_COMMA, PLD_T_FLOAT, PLD_T_COMMA, PLD_T_STRING, PLD_T_RPAREN, PLD_T_NEWLINE, PLD_T_EOF);
    CU_ASSERT_STRING_EQUAL(L->t[0].text, "x");
    CU_ASSERT_STRING_EQUAL(L->t[4].text, "b");
    CU_ASSERT_EQUAL(L->t[6].ival, 1);
    CU_ASSERT_DOUBLE_EQUAL(L->t[8].fval, 2.5, 0.0);
    CU_ASSERT_STRING_EQUAL(L->t[10].text, "s");
    CU_ASSERT_EQUAL(L->t[10].text_len, 1);
    /* spans: 1-based line/col, byte offset and length */
    CU_ASSERT_EQUAL(L->t[2].span.line, 1);
    CU_ASSERT_EQUAL(L->t[2].span.col, 5);
    CU_ASSERT_EQUAL(L->t[2].span.off, 4);
    CU_ASSERT_EQUAL(L->t[2].span.len, 1);
    CU_ASSERT_EQUAL(L->t[10].span.col, 17);
    CU_ASSERT_EQUAL(L->t[10].span.len, 3);
    CU_ASSERT_EQUAL(n_diags(L->p), 0);
    lexed_free(L);
}

static void test_lex_operators(void)
{
    const char *src = "+ - * / // % ** << >> & | ^ ~ < > <= >= == != = ( ) [ ] { } , : . -> @ ... ; :=\n";
    lexed_t *L = lex_all(src);
    EXPECT_KINDS(L, src, PLD_T_PLUS, PLD_T_MINUS, PLD_T_STAR, PLD_T_SLASH, PLD_T_DSLASH, PLD_T_PERCENT, PLD_T_DSTAR,
                 PLD_T_LSHIFT, PLD_T_RSHIFT, PLD_T_AMP, PLD_T_PIPE, PLD_T_CARET, PLD_T_TILDE, PLD_T_LT, PLD_T_GT,
                 PLD_T_LE, PLD_T_GE, PLD_T_EQEQ, PLD_T_NE, PLD_T_ASSIGN, PLD_T_LPAREN, PLD_T_RPAREN, PLD_T_LBRACK,
                 PLD_T_RBRACK, PLD_T_LBRACE, PLD_T_RBRACE, PLD_T_COMMA, PLD_T_COLON, PLD_T_DOT, PLD_T_ARROW, PLD_T_AT,
                 PLD_T_ELLIPSIS, PLD_T_SEMI, PLD_T_WALRUS, PLD_T_NEWLINE, PLD_T_EOF);
    CU_ASSERT_EQUAL(n_diags(L->p), 0);
    lexed_free(L);
}

static void test_lex_longest_match(void)
{
    /* no spaces: '**' before '*', '//' before '/', '->' before '-', '...' before '.' */
    const char *src = "a**b//c->d...e.f<<=g\n";
    lexed_t *L = lex_all(src);
    EXPECT_KINDS(L, src, PLD_T_NAME, PLD_T_DSTAR, PLD_T_NAME, PLD_T_DSLASH, PLD_T_NAME, PLD_T_ARROW, PLD_T_NAME,
                 PLD_T_ELLIPSIS, PLD_T_NAME, PLD_T_DOT, PLD_T_NAME, PLD_T_AUGASSIGN, PLD_T_NAME, PLD_T_NEWLINE,
                 PLD_T_EOF);
    lexed_free(L);
}

static void test_lex_augmented_assignments(void)
{
    const char *src = "+= -= *= /= //= %= **= <<= >>= &= |= ^= @=\n";
    lexed_t *L = lex_all(src);
    EXPECT_KINDS(L, src, PLD_T_AUGASSIGN, PLD_T_AUGASSIGN, PLD_T_AUGASSIGN, PLD_T_AUGASSIGN, PLD_T_AUGASSIGN,
                 PLD_T_AUGASSIGN, PLD_T_AUGASSIGN, PLD_T_AUGASSIGN, PLD_T_AUGASSIGN, PLD_T_AUGASSIGN,
                 PLD_T_AUGASSIGN, PLD_T_AUGASSIGN, PLD_T_AUGASSIGN, PLD_T_NEWLINE, PLD_T_EOF);
    CU_ASSERT_EQUAL(L->t[4].span.len, 3); /* //= */
    lexed_free(L);
}

static void test_lex_keywords(void)
{
    const char *src = "False None True and as assert async await break class continue def del elif else except "
                      "finally for from global if import in is lambda nonlocal not or pass raise return try while "
                      "with yield\n";
    lexed_t *L = lex_all(src);
    EXPECT_KINDS(L, src, PLD_T_FALSE, PLD_T_NONE, PLD_T_TRUE, PLD_T_AND, PLD_T_AS, PLD_T_ASSERT, PLD_T_ASYNC,
                 PLD_T_AWAIT, PLD_T_BREAK, PLD_T_CLASS, PLD_T_CONTINUE, PLD_T_DEF, PLD_T_DEL, PLD_T_ELIF, PLD_T_ELSE,
                 PLD_T_EXCEPT, PLD_T_FINALLY, PLD_T_FOR, PLD_T_FROM, PLD_T_GLOBAL, PLD_T_IF, PLD_T_IMPORT, PLD_T_IN,
                 PLD_T_IS, PLD_T_LAMBDA, PLD_T_NONLOCAL, PLD_T_NOT, PLD_T_OR, PLD_T_PASS, PLD_T_RAISE, PLD_T_RETURN,
                 PLD_T_TRY, PLD_T_WHILE, PLD_T_WITH, PLD_T_YIELD, PLD_T_NEWLINE, PLD_T_EOF);
    lexed_free(L);
}

static void test_lex_soft_names(void)
{
    /* xor, self, tuple, yield_, while_, None_ and inf are ordinary identifiers */
    const char *src = "xor self tuple yield_ while_ None_ inf _x9 __a__ Truex\n";
    lexed_t *L = lex_all(src);
    EXPECT_KINDS(L, src, PLD_T_NAME, PLD_T_NAME, PLD_T_NAME, PLD_T_NAME, PLD_T_NAME, PLD_T_NAME, PLD_T_NAME,
                 PLD_T_NAME, PLD_T_NAME, PLD_T_NAME, PLD_T_NEWLINE, PLD_T_EOF);
    CU_ASSERT_STRING_EQUAL(L->t[3].text, "yield_");
    CU_ASSERT_STRING_EQUAL(L->t[9].text, "Truex");
    lexed_free(L);
}

static void test_lex_names_are_interned(void)
{
    lexed_t *L = lex_all("abc x abc\n");
    CU_ASSERT_PTR_EQUAL(L->t[0].text, L->t[2].text);
    CU_ASSERT_PTR_NOT_EQUAL(L->t[0].text, L->t[1].text);
    CU_ASSERT_PTR_EQUAL(L->t[0].text, pld_ast_intern_cstr(L->p, "abc"));
    lexed_free(L);
}

static void test_lex_unicode_identifier_and_column(void)
{
    /* UTF-8 letters are identifier characters; continuation bytes take no column */
    const char *src = "\xc3\xa9t\xc3\xa9 = 1\n";
    lexed_t *L = lex_all(src);
    EXPECT_KINDS(L, src, PLD_T_NAME, PLD_T_ASSIGN, PLD_T_INT, PLD_T_NEWLINE, PLD_T_EOF);
    CU_ASSERT_STRING_EQUAL(L->t[0].text, "\xc3\xa9t\xc3\xa9");
    CU_ASSERT_EQUAL(L->t[1].span.col, 5);
    CU_ASSERT_EQUAL(L->t[1].span.off, 6);
    lexed_free(L);
}

static void test_lex_token_names(void)
{
    CU_ASSERT_STRING_EQUAL(pld_tok_name(PLD_T_LPAREN), "'('");
    CU_ASSERT_STRING_EQUAL(pld_tok_name(PLD_T_NEWLINE), "newline");
    CU_ASSERT_STRING_EQUAL(pld_tok_name(PLD_T_EOF), "end of file");
    CU_ASSERT_STRING_EQUAL(pld_tok_name(PLD_T_NAME), "name");
    CU_ASSERT_STRING_EQUAL(pld_tok_name(PLD_T_DEF), "def");
    CU_ASSERT_STRING_EQUAL(pld_tok_name(PLD_T_ARROW), "'->'");
    CU_ASSERT_STRING_EQUAL(pld_tok_name(PLD_T_AUGASSIGN), "augmented assignment");
    for (int k = 0; k < PLD_T__COUNT; k++) {
        const char *n = pld_tok_name((pld_tok_kind_t)k);
        CU_ASSERT_PTR_NOT_NULL(n);
        CU_ASSERT(n && strcmp(n, "token") != 0);
    }
}

/* ------------------------------------------------------------------ layout */

static void test_lex_indent_dedent(void)
{
    const char *src = "if a:\n    b\n    if c:\n        d\ne\n";
    lexed_t *L = lex_all(src);
    EXPECT_KINDS(L, src, PLD_T_IF, PLD_T_NAME, PLD_T_COLON, PLD_T_NEWLINE, PLD_T_INDENT, PLD_T_NAME, PLD_T_NEWLINE,
                 PLD_T_IF, PLD_T_NAME, PLD_T_COLON, PLD_T_NEWLINE, PLD_T_INDENT, PLD_T_NAME, PLD_T_NEWLINE,
                 PLD_T_DEDENT, PLD_T_DEDENT, PLD_T_NAME, PLD_T_NEWLINE, PLD_T_EOF);
    CU_ASSERT_EQUAL(L->t[12].span.line, 4);
    CU_ASSERT_EQUAL(L->t[12].span.col, 9);
    CU_ASSERT_EQUAL(n_diags(L->p), 0);
    lexed_free(L);
}

static void test_lex_eof_without_newline_closes_blocks(void)
{
    /* the raw printer writes no final newline: NEWLINE, then every DEDENT */
    const char *src = "def f():\n    if x:\n        return 1";
    lexed_t *L = lex_all(src);
    EXPECT_KINDS(L, src, PLD_T_DEF, PLD_T_NAME, PLD_T_LPAREN, PLD_T_RPAREN, PLD_T_COLON, PLD_T_NEWLINE, PLD_T_INDENT,
                 PLD_T_IF, PLD_T_NAME, PLD_T_COLON, PLD_T_NEWLINE, PLD_T_INDENT, PLD_T_RETURN, PLD_T_INT,
                 PLD_T_NEWLINE, PLD_T_DEDENT, PLD_T_DEDENT, PLD_T_EOF);
    lexed_free(L);
}

static void test_lex_blank_and_comment_lines_ignored(void)
{
    /* blank lines, whitespace-only lines and comment lines at any indentation
     * produce no NEWLINE/INDENT/DEDENT */
    const char *src = "\n\nif a:\n\n    b\n  \n# left\n            # deep\n    c\n\n";
    lexed_t *L = lex_all(src);
    EXPECT_KINDS(L, src, PLD_T_IF, PLD_T_NAME, PLD_T_COLON, PLD_T_NEWLINE, PLD_T_INDENT, PLD_T_NAME, PLD_T_NEWLINE,
                 PLD_T_NAME, PLD_T_NEWLINE, PLD_T_DEDENT, PLD_T_EOF);
    CU_ASSERT_EQUAL(L->t[7].span.line, 9);
    lexed_free(L);
}

static void test_lex_tabs_to_eight_columns(void)
{
    /* a tab advances to the next multiple of 8: "\t", "  \t" and 8 spaces are
     * the same level; "\t  " is deeper */
    const char *src = "if a:\n\tb\n        c\n  \td\n\t  e\n";
    lexed_t *L = lex_all(src);
    EXPECT_KINDS(L, src, PLD_T_IF, PLD_T_NAME, PLD_T_COLON, PLD_T_NEWLINE, PLD_T_INDENT, PLD_T_NAME, PLD_T_NEWLINE,
                 PLD_T_NAME, PLD_T_NEWLINE, PLD_T_NAME, PLD_T_NEWLINE, PLD_T_INDENT, PLD_T_NAME, PLD_T_NEWLINE,
                 PLD_T_DEDENT, PLD_T_DEDENT, PLD_T_EOF);
    CU_ASSERT_EQUAL(L->t[5].span.col, 9);  /* b after one tab */
    CU_ASSERT_EQUAL(L->t[9].span.col, 9);  /* d after two spaces and a tab */
    CU_ASSERT_EQUAL(L->t[12].span.col, 11); /* e after a tab and two spaces */
    CU_ASSERT_EQUAL(n_diags(L->p), 0);
    lexed_free(L);
}

static void test_lex_line_indent(void)
{
    const char *src = "a\n\t  b\n    c\n";
    pld_program_t *p = pld_program_create("t.pld", src, strlen(src));
    pld_lexer_t *lx = pld_lex_create(p);
    CU_ASSERT_EQUAL(pld_lex_line_indent(lx, 0), 0);
    CU_ASSERT_EQUAL(pld_lex_line_indent(lx, 5), 10); /* offset of b: tab (8) + 2 */
    CU_ASSERT_EQUAL(pld_lex_line_indent(lx, 11), 4); /* inside "    c" */
    pld_lex_destroy(lx);
    pld_program_destroy(p);
}

static void test_lex_dedent_mismatch_error(void)
{
    const char *src = "if a:\n    b\n  c\n";
    lexed_t *L = lex_all(src);
    CU_ASSERT_EQUAL(n_diags(L->p), 1);
    EXPECT_DIAG(L->p, 0, 3, 3, "unindent does not match any outer indentation level");
    /* recovery: c is still lexed as a name on its own logical line */
    int found_c = 0;
    for (int i = 0; i < L->n; i++)
        if (L->t[i].kind == PLD_T_NAME && strcmp(L->t[i].text, "c") == 0)
            found_c = 1;
    CU_ASSERT(found_c);
    CU_ASSERT_EQUAL(L->t[L->n - 1].kind, PLD_T_EOF);
    lexed_free(L);
}

static void test_lex_implicit_joining_in_brackets(void)
{
    /* newlines and indentation inside (), [] and {} are ignored */
    const char *src = "f(a,\n  b,\n        [c,\n d], {e:\n f})\ng\n";
    lexed_t *L = lex_all(src);
    EXPECT_KINDS(L, src, PLD_T_NAME, PLD_T_LPAREN, PLD_T_NAME, PLD_T_COMMA, PLD_T_NAME, PLD_T_COMMA, PLD_T_LBRACK,
                 PLD_T_NAME, PLD_T_COMMA, PLD_T_NAME, PLD_T_RBRACK, PLD_T_COMMA, PLD_T_LBRACE, PLD_T_NAME,
                 PLD_T_COLON, PLD_T_NAME, PLD_T_RBRACE, PLD_T_RPAREN, PLD_T_NEWLINE, PLD_T_NAME, PLD_T_NEWLINE,
                 PLD_T_EOF);
    CU_ASSERT_EQUAL(L->t[4].span.line, 2);
    CU_ASSERT_EQUAL(L->t[4].span.col, 3);
    CU_ASSERT_EQUAL(L->t[19].span.line, 6);
    CU_ASSERT_EQUAL(n_diags(L->p), 0);
    lexed_free(L);
}

static void test_lex_comment_inside_brackets(void)
{
    const char *src = "f(a,  # first\n  b)  # second\n";
    lexed_t *L = lex_all(src);
    EXPECT_KINDS(L, src, PLD_T_NAME, PLD_T_LPAREN, PLD_T_NAME, PLD_T_COMMA, PLD_T_NAME, PLD_T_RPAREN, PLD_T_NEWLINE,
                 PLD_T_EOF);
    lexed_free(L);
}

static void test_lex_backslash_continuation(void)
{
    const char *src = "x = 1 + \\\n        2\ny\n";
    lexed_t *L = lex_all(src);
    EXPECT_KINDS(L, src, PLD_T_NAME, PLD_T_ASSIGN, PLD_T_INT, PLD_T_PLUS, PLD_T_INT, PLD_T_NEWLINE, PLD_T_NAME,
                 PLD_T_NEWLINE, PLD_T_EOF);
    CU_ASSERT_EQUAL(L->t[4].span.line, 2);
    CU_ASSERT_EQUAL(L->t[4].span.col, 9);
    CU_ASSERT_EQUAL(L->t[4].ival, 2);
    CU_ASSERT_EQUAL(n_diags(L->p), 0);
    lexed_free(L);
}

static void test_lex_crlf_line_ends(void)
{
    const char *src = "if a:\r\n    b = (1,\r\n 2)\r\nc\r\n";
    lexed_t *L = lex_all(src);
    EXPECT_KINDS(L, src, PLD_T_IF, PLD_T_NAME, PLD_T_COLON, PLD_T_NEWLINE, PLD_T_INDENT, PLD_T_NAME, PLD_T_ASSIGN,
                 PLD_T_LPAREN, PLD_T_INT, PLD_T_COMMA, PLD_T_INT, PLD_T_RPAREN, PLD_T_NEWLINE, PLD_T_DEDENT,
                 PLD_T_NAME, PLD_T_NEWLINE, PLD_T_EOF);
    CU_ASSERT_EQUAL(L->t[10].span.line, 3);
    CU_ASSERT_EQUAL(L->t[10].span.col, 2);
    CU_ASSERT_EQUAL(L->t[14].span.line, 4);
    CU_ASSERT_EQUAL(L->t[14].span.col, 1);
    CU_ASSERT_EQUAL(n_diags(L->p), 0);
    lexed_free(L);
}

static void test_lex_lone_cr_line_ends(void)
{
    const char *src = "a\rb\r";
    lexed_t *L = lex_all(src);
    EXPECT_KINDS(L, src, PLD_T_NAME, PLD_T_NEWLINE, PLD_T_NAME, PLD_T_NEWLINE, PLD_T_EOF);
    CU_ASSERT_EQUAL(L->t[2].span.line, 2);
    lexed_free(L);
}

static void test_lex_byte_order_mark_skipped(void)
{
    const char *src = "\xEF\xBB\xBFx = 1\n";
    lexed_t *L = lex_all(src);
    EXPECT_KINDS(L, src, PLD_T_NAME, PLD_T_ASSIGN, PLD_T_INT, PLD_T_NEWLINE, PLD_T_EOF);
    CU_ASSERT_EQUAL(L->t[0].span.off, 3);
    CU_ASSERT_EQUAL(L->t[0].span.col, 1);
    lexed_free(L);
}

static void test_lex_empty_input(void)
{
    lexed_t *L = lex_all("");
    EXPECT_KINDS(L, "", PLD_T_EOF);
    lexed_free(L);
    L = lex_all("\n\n   \n# only a comment");
    EXPECT_KINDS(L, "(blank)", PLD_T_EOF);
    lexed_free(L);
}

static void test_lex_comments_collected(void)
{
    const char *src = "# pypto.program: X\nx = 1  # trailing  \n    # indented comment\n#\ny\n";
    pld_program_t *p = pld_program_create("t.pld", src, strlen(src));
    pld_lexer_t *lx = pld_lex_create(p);
    pld_token_t t;
    int n = 0;
    while ((t = pld_lex_next(lx)).kind != PLD_T_EOF)
        n++;
    CU_ASSERT_EQUAL(n, 6); /* x = 1 NEWLINE y NEWLINE */
    /* comments before line 3: the header and the trailing one (trailing blanks stripped) */
    pld_comment_t *c = pld_lex_take_comments(lx, 3);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_STRING_EQUAL(c->text, "pypto.program: X");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c->next);
    CU_ASSERT_STRING_EQUAL(c->next->text, "trailing");
    CU_ASSERT_PTR_NULL(c->next->next);
    /* the rest: the indented one and the empty one */
    c = pld_lex_take_comments(lx, 100);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_STRING_EQUAL(c->text, "indented comment");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c->next);
    CU_ASSERT_STRING_EQUAL(c->next->text, "");
    CU_ASSERT_PTR_NULL(c->next->next);
    CU_ASSERT_PTR_NULL(pld_lex_take_comments(lx, 100));
    pld_lex_destroy(lx);
    pld_program_destroy(p);
}

static void test_lex_hash_inside_string_is_not_comment(void)
{
    const char *src = "x = '# not a comment'\n";
    pld_program_t *p = pld_program_create("t.pld", src, strlen(src));
    pld_lexer_t *lx = pld_lex_create(p);
    pld_lex_next(lx);
    pld_lex_next(lx);
    pld_token_t t = pld_lex_next(lx);
    CU_ASSERT_EQUAL(t.kind, PLD_T_STRING);
    CU_ASSERT_STRING_EQUAL(t.text, "# not a comment");
    while (pld_lex_next(lx).kind != PLD_T_EOF)
        ;
    CU_ASSERT_PTR_NULL(pld_lex_take_comments(lx, 100));
    pld_lex_destroy(lx);
    pld_program_destroy(p);
}

/* ----------------------------------------------------------------- strings */

/* Lexes one string literal and returns its token (text valid until free). */
static void expect_string_at(const char *src, const char *want, size_t want_len, int want_f, int line)
{
    lexed_t *L = lex_all(src);
    int ok = L->n >= 1 && L->t[0].kind == PLD_T_STRING && L->t[0].text_len == want_len &&
             memcmp(L->t[0].text, want, want_len) == 0 && L->t[0].str_prefix_f == want_f && n_diags(L->p) == 0;
    if (!ok) {
        fprintf(stderr, "\ntest_lex.c:%d: string literal %s: kind %s, len %zu (want %zu), f=%d, diags %d\n", line,
                src, pld_tok_name(L->t[0].kind), L->t[0].text_len, want_len, L->t[0].str_prefix_f, n_diags(L->p));
    }
    CU_ASSERT(ok);
    lexed_free(L);
}
#define EXPECT_STRING(src, want, f) expect_string_at((src), (want), sizeof(want) - 1, (f), __LINE__)

static void test_lex_string_quotes(void)
{
    EXPECT_STRING("'abc'", "abc", 0);
    EXPECT_STRING("\"abc\"", "abc", 0);
    EXPECT_STRING("''", "", 0);
    EXPECT_STRING("\"it's\"", "it's", 0);
    EXPECT_STRING("'say \"hi\"'", "say \"hi\"", 0);
}

static void test_lex_string_escapes(void)
{
    EXPECT_STRING("'a\\nb\\tc\\rd'", "a\nb\tc\rd", 0);
    EXPECT_STRING("'\\\\ \\' \\\"'", "\\ ' \"", 0);
    EXPECT_STRING("'\\x41\\101\\0'", "AA\0", 0);
    EXPECT_STRING("'\\u00e9\\U0001F600'", "\xc3\xa9\xf0\x9f\x98\x80", 0);
    EXPECT_STRING("'\\a\\b\\f\\v'", "\a\b\f\v", 0);
    /* unknown escapes are kept verbatim, as Python does */
    EXPECT_STRING("'\\q\\d'", "\\q\\d", 0);
    /* backslash-newline inside a string continues it */
    EXPECT_STRING("'ab\\\ncd'", "abcd", 0);
}

static void test_lex_string_prefixes(void)
{
    EXPECT_STRING("r'a\\nb'", "a\\nb", 0);
    EXPECT_STRING("R\"\\d+\"", "\\d+", 0);
    EXPECT_STRING("b'bytes'", "bytes", 0);
    EXPECT_STRING("B'x'", "x", 0);
    EXPECT_STRING("u'text'", "text", 0);
    EXPECT_STRING("f'{x} y'", "{x} y", 1);
    EXPECT_STRING("F'{x}'", "{x}", 1);
    EXPECT_STRING("rb'\\x'", "\\x", 0);
    EXPECT_STRING("Br'\\x'", "\\x", 0);
    EXPECT_STRING("fr'\\n{a}'", "\\n{a}", 1);
    EXPECT_STRING("rf'{a}\\n'", "{a}\\n", 1);
}

static void test_lex_string_triple_quoted(void)
{
    EXPECT_STRING("'''one\ntwo'''", "one\ntwo", 0);
    EXPECT_STRING("\"\"\"a \"quoted\" 'word'\n\"\"\"", "a \"quoted\" 'word'\n", 0);
    EXPECT_STRING("r'''raw \\n\n'''", "raw \\n\n", 0);
    EXPECT_STRING("'''\r\nx\r\n'''", "\nx\n", 0);
    /* a triple-quoted string spanning lines: the next token's line is right */
    const char *src = "\"\"\"doc\nmore\n\"\"\"\nx\n";
    lexed_t *L = lex_all(src);
    EXPECT_KINDS(L, src, PLD_T_STRING, PLD_T_NEWLINE, PLD_T_NAME, PLD_T_NEWLINE, PLD_T_EOF);
    CU_ASSERT_EQUAL(L->t[0].span.line, 1);
    CU_ASSERT_EQUAL(L->t[0].span.len, 15); /* the whole literal, quotes included */
    CU_ASSERT_EQUAL(L->t[2].span.line, 4);
    lexed_free(L);
}

static void test_lex_string_adjacent_literals(void)
{
    /* the lexer returns two STRING tokens; the parser concatenates them */
    const char *src = "x = 'ab' \"cd\"\n";
    lexed_t *L = lex_all(src);
    EXPECT_KINDS(L, src, PLD_T_NAME, PLD_T_ASSIGN, PLD_T_STRING, PLD_T_STRING, PLD_T_NEWLINE, PLD_T_EOF);
    lexed_free(L);

    const char *prog = "@pl.function\ndef f(x: pl.Scalar[pl.INT32]):\n    y = pl.static_print('ab' \"cd\"\n"
                       "        r'\\e')\n";
    pld_program_t *p = pld_parse_text("t.pld", prog, strlen(prog));
    CU_ASSERT_FATAL(p && p->parsed_ok);
    const pld_stmt_t *s = p->funcs[0]->body.stmts[0];
    CU_ASSERT_EQUAL_FATAL(s->kind, PLD_ST_ASSIGN);
    const pld_expr_t *arg = s->u.assign.value->u.call.args[0].value;
    CU_ASSERT_EQUAL_FATAL(arg->kind, PLD_EX_STR);
    CU_ASSERT_EQUAL(arg->u.str.len, 6);
    CU_ASSERT_STRING_EQUAL(arg->u.str.s, "abcd\\e");
    pld_program_destroy(p);
}

static void test_lex_string_errors(void)
{
    lexed_t *L = lex_all("x = 'abc\ny = 1\n");
    CU_ASSERT_EQUAL(n_diags(L->p), 1);
    EXPECT_DIAG(L->p, 0, 1, 5, "unterminated string literal");
    CU_ASSERT_EQUAL(L->t[2].kind, PLD_T_ERROR);
    lexed_free(L);

    L = lex_all("x = 1\ns = '''abc\n\nmore");
    CU_ASSERT_EQUAL(n_diags(L->p), 1);
    EXPECT_DIAG(L->p, 0, 2, 5, "unterminated triple-quoted string literal");
    lexed_free(L);

    L = lex_all("s = 'a\\x4g'\n");
    CU_ASSERT_EQUAL(n_diags(L->p), 1);
    EXPECT_DIAG(L->p, 0, 1, 7, "truncated or invalid \\x escape in string literal");
    lexed_free(L);

    L = lex_all("s = '\\U00110000'\n");
    EXPECT_DIAG(L->p, 0, 1, 6, "truncated or invalid \\U escape in string literal");
    lexed_free(L);
}

/* ----------------------------------------------------------------- numbers */

static void expect_int_at(const char *src, int64_t want, int line)
{
    lexed_t *L = lex_all(src);
    int ok = L->t[0].kind == PLD_T_INT && L->t[0].ival == want && n_diags(L->p) == 0 &&
             L->t[1].kind == PLD_T_NEWLINE && L->t[0].span.len == strlen(src);
    if (!ok)
        fprintf(stderr, "\ntest_lex.c:%d: %s: kind %s value %lld (want %lld), diags %d\n", line, src,
                pld_tok_name(L->t[0].kind), (long long)L->t[0].ival, (long long)want, n_diags(L->p));
    CU_ASSERT(ok);
    lexed_free(L);
}
#define EXPECT_INT(src, v) expect_int_at((src), (v), __LINE__)

static void expect_float_at(const char *src, double want, int line)
{
    lexed_t *L = lex_all(src);
    int ok = L->t[0].kind == PLD_T_FLOAT && L->t[0].fval == want && n_diags(L->p) == 0 &&
             L->t[0].span.len == strlen(src);
    if (!ok)
        fprintf(stderr, "\ntest_lex.c:%d: %s: kind %s value %.17g (want %.17g), diags %d\n", line, src,
                pld_tok_name(L->t[0].kind), L->t[0].fval, want, n_diags(L->p));
    CU_ASSERT(ok);
    lexed_free(L);
}
#define EXPECT_FLOAT(src, v) expect_float_at((src), (v), __LINE__)

static void expect_num_error_at(const char *src, const char *msg, int line)
{
    lexed_t *L = lex_all(src);
    int ok = L->t[0].kind == PLD_T_ERROR && n_diags(L->p) == 1 && L->p->diags.head->span.line == 1 &&
             L->p->diags.head->span.col == 1 && strcmp(L->p->diags.head->msg, msg) == 0;
    if (!ok)
        fprintf(stderr, "\ntest_lex.c:%d: %s: kind %s, diags %d, first '%s' (want '%s')\n", line, src,
                pld_tok_name(L->t[0].kind), n_diags(L->p), L->p->diags.head ? L->p->diags.head->msg : "-", msg);
    CU_ASSERT(ok);
    lexed_free(L);
}
#define EXPECT_NUM_ERROR(src, msg) expect_num_error_at((src), (msg), __LINE__)

static void test_lex_integers(void)
{
    EXPECT_INT("0", 0);
    EXPECT_INT("00", 0);
    EXPECT_INT("42", 42);
    EXPECT_INT("1_000", 1000);
    EXPECT_INT("1_000_000", 1000000);
    EXPECT_INT("0x1F", 31);
    EXPECT_INT("0X1f", 31);
    EXPECT_INT("0o7", 7);
    EXPECT_INT("0O17", 15);
    EXPECT_INT("0b101", 5);
    EXPECT_INT("0B1_0", 2);
    EXPECT_INT("0x1000", 4096);
    EXPECT_INT("9223372036854775807", INT64_MAX);
    EXPECT_INT("0x7FFFFFFFFFFFFFFF", INT64_MAX);
    /* Python allows one '_' right after the base prefix */
    EXPECT_INT("0x_ff", 255);
    EXPECT_INT("0X_F_F", 255);
    EXPECT_INT("0o_17", 15);
    EXPECT_INT("0b_1", 1);
    EXPECT_INT("0b_1_0", 2);
}

static void test_lex_floats(void)
{
    EXPECT_FLOAT("1.0", 1.0);
    EXPECT_FLOAT(".5", 0.5);
    EXPECT_FLOAT("5.", 5.0);
    EXPECT_FLOAT("1e-7", 1e-7);
    EXPECT_FLOAT("1e-07", 1e-7);
    EXPECT_FLOAT("1E5", 1e5);
    EXPECT_FLOAT("1e+16", 1e16);
    EXPECT_FLOAT("2.5e3", 2500.0);
    EXPECT_FLOAT("0.10000000000000001", 0.1);
    EXPECT_FLOAT("9.9999999999999995e-08", 9.9999999999999995e-08);
    EXPECT_FLOAT("10000000000000000.0", 1e16);
    EXPECT_FLOAT("1_0.2_5", 10.25);
}

static void test_lex_number_boundaries(void)
{
    /* a leading '-' is always a separate token */
    const char *src = "x - -1\n";
    lexed_t *L = lex_all(src);
    EXPECT_KINDS(L, src, PLD_T_NAME, PLD_T_MINUS, PLD_T_MINUS, PLD_T_INT, PLD_T_NEWLINE, PLD_T_EOF);
    lexed_free(L);
    /* 1.x is not a float followed by a name; 1 ... is an int and an ellipsis */
    src = "a[1:2] 1 ...\n";
    L = lex_all(src);
    EXPECT_KINDS(L, src, PLD_T_NAME, PLD_T_LBRACK, PLD_T_INT, PLD_T_COLON, PLD_T_INT, PLD_T_RBRACK, PLD_T_INT,
                 PLD_T_ELLIPSIS, PLD_T_NEWLINE, PLD_T_EOF);
    lexed_free(L);
}

static void test_lex_number_errors(void)
{
    EXPECT_NUM_ERROR("9223372036854775808", "integer literal too large (limit 9223372036854775807)");
    EXPECT_NUM_ERROR("99999999999999999999999", "integer literal too large (limit 9223372036854775807)");
    EXPECT_NUM_ERROR("0x8000000000000000", "integer literal too large (limit 9223372036854775807)");
    EXPECT_NUM_ERROR("007", "leading zeros in decimal integer literals are not permitted");
    EXPECT_NUM_ERROR("0x", "invalid numeric literal");
    EXPECT_NUM_ERROR("0b102", "invalid numeric literal");
    EXPECT_NUM_ERROR("1abc", "invalid numeric literal");
    EXPECT_NUM_ERROR("0x1g", "invalid numeric literal");
    EXPECT_NUM_ERROR("1.2.3", "invalid numeric literal");
    EXPECT_NUM_ERROR("1j", "complex literals are not supported");
}

/* A misplaced '_': one error, at the '_' (column col), naming the literal's kind. */
static void expect_underscore_error_at(const char *src, unsigned col, const char *msg, int line)
{
    lexed_t *L = lex_all(src);
    const pld_diag_t *d = L->p->diags.head;
    int ok = L->t[0].kind == PLD_T_ERROR && n_diags(L->p) == 1 && d->span.line == 1 && d->span.col == col &&
             d->span.len == 1 && strcmp(d->msg, msg) == 0;
    if (!ok)
        fprintf(stderr, "\ntest_lex.c:%d: %s: kind %s, diags %d, first %u:%u '%s' (want %u '%s')\n", line, src,
                pld_tok_name(L->t[0].kind), n_diags(L->p), d ? (unsigned)d->span.line : 0u,
                d ? (unsigned)d->span.col : 0u, d ? d->msg : "-", col, msg);
    CU_ASSERT(ok);
    lexed_free(L);
}
#define EXPECT_UNDERSCORE_ERROR(src, col, msg) expect_underscore_error_at((src), (col), (msg), __LINE__)

static void test_lex_number_underscore_errors(void)
{
    /* what Python rejects: '_' not between two digits (after 0x/0o/0b: not
     * before a digit); reported at the '_' */
    const char *follow = "('_' must be followed by a digit)";
    char m[128];
    snprintf(m, sizeof m, "invalid decimal literal %s", follow);
    EXPECT_UNDERSCORE_ERROR("1__0", 2, m);
    EXPECT_UNDERSCORE_ERROR("1_", 2, m);
    EXPECT_UNDERSCORE_ERROR("1_.5", 2, m);
    EXPECT_UNDERSCORE_ERROR("1.5_", 4, m);
    EXPECT_UNDERSCORE_ERROR("1e5_", 4, m);
    EXPECT_UNDERSCORE_ERROR("1_000__000", 6, m);
    EXPECT_UNDERSCORE_ERROR("1._5", 3, "invalid decimal literal ('_' must follow a digit)");
    snprintf(m, sizeof m, "invalid hexadecimal literal %s", follow);
    EXPECT_UNDERSCORE_ERROR("0x_", 3, m);
    EXPECT_UNDERSCORE_ERROR("0x__ff", 3, m);
    EXPECT_UNDERSCORE_ERROR("0xf_", 4, m);
    snprintf(m, sizeof m, "invalid octal literal %s", follow);
    EXPECT_UNDERSCORE_ERROR("0o_", 3, m);
    snprintf(m, sizeof m, "invalid binary literal %s", follow);
    EXPECT_UNDERSCORE_ERROR("0b1__0", 4, m);
    /* in context: the column is the '_' in the line */
    lexed_t *L = lex_all("x = 0x__1\n");
    CU_ASSERT_EQUAL(n_diags(L->p), 1);
    snprintf(m, sizeof m, "invalid hexadecimal literal %s", follow);
    EXPECT_DIAG(L->p, 0, 1, 7, m);
    lexed_free(L);
}

static void test_lex_too_large_int_is_reported_once(void)
{
    lexed_t *L = lex_all("x = 9223372036854775808\n");
    CU_ASSERT_EQUAL(n_diags(L->p), 1);
    EXPECT_DIAG(L->p, 0, 1, 5, "integer literal too large (limit 9223372036854775807)");
    CU_ASSERT_EQUAL(L->p->diags.head->span.len, 19);
    lexed_free(L);
}

/* ------------------------------------------------------------- bad input */

static void test_lex_invalid_character(void)
{
    const char *src = "x = 1\ny = $\n";
    lexed_t *L = lex_all(src);
    CU_ASSERT_EQUAL(n_diags(L->p), 1);
    EXPECT_DIAG(L->p, 0, 2, 5, "invalid character '$' in program text");
    EXPECT_KINDS(L, src, PLD_T_NAME, PLD_T_ASSIGN, PLD_T_INT, PLD_T_NEWLINE, PLD_T_NAME, PLD_T_ASSIGN, PLD_T_ERROR,
                 PLD_T_NEWLINE, PLD_T_EOF);
    lexed_free(L);

    L = lex_all("a ? b\n");
    EXPECT_DIAG(L->p, 0, 1, 3, "invalid character '?' in program text");
    lexed_free(L);
    L = lex_all("a = `b`\n");
    EXPECT_DIAG(L->p, 0, 1, 5, "invalid character '`' in program text");
    lexed_free(L);
    L = lex_all("!x\n");
    EXPECT_DIAG(L->p, 0, 1, 1, "invalid character '!' in program text");
    lexed_free(L);
    L = lex_all("a\x01\n");
    EXPECT_DIAG(L->p, 0, 1, 2, "invalid character byte 0x01 in program text");
    lexed_free(L);
}

static void test_lex_invalid_character_column_after_tab(void)
{
    /* columns expand tabs to 8 (GCC): "x =\t$" puts '$' in column 9 */
    lexed_t *L = lex_all("x =\t$\n");
    EXPECT_DIAG(L->p, 0, 1, 9, "invalid character '$' in program text");
    lexed_free(L);
}

static void test_lex_invalid_character_rendered(void)
{
    lexed_t *L = lex_all("x = 1\ny = $\n");
    pld_buf_t b;
    pld_buf_init(&b);
    pld_diag_render(&L->p->diags, NULL, &b);
    const char *want = "t.pld:2:5: error: invalid character '$' in program text\n"
                       "    2 | y = $\n"
                       "      |     ^\n";
    if (strcmp(pld_buf_str(&b), want) != 0)
        fprintf(stderr, "\nrendered:\n%s\nexpected:\n%s\n", pld_buf_str(&b), want);
    CU_ASSERT_STRING_EQUAL(pld_buf_str(&b), want);
    pld_buf_fini(&b);
    lexed_free(L);
}

static void test_lex_bracket_errors(void)
{
    lexed_t *L = lex_all("x = a)\n");
    EXPECT_DIAG(L->p, 0, 1, 6, "unmatched ')'");
    lexed_free(L);

    L = lex_all("x = (a,\n b]\n");
    EXPECT_DIAG(L->p, 0, 2, 3, "closing parenthesis ']' does not match '(' on line 1");
    lexed_free(L);

    L = lex_all("x = [1,\n  (2,\n");
    CU_ASSERT_EQUAL(n_diags(L->p), 1);
    EXPECT_DIAG(L->p, 0, 2, 3, "'(' was never closed");
    CU_ASSERT_EQUAL(L->t[L->n - 1].kind, PLD_T_EOF);
    lexed_free(L);
}

static void test_lex_open_bracket_tracking(void)
{
    const char *src = "f(a, [b\n";
    pld_program_t *p = pld_program_create("t.pld", src, strlen(src));
    pld_lexer_t *lx = pld_lex_create(p);
    CU_ASSERT_EQUAL(pld_lex_depth(lx), 0);
    pld_lex_next(lx); /* f */
    pld_lex_next(lx); /* ( */
    CU_ASSERT_EQUAL(pld_lex_depth(lx), 1);
    pld_span_t o = pld_lex_open_bracket(lx);
    CU_ASSERT_EQUAL(o.line, 1);
    CU_ASSERT_EQUAL(o.col, 2);
    pld_lex_next(lx); /* a */
    pld_lex_next(lx); /* , */
    pld_lex_next(lx); /* [ */
    CU_ASSERT_EQUAL(pld_lex_depth(lx), 2);
    CU_ASSERT_EQUAL(pld_lex_open_bracket(lx).col, 6);
    pld_lex_reset_brackets(lx);
    CU_ASSERT_EQUAL(pld_lex_depth(lx), 0);
    CU_ASSERT_EQUAL(pld_lex_open_bracket(lx).line, 0);
    pld_lex_destroy(lx);
    pld_program_destroy(p);
}

static void test_lex_eof_keeps_returning_eof(void)
{
    pld_program_t *p = pld_program_create("t.pld", "x", 1);
    pld_lexer_t *lx = pld_lex_create(p);
    CU_ASSERT_EQUAL(pld_lex_next(lx).kind, PLD_T_NAME);
    CU_ASSERT_EQUAL(pld_lex_next(lx).kind, PLD_T_NEWLINE);
    for (int i = 0; i < 5; i++)
        CU_ASSERT_EQUAL(pld_lex_next(lx).kind, PLD_T_EOF);
    pld_lex_destroy(lx);
    pld_program_destroy(p);
}

static void test_lex_capture_block(void)
{
    /* raw capture of a SubWorker body: dedented by its first line, blank lines kept,
     * stops at the first line indented at or below the header */
    const char *src = "def w(x):\n    import torch\n\n    if x:\n        raise ValueError(f'{x}')\ny = 1\n";
    pld_program_t *p = pld_program_create("t.pld", src, strlen(src));
    pld_lexer_t *lx = pld_lex_create(p);
    pld_token_t t;
    do
        t = pld_lex_next(lx);
    while (t.kind != PLD_T_COLON);
    pld_span_t sp;
    const char *raw = pld_lex_capture_block(lx, 0, &sp);
    CU_ASSERT_PTR_NOT_NULL_FATAL(raw);
    CU_ASSERT_STRING_EQUAL(raw, "import torch\n\nif x:\n    raise ValueError(f'{x}')\n");
    CU_ASSERT_EQUAL(sp.line, 2);
    CU_ASSERT_EQUAL(pld_lex_next(lx).kind, PLD_T_NEWLINE);
    t = pld_lex_next(lx);
    CU_ASSERT_EQUAL(t.kind, PLD_T_NAME);
    CU_ASSERT_EQUAL(t.span.line, 6);
    CU_ASSERT_EQUAL(n_diags(p), 0);
    pld_lex_destroy(lx);
    pld_program_destroy(p);
}

static void test_lex_capture_block_same_line(void)
{
    const char *src = "def w(x): pass\n";
    pld_program_t *p = pld_program_create("t.pld", src, strlen(src));
    pld_lexer_t *lx = pld_lex_create(p);
    pld_token_t t;
    do
        t = pld_lex_next(lx);
    while (t.kind != PLD_T_COLON);
    CU_ASSERT_PTR_NULL(pld_lex_capture_block(lx, 0, NULL));
    CU_ASSERT_EQUAL(pld_lex_next(lx).kind, PLD_T_PASS);
    pld_lex_destroy(lx);
    pld_program_destroy(p);
}

static CU_TestInfo lex_tests[] = {
    {"test_lex_simple_statement", test_lex_simple_statement},
    {"test_lex_operators", test_lex_operators},
    {"test_lex_longest_match", test_lex_longest_match},
    {"test_lex_augmented_assignments", test_lex_augmented_assignments},
    {"test_lex_keywords", test_lex_keywords},
    {"test_lex_soft_names", test_lex_soft_names},
    {"test_lex_names_are_interned", test_lex_names_are_interned},
    {"test_lex_unicode_identifier_and_column", test_lex_unicode_identifier_and_column},
    {"test_lex_token_names", test_lex_token_names},
    {"test_lex_indent_dedent", test_lex_indent_dedent},
    {"test_lex_eof_without_newline_closes_blocks", test_lex_eof_without_newline_closes_blocks},
    {"test_lex_blank_and_comment_lines_ignored", test_lex_blank_and_comment_lines_ignored},
    {"test_lex_tabs_to_eight_columns", test_lex_tabs_to_eight_columns},
    {"test_lex_line_indent", test_lex_line_indent},
    {"test_lex_dedent_mismatch_error", test_lex_dedent_mismatch_error},
    {"test_lex_implicit_joining_in_brackets", test_lex_implicit_joining_in_brackets},
    {"test_lex_comment_inside_brackets", test_lex_comment_inside_brackets},
    {"test_lex_backslash_continuation", test_lex_backslash_continuation},
    {"test_lex_crlf_line_ends", test_lex_crlf_line_ends},
    {"test_lex_lone_cr_line_ends", test_lex_lone_cr_line_ends},
    {"test_lex_byte_order_mark_skipped", test_lex_byte_order_mark_skipped},
    {"test_lex_empty_input", test_lex_empty_input},
    {"test_lex_comments_collected", test_lex_comments_collected},
    {"test_lex_hash_inside_string_is_not_comment", test_lex_hash_inside_string_is_not_comment},
    {"test_lex_string_quotes", test_lex_string_quotes},
    {"test_lex_string_escapes", test_lex_string_escapes},
    {"test_lex_string_prefixes", test_lex_string_prefixes},
    {"test_lex_string_triple_quoted", test_lex_string_triple_quoted},
    {"test_lex_string_adjacent_literals", test_lex_string_adjacent_literals},
    {"test_lex_string_errors", test_lex_string_errors},
    {"test_lex_integers", test_lex_integers},
    {"test_lex_floats", test_lex_floats},
    {"test_lex_number_boundaries", test_lex_number_boundaries},
    {"test_lex_number_underscore_errors", test_lex_number_underscore_errors},
    {"test_lex_number_errors", test_lex_number_errors},
    {"test_lex_too_large_int_is_reported_once", test_lex_too_large_int_is_reported_once},
    {"test_lex_invalid_character", test_lex_invalid_character},
    {"test_lex_invalid_character_column_after_tab", test_lex_invalid_character_column_after_tab},
    {"test_lex_invalid_character_rendered", test_lex_invalid_character_rendered},
    {"test_lex_bracket_errors", test_lex_bracket_errors},
    {"test_lex_open_bracket_tracking", test_lex_open_bracket_tracking},
    {"test_lex_eof_keeps_returning_eof", test_lex_eof_keeps_returning_eof},
    {"test_lex_capture_block", test_lex_capture_block},
    {"test_lex_capture_block_same_line", test_lex_capture_block_same_line},
    CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
    {"lex", NULL, NULL, NULL, NULL, lex_tests},
    CU_SUITE_INFO_NULL,
};

int main(void)
{
    return pld_test_main(suites);
}
