/* pld_buf.h - growable NUL-terminated string buffer.
 * An allocation failure sets `oom` and turns later appends into no-ops, so
 * callers check once at the end. */
#ifndef PLD_BUF_H
#define PLD_BUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct pld_buf {
    char *p;    /* NUL-terminated contents (NULL until the first append) */
    size_t len; /* bytes, without the NUL */
    size_t cap;
    int oom;    /* 1 once an append failed */
} pld_buf_t;

void pld_buf_init(pld_buf_t *b);
void pld_buf_fini(pld_buf_t *b);
void pld_buf_reset(pld_buf_t *b);
void pld_buf_putn(pld_buf_t *b, const char *s, size_t n);
void pld_buf_puts(pld_buf_t *b, const char *s);
void pld_buf_putc(pld_buf_t *b, char c);
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void pld_buf_printf(pld_buf_t *b, const char *fmt, ...);
void pld_buf_vprintf(pld_buf_t *b, const char *fmt, va_list ap);
/* Returns the contents ("" when empty); borrowed, valid until the next append. */
const char *pld_buf_str(const pld_buf_t *b);

#endif
