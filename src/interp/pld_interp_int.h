/* pld_interp_int.h - internals shared by the files of the interpreter.
 *
 * The files form layers; calls go down only (tests/interp_layers.cmake checks
 * the object files with nm):
 *
 *   walker    pld_interp.c   create/destroy, entry parameters, bind, run, output assembly
 *             pld_eval.c     expressions, statements, control flow
 *             pld_call.c     function calls, kernel launches, pl.at / pl.spmd tasks, device= dispatch
 *             pld_group.c    a FunctionType.Group body: its AIC/AIV kernels as the cores of a cluster
 *             pld_sim.c      the built-in `sim` kernel backend (runs kernels in the walker)
 *             pld_builtin.c  the lowered program's builtin collective kernels as launches
 *             pld_crt.c      the runtime of compiled kernels (`native`) and the backends' host services
 *             pld_crt_sys.c  the compiled kernels' system family: cluster ops, TaskIds, kernel calls, Group bodies
 *             pld_subw.c     a SubWorker call (Python) through the bridge of opts.subworkers
 *      |
 *   dispatch  pld_exec.c     the op dispatcher (e->op -> family), scalar ops, the UB check
 *      |
 *   ops       pld_exec_mem.c      load/store, create/fill, read/write, slices, subscripts, assemble
 *             pld_exec_compute.c  element-wise, reductions, casts, matmul
 *             pld_exec_elem.c     issue 11 element-wise ops: compares and masks, select, bitwise,
 *                                 fmod/rem, partial ops, ci/tri
 *             pld_exec_layout.c   transpose, extract, concat, gather, views
 *             pld_exec_gather.c   GM gather/scatter: mgather, mscatter, gatherb, scatter_update,
 *                                 paged_gather
 *             pld_exec_dist.c     pld.* window and signal ops (put/get, notify/wait, defer_wait)
 *             pld_exec_coll.c     collectives on every rail: operands bound to views and checked,
 *                                 the protocols of src/sim_window/pld_coll.h run with the hooks
 *             pld_xcore.c         between the cores of a cluster: binds the pipe, event and syncall ops
 *                                 to the simulated cluster (pld_cluster.h), split_aiv crossings
 *      |
 *   tasks     pld_task.c     TaskIds, deferred completion (defer_wait), deps gating, queued scopes
 *      |
 *   dist      pld_dist.c     comm domains and windows, remote regions bound to pld_win_region,
 *                            signal waits bound to the watchdog of src/sim_window/pld_wait.h
 *      |
 *   base      pld_rt.c       runtime errors, dynamic dims, static dtypes, op arguments
 *             pld_value.c    values (numeric kernels: src/sim_npu/pld_kern*.c; .npy I/O: src/base)
 *             pld_poison.c   --poison hooks: the static signal classification (the AST), the
 *                            window buffers behind tensors; the rest in src/debug
 *             pld_debug_hooks.c  the debug library's handle (it->debug), the --check-races and
 *                            --schedule-seed hooks: interpreter types to src/debug's neutral ones
 *
 * Below every layer, libraries of their own: the simulated device
 * (src/sim_npu: pld_npu.h the block scheduler, pld_cluster.h the cores of a
 * cluster with their pipe, events and barriers, pld_npu_profile.h), and the
 * debugging machinery (src/debug: pld_debug.h --poison, --check-races,
 * --schedule-seed; pld_hb.h the happens-before records), which include no
 * interpreter or parser header.
 *
 * Upward calls go through one table the walker hands down, it->walk
 * (pld_walker_t: eval, eval_i64, eval_ilist for operands and allocation
 * sizes; run_queued for the scopes tasks queue on their deps): no file below
 * the walker names a walker function. */
#ifndef PLD_INTERP_INT_H
#define PLD_INTERP_INT_H

#include "pld_check.h"
#include "pld_interp.h"
#include "pld_ast.h"
#include "pld_cluster.h"
#include "pld_debug.h"
#include "pld_npu.h"
#include "pld_hb.h"
#include "pld_trace.h"
#include "pld_value_int.h"
#include "pld_win.h"
#include "pld_coll.h"

#include <stdint.h>

/* Enum members pld_op_iarg knows (pld_rt.c). */
#define PLD_ENUM_MEMBERS 10

/* Control flow of statement execution. */
enum { FLOW_NORMAL = 0, FLOW_BREAK, FLOW_CONTINUE, FLOW_RETURN, FLOW_ERROR };

typedef struct loop_ctx {
    struct loop_ctx *outer;
    const pld_stmt_t *yield_stmt;  /* the loop body's final yield assignment, or NULL */
    pld_value_t next[16];          /* values yielded by the current iteration */
    int nnext;
    int have_next;
} loop_ctx_t;

/* A pl.split_aiv region: its split mode and the lanes' exchange slots
 * (aic_gather). */
typedef struct pld_lanes {
    int split;                     /* 0 NONE, 1 UP_DOWN, 2 LEFT_RIGHT */
    pld_value_t v[2];
} pld_lanes_t;

typedef struct frame {
    struct frame *parent;
    const pld_func_t *fn;
    pld_value_t *slots;
    int nslots;
    int ctx;                       /* PLD_CTX_HOST / CHIP / KERNEL */
    pld_span_t call_span;          /* call site in the parent (line 0 for the entry) */
    loop_ctx_t *loop;
    pld_value_t ret;
    int64_t block_idx, block_num;  /* SPMD position (kernels) */
    int64_t subblock_idx;          /* AIV lane in its cluster (pl.tile.get_subblock_idx; 0 on the AIC) */
    pld_cluster_t *xg;             /* the cluster (a mixed AIC+AIV group) this core runs in, or NULL */
    struct pld_lanes *lanes;       /* the pl.split_aiv region this lane runs in, or NULL */
    int xcore;                     /* this core's index in xg */
    int in_kernel_scope;           /* inside pl.at(CORE_GROUP) / pl.spmd */
    int32_t cur_seq;               /* pld_stmt_t.seq of the statement being run (liveness) */
    int depth;                     /* call depth: the entry 1, its callees 2, ... (0: no function) */
    const struct pld_opvals *opvals; /* the operand values of op call opvals->e a compiled kernel
                                      supplied (pld_crt.c), or NULL: the op evaluates its operands */
    int ckernel;                   /* a compiled kernel's block (or a callee of one): pld_eval counts
                                      stats.kernel_ops */
} frame_t;

/* The evaluated operands of one op call, supplied by a compiled kernel
 * (pld_crt.c's rt_op) instead of evaluated by the walker: the op accessors
 * below (pld_op_eval / value / need / iarg / i64 / ilist) read them, so that
 * each op's binding after its operands is one code path for both. A
 * parameter given neither as a value nor as a list is read from the program
 * text only (enum members, bool / string literals, dtype names); evaluating
 * it is an internal error (a compiled kernel never reaches the walker). */
typedef struct pld_opvals {
    const pld_expr_t *e;
    unsigned char given[PLD_OP_MAX_PARAMS];  /* 1: v[i]; 2: list[i] (nlist[i] entries) */
    pld_value_t v[PLD_OP_MAX_PARAMS];
    int nlist[PLD_OP_MAX_PARAMS];
    int64_t list[PLD_OP_MAX_PARAMS][8];
} pld_opvals_t;

/* A window buffer (one pld.alloc_window_buffer of the HOST orchestrator). */
typedef struct winbuf {
    const char *name;
    const pld_expr_t *alloc;       /* the allocation call */
    int dom;                       /* index into it->doms */
    size_t offset;                 /* byte offset of the slot in the domain window */
    size_t bytes;                  /* logical size */
    pld_buffer_t *buf;             /* wrap of the local slot (members only) */
    int cover_all;                 /* coverage inferred from dispatches */
    uint64_t cover[1];             /* device set bitmap (ranks < 64) when !cover_all */
    int covered;
    int synth;                     /* the hidden [world_size, core_num] INT32 signal of a HOST
                                      allreduce called without one (alloc = that call) */
    int signal;                    /* --poison: a signal / atomic-add target (stays zero, counts as
                                      written; pld_poison.c classifies it before the run) */
    pld_dtype_t fill_dt;           /* --poison: dtype of the pattern (alloc dtype or first view), or NONE */
} winbuf_t;

/* A comm domain: the ranks that share a set of window buffers. */
typedef struct domain {
    int members[PLD_WIN_MAX_RANKS];
    int n;
    int me;                        /* this rank's domain rank, -1 when not a member */
    size_t bytes;
    pld_win_dom_t *win;
    int hw_window;                 /* the kernel backend placed this domain's window (PLD_BE_CAP_WINDOWS) */
    pld_win_dom_t *shadow;         /* --poison: one byte per window byte, nonzero = written */
} domain_t;

/* The walker's callbacks: the one way a lower layer calls back up (ops
 * evaluate their operands, dist evaluates allocation sizes at setup, tasks
 * run the scopes queued on their deps). pld_interp_create sets it->walk. */
typedef struct pld_walker {
    pld_status_t (*eval)(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out);
    pld_status_t (*eval_i64)(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int64_t *out);
    pld_status_t (*eval_ilist)(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int64_t *out, int n, int *count);
    pld_status_t (*run_queued)(pld_interp_t *it, frame_t *f, const pld_stmt_t *s, int64_t tid);
} pld_walker_t;

struct pld_interp {
    pld_program_t *p;
    /* the buffers of the merged collective steps (pld_coll.h), kept across
     * calls: fresh multi-MiB buffers cost a page fault per 4 KiB every call */
    pld_coll_bufs_t coll_bufs;
    pld_interp_opts_t opts;
    pld_comm_t comm;
    pld_hw_t *hw;
    int own_hw;
    const pld_func_t *entry;
    int entry_index;
    pld_value_t *args;             /* entry arguments, one per entry parameter */
    int dispatch;                  /* the dispatch being run, 0-based (--dump) */
    int *bound;
    int *want_out;                 /* entry tensor parameters declared pl.Tensor (In) read back as results
                                      (pld_interp_want_output) */
    /* module constants (index = p->consts index) */
    pld_value_t *consts;
    int *const_is_dyn;
    /* dynamic dims: interned name -> value */
    const char **dyn_names;
    int64_t *dyn_vals;
    int ndyn, capdyn;
    /* window buffers (local stand-ins until the MPI window layer) */
    winbuf_t *wins;
    int nwins, capwins;
    domain_t *doms;
    int ndoms;
    pld_win_sys_t *win;            /* window layer (borrowed from opts, or an own local one) */
    int own_win;
    long state_gen;                /* --load-windows: the generation of the state loaded (0: none) */
    int hang;                      /* the run stopped in a wait (watchdog / deadlock / abort) */
    int must_abort;                /* a rank did not stop: the tool must MPI_Abort */
    int64_t rr_counter;            /* round-robin dispatch counter */
    int failed;
    int quiet;                     /* evaluate without recording errors (probing dims) */
    pld_interp_stats_t stats;
    unsigned char ops_seen[PLD_OPID__COUNT]; /* op ids evaluated (pld_interp_ops_seen) */
    pld_interp_where_t where;      /* what this rank is doing, for signal handlers */
    uint64_t steps;                /* operations of this pld_interp_run, against step_limit */
    pld_win_progress_t *prog;      /* where pld_rt_step publishes them: this rank's status record, or
                                      prog_local without a window layer (pld_dist_progress_bind) */
    pld_win_progress_t prog_local;
    uint64_t prog_next;            /* steps at which pld_rt_progress_at publishes again */
    struct pld_wait_watch *watch;  /* what the hang watchdog saw of every rank's progress (pld_wait.h) */
    uint64_t step_limit;           /* opts.op_budget, UINT64_MAX when unlimited */
    /* tasks (pld_task.c) */
    int64_t cur_task;              /* TaskId of the running kernel task, 0 outside one */
    int manual_scope;              /* depth of pl.manual_scope bodies being walked */
    struct pld_defer *cur_defer;   /* defer_wait conditions registered by it */
    int ncur_defer;
    struct pld_task *tasks;        /* incomplete tasks: deferred or queued on deps */
    int ntasks, captasks;
    char errbuf[512];
    const pld_walker_t *walk;      /* the walker's callbacks (pld_walker) */
    pld_npu_sched_t *sched;        /* block scheduler of pl.spmd grids / multi-block launches (owned) */
    const uintptr_t *stack_lo;     /* the low end of the stack the walker runs on (pld_npu_stack_lo_ref) */
    /* module constants by interned name: open addressing over const_mask + 1
     * slots (name -> p->consts index; pld_const_index). Beside the AST: the
     * interpreter never writes into the program it runs. */
    const char **const_names;
    int *const_index;
    unsigned const_mask;
    /* enum members (pld.NotifyOp.Set, ...) by interned name, filled on first
     * use (pld_op_iarg): later uses compare pointers, not strings */
    const char *enum_names[PLD_ENUM_MEMBERS];
    /* the C code of each function (p->nfuncs) for a backend that compiles
     * kernels (PLD_BE_CAP_C_KERNELS; pld_crt.c), else NULL */
    struct pld_cgen *cgen;
    struct pld_cgen_scope *cgen_scopes; /* the same for pl.at / pl.spmd scopes, made at the program's load */
    int ncgen_scopes;
    pld_trace_t *trace;            /* opts.trace: the event recorder, or NULL (pld_tr_*) */
    /* the debugging machinery (src/debug, pld_debug.h): one handle, owned, NULL when no debug
     * option is on (pld_debug_hooks.c); the switches the hooks test are derived from it */
    pld_debug_t *debug;
    pld_debug_t *poison;           /* it->debug when --poison is on, else NULL: `if (it->poison)` */
    pld_debug_t *race;             /* it->debug when --check-races is on, else NULL: `if (it->race)` */
    int sched_on;                  /* --schedule-seed is on: every hook is `if (it->sched_on)` */
    int race_mute;                 /* --check-races: a collective records its transfers in the device's order
                                      itself (pld_coll_hooks_t.record); its window transfers are not recorded */
};

/* Records the statement (or wait) about to run in it->where. */
static inline void pld_where_at(pld_interp_t *it, const frame_t *f, pld_span_t sp)
{
    it->where.func = f && f->fn ? f->fn->name : NULL;
    it->where.line = (int32_t)sp.line;
    it->where.col = (int32_t)sp.col;
    it->where.block = f && f->block_num > 1 ? f->block_idx : -1;
}

/* ---- tracing (--trace, -v, --log-dir): every site is `if (it->trace)` ---- */
/* A fresh event of kind k at site sp of frame f: its track (the block and
 * lane f runs on), function and location; t0 = now. */
static inline void pld_tr_init(const frame_t *f, pld_span_t sp, pld_ev_t *ev, pld_ev_kind_t k, const char *name)
{
    pld_trace_ev_init(ev, k);
    if (f) {
        int64_t lane = f->lanes ? f->subblock_idx : f->xg ? f->xcore : -1;
        ev->track = pld_trace_track(f->block_num > 1 ? f->block_idx : -1, lane);
        ev->func = f->fn ? f->fn->name : NULL;
    }
    ev->line = (int32_t)sp.line;
    ev->col = (int32_t)sp.col;
    ev->name = name;
}

/* ======================================================= values, services */

/* ---- pld_rt.c: runtime errors, dynamic dims, static dtypes, op arguments ---- */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
pld_status_t pld_rt_error(pld_interp_t *it, frame_t *f, pld_span_t sp, const char *fmt, ...);
/* ---- stack room: a located error instead of a crash on deep recursion ----
 * Block stacks are small (pld_npu.h) and every call and expression level of
 * the walker recurses on them. pld_stack_check runs at every function call
 * (pld_walk_function), expression (pld_eval) and statement block: it fails
 * when less than PLD_INTERP_STACK_MARGIN is left on the stack the code runs
 * on (the block's, or the thread's outside a grid), which must cover the
 * deepest stack use between two checks (an op with its kernels). */
#if defined(__SANITIZE_ADDRESS__)
#define PLD_INTERP_STACK_MARGIN ((uintptr_t)256 << 10)
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PLD_INTERP_STACK_MARGIN ((uintptr_t)256 << 10)
#endif
#endif
#ifndef PLD_INTERP_STACK_MARGIN
#define PLD_INTERP_STACK_MARGIN ((uintptr_t)64 << 10)
#endif
/* The slow path: confirms the reading (pld_npu_stack_current) and reports
 * "stack exhausted: N KiB left on block B's stack at call depth D" at sp
 * (PLD_E_RUNTIME), or returns PLD_OK when there is room after all. */
pld_status_t pld_stack_exhausted(pld_interp_t *it, frame_t *f, pld_span_t sp, uintptr_t at);
static inline pld_status_t pld_stack_check(pld_interp_t *it, frame_t *f, pld_span_t sp)
{
    const uintptr_t lo = *it->stack_lo; /* one load: the check runs at every expression */
    const uintptr_t at = (uintptr_t)__builtin_frame_address(0);
    if (lo != 0 && at < lo + PLD_INTERP_STACK_MARGIN)
        return pld_stack_exhausted(it, f, sp, at);
    return PLD_OK;
}
/* Counts one operation (an expression evaluation or a statement) against
 * opts.op_budget; PLD_E_RUNTIME ("operation budget (N) exhausted" at sp) once
 * the budget is used up. */
pld_status_t pld_rt_step_limit(pld_interp_t *it, frame_t *f, pld_span_t sp);
static inline pld_status_t pld_rt_step(pld_interp_t *it, frame_t *f, pld_span_t sp)
{
    if (++it->steps <= it->step_limit)
        return PLD_OK;
    return pld_rt_step_limit(it, f, sp); /* the budget, or a --schedule-seed deadline (pld_sched_stale) */
}
/* Publishes the operation count and sp as this rank's progress (it->prog:
 * two relaxed stores, read by the other ranks' hang watchdog, pld_wait.h),
 * and the count at which pld_rt_progress_at publishes next. */
void pld_rt_progress(pld_interp_t *it, pld_span_t sp);
/* At every statement and every back edge of a compiled loop: publishes the
 * progress once 64 operations passed since the last time (one compare; the
 * watchdog's budget is seconds, and a wait publishes the exact count first). */
static inline void pld_rt_progress_at(pld_interp_t *it, pld_span_t sp)
{
    if (__builtin_expect(it->steps >= it->prog_next, 0))
        pld_rt_progress(it, sp);
}
/* Static dtype named by an expression (pl.FP32, FP32, a dtype constant). */
pld_dtype_t pld_expr_dtype(pld_interp_t *it, const pld_expr_t *e);
/* Value of dynamic dim `name`; 0 when unbound. */
/* The window buffer of domain d that holds byte disp, or NULL. */
const winbuf_t *pld_winbuf_at(const pld_interp_t *it, const domain_t *d, size_t disp);
int pld_dyn_get(const pld_interp_t *it, const char *name, int64_t *out);
int pld_dyn_set(pld_interp_t *it, const char *name, int64_t v);
/* Builds the module-constant index (it->const_names); PLD_E_NOMEM. */
pld_status_t pld_const_index_build(pld_interp_t *it);
/* Index in p->consts of the module constant named `name` (interned; the last
 * one of that name), or -1. */
static inline int pld_const_index(const pld_interp_t *it, const char *name)
{
    if (!it->const_names)
        return -1;
    unsigned j = (unsigned)(((uint64_t)(uintptr_t)name * 0x9E3779B97F4A7C15u) >> 40) & it->const_mask;
    for (;; j = (j + 1) & it->const_mask) {
        if (it->const_names[j] == name)
            return it->const_index[j];
        if (!it->const_names[j])
            return -1;
    }
}

/* Arguments of an op call, bound to the op's parameters by the checker. */
static inline const pld_expr_t *pld_op_arg(const pld_expr_t *e, int i)
{
    return e->bound ? e->bound[i] : NULL;
}
static inline const char *pld_op_name(const pld_expr_t *e)
{
    if (e->op < 0) /* a builtin kernel call (pld_builtin.c): the kernel's name */
        return e->u.call.fn->kind == PLD_EX_ATTR ? e->u.call.fn->u.attr.attr : "call";
    return pld_op_info((pld_op_id_t)e->op)->name;
}
void pld_poison_tile_read(pld_interp_t *it, const pld_expr_t *e, int i, const pld_tile_t *t); /* pld_poison.c */
/* Operand i of e as the compiled kernel supplied it (f->opvals, pld_rt.c). */
pld_status_t pld_op_supplied(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int i, pld_value_t *out);
/* Evaluates parameter i (NONE when absent; --poison: a tile operand's never-written reads reported). */
static inline pld_status_t pld_op_eval(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int i, pld_value_t *out)
{
    const pld_expr_t *a = pld_op_arg(e, i);
    if (!a) {
        *out = pld_v_none();
        return PLD_OK;
    }
    pld_status_t st = f && f->opvals && f->opvals->e == e ? pld_op_supplied(it, f, e, i, out) : it->walk->eval(it, f, a, out);
    if (it->poison && st == PLD_OK && out->kind == PLD_V_TILE && pld_v_tile(out)->unw)
        pld_poison_tile_read(it, e, i, pld_v_tile(out));
    return st;
}
/* Evaluates parameter i, without the --poison check (NONE when absent). */
pld_status_t pld_op_value(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int i, pld_value_t *out);
/* Integer parameter i, evaluated (it->walk->eval_i64; no enum members). */
pld_status_t pld_op_i64(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int i, int64_t *out);
/* Evaluates parameter i, which must be a value of kind k (error names the op and parameter). */
pld_status_t pld_op_need(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int i, pld_value_t *v, pld_vkind_t k);
/* Integer parameter i (dflt when absent); enum members (pld.ReduceOp.Max, pld.NotifyOp.Set, ...) as their values. */
pld_status_t pld_op_iarg(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int i, int64_t dflt, int64_t *out);
/* Integer list parameter i (*n = -1 when absent). */
pld_status_t pld_op_ilist(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int i, int64_t *out, int *n);
/* A shape parameter i (no negative dims). */
pld_status_t pld_op_shape(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int i, int64_t *shape, int *rank);
/* The result dtype of op call e: its static type's, else the dtype named by parameter dtype_arg. */
pld_dtype_t pld_op_dtype(pld_interp_t *it, const pld_expr_t *e, int dtype_arg);
static inline pld_status_t pld_op_oom(pld_interp_t *it, frame_t *f, const pld_expr_t *e)
{
    return pld_rt_error(it, f, e->span, "out of memory");
}
/* st of a kernel call (pld_kern.h) as a runtime error naming the op. */
static inline pld_status_t pld_op_kcheck(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_status_t st,
                                         const char *err)
{
    return st == PLD_OK ? PLD_OK : pld_rt_error(it, f, e->span, "%s: %s", pld_op_name(e), err);
}

/* ======================================================= dist */

/* ---- pld_dist.c: comm domains and windows, remote regions, signals, the hang watchdog ---- */
/* Infers comm domains and window sizes from the HOST orchestrator: local,
 * no communication (a failure here is agreed on before pld_dist_create). */
pld_status_t pld_dist_plan(pld_interp_t *it, const pld_func_t *host);
/* Creates the planned windows. Collective: every rank calls it, after every
 * rank's plan succeeded. */
pld_status_t pld_dist_create(pld_interp_t *it);
/* End of run: waits until every rank finished or failed (detecting deadlocks
 * meanwhile), then reports a hang summary on rank 0. Collective. */
pld_status_t pld_dist_finish(pld_interp_t *it, pld_status_t st);
/* Refreshes the host copy of every window the kernel backend placed (after
 * the run, before the outputs are assembled). PLD_E_HW with a diagnostic. */
pld_status_t pld_dist_fetch(pld_interp_t *it);
/* Window state between runs (opts.load_windows / save_windows): load fills
 * this rank's windows from DIR right after pld_dist_create (the caller
 * agrees before any rank reaches a window); save writes them after a run
 * that succeeded, and commit (rank 0, once every rank saved) writes the
 * manifest that makes the new state the directory's. A missing or foreign
 * state, another rank count or layout: a located error (PLD_E_USAGE, or
 * PLD_E_IO for a file that cannot be read or written). */
pld_status_t pld_dist_state_load(pld_interp_t *it, const char *dir);
pld_status_t pld_dist_state_save(pld_interp_t *it, const char *dir);
pld_status_t pld_dist_state_commit(pld_interp_t *it, const char *dir);
void pld_dist_fini(pld_interp_t *it);
/* Points it->prog at this rank's status record (it->win) or at prog_local,
 * and creates it->watch for a window layer; call when it->win changes. */
void pld_dist_progress_bind(pld_interp_t *it);
/* Between two dispatches of the entry (--dispatches): waits until every rank
 * finished dispatch `done`; when `clear`, then zeroes this rank's windows and
 * waits until every rank did (fresh or reset persistent windows, §1.5).
 * part 0: all of it; 1: the first wait only; 2: the rest, with the second
 * wait also when !clear (the walker's per-dispatch I/O runs between 1 and 2).
 * Collective, under the hang watchdog. */
pld_status_t pld_dist_between(pld_interp_t *it, frame_t *f, pld_span_t sp, int done, int clear, int part);
/* --dump: hands value v of expression `tag` (its source text is the tag) to
 * the tool's hook, located at `at` (errors there too); stage "marker",
 * "before_dispatch" or "after_completion" (pld_interp_dump_rec_t). */
pld_status_t pld_dump_value(pld_interp_t *it, frame_t *f, const pld_expr_t *tag, pld_span_t at, const char *stage,
                            const pld_value_t *v);
/* --dump: hands the value v of the marker e (pl.dump_tag) to the tool's hook. */
pld_status_t pld_dump_tag(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_value_t *v);
/* --dump: the tensors launch `call` lists (dumps=[...], attrs={"dump_vars":
 * [...]}) at stage 0 (before the launch: In and InOut arguments of kernel fn,
 * the positional arguments from `first`) or 1 (after it: Out and InOut); fn
 * NULL (a pl.at scope) or a name that is no argument: both stages. No work
 * without --dump or a list. */
pld_status_t pld_dump_launch(pld_interp_t *it, frame_t *f, const pld_expr_t *call, const pld_func_t *fn, int first,
                             int stage);
/* The domain of a window-bound tensor, or NULL with an error reported. */
domain_t *pld_dist_domain_of(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_tensor_t *t);
/* The window buffer of allocation call e (pld.alloc_window_buffer, or a HOST
 * allreduce without a signal: the hidden one of §2.14.5), or -1. */
int pld_dist_buf_of(const pld_interp_t *it, const pld_expr_t *e);
/* Byte displacement of the element at idx of window-bound tensor t. */
size_t pld_dist_disp(const domain_t *d, const pld_tensor_t *t, const int64_t *idx);
/* Moves the region [off, off+ext) of window-bound tensor t on domain rank
 * peer to/from a packed local buffer (dir 0 get, 1 put, 2 atomic add). */
pld_status_t pld_dist_region(pld_interp_t *it, frame_t *f, const pld_expr_t *e, domain_t *d, int peer,
                             const pld_tensor_t *t, const int64_t *off, const int64_t *ext, void *packed, int dir);
/* 1 when transfers may be batched (pld_win_batch_begin): not under --poison,
 * --check-races or a seeded schedule. */
int pld_dist_can_batch(const pld_interp_t *it);
/* Ends a batch (pld_win_batch_end); a failed flush becomes a runtime error at
 * e unless st already is one. Returns st or that error. */
pld_status_t pld_dist_batch_end(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_status_t st);
/* notify / wait on an int32 cell of a window-bound signal tensor; a wait's
 * condition is one of pld_wait.h's (PLD_CMP_EQ, PLD_CMP_GE, PLD_CMP_GE_U). */
pld_status_t pld_dist_notify(pld_interp_t *it, frame_t *f, const pld_expr_t *e, domain_t *d, int peer, size_t disp,
                             int32_t v, int set);
pld_status_t pld_dist_wait(pld_interp_t *it, frame_t *f, const pld_expr_t *e, domain_t *d, size_t disp, int cmp,
                           int32_t expected, const char *what);
/* As pld_dist_wait, with the description of the wait ("wait on sig[1, 0]
 * (Ge 1) in f") written by describe(ctx, buf, n) only when it is needed: when
 * the wait did not finish within a few polls (the status board shows it) or
 * fails. A wait answered at once formats nothing. */
pld_status_t pld_dist_wait_fn(pld_interp_t *it, frame_t *f, const pld_expr_t *e, domain_t *d, size_t disp, int cmp,
                              int32_t expected, pld_describe_fn describe, const void *ctx);
/* Waits until every transfer of x (two-sided, pld_win_xset_*) is complete, as
 * a wait on a cell does: under the hang watchdog, the report saying
 * describe's text, how many transfers completed and how many there are. */
pld_status_t pld_dist_xset_wait(pld_interp_t *it, frame_t *f, const pld_expr_t *e, domain_t *d, pld_win_xset_t *x,
                                pld_describe_fn describe, const void *ctx);

/* ---- pld_debug_hooks.c (base layer): the debugging machinery's handle (src/debug, pld_debug.h) ----
 * it->debug, NULL when no debug option is on; it->poison, it->race and it->sched_on, the switches
 * every hook below is guarded by, are derived from it. */
/* When opts.poison / check_races / schedule (after the backend is open; seeds it->sched for a
 * schedule): PLD_E_USAGE (message in err) for --poison or --check-races with a backend other
 * than sim, PLD_E_NOMEM. */
pld_status_t pld_debug_hooks_open(pld_interp_t *it, char *err, size_t errn);
/* Frees the handle (the windows are gone; pld_sched_finish applied what was held back). */
void pld_debug_hooks_close(pld_interp_t *it);

/* ---- pld_poison.c (base layer): --poison (never-written window bytes and created tiles read as
 * NaN / a pattern, and reported; src/debug/pld_debug_poison.c) ----
 * Every hook is one `if (it->poison)` branch: nothing runs when the option is off. */
/* Before the run (after pld_dist_plan's allocations): which window buffers
 * are signals (stay zero, count as written) and which dtype fills the others. */
void pld_poison_classify(pld_interp_t *it, const pld_func_t *host);
/* After the data windows exist: fills them with the pattern, then creates the
 * shadow windows (collective, same order on every member). */
pld_status_t pld_poison_create(pld_interp_t *it);
/* After the windows were zeroed between dispatches: pattern and shadows again. */
void pld_poison_reset(pld_interp_t *it);
void pld_poison_fini(pld_interp_t *it); /* destroys the shadow windows (before the data windows) */
/* What the runs of one remote transfer found unwritten: count and the range of displacements. */
typedef pld_debug_acc_t pld_poison_acc_t;
/* One contiguous run of pld_dist_region: a put/add marks the peer's shadow, a
 * get reads it and accumulates the never-written bytes into acc. */
pld_status_t pld_poison_run(pld_interp_t *it, domain_t *d, int peer, size_t disp, size_t bytes, int dir,
                            pld_poison_acc_t *acc, char *err, size_t errn);
/* Reports a transfer's never-written bytes (acc) at e, once per site. */
void pld_poison_report_remote(pld_interp_t *it, const pld_expr_t *e, const domain_t *d, int peer,
                              const pld_tensor_t *t, const pld_poison_acc_t *acc);
/* A local read of the box [off, off+ext) of t: reports never-written bytes of
 * a window at e (once per site). No-op for a tensor that is not a window. */
void pld_poison_check_local(pld_interp_t *it, const pld_expr_t *e, const pld_tensor_t *t, const int64_t *off,
                            const int64_t *ext);
/* A pl.tile.create (no value) under --poison: the pattern in t, every element never-written.
 * PLD_E_NOMEM. */
pld_status_t pld_poison_tile_created(pld_interp_t *it, const pld_expr_t *e, pld_tile_t *t);
/* Operand i of op e is tile t: unless the operand is one the op only writes (assemble's target,
 * write's tile, a tmp scratch), reports never-written elements of its valid region (once per site). */
void pld_poison_tile_read(pld_interp_t *it, const pld_expr_t *e, int i, const pld_tile_t *t);

/* ---- pld_debug_hooks.c (base layer): --check-races (unordered conflicting window accesses,
 * docs/races.md; src/debug/pld_debug_race.c) ----
 * Every hook is one `if (it->race)` branch: nothing runs when the option is off. */
/* After the data windows exist: the access-record segments (collective, same order on every
 * member); a runtime error when a domain's members do not map each other's windows (rma). */
pld_status_t pld_race_create(pld_interp_t *it);
void pld_race_fini(pld_interp_t *it); /* destroys the segments (before the data windows) */
/* One contiguous run of pld_dist_region (dir 0 get, 1 put, 2 atomic add), recorded at the peer. */
void pld_race_remote(pld_interp_t *it, frame_t *f, const pld_expr_t *e, domain_t *d, int peer, size_t disp,
                     size_t bytes, int dir);
/* A local access of the box [off, off+ext) of t (NULL off/ext: all of t) when t is a window;
 * kind PLD_HB_READ / WRITE / ATOMIC (pld_hb.h). */
void pld_race_local(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_tensor_t *t, const int64_t *off,
                    const int64_t *ext, int kind);
/* Around a notify of peer's cell: lock the peer's records, then (done: the notify happened)
 * release into the cell's release set and unlock. */
void pld_race_notify_lock(pld_interp_t *it, domain_t *d, int peer);
void pld_race_notify_unlock(pld_interp_t *it, frame_t *f, const pld_expr_t *e, domain_t *d, int peer, size_t disp,
                            int32_t v, int set, int done);
/* A satisfied wait (or deferred completion) on this rank's cell disp of d, condition cmp
 * (PLD_CMP_*) against expected: acquire the contributions it observed (pld_hb_acquire). */
void pld_race_acquire(pld_interp_t *it, frame_t *f, domain_t *d, size_t disp, int cmp, int32_t expected);
/* Deferred completion (docs/races.md, edge 7): a task's defer_wait conditions acquire into the
 * task's own clock (pld_race_task_acquire; pld_race_task_redirect(it, tid) makes the waits that
 * follow do so, 0 ends it), and a launch gated on deps= joins its deps' clocks
 * (pld_race_task_deps with tid 0: into f's thread; tid > 0: into task tid's clock, a dummy task). */
void pld_race_task_acquire(pld_interp_t *it, int64_t tid, domain_t *d, size_t disp, int cmp, int32_t expected);
void pld_race_task_redirect(pld_interp_t *it, int64_t tid);
void pld_race_task_deps(pld_interp_t *it, const frame_t *f, int64_t tid, const int64_t *deps, int ndeps);
/* Detached tasks (docs/races.md, edge 2; pld_debug_race_task_*): a task queued behind deps=
 * (pld_race_task_issue when queued, pld_race_task_detach with its tid when it runs) or a task of
 * a pl.manual_scope (pld_race_task_detach with 0, before its deps are joined) is ordered after its
 * issue and its deps only, and before later work only through deps=, the end of its manual scope
 * (pld_call.c: the scope's completed tasks joined through pld_race_task_deps) and the end of the
 * orchestration function (pld_race_task_settle). pld_race_task_tid: the launch's TaskId. */
void pld_race_task_issue(pld_interp_t *it, const frame_t *f, int64_t tid);
void pld_race_task_detach(pld_interp_t *it, const frame_t *f, int64_t queued);
void pld_race_task_tid(pld_interp_t *it, int64_t tid);
void pld_race_task_settle(pld_interp_t *it, const frame_t *f);
/* A block / core / kernel (child) starts from its launcher (parent); after the launch, the
 * launcher joins every block it forked. */
void pld_race_fork(pld_interp_t *it, const frame_t *parent, const frame_t *child);
void pld_race_join(pld_interp_t *it, const frame_t *parent);
/* Synchronisation among the cores and blocks of one rank (cross-core pipes, events, syncall),
 * coarser than the edges above: how 0 = a release (the thread moves to a new epoch); 1 = an
 * acquire of the current clocks of every core of the thread's launch (a pop, an event wait);
 * 2 = an acquire of every block and core of this rank (a syncall). Coarse means it may order
 * more than the program does: a race can be missed, never invented. */
void pld_race_sync(pld_interp_t *it, const frame_t *f, int how);
/* The barrier between dispatches: before it (after = 0) publish this rank's clocks; after it
 * join every member's; clear: the windows were zeroed (records and release sets go too). */
void pld_race_barrier(pld_interp_t *it, int done, int after, int clear);
/* At the end of the run: a warning when records had to be forgotten. */
void pld_race_summary(pld_interp_t *it);
/* ---- pld_debug_hooks.c (base layer): --schedule-seed, seeded schedules (docs/races.md "Schedules";
 * src/debug/pld_debug_sched.c) ----
 * The block order of every grid drawn from a PRNG seeded with seed ^ rank,
 * preemption points at remote ops, and puts to peers held back and applied
 * later within the memory model. Every hook is one `if (it->sched_on)`
 * branch: nothing runs when the option is off. */
/* At the start of pld_interp_run, after it->step_limit is set. */
void pld_sched_run_begin(pld_interp_t *it);
/* A remote transfer (put, get, atomic add) at sp: a preemption point, and
 * pending puts applied at random. Errors are reported (PLD_E_RUNTIME). */
pld_status_t pld_sched_point(pld_interp_t *it, frame_t *f, pld_span_t sp);
/* Before a notify or a wait (release): a preemption point, then every pending put applied. */
pld_status_t pld_sched_release(pld_interp_t *it, frame_t *f, pld_span_t sp);
/* Every pending put applied (end of a kernel task, of a CHIP dispatch). */
pld_status_t pld_sched_flush(pld_interp_t *it, frame_t *f, pld_span_t sp);
/* End of the run (st: its status so far): every pending put applied, also
 * after a failure; st, or the apply's error when st is PLD_OK. */
pld_status_t pld_sched_finish(pld_interp_t *it, pld_status_t st);
/* The step limit passed while puts were pending (pld_rt_step): applies them. */
pld_status_t pld_sched_stale(pld_interp_t *it, frame_t *f, pld_span_t sp);
uint64_t pld_sched_budget(const pld_interp_t *it); /* the op budget's step limit */
/* A get or atomic add of [disp, disp+bytes) on domain rank peer of d: the
 * pending puts it overlaps applied first (message in err). */
pld_status_t pld_sched_overlap(pld_interp_t *it, domain_t *d, int peer, size_t disp, size_t bytes, char *err,
                               size_t errn);
/* A put: held back (its bytes copied) when the schedule delays puts to this
 * target, else done now (pld_win_put). Message in err. */
pld_status_t pld_sched_put(pld_interp_t *it, domain_t *d, int peer, size_t disp, const void *src, size_t bytes,
                           char *err, size_t errn);
/* The window layer's put / get / atomic add as pld_dist_region issues them:
 * unchanged when the schedule is off. */
static inline pld_status_t pld_sched_win_put(pld_interp_t *it, domain_t *d, int peer, size_t disp, const void *src,
                                             size_t bytes, char *err, size_t errn)
{
    if (it->sched_on)
        return pld_sched_put(it, d, peer, disp, src, bytes, err, errn);
    return pld_win_put(d->win, peer, disp, src, bytes, err, errn);
}
static inline pld_status_t pld_sched_win_get(pld_interp_t *it, domain_t *d, int peer, size_t disp, void *dst,
                                             size_t bytes, char *err, size_t errn)
{
    if (it->sched_on && pld_sched_overlap(it, d, peer, disp, bytes, err, errn) != PLD_OK)
        return PLD_E_RUNTIME;
    return pld_win_get(d->win, peer, disp, dst, bytes, err, errn);
}
static inline pld_status_t pld_sched_win_add(pld_interp_t *it, domain_t *d, int peer, size_t disp, const void *src,
                                             pld_dtype_t dt, size_t count, char *err, size_t errn)
{
    if (it->sched_on &&
        pld_sched_overlap(it, d, peer, disp, count * (size_t)pld_dtype_bytes(dt), err, errn) != PLD_OK)
        return PLD_E_RUNTIME;
    return pld_win_add(d->win, peer, disp, src, dt, count, err, errn);
}

/* ======================================================= ops */

/* ---- pld_task.c: TaskIds, deferred completion (defer_wait), deps gating ---- */
/* Around every kernel task launch: begin makes TaskId tid current (tid 0: the
 * next TaskId; a queued task runs under the one it was given when queued) and
 * keeps the previous current one in *saved; end restores it and, when ok,
 * turns the task's defer_wait conditions into a deferred (incomplete) task. */
int64_t pld_task_begin(pld_interp_t *it, int64_t tid, int64_t *saved);
pld_status_t pld_task_end(pld_interp_t *it, frame_t *f, pld_span_t sp, const char *name, int64_t saved, int ok);
/* defer_wait in the running task: "unsigned(cell) >= expected" on domain
 * dom's cell at byte disp (cell_text names it in reports). */
pld_status_t pld_task_defer(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int dom, size_t disp, int64_t expected,
                            const char *cell_text);
/* 1 when task tid completed (never deferred, or its conditions held). */
int pld_task_complete(pld_interp_t *it, int64_t tid);
/* Completes deferred tasks whose conditions hold and runs ready queued tasks. */
pld_status_t pld_task_progress(pld_interp_t *it);
/* Queues with-statement s of frame f as task tid until deps complete. */
pld_status_t pld_task_queue(pld_interp_t *it, frame_t *f, const pld_stmt_t *s, const char *name, int64_t tid,
                            const int64_t *deps, int ndeps);
/* Blocks (under the watchdog) until every task of deps completed. */
pld_status_t pld_task_wait_deps(pld_interp_t *it, frame_t *f, pld_span_t sp, const int64_t *deps, int ndeps);
/* pl.system.task_dummy: *tid = -1 (invalid) without deps, else a new TaskId
 * that completes when every one of deps has. */
pld_status_t pld_task_dummy(pld_interp_t *it, frame_t *f, pld_span_t sp, const int64_t *deps, int ndeps, int64_t *tid);
/* The TaskIds of a deps=[...] list d (NULL: none): None and invalid entries
 * add no edge; a pl.array of TaskIds adds each of its set elements. */
#define PLD_MAX_DEPS 64
pld_status_t pld_eval_deps(pld_interp_t *it, frame_t *f, const pld_expr_t *d, int64_t *deps, int *n);
/* Blocks until no task is incomplete, running queued tasks as they become
 * ready (the end of an orchestration function). */
pld_status_t pld_task_drain(pld_interp_t *it, frame_t *f);
void pld_task_fini(pld_interp_t *it);

/* ---- op families: each executes the op calls of its family (e->op) ---- */
/* pld_exec_layout.c: transpose, extract, concat, tile/tensor gather,
 * transpose_view, reinterpret_view, tensor.view, scatter, sort, gather_row,
 * gather_mask, scatter_mask. */
pld_status_t pld_exec_layout(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out);
/* pld_exec_gather.c: mgather, mscatter, gatherb, gather_compare,
 * scatter_update, paged_gather. */
pld_status_t pld_exec_gather(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out);
/* Helpers of pld_exec_layout.c shared with pld_exec_gather.c: a shaped
 * operand's kernel view (physical extent) and valid box. */
typedef struct {
    pld_value_t v;
    pld_view_t kv;
    const int64_t *valid;
    int tile;
} pld_shaped_t;
/* Evaluates parameter i, a tile or a tensor (released by the caller through s->v). */
pld_status_t pld_shaped_arg(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int i, pld_shaped_t *s);
/* A new zeroed tile (tile != 0, in memory space mem) or tensor of shape; its
 * packed view in *kv, its valid array in *valid. */
pld_status_t pld_new_like(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int tile, pld_dtype_t dt, int rank,
                          const int64_t *shape, pld_mem_t mem, pld_value_t *out, pld_view_t *kv, int64_t **valid);
/* The row-major multi-index of flat position k in extents ext[r]. */
static inline void pld_unflatten(int64_t k, int r, const int64_t *ext, int64_t *idx)
{
    for (int d = r - 1; d >= 0; d--) {
        idx[d] = ext[d] ? k % ext[d] : 0;
        k = ext[d] ? k / ext[d] : 0;
    }
}
/* The address of element idx of view v. */
static inline void *pld_view_at(const pld_view_t *v, const int64_t *idx)
{
    int64_t o = 0;
    for (int d = 0; d < v->rank; d++)
        o += idx[d] * v->strides[d];
    return (char *)v->data + o * pld_dtype_bytes(v->dt);
}
/* pld_exec_mem.c: tile load/store, create/fill, element read/write, slices,
 * subscripts, assemble, reshape, move, valid shapes, arrays. */
/* The tile <-> tensor region of a load or store (pld_exec_mem.c): checks the
 * offsets, clamps when asked, fills ext (tensor rank); the view of it. */
pld_status_t pld_region(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_tensor_t *t, const int64_t *off,
                        int noff, const int64_t *tile_ext, int r, int clamp, int64_t *ext, const char *what);
void pld_region_view(const pld_tensor_t *t, const int64_t *off, const int64_t *ext, int r, pld_view_t *v);
/* Writes a tile's valid region into t at off (limit: per-dim caps or NULL; atomic: accumulate). */
pld_status_t pld_store_tile(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_tile_t *tile, pld_tensor_t *t,
                            const int64_t *off, int noff, const int64_t *limit, int atomic);
/* pl.tensor.assemble of tensor src into dst at offsets off (atomic: accumulate): the region and dtype checks, the
 * copy, the written marks (the compiled kernels' rt->assemble too) */
pld_status_t pld_assemble_tensor(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_tensor_t *dst,
                                 const pld_tensor_t *src, const int64_t *off, int noff, int atomic);
/* The rounding mode of a cast's mode argument (pld_exec_compute.c). */
pld_round_k_t pld_round_mode(const pld_expr_t *m);
pld_status_t pld_exec_load(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out, int remote);
pld_status_t pld_exec_store(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out);
/* tile/tensor create (tile: a tile; full: filled with parameter value_arg). */
pld_status_t pld_exec_create(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out, int tile, int full,
                             int value_arg);
pld_status_t pld_exec_read_write(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out, int write);
pld_status_t pld_exec_slice(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out);
pld_status_t pld_exec_move(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out);
pld_status_t pld_exec_reshape(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out);
pld_status_t pld_exec_assemble_op(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out);
pld_status_t pld_exec_valid(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out);
pld_status_t pld_exec_array_create(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out);
pld_status_t pld_exec_array_elem(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out);
/* Ops with no effect on data: pl.prefetch.make_context / async_prefetch /
 * session / wait (L2 cache hints: handles and a BOOL True) and pl.tile.alloc /
 * pl.tensor.alloc (allocation tokens: a Ptr that is no window buffer). */
pld_status_t pld_exec_token(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out);
/* Tensor view for a subscript x[i, a:b, ...]. */
pld_status_t pld_exec_subscript(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_value_t *obj,
                                pld_value_t *out);
/* t[...] = v (tensor assemble / element write, tile element write, array update). */
pld_status_t pld_exec_subscript_assign(pld_interp_t *it, frame_t *f, const pld_expr_t *target, const pld_value_t *v);
/* pld_exec_compute.c: element-wise (nary 1 or 2; scalar_rhs), reductions,
 * casts, matmul (acc: accumulate into parameter 0). */
pld_status_t pld_exec_elementwise(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out, int nary,
                                  int scalar_rhs);
pld_status_t pld_exec_reduce(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out, pld_redop_k_t op,
                             int flags);
/* pld_exec_elem.c: the element-wise ops of issue 11 (sin/cos/not, cmp/cmps,
 * sel/sels, fmod/rem, bitwise and shifts, lrelu/prelu, addc/subc/addsc/subsc,
 * part_*, ci, tri) in their tile and tensor forms. */
pld_status_t pld_exec_elem(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out);
/* The valid shape of an element-wise tensor result (PyPTO's rule): a's, or
 * the whole shape (pld_exec_compute.c). */
void pld_tensor_elem_valid(pld_tensor_t *o, const pld_tensor_t *a, const pld_tensor_t *b);
/* pl.tensor.expand_clone. */
pld_status_t pld_exec_expand_clone(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out);
pld_status_t pld_exec_cast(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out);
pld_status_t pld_exec_matmul(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out, int mode);
/* pl.tensor.matmul_acc (a_trans, b_trans, init_cond). */
pld_status_t pld_exec_tensor_matmul_acc(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out);
/* pl.tile.matmul_mx / matmul_mx_acc / matmul_mx_bias (MX block-scaled, pld_k_matmul_mx). */
pld_status_t pld_exec_matmul_mx(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out);
/* pl.tile.batch_matmul, pl.tile.batch_matmul_acc. */
pld_status_t pld_exec_batch_matmul(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out); /* 0 matmul, 1 matmul_acc, 2 matmul_bias */
/* pld_exec_dist.c: the pld.* ops on windows and signals (PLD_OPID_PLD_WORLD_SIZE
 * .. PLD_OPID_PLD_DEFER_WAIT). */
pld_status_t pld_exec_dist(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out);
/* pld_exec_coll.c: collectives on every rail (PLD_OPID_PLD_ALLREDUCE ..): the
 * operands bound to views and checked, the protocol run by pld_coll.h. */
pld_status_t pld_exec_coll(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out);
/* Runs collective `kind` (pld_op_coll_kind) of call e in frame f: a
 * builtin.tensor.* dispatch or a builtin kernel call whose operands the
 * checker bound like the collective's (the sim backend's builtin kernels). */
pld_status_t pld_exec_coll_run(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int kind, pld_value_t *out);
/* pld_call.c: the kernel-ABI description of a launch argument value (a) and
 * its kind, dtype code, rank and window flag as a plugin sees the parameter
 * (p; name and direction are the caller's). */
void pld_call_hw_arg(const pld_interp_t *it, const pld_value_t *v, pld_hw_arg_t *a, pld_be_param_t *p);
/* How long a backend may wait for one launch: the run's --timeout (30 s by default). */
uint32_t pld_call_timeout_ms(const pld_interp_t *it);
/* pld_builtin.c (walker layer): the lowered program's builtin collectives as
 * kernel launches through the backend (pld_hw_launch). pld_builtin_exec: a
 * builtin.tensor.* dispatch (HOST), run where device= is this rank.
 * pld_builtin_call: a call of a synthesized builtin kernel
 * (pld_check_builtin_kernel) from a CHIP body. pld_builtin_run_sim: the
 * interpreter's side of either launch (pld_interp_run_kernel, when
 * host_state->builtin is set). */
pld_status_t pld_builtin_exec(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out);
pld_status_t pld_builtin_call(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_func_t *fn,
                              pld_value_t *out);
struct pld_sim_call;
pld_status_t pld_builtin_run_sim(struct pld_sim_call *c);

/* ---- pld_exec.c: the op dispatcher ---- */
/* Executes a call bound to an op of the table (e->op >= 0, not a special form
 * of the walker). */
pld_status_t pld_exec_op(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out);
/* ---- pld_xcore.c (ops layer): the cores of a cluster ----
 * The pl.system.* ops between the cores (pipe, events, barriers: bound to
 * the simulated cluster, pld_cluster.h), get_subblock_idx and the core
 * counts. */
pld_status_t pld_exec_xcore(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out);
/* An op as the cluster sees it: its name, line and hooks (where the rank
 * waits, the race detector's sync points). The compiled kernels' runtime
 * (pld_crt_sys.c) uses it too. */
typedef struct pld_xsite {
    pld_interp_t *it;
    frame_t *f;
    const pld_expr_t *e;
    pld_span_t sp;
    pld_cluster_site_t at;
} pld_xsite_t;
/* s for op e of frame f, located at sp; s must stay where it is while the cluster holds s->at */
void pld_xsite_init(pld_xsite_t *s, pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_span_t sp);

/* The on-chip memory check after a tile is bound to slot `just` (liveness,
 * per memory space; pld_exec.c). */
pld_status_t pld_exec_check_ub(pld_interp_t *it, frame_t *f, int just, pld_span_t sp);
/* The same check over a table of the tile each slot holds (bytes 0: none):
 * the interpreter's frame, or a compiled kernel's locals (pld_crt.c). */
typedef struct pld_ub_slot {
    int64_t bytes;
    pld_mem_t mem;
} pld_ub_slot_t;
pld_status_t pld_ub_check(pld_interp_t *it, frame_t *f, const pld_func_t *fn, int32_t cur, int just,
                          const pld_ub_slot_t *u, int nslots, pld_span_t sp);
/* 1 when bytes[m] (tile storage of memory space m, n spaces) is above a
 * capacity of this platform: a compiled kernel then checks every binding. */
int pld_ub_may_overflow(pld_interp_t *it, const int64_t *bytes, int n);

/* ======================================================= walker */

/* ---- pld_eval.c: expressions, statements, control flow ---- */
pld_status_t pld_eval(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out);
/* Evaluates an integer scalar expression. */
pld_status_t pld_eval_i64(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int64_t *out);
/* Evaluates a list-like expression (list/tuple literal, list constant, tuple
 * value) of integer scalars into out (max n items); *count receives the length. */
pld_status_t pld_eval_ilist(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int64_t *out, int n, int *count);
/* Value of a dim of a type (constant, dynamic dim, or expression). */
pld_status_t pld_eval_dim(pld_interp_t *it, frame_t *f, const pld_dim_t *d, int64_t *out, pld_span_t sp);
/* Runs the statements of b; returns the control flow (FLOW_*). */
int pld_walk_block(pld_interp_t *it, frame_t *f, const pld_block_t *b);
/* Assigns v to target t (a name, a tuple of targets, or a subscript). */
pld_status_t pld_walk_assign(pld_interp_t *it, frame_t *f, const pld_expr_t *t, const pld_value_t *v);
/* The value of keyword argument kw of a call, or NULL. */
const pld_expr_t *pld_walk_kwarg(const pld_expr_t *call, const char *kw);

/* ---- pld_call.c: calls, launches, task scopes, dispatch ---- */
/* self.f(...) (e->aux = f): runs f here, launches it as a kernel task, or
 * dispatches it to its device (HOST -> CHIP: device=, or round-robin). */
pld_status_t pld_walk_dispatch(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out);
/* ---- pld_subw.c: a SubWorker call (HOST, Python) through opts.subworkers ---- */
pld_status_t pld_walk_subworker(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_func_t *fn,
                                const pld_value_t *args, int n, pld_value_t *out);
/* pl.submit / pl.spmd_submit: a kernel launch; out = (results..., TaskId). */
pld_status_t pld_walk_submit(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out);
/* A with-statement (pl.at scope, pl.spmd grid, task queued on deps). */
int pld_walk_with(pld_interp_t *it, frame_t *f, const pld_stmt_t *s);
/* Describes the program's kernel functions to the backend (pld_hw_load). */
pld_status_t pld_walk_load_kernels(pld_interp_t *it, char *err, size_t errn);
/* Runs body (of statement s) as an SPMD grid of n blocks as task tid (0: the
 * next TaskId): a pl.spmd grid is a launch through the backend (on sim:
 * coroutines of this rank); loopvar (or NULL) takes the block index. */
int pld_walk_spmd(pld_interp_t *it, frame_t *f, const pld_stmt_t *s, const pld_expr_t *item, const pld_block_t *body,
                  const pld_expr_t *loopvar, int64_t n, int64_t tid);
void pld_walk_frame_init(frame_t *f, frame_t *parent, const pld_func_t *fn, pld_value_t *slots, int ctx, pld_span_t sp);
/* Binds args (borrowed) to fn's parameters in a fresh frame (checking tensor
 * shapes, binding dynamic dims on first use) and runs the body. */
pld_status_t pld_walk_function(pld_interp_t *it, frame_t *caller, const pld_func_t *fn, const pld_value_t *args,
                               int ctx, pld_span_t call_span, pld_value_t *result);
/* The walker's callbacks (it->walk). */
extern const pld_walker_t pld_walker;

/* ---- pld_group.c: a FunctionType.Group body (walker layer) ---- */
/* Runs the body of Group function f: its AIC and AIV kernel calls run as
 * cooperating cores of one cluster (one AIC block, one or two AIV lanes)
 * joined by the cross-core pipe (docs/cluster.md). Returns the control flow. */
int pld_xcore_group(pld_interp_t *it, frame_t *f, const pld_block_t *body);

/* ---- pld_crt.c: compiled kernels (the runtime of pld_crt.h, pld_be_host_t) ---- */
/* Generates the C code of every kernel function when the backend compiles
 * kernels (once; failures are kept per function). */
void pld_crt_gen(pld_interp_t *it);
void pld_crt_fini(pld_interp_t *it);
/* Sets d->c_source / c_unsupported for function fidx (-1: a scope) when
 * code was generated. */
void pld_crt_describe(const pld_interp_t *it, int fidx, pld_be_kernel_desc_t *d);
/* The same for scope / grid statement s of function fn (its code made at the
 * program's load, pld_walk_load_kernels; a later call finds it). */
void pld_crt_describe_scope(pld_interp_t *it, const pld_func_t *fn, const pld_stmt_t *s, pld_be_kernel_desc_t *d);
/* Block bk of a compiled kernel (pc_rt's bk): its interpreter, *f its frame,
 * *e the expression of `site` (NULL when none), *sp where errors at the site
 * are reported (pld_crt_sys.c). */
pld_interp_t *pld_crt_block(void *bk, frame_t **f, int site, const pld_expr_t **e, pld_span_t *sp);

/* ---- pld_crt_sys.c: the runtime of the system family (pc_rt entries) ---- */
int64_t pld_crt_sys_info(void *bk, int what);
int pld_crt_task_dummy(void *bk, int site, const int64_t *deps, int n, int64_t *tid);
int pld_crt_xcore(void *bk, int site, int op, const int64_t *iv, int n);
struct pc_tile;
int pld_crt_tpush(void *bk, int site, int dir, int64_t split, int64_t id, const struct pc_tile *t);
int pld_crt_tpop(void *bk, int site, int dir, int64_t split, int64_t id, struct pc_tile *dst, size_t room);
struct pc_out;
struct pc_member;
struct pc_rt;
int pld_crt_call(void *bk, int site, int32_t fidx, int (*fn)(const struct pc_rt *, void *, int64_t *), int64_t *args,
                 struct pc_out *out);
int pld_crt_group(void *bk, int site, int n, const struct pc_member *members);
int pld_crt_lanes(void *bk, int site, int64_t n, int split,
                  int (*fn)(const struct pc_rt *, void *, int64_t *, void **, int, int64_t), int64_t *args, void **fr,
                  int ubc);
int pld_crt_shard(void *bk, int site, int gather, int64_t split, const struct pc_tile *t, struct pc_tile *dst, size_t room);
/* pld_crt.c for them: a block of kernel function fidx (-1: parent's own
 * function and code, a pl.split_aiv lane) called at `site` of block parent
 * (its position inherited; NULL after a reported error); its
 * end, the return value in *result (owned; nonzero: it failed); a value as
 * a compiled kernel's pc_out (a tensor kept alive until bk ends) */
void *pld_crt_nested_open(void *parent, int fidx, int site);
int pld_crt_nested_close(void *bk, int rc, pld_value_t *result);
int pld_crt_out(void *bk, int site, const pld_value_t *v, struct pc_out *out);

/* ---- pld_sim.c: the built-in `sim` kernel backend (pld_interp_sim_backend) ---- */
/* The interpreter's call state handed to the sim backend through host_state. */
typedef struct pld_sim_call {
    pld_interp_t *it;
    frame_t *caller;
    const pld_func_t *fn;          /* kernel function, or NULL for a scope */
    const pld_block_t *scope;      /* pl.at(CORE_GROUP) body when fn == NULL */
    const pld_stmt_t *stmt;        /* the pl.at / pl.spmd statement of a scope or grid, else NULL */
    pld_value_t *args;             /* fn: one per parameter */
    pld_value_t result;
    pld_span_t span;
    int flow;                      /* scope: the body's control flow result */
    int blocks;                    /* SPMD blocks of the launch */
    void *grid;                    /* a pl.spmd grid: its blocks' context (pld_call.c), else NULL */
    int ran;                       /* set by the sim backend: the interpreter ran it (result valid) */
    int result_set;                /* a compiled kernel handed its return value over (result valid) */
    const pld_expr_t *builtin;     /* a builtin collective kernel (pld_builtin.c): its call, or NULL */
    int builtin_kind;              /* its collective (pld_op_coll_kind) */
} pld_sim_call_t;
/* Runs a kernel function / scope / builtin collective kernel for the sim
 * backend (pld_call.c). */
pld_status_t pld_interp_run_kernel(pld_sim_call_t *c);

#endif
