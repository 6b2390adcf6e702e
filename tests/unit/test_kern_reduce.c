/* test_kern_reduce.c - the numeric-kernel suite (CTest `kern`, table in test_kern.c):
 * unary ops and reductions. */
#include "test_kern_util.h"

/* ---- unary ------------------------------------------------------------------------- */

void test_kern_unary(void)
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

void test_kern_reduce_rows(void)
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

void test_kern_reduce_cols(void)
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
void test_kern_reduce_fp16_accum(void)
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
void test_kern_reduce_prod_arg(void)
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

void test_kern_reduce_errors(void)
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
