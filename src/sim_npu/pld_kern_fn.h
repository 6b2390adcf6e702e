/* pld_kern_fn.h - per-element numerics the kernel library and the code the
 * `native` backend generates share (issue 44): the one definition of log and
 * rsqrt of a float, of the IEEE rounding core the casts use (a double or an
 * integer rounded to FP32 / FP16 / BF16 bits in a rounding mode), and of a
 * float's rounding to an integer and its saturation to INT32. The library
 * (pld_kern.c, pld_kern_elem.c, pld_kern_cast.c) calls these; native's fused
 * loops (src/hw_backend/pld_cgen_fuse.c) call them per element, so a cast or
 * a log inside a fused chain gives the library's bits. Its text is copied
 * into every generated source after src/base/pld_half.h and before
 * pld_crt.h (CMakeLists.txt, pld_crt_text). Self-contained: C standard
 * library only. */
#ifndef PLD_KERN_FN_H
#define PLD_KERN_FN_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__)
#define PLD_KFN static inline __attribute__((unused))
#else
#define PLD_KFN static inline
#endif

/* log of a float, correctly rounded (in double, then rounded once to float:
 * glibc's logf is within 1 ulp but not always the nearest float);
 * docs/ops-numerics.md */
PLD_KFN float pld_kfn_log(float x)
{
    return (float)log((double)x);
}

/* rsqrt of a float: 1 / sqrt(x), two IEEE operations, each rounded */
PLD_KFN float pld_kfn_rsqrt(float x)
{
    return 1.0f / sqrtf(x);
}

/* Rounding modes of the IEEE rounding core (the library's RM_*). */
enum { PLD_KFN_RM_NE, PLD_KFN_RM_ZERO, PLD_KFN_RM_DOWN, PLD_KFN_RM_UP, PLD_KFN_RM_ODD };

/* (-1)^neg * m * 2^e2 rounded to the binary format of ebits exponent and
 * mbits fraction bits in mode rm: its bits (sign at bit ebits + mbits).
 * Overflow: inf, or the largest finite where the mode rounds toward zero. */
PLD_KFN uint64_t pld_kfn_round_bits(int neg, uint64_t m, int e2, int ebits, int mbits, int rm)
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
    case PLD_KFN_RM_NE: q += (cmp > 0 || (cmp == 0 && (q & 1))); break;
    case PLD_KFN_RM_ZERO: break;
    case PLD_KFN_RM_DOWN: q += (inexact && neg); break;
    case PLD_KFN_RM_UP: q += (inexact && !neg); break;
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
        case PLD_KFN_RM_NE: to_inf = 1; break;
        case PLD_KFN_RM_DOWN: to_inf = neg; break;
        case PLD_KFN_RM_UP: to_inf = !neg; break;
        default: to_inf = 0; break; /* RM_ZERO, RM_ODD: largest finite */
        }
        bits = to_inf ? inf : inf - 1;
    }
    return sign | bits;
}

/* A double rounded to the format (ebits, mbits) in mode rm; a NaN keeps its
 * sign and top payload bits and becomes quiet. */
PLD_KFN uint64_t pld_kfn_f64_round_bits(double d, int ebits, int mbits, int rm)
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
        return pld_kfn_round_bits(neg, fr, -1074, ebits, mbits, rm);
    return pld_kfn_round_bits(neg, fr | ((uint64_t)1 << 52), ef - 1075, ebits, mbits, rm);
}

/* A signed integer rounded to the format (ebits, mbits), ties to even. */
PLD_KFN uint64_t pld_kfn_i64_round_bits(int64_t v, int ebits, int mbits)
{
    const int neg = v < 0;
    const uint64_t mag = neg ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    return pld_kfn_round_bits(neg, mag, 0, ebits, mbits, PLD_KFN_RM_NE);
}

/* The rounding core's mode for a cast's rounding mode (pld_round_k_t:
 * NONE 0, RINT 1, ROUND 2, FLOOR 3, CEIL 4, TRUNC 5, ODD 6): to nearest
 * even for NONE / RINT / ROUND. */
PLD_KFN int pld_kfn_cast_rm(int mode)
{
    return mode == 3 ? PLD_KFN_RM_DOWN : mode == 4 ? PLD_KFN_RM_UP : mode == 5 ? PLD_KFN_RM_ZERO
         : mode == 6 ? PLD_KFN_RM_ODD : PLD_KFN_RM_NE;
}

/* x rounded to an integral double, ties to even */
PLD_KFN double pld_kfn_rne_int(double x)
{
    const double t = floor(x), d = x - t; /* exact: |x| < 2^52 or x integral (d = 0) */
    if (d > 0.5)
        return t + 1.0;
    if (d < 0.5)
        return t;
    return fmod(t, 2.0) == 0.0 ? t : t + 1.0;
}

/* x rounded to an integral double, an inexact result odd */
PLD_KFN double pld_kfn_odd_int(double x)
{
    double t = trunc(x);
    if (t != x && fmod(t, 2.0) == 0.0) /* inexact and even: take the odd neighbour */
        t += x > 0 ? 1.0 : -1.0;
    return t;
}

/* x rounded to an integral double in a cast's rounding mode (pld_round_k_t):
 * ROUND ties away from zero, NONE / RINT ties to even */
PLD_KFN double pld_kfn_round_int(double x, int mode)
{
    switch (mode) {
    case 2: return round(x);
    case 3: return floor(x);
    case 4: return ceil(x);
    case 5: return trunc(x);
    case 6: return pld_kfn_odd_int(x);
    default: return pld_kfn_rne_int(x);
    }
}

/* an integral double saturated to [lo, hi] (NaN: 0) */
PLD_KFN int64_t pld_kfn_sat(double v, double lo, double hi)
{
    return v != v ? 0 : v <= lo ? (int64_t)lo : v >= hi ? (int64_t)hi : (int64_t)v;
}

/* a float cast to INT32 in a cast's rounding mode: rounded, saturated */
PLD_KFN int32_t pld_kfn_f2i32(double x, int mode)
{
    return (int32_t)(uint32_t)pld_kfn_sat(pld_kfn_round_int(x, mode), -2147483648.0, 2147483647.0);
}

#endif
