/* pld_dtype.h - element dtypes: the one home of their ids, names and widths,
 * of the FP16/BF16 storage conversions (round to nearest, ties to even) and
 * of the FP8 decodings (FP8E4M3FN data, FP8E8M0 scales: the MX matmul's).
 *
 * The lowest module that needs dtypes is base: the parser, the window layer,
 * the kernels, .npy I/O and the backends all read this table and know no
 * syntax. The conversions are `static inline` (they sit in every inner loop
 * of the kernels and the window layer's FP16/BF16 atomic add). */
#ifndef PLD_DTYPE_H
#define PLD_DTYPE_H

#include <stdint.h>
#include <string.h>

/* ORDER PLD_DTYPES (names and widths in pld_dtype.c) */
typedef enum pld_dtype {
    PLD_DT_NONE = 0,
    PLD_DT_BOOL, PLD_DT_INT4, PLD_DT_INT8, PLD_DT_INT16, PLD_DT_INT32, PLD_DT_INT64,
    PLD_DT_UINT4, PLD_DT_UINT8, PLD_DT_UINT16, PLD_DT_UINT32, PLD_DT_UINT64,
    PLD_DT_FP4, PLD_DT_FP8E4M3FN, PLD_DT_FP8E5M2, PLD_DT_FP8E8M0, PLD_DT_FP16, PLD_DT_FP32,
    PLD_DT_BF16, PLD_DT_HF4, PLD_DT_HF8, PLD_DT_INDEX, PLD_DT_TASK_ID, PLD_DT_FP64,
    PLD_DT__COUNT
} pld_dtype_t;

const char *pld_dtype_name(pld_dtype_t d);           /* "FP32"; "?" when out of range */
pld_dtype_t pld_dtype_from_name(const char *name);    /* PLD_DT_NONE if unknown */
int pld_dtype_bits(pld_dtype_t d);                    /* 32 for FP32; 64 for INDEX; 0 out of range */
int pld_dtype_bytes(pld_dtype_t d);                   /* PyPTO's get_byte(): bits/8, at least 1 */
/* Whole bytes of one stored element: bits/8, or 0 for sub-byte (INT4, FP4,
 * HF4) and unknown dtypes, which cannot be stored element by element. */
int pld_dtype_storage_bytes(pld_dtype_t d);
int pld_dtype_is_float(pld_dtype_t d);
int pld_dtype_is_int(pld_dtype_t d);                  /* integers incl. INDEX and BOOL, not TASK_ID */
/* The dtype of a scalar binary operation on a and b (the checker's static
 * types and the interpreter's values agree through this one rule): NONE
 * yields the other; float beats integer; INDEX beats other integers; else the
 * wider one (a on a tie). */
pld_dtype_t pld_dtype_promote(pld_dtype_t a, pld_dtype_t b);

#include "pld_half.h" /* FP16 / BF16 storage conversion (also the text of every compiled kernel) */

/* ---- FP8 decoding (exact in float) ----
 * FP8E4M3FN (OCP 8-bit floating point, "FN": finite, no infinities): 1 sign,
 * 4 exponent (bias 7), 3 fraction bits; exponent 0 is subnormal (f * 2^-9);
 * S.1111.111 is NaN; the largest finite value is 448. */
PLD_DTYPE_INLINE float pld_fp8e4m3fn_to_f32(uint8_t b)
{
    const uint32_t sign = (uint32_t)(b & 0x80u) << 24;
    const uint32_t ef = (b >> 3) & 0xfu, fr = b & 7u;
    if (ef == 0xf && fr == 7)
        return pld_bits_f32(sign | 0x7fc00000u);
    if (ef != 0)
        return pld_bits_f32(sign | ((ef + 120u) << 23) | (fr << 20));
    const float v = (float)fr * 0x1p-9f;
    return sign ? -v : v;
}

/* FP8E8M0 (OCP MX scale): 8 exponent bits, no sign, no fraction: 2^(b-127);
 * 0xff is NaN; 2^-127 (b = 0) is an FP32 subnormal. */
PLD_DTYPE_INLINE float pld_fp8e8m0_to_f32(uint8_t b)
{
    if (b == 0xffu)
        return pld_bits_f32(0x7fc00000u);
    return pld_bits_f32(b ? (uint32_t)b << 23 : 0x00400000u);
}

#endif
