/* pld_mem.c - allocation funnel with a fail-the-Nth hook for tests. */
#include "pld_mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(PLD_TESTING) && defined(__GLIBC__)
#include <malloc.h>
#define PLD_MEM_LIMIT 1
/* the memory cap (pld_mem_limit): bytes live since it was set */
static size_t limit_max, limit_live;

static int over_limit(size_t n, size_t old)
{
    return limit_max && n > old && (n - old > limit_max || limit_live > limit_max - (n - old));
}

static void *count_block(void *p)
{
    if (p && limit_max)
        limit_live += malloc_usable_size(p);
    return p;
}

static void uncount_block(void *p)
{
    if (!p || !limit_max)
        return;
    size_t n = malloc_usable_size(p);
    limit_live = limit_live > n ? limit_live - n : 0;
}
#else
#define over_limit(n, old) 0
#define count_block(p) (p)
#define uncount_block(p) ((void)(p))
#endif

#ifdef PLD_TESTING
static long fail_countdown = -1;
static long fail_count;

static int should_fail(void)
{
    if (fail_countdown < 0)
        return 0;
    if (fail_countdown == 0) {
        fail_count++;
        return 1;
    }
    fail_countdown--;
    return 0;
}
#else
#define should_fail() 0
#endif

void *pld_mem_alloc(size_t n)
{
    if (should_fail() || over_limit(n, 0))
        return NULL;
    return count_block(malloc(n ? n : 1));
}

void *pld_mem_alloc_aligned(size_t align, size_t n, int zero)
{
    if (should_fail() || over_limit(n, 0))
        return NULL;
    void *p = NULL;
    if (posix_memalign(&p, align, n ? n : 1) != 0)
        return NULL;
    (void)count_block(p);
    if (zero)
        memset(p, 0, n ? n : 1);
    return p;
}

void *pld_mem_calloc(size_t count, size_t size)
{
    if (should_fail() || (size && count > SIZE_MAX / size) || over_limit(count * size, 0))
        return NULL;
    return count_block(calloc(count ? count : 1, size ? size : 1));
}

void *pld_mem_realloc(void *p, size_t n)
{
#ifdef PLD_MEM_LIMIT
    size_t old = p && limit_max ? malloc_usable_size(p) : 0;
#endif
    if (should_fail() || over_limit(n, old))
        return NULL;
    uncount_block(p);
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        (void)count_block(p); /* p is still live */
        return NULL;
    }
    return count_block(q);
}

void pld_mem_free(void *p)
{
    uncount_block(p);
    free(p);
}

char *pld_mem_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = pld_mem_alloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

void pld_mem_fail_after(long n)
{
#ifdef PLD_TESTING
    fail_countdown = n;
    fail_count = 0;
#else
    (void)n;
#endif
}

void pld_mem_limit(size_t max_bytes)
{
#ifdef PLD_MEM_LIMIT
    limit_max = max_bytes;
    limit_live = 0;
#else
    (void)max_bytes;
#endif
}

long pld_mem_failures(void)
{
#ifdef PLD_TESTING
    return fail_count;
#else
    return 0;
#endif
}
