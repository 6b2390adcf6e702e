/* pld_hw.h - the kernel backend boundary inside pldrun. Every kernel call,
 * every pl.at(CORE_GROUP) scope, every pl.spmd grid and every builtin
 * collective kernel of a running program is a launch through this interface;
 * nothing executes a kernel around it.
 *
 * A backend has five operations: open (per rank), load (a checked program),
 * launch (one kernel with an argument list and a block count), sync (wait for
 * outstanding launches) and close. Arguments are described at the kernel-ABI
 * level (tensor data pointers with shape/strides, scalar bits) so compiled
 * backends can run them; the built-in `sim` backend (the interpreter itself,
 * registered by src/interp) also receives the interpreter's own call state in
 * `host_state`. A plugin (pld_backend.h) is opened with pld_hw_open_plugin
 * and adapted to this interface by pld_hw_plugin.c, the only file that links
 * libdl and libffi. Library code: never prints; errors are text in `err`. */
#ifndef PLD_HW_H
#define PLD_HW_H

#include "pld_backend.h"
#include "pld_status.h"
#include "pld_dtype.h"

#include <stddef.h>
#include <stdint.h>

#define PLD_HW_ABI 2u
#define PLD_HW_MAX_RANK 8

typedef struct pld_hw_tensor {
    void *data;                       /* element (0, ..., 0) */
    pld_dtype_t dt;
    int rank;
    int64_t shape[PLD_HW_MAX_RANK];
    int64_t strides[PLD_HW_MAX_RANK]; /* elements */
    /* A DistributedTensor (window-bound) argument: the CommContext of its
     * comm domain on this rank, PLD_WIN_CTX_BYTES (1056) bytes in PyPTO's
     * layout (rankId@16, rankNum@20, winSize@24, windowsIn[64]@32,
     * windowsOut[64]@544; pld_win.h). NULL for other tensors. A CommCtx
     * scalar argument carries the same address in `bits` (dt UINT64). */
    const void *comm_ctx;
} pld_hw_tensor_t;

typedef struct pld_hw_arg {
    int is_tensor;
    pld_hw_tensor_t tensor;           /* is_tensor */
    uint64_t bits;                    /* scalar: raw bits (ints sign-extended, floats as double bits) */
    pld_dtype_t dt;                   /* scalar dtype */
} pld_hw_arg_t;

typedef struct pld_hw_launch {
    const char *kernel;               /* kernel name (function or scope name) */
    int func_index;                   /* index in the program's functions, -1 for a scope */
    int nargs;
    const pld_hw_arg_t *args;
    /* The kernel as a plugin sees it: name, source line, one parameter per
     * argument (names, kinds, directions), builtin template. Its params are
     * the launch's arguments in order (nparams == nargs). */
    const pld_be_kernel_desc_t *desc;
    int block_num;                    /* SPMD blocks (1 = single block) */
    int sync_start;                   /* all blocks must be admitted together */
    void *host_state;                 /* opaque: the interpreter's call state (sim backend) */
    char *err;                        /* out: message on failure */
    size_t errn;
    uint32_t timeout_ms;              /* how long a backend may wait for the launch to finish (0: no bound) */
} pld_hw_launch_t;

/* The kernels of a checked program as a backend sees them (pld_hw_load):
 * every kernel-level function with its parameters. Scopes and builtin
 * kernels are described at their first launch. */
typedef struct pld_hw_program {
    const char *path;
    int nkernels;
    const pld_be_kernel_desc_t *kernels;
} pld_hw_program_t;

/* A comm domain's window placed by the backend (PLD_BE_CAP_WINDOWS): the
 * members, this rank's index among them, the window bytes per member, the
 * collective steps over the members, and the domain's host CommContext and
 * host window base, by which later launches name the window (a tensor's
 * comm_ctx, a CommCtx scalar's address). */
typedef struct pld_hw_window_req {
    const pld_be_coll_t *group;
    const int *ranks;
    int n, me;
    size_t bytes;
    const void *host_ctx;
    const void *host_base;
} pld_hw_window_req_t;

typedef struct pld_hw_ops {
    uint32_t abi_version;             /* PLD_HW_ABI */
    size_t struct_size;               /* sizeof(pld_hw_ops_t) of the backend's build */
    const char *name;
    const char *description;
    /* Opens a per-rank instance. Returns PLD_OK or PLD_E_HW with err set. */
    pld_status_t (*open)(const char *options, int rank, int nranks, void **state, char *err, size_t errn);
    /* Prepares the kernels of a checked program (the sim backend has nothing to do). */
    pld_status_t (*load)(void *state, const struct pld_hw_program *program, char *err, size_t errn);
    /* Runs one kernel to completion (or queues it; then sync waits). */
    pld_status_t (*launch)(void *state, pld_hw_launch_t *l);
    pld_status_t (*sync)(void *state, char *err, size_t errn);
    void (*close)(void *state);
    /* PLD_BE_CAP_* of the instance (NULL: none; appended in PLD_HW_ABI 2) */
    uint64_t (*caps)(void *state);
    /* PLD_BE_CAP_WINDOWS (NULL: none): pld_hw_window_alloc/free/clear below */
    pld_status_t (*window_alloc)(void *state, const pld_hw_window_req_t *req, char *err, size_t errn);
    pld_status_t (*window_free)(void *state, const void *host_ctx, const pld_be_coll_t *group, char *err,
                                size_t errn);
    pld_status_t (*window_clear)(void *state, const void *host_ctx, char *err, size_t errn);
    pld_status_t (*window_fetch)(void *state, const void *host_ctx, char *err, size_t errn);
} pld_hw_ops_t;

typedef struct pld_hw pld_hw_t;

#define PLD_HW_MAX_BACKENDS 8

/* The backends a tool (or a test) can open, by name. Caller storage, no
 * process-wide state: two registries are independent. Borrows the ops. */
typedef struct pld_hw_registry {
    const pld_hw_ops_t *ops[PLD_HW_MAX_BACKENDS];
    int n;
} pld_hw_registry_t;

/* Empties r. */
void pld_hw_registry_init(pld_hw_registry_t *r);
/* Registers a backend (borrowed; name must be unique in r). Returns 1 when
 * registered (or already registered with the same ops), 0 when r is full, the
 * ops are invalid (ABI version, struct size, missing entry points) or another
 * backend of r has that name. */
int pld_hw_register(pld_hw_registry_t *r, const pld_hw_ops_t *ops);
/* Number and ops of the registered backends, for --help and errors. */
int pld_hw_count(const pld_hw_registry_t *r);
const pld_hw_ops_t *pld_hw_get(const pld_hw_registry_t *r, int i);

/* Opens backend `name` of r for this rank. Unknown or unavailable backends
 * return PLD_E_HW with a message listing the available ones. *out is owned
 * (close it with pld_hw_close); it does not borrow r. */
pld_status_t pld_hw_open(const pld_hw_registry_t *r, const char *name, const char *options, int rank, int nranks,
                         pld_hw_t **out, char *err, size_t errn);
pld_status_t pld_hw_load(pld_hw_t *hw, const pld_hw_program_t *program, char *err, size_t errn);
pld_status_t pld_hw_launch(pld_hw_t *hw, pld_hw_launch_t *l);
pld_status_t pld_hw_sync(pld_hw_t *hw, char *err, size_t errn);
void pld_hw_close(pld_hw_t *hw);
/* Wraps an opened backend instance (ops, state) named `name` (borrowed) as a
 * pld_hw_t; on failure the caller still owns state. */
pld_status_t pld_hw_wrap(const pld_hw_ops_t *ops, void *state, const char *name, pld_hw_t **out, char *err,
                         size_t errn);
const char *pld_hw_name(const pld_hw_t *hw);

/* Windows placed by the backend (PLD_BE_CAP_WINDOWS; collective over the
 * members, called in the same order on every member). alloc: the backend
 * maps a window of req->bytes on every member, and the core uploads the
 * domain's CommContext with the members' device addresses; from then on a
 * launch argument in that window (or the domain's CommContext) reaches the
 * kernel as device addresses, and the window's data lives there. The host
 * copy of this rank's window is refreshed from the device after every launch
 * that takes the window and by fetch (the core calls it once every rank
 * finished, before the outputs are assembled); host writes into the window do
 * not reach the device. free: before the domain goes; clear: zero this
 * rank's window (not collective). PLD_E_HW with a message; PLD_E_USAGE when
 * the backend has no windows. */
pld_status_t pld_hw_window_alloc(pld_hw_t *hw, const pld_hw_window_req_t *req, char *err, size_t errn);
pld_status_t pld_hw_window_free(pld_hw_t *hw, const void *host_ctx, const pld_be_coll_t *group, char *err,
                                size_t errn);
pld_status_t pld_hw_window_clear(pld_hw_t *hw, const void *host_ctx, char *err, size_t errn);
pld_status_t pld_hw_window_fetch(pld_hw_t *hw, const void *host_ctx, char *err, size_t errn);

/* ============================================================== plugins
 * (pld_hw_plugin.c) */
/* 1 when a --backend value names a plugin file (contains '/' or ends in .so)
 * rather than a built-in backend. */
int pld_hw_is_plugin_path(const char *name);
/* Loads the plugin at `path` (dlopen RTLD_NOW | RTLD_LOCAL, entry symbol
 * PLD_BE_ENTRY, ABI version and table size checked) and opens it for this
 * rank with `init`. Every failure returns PLD_E_HW with the path and the
 * dlerror() / plugin text in err, and unloads the plugin. */
pld_status_t pld_hw_open_plugin(const char *path, const pld_be_init_t *init, pld_hw_t **out, char *err, size_t errn);
/* Opens a backend given by its plugin table (a backend built into pldrun,
 * such as `native`): everything pld_hw_open_plugin does after dlopen. */
pld_status_t pld_hw_open_table(const pld_be_ops_t *ops, const pld_be_init_t *init, pld_hw_t **out, char *err,
                               size_t errn);
/* PLD_BE_CAP_* of an opened backend (0 for the interpreter's own). */
uint64_t pld_hw_caps(const pld_hw_t *hw);
/* The `native` backend (pld_native.c): kernels compiled to C. */
const pld_be_ops_t *pld_native_backend(void);
/* The file of the `ascend` plugin (CANN, pld_ascend.c) next to the running
 * executable (`pld_backend_ascend.so`), or $PLD_ASCEND_PLUGIN when set, into
 * buf; 0 on success, -1 when the executable's directory is unknown. */
int pld_hw_ascend_path(char *buf, size_t n);
/* Launch statistics (for the run summary). */
uint64_t pld_hw_launches(const pld_hw_t *hw);

/* ======================================================= the NPU kernel ABI
 * (pld_hw_abi.c): builds the layouts of pld_backend.h from a launch. */
/* The ABI's dtype code of dt (FLOAT32 0, FLOAT16 1, INT32 2, INT16 3, INT8 4,
 * UINT8 5, BFLOAT16 6, INT64 7, UINT64 8, UINT16 9, UINT32 10, BOOL 11,
 * FP8E4M3FN 12, FP8E8M0 13, FP4E2M1 14); -1 when the ABI has none. */
int pld_abi_dtype_code(pld_dtype_t dt);
/* Fills the ChipTensor of t (element 0 at t->data, shape and element strides
 * of t). Errors (PLD_E_HW, text in err): rank above 5, a dim or stride not in
 * 1..UINT32_MAX (a zero or negative stride: broadcast and reversed views have
 * no encoding), a dtype without a code. */
pld_status_t pld_abi_tensor(pld_abi_tensor_t *out, const pld_hw_tensor_t *t, char *err, size_t errn);
/* Builds the frame of block `block_idx` (of l->block_num) on AIV lane
 * `sub_block_id` for launch l. Errors (PLD_E_HW): more than 32 tensors or 16
 * scalars, or a tensor pld_abi_tensor refuses (the message names the
 * argument). */
pld_status_t pld_abi_build(pld_abi_frame_t *fr, const pld_hw_launch_t *l, int block_idx, int sub_block_id, char *err,
                           size_t errn);

#endif
