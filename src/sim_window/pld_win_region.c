/* pld_win_region.c - a strided box of a tensor between this rank's packed
 * buffer and a member's window, as contiguous runs (pld_win.h). The
 * interpreter's remote ops (put/get, remote_load/store) and everything else
 * that moves a box between ranks come through here; the caller's hooks
 * replace a run's transfer (a seeded schedule holds puts back) and see each
 * run that moved (--poison, --check-races). */
#include "pld_win.h"

#include <stdio.h>
#include <string.h>

#define REGION_MAX_RANK 8

static pld_status_t run_xfer(pld_win_dom_t *d, const pld_win_region_hooks_t *h, int peer, size_t disp, void *p,
                             size_t bytes, size_t count, pld_dtype_t dt, int dir, char *err, size_t errn)
{
    pld_status_t st;
    if (h && h->xfer)
        st = h->xfer(h->ctx, peer, disp, p, bytes, count, dir, err, errn);
    else
        st = dir == 0 ? pld_win_get(d, peer, disp, p, bytes, err, errn)
           : dir == 1 ? pld_win_put(d, peer, disp, p, bytes, err, errn)
                      : pld_win_add(d, peer, disp, p, dt, count, err, errn);
    if (st == PLD_OK && h && h->moved)
        st = h->moved(h->ctx, peer, disp, bytes, dir, err, errn);
    return st;
}

static size_t disp_of(const pld_win_view_t *v, const int64_t *idx, int esz)
{
    int64_t e = 0;
    for (int k = 0; k < v->rank; k++)
        e += idx[k] * v->strides[k];
    return v->disp0 + (size_t)(e * esz);
}

pld_status_t pld_win_region(pld_win_dom_t *d, int peer, const pld_win_view_t *v, const int64_t *off,
                            const int64_t *ext, void *packed, int dir, const pld_win_region_hooks_t *h,
                            uint64_t *moved, int *why, char *err, size_t errn)
{
    const int r = v->rank, esz = pld_dtype_bytes(v->dt);
    const size_t wbytes = pld_win_dom_bytes(d);
    *moved = 0;
    *why = PLD_WR_XFER;
    if (r < 0 || r > REGION_MAX_RANK) {
        snprintf(err, errn, "a region of rank %d (at most %d)", r, REGION_MAX_RANK);
        *why = PLD_WR_DIM;
        return PLD_E_RUNTIME;
    }
    for (int k = 0; k < r; k++) {
        if (ext[k] <= 0)
            return PLD_OK;
        if (off[k] < 0 || ext[k] > v->shape[k] - off[k]) {
            snprintf(err, errn, "region offset %lld + extent %lld is outside dimension %d (size %lld)",
                     (long long)off[k], (long long)ext[k], k, (long long)v->shape[k]);
            *why = PLD_WR_DIM;
            return PLD_E_RUNTIME;
        }
    }
    /* contiguous runs: merge trailing dims that are full and packed */
    int inner = r - 1;
    int64_t run = r ? ext[r - 1] : 1;
    const int contiguous_inner = r == 0 || v->strides[r - 1] == 1;
    while (contiguous_inner && inner > 0 && ext[inner] == v->shape[inner] &&
           v->strides[inner - 1] == v->strides[inner] * v->shape[inner]) {
        inner--;
        run *= ext[inner];
    }
    int64_t idx[REGION_MAX_RANK];
    memcpy(idx, off, (size_t)r * sizeof *idx);
    char *p = packed;
    for (;;) {
        if (contiguous_inner) {
            size_t disp = disp_of(v, idx, esz);
            size_t bytes = (size_t)run * (size_t)esz;
            if (disp + bytes > wbytes) {
                snprintf(err, errn, "out of the window's bounds (offset %zu + %zu bytes > window %zu)", disp, bytes,
                         wbytes);
                *why = PLD_WR_BOUNDS;
                return PLD_E_RUNTIME;
            }
            pld_status_t st = run_xfer(d, h, peer, disp, p, bytes, (size_t)run, v->dt, dir, err, errn);
            if (st != PLD_OK)
                return st;
            p += bytes;
        } else {
            /* strided innermost dim: element by element */
            for (int64_t j = 0; j < ext[r - 1]; j++) {
                int64_t save = idx[r - 1];
                idx[r - 1] = off[r - 1] + j;
                size_t disp = disp_of(v, idx, esz);
                idx[r - 1] = save;
                pld_status_t st = run_xfer(d, h, peer, disp, p, (size_t)esz, 1, v->dt, dir, err, errn);
                if (st != PLD_OK)
                    return st;
                p += esz;
            }
        }
        *moved += (uint64_t)(contiguous_inner ? run : ext[r - 1]) * (uint64_t)esz;
        /* next run: odometer over dims [0, inner) (or [0, r-1) when strided) */
        int k = (contiguous_inner ? inner : r - 1) - 1;
        while (k >= 0) {
            if (++idx[k] < off[k] + ext[k])
                break;
            idx[k] = off[k];
            k--;
        }
        if (k < 0)
            break;
    }
    return PLD_OK;
}
