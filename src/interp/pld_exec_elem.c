/* pld_exec_elem.c - the element-wise ops of issue 11 on tiles and tensors:
 * sin/cos/not, fmod/rem, bitwise and shifts, compares (tiles: PyPTO's packed
 * predicate mask; tensors: 0/1 in the operand's dtype), sel/sels, lrelu/prelu,
 * addc/subc/addsc/subsc, the partial ops, and the ci/tri generators.
 * Operands are checked here with located runtime errors; the arithmetic is
 * pld_kern_ext.c's (numerics: docs/ops-numerics.md). */
#include "pld_interp_int.h"
#include "pld_assert.h"

#include <string.h>

#define ERRN 256

/* One evaluated operand: a tile, a tensor or a scalar. */
typedef struct opnd {
    pld_value_t v;
    int kind; /* 't' tile, 'T' tensor, 's' scalar */
    pld_dtype_t dt;
    int rank;
    const int64_t *shape, *valid;
    pld_view_t kv; /* kernel view of the whole operand */
} opnd_t;

static pld_status_t get_opnd(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int i, opnd_t *o, const char *want)
{
    memset(o, 0, sizeof *o);
    o->v = pld_v_none();
    pld_status_t st = pld_op_eval(it, f, e, i, &o->v);
    if (st != PLD_OK)
        return st;
    if (o->v.kind == PLD_V_TILE && strchr(want, 't')) {
        pld_tile_t *t = pld_v_tile(&o->v);
        o->kind = 't', o->dt = t->dt, o->rank = t->rank, o->shape = t->shape, o->valid = t->valid;
        pld_tile_kview(t, &o->kv, 0);
        return PLD_OK;
    }
    if (o->v.kind == PLD_V_TENSOR && strchr(want, 'T')) {
        pld_tensor_t *t = pld_v_tensor(&o->v);
        o->kind = 'T', o->dt = t->dt, o->rank = t->rank, o->shape = t->shape, o->valid = t->valid;
        pld_tensor_kview(t, &o->kv);
        return PLD_OK;
    }
    if (pld_v_is_scalar(&o->v) && strchr(want, 's')) {
        o->kind = 's', o->dt = o->v.dt;
        return PLD_OK;
    }
    pld_vkind_t k = o->v.kind;
    pld_value_release(&o->v);
    const pld_expr_t *a = pld_op_arg(e, i);
    return pld_rt_error(it, f, a ? a->span : e->span, "%s: operand %d must be a %s, found a %s", pld_op_name(e), i + 1,
                        strchr(want, 't') ? (strchr(want, 's') ? "tile or scalar" : "tile")
                                          : (strchr(want, 's') ? "tensor or scalar" : "tensor"),
                        pld_vkind_name(k));
}

static void drop(opnd_t *o, int n)
{
    for (int i = 0; i < n; i++)
        pld_value_release(&o[i].v);
}

/* A view of o broadcast to (orank, oshape): size-1 and missing dims stride 0. */
static void bview(pld_view_t *v, const opnd_t *o, int orank, const int64_t *oshape)
{
    *v = o->kv;
    v->rank = orank;
    for (int d = 0; d < orank; d++) {
        int j = d - (orank - o->rank);
        v->shape[d] = oshape[d];
        v->strides[d] = j < 0 || (o->shape[j] == 1 && oshape[d] != 1) ? 0 : o->kv.strides[j];
    }
}

/* A new packed result: a zeroed Vec tile with valid extents `valid` (tile)
 * or a tensor (not zeroed: the caller writes every element); vo views its data. */
static pld_status_t gen_result(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int tile, pld_dtype_t dt, int rank,
                               const int64_t *shape, const int64_t *valid, pld_view_t *vo, pld_value_t *res)
{
    if (tile) {
        pld_tile_t *t = pld_tile_new(dt, rank, shape, PLD_MEM_VEC);
        if (!t)
            return pld_op_oom(it, f, e);
        memcpy(t->valid, valid, sizeof(int64_t) * (size_t)rank);
        pld_tile_kview(t, vo, 0);
        *res = pld_tile_value(t);
    } else {
        pld_tensor_t *t = pld_tensor_new(dt, rank, shape, 0);
        if (!t)
            return pld_op_oom(it, f, e);
        pld_tensor_kview(t, vo);
        *res = pld_v_obj(&t->hdr, dt);
    }
    return PLD_OK;
}

/* The result of the array operands o[0..n): the broadcast shape, the first
 * operand's valid extents (tiles), dtype dt. */
static pld_status_t new_result(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const opnd_t *o, int n,
                               pld_dtype_t dt, pld_value_t *res, pld_view_t *vo, int *orank, int64_t *oshape)
{
    int r = 0;
    for (int i = 0; i < n; i++)
        if (o[i].kind != 's' && o[i].rank > r)
            r = o[i].rank;
    int64_t ovalid[PLD_MAX_RANK];
    for (int d = 0; d < r; d++) {
        int64_t x = 1;
        for (int i = 0; i < n; i++) {
            if (o[i].kind == 's')
                continue;
            int j = d - (r - o[i].rank);
            int64_t y = j >= 0 ? o[i].shape[j] : 1;
            if (y != x && x != 1 && y != 1) {
                char s1[96], s2[96];
                pld_shape_str(s1, sizeof s1, o[0].rank, o[0].shape);
                pld_shape_str(s2, sizeof s2, o[i].rank, o[i].shape);
                return pld_rt_error(it, f, e->span, "%s: shapes %s and %s do not broadcast", pld_op_name(e), s1, s2);
            }
            if (y > x)
                x = y;
        }
        oshape[d] = x;
        int j0 = d - (r - o[0].rank);
        ovalid[d] = j0 >= 0 && !(o[0].shape[j0] == 1 && x != 1) ? o[0].valid[j0] : x;
    }
    *orank = r;
    pld_status_t st = gen_result(it, f, e, o[0].kind == 't', dt, r, oshape, ovalid, vo, res);
    if (st == PLD_OK && o[0].kind == 'T') { /* PyPTO's rule; part_*, cmp, xor and xors keep no valid shape */
        const int none = e->op == PLD_OPID_TENSOR_CMP || e->op == PLD_OPID_TENSOR_XOR || e->op == PLD_OPID_TENSOR_XORS ||
                         e->op == PLD_OPID_TENSOR_PART_ADD || e->op == PLD_OPID_TENSOR_PART_MUL ||
                         e->op == PLD_OPID_TENSOR_PART_MAX || e->op == PLD_OPID_TENSOR_PART_MIN;
        const pld_tensor_t *b = NULL;
        for (int i = 1; i < n && !b; i++)
            if (o[i].kind == 'T')
                b = pld_v_tensor(&o[i].v);
        pld_tensor_elem_valid(pld_v_tensor(res), none ? NULL : pld_v_tensor(&o[0].v), b);
    }
    return st;
}

static pld_xop_k_t xop_of(int op)
{
    switch (op) {
    case PLD_OPID_TILE_SIN: case PLD_OPID_TENSOR_SIN: return PLD_KX_SIN;
    case PLD_OPID_TILE_COS: case PLD_OPID_TENSOR_COS: return PLD_KX_COS;
    case PLD_OPID_TILE_NOT: case PLD_OPID_TENSOR_NOT: return PLD_KX_NOT;
    case PLD_OPID_TILE_FMOD: case PLD_OPID_TILE_FMODS: case PLD_OPID_TENSOR_FMOD: case PLD_OPID_TENSOR_FMODS:
        return PLD_KX_FMOD;
    case PLD_OPID_TILE_REM: case PLD_OPID_TILE_REMS: return PLD_KX_REM;
    case PLD_OPID_TILE_AND: case PLD_OPID_TILE_ANDS: case PLD_OPID_TENSOR_AND: case PLD_OPID_TENSOR_ANDS: return PLD_KX_AND;
    case PLD_OPID_TILE_OR: case PLD_OPID_TILE_ORS: case PLD_OPID_TENSOR_OR: case PLD_OPID_TENSOR_ORS: return PLD_KX_OR;
    case PLD_OPID_TILE_XOR: case PLD_OPID_TILE_XORS: case PLD_OPID_TENSOR_XOR: case PLD_OPID_TENSOR_XORS: return PLD_KX_XOR;
    case PLD_OPID_TILE_SHL: case PLD_OPID_TILE_SHLS: case PLD_OPID_TENSOR_SHL: case PLD_OPID_TENSOR_SHLS: return PLD_KX_SHL;
    case PLD_OPID_TILE_SHR: case PLD_OPID_TILE_SHRS: case PLD_OPID_TENSOR_SHR: case PLD_OPID_TENSOR_SHRS: return PLD_KX_SHR;
    case PLD_OPID_TILE_LRELU: return PLD_KX_LRELU;
    case PLD_OPID_TILE_PRELU: return PLD_KX_PRELU;
    case PLD_OPID_TILE_ADDC: case PLD_OPID_TILE_ADDSC: return PLD_KX_ADDC;
    case PLD_OPID_TILE_SUBC: case PLD_OPID_TILE_SUBSC: return PLD_KX_SUBC;
    default: PLD_UNREACHABLE("xop_of: an op pld_exec.c does not route to pld_exec_elem");
    }
}

static pld_binop_k_t part_of(int op)
{
    switch (op) {
    case PLD_OPID_TILE_PART_ADD: case PLD_OPID_TENSOR_PART_ADD: return PLD_K_ADD;
    case PLD_OPID_TILE_PART_MUL: case PLD_OPID_TENSOR_PART_MUL: return PLD_K_MUL;
    case PLD_OPID_TILE_PART_MAX: case PLD_OPID_TENSOR_PART_MAX: return PLD_K_MAX;
    default: return PLD_K_MIN;
    }
}

/* The operand signature of an op: the kinds of its array/scalar operands, in
 * parameter order ("a" array, "s" scalar, "x" array or scalar, "-" skipped
 * scratch), for tiles ('t') or tensors ('T'). */
static const char *shape_of_op(int op, int *tile)
{
    *tile = op < PLD_OPID_TENSOR_CREATE;
    switch (op) {
    case PLD_OPID_TILE_SIN: case PLD_OPID_TILE_COS: case PLD_OPID_TILE_NOT:
    case PLD_OPID_TENSOR_SIN: case PLD_OPID_TENSOR_COS: case PLD_OPID_TENSOR_NOT:
        return "a";
    case PLD_OPID_TILE_FMOD: case PLD_OPID_TILE_AND: case PLD_OPID_TILE_OR: case PLD_OPID_TILE_SHL:
    case PLD_OPID_TILE_SHR:
        return "aa";
    case PLD_OPID_TILE_REM: case PLD_OPID_TILE_XOR: case PLD_OPID_TILE_PRELU:
        return "aa-";
    case PLD_OPID_TILE_FMODS: case PLD_OPID_TILE_ANDS: case PLD_OPID_TILE_ORS: case PLD_OPID_TILE_SHLS:
    case PLD_OPID_TILE_SHRS: case PLD_OPID_TILE_LRELU:
    case PLD_OPID_TENSOR_FMODS: case PLD_OPID_TENSOR_ANDS: case PLD_OPID_TENSOR_ORS: case PLD_OPID_TENSOR_XORS:
    case PLD_OPID_TENSOR_SHLS: case PLD_OPID_TENSOR_SHRS:
        return "as";
    case PLD_OPID_TILE_REMS: case PLD_OPID_TILE_XORS:
        return "as-";
    case PLD_OPID_TENSOR_FMOD: case PLD_OPID_TENSOR_AND: case PLD_OPID_TENSOR_OR: case PLD_OPID_TENSOR_XOR:
    case PLD_OPID_TENSOR_SHL: case PLD_OPID_TENSOR_SHR:
        return "ax";
    case PLD_OPID_TILE_ADDC: case PLD_OPID_TILE_SUBC:
        return "aaa";
    case PLD_OPID_TILE_ADDSC: case PLD_OPID_TILE_SUBSC:
        return "asa";
    default:
        return NULL;
    }
}

/* Unary, binary (array or scalar rhs) and ternary ops of pld_k_ext. */
static pld_status_t exec_ext(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    int tile;
    const char *sig = shape_of_op(e->op, &tile);
    PLD_ASSERT(sig, "exec_ext: an op without an operand signature");
    opnd_t o[3];
    int n = 0, sidx = -1;
    pld_status_t st = PLD_OK;
    for (int i = 0; sig[i] && st == PLD_OK; i++) {
        if (sig[i] == '-')
            continue;
        char want[3] = {sig[i] == 's' ? 's' : (tile ? 't' : 'T'), sig[i] == 'x' ? 's' : 0, 0};
        st = get_opnd(it, f, e, i, &o[n], want);
        if (st == PLD_OK) {
            if (o[n].kind == 's')
                sidx = n;
            n++;
        }
    }
    if (st != PLD_OK) {
        drop(o, n);
        return st;
    }
    for (int i = 1; i < n; i++)
        if (o[i].kind != 's' && o[i].dt != o[0].dt) {
            st = pld_rt_error(it, f, e->span, "%s: operand dtypes differ (%s and %s)", pld_op_name(e),
                              pld_dtype_name(o[0].dt), pld_dtype_name(o[i].dt));
            drop(o, n);
            return st;
        }
    pld_value_t res = pld_v_none();
    pld_view_t vo, va, vb, vc;
    int r;
    int64_t osh[PLD_MAX_RANK];
    if ((st = new_result(it, f, e, o, n, o[0].dt, &res, &vo, &r, osh)) != PLD_OK) {
        drop(o, n);
        return st;
    }
    if (o[0].kind == 't') {
        /* tiles: the valid region only (as the vector unit does; the rest stays 0, and a zero divisor
         * or negative shift count outside it is no error) */
        const pld_tile_t *t = pld_v_tile(&res);
        for (int d = 0; d < r; d++)
            osh[d] = vo.shape[d] = t->valid[d] < osh[d] ? t->valid[d] : osh[d];
    }
    bview(&va, &o[0], r, osh);
    char err[ERRN];
    const pld_xop_k_t op = xop_of(e->op);
    if (sidx >= 0) {
        const pld_view_t *c = NULL;
        if (n == 3) {
            bview(&vc, &o[2], r, osh);
            c = &vc;
        }
        st = pld_k_ext_scalar(op, &vo, &va, pld_v_as_f(&o[sidx].v), pld_v_as_i(&o[sidx].v), c, err, sizeof err);
    } else {
        if (n >= 2)
            bview(&vb, &o[1], r, osh);
        if (n == 3)
            bview(&vc, &o[2], r, osh);
        st = pld_k_ext(op, &vo, &va, n >= 2 ? &vb : NULL, n == 3 ? &vc : NULL, err, sizeof err);
    }
    drop(o, n);
    if (st != PLD_OK) {
        pld_value_release(&res);
        return pld_op_kcheck(it, f, e, st, err);
    }
    *out = res;
    return PLD_OK;
}

/* tile.cmp / tile.cmps (packed UINT8 mask) and tensor.cmp (0/1 in lhs's dtype). */
static pld_status_t exec_cmp(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    const int tile = e->op != PLD_OPID_TENSOR_CMP;
    opnd_t o[2];
    int64_t mode = 0;
    pld_status_t st = get_opnd(it, f, e, 0, &o[0], tile ? "t" : "T");
    if (st != PLD_OK)
        return st;
    st = get_opnd(it, f, e, 1, &o[1], e->op == PLD_OPID_TILE_CMP ? "t" : e->op == PLD_OPID_TILE_CMPS ? "s" : "Ts");
    if (st != PLD_OK) {
        drop(o, 1);
        return st;
    }
    if ((st = pld_op_iarg(it, f, e, 2, 0, &mode)) == PLD_OK && (mode < 0 || mode > 5))
        st = pld_rt_error(it, f, e->span, "%s: cmp_type %lld is not one of EQ=0, NE=1, LT=2, LE=3, GT=4, GE=5",
                          pld_op_name(e), (long long)mode);
    if (st == PLD_OK && o[1].kind != 's' && o[1].dt != o[0].dt)
        st = pld_rt_error(it, f, e->span, "%s: operand dtypes differ (%s and %s)", pld_op_name(e), pld_dtype_name(o[0].dt),
                          pld_dtype_name(o[1].dt));
    if (st != PLD_OK) {
        drop(o, 2);
        return st;
    }
    const pld_xop_k_t op = (pld_xop_k_t)(PLD_KX_EQ + mode);
    pld_value_t res = pld_v_none();
    pld_view_t vo, va, vb;
    int r;
    int64_t osh[PLD_MAX_RANK];
    char err[ERRN];
    uint64_t cell = 0;
    const int n = o[1].kind == 's' ? 1 : 2;
    if (!tile) {
        if ((st = new_result(it, f, e, o, n, o[0].dt, &res, &vo, &r, osh)) == PLD_OK) {
            bview(&va, &o[0], r, osh);
            if (n == 2) {
                bview(&vb, &o[1], r, osh);
                st = pld_k_ext(op, &vo, &va, &vb, NULL, err, sizeof err);
            } else {
                st = pld_k_ext_scalar(op, &vo, &va, pld_v_as_f(&o[1].v), pld_v_as_i(&o[1].v), NULL, err, sizeof err);
            }
        }
    } else {
        /* the compared shape, then the mask: last dim roundup(ceil(N / 8), 32) bytes */
        pld_view_t vt;
        if ((st = new_result(it, f, e, o, n, o[0].dt, &res, &vt, &r, osh)) == PLD_OK) {
            pld_tile_t *cmpd = pld_v_tile(&res);
            int64_t msh[PLD_MAX_RANK];
            memcpy(msh, osh, sizeof msh);
            msh[r - 1] = ((osh[r - 1] + 7) / 8 + 31) / 32 * 32;
            pld_tile_t *m = pld_tile_new(PLD_DT_UINT8, r, msh, PLD_MEM_VEC);
            if (!m) {
                pld_value_release(&res);
                drop(o, 2);
                return pld_op_oom(it, f, e);
            }
            memcpy(m->valid, cmpd->valid, sizeof(int64_t) * (size_t)r);
            m->valid[r - 1] = (cmpd->valid[r - 1] + 7) / 8;
            pld_value_release(&res);
            res = pld_tile_value(m);
            pld_tile_kview(m, &vo, 0);
            bview(&va, &o[0], r, osh);
            pld_view_t sv;
            if (n == 2) {
                bview(&vb, &o[1], r, osh);
            } else {
                if (pld_dtype_is_float(o[0].dt))
                    pld_elem_set_f(&cell, o[0].dt, 0, pld_v_as_f(&o[1].v));
                else
                    pld_elem_set_i(&cell, o[0].dt, 0, pld_v_as_i(&o[1].v));
                memset(&sv, 0, sizeof sv);
                sv.data = &cell, sv.dt = o[0].dt;
                bview(&vb, &(opnd_t){.kind = 't', .dt = o[0].dt, .rank = 0, .kv = sv}, r, osh);
            }
            st = pld_k_cmp_mask(op, &vo, &va, &vb, err, sizeof err);
        }
    }
    drop(o, 2);
    if (st != PLD_OK) {
        pld_value_release(&res);
        return pld_op_kcheck(it, f, e, st, err);
    }
    *out = res;
    return PLD_OK;
}

/* tile.sel(mask, lhs, rhs, tmp) and tile.sels(mask, src, tmp, scalar). */
static pld_status_t exec_sel(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    const int sels = e->op == PLD_OPID_TILE_SELS;
    opnd_t m, o[2];
    pld_status_t st = get_opnd(it, f, e, 0, &m, "t");
    if (st != PLD_OK)
        return st;
    if ((st = get_opnd(it, f, e, 1, &o[0], "t")) != PLD_OK) {
        drop(&m, 1);
        return st;
    }
    if ((st = get_opnd(it, f, e, sels ? 3 : 2, &o[1], sels ? "s" : "t")) != PLD_OK) {
        drop(&m, 1);
        drop(o, 1);
        return st;
    }
    if (!sels && o[1].dt != o[0].dt)
        st = pld_rt_error(it, f, e->span, "%s: operand dtypes differ (%s and %s)", pld_op_name(e), pld_dtype_name(o[0].dt),
                          pld_dtype_name(o[1].dt));
    else if (pld_dtype_is_float(m.dt) || m.rank != 2)
        st = pld_rt_error(it, f, e->span, "%s: the mask must be a 2-D integer tile", pld_op_name(e));
    pld_value_t res = pld_v_none();
    pld_view_t vo, va, vb;
    int r = 0;
    int64_t osh[PLD_MAX_RANK];
    char err[ERRN];
    uint64_t cell = 0;
    if (st == PLD_OK)
        st = new_result(it, f, e, o, sels ? 1 : 2, o[0].dt, &res, &vo, &r, osh);
    if (st == PLD_OK) {
        bview(&va, &o[0], r, osh);
        if (sels) {
            pld_view_t sv;
            if (pld_dtype_is_float(o[0].dt))
                pld_elem_set_f(&cell, o[0].dt, 0, pld_v_as_f(&o[1].v));
            else
                pld_elem_set_i(&cell, o[0].dt, 0, pld_v_as_i(&o[1].v));
            memset(&sv, 0, sizeof sv);
            sv.data = &cell, sv.dt = o[0].dt;
            bview(&vb, &(opnd_t){.kind = 't', .dt = o[0].dt, .rank = 0, .kv = sv}, r, osh);
        } else {
            bview(&vb, &o[1], r, osh);
        }
        st = pld_k_select(&vo, &m.kv, &va, &vb, err, sizeof err);
        if (st != PLD_OK)
            st = pld_op_kcheck(it, f, e, st, err);
    }
    drop(&m, 1);
    drop(o, 2);
    if (st != PLD_OK) {
        pld_value_release(&res);
        return st;
    }
    *out = res;
    return PLD_OK;
}

/* part_add / part_mul / part_max / part_min: result of src0's shape and valid shape. */
static pld_status_t exec_part(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    const int tile = e->op < PLD_OPID_TENSOR_CREATE;
    opnd_t o[2];
    pld_status_t st = get_opnd(it, f, e, 0, &o[0], tile ? "t" : "T");
    if (st != PLD_OK)
        return st;
    if ((st = get_opnd(it, f, e, 1, &o[1], tile ? "t" : "T")) != PLD_OK) {
        drop(o, 1);
        return st;
    }
    int same = o[0].rank == o[1].rank && o[0].dt == o[1].dt;
    for (int d = 0; same && d < o[0].rank; d++)
        same = o[0].shape[d] == o[1].shape[d];
    if (!same) {
        char s1[96], s2[96];
        pld_shape_str(s1, sizeof s1, o[0].rank, o[0].shape);
        pld_shape_str(s2, sizeof s2, o[1].rank, o[1].shape);
        st = pld_rt_error(it, f, e->span, "%s: the sources must have one shape and dtype (%s %s and %s %s)",
                          pld_op_name(e), s1, pld_dtype_name(o[0].dt), s2, pld_dtype_name(o[1].dt));
        drop(o, 2);
        return st;
    }
    pld_value_t res = pld_v_none();
    pld_view_t vo;
    int r;
    int64_t osh[PLD_MAX_RANK];
    char err[ERRN];
    if ((st = new_result(it, f, e, o, 1, o[0].dt, &res, &vo, &r, osh)) == PLD_OK &&
        (st = pld_k_part(part_of(e->op), &vo, &o[0].kv, o[0].valid, &o[1].kv, o[1].valid, err, sizeof err)) != PLD_OK)
        st = pld_op_kcheck(it, f, e, st, err);
    drop(o, 2);
    if (st != PLD_OK) {
        pld_value_release(&res);
        return st;
    }
    *out = res;
    return PLD_OK;
}

/* tile.ci / tensor.ci(start, shape, dtype, descending) and
 * tile.tri(diagonal, shape, valid_shape, dtype, upper). */
static pld_status_t exec_gen(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    const int tri = e->op == PLD_OPID_TILE_TRI, tile = e->op != PLD_OPID_TENSOR_CI;
    int64_t first, shape[PLD_MAX_RANK], valid[PLD_MAX_RANK], flag = 0;
    int rank, nv = 0;
    pld_status_t st;
    if ((st = pld_op_iarg(it, f, e, 0, 0, &first)) != PLD_OK || (st = pld_op_shape(it, f, e, 1, shape, &rank)) != PLD_OK ||
        (st = pld_op_iarg(it, f, e, tri ? 4 : 3, 0, &flag)) != PLD_OK)
        return st;
    if (tri && pld_op_arg(e, 2) && (st = pld_op_ilist(it, f, e, 2, valid, &nv)) != PLD_OK)
        return st;
    pld_dtype_t dt = pld_op_arg(e, tri ? 3 : 2) ? pld_op_dtype(it, e, tri ? 3 : 2) : PLD_DT_INT32;
    if (tri && rank != 2)
        return pld_rt_error(it, f, e->span, "%s needs a 2-D shape", pld_op_name(e));
    if (!tri || nv != rank) {
        memcpy(valid, shape, sizeof valid);
        nv = rank;
    }
    pld_view_t vo;
    pld_value_t res;
    if ((st = gen_result(it, f, e, tile, dt, rank, shape, valid, &vo, &res)) != PLD_OK)
        return st;
    char err[ERRN];
    st = tri ? pld_k_tri(&vo, first, (int)flag, valid[0], valid[1], err, sizeof err)
             : pld_k_ci(&vo, first, (int)flag, err, sizeof err);
    if (st != PLD_OK) {
        pld_value_release(&res);
        return pld_op_kcheck(it, f, e, st, err);
    }
    *out = res;
    return PLD_OK;
}

/* tile.random(key0, key1, counter0..3, shape, valid_shape, dtype, rounds) /
 * tensor.random(key0, key1, counter0..3, shape, dtype, rounds): pto-isa's
 * TRANDOM (pld_k_random); outside the valid region the tile holds 0. */
static pld_status_t exec_random(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    const int tile = e->op == PLD_OPID_TILE_RANDOM, di = tile ? 8 : 7;
    int64_t seed[6], shape[PLD_MAX_RANK], valid[PLD_MAX_RANK], rounds;
    int rank, nv = -1;
    pld_status_t st;
    for (int i = 0; i < 6; i++)
        if ((st = pld_op_iarg(it, f, e, i, 0, &seed[i])) != PLD_OK)
            return st;
    if ((st = pld_op_shape(it, f, e, 6, shape, &rank)) != PLD_OK || (st = pld_op_iarg(it, f, e, di + 1, 10, &rounds)) != PLD_OK)
        return st;
    if (tile && pld_op_arg(e, 7) && (st = pld_op_ilist(it, f, e, 7, valid, &nv)) != PLD_OK)
        return st;
    if (rank != 2 || (nv >= 0 && (nv != 2 || valid[0] < 0 || valid[0] > shape[0] || valid[1] < 0 || valid[1] > shape[1])))
        return pld_rt_error(it, f, e->span, "%s needs a 2-D shape and a valid_shape within it", pld_op_name(e));
    if (nv < 0)
        memcpy(valid, shape, sizeof valid);
    pld_dtype_t dt = pld_op_arg(e, di) ? pld_op_dtype(it, e, di) : PLD_DT_UINT32;
    pld_view_t vo;
    pld_value_t res;
    if ((st = gen_result(it, f, e, tile, dt, rank, shape, valid, &vo, &res)) != PLD_OK)
        return st;
    const uint32_t key[2] = {(uint32_t)seed[0], (uint32_t)seed[1]};
    const uint32_t ctr[4] = {(uint32_t)seed[2], (uint32_t)seed[3], (uint32_t)seed[4], (uint32_t)seed[5]};
    char err[ERRN];
    if ((st = pld_k_random(&vo, key, ctr, (int)rounds, valid[0], valid[1], err, sizeof err)) != PLD_OK) {
        pld_value_release(&res);
        return pld_op_kcheck(it, f, e, st, err);
    }
    *out = res;
    return PLD_OK;
}

pld_status_t pld_exec_elem(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    switch (e->op) {
    case PLD_OPID_TILE_CMP: case PLD_OPID_TILE_CMPS: case PLD_OPID_TENSOR_CMP:
        return exec_cmp(it, f, e, out);
    case PLD_OPID_TILE_SEL: case PLD_OPID_TILE_SELS:
        return exec_sel(it, f, e, out);
    case PLD_OPID_TILE_PART_ADD: case PLD_OPID_TILE_PART_MUL: case PLD_OPID_TILE_PART_MAX: case PLD_OPID_TILE_PART_MIN:
    case PLD_OPID_TENSOR_PART_ADD: case PLD_OPID_TENSOR_PART_MUL: case PLD_OPID_TENSOR_PART_MAX:
    case PLD_OPID_TENSOR_PART_MIN:
        return exec_part(it, f, e, out);
    case PLD_OPID_TILE_CI: case PLD_OPID_TENSOR_CI: case PLD_OPID_TILE_TRI:
        return exec_gen(it, f, e, out);
    case PLD_OPID_TILE_RANDOM: case PLD_OPID_TENSOR_RANDOM:
        return exec_random(it, f, e, out);
    default:
        return exec_ext(it, f, e, out);
    }
}
