/* test_interp_ops.c - the interpreter suite (CTest `interp`, tables in test_interp.c):
 * tile ops, tensor ops and dispatch. */
#include "test_interp_util.h"

/* ------------------------------------------------------------ tile ops */

/* load with valid_shape, clamped load at the bottom edge, store of partly
 * valid tiles (untouched rows stay 0). x is [6, 8] arange. (z is [8, 8]: the
 * checker bounds a store by the tile's static shape, so the clamped [4, 8]
 * tile stored at row 1 needs 5 rows even though only 2 are valid.) */
static const char *SRC_LOAD =
    HDR INCORE
    "    def k(self, x: pl.Tensor[[6, 8], pl.FP32], y: pl.Out[pl.Tensor[[4, 8], pl.FP32]], z: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:\n"
    "        part = pl.load(x, [1, 0], [4, 8], valid_shape=[3, 5])\n"
    "        y = pl.store(part, [0, 0], y)\n"
    "        tail = pl.tile.load(x, [4, 0], [4, 8], [4, 8], clamp=True)\n"
    "        z = pl.store(tail, [1, 0], z)\n"
    "        return y\n"
    ORCH
    "    def main(self, x: pl.Tensor[[6, 8], pl.FP32], y: pl.Out[pl.Tensor[[4, 8], pl.FP32]], z: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:\n"
    "        y = self.k(x, y, z)\n"
    "        return y\n";

void test_interp_tile_load_valid_shape_clamp_store(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_LOAD, pld_comm_self()))
        goto out;
    CU_ASSERT_EQUAL(tp_gen(&t, "x", "arange"), PLD_OK);
    tp_zero_outs(&t);
    if (tp_run(&t, PLD_OK) != PLD_OK)
        goto out;
    float wy[32] = {0}, wz[64] = {0};
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 5; c++)
            wy[r * 8 + c] = (float)((1 + r) * 8 + c);
    /* rows 4..5 of x are the valid part of the clamped tile; stored at row 1 */
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 8; c++)
            wz[(1 + r) * 8 + c] = (float)((4 + r) * 8 + c);
    EXPECT_F32(&t, "y", wy);
    EXPECT_F32(&t, "z", wz);
out:
    tp_close(&t);
}

/* Elementwise tile ops with tile and scalar operands. */
static const char *SRC_ELEM =
    HDR INCORE
    "    def k(self, a: pl.Tensor[[2, 8], pl.FP32], b: pl.Tensor[[2, 8], pl.FP32], o: pl.Out[pl.Tensor[[8, 16], pl.FP32]], s: pl.Scalar[pl.FP32]) -> pl.Tensor[[8, 16], pl.FP32]:\n"
    "        ta = pl.load(a, [0, 0], [2, 8])\n"
    "        tb = pl.load(b, [0, 0], [2, 8])\n"
    "        o = pl.store(pl.add(ta, tb), [0, 0], o)\n"
    "        o = pl.store(pl.sub(ta, tb), [0, 8], o)\n"
    "        o = pl.store(pl.mul(ta, tb), [2, 0], o)\n"
    "        o = pl.store(pl.div(ta, tb), [2, 8], o)\n"
    "        o = pl.store(pl.tile.adds(ta, s), [4, 0], o)\n"
    "        o = pl.store(pl.tile.subs(ta, s), [4, 8], o)\n"
    "        o = pl.store(pl.tile.muls(ta, s), [6, 0], o)\n"
    "        o = pl.store(pl.tile.divs(ta, s), [6, 8], o)\n"
    "        return o\n"
    ORCH
    "    def main(self, a: pl.Tensor[[2, 8], pl.FP32], b: pl.Tensor[[2, 8], pl.FP32], o: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:\n"
    "        o = self.k(a, b, o, 0.3)\n"
    "        return o\n";

void test_interp_tile_elementwise(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_ELEM, pld_comm_self()))
        goto out;
    float a[16], b[16];
    for (int k = 0; k < 16; k++) {
        a[k] = (float)(k - 5) * 0.37f;
        b[k] = 1.5f + (float)k * 0.11f; /* never 0 */
    }
    const int64_t shp[2] = {2, 8};
    CU_ASSERT_EQUAL(tp_bind(&t, "a", PLD_DT_FP32, 2, shp, a), PLD_OK);
    CU_ASSERT_EQUAL(tp_bind(&t, "b", PLD_DT_FP32, 2, shp, b), PLD_OK);
    tp_zero_outs(&t);
    if (tp_run(&t, PLD_OK) != PLD_OK)
        goto out;
    const float s = 0.3f; /* the literal 0.3 as an FP32 scalar */
    float w[128];
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 8; c++) {
            float x = a[r * 8 + c], y = b[r * 8 + c];
            w[(0 + r) * 16 + c] = x + y;
            w[(0 + r) * 16 + 8 + c] = x - y;
            w[(2 + r) * 16 + c] = x * y;
            w[(2 + r) * 16 + 8 + c] = x / y;
            w[(4 + r) * 16 + c] = x + s;
            w[(4 + r) * 16 + 8 + c] = x - s;
            w[(6 + r) * 16 + c] = x * s;
            w[(6 + r) * 16 + 8 + c] = x / s;
        }
    EXPECT_F32(&t, "o", w);
out:
    tp_close(&t);
}

/* FP32 -> FP16 -> FP32 round trip: round to nearest even, ties, overflow to
 * infinity, subnormals.
 *
 * Regression test: pld_k_cast's contiguous fast path (RUN2 in
 * src/sim_npu/pld_kern.c) once stepped source and destination with the same
 * element size, so FP16 -> FP32 read past the end of the FP16 tile
 * (heap-buffer-overflow under ASan) and FP32 -> FP16 read the wrong elements. */
static const char *SRC_CAST =
    HDR INCORE
    "    def k(self, x: pl.Tensor[[1, 16], pl.FP32], y: pl.Out[pl.Tensor[[1, 16], pl.FP32]], h: pl.Out[pl.Tensor[[1, 16], pl.FP16]]) -> pl.Tensor[[1, 16], pl.FP32]:\n"
    "        t = pl.load(x, [0, 0], [1, 16])\n"
    "        t16 = pl.cast(t, pl.FP16)\n"
    "        h = pl.store(t16, [0, 0], h)\n"
    "        back = pl.tile.cast(t16, target_type=pl.FP32, mode='round')\n"
    "        y = pl.store(back, [0, 0], y)\n"
    "        return y\n"
    ORCH
    "    def main(self, x: pl.Tensor[[1, 16], pl.FP32], y: pl.Out[pl.Tensor[[1, 16], pl.FP32]], h: pl.Out[pl.Tensor[[1, 16], pl.FP16]]) -> pl.Tensor[[1, 16], pl.FP32]:\n"
    "        y = self.k(x, y, h)\n"
    "        return y\n";

void test_interp_tile_cast_fp16_rounding(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_CAST, pld_comm_self()))
        goto out;
    const float x[16] = {
        1.0f + 0x1p-10f,           /* exact */
        1.0f + 0x1p-11f,           /* tie -> even: 1 */
        1.0f + 3 * 0x1p-11f,       /* tie -> even: 1 + 2^-9 */
        1.0f + 0x1p-11f + 0x1p-20f, /* above the tie: 1 + 2^-10 */
        -2.0f - 0x1p-10f,          /* tie -> even: -2 */
        0.1f,
        65504.0f,                  /* max finite */
        65519.0f,                  /* below the overflow tie: 65504 */
        65520.0f,                  /* tie at max -> inf */
        -70000.0f,                 /* -inf */
        0x1p-24f,                  /* smallest subnormal */
        0x1p-25f,                  /* tie -> 0 */
        3 * 0x1p-26f,              /* 0.75 ulp -> 2^-24 */
        0x1p-14f + 0x1p-25f,       /* smallest normal + below half ulp */
        1e-9f,                     /* underflow to 0 */
        -3.14159265f};
    const int64_t shp[2] = {1, 16};
    CU_ASSERT_EQUAL(tp_bind(&t, "x", PLD_DT_FP32, 2, shp, x), PLD_OK);
    tp_zero_outs(&t);
    if (tp_run(&t, PLD_OK) != PLD_OK)
        goto out;
    float want[16];
    for (int k = 0; k < 16; k++)
        want[k] = round_f16(x[k]);
    /* spot checks of the reference itself, by hand */
    CU_ASSERT_EQUAL(want[1], 1.0f);
    CU_ASSERT_EQUAL(want[2], 1.0f + 0x1p-9f);
    CU_ASSERT_EQUAL(want[3], 1.0f + 0x1p-10f);
    CU_ASSERT_EQUAL(want[4], -2.0f);
    CU_ASSERT_EQUAL(want[5], 0.0999755859375f);
    CU_ASSERT_EQUAL(want[7], 65504.0f);
    CU_ASSERT(isinf(want[8]) && want[8] > 0);
    CU_ASSERT(isinf(want[9]) && want[9] < 0);
    CU_ASSERT_EQUAL(want[11], 0.0f);
    CU_ASSERT_EQUAL(want[12], 0x1p-24f);
    CU_ASSERT_EQUAL(want[13], 0x1p-14f);
    CU_ASSERT_EQUAL(want[15], -3.140625f);
    EXPECT_F32(&t, "y", want);
    /* the FP16 output holds the same values (compare through the reference's bits) */
    int64_t n;
    const uint16_t *h = tp_result(&t, "h", PLD_DT_FP16, &n);
    CU_ASSERT_EQUAL(n, 16);
    CU_ASSERT_EQUAL(h[0], 0x3c01);  /* 1 + 2^-10 */
    CU_ASSERT_EQUAL(h[1], 0x3c00);  /* 1 */
    CU_ASSERT_EQUAL(h[8], 0x7c00);  /* +inf */
    CU_ASSERT_EQUAL(h[9], 0xfc00);  /* -inf */
    CU_ASSERT_EQUAL(h[10], 0x0001); /* 2^-24 */
    CU_ASSERT_EQUAL(h[11], 0x0000);
out:
    tp_close(&t);
}

/* row_sum over a ragged tile (valid 3 x 5 of 4 x 8): only valid elements are
 * summed, only valid rows are stored. */
static const char *SRC_ROWSUM =
    HDR INCORE
    "    def k(self, x: pl.Tensor[[4, 8], pl.FP32], s: pl.Out[pl.Tensor[[4, 1], pl.FP32]]) -> pl.Tensor[[4, 1], pl.FP32]:\n"
    "        t = pl.load(x, [0, 0], [4, 8], valid_shape=[3, 5])\n"
    "        scratch = pl.tile.create([4, 8], dtype=pl.FP32, target_memory=pl.Mem.Vec)\n"
    "        sums = pl.tile.row_sum(t, scratch)\n"
    "        s = pl.store(sums, [0, 0], s)\n"
    "        return s\n"
    ORCH
    "    def main(self, x: pl.Tensor[[4, 8], pl.FP32], s: pl.Out[pl.Tensor[[4, 1], pl.FP32]]) -> pl.Tensor[[4, 1], pl.FP32]:\n"
    "        s = self.k(x, s)\n"
    "        return s\n";

void test_interp_tile_row_sum_ragged(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_ROWSUM, pld_comm_self()))
        goto out;
    float x[32];
    for (int k = 0; k < 32; k++)
        x[k] = (float)(k % 7) - 2.5f;
    const int64_t shp[2] = {4, 8};
    CU_ASSERT_EQUAL(tp_bind(&t, "x", PLD_DT_FP32, 2, shp, x), PLD_OK);
    tp_zero_outs(&t);
    if (tp_run(&t, PLD_OK) != PLD_OK)
        goto out;
    float want[4] = {0};
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 5; c++)
            want[r] += x[r * 8 + c];
    EXPECT_F32(&t, "s", want);
out:
    tp_close(&t);
}

/* A small matmul: FP16 [4, 8] @ [8, 4] -> FP32 (values exact in FP32). */
static const char *SRC_MATMUL =
    HDR INCORE
    "    def k(self, a: pl.Tensor[[4, 8], pl.FP16], b: pl.Tensor[[8, 4], pl.FP16], c: pl.Out[pl.Tensor[[4, 4], pl.FP32]]) -> pl.Tensor[[4, 4], pl.FP32]:\n"
    "        a1 = pl.load(a, [0, 0], [4, 8], target_memory=pl.Mem.Mat)\n"
    "        b1 = pl.load(b, [0, 0], [8, 4], target_memory=pl.Mem.Mat)\n"
    "        a0 = pl.move(a1, target_memory=pl.Mem.Left)\n"
    "        b0 = pl.move(b1, target_memory=pl.Mem.Right)\n"
    "        p = pl.matmul(a0, b0)\n"
    "        c = pl.store(p, [0, 0], c)\n"
    "        return c\n"
    ORCH
    "    def main(self, a: pl.Tensor[[4, 8], pl.FP16], b: pl.Tensor[[8, 4], pl.FP16], c: pl.Out[pl.Tensor[[4, 4], pl.FP32]]) -> pl.Tensor[[4, 4], pl.FP32]:\n"
    "        c = self.k(a, b, c)\n"
    "        return c\n";

/* binary16 bits of a small value that is exact in FP16 (|v| < 2048, v*4 integer). */
static uint16_t f16_bits_exact(float v)
{
    if (v == 0)
        return 0;
    uint16_t sign = v < 0 ? 0x8000 : 0;
    float a = fabsf(v);
    int e;
    float m = frexpf(a, &e); /* a = m * 2^e, m in [0.5, 1) */
    int exp16 = e - 1 + 15;
    uint16_t mant = (uint16_t)((m * 2.0f - 1.0f) * 1024.0f);
    return (uint16_t)(sign | (exp16 << 10) | mant);
}

void test_interp_tile_matmul_small(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_MATMUL, pld_comm_self()))
        goto out;
    float a[32], b[32];
    uint16_t a16[32], b16[32];
    for (int k = 0; k < 32; k++) {
        a[k] = (float)((k * 5) % 9 - 4) * 0.5f;
        b[k] = (float)((k * 3) % 7 - 3) * 0.25f;
        a16[k] = f16_bits_exact(a[k]);
        b16[k] = f16_bits_exact(b[k]);
    }
    CU_ASSERT_EQUAL(f16_bits_exact(1.0f), 0x3c00);
    CU_ASSERT_EQUAL(f16_bits_exact(-2.0f), 0xc000);
    CU_ASSERT_EQUAL(f16_bits_exact(0.25f), 0x3400);
    const int64_t sa[2] = {4, 8}, sb[2] = {8, 4};
    CU_ASSERT_EQUAL(tp_bind(&t, "a", PLD_DT_FP16, 2, sa, a16), PLD_OK);
    CU_ASSERT_EQUAL(tp_bind(&t, "b", PLD_DT_FP16, 2, sb, b16), PLD_OK);
    tp_zero_outs(&t);
    if (tp_run(&t, PLD_OK) != PLD_OK)
        goto out;
    float want[16];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            float s = 0;
            for (int k = 0; k < 8; k++)
                s += a[i * 8 + k] * b[k * 4 + j];
            want[i * 4 + j] = s;
        }
    EXPECT_F32(&t, "c", want);
out:
    tp_close(&t);
}

/* ------------------------------------------------------------ tensor ops */

/* HOST x[r] slices, pl.create_tensor, tensor slice c[1:3, :], tensor muls,
 * pl.assemble in a CORE_GROUP scope, pl.read / pl.write. */
static const char *SRC_TENSOR =
    HDR INCORE
    "    def fill(self, x: pl.Tensor[[4, 8], pl.FP32], c: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:\n"
    "        t = pl.load(x, [0, 0], [4, 8])\n"
    "        c = pl.store(pl.tile.adds(t, 1.0), [0, 0], c)\n"
    "        return c\n"
    ORCH
    "    def chip(self, x: pl.Tensor[[4, 8], pl.FP32], c: pl.Out[pl.Tensor[[4, 8], pl.FP32]], top: pl.Out[pl.Tensor[[4, 8], pl.FP32]], e: pl.Out[pl.Tensor[[1, 2], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:\n"
    "        c = self.fill(x, c)\n"
    "        with pl.at(level=pl.Level.CORE_GROUP):\n"
    "            mid = c[1:3, :]\n"
    "            doubled = pl.mul(mid, 2.0)\n"
    "            top = pl.assemble(top, doubled, [2, 0])\n"
    "        v = pl.read(c, [3, 5])\n"
    "        pl.write(e, [0, 0], v)\n"
    "        pl.write(e, [0, 1], pl.read(x, [0, 7]) * 3.0)\n"
    "        return top\n"
    HOST
    "    def host(self, xs: pl.Tensor[[2, 4, 8], pl.FP32], tops: pl.Out[pl.Tensor[[2, 4, 8], pl.FP32]], es: pl.Out[pl.Tensor[[2, 1, 2], pl.FP32]]) -> pl.Tensor[[2, 4, 8], pl.FP32]:\n"
    "        for r in pl.range(2):\n"
    "            scratch = pl.create_tensor([4, 8], dtype=pl.FP32)\n"
    "            self.chip(xs[r], scratch, tops[r], es[r], device=0)\n"
    "        return tops\n";

void test_interp_tensor_slice_assemble_read_write(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_TENSOR, pld_comm_self()))
        goto out;
    CU_ASSERT_EQUAL(tp_gen(&t, "xs", "arange"), PLD_OK);
    tp_zero_outs(&t);
    if (tp_run(&t, PLD_OK) != PLD_OK)
        goto out;
    float wt[64] = {0}, we[4];
    for (int r = 0; r < 2; r++) {
        const int base = r * 32; /* xs[r][i, j] = 32 r + 8 i + j */
        for (int i = 1; i < 3; i++)
            for (int j = 0; j < 8; j++)
                wt[base + (i + 1) * 8 + j] = ((float)(base + i * 8 + j) + 1.0f) * 2.0f;
        we[r * 2 + 0] = (float)(base + 3 * 8 + 5) + 1.0f;
        we[r * 2 + 1] = (float)(base + 7) * 3.0f;
    }
    EXPECT_F32(&t, "tops", wt);
    EXPECT_F32(&t, "es", we);
out:
    tp_close(&t);
}

/* ------------------------------------------------------------ dispatch */

static const char *SRC_DISPATCH =
    HDR INCORE
    "    def stamp(self, y: pl.Out[pl.Tensor[[1, 4], pl.INT32]], v: pl.Scalar[pl.INT32]) -> pl.Tensor[[1, 4], pl.INT32]:\n"
    "        pl.write(y, [0, 0], v)\n"
    "        pl.write(y, [0, 3], v + pl.const(100, pl.INT32))\n"
    "        return y\n"
    ORCH
    "    def chip(self, y: pl.Out[pl.Tensor[[1, 4], pl.INT32]], v: pl.Scalar[pl.INT32]) -> pl.Tensor[[1, 4], pl.INT32]:\n"
    "        y = self.stamp(y, v)\n"
    "        return y\n"
    HOST
    "    def host(self, ys: pl.Out[pl.Tensor[[4, 1, 4], pl.INT32]]) -> pl.Tensor[[4, 1, 4], pl.INT32]:\n"
    "        self.chip(ys[0], 10, device=0)\n"
    "        self.chip(ys[1], 11, device=1)\n"
    "        self.chip(ys[2], 12)\n"
    "        self.chip(ys[3], 13)\n"
    "        return ys\n";

/* Expected ys when each dispatch runs only on its target rank (the rest stays 0). */
static void dispatch_expect(int rank, int nranks, int32_t *want, int *ndisp)
{
    memset(want, 0, 16 * sizeof *want);
    *ndisp = 0;
    /* device=0, device=1, then round-robin seq % P over the dispatches without device= */
    int target[4] = {0, 1, 0 % nranks, 1 % nranks};
    for (int k = 0; k < 4; k++)
        if (target[k] == rank) {
            want[k * 4 + 0] = 10 + k;
            want[k * 4 + 3] = 110 + k;
            (*ndisp)++;
        }
}

static void run_dispatch(int rank, int nranks)
{
    fake_comm_t fc;
    fake_init(&fc, rank, nranks);
    tprog_t t;
    if (!tp_open(&t, SRC_DISPATCH, &fc.comm))
        goto out;
    tp_zero_outs(&t);
    if (tp_run(&t, PLD_OK) != PLD_OK)
        goto out;
    int32_t want[16];
    int ndisp;
    dispatch_expect(rank, nranks, want, &ndisp);
    EXPECT_I32(&t, "ys", want);
    pld_interp_stats_t st;
    pld_interp_stats(t.it, &st);
    CU_ASSERT_EQUAL(st.dispatches, (uint64_t)ndisp);
    CU_ASSERT_EQUAL(st.tasks, (uint64_t)ndisp);
    CU_ASSERT(fc.maxes >= 1); /* ranks agree on success before assembling */
out:
    tp_close(&t);
}

void test_interp_dispatch_device_selects_rank(void)
{
    run_dispatch(1, 2); /* device=0 must not run here */
    run_dispatch(0, 2);
    run_dispatch(3, 4); /* nothing targets rank 3 */
    run_dispatch(2, 4);
}

/* Dispatch over pl.range(pld.world_size()) with a dynamic NR bound by an
 * input: rank 0 runs only device=0. */
const char *SRC_DISPATCH_WS =
    "import pypto.language as pl\nimport pypto.language.distributed as pld\n\nNR = pl.dynamic(\"NR\")\n\n\n"
    "@pl.program\nclass T:\n" INCORE
    "    def stamp(self, y: pl.Out[pl.Tensor[[1, 2], pl.INT32]], v: pl.Scalar[pl.INT32]) -> pl.Tensor[[1, 2], pl.INT32]:\n"
    "        pl.write(y, [0, 1], v * v)\n"
    "        return y\n"
    ORCH
    "    def chip(self, y: pl.Out[pl.Tensor[[1, 2], pl.INT32]], v: pl.Scalar[pl.INT32]) -> pl.Tensor[[1, 2], pl.INT32]:\n"
    "        y = self.stamp(y, v)\n"
    "        return y\n"
    HOST
    "    def host(self, xs: pl.Tensor[[NR, 1, 2], pl.INT32], ys: pl.Out[pl.Tensor[[NR, 1, 2], pl.INT32]]) -> pl.Tensor[[NR, 1, 2], pl.INT32]:\n"
    "        for r in pl.range(pld.world_size()):\n"
    "            self.chip(ys[r], r + 3, device=r)\n"
    "        return ys\n";

void test_interp_dispatch_world_size(void)
{
    for (int nr = 1; nr <= 2; nr++) {
        fake_comm_t fc;
        fake_init(&fc, 0, nr);
        tprog_t t;
        if (!tp_open(&t, SRC_DISPATCH_WS, nr == 1 ? pld_comm_self() : &fc.comm))
            goto next;
        int32_t xs[4] = {0};
        const int64_t shp[3] = {nr, 1, 2};
        CU_ASSERT_EQUAL(tp_bind(&t, "xs", PLD_DT_INT32, 3, shp, xs), PLD_OK);
        tp_zero_outs(&t);
        if (tp_run(&t, PLD_OK) != PLD_OK)
            goto next;
        int64_t n;
        const int32_t *ys = res_i32(&t, "ys", &n);
        CU_ASSERT_EQUAL(n, 2 * nr);
        /* rank 0 ran only device=0: ys[0][0, 1] = 3 * 3; every other element stays 0 */
        for (int k = 0; k < n; k++)
            CU_ASSERT_EQUAL(ys[k], k == 1 ? 9 : 0);
    next:
        tp_close(&t);
    }
}

/* Scalars before tensors in a kernel and in a CHIP entry: PyPTO's
 * single-device tests do it and its orchestration codegen reorders them, so
 * only a HOST dispatch (tests/bad/143) requires tensors first. */
static const char *SRC_SCALAR_FIRST =
    HDR INCORE
    "    def k(self, n: pl.Scalar[pl.INT32], x: pl.Tensor[[4, 8], pl.FP32], y: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:\n"
    "        t = pl.load(x, [0, 0], [4, 8])\n"
    "        f = pl.cast(n, target_type=pl.FP32)\n"
    "        u = pl.add(t, f)\n"
    "        y = pl.store(u, [0, 0], y)\n"
    "        return y\n"
    ORCH
    "    def main(self, x: pl.Tensor[[4, 8], pl.FP32], y: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:\n"
    "        y = self.k(3, x, y)\n"
    "        return y\n";

void test_interp_scalar_first(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_SCALAR_FIRST, pld_comm_self()))
        goto out;
    CU_ASSERT_EQUAL(tp_gen(&t, "x", "arange"), PLD_OK);
    tp_zero_outs(&t);
    if (tp_run(&t, PLD_OK) != PLD_OK)
        goto out;
    int64_t n;
    const float *y = res_f32(&t, "y", &n);
    CU_ASSERT_EQUAL(n, 32);
    CU_ASSERT_EQUAL(y[0], 3.0f);
    CU_ASSERT_EQUAL(y[31], 34.0f);
out:
    tp_close(&t);
}

/* pl.tensor.matmul with a_trans / b_trans: op(x) @ op(y), against a golden
 * computed here (the flags were once accepted and ignored). */
static const char *SRC_TMATMUL_TRANS =
    HDR ORCH
    "    def main(self, x: pl.Tensor[[3, 2], pl.FP32], y: pl.Tensor[[4, 3], pl.FP32], z: pl.Out[pl.Tensor[[2, 4], pl.FP32]]) -> pl.Tensor[[2, 4], pl.FP32]:\n"
    "        p = pl.tensor.matmul(x, y, a_trans=True, b_trans=True)\n"
    "        z = pl.tensor.assemble(z, p, [0, 0])\n"
    "        return z\n";

void test_interp_tensor_matmul_trans(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_TMATMUL_TRANS, pld_comm_self()))
        goto out;
    CU_ASSERT_EQUAL(tp_gen(&t, "x", "arange"), PLD_OK);
    CU_ASSERT_EQUAL(tp_gen(&t, "y", "arange"), PLD_OK);
    tp_zero_outs(&t);
    if (tp_run(&t, PLD_OK) != PLD_OK)
        goto out;
    int64_t n;
    const float *z = res_f32(&t, "z", &n);
    CU_ASSERT_EQUAL_FATAL(n, 8);
    /* x[k][i] = 2k + i (3x2), y[j][k] = 3j + k (4x3): z[i][j] = sum_k x[k][i] * y[j][k] */
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++) {
            float want = 0;
            for (int k = 0; k < 3; k++)
                want += (float)(2 * k + i) * (float)(3 * j + k);
            CU_ASSERT_EQUAL(z[i * 4 + j], want);
        }
out:
    tp_close(&t);
}
