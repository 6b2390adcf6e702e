/* pld_coll.h - the collective protocols over windows (pld.tensor.allreduce,
 * barrier, broadcast, reduce_scatter, allgather, all_to_all, all_to_all_v) on
 * the three rails: InCore composite (in a kernel), HOST builtin (HOST
 * orchestrator) and CHIP builtin (all_to_all_v in an Orchestration function).
 *
 * Every collective replays the wire protocol of its rail
 * (docs/pld_semantics.md §1.9, §2.14-§2.20): the self-clearing credit barrier
 * on the signal cells, the documented chunking / tiling with its per-chunk
 * barriers, and the documented fold orders (docs/transport.md for the merged
 * steps, the spread and hub folds and the rows by message).
 *
 * The interface is views, windows and signal cells: a pld_coll_view_t says
 * where a tensor's elements are (this rank's copy; a window view also its
 * domain window), a pld_coll_t names the domain, the signal and the caller's
 * hooks. The caller (the interpreter, or any backend launching a builtin
 * collective) binds its operands to views, validates them, and calls one
 * protocol function; what only the caller knows goes through
 * pld_coll_hooks_t: errors and warnings located at the call, notifies and
 * waits under its watchdog, remote regions (with its checking modes), trace
 * events. Nothing here knows the syntax or the interpreter's values.
 *
 * Files: pld_coll.c common machinery (signal cells, the credit barrier, data
 * movement, folds, kept buffers, the post-condition); pld_coll_step.c the
 * merged steps of the mesh allreduces (plain, spread, hub); pld_coll_allreduce.c
 * the four allreduce protocols; pld_coll_gather.c barrier, broadcast,
 * reduce_scatter, allgather / all_to_all and the rows by message;
 * pld_coll_a2av.c all_to_all_v (+ pld_coll_int.h). */
#ifndef PLD_COLL_H
#define PLD_COLL_H

#include "pld_dtype.h"
#include "pld_kern.h"
#include "pld_npu.h"
#include "pld_status.h"
#include "pld_trace.h"
#include "pld_wait.h"
#include "pld_win.h"

#include <stddef.h>
#include <stdint.h>

/* The rails of a collective. */
enum { PLD_COLL_INCORE = 0, PLD_COLL_HOST = 1, PLD_COLL_CHIP = 2 };

/* Builtins (HOST, CHIP) silently do nothing above this many ranks. */
#define PLD_COLL_BUILTIN_MAX_RANKS 16

/* Warnings, once per call site and kind (pld_coll_warn). */
enum { PLD_COLL_W_GUARD, PLD_COLL_W_COUNTS, PLD_COLL_W_NR };

/* A tensor region: this rank's copy of a window view (is_dist) or a tensor in
 * local memory. Element idx is at data + sum(idx[k] * strides[k]) elements;
 * valid is the valid extent per dim (== shape when full). */
typedef struct pld_coll_view {
    char *data;                    /* element [0, ..] of this rank's copy */
    const void *buf;               /* the storage it views: two views of one storage share it */
    pld_dtype_t dt;
    int rank;
    int64_t shape[PLD_MAX_RANK];
    int64_t strides[PLD_MAX_RANK]; /* elements */
    int64_t valid[PLD_MAX_RANK];
    int is_dist;                   /* a view of a window buffer in the call's domain */
    const char *name;              /* the window buffer's name (trace), or NULL */
    const void *obj;               /* the caller's object, handed back to its hooks */
} pld_coll_view_t;

/* The buffers of the merged steps, kept across calls by the caller (fresh
 * multi-MiB buffers cost a page fault per 4 KiB every call). Zero-initialise;
 * pld_coll_bufs_fini frees. */
typedef struct pld_coll_bufs {
    void *buf;
    size_t bytes;
    int busy; /* a block holds it (another block's collective allocates its own) */
} pld_coll_bufs_t;

void pld_coll_bufs_fini(pld_coll_bufs_t *b);

/* What only the caller knows. ctx is pld_coll_t.ctx. */
typedef struct pld_coll_hooks {
    /* Reports msg as an error located at the call; returns the status to return. */
    pld_status_t (*error)(void *ctx, const char *msg);
    /* Adds the warning msg at the call unless one containing marker is there already. */
    void (*warn)(void *ctx, const char *marker, const char *msg);
    /* Adds v to (set: stores v into) the cell at byte disp of peer's window. */
    pld_status_t (*notify)(void *ctx, int peer, size_t disp, int32_t v, int set);
    /* Waits (under the hang watchdog) until this rank's cell at disp meets cmp g. */
    pld_status_t (*wait)(void *ctx, size_t disp, int cmp, int32_t g, pld_describe_fn describe, const void *dctx);
    /* Waits until every transfer of x is complete. */
    pld_status_t (*xset_wait)(void *ctx, pld_win_xset_t *x, pld_describe_fn describe, const void *dctx);
    /* Moves the box [off, off+ext) of window view v on domain rank peer to
     * (dir 0, a get) or from (dir 1, a put) the packed buffer buf. */
    pld_status_t (*region)(void *ctx, int peer, const pld_coll_view_t *v, const int64_t *off, const int64_t *ext,
                           void *buf, int dir);
    /* Ends the batch the protocol began (pld_win_batch_begin); st: the status so far. */
    pld_status_t (*batch_end)(void *ctx, pld_status_t st);
    /* A read (write 0) or store (write 1) of the box [off, off+ext) of v in
     * this rank's memory, as the checking modes see it (called when .seen). */
    void (*local)(void *ctx, const pld_coll_view_t *v, const int64_t *off, const int64_t *ext, int write);
    /* A fresh trace event of kind k at the call (called when .trace). */
    void (*ev_init)(void *ctx, pld_ev_t *ev, pld_ev_kind_t k, const char *name);
    /* Tracing: the events that follow go on block b of `lanes`; b < 0: back on the call's track. */
    void (*track)(void *ctx, int64_t b, int64_t lanes);
    /* The race detector sees the device's order (docs/races.md, "The device's
     * collective order"): mute(1) stops recording the window transfers that
     * follow, mute(0) resumes; record() records the box [off, off+ext) of
     * the packed view v on domain rank peer as read (dir 0) or written
     * (dir 1) now, without moving data. Called when .seen; may be NULL. */
    void (*mute)(void *ctx, int on);
    void (*record)(void *ctx, int peer, const pld_coll_view_t *v, const int64_t *off, const int64_t *ext, int dir);
} pld_coll_hooks_t;

/* One call of a collective. The caller fills the first part, then sets the
 * signal (pld_coll_set_signal) and calls a protocol. */
typedef struct pld_coll {
    const pld_coll_hooks_t *h;
    void *ctx;
    pld_win_sys_t *win;            /* batches */
    pld_win_dom_t *dom;            /* the comm domain's window */
    int32_t dom_index;             /* its index (trace) */
    int P, me;                     /* members, this rank's domain rank */
    int rail;                      /* PLD_COLL_INCORE / HOST / CHIP */
    const char *cname;             /* the collective's source name (pld.tensor.<op>) for messages */
    const char *name;              /* short name in wait descriptions, e.g. "allreduce (mesh)" */
    const char *opname;            /* the op of the call (trace) */
    const char *fn;                /* the function the call is in (wait descriptions) */
    pld_trace_t *trace;            /* NULL when not tracing */
    const pld_npu_sched_t *sched;  /* whether other blocks of this rank may run meanwhile */
    uint64_t *bytes_moved;         /* statistics */
    pld_coll_bufs_t *bufs;
    int chunk_steps;               /* --collective-steps chunk: no merged steps */
    int can_batch;                 /* transfers may go out in batches (no checking mode observes each) */
    int seen;                      /* the checking modes see local reads and stores (hooks.local) */
    int device_order;              /* --check-races: the InCore ring runs one sub-chunk per step, the
                                      device's order (pld_coll_ring_step; docs/races.md) */
    /* the signal (pld_coll_set_signal) */
    pld_coll_view_t sigdesc;
    const pld_coll_view_t *sig;
    int has_sig;
    int ring;                      /* cells [row, rank] instead of [rank, lane] */
    char sigtext[48];              /* printed signal expression */
} pld_coll_t;

/* The view s (window-bound INT32, rank 1 or 2, validated by the caller) is
 * the signal of c; text: its printed expression (NULL: a synthesized one). */
void pld_coll_set_signal(pld_coll_t *c, const pld_coll_view_t *s, const char *text);

/* Byte displacement of element idx of window view v in the domain window. */
size_t pld_coll_disp(const pld_coll_t *c, const pld_coll_view_t *v, const int64_t *idx);
/* 1 when v is packed row-major. */
int pld_coll_view_packed(const pld_coll_view_t *v);
/* The name of ReduceOp op (0..3: Sum, Max, Min, Prod). */
const char *pld_coll_redop_name(int64_t op);
/* An error at the call (hooks.error), formatted. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
pld_status_t pld_coll_fail(pld_coll_t *c, const char *fmt, ...);
/* A warning at the call, once per call site and kind; GUARD and NR only on
 * domain rank 0 (every rank would say the same). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void pld_coll_warn(pld_coll_t *c, int kind, const char *fmt, ...);

/* ---- the protocols (operands validated by the caller) ---- */

/* allreduce of window view t with ReduceOp op (0..3): InCore mesh (§2.14.1),
 * InCore ring (§2.14.2), HOST mesh with core_num lanes (§2.14.3), HOST ring
 * (§2.14.4). */
pld_status_t pld_coll_allreduce_incore_mesh(pld_coll_t *c, const pld_coll_view_t *t, int64_t op);
pld_status_t pld_coll_allreduce_incore_ring(pld_coll_t *c, const pld_coll_view_t *t, int64_t op);
pld_status_t pld_coll_allreduce_host_mesh(pld_coll_t *c, const pld_coll_view_t *t, int64_t op, int64_t core_num);
pld_status_t pld_coll_allreduce_host_ring(pld_coll_t *c, const pld_coll_view_t *t, int64_t op);
/* barrier on the signal: one credit barrier and its epilogue. */
pld_status_t pld_coll_barrier(pld_coll_t *c);
/* broadcast of t from domain rank root. */
pld_status_t pld_coll_broadcast(pld_coll_t *c, const pld_coll_view_t *t, int64_t root);
/* reduce_scatter (Sum) of the [NR, SIZE] target t (NR >= P, SIZE > 0). */
pld_status_t pld_coll_reduce_scatter(pld_coll_t *c, const pld_coll_view_t *t);
/* allgather (a2a 0) or all_to_all (a2a 1) of the rows of `in` into target t. */
pld_status_t pld_coll_gather(pld_coll_t *c, const pld_coll_view_t *in, const pld_coll_view_t *t, int a2a);
/* all_to_all_v of `in` into t, MR rows per source, with send_counts sc and
 * recv_counts rc, over B blocks (HOST / CHIP). */
pld_status_t pld_coll_a2av(pld_coll_t *c, const pld_coll_view_t *in, const pld_coll_view_t *t,
                           const pld_coll_view_t *sc, const pld_coll_view_t *rc, int64_t MR, int64_t B);
/* The post-condition of the credit barrier (pld_semantics.md §1.9): every
 * cell of the signal in this rank's window is 0 or 1 after the call. */
pld_status_t pld_coll_post_check(pld_coll_t *c);

#endif
