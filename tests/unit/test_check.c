/* test_check.c - CUnit suite for the checker API (src/parser/pld_check.h).
 *
 * Checks tests/examples (copy of shared/examples) (04 neighbour mail, 06 InCore collectives, 08 HOST
 * collectives) and small template programs, then asserts what the checker
 * writes into the AST: types (kind, dtype, shape, valid shape, memory space,
 * direction), resolved op ids (including unified pl.add -> tile/tensor op by
 * operand), argument binding (e->bound), dispatch targets (e->aux), local
 * slots, levels / roles / function types derived from decorators; and the
 * behaviour of the API: opts.ranks-dependent rules, re-checking with other
 * opts, diagnostic rendering, and an OOM loop over pld_check_text. */
#include "pld_check.h"
#include "pld_ast.h"
#include "pld_test.h"

#ifndef PLD_EXAMPLES_DIR
#error "PLD_EXAMPLES_DIR must name tests/examples (copy of shared/examples)"
#endif

/* ------------------------------------------------------------ helpers */

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 8192, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (n + 1 >= cap) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        if (got == 0)
            break;
        n += got;
    }
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Reads an example of tests/examples (copy of shared/examples) (owned; NULL and a CUnit failure when missing). */
static char *example(const char *name, size_t *len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", PLD_EXAMPLES_DIR, name);
    char *s = read_all(path, len);
    if (!s)
        fprintf(stderr, "\ncannot read %s\n", path);
    CU_ASSERT_PTR_NOT_NULL(s);
    return s;
}

static void dump_diags(const pld_program_t *p)
{
    pld_buf_t b;
    pld_buf_init(&b);
    pld_diag_render(&p->diags, "  | ", &b);
    fprintf(stderr, "\n%s", pld_buf_str(&b));
    pld_buf_fini(&b);
}

/* Checks text with opts.ranks = ranks; returns the program (owned). */
static pld_program_t *check_src(const char *file, const char *src, int ranks, pld_status_t *st)
{
    pld_check_opts_t o;
    memset(&o, 0, sizeof o);
    o.ranks = ranks;
    pld_status_t s = PLD_E_USAGE;
    pld_program_t *p = pld_check_text(file, src, strlen(src), &o, &s);
    if (st)
        *st = s;
    return p;
}

/* Checks an example that must pass; returns the program or NULL. */
static pld_program_t *check_example(const char *name, int ranks)
{
    size_t len;
    char *src = example(name, &len);
    if (!src)
        return NULL;
    pld_status_t st;
    pld_program_t *p = check_src(name, src, ranks, &st);
    free(src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    if (st != PLD_OK)
        dump_diags(p);
    CU_ASSERT_EQUAL(st, PLD_OK);
    return p;
}

static pld_func_t *func(const pld_program_t *p, const char *name)
{
    for (int i = 0; i < p->nfuncs; i++)
        if (strcmp(p->funcs[i]->name, name) == 0)
            return p->funcs[i];
    fprintf(stderr, "\nno function '%s'\n", name);
    return NULL;
}

static int func_index(const pld_program_t *p, const char *name)
{
    for (int i = 0; i < p->nfuncs; i++)
        if (strcmp(p->funcs[i]->name, name) == 0)
            return i;
    return -1;
}

/* First statement starting on `line` in a block (recursively). */
static pld_stmt_t *stmt_in(const pld_block_t *b, unsigned line)
{
    for (int i = 0; i < b->n; i++) {
        pld_stmt_t *s = b->stmts[i];
        if (s->span.line == line)
            return s;
        pld_stmt_t *r = NULL;
        switch (s->kind) {
        case PLD_ST_IF:
            r = stmt_in(&s->u.if_.then, line);
            if (!r)
                r = stmt_in(&s->u.if_.els, line);
            break;
        case PLD_ST_WHILE: r = stmt_in(&s->u.while_.body, line); break;
        case PLD_ST_FOR: r = stmt_in(&s->u.for_.body, line); break;
        case PLD_ST_WITH: r = stmt_in(&s->u.with.body, line); break;
        default: break;
        }
        if (r)
            return r;
    }
    return NULL;
}

static pld_stmt_t *stmt_at(const pld_program_t *p, const char *fn, unsigned line)
{
    pld_func_t *f = func(p, fn);
    pld_stmt_t *s = f ? stmt_in(&f->body, line) : NULL;
    if (!s)
        fprintf(stderr, "\nno statement at line %u of '%s'\n", line, fn);
    return s;
}

/* The value of the assignment / the expression / the first returned value at a line. */
static pld_expr_t *value_at(const pld_program_t *p, const char *fn, unsigned line)
{
    pld_stmt_t *s = stmt_at(p, fn, line);
    if (!s)
        return NULL;
    switch (s->kind) {
    case PLD_ST_ASSIGN: return s->u.assign.value;
    case PLD_ST_EXPR: return s->u.expr;
    case PLD_ST_RETURN: return s->u.ret.n > 0 ? s->u.ret.vals[0] : NULL;
    case PLD_ST_FOR: return s->u.for_.iter;
    default: return NULL;
    }
}

/* First NAME node `name` inside e (depth-first, left to right). */
static pld_expr_t *find_name(pld_expr_t *e, const char *name)
{
    if (!e)
        return NULL;
    pld_expr_t *r = NULL;
    switch (e->kind) {
    case PLD_EX_NAME: return strcmp(e->u.name, name) == 0 ? e : NULL;
    case PLD_EX_UNARY: return find_name(e->u.un.a, name);
    case PLD_EX_BINARY:
        r = find_name(e->u.bin.a, name);
        return r ? r : find_name(e->u.bin.b, name);
    case PLD_EX_CALL:
        for (int i = 0; i < e->u.call.nargs && !r; i++)
            r = find_name(e->u.call.args[i].value, name);
        return r;
    case PLD_EX_SUBSCRIPT:
        r = find_name(e->u.sub.obj, name);
        for (int i = 0; i < e->u.sub.n && !r; i++)
            r = find_name(e->u.sub.items[i], name);
        return r;
    case PLD_EX_LIST:
    case PLD_EX_TUPLE:
        for (int i = 0; i < e->u.seq.n && !r; i++)
            r = find_name(e->u.seq.items[i], name);
        return r;
    default: return NULL;
    }
}

static int dim_is(const pld_type_t *t, int i, int64_t v)
{
    return t && i < t->rank && t->shape && t->shape[i].kind == PLD_DIM_CONST && t->shape[i].v == v;
}

static int dim_is_sym(const pld_type_t *t, int i, const char *sym)
{
    return t && i < t->rank && t->shape && t->shape[i].kind == PLD_DIM_SYM && strcmp(t->shape[i].sym, sym) == 0;
}

static int valid_is(const pld_type_t *t, int i, int64_t v)
{
    return t && t->valid && i < t->rank && t->valid[i].kind == PLD_DIM_CONST && t->valid[i].v == v;
}

/* Asserts kind, dtype and a 2-D constant shape. */
#define ASSERT_TYPE2(t, k, dt, d0, d1)                                                                           \
    do {                                                                                                          \
        const pld_type_t *t_ = (t);                                                                               \
        CU_ASSERT_PTR_NOT_NULL_FATAL(t_);                                                                         \
        CU_ASSERT_EQUAL(t_->kind, (k));                                                                           \
        CU_ASSERT_EQUAL(t_->dtype, (dt));                                                                         \
        CU_ASSERT_EQUAL(t_->rank, 2);                                                                             \
        CU_ASSERT(dim_is(t_, 0, (d0)));                                                                           \
        CU_ASSERT(dim_is(t_, 1, (d1)));                                                                           \
    } while (0)

static const pld_diag_t *first_error(const pld_program_t *p)
{
    for (const pld_diag_t *d = p->diags.head; d; d = d->next)
        if (d->sev == PLD_SEV_ERROR)
            return d;
    return NULL;
}

static int has_error_containing(const pld_program_t *p, const char *text)
{
    for (const pld_diag_t *d = p->diags.head; d; d = d->next)
        if (d->sev == PLD_SEV_ERROR && strstr(d->msg, text))
            return 1;
    return 0;
}

/* A complete program: InCore kernel `kern` (body at line 16), CHIP
 * orchestration `chip` and the HOST orchestrator `host_orch`. Each body
 * argument is inserted verbatim (8-space indented lines). Returns owned text. */
static char *program3(const char *kern_body, const char *chip_body, const char *host_body)
{
    pld_buf_t b;
    pld_buf_init(&b);
    pld_buf_puts(&b, "import pypto.language as pl\n"                             /* 1 */
                     "import pypto.language.distributed as pld\n"                /* 2 */
                     "\n"                                                        /* 3 */
                     "SIZE = 64\n"                                               /* 4 */
                     "NR = pl.dynamic(\"NR\")\n"                                 /* 5 */
                     "\n"                                                        /* 6 */
                     "\n"                                                        /* 7 */
                     "@pl.program\n"                                             /* 8 */
                     "class T:\n"                                                /* 9 */
                     "    @pl.function(type=pl.FunctionType.InCore)\n"           /* 10 */
                     "    def kern(\n"                                           /* 11 */
                     "        self,\n"                                           /* 12 */
                     "        x: pl.Tensor[[1, SIZE], pl.FP32],\n"               /* 13 */
                     "        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],\n"       /* 14 */
                     "    ) -> pl.Tensor[[1, SIZE], pl.FP32]:\n");               /* 15 */
    pld_buf_puts(&b, kern_body);
    pld_buf_puts(&b, "        return y\n"
                     "\n"
                     "    @pl.function(type=pl.FunctionType.Orchestration)\n"
                     "    def chip(\n"
                     "        self,\n"
                     "        x: pl.Tensor[[1, SIZE], pl.FP32],\n"
                     "        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],\n"
                     "    ) -> pl.Tensor[[1, SIZE], pl.FP32]:\n");
    pld_buf_puts(&b, chip_body);
    pld_buf_puts(&b, "        return self.kern(x, y)\n"
                     "\n"
                     "    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)\n"
                     "    def host_orch(\n"
                     "        self,\n"
                     "        xs: pl.Tensor[[NR, 1, SIZE], pl.FP32],\n"
                     "        ys: pl.Out[pl.Tensor[[NR, 1, SIZE], pl.FP32]],\n"
                     "    ) -> pl.Tensor[[NR, 1, SIZE], pl.FP32]:\n");
    pld_buf_puts(&b, host_body);
    pld_buf_puts(&b, "        for r in pl.range(pld.world_size()):\n"
                     "            self.chip(xs[r], ys[r], device=r)\n"
                     "        return ys\n");
    size_t n = b.len + 1;
    char *s = malloc(n);
    memcpy(s, pld_buf_str(&b), n);
    pld_buf_fini(&b);
    return s;
}

#define KERN_LOAD_STORE "        t = pl.load(x, [0, 0], [1, SIZE])\n        y = pl.store(t, [0, 0], y)\n"

/* ------------------------------------------------------------ examples pass */

static void test_check_examples_pass(void)
{
    static const char *const names[] = {
        "01_scale_bias.printed.pld",      "02_row_scan.printed.pld",    "03_gemm_rowsum.printed.pld",
        "04_neighbor_mail.printed.pld",   "05_ring_put_get.printed.pld", "06_incore_collectives.printed.pld",
        "07_fixed_ring.printed.pld",      "08_host_collectives.printed.pld",
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        /* P unknown, and P = 4 (07 is written for exactly 4 ranks) */
        for (int ranks = 0; ranks <= 4; ranks += 4) {
            pld_program_t *p = check_example(names[i], ranks);
            if (p)
                CU_ASSERT_EQUAL(p->diags.n_errors, 0);
            pld_program_destroy(p);
        }
    }
}

/* ------------------------------------------------------------ types */

static void test_check_param_types(void)
{
    pld_program_t *p = check_example("04_neighbor_mail.printed.pld", 0);
    if (!p)
        return;
    pld_func_t *mail = func(p, "mail");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mail);
    CU_ASSERT_EQUAL_FATAL(mail->nparams, 6);
    /* inp: pl.Tensor[[4, 64], pl.FP32] (In) */
    ASSERT_TYPE2(mail->params[0].type, PLD_TY_TENSOR, PLD_DT_FP32, 4, 64);
    CU_ASSERT_EQUAL(mail->params[0].type->dir, PLD_DIR_IN);
    /* out: pl.Out[...] */
    ASSERT_TYPE2(mail->params[1].type, PLD_TY_TENSOR, PLD_DT_FP32, 4, 64);
    CU_ASSERT_EQUAL(mail->params[1].type->dir, PLD_DIR_OUT);
    /* box: pl.InOut[pld.DistributedTensor[[4, 64], pl.FP32]] */
    ASSERT_TYPE2(mail->params[2].type, PLD_TY_DTENSOR, PLD_DT_FP32, 4, 64);
    CU_ASSERT_EQUAL(mail->params[2].type->dir, PLD_DIR_INOUT);
    /* flags: [NR, 1] INT32, NR a dynamic dimension */
    const pld_type_t *flags = mail->params[4].type;
    CU_ASSERT_EQUAL(flags->kind, PLD_TY_DTENSOR);
    CU_ASSERT_EQUAL(flags->dtype, PLD_DT_INT32);
    CU_ASSERT_EQUAL(flags->rank, 2);
    CU_ASSERT(dim_is_sym(flags, 0, "NR"));
    CU_ASSERT(dim_is(flags, 1, 1));
    CU_ASSERT_EQUAL(pld_type_static_numel(flags), -1);
    CU_ASSERT_EQUAL(pld_type_static_numel(mail->params[0].type), 256);
    /* host_orch: inputs [NR, 4, 64] */
    pld_func_t *host = func(p, "host_orch");
    CU_ASSERT_PTR_NOT_NULL_FATAL(host);
    const pld_type_t *in = host->params[0].type;
    CU_ASSERT_EQUAL(in->kind, PLD_TY_TENSOR);
    CU_ASSERT_EQUAL(in->rank, 3);
    CU_ASSERT(dim_is_sym(in, 0, "NR"));
    CU_ASSERT(dim_is(in, 1, 4));
    CU_ASSERT(dim_is(in, 2, 64));
    pld_program_destroy(p);

    /* scalar parameters and a bare-dtype shape constant (01) */
    p = check_example("01_scale_bias.printed.pld", 0);
    if (!p)
        return;
    pld_func_t *aff = func(p, "affine");
    CU_ASSERT_PTR_NOT_NULL_FATAL(aff);
    CU_ASSERT_EQUAL(aff->params[3].type->kind, PLD_TY_SCALAR);
    CU_ASSERT_EQUAL(aff->params[3].type->dtype, PLD_DT_INT32);
    CU_ASSERT_EQUAL(aff->params[1].type->dtype, PLD_DT_FP16);
    pld_program_destroy(p);
}

static void test_check_tile_load_type(void)
{
    pld_program_t *p = check_example("04_neighbor_mail.printed.pld", 0);
    if (!p)
        return;
    /* 15: mine = pl.tile.load(inp, [0, 0], [4, 64], [4, 64], target_memory=pl.Mem.Vec) */
    pld_expr_t *e = value_at(p, "mail", 15);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_EQUAL(e->op, PLD_OPID_TILE_LOAD);
    ASSERT_TYPE2(e->type, PLD_TY_TILE, PLD_DT_FP32, 4, 64);
    CU_ASSERT_EQUAL(e->type->mem, PLD_MEM_VEC);
    CU_ASSERT_PTR_NULL(e->type->valid); /* valid_shape == shapes */
    /* the assignment target carries the same type */
    pld_stmt_t *s = stmt_at(p, "mail", 15);
    CU_ASSERT_PTR_EQUAL(s->u.assign.target->type, e->type);
    /* 27: both = pl.tile.add(from_left, pooled) keeps the lhs valid region */
    pld_expr_t *add = value_at(p, "mail", 27);
    CU_ASSERT_EQUAL(add->op, PLD_OPID_TILE_ADD);
    ASSERT_TYPE2(add->type, PLD_TY_TILE, PLD_DT_FP32, 4, 64);
    /* 28: pl.tile.store returns the output tensor */
    pld_expr_t *st = value_at(p, "mail", 28);
    CU_ASSERT_EQUAL(st->op, PLD_OPID_TILE_STORE);
    ASSERT_TYPE2(st->type, PLD_TY_TENSOR, PLD_DT_FP32, 4, 64);
    pld_program_destroy(p);

    /* a tile load with a dynamic offset (06 line 21) and one from a DistributedTensor (line 19) */
    p = check_example("06_incore_collectives.printed.pld", 0);
    if (!p)
        return;
    ASSERT_TYPE2(value_at(p, "gather_scatter", 19)->type, PLD_TY_TILE, PLD_DT_FP32, 1, 64);
    ASSERT_TYPE2(value_at(p, "gather_scatter", 21)->type, PLD_TY_TILE, PLD_DT_FP32, 1, 64);
    pld_program_destroy(p);
}

static void test_check_remote_load_type(void)
{
    pld_program_t *p = check_example("04_neighbor_mail.printed.pld", 0);
    if (!p)
        return;
    /* 25: from_left = pld.tile.remote_load(box, me, [0, 0], [4, 64]) */
    pld_expr_t *e = value_at(p, "mail", 25);
    CU_ASSERT_EQUAL(e->op, PLD_OPID_PLD_REMOTE_LOAD);
    ASSERT_TYPE2(e->type, PLD_TY_TILE, PLD_DT_FP32, 4, 64);
    CU_ASSERT_PTR_NULL(e->type->valid);
    /* 26: pooled = pld.tile.remote_load(pool, me, [0, 0], [4, 64], [2, 64]) */
    e = value_at(p, "mail", 26);
    ASSERT_TYPE2(e->type, PLD_TY_TILE, PLD_DT_FP32, 4, 64);
    CU_ASSERT(valid_is(e->type, 0, 2));
    CU_ASSERT(valid_is(e->type, 1, 64));
    pld_program_destroy(p);
}

static void test_check_pld_value_types(void)
{
    pld_program_t *p = check_example("04_neighbor_mail.printed.pld", 0);
    if (!p)
        return;
    CU_ASSERT_EQUAL(value_at(p, "mail", 10)->type->kind, PLD_TY_COMMCTX);
    const pld_type_t *me = value_at(p, "mail", 11)->type;
    CU_ASSERT_EQUAL(me->kind, PLD_TY_SCALAR);
    CU_ASSERT_EQUAL(me->dtype, PLD_DT_INT32);
    CU_ASSERT_EQUAL(value_at(p, "mail", 12)->type->dtype, PLD_DT_INT32);
    /* 13: right = (pl.cast(me, pl.INDEX) + 1) % pl.cast(n, pl.INDEX) */
    const pld_type_t *right = value_at(p, "mail", 13)->type;
    CU_ASSERT_EQUAL(right->kind, PLD_TY_SCALAR);
    CU_ASSERT_EQUAL(right->dtype, PLD_DT_INDEX);
    /* side-effect ops have no value */
    CU_ASSERT_EQUAL(value_at(p, "mail", 17)->type->kind, PLD_TY_NONE);
    CU_ASSERT_EQUAL(value_at(p, "mail", 18)->type->kind, PLD_TY_NONE);
    /* HOST: 35 alloc_window_buffer -> Ptr; 40 window -> DistributedTensor [4, 64] FP32 */
    pld_expr_t *alloc = value_at(p, "host_orch", 35);
    CU_ASSERT_EQUAL(alloc->op, PLD_OPID_PLD_ALLOC_WINDOW_BUFFER);
    CU_ASSERT_EQUAL(alloc->type->kind, PLD_TY_PTR);
    pld_expr_t *win = value_at(p, "host_orch", 40);
    CU_ASSERT_EQUAL(win->op, PLD_OPID_PLD_WINDOW);
    ASSERT_TYPE2(win->type, PLD_TY_DTENSOR, PLD_DT_FP32, 4, 64);
    /* 39: for r in pl.range(pld.system.world_size()) */
    pld_expr_t *it = value_at(p, "host_orch", 39);
    CU_ASSERT_EQUAL(it->op, PLD_OPID_PL_RANGE);
    pld_expr_t *ws = it->u.call.args[0].value;
    CU_ASSERT_EQUAL(ws->op, PLD_OPID_PLD_WORLD_SIZE);
    CU_ASSERT_EQUAL(ws->type->kind, PLD_TY_SCALAR);
    CU_ASSERT_EQUAL(ws->type->dtype, PLD_DT_INT64);
    pld_program_destroy(p);
}

static void test_check_collective_result_types(void)
{
    pld_program_t *p = check_example("06_incore_collectives.printed.pld", 0);
    if (!p)
        return;
    /* 13: everyone = pld.tensor.allgather(x, everyone, sig) -> the target's type */
    pld_expr_t *ag = value_at(p, "gather_scatter", 13);
    CU_ASSERT_EQUAL(ag->op, PLD_OPID_PLD_ALLGATHER);
    CU_ASSERT_EQUAL(ag->type->kind, PLD_TY_DTENSOR);
    CU_ASSERT_EQUAL(ag->type->dtype, PLD_DT_FP32);
    CU_ASSERT(dim_is_sym(ag->type, 0, "NR"));
    CU_ASSERT(dim_is(ag->type, 1, 64));
    /* 17 reduce_scatter, 18 all_to_all */
    CU_ASSERT_EQUAL(value_at(p, "gather_scatter", 17)->op, PLD_OPID_PLD_REDUCE_SCATTER);
    CU_ASSERT_EQUAL(value_at(p, "gather_scatter", 17)->type->kind, PLD_TY_DTENSOR);
    CU_ASSERT_EQUAL(value_at(p, "gather_scatter", 18)->op, PLD_OPID_PLD_ALL_TO_ALL);
    CU_ASSERT(dim_is(value_at(p, "gather_scatter", 18)->type, 1, 64));
    /* 32: acc = pld.tensor.allreduce(acc, sig, ...) -> [1, 64] FP32 DistributedTensor */
    pld_expr_t *ar = value_at(p, "reduce_and_share", 32);
    CU_ASSERT_EQUAL(ar->op, PLD_OPID_PLD_ALLREDUCE);
    ASSERT_TYPE2(ar->type, PLD_TY_DTENSOR, PLD_DT_FP32, 1, 64);
    /* 34 barrier -> the signal; 38 broadcast -> the target */
    pld_expr_t *bar = value_at(p, "reduce_and_share", 34);
    CU_ASSERT_EQUAL(bar->op, PLD_OPID_PLD_BARRIER);
    CU_ASSERT_EQUAL(bar->type->kind, PLD_TY_DTENSOR);
    CU_ASSERT_EQUAL(bar->type->dtype, PLD_DT_INT32);
    pld_expr_t *bc = value_at(p, "reduce_and_share", 38);
    CU_ASSERT_EQUAL(bc->op, PLD_OPID_PLD_BROADCAST);
    ASSERT_TYPE2(bc->type, PLD_TY_DTENSOR, PLD_DT_FP32, 1, 64);
    pld_program_destroy(p);

    /* HOST rail (08): allreduce with and without a signal, allgather */
    p = check_example("08_host_collectives.printed.pld", 4);
    if (!p)
        return;
    ASSERT_TYPE2(value_at(p, "host_orch", 60)->type, PLD_TY_DTENSOR, PLD_DT_FP32, 1, 256);
    ASSERT_TYPE2(value_at(p, "host_orch", 61)->type, PLD_TY_DTENSOR, PLD_DT_FP32, 1, 256);
    pld_expr_t *hag = value_at(p, "host_orch", 70);
    CU_ASSERT_EQUAL(hag->op, PLD_OPID_PLD_ALLGATHER);
    CU_ASSERT_EQUAL(hag->type->kind, PLD_TY_DTENSOR);
    CU_ASSERT_EQUAL(hag->type->rank, 2);
    CU_ASSERT(dim_is(hag->type, 1, 256));
    pld_program_destroy(p);
}

/* ------------------------------------------------------------ ops and binding */

static void test_check_unified_names_pick_op_by_operand(void)
{
    char *src = program3("        t = pl.load(x, [0, 0], [1, SIZE])\n"        /* 16 */
                         "        a = pl.add(t, t)\n"                          /* 17 */
                         "        b = pl.add(t, 1.0)\n"                        /* 18 */
                         "        c = pl.mul(a, b)\n"                          /* 19 */
                         "        k = pl.tile.get_block_idx()\n"               /* 20 */
                         "        d = pl.mul(c, pl.cast(k, pl.FP32))\n"        /* 21 */
                         "        e = pl.exp(d)\n"                             /* 22 */
                         "        f = pl.maximum(e, 0.0)\n"                    /* 23 */
                         "        y = pl.store(f, [0, 0], y)\n",               /* 24 */
                         "        u = pl.add(x, x)\n"                          /* chip */
                         "        v = pl.add(u, 2.0)\n"
                         "        w = pl.exp(v)\n",
                         "");
    pld_status_t st;
    pld_program_t *p = check_src("unified.pld", src, 0, &st);
    if (st != PLD_OK)
        dump_diags(p);
    CU_ASSERT_EQUAL_FATAL(st, PLD_OK);
    CU_ASSERT_EQUAL(value_at(p, "kern", 16)->op, PLD_OPID_TILE_LOAD); /* plain alias */
    CU_ASSERT_EQUAL(value_at(p, "kern", 17)->op, PLD_OPID_TILE_ADD);
    CU_ASSERT_EQUAL(value_at(p, "kern", 18)->op, PLD_OPID_TILE_ADDS);
    CU_ASSERT_EQUAL(value_at(p, "kern", 19)->op, PLD_OPID_TILE_MUL);
    CU_ASSERT_EQUAL(value_at(p, "kern", 21)->op, PLD_OPID_TILE_MULS);
    CU_ASSERT_EQUAL(value_at(p, "kern", 21)->u.call.args[1].value->op, PLD_OPID_PL_CAST_SCALAR);
    CU_ASSERT_EQUAL(value_at(p, "kern", 22)->op, PLD_OPID_TILE_EXP);
    CU_ASSERT_EQUAL(value_at(p, "kern", 23)->op, PLD_OPID_TILE_MAXIMUMS);
    CU_ASSERT_EQUAL(value_at(p, "kern", 24)->op, PLD_OPID_TILE_STORE);
    ASSERT_TYPE2(value_at(p, "kern", 18)->type, PLD_TY_TILE, PLD_DT_FP32, 1, 64);
    /* chip body starts 8 lines after the kernel's `return y` (line 25) */
    CU_ASSERT_EQUAL(value_at(p, "chip", 33)->op, PLD_OPID_TENSOR_ADD);
    CU_ASSERT_EQUAL(value_at(p, "chip", 34)->op, PLD_OPID_TENSOR_ADDS);
    CU_ASSERT_EQUAL(value_at(p, "chip", 35)->op, PLD_OPID_TENSOR_EXP);
    ASSERT_TYPE2(value_at(p, "chip", 34)->type, PLD_TY_TENSOR, PLD_DT_FP32, 1, 64);
    /* the unified table itself */
    const pld_unified_t *u = pld_op_unified("pl.add");
    CU_ASSERT_PTR_NOT_NULL_FATAL(u);
    CU_ASSERT_EQUAL(u->tile_tile, PLD_OPID_TILE_ADD);
    CU_ASSERT_EQUAL(u->tile_scalar, PLD_OPID_TILE_ADDS);
    CU_ASSERT_EQUAL(u->tensor_tensor, PLD_OPID_TENSOR_ADD);
    CU_ASSERT_EQUAL(u->tensor_scalar, PLD_OPID_TENSOR_ADDS);
    CU_ASSERT_EQUAL(u->scalar, -1);
    /* PyPTO's pl.tile.add takes a tile or a scalar rhs (tile_ops.py add: "A
     * scalar rhs canonicalizes to tile.adds"); no tensor forms */
    const pld_unified_t *ta = pld_op_unified("pl.tile.add");
    CU_ASSERT_PTR_NOT_NULL_FATAL(ta);
    CU_ASSERT_EQUAL(ta->tile_tile, PLD_OPID_TILE_ADD);
    CU_ASSERT_EQUAL(ta->tile_scalar, PLD_OPID_TILE_ADDS);
    CU_ASSERT_EQUAL(ta->tensor_tensor, -1);
    CU_ASSERT_PTR_NULL(pld_op_unified("pl.tile.exp"));
    pld_program_destroy(p);
    free(src);
}

static void test_check_bound_arguments(void)
{
    pld_program_t *p = check_example("04_neighbor_mail.printed.pld", 0);
    if (!p)
        return;
    /* 15: pl.tile.load(inp, [0, 0], [4, 64], [4, 64], target_memory=pl.Mem.Vec)
     * params: tensor, offsets, shapes, valid_shape; target_memory, clamp */
    pld_expr_t *e = value_at(p, "mail", 15);
    const pld_op_info_t *li = pld_op_info(PLD_OPID_TILE_LOAD);
    CU_ASSERT_EQUAL_FATAL(li->nparams, 6);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e->bound);
    for (int i = 0; i < 4; i++)
        CU_ASSERT_PTR_EQUAL(e->bound[i], e->u.call.args[i].value); /* positional */
    CU_ASSERT_EQUAL(e->bound[0]->kind, PLD_EX_NAME);
    CU_ASSERT_STRING_EQUAL(e->bound[0]->u.name, "inp");
    CU_ASSERT_EQUAL(pld_op_param_index(li, "target_memory"), 4);
    CU_ASSERT_PTR_EQUAL(e->bound[4], e->u.call.args[4].value); /* keyword */
    CU_ASSERT_EQUAL(e->bound[4]->kind, PLD_EX_ATTR);
    CU_ASSERT_PTR_NULL(e->bound[5]); /* clamp: default applies */
    /* 17: pld.tile.remote_store(mine, box, right, [0, 0]): atomic absent */
    e = value_at(p, "mail", 17);
    CU_ASSERT_EQUAL(e->op, PLD_OPID_PLD_TILE_REMOTE_STORE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e->bound);
    CU_ASSERT_STRING_EQUAL(e->bound[1]->u.name, "box");
    CU_ASSERT_PTR_NULL(e->bound[4]);
    /* 21: ... atomic=pl.AtomicType.Add */
    e = value_at(p, "mail", 21);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e->bound);
    CU_ASSERT_PTR_NOT_NULL(e->bound[4]);
    CU_ASSERT_PTR_EQUAL(e->bound[4], e->u.call.args[4].value);
    /* 18: pld.system.notify(flags, right, [me, 0], 1, op=1): op is keyword-only */
    e = value_at(p, "mail", 18);
    CU_ASSERT_EQUAL(e->op, PLD_OPID_PLD_NOTIFY);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e->bound);
    CU_ASSERT_EQUAL(e->bound[3]->kind, PLD_EX_INT);
    CU_ASSERT_EQUAL(e->bound[4]->kind, PLD_EX_INT);
    CU_ASSERT_EQUAL(e->bound[4]->u.ival, 1);
    CU_ASSERT(pld_op_info(PLD_OPID_PLD_NOTIFY)->params[4].kwonly);
    /* 23: pld.system.wait(flags, [left, 0], 1, cmp=0) */
    e = value_at(p, "mail", 23);
    CU_ASSERT_EQUAL(e->op, PLD_OPID_PLD_WAIT);
    CU_ASSERT_EQUAL(e->bound[3]->u.ival, 0);
    /* dispatch calls are not op calls: no binding, aux = callee index */
    e = value_at(p, "chip", 32);
    CU_ASSERT_PTR_NULL(e->bound);
    CU_ASSERT_EQUAL(e->op, -1);
    pld_program_destroy(p);

    /* keywords out of order bind by name */
    char *src = program3("        t = pl.load(shapes=[1, SIZE], offsets=[0, 0], tensor=x)\n"
                         "        y = pl.store(t, [0, 0], y)\n",
                         "", "");
    pld_status_t st;
    p = check_src("kw.pld", src, 0, &st);
    CU_ASSERT_EQUAL_FATAL(st, PLD_OK);
    e = value_at(p, "kern", 16);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e->bound);
    CU_ASSERT_STRING_EQUAL(e->bound[0]->u.name, "x");
    CU_ASSERT_EQUAL(e->bound[1]->kind, PLD_EX_LIST);
    CU_ASSERT_EQUAL(e->bound[1]->u.seq.n, 2);
    CU_ASSERT_EQUAL(e->bound[2]->u.seq.n, 2);
    CU_ASSERT_PTR_NULL(e->bound[3]);
    ASSERT_TYPE2(e->type, PLD_TY_TILE, PLD_DT_FP32, 1, 64);
    pld_program_destroy(p);
    free(src);
}

static void test_check_dispatch_targets(void)
{
    pld_program_t *p = check_example("04_neighbor_mail.printed.pld", 0);
    if (!p)
        return;
    /* 32: return self.mail(...) */
    pld_expr_t *e = value_at(p, "chip", 32);
    CU_ASSERT_EQUAL(e->aux, func_index(p, "mail"));
    ASSERT_TYPE2(e->type, PLD_TY_TENSOR, PLD_DT_FP32, 4, 64);
    /* 44: self.chip(..., device=r) */
    e = value_at(p, "host_orch", 44);
    CU_ASSERT_EQUAL(e->aux, func_index(p, "chip"));
    CU_ASSERT_EQUAL(e->u.call.args[0].value->op, PLD_OPID_TENSOR_SLICE);
    /* the slice drops dim 0: [1, 4, 64] -> [4, 64] */
    ASSERT_TYPE2(e->u.call.args[0].value->type, PLD_TY_TENSOR, PLD_DT_FP32, 4, 64);
    pld_program_destroy(p);

    /* a function returning a tuple (06 chip) */
    p = check_example("06_incore_collectives.printed.pld", 0);
    if (!p)
        return;
    e = value_at(p, "host_orch", 62);
    CU_ASSERT_EQUAL(e->aux, func_index(p, "chip"));
    CU_ASSERT_EQUAL_FATAL(e->type->kind, PLD_TY_TUPLE);
    CU_ASSERT_EQUAL_FATAL(e->type->nelems, 2);
    ASSERT_TYPE2(e->type->elems[0], PLD_TY_TENSOR, PLD_DT_FP32, 1, 64);
    ASSERT_TYPE2(e->type->elems[1], PLD_TY_TENSOR, PLD_DT_FP32, 3, 64);
    pld_program_destroy(p);
}

/* ------------------------------------------------------------ slots */

static void test_check_slots(void)
{
    pld_program_t *p = check_example("04_neighbor_mail.printed.pld", 0);
    if (!p)
        return;
    pld_func_t *mail = func(p, "mail");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mail);
    /* params first, in order */
    for (int i = 0; i < mail->nparams; i++)
        CU_ASSERT_EQUAL(mail->params[i].slot, i);
    /* 6 params + ctx me n right left mine p from_left pooled both */
    CU_ASSERT_EQUAL(mail->nslots, 16);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mail->slot_names);
    CU_ASSERT_STRING_EQUAL(mail->slot_names[0], "inp");
    CU_ASSERT_STRING_EQUAL(mail->slot_names[6], "ctx");
    /* a use of `me` (13) refers to me's slot; the definition (11) too */
    pld_stmt_t *def = stmt_at(p, "mail", 11);
    int me_slot = def->u.assign.target->slot;
    CU_ASSERT(me_slot >= mail->nparams && me_slot < mail->nslots);
    CU_ASSERT_STRING_EQUAL(mail->slot_names[me_slot], "me");
    pld_expr_t *use = find_name(value_at(p, "mail", 13), "me");
    CU_ASSERT_PTR_NOT_NULL_FATAL(use);
    CU_ASSERT_EQUAL(use->slot, me_slot);
    /* the loop variable p (19) is a local; `out` reassigned (28) keeps its parameter slot */
    pld_stmt_t *loop = stmt_at(p, "mail", 19);
    CU_ASSERT(loop->u.for_.target->slot >= mail->nparams);
    CU_ASSERT_EQUAL(stmt_at(p, "mail", 28)->u.assign.target->slot, 1);
    /* every slot name is unique */
    for (int i = 0; i < mail->nslots; i++)
        for (int j = 0; j < i; j++)
            CU_ASSERT(strcmp(mail->slot_names[i], mail->slot_names[j]) != 0);
    /* host_orch: inputs, outputs, 4 buffers, r, box, pool, flags, hits */
    pld_func_t *host = func(p, "host_orch");
    CU_ASSERT_EQUAL(host->nslots, 11);
    /* a module constant / dynamic dim is not a local: NR in the flags window shape */
    pld_expr_t *nr = find_name(value_at(p, "host_orch", 42), "NR");
    CU_ASSERT_PTR_NULL(nr); /* spelled pld.system.world_size() there */
    pld_program_destroy(p);

    char *src = program3(KERN_LOAD_STORE, "", "        n = NR\n");
    pld_status_t st;
    p = check_src("slots.pld", src, 0, &st);
    CU_ASSERT_EQUAL_FATAL(st, PLD_OK);
    pld_func_t *h = func(p, "host_orch");
    CU_ASSERT_FATAL(h->body.n > 0);
    pld_stmt_t *s = h->body.stmts[0]; /* n = NR */
    CU_ASSERT_EQUAL_FATAL(s->kind, PLD_ST_ASSIGN);
    CU_ASSERT_EQUAL(s->u.assign.value->kind, PLD_EX_NAME);
    CU_ASSERT_EQUAL(s->u.assign.value->slot, -1); /* NR: module-level */
    CU_ASSERT(s->u.assign.target->slot >= 2);
    pld_program_destroy(p);
    free(src);
}

/* ------------------------------------------------------------ levels */

static void test_check_levels_from_decorators(void)
{
    pld_program_t *p = check_example("04_neighbor_mail.printed.pld", 0);
    if (!p)
        return;
    pld_func_t *mail = func(p, "mail"), *chip = func(p, "chip"), *host = func(p, "host_orch");
    CU_ASSERT_EQUAL(mail->ftype, PLD_FT_INCORE);
    CU_ASSERT_EQUAL(mail->level, PLD_LV_CHIP_DIE);
    CU_ASSERT_EQUAL(mail->role, PLD_ROLE_SUBWORKER);
    CU_ASSERT_EQUAL(chip->ftype, PLD_FT_ORCHESTRATION);
    CU_ASSERT_EQUAL(chip->level, PLD_LV_CHIP);
    CU_ASSERT_EQUAL(chip->role, PLD_ROLE_ORCHESTRATOR);
    CU_ASSERT_EQUAL(host->ftype, PLD_FT_OPAQUE);
    CU_ASSERT_EQUAL(host->level, PLD_LV_HOST);
    CU_ASSERT_EQUAL(host->role, PLD_ROLE_ORCHESTRATOR);
    pld_program_destroy(p);

    /* level and role derived from type= alone */
    char *src = program3(KERN_LOAD_STORE, "", "");
    pld_status_t st;
    p = check_src("levels.pld", src, 0, &st);
    CU_ASSERT_EQUAL_FATAL(st, PLD_OK);
    CU_ASSERT_EQUAL(func(p, "kern")->ftype, PLD_FT_INCORE);
    CU_ASSERT_EQUAL(func(p, "kern")->level, PLD_LV_CHIP_DIE);
    CU_ASSERT_EQUAL(func(p, "kern")->role, PLD_ROLE_SUBWORKER);
    CU_ASSERT_EQUAL(func(p, "chip")->level, PLD_LV_CHIP);
    CU_ASSERT_EQUAL(func(p, "chip")->role, PLD_ROLE_ORCHESTRATOR);
    pld_program_destroy(p);
    free(src);

    /* an AIV kernel; a level alias */
    static const char *const aiv =
        "import pypto.language as pl\n"
        "\n"
        "\n"
        "@pl.program\n"
        "class A:\n"
        "    @pl.function(type=pl.FunctionType.AIV)\n"
        "    def k(self, x: pl.Tensor[[1, 64], pl.FP32]):\n"
        "        t = pl.load(x, [0, 0], [1, 64])\n"
        "\n"
        "    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.CHIP)\n"
        "    def c(self, x: pl.Tensor[[1, 64], pl.FP32]):\n"
        "        self.k(x)\n";
    p = check_src("aiv.pld", aiv, 0, &st);
    if (st != PLD_OK)
        dump_diags(p);
    CU_ASSERT_EQUAL_FATAL(st, PLD_OK);
    CU_ASSERT_EQUAL(func(p, "k")->ftype, PLD_FT_AIV);
    CU_ASSERT_EQUAL(func(p, "k")->level, PLD_LV_AIV);
    CU_ASSERT_EQUAL(func(p, "k")->role, PLD_ROLE_SUBWORKER);
    pld_program_destroy(p);
}

/* ------------------------------------------------------------ opts */

/* Owned copy of s with the first `from` replaced by `to` (asserts it is there). */
static char *replace_once(char *s, const char *from, const char *to)
{
    char *at = strstr(s, from);
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    size_t n = strlen(s) - strlen(from) + strlen(to) + 1, head = (size_t)(at - s);
    char *r = malloc(n);
    memcpy(r, s, head);
    snprintf(r + head, n - head, "%s%s", to, at + strlen(from));
    free(s);
    return r;
}

/* HOST barrier on a window with fewer rows than ranks: a rule that needs P.
 * The dispatches receive the signal (§2.15 coverage); the barrier is at 37:15. */
static char *barrier_program(void)
{
    char *s = program3(KERN_LOAD_STORE, "",
                       "        sig_buf = pld.alloc_window_buffer([2], dtype=pl.INT32)\n"
                       "        sig = pld.window(sig_buf, [2], dtype=pl.INT32)\n"
                       "        sig = pld.tensor.barrier(sig)\n");
    s = replace_once(s, "    def chip(\n        self,\n",
                     "    def chip(\n        self,\n        sig: pld.DistributedTensor[[2], pl.INT32],\n");
    return replace_once(s, "self.chip(xs[r], ys[r], device=r)", "self.chip(sig, xs[r], ys[r], device=r)");
}

static void test_check_rank_dependent_rule(void)
{
    char *src = barrier_program();
    pld_status_t st;
    /* P unknown: the rule cannot fire */
    pld_program_t *p = check_src("p.pld", src, 0, &st);
    if (st != PLD_OK)
        dump_diags(p);
    CU_ASSERT_EQUAL(st, PLD_OK);
    CU_ASSERT_EQUAL(p->diags.n_errors, 0);
    pld_program_destroy(p);
    /* P = 2 fits the window */
    p = check_src("p.pld", src, 2, &st);
    CU_ASSERT_EQUAL(st, PLD_OK);
    pld_program_destroy(p);
    /* P = 4 does not */
    p = check_src("p.pld", src, 4, &st);
    CU_ASSERT_EQUAL(st, PLD_E_TYPE);
    const pld_diag_t *d = first_error(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_PTR_NOT_NULL(strstr(d->msg, "pld.tensor.barrier"));
    CU_ASSERT_PTR_NOT_NULL(strstr(d->msg, "(4)"));
    CU_ASSERT_EQUAL(d->span.line, 37);
    CU_ASSERT_EQUAL(d->span.col, 15);
    pld_program_destroy(p);
    free(src);

    /* device= range: only with P known */
    src = program3(KERN_LOAD_STORE, "", "        self.chip(xs[0], ys[0], device=3)\n");
    p = check_src("dev.pld", src, 0, &st);
    CU_ASSERT_EQUAL(st, PLD_OK);
    pld_program_destroy(p);
    p = check_src("dev.pld", src, 4, &st);
    CU_ASSERT_EQUAL(st, PLD_OK);
    pld_program_destroy(p);
    p = check_src("dev.pld", src, 3, &st);
    CU_ASSERT_EQUAL(st, PLD_E_TYPE);
    CU_ASSERT(has_error_containing(p, "device=3 is outside the rank range [0, 3)"));
    pld_program_destroy(p);
    free(src);
}

static void test_check_recheck_with_other_opts(void)
{
    char *src = barrier_program();
    pld_program_t *p = pld_program_create("re.pld", src, strlen(src));
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL_FATAL(pld_parse_program(p), PLD_OK);
    pld_check_opts_t o;
    memset(&o, 0, sizeof o);
    /* 1: P unknown */
    CU_ASSERT_EQUAL(pld_check_program(p, &o), PLD_OK);
    CU_ASSERT_EQUAL(p->diags.n_errors, 0);
    pld_expr_t *bar = value_at(p, "host_orch", 37);
    CU_ASSERT_EQUAL(bar->op, PLD_OPID_PLD_BARRIER);
    /* 2: P = 4 reports the error */
    o.ranks = 4;
    CU_ASSERT_EQUAL(pld_check_program(p, &o), PLD_E_TYPE);
    int n4 = p->diags.n_errors;
    CU_ASSERT(n4 >= 1);
    /* 3: P = 2 is fine again (earlier diagnostics stay in the list; the status
     * counts only this run's errors) and the sema fields are rewritten */
    o.ranks = 2;
    CU_ASSERT_EQUAL(pld_check_program(p, &o), PLD_OK);
    CU_ASSERT_EQUAL(p->diags.n_errors, n4);
    CU_ASSERT_EQUAL(bar->op, PLD_OPID_PLD_BARRIER);
    CU_ASSERT_EQUAL(bar->type->kind, PLD_TY_DTENSOR);
    CU_ASSERT_EQUAL(func(p, "kern")->level, PLD_LV_CHIP_DIE);
    CU_ASSERT_EQUAL(func(p, "kern")->nslots, 3);
    /* 4: the same opts report the same errors again */
    o.ranks = 4;
    CU_ASSERT_EQUAL(pld_check_program(p, &o), PLD_E_TYPE);
    CU_ASSERT_EQUAL(p->diags.n_errors, 2 * n4);
    /* NULL opts = all unknown */
    CU_ASSERT_EQUAL(pld_check_program(p, NULL), PLD_OK);
    pld_program_destroy(p);
    free(src);
}

static void test_check_syntax_error_status(void)
{
    static const char *const src = "import pypto.language as pl\n"
                                   "\n"
                                   "@pl.program\n"
                                   "class B:\n"
                                   "    @pl.function(type=pl.FunctionType.InCore)\n"
                                   "    def k(self, x: pl.Tensor[[1, 64], pl.FP32]):\n"
                                   "        t = pl.load(x, [0, 0], [1, 64]\n";
    pld_status_t st;
    pld_program_t *p = check_src("syn.pld", src, 0, &st);
    CU_ASSERT_EQUAL(st, PLD_E_SYNTAX);
    CU_ASSERT_FALSE(p->parsed_ok);
    /* checking an unparsed program reports the syntax status again, adds nothing */
    int n = p->diags.n_errors;
    CU_ASSERT_EQUAL(pld_check_program(p, NULL), PLD_E_SYNTAX);
    CU_ASSERT_EQUAL(p->diags.n_errors, n);
    pld_program_destroy(p);
    /* pld_check_text with st == NULL is allowed */
    p = pld_check_text("syn.pld", src, strlen(src), NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL(p);
    pld_program_destroy(p);
}

/* ------------------------------------------------------------ rendering */

static void test_check_diag_render_format(void)
{
    char *src = program3("        t = pl.load(x, [0, 0], [1, SIZE])\n"
                         "        s = pl.tile.rowsum(t)\n"
                         "        y = pl.store(t, [0, 0], y)\n",
                         "", "");
    pld_status_t st;
    pld_program_t *p = check_src("dir/r.pld", src, 0, &st);
    CU_ASSERT_EQUAL(st, PLD_E_TYPE);
    CU_ASSERT_EQUAL(p->diags.n_errors, 1);
    pld_buf_t b;
    pld_buf_init(&b);
    pld_diag_render(&p->diags, NULL, &b);
    static const char *const want =
        "dir/r.pld:17:13: error: unknown op 'pl.tile.rowsum'\n"
        "   17 |         s = pl.tile.rowsum(t)\n"
        "      |             ^~~~~~~~~~~~~~~~~\n"
        "dir/r.pld:17:13: note: did you mean 'pl.tile.row_sum'?\n"
        "   17 |         s = pl.tile.rowsum(t)\n"
        "      |             ^~~~~~~~~~~~~~~~~\n";
    if (strcmp(pld_buf_str(&b), want) != 0)
        fprintf(stderr, "\nrendered:\n%s\nwanted:\n%s", pld_buf_str(&b), want);
    CU_ASSERT_STRING_EQUAL(pld_buf_str(&b), want);
    /* with a prefix, every line carries it */
    pld_buf_reset(&b);
    pld_diag_render(&p->diags, "[rank 1/4] ", &b);
    const char *s = pld_buf_str(&b);
    int lines = 0, prefixed = 0;
    for (const char *l = s; *l; lines++) {
        prefixed += strncmp(l, "[rank 1/4] ", 11) == 0;
        const char *nl = strchr(l, '\n');
        l = nl ? nl + 1 : l + strlen(l);
    }
    CU_ASSERT_EQUAL(lines, 6);
    CU_ASSERT_EQUAL(prefixed, 6);
    pld_buf_fini(&b);
    pld_program_destroy(p);
    free(src);
}

static void test_check_diag_render_note_elsewhere_and_tabs(void)
{
    /* a note pointing at another line (the first definition) */
    char *src = program3(KERN_LOAD_STORE, "",
                         "        buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)\n"
                         "        buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)\n");
    pld_status_t st;
    pld_program_t *p = check_src("n.pld", src, 0, &st);
    CU_ASSERT_EQUAL(st, PLD_E_TYPE);
    pld_buf_t b;
    pld_buf_init(&b);
    pld_diag_render(&p->diags, NULL, &b);
    static const char *const want =
        "n.pld:35:9: error: window buffer name 'buf' is already declared in this program\n"
        "   35 |         buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)\n"
        "      |         ^~~\n"
        "n.pld:34:9: note: first declared here\n"
        "   34 |         buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.FP32)\n"
        "      |         ^~~\n";
    if (strcmp(pld_buf_str(&b), want) != 0)
        fprintf(stderr, "\nrendered:\n%s\nwanted:\n%s", pld_buf_str(&b), want);
    CU_ASSERT_STRING_EQUAL(pld_buf_str(&b), want);
    pld_program_destroy(p);
    free(src);

    /* a tab before the error: the column counts to the next multiple of 8 and
     * the excerpt shows spaces */
    src = program3("        t = pl.load(x, [0, 0], [1, SIZE])\n"
                   "        y = pl.store(t,\tqqqq, y)\n",
                   "", "");
    p = check_src("tab.pld", src, 0, &st);
    CU_ASSERT_EQUAL(st, PLD_E_TYPE);
    const pld_diag_t *d = first_error(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_EQUAL(d->span.line, 17);
    CU_ASSERT_EQUAL(d->span.col, 25);
    pld_buf_reset(&b);
    pld_diag_render_one(&p->diags, d, NULL, &b);
    static const char *const want_tab =
        "tab.pld:17:25: error: name 'qqqq' is not defined\n"
        "   17 |         y = pl.store(t, qqqq, y)\n"
        "      |                         ^~~~\n";
    if (strcmp(pld_buf_str(&b), want_tab) != 0)
        fprintf(stderr, "\nrendered:\n%s\nwanted:\n%s", pld_buf_str(&b), want_tab);
    CU_ASSERT_STRING_EQUAL(pld_buf_str(&b), want_tab);
    pld_buf_fini(&b);
    pld_program_destroy(p);
    free(src);
}

/* ------------------------------------------------------------ OOM */

/* The OOM loops: N = 0, 1, 2, ... with the Nth allocation (counted from the
 * start of the phase under test) failing, until a run sees no refused
 * allocation. Every failing run must end cleanly with PLD_E_NOMEM or an error
 * status (never PLD_OK, never a crash; ASan reports leaks); the final run must
 * give `want`. `whole` = 1 runs pld_check_text (lexer + parser + checker);
 * whole = 0 parses without failures and fails only inside pld_check_program.
 * Returns the number of runs. */
static long oom_loop(const char *name, const char *src, int ranks, pld_status_t want, int whole)
{
    pld_check_opts_t o;
    memset(&o, 0, sizeof o);
    o.ranks = ranks;
    long n;
    for (n = 0; n < 100000; n++) {
        pld_status_t st = PLD_E_USAGE;
        pld_program_t *p = NULL;
        if (whole) {
            pld_mem_fail_after(n);
            p = pld_check_text(name, src, strlen(src), &o, &st);
        } else {
            p = pld_program_create(name, src, strlen(src));
            CU_ASSERT_PTR_NOT_NULL_FATAL(p);
            CU_ASSERT_EQUAL_FATAL(pld_parse_program(p), PLD_OK);
            pld_mem_fail_after(n);
            st = pld_check_program(p, &o);
        }
        long refused = pld_mem_failures();
        pld_mem_fail_after(-1);
        if (refused == 0) {
            CU_ASSERT_PTR_NOT_NULL(p);
            if (st != want)
                fprintf(stderr, "\n%s: without OOM the status is '%s', expected '%s'\n", name, pld_status_name(st),
                        pld_status_name(want));
            CU_ASSERT_EQUAL(st, want);
            pld_program_destroy(p);
            break;
        }
        int clean = st == PLD_E_NOMEM || st == PLD_E_SYNTAX || st == PLD_E_TYPE;
        if (!clean)
            fprintf(stderr, "\n%s: allocation %ld refused but the status is '%s'\n", name, n, pld_status_name(st));
        CU_ASSERT(clean);
        if (!p)
            CU_ASSERT_EQUAL(st, PLD_E_NOMEM);
        pld_program_destroy(p);
    }
    CU_ASSERT(n < 100000);
    return n;
}

/* An erroneous program: the diagnostics (with notes) need allocations too. */
static char *bad_program(void)
{
    return program3("        t = pl.load(x, [0, 0], [1, SIZE])\n"
                    "        s = pl.tile.rowsum(t)\n"
                    "        y = pl.store(tiel, [0, 0], y)\n",
                    "", "");
}

/* Copy of src without its `import` lines (the checker then assumes the
 * aliases pl / pld). Avoids the parser's OOM crash in parse_import, see
 * test_check_oom_loop_parser (KNOWN BUG). */
static char *without_imports(const char *src)
{
    size_t n = strlen(src);
    char *out = malloc(n + 1), *o = out;
    for (const char *l = src; *l;) {
        const char *nl = strchr(l, '\n');
        size_t len = nl ? (size_t)(nl - l) + 1 : strlen(l);
        if (strncmp(l, "import ", 7) != 0 && strncmp(l, "from ", 5) != 0) {
            memcpy(o, l, len);
            o += len;
        } else {
            *o++ = '\n'; /* keep the line numbers */
        }
        l += len;
    }
    *o = '\0';
    return out;
}

static void test_check_oom_loop_check_phase(void)
{
    static const char *const names[] = {"04_neighbor_mail.printed.pld", "06_incore_collectives.printed.pld",
                                        "08_host_collectives.printed.pld"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t len;
        char *src = example(names[i], &len);
        if (!src)
            continue;
        CU_ASSERT(oom_loop(names[i], src, 4, PLD_OK, 0) > 0);
        free(src);
    }
    char *src = bad_program();
    oom_loop("bad.pld", src, 0, PLD_E_TYPE, 0);
    free(src);
}

static void test_check_oom_loop_check_text(void)
{
    /* 04 and 08 hold no `return a, b` (the other parser OOM crash) */
    static const char *const names[] = {"04_neighbor_mail.printed.pld", "08_host_collectives.printed.pld"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t len;
        char *src = example(names[i], &len);
        if (!src)
            continue;
        char *text = without_imports(src);
        CU_ASSERT(oom_loop(names[i], text, 4, PLD_OK, 1) > 10);
        free(text);
        free(src);
    }
    char *src = bad_program();
    char *text = without_imports(src);
    oom_loop("bad.pld", text, 0, PLD_E_TYPE, 1);
    free(text);
    free(src);
}

/* ------------------------------------------------------------ known bugs */

/* Regression: pl.cast is both the canonical name of the scalar cast
 * (PLD_OPID_PL_CAST_SCALAR) and a unified name; on a tile it must dispatch to
 * pl.tile.cast, not type the result as a scalar. */
static void test_check_unified_cast_on_tile(void)
{
    char *src = program3("        t = pl.load(x, [0, 0], [1, SIZE])\n"
                         "        h = pl.cast(t, pl.FP16)\n"
                         "        g = pl.cast(h, pl.FP32)\n"
                         "        y = pl.store(g, [0, 0], y)\n",
                         "", "");
    pld_status_t st;
    pld_program_t *p = check_src("cast.pld", src, 0, &st);
    if (st != PLD_OK)
        dump_diags(p);
    CU_ASSERT_EQUAL(st, PLD_OK);
    pld_expr_t *e = value_at(p, "kern", 17);
    CU_ASSERT_EQUAL(e->op, PLD_OPID_TILE_CAST);
    ASSERT_TYPE2(e->type, PLD_TY_TILE, PLD_DT_FP16, 1, 64);
    pld_program_destroy(p);
    free(src);
}

/* Issue 9.1: every static size goes through pld_size.h; an overflowing shape
 * is a located error wherever it appears (kernel tile, reshape, HOST alloc). */
static void test_check_static_size_overflow(void)
{
    static const struct {
        const char *kern, *host, *msg;
        unsigned line;
    } cases[] = {
        {"        t = pl.tile.create([2**40, 2**40, 2**40], dtype=pl.FP32)\n", "",
         "pl.tile.create shape [1099511627776, 1099511627776, 1099511627776] of FP32 overflows int64", 16},
        {"        t = pl.load(x, [0, 0], [1, SIZE])\n        u = pl.reshape(t, [2**62, 4])\n", "",
         "shape [4611686018427387904, 4] of FP32 overflows int64", 17},
        {"", "        b = pld.alloc_window_buffer(2**62 * 4)\n", "size overflows int64", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *src = program3(cases[i].kern, "", cases[i].host);
        pld_status_t st;
        pld_program_t *p = check_src("size.pld", src, 0, &st);
        const pld_diag_t *d = first_error(p);
        CU_ASSERT_EQUAL(st, PLD_E_TYPE);
        CU_ASSERT_PTR_NOT_NULL_FATAL(d);
        if (!strstr(d->msg, cases[i].msg))
            dump_diags(p);
        CU_ASSERT_PTR_NOT_NULL(strstr(d->msg, cases[i].msg));
        if (cases[i].line)
            CU_ASSERT_EQUAL(d->span.line, cases[i].line);
        pld_program_destroy(p);
        free(src);
    }
    /* a remote_load tile at a run-time offset: the tile's own size */
    char *src = program3("        i = pl.tile.get_block_idx()\n"
                         "        t = pld.remote_load(w, 1, [i, i], [2**40, 2**40])\n", "", "");
    src = replace_once(src, "        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],\n",
                       "        y: pl.Out[pl.Tensor[[1, SIZE], pl.FP32]],\n"
                       "        w: pld.DistributedTensor[[1, SIZE], pl.FP32],\n");
    pld_status_t st;
    pld_program_t *p = check_src("rl.pld", src, 0, &st);
    CU_ASSERT_EQUAL(st, PLD_E_TYPE);
    if (!has_error_containing(p, "remote_load shape [1099511627776, 1099511627776] of FP32 overflows int64"))
        dump_diags(p);
    CU_ASSERT(has_error_containing(p, "remote_load shape [1099511627776, 1099511627776] of FP32 overflows int64"));
    pld_program_destroy(p);
    free(src);
    /* the type layer: -1 for a symbolic dim, -2 for an overflowing count */
    pld_dim_t dims[3] = {{PLD_DIM_CONST, INT64_C(1) << 40, NULL, NULL}, {PLD_DIM_CONST, INT64_C(1) << 40, NULL, NULL},
                         {PLD_DIM_CONST, 0, NULL, NULL}};
    pld_type_t t;
    memset(&t, 0, sizeof t);
    t.kind = PLD_TY_TENSOR;
    t.rank = 3;
    t.shape = dims;
    CU_ASSERT_EQUAL(pld_type_static_numel(&t), -2); /* a zero dim: the others must still fit */
    dims[0].v = 4;
    CU_ASSERT_EQUAL(pld_type_static_numel(&t), 0);
    dims[0].v = INT64_C(1) << 40;
    dims[2].v = INT64_C(1) << 40;
    CU_ASSERT_EQUAL(pld_type_static_numel(&t), -2);
    dims[2].v = -1;
    CU_ASSERT_EQUAL(pld_type_static_numel(&t), -2);
    dims[2].kind = PLD_DIM_SYM;
    CU_ASSERT_EQUAL(pld_type_static_numel(&t), -1);
}

/* Regression (parser under OOM): a NAME that could not be interned must not
 * reach parse_import as NULL, and `return a, b` must survive a failed item
 * vector allocation. Full programs with imports, every failure point. */
static void test_check_oom_loop_parser(void)
{
    static const char *const names[] = {"04_neighbor_mail.printed.pld", "06_incore_collectives.printed.pld",
                                        "08_host_collectives.printed.pld"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t len;
        char *src = example(names[i], &len);
        if (!src)
            continue;
        oom_loop(names[i], src, 4, PLD_OK, 1);
        free(src);
    }
}

static CU_TestInfo check_tests[] = {
    {"test_check_examples_pass", test_check_examples_pass},
    {"test_check_param_types", test_check_param_types},
    {"test_check_tile_load_type", test_check_tile_load_type},
    {"test_check_remote_load_type", test_check_remote_load_type},
    {"test_check_pld_value_types", test_check_pld_value_types},
    {"test_check_collective_result_types", test_check_collective_result_types},
    {"test_check_unified_names_pick_op_by_operand", test_check_unified_names_pick_op_by_operand},
    {"test_check_bound_arguments", test_check_bound_arguments},
    {"test_check_dispatch_targets", test_check_dispatch_targets},
    {"test_check_slots", test_check_slots},
    {"test_check_levels_from_decorators", test_check_levels_from_decorators},
    {"test_check_rank_dependent_rule", test_check_rank_dependent_rule},
    {"test_check_recheck_with_other_opts", test_check_recheck_with_other_opts},
    {"test_check_syntax_error_status", test_check_syntax_error_status},
    {"test_check_diag_render_format", test_check_diag_render_format},
    {"test_check_diag_render_note_elsewhere_and_tabs", test_check_diag_render_note_elsewhere_and_tabs},
    {"test_check_oom_loop_check_phase", test_check_oom_loop_check_phase},
    {"test_check_oom_loop_check_text", test_check_oom_loop_check_text},
    {"test_check_unified_cast_on_tile", test_check_unified_cast_on_tile},
    {"test_check_oom_loop_parser", test_check_oom_loop_parser},
    {"test_check_static_size_overflow", test_check_static_size_overflow},
    CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
    {"check", NULL, NULL, NULL, NULL, check_tests},
    CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv)
{
    return pld_test_main(argc, argv, suites);
}
