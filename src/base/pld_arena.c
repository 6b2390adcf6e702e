/* pld_arena.c - chunked bump allocator. */
#include "pld_arena.h"
#include "pld_mem.h"

#include <string.h>

struct pld_arena_chunk {
    pld_arena_chunk_t *next;
    size_t cap;
    /* data follows, 16-byte aligned */
};

#define CHUNK_HDR ((sizeof(pld_arena_chunk_t) + 15u) & ~(size_t)15u)
#define CHUNK_MIN ((size_t)64 * 1024)

void pld_arena_init(pld_arena_t *a)
{
    memset(a, 0, sizeof *a);
}

void pld_arena_fini(pld_arena_t *a)
{
    pld_arena_chunk_t *c = a->head;
    while (c) {
        pld_arena_chunk_t *next = c->next;
        pld_mem_free(c);
        c = next;
    }
    memset(a, 0, sizeof *a);
}

void *pld_arena_alloc(pld_arena_t *a, size_t n)
{
    n = (n + 15u) & ~(size_t)15u;
    if (n == 0)
        n = 16;
    if (!a->head || a->used + n > a->cap) {
        size_t cap = n > CHUNK_MIN ? n : CHUNK_MIN;
        pld_arena_chunk_t *c = pld_mem_alloc(CHUNK_HDR + cap);
        if (!c)
            return NULL;
        c->next = a->head;
        c->cap = cap;
        a->head = c;
        a->used = 0;
        a->cap = cap;
    }
    char *p = (char *)a->head + CHUNK_HDR + a->used;
    a->used += n;
    a->total += n;
    memset(p, 0, n);
    return p;
}

char *pld_arena_strndup(pld_arena_t *a, const char *s, size_t n)
{
    char *d = pld_arena_alloc(a, n + 1);
    if (!d)
        return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}
