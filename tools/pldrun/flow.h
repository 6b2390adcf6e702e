/* flow.h - the arrows of the --trace timeline: who released whom.
 *
 * Every rank hands rank 0, beside its JSON events, a compact record of its
 * notifies, satisfied waits on signal cells and remote writes (puts, remote
 * stores, atomic adds into a peer's window), on the trace's clock. Rank 0
 * matches them and writes Chrome trace flow events ("ph":"s" on the
 * producer's slice, "ph":"f" with "bp":"e" on the consumer's wait slice, the
 * same "id"), which Perfetto and chrome://tracing draw as arrows:
 *
 *   notify -> wait  a satisfied wait on cell C of rank W (comm domain D, the
 *                   cell's byte offset in D's window) was released by the
 *                   notify to that cell (target world rank W, domain D,
 *                   offset) that started last before the wait ended, over
 *                   every rank, on the merged clock. A notify may release
 *                   several waits (several arrows); a notify that released
 *                   none has no arrow.
 *   put -> wait     a remote write from rank P into rank W's windows is
 *                   published by the first notify to W that P issues after
 *                   the write returned, from the write's track (program
 *                   order), else from P's orchestration track (track 0,
 *                   after the kernel); P's own clock: no clock error. The
 *                   write's arrow goes to every wait that notify released.
 *                   A write followed by no such notify has no arrow.
 *
 * The arrow starts where the producer's slice starts and ends inside the
 * wait's slice, at its end (when it was released), never before its start. */
#ifndef PLDRUN_FLOW_H
#define PLDRUN_FLOW_H

#include "pld_buf.h"
#include "pld_trace.h"

#include <stdio.h>

/* Appends this rank's records (binary, for rank 0's flow_write) to b: the
 * events of tr with t0/t1 on the trace's clock (zero: this rank's clock
 * reading at the trace's zero). */
void flow_records(const pld_trace_t *tr, int rank, int64_t zero, pld_buf_t *b);
/* Rank 0: matches the records of every rank (concatenated, `bytes` bytes)
 * and writes the flow events to f, each after ",\n". Returns the number of
 * arrows written, or -1 when f could not be written. Out of memory: no
 * arrows (0). */
long flow_write(FILE *f, const char *recs, size_t bytes);

#endif
