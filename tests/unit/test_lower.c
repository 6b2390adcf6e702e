/* test_lower.c - CUnit suite for the lowering passes (src/parser/pld_lower.c,
 * docs/lowering.md): what seed 000 says PyPTO's own tests of
 * LowerL2TensorCollectives check, and the HOST rail's per-device dispatches.
 *
 *   chip_shape       the collective becomes `data = self.__builtin_all_to_all_v__fp32(...)`
 *   chip_signature   the synthesized AIV kernel: parameter names, kinds, directions, body
 *   chip_attrs       builtin_template_dir / builtin_template_vars / require_contiguous_operands
 *   chip_sharing     one kernel per variant, shared by every call site
 *   chip_int8        the INT8 variant (__int8, dtype_cpp=int8_t)
 *   chip_incore      an InCore body passes through unchanged
 *   chip_fold        B of RFC #2521's worked examples; launch spec only when B > 1
 *   chip_capacity    S < B rejected, S >= B (L=10, P=8, S=8) accepted
 *   chip_runtime_cn  a runtime core_num rejected
 *   chip_post        a collective other than all_to_all_v left in a CHIP body rejected
 *   host_all         ALL domain: a loop over pld.system.world_size()
 *   host_list        explicit device list: straight-line dispatches
 *   host_ring_barrier  builtin.tensor.allreduce_ring, builtin.tensor.barrier + rebind
 *   roundtrip        the printed lowered program checks and lowers to itself
 *
 * Expected texts are written here by hand from the seed and pld_semantics.md. */
#include "pld_check.h"
#include "pld_test.h"

/* ------------------------------------------------------------ helpers */

/* Parses, checks and lowers src (ranks unknown); *text receives the printed
 * lowered program (owned) when the lowering passed. */
static pld_program_t *lower_src(const char *src, pld_status_t *st, char **text)
{
    pld_check_opts_t o;
    memset(&o, 0, sizeof o);
    pld_status_t s = PLD_E_USAGE;
    pld_program_t *p = pld_check_text("t.pld", src, strlen(src), &o, &s);
    if (p && s == PLD_OK)
        s = pld_lower_program(p, &o, NULL);
    *st = s;
    if (text)
        *text = NULL;
    if (p && s == PLD_OK && text) {
        pld_buf_t b;
        pld_buf_init(&b);
        pld_ast_print(p, &b);
        *text = strdup(pld_buf_str(&b));
        pld_buf_fini(&b);
    }
    if (p && s != PLD_OK && s != PLD_E_TYPE) {
        pld_buf_t b;
        pld_buf_init(&b);
        pld_diag_render(&p->diags, "  | ", &b);
        fprintf(stderr, "\n%s", pld_buf_str(&b));
        pld_buf_fini(&b);
    }
    return p;
}

static const pld_diag_t *first_error(const pld_program_t *p)
{
    for (const pld_diag_t *d = p ? p->diags.head : NULL; d; d = d->next)
        if (d->sev == PLD_SEV_ERROR)
            return d;
    return NULL;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *s = hay; s && (s = strstr(s, needle)) != NULL; s += strlen(needle))
        n++;
    return n;
}

static const pld_func_t *find_func(const pld_program_t *p, const char *name)
{
    for (int i = 0; p && i < p->nfuncs; i++)
        if (strcmp(p->funcs[i]->name, name) == 0)
            return p->funcs[i];
    return NULL;
}

/* A CHIP pipeline with one all_to_all_v (a second one when `second`), signal
 * [P, S], dtype DT, core_num CN (text); an InCore kernel with its own
 * all_to_all_v (core_num=1) when `incore`. */
static char *chip_prog(int P, int S, const char *dt, const char *cn, int second, int incore)
{
    static const char *const fmt =
        "import pypto.language as pl\n"
        "import pypto.language.distributed as pld\n"
        "\n"
        "P = %d\n"
        "S = %d\n"
        "ROWS = P * 2\n"
        "COLS = 16\n"
        "\n"
        "\n"
        "@pl.program\n"
        "class T:\n"
        "%s"
        "    @pl.function(type=pl.FunctionType.Orchestration)\n"
        "    def chip(\n"
        "        self,\n"
        "        stage: pl.InOut[pld.DistributedTensor[[ROWS, COLS], pl.%s]],\n"
        "        data: pl.InOut[pld.DistributedTensor[[ROWS, COLS], pl.%s]],\n"
        "        sig: pl.InOut[pld.DistributedTensor[[P, S], pl.INT32]],\n"
        "        counts: pl.InOut[pld.DistributedTensor[[P, 1], pl.INT32]],\n"
        "        recv: pl.InOut[pld.DistributedTensor[[P, 1], pl.INT32]],\n"
        "        blocks: pl.Scalar[pl.INT32],\n"
        "    ) -> pld.DistributedTensor[[ROWS, COLS], pl.%s]:\n"
        "        data = pld.tensor.all_to_all_v(stage, data, sig, counts, recv, core_num=%s)\n"
        "%s"
        "        return data\n";
    char incore_fn[1024] = "", second_call[256] = "";
    if (incore)
        snprintf(incore_fn, sizeof incore_fn,
                 "    @pl.function(type=pl.FunctionType.InCore)\n"
                 "    def kern(\n"
                 "        self,\n"
                 "        stage: pl.Tensor[[ROWS, COLS], pl.%s],\n"
                 "        data: pl.InOut[pld.DistributedTensor[[ROWS, COLS], pl.%s]],\n"
                 "        vsig: pl.InOut[pld.DistributedTensor[[P, 1], pl.INT32]],\n"
                 "        counts: pl.Tensor[[P, 1], pl.INT32],\n"
                 "        recv: pl.InOut[pld.DistributedTensor[[P, 1], pl.INT32]],\n"
                 "    ) -> pld.DistributedTensor[[ROWS, COLS], pl.%s]:\n"
                 "        data = pld.tensor.all_to_all_v(stage, data, vsig, counts, recv, core_num=1)\n"
                 "        return data\n"
                 "\n",
                 dt, dt, dt);
    if (second)
        snprintf(second_call, sizeof second_call,
                 "        stage = pld.tensor.all_to_all_v(data, stage, sig, counts, recv, core_num=%s)\n", cn);
    size_t n = strlen(fmt) + strlen(incore_fn) + strlen(second_call) + 128;
    char *s = malloc(n);
    snprintf(s, n, fmt, P, S, incore_fn, dt, dt, dt, cn, second_call);
    return s;
}

/* A program, lowered: its text (NULL when the lowering failed). */
typedef struct lowered {
    char *src, *text;
    pld_program_t *p;
    pld_status_t st;
} lowered_t;

static lowered_t lowered_of(char *src)
{
    lowered_t x;
    x.src = src;
    x.p = lower_src(src, &x.st, &x.text);
    return x;
}

/* lowered_of, asserting that the lowering passed and printed a text. */
static lowered_t lowered_ok(char *src)
{
    lowered_t x = lowered_of(src);
    CU_ASSERT_EQUAL(x.st, PLD_OK);
    CU_ASSERT_PTR_NOT_NULL(x.text);
    return x;
}

static void lowered_free(lowered_t *x)
{
    free(x->text);
    free(x->src);
    pld_program_destroy(x->p);
}

/* ------------------------------------------------------------ CHIP rail */

static void test_chip_shape(void)
{
    lowered_t x = lowered_ok(chip_prog(4, 1, "FP32", "1", 0, 0));
    const char *text = x.text ? x.text : "";
    if (text) {
        CU_ASSERT_PTR_NOT_NULL(strstr(text, "        data = self.__builtin_all_to_all_v__fp32(stage, data, sig, counts, recv)\n"));
        CU_ASSERT_PTR_NULL(strstr(text, "pld.tensor.all_to_all_v("));
        /* the callee comes first (callee-first order of the printed program) */
        CU_ASSERT_TRUE(strstr(text, "def __builtin_all_to_all_v__fp32(") < strstr(text, "def chip("));
    }
    lowered_free(&x);
}

static void test_chip_signature(void)
{
    char *src = chip_prog(4, 1, "FP32", "1", 0, 0);
    pld_status_t st;
    pld_program_t *p = lower_src(src, &st, NULL);
    CU_ASSERT_EQUAL(st, PLD_OK);
    const pld_func_t *k = find_func(p, "__builtin_all_to_all_v__fp32");
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    CU_ASSERT_EQUAL(k->ftype, PLD_FT_AIV);
    CU_ASSERT_EQUAL(pld_check_func_ctx(k), PLD_CTX_KERNEL);
    CU_ASSERT_EQUAL_FATAL(k->nparams, 5);
    static const char *const names[5] = {"input", "target", "signal", "send_counts", "recv_counts"};
    static const pld_type_kind_t kinds[5] = {PLD_TY_TENSOR, PLD_TY_DTENSOR, PLD_TY_DTENSOR, PLD_TY_TENSOR,
                                             PLD_TY_DTENSOR};
    static const pld_dir_t dirs[5] = {PLD_DIR_IN, PLD_DIR_INOUT, PLD_DIR_INOUT, PLD_DIR_IN, PLD_DIR_INOUT};
    for (int i = 0; i < 5; i++) {
        CU_ASSERT_STRING_EQUAL(k->params[i].name, names[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(k->params[i].type);
        CU_ASSERT_EQUAL(k->params[i].type->kind, kinds[i]);
        CU_ASSERT_EQUAL(k->params[i].type->dir, dirs[i]);
        /* canonical, not the call site's: dynamic dims, never the constant P */
        CU_ASSERT_EQUAL(k->params[i].type->shape[0].kind, PLD_DIM_SYM);
    }
    CU_ASSERT_EQUAL(k->params[0].type->dtype, PLD_DT_FP32);
    CU_ASSERT_EQUAL(k->params[2].type->dtype, PLD_DT_INT32);
    /* body: one ReturnStmt returning the target parameter */
    CU_ASSERT_EQUAL_FATAL(k->body.n, 1);
    CU_ASSERT_EQUAL(k->body.stmts[0]->kind, PLD_ST_RETURN);
    CU_ASSERT_EQUAL_FATAL(k->body.stmts[0]->u.ret.n, 1);
    CU_ASSERT_EQUAL(k->body.stmts[0]->u.ret.vals[0]->kind, PLD_EX_NAME);
    CU_ASSERT_STRING_EQUAL(k->body.stmts[0]->u.ret.vals[0]->u.name, "target");
    free(src);
    pld_program_destroy(p);
}

static void test_chip_attrs(void)
{
    lowered_t x = lowered_ok(chip_prog(4, 1, "FP32", "1", 0, 0));
    const char *text = x.text ? x.text : "";
    CU_ASSERT_PTR_NOT_NULL(
        strstr(text, "    @pl.function(type=pl.FunctionType.AIV, attrs={\"builtin_template_dir\": "
                     "\":pypto.runtime.builtins.collectives.all_to_all_v\", \"builtin_template_vars\": \"dtype_cpp=float\", "
                     "\"require_contiguous_operands\": True})\n"
                     "    def __builtin_all_to_all_v__fp32(self, input: pl.Tensor["));
    CU_ASSERT_EQUAL(pld_check_builtin_kernel(find_func(x.p, "__builtin_all_to_all_v__fp32")), PLD_OPID_PLD_ALL_TO_ALL_V);
    CU_ASSERT_EQUAL(pld_check_builtin_kernel(find_func(x.p, "chip")), -1);
    lowered_free(&x);
}

static void test_chip_sharing(void)
{
    lowered_t x = lowered_ok(chip_prog(4, 1, "FP32", "1", 1, 0));
    const char *text = x.text ? x.text : "";
    CU_ASSERT_EQUAL(count(text, "def __builtin_all_to_all_v__"), 1);
    CU_ASSERT_EQUAL(count(text, "self.__builtin_all_to_all_v__fp32("), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "stage = self.__builtin_all_to_all_v__fp32(data, stage, sig, counts, recv)"));
    lowered_free(&x);
}

static void test_chip_int8(void)
{
    lowered_t x = lowered_ok(chip_prog(4, 1, "INT8", "1", 0, 0));
    const char *text = x.text ? x.text : "";
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "data = self.__builtin_all_to_all_v__int8(stage, data, sig, counts, recv)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"builtin_template_vars\": \"dtype_cpp=int8_t\""));
    CU_ASSERT_PTR_NULL(strstr(text, "__fp32"));
    const pld_func_t *k = find_func(x.p, "__builtin_all_to_all_v__int8");
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    CU_ASSERT_EQUAL(k->params[1].type->dtype, PLD_DT_INT8);
    lowered_free(&x);
}

static void test_chip_incore(void)
{
    lowered_t x = lowered_ok(chip_prog(4, 1, "FP32", "1", 0, 1));
    const char *text = x.text ? x.text : "";
    /* the InCore composite call is printed as written; only the CHIP one is lowered */
    CU_ASSERT_EQUAL(count(text, "pld.tensor.all_to_all_v(stage, data, vsig, counts, recv, core_num=1)"), 1);
    CU_ASSERT_EQUAL(count(text, "self.__builtin_all_to_all_v__fp32("), 1);
    lowered_free(&x);
}

/* RFC #2521's worked examples (pld_semantics.md §2.20 (d)). */
static void test_chip_fold(void)
{
    static const struct { int P, L, B; } ex[] = {
        {8, 1, 1}, {8, 2, 2}, {8, 4, 4}, {8, 7, 7}, {8, 8, 8}, {8, 10, 8}, {8, 15, 8}, {8, 16, 16},
        {4, 10, 8}, {2, 5, 4}, {2, 6, 6}, {16, 1, 1}, {16, 4, 4}, {16, 8, 8}, {16, 15, 15}, {16, 16, 16},
    };
    for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
        CU_ASSERT_EQUAL(pld_lower_a2av_blocks(ex[i].P, ex[i].L), ex[i].B);
        /* through the pass: signal [P, B] holds exactly the admitted lanes */
        char cn[16], want[160];
        snprintf(cn, sizeof cn, "%d", ex[i].L);
        lowered_t x = lowered_of(chip_prog(ex[i].P, ex[i].B, "FP32", cn, 0, 0));
        const char *text = x.text;
        CU_ASSERT_EQUAL(x.st, PLD_OK);
        if (ex[i].B > 1)
            snprintf(want, sizeof want, "self.__builtin_all_to_all_v__fp32(stage, data, sig, counts, recv, core_num=%d, "
                                        "sync_start=True)\n", ex[i].B);
        else
            snprintf(want, sizeof want, "self.__builtin_all_to_all_v__fp32(stage, data, sig, counts, recv)\n");
        if (!text || !strstr(text, want))
            fprintf(stderr, "\nP=%d L=%d: expected '%s'\n", ex[i].P, ex[i].L, want);
        CU_ASSERT_TRUE(text && strstr(text, want));
        lowered_free(&x);
    }
}

/* Lowers src (owned, freed here), which must fail with a first error
 * containing gist at line:col (col 0: any). */
static void expect_error(char *src, const char *gist, unsigned line, unsigned col)
{
    lowered_t x = lowered_of(src);
    CU_ASSERT_EQUAL(x.st, PLD_E_TYPE);
    const pld_diag_t *d = first_error(x.p);
    if (!d || !strstr(d->msg, gist))
        fprintf(stderr, "\nexpected an error containing '%s', got '%s'\n", gist, d ? d->msg : "none");
    CU_ASSERT_TRUE(d && strstr(d->msg, gist));
    CU_ASSERT_TRUE(d && d->span.line == line && (col == 0 || d->span.col == col));
    lowered_free(&x);
}

static void test_chip_capacity(void)
{
    /* L=10 over P=8 launches 8 blocks: S=8 is enough, S=7 is not (B, never L, is validated) */
    lowered_t x = lowered_of(chip_prog(8, 8, "FP32", "10", 0, 0));
    CU_ASSERT_EQUAL(x.st, PLD_OK);
    lowered_free(&x);
    expect_error(chip_prog(8, 7, "FP32", "10", 0, 0),
                 "signal shape[1] (7) must be at least the admitted block count 8 (core_num 10 folded over 8 ranks)", 22,
                 16);
    expect_error(chip_prog(4, 4, "FP32", "2147483648", 0, 0), "core_num must be in [1, INT32_MAX], found 2147483648",
                 22, 16);
    expect_error(chip_prog(4, 1, "FP16", "1", 0, 0), "supports only FP32 or INT8 on the CHIP rail, found FP16", 22, 16);
}

static void test_chip_runtime_cn(void)
{
    expect_error(chip_prog(4, 4, "FP32", "blocks", 0, 0), "a runtime core_num is not supported on the CHIP rail", 22, 16);
}

static void test_chip_post(void)
{
    static const char *const src =
        "import pypto.language as pl\n"
        "import pypto.language.distributed as pld\n"
        "\n"
        "\n"
        "@pl.program\n"
        "class T:\n"
        "    @pl.function(type=pl.FunctionType.Orchestration)\n"
        "    def chip(\n"
        "        self,\n"
        "        data: pl.InOut[pld.DistributedTensor[[1, 64], pl.FP32]],\n"
        "        sig: pl.InOut[pld.DistributedTensor[[4, 1], pl.INT32]],\n"
        "    ) -> pld.DistributedTensor[[1, 64], pl.FP32]:\n"
        "        data = pld.tensor.allreduce(data, sig)\n"
        "        return data\n";
    pld_status_t st;
    pld_program_t *p = lower_src(src, &st, NULL);
    CU_ASSERT_EQUAL(st, PLD_E_TYPE);
    const pld_diag_t *d = first_error(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_PTR_NOT_NULL(strstr(d->msg, "collective 'pld.tensor.allreduce' cannot stay in a CHIP orchestration body"));
    CU_ASSERT_EQUAL(d->span.line, 13);
    CU_ASSERT_EQUAL(d->span.col, 16);
    pld_program_destroy(p);
}

/* ------------------------------------------------------------ HOST rail */

/* A HOST orchestrator publishing two windows with `dispatch` and then
 * running `coll` (a statement of its body). */
static char *host_prog(const char *dispatch, const char *coll, const char *sigshape)
{
    static const char *const fmt =
        "import pypto.language as pl\n"
        "import pypto.language.distributed as pld\n"
        "\n"
        "\n"
        "@pl.program\n"
        "class H:\n"
        "    @pl.function(type=pl.FunctionType.Orchestration)\n"
        "    def chip(\n"
        "        self,\n"
        "        data: pl.InOut[pld.DistributedTensor[[1, 64], pl.FP32]],\n"
        "        sig: pld.DistributedTensor[%s, pl.INT32],\n"
        "    ) -> pld.DistributedTensor[[1, 64], pl.FP32]:\n"
        "        return data\n"
        "\n"
        "    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)\n"
        "    def host_orch(self, outs: pl.Out[pl.Tensor[[4, 1, 64], pl.FP32]]) -> pl.Tensor[[4, 1, 64], pl.FP32]:\n"
        "        data_buf = pld.alloc_window_buffer([1, 64], dtype=pl.FP32)\n"
        "        sig_buf = pld.alloc_window_buffer(%s, dtype=pl.INT32)\n"
        "        data = pld.window(data_buf, [1, 64], dtype=pl.FP32)\n"
        "        sig = pld.window(sig_buf, %s, dtype=pl.INT32)\n"
        "%s"
        "%s"
        "        return outs\n";
    size_t n = strlen(fmt) + strlen(dispatch) + strlen(coll) + 3 * strlen(sigshape) + 64;
    char *s = malloc(n);
    snprintf(s, n, fmt, sigshape, sigshape, sigshape, dispatch, coll);
    return s;
}

#define WORLD_DISPATCH                                                                                         \
    "        for r in pl.range(pld.world_size()):\n"                                                                  \
    "            self.chip(data, sig, device=r)\n"

/* Lowers src (owned, freed here), which must pass with `want` in its text
 * and `absent` (when not NULL) nowhere in it. */
static void expect_text(char *src, const char *want, const char *absent)
{
    lowered_t x = lowered_of(src);
    CU_ASSERT_EQUAL(x.st, PLD_OK);
    if (!x.text || !strstr(x.text, want))
        fprintf(stderr, "\nexpected\n%s\nin\n%s\n", want, x.text ? x.text : "(no text)");
    CU_ASSERT_TRUE(x.text && strstr(x.text, want));
    CU_ASSERT_TRUE(!absent || (x.text && !strstr(x.text, absent)));
    lowered_free(&x);
}

static void test_host_all(void)
{
    expect_text(host_prog(WORLD_DISPATCH, "        data = pld.tensor.allreduce(data, sig, op=pld.ReduceOp.Max)\n", "[4]"),
                "        for __dev_0 in pl.range(pld.system.world_size()):\n"
                "            builtin.tensor.allreduce(data, sig, op=pld.ReduceOp.Max, device=__dev_0)\n"
                "        data = data\n",
                "pld.tensor.allreduce(");
}

static void test_host_list(void)
{
    expect_text(host_prog("        self.chip(data, sig, device=1)\n"
                          "        self.chip(data, sig, device=3)\n",
                          "        data = pld.tensor.broadcast(data, sig, root=1)\n", "[4]"),
                "        builtin.tensor.broadcast(data, sig, root=1, device=1)\n"
                "        builtin.tensor.broadcast(data, sig, root=1, device=3)\n"
                "        data = data\n",
                "for __dev");
}

static void test_host_ring_barrier(void)
{
    expect_text(host_prog(WORLD_DISPATCH, "        data = pld.tensor.allreduce(data, sig, mode=\"ring\")\n", "[7, 4]"),
                "builtin.tensor.allreduce_ring(data, sig, mode=\"ring\", device=__dev_0)\n", NULL);
    expect_text(host_prog(WORLD_DISPATCH, "        sig = pld.tensor.barrier(sig)\n", "[4]"),
                "            builtin.tensor.barrier(sig, device=__dev_0)\n"
                "        sig = sig\n",
                NULL);
}

/* ------------------------------------------------------------ round trip */

static void roundtrip_one(const char *src)
{
    char *text = NULL, *again = NULL;
    pld_status_t st;
    pld_program_t *p = lower_src(src, &st, &text);
    CU_ASSERT_EQUAL(st, PLD_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    pld_program_t *q = lower_src(text, &st, &again);
    CU_ASSERT_EQUAL(st, PLD_OK); /* reads back with --check, and the lowering leaves it as it is */
    CU_ASSERT_TRUE(again && strcmp(text, again) == 0);
    if (again && strcmp(text, again) != 0)
        fprintf(stderr, "\n--- lowered\n%s\n--- read back and lowered again\n%s\n", text, again);
    free(text);
    free(again);
    pld_program_destroy(p);
    pld_program_destroy(q);
}

static void test_roundtrip(void)
{
    char *a = chip_prog(8, 8, "FP32", "10", 1, 1), *b = chip_prog(4, 1, "INT8", "1", 0, 0);
    char *c = host_prog(WORLD_DISPATCH, "        data = pld.tensor.allreduce(data, sig)\n", "[4]");
    roundtrip_one(a);
    roundtrip_one(b);
    roundtrip_one(c);
    free(a);
    free(b);
    free(c);
}

static CU_TestInfo lower_tests[] = {
    {"chip_shape", test_chip_shape},
    {"chip_signature", test_chip_signature},
    {"chip_attrs", test_chip_attrs},
    {"chip_sharing", test_chip_sharing},
    {"chip_int8", test_chip_int8},
    {"chip_incore", test_chip_incore},
    {"chip_fold", test_chip_fold},
    {"chip_capacity", test_chip_capacity},
    {"chip_runtime_cn", test_chip_runtime_cn},
    {"chip_post", test_chip_post},
    {"host_all", test_host_all},
    {"host_list", test_host_list},
    {"host_ring_barrier", test_host_ring_barrier},
    {"roundtrip", test_roundtrip},
    CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
    {"lower", NULL, NULL, NULL, NULL, lower_tests},
    CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv)
{
    return pld_test_run(argc, argv, suites);
}
