/* pld_check_layout.c - checker rules of the layout and gather ops:
 * pl.tile.transpose / pl.tensor.transpose, pl.tile.extract, pl.tile.concat /
 * pl.tensor.concat, pl.tile.gather (index form) and pl.tensor.gather (torch
 * style, dim + index), pl.tile.transpose_view, pl.tile/tensor.reinterpret_view
 * and pl.tensor.view, pl.tile.scatter / pl.tensor.scatter (index form),
 * sort32 and mrgsort (src/ir/op/tile_ops/sort.cpp), gather_row
 * (src/ir/op/tile_ops/paged_gather.cpp), gather_mask and scatter_mask, with
 * PyPTO's constraints (snapshot e2d0f78ae6d7:
 * src/ir/op/tile_ops/transform.cpp DeduceTileTransposeType,
 * DeduceTileExtractType, DeduceTileConcatType; src/ir/op/tile_ops/gather.cpp
 * DeduceTileGatherType; python/pypto/language/op/tensor_ops.py gather;
 * include/pypto/ir/reinterpret_view_semantics.h Resolve;
 * src/ir/op/tensor_ops/transform.cpp DeduceTensorViewType;
 * src/ir/op/tile_ops/scatter.cpp, src/ir/op/tensor_ops/scatter.cpp).
 * pld_ck_layout_call() hands every other op to pld_ck_gather_call
 * (pld_check_gather.c), which returns NULL for the rest. */
#include "pld_check.h"
#include "pld_check_int.h"

#include <string.h>

static int known(const pld_type_t *t)
{
    return t && t->kind != PLD_TY_UNKNOWN;
}

/* A constant axis of a rank-r operand, normalized (negative from the end); -1 after an error. */
static int axis_arg(pld_ck_t *ck, ck_call_t *c, int i, int r)
{
    int64_t v;
    if (!c->args[i] || !pld_ck_const_int(ck, c->args[i], &v)) {
        pld_ck_error(ck, c->args[i] ? c->args[i]->span : c->call->span, "%s %s must be a constant integer",
                     c->info->name, c->info->params[i].name);
        return -1;
    }
    if (v < -r || v >= r) {
        pld_ck_error(ck, c->args[i]->span, "%s %s %lld is out of range for rank %d", c->info->name,
                     c->info->params[i].name, (long long)v, r);
        return -1;
    }
    return (int)(v < 0 ? v + r : v);
}

static const pld_type_t *transpose(pld_ck_t *ck, ck_call_t *c)
{
    const pld_type_t *t = c->types[0], *tmp = c->types[3];
    if (!known(t))
        return &pld_type_unknown;
    if (t->rank < 2) {
        pld_ck_error(ck, c->call->span, "%s needs at least 2 dimensions, got %s", c->info->name, pld_ck_tystr(ck, t));
        return &pld_type_unknown;
    }
    int a1 = axis_arg(ck, c, 1, t->rank), a2 = axis_arg(ck, c, 2, t->rank);
    if (a1 < 0 || a2 < 0)
        return &pld_type_unknown;
    if (a1 == a2) {
        pld_ck_error(ck, c->call->span, "%s axis1 and axis2 must differ, both are axis %d", c->info->name, a1);
        return &pld_type_unknown;
    }
    if (known(tmp) && (tmp->dtype != t->dtype || tmp->rank != t->rank))
        pld_ck_error(ck, c->args[3]->span, "%s tmp_tile must have the input's dtype and rank, got %s for %s",
                     c->info->name, pld_ck_tystr(ck, tmp), pld_ck_tystr(ck, t));
    pld_dim_t d[PLD_CK_MAX_RANK], v[PLD_CK_MAX_RANK];
    for (int i = 0; i < t->rank; i++) {
        d[i] = t->shape[i];
        v[i] = t->valid ? t->valid[i] : t->shape[i];
    }
    pld_dim_t x = d[a1];
    d[a1] = d[a2], d[a2] = x;
    x = v[a1];
    v[a1] = v[a2], v[a2] = x;
    return pld_ck_shaped(ck, t->kind, t->dtype, d, t->rank, t->valid ? v : NULL, t->mem);
}

/* The memory space named by a target_memory argument (pl.MemorySpace.X), dflt when absent or unknown. */
static pld_mem_t mem_name(const pld_expr_t *e, pld_mem_t dflt)
{
    static const struct {
        const char *n;
        pld_mem_t m;
    } names[] = {{"Vec", PLD_MEM_VEC}, {"Mat", PLD_MEM_MAT}, {"Left", PLD_MEM_LEFT},
                 {"Right", PLD_MEM_RIGHT}, {"Acc", PLD_MEM_ACC}, {"Bias", PLD_MEM_BIAS}};
    if (!e || e->kind != PLD_EX_ATTR)
        return dflt;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(e->u.attr.attr, names[i].n) == 0)
            return names[i].m;
    return dflt;
}

static const pld_type_t *extract(pld_ck_t *ck, ck_call_t *c)
{
    const pld_type_t *t = c->types[0];
    for (int i = 1; i <= 2; i++)
        if (known(c->types[i]) && (c->types[i]->kind != PLD_TY_SCALAR || !pld_dtype_is_int(c->types[i]->dtype)))
            pld_ck_error(ck, c->args[i]->span, "%s %s must be an integer scalar, got %s", c->info->name,
                         c->info->params[i].name, pld_ck_tystr(ck, c->types[i]));
    pld_dim_t d[PLD_CK_MAX_RANK];
    int r = pld_ck_dims_of_list(ck, c->args[3], d);
    if (!known(t) || r < 0)
        return &pld_type_unknown;
    if (t->rank != 2 || r != 2) {
        pld_ck_error(ck, c->call->span, "%s needs a 2-D source and a 2-D shape, got %s and %d entries", c->info->name,
                     pld_ck_tystr(ck, t), r);
        return &pld_type_unknown;
    }
    for (int i = 0; i < 2; i++) {
        if (d[i].kind != PLD_DIM_CONST || d[i].v <= 0) {
            pld_ck_error(ck, c->args[3]->span, "%s shape[%d] must be a positive constant", c->info->name, i);
            return &pld_type_unknown;
        }
        if (t->shape[i].kind != PLD_DIM_CONST)
            continue;
        int64_t off;
        if (d[i].v > t->shape[i].v)
            pld_ck_error(ck, c->args[3]->span, "%s shape[%d] = %lld exceeds the source's %lld", c->info->name, i,
                         (long long)d[i].v, (long long)t->shape[i].v);
        else if (pld_ck_const_int(ck, c->args[1 + i], &off) && (off < 0 || off + d[i].v > t->shape[i].v))
            pld_ck_error(ck, c->args[1 + i]->span, "%s %s %lld + shape[%d] %lld is outside the source's %lld",
                         c->info->name, c->info->params[1 + i].name, (long long)off, i, (long long)d[i].v,
                         (long long)t->shape[i].v);
    }
    /* valid where the source is: a runtime box when the source is partial or the offsets are not constants */
    return pld_ck_shaped(ck, PLD_TY_TILE, t->dtype, d, 2, NULL, mem_name(c->args[4], PLD_MEM_VEC));
}

static const pld_type_t *concat(pld_ck_t *ck, ck_call_t *c)
{
    const pld_type_t *a = c->types[0], *b = c->types[1];
    if (!known(a) || !known(b))
        return &pld_type_unknown;
    if (a->rank != 2 || b->rank != 2) {
        pld_ck_error(ck, c->call->span, "%s needs 2-D operands, got %s and %s", c->info->name, pld_ck_tystr(ck, a),
                     pld_ck_tystr(ck, b));
        return &pld_type_unknown;
    }
    if (a->dtype != b->dtype) {
        pld_ck_error(ck, c->call->span, "%s operands must have the same dtype, got %s and %s", c->info->name,
                     pld_dtype_name(a->dtype), pld_dtype_name(b->dtype));
        return &pld_type_unknown;
    }
    if (pld_dim_eq(&a->shape[0], &b->shape[0]) == 0) {
        pld_ck_error(ck, c->call->span, "%s row counts differ: %s and %s", c->info->name, pld_ck_tystr(ck, a),
                     pld_ck_tystr(ck, b));
        return &pld_type_unknown;
    }
    if (a->shape[1].kind != PLD_DIM_CONST || b->shape[1].kind != PLD_DIM_CONST) {
        pld_ck_error(ck, c->call->span, "%s needs constant column counts", c->info->name);
        return &pld_type_unknown;
    }
    pld_dim_t d[2] = {a->shape[0], {PLD_DIM_CONST, a->shape[1].v + b->shape[1].v, NULL, NULL}};
    return pld_ck_shaped(ck, a->kind, a->dtype, d, 2, NULL, a->mem);
}

static const pld_type_t *tile_gather(pld_ck_t *ck, ck_call_t *c)
{
    const pld_type_t *s = c->types[0], *ix = c->types[1];
    if (!known(s) || !known(ix))
        return &pld_type_unknown;
    pld_dtype_t sd = s->dtype;
    if (sd != PLD_DT_FP16 && sd != PLD_DT_FP32 && sd != PLD_DT_INT16 && sd != PLD_DT_INT32) {
        pld_ck_error(ck, c->args[0]->span, "%s src must be FP16, FP32, INT16 or INT32, got %s", c->info->name,
                     pld_dtype_name(sd));
        return &pld_type_unknown;
    }
    int b16 = sd == PLD_DT_FP16 || sd == PLD_DT_INT16;
    if (ix->dtype != PLD_DT_INT32 && !(ix->dtype == PLD_DT_INT16 && b16)) {
        pld_ck_error(ck, c->args[1]->span, "%s indices must be INT32 (or INT16 with a 16-bit src), got %s with src %s",
                     c->info->name, pld_dtype_name(ix->dtype), pld_dtype_name(sd));
        return &pld_type_unknown;
    }
    return pld_ck_shaped(ck, PLD_TY_TILE, sd, ix->shape, ix->rank, NULL, s->mem);
}

static const pld_type_t *gather_mask(pld_ck_t *ck, ck_call_t *c, int ip, int io);

/* pl.tensor.gather: the index form (dim, index), the mask form (mask_pattern=) or the compare form (kvalue=, ...). */
static const pld_type_t *tensor_gather(pld_ck_t *ck, ck_call_t *c)
{
    static const int cmp_at[6] = {0, 5, 6, 8, 7, 9}; /* src, kvalue, cmp_mode, offset, out_cols, count_dtype */
    int idx = c->args[1] || c->args[2], mask = c->args[3] || c->args[4], cmp = c->args[5] || c->args[6] || c->args[7];
    if (idx + mask + cmp != 1 || (idx && (!c->args[1] || !c->args[2])) || (mask && !c->args[3]) ||
        (cmp && (!c->args[5] || !c->args[7] || !c->args[6]))) {
        pld_ck_error(ck, c->call->span, "%s needs exactly one form: (dim, index), mask_pattern= (with output_dtype=), or "
                     "kvalue=, cmp_mode= and out_cols=", c->info->name);
        return &pld_type_unknown;
    }
    if (mask)
        return gather_mask(ck, c, 3, 4);
    if (cmp)
        return pld_ck_gather_compare(ck, c, cmp_at);
    const pld_type_t *s = c->types[0], *ix = c->types[2];
    if (!known(s) || !known(ix))
        return &pld_type_unknown;
    int dim = axis_arg(ck, c, 1, s->rank);
    if (dim < 0)
        return &pld_type_unknown;
    if (ix->dtype != PLD_DT_INT32 && !(ix->dtype == PLD_DT_INT16 && pld_dtype_bytes(s->dtype) == 2)) {
        pld_ck_error(ck, c->args[2]->span, "%s index must be INT32 (or INT16 with a 16-bit input), got %s",
                     c->info->name, pld_dtype_name(ix->dtype));
        return &pld_type_unknown;
    }
    if (ix->rank != s->rank) {
        pld_ck_error(ck, c->call->span, "%s index rank %d differs from the input's %d", c->info->name, ix->rank,
                     s->rank);
        return &pld_type_unknown;
    }
    for (int i = 0; i < s->rank; i++)
        if (i != dim && ix->shape[i].kind == PLD_DIM_CONST && s->shape[i].kind == PLD_DIM_CONST &&
            ix->shape[i].v > s->shape[i].v) {
            pld_ck_error(ck, c->call->span, "%s index dimension %d (%lld) exceeds the input's (%lld)", c->info->name,
                         i, (long long)ix->shape[i].v, (long long)s->shape[i].v);
            return &pld_type_unknown;
        }
    return pld_ck_shaped(ck, s->kind, s->dtype, ix->shape, ix->rank, NULL, s->mem);
}

static int reinterp_dtype_ok(pld_dtype_t d)
{
    switch (d) {
    case PLD_DT_INT8: case PLD_DT_INT16: case PLD_DT_INT32: case PLD_DT_INT64:
    case PLD_DT_UINT8: case PLD_DT_UINT16: case PLD_DT_UINT32: case PLD_DT_UINT64:
    case PLD_DT_FP16: case PLD_DT_BF16: case PLD_DT_FP32:
        return 1;
    default:
        return 0;
    }
}

static const pld_type_t *reinterpret_view(pld_ck_t *ck, ck_call_t *c)
{
    const pld_type_t *t = c->types[0];
    pld_dtype_t to = pld_ck_ann_dtype(ck, c->args[1]);
    if (!known(t) || to == PLD_DT_NONE)
        return &pld_type_unknown;
    if (!reinterp_dtype_ok(t->dtype) || !reinterp_dtype_ok(to)) {
        pld_ck_error(ck, c->call->span, "%s supports INT8-64, UINT8-64, FP16, BF16 and FP32, got %s to %s",
                     c->info->name, pld_dtype_name(t->dtype), pld_dtype_name(to));
        return &pld_type_unknown;
    }
    if (to == t->dtype) {
        pld_ck_error(ck, c->args[1]->span, "%s needs a dtype other than the source's %s (use reshape/view)",
                     c->info->name, pld_dtype_name(to));
        return &pld_type_unknown;
    }
    if (t->rank < 1)
        return &pld_type_unknown;
    int64_t sb = pld_dtype_bytes(t->dtype), db = pld_dtype_bytes(to);
    pld_dim_t d[PLD_CK_MAX_RANK], v[PLD_CK_MAX_RANK];
    int r = t->rank, last = r - 1;
    for (int i = 0; i < r; i++)
        d[i] = t->shape[i], v[i] = t->valid ? t->valid[i] : t->shape[i];
    int autos = t->shape[last].kind == PLD_DIM_CONST && t->shape[last].v * sb % db == 0;
    if (c->args[2]) {
        int n = pld_ck_dims_of_list(ck, c->args[2], d);
        int64_t a = pld_type_static_numel(t), b = 1;
        for (int i = 0; i < n && b >= 0; i++)
            b = d[i].kind == PLD_DIM_CONST && d[i].v > 0 ? b * d[i].v : -1;
        if (n < 1 || a < 0 || b < 0 || a * sb != b * db) {
            pld_ck_error(ck, c->args[2]->span, "%s shape must be constant, positive and hold the source's %lld bytes",
                         c->info->name, (long long)(a < 0 ? -1 : a * sb));
            return &pld_type_unknown;
        }
        return pld_ck_shaped(ck, t->kind, to, d, n, NULL, t->mem);
    }
    if (!autos) {
        pld_ck_error(ck, c->call->span, "%s: the last dimension of %s does not scale to a whole number of %s elements",
                     c->info->name, pld_ck_tystr(ck, t), pld_dtype_name(to));
        return &pld_type_unknown;
    }
    d[last].v = t->shape[last].v * sb / db;
    if (t->valid && v[last].kind == PLD_DIM_CONST)
        v[last].v = v[last].v * sb / db;
    return pld_ck_shaped(ck, t->kind, to, d, r, t->valid ? v : NULL, t->mem);
}

static const pld_type_t *tensor_view(pld_ck_t *ck, ck_call_t *c)
{
    const pld_type_t *t = c->types[0];
    pld_dim_t d[PLD_CK_MAX_RANK], v[PLD_CK_MAX_RANK];
    if (c->args[3]) {
        pld_ck_error(ck, c->args[3]->span, "%s layout= (ND/DN layout views) is not supported by pldrun", c->info->name);
        return &pld_type_unknown;
    }
    if (!c->args[1]) {
        pld_ck_error(ck, c->call->span, "%s needs a shape (or a layout)", c->info->name);
        return &pld_type_unknown;
    }
    int r = pld_ck_dims_of_list(ck, c->args[1], d);
    if (!known(t) || r < 0)
        return &pld_type_unknown;
    int64_t a = pld_type_static_numel(t), b = 1;
    for (int i = 0; i < r && b >= 0; i++) {
        if (d[i].kind == PLD_DIM_CONST && d[i].v <= 0) {
            pld_ck_error(ck, c->args[1]->span, "%s shape dimension %d must be positive", c->info->name, i);
            return &pld_type_unknown;
        }
        b = d[i].kind == PLD_DIM_CONST ? b * d[i].v : -1;
    }
    if (r < 1 || (a >= 0 && b >= 0 && a != b)) {
        pld_ck_error(ck, c->args[1]->span, "%s cannot view %lld elements as %lld", c->info->name, (long long)a,
                     (long long)b);
        return &pld_type_unknown;
    }
    if (c->args[2]) {
        int n = pld_ck_dims_of_list(ck, c->args[2], v);
        if (n >= 0 && n != r) {
            pld_ck_error(ck, c->args[2]->span, "%s valid_shape has %d entries, the shape %d", c->info->name, n, r);
            return &pld_type_unknown;
        }
        for (int i = 0; i < n; i++)
            if (v[i].kind == PLD_DIM_CONST && (v[i].v <= 0 || (d[i].kind == PLD_DIM_CONST && v[i].v > d[i].v))) {
                pld_ck_error(ck, c->args[2]->span, "%s valid_shape dimension %d (%lld) is outside [1, shape]",
                             c->info->name, i, (long long)v[i].v);
                return &pld_type_unknown;
            }
    }
    return pld_ck_shaped(ck, t->kind, t->dtype, d, r, NULL, t->mem);
}

static int scatter_elem_ok(pld_dtype_t d)
{
    return d == PLD_DT_INT8 || d == PLD_DT_INT16 || d == PLD_DT_INT32 || d == PLD_DT_FP16 || d == PLD_DT_FP32 ||
           d == PLD_DT_BF16;
}

static const pld_type_t *scatter_mask(pld_ck_t *ck, ck_call_t *c, int id, int is, int ip);

/* pl.tile.scatter (dst, src, indexes at 0, 1, 2) and pl.tensor.scatter (input, src, index at 0, 3, 2). */
static const pld_type_t *scatter(pld_ck_t *ck, ck_call_t *c)
{
    int tensor = c->info->id == PLD_OPID_TENSOR_SCATTER;
    if (tensor && (c->args[4] || c->args[5]) && !c->args[1] && !c->args[2] && !c->args[3] && c->args[4] && c->args[5])
        return scatter_mask(ck, c, 5, 0, 4);
    if (tensor && (c->args[4] || c->args[5] || !c->args[1] || !c->args[2] || !c->args[3])) {
        pld_ck_error(ck, c->call->span, "%s needs the index form (input, dim, index, src) or the mask form (input, "
                                        "mask_pattern=, dst=)", c->info->name);
        return &pld_type_unknown;
    }
    const pld_type_t *d = c->types[0], *s = c->types[tensor ? 3 : 1], *ix = c->types[2];
    if (!known(d) || !known(s) || !known(ix))
        return &pld_type_unknown;
    if (!scatter_elem_ok(d->dtype) || s->dtype != d->dtype) {
        pld_ck_error(ck, c->call->span, "%s needs %s and src of one dtype among INT8, INT16, INT32, FP16, FP32, BF16; "
                                        "got %s and %s", c->info->name, tensor ? "input" : "dst",
                     pld_dtype_name(d->dtype), pld_dtype_name(s->dtype));
        return &pld_type_unknown;
    }
    int need = pld_dtype_bytes(d->dtype) == 4 ? 4 : 2;
    if ((ix->dtype != PLD_DT_INT32 && ix->dtype != PLD_DT_INT16) || pld_dtype_bytes(ix->dtype) != need) {
        pld_ck_error(ck, c->args[2]->span, "%s index dtype must be %s for a %s %s, got %s", c->info->name,
                     need == 4 ? "INT32" : "INT16", pld_dtype_name(d->dtype), tensor ? "input" : "dst",
                     pld_dtype_name(ix->dtype));
        return &pld_type_unknown;
    }
    if (d->rank != 2 || s->rank != 2 || ix->rank != 2) {
        pld_ck_error(ck, c->call->span, "%s needs 2-D operands", c->info->name);
        return &pld_type_unknown;
    }
    for (int i = 0; i < 2; i++)
        if (pld_dim_eq(&s->shape[i], &ix->shape[i]) == 0) {
            pld_ck_error(ck, c->call->span, "%s index %s must have src's shape %s", c->info->name,
                         pld_ck_tystr(ck, ix), pld_ck_tystr(ck, s));
            return &pld_type_unknown;
        }
    if (tensor) {
        if (axis_arg(ck, c, 1, 2) != 1) {
            pld_ck_error(ck, c->args[1]->span, "%s supports dim = -1 (the last axis) only", c->info->name);
            return &pld_type_unknown;
        }
        for (int i = 0; i < 2; i++)
            if (s->shape[i].kind == PLD_DIM_CONST && d->shape[i].kind == PLD_DIM_CONST && s->shape[i].v > d->shape[i].v) {
                pld_ck_error(ck, c->call->span, "%s src %s does not fit in input %s", c->info->name, pld_ck_tystr(ck, s),
                             pld_ck_tystr(ck, d));
                return &pld_type_unknown;
            }
    }
    return pld_ck_shaped(ck, d->kind, d->dtype, d->shape, d->rank, d->valid, d->mem);
}

static int sort_src_ok(pld_ck_t *ck, ck_call_t *c, const pld_type_t *t)
{
    if (t->dtype != PLD_DT_FP32 || t->rank != 2) {
        pld_ck_error(ck, c->call->span, "%s supports 2-D FP32 sources only (the FP16 pair layout is not modelled), got %s",
                     c->info->name, pld_ck_tystr(ck, t));
        return 0;
    }
    return 1;
}

static const pld_type_t *sort32(pld_ck_t *ck, ck_call_t *c)
{
    const pld_type_t *s = c->types[0], *ix = c->types[1];
    if (!known(s) || !known(ix) || !sort_src_ok(ck, c, s))
        return &pld_type_unknown;
    if ((ix->dtype != PLD_DT_UINT32 && ix->dtype != PLD_DT_INT32) || ix->rank != 2 ||
        pld_dim_eq(&ix->shape[0], &s->shape[0]) == 0 || pld_dim_eq(&ix->shape[1], &s->shape[1]) == 0) {
        pld_ck_error(ck, c->args[1]->span, "%s idx must be UINT32 or INT32 of src's shape, got %s", c->info->name,
                     pld_ck_tystr(ck, ix));
        return &pld_type_unknown;
    }
    if (s->shape[1].kind != PLD_DIM_CONST || s->shape[1].v % 32 != 0) {
        pld_ck_error(ck, c->call->span, "%s needs a constant column count that is a multiple of 32, got %s",
                     c->info->name, pld_ck_tystr(ck, s));
        return &pld_type_unknown;
    }
    pld_dim_t d[2] = {s->shape[0], {PLD_DIM_CONST, 2 * s->shape[1].v, NULL, NULL}};
    return pld_ck_shaped(ck, s->kind, PLD_DT_FP32, d, 2, NULL, s->mem);
}

static const pld_type_t *mrgsort(pld_ck_t *ck, ck_call_t *c)
{
    int tensor = c->info->id == PLD_OPID_TENSOR_MRGSORT;
    int bl = tensor ? 5 : 6, ex = tensor ? 4 : 5, n = 1;
    const pld_type_t *s = c->types[0];
    if (!known(s) || !sort_src_ok(ck, c, s))
        return &pld_type_unknown;
    if (c->args[ex] && !(c->args[ex]->kind == PLD_EX_BOOL && !c->args[ex]->u.bval)) {
        pld_ck_error(ck, c->args[ex]->span, "%s exhausted=True is not supported (only the full merge)", c->info->name);
        return &pld_type_unknown;
    }
    if (c->args[bl]) {
        int64_t v;
        if (c->args[1] || c->args[2] || c->args[3] || (!tensor && c->args[4])) {
            pld_ck_error(ck, c->call->span, "%s format1 (block_len=) takes one source and no tmp", c->info->name);
            return &pld_type_unknown;
        }
        if (pld_ck_const_int(ck, c->args[bl], &v) && (v <= 0 || v % 64 != 0)) {
            pld_ck_error(ck, c->args[bl]->span, "%s block_len must be a positive multiple of 64, got %lld", c->info->name,
                         (long long)v);
            return &pld_type_unknown;
        }
        return pld_ck_shaped(ck, s->kind, PLD_DT_FP32, s->shape, 2, NULL, s->mem);
    }
    if (!c->args[1] || (!tensor && !c->args[4])) {
        pld_ck_error(ck, c->call->span, "%s needs block_len= (format1) or src0, src1%s (format2)", c->info->name,
                     tensor ? "" : " and tmp");
        return &pld_type_unknown;
    }
    int64_t cols = s->shape[1].kind == PLD_DIM_CONST ? s->shape[1].v : -1;
    for (int i = 1; i < 4; i++) {
        const pld_type_t *t = c->types[i];
        if (!c->args[i])
            continue;
        if (!known(t) || !sort_src_ok(ck, c, t))
            return &pld_type_unknown;
        if (pld_dim_eq(&t->shape[0], &s->shape[0]) == 0) {
            pld_ck_error(ck, c->call->span, "%s sources must have the same rows", c->info->name);
            return &pld_type_unknown;
        }
        cols = cols >= 0 && t->shape[1].kind == PLD_DIM_CONST ? cols + t->shape[1].v : -1;
        n++;
    }
    if (!tensor) {
        const pld_type_t *t = c->types[4];
        if (!known(t))
            return &pld_type_unknown;
        return pld_ck_shaped(ck, PLD_TY_TILE, PLD_DT_FP32, t->shape, t->rank, NULL, s->mem);
    }
    if (cols < 0) {
        pld_ck_error(ck, c->call->span, "%s needs constant column counts", c->info->name);
        return &pld_type_unknown;
    }
    pld_dim_t d[2] = {s->shape[0], {PLD_DIM_CONST, cols, NULL, NULL}};
    (void)n;
    return pld_ck_shaped(ck, s->kind, PLD_DT_FP32, d, 2, NULL, s->mem);
}

static const pld_type_t *gather_row(pld_ck_t *ck, ck_call_t *c)
{
    const pld_type_t *d = c->types[0], *s = c->types[1];
    pld_dim_t w[PLD_CK_MAX_RANK];
    if (!known(d) || !known(s))
        return &pld_type_unknown;
    if (d->dtype != s->dtype || d->rank != 2 || s->rank != 2) {
        pld_ck_error(ck, c->call->span, "%s needs a 2-D dst and src of one dtype, got %s and %s", c->info->name,
                     pld_ck_tystr(ck, d), pld_ck_tystr(ck, s));
        return &pld_type_unknown;
    }
    int r = pld_ck_dims_of_list(ck, c->args[4], w);
    if (r != 2 || w[0].kind != PLD_DIM_CONST || w[1].kind != PLD_DIM_CONST || w[0].v <= 0 || w[1].v <= 0) {
        pld_ck_error(ck, c->args[4]->span, "%s shapes must be two positive constants", c->info->name);
        return &pld_type_unknown;
    }
    if (c->args[6] && c->args[5] && !(c->args[5]->kind == PLD_EX_BOOL && !c->args[5]->u.bval))
        pld_ck_error(ck, c->args[6]->span, "%s valid_shape is not supported together with transpose=True", c->info->name);
    for (int i = 2; i <= 3; i++)
        if (pld_ck_list_len(ck, c->args[i]) != 2)
            pld_ck_error(ck, c->args[i]->span, "%s %s must have 2 entries", c->info->name, c->info->params[i].name);
    return d;
}

int pld_check_mask_pattern(const pld_expr_t *e)
{
    static const char *const names[] = {"P0101", "P1010", "P0001", "P0010", "P0100", "P1000", "P1111"};
    if (e && e->kind == PLD_EX_INT)
        return e->u.ival >= 1 && e->u.ival <= 7 ? (int)e->u.ival : -1;
    if (e && e->kind == PLD_EX_ATTR)
        for (int i = 0; i < 7; i++)
            if (strcmp(e->u.attr.attr, names[i]) == 0)
                return i + 1;
    return -1;
}

/* gather_mask: src at 0, mask_pattern at ip, output_dtype at io (tile or tensor). */
static const pld_type_t *gather_mask(pld_ck_t *ck, ck_call_t *c, int ip, int io)
{
    const pld_type_t *s = c->types[0];
    int m = pld_check_mask_pattern(c->args[ip]);
    if (m < 0) {
        pld_ck_error(ck, c->args[ip] ? c->args[ip]->span : c->call->span,
                     "%s mask_pattern must be 1..7 or pl.tile.MaskPattern.P0101 .. P1111", c->info->name);
        return &pld_type_unknown;
    }
    if (!known(s))
        return &pld_type_unknown;
    pld_dtype_t d = s->dtype, od = c->args[io] ? pld_ck_ann_dtype(ck, c->args[io]) : d;
    if ((d != PLD_DT_FP16 && d != PLD_DT_FP32 && d != PLD_DT_INT16 && d != PLD_DT_INT32) || s->rank != 2) {
        pld_ck_error(ck, c->call->span, "%s needs a 2-D FP16, FP32, INT16 or INT32 src, got %s", c->info->name,
                     pld_ck_tystr(ck, s));
        return &pld_type_unknown;
    }
    if (od == PLD_DT_NONE || pld_dtype_bytes(od) != pld_dtype_bytes(d)) {
        pld_ck_error(ck, c->args[io]->span, "%s output_dtype must have src's width (%d bytes)", c->info->name,
                     pld_dtype_bytes(d));
        return &pld_type_unknown;
    }
    int stride = m <= 2 ? 2 : m <= 6 ? 4 : 1;
    if (s->shape[1].kind != PLD_DIM_CONST || s->shape[1].v % stride) {
        pld_ck_error(ck, c->call->span, "%s needs a constant column count divisible by %d, got %s", c->info->name,
                     stride, pld_ck_tystr(ck, s));
        return &pld_type_unknown;
    }
    pld_dim_t dd[2] = {s->shape[0], {PLD_DIM_CONST, s->shape[1].v / stride, NULL, NULL}};
    return pld_ck_shaped(ck, s->kind, od, dd, 2, NULL, s->mem);
}

/* scatter_mask: dst at id, src at is, mask_pattern at ip (tile: 0, 1, 2; tensor mask form: 5, 0, 4). */
static const pld_type_t *scatter_mask(pld_ck_t *ck, ck_call_t *c, int id, int is, int ip)
{
    const pld_type_t *d = c->types[id], *s = c->types[is];
    int m = pld_check_mask_pattern(c->args[ip]);
    if (m < 0) {
        pld_ck_error(ck, c->args[ip]->span, "%s mask_pattern must be 1..7 or pl.tile.MaskPattern.P0101 .. P1111",
                     c->info->name);
        return &pld_type_unknown;
    }
    if (!known(d) || !known(s))
        return &pld_type_unknown;
    int stride = m <= 2 ? 2 : m <= 6 ? 4 : 1;
    if (!scatter_elem_ok(d->dtype) || s->dtype != d->dtype || d->rank != 2 || s->rank != 2 ||
        pld_dim_eq(&d->shape[0], &s->shape[0]) == 0 || d->shape[1].kind != PLD_DIM_CONST ||
        s->shape[1].kind != PLD_DIM_CONST || d->shape[1].v != s->shape[1].v * stride) {
        pld_ck_error(ck, c->call->span, "%s needs 2-D dst and src of one dtype and row count, dst columns = src columns "
                     "* %d; got %s and %s", c->info->name, stride, pld_ck_tystr(ck, d), pld_ck_tystr(ck, s));
        return &pld_type_unknown;
    }
    return d;
}

const pld_type_t *pld_ck_layout_call(pld_ck_t *ck, ck_call_t *c)
{
    switch (c->info->id) {
    case PLD_OPID_TILE_TRANSPOSE:
    case PLD_OPID_TENSOR_TRANSPOSE:
        return transpose(ck, c);
    case PLD_OPID_TILE_EXTRACT:
        return extract(ck, c);
    case PLD_OPID_TILE_CONCAT:
    case PLD_OPID_TENSOR_CONCAT:
        return concat(ck, c);
    case PLD_OPID_TILE_GATHER:
        return tile_gather(ck, c);
    case PLD_OPID_TENSOR_GATHER:
        return tensor_gather(ck, c);
    case PLD_OPID_TILE_TRANSPOSE_VIEW: {
        const pld_type_t *t = c->types[0];
        if (!known(t))
            return &pld_type_unknown;
        if (t->rank < 2) {
            pld_ck_error(ck, c->call->span, "%s needs at least 2 dimensions, got %s", c->info->name, pld_ck_tystr(ck, t));
            return &pld_type_unknown;
        }
        pld_dim_t d[PLD_CK_MAX_RANK], v[PLD_CK_MAX_RANK];
        for (int i = 0; i < t->rank; i++)
            d[i] = t->shape[i], v[i] = t->valid ? t->valid[i] : t->shape[i];
        int a = t->rank - 2, b = t->rank - 1;
        pld_dim_t x = d[a];
        d[a] = d[b], d[b] = x, x = v[a], v[a] = v[b], v[b] = x;
        return pld_ck_shaped(ck, t->kind, t->dtype, d, t->rank, t->valid ? v : NULL, t->mem);
    }
    case PLD_OPID_TILE_REINTERPRET_VIEW:
    case PLD_OPID_TENSOR_REINTERPRET_VIEW:
        return reinterpret_view(ck, c);
    case PLD_OPID_TENSOR_VIEW:
        return tensor_view(ck, c);
    case PLD_OPID_TILE_SCATTER:
    case PLD_OPID_TENSOR_SCATTER:
        return scatter(ck, c);
    case PLD_OPID_TILE_SORT32:
    case PLD_OPID_TENSOR_SORT32:
        return sort32(ck, c);
    case PLD_OPID_TILE_GATHER_ROW:
    case PLD_OPID_TENSOR_GATHER_ROW:
        return gather_row(ck, c);
    case PLD_OPID_TILE_GATHER_MASK:
        return gather_mask(ck, c, 1, 2);
    case PLD_OPID_TILE_SCATTER_MASK:
        return scatter_mask(ck, c, 0, 1, 2);
    case PLD_OPID_TILE_MRGSORT:
    case PLD_OPID_TENSOR_MRGSORT:
        return mrgsort(ck, c);
    default:
        return pld_ck_gather_call(ck, c);
    }
}
