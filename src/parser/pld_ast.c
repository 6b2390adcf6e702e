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
