/* pld_mem.h - the allocation funnel: every heap allocation of pldrun goes here.
 *
 * Under PLD_TESTING a test can make the Nth allocation (counting from the call
 * to pld_mem_fail_after) fail, to prove that every caller handles OOM cleanly. */
#ifndef PLD_MEM_H
#define PLD_MEM_H

#include <stddef.h>

/* malloc/calloc/realloc/free wrappers; return NULL on failure (never abort). */
void *pld_mem_alloc(size_t n);
void *pld_mem_calloc(size_t count, size_t size);
/* n bytes at an address that is a multiple of align (a power of two, a
 * multiple of sizeof(void *)); zeroed when zero. Freed with pld_mem_free. */
void *pld_mem_alloc_aligned(size_t align, size_t n, int zero);
void *pld_mem_realloc(void *p, size_t n);
void pld_mem_free(void *p);
/* Returns an owned copy of s (NULL on OOM). */
char *pld_mem_strdup(const char *s);

/* Testing hook: after `n` more successful allocations, every allocation fails
 * until pld_mem_fail_after(-1) is called. n < 0 disables the hook. Only active
 * when compiled with PLD_TESTING; otherwise a no-op. */
void pld_mem_fail_after(long n);
/* Number of allocations that were refused by the hook since it was set. */
long pld_mem_failures(void);

/* Testing hook (the fuzzers' memory cap): from this call on, an allocation
 * that would take the bytes live since the call over `max_bytes` fails (as
 * OOM). 0 disables the cap. Only active when compiled with PLD_TESTING on
 * glibc (block sizes from malloc_usable_size); otherwise a no-op. */
void pld_mem_limit(size_t max_bytes);

#endif
