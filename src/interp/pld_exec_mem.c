/* pld_exec_mem.c - memory ops: tile load/store, tile/tensor create and fill,
 * element read/write, slices and subscripts (views), assemble, reshape, move,
 * valid shapes, and small arrays. Operands and regions are checked here with
 * located runtime errors; the copies go to pld_kern.c. */
#include "pld_interp_int.h"
#include "pld_mem.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define ERRN 256

/* View of a tensor region [off, off+ext) restricted to the trailing `r` dims
 * (leading dims must have extent 1). */
void pld_region_view(const pld_tensor_t *t, const int64_t *off, const int64_t *ext, int r, pld_view_t *v)
{
    memset(v, 0, sizeof *v);
    int64_t o = t->offset;
    for (int d = 0; d < t->rank; d++)
        o += off[d] * t->strides[d];
    v->data = (char *)t->buf->data + o * pld_dtype_bytes(t->dt);
    v->dt = t->dt;
    v->rank = r;
    for (int j = 0; j < r; j++) {
        v->shape[j] = ext[t->rank - r + j];
        v->strides[j] = t->strides[t->rank - r + j];
    }
}

/* Checks and clamps a tile<->tensor region: offsets of the tensor's rank, tile
 * extents aligned with the trailing dims. Fills ext (tensor rank). */
pld_status_t pld_region(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_tensor_t *t, const int64_t *off,
                           int noff, const int64_t *tile_ext, int r, int clamp, int64_t *ext, const char *what)
{
    if (noff != t->rank)
        return pld_rt_error(it, f, e->span, "%s: %d offsets for a tensor of rank %d", pld_op_name(e), noff, t->rank);
    if (r > t->rank)
        return pld_rt_error(it, f, e->span, "%s: a rank-%d tile does not fit a rank-%d tensor", pld_op_name(e), r, t->rank);
    for (int d = 0; d < t->rank; d++) {
        int j = d - (t->rank - r);
        ext[d] = j >= 0 ? tile_ext[j] : 1;
        if (off[d] < 0)
            return pld_rt_error(it, f, e->span, "%s: offset %lld in dimension %d is negative", pld_op_name(e),
                                (long long)off[d], d);
        if (ext[d] > t->shape[d] - off[d]) { /* off[d] >= 0: no overflow */
            if (clamp) {
                ext[d] = t->shape[d] - off[d] > 0 ? t->shape[d] - off[d] : 0;
                continue;
            }
            char sh[96];
            pld_shape_str(sh, sizeof sh, t->rank, t->shape);
            return pld_rt_error(it, f, e->span,
                                "%s %s past the end of dimension %d: offset %lld + extent %lld > size %lld (tensor %s)",
                                pld_op_name(e), what, d, (long long)off[d], (long long)ext[d], (long long)t->shape[d], sh);
        }
        if (j < 0 && ext[d] != 1)
            return pld_rt_error(it, f, e->span, "%s: leading dimension %d must have extent 1", pld_op_name(e), d);
    }
    return PLD_OK;
}

/* A load from a pl.MX_A_ZZ / pl.MX_B_NN scale tensor [R, C] (the checker made
 * it 2-D of 1-byte elements): the file holds PyPTO's packed GM bytes (tests/st/
 * runtime/ops/test_matmul_mx.py _pack_a_scale / _pack_b_scale), the tile the
 * logical scales. MX_A_ZZ stores [16, 2] blocks of (row, col) row-major, the
 * blocks row-major: (r, c) is byte ((r/16)(C/2) + c/2) 32 + (r%16) 2 + c%2.
 * MX_B_NN stores [2, 16] blocks of (col, row), the blocks column-major: (r, c) is
 * byte ((c/16)(R/2) + r/2) 32 + (c%16) 2 + r%2. A window at offsets off reads
 * the logical elements at (off + i, off + j). */
static pld_status_t mx_unpack(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_tensor_t *t,
                              const int64_t *off, const pld_view_t *dst, int layout)
{
    const int a = layout == PLD_LAYOUT_MX_A;
    const int64_t R = t->shape[0], C = t->shape[1];
    if (t->rank != 2 || pld_dtype_storage_bytes(t->dt) != 1 || t->strides[1] != 1 || t->strides[0] != C)
        return pld_rt_error(it, f, e->span, "%s of an MX-layout tensor only supports packed 2D sources of 1-byte "
                            "elements", pld_op_name(e));
    char err[ERRN];
    return pld_op_kcheck(it, f, e, pld_k_mx_unpack(dst, (const uint8_t *)t->buf->data + t->offset, R, C, off, a, err,
                                                   sizeof err), err);
}

pld_status_t pld_exec_load(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out, int remote)
{
    /* tile.load(tensor, offsets, shapes, valid_shape, target_memory, clamp)
     * remote_load(target, peer, offsets, shape, valid_shape) */
    pld_value_t tv;
    pld_status_t st = pld_op_need(it, f, e, 0, &tv, PLD_V_TENSOR);
    if (st != PLD_OK)
        return st;
    pld_tensor_t *t = pld_v_tensor(&tv);
    int64_t off[PLD_MAX_RANK], shp[PLD_MAX_RANK], val[PLD_MAX_RANK], clamp = 0;
    int noff, nshp, nval;
    int io = remote ? 2 : 1, is = remote ? 3 : 2, iv = remote ? 4 : 3;
    if ((st = pld_op_ilist(it, f, e, io, off, &noff)) != PLD_OK || (st = pld_op_ilist(it, f, e, is, shp, &nshp)) != PLD_OK ||
        (st = pld_op_ilist(it, f, e, iv, val, &nval)) != PLD_OK || (!remote && (st = pld_op_iarg(it, f, e, 5, 0, &clamp)) != PLD_OK))
        goto done;
    if (nval < 0) {
        memcpy(val, shp, sizeof val);
        nval = nshp;
    }
    if (nval != nshp) {
        st = pld_rt_error(it, f, e->span, "%s: valid_shape has %d entries, shape has %d", pld_op_name(e), nval, nshp);
        goto done;
    }
    for (int j = 0; j < nshp; j++) {
        if (shp[j] <= 0 || val[j] < 0 || val[j] > shp[j]) {
            st = pld_rt_error(it, f, e->span, "%s: valid extent %lld of dimension %d is outside [0, %lld]", pld_op_name(e),
                              (long long)val[j], j, (long long)shp[j]);
            goto done;
        }
    }
    if (remote) {
        /* valid extent = min(valid_shape, clamp(src_valid - offset, 0, shape)) */
        for (int j = 0; j < nshp && j < t->rank; j++) {
            int d = t->rank - nshp + j;
            int64_t room = t->valid[d] - off[d];
            if (room < 0)
                room = 0;
            if (room < val[j])
                val[j] = room;
        }
    }
    int64_t ext[PLD_MAX_RANK];
    if ((st = pld_region(it, f, e, t, off, noff, val, nshp, (int)clamp, ext, "reads")) != PLD_OK)
        goto done;
    pld_mem_t mem = e->type && e->type->kind == PLD_TY_TILE && e->type->mem ? e->type->mem : PLD_MEM_VEC;
    pld_tile_t *tile = pld_tile_new(t->dt, nshp, shp, mem);
    if (!tile) {
        st = pld_op_oom(it, f, e);
        goto done;
    }
    for (int j = 0; j < nshp; j++)
        tile->valid[j] = ext[t->rank - nshp + j];
    if (it->poison && !remote)
        pld_poison_check_local(it, e, t, off, ext);
    if (it->race && !remote)
        pld_race_local(it, f, e, t, off, ext, PLD_HB_READ);
    pld_view_t src, dst;
    pld_region_view(t, off, ext, nshp, &src);
    pld_tile_kview(tile, &dst, 1);
    char err[ERRN];
    const pld_type_t *srct = pld_op_arg(e, 0)->type;
    int mx = !remote && srct && (srct->layout == PLD_LAYOUT_MX_A || srct->layout == PLD_LAYOUT_MX_B) ? srct->layout : 0;
    if (mx)
        st = mx_unpack(it, f, e, t, off, &dst, mx);
    else
        st = pld_op_kcheck(it, f, e, pld_k_copy(&dst, &src, err, sizeof err), err);
    it->stats.bytes_moved += (uint64_t)pld_view_numel(&dst) * (uint64_t)pld_dtype_bytes(t->dt);
    if (st == PLD_OK)
        *out = pld_tile_value(tile);
    else {
        pld_value_t tmp = pld_tile_value(tile);
        pld_value_release(&tmp);
    }
done:
    pld_value_release(&tv);
    return st;
}

/* 1 when a store of src_dt into a dst_dt tensor is the cube's FIXPIPE
 * narrowing of an FP32 accumulator into BF16 / FP16 (pld_k_store_narrow;
 * the checker allows it only for an Acc tile or a matmul's result). */
static int narrow_store(pld_dtype_t src_dt, pld_dtype_t dst_dt)
{
    return src_dt == PLD_DT_FP32 && (dst_dt == PLD_DT_BF16 || dst_dt == PLD_DT_FP16);
}

/* Writes a tile's valid region into a tensor at offsets (atomic: accumulate;
 * an FP32 accumulator into BF16 / FP16: FIXPIPE's narrowing). */
pld_status_t pld_store_tile(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_tile_t *tile, pld_tensor_t *t,
                               const int64_t *off, int noff, const int64_t *limit, int atomic)
{
    int64_t ext[PLD_MAX_RANK], tex[PLD_MAX_RANK];
    for (int j = 0; j < tile->rank; j++)
        tex[j] = limit && limit[j] >= 0 && limit[j] < tile->valid[j] ? limit[j] : tile->valid[j];
    pld_status_t st = pld_region(it, f, e, t, off, noff, tex, tile->rank, 0, ext, "writes");
    if (st != PLD_OK)
        return st;
    const int narrow = narrow_store(tile->dt, t->dt); /* an accumulator: the checker saw it is one */
    if (tile->dt != t->dt && !narrow)
        return pld_rt_error(it, f, e->span, "%s: tile dtype %s differs from the tensor dtype %s", pld_op_name(e),
                            pld_dtype_name(tile->dt), pld_dtype_name(t->dt));
    pld_view_t src, dst;
    pld_tile_kview(tile, &src, 0);
    for (int j = 0; j < tile->rank; j++)
        src.shape[j] = tex[j];
    pld_region_view(t, off, ext, tile->rank, &dst);
    char err[ERRN];
    st = narrow   ? pld_k_store_narrow(&dst, &src, atomic, err, sizeof err)
         : atomic ? pld_k_accumulate(&dst, &src, err, sizeof err)
                  : pld_k_copy(&dst, &src, err, sizeof err);
    if (st != PLD_OK)
        return pld_op_kcheck(it, f, e, st, err);
    pld_tensor_mark_written(t, off, ext);
    if (it->race)
        pld_race_local(it, f, e, t, off, ext, atomic ? PLD_HB_ATOMIC : PLD_HB_WRITE);
    it->stats.bytes_moved += (uint64_t)pld_view_numel(&dst) * (uint64_t)pld_dtype_bytes(t->dt);
    return PLD_OK;
}

pld_status_t pld_exec_store(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    pld_value_t tv, dv;
    pld_status_t st = pld_op_need(it, f, e, 0, &tv, PLD_V_TILE);
    if (st != PLD_OK)
        return st;
    if ((st = pld_op_need(it, f, e, 2, &dv, PLD_V_TENSOR)) != PLD_OK) {
        pld_value_release(&tv);
        return st;
    }
    int64_t off[PLD_MAX_RANK], lim[PLD_MAX_RANK], atomic = 0;
    int noff, nlim;
    if ((st = pld_op_ilist(it, f, e, 1, off, &noff)) == PLD_OK && (st = pld_op_ilist(it, f, e, 3, lim, &nlim)) == PLD_OK &&
        (st = pld_op_iarg(it, f, e, 4, 0, &atomic)) == PLD_OK)
        st = pld_store_tile(it, f, e, pld_v_tile(&tv), pld_v_tensor(&dv), off, noff, nlim >= 0 ? lim : NULL, (int)atomic);
    pld_value_release(&tv);
    if (st == PLD_OK)
        *out = dv;
    else
        pld_value_release(&dv);
    return st;
}

pld_status_t pld_exec_create(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out, int tile, int full,
                              int value_arg)
{
    int64_t shape[PLD_MAX_RANK];
    int rank;
    pld_status_t st = pld_op_shape(it, f, e, 0, shape, &rank);
    if (st != PLD_OK)
        return st;
    pld_dtype_t dt = pld_op_dtype(it, e, 1);
    if (full && !pld_kern_dtype_ok(dt))
        return pld_rt_error(it, f, e->span, "%s: pldrun cannot fill dtype %s with a value (no 4-bit or FP8 arithmetic "
                                            "yet)",
                            pld_op_name(e), pld_dtype_name(dt));
    if (pld_value_bytes(dt, rank, shape) < 0) {
        char sh[96];
        pld_shape_str(sh, sizeof sh, rank, shape);
        return pld_rt_error(it, f, e->span, "%s: a %s %s of shape %s is larger than pldrun allows (1 TiB)", pld_op_name(e),
                            pld_dtype_name(dt), tile ? "tile" : "tensor", sh);
    }
    pld_value_t fill = pld_v_none();
    if (full && (st = pld_op_eval(it, f, e, value_arg, &fill)) != PLD_OK)
        return st;
    pld_view_t v;
    if (tile) {
        pld_mem_t mem = e->type && e->type->mem ? e->type->mem : PLD_MEM_VEC;
        pld_tile_t *t = pld_tile_new(dt, rank, shape, mem);
        if (!t)
            return pld_op_oom(it, f, e);
        if (it->poison && !full && pld_poison_tile_created(it, e, t) != PLD_OK) {
            pld_value_t tv = pld_tile_value(t);
            pld_value_release(&tv);
            return pld_op_oom(it, f, e);
        }
        pld_tile_kview(t, &v, 0);
        *out = pld_tile_value(t);
    } else {
        pld_tensor_t *t = pld_tensor_new(dt, rank, shape, 1);
        if (!t)
            return pld_op_oom(it, f, e);
        pld_tensor_kview(t, &v);
        *out = pld_v_obj(&t->hdr, dt);
    }
    if (fill.kind == PLD_V_FLOAT)
        pld_k_fill_f(&v, fill.u.f);
    else if (fill.kind == PLD_V_INT)
        pld_k_fill_i(&v, fill.u.i);
    return PLD_OK;
}

/* Flat element offset for indices into a shape (one index = flat). */
static pld_status_t elem_index(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int rank, const int64_t *shape,
                               const int64_t *strides, const int64_t *idx, int n, int64_t *off)
{
    if (n == 1 && rank > 1) {
        int64_t total;
        if (pld_size_numel(rank, shape, &total) != PLD_SIZE_OK)
            return pld_rt_error(it, f, e->span, "%s: the element count of the indexed shape overflows", pld_op_name(e));
        if (idx[0] < 0 || idx[0] >= total)
            return pld_rt_error(it, f, e->span, "%s: flat index %lld out of range [0, %lld)", pld_op_name(e),
                                (long long)idx[0], (long long)total);
        int64_t rem = idx[0], o = 0;
        for (int d = rank - 1; d >= 0; d--) {
            o += (rem % shape[d]) * strides[d];
            rem /= shape[d];
        }
        *off = o;
        return PLD_OK;
    }
    if (n != rank)
        return pld_rt_error(it, f, e->span, "%s: %d indices for rank %d", pld_op_name(e), n, rank);
    int64_t o = 0;
    for (int d = 0; d < rank; d++) {
        if (idx[d] < 0 || idx[d] >= shape[d]) {
            char sh[96];
            pld_shape_str(sh, sizeof sh, rank, shape);
            return pld_rt_error(it, f, e->span, "%s: index %lld out of range in dimension %d (shape %s)", pld_op_name(e),
                                (long long)idx[d], d, sh);
        }
        o += idx[d] * strides[d];
    }
    *off = o;
    return PLD_OK;
}

/* Element reads and writes need a dtype the kernels hold: a 4-bit or FP8
 * tensor can be moved as bytes but not read as a number (it used to read 0). */
static pld_status_t elem_dtype_ok(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_value_t *obj)
{
    pld_dtype_t dt = obj->kind == PLD_V_TENSOR ? pld_v_tensor(obj)->dt
                   : obj->kind == PLD_V_TILE   ? pld_v_tile(obj)->dt
                   : obj->kind == PLD_V_ARRAY  ? pld_v_array(obj)->dt
                                               : PLD_DT_INT64;
    if (pld_kern_dtype_ok(dt))
        return PLD_OK;
    return pld_rt_error(it, f, e->span, "cannot read or write an element of %s data as a number (pldrun has no 4-bit or "
                                        "FP8 arithmetic yet)", pld_dtype_name(dt));
}

static pld_value_t read_elem(const void *data, pld_dtype_t dt, int64_t i)
{
    return pld_dtype_is_float(dt) ? pld_v_float(dt, pld_elem_get_f(data, dt, i)) : pld_v_int(dt, pld_elem_get_i(data, dt, i));
}

static void write_elem(void *data, pld_dtype_t dt, int64_t i, const pld_value_t *v)
{
    if (pld_dtype_is_float(dt))
        pld_elem_set_f(data, dt, i, pld_v_as_f(v));
    else
        pld_elem_set_i(data, dt, i, pld_v_as_i(v));
}

pld_status_t pld_exec_read_write(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out, int write)
{
    pld_value_t obj, val = pld_v_none();
    pld_status_t st = pld_op_eval(it, f, e, 0, &obj);
    if (st != PLD_OK)
        return st;
    int64_t idx[PLD_MAX_RANK];
    int n;
    if ((st = pld_op_ilist(it, f, e, 1, idx, &n)) != PLD_OK || (write && (st = pld_op_eval(it, f, e, 2, &val)) != PLD_OK)) {
        pld_value_release(&obj);
        return st;
    }
    if (write && !pld_v_is_scalar(&val)) {
        pld_value_release(&obj);
        pld_value_release(&val);
        return pld_rt_error(it, f, e->span, "%s: the value must be a scalar", pld_op_name(e));
    }
    if ((st = elem_dtype_ok(it, f, e, &obj)) != PLD_OK) {
        pld_value_release(&obj);
        pld_value_release(&val);
        return st;
    }
    int64_t off;
    if (obj.kind == PLD_V_TENSOR) {
        pld_tensor_t *t = pld_v_tensor(&obj);
        if ((st = elem_index(it, f, e, t->rank, t->shape, t->strides, idx, n, &off)) == PLD_OK) {
            if (it->race) {
                pld_tensor_t one = *t; /* the element as a rank-0 view */
                one.rank = 0;
                one.offset = t->offset + off;
                pld_race_local(it, f, e, &one, NULL, NULL, write ? PLD_HB_WRITE : PLD_HB_READ);
            }
            if (write) {
                write_elem(t->buf->data, t->dt, t->offset + off, &val);
                if (t->buf->shadow)
                    memset(t->buf->shadow + (t->offset + off) * pld_dtype_bytes(t->dt), 1, (size_t)pld_dtype_bytes(t->dt));
                if (t->buf->written) {
                    int64_t flat = t->offset + off;
                    if (flat < t->buf->track_n)
                        t->buf->written[flat / 8] |= (uint8_t)(1u << (flat % 8));
                }
                *out = obj;
                obj = pld_v_none();
            } else {
                if (it->poison && t->buf->shadow) {
                    pld_tensor_t one = *t; /* the element as a rank-0 view */
                    one.rank = 0;
                    one.offset = t->offset + off;
                    pld_poison_check_local(it, e, &one, NULL, NULL);
                }
                *out = read_elem(t->buf->data, t->dt, t->offset + off);
            }
        }
    } else if (obj.kind == PLD_V_TILE) {
        pld_tile_t *t = pld_v_tile(&obj);
        pld_view_t v;
        pld_tile_kview(t, &v, 0);
        if ((st = elem_index(it, f, e, t->rank, t->shape, v.strides, idx, n, &off)) == PLD_OK) {
            if (write) {
                pld_tile_t *w = pld_tile_cow(&obj);
                if (!w)
                    st = pld_op_oom(it, f, e);
                else {
                    write_elem(w->data, w->dt, off, &val);
                    if (w->unw)
                        w->unw[off] = 0;
                    /* PyPTO writes the tile in place: the statement form `pl.write(t, [i, j], v)` updates t */
                    const pld_expr_t *te = pld_op_arg(e, 0);
                    if (te && te->kind == PLD_EX_NAME && te->slot >= 0)
                        pld_value_set(&f->slots[te->slot], &obj);
                    *out = obj;
                    obj = pld_v_none();
                }
            } else {
                *out = read_elem(t->data, t->dt, off);
            }
        }
    } else {
        st = pld_rt_error(it, f, e->span, "%s needs a tensor or a tile, found a %s", pld_op_name(e), pld_vkind_name(obj.kind));
    }
    pld_value_release(&obj);
    pld_value_release(&val);
    return st;
}

/* ------------------------------------------------------------ tensor views */

/* Erases the nd axes drop[] (each of extent 1) from a slice result of *rank
 * dims (strides: NULL for a packed tile), then prepends unit axes up to
 * min_rank (tiles are physically 2-D). */
static pld_status_t slice_drop_dims(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int *rank, int64_t *shape,
                                    int64_t *strides, int64_t *valid, const int64_t *drop, int nd, int min_rank)
{
    int isdrop[PLD_MAX_RANK] = {0}, k = 0;
    for (int j = 0; j < nd; j++)
        if (drop[j] >= 0 && drop[j] < *rank)
            isdrop[drop[j]] = 1;
    for (int d = 0; d < *rank; d++) {
        if (isdrop[d] && (shape[d] != 1 || valid[d] != 1))
            return pld_rt_error(it, f, e->span, "%s: dropped dimension %d has extent %lld (valid %lld), not 1",
                                pld_op_name(e), d, (long long)shape[d], (long long)valid[d]);
        if (isdrop[d])
            continue;
        shape[k] = shape[d];
        valid[k] = valid[d];
        if (strides)
            strides[k] = strides[d];
        k++;
    }
    int lift = nd > 0 && k < min_rank ? min_rank - k : 0;
    for (int d = k - 1; lift && d >= 0; d--) {
        shape[d + lift] = shape[d];
        valid[d + lift] = valid[d];
    }
    for (int d = 0; d < lift; d++)
        shape[d] = valid[d] = 1;
    *rank = k + lift;
    return PLD_OK;
}

pld_status_t pld_exec_slice(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    pld_value_t a;
    pld_status_t st = pld_op_eval(it, f, e, 0, &a);
    if (st != PLD_OK)
        return st;
    int64_t shp[PLD_MAX_RANK], off[PLD_MAX_RANK], val[PLD_MAX_RANK], drop[PLD_MAX_RANK], clamp = 0;
    int ns, no, nv, nd;
    if ((st = pld_op_ilist(it, f, e, 1, shp, &ns)) != PLD_OK || (st = pld_op_ilist(it, f, e, 2, off, &no)) != PLD_OK ||
        (st = pld_op_ilist(it, f, e, 3, val, &nv)) != PLD_OK) {
        pld_value_release(&a);
        return st;
    }
    if ((st = pld_op_ilist(it, f, e, 4, drop, &nd)) != PLD_OK ||
        (e->op == PLD_OPID_TENSOR_SLICE && (st = pld_op_iarg(it, f, e, 6, 0, &clamp)) != PLD_OK)) {
        pld_value_release(&a);
        return st;
    }
    if (a.kind == PLD_V_TILE) {
        /* tile.slice: a copy of the sub-tile */
        pld_tile_t *t = pld_v_tile(&a);
        int64_t ext[PLD_MAX_RANK];
        for (int d = 0; d < t->rank; d++) {
            if (d >= no || d >= ns || off[d] < 0 || shp[d] < 0 || shp[d] > t->shape[d] - off[d]) {
                pld_value_release(&a);
                return pld_rt_error(it, f, e->span, "%s: the window is outside the tile", pld_op_name(e));
            }
            ext[d] = shp[d];
        }
        pld_tile_t *o = pld_tile_new(t->dt, t->rank, ext, t->mem);
        if (!o) {
            pld_value_release(&a);
            return pld_op_oom(it, f, e);
        }
        /* never valid where the source is not: its valid region under the window, narrowed by valid_shape */
        for (int d = 0; d < t->rank; d++) {
            int64_t room = t->valid[d] - off[d];
            o->valid[d] = room < 0 ? 0 : room < ext[d] ? room : ext[d];
            if (nv == t->rank && val[d] < o->valid[d])
                o->valid[d] = val[d] < 0 ? 0 : val[d];
        }
        pld_view_t src, dst;
        pld_tile_kview(t, &src, 0);
        int64_t o0 = 0;
        for (int d = 0; d < t->rank; d++) {
            o0 += off[d] * src.strides[d];
            src.shape[d] = ext[d];
        }
        src.data = (char *)src.data + o0 * pld_dtype_bytes(t->dt);
        pld_tile_kview(o, &dst, 0);
        char err[ERRN];
        st = pld_k_copy(&dst, &src, err, sizeof err);
        if (t->mem == PLD_MEM_ACC && nd <= 0) {
            /* a window of an Acc tile shares its storage (PyPTO: pto.subview; matmul_acc's result "is the
             * accumulator's buffer"): remember where, for the accumulating matmuls into it */
            o->win_of = t->win_of ? t->win_of : t;
            o->win_of->hdr.refs++;
            for (int d = 0; d < t->rank; d++)
                o->win_off[d] = off[d] + (t->win_of ? t->win_off[d] : 0);
        }
        pld_value_release(&a);
        pld_value_t res = pld_tile_value(o);
        if (st != PLD_OK) {
            pld_value_release(&res);
            return pld_op_kcheck(it, f, e, st, err);
        }
        if ((st = slice_drop_dims(it, f, e, &o->rank, o->shape, NULL, o->valid, drop, nd, 2)) != PLD_OK) {
            pld_value_release(&res);
            return st;
        }
        *out = res;
        return PLD_OK;
    }
    if (a.kind != PLD_V_TENSOR) {
        pld_vkind_t k = a.kind;
        pld_value_release(&a);
        return pld_rt_error(it, f, e->span, "%s needs a tensor, found a %s", pld_op_name(e), pld_vkind_name(k));
    }
    pld_tensor_t *t = pld_v_tensor(&a);
    if (ns != t->rank || no != t->rank) {
        pld_value_release(&a);
        return pld_rt_error(it, f, e->span, "%s: shape and offset need %d entries", pld_op_name(e), t->rank);
    }
    pld_tensor_t *v = pld_tensor_copy_desc(t);
    if (!v) {
        pld_value_release(&a);
        return pld_op_oom(it, f, e);
    }
    for (int d = 0; d < t->rank; d++) {
        /* PyPTO's kClampedWindow: the view is cut back to the tensor, so only
         * the extent read must fit: the valid_shape when given, else the window */
        const int64_t reach = nv == t->rank && val[d] >= 0 && val[d] < shp[d] ? val[d] : shp[d];
        if (off[d] < 0 || shp[d] < 0 || (!clamp && reach > t->shape[d] - off[d])) {
            char sh[96];
            pld_shape_str(sh, sizeof sh, t->rank, t->shape);
            pld_value_t vv = pld_v_obj(&v->hdr, v->dt);
            pld_value_release(&vv);
            pld_value_release(&a);
            return pld_rt_error(it, f, e->span, "%s: window offset %lld + %sextent %lld is outside dimension %d of %s",
                                pld_op_name(e), (long long)off[d], reach < shp[d] ? "valid " : "", (long long)reach, d,
                                sh);
        }
        /* clamp: a window that runs past the end keeps only its part inside
         * the tensor (a view never reaches past its storage; an offset past
         * the end leaves an empty view at the end) */
        int64_t o = off[d], ext = shp[d];
        if (ext > t->shape[d] - o) {
            o = o < t->shape[d] ? o : t->shape[d];
            ext = t->shape[d] - o;
        }
        v->offset += o * t->strides[d];
        v->shape[d] = ext;
        int64_t room = t->valid[d] - o;
        if (room < 0)
            room = 0;
        v->valid[d] = room < ext ? room : ext;
        if (nv == t->rank && val[d] < v->valid[d])
            v->valid[d] = val[d] < 0 ? 0 : val[d];
    }
    if ((st = slice_drop_dims(it, f, e, &v->rank, v->shape, v->strides, v->valid, drop, nd, 0)) != PLD_OK) {
        pld_value_t vv = pld_v_obj(&v->hdr, v->dt);
        pld_value_release(&vv);
        pld_value_release(&a);
        return st;
    }
    pld_value_release(&a);
    *out = pld_v_obj(&v->hdr, v->dt);
    return PLD_OK;
}

pld_status_t pld_exec_subscript(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_value_t *obj,
                                pld_value_t *out)
{
    int n = e->u.sub.n;
    if (obj->kind == PLD_V_UNAVAIL) {
        *out = *obj;
        return PLD_OK;
    }
    if (obj->kind == PLD_V_TUPLE) {
        int64_t k;
        pld_status_t st = it->walk->eval_i64(it, f, e->u.sub.items[0], &k);
        if (st != PLD_OK)
            return st;
        pld_tuple_t *t = pld_v_tuple(obj);
        if (k < 0)
            k += t->n;
        if (k < 0 || k >= t->n)
            return pld_rt_error(it, f, e->span, "tuple index %lld out of range (%d elements)", (long long)k, t->n);
        *out = t->items[k];
        pld_value_retain(out);
        return PLD_OK;
    }
    if (obj->kind == PLD_V_ARRAY) {
        int64_t k;
        pld_status_t st = it->walk->eval_i64(it, f, e->u.sub.items[0], &k);
        if (st != PLD_OK)
            return st;
        pld_array_t *a = pld_v_array(obj);
        if (k < 0 || k >= a->n)
            return pld_rt_error(it, f, e->span, "array index %lld out of range [0, %lld)", (long long)k, (long long)a->n);
        *out = read_elem(a->data, a->dt, k);
        return PLD_OK;
    }
    if (obj->kind != PLD_V_TENSOR && obj->kind != PLD_V_TILE)
        return pld_rt_error(it, f, e->span, "a %s cannot be subscripted", pld_vkind_name(obj->kind));
    int rank = obj->kind == PLD_V_TENSOR ? pld_v_tensor(obj)->rank : pld_v_tile(obj)->rank;
    const int64_t *shape = obj->kind == PLD_V_TENSOR ? pld_v_tensor(obj)->shape : pld_v_tile(obj)->shape;
    int64_t lo[PLD_MAX_RANK], ext[PLD_MAX_RANK];
    int drop[PLD_MAX_RANK] = {0}, slices = 0;
    if (n > rank)
        return pld_rt_error(it, f, e->span, "%d indices for a rank-%d value", n, rank);
    for (int d = 0; d < rank; d++) {
        lo[d] = 0;
        ext[d] = shape[d];
        if (d >= n)
            continue;
        const pld_expr_t *item = e->u.sub.items[d];
        if (item->kind == PLD_EX_SLICE) {
            slices++;
            int64_t a = 0, b = shape[d];
            if (item->u.slice.lo && it->walk->eval_i64(it, f, item->u.slice.lo, &a) != PLD_OK)
                return PLD_E_RUNTIME;
            if (item->u.slice.hi && it->walk->eval_i64(it, f, item->u.slice.hi, &b) != PLD_OK)
                return PLD_E_RUNTIME;
            if (a < 0)
                a += shape[d];
            if (b < 0)
                b += shape[d];
            if (a < 0 || b > shape[d] || a > b)
                return pld_rt_error(it, f, item->span, "slice %lld:%lld is outside dimension %d (size %lld)",
                                    (long long)a, (long long)b, d, (long long)shape[d]);
            lo[d] = a;
            ext[d] = b - a;
        } else {
            int64_t k;
            if (it->walk->eval_i64(it, f, item, &k) != PLD_OK)
                return PLD_E_RUNTIME;
            if (k < 0)
                k += shape[d];
            if (k < 0 || k >= shape[d])
                return pld_rt_error(it, f, item->span, "index %lld out of range for dimension %d (size %lld)",
                                    (long long)k, d, (long long)shape[d]);
            lo[d] = k;
            ext[d] = 1;
            drop[d] = 1;
        }
    }
    if (slices == 0 && n == rank && elem_dtype_ok(it, f, e, obj) != PLD_OK)
        return PLD_E_RUNTIME;
    if (slices == 0 && n == rank) {
        /* scalar element read */
        if (obj->kind == PLD_V_TENSOR) {
            pld_tensor_t *t = pld_v_tensor(obj);
            *out = read_elem(t->buf->data, t->dt, (int64_t)(((char *)pld_tensor_at(t, lo) - (char *)t->buf->data) /
                                                             pld_dtype_bytes(t->dt)));
            if (it->race) { /* v = win[i, j]: an element read */
                int64_t one[PLD_MAX_RANK];
                for (int d = 0; d < rank; d++)
                    one[d] = 1;
                pld_race_local(it, f, e, t, lo, one, PLD_HB_READ);
            }
        } else {
            pld_tile_t *t = pld_v_tile(obj);
            pld_view_t v;
            pld_tile_kview(t, &v, 0);
            int64_t o = 0;
            for (int d = 0; d < rank; d++)
                o += lo[d] * v.strides[d];
            *out = read_elem(t->data, t->dt, o);
        }
        return PLD_OK;
    }
    if (obj->kind == PLD_V_TILE)
        return pld_rt_error(it, f, e->span, "slicing a tile with [...] is not supported; use pl.tile.slice");
    pld_tensor_t *t = pld_v_tensor(obj);
    pld_tensor_t *v = pld_tensor_copy_desc(t);
    if (!v)
        return pld_op_oom(it, f, e);
    int k = 0;
    for (int d = 0; d < rank; d++) {
        v->offset += lo[d] * t->strides[d];
        if (drop[d])
            continue;
        v->shape[k] = ext[d];
        v->strides[k] = t->strides[d];
        int64_t room = t->valid[d] - lo[d];
        v->valid[k] = room < 0 ? 0 : room < ext[d] ? room : ext[d];
        k++;
    }
    v->rank = k;
    *out = pld_v_obj(&v->hdr, v->dt);
    return PLD_OK;
}

/* Copies src's valid region (a tensor) into dst at off (trailing alignment). */
pld_status_t pld_assemble_tensor(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_tensor_t *dst,
                                 const pld_tensor_t *src, const int64_t *off, int noff, int atomic)
{
    /* only the source's valid region is written (PyPTO's tensor.assemble: kValidRegionTransfer, the bound
     * its write must respect; its lowering loads and stores that region) */
    int64_t ext[PLD_MAX_RANK];
    pld_status_t st = pld_region(it, f, e, dst, off, noff, src->valid, src->rank, 0, ext, "writes");
    if (st != PLD_OK)
        return st;
    const int narrow = narrow_store(src->dt, dst->dt); /* a matmul's result: the checker saw it is one */
    if (src->dt != dst->dt && !narrow)
        return pld_rt_error(it, f, e->span, "%s: source dtype %s differs from target dtype %s", pld_op_name(e),
                            pld_dtype_name(src->dt), pld_dtype_name(dst->dt));
    pld_view_t vs, vd;
    pld_tensor_kview(src, &vs);
    memcpy(vs.shape, src->valid, (size_t)src->rank * sizeof *vs.shape);
    pld_region_view(dst, off, ext, src->rank, &vd);
    char err[ERRN];
    st = narrow   ? pld_k_store_narrow(&vd, &vs, atomic, err, sizeof err)
         : atomic ? pld_k_accumulate(&vd, &vs, err, sizeof err)
                  : pld_k_copy(&vd, &vs, err, sizeof err);
    if (st != PLD_OK)
        return pld_op_kcheck(it, f, e, st, err);
    pld_tensor_mark_written(dst, off, ext);
    if (it->race) {
        pld_race_local(it, f, e, src, NULL, NULL, PLD_HB_READ); /* a window as the source is read */
        pld_race_local(it, f, e, dst, off, ext, atomic ? PLD_HB_ATOMIC : PLD_HB_WRITE);
    }
    it->stats.bytes_moved += (uint64_t)pld_view_numel(&vs) * (uint64_t)pld_dtype_bytes(src->dt);
    return PLD_OK;
}

pld_status_t pld_exec_subscript_assign(pld_interp_t *it, frame_t *f, const pld_expr_t *target, const pld_value_t *v)
{
    pld_value_t obj;
    pld_status_t st = it->walk->eval(it, f, target->u.sub.obj, &obj);
    if (st != PLD_OK)
        return st;
    if (obj.kind == PLD_V_ARRAY || (obj.kind == PLD_V_TILE) ||
        (obj.kind == PLD_V_TENSOR && pld_v_is_scalar(v))) {
        /* element write: arrays and tiles are values (copy on write), tensors are references */
        int64_t idx[PLD_MAX_RANK];
        int n = target->u.sub.n;
        for (int d = 0; d < n && d < PLD_MAX_RANK; d++)
            if ((st = it->walk->eval_i64(it, f, target->u.sub.items[d], &idx[d])) != PLD_OK) {
                pld_value_release(&obj);
                return st;
            }
        if (!pld_v_is_scalar(v)) {
            pld_value_release(&obj);
            return pld_rt_error(it, f, target->span, "only a scalar can be stored into one element");
        }
        if ((st = elem_dtype_ok(it, f, target, &obj)) != PLD_OK) {
            pld_value_release(&obj);
            return st;
        }
        if (obj.kind == PLD_V_ARRAY) {
            pld_array_t *a = pld_v_array(&obj);
            if (idx[0] < 0 || idx[0] >= a->n) {
                pld_value_release(&obj);
                return pld_rt_error(it, f, target->span, "array index %lld out of range [0, %lld)", (long long)idx[0],
                                    (long long)a->n);
            }
            if (a->hdr.refs > 1) {
                pld_array_t *c = pld_array_new(a->dt, a->n);
                if (!c) {
                    pld_value_release(&obj);
                    return pld_rt_error(it, f, target->span, "out of memory");
                }
                memcpy(c->data, a->data, (size_t)a->n * (size_t)pld_dtype_bytes(a->dt));
                pld_value_release(&obj);
                obj = pld_v_obj(&c->hdr, c->dt);
                a = c;
            }
            write_elem(a->data, a->dt, idx[0], v);
        } else if (obj.kind == PLD_V_TILE) {
            pld_tile_t *t = pld_tile_cow(&obj);
            if (!t) {
                pld_value_release(&obj);
                return pld_rt_error(it, f, target->span, "out of memory");
            }
            pld_view_t kv;
            pld_tile_kview(t, &kv, 0);
            int64_t o = 0;
            for (int d = 0; d < t->rank; d++) {
                if (d >= n || idx[d] < 0 || idx[d] >= t->shape[d]) {
                    pld_value_release(&obj);
                    return pld_rt_error(it, f, target->span, "tile index out of range");
                }
                o += idx[d] * kv.strides[d];
            }
            write_elem(t->data, t->dt, o, v);
            if (t->unw)
                t->unw[o] = 0;
        } else {
            pld_tensor_t *t = pld_v_tensor(&obj);
            if (n != t->rank) {
                pld_value_release(&obj);
                return pld_rt_error(it, f, target->span, "%d indices for a rank-%d tensor", n, t->rank);
            }
            for (int d = 0; d < t->rank; d++)
                if (idx[d] < 0 || idx[d] >= t->shape[d]) {
                    pld_value_release(&obj);
                    return pld_rt_error(it, f, target->span, "index %lld out of range for dimension %d (size %lld)",
                                        (long long)idx[d], d, (long long)t->shape[d]);
                }
            char *p = pld_tensor_at(t, idx);
            int64_t flat = (p - (char *)t->buf->data) / pld_dtype_bytes(t->dt);
            write_elem(t->buf->data, t->dt, flat, v);
            int64_t one[PLD_MAX_RANK];
            for (int d = 0; d < t->rank; d++)
                one[d] = 1;
            pld_tensor_mark_written(t, idx, one);
            if (it->race) /* win[i, j] = v: an element write */
                pld_race_local(it, f, target, t, idx, one, PLD_HB_WRITE);
        }
        /* rebind the (possibly copied) value to the variable */
        if (target->u.sub.obj->kind == PLD_EX_NAME && target->u.sub.obj->slot >= 0)
            pld_value_set(&f->slots[target->u.sub.obj->slot], &obj);
        pld_value_release(&obj);
        return PLD_OK;
    }
    if (obj.kind != PLD_V_TENSOR || v->kind != PLD_V_TENSOR) {
        pld_vkind_t k = obj.kind;
        pld_value_release(&obj);
        return pld_rt_error(it, f, target->span, "cannot assign a %s into a %s", pld_vkind_name(v->kind), pld_vkind_name(k));
    }
    /* t[a:b, c] = tensor -> assemble into the window */
    pld_value_t view;
    st = pld_exec_subscript(it, f, target, &obj, &view);
    if (st == PLD_OK) {
        pld_tensor_t *dst = pld_v_tensor(&view), *src = pld_v_tensor(v);
        int64_t zero[PLD_MAX_RANK] = {0};
        /* a source of lower rank aligns with the trailing dims */
        int64_t sshape[PLD_MAX_RANK];
        int same = src->rank == dst->rank;
        for (int d = 0; same && d < dst->rank; d++)
            same = src->shape[d] == dst->shape[d];
        (void)sshape;
        if (!same && src->rank <= dst->rank) {
            int ok = 1;
            for (int d = 0; d < dst->rank; d++) {
                int j = d - (dst->rank - src->rank);
                ok &= j < 0 ? dst->shape[d] == 1 : dst->shape[d] == src->shape[j];
            }
            same = ok;
        }
        if (!same)
            st = pld_rt_error(it, f, target->span, "slice assignment: the value's shape does not match the window");
        else {
            const pld_expr_t fake = *target;
            (void)fake;
            int64_t ext[PLD_MAX_RANK];
            for (int d = 0; d < dst->rank; d++)
                ext[d] = dst->shape[d];
            pld_view_t vs, vd;
            pld_tensor_kview(src, &vs);
            pld_region_view(dst, zero, ext, src->rank, &vd);
            char err[ERRN];
            if (src->dt != dst->dt)
                st = pld_rt_error(it, f, target->span, "slice assignment: dtype %s into %s", pld_dtype_name(src->dt),
                                  pld_dtype_name(dst->dt));
            else if ((st = pld_k_copy(&vd, &vs, err, sizeof err)) != PLD_OK)
                st = pld_rt_error(it, f, target->span, "slice assignment: %s", err);
            else {
                pld_tensor_mark_written(dst, zero, ext);
                if (it->race) /* win[a:b] = t: a slice write */
                    pld_race_local(it, f, target, dst, zero, ext, PLD_HB_WRITE);
            }
        }
        pld_value_release(&view);
    }
    pld_value_release(&obj);
    return st;
}


/* pl.tile.move: a copy of a tile in another memory. */
pld_status_t pld_exec_move(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    pld_value_t a;
    pld_status_t st;
    if ((st = pld_op_need(it, f, e, 0, &a, PLD_V_TILE)) != PLD_OK)
        return st;
    pld_tile_t *t = pld_v_tile(&a);
    pld_mem_t mem = e->type && e->type->mem ? e->type->mem : t->mem;
    /* a UINT8 MX scale tile becomes FP8E8M0 in LeftScale / RightScale (the same bytes) */
    int scale = (mem == PLD_MEM_LEFTSCALE || mem == PLD_MEM_RIGHTSCALE) && t->dt == PLD_DT_UINT8;
    pld_tile_t *o = pld_tile_new(scale ? PLD_DT_FP8E8M0 : t->dt, t->rank, t->shape, mem);
    if (!o) {
        pld_value_release(&a);
        return pld_op_oom(it, f, e);
    }
    int64_t n = 1;
    for (int d = 0; d < t->rank; d++)
        n *= t->shape[d];
    memcpy(o->data, t->data, (size_t)n * (size_t)pld_dtype_bytes(t->dt));
    memcpy(o->valid, t->valid, sizeof o->valid);
    pld_value_release(&a);
    *out = pld_tile_value(o);
    return PLD_OK;
}

/* The valid box of a reshape (PyPTO's ComputeReshapeValidShape, which never
 * widens): pld_k_reshape_valid. */
static pld_status_t reshape_valid(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int ri, const int64_t *in,
                                  const int64_t *v, int ro, const int64_t *out, int64_t *ov)
{
    char err[ERRN];
    return pld_op_kcheck(it, f, e, pld_k_reshape_valid(ri, in, v, ro, out, ov, err, sizeof err), err);
}

/* pl.tile.reshape / pl.tensor.reshape: same elements, new shape (tensors: a view). */
pld_status_t pld_exec_reshape(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    pld_value_t a;
    pld_status_t st;
    int64_t shape[PLD_MAX_RANK];
    int rank;
    if ((st = pld_op_eval(it, f, e, 0, &a)) != PLD_OK)
        return st;
    if ((st = pld_op_shape(it, f, e, 1, shape, &rank)) != PLD_OK) {
        pld_value_release(&a);
        return st;
    }
    int64_t n1 = 1, n2;
    if (pld_size_numel(rank, shape, &n2) != PLD_SIZE_OK) {
        char sh[160];
        pld_shape_str(sh, sizeof sh, rank, shape);
        pld_value_release(&a);
        return pld_rt_error(it, f, e->span, "%s: the element count of shape %s overflows", pld_op_name(e), sh);
    }
    if (a.kind == PLD_V_TILE) {
        pld_tile_t *t = pld_v_tile(&a);
        for (int d = 0; d < t->rank; d++)
            n1 *= t->shape[d];
        if (n1 != n2) {
            pld_value_release(&a);
            return pld_rt_error(it, f, e->span, "%s: %lld elements cannot take %lld", pld_op_name(e), (long long)n1,
                                (long long)n2);
        }
        pld_tile_t *o = pld_tile_new(t->dt, rank, shape, t->mem);
        if (!o) {
            pld_value_release(&a);
            return pld_op_oom(it, f, e);
        }
        memcpy(o->data, t->data, (size_t)n1 * (size_t)pld_dtype_bytes(t->dt));
        st = reshape_valid(it, f, e, t->rank, t->shape, t->valid, rank, shape, o->valid);
        pld_value_release(&a);
        *out = pld_tile_value(o);
        if (st != PLD_OK)
            pld_value_release(out);
        return st;
    }
    if (a.kind != PLD_V_TENSOR) {
        pld_value_release(&a);
        return pld_rt_error(it, f, e->span, "%s needs a tile or a tensor", pld_op_name(e));
    }
    pld_tensor_t *t = pld_v_tensor(&a);
    pld_view_t kv;
    pld_tensor_kview(t, &kv);
    for (int d = 0; d < t->rank; d++)
        n1 *= t->shape[d];
    if (n1 != n2 || !pld_view_is_packed(&kv)) {
        pld_value_release(&a);
        return pld_rt_error(it, f, e->span, n1 != n2 ? "%s: %lld elements cannot take the new shape"
                                                     : "%s needs a packed tensor (this one is a strided view)",
                            pld_op_name(e), (long long)n1);
    }
    pld_tensor_t *o = pld_tensor_view(t->buf, t->dt, rank, shape, t->offset);
    if (!o) {
        pld_value_release(&a);
        return pld_op_oom(it, f, e);
    }
    o->is_dist = t->is_dist;
    o->winbuf = t->winbuf;
    st = reshape_valid(it, f, e, t->rank, t->shape, t->valid, rank, shape, o->valid);
    pld_value_release(&a);
    *out = pld_v_obj(&o->hdr, o->dt);
    if (st != PLD_OK)
        pld_value_release(out);
    return st;
}

/* The target's valid region after tile.assemble wrote src at off: the union
 * of two origin-anchored boxes, which must itself be one (PyPTO's
 * InferWriteValidShapeUnion: no gap, no L-shape): pld_k_assemble_valid. */
static pld_status_t assemble_valid(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_tile_t *dst,
                                   const pld_tile_t *src, const int64_t *off)
{
    char err[ERRN];
    if (pld_k_assemble_valid(dst->rank, dst->shape, dst->valid, src->valid, off, err, sizeof err) != PLD_OK)
        return pld_rt_error(it, f, e->span, "%s %s", pld_op_name(e), err);
    return PLD_OK;
}

/* pl.tensor.assemble / pl.tile.assemble: writes a tile or tensor into another at offsets. */
pld_status_t pld_exec_assemble_op(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    pld_value_t a, b;
    pld_status_t st;
    if ((st = pld_op_eval(it, f, e, 0, &a)) != PLD_OK)
        return st;
    if ((st = pld_op_eval(it, f, e, 1, &b)) != PLD_OK) {
        pld_value_release(&a);
        return st;
    }
    int64_t off[PLD_MAX_RANK], atomic = 0;
    int n;
    if ((st = pld_op_ilist(it, f, e, 2, off, &n)) == PLD_OK && e->op == PLD_OPID_TENSOR_ASSEMBLE)
        st = pld_op_iarg(it, f, e, 3, 0, &atomic);
    if (st == PLD_OK) {
        if (a.kind == PLD_V_TENSOR && b.kind == PLD_V_TENSOR)
            st = pld_assemble_tensor(it, f, e, pld_v_tensor(&a), pld_v_tensor(&b), off, n, (int)atomic);
        else if (a.kind == PLD_V_TENSOR && b.kind == PLD_V_TILE)
            st = pld_store_tile(it, f, e, pld_v_tile(&b), pld_v_tensor(&a), off, n, NULL, (int)atomic);
        else if (a.kind == PLD_V_TILE && b.kind == PLD_V_TILE) {
            pld_tile_t *dst = pld_tile_cow(&a), *src = pld_v_tile(&b);
            if (!dst)
                st = pld_op_oom(it, f, e);
            else if (n != dst->rank || src->rank != dst->rank)
                st = pld_rt_error(it, f, e->span, "%s: ranks differ", pld_op_name(e));
            else {
                /* pto.tinsert copies the whole source (not only its valid region) */
                pld_view_t vs, vd;
                pld_tile_kview(src, &vs, 0);
                pld_tile_kview(dst, &vd, 0);
                int64_t o = 0;
                for (int d = 0; d < dst->rank; d++) {
                    if (off[d] < 0 || vs.shape[d] > dst->shape[d] - off[d]) {
                        char ss[96], ds[96];
                        pld_shape_str(ss, sizeof ss, src->rank, src->shape);
                        pld_shape_str(ds, sizeof ds, dst->rank, dst->shape);
                        st = pld_rt_error(it, f, e->span, "%s: a %s source at offset %lld in dimension %d does not fit "
                                          "in the %s target", pld_op_name(e), ss, (long long)off[d], d, ds);
                        break;
                    }
                    o += off[d] * vd.strides[d];
                    vd.shape[d] = vs.shape[d];
                }
                if (st == PLD_OK)
                    st = assemble_valid(it, f, e, dst, src, off);
                if (st == PLD_OK) {
                    vd.data = (char *)vd.data + o * pld_dtype_bytes(dst->dt);
                    char err[ERRN];
                    st = pld_op_kcheck(it, f, e, pld_k_copy(&vd, &vs, err, sizeof err), err);
                }
                if (st == PLD_OK)
                    pld_tile_written_box(dst, off, vs.shape);
            }
        } else
            st = pld_rt_error(it, f, e->span, "%s: unsupported operands (%s into %s)", pld_op_name(e),
                              pld_vkind_name(b.kind), pld_vkind_name(a.kind));
    }
    pld_value_release(&b);
    if (st == PLD_OK)
        *out = a;
    else
        pld_value_release(&a);
    return st;
}

/* Copies the valid box of src (view vs over its whole shape, extents
 * valid[]) into the top-left of dst (view vd over its whole shape) after
 * filling dst with the pad of mode (in place when they share storage):
 * pld_k_fillpad. */
static pld_status_t pad_into(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_view_t *vs,
                             const int64_t *valid, const pld_view_t *vd, int mode)
{
    char err[ERRN];
    return pld_op_kcheck(it, f, e, pld_k_fillpad(vd, vs, valid, mode, err, sizeof err), err);
}

/* pl.tile.fillpad / fillpad_inplace / fillpad_expand, pl.tensor.fillpad /
 * fillpad_expand, and set_validshape of tiles and tensors. */
pld_status_t pld_exec_valid(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    pld_value_t a;
    pld_status_t st;
    if ((st = pld_op_eval(it, f, e, 0, &a)) != PLD_OK)
        return st;
    if (a.kind != PLD_V_TILE && a.kind != PLD_V_TENSOR) {
        pld_value_release(&a);
        return pld_op_need(it, f, e, 0, &a, PLD_V_TILE);
    }
    int op = e->op;
    if (op == PLD_OPID_TILE_SET_VALIDSHAPE || op == PLD_OPID_TENSOR_SET_VALIDSHAPE) {
        int64_t rc[2];
        if ((st = pld_op_iarg(it, f, e, 1, 0, &rc[0])) != PLD_OK || (st = pld_op_iarg(it, f, e, 2, 0, &rc[1])) != PLD_OK) {
            pld_value_release(&a);
            return st;
        }
        int64_t *shape, *valid;
        pld_value_t res;
        if (a.kind == PLD_V_TILE) {
            pld_tile_t *t = pld_tile_cow(&a);
            if (!t)
                return pld_op_oom(it, f, e);
            shape = t->shape, valid = t->valid, res = a;
            if (t->rank != 2) {
                pld_value_release(&a);
                return pld_rt_error(it, f, e->span, "%s: the tile must be 2-D", pld_op_name(e));
            }
        } else {
            pld_tensor_t *v = pld_tensor_copy_desc(pld_v_tensor(&a));
            pld_value_release(&a);
            if (!v)
                return pld_op_oom(it, f, e);
            res = pld_v_obj(&v->hdr, v->dt);
            shape = v->shape, valid = v->valid;
            if (v->rank != 2) {
                pld_value_release(&res);
                return pld_rt_error(it, f, e->span, "%s: the tensor must be 2-D", pld_op_name(e));
            }
        }
        for (int d = 0; d < 2; d++)
            valid[d] = rc[d] < 0 ? 0 : rc[d] > shape[d] ? shape[d] : rc[d];
        *out = res;
        return PLD_OK;
    }
    int expand = op == PLD_OPID_TILE_FILLPAD_EXPAND || op == PLD_OPID_TENSOR_FILLPAD_EXPAND;
    int mode = pld_check_pad_mode(pld_op_arg(e, expand ? 2 : 1));
    if (mode < 0) {
        pld_value_release(&a);
        return pld_rt_error(it, f, e->span, "%s: pad_value is not one of the three padding modes", pld_op_name(e));
    }
    int rank = a.kind == PLD_V_TILE ? pld_v_tile(&a)->rank : pld_v_tensor(&a)->rank;
    int64_t shape[PLD_MAX_RANK], valid[PLD_MAX_RANK];
    pld_view_t vs, vd;
    if (a.kind == PLD_V_TILE) {
        pld_tile_t *t = pld_v_tile(&a);
        memcpy(shape, t->shape, sizeof shape);
        memcpy(valid, t->valid, sizeof valid);
        pld_tile_kview(t, &vs, 0);
    } else {
        pld_tensor_t *t = pld_v_tensor(&a);
        memcpy(shape, t->shape, sizeof shape);
        memcpy(valid, t->valid, sizeof valid);
        pld_tensor_kview(t, &vs);
    }
    if (expand) {
        int n;
        int64_t ns[PLD_MAX_RANK];
        if ((st = pld_op_shape(it, f, e, 1, ns, &n)) != PLD_OK) {
            pld_value_release(&a);
            return st;
        }
        if (n != rank) {
            pld_value_release(&a);
            return pld_rt_error(it, f, e->span, "%s: shape has %d entries, the source rank %d", pld_op_name(e), n, rank);
        }
        for (int d = 0; d < rank; d++) {
            if (ns[d] < shape[d]) {
                pld_value_release(&a);
                return pld_rt_error(it, f, e->span, "%s: destination dimension %d (%lld) is smaller than the source's (%lld)",
                                    pld_op_name(e), d, (long long)ns[d], (long long)shape[d]);
            }
            shape[d] = ns[d];
        }
    }
    pld_value_t res;
    if (a.kind == PLD_V_TILE && op == PLD_OPID_TILE_FILLPAD_INPLACE) {
        pld_tile_t *t = pld_tile_cow(&a);
        if (!t)
            return pld_op_oom(it, f, e);
        pld_tile_written_all(t); /* --poison: the padding is written now */
        pld_tile_kview(t, &vs, 0);
        vd = vs;
        res = a;
        a = pld_v_none();
        memcpy(t->valid, t->shape, sizeof t->valid);
    } else if (a.kind == PLD_V_TILE) {
        pld_tile_t *o = pld_tile_new(pld_v_tile(&a)->dt, rank, shape, pld_v_tile(&a)->mem);
        if (!o) {
            pld_value_release(&a);
            return pld_op_oom(it, f, e);
        }
        pld_tile_kview(o, &vd, 0);
        res = pld_tile_value(o);
    } else {
        pld_tensor_t *o = pld_tensor_new(pld_v_tensor(&a)->dt, rank, shape, 0);
        if (!o) {
            pld_value_release(&a);
            return pld_op_oom(it, f, e);
        }
        pld_tensor_kview(o, &vd);
        res = pld_v_obj(&o->hdr, o->dt);
    }
    st = pad_into(it, f, e, &vs, valid, &vd, mode);
    pld_value_release(&a);
    if (st != PLD_OK) {
        pld_value_release(&res);
        return st;
    }
    *out = res;
    return PLD_OK;
}

/* pl.array.create. */
pld_status_t pld_exec_array_create(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    pld_status_t st;
    int64_t n;
    if ((st = pld_op_iarg(it, f, e, 0, 0, &n)) != PLD_OK)
        return st;
    if (n <= 0)
        return pld_rt_error(it, f, e->span, "pl.array.create: extent must be positive");
    if (!pld_kern_dtype_ok(pld_op_dtype(it, e, 1)))
        return pld_rt_error(it, f, e->span, "pl.array.create: pldrun has no %s arithmetic yet",
                            pld_dtype_name(pld_op_dtype(it, e, 1)));
    pld_array_t *arr = pld_array_new(pld_op_dtype(it, e, 1), n);
    if (!arr)
        return pld_op_oom(it, f, e);
    *out = pld_v_obj(&arr->hdr, arr->dt);
    return PLD_OK;
}

/* pl.array.get_element / pl.array.update_element. */
pld_status_t pld_exec_array_elem(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    pld_value_t a, b;
    pld_status_t st;
    int64_t k;
    if ((st = pld_op_need(it, f, e, 0, &a, PLD_V_ARRAY)) != PLD_OK)
        return st;
    if ((st = pld_op_iarg(it, f, e, 1, 0, &k)) != PLD_OK) {
        pld_value_release(&a);
        return st;
    }
    pld_array_t *arr = pld_v_array(&a);
    if (k < 0 || k >= arr->n) {
        pld_value_release(&a);
        return pld_rt_error(it, f, e->span, "array index %lld out of range [0, %lld)", (long long)k, (long long)arr->n);
    }
    if (e->op == PLD_OPID_ARRAY_GET) {
        *out = read_elem(arr->data, arr->dt, k);
        pld_value_release(&a);
        return PLD_OK;
    }
    if ((st = pld_op_eval(it, f, e, 2, &b)) != PLD_OK) {
        pld_value_release(&a);
        return st;
    }
    if (arr->hdr.refs > 1) {
        pld_array_t *c = pld_array_new(arr->dt, arr->n);
        if (!c) {
            pld_value_release(&a);
            return pld_op_oom(it, f, e);
        }
        memcpy(c->data, arr->data, (size_t)arr->n * (size_t)pld_dtype_bytes(arr->dt));
        pld_value_release(&a);
        a = pld_v_obj(&c->hdr, c->dt);
        arr = c;
    }
    write_elem(arr->data, arr->dt, k, &b);
    *out = a;
    return PLD_OK;
}

/* A handle argument i of kind k (the checker types them; a value of another
 * kind reaches here only through an untyped path). */
static pld_status_t need_handle(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int i, int k)
{
    pld_value_t v;
    pld_status_t st = pld_op_eval(it, f, e, i, &v);
    if (st != PLD_OK)
        return st;
    int ok = v.kind == PLD_V_HANDLE && v.u.i == k;
    pld_value_release(&v);
    return ok ? PLD_OK : pld_rt_error(it, f, e->span, "%s: argument %d is not the prefetch handle it needs",
                                      pld_op_name(e), i);
}

pld_status_t pld_exec_token(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    pld_status_t st = PLD_OK;
    pld_value_t src;
    int k = PLD_HANDLE_PREFETCH_CTX;
    switch (e->op) {
    case PLD_OPID_TILE_ALLOC: case PLD_OPID_TENSOR_ALLOC: /* an identity token: no window buffer (index -1) */
        *out = pld_v_none();
        out->kind = PLD_V_PTR;
        out->u.i = -1;
        return PLD_OK;
    case PLD_OPID_PREFETCH_ASYNC: /* the source must exist; its data is untouched */
        if ((st = pld_op_need(it, f, e, 0, &src, PLD_V_TENSOR)) != PLD_OK)
            return st;
        pld_value_release(&src);
        st = need_handle(it, f, e, 1, PLD_HANDLE_PREFETCH_CTX);
        k = PLD_HANDLE_ASYNC_EVENT;
        break;
    case PLD_OPID_PREFETCH_SESSION:
        st = need_handle(it, f, e, 0, PLD_HANDLE_PREFETCH_CTX);
        k = PLD_HANDLE_ASYNC_SESSION;
        break;
    case PLD_OPID_PREFETCH_WAIT:
        if ((st = need_handle(it, f, e, 0, PLD_HANDLE_ASYNC_EVENT)) != PLD_OK ||
            (st = need_handle(it, f, e, 1, PLD_HANDLE_ASYNC_SESSION)) != PLD_OK)
            return st;
        *out = pld_v_int(PLD_DT_BOOL, 1);
        return PLD_OK;
    default:
        break;
    }
    if (st != PLD_OK)
        return st;
    *out = pld_v_none();
    out->kind = PLD_V_HANDLE;
    out->u.i = k;
    return PLD_OK;
}
