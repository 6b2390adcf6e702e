/* pld_kern_elem.c - element-wise kernels: binary (tensor-tensor and
 * tensor-scalar), unary, accumulate, copy and fill. Shared loops and helpers:
 * pld_kern_int.h; semantic choices: the top of pld_kern.c. */
#include "pld_kern_int.h"

/* ---- 6a. element-wise loops ------------------------------------------------ */




#define BIN_FLOAT(SZ, CT, LD, ST)                                                                               \
    switch (op) {                                                                                               \
    case PLD_K_ADD: RUN3(SZ, CT, LD, ST, COMM_NAN(x, y, +)); break;                                             \
    case PLD_K_SUB: RUN3(SZ, CT, LD, ST, x - y); break;                                                         \
    case PLD_K_MUL: RUN3(SZ, CT, LD, ST, COMM_NAN(x, y, *)); break;                                             \
    case PLD_K_DIV: RUN3(SZ, CT, LD, ST, x / y); break;                                                         \
    case PLD_K_MAX: RUN3(SZ, CT, LD, ST, FMAX_IEEE(x, y)); break;                                               \
    case PLD_K_MIN: RUN3(SZ, CT, LD, ST, FMIN_IEEE(x, y)); break;                                               \
    }

/* Integers: T storage type, U unsigned compute type (at least unsigned int,
 * so nothing promotes to a signed int), SGN 1 for signed dtypes. Division:
 * y == 0 sets zdiv; y == -1 is negation (INT_MIN / -1 wraps to INT_MIN). */
#define BIN_INT(SZ, T, U, LD, ST, SGN)                                                                          \
    switch (op) {                                                                                               \
    case PLD_K_ADD: RUN3(SZ, T, LD, ST, (U)((U)x + (U)y)); break;                                               \
    case PLD_K_SUB: RUN3(SZ, T, LD, ST, (U)((U)x - (U)y)); break;                                               \
    case PLD_K_MUL: RUN3(SZ, T, LD, ST, (U)((U)x * (U)y)); break;                                               \
    case PLD_K_DIV:                                                                                             \
        RUN3(SZ, T, LD, ST,                                                                                     \
             y == 0 ? (zdiv = 1, (U)0) : ((SGN) && y == (T)-1) ? (U)((U)0 - (U)x) : (U)(x / y));                \
        break;                                                                                                  \
    case PLD_K_MAX: RUN3(SZ, T, LD, ST, x > y ? (U)x : (U)y); break;                                            \
    case PLD_K_MIN: RUN3(SZ, T, LD, ST, x < y ? (U)x : (U)y); break;                                            \
    }

static inline int aligned(const void *p, size_t a)
{
    return ((uintptr_t)p & (a - 1)) == 0;
}

/* FP32 with every operand packed and aligned: straight loops over float
 * arrays. GCC 12 at -O2 (cost model "very-cheap") vectorises only loops that
 * need neither an alias check nor a scalar epilogue, so the loops run in
 * blocks of F32_BLK elements over restrict-qualified arrays, with one variant
 * per aliasing pattern (out == a and/or out == b in place; a == b is fine:
 * neither is written). At -O3 the blocks vectorise as well. AX and BY are
 * the operand expressions in the element index k. */
#define F32_BLK 16
#if defined(__GNUC__) && !defined(__clang__)
/* GCC -O2 leaves the vectorised block loop rolled (4 SSE steps per block and
 * a branch each); unrolling it brings -O2 to -O3 speed (docs/benchmarks-kernels.md).
 * Not for MAX/MIN: unrolled first, their blend no longer vectorises. */
#define F32_UNROLL _Pragma("GCC unroll 16")
#else
#define F32_UNROLL
#endif
#define F32_LOOP(O, AX, BY, EXPR, UNR)                                                                          \
    do {                                                                                                        \
        int64_t i_ = 0;                                                                                         \
        for (; i_ + F32_BLK <= n; i_ += F32_BLK)                                                                \
            UNR for (int j_ = 0; j_ < F32_BLK; j_++) {                                                          \
                const int64_t k = i_ + j_;                                                                      \
                const float x = AX, y = BY;                                                                     \
                O[k] = EXPR;                                                                                    \
            }                                                                                                   \
        for (; i_ < n; i_++) {                                                                                  \
            const int64_t k = i_;                                                                               \
            const float x = AX, y = BY;                                                                         \
            O[k] = EXPR;                                                                                        \
        }                                                                                                       \
    } while (0)
#define F32_OPS(O, AX, BY)                                                                                      \
    switch (op) {                                                                                               \
    case PLD_K_ADD: F32_LOOP(O, AX, BY, COMM_NAN(x, y, +), F32_UNROLL); break;                                  \
    case PLD_K_SUB: F32_LOOP(O, AX, BY, x - y, F32_UNROLL); break;                                              \
    case PLD_K_MUL: F32_LOOP(O, AX, BY, COMM_NAN(x, y, *), F32_UNROLL); break;                                  \
    case PLD_K_DIV: F32_LOOP(O, AX, BY, x / y, F32_UNROLL); break;                                              \
    case PLD_K_MAX: F32_LOOP(O, AX, BY, FMAX_IEEE(x, y), ); break;                                              \
    case PLD_K_MIN: F32_LOOP(O, AX, BY, FMIN_IEEE(x, y), ); break;                                              \
    }

/* Every operand order of a fold at once (pld_k_fold_orders): output r is
 * operand r, then the others ascending, folded left to right with the
 * binary op's expression, so each output has the bits of the pld_k_binary
 * calls of the same fold. One pass: each element of the inputs is loaded
 * once and every order is folded in registers (4 operands: 4 loads, 12 ops
 * and 4 stores per element, where the calls one fold at a time make 12
 * passes over their operands and copy 4). Blocks of F32_BLK as in F32_LOOP,
 * so that -O2 vectorises them too. */
#define F32_ORD(BODY)                                                                                           \
    do {                                                                                                        \
        int64_t i_ = 0;                                                                                         \
        for (; i_ + F32_BLK <= n; i_ += F32_BLK)                                                                \
            for (int j_ = 0; j_ < F32_BLK; j_++) {                                                              \
                const int64_t k = i_ + j_;                                                                      \
                BODY                                                                                            \
            }                                                                                                   \
        for (; i_ < n; i_++) {                                                                                  \
            const int64_t k = i_;                                                                               \
            BODY                                                                                                \
        }                                                                                                       \
    } while (0)
#define F32_STEP(R, V, E)                                                                                       \
    {                                                                                                           \
        const float x = R, y = V;                                                                               \
        R = E;                                                                                                  \
    }
#define F32_ORD2_BODY(E)                                                                                        \
    const float a_ = x0[k], b_ = x1[k];                                                                         \
    float r_ = a_;                                                                                              \
    F32_STEP(r_, b_, E) o0[k] = r_;                                                                             \
    r_ = b_;                                                                                                    \
    F32_STEP(r_, a_, E) o1[k] = r_;
#define F32_ORD3_BODY(E)                                                                                        \
    const float a_ = x0[k], b_ = x1[k], c_ = x2[k];                                                             \
    float r_ = a_;                                                                                              \
    F32_STEP(r_, b_, E) F32_STEP(r_, c_, E) o0[k] = r_;                                                         \
    r_ = b_;                                                                                                    \
    F32_STEP(r_, a_, E) F32_STEP(r_, c_, E) o1[k] = r_;                                                         \
    r_ = c_;                                                                                                    \
    F32_STEP(r_, a_, E) F32_STEP(r_, b_, E) o2[k] = r_;
#define F32_ORD4_BODY(E)                                                                                        \
    const float a_ = x0[k], b_ = x1[k], c_ = x2[k], d_ = x3[k];                                                 \
    float r_ = a_;                                                                                              \
    F32_STEP(r_, b_, E) F32_STEP(r_, c_, E) F32_STEP(r_, d_, E) o0[k] = r_;                                     \
    r_ = b_;                                                                                                    \
    F32_STEP(r_, a_, E) F32_STEP(r_, c_, E) F32_STEP(r_, d_, E) o1[k] = r_;                                     \
    r_ = c_;                                                                                                    \
    F32_STEP(r_, a_, E) F32_STEP(r_, b_, E) F32_STEP(r_, d_, E) o2[k] = r_;                                     \
    r_ = d_;                                                                                                    \
    F32_STEP(r_, a_, E) F32_STEP(r_, b_, E) F32_STEP(r_, c_, E) o3[k] = r_;
#define F32_ORD_OPS(BODYM)                                                                                      \
    switch (op) {                                                                                               \
    case PLD_K_ADD: F32_ORD(BODYM(COMM_NAN(x, y, +))); break;                                                   \
    case PLD_K_SUB: F32_ORD(BODYM(x - y)); break;                                                               \
    case PLD_K_MUL: F32_ORD(BODYM(COMM_NAN(x, y, *))); break;                                                   \
    case PLD_K_DIV: F32_ORD(BODYM(x / y)); break;                                                               \
    case PLD_K_MAX: F32_ORD(BODYM(FMAX_IEEE(x, y))); break;                                                     \
    case PLD_K_MIN: F32_ORD(BODYM(FMIN_IEEE(x, y))); break;                                                     \
    }

/* The loops are built once per instruction set (pld_kern_f32.inc): for the
 * baseline of the target (SSE2 on x86-64) and, on x86-64, for AVX2 (8 floats
 * per instruction instead of 4). f32_pick chooses per call from the CPU, the
 * same for every caller, so every path of a run on one machine computes with
 * the same machine code: the collectives rely on that for bit-identical NaN
 * payloads (docs/ops-numerics.md, "Vector kernels"; test_kern compares the
 * two sets bit for bit). "avx2" does not enable FMA: nothing contracts
 * a * b + c. */
typedef struct f32_fns {
    void (*oab)(pld_binop_k_t, float *restrict, const float *restrict, const float *restrict, int64_t);
    void (*oob)(pld_binop_k_t, float *restrict, const float *restrict, int64_t);
    void (*oao)(pld_binop_k_t, float *restrict, const float *restrict, int64_t);
    void (*ooo)(pld_binop_k_t, float *restrict, int64_t);
    void (*oas)(pld_binop_k_t, float *restrict, const float *restrict, float, int64_t);
    void (*oos)(pld_binop_k_t, float *restrict, float, int64_t);
    void (*ord2)(pld_binop_k_t, float *restrict, float *restrict, const float *restrict, const float *restrict,
                 int64_t);
    void (*ord3)(pld_binop_k_t, float *restrict, float *restrict, float *restrict, const float *restrict,
                 const float *restrict, const float *restrict, int64_t);
    void (*ord4)(pld_binop_k_t, float *restrict, float *restrict, float *restrict, float *restrict,
                 const float *restrict, const float *restrict, const float *restrict, const float *restrict,
                 int64_t);
} f32_fns_t;

#define F32_SFX base
#define F32_ATTR
#include "pld_kern_f32.inc"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(PLD_KERN_NO_AVX2)
#define KERN_AVX2 1
#define F32_SFX avx2
#define F32_ATTR __attribute__((target("avx2")))
#include "pld_kern_f32.inc"
#else
#define KERN_AVX2 0
#endif

static int simd_base_only; /* pld_kern_simd_force_base (tests) */

static const f32_fns_t *f32_pick(void)
{
#if KERN_AVX2
    if (!simd_base_only && __builtin_cpu_supports("avx2"))
        return &f32_fns_avx2;
#endif
    return &f32_fns_base;
}

const char *pld_kern_simd(void)
{
    return f32_pick() == &f32_fns_base ? "baseline" : "avx2";
}

void pld_kern_f32_oob(pld_binop_k_t op, float *o, const float *b, int64_t n)
{
    f32_pick()->oob(op, o, b, n);
}

int pld_kern_simd_avx2(void)
{
    return f32_pick() != &f32_fns_base;
}

void pld_kern_simd_force_base(int on)
{
    simd_base_only = on != 0;
}

/* One FP32 row of n elements through the array loop of its aliasing pattern
 * (bs: b is one element, broadcast). */
static void bin_f32_row(const f32_fns_t *f, pld_binop_k_t op, char *po, const char *pa, const char *pb, int bs,
                        int64_t n)
{
    float *o = (float *)(void *)po;
    const float *a = (const float *)(const void *)pa;
    const float *b = (const float *)(const void *)pb;
    if (bs) {
        const float s = *b;
        if (o == a)
            f->oos(op, o, s, n);
        else
            f->oas(op, o, a, s, n);
    } else if (o == a && o == b) {
        f->ooo(op, o, n);
    } else if (o == a) {
        f->oob(op, o, b, n);
    } else if (o == b) {
        f->oao(op, o, a, n);
    } else {
        f->oab(op, o, a, b, n);
    }
}

/* The FP32 array fast paths; 0 when the iterator does not fit them. Rows of
 * packed out and a with b packed or one element (a row or column broadcast:
 * row_expand_* / col_expand_*) run row by row through the array loops, which
 * compute exactly what the strided loop computes. */
static int bin_f32_arrays(pld_binop_k_t op, kit_t *it)
{
    if (it->s[0] != 4 || it->s[1] != 4 || (it->s[2] != 4 && it->s[2] != 0) || !aligned(it->base[0], 4) ||
        !aligned(it->base[1], 4) || !aligned(it->base[2], 4))
        return 0;
    for (int d = 0; d < it->nd; d++)
        for (int k = 0; k < 3; k++)
            if (it->str[k][d] % 4)
                return 0;
    const f32_fns_t *f = f32_pick();
    if (it->nd == 0) {
        bin_f32_row(f, op, it->base[0], it->base[1], it->base[2], it->s[2] == 0, it->n);
        return 1;
    }
    for (int64_t r = 0; r < it->rows; r++) {
        bin_f32_row(f, op, it->base[0] + it->off[0], it->base[1] + it->off[1], it->base[2] + it->off[2], it->s[2] == 0,
                    it->n);
        kit_next(it);
    }
    return 1;
}

/* Runs a binary op; returns 1 when an integer division by zero happened. */
static int bin_run(pld_binop_k_t op, kcls_t c, kit_t *it)
{
    int zdiv = 0;
    switch (c) {
    case K_F32:
        if (bin_f32_arrays(op, it))
            break;
        BIN_FLOAT(4, float, ld_f32, st_f32)
        break;
    case K_F16: BIN_FLOAT(2, float, ld_f16, st_f16) break;
    case K_BF16: BIN_FLOAT(2, float, ld_bf16, st_bf16) break;
    case K_F64: BIN_FLOAT(8, double, ld_f64, st_f64) break;
    case K_BOOL:
    case K_U8: BIN_INT(1, uint8_t, uint32_t, ld_u8, st_w8, 0) break;
    case K_U16: BIN_INT(2, uint16_t, uint32_t, ld_u16, st_w16, 0) break;
    case K_U32: BIN_INT(4, uint32_t, uint32_t, ld_u32, st_w32, 0) break;
    case K_U64: BIN_INT(8, uint64_t, uint64_t, ld_u64, st_w64, 0) break;
    case K_I8: BIN_INT(1, int8_t, uint32_t, ld_i8, st_w8, 1) break;
    case K_I16: BIN_INT(2, int16_t, uint32_t, ld_i16, st_w16, 1) break;
    case K_I32: BIN_INT(4, int32_t, uint32_t, ld_i32, st_w32, 1) break;
    case K_I64: BIN_INT(8, int64_t, uint64_t, ld_i64, st_w64, 1) break;
    default: break;
    }
    return zdiv;
}

static const char *binop_name(pld_binop_k_t op)
{
    static const char *const names[] = {"add", "sub", "mul", "div", "max", "min"};
    return (unsigned)op < sizeof names / sizeof names[0] ? names[op] : "?";
}

static const char *unop_name(pld_unop_k_t op)
{
    static const char *const names[] = {"exp", "log", "sqrt", "rsqrt", "abs", "neg", "recip", "relu"};
    return (unsigned)op < sizeof names / sizeof names[0] ? names[op] : "?";
}

/* Checks out/a/b and runs out = a op b (b may be NULL-free scalar view). */
static pld_status_t binary_impl(pld_binop_k_t op, const pld_view_t *out, const pld_view_t *a,
                                const pld_view_t *b, char *err, size_t errn)
{
    pld_status_t st;
    if ((st = pld_kern_check_view(out, "out", err, errn)) || (st = pld_kern_check_view(a, "a", err, errn)) ||
        (st = pld_kern_check_view(b, "b", err, errn)))
        return st;
    if ((unsigned)op > PLD_K_MIN)
        return pld_kern_fail(err, errn, "unknown binary op %d", (int)op);
    const kcls_t c = kcls(out->dt);
    if (c == K_NONE)
        return pld_kern_fail(err, errn, "%s: unsupported dtype %s", binop_name(op), pld_dtype_name(out->dt));
    if (a->dt != out->dt || b->dt != out->dt)
        return pld_kern_fail(err, errn, "%s: dtype mismatch (out %s, a %s, b %s)", binop_name(op), pld_dtype_name(out->dt),
                    pld_dtype_name(a->dt), pld_dtype_name(b->dt));
    int64_t str[3][PLD_MAX_RANK];
    memcpy(str[0], out->strides, sizeof str[0]);
    if (pld_kern_bcast_strides(a, out->rank, out->shape, str[1]))
        return pld_kern_shape_mismatch(out, a, "a", err, errn);
    if (pld_kern_bcast_strides(b, out->rank, out->shape, str[2]))
        return pld_kern_shape_mismatch(out, b, "b", err, errn);
    if (pld_view_numel(out) == 0)
        return PLD_OK;
    const int sz = pld_dtype_storage_bytes(out->dt);
    const int esz[3] = {sz, sz, sz};
    char *base[3] = {out->data, a->data, b->data};
    kit_t it;
    pld_kern_kit_init(&it, 3, out->rank, out->shape, base, (const int64_t(*)[PLD_MAX_RANK])str, esz);
    if (bin_run(op, c, &it))
        return pld_kern_fail(err, errn, "integer division by zero");
    return PLD_OK;
}

pld_status_t pld_k_binary(pld_binop_k_t op, const pld_view_t *out, const pld_view_t *a, const pld_view_t *b,
                          char *err, size_t errn)
{
    return binary_impl(op, out, a, b, err, errn);
}

pld_status_t pld_k_binary_scalar(pld_binop_k_t op, const pld_view_t *out, const pld_view_t *a, double s_f,
                                 int64_t s_i, char *err, size_t errn)
{
    uint64_t cell = 0; /* the scalar in the element dtype, 8-byte aligned */
    const kcls_t c = kcls(out->dt);
    if (c != K_NONE) {
        if (cls_is_float(c))
            pld_elem_set_f(&cell, out->dt, 0, s_f);
        else
            pld_elem_set_i(&cell, out->dt, 0, s_i);
    }
    pld_view_t sv;
    memset(&sv, 0, sizeof sv);
    sv.data = &cell;
    sv.dt = out->dt;
    sv.rank = 0;
    return binary_impl(op, out, a, &sv, err, errn);
}

/* FP32, 2 to 4 aligned operands: one pass (F32_ORD_OPS) over strips of
 * FOLD_STRIP elements, the orders nobody wants into scratch. */
#define FOLD_STRIP 1024
static int fold_orders_f32(pld_binop_k_t op, int nx, const void *const *x, void *const *out, int64_t n)
{
    if (nx < 2 || nx > 4)
        return 0;
    for (int i = 0; i < nx; i++)
        if (!aligned(x[i], 4) || (out[i] && !aligned(out[i], 4)))
            return 0;
    float scratch[4][FOLD_STRIP]; /* 16 KiB of stack */
    const f32_fns_t *f = f32_pick();
    for (int64_t k0 = 0; k0 < n; k0 += FOLD_STRIP) {
        const int64_t m = n - k0 < FOLD_STRIP ? n - k0 : FOLD_STRIP;
        const float *xs[4];
        float *os[4];
        for (int i = 0; i < nx; i++) {
            xs[i] = (const float *)x[i] + k0;
            os[i] = out[i] ? (float *)out[i] + k0 : scratch[i];
        }
        if (nx == 2)
            f->ord2(op, os[0], os[1], xs[0], xs[1], m);
        else if (nx == 3)
            f->ord3(op, os[0], os[1], os[2], xs[0], xs[1], xs[2], m);
        else
            f->ord4(op, os[0], os[1], os[2], os[3], xs[0], xs[1], xs[2], xs[3], m);
    }
    return 1;
}

pld_status_t pld_k_fold_orders(pld_binop_k_t op, pld_dtype_t dt, int nx, const void *const *x, void *const *out,
                               int64_t n, char *err, size_t errn)
{
    if ((unsigned)op > PLD_K_MIN)
        return pld_kern_fail(err, errn, "unknown binary op %d", (int)op);
    if (kcls(dt) == K_NONE)
        return pld_kern_fail(err, errn, "%s: unsupported dtype %s", binop_name(op), pld_dtype_name(dt));
    if (nx < 1 || n <= 0)
        return PLD_OK;
    if (dt == PLD_DT_FP32 && fold_orders_f32(op, nx, x, out, n))
        return PLD_OK;
    /* the folds one at a time: the same loops, the same bits */
    const size_t nb = (size_t)n * (size_t)pld_dtype_storage_bytes(dt);
    for (int r = 0; r < nx; r++) {
        if (!out[r])
            continue;
        memcpy(out[r], x[r], nb);
        pld_view_t vo, vx;
        pld_view_packed(&vo, out[r], dt, 1, &n);
        for (int q = 0; q < nx; q++) {
            if (q == r)
                continue;
            pld_view_packed(&vx, (void *)x[q], dt, 1, &n);
            const pld_status_t st = binary_impl(op, &vo, &vo, &vx, err, errn);
            if (st != PLD_OK)
                return st;
        }
    }
    return PLD_OK;
}

pld_status_t pld_k_accumulate(const pld_view_t *out, const pld_view_t *a, char *err, size_t errn)
{
    return binary_impl(PLD_K_ADD, out, out, a, err, errn);
}

/* ---- 6b. unary ---------------------------------------------------------------- */

#define RELU_F(x) (((x) > 0 || (x) != (x)) ? (x) : 0)

/* exp of a float, correctly rounded (in double, then rounded once to float:
 * glibc's expf is within 1 ulp but not always the nearest float);
 * docs/ops-numerics.md. log and rsqrt: pld_kern_fn.h (shared with native's
 * inline loops). */
static inline float exp_rn(float x)
{
    return (float)exp((double)x);
}

static inline double rsqrt_f64(double x)
{
    return 1 / sqrt(x);
}

#define UN_FLOAT(SZ, CT, LD, ST, EXPF, LOGF, SQRTF, RSQRTF, FABSF)                                              \
    switch (op) {                                                                                               \
    case PLD_K_EXP: RUN2(SZ, SZ, CT, LD, ST, EXPF(x)); break;                                                   \
    case PLD_K_LOG: RUN2(SZ, SZ, CT, LD, ST, LOGF(x)); break;                                                   \
    case PLD_K_SQRT: RUN2(SZ, SZ, CT, LD, ST, SQRTF(x)); break;                                                 \
    case PLD_K_RSQRT: RUN2(SZ, SZ, CT, LD, ST, RSQRTF(x)); break;                                               \
    case PLD_K_ABS: RUN2(SZ, SZ, CT, LD, ST, FABSF(x)); break;                                                  \
    case PLD_K_NEG: RUN2(SZ, SZ, CT, LD, ST, -x); break;                                                        \
    case PLD_K_RECIP: RUN2(SZ, SZ, CT, LD, ST, (CT)1 / x); break;                                               \
    case PLD_K_RELU: RUN2(SZ, SZ, CT, LD, ST, (CT)RELU_F(x)); break;                                            \
    default: break;                                                                                             \
    }

/* Signed: ABS and NEG wrap (abs(INT_MIN) = INT_MIN). */
#define UN_SINT(SZ, T, U, LD, ST)                                                                               \
    switch (op) {                                                                                               \
    case PLD_K_ABS: RUN2(SZ, SZ, T, LD, ST, x < 0 ? (U)((U)0 - (U)x) : (U)x); break;                            \
    case PLD_K_NEG: RUN2(SZ, SZ, T, LD, ST, (U)((U)0 - (U)x)); break;                                           \
    case PLD_K_RELU: RUN2(SZ, SZ, T, LD, ST, x < 0 ? (U)0 : (U)x); break;                                       \
    default: break;                                                                                             \
    }

#define UN_UINT(SZ, T, U, LD, ST)                                                                               \
    switch (op) {                                                                                               \
    case PLD_K_ABS:                                                                                             \
    case PLD_K_RELU: RUN2(SZ, SZ, T, LD, ST, (U)x); break;                                                      \
    case PLD_K_NEG: RUN2(SZ, SZ, T, LD, ST, (U)((U)0 - (U)x)); break;                                           \
    default: break;                                                                                             \
    }

static void un_run(pld_unop_k_t op, kcls_t c, kit_t *it)
{
    switch (c) {
    case K_F32: UN_FLOAT(4, float, ld_f32, st_f32, exp_rn, pld_kfn_log, sqrtf, pld_kfn_rsqrt, fabsf) break;
    case K_F16: UN_FLOAT(2, float, ld_f16, st_f16, exp_rn, pld_kfn_log, sqrtf, pld_kfn_rsqrt, fabsf) break;
    case K_BF16: UN_FLOAT(2, float, ld_bf16, st_bf16, exp_rn, pld_kfn_log, sqrtf, pld_kfn_rsqrt, fabsf) break;
    case K_F64: UN_FLOAT(8, double, ld_f64, st_f64, exp, log, sqrt, rsqrt_f64, fabs) break;
    case K_BOOL:
    case K_U8: UN_UINT(1, uint8_t, uint32_t, ld_u8, st_w8) break;
    case K_U16: UN_UINT(2, uint16_t, uint32_t, ld_u16, st_w16) break;
    case K_U32: UN_UINT(4, uint32_t, uint32_t, ld_u32, st_w32) break;
    case K_U64: UN_UINT(8, uint64_t, uint64_t, ld_u64, st_w64) break;
    case K_I8: UN_SINT(1, int8_t, uint32_t, ld_i8, st_w8) break;
    case K_I16: UN_SINT(2, int16_t, uint32_t, ld_i16, st_w16) break;
    case K_I32: UN_SINT(4, int32_t, uint32_t, ld_i32, st_w32) break;
    case K_I64: UN_SINT(8, int64_t, uint64_t, ld_i64, st_w64) break;
    default: break;
    }
}

/* Checks an (out, a) pair of one dtype class each, a broadcast to out; fills
 * the iterator. Returns PLD_OK with *empty set when there is nothing to do. */
pld_status_t pld_kern_pair_setup(const pld_view_t *out, const pld_view_t *a, kit_t *it, int *empty, char *err,
                               size_t errn)
{
    pld_status_t st;
    if ((st = pld_kern_check_view(out, "out", err, errn)) || (st = pld_kern_check_view(a, "a", err, errn)))
        return st;
    int64_t str[2][PLD_MAX_RANK];
    memcpy(str[0], out->strides, sizeof str[0]);
    if (pld_kern_bcast_strides(a, out->rank, out->shape, str[1]))
        return pld_kern_shape_mismatch(out, a, "a", err, errn);
    *empty = pld_view_numel(out) == 0;
    if (*empty)
        return PLD_OK;
    const int esz[2] = {pld_dtype_storage_bytes(out->dt), pld_dtype_storage_bytes(a->dt)};
    char *base[2] = {out->data, a->data};
    pld_kern_kit_init(it, 2, out->rank, out->shape, base, (const int64_t(*)[PLD_MAX_RANK])str, esz);
    return PLD_OK;
}

pld_status_t pld_k_unary(pld_unop_k_t op, const pld_view_t *out, const pld_view_t *a, char *err, size_t errn)
{
    if ((unsigned)op > PLD_K_RELU)
        return pld_kern_fail(err, errn, "unknown unary op %d", (int)op);
    const kcls_t c = kcls(out->dt);
    if (c == K_NONE)
        return pld_kern_fail(err, errn, "%s: unsupported dtype %s", unop_name(op), pld_dtype_name(out->dt));
    if (a->dt != out->dt)
        return pld_kern_fail(err, errn, "%s: dtype mismatch (out %s, a %s)", unop_name(op), pld_dtype_name(out->dt),
                    pld_dtype_name(a->dt));
    if (!cls_is_float(c) && op != PLD_K_ABS && op != PLD_K_NEG && op != PLD_K_RELU)
        return pld_kern_fail(err, errn, "op %s needs a float dtype, got %s", unop_name(op), pld_dtype_name(out->dt));
    kit_t it;
    int empty;
    pld_status_t st = pld_kern_pair_setup(out, a, &it, &empty, err, errn);
    if (st || empty)
        return st;
    un_run(op, c, &it);
    return PLD_OK;
}

/* ---- 6f. copy and fill ------------------------------------------------------------- */

#define COPY_LOOP(T)                                                                                            \
    for (int64_t r_ = 0; r_ < it->rows; r_++) {                                                                 \
        char *o_ = it->base[0] + it->off[0];                                                                    \
        const char *a_ = it->base[1] + it->off[1];                                                              \
        for (int64_t i_ = 0; i_ < n_; i_++) {                                                                   \
            T v_;                                                                                               \
            memcpy(&v_, a_ + i_ * sa_, sizeof v_);                                                              \
            memcpy(o_ + i_ * so_, &v_, sizeof v_);                                                              \
        }                                                                                                       \
        kit_next(it);                                                                                           \
    }

void pld_kern_copy_run(kit_t *it, int sz)
{
    if (it->contig) {
        if (it->base[0] != it->base[1])
            memmove(it->base[0], it->base[1], (size_t)(it->n * sz));
        return;
    }
    const int64_t n_ = it->n, so_ = it->s[0], sa_ = it->s[1]; /* in locals: the byte stores may alias *it */
    if (so_ == sz && sa_ == sz) { /* packed rows (a box of a tile): one move per row */
        for (int64_t r_ = 0; r_ < it->rows; r_++) {
            memmove(it->base[0] + it->off[0], it->base[1] + it->off[1], (size_t)(n_ * sz));
            kit_next(it);
        }
        return;
    }
    switch (sz) {
    case 1: COPY_LOOP(uint8_t) break;
    case 2: COPY_LOOP(uint16_t) break;
    case 4: COPY_LOOP(uint32_t) break;
    default: COPY_LOOP(uint64_t) break;
    }
}

pld_status_t pld_k_copy(const pld_view_t *out, const pld_view_t *a, char *err, size_t errn)
{
    const int sz = pld_dtype_storage_bytes(out->dt);
    if (sz == 0 || (sz != 1 && sz != 2 && sz != 4 && sz != 8))
        return pld_kern_fail(err, errn, "copy: unsupported dtype %s", pld_dtype_name(out->dt));
    if (a->dt != out->dt)
        return pld_kern_fail(err, errn, "copy: dtype mismatch (out %s, a %s)", pld_dtype_name(out->dt), pld_dtype_name(a->dt));
    kit_t it;
    int empty;
    pld_status_t st = pld_kern_pair_setup(out, a, &it, &empty, err, errn);
    if (st || empty)
        return st;
    pld_kern_copy_run(&it, sz);
    return PLD_OK;
}

#define FILL_LOOP(T)                                                                                            \
    do {                                                                                                        \
        T v_;                                                                                                   \
        const int64_t n_ = it.n;                                                                                \
        memcpy(&v_, cell, sizeof v_);                                                                           \
        for (int64_t r_ = 0; r_ < it.rows; r_++) {                                                              \
            char *o_ = it.base[0] + it.off[0];                                                                  \
            for (int64_t i_ = 0; i_ < n_; i_++)                                                                 \
                memcpy(o_ + i_ * it.s[0], &v_, sizeof v_);                                                      \
            kit_next(&it);                                                                                      \
        }                                                                                                       \
    } while (0)

/* Fills out with the element bytes at cell. */
static pld_status_t fill_cell(const pld_view_t *out, const void *cell)
{
    const int sz = pld_dtype_storage_bytes(out->dt);
    if (!pld_kern_view_ok(out) || kcls(out->dt) == K_NONE)
        return PLD_E_RUNTIME;
    if (pld_view_numel(out) == 0)
        return PLD_OK;
    const int esz[1] = {sz};
    char *base[1] = {out->data};
    kit_t it;
    pld_kern_kit_init(&it, 1, out->rank, out->shape, base, &out->strides, esz);
    switch (sz) {
    case 1: FILL_LOOP(uint8_t); break;
    case 2: FILL_LOOP(uint16_t); break;
    case 4: FILL_LOOP(uint32_t); break;
    default: FILL_LOOP(uint64_t); break;
    }
    return PLD_OK;
}

pld_status_t pld_k_fill_f(const pld_view_t *out, double v)
{
    uint64_t cell = 0;
    if (kcls(out->dt) == K_NONE)
        return PLD_E_RUNTIME;
    pld_elem_set_f(&cell, out->dt, 0, v);
    return fill_cell(out, &cell);
}

pld_status_t pld_k_fill_i(const pld_view_t *out, int64_t v)
{
    uint64_t cell = 0;
    if (kcls(out->dt) == K_NONE)
        return PLD_E_RUNTIME;
    pld_elem_set_i(&cell, out->dt, 0, v);
    return fill_cell(out, &cell);
}
