/* pld_exec_gather.c - the GM gather/scatter family: pl.tile.mgather (Vec and
 * Mat forms, gather_oob modes), pl.tile.mscatter, pl.tile.gatherb,
 * pl.tile.gather_compare,
 * pl.tile/tensor.scatter_update, pl.tensor.paged_gather. Indices and offsets
 * are read from the index operand's valid box in row-major order; bytes are
 * copied, never converted. An index PyPTO leaves undefined (past the source
 * or destination) is a located runtime error. The semantics and their PyPTO
 * sources are in docs/ops-numerics.md. */
#include "pld_interp_int.h"

#include <string.h>

#define ERRN 256

static void release3(pld_shaped_t *a, pld_shaped_t *b, pld_shaped_t *c)
{
    pld_value_release(&a->v);
    pld_value_release(&b->v);
    if (c)
        pld_value_release(&c->v);
}

/* Evaluates parameters i[0..n) as shaped operands s[]; on an error releases those already evaluated. */
static pld_status_t shaped_args(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const int *i, int n, pld_shaped_t *s)
{
    for (int k = 0; k < n; k++) {
        pld_status_t st = pld_shaped_arg(it, f, e, i[k], &s[k]);
        if (st != PLD_OK) {
            while (k-- > 0)
                pld_value_release(&s[k].v);
            return st;
        }
    }
    return PLD_OK;
}

/* Marks element k (row-major) of tensor t written (the Out tensor's written record). */
static void mark_flat(const pld_tensor_t *t, int64_t k)
{
    int64_t idx[PLD_MAX_RANK], one[PLD_MAX_RANK];
    pld_unflatten(k, t->rank, t->shape, idx);
    for (int d = 0; d < t->rank; d++)
        one[d] = 1;
    pld_tensor_mark_written(t, idx, one);
}

/* pl.tile.mgather. Vec: idx a tile, the result valid where idx is (row mode: its R entries); Mat: idx a GM tensor,
 * the result valid over valid_shape (default the whole tile); Mat elem mode also leaves the gathered valid box in
 * scratch, row-major with the result's row length. */
static pld_status_t mgather(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    static const int at[2] = {0, 1};
    pld_shaped_t a[2], sc;
    int co = pld_check_mode_arg(pld_op_arg(e, 2), pld_mgather_coalesce, 2, 0);
    int oob = pld_check_mode_arg(pld_op_arg(e, 3), pld_mgather_oob, 4, 0);
    pld_status_t st = shaped_args(it, f, e, at, 2, a);
    if (st != PLD_OK)
        return st;
    pld_view_t *m = &a[0].kv, *x = &a[1].kv, ov;
    int mat = !a[1].tile, rowvec = x->shape[0] == 1;
    int64_t n = pld_view_numel(m), last = m->shape[m->rank - 1], vs[PLD_MAX_RANK], shape[2], *valid = NULL;
    int nv = -1;
    if (co == 0) /* row mode: the index's R entries (a [1, R] or [R, 1] index) */
        shape[0] = x->shape[rowvec ? 1 : 0], shape[1] = last;
    else
        shape[0] = x->shape[0], shape[1] = x->shape[1];
    sc.v = pld_v_none();
    if (mat && pld_op_arg(e, 6))
        st = pld_op_shape(it, f, e, 6, vs, &nv);
    if (st == PLD_OK && mat && co == 1 && (st = pld_shaped_arg(it, f, e, 5, &sc)) != PLD_OK)
        sc.v = pld_v_none();
    else if (st == PLD_OK && mat && co == 1 && pld_view_numel(&sc.kv) < shape[0] * shape[1])
        st = pld_rt_error(it, f, e->span, "%s: scratch holds %lld elements, the gather needs %lld", pld_op_name(e),
                          (long long)pld_view_numel(&sc.kv), (long long)(shape[0] * shape[1]));
    if (st == PLD_OK && (m->rank < (co == 0 ? 2 : 1) || x->rank != 2 || n == 0 || (nv >= 0 && nv != 2) ||
                         (nv == 2 && (vs[0] > shape[0] || vs[1] > shape[1]))))
        st = pld_rt_error(it, f, e->span, "%s needs a non-empty mem (rank >= 2 in row mode), a 2-D index and a "
                          "valid_shape within the result", pld_op_name(e));
    if (st == PLD_OK)
        st = pld_new_like(it, f, e, 1, m->dt, 2, shape, mat ? PLD_MEM_MAT : PLD_MEM_VEC, out, &ov, &valid);
    if (st != PLD_OK) {
        release3(&a[0], &a[1], &sc);
        return st;
    }
    if (mat)
        valid[0] = nv == 2 ? vs[0] : shape[0], valid[1] = nv == 2 ? vs[1] : shape[1];
    else if (co == 0)
        valid[0] = a[1].valid[rowvec ? 1 : 0], valid[1] = last;
    else
        valid[0] = a[1].valid[0], valid[1] = a[1].valid[1];
    char err[ERRN];
    const pld_view_t *scv = sc.v.kind == PLD_V_TENSOR ? &sc.kv : NULL;
    st = pld_op_kcheck(it, f, e, pld_k_mgather(&ov, m, x, valid, co == 0, oob, scv, err, sizeof err), err);
    if (st != PLD_OK)
        pld_value_release(out);
    for (int64_t i = 0; st == PLD_OK && scv && i < valid[0]; i++)
        for (int64_t j = 0; j < valid[1]; j++)
            mark_flat(pld_v_tensor(&sc.v), i * shape[1] + j);
    release3(&a[0], &a[1], &sc);
    return st;
}

/* pl.tile.mscatter: output_tensor.flat[idx[p]] = src[p] over src's valid box, in place. */
static pld_status_t mscatter(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    static const int at[3] = {0, 1, 2};
    pld_shaped_t a[3];
    pld_status_t st = shaped_args(it, f, e, at, 3, a);
    if (st != PLD_OK)
        return st;
    pld_view_t *s = &a[0].kv, *x = &a[1].kv, *o = &a[2].kv;
    int64_t box[PLD_MAX_RANK], p[PLD_MAX_RANK], nb = 1;
    if (a[2].tile || x->rank != s->rank || o->dt != s->dt)
        st = pld_rt_error(it, f, e->span, "%s needs an index of src's rank and a tensor of src's dtype", pld_op_name(e));
    if (st == PLD_OK) {
        char err[ERRN];
        st = pld_op_kcheck(it, f, e, pld_k_mscatter(o, s, x, a[0].valid, err, sizeof err), err);
    }
    for (int d = 0; st == PLD_OK && d < s->rank; d++) {
        box[d] = a[0].valid[d] < x->shape[d] ? a[0].valid[d] : x->shape[d];
        nb *= box[d];
    }
    for (int64_t b = 0; st == PLD_OK && b < nb; b++) { /* the Out tensor's written record */
        pld_unflatten(b, s->rank, box, p);
        mark_flat(pld_v_tensor(&a[2].v), pld_elem_get_i(pld_view_at(x, p), x->dt, 0));
    }
    if (st == PLD_OK) {
        *out = a[2].v;
        a[2].v = pld_v_none();
    }
    release3(&a[0], &a[1], &a[2]);
    return st;
}

/* pl.tile.gatherb: block j of out row i = the 32 bytes of src (row-major) from byte offset[i, j]. */
static pld_status_t gatherb(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    static const int at[2] = {0, 1};
    pld_shaped_t a[2];
    pld_status_t st = shaped_args(it, f, e, at, 2, a);
    if (st != PLD_OK)
        return st;
    pld_view_t *s = &a[0].kv, *x = &a[1].kv, ov;
    pld_dtype_t od = pld_op_dtype(it, e, 2);
    if (od == PLD_DT_NONE)
        od = s->dt;
    int64_t k = 32 / pld_dtype_bytes(od), *valid = NULL;
    int64_t shape[2] = {x->shape[0], x->shape[1] * k};
    if (x->rank != 2 || s->rank != 2)
        st = pld_rt_error(it, f, e->span, "%s needs a 2-D src and a 2-D offset tile", pld_op_name(e));
    if (st == PLD_OK && (st = pld_new_like(it, f, e, 1, od, 2, shape, PLD_MEM_VEC, out, &ov, &valid)) == PLD_OK)
        valid[0] = a[1].valid[0], valid[1] = a[1].valid[1] * k;
    if (st == PLD_OK) {
        char err[ERRN];
        st = pld_op_kcheck(it, f, e, pld_k_gatherb(&ov, s, x, a[1].valid, err, sizeof err), err);
        if (st != PLD_OK)
            pld_value_release(out);
    }
    pld_value_release(&a[0].v);
    pld_value_release(&a[1].v);
    return st;
}

/* pl.tile/tensor.scatter_update: a copy of input whose row index[i, j] is src's row i * s + j (rows: all dims but
 * the last, row-major), over index's valid box in row-major order. */
static pld_status_t scatter_update(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    int pos[3], at[3] = {0, 0, 0};
    if (!pld_check_scatter_update_args((const pld_expr_t *const *)e->bound, pos))
        return pld_rt_error(it, f, e->span, "%s: arguments do not match a call form", pld_op_name(e));
    at[1] = pos[1], at[2] = pos[2];
    pld_shaped_t a[3];
    pld_status_t st = shaped_args(it, f, e, at, 3, a);
    if (st != PLD_OK)
        return st;
    pld_view_t *in = &a[0].kv, *x = &a[1].kv, *s = &a[2].kv, ov;
    int64_t d = in->shape[in->rank - 1], *valid = NULL;
    if (x->rank != 2 || s->shape[s->rank - 1] != d || s->dt != in->dt)
        st = pld_rt_error(it, f, e->span, "%s needs a 2-D index and src rows of input's length and dtype",
                          pld_op_name(e));
    if (st == PLD_OK &&
        (st = pld_new_like(it, f, e, a[0].tile, in->dt, in->rank, in->shape, a[0].tile ? pld_v_tile(&a[0].v)->mem
                                                                                      : PLD_MEM_NONE,
                           out, &ov, &valid)) == PLD_OK) {
        memcpy(valid, a[0].valid, sizeof(int64_t) * (size_t)in->rank);
        char err[160] = "";
        st = pld_op_kcheck(it, f, e, pld_k_copy(&ov, in, err, sizeof err), err);
        if (st != PLD_OK)
            pld_value_release(out);
    }
    if (st == PLD_OK) {
        char err[ERRN];
        st = pld_op_kcheck(it, f, e, pld_k_scatter_update(&ov, x, s, a[1].valid, err, sizeof err), err);
        if (st != PLD_OK)
            pld_value_release(out);
    }
    release3(&a[0], &a[1], &a[2]);
    return st;
}

/* pl.tensor.paged_gather: row i < n of a new [max_indices, size] tensor (is_trans: column i of [size, max_indices])
 * = src[phys, col_off : col_off + size], phys = block_table[li / block_size] * block_size + li % block_size. */
static pld_status_t paged_gather(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    static const int at[3] = {0, 1, 2};
    pld_shaped_t a[3];
    int64_t bs, size, mx, col, tr;
    pld_status_t st = shaped_args(it, f, e, at, 3, a);
    if (st != PLD_OK)
        return st;
    if ((st = pld_op_iarg(it, f, e, 3, 0, &bs)) != PLD_OK || (st = pld_op_iarg(it, f, e, 4, 0, &size)) != PLD_OK ||
        (st = pld_op_iarg(it, f, e, 5, 0, &mx)) != PLD_OK || (st = pld_op_iarg(it, f, e, 7, 0, &col)) != PLD_OK ||
        (st = pld_op_iarg(it, f, e, 8, 0, &tr)) != PLD_OK) {
        release3(&a[0], &a[1], &a[2]);
        return st;
    }
    pld_view_t *s = &a[0].kv, *x = &a[1].kv, *bt = &a[2].kv, ov;
    int64_t n = pld_view_numel(x), shape[2] = {tr ? size : mx, tr ? mx : size}, *valid;
    if (s->rank != 2 || bs <= 0 || size <= 0 || col < 0 || col + size > s->shape[1] || n > mx)
        st = pld_rt_error(it, f, e->span, "%s: %lld indices for max_indices %lld, or columns %lld + %lld of src's %lld",
                          pld_op_name(e), (long long)n, (long long)mx, (long long)col, (long long)size,
                          (long long)s->shape[1]);
    if (st == PLD_OK)
        st = pld_new_like(it, f, e, 0, s->dt, 2, shape, PLD_MEM_NONE, out, &ov, &valid);
    if (st == PLD_OK) {
        char err[ERRN];
        st = pld_op_kcheck(it, f, e, pld_k_paged_gather(&ov, s, x, bt, bs, size, col, tr != 0, err, sizeof err), err);
        if (st != PLD_OK)
            pld_value_release(out);
    }
    release3(&a[0], &a[1], &a[2]);
    return st;
}

/* pl.tile.gather_compare / pl.tensor.gather's compare form (kvalue at ik, cmp_mode at ic, out_cols at io): per
 * valid row the ascending columns j with src[i, j] cmp kvalue (dst, INT32) and their count (cdst[0, i]); a count
 * other than out_cols leaves PyPTO's dst undefined: a runtime error. */
static pld_status_t gather_compare(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out, int ik,
                                   int ic, int io)
{
    pld_shaped_t s;
    pld_value_t kv, d, c;
    int64_t oc, *dvalid, *cvalid;
    int mode = pld_check_mode_arg(pld_op_arg(e, ic), pld_gather_cmp_modes, 6, 0);
    pld_status_t st = pld_shaped_arg(it, f, e, 0, &s);
    if (st != PLD_OK)
        return st;
    if ((st = pld_op_eval(it, f, e, ik, &kv)) != PLD_OK || (st = pld_op_iarg(it, f, e, io, 0, &oc)) != PLD_OK) {
        pld_value_release(&s.v);
        return st;
    }
    const pld_type_t *ct = e->type && e->type->kind == PLD_TY_TUPLE ? e->type->elems[1] : NULL;
    int64_t rows = s.kv.shape[0], ds[2] = {rows, oc}, cs[2] = {1, rows};
    pld_view_t dv, cv;
    double k = pld_v_as_f(&kv);
    pld_mem_t mem = s.tile ? PLD_MEM_VEC : PLD_MEM_NONE;
    if (s.kv.rank != 2 || (kv.kind != PLD_V_INT && kv.kind != PLD_V_FLOAT))
        st = pld_rt_error(it, f, e->span, "%s needs a 2-D src and a scalar kvalue", pld_op_name(e));
    if (st == PLD_OK && (st = pld_new_like(it, f, e, s.tile, PLD_DT_INT32, 2, ds, mem, &d, &dv, &dvalid)) == PLD_OK &&
        (st = pld_new_like(it, f, e, s.tile, ct ? ct->dtype : PLD_DT_INT32, 2, cs, mem, &c, &cv, &cvalid)) != PLD_OK)
        pld_value_release(&d);
    if (st == PLD_OK) {
        char err[ERRN];
        st = pld_op_kcheck(it, f, e, pld_k_gather_compare(&dv, &cv, &s.kv, s.valid, mode, k, oc, err, sizeof err), err);
        if (st != PLD_OK) {
            pld_value_release(&d);
            pld_value_release(&c);
        }
    }
    if (st == PLD_OK) {
        pld_tuple_t *t = pld_tuple_new(2);
        if (!t) {
            pld_value_release(&d);
            pld_value_release(&c);
            st = pld_op_oom(it, f, e);
        } else {
            t->items[0] = d, t->items[1] = c;
            *out = pld_v_obj(&t->hdr, PLD_DT_NONE);
        }
    }
    pld_value_release(&kv);
    pld_value_release(&s.v);
    return st;
}

pld_status_t pld_exec_gather(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    switch (e->op) {
    case PLD_OPID_TILE_MGATHER:
        return mgather(it, f, e, out);
    case PLD_OPID_TILE_MSCATTER:
        return mscatter(it, f, e, out);
    case PLD_OPID_TILE_GATHERB:
        return gatherb(it, f, e, out);
    case PLD_OPID_TILE_GATHER_COMPARE:
        return gather_compare(it, f, e, out, 1, 3, 5);
    case PLD_OPID_TENSOR_GATHER: /* the compare form */
        return gather_compare(it, f, e, out, 5, 6, 7);
    case PLD_OPID_TILE_SCATTER_UPDATE:
    case PLD_OPID_TENSOR_SCATTER_UPDATE:
        return scatter_update(it, f, e, out);
    case PLD_OPID_TENSOR_PAGED_GATHER:
        return paged_gather(it, f, e, out);
    default:
        return pld_rt_error(it, f, e->span, "%s: not a gather op", pld_op_name(e));
    }
}
