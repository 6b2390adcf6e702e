/* report.h - what a rank says when it is killed, interrupted or crashes.
 *
 * mpirun ends a job whose rank died by sending SIGTERM (then SIGKILL) to the
 * survivors; Ctrl-C reaches the ranks as SIGINT or SIGTERM. Each rank then
 * writes one line of its own state to stderr before it goes:
 *
 *   [rank 0/2] terminated while waiting on sig[1, 0] (Ge 1) in step at p.pld:15:13; found 0
 *   [rank 1/4] terminated while running step at p.pld:12:9
 *   [rank 1/4] terminated while reading the inputs
 *
 * SIGUSR1 (mpirun forwards it to every rank) writes the same line with
 * "state:" and the run goes on. A crash of pldrun itself (SIGSEGV, SIGBUS,
 * SIGFPE, SIGILL, SIGABRT) writes the rank, the running function and source
 * line from a handler on an alternate stack (a stack overflow still reports),
 * then hands the signal to the handler that was there before (Open MPI's,
 * the sanitizers') or the default action.
 *
 * The handlers only read memory and call write(2): async-signal-safe. */
#ifndef PLDRUN_REPORT_H
#define PLDRUN_REPORT_H

#include "pld_interp.h"

/* Installs the handlers (after MPI_Init, so that they come first). */
void report_install(int rank, int size);
/* The tool's step, a static string ("reading the inputs"), shown when no
 * interpreter record is set. */
void report_phase(const char *phase);
/* The interpreter's record (NULL before it exists and before it is destroyed). */
void report_where(const pld_interp_where_t *where);

#endif
