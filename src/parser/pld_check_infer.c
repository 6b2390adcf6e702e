/* pld_check_infer.c - static type inference of the op calls the checker has
 * bound (pld_check_expr.c): result shapes, dtypes and memory spaces, the
 * reductions and broadcasts (expand), tmp tiles, static regions; the families
 * with files of their own (pld_check_elem.c, pld_check_mem.c, pld_check_mx.c,
 * pld_check_layout.c, pld_check_gather.c, pld_check_sys.c, pld_check_pld.c) are
 * called from pld_ck_infer_op. */
#include "pld_check_int.h"

#include <stdio.h>
#include <string.h>

static const pld_type_t *with_dtype(pld_ck_t *ck, const pld_type_t *src, pld_dtype_t dt)
{
    pld_type_t *t = pld_type_new(ck->p, src->kind);
    if (!t)
        return src;
    *t = *src;
    t->dtype = dt;
    return t;
}

static pld_mem_t mem_of(pld_ck_t *ck, const pld_expr_t *e, pld_mem_t dflt)
{
    char b[128];
    const char *d = e ? pld_ck_dotted(ck, e, b, sizeof b) : NULL;
    if (!d)
        return dflt;
    const char *last = strrchr(d, '.');
    int m = pld_mem_from_name(last ? last + 1 : d);
    return m > 0 ? (pld_mem_t)m : dflt;
}

static int is_const(const pld_dim_t *d, int64_t v)
{
    return d->kind == PLD_DIM_CONST && d->v == v;
}

/* tmp_tile of a tile reduction (PyPTO: same dtype and rank as the input, every
 * dim at least the input's; exact shape for row_argmax / row_argmin). */
static void check_tmp_tile(pld_ck_t *ck, ck_call_t *c, int i, int exact)
{
    const pld_type_t *t = c->types[0], *m = c->types[i];
    if (!c->args[i] || !t || !m || t->kind != PLD_TY_TILE || m->kind != PLD_TY_TILE)
        return;
    if (m->dtype != t->dtype) {
        pld_ck_error(ck, c->args[i]->span, "%s tmp_tile dtype %s does not match the input dtype %s", c->info->name,
                     pld_dtype_name(m->dtype), pld_dtype_name(t->dtype));
        return;
    }
    if (m->rank != t->rank) {
        pld_ck_error(ck, c->args[i]->span, "%s tmp_tile %s must have the input's rank (input %s)", c->info->name,
                     pld_ck_tystr(ck, m), pld_ck_tystr(ck, t));
        return;
    }
    for (int d = 0; d < t->rank; d++) {
        const pld_dim_t *a = &t->shape[d], *b = &m->shape[d];
        if (a->kind != PLD_DIM_CONST || b->kind != PLD_DIM_CONST)
            continue;
        if (exact ? b->v != a->v : b->v < a->v) {
            pld_ck_error(ck, c->args[i]->span, "%s tmp_tile %s must %s the input's shape (input %s)", c->info->name,
                         pld_ck_tystr(ck, m), exact ? "have exactly" : "be at least", pld_ck_tystr(ck, t));
            return;
        }
    }
}

/* Row (last axis) or column (second-to-last axis) reduction, PyPTO's
 * keep-dim rule: the reduced dim becomes 1 in the shape and the valid shape,
 * the others (batch dims too) are kept. Tile reductions need rank >= 2, tensor
 * column reductions too; a tensor row reduction takes any rank >= 1. Tile
 * column reductions stay 2-D: for rank > 2 PyPTO's type deduction reduces
 * axis 0 while its torch reference reduces axis -2. dt: the result dtype
 * (PLD_DT_NONE: the input's). */
static const pld_type_t *reduce_axis(pld_ck_t *ck, ck_call_t *c, int row, pld_dtype_t dt)
{
    const pld_type_t *t = c->types[0];
    if (!t || (t->kind != PLD_TY_TILE && !pld_type_is_tensorlike(t)))
        return t ? t : &pld_type_unknown;
    const int tile = t->kind == PLD_TY_TILE, ax = row ? t->rank - 1 : t->rank - 2;
    if (tile && t->rank < 2) {
        pld_ck_error(ck, c->call->span, "%s requires at least a 2D tile, but got %d dimensions", c->info->name, t->rank);
        return &pld_type_unknown;
    }
    if (ax < 0) {
        pld_ck_error(ck, c->call->span, "%s requires at least a %dD tensor, but got %d dimensions", c->info->name,
                     row ? 1 : 2, t->rank);
        return &pld_type_unknown;
    }
    if (tile && !row && t->rank > 2) {
        pld_ck_error(ck, c->call->span,
                     "%s of a rank-%d tile is not supported (PyPTO's type reduces axis 0, its reference axis -2)",
                     c->info->name, t->rank);
        return &pld_type_unknown;
    }
    pld_dim_t d[PLD_CK_MAX_RANK], v[PLD_CK_MAX_RANK];
    const pld_dim_t one = {PLD_DIM_CONST, 1, NULL, NULL};
    memcpy(d, t->shape, sizeof d[0] * (size_t)t->rank);
    d[ax] = one;
    if (t->valid) {
        memcpy(v, t->valid, sizeof v[0] * (size_t)t->rank);
        v[ax] = one;
    }
    return pld_ck_shaped(ck, tile ? PLD_TY_TILE : PLD_TY_TENSOR, dt != PLD_DT_NONE ? dt : t->dtype, d, t->rank,
                         t->valid ? v : NULL, tile ? (t->mem ? t->mem : PLD_MEM_VEC) : PLD_MEM_NONE);
}

/* row_expand* (row: vec [M,1]) and col_expand* (vec [1,N]) on 2-D operands of
 * one kind and dtype: the result has the first operand's shape and valid shape. */
static const pld_type_t *expand_vec(pld_ck_t *ck, ck_call_t *c, int row)
{
    const pld_type_t *a = c->types[0], *b = c->types[1];
    if (!a || !b || a->kind == PLD_TY_UNKNOWN || b->kind == PLD_TY_UNKNOWN)
        return a ? a : &pld_type_unknown;
    const char *vn = row ? "row_vec" : "col_vec";
    if (a->rank != 2 || b->rank != 2) {
        pld_ck_error(ck, c->call->span, "%s needs 2-D operands, got %s and %s", c->info->name, pld_ck_tystr(ck, a),
                     pld_ck_tystr(ck, b));
        return &pld_type_unknown;
    }
    if (a->dtype != b->dtype) {
        pld_ck_error(ck, c->call->span, "%s operands have different dtypes (%s and %s); convert one with pl.cast first",
                     c->info->name, pld_dtype_name(a->dtype), pld_dtype_name(b->dtype));
        return a;
    }
    const pld_dim_t *one = &b->shape[row ? 1 : 0], *other = &b->shape[row ? 0 : 1], *want = &a->shape[row ? 0 : 1];
    if (!is_const(one, 1) || pld_dim_eq(other, want) == 0) {
        pld_ck_error(ck, c->args[1]->span, "%s %s must be %s, got %s (operand %s)", c->info->name, vn,
                     row ? "[M, 1] with the operand's M rows" : "[1, N] with the operand's N columns", pld_ck_tystr(ck, b),
                     pld_ck_tystr(ck, a));
        return a;
    }
    if (c->info->id == PLD_OPID_TILE_ROW_EXPAND_ADD || c->info->id == PLD_OPID_TENSOR_ROW_EXPAND_ADD) {
        pld_dtype_t dt = a->dtype;
        if (dt != PLD_DT_INT8 && dt != PLD_DT_INT16 && dt != PLD_DT_INT32 && dt != PLD_DT_FP16 && dt != PLD_DT_FP32)
            pld_ck_error(ck, c->call->span, "%s needs INT8, INT16, INT32, FP16 or FP32, got %s", c->info->name,
                         pld_dtype_name(dt));
    }
    int tile = a->kind == PLD_TY_TILE;
    return pld_ck_shaped(ck, tile ? PLD_TY_TILE : PLD_TY_TENSOR, a->dtype, a->shape, a->rank, tile ? a->valid : NULL,
                         tile ? PLD_MEM_VEC : PLD_MEM_NONE);
}

/* pl.tensor.expand_clone(src, target): rank 3, equal dims or src 1 in at most one. */
static const pld_type_t *expand_clone(pld_ck_t *ck, ck_call_t *c)
{
    const pld_type_t *a = c->types[0], *b = c->types[1];
    if (!a || !b || a->kind == PLD_TY_UNKNOWN || b->kind == PLD_TY_UNKNOWN)
        return &pld_type_unknown;
    if (a->rank != 3 || b->rank != 3) {
        pld_ck_error(ck, c->call->span, "pl.tensor.expand_clone needs rank-3 src and target, got %s and %s",
                     pld_ck_tystr(ck, a), pld_ck_tystr(ck, b));
        return &pld_type_unknown;
    }
    if (a->dtype != b->dtype) {
        pld_ck_error(ck, c->call->span, "pl.tensor.expand_clone operands have different dtypes (%s and %s); convert one with pl.cast first",
                     pld_dtype_name(a->dtype), pld_dtype_name(b->dtype));
        return &pld_type_unknown;
    }
    int nb = 0;
    for (int d = 0; d < 3; d++) {
        if (pld_dim_eq(&a->shape[d], &b->shape[d]) == 1)
            continue;
        if (!is_const(&a->shape[d], 1)) {
            if (pld_dim_eq(&a->shape[d], &b->shape[d]) == 0) {
                pld_ck_error(ck, c->call->span, "pl.tensor.expand_clone cannot expand %s to %s at dim %d (only a size-1 dim broadcasts)",
                             pld_ck_tystr(ck, a), pld_ck_tystr(ck, b), d);
                return &pld_type_unknown;
            }
            continue;
        }
        nb++;
    }
    if (nb > 1) {
        pld_ck_error(ck, c->call->span, "pl.tensor.expand_clone broadcasts in at most one dimension, got %d (%s to %s)", nb,
                     pld_ck_tystr(ck, a), pld_ck_tystr(ck, b));
        return &pld_type_unknown;
    }
    return pld_ck_shaped(ck, PLD_TY_TENSOR, a->dtype, b->shape, 3, NULL, PLD_MEM_NONE);
}

/* Element count of static dims; -1 when a dim is not constant, -2 when
 * negative or past int64 (pld_size.h). */
static int64_t numel_dims(const pld_dim_t *d, int r)
{
    int64_t c[PLD_CK_MAX_RANK], n;
    for (int i = 0; i < r && i < PLD_CK_MAX_RANK; i++) {
        if (d[i].kind != PLD_DIM_CONST)
            return -1;
        c[i] = d[i].v;
    }
    return pld_size_numel(r < PLD_CK_MAX_RANK ? r : PLD_CK_MAX_RANK, c, &n) ? -2 : n;
}

/* Static bounds of a tile <-> tensor region (load/store): tile dims align with
 * the tensor's trailing dims. Checks what is constant; returns 0 on an error. */
static int static_region(pld_ck_t *ck, ck_call_t *c, const pld_type_t *t, const pld_expr_t *offsets,
                         const pld_dim_t *shape, const pld_dim_t *valid, int r, const pld_expr_t *clamp, const char *what)
{
    int64_t cl = 0;
    if (clamp && pld_ck_const_int(ck, clamp, &cl) && cl)
        return 1;
    if (!t || (t->kind != PLD_TY_TILE && !pld_type_is_tensorlike(t)) || r > t->rank)
        return 1;
    for (int j = 0; j < r; j++) {
        const pld_dim_t *ext = valid ? &valid[j] : &shape[j];
        if (shape[j].kind == PLD_DIM_CONST && shape[j].v <= 0) {
            pld_ck_error(ck, c->call->span, "%s tile dimension %d must be positive, found %lld", c->info->name, j,
                     (long long)shape[j].v);
            return 0;
        }
        int d = t->rank - r + j;
        int64_t off;
        const pld_expr_t *oe = pld_ck_list_item(ck, offsets, d);
        if (!oe || !pld_ck_const_int(ck, oe, &off))
            continue;
        if (off < 0) {
            pld_ck_error(ck, c->call->span, "%s offset %lld in dimension %d is negative", c->info->name, (long long)off, d);
            return 0;
        }
        if (ext->kind == PLD_DIM_CONST && t->shape[d].kind == PLD_DIM_CONST &&
            pld_ck_past_end(off, ext->v, t->shape[d].v)) {
            pld_ck_error(ck, c->call->span, "%s %s past the end of dimension %d: offset %lld + extent %lld > size %lld",
                     c->info->name, what, d, (long long)off, (long long)ext->v, (long long)t->shape[d].v);
            return 0;
        }
    }
    return 1;
}

int pld_ck_is_matmul(const pld_expr_t *e)
{
    if (!e || e->kind != PLD_EX_CALL)
        return 0;
    switch (e->op) {
    case PLD_OPID_TENSOR_MATMUL:
    case PLD_OPID_TENSOR_MATMUL_ACC:
    case PLD_OPID_TILE_MATMUL:
    case PLD_OPID_TILE_MATMUL_ACC:
    case PLD_OPID_TILE_MATMUL_BIAS:
    case PLD_OPID_TILE_BATCH_MATMUL:
    case PLD_OPID_TILE_BATCH_MATMUL_ACC:
    case PLD_OPID_TILE_MATMUL_MX:
    case PLD_OPID_TILE_MATMUL_MX_ACC:
    case PLD_OPID_TILE_MATMUL_MX_BIAS: return 1;
    default: return 0;
    }
}

/* A store (pl.tile.store, pl.tensor.assemble) of src (type st) into a tensor
 * of type dt whose dtypes differ: allowed when it is the cube's FIXPIPE
 * narrowing of an FP32 accumulator into BF16 / FP16 (PyPTO's
 * AccToGmStoreValid: the fix-pipe stores an Acc tile into INT32 / FP32 /
 * FP16 / BF16): the source is an Acc tile, a matmul call, or a local whose
 * value was last assigned by one (a tensor-level matmul, whose result PyPTO
 * keeps in Acc). The interpreter narrows with pld_k_store_narrow. */
static int narrowing_store(pld_ck_t *ck, const pld_expr_t *src, const pld_type_t *st, const pld_type_t *dt)
{
    if (st->dtype != PLD_DT_FP32 || (dt->dtype != PLD_DT_BF16 && dt->dtype != PLD_DT_FP16))
        return 0;
    if (st->kind == PLD_TY_TILE && st->mem == PLD_MEM_ACC)
        return 1;
    if (pld_ck_is_matmul(src))
        return 1;
    return src && src->kind == PLD_EX_NAME && src->slot >= 0 && src->slot < ck->nslots && ck->slots[src->slot].mm_result;
}

/* The end of a dtype mismatch message: why FP32 -> BF16 / FP16 was not a narrowing store. */
static const char *narrow_hint(const pld_type_t *st, const pld_type_t *dt)
{
    if (st->dtype == PLD_DT_FP32 && (dt->dtype == PLD_DT_BF16 || dt->dtype == PLD_DT_FP16))
        return " (only a matmul's FP32 accumulator, an Acc tile, is stored narrowed into BF16 / FP16: "
               "cast it first; docs/ops-numerics.md)";
    return "";
}

const pld_type_t *pld_ck_infer_op(pld_ck_t *ck, ck_call_t *c)
{
    pld_dim_t dims[PLD_CK_MAX_RANK], vdims[PLD_CK_MAX_RANK];
    const pld_type_t *t0 = c->types[0] ? c->types[0] : &pld_type_unknown;
    int r, vr;
    int axis = pld_op_expand_axis(c->info->id);
    if (axis)
        return expand_vec(ck, c, axis == 'r');
    const pld_type_t *et = pld_ck_elem_call(ck, c); /* the element-wise rules of pld_check_elem.c */
    if (et)
        return et;
    switch (c->info->id) {
    case PLD_OPID_SYS_TASK_DUMMY:
        if (c->args[0])
            pld_ck_deps(ck, c->args[0], ck->ctx);
        return pld_type_scalar(ck->p, PLD_DT_TASK_ID);
    case PLD_OPID_SYS_TASK_INVALID:
        return pld_type_scalar(ck->p, PLD_DT_TASK_ID);
    case PLD_OPID_TENSOR_DIM: {
        int64_t ax;
        if (t0->kind != PLD_TY_UNKNOWN && pld_ck_const_int(ck, c->args[1], &ax) && (ax < -t0->rank || ax >= t0->rank))
            pld_ck_error(ck, c->call->span, "pl.tensor.dim axis %lld is out of range for a rank-%d tensor", (long long)ax,
                     t0->rank);
        return pld_type_scalar(ck->p, PLD_DT_INDEX);
    }
    case PLD_OPID_TILE_GET_BLOCK_IDX:
    case PLD_OPID_TILE_GET_BLOCK_NUM:
        return pld_type_scalar(ck->p, PLD_DT_INDEX);
    case PLD_OPID_TILE_LOAD: {
        r = pld_ck_dims_of_list(ck, c->args[2], dims);
        if (r < 0 || t0->kind == PLD_TY_UNKNOWN)
            return &pld_type_unknown;
        int no = pld_ck_list_len(ck, c->args[1]);
        if (no >= 0 && no != t0->rank) {
            pld_ck_error(ck, c->call->span, "pl.tile.load offsets have %d entries but the tensor has rank %d", no, t0->rank);
            return &pld_type_unknown;
        }
        vr = c->args[3] ? pld_ck_dims_of_list(ck, c->args[3], vdims) : -1;
        if (vr >= 0 && vr != r) {
            pld_ck_error(ck, c->call->span, "pl.tile.load valid_shape has %d entries but shapes has %d", vr, r);
            return &pld_type_unknown;
        }
        int differs = 0;
        for (int i = 0; vr >= 0 && i < r; i++)
            if (pld_dim_eq(&dims[i], &vdims[i]) != 1)
                differs = 1;
        if (!static_region(ck, c, t0, c->args[1], dims, vr >= 0 ? vdims : NULL, r, c->args[5], "reads") ||
            !pld_ck_shape_size(ck, c->call->span, c->info->name, dims, r, t0->dtype, NULL))
            return &pld_type_unknown;
        return pld_ck_mx_memory(ck, c, pld_ck_shaped(ck, PLD_TY_TILE, t0->dtype, dims, r, differs ? vdims : NULL,
                                                     mem_of(ck, c->args[4], PLD_MEM_VEC)));
    }
    case PLD_OPID_TILE_STORE: {
        const pld_type_t *dst = c->types[2];
        /* no static bounds check here: a tile's valid extent may be smaller at
         * run time (a clamped load), and the run-time check has the location */
        if (t0->kind == PLD_TY_TILE && dst && pld_type_is_tensorlike(dst)) {
            if (t0->dtype != dst->dtype && !narrowing_store(ck, c->args[0], t0, dst))
                pld_ck_error(ck, c->call->span, "pl.tile.store tile dtype %s does not match the output tensor dtype %s%s",
                         pld_dtype_name(t0->dtype), pld_dtype_name(dst->dtype), narrow_hint(t0, dst));
            else if (t0->rank > dst->rank)
                pld_ck_error(ck, c->call->span, "pl.tile.store tile rank %d exceeds the output tensor rank %d", t0->rank, dst->rank);
        }
        return dst ? dst : &pld_type_unknown;
    }
    case PLD_OPID_TILE_CREATE:
    case PLD_OPID_TILE_FULL:
    case PLD_OPID_TENSOR_CREATE:
    case PLD_OPID_TENSOR_CREATE_L1:
    case PLD_OPID_TENSOR_FULL: {
        r = pld_ck_dims_of_list(ck, c->args[0], dims);
        pld_dtype_t dt = pld_ck_dtype_arg(ck, c->args[1]);
        if (dt == PLD_DT_NONE) {
            pld_ck_error(ck, c->call->span, "%s needs a dtype (dtype=pl.FP32, ...)", c->info->name);
            return &pld_type_unknown;
        }
        if (r < 0)
            return &pld_type_unknown;
        int tile = c->info->id == PLD_OPID_TILE_CREATE || c->info->id == PLD_OPID_TILE_FULL;
        for (int i = 0; i < r; i++)
            if (dims[i].kind == PLD_DIM_CONST && dims[i].v <= 0) {
                pld_ck_error(ck, c->call->span, "%s shape dimension %d must be positive, found %lld", c->info->name, i,
                         (long long)dims[i].v);
                return &pld_type_unknown;
            }
        if (!pld_ck_shape_size(ck, c->call->span, c->info->name, dims, r, dt, NULL))
            return &pld_type_unknown;
        return pld_ck_mx_memory(ck, c, pld_ck_shaped(ck, tile ? PLD_TY_TILE : PLD_TY_TENSOR, dt, dims, r, NULL,
                                                     tile ? mem_of(ck, c->info->id == PLD_OPID_TILE_CREATE ? c->args[2] : NULL,
                                                                   PLD_MEM_VEC)
                                                          : PLD_MEM_NONE));
    }
    case PLD_OPID_TILE_MOVE:
        if (t0->kind != PLD_TY_TILE)
            return t0;
        return pld_ck_mx_memory(ck, c, pld_ck_shaped(ck, PLD_TY_TILE, t0->dtype, t0->shape, t0->rank, t0->valid,
                                                     mem_of(ck, c->args[1], t0->mem)));
    case PLD_OPID_TILE_READ:
    case PLD_OPID_TENSOR_READ: {
        int n = pld_ck_list_len(ck, c->args[1]);
        if (n >= 0 && t0->kind != PLD_TY_UNKNOWN && n != t0->rank && n != 1) {
            pld_ck_error(ck, c->call->span, "%s has %d indices but the operand has rank %d", c->info->name, n, t0->rank);
            return &pld_type_unknown;
        }
        return t0->kind == PLD_TY_UNKNOWN ? &pld_type_unknown : pld_type_scalar(ck->p, t0->dtype);
    }
    case PLD_OPID_TILE_WRITE:
    case PLD_OPID_TENSOR_WRITE:
    case PLD_OPID_TENSOR_ASSEMBLE:
    case PLD_OPID_TILE_ASSEMBLE:
        if (c->info->id == PLD_OPID_TENSOR_ASSEMBLE && c->types[1] &&
            (pld_type_is_tensorlike(c->types[1]) || c->types[1]->kind == PLD_TY_TILE) && pld_type_is_tensorlike(t0) &&
            c->types[1]->dtype != t0->dtype && c->types[1]->dtype != PLD_DT_NONE && t0->dtype != PLD_DT_NONE &&
            !narrowing_store(ck, c->args[1], c->types[1], t0))
            pld_ck_error(ck, c->call->span, "pl.tensor.assemble source dtype %s does not match target dtype %s%s",
                     pld_dtype_name(c->types[1]->dtype), pld_dtype_name(t0->dtype), narrow_hint(c->types[1], t0));
        return t0;
    case PLD_OPID_TILE_SLICE:
    case PLD_OPID_TENSOR_SLICE: {
        r = pld_ck_dims_of_list(ck, c->args[1], dims);
        if (r < 0 || t0->kind == PLD_TY_UNKNOWN)
            return &pld_type_unknown;
        if (r != t0->rank) {
            pld_ck_error(ck, c->call->span, "%s shape has %d entries but the operand has rank %d", c->info->name, r, t0->rank);
            return &pld_type_unknown;
        }
        if (!pld_ck_shape_size(ck, c->call->span, c->info->name, dims, r, t0->dtype, NULL))
            return &pld_type_unknown;
        if (c->args[5] && c->args[5]->kind != PLD_EX_NONE)
            pld_ck_check_pad(ck, c, 5);
        int tile = c->info->id == PLD_OPID_TILE_SLICE;
        /* an on-chip window has nothing to clamp it: it must fit */
        if (tile && !static_region(ck, c, t0, c->args[2], dims, NULL, r, NULL, "window runs"))
            return &pld_type_unknown;
        int drop[PLD_CK_MAX_RANK] = {0};
        int nd = c->args[4] ? pld_ck_list_len(ck, c->args[4]) : 0;
        for (int i = 0; i < nd; i++) {
            int64_t v;
            if (pld_ck_const_int(ck, pld_ck_list_item(ck, c->args[4], i), &v) && v >= 0 && v < r)
                drop[v] = 1;
        }
        pld_dim_t out[PLD_CK_MAX_RANK];
        int k = 0;
        for (int i = 0; i < r; i++)
            if (!drop[i])
                out[k++] = dims[i];
        /* tiles are physically 2-D: a rank reduction below 2 prepends unit axes */
        for (; tile && k < 2; k++) {
            memmove(out + 1, out, (size_t)k * sizeof *out);
            out[0] = (pld_dim_t){.kind = PLD_DIM_CONST, .v = 1};
        }
        return pld_ck_shaped(ck, t0->kind, t0->dtype, out, k, NULL, t0->mem);
    }
    case PLD_OPID_TILE_RESHAPE:
    case PLD_OPID_TENSOR_RESHAPE: {
        r = pld_ck_dims_of_list(ck, c->args[1], dims);
        if (r < 0 || t0->kind == PLD_TY_UNKNOWN)
            return &pld_type_unknown;
        if (!pld_ck_shape_size(ck, c->call->span, c->info->name, dims, r, t0->dtype, NULL))
            return &pld_type_unknown;
        int64_t a = pld_type_static_numel(t0), b = numel_dims(dims, r);
        if (a >= 0 && b >= 0 && a != b)
            pld_ck_error(ck, c->call->span, "%s cannot reshape %lld elements into %lld", c->info->name, (long long)a, (long long)b);
        return pld_ck_shaped(ck, t0->kind, t0->dtype, dims, r, NULL, t0->mem);
    }
    case PLD_OPID_TILE_CAST:
    case PLD_OPID_TENSOR_CAST: {
        pld_dtype_t dt = pld_ck_dtype_arg(ck, c->args[1]);
        if (t0->kind == PLD_TY_UNKNOWN)
            return t0;
        const char *mode = pld_ck_const_str(c->args[2]);
        static const char *const modes[] = {"none", "rint", "round", "floor", "ceil", "trunc", "odd"};
        if (c->args[2] && !mode) {
            int64_t v;
            if (!pld_ck_const_int(ck, c->args[2], &v) || v < 0 || v > 6)
                pld_ck_error(ck, c->args[2]->span, "cast mode must be one of 'none', 'rint', 'round', 'floor', 'ceil', 'trunc', 'odd'");
        } else if (mode) {
            int found = 0;
            for (size_t i = 0; i < 7; i++)
                found |= strcmp(mode, modes[i]) == 0;
            if (!found)
                pld_ck_error(ck, c->args[2]->span, "unknown cast mode '%s' (expected none, rint, round, floor, ceil, trunc or odd)", mode);
        }
        return with_dtype(ck, t0, dt);
    }
    case PLD_OPID_TILE_MATMUL:
    case PLD_OPID_TENSOR_MATMUL: {
        const pld_type_t *b = c->types[1];
        if (t0->kind == PLD_TY_UNKNOWN || !b || b->kind == PLD_TY_UNKNOWN)
            return &pld_type_unknown;
        /* pl.tensor.matmul: a_trans / b_trans (literal booleans) transpose an operand */
        int ta = 0, tb = 0, tensor = c->info->id == PLD_OPID_TENSOR_MATMUL;
        if (tensor) {
            ta = c->args[3] && c->args[3]->kind == PLD_EX_BOOL && c->args[3]->u.bval;
            tb = c->args[4] && c->args[4]->kind == PLD_EX_BOOL && c->args[4]->u.bval;
            for (int k = 3; k <= 4; k++)
                if (c->args[k] && c->args[k]->kind != PLD_EX_BOOL)
                    pld_ck_error(ck, c->args[k]->span, "%s %s must be True or False", c->info->name,
                                 k == 3 ? "a_trans" : "b_trans");
        }
        /* the result dtype: out_dtype, else the FP32/INT32 accumulator (tile) or
         * PyPTO's promotion of the operand dtypes (tensor, tensor_ops/matmul.cpp) */
        pld_dtype_t od = pld_ck_dtype_arg(ck, c->args[2]);
        if (od == PLD_DT_NONE)
            od = tensor ? pld_dtype_promote(t0->dtype, b->dtype)
                        : pld_dtype_is_float(t0->dtype) ? PLD_DT_FP32 : PLD_DT_INT32;
        if (tensor && (t0->rank > 2 || b->rank > 2))
            return pld_ck_tensor_matmul_nd(ck, c, ta, tb, od);
        if (t0->rank != 2 || b->rank != 2) {
            pld_ck_error(ck, c->call->span, "%s needs 2-D operands, got %s and %s", c->info->name, pld_ck_tystr(ck, t0), pld_ck_tystr(ck, b));
            return &pld_type_unknown;
        }
        if (pld_dim_eq(&t0->shape[!ta], &b->shape[tb]) == 0) {
            pld_ck_error(ck, c->call->span, "%s inner dimensions differ: %s%s @ %s%s", c->info->name, pld_ck_tystr(ck, t0),
                         ta ? " (transposed)" : "", pld_ck_tystr(ck, b), tb ? " (transposed)" : "");
            return &pld_type_unknown;
        }
        pld_dim_t d[2] = {t0->shape[ta], b->shape[!tb]};
        return pld_ck_shaped(ck, t0->kind, od, d, 2, NULL, t0->kind == PLD_TY_TILE ? PLD_MEM_ACC : PLD_MEM_NONE);
    }
    case PLD_OPID_TILE_ADD: case PLD_OPID_TILE_SUB: case PLD_OPID_TILE_MUL: case PLD_OPID_TILE_DIV:
    case PLD_OPID_TILE_MAXIMUM: case PLD_OPID_TILE_MINIMUM:
    case PLD_OPID_TENSOR_ADD: case PLD_OPID_TENSOR_SUB: case PLD_OPID_TENSOR_MUL: case PLD_OPID_TENSOR_DIV:
    case PLD_OPID_TENSOR_MAXIMUM: case PLD_OPID_TENSOR_MINIMUM:
        return pld_ck_infer_binary(ck, c);
    case PLD_OPID_TILE_ADDS: case PLD_OPID_TILE_SUBS: case PLD_OPID_TILE_MULS: case PLD_OPID_TILE_DIVS:
    case PLD_OPID_TILE_MAXIMUMS: case PLD_OPID_TILE_MINIMUMS:
    case PLD_OPID_TENSOR_ADDS: case PLD_OPID_TENSOR_SUBS: case PLD_OPID_TENSOR_MULS: case PLD_OPID_TENSOR_DIVS:
    case PLD_OPID_TILE_EXP: case PLD_OPID_TILE_LOG: case PLD_OPID_TILE_SQRT: case PLD_OPID_TILE_RSQRT:
    case PLD_OPID_TILE_ABS: case PLD_OPID_TILE_NEG: case PLD_OPID_TILE_RECIP: case PLD_OPID_TILE_RELU:
    case PLD_OPID_TENSOR_EXP: case PLD_OPID_TENSOR_LOG: case PLD_OPID_TENSOR_SQRT: case PLD_OPID_TENSOR_ABS:
    case PLD_OPID_TENSOR_NEG:
        if (t0->kind == PLD_TY_TILE)
            return pld_ck_shaped(ck, PLD_TY_TILE, t0->dtype, t0->shape, t0->rank, t0->valid, PLD_MEM_VEC);
        return t0;
    case PLD_OPID_TILE_ROW_MIN: case PLD_OPID_TENSOR_ROW_MIN: {
        pld_dtype_t dt = t0->dtype;
        if (t0->kind != PLD_TY_UNKNOWN && dt != PLD_DT_INT16 && dt != PLD_DT_INT32 && dt != PLD_DT_FP16 && dt != PLD_DT_FP32)
            pld_ck_error(ck, c->call->span, "%s needs INT16, INT32, FP16 or FP32, got %s", c->info->name, pld_dtype_name(dt));
        check_tmp_tile(ck, c, 1, 0);
        return reduce_axis(ck, c, 1, PLD_DT_NONE);
    }
    case PLD_OPID_TILE_ROW_SUM: case PLD_OPID_TILE_ROW_MAX: case PLD_OPID_TILE_ROW_PROD:
        check_tmp_tile(ck, c, 1, 0);
        return reduce_axis(ck, c, 1, PLD_DT_NONE);
    case PLD_OPID_TENSOR_ROW_SUM: case PLD_OPID_TENSOR_ROW_MAX: case PLD_OPID_TENSOR_ROW_PROD:
        return reduce_axis(ck, c, 1, PLD_DT_NONE);
    case PLD_OPID_TILE_COL_SUM:
        if (c->args[1] && c->types[1] && c->types[1]->kind == PLD_TY_TILE && t0->kind == PLD_TY_TILE &&
            c->types[1]->dtype != t0->dtype)
            pld_ck_error(ck, c->args[1]->span, "%s tmp_tile dtype %s does not match the input dtype %s", c->info->name,
                         pld_dtype_name(c->types[1]->dtype), pld_dtype_name(t0->dtype));
        return reduce_axis(ck, c, 0, PLD_DT_NONE);
    case PLD_OPID_TILE_COL_MAX: case PLD_OPID_TILE_COL_MIN: case PLD_OPID_TILE_COL_PROD:
    case PLD_OPID_TENSOR_COL_SUM: case PLD_OPID_TENSOR_COL_MAX: case PLD_OPID_TENSOR_COL_MIN: case PLD_OPID_TENSOR_COL_PROD:
        return reduce_axis(ck, c, 0, PLD_DT_NONE);
    case PLD_OPID_TILE_ROW_ARGMAX: case PLD_OPID_TILE_ROW_ARGMIN:
        check_tmp_tile(ck, c, 1, 1);
        return reduce_axis(ck, c, 1, PLD_DT_INT32);
    case PLD_OPID_TENSOR_ROW_ARGMAX: case PLD_OPID_TENSOR_ROW_ARGMIN:
        return reduce_axis(ck, c, 1, PLD_DT_INT32);
    case PLD_OPID_TILE_COL_ARGMAX: case PLD_OPID_TILE_COL_ARGMIN:
        if (c->types[1] && c->types[1]->kind == PLD_TY_TILE && t0->kind == PLD_TY_TILE && c->types[1]->dtype != t0->dtype)
            pld_ck_error(ck, c->args[1]->span, "%s tmp_tile dtype %s does not match the input dtype %s", c->info->name,
                         pld_dtype_name(c->types[1]->dtype), pld_dtype_name(t0->dtype));
        return reduce_axis(ck, c, 0, PLD_DT_INT32);
    case PLD_OPID_TENSOR_COL_ARGMAX: case PLD_OPID_TENSOR_COL_ARGMIN:
        return reduce_axis(ck, c, 0, PLD_DT_INT32);
    case PLD_OPID_TILE_EXPANDS:
        if (t0->kind == PLD_TY_TILE)
            return pld_ck_shaped(ck, PLD_TY_TILE, t0->dtype, t0->shape, t0->rank, t0->valid, PLD_MEM_VEC);
        return t0;
    case PLD_OPID_TENSOR_EXPANDS:
        if (pld_type_is_tensorlike(t0))
            return pld_ck_shaped(ck, PLD_TY_TENSOR, t0->dtype, t0->shape, t0->rank, NULL, PLD_MEM_NONE);
        return t0;
    case PLD_OPID_TENSOR_EXPAND_CLONE:
        return expand_clone(ck, c);
    case PLD_OPID_ARRAY_CREATE: {
        pld_type_t *t = pld_type_new(ck->p, PLD_TY_ARRAY);
        int64_t n = 0;
        if (!t)
            return &pld_type_unknown;
        pld_ck_const_int(ck, c->args[0], &n);
        if (n <= 0)
            pld_ck_error(ck, c->args[0]->span, "pl.array.create extent must be positive, found %lld", (long long)n);
        t->array_len = n;
        t->dtype = pld_ck_dtype_arg(ck, c->args[1]);
        if (t->dtype != PLD_DT_NONE && !pld_dtype_is_int(t->dtype) && t->dtype != PLD_DT_BOOL &&
            t->dtype != PLD_DT_TASK_ID)
            pld_ck_error(ck, c->args[1]->span, "array.create dtype must be integer, BOOL, or TASK_ID, got %s",
                         pld_dtype_name(t->dtype));
        return t;
    }
    case PLD_OPID_ARRAY_GET:
        return t0->kind == PLD_TY_ARRAY ? pld_type_scalar(ck->p, t0->dtype) : &pld_type_unknown;
    case PLD_OPID_ARRAY_UPDATE:
        return t0;
    default:
        return &pld_type_unknown;
    }
}
