/* pld_check_mem.c - checker rules of the fillpad family (pl.tile.fillpad,
 * fillpad_inplace, fillpad_expand, pl.tensor.fillpad, fillpad_expand),
 * set_validshape (tile and tensor) and the accumulating matmuls
 * (pl.tile.matmul_acc with init_cond, pl.tile.matmul_bias, the gemv family,
 * batch_matmul and batch_matmul_acc), with PyPTO's
 * constraints (snapshot e2d0f78ae6d7: src/ir/op/tile_ops/elementwise.cpp
 * tile.fillpad*, src/ir/op/tensor_ops/memory.cpp tensor.fillpad*,
 * python/pypto/ir/op/_pad_value.py, python/pypto/language/op/tile_ops.py
 * matmul_acc/matmul_bias/set_validshape/gemv, batch_matmul;
 * src/ir/op/tile_ops/batch_matmul.cpp), and the asynchronous L2 prefetch ops
 * (src/ir/op/prefetch/prefetch_async.cpp) and tile.alloc / tensor.alloc
 * (tile_ops/memory.cpp DeduceTileAllocType: a PtrType). pld_ck_mem_call() hands every
 * other op to pld_ck_mx_call (pld_check_mx.c: the MX matmul) and then to
 * pld_ck_layout_call (pld_check_layout.c), which returns NULL
 * for the rest; pld_ck_infer_op (pld_check_infer.c) then types them. */
#include "pld_check.h"
#include "pld_check_int.h"

#include <math.h>
#include <string.h>

int pld_check_pad_mode(const pld_expr_t *e)
{
    if (!e)
        return 0;
    switch (e->kind) {
    case PLD_EX_INT:
        return e->u.ival == 0 ? 0 : -1;
    case PLD_EX_FLOAT:
        if (e->u.fval == 0.0)
            return 0;
        if (isinf(e->u.fval))
            return e->u.fval > 0 ? 1 : 2;
        return -1;
    case PLD_EX_UNARY:
        if (e->u.un.op == PLD_UOP_NEG) {
            int m = pld_check_pad_mode(e->u.un.a);
            return m == 0 ? 0 : m == 1 ? 2 : m == 2 ? 1 : -1;
        }
        return -1;
    case PLD_EX_ATTR: {
        const char *a = e->u.attr.attr;
        const pld_expr_t *o = e->u.attr.obj;
        if (o->kind == PLD_EX_NAME && strcmp(o->u.name, "math") == 0)
            return strcmp(a, "inf") == 0 ? 1 : -1;
        const char *en = o->kind == PLD_EX_ATTR ? o->u.attr.attr : o->kind == PLD_EX_NAME ? o->u.name : "";
        if (strcmp(en, "PadValue") != 0)
            return -1;
        return strcmp(a, "zero") == 0 ? 0 : strcmp(a, "max") == 0 ? 1 : strcmp(a, "min") == 0 ? 2 : -1;
    }
    default:
        return -1;
    }
}

void pld_ck_check_pad(pld_ck_t *ck, ck_call_t *c, int i)
{
    if (pld_check_pad_mode(c->args[i]) < 0)
        pld_ck_error(ck, c->args[i]->span, "%s pad_value must be pl.PadValue.zero, pl.PadValue.max, pl.PadValue.min "
                                           "or one of the literals 0, math.inf, -math.inf (the three padding modes)",
                     c->info->name);
}

/* Operand i must be a 2-D shaped value of the op's kind (tile or tensor). */
static int want_2d(pld_ck_t *ck, ck_call_t *c, int i, const char *role)
{
    const pld_type_t *t = c->types[i];
    if (!t || t->kind == PLD_TY_UNKNOWN)
        return 0;
    if (t->rank != 2) {
        pld_ck_error(ck, c->call->span, "%s needs a 2-D %s, got %s", c->info->name, role, pld_ck_tystr(ck, t));
        return 0;
    }
    return 1;
}

static void want_index(pld_ck_t *ck, ck_call_t *c, int i, int64_t dim)
{
    const pld_type_t *t = c->types[i];
    if (t && t->kind == PLD_TY_SCALAR && !pld_dtype_is_int(t->dtype)) {
        pld_ck_error(ck, c->args[i]->span, "%s %s must be an integer, got %s", c->info->name, c->info->params[i].name,
                     pld_dtype_name(t->dtype));
        return;
    }
    int64_t v;
    if (pld_ck_const_int(ck, c->args[i], &v) && (v < 0 || (dim >= 0 && v > dim)))
        pld_ck_error(ck, c->args[i]->span, "%s %s %lld is outside [0, %lld]", c->info->name, c->info->params[i].name,
                     (long long)v, (long long)dim);
}

static const pld_type_t *fillpad_expand(pld_ck_t *ck, ck_call_t *c)
{
    const pld_type_t *t0 = c->types[0];
    pld_dim_t dims[PLD_CK_MAX_RANK];
    int r = pld_ck_dims_of_list(ck, c->args[1], dims);
    pld_ck_check_pad(ck, c, 2);
    if (r < 0 || !t0 || t0->kind == PLD_TY_UNKNOWN)
        return &pld_type_unknown;
    if (r != t0->rank) {
        pld_ck_error(ck, c->args[1]->span, "%s shape has %d entries but the source has rank %d", c->info->name, r,
                     t0->rank);
        return &pld_type_unknown;
    }
    for (int i = 0; i < r; i++) {
        if (dims[i].kind != PLD_DIM_CONST) {
            pld_ck_error(ck, c->args[1]->span, "%s shape dimension %d must be a constant integer", c->info->name, i);
            return &pld_type_unknown;
        }
        if (dims[i].v <= 0) {
            pld_ck_error(ck, c->args[1]->span, "%s shape dimension %d must be positive, got %lld", c->info->name, i,
                         (long long)dims[i].v);
            return &pld_type_unknown;
        }
        if (t0->shape[i].kind == PLD_DIM_CONST && dims[i].v < t0->shape[i].v) {
            pld_ck_error(ck, c->args[1]->span, "%s destination dimension %d (%lld) must be >= the source's (%lld)",
                         c->info->name, i, (long long)dims[i].v, (long long)t0->shape[i].v);
            return &pld_type_unknown;
        }
    }
    if (!pld_ck_shape_size(ck, c->call->span, c->info->name, dims, r, t0->dtype, NULL))
        return &pld_type_unknown;
    return pld_ck_shaped(ck, t0->kind, t0->dtype, dims, r, NULL, t0->mem);
}

/* acc dtype of matmul operands of dtype dt. */
static pld_dtype_t acc_dtype(pld_dtype_t dt)
{
    return pld_dtype_is_float(dt) ? PLD_DT_FP32 : PLD_DT_INT32;
}

/* lhs [M,K] (index l) @ rhs [K,N] (l+1): 1 when they fit (dims not provably different, same dtype). */
static int mm_operands(pld_ck_t *ck, ck_call_t *c, int l)
{
    if (!want_2d(ck, c, l, "lhs") || !want_2d(ck, c, l + 1, "rhs"))
        return 0;
    const pld_type_t *a = c->types[l], *b = c->types[l + 1];
    if (pld_dim_eq(&a->shape[1], &b->shape[0]) == 0) {
        pld_ck_error(ck, c->call->span, "%s inner dimensions differ: %s @ %s", c->info->name, pld_ck_tystr(ck, a),
                     pld_ck_tystr(ck, b));
        return 0;
    }
    if (a->dtype != b->dtype) {
        pld_ck_error(ck, c->call->span, "%s lhs and rhs dtypes differ (%s, %s)", c->info->name, pld_dtype_name(a->dtype),
                     pld_dtype_name(b->dtype));
        return 0;
    }
    return 1;
}

static const pld_type_t *matmul_acc(pld_ck_t *ck, ck_call_t *c)
{
    const pld_type_t *acc = c->types[0], *ic = c->info->id == PLD_OPID_TILE_MATMUL_ACC ? c->types[3] : NULL;
    if (ic && ic->kind != PLD_TY_SCALAR && ic->kind != PLD_TY_UNKNOWN)
        pld_ck_error(ck, c->args[3]->span, "%s init_cond must be a boolean scalar, got %s", c->info->name,
                     pld_ck_tystr(ck, ic));
    if (!want_2d(ck, c, 0, "acc") || !mm_operands(ck, c, 1))
        return acc && acc->kind != PLD_TY_UNKNOWN ? acc : &pld_type_unknown;
    const pld_type_t *a = c->types[1], *b = c->types[2];
    if (pld_dim_eq(&acc->shape[0], &a->shape[0]) == 0 || pld_dim_eq(&acc->shape[1], &b->shape[1]) == 0)
        pld_ck_error(ck, c->call->span, "%s acc %s does not match lhs @ rhs (%s @ %s)", c->info->name,
                     pld_ck_tystr(ck, acc), pld_ck_tystr(ck, a), pld_ck_tystr(ck, b));
    else if (acc->dtype != acc_dtype(a->dtype))
        pld_ck_error(ck, c->call->span, "%s acc must be %s (the accumulator of %s operands), got %s", c->info->name,
                     pld_dtype_name(acc_dtype(a->dtype)), pld_dtype_name(a->dtype), pld_dtype_name(acc->dtype));
    return acc;
}

static const pld_type_t *matmul_bias(pld_ck_t *ck, ck_call_t *c)
{
    if (!mm_operands(ck, c, 0) || !want_2d(ck, c, 2, "bias"))
        return &pld_type_unknown;
    const pld_type_t *a = c->types[0], *b = c->types[1], *bias = c->types[2];
    pld_dim_t one = {PLD_DIM_CONST, 1, NULL, NULL};
    if (pld_dim_eq(&bias->shape[0], &one) == 0 || pld_dim_eq(&bias->shape[1], &b->shape[1]) == 0) {
        pld_ck_error(ck, c->call->span, "%s bias must be [1, N] with rhs's N columns, got %s for rhs %s", c->info->name,
                     pld_ck_tystr(ck, bias), pld_ck_tystr(ck, b));
        return &pld_type_unknown;
    }
    if (bias->dtype != acc_dtype(a->dtype)) {
        pld_ck_error(ck, c->call->span, "%s bias must be %s (the accumulator of %s operands), got %s", c->info->name,
                     pld_dtype_name(acc_dtype(a->dtype)), pld_dtype_name(a->dtype), pld_dtype_name(bias->dtype));
        return &pld_type_unknown;
    }
    pld_dim_t d[2] = {a->shape[0], b->shape[1]};
    return pld_ck_shaped(ck, PLD_TY_TILE, acc_dtype(a->dtype), d, 2, NULL, PLD_MEM_ACC);
}

/* gemv family: lhs (index l) has one row, operands INT8/FP16/BF16/FP32; acc_phase one of three words. */
static int gemv_ok(pld_ck_t *ck, ck_call_t *c, int l, int phase)
{
    const pld_expr_t *ph = c->args[phase];
    if (ph && (ph->kind != PLD_EX_STR || (strcmp(ph->u.str.s, "unspecified") != 0 && strcmp(ph->u.str.s, "partial") != 0 &&
                                          strcmp(ph->u.str.s, "final") != 0)))
        pld_ck_error(ck, ph->span, "%s acc_phase must be \"unspecified\", \"partial\" or \"final\"", c->info->name);
    if (!mm_operands(ck, c, l))
        return 0;
    const pld_type_t *a = c->types[l];
    pld_dim_t one = {PLD_DIM_CONST, 1, NULL, NULL};
    if (pld_dim_eq(&a->shape[0], &one) != 1) {
        pld_ck_error(ck, c->call->span, "%s lhs must be one row [1, K], got %s", c->info->name, pld_ck_tystr(ck, a));
        return 0;
    }
    pld_dtype_t d = a->dtype;
    if (d != PLD_DT_INT8 && d != PLD_DT_FP16 && d != PLD_DT_BF16 && d != PLD_DT_FP32) {
        pld_ck_error(ck, c->call->span, "%s operands must be INT8, FP16, BF16 or FP32, got %s", c->info->name,
                     pld_dtype_name(d));
        return 0;
    }
    return 1;
}

static int batch_dims(pld_ck_t *ck, ck_call_t *c, const pld_type_t *a, const pld_type_t *b, int ta, int tb,
                      pld_dim_t *out);

/* Broadcast batch dims of [..., M, K] @ [..., K, N] into out (rank returned, -1 after an error). */
static int batch_shape(pld_ck_t *ck, ck_call_t *c, int l, pld_dim_t *out)
{
    const pld_type_t *a = c->types[l], *b = c->types[l + 1];
    if (a->rank < 2 || b->rank < 2) {
        pld_ck_error(ck, c->call->span, "%s needs operands of rank >= 2, got %s and %s", c->info->name,
                     pld_ck_tystr(ck, a), pld_ck_tystr(ck, b));
        return -1;
    }
    if (a->dtype != b->dtype || pld_dim_eq(&a->shape[a->rank - 1], &b->shape[b->rank - 2]) == 0) {
        pld_ck_error(ck, c->call->span, "%s needs one dtype and equal K: %s @ %s", c->info->name, pld_ck_tystr(ck, a),
                     pld_ck_tystr(ck, b));
        return -1;
    }
    return batch_dims(ck, c, a, b, 0, 0, out);
}

/* The broadcast batch dims of op(a) @ op(b), then M and N, into out (op: the
 * two last dims swapped where ta / tb); the rank, or -1 after an error. */
static int batch_dims(pld_ck_t *ck, ck_call_t *c, const pld_type_t *a, const pld_type_t *b, int ta, int tb,
                      pld_dim_t *out)
{
    int na = a->rank - 2, nb = b->rank - 2, n = na > nb ? na : nb;
    for (int i = 0; i < n; i++) {
        const pld_dim_t *x = i < n - na ? NULL : &a->shape[i - (n - na)], *y = i < n - nb ? NULL : &b->shape[i - (n - nb)];
        if (!x || (x->kind == PLD_DIM_CONST && x->v == 1 && y))
            out[i] = *y;
        else if (!y || (y->kind == PLD_DIM_CONST && y->v == 1) || pld_dim_eq(x, y) == 1)
            out[i] = *x;
        else {
            pld_ck_error(ck, c->call->span, "%s cannot broadcast the batch dims of %s and %s", c->info->name,
                         pld_ck_tystr(ck, a), pld_ck_tystr(ck, b));
            return -1;
        }
    }
    out[n] = a->shape[a->rank - 2 + ta];
    out[n + 1] = b->shape[b->rank - 1 - tb];
    return n + 2;
}

const pld_type_t *pld_ck_tensor_matmul_nd(pld_ck_t *ck, ck_call_t *c, int ta, int tb, pld_dtype_t od)
{
    const pld_type_t *a = c->types[0], *b = c->types[1];
    if (a->rank < 2 || b->rank < 2) {
        pld_ck_error(ck, c->call->span, "%s requires both tensors to have at least 2 dimensions for batched matmul, "
                     "but got lhs shape size %d and rhs shape size %d", c->info->name, a->rank, b->rank);
        return &pld_type_unknown;
    }
    const pld_dim_t *ka = &a->shape[a->rank - 1 - ta], *kb = &b->shape[b->rank - 2 + tb];
    if (ka->kind == PLD_DIM_CONST && kb->kind == PLD_DIM_CONST && ka->v != kb->v) {
        pld_ck_error(ck, c->call->span, "%s requires matching inner dimensions for batched matmul, but got lhs K=%lld "
                     "and rhs K=%lld", c->info->name, (long long)ka->v, (long long)kb->v);
        return &pld_type_unknown;
    }
    pld_dim_t d[PLD_CK_MAX_RANK + 2];
    int r = batch_dims(ck, c, a, b, ta, tb, d);
    if (r < 0 || r > PLD_CK_MAX_RANK)
        return &pld_type_unknown;
    return pld_ck_shaped(ck, PLD_TY_TENSOR, od, d, r, NULL, PLD_MEM_NONE);
}

static const pld_type_t *batch_matmul(pld_ck_t *ck, ck_call_t *c)
{
    int acc = c->info->id == PLD_OPID_TILE_BATCH_MATMUL_ACC, l = acc ? 1 : 0;
    for (int i = 0; i < 2 + acc; i++)
        if (!c->types[i] || c->types[i]->kind == PLD_TY_UNKNOWN)
            return &pld_type_unknown;
    pld_dim_t d[PLD_CK_MAX_RANK + 2];
    int r = batch_shape(ck, c, l, d);
    if (r < 0 || r > PLD_CK_MAX_RANK)
        return &pld_type_unknown;
    pld_dtype_t od = acc_dtype(c->types[l]->dtype);
    if (acc) {
        const pld_type_t *t = c->types[0];
        int bad = t->rank != r || t->dtype != od;
        for (int i = 0; !bad && i < r; i++)
            bad = pld_dim_eq(&t->shape[i], &d[i]) == 0;
        if (bad)
            pld_ck_error(ck, c->call->span, "%s acc %s must be the %s result of shape broadcast(lhs, rhs) batch + [M, N]",
                         c->info->name, pld_ck_tystr(ck, t), pld_dtype_name(od));
        return t;
    }
    return pld_ck_shaped(ck, PLD_TY_TILE, od, d, r, NULL, PLD_MEM_ACC);
}

static int lit_true(const pld_expr_t *e)
{
    return e && e->kind == PLD_EX_BOOL && e->u.bval;
}

/* pl.tensor.matmul_acc(acc, lhs, rhs, a_trans, b_trans, init_cond). */
static const pld_type_t *tensor_matmul_acc(pld_ck_t *ck, ck_call_t *c)
{
    const pld_type_t *acc = c->types[0], *a = c->types[1], *b = c->types[2], *ic = c->types[5];
    if (ic && ic->kind != PLD_TY_SCALAR && ic->kind != PLD_TY_UNKNOWN)
        pld_ck_error(ck, c->args[5]->span, "%s init_cond must be a boolean scalar, got %s", c->info->name,
                     pld_ck_tystr(ck, ic));
    if (!want_2d(ck, c, 0, "acc") || !want_2d(ck, c, 1, "lhs") || !want_2d(ck, c, 2, "rhs"))
        return acc && acc->kind != PLD_TY_UNKNOWN ? acc : &pld_type_unknown;
    int ta = lit_true(c->args[3]), tb = lit_true(c->args[4]);
    const pld_dim_t *m = &a->shape[ta], *ka = &a->shape[!ta], *kb = &b->shape[tb], *n = &b->shape[!tb];
    if (a->dtype != b->dtype || pld_dim_eq(ka, kb) == 0 || pld_dim_eq(&acc->shape[0], m) == 0 ||
        pld_dim_eq(&acc->shape[1], n) == 0)
        pld_ck_error(ck, c->call->span, "%s: acc %s does not match op(lhs) @ op(rhs) (%s, %s)", c->info->name,
                     pld_ck_tystr(ck, acc), pld_ck_tystr(ck, a), pld_ck_tystr(ck, b));
    else if (acc->dtype != acc_dtype(a->dtype))
        pld_ck_error(ck, c->call->span, "%s acc must be %s (the accumulator of %s operands), got %s", c->info->name,
                     pld_dtype_name(acc_dtype(a->dtype)), pld_dtype_name(a->dtype), pld_dtype_name(acc->dtype));
    return pld_ck_shaped(ck, acc->kind, acc->dtype, acc->shape, 2, acc->valid, acc->mem);
}

/* pl.prefetch.async_prefetch's source: a tensor of static shape whose dims
 * are all 1 but the last (PyPTO's CheckFlatContiguous1DSource). */
static void prefetch_src(pld_ck_t *ck, ck_call_t *c)
{
    const pld_type_t *t = c->types[0];
    if (!t || !pld_type_is_tensorlike(t))
        return;
    const char *nm = c->info->name;
    if (t->rank < 1) {
        pld_ck_error(ck, c->args[0]->span, "%s expects src to have rank >= 1, got a rank-0 tensor", nm);
        return;
    }
    for (int i = 0; i < t->rank; i++)
        if (t->shape[i].kind != PLD_DIM_CONST) {
            pld_ck_error(ck, c->args[0]->span, "%s expects src to have a fully static shape, but dimension %d is "
                         "dynamic; async prefetch needs a compile-time byte extent", nm, i);
            return;
        }
    for (int i = 0; i + 1 < t->rank; i++)
        if (t->shape[i].v != 1) {
            pld_ck_error(ck, c->args[0]->span, "%s expects src to be a flat contiguous logical 1D GM region (all "
                         "dimensions except the last must be 1), but dimension %d is %lld; reshape the tensor to "
                         "[N] or [1, ..., N] before prefetching", nm, i, (long long)t->shape[i].v);
            return;
        }
}

const pld_type_t *pld_ck_mem_call(pld_ck_t *ck, ck_call_t *c)
{
    const pld_type_t *t0 = c->types[0];
    switch (c->info->id) {
    case PLD_OPID_TILE_FILLPAD:
    case PLD_OPID_TILE_FILLPAD_INPLACE:
    case PLD_OPID_TENSOR_FILLPAD:
        pld_ck_check_pad(ck, c, 1);
        if (!t0 || t0->kind == PLD_TY_UNKNOWN)
            return &pld_type_unknown;
        /* the whole tile (tensor) is valid afterwards (elementwise.cpp, "After fillpad, the entire tile is valid") */
        return pld_ck_shaped(ck, t0->kind, t0->dtype, t0->shape, t0->rank, NULL, t0->mem);
    case PLD_OPID_TILE_FILLPAD_EXPAND:
    case PLD_OPID_TENSOR_FILLPAD_EXPAND:
        return fillpad_expand(ck, c);
    case PLD_OPID_TILE_SET_VALIDSHAPE:
    case PLD_OPID_TENSOR_SET_VALIDSHAPE:
        if (!want_2d(ck, c, 0, c->info->id == PLD_OPID_TILE_SET_VALIDSHAPE ? "tile" : "tensor"))
            return t0 ? t0 : &pld_type_unknown;
        want_index(ck, c, 1, t0->shape[0].kind == PLD_DIM_CONST ? t0->shape[0].v : -1);
        want_index(ck, c, 2, t0->shape[1].kind == PLD_DIM_CONST ? t0->shape[1].v : -1);
        return pld_ck_shaped(ck, t0->kind, t0->dtype, t0->shape, t0->rank, NULL, t0->mem);
    case PLD_OPID_TILE_MATMUL_ACC:
        return matmul_acc(ck, c);
    case PLD_OPID_TILE_MATMUL_BIAS:
        return matmul_bias(ck, c);
    case PLD_OPID_TILE_GEMV:
        if (!gemv_ok(ck, c, 0, 2))
            return &pld_type_unknown;
        {
            pld_dim_t d[2] = {t0->shape[0], c->types[1]->shape[1]};
            return pld_ck_shaped(ck, PLD_TY_TILE, acc_dtype(t0->dtype), d, 2, NULL, PLD_MEM_ACC);
        }
    case PLD_OPID_TILE_GEMV_ACC:
        if (!gemv_ok(ck, c, 1, 3))
            return t0 && t0->kind != PLD_TY_UNKNOWN ? t0 : &pld_type_unknown;
        return matmul_acc(ck, c);
    case PLD_OPID_TILE_GEMV_BIAS:
        if (!gemv_ok(ck, c, 0, 3))
            return &pld_type_unknown;
        return matmul_bias(ck, c);
    case PLD_OPID_TILE_BATCH_MATMUL:
    case PLD_OPID_TILE_BATCH_MATMUL_ACC:
        return batch_matmul(ck, c);
    case PLD_OPID_TENSOR_MATMUL_ACC:
        return tensor_matmul_acc(ck, c);
    case PLD_OPID_TILE_ALLOC:
    case PLD_OPID_TENSOR_ALLOC:
        return &pld_type_ptr;
    case PLD_OPID_PREFETCH_MAKE_CONTEXT:
        return &pld_type_prefetch_ctx;
    case PLD_OPID_PREFETCH_ASYNC:
        prefetch_src(ck, c);
        return &pld_type_async_event;
    case PLD_OPID_PREFETCH_SESSION:
        return &pld_type_async_session;
    case PLD_OPID_PREFETCH_WAIT:
        return pld_type_scalar(ck->p, PLD_DT_BOOL);
    default: {
        const pld_type_t *mx = pld_ck_mx_call(ck, c);
        return mx ? mx : pld_ck_layout_call(ck, c);
    }
    }
}
