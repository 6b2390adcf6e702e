/* pld_wait.h - waits between ranks under the hang watchdog: a signal cell
 * reaching its value, the transfers of a two-sided set completing, every
 * rank reaching a phase (the barrier between dispatches); the status board
 * (pld_win.h) each waiting rank publishes to, the deadlock detection that
 * reads it, the timeout, and the stop of every rank with a report.
 *
 * A wait polls; while it polls it lets the other blocks of this rank run
 * (pld_npu.h), and after its first 64 polls (a quiet spin: no clock, no
 * status board, no description) it publishes its blocked state and watches:
 * every rank blocked with nothing in flight and no change for a while is a
 * deadlock; no rank making progress for the timeout a hang (progress: the
 * caller's operation count in a record, pld_win_progress_t, an op issued, a
 * message applied, a phase or state passed, a changed signal value); a wait
 * longer than the explicit per-wait limit (when one is given) a hang too;
 * another rank's abort a stop. A wait that is merely long while some rank
 * progresses is not a hang. What only the caller knows (where it is, for its
 * signal handlers; a seeded schedule's held puts; how to report an error at
 * its location) goes through pld_wait_hooks_t. Nothing here knows the syntax or the
 * interpreter's values. */
#ifndef PLD_WAIT_H
#define PLD_WAIT_H

#include "pld_npu.h"
#include "pld_status.h"
#include "pld_win.h"

#include <stddef.h>
#include <stdint.h>

/* Conditions of a signal wait: cell == expected, cell >= expected (signed,
 * pld.system.wait) or unsigned(cell) >= unsigned(expected) (defer_wait). */
enum { PLD_CMP_EQ = 0, PLD_CMP_GE = 1, PLD_CMP_GE_U = 2 };

/* 1 when v meets cmp expected. */
int pld_wait_cond_holds(int cmp, int32_t v, int32_t expected);
/* "==", ">=", ">= (unsigned)". */
const char *pld_wait_cmp_text(int cmp);

/* Describes a wait into buf (n bytes) when it blocks or fails. */
typedef void (*pld_describe_fn)(const void *ctx, char *buf, size_t n);

/* What a wait polls: 1 when satisfied, *found the value seen. */
typedef int (*pld_wait_poll_fn)(const void *ctx, int32_t *found);

/* Pollers: a signal cell (ctx: pld_wait_cell_t), the transfers of a set
 * (ctx: the pld_win_xset_t; found = how many completed), every rank's phase
 * (ctx: pld_wait_phase_t; found = how many ranks reached it). */
typedef struct pld_wait_cell {
    pld_win_dom_t *dom;
    size_t disp;
    int cmp;
    int32_t expected;
} pld_wait_cell_t;
typedef struct pld_wait_phase {
    pld_win_sys_t *win;
    int64_t phase;
} pld_wait_phase_t;
int pld_wait_poll_cell(const void *ctx, int32_t *found);
int pld_wait_poll_xset(const void *ctx, int32_t *found);
int pld_wait_poll_phase(const void *ctx, int32_t *found);

/* What only the caller knows. ctx is pld_wait_t.ctx. */
typedef struct pld_wait_hooks {
    /* The wait blocks (published, described as what), and every ~64 polls the
     * value it found (found); the other blocks of this rank ran meanwhile and
     * it waits again (resumed); it ends (done). For the caller's record of
     * where this rank is. */
    void (*blocked)(void *ctx, const char *what);
    void (*found)(void *ctx, int32_t v);
    void (*resumed)(void *ctx);
    void (*done)(void *ctx);
    /* Every ~64 polls: lets what the caller holds back land (a seeded
     * schedule's puts); NULL when nothing is held. */
    pld_status_t (*flush)(void *ctx);
    /* Reports msg as an error located at the wait; returns the status to return. */
    pld_status_t (*error)(void *ctx, const char *msg);
} pld_wait_hooks_t;

/* What a rank saw of every rank's progress (pld_wait_run and pld_wait_drain
 * update it from the status board they read anyway, every ~20 ms): per rank,
 * when (this rank's clock) its record last changed and where it was. One per
 * run, owned by the caller; NULL when the caller keeps none (then each wait
 * keeps its own: progress counts from the wait's start, and nothing is left
 * for a report). */
typedef struct pld_wait_watch pld_wait_watch_t;
/* Returns owned (pld_wait_watch_destroy), NULL when out of memory. */
pld_wait_watch_t *pld_wait_watch_create(int nranks);
void pld_wait_watch_destroy(pld_wait_watch_t *w);
/* What w saw of rank r: *ago_s = seconds from its last observed progress to
 * the moment the run stopped (or to now while it runs), *line / *col the
 * location it last published (0: none). Returns 0 when r was never seen. */
int pld_wait_watch_rank(const pld_wait_watch_t *w, int r, double *ago_s, uint32_t *line, uint32_t *col);

/* One wait. */
typedef struct pld_wait {
    const pld_wait_hooks_t *h;
    void *ctx;
    pld_win_sys_t *win;            /* the status board */
    pld_npu_sched_t *sched;        /* the other blocks of this rank */
    double timeout_s;              /* > 0; the caller's default applied: the no-progress budget */
    double wait_timeout_s;         /* > 0: this wait alone may last no longer (0: no per-wait limit) */
    pld_wait_watch_t *watch;       /* the run's progress record (NULL: the wait keeps its own) */
    int32_t line, col;             /* the location published on the status board (0: none) */
    int dom_rank;                  /* this rank's rank in the domain of the cell (the board shows it) */
    pld_wait_poll_fn poll;
    const void *pctx;
    int cmp;                       /* the condition, as published */
    int32_t expected;
    pld_describe_fn describe;
    const void *dctx;
    int hang;                      /* out: the watchdog stopped the wait (deadlock, timeout, a stop) */
} pld_wait_t;

/* Blocks until w is satisfied (PLD_OK, *found the value seen), or fails: a
 * failed MPI call of this rank, another block of this rank failed (the
 * scheduler's cancel: PLD_E_RUNTIME, reported by that block), a deadlock,
 * the timeout, another rank's stop ("what: found v, expected cmp e (why)"
 * through hooks.error; w->hang set). */
pld_status_t pld_wait_run(pld_wait_t *w, int32_t *found);

/* Publishes this rank's state on the status board (line 0: no location). */
void pld_wait_publish(pld_win_sys_t *win, int state, int32_t line, int32_t col, int cmp, int32_t expected,
                      int32_t found, int dom_rank, const char *what);

/* At the end of a run: waits until no rank runs or waits any longer, still
 * detecting deadlocks, no progress for timeout_s and (wait_timeout_s > 0)
 * the per-wait limit (then stopping every rank); watch as in pld_wait_t.
 * Returns 1 when a rank neither finished nor noticed a stop within 5 s of it
 * (busy in a loop that never waits): the job must be killed. */
int pld_wait_drain(pld_win_sys_t *win, double timeout_s, double wait_timeout_s, pld_wait_watch_t *watch);

#endif
