/* test_interp_errors.c - the interpreter suite (CTest `interp`, tables in test_interp.c):
 * runtime errors (message and location), robustness (no leaks, the OOM
 * loop) and the regressions found by this suite. */
#include "test_interp_util.h"

/* ------------------------------------------------------------ runtime errors */

static const char *SRC_OOB =
    HDR INCORE
    "    def k(self, x: pl.Tensor[[8, 8], pl.FP32], y: pl.Out[pl.Tensor[[4, 8], pl.FP32]], r: pl.Scalar[pl.INDEX]) -> pl.Tensor[[4, 8], pl.FP32]:\n"
    "        t = pl.load(x, [r * 6, 0], [4, 8])\n"
    "        y = pl.store(t, [0, 0], y)\n"
    "        return y\n"
    ORCH
    "    def main(self, x: pl.Tensor[[8, 8], pl.FP32], y: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:\n"
    "        y = self.k(x, y, 1)\n"
    "        return y\n";

void test_interp_error_load_out_of_bounds(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_OOB, pld_comm_self()))
        goto out;
    CU_ASSERT_EQUAL(tp_gen(&t, "x", "arange"), PLD_OK);
    tp_zero_outs(&t);
    tp_run(&t, PLD_E_RUNTIME);
    expect_error_at(&t, "pl.load(x, [r * 6", "past the end of dimension 0", "6 + extent 4 > size 8", NULL);
    CU_ASSERT(error_has_note(&t, "in k"));
    CU_ASSERT(error_has_note(&t, "in main"));
out:
    tp_close(&t);
}

static const char *SRC_DEVICE =
    HDR ORCH
    "    def chip(self, y: pl.Out[pl.Tensor[[1, 4], pl.INT32]]) -> pl.Tensor[[1, 4], pl.INT32]:\n"
    "        pl.write(y, [0, 0], pl.const(1, pl.INT32))\n"
    "        return y\n"
    HOST
    "    def host(self, ys: pl.Out[pl.Tensor[[1, 4], pl.INT32]], d: pl.Scalar[pl.INDEX]) -> pl.Tensor[[1, 4], pl.INT32]:\n"
    "        self.chip(ys, device=d)\n"
    "        return ys\n";

void test_interp_error_device_out_of_range(void)
{
    for (int rank = 0; rank < 2; rank++) {
        fake_comm_t fc;
        fake_init(&fc, rank, 2);
        tprog_t t;
        if (!tp_open(&t, SRC_DEVICE, &fc.comm))
            goto next;
        /* d is an entry scalar, so the checker cannot see the device (a literal
         * device=5 is a static error for a known rank count) */
        int64_t five = 5;
        CU_ASSERT_EQUAL(tp_bind(&t, "d", PLD_DT_INT64, 0, NULL, &five), PLD_OK);
        tp_zero_outs(&t);
        tp_run(&t, PLD_E_RUNTIME);
        /* every rank reports it (the HOST body is replicated); located at the device expression */
        expect_error_at(&t, "d)\n", "device=5", "outside [0, 2)", NULL);
    next:
        tp_close(&t);
    }
}

/* Comm-domain inference (pld_semantics.md §1.2): a device= that is neither a
 * constant nor the variable of a step-1 pl.range loop, and a window buffer no
 * dispatch reaches, are errors (they used to get the whole world silently).
 * %s: the HOST body after the allocation. */
#define SRC_DOM_FMT                                                                                                  \
    "import pypto.language as pl\n"                                                                                 \
    "import pypto.language.distributed as pld\n\n\n"                                                                \
    "@pl.program\n"                                                                                                 \
    "class T:\n" ORCH                                                                                               \
    "    def chip(self, data: pl.InOut[pld.DistributedTensor[[1, 8], pl.FP32]]):\n"                                \
    "        pass\n" HOST                                                                                               \
    "    def host_orch(self, x: pl.Tensor[[1, 8], pl.FP32]):\n"                                                     \
    "        buf = pld.alloc_window_buffer([1, 8], dtype=pl.FP32)\n"                                                \
    "%s"

static void dom_error(const char *body, const char *marker, const char *frag)
{
    char src[2048];
    snprintf(src, sizeof src, SRC_DOM_FMT, body);
    tprog_t t;
    if (!tp_open(&t, src, NULL))
        return;
    CU_ASSERT_EQUAL(tp_gen(&t, "x", "arange"), PLD_OK);
    tp_run(&t, PLD_E_RUNTIME);
    expect_error_at(&t, marker, "window buffer 'buf'", frag, NULL);
    tp_close(&t);
}

void test_interp_error_domain_inference(void)
{
    /* a dispatch loop with step 2 */
    dom_error("        for rr in pl.range(0, 4, 2):\n"
              "            self.chip(pld.window(buf, [1, 8], dtype=pl.FP32), device=rr)\n",
              "rr)\n", "step 2");
    /* a computed device (a HOST local) */
    dom_error("        dd = pld.world_size() - 1\n"
              "        self.chip(pld.window(buf, [1, 8], dtype=pl.FP32), device=dd)\n",
              "dd)\n", "cannot be inferred from this device= expression");
    /* a buffer no dispatch reaches */
    dom_error("        v = pld.window(buf, [1, 8], dtype=pl.FP32)\n", "pld.alloc_window_buffer", "reaches no dispatch");
    /* fine: a constant device, a step-1 loop with constant bounds, a copy of the loop variable */
    const char *ok[] = {"        self.chip(pld.window(buf, [1, 8], dtype=pl.FP32), device=0)\n",
                        "        for r in pl.range(0, 1):\n"
                        "            q = r\n"
                        "            self.chip(pld.window(buf, [1, 8], dtype=pl.FP32), device=q)\n"};
    for (int i = 0; i < 2; i++) {
        char src[2048];
        snprintf(src, sizeof src, SRC_DOM_FMT, ok[i]);
        tprog_t t;
        if (!tp_open(&t, src, NULL))
            continue;
        CU_ASSERT_EQUAL(tp_gen(&t, "x", "arange"), PLD_OK);
        tp_run(&t, PLD_OK);
        tp_close(&t);
    }
}

/* An FP8 tensor holds bytes but cannot be read as a number: a located error
 * at the read (it used to read 0), and pl.tensor.full of FP8 likewise. */
static const char *SRC_FP8_READ =
    HDR ORCH
    "    def main(self, o: pl.Out[pl.Tensor[[1, 2], pl.FP32]]) -> pl.Tensor[[1, 2], pl.FP32]:\n"
    "        c = pl.tensor.create([1, 2], dtype=pl.FP8E4M3FN)\n"
    "        pl.write(o, [0, 0], pl.read(c, [0, 1]))\n"
    "        d = c[0, 1]\n"
    "        return o\n";

void test_interp_error_unsupported_dtype_read(void)
{
    tprog_t t;
    if (tp_open(&t, SRC_FP8_READ, pld_comm_self())) {
        tp_zero_outs(&t);
        tp_run(&t, PLD_E_RUNTIME);
        expect_error_at(&t, "pl.read(c", "element of FP8E4M3FN data", NULL);
    }
    tp_close(&t);
}

static const char *SRC_DIV0 =
    HDR ORCH
    "    def main(self, o: pl.Out[pl.Tensor[[1, 2], pl.INT32]], z: pl.Scalar[pl.INT32]) -> pl.Tensor[[1, 2], pl.INT32]:\n"
    "        a: pl.Scalar[pl.INT32] = 7\n"
    "        pl.write(o, [0, 0], a % pl.const(4, pl.INT32))\n"
    "        pl.write(o, [0, 1], a // z)\n"
    "        return o\n";

static const char *SRC_MOD0 =
    HDR ORCH
    "    def main(self, o: pl.Out[pl.Tensor[[1, 2], pl.INT32]], z: pl.Scalar[pl.INT32]) -> pl.Tensor[[1, 2], pl.INT32]:\n"
    "        a: pl.Scalar[pl.INT32] = 7\n"
    "        pl.write(o, [0, 1], a % z)\n"
    "        return o\n";

void test_interp_error_int_division_by_zero(void)
{
    tprog_t t;
    int32_t zero = 0;
    if (tp_open(&t, SRC_DIV0, pld_comm_self())) {
        CU_ASSERT_EQUAL(tp_bind(&t, "z", PLD_DT_INT32, 0, NULL, &zero), PLD_OK);
        tp_zero_outs(&t);
        tp_run(&t, PLD_E_RUNTIME);
        expect_error_at(&t, "a // z", "integer division by zero", NULL);
    }
    tp_close(&t);
    if (tp_open(&t, SRC_MOD0, pld_comm_self())) {
        CU_ASSERT_EQUAL(tp_bind(&t, "z", PLD_DT_INT32, 0, NULL, &zero), PLD_OK);
        tp_zero_outs(&t);
        tp_run(&t, PLD_E_RUNTIME);
        expect_error_at(&t, "a % z", "integer modulo by zero", NULL);
    }
    tp_close(&t);
}

/* A 300 KiB FP32 tile (300 x 256 x 4 bytes) does not fit the 192 KiB UB. */
static const char *SRC_UB =
    HDR INCORE
    "    def hog(self, x: pl.Tensor[[300, 256], pl.FP32], y: pl.Out[pl.Tensor[[300, 256], pl.FP32]]) -> pl.Tensor[[300, 256], pl.FP32]:\n"
    "        big = pl.load(x, [0, 0], [300, 256])\n"
    "        y = pl.store(big, [0, 0], y)\n"
    "        return y\n"
    ORCH
    "    def main(self, x: pl.Tensor[[300, 256], pl.FP32], y: pl.Out[pl.Tensor[[300, 256], pl.FP32]]) -> pl.Tensor[[300, 256], pl.FP32]:\n"
    "        y = self.hog(x, y)\n"
    "        return y\n";

void test_interp_error_ub_overflow(void)
{
    CU_ASSERT_EQUAL(300 * 256 * 4, 300 * 1024);
    tprog_t t;
    if (!tp_open(&t, SRC_UB, pld_comm_self()))
        goto out;
    CU_ASSERT_EQUAL(tp_gen(&t, "x", "zeros"), PLD_OK);
    tp_zero_outs(&t);
    tp_run(&t, PLD_E_RUNTIME);
    char bytes[32];
    snprintf(bytes, sizeof bytes, "%d bytes", 300 * 256 * 4);
    expect_error_at(&t, "big = pl.load", "kernel hog", bytes, "'big'", NULL);
out:
    tp_close(&t);
}

/* A kernel on 2 blocks recursing 150 deep: fits the default block stack, and
 * with a small one (opts.block_stack_bytes) the stack check stops it with a
 * located error at the recursive call before the guard page is reached. */
static const char *SRC_DEEP =
    HDR INCORE
    "    def deep(self, x: pl.Tensor[[4, 8], pl.FP32], y: pl.Out[pl.Tensor[[4, 8], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[4, 8], pl.FP32]:\n"
    "        if n > 0:\n"
    "            y = self.deep(x, y, n - 1)\n"
    "        else:\n"
    "            t = pl.load(x, [0, 0], [4, 8])\n"
    "            y = pl.store(t, [0, 0], y)\n"
    "        return y\n"
    ORCH
    "    def main(self, x: pl.Tensor[[4, 8], pl.FP32], y: pl.Out[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:\n"
    "        y, tid = pl.spmd_submit(self.deep, x, y, 150, core_num=2)\n"
    "        return y\n";

/* small enough for 150 levels to exhaust it, large enough for the stack
 * check's margin (larger under ASan, whose frames are larger too) */
#if defined(__SANITIZE_ADDRESS__) || defined(__has_feature)
#if defined(__SANITIZE_ADDRESS__)
#define SMALL_STACK_KIB 512
#elif __has_feature(address_sanitizer)
#define SMALL_STACK_KIB 512
#endif
#endif
#ifndef SMALL_STACK_KIB
#define SMALL_STACK_KIB 256
#endif

void test_interp_block_stack_exhausted(void)
{
    for (int small = 0; small < 2; small++) {
        tprog_t t;
        pld_interp_opts_t io;
        memset(&io, 0, sizeof io);
        io.block_stack_bytes = small ? SMALL_STACK_KIB * 1024 : 0;
        if (!tp_open_opts(&t, SRC_DEEP, pld_comm_self(), &io)) {
            tp_close(&t);
            return;
        }
        CU_ASSERT_EQUAL(tp_gen(&t, "x", "arange"), PLD_OK);
        tp_zero_outs(&t);
        if (!small) {
            tp_run(&t, PLD_OK);
            int64_t n;
            const float *y = res_f32(&t, "y", &n);
            CU_ASSERT_EQUAL(n, 32);
            CU_ASSERT_EQUAL(y[31], 31.0f);
        } else {
            tp_run(&t, PLD_E_RUNTIME);
            /* somewhere in deep's body (the condition, the call, an
             * argument): whichever check trips first */
            const pld_diag_t *d = first_error(t.p);
            CU_ASSERT_PTR_NOT_NULL_FATAL(d);
            unsigned first, last, col;
            locate(t.src, "if n > 0:", &first, &col);
            locate(t.src, "y = self.deep(x, y, n - 1)", &last, &col);
            CU_ASSERT(d->span.line >= first && d->span.line <= last);
            CU_ASSERT_PTR_NOT_NULL(strstr(d->msg, "stack exhausted: "));
            char want[96];
            snprintf(want, sizeof want, "KiB left on block 0's stack (of %d KiB) at call depth ", SMALL_STACK_KIB);
            CU_ASSERT_PTR_NOT_NULL(strstr(d->msg, want));
            CU_ASSERT(error_has_note(&t, "in deep"));
        }
        tp_close(&t);
    }
}

/* The same kernel fits when the UB is larger (opts.ub_bytes). */
void test_interp_ub_option(void)
{
    tprog_t t;
    pld_interp_opts_t io;
    memset(&io, 0, sizeof io);
    pld_npu_profile_t big = *pld_npu_profile_default();
    big.ub_bytes = 512 * 1024;
    io.platform = &big;
    if (!tp_open_opts(&t, SRC_UB, pld_comm_self(), &io))
        goto out;
    CU_ASSERT_EQUAL(tp_gen(&t, "x", "ones"), PLD_OK);
    tp_zero_outs(&t);
    if (tp_run(&t, PLD_OK) != PLD_OK)
        goto out;
    int64_t n;
    const float *y = res_f32(&t, "y", &n);
    CU_ASSERT_EQUAL(n, 300 * 256);
    CU_ASSERT_EQUAL(y[0], 1.0f);
    CU_ASSERT_EQUAL(y[n - 1], 1.0f);
out:
    tp_close(&t);
}

/* PyPTO's beginner fused add+relu (examples/beginner/04_activation.py):
 * four 64 KiB tiles, but a and b are dead once the sum exists and the sum
 * once relu ran, so at most three are needed at once: it runs in the
 * 192 KiB UB. The same four tiles all read by the last statement do not fit. */
static const char *SRC_UB_LIVE =
    HDR INCORE
    "    def fused(self, a: pl.Tensor[[128, 128], pl.FP32], b: pl.Tensor[[128, 128], pl.FP32], c: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:\n"
    "        ta = pl.load(a, [0, 0], [128, 128])\n"
    "        tb = pl.load(b, [0, 0], [128, 128])\n"
    "        ts = pl.add(ta, tb)\n"
    "        tc = pl.relu(ts)\n"
    "        c = pl.store(tc, [0, 0], c)\n"
    "        return c\n"
    "    @pl.function(type=pl.FunctionType.InCore)\n"
    "    def hog4(self, a: pl.Tensor[[128, 128], pl.FP32], b: pl.Tensor[[128, 128], pl.FP32], c: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:\n"
    "        ta = pl.load(a, [0, 0], [128, 128])\n"
    "        tb = pl.load(b, [0, 0], [128, 128])\n"
    "        ts = pl.add(ta, tb)\n"
    "        tr = pl.relu(ts)\n"
    "        tall = pl.add(pl.add(ta, tb), pl.add(ts, tr))\n"
    "        c = pl.store(tall, [0, 0], c)\n"
    "        return c\n"
    "    @pl.function(type=pl.FunctionType.InCore)\n"
    "    def loop(self, a: pl.Tensor[[128, 128], pl.FP32], b: pl.Tensor[[128, 128], pl.FP32], c: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:\n"
    "        ta = pl.load(a, [0, 0], [128, 128])\n"
    "        tb = pl.load(b, [0, 0], [128, 128])\n"
    "        for i in pl.range(2):\n"
    "            ts = pl.add(ta, tb)\n"
    "            tc = pl.relu(ts)\n"
    "            c = pl.store(tc, [0, 0], c)\n"
    "        return c\n"
    "    @pl.function(type=pl.FunctionType.InCore)\n"
    "    def cube(self, a: pl.Tensor[[128, 128], pl.FP32], b: pl.Tensor[[128, 128], pl.FP32], c: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:\n"
    "        ma = pl.load(a, [0, 0], [128, 128], target_memory=pl.Mem.Mat)\n"
    "        mb = pl.load(b, [0, 0], [128, 128], target_memory=pl.Mem.Mat)\n"
    "        la = pl.move(ma, target_memory=pl.Mem.Left)\n"
    "        c = pl.store(la, [0, 0], c)\n"
    "        c = pl.store(mb, [0, 0], c)\n"
    "        return c\n"
    ORCH
    "    def main(self, a: pl.Tensor[[128, 128], pl.FP32], b: pl.Tensor[[128, 128], pl.FP32], c: pl.Out[pl.Tensor[[128, 128], pl.FP32]], d: pl.Out[pl.Tensor[[128, 128], pl.FP32]], e: pl.Out[pl.Tensor[[128, 128], pl.FP32]], g: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:\n"
    "        c = self.fused(a, b, c)\n"
    "        e = self.loop(a, b, e)\n"
    "        d = self.HOGCALL(a, b, d)\n"
    "        return c\n";

static void ub_live_run(const char *callee, pld_status_t want, const char *marker)
{
    char src[8192];
    const char *at = strstr(SRC_UB_LIVE, "HOGCALL");
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    snprintf(src, sizeof src, "%.*s%s%s", (int)(at - SRC_UB_LIVE), SRC_UB_LIVE, callee, at + strlen("HOGCALL"));
    tprog_t t;
    if (!tp_open(&t, src, pld_comm_self()))
        goto out;
    CU_ASSERT_EQUAL(tp_gen(&t, "a", "arange"), PLD_OK);
    CU_ASSERT_EQUAL(tp_gen(&t, "b", "ones"), PLD_OK);
    tp_zero_outs(&t);
    if (tp_run(&t, want) != want)
        goto out;
    if (want == PLD_OK) {
        int64_t n;
        const float *c = res_f32(&t, "c", &n);
        CU_ASSERT_EQUAL(n, 128 * 128);
        CU_ASSERT_EQUAL(c[5], 6.0f);
        const float *e = res_f32(&t, "e", &n);
        CU_ASSERT_EQUAL(e[7], 8.0f);
    } else {
        expect_error_at(&t, marker, "kernel hog4", "262144 bytes of Vec (UB) tiles", "above the 196608 bytes",
                        "'ta' (65536 bytes)", NULL);
    }
out:
    tp_close(&t);
}

void test_interp_ub_liveness(void)
{
    ub_live_run("fused", PLD_OK, NULL);                               /* dead tiles take no room */
    ub_live_run("cube", PLD_OK, NULL);                                /* Mat and Left are not the UB */
    ub_live_run("hog4", PLD_E_RUNTIME, "tr = pl.relu(ts)");           /* all four read later */
}

/* opts.op_budget: a loop that does not end stops with a located runtime error
 * once the budget is used up (the fuzzer's guard against endless programs). */
static const char *SRC_ENDLESS_WHILE =
    HDR ORCH
    "    def main(self, o: pl.Out[pl.Tensor[[1, 1], pl.INT32]]) -> pl.Tensor[[1, 1], pl.INT32]:\n"
    "        n: pl.Scalar[pl.INDEX] = 0\n"
    "        while n >= 0:\n"
    "            n = n + 1\n"
    "        pl.write(o, [0, 0], pl.cast(n, pl.INT32))\n"
    "        return o\n";

static const char *SRC_LONG_FOR =
    HDR ORCH
    "    def main(self, o: pl.Out[pl.Tensor[[1, 1], pl.INT32]]) -> pl.Tensor[[1, 1], pl.INT32]:\n"
    "        for k in pl.range(1000000000000):\n"
    "            pass\n"
    "        return o\n";

void test_interp_error_op_budget(void)
{
    tprog_t t;
    pld_interp_opts_t io;
    memset(&io, 0, sizeof io);
    /* the count is deterministic: the 1001st operation is an assignment
     * statement of the loop body */
    io.op_budget = 1000;
    if (tp_open_opts(&t, SRC_ENDLESS_WHILE, pld_comm_self(), &io)) {
        tp_zero_outs(&t);
        tp_run(&t, PLD_E_RUNTIME);
        expect_error_at(&t, "n = n + 1", "operation budget (1000) exhausted", NULL);
        pld_interp_stats_t st;
        pld_interp_stats(t.it, &st);
        CU_ASSERT(st.ops < 1000);
    }
    tp_close(&t);
    /* the statement count alone ends a loop whose body evaluates nothing */
    io.op_budget = 5000;
    if (tp_open_opts(&t, SRC_LONG_FOR, pld_comm_self(), &io)) {
        tp_zero_outs(&t);
        tp_run(&t, PLD_E_RUNTIME);
        expect_error_at(&t, "pass", "operation budget (5000) exhausted", NULL);
    }
    tp_close(&t);
    /* 0 = unlimited; a second run gets the whole budget again */
    io.op_budget = 0;
    if (tp_open_opts(&t, SRC_WHILE, pld_comm_self(), &io)) {
        tp_zero_outs(&t);
        tp_run(&t, PLD_OK);
    }
    tp_close(&t);
}

void test_interp_error_missing_input(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_OOB, pld_comm_self()))
        goto out;
    tp_zero_outs(&t); /* y bound, x not */
    CU_ASSERT_FALSE(pld_interp_is_bound(t.it, tp_param(&t, "x")));
    CU_ASSERT_TRUE(pld_interp_is_bound(t.it, tp_param(&t, "y")));
    pld_status_t st = pld_interp_run(t.it);
    CU_ASSERT_EQUAL(st, PLD_E_USAGE);
    const pld_diag_t *d = first_error(t.p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_PTR_NOT_NULL(strstr(d->msg, "'x'"));
    CU_ASSERT_PTR_NOT_NULL(strstr(d->msg, "has no input"));
    CU_ASSERT_PTR_NOT_NULL(strstr(d->msg, "[8, 8] FP32"));
out:
    tp_close(&t);
}

/* Binding checks: wrong shape / dtype / rank, both sides named; a dynamic dim
 * is bound by the first input and enforced on the next. */
void test_interp_bind_shape_mismatch(void)
{
    tprog_t t;
    pld_status_t st;
    if (!tp_open(&t, SRC_OOB, pld_comm_self()))
        goto out;
    float data[64] = {0};
    const int64_t bad[2] = {8, 7};
    st = pld_interp_bind(t.it, tp_param(&t, "x"), PLD_DT_FP32, 2, bad, data, t.err, sizeof t.err);
    CU_ASSERT_EQUAL(st, PLD_E_USAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(t.err, "[8, 7] FP32"));
    CU_ASSERT_PTR_NOT_NULL(strstr(t.err, "[8, 8] FP32"));
    CU_ASSERT_FALSE(pld_interp_is_bound(t.it, tp_param(&t, "x")));
    const int64_t good[2] = {8, 8};
    st = pld_interp_bind(t.it, tp_param(&t, "x"), PLD_DT_INT32, 2, good, data, t.err, sizeof t.err);
    CU_ASSERT_EQUAL(st, PLD_E_USAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(t.err, "INT32"));
    CU_ASSERT_PTR_NOT_NULL(strstr(t.err, "FP32"));
    st = pld_interp_bind(t.it, tp_param(&t, "x"), PLD_DT_FP32, 1, good, data, t.err, sizeof t.err);
    CU_ASSERT_EQUAL(st, PLD_E_USAGE);
out:
    tp_close(&t);
    /* dynamic NR: bound by xs, then ys must agree */
    fake_comm_t fc;
    fake_init(&fc, 0, 2);
    if (!tp_open(&t, SRC_DISPATCH_WS, &fc.comm))
        goto out2;
    int32_t z[8] = {0};
    const int64_t s3[3] = {3, 1, 2}, s2[3] = {2, 1, 2};
    CU_ASSERT_EQUAL(tp_bind(&t, "xs", PLD_DT_INT32, 3, s3, z), PLD_OK);
    st = pld_interp_bind(t.it, tp_param(&t, "ys"), PLD_DT_INT32, 3, s2, z, t.err, sizeof t.err);
    CU_ASSERT_EQUAL(st, PLD_E_USAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(t.err, "[2, 1, 2]"));
    CU_ASSERT_PTR_NOT_NULL(strstr(t.err, "NR=3"));
    char desc[128];
    pld_interp_param_desc(t.it, tp_param(&t, "ys"), desc, sizeof desc);
    CU_ASSERT_STRING_EQUAL(desc, "[NR=3, 1, 2] INT32");
out2:
    tp_close(&t);
}

/* ------------------------------------------------------------ robustness */

/* A runtime error in the second trip of a loop that carries a tile, inside a
 * kernel called from a loop: nothing leaks (ASan's leak check), the error is
 * located at the load. */
static const char *SRC_LOOP_ERROR =
    HDR INCORE
    "    def k(self, x: pl.Tensor[[4, 8], pl.FP32], y: pl.Out[pl.Tensor[[2, 8], pl.FP32]]) -> pl.Tensor[[2, 8], pl.FP32]:\n"
    "        t = pl.load(x, [0, 0], [2, 8])\n"
    "        for i, (acc,) in pl.range(1, 4, init_values=(t,)):\n"
    "            blk = pl.load(x, [i * 2, 0], [2, 8])\n"
    "            acc2 = pl.yield_(pl.add(acc, blk))\n"
    "        y = pl.store(acc2, [0, 0], y)\n"
    "        return y\n"
    ORCH
    "    def main(self, x: pl.Tensor[[4, 8], pl.FP32], y: pl.Out[pl.Tensor[[2, 8], pl.FP32]]) -> pl.Tensor[[2, 8], pl.FP32]:\n"
    "        for j in pl.range(2):\n"
    "            y = self.k(x, y)\n"
    "        return y\n";

void test_interp_error_in_carried_loop(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_LOOP_ERROR, pld_comm_self()))
        goto out;
    CU_ASSERT_EQUAL(tp_gen(&t, "x", "arange"), PLD_OK);
    tp_zero_outs(&t);
    tp_run(&t, PLD_E_RUNTIME);
    /* i = 2 reads rows 4..5 of 4 */
    expect_error_at(&t, "pl.load(x, [i * 2", "past the end of dimension 0", "offset 4 + extent 2 > size 4", NULL);
out:
    tp_close(&t);
}

/* OOM loop: the Nth allocation fails, for N = 0, 1, 2, ... until a run
 * succeeds. Every failure must be clean (a status, no crash, no leak under
 * ASan) and the successful run must give the right values. */
void test_interp_oom_loop(void)
{
    const char *src = SRC_TUPLE;
    int done = 0;
    for (long n = 0; n < 100000 && !done; n++) {
        pld_check_opts_t co;
        memset(&co, 0, sizeof co);
        co.ranks = 1;
        pld_status_t st = PLD_E_USAGE;
        /* the front end has its own OOM loop (test_check); start failing after it */
        pld_program_t *p = pld_check_text("t.pld", src, strlen(src), &co, &st);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        CU_ASSERT_EQUAL_FATAL(st, PLD_OK);
        char err[256];
        pld_interp_t *it = NULL;
        pld_mem_fail_after(n);
        st = pld_interp_create(p, NULL, pld_comm_self(), &it, err, sizeof err);
        if (st == PLD_OK) {
            st = pld_interp_bind_generated(it, pld_interp_param_index(it, "x"), "arange", err, sizeof err);
            for (int i = 0; st == PLD_OK && i < pld_interp_nparams(it); i++)
                if (!pld_interp_is_bound(it, i))
                    st = pld_interp_bind_generated(it, i, "zeros", err, sizeof err);
            if (st == PLD_OK)
                st = pld_interp_run(it);
        }
        long refused = pld_mem_failures();
        pld_mem_fail_after(-1);
        if (st == PLD_OK) {
            if (refused != 0)
                fprintf(stderr, "\nOOM loop: n = %ld: success although %ld allocation(s) failed\n", n, refused);
            CU_ASSERT_EQUAL(refused, 0);
            pld_dtype_t dt;
            int rank;
            const int64_t *shape;
            const void *data;
            CU_ASSERT_EQUAL(pld_interp_result(it, pld_interp_param_index(it, "b"), &dt, &rank, &shape, &data), PLD_OK);
            CU_ASSERT_EQUAL(((const int32_t *)data)[1], 5 * 5 + 3);
            done = 1;
        } else {
            CU_ASSERT(st == PLD_E_NOMEM || st == PLD_E_RUNTIME || st == PLD_E_HW || st == PLD_E_USAGE);
            CU_ASSERT(refused > 0);
        }
        pld_interp_destroy(it);
        pld_program_destroy(p);
    }
    CU_ASSERT_TRUE(done);
}

/* ------------------------------------------------------------ regressions
 *
 * Interpreter bugs found by this suite and fixed; each test keeps its bug out. */

/* Regression: unpacking a dispatch's tuple result at HOST level fails on every
 * rank that did not run the dispatch ("cannot unpack value computed on another
 * rank into 2 names"; in printed form "'_tuple_tmp' holds a result computed on
 * rank 0"), although the names are never used there. Expected: the names are
 * bound to "unavailable" and only a later use is an error. */
static const char *SRC_HOST_UNPACK =
    HDR ORCH
    "    def chip(self, y: pl.Out[pl.Tensor[[1, 2], pl.INT32]], z: pl.Out[pl.Tensor[[1, 2], pl.INT32]], v: pl.Scalar[pl.INT32]) -> tuple[pl.Tensor[[1, 2], pl.INT32], pl.Tensor[[1, 2], pl.INT32]]:\n"
    "        pl.write(y, [0, 0], v)\n"
    "        pl.write(z, [0, 1], v + v)\n"
    "        return y, z\n"
    HOST
    "    def host(self, ys: pl.Out[pl.Tensor[[2, 1, 2], pl.INT32]], zs: pl.Out[pl.Tensor[[2, 1, 2], pl.INT32]]) -> tuple[pl.Tensor[[2, 1, 2], pl.INT32], pl.Tensor[[2, 1, 2], pl.INT32]]:\n"
    "        for r in pl.range(2):\n"
    "            t, m = self.chip(ys[r], zs[r], r + 5, device=r)\n"
    "        for q in pl.range(2):\n"
    "            tmp: pl.Tuple[pl.Tensor[[1, 2], pl.INT32], pl.Tensor[[1, 2], pl.INT32]] = self.chip(ys[q], zs[q], q + 5, device=q)\n"
    "            a: pl.Tensor[[1, 2], pl.INT32] = tmp[0]\n"
    "            b: pl.Tensor[[1, 2], pl.INT32] = tmp[1]\n"
    "        return ys, zs\n";

void test_interp_regress_host_tuple_unpack_other_rank(void)
{
    for (int rank = 0; rank < 2; rank++) {
        fake_comm_t fc;
        fake_init(&fc, rank, 2);
        tprog_t t;
        if (!tp_open(&t, SRC_HOST_UNPACK, &fc.comm))
            goto next;
        tp_zero_outs(&t);
        if (tp_run(&t, PLD_OK) != PLD_OK)
            goto next;
        int32_t wy[4] = {0}, wz[4] = {0};
        wy[rank * 2 + 0] = 5 + rank;
        wz[rank * 2 + 1] = 2 * (5 + rank);
        EXPECT_I32(&t, "ys", wy);
        EXPECT_I32(&t, "zs", wz);
    next:
        tp_close(&t);
    }
}

/* Regression: tensor and tile sizes are not checked for overflow
 * (pld_tensor_new / pld_tile_new in src/interp/pld_value.c: numel * dtype
 * bytes wraps), so a [2^31, 2^31] FP32 tensor gets a 0-byte buffer and the
 * next write is out of bounds (SEGV). Expected: a clean runtime error. (One
 * dim is a run-time value: with both dims constant the checker reports the
 * overflow statically, issue 9.1.) */
static const char *SRC_HUGE =
    HDR ORCH
    "    def main(self, y: pl.Out[pl.Tensor[[1, 4], pl.FP32]]) -> pl.Tensor[[1, 4], pl.FP32]:\n"
    "        t = pl.create_tensor([2147483648, pl.tensor.dim(y, 1) * 536870912], dtype=pl.FP32)\n"
    "        pl.write(t, [5, 7], 1.0)\n"
    "        return y\n";

void test_interp_regress_huge_tensor_size_overflow(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_HUGE, pld_comm_self()))
        goto out;
    tp_zero_outs(&t);
    pld_status_t st = pld_interp_run(t.it);
    CU_ASSERT(st == PLD_E_RUNTIME || st == PLD_E_NOMEM);
    if (st == PLD_E_RUNTIME)
        CU_ASSERT_PTR_NOT_NULL(first_error(t.p));
out:
    tp_close(&t);
}

/* Regression: the UB overflow message lists the largest live tiles, but skips
 * every tile whose name is a substring of the text already listed
 * (strstr(list, name) in pld_exec_check_ub): here 't' is hidden by "'first'".
 * Both tiles are live (used by the add). */
static const char *SRC_UB_NAMES =
    HDR INCORE
    "    def k(self, x: pl.Tensor[[100, 256], pl.FP32], y: pl.Out[pl.Tensor[[100, 256], pl.FP32]]) -> pl.Tensor[[100, 256], pl.FP32]:\n"
    "        first = pl.load(x, [0, 0], [100, 256])\n"
    "        t = pl.load(x, [0, 0], [100, 256])\n"
    "        u = pl.add(first, t)\n"
    "        y = pl.store(u, [0, 0], y)\n"
    "        return y\n"
    ORCH
    "    def main(self, x: pl.Tensor[[100, 256], pl.FP32], y: pl.Out[pl.Tensor[[100, 256], pl.FP32]]) -> pl.Tensor[[100, 256], pl.FP32]:\n"
    "        y = self.k(x, y)\n"
    "        return y\n";

void test_interp_regress_ub_message_names_every_tile(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_UB_NAMES, pld_comm_self()))
        goto out;
    CU_ASSERT_EQUAL(tp_gen(&t, "x", "zeros"), PLD_OK);
    tp_zero_outs(&t);
    tp_run(&t, PLD_E_RUNTIME);
    /* 2 x 100 KiB > 192 KiB when t is assigned */
    expect_error_at(&t, "t = pl.load(x, [0, 0], [100, 256])\n        u", "kernel k", "204800 bytes", "'first' (102400 bytes)", "'t' (102400 bytes)", NULL);
out:
    tp_close(&t);
}

/* Regression: the pl.range loop counter overflows (signed `i += step` in
 * exec_for): with stop = INT64_MAX and step = 2^62 the third increment is
 * undefined behaviour (UBSan aborts; otherwise it wraps negative and the loop
 * goes on). Expected: 2 trips (0, 2^62). */
static const char *SRC_RANGE_OVF =
    HDR ORCH
    "    def main(self, o: pl.Out[pl.Tensor[[1, 1], pl.INT32]]) -> pl.Tensor[[1, 1], pl.INT32]:\n"
    "        z: pl.Scalar[pl.INT32] = 0\n"
    "        for i, (n,) in pl.range(0, 9223372036854775807, 4611686018427387904, init_values=(z,)):\n"
    "            n2 = pl.yield_(n + pl.const(1, pl.INT32))\n"
    "        pl.write(o, [0, 0], n2)\n"
    "        return o\n";

void test_interp_regress_range_counter_overflow(void)
{
    tprog_t t;
    if (!tp_open(&t, SRC_RANGE_OVF, pld_comm_self()))
        goto out;
    tp_zero_outs(&t);
    if (tp_run(&t, PLD_OK) != PLD_OK)
        goto out;
    const int32_t want[1] = {2};
    EXPECT_I32(&t, "o", want);
out:
    tp_close(&t);
}
