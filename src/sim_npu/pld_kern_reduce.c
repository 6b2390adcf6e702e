/* pld_kern_reduce.c - reductions over the last axis (row) or the
 * second-to-last axis (column, per batch index), and matmul. Shared loops and helpers:
 * pld_kern_int.h; semantic choices: the top of pld_kern.c. */
#include "pld_kern_int.h"

#include <stdint.h>

/* ---- 6c. reductions ------------------------------------------------------------ */


/* Row reduction: the iterator walks (out, a) over a's leading dims; each of
 * its elements starts a row of `ncol` elements `sc` bytes apart. AT is the
 * accumulator type, COMB(acc, x) the combine step. */
#define RED_ROW(CT, AT, LD, ST, COMB)                                                                           \
    for (int64_t r_ = 0; r_ < it->rows; r_++) {                                                                 \
        char *o_ = it->base[0] + it->off[0];                                                                    \
        const char *a_ = it->base[1] + it->off[1];                                                              \
        for (int64_t i_ = 0; i_ < n_; i_++) {                                                                   \
            const char *ar_ = a_ + i_ * it->s[1];                                                               \
            AT acc = (AT)LD(ar_);                                                                               \
            for (int64_t c_ = 1; c_ < ncol; c_++) {                                                             \
                const CT x = LD(ar_ + c_ * sc);                                                                 \
                acc = COMB(acc, x);                                                                             \
            }                                                                                                   \
            ST(o_ + i_ * it->s[0], acc);                                                                        \
        }                                                                                                       \
        kit_next(it);                                                                                           \
    }

/* Column reduction of a 2-D [nrow, ncol] view (row stride sr, column stride
 * sc) into out (column stride so), KCH columns at a time. */
#define RED_COL(CT, AT, LD, ST, COMB)                                                                           \
    for (int64_t c0_ = 0; c0_ < ncol; c0_ += KCH) {                                                             \
        const int64_t cn_ = ncol - c0_ < KCH ? ncol - c0_ : KCH;                                                \
        AT acc[KCH];                                                                                            \
        const char *a0_ = abase + c0_ * sc;                                                                     \
        for (int64_t j_ = 0; j_ < cn_; j_++)                                                                    \
            acc[j_] = (AT)LD(a0_ + j_ * sc);                                                                    \
        for (int64_t r_ = 1; r_ < nrow; r_++) {                                                                 \
            const char *ar_ = a0_ + r_ * sr;                                                                    \
            for (int64_t j_ = 0; j_ < cn_; j_++) {                                                              \
                const CT x = LD(ar_ + j_ * sc);                                                                 \
                acc[j_] = COMB(acc[j_], x);                                                                     \
            }                                                                                                   \
        }                                                                                                       \
        for (int64_t j_ = 0; j_ < cn_; j_++)                                                                    \
            ST(obase + (c0_ + j_) * so, acc[j_]);                                                               \
    }

#define C_SUM(acc, x) ((acc) + (x))
#define C_MUL(acc, x) ((acc) * (x))
#define C_USUM(acc, x) ((acc) + (uint64_t)(x))
#define C_UMUL(acc, x) ((acc) * (uint64_t)(x))
#define C_FMAX(acc, x) FMAX_IEEE(acc, x)
#define C_FMIN(acc, x) FMIN_IEEE(acc, x)
#define C_IMAX(acc, x) ((x) > (acc) ? (x) : (acc))
#define C_IMIN(acc, x) ((x) < (acc) ? (x) : (acc))
/* Column steps of FP16/BF16 round to the dtype after every step (the sum or
 * product of two such values is exact in float, so this is one rounding). */
#define C_SUM16(acc, x) rnd_f16((acc) + (x))
#define C_MUL16(acc, x) rnd_f16((acc) * (x))
#define C_SUMB16(acc, x) rnd_bf16((acc) + (x))
#define C_MULB16(acc, x) rnd_bf16((acc) * (x))

KINLINE float rnd_f16(float v)
{
    return pld_f16_to_f32(pld_f32_to_f16(v));
}
KINLINE float rnd_bf16(float v)
{
    return pld_bf16_to_f32(pld_f32_to_bf16(v));
}

/* Instantiates RED (RED_ROW or RED_COL) for every op of one dtype class.
 * Floats: AT float/double. Integers: sums and products in uint64 (wrapping),
 * max/min in int64 (signed) or uint64 (unsigned); stores keep the low bits.
 * SUM and MUL are the float combine steps (rounding ones for columns). */
#define RED_FLOAT(RED, CT, LD, ST, SUM, MUL)                                                                    \
    switch (op) {                                                                                               \
    case PLD_K_RSUM: RED(CT, CT, LD, ST, SUM) break;                                                            \
    case PLD_K_RMAX: RED(CT, CT, LD, ST, C_FMAX) break;                                                         \
    case PLD_K_RMIN: RED(CT, CT, LD, ST, C_FMIN) break;                                                         \
    case PLD_K_RPROD: RED(CT, CT, LD, ST, MUL) break;                                                           \
    default: break;                                                                                             \
    }
#define RED_INT(RED, T, LD, ST, MT)                                                                             \
    switch (op) {                                                                                               \
    case PLD_K_RSUM: RED(T, uint64_t, LD, ST, C_USUM) break;                                                    \
    case PLD_K_RMAX: RED(T, MT, LD, ST, C_IMAX) break;                                                          \
    case PLD_K_RMIN: RED(T, MT, LD, ST, C_IMIN) break;                                                          \
    case PLD_K_RPROD: RED(T, uint64_t, LD, ST, C_UMUL) break;                                                   \
    default: break;                                                                                             \
    }

/* Integer stores from a 64-bit accumulator. */
KINLINE void st_a8(char *p, uint64_t v)
{
    st_w8(p, (uint32_t)v);
}
KINLINE void st_a16(char *p, uint64_t v)
{
    st_w16(p, (uint32_t)v);
}
KINLINE void st_a32(char *p, uint64_t v)
{
    st_w32(p, (uint32_t)v);
}

/* F16S/F16M, B16S/B16M: the FP16 and BF16 sum and product steps. */
#define RED_DISPATCH(RED, F16S, F16M, B16S, B16M)                                                               \
    switch (c) {                                                                                                \
    case K_F32: RED_FLOAT(RED, float, ld_f32, st_f32, C_SUM, C_MUL) break;                                      \
    case K_F16: RED_FLOAT(RED, float, ld_f16, st_f16, F16S, F16M) break;                                        \
    case K_BF16: RED_FLOAT(RED, float, ld_bf16, st_bf16, B16S, B16M) break;                                     \
    case K_F64: RED_FLOAT(RED, double, ld_f64, st_f64, C_SUM, C_MUL) break;                                     \
    case K_BOOL:                                                                                                \
    case K_U8: RED_INT(RED, uint8_t, ld_u8, st_a8, uint64_t) break;                                             \
    case K_U16: RED_INT(RED, uint16_t, ld_u16, st_a16, uint64_t) break;                                         \
    case K_U32: RED_INT(RED, uint32_t, ld_u32, st_a32, uint64_t) break;                                         \
    case K_U64: RED_INT(RED, uint64_t, ld_u64, st_w64, uint64_t) break;                                         \
    case K_I8: RED_INT(RED, int8_t, ld_i8, st_a8, int64_t) break;                                               \
    case K_I16: RED_INT(RED, int16_t, ld_i16, st_a16, int64_t) break;                                           \
    case K_I32: RED_INT(RED, int32_t, ld_i32, st_a32, int64_t) break;                                           \
    case K_I64: RED_INT(RED, int64_t, ld_i64, st_w64, int64_t) break;                                           \
    default: break;                                                                                             \
    }

/* ---- FP32 fast paths: the same steps in the same order, vectorised ------------- */

/* Eight FP32 rows of ncol packed elements, rs floats apart, reduced at once:
 * row r's accumulator s<r> takes its elements left to right (the order of
 * RED_ROW), and GCC vectorises the column loop across the eight rows. */
#define ROW8_LD(r) float s##r = p[(r) * rs];
#define ROW8_UP(r, COMB) s##r = COMB(s##r, p[(r) * rs + j]);
#define ROW8(COMB)                                                                                              \
    {                                                                                                           \
        ROW8_LD(0) ROW8_LD(1) ROW8_LD(2) ROW8_LD(3) ROW8_LD(4) ROW8_LD(5) ROW8_LD(6) ROW8_LD(7)                 \
        for (int64_t j = 1; j < ncol; j++) {                                                                    \
            ROW8_UP(0, COMB) ROW8_UP(1, COMB) ROW8_UP(2, COMB) ROW8_UP(3, COMB)                                 \
            ROW8_UP(4, COMB) ROW8_UP(5, COMB) ROW8_UP(6, COMB) ROW8_UP(7, COMB)                                 \
        }                                                                                                       \
        res[0] = s0, res[1] = s1, res[2] = s2, res[3] = s3, res[4] = s4, res[5] = s5, res[6] = s6, res[7] = s7; \
    }
static void row8_f32(pld_redop_k_t op, const float *restrict p, int64_t rs, int64_t ncol, float *restrict res)
{
    switch (op) {
    case PLD_K_RSUM: ROW8(C_SUM) break;
    case PLD_K_RMAX: ROW8(C_FMAX) break;
    case PLD_K_RMIN: ROW8(C_FMIN) break;
    default: ROW8(C_MUL) break;
    }
}

/* The same eight accumulators s[] continued over n more elements of each row
 * (row r's at p[r * rs], p[r * rs + 1], ...): the FP16 / BF16 rows, widened
 * to FP32 a chunk at a time. */
#define ROW8C_LD(r) float s##r = s[r];
#define ROW8C(COMB)                                                                                             \
    {                                                                                                           \
        ROW8C_LD(0) ROW8C_LD(1) ROW8C_LD(2) ROW8C_LD(3) ROW8C_LD(4) ROW8C_LD(5) ROW8C_LD(6) ROW8C_LD(7)         \
        for (int64_t j = 0; j < n; j++) {                                                                       \
            ROW8_UP(0, COMB) ROW8_UP(1, COMB) ROW8_UP(2, COMB) ROW8_UP(3, COMB)                                 \
            ROW8_UP(4, COMB) ROW8_UP(5, COMB) ROW8_UP(6, COMB) ROW8_UP(7, COMB)                                 \
        }                                                                                                       \
        s[0] = s0, s[1] = s1, s[2] = s2, s[3] = s3, s[4] = s4, s[5] = s5, s[6] = s6, s[7] = s7;                 \
    }
static void row8_cont(pld_redop_k_t op, const float *restrict p, int64_t rs, int64_t n, float *restrict s)
{
    switch (op) {
    case PLD_K_RSUM: ROW8C(C_SUM) break;
    case PLD_K_RMAX: ROW8C(C_FMAX) break;
    case PLD_K_RMIN: ROW8C(C_FMIN) break;
    default: ROW8C(C_MUL) break;
    }
}

/* Max / min of one packed FP32 row of n >= 16 elements: sixteen lanes (lane
 * l takes elements l, l + 16, ...), folded in lane order, then the tail.
 * Without NaNs the result does not depend on the order (FMAX_IEEE and
 * FMIN_IEEE order -0 below +0, and equal non-zero floats have equal bits);
 * with a NaN the row is scanned again left to right, so the first NaN wins
 * as in RED_ROW. */
#define EXT16(COMB)                                                                                             \
    {                                                                                                           \
        float m[16];                                                                                            \
        memcpy(m, p, sizeof m);                                                                                 \
        int64_t j = 16;                                                                                         \
        for (; j + 16 <= n; j += 16)                                                                            \
            for (int l = 0; l < 16; l++)                                                                        \
                m[l] = COMB(m[l], p[j + l]);                                                                    \
        r = m[0];                                                                                               \
        for (int l = 1; l < 16; l++)                                                                            \
            r = COMB(r, m[l]);                                                                                  \
        for (; j < n; j++)                                                                                      \
            r = COMB(r, p[j]);                                                                                  \
        if (r != r) {                                                                                           \
            r = p[0];                                                                                           \
            for (j = 1; j < n; j++)                                                                             \
                r = COMB(r, p[j]);                                                                              \
        }                                                                                                       \
    }
static float row_ext_f32(int max, const float *restrict p, int64_t n)
{
    float r;
    if (n >= 128) {
        /* 64 lanes through the binary max / min loop of the chosen SIMD set
         * (AVX2 where there is one): the same FMAX_IEEE / FMIN_IEEE steps */
        const pld_binop_k_t bop = max ? PLD_K_MAX : PLD_K_MIN;
        float m[64];
        memcpy(m, p, sizeof m);
        int64_t j = 64;
        for (; j + 64 <= n; j += 64)
            pld_kern_f32_oob(bop, m, p + j, 64);
        r = m[0];
        for (int l = 1; l < 64; l++)
            r = max ? C_FMAX(r, m[l]) : C_FMIN(r, m[l]);
        for (; j < n; j++)
            r = max ? C_FMAX(r, p[j]) : C_FMIN(r, p[j]);
        if (r != r) {
            r = p[0];
            for (j = 1; j < n; j++)
                r = max ? C_FMAX(r, p[j]) : C_FMIN(r, p[j]);
        }
        return r;
    }
    if (max)
        EXT16(C_FMAX)
    else
        EXT16(C_FMIN)
    return r;
}

/* One FP32 column step over n packed columns: acc[j] = COMB(acc[j], x[j]). */
static void col_step_f32(pld_redop_k_t op, float *restrict acc, const float *restrict x, int64_t n)
{
    switch (op) {
    case PLD_K_RSUM: for (int64_t j = 0; j < n; j++) acc[j] = C_SUM(acc[j], x[j]); break;
    case PLD_K_RMAX: pld_kern_f32_oob(PLD_K_MAX, acc, x, n); break; /* FMAX_IEEE(acc, x): C_FMAX */
    case PLD_K_RMIN: pld_kern_f32_oob(PLD_K_MIN, acc, x, n); break;
    default: for (int64_t j = 0; j < n; j++) acc[j] = C_MUL(acc[j], x[j]); break;
    }
}

KINLINE int f32_ok(const void *p, int64_t stride)
{
    return ((uintptr_t)p & 3) == 0 && stride % 4 == 0;
}

/* ---- FP16 / BF16 and integer fast paths: the same steps in the same order ------ */

#define RCH 256 /* FP16 / BF16 elements widened to FP32 at a time */

KINLINE int u16_ok(const void *p, int64_t stride)
{
    return ((uintptr_t)p & 1) == 0 && stride % 2 == 0;
}

/* n FP16 (bf = 0) or BF16 (bf = 1) elements widened to FP32 (exact; the
 * branch-free conversions of pld_half.h vectorise) */
static void widen16(int bf, const uint16_t *restrict p, float *restrict o, int64_t n)
{
    if (bf)
        for (int64_t j = 0; j < n; j++)
            o[j] = pld_bf16_to_f32(p[j]);
    else
        for (int64_t j = 0; j < n; j++)
            o[j] = pld_f16_to_f32(p[j]);
}

/* Eight packed FP16 / BF16 rows (rs elements apart) reduced at once in FP32,
 * as RED_ROW does (the accumulator a float, each row left to right, no
 * rounding before the store): ROW8 over chunks widened to FP32. */
static void row8_16(pld_redop_k_t op, int bf, const uint16_t *restrict p, int64_t rs, int64_t ncol, float *restrict res)
{
    float buf[8 * RCH];
    for (int r = 0; r < 8; r++)
        res[r] = bf ? pld_bf16_to_f32(p[r * rs]) : pld_f16_to_f32(p[r * rs]);
    for (int64_t j0 = 1; j0 < ncol; j0 += RCH) {
        const int64_t n = ncol - j0 < RCH ? ncol - j0 : RCH;
        for (int r = 0; r < 8; r++)
            widen16(bf, p + r * rs + j0, buf + r * RCH, n);
        row8_cont(op, buf, RCH, n, res);
    }
}

/* Packed integer rows of classes of at most 32 bits (unaligned too: the
 * loads are memcpy): the low 32 bits of
 * RED_ROW's 64-bit sum or product are the 32-bit wrapping sum or product of
 * the low bits, and max / min compare the same values in 32 bits, so a
 * 32-bit accumulator gives the stored bits; integer steps do not depend on
 * the order, so the compiler reduces in lanes. */
#define IROW(LD, SZ, AT, COMB)                                                                                  \
    {                                                                                                           \
        AT acc = (AT)LD(ar);                                                                                    \
        for (int64_t j = 1; j < ncol; j++)                                                                      \
            acc = COMB(acc, (AT)LD(ar + j * (SZ)));                                                             \
        return (uint32_t)acc;                                                                                   \
    }
#define IROW_OPS(LD, SZ, MT)                                                                                    \
    switch (op) {                                                                                               \
    case PLD_K_RSUM: IROW(LD, SZ, uint32_t, C_SUM)                                                              \
    case PLD_K_RMAX: IROW(LD, SZ, MT, C_IMAX)                                                                   \
    case PLD_K_RMIN: IROW(LD, SZ, MT, C_IMIN)                                                                   \
    default: IROW(LD, SZ, uint32_t, C_MUL)                                                                      \
    }
static uint32_t row_int(pld_redop_k_t op, kcls_t c, const char *ar, int64_t ncol)
{
    switch (c) {
    case K_BOOL:
    case K_U8: IROW_OPS(ld_u8, 1, uint32_t)
    case K_I8: IROW_OPS(ld_i8, 1, int32_t)
    case K_U16: IROW_OPS(ld_u16, 2, uint32_t)
    case K_I16: IROW_OPS(ld_i16, 2, int32_t)
    case K_U32: IROW_OPS(ld_u32, 4, uint32_t)
    default: IROW_OPS(ld_i32, 4, int32_t)
    }
}

/* 1 for the integer classes row_int / col_int take */
KINLINE int int32_cls(kcls_t c)
{
    return c == K_BOOL || c == K_U8 || c == K_I8 || c == K_U16 || c == K_I16 || c == K_U32 || c == K_I32;
}

/* the low bits of v into an integer element of size sz */
KINLINE void st_int(char *p, int sz, uint32_t v)
{
    if (sz == 1)
        st_w8(p, v);
    else if (sz == 2)
        st_w16(p, v);
    else
        st_w32(p, v);
}

/* Rows of FP16 / BF16 (packed) and of integers of at most 32 bits (packed):
 * 1 when done here */
static int red_row_fast(pld_redop_k_t op, kcls_t c, kit_t *it, int64_t ncol, int64_t sc)
{
    const int64_t n_ = it->n;
    if ((c == K_F16 || c == K_BF16) && sc == 2) {
        const int bf = c == K_BF16, ext = (op == PLD_K_RMAX || op == PLD_K_RMIN) && ncol >= 16 && ncol <= 4 * RCH;
        for (int64_t r = 0; r < it->rows; r++) {
            char *o_ = it->base[0] + it->off[0];
            const char *a_ = it->base[1] + it->off[1];
            int64_t i = 0;
            if (u16_ok(a_, it->s[1])) {
                if (ext) { /* max / min: the row widened, then the FP32 lanes */
                    float buf[4 * RCH];
                    for (; i < n_; i++) {
                        widen16(bf, (const uint16_t *)(const void *)(a_ + i * it->s[1]), buf, ncol);
                        const float v = row_ext_f32(op == PLD_K_RMAX, buf, ncol);
                        bf ? st_bf16(o_ + i * it->s[0], v) : st_f16(o_ + i * it->s[0], v);
                    }
                }
                for (; i + 8 <= n_; i += 8) {
                    float res[8];
                    row8_16(op, bf, (const uint16_t *)(const void *)(a_ + i * it->s[1]), it->s[1] / 2, ncol, res);
                    for (int q = 0; q < 8; q++)
                        bf ? st_bf16(o_ + (i + q) * it->s[0], res[q]) : st_f16(o_ + (i + q) * it->s[0], res[q]);
                }
            }
            for (; i < n_; i++) {
                const char *ar_ = a_ + i * it->s[1];
                float acc = bf ? ld_bf16(ar_) : ld_f16(ar_);
                for (int64_t c_ = 1; c_ < ncol; c_++) {
                    const float x = bf ? ld_bf16(ar_ + c_ * sc) : ld_f16(ar_ + c_ * sc);
                    switch (op) {
                    case PLD_K_RSUM: acc = C_SUM(acc, x); break;
                    case PLD_K_RMAX: acc = C_FMAX(acc, x); break;
                    case PLD_K_RMIN: acc = C_FMIN(acc, x); break;
                    default: acc = C_MUL(acc, x); break;
                    }
                }
                bf ? st_bf16(o_ + i * it->s[0], acc) : st_f16(o_ + i * it->s[0], acc);
            }
            kit_next(it);
        }
        return 1;
    }
    const int sz = c == K_BOOL || c == K_U8 || c == K_I8 ? 1 : c == K_U16 || c == K_I16 ? 2 : 4;
    if (!int32_cls(c) || sc != sz)
        return 0;
    for (int64_t r = 0; r < it->rows; r++) {
        char *o_ = it->base[0] + it->off[0];
        const char *a_ = it->base[1] + it->off[1];
        for (int64_t i = 0; i < n_; i++)
            st_int(o_ + i * it->s[0], sz, row_int(op, c, a_ + i * it->s[1], ncol));
        kit_next(it);
    }
    return 1;
}

static void red_row_run(pld_redop_k_t op, kcls_t c, kit_t *it, int64_t ncol, int64_t sc)
{
    const int64_t n_ = it->n;
    if (red_row_fast(op, c, it, ncol, sc))
        return;
    if (c == K_F32 && sc == 4) {
        /* packed FP32 rows: max / min in lanes, sums and products eight rows at
         * a time; the rest (and unaligned rows) one by one */
        const int ext = (op == PLD_K_RMAX || op == PLD_K_RMIN) && ncol >= 16;
        for (int64_t r = 0; r < it->rows; r++) {
            char *o_ = it->base[0] + it->off[0];
            const char *a_ = it->base[1] + it->off[1];
            int64_t i = 0;
            if (ext && f32_ok(a_, it->s[1]))
                for (; i < n_; i++)
                    st_f32(o_ + i * it->s[0], row_ext_f32(op == PLD_K_RMAX, (const float *)(const void *)(a_ + i * it->s[1]), ncol));
            if (f32_ok(a_, it->s[1]))
                for (; i + 8 <= n_; i += 8) {
                    float res[8];
                    row8_f32(op, (const float *)(const void *)(a_ + i * it->s[1]), it->s[1] / 4, ncol, res);
                    for (int q = 0; q < 8; q++)
                        st_f32(o_ + (i + q) * it->s[0], res[q]);
                }
            for (; i < n_; i++) {
                const char *ar_ = a_ + i * it->s[1];
                float acc = ld_f32(ar_);
                for (int64_t c_ = 1; c_ < ncol; c_++) {
                    const float x = ld_f32(ar_ + c_ * sc);
                    switch (op) {
                    case PLD_K_RSUM: acc = C_SUM(acc, x); break;
                    case PLD_K_RMAX: acc = C_FMAX(acc, x); break;
                    case PLD_K_RMIN: acc = C_FMIN(acc, x); break;
                    default: acc = C_MUL(acc, x); break;
                    }
                }
                st_f32(o_ + i * it->s[0], acc);
            }
            kit_next(it);
        }
        return;
    }
    RED_DISPATCH(RED_ROW, C_SUM, C_MUL, C_SUM, C_MUL)
}

/* One FP16 / BF16 column step over n columns widened to FP32: RED_COL's
 * (a sum or product rounded to the dtype after every step, max / min in
 * FP32: exact on values of the dtype) */
static void col_step_16(pld_redop_k_t op, int bf, float *restrict acc, const float *restrict x, int64_t n)
{
    if (op == PLD_K_RMAX || op == PLD_K_RMIN)
        col_step_f32(op, acc, x, n);
    else if (op == PLD_K_RSUM && bf)
        for (int64_t j = 0; j < n; j++)
            acc[j] = C_SUMB16(acc[j], x[j]);
    else if (op == PLD_K_RSUM)
        for (int64_t j = 0; j < n; j++)
            acc[j] = C_SUM16(acc[j], x[j]);
    else if (bf)
        for (int64_t j = 0; j < n; j++)
            acc[j] = C_MULB16(acc[j], x[j]);
    else
        for (int64_t j = 0; j < n; j++)
            acc[j] = C_MUL16(acc[j], x[j]);
}

/* One integer column step over n columns of class c (at most 32 bits; the
 * loads memcpy): the low 32 bits of RED_COL's 64-bit steps (row_int) */
#define ICOL(LD, SZ, MT)                                                                                        \
    switch (op) {                                                                                               \
    case PLD_K_RSUM: for (int64_t j = 0; j < n; j++) acc[j] = acc[j] + (uint32_t)LD(x + j * (SZ)); break;       \
    case PLD_K_RMAX:                                                                                            \
        for (int64_t j = 0; j < n; j++) {                                                                       \
            const MT v = (MT)LD(x + j * (SZ)), a = (MT)acc[j];                                                  \
            acc[j] = (uint32_t)(v > a ? v : a);                                                                 \
        }                                                                                                       \
        break;                                                                                                  \
    case PLD_K_RMIN:                                                                                            \
        for (int64_t j = 0; j < n; j++) {                                                                       \
            const MT v = (MT)LD(x + j * (SZ)), a = (MT)acc[j];                                                  \
            acc[j] = (uint32_t)(v < a ? v : a);                                                                 \
        }                                                                                                       \
        break;                                                                                                  \
    default: for (int64_t j = 0; j < n; j++) acc[j] = acc[j] * (uint32_t)LD(x + j * (SZ)); break;               \
    }
static void col_step_int(pld_redop_k_t op, kcls_t c, uint32_t *restrict acc, const char *x, int64_t n)
{
    switch (c) {
    case K_BOOL:
    case K_U8: ICOL(ld_u8, 1, uint32_t) break;
    case K_I8: ICOL(ld_i8, 1, int32_t) break;
    case K_U16: ICOL(ld_u16, 2, uint32_t) break;
    case K_I16: ICOL(ld_i16, 2, int32_t) break;
    case K_U32: ICOL(ld_u32, 4, uint32_t) break;
    default: ICOL(ld_i32, 4, int32_t) break;
    }
}

/* the first row of n integer columns into acc (signed classes sign-extended) */
static void col_first_int(kcls_t c, uint32_t *restrict acc, const char *x, int64_t n)
{
    for (int64_t j = 0; j < n; j++)
        switch (c) {
        case K_BOOL:
        case K_U8: acc[j] = ld_u8(x + j); break;
        case K_I8: acc[j] = (uint32_t)ld_i8(x + j); break;
        case K_U16: acc[j] = ld_u16(x + j * 2); break;
        case K_I16: acc[j] = (uint32_t)ld_i16(x + j * 2); break;
        default: acc[j] = ld_u32(x + j * 4); break;
        }
}

/* Columns of FP16 / BF16 (packed, aligned) and of integers of at most 32
 * bits (packed): each row's step over KCH columns at a time, rows top to
 * bottom as RED_COL; 1 when done here */
static int red_col_fast(pld_redop_k_t op, kcls_t c, const char *abase, int64_t nrow, int64_t ncol, int64_t sr,
                        int64_t sc, char *obase, int64_t so)
{
    if ((c == K_F16 || c == K_BF16) && sc == 2 && u16_ok(abase, sr)) {
        const int bf = c == K_BF16;
        float acc[KCH], x[KCH];
        for (int64_t c0 = 0; c0 < ncol; c0 += KCH) {
            const int64_t cn = ncol - c0 < KCH ? ncol - c0 : KCH;
            const uint16_t *a0 = (const uint16_t *)(const void *)abase + c0;
            widen16(bf, a0, acc, cn);
            for (int64_t r = 1; r < nrow; r++) {
                widen16(bf, a0 + r * (sr / 2), x, cn);
                col_step_16(op, bf, acc, x, cn);
            }
            for (int64_t j = 0; j < cn; j++)
                bf ? st_bf16(obase + (c0 + j) * so, acc[j]) : st_f16(obase + (c0 + j) * so, acc[j]);
        }
        return 1;
    }
    const int sz = c == K_BOOL || c == K_U8 || c == K_I8 ? 1 : c == K_U16 || c == K_I16 ? 2 : 4;
    if (!int32_cls(c) || sc != sz)
        return 0;
    uint32_t acc[KCH];
    for (int64_t c0 = 0; c0 < ncol; c0 += KCH) {
        const int64_t cn = ncol - c0 < KCH ? ncol - c0 : KCH;
        const char *a0 = abase + c0 * sz;
        col_first_int(c, acc, a0, cn);
        for (int64_t r = 1; r < nrow; r++)
            col_step_int(op, c, acc, a0 + r * sr, cn);
        for (int64_t j = 0; j < cn; j++)
            st_int(obase + (c0 + j) * so, sz, acc[j]);
    }
    return 1;
}

static void red_col_run(pld_redop_k_t op, kcls_t c, const char *abase, int64_t nrow, int64_t ncol, int64_t sr,
                        int64_t sc, char *obase, int64_t so)
{
    if (red_col_fast(op, c, abase, nrow, ncol, sr, sc, obase, so))
        return;
    if (c == K_F32 && sc == 4 && f32_ok(abase, sr)) {
        /* packed FP32 columns: each row's step vectorised over KCH columns */
        float acc[KCH];
        for (int64_t c0 = 0; c0 < ncol; c0 += KCH) {
            const int64_t cn = ncol - c0 < KCH ? ncol - c0 : KCH;
            const float *a0 = (const float *)(const void *)abase + c0;
            memcpy(acc, a0, (size_t)cn * 4);
            for (int64_t r = 1; r < nrow; r++)
                col_step_f32(op, acc, a0 + r * (sr / 4), cn);
            for (int64_t j = 0; j < cn; j++)
                st_f32(obase + (c0 + j) * so, acc[j]);
        }
        return;
    }
    RED_DISPATCH(RED_COL, C_SUM16, C_MUL16, C_SUMB16, C_MULB16)
}

/* ---- column sum in PyPTO's binary tree ---------------------------------------- */

/* One float rounded to the storage dtype of class c (double carries every
 * class exactly; one double sum of two such values rounds innocuously). */
static double rnd_cls(kcls_t c, double v)
{
    switch (c) {
    case K_F16: return rnd_f16((float)v);
    case K_BF16: return rnd_bf16((float)v);
    case K_F32: return (float)v;
    default: return v;
    }
}

/* Node i of level lv of the tree over one column (level 0: the rows; level
 * lv + 1 pairs rows 2i and 2i + 1 of level lv, and node 0 also takes the last
 * row of an odd level). cnt[lv] is the node count of level lv. */
static double tree_node(kcls_t c, pld_dtype_t dt, const char *col, int64_t sr, const int64_t *cnt, int lv, int64_t i)
{
    if (lv == 0)
        return pld_elem_get_f(col + i * sr, dt, 0);
    double v = rnd_cls(c, tree_node(c, dt, col, sr, cnt, lv - 1, 2 * i) + tree_node(c, dt, col, sr, cnt, lv - 1, 2 * i + 1));
    if (i == 0 && (cnt[lv - 1] & 1))
        v = rnd_cls(c, v + tree_node(c, dt, col, sr, cnt, lv - 1, cnt[lv - 1] - 1));
    return v;
}

static void col_tree_sum(kcls_t c, const pld_view_t *out, const pld_view_t *a, int sz)
{
    int64_t cnt[66];
    int lv = 0;
    cnt[0] = a->shape[0];
    while (cnt[lv] > 1) {
        cnt[lv + 1] = cnt[lv] / 2;
        lv++;
    }
    for (int64_t j = 0; j < a->shape[1]; j++) {
        const char *col = (const char *)a->data + j * a->strides[1] * sz;
        double v = tree_node(c, a->dt, col, a->strides[0] * sz, cnt, lv, 0);
        pld_elem_set_f((char *)out->data + j * out->strides[1] * sz, out->dt, 0, v);
    }
}

/* ---- argmax / argmin ------------------------------------------------------------- */

/* Index of the first extremum of n elements `s` bytes apart (IEEE compares:
 * a NaN never replaces the running extremum). */
static int32_t arg_scan(pld_dtype_t dt, int is_float, int max, const char *p, int64_t n, int64_t s)
{
    int64_t best = 0;
    if (is_float) {
        double b = pld_elem_get_f(p, dt, 0);
        for (int64_t k = 1; k < n; k++) {
            double x = pld_elem_get_f(p + k * s, dt, 0);
            if (max ? x > b : x < b)
                b = x, best = k;
        }
    } else {
        int64_t b = pld_elem_get_i(p, dt, 0);
        for (int64_t k = 1; k < n; k++) {
            int64_t x = pld_elem_get_i(p + k * s, dt, 0);
            if (max ? x > b : x < b)
                b = x, best = k;
        }
    }
    return (int32_t)best;
}

static void arg_run(int max, int row, const pld_view_t *out, const pld_view_t *a)
{
    const int sz = pld_dtype_storage_bytes(a->dt);
    const int fl = pld_dtype_is_float(a->dt);
    const char *base = a->data;
    if (row) {
        for (int64_t r = 0; r < a->shape[0]; r++) {
            int32_t k = arg_scan(a->dt, fl, max, base + r * a->strides[0] * sz, a->shape[1], a->strides[1] * sz);
            pld_elem_set_i((char *)out->data + r * out->strides[0] * 4, PLD_DT_INT32, 0, k);
        }
    } else {
        for (int64_t j = 0; j < a->shape[1]; j++) {
            int32_t k = arg_scan(a->dt, fl, max, base + j * a->strides[1] * sz, a->shape[0], a->strides[0] * sz);
            pld_elem_set_i((char *)out->data + j * out->strides[1] * 4, PLD_DT_INT32, 0, k);
        }
    }
}

/* Slice b of the batch dims of v (all but the last two; a rank-1 view is one
 * [1, N] row) as a 2-D view. */
static void slice2(const pld_view_t *v, int64_t b, pld_view_t *s)
{
    const int r = v->rank;
    *s = *v;
    s->rank = 2;
    if (r < 2) {
        s->shape[0] = 1, s->shape[1] = v->shape[0];
        s->strides[0] = 0, s->strides[1] = v->strides[0];
        return;
    }
    int64_t off = 0;
    for (int d = r - 3; d >= 0; d--) {
        off += b % v->shape[d] * v->strides[d];
        b /= v->shape[d];
    }
    s->data = (char *)v->data + off * pld_dtype_storage_bytes(v->dt);
    s->shape[0] = v->shape[r - 2], s->shape[1] = v->shape[r - 1];
    s->strides[0] = v->strides[r - 2], s->strides[1] = v->strides[r - 1];
}

pld_status_t pld_k_reduce(pld_redop_k_t op, int flags, const pld_view_t *out, const pld_view_t *a, char *err,
                          size_t errn)
{
    static const char *const names[] = {"sum", "max", "min", "prod", "argmax", "argmin"};
    pld_status_t st;
    const int row = flags & PLD_K_RED_ROW;
    if ((unsigned)op > PLD_K_RARGMIN)
        return pld_kern_fail(err, errn, "unknown reduction %d", (int)op);
    if ((st = pld_kern_check_view(out, "out", err, errn)) || (st = pld_kern_check_view(a, "a", err, errn)))
        return st;
    const char *what = names[op];
    const int arg = op == PLD_K_RARGMAX || op == PLD_K_RARGMIN;
    const kcls_t c = kcls(a->dt);
    if (c == K_NONE)
        return pld_kern_fail(err, errn, "%s: unsupported dtype %s", what, pld_dtype_name(a->dt));
    if (arg ? out->dt != PLD_DT_INT32 : a->dt != out->dt)
        return pld_kern_fail(err, errn, "%s: dtype mismatch (out %s, a %s)", what, pld_dtype_name(out->dt), pld_dtype_name(a->dt));
    const int sz = pld_dtype_storage_bytes(out->dt);
    /* row: a [..., C] -> out [..., 1]; column: a [..., R, C] -> out [..., 1, C] */
    const int ax = row ? a->rank - 1 : a->rank - 2;
    int ok = ax >= 0 && out->rank == a->rank && out->shape[ax] == 1;
    for (int d = 0; ok && d < a->rank; d++)
        ok = d == ax || out->shape[d] == a->shape[d];
    if (!ok) {
        char b1[128], b2[128];
        return pld_kern_fail(err, errn, "%s %s: out %s does not match a %s reduced over axis %d", row ? "row" : "column",
                             what, pld_kern_shape_str(b1, sizeof b1, out->rank, out->shape),
                             pld_kern_shape_str(b2, sizeof b2, a->rank, a->shape), ax);
    }
    if (pld_view_numel(out) == 0)
        return PLD_OK;
    if (a->shape[ax] == 0) {
        if (op == PLD_K_RSUM)
            return pld_k_fill_i(out, 0);
        if (op == PLD_K_RPROD)
            return pld_k_fill_i(out, 1);
        return pld_kern_fail(err, errn, "%s over an empty axis", what);
    }
    if (row && !arg) {
        int64_t str[2][PLD_MAX_RANK];
        memcpy(str[0], out->strides, sizeof str[0]);
        memcpy(str[1], a->strides, sizeof str[1]);
        const int esz[2] = {sz, sz};
        char *base[2] = {out->data, a->data};
        kit_t it;
        pld_kern_kit_init(&it, 2, a->rank - 1, a->shape, base, (const int64_t(*)[PLD_MAX_RANK])str, esz);
        red_row_run(op, c, &it, a->shape[ax], a->strides[ax] * sz);
        return PLD_OK;
    }
    /* argmax/argmin and column reductions: one [R, C] slice per batch index */
    int64_t nb = 1;
    for (int d = 0; d < a->rank - 2; d++)
        nb *= a->shape[d];
    for (int64_t b = 0; b < nb; b++) {
        pld_view_t o2, a2;
        slice2(out, b, &o2);
        slice2(a, b, &a2);
        if (arg)
            arg_run(op == PLD_K_RARGMAX, row, &o2, &a2);
        else if ((flags & PLD_K_RED_TREE) && op == PLD_K_RSUM && pld_dtype_is_float(a->dt))
            col_tree_sum(c, &o2, &a2, sz);
        else
            red_col_run(op, c, a2.data, a2.shape[0], a2.shape[1], a2.strides[0] * sz, a2.strides[1] * sz, o2.data,
                        o2.strides[1] * sz);
    }
    return PLD_OK;
}

/* ---- 6e. matmul ------------------------------------------------------------------ */

/* Integer accumulator rows: the low 32 bits of any integer class. */
static void acc_load_i(kcls_t c, const char *p, int64_t s, int n, uint32_t *acc)
{
    switch (c) {
    case K_BOOL:
    case K_U8: for (int j = 0; j < n; j++) acc[j] = ld_u8(p + j * s); break;
    case K_I8: for (int j = 0; j < n; j++) acc[j] = (uint32_t)ld_i8(p + j * s); break;
    case K_U16: for (int j = 0; j < n; j++) acc[j] = ld_u16(p + j * s); break;
    case K_I16: for (int j = 0; j < n; j++) acc[j] = (uint32_t)ld_i16(p + j * s); break;
    case K_U32:
    case K_I32: for (int j = 0; j < n; j++) acc[j] = ld_u32(p + j * s); break;
    default: for (int j = 0; j < n; j++) acc[j] = (uint32_t)ld_u64(p + j * s); break;
    }
}

static void acc_store_i(kcls_t c, char *p, int64_t s, int n, const uint32_t *acc)
{
    switch (c) {
    case K_BOOL:
    case K_U8:
    case K_I8: for (int j = 0; j < n; j++) st_w8(p + j * s, acc[j]); break;
    case K_U16:
    case K_I16: for (int j = 0; j < n; j++) st_w16(p + j * s, acc[j]); break;
    case K_U32:
    case K_I32: for (int j = 0; j < n; j++) st_w32(p + j * s, acc[j]); break;
    default: /* 64-bit: the INT32 result sign-extends */
        for (int j = 0; j < n; j++)
            st_w64(p + j * s, acc[j] & 0x80000000u ? (uint64_t)acc[j] | 0xffffffff00000000u : acc[j]);
        break;
    }
}

/* The i-k-j loop nest over a chunk of cn output columns: acc[j] += a[i,k] * b[k,j]. */
#define MM_LOOP(AT, LDA, CVT)                                                                                   \
    for (int64_t k_ = 0; k_ < kk; k_++) {                                                                       \
        const AT av_ = CVT(LDA(arow + k_ * sak));                                                               \
        const char *br_ = bcol + k_ * sbk;                                                                      \
        for (int j_ = 0; j_ < cn; j_++)                                                                         \
            acc[j_] += av_ * CVT(LDA(br_ + j_ * sbn));                                                          \
    }

#define CVT_F(v) ((float)(v))
#define CVT_U32(v) ((uint32_t)(v))

static void matmul2(const pld_view_t *out, const pld_view_t *a, const pld_view_t *b, int accumulate, kcls_t ac,
                    kcls_t oc);

pld_status_t pld_k_matmul(const pld_view_t *out, const pld_view_t *a, const pld_view_t *b, int accumulate,
                          char *err, size_t errn)
{
    pld_status_t st;
    if ((st = pld_kern_check_view(out, "out", err, errn)) || (st = pld_kern_check_view(a, "a", err, errn)) ||
        (st = pld_kern_check_view(b, "b", err, errn)))
        return st;
    const kcls_t ac = kcls(a->dt), oc = kcls(out->dt);
    if (ac == K_NONE || oc == K_NONE)
        return pld_kern_fail(err, errn, "matmul: unsupported dtype %s", pld_dtype_name(ac == K_NONE ? a->dt : out->dt));
    if (b->dt != a->dt)
        return pld_kern_fail(err, errn, "matmul: dtype mismatch (a %s, b %s)", pld_dtype_name(a->dt), pld_dtype_name(b->dt));
    if (cls_is_float(ac) != cls_is_float(oc))
        return pld_kern_fail(err, errn, "matmul: out dtype %s does not fit inputs of dtype %s (accumulator %s)",
                    pld_dtype_name(out->dt), pld_dtype_name(a->dt), cls_is_float(ac) ? "FP32" : "INT32");
    char b1[128], b2[128], b3[128];
    const int r = out->rank;
    int ok = r >= 2 && a->rank == r && b->rank == r && a->shape[r - 1] == b->shape[r - 2] &&
             out->shape[r - 2] == a->shape[r - 2] && out->shape[r - 1] == b->shape[r - 1];
    for (int d = 0; ok && d < r - 2; d++)
        ok = a->shape[d] == out->shape[d] && b->shape[d] == out->shape[d];
    if (!ok)
        return pld_kern_fail(err, errn, "matmul: shapes do not fit: a %s @ b %s -> out %s",
                    pld_kern_shape_str(b1, sizeof b1, a->rank, a->shape), pld_kern_shape_str(b2, sizeof b2, b->rank, b->shape),
                    pld_kern_shape_str(b3, sizeof b3, out->rank, out->shape));
    if (out->data == a->data || out->data == b->data)
        return pld_kern_fail(err, errn, "matmul: out must not share storage with a or b");
    int64_t nb = 1;
    for (int d = 0; d < r - 2; d++)
        nb *= out->shape[d];
    for (int64_t i = 0; i < nb; i++) {
        pld_view_t so, sa, sb;
        slice2(out, i, &so);
        slice2(a, i, &sa);
        slice2(b, i, &sb);
        matmul2(&so, &sa, &sb, accumulate, ac, oc);
    }
    return PLD_OK;
}

/* One [M, K] @ [K, N] product of pld_k_matmul (ac, oc: the input and output classes). */
static void matmul2(const pld_view_t *out, const pld_view_t *a, const pld_view_t *b, int accumulate, kcls_t ac,
                    kcls_t oc)
{
    kmm_geom_t gv, *g = &gv;
    kmm_geom(g, out, a, b);
    const int64_t m = g->m, kk = g->kk, nn = g->nn, sam = g->sam, sak = g->sak, sbk = g->sbk, sbn = g->sbn;
    const int64_t som = g->som, son = g->son;
    if (ac != K_F64 && cls_is_float(ac) && pld_kern_mm_f32(out, a, b, g, accumulate, ac, oc) == 0)
        return;
    for (int64_t i = 0; i < m; i++) {
        const char *arow = (const char *)a->data + i * sam;
        char *orow = (char *)out->data + i * som;
        for (int64_t j0 = 0; j0 < nn; j0 += KCH) {
            const int cn = (int)(nn - j0 < KCH ? nn - j0 : KCH);
            const char *bcol = (const char *)b->data + j0 * sbn;
            char *ocol = orow + j0 * son;
            if (ac == K_F64) {
                double acc[KCH];
                for (int j = 0; j < cn; j++)
                    acc[j] = accumulate ? pld_elem_get_f(ocol + j * son, out->dt, 0) : 0.0;
                MM_LOOP(double, ld_f64, (double))
                for (int j = 0; j < cn; j++)
                    pld_kern_store_float_of_f64(ocol + j * son, oc, acc[j], RM_NE);
            } else if (cls_is_float(ac)) {
                float acc[KCH];
                if (accumulate)
                    pld_kern_row_load_f(oc, ocol, son, cn, acc);
                else
                    memset(acc, 0, sizeof acc);
                switch (ac) {
                case K_F16: MM_LOOP(float, ld_f16, CVT_F) break;
                case K_BF16: MM_LOOP(float, ld_bf16, CVT_F) break;
                default: MM_LOOP(float, ld_f32, CVT_F) break;
                }
                pld_kern_row_store_f(oc, ocol, son, cn, acc);
            } else {
                uint32_t acc[KCH];
                if (accumulate)
                    acc_load_i(oc, ocol, son, cn, acc);
                else
                    memset(acc, 0, sizeof acc);
                switch (ac) {
                case K_BOOL:
                case K_U8: MM_LOOP(uint32_t, ld_u8, CVT_U32) break;
                case K_I8: MM_LOOP(uint32_t, ld_i8, CVT_U32) break;
                case K_U16: MM_LOOP(uint32_t, ld_u16, CVT_U32) break;
                case K_I16: MM_LOOP(uint32_t, ld_i16, CVT_U32) break;
                case K_U32: MM_LOOP(uint32_t, ld_u32, CVT_U32) break;
                case K_I32: MM_LOOP(uint32_t, ld_i32, CVT_U32) break;
                case K_U64: MM_LOOP(uint32_t, ld_u64, CVT_U32) break;
                default: MM_LOOP(uint32_t, ld_i64, CVT_U32) break;
                }
                acc_store_i(oc, ocol, son, cn, acc);
            }
        }
    }
}

/* ---- 6f. MX block-scaled matmul ---------------------------------------------------- */

pld_status_t pld_k_matmul_mx(const pld_view_t *out, const pld_view_t *a, const pld_view_t *sa, const pld_view_t *b,
                             const pld_view_t *sb, int accumulate, char *err, size_t errn)
{
    const pld_view_t *v[5] = {out, a, sa, b, sb};
    static const char *const what[5] = {"out", "a", "a_scale", "b", "b_scale"};
    static const pld_dtype_t want[5] = {PLD_DT_FP32, PLD_DT_FP8E4M3FN, PLD_DT_FP8E8M0, PLD_DT_FP8E4M3FN, PLD_DT_FP8E8M0};
    pld_status_t st;
    for (int i = 0; i < 5; i++) {
        if ((st = pld_kern_check_view(v[i], what[i], err, errn)))
            return st;
        if (v[i]->dt != want[i] || v[i]->rank != 2)
            return pld_kern_fail(err, errn, "matmul_mx: %s must be a 2-D %s view, got a rank-%d %s one", what[i],
                                 pld_dtype_name(want[i]), v[i]->rank, pld_dtype_name(v[i]->dt));
    }
    const int64_t m = out->shape[0], nn = out->shape[1], kk = a->shape[1], g = (kk + 31) / 32;
    if (a->shape[0] != m || b->shape[0] != kk || b->shape[1] != nn || sa->shape[0] < m || sa->shape[1] < g ||
        sb->shape[0] < g || sb->shape[1] < nn)
        return pld_kern_fail(err, errn, "matmul_mx: shapes do not fit (out [%lld, %lld], K %lld)", (long long)m,
                             (long long)nn, (long long)kk);
    /* the 256 values of each 8-bit code, decoded once per call */
    float val[256];
    double scale[256];
    for (int c = 0; c < 256; c++) {
        val[c] = pld_fp8e4m3fn_to_f32((uint8_t)c);
        scale[c] = pld_fp8e8m0_to_f32((uint8_t)c);
    }
    const uint8_t *pa = a->data, *psa = sa->data, *pb = b->data, *psb = sb->data;
    float *po = out->data;
    for (int64_t i = 0; i < m; i++) {
        float *orow = po + i * out->strides[0];
        for (int64_t j0 = 0; j0 < nn; j0 += KCH) {
            const int cn = (int)(nn - j0 < KCH ? nn - j0 : KCH);
            float acc[KCH];
            for (int j = 0; j < cn; j++)
                acc[j] = accumulate ? orow[(j0 + j) * out->strides[1]] : 0.0f;
            for (int64_t k = 0; k < kk; k++) {
                /* a[i,k] * 2^(ea-127) and b[k,j] * 2^(eb-127) are exact in double, so is their product
                 * (8 significant bits, exponent >= -272); one rounding to FP32, then the FP32 sum */
                const double av = val[pa[i * a->strides[0] + k * a->strides[1]]] *
                                  scale[psa[i * sa->strides[0] + (k / 32) * sa->strides[1]]];
                const uint8_t *brow = pb + k * b->strides[0] + j0 * b->strides[1];
                const uint8_t *srow = psb + (k / 32) * sb->strides[0] + j0 * sb->strides[1];
                for (int j = 0; j < cn; j++)
                    acc[j] += (float)(av * (val[brow[j * b->strides[1]]] * scale[srow[j * sb->strides[1]]]));
            }
            for (int j = 0; j < cn; j++)
                orow[(j0 + j) * out->strides[1]] = acc[j];
        }
    }
    return PLD_OK;
}
