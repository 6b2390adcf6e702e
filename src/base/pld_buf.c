/* pld_buf.c - growable string buffer. */
#include "pld_buf.h"
#include "pld_mem.h"

#include <stdio.h>
#include <string.h>

void pld_buf_init(pld_buf_t *b)
{
    memset(b, 0, sizeof *b);
}

void pld_buf_fini(pld_buf_t *b)
{
    pld_mem_free(b->p);
    memset(b, 0, sizeof *b);
}

void pld_buf_reset(pld_buf_t *b)
{
    b->len = 0;
    if (b->p)
        b->p[0] = '\0';
}

static int reserve(pld_buf_t *b, size_t extra)
{
    if (b->oom)
        return 0;
    if (b->len + extra + 1 <= b->cap)
        return 1;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *p = pld_mem_realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return 0;
    }
    b->p = p;
    b->cap = cap;
    return 1;
}

void pld_buf_putn(pld_buf_t *b, const char *s, size_t n)
{
    if (!reserve(b, n))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void pld_buf_puts(pld_buf_t *b, const char *s)
{
    pld_buf_putn(b, s, strlen(s));
}

void pld_buf_putc(pld_buf_t *b, char c)
{
    pld_buf_putn(b, &c, 1);
}

void pld_buf_vprintf(pld_buf_t *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0 || !reserve(b, (size_t)n))
        return;
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void pld_buf_printf(pld_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pld_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

const char *pld_buf_str(const pld_buf_t *b)
{
    return b->p ? b->p : "";
}
