/* test_interp_util.c - the helpers of the interpreter suite (see test_interp_util.h). */
#include "test_interp_util.h"

/* ------------------------------------------------------------ helpers */

void dump_diags(const pld_program_t *p)
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
int tp_open_opts(tprog_t *t, const char *src, const pld_comm_t *comm, const pld_interp_opts_t *io)
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

int tp_open(tprog_t *t, const char *src, const pld_comm_t *comm)
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

void tp_close(tprog_t *t)
{
    record_ops_seen(t->it);
    pld_interp_destroy(t->it);
    pld_program_destroy(t->p);
    t->it = NULL;
    t->p = NULL;
}

int tp_param(tprog_t *t, const char *name)
{
    int i = pld_interp_param_index(t->it, name);
    if (i < 0)
        fprintf(stderr, "\nno entry parameter '%s'\n", name);
    CU_ASSERT_FATAL(i >= 0);
    return i;
}

pld_status_t tp_bind(tprog_t *t, const char *name, pld_dtype_t dt, int rank, const int64_t *shape,
                     const void *data)
{
    pld_status_t st = pld_interp_bind(t->it, tp_param(t, name), dt, rank, shape, data, t->err, sizeof t->err);
    if (st != PLD_OK)
        fprintf(stderr, "\nbind %s: %s\n", name, t->err);
    return st;
}

pld_status_t tp_gen(tprog_t *t, const char *name, const char *spec)
{
    pld_status_t st = pld_interp_bind_generated(t->it, tp_param(t, name), spec, t->err, sizeof t->err);
    if (st != PLD_OK)
        fprintf(stderr, "\ngenerate %s=%s: %s\n", name, spec, t->err);
    return st;
}

/* Binds every unbound Out parameter to zeros (what pldrun does). */
void tp_zero_outs(tprog_t *t)
{
    for (int i = 0; i < pld_interp_nparams(t->it); i++) {
        const pld_param_t *pp = pld_interp_param(t->it, i);
        if (!pld_interp_is_bound(t->it, i) && pp->type && pp->type->dir == PLD_DIR_OUT)
            CU_ASSERT_EQUAL(pld_interp_bind_generated(t->it, i, "zeros", t->err, sizeof t->err), PLD_OK);
    }
}

/* Runs; on an unexpected status prints the diagnostics. */
pld_status_t tp_run(tprog_t *t, pld_status_t want)
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
const void *tp_result(tprog_t *t, const char *name, pld_dtype_t want_dt, int64_t *numel)
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

const int32_t *res_i32(tprog_t *t, const char *name, int64_t *n)
{
    return tp_result(t, name, PLD_DT_INT32, n);
}

const float *res_f32(tprog_t *t, const char *name, int64_t *n)
{
    return tp_result(t, name, PLD_DT_FP32, n);
}

/* The first error diagnostic, or NULL. */
const pld_diag_t *first_error(const pld_program_t *p)
{
    for (const pld_diag_t *d = p->diags.head; d; d = d->next)
        if (d->sev == PLD_SEV_ERROR)
            return d;
    return NULL;
}

/* 1-based line and column of the first occurrence of marker in src (no tabs
 * in these programs, so the column is the byte column). */
void locate(const char *src, const char *marker, unsigned *line, unsigned *col)
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
void expect_error_at(tprog_t *t, const char *marker, ...)
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
int error_has_note(tprog_t *t, const char *frag)
{
    const pld_diag_t *d = first_error(t->p);
    for (const pld_diag_t *n = d ? d->notes : NULL; n; n = n->next)
        if (strstr(n->msg, frag))
            return 1;
    return 0;
}

/* ---- reference semantics (restated here, independently of the interpreter) ---- */

/* Python's a // b and a % b for integers (b != 0). */
int64_t py_floordiv(int64_t a, int64_t b)
{
    return (int64_t)floor((double)a / (double)b); /* exact for the small values used here */
}

int64_t py_mod(int64_t a, int64_t b)
{
    return a - b * py_floordiv(a, b);
}

/* Two's-complement INT32 wrap. */
int32_t wrap32(int64_t v)
{
    uint32_t u = (uint32_t)((uint64_t)v & 0xffffffffu);
    return u >= 0x80000000u ? (int32_t)((int64_t)u - 4294967296LL) : (int32_t)u;
}

/* IEEE binary16 round-to-nearest-even of a float, returned as a float
 * (independent of the interpreter's converter: works on the value, not bits). */
float round_f16(float x)
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

void fake_init(fake_comm_t *fc, int rank, int nranks)
{
    memset(fc, 0, sizeof *fc);
    fc->comm.ctx = fc;
    fc->comm.rank = rank;
    fc->comm.nranks = nranks;
    fc->comm.gather = fake_gather;
    fc->comm.allreduce_max = fake_max;
}
