/* pld_mem.c - allocation funnel with a fail-the-Nth hook for tests. */
#include "pld_mem.h"

#include <stdlib.h>
#include <string.h>

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
    if (should_fail())
        return NULL;
    return malloc(n ? n : 1);
}

void *pld_mem_alloc_aligned(size_t align, size_t n, int zero)
{
    if (should_fail())
        return NULL;
    void *p = NULL;
    if (posix_memalign(&p, align, n ? n : 1) != 0)
        return NULL;
    if (zero)
        memset(p, 0, n ? n : 1);
    return p;
}

void *pld_mem_calloc(size_t count, size_t size)
{
    if (should_fail())
        return NULL;
    return calloc(count ? count : 1, size ? size : 1);
}

void *pld_mem_realloc(void *p, size_t n)
{
    if (should_fail())
        return NULL;
    return realloc(p, n ? n : 1);
}

void pld_mem_free(void *p)
{
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

long pld_mem_failures(void)
{
#ifdef PLD_TESTING
    return fail_count;
#else
    return 0;
#endif
}
