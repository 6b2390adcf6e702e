/* pld_interp.h - the tree-walking interpreter.
 *
 * Runs a checked program (pld_check.h) on one rank of an SPMD job: the HOST
 * orchestrator runs on every rank as a replica, `self.f(..., device=r)` runs f
 * on rank r only (round-robin without device=), CHIP orchestration functions
 * run on their rank, and every InCore/AIV kernel call or pl.at(CORE_GROUP)
 * scope is launched through the kernel backend interface (pld_hw.h; the
 * built-in `sim` backend is this interpreter). After the entry returns, every
 * Out/InOut host tensor is assembled at rank 0 from the elements each rank
 * wrote. Cross-rank communication goes through the pld_comm_t callbacks the
 * tool provides (MPI); this module does not link MPI.
 *
 * Runtime errors are appended to the program's diagnostic list (with
 * "in <function>" notes for the call chain); the run stops at the first one. */
#ifndef PLD_INTERP_H
#define PLD_INTERP_H

#include "pld_ast.h"
#include "pld_hw.h"
#include "pld_npu_profile.h"
#include "pld_pybridge.h"

#include <stddef.h>
#include <stdint.h>

/* Control-plane callbacks (MPI in the tool, in-process fakes in tests). */
typedef struct pld_comm {
    void *ctx;
    int rank;
    int nranks;
    /* Collective: rank 0 receives every rank's `bytes` bytes concatenated in
     * rank order into recv; other ranks pass recv = NULL. */
    pld_status_t (*gather)(void *ctx, const void *send, size_t bytes, void *recv);
    /* Collective: every rank gets the maximum of `in` over all ranks. */
    pld_status_t (*allreduce_max)(void *ctx, int64_t in, int64_t *out);
} pld_comm_t;

/* The built-in `sim` kernel backend (kernels interpreted by this module), to
 * register in a pld_hw_registry_t. Static storage. */
const pld_hw_ops_t *pld_interp_sim_backend(void);
/* The services the interpreter offers backends (pld_be_init_t.host): the
 * block scheduler, the runtime of compiled kernels, builtin collectives. */
const pld_be_host_t *pld_interp_be_host(void);

/* A single-process comm (rank 0 of 1) for tests and non-MPI runs. */
const pld_comm_t *pld_comm_self(void);

struct pld_win_sys;
struct pld_trace;
struct pld_debug_finding;
typedef struct pld_interp pld_interp_t;

/* --dump: one execution ("hit") of a pl.dump_tag(t) / pl.tensor.dump_tag(t)
 * marker, with the value t has there, or one tensor a kernel launch lists
 * (PyPTO's printed forms: dumps=[t] of pl.submit / pl.at, attrs={"dump_vars":
 * [t]} of a kernel call), before or after the launch. Every pointer is
 * borrowed for the duration of the call. */
typedef struct pld_interp_dump_rec {
    const char *tag;        /* the marked expression's source text ("q"), tag_len bytes, not NUL-terminated */
    size_t tag_len;
    const char *func;       /* the function the marker is in */
    uint32_t line, col;     /* the marker's position (from 1) */
    uint32_t site;          /* the marker's byte offset in the program: one id per marker */
    int dispatch;           /* 0-based dispatch (--dispatches) */
    int64_t block;          /* block of an SPMD grid / multi-block launch, -1 outside one */
    const char *stage;      /* "marker" (pl.dump_tag); a launch's dumps= / dump_vars list:
                               "before_dispatch" (inputs, InOut) or "after_completion" (outputs, InOut) */
    pld_dtype_t dt;
    int rank;
    const int64_t *shape;   /* of a tile: its valid region */
    const void *data;       /* packed row-major, native byte order */
} pld_interp_dump_rec_t;

/* The tool's --dump writer (the library writes no file). NULL in the options:
 * markers are skipped, as before (no cost). */
typedef struct pld_interp_dump_hook {
    void *ctx;
    /* Called on the rank running the marker. A failure (err filled) stops
     * the run with a runtime error at the marker. */
    pld_status_t (*tensor)(void *ctx, const pld_interp_dump_rec_t *rec, char *err, size_t errn);
} pld_interp_dump_hook_t;

/* Per-dispatch inputs and outputs (--in x=a.npy,b.npy / --out y=DIR/): the
 * tool's callbacks between two dispatches of a run. Either may be NULL. */
typedef struct pld_interp_dispatch_hook {
    void *ctx;
    /* Rank 0, after dispatch `done` (0-based) when another one follows: the
     * outputs assembled from every rank as the run's result would be if it
     * ended there (Out / InOut tensor parameter i, packed). Collective: every
     * rank takes part in the assembly; the call itself is made at rank 0. */
    pld_status_t (*outputs)(void *ctx, int done, int i, const char *name, pld_dtype_t dt, int rank,
                            const int64_t *shape, const void *data, char *err, size_t errn);
    /* Every rank, before dispatch `next` (>= 1), once every rank finished the
     * previous one and before any rank starts it: a place for
     * pld_interp_refill. A failure stops the run. */
    pld_status_t (*inputs)(void *ctx, pld_interp_t *it, int next, char *err, size_t errn);
} pld_interp_dispatch_hook_t;

/* The Python bridge (src/pybridge/pld_pybridge.h): how a SubWorker call of
 * the HOST orchestrator runs (docs/python.md, "SubWorkers"). The tool wires
 * pld_py_call in; the interpreter never links libpython. */
typedef struct pld_subworkers {
    void *ctx;
    pld_status_t (*call)(void *ctx, const pld_py_fn_t *fn, const pld_py_arg_t *args, int nargs, pld_buf_t *err);
} pld_subworkers_t;

typedef struct pld_interp_opts {
    const char *entry;      /* entry function; NULL = the HOST orchestrator, else the only Orchestration fn */
    struct pld_win_sys *win;/* window layer over MPI (borrowed); NULL = a local one (one rank only) */
    double timeout_s;       /* hang watchdog: no rank making progress this long stops the run; 0 = 30 s */
    double wait_timeout_s;  /* > 0: also a wait (or a compiled kernel's loop) lasting this long, however
                               the other ranks progress (the per-wait limit); 0 = none */
    pld_hw_t *hw;           /* kernel backend (borrowed); NULL = open the built-in sim backend */
    const pld_npu_profile_t *platform; /* platform profile (borrowed): AIV cores, UB bytes; NULL = a2a3 */
    int dispatches;         /* how many times the entry runs (a worker serving N calls); 0 = 1 */
    int persistent_windows; /* windows outlive a dispatch (prepare(persistent=True)); else each
                               dispatch gets fresh (zeroed) windows */
    int reset_windows;      /* persistent windows are zeroed before each reuse: -1 = default
                               (reset iff persistent), 0 = keep contents, 1 = reset */
    size_t block_stack_bytes; /* stack of each block of an SPMD grid / multi-block launch;
                               0 = PLD_NPU_STACK_DEFAULT (1 MiB). A call or expression that would
                               leave less than PLD_INTERP_STACK_MARGIN is a runtime error */
    uint64_t op_budget;     /* operations (expression evaluations and statements) one pld_interp_run
                               may execute; when they are used up the run stops with the runtime error
                               "operation budget (N) exhausted" at the operation; 0 = unlimited */
    struct pld_trace *trace;/* event recorder (borrowed; pld_trace.h): --trace, -v, --log-dir; NULL = none
                               (every traced site then costs one pointer test) */
    int poison;             /* --poison: never-written window bytes (and created tiles) read as NaN or a
                               byte pattern, and each read of them is a warning, once per source site
                               (docs/debugging.md); needs the sim backend */
    int check_races;        /* --check-races: report unordered conflicting window accesses
                               (docs/races.md); needs the sim backend and windows every member maps
                               (the shm or local transport) */
    int chunk_steps;        /* --collective-steps chunk: the mesh and InCore ring allreduces pass a
                               barrier per chunk (tile) as the semantics document lists them; 0 =
                               merged steps, the same results (docs/transport.md) */
    int schedule;           /* --schedule-seed / --schedule random: a seeded schedule (docs/races.md) */
    uint64_t schedule_seed; /* its seed: every rank draws from a PRNG seeded with seed ^ rank */
    /* --poison / --check-races: each warning also as a record (pld_debug.h), handed to
       finding(finding_ctx, record) on the rank that reports it; NULL = none */
    void (*finding)(void *ctx, const struct pld_debug_finding *f);
    void *finding_ctx;
    const pld_interp_dump_hook_t *dump;         /* --dump (borrowed); NULL = markers have no effect */
    const pld_interp_dispatch_hook_t *dispatch_io; /* per-dispatch inputs / outputs (borrowed); NULL = none */
    const pld_subworkers_t *subworkers; /* SubWorker calls (borrowed); NULL = a SubWorker call is a runtime error */
    const char *load_windows; /* a directory: the windows start with the state a run saved there, instead of
                                 zeros (persistent windows across runs); NULL = none */
    const char *save_windows; /* a directory: a run that succeeds saves its windows' state there (every
                                 rank's memory, signal cells included); NULL = none */
} pld_interp_opts_t;

/* Creates an interpreter for a checked program (p must outlive it). Resolves
 * the entry function. Errors: PLD_E_USAGE (no/ambiguous entry, message in
 * err), PLD_E_NOMEM. *out is owned (pld_interp_destroy). */
pld_status_t pld_interp_create(pld_program_t *p, const pld_interp_opts_t *opts, const pld_comm_t *comm,
                               pld_interp_t **out, char *err, size_t errn);
void pld_interp_destroy(pld_interp_t *it);

/* Entry parameters: count, name, declared type (static dims; dynamic dims as
 * symbols), direction. */
int pld_interp_nparams(const pld_interp_t *it);
/* The entry function (resolved by pld_interp_create). */
const pld_func_t *pld_interp_entry_func(const pld_interp_t *it);
const pld_param_t *pld_interp_param(const pld_interp_t *it, int i);
/* Index of the entry parameter named `name`, or -1. */
int pld_interp_param_index(const pld_interp_t *it, const char *name);
/* Text of a parameter's expected shape with bound dims, e.g. "[4, 1, 256] FP32". */
void pld_interp_param_desc(const pld_interp_t *it, int i, char *buf, size_t n);

/* Binds entry parameter i to a packed array (copied). Checks dtype and shape
 * against the declaration, binding dynamic dims (NR, ...) from the shape.
 * Errors: PLD_E_USAGE with a message naming both shapes/dtypes. */
pld_status_t pld_interp_bind(pld_interp_t *it, int i, pld_dtype_t dt, int rank, const int64_t *shape,
                             const void *data, char *err, size_t errn);
/* As pld_interp_bind, but takes ownership of `data` (a pld_mem allocation
 * holding exactly the packed array, e.g. pld_npy_t.data): no copy is made.
 * The data is freed on failure too. */
pld_status_t pld_interp_bind_adopt(pld_interp_t *it, int i, pld_dtype_t dt, int rank, const int64_t *shape,
                                   void *data, char *err, size_t errn);
/* Between two dispatches (pld_interp_dispatch_hook_t.inputs): copies a new
 * packed array into the tensor already bound to parameter i (a scalar
 * parameter takes the new value). The shape must be the bound one and the
 * element size the same. Errors: PLD_E_USAGE (message in err). */
pld_status_t pld_interp_refill(pld_interp_t *it, int i, pld_dtype_t dt, int rank, const int64_t *shape,
                               const void *data, char *err, size_t errn);
/* Binds parameter i to generated data (arange|zeros|ones|random:SEED) of its
 * declared shape; dynamic dims not yet bound take the rank count. */
pld_status_t pld_interp_bind_generated(pld_interp_t *it, int i, const char *spec, char *err, size_t errn);
/* 1 when parameter i has been bound. */
int pld_interp_is_bound(const pld_interp_t *it, int i);
/* Before the run: entry tensor parameter i, declared pl.Tensor (In), is read
 * back as a result too. On the device an In tensor is memory the program may
 * write (pl.tensor.assemble into it, a kernel storing into it) and PyPTO's
 * runtime copies every argument buffer back; its final contents are then
 * assembled at rank 0 as an InOut parameter's are (pld_interp_result). */
void pld_interp_want_output(pld_interp_t *it, int i);
/* 1 when tensor parameter i is a result: declared pl.Out or pl.InOut, or
 * wanted by pld_interp_want_output. */
int pld_interp_is_output(const pld_interp_t *it, int i);

/* Runs the entry (opts.dispatches times, with a barrier and the window reset
 * rule of semantics §1.5 between two runs). Collective (every rank calls it). Returns PLD_OK or
 * PLD_E_RUNTIME (diagnostics in the program's list), PLD_E_NOMEM, PLD_E_HW. */
pld_status_t pld_interp_run(pld_interp_t *it);

/* 1 when the run stopped because of a hang (watchdog timeout, deadlock, or a
 * failed peer), 2 when a rank did not stop and the job must be aborted. */
int pld_interp_hang(const pld_interp_t *it);

/* After a successful run: the assembled value of tensor parameter i (valid on
 * rank 0; other ranks see their local copy). Borrowed pointers. */
pld_status_t pld_interp_result(const pld_interp_t *it, int i, pld_dtype_t *dt, int *rank, const int64_t **shape,
                               const void **data);

/* What this rank is doing, for a signal handler: the tool's report when the
 * job is killed (SIGTERM from mpirun after another rank died) or when pldrun
 * itself crashes. The interpreter keeps it current with plain volatile stores
 * (one aligned word each, no locks, nothing to allocate), so a handler running
 * on this thread may read it; `what` is complete whenever `waiting` is 1.
 * Pointers are into the program (valid until it is destroyed) or static. */
typedef struct pld_interp_where {
    const char *volatile file;  /* the program file */
    const char *volatile func;  /* function of the statement being run (NULL before the first) */
    volatile int32_t line, col; /* that statement, or the wait being waited on */
    volatile int64_t block;     /* block index inside a multi-block launch, else -1 */
    const char *volatile doing; /* a step that is not a statement, e.g. "creating the windows", or NULL */
    volatile int32_t waiting;   /* 1 while blocked in a wait: what, found below */
    volatile int32_t found;     /* the value the waited-on cell held at the last look */
    char what[96];              /* e.g. "wait on sig[1, 0] (Ge 1) in step" */
} pld_interp_where_t;
/* The record of this interpreter (valid until pld_interp_destroy). */
const pld_interp_where_t *pld_interp_where(const pld_interp_t *it);

typedef struct pld_interp_stats {
    uint64_t tasks;          /* kernel launches on this rank */
    uint64_t dispatches;     /* CHIP dispatches run on this rank */
    uint64_t ops;            /* interpreted expression evaluations */
    uint64_t kernel_ops;     /* of these, evaluations inside a compiled kernel (the native backend's
                                runtime boundary: 0 once every op of the kernels is compiled) */
    uint64_t bytes_moved;    /* bytes copied by load/store/put/get on this rank */
    unsigned transports;     /* bit (1 << pld_win_transport_t) per transport of this rank's windows */
    uint64_t races;          /* --check-races: data races this rank reported (pairs of sites) */
    uint64_t puts_held;      /* --schedule-seed: puts held back and applied later */
    uint64_t preemptions;    /* --schedule-seed: yields of a block at a preemption point */
} pld_interp_stats_t;
void pld_interp_stats(const pld_interp_t *it, pld_interp_stats_t *st);
/* The ops this interpreter ran, as one line: the names of the op ids
 * evaluated at least once, space-separated, ending in '\n' (for
 * PLD_OPS_SEEN: tools/pypto_ops.py tested gathers them over the test suite).
 * Writes at most n bytes to buf (n >= 2; a line too long is cut at a name
 * boundary) and returns the length, without a terminating NUL. */
size_t pld_interp_ops_seen_line(const pld_interp_t *it, char *buf, size_t n);

#endif
