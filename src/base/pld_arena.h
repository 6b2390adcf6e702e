/* pld_arena.h - bump allocator. One arena owns every AST node, interned
 * name and type of a program; pld_arena_fini frees them all at once. */
#ifndef PLD_ARENA_H
#define PLD_ARENA_H

#include <stddef.h>

typedef struct pld_arena_chunk pld_arena_chunk_t;

typedef struct pld_arena {
    pld_arena_chunk_t *head; /* current chunk (linked list of chunks) */
    size_t used;             /* bytes used in head */
    size_t cap;              /* capacity of head */
    size_t total;            /* bytes handed out, for statistics */
} pld_arena_t;

/* Initialises an empty arena in caller storage (allocates nothing yet). */
void pld_arena_init(pld_arena_t *a);
/* Frees every chunk. The arena may be reused after pld_arena_init. */
void pld_arena_fini(pld_arena_t *a);
/* Returns n zeroed bytes aligned to 16, owned by the arena; NULL on OOM. */
void *pld_arena_alloc(pld_arena_t *a, size_t n);
/* Returns an arena copy of s[0..n) with a terminating NUL; NULL on OOM. */
char *pld_arena_strndup(pld_arena_t *a, const char *s, size_t n);

#endif
