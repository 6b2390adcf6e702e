/* pld_debug_poison.c - --poison: window bytes that were never written read
 * as a NaN (float views) or a byte pattern (integer views), and every read
 * of them is a warning, once per source site (docs/debugging.md,
 * "--poison").
 *
 * Never-written is exact, not guessed from values: every domain window gets
 * a shadow window of the same size and members (one byte per window byte,
 * nonzero = written). Local writes mark the buffer's shadow (the caller); a
 * remote put or atomic add puts as many 1-bytes into the peer's shadow
 * (idempotent: no atomics), flushed before the op returns, so before any
 * notify that publishes it; a get reads the peer's shadow bytes with the data
 * and counts the zeros.
 *
 * Signals stay zero (pld_semantics.md §1.5): the caller classifies window
 * buffers used as signals before the run (the interpreter reads the program
 * text for it) and neither fills nor reports them: their shadow is all ones.
 * Created tiles carry one byte per element (nonzero = never written). */
#include "pld_debug_int.h"
#include "pld_kern.h"
#include "pld_mem.h"

#include <stdio.h>
#include <string.h>

#define MAX_SITES_REPORTED 4096

/* ------------------------------------------------------------ patterns */

/* Fills `bytes` bytes at p with the pattern of dt: FP32 0x7FA5A5A5, FP16
 * 0x7DA5, BF16 0x7FA5, FP64 0x7FF5A5A5A5A5A5A5 (NaNs with an A5 payload), the
 * FP8 / FP4 formats 0xFF (NaN in E4M3FN, E5M2, E8M0), integers 0xA5 bytes. */
void pld_debug_poison_fill(void *p, size_t bytes, pld_dtype_t dt)
{
    uint8_t pat[8];
    size_t w;
    uint64_t v;
    switch (dt) {
    case PLD_DT_FP32: v = 0x7FA5A5A5u; w = 4; break;
    case PLD_DT_FP16: v = 0x7DA5u; w = 2; break;
    case PLD_DT_BF16: v = 0x7FA5u; w = 2; break;
    case PLD_DT_FP64: v = 0x7FF5A5A5A5A5A5A5ull; w = 8; break;
    case PLD_DT_FP8E4M3FN: case PLD_DT_FP8E5M2: case PLD_DT_FP8E8M0: case PLD_DT_FP4: case PLD_DT_HF4:
    case PLD_DT_HF8:
        memset(p, 0xFF, bytes);
        return;
    default:
        memset(p, 0xA5, bytes);
        return;
    }
    for (size_t i = 0; i < w; i++)
        pat[i] = (uint8_t)(v >> (8 * i)); /* little-endian, like the window */
    uint8_t *q = p;
    for (size_t i = 0; i < bytes; i++)
        q[i] = pat[i % w];
}

static const char *pattern_text(pld_dtype_t dt)
{
    switch (dt) {
    case PLD_DT_FP32: case PLD_DT_FP16: case PLD_DT_BF16: case PLD_DT_FP64: case PLD_DT_FP8E4M3FN:
    case PLD_DT_FP8E5M2: case PLD_DT_FP8E8M0: case PLD_DT_FP4: case PLD_DT_HF4: case PLD_DT_HF8:
        return "NaN";
    default:
        return "the byte pattern 0xA5";
    }
}

/* ------------------------------------------------------------ state */

pld_status_t pld_debug_poison_open(pld_debug_t *d, char *err, size_t errn)
{
    if (strcmp(d->o.backend, "sim") != 0) {
        snprintf(err, errn,
                 "--poison needs --backend sim: with backend '%s' compiled kernels write the windows directly and "
                 "their writes cannot be tracked",
                 d->o.backend);
        return PLD_E_USAGE;
    }
    d->poison = pld_mem_calloc(1, sizeof *d->poison);
    if (!d->poison) {
        snprintf(err, errn, "out of memory");
        return PLD_E_NOMEM;
    }
    return PLD_OK;
}

void pld_debug_poison_close(pld_debug_t *d)
{
    if (!d->poison)
        return;
    pld_mem_free(d->poison->ones);
    pld_mem_free(d->poison->scratch);
    pld_mem_free(d->poison->sites);
    pld_mem_free(d->poison);
    d->poison = NULL;
}

/* Grows *buf to n bytes (contents: `fill` when it grows). 0 on OOM. */
static int grow(uint8_t **buf, size_t *cap, size_t n, int fill)
{
    if (n <= *cap)
        return 1;
    size_t c = *cap ? *cap : 256;
    while (c < n)
        c *= 2;
    uint8_t *nb = pld_mem_alloc(c);
    if (!nb)
        return 0;
    memset(nb, fill, c);
    pld_mem_free(*buf);
    *buf = nb;
    *cap = c;
    return 1;
}

/* 1 the first time site key asks (then it is remembered), else 0. */
static int first_at(pld_debug_t *d, const void *key)
{
    dbg_poison_t *ps = d->poison;
    for (int i = 0; i < ps->nsites; i++)
        if (ps->sites[i] == key)
            return 0;
    if (ps->nsites >= MAX_SITES_REPORTED)
        return 0;
    if (ps->nsites == ps->capsites) {
        int cap = ps->capsites ? ps->capsites * 2 : 16;
        const void **ns = pld_mem_realloc(ps->sites, (size_t)cap * sizeof *ns);
        if (!ns)
            return 1; /* report, forget */
        ps->sites = ns;
        ps->capsites = cap;
    }
    ps->sites[ps->nsites++] = key;
    return 1;
}

/* ------------------------------------------------------------ windows */

pld_status_t pld_debug_poison_shadow(pld_win_sys_t *world, int dom, const int *members, int n, size_t bytes,
                                     pld_win_dom_t **out, char *err, size_t errn)
{
    char werr[512];
    pld_status_t st = pld_win_dom_create(world, members, n, bytes ? bytes : 32, out, werr, sizeof werr);
    if (st != PLD_OK)
        snprintf(err, errn, "--poison: cannot create the shadow window of comm domain %d: %s", dom, werr);
    return st;
}

pld_status_t pld_debug_poison_run(pld_debug_t *d, pld_win_dom_t *shadow, int peer, size_t disp, size_t bytes, int dir,
                                  pld_debug_acc_t *acc, char *err, size_t errn)
{
    dbg_poison_t *ps = d->poison;
    if (!shadow || bytes == 0)
        return PLD_OK;
    if (dir != 0) {
        if (!grow(&ps->ones, &ps->nones, bytes, 1)) {
            snprintf(err, errn, "out of memory (--poison)");
            return PLD_E_NOMEM;
        }
        return pld_win_put(shadow, peer, disp, ps->ones, bytes, err, errn);
    }
    if (!grow(&ps->scratch, &ps->nscratch, bytes, 0)) {
        snprintf(err, errn, "out of memory (--poison)");
        return PLD_E_NOMEM;
    }
    pld_status_t st = pld_win_get(shadow, peer, disp, ps->scratch, bytes, err, errn);
    if (st != PLD_OK)
        return st;
    for (size_t i = 0; i < bytes; i++)
        if (!ps->scratch[i]) {
            if (!acc->n || disp + i < acc->lo)
                acc->lo = disp + i;
            if (!acc->n || disp + i > acc->hi)
                acc->hi = disp + i;
            acc->n++;
        }
    return PLD_OK;
}

void pld_debug_poison_scan(pld_debug_acc_t *acc, const uint8_t *shadow, int64_t at, int64_t bytes)
{
    for (int64_t i = 0; i < bytes; i++)
        if (!shadow[at + i]) {
            size_t b = (size_t)(at + i);
            if (!acc->n || b < acc->lo)
                acc->lo = b;
            if (!acc->n || b > acc->hi)
                acc->hi = b;
            acc->n++;
        }
}

/* The record of a warning for the caller's sink (pld_debug_opts_t.finding). */
static void finding(pld_debug_t *d, const pld_diag_t *dg, const pld_debug_at_t *at, const char *target, int tile,
                    pld_span_t born, int owner, size_t lo, size_t hi, size_t count)
{
    if (!d->o.finding)
        return;
    pld_debug_finding_t f;
    memset(&f, 0, sizeof f);
    f.kind = PLD_DEBUG_FINDING_POISON;
    f.message = dg ? dg->msg : "";
    f.nsides = 1;
    f.side[0] = (pld_debug_side_t){d->o.rank, -1, d->o.host.site_name(d->o.host.ctx, at->key), "read", at->span};
    f.target = target;
    f.tile = tile;
    f.born = born;
    f.owner = owner;
    f.lo = lo;
    f.hi = hi;
    f.count = count;
    d->o.finding(d->o.finding_ctx, &f);
}

void pld_debug_poison_report(pld_debug_t *d, const pld_debug_at_t *at, const pld_debug_window_t *w, int owner,
                             pld_dtype_t dt, const pld_debug_acc_t *acc)
{
    if (!first_at(d, at->key))
        return;
    pld_diag_t *dg = pld_diag_add(
        d->o.diags, PLD_SEV_WARNING, at->span,
        "%s reads %zu never-written byte%s of window '%s' on rank %d (bytes %zu..%zu of %zu): they read as "
        "%s under --poison",
        d->o.host.site_name(d->o.host.ctx, at->key), acc->n, acc->n == 1 ? "" : "s",
        w->synth ? "the allreduce signal" : w->name, owner, acc->lo, acc->hi, w->bytes, pattern_text(dt));
    finding(d, dg, at, w->synth ? "the allreduce signal" : w->name, 0, (pld_span_t){0, 0, 0, 0}, owner, acc->lo,
            acc->hi + 1, acc->n);
}

/* ------------------------------------------------------------ tiles */

pld_status_t pld_debug_poison_tile_new(void *data, int64_t n, pld_dtype_t dt, uint8_t **unw)
{
    *unw = pld_mem_alloc((size_t)(n > 0 ? n : 1));
    if (!*unw)
        return PLD_E_NOMEM;
    memset(*unw, 1, (size_t)(n > 0 ? n : 1));
    pld_debug_poison_fill(data, (size_t)n * (size_t)pld_dtype_bytes(dt), dt);
    return PLD_OK;
}

void pld_debug_poison_tile_read(pld_debug_t *d, const pld_debug_at_t *at, const char *name, int rank,
                                const int64_t *shape, const int64_t *valid, const uint8_t *unw, pld_dtype_t dt,
                                pld_span_t born)
{
    /* the valid region, row-major */
    int64_t idx[PLD_MAX_RANK] = {0};
    size_t n = 0, lo = 0, hi = 0;
    const size_t w = (size_t)pld_dtype_bytes(dt);
    for (int k = 0; k < rank; k++)
        if (valid[k] <= 0)
            return;
    for (;;) {
        int64_t flat = 0;
        for (int k = 0; k < rank; k++)
            flat = flat * shape[k] + idx[k];
        if (unw[flat]) {
            if (!n)
                lo = (size_t)flat * w;
            hi = (size_t)flat * w + w - 1;
            n += w;
        }
        int k = rank - 1;
        while (k >= 0 && ++idx[k] == valid[k]) {
            idx[k] = 0;
            k--;
        }
        if (k < 0)
            break;
    }
    if (!n || !first_at(d, at->key))
        return;
    int64_t total = 1;
    for (int k = 0; k < rank; k++)
        total *= shape[k];
    char nm[96] = "";
    if (name)
        snprintf(nm, sizeof nm, " '%s'", name);
    pld_diag_t *dg = pld_diag_add(
        d->o.diags, PLD_SEV_WARNING, at->span,
        "%s reads %zu never-written byte%s of tile%s (created by pl.tile.create at %d:%d) on rank %d "
        "(bytes %zu..%zu of %lld): they read as %s under --poison",
        d->o.host.site_name(d->o.host.ctx, at->key), n, n == 1 ? "" : "s", nm, (int)born.line, (int)born.col,
        d->o.rank, lo, hi, (long long)(total * (int64_t)w), pattern_text(dt));
    finding(d, dg, at, name ? name : "", 1, born, d->o.rank, lo, hi + 1, n);
}
