/* pld_check_elem.c - the checker's rules for the element-wise ops of issue 11:
 * PyPTO's dtype, shape and attribute constraints (the facts and their PyPTO
 * sources: docs/ops-numerics.md) and the result types. Called first by
 * pld_ck_infer_op (pld_check_infer.c) for every bound op call. */
#include "pld_check_int.h"

#include <stdint.h>
#include <string.h>

static int bcast(pld_ck_t *ck, ck_call_t *c, const pld_type_t *a, const pld_type_t *b, pld_dim_t *out, int *rank)
{
    int r = a->rank > b->rank ? a->rank : b->rank;
    if (r > PLD_CK_MAX_RANK)
        return 0;
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->rank), ib = i - (r - b->rank);
        const pld_dim_t *da = ia >= 0 ? &a->shape[ia] : NULL, *db = ib >= 0 ? &b->shape[ib] : NULL;
        if (!da) {
            out[i] = *db;
            continue;
        }
        if (!db) {
            out[i] = *da;
            continue;
        }
        if (da->kind == PLD_DIM_CONST && db->kind == PLD_DIM_CONST && da->v != db->v && da->v != 1 && db->v != 1) {
            pld_ck_error(ck, c->call->span, "%s operand shapes %s and %s are not broadcast-compatible (dimension %d: %lld vs %lld)",
                     c->info->name, pld_ck_tystr(ck, a), pld_ck_tystr(ck, b), i, (long long)da->v, (long long)db->v);
            return 0;
        }
        out[i] = (da->kind == PLD_DIM_CONST && da->v == 1) ? *db : *da;
    }
    *rank = r;
    return 1;
}

/* A dotted-name expression pl.<a>[.<b>] (arena), NULL when out of memory. */
static pld_expr_t *pl_name(pld_ck_t *ck, const char *a, const char *b, pld_span_t sp)
{
    pld_expr_t *n = pld_arena_alloc(&ck->p->arena, sizeof *n * 3);
    if (!n) {
        ck->oom = 1;
        return NULL;
    }
    memset(n, 0, sizeof *n * 3);
    const char *parts[3] = {"pl", a, b};
    for (int i = 0; i < (b ? 3 : 2); i++) {
        n[i].span = sp;
        n[i].height = i + 1;
        n[i].op = -1;
        n[i].slot = -1;
        n[i].aux = -1;
        n[i].kind = i ? PLD_EX_ATTR : PLD_EX_NAME;
        if (i == 0)
            n[i].u.name = pld_ast_intern_cstr(ck->p, "pl");
        else {
            n[i].u.attr.obj = &n[i - 1];
            n[i].u.attr.attr = pld_ast_intern_cstr(ck->p, parts[i]);
            n[i].u.attr.attr_span = sp;
        }
    }
    return b ? &n[2] : &n[1];
}

/* PyPTO's promotion (PromoteDataTypes) of the tensor element-wise binary ops
 * (add, sub, mul, div, maximum, minimum), where it is an exact widening: an
 * FP16 or BF16 operand beside an FP32 one becomes pl.tensor.cast(x,
 * target_type=pl.FP32) in the tree, so every backend runs the cast and the
 * FP32 op (the kernel library's). 1 when it rewrote, 0 when it does not apply. */
static int promote_tensor_operand(pld_ck_t *ck, ck_call_t *c)
{
    int id = c->info->id;
    if (id != PLD_OPID_TENSOR_ADD && id != PLD_OPID_TENSOR_SUB && id != PLD_OPID_TENSOR_MUL &&
        id != PLD_OPID_TENSOR_DIV && id != PLD_OPID_TENSOR_MAXIMUM && id != PLD_OPID_TENSOR_MINIMUM)
        return 0;
    const pld_type_t *a = c->types[0], *b = c->types[1];
    if (a->kind != PLD_TY_TENSOR || b->kind != PLD_TY_TENSOR)
        return 0;
    int k = a->dtype == PLD_DT_FP32 ? 1 : 0;
    pld_dtype_t narrow = c->types[k]->dtype;
    if (c->types[!k]->dtype != PLD_DT_FP32 || (narrow != PLD_DT_BF16 && narrow != PLD_DT_FP16))
        return 0;
    pld_expr_t *e = (pld_expr_t *)c->call, *x = c->args[k]; /* the checker owns the tree (bind_call writes bound) */
    int ai = -1;
    for (int i = 0; i < e->u.call.nargs; i++)
        if (e->u.call.args[i].value == x)
            ai = i;
    pld_expr_t *call = pld_arena_alloc(&ck->p->arena, sizeof *call);
    pld_arg_t *args = pld_arena_alloc(&ck->p->arena, sizeof *args * 2);
    pld_expr_t *fn = pl_name(ck, "tensor", "cast", x->span), *dt = pl_name(ck, "FP32", NULL, x->span);
    if (ai < 0 || !call || !args || !fn || !dt) {
        ck->oom |= !call || !args;
        return 0;
    }
    memset(call, 0, sizeof *call);
    memset(args, 0, sizeof *args * 2);
    args[0].value = x;
    args[1].kw = pld_ast_intern_cstr(ck->p, "target_type");
    args[1].kw_span = x->span;
    args[1].value = dt;
    call->kind = PLD_EX_CALL;
    call->span = x->span;
    call->height = x->height + 1 > 3 ? x->height + 1 : 3;
    call->op = -1;
    call->slot = -1;
    call->aux = -1;
    call->u.call.fn = fn;
    call->u.call.args = args;
    call->u.call.nargs = 2;
    const pld_type_t *t = pld_ck_expr(ck, call);
    if (!t || t->kind != PLD_TY_TENSOR || t->dtype != PLD_DT_FP32)
        return 0;
    e->u.call.args[ai].value = call;
    c->args[k] = call;
    c->types[k] = t;
    if (e->bound)
        for (int i = 0; i < c->info->nparams; i++)
            if (e->bound[i] == x)
                e->bound[i] = call;
    return 1;
}

/* Same-dtype element-wise binary op with NumPy-style broadcasting: the
 * broadcast shape, the first operand's valid shape when the ranks agree. */
const pld_type_t *pld_ck_infer_binary(pld_ck_t *ck, ck_call_t *c)
{
    const pld_type_t *a = c->types[0], *b = c->types[1];
    if (!a || !b || a->kind == PLD_TY_UNKNOWN || b->kind == PLD_TY_UNKNOWN)
        return a ? a : &pld_type_unknown;
    if (a->dtype != b->dtype && promote_tensor_operand(ck, c)) {
        a = c->types[0];
        b = c->types[1];
    }
    if (a->dtype != b->dtype) {
        pld_ck_error(ck, c->call->span, "%s operands have different dtypes (%s and %s); convert one with pl.cast first",
                 c->info->name, pld_dtype_name(a->dtype), pld_dtype_name(b->dtype));
        return a;
    }
    pld_dim_t dims[PLD_CK_MAX_RANK];
    int r;
    if (!bcast(ck, c, a, b, dims, &r))
        return a;
    return pld_ck_shaped(ck, a->kind, a->dtype, dims, r, a->valid && a->rank == r ? a->valid : NULL,
                  a->kind == PLD_TY_TILE ? PLD_MEM_VEC : PLD_MEM_NONE);
}

static int is_int_dt(pld_dtype_t dt)
{
    return pld_dtype_is_int(dt);
}

static int known(const pld_type_t *t)
{
    return t && t->kind != PLD_TY_UNKNOWN;
}

static int is_array(const pld_type_t *t)
{
    return known(t) && (t->kind == PLD_TY_TILE || pld_type_is_tensorlike(t));
}

/* The value of a compile-time bool/int argument, dflt when absent or not constant. */
static int64_t const_arg(pld_ck_t *ck, ck_call_t *c, int i, int64_t dflt)
{
    int64_t v;
    return c->args[i] && pld_ck_const_int(ck, c->args[i], &v) ? v : dflt;
}

/* A copy of t's type (tile: in Vec, same valid shape). */
static const pld_type_t *like(pld_ck_t *ck, const pld_type_t *t, pld_dtype_t dt)
{
    if (!is_array(t))
        return t ? t : &pld_type_unknown;
    int tile = t->kind == PLD_TY_TILE;
    return pld_ck_shaped(ck, tile ? PLD_TY_TILE : PLD_TY_TENSOR, dt, t->shape, t->rank, tile ? t->valid : NULL,
                         tile ? PLD_MEM_VEC : PLD_MEM_NONE);
}

static void need_dtypes(pld_ck_t *ck, ck_call_t *c, int i, const pld_dtype_t *ok, int n, const char *words)
{
    const pld_type_t *t = c->types[i];
    if (!known(t) || t->dtype == PLD_DT_NONE)
        return;
    for (int k = 0; k < n; k++)
        if (t->dtype == ok[k])
            return;
    pld_ck_error(ck, c->args[i] ? c->args[i]->span : c->call->span, "%s needs %s, got %s", c->info->name, words,
                 pld_dtype_name(t->dtype));
}

static void need_int(pld_ck_t *ck, ck_call_t *c, int i)
{
    const pld_type_t *t = c->types[i];
    if (known(t) && !is_int_dt(t->dtype))
        pld_ck_error(ck, c->args[i]->span, "%s requires an integer %s dtype, but got %s", c->info->name,
                     t->kind == PLD_TY_SCALAR ? "scalar" : t->kind == PLD_TY_TILE ? "tile" : "tensor",
                     pld_dtype_name(t->dtype));
}

/* A scalar shift count of shls/shrs (and the scalar form of shl/shr): a
 * compile-time negative count is an error (PyPTO rejects it: the hardware has
 * no defined result). */
static void need_count(pld_ck_t *ck, ck_call_t *c, int i)
{
    int64_t v;
    if (c->args[i] && pld_ck_const_int(ck, c->args[i], &v) && v < 0)
        pld_ck_error(ck, c->args[i]->span, "%s shift count must be zero or positive, got %lld", c->info->name,
                     (long long)v);
}

static void same_dtype(pld_ck_t *ck, ck_call_t *c, int i, int j)
{
    const pld_type_t *a = c->types[i], *b = c->types[j];
    if (is_array(a) && is_array(b) && a->dtype != b->dtype)
        pld_ck_error(ck, c->call->span, "%s operands have different dtypes (%s and %s); convert one with pl.cast first",
                     c->info->name, pld_dtype_name(a->dtype), pld_dtype_name(b->dtype));
}

static void same_shape(pld_ck_t *ck, ck_call_t *c, int i, int j, const char *what)
{
    const pld_type_t *a = c->types[i], *b = c->types[j];
    if (!is_array(a) || !is_array(b))
        return;
    int ok = a->rank == b->rank;
    for (int d = 0; ok && d < a->rank; d++)
        ok = pld_dim_eq(&a->shape[d], &b->shape[d]) != 0;
    if (!ok)
        pld_ck_error(ck, c->args[j]->span, "%s %s %s must have the shape of %s", c->info->name, what,
                     pld_ck_tystr(ck, b), pld_ck_tystr(ck, a));
}

static void need_2d(pld_ck_t *ck, ck_call_t *c, int i, const char *what)
{
    const pld_type_t *t = c->types[i];
    if (is_array(t) && t->rank != 2)
        pld_ck_error(ck, c->args[i]->span, "%s %s must be 2-D, got %s", c->info->name, what, pld_ck_tystr(ck, t));
}

/* high_precision=True (parameter i): FP16 / FP32 (float for div). */
static void high_precision(pld_ck_t *ck, ck_call_t *c, int i, int any_float)
{
    const pld_type_t *t = c->types[0];
    if (!known(t) || !const_arg(ck, c, i, 0))
        return;
    pld_dtype_t dt = t->dtype;
    if (any_float ? !pld_dtype_is_float(dt) : (dt != PLD_DT_FP16 && dt != PLD_DT_FP32))
        pld_ck_error(ck, c->args[i]->span, "%s supports high_precision only for %s, got %s", c->info->name,
                     any_float ? "float dtypes" : "FP16 or FP32", pld_dtype_name(dt));
}

static void cmp_type(pld_ck_t *ck, ck_call_t *c, int i)
{
    int64_t v;
    if (!c->args[i])
        return;
    if (!pld_ck_const_int(ck, c->args[i], &v) || v < 0 || v > 5)
        pld_ck_error(ck, c->args[i]->span, "%s cmp_type must be a constant in 0..5 (EQ=0, NE=1, LT=2, LE=3, GT=4, GE=5)",
                     c->info->name);
}

/* tile.cmp/cmps: PyPTO's packed predicate mask, UINT8 with the last dim
 * roundup(ceil(N / 8), 32) and the valid last dim ceil(valid / 8). */
static const pld_type_t *mask_type(pld_ck_t *ck, const pld_type_t *t)
{
    if (!is_array(t) || t->rank < 1)
        return &pld_type_unknown;
    pld_dim_t d[PLD_CK_MAX_RANK], v[PLD_CK_MAX_RANK];
    const int r = t->rank;
    memcpy(d, t->shape, sizeof *d * (size_t)r);
    if (t->valid)
        memcpy(v, t->valid, sizeof *v * (size_t)r);
    if (d[r - 1].kind == PLD_DIM_CONST)
        d[r - 1].v = ((d[r - 1].v + 7) / 8 + 31) / 32 * 32;
    else
        return &pld_type_unknown;
    if (t->valid) {
        if (v[r - 1].kind == PLD_DIM_CONST)
            v[r - 1].v = (v[r - 1].v + 7) / 8;
        else
            v[r - 1] = d[r - 1];
    }
    return pld_ck_shaped(ck, PLD_TY_TILE, PLD_DT_UINT8, d, r, t->valid ? v : NULL, PLD_MEM_VEC);
}

static const pld_type_t *gen_type(pld_ck_t *ck, ck_call_t *c, int tri)
{
    pld_dim_t dims[PLD_CK_MAX_RANK], vd[PLD_CK_MAX_RANK];
    int r = pld_ck_dims_of_list(ck, c->args[1], dims);
    pld_dtype_t dt = c->args[tri ? 3 : 2] ? pld_ck_dtype_arg(ck, c->args[tri ? 3 : 2]) : PLD_DT_INT32;
    static const pld_dtype_t ci_ok[] = {PLD_DT_INT16, PLD_DT_INT32, PLD_DT_UINT16, PLD_DT_UINT32};
    static const pld_dtype_t tri_ok[] = {PLD_DT_INT8, PLD_DT_UINT8, PLD_DT_INT16, PLD_DT_INT32, PLD_DT_UINT16,
                                         PLD_DT_UINT32, PLD_DT_FP16, PLD_DT_BF16, PLD_DT_FP32};
    const pld_dtype_t *ok = tri ? tri_ok : ci_ok;
    int nok = tri ? 9 : 4, found = 0;
    for (int k = 0; k < nok; k++)
        found |= dt == ok[k];
    if (!found) {
        pld_ck_error(ck, c->call->span, "%s needs dtype %s, got %s", c->info->name,
                     tri ? "INT8, UINT8, INT16, UINT16, INT32, UINT32, FP16, BF16 or FP32" : "INT16, INT32, UINT16 or UINT32",
                     pld_dtype_name(dt));
        return &pld_type_unknown;
    }
    if (r < 1)
        return &pld_type_unknown;
    for (int i = 0; i < r; i++)
        if (dims[i].kind != PLD_DIM_CONST || dims[i].v <= 0) {
            pld_ck_error(ck, c->args[1]->span, "%s shape element %d must be a positive compile-time constant",
                         c->info->name, i);
            return &pld_type_unknown;
        }
    if (tri && r != 2) {
        pld_ck_error(ck, c->args[1]->span, "%s needs a 2-D shape, got %d dimensions", c->info->name, r);
        return &pld_type_unknown;
    }
    if (!tri) {
        if (dims[r - 1].v == 1)
            pld_ck_error(ck, c->args[1]->span, "%s needs an innermost dimension other than 1", c->info->name);
        for (int i = 0; i < r - 1; i++)
            if (dims[i].v != 1) {
                pld_ck_error(ck, c->args[1]->span,
                             "%s only populates the first row: every leading dimension must be 1 (use [1, N])",
                             c->info->name);
                break;
            }
    }
    int tile = c->info->id != PLD_OPID_TENSOR_CI;
    const pld_dim_t *valid = NULL;
    if (tri && c->args[2]) {
        int vr = pld_ck_dims_of_list(ck, c->args[2], vd);
        if (vr == r) {
            for (int i = 0; i < r; i++)
                if (vd[i].kind == PLD_DIM_CONST && (vd[i].v < 0 || vd[i].v > dims[i].v))
                    pld_ck_error(ck, c->args[2]->span, "%s valid_shape element %d must be within 0..%lld",
                                 c->info->name, i, (long long)dims[i].v);
            valid = vd;
        } else if (vr >= 0) {
            pld_ck_error(ck, c->args[2]->span, "%s valid_shape must have %d elements", c->info->name, r);
        }
    }
    return pld_ck_shaped(ck, tile ? PLD_TY_TILE : PLD_TY_TENSOR, dt, dims, r, valid, tile ? PLD_MEM_VEC : PLD_MEM_NONE);
}

/* tile.random / tensor.random (PyPTO tile_ops/memory.cpp DeduceTileRandomType,
 * tensor_ops/memory.cpp DeduceTensorRandomType): six INT32 seed scalars (an
 * integer literal is one), a positive constant 2-D shape, the tile's optional
 * valid_shape in (0, shape], dtype INT32 or UINT32 (default UINT32), rounds 7
 * or 10. */
static const pld_type_t *random_type(pld_ck_t *ck, ck_call_t *c)
{
    const int tile = c->info->id == PLD_OPID_TILE_RANDOM, di = tile ? 8 : 7;
    const char *nm = c->info->name;
    int64_t v;
    for (int i = 0; i < 6; i++) {
        const pld_type_t *t = c->types[i];
        if (pld_ck_const_int(ck, c->args[i], &v)) {
            if (v < INT32_MIN || v > (int64_t)UINT32_MAX)
                pld_ck_error(ck, c->args[i]->span, "%s seed argument %d must fit in 32 bits, got %lld", nm, i,
                             (long long)v);
        } else if (known(t) && (t->kind != PLD_TY_SCALAR || t->dtype != PLD_DT_INT32)) {
            pld_ck_error(ck, c->args[i]->span, "%s requires seed argument %d to have INT32 dtype, but got %s", nm, i,
                         pld_ck_tystr(ck, t));
        }
    }
    pld_dtype_t dt = c->args[di] ? pld_ck_dtype_arg(ck, c->args[di]) : PLD_DT_UINT32;
    if (dt != PLD_DT_INT32 && dt != PLD_DT_UINT32)
        pld_ck_error(ck, c->args[di]->span, "%s requires dtype to be one of {INT32, UINT32}, but got %s", nm,
                     pld_dtype_name(dt));
    int64_t rounds = const_arg(ck, c, di + 1, 10);
    if (rounds != 7 && rounds != 10)
        pld_ck_error(ck, c->args[di + 1]->span, "%s requires rounds to be 7 or 10, but got %lld", nm,
                     (long long)rounds);
    pld_dim_t dims[PLD_CK_MAX_RANK], vd[PLD_CK_MAX_RANK];
    int r = pld_ck_dims_of_list(ck, c->args[6], dims);
    if (r < 0)
        return &pld_type_unknown;
    if (r != 2) {
        pld_ck_error(ck, c->args[6]->span, "%s requires a 2D shape (rows, cols), but got rank %d", nm, r);
        return &pld_type_unknown;
    }
    for (int i = 0; i < r; i++)
        if (dims[i].kind != PLD_DIM_CONST || dims[i].v <= 0) {
            pld_ck_error(ck, c->args[6]->span, "%s shape element %d must be a positive compile-time constant", nm, i);
            return &pld_type_unknown;
        }
    const pld_dim_t *valid = NULL;
    if (tile && c->args[7]) {
        int vr = pld_ck_dims_of_list(ck, c->args[7], vd);
        if (vr >= 0 && vr != r)
            pld_ck_error(ck, c->args[7]->span, "%s valid_shape rank (%d) must match shape rank (%d)", nm, vr, r);
        for (int i = 0; vr == r && i < r; i++)
            if (vd[i].kind != PLD_DIM_CONST)
                pld_ck_error(ck, c->args[7]->span, "%s valid_shape element %d must be a compile-time constant", nm, i);
            else if (vd[i].v <= 0 || vd[i].v > dims[i].v)
                pld_ck_error(ck, c->args[7]->span, "%s valid_shape element %d (%lld) must be in (0, shape dim %lld]",
                             nm, i, (long long)vd[i].v, (long long)dims[i].v);
        valid = vr == r ? vd : NULL;
    }
    return pld_ck_shaped(ck, tile ? PLD_TY_TILE : PLD_TY_TENSOR, dt, dims, r, valid, tile ? PLD_MEM_VEC : PLD_MEM_NONE);
}

const pld_type_t *pld_ck_elem_call(pld_ck_t *ck, ck_call_t *c)
{
    const pld_type_t *t0 = c->types[0] ? c->types[0] : &pld_type_unknown;
    static const pld_dtype_t f16_32[] = {PLD_DT_FP16, PLD_DT_FP32};
    static const pld_dtype_t fp32[] = {PLD_DT_FP32};
    static const pld_dtype_t i16[] = {PLD_DT_INT16, PLD_DT_UINT16};
    static const pld_dtype_t sels_ok[] = {PLD_DT_INT8, PLD_DT_UINT8, PLD_DT_INT16, PLD_DT_UINT16,
                                          PLD_DT_INT32, PLD_DT_UINT32, PLD_DT_FP16, PLD_DT_FP32};
    switch (c->info->id) {
    /* extra rules only: inference as before */
    case PLD_OPID_TILE_DIV:
        /* PyPTO's TDIV contract (tile_ops/elementwise.cpp:150-181): one dtype of
         * INT16, INT32, FP16, FP32; one physical shape and one valid shape */
        if (is_array(t0) && known(c->types[1]) && c->types[1]->kind == PLD_TY_TILE) {
            const pld_type_t *b = c->types[1];
            static const pld_dtype_t tdiv[] = {PLD_DT_INT16, PLD_DT_INT32, PLD_DT_FP16, PLD_DT_FP32};
            need_dtypes(ck, c, 0, tdiv, 4, "INT16, INT32, FP16 or FP32");
            same_shape(ck, c, 0, 1, "rhs");
            int same = t0->rank == b->rank;
            for (int d = 0; same && t0->valid && b->valid && d < t0->rank; d++)
                same = pld_dim_eq(&t0->valid[d], &b->valid[d]) != 0;
            if (!same)
                pld_ck_error(ck, c->args[1]->span, "%s needs operands of one valid shape", c->info->name);
        }
        /* fall through */
    case PLD_OPID_TENSOR_DIV:
        high_precision(ck, c, 2, 1);
        return NULL;
    case PLD_OPID_TILE_LOG: case PLD_OPID_TENSOR_LOG:
        need_dtypes(ck, c, 0, f16_32, 2, "FP16 or FP32"); /* PyPTO checks it with or without high_precision */
        return NULL;
    case PLD_OPID_TILE_RECIP:
        high_precision(ck, c, 1, 0);
        return NULL;
    case PLD_OPID_TILE_RSQRT:
        if (c->args[1] && known(c->types[1])) {
            same_dtype(ck, c, 0, 1);
            same_shape(ck, c, 0, 1, "tmp");
        }
        return NULL;
    case PLD_OPID_TENSOR_MAXIMUM: case PLD_OPID_TENSOR_MINIMUM:
        if (known(c->types[1]) && c->types[1]->kind == PLD_TY_SCALAR)
            return like(ck, t0, t0->dtype);
        if (known(c->types[1]) && !pld_type_is_tensorlike(c->types[1]))
            pld_ck_error(ck, c->args[1]->span, "%s expects a tensor or a scalar for 'rhs'; got %s", c->info->name,
                         pld_ck_tystr(ck, c->types[1]));
        return NULL;
    /* unary */
    case PLD_OPID_TENSOR_RECIP: case PLD_OPID_TENSOR_RSQRT:
        high_precision(ck, c, 1, 0);
        return like(ck, t0, t0->dtype);
    case PLD_OPID_TILE_SIN: case PLD_OPID_TILE_COS: case PLD_OPID_TENSOR_SIN: case PLD_OPID_TENSOR_COS:
        need_dtypes(ck, c, 0, fp32, 1, "FP32 (convert with pl.cast first)");
        return like(ck, t0, t0->dtype);
    case PLD_OPID_TILE_NOT: case PLD_OPID_TENSOR_NOT:
        need_dtypes(ck, c, 0, i16, 2, "INT16 or UINT16");
        return like(ck, t0, t0->dtype);
    /* binary, array right-hand side (tensor forms: or a scalar) */
    case PLD_OPID_TILE_AND: case PLD_OPID_TILE_OR: case PLD_OPID_TILE_XOR: case PLD_OPID_TILE_SHL: case PLD_OPID_TILE_SHR:
    case PLD_OPID_TENSOR_AND: case PLD_OPID_TENSOR_OR: case PLD_OPID_TENSOR_XOR: case PLD_OPID_TENSOR_SHL:
    case PLD_OPID_TENSOR_SHR:
        need_int(ck, c, 0);
        need_int(ck, c, 1);
        if (known(c->types[1]) && c->types[1]->kind == PLD_TY_SCALAR) {
            if (c->info->id == PLD_OPID_TENSOR_SHL || c->info->id == PLD_OPID_TENSOR_SHR)
                need_count(ck, c, 1);
            return like(ck, t0, t0->dtype);
        }
        return pld_ck_infer_binary(ck, c);
    case PLD_OPID_TILE_FMOD: case PLD_OPID_TILE_REM: case PLD_OPID_TENSOR_FMOD: case PLD_OPID_TILE_PRELU:
        if (c->info->id == PLD_OPID_TILE_PRELU) {
            need_dtypes(ck, c, 0, f16_32, 2, "FP16 or FP32");
            need_2d(ck, c, 0, "tile");
            same_shape(ck, c, 0, 1, "slope");
            need_2d(ck, c, 2, "tmp");
        }
        if (known(c->types[1]) && c->types[1]->kind == PLD_TY_SCALAR)
            return like(ck, t0, t0->dtype);
        return pld_ck_infer_binary(ck, c);
    /* binary, scalar right-hand side */
    case PLD_OPID_TILE_ANDS: case PLD_OPID_TILE_ORS: case PLD_OPID_TILE_XORS:
    case PLD_OPID_TENSOR_ANDS: case PLD_OPID_TENSOR_ORS: case PLD_OPID_TENSOR_XORS:
        need_int(ck, c, 0);
        need_int(ck, c, 1);
        return like(ck, t0, t0->dtype);
    case PLD_OPID_TILE_SHLS: case PLD_OPID_TILE_SHRS: case PLD_OPID_TENSOR_SHLS: case PLD_OPID_TENSOR_SHRS:
        need_int(ck, c, 0);
        need_int(ck, c, 1);
        need_count(ck, c, 1);
        return like(ck, t0, t0->dtype);
    case PLD_OPID_TILE_FMODS: case PLD_OPID_TILE_REMS: case PLD_OPID_TENSOR_FMODS: case PLD_OPID_TILE_LRELU:
        return like(ck, t0, t0->dtype);
    /* three operands */
    case PLD_OPID_TILE_ADDC: case PLD_OPID_TILE_SUBC: {
        same_dtype(ck, c, 0, 2);
        ck_call_t c2 = *c;
        const pld_type_t *r = pld_ck_infer_binary(ck, c);
        c2.types[0] = r, c2.types[1] = c->types[2], c2.args[1] = c->args[2];
        return known(r) && known(c->types[2]) ? pld_ck_infer_binary(ck, &c2) : r;
    }
    case PLD_OPID_TILE_ADDSC: case PLD_OPID_TILE_SUBSC: {
        ck_call_t c2 = *c;
        c2.types[1] = c->types[2], c2.args[1] = c->args[2];
        return pld_ck_infer_binary(ck, &c2);
    }
    /* compares and selects */
    case PLD_OPID_TILE_CMP: case PLD_OPID_TILE_CMPS: {
        cmp_type(ck, c, 2);
        const pld_type_t *r = c->info->id == PLD_OPID_TILE_CMP ? pld_ck_infer_binary(ck, c) : t0;
        return mask_type(ck, r);
    }
    case PLD_OPID_TENSOR_CMP:
        cmp_type(ck, c, 2);
        if (known(c->types[1]) && c->types[1]->kind == PLD_TY_SCALAR)
            return like(ck, t0, t0->dtype);
        return pld_ck_infer_binary(ck, c);
    case PLD_OPID_TILE_SEL: {
        need_int(ck, c, 0);
        ck_call_t c2 = *c;
        c2.types[0] = c->types[1], c2.types[1] = c->types[2], c2.args[0] = c->args[1], c2.args[1] = c->args[2];
        return pld_ck_infer_binary(ck, &c2);
    }
    case PLD_OPID_TILE_SELS: {
        need_2d(ck, c, 0, "mask");
        need_int(ck, c, 0);
        need_2d(ck, c, 1, "src");
        need_dtypes(ck, c, 1, sels_ok, 8, "INT8, UINT8, INT16, UINT16, INT32, UINT32, FP16 or FP32");
        need_2d(ck, c, 2, "tmp");
        const pld_type_t *s = c->types[3], *src = c->types[1];
        if (known(s) && is_array(src) && pld_dtype_is_float(s->dtype) && !pld_dtype_is_float(src->dtype))
            pld_ck_error(ck, c->args[3]->span, "%s scalar must be an integer for the %s source, got %s", c->info->name,
                         pld_dtype_name(src->dtype), pld_dtype_name(s->dtype));
        return like(ck, src, is_array(src) ? src->dtype : PLD_DT_NONE);
    }
    /* partial ops: one shape and dtype; src0's valid shape */
    case PLD_OPID_TILE_PART_ADD: case PLD_OPID_TILE_PART_MUL: case PLD_OPID_TILE_PART_MAX: case PLD_OPID_TILE_PART_MIN:
    case PLD_OPID_TENSOR_PART_ADD: case PLD_OPID_TENSOR_PART_MUL: case PLD_OPID_TENSOR_PART_MAX:
    case PLD_OPID_TENSOR_PART_MIN:
        same_dtype(ck, c, 0, 1);
        same_shape(ck, c, 0, 1, "source");
        if (t0->kind == PLD_TY_TILE)
            return like(ck, t0, t0->dtype);
        return is_array(t0) ? pld_ck_shaped(ck, PLD_TY_TENSOR, t0->dtype, t0->shape, t0->rank, t0->valid, PLD_MEM_NONE)
                            : t0;
    /* generators */
    case PLD_OPID_TILE_CI: case PLD_OPID_TENSOR_CI:
        need_int(ck, c, 0);
        return gen_type(ck, c, 0);
    case PLD_OPID_TILE_TRI:
        need_int(ck, c, 0);
        return gen_type(ck, c, 1);
    case PLD_OPID_TILE_RANDOM: case PLD_OPID_TENSOR_RANDOM:
        return random_type(ck, c);
    default:
        return NULL;
    }
}
