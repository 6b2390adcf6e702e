/* pld_kern_int.h - internals shared by the kernel files: dtype classes,
 * unaligned-safe element loads and stores, the N-D iterator and the loop
 * macros every kernel instantiates.
 *
 *   pld_kern.c         views, element access, the generic IEEE rounding core,
 *                      errors and the N-D iterator
 *   pld_kern_elem.c    element-wise kernels: binary, scalar, unary, copy, fill
 *   pld_kern_f32.inc   its FP32 array loops, included once per instruction set
 *   pld_kern_reduce.c  reductions (row / column) and matmul
 *   pld_kern_cast.c    dtype conversion with rounding modes
 *   pld_kern_mm.c      MX scale unpacking and the blocked FP32-accumulator matmul
 *   pld_kern_mm.inc    its register kernels, included once per instruction set
 *   pld_kern_ext.c     issue 11 element-wise ops: fmod/rem, bitwise, shifts, compares
 *                      and masks, select, partial ops, ci, tri */
#ifndef PLD_KERN_INT_H
#define PLD_KERN_INT_H

#include "pld_kern.h"
#include "pld_kern_fn.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Conversions and element loads/stores sit in every inner loop: force them
 * inline (GCC's -O2 heuristics otherwise keep the FP16 ones out of line). */
#if defined(__GNUC__)
#define KINLINE static inline __attribute__((always_inline))
#else
#define KINLINE static inline
#endif

/* ---- dtype classes ---------------------------------------------------------- */

typedef enum kcls {
    K_NONE = 0,
    K_BOOL, K_I8, K_I16, K_I32, K_I64, K_U8, K_U16, K_U32, K_U64,
    K_F16, K_BF16, K_F32, K_F64
} kcls_t;

/* The kernel class of a dtype (the loop a kernel instantiates for it). */
KINLINE kcls_t kcls(pld_dtype_t dt)
{
    switch (dt) {
    case PLD_DT_BOOL: return K_BOOL;
    case PLD_DT_INT8: return K_I8;
    case PLD_DT_INT16: return K_I16;
    case PLD_DT_INT32: return K_I32;
    case PLD_DT_INT64:
    case PLD_DT_INDEX:
    case PLD_DT_TASK_ID: return K_I64; /* pl.array of TaskIds */
    case PLD_DT_UINT8: return K_U8;
    case PLD_DT_UINT16: return K_U16;
    case PLD_DT_UINT32: return K_U32;
    case PLD_DT_UINT64: return K_U64;
    case PLD_DT_FP16: return K_F16;
    case PLD_DT_BF16: return K_BF16;
    case PLD_DT_FP32: return K_F32;
    case PLD_DT_FP64: return K_F64;
    default: return K_NONE;
    }
}

KINLINE int cls_is_float(kcls_t c)
{
    return c >= K_F16;
}

KINLINE int cls_is_signed(kcls_t c)
{
    return c == K_I8 || c == K_I16 || c == K_I32 || c == K_I64;
}

/* ---- loads and stores (memcpy: any alignment) ------------------------------ */

#define DEF_LD(NAME, T)                                                                                         \
    KINLINE T NAME(const char *p)                                                                               \
    {                                                                                                           \
        T v;                                                                                                    \
        memcpy(&v, p, sizeof v);                                                                                \
        return v;                                                                                               \
    }
DEF_LD(ld_i8, int8_t)
DEF_LD(ld_i16, int16_t)
DEF_LD(ld_i32, int32_t)
DEF_LD(ld_i64, int64_t)
DEF_LD(ld_u8, uint8_t)
DEF_LD(ld_u16, uint16_t)
DEF_LD(ld_u32, uint32_t)
DEF_LD(ld_u64, uint64_t)
DEF_LD(ld_f32, float)
DEF_LD(ld_f64, double)

/* Integer stores take the value as unsigned and keep the low bits (wrap). */
KINLINE void st_w8(char *p, uint32_t v)
{
    uint8_t t = (uint8_t)v;
    memcpy(p, &t, 1);
}
KINLINE void st_w16(char *p, uint32_t v)
{
    uint16_t t = (uint16_t)v;
    memcpy(p, &t, 2);
}
KINLINE void st_w32(char *p, uint32_t v)
{
    memcpy(p, &v, 4);
}
KINLINE void st_w64(char *p, uint64_t v)
{
    memcpy(p, &v, 8);
}
KINLINE void st_f32(char *p, float v)
{
    memcpy(p, &v, 4);
}
KINLINE void st_f64(char *p, double v)
{
    memcpy(p, &v, 8);
}
KINLINE float ld_f16(const char *p)
{
    return pld_f16_to_f32(ld_u16(p));
}
KINLINE void st_f16(char *p, float v)
{
    uint16_t h = pld_f32_to_f16(v);
    memcpy(p, &h, 2);
}
KINLINE float ld_bf16(const char *p)
{
    return pld_bf16_to_f32(ld_u16(p));
}
KINLINE void st_bf16(char *p, float v)
{
    uint16_t h = pld_f32_to_bf16(v);
    memcpy(p, &h, 2);
}

/* The NaN of a commutative op, made explicit. Where both operands of x + y
 * or x * y are NaNs, x86 returns the first one (quieted), and a compiler may
 * hand either operand to the instruction first: the payload then depends on
 * the code generated. It did: a loop's vector body and its last element
 * disagreed, and so did its AVX2 and baseline builds (test_kern,
 * test_kern_binary_fp32_simd_sets). COMM_NAN(x, y, OP) is x OP x where x is
 * a NaN (both operands the same NaN: x quieted, whatever their order), else
 * x OP y (one NaN operand gives that one quieted; none, the machine's default
 * NaN). The select comes before the op, which stays unconditional: GCC does
 * not vectorise a conditional FP op under -ftrapping-math. Max and Min need
 * nothing: they select an operand. The collectives fold through these loops
 * on several paths and compare results bit for bit (docs/ops-numerics.md,
 * "NaN payloads"). */
#define COMM_NAN(x, y, OP) ((x)OP((x) != (x) ? (x) : (y)))

/* IEEE 754-2019 maximum / minimum: NaN propagates, -0 < +0. */
#define FMAX_IEEE(x, y) (((x) > (y) || (x) != (x)) ? (x) : ((x) == (y) && !signbit(x)) ? (x) : (y))
#define FMIN_IEEE(x, y) (((x) < (y) || (x) != (x)) ? (x) : ((x) == (y) && signbit(x)) ? (x) : (y))
#define KMAXOPS 3

/* Iteration over `rows` rows of `n` elements. Operand k's element j of the
 * current row is at base[k] + off[k] + j * s[k] (bytes). contig: one row and
 * every s[k] equals the element size. */
typedef struct kit {
    int nops;
    int nd;                            /* outer (odometer) dims */
    int64_t shape[PLD_MAX_RANK];
    int64_t str[KMAXOPS][PLD_MAX_RANK]; /* byte strides of the outer dims */
    int64_t idx[PLD_MAX_RANK];
    int64_t off[KMAXOPS];
    char *base[KMAXOPS];
    int64_t n;
    int64_t s[KMAXOPS];
    int64_t rows;
    int contig;
} kit_t;

/* Advances the odometer to the next row. */
static inline void kit_next(kit_t *it)
{
    for (int d = it->nd - 1; d >= 0; d--) {
        for (int k = 0; k < it->nops; k++)
            it->off[k] += it->str[k][d];
        if (++it->idx[d] < it->shape[d])
            return;
        for (int k = 0; k < it->nops; k++)
            it->off[k] -= it->str[k][d] * it->shape[d];
        it->idx[d] = 0;
    }
}

/* ---- shared helpers (pld_kern.c unless noted) ---------------------------------- */

/* Rounding modes of the generic IEEE rounding core. */
enum { RM_NE = PLD_KFN_RM_NE, RM_ZERO = PLD_KFN_RM_ZERO, RM_DOWN = PLD_KFN_RM_DOWN, RM_UP = PLD_KFN_RM_UP, RM_ODD = PLD_KFN_RM_ODD };

/* Writes the message into err (when not NULL) and returns PLD_E_RUNTIME. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
pld_status_t pld_kern_fail(char *err, size_t errn, const char *fmt, ...);
/* "[4, 8]" into buf; returns buf. */
const char *pld_kern_shape_str(char *buf, size_t n, int rank, const int64_t *shape);
/* 1 when rank and shape of v are sane. */
int pld_kern_view_ok(const pld_view_t *v);
pld_status_t pld_kern_check_view(const pld_view_t *v, const char *what, char *err, size_t errn);
/* Element strides of v broadcast (right-aligned) to `shape`; -1 on mismatch. */
int pld_kern_bcast_strides(const pld_view_t *v, int rank, const int64_t *shape, int64_t *str);
pld_status_t pld_kern_shape_mismatch(const pld_view_t *out, const pld_view_t *v, const char *what, char *err,
                                     size_t errn);
/* Builds the iterator for `rank` dims of `shape` (all > 0); estr[k] are the
 * element strides of operand k, esz[k] its element size. */
void pld_kern_kit_init(kit_t *it, int nops, int rank, const int64_t *shape, char *const *base,
                       const int64_t (*estr)[PLD_MAX_RANK], const int *esz);
/* double -> int64: truncate toward zero, saturate, NaN -> 0. */
int64_t pld_kern_f64_to_i64_sat(double v);
/* (sign, magnitude) of an integer given as 64 raw bits and a signedness. */
void pld_kern_int_split(uint64_t v, int is_signed, int *neg, uint64_t *mag);
/* Stores an integer (sign, magnitude) into a float element of class c, RNE. */
void pld_kern_store_float_of_int(char *p, kcls_t c, int neg, uint64_t mag);
/* Stores v into a float element of class c with rounding mode rm (RM_*). */
void pld_kern_store_float_of_f64(char *p, kcls_t c, double v, int rm);
/* Checks out and a, broadcasts a to out and builds the 2-operand iterator;
 * *empty when out has no element (pld_kern_elem.c). */
pld_status_t pld_kern_pair_setup(const pld_view_t *out, const pld_view_t *a, kit_t *it, int *empty, char *err,
                                 size_t errn);
/* Same-dtype element copy over a 2-operand iterator (pld_kern_elem.c). */
void pld_kern_copy_run(kit_t *it, int sz);
/* 1 when the FP32 loops run the AVX2 set on this CPU (pld_kern_elem.c's
 * choice, the same for every kernel of a run). */
int pld_kern_simd_avx2(void);
/* The extents and byte strides of one [M, K] @ [K, N] product (pld_k_matmul's
 * old loop and pld_kern_mm_f32 read the same) */
typedef struct kmm_geom {
    int64_t m, kk, nn;      /* M, K, N */
    int64_t sam, sak;       /* a: row, column strides in bytes */
    int64_t sbk, sbn;       /* b */
    int64_t som, son;       /* out */
} kmm_geom_t;

KINLINE void kmm_geom(kmm_geom_t *g, const pld_view_t *out, const pld_view_t *a, const pld_view_t *b)
{
    const int isz = pld_dtype_storage_bytes(a->dt), osz = pld_dtype_storage_bytes(out->dt);
    g->m = a->shape[0], g->kk = a->shape[1], g->nn = b->shape[1];
    g->sam = a->strides[0] * isz, g->sak = a->strides[1] * isz;
    g->sbk = b->strides[0] * isz, g->sbn = b->strides[1] * isz;
    g->som = out->strides[0] * osz, g->son = out->strides[1] * osz;
}

/* o[k] = o[k] op b[k] for k < n: the packed in-place FP32 loop of the chosen
 * set (o and b do not overlap; pld_kern_elem.c). */
void pld_kern_f32_oob(pld_binop_k_t op, float *o, const float *b, int64_t n);
/* One 2-D product of pld_k_matmul for inputs of class ac in {K_F16, K_BF16,
 * K_F32} and a float out of class oc (views checked by the caller): blocked,
 * packed panels, FP32 accumulators, and for every output element the sum
 * (accumulate ? out : +0) + a[i,0] b[0,j] + a[i,1] b[1,j] + ... in ascending
 * k, each product and each sum rounded to FP32 (pld_kern_mm.c). Returns -1
 * (nothing written) when its workspace cannot be allocated, else 0. */
int pld_kern_mm_f32(const pld_view_t *out, const pld_view_t *a, const pld_view_t *b, const kmm_geom_t *g,
                    int accumulate, kcls_t ac, kcls_t oc);


/* out = EXPR(x, y) over the iterator `it` (operands out, a, b). SZ: element
 * size; CT: compute type; LD/ST: element load / store. Three loops: all packed,
 * out and a packed with b one element (scalar ops), and the general strided
 * odometer. */
#define RUN3(SZ, CT, LD, ST, EXPR)                                                                              \
    do {                                                                                                        \
        const int64_t n_ = it->n; /* a local: stores through char * may alias *it */                            \
        if (it->contig) {                                                                                       \
            char *o_ = it->base[0];                                                                             \
            const char *a_ = it->base[1], *b_ = it->base[2];                                                    \
            for (int64_t i_ = 0; i_ < n_; i_++) {                                                               \
                const CT x = LD(a_ + i_ * (SZ)), y = LD(b_ + i_ * (SZ));                                        \
                ST(o_ + i_ * (SZ), EXPR);                                                                       \
            }                                                                                                   \
        } else if (it->nd == 0 && it->s[0] == (SZ) && it->s[1] == (SZ) && it->s[2] == 0) {                      \
            char *o_ = it->base[0];                                                                             \
            const char *a_ = it->base[1];                                                                       \
            const CT y = LD(it->base[2]);                                                                       \
            for (int64_t i_ = 0; i_ < n_; i_++) {                                                               \
                const CT x = LD(a_ + i_ * (SZ));                                                                \
                ST(o_ + i_ * (SZ), EXPR);                                                                       \
            }                                                                                                   \
        } else {                                                                                                \
            for (int64_t r_ = 0; r_ < it->rows; r_++) {                                                         \
                char *o_ = it->base[0] + it->off[0];                                                            \
                const char *a_ = it->base[1] + it->off[1], *b_ = it->base[2] + it->off[2];                      \
                const int64_t so_ = it->s[0], sa_ = it->s[1], sb_ = it->s[2];                                   \
                for (int64_t i_ = 0; i_ < n_; i_++) {                                                           \
                    const CT x = LD(a_ + i_ * sa_), y = LD(b_ + i_ * sb_);                                      \
                    ST(o_ + i_ * so_, EXPR);                                                                    \
                }                                                                                               \
                kit_next(it);                                                                                   \
            }                                                                                                   \
        }                                                                                                       \
    } while (0)

/* out = EXPR(x) over (out, a); SZO / SZA: element sizes of out and a (they
 * differ in casts). */
#define RUN2(SZO, SZA, CT, LD, ST, EXPR)                                                                        \
    do {                                                                                                        \
        const int64_t n_ = it->n; /* a local: stores through char * may alias *it */                            \
        if (it->contig) {                                                                                       \
            char *o_ = it->base[0];                                                                             \
            const char *a_ = it->base[1];                                                                       \
            for (int64_t i_ = 0; i_ < n_; i_++) {                                                               \
                const CT x = LD(a_ + i_ * (SZA));                                                               \
                ST(o_ + i_ * (SZO), EXPR);                                                                      \
            }                                                                                                   \
        } else {                                                                                                \
            for (int64_t r_ = 0; r_ < it->rows; r_++) {                                                         \
                char *o_ = it->base[0] + it->off[0];                                                            \
                const char *a_ = it->base[1] + it->off[1];                                                      \
                const int64_t so_ = it->s[0], sa_ = it->s[1];                                                   \
                for (int64_t i_ = 0; i_ < n_; i_++) {                                                           \
                    const CT x = LD(a_ + i_ * sa_);                                                             \
                    ST(o_ + i_ * so_, EXPR);                                                                    \
                }                                                                                               \
                kit_next(it);                                                                                   \
            }                                                                                                   \
        }                                                                                                       \
    } while (0)

#define KCH 256 /* columns per chunk (column reduction, matmul, cast staging) */
/* n elements of float class c, s bytes apart, into / from an FP32 row (FP16 and
 * BF16 widen exactly; FP64 rounds to FP32): the matmul kernels' rows
 * (pld_kern_mm.c) */
void pld_kern_row_load_f(kcls_t c, const char *p, int64_t s, int64_t n, float *d);
void pld_kern_row_store_f(kcls_t c, char *p, int64_t s, int64_t n, const float *v);

#endif
