/* test_kern_binary.c - the numeric-kernel suite (CTest `kern`, table in test_kern.c):
 * binary ops (FP32 loops of both instruction sets, broadcasting, strides,
 * FP16 / BF16 rounding, NaN and inf, folds), integer wrap and division. */
#include "test_kern_util.h"

/* ---- binary ------------------------------------------------------------------------ */

void test_kern_binary_fp32_ops(void)
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
void test_kern_binary_fp32_packed_inplace(void)
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
void test_kern_binary_broadcast(void)
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
void test_kern_binary_strided_ragged(void)
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
void test_kern_binary_fp16_bf16_rounding(void)
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
void test_kern_binary_fp16_bf16_random(void)
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

void test_kern_binary_nan_inf(void)
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
void test_kern_binary_fp32_simd_sets(void)
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

void test_kern_fold_orders(void)
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
void test_kern_int_wrap(void)
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

void test_kern_int_div_by_zero(void)
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

void test_kern_binary_scalar(void)
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
