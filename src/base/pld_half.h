/* pld_half.h - FP16 / BF16 storage conversion: the one definition the
 * interpreter's kernels (through pld_dtype.h) and every kernel compiled by
 * the `native` backend use (its text is copied into each generated source
 * ahead of pld_crt.h), so both round alike. Self-contained: C standard
 * library only. */
#ifndef PLD_HALF_H
#define PLD_HALF_H

#include <stdint.h>
#include <string.h>

/* ---- FP16 / BF16 storage conversion ----
 * f32 -> f16/bf16 round to nearest, ties to even; overflow -> inf; a NaN stays
 * a quiet NaN keeping its sign and top payload bits. f16/bf16 -> f32 is exact. */
#if defined(__GNUC__)
#define PLD_DTYPE_INLINE static inline __attribute__((always_inline, unused))
#else
#define PLD_DTYPE_INLINE static inline
#endif

PLD_DTYPE_INLINE float pld_bits_f32(uint32_t x)
{
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

/* FP16 = 1 sign, 5 exponent (bias 15), 10 fraction bits. */
PLD_DTYPE_INLINE uint16_t pld_f32_to_f16(float f)
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

PLD_DTYPE_INLINE float pld_f16_to_f32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t ef = (h >> 10) & 0x1fu, fr = h & 0x3ffu;
    if (ef == 0x1f)
        return pld_bits_f32(sign | 0x7f800000u | (fr << 13));
    if (ef != 0)
        return pld_bits_f32(sign | ((ef + 112u) << 23) | (fr << 13));
    /* zero or subnormal: fr * 2^-24, exact in float */
    const float v = (float)fr * 0x1p-24f;
    return sign ? -v : v;
}

/* BF16 = the top 16 bits of an FP32. */
PLD_DTYPE_INLINE uint16_t pld_f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u); /* RNE; a carry out of the fraction bumps the exponent (-> inf) */
    return (uint16_t)(x >> 16);
}

PLD_DTYPE_INLINE float pld_bf16_to_f32(uint16_t b)
{
    return pld_bits_f32((uint32_t)b << 16);
}

#endif
