/* pld_backend.h - the plugin interface of pldrun's kernel backends,
 * ABI version PLD_BE_ABI. Self-contained (C11, <stdint.h> and <stddef.h>
 * only): it knows no syntax and no interpreter, so a backend can be built
 * out of tree against this one file.
 *
 * A plugin is a shared object exporting one symbol, PLD_BE_ENTRY:
 *
 *     const pld_be_ops_t *pld_backend_entry(uint32_t requested_abi);
 *
 * pldrun loads it with `--backend PATH.so` (dlopen RTLD_NOW | RTLD_LOCAL),
 * calls the entry with PLD_BE_ABI and refuses the plugin when the returned
 * table's `abi` differs, its `struct_size` is smaller than this header's
 * sizeof(pld_be_ops_t), or a required entry point is missing.
 *
 * One instance per rank (open .. close). MPI stays in pldrun: a plugin that
 * needs a collective step (exchanging window handles, a barrier) calls the
 * callbacks of pld_be_init_t.coll, which every rank must reach in the same
 * order. Every call returns PLD_BE_OK (0) or a negative pld_be_status_t;
 * after a failure last_error() says what happened, in words, and pldrun shows
 * it with the kernel and source line of the launch.
 *
 * What a kernel receives is the NPU kernel ABI below (docs/hw_backend.md §2,
 * re-declared in our own words): pldrun builds it, the backend only moves it.
 * docs/backends.md describes the life cycle and a minimal plugin. */
#ifndef PLD_BACKEND_H
#define PLD_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#define PLD_BE_ABI 1u
#define PLD_BE_ENTRY "pld_backend_entry"

/* ============================================================ the kernel ABI
 * What a compiled kernel `void kernel_entry(int64_t *args)` receives, in the
 * layouts PyPTO's runtime uses on Ascend and in its CPU simulator:
 *
 *   args[0 .. T-1]   one per tensor parameter, in order: the address of a
 *                    128-byte ChipTensor descriptor (not of the data)
 *   args[T .. T+S-1] the scalars, in order, as raw 64-bit words: integers
 *                    sign-extended, FP32 bit-cast into the low 32 bits, FP64
 *                    whole, FP16/BF16 as their 16 bits; a CommCtx scalar is
 *                    the address of the domain's 1056-byte CommContext
 *   args[48]         the address of the LocalContext (block index and count)
 *   args[49]         the address of the GlobalContext (AIV sub-block id)
 *
 * At most 32 tensors and 16 scalars: more is an error, never a silent cut.
 *
 * CommContext (1056 bytes, 8-byte aligned): workSpace@0, workSpaceSize@8,
 * rankId@16 (u32), rankNum@20 (u32), winSize@24 (u64), windowsIn[64]@32,
 * windowsOut[64]@544. windowsIn[r] is rank r's window as mapped in this
 * process, or 0 when it is not mapped here: such a peer is reached through
 * the runtime, never by address. */
#define PLD_ABI_CTX_BYTES 1056
#define PLD_ABI_CTX_RANK_ID 16
#define PLD_ABI_CTX_RANK_NUM 20
#define PLD_ABI_CTX_WIN_SIZE 24
#define PLD_ABI_CTX_WINDOWS_IN 32
#define PLD_ABI_CTX_WINDOWS_OUT 544
#define PLD_ABI_ARGS 50
#define PLD_ABI_MAX_TENSORS 32
#define PLD_ABI_MAX_SCALARS 16
#define PLD_ABI_LOCAL_SLOT 48
#define PLD_ABI_GLOBAL_SLOT 49
#define PLD_ABI_MAX_DIMS 5

/* ChipTensor: 128 bytes, 64-byte aligned. The data of element (0, ..., 0)
 * is at addr + start_offset * element size. */
typedef struct pld_abi_tensor {
    uint64_t addr;                    /* @0   buffer address */
    uint64_t size;                    /* @8   buffer bytes */
    uint64_t owner_task_id;           /* @16  UINT64_MAX: external (not produced by a task) */
    uint64_t start_offset;            /* @24  elements */
    int32_t version;                  /* @32  0 */
    uint32_t ndims;                   /* @36  1..5 */
    uint8_t dtype;                    /* @40  pld_abi_dtype_code */
    uint8_t manual_dep;               /* @41  0 */
    uint8_t is_contiguous;            /* @42  strides are the row-major strides of the shape */
    uint8_t address_space;            /* @43  0 = host, 1 = device memory */
    uint32_t shapes[PLD_ABI_MAX_DIMS];   /* @44 */
    uint64_t extent_elem;             /* @64  1 + sum (shapes[i] - 1) * strides[i] */
    uint32_t strides[PLD_ABI_MAX_DIMS];  /* @72 elements, each > 0 */
    uint8_t reserved[36];             /* @92  zero */
} pld_abi_tensor_t;

/* LocalContext: 48 bytes, one per dispatch (block). A backend without
 * deferred completion leaves the three completion pointers 0 and task_token
 * UINT64_MAX ("invalid"). */
typedef struct pld_abi_local {
    int32_t block_idx;                /* @0 */
    int32_t block_num;                /* @4 */
    uint64_t completion_count;        /* @8  address, 0 */
    uint64_t completion_error_code;   /* @16 address, 0 */
    uint64_t completion_entries;      /* @24 address, 0 */
    uint32_t completion_capacity;     /* @32 0 */
    uint32_t pad;                     /* @36 */
    uint64_t task_token;              /* @40 UINT64_MAX */
} pld_abi_local_t;

/* GlobalContext: 24 bytes, one per core. */
typedef struct pld_abi_global {
    int32_t sub_block_id;             /* @0  AIV lane in its cluster (0 on the AIC) */
    uint32_t pad;                     /* @4 */
    uint64_t dma_workspace[2];        /* @8  per DMA engine (0 = SDMA): 0 = not provisioned */
} pld_abi_global_t;

/* The argument block of one block of a launch: args[] and what it points to
 * (all in host memory; a device backend uploads them and rewrites the
 * addresses). */
typedef struct pld_abi_frame {
    int64_t args[PLD_ABI_ARGS];
    pld_abi_tensor_t tensors[PLD_ABI_MAX_TENSORS];
    pld_abi_local_t local;
    pld_abi_global_t global;
    int ntensors, nscalars;
} pld_abi_frame_t;


/* ============================================================ the plugin API */

typedef enum pld_be_status {
    PLD_BE_OK = 0,
    PLD_BE_E_UNSUPPORTED = -1,        /* the backend cannot do this (a kernel, an option, a feature) */
    PLD_BE_E_INVAL = -2,              /* a bad argument */
    PLD_BE_E_NOMEM = -3,
    PLD_BE_E_LOAD = -4,               /* a kernel or library could not be loaded */
    PLD_BE_E_LAUNCH = -5,
    PLD_BE_E_DEVICE = -6,             /* the device reported an error */
    PLD_BE_E_TIMEOUT = -7,
    PLD_BE_E_COMM = -8                /* a collective callback failed */
} pld_be_status_t;

/* Capability bits (pld_be_ops_t.caps). */
#define PLD_BE_CAP_HOST_MEMORY (1u << 0) /* device addresses are host addresses: pldrun passes tensors and
                                            windows in place (no mem_alloc/upload/download) */
#define PLD_BE_CAP_WINDOWS (1u << 1)     /* window_alloc/window_free: the backend places windows itself */
#define PLD_BE_CAP_GANG (1u << 2)        /* sync-start launches: every block resident together */
#define PLD_BE_CAP_MIX (1u << 3)         /* AIC+AIV (MIX) kernels */
#define PLD_BE_CAP_C_KERNELS (1u << 4)   /* the backend compiles pldrun's C code of each kernel
                                            (pld_be_kernel_desc_t.c_source) and runs it with the
                                            runtime of pld_be_host_t (the `native` backend) */

typedef uint64_t pld_be_devptr_t;      /* a device address; 0 = none */
typedef struct pld_be pld_be_t;        /* a plugin's per-rank instance (opaque to pldrun) */
typedef struct pld_be_kernel pld_be_kernel_t;
typedef struct pld_be_window pld_be_window_t;

/* Collective steps over every rank of the run, backed by MPI in pldrun.
 * Each returns 0, or nonzero when the step failed (then fail with
 * PLD_BE_E_COMM). */
typedef struct pld_be_coll {
    void *ctx;
    int (*allgather)(void *ctx, const void *send, void *recv, size_t bytes_per_rank);
    int (*bcast)(void *ctx, void *buf, size_t bytes, int root);
    int (*barrier)(void *ctx);
} pld_be_coll_t;

/* Services pldrun offers every backend (pld_be_init_t.host). launch_ctx is
 * the pld_be_launch_t.host_ctx of the launch being run. */
typedef struct pld_be_host {
    uint32_t struct_size;             /* sizeof(pld_be_host_t) of pldrun's build */
    /* Runs fn(arg, b, n) for the blocks b = 0..n-1 of the launch as
     * cooperating blocks of this rank: a block that waits lets the others
     * run (coroutines on the calling thread; MPI stays on one thread).
     * Returns 0, or the first nonzero fn result. */
    int (*run_blocks)(void *launch_ctx, uint32_t n, int (*fn)(void *arg, int b, int n), void *arg);
    /* C kernels (PLD_BE_CAP_C_KERNELS): the runtime table they take (pld_crt.h's
     * pc_rt) and the per-block state: open before the kernel runs block b of
     * n, close after it returned rc (0 = ok); close returns 0 or nonzero when
     * the block failed (pldrun recorded the error). */
    const void *c_runtime;
    void *(*c_block_open)(void *launch_ctx, int b, int n);
    int (*c_block_close)(void *bk, int rc);
    /* A builtin collective kernel (desc.builtin): runs it with pldrun's compiled
     * collective code (the same signal protocols as `sim`); 0 = ok. */
    int (*run_builtin)(void *launch_ctx);
    /* Nonzero once the run is being stopped (another rank failed, a deadlock
     * or a timeout was declared): a backend waiting for a launch should give
     * up instead of waiting out its timeout. Cheap; call it every ~100 ms. */
    int (*should_stop)(void *launch_ctx);
} pld_be_host_t;

typedef struct pld_be_init {
    uint32_t abi;                     /* PLD_BE_ABI */
    uint32_t struct_size;             /* sizeof(pld_be_init_t) of pldrun's build */
    int rank, nranks;                 /* this rank among all ranks of the run */
    int local_rank, local_size;       /* among the ranks of this host */
    int device_id;                    /* -1: the backend chooses (e.g. local_rank) */
    const char *options;              /* --backend-options text, "" when none */
    pld_be_coll_t coll;
    const pld_be_host_t *host;        /* pldrun's services (NULL: none) */
} pld_be_init_t;

/* A kernel parameter, in the kernel's parameter order. */
enum { PLD_BE_P_TENSOR = 1, PLD_BE_P_SCALAR = 2, PLD_BE_P_COMM_CTX = 3 };
enum { PLD_BE_DIR_IN = 0, PLD_BE_DIR_OUT = 1, PLD_BE_DIR_INOUT = 2, PLD_BE_DIR_UNKNOWN = 3 };
typedef struct pld_be_param {
    const char *name;
    uint8_t kind;                     /* PLD_BE_P_* */
    uint8_t dtype;                    /* an ABI dtype code (pld_abi_dtype_code); a CommCtx: 8 (UINT64) */
    uint8_t dir;                      /* PLD_BE_DIR_* */
    uint8_t window;                   /* a tensor bound to a window (DistributedTensor) */
    uint32_t rank;                    /* tensor rank */
} pld_be_param_t;

enum { PLD_BE_CORE_AIV = 0, PLD_BE_CORE_AIC = 1, PLD_BE_CORE_MIX = 2 };
typedef struct pld_be_kernel_desc {
    uint32_t struct_size;             /* sizeof(pld_be_kernel_desc_t) of pldrun's build */
    const char *name;                 /* the function's name, or a scope's name_hint / "scope@LINE" */
    const char *program;              /* the program file */
    int line;                         /* where the kernel is defined */
    uint32_t core_type;               /* PLD_BE_CORE_* */
    uint32_t nparams;
    const pld_be_param_t *params;
    const char *builtin;              /* a builtin collective kernel: its template package, else NULL */
    const char *builtin_vars;         /* its template substitutions ("dtype_cpp=float"), else NULL */
    /* PLD_BE_CAP_C_KERNELS: the kernel compiled to C by pldrun (a translation
     * unit defining `int pld_ckernel(const pc_rt *, void *bk, int64_t *args)`),
     * or NULL with c_unsupported saying why ("file:line:col: OP is not ...") */
    const char *c_source;
    const char *c_unsupported;
    /* PLD_BE_F_* the kernel's body uses, and where the first of them is
     * ("file:line:col: pld.system.defer_wait"; NULL when features is 0), so a
     * backend that cannot run one refuses the kernel naming the construct */
    uint32_t features;
    const char *feature_at;
} pld_be_kernel_desc_t;

/* Constructs a backend may be unable to run (pld_be_kernel_desc_t.features). */
#define PLD_BE_F_DEFER_WAIT (1u << 0) /* pld.system.defer_wait: deferred completion (a device-side scheduler) */
#define PLD_BE_F_SDMA_ASYNC (1u << 1) /* SDMA-async ops (pl.prefetch.*): an SDMA workspace */

/* How pldrun calls a loaded kernel (kernel_load's answer). */
enum {
    PLD_BE_CALL_ARGS = 1,             /* pldrun calls launch(); the backend runs the blocks */
    PLD_BE_CALL_TYPED = 2             /* pldrun calls `fn` itself, once per block in block order, with one C
                                         parameter per kernel parameter (tensor: pointer to element 0; scalar:
                                         its C type; CommCtx: pointer) then int32 block_idx, int32 block_num */
};
typedef struct pld_be_kernel_info {
    uint32_t conv;                    /* PLD_BE_CALL_* */
    void (*fn)(void);                 /* PLD_BE_CALL_TYPED: the function */
} pld_be_kernel_info_t;

#define PLD_BE_LAUNCH_GANG 1u         /* sync_start: all blocks must be resident together */
typedef struct pld_be_launch {
    uint32_t struct_size;             /* sizeof(pld_be_launch_t) of pldrun's build */
    uint32_t block_num;               /* >= 1 */
    uint32_t flags;                   /* PLD_BE_LAUNCH_* */
    uint32_t timeout_ms;              /* 0: none */
    /* block_num frames in host memory, valid during the call: frame b is the
     * args[] of block b and what it points to. Tensor addresses in the
     * ChipTensors are device addresses; a device backend copies each frame
     * to the device and rewrites the slot addresses. */
    const pld_abi_frame_t *frames;
    void *host_ctx;                   /* pldrun's state of this launch, for pld_be_host_t calls */
} pld_be_launch_t;

typedef struct pld_be_ops {
    uint32_t abi;                     /* PLD_BE_ABI */
    uint32_t struct_size;             /* sizeof(pld_be_ops_t) */
    const char *name;
    const char *description;
    uint64_t caps;                    /* PLD_BE_CAP_* */
    /* required */
    int (*open)(const pld_be_init_t *init, pld_be_t **out);
    void (*close)(pld_be_t *be);
    const char *(*last_error)(pld_be_t *be); /* be may be NULL after a failed open */
    int (*kernel_load)(pld_be_t *be, const pld_be_kernel_desc_t *desc, pld_be_kernel_t **out,
                       pld_be_kernel_info_t *info);
    int (*launch)(pld_be_t *be, pld_be_kernel_t *k, const pld_be_launch_t *l);
    int (*sync)(pld_be_t *be, uint32_t timeout_ms);
    /* optional (NULL when absent) */
    int (*program_load)(pld_be_t *be, const char *path, uint32_t nkernels, const pld_be_kernel_desc_t *kernels);
    void (*kernel_unload)(pld_be_t *be, pld_be_kernel_t *k);
    int (*mem_alloc)(pld_be_t *be, size_t bytes, size_t align, pld_be_devptr_t *out);
    int (*mem_free)(pld_be_t *be, pld_be_devptr_t p);
    int (*upload)(pld_be_t *be, pld_be_devptr_t dst, const void *src, size_t bytes);
    int (*download)(pld_be_t *be, void *dst, pld_be_devptr_t src, size_t bytes);
    /* PLD_BE_CAP_WINDOWS. Collective over the `n` ranks `ranks` (world
     * ranks, ascending, this rank among them at index `me`): a window of
     * `bytes` on each, zero filled; bases[i] is member i's window as
     * addressable by this rank's kernels (device addresses). `group` steps
     * over exactly these members (allgather in member order, bcast from a
     * member index, barrier), valid during the call. *mapped receives the
     * bytes mapped per member (>= bytes: a device rounds to its granularity).
     * pldrun builds each domain's CommContext from bases[] (winSize =
     * *mapped) and uploads it (mem_alloc + upload). */
    int (*window_alloc)(pld_be_t *be, const pld_be_coll_t *group, const int *ranks, int n, int me, size_t bytes,
                        pld_be_window_t **out, pld_be_devptr_t *bases, size_t *mapped);
    /* Collective over the window's members (the same group callbacks): every
     * member stops using the window, then its mappings are released. A window
     * pldrun could not finish setting up on this rank alone (its CommContext
     * upload failed) is never passed here: close must release it. */
    int (*window_free)(pld_be_t *be, pld_be_window_t *w, const pld_be_coll_t *group);
} pld_be_ops_t;

typedef const pld_be_ops_t *(*pld_be_entry_fn)(uint32_t requested_abi);

#endif
