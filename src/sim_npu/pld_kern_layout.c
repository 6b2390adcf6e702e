/* pld_kern_layout.c - the layout, valid-shape and gather / scatter numerics
 * of the tile kernel library (pld_kern.h): the valid region of a reshape and
 * of a tile assemble, padding (fillpad), the index gathers and scatters of
 * pl.tile.gather / pl.tensor.gather / scatter, sort32 and mrgsort. `sim`
 * (src/interp/pld_exec_layout.c, pld_exec_mem.c) and compiled kernels
 * (pc_kern) call these; the semantics are in docs/ops-numerics.md. Bytes are
 * copied, never converted. Messages are written without the op name (the
 * caller prefixes it). */
#include "pld_kern.h"
#include "pld_kern_int.h"
#include "pld_mem.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void unflatten(int64_t k, int r, const int64_t *ext, int64_t *idx)
{
    for (int d = r - 1; d >= 0; d--) {
        idx[d] = ext[d] ? k % ext[d] : 0;
        k = ext[d] ? k / ext[d] : 0;
    }
}

static void *at(const pld_view_t *v, const int64_t *idx)
{
    int64_t o = 0;
    for (int d = 0; d < v->rank; d++)
        o += idx[d] * v->strides[d];
    return (char *)v->data + o * pld_dtype_bytes(v->dt);
}

/* ---------------------------------------------------------------- valid regions */

/* 1 when the valid box of in[0..ni) (valid v) maps onto out[0..no) by adding
 * or removing full unit axes only; the mapped box in ov. */
static int reshape_unit_axes(const int64_t *in, const int64_t *v, int ni, const int64_t *out, int no, int64_t *ov)
{
    if (ni == 0 && no == 0)
        return 1;
    if (ni > 0 && no > 0 && in[0] == out[0] && reshape_unit_axes(in + 1, v + 1, ni - 1, out + 1, no - 1, ov + 1)) {
        ov[0] = v[0];
        return 1;
    }
    if (ni > 0 && in[0] == 1 && v[0] == 1 && reshape_unit_axes(in + 1, v + 1, ni - 1, out, no, ov))
        return 1;
    if (no > 0 && out[0] == 1 && reshape_unit_axes(in, v, ni, out + 1, no - 1, ov + 1)) {
        ov[0] = 1;
        return 1;
    }
    return 0;
}

pld_status_t pld_k_reshape_valid(int ri, const int64_t *in, const int64_t *v, int ro, const int64_t *out, int64_t *ov,
                                 char *err, size_t errn)
{
    int full = 1, empty = 0;
    for (int d = 0; d < ri; d++) {
        full &= v[d] == in[d];
        empty |= v[d] == 0;
    }
    for (int d = 0; d < ro; d++)
        ov[d] = full ? out[d] : 0;
    if (full || empty || reshape_unit_axes(in, v, ri, out, ro, ov))
        return PLD_OK;
    int fd = 0;
    while (fd + 1 < ri && v[fd] == 1)
        fd++;
    int64_t prefix = v[fd], step = 1;
    for (int d = fd + 1; d < ri; d++) {
        if (v[d] != in[d])
            return pld_kern_fail(err, errn, "the valid data (dimension %d valid for %lld of %lld) is not a contiguous prefix of "
                                   "the buffer, so no box of the new shape holds it", d, (long long)v[d],
                        (long long)in[d]);
        prefix *= in[d];
    }
    /* the outermost axis whose row-major step divides the prefix and has room for it */
    for (int d = 0; d < ro; d++) {
        step = 1;
        for (int k = d + 1; k < ro; k++)
            step *= out[k];
        if (prefix % step == 0 && prefix / step <= out[d]) {
            for (int k = 0; k < ro; k++)
                ov[k] = k < d ? 1 : k == d ? prefix / step : out[k];
            return PLD_OK;
        }
    }
    return pld_kern_fail(err, errn, "%lld valid elements fill no box of the new shape (not a whole number of rows)",
                (long long)prefix);
}

/* Messages of pld_k_assemble_valid follow the op name after a space (not ": "). */
pld_status_t pld_k_assemble_valid(int r, const int64_t *dshape, int64_t *dvalid, const int64_t *svalid,
                                  const int64_t *off, char *err, size_t errn)
{
    int empty_src = 0, empty_dst = 0, full = 1, origin = 1, covers = 1, grow = -1, ngrow = 0;
    for (int d = 0; d < r; d++) {
        int64_t far = off[d] + svalid[d];
        empty_src |= svalid[d] == 0;
        empty_dst |= dvalid[d] == 0;
        full &= dvalid[d] == dshape[d];
        origin &= off[d] == 0;
        covers &= dvalid[d] <= svalid[d];
        if (far > dvalid[d])
            grow = d, ngrow++;
    }
    if (empty_src || (!empty_dst && (full || ngrow == 0)))
        return PLD_OK;
    if ((empty_dst || covers) && origin) {
        memcpy(dvalid, svalid, (size_t)r * sizeof *dvalid);
        return PLD_OK;
    }
    if (empty_dst)
        return pld_kern_fail(err, errn, "writes at a non-zero offset into a target whose valid region is empty (the valid region "
                               "would not start at the origin)");
    if (ngrow > 1)
        return pld_kern_fail(err, errn, "grows the valid region along %d dimensions at once (an L-shape, not one "
                               "origin-anchored box)", ngrow);
    if (off[grow] > dvalid[grow])
        return pld_kern_fail(err, errn, "leaves a gap in dimension %d: the write starts at %lld, past the target's valid extent "
                               "%lld", grow, (long long)off[grow], (long long)dvalid[grow]);
    for (int d = 0; d < r; d++)
        if (d != grow && (off[d] != 0 || svalid[d] != dvalid[d]))
            return pld_kern_fail(err, errn, "grows dimension %d, so it must span dimension %d of the target's valid region "
                                   "exactly (offset 0, valid extent %lld)", grow, d, (long long)dvalid[d]);
    dvalid[grow] = off[grow] + svalid[grow];
    return PLD_OK;
}

/* ---------------------------------------------------------------- padding */

static void pad_fill(const pld_view_t *v, pld_dtype_t dt, int m)
{
    if (m == 0 || !pld_dtype_is_int(dt)) {
        pld_k_fill_f(v, m == 0 ? 0.0 : m == 1 ? (double)INFINITY : -(double)INFINITY);
        return;
    }
    int bits = pld_dtype_bits(dt);
    int sgn = dt == PLD_DT_INT4 || dt == PLD_DT_INT8 || dt == PLD_DT_INT16 || dt == PLD_DT_INT32 ||
              dt == PLD_DT_INT64 || dt == PLD_DT_INDEX;
    int64_t hi, lo;
    if (dt == PLD_DT_BOOL)
        hi = 1, lo = 0;
    else if (sgn)
        hi = bits >= 64 ? INT64_MAX : (int64_t)((UINT64_C(1) << (bits - 1)) - 1), lo = -hi - 1;
    else
        hi = bits >= 64 ? -1 /* all ones */ : (int64_t)((UINT64_C(1) << bits) - 1), lo = 0;
    pld_k_fill_i(v, m == 1 ? hi : lo);
}

pld_status_t pld_k_fillpad(const pld_view_t *dst, const pld_view_t *src, const int64_t *valid, int mode, char *err,
                           size_t errn)
{
    pld_view_t box = *src;
    for (int d = 0; d < box.rank; d++)
        box.shape[d] = valid[d];
    if (src->data == dst->data) {
        /* in place: fill the complement of the box, one slab per dim */
        for (int d = 0; d < dst->rank; d++) {
            if (valid[d] >= dst->shape[d])
                continue;
            pld_view_t slab = *dst;
            for (int k = 0; k < d; k++)
                slab.shape[k] = valid[k];
            slab.shape[d] = dst->shape[d] - valid[d];
            slab.data = (char *)dst->data + valid[d] * dst->strides[d] * pld_dtype_storage_bytes(dst->dt);
            pad_fill(&slab, dst->dt, mode);
        }
        return PLD_OK;
    }
    pad_fill(dst, dst->dt, mode);
    pld_view_t o = *dst;
    for (int d = 0; d < o.rank; d++)
        o.shape[d] = valid[d];
    return pld_k_copy(&o, &box, err, errn);
}

/* ---------------------------------------------------------------- gather / scatter */

pld_status_t pld_k_gather(const pld_view_t *out, const pld_view_t *src, const pld_view_t *idx, const int64_t *box,
                          int dim, char *err, size_t errn)
{
    int r = idx->rank;
    int64_t n = 1, ix[PLD_MAX_RANK], sp[PLD_MAX_RANK];
    int64_t lim = dim >= 0 ? src->shape[dim] : pld_view_numel(src);
    size_t eb = (size_t)pld_dtype_bytes(src->dt);
    for (int d = 0; d < r; d++)
        n *= box[d];
    for (int64_t k = 0; k < n; k++) {
        unflatten(k, r, box, ix);
        int64_t j = pld_elem_get_i(at(idx, ix), idx->dt, 0);
        if (j < 0 || j >= lim) {
            char s[160];
            pld_kern_shape_str(s, sizeof s, r, ix);
            return pld_kern_fail(err, errn, "index %lld at %s is outside [0, %lld)", (long long)j, s, (long long)lim);
        }
        if (dim >= 0) {
            memcpy(sp, ix, sizeof sp);
            sp[dim] = j;
        } else {
            unflatten(j, src->rank, src->shape, sp);
        }
        memcpy(at(out, ix), at(src, sp), eb);
    }
    return PLD_OK;
}

pld_status_t pld_k_scatter(const pld_view_t *out, const pld_view_t *src, const pld_view_t *idx, const int64_t *box,
                           int row_form, char *err, size_t errn)
{
    int64_t lim = row_form ? out->shape[1] : pld_view_numel(out);
    size_t eb = (size_t)pld_dtype_bytes(out->dt);
    for (int64_t i = 0; i < box[0]; i++)
        for (int64_t j = 0; j < box[1]; j++) {
            int64_t p[2] = {i, j}, q[2];
            int64_t k = pld_elem_get_i(at(idx, p), idx->dt, 0);
            if (k < 0 || k >= lim)
                return pld_kern_fail(err, errn, "index %lld at [%lld, %lld] is outside [0, %lld)", (long long)k, (long long)i,
                            (long long)j, (long long)lim);
            if (row_form)
                q[0] = i, q[1] = k;
            else
                unflatten(k, 2, out->shape, q);
            memcpy(at(out, q), at(src, p), eb);
        }
    return PLD_OK;
}

/* ---------------------------------------------------------------- sort32 / mrgsort */

/* A [value, index] pair: an FP32 value and 4 index bytes. */
typedef struct {
    float v;
    uint32_t i;
} pair_t;

/* p goes before q in descending order (NaN first); ties keep the earlier one (callers keep order). */
static int before(const pair_t *p, const pair_t *q)
{
    if (isnan(p->v))
        return !isnan(q->v);
    return !isnan(q->v) && p->v > q->v;
}

static void row_pairs(const pld_view_t *v, int64_t r, pair_t *out, int64_t n)
{
    for (int64_t k = 0; k < n; k++) {
        int64_t a[2] = {r, 2 * k}, b[2] = {r, 2 * k + 1};
        memcpy(&out[k].v, at(v, a), 4);
        memcpy(&out[k].i, at(v, b), 4);
    }
}

static void put_pairs(const pld_view_t *v, int64_t r, const pair_t *p, int64_t n)
{
    for (int64_t k = 0; k < n; k++) {
        int64_t a[2] = {r, 2 * k}, b[2] = {r, 2 * k + 1};
        memcpy(at(v, a), &p[k].v, 4);
        memcpy(at(v, b), &p[k].i, 4);
    }
}

/* Stable merge of the runs [starts[j], ends[j]) of in into out (descending). */
static void merge_runs(const pair_t *in, int nr, const int64_t *starts, const int64_t *ends, pair_t *out)
{
    int64_t pos[4];
    memcpy(pos, starts, sizeof(int64_t) * (size_t)nr);
    for (int64_t o = 0;; o++) {
        int best = -1;
        for (int j = 0; j < nr; j++)
            if (pos[j] < ends[j] && (best < 0 || before(&in[pos[j]], &in[pos[best]])))
                best = j;
        if (best < 0)
            return;
        out[o] = in[pos[best]++];
    }
}

pld_status_t pld_k_sort32(const pld_view_t *out, const pld_view_t *src, const pld_view_t *idx, char *err, size_t errn)
{
    int64_t R = src->shape[0], np = src->shape[1];
    pair_t *buf = pld_mem_calloc((size_t)(np ? np : 1), sizeof *buf);
    if (!buf)
        return (void)pld_kern_fail(err, errn, "out of memory"), PLD_E_NOMEM;
    for (int64_t r = 0; r < R; r++) {
        for (int64_t k = 0; k < np; k++) {
            int64_t p[2] = {r, k};
            memcpy(&buf[k].v, at(src, p), 4);
            memcpy(&buf[k].i, at(idx, p), 4);
        }
        for (int64_t b = 0; b < np; b += 32) /* stable insertion sort of each 32-block */
            for (int64_t k = b + 1; k < b + 32; k++) {
                pair_t x = buf[k];
                int64_t j = k;
                for (; j > b && before(&x, &buf[j - 1]); j--)
                    buf[j] = buf[j - 1];
                buf[j] = x;
            }
        put_pairs(out, r, buf, np);
    }
    pld_mem_free(buf);
    return PLD_OK;
}

pld_status_t pld_k_mrgsort(const pld_view_t *out, const pld_view_t *const *src, int nsrc, int64_t block, char *err,
                           size_t errn)
{
    int64_t R = nsrc ? src[0]->shape[0] : 0, cols = 0;
    for (int i = 0; i < nsrc; i++)
        cols += src[i]->shape[1];
    int64_t np = cols / 2;
    pair_t *buf = pld_mem_calloc((size_t)(np ? np : 1), sizeof *buf);
    pair_t *tmp = pld_mem_calloc((size_t)(np ? np : 1), sizeof *tmp);
    if (!buf || !tmp) {
        pld_mem_free(buf);
        pld_mem_free(tmp);
        return (void)pld_kern_fail(err, errn, "out of memory"), PLD_E_NOMEM;
    }
    for (int64_t r = 0; r < R; r++) {
        int64_t o = 0;
        for (int i = 0; i < nsrc; i++) {
            row_pairs(src[i], r, buf + o, src[i]->shape[1] / 2);
            o += src[i]->shape[1] / 2;
        }
        int64_t starts[4], ends[4];
        if (block > 0) {
            int64_t run = block / 2;
            for (int64_t g = 0; g < np; g += 4 * run) {
                int nr = 0;
                for (; nr < 4 && g + nr * run < np; nr++) {
                    starts[nr] = g + nr * run;
                    ends[nr] = starts[nr] + run < np ? starts[nr] + run : np;
                }
                merge_runs(buf, nr, starts, ends, tmp + g);
            }
        } else {
            for (int i = 0, a = 0; i < nsrc; i++) {
                starts[i] = a;
                ends[i] = a += src[i]->shape[1] / 2;
            }
            merge_runs(buf, nsrc, starts, ends, tmp);
        }
        int64_t nout = out->shape[1] / 2 < np ? out->shape[1] / 2 : np;
        put_pairs(out, r, tmp, nout);
    }
    pld_mem_free(buf);
    pld_mem_free(tmp);
    return PLD_OK;
}
