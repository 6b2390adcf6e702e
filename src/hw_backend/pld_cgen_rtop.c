/* pld_cgen_rtop.c - the runtime boundary of compiled kernels (pld_cgen_int.h):
 * the pld.* ops (windows, signals, waits, collectives) whose every operand the
 * generated code evaluates itself, then hands to the runtime as values
 * (pc_rt.op, pc_arg): tensors and tiles as descriptors, scalars, comm-domain
 * handles and index lists as C values. The runtime runs the interpreter's
 * binding of the op on those values (pld_crt.c's rt_op): no operand of these
 * ops is evaluated by the tree walker. Operands read from the program text
 * only (enum members, bool / string literals, dtype names) are not handed
 * over. */
#include "pld_cgen_int.h"
#include "pld_crt.h"
#include "pld_kern.h"

#include <stdio.h>
#include <string.h>

int pld_cg_is_rtop(int op)
{
    switch (op) {
    case PLD_OPID_PLD_WORLD_SIZE: case PLD_OPID_PLD_GET_COMM_CTX: case PLD_OPID_PLD_RANK: case PLD_OPID_PLD_NRANKS:
    case PLD_OPID_PLD_ALLOC_WINDOW_BUFFER: case PLD_OPID_PLD_WINDOW:
    case PLD_OPID_PLD_REMOTE_LOAD: case PLD_OPID_PLD_TILE_REMOTE_STORE: case PLD_OPID_PLD_TENSOR_REMOTE_STORE:
    case PLD_OPID_PLD_PUT: case PLD_OPID_PLD_GET: case PLD_OPID_PLD_TILE_PUT: case PLD_OPID_PLD_TILE_GET:
    case PLD_OPID_PLD_NOTIFY: case PLD_OPID_PLD_WAIT: case PLD_OPID_PLD_DEFER_WAIT:
    case PLD_OPID_PLD_ALLREDUCE: case PLD_OPID_PLD_BARRIER: case PLD_OPID_PLD_BROADCAST:
    case PLD_OPID_PLD_REDUCE_SCATTER: case PLD_OPID_PLD_ALLGATHER: case PLD_OPID_PLD_ALL_TO_ALL:
    case PLD_OPID_PLD_ALL_TO_ALL_V: case PLD_OPID_PLD_INDEXED_ALL_TO_ALL_V:
        return 1;
    default:
        return 0;
    }
}

/* operand i of op call e (expression a, parameter kind pk) into pc_arg `arr`[i]; e NULL: a returned value */
static int operand(cg_t *g, const pld_expr_t *e, int arr, int i, const pld_expr_t *a, const char *pk)
{
    const pld_type_t *ty = a->type;
    switch (a->kind) {
    case PLD_EX_NONE: pld_cg_emit(g, "t%d[%d].kind = PC_ARG_NONEVAL;", arr, i); return 0;
    case PLD_EX_STR:
        if (!e)
            break;
        return 0; /* read from the program text */
    case PLD_EX_BOOL:
        pld_cg_emit(g, "t%d[%d].kind = PC_OUT_INT; t%d[%d].dt = %d; t%d[%d].i = %d;", arr, i, arr, i, (int)PLD_DT_BOOL, arr,
                    i, a->u.bval ? 1 : 0);
        return 0;
    case PLD_EX_ATTR:
        if (e && (!ty || ty->kind == PLD_TY_UNKNOWN || ty->kind == PLD_TY_NONE || !strcmp(pk, "enum") ||
                  !strcmp(pk, "dtype")))
            return 0; /* an enum member or a dtype name: the program text */
        break;
    default: break;
    }
    if (e && !strcmp(pk, "dtype"))
        return 0;
    if (!strcmp(pk, "list") || a->kind == PLD_EX_LIST || a->kind == PLD_EX_TUPLE) {
        int n;
        int l = pld_cg_ilist(g, a, &n);
        if (l < 0)
            return -1;
        pld_cg_emit(g, "t%d[%d].kind = PC_ARG_LIST; t%d[%d].n = %d;", arr, i, arr, i, n);
        if (n > 0)
            pld_cg_emit(g, "memcpy(t%d[%d].list, t%d, %d * sizeof(int64_t));", arr, i, l, n);
        return 0;
    }
    if (ty && pld_type_is_tensorlike(ty)) {
        int t = tmp(g);
        char d[32];
        snprintf(d, sizeof d, "t%d", t);
        pld_cg_emit(g, "pc_tensor t%d;", t);
        if (pld_cg_tensor_into(g, a, d))
            return -1;
        pld_cg_emit(g, "t%d[%d].kind = PC_OUT_TENSOR; t%d[%d].t = &t%d;", arr, i, arr, i, t);
        return 0;
    }
    if (ty && ty->kind == PLD_TY_TILE) {
        char nm[32];
        if (pld_cg_tile_operand(g, a, e, nm))
            return -1;
        pld_cg_emit(g, "t%d[%d].kind = PC_OUT_TILE; t%d[%d].tile = &%s;", arr, i, arr, i, nm);
        return 0;
    }
    if (ty && ty->kind == PLD_TY_COMMCTX) {
        int fl;
        pld_dtype_t dt;
        int v = pld_cg_scalar(g, a, &fl, &dt);
        if (v < 0)
            return -1;
        pld_cg_emit(g, "t%d[%d].kind = PC_OUT_CTX; t%d[%d].i = t%d;", arr, i, arr, i, v);
        return 0;
    }
    if (!ty || ty->kind == PLD_TY_SCALAR || a->kind == PLD_EX_INT || a->kind == PLD_EX_FLOAT) {
        int fl;
        pld_dtype_t dt;
        int v = pld_cg_scalar(g, a, &fl, &dt);
        if (v < 0)
            return -1;
        if (fl)
            pld_cg_emit(g, "t%d[%d].kind = PC_OUT_FLOAT; t%d[%d].dt = %d; t%d[%d].f = t%d;", arr, i, arr, i, (int)dt, arr, i,
                        v);
        else
            pld_cg_emit(g, "t%d[%d].kind = PC_OUT_INT; t%d[%d].dt = %d; t%d[%d].i = t%d;", arr, i, arr, i, (int)dt, arr, i,
                        v);
        return 0;
    }
    if (!e)
        return pld_cg_fail(g, a->span, "a returned value of this kind is not compiled by the native backend");
    return pld_cg_fail(g, a->span, "%s: operand '%s' of this kind is not compiled by the native backend", opname(e),
                       pld_op_info((pld_op_id_t)e->op)->params[i].name);
}

/* Runs pld.* op call e in the runtime with its operands evaluated here
 * (pc_rt.op); the result as pld_cg_exec gives it (kind `want`). */
int pld_cg_rtop(cg_t *g, const pld_expr_t *e, int want)
{
    const pld_op_info_t *info = pld_op_info((pld_op_id_t)e->op);
    const int n = info->nparams;
    const int s = pld_cg_site(g, e), arr = tmp(g), o = tmp(g);
    pld_cg_emit(g, "pc_arg t%d[%d];", arr, n > 0 ? n : 1);
    pld_cg_emit(g, "memset(t%d, 0, sizeof t%d);", arr, arr);
    for (int i = 0; i < n; i++) {
        const pld_expr_t *a = pld_op_bound(e, i);
        if (a && operand(g, e, arr, i, a, info->params[i].kind))
            return -1;
    }
    pld_cg_emit(g, "pc_out t%d;", o);
    if (e->op == PLD_OPID_PLD_RANK || e->op == PLD_OPID_PLD_NRANKS) {
        /* read from the CommContext the handle addresses, as a card does */
        pld_cg_emit(g, "memset(&t%d, 0, sizeof t%d);", o, o);
        pld_cg_emit(g, "if (t%d[0].kind == PC_OUT_CTX && (uint64_t)t%d[0].i >= 4096) {", arr, arr);
        pld_cg_emit(g, "    t%d.kind = PC_OUT_INT; t%d.dt = %d; t%d.i = %s(t%d[0].i);", o, o, (int)PLD_DT_INT32, o,
                    e->op == PLD_OPID_PLD_RANK ? "pc_ctx_rank" : "pc_ctx_nranks", arr);
        pld_cg_emit(g, "} else if (rt->op(bk, %d, t%d, %d, &t%d)) return pc_cold(), 1;", s, arr, n, o);
    } else {
        pld_cg_emit(g, "if (rt->op(bk, %d, t%d, %d, &t%d)) return pc_cold(), 1;", s, arr, n, o);
    }
    return pld_cg_out_as(g, o, want);
}

/* `return v0, ..., vn-1`: each value evaluated here, then handed to the
 * runtime (pc_rt.ret_val) */
int pld_cg_return(cg_t *g, const pld_stmt_t *s)
{
    const int n = s->u.ret.n, arr = tmp(g);
    pld_cg_emit(g, "pc_arg t%d[%d];", arr, n > 0 ? n : 1);
    pld_cg_emit(g, "memset(t%d, 0, sizeof t%d);", arr, arr);
    for (int i = 0; i < n; i++)
        if (operand(g, NULL, arr, i, s->u.ret.vals[i], "any"))
            return -1;
    for (int i = 0; i < n; i++)
        pld_cg_emit(g, "if (rt->ret_val(bk, %d, %d, %d, &t%d[%d])) return pc_cold(), 1;", pld_cg_site(g, s->u.ret.vals[i]), i, n, arr, i);
    pld_cg_emit(g, "return 0;");
    return 0;
}

/* ---------------------------------------------------------------- tensor subscripts */

/* `return rt->fail(bk, site, <printf of fmt, args>)` in generated code */
static void fail_fmt(cg_t *g, int site, const char *fmt, const char *args)
{
    pld_cg_emit(g, "{ char m_[256]; snprintf(m_, sizeof m_, \"%s\", %s); return pc_cold(), rt->fail(bk, %d, m_); }", fmt, args, site);
}

/* tensor[i, a:b, ...] with at least one slice: the view into descriptor
 * `dst` as pld_exec_subscript makes it (negative bounds from the end, the
 * same checks and messages, indexed dims dropped, valid extents clipped);
 * -2 when e is not such a subscript (the caller's other path) */
int pld_cg_subscript(cg_t *g, const pld_expr_t *e, const char *dst)
{
    const pld_expr_t *obj = e->u.sub.obj;
    const int n = e->u.sub.n;
    int slices = 0;
    for (int d = 0; d < n; d++)
        slices += e->u.sub.items[d]->kind == PLD_EX_SLICE;
    /* no slice: a view too when fewer indices than the (static) rank (pld_exec_subscript; n == rank is an
     * element read) */
    if (!obj->type || !pld_type_is_tensorlike(obj->type) || (slices == 0 && !(obj->type->rank > n && n > 0)) ||
        n > PC_MAX_RANK)
        return -2;
    const int es = esize(obj->type->dtype);
    const int ob = tmp(g), lo = tmp(g), ex = tmp(g), dr = tmp(g);
    char on[32];
    snprintf(on, sizeof on, "t%d", ob);
    pld_cg_emit(g, "pc_tensor t%d;", ob);
    if (pld_cg_tensor_into(g, obj, on))
        return -1;
    pld_cg_emit(g, "int64_t t%d[PC_MAX_RANK], t%d[PC_MAX_RANK]; int t%d[PC_MAX_RANK] = {0};", lo, ex, dr);
    pld_cg_emit(g, "if (%d > t%d.rank)", n, ob);
    char a[96];
    snprintf(a, sizeof a, "%d, (int)t%d.rank", n, ob);
    g->ind++;
    fail_fmt(g, pld_cg_site(g, e), "%d indices for a rank-%d value", a);
    g->ind--;
    pld_cg_emit(g, "for (int d = 0; d < t%d.rank; d++) { t%d[d] = 0; t%d[d] = t%d.shape[d]; }", ob, lo, ex, ob);
    for (int d = 0; d < n; d++) {
        const pld_expr_t *it = e->u.sub.items[d];
        const int s = pld_cg_site(g, it);
        int fl;
        pld_dtype_t dt;
        char args[160];
        if (it->kind == PLD_EX_SLICE) {
            int va = -1, vb = -1;
            if (it->u.slice.lo && ((va = pld_cg_scalar(g, it->u.slice.lo, &fl, &dt)) < 0 || fl))
                return va < 0 ? -1 : pld_cg_fail(g, it->u.slice.lo->span, "a slice bound must be an integer");
            if (it->u.slice.hi && ((vb = pld_cg_scalar(g, it->u.slice.hi, &fl, &dt)) < 0 || fl))
                return vb < 0 ? -1 : pld_cg_fail(g, it->u.slice.hi->span, "a slice bound must be an integer");
            const int x = tmp(g), y = tmp(g);
            if (va >= 0)
                pld_cg_emit(g, "int64_t t%d = t%d;", x, va);
            else
                pld_cg_emit(g, "int64_t t%d = 0;", x);
            if (vb >= 0)
                pld_cg_emit(g, "int64_t t%d = t%d;", y, vb);
            else
                pld_cg_emit(g, "int64_t t%d = t%d.shape[%d];", y, ob, d);
            pld_cg_emit(g, "if (t%d < 0) t%d += t%d.shape[%d];", x, x, ob, d);
            pld_cg_emit(g, "if (t%d < 0) t%d += t%d.shape[%d];", y, y, ob, d);
            pld_cg_emit(g, "if (t%d < 0 || t%d > t%d.shape[%d] || t%d > t%d)", x, y, ob, d, x, y);
            snprintf(args, sizeof args, "(long long)t%d, (long long)t%d, %d, (long long)t%d.shape[%d]", x, y, d, ob, d);
            g->ind++;
            fail_fmt(g, s, "slice %lld:%lld is outside dimension %d (size %lld)", args);
            g->ind--;
            pld_cg_emit(g, "t%d[%d] = t%d; t%d[%d] = t%d - t%d;", lo, d, x, ex, d, y, x);
        } else {
            int vk = pld_cg_scalar(g, it, &fl, &dt);
            if (vk < 0)
                return -1;
            if (fl)
                return pld_cg_fail(g, it->span, "an index must be an integer");
            const int k = tmp(g);
            pld_cg_emit(g, "int64_t t%d = t%d;", k, vk);
            pld_cg_emit(g, "if (t%d < 0) t%d += t%d.shape[%d];", k, k, ob, d);
            pld_cg_emit(g, "if (t%d < 0 || t%d >= t%d.shape[%d])", k, k, ob, d);
            snprintf(args, sizeof args, "(long long)t%d, %d, (long long)t%d.shape[%d]", k, d, ob, d);
            g->ind++;
            fail_fmt(g, s, "index %lld out of range for dimension %d (size %lld)", args);
            g->ind--;
            pld_cg_emit(g, "t%d[%d] = t%d; t%d[%d] = 1; t%d[%d] = 1;", lo, d, k, ex, d, dr, d);
        }
    }
    pld_cg_emit(g, "%s = t%d;", dst, ob);
    pld_cg_emit(g, "{");
    g->ind++;
    pld_cg_emit(g, "int k = 0;");
    pld_cg_emit(g, "for (int d = 0; d < t%d.rank; d++) {", ob);
    g->ind++;
    pld_cg_emit(g, "%s.data += t%d[d] * t%d.stride[d] * %d;", dst, lo, ob, es);
    pld_cg_emit(g, "if (t%d[d]) continue;", dr);
    pld_cg_emit(g, "const int64_t room = t%d.valid[d] - t%d[d];", ob, lo);
    pld_cg_emit(g, "%s.shape[k] = t%d[d]; %s.stride[k] = t%d.stride[d];", dst, ex, dst, ob);
    pld_cg_emit(g, "%s.valid[k] = room < 0 ? 0 : room < t%d[d] ? room : t%d[d];", dst, ex, ex);
    pld_cg_emit(g, "k++;");
    g->ind--;
    pld_cg_emit(g, "}");
    pld_cg_emit(g, "%s.rank = k;", dst);
    pld_cg_emit(g, "for (; k < PC_MAX_RANK; k++) { %s.shape[k] = %s.valid[k] = 1; %s.stride[k] = 0; }", dst, dst, dst);
    g->ind--;
    pld_cg_emit(g, "}");
    return 0;
}

/* `tensor[a:b, ...] = value` for a tensor value: the copy
 * pld_exec_subscript_assign makes (the value first, then the target's view;
 * a value of lower rank aligns with the trailing dims), through the kernel
 * library's copy; -2 when not such an assignment */
int pld_cg_slice_assign(cg_t *g, const pld_expr_t *t, const pld_expr_t *v)
{
    if (!v->type || !pld_type_is_tensorlike(v->type) || !t->u.sub.obj->type || !pld_type_is_tensorlike(t->u.sub.obj->type))
        return -2;
    int slices = 0;
    for (int d = 0; d < t->u.sub.n; d++)
        slices += t->u.sub.items[d]->kind == PLD_EX_SLICE;
    /* no slice: the same window when fewer indices than the rank (x[i] = row; pld_cg_subscript) */
    if ((slices == 0 && !(t->u.sub.obj->type->rank > t->u.sub.n && t->u.sub.n > 0)) || t->u.sub.n > PC_MAX_RANK)
        return -2;
    const int s = pld_cg_site(g, t), src = tmp(g), dv = tmp(g);
    char sn[32], dn[32];
    snprintf(sn, sizeof sn, "t%d", src);
    snprintf(dn, sizeof dn, "t%d", dv);
    pld_cg_emit(g, "pc_tensor t%d, t%d;", src, dv);
    if (pld_cg_tensor_into(g, v, sn) || pld_cg_subscript(g, t, dn))
        return -1;
    pld_cg_emit(g, "{");
    g->ind++;
    pld_cg_emit(g, "int same = %s.rank == %s.rank;", sn, dn);
    pld_cg_emit(g, "for (int d = 0; same && d < %s.rank; d++) same = %s.shape[d] == %s.shape[d];", dn, sn, dn);
    pld_cg_emit(g, "if (!same && %s.rank <= %s.rank) {", sn, dn);
    g->ind++;
    pld_cg_emit(g, "int ok = 1;");
    pld_cg_emit(g, "for (int d = 0; d < %s.rank; d++) {", dn);
    pld_cg_emit(g, "    const int j = d - (%s.rank - %s.rank);", dn, sn);
    pld_cg_emit(g, "    ok &= j < 0 ? %s.shape[d] == 1 : %s.shape[d] == %s.shape[j];", dn, dn, sn);
    pld_cg_emit(g, "}");
    pld_cg_emit(g, "same = ok;");
    g->ind--;
    pld_cg_emit(g, "}");
    pld_cg_emit(g, "if (!same) return pc_cold(), rt->fail(bk, %d, \"slice assignment: the value's shape does not match the window\");", s);
    pld_cg_emit(g, "if (%s.dt != %s.dt) return pc_cold(), rt->fail(bk, %d, \"slice assignment: dtype %s into %s\");", sn, dn, s,
                pld_dtype_name(v->type->dtype), pld_dtype_name(t->u.sub.obj->type->dtype));
    pld_cg_emit(g, "pc_view vs, vd;");
    pld_cg_emit(g, "pc_view_tensor(&vs, &%s);", sn);
    pld_cg_emit(g, "vd.data = %s.data; vd.dt = %s.dt; vd.rank = %s.rank;", dn, dn, sn);
    pld_cg_emit(g, "for (int j = 0; j < %s.rank; j++) {", sn);
    pld_cg_emit(g, "    vd.shape[j] = %s.shape[%s.rank - %s.rank + j];", dn, dn, sn);
    pld_cg_emit(g, "    vd.strides[j] = %s.stride[%s.rank - %s.rank + j];", dn, dn, sn);
    pld_cg_emit(g, "}");
    pld_cg_emit(g, "char e_[256];");
    pld_cg_emit(g, "e_[0] = 0;");
    pld_cg_emit(g, "if (rt->k->copy(&vd, &vs, e_, sizeof e_))");
    g->ind++;
    fail_fmt(g, s, "slice assignment: %s", "e_");
    g->ind--;
    g->ind--;
    pld_cg_emit(g, "}");
    return 0;
}

/* ---------------------------------------------------------------- constants, dynamic dims */

static int is_dynamic_call(const pld_expr_t *v)
{
    return v->kind == PLD_EX_CALL && v->u.call.fn->kind == PLD_EX_ATTR && strcmp(v->u.call.fn->u.attr.attr, "dynamic") == 0;
}

/* a dynamic dimension in a pl.at / pl.spmd scope unit: the enclosing
 * function bound it from its tensor parameters' shapes at its call; a
 * captured parameter the function never reassigns is the tensor it was bound
 * from, and the scope's launch carries it (args[ti]'s ChipTensor shapes) */
/* a dynamic dimension no argument of the unit carries: the value the run
 * bound (rt->dyn_dim: the interpreter's table, sim's message when unbound) */
static int bound_dim(cg_t *g, const pld_expr_t *e, int *fl, pld_dtype_t *dt)
{
    *fl = 0;
    *dt = PLD_DT_INDEX;
    const int t = tmp(g);
    pld_cg_emit(g, "int64_t t%d; if (rt->dyn_dim(bk, %d, \"%s\", &t%d)) return pc_cold(), 1;", t, pld_cg_site(g, e), e->u.name, t);
    return t;
}

static int scope_dim(cg_t *g, const pld_expr_t *e, int *fl, pld_dtype_t *dt, int table)
{
    const pld_func_t *fn = g->fn;
    for (int i = 0, ti = 0; i < g->unp; i++) {
        const int sl = g->uparams[i];
        if (g->slots[sl].kind != SK_TENSOR)
            continue;
        const pld_type_t *pt = NULL;
        for (int k = 0; k < fn->nparams && !pt; k++)
            if (fn->params[k].slot == sl)
                pt = fn->params[k].type;
        int reassigned = 0;
        for (int k = 0; pt && k < fn->body.n && !reassigned; k++)
            reassigned = pld_cg_def_type_stmt(fn->body.stmts[k], sl) != NULL;
        for (int d = 0; pt && !reassigned && d < pt->rank && d < PC_MAX_RANK; d++)
            if (pt->shape[d].kind == PLD_DIM_SYM && pt->shape[d].sym == e->u.name) {
                *fl = 0;
                *dt = PLD_DT_INDEX;
                const int t = tmp(g);
                pld_cg_emit(g, "int64_t t%d = pc_arg_dim(args, %d, %d); /* %s */", t, ti, d, e->u.name);
                return t;
            }
        ti++;
    }
    return table ? bound_dim(g, e, fl, dt) : -2;
}

int pld_cg_const_dyn(cg_t *g, const pld_expr_t *e, int *fl, pld_dtype_t *dt)
{
    static int depth; /* a computed constant naming others (the checker rejects cycles) */
    if (e->kind != PLD_EX_NAME || depth > 32)
        return -2;
    const pld_const_decl_t *cd = NULL;
    for (int i = 0; i < g->p->nconsts; i++)
        if (g->p->consts[i].name == e->u.name)
            cd = &g->p->consts[i]; /* a later constant of the same name wins (pld_const_index) */
    if (cd && !is_dynamic_call(pld_const_value(cd))) {
        const pld_expr_t *v = pld_const_value(cd);
        if (v->kind == PLD_EX_LIST || v->kind == PLD_EX_TUPLE || v->kind == PLD_EX_STR || v->kind == PLD_EX_ATTR ||
            !v->type || v->type->kind != PLD_TY_SCALAR)
            return -2;
        depth++;
        const int t = pld_cg_scalar(g, v, fl, dt);
        depth--;
        return t;
    }
    /* a dynamic dimension: bound from the shapes of the kernel's tensor
     * arguments at its launch (pld_call.c), so the dimension of a tensor
     * parameter declared with it is its value (INDEX) */
    if (pld_check_func_ctx(g->fn) != PLD_CTX_KERNEL)
        return cd ? scope_dim(g, e, fl, dt, 1) : -2;
    for (int i = 0, ti = 0; i < g->fn->nparams; i++) {
        const pld_type_t *pt = g->fn->params[i].type;
        const int sl = g->fn->params[i].slot;
        if (sl < 0 || g->slots[sl].kind != SK_TENSOR)
            continue;
        for (int d = 0; pt && d < pt->rank && d < PC_MAX_RANK; d++)
            if (pt->shape[d].kind == PLD_DIM_SYM && pt->shape[d].sym == e->u.name) {
                *fl = 0;
                *dt = PLD_DT_INDEX;
                const int t = tmp(g);
                pld_cg_emit(g, "int64_t t%d = pc_arg_dim(args, %d, %d); /* %s */", t, ti, d, e->u.name);
                return t;
            }
        ti++;
    }
    return cd ? bound_dim(g, e, fl, dt) : -2;
}

/* `tensor[i, j, ...] = scalar` (indices only): the element write
 * pld_exec_subscript_assign makes (the value first, then the tensor and its
 * indices; the dtype, index count and bounds checks with sim's messages; a
 * float stored into integers truncated toward zero, saturated, NaN 0);
 * -2 when not such an assignment */
int pld_cg_elem_assign(cg_t *g, const pld_expr_t *t, const pld_expr_t *v)
{
    const pld_expr_t *obj = t->u.sub.obj;
    const int n = t->u.sub.n;
    if (!obj->type || !pld_type_is_tensorlike(obj->type) || !v->type || v->type->kind != PLD_TY_SCALAR || n < 1 ||
        n > PC_MAX_RANK)
        return -2;
    for (int d = 0; d < n; d++)
        if (t->u.sub.items[d]->kind == PLD_EX_SLICE)
            return -2;
    const int s = pld_cg_site(g, t);
    const pld_dtype_t edt = obj->type->dtype;
    int fv;
    pld_dtype_t dv;
    const int val = pld_cg_scalar(g, v, &fv, &dv);
    if (val < 0)
        return -1;
    const int ob = tmp(g);
    char on[32];
    snprintf(on, sizeof on, "t%d", ob);
    pld_cg_emit(g, "pc_tensor t%d;", ob);
    if (pld_cg_tensor_into(g, obj, on))
        return -1;
    int idx[PC_MAX_RANK];
    if (pld_cg_int_indices(g, t->u.sub.items, n, idx))
        return -1;
    if (pld_cg_elem_dtype_refused(g, s, edt))
        return 0;
    char a[96];
    snprintf(a, sizeof a, "%d, (int)t%d.rank", n, ob);
    pld_cg_emit(g, "if (%d != t%d.rank)", n, ob);
    g->ind++;
    fail_fmt(g, s, "%d indices for a rank-%d tensor", a);
    g->ind--;
    const int off = tmp(g);
    pld_cg_emit(g, "int64_t t%d = 0;", off);
    for (int d = 0; d < n; d++) {
        pld_cg_emit(g, "if (t%d < 0 || t%d >= t%d.shape[%d])", idx[d], idx[d], ob, d);
        snprintf(a, sizeof a, "(long long)t%d, %d, (long long)t%d.shape[%d]", idx[d], d, ob, d);
        g->ind++;
        fail_fmt(g, s, "index %lld out of range for dimension %d (size %lld)", a);
        g->ind--;
        pld_cg_emit(g, "t%d += t%d * t%d.stride[%d];", off, idx[d], ob, d);
    }
    char data[32];
    snprintf(data, sizeof data, "t%d.data", ob);
    pld_cg_elem_store(g, data, edt, off, val, fv);
    return 0;
}
