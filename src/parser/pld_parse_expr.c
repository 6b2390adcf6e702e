/* pld_parse_expr.c - expressions: test, boolean and comparison chains, the
 * arithmetic and bitwise operators, primaries (attributes, calls, subscripts),
 * atoms and literals (tuples, lists, dicts), target lists.
 * Grammar: docs/ir_text_grammar.md §2. Each parse function names its production. */
#include "pld_parse_int.h"
#include "pld_mem.h"

#include <string.h>


/* Rejects Python constructs the DSL does not have, reporting at the current token. */
static int reject_unsupported_expr(pld_parser_t *ps)
{
    if (at(ps, PLD_T_LAMBDA)) {
        pld_parse_error_here(ps, "lambda expressions are not supported%s", "");
        return 1;
    }
    if (at(ps, PLD_T_YIELD)) {
        pld_parse_error_here(ps, "'yield' is not supported; use pl.yield_(...)%s", "");
        return 1;
    }
    if (at(ps, PLD_T_AWAIT)) {
        pld_parse_error_here(ps, "'await' is not supported%s", "");
        return 1;
    }
    return 0;
}

/* arglist ::= arg { ',' arg } [','] ; arg ::= expr | NAME '=' expr */
static pld_expr_t *parse_call(pld_parser_t *ps, pld_expr_t *fn)
{
    pld_span_t start = fn->span;
    advance(ps); /* '(' */
    pld_arg_t *args = NULL;
    int n = 0, cap = 0, seen_kw = 0;
    while (!at(ps, PLD_T_RPAREN)) {
        if (at(ps, PLD_T_STAR) || at(ps, PLD_T_DSTAR)) {
            pld_parse_error_here(ps, "argument unpacking (*args / **kwargs) is not supported%s", "");
            return NULL;
        }
        pld_arg_t a;
        memset(&a, 0, sizeof a);
        if (at(ps, PLD_T_NAME) && peek2(ps)->kind == PLD_T_ASSIGN) {
            a.kw = ps->tok.text;
            a.kw_span = ps->tok.span;
            for (int i = 0; i < n; i++)
                if (args[i].kw == a.kw) {
                    pld_parse_error_here(ps, "keyword argument '%s' repeated", a.kw);
                    return NULL;
                }
            advance(ps);
            advance(ps);
            seen_kw = 1;
        } else if (seen_kw) {
            pld_parse_error_here(ps, "positional argument follows keyword argument%s", "");
            return NULL;
        }
        a.value = pld_parse_expr_test(ps);
        if (!a.value)
            return NULL;
        if (at(ps, PLD_T_FOR)) {
            pld_parse_error_here(ps, "comprehensions are not supported%s", "");
            return NULL;
        }
        if (n == cap) {
            int nc = cap ? cap * 2 : 4;
            pld_arg_t *na = pld_parse_alloc(ps, (size_t)nc * sizeof *na);
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
    if (!pld_parse_expect(ps, PLD_T_RPAREN, "',' or ')' in call arguments"))
        return NULL;
    pld_expr_t *e = pld_parse_mk(ps, PLD_EX_CALL, span_from(ps, start));
    if (!e)
        return NULL;
    e->u.call.fn = fn;
    e->u.call.args = args;
    e->u.call.nargs = n;
    for (int i = 0; i < n; i++)
        if (!pld_parse_grow(ps, e, args[i].value))
            return NULL;
    return pld_parse_grow(ps, e, fn);
}

/* subscript ::= expr | [expr] ':' [expr] [':' [expr]] */
static pld_expr_t *parse_subscript_item(pld_parser_t *ps)
{
    pld_span_t start = ps->tok.span;
    pld_expr_t *lo = NULL, *hi = NULL, *step = NULL;
    if (!at(ps, PLD_T_COLON)) {
        lo = pld_parse_expr_test(ps);
        if (!lo)
            return NULL;
        if (!at(ps, PLD_T_COLON))
            return lo;
    }
    advance(ps); /* ':' */
    if (!at(ps, PLD_T_COLON) && !at(ps, PLD_T_COMMA) && !at(ps, PLD_T_RBRACK)) {
        hi = pld_parse_expr_test(ps);
        if (!hi)
            return NULL;
    }
    if (accept(ps, PLD_T_COLON)) {
        if (!at(ps, PLD_T_COMMA) && !at(ps, PLD_T_RBRACK)) {
            step = pld_parse_expr_test(ps);
            if (!step)
                return NULL;
        }
    }
    pld_expr_t *e = pld_parse_mk(ps, PLD_EX_SLICE, span_from(ps, start));
    if (!e)
        return NULL;
    e->u.slice.lo = lo;
    e->u.slice.hi = hi;
    e->u.slice.step = step;
    return e;
}

static pld_expr_t *parse_subscript(pld_parser_t *ps, pld_expr_t *obj)
{
    advance(ps); /* '[' */
    pld_parse_vec_t items = {0};
    while (!at(ps, PLD_T_RBRACK)) {
        pld_expr_t *it = parse_subscript_item(ps);
        if (!it) {
            pld_mem_free(items.v);
            return NULL;
        }
        pld_parse_vec_push(ps, &items, it);
        if (!accept(ps, PLD_T_COMMA))
            break;
    }
    if (items.n == 0 && at(ps, PLD_T_RBRACK)) {
        pld_mem_free(items.v);
        pld_parse_error_here(ps, "empty subscript%s", "");
        return NULL;
    }
    if (!pld_parse_expect(ps, PLD_T_RBRACK, "',' or ']' in subscript")) {
        pld_mem_free(items.v);
        return NULL;
    }
    pld_expr_t *e = pld_parse_mk(ps, PLD_EX_SUBSCRIPT, span_from(ps, obj->span));
    int n = items.n;
    pld_expr_t **it = (pld_expr_t **)pld_parse_vec_finish(ps, &items);
    if (!e)
        return NULL;
    e->u.sub.obj = obj;
    e->u.sub.items = it;
    e->u.sub.n = n;
    for (int i = 0; i < n; i++)
        if (!pld_parse_grow(ps, e, it ? it[i] : NULL))
            return NULL;
    return pld_parse_grow(ps, e, obj);
}

/* '(' / '[' sequence: items separated by commas; returns TUPLE/LIST or the
 * parenthesised expression itself. */
static pld_expr_t *parse_seq(pld_parser_t *ps, pld_tok_kind_t close, pld_expr_kind_t kind)
{
    pld_span_t start = ps->tok.span;
    advance(ps);
    pld_parse_vec_t items = {0};
    int commas = 0;
    while (!at(ps, close)) {
        pld_expr_t *it = pld_parse_expr_test(ps);
        if (!it) {
            pld_mem_free(items.v);
            return NULL;
        }
        if (at(ps, PLD_T_FOR)) {
            pld_mem_free(items.v);
            pld_parse_error_here(ps, "comprehensions are not supported%s", "");
            return NULL;
        }
        pld_parse_vec_push(ps, &items, it);
        if (!accept(ps, PLD_T_COMMA))
            break;
        commas++;
    }
    if (!pld_parse_expect(ps, close, close == PLD_T_RPAREN ? "',' or ')'" : "',' or ']'")) {
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
    pld_expr_t *e = pld_parse_mk(ps, kind, span_from(ps, start));
    int n = items.n;
    pld_expr_t **it = (pld_expr_t **)pld_parse_vec_finish(ps, &items);
    if (!e)
        return NULL;
    e->u.seq.items = it;
    e->u.seq.n = n;
    e->u.seq.trailing_comma = commas >= n && n > 0;
    for (int i = 0; i < n; i++)
        if (!pld_parse_grow(ps, e, it ? it[i] : NULL))
            return NULL;
    return e;
}

/* dict ::= '{' [ expr ':' expr { ',' expr ':' expr } [','] ] '}' */
static pld_expr_t *parse_dict(pld_parser_t *ps)
{
    pld_span_t start = ps->tok.span;
    advance(ps);
    pld_parse_vec_t keys = {0}, vals = {0};
    while (!at(ps, PLD_T_RBRACE)) {
        pld_expr_t *k = pld_parse_expr_test(ps);
        if (!k || !pld_parse_expect(ps, PLD_T_COLON, "':' in dict literal"))
            goto fail;
        pld_expr_t *v = pld_parse_expr_test(ps);
        if (!v)
            goto fail;
        pld_parse_vec_push(ps, &keys, k);
        pld_parse_vec_push(ps, &vals, v);
        if (!accept(ps, PLD_T_COMMA))
            break;
    }
    if (!pld_parse_expect(ps, PLD_T_RBRACE, "',' or '}'"))
        goto fail;
    pld_expr_t *e = pld_parse_mk(ps, PLD_EX_DICT, span_from(ps, start));
    int n = keys.n;
    pld_expr_t **kk = (pld_expr_t **)pld_parse_vec_finish(ps, &keys);
    pld_expr_t **vv = (pld_expr_t **)pld_parse_vec_finish(ps, &vals);
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
static pld_expr_t *parse_atom(pld_parser_t *ps)
{
    pld_token_t t = ps->tok;
    pld_expr_t *e;
    switch (t.kind) {
    case PLD_T_NAME:
        advance(ps);
        if ((e = pld_parse_mk(ps, PLD_EX_NAME, t.span)))
            e->u.name = t.text;
        return e;
    case PLD_T_INT:
        advance(ps);
        if ((e = pld_parse_mk(ps, PLD_EX_INT, t.span)))
            e->u.ival = t.ival;
        return e;
    case PLD_T_FLOAT:
        advance(ps);
        if ((e = pld_parse_mk(ps, PLD_EX_FLOAT, t.span)))
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
        e = pld_parse_mk(ps, PLD_EX_STR, span_from(ps, start));
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
        if ((e = pld_parse_mk(ps, PLD_EX_BOOL, t.span)))
            e->u.bval = t.kind == PLD_T_TRUE;
        return e;
    case PLD_T_NONE:
        advance(ps);
        return pld_parse_mk(ps, PLD_EX_NONE, t.span);
    case PLD_T_ELLIPSIS:
        advance(ps);
        return pld_parse_mk(ps, PLD_EX_ELLIPSIS, t.span);
    case PLD_T_LPAREN:
        return parse_seq(ps, PLD_T_RPAREN, PLD_EX_TUPLE);
    case PLD_T_LBRACK:
        return parse_seq(ps, PLD_T_RBRACK, PLD_EX_LIST);
    case PLD_T_LBRACE:
        return parse_dict(ps);
    default:
        if (!reject_unsupported_expr(ps))
            pld_parse_expected(ps, "an expression");
        return NULL;
    }
}

/* primary ::= atom { '.' NAME | '(' arglist ')' | '[' subscripts ']' } */
pld_expr_t *pld_parse_expr_primary(pld_parser_t *ps)
{
    pld_expr_t *e = parse_atom(ps);
    while (e) {
        if (at(ps, PLD_T_DOT)) {
            advance(ps);
            if (!at(ps, PLD_T_NAME)) {
                pld_parse_expected(ps, "an attribute name after '.'");
                return NULL;
            }
            pld_token_t nt = ps->tok;
            advance(ps);
            pld_expr_t *a = pld_parse_mk(ps, PLD_EX_ATTR, span_from(ps, e->span));
            if (!a)
                return NULL;
            a->u.attr.obj = e;
            a->u.attr.attr = nt.text;
            a->u.attr.attr_span = nt.span;
            e = pld_parse_grow(ps, a, e);
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

static pld_expr_t *mk_bin(pld_parser_t *ps, pld_binop_t op, pld_expr_t *a, pld_expr_t *b)
{
    pld_expr_t *e = pld_parse_mk(ps, PLD_EX_BINARY, pld_span_join(a->span, b->span));
    if (!e)
        return NULL;
    e->u.bin.op = op;
    e->u.bin.a = a;
    e->u.bin.b = b;
    return pld_parse_grow(ps, pld_parse_grow(ps, e, a), b);
}

static pld_expr_t *mk_un(pld_parser_t *ps, pld_unop_t op, pld_span_t start, pld_expr_t *a)
{
    pld_expr_t *e = pld_parse_mk(ps, PLD_EX_UNARY, pld_span_join(start, a->span));
    if (!e)
        return NULL;
    e->u.un.op = op;
    e->u.un.a = a;
    return pld_parse_grow(ps, e, a);
}

static pld_expr_t *parse_factor(pld_parser_t *ps);

/* power ::= primary [ '**' factor ] */
static pld_expr_t *parse_power(pld_parser_t *ps)
{
    pld_expr_t *a = pld_parse_expr_primary(ps);
    if (!a || !at(ps, PLD_T_DSTAR))
        return a;
    advance(ps);
    if (!pld_parse_enter(ps))
        return NULL;
    pld_expr_t *b = parse_factor(ps);
    leave(ps);
    return b ? mk_bin(ps, PLD_OP_POW, a, b) : NULL;
}

/* factor ::= ('-' | '+' | '~') factor | power */
static pld_expr_t *parse_factor(pld_parser_t *ps)
{
    if (at(ps, PLD_T_MINUS) || at(ps, PLD_T_PLUS) || at(ps, PLD_T_TILDE)) {
        pld_span_t start = ps->tok.span;
        pld_unop_t op = at(ps, PLD_T_MINUS) ? PLD_UOP_NEG : at(ps, PLD_T_PLUS) ? PLD_UOP_POS : PLD_UOP_INVERT;
        advance(ps);
        if (!pld_parse_enter(ps))
            return NULL;
        pld_expr_t *a = parse_factor(ps);
        leave(ps);
        return a ? mk_un(ps, op, start, a) : NULL;
    }
    return parse_power(ps);
}

/* The binary operators by precedence, loosest first (docs/ir_text_grammar.md §2):
 *
 *   or_test    ::= xor_test { 'or' xor_test }
 *   xor_test   ::= and_test { 'xor' and_test }    (printer-only pseudo operator)
 *   and_test   ::= not_test { 'and' not_test }
 *   not_test   ::= 'not' not_test | comparison
 *   comparison ::= bor [ comp_op bor ]            (chains and 'in' / 'is' are rejected, as PyPTO does)
 *   bor        ::= bxor { '|' bxor }
 *   bxor       ::= band { '^' band }
 *   band       ::= shift { '&' shift }
 *   shift      ::= arith { ('<<' | '>>') arith }
 *   arith      ::= term { ('+' | '-') term }
 *   term       ::= factor { ('*' | '/' | '//' | '%') factor }   ('@' is rejected)
 *
 * One table and one function (parse_binary, precedence climbing) parse all of
 * them: every level but comparison is left-associative, so a chain is a loop
 * and a right operand is parsed one level tighter; 'not' is a prefix at its
 * level. */
enum {
    PREC_OR = 1, PREC_XOR, PREC_AND, PREC_NOT, PREC_CMP, PREC_BOR, PREC_BXOR, PREC_BAND, PREC_SHIFT, PREC_ARITH,
    PREC_TERM
};

typedef struct binop {
    pld_tok_kind_t tok;
    const char *name;   /* the spelling of a NAME token used as an operator (xor), else NULL */
    int prec;           /* PREC_* */
    pld_binop_t op;
    const char *reject; /* an operator the DSL does not have: the error, else NULL */
} binop_t;

static const binop_t binops[] = {
    {PLD_T_OR, NULL, PREC_OR, PLD_OP_OR, NULL},
    {PLD_T_NAME, "xor", PREC_XOR, PLD_OP_XOR, NULL},
    {PLD_T_AND, NULL, PREC_AND, PLD_OP_AND, NULL},
    {PLD_T_EQEQ, NULL, PREC_CMP, PLD_OP_EQ, NULL},
    {PLD_T_NE, NULL, PREC_CMP, PLD_OP_NE, NULL},
    {PLD_T_LT, NULL, PREC_CMP, PLD_OP_LT, NULL},
    {PLD_T_LE, NULL, PREC_CMP, PLD_OP_LE, NULL},
    {PLD_T_GT, NULL, PREC_CMP, PLD_OP_GT, NULL},
    {PLD_T_GE, NULL, PREC_CMP, PLD_OP_GE, NULL},
    {PLD_T_PIPE, NULL, PREC_BOR, PLD_OP_BITOR, NULL},
    {PLD_T_CARET, NULL, PREC_BXOR, PLD_OP_BITXOR, NULL},
    {PLD_T_AMP, NULL, PREC_BAND, PLD_OP_BITAND, NULL},
    {PLD_T_LSHIFT, NULL, PREC_SHIFT, PLD_OP_LSHIFT, NULL},
    {PLD_T_RSHIFT, NULL, PREC_SHIFT, PLD_OP_RSHIFT, NULL},
    {PLD_T_PLUS, NULL, PREC_ARITH, PLD_OP_ADD, NULL},
    {PLD_T_MINUS, NULL, PREC_ARITH, PLD_OP_SUB, NULL},
    {PLD_T_STAR, NULL, PREC_TERM, PLD_OP_MUL, NULL},
    {PLD_T_SLASH, NULL, PREC_TERM, PLD_OP_DIV, NULL},
    {PLD_T_DSLASH, NULL, PREC_TERM, PLD_OP_FLOORDIV, NULL},
    {PLD_T_PERCENT, NULL, PREC_TERM, PLD_OP_MOD, NULL},
    {PLD_T_AT, NULL, PREC_TERM, PLD_OP_MUL, "the '@' operator is not supported; use pl.matmul"},
};

/* the binary operator at the current token, NULL when there is none */
static const binop_t *binop_at(pld_parser_t *ps)
{
    for (size_t i = 0; i < sizeof binops / sizeof binops[0]; i++)
        if (at(ps, binops[i].tok) && (!binops[i].name || strcmp(ps->tok.text, binops[i].name) == 0))
            return &binops[i];
    return NULL;
}

/* The levels from `min` (PREC_*) to term: an operand ('not' not_test where a
 * not_test may start, else factor), then every operator at least as tight as
 * `min`, each with its right operand one level tighter. */
static pld_expr_t *parse_binary(pld_parser_t *ps, int min)
{
    pld_expr_t *a;
    int bor = 1; /* a is a bor (no operator looser than '|' applied): a comparison's left operand */
    if (min <= PREC_NOT && at(ps, PLD_T_NOT)) {
        pld_span_t start = ps->tok.span;
        advance(ps);
        if (!pld_parse_enter(ps))
            return NULL;
        pld_expr_t *x = parse_binary(ps, PREC_NOT);
        leave(ps);
        a = x ? mk_un(ps, PLD_UOP_NOT, start, x) : NULL;
        bor = 0;
    } else {
        a = parse_factor(ps);
    }
    while (a) {
        if (bor && min <= PREC_CMP &&
            (at(ps, PLD_T_IN) || at(ps, PLD_T_IS) || (at(ps, PLD_T_NOT) && peek2(ps)->kind == PLD_T_IN))) {
            pld_parse_error_here(ps, "'in' / 'is' comparisons are not supported%s", "");
            return NULL;
        }
        const binop_t *o = binop_at(ps);
        if (!o || o->prec < min)
            break;
        if (o->reject) {
            pld_parse_error_here(ps, "%s", o->reject);
            return NULL;
        }
        advance(ps);
        pld_expr_t *b = parse_binary(ps, o->prec + 1);
        if (!b)
            return NULL;
        if (o->prec <= PREC_CMP)
            bor = 0;
        if (o->prec == PREC_CMP) {
            const binop_t *o2 = binop_at(ps);
            if (o2 && o2->prec == PREC_CMP) {
                pld_parse_error_here(ps, "chained comparisons are not supported; combine two comparisons with "
                                         "'and'%s", "");
                return NULL;
            }
        }
        a = mk_bin(ps, o->op, a, b);
    }
    return a;
}

/* test ::= or_test [ 'if' or_test 'else' test ]   (the conditional only in a
 * module constant, ps->allow_cond; lambdas are rejected) */
pld_expr_t *pld_parse_expr_test(pld_parser_t *ps)
{
    if (reject_unsupported_expr(ps))
        return NULL;
    if (!pld_parse_enter(ps))
        return NULL;
    pld_expr_t *e = parse_binary(ps, PREC_OR);
    if (e && at(ps, PLD_T_IF) && ps->allow_cond) {
        pld_span_t if_span = ps->tok.span;
        advance(ps);
        pld_expr_t *c = parse_binary(ps, PREC_OR);
        pld_expr_t *b = c && pld_parse_expect(ps, PLD_T_ELSE, "'else' in the conditional expression")
                            ? pld_parse_expr_test(ps) : NULL;
        pld_expr_t *x = b ? pld_parse_mk(ps, PLD_EX_COND, pld_span_join(e->span, b->span)) : NULL;
        if (x) {
            x->u.cond.a = e;
            x->u.cond.cond = c;
            x->u.cond.b = b;
            x->u.cond.if_span = if_span;
            x = pld_parse_grow(ps, pld_parse_grow(ps, pld_parse_grow(ps, x, e), c), b);
        }
        e = x;
    }
    leave(ps);
    if (e && at(ps, PLD_T_IF)) {
        pld_parse_error_here(ps, "conditional expressions (a if c else b) are not supported; use an if statement%s", "");
        return NULL;
    }
    if (e && at(ps, PLD_T_WALRUS)) {
        pld_parse_error_here(ps, "assignment expressions (:=) are not supported%s", "");
        return NULL;
    }
    return e;
}

/* testlist ::= test { ',' test } [','] -> a TUPLE when there is a comma */
pld_expr_t *pld_parse_expr_testlist(pld_parser_t *ps)
{
    pld_expr_t *first = pld_parse_expr_test(ps);
    if (!first || !at(ps, PLD_T_COMMA))
        return first;
    pld_parse_vec_t items = {0};
    pld_parse_vec_push(ps, &items, first);
    int trailing = 0;
    while (accept(ps, PLD_T_COMMA)) {
        trailing = 1;
        if (at(ps, PLD_T_NEWLINE) || at(ps, PLD_T_ASSIGN) || at(ps, PLD_T_COLON) || at(ps, PLD_T_IN) ||
            at(ps, PLD_T_SEMI) || at(ps, PLD_T_EOF))
            break;
        pld_expr_t *it = pld_parse_expr_test(ps);
        if (!it) {
            pld_mem_free(items.v);
            return NULL;
        }
        pld_parse_vec_push(ps, &items, it);
        trailing = 0;
    }
    pld_expr_t *e = pld_parse_mk(ps, PLD_EX_TUPLE, span_from(ps, first->span));
    int n = items.n;
    pld_expr_t **it = (pld_expr_t **)pld_parse_vec_finish(ps, &items);
    if (!e)
        return NULL;
    e->u.seq.items = it;
    e->u.seq.n = n;
    e->u.seq.trailing_comma = trailing;
    for (int i = 0; i < n; i++)
        if (!pld_parse_grow(ps, e, it ? it[i] : NULL))
            return NULL;
    return e;
}

/* target_list ::= target { ',' target } [','] ; target ::= primary (no operators,
 * so that `for x in ...` does not read `x in ...` as a comparison) */
pld_expr_t *pld_parse_expr_targets(pld_parser_t *ps)
{
    pld_expr_t *first = pld_parse_expr_primary(ps);
    if (!first || !at(ps, PLD_T_COMMA))
        return first;
    pld_parse_vec_t items = {0};
    pld_parse_vec_push(ps, &items, first);
    int trailing = 0;
    while (accept(ps, PLD_T_COMMA)) {
        trailing = 1;
        if (at(ps, PLD_T_IN))
            break;
        pld_expr_t *it = pld_parse_expr_primary(ps);
        if (!it) {
            pld_mem_free(items.v);
            return NULL;
        }
        pld_parse_vec_push(ps, &items, it);
        trailing = 0;
    }
    pld_expr_t *e = pld_parse_mk(ps, PLD_EX_TUPLE, span_from(ps, first->span));
    int n = items.n;
    pld_expr_t **it = (pld_expr_t **)pld_parse_vec_finish(ps, &items);
    if (!e)
        return NULL;
    e->u.seq.items = it;
    e->u.seq.n = n;
    e->u.seq.trailing_comma = trailing;
    for (int i = 0; i < n; i++)
        if (!pld_parse_grow(ps, e, it ? it[i] : NULL))
            return NULL;
    return e;
}

