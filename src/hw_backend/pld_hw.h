/* pld_hw.h - the kernel backend interface. Every InCore/AIV kernel call (and
 * every pl.at(CORE_GROUP) scope) of a running program is a launch through
 * this interface; nothing executes a kernel around it.
 *
 * A backend has five operations: open (per rank), load (a checked program),
 * launch (one kernel with an argument list and a block count), sync (wait for
 * outstanding launches) and close. Arguments are described at the kernel-ABI
 * level (tensor data pointers with shape/strides, scalar bits) so compiled
 * backends can run them; the built-in `sim` backend (the interpreter itself,
 * registered by src/interp) also receives the interpreter's own call state in
 * `host_state`. Later backends (native, ascend) register the same way or are
 * loaded as plugins. Library code: never prints; errors are text in `err`. */
#ifndef PLD_HW_H
#define PLD_HW_H

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
    int block_num;                    /* SPMD blocks (1 = single block) */
    int sync_start;                   /* all blocks must be admitted together */
    void *host_state;                 /* opaque: the interpreter's call state (sim backend) */
    char *err;                        /* out: message on failure */
    size_t errn;
} pld_hw_launch_t;

typedef struct pld_hw_ops {
    uint32_t abi_version;             /* PLD_HW_ABI */
    size_t struct_size;               /* sizeof(pld_hw_ops_t) of the backend's build */
    const char *name;
    const char *description;
    /* Opens a per-rank instance. Returns PLD_OK or PLD_E_HW with err set. */
    pld_status_t (*open)(const char *options, int rank, int nranks, void **state, char *err, size_t errn);
    /* Prepares kernels of a checked program (the sim backend has nothing to do). */
    pld_status_t (*load)(void *state, const void *program, char *err, size_t errn);
    /* Runs one kernel to completion (or queues it; then sync waits). */
    pld_status_t (*launch)(void *state, pld_hw_launch_t *l);
    pld_status_t (*sync)(void *state, char *err, size_t errn);
    void (*close)(void *state);
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
pld_status_t pld_hw_load(pld_hw_t *hw, const void *program, char *err, size_t errn);
pld_status_t pld_hw_launch(pld_hw_t *hw, pld_hw_launch_t *l);
pld_status_t pld_hw_sync(pld_hw_t *hw, char *err, size_t errn);
void pld_hw_close(pld_hw_t *hw);
const char *pld_hw_name(const pld_hw_t *hw);
/* Launch statistics (for the run summary). */
uint64_t pld_hw_launches(const pld_hw_t *hw);

/* ======================================================= the NPU kernel ABI
 * (pld_hw_abi.c). What a compiled kernel `void kernel_entry(int64_t *args)`
 * receives, in the layouts PyPTO's runtime uses on Ascend and in its CPU
 * simulator (facts from docs/hw_backend.md §2 and simpler's
 * task_interface/tensor.h, data_type.h and intrinsic.h, re-declared here):
 *
 *   args[0 .. T-1]  one per tensor parameter, in order: the address of a
 *                   128-byte ChipTensor descriptor (not of the data)
 *   args[T .. T+S-1] the scalars, in order, as raw 64-bit words: integers
 *                   sign-extended, FP32 bit-cast into the low 32 bits, FP64
 *                   whole, FP16/BF16 as their 16 bits; a CommCtx scalar is the
 *                   address of the domain's 1056-byte CommContext
 *   args[48]        the address of the LocalContext (block index and count)
 *   args[49]        the address of the GlobalContext (AIV sub-block id)
 *
 * At most 32 tensors and 16 scalars: more is an error, never a silent cut. */
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
