/* pld_parse.c - recursive-descent parser for the Python-syntax IR text.
 * Grammar: docs/ir_text_grammar.md §2 (module, decorators, statements,
 * expressions). Each parse function names its production. */
#include "pld_parse.h"
#include "pld_lex.h"
#include "pld_mem.h"

#include <stdio.h>
#include <string.h>

typedef struct parser {
    pld_program_t *p;
    pld_lexer_t *lx;
    pld_token_t tok;      /* current token */
    pld_token_t next;     /* one token of lookahead (valid when has_next) */
    int has_next;
    uint32_t prev_end;    /* end offset of the last consumed token */
    int panic;            /* an error was reported; skip to the next statement */
    int depth;            /* expression / statement nesting */
    int oom;
} parser_t;

/* ------------------------------------------------------------------ helpers */

static void advance(parser_t *ps)
{
    ps->prev_end = ps->tok.span.off + ps->tok.span.len;
    if (ps->has_next) {
        ps->tok = ps->next;
        ps->has_next = 0;
    } else {
        ps->tok = pld_lex_next(ps->lx);
    }
}

static pld_token_t *peek2(parser_t *ps)
{
    if (!ps->has_next) {
        ps->next = pld_lex_next(ps->lx);
        ps->has_next = 1;
    }
    return &ps->next;
}

static int at(parser_t *ps, pld_tok_kind_t k)
{
    return ps->tok.kind == k;
}

static int accept(parser_t *ps, pld_tok_kind_t k)
{
    if (ps->tok.kind != k)
        return 0;
    advance(ps);
    return 1;
}

/* Span from `start` to the end of the last consumed token. */
static pld_span_t span_from(parser_t *ps, pld_span_t start)
{
    pld_span_t s = start;
    if (ps->prev_end > start.off)
        s.len = ps->prev_end - start.off;
    return s;
}

static void describe_tok(const pld_token_t *t, char *buf, size_t n)
{
    switch (t->kind) {
    case PLD_T_NAME:
        snprintf(buf, n, "name '%s'", t->text ? t->text : "?");
        break;
    case PLD_T_INT:
        snprintf(buf, n, "integer %lld", (long long)t->ival);
        break;
    case PLD_T_FLOAT:
        snprintf(buf, n, "float literal");
        break;
    case PLD_T_STRING:
        snprintf(buf, n, "string literal");
        break;
    default:
        if (t->kind >= PLD_T_FALSE && t->kind <= PLD_T_YIELD)
            snprintf(buf, n, "keyword '%s'", pld_tok_name(t->kind));
        else
            snprintf(buf, n, "%s", pld_tok_name(t->kind));
        break;
    }
}

/* Reports an error at the current token. When the token is on a later line
 * than a still-open bracket and that bracket is never closed in the rest of the
 * text, the error is the missing bracket: it is reported there instead, as
 * Python does. A bracket that is closed later (a call split over lines) leaves
 * the error at the token, and recovery skips to the end of the statement. */
static void error_here(parser_t *ps, const char *fmt, const char *a)
{
    if (ps->panic)
        return;
    ps->panic = 1;
    if (ps->tok.kind == PLD_T_ERROR || pld_lex_stopped(ps->lx))
        return; /* the lexer already reported it */
    if (pld_lex_depth(ps->lx) > 0) {
        pld_span_t o = pld_lex_open_bracket(ps->lx);
        if (o.line && ps->tok.span.line > o.line && pld_lex_give_up_brackets(ps->lx, &o)) {
            char m[2] = {ps->p->src[o.off], 0};
            pld_diag_add(&ps->p->diags, PLD_SEV_ERROR, o, "'%s' was never closed", m);
            return;
        }
    }
    pld_diag_add(&ps->p->diags, PLD_SEV_ERROR, ps->tok.span, fmt, a);
}

static void error_at(parser_t *ps, pld_span_t sp, const char *fmt, const char *a)
{
    if (ps->panic)
        return;
    ps->panic = 1;
    pld_diag_add(&ps->p->diags, PLD_SEV_ERROR, sp, fmt, a);
}

static void expected(parser_t *ps, const char *what)
{
    char found[96], m[200];
    describe_tok(&ps->tok, found, sizeof found);
    if (ps->tok.kind == PLD_T_INDENT)
        snprintf(m, sizeof m, "unexpected indent (expected %s)", what);
    else
        snprintf(m, sizeof m, "expected %s, found %s", what, found);
    error_here(ps, "%s", m);
}

static int expect(parser_t *ps, pld_tok_kind_t k, const char *what)
{
    if (accept(ps, k))
        return 1;
    expected(ps, what ? what : pld_tok_name(k));
    return 0;
}

static void *alloc(parser_t *ps, size_t n)
{
    void *v = pld_arena_alloc(&ps->p->arena, n);
    if (!v) {
        ps->oom = 1;
        ps->p->diags.oom = 1;
    }
    return v;
}

static pld_expr_t *mk(parser_t *ps, pld_expr_kind_t k, pld_span_t sp)
{
    pld_expr_t *e = pld_ast_expr(ps->p, k, sp);
    if (!e) {
        ps->oom = 1;
        ps->p->diags.oom = 1;
        return NULL;
    }
    e->height = 1;
    return e;
}

/* Sets e's height from a child's; reports a tree that grew too tall. */
static pld_expr_t *grow(parser_t *ps, pld_expr_t *e, const pld_expr_t *child)
{
    if (!e)
        return NULL;
    if (child && child->height + 1 > e->height)
        e->height = child->height + 1;
    if (e->height > PLD_PARSE_MAX_HEIGHT) {
        error_at(ps, e->span, "expression nested too deeply (limit %s levels); split it into several statements",
                 "1000");
        return NULL;
    }
    return e;
}

/* A growable vector of pointers, copied into the arena when done. */
typedef struct vec {
    void **v;
    int n, cap;
} vec_t;

static void vec_push(parser_t *ps, vec_t *vv, void *x)
{
    if (vv->n == vv->cap) {
        int cap = vv->cap ? vv->cap * 2 : 8;
        void **nv = pld_mem_realloc(vv->v, (size_t)cap * sizeof *nv);
        if (!nv) {
            ps->oom = 1;
            ps->p->diags.oom = 1;
            return;
        }
        vv->v = nv;
        vv->cap = cap;
    }
    vv->v[vv->n++] = x;
}

static void **vec_finish(parser_t *ps, vec_t *vv)
{
    void **out = NULL;
    if (vv->n > 0) {
        out = alloc(ps, (size_t)vv->n * sizeof *out);
        if (out)
            memcpy(out, vv->v, (size_t)vv->n * sizeof *out);
    }
    pld_mem_free(vv->v);
    vv->v = NULL;
    vv->cap = 0;
    return out;
}

/* a's comments followed by b's (either may be NULL); relinks, no copy. */
static pld_comment_t *comments_join(pld_comment_t *a, pld_comment_t *b)
{
    if (!a)
        return b;
    pld_comment_t *t = a;
    while (t->next)
        t = t->next;
    t->next = b;
    return a;
}

/* Stops reading after a limit error: the lexer returns only EOF from now on
 * (and so does the lookahead), every enclosing production unwinds, and no
 * error follows from the text that was not read. */
static void stop(parser_t *ps)
{
    pld_lex_stop(ps->lx);
    if (ps->has_next)
        ps->next = pld_lex_next(ps->lx);
}

static int enter(parser_t *ps)
{
    if (++ps->depth > PLD_PARSE_MAX_DEPTH) {
        error_here(ps, "program nested too deeply (limit %s levels)", "100");
        stop(ps);
        return 0;
    }
    return 1;
}

static void leave(parser_t *ps)
{
    ps->depth--;
}

/* ---------------------------------------------------------------- expressions */

static pld_expr_t *parse_test(parser_t *ps);
static pld_expr_t *parse_expr_bor(parser_t *ps);

/* Rejects Python constructs the DSL does not have, reporting at the current token. */
static int reject_unsupported_expr(parser_t *ps)
{
    if (at(ps, PLD_T_LAMBDA)) {
        error_here(ps, "lambda expressions are not supported%s", "");
        return 1;
    }
    if (at(ps, PLD_T_YIELD)) {
        error_here(ps, "'yield' is not supported; use pl.yield_(...)%s", "");
        return 1;
    }
    if (at(ps, PLD_T_AWAIT)) {
        error_here(ps, "'await' is not supported%s", "");
        return 1;
    }
    return 0;
}

/* arglist ::= arg { ',' arg } [','] ; arg ::= expr | NAME '=' expr */
static pld_expr_t *parse_call(parser_t *ps, pld_expr_t *fn)
{
    pld_span_t start = fn->span;
    advance(ps); /* '(' */
    pld_arg_t *args = NULL;
    int n = 0, cap = 0, seen_kw = 0;
    while (!at(ps, PLD_T_RPAREN)) {
        if (at(ps, PLD_T_STAR) || at(ps, PLD_T_DSTAR)) {
            error_here(ps, "argument unpacking (*args / **kwargs) is not supported%s", "");
            return NULL;
        }
        pld_arg_t a;
        memset(&a, 0, sizeof a);
        if (at(ps, PLD_T_NAME) && peek2(ps)->kind == PLD_T_ASSIGN) {
            a.kw = ps->tok.text;
            a.kw_span = ps->tok.span;
            for (int i = 0; i < n; i++)
                if (args[i].kw == a.kw) {
                    error_here(ps, "keyword argument '%s' repeated", a.kw);
                    return NULL;
                }
            advance(ps);
            advance(ps);
            seen_kw = 1;
        } else if (seen_kw) {
            error_here(ps, "positional argument follows keyword argument%s", "");
            return NULL;
        }
        a.value = parse_test(ps);
        if (!a.value)
            return NULL;
        if (at(ps, PLD_T_FOR)) {
            error_here(ps, "comprehensions are not supported%s", "");
            return NULL;
        }
        if (n == cap) {
            int nc = cap ? cap * 2 : 4;
            pld_arg_t *na = alloc(ps, (size_t)nc * sizeof *na);
            if (!na)
                return NULL;
            if (n)
                memcpy(na, args, (size_t)n * sizeof *na);
            args = na;
            cap = nc;
        }
        args[n++] = a;
        if (!accept(ps, PLD_T_COMMA))
            break;
    }
    if (!expect(ps, PLD_T_RPAREN, "',' or ')' in call arguments"))
        return NULL;
    pld_expr_t *e = mk(ps, PLD_EX_CALL, span_from(ps, start));
    if (!e)
        return NULL;
    e->u.call.fn = fn;
    e->u.call.args = args;
    e->u.call.nargs = n;
    for (int i = 0; i < n; i++)
        if (!grow(ps, e, args[i].value))
            return NULL;
    return grow(ps, e, fn);
}

/* subscript ::= expr | [expr] ':' [expr] [':' [expr]] */
static pld_expr_t *parse_subscript_item(parser_t *ps)
{
    pld_span_t start = ps->tok.span;
    pld_expr_t *lo = NULL, *hi = NULL, *step = NULL;
    if (!at(ps, PLD_T_COLON)) {
        lo = parse_test(ps);
        if (!lo)
            return NULL;
        if (!at(ps, PLD_T_COLON))
            return lo;
    }
    advance(ps); /* ':' */
    if (!at(ps, PLD_T_COLON) && !at(ps, PLD_T_COMMA) && !at(ps, PLD_T_RBRACK)) {
        hi = parse_test(ps);
        if (!hi)
            return NULL;
    }
    if (accept(ps, PLD_T_COLON)) {
        if (!at(ps, PLD_T_COMMA) && !at(ps, PLD_T_RBRACK)) {
            step = parse_test(ps);
            if (!step)
                return NULL;
        }
    }
    pld_expr_t *e = mk(ps, PLD_EX_SLICE, span_from(ps, start));
    if (!e)
        return NULL;
    e->u.slice.lo = lo;
    e->u.slice.hi = hi;
    e->u.slice.step = step;
    return e;
}

static pld_expr_t *parse_subscript(parser_t *ps, pld_expr_t *obj)
{
    advance(ps); /* '[' */
    vec_t items = {0};
    while (!at(ps, PLD_T_RBRACK)) {
        pld_expr_t *it = parse_subscript_item(ps);
        if (!it) {
            pld_mem_free(items.v);
            return NULL;
        }
        vec_push(ps, &items, it);
        if (!accept(ps, PLD_T_COMMA))
            break;
    }
    if (items.n == 0 && at(ps, PLD_T_RBRACK)) {
        pld_mem_free(items.v);
        error_here(ps, "empty subscript%s", "");
        return NULL;
    }
    if (!expect(ps, PLD_T_RBRACK, "',' or ']' in subscript")) {
        pld_mem_free(items.v);
        return NULL;
    }
    pld_expr_t *e = mk(ps, PLD_EX_SUBSCRIPT, span_from(ps, obj->span));
    int n = items.n;
    pld_expr_t **it = (pld_expr_t **)vec_finish(ps, &items);
    if (!e)
        return NULL;
    e->u.sub.obj = obj;
    e->u.sub.items = it;
    e->u.sub.n = n;
    for (int i = 0; i < n; i++)
        if (!grow(ps, e, it ? it[i] : NULL))
            return NULL;
    return grow(ps, e, obj);
}

/* '(' / '[' sequence: items separated by commas; returns TUPLE/LIST or the
 * parenthesised expression itself. */
static pld_expr_t *parse_seq(parser_t *ps, pld_tok_kind_t close, pld_expr_kind_t kind)
{
    pld_span_t start = ps->tok.span;
    advance(ps);
    vec_t items = {0};
    int commas = 0;
    while (!at(ps, close)) {
        pld_expr_t *it = parse_test(ps);
        if (!it) {
            pld_mem_free(items.v);
            return NULL;
        }
        if (at(ps, PLD_T_FOR)) {
            pld_mem_free(items.v);
            error_here(ps, "comprehensions are not supported%s", "");
            return NULL;
        }
        vec_push(ps, &items, it);
        if (!accept(ps, PLD_T_COMMA))
            break;
        commas++;
    }
    if (!expect(ps, close, close == PLD_T_RPAREN ? "',' or ')'" : "',' or ']'")) {
        pld_mem_free(items.v);
        return NULL;
    }
    if (kind == PLD_EX_TUPLE && items.n == 1 && commas == 0) {
        /* a parenthesised expression: keep the inner node, widen its span? no:
         * the inner span is what diagnostics should point at */
        pld_expr_t *inner = items.v[0];
        pld_mem_free(items.v);
        return inner;
    }
    pld_expr_t *e = mk(ps, kind, span_from(ps, start));
    int n = items.n;
    pld_expr_t **it = (pld_expr_t **)vec_finish(ps, &items);
    if (!e)
        return NULL;
    e->u.seq.items = it;
    e->u.seq.n = n;
    e->u.seq.trailing_comma = commas >= n && n > 0;
    for (int i = 0; i < n; i++)
        if (!grow(ps, e, it ? it[i] : NULL))
            return NULL;
    return e;
}

/* dict ::= '{' [ expr ':' expr { ',' expr ':' expr } [','] ] '}' */
static pld_expr_t *parse_dict(parser_t *ps)
{
    pld_span_t start = ps->tok.span;
    advance(ps);
    vec_t keys = {0}, vals = {0};
    while (!at(ps, PLD_T_RBRACE)) {
        pld_expr_t *k = parse_test(ps);
        if (!k || !expect(ps, PLD_T_COLON, "':' in dict literal"))
            goto fail;
        pld_expr_t *v = parse_test(ps);
        if (!v)
            goto fail;
        vec_push(ps, &keys, k);
        vec_push(ps, &vals, v);
        if (!accept(ps, PLD_T_COMMA))
            break;
    }
    if (!expect(ps, PLD_T_RBRACE, "',' or '}'"))
        goto fail;
    pld_expr_t *e = mk(ps, PLD_EX_DICT, span_from(ps, start));
    int n = keys.n;
    pld_expr_t **kk = (pld_expr_t **)vec_finish(ps, &keys);
    pld_expr_t **vv = (pld_expr_t **)vec_finish(ps, &vals);
    if (!e)
        return NULL;
    e->u.dict.keys = kk;
    e->u.dict.vals = vv;
    e->u.dict.n = n;
    return e;
fail:
    pld_mem_free(keys.v);
    pld_mem_free(vals.v);
    return NULL;
}

/* atom ::= NAME | INT | FLOAT | STRING+ | True | False | None | '...' | '(' … ')' | '[' … ']' | '{' … '}' */
static pld_expr_t *parse_atom(parser_t *ps)
{
    pld_token_t t = ps->tok;
    pld_expr_t *e;
    switch (t.kind) {
    case PLD_T_NAME:
        advance(ps);
        if ((e = mk(ps, PLD_EX_NAME, t.span)))
            e->u.name = t.text;
        return e;
    case PLD_T_INT:
        advance(ps);
        if ((e = mk(ps, PLD_EX_INT, t.span)))
            e->u.ival = t.ival;
        return e;
    case PLD_T_FLOAT:
        advance(ps);
        if ((e = mk(ps, PLD_EX_FLOAT, t.span)))
            e->u.fval = t.fval;
        return e;
    case PLD_T_STRING: {
        pld_buf_t b;
        pld_buf_init(&b);
        pld_span_t start = t.span;
        while (at(ps, PLD_T_STRING)) {
            pld_buf_putn(&b, ps->tok.text, ps->tok.text_len);
            advance(ps);
        }
        e = mk(ps, PLD_EX_STR, span_from(ps, start));
        if (e) {
            char *s = pld_arena_strndup(&ps->p->arena, b.p ? b.p : "", b.len);
            if (!s || b.oom) {
                ps->oom = 1;
                ps->p->diags.oom = 1;
            }
            e->u.str.s = s ? s : "";
            e->u.str.len = s ? b.len : 0;
            e->u.str.raw = ps->p->src + e->span.off;
            e->u.str.raw_len = e->span.len;
        }
        pld_buf_fini(&b);
        return e;
    }
    case PLD_T_TRUE:
    case PLD_T_FALSE:
        advance(ps);
        if ((e = mk(ps, PLD_EX_BOOL, t.span)))
            e->u.bval = t.kind == PLD_T_TRUE;
        return e;
    case PLD_T_NONE:
        advance(ps);
        return mk(ps, PLD_EX_NONE, t.span);
    case PLD_T_ELLIPSIS:
        advance(ps);
        return mk(ps, PLD_EX_ELLIPSIS, t.span);
    case PLD_T_LPAREN:
        return parse_seq(ps, PLD_T_RPAREN, PLD_EX_TUPLE);
    case PLD_T_LBRACK:
        return parse_seq(ps, PLD_T_RBRACK, PLD_EX_LIST);
    case PLD_T_LBRACE:
        return parse_dict(ps);
    default:
        if (!reject_unsupported_expr(ps))
            expected(ps, "an expression");
        return NULL;
    }
}

/* primary ::= atom { '.' NAME | '(' arglist ')' | '[' subscripts ']' } */
static pld_expr_t *parse_primary(parser_t *ps)
{
    pld_expr_t *e = parse_atom(ps);
    while (e) {
        if (at(ps, PLD_T_DOT)) {
            advance(ps);
            if (!at(ps, PLD_T_NAME)) {
                expected(ps, "an attribute name after '.'");
                return NULL;
            }
            pld_token_t nt = ps->tok;
            advance(ps);
            pld_expr_t *a = mk(ps, PLD_EX_ATTR, span_from(ps, e->span));
            if (!a)
                return NULL;
            a->u.attr.obj = e;
            a->u.attr.attr = nt.text;
            a->u.attr.attr_span = nt.span;
            e = grow(ps, a, e);
        } else if (at(ps, PLD_T_LPAREN)) {
            e = parse_call(ps, e);
        } else if (at(ps, PLD_T_LBRACK)) {
            e = parse_subscript(ps, e);
        } else {
            break;
        }
    }
    return e;
}

static pld_expr_t *mk_bin(parser_t *ps, pld_binop_t op, pld_expr_t *a, pld_expr_t *b)
{
    pld_expr_t *e = mk(ps, PLD_EX_BINARY, pld_span_join(a->span, b->span));
    if (!e)
        return NULL;
    e->u.bin.op = op;
    e->u.bin.a = a;
    e->u.bin.b = b;
    return grow(ps, grow(ps, e, a), b);
}

static pld_expr_t *mk_un(parser_t *ps, pld_unop_t op, pld_span_t start, pld_expr_t *a)
{
    pld_expr_t *e = mk(ps, PLD_EX_UNARY, pld_span_join(start, a->span));
    if (!e)
        return NULL;
    e->u.un.op = op;
    e->u.un.a = a;
    return grow(ps, e, a);
}

static pld_expr_t *parse_factor(parser_t *ps);

/* power ::= primary [ '**' factor ] */
static pld_expr_t *parse_power(parser_t *ps)
{
    pld_expr_t *a = parse_primary(ps);
    if (!a || !at(ps, PLD_T_DSTAR))
        return a;
    advance(ps);
    if (!enter(ps))
        return NULL;
    pld_expr_t *b = parse_factor(ps);
    leave(ps);
    return b ? mk_bin(ps, PLD_OP_POW, a, b) : NULL;
}

/* factor ::= ('-' | '+' | '~') factor | power */
static pld_expr_t *parse_factor(parser_t *ps)
{
    if (at(ps, PLD_T_MINUS) || at(ps, PLD_T_PLUS) || at(ps, PLD_T_TILDE)) {
        pld_span_t start = ps->tok.span;
        pld_unop_t op = at(ps, PLD_T_MINUS) ? PLD_UOP_NEG : at(ps, PLD_T_PLUS) ? PLD_UOP_POS : PLD_UOP_INVERT;
        advance(ps);
        if (!enter(ps))
            return NULL;
        pld_expr_t *a = parse_factor(ps);
        leave(ps);
        return a ? mk_un(ps, op, start, a) : NULL;
    }
    return parse_power(ps);
}

/* Binary levels, loosest last: term, arith, shift, band, bxor, bor. */
static pld_expr_t *parse_term(parser_t *ps)
{
    pld_expr_t *a = parse_factor(ps);
    while (a) {
        pld_binop_t op;
        if (at(ps, PLD_T_STAR))
            op = PLD_OP_MUL;
        else if (at(ps, PLD_T_SLASH))
            op = PLD_OP_DIV;
        else if (at(ps, PLD_T_DSLASH))
            op = PLD_OP_FLOORDIV;
        else if (at(ps, PLD_T_PERCENT))
            op = PLD_OP_MOD;
        else if (at(ps, PLD_T_AT)) {
            error_here(ps, "the '@' operator is not supported; use pl.matmul%s", "");
            return NULL;
        } else
            break;
        advance(ps);
        pld_expr_t *b = parse_factor(ps);
        a = b ? mk_bin(ps, op, a, b) : NULL;
    }
    return a;
}

static pld_expr_t *parse_arith(parser_t *ps)
{
    pld_expr_t *a = parse_term(ps);
    while (a && (at(ps, PLD_T_PLUS) || at(ps, PLD_T_MINUS))) {
        pld_binop_t op = at(ps, PLD_T_PLUS) ? PLD_OP_ADD : PLD_OP_SUB;
        advance(ps);
        pld_expr_t *b = parse_term(ps);
        a = b ? mk_bin(ps, op, a, b) : NULL;
    }
    return a;
}

static pld_expr_t *parse_shift(parser_t *ps)
{
    pld_expr_t *a = parse_arith(ps);
    while (a && (at(ps, PLD_T_LSHIFT) || at(ps, PLD_T_RSHIFT))) {
        pld_binop_t op = at(ps, PLD_T_LSHIFT) ? PLD_OP_LSHIFT : PLD_OP_RSHIFT;
        advance(ps);
        pld_expr_t *b = parse_arith(ps);
        a = b ? mk_bin(ps, op, a, b) : NULL;
    }
    return a;
}

static pld_expr_t *parse_band(parser_t *ps)
{
    pld_expr_t *a = parse_shift(ps);
    while (a && at(ps, PLD_T_AMP)) {
        advance(ps);
        pld_expr_t *b = parse_shift(ps);
        a = b ? mk_bin(ps, PLD_OP_BITAND, a, b) : NULL;
    }
    return a;
}

static pld_expr_t *parse_bxor(parser_t *ps)
{
    pld_expr_t *a = parse_band(ps);
    while (a && at(ps, PLD_T_CARET)) {
        advance(ps);
        pld_expr_t *b = parse_band(ps);
        a = b ? mk_bin(ps, PLD_OP_BITXOR, a, b) : NULL;
    }
    return a;
}

static pld_expr_t *parse_expr_bor(parser_t *ps)
{
    pld_expr_t *a = parse_bxor(ps);
    while (a && at(ps, PLD_T_PIPE)) {
        advance(ps);
        pld_expr_t *b = parse_bxor(ps);
        a = b ? mk_bin(ps, PLD_OP_BITOR, a, b) : NULL;
    }
    return a;
}

static int comp_op(parser_t *ps, pld_binop_t *op)
{
    switch (ps->tok.kind) {
    case PLD_T_EQEQ: *op = PLD_OP_EQ; return 1;
    case PLD_T_NE: *op = PLD_OP_NE; return 1;
    case PLD_T_LT: *op = PLD_OP_LT; return 1;
    case PLD_T_LE: *op = PLD_OP_LE; return 1;
    case PLD_T_GT: *op = PLD_OP_GT; return 1;
    case PLD_T_GE: *op = PLD_OP_GE; return 1;
    default: return 0;
    }
}

/* comparison ::= bor [ comp_op bor ]   (chains are rejected, as PyPTO does) */
static pld_expr_t *parse_comparison(parser_t *ps)
{
    pld_expr_t *a = parse_expr_bor(ps);
    pld_binop_t op;
    if (!a)
        return NULL;
    if (at(ps, PLD_T_IN) || at(ps, PLD_T_IS) || (at(ps, PLD_T_NOT) && peek2(ps)->kind == PLD_T_IN)) {
        error_here(ps, "'in' / 'is' comparisons are not supported%s", "");
        return NULL;
    }
    if (!comp_op(ps, &op))
        return a;
    advance(ps);
    pld_expr_t *b = parse_expr_bor(ps);
    if (!b)
        return NULL;
    pld_binop_t op2;
    if (comp_op(ps, &op2)) {
        error_here(ps, "chained comparisons are not supported; combine two comparisons with 'and'%s", "");
        return NULL;
    }
    return mk_bin(ps, op, a, b);
}

/* not_test ::= 'not' not_test | comparison */
static pld_expr_t *parse_not(parser_t *ps)
{
    if (at(ps, PLD_T_NOT)) {
        pld_span_t start = ps->tok.span;
        advance(ps);
        if (!enter(ps))
            return NULL;
        pld_expr_t *a = parse_not(ps);
        leave(ps);
        return a ? mk_un(ps, PLD_UOP_NOT, start, a) : NULL;
    }
    return parse_comparison(ps);
}

static pld_expr_t *parse_and(parser_t *ps)
{
    pld_expr_t *a = parse_not(ps);
    while (a && at(ps, PLD_T_AND)) {
        advance(ps);
        pld_expr_t *b = parse_not(ps);
        a = b ? mk_bin(ps, PLD_OP_AND, a, b) : NULL;
    }
    return a;
}

/* xor_test ::= and_test { 'xor' and_test }  (printer-only pseudo operator) */
static pld_expr_t *parse_xor(parser_t *ps)
{
    pld_expr_t *a = parse_and(ps);
    while (a && at(ps, PLD_T_NAME) && strcmp(ps->tok.text, "xor") == 0) {
        advance(ps);
        pld_expr_t *b = parse_and(ps);
        a = b ? mk_bin(ps, PLD_OP_XOR, a, b) : NULL;
    }
    return a;
}

static pld_expr_t *parse_or(parser_t *ps)
{
    pld_expr_t *a = parse_xor(ps);
    while (a && at(ps, PLD_T_OR)) {
        advance(ps);
        pld_expr_t *b = parse_xor(ps);
        a = b ? mk_bin(ps, PLD_OP_OR, a, b) : NULL;
    }
    return a;
}

/* test ::= or_test   (conditional expressions and lambdas are rejected) */
static pld_expr_t *parse_test(parser_t *ps)
{
    if (reject_unsupported_expr(ps))
        return NULL;
    if (!enter(ps))
        return NULL;
    pld_expr_t *e = parse_or(ps);
    leave(ps);
    if (e && at(ps, PLD_T_IF)) {
        error_here(ps, "conditional expressions (a if c else b) are not supported; use an if statement%s", "");
        return NULL;
    }
    if (e && at(ps, PLD_T_WALRUS)) {
        error_here(ps, "assignment expressions (:=) are not supported%s", "");
        return NULL;
    }
    return e;
}

/* testlist ::= test { ',' test } [','] -> a TUPLE when there is a comma */
static pld_expr_t *parse_testlist(parser_t *ps)
{
    pld_expr_t *first = parse_test(ps);
    if (!first || !at(ps, PLD_T_COMMA))
        return first;
    vec_t items = {0};
    vec_push(ps, &items, first);
    int trailing = 0;
    while (accept(ps, PLD_T_COMMA)) {
        trailing = 1;
        if (at(ps, PLD_T_NEWLINE) || at(ps, PLD_T_ASSIGN) || at(ps, PLD_T_COLON) || at(ps, PLD_T_IN) ||
            at(ps, PLD_T_SEMI) || at(ps, PLD_T_EOF))
            break;
        pld_expr_t *it = parse_test(ps);
        if (!it) {
            pld_mem_free(items.v);
            return NULL;
        }
        vec_push(ps, &items, it);
        trailing = 0;
    }
    pld_expr_t *e = mk(ps, PLD_EX_TUPLE, span_from(ps, first->span));
    int n = items.n;
    pld_expr_t **it = (pld_expr_t **)vec_finish(ps, &items);
    if (!e)
        return NULL;
    e->u.seq.items = it;
    e->u.seq.n = n;
    e->u.seq.trailing_comma = trailing;
    for (int i = 0; i < n; i++)
        if (!grow(ps, e, it ? it[i] : NULL))
            return NULL;
    return e;
}

/* target_list ::= target { ',' target } [','] ; target ::= primary (no operators,
 * so that `for x in ...` does not read `x in ...` as a comparison) */
static pld_expr_t *parse_target_list(parser_t *ps)
{
    pld_expr_t *first = parse_primary(ps);
    if (!first || !at(ps, PLD_T_COMMA))
        return first;
    vec_t items = {0};
    vec_push(ps, &items, first);
    int trailing = 0;
    while (accept(ps, PLD_T_COMMA)) {
        trailing = 1;
        if (at(ps, PLD_T_IN))
            break;
        pld_expr_t *it = parse_primary(ps);
        if (!it) {
            pld_mem_free(items.v);
            return NULL;
        }
        vec_push(ps, &items, it);
        trailing = 0;
    }
    pld_expr_t *e = mk(ps, PLD_EX_TUPLE, span_from(ps, first->span));
    int n = items.n;
    pld_expr_t **it = (pld_expr_t **)vec_finish(ps, &items);
    if (!e)
        return NULL;
    e->u.seq.items = it;
    e->u.seq.n = n;
    e->u.seq.trailing_comma = trailing;
    for (int i = 0; i < n; i++)
        if (!grow(ps, e, it ? it[i] : NULL))
            return NULL;
    return e;
}

/* ----------------------------------------------------------------- statements */

static int parse_block(parser_t *ps, pld_block_t *out);
static pld_stmt_t *parse_stmt(parser_t *ps, vec_t *extra);

static pld_stmt_t *mk_stmt(parser_t *ps, pld_stmt_kind_t k, pld_span_t sp)
{
    pld_stmt_t *s = pld_ast_stmt(ps->p, k, sp);
    if (!s) {
        ps->oom = 1;
        ps->p->diags.oom = 1;
    }
    return s;
}

/* Skips to the start of the next statement (panic-mode recovery). */
static void synchronize(parser_t *ps)
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
static pld_stmt_t *parse_small_stmt(parser_t *ps)
{
    pld_span_t start = ps->tok.span;
    pld_stmt_t *s;
    const char *un = unsupported_stmt(ps->tok.kind);
    if (un) {
        error_here(ps, "%s statements are not supported in pldrun programs", un);
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
        vec_t vals = {0};
        if (!at(ps, PLD_T_NEWLINE) && !at(ps, PLD_T_SEMI) && !at(ps, PLD_T_EOF)) {
            pld_expr_t *e = parse_testlist(ps);
            if (!e)
                return NULL;
            if (e->kind == PLD_EX_TUPLE && e->u.seq.items && e->span.off == e->u.seq.items[0]->span.off) {
                /* `return a, b` (an unparenthesised tuple): keep the values */
                for (int i = 0; i < e->u.seq.n; i++)
                    vec_push(ps, &vals, e->u.seq.items[i]);
            } else {
                vec_push(ps, &vals, e);
            }
        }
        s = mk_stmt(ps, PLD_ST_RETURN, span_from(ps, start));
        int n = vals.n;
        pld_expr_t **v = (pld_expr_t **)vec_finish(ps, &vals);
        if (s) {
            s->u.ret.vals = v;
            s->u.ret.n = n;
        }
        return s;
    }
    default:
        break;
    }
    pld_expr_t *lhs = parse_testlist(ps);
    if (!lhs)
        return NULL;
    if (at(ps, PLD_T_COLON)) {
        /* annotated assignment: NAME ':' ann '=' value */
        if (lhs->kind != PLD_EX_NAME) {
            error_at(ps, lhs->span, "only a single name can be annotated%s", "");
            return NULL;
        }
        advance(ps);
        pld_expr_t *ann = parse_test(ps);
        if (!ann)
            return NULL;
        if (!at(ps, PLD_T_ASSIGN)) {
            error_here(ps, "annotated assignment needs a value ('name: type = value')%s", "");
            return NULL;
        }
        advance(ps);
        pld_expr_t *val = parse_testlist(ps);
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
            error_at(ps, lhs->span, "cannot assign to this expression%s", "");
            return NULL;
        }
        advance(ps);
        pld_expr_t *val = parse_testlist(ps);
        if (!val)
            return NULL;
        if (at(ps, PLD_T_ASSIGN)) {
            error_here(ps, "chained assignment (a = b = c) is not supported%s", "");
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
        error_here(ps, "augmented assignment is not supported; write 'x = x + ...'%s", "");
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
static int parse_simple_stmt(parser_t *ps, vec_t *out)
{
    pld_comment_t *lead = pld_lex_take_comments(ps->lx, ps->tok.span.line);
    int first_index = out->n;
    for (;;) {
        pld_stmt_t *s = parse_small_stmt(ps);
        if (!s)
            return 0;
        if (!is_docstring(s))
            vec_push(ps, out, s);
        if (!accept(ps, PLD_T_SEMI))
            break;
        if (at(ps, PLD_T_NEWLINE))
            break;
    }
    uint32_t nl_line = ps->tok.span.line;
    if (!at(ps, PLD_T_EOF) && !expect(ps, PLD_T_NEWLINE, "end of statement"))
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
static int parse_suite(parser_t *ps, pld_block_t *out)
{
    if (!expect(ps, PLD_T_COLON, "':'"))
        return 0;
    if (!at(ps, PLD_T_NEWLINE)) {
        vec_t v = {0};
        if (!parse_simple_stmt(ps, &v)) {
            pld_mem_free(v.v);
            return 0;
        }
        out->n = v.n;
        out->stmts = (pld_stmt_t **)vec_finish(ps, &v);
        return 1;
    }
    advance(ps);
    if (!at(ps, PLD_T_INDENT)) {
        expected(ps, "an indented block");
        return 0;
    }
    return parse_block(ps, out);
}

/* block ::= INDENT stmt+ DEDENT (current token is INDENT) */
static int parse_block(parser_t *ps, pld_block_t *out)
{
    advance(ps); /* INDENT */
    if (!enter(ps))
        return 0;
    vec_t v = {0};
    while (!at(ps, PLD_T_DEDENT) && !at(ps, PLD_T_EOF)) {
        if (ps->oom)
            break;
        if (at(ps, PLD_T_INDENT)) {
            /* report, then read the over-indented lines as a block and drop them */
            error_here(ps, "unexpected indent%s", "");
            pld_block_t junk;
            parse_block(ps, &junk);
            ps->panic = 0;
            continue;
        }
        int before = v.n;
        pld_stmt_t *s = parse_stmt(ps, &v);
        if (s)
            vec_push(ps, &v, s);
        else if (ps->panic)
            synchronize(ps);
        (void)before;
    }
    accept(ps, PLD_T_DEDENT);
    leave(ps);
    out->n = v.n;
    out->stmts = (pld_stmt_t **)vec_finish(ps, &v);
    return 1;
}

/* if_stmt ::= 'if' test suite { 'elif' test suite } [ 'else' suite ] */
static pld_stmt_t *parse_if(parser_t *ps)
{
    pld_span_t start = ps->tok.span;
    advance(ps); /* if / elif */
    pld_expr_t *cond = parse_test(ps);
    if (!cond)
        return NULL;
    pld_stmt_t *s = mk_stmt(ps, PLD_ST_IF, start);
    if (!s)
        return NULL;
    s->u.if_.cond = cond;
    if (!parse_suite(ps, &s->u.if_.then))
        return NULL;
    if (at(ps, PLD_T_ELIF)) {
        if (!enter(ps))
            return NULL;
        pld_stmt_t *inner = parse_if(ps);
        leave(ps);
        if (!inner)
            return NULL;
        pld_stmt_t **one = alloc(ps, sizeof *one);
        if (!one)
            return NULL;
        one[0] = inner;
        s->u.if_.els.stmts = one;
        s->u.if_.els.n = 1;
        s->u.if_.els_is_elif = 1;
    } else if (at(ps, PLD_T_ELSE)) {
        advance(ps);
        if (!parse_suite(ps, &s->u.if_.els))
            return NULL;
    }
    return s;
}

/* Consumes leading comments and parses one statement. Compound statements are
 * returned; simple statements are pushed into `extra` (NULL is returned). */
static pld_stmt_t *parse_stmt(parser_t *ps, vec_t *extra)
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
        pld_expr_t *cond = parse_test(ps);
        if (!cond)
            return NULL;
        s = mk_stmt(ps, PLD_ST_WHILE, start);
        if (!s)
            return NULL;
        s->u.while_.cond = cond;
        if (!parse_suite(ps, &s->u.while_.body))
            return NULL;
        s->comments = c;
        if (at(ps, PLD_T_ELSE)) {
            error_here(ps, "'while ... else' is not supported%s", "");
            return NULL;
        }
        return s;
    }
    case PLD_T_FOR: {
        pld_comment_t *c = pld_lex_take_comments(ps->lx, start.line);
        advance(ps);
        pld_expr_t *target = parse_target_list(ps);
        if (!target)
            return NULL;
        if (!valid_target(target) || target->kind == PLD_EX_SUBSCRIPT) {
            error_at(ps, target->span, "invalid loop target; expected a name or a tuple of names%s", "");
            return NULL;
        }
        if (!expect(ps, PLD_T_IN, "'in'"))
            return NULL;
        pld_expr_t *iter = parse_testlist(ps);
        if (!iter)
            return NULL;
        s = mk_stmt(ps, PLD_ST_FOR, start);
        if (!s)
            return NULL;
        s->u.for_.target = target;
        s->u.for_.iter = iter;
        s->comments = c;
        if (!parse_suite(ps, &s->u.for_.body))
            return NULL;
        if (at(ps, PLD_T_ELSE)) {
            error_here(ps, "'for ... else' is not supported%s", "");
            return NULL;
        }
        return s;
    }
    case PLD_T_WITH: {
        pld_comment_t *c = pld_lex_take_comments(ps->lx, start.line);
        advance(ps);
        pld_expr_t *item = parse_test(ps);
        if (!item)
            return NULL;
        s = mk_stmt(ps, PLD_ST_WITH, start);
        if (!s)
            return NULL;
        s->u.with.item = item;
        s->comments = c;
        if (accept(ps, PLD_T_AS)) {
            if (!at(ps, PLD_T_NAME)) {
                expected(ps, "a name after 'as'");
                return NULL;
            }
            s->u.with.as_name = ps->tok.text;
            s->u.with.as_span = ps->tok.span;
            advance(ps);
        }
        if (at(ps, PLD_T_COMMA)) {
            error_here(ps, "only one context manager per 'with' statement is supported%s", "");
            return NULL;
        }
        if (!parse_suite(ps, &s->u.with.body))
            return NULL;
        return s;
    }
    case PLD_T_ELSE:
    case PLD_T_ELIF:
        error_here(ps, "'%s' without a matching 'if'", ps->tok.kind == PLD_T_ELSE ? "else" : "elif");
        return NULL;
    default:
        if (!parse_simple_stmt(ps, extra))
            return NULL;
        return NULL;
    }
}

/* ------------------------------------------------------------------- module */

/* Attribute-chain name of the last segment of an enum-like decorator value. */
static const char *deco_kw_tail(const pld_expr_t *deco, const char *kw)
{
    if (!deco || deco->kind != PLD_EX_CALL)
        return NULL;
    for (int i = 0; i < deco->u.call.nargs; i++) {
        const pld_arg_t *a = &deco->u.call.args[i];
        if (a->kw && strcmp(a->kw, kw) == 0 && a->value->kind == PLD_EX_ATTR)
            return a->value->u.attr.attr;
    }
    return NULL;
}

/* A HOST-or-above SubWorker: its body is arbitrary Python, captured raw. */
static int is_host_subworker(const pld_expr_t *deco)
{
    const char *role = deco_kw_tail(deco, "role");
    const char *level = deco_kw_tail(deco, "level");
    if (!role || strcmp(role, "SubWorker") != 0 || !level)
        return 0;
    static const char *const low[] = {"AIV", "AIC", "CORE_GROUP", "CHIP_DIE", "CHIP", "L2CACHE", "PROCESSOR", "UMA"};
    for (size_t i = 0; i < sizeof low / sizeof low[0]; i++)
        if (strcmp(level, low[i]) == 0)
            return 0;
    return 1;
}

static int deco_is(const pld_expr_t *deco, const char *last)
{
    const pld_expr_t *e = deco && deco->kind == PLD_EX_CALL ? deco->u.call.fn : deco;
    if (!e)
        return 0;
    if (e->kind == PLD_EX_NAME)
        return strcmp(e->u.name, last) == 0;
    if (e->kind == PLD_EX_ATTR)
        return strcmp(e->u.attr.attr, last) == 0;
    return 0;
}

/* param ::= 'self' | NAME ':' annotation */
static int parse_params(parser_t *ps, pld_func_t *f, int in_class)
{
    if (!expect(ps, PLD_T_LPAREN, "'(' after the function name"))
        return 0;
    pld_param_t *params = NULL;
    int n = 0, cap = 0, idx = 0;
    while (!at(ps, PLD_T_RPAREN)) {
        if (at(ps, PLD_T_STAR) || at(ps, PLD_T_DSTAR) || at(ps, PLD_T_SLASH)) {
            error_here(ps, "*args, **kwargs and positional-only markers are not supported in signatures%s", "");
            return 0;
        }
        if (!at(ps, PLD_T_NAME)) {
            expected(ps, "a parameter name");
            return 0;
        }
        pld_token_t nt = ps->tok;
        advance(ps);
        if (idx == 0 && in_class && strcmp(nt.text, "self") == 0 && !at(ps, PLD_T_COLON)) {
            f->has_self = 1;
        } else {
            if (!at(ps, PLD_T_COLON)) {
                error_at(ps, nt.span, "parameter '%s' needs a type annotation", nt.text);
                return 0;
            }
            advance(ps);
            pld_expr_t *ann = parse_test(ps);
            if (!ann)
                return 0;
            if (at(ps, PLD_T_ASSIGN)) {
                error_here(ps, "default parameter values are not supported%s", "");
                return 0;
            }
            for (int i = 0; i < n; i++)
                if (params[i].name == nt.text) {
                    error_at(ps, nt.span, "duplicate parameter '%s'", nt.text);
                    return 0;
                }
            if (n == cap) {
                int nc = cap ? cap * 2 : 8;
                pld_param_t *np = alloc(ps, (size_t)nc * sizeof *np);
                if (!np)
                    return 0;
                if (n)
                    memcpy(np, params, (size_t)n * sizeof *np);
                params = np;
                cap = nc;
            }
            memset(&params[n], 0, sizeof params[n]);
            params[n].name = nt.text;
            params[n].span = nt.span;
            params[n].ann = ann;
            params[n].slot = -1;
            n++;
        }
        idx++;
        if (!accept(ps, PLD_T_COMMA))
            break;
    }
    if (!expect(ps, PLD_T_RPAREN, "',' or ')' in the parameter list"))
        return 0;
    f->params = params;
    f->nparams = n;
    return 1;
}

/* function_def ::= decorator NEWLINE 'def' NAME '(' params ')' ['->' ann] ':' suite */
static pld_func_t *parse_function(parser_t *ps, pld_expr_t *deco, pld_span_t deco_span, int in_class,
                                  pld_comment_t *comments)
{
    uint32_t header_indent = pld_lex_line_indent(ps->lx, ps->tok.span.off);
    if (!expect(ps, PLD_T_DEF, "'def' after the decorator"))
        return NULL;
    if (!at(ps, PLD_T_NAME)) {
        expected(ps, "a function name");
        return NULL;
    }
    pld_func_t *f = alloc(ps, sizeof *f);
    if (!f)
        return NULL;
    f->name = ps->tok.text;
    f->name_span = ps->tok.span;
    f->deco = deco;
    f->deco_span = deco_span;
    f->comments = comments;
    f->is_inline = deco_is(deco, "inline");
    advance(ps);
    if (!parse_params(ps, f, in_class))
        return NULL;
    if (accept(ps, PLD_T_ARROW)) {
        f->ret_ann = parse_test(ps);
        if (!f->ret_ann)
            return NULL;
    }
    if (deco && is_host_subworker(deco) && at(ps, PLD_T_COLON)) {
        /* capture the body raw: the lexer has not read past ':' yet */
        pld_span_t sp;
        const char *raw = pld_lex_capture_block(ps->lx, header_indent, &sp);
        if (raw) {
            advance(ps); /* ':' -> the pending NEWLINE */
            f->is_raw = 1;
            f->raw_body = raw;
            if (!expect(ps, PLD_T_NEWLINE, "end of line"))
                return NULL;
            return f;
        }
    }
    if (!parse_suite(ps, &f->body))
        return NULL;
    return f;
}

static pld_expr_t *parse_decorator(parser_t *ps, pld_span_t *span)
{
    advance(ps); /* '@' */
    pld_span_t start = ps->tok.span;
    pld_expr_t *e = parse_primary(ps);
    if (!e)
        return NULL;
    *span = span_from(ps, start);
    if (!expect(ps, PLD_T_NEWLINE, "end of line after the decorator"))
        return NULL;
    return e;
}

static void push_func(parser_t *ps, vec_t *funcs, pld_func_t *f)
{
    vec_push(ps, funcs, f);
}

/* Skips an undecorated method: Python ignores it as a PyPTO function. */
static void skip_plain_def(parser_t *ps)
{
    uint32_t header_indent = pld_lex_line_indent(ps->lx, ps->tok.span.off);
    while (!at(ps, PLD_T_COLON) && !at(ps, PLD_T_EOF) && !at(ps, PLD_T_NEWLINE))
        advance(ps);
    if (at(ps, PLD_T_COLON) && pld_lex_capture_block(ps->lx, header_indent, NULL)) {
        advance(ps);
        accept(ps, PLD_T_NEWLINE);
        return;
    }
    synchronize(ps);
}

/* program_def ::= decorator 'class' NAME ['(' ')'] ':' NEWLINE INDENT { class_item } DEDENT */
static void parse_class(parser_t *ps, pld_expr_t *deco, vec_t *funcs, pld_comment_t *comments)
{
    pld_program_t *p = ps->p;
    advance(ps); /* 'class' */
    if (!at(ps, PLD_T_NAME)) {
        expected(ps, "a class name");
        return;
    }
    if (p->class_name) {
        error_here(ps, "a program text may define only one @pl.program class%s", "");
        return;
    }
    p->class_name = ps->tok.text;
    p->class_span = ps->tok.span;
    p->class_deco = deco;
    p->class_comments = comments;
    advance(ps);
    if (accept(ps, PLD_T_LPAREN)) {
        if (!expect(ps, PLD_T_RPAREN, "')' (base classes are not supported)"))
            return;
    }
    if (!expect(ps, PLD_T_COLON, "':'"))
        return;
    if (!expect(ps, PLD_T_NEWLINE, "a new line after 'class ...:'"))
        return;
    if (!at(ps, PLD_T_INDENT)) {
        expected(ps, "an indented class body");
        return;
    }
    advance(ps);
    while (!at(ps, PLD_T_DEDENT) && !at(ps, PLD_T_EOF) && !ps->oom) {
        if (ps->panic)
            synchronize(ps);
        if (at(ps, PLD_T_DEDENT) || at(ps, PLD_T_EOF))
            break;
        if (at(ps, PLD_T_NEWLINE)) {
            advance(ps);
            continue;
        }
        pld_comment_t *c = pld_lex_take_comments(ps->lx, ps->tok.span.line);
        if (at(ps, PLD_T_AT)) {
            pld_span_t dspan;
            pld_expr_t *d = parse_decorator(ps, &dspan);
            if (!d)
                continue;
            while (at(ps, PLD_T_AT)) { /* extra decorators: keep the function one */
                pld_span_t s2;
                pld_expr_t *d2 = parse_decorator(ps, &s2);
                if (!d2)
                    break;
                if (deco_is(d2, "function") || deco_is(d2, "inline")) {
                    d = d2;
                    dspan = s2;
                }
            }
            if (ps->panic)
                continue;
            pld_func_t *f = parse_function(ps, d, dspan, 1, c);
            if (f)
                push_func(ps, funcs, f);
            continue;
        }
        if (at(ps, PLD_T_DEF)) {
            skip_plain_def(ps);
            continue;
        }
        if (at(ps, PLD_T_STRING) || at(ps, PLD_T_PASS) || at(ps, PLD_T_ELLIPSIS)) {
            vec_t tmp = {0};
            parse_simple_stmt(ps, &tmp);
            pld_mem_free(tmp.v);
            continue;
        }
        error_here(ps, "expected a decorated method (@pl.function) in the program class%s", "");
    }
    accept(ps, PLD_T_DEDENT);
}

/* import_stmt ::= 'import' dotted ['as' NAME] | 'from' dotted 'import' NAME ['as' NAME] {',' …} */
static void parse_import(parser_t *ps, vec_t *imports, pld_comment_t *comments)
{
    pld_span_t start = ps->tok.span;
    int first = imports->n;
    int is_from = at(ps, PLD_T_FROM);
    advance(ps);
    pld_buf_t b;
    pld_buf_init(&b);
    for (;;) {
        if (!at(ps, PLD_T_NAME)) {
            expected(ps, "a module name");
            pld_buf_fini(&b);
            return;
        }
        pld_buf_puts(&b, ps->tok.text);
        advance(ps);
        if (!accept(ps, PLD_T_DOT))
            break;
        pld_buf_putc(&b, '.');
    }
    const char *module = pld_ast_intern(ps->p, pld_buf_str(&b), b.len);
    pld_buf_fini(&b);
    if (!module) {
        ps->oom = 1;
        return;
    }
    if (!is_from) {
        pld_import_t *im = alloc(ps, sizeof *im);
        if (!im)
            return;
        im->module = module;
        if (accept(ps, PLD_T_AS)) {
            if (!at(ps, PLD_T_NAME)) {
                expected(ps, "a name after 'as'");
                return;
            }
            im->alias = ps->tok.text;
            advance(ps);
        }
        im->span = span_from(ps, start);
        vec_push(ps, imports, im);
    } else {
        if (!expect(ps, PLD_T_IMPORT, "'import'"))
            return;
        int paren = accept(ps, PLD_T_LPAREN);
        do {
            if (paren && at(ps, PLD_T_RPAREN))
                break;
            if (!at(ps, PLD_T_NAME)) {
                expected(ps, at(ps, PLD_T_STAR) ? "an explicit name ('import *' is not supported)" : "a name to import");
                return;
            }
            pld_import_t *im = alloc(ps, sizeof *im);
            if (!im)
                return;
            im->module = module;
            im->from_name = ps->tok.text;
            im->alias = ps->tok.text;
            advance(ps);
            if (accept(ps, PLD_T_AS)) {
                if (!at(ps, PLD_T_NAME)) {
                    expected(ps, "a name after 'as'");
                    return;
                }
                im->alias = ps->tok.text;
                advance(ps);
            }
            im->span = span_from(ps, start);
            vec_push(ps, imports, im);
        } while (accept(ps, PLD_T_COMMA));
        if (paren && !expect(ps, PLD_T_RPAREN, "')'"))
            return;
    }
    uint32_t nl_line = ps->tok.span.line;
    if (!at(ps, PLD_T_EOF) && !expect(ps, PLD_T_NEWLINE, "end of line after the import"))
        return;
    /* the comments before the statement, then a trailing one (moved above it,
     * as for statements), go with its first import */
    if (imports->n > first) {
        pld_import_t *im = imports->v[first];
        im->comments = comments_join(comments, pld_lex_take_comments(ps->lx, nl_line + 1));
    }
}

pld_status_t pld_parse_program(pld_program_t *p)
{
    /* NUL bytes are not text (Python refuses them too); they would also cut
     * names and comments short when treated as C strings */
    parser_t ps;
    memset(&ps, 0, sizeof ps);
    ps.p = p;
    ps.lx = pld_lex_create(p);
    if (!ps.lx) {
        p->diags.oom = 1;
        return PLD_E_NOMEM;
    }
    const char *nul = memchr(p->src, '\0', p->src_len);
    if (nul) {
        /* line and column counted as for tokens (characters, tabs to 8) */
        pld_span_t sp = pld_lex_span_at(ps.lx, (size_t)(nul - p->src), 1);
        pld_diag_add(&p->diags, PLD_SEV_ERROR, sp, "the program text contains a NUL byte");
        pld_lex_destroy(ps.lx);
        return PLD_E_SYNTAX;
    }
    advance(&ps);
    vec_t imports = {0}, consts = {0}, funcs = {0};
    /* comments not attached yet: those before a module docstring or an ignored
     * statement go with the next item that keeps comments */
    pld_comment_t *pending = NULL;
    while (!at(&ps, PLD_T_EOF) && !ps.oom) {
        if (ps.panic)
            synchronize(&ps);
        if (at(&ps, PLD_T_EOF))
            break;
        if (at(&ps, PLD_T_NEWLINE)) {
            advance(&ps);
            continue;
        }
        if (at(&ps, PLD_T_INDENT)) {
            error_here(&ps, "unexpected indent%s", "");
            continue;
        }
        if (at(&ps, PLD_T_DEDENT)) {
            advance(&ps);
            continue;
        }
        pld_comment_t *c = comments_join(pending, pld_lex_take_comments(ps.lx, ps.tok.span.line));
        pending = NULL;
        if (at(&ps, PLD_T_IMPORT) || at(&ps, PLD_T_FROM)) {
            parse_import(&ps, &imports, c);
            continue;
        }
        if (at(&ps, PLD_T_AT)) {
            pld_span_t dspan;
            pld_expr_t *d = parse_decorator(&ps, &dspan);
            if (!d)
                continue;
            if (at(&ps, PLD_T_CLASS)) {
                parse_class(&ps, d, &funcs, c);
            } else if (at(&ps, PLD_T_DEF)) {
                pld_func_t *f = parse_function(&ps, d, dspan, 0, c);
                if (f)
                    push_func(&ps, &funcs, f);
            } else {
                expected(&ps, "'class' or 'def' after the decorator");
            }
            continue;
        }
        if (at(&ps, PLD_T_CLASS)) {
            error_here(&ps, "the program class must be decorated with @pl.program%s", "");
            continue;
        }
        if (at(&ps, PLD_T_DEF)) {
            error_here(&ps, "a top-level function must be decorated with @pl.function%s", "");
            continue;
        }
        if (at(&ps, PLD_T_NAME) && (peek2(&ps)->kind == PLD_T_ASSIGN || ps.next.kind == PLD_T_COLON)) {
            pld_const_decl_t *cd = alloc(&ps, sizeof *cd);
            if (!cd)
                break;
            cd->name = ps.tok.text;
            cd->span = ps.tok.span;
            cd->comments = c;
            advance(&ps);
            if (accept(&ps, PLD_T_COLON)) { /* NAME: ann = value (annotation ignored) */
                if (!parse_test(&ps))
                    continue;
            }
            if (!expect(&ps, PLD_T_ASSIGN, "'='"))
                continue;
            cd->value = parse_testlist(&ps);
            if (!cd->value)
                continue;
            uint32_t nl_line = ps.tok.span.line;
            if (!at(&ps, PLD_T_EOF) && !expect(&ps, PLD_T_NEWLINE, "end of line after the constant"))
                continue;
            /* a trailing comment moves above the constant, as for statements */
            cd->comments = comments_join(cd->comments, pld_lex_take_comments(ps.lx, nl_line + 1));
            vec_push(&ps, &consts, cd);
            continue;
        }
        if (at(&ps, PLD_T_STRING)) { /* module docstring */
            pending = c;
            vec_t tmp = {0};
            parse_simple_stmt(&ps, &tmp);
            pld_mem_free(tmp.v);
            continue;
        }
        if (at(&ps, PLD_T_IF) || at(&ps, PLD_T_FOR) || at(&ps, PLD_T_WHILE) || at(&ps, PLD_T_WITH) ||
            at(&ps, PLD_T_TRY)) {
            pld_span_t sp = ps.tok.span;
            pld_diag_add(&p->diags, PLD_SEV_WARNING, sp, "module-level statement ignored (only constants, "
                                                       "imports and the program are read)");
            pending = c;
            /* skip the header line and its block */
            while (!at(&ps, PLD_T_NEWLINE) && !at(&ps, PLD_T_EOF))
                advance(&ps);
            ps.panic = 1;
            continue;
        }
        error_here(&ps, "unsupported module-level statement (expected an import, a constant, or the "
                        "@pl.program class)%s", "");
    }
    /* comments after the last statement of the file (and any still pending) */
    if (!ps.oom)
        p->tail_comments = comments_join(pending, pld_lex_take_comments(ps.lx, UINT32_MAX));
    p->nimports = imports.n;
    p->imports = NULL;
    if (imports.n) {
        p->imports = alloc(&ps, (size_t)imports.n * sizeof *p->imports);
        for (int i = 0; p->imports && i < imports.n; i++)
            p->imports[i] = *(pld_import_t *)imports.v[i];
    }
    pld_mem_free(imports.v);
    p->nconsts = consts.n;
    p->consts = NULL;
    if (consts.n) {
        p->consts = alloc(&ps, (size_t)consts.n * sizeof *p->consts);
        for (int i = 0; p->consts && i < consts.n; i++)
            p->consts[i] = *(pld_const_decl_t *)consts.v[i];
    }
    pld_mem_free(consts.v);
    p->nfuncs = funcs.n;
    p->funcs = (pld_func_t **)vec_finish(&ps, &funcs);
    pld_lex_destroy(ps.lx);
    if (ps.oom || p->diags.oom)
        return PLD_E_NOMEM;
    if (pld_diag_has_errors(&p->diags))
        return PLD_E_SYNTAX;
    p->parsed_ok = 1;
    return PLD_OK;
}

pld_program_t *pld_parse_text(const char *file, const char *src, size_t len)
{
    pld_program_t *p = pld_program_create(file, src, len);
    if (!p)
        return NULL;
    pld_parse_program(p);
    return p;
}
