/* pld_diag.c - diagnostic list and GCC-style renderer. */
#include "pld_diag.h"
#include "pld_mem.h"

#include <stdio.h>
#include <string.h>

const char *pld_status_name(pld_status_t st)
{
    switch (st) {
    case PLD_OK: return "ok";
    case PLD_E_SYNTAX: return "syntax error";
    case PLD_E_TYPE: return "type error";
    case PLD_E_RUNTIME: return "runtime error";
    case PLD_E_MPI: return "MPI error";
    case PLD_E_HW: return "backend error";
    case PLD_E_NOMEM: return "out of memory";
    case PLD_E_IO: return "I/O error";
    case PLD_E_USAGE: return "usage error";
    case PLD_E_PEER: return "another rank failed";
    }
    return "unknown status";
}

void pld_diag_list_init(pld_diag_list_t *l, const char *file, const char *src, size_t src_len)
{
    memset(l, 0, sizeof *l);
    l->file = file;
    l->src = src;
    l->src_len = src_len;
    l->max_errors = 20;
}

static void free_chain(pld_diag_t *d)
{
    while (d) {
        pld_diag_t *next = d->next;
        free_chain(d->notes);
        pld_mem_free(d->msg);
        pld_mem_free(d);
        d = next;
    }
}

void pld_diag_list_fini(pld_diag_list_t *l)
{
    free_chain(l->head);
    l->head = l->tail = NULL;
}

static pld_diag_t *make(pld_diag_list_t *l, pld_severity_t sev, pld_span_t span, const char *fmt, va_list ap)
{
    pld_buf_t b;
    pld_buf_init(&b);
    pld_buf_vprintf(&b, fmt, ap);
    pld_diag_t *d = pld_mem_calloc(1, sizeof *d);
    if (!d || b.oom || !b.p) {
        pld_mem_free(d);
        pld_buf_fini(&b);
        l->oom = 1;
        return NULL;
    }
    d->sev = sev;
    d->span = span;
    d->msg = b.p; /* take ownership */
    return d;
}

pld_diag_t *pld_diag_add(pld_diag_list_t *l, pld_severity_t sev, pld_span_t span, const char *fmt, ...)
{
    if (sev == PLD_SEV_ERROR && l->max_errors > 0 && l->n_errors >= l->max_errors) {
        l->truncated = 1;
        return NULL;
    }
    va_list ap;
    va_start(ap, fmt);
    pld_diag_t *d = make(l, sev, span, fmt, ap);
    va_end(ap);
    if (!d)
        return NULL;
    if (l->tail)
        l->tail->next = d;
    else
        l->head = d;
    l->tail = d;
    if (sev == PLD_SEV_ERROR)
        l->n_errors++;
    else if (sev == PLD_SEV_WARNING)
        l->n_warnings++;
    return d;
}

void pld_diag_note(pld_diag_list_t *l, pld_diag_t *d, pld_span_t span, const char *fmt, ...)
{
    if (!d)
        return;
    va_list ap;
    va_start(ap, fmt);
    pld_diag_t *n = make(l, PLD_SEV_NOTE, span, fmt, ap);
    va_end(ap);
    if (!n)
        return;
    pld_diag_t **pp = &d->notes;
    while (*pp)
        pp = &(*pp)->next;
    *pp = n;
}

int pld_diag_has_errors(const pld_diag_list_t *l)
{
    return l->n_errors > 0 || l->oom;
}

static const char *sev_name(pld_severity_t s)
{
    switch (s) {
    case PLD_SEV_ERROR: return "error";
    case PLD_SEV_WARNING: return "warning";
    case PLD_SEV_NOTE: return "note";
    }
    return "error";
}

/* Width of one byte when rendering: UTF-8 continuation bytes take no column. */
static int is_cont(unsigned char c)
{
    return (c & 0xC0) == 0x80;
}

static void render_excerpt(const pld_diag_list_t *l, pld_span_t sp, const char *prefix, pld_buf_t *out)
{
    if (!l->src || sp.line == 0 || sp.off > l->src_len)
        return;
    /* find the start and end of the line holding sp.off */
    size_t ls = sp.off;
    while (ls > 0 && l->src[ls - 1] != '\n')
        ls--;
    size_t le = sp.off;
    while (le < l->src_len && l->src[le] != '\n' && l->src[le] != '\r')
        le++;
    char num[32];
    int w = snprintf(num, sizeof num, "%5u", (unsigned)sp.line);
    pld_buf_puts(out, prefix);
    pld_buf_printf(out, "%s | ", num);
    size_t col = 0, caret_from = 0, caret_to = 0;
    size_t span_end = sp.off + (sp.len ? sp.len : 1);
    for (size_t i = ls; i <= le; i++) {
        if (i == sp.off)
            caret_from = col;
        if (i == span_end || (i == le && span_end > le))
            caret_to = col;
        if (i == le)
            break;
        unsigned char c = (unsigned char)l->src[i];
        if (c == '\t') {
            size_t next = (col / 8 + 1) * 8;
            while (col < next) {
                pld_buf_putc(out, ' ');
                col++;
            }
        } else {
            pld_buf_putc(out, (char)c);
            if (!is_cont(c))
                col++;
        }
    }
    if (sp.off >= le)
        caret_from = col;
    if (caret_to <= caret_from)
        caret_to = caret_from + 1;
    pld_buf_putc(out, '\n');
    pld_buf_puts(out, prefix);
    for (int i = 0; i < w; i++)
        pld_buf_putc(out, ' ');
    pld_buf_puts(out, " | ");
    for (size_t i = 0; i < caret_from; i++)
        pld_buf_putc(out, ' ');
    pld_buf_putc(out, '^');
    for (size_t i = caret_from + 1; i < caret_to; i++)
        pld_buf_putc(out, '~');
    pld_buf_putc(out, '\n');
}

static void render_line(const pld_diag_list_t *l, const pld_diag_t *d, const char *prefix, pld_buf_t *out)
{
    pld_buf_puts(out, prefix);
    if (d->span.line)
        pld_buf_printf(out, "%s:%u:%u: ", l->file ? l->file : "<input>", (unsigned)d->span.line,
                       (unsigned)d->span.col);
    else if (l->file)
        pld_buf_printf(out, "%s: ", l->file);
    pld_buf_printf(out, "%s: %s\n", sev_name(d->sev), d->msg);
    render_excerpt(l, d->span, prefix, out);
}

void pld_diag_render_one(const pld_diag_list_t *l, const pld_diag_t *d, const char *prefix, pld_buf_t *out)
{
    if (!prefix)
        prefix = "";
    render_line(l, d, prefix, out);
    for (const pld_diag_t *n = d->notes; n; n = n->next)
        render_line(l, n, prefix, out);
}

void pld_diag_render(const pld_diag_list_t *l, const char *prefix, pld_buf_t *out)
{
    for (const pld_diag_t *d = l->head; d; d = d->next)
        pld_diag_render_one(l, d, prefix, out);
    if (l->truncated) {
        pld_buf_puts(out, prefix ? prefix : "");
        pld_buf_printf(out, "%s: note: too many errors (limit %d); stopping\n", l->file ? l->file : "<input>",
                       l->max_errors);
    }
    if (l->oom) {
        pld_buf_puts(out, prefix ? prefix : "");
        pld_buf_puts(out, "error: out of memory while recording diagnostics\n");
    }
}
