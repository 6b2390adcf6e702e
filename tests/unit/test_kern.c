/* test_kern.c - CUnit suite for the numeric kernels (src/interp/pld_kern.c).
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
#include "pld_kern.h"
#include "pld_test.h"

#include <float.h>
#include <math.h>
#include <stdint.h>

#define ERRN 256
#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- helpers ---------------------------------------------------------------- */

static pld_view_t vw(void *data, pld_dtype_t dt, int rank, const int64_t *shape)
{
    pld_view_t v;
    pld_view_packed(&v, data, dt, rank, shape);
    return v;
}

static pld_view_t v1(void *data, pld_dtype_t dt, int64_t n)
{
    return vw(data, dt, 1, &n);
}

static pld_view_t v2(void *data, pld_dtype_t dt, int64_t r, int64_t c)
{
    const int64_t s[2] = {r, c};
    return vw(data, dt, 2, s);
}

/* A strided 2-D view with explicit element strides. */
static pld_view_t vs2(void *data, pld_dtype_t dt, int64_t r, int64_t c, int64_t sr, int64_t sc)
{
    pld_view_t v;
    memset(&v, 0, sizeof v);
    v.data = data;
    v.dt = dt;
    v.rank = 2;
    v.shape[0] = r;
    v.shape[1] = c;
    v.strides[0] = sr;
    v.strides[1] = sc;
    return v;
}

static uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float u2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint64_t d2u(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

/* Independent decoders from the bit layouts (IEEE 754 §3.4). */
static double dec16(uint16_t h)
{
    const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v;
    if (e == 0x1f)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp(m, -24);
    else
        v = ldexp(1024 + m, e - 25);
    return (h & 0x8000) ? -v : v;
}

static double decbf(uint16_t b)
{
    const int e = (b >> 7) & 0xff, m = b & 0x7f;
    double v;
    if (e == 0xff)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp(m, -133);
    else
        v = ldexp(128 + m, e - 134);
    return (b & 0x8000) ? -v : v;
}

static int is_nan16(uint16_t h)
{
    return (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
}

static int is_nanbf(uint16_t b)
{
    return (b & 0x7f80) == 0x7f80 && (b & 0x7f);
}

/* splitmix64: deterministic inputs */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* A random double: random sign and 52-bit mantissa, exponent in [elo, ehi]. */
static double rnd_double(int elo, int ehi)
{
    const uint64_t r = rng();
    const int e = elo + (int)(rng() % (uint64_t)(ehi - elo + 1));
    const double m = 1.0 + (double)(r >> 12) * 0x1p-52;
    const double v = ldexp(m, e);
    return (r & 1) ? -v : v;
}

/* ---- the table oracle ----------------------------------------------------------
 * tab[i] is the value of bit pattern i for every non-negative finite pattern
 * (increasing), n = number of them (= the pattern of +inf), top = the value
 * one step above the largest finite (what inf "stands for" when rounding). */
static double tab16[0x7c00], tabbf[0x7f80];

static void tables_init(void)
{
    static int done;
    if (done)
        return;
    for (int i = 0; i < 0x7c00; i++)
        tab16[i] = dec16((uint16_t)i);
    for (int i = 0; i < 0x7f80; i++)
        tabbf[i] = decbf((uint16_t)i);
    done = 1;
}

/* Rounds finite or infinite non-NaN v to the table format. */
static uint16_t oracle_round(double v, const double *tab, int n, double top, pld_round_k_t mode)
{
    const int neg = signbit(v) != 0;
    const double a = fabs(v);
    const uint16_t sign = neg ? 0x8000 : 0;
    if (isinf(a))
        return (uint16_t)(sign | n);
    int i;
    if (a >= tab[n - 1]) {
        i = n - 1;
    } else {
        int lo = 0, hi = n - 1;
        while (lo < hi) {
            const int mid = (lo + hi + 1) / 2;
            if (tab[mid] <= a)
                lo = mid;
            else
                hi = mid - 1;
        }
        i = lo;
    }
    if (tab[i] == a)
        return (uint16_t)(sign | i);
    const double up = i + 1 < n ? tab[i + 1] : top;
    int take_up;
    switch (mode) {
    case PLD_R_TRUNC: take_up = 0; break;
    case PLD_R_FLOOR: take_up = neg; break;
    case PLD_R_CEIL: take_up = !neg; break;
    case PLD_R_ODD: take_up = (i % 2) == 0; break; /* the odd neighbour */
    default: {                                    /* NONE/RINT/ROUND: nearest, ties to even */
        const double mid = (tab[i] + up) / 2;      /* exact: tab values have <= 11 significant bits */
        take_up = a > mid || (a == mid && (i % 2) == 1);
        break;
    }
    }
    return (uint16_t)(sign | (take_up ? i + 1 : i));
}

static uint16_t oracle16(double v, pld_round_k_t mode)
{
    return oracle_round(v, tab16, 0x7c00, 65536.0, mode);
}

static uint16_t oraclebf(double v, pld_round_k_t mode)
{
    return oracle_round(v, tabbf, 0x7f80, 0x1p128, mode);
}

/* FP32 oracle from nextafterf: lo = largest float <= |v|, hi the next. */
static uint32_t oracle32(double v, pld_round_k_t mode)
{
    const int neg = signbit(v) != 0;
    const double a = fabs(v);
    float lo = (float)a; /* some neighbour; fix it up below */
    if ((double)lo > a)
        lo = nextafterf(lo, 0.0f);
    if ((double)lo == a)
        return f2u(neg ? -lo : lo);
    const float hi = nextafterf(lo, INFINITY);
    const uint32_t ulo = f2u(lo);
    int take_up;
    switch (mode) {
    case PLD_R_TRUNC: take_up = 0; break;
    case PLD_R_FLOOR: take_up = neg; break;
    case PLD_R_CEIL: take_up = !neg; break;
    case PLD_R_ODD: take_up = (ulo & 1) == 0; break;
    default: {
        const double mid = ((double)lo + (double)hi) / 2;
        take_up = a > mid || (a == mid && (ulo & 1));
        break;
    }
    }
    const float r = take_up ? hi : lo;
    return f2u(neg ? -r : r);
}

static const pld_round_k_t all_modes[] = {PLD_R_NONE, PLD_R_RINT,  PLD_R_ROUND, PLD_R_FLOOR,
                                          PLD_R_CEIL, PLD_R_TRUNC, PLD_R_ODD};
static const char *const mode_names[] = {"NONE", "RINT", "ROUND", "FLOOR", "CEIL", "TRUNC", "ODD"};

/* ---- views ------------------------------------------------------------------------ */

static void test_kern_views(void)
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

static void test_kern_f16_spec_patterns(void)
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

static void test_kern_bf16_spec_patterns(void)
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
static void test_kern_f16_roundtrip_exhaustive(void)
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

static void test_kern_bf16_roundtrip_exhaustive(void)
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
static void test_kern_f16_bf16_all_ties(void)
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
static void test_kern_f16_bf16_random_vs_oracle(void)
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

static void test_kern_elem_access(void)
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

/* ---- binary ------------------------------------------------------------------------ */

static void test_kern_binary_fp32_ops(void)
{
    float a[5] = {1, -2, 3.5f, 8, 0.5f}, b[5] = {2, 4, -0.5f, 2, 0.25f}, o[5];
    const float want[6][5] = {{3, 2, 3, 10, 0.75f},
                              {-1, -6, 4, 6, 0.25f},
                              {2, -8, -1.75f, 16, 0.125f},
                              {0.5f, -0.5f, -7, 4, 2},
                              {2, 4, 3.5f, 8, 0.5f},
                              {1, -2, -0.5f, 2, 0.25f}};
    char err[ERRN];
    for (int op = PLD_K_ADD; op <= PLD_K_MIN; op++) {
        pld_view_t vo = v1(o, PLD_DT_FP32, 5), va = v1(a, PLD_DT_FP32, 5), vb = v1(b, PLD_DT_FP32, 5);
        CU_ASSERT_EQUAL(pld_k_binary((pld_binop_k_t)op, &vo, &va, &vb, err, sizeof err), PLD_OK);
        for (int i = 0; i < 5; i++)
            CU_ASSERT_EQUAL(o[i], want[op][i]);
    }
}

/* Long packed arrays (blocked fast path + remainder) and every in-place form. */
static void test_kern_binary_fp32_packed_inplace(void)
{
    enum { N = 1003 };
    static float a[N], b[N], o[N];
    char err[ERRN];
    for (int i = 0; i < N; i++) {
        a[i] = (float)(i % 97) * 0.5f;
        b[i] = (float)(i % 13) - 6.0f;
    }
    pld_view_t vo = v1(o, PLD_DT_FP32, N), va = v1(a, PLD_DT_FP32, N), vb = v1(b, PLD_DT_FP32, N);
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_SUB, &vo, &va, &vb, err, sizeof err), PLD_OK);
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += o[i] != (float)(i % 97) * 0.5f - ((float)(i % 13) - 6.0f);
    CU_ASSERT_EQUAL(bad, 0);
    /* out == a */
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_ADD, &va, &va, &vb, err, sizeof err), PLD_OK);
    bad = 0;
    for (int i = 0; i < N; i++)
        bad += a[i] != (float)(i % 97) * 0.5f + (float)(i % 13) - 6.0f;
    CU_ASSERT_EQUAL(bad, 0);
    /* out == b: b = a - b */
    for (int i = 0; i < N; i++)
        a[i] = (float)i;
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_SUB, &vb, &va, &vb, err, sizeof err), PLD_OK);
    bad = 0;
    for (int i = 0; i < N; i++)
        bad += b[i] != (float)i - ((float)(i % 13) - 6.0f);
    CU_ASSERT_EQUAL(bad, 0);
    /* out == a == b */
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_MUL, &va, &va, &va, err, sizeof err), PLD_OK);
    bad = 0;
    for (int i = 0; i < N; i++)
        bad += a[i] != (float)i * (float)i;
    CU_ASSERT_EQUAL(bad, 0);
    /* accumulate: o += a */
    for (int i = 0; i < N; i++)
        o[i] = 1.0f;
    CU_ASSERT_EQUAL(pld_k_accumulate(&vo, &va, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(o[0], 1.0f);
    CU_ASSERT_EQUAL(o[10], 101.0f);
    CU_ASSERT_EQUAL(o[N - 1], 1.0f + (float)(N - 1) * (float)(N - 1));
}

/* [4,1] + [1,8] -> [4,8]; [4,8] + [8] (rank broadcast); explicit stride 0. */
static void test_kern_binary_broadcast(void)
{
    float a[4] = {0, 10, 20, 30}, b[8] = {1, 2, 3, 4, 5, 6, 7, 8}, o[32], m[32];
    char err[ERRN];
    pld_view_t vo = v2(o, PLD_DT_FP32, 4, 8), va = v2(a, PLD_DT_FP32, 4, 1), vb = v2(b, PLD_DT_FP32, 1, 8);
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_ADD, &vo, &va, &vb, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(o[0], 1.0f);
    CU_ASSERT_EQUAL(o[2 * 8 + 5], 26.0f);
    CU_ASSERT_EQUAL(o[3 * 8 + 7], 38.0f);
    CU_ASSERT_EQUAL(o[1 * 8 + 0], 11.0f);
    /* the same with explicit stride-0 views of shape [4,8] */
    pld_view_t sa = vs2(a, PLD_DT_FP32, 4, 8, 1, 0), sb = vs2(b, PLD_DT_FP32, 4, 8, 0, 1);
    pld_view_t vm = v2(m, PLD_DT_FP32, 4, 8);
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_ADD, &vm, &sa, &sb, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(memcmp(o, m, sizeof o), 0);
    /* rank-1 b against [4,8]: right-aligned */
    pld_view_t b1 = v1(b, PLD_DT_FP32, 8);
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_MUL, &vm, &vo, &b1, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(m[2 * 8 + 5], 26.0f * 6);
    /* INT32 broadcast of a column */
    int32_t ia[3] = {100, 200, 300}, ib[6] = {1, 2, 3, 4, 5, 6}, io[6];
    pld_view_t vio = v2(io, PLD_DT_INT32, 3, 2), via = v2(ia, PLD_DT_INT32, 3, 1),
               vib = v2(ib, PLD_DT_INT32, 3, 2);
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_SUB, &vio, &via, &vib, err, sizeof err), PLD_OK);
    const int32_t want[6] = {99, 98, 197, 196, 295, 294};
    CU_ASSERT_EQUAL(memcmp(io, want, sizeof want), 0);
    /* mismatch: [4,3] + [4,2] */
    float x[12], y[8], z[12];
    pld_view_t vx = v2(x, PLD_DT_FP32, 4, 3), vy = v2(y, PLD_DT_FP32, 4, 2), vz = v2(z, PLD_DT_FP32, 4, 3);
    err[0] = '\0';
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_ADD, &vz, &vx, &vy, err, sizeof err), PLD_E_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "shape mismatch"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "[4, 2]"));
    /* out must not be the broadcast one: [4,1] out with [4,3] input */
    pld_view_t vsmall = v2(z, PLD_DT_FP32, 4, 1);
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_ADD, &vsmall, &vx, &vx, NULL, 0), PLD_E_RUNTIME);
}

/* Windows into larger buffers, transposed views, ragged shapes, rank 3. */
static void test_kern_binary_strided_ragged(void)
{
    static float big[9 * 11], bt[11 * 9], out[9 * 11];
    char err[ERRN];
    for (int i = 0; i < 9 * 11; i++) {
        big[i] = (float)i;
        out[i] = -1.0f;
    }
    for (int r = 0; r < 9; r++)
        for (int c = 0; c < 11; c++)
            bt[c * 9 + r] = (float)(1000 * r + c); /* bt is [11,9], bt^T[r][c] = 1000r + c */
    const int64_t shapes[][2] = {{3, 5}, {1, 1}, {7, 1}, {1, 9}, {8, 10}, {5, 3}};
    for (int s = 0; s < NELEM(shapes); s++) {
        const int64_t R = shapes[s][0], C = shapes[s][1];
        /* a = big[1:1+R, 1:1+C] (strides 11, 1); b = bt^T[0:R, 0:C] (strides 1, 9);
         * out = out[0:R, 0:C] of a [9,11] buffer viewed with strides 11, 1 */
        pld_view_t va = vs2(big + 12, PLD_DT_FP32, R, C, 11, 1);
        pld_view_t vb = vs2(bt, PLD_DT_FP32, R, C, 1, 9);
        pld_view_t vo = vs2(out, PLD_DT_FP32, R, C, 11, 1);
        CU_ASSERT_EQUAL(pld_k_binary(PLD_K_ADD, &vo, &va, &vb, err, sizeof err), PLD_OK);
        int bad = 0;
        for (int r = 0; r < 9; r++)
            for (int c = 0; c < 11; c++) {
                const float want = (r < R && c < C) ? (float)((r + 1) * 11 + (c + 1)) + (float)(1000 * r + c) : -1.0f;
                bad += out[r * 11 + c] != want;
            }
        CU_ASSERT_EQUAL(bad, 0);
        for (int i = 0; i < 9 * 11; i++)
            out[i] = -1.0f;
    }
    /* empty view: nothing written, OK */
    pld_view_t e = vs2(out, PLD_DT_FP32, 0, 4, 11, 1);
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_ADD, &e, &e, &e, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(out[0], -1.0f);
    /* rank 3 [2,3,4] with a non-mergeable middle stride, FP16 */
    uint16_t h[2 * 5 * 4], ho[24];
    for (int i = 0; i < 40; i++)
        h[i] = (uint16_t)(0x3c00 + i); /* 1 + i/1024 */
    pld_view_t v3;
    memset(&v3, 0, sizeof v3);
    v3.data = h;
    v3.dt = PLD_DT_FP16;
    v3.rank = 3;
    v3.shape[0] = 2, v3.shape[1] = 3, v3.shape[2] = 4;
    v3.strides[0] = 20, v3.strides[1] = 5, v3.strides[2] = 1; /* [2,5,4]-ish buffer, row length 5 */
    const int64_t s3[3] = {2, 3, 4};
    pld_view_t vo3 = vw(ho, PLD_DT_FP16, 3, s3);
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_SUB, &vo3, &v3, &v3, err, sizeof err), PLD_OK);
    int nz = 0;
    for (int i = 0; i < 24; i++)
        nz += ho[i] != 0;
    CU_ASSERT_EQUAL(nz, 0);
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_MAX, &vo3, &v3, &v3, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(ho[0], 0x3c00);
    CU_ASSERT_EQUAL(ho[1 * 12 + 2 * 4 + 3], 0x3c00 + 20 + 10 + 3);
    CU_ASSERT_EQUAL(ho[23], 0x3c00 + 20 + 10 + 3);
    CU_ASSERT_EQUAL(ho[4], 0x3c00 + 5);
}

/* FP16/BF16 arithmetic rounds each result to the storage type. */
static void test_kern_binary_fp16_bf16_rounding(void)
{
    char err[ERRN];
    uint16_t a[6] = {0x3c00, 0x3c01, 0x7bff, 0x0001, 0x3c00, 0x7bff};
    uint16_t b[6] = {0x1000, 0x1000, 0x7bff, 0x3800, 0x3c00, 0x0000};
    uint16_t o[6];
    pld_view_t vo = v1(o, PLD_DT_FP16, 6), va = v1(a, PLD_DT_FP16, 6), vb = v1(b, PLD_DT_FP16, 6);
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_ADD, &vo, &va, &vb, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(o[0], 0x3c00); /* 1 + 2^-11: tie -> 1.0 */
    CU_ASSERT_EQUAL(o[1], 0x3c02); /* 1 + 3*2^-11: tie -> even, up */
    CU_ASSERT_EQUAL(o[2], 0x7c00); /* 65504 + 65504 -> inf */
    CU_ASSERT_EQUAL(o[4], 0x4000); /* 2 */
    CU_ASSERT_EQUAL(o[5], 0x7bff);
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_MUL, &vo, &va, &vb, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(o[3], 0x0000); /* 2^-24 * 0.5 = 2^-25: tie -> 0 */
    CU_ASSERT_EQUAL(o[2], 0x7c00);
    CU_ASSERT_EQUAL(o[5], 0x0000);
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_DIV, &vo, &va, &vb, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(o[5], 0x7c00); /* 65504 / 0 = inf */
    CU_ASSERT_EQUAL(o[3], 0x0002); /* 2^-24 / 0.5 */
    /* BF16 */
    uint16_t x[3] = {0x3f80, 0x4380, 0x3f80}, y[3] = {0x3b80, 0x3f80, 0x3bc0}, z[3];
    pld_view_t vz = v1(z, PLD_DT_BF16, 3), vx = v1(x, PLD_DT_BF16, 3), vy = v1(y, PLD_DT_BF16, 3);
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_ADD, &vz, &vx, &vy, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(z[0], 0x3f80); /* 1 + 2^-8: tie -> 1 */
    CU_ASSERT_EQUAL(z[1], 0x4380); /* 256 + 1 = 257 -> 256 (tie -> even) */
    CU_ASSERT_EQUAL(z[2], 0x3f81); /* 1 + 1.5*2^-8 -> 1 + 2^-7 */
}

/* FP16 against _Float16 arithmetic and BF16 against the table oracle on the
 * exact double result, over random operand pairs. */
static void test_kern_binary_fp16_bf16_random(void)
{
    enum { N = 4096 };
    static uint16_t a[N], b[N], o[N];
    char err[ERRN];
    tables_init();
    int bad = 0;
    for (int op = PLD_K_ADD; op <= PLD_K_MIN; op++) {
        /* FP16 */
        for (int i = 0; i < N; i++) {
            a[i] = (uint16_t)rng();
            b[i] = (uint16_t)rng();
        }
        pld_view_t vo = v1(o, PLD_DT_FP16, N), va = v1(a, PLD_DT_FP16, N), vb = v1(b, PLD_DT_FP16, N);
        CU_ASSERT_EQUAL(pld_k_binary((pld_binop_k_t)op, &vo, &va, &vb, err, sizeof err), PLD_OK);
        for (int i = 0; i < N; i++) {
            const double x = dec16(a[i]), y = dec16(b[i]);
            double exact;
            switch (op) {
            case PLD_K_ADD: exact = x + y; break; /* exact in double for FP16 operands */
            case PLD_K_SUB: exact = x - y; break;
            case PLD_K_MUL: exact = x * y; break;
            case PLD_K_MAX: exact = isnan(x) || isnan(y) ? NAN : x > y ? x : y; break;
            case PLD_K_MIN: exact = isnan(x) || isnan(y) ? NAN : x < y ? x : y; break;
            default: exact = NAN; break;
            }
            if (op == PLD_K_DIV) {
#ifdef __FLT16_MANT_DIG__
                _Float16 hx, hy;
                memcpy(&hx, &a[i], 2);
                memcpy(&hy, &b[i], 2);
                const _Float16 q = hx / hy;
                uint16_t qb;
                memcpy(&qb, &q, 2);
                if (is_nan16(qb))
                    bad += !is_nan16(o[i]);
                else
                    bad += qb != o[i];
#endif
                continue;
            }
            if (isnan(exact)) {
                bad += !is_nan16(o[i]);
                continue;
            }
            if ((op == PLD_K_MAX || op == PLD_K_MIN) && x == y) /* +-0 handled elsewhere */
                continue;
            const uint16_t want = oracle16(exact, PLD_R_RINT);
            if (want != o[i] && !(exact == 0 && (o[i] & 0x7fff) == 0) && bad++ < 5)
                fprintf(stderr, "\nfp16 op %d: 0x%04x, 0x%04x -> 0x%04x, want 0x%04x\n", op, a[i], b[i], o[i], want);
        }
        /* BF16: operands within 2^20 of each other keep add/sub exact in double */
        for (int i = 0; i < N; i++) {
            const uint16_t e = (uint16_t)(100 + rng() % 50);
            a[i] = (uint16_t)((rng() & 0x8000) | (e << 7) | (rng() & 0x7f));
            b[i] = (uint16_t)((rng() & 0x8000) | ((e + rng() % 20 - 10) << 7) | (rng() & 0x7f));
        }
        vo.dt = va.dt = vb.dt = PLD_DT_BF16;
        CU_ASSERT_EQUAL(pld_k_binary((pld_binop_k_t)op, &vo, &va, &vb, err, sizeof err), PLD_OK);
        for (int i = 0; i < N; i++) {
            const double x = decbf(a[i]), y = decbf(b[i]);
            double exact;
            switch (op) {
            case PLD_K_ADD: exact = x + y; break;
            case PLD_K_SUB: exact = x - y; break;
            case PLD_K_MUL: exact = x * y; break;
            case PLD_K_MAX: exact = x > y ? x : y; break;
            case PLD_K_MIN: exact = x < y ? x : y; break;
            default: continue; /* quotients are not exact in double */
            }
            if (exact == 0)
                continue;
            const uint16_t want = oraclebf(exact, PLD_R_RINT);
            if (want != o[i] && bad++ < 5)
                fprintf(stderr, "\nbf16 op %d: 0x%04x, 0x%04x -> 0x%04x, want 0x%04x\n", op, a[i], b[i], o[i], want);
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
}

static void test_kern_binary_nan_inf(void)
{
    char err[ERRN];
    float a[8] = {NAN, 1.0f, -0.0f, 0.0f, INFINITY, 1.0f, 0.0f, NAN};
    float b[8] = {1.0f, NAN, 0.0f, -0.0f, INFINITY, 0.0f, 0.0f, NAN};
    float o[8];
    pld_view_t vo = v1(o, PLD_DT_FP32, 8), va = v1(a, PLD_DT_FP32, 8), vb = v1(b, PLD_DT_FP32, 8);
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_MAX, &vo, &va, &vb, err, sizeof err), PLD_OK);
    CU_ASSERT_TRUE(isnan(o[0]));
    CU_ASSERT_TRUE(isnan(o[1]));
    CU_ASSERT_EQUAL(f2u(o[2]), 0x00000000u); /* max(-0, +0) = +0 */
    CU_ASSERT_EQUAL(f2u(o[3]), 0x00000000u);
    CU_ASSERT_TRUE(isinf(o[4]));
    CU_ASSERT_TRUE(isnan(o[7]));
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_MIN, &vo, &va, &vb, err, sizeof err), PLD_OK);
    CU_ASSERT_TRUE(isnan(o[0]));
    CU_ASSERT_TRUE(isnan(o[1]));
    CU_ASSERT_EQUAL(f2u(o[2]), 0x80000000u); /* min(-0, +0) = -0 */
    CU_ASSERT_EQUAL(f2u(o[3]), 0x80000000u);
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_SUB, &vo, &va, &vb, err, sizeof err), PLD_OK);
    CU_ASSERT_TRUE(isnan(o[0]));
    CU_ASSERT_TRUE(isnan(o[4])); /* inf - inf */
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_DIV, &vo, &va, &vb, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(f2u(o[5]), 0x7f800000u); /* 1/0 = inf, no error for floats */
    CU_ASSERT_TRUE(isnan(o[6]));             /* 0/0 */
    /* the same through the strided loop (non-unit stride) and FP16 / FP64 */
    pld_view_t so = vs2(o, PLD_DT_FP32, 2, 2, 4, 2), sa = vs2(a, PLD_DT_FP32, 2, 2, 4, 2),
               sb = vs2(b, PLD_DT_FP32, 2, 2, 4, 2);
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_MAX, &so, &sa, &sb, err, sizeof err), PLD_OK);
    CU_ASSERT_TRUE(isnan(o[0]));
    CU_ASSERT_EQUAL(f2u(o[2]), 0u);
    uint16_t ha[2] = {0x7e00, 0x3c00}, hb[2] = {0x3c00, 0x7e00}, ho[2];
    pld_view_t hvo = v1(ho, PLD_DT_FP16, 2), hva = v1(ha, PLD_DT_FP16, 2), hvb = v1(hb, PLD_DT_FP16, 2);
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_MIN, &hvo, &hva, &hvb, err, sizeof err), PLD_OK);
    CU_ASSERT_TRUE(is_nan16(ho[0]) && is_nan16(ho[1]));
    double da[2] = {NAN, -1.0}, db[2] = {2.0, NAN}, dout[2];
    pld_view_t dvo = v1(dout, PLD_DT_FP64, 2), dva = v1(da, PLD_DT_FP64, 2), dvb = v1(db, PLD_DT_FP64, 2);
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_MAX, &dvo, &dva, &dvb, err, sizeof err), PLD_OK);
    CU_ASSERT_TRUE(isnan(dout[0]) && isnan(dout[1]));
}

/* The FP32 loops exist once per instruction set (pld_kern_f32.inc): the
 * AVX2 set and the baseline must give the same bits for every op, aliasing
 * form and length, NaN payloads included (quiet and signalling NaNs of either
 * sign in both operands), so that a run computes the same wherever each rank
 * runs. Where the CPU has no AVX2 both runs take the baseline. */
static void test_kern_binary_fp32_simd_sets(void)
{
    enum { N = 1003, K = 16 };
    static const uint32_t pool[K] = {0x7fc00001u, 0xffc12345u, 0x7f800001u, 0xff812345u, 0x7fc00000u,
                                     0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x00000001u,
                                     0x80000003u, 0x7f7fffffu, 0x3f800000u, 0xc0200000u, 0x3eaaaaabu,
                                     0xcb3c614eu};
    static float a[N], b[N], o1[N], o2[N], w1[N], w2[N];
    static const int64_t lens[] = {0, 1, 7, 15, 16, 17, 31, 33, 64, 255, 256, 257, N};
    uint32_t x = 12345u;
    for (int i = 0; i < N; i++) {
        uint32_t ua, ub;
        if (i < K * K) {
            ua = pool[i % K];
            ub = pool[i / K];
        } else {
            x = x * 1664525u + 1013904223u;
            ua = (x >> 3) % 3 == 0 ? pool[x % K] : x;
            x = x * 1664525u + 1013904223u;
            ub = (x >> 3) % 3 == 0 ? pool[x % K] : x;
        }
        memcpy(&a[i], &ua, 4);
        memcpy(&b[i], &ub, 4);
    }
    char err[ERRN];
    int bad = 0, runs = 0;
    for (int op = PLD_K_ADD; op <= PLD_K_MIN; op++)
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
            for (int form = 0; form < 6; form++)
                for (int set = 0; set < 2; set++) {
                    const int64_t n = lens[li];
                    float *o = set ? o2 : o1, *w = set ? w2 : w1;
                    pld_kern_simd_force_base(set == 0);
                    if (set == 0)
                        CU_ASSERT_STRING_EQUAL(pld_kern_simd(), "baseline");
                    memcpy(o, a, sizeof a);
                    memcpy(w, b, sizeof b);
                    pld_view_t vo = v1(o, PLD_DT_FP32, n), va = v1(a, PLD_DT_FP32, n), vb = v1(b, PLD_DT_FP32, n),
                               vw = v1(w, PLD_DT_FP32, n);
                    pld_status_t st;
                    switch (form) {
                    case 0: st = pld_k_binary((pld_binop_k_t)op, &vo, &va, &vb, err, sizeof err); break; /* o = a op b */
                    case 1: st = pld_k_binary((pld_binop_k_t)op, &vo, &vo, &vb, err, sizeof err); break; /* o op= b */
                    case 2: st = pld_k_binary((pld_binop_k_t)op, &vw, &va, &vw, err, sizeof err); break; /* w = a op w */
                    case 3: st = pld_k_binary((pld_binop_k_t)op, &vo, &vo, &vo, err, sizeof err); break; /* o op= o */
                    case 4: /* o = a op s, s a NaN with a payload */
                        st = pld_k_binary_scalar((pld_binop_k_t)op, &vo, &va, (double)b[1], 0, err, sizeof err);
                        break;
                    default: /* o op= s */
                        st = pld_k_binary_scalar((pld_binop_k_t)op, &vo, &vo, (double)b[K + 3], 0, err, sizeof err);
                        break;
                    }
                    CU_ASSERT_EQUAL(st, PLD_OK);
                    if (set == 1) {
                        runs++;
                        bad += memcmp(o1, o2, sizeof o1) != 0 || memcmp(w1, w2, sizeof w1) != 0;
                    }
                }
    pld_kern_simd_force_base(0);
    CU_ASSERT_EQUAL(runs, 6 * 13 * 6);
    CU_ASSERT_EQUAL(bad, 0);
    /* the rule (COMM_NAN, pld_kern_int.h): Add and Mul give a NaN a quieted, else a NaN b quieted, in
     * the vector body and the scalar tail alike (n = 1003: 62 blocks of 16, then 11), on both sets */
    for (int set = 0; set < 2; set++)
        for (int op = PLD_K_ADD; op <= PLD_K_MUL; op += PLD_K_MUL - PLD_K_ADD) {
            pld_kern_simd_force_base(set == 0);
            pld_view_t vo = v1(o1, PLD_DT_FP32, N), va = v1(a, PLD_DT_FP32, N), vb = v1(b, PLD_DT_FP32, N);
            CU_ASSERT_EQUAL(pld_k_binary((pld_binop_k_t)op, &vo, &va, &vb, err, sizeof err), PLD_OK);
            int wrong = 0, pairs = 0;
            for (int i = 0; i < N; i++) {
                pairs += isnan(a[i]) && isnan(b[i]) && f2u(a[i]) != f2u(b[i]);
                if (isnan(a[i]))
                    wrong += f2u(o1[i]) != (f2u(a[i]) | 0x00400000u);
                else if (isnan(b[i]))
                    wrong += f2u(o1[i]) != (f2u(b[i]) | 0x00400000u);
            }
            CU_ASSERT_TRUE(pairs > 20);
            CU_ASSERT_EQUAL(wrong, 0);
        }
    pld_kern_simd_force_base(0);
    /* the generic loops (FP16 here: the op in FP32) keep the same rule */
    enum { H = 37 };
    uint16_t ha[H], hb[H], ho[H];
    for (int i = 0; i < H; i++) {
        ha[i] = (uint16_t)(i % 2 ? 0x7e01 + i : 0x3c00); /* quiet NaNs with payloads, or 1.0 */
        hb[i] = (uint16_t)(i % 3 ? 0xfe40 + i : 0x4000); /* negative quiet NaNs, or 2.0 */
    }
    pld_view_t hvo = v1(ho, PLD_DT_FP16, H), hva = v1(ha, PLD_DT_FP16, H), hvb = v1(hb, PLD_DT_FP16, H);
    for (int op = PLD_K_ADD; op <= PLD_K_MUL; op += PLD_K_MUL - PLD_K_ADD) {
        CU_ASSERT_EQUAL(pld_k_binary((pld_binop_k_t)op, &hvo, &hva, &hvb, err, sizeof err), PLD_OK);
        int wrong = 0;
        for (int i = 0; i < H; i++)
            wrong += ho[i] != (i % 2 ? ha[i] : i % 3 ? hb[i] : ho[i]);
        CU_ASSERT_EQUAL(wrong, 0);
    }
}

/* pld_k_fold_orders: every wanted order has the bits of the pld_k_binary
 * folds one at a time (x_r, then the others ascending), on both FP32 sets,
 * for every op, 1 to 6 operands (the one-pass loops take 2 to 4), lengths
 * across the strips of 1,024 and the blocks of 16, some orders not wanted
 * (left untouched); NaN payload pairs everywhere; FP16, INT32 and a
 * misaligned FP32 operand through the fallback; the errors. */
static void fold_ref(pld_binop_k_t op, pld_dtype_t dt, int nx, void *const *x, void *o, int r, int64_t n)
{
    char err[ERRN];
    memcpy(o, x[r], (size_t)n * (size_t)pld_dtype_bytes(dt));
    pld_view_t vo = v1(o, dt, n);
    for (int q = 0; q < nx; q++)
        if (q != r) {
            pld_view_t vq = v1(x[q], dt, n);
            CU_ASSERT_EQUAL_FATAL(pld_k_binary(op, &vo, &vo, &vq, err, sizeof err), PLD_OK);
        }
}

static void test_kern_fold_orders(void)
{
    enum { N = 2100, X = 6, K = 8 };
    static const uint32_t pool[K] = {0x7fc00001u, 0xffc12345u, 0x7f800001u, 0x7fc00000u,
                                     0x80000000u, 0x00000000u, 0x7f800000u, 0x3f800000u};
    static float in[X][N], got[X][N], want[N];
    uint32_t s = 777u;
    for (int q = 0; q < X; q++)
        for (int i = 0; i < N; i++) {
            s = s * 1664525u + 1013904223u;
            const uint32_t u = (s >> 5) % 3 == 0 ? pool[(s >> 9) % K] : (s & 0x807fffffu) | 0x3e000000u;
            memcpy(&in[q][i], &u, 4);
        }
    static const int64_t lens[] = {1, 15, 17, 1003, 1024, 1025, N};
    char err[ERRN];
    int runs = 0, bad = 0, touched = 0;
    for (int set = 0; set < 2; set++) {
        pld_kern_simd_force_base(set == 0);
        for (int op = PLD_K_ADD; op <= PLD_K_MIN; op++)
            for (int nx = 1; nx <= X; nx++)
                for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
                    for (int mask = 0; mask < 3; mask++) { /* every order; all but order 1; order nx-1 alone */
                        const int64_t n = lens[li];
                        void *x[X], *o[X];
                        for (int q = 0; q < nx; q++) {
                            x[q] = in[q];
                            o[q] = mask == 0 || (mask == 1 && q != 1) || (mask == 2 && q == nx - 1) ? got[q] : NULL;
                            memset(got[q], 0x5a, sizeof got[q]);
                        }
                        CU_ASSERT_EQUAL(pld_k_fold_orders((pld_binop_k_t)op, PLD_DT_FP32, nx, (const void *const *)x,
                                                          o, n, err, sizeof err),
                                        PLD_OK);
                        for (int r = 0; r < nx; r++) {
                            if (!o[r]) {
                                for (int i = 0; i < N; i++)
                                    touched += f2u(got[r][i]) != 0x5a5a5a5au;
                                continue;
                            }
                            fold_ref((pld_binop_k_t)op, PLD_DT_FP32, nx, x, want, r, n);
                            bad += memcmp(want, got[r], (size_t)n * 4) != 0 || (n < N && f2u(got[r][n]) != 0x5a5a5a5au);
                            runs++;
                        }
                    }
    }
    pld_kern_simd_force_base(0);
    CU_ASSERT_EQUAL(runs, 2 * 6 * 7 * (21 + 16 + 6));
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(touched, 0);
    /* the fallback: FP16 and INT32 (the same bytes as FP32 data), a misaligned FP32 operand */
    static const pld_dtype_t dts[] = {PLD_DT_FP16, PLD_DT_INT32, PLD_DT_FP32};
    static char mis[N * 4 + 4];
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (int op = PLD_K_ADD; op <= PLD_K_MIN; op++) {
            const int64_t n = 333;
            void *x[3] = {in[0], in[1], in[2]}, *o[3] = {got[0], got[1], got[2]};
            if (d == 2) {
                memcpy(mis + 2, in[1], (size_t)n * 4);
                x[1] = mis + 2;
            }
            if (dts[d] == PLD_DT_INT32 && op == PLD_K_DIV)
                continue; /* a zero divisor is an error, tested elsewhere */
            CU_ASSERT_EQUAL(pld_k_fold_orders((pld_binop_k_t)op, dts[d], 3, (const void *const *)x, o, n, err, sizeof err),
                            PLD_OK);
            for (int r = 0; r < 3; r++) {
                fold_ref((pld_binop_k_t)op, dts[d], 3, x, want, r, n);
                CU_ASSERT_EQUAL(memcmp(want, got[r], (size_t)n * (size_t)pld_dtype_bytes(dts[d])), 0);
            }
        }
    void *x[2] = {in[0], in[1]}, *o[2] = {got[0], got[1]};
    CU_ASSERT_EQUAL(pld_k_fold_orders((pld_binop_k_t)99, PLD_DT_FP32, 2, (const void *const *)x, o, 8, err, sizeof err),
                    PLD_E_RUNTIME);
    CU_ASSERT_EQUAL(pld_k_fold_orders(PLD_K_ADD, PLD_DT_INT4, 2, (const void *const *)x, o, 8, err, sizeof err),
                    PLD_E_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "INT4"));
}

/* Wrapping arithmetic in the element width, truncating division, signed vs
 * unsigned comparisons. */
static void test_kern_int_wrap(void)
{
    char err[ERRN];
    {
        int8_t a[4] = {127, -128, 16, 100}, b[4] = {1, 1, 16, 3}, o[4];
        pld_view_t vo = v1(o, PLD_DT_INT8, 4), va = v1(a, PLD_DT_INT8, 4), vb = v1(b, PLD_DT_INT8, 4);
        CU_ASSERT_EQUAL(pld_k_binary(PLD_K_ADD, &vo, &va, &vb, err, sizeof err), PLD_OK);
        CU_ASSERT_EQUAL(o[0], -128);
        CU_ASSERT_EQUAL(o[1], -127);
        CU_ASSERT_EQUAL(pld_k_binary(PLD_K_SUB, &vo, &va, &vb, err, sizeof err), PLD_OK);
        CU_ASSERT_EQUAL(o[1], 127);
        CU_ASSERT_EQUAL(pld_k_binary(PLD_K_MUL, &vo, &va, &vb, err, sizeof err), PLD_OK);
        CU_ASSERT_EQUAL(o[2], 0);  /* 256 */
        CU_ASSERT_EQUAL(o[3], 44); /* 300 - 256 */
        int8_t d[2] = {-128, -7}, e[2] = {-1, 2};
        pld_view_t vd = v1(d, PLD_DT_INT8, 2), ve = v1(e, PLD_DT_INT8, 2), vo2 = v1(o, PLD_DT_INT8, 2);
        CU_ASSERT_EQUAL(pld_k_binary(PLD_K_DIV, &vo2, &vd, &ve, err, sizeof err), PLD_OK);
        CU_ASSERT_EQUAL(o[0], -128); /* -128 / -1 wraps */
        CU_ASSERT_EQUAL(o[1], -3);   /* truncation toward zero */
        CU_ASSERT_EQUAL(pld_k_binary(PLD_K_MAX, &vo2, &vd, &ve, err, sizeof err), PLD_OK);
        CU_ASSERT_EQUAL(o[0], -1);
        CU_ASSERT_EQUAL(o[1], 2);
    }
    {
        uint8_t a[3] = {0, 255, 200}, b[3] = {1, 1, 100}, o[3];
        pld_view_t vo = v1(o, PLD_DT_UINT8, 3), va = v1(a, PLD_DT_UINT8, 3), vb = v1(b, PLD_DT_UINT8, 3);
        CU_ASSERT_EQUAL(pld_k_binary(PLD_K_SUB, &vo, &va, &vb, err, sizeof err), PLD_OK);
        CU_ASSERT_EQUAL(o[0], 255);
        CU_ASSERT_EQUAL(pld_k_binary(PLD_K_ADD, &vo, &va, &vb, err, sizeof err), PLD_OK);
        CU_ASSERT_EQUAL(o[1], 0);
        CU_ASSERT_EQUAL(o[2], 44);
        CU_ASSERT_EQUAL(pld_k_binary(PLD_K_MAX, &vo, &va, &vb, err, sizeof err), PLD_OK);
        CU_ASSERT_EQUAL(o[1], 255); /* unsigned compare */
        vo.dt = va.dt = vb.dt = PLD_DT_BOOL;
        CU_ASSERT_EQUAL(pld_k_binary(PLD_K_ADD, &vo, &va, &vb, err, sizeof err), PLD_OK);
        CU_ASSERT_EQUAL(o[1], 0); /* BOOL arithmetic wraps in 8 bits */
    }
    {
        uint16_t a[1] = {65535}, o[1];
        pld_view_t vo = v1(o, PLD_DT_UINT16, 1), va = v1(a, PLD_DT_UINT16, 1);
        CU_ASSERT_EQUAL(pld_k_binary(PLD_K_MUL, &vo, &va, &va, err, sizeof err), PLD_OK);
        CU_ASSERT_EQUAL(o[0], 1); /* (2^16-1)^2 mod 2^16 (no promotion to int) */
        int16_t s[2] = {-32768, 300}, so[2];
        pld_view_t vso = v1(so, PLD_DT_INT16, 2), vs = v1(s, PLD_DT_INT16, 2);
        CU_ASSERT_EQUAL(pld_k_binary(PLD_K_MUL, &vso, &vs, &vs, err, sizeof err), PLD_OK);
        CU_ASSERT_EQUAL(so[0], 0);
        CU_ASSERT_EQUAL(so[1], 24464); /* 90000 - 65536 */
    }
    {
        int32_t a[4] = {INT32_MAX, INT32_MIN, -7, 65536}, b[4] = {1, -1, 2, 65536}, o[4];
        pld_view_t vo = v1(o, PLD_DT_INT32, 4), va = v1(a, PLD_DT_INT32, 4), vb = v1(b, PLD_DT_INT32, 4);
        CU_ASSERT_EQUAL(pld_k_binary(PLD_K_ADD, &vo, &va, &vb, err, sizeof err), PLD_OK);
        CU_ASSERT_EQUAL(o[0], INT32_MIN);
        CU_ASSERT_EQUAL(o[1], INT32_MAX);
        CU_ASSERT_EQUAL(pld_k_binary(PLD_K_MUL, &vo, &va, &vb, err, sizeof err), PLD_OK);
        CU_ASSERT_EQUAL(o[1], INT32_MIN);
        CU_ASSERT_EQUAL(o[3], 0);
        CU_ASSERT_EQUAL(pld_k_binary(PLD_K_DIV, &vo, &va, &vb, err, sizeof err), PLD_OK);
        CU_ASSERT_EQUAL(o[0], INT32_MAX);
        CU_ASSERT_EQUAL(o[1], INT32_MIN); /* INT_MIN / -1 wraps */
        CU_ASSERT_EQUAL(o[2], -3);
        CU_ASSERT_EQUAL(o[3], 1);
        CU_ASSERT_EQUAL(pld_k_binary(PLD_K_MIN, &vo, &va, &vb, err, sizeof err), PLD_OK);
        CU_ASSERT_EQUAL(o[0], 1);
        CU_ASSERT_EQUAL(o[1], INT32_MIN);
    }
    {
        int64_t a[3] = {INT64_MAX, (int64_t)1 << 62, INT64_MIN}, b[3] = {1, 4, -1}, o[3];
        pld_view_t vo = v1(o, PLD_DT_INT64, 3), va = v1(a, PLD_DT_INT64, 3), vb = v1(b, PLD_DT_INT64, 3);
        CU_ASSERT_EQUAL(pld_k_binary(PLD_K_ADD, &vo, &va, &vb, err, sizeof err), PLD_OK);
        CU_ASSERT_EQUAL(o[0], INT64_MIN);
        CU_ASSERT_EQUAL(pld_k_binary(PLD_K_MUL, &vo, &va, &vb, err, sizeof err), PLD_OK);
        CU_ASSERT_EQUAL(o[1], 0);
        CU_ASSERT_EQUAL(o[2], INT64_MIN);
        vo.dt = va.dt = vb.dt = PLD_DT_INDEX;
        CU_ASSERT_EQUAL(pld_k_binary(PLD_K_DIV, &vo, &va, &vb, err, sizeof err), PLD_OK);
        CU_ASSERT_EQUAL(o[2], INT64_MIN); /* INT64_MIN / -1 wraps */
        CU_ASSERT_EQUAL(o[1], (int64_t)1 << 60);
    }
    {
        uint64_t a[2] = {UINT64_MAX, (uint64_t)1 << 63}, b[2] = {1, 1}, o[2];
        pld_view_t vo = v1(o, PLD_DT_UINT64, 2), va = v1(a, PLD_DT_UINT64, 2), vb = v1(b, PLD_DT_UINT64, 2);
        CU_ASSERT_EQUAL(pld_k_binary(PLD_K_ADD, &vo, &va, &vb, err, sizeof err), PLD_OK);
        CU_ASSERT_EQUAL(o[0], 0u);
        CU_ASSERT_EQUAL(pld_k_binary(PLD_K_MAX, &vo, &va, &vb, err, sizeof err), PLD_OK);
        CU_ASSERT_EQUAL(o[1], (uint64_t)1 << 63); /* unsigned compare */
        CU_ASSERT_EQUAL(pld_k_binary(PLD_K_DIV, &vo, &va, &vb, err, sizeof err), PLD_OK);
        CU_ASSERT_EQUAL(o[0], UINT64_MAX);
        uint32_t c[1] = {0xffffffffu}, d[1] = {2}, e[1];
        pld_view_t ve = v1(e, PLD_DT_UINT32, 1), vc = v1(c, PLD_DT_UINT32, 1), vd = v1(d, PLD_DT_UINT32, 1);
        CU_ASSERT_EQUAL(pld_k_binary(PLD_K_DIV, &ve, &vc, &vd, err, sizeof err), PLD_OK);
        CU_ASSERT_EQUAL(e[0], 0x7fffffffu);
    }
}

static void test_kern_int_div_by_zero(void)
{
    char err[ERRN];
    int32_t a[3] = {1, 2, 3}, b[3] = {1, 0, 1}, o[3];
    pld_view_t vo = v1(o, PLD_DT_INT32, 3), va = v1(a, PLD_DT_INT32, 3), vb = v1(b, PLD_DT_INT32, 3);
    err[0] = '\0';
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_DIV, &vo, &va, &vb, err, sizeof err), PLD_E_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "integer division by zero"));
    err[0] = '\0';
    CU_ASSERT_EQUAL(pld_k_binary_scalar(PLD_K_DIV, &vo, &va, 0.0, 0, err, sizeof err), PLD_E_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "integer division by zero"));
    /* strided path and every integer width */
    const pld_dtype_t dts[] = {PLD_DT_BOOL,   PLD_DT_INT8,   PLD_DT_INT16,  PLD_DT_INT64, PLD_DT_UINT8,
                               PLD_DT_UINT16, PLD_DT_UINT32, PLD_DT_UINT64, PLD_DT_INDEX};
    for (int k = 0; k < NELEM(dts); k++) {
        uint64_t x[4], y[4], z[4];
        memset(y, 0, sizeof y);
        for (int i = 0; i < 4; i++)
            pld_elem_set_i(x, dts[k], i, 5);
        pld_elem_set_i(y, dts[k], 0, 1); /* y = {1, 0, 0, 0} */
        /* [1,2] views with column stride 2: elements 0 and 2, so the divisor 0 is hit */
        pld_view_t vz = vs2(z, dts[k], 1, 2, 4, 2), vx = vs2(x, dts[k], 1, 2, 4, 2), vy = vs2(y, dts[k], 1, 2, 4, 2);
        CU_ASSERT_EQUAL(pld_k_binary(PLD_K_DIV, &vz, &vx, &vy, NULL, 0), PLD_E_RUNTIME);
        pld_view_t vy1 = v1(y, dts[k], 1), vz1 = v1(z, dts[k], 1), vx1 = v1(x, dts[k], 1);
        CU_ASSERT_EQUAL(pld_k_binary(PLD_K_DIV, &vz1, &vx1, &vy1, NULL, 0), PLD_OK);
        CU_ASSERT_EQUAL(pld_elem_get_i(z, dts[k], 0), 5);
    }
    /* floats: no error */
    float f[2] = {1, -1}, g[2] = {0, 0}, h[2];
    pld_view_t vf = v1(f, PLD_DT_FP32, 2), vg = v1(g, PLD_DT_FP32, 2), vh = v1(h, PLD_DT_FP32, 2);
    CU_ASSERT_EQUAL(pld_k_binary(PLD_K_DIV, &vh, &vf, &vg, err, sizeof err), PLD_OK);
    CU_ASSERT_TRUE(isinf(h[0]) && h[0] > 0 && isinf(h[1]) && h[1] < 0);
}

static void test_kern_binary_scalar(void)
{
    char err[ERRN];
    float a[37], o[37];
    for (int i = 0; i < 37; i++)
        a[i] = (float)i;
    pld_view_t vo = v1(o, PLD_DT_FP32, 37), va = v1(a, PLD_DT_FP32, 37);
    CU_ASSERT_EQUAL(pld_k_binary_scalar(PLD_K_ADD, &vo, &va, 1.5, 0, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(o[0], 1.5f);
    CU_ASSERT_EQUAL(o[36], 37.5f);
    CU_ASSERT_EQUAL(pld_k_binary_scalar(PLD_K_MUL, &va, &va, 2.0, 0, err, sizeof err), PLD_OK); /* in place */
    CU_ASSERT_EQUAL(a[36], 72.0f);
    CU_ASSERT_EQUAL(pld_k_binary_scalar(PLD_K_MAX, &vo, &va, 10.0, 0, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(o[0], 10.0f);
    CU_ASSERT_EQUAL(o[20], 40.0f);
    /* strided out, FP32 */
    pld_view_t so = vs2(o, PLD_DT_FP32, 3, 2, 6, 2);
    CU_ASSERT_EQUAL(pld_k_binary_scalar(PLD_K_SUB, &so, &so, 1.0, 0, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(o[0], 9.0f);
    CU_ASSERT_EQUAL(o[1], 10.0f);
    CU_ASSERT_EQUAL(o[14], 27.0f);
    /* FP16: the scalar is rounded to FP16 first (0.1 -> 0x2E66) */
    uint16_t h[2] = {0x3c00, 0x4000}, ho[2];
    pld_view_t vh = v1(h, PLD_DT_FP16, 2), vho = v1(ho, PLD_DT_FP16, 2);
    CU_ASSERT_EQUAL(pld_k_binary_scalar(PLD_K_MUL, &vho, &vh, 0.1, 0, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(ho[0], 0x2e66);
    CU_ASSERT_EQUAL(ho[1], 0x3266);
    /* integers use s_i, wrapped to the width */
    int8_t i8[2] = {1, -1}, i8o[2];
    pld_view_t vi = v1(i8, PLD_DT_INT8, 2), vio = v1(i8o, PLD_DT_INT8, 2);
    CU_ASSERT_EQUAL(pld_k_binary_scalar(PLD_K_ADD, &vio, &vi, 99.0, 300, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(i8o[0], 45);
    CU_ASSERT_EQUAL(i8o[1], 43);
    int32_t i32[3] = {10, -10, 7}, i32o[3];
    pld_view_t v32 = v1(i32, PLD_DT_INT32, 3), v32o = v1(i32o, PLD_DT_INT32, 3);
    CU_ASSERT_EQUAL(pld_k_binary_scalar(PLD_K_DIV, &v32o, &v32, 0.0, -3, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(i32o[0], -3);
    CU_ASSERT_EQUAL(i32o[1], 3);
    CU_ASSERT_EQUAL(i32o[2], -2);
}

/* ---- unary ------------------------------------------------------------------------- */

static void test_kern_unary(void)
{
    char err[ERRN];
    float a[1], o[1];
    pld_view_t va = v1(a, PLD_DT_FP32, 1), vo = v1(o, PLD_DT_FP32, 1);
#define UN1(OP, IN, WANT)                                                                                      \
    do {                                                                                                       \
        a[0] = (IN);                                                                                           \
        CU_ASSERT_EQUAL(pld_k_unary(OP, &vo, &va, err, sizeof err), PLD_OK);                                   \
        CU_ASSERT_EQUAL(f2u(o[0]), f2u(WANT));                                                                 \
    } while (0)
    UN1(PLD_K_EXP, 0.0f, 1.0f);
    UN1(PLD_K_EXP, -INFINITY, 0.0f);
    UN1(PLD_K_LOG, 1.0f, 0.0f);
    UN1(PLD_K_LOG, 0.0f, -INFINITY);
    UN1(PLD_K_SQRT, 4.0f, 2.0f);
    UN1(PLD_K_SQRT, -0.0f, -0.0f);
    UN1(PLD_K_RSQRT, 4.0f, 0.5f);
    UN1(PLD_K_ABS, -3.0f, 3.0f);
    UN1(PLD_K_ABS, -0.0f, 0.0f);
    UN1(PLD_K_NEG, 2.0f, -2.0f);
    UN1(PLD_K_NEG, 0.0f, -0.0f);
    UN1(PLD_K_RECIP, 4.0f, 0.25f);
    UN1(PLD_K_RECIP, 0.0f, INFINITY);
    UN1(PLD_K_RELU, -1.0f, 0.0f);
    UN1(PLD_K_RELU, 2.0f, 2.0f);
    UN1(PLD_K_RELU, -0.0f, 0.0f);
#undef UN1
    a[0] = -1.0f;
    CU_ASSERT_EQUAL(pld_k_unary(PLD_K_LOG, &vo, &va, err, sizeof err), PLD_OK);
    CU_ASSERT_TRUE(isnan(o[0]));
    CU_ASSERT_EQUAL(pld_k_unary(PLD_K_SQRT, &vo, &va, err, sizeof err), PLD_OK);
    CU_ASSERT_TRUE(isnan(o[0]));
    a[0] = NAN;
    CU_ASSERT_EQUAL(pld_k_unary(PLD_K_RELU, &vo, &va, err, sizeof err), PLD_OK);
    CU_ASSERT_TRUE(isnan(o[0]));
    /* FP16: sqrt(2) = 1.41421356 -> 1 + 424/1024 = 0x3DA8; exp(1) -> 2.71875 = 0x4170 */
    uint16_t h[2] = {0x4000, 0x3c00}, ho[2];
    pld_view_t vh = v1(h, PLD_DT_FP16, 2), vho = v1(ho, PLD_DT_FP16, 2);
    CU_ASSERT_EQUAL(pld_k_unary(PLD_K_SQRT, &vho, &vh, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(ho[0], 0x3da8);
    CU_ASSERT_EQUAL(ho[1], 0x3c00);
    CU_ASSERT_EQUAL(pld_k_unary(PLD_K_EXP, &vho, &vh, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(ho[1], 0x4170);
    /* BF16 in place: neg flips the sign bit */
    uint16_t b[3] = {0x3f80, 0x0000, 0xc040};
    pld_view_t vb = v1(b, PLD_DT_BF16, 3);
    CU_ASSERT_EQUAL(pld_k_unary(PLD_K_NEG, &vb, &vb, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(b[0], 0xbf80);
    CU_ASSERT_EQUAL(b[1], 0x8000);
    CU_ASSERT_EQUAL(b[2], 0x4040);
    /* FP64 */
    double d[2] = {16.0, -2.0}, dout[2];
    pld_view_t vd = v1(d, PLD_DT_FP64, 2), vdo = v1(dout, PLD_DT_FP64, 2);
    CU_ASSERT_EQUAL(pld_k_unary(PLD_K_RSQRT, &vdo, &vd, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(dout[0], 0.25);
    CU_ASSERT_EQUAL(pld_k_unary(PLD_K_ABS, &vdo, &vd, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(dout[1], 2.0);
    /* integers: ABS, NEG, RELU only */
    int32_t i[4] = {INT32_MIN, -5, 0, 7}, io[4];
    pld_view_t vi = v1(i, PLD_DT_INT32, 4), vio = v1(io, PLD_DT_INT32, 4);
    CU_ASSERT_EQUAL(pld_k_unary(PLD_K_ABS, &vio, &vi, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(io[0], INT32_MIN); /* wraps */
    CU_ASSERT_EQUAL(io[1], 5);
    CU_ASSERT_EQUAL(pld_k_unary(PLD_K_NEG, &vio, &vi, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(io[0], INT32_MIN);
    CU_ASSERT_EQUAL(io[3], -7);
    CU_ASSERT_EQUAL(pld_k_unary(PLD_K_RELU, &vio, &vi, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(io[1], 0);
    CU_ASSERT_EQUAL(io[3], 7);
    uint8_t u[2] = {1, 200}, uo[2];
    pld_view_t vu = v1(u, PLD_DT_UINT8, 2), vuo = v1(uo, PLD_DT_UINT8, 2);
    CU_ASSERT_EQUAL(pld_k_unary(PLD_K_NEG, &vuo, &vu, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(uo[0], 255);
    CU_ASSERT_EQUAL(uo[1], 56);
    CU_ASSERT_EQUAL(pld_k_unary(PLD_K_ABS, &vuo, &vu, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(uo[1], 200);
    int64_t l[1] = {INT64_MIN}, lo[1];
    pld_view_t vl = v1(l, PLD_DT_INT64, 1), vlo = v1(lo, PLD_DT_INT64, 1);
    CU_ASSERT_EQUAL(pld_k_unary(PLD_K_NEG, &vlo, &vl, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(lo[0], INT64_MIN);
    err[0] = '\0';
    CU_ASSERT_EQUAL(pld_k_unary(PLD_K_EXP, &vio, &vi, err, sizeof err), PLD_E_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "needs a float dtype"));
    CU_ASSERT_EQUAL(pld_k_unary(PLD_K_SQRT, &vuo, &vu, NULL, 0), PLD_E_RUNTIME);
    /* strided unary: column of a [3,4] */
    float m[12];
    for (int k = 0; k < 12; k++)
        m[k] = (float)-k;
    pld_view_t col = vs2(m + 1, PLD_DT_FP32, 3, 1, 4, 1);
    CU_ASSERT_EQUAL(pld_k_unary(PLD_K_ABS, &col, &col, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(m[1], 1.0f);
    CU_ASSERT_EQUAL(m[5], 5.0f);
    CU_ASSERT_EQUAL(m[9], 9.0f);
    CU_ASSERT_EQUAL(m[2], -2.0f);
}

/* ---- reductions -------------------------------------------------------------------- */

static void test_kern_reduce_rows(void)
{
    char err[ERRN];
    float a[12] = {1, 2, 3, 4, 5, -6, 7, 8, 0.5f, 0.25f, NAN, 1}, o[3];
    pld_view_t va = v2(a, PLD_DT_FP32, 3, 4), vo = v2(o, PLD_DT_FP32, 3, 1);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RSUM, 1, &vo, &va, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(o[0], 10.0f);
    CU_ASSERT_EQUAL(o[1], 14.0f);
    CU_ASSERT_TRUE(isnan(o[2]));
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RMAX, 1, &vo, &va, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(o[0], 4.0f);
    CU_ASSERT_EQUAL(o[1], 8.0f);
    CU_ASSERT_TRUE(isnan(o[2])); /* NaN propagates */
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RMIN, 1, &vo, &va, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(o[0], 1.0f);
    CU_ASSERT_EQUAL(o[1], -6.0f);
    CU_ASSERT_TRUE(isnan(o[2]));
    /* strided window: a[0:2, 1:3] -> sums 5 and 1 */
    pld_view_t w = vs2(a + 1, PLD_DT_FP32, 2, 2, 4, 1);
    pld_view_t wo = v2(o, PLD_DT_FP32, 2, 1);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RSUM, 1, &wo, &w, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(o[0], 5.0f);
    CU_ASSERT_EQUAL(o[1], 1.0f);
    /* rank 3 [2,2,3] -> [2,2,1], INT32 with wrap */
    int32_t i[12] = {INT32_MAX, 1, 0, 1, 2, 3, -1, -2, -3, 10, 20, 30}, io[4];
    const int64_t s3[3] = {2, 2, 3}, s31[3] = {2, 2, 1};
    pld_view_t vi = vw(i, PLD_DT_INT32, 3, s3), vio = vw(io, PLD_DT_INT32, 3, s31);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RSUM, 1, &vio, &vi, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(io[0], INT32_MIN);
    CU_ASSERT_EQUAL(io[1], 6);
    CU_ASSERT_EQUAL(io[2], -6);
    CU_ASSERT_EQUAL(io[3], 60);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RMAX, 1, &vio, &vi, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(io[0], INT32_MAX);
    CU_ASSERT_EQUAL(io[2], -1);
    /* UINT8 max uses unsigned compare; INT8 sum wraps */
    uint8_t u[4] = {1, 255, 128, 3}, uo[1];
    pld_view_t vu = v2(u, PLD_DT_UINT8, 1, 4), vuo = v2(uo, PLD_DT_UINT8, 1, 1);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RMAX, 1, &vuo, &vu, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(uo[0], 255);
    vu.dt = vuo.dt = PLD_DT_INT8;
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RSUM, 1, &vuo, &vu, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(uo[0], (uint8_t)(1 + 255 + 128 + 3)); /* 387 mod 256 = 131 */
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RMIN, 1, &vuo, &vu, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL((int8_t)uo[0], -128);
    /* rank 1 [5] -> [1] in FP64 */
    double d[5] = {1, 2, 3, 4, 5.5}, dout[1];
    pld_view_t vd = v1(d, PLD_DT_FP64, 5), vdo = v1(dout, PLD_DT_FP64, 1);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RSUM, 1, &vdo, &vd, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(dout[0], 15.5);
}

static void test_kern_reduce_cols(void)
{
    char err[ERRN];
    float a[12] = {1, 2, 3, 4, 5, -6, 7, 8, 0.5f, 0.25f, -1, 1}, o[4];
    pld_view_t va = v2(a, PLD_DT_FP32, 3, 4), vo = v2(o, PLD_DT_FP32, 1, 4);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RSUM, 0, &vo, &va, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(o[0], 6.5f);
    CU_ASSERT_EQUAL(o[1], -3.75f);
    CU_ASSERT_EQUAL(o[2], 9.0f);
    CU_ASSERT_EQUAL(o[3], 13.0f);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RMAX, 0, &vo, &va, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(o[1], 2.0f);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RMIN, 0, &vo, &va, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(o[1], -6.0f);
    CU_ASSERT_EQUAL(o[2], -1.0f);
    /* more columns than one chunk: [3, 300] INT16, column j holds j, 2j, -1 */
    static int16_t w[3 * 300], wo[300];
    for (int j = 0; j < 300; j++) {
        w[j] = (int16_t)j;
        w[300 + j] = (int16_t)(2 * j);
        w[600 + j] = -1;
    }
    pld_view_t vw3 = v2(w, PLD_DT_INT16, 3, 300), vwo = v2(wo, PLD_DT_INT16, 1, 300);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RSUM, 0, &vwo, &vw3, err, sizeof err), PLD_OK);
    int bad = 0;
    for (int j = 0; j < 300; j++)
        bad += wo[j] != 3 * j - 1;
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RMIN, 0, &vwo, &vw3, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(wo[0], -1);
    CU_ASSERT_EQUAL(wo[299], -1);
    /* transposed view: columns of a^T are rows of a */
    pld_view_t at = vs2(a, PLD_DT_FP32, 4, 3, 1, 4); /* a^T is [4,3] */
    float to[3];
    pld_view_t vto = v2(to, PLD_DT_FP32, 1, 3);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RSUM, 0, &vto, &at, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(to[0], 10.0f);
    CU_ASSERT_EQUAL(to[1], 14.0f);
    CU_ASSERT_EQUAL(to[2], 0.75f);
    /* UINT64 max above 2^63 */
    uint64_t u[4] = {(uint64_t)1 << 63, 5, 1, UINT64_MAX}, uo[2];
    pld_view_t vu = v2(u, PLD_DT_UINT64, 2, 2), vuo = v2(uo, PLD_DT_UINT64, 1, 2);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RMAX, 0, &vuo, &vu, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(uo[0], (uint64_t)1 << 63);
    CU_ASSERT_EQUAL(uo[1], UINT64_MAX);
}

/* FP16/BF16 reductions accumulate in float: 3000 FP16 ones sum to 3000
 * (0x69DC); FP16 accumulation would stick at 2048. BF16: 1000 ones -> 1000
 * (0x447A), BF16 accumulation would stick at 256. */
static void test_kern_reduce_fp16_accum(void)
{
    char err[ERRN];
    static uint16_t h[2 * 3000];
    uint16_t ho[2];
    for (int i = 0; i < 3000; i++) {
        h[i] = 0x3c00;        /* row 0: ones */
        h[3000 + i] = 0x2e66; /* row 1: 0.0999755859375 */
    }
    pld_view_t vh = v2(h, PLD_DT_FP16, 2, 3000), vho = v2(ho, PLD_DT_FP16, 2, 1);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RSUM, 1, &vho, &vh, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(ho[0], 0x69dc);
    /* 3000 * 0.0999755859375 = 299.9267578125 (exact in float) -> FP16 spacing
     * 0.25 at 256..512: 299.9267578125 rounds to 300.0 = 0x5CB0 */
    CU_ASSERT_EQUAL(ho[1], 0x5cb0);
    /* column sum of the [3000, 1]^T style: a [3000, 2] view, columns. Columns
     * round to FP16 after every row (PyPTO's sequential TCOLSUM golden): the
     * ones stop at 2048 (2048 + 1 ties to even), the 0.1s at 256 */
    pld_view_t vc = vs2(h, PLD_DT_FP16, 3000, 2, 1, 3000), vco = v2(ho, PLD_DT_FP16, 1, 2);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RSUM, 0, &vco, &vc, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(ho[0], 0x6800);
    CU_ASSERT_EQUAL(ho[1], 0x5c00);
    /* the binary tree (col_sum with tmp_tile) keeps every partial sum small:
     * 3000 and 300 (reference: a Python replay of PyPTO's tree golden) */
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RSUM, PLD_K_RED_TREE, &vco, &vc, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(ho[0], 0x69dc);
    CU_ASSERT_EQUAL(ho[1], 0x5cb0);
    /* 7 mixed rows (odd counts at two levels): tree 1512 (0x65e8), sequential
     * 1513 (0x65e9); rounding once would give 1512 */
    uint16_t h7[7] = {0x63d0, 0x34cd, 0xc166, 0x1419, 0x5ffe, 0x2e66, 0x4248}, h7o[1];
    pld_view_t v7 = v2(h7, PLD_DT_FP16, 7, 1), v7o = v2(h7o, PLD_DT_FP16, 1, 1);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RSUM, PLD_K_RED_TREE, &v7o, &v7, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(h7o[0], 0x65e8);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RSUM, 0, &v7o, &v7, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(h7o[0], 0x65e9);
    static uint16_t b[1000];
    uint16_t bo[1];
    for (int i = 0; i < 1000; i++)
        b[i] = 0x3f80;
    pld_view_t vb = v2(b, PLD_DT_BF16, 1, 1000), vbo = v2(bo, PLD_DT_BF16, 1, 1);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RSUM, 1, &vbo, &vb, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(bo[0], 0x447a);
    /* BF16 column: rounded per row, 256 + 1 ties to 256 */
    pld_view_t vbc = v2(b, PLD_DT_BF16, 1000, 1);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RSUM, 0, &vbo, &vbc, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(bo[0], 0x4380);
    /* FP16 max with a NaN in the column */
    uint16_t m[4] = {0x3c00, 0x7e00, 0x4000, 0x3c00}, mo[2];
    pld_view_t vm = v2(m, PLD_DT_FP16, 2, 2), vmo = v2(mo, PLD_DT_FP16, 1, 2);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RMAX, 0, &vmo, &vm, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(mo[0], 0x4000);
    CU_ASSERT_TRUE(is_nan16(mo[1]));
}

/* prod and argmax/argmin: INT32 indices, the first index on ties, a NaN never
 * wins; integer products wrap; an empty axis multiplies to 1. */
static void test_kern_reduce_prod_arg(void)
{
    char err[256];
    float a[2 * 4] = {1.0f, 3.0f, 3.0f, -2.0f, NAN, 0.5f, 0.5f, 4.0f};
    int32_t idx[2], cidx[4];
    pld_view_t va = v2(a, PLD_DT_FP32, 2, 4), vr = v2(idx, PLD_DT_INT32, 2, 1), vc = v2(cidx, PLD_DT_INT32, 1, 4);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RARGMAX, PLD_K_RED_ROW, &vr, &va, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(idx[0], 1); /* 3 at 1 and 2: the first */
    CU_ASSERT_EQUAL(idx[1], 0); /* a leading NaN is never replaced */
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RARGMIN, PLD_K_RED_ROW, &vr, &va, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(idx[0], 3);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RARGMAX, 0, &vc, &va, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(cidx[0], 0);
    CU_ASSERT_EQUAL(cidx[1], 0);
    CU_ASSERT_EQUAL(cidx[2], 0);
    CU_ASSERT_EQUAL(cidx[3], 1);
    /* argmax needs an INT32 out */
    float fo[2];
    pld_view_t vfo = v2(fo, PLD_DT_FP32, 2, 1);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RARGMAX, PLD_K_RED_ROW, &vfo, &va, NULL, 0), PLD_E_RUNTIME);
    /* products */
    float p[2 * 3] = {2.0f, 3.0f, 0.5f, -1.0f, 4.0f, 0.25f}, po[2], pc[3];
    pld_view_t vp = v2(p, PLD_DT_FP32, 2, 3), vpo = v2(po, PLD_DT_FP32, 2, 1), vpc = v2(pc, PLD_DT_FP32, 1, 3);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RPROD, PLD_K_RED_ROW, &vpo, &vp, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(po[0], 3.0f);
    CU_ASSERT_EQUAL(po[1], -1.0f);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RPROD, 0, &vpc, &vp, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(pc[0], -2.0f);
    CU_ASSERT_EQUAL(pc[1], 12.0f);
    CU_ASSERT_EQUAL(pc[2], 0.125f);
    int32_t ip[3] = {65536, 65536, 3}, ipo[1];
    pld_view_t vip = v2(ip, PLD_DT_INT32, 1, 3), vipo = v2(ipo, PLD_DT_INT32, 1, 1);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RPROD, PLD_K_RED_ROW, &vipo, &vip, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(ipo[0], 0); /* 2^32 * 3 wraps to 0 */
    float e1[1];
    pld_view_t ve = v2(p, PLD_DT_FP32, 2, 0), veo = v2(e1, PLD_DT_FP32, 1, 0);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RPROD, 0, &veo, &ve, err, sizeof err), PLD_OK);
    /* FP16 column product rounds per row: 1.001 (0x3c01)^3 */
    uint16_t h[3] = {0x3c01, 0x3c01, 0x3c01}, ho[1];
    pld_view_t vh = v2(h, PLD_DT_FP16, 3, 1), vho = v2(ho, PLD_DT_FP16, 1, 1);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RPROD, 0, &vho, &vh, err, sizeof err), PLD_OK);
    /* (1 + 2^-10)^2 = 1 + 2^-9 + 2^-20 -> 1 + 2^-9 (0x3c02); * (1 + 2^-10) -> 1 + 3 * 2^-10 (0x3c03) */
    CU_ASSERT_EQUAL(ho[0], 0x3c03);
}

static void test_kern_reduce_errors(void)
{
    char err[ERRN];
    float a[6] = {0}, o[6];
    pld_view_t va = v2(a, PLD_DT_FP32, 2, 3);
    pld_view_t bad = v2(o, PLD_DT_FP32, 2, 2);
    err[0] = '\0';
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RSUM, 1, &bad, &va, err, sizeof err), PLD_E_RUNTIME);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "row sum"));
    pld_view_t badc = v2(o, PLD_DT_FP32, 1, 2);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RSUM, 0, &badc, &va, NULL, 0), PLD_E_RUNTIME);
    pld_view_t oi = v2(o, PLD_DT_INT32, 2, 1);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RSUM, 1, &oi, &va, NULL, 0), PLD_E_RUNTIME); /* dtype mismatch */
    /* empty reduced axis: sum 0, max an error */
    pld_view_t e = v2(a, PLD_DT_FP32, 2, 0), eo = v2(o, PLD_DT_FP32, 2, 1);
    o[0] = o[1] = 7;
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RSUM, 1, &eo, &e, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(o[0], 0.0f);
    CU_ASSERT_EQUAL(o[1], 0.0f);
    CU_ASSERT_EQUAL(pld_k_reduce(PLD_K_RMAX, 1, &eo, &e, err, sizeof err), PLD_E_RUNTIME);
}

/* ---- cast -------------------------------------------------------------------------- */

/* One element through pld_k_cast. */
static pld_status_t cast1(pld_dtype_t dt_out, void *out, pld_dtype_t dt_in, const void *in, pld_round_k_t m)
{
    pld_view_t vo = v1(out, dt_out, 1), vi = v1((void *)in, dt_in, 1);
    return pld_k_cast(&vo, &vi, m, NULL, 0);
}

/* Float -> integer, every mode, hand table (ties and directed modes). */
static void test_kern_cast_int_modes(void)
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

static void test_kern_cast_saturation(void)
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

static void test_kern_cast_int_to_float(void)
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

static void test_kern_cast_int_to_int_and_bool(void)
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

static void test_kern_cast_float_special(void)
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
static void test_kern_cast_modes_vs_oracle(void)
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
static void test_kern_cast_strided(void)
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

/* ---- matmul -------------------------------------------------------------------------- */

static void test_kern_matmul(void)
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

static void test_kern_copy_fill(void)
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
static void test_kern_unaligned(void)
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
static void test_kern_ext_ops(void)
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

static void test_kern_dtype_errors(void)
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
