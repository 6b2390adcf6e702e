/* pld_subw.c - a SubWorker call of the HOST orchestrator (`self.f(...)` of a
 * `level=HOST, role=SubWorker` function, written in Python): the arguments
 * become neutral views (src/pybridge/pld_pybridge.h) and the call goes to the
 * bridge the tool wired in (opts.subworkers). Like the HOST orchestrator that
 * calls it, it runs on every rank, on that rank's values; the elements of its
 * Out and InOut tensors whose bytes it changes count as written by this rank
 * (the output assembly gathers them). A Python exception is a runtime error at the call,
 * with the traceback as a note. docs/python.md, "SubWorkers". */
#include "pld_interp_int.h"
#include "pld_mem.h"

#include <string.h>

/* Argument i as the bridge takes it; a runtime error for what Python cannot get. */
static pld_status_t to_arg(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_func_t *fn, int i,
                           const pld_value_t *v, pld_py_arg_t *a)
{
    const char *pname = fn->params[i].name;
    memset(a, 0, sizeof *a);
    switch (v->kind) {
    case PLD_V_NONE: a->kind = PLD_PY_NONE; return PLD_OK;
    case PLD_V_INT:
        a->kind = v->dt == PLD_DT_BOOL ? PLD_PY_BOOL : PLD_PY_INT;
        a->i = v->u.i;
        return PLD_OK;
    case PLD_V_FLOAT:
        a->kind = PLD_PY_FLOAT;
        a->f = v->u.f;
        return PLD_OK;
    case PLD_V_UNAVAIL:
        return pld_rt_error(it, f, e->u.call.args[i].value->span,
                            "argument '%s' of the SubWorker '%s' was computed by a dispatch on rank %lld only: a "
                            "SubWorker runs on every rank, on that rank's own values, as the HOST orchestrator does "
                            "(docs/python.md, \"SubWorkers\")",
                            pname, fn->name, (long long)v->u.i);
    case PLD_V_TENSOR: break;
    default:
        return pld_rt_error(it, f, e->u.call.args[i].value->span,
                            "argument '%s' of the SubWorker '%s' is a %s: a SubWorker takes host tensors and scalars",
                            pname, fn->name, pld_vkind_name(v->kind));
    }
    const pld_tensor_t *t = pld_v_tensor(v);
    if (t->rank > PLD_PY_MAX_RANK)
        return pld_rt_error(it, f, e->u.call.args[i].value->span, "argument '%s' of the SubWorker '%s' has rank %d "
                            "(at most %d)", pname, fn->name, t->rank, PLD_PY_MAX_RANK);
    const int64_t esz = pld_dtype_bytes(t->dt);
    a->kind = PLD_PY_TENSOR;
    a->dt = t->dt;
    a->rank = t->rank;
    a->data = (char *)t->buf->data + t->offset * esz;
    for (int d = 0; d < t->rank; d++) {
        a->shape[d] = t->shape[d];
        a->strides[d] = t->strides[d] * esz;
    }
    return PLD_OK;
}

static int is_written_param(const pld_param_t *pp)
{
    return pp->type && (pp->type->dir == PLD_DIR_OUT || pp->type->dir == PLD_DIR_INOUT);
}

/* The call's value: PyPTO's SubWorkers return their Out tensors, so the call
 * gives the Out / InOut arguments (one, or a tuple for a tuple return type);
 * None when the function declares no result. */
static pld_status_t result(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_func_t *fn,
                           const pld_value_t *args, int n, pld_value_t *out)
{
    int idx[PLD_PY_MAX_RANK * 4], k = 0;
    for (int i = 0; i < n && k < (int)(sizeof idx / sizeof idx[0]); i++)
        if (is_written_param(&fn->params[i]))
            idx[k++] = i;
    if (!fn->ret_ann || k == 0)
        return PLD_OK;
    const pld_expr_t *r = fn->ret_ann;
    const int tuple = r->kind == PLD_EX_SUBSCRIPT && r->u.sub.obj->kind == PLD_EX_NAME &&
                      strcmp(r->u.sub.obj->u.name, "tuple") == 0;
    if (!tuple) {
        *out = args[idx[0]];
        pld_value_retain(out);
        return PLD_OK;
    }
    pld_tuple_t *tp = pld_tuple_new(k);
    if (!tp)
        return pld_rt_error(it, f, e->span, "out of memory");
    for (int j = 0; j < k; j++) {
        tp->items[j] = args[idx[j]];
        pld_value_retain(&tp->items[j]);
    }
    *out = pld_v_obj(&tp->hdr, PLD_DT_NONE);
    return PLD_OK;
}

/* The elements of tensor t in row-major order: copies them into (save) or
 * compares them with (!save) the packed snapshot `snap`, marking those that
 * differ written by this rank. */
static void snapshot(const pld_tensor_t *t, char *snap, int save)
{
    const int64_t w = pld_dtype_bytes(t->dt);
    int64_t idx[PLD_MAX_RANK] = {0}, one[PLD_MAX_RANK];
    for (int d = 0; d < t->rank; d++) {
        if (t->shape[d] <= 0)
            return;
        one[d] = 1;
    }
    for (int64_t k = 0;; k++) {
        int64_t at = t->offset;
        for (int d = 0; d < t->rank; d++)
            at += idx[d] * t->strides[d];
        char *e = (char *)t->buf->data + at * w;
        if (save)
            memcpy(snap + k * w, e, (size_t)w);
        else if (memcmp(snap + k * w, e, (size_t)w) != 0)
            pld_tensor_mark_written(t, idx, one);
        int d = t->rank - 1;
        while (d >= 0 && ++idx[d] == t->shape[d])
            idx[d--] = 0;
        if (d < 0)
            return;
    }
}

/* Snapshots of the Out / InOut tensors of a call (NULL for the others). */
static pld_status_t snapshots(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_func_t *fn,
                              const pld_value_t *args, int n, char **snaps, int save)
{
    for (int i = 0; i < n; i++) {
        if (!is_written_param(&fn->params[i]) || args[i].kind != PLD_V_TENSOR)
            continue;
        const pld_tensor_t *t = pld_v_tensor(&args[i]);
        if (save) {
            int64_t bytes = pld_dtype_bytes(t->dt);
            for (int d = 0; d < t->rank; d++)
                bytes *= t->shape[d] > 0 ? t->shape[d] : 0;
            snaps[i] = pld_mem_alloc((size_t)(bytes > 0 ? bytes : 1));
            if (!snaps[i])
                return pld_rt_error(it, f, e->span, "out of memory");
        }
        snapshot(t, snaps[i], save);
    }
    return PLD_OK;
}

pld_status_t pld_walk_subworker(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_func_t *fn,
                                const pld_value_t *args, int n, pld_value_t *out)
{
    const pld_subworkers_t *sw = it->opts.subworkers;
    if (!sw || !sw->call)
        return pld_rt_error(it, f, e->span, "'%s' is a SubWorker (host Python code) and this run has no Python "
                            "bridge (docs/python.md, \"SubWorkers\")", fn->name);
    if (n != fn->nparams)
        return pld_rt_error(it, f, e->span, "self.%s takes %d arguments, %d given", fn->name, fn->nparams, n);
    pld_py_arg_t *pa = pld_mem_calloc((size_t)(n > 0 ? n : 1), sizeof *pa);
    const char **names = pld_mem_calloc((size_t)(n > 0 ? n : 1), sizeof *names);
    char **snaps = pld_mem_calloc((size_t)(n > 0 ? n : 1), sizeof *snaps);
    pld_status_t st = pa && names && snaps ? PLD_OK : pld_rt_error(it, f, e->span, "out of memory");
    for (int i = 0; i < n && st == PLD_OK; i++) {
        names[i] = fn->params[i].name;
        st = to_arg(it, f, e, fn, i, &args[i], &pa[i]);
    }
    /* what the function writes (the bytes that change) is this rank's part of an output */
    if (st == PLD_OK)
        st = snapshots(it, f, e, fn, args, n, snaps, 1);
    if (st == PLD_OK) {
        pld_py_fn_t pf = {fn->name, names, n, fn->raw_body, it->p->file, (int)fn->raw_line};
        pld_buf_t err;
        pld_buf_init(&err);
        pld_ev_t ev;
        if (it->trace) {
            pld_tr_init(f, e->span, &ev, PLD_EV_DISPATCH, fn->name);
            pld_trace_begin(it->trace, &ev);
        }
        st = sw->call(sw->ctx, &pf, pa, n, &err);
        if (it->trace) {
            ev.failed = st != PLD_OK;
            pld_trace_end(it->trace, &ev);
        }
        if (st != PLD_OK) {
            /* the last line of a traceback says what was raised */
            const char *text = err.p ? err.p : "no reason given";
            const char *last = strrchr(text, '\n');
            const int mine = !it->failed && !it->quiet;
            st = pld_rt_error(it, f, e->span, "the SubWorker '%s' failed: %s", fn->name, last ? last + 1 : text);
            if (mine && last && it->p->diags.tail)
                pld_diag_note(&it->p->diags, it->p->diags.tail, (pld_span_t){0, 0, 0, 0},
                              "the Python traceback of rank %d:\n%s", it->comm.rank, text);
        }
        pld_buf_fini(&err);
    }
    if (st == PLD_OK)
        st = snapshots(it, f, e, fn, args, n, snaps, 0);
    if (st == PLD_OK)
        st = result(it, f, e, fn, args, n, out);
    for (int i = 0; snaps && i < n; i++)
        pld_mem_free(snaps[i]);
    pld_mem_free(snaps);
    pld_mem_free(pa);
    pld_mem_free(names);
    return st;
}
