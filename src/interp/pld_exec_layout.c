/* pld_exec_layout.c - layout and gather ops: pl.tile.transpose /
 * pl.tensor.transpose, pl.tile.extract, pl.tile.concat / pl.tensor.concat,
 * pl.tile.gather (flat index form) and pl.tensor.gather (torch style),
 * pl.tile.transpose_view, pl.tile/tensor.reinterpret_view, pl.tensor.view,
 * pl.tile.scatter and pl.tensor.scatter (index form), sort32 and mrgsort,
 * gather_row, gather_mask, scatter_mask.
 * Tile results are new tiles; tensor views share the source's buffer; bytes
 * are copied, never converted. The semantics and their PyPTO sources are in
 * docs/ops-numerics.md. */
#include "pld_interp_int.h"
#include "pld_mem.h"

#include <math.h>
#include <string.h>

#define ERRN 256

pld_status_t pld_shaped_arg(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int i, pld_shaped_t *s)
{
    pld_status_t st = pld_op_eval(it, f, e, i, &s->v);
    if (st != PLD_OK)
        return st;
    if (s->v.kind == PLD_V_TILE) {
        pld_tile_kview(pld_v_tile(&s->v), &s->kv, 0);
        s->valid = pld_v_tile(&s->v)->valid, s->tile = 1;
    } else if (s->v.kind == PLD_V_TENSOR) {
        pld_tensor_kview(pld_v_tensor(&s->v), &s->kv);
        s->valid = pld_v_tensor(&s->v)->valid, s->tile = 0;
    } else {
        pld_value_release(&s->v);
        return pld_op_need(it, f, e, i, &s->v, PLD_V_TILE);
    }
    return PLD_OK;
}

pld_status_t pld_new_like(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int tile, pld_dtype_t dt, int rank,
                          const int64_t *shape, pld_mem_t mem, pld_value_t *out, pld_view_t *kv, int64_t **valid)
{
    if (tile) {
        pld_tile_t *o = pld_tile_new(dt, rank, shape, mem);
        if (!o)
            return pld_op_oom(it, f, e);
        pld_tile_kview(o, kv, 0);
        *valid = o->valid;
        *out = pld_tile_value(o);
    } else {
        pld_tensor_t *o = pld_tensor_new(dt, rank, shape, 1);
        if (!o)
            return pld_op_oom(it, f, e);
        pld_tensor_kview(o, kv);
        *valid = o->valid;
        *out = pld_v_obj(&o->hdr, o->dt);
    }
    return PLD_OK;
}

/* v narrowed to the box [off, off + ext) (no bounds check). */
static pld_view_t sub_view(const pld_view_t *v, const int64_t *off, const int64_t *ext)
{
    pld_view_t s = *v;
    int64_t o = 0;
    for (int d = 0; d < v->rank; d++) {
        o += off[d] * v->strides[d];
        s.shape[d] = ext[d];
    }
    s.data = (char *)v->data + o * pld_dtype_bytes(v->dt);
    return s;
}

static pld_status_t kcopy(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_view_t *o, const pld_view_t *a)
{
    char err[160] = "";
    return pld_op_kcheck(it, f, e, pld_k_copy(o, a, err, sizeof err), err);
}

static pld_status_t transpose(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    pld_shaped_t s;
    int64_t ax[2];
    pld_status_t st;
    if ((st = pld_shaped_arg(it, f, e, 0, &s)) != PLD_OK)
        return st;
    int r = s.kv.rank;
    for (int i = 0; i < 2; i++) {
        if (e->op == PLD_OPID_TILE_TRANSPOSE_VIEW)
            ax[i] = i - 2; /* the trailing two dims */
        else if ((st = pld_op_iarg(it, f, e, 1 + i, 0, &ax[i])) != PLD_OK) {
            pld_value_release(&s.v);
            return st;
        }
        if (ax[i] < 0)
            ax[i] += r;
    }
    if (r < 2 || ax[0] < 0 || ax[0] >= r || ax[1] < 0 || ax[1] >= r || ax[0] == ax[1]) {
        pld_value_release(&s.v);
        return pld_rt_error(it, f, e->span, "%s: axes %lld and %lld do not name two axes of a rank-%d operand",
                            pld_op_name(e), (long long)ax[0], (long long)ax[1], r);
    }
    pld_view_t sw = s.kv;
    int a = (int)ax[0], b = (int)ax[1];
    sw.shape[a] = s.kv.shape[b], sw.shape[b] = s.kv.shape[a];
    sw.strides[a] = s.kv.strides[b], sw.strides[b] = s.kv.strides[a];
    pld_view_t ov;
    int64_t *valid = NULL;
    st = pld_new_like(it, f, e, s.tile, s.kv.dt, r, sw.shape, s.tile ? pld_v_tile(&s.v)->mem : PLD_MEM_NONE, out, &ov,
                  &valid);
    if (st == PLD_OK) {
        memcpy(valid, s.valid, sizeof(int64_t) * (size_t)r);
        valid[a] = s.valid[b], valid[b] = s.valid[a];
        if ((st = kcopy(it, f, e, &ov, &sw)) != PLD_OK)
            pld_value_release(out);
    }
    pld_value_release(&s.v);
    return st;
}

static pld_status_t extract(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    pld_shaped_t s;
    int64_t off[2], ext[PLD_MAX_RANK];
    int n;
    pld_status_t st;
    if ((st = pld_op_need(it, f, e, 0, &s.v, PLD_V_TILE)) != PLD_OK)
        return st;
    pld_tile_t *t = pld_v_tile(&s.v);
    if ((st = pld_op_iarg(it, f, e, 1, 0, &off[0])) != PLD_OK || (st = pld_op_iarg(it, f, e, 2, 0, &off[1])) != PLD_OK ||
        (st = pld_op_shape(it, f, e, 3, ext, &n)) != PLD_OK) {
        pld_value_release(&s.v);
        return st;
    }
    if (t->rank != 2 || n != 2) {
        pld_value_release(&s.v);
        return pld_rt_error(it, f, e->span, "%s needs a 2-D tile and a 2-D shape", pld_op_name(e));
    }
    for (int d = 0; d < 2; d++)
        if (off[d] < 0 || ext[d] > t->shape[d] || off[d] > t->shape[d] - ext[d]) {
            pld_value_release(&s.v);
            return pld_rt_error(it, f, e->span, "%s: window [%lld, %lld) of dimension %d is outside the source's [0, %lld)",
                                pld_op_name(e), (long long)off[d], (long long)(off[d] + ext[d]), d,
                                (long long)t->shape[d]);
        }
    pld_tile_kview(t, &s.kv, 0);
    pld_view_t win = sub_view(&s.kv, off, ext), ov;
    int64_t *valid = NULL;
    pld_mem_t mem = e->type && e->type->mem ? e->type->mem : PLD_MEM_VEC;
    st = pld_new_like(it, f, e, 1, t->dt, 2, ext, mem, out, &ov, &valid);
    if (st == PLD_OK) {
        for (int d = 0; d < 2; d++) {
            int64_t v = t->valid[d] - off[d];
            valid[d] = v < 0 ? 0 : v > ext[d] ? ext[d] : v;
        }
        if ((st = kcopy(it, f, e, &ov, &win)) != PLD_OK)
            pld_value_release(out);
    }
    pld_value_release(&s.v);
    return st;
}

static pld_status_t concat(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    pld_shaped_t a, b;
    pld_status_t st;
    if ((st = pld_shaped_arg(it, f, e, 0, &a)) != PLD_OK)
        return st;
    if ((st = pld_shaped_arg(it, f, e, 1, &b)) != PLD_OK) {
        pld_value_release(&a.v);
        return st;
    }
    if (a.kv.rank != 2 || b.kv.rank != 2 || a.kv.shape[0] != b.kv.shape[0] || a.kv.dt != b.kv.dt ||
        a.tile != b.tile) {
        st = pld_rt_error(it, f, e->span, "%s needs two 2-D operands of one kind, dtype and row count", pld_op_name(e));
    } else {
        int64_t shape[2] = {a.kv.shape[0], a.kv.shape[1] + b.kv.shape[1]};
        pld_view_t ov;
        int64_t *valid = NULL;
        st = pld_new_like(it, f, e, a.tile, a.kv.dt, 2, shape, a.tile ? pld_v_tile(&a.v)->mem : PLD_MEM_NONE, out, &ov,
                      &valid);
        if (st == PLD_OK) {
            /* src0's valid columns, then src1's, packed (the row stride of the hardware's dst is validCol0 + validCol1) */
            int64_t o0[2] = {0, 0}, e0[2] = {shape[0], a.valid[1]}, o1[2] = {0, a.valid[1]}, e1[2] = {shape[0], b.valid[1]};
            int64_t z[2] = {0, 0};
            pld_view_t d0 = sub_view(&ov, o0, e0), d1 = sub_view(&ov, o1, e1);
            pld_view_t s0 = sub_view(&a.kv, z, e0), s1 = sub_view(&b.kv, z, e1);
            if ((st = kcopy(it, f, e, &d0, &s0)) == PLD_OK)
                st = kcopy(it, f, e, &d1, &s1);
            valid[0] = a.valid[0] < b.valid[0] ? a.valid[0] : b.valid[0];
            valid[1] = a.valid[1] + b.valid[1];
            if (st != PLD_OK)
                pld_value_release(out);
        }
    }
    pld_value_release(&a.v);
    pld_value_release(&b.v);
    return st;
}

/* Multi-index of element k of a row-major box of shape `ext`. */
/* pl.tile.gather: dst[i] = src.flat[indices[i]] over indices' valid box; pl.tensor.gather: torch.gather along dim. */
static pld_status_t gather(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    int tensor = e->op == PLD_OPID_TENSOR_GATHER;
    pld_shaped_t s, x;
    int64_t dim = 0;
    pld_status_t st;
    if ((st = pld_shaped_arg(it, f, e, 0, &s)) != PLD_OK)
        return st;
    if ((tensor && (st = pld_op_iarg(it, f, e, 1, 0, &dim)) != PLD_OK) ||
        (st = pld_shaped_arg(it, f, e, tensor ? 2 : 1, &x)) != PLD_OK) {
        pld_value_release(&s.v);
        return st;
    }
    int r = x.kv.rank;
    if (dim < 0)
        dim += s.kv.rank;
    if (tensor && (r != s.kv.rank || dim < 0 || dim >= r))
        st = pld_rt_error(it, f, e->span, "%s: index rank %d and dim %lld do not fit a rank-%d input", pld_op_name(e),
                          r, (long long)dim, s.kv.rank);
    for (int d = 0; tensor && st == PLD_OK && d < r; d++)
        if (d != dim && x.kv.shape[d] > s.kv.shape[d])
            st = pld_rt_error(it, f, e->span, "%s: index dimension %d (%lld) exceeds the input's (%lld)",
                              pld_op_name(e), d, (long long)x.kv.shape[d], (long long)s.kv.shape[d]);
    pld_view_t ov;
    int64_t *valid = NULL;
    if (st == PLD_OK)
        st = pld_new_like(it, f, e, s.tile, s.kv.dt, r, x.kv.shape, s.tile ? pld_v_tile(&s.v)->mem : PLD_MEM_NONE, out,
                      &ov, &valid);
    if (st == PLD_OK) {
        memcpy(valid, x.valid, sizeof(int64_t) * (size_t)r);
        char err[ERRN];
        st = pld_op_kcheck(it, f, e, pld_k_gather(&ov, &s.kv, &x.kv, x.valid, tensor ? (int)dim : -1, err, sizeof err),
                           err);
        if (st != PLD_OK)
            pld_value_release(out);
    }
    pld_value_release(&s.v);
    pld_value_release(&x.v);
    return st;
}

/* A tensor of dtype dt and shape over t's buffer (t packed, offset in dt elements); keeps the window binding. */
static pld_tensor_t *tensor_alias(const pld_tensor_t *t, pld_dtype_t dt, int rank, const int64_t *shape, int64_t offset)
{
    pld_tensor_t *o = pld_tensor_view(t->buf, dt, rank, shape, offset);
    if (o) {
        o->is_dist = t->is_dist;
        o->winbuf = t->winbuf;
    }
    return o;
}

/* pl.tile.reinterpret_view / pl.tensor.reinterpret_view: the same bytes as dtype `to`. */
static pld_status_t reinterpret(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    pld_shaped_t s;
    pld_status_t st;
    if ((st = pld_shaped_arg(it, f, e, 0, &s)) != PLD_OK)
        return st;
    pld_dtype_t to = pld_op_dtype(it, e, 1);
    int r = s.kv.rank, n = -1, full = 1;
    int64_t shape[PLD_MAX_RANK], valid[PLD_MAX_RANK], sb = pld_dtype_bytes(s.kv.dt), db = pld_dtype_bytes(to);
    for (int d = 0; d < r; d++)
        full &= s.valid[d] == s.kv.shape[d];
    if (pld_op_arg(e, 2) && (st = pld_op_shape(it, f, e, 2, shape, &n)) != PLD_OK) {
        pld_value_release(&s.v);
        return st;
    }
    if (n >= 0) { /* explicit shape: same bytes, a fully valid source */
        int64_t a = pld_view_numel(&s.kv), b = 1;
        for (int d = 0; d < n; d++)
            b *= shape[d];
        if (a * sb != b * db || !full)
            st = pld_rt_error(it, f, e->span, full ? "%s: the shape does not hold the source's %lld bytes"
                                                   : "%s: an explicit shape needs a fully valid source",
                              pld_op_name(e), (long long)(a * sb));
        memcpy(valid, shape, sizeof valid);
    } else {
        n = r;
        memcpy(shape, s.kv.shape, sizeof shape);
        memcpy(valid, s.valid, sizeof(int64_t) * (size_t)r);
        if (r < 1 || shape[r - 1] * sb % db != 0 || valid[r - 1] * sb % db != 0)
            st = pld_rt_error(it, f, e->span, "%s: the last dimension (valid %lld of %lld) does not scale to whole %s elements",
                              pld_op_name(e), (long long)(r ? valid[r - 1] : 0), (long long)(r ? shape[r - 1] : 0),
                              pld_dtype_name(to));
        else
            shape[r - 1] = shape[r - 1] * sb / db, valid[r - 1] = valid[r - 1] * sb / db;
    }
    if (st == PLD_OK && s.tile) {
        pld_tile_t *o = pld_tile_new(to, n, shape, pld_v_tile(&s.v)->mem);
        if (!o)
            st = pld_op_oom(it, f, e);
        else {
            memcpy(o->data, s.kv.data, (size_t)(pld_view_numel(&s.kv) * sb));
            memcpy(o->valid, valid, sizeof(int64_t) * (size_t)n);
            *out = pld_tile_value(o);
        }
    } else if (st == PLD_OK) {
        const pld_tensor_t *t = pld_v_tensor(&s.v);
        if (!pld_view_is_packed(&s.kv) || t->offset * sb % db != 0)
            st = pld_rt_error(it, f, e->span, "%s needs a packed tensor at a whole-element offset", pld_op_name(e));
        else {
            pld_tensor_t *o = tensor_alias(t, to, n, shape, t->offset * sb / db);
            if (!o)
                st = pld_op_oom(it, f, e);
            else {
                memcpy(o->valid, valid, sizeof(int64_t) * (size_t)n);
                *out = pld_v_obj(&o->hdr, o->dt);
            }
        }
    }
    pld_value_release(&s.v);
    return st;
}

/* pl.tensor.view: a packed tensor under a new shape (and valid_shape). */
static pld_status_t tensor_view(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    pld_value_t a;
    pld_status_t st;
    int64_t shape[PLD_MAX_RANK], valid[PLD_MAX_RANK];
    int n, nv = -1;
    if ((st = pld_op_need(it, f, e, 0, &a, PLD_V_TENSOR)) != PLD_OK)
        return st;
    if ((st = pld_op_shape(it, f, e, 1, shape, &n)) != PLD_OK ||
        (pld_op_arg(e, 2) && (st = pld_op_shape(it, f, e, 2, valid, &nv)) != PLD_OK)) {
        pld_value_release(&a);
        return st;
    }
    const pld_tensor_t *t = pld_v_tensor(&a);
    pld_view_t kv;
    pld_tensor_kview(t, &kv);
    int64_t b = 1;
    int full = 1;
    for (int d = 0; d < n; d++)
        b *= shape[d];
    for (int d = 0; d < t->rank; d++)
        full &= t->valid[d] == t->shape[d];
    if (b != pld_view_numel(&kv) || !pld_view_is_packed(&kv))
        st = pld_rt_error(it, f, e->span, b != pld_view_numel(&kv) ? "%s: %lld elements cannot take %lld"
                                                                     : "%s needs a packed tensor (this one is a strided view)",
                          pld_op_name(e), (long long)pld_view_numel(&kv), (long long)b);
    else if (nv < 0 && !full)
        st = pld_rt_error(it, f, e->span, "%s: a partially valid source needs valid_shape", pld_op_name(e));
    for (int d = 0; st == PLD_OK && d < nv; d++)
        if (nv != n || valid[d] < 1 || valid[d] > shape[d])
            st = pld_rt_error(it, f, e->span, "%s: valid_shape does not fit the shape", pld_op_name(e));
    if (st == PLD_OK) {
        pld_tensor_t *o = tensor_alias(t, t->dt, n, shape, t->offset);
        if (!o)
            st = pld_op_oom(it, f, e);
        else {
            if (nv >= 0)
                memcpy(o->valid, valid, sizeof(int64_t) * (size_t)n);
            *out = pld_v_obj(&o->hdr, o->dt);
        }
    }
    pld_value_release(&a);
    return st;
}

/* pl.tile.scatter: dst.flat[indexes[p]] = src[p]; pl.tensor.scatter: a copy of input with out[b, index[b, k]] = src[b, k].
 * Over src's valid box in row-major order: the last write to a position wins. */
static pld_status_t scatter(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    int tensor = e->op == PLD_OPID_TENSOR_SCATTER;
    pld_shaped_t d, s, x;
    pld_status_t st;
    if ((st = pld_shaped_arg(it, f, e, 0, &d)) != PLD_OK)
        return st;
    if ((st = pld_shaped_arg(it, f, e, tensor ? 3 : 1, &s)) != PLD_OK) {
        pld_value_release(&d.v);
        return st;
    }
    if ((st = pld_shaped_arg(it, f, e, 2, &x)) != PLD_OK) {
        pld_value_release(&d.v);
        pld_value_release(&s.v);
        return st;
    }
    pld_view_t ov = {0};
    if (s.kv.rank != 2 || x.kv.rank != 2 || d.kv.rank != 2 || x.kv.shape[0] < s.valid[0] || x.kv.shape[1] < s.valid[1] ||
        (tensor && (s.valid[0] > d.kv.shape[0])))
        st = pld_rt_error(it, f, e->span, "%s: the index does not cover src's valid box, or src does not fit", pld_op_name(e));
    else if (tensor) {
        int64_t *valid = NULL;
        if ((st = pld_new_like(it, f, e, 0, d.kv.dt, 2, d.kv.shape, PLD_MEM_NONE, out, &ov, &valid)) == PLD_OK) {
            memcpy(valid, d.valid, 2 * sizeof(int64_t));
            if ((st = kcopy(it, f, e, &ov, &d.kv)) != PLD_OK)
                pld_value_release(out);
        }
    } else {
        pld_tile_t *t = pld_tile_cow(&d.v);
        if (!t)
            st = pld_op_oom(it, f, e);
        else {
            pld_tile_written_all(t); /* --poison: written where the index says (not tracked) */
            pld_tile_kview(t, &ov, 0);
            *out = d.v;
            pld_value_retain(out);
        }
    }
    if (st == PLD_OK) {
        char err[ERRN];
        st = pld_op_kcheck(it, f, e, pld_k_scatter(&ov, &s.kv, &x.kv, s.valid, tensor, err, sizeof err), err);
        if (st != PLD_OK)
            pld_value_release(out);
    }
    pld_value_release(&d.v);
    pld_value_release(&s.v);
    pld_value_release(&x.v);
    return st;
}

/* pl.tile.sort32 / pl.tensor.sort32, pl.tile.mrgsort / pl.tensor.mrgsort (formats 1 and 2). */
static pld_status_t sort_op(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    int tensor = e->op == PLD_OPID_TENSOR_SORT32 || e->op == PLD_OPID_TENSOR_MRGSORT;
    int sort = e->op == PLD_OPID_TILE_SORT32 || e->op == PLD_OPID_TENSOR_SORT32;
    int bl_arg = tensor ? 5 : 6, fmt1 = !sort && pld_op_arg(e, bl_arg);
    pld_shaped_t src[5];
    int ns = 0;
    pld_status_t st = PLD_OK;
    int64_t block = 0;
    for (int i = 0; i < (sort ? 2 : fmt1 ? 1 : tensor ? 4 : 5) && st == PLD_OK; i++) {
        if (!sort && i > 0 && !pld_op_arg(e, i))
            continue;
        if ((st = pld_shaped_arg(it, f, e, i, &src[ns])) == PLD_OK)
            ns++;
    }
    if (st == PLD_OK && fmt1 && (st = pld_op_iarg(it, f, e, bl_arg, 0, &block)) == PLD_OK && (block <= 0 || block % 64))
        st = pld_rt_error(it, f, e->span, "%s: block_len %lld is not a positive multiple of 64", pld_op_name(e),
                          (long long)block);
    int nsrc = sort ? 1 : fmt1 ? 1 : (tensor ? ns : ns - 1); /* format2 tile: the last is tmp */
    int64_t R = ns ? src[0].kv.shape[0] : 0, cols = 0;
    for (int i = 0; st == PLD_OK && i < ns; i++)
        if (src[i].kv.rank != 2 || src[i].kv.shape[0] != R ||
            (i < nsrc && (src[i].kv.dt != PLD_DT_FP32 || (!sort && src[i].kv.shape[1] % 2))))
            st = pld_rt_error(it, f, e->span, "%s needs 2-D FP32 sources of one row count (pairs: an even column count)",
                              pld_op_name(e));
    if (st == PLD_OK && sort && (src[1].kv.shape[1] != src[0].kv.shape[1] || src[0].kv.shape[1] % 32 ||
                                 pld_dtype_bytes(src[1].kv.dt) != 4))
        st = pld_rt_error(it, f, e->span, "%s: idx must have src's shape (columns a multiple of 32), 4-byte elements",
                          pld_op_name(e));
    for (int i = 0; i < nsrc; i++)
        cols += src[i].kv.shape[1];
    int64_t oshape[2] = {R, sort ? 2 * cols : (!tensor && !fmt1) ? src[ns - 1].kv.shape[1] : cols};
    pld_view_t ov = {0};
    int64_t *valid = NULL;
    if (st == PLD_OK)
        st = pld_new_like(it, f, e, !tensor, PLD_DT_FP32, 2, oshape, tensor ? PLD_MEM_NONE : pld_v_tile(&src[0].v)->mem, out,
                      &ov, &valid);
    if (st == PLD_OK) {
        char err[ERRN];
        const pld_view_t *sv[5];
        for (int i = 0; i < nsrc; i++)
            sv[i] = &src[i].kv;
        pld_status_t ks = sort ? pld_k_sort32(&ov, &src[0].kv, &src[1].kv, err, sizeof err)
                               : pld_k_mrgsort(&ov, sv, nsrc, fmt1 ? block : 0, err, sizeof err);
        st = ks == PLD_E_NOMEM ? pld_op_oom(it, f, e) : pld_op_kcheck(it, f, e, ks, err);
        if (st != PLD_OK)
            pld_value_release(out);
    }
    for (int i = 0; i < ns; i++)
        pld_value_release(&src[i].v);
    return st;
}

/* pl.tile.gather_row / pl.tensor.gather_row: dst[dst_offset + window] = src[src_offset + window] (transposed). */
static pld_status_t gather_row(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    int tensor = e->op == PLD_OPID_TENSOR_GATHER_ROW;
    pld_shaped_t d, s;
    int64_t doff[PLD_MAX_RANK], soff[PLD_MAX_RANK], win[PLD_MAX_RANK], vs[PLD_MAX_RANK], tr = 0;
    int nd, ns, nw, nv = -1;
    pld_status_t st;
    if ((st = pld_shaped_arg(it, f, e, 0, &d)) != PLD_OK)
        return st;
    if ((st = pld_op_need(it, f, e, 1, &s.v, PLD_V_TENSOR)) != PLD_OK) {
        pld_value_release(&d.v);
        return st;
    }
    pld_tensor_kview(pld_v_tensor(&s.v), &s.kv);
    if ((st = pld_op_ilist(it, f, e, 2, doff, &nd)) == PLD_OK && (st = pld_op_ilist(it, f, e, 3, soff, &ns)) == PLD_OK &&
        (st = pld_op_shape(it, f, e, 4, win, &nw)) == PLD_OK && (st = pld_op_iarg(it, f, e, 5, 0, &tr)) == PLD_OK &&
        pld_op_arg(e, 6))
        st = pld_op_shape(it, f, e, 6, vs, &nv);
    if (st == PLD_OK && (nd != 2 || ns != 2 || nw != 2 || (nv >= 0 && nv != 2) || d.kv.rank != 2 || s.kv.rank != 2 ||
                         d.kv.dt != s.kv.dt))
        st = pld_rt_error(it, f, e->span, "%s needs 2-D operands of one dtype and 2-entry offsets and shapes",
                          pld_op_name(e));
    int64_t ext[2] = {nv == 2 ? vs[0] : win[0], nv == 2 ? vs[1] : win[1]};
    int64_t dext[2] = {tr ? ext[1] : ext[0], tr ? ext[0] : ext[1]};
    for (int k = 0; st == PLD_OK && k < 2; k++)
        if (ext[k] < 0 || ext[k] > win[k] || soff[k] < 0 || soff[k] > s.kv.shape[k] - ext[k] || doff[k] < 0 ||
            doff[k] > d.kv.shape[k] - dext[k])
            st = pld_rt_error(it, f, e->span, "%s: the window (dimension %d: src %lld + %lld of %lld, dst %lld + %lld of "
                              "%lld) is outside src or dst", pld_op_name(e), k, (long long)soff[k], (long long)ext[k],
                              (long long)s.kv.shape[k], (long long)doff[k], (long long)dext[k], (long long)d.kv.shape[k]);
    pld_view_t dv = d.kv;
    if (st == PLD_OK && !tensor) {
        pld_tile_t *t = pld_tile_cow(&d.v);
        if (!t)
            st = pld_op_oom(it, f, e);
        else
            pld_tile_kview(t, &dv, 0);
    }
    if (st == PLD_OK) {
        pld_view_t sw = sub_view(&s.kv, soff, ext), dw = sub_view(&dv, doff, dext);
        if (tr) {
            int64_t x = sw.shape[0];
            sw.shape[0] = sw.shape[1], sw.shape[1] = x;
            x = sw.strides[0], sw.strides[0] = sw.strides[1], sw.strides[1] = x;
        }
        if ((st = kcopy(it, f, e, &dw, &sw)) == PLD_OK) {
            if (tensor)
                pld_tensor_mark_written(pld_v_tensor(&d.v), doff, dext);
            else
                pld_tile_written_box(pld_v_tile(&d.v), doff, dext);
            *out = d.v;
            d.v = pld_v_none();
        }
    }
    pld_value_release(&d.v);
    pld_value_release(&s.v);
    return st;
}

/* The column stride and first column a MaskPattern (1..7) selects. */
static void mask_cols(int m, int *stride, int *first)
{
    *stride = m <= 2 ? 2 : m <= 6 ? 4 : 1;
    *first = m == 2 ? 1 : m >= 3 && m <= 6 ? m - 3 : 0;
}

/* gather_mask (pl.tile.gather_mask; pl.tensor.gather's mask form: mask_pattern at ip, output_dtype at io): the
 * MaskPattern's columns of each row, packed; the bits kept (output_dtype of the same width). */
static pld_status_t gather_mask(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out, int ip, int io)
{
    pld_shaped_t s;
    pld_status_t st;
    int m = pld_check_mask_pattern(pld_op_arg(e, ip)), stride, first;
    if ((st = pld_shaped_arg(it, f, e, 0, &s)) != PLD_OK)
        return st;
    mask_cols(m, &stride, &first);
    pld_dtype_t od = pld_op_dtype(it, e, io);
    if (od == PLD_DT_NONE)
        od = s.kv.dt;
    if (m < 0 || s.kv.rank != 2 || s.kv.shape[1] % stride || pld_dtype_bytes(od) != pld_dtype_bytes(s.kv.dt)) {
        pld_value_release(&s.v);
        return pld_rt_error(it, f, e->span, "%s: bad mask pattern, shape or output dtype", pld_op_name(e));
    }
    int64_t os[2] = {s.kv.shape[0], s.kv.shape[1] / stride};
    pld_view_t ov;
    int64_t *valid = NULL;
    if ((st = pld_new_like(it, f, e, s.tile, od, 2, os, s.tile ? pld_v_tile(&s.v)->mem : PLD_MEM_NONE, out, &ov,
                           &valid)) == PLD_OK) {
        int64_t z[2] = {0, first}, ext[2] = {os[0], os[1]};
        pld_view_t sel = sub_view(&s.kv, z, ext);
        sel.strides[1] *= stride;
        sel.dt = od; /* same width: a byte copy */
        if ((st = kcopy(it, f, e, &ov, &sel)) != PLD_OK)
            pld_value_release(out);
    }
    pld_value_release(&s.v);
    return st;
}

/* scatter_mask (pl.tile.scatter_mask; pl.tensor.scatter's mask form: dst at id, src at is, mask_pattern at ip): a copy
 * of dst with src's rows in the pattern's columns. */
static pld_status_t scatter_mask(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out, int id, int is,
                                 int ip)
{
    pld_shaped_t d, s;
    pld_status_t st;
    int m = pld_check_mask_pattern(pld_op_arg(e, ip)), stride, first;
    if ((st = pld_shaped_arg(it, f, e, id, &d)) != PLD_OK)
        return st;
    if ((st = pld_shaped_arg(it, f, e, is, &s)) != PLD_OK) {
        pld_value_release(&d.v);
        return st;
    }
    mask_cols(m, &stride, &first);
    pld_view_t ov;
    int64_t *valid = NULL;
    if (m < 0 || d.kv.rank != 2 || s.kv.rank != 2 || d.kv.dt != s.kv.dt || d.kv.shape[0] != s.kv.shape[0] ||
        d.kv.shape[1] != s.kv.shape[1] * stride)
        st = pld_rt_error(it, f, e->span, "%s: bad mask pattern or shapes", pld_op_name(e));
    else if ((st = pld_new_like(it, f, e, d.tile, d.kv.dt, 2, d.kv.shape, d.tile ? pld_v_tile(&d.v)->mem : PLD_MEM_NONE,
                                out, &ov, &valid)) == PLD_OK) {
        memcpy(valid, d.valid, 2 * sizeof(int64_t));
        int64_t z[2] = {0, first};
        pld_view_t sel = sub_view(&ov, z, s.kv.shape);
        sel.strides[1] *= stride;
        if ((st = kcopy(it, f, e, &ov, &d.kv)) != PLD_OK || (st = kcopy(it, f, e, &sel, &s.kv)) != PLD_OK)
            pld_value_release(out);
    }
    pld_value_release(&d.v);
    pld_value_release(&s.v);
    return st;
}

pld_status_t pld_exec_layout(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    switch (e->op) {
    case PLD_OPID_TILE_TRANSPOSE:
    case PLD_OPID_TENSOR_TRANSPOSE:
    case PLD_OPID_TILE_TRANSPOSE_VIEW:
        return transpose(it, f, e, out);
    case PLD_OPID_TILE_REINTERPRET_VIEW:
    case PLD_OPID_TENSOR_REINTERPRET_VIEW:
        return reinterpret(it, f, e, out);
    case PLD_OPID_TENSOR_VIEW:
        return tensor_view(it, f, e, out);
    case PLD_OPID_TENSOR_SCATTER:
        if (pld_op_arg(e, 4)) /* the mask form */
            return scatter_mask(it, f, e, out, 5, 0, 4);
        return scatter(it, f, e, out);
    case PLD_OPID_TILE_SCATTER:
        return scatter(it, f, e, out);
    case PLD_OPID_TILE_SORT32: case PLD_OPID_TENSOR_SORT32:
    case PLD_OPID_TILE_MRGSORT: case PLD_OPID_TENSOR_MRGSORT:
        return sort_op(it, f, e, out);
    case PLD_OPID_TILE_GATHER_ROW: case PLD_OPID_TENSOR_GATHER_ROW:
        return gather_row(it, f, e, out);
    case PLD_OPID_TILE_GATHER_MASK:
        return gather_mask(it, f, e, out, 1, 2);
    case PLD_OPID_TILE_SCATTER_MASK:
        return scatter_mask(it, f, e, out, 0, 1, 2);
    case PLD_OPID_TILE_EXTRACT:
        return extract(it, f, e, out);
    case PLD_OPID_TILE_CONCAT:
    case PLD_OPID_TENSOR_CONCAT:
        return concat(it, f, e, out);
    case PLD_OPID_TENSOR_GATHER:
        if (pld_op_arg(e, 3)) /* the mask form */
            return gather_mask(it, f, e, out, 3, 4);
        if (pld_op_arg(e, 5)) /* the compare form */
            return pld_exec_gather(it, f, e, out);
        return gather(it, f, e, out);
    default:
        return gather(it, f, e, out);
    }
}
