/* pld_value.c - runtime values: scalars, buffers, tensors, tiles, tuples, arrays. */
#include "pld_value_int.h"
#include "pld_mem.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ scalars */

static int64_t wrap_int(pld_dtype_t dt, int64_t v)
{
    uint64_t u = (uint64_t)v;
    switch (dt) {
    case PLD_DT_BOOL: return v != 0;
    case PLD_DT_INT8: return (int64_t)(int8_t)(uint8_t)u;
    case PLD_DT_INT16: return (int64_t)(int16_t)(uint16_t)u;
    case PLD_DT_INT32: return (int64_t)(int32_t)(uint32_t)u;
    case PLD_DT_UINT8: return (int64_t)(uint8_t)u;
    case PLD_DT_UINT16: return (int64_t)(uint16_t)u;
    case PLD_DT_UINT32: return (int64_t)(uint32_t)u;
    default: return v;
    }
}

pld_value_t pld_v_int(pld_dtype_t dt, int64_t v)
{
    pld_value_t r;
    r.kind = PLD_V_INT;
    r.dt = dt;
    r.u.i = wrap_int(dt, v);
    return r;
}

/* Rounds v to the storage type once (no double rounding through float). */
static double round_float(pld_dtype_t dt, double v)
{
    if (dt != PLD_DT_FP16 && dt != PLD_DT_BF16 && dt != PLD_DT_FP32)
        return v;
    unsigned char cell[8];
    pld_elem_set_f(cell, dt, 0, v);
    return pld_elem_get_f(cell, dt, 0);
}

pld_value_t pld_v_float(pld_dtype_t dt, double v)
{
    pld_value_t r;
    r.kind = PLD_V_FLOAT;
    r.dt = dt;
    r.u.f = round_float(dt, v);
    return r;
}

pld_value_t pld_v_none(void)
{
    pld_value_t r;
    memset(&r, 0, sizeof r);
    return r;
}

int pld_v_is_scalar(const pld_value_t *v)
{
    return v->kind == PLD_V_INT || v->kind == PLD_V_FLOAT;
}

double pld_v_as_f(const pld_value_t *v)
{
    return v->kind == PLD_V_FLOAT ? v->u.f : (double)v->u.i;
}

int64_t pld_v_as_i(const pld_value_t *v)
{
    if (v->kind != PLD_V_FLOAT)
        return v->u.i;
    double f = v->u.f;
    if (isnan(f))
        return 0;
    if (f >= 9.2233720368547758e18)
        return INT64_MAX;
    if (f <= -9.2233720368547758e18)
        return INT64_MIN;
    return (int64_t)f;
}

pld_value_t pld_v_convert(const pld_value_t *v, pld_dtype_t dt)
{
    if (pld_dtype_is_float(dt))
        return pld_v_float(dt, pld_v_as_f(v));
    return pld_v_int(dt, pld_v_as_i(v));
}

/* ------------------------------------------------------------ references */

static void obj_free(pld_obj_t *o)
{
    switch (o->kind) {
    case PLD_O_TENSOR:
        pld_buffer_release(((pld_tensor_t *)o)->buf);
        break;
    case PLD_O_TILE: {
        pld_tile_t *w = ((pld_tile_t *)o)->win_of;
        pld_mem_free(((pld_tile_t *)o)->data);
        pld_mem_free(((pld_tile_t *)o)->unw);
        if (w && --w->hdr.refs == 0)
            obj_free(&w->hdr);
        break;
    }
    case PLD_O_TUPLE: {
        pld_tuple_t *t = (pld_tuple_t *)o;
        for (int i = 0; i < t->n; i++)
            pld_value_release(&t->items[i]);
        break;
    }
    case PLD_O_ARRAY:
        pld_mem_free(((pld_array_t *)o)->data);
        break;
    }
    pld_mem_free(o);
}

static int has_obj(const pld_value_t *v)
{
    return (v->kind == PLD_V_TENSOR || v->kind == PLD_V_TILE || v->kind == PLD_V_TUPLE || v->kind == PLD_V_ARRAY) &&
           v->u.obj;
}

void pld_value_retain(const pld_value_t *v)
{
    if (has_obj(v))
        v->u.obj->refs++;
}

void pld_value_release(pld_value_t *v)
{
    if (has_obj(v) && --v->u.obj->refs == 0)
        obj_free(v->u.obj);
    memset(v, 0, sizeof *v);
}

void pld_value_set(pld_value_t *dst, const pld_value_t *src)
{
    pld_value_t tmp = *src;
    pld_value_retain(&tmp);
    pld_value_release(dst);
    *dst = tmp;
}

pld_value_t pld_v_obj(pld_obj_t *o, pld_dtype_t dt)
{
    pld_value_t v;
    memset(&v, 0, sizeof v);
    if (!o)
        return v;
    v.u.obj = o;
    v.dt = dt;
    switch (o->kind) {
    case PLD_O_TENSOR: v.kind = PLD_V_TENSOR; break;
    case PLD_O_TILE: v.kind = PLD_V_TILE; break;
    case PLD_O_TUPLE: v.kind = PLD_V_TUPLE; break;
    case PLD_O_ARRAY: v.kind = PLD_V_ARRAY; break;
    }
    return v;
}

/* ------------------------------------------------------------ objects */

#define PLD_BUFFER_PAGE_ALIGN_MIN ((size_t)64 * 1024)

pld_buffer_t *pld_buffer_new(size_t bytes, int zero)
{
    pld_buffer_t *b = pld_mem_calloc(1, sizeof *b);
    if (!b)
        return NULL;
    /* large buffers start on a page: bulk copies to and from windows (also
     * page-aligned) then run at full memmove speed (docs/benchmarks-pldrun.md) */
    if (bytes >= PLD_BUFFER_PAGE_ALIGN_MIN)
        b->data = pld_mem_alloc_aligned(4096, bytes, zero);
    else
        b->data = zero ? pld_mem_calloc(1, bytes ? bytes : 1) : pld_mem_alloc(bytes ? bytes : 1);
    if (!b->data) {
        pld_mem_free(b);
        return NULL;
    }
    b->refs = 1;
    b->bytes = bytes;
    return b;
}

pld_buffer_t *pld_buffer_wrap(void *data, size_t bytes)
{
    pld_buffer_t *b = pld_mem_calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->refs = 1;
    b->bytes = bytes;
    b->data = data;
    b->external = 1;
    return b;
}

void pld_buffer_release(pld_buffer_t *b)
{
    if (!b || --b->refs > 0)
        return;
    if (!b->external)
        pld_mem_free(b->data);
    pld_mem_free(b->written);
    pld_mem_free(b);
}

int pld_buffer_track(pld_buffer_t *b, pld_dtype_t dt, int64_t n)
{
    if (b->written)
        return 1;
    b->written = pld_mem_calloc((size_t)(n + 7) / 8, 1);
    if (!b->written)
        return 0;
    b->track_dt = dt;
    b->track_n = n;
    return 1;
}

static void packed_strides(int rank, const int64_t *shape, int64_t *strides)
{
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= shape[i] > 0 ? shape[i] : 1;
    }
}

/* Element count, or -1 when it overflows, a dim is negative or the bytes
 * exceed PLD_MAX_BYTES (pld_size.h). */
static int64_t numel_checked(int rank, const int64_t *shape, pld_dtype_t dt)
{
    int64_t n, bytes;
    if (pld_size_bytes(rank, shape, pld_dtype_bytes(dt), PLD_MAX_BYTES, &bytes) != PLD_SIZE_OK ||
        pld_size_numel(rank, shape, &n) != PLD_SIZE_OK)
        return -1;
    return n;
}

pld_tensor_t *pld_tensor_view(pld_buffer_t *buf, pld_dtype_t dt, int rank, const int64_t *shape, int64_t offset)
{
    pld_tensor_t *t = pld_mem_calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->hdr.refs = 1;
    t->hdr.kind = PLD_O_TENSOR;
    t->buf = buf;
    buf->refs++;
    t->dt = dt;
    t->rank = rank;
    t->offset = offset;
    t->winbuf = -1;
    memcpy(t->shape, shape, (size_t)rank * sizeof *shape);
    memcpy(t->valid, shape, (size_t)rank * sizeof *shape);
    packed_strides(rank, shape, t->strides);
    return t;
}

pld_tensor_t *pld_tensor_new(pld_dtype_t dt, int rank, const int64_t *shape, int zero)
{
    int64_t n = numel_checked(rank, shape, dt);
    if (n < 0)
        return NULL;
    pld_buffer_t *b = pld_buffer_new((size_t)n * (size_t)pld_dtype_bytes(dt), zero);
    if (!b)
        return NULL;
    pld_tensor_t *t = pld_tensor_view(b, dt, rank, shape, 0);
    pld_buffer_release(b); /* the view holds the reference */
    return t;
}

pld_tensor_t *pld_tensor_copy_desc(const pld_tensor_t *src)
{
    pld_tensor_t *t = pld_mem_alloc(sizeof *t);
    if (!t)
        return NULL;
    *t = *src;
    t->hdr.refs = 1;
    t->buf->refs++;
    return t;
}

pld_tile_t *pld_tile_new(pld_dtype_t dt, int rank, const int64_t *shape, pld_mem_t mem)
{
    int64_t n = numel_checked(rank, shape, dt);
    void *data = n < 0 ? NULL : pld_mem_calloc((size_t)(n > 0 ? n : 1), (size_t)pld_dtype_bytes(dt));
    return pld_tile_adopt(dt, rank, shape, shape, mem, data);
}

pld_tile_t *pld_tile_adopt(pld_dtype_t dt, int rank, const int64_t *shape, const int64_t *valid, pld_mem_t mem,
                           void *data)
{
    pld_tile_t *t = data ? pld_mem_calloc(1, sizeof *t) : NULL;
    if (!t) {
        pld_mem_free(data);
        return NULL;
    }
    t->hdr.refs = 1;
    t->hdr.kind = PLD_O_TILE;
    t->dt = dt;
    t->rank = rank;
    t->mem = mem;
    t->data = data;
    memcpy(t->shape, shape, (size_t)rank * sizeof *shape);
    memcpy(t->valid, valid, (size_t)rank * sizeof *valid);
    return t;
}

pld_tuple_t *pld_tuple_new(int n)
{
    pld_tuple_t *t = pld_mem_calloc(1, sizeof *t + (size_t)n * sizeof(pld_value_t));
    if (!t)
        return NULL;
    t->hdr.refs = 1;
    t->hdr.kind = PLD_O_TUPLE;
    t->n = n;
    return t;
}

pld_array_t *pld_array_new(pld_dtype_t dt, int64_t n)
{
    int64_t bytes;
    if (pld_size_bytes(1, &n, pld_dtype_bytes(dt), PLD_MAX_BYTES, &bytes) != PLD_SIZE_OK)
        return NULL;
    pld_array_t *a = pld_mem_calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->data = pld_mem_calloc((size_t)(n > 0 ? n : 1), (size_t)pld_dtype_bytes(dt));
    if (!a->data) {
        pld_mem_free(a);
        return NULL;
    }
    a->hdr.refs = 1;
    a->hdr.kind = PLD_O_ARRAY;
    a->dt = dt;
    a->n = n;
    return a;
}

void pld_tensor_kview(const pld_tensor_t *t, pld_view_t *v)
{
    memset(v, 0, sizeof *v);
    v->data = (char *)t->buf->data + t->offset * pld_dtype_bytes(t->dt);
    v->dt = t->dt;
    v->rank = t->rank;
    memcpy(v->shape, t->shape, (size_t)t->rank * sizeof *v->shape);
    memcpy(v->strides, t->strides, (size_t)t->rank * sizeof *v->strides);
}

void pld_tile_kview(const pld_tile_t *t, pld_view_t *v, int valid_only)
{
    pld_view_packed(v, t->data, t->dt, t->rank, t->shape);
    if (valid_only)
        memcpy(v->shape, t->valid, (size_t)t->rank * sizeof *v->shape);
}

void *pld_tensor_at(const pld_tensor_t *t, const int64_t *idx)
{
    int64_t off = t->offset;
    for (int i = 0; i < t->rank; i++)
        off += idx[i] * t->strides[i];
    return (char *)t->buf->data + off * pld_dtype_bytes(t->dt);
}

/* Sets bits [e, e + n) of b's written bitmap (clipped to the tracked range):
 * single bits up to a byte boundary, whole bytes with memset, then the tail. */
static void mark_run(pld_buffer_t *b, int64_t e, int64_t n)
{
    if (e < 0) {
        n += e;
        e = 0;
    }
    if (e + n > b->track_n)
        n = b->track_n - e;
    for (; n > 0 && e % 8 != 0; e++, n--)
        b->written[e / 8] |= (uint8_t)(1u << (e % 8));
    if (n >= 8) {
        memset(b->written + e / 8, 0xff, (size_t)(n / 8));
        e += n / 8 * 8;
        n %= 8;
    }
    for (; n > 0; e++, n--)
        b->written[e / 8] |= (uint8_t)(1u << (e % 8));
}

/* Marks elements [e, e + n) of width w bytes in a bitmap over elements of
 * width tw (a reinterpret_view of another dtype): every tracked element
 * whose bytes they touch. */
static void mark_elems(pld_buffer_t *b, int64_t e, int64_t n, int w, int tw)
{
    if (w == tw) {
        mark_run(b, e, n);
        return;
    }
    int64_t lo = e * w / tw, hi = ((e + n) * w + tw - 1) / tw;
    mark_run(b, lo, hi - lo);
}

void pld_tensor_box_runs(const pld_tensor_t *t, const int64_t *off, const int64_t *ext,
                         void (*fn)(void *ctx, int64_t at, int64_t bytes), void *ctx)
{
    const int64_t w = pld_dtype_bytes(t->dt), r = t->rank;
    if (r == 0) {
        fn(ctx, t->offset * w, w);
        return;
    }
    for (int i = 0; i < r; i++)
        if (ext[i] <= 0)
            return;
    int64_t idx[PLD_MAX_RANK];
    memset(idx, 0, sizeof idx);
    for (;;) {
        int64_t base = t->offset;
        for (int i = 0; i < r - 1; i++)
            base += (off[i] + idx[i]) * t->strides[i];
        if (t->strides[r - 1] == 1)
            fn(ctx, (base + off[r - 1]) * w, ext[r - 1] * w);
        else
            for (int64_t j = 0; j < ext[r - 1]; j++)
                fn(ctx, (base + (off[r - 1] + j) * t->strides[r - 1]) * w, w);
        int d = (int)r - 2;
        while (d >= 0 && ++idx[d] == ext[d]) {
            idx[d] = 0;
            d--;
        }
        if (d < 0)
            break;
    }
}

static void shadow_set(void *ctx, int64_t at, int64_t bytes)
{
    memset((uint8_t *)ctx + at, 1, (size_t)bytes);
}

void pld_tensor_shadow_mark(const pld_tensor_t *t, const int64_t *off, const int64_t *ext)
{
    if (t->buf->shadow)
        pld_tensor_box_runs(t, off, ext, shadow_set, t->buf->shadow);
}

void pld_tensor_mark_written(const pld_tensor_t *t, const int64_t *off, const int64_t *ext)
{
    pld_buffer_t *b = t->buf;
    if (b->shadow)
        pld_tensor_box_runs(t, off, ext, shadow_set, b->shadow);
    int w = pld_dtype_bytes(t->dt), tw = b->written ? pld_dtype_bytes(b->track_dt) : w;
    if (!b->written || t->rank == 0) {
        if (b->written && t->rank == 0)
            mark_elems(b, t->offset, 1, w, tw);
        return;
    }
    for (int i = 0; i < t->rank; i++)
        if (ext[i] <= 0)
            return;
    int64_t idx[PLD_MAX_RANK];
    memset(idx, 0, sizeof idx);
    int r = t->rank;
    for (;;) {
        int64_t base = t->offset;
        for (int i = 0; i < r - 1; i++)
            base += (off[i] + idx[i]) * t->strides[i];
        if (t->strides[r - 1] == 1) {
            mark_elems(b, base + off[r - 1], ext[r - 1], w, tw);
        } else {
            for (int64_t j = 0; j < ext[r - 1]; j++) {
                mark_elems(b, base + (off[r - 1] + j) * t->strides[r - 1], 1, w, tw);
            }
        }
        int d = r - 2;
        while (d >= 0 && ++idx[d] == ext[d]) {
            idx[d] = 0;
            d--;
        }
        if (d < 0)
            break;
    }
}

const char *pld_vkind_name(pld_vkind_t k)
{
    switch (k) {
    case PLD_V_NONE: return "no value";
    case PLD_V_INT: return "integer scalar";
    case PLD_V_FLOAT: return "float scalar";
    case PLD_V_TENSOR: return "tensor";
    case PLD_V_TILE: return "tile";
    case PLD_V_TUPLE: return "tuple";
    case PLD_V_ARRAY: return "array";
    case PLD_V_PTR: return "window buffer";
    case PLD_V_CTX: return "comm context";
    case PLD_V_HANDLE: return "prefetch handle";
    case PLD_V_UNAVAIL: return "value computed on another rank";
    }
    return "value";
}

int64_t pld_value_bytes(pld_dtype_t dt, int rank, const int64_t *shape)
{
    int64_t n = numel_checked(rank, shape, dt);
    return n < 0 ? -1 : n * pld_dtype_bytes(dt);
}

pld_tile_t *pld_tile_cow(pld_value_t *v)
{
    pld_tile_t *t = pld_v_tile(v);
    if (t->hdr.refs == 1)
        return t;
    pld_tile_t *c = pld_tile_new(t->dt, t->rank, t->shape, t->mem);
    if (!c)
        return NULL;
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        n *= t->shape[i];
    memcpy(c->data, t->data, (size_t)n * (size_t)pld_dtype_bytes(t->dt));
    memcpy(c->valid, t->valid, sizeof c->valid);
    if (t->win_of) { /* a copy of a window is still the window (its writes go through, pld_exec_matmul) */
        c->win_of = t->win_of;
        c->win_of->hdr.refs++;
        memcpy(c->win_off, t->win_off, sizeof c->win_off);
    }
    if (t->unw) {
        c->unw = pld_mem_alloc((size_t)(n > 0 ? n : 1));
        if (!c->unw) {
            pld_tile_t *ct = c;
            pld_value_t cv = pld_tile_value(ct);
            pld_value_release(&cv);
            return NULL;
        }
        memcpy(c->unw, t->unw, (size_t)n);
        c->born = t->born;
    }
    pld_value_release(v);
    *v = pld_tile_value(c);
    return c;
}

void pld_tile_written_all(pld_tile_t *t)
{
    pld_mem_free(t->unw);
    t->unw = NULL;
}

void pld_tile_written_box(pld_tile_t *t, const int64_t *off, const int64_t *ext)
{
    if (!t->unw)
        return;
    int64_t idx[PLD_MAX_RANK] = {0};
    for (int d = 0; d < t->rank; d++)
        if (ext[d] <= 0)
            return;
    for (;;) {
        int64_t flat = 0, ok = 1;
        for (int d = 0; d < t->rank; d++) {
            int64_t x = off[d] + idx[d];
            ok &= x >= 0 && x < t->shape[d];
            flat = flat * t->shape[d] + x;
        }
        if (ok)
            t->unw[flat] = 0;
        int d = t->rank - 1;
        while (d >= 0 && ++idx[d] == ext[d]) {
            idx[d] = 0;
            d--;
        }
        if (d < 0)
            break;
    }
}

void pld_shape_str(char *buf, size_t n, int rank, const int64_t *s)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < rank && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? ", " : "", (long long)s[i]);
    if (k < n)
        snprintf(buf + k, n - k, "]");
}
