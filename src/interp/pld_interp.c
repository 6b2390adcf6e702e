/* pld_interp.c - the interpreter's entry: create/destroy (entry function,
 * module constants), entry parameters and input binding, the run (dispatches,
 * window setup and teardown) and output assembly. */
#include "pld_interp_int.h"
#include "pld_mem.h"
#include "pld_npy.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ single-process comm */

static pld_status_t comm_self_gather(void *ctx, const void *send, size_t bytes, void *recv)
{
    (void)ctx;
    if (recv)
        memcpy(recv, send, bytes);
    return PLD_OK;
}

static pld_status_t comm_self_max(void *ctx, int64_t in, int64_t *out)
{
    (void)ctx;
    *out = in;
    return PLD_OK;
}

const pld_comm_t *pld_comm_self(void)
{
    static const pld_comm_t self = {NULL, 0, 1, comm_self_gather, comm_self_max};
    return &self;
}

pld_status_t pld_interp_create(pld_program_t *p, const pld_interp_opts_t *opts, const pld_comm_t *comm,
                               pld_interp_t **out, char *err, size_t errn)
{
    *out = NULL;
    pld_interp_t *it = pld_mem_calloc(1, sizeof *it);
    if (!it)
        return PLD_E_NOMEM;
    if (opts)
        it->opts = *opts;
    it->prog = &it->prog_local;
    it->trace = it->opts.trace;
    it->comm = comm ? *comm : *pld_comm_self();
    it->walk = &pld_walker;
    it->p = p;
    it->where.file = p->file;
    it->where.block = -1;
    it->entry_index = -1;
    /* the block scheduler first: every evaluation checks the stack room it knows */
    if (pld_npu_sched_create(&it->sched) != PLD_OK) {
        pld_mem_free(it);
        return PLD_E_NOMEM;
    }
    it->stack_lo = pld_npu_stack_lo_ref(it->sched);
    it->step_limit = UINT64_MAX;
    /* entry */
    int nhost = 0, norch = 0, host = -1, orch = -1;
    for (int i = 0; i < p->nfuncs; i++) {
        int c = pld_check_func_ctx(p->funcs[i]);
        if (opts && opts->entry && strcmp(p->funcs[i]->name, opts->entry) == 0)
            it->entry_index = i;
        if (c == PLD_CTX_HOST)
            nhost++, host = i;
        if (c == PLD_CTX_CHIP)
            norch++, orch = i;
    }
    if (opts && opts->entry && it->entry_index < 0) {
        snprintf(err, errn, "the program has no function '%s' (--entry)", opts->entry);
        pld_npu_sched_destroy(it->sched);
        pld_mem_free(it);
        return PLD_E_USAGE;
    }
    if (it->entry_index < 0) {
        if (nhost == 1)
            it->entry_index = host;
        else if (nhost == 0 && norch == 1)
            it->entry_index = orch;
        else {
            snprintf(err, errn, nhost > 1 ? "the program has %d HOST orchestrators; choose one with --entry NAME"
                                          : "the program has no HOST orchestrator and %d orchestration functions; "
                                            "choose one with --entry NAME",
                     nhost > 1 ? nhost : norch);
            pld_npu_sched_destroy(it->sched);
            pld_mem_free(it);
            return PLD_E_USAGE;
        }
    }
    it->entry = p->funcs[it->entry_index];
    if (pld_check_func_ctx(it->entry) == PLD_CTX_KERNEL || pld_check_func_ctx(it->entry) == 0) {
        snprintf(err, errn, "'%s' cannot be the entry: run a HOST orchestrator or a CHIP orchestration function",
                 it->entry->name);
        pld_npu_sched_destroy(it->sched);
        pld_mem_free(it);
        return PLD_E_USAGE;
    }
    it->args = pld_mem_calloc((size_t)(it->entry->nparams + 1), sizeof *it->args);
    it->bound = pld_mem_calloc((size_t)(it->entry->nparams + 1), sizeof *it->bound);
    it->want_out = pld_mem_calloc((size_t)(it->entry->nparams + 1), sizeof *it->want_out);
    it->consts = pld_mem_calloc((size_t)(p->nconsts + 1), sizeof *it->consts);
    it->const_is_dyn = pld_mem_calloc((size_t)(p->nconsts + 1), sizeof *it->const_is_dyn);
    if (!it->args || !it->bound || !it->want_out || !it->consts || !it->const_is_dyn) {
        pld_interp_destroy(it);
        return PLD_E_NOMEM;
    }
    /* module constants */
    if (pld_const_index_build(it) != PLD_OK) {
        pld_interp_destroy(it);
        return PLD_E_NOMEM;
    }
    for (int i = 0; i < p->nconsts; i++) {
        const pld_expr_t *v = pld_const_value(&p->consts[i]);
        if (v->kind == PLD_EX_CALL && v->u.call.fn->kind == PLD_EX_ATTR && strcmp(v->u.call.fn->u.attr.attr, "dynamic") == 0) {
            it->const_is_dyn[i] = 1;
            continue;
        }
        if (v->kind == PLD_EX_LIST || v->kind == PLD_EX_TUPLE || v->kind == PLD_EX_STR ||
            pld_expr_dtype(it, v) != PLD_DT_NONE)
            continue;
        frame_t cf;
        pld_span_t none = {0, 0, 0, 0};
        pld_walk_frame_init(&cf, NULL, NULL, NULL, PLD_CTX_HOST, none);
        it->quiet = 1;
        pld_status_t st = pld_eval(it, &cf, v, &it->consts[i]);
        it->quiet = 0;
        if (st != PLD_OK)
            it->consts[i] = pld_v_none();
        if (it->consts[i].kind == PLD_V_INT && it->consts[i].dt != PLD_DT_BOOL)
            it->consts[i].dt = PLD_DT_INDEX;
    }
    /* kernel backend */
    if (opts && opts->hw) {
        it->hw = opts->hw;
    } else {
        pld_hw_registry_t reg;
        pld_hw_registry_init(&reg);
        pld_hw_register(&reg, pld_interp_sim_backend());
        pld_status_t st = pld_hw_open(&reg, "sim", NULL, it->comm.rank, it->comm.nranks, &it->hw, err, errn);
        if (st != PLD_OK) {
            pld_interp_destroy(it);
            return st;
        }
        it->own_hw = 1;
    }
    pld_status_t st = pld_debug_hooks_open(it, err, errn);
    if (st != PLD_OK) {
        pld_interp_destroy(it);
        return st;
    }
    st = pld_walk_load_kernels(it, err, errn);
    if (st != PLD_OK) {
        pld_interp_destroy(it);
        return st;
    }
    *out = it;
    return PLD_OK;
}

void pld_interp_destroy(pld_interp_t *it)
{
    if (!it)
        return;
    if (it->args)
        for (int i = 0; i < it->entry->nparams; i++)
            pld_value_release(&it->args[i]);
    if (it->consts)
        for (int i = 0; i < it->p->nconsts; i++)
            pld_value_release(&it->consts[i]);
    pld_task_fini(it);
    pld_dist_fini(it);
    pld_debug_hooks_close(it);
    pld_mem_free(it->wins);
    if (it->own_hw)
        pld_hw_close(it->hw);
    pld_crt_fini(it);
    pld_npu_sched_destroy(it->sched);
    pld_mem_free(it->args);
    pld_mem_free(it->bound);
    pld_mem_free(it->want_out);
    pld_mem_free(it->consts);
    pld_mem_free(it->const_is_dyn);
    pld_mem_free(it->const_names);
    pld_mem_free(it->const_index);
    pld_mem_free(it->dyn_names);
    pld_mem_free(it->dyn_vals);
    pld_coll_bufs_fini(&it->coll_bufs);
    pld_mem_free(it);
}

const pld_func_t *pld_interp_entry_func(const pld_interp_t *it)
{
    return it->entry;
}

int pld_interp_nparams(const pld_interp_t *it)
{
    return it->entry->nparams;
}

const pld_param_t *pld_interp_param(const pld_interp_t *it, int i)
{
    return &it->entry->params[i];
}

int pld_interp_param_index(const pld_interp_t *it, const char *name)
{
    for (int i = 0; i < it->entry->nparams; i++)
        if (strcmp(it->entry->params[i].name, name) == 0)
            return i;
    return -1;
}

int pld_interp_is_bound(const pld_interp_t *it, int i)
{
    return it->bound[i];
}

void pld_interp_want_output(pld_interp_t *it, int i)
{
    if (i >= 0 && i < it->entry->nparams)
        it->want_out[i] = 1;
}

int pld_interp_is_output(const pld_interp_t *it, int i)
{
    const pld_type_t *t = i >= 0 && i < it->entry->nparams ? it->entry->params[i].type : NULL;
    return t && (t->dir == PLD_DIR_OUT || t->dir == PLD_DIR_INOUT || it->want_out[i]);
}

void pld_interp_param_desc(const pld_interp_t *it, int i, char *buf, size_t n)
{
    const pld_type_t *t = it->entry->params[i].type;
    pld_buf_t b;
    pld_buf_init(&b);
    if (!t || (t->kind != PLD_TY_TENSOR && t->kind != PLD_TY_DTENSOR)) {
        pld_type_print(t ? t : &pld_type_unknown, &b);
    } else {
        pld_buf_putc(&b, '[');
        for (int d = 0; d < t->rank; d++) {
            int64_t v;
            if (d)
                pld_buf_puts(&b, ", ");
            if (t->shape[d].kind == PLD_DIM_CONST)
                pld_buf_printf(&b, "%lld", (long long)t->shape[d].v);
            else if (t->shape[d].kind == PLD_DIM_SYM && pld_dyn_get(it, t->shape[d].sym, &v))
                pld_buf_printf(&b, "%s=%lld", t->shape[d].sym, (long long)v);
            else
                pld_dim_print(&t->shape[d], &b);
        }
        pld_buf_printf(&b, "] %s", pld_dtype_name(t->dtype));
    }
    snprintf(buf, n, "%s", pld_buf_str(&b));
    pld_buf_fini(&b);
}

/* Evaluates a declared dim before the run (constants, bound dynamic dims,
 * pld.system.world_size() expressions) without recording errors. */
static int probe_dim(pld_interp_t *it, const pld_dim_t *d, int64_t *v)
{
    frame_t f;
    pld_span_t none = {0, 0, 0, 0};
    pld_walk_frame_init(&f, NULL, NULL, NULL, PLD_CTX_HOST, none);
    it->quiet = 1;
    pld_status_t st = pld_eval_dim(it, &f, d, v, none);
    it->quiet = 0;
    return st == PLD_OK;
}

/* The one dynamic dim name of expression e that has no value yet (not a
 * module constant, not bound): 1 with *sym set; 0 when there is none or
 * more than one distinct name. */
static int unbound_sym(const pld_interp_t *it, const pld_expr_t *e, const char **sym)
{
    int64_t v;
    if (!e)
        return 0;
    switch (e->kind) {
    case PLD_EX_NAME:
        if (pld_dyn_get(it, e->u.name, &v))
            return 0;
        for (int c = 0; c < it->p->nconsts; c++)
            if (it->p->consts[c].name == e->u.name && !it->const_is_dyn[c])
                return 0;
        if (*sym && *sym != e->u.name)
            return -1000; /* a second name: not solvable here */
        *sym = e->u.name;
        return 1;
    case PLD_EX_BINARY:
        return unbound_sym(it, e->u.bin.a, sym) + unbound_sym(it, e->u.bin.b, sym);
    case PLD_EX_UNARY:
        return unbound_sym(it, e->u.un.a, sym);
    case PLD_EX_CALL: {
        int n = 0;
        for (int i = 0; i < e->u.call.nargs; i++)
            n += unbound_sym(it, e->u.call.args[i].value, sym);
        return n;
    }
    default:
        return 0;
    }
}

/* An integer value of expression e before the run (probe_dim's rules). */
static int probe_expr(pld_interp_t *it, const pld_expr_t *e, int64_t *v)
{
    pld_dim_t d = {PLD_DIM_EXPR, 0, NULL, e};
    return probe_dim(it, &d, v);
}

/* Solves e == want for the one unbound dynamic name sym in e (through +, -,
 * *, // by a known side, and pl.const(...)): 1 with *val set. The caller
 * checks the result by evaluating e again (floor division has many
 * solutions; the smallest is taken). */
static int solve_sym(pld_interp_t *it, const pld_expr_t *e, const char *sym, int64_t want, int64_t *val)
{
    const char *s = NULL;
    if (e->kind == PLD_EX_NAME && e->u.name == sym) {
        *val = want;
        return 1;
    }
    if (e->kind == PLD_EX_CALL && e->op == PLD_OPID_PL_CONST && e->u.call.nargs >= 1)
        return solve_sym(it, e->u.call.args[0].value, sym, want, val);
    if (e->kind == PLD_EX_UNARY && e->u.un.op == PLD_UOP_NEG)
        return solve_sym(it, e->u.un.a, sym, -want, val);
    if (e->kind != PLD_EX_BINARY)
        return 0;
    const int left = unbound_sym(it, e->u.bin.a, &s) > 0;
    const pld_expr_t *u = left ? e->u.bin.a : e->u.bin.b, *k = left ? e->u.bin.b : e->u.bin.a;
    int64_t c;
    if (!probe_expr(it, k, &c))
        return 0;
    switch (e->u.bin.op) {
    case PLD_OP_ADD: return solve_sym(it, u, sym, want - c, val);
    case PLD_OP_SUB: return solve_sym(it, u, sym, left ? want + c : c - want, val);
    case PLD_OP_MUL: return c != 0 && want % c == 0 && solve_sym(it, u, sym, want / c, val);
    case PLD_OP_FLOORDIV: return left && c > 0 && solve_sym(it, u, sym, want * c, val);
    default: return 0;
    }
}

/* Binds the one unbound dynamic name of dimension dd (an expression such as
 * `M * 2`) so that dd == want (an input's extent), or, with want < 0 (a
 * generated input), to the rank count as a lone dynamic dim is. 1 when it
 * bound one (*name: which, for undoing), 0 when nothing was to bind. */
static int bind_dim_expr(pld_interp_t *it, const pld_dim_t *dd, int64_t want, const char **name)
{
    const char *sym = NULL;
    int64_t v;
    if (dd->kind != PLD_DIM_EXPR || unbound_sym(it, dd->expr, &sym) <= 0 || !sym)
        return 0;
    if (want < 0)
        v = it->comm.nranks;
    else if (!solve_sym(it, dd->expr, sym, want, &v))
        return 0;
    if (!pld_dyn_set(it, sym, v))
        return 0;
    *name = sym;
    return 1;
}

/* Binds parameter i: copies `data` (mode 0), adopts it (mode 1: a pld_mem
 * allocation of exactly the array's bytes, owned by the tensor afterwards),
 * or fills the new tensor from the generator `spec` (mode 2). */
static pld_status_t bind_any(pld_interp_t *it, int i, pld_dtype_t dt, int rank, const int64_t *shape, const void *data,
                             int mode, const char *spec, char *err, size_t errn);

pld_status_t pld_interp_bind(pld_interp_t *it, int i, pld_dtype_t dt, int rank, const int64_t *shape,
                             const void *data, char *err, size_t errn)
{
    return bind_any(it, i, dt, rank, shape, data, 0, NULL, err, errn);
}

pld_status_t pld_interp_bind_adopt(pld_interp_t *it, int i, pld_dtype_t dt, int rank, const int64_t *shape,
                                   void *data, char *err, size_t errn)
{
    pld_status_t st = bind_any(it, i, dt, rank, shape, data, 1, NULL, err, errn);
    if (st != PLD_OK)
        pld_mem_free(data);
    return st;
}

static pld_status_t bind_any(pld_interp_t *it, int i, pld_dtype_t dt, int rank, const int64_t *shape, const void *data,
                             int mode, const char *spec, char *err, size_t errn)
{
    const pld_param_t *pp = &it->entry->params[i];
    const pld_type_t *t = pp->type;
    if (t && t->kind == PLD_TY_SCALAR && (!pld_kern_dtype_ok(t->dtype) || !pld_kern_dtype_ok(dt))) {
        snprintf(err, errn, "scalar parameter '%s' has dtype %s, which pldrun cannot compute with (no 4-bit or FP8 "
                 "arithmetic yet)",
                 pp->name, pld_dtype_name(pld_kern_dtype_ok(t->dtype) ? dt : t->dtype));
        return PLD_E_USAGE;
    }
    if (t && t->kind == PLD_TY_SCALAR) {
        if (rank != 0) {
            snprintf(err, errn, "parameter '%s' is a scalar (%s); the input has rank %d", pp->name,
                     pld_dtype_name(t->dtype), rank);
            return PLD_E_USAGE;
        }
        unsigned char one[8] = {0};
        if (mode == 2 && pld_npy_generate(spec, dt, one, 1, err, errn) != PLD_OK)
            return PLD_E_USAGE;
        const void *src = mode == 2 ? (const void *)one : data;
        pld_value_t v = pld_dtype_is_float(dt) ? pld_v_float(dt, pld_elem_get_f(src, dt, 0))
                                               : pld_v_int(dt, pld_elem_get_i(src, dt, 0));
        pld_value_release(&it->args[i]);
        it->args[i] = pld_v_convert(&v, t->dtype);
        it->bound[i] = 1;
        if (mode == 1)
            pld_mem_free((void *)data);
        return PLD_OK;
    }
    if (!t || (t->kind != PLD_TY_TENSOR && t->kind != PLD_TY_DTENSOR)) {
        snprintf(err, errn, "parameter '%s' is not a tensor and cannot be bound from a file", pp->name);
        return PLD_E_USAGE;
    }
    char desc[256];
    pld_buf_t got;
    pld_buf_init(&got);
    pld_buf_putc(&got, '[');
    for (int d = 0; d < rank; d++)
        pld_buf_printf(&got, "%s%lld", d ? ", " : "", (long long)shape[d]);
    pld_buf_printf(&got, "] %s", pld_dtype_name(dt));
    /* .npy has no INDEX type: INDEX is stored as int64 */
    if (dt == PLD_DT_INT64 && t->dtype == PLD_DT_INDEX)
        dt = PLD_DT_INDEX;
    /* nor FP8 types: an 8-bit float tensor is read from UINT8 ('|u1'), its raw bits */
    if (dt == PLD_DT_UINT8 && pld_dtype_is_float(t->dtype) && pld_dtype_bits(t->dtype) == 8)
        dt = t->dtype;
    int ok = rank == t->rank && dt == t->dtype;
    /* bind dynamic dims from this shape (tentatively) */
    const char *newdyn[PLD_MAX_RANK];
    int nnew = 0;
    for (int d = 0; ok && d < rank; d++) {
        const pld_dim_t *dd = &t->shape[d];
        int64_t v;
        if (dd->kind == PLD_DIM_CONST) {
            ok = dd->v == shape[d];
        } else if (dd->kind == PLD_DIM_SYM) {
            int is_const = 0;
            for (int c = 0; c < it->p->nconsts; c++)
                if (it->p->consts[c].name == dd->sym && !it->const_is_dyn[c] && it->consts[c].kind == PLD_V_INT) {
                    is_const = 1;
                    ok = it->consts[c].u.i == shape[d];
                }
            if (!is_const) {
                if (pld_dyn_get(it, dd->sym, &v))
                    ok = v == shape[d];
                else if (nnew < PLD_MAX_RANK && pld_dyn_set(it, dd->sym, shape[d]))
                    newdyn[nnew++] = dd->sym;
            }
        } else if (probe_dim(it, dd, &v)) {
            ok = v == shape[d];
        } else if (nnew < PLD_MAX_RANK && bind_dim_expr(it, dd, shape[d], &newdyn[nnew])) {
            nnew++; /* `M * 2`: M from this extent, checked next */
            ok = probe_dim(it, dd, &v) && v == shape[d];
        } else {
            const char *sym = NULL; /* a dynamic dim no extent can give (65 for `M * 2`) */
            ok = !(dd->kind == PLD_DIM_EXPR && unbound_sym(it, dd->expr, &sym) > 0);
        }
    }
    if (!ok) {
        /* undo tentative dynamic bindings */
        for (int k = 0; k < nnew; k++)
            for (int j = 0; j < it->ndyn; j++)
                if (it->dyn_names[j] == newdyn[k]) {
                    it->dyn_names[j] = it->dyn_names[it->ndyn - 1];
                    it->dyn_vals[j] = it->dyn_vals[it->ndyn - 1];
                    it->ndyn--;
                }
        pld_interp_param_desc(it, i, desc, sizeof desc);
        snprintf(err, errn, "input for '%s' has shape/dtype %s, but the parameter is declared %s", pp->name,
                 pld_buf_str(&got), desc);
        pld_buf_fini(&got);
        return PLD_E_USAGE;
    }
    pld_buf_fini(&got);
    pld_tensor_t *tt;
    if (mode == 1) {
        int64_t bytes = pld_value_bytes(dt, rank, shape);
        pld_buffer_t *b = bytes < 0 ? NULL : pld_buffer_wrap((void *)data, (size_t)bytes);
        if (!b)
            return PLD_E_NOMEM;
        tt = pld_tensor_view(b, dt, rank, shape, 0);
        if (tt)
            b->external = 0; /* adopted: the buffer frees it from now on */
        pld_buffer_release(b);
        if (!tt)
            return PLD_E_NOMEM; /* data stays the caller's (pld_interp_bind_adopt frees it) */
    } else {
        tt = pld_tensor_new(dt, rank, shape, 0);
        if (!tt)
            return PLD_E_NOMEM;
        int64_t count = 1;
        for (int d = 0; d < rank; d++)
            count *= shape[d];
        if (mode == 2) {
            pld_status_t gs = pld_npy_generate(spec, dt, tt->buf->data, count, err, errn);
            if (gs != PLD_OK) {
                pld_value_t tv = pld_v_obj(&tt->hdr, dt);
                pld_value_release(&tv);
                return gs;
            }
        } else {
            memcpy(tt->buf->data, data, tt->buf->bytes);
        }
    }
    pld_value_release(&it->args[i]);
    it->args[i] = pld_v_obj(&tt->hdr, dt);
    it->bound[i] = 1;
    return PLD_OK;
}

pld_status_t pld_interp_bind_generated(pld_interp_t *it, int i, const char *spec, char *err, size_t errn)
{
    const pld_param_t *pp = &it->entry->params[i];
    const pld_type_t *t = pp->type;
    if (!t || (t->kind != PLD_TY_TENSOR && t->kind != PLD_TY_DTENSOR && t->kind != PLD_TY_SCALAR)) {
        snprintf(err, errn, "parameter '%s' cannot be generated", pp->name);
        return PLD_E_USAGE;
    }
    int64_t shape[PLD_MAX_RANK];
    int rank = t->kind == PLD_TY_SCALAR ? 0 : t->rank;
    for (int d = 0; d < rank; d++) {
        const pld_dim_t *dd = &t->shape[d];
        if (dd->kind == PLD_DIM_SYM && !pld_dyn_get(it, dd->sym, &shape[d])) {
            int is_const = 0;
            for (int c = 0; c < it->p->nconsts; c++)
                if (it->p->consts[c].name == dd->sym && !it->const_is_dyn[c] && it->consts[c].kind == PLD_V_INT) {
                    shape[d] = it->consts[c].u.i;
                    is_const = 1;
                }
            if (!is_const)
                shape[d] = it->comm.nranks; /* dynamic dims take the rank count */
        } else if (dd->kind != PLD_DIM_SYM && !probe_dim(it, dd, &shape[d]) &&
                   !(bind_dim_expr(it, dd, -1, &(const char *){NULL}) && probe_dim(it, dd, &shape[d]))) {
            snprintf(err, errn, "cannot generate '%s': dimension %d is not known before the run", pp->name, d);
            return PLD_E_USAGE;
        }
    }
    /* generated straight into the parameter's tensor: no second copy */
    return bind_any(it, i, t->dtype, rank, shape, NULL, 2, spec, err, errn);
}

/* ------------------------------------------------------------ run */

/* A step every rank takes before a collective one: the verdict of every
 * rank. A rank that failed keeps its status (its error is in the diagnostics);
 * a rank that did not, but whose peer did, gets PLD_E_PEER: it stops without
 * an error of its own and nobody enters the collective alone. */
static pld_status_t agree(pld_interp_t *it, pld_status_t st)
{
    int64_t mine = st != PLD_OK, any = mine;
    if (it->comm.allreduce_max(it->comm.ctx, mine, &any) != PLD_OK) {
        pld_span_t none = {0, 0, 0, 0};
        pld_diag_add(&it->p->diags, PLD_SEV_ERROR, none, "the ranks could not agree on the state of the run (MPI failed)");
        return PLD_E_MPI;
    }
    return st != PLD_OK ? st : any ? PLD_E_PEER : PLD_OK;
}

/* Gathers every Out / InOut tensor at rank 0. snap < 0: the run's result,
 * merged into rank 0's tensors. snap >= 0 (after dispatch snap, with the
 * dispatch hook's outputs callback): merged into a copy that rank 0 hands to
 * the callback, every rank's tensors left as they are. Collective. */
/* Rank 0: a dispatch's output i (whole buffer at buf) to the tool. */
static pld_status_t snapshot_out(pld_interp_t *it, int done, int i, const char *buf)
{
    const pld_interp_dispatch_hook_t *hk = it->opts.dispatch_io;
    pld_tensor_t *tt = pld_v_tensor(&it->args[i]);
    char err[512] = "";
    if (hk->outputs(hk->ctx, done, i, it->entry->params[i].name, tt->dt, tt->rank, tt->shape, buf + tt->offset * pld_dtype_bytes(tt->dt), err,
                    sizeof err) != PLD_OK)
        return pld_rt_error(it, NULL, it->entry->params[i].span, "outputs of dispatch %d: %s", done,
                            err[0] ? err : "failed");
    return PLD_OK;
}

static pld_status_t assemble_outputs(pld_interp_t *it, int snap)
{
    pld_status_t st = PLD_OK, hst = PLD_OK; /* hst: rank 0's callback, which must not end the collective loop */
    for (int i = 0; i < it->entry->nparams && st == PLD_OK; i++) {
        const pld_type_t *t = it->entry->params[i].type;
        if (!t || it->args[i].kind != PLD_V_TENSOR || !pld_interp_is_output(it, i))
            continue;
        pld_tensor_t *tt = pld_v_tensor(&it->args[i]);
        pld_buffer_t *b = tt->buf;
        char *copy = NULL;
        if (it->comm.nranks == 1 || !b->written) {
            if (snap >= 0 && it->comm.rank == 0 && hst == PLD_OK)
                hst = snapshot_out(it, snap, i, (const char *)b->data);
            continue;
        }
        size_t mbytes = (size_t)(b->track_n + 7) / 8;
        size_t one = mbytes + b->bytes;
        char *send = pld_mem_alloc(one);
        char *recv = it->comm.rank == 0 ? pld_mem_alloc(one * (size_t)it->comm.nranks) : NULL;
        if (snap >= 0 && it->comm.rank == 0 && (copy = pld_mem_alloc(b->bytes ? b->bytes : 1)) != NULL)
            memcpy(copy, b->data, b->bytes);
        st = !send || (it->comm.rank == 0 && (!recv || (snap >= 0 && !copy)))
                 ? pld_rt_error(it, NULL, it->entry->params[i].span, "out of memory assembling output '%s'",
                                it->entry->params[i].name)
                 : PLD_OK;
        st = agree(it, st); /* nobody gathers alone */
        if (st != PLD_OK) {
            pld_mem_free(send);
            pld_mem_free(recv);
            pld_mem_free(copy);
            return st;
        }
        memcpy(send, b->written, mbytes);
        memcpy(send + mbytes, b->data, b->bytes);
        st = it->comm.gather(it->comm.ctx, send, one, recv);
        if (st != PLD_OK)
            pld_rt_error(it, NULL, it->entry->params[i].span, "gathering output '%s' at rank 0 failed (%s)",
                         it->entry->params[i].name, pld_status_name(st));
        if (st == PLD_OK && recv && copy) {
            int esz = pld_dtype_bytes(b->track_dt);
            for (int r = 1; r < it->comm.nranks; r++) {
                const uint8_t *m = (const uint8_t *)recv + (size_t)r * one;
                const char *d = (const char *)m + mbytes;
                for (int64_t e = 0; e < b->track_n; e++)
                    if (m[e / 8] & (1u << (e % 8)))
                        memcpy(copy + e * esz, d + e * esz, (size_t)esz);
            }
            if (hst == PLD_OK)
                hst = snapshot_out(it, snap, i, copy);
        } else if (st == PLD_OK && recv) {
            int esz = pld_dtype_bytes(b->track_dt);
            int64_t conflicts = 0, first_conflict = -1;
            for (int r = 1; r < it->comm.nranks; r++) {
                const uint8_t *m = (const uint8_t *)recv + (size_t)r * one;
                const char *d = (const char *)m + mbytes;
                for (int64_t e = 0; e < b->track_n; e++) {
                    if (!(m[e / 8] & (1u << (e % 8))))
                        continue;
                    if ((b->written[e / 8] & (1u << (e % 8))) &&
                        memcmp((char *)b->data + e * esz, d + e * esz, (size_t)esz) != 0) {
                        if (first_conflict < 0)
                            first_conflict = e;
                        conflicts++;
                    }
                    memcpy((char *)b->data + e * esz, d + e * esz, (size_t)esz);
                    b->written[e / 8] |= (uint8_t)(1u << (e % 8));
                }
            }
            if (conflicts)
                pld_diag_add(&it->p->diags, PLD_SEV_WARNING, it->entry->params[i].span,
                             "output '%s': %lld element%s written by several ranks with different values (first at "
                             "flat index %lld); the highest rank's value was kept",
                             it->entry->params[i].name, (long long)conflicts, conflicts == 1 ? " was" : "s were",
                             (long long)first_conflict);
        }
        pld_mem_free(send);
        pld_mem_free(recv);
        pld_mem_free(copy);
    }
    return st != PLD_OK ? st : hst;
}

/* Between dispatches `done` and done + 1, once every rank finished `done`
 * (pld_dist_between's first wait): the dispatch hook's outputs (collective
 * assembly) and inputs (pld_interp_dispatch_hook_t). */
static pld_status_t between_io(pld_interp_t *it, frame_t *f, pld_span_t sp, int done)
{
    const pld_interp_dispatch_hook_t *hk = it->opts.dispatch_io;
    pld_status_t st = PLD_OK;
    char err[512] = "";
    if (hk && hk->outputs) {
        /* every rank finished dispatch `done` (the caller's barrier): the
         * data a backend holds, then the assembly, as at the end of a run */
        if (it->hw && pld_hw_sync(it->hw, err, sizeof err) != PLD_OK)
            st = pld_rt_error(it, f, sp, "kernel backend: %s", err);
        if (st == PLD_OK)
            st = pld_dist_fetch(it);
        st = agree(it, st);
        if (st == PLD_OK) {
            it->where.doing = "assembling a dispatch's outputs at rank 0 (collective)";
            st = assemble_outputs(it, done);
            it->where.doing = NULL;
        }
        if (st != PLD_OK)
            return st;
    }
    if (hk && hk->inputs && hk->inputs(hk->ctx, it, done + 1, err, sizeof err) != PLD_OK)
        return pld_rt_error(it, f, sp, "inputs of dispatch %d: %s", done + 1, err[0] ? err : "failed");
    return PLD_OK;
}

pld_status_t pld_interp_refill(pld_interp_t *it, int i, pld_dtype_t dt, int rank, const int64_t *shape,
                               const void *data, char *err, size_t errn)
{
    if (i < 0 || i >= it->entry->nparams || !it->bound[i]) {
        snprintf(err, errn, "parameter %d is not bound", i);
        return PLD_E_USAGE;
    }
    if (it->args[i].kind != PLD_V_TENSOR)
        return bind_any(it, i, dt, rank, shape, data, 0, NULL, err, errn);
    pld_tensor_t *tt = pld_v_tensor(&it->args[i]);
    int ok = rank == tt->rank && pld_dtype_bytes(dt) == pld_dtype_bytes(tt->dt);
    for (int d = 0; ok && d < rank; d++)
        ok = shape[d] == tt->shape[d];
    if (!ok) {
        char want[128], got[128];
        pld_shape_str(want, sizeof want, tt->rank, tt->shape);
        pld_shape_str(got, sizeof got, rank, shape);
        snprintf(err, errn, "'%s' is bound to %s %s; the new input is %s %s", it->entry->params[i].name, want,
                 pld_dtype_name(tt->dt), got, pld_dtype_name(dt));
        return PLD_E_USAGE;
    }
    pld_view_t to, from;
    pld_tensor_kview(tt, &to);
    pld_view_packed(&from, (void *)data, tt->dt, rank, shape);
    return pld_k_copy(&to, &from, err, errn);
}

pld_status_t pld_interp_run(pld_interp_t *it)
{
    const pld_func_t *fn = it->entry;
    pld_span_t none = {0, 0, 0, 0};
    pld_status_t st = PLD_OK;
    /* local preparation: a failure is agreed on before anything collective */
    for (int i = 0; i < fn->nparams && st == PLD_OK; i++) {
        if (!it->bound[i]) {
            char desc[256];
            pld_interp_param_desc(it, i, desc, sizeof desc);
            pld_diag_add(&it->p->diags, PLD_SEV_ERROR, fn->params[i].span, "entry parameter '%s' (%s) has no input",
                         fn->params[i].name, desc);
            st = PLD_E_USAGE;
            break;
        }
        const pld_type_t *t = fn->params[i].type;
        if (it->args[i].kind == PLD_V_TENSOR && t && pld_interp_is_output(it, i)) {
            pld_tensor_t *tt = pld_v_tensor(&it->args[i]);
            if (!pld_buffer_track(tt->buf, tt->dt, (int64_t)(tt->buf->bytes / (size_t)pld_dtype_bytes(tt->dt))))
                st = pld_rt_error(it, NULL, fn->params[i].span, "out of memory (tracking the writes of '%s')",
                                  fn->params[i].name);
        }
    }
    /* a dynamic leading dim bound from an input that differs from the rank
     * count: a dispatch loop over pld.world_size() does not cover every row
     * (a HOST orchestrator's; a CHIP entry has no such loop: a batch dim) */
    const char *warned = NULL;
    for (int i = 0; i < fn->nparams && it->comm.rank == 0 && st == PLD_OK && pld_check_func_ctx(fn) == PLD_CTX_HOST; i++) {
        const pld_type_t *t = fn->params[i].type;
        int64_t v;
        if (t && (t->kind == PLD_TY_TENSOR || t->kind == PLD_TY_DTENSOR) && t->rank > 0 &&
            t->shape[0].kind == PLD_DIM_SYM && t->shape[0].sym != warned && pld_dyn_get(it, t->shape[0].sym, &v) &&
            v != it->comm.nranks && (warned = t->shape[0].sym) != NULL)
            pld_diag_add(&it->p->diags, PLD_SEV_WARNING, fn->params[i].span,
                         "'%s' has %s = %lld rows but the run has %d rank%s; a loop over pld.world_size() covers "
                         "rows 0..%d only",
                         fn->params[i].name, t->shape[0].sym, (long long)v, it->comm.nranks,
                         it->comm.nranks == 1 ? "" : "s", it->comm.nranks - 1);
    }
    it->steps = 0;
    it->prog_next = 0;
    it->step_limit = it->opts.op_budget ? it->opts.op_budget : UINT64_MAX;
    if (it->sched_on)
        pld_sched_run_begin(it);
    pld_value_t result = pld_v_none();
    int ctx = pld_check_func_ctx(fn);
    it->win = it->opts.win;
    if (ctx == PLD_CTX_HOST && st == PLD_OK)
        st = pld_dist_plan(it, fn);
    pld_dist_progress_bind(it);
    if (st == PLD_E_NOMEM && !it->p->diags.n_errors)
        pld_diag_add(&it->p->diags, PLD_SEV_ERROR, none, "out of memory while preparing the run");
    st = agree(it, st);
    if (st != PLD_OK)
        return st;
    if (ctx == PLD_CTX_HOST) {
        it->where.doing = "creating the windows (collective: every rank takes part)";
        st = pld_dist_create(it);
        it->where.doing = NULL;
    }
    if (it->opts.load_windows) {
        it->where.doing = "loading the windows' saved state (collective: every rank takes part)";
        st = agree(it, st == PLD_OK ? pld_dist_state_load(it, it->opts.load_windows) : st);
        it->where.doing = NULL;
    }
    int n = it->opts.dispatches > 1 ? it->opts.dispatches : 1;
    int clear = !it->opts.persistent_windows || it->opts.reset_windows != 0;
    for (int d = 0; d < n && st == PLD_OK; d++) {
        if (d > 0) {
            frame_t top;
            pld_walk_frame_init(&top, NULL, fn, NULL, ctx, none);
            if (!it->opts.dispatch_io) {
                st = pld_dist_between(it, &top, fn->name_span, d, clear, 0);
            } else if ((st = pld_dist_between(it, &top, fn->name_span, d, clear, 1)) == PLD_OK &&
                       (st = between_io(it, &top, fn->name_span, d - 1)) == PLD_OK) {
                st = pld_dist_between(it, &top, fn->name_span, d, clear, 2);
            }
            if (st != PLD_OK)
                break;
        }
        pld_value_release(&result);
        it->dispatch = d;
        it->rr_counter = 0; /* every dispatch runs the HOST orchestrator afresh */
        pld_ev_t ev;
        char what[48];
        if (it->trace) {
            snprintf(what, sizeof what, "run %d of %d", d + 1, n);
            pld_tr_init(NULL, fn->name_span, &ev, PLD_EV_RUN, fn->name);
            ev.obj = what;
            pld_trace_begin(it->trace, &ev);
        }
        st = pld_walk_function(it, NULL, fn, it->args, ctx, none, &result);
        if (it->trace) {
            ev.failed = st != PLD_OK;
            pld_trace_end(it->trace, &ev);
        }
    }
    pld_value_release(&result);
    if (it->sched_on)
        st = pld_sched_finish(it, st); /* nothing held back is lost, also after a failure */
    it->where.doing = "waiting for the other ranks to finish the run";
    st = pld_dist_finish(it, st);
    if (it->race)
        pld_race_summary(it);
    if (it->must_abort) /* a rank did not stop: it takes part in no collective (the tool ends the job) */
        return st != PLD_OK ? st : PLD_E_PEER;
    if (st == PLD_OK && it->hw) {
        char err[256] = "";
        st = pld_hw_sync(it->hw, err, sizeof err);
        if (st != PLD_OK)
            pld_diag_add(&it->p->diags, PLD_SEV_ERROR, none, "kernel backend: %s", err);
    }
    if (st == PLD_OK)
        st = pld_dist_fetch(it); /* windows a backend placed: their data, for the outputs */
    /* every rank must agree before the collective output assembly */
    st = agree(it, st);
    if (st != PLD_OK)
        return st;
    if (it->opts.save_windows) {
        it->where.doing = "saving the windows' state (collective: every rank takes part)";
        st = agree(it, pld_dist_state_save(it, it->opts.save_windows));
        if (st == PLD_OK)
            st = agree(it, pld_dist_state_commit(it, it->opts.save_windows));
        if (st != PLD_OK)
            return st;
    }
    it->where.doing = "assembling the outputs at rank 0 (collective)";
    st = assemble_outputs(it, -1);
    it->where.doing = "finished the run";
    return st;
}

pld_status_t pld_interp_result(const pld_interp_t *it, int i, pld_dtype_t *dt, int *rank, const int64_t **shape,
                               const void **data)
{
    const pld_value_t *v = &it->args[i];
    if (v->kind != PLD_V_TENSOR)
        return PLD_E_USAGE;
    pld_tensor_t *t = pld_v_tensor(v);
    *dt = t->dt;
    *rank = t->rank;
    *shape = t->shape;
    *data = (const char *)t->buf->data + t->offset * pld_dtype_bytes(t->dt);
    return PLD_OK;
}

int pld_interp_hang(const pld_interp_t *it)
{
    return it->must_abort ? 2 : it->hang ? 1 : 0;
}

const pld_interp_where_t *pld_interp_where(const pld_interp_t *it)
{
    return &it->where;
}

void pld_interp_stats(const pld_interp_t *it, pld_interp_stats_t *st)
{
    *st = it->stats;
}

size_t pld_interp_ops_seen_line(const pld_interp_t *it, char *buf, size_t n)
{
    size_t k = 0;
    for (int id = 0; id < PLD_OPID__COUNT; id++) {
        if (!it->ops_seen[id])
            continue;
        const char *name = pld_op_info((pld_op_id_t)id)->name;
        const size_t len = strlen(name);
        if (k + (k ? 1 : 0) + len + 1 > n)
            break;
        if (k)
            buf[k++] = ' ';
        memcpy(buf + k, name, len);
        k += len;
    }
    buf[k++] = '\n';
    return k;
}
