/* pld_parse.c - recursive-descent parser for the Python-syntax IR text: the
 * parser's state and helpers (tokens, errors, allocation, nesting limits), the
 * module level (imports, constants, decorators, the @pl.program class,
 * functions and their parameters) and the entry points. Expressions are in
 * pld_parse_expr.c, statements in pld_parse_stmt.c (see pld_parse_int.h).
 * Grammar: docs/ir_text_grammar.md §2. Each parse function names its production. */
#include "pld_parse_int.h"
#include "pld_mem.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ helpers */

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
void pld_parse_error_here(pld_parser_t *ps, const char *fmt, const char *a)
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

void pld_parse_error_at(pld_parser_t *ps, pld_span_t sp, const char *fmt, const char *a)
{
    if (ps->panic)
        return;
    ps->panic = 1;
    pld_diag_add(&ps->p->diags, PLD_SEV_ERROR, sp, fmt, a);
}

void pld_parse_expected(pld_parser_t *ps, const char *what)
{
    char found[96], m[200];
    describe_tok(&ps->tok, found, sizeof found);
    if (ps->tok.kind == PLD_T_INDENT)
        snprintf(m, sizeof m, "unexpected indent (expected %s)", what);
    else
        snprintf(m, sizeof m, "expected %s, found %s", what, found);
    pld_parse_error_here(ps, "%s", m);
}

int pld_parse_expect(pld_parser_t *ps, pld_tok_kind_t k, const char *what)
{
    if (accept(ps, k))
        return 1;
    pld_parse_expected(ps, what ? what : pld_tok_name(k));
    return 0;
}

void *pld_parse_alloc(pld_parser_t *ps, size_t n)
{
    void *v = pld_arena_alloc(&ps->p->arena, n);
    if (!v) {
        ps->oom = 1;
        ps->p->diags.oom = 1;
    }
    return v;
}

pld_expr_t *pld_parse_mk(pld_parser_t *ps, pld_expr_kind_t k, pld_span_t sp)
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
pld_expr_t *pld_parse_grow(pld_parser_t *ps, pld_expr_t *e, const pld_expr_t *child)
{
    if (!e)
        return NULL;
    if (child && child->height + 1 > e->height)
        e->height = child->height + 1;
    if (e->height > PLD_PARSE_MAX_HEIGHT) {
        pld_parse_error_at(ps, e->span, "expression nested too deeply (limit %s levels); split it into several statements",
                 "1000");
        return NULL;
    }
    return e;
}

void pld_parse_vec_push(pld_parser_t *ps, pld_parse_vec_t *vv, void *x)
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

void **pld_parse_vec_finish(pld_parser_t *ps, pld_parse_vec_t *vv)
{
    void **out = NULL;
    if (vv->n > 0) {
        out = pld_parse_alloc(ps, (size_t)vv->n * sizeof *out);
        if (out)
            memcpy(out, vv->v, (size_t)vv->n * sizeof *out);
    }
    pld_mem_free(vv->v);
    vv->v = NULL;
    vv->cap = 0;
    return out;
}

/* a's comments followed by b's (either may be NULL); relinks, no copy. */
pld_comment_t *pld_parse_comments_join(pld_comment_t *a, pld_comment_t *b)
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
void pld_parse_stop(pld_parser_t *ps)
{
    pld_lex_stop(ps->lx);
    if (ps->has_next)
        ps->next = pld_lex_next(ps->lx);
}

int pld_parse_enter(pld_parser_t *ps)
{
    if (++ps->depth > PLD_PARSE_MAX_DEPTH) {
        pld_parse_error_here(ps, "program nested too deeply (limit %s levels)", "100");
        pld_parse_stop(ps);
        return 0;
    }
    return 1;
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
static int parse_params(pld_parser_t *ps, pld_func_t *f, int in_class)
{
    if (!pld_parse_expect(ps, PLD_T_LPAREN, "'(' after the function name"))
        return 0;
    pld_param_t *params = NULL;
    int n = 0, cap = 0, idx = 0;
    while (!at(ps, PLD_T_RPAREN)) {
        if (at(ps, PLD_T_STAR) || at(ps, PLD_T_DSTAR) || at(ps, PLD_T_SLASH)) {
            pld_parse_error_here(ps, "*args, **kwargs and positional-only markers are not supported in signatures%s", "");
            return 0;
        }
        if (!at(ps, PLD_T_NAME)) {
            pld_parse_expected(ps, "a parameter name");
            return 0;
        }
        pld_token_t nt = ps->tok;
        advance(ps);
        if (idx == 0 && in_class && strcmp(nt.text, "self") == 0 && !at(ps, PLD_T_COLON)) {
            f->has_self = 1;
        } else {
            if (!at(ps, PLD_T_COLON)) {
                pld_parse_error_at(ps, nt.span, "parameter '%s' needs a type annotation", nt.text);
                return 0;
            }
            advance(ps);
            pld_expr_t *ann = pld_parse_expr_test(ps);
            if (!ann)
                return 0;
            if (at(ps, PLD_T_ASSIGN)) {
                pld_parse_error_here(ps, "default parameter values are not supported%s", "");
                return 0;
            }
            for (int i = 0; i < n; i++)
                if (params[i].name == nt.text) {
                    pld_parse_error_at(ps, nt.span, "duplicate parameter '%s'", nt.text);
                    return 0;
                }
            if (n == cap) {
                int nc = cap ? cap * 2 : 8;
                pld_param_t *np = pld_parse_alloc(ps, (size_t)nc * sizeof *np);
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
    if (!pld_parse_expect(ps, PLD_T_RPAREN, "',' or ')' in the parameter list"))
        return 0;
    f->params = params;
    f->nparams = n;
    return 1;
}

/* function_def ::= decorator NEWLINE 'def' NAME '(' params ')' ['->' ann] ':' suite */
static pld_func_t *parse_function(pld_parser_t *ps, pld_expr_t *deco, pld_span_t deco_span, int in_class,
                                  pld_comment_t *comments)
{
    uint32_t header_indent = pld_lex_line_indent(ps->lx, ps->tok.span.off);
    if (!pld_parse_expect(ps, PLD_T_DEF, "'def' after the decorator"))
        return NULL;
    if (!at(ps, PLD_T_NAME)) {
        pld_parse_expected(ps, "a function name");
        return NULL;
    }
    pld_func_t *f = pld_parse_alloc(ps, sizeof *f);
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
        f->ret_ann = pld_parse_expr_test(ps);
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
            f->raw_line = sp.line;
            if (!pld_parse_expect(ps, PLD_T_NEWLINE, "end of line"))
                return NULL;
            return f;
        }
    }
    if (!pld_parse_stmt_suite(ps, &f->body))
        return NULL;
    return f;
}

static pld_expr_t *parse_decorator(pld_parser_t *ps, pld_span_t *span)
{
    advance(ps); /* '@' */
    pld_span_t start = ps->tok.span;
    pld_expr_t *e = pld_parse_expr_primary(ps);
    if (!e)
        return NULL;
    *span = span_from(ps, start);
    if (!pld_parse_expect(ps, PLD_T_NEWLINE, "end of line after the decorator"))
        return NULL;
    return e;
}

static void push_func(pld_parser_t *ps, pld_parse_vec_t *funcs, pld_func_t *f)
{
    pld_parse_vec_push(ps, funcs, f);
}

/* Skips an undecorated method: Python ignores it as a PyPTO function. */
static void skip_plain_def(pld_parser_t *ps)
{
    uint32_t header_indent = pld_lex_line_indent(ps->lx, ps->tok.span.off);
    while (!at(ps, PLD_T_COLON) && !at(ps, PLD_T_EOF) && !at(ps, PLD_T_NEWLINE))
        advance(ps);
    if (at(ps, PLD_T_COLON) && pld_lex_capture_block(ps->lx, header_indent, NULL)) {
        advance(ps);
        accept(ps, PLD_T_NEWLINE);
        return;
    }
    pld_parse_stmt_sync(ps);
}

/* program_def ::= decorator 'class' NAME ['(' ')'] ':' NEWLINE INDENT { class_item } DEDENT */
static void parse_class(pld_parser_t *ps, pld_expr_t *deco, pld_parse_vec_t *funcs, pld_comment_t *comments)
{
    pld_program_t *p = ps->p;
    advance(ps); /* 'class' */
    if (!at(ps, PLD_T_NAME)) {
        pld_parse_expected(ps, "a class name");
        return;
    }
    if (p->class_name) {
        pld_parse_error_here(ps, "a program text may define only one @pl.program class%s", "");
        return;
    }
    p->class_name = ps->tok.text;
    p->class_span = ps->tok.span;
    p->class_deco = deco;
    p->class_comments = comments;
    advance(ps);
    if (accept(ps, PLD_T_LPAREN)) {
        if (!pld_parse_expect(ps, PLD_T_RPAREN, "')' (base classes are not supported)"))
            return;
    }
    if (!pld_parse_expect(ps, PLD_T_COLON, "':'"))
        return;
    if (!pld_parse_expect(ps, PLD_T_NEWLINE, "a new line after 'class ...:'"))
        return;
    if (!at(ps, PLD_T_INDENT)) {
        pld_parse_expected(ps, "an indented class body");
        return;
    }
    advance(ps);
    while (!at(ps, PLD_T_DEDENT) && !at(ps, PLD_T_EOF) && !ps->oom) {
        if (ps->panic)
            pld_parse_stmt_sync(ps);
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
            pld_parse_vec_t tmp = {0};
            pld_parse_stmt_simple(ps, &tmp);
            pld_mem_free(tmp.v);
            continue;
        }
        pld_parse_error_here(ps, "expected a decorated method (@pl.function) in the program class%s", "");
    }
    accept(ps, PLD_T_DEDENT);
}

/* import_stmt ::= 'import' dotted ['as' NAME] | 'from' dotted 'import' NAME ['as' NAME] {',' …} */
static void parse_import(pld_parser_t *ps, pld_parse_vec_t *imports, pld_comment_t *comments)
{
    pld_span_t start = ps->tok.span;
    int first = imports->n;
    int is_from = at(ps, PLD_T_FROM);
    advance(ps);
    pld_buf_t b;
    pld_buf_init(&b);
    for (;;) {
        if (!at(ps, PLD_T_NAME)) {
            pld_parse_expected(ps, "a module name");
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
        pld_import_t *im = pld_parse_alloc(ps, sizeof *im);
        if (!im)
            return;
        im->module = module;
        if (accept(ps, PLD_T_AS)) {
            if (!at(ps, PLD_T_NAME)) {
                pld_parse_expected(ps, "a name after 'as'");
                return;
            }
            im->alias = ps->tok.text;
            advance(ps);
        }
        im->span = span_from(ps, start);
        pld_parse_vec_push(ps, imports, im);
    } else {
        if (!pld_parse_expect(ps, PLD_T_IMPORT, "'import'"))
            return;
        int paren = accept(ps, PLD_T_LPAREN);
        do {
            if (paren && at(ps, PLD_T_RPAREN))
                break;
            if (!at(ps, PLD_T_NAME)) {
                pld_parse_expected(ps, at(ps, PLD_T_STAR) ? "an explicit name ('import *' is not supported)" : "a name to import");
                return;
            }
            pld_import_t *im = pld_parse_alloc(ps, sizeof *im);
            if (!im)
                return;
            im->module = module;
            im->from_name = ps->tok.text;
            im->alias = ps->tok.text;
            advance(ps);
            if (accept(ps, PLD_T_AS)) {
                if (!at(ps, PLD_T_NAME)) {
                    pld_parse_expected(ps, "a name after 'as'");
                    return;
                }
                im->alias = ps->tok.text;
                advance(ps);
            }
            im->span = span_from(ps, start);
            pld_parse_vec_push(ps, imports, im);
        } while (accept(ps, PLD_T_COMMA));
        if (paren && !pld_parse_expect(ps, PLD_T_RPAREN, "')'"))
            return;
    }
    uint32_t nl_line = ps->tok.span.line;
    if (!at(ps, PLD_T_EOF) && !pld_parse_expect(ps, PLD_T_NEWLINE, "end of line after the import"))
        return;
    /* the comments before the statement, then a trailing one (moved above it,
     * as for statements), go with its first import */
    if (imports->n > first) {
        pld_import_t *im = imports->v[first];
        im->comments = pld_parse_comments_join(comments, pld_lex_take_comments(ps->lx, nl_line + 1));
    }
}

pld_status_t pld_parse_program(pld_program_t *p)
{
    /* NUL bytes are not text (Python refuses them too); they would also cut
     * names and comments short when treated as C strings */
    pld_parser_t ps;
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
    pld_parse_vec_t imports = {0}, consts = {0}, funcs = {0};
    /* comments not attached yet: those before a module docstring or an ignored
     * statement go with the next item that keeps comments */
    pld_comment_t *pending = NULL;
    while (!at(&ps, PLD_T_EOF) && !ps.oom) {
        if (ps.panic)
            pld_parse_stmt_sync(&ps);
        if (at(&ps, PLD_T_EOF))
            break;
        if (at(&ps, PLD_T_NEWLINE)) {
            advance(&ps);
            continue;
        }
        if (at(&ps, PLD_T_INDENT)) {
            pld_parse_error_here(&ps, "unexpected indent%s", "");
            continue;
        }
        if (at(&ps, PLD_T_DEDENT)) {
            advance(&ps);
            continue;
        }
        pld_comment_t *c = pld_parse_comments_join(pending, pld_lex_take_comments(ps.lx, ps.tok.span.line));
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
                pld_parse_expected(&ps, "'class' or 'def' after the decorator");
            }
            continue;
        }
        if (at(&ps, PLD_T_CLASS)) {
            pld_parse_error_here(&ps, "the program class must be decorated with @pl.program%s", "");
            continue;
        }
        if (at(&ps, PLD_T_DEF)) {
            pld_parse_error_here(&ps, "a top-level function must be decorated with @pl.function%s", "");
            continue;
        }
        if (at(&ps, PLD_T_NAME) && (peek2(&ps)->kind == PLD_T_ASSIGN || ps.next.kind == PLD_T_COLON)) {
            pld_const_decl_t *cd = pld_parse_alloc(&ps, sizeof *cd);
            if (!cd)
                break;
            cd->name = ps.tok.text;
            cd->span = ps.tok.span;
            cd->comments = c;
            advance(&ps);
            if (accept(&ps, PLD_T_COLON)) { /* NAME: ann = value (annotation ignored) */
                if (!pld_parse_expr_test(&ps))
                    continue;
            }
            if (!pld_parse_expect(&ps, PLD_T_ASSIGN, "'='"))
                continue;
            /* module constants are Python evaluated before IR construction:
             * conditional expressions are fine there (not in functions) */
            ps.allow_cond = 1;
            cd->value = pld_parse_expr_testlist(&ps);
            ps.allow_cond = 0;
            if (!cd->value)
                continue;
            uint32_t nl_line = ps.tok.span.line;
            if (!at(&ps, PLD_T_EOF) && !pld_parse_expect(&ps, PLD_T_NEWLINE, "end of line after the constant"))
                continue;
            /* a trailing comment moves above the constant, as for statements */
            cd->comments = pld_parse_comments_join(cd->comments, pld_lex_take_comments(ps.lx, nl_line + 1));
            pld_parse_vec_push(&ps, &consts, cd);
            continue;
        }
        if (at(&ps, PLD_T_STRING)) { /* module docstring */
            pending = c;
            pld_parse_vec_t tmp = {0};
            pld_parse_stmt_simple(&ps, &tmp);
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
        pld_parse_error_here(&ps, "unsupported module-level statement (expected an import, a constant, or the "
                        "@pl.program class)%s", "");
    }
    /* comments after the last statement of the file (and any still pending) */
    if (!ps.oom)
        p->tail_comments = pld_parse_comments_join(pending, pld_lex_take_comments(ps.lx, UINT32_MAX));
    p->nimports = imports.n;
    p->imports = NULL;
    if (imports.n) {
        p->imports = pld_parse_alloc(&ps, (size_t)imports.n * sizeof *p->imports);
        for (int i = 0; p->imports && i < imports.n; i++)
            p->imports[i] = *(pld_import_t *)imports.v[i];
    }
    pld_mem_free(imports.v);
    p->nconsts = consts.n;
    p->consts = NULL;
    if (consts.n) {
        p->consts = pld_parse_alloc(&ps, (size_t)consts.n * sizeof *p->consts);
        for (int i = 0; p->consts && i < consts.n; i++)
            p->consts[i] = *(pld_const_decl_t *)consts.v[i];
    }
    pld_mem_free(consts.v);
    p->nfuncs = funcs.n;
    p->funcs = (pld_func_t **)pld_parse_vec_finish(&ps, &funcs);
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
