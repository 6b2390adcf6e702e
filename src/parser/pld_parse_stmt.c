/* pld_parse_stmt.c - statements: simple statements (pass, break, continue,
 * return, assignments, expressions), if/elif/else, while, for, with, suites and
 * blocks, and panic-mode recovery (pld_parse_stmt_sync).
 * Grammar: docs/ir_text_grammar.md §2. Each parse function names its production. */
#include "pld_parse_int.h"
#include "pld_mem.h"

#include <string.h>


static int parse_block(pld_parser_t *ps, pld_block_t *out);
static pld_stmt_t *parse_stmt(pld_parser_t *ps, pld_parse_vec_t *extra);

static pld_stmt_t *mk_stmt(pld_parser_t *ps, pld_stmt_kind_t k, pld_span_t sp)
{
    pld_stmt_t *s = pld_ast_stmt(ps->p, k, sp);
    if (!s) {
        ps->oom = 1;
        ps->p->diags.oom = 1;
    }
    return s;
}

/* Skips to the start of the next statement (panic-mode recovery). */
void pld_parse_stmt_sync(pld_parser_t *ps)
{
    while (!at(ps, PLD_T_EOF)) {
        if (at(ps, PLD_T_NEWLINE)) {
            advance(ps);
            break;
        }
        if (at(ps, PLD_T_DEDENT))
            break;
        if (ps->tok.kind == PLD_T_ERROR && pld_lex_depth(ps->lx) == 0 && 0)
            break;
        advance(ps);
    }
    /* an indented block after a broken header: skip it whole, together with the
     * clauses that belong to the broken statement (except/finally of a try) */
    for (;;) {
        if (at(ps, PLD_T_INDENT)) {
            int level = 0;
            do {
                if (at(ps, PLD_T_INDENT))
                    level++;
                else if (at(ps, PLD_T_DEDENT))
                    level--;
                advance(ps);
            } while (level > 0 && !at(ps, PLD_T_EOF));
        }
        if (!at(ps, PLD_T_EXCEPT) && !at(ps, PLD_T_FINALLY))
            break;
        while (!at(ps, PLD_T_EOF) && !at(ps, PLD_T_NEWLINE))
            advance(ps);
        accept(ps, PLD_T_NEWLINE);
    }
    ps->panic = 0;
}

static int valid_target(const pld_expr_t *e)
{
    switch (e->kind) {
    case PLD_EX_NAME:
    case PLD_EX_SUBSCRIPT:
        return 1;
    case PLD_EX_TUPLE:
    case PLD_EX_LIST:
        for (int i = 0; i < e->u.seq.n; i++)
            if (!valid_target(e->u.seq.items[i]))
                return 0;
        return e->u.seq.n > 0;
    default:
        return 0;
    }
}

static const char *unsupported_stmt(pld_tok_kind_t k)
{
    switch (k) {
    case PLD_T_DEL: return "'del'";
    case PLD_T_GLOBAL: return "'global'";
    case PLD_T_NONLOCAL: return "'nonlocal'";
    case PLD_T_RAISE: return "'raise'";
    case PLD_T_ASSERT: return "'assert'";
    case PLD_T_IMPORT: return "'import' inside a function";
    case PLD_T_FROM: return "'from ... import' inside a function";
    case PLD_T_TRY: return "'try'";
    case PLD_T_CLASS: return "nested 'class'";
    case PLD_T_DEF: return "nested 'def'";
    case PLD_T_ASYNC: return "'async'";
    case PLD_T_AT: return "decorators inside a function";
    default: return NULL;
    }
}

/* small_stmt ::= pass | break | continue | return [testlist] | assign | expr */
static pld_stmt_t *parse_small_stmt(pld_parser_t *ps)
{
    pld_span_t start = ps->tok.span;
    pld_stmt_t *s;
    const char *un = unsupported_stmt(ps->tok.kind);
    if (un) {
        pld_parse_error_here(ps, "%s statements are not supported in pldrun programs", un);
        return NULL;
    }
    switch (ps->tok.kind) {
    case PLD_T_PASS:
        advance(ps);
        return mk_stmt(ps, PLD_ST_PASS, start);
    case PLD_T_BREAK:
        advance(ps);
        return mk_stmt(ps, PLD_ST_BREAK, start);
    case PLD_T_CONTINUE:
        advance(ps);
        return mk_stmt(ps, PLD_ST_CONTINUE, start);
    case PLD_T_RETURN: {
        advance(ps);
        pld_parse_vec_t vals = {0};
        if (!at(ps, PLD_T_NEWLINE) && !at(ps, PLD_T_SEMI) && !at(ps, PLD_T_EOF)) {
            pld_expr_t *e = pld_parse_expr_testlist(ps);
            if (!e)
                return NULL;
            if (e->kind == PLD_EX_TUPLE && e->u.seq.items && e->span.off == e->u.seq.items[0]->span.off) {
                /* `return a, b` (an unparenthesised tuple): keep the values */
                for (int i = 0; i < e->u.seq.n; i++)
                    pld_parse_vec_push(ps, &vals, e->u.seq.items[i]);
            } else {
                pld_parse_vec_push(ps, &vals, e);
            }
        }
        s = mk_stmt(ps, PLD_ST_RETURN, span_from(ps, start));
        int n = vals.n;
        pld_expr_t **v = (pld_expr_t **)pld_parse_vec_finish(ps, &vals);
        if (s) {
            s->u.ret.vals = v;
            s->u.ret.n = n;
        }
        return s;
    }
    default:
        break;
    }
    pld_expr_t *lhs = pld_parse_expr_testlist(ps);
    if (!lhs)
        return NULL;
    if (at(ps, PLD_T_COLON)) {
        /* annotated assignment: NAME ':' ann '=' value */
        if (lhs->kind != PLD_EX_NAME) {
            pld_parse_error_at(ps, lhs->span, "only a single name can be annotated%s", "");
            return NULL;
        }
        advance(ps);
        pld_expr_t *ann = pld_parse_expr_test(ps);
        if (!ann)
            return NULL;
        if (!at(ps, PLD_T_ASSIGN)) {
            pld_parse_error_here(ps, "annotated assignment needs a value ('name: type = value')%s", "");
            return NULL;
        }
        advance(ps);
        pld_expr_t *val = pld_parse_expr_testlist(ps);
        if (!val)
            return NULL;
        s = mk_stmt(ps, PLD_ST_ASSIGN, span_from(ps, start));
        if (s) {
            s->u.assign.target = lhs;
            s->u.assign.ann = ann;
            s->u.assign.value = val;
        }
        return s;
    }
    if (at(ps, PLD_T_ASSIGN)) {
        if (!valid_target(lhs)) {
            pld_parse_error_at(ps, lhs->span, "cannot assign to this expression%s", "");
            return NULL;
        }
        advance(ps);
        pld_expr_t *val = pld_parse_expr_testlist(ps);
        if (!val)
            return NULL;
        if (at(ps, PLD_T_ASSIGN)) {
            pld_parse_error_here(ps, "chained assignment (a = b = c) is not supported%s", "");
            return NULL;
        }
        s = mk_stmt(ps, PLD_ST_ASSIGN, span_from(ps, start));
        if (s) {
            s->u.assign.target = lhs;
            s->u.assign.value = val;
        }
        return s;
    }
    if (at(ps, PLD_T_AUGASSIGN)) {
        pld_parse_error_here(ps, "augmented assignment is not supported; write 'x = x + ...'%s", "");
        return NULL;
    }
    s = mk_stmt(ps, PLD_ST_EXPR, span_from(ps, start));
    if (s)
        s->u.expr = lhs;
    return s;
}

static int is_docstring(const pld_stmt_t *s)
{
    return s && s->kind == PLD_ST_EXPR && s->u.expr->kind == PLD_EX_STR;
}

/* simple_stmt ::= small_stmt { ';' small_stmt } [';'] NEWLINE.
 * Pushes the statements into out (docstrings are dropped). Returns 0 on error. */
int pld_parse_stmt_simple(pld_parser_t *ps, pld_parse_vec_t *out)
{
    pld_comment_t *lead = pld_lex_take_comments(ps->lx, ps->tok.span.line);
    int first_index = out->n;
    for (;;) {
        pld_stmt_t *s = parse_small_stmt(ps);
        if (!s)
            return 0;
        if (!is_docstring(s))
            pld_parse_vec_push(ps, out, s);
        if (!accept(ps, PLD_T_SEMI))
            break;
        if (at(ps, PLD_T_NEWLINE))
            break;
    }
    uint32_t nl_line = ps->tok.span.line;
    if (!at(ps, PLD_T_EOF) && !pld_parse_expect(ps, PLD_T_NEWLINE, "end of statement"))
        return 0;
    pld_comment_t *trail = pld_lex_take_comments(ps->lx, nl_line + 1);
    if (out->n > first_index) {
        pld_stmt_t *s = out->v[first_index];
        /* leading comments, then the trailing one (as PyPTO's printer moves it above) */
        pld_comment_t **pp = &s->comments;
        *pp = lead;
        while (*pp)
            pp = &(*pp)->next;
        *pp = trail;
    }
    return 1;
}

/* suite ::= NEWLINE INDENT stmt+ DEDENT | simple_stmt */
int pld_parse_stmt_suite(pld_parser_t *ps, pld_block_t *out)
{
    if (!pld_parse_expect(ps, PLD_T_COLON, "':'"))
        return 0;
    if (!at(ps, PLD_T_NEWLINE)) {
        pld_parse_vec_t v = {0};
        if (!pld_parse_stmt_simple(ps, &v)) {
            pld_mem_free(v.v);
            return 0;
        }
        out->n = v.n;
        out->stmts = (pld_stmt_t **)pld_parse_vec_finish(ps, &v);
        return 1;
    }
    advance(ps);
    if (!at(ps, PLD_T_INDENT)) {
        pld_parse_expected(ps, "an indented block");
        return 0;
    }
    return parse_block(ps, out);
}

/* block ::= INDENT stmt+ DEDENT (current token is INDENT) */
static int parse_block(pld_parser_t *ps, pld_block_t *out)
{
    advance(ps); /* INDENT */
    if (!pld_parse_enter(ps))
        return 0;
    pld_parse_vec_t v = {0};
    while (!at(ps, PLD_T_DEDENT) && !at(ps, PLD_T_EOF)) {
        if (ps->oom)
            break;
        if (at(ps, PLD_T_INDENT)) {
            /* report, then read the over-indented lines as a block and drop them */
            pld_parse_error_here(ps, "unexpected indent%s", "");
            pld_block_t junk;
            parse_block(ps, &junk);
            ps->panic = 0;
            continue;
        }
        int before = v.n;
        pld_stmt_t *s = parse_stmt(ps, &v);
        if (s)
            pld_parse_vec_push(ps, &v, s);
        else if (ps->panic)
            pld_parse_stmt_sync(ps);
        (void)before;
    }
    accept(ps, PLD_T_DEDENT);
    leave(ps);
    out->n = v.n;
    out->stmts = (pld_stmt_t **)pld_parse_vec_finish(ps, &v);
    return 1;
}

/* if_stmt ::= 'if' test suite { 'elif' test suite } [ 'else' suite ] */
static pld_stmt_t *parse_if(pld_parser_t *ps)
{
    pld_span_t start = ps->tok.span;
    advance(ps); /* if / elif */
    pld_expr_t *cond = pld_parse_expr_test(ps);
    if (!cond)
        return NULL;
    pld_stmt_t *s = mk_stmt(ps, PLD_ST_IF, start);
    if (!s)
        return NULL;
    s->u.if_.cond = cond;
    if (!pld_parse_stmt_suite(ps, &s->u.if_.then))
        return NULL;
    if (at(ps, PLD_T_ELIF)) {
        if (!pld_parse_enter(ps))
            return NULL;
        pld_stmt_t *inner = parse_if(ps);
        leave(ps);
        if (!inner)
            return NULL;
        pld_stmt_t **one = pld_parse_alloc(ps, sizeof *one);
        if (!one)
            return NULL;
        one[0] = inner;
        s->u.if_.els.stmts = one;
        s->u.if_.els.n = 1;
        s->u.if_.els_is_elif = 1;
    } else if (at(ps, PLD_T_ELSE)) {
        advance(ps);
        if (!pld_parse_stmt_suite(ps, &s->u.if_.els))
            return NULL;
    }
    return s;
}

/* Consumes leading comments and parses one statement. Compound statements are
 * returned; simple statements are pushed into `extra` (NULL is returned). */
static pld_stmt_t *parse_stmt(pld_parser_t *ps, pld_parse_vec_t *extra)
{
    pld_span_t start = ps->tok.span;
    pld_stmt_t *s = NULL;
    switch (ps->tok.kind) {
    case PLD_T_IF: {
        pld_comment_t *c = pld_lex_take_comments(ps->lx, start.line);
        s = parse_if(ps);
        if (s)
            s->comments = c;
        return s;
    }
    case PLD_T_WHILE: {
        pld_comment_t *c = pld_lex_take_comments(ps->lx, start.line);
        advance(ps);
        pld_expr_t *cond = pld_parse_expr_test(ps);
        if (!cond)
            return NULL;
        s = mk_stmt(ps, PLD_ST_WHILE, start);
        if (!s)
            return NULL;
        s->u.while_.cond = cond;
        if (!pld_parse_stmt_suite(ps, &s->u.while_.body))
            return NULL;
        s->comments = c;
        if (at(ps, PLD_T_ELSE)) {
            pld_parse_error_here(ps, "'while ... else' is not supported%s", "");
            return NULL;
        }
        return s;
    }
    case PLD_T_FOR: {
        pld_comment_t *c = pld_lex_take_comments(ps->lx, start.line);
        advance(ps);
        pld_expr_t *target = pld_parse_expr_targets(ps);
        if (!target)
            return NULL;
        if (!valid_target(target) || target->kind == PLD_EX_SUBSCRIPT) {
            pld_parse_error_at(ps, target->span, "invalid loop target; expected a name or a tuple of names%s", "");
            return NULL;
        }
        if (!pld_parse_expect(ps, PLD_T_IN, "'in'"))
            return NULL;
        pld_expr_t *iter = pld_parse_expr_testlist(ps);
        if (!iter)
            return NULL;
        s = mk_stmt(ps, PLD_ST_FOR, start);
        if (!s)
            return NULL;
        s->u.for_.target = target;
        s->u.for_.iter = iter;
        s->comments = c;
        if (!pld_parse_stmt_suite(ps, &s->u.for_.body))
            return NULL;
        if (at(ps, PLD_T_ELSE)) {
            pld_parse_error_here(ps, "'for ... else' is not supported%s", "");
            return NULL;
        }
        return s;
    }
    case PLD_T_WITH: {
        pld_comment_t *c = pld_lex_take_comments(ps->lx, start.line);
        advance(ps);
        pld_expr_t *item = pld_parse_expr_test(ps);
        if (!item)
            return NULL;
        s = mk_stmt(ps, PLD_ST_WITH, start);
        if (!s)
            return NULL;
        s->u.with.item = item;
        s->comments = c;
        if (accept(ps, PLD_T_AS)) {
            if (!at(ps, PLD_T_NAME)) {
                pld_parse_expected(ps, "a name after 'as'");
                return NULL;
            }
            s->u.with.as_name = ps->tok.text;
            s->u.with.as_span = ps->tok.span;
            advance(ps);
        }
        if (at(ps, PLD_T_COMMA)) {
            pld_parse_error_here(ps, "only one context manager per 'with' statement is supported%s", "");
            return NULL;
        }
        if (!pld_parse_stmt_suite(ps, &s->u.with.body))
            return NULL;
        return s;
    }
    case PLD_T_ELSE:
    case PLD_T_ELIF:
        pld_parse_error_here(ps, "'%s' without a matching 'if'", ps->tok.kind == PLD_T_ELSE ? "else" : "elif");
        return NULL;
    default:
        if (!pld_parse_stmt_simple(ps, extra))
            return NULL;
        return NULL;
    }
}

