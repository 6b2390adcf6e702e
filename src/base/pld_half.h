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

PLD_DTYPE_INLINE uint32_t pld_f32_bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    return x;
}

/* c ? a : b without a branch (c is 0 or 1) */
PLD_DTYPE_INLINE uint32_t pld_half_sel(int c, uint32_t a, uint32_t b)
{
    const uint32_t m = 0u - (uint32_t)c;
    return (a & m) | (b & ~m);
}

/* FP16 = 1 sign, 5 exponent (bias 15), 10 fraction bits.
 * Both directions are branch-free (every case computed, one selected), so a
 * loop of them vectorises (issue 44); tests/unit/test_base.c proves them equal,
 * bit for bit, to the straightforward branchy form on every FP16 input and on
 * every FP32 sign/exponent/top-fraction pattern with edge and random low bits. */
PLD_DTYPE_INLINE uint16_t pld_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t ax = x & 0x7fffffffu;
    /* NaN: quiet, top 10 payload bits */
    const uint32_t nan = 0x7e00u | ((ax >> 13) & 0x3ffu);
    /* >= 2^-14: normal; rebias 127 -> 15, RNE on the 13 dropped bits (wraps,
     * unused, below 2^-14) */
    const uint32_t norm = (ax - 0x38000000u + 0x0fffu + ((ax >> 13) & 1u)) >> 13;
    /* < 2^-14: a subnormal or zero result, rounded to nearest even by the FP32
     * addition itself: |f| + 0.5 has the unit 2^-24 in its last place, so its
     * low bits are |f| / 2^-24 rounded (exact 0.5 for |f| <= 2^-25, the tie
     * included). The FP32 subnormal inputs round to 0 either way. */
    const uint32_t sub = pld_f32_bits(pld_bits_f32(ax) + 0.5f) - 0x3f000000u;
    /* the case selected by masks, not branches: GCC does not if-convert a
     * select whose arm holds an FP operation (it may trap) */
    uint32_t r = sub;
    r = pld_half_sel(ax >= 0x38800000u, norm, r);
    r = pld_half_sel(ax >= 0x477ff000u, 0x7c00u, r); /* >= 65520 = 65504 + half an ulp (tie to even = inf), and inf */
    r = pld_half_sel(ax > 0x7f800000u, nan, r);
    return (uint16_t)(sign | r);
}

PLD_DTYPE_INLINE float pld_f16_to_f32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t em = h & 0x7fffu, ef = em >> 10;
    const uint32_t norm = (em << 13) + 0x38000000u;   /* rebias 15 -> 127 */
    const uint32_t infnan = norm + 0x38000000u;       /* exponent 31 -> 255, the payload kept */
    /* zero or subnormal: fr * 2^-24 = (1 + fr / 2^10) * 2^-14 - 2^-14, exact */
    const uint32_t sub = pld_f32_bits(pld_bits_f32(norm + 0x00800000u) - 0x1p-14f);
    return pld_bits_f32(sign | pld_half_sel(ef == 0x1fu, infnan, pld_half_sel(ef == 0, sub, norm)));
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
