/* sweep.h - --schedule-seeds A-B: the program under every seed A..B, in one
 * MPI job, until one run differs from the first.
 *
 * Each seed's run is a whole run of main.c's run_job (fresh windows,
 * recorders, interpreter, backend: nothing carries over but the first run's
 * outputs, kept here), with --schedule-seed S. A run stops the sweep when:
 *   - its outputs differ from the first run's (rank 0 compares the assembled
 *     outputs, the bytes --out would write, bit for bit): exit 1;
 *   - it reports a data race and --check-races is on: exit 1;
 *   - it fails (a hang, a deadlock, a runtime error): its own exit status
 *     (70 for a hang), after its report as usual.
 * Every rank brings its verdict to one MPI_Allreduce, so every rank takes the
 * same decision. Rank 0 then prints what happened and a one-line command that
 * replays the seed (the actual command line with --schedule-seed S in place
 * of --schedule-seeds A-B). A sweep in which every seed gives the first run's
 * outputs prints one summary line and exits 0. The --out files are the first
 * run's; the runs after the first print no output summary and no statistics.
 * docs/debugging.md, "Schedule sweeps". */
#ifndef PLDRUN_SWEEP_H
#define PLDRUN_SWEEP_H

#include "pld_interp.h"
#include "pld_win.h"

#include <stdint.h>

/* The exit status of a sweep that found a seed whose outputs differ from the
 * first seed's, or that reports a race (--check-races) */
#define SWEEP_EX_DIVERGED 1

typedef struct sweep_out sweep_out_t;
struct opts;

typedef struct sweep {
    int on;                /* --schedule-seeds given */
    uint64_t first, last;  /* the seeds, first <= last */
    int argc;              /* the command line (borrowed), for the replay command */
    char **argv;
    int running;           /* inside the sweep's loop: run_job runs one seed */
    uint64_t index;        /* runs done before the current one */
    /* what sweep_capture saw of the current run */
    int captured, differs, hang, error;
    uint64_t races;
    char what[256];        /* rank 0: how the outputs differ */
    /* rank 0: the first run's outputs */
    sweep_out_t *outs;
    int nout;
} sweep_t;

/* Parses --schedule-seeds A-B at argv[*i] (the option's value at *i + 1;
 * *i is advanced past it). Returns 0 when argv[*i] is not the option, 1 when
 * it was taken, -1 after a usage message on stderr (a bad range). */
int sweep_option(int argc, char **argv, int *i, sweep_t *s);
/* After the whole command line: 1 (with a message) when the sweep cannot go
 * with the other options (a --schedule-seed or --schedule random), else 0. */
int sweep_conflict(const sweep_t *s, int schedule);

/* One run of the program: main.c's run_job. */
typedef int (*sweep_job_fn)(struct opts *o, int rank, int size, int leak_check, int *worst);
/* The sweep (collective): runs job(o, ...) once per seed with *schedule = 1
 * and *seed = the seed, until a run stops it. Returns the sweep's exit status,
 * the same on every rank (also in *worst). */
int sweep_run(sweep_t *s, int *schedule, uint64_t *seed, int check_races, sweep_job_fn job, struct opts *o, int rank,
              int size, int *worst);
/* After pld_interp_run (every rank, ok: it returned PLD_OK; win: the run's
 * window system, whose status board says why a run was stopped): records
 * whether the run hung (the watchdog or the deadlock detector stopped it) and
 * its races, and on rank 0 keeps (first run) or compares
 * (later runs) the outputs. */
void sweep_capture(sweep_t *s, const pld_interp_t *it, pld_win_sys_t *win, int ok, int rank);
/* 1 in the runs after a sweep's first: they write no --out files and print no
 * output summary or statistics */
int sweep_quiet(const sweep_t *s);
/* Rank 0, before the job is aborted (a rank that did not stop): the replay
 * command of the current seed. */
void sweep_abort_note(const sweep_t *s, int rank, int size);

#endif
