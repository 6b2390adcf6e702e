/* dump.h - the tool's side of --dump DIR: the writer behind the
 * interpreter's pl.dump_tag hook (pld_interp_dump_hook_t). The library hands
 * over each hit's value; this file writes it as DIR/TAG-lLINE-rRANK-dDISPATCH-hHIT[-before|-after].npy
 * and appends one line per file to DIR/index.tsv (docs/debugging.md). */
#ifndef PLDRUN_DUMP_H
#define PLDRUN_DUMP_H

#include "pld_buf.h"
#include "pld_interp.h"

#include <stddef.h>

typedef struct dump dump_t;

/* Creates DIR when missing (every rank; on one host they share it) and, at
 * rank 0, starts DIR/index.tsv afresh with its header line. dir NULL: *out =
 * NULL, nothing is done. Not collective: the caller agrees on the outcome
 * before the run, so that every other rank appends to a started index.
 * Returns 0, or -1 with a line "pldrun: ..." appended to msg. */
int dump_open(const char *dir, int rank, dump_t **out, pld_buf_t *msg);
void dump_close(dump_t *d);
/* The hook for pld_interp_opts_t.dump; NULL when d is NULL. */
const pld_interp_dump_hook_t *dump_hook(const dump_t *d);

#endif
