/* pld_crt.h - the contract between kernels compiled by pldrun's C code
 * generator (pld_cgen.c) and the runtime that runs them (src/interp/pld_crt.c,
 * reached through the `native` backend, pld_native.c).
 *
 * This file is copied verbatim at the top of every generated kernel source
 * (so a cached kernel is keyed by it too): it may include only the C
 * standard library, and everything in it is static or a type. Generated code
 * frees no memory: tile storage (pc_rt.alloc) and the buffers of the tensor
 * pools (pc_rt.tensor_buf, reused by every execution of their op: bounded
 * memory in loops) are allocated once and live until the block ends. The
 * kernel library is called directly (pc_rt.k). Every runtime call that can fail returns nonzero after the
 * runtime recorded a located error (the site's file:line:col); the kernel
 * then returns 1 at once. docs/native.md describes the design. */
#ifndef PLD_CRT_H
#define PLD_CRT_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define PC_VERSION 2
#define PC_MAX_RANK 5

/* A tensor or a view of one. dt is pldrun's pld_dtype_t. */
typedef struct pc_tensor {
    char *data;                        /* element (0, ..., 0) */
    int32_t dt, rank;
    int64_t shape[PC_MAX_RANK];
    int64_t stride[PC_MAX_RANK];       /* elements */
    int64_t valid[PC_MAX_RANK];        /* valid extent per dim (== shape when full) */
} pc_tensor;

/* A tile: packed row-major over its physical shape, with a valid region. */
typedef struct pc_tile {
    void *data;
    int32_t dt, rank;
    int64_t shape[PC_MAX_RANK];        /* physical */
    int64_t valid[PC_MAX_RANK];
} pc_tile;

/* A strided view of elements for the kernel library (pc_kern): the layout of
 * pld_kern.h's pld_view_t (checked in pld_cgen_kern.c). strides in elements,
 * 0 = broadcast; rank entries used, rank 0 = one element. */
#define PC_VIEW_MAX_RANK 8
typedef struct pc_view {
    void *data;
    int32_t dt, rank;
    int64_t shape[PC_VIEW_MAX_RANK];
    int64_t strides[PC_VIEW_MAX_RANK];
} pc_view;

/* The tile kernel library `sim` runs (src/sim_npu/pld_kern.h), called
 * directly by compiled kernels with views they build: one implementation
 * of every op's numerics. Each entry is the pld_k_* function of the same
 * name (op codes: pld_kern.h's enums); nonzero = failed with a message in
 * err (report it with pc_rt.kfail, or the PC_K macro below). */
typedef struct pc_kern {
    int (*binary)(int op, const pc_view *out, const pc_view *a, const pc_view *b, char *err, size_t errn);
    int (*binary_s)(int op, const pc_view *out, const pc_view *a, double sf, int64_t si, char *err, size_t errn);
    int (*unary)(int op, const pc_view *out, const pc_view *a, char *err, size_t errn);
    int (*reduce)(int op, int flags, const pc_view *out, const pc_view *a, char *err, size_t errn);
    int (*ext)(int op, const pc_view *out, const pc_view *a, const pc_view *b, const pc_view *c, char *err, size_t errn);
    int (*ext_s)(int op, const pc_view *out, const pc_view *a, double sf, int64_t si, const pc_view *c, char *err,
                 size_t errn);
    int (*cmp_mask)(int op, const pc_view *mask, const pc_view *a, const pc_view *b, char *err, size_t errn);
    int (*select)(const pc_view *out, const pc_view *mask, const pc_view *a, const pc_view *b, char *err, size_t errn);
    int (*part)(int op, const pc_view *out, const pc_view *a, const int64_t *va, const pc_view *b, const int64_t *vb,
                char *err, size_t errn);
    int (*ci)(const pc_view *out, int64_t start, int descending, char *err, size_t errn);
    int (*tri)(const pc_view *out, int64_t diagonal, int upper, int64_t vr, int64_t vc, char *err, size_t errn);
    int (*random)(const pc_view *out, const uint32_t key[2], const uint32_t ctr[4], int rounds, int64_t vr, int64_t vc,
                  char *err, size_t errn);
    int (*cast)(const pc_view *out, const pc_view *a, int mode, char *err, size_t errn);
    int (*matmul)(const pc_view *out, const pc_view *a, const pc_view *b, int accumulate, char *err, size_t errn);
    int (*matmul_mx)(const pc_view *out, const pc_view *a, const pc_view *sa, const pc_view *b, const pc_view *sb,
                     int accumulate, char *err, size_t errn);
    int (*copy)(const pc_view *out, const pc_view *a, char *err, size_t errn);
    int (*accumulate)(const pc_view *out, const pc_view *a, char *err, size_t errn);
    int (*fill_f)(const pc_view *out, double v, char *err, size_t errn);
    int (*fill_i)(const pc_view *out, int64_t v, char *err, size_t errn);
    /* layout, valid shapes, gathers / scatters, sorts (pld_kern_layout.c) */
    int (*reshape_valid)(int ri, const int64_t *in, const int64_t *v, int ro, const int64_t *out, int64_t *ov, char *err,
                         size_t errn);
    int (*assemble_valid)(int r, const int64_t *dshape, int64_t *dvalid, const int64_t *svalid, const int64_t *off,
                          char *err, size_t errn);
    int (*fillpad)(const pc_view *dst, const pc_view *src, const int64_t *valid, int mode, char *err, size_t errn);
    int (*gather)(const pc_view *out, const pc_view *src, const pc_view *idx, const int64_t *box, int dim, char *err,
                  size_t errn);
    int (*scatter)(const pc_view *out, const pc_view *src, const pc_view *idx, const int64_t *box, int row_form,
                   char *err, size_t errn);
    int (*sort32)(const pc_view *out, const pc_view *src, const pc_view *idx, char *err, size_t errn);
    int (*mrgsort)(const pc_view *out, const pc_view *const *src, int nsrc, int64_t block, char *err, size_t errn);
    /* the GM gather / scatter family (pld_kern_gather.c) */
    int (*mgather)(const pc_view *out, const pc_view *mem, const pc_view *idx, const int64_t *box, int row_mode, int oob,
                   const pc_view *scratch, char *err, size_t errn);
    int (*mscatter)(const pc_view *out, const pc_view *src, const pc_view *idx, const int64_t *svalid, char *err,
                    size_t errn);
    int (*gatherb)(const pc_view *out, const pc_view *src, const pc_view *off, const int64_t *box, char *err, size_t errn);
    int (*scatter_update)(const pc_view *out, const pc_view *idx, const pc_view *src, const int64_t *box, char *err,
                          size_t errn);
    int (*gather_compare)(const pc_view *dst, const pc_view *cnt, const pc_view *src, const int64_t *box, int mode,
                          double k, int64_t out_cols, char *err, size_t errn);

    /* pld_k_mx_unpack: the logical scales of a packed MX-layout tensor */
    int (*mx_unpack)(const pc_view *out, const void *src, int64_t rows, int64_t cols, const int64_t *off, int a_layout,
                     char *err, size_t errn);
    /* pld_k_paged_gather (pld_kern_gather.c) */
    int (*paged_gather)(const pc_view *out, const pc_view *src, const pc_view *idx, const pc_view *table, int64_t bs,
                        int64_t size, int64_t col, int trans, char *err, size_t errn);
} pc_kern;

/* What an op the runtime ran returned (pc_rt.op). */
enum { PC_OUT_NONE = 0, PC_OUT_INT, PC_OUT_FLOAT, PC_OUT_TENSOR, PC_OUT_TILE, PC_OUT_CTX };
typedef struct pc_out {
    int32_t kind;                      /* PC_OUT_* */
    int32_t dt;
    int64_t i;                         /* INT, CTX (a comm-domain handle) */
    double f;                          /* FLOAT */
    pc_tensor t;                       /* TENSOR */
    pc_tile tile;                      /* TILE: data owned by the runtime until the next exec of the block */
} pc_out;

/* An evaluated operand of a runtime op (pc_rt.op). kind: PC_OUT_NONE (absent,
 * or read from the program text: enum members, bool / string literals,
 * dtype names), INT / FLOAT / CTX (i, f), TENSOR (t), TILE (tile), or
 * PC_ARG_LIST (n integers in list), PC_ARG_NONEVAL (the value None given). */
enum { PC_ARG_LIST = 16, PC_ARG_NONEVAL = 17 };
typedef struct pc_arg {
    int32_t kind, dt;
    int32_t n, pad_;
    int64_t i;
    double f;
    const pc_tensor *t;
    pc_tile *tile;
    int64_t list[8];
} pc_arg;

/* Element-wise op codes of pc_rt.binary / unary (the kernel library's). */
enum { PC_ADD, PC_SUB, PC_MUL, PC_DIV, PC_MAX, PC_MIN };
enum { PC_EXP, PC_LOG, PC_SQRT, PC_RSQRT, PC_ABS, PC_NEG, PC_RECIP, PC_RELU };
enum { PC_RSUM, PC_RMAX, PC_RMIN, PC_RPROD };

typedef struct pc_member pc_member;
typedef struct pc_rt {
    uint32_t version, size;            /* PC_VERSION, sizeof(pc_rt) */
    /* a located runtime error at `site` with message msg; returns 1 */
    int (*fail)(void *bk, int site, const char *msg);
    /* zeroed storage, 64-byte aligned, freed when the block ends; NULL
     * after an error was recorded */
    void *(*alloc)(void *bk, int site, size_t bytes);
    /* cancellation and the step limit at loop back edges: nonzero = stop */
    int (*tick)(void *bk, int site);
    /* scalar rounding to a dtype (FP16/BF16/FP32, ints wrap) as pldrun does */
    double (*round_f)(int32_t dt, double v);
    int64_t (*wrap_i)(int32_t dt, int64_t v);
    double (*from_bits)(int32_t dt, uint64_t bits);   /* a float scalar argument word */
    /* memory: tile <-> tensor (pl.tile.load / store) */
    int (*load)(void *bk, int site, pc_tile *dst, const pc_tensor *src, const int64_t *off, int noff,
                const int64_t *valid, int clamp);
    int (*store)(void *bk, int site, const pc_tile *src, const int64_t *off, int noff, const pc_tensor *dst,
                 const int64_t *limit, int atomic);
    /* element access of any dtype (after the generated bounds check) */
    double (*get_f)(const void *data, int32_t dt, int64_t i);
    int64_t (*get_i)(const void *data, int32_t dt, int64_t i);
    void (*set_f)(void *data, int32_t dt, int64_t i, double v);
    void (*set_i)(void *data, int32_t dt, int64_t i, int64_t v);
    /* a tile filled with one value (pl.tile.full / create) */
    int (*fill)(void *bk, int site, pc_tile *out, double vf, int64_t vi);
    /* a scope body's locals handed back to the frame it runs in (set_*),
     * and a CommContext parameter of the frame (param_ctx) */
    int (*set_int)(void *bk, int slot, int32_t dt, int64_t v);
    int (*set_float)(void *bk, int slot, int32_t dt, double v);
    int (*set_tensor)(void *bk, int site, int slot, const pc_tensor *t);
    int (*set_tile)(void *bk, int site, int slot, const pc_tile *t);
    int (*set_ctx)(void *bk, int slot, int64_t handle);
    int64_t (*param_ctx)(void *bk, int slot);
    /* the CommContext (pld_backend.h layout) of window tensor t when the
     * peers' windows of its domain are mapped in this process, so that the
     * kernel may reach them through windowsIn[] as the NPU does; NULL: the op
     * goes through the runtime (op) */
    const void *(*comm_ctx)(void *bk, const pc_tensor *t);
    /* a tile of `bytes` in memory space `mem` was bound to local `slot` by
     * statement number seq: the on-chip capacity check `sim` makes (the
     * tiles live after seq, by the checker's liveness, must fit) */
    int (*tile_bound)(void *bk, int site, int slot, int32_t seq, int32_t mem, int64_t bytes);
    /* 1 when the kernel's tile storage per memory space (bytes[m], n spaces)
     * could exceed this platform's capacity: only then are tile_bound calls
     * needed (the live tiles never exceed all of the storage) */
    int (*ub_needed)(void *bk, const int64_t *bytes, int n);
    /* the kernel library (pc_kern), and its failure at `site` reported as
     * sim reports it ("<op name>: <err>"); returns 1 */
    const pc_kern *k;
    int (*kfail)(void *bk, int site, const char *err);
    /* ---- the system family (pld_cgen_sys.c; runtime: src/interp/pld_crt_sys.c) ----
     * a fact of the block's core (PC_INFO_*) */
    int64_t (*sys_info)(void *bk, int what);
    /* pl.system.task_dummy over the TaskIds deps[0..n) (each > 0): *tid */
    int (*task_dummy)(void *bk, int site, const int64_t *deps, int n, int64_t *tid);
    /* an op between the cores of a cluster (PC_XC_*) with int arguments iv */
    int (*xcore)(void *bk, int site, int op, const int64_t *iv, int n);
    /* tpush of tile t on pipe (dir, id); t NULL: only the checks made before
     * the tile is evaluated */
    int (*tpush)(void *bk, int site, int dir, int64_t split, int64_t id, const pc_tile *t);
    /* tpop from pipe (dir, id) into dst (storage: room bytes) */
    int (*tpop)(void *bk, int site, int dir, int64_t split, int64_t id, pc_tile *dst, size_t room);
    /* a call of kernel function fidx (its code fn, compiled into the
     * caller's unit; args[] as a launch's) as a block of its own that
     * inherits the caller's position; its return value in *out */
    int (*call)(void *bk, int site, int32_t fidx, int (*fn)(const struct pc_rt *, void *, int64_t *), int64_t *args,
                pc_out *out);
    /* the n member calls of a Group body (site: the first) run as the cores
     * of one cluster; lane 0's results in members[i].out */
    int (*group)(void *bk, int site, int n, const struct pc_member *members);
    /* a pl.split_aiv region of n lanes (split mode 0-2): fn runs each lane
     * as a block of its own with private copies of the locals fr[] points to
     * (ubc: the capacity checks are needed) */
    int (*lanes)(void *bk, int site, int64_t n, int split,
                 int (*fn)(const struct pc_rt *, void *, int64_t *, void **, int, int64_t), int64_t *args, void **fr,
                 int ubc);
    /* pl.tile.aiv_shard (gather 0) / aic_gather (1) of tile t into dst
     * (storage: room bytes); split < 0: the region's mode */
    int (*shard)(void *bk, int site, int gather, int64_t split, const pc_tile *t, pc_tile *dst, size_t room);
    /* a pld.* op (windows, signals, waits, collectives) at `site`, run by
     * the runtime with the operands the kernel evaluated: args[i] is the
     * op's parameter i (pc_arg; n = the op's parameter count); the result in
     * out as exec gives it. Tile operands are written back (the op may fill
     * them: pld.tile.get's staging tiles). */
    int (*op)(void *bk, int site, pc_arg *args, int n, pc_out *out);
    /* `return v0, ..., vn-1`: value i (expression `site`) as the kernel
     * evaluated it (a tensor, tile, scalar or handle); as ret otherwise */
    int (*ret_val)(void *bk, int site, int i, int n, const pc_arg *v);

    /* storage for n elements of dtype dt (zeroed, 64-byte aligned) held by
     * the block until it ends, as a tensor the runtime knows (set_tensor
     * finds views of it): the buffers of the tensor pools of compiled
     * pl.tensor.* ops (pc_pool_get); NULL after an error was recorded */
    void *(*tensor_buf)(void *bk, int site, int32_t dt, int64_t n);
    /* pl.tensor.assemble(dst, src, off, atomic) of tensors: the region and
     * dtype checks sim makes, then the copy (accumulate when atomic) */
    int (*assemble)(void *bk, int site, const pc_tensor *dst, const pc_tensor *src, const int64_t *off, int noff,
                    int atomic);
    /* the value of dynamic dimension `name` the run bound (from an input's
     * or a call's tensor shapes: the interpreter's table, no evaluation),
     * for a kernel none of whose own arguments carries it; sim's message
     * (at expression `site`) when it is not bound */
    int (*dyn_dim)(void *bk, int site, const char *name, int64_t *out);
    /* pl.dump_tag / pl.tensor.dump_tag at `site` under --dump (sys_info
     * PC_INFO_DUMP): the value of its operand, tensor t or tile tile (the
     * other NULL), to the tool's writer as sim gives it */
    int (*dump)(void *bk, int site, const pc_tensor *t, const pc_tile *tile);
    /* n back edges at once (n >= 1): what n calls of tick do, in one call.
     * Generated loops count their back edges and call it every PC_TICK_EVERY
     * of them and when the loop ends (issue 44: an indirect call per trip
     * cost as much as a scalar loop's body) */
    int (*tick_n)(void *bk, int site, uint32_t n);
} pc_rt;

/* the back edges a compiled loop counts between two pc_rt.tick_n calls: a
 * stop (budget, cancellation, --wait-timeout) comes at most this many trips
 * late, and a loop left by `return` leaves fewer than this many uncounted */
#define PC_TICK_EVERY 64u

/* one member call of a Group body (pc_rt.group) */
struct pc_member {
    int32_t fidx, site;
    int32_t aic;                       /* an AIC kernel (else AIV) */
    int32_t dual;                      /* an AIV kernel on both lanes (dual_aiv_dispatch) */
    int (*fn)(const struct pc_rt *, void *, int64_t *);
    int64_t *args;
    pc_out *out;
};

/* a ChipTensor (pld_backend.h, 128 bytes) for tensor t: what pc_tensor_arg reads; dtype_code
 * (pld_abi_dtype_code) at byte 40, which the callee checks */
static inline void pc_chip_tensor(unsigned char *ct, const pc_tensor *t, int32_t esize, int32_t dtype_code)
{
    uint64_t addr = (uint64_t)(uintptr_t)t->data, start = 0, sz = 0, owner = UINT64_MAX;
    uint32_t nd = (uint32_t)t->rank, shp[PC_MAX_RANK], str[PC_MAX_RANK];
    memset(ct, 0, 128);
    for (int i = 0; i < PC_MAX_RANK; i++) {
        shp[i] = i < t->rank ? (uint32_t)t->shape[i] : 0;
        str[i] = i < t->rank ? (uint32_t)t->stride[i] : 0;
        if (i < t->rank && t->shape[i] > 0)
            sz += (uint64_t)(t->shape[i] - 1) * (uint64_t)t->stride[i];
    }
    sz = (sz + 1) * (uint64_t)esize;
    memcpy(ct + 0, &addr, 8);
    memcpy(ct + 8, &sz, 8);
    memcpy(ct + 16, &owner, 8);
    memcpy(ct + 24, &start, 8);
    memcpy(ct + 36, &nd, 4);
    ct[40] = (unsigned char)(dtype_code >= 0 ? dtype_code : 0);
    memcpy(ct + 44, shp, sizeof shp);
    memcpy(ct + 72, str, sizeof str);
}

/* an FP32 scalar argument word (the low 32 bits) */
static inline uint64_t pc_f32_word(double v)
{
    float f = (float)v;
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

/* The error exits of generated code: `return pc_cold(), 1;` and
 * `return pc_cold(), rt->fail(...);`. A call of a cold function makes GCC and
 * clang predict the path never taken, so a kernel's many error checks do not
 * lower the guessed frequency of the code after them: without it GCC thinks
 * the loops of a long kernel cold and vectorises none of them (issue 44;
 * bench/native_vec_report.sh counts them). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((cold, noinline, unused)) static void pc_cold(void)
{
    __asm__ __volatile__("");                  /* a side effect: the call stays */
}
#else
static void pc_cold(void) {}
#endif

/* pc_rt.sys_info facts, xcore ops and pipe directions (the system family) */
enum { PC_INFO_SUBBLOCK = 0, PC_INFO_CLUSTERS, PC_INFO_AIVS, PC_INFO_IN_GROUP, PC_INFO_TASKS, PC_INFO_DUMP };
enum { PC_XC_INIT_PIPE = 0, PC_XC_TFREE, PC_XC_SYNC_SET, PC_XC_SYNC_WAIT, PC_XC_SYNCALL };
enum { PC_C2V = 0, PC_V2C = 1 };
#define PC_MAX_DEPS 64

/* Calls kernel library entry FN (pc_kern) with the arguments given and the
 * error buffer; a failure returns 1 from the kernel with sim's message. */
#define PC_K(site, FN, ...)                                                                                   \
    do {                                                                                                      \
        char pc_e_[256];                                                                                      \
        pc_e_[0] = 0;                                                                                         \
        if (rt->k->FN(__VA_ARGS__, pc_e_, sizeof pc_e_))                                                      \
            return pc_cold(), rt->kfail(bk, (site), pc_e_);                                                   \
    } while (0)

/* A packed row-major view of the whole physical tile t. */
static inline void pc_view_tile(pc_view *v, const pc_tile *t)
{
    int64_t st = 1;
    v->data = t->data;
    v->dt = t->dt;
    v->rank = t->rank;
    for (int d = t->rank - 1; d >= 0; d--) {
        v->shape[d] = t->shape[d];
        v->strides[d] = st;
        st *= t->shape[d];
    }
}

/* The valid region of tile t (its physical strides). */
static inline void pc_view_tile_valid(pc_view *v, const pc_tile *t)
{
    pc_view_tile(v, t);
    for (int d = 0; d < t->rank; d++)
        v->shape[d] = t->valid[d] < t->shape[d] ? t->valid[d] : t->shape[d];
}

/* A view of tensor t (its whole shape). */
static inline void pc_view_tensor(pc_view *v, const pc_tensor *t)
{
    v->data = t->data;
    v->dt = t->dt;
    v->rank = t->rank;
    for (int d = 0; d < t->rank; d++) {
        v->shape[d] = t->shape[d];
        v->strides[d] = t->stride[d];
    }
}

/* ---- helpers of generated code ---- */
static inline int64_t pc_floordiv(int64_t a, int64_t b)
{
    if (b == -1)
        return (int64_t)(0 - (uint64_t)a);
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

static inline int64_t pc_floormod(int64_t a, int64_t b)
{
    if (b == -1)
        return 0;
    int64_t m = a % b;
    if (m != 0 && ((m < 0) != (b < 0)))
        m += b;
    return m;
}

static inline double pc_fmod_py(double x, double y)
{
    return y != 0 ? x - floor(x / y) * y : NAN;
}

static inline int64_t pc_numel(const int64_t *s, int r)
{
    int64_t n = 1;
    for (int i = 0; i < r; i++)
        n *= s[i];
    return n;
}

/* The element offset of index list idx (n entries, or one flat index when
 * rank > 1) into a tensor (stride) or a packed tile (stride NULL); 0, or 1
 * with the interpreter's message in msg. */
static inline int pc_elem_off(const char *op, const int64_t *shape, const int64_t *stride, int rank,
                              const int64_t *idx, int n, int64_t *off, char *msg, size_t mn)
{
    int64_t st[PC_MAX_RANK], total = 1;
    for (int d = rank - 1; d >= 0; d--) {
        st[d] = stride ? stride[d] : total;
        total *= shape[d];
    }
    int64_t o = 0;
    if (n == 1 && rank > 1) {
        if (idx[0] < 0 || idx[0] >= total) {
            snprintf(msg, mn, "%s: flat index %lld out of range [0, %lld)", op, (long long)idx[0], (long long)total);
            return 1;
        }
        int64_t rem = idx[0];
        for (int d = rank - 1; d >= 0; d--) {
            o += (rem % shape[d]) * st[d];
            rem /= shape[d];
        }
        *off = o;
        return 0;
    }
    if (n != rank) {
        snprintf(msg, mn, "%s: %d indices for rank %d", op, n, rank);
        return 1;
    }
    for (int d = 0; d < rank; d++) {
        if (idx[d] < 0 || idx[d] >= shape[d]) {
            int k = snprintf(msg, mn, "%s: index %lld out of range in dimension %d (shape [", op, (long long)idx[d], d);
            for (int j = 0; j < rank && k > 0 && (size_t)k < mn; j++)
                k += snprintf(msg + k, mn - (size_t)k, "%s%lld", j ? ", " : "", (long long)shape[j]);
            if (k > 0 && (size_t)k < mn)
                snprintf(msg + k, mn - (size_t)k, "])");
            return 1;
        }
        o += idx[d] * st[d];
    }
    *off = o;
    return 0;
}

/* windowsIn[peer] - windowsIn[rankId] of CommContext ctx: the byte distance
 * from this rank's window to peer's as mapped here; 0 when ctx is NULL, the
 * peer is out of range or not mapped (the runtime path then reports or moves
 * the data) */
static inline int pc_peer_delta(const void *ctx, int64_t peer, int64_t *delta)
{
    if (!ctx)
        return 0;
    uint32_t me, n;
    memcpy(&me, (const char *)ctx + 16, 4);
    memcpy(&n, (const char *)ctx + 20, 4);
    if (peer < 0 || peer >= (int64_t)n || me >= n)
        return 0;
    uint64_t a, b;
    memcpy(&a, (const char *)ctx + 32 + 8 * (size_t)peer, 8);
    memcpy(&b, (const char *)ctx + 32 + 8 * (size_t)me, 8);
    if (!a || !b)
        return 0;
    *delta = (int64_t)(a - b);
    return 1;
}

/* a tensor argument: args[] slot -> ChipTensor (128 bytes; pld_backend.h) */
static inline void pc_tensor_arg(pc_tensor *t, int64_t slot, int32_t dt, int32_t esize)
{
    const unsigned char *ct = (const unsigned char *)(uintptr_t)slot;
    uint64_t addr, start;
    uint32_t nd, shp[PC_MAX_RANK], str[PC_MAX_RANK];
    memcpy(&addr, ct + 0, 8);
    memcpy(&start, ct + 24, 8);
    memcpy(&nd, ct + 36, 4);
    memcpy(shp, ct + 44, sizeof shp);
    memcpy(str, ct + 72, sizeof str);
    t->data = (char *)(uintptr_t)addr + (size_t)start * (size_t)esize;
    t->dt = dt;
    t->rank = (int32_t)nd;
    for (uint32_t i = 0; i < PC_MAX_RANK; i++) {
        t->shape[i] = t->valid[i] = i < nd ? shp[i] : 1;
        t->stride[i] = i < nd ? str[i] : 0;
    }
}

/* rankId / rankNum of the CommContext at address ctx (a CommCtx handle) */
static inline int64_t pc_ctx_rank(int64_t ctx)
{
    uint32_t v;
    memcpy(&v, (const char *)(uintptr_t)ctx + 16, 4);
    return (int64_t)(int32_t)v;
}
static inline int64_t pc_ctx_nranks(int64_t ctx)
{
    uint32_t v;
    memcpy(&v, (const char *)(uintptr_t)ctx + 20, 4);
    return (int64_t)(int32_t)v;
}

/* the ABI dtype code (pld_backend.h) of tensor argument ti's ChipTensor */
static inline int pc_arg_dtype(const int64_t *args, int ti)
{
    return ((const unsigned char *)(uintptr_t)args[ti])[40];
}

/* dimension d of tensor argument ti (args[ti]'s ChipTensor shapes[d]) */
static inline int64_t pc_arg_dim(const int64_t *args, int ti, int d)
{
    uint32_t v;
    memcpy(&v, (const unsigned char *)(uintptr_t)args[ti] + 44 + 4 * (size_t)d, 4);
    return (int64_t)v;
}

/* block_idx / block_num of the LocalContext at args[48] */
static inline int64_t pc_block_idx(const int64_t *args)
{
    int32_t v;
    memcpy(&v, (const char *)(uintptr_t)args[48], 4);
    return v;
}

static inline int64_t pc_block_num(const int64_t *args)
{
    int32_t v;
    memcpy(&v, (const char *)(uintptr_t)args[48] + 4, 4);
    return v;
}

static inline float pc_f32_bits(uint64_t w)
{
    uint32_t b = (uint32_t)w;
    float f;
    memcpy(&f, &b, 4);
    return f;
}

/* IEEE max/min as the kernel library computes them (FMAX_IEEE / FMIN_IEEE:
 * x when x is NaN, else y when y is NaN, -0 < +0): the plain compare-select
 * (maxps / minps: y when unordered or equal), then in bits the equal case
 * (x & y: +0 for max of +0 and -0; x | y: -0 for min; equal non-zeros have
 * the same bits) and the NaN-x case (x), with masks GCC cannot merge back
 * into selects: the same bits (test native_fuse: sim's on NaNs with
 * payloads, signed zeros, infinities, subnormals), 16 SSE2 instructions a
 * vector instead of 27 (issue 44) */
static inline float pc_fmaxf(float x, float y)
{
    const float m = x > y ? x : y;
    uint32_t mb, xb;
    memcpy(&mb, &m, 4), memcpy(&xb, &x, 4);
    const uint32_t eq = -(uint32_t)(x == y), nan = -(uint32_t)(x != x);
    mb &= ~(eq & ~xb);
    mb = (xb & nan) | (mb & ~nan);
    float r;
    memcpy(&r, &mb, 4);
    return r;
}
static inline float pc_fminf(float x, float y)
{
    const float m = x < y ? x : y;
    uint32_t mb, xb;
    memcpy(&mb, &m, 4), memcpy(&xb, &x, 4);
    const uint32_t eq = -(uint32_t)(x == y), nan = -(uint32_t)(x != x);
    mb |= xb & eq;
    mb = (xb & nan) | (mb & ~nan);
    float r;
    memcpy(&r, &mb, 4);
    return r;
}

/* ---- layout helpers of generated code (pld_cgen_layout.c) ---- */
/* v narrowed to the box [off, off + ext) (es: the element size in bytes) */
static inline void pc_view_box(pc_view *v, const int64_t *off, const int64_t *ext, int es)
{
    int64_t o = 0;
    for (int d = 0; d < v->rank; d++) {
        o += off[d] * v->strides[d];
        v->shape[d] = ext[d];
    }
    v->data = (char *)v->data + o * es;
}

/* a located error with a formatted message (the interpreter's) */
#define PC_FAILF(site, ...)                                                                                   \
    do {                                                                                                      \
        char pc_m_[320];                                                                                      \
        snprintf(pc_m_, sizeof pc_m_, __VA_ARGS__);                                                           \
        return pc_cold(), rt->fail(bk, (site), pc_m_);                                                        \
    } while (0)

/* ---- element-wise extension ops, broadcasts, reductions (pld_cgen_ext.c) ---- */
/* The physical (packed) data of tile t viewed as shape (orank, oshape): its
 * missing leading dims and its size-1 dims that oshape widens stride 0 (the
 * interpreter's broadcast view). */
static inline void pc_view_bcast(pc_view *v, const pc_tile *t, int orank, const int64_t *oshape)
{
    int64_t st[PC_MAX_RANK], s = 1;
    for (int d = t->rank - 1; d >= 0; d--) {
        st[d] = s;
        s *= t->shape[d];
    }
    v->data = t->data;
    v->dt = t->dt;
    v->rank = orank;
    for (int d = 0; d < orank; d++) {
        int j = d - (orank - t->rank);
        v->shape[d] = oshape[d];
        v->strides[d] = j < 0 || (t->shape[j] == 1 && oshape[d] != 1) ? 0 : st[j];
    }
}

/* One element (cell, of dtype dt) viewed as shape (orank, oshape). */
static inline void pc_view_cell(pc_view *v, void *cell, int32_t dt, int orank, const int64_t *oshape)
{
    v->data = cell;
    v->dt = dt;
    v->rank = orank;
    for (int d = 0; d < orank; d++) {
        v->shape[d] = oshape[d];
        v->strides[d] = 0;
    }
}

/* A float scalar as an integer operand: truncated toward zero, saturated to
 * the int64 range, NaN -> 0 (the interpreter's pld_v_as_i). */
static inline int64_t pc_f2i(double f)
{
    if (f != f)
        return 0;
    if (f >= 9.2233720368547758e18)
        return INT64_MAX;
    if (f <= -9.2233720368547758e18)
        return INT64_MIN;
    return (int64_t)f;
}

/* ---- tensors of compiled pl.tensor.* ops ---- */

/* A buffer of `bytes` from the pool p[0..n) of one op (buffers made by
 * rt->tensor_buf on first use) that none of used[0..nu) points into: the
 * values still live (every tensor local and the op's operands) keep theirs,
 * so a loop reuses at most n buffers (n > nu: one is always free). */
static inline void *pc_pool_get(const pc_rt *rt, void *bk, int site, void **p, int n, size_t bytes, int32_t dt,
                                int64_t elems, const void *const *used, int nu)
{
    for (int i = 0; i < n; i++) {
        if (!p[i])
            return p[i] = rt->tensor_buf(bk, site, dt, elems);
        int busy = 0;
        for (int j = 0; j < nu && !busy; j++)
            busy = used[j] && (const char *)used[j] >= (const char *)p[i] && (const char *)used[j] < (const char *)p[i] + bytes;
        if (!busy)
            return p[i];
    }
    rt->fail(bk, site, "internal: a tensor pool of the compiled kernel is exhausted");
    return NULL;
}

/* pc_pool_get for a result whose size is known at run time only (a dynamic
 * dim): zs[i] = the bytes of p[i]; a free buffer too small for `bytes` is
 * replaced by a new one (the old one stays with the block) */
static inline void *pc_pool_get_dyn(const pc_rt *rt, void *bk, int site, void **p, size_t *zs, int n, size_t bytes,
                                    int32_t dt, int64_t elems, const void *const *used, int nu)
{
    for (int i = 0; i < n; i++) {
        if (!p[i]) {
            zs[i] = bytes;
            return p[i] = rt->tensor_buf(bk, site, dt, elems);
        }
        int busy = 0;
        for (int j = 0; j < nu && !busy; j++)
            busy = used[j] && (const char *)used[j] >= (const char *)p[i] && (const char *)used[j] < (const char *)p[i] + zs[i];
        if (!busy) {
            if (zs[i] < bytes) {
                void *b = rt->tensor_buf(bk, site, dt, elems);
                if (!b)
                    return NULL;
                p[i] = b;
                zs[i] = bytes;
            }
            return p[i];
        }
    }
    rt->fail(bk, site, "internal: a tensor pool of the compiled kernel is exhausted");
    return NULL;
}

/* whether shape s (rank r, dims >= 0) of esz-byte elements is within the
 * interpreter's limit (pld_value_bytes: the product of the non-zero dims
 * times esz at most 1 TiB, no overflow) */
static inline int pc_bytes_ok(int r, const int64_t *s, int64_t esz)
{
    int64_t nz = 1;
    for (int i = 0; i < r; i++) {
        if (s[i] == 0)
            continue;
        if (nz > INT64_MAX / s[i])
            return 0;
        nz *= s[i];
    }
    return nz <= ((int64_t)1 << 40) / esz;
}

/* v = tensor t as a rank-(n + 2) operand of pld_k_matmul (the interpreter's
 * mm_operand): batch dims right-aligned with the n dims of os, the missing and
 * size-1 ones broadcast (stride 0); the two last dims swapped when tr */
static inline void pc_mm_operand(pc_view *v, const pc_tensor *t, int tr, int n, const int64_t *os)
{
    const int lead = n - (t->rank - 2);
    v->data = t->data;
    v->dt = t->dt;
    v->rank = n + 2;
    for (int d = 0; d < n + 2; d++) {
        const int k = d - lead;
        const int bc = d < n && (k < 0 || t->shape[k] == 1);
        v->shape[d] = bc ? os[d] : t->shape[k];
        v->strides[d] = bc ? 0 : t->stride[k];
    }
    if (tr) {
        const int64_t s0 = v->shape[n], t0 = v->strides[n];
        v->shape[n] = v->shape[n + 1], v->strides[n] = v->strides[n + 1];
        v->shape[n + 1] = s0, v->strides[n + 1] = t0;
    }
}

/* "[a, b, ...]" of shape s (rank r): the interpreter's pld_shape_str */
static inline void pc_shape_str(char *b, size_t n, int r, const int64_t *s)
{
    size_t k = (size_t)snprintf(b, n, "[");
    for (int i = 0; i < r && k < n; i++)
        k += (size_t)snprintf(b + k, n - k, "%s%lld", i ? ", " : "", (long long)s[i]);
    if (k < n)
        snprintf(b + k, n - k, "]");
}

/* t = a packed tensor of dtype dt and shape s (rank r) at data, valid = shape */
static inline void pc_tensor_packed(pc_tensor *t, void *data, int32_t dt, int r, const int64_t *s)
{
    int64_t st = 1;
    t->data = (char *)data;
    t->dt = dt;
    t->rank = r;
    for (int d = PC_MAX_RANK - 1; d >= 0; d--) {
        t->shape[d] = t->valid[d] = d < r ? s[d] : 1;
        t->stride[d] = d < r ? st : 0;
        if (d < r)
            st *= s[d];
    }
}

/* the valid shape of an element-wise tensor result o (PyPTO's rule, the
 * interpreter's pld_tensor_elem_valid): a's when a (NULL: none kept) and b
 * (NULL: a unary op, a cast or a scalar operand) have o's shape and b a's
 * valid shape, else o's shape */
static inline void pc_tensor_elem_valid(pc_tensor *o, const pc_tensor *a, const pc_tensor *b)
{
    int keep = a && a->rank == o->rank && (!b || b->rank == o->rank);
    for (int d = 0; keep && d < o->rank; d++)
        keep = a->shape[d] == o->shape[d] && (!b || (b->shape[d] == o->shape[d] && b->valid[d] == a->valid[d]));
    for (int d = 0; d < o->rank; d++)
        o->valid[d] = keep ? a->valid[d] : o->shape[d];
}

/* the view of tensor t broadcast to shape os (rank r): numpy's rule, stride 0
 * on the missing and the size-1 dims (the interpreter's bview) */
static inline void pc_view_tbcast(pc_view *v, const pc_tensor *t, int r, const int64_t *os)
{
    v->data = t->data;
    v->dt = t->dt;
    v->rank = r;
    for (int d = 0; d < r; d++) {
        const int j = d - (r - t->rank);
        v->shape[d] = os[d];
        v->strides[d] = j < 0 || (t->shape[j] == 1 && os[d] != 1) ? 0 : t->stride[j];
    }
}

/* pl.tensor.slice of t (the interpreter's pld_exec_slice): a view, no copy;
 * 0, or 1 with the message in msg */
static inline int pc_tensor_slice(const char *op, pc_tensor *o, const pc_tensor *t, const int64_t *shp, int ns,
                                  const int64_t *off, int no, const int64_t *val, int nv, const int64_t *drop, int nd,
                                  int clamp, size_t esz, char *msg, size_t mn)
{
    if (ns != t->rank || no != t->rank) {
        snprintf(msg, mn, "%s: shape and offset need %d entries", op, t->rank);
        return 1;
    }
    pc_tensor v = *t;
    for (int d = 0; d < t->rank; d++) {
        /* only the extent read must fit: the valid_shape when given (PyPTO's kClampedWindow) */
        const int64_t reach = nv == t->rank && val[d] >= 0 && val[d] < shp[d] ? val[d] : shp[d];
        if (off[d] < 0 || shp[d] < 0 || (!clamp && reach > t->shape[d] - off[d])) {
            int k = snprintf(msg, mn, "%s: window offset %lld + %sextent %lld is outside dimension %d of [", op,
                             (long long)off[d], reach < shp[d] ? "valid " : "", (long long)reach, d);
            for (int j = 0; j < t->rank && k > 0 && (size_t)k < mn; j++)
                k += snprintf(msg + k, mn - (size_t)k, "%s%lld", j ? ", " : "", (long long)t->shape[j]);
            if (k > 0 && (size_t)k < mn)
                snprintf(msg + k, mn - (size_t)k, "]");
            return 1;
        }
        int64_t oo = off[d], ext = shp[d];
        if (ext > t->shape[d] - oo) {
            oo = oo < t->shape[d] ? oo : t->shape[d];
            ext = t->shape[d] - oo;
        }
        v.data += (ptrdiff_t)(oo * t->stride[d]) * (ptrdiff_t)esz;
        v.shape[d] = ext;
        int64_t room = t->valid[d] - oo;
        if (room < 0)
            room = 0;
        v.valid[d] = room < ext ? room : ext;
        if (nv == t->rank && val[d] < v.valid[d])
            v.valid[d] = val[d] < 0 ? 0 : val[d];
    }
    int isdrop[PC_MAX_RANK] = {0}, k = 0;
    for (int j = 0; j < nd; j++)
        if (drop[j] >= 0 && drop[j] < v.rank)
            isdrop[drop[j]] = 1;
    for (int d = 0; d < v.rank; d++) {
        if (isdrop[d] && (v.shape[d] != 1 || v.valid[d] != 1)) {
            snprintf(msg, mn, "%s: dropped dimension %d has extent %lld (valid %lld), not 1", op, d, (long long)v.shape[d],
                     (long long)v.valid[d]);
            return 1;
        }
        if (isdrop[d])
            continue;
        v.shape[k] = v.shape[d];
        v.valid[k] = v.valid[d];
        v.stride[k] = v.stride[d];
        k++;
    }
    for (int d = k; d < PC_MAX_RANK; d++) {
        v.shape[d] = v.valid[d] = 1;
        v.stride[d] = 0;
    }
    v.rank = k;
    *o = v;
    return 0;
}

/* 1 when tensor t is packed row-major (a size-1 dim's stride never matters; pld_view_is_packed) */
static inline int pc_tensor_is_packed(const pc_tensor *t)
{
    int64_t st = 1;
    if (pc_numel(t->shape, t->rank) == 0)
        return 1;
    for (int d = t->rank - 1; d >= 0; d--) {
        if (t->shape[d] != 1 && t->stride[d] != st)
            return 0;
        st *= t->shape[d];
    }
    return 1;
}

/* o = a packed view of t's storage with shape s (rank r), valid v (NULL: full) */
static inline void pc_tensor_alias(pc_tensor *o, const pc_tensor *t, int r, const int64_t *s, const int64_t *v)
{
    pc_tensor_packed(o, t->data, t->dt, r, s);
    for (int d = 0; v && d < r; d++)
        o->valid[d] = v[d];
}

/* pl.tensor.view(t, shape, valid_shape) (the interpreter's tensor_view): 0,
 * or 1 with the message in msg */
static inline int pc_tensor_view_of(const char *op, pc_tensor *o, const pc_tensor *t, const int64_t *s, int n,
                                    const int64_t *v, int nv, char *msg, size_t mn)
{
    int64_t b = 1, have = pc_numel(t->shape, t->rank);
    int full = 1;
    for (int d = 0; d < n; d++)
        b *= s[d];
    for (int d = 0; d < t->rank; d++)
        full &= t->valid[d] == t->shape[d];
    if (b != have || !pc_tensor_is_packed(t)) {
        if (b != have)
            snprintf(msg, mn, "%s: %lld elements cannot take %lld", op, (long long)have, (long long)b);
        else
            snprintf(msg, mn, "%s needs a packed tensor (this one is a strided view)", op);
        return 1;
    }
    if (nv < 0 && !full) {
        snprintf(msg, mn, "%s: a partially valid source needs valid_shape", op);
        return 1;
    }
    for (int d = 0; d < nv; d++)
        if (nv != n || v[d] < 1 || v[d] > s[d]) {
            snprintf(msg, mn, "%s: valid_shape does not fit the shape", op);
            return 1;
        }
    pc_tensor_alias(o, t, n, s, nv >= 0 ? v : NULL);
    return 0;
}

/* pl.tensor.reshape(t, shape) (the interpreter's pld_exec_reshape and
 * reshape_valid): a view; 0, or 1 with the message in msg */
static inline int pc_tensor_reshape(const pc_rt *rt, const char *op, pc_tensor *o, const pc_tensor *t, const int64_t *out,
                                    int ro, char *msg, size_t mn)
{
    int64_t n1 = pc_numel(t->shape, t->rank), n2 = 1, ov[PC_MAX_RANK];
    for (int d = 0; d < ro; d++)
        n2 *= out[d];
    if (n1 != n2 || !pc_tensor_is_packed(t)) {
        if (n1 != n2)
            snprintf(msg, mn, "%s: %lld elements cannot take the new shape", op, (long long)n1);
        else
            snprintf(msg, mn, "%s needs a packed tensor (this one is a strided view)", op);
        return 1;
    }
    char e[200];
    if (rt->k->reshape_valid(t->rank, t->shape, t->valid, ro, out, ov, e, sizeof e)) {
        snprintf(msg, mn, "%s: %s", op, e);
        return 1;
    }
    pc_tensor_alias(o, t, ro, out, ov);
    return 0;
}

#endif
