/* pld_debug.h - the debugging machinery: --poison, --check-races and
 * --schedule-seed (docs/debugging.md, docs/races.md), one library.
 *
 * The three tools share one handle, pld_debug_t, created when at least one
 * of them is on. A caller (the interpreter) keeps that one pointer, NULL when
 * no debug option is on, and enters the library only through hooks guarded
 * by a test of it (or of a per-tool switch derived from it, see
 * pld_debug_on): with the options off, every hook is one untaken branch, and
 * the library can be read, and switched off, as a unit.
 *
 * Neutral types only: comm domains are numbered 0..ndoms-1 by the caller and
 * passed with their window handles (pld_win.h), members as domain ranks,
 * window bytes as offsets and sizes, element types as pld_dtype_t, source
 * places as pld_span_t. Reports are warnings appended to the caller's
 * pld_diag_list_t; what only the caller knows (the name of the op at a site,
 * the window buffer that holds a byte) is asked for through the callbacks of
 * pld_debug_host_t, and only when a report is written. Runtime errors are
 * returned as a status and a message in err: the caller locates them.
 *
 * The records of the race detector are in pld_hb.h (a module of this
 * library). Knows nothing of the parser or the interpreter. */
#ifndef PLD_DEBUG_H
#define PLD_DEBUG_H

#include "pld_diag.h"
#include "pld_dtype.h"
#include "pld_hb.h"
#include "pld_npu.h"
#include "pld_status.h"
#include "pld_trace.h"
#include "pld_win.h"

#include <stddef.h>
#include <stdint.h>

typedef struct pld_debug pld_debug_t;

/* The tools (bits of pld_debug_opts_t.tools, pld_debug_on). */
enum { PLD_DEBUG_POISON = 1, PLD_DEBUG_RACES = 2, PLD_DEBUG_SCHEDULE = 4 };

/* A window buffer as a report names it. */
typedef struct pld_debug_window {
    const char *name;
    size_t offset;              /* its first byte in the domain's window */
    size_t bytes;               /* its size */
    int synth;                  /* the hidden signal of a HOST allreduce (named "the allreduce signal") */
} pld_debug_window_t;

/* What only the caller knows; called only while a report or a trace event
 * is written. */
typedef struct pld_debug_host {
    void *ctx;
    /* The text naming the op at a site (pld_debug_at_t.key). */
    const char *(*site_name)(void *ctx, const void *key);
    /* The name of op table entry op (>= 0). */
    const char *(*op_name)(void *ctx, int op);
    /* The window buffer of comm domain dom that holds byte disp (the first
     * such buffer, with last the last one): 1 and *out, or 0. */
    int (*window_at)(void *ctx, int dom, size_t disp, int last, pld_debug_window_t *out);
} pld_debug_host_t;

/* A site of the program: the caller's identity of it (an AST node; sites
 * are told apart by it), its span and its op table id (-1: none). */
typedef struct pld_debug_at {
    const void *key;
    pld_span_t span;
    int op;
} pld_debug_at_t;

/* A thread of a rank: the orchestration (kernel 0), or block `block`, core
 * or lane `lane` of a kernel launch. */
typedef struct pld_debug_thread {
    int kernel;
    int64_t block, lane;
} pld_debug_thread_t;

/* A finding as a record, beside its warning (--findings, --check-races=error,
 * --poison=error): the caller's sink gets each one as it is reported; the
 * strings are borrowed for the call only. */
enum { PLD_DEBUG_FINDING_RACE = 1, PLD_DEBUG_FINDING_POISON = 2 };
typedef struct pld_debug_side {
    int rank;                   /* world rank of the thread */
    int64_t block;              /* its block (or core, lane) of a launch; -1 the orchestration or unknown */
    const char *op;             /* the text naming the op */
    const char *access;         /* "read", "write" or "atomic" */
    pld_span_t span;            /* where in the program */
} pld_debug_side_t;
typedef struct pld_debug_finding {
    int kind;                   /* PLD_DEBUG_FINDING_* */
    const char *message;        /* the warning's text */
    int nsides;                 /* race: 2 (the access that found it, then the other); poison: 1 */
    pld_debug_side_t side[2];
    const char *target;         /* the window buffer's name, or the tile's ("" unnamed) */
    int tile;                   /* poison: 1 a tile read, 0 a window read */
    pld_span_t born;            /* a tile: where it was created */
    int owner;                  /* world rank holding the bytes */
    size_t lo, hi;              /* the bytes [lo, hi) of the buffer or tile */
    size_t count;               /* poison: how many of them were never written */
    int plain;                  /* race: target is a plain tensor (not a window; docs/races.md, "Output tensors") */
} pld_debug_finding_t;
typedef void (*pld_debug_finding_fn)(void *ctx, const pld_debug_finding_t *f);

typedef struct pld_debug_opts {
    int tools;                  /* PLD_DEBUG_* bits; 0 creates nothing */
    uint64_t seed;              /* --schedule-seed (mixed with the world rank here) */
    const char *backend;        /* the kernel backend's name: the tools see into "sim" only */
    int rank, nranks;           /* world */
    pld_npu_sched_t *sched;     /* the block scheduler a schedule seeds (borrowed) */
    pld_diag_list_t *diags;     /* reports (borrowed) */
    const char *src;            /* the program text: line and column of a race's other site */
    size_t src_len;
    pld_trace_t *trace;         /* the event recorder, or NULL (borrowed) */
    uint64_t *steps;            /* the caller's operation counter and its limit: a held put */
    uint64_t *step_limit;       /*   lands after a bounded number of operations (borrowed) */
    uint64_t *races;            /* counters (borrowed, each may be NULL): races reported, */
    uint64_t *puts_held;        /*   puts held back */
    pld_debug_host_t host;
    pld_debug_finding_fn finding; /* each report as a record too, or NULL */
    void *finding_ctx;
} pld_debug_opts_t;

/* The handle of the tools o->tools names, or *out = NULL when none. Errors:
 * PLD_E_USAGE (a tool that needs the sim backend, message in err),
 * PLD_E_NOMEM (message in err, except for the schedule's). Returns owned. */
pld_status_t pld_debug_create(const pld_debug_opts_t *o, pld_debug_t **out, char *err, size_t errn);
/* Frees d (NULL: no-op); windows must be gone first (pld_debug_race_fini, the poison shadows). */
void pld_debug_destroy(pld_debug_t *d);
/* 1 when d is not NULL and tool (PLD_DEBUG_*) is on. */
int pld_debug_on(const pld_debug_t *d, int tool);

/* ---- --poison: never-written window bytes and created tiles read as a
 * pattern, and every read of them is a warning, once per site. */
/* Fills bytes bytes at p with the pattern of dt (a NaN for floats, 0xA5 bytes for integers). */
void pld_debug_poison_fill(void *p, size_t bytes, pld_dtype_t dt);
/* The shadow window of comm domain dom (one byte per window byte, nonzero =
 * written): collective over its members, same order on every member. The
 * whole message in err. */
pld_status_t pld_debug_poison_shadow(pld_win_sys_t *world, int dom, const int *members, int n, size_t bytes,
                                     pld_win_dom_t **out, char *err, size_t errn);
/* What the runs of one transfer found unwritten: count and range of bytes. */
typedef struct pld_debug_acc {
    size_t n, lo, hi;
} pld_debug_acc_t;
/* One contiguous run of a remote transfer (dir 0 get, else put or add) of
 * domain rank peer's bytes [disp, disp + bytes): a put marks the peer's
 * shadow, a get reads it and accumulates its never-written bytes in acc.
 * Message in err. */
pld_status_t pld_debug_poison_run(pld_debug_t *d, pld_win_dom_t *shadow, int peer, size_t disp, size_t bytes, int dir,
                                  pld_debug_acc_t *acc, char *err, size_t errn);
/* Accumulates the zeros of shadow[at, at + bytes) in acc. */
void pld_debug_poison_scan(pld_debug_acc_t *acc, const uint8_t *shadow, int64_t at, int64_t bytes);
/* A read at `at` of acc's never-written bytes of window buffer w on rank
 * owner (acc relative to w) viewed as dt: a warning, once per site. */
void pld_debug_poison_report(pld_debug_t *d, const pld_debug_at_t *at, const pld_debug_window_t *w, int owner,
                             pld_dtype_t dt, const pld_debug_acc_t *acc);
/* A created tile of n elements of dt at data: the pattern in it, and
 * *unw (returns owned, pld_mem_free) n bytes of 1 (every element never
 * written). PLD_E_NOMEM. */
pld_status_t pld_debug_poison_tile_new(void *data, int64_t n, pld_dtype_t dt, uint8_t **unw);
/* A read at `at` of the valid region (valid[0..rank)) of a tile of shape
 * shape, whose never-written elements unw marks; name: the operand's name or
 * NULL; born: where it was created. A warning, once per site. */
void pld_debug_poison_tile_read(pld_debug_t *d, const pld_debug_at_t *at, const char *name, int rank,
                                const int64_t *shape, const int64_t *valid, const uint8_t *unw, pld_dtype_t dt,
                                pld_span_t born);

/* ---- --check-races: unordered conflicting window accesses (docs/races.md). */
/* After the data windows exist: room for ndoms comm domains, then the
 * access-record segment of each domain this rank is a member of (me >= 0;
 * collective over its members, same order on every member; data: its data
 * window). Errors with the whole message in err: PLD_E_NOMEM, a window
 * layer error, a domain whose members do not map each other's windows. */
pld_status_t pld_debug_race_domains(pld_debug_t *d, int ndoms, char *err, size_t errn);
pld_status_t pld_debug_race_domain(pld_debug_t *d, pld_win_sys_t *world, int dom, pld_win_dom_t *data, const int *members,
                                   int n, int me, char *err, size_t errn);
void pld_debug_race_fini(pld_debug_t *d); /* destroys the segments (before the data windows) */
/* Between the two: at most `cells` signal cells can be in domain dom's
 * window (the INT32 elements of its buffers): the release-set table gets
 * that many slots (at most 1,024; cells beyond it share the overflow set). */
void pld_debug_race_cells(pld_debug_t *d, int dom, size_t cells);
/* An access by thread t at `at` of bytes [disp, disp + bytes) of domain rank
 * owner's window of domain dom, kind PLD_HB_READ / WRITE / ATOMIC. */
void pld_debug_race_access(pld_debug_t *d, const pld_debug_thread_t *t, const pld_debug_at_t *at, int dom, int owner,
                           size_t disp, size_t bytes, int kind);
/* A write (kind PLD_HB_WRITE / ATOMIC) by kernel thread t at `at` of bytes
 * [off, off + len) of a plain (non-window) tensor buffer of this rank: buf
 * (its identity) of `bytes` bytes, named name (NULL: unnamed). Blocks of one
 * launch that write the same bytes with nothing ordering them race
 * (docs/races.md, "Output tensors"); the records last until the
 * orchestration's launch joins. */
void pld_debug_race_plain(pld_debug_t *d, const pld_debug_thread_t *t, const pld_debug_at_t *at, const void *buf,
                          size_t bytes, const char *name, size_t off, size_t len, int kind);
/* Around a notify of peer's cell disp: lock the peer's records, then (done:
 * the notify happened; v, set as pld_hb_release) release and unlock. */
void pld_debug_race_notify_lock(pld_debug_t *d, int dom, int peer);
void pld_debug_race_notify_unlock(pld_debug_t *d, const pld_debug_thread_t *t, const pld_debug_at_t *at, int dom,
                                  int peer, size_t disp, int32_t v, int set, int done);
/* A satisfied wait on this rank's cell disp of dom (cmp as pld_hb_acquire)
 * by thread t, into its clock (or, after pld_debug_race_task_redirect, the
 * task's); task_acquire: into task tid's clock. */
void pld_debug_race_acquire(pld_debug_t *d, const pld_debug_thread_t *t, int dom, size_t disp, int cmp,
                            int32_t expected);
void pld_debug_race_task_acquire(pld_debug_t *d, int64_t tid, int dom, size_t disp, int cmp, int32_t expected);
void pld_debug_race_task_redirect(pld_debug_t *d, int64_t tid);
/* Joins the completion clocks of deps into task tid's clock (tid > 0) or thread t's. */
void pld_debug_race_task_deps(pld_debug_t *d, const pld_debug_thread_t *t, int64_t tid, const int64_t *deps,
                              int ndeps);
/* Detached launches (docs/races.md, edge 2): a task queued behind deps=
 * (task_issue when it is queued: the clock it starts from; task_detach with
 * its tid when it runs) and a task of a manual scope (task_detach with 0
 * before its deps are joined) start from that clock and their deps'
 * completion clocks, and end in their own completion clock (task_tid names
 * the task once its TaskId is known; task_tid 0 when the launch is over),
 * not in thread t's. task_settle joins
 * every task's completion clock into t's and forgets them (every task has
 * completed: the end of an orchestration function). */
void pld_debug_race_task_issue(pld_debug_t *d, const pld_debug_thread_t *t, int64_t tid);
void pld_debug_race_task_detach(pld_debug_t *d, const pld_debug_thread_t *t, int64_t queued);
void pld_debug_race_task_tid(pld_debug_t *d, int64_t tid);
void pld_debug_race_task_settle(pld_debug_t *d, const pld_debug_thread_t *t);
/* Launches: child starts from parent; parent joins every thread it forked. */
void pld_debug_race_fork(pld_debug_t *d, const pld_debug_thread_t *parent, const pld_debug_thread_t *child);
void pld_debug_race_join(pld_debug_t *d, const pld_debug_thread_t *parent);
/* Synchronisation among the threads of this rank (how: 0 release, 1 acquire
 * of the launch's threads, 2 acquire of every thread). */
void pld_debug_race_sync(pld_debug_t *d, const pld_debug_thread_t *t, int how);
/* The barrier between dispatches (before: after = 0; clear: windows zeroed). */
void pld_debug_race_barrier(pld_debug_t *d, int done, int after, int clear);
/* At the end of the run: a warning when records had to be forgotten. */
void pld_debug_race_summary(pld_debug_t *d);

/* ---- --schedule-seed: held-back puts (the block order and preemption
 * points are the block scheduler's, seeded by pld_debug_create). Errors of
 * a put applied late come back with the window layer's message in err. */
void pld_debug_sched_run_begin(pld_debug_t *d);   /* the budget: *step_limit now */
uint64_t pld_debug_sched_budget(const pld_debug_t *d);
int pld_debug_sched_pending(const pld_debug_t *d); /* puts held back now */
/* The site of the remote op being issued (when tracing): a held put's event names it. */
void pld_debug_sched_site(pld_debug_t *d, int32_t track, const char *func, int32_t line, int32_t col);
/* A preemption point: pending puts land at random. */
pld_status_t pld_debug_sched_point(pld_debug_t *d, char *err, size_t errn);
/* Every pending put lands. */
pld_status_t pld_debug_sched_flush(pld_debug_t *d, char *err, size_t errn);
/* The pending puts to domain rank peer of dom that overlap [disp, disp + bytes) land. */
pld_status_t pld_debug_sched_overlap(pld_debug_t *d, int dom, int peer, size_t disp, size_t bytes, char *err,
                                     size_t errn);
/* A put to domain rank peer of dom (window win, this rank me of n): held back
 * (its bytes copied) when the schedule delays it, else done now. */
pld_status_t pld_debug_sched_put(pld_debug_t *d, int dom, pld_win_dom_t *win, int me, int n, int peer, size_t disp,
                                 const void *src, size_t bytes, char *err, size_t errn);

#endif
