/* test_interp_hw.c - the interpreter suite (CTest `interp`, tables in test_interp.c):
 * the kernel ABI (CommContext, builtin launches) through a spy backend. */
#include "test_interp_util.h"

#include "pld_interp_int.h" /* pld_interp_run_kernel: the spy backend runs kernels like sim */

/* ------------------------------------------------------------ kernel ABI: CommContext */

/* A backend that records what a launch hands to a kernel, then lets the
 * interpreter run it (as `sim` does). */
static struct {
    int launches;
    int ntensor_ctx;               /* tensor args with a comm_ctx */
    unsigned char ctx[1056];       /* copy of the first one */
    const void *ctx_ptr;
    const void *data;              /* that tensor's data pointer */
    uint64_t ctx_scalar;           /* a CommCtx scalar arg, if any */
    struct {                       /* every launch (the first 8) */
        char kernel[64];
        int nargs, ntensors, block_num, sync_start;
        uint64_t last_bits;        /* the last scalar argument */
        const void *tensor_ctx;    /* the CommContext of the first window-bound tensor */
    } rec[8];
} spy;

static pld_status_t spy_open(const char *options, int rank, int nranks, void **state, char *err, size_t errn)
{
    (void)options, (void)rank, (void)nranks, (void)err, (void)errn;
    *state = NULL;
    return PLD_OK;
}

static pld_status_t spy_launch(void *state, pld_hw_launch_t *l)
{
    (void)state;
    if (spy.launches < 8) {
        __typeof__(spy.rec[0]) *r = &spy.rec[spy.launches];
        snprintf(r->kernel, sizeof r->kernel, "%s", l->kernel);
        r->nargs = l->nargs;
        r->block_num = l->block_num;
        r->sync_start = l->sync_start;
        for (int i = 0; i < l->nargs; i++) {
            r->ntensors += l->args[i].is_tensor;
            if (!l->args[i].is_tensor)
                r->last_bits = l->args[i].bits;
            else if (!r->tensor_ctx)
                r->tensor_ctx = l->args[i].tensor.comm_ctx;
        }
    }
    spy.launches++;
    for (int i = 0; i < l->nargs; i++) {
        const pld_hw_arg_t *a = &l->args[i];
        if (a->is_tensor && a->tensor.comm_ctx) {
            if (spy.ntensor_ctx++ == 0) {
                memcpy(spy.ctx, a->tensor.comm_ctx, sizeof spy.ctx);
                spy.ctx_ptr = a->tensor.comm_ctx;
                spy.data = a->tensor.data;
            }
        } else if (!a->is_tensor && a->dt == PLD_DT_UINT64) {
            spy.ctx_scalar = a->bits;
        }
    }
    return pld_interp_run_kernel((pld_sim_call_t *)l->host_state);
}

static void spy_close(void *state) { (void)state; }

static const pld_hw_ops_t spy_ops = {
    PLD_HW_ABI, sizeof(pld_hw_ops_t), "spy", "records launches (tests)", spy_open, NULL, spy_launch, NULL, spy_close, NULL, NULL, NULL, NULL, NULL,
};

/* Opens src on one rank with the spy backend (records cleared); NULL after a
 * failure. Close the program, then the returned backend. */
static pld_hw_t *spy_program(tprog_t *t, const char *src)
{
    pld_hw_registry_t reg;
    pld_hw_registry_init(&reg);
    CU_ASSERT_NOT_EQUAL(pld_hw_register(&reg, &spy_ops), 0);
    memset(&spy, 0, sizeof spy);
    char err[256];
    pld_hw_t *hw = NULL;
    CU_ASSERT_EQUAL_FATAL(pld_hw_open(&reg, "spy", NULL, 0, 1, &hw, err, sizeof err), PLD_OK);
    pld_interp_opts_t io;
    memset(&io, 0, sizeof io);
    io.hw = hw;
    if (!tp_open_opts(t, src, NULL, &io)) {
        pld_hw_close(hw);
        return NULL;
    }
    return hw;
}

static const char *SRC_COMM_CTX =
    "import pypto.language as pl\n"
    "import pypto.language.distributed as pld\n\n\n"
    "@pl.program\n"
    "class T:\n" INCORE
    "    def k(self, x: pl.Tensor[[1, 8], pl.FP32], data: pl.InOut[pld.DistributedTensor[[1, 8], pl.FP32]],\n"
    "          c: pld.CommCtx) -> pld.DistributedTensor[[1, 8], pl.FP32]:\n"
    "        t = pl.load(x, [0, 0], [1, 8])\n"
    "        data = pl.store(t, [0, 0], data)\n"
    "        return data\n" ORCH
    "    def chip(self, x: pl.Tensor[[1, 8], pl.FP32], data: pl.InOut[pld.DistributedTensor[[1, 8], pl.FP32]],\n"
    "             c: pld.CommCtx):\n"
    "        data = self.k(x, data, c)\n" ORCH
    "    def touch(self, p: pl.InOut[pld.DistributedTensor[[1, 3], pl.FP32]]):\n"
    "        pass\n" HOST
    "    def host_orch(self, x: pl.Tensor[[1, 8], pl.FP32]):\n"
    "        pad = pld.alloc_window_buffer([1, 3], dtype=pl.FP32)\n"
    "        buf = pld.alloc_window_buffer([1, 8], dtype=pl.FP32)\n"
    "        for r in pl.range(pld.world_size()):\n"
    "            self.touch(pld.window(pad, [1, 3], dtype=pl.FP32), device=r)\n"
    "            data = pld.window(buf, [1, 8], dtype=pl.FP32)\n"
    "            c = pld.get_comm_ctx(data)\n"
    "            self.chip(x, data, c, device=r)\n";

/* A DistributedTensor argument carries its domain's CommContext in the PyPTO
 * byte layout, and a CommCtx scalar carries the same address: rankId@16,
 * rankNum@20, winSize@24, windowsIn[0]@32 = the local window base, so the
 * tensor's data pointer minus windowsIn[rankId] is its slot offset (the
 * second slot starts at align_up(3 * 4, 32) = 32). */
void test_interp_hw_comm_ctx(void)
{
    tprog_t t;
    pld_hw_t *hw = spy_program(&t, SRC_COMM_CTX);
    if (!hw)
        return;
    CU_ASSERT_EQUAL(tp_gen(&t, "x", "arange"), PLD_OK);
    tp_run(&t, PLD_OK);
    CU_ASSERT_EQUAL(spy.launches, 1);
    CU_ASSERT_EQUAL(spy.ntensor_ctx, 1);
    uint32_t rank_id, rank_num;
    uint64_t win_size, win0, win1, out0;
    memcpy(&rank_id, spy.ctx + 16, 4);
    memcpy(&rank_num, spy.ctx + 20, 4);
    memcpy(&win_size, spy.ctx + 24, 8);
    memcpy(&win0, spy.ctx + 32, 8);
    memcpy(&win1, spy.ctx + 40, 8);
    memcpy(&out0, spy.ctx + 544, 8);
    CU_ASSERT_EQUAL(rank_id, 0);
    CU_ASSERT_EQUAL(rank_num, 1);
    CU_ASSERT_EQUAL(win_size, 32 + 32); /* two slots, each aligned to 32 bytes */
    CU_ASSERT_NOT_EQUAL(win0, 0);
    CU_ASSERT_EQUAL(win1, 0); /* no rank 1 */
    CU_ASSERT_EQUAL(out0, 0);
    CU_ASSERT_EQUAL((uint64_t)(uintptr_t)spy.data - win0, 32);
    CU_ASSERT_EQUAL(spy.ctx_scalar, (uint64_t)(uintptr_t)spy.ctx_ptr);
    tp_close(&t);
    pld_hw_close(hw);
}

/* The lowered program's builtin collectives are launches through the
 * backend (docs/lowering.md): a HOST allreduce is one launch of
 * builtin.tensor.allreduce (target, signal, then the CommContext address), a
 * CHIP all_to_all_v with core_num=4 over one rank (B = 4) one launch of
 * __builtin_all_to_all_v__fp32 with 4 sync-start blocks and args[5..7] the
 * CommContext of its window-bound operands; and both compute what the
 * collective computes (one rank: allreduce leaves x, all_to_all_v copies the
 * send_counts[0] = 2 rows of MAX_RECV = 2 to itself). */
static const char *SRC_BUILTIN_LAUNCH =
    "import pypto.language as pl\n"
    "import pypto.language.distributed as pld\n\n\n"
    "@pl.program\n"
    "class T:\n" INCORE
    "    def fill(self, x: pl.Tensor[[2, 8], pl.FP32], st: pl.InOut[pld.DistributedTensor[[2, 8], pl.FP32]],\n"
    "             cnt: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]]):\n"
    "        t = pl.load(x, [0, 0], [2, 8])\n"
    "        st = pl.store(t, [0, 0], st)\n"
    "        pl.write(cnt, [0, 0], pl.cast(2, pl.INT32))\n" INCORE
    "    def out(self, d: pld.DistributedTensor[[2, 8], pl.FP32], o: pl.Out[pl.Tensor[[2, 8], pl.FP32]]):\n"
    "        t = pl.load(d, [0, 0], [2, 8])\n"
    "        o = pl.store(t, [0, 0], o)\n" ORCH
    "    def chip(self, x: pl.Tensor[[2, 8], pl.FP32], o: pl.Out[pl.Tensor[[2, 8], pl.FP32]],\n"
    "             st: pl.InOut[pld.DistributedTensor[[2, 8], pl.FP32]], d: pl.InOut[pld.DistributedTensor[[2, 8], pl.FP32]],\n"
    "             sig: pl.InOut[pld.DistributedTensor[[1, 4], pl.INT32]], cnt: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],\n"
    "             rc: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]]):\n"
    "        self.fill(x, st, cnt)\n"
    "        d = pld.tensor.all_to_all_v(st, d, sig, cnt, rc, core_num=4)\n"
    "        self.out(d, o)\n" HOST
    "    def host_orch(self, x: pl.Tensor[[2, 8], pl.FP32], o: pl.Out[pl.Tensor[[2, 8], pl.FP32]]):\n"
    "        b1 = pld.alloc_window_buffer([2, 8], dtype=pl.FP32)\n"
    "        b2 = pld.alloc_window_buffer([2, 8], dtype=pl.FP32)\n"
    "        b3 = pld.alloc_window_buffer([1, 4], dtype=pl.INT32)\n"
    "        b4 = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)\n"
    "        b5 = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)\n"
    "        for r in pl.range(pld.world_size()):\n"
    "            st = pld.window(b1, [2, 8], dtype=pl.FP32)\n"
    "            d = pld.window(b2, [2, 8], dtype=pl.FP32)\n"
    "            sig = pld.window(b3, [1, 4], dtype=pl.INT32)\n"
    "            cnt = pld.window(b4, [1, 1], dtype=pl.INT32)\n"
    "            rc = pld.window(b5, [1, 1], dtype=pl.INT32)\n"
    "            self.chip(x, o, st, d, sig, cnt, rc, device=r)\n"
    "        d = pld.window(b2, [2, 8], dtype=pl.FP32)\n"
    "        sig = pld.window(b3, [1, 4], dtype=pl.INT32)\n"
    "        d = pld.tensor.allreduce(d, sig, core_num=4)\n";

void test_interp_builtin_launch(void)
{
    tprog_t t;
    pld_hw_t *hw = spy_program(&t, SRC_BUILTIN_LAUNCH);
    if (!hw)
        return;
    CU_ASSERT_EQUAL(tp_gen(&t, "x", "arange"), PLD_OK);
    tp_zero_outs(&t);
    tp_run(&t, PLD_OK);
    /* fill, the CHIP builtin, out, the HOST builtin */
    CU_ASSERT_EQUAL_FATAL(spy.launches, 4);
    CU_ASSERT_STRING_EQUAL(spy.rec[1].kernel, "__builtin_all_to_all_v__fp32");
    CU_ASSERT_EQUAL(spy.rec[1].nargs, 8);
    CU_ASSERT_EQUAL(spy.rec[1].ntensors, 5);
    CU_ASSERT_EQUAL(spy.rec[1].block_num, 4);
    CU_ASSERT_EQUAL(spy.rec[1].sync_start, 1);
    CU_ASSERT_PTR_NOT_NULL(spy.rec[1].tensor_ctx);
    CU_ASSERT_EQUAL(spy.rec[1].last_bits, (uint64_t)(uintptr_t)spy.rec[1].tensor_ctx);
    CU_ASSERT_STRING_EQUAL(spy.rec[3].kernel, "builtin.tensor.allreduce");
    CU_ASSERT_EQUAL(spy.rec[3].nargs, 3);
    CU_ASSERT_EQUAL(spy.rec[3].ntensors, 2);
    CU_ASSERT_EQUAL(spy.rec[3].block_num, 4);
    CU_ASSERT_EQUAL(spy.rec[3].sync_start, 1);
    CU_ASSERT_EQUAL(spy.rec[3].last_bits, (uint64_t)(uintptr_t)spy.rec[3].tensor_ctx);
    int64_t n = 0;
    const float *o = res_f32(&t, "o", &n);
    CU_ASSERT_EQUAL_FATAL(n, 16);
    for (int i = 0; i < 16; i++)
        CU_ASSERT_EQUAL(o[i], (float)i);
    tp_close(&t);
    pld_hw_close(hw);
}
