/* pld_exec_compute.c - compute ops on tiles and tensors: element-wise
 * (binary with broadcasting, scalar right-hand side, unary), row/column
 * reductions, casts with rounding modes, and matmul. Operands are checked here
 * with located runtime errors; the arithmetic is pld_kern.c's. */
#include "pld_interp_int.h"
#include "pld_assert.h"

#include <string.h>

#define ERRN 256

/* Broadcast view of tile/tensor data `src` (shape s, rank r) to the shape out. */
static void bview(pld_view_t *v, void *data, pld_dtype_t dt, int r, const int64_t *s, const int64_t *strides, int orank,
                  const int64_t *out)
{
    memset(v, 0, sizeof *v);
    v->data = data;
    v->dt = dt;
    v->rank = orank;
    for (int d = 0; d < orank; d++) {
        int j = d - (orank - r);
        v->shape[d] = out[d];
        v->strides[d] = j < 0 || (s[j] == 1 && out[d] != 1) ? 0 : strides[j];
    }
}

static pld_binop_k_t binop_of(int op)
{
    switch (op) {
    case PLD_OPID_TILE_ADD: case PLD_OPID_TILE_ADDS: case PLD_OPID_TENSOR_ADD: case PLD_OPID_TENSOR_ADDS: return PLD_K_ADD;
    case PLD_OPID_TILE_SUB: case PLD_OPID_TILE_SUBS: case PLD_OPID_TENSOR_SUB: case PLD_OPID_TENSOR_SUBS: return PLD_K_SUB;
    case PLD_OPID_TILE_MUL: case PLD_OPID_TILE_MULS: case PLD_OPID_TENSOR_MUL: case PLD_OPID_TENSOR_MULS: return PLD_K_MUL;
    case PLD_OPID_TILE_DIV: case PLD_OPID_TILE_DIVS: case PLD_OPID_TENSOR_DIV: case PLD_OPID_TENSOR_DIVS: return PLD_K_DIV;
    case PLD_OPID_TILE_MAXIMUM: case PLD_OPID_TILE_MAXIMUMS: case PLD_OPID_TENSOR_MAXIMUM: return PLD_K_MAX;
    case PLD_OPID_TILE_MINIMUM: case PLD_OPID_TILE_MINIMUMS: case PLD_OPID_TENSOR_MINIMUM: return PLD_K_MIN;
    case PLD_OPID_TILE_ROW_EXPAND_ADD: case PLD_OPID_TILE_COL_EXPAND_ADD:
    case PLD_OPID_TENSOR_ROW_EXPAND_ADD: case PLD_OPID_TENSOR_COL_EXPAND_ADD: return PLD_K_ADD;
    case PLD_OPID_TILE_ROW_EXPAND_SUB: case PLD_OPID_TILE_COL_EXPAND_SUB:
    case PLD_OPID_TENSOR_ROW_EXPAND_SUB: case PLD_OPID_TENSOR_COL_EXPAND_SUB:
    case PLD_OPID_TILE_ROW_EXPAND_EXPDIF: case PLD_OPID_TILE_COL_EXPAND_EXPDIF:
    case PLD_OPID_TENSOR_ROW_EXPAND_EXPDIF: case PLD_OPID_TENSOR_COL_EXPAND_EXPDIF: return PLD_K_SUB;
    case PLD_OPID_TILE_ROW_EXPAND_MUL: case PLD_OPID_TILE_COL_EXPAND_MUL:
    case PLD_OPID_TENSOR_ROW_EXPAND_MUL: case PLD_OPID_TENSOR_COL_EXPAND_MUL: return PLD_K_MUL;
    case PLD_OPID_TILE_ROW_EXPAND_DIV: case PLD_OPID_TILE_COL_EXPAND_DIV:
    case PLD_OPID_TENSOR_ROW_EXPAND_DIV: case PLD_OPID_TENSOR_COL_EXPAND_DIV: return PLD_K_DIV;
    case PLD_OPID_TILE_ROW_EXPAND_MAX: case PLD_OPID_TILE_COL_EXPAND_MAX:
    case PLD_OPID_TENSOR_ROW_EXPAND_MAX: case PLD_OPID_TENSOR_COL_EXPAND_MAX: return PLD_K_MAX;
    case PLD_OPID_TILE_ROW_EXPAND_MIN: case PLD_OPID_TILE_COL_EXPAND_MIN:
    case PLD_OPID_TENSOR_ROW_EXPAND_MIN: case PLD_OPID_TENSOR_COL_EXPAND_MIN: return PLD_K_MIN;
    default: PLD_UNREACHABLE("binop_of: an op pld_exec.c does not route to the binary element-wise ops");
    }
}

static pld_unop_k_t unop_of(int op)
{
    switch (op) {
    case PLD_OPID_TILE_EXP: case PLD_OPID_TENSOR_EXP: return PLD_K_EXP;
    case PLD_OPID_TILE_LOG: case PLD_OPID_TENSOR_LOG: return PLD_K_LOG;
    case PLD_OPID_TILE_SQRT: case PLD_OPID_TENSOR_SQRT: return PLD_K_SQRT;
    case PLD_OPID_TILE_RSQRT: case PLD_OPID_TENSOR_RSQRT: return PLD_K_RSQRT;
    case PLD_OPID_TILE_ABS: case PLD_OPID_TENSOR_ABS: return PLD_K_ABS;
    case PLD_OPID_TILE_NEG: case PLD_OPID_TENSOR_NEG: return PLD_K_NEG;
    case PLD_OPID_TILE_RECIP: case PLD_OPID_TENSOR_RECIP: return PLD_K_RECIP;
    case PLD_OPID_TILE_RELU: return PLD_K_RELU;
    default: PLD_UNREACHABLE("unop_of: an op pld_exec.c does not route to the unary element-wise ops");
    }
}

/* The valid shape of an element-wise tensor result o, PyPTO's type deduction
 * (tensor_ops/elementwise.cpp, unary.cpp): a unary op's, a cast's and one
 * with a scalar operand (b NULL) is its tensor a's; two tensors of o's shape
 * with one valid shape give it; otherwise (a broadcast, two valid shapes, and
 * with a NULL the ops that keep none: part_*, cmp, xor, the expands) o's
 * whole shape. Generated code: pc_tensor_elem_valid (pld_crt.h). */
void pld_tensor_elem_valid(pld_tensor_t *o, const pld_tensor_t *a, const pld_tensor_t *b)
{
    int keep = a && a->rank == o->rank && (!b || b->rank == o->rank);
    for (int d = 0; keep && d < o->rank; d++)
        keep = a->shape[d] == o->shape[d] && (!b || (b->shape[d] == o->shape[d] && b->valid[d] == a->valid[d]));
    for (int d = 0; d < o->rank; d++)
        o->valid[d] = keep ? a->valid[d] : o->shape[d];
}

/* Element-wise ops on tiles or tensors: binary (tile/tensor rhs), scalar rhs,
 * unary; the row/col broadcasts (row_expand*, col_expand*: the rhs vector
 * repeated over the lhs, whose shape and valid shape the result keeps; expdif
 * is a subtraction rounded to the dtype, then exp) and expands (scalar_rhs 2:
 * a fill of the lhs's shape). */
pld_status_t pld_exec_elementwise(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out, int nary,
                                   int scalar_rhs)
{
    pld_value_t a, b = pld_v_none();
    pld_status_t st = pld_op_eval(it, f, e, 0, &a);
    if (st != PLD_OK)
        return st;
    int is_tile = a.kind == PLD_V_TILE;
    if (a.kind != PLD_V_TILE && a.kind != PLD_V_TENSOR) {
        pld_vkind_t k = a.kind;
        pld_value_release(&a);
        return pld_rt_error(it, f, e->span, "%s: the operand must be a %s, found a %s", pld_op_name(e),
                            e->op < PLD_OPID_TENSOR_CREATE ? "tile" : "tensor", pld_vkind_name(k));
    }
    if (nary == 2 && (st = pld_op_eval(it, f, e, 1, &b)) != PLD_OK) {
        pld_value_release(&a);
        return st;
    }
    if (nary == 2 && !scalar_rhs && b.kind != a.kind) {
        pld_value_release(&a);
        pld_vkind_t k = b.kind;
        pld_value_release(&b);
        return pld_rt_error(it, f, e->span, "%s: both operands must be %ss, found a %s", pld_op_name(e),
                            is_tile ? "tile" : "tensor", pld_vkind_name(k));
    }
    if (scalar_rhs && !pld_v_is_scalar(&b)) {
        pld_value_release(&a);
        pld_value_release(&b);
        return pld_rt_error(it, f, e->span, "%s: the right operand must be a scalar", pld_op_name(e));
    }
    /* operand geometry */
    int ra, rb = 0;
    const int64_t *sa, *sb = NULL;
    int64_t sta[PLD_MAX_RANK], stb[PLD_MAX_RANK];
    void *da, *db = NULL;
    pld_dtype_t dt;
    const int64_t *va = NULL;
    if (is_tile) {
        pld_tile_t *t = pld_v_tile(&a);
        ra = t->rank, sa = t->shape, da = t->data, dt = t->dt, va = t->valid;
        pld_view_t tmp;
        pld_tile_kview(t, &tmp, 0);
        memcpy(sta, tmp.strides, sizeof sta);
    } else {
        pld_tensor_t *t = pld_v_tensor(&a);
        pld_view_t tmp;
        pld_tensor_kview(t, &tmp);
        ra = t->rank, sa = t->shape, da = tmp.data, dt = t->dt, va = t->valid;
        memcpy(sta, t->strides, sizeof sta);
    }
    if (nary == 2 && !scalar_rhs) {
        if (is_tile) {
            pld_tile_t *t = pld_v_tile(&b);
            pld_view_t tmp;
            pld_tile_kview(t, &tmp, 0);
            rb = t->rank, sb = t->shape, db = t->data;
            memcpy(stb, tmp.strides, sizeof stb);
            if (t->dt != dt)
                st = pld_rt_error(it, f, e->span, "%s: operand dtypes differ (%s and %s)", pld_op_name(e), pld_dtype_name(dt),
                                  pld_dtype_name(t->dt));
        } else {
            pld_tensor_t *t = pld_v_tensor(&b);
            pld_view_t tmp;
            pld_tensor_kview(t, &tmp);
            rb = t->rank, sb = t->shape, db = tmp.data;
            memcpy(stb, t->strides, sizeof stb);
            if (t->dt != dt)
                st = pld_rt_error(it, f, e->span, "%s: operand dtypes differ (%s and %s)", pld_op_name(e), pld_dtype_name(dt),
                                  pld_dtype_name(t->dt));
        }
    }
    const int xk = pld_op_expand_axis(e->op);
    if (st == PLD_OK && xk) {
        int ok = ra == 2 && rb == 2 && (xk == 'r' ? sb[1] == 1 && sb[0] == sa[0] : sb[0] == 1 && sb[1] == sa[1]);
        if (!ok) {
            char s1[96], s2[96];
            pld_shape_str(s1, sizeof s1, ra, sa);
            pld_shape_str(s2, sizeof s2, rb, sb);
            st = pld_rt_error(it, f, e->span, "%s: the vector %s must be %s for the operand %s", pld_op_name(e), s2,
                              xk == 'r' ? "[M, 1]" : "[1, N]", s1);
        }
    }
    int64_t oshape[PLD_MAX_RANK], ovalid[PLD_MAX_RANK];
    int orank = ra > rb ? ra : rb;
    for (int d = 0; st == PLD_OK && d < orank; d++) {
        int ja = d - (orank - ra), jb = d - (orank - rb);
        int64_t x = ja >= 0 ? sa[ja] : 1, y = nary == 2 && !scalar_rhs && jb >= 0 ? sb[jb] : 1;
        if (x != y && x != 1 && y != 1) {
            char s1[96], s2[96];
            pld_shape_str(s1, sizeof s1, ra, sa);
            pld_shape_str(s2, sizeof s2, rb, sb);
            st = pld_rt_error(it, f, e->span, "%s: shapes %s and %s do not broadcast", pld_op_name(e), s1, s2);
        }
        oshape[d] = x > y ? x : y;
        ovalid[d] = ja >= 0 && !(x == 1 && oshape[d] != 1) ? va[ja] : oshape[d];
    }
    if (st != PLD_OK) {
        pld_value_release(&a);
        pld_value_release(&b);
        return st;
    }
    pld_view_t vo, vA, vB;
    pld_value_t res;
    if (is_tile) {
        pld_tile_t *o = pld_tile_new(dt, orank, oshape, PLD_MEM_VEC);
        if (!o) {
            pld_value_release(&a);
            pld_value_release(&b);
            return pld_op_oom(it, f, e);
        }
        memcpy(o->valid, ovalid, sizeof o->valid);
        pld_tile_kview(o, &vo, 0);
        res = pld_tile_value(o);
    } else {
        pld_tensor_t *o = pld_tensor_new(dt, orank, oshape, 0);
        if (!o) {
            pld_value_release(&a);
            pld_value_release(&b);
            return pld_op_oom(it, f, e);
        }
        pld_tensor_elem_valid(o, scalar_rhs == 2 || xk ? NULL : pld_v_tensor(&a),
                              nary == 2 && !scalar_rhs ? pld_v_tensor(&b) : NULL);
        pld_tensor_kview(o, &vo);
        res = pld_v_obj(&o->hdr, dt);
    }
    bview(&vA, da, dt, ra, sa, sta, orank, oshape);
    char err[ERRN];
    if (nary == 1)
        st = pld_k_unary(unop_of(e->op), &vo, &vA, err, sizeof err);
    else if (scalar_rhs == 2)
        st = pld_dtype_is_float(dt) ? pld_k_fill_f(&vo, pld_v_as_f(&b)) : pld_k_fill_i(&vo, pld_v_as_i(&b));
    else if (scalar_rhs)
        st = pld_k_binary_scalar(binop_of(e->op), &vo, &vA, pld_v_as_f(&b), pld_v_as_i(&b), err, sizeof err);
    else {
        bview(&vB, db, dt, rb, sb, stb, orank, oshape);
        if (e->op == PLD_OPID_TILE_ROW_EXPAND || e->op == PLD_OPID_TILE_COL_EXPAND ||
            e->op == PLD_OPID_TENSOR_ROW_EXPAND || e->op == PLD_OPID_TENSOR_COL_EXPAND)
            st = pld_k_copy(&vo, &vB, err, sizeof err);
        else
            st = pld_k_binary(binop_of(e->op), &vo, &vA, &vB, err, sizeof err);
        if (st == PLD_OK && (e->op == PLD_OPID_TILE_ROW_EXPAND_EXPDIF || e->op == PLD_OPID_TILE_COL_EXPAND_EXPDIF ||
                             e->op == PLD_OPID_TENSOR_ROW_EXPAND_EXPDIF || e->op == PLD_OPID_TENSOR_COL_EXPAND_EXPDIF))
            st = pld_k_unary(PLD_K_EXP, &vo, &vo, err, sizeof err);
    }
    pld_value_release(&a);
    pld_value_release(&b);
    if (st != PLD_OK) {
        pld_value_release(&res);
        return pld_op_kcheck(it, f, e, st, err);
    }
    *out = res;
    return PLD_OK;
}

pld_status_t pld_exec_reduce(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out, pld_redop_k_t op,
                              int flags)
{
    pld_value_t a;
    pld_status_t st = pld_op_eval(it, f, e, 0, &a);
    if (st != PLD_OK)
        return st;
    const int row = flags & PLD_K_RED_ROW, tile = a.kind == PLD_V_TILE;
    if (!tile && a.kind != PLD_V_TENSOR) {
        pld_vkind_t k = a.kind;
        pld_value_release(&a);
        return pld_rt_error(it, f, e->span, "%s: the operand must be a %s, found a %s", pld_op_name(e),
                            e->op < PLD_OPID_TENSOR_CREATE ? "tile" : "tensor", pld_vkind_name(k));
    }
    /* row: the last axis; column: the second to last (the checker holds the
     * tile column forms to rank 2); the other dims are kept */
    const int rank = tile ? pld_v_tile(&a)->rank : pld_v_tensor(&a)->rank;
    const int ax = row ? rank - 1 : rank - 2;
    if (ax < 0) {
        pld_value_release(&a);
        return pld_rt_error(it, f, e->span, "%s needs a %s of rank >= %d", pld_op_name(e), tile ? "tile" : "tensor",
                            row ? 1 : 2);
    }
    /* the tree order of col_sum is selected by its tmp_tile (PyPTO) */
    if (e->op == PLD_OPID_TILE_COL_SUM && pld_op_arg(e, 1))
        flags |= PLD_K_RED_TREE;
    pld_view_t vi, vo;
    pld_value_t res;
    const pld_dtype_t dt0 = tile ? pld_v_tile(&a)->dt : pld_v_tensor(&a)->dt;
    const pld_dtype_t odt = op == PLD_K_RARGMAX || op == PLD_K_RARGMIN ? PLD_DT_INT32 : dt0;
    const int64_t *ishape = tile ? pld_v_tile(&a)->shape : pld_v_tensor(&a)->shape;
    const int64_t *ivalid = tile ? pld_v_tile(&a)->valid : pld_v_tensor(&a)->valid;
    int64_t os[PLD_MAX_RANK], ov[PLD_MAX_RANK];
    memcpy(os, ishape, sizeof os[0] * (size_t)rank);
    memcpy(ov, ivalid, sizeof ov[0] * (size_t)rank);
    os[ax] = ov[ax] = 1;
    if (tile) {
        pld_tile_t *o = pld_tile_new(odt, rank, os, PLD_MEM_VEC);
        if (!o) {
            pld_value_release(&a);
            return pld_op_oom(it, f, e);
        }
        memcpy(o->valid, ov, sizeof ov[0] * (size_t)rank);
        pld_tile_kview(pld_v_tile(&a), &vi, 1);
        pld_tile_kview(o, &vo, 1);
        res = pld_tile_value(o);
    } else {
        pld_tensor_t *o = pld_tensor_new(odt, rank, os, 1);
        if (!o) {
            pld_value_release(&a);
            return pld_op_oom(it, f, e);
        }
        memcpy(o->valid, ov, sizeof ov[0] * (size_t)rank);
        pld_tensor_kview(pld_v_tensor(&a), &vi);
        memcpy(vi.shape, ivalid, sizeof ivalid[0] * (size_t)rank);
        pld_tensor_kview(o, &vo);
        memcpy(vo.shape, o->valid, sizeof o->valid[0] * (size_t)rank);
        res = pld_v_obj(&o->hdr, odt);
    }
    char err[ERRN];
    st = pld_k_reduce(op, flags, &vo, &vi, err, sizeof err);
    pld_value_release(&a);
    if (st != PLD_OK) {
        pld_value_release(&res);
        return pld_op_kcheck(it, f, e, st, err);
    }
    *out = res;
    return PLD_OK;
}

/* pl.tensor.expand_clone(src, target): src broadcast (stride 0 on its size-1
 * dims) into target, in place; the result is target (PyPTO's lowering,
 * op_conversion_registry.cpp, tile.store's each broadcast copy into target). */
pld_status_t pld_exec_expand_clone(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    pld_value_t a, b;
    pld_status_t st = pld_op_need(it, f, e, 0, &a, PLD_V_TENSOR);
    if (st != PLD_OK)
        return st;
    if ((st = pld_op_need(it, f, e, 1, &b, PLD_V_TENSOR)) != PLD_OK) {
        pld_value_release(&a);
        return st;
    }
    pld_tensor_t *s = pld_v_tensor(&a), *t = pld_v_tensor(&b);
    int ok = s->rank == t->rank && s->dt == t->dt;
    for (int d = 0; ok && d < s->rank; d++)
        ok = s->shape[d] == t->shape[d] || s->shape[d] == 1;
    if (!ok) {
        char s1[96], s2[96];
        pld_shape_str(s1, sizeof s1, s->rank, s->shape);
        pld_shape_str(s2, sizeof s2, t->rank, t->shape);
        st = pld_rt_error(it, f, e->span, "%s: cannot expand %s %s to %s %s", pld_op_name(e), pld_dtype_name(s->dt), s1,
                          pld_dtype_name(t->dt), s2);
        goto fail;
    }
    pld_view_t vs, vo;
    pld_tensor_kview(s, &vs);
    pld_tensor_kview(t, &vo);
    for (int d = 0; d < s->rank; d++)
        if (s->shape[d] == 1 && t->shape[d] != 1) {
            vs.shape[d] = t->shape[d];
            vs.strides[d] = 0;
        }
    char err[ERRN];
    if ((st = pld_k_copy(&vo, &vs, err, sizeof err)) != PLD_OK) {
        st = pld_op_kcheck(it, f, e, st, err);
        goto fail;
    }
    int64_t zero[PLD_MAX_RANK] = {0};
    pld_tensor_mark_written(t, zero, t->shape);
    if (it->race) {
        pld_race_local(it, f, e, s, NULL, NULL, PLD_HB_READ);
        pld_race_local(it, f, e, t, zero, t->shape, PLD_HB_WRITE);
    }
    it->stats.bytes_moved += (uint64_t)pld_view_numel(&vo) * (uint64_t)pld_dtype_bytes(t->dt);
    pld_value_release(&a);
    *out = b;
    return PLD_OK;
fail:
    pld_value_release(&a);
    pld_value_release(&b);
    return st;
}

pld_round_k_t pld_round_mode(const pld_expr_t *m)
{
    static const char *const names[] = {"none", "rint", "round", "floor", "ceil", "trunc", "odd"};
    if (!m)
        return PLD_R_ROUND;
    if (m->kind == PLD_EX_STR)
        for (int i = 0; i < 7; i++)
            if (strcmp(m->u.str.s, names[i]) == 0)
                return (pld_round_k_t)i;
    if (m->kind == PLD_EX_INT && m->u.ival >= 0 && m->u.ival <= 6)
        return (pld_round_k_t)m->u.ival;
    return PLD_R_ROUND;
}

pld_status_t pld_exec_cast(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    pld_value_t a;
    pld_status_t st = pld_op_eval(it, f, e, 0, &a);
    if (st != PLD_OK)
        return st;
    pld_dtype_t dt = pld_expr_dtype(it, pld_op_arg(e, 1));
    if (dt == PLD_DT_NONE)
        dt = pld_op_dtype(it, e, 1);
    pld_view_t vi, vo;
    pld_value_t res;
    if (a.kind == PLD_V_TILE) {
        pld_tile_t *t = pld_v_tile(&a);
        pld_tile_t *o = pld_tile_new(dt, t->rank, t->shape, t->mem);
        if (!o) {
            pld_value_release(&a);
            return pld_op_oom(it, f, e);
        }
        memcpy(o->valid, t->valid, sizeof o->valid);
        pld_tile_kview(t, &vi, 0);
        pld_tile_kview(o, &vo, 0);
        res = pld_tile_value(o);
    } else if (a.kind == PLD_V_TENSOR) {
        pld_tensor_t *t = pld_v_tensor(&a);
        pld_tensor_t *o = pld_tensor_new(dt, t->rank, t->shape, 0);
        if (!o) {
            pld_value_release(&a);
            return pld_op_oom(it, f, e);
        }
        pld_tensor_elem_valid(o, t, NULL);
        pld_tensor_kview(t, &vi);
        pld_tensor_kview(o, &vo);
        res = pld_v_obj(&o->hdr, dt);
    } else {
        pld_value_release(&a);
        return pld_rt_error(it, f, e->span, "%s needs a tile or a tensor", pld_op_name(e));
    }
    char err[ERRN];
    st = pld_k_cast(&vo, &vi, pld_round_mode(pld_op_arg(e, 2)), err, sizeof err);
    pld_value_release(&a);
    if (st != PLD_OK) {
        pld_value_release(&res);
        return pld_op_kcheck(it, f, e, st, err);
    }
    *out = res;
    return PLD_OK;
}

/* matmul (mode 0), matmul_acc (1: init_cond overwrites), matmul_bias (2). */
/* The broadcast batch dims of matmul operands of ranks xr and yr (>= 2;
 * batch dims right-aligned, numpy's rule) into os: their count, or -1 with
 * an error raised. */
static int mm_batch(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const int64_t *xs, int xr, const int64_t *ys,
                    int yr, int64_t *os)
{
    int na = xr - 2, nb = yr - 2, n = na > nb ? na : nb;
    if (na < 0 || nb < 0 || n + 2 > PLD_MAX_RANK) {
        pld_rt_error(it, f, e->span, "%s: incompatible shapes", pld_op_name(e));
        return -1;
    }
    for (int i = 0; i < n; i++) {
        int64_t p = i < n - na ? 1 : xs[i - (n - na)], q = i < n - nb ? 1 : ys[i - (n - nb)];
        if (p != q && p != 1 && q != 1) {
            pld_rt_error(it, f, e->span, "%s: batch dims %lld and %lld do not broadcast", pld_op_name(e), (long long)p,
                         (long long)q);
            return -1;
        }
        os[i] = p == 1 ? q : p;
    }
    return n;
}

/* v (rank >= 2) as a rank-(n + 2) operand of pld_k_matmul: its batch dims
 * right-aligned with the n dims of os, the missing and size-1 ones broadcast
 * (stride 0); its two last dims swapped when t. */
static void mm_operand(pld_view_t *v, int t, int n, const int64_t *os)
{
    const pld_view_t w = *v;
    const int lead = n - (w.rank - 2);
    v->rank = n + 2;
    for (int d = 0; d < n + 2; d++) {
        const int s = d - lead;
        const int bc = d < n && (s < 0 || w.shape[s] == 1);
        v->shape[d] = bc ? os[d] : w.shape[s];
        v->strides[d] = bc ? 0 : w.strides[s];
    }
    if (t) {
        int64_t s0 = v->shape[n], t0 = v->strides[n];
        v->shape[n] = v->shape[n + 1], v->strides[n] = v->strides[n + 1];
        v->shape[n + 1] = s0, v->strides[n + 1] = t0;
    }
}

/* pl.tile.batch_matmul(_acc): one k-ordered matmul per broadcast batch index. */
pld_status_t pld_exec_batch_matmul(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    int acc = e->op == PLD_OPID_TILE_BATCH_MATMUL_ACC, l = acc ? 1 : 0;
    pld_value_t a, b, c = pld_v_none();
    pld_status_t st;
    if ((st = pld_op_need(it, f, e, l, &a, PLD_V_TILE)) != PLD_OK)
        return st;
    if ((st = pld_op_need(it, f, e, l + 1, &b, PLD_V_TILE)) != PLD_OK ||
        (acc && (st = pld_op_need(it, f, e, 0, &c, PLD_V_TILE)) != PLD_OK)) {
        pld_value_release(&a);
        pld_value_release(&b);
        return st;
    }
    pld_tile_t *x = pld_v_tile(&a), *y = pld_v_tile(&b), *o = NULL;
    int64_t os[PLD_MAX_RANK];
    int n = mm_batch(it, f, e, x->shape, x->rank, y->shape, y->rank, os);
    if (n < 0 || x->shape[x->rank - 1] != y->shape[y->rank - 2]) {
        st = n < 0 ? PLD_E_RUNTIME : pld_rt_error(it, f, e->span, "%s: incompatible shapes", pld_op_name(e));
        goto done;
    }
    os[n] = x->shape[x->rank - 2], os[n + 1] = y->shape[y->rank - 1];
    if (acc) {
        pld_tile_t *t = pld_v_tile(&c);
        int bad = t->rank != n + 2;
        for (int i = 0; !bad && i < n + 2; i++)
            bad = t->shape[i] != os[i];
        if (bad)
            st = pld_rt_error(it, f, e->span, "%s: acc does not have the result's shape", pld_op_name(e));
        else if (!(o = pld_tile_cow(&c)))
            st = pld_op_oom(it, f, e);
        else
            pld_tile_written_all(o), *out = c, c = pld_v_none();
    } else if (!(o = pld_tile_new(pld_dtype_is_float(x->dt) ? PLD_DT_FP32 : PLD_DT_INT32, n + 2, os, PLD_MEM_ACC))) {
        st = pld_op_oom(it, f, e);
    } else {
        *out = pld_tile_value(o);
    }
    if (st == PLD_OK) {
        pld_view_t va, vb, vo;
        pld_tile_kview(x, &va, 0);
        pld_tile_kview(y, &vb, 0);
        pld_tile_kview(o, &vo, 0);
        mm_operand(&va, 0, n, os);
        mm_operand(&vb, 0, n, os);
        char err[ERRN];
        st = pld_op_kcheck(it, f, e, pld_k_matmul(&vo, &va, &vb, acc, err, sizeof err), err);
        if (st != PLD_OK)
            pld_value_release(out);
    }
done:
    pld_value_release(&a);
    pld_value_release(&b);
    pld_value_release(&c);
    return st;
}

/* pl.tensor.matmul_acc: a new tensor acc + op(lhs) @ op(rhs), or op(lhs) @ op(rhs) where init_cond holds. */
pld_status_t pld_exec_tensor_matmul_acc(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    pld_value_t v[3] = {pld_v_none(), pld_v_none(), pld_v_none()};
    int64_t fl[3] = {0, 0, 0};
    pld_status_t st = PLD_OK;
    for (int i = 0; i < 3 && st == PLD_OK; i++)
        st = pld_op_need(it, f, e, i, &v[i], PLD_V_TENSOR);
    for (int i = 0; i < 3 && st == PLD_OK; i++)
        st = pld_op_iarg(it, f, e, 3 + i, 0, &fl[i]);
    pld_view_t va, vb, vc, vo;
    pld_tensor_t *o = NULL;
    if (st == PLD_OK) {
        pld_tensor_kview(pld_v_tensor(&v[0]), &vc);
        pld_tensor_kview(pld_v_tensor(&v[1]), &va);
        pld_tensor_kview(pld_v_tensor(&v[2]), &vb);
        for (int t = 0; t < 2; t++) {
            pld_view_t *x = t ? &vb : &va;
            if (fl[t] && x->rank == 2) {
                int64_t s0 = x->shape[0], t0 = x->strides[0];
                x->shape[0] = x->shape[1], x->strides[0] = x->strides[1];
                x->shape[1] = s0, x->strides[1] = t0;
            }
        }
        if (vc.rank != 2 || !(o = pld_tensor_new(vc.dt, 2, vc.shape, 1)))
            st = vc.rank != 2 ? pld_rt_error(it, f, e->span, "%s needs 2-D operands", pld_op_name(e)) : pld_op_oom(it, f, e);
    }
    char err[ERRN];
    if (st == PLD_OK) {
        pld_tensor_kview(o, &vo);
        memcpy(o->valid, pld_v_tensor(&v[0])->valid, sizeof o->valid);
        if (!fl[2])
            st = pld_op_kcheck(it, f, e, pld_k_copy(&vo, &vc, err, sizeof err), err);
        if (st == PLD_OK)
            st = pld_op_kcheck(it, f, e, pld_k_matmul(&vo, &va, &vb, !fl[2], err, sizeof err), err);
        if (st == PLD_OK) {
            *out = pld_v_obj(&o->hdr, o->dt);
            o = NULL;
        }
    }
    if (st != PLD_OK && o) {
        pld_value_t tmp = pld_v_obj(&o->hdr, o->dt);
        pld_value_release(&tmp);
    }
    for (int i = 0; i < 3; i++)
        pld_value_release(&v[i]);
    return st;
}

/* The bias row bt ([1, n] of vo's dtype; its first vo->shape[1] columns) added to every row of vo after the k
 * sum: one rounding in the accumulator dtype. */
static pld_status_t add_bias(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_view_t *vo,
                             const pld_tile_t *bt, int64_t n)
{
    if (bt->rank != 2 || bt->shape[0] != 1 || bt->shape[1] != n || bt->dt != vo->dt)
        return pld_rt_error(it, f, e->span, "%s: bias must be [1, %lld] of %s", pld_op_name(e), (long long)n,
                            pld_dtype_name(vo->dt));
    pld_view_t vbias, row = *vo;
    pld_tile_kview(bt, &vbias, 0);
    vbias.shape[1] = vo->shape[1];
    row.shape[0] = 1;
    char err[ERRN];
    pld_status_t st = PLD_OK;
    for (int64_t i = 0; i < vo->shape[0] && st == PLD_OK; i++) {
        row.data = (char *)vo->data + i * vo->strides[0] * pld_dtype_storage_bytes(vo->dt);
        st = pld_op_kcheck(it, f, e, pld_k_binary(PLD_K_ADD, &row, &row, &vbias, err, sizeof err), err);
    }
    return st;
}

pld_status_t pld_exec_matmul(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out, int mode)
{
    pld_value_t a, b, c = pld_v_none(), bias = pld_v_none();
    int acc = mode == 1, overwrite = 0;
    int base = acc ? 1 : 0;
    if (acc && e->op == PLD_OPID_TILE_MATMUL_ACC && pld_op_arg(e, 3)) {
        int64_t ic;
        pld_status_t sc = pld_op_iarg(it, f, e, 3, 0, &ic);
        if (sc != PLD_OK)
            return sc;
        overwrite = ic != 0;
    }
    pld_status_t st = pld_op_eval(it, f, e, base, &a);
    if (st != PLD_OK)
        return st;
    if ((st = pld_op_eval(it, f, e, base + 1, &b)) != PLD_OK) {
        pld_value_release(&a);
        return st;
    }
    if ((acc && (st = pld_op_need(it, f, e, 0, &c, PLD_V_TILE)) != PLD_OK) ||
        (mode == 2 && (st = pld_op_need(it, f, e, 2, &bias, PLD_V_TILE)) != PLD_OK)) {
        pld_value_release(&a);
        pld_value_release(&b);
        return st;
    }
    pld_view_t va, vb, vo;
    pld_value_t res = pld_v_none();
    if (a.kind == PLD_V_TILE && b.kind == PLD_V_TILE) {
        pld_tile_t *x = pld_v_tile(&a), *y = pld_v_tile(&b);
        if (x->rank != 2 || y->rank != 2 || x->shape[1] != y->shape[0]) {
            st = pld_rt_error(it, f, e->span, "%s: incompatible shapes", pld_op_name(e));
            goto done;
        }
        pld_tile_t *o;
        if (acc) {
            o = pld_tile_cow(&c);
            if (!o) {
                st = pld_op_oom(it, f, e);
                goto done;
            }
            pld_tile_written_all(o);
            res = c;
            c = pld_v_none();
        } else {
            int64_t os[2] = {x->shape[0], y->shape[1]};
            pld_dtype_t dt = e->type && e->type->dtype ? e->type->dtype
                                                      : pld_dtype_is_float(x->dt) ? PLD_DT_FP32 : PLD_DT_INT32;
            o = pld_tile_new(dt, 2, os, PLD_MEM_ACC);
            if (!o) {
                st = pld_op_oom(it, f, e);
                goto done;
            }
            o->valid[0] = x->valid[0];
            o->valid[1] = y->valid[1];
            res = pld_tile_value(o);
        }
        pld_tile_kview(x, &va, 0);
        pld_tile_kview(y, &vb, 0);
        pld_tile_kview(o, &vo, 0);
    } else if (a.kind == PLD_V_TENSOR && b.kind == PLD_V_TENSOR && !acc) {
        /* pl.tensor.matmul(lhs, rhs, out_dtype, a_trans, b_trans, c_matrix_nz): op(lhs) @ op(rhs),
         * op = transpose where a_trans / b_trans; the result in out_dtype (default the accumulator's) */
        pld_tensor_t *x = pld_v_tensor(&a), *y = pld_v_tensor(&b);
        int64_t trans[2] = {0, 0};
        if (e->op == PLD_OPID_TENSOR_MATMUL &&
            ((st = pld_op_iarg(it, f, e, 3, 0, &trans[0])) != PLD_OK || (st = pld_op_iarg(it, f, e, 4, 0, &trans[1])) != PLD_OK))
            goto done;
        /* rank > 2: batch dims broadcast, one product per batch index (PyPTO's batch_matmul) */
        int64_t os[PLD_MAX_RANK];
        int n = mm_batch(it, f, e, x->shape, x->rank, y->shape, y->rank, os);
        if (n < 0) {
            st = PLD_E_RUNTIME;
            goto done;
        }
        pld_tensor_kview(x, &va);
        pld_tensor_kview(y, &vb);
        mm_operand(&va, (int)trans[0], n, os);
        mm_operand(&vb, (int)trans[1], n, os);
        if (va.shape[n + 1] != vb.shape[n]) {
            st = pld_rt_error(it, f, e->span, "%s: incompatible shapes", pld_op_name(e));
            goto done;
        }
        os[n] = va.shape[n], os[n + 1] = vb.shape[n + 1];
        /* the default result dtype: PyPTO's promotion of the operand dtypes (equal here) */
        pld_dtype_t dt = e->type && e->type->dtype ? e->type->dtype : x->dt;
        pld_tensor_t *o = pld_tensor_new(dt, n + 2, os, 1);
        if (!o) {
            st = pld_op_oom(it, f, e);
            goto done;
        }
        res = pld_v_obj(&o->hdr, o->dt);
        pld_tensor_kview(o, &vo);
    } else {
        st = pld_rt_error(it, f, e->span, "%s: operands must both be tiles or both tensors", pld_op_name(e));
        goto done;
    }
    char err[ERRN];
    st = pld_k_matmul(&vo, &va, &vb, acc && !overwrite, err, sizeof err);
    if (st != PLD_OK)
        st = pld_op_kcheck(it, f, e, st, err);
    if (st == PLD_OK && mode == 2)
        st = add_bias(it, f, e, &vo, pld_v_tile(&bias), vo.shape[1]);
    if (st == PLD_OK && acc && res.kind == PLD_V_TILE && pld_v_tile(&res)->win_of) {
        /* acc is a window of an Acc tile (pl.tile.slice): the result is written where the window lies */
        pld_tile_t *o = pld_v_tile(&res), *p = o->win_of;
        pld_view_t vp;
        pld_tile_kview(p, &vp, 0);
        int64_t o0 = 0;
        for (int d = 0; d < p->rank; d++) {
            o0 += o->win_off[d] * vp.strides[d];
            vp.shape[d] = o->shape[d];
        }
        vp.data = (char *)vp.data + o0 * pld_dtype_bytes(p->dt);
        pld_tile_kview(o, &vo, 0);
        st = pld_op_kcheck(it, f, e, pld_k_copy(&vp, &vo, err, sizeof err), err);
        if (st == PLD_OK)
            pld_tile_written_box(p, o->win_off, o->shape);
    }
done:
    pld_value_release(&a);
    pld_value_release(&b);
    pld_value_release(&c);
    pld_value_release(&bias);
    if (st == PLD_OK)
        *out = res;
    else
        pld_value_release(&res);
    return st;
}


/* pl.tile.matmul_mx / matmul_mx_acc / matmul_mx_bias (lhs at operand l, then lhs_scale, rhs, rhs_scale): the
 * [valid M, valid N] box of the result, k below the valid K; a new FP32 Acc tile, or acc's (copy on write). */
pld_status_t pld_exec_matmul_mx(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    const int acc = e->op == PLD_OPID_TILE_MATMUL_MX_ACC, bias = e->op == PLD_OPID_TILE_MATMUL_MX_BIAS, l = acc;
    pld_value_t v[5] = {pld_v_none(), pld_v_none(), pld_v_none(), pld_v_none(), pld_v_none()}, res = pld_v_none();
    pld_status_t st = PLD_OK;
    for (int i = 0; i < 4 + acc + bias && st == PLD_OK; i++)
        st = pld_op_need(it, f, e, i, &v[i], PLD_V_TILE);
    if (st != PLD_OK)
        goto done;
    const pld_tile_t *x = pld_v_tile(&v[l]), *xs = pld_v_tile(&v[l + 1]), *y = pld_v_tile(&v[l + 2]),
                     *ys = pld_v_tile(&v[l + 3]);
    if (x->rank != 2 || xs->rank != 2 || y->rank != 2 || ys->rank != 2 || x->shape[1] != y->shape[0]) {
        st = pld_rt_error(it, f, e->span, "%s needs 2-D tiles: lhs [M, K], rhs [K, N] and their scales", pld_op_name(e));
        goto done;
    }
    const int64_t vm = x->valid[0], vk = x->valid[1], vn = y->valid[1], g = (vk + 31) / 32;
    if (y->valid[0] != vk) {
        st = pld_rt_error(it, f, e->span, "%s requires matching valid K, but got lhs valid K=%lld and rhs valid K=%lld",
                          pld_op_name(e), (long long)vk, (long long)y->valid[0]);
        goto done;
    }
    if (xs->valid[0] < vm || xs->valid[1] < g || ys->valid[0] < g || ys->valid[1] < vn) {
        int left = xs->valid[0] < vm || xs->valid[1] < g;
        const pld_tile_t *s = left ? xs : ys;
        st = pld_rt_error(it, f, e->span, "%s: %s's valid box [%lld, %lld] does not cover the [%lld, %lld] scales of "
                          "valid K=%lld", pld_op_name(e), left ? "lhs_scale" : "rhs_scale", (long long)s->valid[0],
                          (long long)s->valid[1], (long long)(left ? vm : g), (long long)(left ? g : vn), (long long)vk);
        goto done;
    }
    pld_tile_t *o;
    if (acc) {
        if (!(o = pld_tile_cow(&v[0]))) {
            st = pld_op_oom(it, f, e);
            goto done;
        }
        pld_tile_written_all(o);
        res = v[0], v[0] = pld_v_none();
        if (o->rank != 2 || o->shape[0] != x->shape[0] || o->shape[1] != y->shape[1]) {
            st = pld_rt_error(it, f, e->span, "%s: acc must be [%lld, %lld]", pld_op_name(e), (long long)x->shape[0],
                              (long long)y->shape[1]);
            goto done;
        }
    } else {
        int64_t os[2] = {x->shape[0], y->shape[1]};
        if (!(o = pld_tile_new(PLD_DT_FP32, 2, os, PLD_MEM_ACC))) {
            st = pld_op_oom(it, f, e);
            goto done;
        }
        o->valid[0] = vm, o->valid[1] = vn;
        res = pld_tile_value(o);
    }
    pld_view_t va, vsa, vb, vsb, vo;
    pld_tile_kview(x, &va, 0);
    pld_tile_kview(xs, &vsa, 0);
    pld_tile_kview(y, &vb, 0);
    pld_tile_kview(ys, &vsb, 0);
    pld_tile_kview(o, &vo, 0);
    va.shape[0] = vo.shape[0] = vm, va.shape[1] = vb.shape[0] = vk, vb.shape[1] = vo.shape[1] = vn;
    char err[ERRN];
    st = pld_op_kcheck(it, f, e, pld_k_matmul_mx(&vo, &va, &vsa, &vb, &vsb, acc, err, sizeof err), err);
    if (st == PLD_OK && bias)
        st = add_bias(it, f, e, &vo, pld_v_tile(&v[4]), y->shape[1]);
done:
    for (int i = 0; i < 5; i++)
        pld_value_release(&v[i]);
    if (st == PLD_OK)
        *out = res;
    else
        pld_value_release(&res);
    return st;
}
