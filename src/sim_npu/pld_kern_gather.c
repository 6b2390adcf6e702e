/* pld_kern_gather.c - the GM gather / scatter numerics of the tile kernel
 * library (pld_kern.h): mgather (row and element modes, gather_oob),
 * mscatter, gatherb, scatter_update, gather_compare. `sim` (src/interp/pld_exec_gather.c)
 * and compiled kernels (pc_kern) call these; the semantics are in
 * docs/ops-numerics.md. Indices are read from the index view's box in
 * row-major order; bytes are copied, never converted. Messages leave out
 * the op name (the caller prefixes it). */
#include "pld_kern.h"
#include "pld_kern_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void *at(const pld_view_t *v, const int64_t *idx)
{
    int64_t o = 0;
    for (int d = 0; d < v->rank; d++)
        o += idx[d] * v->strides[d];
    return (char *)v->data + o * pld_dtype_bytes(v->dt);
}

/* element k (row-major) of view v */
static void *flat_at(const pld_view_t *v, int64_t k)
{
    int64_t idx[PLD_MAX_RANK];
    for (int d = v->rank - 1; d >= 0; d--) {
        idx[d] = v->shape[d] ? k % v->shape[d] : 0;
        k = v->shape[d] ? k / v->shape[d] : 0;
    }
    return at(v, idx);
}

/* an index as PyPTO's mgather reads it (UINT32) resolved against n entries by gather_oob mode oob: the entry, -1
 * for a zero result (mode zero), -2 for an undefined index (mode undefined) */
static int64_t resolve_oob(int64_t raw, int64_t n, int oob)
{
    int64_t k = (int64_t)(uint32_t)raw;
    if (k < n)
        return k;
    switch (oob) {
    case 1: return n - 1;
    case 2: return k % n;
    case 3: return -1;
    default: return -2;
    }
}

pld_status_t pld_k_mgather(const pld_view_t *out, const pld_view_t *mem, const pld_view_t *idx, const int64_t *box,
                           int row_mode, int oob, const pld_view_t *scratch, char *err, size_t errn)
{
    const int rowvec = idx->shape[0] == 1;
    const int64_t n = pld_view_numel(mem), last = mem->shape[mem->rank - 1];
    const int64_t rows = row_mode ? (last ? n / last : 0) : n;
    const size_t eb = (size_t)pld_dtype_bytes(mem->dt);
    for (int64_t i = 0; i < box[0]; i++)
        for (int64_t j = 0; j < box[1]; j++) {
            int64_t p[2] = {row_mode && rowvec ? 0 : i, row_mode ? (rowvec ? i : 0) : j}, q[2] = {i, j};
            int64_t raw = pld_elem_get_i(at(idx, p), idx->dt, 0), k = resolve_oob(raw, rows, oob);
            if (k == -2)
                return pld_kern_fail(err, errn, "index %lld at [%lld, %lld] is outside [0, %lld) (indices read as UINT32; "
                                       "gather_oob='undefined')", (long long)(uint32_t)raw, (long long)p[0],
                            (long long)p[1], (long long)rows);
            if (k >= 0) /* else gather_oob='zero': the new tile's 0 */
                memcpy(at(out, q), flat_at(mem, row_mode ? k * last + j : k), eb);
            if (scratch)
                memcpy(flat_at(scratch, i * out->shape[1] + j), at(out, q), eb);
        }
    return PLD_OK;
}

pld_status_t pld_k_mscatter(const pld_view_t *out, const pld_view_t *src, const pld_view_t *idx, const int64_t *svalid,
                            char *err, size_t errn)
{
    int64_t lim = pld_view_numel(out), box[PLD_MAX_RANK], p[PLD_MAX_RANK], nb = 1;
    const size_t eb = (size_t)pld_dtype_bytes(src->dt);
    for (int d = 0; d < src->rank; d++) {
        box[d] = svalid[d] < idx->shape[d] ? svalid[d] : idx->shape[d];
        nb *= box[d];
    }
    for (int64_t b = 0; b < nb; b++) {
        int64_t r = b;
        for (int d = src->rank - 1; d >= 0; d--) {
            p[d] = box[d] ? r % box[d] : 0;
            r = box[d] ? r / box[d] : 0;
        }
        int64_t k = pld_elem_get_i(at(idx, p), idx->dt, 0);
        if (k < 0 || k >= lim) {
            char ix[160];
            size_t m = (size_t)snprintf(ix, sizeof ix, "[");
            for (int d = 0; d < src->rank && m < sizeof ix; d++)
                m += (size_t)snprintf(ix + m, sizeof ix - m, "%s%lld", d ? ", " : "", (long long)p[d]);
            if (m < sizeof ix)
                snprintf(ix + m, sizeof ix - m, "]");
            return pld_kern_fail(err, errn, "index %lld at %s is outside [0, %lld)", (long long)k, ix, (long long)lim);
        }
        memcpy(flat_at(out, k), at(src, p), eb);
    }
    return PLD_OK;
}

pld_status_t pld_k_gatherb(const pld_view_t *out, const pld_view_t *src, const pld_view_t *off, const int64_t *box,
                           char *err, size_t errn)
{
    const int64_t k = 32 / pld_dtype_bytes(out->dt), sb = pld_dtype_bytes(src->dt), bytes = pld_view_numel(src) * sb;
    for (int64_t i = 0; i < box[0]; i++)
        for (int64_t j = 0; j < box[1]; j++) {
            int64_t p[2] = {i, j}, q[2] = {i, j * k};
            int64_t o = (int64_t)(uint32_t)pld_elem_get_i(at(off, p), off->dt, 0);
            if (o % 32 || o + 32 > bytes)
                return pld_kern_fail(err, errn, "byte offset %lld at [%lld, %lld] is %s (src has %lld bytes)", (long long)o,
                            (long long)i, (long long)j,
                            o % 32 ? "not a multiple of 32" : "outside src: its 32-byte block ends past src",
                            (long long)bytes);
            char *dst = at(out, q);
            for (int64_t b = 0; b < 32; b++)
                dst[b] = ((const char *)flat_at(src, (o + b) / sb))[(o + b) % sb];
        }
    return PLD_OK;
}

pld_status_t pld_k_scatter_update(const pld_view_t *out, const pld_view_t *idx, const pld_view_t *src,
                                  const int64_t *box, char *err, size_t errn)
{
    const int64_t d = out->shape[out->rank - 1];
    const int64_t rows = d ? pld_view_numel(out) / d : 0, srows = d ? pld_view_numel(src) / d : 0;
    const size_t eb = (size_t)pld_dtype_bytes(out->dt);
    for (int64_t i = 0; i < box[0]; i++)
        for (int64_t j = 0; j < box[1]; j++) {
            int64_t p[2] = {i, j}, k = i * idx->shape[1] + j;
            int64_t r = pld_elem_get_i(at(idx, p), idx->dt, 0);
            if (r < 0 || r >= rows)
                return pld_kern_fail(err, errn, "index %lld at [%lld, %lld] is outside [0, %lld) (input's rows)", (long long)r,
                            (long long)i, (long long)j, (long long)rows);
            if (k >= srows)
                return pld_kern_fail(err, errn, "index %lld at [%lld, %lld] has no src row (src has %lld)", (long long)r,
                            (long long)i, (long long)j, (long long)srows);
            for (int64_t c = 0; c < d; c++)
                memcpy(flat_at(out, r * d + c), flat_at(src, k * d + c), eb);
        }
    return PLD_OK;
}

/* 1 when a cmp b holds (mode: eq ne lt le gt ge); NaN compares unequal and unordered. */
static int cmp_holds(int mode, double a, double b)
{
    switch (mode) {
    case 0: return a == b;
    case 1: return a != b;
    case 2: return a < b;
    case 3: return a <= b;
    case 4: return a > b;
    default: return a >= b;
    }
}

pld_status_t pld_k_gather_compare(const pld_view_t *dst, const pld_view_t *cnt, const pld_view_t *src,
                                  const int64_t *box, int mode, double k, int64_t out_cols, char *err, size_t errn)
{
    for (int64_t i = 0; i < box[0]; i++) {
        int64_t n = 0, q[2] = {0, i};
        for (int64_t j = 0; j < box[1]; j++) {
            int64_t p[2] = {i, j};
            int hit = cmp_holds(mode, pld_elem_get_f(at(src, p), src->dt, 0), k); /* INT16/32: exact */
            if (hit && n < out_cols) {
                int64_t w[2] = {i, n};
                pld_elem_set_i(at(dst, w), PLD_DT_INT32, 0, j);
            }
            n += hit;
        }
        pld_elem_set_i(at(cnt, q), cnt->dt, 0, n);
        if (n != out_cols)
            return pld_kern_fail(err, errn, "row %lld has %lld matches, out_cols is %lld (PyPTO leaves dst undefined unless they "
                                   "agree)", (long long)i, (long long)n, (long long)out_cols);
    }
    return PLD_OK;
}

pld_status_t pld_k_paged_gather(const pld_view_t *out, const pld_view_t *src, const pld_view_t *idx,
                                const pld_view_t *table, int64_t bs, int64_t size, int64_t col, int trans, char *err,
                                size_t errn)
{
    const int64_t n = pld_view_numel(idx), nb = pld_view_numel(table);
    const size_t eb = (size_t)pld_dtype_bytes(src->dt);
    for (int64_t i = 0; i < n; i++) {
        int64_t li = pld_elem_get_i(flat_at(idx, i), idx->dt, 0), b = li >= 0 ? li / bs : -1;
        if (b < 0 || b >= nb)
            return pld_kern_fail(err, errn, "index %lld (entry %lld) is outside the block table (%lld blocks of %lld)",
                                 (long long)li, (long long)i, (long long)nb, (long long)bs);
        int64_t phys = pld_elem_get_i(flat_at(table, b), table->dt, 0) * bs + li % bs;
        if (phys < 0 || phys >= src->shape[0])
            return pld_kern_fail(err, errn, "index %lld (entry %lld) maps to row %lld, outside src's %lld rows",
                                 (long long)li, (long long)i, (long long)phys, (long long)src->shape[0]);
        for (int64_t c = 0; c < size; c++) {
            int64_t p[2] = {phys, col + c}, q[2] = {trans ? c : i, trans ? i : c};
            memcpy(at(out, q), at(src, p), eb);
        }
    }
    return PLD_OK;
}
