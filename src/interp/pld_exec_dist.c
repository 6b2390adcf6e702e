/* pld_exec_dist.c - the pld.* ops on windows and signals: world size, comm
 * contexts, window buffers and views, remote_load / remote_store, put / get,
 * notify, wait and defer_wait. Operands are checked here; the transfers,
 * signal waits (under the hang watchdog) and domains are pld_dist.c's, and
 * defer_wait registers with the running task (pld_task.c). Collectives are
 * pld_exec_coll.c's. */
#include "pld_interp_int.h"
#include "pld_mem.h"

#include <stdio.h>
#include <string.h>

static pld_status_t peer_of(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int i, domain_t *d, int *peer)
{
    int64_t p;
    pld_status_t st = pld_op_i64(it, f, e, i, &p);
    if (st != PLD_OK)
        return st;
    if (p < 0 || p >= d->n)
        return pld_rt_error(it, f, pld_op_arg(e, i)->span, "%s: peer %lld is outside the comm domain [0, %d)", pld_op_name(e),
                            (long long)p, d->n);
    *peer = (int)p;
    return PLD_OK;
}

/* Text "sig[1, 0]" for messages. */
static void cell_text(const pld_expr_t *sig, const int64_t *idx, int n, char *buf, size_t bn)
{
    pld_buf_t b;
    pld_buf_init(&b);
    pld_ast_print_expr(sig, &b);
    pld_buf_putc(&b, '[');
    for (int i = 0; i < n; i++)
        pld_buf_printf(&b, "%s%lld", i ? ", " : "", (long long)idx[i]);
    pld_buf_putc(&b, ']');
    snprintf(buf, bn, "%s", pld_buf_str(&b));
    pld_buf_fini(&b);
}

/* A signal cell of a window-bound INT32 tensor: domain and displacement, and
 * what it takes to name it in a message later (cell_text). */
typedef struct cell {
    domain_t *d;
    size_t disp;
    const pld_expr_t *sig;
    int64_t idx[PLD_MAX_RANK];
    int n;
} cell_t;

static pld_status_t cell(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int ti, int oi, cell_t *c)
{
    pld_value_t tv;
    pld_status_t st = pld_op_need(it, f, e, ti, &tv, PLD_V_TENSOR);
    if (st != PLD_OK)
        return st;
    pld_tensor_t *t = pld_v_tensor(&tv);
    int64_t *idx = c->idx;
    int n;
    c->sig = pld_op_arg(e, ti);
    if ((st = pld_op_ilist(it, f, e, oi, idx, &n)) != PLD_OK)
        goto done;
    c->n = n;
    if (t->dt != PLD_DT_INT32) {
        st = pld_rt_error(it, f, e->span, "%s: the signal must be INT32, found %s", pld_op_name(e), pld_dtype_name(t->dt));
        goto done;
    }
    if (n != t->rank) {
        st = pld_rt_error(it, f, e->span, "%s: %d offsets for a rank-%d signal", pld_op_name(e), n, t->rank);
        goto done;
    }
    for (int k = 0; k < n; k++)
        if (idx[k] < 0 || idx[k] >= t->shape[k]) {
            st = pld_rt_error(it, f, e->span, "%s: cell index %lld is outside dimension %d (size %lld)", pld_op_name(e),
                              (long long)idx[k], k, (long long)t->shape[k]);
            goto done;
        }
    if (!(c->d = pld_dist_domain_of(it, f, e, t))) {
        st = PLD_E_RUNTIME;
        goto done;
    }
    c->disp = pld_dist_disp(c->d, t, idx);
done:
    pld_value_release(&tv);
    return st;
}

/* "wait on sig[1, 0] (Ge 1) in f" for pld.system.wait (formatted lazily). */
typedef struct wait_desc {
    const cell_t *c;
    int cmp;
    int64_t expected;
    const char *fn;
} wait_desc_t;

static void describe_wait(const void *ctx, char *buf, size_t n)
{
    const wait_desc_t *w = ctx;
    char text[128];
    cell_text(w->c->sig, w->c->idx, w->c->n, text, sizeof text);
    snprintf(buf, n, "wait on %s (%s %lld) in %s", text, w->cmp == 0 ? "Eq" : "Ge", (long long)w->expected, w->fn);
}

/* Geometry shared by remote_load / remote_store / put / get: the region of
 * window tensor t at offsets with extents (rank of t; a lower-rank extent
 * aligns with the trailing dims). */
static pld_status_t region_of(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_tensor_t *t,
                              const int64_t *off, int noff, const int64_t *ext_in, int r, int64_t *ext)
{
    if (noff != t->rank)
        return pld_rt_error(it, f, e->span, "%s: %d offsets for a rank-%d tensor", pld_op_name(e), noff, t->rank);
    if (r > t->rank)
        return pld_rt_error(it, f, e->span, "%s: the data has rank %d, above the window tensor's %d", pld_op_name(e), r,
                            t->rank);
    for (int k = 0; k < t->rank; k++) {
        int j = k - (t->rank - r);
        ext[k] = j >= 0 ? ext_in[j] : 1;
        if (off[k] < 0)
            return pld_rt_error(it, f, e->span, "%s: offset %lld in dimension %d is negative", pld_op_name(e),
                                (long long)off[k], k);
        if (ext[k] < 0)
            return pld_rt_error(it, f, e->span, "%s: extent %lld in dimension %d is negative", pld_op_name(e),
                                (long long)ext[k], k);
        int64_t end;
        if (pld_size_add(off[k], ext[k], &end) != PLD_SIZE_OK || end > t->shape[k]) {
            return pld_rt_error(it, f, e->span,
                                "%s out of bounds: offset %lld + extent %lld > size %lld in dimension %d of the window "
                                "view",
                                pld_op_name(e), (long long)off[k], (long long)ext[k], (long long)t->shape[k], k);
        }
    }
    return PLD_OK;
}

static pld_status_t op_remote_load(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    pld_value_t tv;
    pld_status_t st = pld_op_need(it, f, e, 0, &tv, PLD_V_TENSOR);
    if (st != PLD_OK)
        return st;
    pld_tensor_t *t = pld_v_tensor(&tv);
    domain_t *d = pld_dist_domain_of(it, f, e, t);
    int peer = 0, noff, nshp, nval;
    int64_t off[PLD_MAX_RANK], shp[PLD_MAX_RANK], val[PLD_MAX_RANK], ext[PLD_MAX_RANK];
    if (!d) {
        st = PLD_E_RUNTIME;
        goto done;
    }
    if ((st = peer_of(it, f, e, 1, d, &peer)) != PLD_OK || (st = pld_op_ilist(it, f, e, 2, off, &noff)) != PLD_OK ||
        (st = pld_op_ilist(it, f, e, 3, shp, &nshp)) != PLD_OK || (st = pld_op_ilist(it, f, e, 4, val, &nval)) != PLD_OK)
        goto done;
    if (nval < 0) {
        memcpy(val, shp, sizeof val);
        nval = nshp;
    }
    if (nval != nshp) {
        st = pld_rt_error(it, f, e->span, "%s: valid_shape and shape differ in rank", pld_op_name(e));
        goto done;
    }
    /* valid extent: min(valid_shape, clamp(valid - offset, 0, shape)) */
    for (int j = 0; j < nshp; j++) {
        int k = t->rank - nshp + j;
        if (k < 0 || k >= t->rank)
            continue;
        int64_t room = t->valid[k] - off[k];
        if (room < 0)
            room = 0;
        if (val[j] > room)
            val[j] = room;
        if (val[j] > shp[j])
            val[j] = shp[j];
        if (val[j] < 0)
            val[j] = 0;
    }
    if ((st = region_of(it, f, e, t, off, noff, val, nshp, ext)) != PLD_OK)
        goto done;
    int64_t n;
    if (pld_size_numel(t->rank, ext, &n) != PLD_SIZE_OK) { /* within the view's extent: cannot fail */
        st = pld_rt_error(it, f, e->span, "%s: the region's element count overflows", pld_op_name(e));
        goto done;
    }
    pld_tile_t *tile = pld_tile_new(t->dt, nshp, shp, PLD_MEM_VEC);
    if (!tile) {
        st = pld_rt_error(it, f, e->span, "out of memory");
        goto done;
    }
    memcpy(tile->valid, val, (size_t)nshp * sizeof *val);
    void *tmp = pld_mem_alloc((size_t)(n > 0 ? n : 1) * (size_t)pld_dtype_bytes(t->dt));
    if (!tmp) {
        pld_value_t tt = pld_v_obj(&tile->hdr, tile->dt);
        pld_value_release(&tt);
        st = pld_rt_error(it, f, e->span, "out of memory");
        goto done;
    }
    st = pld_dist_region(it, f, e, d, peer, t, off, ext, tmp, 0);
    if (st == PLD_OK) {
        pld_view_t src, dst;
        pld_view_packed(&src, tmp, t->dt, nshp, val);
        pld_tile_kview(tile, &dst, 1);
        char err[256];
        if (pld_k_copy(&dst, &src, err, sizeof err) != PLD_OK)
            st = pld_rt_error(it, f, e->span, "%s: %s", pld_op_name(e), err);
    }
    pld_mem_free(tmp);
    pld_value_t tt = pld_v_obj(&tile->hdr, tile->dt);
    if (st == PLD_OK)
        *out = tt;
    else
        pld_value_release(&tt);
done:
    pld_value_release(&tv);
    return st;
}

/* Packs the local source (tile valid region or tensor) into a fresh buffer. */
static void *pack_source(const pld_value_t *src, int *rank, int64_t *ext, pld_dtype_t *dt)
{
    pld_view_t v, pv;
    if (src->kind == PLD_V_TILE) {
        pld_tile_t *t = pld_v_tile(src);
        pld_tile_kview(t, &v, 1);
    } else {
        pld_tensor_t *t = pld_v_tensor(src);
        pld_tensor_kview(t, &v);
    }
    *rank = v.rank;
    *dt = v.dt;
    memcpy(ext, v.shape, (size_t)v.rank * sizeof *ext);
    int64_t n = pld_view_numel(&v);
    void *buf = pld_mem_alloc((size_t)(n > 0 ? n : 1) * (size_t)pld_dtype_bytes(v.dt));
    if (!buf)
        return NULL;
    pld_view_packed(&pv, buf, v.dt, v.rank, v.shape);
    char err[64];
    pld_k_copy(&pv, &v, err, sizeof err);
    return buf;
}

static pld_status_t op_remote_store(pld_interp_t *it, frame_t *f, const pld_expr_t *e)
{
    pld_value_t sv, tv;
    pld_status_t st = pld_op_value(it, f, e, 0, &sv);
    if (st != PLD_OK)
        return st;
    if (it->poison && sv.kind == PLD_V_TILE)
        pld_poison_tile_read(it, e, 0, pld_v_tile(&sv));
    if (sv.kind != PLD_V_TILE && sv.kind != PLD_V_TENSOR) {
        pld_vkind_t k = sv.kind;
        pld_value_release(&sv);
        return pld_rt_error(it, f, e->span, "%s: the source must be a tile or a tensor, found a %s", pld_op_name(e),
                            pld_vkind_name(k));
    }
    if ((st = pld_op_need(it, f, e, 1, &tv, PLD_V_TENSOR)) != PLD_OK) {
        pld_value_release(&sv);
        return st;
    }
    pld_tensor_t *t = pld_v_tensor(&tv);
    domain_t *d = pld_dist_domain_of(it, f, e, t);
    int peer = 0, noff, srank;
    int64_t off[PLD_MAX_RANK], ext[PLD_MAX_RANK], sext[PLD_MAX_RANK], atomic = 0;
    pld_dtype_t sdt;
    void *packed = NULL;
    if (!d) {
        st = PLD_E_RUNTIME;
        goto done;
    }
    if ((st = peer_of(it, f, e, 2, d, &peer)) != PLD_OK || (st = pld_op_ilist(it, f, e, 3, off, &noff)) != PLD_OK ||
        (st = pld_op_iarg(it, f, e, 4, 0, &atomic)) != PLD_OK)
        goto done;
    packed = pack_source(&sv, &srank, sext, &sdt);
    if (!packed) {
        st = pld_rt_error(it, f, e->span, "out of memory");
        goto done;
    }
    if (sdt != t->dt) {
        st = pld_rt_error(it, f, e->span, "%s: source dtype %s differs from the target's %s", pld_op_name(e),
                          pld_dtype_name(sdt), pld_dtype_name(t->dt));
        goto done;
    }
    if ((st = region_of(it, f, e, t, off, noff, sext, srank, ext)) != PLD_OK)
        goto done;
    st = pld_dist_region(it, f, e, d, peer, t, off, ext, packed, atomic ? 2 : 1);
done:
    pld_mem_free(packed);
    pld_value_release(&sv);
    pld_value_release(&tv);
    return st;
}

/* The staging tiles of pld.tile.put/get (parameters 3 and 4): 2-D tiles of
 * the transfer's dtype, of one shape, no larger than the flattened transfer
 * [prod(leading dims), last dim] (the checker's rule, for dynamic extents).
 * The data moves as pld.tensor.put/get moves it: a smaller stage only splits
 * the transfer into chunks on the hardware, which changes no element. */
static pld_status_t check_stages(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_dtype_t dt, int rank,
                                 const int64_t *shp)
{
    int64_t rows = 1, shape0[2] = {0, 0};
    for (int k = 0; k + 1 < rank; k++)
        rows *= shp[k];
    for (int s = 0; s < 2; s++) {
        if (s == 1 && !pld_op_arg(e, 4))
            break;
        pld_value_t v;
        pld_status_t st = pld_op_need(it, f, e, 3 + s, &v, PLD_V_TILE);
        if (st != PLD_OK)
            return st;
        const pld_tile_t *t = pld_v_tile(&v);
        int ok = t->dt == dt && t->rank == 2 && (s == 0 || (t->shape[0] == shape0[0] && t->shape[1] == shape0[1])) &&
                 t->shape[0] <= rows && t->shape[1] <= shp[rank - 1];
        char sh[96];
        pld_shape_str(sh, sizeof sh, t->rank, t->shape);
        if (s == 0)
            memcpy(shape0, t->shape, sizeof shape0);
        pld_dtype_t tdt = t->dt;
        pld_value_release(&v);
        if (!ok)
            return pld_rt_error(it, f, e->span, "%s: %s %s %s must be a 2-D %s tile (the stages of one shape) no larger "
                                "than the flattened transfer [%lld, %lld]", pld_op_name(e), s ? "stage2" : "stage", sh,
                                pld_dtype_name(tdt), pld_dtype_name(dt), (long long)rows, (long long)shp[rank - 1]);
    }
    return PLD_OK;
}

/* pld.tensor.put/get and pld.tile.put/get (stage tiles at parameters 3, 4;
 * the region after them). */
static pld_status_t op_put_get(pld_interp_t *it, frame_t *f, const pld_expr_t *e)
{
    const int is_put = e->op == PLD_OPID_PLD_PUT || e->op == PLD_OPID_PLD_TILE_PUT;
    const int tile = e->op == PLD_OPID_PLD_TILE_PUT || e->op == PLD_OPID_PLD_TILE_GET, r0 = tile ? 5 : 3;
    pld_value_t dv, sv;
    pld_status_t st = pld_op_need(it, f, e, 0, &dv, PLD_V_TENSOR);
    if (st != PLD_OK)
        return st;
    if ((st = pld_op_need(it, f, e, 2, &sv, PLD_V_TENSOR)) != PLD_OK) {
        pld_value_release(&dv);
        return st;
    }
    pld_tensor_t *dst = pld_v_tensor(&dv), *src = pld_v_tensor(&sv);
    pld_tensor_t *win = is_put ? dst : src, *loc = is_put ? src : dst;
    domain_t *d = pld_dist_domain_of(it, f, e, win);
    int peer = 0, nd, ns, nshp;
    int64_t doff[PLD_MAX_RANK], soff[PLD_MAX_RANK], shp[PLD_MAX_RANK], atomic = 0;
    int64_t wext[PLD_MAX_RANK], lext[PLD_MAX_RANK];
    void *tmp = NULL;
    if (!d) {
        st = PLD_E_RUNTIME;
        goto done;
    }
    if ((st = peer_of(it, f, e, 1, d, &peer)) != PLD_OK || (st = pld_op_ilist(it, f, e, r0, doff, &nd)) != PLD_OK ||
        (st = pld_op_ilist(it, f, e, r0 + 1, soff, &ns)) != PLD_OK ||
        (st = pld_op_ilist(it, f, e, r0 + 2, shp, &nshp)) != PLD_OK ||
        (is_put && (st = pld_op_iarg(it, f, e, r0 + 3, 0, &atomic)) != PLD_OK))
        goto done;
    if (src->dt != dst->dt) {
        st = pld_rt_error(it, f, e->span, "%s: dst and src dtypes differ (%s and %s)", pld_op_name(e), pld_dtype_name(dst->dt),
                          pld_dtype_name(src->dt));
        goto done;
    }
    if (nshp < 0) { /* full slice */
        if (src->rank != dst->rank) {
            st = pld_rt_error(it, f, e->span, "%s: full-slice transfer between ranks %d and %d", pld_op_name(e), src->rank,
                              dst->rank);
            goto done;
        }
        for (int k = 0; k < src->rank; k++)
            if (src->shape[k] != dst->shape[k]) {
                st = pld_rt_error(it, f, e->span, "%s: full-slice dst and src shapes differ in dimension %d (%lld vs %lld)",
                                  pld_op_name(e), k, (long long)dst->shape[k], (long long)src->shape[k]);
                goto done;
            }
        nshp = src->rank;
        memcpy(shp, src->shape, sizeof shp);
        memset(doff, 0, sizeof doff);
        memset(soff, 0, sizeof soff);
        nd = ns = src->rank;
    }
    if (tile && nshp > 0 && (st = check_stages(it, f, e, dst->dt, nshp, shp)) != PLD_OK)
        goto done;
    const int64_t *woff = is_put ? doff : soff, *loff = is_put ? soff : doff;
    int nw = is_put ? nd : ns, nl = is_put ? ns : nd;
    if ((st = region_of(it, f, e, win, woff, nw, shp, nshp, wext)) != PLD_OK ||
        (st = region_of(it, f, e, loc, loff, nl, shp, nshp, lext)) != PLD_OK)
        goto done;
    int64_t n;
    if (pld_size_numel(nshp, shp, &n) != PLD_SIZE_OK) {
        st = pld_rt_error(it, f, e->span, "%s: the element count of the transfer shape overflows", pld_op_name(e));
        goto done;
    }
    if (it->poison && is_put)
        pld_poison_check_local(it, e, loc, loff, lext);
    if (it->race && is_put)
        pld_race_local(it, f, e, loc, loff, lext, PLD_HB_READ);
    /* the local region */
    pld_view_t lv, pv;
    pld_tensor_kview(loc, &lv);
    int64_t o = 0;
    for (int k = 0; k < loc->rank; k++)
        o += loff[k] * loc->strides[k];
    lv.data = (char *)lv.data + o * pld_dtype_bytes(loc->dt);
    memcpy(lv.shape, lext, sizeof lv.shape);
    if (pld_view_is_packed(&lv) && (loc->winbuf < 0 || peer != d->me)) {
        /* contiguous and not the target window itself: move it in place */
        st = pld_dist_region(it, f, e, d, peer, win, woff, wext, lv.data, is_put ? (atomic ? 2 : 1) : 0);
        if (st == PLD_OK && !is_put)
            pld_tensor_mark_written(loc, loff, lext);
        if (st == PLD_OK && !is_put && it->race)
            pld_race_local(it, f, e, loc, loff, lext, PLD_HB_WRITE);
        goto done;
    }
    /* else through a packed copy */
    tmp = pld_mem_alloc((size_t)(n > 0 ? n : 1) * (size_t)pld_dtype_bytes(src->dt));
    if (!tmp) {
        st = pld_rt_error(it, f, e->span, "out of memory");
        goto done;
    }
    pld_view_packed(&pv, tmp, loc->dt, loc->rank, lext);
    char err[256];
    if (is_put) {
        pld_k_copy(&pv, &lv, err, sizeof err);
        st = pld_dist_region(it, f, e, d, peer, win, woff, wext, tmp, atomic ? 2 : 1);
    } else {
        st = pld_dist_region(it, f, e, d, peer, win, woff, wext, tmp, 0);
        if (st == PLD_OK) {
            pld_k_copy(&lv, &pv, err, sizeof err);
            pld_tensor_mark_written(loc, loff, lext);
            if (it->race)
                pld_race_local(it, f, e, loc, loff, lext, PLD_HB_WRITE);
        }
    }
done:
    pld_mem_free(tmp);
    pld_value_release(&dv);
    pld_value_release(&sv);
    return st;
}

static pld_status_t op_alloc(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    int b = pld_dist_buf_of(it, e); /* collected by pld_dist_setup */
    if (b < 0)
        return pld_rt_error(it, f, e->span, "pld.tensor.alloc_window_buffer must be assigned to a name in the HOST "
                                            "orchestrator that runs as the entry");
    out->kind = PLD_V_PTR;
    out->dt = PLD_DT_NONE;
    out->u.i = b;
    return PLD_OK;
}

static pld_status_t op_window(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    pld_value_t b;
    pld_status_t st = pld_op_value(it, f, e, 0, &b);
    if (st != PLD_OK)
        return st;
    if (b.kind != PLD_V_PTR || b.u.i < 0 || b.u.i >= it->nwins)
        return pld_rt_error(it, f, e->span, "pld.tensor.window needs a window buffer (pld.alloc_window_buffer)");
    winbuf_t *w = &it->wins[b.u.i];
    int64_t shape[PLD_MAX_RANK];
    int n;
    if ((st = pld_op_ilist(it, f, e, 1, shape, &n)) != PLD_OK)
        return st;
    pld_dtype_t dt = pld_expr_dtype(it, pld_op_arg(e, 2));
    int64_t need;
    for (int k = 0; k < n; k++)
        if (shape[k] < 0)
            return pld_rt_error(it, f, e->span, "pld.tensor.window: dimension %d is negative (%lld)", k,
                                (long long)shape[k]);
    if (pld_size_bytes(n, shape, pld_dtype_bytes(dt), INT64_MAX, &need) != PLD_SIZE_OK) {
        char sh[160];
        pld_shape_str(sh, sizeof sh, n, shape);
        return pld_rt_error(it, f, e->span, "the size of window view %s of %s overflows (buffer '%s' has %zu bytes)", sh,
                            pld_dtype_name(dt), w->name, w->bytes);
    }
    if ((size_t)need > w->bytes)
        return pld_rt_error(it, f, e->span, "window view of %lld bytes does not fit buffer '%s' of %zu bytes",
                            (long long)need, w->name, w->bytes);
    if (it->doms[w->dom].me < 0) {
        out->kind = PLD_V_UNAVAIL; /* this rank is not in the buffer's comm domain */
        out->u.i = it->doms[w->dom].members[0];
        return PLD_OK;
    }
    pld_tensor_t *t = pld_tensor_view(w->buf, dt, n, shape, 0);
    if (!t)
        return pld_rt_error(it, f, e->span, "out of memory");
    t->is_dist = 1;
    t->winbuf = (int)b.u.i;
    *out = pld_v_obj(&t->hdr, dt);
    return PLD_OK;
}

pld_status_t pld_exec_dist(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    pld_status_t st;
    switch (e->op) {
    case PLD_OPID_PLD_WORLD_SIZE:
        *out = pld_v_int(PLD_DT_INT64, it->comm.nranks);
        return PLD_OK;
    case PLD_OPID_PLD_GET_COMM_CTX: {
        pld_value_t tv;
        if ((st = pld_op_need(it, f, e, 0, &tv, PLD_V_TENSOR)) != PLD_OK)
            return st;
        domain_t *d = pld_dist_domain_of(it, f, e, pld_v_tensor(&tv));
        pld_value_release(&tv);
        if (!d)
            return PLD_E_RUNTIME;
        out->kind = PLD_V_CTX;
        out->dt = PLD_DT_NONE;
        out->u.i = d - it->doms;
        return PLD_OK;
    }
    case PLD_OPID_PLD_RANK:
    case PLD_OPID_PLD_NRANKS: {
        pld_value_t c;
        if ((st = pld_op_value(it, f, e, 0, &c)) != PLD_OK)
            return st;
        if (c.kind != PLD_V_CTX || c.u.i < 0 || c.u.i >= it->ndoms)
            return pld_rt_error(it, f, e->span, "%s needs a CommCtx (pld.get_comm_ctx)", pld_op_name(e));
        domain_t *d = &it->doms[c.u.i];
        *out = pld_v_int(PLD_DT_INT32, e->op == PLD_OPID_PLD_RANK ? d->me : d->n);
        return PLD_OK;
    }
    case PLD_OPID_PLD_ALLOC_WINDOW_BUFFER:
        return op_alloc(it, f, e, out);
    case PLD_OPID_PLD_WINDOW:
        return op_window(it, f, e, out);
    case PLD_OPID_PLD_REMOTE_LOAD:
        return op_remote_load(it, f, e, out);
    case PLD_OPID_PLD_TILE_REMOTE_STORE:
    case PLD_OPID_PLD_TENSOR_REMOTE_STORE:
        return op_remote_store(it, f, e);
    case PLD_OPID_PLD_PUT:
    case PLD_OPID_PLD_GET:
    case PLD_OPID_PLD_TILE_PUT:
    case PLD_OPID_PLD_TILE_GET:
        return op_put_get(it, f, e);
    case PLD_OPID_PLD_NOTIFY: {
        cell_t c;
        int peer = 0;
        int64_t v = 0, op = 0;
        if ((st = cell(it, f, e, 0, 2, &c)) != PLD_OK || (st = peer_of(it, f, e, 1, c.d, &peer)) != PLD_OK ||
            (st = pld_op_iarg(it, f, e, 3, 0, &v)) != PLD_OK || (st = pld_op_iarg(it, f, e, 4, 0, &op)) != PLD_OK)
            return st;
        return pld_dist_notify(it, f, e, c.d, peer, c.disp, (int32_t)v, op == 1);
    }
    case PLD_OPID_PLD_WAIT:
    case PLD_OPID_PLD_DEFER_WAIT: {
        cell_t c;
        int64_t v = 0, cmp = 1;
        if ((st = cell(it, f, e, 0, 1, &c)) != PLD_OK || (st = pld_op_iarg(it, f, e, 2, 0, &v)) != PLD_OK ||
            (st = pld_op_iarg(it, f, e, 3, 1, &cmp)) != PLD_OK)
            return st;
        /* defer_wait: registered with the running task, which completes when
         * the condition holds (pld_task.c); the kernel goes on at once */
        if (e->op == PLD_OPID_PLD_DEFER_WAIT) {
            char text[128];
            cell_text(c.sig, c.idx, c.n, text, sizeof text);
            return pld_task_defer(it, f, e, (int)(c.d - it->doms), c.disp, v, text);
        }
        wait_desc_t wd = {&c, (int)cmp, v, f->fn ? f->fn->name : "?"};
        return pld_dist_wait_fn(it, f, e, c.d, c.disp, (int)cmp, (int32_t)v, describe_wait, &wd);
    }
    default:
        return pld_rt_error(it, f, e->span, "%s cannot be executed here", pld_op_name(e));
    }
}

