/* pld_parse_int.h - internals shared by the parser's files. Not a public header.
 *
 *   pld_parse.c       parser state, token plumbing, errors, allocation; the
 *                     module level (imports, constants, the @pl.program class,
 *                     functions and their signatures) and the entry points
 *   pld_parse_expr.c  expressions (test, operators, calls, subscripts, literals)
 *   pld_parse_stmt.c  statements (simple statements, if/while/for/with, suites,
 *                     blocks) and panic-mode recovery
 *
 * Grammar: docs/ir_text_grammar.md §2. Each parse function names its production. */
#ifndef PLD_PARSE_INT_H
#define PLD_PARSE_INT_H

#include "pld_lex.h"
#include "pld_parse.h"

#include <stddef.h>
#include <stdint.h>

typedef struct pld_parser {
    pld_program_t *p;
    pld_lexer_t *lx;
    pld_token_t tok;      /* current token */
    pld_token_t next;     /* one token of lookahead (valid when has_next) */
    int has_next;
    uint32_t prev_end;    /* end offset of the last consumed token */
    int panic;            /* an error was reported; skip to the next statement */
    int depth;            /* expression / statement nesting */
    int allow_cond;       /* parsing a module constant: `a if c else b` is an expression */
    int oom;
} pld_parser_t;

/* A growable vector of pointers, copied into the arena when done. */
typedef struct pld_parse_vec {
    void **v;
    int n, cap;
} pld_parse_vec_t;

/* ---- token plumbing (inline: called on every token) ---- */

static inline void advance(pld_parser_t *ps)
{
    ps->prev_end = ps->tok.span.off + ps->tok.span.len;
    if (ps->has_next) {
        ps->tok = ps->next;
        ps->has_next = 0;
    } else {
        ps->tok = pld_lex_next(ps->lx);
    }
}

static inline pld_token_t *peek2(pld_parser_t *ps)
{
    if (!ps->has_next) {
        ps->next = pld_lex_next(ps->lx);
        ps->has_next = 1;
    }
    return &ps->next;
}

static inline int at(pld_parser_t *ps, pld_tok_kind_t k)
{
    return ps->tok.kind == k;
}

static inline int accept(pld_parser_t *ps, pld_tok_kind_t k)
{
    if (ps->tok.kind != k)
        return 0;
    advance(ps);
    return 1;
}

/* Span from `start` to the end of the last consumed token. */
static inline pld_span_t span_from(pld_parser_t *ps, pld_span_t start)
{
    pld_span_t s = start;
    if (ps->prev_end > start.off)
        s.len = ps->prev_end - start.off;
    return s;
}

static inline void leave(pld_parser_t *ps)
{
    ps->depth--;
}

/* ---- errors, allocation, nesting (pld_parse.c) ---- */

/* Reports an error at the current token (once per statement: sets panic). An
 * error on a later line than a bracket that is never closed is reported as
 * that bracket instead. `fmt` takes one %s argument `a`. */
void pld_parse_error_here(pld_parser_t *ps, const char *fmt, const char *a);
/* Reports an error at `sp` (once per statement: sets panic). */
void pld_parse_error_at(pld_parser_t *ps, pld_span_t sp, const char *fmt, const char *a);
/* Reports "expected WHAT, found TOKEN" at the current token. */
void pld_parse_expected(pld_parser_t *ps, const char *what);
/* Consumes a token of kind k, or reports "expected WHAT" (the kind's name when
 * what is NULL) and returns 0. */
int pld_parse_expect(pld_parser_t *ps, pld_tok_kind_t k, const char *what);
/* Arena allocation of the program; NULL (and ps->oom set) when out of memory. */
void *pld_parse_alloc(pld_parser_t *ps, size_t n);
/* A new expression node of height 1; NULL (and ps->oom set) when out of memory. */
pld_expr_t *pld_parse_mk(pld_parser_t *ps, pld_expr_kind_t k, pld_span_t sp);
/* Raises e's height above child's; reports a tree taller than
 * PLD_PARSE_MAX_HEIGHT and returns NULL then (or when e is NULL). */
pld_expr_t *pld_parse_grow(pld_parser_t *ps, pld_expr_t *e, const pld_expr_t *child);
/* Appends x (heap storage; sets ps->oom on failure). */
void pld_parse_vec_push(pld_parser_t *ps, pld_parse_vec_t *vv, void *x);
/* Copies the items into the arena (NULL when empty) and frees the heap storage. */
void **pld_parse_vec_finish(pld_parser_t *ps, pld_parse_vec_t *vv);
/* a's comments followed by b's (either may be NULL); relinks, no copy. */
pld_comment_t *pld_parse_comments_join(pld_comment_t *a, pld_comment_t *b);
/* Stops reading after a limit error: from now on the lexer returns only EOF. */
void pld_parse_stop(pld_parser_t *ps);
/* Enters one nesting level; past PLD_PARSE_MAX_DEPTH reports, stops reading
 * and returns 0. Pair with leave(). */
int pld_parse_enter(pld_parser_t *ps);

/* ---- expressions (pld_parse_expr.c); each returns NULL after an error ---- */

/* test ::= or_test [ 'if' or_test 'else' test ]   (the conditional only in a
 * module constant; lambdas are rejected) */
pld_expr_t *pld_parse_expr_test(pld_parser_t *ps);
/* testlist ::= test { ',' test } [','] -> a TUPLE when there is a comma */
pld_expr_t *pld_parse_expr_testlist(pld_parser_t *ps);
/* target_list ::= target { ',' target } [','] ; target ::= primary */
pld_expr_t *pld_parse_expr_targets(pld_parser_t *ps);
/* primary ::= atom { '.' NAME | '(' arglist ')' | '[' subscripts ']' } */
pld_expr_t *pld_parse_expr_primary(pld_parser_t *ps);

/* ---- statements (pld_parse_stmt.c) ---- */

/* Skips to the start of the next statement (panic-mode recovery) and clears panic. */
void pld_parse_stmt_sync(pld_parser_t *ps);
/* simple_stmt ::= small_stmt { ';' small_stmt } [';'] NEWLINE. Pushes the
 * statements into out (docstrings are dropped). Returns 0 on error. */
int pld_parse_stmt_simple(pld_parser_t *ps, pld_parse_vec_t *out);
/* suite ::= ':' ( NEWLINE INDENT stmt+ DEDENT | simple_stmt ). Returns 0 on error. */
int pld_parse_stmt_suite(pld_parser_t *ps, pld_block_t *out);

#endif
