/* test_interp.c - CUnit suite for the interpreter API (src/interp/pld_interp.h).
 *
 * In-process, no MPI. Small programs are parsed and checked from strings
 * (pld_check_text), run with pld_interp_create / _bind / _bind_generated /
 * _run, and their Out tensors read back with pld_interp_result. Every expected
 * value is computed here, by hand or by a few lines of C that restate the
 * semantics (Python floor // and %, INT32 wrap, IEEE binary16 rounding, ...);
 * none comes from running pldrun.
 *
 * Dispatch selection is tested with a fake pld_comm_t ("rank r of P") whose
 * gather copies only its own contribution (the other ranks' slots stay zero,
 * i.e. "they wrote nothing"), so a test at rank 1 of 2 sees exactly what rank 1
 * computed.
 *
 * Runtime errors are checked for their message and their location (line:col
 * computed from the program text by locating a marker substring).
 *
 */
#include "test_interp_util.h"

/* The suite is split by subject: this file (scalars, control flow, module
 * constants; the tables and main), test_interp_ops.c (tile and tensor ops,
 * dispatch), test_interp_errors.c (runtime errors, robustness, regressions),
 * test_interp_hw.c (the kernel ABI through a spy backend); helpers in
 * test_interp_util.c. */

/* ------------------------------------------------------------ scalars */

static const char *SRC_FLOOR =
    HDR ORCH
    "    def main(self, o: pl.Out[pl.Tensor[[1, 10], pl.INT32]], f: pl.Out[pl.Tensor[[1, 4], pl.FP32]]) -> pl.Tensor[[1, 10], pl.INT32]:\n"
    "        a: pl.Scalar[pl.INT32] = -7\n"
    "        b: pl.Scalar[pl.INT32] = 2\n"
    "        c: pl.Scalar[pl.INT32] = 7\n"
    "        d: pl.Scalar[pl.INT32] = -2\n"
    "        e: pl.Scalar[pl.INT32] = -8\n"
    "        pl.write(o, [0, 0], a // b)\n"
    "        pl.write(o, [0, 1], a % b)\n"
    "        pl.write(o, [0, 2], c // d)\n"
    "        pl.write(o, [0, 3], c % d)\n"
    "        pl.write(o, [0, 4], a // d)\n"
    "        pl.write(o, [0, 5], a % d)\n"
    "        pl.write(o, [0, 6], e // b)\n"
    "        pl.write(o, [0, 7], e % b)\n"
    "        i: pl.Scalar[pl.INDEX] = 0 - 13\n"
    "        pl.write(o, [0, 8], pl.cast(i // 4, pl.INT32))\n"
    "        pl.write(o, [0, 9], pl.cast(i % 4, pl.INT32))\n"
    "        x: pl.Scalar[pl.FP32] = -7.5\n"
    "        pl.write(f, [0, 0], x // 2.0)\n"
    "        pl.write(f, [0, 1], x % 2.0)\n"
    "        pl.write(f, [0, 2], 7.5 // -2.0)\n"
    "        pl.write(f, [0, 3], 7.5 % -2.0)\n"
    "        return o\n";

void test_interp_scalar_floor_div_mod(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_FLOOR, pld_comm_self()))
        goto out;
    tp_zero_outs(&t);
    if (tp_run(&t, PLD_OK) != PLD_OK)
        goto out;
    const int32_t want[10] = {
        (int32_t)py_floordiv(-7, 2), (int32_t)py_mod(-7, 2),   (int32_t)py_floordiv(7, -2),
        (int32_t)py_mod(7, -2),      (int32_t)py_floordiv(-7, -2), (int32_t)py_mod(-7, -2),
        (int32_t)py_floordiv(-8, 2), (int32_t)py_mod(-8, 2),   (int32_t)py_floordiv(-13, 4),
        (int32_t)py_mod(-13, 4)};
    /* spelled out once by hand as well: Python gives -4 1 -4 -1 3 -1 -4 0 -4 3 */
    const int32_t by_hand[10] = {-4, 1, -4, -1, 3, -1, -4, 0, -4, 3};
    for (int k = 0; k < 10; k++)
        CU_ASSERT_EQUAL(want[k], by_hand[k]);
    EXPECT_I32(&t, "o", want);
    /* float floor division and modulo: -7.5 // 2 = -4, -7.5 % 2 = 0.5, 7.5 // -2 = -4, 7.5 % -2 = -0.5 */
    const float fw[4] = {(float)floor(-7.5 / 2.0), (float)(-7.5 - 2.0 * floor(-7.5 / 2.0)), (float)floor(7.5 / -2.0),
                         (float)(7.5 - -2.0 * floor(7.5 / -2.0))};
    CU_ASSERT_EQUAL(fw[0], -4.0f);
    CU_ASSERT_EQUAL(fw[1], 0.5f);
    CU_ASSERT_EQUAL(fw[2], -4.0f);
    CU_ASSERT_EQUAL(fw[3], -0.5f);
    EXPECT_F32(&t, "f", fw);
out:
    tp_close(&t);
}

static const char *SRC_WRAP =
    HDR ORCH
    "    def main(self, o: pl.Out[pl.Tensor[[1, 6], pl.INT32]]) -> pl.Tensor[[1, 6], pl.INT32]:\n"
    "        big: pl.Scalar[pl.INT32] = 2147483647\n"
    "        one: pl.Scalar[pl.INT32] = 1\n"
    "        low: pl.Scalar[pl.INT32] = big + one\n"
    "        pl.write(o, [0, 0], low)\n"
    "        pl.write(o, [0, 1], low - one)\n"
    "        h: pl.Scalar[pl.INT32] = 65536\n"
    "        pl.write(o, [0, 2], h * h)\n"
    "        m: pl.Scalar[pl.INT32] = 46341\n"
    "        pl.write(o, [0, 3], m * m)\n"
    "        pl.write(o, [0, 4], 0 - low)\n"
    "        pl.write(o, [0, 5], big * pl.const(2, pl.INT32) + pl.const(3, pl.INT32))\n"
    "        return o\n";

void test_interp_scalar_int32_wrap(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_WRAP, pld_comm_self()))
        goto out;
    tp_zero_outs(&t);
    if (tp_run(&t, PLD_OK) != PLD_OK)
        goto out;
    int64_t big = 2147483647;
    int32_t low = wrap32(big + 1);
    const int32_t want[6] = {low, wrap32((int64_t)low - 1), wrap32(65536LL * 65536LL), wrap32(46341LL * 46341LL),
                             wrap32(-(int64_t)low), wrap32(big * 2 + 3)};
    /* by hand: INT32_MIN, INT32_MAX, 0, 2147488281 - 2^32, INT32_MIN, 1 */
    CU_ASSERT_EQUAL(want[0], INT32_MIN);
    CU_ASSERT_EQUAL(want[1], INT32_MAX);
    CU_ASSERT_EQUAL(want[2], 0);
    CU_ASSERT_EQUAL(want[3], -2147479015);
    CU_ASSERT_EQUAL(want[4], INT32_MIN);
    CU_ASSERT_EQUAL(want[5], 1);
    EXPECT_I32(&t, "o", want);
out:
    tp_close(&t);
}

/* An INT32 annotation of an INDEX value (untyped literals and their sum)
 * types the name INT32 and wraps the value as it is stored, as PyPTO's parser
 * overrides the type: the comparison and the floor division see -2147483644. */
static const char *SRC_ANN_WRAP =
    HDR ORCH
    "    def main(self, o: pl.Out[pl.Tensor[[1, 4], pl.INT32]]) -> pl.Tensor[[1, 4], pl.INT32]:\n"
    "        b: pl.INT32 = 5 + 2147483647\n"
    "        neg: pl.INT32 = 0\n"
    "        if b < 0:\n"
    "            neg = 1\n"
    "        pl.write(o, [0, 0], b)\n"
    "        pl.write(o, [0, 1], neg)\n"
    "        pl.write(o, [0, 2], b // 2)\n"
    "        n: pl.Scalar[pl.INT32] = 4294967296 + 7\n"
    "        pl.write(o, [0, 3], n)\n"
    "        return o\n";

void test_interp_scalar_annotation_wrap(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_ANN_WRAP, pld_comm_self()))
        goto out;
    tp_zero_outs(&t);
    if (tp_run(&t, PLD_OK) != PLD_OK)
        goto out;
    const int32_t want[4] = {wrap32(2147483652LL), 1, (int32_t)py_floordiv(wrap32(2147483652LL), 2), 7};
    CU_ASSERT_EQUAL(want[0], -2147483644); /* by hand */
    CU_ASSERT_EQUAL(want[2], -1073741822);
    EXPECT_I32(&t, "o", want);
out:
    tp_close(&t);
}

/* A kernel without a `->` annotation that returns a value (PyPTO prints
 * @pl.jit.incore functions so): the call's result is the first return's
 * value, here the stored tensor, whichever function comes first. */
static const char *SRC_NORET =
    HDR INCORE
    "    def k(self, x: pl.Tensor[[4, 8], pl.FP32], out: pl.Out[pl.Tensor[[4, 8], pl.FP32]]):\n"
    "        t = pl.load(x, [0, 0], [4, 8])\n"
    "        return pl.store(pl.add(t, t), [0, 0], out)\n"
    "\n" ORCH
    "    def main(self, x: pl.Tensor[[4, 8], pl.FP32], out: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:\n"
    "        out = self.k(x, out)\n"
    "        return out\n";

void test_interp_unannotated_return(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_NORET, pld_comm_self()))
        goto out;
    float x[32], want[32];
    for (int i = 0; i < 32; i++)
        x[i] = (float)i - 5.5f, want[i] = 2.0f * x[i];
    const int64_t shape[2] = {4, 8};
    CU_ASSERT_EQUAL(tp_bind(&t, "x", PLD_DT_FP32, 2, shape, x), PLD_OK);
    tp_zero_outs(&t);
    if (tp_run(&t, PLD_OK) != PLD_OK)
        goto out;
    EXPECT_F32(&t, "out", want);
out:
    tp_close(&t);
}

/* INDEX is 64-bit: INDEX op INT32 is computed as INDEX (no INT32 wrap); the
 * cast back to INT32 wraps; INDEX-vs-INT32 comparisons compare values. */
static const char *SRC_PROMO =
    HDR ORCH
    "    def main(self, o: pl.Out[pl.Tensor[[1, 4], pl.INT64]], q: pl.Out[pl.Tensor[[1, 3], pl.INT32]]) -> pl.Tensor[[1, 4], pl.INT64]:\n"
    "        k: pl.Scalar[pl.INDEX] = 2147483647\n"
    "        b: pl.Scalar[pl.INT32] = 1\n"
    "        s = k + b\n"
    "        pl.write(o, [0, 0], s)\n"
    "        pl.write(o, [0, 1], k * 4)\n"
    "        pl.write(q, [0, 0], pl.cast(s, pl.INT32))\n"
    "        big: pl.Scalar[pl.INT32] = 2147483647\n"
    "        if s > big:\n"
    "            pl.write(q, [0, 1], pl.const(1, pl.INT32))\n"
    "        else:\n"
    "            pl.write(q, [0, 1], pl.const(2, pl.INT32))\n"
    "        n: pl.Scalar[pl.INT32] = -3\n"
    "        j: pl.Scalar[pl.INDEX] = 2\n"
    "        if j > n:\n"
    "            pl.write(q, [0, 2], pl.const(7, pl.INT32))\n"
    "        pl.write(o, [0, 2], j * n)\n"
    "        pl.write(o, [0, 3], (j - 5) // 2)\n"
    "        return o\n";

void test_interp_scalar_index_int32_promotion(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_PROMO, pld_comm_self()))
        goto out;
    tp_zero_outs(&t);
    if (tp_run(&t, PLD_OK) != PLD_OK)
        goto out;
    int64_t n;
    const int64_t *o = tp_result(&t, "o", PLD_DT_INT64, &n);
    CU_ASSERT_EQUAL(n, 4);
    CU_ASSERT_EQUAL(o[0], 2147483647LL + 1);
    CU_ASSERT_EQUAL(o[1], 2147483647LL * 4);
    CU_ASSERT_EQUAL(o[2], 2 * -3);
    CU_ASSERT_EQUAL(o[3], py_floordiv(2 - 5, 2));
    const int32_t wq[3] = {wrap32(2147483647LL + 1), 1, 7};
    EXPECT_I32(&t, "q", wq);
out:
    tp_close(&t);
}

static const char *SRC_FDIV =
    HDR ORCH
    "    def main(self, f: pl.Out[pl.Tensor[[1, 5], pl.FP32]]) -> pl.Tensor[[1, 5], pl.FP32]:\n"
    "        a: pl.Scalar[pl.INT32] = 7\n"
    "        b: pl.Scalar[pl.INT32] = 2\n"
    "        pl.write(f, [0, 0], a / b)\n"
    "        pl.write(f, [0, 1], 1.0 / 3.0)\n"
    "        pl.write(f, [0, 2], pl.cast(a, pl.FP32) / 4.0)\n"
    "        c: pl.Scalar[pl.INT32] = -7\n"
    "        pl.write(f, [0, 3], c / b)\n"
    "        x: pl.Scalar[pl.FP32] = 2.0\n"
    "        pl.write(f, [0, 4], x / pl.cast(c, pl.FP32))\n"
    "        return f\n";

void test_interp_scalar_float_division(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_FDIV, pld_comm_self()))
        goto out;
    tp_zero_outs(&t);
    if (tp_run(&t, PLD_OK) != PLD_OK)
        goto out;
    const float want[5] = {3.5f, (float)(1.0 / 3.0), 1.75f, -3.5f, (float)(2.0 / -7.0)};
    EXPECT_F32(&t, "f", want);
out:
    tp_close(&t);
}

/* ------------------------------------------------------------ control flow */

/* Loop variables of pl.range with positive, negative and non-unit steps. */
static const char *SRC_RANGE =
    HDR ORCH
    "    def main(self, o: pl.Out[pl.Tensor[[1, 16], pl.INT32]], s: pl.Out[pl.Tensor[[1, 3], pl.INT32]]) -> pl.Tensor[[1, 16], pl.INT32]:\n"
    "        z: pl.Scalar[pl.INT32] = 0\n"
    "        for i, (n,) in pl.range(3, -5, -2, init_values=(z,)):\n"
    "            pl.write(o, [0, n], pl.cast(i, pl.INT32))\n"
    "            n2 = pl.yield_(n + pl.const(1, pl.INT32))\n"
    "        for j, (m,) in pl.range(2, 11, 4, init_values=(n2,)):\n"
    "            pl.write(o, [0, m], pl.cast(j, pl.INT32))\n"
    "            m2 = pl.yield_(m + pl.const(1, pl.INT32))\n"
    "        for k, (acc,) in pl.range(10, 0, -3, init_values=(z,)):\n"
    "            acc2 = pl.yield_(acc + pl.cast(k, pl.INT32))\n"
    "        pl.write(s, [0, 0], acc2)\n"
    "        pl.write(s, [0, 1], m2)\n"
    "        for c, (cnt,) in pl.range(4, init_values=(z,)):\n"
    "            cnt2 = pl.yield_(cnt + pl.const(1, pl.INT32))\n"
    "        pl.write(s, [0, 2], cnt2)\n"
    "        return o\n";

void test_interp_range_steps(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_RANGE, pld_comm_self()))
        goto out;
    tp_zero_outs(&t);
    if (tp_run(&t, PLD_OK) != PLD_OK)
        goto out;
    int32_t want[16] = {0};
    int n = 0;
    for (int i = 3; i > -5; i -= 2)
        want[n++] = i;
    for (int j = 2; j < 11; j += 4)
        want[n++] = j;
    int acc = 0, cnt = 0;
    for (int k = 10; k > 0; k -= 3)
        acc += k;
    for (int c = 0; c < 4; c++)
        cnt++;
    CU_ASSERT_EQUAL(n, 7); /* 3 1 -1 -3, then 2 6 10 */
    CU_ASSERT_EQUAL(acc, 22);
    EXPECT_I32(&t, "o", want);
    const int32_t ws[3] = {acc, n, cnt};
    EXPECT_I32(&t, "s", ws);
out:
    tp_close(&t);
}

/* Zero-trip loops leave their yield targets at the init values. */
static const char *SRC_ZERO_TRIP =
    HDR ORCH
    "    def main(self, o: pl.Out[pl.Tensor[[1, 6], pl.INT32]]) -> pl.Tensor[[1, 6], pl.INT32]:\n"
    "        a0: pl.Scalar[pl.INT32] = 7\n"
    "        b0: pl.Scalar[pl.INT32] = 9\n"
    "        for i, (a, b) in pl.range(5, 5, init_values=(a0, b0)):\n"
    "            a2, b2 = pl.yield_(a + pl.const(1, pl.INT32), b * pl.const(2, pl.INT32))\n"
    "        pl.write(o, [0, 0], a2)\n"
    "        pl.write(o, [0, 1], b2)\n"
    "        for j, (c,) in pl.range(0, 3, -1, init_values=(b0,)):\n"
    "            c2 = pl.yield_(c + pl.const(100, pl.INT32))\n"
    "        pl.write(o, [0, 2], c2)\n"
    "        for k, (d,) in pl.range(0, init_values=(a0,)):\n"
    "            d2 = pl.yield_(d - pl.const(1, pl.INT32))\n"
    "        pl.write(o, [0, 3], d2)\n"
    "        for h, (e,) in pl.range(2, init_values=(a0,)):\n"
    "            e2 = pl.yield_(e + pl.const(10, pl.INT32))\n"
    "        pl.write(o, [0, 4], e2)\n"
    "        return o\n";

void test_interp_zero_trip_loop_yields_init(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_ZERO_TRIP, pld_comm_self()))
        goto out;
    tp_zero_outs(&t);
    if (tp_run(&t, PLD_OK) != PLD_OK)
        goto out;
    const int32_t want[6] = {7, 9, 9, 7, 7 + 10 + 10, 0};
    EXPECT_I32(&t, "o", want);
out:
    tp_close(&t);
}

/* A zero-trip loop over a tile in a kernel returns the initial tile. */
static const char *SRC_ZERO_TRIP_TILE =
    HDR INCORE
    "    def k(self, x: pl.Tensor[[2, 8], pl.FP32], y: pl.Out[pl.Tensor[[2, 8], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[2, 8], pl.FP32]:\n"
    "        t = pl.load(x, [0, 0], [2, 8])\n"
    "        for i, (acc,) in pl.range(n, init_values=(t,)):\n"
    "            grown = pl.add(acc, acc)\n"
    "            acc2 = pl.yield_(grown)\n"
    "        y = pl.store(acc2, [0, 0], y)\n"
    "        return y\n"
    ORCH
    "    def main(self, x: pl.Tensor[[2, 8], pl.FP32], y0: pl.Out[pl.Tensor[[2, 8], pl.FP32]], y2: pl.Out[pl.Tensor[[2, 8], pl.FP32]]) -> pl.Tensor[[2, 8], pl.FP32]:\n"
    "        y0 = self.k(x, y0, 0)\n"
    "        y2 = self.k(x, y2, 2)\n"
    "        return y0\n";

void test_interp_zero_trip_tile_loop(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_ZERO_TRIP_TILE, pld_comm_self()))
        goto out;
    CU_ASSERT_EQUAL(tp_gen(&t, "x", "arange"), PLD_OK);
    tp_zero_outs(&t);
    if (tp_run(&t, PLD_OK) != PLD_OK)
        goto out;
    float w0[16], w2[16];
    for (int k = 0; k < 16; k++) {
        w0[k] = (float)k;
        w2[k] = (float)k * 4.0f; /* doubled twice */
    }
    EXPECT_F32(&t, "y0", w0);
    EXPECT_F32(&t, "y2", w2);
out:
    tp_close(&t);
}

/* if/else yields inside a loop and outside any loop. */
static const char *SRC_IF_YIELD =
    HDR ORCH
    "    def main(self, o: pl.Out[pl.Tensor[[1, 4], pl.INT32]]) -> pl.Tensor[[1, 4], pl.INT32]:\n"
    "        one: pl.Scalar[pl.INT32] = 1\n"
    "        z: pl.Scalar[pl.INT32] = 0\n"
    "        for i, (acc, odd) in pl.range(1, 8, init_values=(one, z)):\n"
    "            if i % 2 == 0:\n"
    "                na, no = pl.yield_(acc * pl.const(2, pl.INT32), odd)\n"
    "            else:\n"
    "                na, no = pl.yield_(acc + pl.cast(i, pl.INT32), odd + one)\n"
    "            acc2, odd2 = pl.yield_(na, no)\n"
    "        pl.write(o, [0, 0], acc2)\n"
    "        pl.write(o, [0, 1], odd2)\n"
    "        if acc2 > pl.const(100, pl.INT32):\n"
    "            r = pl.yield_(pl.const(11, pl.INT32))\n"
    "        else:\n"
    "            r = pl.yield_(pl.const(22, pl.INT32))\n"
    "        pl.write(o, [0, 2], r)\n"
    "        if odd2 == pl.const(0, pl.INT32):\n"
    "            r2 = pl.yield_(pl.const(33, pl.INT32))\n"
    "        else:\n"
    "            r2 = pl.yield_(pl.const(44, pl.INT32))\n"
    "        pl.write(o, [0, 3], r2)\n"
    "        return o\n";

void test_interp_if_else_yield(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_IF_YIELD, pld_comm_self()))
        goto out;
    tp_zero_outs(&t);
    if (tp_run(&t, PLD_OK) != PLD_OK)
        goto out;
    int acc = 1, odd = 0;
    for (int i = 1; i < 8; i++) {
        if (i % 2 == 0)
            acc *= 2;
        else
            acc += i, odd++;
    }
    const int32_t want[4] = {acc, odd, acc > 100 ? 11 : 22, odd == 0 ? 33 : 44};
    EXPECT_I32(&t, "o", want);
out:
    tp_close(&t);
}

/* Plain while with break and continue; pl.range with break and continue. */
const char *SRC_WHILE =
    HDR ORCH
    "    def main(self, o: pl.Out[pl.Tensor[[1, 3], pl.INT32]], w: pl.Out[pl.Tensor[[1, 10], pl.INT32]]) -> pl.Tensor[[1, 3], pl.INT32]:\n"
    "        i: pl.Scalar[pl.INT32] = 0\n"
    "        s: pl.Scalar[pl.INT32] = 0\n"
    "        while i < pl.const(100, pl.INT32):\n"
    "            i = i + pl.const(1, pl.INT32)\n"
    "            if i % pl.const(3, pl.INT32) == pl.const(0, pl.INT32):\n"
    "                continue\n"
    "            if i > pl.const(10, pl.INT32):\n"
    "                break\n"
    "            s = s + i\n"
    "        pl.write(o, [0, 0], s)\n"
    "        pl.write(o, [0, 1], i)\n"
    "        for k in pl.range(10):\n"
    "            if k == 2:\n"
    "                continue\n"
    "            if k == 6:\n"
    "                break\n"
    "            pl.write(w, [0, k], pl.cast(k, pl.INT32) + pl.const(1, pl.INT32))\n"
    "        n: pl.Scalar[pl.INDEX] = 0\n"
    "        while n < 3:\n"
    "            n = n + 1\n"
    "        pl.write(o, [0, 2], pl.cast(n, pl.INT32))\n"
    "        return o\n";

void test_interp_while_break_continue(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_WHILE, pld_comm_self()))
        goto out;
    tp_zero_outs(&t);
    if (tp_run(&t, PLD_OK) != PLD_OK)
        goto out;
    int i = 0, s = 0;
    while (i < 100) {
        i++;
        if (i % 3 == 0)
            continue;
        if (i > 10)
            break;
        s += i;
    }
    const int32_t want[3] = {s, i, 3};
    CU_ASSERT_EQUAL(s, 37);
    EXPECT_I32(&t, "o", want);
    int32_t ww[10] = {0};
    for (int k = 0; k < 10; k++) {
        if (k == 2)
            continue;
        if (k == 6)
            break;
        ww[k] = k + 1;
    }
    EXPECT_I32(&t, "w", ww);
out:
    tp_close(&t);
}

/* pl.while_ with pl.cond and two carried values; a pl.while_ that never runs. */
static const char *SRC_WHILE_ =
    HDR ORCH
    "    def main(self, o: pl.Out[pl.Tensor[[1, 4], pl.INT32]]) -> pl.Tensor[[1, 4], pl.INT32]:\n"
    "        z: pl.Scalar[pl.INT32] = 0\n"
    "        for (i, s) in pl.while_(init_values=(z, z)):\n"
    "            pl.cond(i < pl.const(5, pl.INT32))\n"
    "            i2, s2 = pl.yield_(i + pl.const(1, pl.INT32), s + i * i)\n"
    "        pl.write(o, [0, 0], i2)\n"
    "        pl.write(o, [0, 1], s2)\n"
    "        nine: pl.Scalar[pl.INT32] = 9\n"
    "        for (a, b) in pl.while_(init_values=(nine, z)):\n"
    "            pl.cond(a < pl.const(5, pl.INT32))\n"
    "            a2, b2 = pl.yield_(a + pl.const(1, pl.INT32), b + pl.const(1, pl.INT32))\n"
    "        pl.write(o, [0, 2], a2)\n"
    "        pl.write(o, [0, 3], b2)\n"
    "        return o\n";

void test_interp_while_cond(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_WHILE_, pld_comm_self()))
        goto out;
    tp_zero_outs(&t);
    if (tp_run(&t, PLD_OK) != PLD_OK)
        goto out;
    int i = 0, s = 0;
    while (i < 5) {
        s += i * i;
        i++;
    }
    const int32_t want[4] = {i, s, 9, 0};
    EXPECT_I32(&t, "o", want);
out:
    tp_close(&t);
}

/* return from inside a loop: later statements do not run. */
static const char *SRC_EARLY_RETURN =
    HDR ORCH
    "    def main(self, o: pl.Out[pl.Tensor[[1, 8], pl.INT32]]) -> pl.Tensor[[1, 8], pl.INT32]:\n"
    "        for i in pl.range(8):\n"
    "            pl.write(o, [0, i], pl.cast(i, pl.INT32) + pl.const(1, pl.INT32))\n"
    "            if i == 3:\n"
    "                return o\n"
    "        pl.write(o, [0, 7], pl.const(99, pl.INT32))\n"
    "        return o\n";

void test_interp_early_return(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_EARLY_RETURN, pld_comm_self()))
        goto out;
    tp_zero_outs(&t);
    if (tp_run(&t, PLD_OK) != PLD_OK)
        goto out;
    const int32_t want[8] = {1, 2, 3, 4, 0, 0, 0, 0};
    EXPECT_I32(&t, "o", want);
out:
    tp_close(&t);
}

/* Tuple returns: kernel -> orchestration (both unpacking forms) -> HOST. */
const char *SRC_TUPLE =
    HDR INCORE
    "    def k(self, x: pl.Tensor[[2, 4], pl.FP32], a: pl.Out[pl.Tensor[[2, 4], pl.FP32]], b: pl.Out[pl.Tensor[[1, 2], pl.INT32]], v: pl.Scalar[pl.INT32]) -> tuple[pl.Tensor[[2, 4], pl.FP32], pl.Tensor[[1, 2], pl.INT32]]:\n"
    "        t = pl.load(x, [0, 0], [2, 4])\n"
    "        u = pl.add(t, t)\n"
    "        a = pl.store(u, [0, 0], a)\n"
    "        pl.write(b, [0, 0], v)\n"
    "        pl.write(b, [0, 1], v * v)\n"
    "        return a, b\n"
    ORCH
    "    def chip(self, x: pl.Tensor[[2, 4], pl.FP32], a: pl.Out[pl.Tensor[[2, 4], pl.FP32]], b: pl.Out[pl.Tensor[[1, 2], pl.INT32]], b2: pl.Out[pl.Tensor[[1, 2], pl.INT32]]) -> tuple[pl.Tensor[[2, 4], pl.FP32], pl.Tensor[[1, 2], pl.INT32]]:\n"
    "        p, q = self.k(x, a, b, 3)\n"
    "        tmp: pl.Tuple[pl.Tensor[[2, 4], pl.FP32], pl.Tensor[[1, 2], pl.INT32]] = self.k(x, a, b2, 5)\n"
    "        r: pl.Tensor[[2, 4], pl.FP32] = tmp[0]\n"
    "        s: pl.Tensor[[1, 2], pl.INT32] = tmp[1]\n"
    "        pl.write(b, [0, 1], pl.read(s, [0, 1]) + pl.read(q, [0, 0]))\n"
    "        return r, b\n"
    HOST
    "    def host(self, x: pl.Tensor[[2, 4], pl.FP32], a: pl.Out[pl.Tensor[[2, 4], pl.FP32]], b: pl.Out[pl.Tensor[[1, 2], pl.INT32]], b2: pl.Out[pl.Tensor[[1, 2], pl.INT32]]) -> tuple[pl.Tensor[[2, 4], pl.FP32], pl.Tensor[[1, 2], pl.INT32]]:\n"
    "        self.chip(x, a, b, b2, device=0)\n"
    "        return a, b\n";

void test_interp_tuple_return_unpack(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_TUPLE, pld_comm_self()))
        goto out;
    CU_ASSERT_EQUAL(tp_gen(&t, "x", "arange"), PLD_OK);
    tp_zero_outs(&t);
    if (tp_run(&t, PLD_OK) != PLD_OK)
        goto out;
    float wa[8];
    for (int k = 0; k < 8; k++)
        wa[k] = 2.0f * (float)k;
    EXPECT_F32(&t, "a", wa);
    const int32_t wb[2] = {3, 5 * 5 + 3};
    const int32_t wb2[2] = {5, 25};
    EXPECT_I32(&t, "b", wb);
    EXPECT_I32(&t, "b2", wb2);
out:
    tp_close(&t);
}

static const char *SRC_UNROLL =
    HDR ORCH
    "    def main(self, o: pl.Out[pl.Tensor[[1, 8], pl.INT32]]) -> pl.Tensor[[1, 8], pl.INT32]:\n"
    "        for i in pl.unroll(4):\n"
    "            pl.write(o, [0, i], pl.cast(i * 10, pl.INT32))\n"
    "        for j in pl.unroll(5, 8, 2):\n"
    "            pl.write(o, [0, j], pl.cast(j, pl.INT32) + pl.const(100, pl.INT32))\n"
    "        return o\n";

void test_interp_unroll(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_UNROLL, pld_comm_self()))
        goto out;
    tp_zero_outs(&t);
    if (tp_run(&t, PLD_OK) != PLD_OK)
        goto out;
    int32_t want[8] = {0};
    for (int i = 0; i < 4; i++)
        want[i] = i * 10;
    for (int j = 5; j < 8; j += 2)
        want[j] = j + 100;
    EXPECT_I32(&t, "o", want);
out:
    tp_close(&t);
}

/* Issue 9.4: module constants PyPTO accepts (a conditional, min/max, // and %,
 * an enum member, a conditional over enum members) are folded by the checker
 * and the interpreter runs with the folded values: two Set notifies of 5 leave
 * 5 (AtomicAdd would leave 10). */
static const char *SRC_MODULE_CONSTS =
    "import pypto.language as pl\n"
    "import pypto.language.distributed as pld\n\n"
    "WIDE = True\n"
    "W = 8 if WIDE else 4\n"
    "HALF = max(W // 2, 3, 1)\n"
    "LO = min(W % 5, 2) if not WIDE else min(-7 // 2, W % 3)\n"
    "NOP = pld.NotifyOp.AtomicAdd if W < 8 else pld.NotifyOp.Set\n"
    "SET = pld.NotifyOp.Set\n\n\n"
    "@pl.program\n"
    "class T:\n" INCORE
    "    def k(self, sig: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]], o: pl.Out[pl.Tensor[[1, W], pl.INT32]]):\n"
    "        pld.system.notify(sig, 0, [0, 0], 5, op=NOP)\n"
    "        pld.system.notify(sig, 0, [0, 0], 5, op=SET)\n"
    "        v = pl.read(sig, [0, 0])\n"
    "        pl.write(o, [0, 0], v)\n"
    "        pl.write(o, [0, 1], pl.cast(W, pl.INT32))\n"
    "        pl.write(o, [0, 2], pl.cast(HALF, pl.INT32))\n"
    "        pl.write(o, [0, 3], pl.cast(LO, pl.INT32))\n" ORCH
    "    def chip(self, sig: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]], o: pl.Out[pl.Tensor[[1, W], pl.INT32]]):\n"
    "        self.k(sig, o)\n" HOST
    "    def host_orch(self, o: pl.Out[pl.Tensor[[1, W], pl.INT32]]):\n"
    "        buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)\n"
    "        for r in pl.range(pld.world_size()):\n"
    "            sig = pld.window(buf, [1, 1], dtype=pl.INT32)\n"
    "            self.chip(sig, o, device=r)\n";

void test_interp_module_consts_folded(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_MODULE_CONSTS, pld_comm_self()))
        goto out;
    tp_zero_outs(&t);
    if (tp_run(&t, PLD_OK) != PLD_OK)
        goto out;
    /* LO: min(-7 // 2, 8 % 3) = min(-4, 2) */
    const int32_t want[8] = {5, 8, 4, -4, 0, 0, 0, 0};
    EXPECT_I32(&t, "o", want);
out:
    tp_close(&t);
}

/* ------------------------------------------------------------ registration */

static CU_TestInfo interp_tests[] = {
    {"test_interp_module_consts_folded", test_interp_module_consts_folded},
    {"test_interp_scalar_floor_div_mod", test_interp_scalar_floor_div_mod},
    {"test_interp_scalar_int32_wrap", test_interp_scalar_int32_wrap},
    {"test_interp_scalar_annotation_wrap", test_interp_scalar_annotation_wrap},
    {"test_interp_unannotated_return", test_interp_unannotated_return},
    {"test_interp_scalar_index_int32_promotion", test_interp_scalar_index_int32_promotion},
    {"test_interp_scalar_float_division", test_interp_scalar_float_division},
    {"test_interp_range_steps", test_interp_range_steps},
    {"test_interp_zero_trip_loop_yields_init", test_interp_zero_trip_loop_yields_init},
    {"test_interp_zero_trip_tile_loop", test_interp_zero_trip_tile_loop},
    {"test_interp_if_else_yield", test_interp_if_else_yield},
    {"test_interp_while_break_continue", test_interp_while_break_continue},
    {"test_interp_while_cond", test_interp_while_cond},
    {"test_interp_early_return", test_interp_early_return},
    {"test_interp_tuple_return_unpack", test_interp_tuple_return_unpack},
    {"test_interp_unroll", test_interp_unroll},
    {"test_interp_tile_load_valid_shape_clamp_store", test_interp_tile_load_valid_shape_clamp_store},
    {"test_interp_tile_elementwise", test_interp_tile_elementwise},
    {"test_interp_tile_cast_fp16_rounding", test_interp_tile_cast_fp16_rounding},
    {"test_interp_tile_row_sum_ragged", test_interp_tile_row_sum_ragged},
    {"test_interp_tile_matmul_small", test_interp_tile_matmul_small},
    {"test_interp_tensor_slice_assemble_read_write", test_interp_tensor_slice_assemble_read_write},
    {"test_interp_dispatch_device_selects_rank", test_interp_dispatch_device_selects_rank},
    {"test_interp_dispatch_world_size", test_interp_dispatch_world_size},
    {"test_interp_error_load_out_of_bounds", test_interp_error_load_out_of_bounds},
    {"test_interp_error_device_out_of_range", test_interp_error_device_out_of_range},
    {"test_interp_error_domain_inference", test_interp_error_domain_inference},
    {"test_interp_error_unsupported_dtype_read", test_interp_error_unsupported_dtype_read},
    {"test_interp_error_int_division_by_zero", test_interp_error_int_division_by_zero},
    {"test_interp_error_ub_overflow", test_interp_error_ub_overflow},
    {"test_interp_ub_option", test_interp_ub_option},
    {"test_interp_ub_liveness", test_interp_ub_liveness},
    {"test_interp_scalar_first", test_interp_scalar_first},
    {"test_interp_tensor_matmul_trans", test_interp_tensor_matmul_trans},
    {"test_interp_block_stack_exhausted", test_interp_block_stack_exhausted},
    {"test_interp_error_op_budget", test_interp_error_op_budget},
    {"test_interp_error_missing_input", test_interp_error_missing_input},
    {"test_interp_bind_shape_mismatch", test_interp_bind_shape_mismatch},
    {"test_interp_error_in_carried_loop", test_interp_error_in_carried_loop},
    {"test_interp_oom_loop", test_interp_oom_loop},
    {"test_interp_hw_comm_ctx", test_interp_hw_comm_ctx},
    {"test_interp_builtin_launch", test_interp_builtin_launch},
    CU_TEST_INFO_NULL,
};

static CU_TestInfo regression_tests[] = {
    {"test_interp_regress_host_tuple_unpack_other_rank", test_interp_regress_host_tuple_unpack_other_rank},
    {"test_interp_regress_ub_message_names_every_tile", test_interp_regress_ub_message_names_every_tile},
    {"test_interp_regress_huge_tensor_size_overflow", test_interp_regress_huge_tensor_size_overflow},
    {"test_interp_regress_range_counter_overflow", test_interp_regress_range_counter_overflow},
    CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
    {"interp", NULL, NULL, NULL, NULL, interp_tests},
    {"interp_regressions", NULL, NULL, NULL, NULL, regression_tests},
    CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv)
{
    return pld_test_main(argc, argv, suites);
}
