/* pld_ast.c - program lifetime, name interning and node constructors. */
#include "pld_ast.h"
#include "pld_mem.h"

#include <string.h>

struct pld_intern {
    const char **slots;
    size_t cap;  /* power of two */
    size_t n;
};

static uint32_t hash_bytes(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h;
}

pld_program_t *pld_program_create(const char *file, const char *src, size_t len)
{
    pld_program_t *p = pld_mem_calloc(1, sizeof *p);
    if (!p)
        return NULL;
    pld_arena_init(&p->arena);
    p->file = pld_mem_strdup(file ? file : "<input>");
    p->src = pld_mem_alloc(len + 1);
    p->names = pld_mem_calloc(1, sizeof *p->names);
    if (!p->file || !p->src || !p->names) {
        pld_program_destroy(p);
        return NULL;
    }
    memcpy(p->src, src, len);
    p->src[len] = '\0';
    p->src_len = len;
    pld_diag_list_init(&p->diags, p->file, p->src, p->src_len);
    return p;
}

void pld_program_destroy(pld_program_t *p)
{
    if (!p)
        return;
    if (p->sema && p->sema_free)
        p->sema_free(p->sema);
    pld_diag_list_fini(&p->diags);
    pld_arena_fini(&p->arena);
    if (p->names)
        pld_mem_free(p->names->slots);
    pld_mem_free(p->names);
    pld_mem_free(p->src);
    pld_mem_free(p->file);
    pld_mem_free(p);
}

static int intern_grow(pld_intern_t *t)
{
    size_t cap = t->cap ? t->cap * 2 : 256;
    const char **slots = pld_mem_calloc(cap, sizeof *slots);
    if (!slots)
        return 0;
    for (size_t i = 0; i < t->cap; i++) {
        const char *s = t->slots[i];
        if (!s)
            continue;
        size_t j = hash_bytes(s, strlen(s)) & (cap - 1);
        while (slots[j])
            j = (j + 1) & (cap - 1);
        slots[j] = s;
    }
    pld_mem_free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return 1;
}

const char *pld_ast_intern(pld_program_t *p, const char *s, size_t n)
{
    pld_intern_t *t = p->names;
    if ((t->n + 1) * 2 > t->cap && !intern_grow(t))
        return NULL;
    size_t j = hash_bytes(s, n) & (t->cap - 1);
    while (t->slots[j]) {
        const char *e = t->slots[j];
        if (strncmp(e, s, n) == 0 && e[n] == '\0')
            return e;
        j = (j + 1) & (t->cap - 1);
    }
    char *d = pld_arena_strndup(&p->arena, s, n);
    if (!d)
        return NULL;
    t->slots[j] = d;
    t->n++;
    return d;
}

const char *pld_ast_intern_cstr(pld_program_t *p, const char *s)
{
    return pld_ast_intern(p, s, strlen(s));
}

pld_expr_t *pld_ast_expr(pld_program_t *p, pld_expr_kind_t k, pld_span_t sp)
{
    pld_expr_t *e = pld_arena_alloc(&p->arena, sizeof *e);
    if (!e)
        return NULL;
    e->kind = k;
    e->span = sp;
    e->op = -1;
    e->slot = -1;
    e->aux = -1;
    return e;
}

pld_stmt_t *pld_ast_stmt(pld_program_t *p, pld_stmt_kind_t k, pld_span_t sp)
{
    pld_stmt_t *s = pld_arena_alloc(&p->arena, sizeof *s);
    if (!s)
        return NULL;
    s->kind = k;
    s->span = sp;
    return s;
}

int pld_ast_dotted(const pld_expr_t *e, char *buf, size_t n)
{
    if (!e || n == 0)
        return 0;
    if (e->kind == PLD_EX_NAME) {
        size_t l = strlen(e->u.name);
        if (l + 1 > n)
            return 0;
        memcpy(buf, e->u.name, l + 1);
        return 1;
    }
    if (e->kind != PLD_EX_ATTR || !pld_ast_dotted(e->u.attr.obj, buf, n))
        return 0;
    size_t l = strlen(buf), a = strlen(e->u.attr.attr);
    if (l + 1 + a + 1 > n)
        return 0;
    buf[l] = '.';
    memcpy(buf + l + 1, e->u.attr.attr, a + 1);
    return 1;
}

pld_span_t pld_span_join(pld_span_t a, pld_span_t b)
{
    pld_span_t r = a;
    if (a.line == 0)
        return b;
    if (b.line == 0)
        return a;
    uint32_t end = b.off + b.len;
    if (a.off + a.len > end)
        end = a.off + a.len;
    r.len = end > a.off ? end - a.off : a.len;
    return r;
}

/* ---- searching a body for a call ---- */

static const pld_expr_t *find_in_expr(const pld_expr_t *e, int (*pred)(int op, void *ctx), void *ctx)
{
    if (!e)
        return NULL;
    const pld_expr_t *r = NULL;
    switch (e->kind) {
    case PLD_EX_CALL:
        if (e->op >= 0 && pred(e->op, ctx))
            return e;
        r = find_in_expr(e->u.call.fn, pred, ctx);
        for (int i = 0; !r && i < e->u.call.nargs; i++)
            r = find_in_expr(e->u.call.args[i].value, pred, ctx);
        return r;
    case PLD_EX_UNARY: return find_in_expr(e->u.un.a, pred, ctx);
    case PLD_EX_BINARY:
        return (r = find_in_expr(e->u.bin.a, pred, ctx)) ? r : find_in_expr(e->u.bin.b, pred, ctx);
    case PLD_EX_ATTR: return find_in_expr(e->u.attr.obj, pred, ctx);
    case PLD_EX_SUBSCRIPT:
        r = find_in_expr(e->u.sub.obj, pred, ctx);
        for (int i = 0; !r && i < e->u.sub.n; i++)
            r = find_in_expr(e->u.sub.items[i], pred, ctx);
        return r;
    case PLD_EX_SLICE:
        if ((r = find_in_expr(e->u.slice.lo, pred, ctx)) || (r = find_in_expr(e->u.slice.hi, pred, ctx)))
            return r;
        return find_in_expr(e->u.slice.step, pred, ctx);
    case PLD_EX_LIST:
    case PLD_EX_TUPLE:
        for (int i = 0; !r && i < e->u.seq.n; i++)
            r = find_in_expr(e->u.seq.items[i], pred, ctx);
        return r;
    case PLD_EX_DICT:
        for (int i = 0; !r && i < e->u.dict.n; i++)
            if (!(r = find_in_expr(e->u.dict.keys[i], pred, ctx)))
                r = find_in_expr(e->u.dict.vals[i], pred, ctx);
        return r;
    case PLD_EX_COND:
        if ((r = find_in_expr(e->u.cond.a, pred, ctx)) || (r = find_in_expr(e->u.cond.cond, pred, ctx)))
            return r;
        return find_in_expr(e->u.cond.b, pred, ctx);
    default:
        return NULL;
    }
}

const pld_expr_t *pld_ast_find_call(const pld_block_t *b, int (*pred)(int op, void *ctx), void *ctx)
{
    const pld_expr_t *r = NULL;
    for (int i = 0; !r && b && i < b->n; i++) {
        const pld_stmt_t *s = b->stmts[i];
        switch (s->kind) {
        case PLD_ST_EXPR: r = find_in_expr(s->u.expr, pred, ctx); break;
        case PLD_ST_ASSIGN:
            if (!(r = find_in_expr(s->u.assign.value, pred, ctx)))
                r = find_in_expr(s->u.assign.target, pred, ctx);
            break;
        case PLD_ST_RETURN:
            for (int k = 0; !r && k < s->u.ret.n; k++)
                r = find_in_expr(s->u.ret.vals[k], pred, ctx);
            break;
        case PLD_ST_IF:
            if (!(r = find_in_expr(s->u.if_.cond, pred, ctx)) && !(r = pld_ast_find_call(&s->u.if_.then, pred, ctx)))
                r = pld_ast_find_call(&s->u.if_.els, pred, ctx);
            break;
        case PLD_ST_WHILE:
            if (!(r = find_in_expr(s->u.while_.cond, pred, ctx)))
                r = pld_ast_find_call(&s->u.while_.body, pred, ctx);
            break;
        case PLD_ST_FOR:
            if (!(r = find_in_expr(s->u.for_.iter, pred, ctx)))
                r = pld_ast_find_call(&s->u.for_.body, pred, ctx);
            break;
        case PLD_ST_WITH:
            if (!(r = find_in_expr(s->u.with.item, pred, ctx)))
                r = pld_ast_find_call(&s->u.with.body, pred, ctx);
            break;
        default: break;
        }
    }
    return r;
}

int pld_func_dual_aiv(const pld_func_t *k)
{
    const pld_expr_t *d = k->deco, *a = NULL;
    if (!d || d->kind != PLD_EX_CALL)
        return 0;
    for (int i = 0; i < d->u.call.nargs; i++)
        if (d->u.call.args[i].kw && strcmp(d->u.call.args[i].kw, "attrs") == 0)
            a = d->u.call.args[i].value;
    if (!a || a->kind != PLD_EX_DICT)
        return 0;
    for (int i = 0; i < a->u.dict.n; i++) {
        const pld_expr_t *key = a->u.dict.keys[i], *v = a->u.dict.vals[i];
        if (key->kind != PLD_EX_STR)
            continue;
        if (strcmp(key->u.str.s, "dual_aiv_dispatch") == 0 && v->kind == PLD_EX_BOOL && v->u.bval)
            return 1;
        if (strcmp(key->u.str.s, "split") == 0 &&
            ((v->kind == PLD_EX_INT && v->u.ival != 0) || (v->kind == PLD_EX_ATTR && strcmp(v->u.attr.attr, "NONE") != 0)))
            return 1;
    }
    return 0;
}
