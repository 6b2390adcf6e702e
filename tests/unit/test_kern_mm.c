/* test_kern_mm.c - the blocked matmul (pld_kern_mm.c) and the row / column
 * reductions against plain reference loops written here, bit for bit: sizes
 * that are not multiples of the register blocks (1, 3, 17, 64, 65, 130),
 * strided views (a transposed, b with a column gap, out with a row gap),
 * accumulate on and off, FP32 / FP16 / BF16 inputs, FP32 / FP16 / BF16 out,
 * both instruction sets (pld_kern_simd_force_base), and inf, -0 and NaN
 * inputs. A NaN result only has to be a NaN where the order of two NaN
 * operands of one add decides the payload (sums); max / min select an
 * operand and are compared bit for bit (products as sums). */
#include "test_kern_util.h"

#include <stdlib.h>
#include <string.h>

static const int64_t sizes[] = {1, 3, 17, 64, 65, 130};

/* element idx of a buffer of dtype dt, as float (independent decoders) */
static float get_f(pld_dtype_t dt, const void *p, int64_t idx)
{
    switch (dt) {
    case PLD_DT_FP16: return (float)dec16(((const uint16_t *)p)[idx]);
    case PLD_DT_BF16: return (float)decbf(((const uint16_t *)p)[idx]);
    default: return ((const float *)p)[idx];
    }
}

/* the bits of v rounded (nearest even) to dt */
static uint32_t bits_of(pld_dtype_t dt, float v)
{
    switch (dt) {
    case PLD_DT_FP16: return oracle16(v, PLD_R_RINT);
    case PLD_DT_BF16: return oraclebf(v, PLD_R_RINT);
    default: return f2u(v);
    }
}

static uint32_t raw_bits(pld_dtype_t dt, const void *p, int64_t idx)
{
    return dt == PLD_DT_FP32 ? ((const uint32_t *)p)[idx] : ((const uint16_t *)p)[idx];
}

static void put_bits(pld_dtype_t dt, void *p, int64_t idx, uint32_t b)
{
    if (dt == PLD_DT_FP32)
        ((uint32_t *)p)[idx] = b;
    else
        ((uint16_t *)p)[idx] = (uint16_t)b;
}

static int bits_nan(pld_dtype_t dt, uint32_t b)
{
    return dt == PLD_DT_FP32 ? isnan(u2f(b)) : dt == PLD_DT_FP16 ? is_nan16((uint16_t)b) : is_nanbf((uint16_t)b);
}

/* a random value of dt (special: sometimes inf, -inf or NaN; sometimes -0 or +0) */
static uint32_t rnd_bits(pld_dtype_t dt, int special)
{
    const uint64_t r = rng() % 64;
    const int f32 = dt == PLD_DT_FP32;
    const uint32_t sign = f32 ? 0x80000000u : 0x8000u, inf = f32 ? 0x7f800000u : dt == PLD_DT_FP16 ? 0x7c00u : 0x7f80u;
    if (special && r < 2)
        return r ? inf | sign : inf;
    if (special && r == 3)
        return f32 ? 0x7fc00001u : dt == PLD_DT_FP16 ? 0x7e01u : 0x7fc1u;
    if (r == 2 || r == 4)
        return r == 2 ? sign : 0;
    return bits_of(dt, (float)rnd_double(-4, 3));
}

/* one product against the reference loop; returns the number of mismatches */
static int mm_case(pld_dtype_t in, pld_dtype_t odt, int64_t m, int64_t kk, int64_t n, int acc, int strided,
                   int special)
{
    const int isz = in == PLD_DT_FP32 ? 4 : 2, osz = odt == PLD_DT_FP32 ? 4 : 2;
    /* a: [m, kk], stored transposed when strided; b: [kk, n], column gap 2 when strided; out row gap 3 */
    const int64_t bsc = strided ? 2 : 1, osr = strided ? n + 3 : n;
    char *a = calloc((size_t)(m * kk), (size_t)isz), *b = calloc((size_t)(kk * n * bsc), (size_t)isz);
    char *o = calloc((size_t)(m * osr), (size_t)osz), *o0 = calloc((size_t)(m * osr), (size_t)osz);
    for (int64_t i = 0; i < m * kk; i++)
        put_bits(in, a, i, rnd_bits(in, special));
    for (int64_t i = 0; i < kk * n * bsc; i++)
        put_bits(in, b, i, rnd_bits(in, special));
    for (int64_t i = 0; i < m * osr; i++)
        put_bits(odt, o0, i, rnd_bits(odt, special));
    memcpy(o, o0, (size_t)(m * osr * osz));
    pld_view_t va = strided ? vs2(a, in, m, kk, 1, m) : v2(a, in, m, kk);
    pld_view_t vb = vs2(b, in, kk, n, n * bsc, bsc), vo = vs2(o, odt, m, n, osr, 1);
    char err[ERRN];
    int bad = pld_k_matmul(&vo, &va, &vb, acc, err, sizeof err) != PLD_OK;
    for (int64_t i = 0; i < m && !bad; i++)
        for (int64_t j = 0; j < n; j++) {
            float s = acc ? get_f(odt, o0, i * osr + j) : 0.0f;
            for (int64_t k = 0; k < kk; k++) {
                const float x = get_f(in, a, strided ? k * m + i : i * kk + k), y = get_f(in, b, k * n * bsc + j * bsc);
                const float p = x * y;
                s = s + p;
            }
            const uint32_t want = isnan(s) ? 0 : bits_of(odt, s), got = raw_bits(odt, o, i * osr + j);
            if (isnan(s) ? !bits_nan(odt, got) : got != want) {
                if (bad++ < 1)
                    fprintf(stderr, "matmul %s->%s [%lld,%lld]x[%lld,%lld] acc %d strided %d: (%lld, %lld) got 0x%x want 0x%x\n",
                            pld_dtype_name(in), pld_dtype_name(odt), (long long)m, (long long)kk, (long long)kk,
                            (long long)n, acc, strided, (long long)i, (long long)j, got, want);
            }
        }
    /* the gaps of out are untouched */
    for (int64_t i = 0; i < m && !bad; i++)
        for (int64_t j = n; j < osr; j++)
            bad += raw_bits(odt, o, i * osr + j) != raw_bits(odt, o0, i * osr + j);
    free(a), free(b), free(o), free(o0);
    return bad;
}

void test_kern_matmul_blocked(void)
{
    tables_init();
    static const pld_dtype_t ins[3] = {PLD_DT_FP32, PLD_DT_FP16, PLD_DT_BF16};
    int bad = 0, cases = 0;
    for (int set = 0; set < 2; set++) {
        pld_kern_simd_force_base(set);
        for (int d = 0; d < 3; d++)
            for (int mi = 0; mi < NELEM(sizes); mi++)
                for (int ki = 0; ki < NELEM(sizes); ki++)
                    for (int ni = 0; ni < NELEM(sizes); ni++) {
                        const int acc = (mi + ki + ni + set) & 1, strided = ((mi + 2 * ni + ki) % 3) == 0;
                        bad += mm_case(ins[d], PLD_DT_FP32, sizes[mi], sizes[ki], sizes[ni], acc, strided, 1) != 0;
                        cases++;
                    }
        /* FP16 / BF16 out (one rounding of the FP32 sum), the other accumulate flag */
        for (int mi = 0; mi < NELEM(sizes); mi += 2)
            for (int ni = 1; ni < NELEM(sizes); ni += 2) {
                bad += mm_case(PLD_DT_FP16, PLD_DT_FP16, sizes[mi], sizes[(mi + ni) % 6], sizes[ni], 1, mi & 1, 0) != 0;
                bad += mm_case(PLD_DT_BF16, PLD_DT_BF16, sizes[mi], sizes[ni], sizes[ni], 0, ni & 1, 0) != 0;
                bad += mm_case(PLD_DT_FP32, PLD_DT_FP16, sizes[mi], sizes[ni], sizes[mi], 1, 1, 0) != 0;
                cases += 3;
            }
    }
    pld_kern_simd_force_base(0);
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_TRUE(cases > 1000);
    /* a batch of 3 with b broadcast (stride 0) over it */
    float a[3 * 5 * 7], b[7 * 9], o[3 * 5 * 9];
    for (int i = 0; i < NELEM(a); i++)
        a[i] = (float)rnd_double(-3, 3);
    for (int i = 0; i < NELEM(b); i++)
        b[i] = (float)rnd_double(-3, 3);
    const int64_t sa[3] = {3, 5, 7}, sb[3] = {3, 7, 9}, so[3] = {3, 5, 9};
    pld_view_t va = vw(a, PLD_DT_FP32, 3, sa), vb = vw(b, PLD_DT_FP32, 3, sb), vo = vw(o, PLD_DT_FP32, 3, so);
    vb.strides[0] = 0;
    char err[ERRN];
    CU_ASSERT_EQUAL(pld_k_matmul(&vo, &va, &vb, 0, err, sizeof err), PLD_OK);
    int bb = 0;
    for (int q = 0; q < 3; q++)
        for (int i = 0; i < 5; i++)
            for (int j = 0; j < 9; j++) {
                float s = 0.0f;
                for (int k = 0; k < 7; k++) {
                    const float p = a[q * 35 + i * 7 + k] * b[k * 9 + j];
                    s = s + p;
                }
                bb += f2u(s) != f2u(o[q * 45 + i * 9 + j]);
            }
    CU_ASSERT_EQUAL(bb, 0);
}

/* ---- reductions -------------------------------------------------------------------- */

static float ref_max(float r, float x, int max)
{
    if (isnan(r))
        return r;
    if (isnan(x))
        return x;
    if (max ? x > r : x < r)
        return x;
    if (x == r && (max ? !signbit(x) : signbit(x) != 0))
        return x;
    return r;
}

/* row (row != 0) or column reduction op of an [r, c] FP32 view (row stride sr, column stride sc) */
static int red_case(pld_redop_k_t op, int row, int64_t r, int64_t c, int64_t sr, int64_t sc)
{
    float *a = calloc((size_t)(r * sr + c * sc + 1), sizeof(float));
    const int64_t no = row ? r : c;
    float *o = calloc((size_t)no, sizeof(float));
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < c; j++) {
            uint32_t bits = rnd_bits(PLD_DT_FP32, (rng() % 4) == 0);
            if (bits == 0x7fc00001u && (rng() & 1))
                bits = 0xffc00007u; /* a second NaN payload: the first NaN wins max / min */
            a[i * sr + j * sc] = u2f(bits);
        }
    pld_view_t va = vs2(a, PLD_DT_FP32, r, c, sr, sc), vo = row ? vs2(o, PLD_DT_FP32, r, 1, 1, 1) : vs2(o, PLD_DT_FP32, 1, c, c, 1);
    char err[ERRN];
    int bad = pld_k_reduce(op, row ? PLD_K_RED_ROW : 0, &vo, &va, err, sizeof err) != PLD_OK;
    for (int64_t q = 0; q < no && !bad; q++) {
        const int64_t len = row ? c : r, st = row ? sc : sr;
        const float *p = a + (row ? q * sr : q * sc);
        float s = p[0];
        for (int64_t k = 1; k < len; k++) {
            const float x = p[k * st];
            s = op == PLD_K_RSUM ? s + x : op == PLD_K_RPROD ? s * x : ref_max(s, x, op == PLD_K_RMAX);
        }
        const int ok = (op == PLD_K_RSUM || op == PLD_K_RPROD) && isnan(s) ? isnan(o[q]) : f2u(s) == f2u(o[q]);
        if (!ok && bad++ < 1)
            fprintf(stderr, "%s reduce %d [%lld,%lld] strides (%lld,%lld): %lld got 0x%x want 0x%x\n", row ? "row" : "col",
                    (int)op, (long long)r, (long long)c, (long long)sr, (long long)sc, (long long)q, f2u(o[q]), f2u(s));
    }
    free(a), free(o);
    return bad;
}

void test_kern_reduce_vec(void)
{
    static const pld_redop_k_t ops[4] = {PLD_K_RSUM, PLD_K_RMAX, PLD_K_RMIN, PLD_K_RPROD};
    int bad = 0;
    for (int set = 0; set < 2; set++) {
        pld_kern_simd_force_base(set);
        for (int oi = 0; oi < 4; oi++)
            for (int ri = 0; ri < NELEM(sizes); ri++)
                for (int ci = 0; ci < NELEM(sizes); ci++) {
                    const int64_t r = sizes[ri], c = sizes[ci];
                    for (int row = 0; row < 2; row++) {
                        bad += red_case(ops[oi], row, r, c, c, 1);
                        bad += red_case(ops[oi], row, r, c, 2 * c + 5, 2); /* strided */
                        bad += red_case(ops[oi], row, r, c, 1, r);         /* column-major */
                    }
                }
    }
    pld_kern_simd_force_base(0);
    CU_ASSERT_EQUAL(bad, 0);
}

/* ---- FP16 / BF16 and integer reductions (issue 44) ------------------------------------ */

/* row or column reduction op of an [r, c] FP16 / BF16 view against the plain
 * loops of RED_ROW (an FP32 accumulator, left to right, one rounding at the
 * store) and RED_COL (a sum or product rounded to the dtype after every
 * step, top to bottom) */
static int red16_case(pld_redop_k_t op, pld_dtype_t dt, int row, int64_t r, int64_t c, int64_t sr, int64_t sc)
{
    uint16_t *a = calloc((size_t)(r * sr + c * sc + 1), 2);
    const int64_t no = row ? r : c;
    uint16_t *o = calloc((size_t)no, 2);
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < c; j++) {
            uint32_t bits = rnd_bits(dt, (rng() % 4) == 0);
            if ((bits == 0x7e01u || bits == 0x7fc1u) && (rng() & 1))
                bits |= 0x8006u; /* a second NaN payload: the first NaN wins max / min */
            a[i * sr + j * sc] = (uint16_t)bits;
        }
    pld_view_t va = vs2(a, dt, r, c, sr, sc), vo = row ? vs2(o, dt, r, 1, 1, 1) : vs2(o, dt, 1, c, c, 1);
    char err[ERRN];
    int bad = pld_k_reduce(op, row ? PLD_K_RED_ROW : 0, &vo, &va, err, sizeof err) != PLD_OK;
    const int bf = dt == PLD_DT_BF16;
    for (int64_t q = 0; q < no && !bad; q++) {
        const int64_t len = row ? c : r, st = row ? sc : sr;
        const uint16_t *p = a + (row ? q * sr : q * sc);
        float s = get_f(dt, p, 0);
        uint16_t nanb = p[0]; /* max / min: the bits of the NaN that wins (quiet inputs come back unchanged) */
        for (int64_t k = 1; k < len; k++) {
            const float x = get_f(dt, p, k * st);
            if (isnan(x) && !isnan(s))
                nanb = p[k * st];
            if (op == PLD_K_RSUM || op == PLD_K_RPROD) {
                s = op == PLD_K_RSUM ? s + x : s * x;
                if (!row) /* the column step rounds to the dtype */
                    s = isnan(s) ? s : (float)(bf ? decbf((uint16_t)bits_of(dt, s)) : dec16((uint16_t)bits_of(dt, s)));
            } else {
                s = ref_max(s, x, op == PLD_K_RMAX);
            }
        }
        const uint16_t want = isnan(s) ? nanb : (uint16_t)bits_of(dt, s);
        const int ok = (op == PLD_K_RSUM || op == PLD_K_RPROD) && isnan(s) ? bits_nan(dt, o[q]) : want == o[q];
        if (!ok && bad++ < 1)
            fprintf(stderr, "%s %s reduce %d [%lld,%lld] strides (%lld,%lld): %lld got 0x%x want 0x%x\n", bf ? "bf16" : "fp16",
                    row ? "row" : "col", (int)op, (long long)r, (long long)c, (long long)sr, (long long)sc, (long long)q,
                    o[q], want);
    }
    free(a), free(o);
    return bad;
}

void test_kern_reduce_vec16(void)
{
    static const pld_redop_k_t ops[4] = {PLD_K_RSUM, PLD_K_RMAX, PLD_K_RMIN, PLD_K_RPROD};
    static const int64_t big[] = {1, 17, 65, 130, 1100}; /* 1100: max / min past the widened-row limit (1024) */
    int bad = 0;
    for (int set = 0; set < 2; set++) {
        pld_kern_simd_force_base(set);
        for (int d = 0; d < 2; d++)
            for (int oi = 0; oi < 4; oi++)
                for (int ri = 0; ri < NELEM(sizes); ri++)
                    for (int ci = 0; ci < NELEM(big); ci++) {
                        const pld_dtype_t dt = d ? PLD_DT_BF16 : PLD_DT_FP16;
                        const int64_t r = sizes[ri], c = big[ci];
                        for (int row = 0; row < 2; row++) {
                            bad += red16_case(ops[oi], dt, row, r, c, c, 1);
                            bad += red16_case(ops[oi], dt, row, r, c, 2 * c + 5, 2); /* strided */
                            bad += red16_case(ops[oi], dt, row, r, c, 1, r);         /* column-major */
                        }
                    }
    }
    pld_kern_simd_force_base(0);
    CU_ASSERT_EQUAL(bad, 0);
}

/* element i of an integer buffer of dt, sign- or zero-extended */
static int64_t get_int(pld_dtype_t dt, const void *p, int64_t i)
{
    switch (dt) {
    case PLD_DT_INT8: return ((const int8_t *)p)[i];
    case PLD_DT_UINT8: return ((const uint8_t *)p)[i];
    case PLD_DT_INT16: return ((const int16_t *)p)[i];
    case PLD_DT_UINT16: return ((const uint16_t *)p)[i];
    case PLD_DT_UINT32: return ((const uint32_t *)p)[i];
    default: return ((const int32_t *)p)[i];
    }
}

/* row or column reduction op of an [r, c] integer view (at most 32 bits; a
 * misaligned base when mis) against RED_ROW / RED_COL's 64-bit steps */
static int redint_case(pld_redop_k_t op, pld_dtype_t dt, int row, int64_t r, int64_t c, int64_t sr, int64_t sc, int mis)
{
    const int sz = pld_dtype_storage_bytes(dt);
    const int sgn = dt == PLD_DT_INT8 || dt == PLD_DT_INT16 || dt == PLD_DT_INT32;
    char *buf = calloc((size_t)(r * sr + c * sc + 2) * (size_t)sz, 1);
    char *a = buf + mis;
    const int64_t no = row ? r : c;
    char *o = calloc((size_t)no, (size_t)sz);
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < c; j++) {
            uint32_t v = (uint32_t)rng();
            if (op == PLD_K_RPROD && (rng() % 4)) /* products of small odd and even values, not always 0 */
                v = (uint32_t)(rng() % 7) - 3u;
            memcpy(a + (i * sr + j * sc) * sz, &v, (size_t)sz);
        }
    pld_view_t va = vs2(a, dt, r, c, sr, sc), vo = row ? vs2(o, dt, r, 1, 1, 1) : vs2(o, dt, 1, c, c, 1);
    char err[ERRN];
    int bad = pld_k_reduce(op, row ? PLD_K_RED_ROW : 0, &vo, &va, err, sizeof err) != PLD_OK;
    for (int64_t q = 0; q < no && !bad; q++) {
        const int64_t len = row ? c : r, st = row ? sc : sr;
        char tmp[8];
        uint64_t s = 0;
        for (int64_t k = 0; k < len; k++) {
            memcpy(tmp, a + ((row ? q * sr : q * sc) + k * st) * sz, (size_t)sz);
            const int64_t x = get_int(dt, tmp, 0);
            if (k == 0)
                s = (uint64_t)x;
            else if (op == PLD_K_RSUM)
                s += (uint64_t)x;
            else if (op == PLD_K_RPROD)
                s *= (uint64_t)x;
            else if (sgn)
                s = (op == PLD_K_RMAX ? x > (int64_t)s : x < (int64_t)s) ? (uint64_t)x : s;
            else
                s = (op == PLD_K_RMAX ? (uint64_t)x > s : (uint64_t)x < s) ? (uint64_t)x : s;
        }
        uint64_t got = 0, want = 0;
        memcpy(&got, o + q * sz, (size_t)sz);
        memcpy(&want, &s, (size_t)sz); /* the low bits (little-endian) */
        if (got != want && bad++ < 1)
            fprintf(stderr, "%s %s reduce %d [%lld,%lld] strides (%lld,%lld)%s: %lld got 0x%llx want 0x%llx\n",
                    pld_dtype_name(dt), row ? "row" : "col", (int)op, (long long)r, (long long)c, (long long)sr,
                    (long long)sc, mis ? " misaligned" : "", (long long)q, (unsigned long long)got, (unsigned long long)want);
    }
    free(buf), free(o);
    return bad;
}

void test_kern_reduce_vec_int(void)
{
    static const pld_redop_k_t ops[4] = {PLD_K_RSUM, PLD_K_RMAX, PLD_K_RMIN, PLD_K_RPROD};
    static const pld_dtype_t dts[] = {PLD_DT_INT8, PLD_DT_UINT8, PLD_DT_INT16, PLD_DT_UINT16, PLD_DT_INT32, PLD_DT_UINT32};
    int bad = 0;
    for (int set = 0; set < 2; set++) {
        pld_kern_simd_force_base(set);
        for (int d = 0; d < NELEM(dts); d++)
            for (int oi = 0; oi < 4; oi++)
                for (int ri = 0; ri < NELEM(sizes); ri++)
                    for (int ci = 0; ci < NELEM(sizes); ci++) {
                        const int64_t r = sizes[ri], c = sizes[ci];
                        for (int row = 0; row < 2; row++) {
                            bad += redint_case(ops[oi], dts[d], row, r, c, c, 1, 0);
                            bad += redint_case(ops[oi], dts[d], row, r, c, c, 1, dts[d] == PLD_DT_INT32);
                            bad += redint_case(ops[oi], dts[d], row, r, c, 2 * c + 5, 2, 0); /* strided */
                            bad += redint_case(ops[oi], dts[d], row, r, c, 1, r, 0);         /* column-major */
                        }
                    }
    }
    pld_kern_simd_force_base(0);
    CU_ASSERT_EQUAL(bad, 0);
}
