/* test_kern.c - CUnit suite for the numeric kernels (src/sim_npu/pld_kern.c).
 *
 * Expected values never come from the code under test:
 *  - hand-computed constants and IEEE 754 bit patterns (FP16 0x3C00 = 1.0,
 *    0x7BFF = 65504, 0x0001 = 2^-24, BF16 0x7F7F = 255 * 2^120, ...);
 *  - a table oracle: every non-negative finite FP16 / BF16 value decoded with
 *    ldexp from the bit layout, then rounding decided by comparing against
 *    the exact midpoint of the two neighbours (all modes);
 *  - GCC's _Float16 (when the compiler has it) for FP16 conversions and
 *    arithmetic;
 *  - exhaustive round trips over all 65536 FP16 and BF16 patterns.
 * Integer expectations are written out by hand (wrap, truncation, saturation). */
#include "test_kern_util.h"

/* The suite is split by subject: this file (views, FP16 / BF16 conversions,
 * element access, matmul, copy / fill / alignment / errors; the table and
 * main), test_kern_binary.c (binary ops), test_kern_reduce.c (unary ops and
 * reductions), test_kern_cast.c (casts), test_kern_mm.c (the blocked matmul
 * and reductions against reference loops), test_kern_layout.c (layout,
 * gathers / scatters, sorts); helpers and the table oracle in
 * test_kern_util.c. */

/* ---- views ------------------------------------------------------------------------ */

void test_kern_views(void)
{
    float buf[24];
    const int64_t sh[3] = {2, 3, 4};
    pld_view_t v = vw(buf, PLD_DT_FP32, 3, sh);
    CU_ASSERT_EQUAL(v.strides[0], 12);
    CU_ASSERT_EQUAL(v.strides[1], 4);
    CU_ASSERT_EQUAL(v.strides[2], 1);
    CU_ASSERT_EQUAL(pld_view_numel(&v), 24);
    CU_ASSERT_TRUE(pld_view_is_packed(&v));
    v.strides[1] = 5;
    CU_ASSERT_FALSE(pld_view_is_packed(&v));
    /* a size-1 dim's stride does not matter */
    const int64_t sh1[3] = {2, 1, 4};
    v = vw(buf, PLD_DT_FP32, 3, sh1);
    v.strides[1] = 999;
    CU_ASSERT_TRUE(pld_view_is_packed(&v));
    pld_view_t s = vw(buf, PLD_DT_FP32, 0, NULL);
    CU_ASSERT_EQUAL(pld_view_numel(&s), 1);
    CU_ASSERT_TRUE(pld_view_is_packed(&s));
    const int64_t sh0[2] = {3, 0};
    v = vw(buf, PLD_DT_FP32, 2, sh0);
    CU_ASSERT_EQUAL(pld_view_numel(&v), 0);
}

/* ---- FP16 / BF16 conversions ------------------------------------------------------- */

void test_kern_f16_spec_patterns(void)
{
    /* decode */
    CU_ASSERT_EQUAL(pld_f16_to_f32(0x3c00), 1.0f);
    CU_ASSERT_EQUAL(pld_f16_to_f32(0x7bff), 65504.0f);
    CU_ASSERT_EQUAL(pld_f16_to_f32(0x0001), 0x1p-24f);
    CU_ASSERT_EQUAL(pld_f16_to_f32(0x03ff), 1023 * 0x1p-24f);
    CU_ASSERT_EQUAL(pld_f16_to_f32(0x0400), 0x1p-14f);
    CU_ASSERT_EQUAL(pld_f16_to_f32(0x3bff), 0.99951171875f);
    CU_ASSERT_EQUAL(pld_f16_to_f32(0xc000), -2.0f);
    CU_ASSERT_EQUAL(pld_f16_to_f32(0x2e66), 0.0999755859375f);
    CU_ASSERT_EQUAL(f2u(pld_f16_to_f32(0x8000)), 0x80000000u);
    CU_ASSERT_EQUAL(f2u(pld_f16_to_f32(0x7c00)), 0x7f800000u);
    CU_ASSERT_EQUAL(f2u(pld_f16_to_f32(0xfc00)), 0xff800000u);
    CU_ASSERT_TRUE(isnan(pld_f16_to_f32(0x7e00)));
    CU_ASSERT_TRUE(isnan(pld_f16_to_f32(0x7c01)));
    CU_ASSERT_TRUE(signbit(pld_f16_to_f32(0xfe00)));
    /* encode, round to nearest even */
    CU_ASSERT_EQUAL(pld_f32_to_f16(1.0f), 0x3c00);
    CU_ASSERT_EQUAL(pld_f32_to_f16(65504.0f), 0x7bff);
    CU_ASSERT_EQUAL(pld_f32_to_f16(65519.996f), 0x7bff); /* just below max + half ulp */
    CU_ASSERT_EQUAL(pld_f32_to_f16(65520.0f), 0x7c00);   /* tie: 0x7bff is odd -> inf */
    CU_ASSERT_EQUAL(pld_f32_to_f16(1e6f), 0x7c00);
    CU_ASSERT_EQUAL(pld_f32_to_f16(-1e6f), 0xfc00);
    CU_ASSERT_EQUAL(pld_f32_to_f16(INFINITY), 0x7c00);
    CU_ASSERT_EQUAL(pld_f32_to_f16(-INFINITY), 0xfc00);
    CU_ASSERT_EQUAL(pld_f32_to_f16(-0.0f), 0x8000);
    CU_ASSERT_EQUAL(pld_f32_to_f16(0.0f), 0x0000);
    CU_ASSERT_EQUAL(pld_f32_to_f16(0x1p-24f), 0x0001);
    CU_ASSERT_EQUAL(pld_f32_to_f16(0x1p-25f), 0x0000);                  /* tie -> even zero */
    CU_ASSERT_EQUAL(pld_f32_to_f16(-0x1p-25f), 0x8000);
    CU_ASSERT_EQUAL(pld_f32_to_f16(nextafterf(0x1p-25f, 1.0f)), 0x0001); /* above the tie */
    CU_ASSERT_EQUAL(pld_f32_to_f16(3 * 0x1p-25f), 0x0002);              /* 1.5 ulp: tie -> 2 */
    CU_ASSERT_EQUAL(pld_f32_to_f16(5 * 0x1p-25f), 0x0002);              /* 2.5 ulp: tie -> 2 */
    CU_ASSERT_EQUAL(pld_f32_to_f16(0x1p-14f - 0x1p-25f), 0x0400);       /* tie at the subnormal top */
    CU_ASSERT_EQUAL(pld_f32_to_f16(1e-10f), 0x0000);
    CU_ASSERT_EQUAL(pld_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);            /* tie -> even */
    CU_ASSERT_EQUAL(pld_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);        /* tie -> even (up) */
    CU_ASSERT_EQUAL(pld_f32_to_f16(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01); /* above the tie */
    CU_ASSERT_EQUAL(pld_f32_to_f16(0.1f), 0x2e66);
    CU_ASSERT_EQUAL(pld_f32_to_f16(-2.0f), 0xc000);
    CU_ASSERT_EQUAL(pld_f32_to_f16(2047.0f + 0.5f), 0x6800);              /* 2047.5: tie -> 2048 */
    /* NaN stays NaN, sign kept */
    uint16_t h = pld_f32_to_f16(NAN);
    CU_ASSERT_TRUE(is_nan16(h));
    h = pld_f32_to_f16(-NAN);
    CU_ASSERT_TRUE(is_nan16(h) && (h & 0x8000));
    h = pld_f32_to_f16(u2f(0x7f800001u)); /* payload only in the low bits: must not become inf */
    CU_ASSERT_TRUE(is_nan16(h));
}

void test_kern_bf16_spec_patterns(void)
{
    CU_ASSERT_EQUAL(pld_bf16_to_f32(0x3f80), 1.0f);
    CU_ASSERT_EQUAL((double)pld_bf16_to_f32(0x7f7f), 3.3895313892515355e38);
    CU_ASSERT_EQUAL(pld_bf16_to_f32(0x0001), 0x1p-133f);
    CU_ASSERT_EQUAL(pld_bf16_to_f32(0xc040), -3.0f);
    CU_ASSERT_EQUAL(f2u(pld_bf16_to_f32(0x8000)), 0x80000000u);
    CU_ASSERT_TRUE(isinf(pld_bf16_to_f32(0x7f80)));
    CU_ASSERT_TRUE(isnan(pld_bf16_to_f32(0x7fc0)));
    CU_ASSERT_EQUAL(pld_f32_to_bf16(1.0f), 0x3f80);
    CU_ASSERT_EQUAL(pld_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);     /* tie -> even */
    CU_ASSERT_EQUAL(pld_f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82); /* tie -> even (up) */
    CU_ASSERT_EQUAL(pld_f32_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
    CU_ASSERT_EQUAL(pld_f32_to_bf16(u2f(0x7f7f7fffu)), 0x7f7f);
    CU_ASSERT_EQUAL(pld_f32_to_bf16(u2f(0x7f7f8000u)), 0x7f80); /* tie above max -> inf */
    CU_ASSERT_EQUAL(pld_f32_to_bf16(FLT_MAX), 0x7f80);
    CU_ASSERT_EQUAL(pld_f32_to_bf16(-FLT_MAX), 0xff80);
    CU_ASSERT_EQUAL(pld_f32_to_bf16(-0.0f), 0x8000);
    CU_ASSERT_EQUAL(pld_f32_to_bf16(0x1p-133f), 0x0001);
    CU_ASSERT_EQUAL(pld_f32_to_bf16(0x1p-134f), 0x0000); /* tie -> even zero */
    CU_ASSERT_EQUAL(pld_f32_to_bf16(3 * 0x1p-134f), 0x0002);
    CU_ASSERT_EQUAL(pld_f32_to_bf16(1000.0f), 0x447a);
    uint16_t b = pld_f32_to_bf16(u2f(0x7f800001u)); /* sNaN with low payload: must stay NaN */
    CU_ASSERT_TRUE(is_nanbf(b));
    b = pld_f32_to_bf16(u2f(0xffffffffu));
    CU_ASSERT_TRUE(is_nanbf(b) && (b & 0x8000));
}

/* All 65536 patterns: the decode matches the bit layout, and
 * f16 -> f32 -> f16 is the identity for every non-NaN (NaN stays NaN). */
void test_kern_f16_roundtrip_exhaustive(void)
{
    int bad = 0;
    for (uint32_t i = 0; i < 0x10000; i++) {
        const uint16_t h = (uint16_t)i;
        const float f = pld_f16_to_f32(h);
        const uint16_t back = pld_f32_to_f16(f);
        if (is_nan16(h)) {
            bad += !isnan(f) || !is_nan16(back) || (back & 0x8000) != (h & 0x8000);
            continue;
        }
        if (back != h || d2u((double)f) != d2u(dec16(h))) {
            if (bad++ < 5)
                fprintf(stderr, "\nf16 0x%04x -> %a -> 0x%04x (want %a)\n", h, (double)f, back, dec16(h));
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
}

void test_kern_bf16_roundtrip_exhaustive(void)
{
    int bad = 0;
    for (uint32_t i = 0; i < 0x10000; i++) {
        const uint16_t b = (uint16_t)i;
        const float f = pld_bf16_to_f32(b);
        const uint16_t back = pld_f32_to_bf16(f);
        if (is_nanbf(b)) {
            bad += !isnan(f) || !is_nanbf(back) || (back & 0x8000) != (b & 0x8000);
            continue;
        }
        if (back != b || d2u((double)f) != d2u(decbf(b))) {
            if (bad++ < 5)
                fprintf(stderr, "\nbf16 0x%04x -> %a -> 0x%04x\n", b, (double)f, back);
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
}

/* Every midpoint between two adjacent finite FP16 (BF16) values, and the
 * floats right next to it: ties go to the even pattern, the others to the
 * nearer one. Midpoints are exact in float. */
void test_kern_f16_bf16_all_ties(void)
{
    int bad = 0;
    for (uint32_t i = 0; i < 0x7bff; i++) {
        const float mid = (float)((dec16((uint16_t)i) + dec16((uint16_t)(i + 1))) / 2);
        const uint16_t even = (uint16_t)((i & 1) ? i + 1 : i);
        bad += pld_f32_to_f16(mid) != even;
        bad += pld_f32_to_f16(nextafterf(mid, 0.0f)) != i;
        bad += pld_f32_to_f16(nextafterf(mid, INFINITY)) != i + 1;
        bad += pld_f32_to_f16(-mid) != (0x8000 | even);
    }
    for (uint32_t i = 0; i < 0x7f7f; i++) {
        const float mid = (float)((decbf((uint16_t)i) + decbf((uint16_t)(i + 1))) / 2);
        const uint16_t even = (uint16_t)((i & 1) ? i + 1 : i);
        bad += pld_f32_to_bf16(mid) != even;
        bad += pld_f32_to_bf16(nextafterf(mid, 0.0f)) != i;
        bad += pld_f32_to_bf16(nextafterf(mid, INFINITY)) != i + 1;
        bad += pld_f32_to_bf16(-mid) != (0x8000 | even);
    }
    CU_ASSERT_EQUAL(bad, 0);
}

/* Random FP32 bit patterns over the whole range against the table oracle
 * (and GCC's _Float16 conversion when available). */
void test_kern_f16_bf16_random_vs_oracle(void)
{
    tables_init();
    int bad = 0;
    for (int k = 0; k < 200000; k++) {
        const float f = u2f((uint32_t)rng());
        if (isnan(f))
            continue;
        const uint16_t h = pld_f32_to_f16(f), b = pld_f32_to_bf16(f);
        if (h != oracle16(f, PLD_R_RINT) && bad++ < 5)
            fprintf(stderr, "\nf16(%a) = 0x%04x, oracle 0x%04x\n", (double)f, h, oracle16(f, PLD_R_RINT));
        if (b != oraclebf(f, PLD_R_RINT) && bad++ < 5)
            fprintf(stderr, "\nbf16(%a) = 0x%04x, oracle 0x%04x\n", (double)f, b, oraclebf(f, PLD_R_RINT));
#ifdef __FLT16_MANT_DIG__
        const _Float16 g = (_Float16)f;
        uint16_t gb;
        memcpy(&gb, &g, 2);
        bad += gb != h;
#endif
    }
    CU_ASSERT_EQUAL(bad, 0);
}

/* ---- element access --------------------------------------------------------------- */

void test_kern_elem_access(void)
{
    uint64_t cell;
    uint16_t h;
    /* double -> FP16 rounds once: 1 + 2^-11 + 2^-40 is above the tie. Going
     * through float first would make it an exact tie and give 0x3C00. */
    pld_elem_set_f(&h, PLD_DT_FP16, 0, 1.0 + 0x1p-11 + 0x1p-40);
    CU_ASSERT_EQUAL(h, 0x3c01);
    pld_elem_set_f(&h, PLD_DT_BF16, 0, 1.0 + 0x1p-8 + 0x1p-40);
    CU_ASSERT_EQUAL(h, 0x3f81);
    pld_elem_set_f(&h, PLD_DT_FP16, 0, 65520.0);
    CU_ASSERT_EQUAL(h, 0x7c00);
    pld_elem_set_f(&h, PLD_DT_FP16, 0, -0.0);
    CU_ASSERT_EQUAL(h, 0x8000);
    uint32_t w;
    pld_elem_set_f(&w, PLD_DT_FP32, 0, 1.0 + 0x1p-24); /* tie -> 1.0 */
    CU_ASSERT_EQUAL(w, 0x3f800000u);
    pld_elem_set_f(&w, PLD_DT_FP32, 0, 1.0 + 0x1p-24 + 0x1p-50);
    CU_ASSERT_EQUAL(w, 0x3f800001u);
    pld_elem_set_f(&w, PLD_DT_FP32, 0, 1e300);
    CU_ASSERT_EQUAL(w, 0x7f800000u);
    pld_elem_set_f(&w, PLD_DT_FP32, 0, 1e-300);
    CU_ASSERT_EQUAL(w, 0u);
    /* integers from doubles: truncate, saturate to int64, NaN -> 0, then wrap */
    int8_t i8[4];
    pld_elem_set_f(i8, PLD_DT_INT8, 0, 300.7);
    pld_elem_set_f(i8, PLD_DT_INT8, 1, -2.9);
    pld_elem_set_f(i8, PLD_DT_INT8, 2, NAN);
    pld_elem_set_i(i8, PLD_DT_INT8, 3, 200);
    CU_ASSERT_EQUAL(i8[0], 44);
    CU_ASSERT_EQUAL(i8[1], -2);
    CU_ASSERT_EQUAL(i8[2], 0);
    CU_ASSERT_EQUAL(i8[3], -56);
    int64_t i64;
    pld_elem_set_f(&i64, PLD_DT_INT64, 0, 1e30);
    CU_ASSERT_EQUAL(i64, INT64_MAX);
    pld_elem_set_f(&i64, PLD_DT_INDEX, 0, -1e30);
    CU_ASSERT_EQUAL(i64, INT64_MIN);
    /* integers into floats: one RNE rounding */
    pld_elem_set_i(&w, PLD_DT_FP32, 0, 16777217);
    CU_ASSERT_EQUAL(w, 0x4b800000u); /* 2^24 */
    pld_elem_set_i(&h, PLD_DT_FP16, 0, -128);
    CU_ASSERT_EQUAL(h, 0xd800);
    /* reads */
    uint64_t u64 = UINT64_MAX;
    CU_ASSERT_EQUAL(pld_elem_get_i(&u64, PLD_DT_UINT64, 0), -1);
    CU_ASSERT_EQUAL(pld_elem_get_f(&u64, PLD_DT_UINT64, 0), 0x1p64);
    uint8_t u8 = 250;
    CU_ASSERT_EQUAL(pld_elem_get_i(&u8, PLD_DT_UINT8, 0), 250);
    CU_ASSERT_EQUAL(pld_elem_get_f(&u8, PLD_DT_BOOL, 0), 250.0);
    int16_t i16s[2] = {-5, 7};
    CU_ASSERT_EQUAL(pld_elem_get_i(i16s, PLD_DT_INT16, 1), 7);
    CU_ASSERT_EQUAL(pld_elem_get_f(i16s, PLD_DT_INT16, 0), -5.0);
    float fl = 1e30f;
    CU_ASSERT_EQUAL(pld_elem_get_i(&fl, PLD_DT_FP32, 0), INT64_MAX);
    fl = -2.75f;
    CU_ASSERT_EQUAL(pld_elem_get_i(&fl, PLD_DT_FP32, 0), -2);
    h = 0x3555;
    CU_ASSERT_EQUAL(pld_elem_get_f(&h, PLD_DT_FP16, 0), 0.333251953125);
    cell = 0;
    pld_elem_set_f(&cell, PLD_DT_FP64, 0, 0.1);
    CU_ASSERT_EQUAL(pld_elem_get_f(&cell, PLD_DT_FP64, 0), 0.1);
}

/* ---- matmul -------------------------------------------------------------------------- */

void test_kern_matmul(void)
{
    char err[ERRN];
    float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {7, 8, 9, 10, 11, 12}, o[4];
    pld_view_t va = v2(a, PLD_DT_FP32, 2, 3), vb = v2(b, PLD_DT_FP32, 3, 2), vo = v2(o, PLD_DT_FP32, 2, 2);
    CU_ASSERT_EQUAL(pld_k_matmul(&vo, &va, &vb, 0, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(o[0], 58.0f);
    CU_ASSERT_EQUAL(o[1], 64.0f);
    CU_ASSERT_EQUAL(o[2], 139.0f);
    CU_ASSERT_EQUAL(o[3], 154.0f);
    CU_ASSERT_EQUAL(pld_k_matmul(&vo, &va, &vb, 1, err, sizeof err), PLD_OK); /* accumulate */
    CU_ASSERT_EQUAL(o[0], 116.0f);
    CU_ASSERT_EQUAL(o[3], 308.0f);
    /* b given transposed: bt [2,3] viewed as [3,2] with strides (1, 3) */
    float bt[6] = {7, 9, 11, 8, 10, 12};
    pld_view_t vbt = vs2(bt, PLD_DT_FP32, 3, 2, 1, 3);
    CU_ASSERT_EQUAL(pld_k_matmul(&vo, &va, &vbt, 0, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(o[1], 64.0f);
    CU_ASSERT_EQUAL(o[2], 139.0f);
    /* FP16 inputs accumulate in FP32: 2048 + 1 + 1 = 2050 (FP16 sums would stay 2048) */
    uint16_t ha[3] = {0x6800, 0x3c00, 0x3c00}, hb[3] = {0x3c00, 0x3c00, 0x3c00};
    float fo[1];
    pld_view_t vha = v2(ha, PLD_DT_FP16, 1, 3), vhb = v2(hb, PLD_DT_FP16, 3, 1), vfo = v2(fo, PLD_DT_FP32, 1, 1);
    CU_ASSERT_EQUAL(pld_k_matmul(&vfo, &vha, &vhb, 0, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(fo[0], 2050.0f);
    /* BF16 inputs: 0.5*2 + 0.25*4 = 2 */
    uint16_t ba[2] = {0x3f00, 0x3e80}, bb[2] = {0x4000, 0x4080};
    pld_view_t vba = v2(ba, PLD_DT_BF16, 1, 2), vbb = v2(bb, PLD_DT_BF16, 2, 1);
    CU_ASSERT_EQUAL(pld_k_matmul(&vfo, &vba, &vbb, 0, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(fo[0], 2.0f);
    /* INT32 wraps: 65536 * 65536 = 2^32 -> 0; 2^30*2 + 2^30*2 = 2^32 -> 0 */
    int32_t ia[3] = {65536, 1 << 30, 1 << 30}, ib[3] = {65536, 2, 2}, io[2];
    pld_view_t via = v2(ia, PLD_DT_INT32, 1, 1), vib = v2(ib, PLD_DT_INT32, 1, 1), vio = v2(io, PLD_DT_INT32, 1, 1);
    CU_ASSERT_EQUAL(pld_k_matmul(&vio, &via, &vib, 0, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(io[0], 0);
    pld_view_t via2 = v2(ia + 1, PLD_DT_INT32, 1, 2), vib2 = v2(ib + 1, PLD_DT_INT32, 2, 1);
    CU_ASSERT_EQUAL(pld_k_matmul(&vio, &via2, &vib2, 0, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(io[0], 0);
    /* INT8 inputs -> INT32: (-128)(-128) + 127*127 = 16384 + 16129 */
    int8_t ca[2] = {-128, 127}, cb[2] = {-128, 127};
    pld_view_t vca = v2(ca, PLD_DT_INT8, 1, 2), vcb = v2(cb, PLD_DT_INT8, 2, 1);
    CU_ASSERT_EQUAL(pld_k_matmul(&vio, &vca, &vcb, 0, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(io[0], 32513);
    io[0] = -32513;
    CU_ASSERT_EQUAL(pld_k_matmul(&vio, &vca, &vcb, 1, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(io[0], 0);
    /* N wider than one chunk: [2,3] @ [3,300], b[k][j] = j, a rows (1,1,1) and (1,0,2) */
    static float wb[3 * 300], wo[2 * 300];
    float wa[6] = {1, 1, 1, 1, 0, 2};
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 300; j++)
            wb[k * 300 + j] = (float)j;
    pld_view_t vwa = v2(wa, PLD_DT_FP32, 2, 3), vwb = v2(wb, PLD_DT_FP32, 3, 300), vwo = v2(wo, PLD_DT_FP32, 2, 300);
    CU_ASSERT_EQUAL(pld_k_matmul(&vwo, &vwa, &vwb, 0, err, sizeof err), PLD_OK);
    int bad = 0;
    for (int j = 0; j < 300; j++)
        bad += wo[j] != 3.0f * (float)j || wo[300 + j] != 3.0f * (float)j;
    CU_ASSERT_EQUAL(bad, 0);
    /* errors: inner dims, out shape, dtypes */
    pld_view_t vbad = v2(b, PLD_DT_FP32, 2, 3);
    err[0] = '\0';
    CU_ASSERT_EQUAL(pld_k_matmul(&vo, &va, &vbad, 0, err, sizeof err), PLD_E_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "[2, 3] @ b [2, 3]"));
    pld_view_t vobad = v2(o, PLD_DT_FP32, 2, 1);
    CU_ASSERT_EQUAL(pld_k_matmul(&vobad, &va, &vb, 0, NULL, 0), PLD_E_RUNTIME);
    CU_ASSERT_EQUAL(pld_k_matmul(&vio, &vha, &vhb, 0, NULL, 0), PLD_E_RUNTIME); /* float in, int out */
    CU_ASSERT_EQUAL(pld_k_matmul(&vfo, &vha, &vbb, 0, NULL, 0), PLD_E_RUNTIME); /* FP16 @ BF16 */
    float sq[4] = {1, 2, 3, 4};
    pld_view_t vsq = v2(sq, PLD_DT_FP32, 2, 2), vsq2 = v2(o, PLD_DT_FP32, 2, 2);
    CU_ASSERT_EQUAL(pld_k_matmul(&vsq, &vsq, &vsq2, 0, NULL, 0), PLD_E_RUNTIME); /* out is a */
    CU_ASSERT_EQUAL(sq[3], 4.0f);
}

/* ---- copy / fill / alignment / errors ------------------------------------------------ */

void test_kern_copy_fill(void)
{
    char err[ERRN];
    int32_t a[12], o[12];
    for (int i = 0; i < 12; i++)
        a[i] = i;
    /* transpose copy: [3,4] -> [4,3] */
    pld_view_t at = vs2(a, PLD_DT_INT32, 4, 3, 1, 4), vo = v2(o, PLD_DT_INT32, 4, 3);
    CU_ASSERT_EQUAL(pld_k_copy(&vo, &at, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(o[0], 0);
    CU_ASSERT_EQUAL(o[1], 4);
    CU_ASSERT_EQUAL(o[2], 8);
    CU_ASSERT_EQUAL(o[3], 1);
    CU_ASSERT_EQUAL(o[11], 11);
    /* packed copy */
    pld_view_t va = v1(a, PLD_DT_INT32, 12), vo1 = v1(o, PLD_DT_INT32, 12);
    CU_ASSERT_EQUAL(pld_k_copy(&vo1, &va, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(memcmp(a, o, sizeof a), 0);
    /* FP8 is copyable as bytes; INT4 is not */
    uint8_t p[4] = {1, 2, 3, 4}, q[4] = {0};
    pld_view_t vp = v1(p, PLD_DT_FP8E4M3FN, 4), vq = v1(q, PLD_DT_FP8E4M3FN, 4);
    CU_ASSERT_EQUAL(pld_k_copy(&vq, &vp, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(q[3], 4);
    vp.dt = vq.dt = PLD_DT_INT4;
    CU_ASSERT_EQUAL(pld_k_copy(&vq, &vp, NULL, 0), PLD_E_RUNTIME);
    pld_view_t vmis = v1(o, PLD_DT_FP32, 12);
    CU_ASSERT_EQUAL(pld_k_copy(&vmis, &va, NULL, 0), PLD_E_RUNTIME);
    /* fill a strided window: only its elements change */
    float f[12];
    for (int i = 0; i < 12; i++)
        f[i] = -1;
    pld_view_t w = vs2(f + 1, PLD_DT_FP32, 2, 2, 4, 2);
    CU_ASSERT_EQUAL(pld_k_fill_f(&w, 2.5), PLD_OK);
    CU_ASSERT_EQUAL(f[0], -1.0f);
    CU_ASSERT_EQUAL(f[1], 2.5f);
    CU_ASSERT_EQUAL(f[2], -1.0f);
    CU_ASSERT_EQUAL(f[3], 2.5f);
    CU_ASSERT_EQUAL(f[5], 2.5f);
    CU_ASSERT_EQUAL(f[7], 2.5f);
    CU_ASSERT_EQUAL(f[9], -1.0f);
    pld_view_t vf = v1(f, PLD_DT_FP32, 12);
    CU_ASSERT_EQUAL(pld_k_fill_i(&vf, 16777217), PLD_OK);
    CU_ASSERT_EQUAL(f2u(f[11]), 0x4b800000u);
    uint16_t h[5];
    pld_view_t vh = v1(h, PLD_DT_FP16, 5);
    CU_ASSERT_EQUAL(pld_k_fill_f(&vh, 0.1), PLD_OK);
    CU_ASSERT_EQUAL(h[4], 0x2e66);
    int8_t i8[3];
    pld_view_t vi8 = v1(i8, PLD_DT_INT8, 3);
    CU_ASSERT_EQUAL(pld_k_fill_i(&vi8, 300), PLD_OK);
    CU_ASSERT_EQUAL(i8[2], 44);
    int32_t i32[2];
    pld_view_t vi32 = v1(i32, PLD_DT_INT32, 2);
    CU_ASSERT_EQUAL(pld_k_fill_f(&vi32, -2.7), PLD_OK);
    CU_ASSERT_EQUAL(i32[1], -2);
    CU_ASSERT_EQUAL(pld_k_fill_f(&vi32, NAN), PLD_OK);
    CU_ASSERT_EQUAL(i32[0], 0);
    uint8_t u8[2];
    pld_view_t vu8 = v1(u8, PLD_DT_UINT8, 2);
    CU_ASSERT_EQUAL(pld_k_fill_f(&vu8, 1e30), PLD_OK); /* INT64_MAX, low byte */
    CU_ASSERT_EQUAL(u8[1], 255);
    double d[3];
    pld_view_t vd = v1(d, PLD_DT_FP64, 3);
    CU_ASSERT_EQUAL(pld_k_fill_f(&vd, 0.1), PLD_OK);
    CU_ASSERT_EQUAL(d[2], 0.1);
    pld_view_t v4 = v1(u8, PLD_DT_INT4, 2);
    CU_ASSERT_EQUAL(pld_k_fill_i(&v4, 1), PLD_E_RUNTIME);
    /* rank 0 */
    int64_t s = 0;
    pld_view_t v0 = vw(&s, PLD_DT_INT64, 0, NULL);
    CU_ASSERT_EQUAL(pld_k_fill_i(&v0, -9), PLD_OK);
    CU_ASSERT_EQUAL(s, -9);
}

/* Data at odd addresses (e.g. inside a byte-addressed window): every kernel
 * must use unaligned-safe loads (UBSan checks alignment). */
void test_kern_unaligned(void)
{
    char err[ERRN];
    static unsigned char buf[3 * 64 + 16];
    unsigned char *pa = buf + 1, *pb = buf + 64 + 3, *po = buf + 128 + 5;
    for (int i = 0; i < 8; i++) {
        const float x = (float)i, y = 0.5f;
        memcpy(pa + 4 * i, &x, 4);
        memcpy(pb + 4 * i, &y, 4);
    }
    pld_view_t va = v1(pa, PLD_DT_FP32, 8), vb = v1(pb, PLD_DT_FP32, 8), vo = v1(po, PLD_DT_FP32, 8);
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_ADD, &vo, &va, &vb, err, sizeof err), PLD_OK);
    float r;
    memcpy(&r, po + 4 * 7, 4);
    CU_ASSERT_EQUAL(r, 7.5f);
    CU_ASSERT_EQUAL(pld_k_binary_scalar(PLD_K_MUL, &vo, &va, 2.0, 0, err, sizeof err), PLD_OK);
    memcpy(&r, po + 4 * 3, 4);
    CU_ASSERT_EQUAL(r, 6.0f);
    CU_ASSERT_EQUAL(pld_k_unary(PLD_K_NEG, &vo, &va, err, sizeof err), PLD_OK);
    pld_view_t v2a = v2(pa, PLD_DT_FP32, 2, 4), v2o = v2(po, PLD_DT_FP32, 2, 1);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RSUM, 1, &v2o, &v2a, err, sizeof err), PLD_OK);
    memcpy(&r, po + 4, 4);
    CU_ASSERT_EQUAL(r, 22.0f);
    pld_view_t vc = v2(po, PLD_DT_FP32, 1, 4);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RMAX, 0, &vc, &v2a, err, sizeof err), PLD_OK);
    pld_view_t vm = v2(po, PLD_DT_FP32, 2, 2), vma = v2(pa, PLD_DT_FP32, 2, 4), vmb = v2(pb, PLD_DT_FP32, 4, 2);
    CU_ASSERT_EQUAL(pld_k_matmul(&vm, &vma, &vmb, 0, err, sizeof err), PLD_OK);
    memcpy(&r, po, 4);
    CU_ASSERT_EQUAL(r, 3.0f); /* (0+1+2+3) * 0.5 */
    pld_view_t vi64 = v1(po, PLD_DT_INT64, 4), vh = v1(pb, PLD_DT_FP16, 4), va4 = v1(pa, PLD_DT_FP32, 4);
    CU_ASSERT_EQUAL(pld_k_cast(&vi64, &va4, PLD_R_RINT, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(pld_k_cast(&vh, &va4, PLD_R_RINT, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(pld_k_cast(&vi64, &vh, PLD_R_RINT, err, sizeof err), PLD_OK);
    int64_t l;
    memcpy(&l, po + 8 * 3, 8);
    CU_ASSERT_EQUAL(l, 3);
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_MUL, &vi64, &vi64, &vi64, err, sizeof err), PLD_OK);
    memcpy(&l, po + 8 * 3, 8);
    CU_ASSERT_EQUAL(l, 9);
    CU_ASSERT_EQUAL(pld_k_fill_i(&vi64, 5), PLD_OK);
    CU_ASSERT_EQUAL(pld_elem_get_i(po, PLD_DT_INT64, 2), 5);
    pld_elem_set_f(pb + 1, PLD_DT_FP64, 0, 0.25);
    CU_ASSERT_EQUAL(pld_elem_get_f(pb + 1, PLD_DT_FP64, 0), 0.25);
}

/* pld_kern_ext.c: the sign rules of fmod / rem, integer errors, shifts past
 * the width, NaN compares, the packed mask and select (docs/ops-numerics.md). */
void test_kern_ext_ops(void)
{
    char err[ERRN];
    float a[4] = {5.5f, -5.5f, 5.5f, -5.5f}, b[4] = {2.0f, 2.0f, -2.0f, -2.0f}, o[4];
    pld_view_t va = v1(a, PLD_DT_FP32, 4), vb = v1(b, PLD_DT_FP32, 4), vo = v1(o, PLD_DT_FP32, 4);
    CU_ASSERT_EQUAL(pld_k_ext(PLD_KX_FMOD, &vo, &va, &vb, NULL, err, sizeof err), PLD_OK);
    CU_ASSERT(o[0] == 1.5f && o[1] == -1.5f && o[2] == 1.5f && o[3] == -1.5f); /* the dividend's sign */
    CU_ASSERT_EQUAL(pld_k_ext(PLD_KX_REM, &vo, &va, &vb, NULL, err, sizeof err), PLD_OK);
    CU_ASSERT(o[0] == 1.5f && o[1] == 0.5f && o[2] == -0.5f && o[3] == -1.5f); /* the divisor's sign */
    int32_t ia[4] = {7, -7, INT32_MIN, 1}, ib[4] = {-2, 2, -1, 0}, io[4];
    pld_view_t via = v1(ia, PLD_DT_INT32, 4), vib = v1(ib, PLD_DT_INT32, 4), vio = v1(io, PLD_DT_INT32, 4);
    err[0] = '\0';
    CU_ASSERT_EQUAL(pld_k_ext(PLD_KX_REM, &vio, &via, &vib, NULL, err, sizeof err), PLD_E_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "division by zero"));
    ib[3] = 3;
    CU_ASSERT_EQUAL(pld_k_ext(PLD_KX_REM, &vio, &via, &vib, NULL, err, sizeof err), PLD_OK);
    CU_ASSERT(io[0] == -1 && io[1] == 1 && io[2] == 0 && io[3] == 1);
    CU_ASSERT_EQUAL(pld_k_ext(PLD_KX_FMOD, &vio, &via, &vib, NULL, err, sizeof err), PLD_OK);
    CU_ASSERT(io[0] == 1 && io[1] == -1 && io[2] == 0 && io[3] == 1);
    /* shifts: past the width, arithmetic vs logical, negative counts */
    int16_t sa[4] = {-8, -8, 3, 1}, sb[4] = {1, 16, 20, 15}, so[4];
    pld_view_t vsa = v1(sa, PLD_DT_INT16, 4), vsb = v1(sb, PLD_DT_INT16, 4), vso = v1(so, PLD_DT_INT16, 4);
    CU_ASSERT_EQUAL(pld_k_ext(PLD_KX_SHR, &vso, &vsa, &vsb, NULL, err, sizeof err), PLD_OK);
    CU_ASSERT(so[0] == -4 && so[1] == -1 && so[2] == 0 && so[3] == 0);
    CU_ASSERT_EQUAL(pld_k_ext(PLD_KX_SHL, &vso, &vsa, &vsb, NULL, err, sizeof err), PLD_OK);
    CU_ASSERT(so[0] == -16 && so[1] == 0 && so[2] == 0 && so[3] == INT16_MIN);
    uint16_t ua[2] = {0x8000, 0xffff}, uo[2];
    pld_view_t vua = v1(ua, PLD_DT_UINT16, 2), vuo = v1(uo, PLD_DT_UINT16, 2);
    CU_ASSERT_EQUAL(pld_k_ext_scalar(PLD_KX_SHR, &vuo, &vua, 0, 15, NULL, err, sizeof err), PLD_OK);
    CU_ASSERT(uo[0] == 1 && uo[1] == 1);
    CU_ASSERT_EQUAL(pld_k_ext_scalar(PLD_KX_SHR, &vuo, &vua, 0, 1000, NULL, err, sizeof err), PLD_OK);
    CU_ASSERT(uo[0] == 0 && uo[1] == 0);
    CU_ASSERT_EQUAL(pld_k_ext_scalar(PLD_KX_SHL, &vuo, &vua, 0, -1, NULL, err, sizeof err), PLD_E_RUNTIME);
    sb[0] = -1;
    CU_ASSERT_EQUAL(pld_k_ext(PLD_KX_SHL, &vso, &vsa, &vsb, NULL, err, sizeof err), PLD_E_RUNTIME);
    CU_ASSERT_EQUAL(pld_k_ext(PLD_KX_AND, &vo, &va, &vb, NULL, err, sizeof err), PLD_E_RUNTIME); /* floats */
    /* compares: NaN is unordered; the packed mask, LSB first; select from it */
    float c[10] = {1, 2, 3, NAN, 5, 6, 7, 8, 9, 10}, d[10] = {1, 1, 4, NAN, 5, 0, 8, 8, 0, 11};
    uint8_t m[2 * 32];
    const int64_t cs[2] = {1, 10}, ms[2] = {1, 32};
    pld_view_t vc = vw(c, PLD_DT_FP32, 2, cs), vd = vw(d, PLD_DT_FP32, 2, cs), vm = vw(m, PLD_DT_UINT8, 2, ms);
    CU_ASSERT_EQUAL(pld_k_cmp_mask(PLD_KX_GE, &vm, &vc, &vd, err, sizeof err), PLD_OK);
    /* c >= d: 1 1 0 0(NaN) 1 1 0 1 1 0 -> bits 0,1,4,5,7 of byte 0; bit 0 of byte 1 */
    CU_ASSERT_EQUAL(m[0], 0xb3);
    CU_ASSERT_EQUAL(m[1], 0x01);
    CU_ASSERT_EQUAL(m[2], 0);
    float s[10];
    pld_view_t vs = vw(s, PLD_DT_FP32, 2, cs);
    CU_ASSERT_EQUAL(pld_k_select(&vs, &vm, &vc, &vd, err, sizeof err), PLD_OK);
    CU_ASSERT(s[0] == 1 && s[2] == 4 && isnan(s[3]) && s[5] == 6 && s[6] == 8 && s[8] == 9 && s[9] == 11);
    CU_ASSERT_EQUAL(pld_k_ext(PLD_KX_NE, &vs, &vc, &vd, NULL, err, sizeof err), PLD_OK);
    CU_ASSERT(s[0] == 0 && s[1] == 1 && s[3] == 1);
}

void test_kern_dtype_errors(void)
{
    char err[ERRN];
    uint8_t x[8] = {0}, y[8] = {0}, z[8];
    pld_view_t vx = v1(x, PLD_DT_FP8E5M2, 8), vy = v1(y, PLD_DT_FP8E5M2, 8), vz = v1(z, PLD_DT_FP8E5M2, 8);
    err[0] = '\0';
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_ADD, &vz, &vx, &vy, err, sizeof err), PLD_E_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "unsupported dtype FP8E5M2"));
    vz.dt = PLD_DT_INT8;
    vx.dt = PLD_DT_INT8;
    vy.dt = PLD_DT_UINT8;
    err[0] = '\0';
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_ADD, &vz, &vx, &vy, err, sizeof err), PLD_E_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "dtype mismatch"));
    vy.dt = PLD_DT_INT8;
    CU_ASSERT_EQUAL(pld_k_binary((pld_binop_k_t)42, &vz, &vx, &vy, NULL, 0), PLD_E_RUNTIME);
    CU_ASSERT_EQUAL(pld_k_unary((pld_unop_k_t)42, &vz, &vx, NULL, 0), PLD_E_RUNTIME);
    CU_ASSERT_EQUAL(pld_k_reduce((pld_redop_k_t)42, 1, &vz, &vx, NULL, 0), PLD_E_RUNTIME);
    CU_ASSERT_EQUAL(pld_k_cast(&vz, &vx, (pld_round_k_t)42, NULL, 0), PLD_E_RUNTIME);
    pld_view_t bad = vx;
    bad.rank = PLD_MAX_RANK + 1;
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_ADD, &vz, &bad, &vy, NULL, 0), PLD_E_RUNTIME);
    /* a tiny error buffer is truncated, not overrun */
    char tiny[8];
    CU_ASSERT_EQUAL(pld_k_unary(PLD_K_EXP, &vz, &vx, tiny, sizeof tiny), PLD_E_RUNTIME);
    CU_ASSERT_EQUAL(strlen(tiny), sizeof tiny - 1);
}

static CU_TestInfo kern_tests[] = {
    {"test_kern_views", test_kern_views},
    {"test_kern_f16_spec_patterns", test_kern_f16_spec_patterns},
    {"test_kern_bf16_spec_patterns", test_kern_bf16_spec_patterns},
    {"test_kern_f16_roundtrip_exhaustive", test_kern_f16_roundtrip_exhaustive},
    {"test_kern_bf16_roundtrip_exhaustive", test_kern_bf16_roundtrip_exhaustive},
    {"test_kern_f16_bf16_all_ties", test_kern_f16_bf16_all_ties},
    {"test_kern_f16_bf16_random_vs_oracle", test_kern_f16_bf16_random_vs_oracle},
    {"test_kern_elem_access", test_kern_elem_access},
    {"test_kern_binary_fp32_ops", test_kern_binary_fp32_ops},
    {"test_kern_binary_fp32_packed_inplace", test_kern_binary_fp32_packed_inplace},
    {"test_kern_binary_broadcast", test_kern_binary_broadcast},
    {"test_kern_binary_strided_ragged", test_kern_binary_strided_ragged},
    {"test_kern_binary_fp16_bf16_rounding", test_kern_binary_fp16_bf16_rounding},
    {"test_kern_binary_fp16_bf16_random", test_kern_binary_fp16_bf16_random},
    {"test_kern_binary_nan_inf", test_kern_binary_nan_inf},
    {"test_kern_binary_fp32_simd_sets", test_kern_binary_fp32_simd_sets},
    {"test_kern_fold_orders", test_kern_fold_orders},
    {"test_kern_int_wrap", test_kern_int_wrap},
    {"test_kern_int_div_by_zero", test_kern_int_div_by_zero},
    {"test_kern_binary_scalar", test_kern_binary_scalar},
    {"test_kern_unary", test_kern_unary},
    {"test_kern_reduce_rows", test_kern_reduce_rows},
    {"test_kern_reduce_cols", test_kern_reduce_cols},
    {"test_kern_reduce_fp16_accum", test_kern_reduce_fp16_accum},
    {"test_kern_reduce_errors", test_kern_reduce_errors},
    {"test_kern_reduce_prod_arg", test_kern_reduce_prod_arg},
    {"test_kern_cast_int_modes", test_kern_cast_int_modes},
    {"test_kern_cast_saturation", test_kern_cast_saturation},
    {"test_kern_cast_int_to_float", test_kern_cast_int_to_float},
    {"test_kern_cast_int_to_int_and_bool", test_kern_cast_int_to_int_and_bool},
    {"test_kern_cast_float_special", test_kern_cast_float_special},
    {"test_kern_cast_modes_vs_oracle", test_kern_cast_modes_vs_oracle},
    {"test_kern_cast_strided", test_kern_cast_strided},
    {"test_kern_matmul", test_kern_matmul},
    {"test_kern_copy_fill", test_kern_copy_fill},
    {"test_kern_unaligned", test_kern_unaligned},
    {"test_kern_dtype_errors", test_kern_dtype_errors},
    {"test_kern_ext_ops", test_kern_ext_ops},
    {"test_kern_layout_valid", test_kern_layout_valid},
    {"test_kern_layout_fillpad", test_kern_layout_fillpad},
    {"test_kern_layout_gather_scatter", test_kern_layout_gather_scatter},
    {"test_kern_layout_sorts", test_kern_layout_sorts},
    {"test_kern_layout_gm_family", test_kern_layout_gm_family},
    {"test_kern_matmul_blocked", test_kern_matmul_blocked},
    {"test_kern_reduce_vec", test_kern_reduce_vec},
    {"test_kern_reduce_vec16", test_kern_reduce_vec16},
    {"test_kern_reduce_vec_int", test_kern_reduce_vec_int},
    CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
    {"kern", NULL, NULL, NULL, NULL, kern_tests},
    CU_SUITE_INFO_NULL,
};

int main(void)
{
    return pld_test_main(suites);
}
