/* observe.h - the tool's side of --trace, -v and --log-dir: the rank's event
 * recorder (pld_trace.h) with its log sinks, one clock for every rank, and
 * the merged Chrome/Perfetto trace written by rank 0.
 *
 * The clocks: rank 0 exchanges a few timestamps with every rank before the
 * run and keeps the exchange with the shortest round trip: the rank's clock
 * minus rank 0's is taken as its reading minus the midpoint of rank 0's
 * (error at most half that round trip). Every rank then writes its events
 * on rank 0's clock, zero at the end of the exchange. */
#ifndef PLDRUN_OBSERVE_H
#define PLDRUN_OBSERVE_H

#include "pld_trace.h"

#include <stddef.h>

typedef struct observe observe_t;

/* Creates this rank's recorder when any of trace_path, verbose, log_dir is
 * set (else *out = NULL and nothing is done). log_dir is created when
 * missing; the log is DIR/rank<R>.log. Not collective. Returns 0, or -1 with
 * a message in err. */
int observe_open(const char *trace_path, int verbose, const char *log_dir, const char *file, int rank, int size,
                 observe_t **out, char *err, size_t errn);
void observe_close(observe_t *o);
pld_trace_t *observe_recorder(const observe_t *o); /* NULL when o is NULL */
/* Measures this rank's clock offset to rank 0. Collective when tracing
 * (every rank passes o or NULL alike: the options are the same everywhere). */
int observe_sync_clocks(observe_t *o);
/* Gathers every rank's events at rank 0, which writes the trace file.
 * Collective when tracing; a rank that does not answer within wait_s seconds
 * (stuck: the job will be aborted) is left out and named in the file.
 * Returns 0, or -1 with a message in err (rank 0: the file could not be
 * written). */
int observe_write_trace(observe_t *o, double wait_s, char *err, size_t errn);

#endif
