/* pld_diag.h - diagnostics: spans, a diagnostic list (sink) and a GCC-style
 * renderer. Library code appends to a pld_diag_list_t; only the tool (or a
 * test) turns the list into text with pld_diag_render. */
#ifndef PLD_DIAG_H
#define PLD_DIAG_H

#include "pld_buf.h"
#include "pld_status.h"

#include <stdint.h>

/* A region of one source file. line/col are 1-based; col counts characters
 * with tabs expanded to the next multiple of 8 (GCC's convention). off/len are
 * byte offsets into the file's text. A span with line == 0 has no location. */
typedef struct pld_span {
    uint32_t off;
    uint32_t len;
    uint32_t line;
    uint32_t col;
} pld_span_t;

typedef enum pld_severity {
    PLD_SEV_ERROR,
    PLD_SEV_WARNING,
    PLD_SEV_NOTE
} pld_severity_t;

typedef struct pld_diag pld_diag_t;
struct pld_diag {
    pld_severity_t sev;
    pld_span_t span;
    char *msg;          /* owned by the list */
    pld_diag_t *notes;  /* notes attached to this diagnostic (sev NOTE) */
    pld_diag_t *next;   /* next diagnostic (or next note) */
};

/* The sink. `file` names the source for rendering and `src`/`src_len` is its
 * text (both borrowed). Limits how many errors are kept (default 20). */
typedef struct pld_diag_list {
    const char *file;
    const char *src;
    size_t src_len;
    pld_diag_t *head;
    pld_diag_t *tail;
    int n_errors;
    int n_warnings;
    int max_errors;  /* errors beyond this are dropped and `truncated` is set */
    int truncated;
    int oom;         /* an allocation failed while recording */
} pld_diag_list_t;

/* Initialises an empty list over borrowed file name and text. */
void pld_diag_list_init(pld_diag_list_t *l, const char *file, const char *src, size_t src_len);
/* Frees every diagnostic and note. */
void pld_diag_list_fini(pld_diag_list_t *l);

/* Appends a diagnostic; returns it (borrowed) or NULL when dropped (error
 * limit reached, or OOM: then l->oom is set). */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
pld_diag_t *pld_diag_add(pld_diag_list_t *l, pld_severity_t sev, pld_span_t span, const char *fmt, ...);
/* Attaches a note to d (ignored when d is NULL). */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
void pld_diag_note(pld_diag_list_t *l, pld_diag_t *d, pld_span_t span, const char *fmt, ...);

/* 1 when the list holds at least one error (or recording ran out of memory). */
int pld_diag_has_errors(const pld_diag_list_t *l);

/* Renders every diagnostic in GCC style into out:
 *   file:line:col: error: message
 *      12 |     source line
 *         |     ^~~~~
 *   file:line:col: note: ...
 * `prefix` (may be NULL) starts every line, e.g. "[rank 1/4] ". */
void pld_diag_render(const pld_diag_list_t *l, const char *prefix, pld_buf_t *out);
/* Renders one diagnostic (and its notes). */
void pld_diag_render_one(const pld_diag_list_t *l, const pld_diag_t *d, const char *prefix, pld_buf_t *out);

#endif
