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
#include "pld_check.h"
#include "pld_hw.h"
#include "pld_interp.h"
#include "pld_interp_int.h" /* pld_interp_run_kernel: the spy backend runs kernels like sim */
#include "pld_test.h"
#include "pld_ast.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>

/* ------------------------------------------------------------ helpers */

/* Every program starts with these 5 lines; the class body follows. */
#define HDR "import pypto.language as pl\n\n\n@pl.program\nclass T:\n"
#define ORCH "    @pl.function(type=pl.FunctionType.Orchestration)\n"
#define INCORE "    @pl.function(type=pl.FunctionType.InCore)\n"
#define HOST "    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)\n"

typedef struct tprog {
    pld_program_t *p;
    pld_interp_t *it;
    const char *src;
    char err[1024];
} tprog_t;

static void dump_diags(const pld_program_t *p)
{
    pld_buf_t b;
    pld_buf_init(&b);
    pld_diag_render(&p->diags, "  | ", &b);
    fprintf(stderr, "\n%s", pld_buf_str(&b));
    pld_buf_fini(&b);
}

/* Checks src for comm's rank count and creates the interpreter. Returns 1 on
 * success; on failure records a CUnit failure, prints the diagnostics and
 * leaves t closed-safe. */
static int tp_open_opts(tprog_t *t, const char *src, const pld_comm_t *comm, const pld_interp_opts_t *io)
{
    memset(t, 0, sizeof *t);
    t->src = src;
    pld_check_opts_t co;
    memset(&co, 0, sizeof co);
    co.ranks = comm ? comm->nranks : 1;
    pld_status_t st = PLD_E_USAGE;
    t->p = pld_check_text("t.pld", src, strlen(src), &co, &st);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t->p);
    if (st == PLD_OK) /* the lowering passes, as pldrun runs them */
        st = pld_lower_program(t->p, &co, NULL);
    if (st != PLD_OK) {
        fprintf(stderr, "\nprogram does not check (%s):\n%s", pld_status_name(st), src);
        dump_diags(t->p);
        CU_FAIL("program does not check");
        return 0;
    }
    st = pld_interp_create(t->p, io, comm, &t->it, t->err, sizeof t->err);
    if (st != PLD_OK) {
        fprintf(stderr, "\npld_interp_create: %s: %s\n", pld_status_name(st), t->err);
        CU_FAIL("pld_interp_create failed");
        return 0;
    }
    return 1;
}

static int tp_open(tprog_t *t, const char *src, const pld_comm_t *comm)
{
    return tp_open_opts(t, src, comm, NULL);
}

/* PLD_OPS_SEEN=FILE: the ops this test program ran, as pldrun records them
 * (tools/pypto_ops.py tested). */
static void record_ops_seen(const pld_interp_t *it)
{
    const char *path = getenv("PLD_OPS_SEEN");
    if (!it || !path || !*path)
        return;
    char line[16384];
    size_t k = pld_interp_ops_seen_line(it, line, sizeof line);
    FILE *fp = fopen(path, "a");
    if (fp) {
        fwrite(line, 1, k, fp);
        fclose(fp);
    }
}

static void tp_close(tprog_t *t)
{
    record_ops_seen(t->it);
    pld_interp_destroy(t->it);
    pld_program_destroy(t->p);
    t->it = NULL;
    t->p = NULL;
}

static int tp_param(tprog_t *t, const char *name)
{
    int i = pld_interp_param_index(t->it, name);
    if (i < 0)
        fprintf(stderr, "\nno entry parameter '%s'\n", name);
    CU_ASSERT_FATAL(i >= 0);
    return i;
}

static pld_status_t tp_bind(tprog_t *t, const char *name, pld_dtype_t dt, int rank, const int64_t *shape,
                            const void *data)
{
    pld_status_t st = pld_interp_bind(t->it, tp_param(t, name), dt, rank, shape, data, t->err, sizeof t->err);
    if (st != PLD_OK)
        fprintf(stderr, "\nbind %s: %s\n", name, t->err);
    return st;
}

static pld_status_t tp_gen(tprog_t *t, const char *name, const char *spec)
{
    pld_status_t st = pld_interp_bind_generated(t->it, tp_param(t, name), spec, t->err, sizeof t->err);
    if (st != PLD_OK)
        fprintf(stderr, "\ngenerate %s=%s: %s\n", name, spec, t->err);
    return st;
}

/* Binds every unbound Out parameter to zeros (what pldrun does). */
static void tp_zero_outs(tprog_t *t)
{
    for (int i = 0; i < pld_interp_nparams(t->it); i++) {
        const pld_param_t *pp = pld_interp_param(t->it, i);
        if (!pld_interp_is_bound(t->it, i) && pp->type && pp->type->dir == PLD_DIR_OUT)
            CU_ASSERT_EQUAL(pld_interp_bind_generated(t->it, i, "zeros", t->err, sizeof t->err), PLD_OK);
    }
}

/* Runs; on an unexpected status prints the diagnostics. */
static pld_status_t tp_run(tprog_t *t, pld_status_t want)
{
    pld_status_t st = pld_interp_run(t->it);
    if (st != want) {
        fprintf(stderr, "\npld_interp_run: %s, expected %s\n", pld_status_name(st), pld_status_name(want));
        dump_diags(t->p);
    }
    CU_ASSERT_EQUAL(st, want);
    return st;
}

/* The result of tensor parameter `name` (dtype checked) and its element count. */
static const void *tp_result(tprog_t *t, const char *name, pld_dtype_t want_dt, int64_t *numel)
{
    pld_dtype_t dt;
    int rank;
    const int64_t *shape;
    const void *data;
    pld_status_t st = pld_interp_result(t->it, tp_param(t, name), &dt, &rank, &shape, &data);
    CU_ASSERT_EQUAL_FATAL(st, PLD_OK);
    CU_ASSERT_EQUAL_FATAL(dt, want_dt);
    int64_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= shape[d];
    if (numel)
        *numel = n;
    return data;
}

static const int32_t *res_i32(tprog_t *t, const char *name, int64_t *n)
{
    return tp_result(t, name, PLD_DT_INT32, n);
}

static const float *res_f32(tprog_t *t, const char *name, int64_t *n)
{
    return tp_result(t, name, PLD_DT_FP32, n);
}

/* Asserts n INT32 results equal want[]. */
#define EXPECT_I32(t, name, want)                                                                                  \
    do {                                                                                                           \
        int64_t n_;                                                                                                \
        const int32_t *got_ = res_i32((t), (name), &n_);                                                           \
        CU_ASSERT_EQUAL(n_, (int64_t)(sizeof(want) / sizeof((want)[0])));                                         \
        for (int64_t k_ = 0; k_ < n_ && k_ < (int64_t)(sizeof(want) / sizeof((want)[0])); k_++) {                  \
            if (got_[k_] != (want)[k_])                                                                            \
                fprintf(stderr, "\n%s[%lld] = %lld, expected %lld\n", (name), (long long)k_, (long long)got_[k_], \
                        (long long)(want)[k_]);                                                                    \
            CU_ASSERT_EQUAL(got_[k_], (want)[k_]);                                                                 \
        }                                                                                                          \
    } while (0)

/* Asserts FP32 results equal want[] bit for bit (NaN never expected). */
#define EXPECT_F32(t, name, want)                                                                                  \
    do {                                                                                                           \
        int64_t n_;                                                                                                \
        const float *got_ = res_f32((t), (name), &n_);                                                             \
        CU_ASSERT_EQUAL(n_, (int64_t)(sizeof(want) / sizeof((want)[0])));                                         \
        for (int64_t k_ = 0; k_ < n_ && k_ < (int64_t)(sizeof(want) / sizeof((want)[0])); k_++) {                  \
            if (got_[k_] != (want)[k_])                                                                            \
                fprintf(stderr, "\n%s[%lld] = %.9g, expected %.9g\n", (name), (long long)k_, (double)got_[k_],    \
                        (double)(want)[k_]);                                                                       \
            CU_ASSERT_EQUAL(got_[k_], (want)[k_]);                                                                 \
        }                                                                                                          \
    } while (0)

/* The first error diagnostic, or NULL. */
static const pld_diag_t *first_error(const pld_program_t *p)
{
    for (const pld_diag_t *d = p->diags.head; d; d = d->next)
        if (d->sev == PLD_SEV_ERROR)
            return d;
    return NULL;
}

/* 1-based line and column of the first occurrence of marker in src (no tabs
 * in these programs, so the column is the byte column). */
static void locate(const char *src, const char *marker, unsigned *line, unsigned *col)
{
    const char *at = strstr(src, marker);
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    *line = 1;
    const char *bol = src;
    for (const char *c = src; c < at; c++)
        if (*c == '\n') {
            (*line)++;
            bol = c + 1;
        }
    *col = (unsigned)(at - bol) + 1;
}

/* Asserts the run failed with a first error at marker's location whose
 * message contains every NULL-terminated fragment, and that the rendered text
 * holds "t.pld:LINE:COL: error:". */
static void expect_error_at(tprog_t *t, const char *marker, ...)
{
    const pld_diag_t *d = first_error(t->p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    unsigned line, col;
    locate(t->src, marker, &line, &col);
    if (d->span.line != line || d->span.col != col)
        fprintf(stderr, "\nerror at %u:%u, expected %u:%u (marker '%s'): %s\n", d->span.line, d->span.col, line, col,
                marker, d->msg);
    CU_ASSERT_EQUAL(d->span.line, line);
    CU_ASSERT_EQUAL(d->span.col, col);
    va_list ap;
    va_start(ap, marker);
    for (const char *frag = va_arg(ap, const char *); frag; frag = va_arg(ap, const char *)) {
        if (!strstr(d->msg, frag))
            fprintf(stderr, "\nerror message '%s' lacks '%s'\n", d->msg, frag);
        CU_ASSERT_PTR_NOT_NULL(strstr(d->msg, frag));
    }
    va_end(ap);
    char want[64];
    snprintf(want, sizeof want, "t.pld:%u:%u: error:", line, col);
    pld_buf_t b;
    pld_buf_init(&b);
    pld_diag_render(&t->p->diags, NULL, &b);
    if (!strstr(pld_buf_str(&b), want))
        fprintf(stderr, "\nrendered diagnostics lack '%s':\n%s", want, pld_buf_str(&b));
    CU_ASSERT_PTR_NOT_NULL(strstr(pld_buf_str(&b), want));
    pld_buf_fini(&b);
}

/* 1 when some note of the first error contains frag. */
static int error_has_note(tprog_t *t, const char *frag)
{
    const pld_diag_t *d = first_error(t->p);
    for (const pld_diag_t *n = d ? d->notes : NULL; n; n = n->next)
        if (strstr(n->msg, frag))
            return 1;
    return 0;
}

/* ---- reference semantics (restated here, independently of the interpreter) ---- */

/* Python's a // b and a % b for integers (b != 0). */
static int64_t py_floordiv(int64_t a, int64_t b)
{
    return (int64_t)floor((double)a / (double)b); /* exact for the small values used here */
}

static int64_t py_mod(int64_t a, int64_t b)
{
    return a - b * py_floordiv(a, b);
}

/* Two's-complement INT32 wrap. */
static int32_t wrap32(int64_t v)
{
    uint32_t u = (uint32_t)((uint64_t)v & 0xffffffffu);
    return u >= 0x80000000u ? (int32_t)((int64_t)u - 4294967296LL) : (int32_t)u;
}

/* IEEE binary16 round-to-nearest-even of a float, returned as a float
 * (independent of the interpreter's converter: works on the value, not bits). */
static float round_f16(float x)
{
    double a = fabs((double)x);
    if (a >= 65520.0)
        return x < 0 ? -INFINITY : INFINITY;
    double ulp;
    if (a < ldexp(1.0, -14)) {
        ulp = ldexp(1.0, -24); /* subnormal spacing */
    } else {
        int e;
        frexp(a, &e);          /* a = m * 2^e, m in [0.5, 1) */
        ulp = ldexp(1.0, e - 11);
    }
    double q = a / ulp;        /* exact: power-of-two scaling */
    double fl = floor(q), r = q - fl;
    double n = r > 0.5 ? fl + 1 : r < 0.5 ? fl : (fmod(fl, 2.0) == 0 ? fl : fl + 1);
    double v = n * ulp;
    return (float)(x < 0 ? -v : v);
}

/* ---- a fake multi-rank control plane ---- */

typedef struct fake_comm {
    pld_comm_t comm;
    int gathers;
    int maxes;
} fake_comm_t;

static pld_status_t fake_gather(void *ctx, const void *send, size_t bytes, void *recv)
{
    fake_comm_t *fc = ctx;
    fc->gathers++;
    if (recv) {
        /* only this rank's contribution: the others wrote nothing */
        memset(recv, 0, bytes * (size_t)fc->comm.nranks);
        memcpy((char *)recv + bytes * (size_t)fc->comm.rank, send, bytes);
    }
    return PLD_OK;
}

static pld_status_t fake_max(void *ctx, int64_t in, int64_t *out)
{
    fake_comm_t *fc = ctx;
    fc->maxes++;
    *out = in;
    return PLD_OK;
}

static void fake_init(fake_comm_t *fc, int rank, int nranks)
{
    memset(fc, 0, sizeof *fc);
    fc->comm.ctx = fc;
    fc->comm.rank = rank;
    fc->comm.nranks = nranks;
    fc->comm.gather = fake_gather;
    fc->comm.allreduce_max = fake_max;
}

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

static void test_interp_scalar_floor_div_mod(void)
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

static void test_interp_scalar_int32_wrap(void)
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

static void test_interp_scalar_index_int32_promotion(void)
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

static void test_interp_scalar_float_division(void)
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

static void test_interp_range_steps(void)
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

static void test_interp_zero_trip_loop_yields_init(void)
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

static void test_interp_zero_trip_tile_loop(void)
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

static void test_interp_if_else_yield(void)
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
static const char *SRC_WHILE =
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

static void test_interp_while_break_continue(void)
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

static void test_interp_while_cond(void)
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

static void test_interp_early_return(void)
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
static const char *SRC_TUPLE =
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

static void test_interp_tuple_return_unpack(void)
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

static void test_interp_unroll(void)
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

static void test_interp_tile_load_valid_shape_clamp_store(void)
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

static void test_interp_tile_elementwise(void)
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
 * src/interp/pld_kern.c) once stepped source and destination with the same
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

static void test_interp_tile_cast_fp16_rounding(void)
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

static void test_interp_tile_row_sum_ragged(void)
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

static void test_interp_tile_matmul_small(void)
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

static void test_interp_tensor_slice_assemble_read_write(void)
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

static void test_interp_dispatch_device_selects_rank(void)
{
    run_dispatch(1, 2); /* device=0 must not run here */
    run_dispatch(0, 2);
    run_dispatch(3, 4); /* nothing targets rank 3 */
    run_dispatch(2, 4);
}

/* Dispatch over pl.range(pld.world_size()) with a dynamic NR bound by an
 * input: rank 0 runs only device=0. */
static const char *SRC_DISPATCH_WS =
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

static void test_interp_dispatch_world_size(void)
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

static void test_interp_error_load_out_of_bounds(void)
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

static void test_interp_error_device_out_of_range(void)
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

static void test_interp_error_domain_inference(void)
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

static void test_interp_error_unsupported_dtype_read(void)
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

static void test_interp_error_int_division_by_zero(void)
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

static void test_interp_error_ub_overflow(void)
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

static void test_interp_block_stack_exhausted(void)
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
static void test_interp_ub_option(void)
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

static void test_interp_ub_liveness(void)
{
    ub_live_run("fused", PLD_OK, NULL);                               /* dead tiles take no room */
    ub_live_run("cube", PLD_OK, NULL);                                /* Mat and Left are not the UB */
    ub_live_run("hog4", PLD_E_RUNTIME, "tr = pl.relu(ts)");           /* all four read later */
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

static void test_interp_scalar_first(void)
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

static void test_interp_tensor_matmul_trans(void)
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

static void test_interp_error_op_budget(void)
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

static void test_interp_error_missing_input(void)
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
static void test_interp_bind_shape_mismatch(void)
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

static void test_interp_error_in_carried_loop(void)
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
static void test_interp_oom_loop(void)
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

static void test_interp_regress_host_tuple_unpack_other_rank(void)
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

static void test_interp_regress_huge_tensor_size_overflow(void)
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

static void test_interp_regress_ub_message_names_every_tile(void)
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

static void test_interp_regress_range_counter_overflow(void)
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


/* ------------------------------------------------------------ registration */


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
static void test_interp_hw_comm_ctx(void)
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

static void test_interp_builtin_launch(void)
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

static void test_interp_module_consts_folded(void)
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

static CU_TestInfo interp_tests[] = {
    {"test_interp_module_consts_folded", test_interp_module_consts_folded},
    {"test_interp_scalar_floor_div_mod", test_interp_scalar_floor_div_mod},
    {"test_interp_scalar_int32_wrap", test_interp_scalar_int32_wrap},
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
