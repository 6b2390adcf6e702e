/* test_kern_cast.c - the numeric-kernel suite (CTest `kern`, table in test_kern.c):
 * casts (every rounding mode against the table oracle, saturation,
 * integer and special values, strides). */
#include "test_kern_util.h"

/* ---- cast -------------------------------------------------------------------------- */

/* One element through pld_k_cast. */
static pld_status_t cast1(pld_dtype_t dt_out, void *out, pld_dtype_t dt_in, const void *in, pld_round_k_t m)
{
    pld_view_t vo = v1(out, dt_out, 1), vi = v1((void *)in, dt_in, 1);
    return pld_k_cast(&vo, &vi, m, NULL, 0);
}

/* Float -> integer, every mode, hand table (ties and directed modes). */
void test_kern_cast_int_modes(void)
{
    static const struct {
        double in;
        int64_t want[7]; /* NONE RINT ROUND FLOOR CEIL TRUNC ODD */
    } t[] = {
        {2.5, {2, 2, 3, 2, 3, 2, 3}},        {-2.5, {-2, -2, -3, -3, -2, -2, -3}},
        {3.5, {4, 4, 4, 3, 4, 3, 3}},        {-3.5, {-4, -4, -4, -4, -3, -3, -3}},
        {0.5, {0, 0, 1, 0, 1, 0, 1}},        {-0.5, {0, 0, -1, -1, 0, 0, -1}},
        {1.0, {1, 1, 1, 1, 1, 1, 1}},        {-7.0, {-7, -7, -7, -7, -7, -7, -7}},
        {2.25, {2, 2, 2, 2, 3, 2, 3}},       {2.75, {3, 3, 3, 2, 3, 2, 3}},
        {-2.75, {-3, -3, -3, -3, -2, -2, -3}}, {4.0000001, {4, 4, 4, 4, 5, 4, 5}},
        {0.0, {0, 0, 0, 0, 0, 0, 0}},        {1e-300, {0, 0, 0, 0, 1, 0, 1}},
    };
    int bad = 0;
    for (int k = 0; k < NELEM(t); k++)
        for (int m = 0; m < 7; m++) {
            int64_t o64 = 99;
            int32_t o32 = 99;
            CU_ASSERT_EQUAL(cast1(PLD_DT_INT64, &o64, PLD_DT_FP64, &t[k].in, all_modes[m]), PLD_OK);
            bad += o64 != t[k].want[m];
            const float f = (float)t[k].in;
            if ((double)f == t[k].in) { /* the same through FP32 -> INT32 */
                CU_ASSERT_EQUAL(cast1(PLD_DT_INT32, &o32, PLD_DT_FP32, &f, all_modes[m]), PLD_OK);
                bad += o32 != t[k].want[m];
            }
            if (bad && bad < 3)
                fprintf(stderr, "\ncast %g mode %s: %lld / %d, want %lld\n", t[k].in, mode_names[m], (long long)o64,
                        o32, (long long)t[k].want[m]);
        }
    CU_ASSERT_EQUAL(bad, 0);
    /* FP16 -> INT8: 0x4100 = 2.5 */
    uint16_t h = 0x4100;
    int8_t i8;
    CU_ASSERT_EQUAL(cast1(PLD_DT_INT8, &i8, PLD_DT_FP16, &h, PLD_R_RINT), PLD_OK);
    CU_ASSERT_EQUAL(i8, 2);
    CU_ASSERT_EQUAL(cast1(PLD_DT_INT8, &i8, PLD_DT_FP16, &h, PLD_R_ROUND), PLD_OK);
    CU_ASSERT_EQUAL(i8, 3);
    h = 0xc100; /* -2.5 */
    CU_ASSERT_EQUAL(cast1(PLD_DT_INT8, &i8, PLD_DT_FP16, &h, PLD_R_FLOOR), PLD_OK);
    CU_ASSERT_EQUAL(i8, -3);
    CU_ASSERT_EQUAL(cast1(PLD_DT_INT8, &i8, PLD_DT_FP16, &h, PLD_R_CEIL), PLD_OK);
    CU_ASSERT_EQUAL(i8, -2);
    CU_ASSERT_EQUAL(cast1(PLD_DT_INT8, &i8, PLD_DT_FP16, &h, PLD_R_TRUNC), PLD_OK);
    CU_ASSERT_EQUAL(i8, -2);
}

void test_kern_cast_saturation(void)
{
    float f;
    int8_t i8;
    uint8_t u8;
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    double d;
#define SAT(OUTDT, OUTV, INDT, INV, IN, MODE, WANT)                                                           \
    do {                                                                                                       \
        INV = (IN);                                                                                            \
        CU_ASSERT_EQUAL(cast1(OUTDT, &OUTV, INDT, &INV, MODE), PLD_OK);                                        \
        CU_ASSERT_EQUAL(OUTV, WANT);                                                                           \
    } while (0)
    SAT(PLD_DT_INT8, i8, PLD_DT_FP32, f, 300.0f, PLD_R_RINT, 127);
    SAT(PLD_DT_INT8, i8, PLD_DT_FP32, f, -300.0f, PLD_R_RINT, -128);
    SAT(PLD_DT_INT8, i8, PLD_DT_FP32, f, NAN, PLD_R_RINT, 0);
    SAT(PLD_DT_INT8, i8, PLD_DT_FP32, f, INFINITY, PLD_R_TRUNC, 127);
    SAT(PLD_DT_INT8, i8, PLD_DT_FP32, f, -INFINITY, PLD_R_FLOOR, -128);
    SAT(PLD_DT_INT8, i8, PLD_DT_FP32, f, 127.4f, PLD_R_CEIL, 127);
    SAT(PLD_DT_INT8, i8, PLD_DT_FP32, f, -128.6f, PLD_R_RINT, -128);
    SAT(PLD_DT_UINT8, u8, PLD_DT_FP32, f, -5.0f, PLD_R_RINT, 0);
    SAT(PLD_DT_UINT8, u8, PLD_DT_FP32, f, 256.0f, PLD_R_RINT, 255);
    SAT(PLD_DT_UINT8, u8, PLD_DT_FP32, f, 254.5f, PLD_R_RINT, 254);
    SAT(PLD_DT_UINT8, u8, PLD_DT_FP32, f, 254.5f, PLD_R_ROUND, 255);
    SAT(PLD_DT_INT32, i32, PLD_DT_FP32, f, 3e9f, PLD_R_RINT, INT32_MAX);
    SAT(PLD_DT_INT32, i32, PLD_DT_FP32, f, -3e9f, PLD_R_RINT, INT32_MIN);
    SAT(PLD_DT_INT32, i32, PLD_DT_FP32, f, 2147483520.0f, PLD_R_RINT, 2147483520); /* largest float < 2^31 */
    SAT(PLD_DT_INT32, i32, PLD_DT_FP32, f, 2147483648.0f, PLD_R_RINT, INT32_MAX);
    SAT(PLD_DT_UINT32, u32, PLD_DT_FP64, d, 4294967295.6, PLD_R_RINT, 4294967295u);
    SAT(PLD_DT_UINT32, u32, PLD_DT_FP64, d, 4294967295.6, PLD_R_TRUNC, 4294967295u);
    SAT(PLD_DT_UINT32, u32, PLD_DT_FP64, d, -0.4, PLD_R_RINT, 0u);
    SAT(PLD_DT_INT64, i64, PLD_DT_FP64, d, 1e19, PLD_R_RINT, INT64_MAX);
    SAT(PLD_DT_INT64, i64, PLD_DT_FP64, d, -1e19, PLD_R_RINT, INT64_MIN);
    SAT(PLD_DT_INT64, i64, PLD_DT_FP64, d, -9223372036854775808.0, PLD_R_RINT, INT64_MIN);
    SAT(PLD_DT_INT64, i64, PLD_DT_FP64, d, 9223372036854775807.0, PLD_R_RINT, INT64_MAX); /* = 2^63 */
    SAT(PLD_DT_INT64, i64, PLD_DT_FP64, d, 9223372036854774784.0, PLD_R_RINT, 9223372036854774784LL);
    SAT(PLD_DT_INT64, i64, PLD_DT_FP64, d, NAN, PLD_R_ODD, 0);
    SAT(PLD_DT_INDEX, i64, PLD_DT_FP32, f, -1e30f, PLD_R_CEIL, INT64_MIN);
    SAT(PLD_DT_UINT64, u64, PLD_DT_FP64, d, 2e19, PLD_R_RINT, UINT64_MAX);
    SAT(PLD_DT_UINT64, u64, PLD_DT_FP64, d, -1.0, PLD_R_RINT, 0u);
    SAT(PLD_DT_UINT64, u64, PLD_DT_FP64, d, 18446744073709549568.0, PLD_R_RINT, 0xfffffffffffff800u);
    SAT(PLD_DT_UINT64, u64, PLD_DT_FP64, d, 18446744073709551616.0, PLD_R_RINT, UINT64_MAX);
#undef SAT
}

void test_kern_cast_int_to_float(void)
{
    int32_t i32;
    int64_t i64;
    uint64_t u64;
    int8_t i8;
    uint32_t w;
    uint16_t h;
    double d;
    i32 = 16777217;
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP32, &w, PLD_DT_INT32, &i32, PLD_R_NONE), PLD_OK);
    CU_ASSERT_EQUAL(w, 0x4b800000u); /* 2^24: tie -> even */
    i32 = 16777219;
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP32, &w, PLD_DT_INT32, &i32, PLD_R_NONE), PLD_OK);
    CU_ASSERT_EQUAL(w, 0x4b800002u); /* 16777220 */
    i32 = -3;
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP32, &w, PLD_DT_INT32, &i32, PLD_R_FLOOR), PLD_OK);
    CU_ASSERT_EQUAL(w, 0xc0400000u);
    i64 = ((int64_t)1 << 53) + 1;
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP64, &d, PLD_DT_INT64, &i64, PLD_R_NONE), PLD_OK);
    CU_ASSERT_EQUAL(d, 0x1p53);
    /* one rounding, not two: 2^31 + 2^23 + 1 -> BF16 2^31 + 2^24 (0x4F01);
     * via FP32 it would be a tie and give 2^31 (0x4F00) */
    i64 = ((int64_t)1 << 31) + ((int64_t)1 << 23) + 1;
    CU_ASSERT_EQUAL(cast1(PLD_DT_BF16, &h, PLD_DT_INT64, &i64, PLD_R_NONE), PLD_OK);
    CU_ASSERT_EQUAL(h, 0x4f01);
    i32 = 65519;
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP16, &h, PLD_DT_INT32, &i32, PLD_R_NONE), PLD_OK);
    CU_ASSERT_EQUAL(h, 0x7bff);
    i32 = 65520;
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP16, &h, PLD_DT_INT32, &i32, PLD_R_NONE), PLD_OK);
    CU_ASSERT_EQUAL(h, 0x7c00);
    i32 = -2049; /* between -2048 and -2050: tie -> even mantissa (-2048) */
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP16, &h, PLD_DT_INT32, &i32, PLD_R_NONE), PLD_OK);
    CU_ASSERT_EQUAL(h, 0xe800);
    u64 = UINT64_MAX;
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP32, &w, PLD_DT_UINT64, &u64, PLD_R_NONE), PLD_OK);
    CU_ASSERT_EQUAL(w, 0x5f800000u); /* 2^64 */
    i64 = INT64_MIN;
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP32, &w, PLD_DT_INT64, &i64, PLD_R_NONE), PLD_OK);
    CU_ASSERT_EQUAL(w, 0xdf000000u); /* -2^63 */
    i8 = -128;
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP16, &h, PLD_DT_INT8, &i8, PLD_R_NONE), PLD_OK);
    CU_ASSERT_EQUAL(h, 0xd800);
    i8 = 0;
    CU_ASSERT_EQUAL(cast1(PLD_DT_BF16, &h, PLD_DT_INT8, &i8, PLD_R_NONE), PLD_OK);
    CU_ASSERT_EQUAL(h, 0x0000);
    uint8_t bl = 1;
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP32, &w, PLD_DT_BOOL, &bl, PLD_R_NONE), PLD_OK);
    CU_ASSERT_EQUAL(w, 0x3f800000u);
}

void test_kern_cast_int_to_int_and_bool(void)
{
    int32_t i32;
    int8_t i8;
    uint16_t u16;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    uint8_t b;
    float f;
    i32 = 300;
    CU_ASSERT_EQUAL(cast1(PLD_DT_INT8, &i8, PLD_DT_INT32, &i32, PLD_R_NONE), PLD_OK);
    CU_ASSERT_EQUAL(i8, 44);
    i32 = -1;
    CU_ASSERT_EQUAL(cast1(PLD_DT_UINT16, &u16, PLD_DT_INT32, &i32, PLD_R_NONE), PLD_OK);
    CU_ASSERT_EQUAL(u16, 65535);
    u32 = 0xffffffffu;
    CU_ASSERT_EQUAL(cast1(PLD_DT_INT64, &i64, PLD_DT_UINT32, &u32, PLD_R_NONE), PLD_OK);
    CU_ASSERT_EQUAL(i64, 4294967295LL);
    i8 = -1;
    CU_ASSERT_EQUAL(cast1(PLD_DT_UINT64, &u64, PLD_DT_INT8, &i8, PLD_R_NONE), PLD_OK);
    CU_ASSERT_EQUAL(u64, UINT64_MAX);
    i64 = -42;
    CU_ASSERT_EQUAL(cast1(PLD_DT_INDEX, &u64, PLD_DT_INT64, &i64, PLD_R_NONE), PLD_OK);
    CU_ASSERT_EQUAL((int64_t)u64, -42);
    CU_ASSERT_EQUAL(cast1(PLD_DT_INT32, &i32, PLD_DT_INDEX, &i64, PLD_R_NONE), PLD_OK);
    CU_ASSERT_EQUAL(i32, -42);
    /* BOOL targets follow C's _Bool: nonzero -> 1 */
    i32 = 256;
    CU_ASSERT_EQUAL(cast1(PLD_DT_BOOL, &b, PLD_DT_INT32, &i32, PLD_R_NONE), PLD_OK);
    CU_ASSERT_EQUAL(b, 1);
    i32 = 0;
    CU_ASSERT_EQUAL(cast1(PLD_DT_BOOL, &b, PLD_DT_INT32, &i32, PLD_R_NONE), PLD_OK);
    CU_ASSERT_EQUAL(b, 0);
    u64 = (uint64_t)1 << 40;
    CU_ASSERT_EQUAL(cast1(PLD_DT_BOOL, &b, PLD_DT_UINT64, &u64, PLD_R_NONE), PLD_OK);
    CU_ASSERT_EQUAL(b, 1);
    f = 0.5f;
    CU_ASSERT_EQUAL(cast1(PLD_DT_BOOL, &b, PLD_DT_FP32, &f, PLD_R_RINT), PLD_OK);
    CU_ASSERT_EQUAL(b, 1);
    f = -0.0f;
    CU_ASSERT_EQUAL(cast1(PLD_DT_BOOL, &b, PLD_DT_FP32, &f, PLD_R_RINT), PLD_OK);
    CU_ASSERT_EQUAL(b, 0);
    f = NAN;
    CU_ASSERT_EQUAL(cast1(PLD_DT_BOOL, &b, PLD_DT_FP32, &f, PLD_R_RINT), PLD_OK);
    CU_ASSERT_EQUAL(b, 1);
    uint8_t u8 = 7;
    CU_ASSERT_EQUAL(cast1(PLD_DT_BOOL, &b, PLD_DT_UINT8, &u8, PLD_R_NONE), PLD_OK);
    CU_ASSERT_EQUAL(b, 1);
    b = 1;
    CU_ASSERT_EQUAL(cast1(PLD_DT_INT32, &i32, PLD_DT_BOOL, &b, PLD_R_NONE), PLD_OK);
    CU_ASSERT_EQUAL(i32, 1);
}

void test_kern_cast_float_special(void)
{
    float f;
    uint16_t h;
    uint32_t w;
    double d;
    /* FP32 -> FP16, directed modes at the top of the range */
    f = 65520.0f;
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP16, &h, PLD_DT_FP32, &f, PLD_R_RINT), PLD_OK);
    CU_ASSERT_EQUAL(h, 0x7c00);
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP16, &h, PLD_DT_FP32, &f, PLD_R_FLOOR), PLD_OK);
    CU_ASSERT_EQUAL(h, 0x7bff);
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP16, &h, PLD_DT_FP32, &f, PLD_R_TRUNC), PLD_OK);
    CU_ASSERT_EQUAL(h, 0x7bff);
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP16, &h, PLD_DT_FP32, &f, PLD_R_ODD), PLD_OK);
    CU_ASSERT_EQUAL(h, 0x7bff);
    f = 65504.5f;
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP16, &h, PLD_DT_FP32, &f, PLD_R_CEIL), PLD_OK);
    CU_ASSERT_EQUAL(h, 0x7c00);
    f = -70000.0f;
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP16, &h, PLD_DT_FP32, &f, PLD_R_FLOOR), PLD_OK);
    CU_ASSERT_EQUAL(h, 0xfc00);
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP16, &h, PLD_DT_FP32, &f, PLD_R_CEIL), PLD_OK);
    CU_ASSERT_EQUAL(h, 0xfbff);
    f = 1e6f;
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP16, &h, PLD_DT_FP32, &f, PLD_R_ROUND), PLD_OK);
    CU_ASSERT_EQUAL(h, 0x7c00);
    /* inf, NaN and -0 in every mode */
    for (int m = 0; m < 7; m++) {
        f = INFINITY;
        CU_ASSERT_EQUAL(cast1(PLD_DT_FP16, &h, PLD_DT_FP32, &f, all_modes[m]), PLD_OK);
        CU_ASSERT_EQUAL(h, 0x7c00);
        f = -INFINITY;
        CU_ASSERT_EQUAL(cast1(PLD_DT_BF16, &h, PLD_DT_FP32, &f, all_modes[m]), PLD_OK);
        CU_ASSERT_EQUAL(h, 0xff80);
        f = NAN;
        CU_ASSERT_EQUAL(cast1(PLD_DT_FP16, &h, PLD_DT_FP32, &f, all_modes[m]), PLD_OK);
        CU_ASSERT_TRUE(is_nan16(h));
        d = -NAN;
        CU_ASSERT_EQUAL(cast1(PLD_DT_BF16, &h, PLD_DT_FP64, &d, all_modes[m]), PLD_OK);
        CU_ASSERT_TRUE(is_nanbf(h) && (h & 0x8000));
        CU_ASSERT_EQUAL(cast1(PLD_DT_FP32, &w, PLD_DT_FP64, &d, all_modes[m]), PLD_OK);
        CU_ASSERT_TRUE(isnan(u2f(w)));
        f = -0.0f;
        CU_ASSERT_EQUAL(cast1(PLD_DT_FP16, &h, PLD_DT_FP32, &f, all_modes[m]), PLD_OK);
        CU_ASSERT_EQUAL(h, 0x8000);
    }
    /* FP64 -> FP32 */
    d = 1.0 + 0x1p-24;
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP32, &w, PLD_DT_FP64, &d, PLD_R_RINT), PLD_OK);
    CU_ASSERT_EQUAL(w, 0x3f800000u);
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP32, &w, PLD_DT_FP64, &d, PLD_R_CEIL), PLD_OK);
    CU_ASSERT_EQUAL(w, 0x3f800001u);
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP32, &w, PLD_DT_FP64, &d, PLD_R_ODD), PLD_OK);
    CU_ASSERT_EQUAL(w, 0x3f800001u);
    d = 1.0 + 0x1p-30;
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP32, &w, PLD_DT_FP64, &d, PLD_R_ODD), PLD_OK);
    CU_ASSERT_EQUAL(w, 0x3f800001u); /* inexact: lowest bit set */
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP32, &w, PLD_DT_FP64, &d, PLD_R_TRUNC), PLD_OK);
    CU_ASSERT_EQUAL(w, 0x3f800000u);
    d = 1.5;
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP32, &w, PLD_DT_FP64, &d, PLD_R_ODD), PLD_OK);
    CU_ASSERT_EQUAL(w, 0x3fc00000u); /* exact: unchanged */
    d = 1e300;
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP32, &w, PLD_DT_FP64, &d, PLD_R_RINT), PLD_OK);
    CU_ASSERT_EQUAL(w, 0x7f800000u);
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP32, &w, PLD_DT_FP64, &d, PLD_R_TRUNC), PLD_OK);
    CU_ASSERT_EQUAL(w, 0x7f7fffffu);
    d = -1e-300;
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP32, &w, PLD_DT_FP64, &d, PLD_R_FLOOR), PLD_OK);
    CU_ASSERT_EQUAL(w, 0x80000001u); /* smallest negative subnormal */
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP32, &w, PLD_DT_FP64, &d, PLD_R_RINT), PLD_OK);
    CU_ASSERT_EQUAL(w, 0x80000000u);
    /* widening is exact */
    h = 0x0001;
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP64, &d, PLD_DT_FP16, &h, PLD_R_FLOOR), PLD_OK);
    CU_ASSERT_EQUAL(d, 0x1p-24);
    h = 0x3555;
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP32, &w, PLD_DT_FP16, &h, PLD_R_NONE), PLD_OK);
    CU_ASSERT_EQUAL(u2f(w), 0.333251953125f);
    h = 0x447a;
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP32, &w, PLD_DT_BF16, &h, PLD_R_NONE), PLD_OK);
    CU_ASSERT_EQUAL(u2f(w), 1000.0f);
    /* FP16 -> BF16 and back, hand values: 0x3C01 (1 + 2^-10) -> BF16 1.0 (RNE), 0x3F81 (CEIL) */
    h = 0x3c01;
    uint16_t b;
    CU_ASSERT_EQUAL(cast1(PLD_DT_BF16, &b, PLD_DT_FP16, &h, PLD_R_RINT), PLD_OK);
    CU_ASSERT_EQUAL(b, 0x3f80);
    CU_ASSERT_EQUAL(cast1(PLD_DT_BF16, &b, PLD_DT_FP16, &h, PLD_R_CEIL), PLD_OK);
    CU_ASSERT_EQUAL(b, 0x3f81);
    b = 0x7f7f; /* BF16 max -> FP16 overflow */
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP16, &h, PLD_DT_BF16, &b, PLD_R_RINT), PLD_OK);
    CU_ASSERT_EQUAL(h, 0x7c00);
    CU_ASSERT_EQUAL(cast1(PLD_DT_FP16, &h, PLD_DT_BF16, &b, PLD_R_TRUNC), PLD_OK);
    CU_ASSERT_EQUAL(h, 0x7bff);
}

/* Cast kernel against the table oracle for every rounding mode:
 * exhaustive FP16 -> BF16 and BF16 -> FP16, random FP64/FP32 -> FP16/BF16
 * (with exact midpoints and their neighbours), random FP64 -> FP32. */
void test_kern_cast_modes_vs_oracle(void)
{
    enum { N = 65536, R = 20000 };
    static uint16_t src16[N], out16[N];
    static double srcd[R];
    static float srcf[R];
    static uint32_t out32[R];
    char err[ERRN];
    tables_init();
    for (int i = 0; i < N; i++)
        src16[i] = (uint16_t)i;
    int bad = 0;
    for (int m = 0; m < 7; m++) {
        const pld_round_k_t mode = all_modes[m];
        pld_view_t vs = v1(src16, PLD_DT_FP16, N), vo = v1(out16, PLD_DT_BF16, N);
        CU_ASSERT_EQUAL(pld_k_cast(&vo, &vs, mode, err, sizeof err), PLD_OK);
        for (int i = 0; i < N; i++) {
            const uint16_t h = (uint16_t)i;
            if (is_nan16(h)) {
                bad += !is_nanbf(out16[i]) || (out16[i] & 0x8000) != (h & 0x8000);
                continue;
            }
            const uint16_t want = oraclebf(dec16(h), mode);
            if (out16[i] != want && bad++ < 5)
                fprintf(stderr, "\nFP16 0x%04x -> BF16 %s: 0x%04x, want 0x%04x\n", h, mode_names[m], out16[i], want);
        }
        vs.dt = PLD_DT_BF16;
        vo.dt = PLD_DT_FP16;
        CU_ASSERT_EQUAL(pld_k_cast(&vo, &vs, mode, err, sizeof err), PLD_OK);
        for (int i = 0; i < N; i++) {
            const uint16_t b = (uint16_t)i;
            if (is_nanbf(b)) {
                bad += !is_nan16(out16[i]) || (out16[i] & 0x8000) != (b & 0x8000);
                continue;
            }
            const uint16_t want = oracle16(decbf(b), mode);
            if (out16[i] != want && bad++ < 5)
                fprintf(stderr, "\nBF16 0x%04x -> FP16 %s: 0x%04x, want 0x%04x\n", b, mode_names[m], out16[i], want);
        }
        /* random doubles around the FP16 range, a third of them exact midpoints +- 1 ulp */
        for (int i = 0; i < R; i++) {
            if (i % 3 == 0) {
                const uint16_t k = (uint16_t)(rng() % 0x7bff);
                double mid = (dec16(k) + dec16((uint16_t)(k + 1))) / 2;
                if (i % 2)
                    mid = nextafter(mid, (i % 4 == 1) ? 0.0 : INFINITY);
                srcd[i] = (rng() & 1) ? -mid : mid;
            } else {
                srcd[i] = rnd_double(-27, 17);
            }
            srcf[i] = (float)srcd[i];
        }
        pld_view_t vd = v1(srcd, PLD_DT_FP64, R), vf = v1(srcf, PLD_DT_FP32, R);
        pld_view_t vo16 = v1(out16, PLD_DT_FP16, R);
        CU_ASSERT_EQUAL(pld_k_cast(&vo16, &vd, mode, err, sizeof err), PLD_OK);
        for (int i = 0; i < R; i++) {
            const uint16_t want = oracle16(srcd[i], mode);
            if (out16[i] != want && bad++ < 5)
                fprintf(stderr, "\nFP64 %a -> FP16 %s: 0x%04x, want 0x%04x\n", srcd[i], mode_names[m], out16[i], want);
#ifdef __FLT16_MANT_DIG__
            if (mode == PLD_R_RINT) {
                const _Float16 g = (_Float16)srcd[i];
                uint16_t gb;
                memcpy(&gb, &g, 2);
                bad += gb != out16[i];
            }
#endif
        }
        CU_ASSERT_EQUAL(pld_k_cast(&vo16, &vf, mode, err, sizeof err), PLD_OK);
        for (int i = 0; i < R; i++) {
            const uint16_t want = oracle16(srcf[i], mode);
            if (out16[i] != want && bad++ < 5)
                fprintf(stderr, "\nFP32 %a -> FP16 %s: 0x%04x, want 0x%04x\n", (double)srcf[i], mode_names[m],
                        out16[i], want);
        }
        /* BF16 range */
        for (int i = 0; i < R; i++) {
            if (i % 3 == 0) {
                const uint16_t k = (uint16_t)(rng() % 0x7f7f);
                double mid = (decbf(k) + decbf((uint16_t)(k + 1))) / 2;
                if (i % 2)
                    mid = nextafter(mid, (i % 4 == 1) ? 0.0 : INFINITY);
                srcd[i] = (rng() & 1) ? -mid : mid;
            } else {
                srcd[i] = rnd_double(-136, 128);
            }
            srcf[i] = (float)srcd[i];
        }
        pld_view_t vob = v1(out16, PLD_DT_BF16, R);
        CU_ASSERT_EQUAL(pld_k_cast(&vob, &vd, mode, err, sizeof err), PLD_OK);
        for (int i = 0; i < R; i++) {
            const uint16_t want = oraclebf(srcd[i], mode);
            if (out16[i] != want && bad++ < 5)
                fprintf(stderr, "\nFP64 %a -> BF16 %s: 0x%04x, want 0x%04x\n", srcd[i], mode_names[m], out16[i], want);
        }
        CU_ASSERT_EQUAL(pld_k_cast(&vob, &vf, mode, err, sizeof err), PLD_OK);
        for (int i = 0; i < R; i++) {
            if (isinf(srcf[i]))
                continue;
            const uint16_t want = oraclebf(srcf[i], mode);
            if (out16[i] != want && bad++ < 5)
                fprintf(stderr, "\nFP32 %a -> BF16 %s: 0x%04x, want 0x%04x\n", (double)srcf[i], mode_names[m],
                        out16[i], want);
        }
        /* FP64 -> FP32 within the FP32 range (incl. subnormals) */
        for (int i = 0; i < R; i++)
            srcd[i] = rnd_double(-149, 127);
        pld_view_t vo32 = v1(out32, PLD_DT_FP32, R);
        CU_ASSERT_EQUAL(pld_k_cast(&vo32, &vd, mode, err, sizeof err), PLD_OK);
        for (int i = 0; i < R; i++) {
            const uint32_t want = oracle32(srcd[i], mode);
            if (out32[i] != want && bad++ < 5)
                fprintf(stderr, "\nFP64 %a -> FP32 %s: 0x%08x, want 0x%08x\n", srcd[i], mode_names[m], out32[i], want);
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
}

/* Strided cast and a cast longer than one staging chunk. */
void test_kern_cast_strided(void)
{
    char err[ERRN];
    static float a[3 * 700];
    static int16_t o[700 * 3];
    for (int i = 0; i < 3 * 700; i++)
        a[i] = (float)i + 0.5f;
    /* a viewed as [700, 3]^T = [3, 700] with strides (1, 3); out [3, 700] packed */
    pld_view_t va = vs2(a, PLD_DT_FP32, 3, 700, 1, 3), vo = v2(o, PLD_DT_INT16, 3, 700);
    CU_ASSERT_EQUAL(pld_k_cast(&vo, &va, PLD_R_RINT, err, sizeof err), PLD_OK);
    int bad = 0;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 700; c++) {
            const int v = c * 3 + r; /* a[c*3 + r] = v + 0.5 -> ties to even */
            bad += o[r * 700 + c] != (v % 2 ? v + 1 : v);
        }
    CU_ASSERT_EQUAL(bad, 0);
    /* FP32 -> FP16 fast path, strided destination */
    uint16_t h[8];
    memset(h, 0xff, sizeof h);
    float f[4] = {1.0f, 65504.0f, 0x1p-24f, -2.0f};
    pld_view_t vf = v1(f, PLD_DT_FP32, 4);
    pld_view_t vh = v1(h, PLD_DT_FP16, 4);
    vh.strides[0] = 2;
    CU_ASSERT_EQUAL(pld_k_cast(&vh, &vf, PLD_R_NONE, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(h[0], 0x3c00);
    CU_ASSERT_EQUAL(h[1], 0xffff);
    CU_ASSERT_EQUAL(h[2], 0x7bff);
    CU_ASSERT_EQUAL(h[4], 0x0001);
    CU_ASSERT_EQUAL(h[6], 0xc000);
    /* errors */
    uint8_t x[4];
    pld_view_t v4 = v1(x, PLD_DT_INT4, 4), v8 = v1(x, PLD_DT_INT8, 4), v3 = v1(x, PLD_DT_INT8, 3);
    err[0] = '\0';
    CU_ASSERT_EQUAL(pld_k_cast(&v8, &v4, PLD_R_NONE, err, sizeof err), PLD_E_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "INT4"));
    CU_ASSERT_EQUAL(pld_k_cast(&v8, &v3, PLD_R_NONE, NULL, 0), PLD_E_RUNTIME);
    /* in place: fine for equal element sizes, refused otherwise */
    int32_t ip[3] = {-1, 2, 16777217};
    pld_view_t vip = v1(ip, PLD_DT_INT32, 3), vfp = v1(ip, PLD_DT_FP32, 3), vdp = v1(ip, PLD_DT_FP64, 1);
    CU_ASSERT_EQUAL(pld_k_cast(&vfp, &vip, PLD_R_NONE, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL((uint32_t)ip[0], 0xbf800000u);
    CU_ASSERT_EQUAL((uint32_t)ip[2], 0x4b800000u);
    pld_view_t vfp1 = v1(ip, PLD_DT_FP32, 1);
    err[0] = '\0';
    CU_ASSERT_EQUAL(pld_k_cast(&vdp, &vfp1, PLD_R_NONE, err, sizeof err), PLD_E_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "element size"));
}
