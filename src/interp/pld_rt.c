/* pld_rt.c - services every layer of the interpreter uses: runtime errors
 * (with the call chain as notes), dynamic dims, and the static dtype named by
 * an expression. Bottom layer: calls nothing above it (pld_interp_int.h). */
#include "pld_interp_int.h"
#include "pld_mem.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ errors */

pld_status_t pld_rt_error(pld_interp_t *it, frame_t *f, pld_span_t sp, const char *fmt, ...)
{
    if (it->quiet || it->failed)
        return PLD_E_RUNTIME;
    it->failed = 1;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pld_diag_t *d = pld_diag_add(&it->p->diags, PLD_SEV_ERROR, sp, "%s", msg);
    if (it->trace) {
        pld_ev_t ev;
        pld_tr_init(f, sp, &ev, PLD_EV_ERROR, NULL);
        ev.obj = msg;
        pld_trace_end(it->trace, &ev);
    }
    for (frame_t *fr = f; fr && d; fr = fr->parent) {
        if (fr->fn)
            pld_diag_note(&it->p->diags, d, fr->call_span.line ? fr->call_span : fr->fn->name_span, "in %s%s",
                          fr->fn->name, fr->call_span.line ? " (called here)" : "");
    }
    return PLD_E_RUNTIME;
}

pld_status_t pld_stack_exhausted(pld_interp_t *it, frame_t *f, pld_span_t sp, uintptr_t at)
{
    pld_npu_stack_t st;
    pld_npu_stack_current(it->sched, &st);
    if (st.lo == 0 || at >= st.lo + PLD_INTERP_STACK_MARGIN || at >= st.hi)
        return PLD_OK; /* another thread's stack (unknown), or room after all */
    const unsigned long left = at > st.lo ? (unsigned long)((at - st.lo) >> 10) : 0;
    const unsigned long size = (unsigned long)((st.hi - st.lo) >> 10);
    char where[64];
    if (st.block >= 0)
        snprintf(where, sizeof where, "block %d's stack", st.block);
    else
        snprintf(where, sizeof where, "the thread's stack");
    return pld_rt_error(it, f, sp,
                        "stack exhausted: %lu KiB left on %s (of %lu KiB) at call depth %d; too deep a recursion or "
                        "expression nesting",
                        left, where, size, f ? f->depth : 0);
}

void pld_rt_progress(pld_interp_t *it, pld_span_t sp)
{
    pld_win_progress_t *pr = it->prog;
    atomic_store_explicit((_Atomic int64_t *)(void *)&pr->count, (int64_t)it->steps, memory_order_relaxed);
    atomic_store_explicit((_Atomic uint64_t *)(void *)&pr->at, (uint64_t)sp.line | (uint64_t)sp.col << 32,
                          memory_order_relaxed);
    it->prog_next = it->steps + 64;
}

pld_status_t pld_rt_step_limit(pld_interp_t *it, frame_t *f, pld_span_t sp)
{
    if (it->sched_on && it->steps <= pld_sched_budget(it))
        return pld_sched_stale(it, f, sp);
    return pld_rt_error(it, f, sp, "operation budget (%llu) exhausted", (unsigned long long)it->opts.op_budget);
}

/* ------------------------------------------------------------ dynamic dims */

const winbuf_t *pld_winbuf_at(const pld_interp_t *it, const domain_t *d, size_t disp)
{
    for (int i = 0; i < it->nwins; i++) {
        const winbuf_t *w = &it->wins[i];
        if (&it->doms[w->dom] == d && disp >= w->offset && disp < w->offset + (w->bytes ? w->bytes : 1))
            return w;
    }
    return NULL;
}

int pld_dyn_get(const pld_interp_t *it, const char *name, int64_t *out)
{
    for (int i = 0; i < it->ndyn; i++)
        if (it->dyn_names[i] == name || strcmp(it->dyn_names[i], name) == 0) {
            *out = it->dyn_vals[i];
            return 1;
        }
    return 0;
}

int pld_dyn_set(pld_interp_t *it, const char *name, int64_t v)
{
    for (int i = 0; i < it->ndyn; i++)
        if (it->dyn_names[i] == name || strcmp(it->dyn_names[i], name) == 0) {
            it->dyn_vals[i] = v;
            return 1;
        }
    if (it->ndyn == it->capdyn) {
        int cap = it->capdyn ? it->capdyn * 2 : 8;
        const char **nn = pld_mem_realloc(it->dyn_names, (size_t)cap * sizeof *nn);
        if (!nn)
            return 0;
        it->dyn_names = nn;
        int64_t *nv = pld_mem_realloc(it->dyn_vals, (size_t)cap * sizeof *nv);
        if (!nv)
            return 0;
        it->dyn_vals = nv;
        it->capdyn = cap;
    }
    it->dyn_names[it->ndyn] = name;
    it->dyn_vals[it->ndyn] = v;
    it->ndyn++;
    return 1;
}

/* ------------------------------------------------------------ module constants */

pld_status_t pld_const_index_build(pld_interp_t *it)
{
    unsigned cap = 8;
    while (cap < 2u * (unsigned)it->p->nconsts)
        cap *= 2;
    it->const_names = pld_mem_calloc(cap, sizeof *it->const_names);
    it->const_index = pld_mem_calloc(cap, sizeof *it->const_index);
    if (!it->const_names || !it->const_index)
        return PLD_E_NOMEM;
    it->const_mask = cap - 1;
    for (int i = 0; i < it->p->nconsts; i++) {
        const char *name = it->p->consts[i].name;
        unsigned j = (unsigned)(((uint64_t)(uintptr_t)name * 0x9E3779B97F4A7C15u) >> 40) & it->const_mask;
        while (it->const_names[j] && it->const_names[j] != name)
            j = (j + 1) & it->const_mask;
        it->const_names[j] = name;
        it->const_index[j] = i; /* a later constant of the same name wins */
    }
    return PLD_OK;
}

/* ------------------------------------------------------------ helpers */

pld_dtype_t pld_expr_dtype(pld_interp_t *it, const pld_expr_t *e)
{
    char b[128];
    if (!e)
        return PLD_DT_NONE;
    if (e->kind == PLD_EX_NAME) {
        for (int i = 0; i < it->p->nconsts; i++)
            if (it->p->consts[i].name == e->u.name) {
                const pld_expr_t *v = pld_const_value(&it->p->consts[i]);
                return v != e ? pld_expr_dtype(it, v) : PLD_DT_NONE;
            }
        return pld_dtype_from_name(e->u.name);
    }
    if (e->kind == PLD_EX_ATTR && pld_ast_dotted(e, b, sizeof b)) {
        const char *last = strrchr(b, '.');
        return pld_dtype_from_name(last ? last + 1 : b);
    }
    return PLD_DT_NONE;
}

/* ------------------------------------------------------------ op arguments */

static const pld_opvals_t *supplied(const frame_t *f, const pld_expr_t *e)
{
    return f && f->opvals && f->opvals->e == e ? f->opvals : NULL;
}

static pld_status_t unsupplied(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int i)
{
    const pld_expr_t *a = pld_op_arg(e, i);
    return pld_rt_error(it, f, a ? a->span : e->span, "internal: operand '%s' of %s was not supplied by the compiled kernel",
                        pld_op_info((pld_op_id_t)e->op)->params[i].name, pld_op_name(e));
}

pld_status_t pld_op_supplied(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int i, pld_value_t *out)
{
    const pld_opvals_t *ov = supplied(f, e);
    *out = pld_v_none();
    if (!ov || i < 0 || i >= PLD_OP_MAX_PARAMS || ov->given[i] != 1)
        return unsupplied(it, f, e, i);
    *out = ov->v[i];
    pld_value_retain(out);
    return PLD_OK;
}

pld_status_t pld_op_value(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int i, pld_value_t *out)
{
    const pld_expr_t *a = pld_op_arg(e, i);
    if (!a) {
        *out = pld_v_none();
        return PLD_OK;
    }
    return supplied(f, e) ? pld_op_supplied(it, f, e, i, out) : it->walk->eval(it, f, a, out);
}

/* a supplied integer operand as eval_i64 gives it */
static pld_status_t supplied_i64(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int i, int64_t *out)
{
    pld_value_t v;
    pld_status_t st = pld_op_supplied(it, f, e, i, &v);
    if (st != PLD_OK)
        return st;
    if (v.kind == PLD_V_FLOAT)
        return pld_rt_error(it, f, pld_op_arg(e, i)->span, "expected an integer, found the float %g", v.u.f);
    if (v.kind != PLD_V_INT && v.kind != PLD_V_CTX) {
        pld_value_release(&v);
        return unsupplied(it, f, e, i);
    }
    *out = v.u.i;
    return PLD_OK;
}

pld_status_t pld_op_i64(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int i, int64_t *out)
{
    return supplied(f, e) ? supplied_i64(it, f, e, i, out) : it->walk->eval_i64(it, f, pld_op_arg(e, i), out);
}

pld_status_t pld_op_need(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int i, pld_value_t *v, pld_vkind_t k)
{
    pld_status_t st = pld_op_eval(it, f, e, i, v);
    if (st != PLD_OK)
        return st;
    if (v->kind != k || (k >= PLD_V_TENSOR && k <= PLD_V_ARRAY && !v->u.obj)) {
        const pld_op_info_t *info = pld_op_info((pld_op_id_t)e->op);
        pld_vkind_t got = v->kind;
        pld_value_release(v);
        return pld_rt_error(it, f, pld_op_arg(e, i) ? pld_op_arg(e, i)->span : e->span, "%s: '%s' must be a %s, found a %s",
                            info->name, info->params[i].name, pld_vkind_name(k), pld_vkind_name(got));
    }
    return PLD_OK;
}

pld_status_t pld_op_ilist(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int i, int64_t *out, int *n)
{
    const pld_expr_t *a = pld_op_arg(e, i);
    if (!a) {
        *n = -1;
        return PLD_OK;
    }
    const pld_opvals_t *ov = supplied(f, e);
    if (ov && ov->given[i] == 2) { /* pld_eval_ilist's checks on the values */
        if (ov->nlist[i] > PLD_MAX_RANK)
            return pld_rt_error(it, f, a->span, "list has %d entries (limit %d)", ov->nlist[i], PLD_MAX_RANK);
        memcpy(out, ov->list[i], (size_t)ov->nlist[i] * sizeof *out);
        *n = ov->nlist[i];
        return PLD_OK;
    }
    if (ov) { /* one (flat) index */
        if (supplied_i64(it, f, e, i, out) != PLD_OK)
            return PLD_E_RUNTIME;
        *n = 1;
        return PLD_OK;
    }
    return it->walk->eval_ilist(it, f, a, out, PLD_MAX_RANK, n);
}

static const struct {
    const char *m;
    int64_t v;
} enum_members[PLD_ENUM_MEMBERS] = {{"AtomicAdd", 0}, {"Set", 1}, {"Eq", 0}, {"Ge", 1}, {"None_", 0},
                                    {"Add", 1}, {"Sum", 0}, {"Max", 1}, {"Min", 2}, {"Prod", 3}};

pld_status_t pld_op_iarg(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int i, int64_t dflt, int64_t *out)
{
    const pld_expr_t *a = pld_op_arg(e, i);
    if (!a) {
        *out = dflt;
        return PLD_OK;
    }
    /* enum chains (pl.AtomicType.Add, pld.ReduceOp.Max, pld.NotifyOp.Set, ...):
     * the member names are interned, so after the first use of a member its
     * name is found by pointer (it->enum_names), without a string compare */
    if (a->kind == PLD_EX_ATTR) {
        const char *m = a->u.attr.attr;
        for (int k = 0; k < PLD_ENUM_MEMBERS; k++)
            if (it->enum_names[k] == m) {
                *out = enum_members[k].v;
                return PLD_OK;
            }
        for (int k = 0; k < PLD_ENUM_MEMBERS; k++)
            if (strcmp(m, enum_members[k].m) == 0) {
                it->enum_names[k] = m;
                *out = enum_members[k].v;
                return PLD_OK;
            }
        return pld_rt_error(it, f, a->span, "unknown enum value '%s'", m);
    }
    if (a->kind == PLD_EX_BOOL) {
        *out = a->u.bval;
        return PLD_OK;
    }
    return pld_op_i64(it, f, e, i, out);
}


pld_status_t pld_op_shape(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int i, int64_t *shape, int *rank)
{
    pld_status_t st = pld_op_ilist(it, f, e, i, shape, rank);
    if (st != PLD_OK)
        return st;
    for (int d = 0; d < *rank; d++)
        if (shape[d] < 0)
            return pld_rt_error(it, f, e->span, "%s: shape dimension %d is negative (%lld)", pld_op_name(e), d,
                                (long long)shape[d]);
    return PLD_OK;
}

pld_dtype_t pld_op_dtype(pld_interp_t *it, const pld_expr_t *e, int dtype_arg)
{
    if (e->type && e->type->dtype != PLD_DT_NONE)
        return e->type->dtype;
    return pld_expr_dtype(it, pld_op_arg(e, dtype_arg));
}
