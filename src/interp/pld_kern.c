/* pld_kern.c - numeric kernels of the interpreter (see pld_kern.h).
 *
 * Layout of this file:
 *   1. dtype classes and names
 *   2. IEEE conversions: FP16 / BF16 fast paths and one generic rounding core
 *      (any binary format, five rounding modes) written from IEEE 754-2019 §4.3
 *   3. unaligned-safe element loads and stores (memcpy)
 *   4. views, element access
 *   5. the N-D iterator: dims of size 1 dropped, mergeable dims collapsed, then
 *      an odometer over all but the innermost dim and one strided inner loop
 *   6. kernels: binary, scalar, unary, reduce, cast, matmul, copy, fill
 *
 * Every kernel picks its loop (op x dtype) with a switch *outside* the element
 * loops: the RUN* macros instantiate one loop per op and dtype. Each loop has
 * a packed fast path (compile-time element stride, vectorisable) and a strided
 * path; FP32 binary ops on packed, aligned operands use plain float arrays.
 *
 * Semantic choices not spelled out in pld_kern.h:
 *  - MAX/MIN on floats are IEEE 754-2019 maximum/minimum, not fmaxf/fminf: a
 *    NaN operand gives NaN (NaN propagates, like torch.maximum), and -0 < +0.
 *    RELU is maximum(x, +0): NaN stays NaN, -0 gives +0. Reductions RMAX/RMIN
 *    use the same rule.
 *  - Binary operands broadcast NumPy-style against out: right-aligned, a
 *    missing or size-1 dim repeats (the stride-0 views of the header work too).
 *  - Reductions combine left to right starting from the first element, in
 *    float (FP16/BF16/FP32), double (FP64) or 64-bit (integers); an empty
 *    reduced axis gives 0 for RSUM and an error for RMAX/RMIN.
 *  - cast to BOOL follows C's conversion to _Bool: 1 when the value compares
 *    unequal to 0 (so NaN -> 1, 0.5 -> 1), else 0; the rounding mode is not
 *    used. Every other integer target follows the header (wrap / saturate).
 *  - cast mode ODD: round to odd = truncate toward zero, then set the lowest
 *    bit of the result's significand (float target) or of the integer
 *    magnitude (integer target) when the truncation was inexact. An out of
 *    range value gives the largest finite value (round-to-odd never creates
 *    an infinity from a finite value). In-place casts (out->data == a->data)
 *    are refused when the element size changes.
 *  - NaN conversions keep the sign and the top payload bits and set the quiet
 *    bit (as hardware converters do); .npy I/O (pld_npy.c) does the same.
 *  - matmul accepts any float out dtype for float inputs (the FP32 sum is
 *    rounded once into it) and any integer out dtype for integer inputs (the
 *    INT32 wrapping sum is truncated into narrower outs and sign-extended into
 *    64-bit ones); FP64 inputs accumulate in double. a and b must share a
 *    dtype, and out must not share storage with a or b.
 *  - pld_elem_get_i on a float truncates toward zero and saturates (NaN -> 0). */
#include "pld_kern.h"

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

/* ---- 1. dtype classes ------------------------------------------------------ */

typedef enum kcls {
    K_NONE = 0,
    K_BOOL, K_I8, K_I16, K_I32, K_I64, K_U8, K_U16, K_U32, K_U64,
    K_F16, K_BF16, K_F32, K_F64
} kcls_t;

/* ORDER PLD_DTYPES (pld_types.h): names and widths, kept here so the kernels
 * link without the parser library. */
static const struct {
    const char *name;
    int bits;
    kcls_t cls;
} dtinfo[PLD_DT__COUNT] = {
    [PLD_DT_NONE] = {"NONE", 0, K_NONE},          [PLD_DT_BOOL] = {"BOOL", 8, K_BOOL},
    [PLD_DT_INT4] = {"INT4", 4, K_NONE},          [PLD_DT_INT8] = {"INT8", 8, K_I8},
    [PLD_DT_INT16] = {"INT16", 16, K_I16},        [PLD_DT_INT32] = {"INT32", 32, K_I32},
    [PLD_DT_INT64] = {"INT64", 64, K_I64},        [PLD_DT_UINT4] = {"UINT4", 4, K_NONE},
    [PLD_DT_UINT8] = {"UINT8", 8, K_U8},          [PLD_DT_UINT16] = {"UINT16", 16, K_U16},
    [PLD_DT_UINT32] = {"UINT32", 32, K_U32},      [PLD_DT_UINT64] = {"UINT64", 64, K_U64},
    [PLD_DT_FP4] = {"FP4", 4, K_NONE},            [PLD_DT_FP8E4M3FN] = {"FP8E4M3FN", 8, K_NONE},
    [PLD_DT_FP8E5M2] = {"FP8E5M2", 8, K_NONE},    [PLD_DT_FP8E8M0] = {"FP8E8M0", 8, K_NONE},
    [PLD_DT_FP16] = {"FP16", 16, K_F16},          [PLD_DT_FP32] = {"FP32", 32, K_F32},
    [PLD_DT_BF16] = {"BF16", 16, K_BF16},         [PLD_DT_HF4] = {"HF4", 4, K_NONE},
    [PLD_DT_HF8] = {"HF8", 8, K_NONE},            [PLD_DT_INDEX] = {"INDEX", 64, K_I64},
    [PLD_DT_TASK_ID] = {"TASK_ID", 64, K_NONE},   [PLD_DT_FP64] = {"FP64", 64, K_F64},
};

static kcls_t kcls(pld_dtype_t dt)
{
    return (unsigned)dt < PLD_DT__COUNT ? dtinfo[dt].cls : K_NONE;
}

static const char *dt_name(pld_dtype_t dt)
{
    return (unsigned)dt < PLD_DT__COUNT ? dtinfo[dt].name : "?";
}

/* Whole bytes per element, 0 for sub-byte or unknown dtypes. */
static int dt_bytes(pld_dtype_t dt)
{
    if ((unsigned)dt >= PLD_DT__COUNT || dtinfo[dt].bits % 8 != 0)
        return 0;
    return dtinfo[dt].bits / 8;
}

static int cls_is_float(kcls_t c)
{
    return c >= K_F16;
}

static int cls_is_signed(kcls_t c)
{
    return c == K_I8 || c == K_I16 || c == K_I32 || c == K_I64;
}

/* ---- 2. IEEE conversions ------------------------------------------------------- */

enum { RM_NE, RM_ZERO, RM_DOWN, RM_UP, RM_ODD };

/* Rounds (-1)^neg * m * 2^e2 to the binary format with `ebits` exponent bits
 * and `mbits` stored fraction bits, under rounding mode rm, and returns its bit
 * pattern. The value is split into a result significand q (in units of the
 * result's quantum 2^qe) and a remainder, which is compared with half a
 * quantum; subnormal results use the fixed quantum of the smallest normal
 * binade. Overflow follows IEEE 754 §7.4 for each mode. */
static uint64_t round_bits(int neg, uint64_t m, int e2, int ebits, int mbits, int rm)
{
    const uint64_t sign = (uint64_t)(neg != 0) << (ebits + mbits);
    const uint64_t inf = (((uint64_t)1 << ebits) - 1) << mbits;
    if (m == 0)
        return sign;
    const int bias = (1 << (ebits - 1)) - 1;
    const int emin = 1 - bias;
    int p = 63;
    while (!(m >> p))
        p--;
    const int e = p + e2;                          /* value in [2^e, 2^(e+1)) */
    const int qe = (e < emin ? emin : e) - mbits;  /* exponent of one quantum */
    const int shift = qe - e2;                     /* bits of m below the quantum */
    uint64_t q;
    int cmp;      /* remainder vs half a quantum: -1 below, 0 tie, 1 above */
    int inexact;
    if (shift <= 0) {                              /* exact; -shift <= mbits */
        q = m << -shift;
        cmp = -1;
        inexact = 0;
    } else if (shift >= 64) {
        const uint64_t half = (uint64_t)1 << 63;   /* only meaningful for shift == 64 */
        q = 0;
        inexact = 1;
        cmp = shift > 64 ? -1 : m > half ? 1 : m == half ? 0 : -1;
    } else {
        const uint64_t rem = m & (((uint64_t)1 << shift) - 1), half = (uint64_t)1 << (shift - 1);
        q = m >> shift;
        inexact = rem != 0;
        cmp = rem > half ? 1 : rem == half ? 0 : -1;
    }
    switch (rm) {
    case RM_NE: q += (cmp > 0 || (cmp == 0 && (q & 1))); break;
    case RM_ZERO: break;
    case RM_DOWN: q += (inexact && neg); break;
    case RM_UP: q += (inexact && !neg); break;
    default: q |= (uint64_t)inexact; break; /* RM_ODD */
    }
    /* Normal: biased exponent field (e + bias) and q in [2^mbits, 2^(mbits+1)];
     * adding q onto (e + bias - 1) << mbits lets a rounding carry bump the
     * exponent. Subnormal: the field is 0 and q < 2^mbits (q == 2^mbits is the
     * smallest normal, which the same sum encodes). */
    uint64_t bits = e < emin ? q : ((uint64_t)(e + bias - 1) << mbits) + q;
    if (bits >= inf) {
        int to_inf;
        switch (rm) {
        case RM_NE: to_inf = 1; break;
        case RM_DOWN: to_inf = neg; break;
        case RM_UP: to_inf = !neg; break;
        default: to_inf = 0; break; /* RM_ZERO, RM_ODD: largest finite */
        }
        bits = to_inf ? inf : inf - 1;
    }
    return sign | bits;
}

/* Rounds a double to the format (ebits, mbits); NaN keeps sign and the top
 * payload bits and becomes quiet. */
static uint64_t f64_round_bits(double d, int ebits, int mbits, int rm)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    const int neg = (int)(u >> 63);
    const int ef = (int)((u >> 52) & 0x7ff);
    const uint64_t fr = u & (((uint64_t)1 << 52) - 1);
    if (ef == 0x7ff) {
        const uint64_t sign = (uint64_t)neg << (ebits + mbits);
        const uint64_t inf = (((uint64_t)1 << ebits) - 1) << mbits;
        if (fr == 0)
            return sign | inf;
        return sign | inf | ((uint64_t)1 << (mbits - 1)) | (fr >> (52 - mbits));
    }
    if (ef == 0)
        return round_bits(neg, fr, -1074, ebits, mbits, rm);
    return round_bits(neg, fr | ((uint64_t)1 << 52), ef - 1075, ebits, mbits, rm);
}

static float bits_to_f32(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

/* FP16 = 1 sign, 5 exponent (bias 15), 10 fraction bits. */
KINLINE uint16_t f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) /* NaN: quiet, top 10 payload bits */
        return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    if (ax >= 0x477ff000u) /* >= 65520 = 65504 + half an ulp (tie goes to even = inf), and inf */
        return (uint16_t)(sign | 0x7c00u);
    if (ax >= 0x38800000u) { /* >= 2^-14: normal; rebias 127 -> 15, RNE on the 13 dropped bits */
        const uint32_t r = ax - 0x38000000u + 0x0fffu + ((ax >> 13) & 1u);
        return (uint16_t)(sign | (r >> 13));
    }
    if (ax <= 0x33000000u) /* <= 2^-25 (half the smallest subnormal): ties to the even zero */
        return (uint16_t)sign;
    /* subnormal result: value = mant * 2^(e-150); in units of 2^-24 that is mant >> (126 - e) */
    const uint32_t e = ax >> 23; /* 102..112 */
    const uint32_t mant = (ax & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - e; /* 14..24 */
    uint32_t q = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u)))
        q++;
    return (uint16_t)(sign | q);
}

KINLINE float f16_to_f32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t ef = (h >> 10) & 0x1fu, fr = h & 0x3ffu;
    if (ef == 0x1f)
        return bits_to_f32(sign | 0x7f800000u | (fr << 13));
    if (ef != 0)
        return bits_to_f32(sign | ((ef + 112u) << 23) | (fr << 13));
    /* zero or subnormal: fr * 2^-24, exact in float */
    const float v = (float)fr * 0x1p-24f;
    return sign ? -v : v;
}

/* BF16 = the top 16 bits of an FP32. */
KINLINE uint16_t f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u); /* RNE; a carry out of the fraction bumps the exponent (-> inf) */
    return (uint16_t)(x >> 16);
}

KINLINE float bf16_to_f32(uint16_t b)
{
    return bits_to_f32((uint32_t)b << 16);
}

uint16_t pld_f32_to_f16(float f)
{
    return f32_to_f16(f);
}

float pld_f16_to_f32(uint16_t h)
{
    return f16_to_f32(h);
}

uint16_t pld_f32_to_bf16(float f)
{
    return f32_to_bf16(f);
}

float pld_bf16_to_f32(uint16_t b)
{
    return bf16_to_f32(b);
}

/* ---- 3. loads and stores (memcpy: any alignment) -------------------------- */

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
    return f16_to_f32(ld_u16(p));
}
KINLINE void st_f16(char *p, float v)
{
    uint16_t h = f32_to_f16(v);
    memcpy(p, &h, 2);
}
KINLINE float ld_bf16(const char *p)
{
    return bf16_to_f32(ld_u16(p));
}
KINLINE void st_bf16(char *p, float v)
{
    uint16_t h = f32_to_bf16(v);
    memcpy(p, &h, 2);
}

/* ---- 4. views and element access ------------------------------------------- */

void pld_view_packed(pld_view_t *v, void *data, pld_dtype_t dt, int rank, const int64_t *shape)
{
    memset(v, 0, sizeof *v);
    if (rank < 0)
        rank = 0;
    if (rank > PLD_MAX_RANK)
        rank = PLD_MAX_RANK;
    v->data = data;
    v->dt = dt;
    v->rank = rank;
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        v->shape[d] = shape[d];
        v->strides[d] = s;
        s *= shape[d];
    }
}

int64_t pld_view_numel(const pld_view_t *v)
{
    int64_t n = 1;
    for (int d = 0; d < v->rank && d < PLD_MAX_RANK; d++)
        n *= v->shape[d];
    return n;
}

int pld_view_is_packed(const pld_view_t *v)
{
    int64_t s = 1;
    if (pld_view_numel(v) == 0)
        return 1;
    for (int d = v->rank - 1; d >= 0; d--) {
        if (v->shape[d] != 1 && v->strides[d] != s) /* a size-1 dim's stride never matters */
            return 0;
        s *= v->shape[d];
    }
    return 1;
}

/* double -> int64: truncate toward zero, saturate, NaN -> 0. */
static int64_t f64_to_i64_sat(double v)
{
    if (v != v)
        return 0;
    if (v >= 0x1p63)
        return INT64_MAX;
    if (v < -0x1p63)
        return INT64_MIN;
    return (int64_t)v;
}

/* Integer (sign, magnitude) -> float bits, RNE. */
static uint64_t int_round_bits(int neg, uint64_t mag, int ebits, int mbits)
{
    return round_bits(neg, mag, 0, ebits, mbits, RM_NE);
}

/* Float value of an integer given as 64 raw bits and a signedness. */
static void int_split(uint64_t v, int is_signed, int *neg, uint64_t *mag)
{
    *neg = is_signed && (v >> 63);
    *mag = *neg ? (uint64_t)0 - v : v;
}

double pld_elem_get_f(const void *data, pld_dtype_t dt, int64_t i)
{
    const char *p = (const char *)data + i * dt_bytes(dt);
    switch (kcls(dt)) {
    case K_BOOL:
    case K_U8: return ld_u8(p);
    case K_U16: return ld_u16(p);
    case K_U32: return ld_u32(p);
    case K_U64: return (double)ld_u64(p);
    case K_I8: return ld_i8(p);
    case K_I16: return ld_i16(p);
    case K_I32: return ld_i32(p);
    case K_I64: return (double)ld_i64(p);
    case K_F16: return ld_f16(p);
    case K_BF16: return ld_bf16(p);
    case K_F32: return ld_f32(p);
    case K_F64: return ld_f64(p);
    default: return 0.0;
    }
}

int64_t pld_elem_get_i(const void *data, pld_dtype_t dt, int64_t i)
{
    const char *p = (const char *)data + i * dt_bytes(dt);
    uint64_t u;
    switch (kcls(dt)) {
    case K_BOOL:
    case K_U8: return ld_u8(p);
    case K_U16: return ld_u16(p);
    case K_U32: return ld_u32(p);
    case K_U64:
        u = ld_u64(p);
        return u > (uint64_t)INT64_MAX ? -(int64_t)(~u) - 1 : (int64_t)u; /* two's complement reinterpretation */
    case K_I8: return ld_i8(p);
    case K_I16: return ld_i16(p);
    case K_I32: return ld_i32(p);
    case K_I64: return ld_i64(p);
    case K_F16:
    case K_BF16:
    case K_F32:
    case K_F64: return f64_to_i64_sat(pld_elem_get_f(data, dt, i));
    default: return 0;
    }
}

/* Stores the integer bits `u` (already two's complement) into element p. */
static void store_int_bits(char *p, kcls_t c, uint64_t u)
{
    switch (c) {
    case K_BOOL:
    case K_U8:
    case K_I8: st_w8(p, (uint32_t)u); break;
    case K_U16:
    case K_I16: st_w16(p, (uint32_t)u); break;
    case K_U32:
    case K_I32: st_w32(p, (uint32_t)u); break;
    case K_U64:
    case K_I64: st_w64(p, u); break;
    default: break;
    }
}

/* Stores the float value of (-1)^neg * mag into a float element p (RNE). */
static void store_float_of_int(char *p, kcls_t c, int neg, uint64_t mag)
{
    switch (c) {
    case K_F16: {
        uint16_t h = (uint16_t)int_round_bits(neg, mag, 5, 10);
        memcpy(p, &h, 2);
        break;
    }
    case K_BF16: {
        uint16_t h = (uint16_t)int_round_bits(neg, mag, 8, 7);
        memcpy(p, &h, 2);
        break;
    }
    case K_F32: st_w32(p, (uint32_t)int_round_bits(neg, mag, 8, 23)); break;
    case K_F64: st_w64(p, int_round_bits(neg, mag, 11, 52)); break;
    default: break;
    }
}

/* Stores double v into a float element p with rounding mode rm. */
static void store_float_of_f64(char *p, kcls_t c, double v, int rm)
{
    switch (c) {
    case K_F16: {
        uint16_t h = (uint16_t)f64_round_bits(v, 5, 10, rm);
        memcpy(p, &h, 2);
        break;
    }
    case K_BF16: {
        uint16_t h = (uint16_t)f64_round_bits(v, 8, 7, rm);
        memcpy(p, &h, 2);
        break;
    }
    case K_F32: st_w32(p, (uint32_t)f64_round_bits(v, 8, 23, rm)); break;
    case K_F64: st_f64(p, v); break;
    default: break;
    }
}

void pld_elem_set_f(void *data, pld_dtype_t dt, int64_t i, double v)
{
    const kcls_t c = kcls(dt);
    char *p = (char *)data + i * dt_bytes(dt);
    if (c == K_NONE)
        return;
    if (cls_is_float(c))
        store_float_of_f64(p, c, v, RM_NE);
    else
        store_int_bits(p, c, (uint64_t)f64_to_i64_sat(v));
}

void pld_elem_set_i(void *data, pld_dtype_t dt, int64_t i, int64_t v)
{
    const kcls_t c = kcls(dt);
    char *p = (char *)data + i * dt_bytes(dt);
    if (c == K_NONE)
        return;
    if (cls_is_float(c)) {
        int neg;
        uint64_t mag;
        int_split((uint64_t)v, 1, &neg, &mag);
        store_float_of_int(p, c, neg, mag);
    } else {
        store_int_bits(p, c, (uint64_t)v);
    }
}

/* ---- 5. errors and the N-D iterator ------------------------------------------ */

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static pld_status_t fail(char *err, size_t errn, const char *fmt, ...)
{
    if (err && errn > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errn, fmt, ap);
        va_end(ap);
    }
    return PLD_E_RUNTIME;
}

/* "[4, 8]" into buf. */
static const char *shape_str(char *buf, size_t n, int rank, const int64_t *shape)
{
    size_t k = 0;
    buf[0] = '\0';
    k += (size_t)snprintf(buf + k, n - k, "[");
    for (int d = 0; d < rank && k < n; d++)
        k += (size_t)snprintf(buf + k, n - k, d ? ", %lld" : "%lld", (long long)shape[d]);
    if (k < n)
        snprintf(buf + k, n - k, "]");
    return buf;
}

static int view_ok(const pld_view_t *v)
{
    if (v->rank < 0 || v->rank > PLD_MAX_RANK)
        return 0;
    for (int d = 0; d < v->rank; d++)
        if (v->shape[d] < 0)
            return 0;
    return 1;
}

static pld_status_t check_view(const pld_view_t *v, const char *what, char *err, size_t errn)
{
    if (!view_ok(v))
        return fail(err, errn, "bad view for %s (rank %d)", what, v->rank);
    return PLD_OK;
}

/* Element strides of v broadcast (right-aligned) to `shape`; -1 on mismatch. */
static int bcast_strides(const pld_view_t *v, int rank, const int64_t *shape, int64_t *str)
{
    if (v->rank > rank)
        return -1;
    const int lead = rank - v->rank;
    for (int d = 0; d < rank; d++) {
        if (d < lead) {
            str[d] = 0;
            continue;
        }
        const int e = d - lead;
        if (v->shape[e] == shape[d])
            str[d] = shape[d] == 1 ? 0 : v->strides[e];
        else if (v->shape[e] == 1)
            str[d] = 0;
        else
            return -1;
    }
    return 0;
}

static pld_status_t shape_mismatch(const pld_view_t *out, const pld_view_t *v, const char *what, char *err,
                                   size_t errn)
{
    char b1[128], b2[128];
    return fail(err, errn, "shape mismatch: out %s vs %s %s", shape_str(b1, sizeof b1, out->rank, out->shape),
                what, shape_str(b2, sizeof b2, v->rank, v->shape));
}

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

/* Builds the iterator for `rank` dims of `shape` (all > 0); estr[k] are the
 * element strides of operand k, esz[k] its element size. Size-1 dims are
 * dropped and a dim is merged into the next inner one when every operand
 * steps through both as one. */
static void kit_init(kit_t *it, int nops, int rank, const int64_t *shape, char *const *base,
                     const int64_t (*estr)[PLD_MAX_RANK], const int *esz)
{
    int64_t sh[PLD_MAX_RANK];
    int64_t st[KMAXOPS][PLD_MAX_RANK];
    int nd = 0;
    memset(it, 0, sizeof *it);
    it->nops = nops;
    for (int d = 0; d < rank; d++) {
        if (shape[d] == 1)
            continue;
        int merge = nd > 0;
        for (int k = 0; k < nops && merge; k++)
            merge = st[k][nd - 1] == estr[k][d] * esz[k] * shape[d];
        if (merge) {
            sh[nd - 1] *= shape[d];
            for (int k = 0; k < nops; k++)
                st[k][nd - 1] = estr[k][d] * esz[k];
            continue;
        }
        sh[nd] = shape[d];
        for (int k = 0; k < nops; k++)
            st[k][nd] = estr[k][d] * esz[k];
        nd++;
    }
    for (int k = 0; k < nops; k++)
        it->base[k] = base[k];
    it->rows = 1;
    if (nd == 0) {
        it->n = 1;
        for (int k = 0; k < nops; k++)
            it->s[k] = esz[k];
    } else {
        it->n = sh[nd - 1];
        for (int k = 0; k < nops; k++)
            it->s[k] = st[k][nd - 1];
        it->nd = nd - 1;
        for (int d = 0; d < nd - 1; d++) {
            it->shape[d] = sh[d];
            it->rows *= sh[d];
            for (int k = 0; k < nops; k++)
                it->str[k][d] = st[k][d];
        }
    }
    it->contig = it->nd == 0;
    for (int k = 0; k < nops; k++)
        if (it->s[k] != esz[k])
            it->contig = 0;
}

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

/* ---- 6a. element-wise loops ------------------------------------------------ */

/* IEEE 754-2019 maximum / minimum: NaN propagates, -0 < +0. */
#define FMAX_IEEE(x, y) (((x) > (y) || (x) != (x)) ? (x) : ((x) == (y) && !signbit(x)) ? (x) : (y))
#define FMIN_IEEE(x, y) (((x) < (y) || (x) != (x)) ? (x) : ((x) == (y) && signbit(x)) ? (x) : (y))

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

#define BIN_FLOAT(SZ, CT, LD, ST)                                                                               \
    switch (op) {                                                                                               \
    case PLD_K_ADD: RUN3(SZ, CT, LD, ST, x + y); break;                                                         \
    case PLD_K_SUB: RUN3(SZ, CT, LD, ST, x - y); break;                                                         \
    case PLD_K_MUL: RUN3(SZ, CT, LD, ST, x * y); break;                                                         \
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
    case PLD_K_ADD: F32_LOOP(O, AX, BY, x + y, F32_UNROLL); break;                                              \
    case PLD_K_SUB: F32_LOOP(O, AX, BY, x - y, F32_UNROLL); break;                                              \
    case PLD_K_MUL: F32_LOOP(O, AX, BY, x * y, F32_UNROLL); break;                                              \
    case PLD_K_DIV: F32_LOOP(O, AX, BY, x / y, F32_UNROLL); break;                                              \
    case PLD_K_MAX: F32_LOOP(O, AX, BY, FMAX_IEEE(x, y), ); break;                                              \
    case PLD_K_MIN: F32_LOOP(O, AX, BY, FMIN_IEEE(x, y), ); break;                                              \
    }

static void f32_oab(pld_binop_k_t op, float *restrict o, const float *restrict a, const float *restrict b,
                    int64_t n)
{
    F32_OPS(o, a[k], b[k])
}
static void f32_oob(pld_binop_k_t op, float *restrict o, const float *restrict b, int64_t n)
{
    F32_OPS(o, o[k], b[k])
}
static void f32_oao(pld_binop_k_t op, float *restrict o, const float *restrict a, int64_t n)
{
    F32_OPS(o, a[k], o[k])
}
static void f32_ooo(pld_binop_k_t op, float *restrict o, int64_t n)
{
    F32_OPS(o, o[k], o[k])
}
/* b is one scalar s */
static void f32_oas(pld_binop_k_t op, float *restrict o, const float *restrict a, float s, int64_t n)
{
    F32_OPS(o, a[k], s)
}
static void f32_oos(pld_binop_k_t op, float *restrict o, float s, int64_t n)
{
    F32_OPS(o, o[k], s)
}

/* The FP32 array fast paths; 0 when the iterator does not fit them. */
static int bin_f32_arrays(pld_binop_k_t op, const kit_t *it)
{
    if (it->nd != 0 || it->s[0] != 4 || it->s[1] != 4 || (it->s[2] != 4 && it->s[2] != 0) ||
        !aligned(it->base[0], 4) || !aligned(it->base[1], 4) || !aligned(it->base[2], 4))
        return 0;
    float *o = (float *)(void *)it->base[0];
    const float *a = (const float *)(const void *)it->base[1];
    const float *b = (const float *)(const void *)it->base[2];
    if (it->s[2] == 0) {
        const float s = *b;
        if (o == a)
            f32_oos(op, o, s, it->n);
        else
            f32_oas(op, o, a, s, it->n);
    } else if (o == a && o == b) {
        f32_ooo(op, o, it->n);
    } else if (o == a) {
        f32_oob(op, o, b, it->n);
    } else if (o == b) {
        f32_oao(op, o, a, it->n);
    } else {
        f32_oab(op, o, a, b, it->n);
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
    if ((st = check_view(out, "out", err, errn)) || (st = check_view(a, "a", err, errn)) ||
        (st = check_view(b, "b", err, errn)))
        return st;
    if ((unsigned)op > PLD_K_MIN)
        return fail(err, errn, "unknown binary op %d", (int)op);
    const kcls_t c = kcls(out->dt);
    if (c == K_NONE)
        return fail(err, errn, "%s: unsupported dtype %s", binop_name(op), dt_name(out->dt));
    if (a->dt != out->dt || b->dt != out->dt)
        return fail(err, errn, "%s: dtype mismatch (out %s, a %s, b %s)", binop_name(op), dt_name(out->dt),
                    dt_name(a->dt), dt_name(b->dt));
    int64_t str[3][PLD_MAX_RANK];
    memcpy(str[0], out->strides, sizeof str[0]);
    if (bcast_strides(a, out->rank, out->shape, str[1]))
        return shape_mismatch(out, a, "a", err, errn);
    if (bcast_strides(b, out->rank, out->shape, str[2]))
        return shape_mismatch(out, b, "b", err, errn);
    if (pld_view_numel(out) == 0)
        return PLD_OK;
    const int sz = dt_bytes(out->dt);
    const int esz[3] = {sz, sz, sz};
    char *base[3] = {out->data, a->data, b->data};
    kit_t it;
    kit_init(&it, 3, out->rank, out->shape, base, (const int64_t(*)[PLD_MAX_RANK])str, esz);
    if (bin_run(op, c, &it))
        return fail(err, errn, "integer division by zero");
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

pld_status_t pld_k_accumulate(const pld_view_t *out, const pld_view_t *a, char *err, size_t errn)
{
    return binary_impl(PLD_K_ADD, out, out, a, err, errn);
}

/* ---- 6b. unary ---------------------------------------------------------------- */

#define RELU_F(x) (((x) > 0 || (x) != (x)) ? (x) : 0)

#define UN_FLOAT(SZ, CT, LD, ST, EXPF, LOGF, SQRTF, FABSF)                                                      \
    switch (op) {                                                                                               \
    case PLD_K_EXP: RUN2(SZ, SZ, CT, LD, ST, EXPF(x)); break;                                                   \
    case PLD_K_LOG: RUN2(SZ, SZ, CT, LD, ST, LOGF(x)); break;                                                   \
    case PLD_K_SQRT: RUN2(SZ, SZ, CT, LD, ST, SQRTF(x)); break;                                                 \
    case PLD_K_RSQRT: RUN2(SZ, SZ, CT, LD, ST, (CT)1 / SQRTF(x)); break;                                        \
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
    case K_F32: UN_FLOAT(4, float, ld_f32, st_f32, expf, logf, sqrtf, fabsf) break;
    case K_F16: UN_FLOAT(2, float, ld_f16, st_f16, expf, logf, sqrtf, fabsf) break;
    case K_BF16: UN_FLOAT(2, float, ld_bf16, st_bf16, expf, logf, sqrtf, fabsf) break;
    case K_F64: UN_FLOAT(8, double, ld_f64, st_f64, exp, log, sqrt, fabs) break;
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
static pld_status_t pair_setup(const pld_view_t *out, const pld_view_t *a, kit_t *it, int *empty, char *err,
                               size_t errn)
{
    pld_status_t st;
    if ((st = check_view(out, "out", err, errn)) || (st = check_view(a, "a", err, errn)))
        return st;
    int64_t str[2][PLD_MAX_RANK];
    memcpy(str[0], out->strides, sizeof str[0]);
    if (bcast_strides(a, out->rank, out->shape, str[1]))
        return shape_mismatch(out, a, "a", err, errn);
    *empty = pld_view_numel(out) == 0;
    if (*empty)
        return PLD_OK;
    const int esz[2] = {dt_bytes(out->dt), dt_bytes(a->dt)};
    char *base[2] = {out->data, a->data};
    kit_init(it, 2, out->rank, out->shape, base, (const int64_t(*)[PLD_MAX_RANK])str, esz);
    return PLD_OK;
}

pld_status_t pld_k_unary(pld_unop_k_t op, const pld_view_t *out, const pld_view_t *a, char *err, size_t errn)
{
    if ((unsigned)op > PLD_K_RELU)
        return fail(err, errn, "unknown unary op %d", (int)op);
    const kcls_t c = kcls(out->dt);
    if (c == K_NONE)
        return fail(err, errn, "%s: unsupported dtype %s", unop_name(op), dt_name(out->dt));
    if (a->dt != out->dt)
        return fail(err, errn, "%s: dtype mismatch (out %s, a %s)", unop_name(op), dt_name(out->dt),
                    dt_name(a->dt));
    if (!cls_is_float(c) && op != PLD_K_ABS && op != PLD_K_NEG && op != PLD_K_RELU)
        return fail(err, errn, "op %s needs a float dtype, got %s", unop_name(op), dt_name(out->dt));
    kit_t it;
    int empty;
    pld_status_t st = pair_setup(out, a, &it, &empty, err, errn);
    if (st || empty)
        return st;
    un_run(op, c, &it);
    return PLD_OK;
}

/* ---- 6c. reductions ------------------------------------------------------------ */

#define KCH 256 /* columns per chunk (column reduction, matmul, cast staging) */

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
#define C_USUM(acc, x) ((acc) + (uint64_t)(x))
#define C_FMAX(acc, x) FMAX_IEEE(acc, x)
#define C_FMIN(acc, x) FMIN_IEEE(acc, x)
#define C_IMAX(acc, x) ((x) > (acc) ? (x) : (acc))
#define C_IMIN(acc, x) ((x) < (acc) ? (x) : (acc))

/* Instantiates RED (RED_ROW or RED_COL) for every op of one dtype class.
 * Floats: AT float/double. Integers: sums in uint64 (wrapping), max/min in
 * int64 (signed) or uint64 (unsigned); stores keep the low bits. */
#define RED_FLOAT(RED, CT, LD, ST)                                                                              \
    switch (op) {                                                                                               \
    case PLD_K_RSUM: RED(CT, CT, LD, ST, C_SUM) break;                                                          \
    case PLD_K_RMAX: RED(CT, CT, LD, ST, C_FMAX) break;                                                         \
    case PLD_K_RMIN: RED(CT, CT, LD, ST, C_FMIN) break;                                                         \
    }
#define RED_INT(RED, T, LD, ST, MT)                                                                             \
    switch (op) {                                                                                               \
    case PLD_K_RSUM: RED(T, uint64_t, LD, ST, C_USUM) break;                                                    \
    case PLD_K_RMAX: RED(T, MT, LD, ST, C_IMAX) break;                                                          \
    case PLD_K_RMIN: RED(T, MT, LD, ST, C_IMIN) break;                                                          \
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

#define RED_DISPATCH(RED)                                                                                       \
    switch (c) {                                                                                                \
    case K_F32: RED_FLOAT(RED, float, ld_f32, st_f32) break;                                                    \
    case K_F16: RED_FLOAT(RED, float, ld_f16, st_f16) break;                                                    \
    case K_BF16: RED_FLOAT(RED, float, ld_bf16, st_bf16) break;                                                 \
    case K_F64: RED_FLOAT(RED, double, ld_f64, st_f64) break;                                                   \
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

static void red_row_run(pld_redop_k_t op, kcls_t c, kit_t *it, int64_t ncol, int64_t sc)
{
    const int64_t n_ = it->n;
    RED_DISPATCH(RED_ROW)
}

static void red_col_run(pld_redop_k_t op, kcls_t c, const char *abase, int64_t nrow, int64_t ncol, int64_t sr,
                        int64_t sc, char *obase, int64_t so)
{
    RED_DISPATCH(RED_COL)
}

pld_status_t pld_k_reduce(pld_redop_k_t op, int row, const pld_view_t *out, const pld_view_t *a, char *err,
                          size_t errn)
{
    static const char *const names[] = {"sum", "max", "min"};
    pld_status_t st;
    if ((unsigned)op > PLD_K_RMIN)
        return fail(err, errn, "unknown reduction %d", (int)op);
    if ((st = check_view(out, "out", err, errn)) || (st = check_view(a, "a", err, errn)))
        return st;
    const char *what = names[op];
    const kcls_t c = kcls(out->dt);
    if (c == K_NONE)
        return fail(err, errn, "%s: unsupported dtype %s", what, dt_name(out->dt));
    if (a->dt != out->dt)
        return fail(err, errn, "%s: dtype mismatch (out %s, a %s)", what, dt_name(out->dt), dt_name(a->dt));
    const int sz = dt_bytes(out->dt);
    char b1[128], b2[128];
    if (row) {
        /* a [..., R, C] -> out [..., R, 1] */
        int ok = a->rank >= 1 && out->rank == a->rank && out->shape[out->rank - 1] == 1;
        for (int d = 0; ok && d < a->rank - 1; d++)
            ok = out->shape[d] == a->shape[d];
        if (!ok)
            return fail(err, errn, "row %s: out %s must be a %s with the last dim 1", what,
                        shape_str(b1, sizeof b1, out->rank, out->shape),
                        shape_str(b2, sizeof b2, a->rank, a->shape));
    } else {
        /* a [R, C] -> out [1, C] */
        if (a->rank != 2 || out->rank != 2 || out->shape[0] != 1 || out->shape[1] != a->shape[1])
            return fail(err, errn, "column %s: needs a [R, C] -> out [1, C], got a %s, out %s", what,
                        shape_str(b1, sizeof b1, a->rank, a->shape),
                        shape_str(b2, sizeof b2, out->rank, out->shape));
    }
    if (pld_view_numel(out) == 0)
        return PLD_OK;
    const int64_t ax = row ? a->rank - 1 : 0;
    if (a->shape[ax] == 0) {
        if (op != PLD_K_RSUM)
            return fail(err, errn, "%s over an empty axis", what);
        return pld_k_fill_i(out, 0);
    }
    if (row) {
        int64_t str[2][PLD_MAX_RANK];
        memcpy(str[0], out->strides, sizeof str[0]);
        memcpy(str[1], a->strides, sizeof str[1]);
        const int esz[2] = {sz, sz};
        char *base[2] = {out->data, a->data};
        kit_t it;
        kit_init(&it, 2, a->rank - 1, a->shape, base, (const int64_t(*)[PLD_MAX_RANK])str, esz);
        red_row_run(op, c, &it, a->shape[ax], a->strides[ax] * sz);
    } else {
        red_col_run(op, c, a->data, a->shape[0], a->shape[1], a->strides[0] * sz, a->strides[1] * sz, out->data,
                    out->strides[1] * sz);
    }
    return PLD_OK;
}

/* ---- 6d. cast -------------------------------------------------------------------- */

/* Float -> integer rounding of double v (in place over a buffer). */
static inline double rne_int(double x)
{
    const double t = floor(x), d = x - t; /* exact: |x| < 2^52 or x integral (d = 0) */
    if (d > 0.5)
        return t + 1.0;
    if (d < 0.5)
        return t;
    return fmod(t, 2.0) == 0.0 ? t : t + 1.0;
}

static inline double odd_int(double x)
{
    double t = trunc(x);
    if (t != x && fmod(t, 2.0) == 0.0) /* inexact and even: take the odd neighbour */
        t += x > 0 ? 1.0 : -1.0;
    return t;
}

static void round_buf(double *v, int n, pld_round_k_t mode)
{
    switch (mode) {
    case PLD_R_ROUND:
        for (int j = 0; j < n; j++)
            v[j] = round(v[j]); /* ties away from zero */
        break;
    case PLD_R_FLOOR:
        for (int j = 0; j < n; j++)
            v[j] = floor(v[j]);
        break;
    case PLD_R_CEIL:
        for (int j = 0; j < n; j++)
            v[j] = ceil(v[j]);
        break;
    case PLD_R_TRUNC:
        for (int j = 0; j < n; j++)
            v[j] = trunc(v[j]);
        break;
    case PLD_R_ODD:
        for (int j = 0; j < n; j++)
            v[j] = odd_int(v[j]);
        break;
    default: /* NONE, RINT: ties to even */
        for (int j = 0; j < n; j++)
            v[j] = rne_int(v[j]);
        break;
    }
}

/* Saturating stores of integral doubles (NaN -> 0). */
#define SAT_LOOP(LO, HI, STW, UT)                                                                               \
    for (int j = 0; j < n; j++) {                                                                               \
        const double v = fb[j];                                                                                 \
        const int64_t r = v != v ? 0 : v <= (LO) ? (int64_t)(LO) : v >= (HI) ? (int64_t)(HI) : (int64_t)v;      \
        STW(p + j * s, (UT)r);                                                                                  \
    }

static void store_sat(kcls_t dc, const double *fb, int n, char *p, int64_t s)
{
    switch (dc) {
    case K_I8: SAT_LOOP(-128.0, 127.0, st_w8, uint32_t) break;
    case K_U8: SAT_LOOP(0.0, 255.0, st_w8, uint32_t) break;
    case K_I16: SAT_LOOP(-32768.0, 32767.0, st_w16, uint32_t) break;
    case K_U16: SAT_LOOP(0.0, 65535.0, st_w16, uint32_t) break;
    case K_I32: SAT_LOOP(-2147483648.0, 2147483647.0, st_w32, uint32_t) break;
    case K_U32: SAT_LOOP(0.0, 4294967295.0, st_w32, uint32_t) break;
    case K_I64:
        for (int j = 0; j < n; j++)
            st_w64(p + j * s, (uint64_t)f64_to_i64_sat(fb[j]));
        break;
    case K_U64:
        for (int j = 0; j < n; j++) {
            const double v = fb[j];
            st_w64(p + j * s, v != v || v <= 0 ? 0 : v >= 0x1p64 ? UINT64_MAX : (uint64_t)v);
        }
        break;
    default: break;
    }
}

/* One chunk of a cast: n elements of a (class sc, stride as) into out (class
 * dc, stride os). Stage 1 loads into a double or 64-bit buffer, stage 2
 * converts and stores; each stage is one loop chosen outside it. */
static void cast_chunk(kcls_t dc, char *op, int64_t os, kcls_t sc, const char *ap, int64_t as, int n,
                       pld_round_k_t mode)
{
    double fb[KCH];
    uint64_t ib[KCH];
    const int rm = mode == PLD_R_FLOOR ? RM_DOWN : mode == PLD_R_CEIL ? RM_UP : mode == PLD_R_TRUNC ? RM_ZERO
                 : mode == PLD_R_ODD ? RM_ODD : RM_NE;
    if (cls_is_float(sc)) {
        switch (sc) {
        case K_F16: for (int j = 0; j < n; j++) fb[j] = ld_f16(ap + j * as); break;
        case K_BF16: for (int j = 0; j < n; j++) fb[j] = ld_bf16(ap + j * as); break;
        case K_F32: for (int j = 0; j < n; j++) fb[j] = ld_f32(ap + j * as); break;
        default: for (int j = 0; j < n; j++) fb[j] = ld_f64(ap + j * as); break;
        }
        switch (dc) {
        case K_F16:
        case K_BF16:
        case K_F32:
            for (int j = 0; j < n; j++)
                store_float_of_f64(op + j * os, dc, fb[j], rm);
            break;
        case K_F64:
            for (int j = 0; j < n; j++)
                st_f64(op + j * os, fb[j]);
            break;
        case K_BOOL:
            for (int j = 0; j < n; j++)
                st_w8(op + j * os, fb[j] != 0.0);
            break;
        default:
            round_buf(fb, n, mode);
            store_sat(dc, fb, n, op, os);
            break;
        }
        return;
    }
    switch (sc) {
    case K_BOOL:
    case K_U8: for (int j = 0; j < n; j++) ib[j] = ld_u8(ap + j * as); break;
    case K_U16: for (int j = 0; j < n; j++) ib[j] = ld_u16(ap + j * as); break;
    case K_U32: for (int j = 0; j < n; j++) ib[j] = ld_u32(ap + j * as); break;
    case K_U64: for (int j = 0; j < n; j++) ib[j] = ld_u64(ap + j * as); break;
    case K_I8: for (int j = 0; j < n; j++) ib[j] = (uint64_t)(int64_t)ld_i8(ap + j * as); break;
    case K_I16: for (int j = 0; j < n; j++) ib[j] = (uint64_t)(int64_t)ld_i16(ap + j * as); break;
    case K_I32: for (int j = 0; j < n; j++) ib[j] = (uint64_t)(int64_t)ld_i32(ap + j * as); break;
    default: for (int j = 0; j < n; j++) ib[j] = (uint64_t)ld_i64(ap + j * as); break;
    }
    const int sgn = cls_is_signed(sc);
    if (cls_is_float(dc)) {
        for (int j = 0; j < n; j++) {
            int neg;
            uint64_t mag;
            int_split(ib[j], sgn, &neg, &mag);
            store_float_of_int(op + j * os, dc, neg, mag);
        }
    } else if (dc == K_BOOL) {
        for (int j = 0; j < n; j++)
            st_w8(op + j * os, ib[j] != 0);
    } else {
        switch (dc) {
        case K_U8:
        case K_I8: for (int j = 0; j < n; j++) st_w8(op + j * os, (uint32_t)ib[j]); break;
        case K_U16:
        case K_I16: for (int j = 0; j < n; j++) st_w16(op + j * os, (uint32_t)ib[j]); break;
        case K_U32:
        case K_I32: for (int j = 0; j < n; j++) st_w32(op + j * os, (uint32_t)ib[j]); break;
        default: for (int j = 0; j < n; j++) st_w64(op + j * os, ib[j]); break;
        }
    }
}

static void copy_run(kit_t *it, int sz);

pld_status_t pld_k_cast(const pld_view_t *out, const pld_view_t *a, pld_round_k_t mode, char *err, size_t errn)
{
    const kcls_t dc = kcls(out->dt), sc = kcls(a->dt);
    if (dc == K_NONE || sc == K_NONE)
        return fail(err, errn, "cast: unsupported dtype %s", dt_name(dc == K_NONE ? out->dt : a->dt));
    if ((unsigned)mode > PLD_R_ODD)
        return fail(err, errn, "cast: unknown rounding mode %d", (int)mode);
    if (out->data == a->data && dt_bytes(out->dt) != dt_bytes(a->dt))
        return fail(err, errn, "cast: in place from %s to %s changes the element size", dt_name(a->dt),
                    dt_name(out->dt));
    kit_t itv, *it = &itv;
    int empty;
    pld_status_t st = pair_setup(out, a, it, &empty, err, errn);
    if (st || empty)
        return st;
    if (dc == sc) { /* same class (e.g. INT64 -> INDEX): bits are unchanged */
        copy_run(it, dt_bytes(out->dt));
        return PLD_OK;
    }
    const int direct_rne = mode == PLD_R_NONE || mode == PLD_R_RINT || mode == PLD_R_ROUND;
    if (sc == K_F32 && dc == K_F16 && direct_rne) {
        RUN2(2, 4, float, ld_f32, st_f16, x);
        return PLD_OK;
    }
    if (sc == K_F32 && dc == K_BF16 && direct_rne) {
        RUN2(2, 4, float, ld_f32, st_bf16, x);
        return PLD_OK;
    }
    if (sc == K_F16 && dc == K_F32) {
        RUN2(4, 2, float, ld_f16, st_f32, x);
        return PLD_OK;
    }
    if (sc == K_BF16 && dc == K_F32) {
        RUN2(4, 2, float, ld_bf16, st_f32, x);
        return PLD_OK;
    }
    for (int64_t r = 0; r < it->rows; r++) {
        char *o = it->base[0] + it->off[0];
        const char *p = it->base[1] + it->off[1];
        for (int64_t j0 = 0; j0 < it->n; j0 += KCH) {
            const int cn = (int)(it->n - j0 < KCH ? it->n - j0 : KCH);
            cast_chunk(dc, o + j0 * it->s[0], it->s[0], sc, p + j0 * it->s[1], it->s[1], cn, mode);
        }
        kit_next(it);
    }
    return PLD_OK;
}

/* ---- 6e. matmul ------------------------------------------------------------------ */

/* Loads n elements of any float class into a float accumulator row. */
static void acc_load_f(kcls_t c, const char *p, int64_t s, int n, float *acc)
{
    switch (c) {
    case K_F16: for (int j = 0; j < n; j++) acc[j] = ld_f16(p + j * s); break;
    case K_BF16: for (int j = 0; j < n; j++) acc[j] = ld_bf16(p + j * s); break;
    case K_F32: for (int j = 0; j < n; j++) acc[j] = ld_f32(p + j * s); break;
    default: for (int j = 0; j < n; j++) acc[j] = (float)ld_f64(p + j * s); break;
    }
}

static void acc_store_f(kcls_t c, char *p, int64_t s, int n, const float *acc)
{
    switch (c) {
    case K_F16: for (int j = 0; j < n; j++) st_f16(p + j * s, acc[j]); break;
    case K_BF16: for (int j = 0; j < n; j++) st_bf16(p + j * s, acc[j]); break;
    case K_F32: for (int j = 0; j < n; j++) st_f32(p + j * s, acc[j]); break;
    default: for (int j = 0; j < n; j++) st_f64(p + j * s, acc[j]); break;
    }
}

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

pld_status_t pld_k_matmul(const pld_view_t *out, const pld_view_t *a, const pld_view_t *b, int accumulate,
                          char *err, size_t errn)
{
    pld_status_t st;
    if ((st = check_view(out, "out", err, errn)) || (st = check_view(a, "a", err, errn)) ||
        (st = check_view(b, "b", err, errn)))
        return st;
    const kcls_t ac = kcls(a->dt), oc = kcls(out->dt);
    if (ac == K_NONE || oc == K_NONE)
        return fail(err, errn, "matmul: unsupported dtype %s", dt_name(ac == K_NONE ? a->dt : out->dt));
    if (b->dt != a->dt)
        return fail(err, errn, "matmul: dtype mismatch (a %s, b %s)", dt_name(a->dt), dt_name(b->dt));
    if (cls_is_float(ac) != cls_is_float(oc))
        return fail(err, errn, "matmul: out dtype %s does not fit inputs of dtype %s (accumulator %s)",
                    dt_name(out->dt), dt_name(a->dt), cls_is_float(ac) ? "FP32" : "INT32");
    char b1[128], b2[128], b3[128];
    if (a->rank != 2 || b->rank != 2 || out->rank != 2 || a->shape[1] != b->shape[0] ||
        out->shape[0] != a->shape[0] || out->shape[1] != b->shape[1])
        return fail(err, errn, "matmul: shapes do not fit: a %s @ b %s -> out %s",
                    shape_str(b1, sizeof b1, a->rank, a->shape), shape_str(b2, sizeof b2, b->rank, b->shape),
                    shape_str(b3, sizeof b3, out->rank, out->shape));
    if (out->data == a->data || out->data == b->data)
        return fail(err, errn, "matmul: out must not share storage with a or b");
    const int64_t m = a->shape[0], kk = a->shape[1], nn = b->shape[1];
    const int isz = dt_bytes(a->dt), osz = dt_bytes(out->dt);
    const int64_t sam = a->strides[0] * isz, sak = a->strides[1] * isz;
    const int64_t sbk = b->strides[0] * isz, sbn = b->strides[1] * isz;
    const int64_t som = out->strides[0] * osz, son = out->strides[1] * osz;
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
                    store_float_of_f64(ocol + j * son, oc, acc[j], RM_NE);
            } else if (cls_is_float(ac)) {
                float acc[KCH];
                if (accumulate)
                    acc_load_f(oc, ocol, son, cn, acc);
                else
                    memset(acc, 0, sizeof acc);
                switch (ac) {
                case K_F16: MM_LOOP(float, ld_f16, CVT_F) break;
                case K_BF16: MM_LOOP(float, ld_bf16, CVT_F) break;
                default: MM_LOOP(float, ld_f32, CVT_F) break;
                }
                acc_store_f(oc, ocol, son, cn, acc);
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
    return PLD_OK;
}

/* ---- 6f. copy and fill ------------------------------------------------------------- */

#define COPY_LOOP(T)                                                                                            \
    for (int64_t r_ = 0; r_ < it->rows; r_++) {                                                                 \
        char *o_ = it->base[0] + it->off[0];                                                                    \
        const char *a_ = it->base[1] + it->off[1];                                                              \
        for (int64_t i_ = 0; i_ < n_; i_++) {                                                                   \
            T v_;                                                                                               \
            memcpy(&v_, a_ + i_ * it->s[1], sizeof v_);                                                         \
            memcpy(o_ + i_ * it->s[0], &v_, sizeof v_);                                                         \
        }                                                                                                       \
        kit_next(it);                                                                                           \
    }

static void copy_run(kit_t *it, int sz)
{
    if (it->contig) {
        if (it->base[0] != it->base[1])
            memmove(it->base[0], it->base[1], (size_t)(it->n * sz));
        return;
    }
    const int64_t n_ = it->n;
    switch (sz) {
    case 1: COPY_LOOP(uint8_t) break;
    case 2: COPY_LOOP(uint16_t) break;
    case 4: COPY_LOOP(uint32_t) break;
    default: COPY_LOOP(uint64_t) break;
    }
}

pld_status_t pld_k_copy(const pld_view_t *out, const pld_view_t *a, char *err, size_t errn)
{
    const int sz = dt_bytes(out->dt);
    if (sz == 0 || (sz != 1 && sz != 2 && sz != 4 && sz != 8))
        return fail(err, errn, "copy: unsupported dtype %s", dt_name(out->dt));
    if (a->dt != out->dt)
        return fail(err, errn, "copy: dtype mismatch (out %s, a %s)", dt_name(out->dt), dt_name(a->dt));
    kit_t it;
    int empty;
    pld_status_t st = pair_setup(out, a, &it, &empty, err, errn);
    if (st || empty)
        return st;
    copy_run(&it, sz);
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
    const int sz = dt_bytes(out->dt);
    if (!view_ok(out) || kcls(out->dt) == K_NONE)
        return PLD_E_RUNTIME;
    if (pld_view_numel(out) == 0)
        return PLD_OK;
    const int esz[1] = {sz};
    char *base[1] = {out->data};
    kit_t it;
    kit_init(&it, 1, out->rank, out->shape, base, &out->strides, esz);
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
    pld_elem_set_f(&cell, out->dt, 0, v);
    return fill_cell(out, &cell);
}

pld_status_t pld_k_fill_i(const pld_view_t *out, int64_t v)
{
    uint64_t cell = 0;
    pld_elem_set_i(&cell, out->dt, 0, v);
    return fill_cell(out, &cell);
}
