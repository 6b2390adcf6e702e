/* dispatch_io.h - inputs and outputs per dispatch (--dispatches N):
 * `--in x=a.npy,b.npy,c.npy` or `--in x=DIR/` (its .npy files sorted by
 * name) give dispatch d the d-th file; `--out y=o0.npy,o1.npy,o2.npy` or
 * `--out y=DIR/` (DIR/y.D.npy) receive each dispatch's outputs
 * (docs/debugging.md). The single-file forms are left as they are. */
#ifndef PLDRUN_DISPATCH_IO_H
#define PLDRUN_DISPATCH_IO_H

#include "pld_interp.h"

#include <stddef.h>

typedef struct binding {
    const char *name;   /* points into argv (NUL written over '=') */
    const char *value;
} binding_t;

/* After the options are read: finds the sequences among the bindings (a
 * comma list that is not itself an existing file, a directory, a value
 * ending in '/'), checks that every sequence has one file per dispatch
 * (*dispatches when dispatches_given, else their common count becomes
 * *dispatches), creates output directories, and rewrites each sequence's
 * value to the single file the one-file code reads (the first input, the
 * last output). Keeps the sequences for dispatch_io_hook until the next call
 * or dispatch_io_reset. Writes into argv's strings (the commas). Returns 0,
 * or -1 after printing the usage error ("pldrun: ...") to stderr. */
int dispatch_io_resolve(binding_t *in, int nin, binding_t *out, int nout, int *dispatches, int dispatches_given);
/* The hook for pld_interp_opts_t.dispatch_io; NULL when no sequence was given. */
const pld_interp_dispatch_hook_t *dispatch_io_hook(void);
/* Forgets the sequences (frees their file lists). They are kept across
 * run_job calls (a --schedule-seeds sweep runs the job once per seed); the
 * storage stays reachable from this file, so the leak check does not count it. */
void dispatch_io_reset(void);

#endif
