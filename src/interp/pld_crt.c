/* pld_crt.c - the runtime of compiled kernels (pld_crt.h's pc_rt) and the
 * services pldrun offers backends (pld_backend.h's pld_be_host_t).
 *
 * A block of a compiled kernel runs with a frame of the kernel function, as
 * the interpreter would: its locals stay in C, and only the ops the runtime
 * runs (pld.*: windows, signals, waits, collectives) see the frame, filled
 * with the locals they read just before (set_*). Errors are the
 * interpreter's located runtime errors at the site's expression. Tile ops
 * of the kernel library call the same loops (pld_kern.h) `sim` runs. */
#include "pld_interp_int.h"
#include "pld_cgen.h"
#include "pld_crt.h"
#include "pld_mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ERRN 256

struct pld_cgen_scope {
    const pld_stmt_t *s;
    pld_cgen_t code;
};

typedef struct crt_block {
    pld_interp_t *it;
    pld_sim_call_t *c;
    frame_t f;
    const pld_cgen_t *code;
    void **allocs;
    int nallocs, capallocs;
    pld_value_t last;      /* the value of the last exec (owner of a returned tile) */
    pld_value_t *made;     /* tensors the runtime made for the kernel (live until the block ends) */
    int nmade, capmade;
    int failed;
    int own_slots;         /* f.slots is the block's (else the caller's frame: a pl.at scope) */
    pld_ub_slot_t *ub;     /* the tile each local holds (the capacity check) */
    int64_t t0;            /* when the block began (pld_trace_now): the watchdog of rt_tick */
    uint32_t ticks;        /* back edges so far */
    int nested;            /* a kernel function called by compiled code: its return value goes to `result` */
    pld_value_t result;
} crt_block_t;

static pld_span_t site_span(const crt_block_t *b, int site)
{
    if (site >= 0 && site < b->code->nsites)
        return b->code->sites[site]->span;
    return b->c->span;
}

static const pld_expr_t *site_expr(const crt_block_t *b, int site)
{
    return site >= 0 && site < b->code->nsites ? b->code->sites[site] : NULL;
}

static int rt_fail(void *bk, int site, const char *msg)
{
    crt_block_t *b = bk;
    b->failed = 1;
    if (!b->it->failed)
        pld_rt_error(b->it, &b->f, site_span(b, site), "%s", msg);
    return 1;
}

static int kfail(crt_block_t *b, int site, pld_status_t st, const char *err)
{
    if (st == PLD_OK)
        return 0;
    const pld_expr_t *e = site_expr(b, site);
    char m[ERRN + 64];
    snprintf(m, sizeof m, "%s: %s", e && e->kind == PLD_EX_CALL && e->op >= 0 ? pld_op_info((pld_op_id_t)e->op)->name
                                                                                 : "kernel",
             err);
    return rt_fail(b, site, m);
}

static void *rt_alloc(void *bk, int site, size_t bytes)
{
    crt_block_t *b = bk;
    if (b->nallocs == b->capallocs) {
        int cap = b->capallocs ? 2 * b->capallocs : 16;
        void **a = pld_mem_realloc(b->allocs, (size_t)cap * sizeof *a);
        if (!a) {
            rt_fail(b, site, "out of memory");
            return NULL;
        }
        b->allocs = a;
        b->capallocs = cap;
    }
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes ? (bytes + 63) / 64 * 64 : 64) != 0 || !p) {
        rt_fail(b, site, "out of memory for tile storage");
        return NULL;
    }
    memset(p, 0, bytes);
    b->allocs[b->nallocs++] = p;
    return p;
}

/* Every back edge of a compiled loop (for, while, pl.while_, `continue`
 * included): the operation budget and the hang watchdog's progress
 * (pld_rt_step), a stop of the run, and the per-wait limit: with
 * --wait-timeout S, a block still running S seconds after it began stops the
 * run as a wait past the limit does (exit 70, the loop located). Without it a
 * running loop is progress, as an interpreted one is. */
static int rt_tick_n(void *bk, int site, uint32_t n)
{
    crt_block_t *b = bk;
    pld_interp_t *it = b->it;
    if (it->failed || pld_npu_cancelled(it->sched))
        return 1;
    const uint32_t before = b->ticks;
    b->ticks += n;
    if ((before >> 10) != (b->ticks >> 10) && it->opts.wait_timeout_s > 0) { /* every 1024 back edges */
        const double lim = it->opts.wait_timeout_s;
        const double dt = (double)(pld_trace_now() - b->t0) * 1e-9;
        if (dt >= lim) {
            char m[160];
            snprintf(m, sizeof m, "kernel %s: this loop still runs after %.3g s (the hang watchdog's per-wait limit "
                     "expired)", b->c->fn ? b->c->fn->name : "scope", lim); /* the limit: the same text on every rank */
            it->hang = 1;
            if (it->win) {
                /* the status board as a wait past the limit leaves it (pld_wait_run) */
                pld_wait_publish(it->win, PLD_WS_FAILED, 0, 0, 0, 0, 0, 0, m);
                pld_win_status_abort_all(it->win, PLD_WA_WAIT_TIMEOUT);
            }
            return rt_fail(b, site, m);
        }
    }
    const pld_span_t sp = site_span(b, site);
    it->steps += n - 1; /* n operations: the last one checked against the budget */
    pld_rt_progress_at(it, sp);
    return pld_rt_step(it, &b->f, sp) != PLD_OK;
}

static int rt_tick(void *bk, int site)
{
    return rt_tick_n(bk, site, 1);
}

static double rt_round_f(int32_t dt, double v)
{
    return pld_v_float((pld_dtype_t)dt, v).u.f;
}

static int64_t rt_wrap_i(int32_t dt, int64_t v)
{
    return pld_v_int((pld_dtype_t)dt, v).u.i;
}

static double rt_from_bits(int32_t dt, uint64_t bits)
{
    if (dt == PLD_DT_FP64) {
        double d;
        memcpy(&d, &bits, sizeof d);
        return d;
    }
    return pld_elem_get_f(&bits, (pld_dtype_t)dt, 0);
}

static double rt_get_f(const void *d, int32_t dt, int64_t i)
{
    return pld_elem_get_f(d, (pld_dtype_t)dt, i);
}

static int64_t rt_get_i(const void *d, int32_t dt, int64_t i)
{
    return pld_elem_get_i(d, (pld_dtype_t)dt, i);
}

static void rt_set_f(void *d, int32_t dt, int64_t i, double v)
{
    pld_elem_set_f(d, (pld_dtype_t)dt, i, v);
}

static void rt_set_i(void *d, int32_t dt, int64_t i, int64_t v)
{
    pld_elem_set_i(d, (pld_dtype_t)dt, i, v);
}

/* ---- descriptors <-> the interpreter's values ---- */

/* a stack tensor over a compiled tensor (buffer: its data, offset 0) */
static void as_tensor(const pc_tensor *t, pld_tensor_t *out, pld_buffer_t *buf)
{
    memset(out, 0, sizeof *out);
    memset(buf, 0, sizeof *buf);
    buf->refs = 1;
    buf->data = t->data;
    buf->external = 1;
    out->buf = buf;
    out->dt = (pld_dtype_t)t->dt;
    out->rank = t->rank;
    for (int d = 0; d < t->rank; d++) {
        out->shape[d] = out->valid[d] = t->shape[d];
        out->strides[d] = t->stride[d];
    }
    out->winbuf = -1;
}

static void tile_view(const pc_tile *t, pld_view_t *v, int valid_only)
{
    pld_view_packed(v, t->data, (pld_dtype_t)t->dt, t->rank, t->shape);
    if (valid_only)
        for (int d = 0; d < t->rank; d++)
            v->shape[d] = t->valid[d];
}

static int rt_load(void *bk, int site, pc_tile *dst, const pc_tensor *src, const int64_t *off, int noff,
                   const int64_t *valid, int clamp)
{
    crt_block_t *b = bk;
    const pld_expr_t *e = site_expr(b, site);
    pld_tensor_t t;
    pld_buffer_t buf;
    as_tensor(src, &t, &buf);
    int64_t val[PLD_MAX_RANK], ext[PLD_MAX_RANK];
    for (int j = 0; j < dst->rank; j++) {
        val[j] = valid ? valid[j] : dst->shape[j];
        if (val[j] < 0 || val[j] > dst->shape[j]) {
            char m[160];
            snprintf(m, sizeof m, "pl.tile.load: valid extent %lld of dimension %d is outside [0, %lld]",
                     (long long)val[j], j, (long long)dst->shape[j]);
            return rt_fail(b, site, m);
        }
    }
    if (pld_region(b->it, &b->f, e, &t, off, noff, val, dst->rank, clamp, ext, "reads") != PLD_OK)
        return rt_fail(b, site, "");
    int full = 1; /* the copy covers the whole tile: nothing left to zero */
    for (int j = 0; j < dst->rank; j++)
        dst->valid[j] = ext[t.rank - dst->rank + j], full &= dst->valid[j] == dst->shape[j];
    if (!full)
        memset(dst->data, 0, (size_t)pc_numel(dst->shape, dst->rank) * (size_t)pld_dtype_storage_bytes(t.dt));
    pld_view_t vs, vd;
    pld_region_view(&t, off, ext, dst->rank, &vs);
    tile_view(dst, &vd, 1);
    char err[ERRN];
    b->it->stats.bytes_moved += (uint64_t)pld_view_numel(&vd) * (uint64_t)pld_dtype_bytes(t.dt);
    return kfail(b, site, pld_k_copy(&vd, &vs, err, sizeof err), err);
}

static int rt_store(void *bk, int site, const pc_tile *src, const int64_t *off, int noff, const pc_tensor *dst,
                    const int64_t *limit, int atomic)
{
    crt_block_t *b = bk;
    pld_tensor_t t;
    pld_buffer_t buf;
    as_tensor(dst, &t, &buf);
    pld_tile_t tile;
    memset(&tile, 0, sizeof tile);
    tile.dt = (pld_dtype_t)src->dt;
    tile.rank = src->rank;
    for (int d = 0; d < src->rank; d++) {
        tile.shape[d] = src->shape[d];
        tile.valid[d] = src->valid[d];
    }
    tile.data = src->data;
    if (pld_store_tile(b->it, &b->f, site_expr(b, site), &tile, &t, off, noff, limit, atomic) != PLD_OK)
        return rt_fail(b, site, "");
    return 0;
}

/* ---- pl.tile.full over a whole physical tile ---- */

static int rt_fill(void *bk, int site, pc_tile *out, double vf, int64_t vi)
{
    pld_view_t vo;
    tile_view(out, &vo, 0);
    if (!pld_kern_dtype_ok((pld_dtype_t)out->dt))
        return rt_fail(bk, site, "pl.tile.full: pldrun cannot fill this dtype with a value");
    if (pld_dtype_is_float((pld_dtype_t)out->dt))
        pld_k_fill_f(&vo, vf);
    else
        pld_k_fill_i(&vo, vi);
    return 0;
}

/* ---- runtime-run ops: the frame ---- */

static int set_slot(crt_block_t *b, int slot, pld_value_t v)
{
    if (slot < 0 || slot >= b->f.nslots) {
        pld_value_release(&v);
        return rt_fail(b, -1, "internal: a compiled kernel named a local that does not exist");
    }
    pld_value_release(&b->f.slots[slot]);
    b->f.slots[slot] = v;
    return 0;
}

static int rt_set_int(void *bk, int slot, int32_t dt, int64_t v)
{
    return set_slot(bk, slot, pld_v_int((pld_dtype_t)dt, v));
}

static int rt_set_float(void *bk, int slot, int32_t dt, double v)
{
    return set_slot(bk, slot, pld_v_float((pld_dtype_t)dt, v));
}

/* A comm-domain handle as a compiled kernel holds it: the address of the
 * domain's CommContext, what args[] carries for a CommCtx (pld_backend.h)
 * and where the kernel reads rankId / rankNum; the interpreter's handle is
 * the domain's index. */
static int64_t ctx_to_kernel(const pld_interp_t *it, int64_t h)
{
    const void *c = h >= 0 && h < it->ndoms && it->doms[h].win ? pld_win_dom_ctx(it->doms[h].win) : NULL;
    return c ? (int64_t)(uintptr_t)c : h;
}

static int64_t ctx_from_kernel(const pld_interp_t *it, int64_t a)
{
    for (int d = 0; d < it->ndoms; d++)
        if (it->doms[d].win && (int64_t)(uintptr_t)pld_win_dom_ctx(it->doms[d].win) == a)
            return d;
    return a >= 0 && a < it->ndoms ? a : -1;
}

static int rt_set_ctx(void *bk, int slot, int64_t h)
{
    crt_block_t *b = bk;
    pld_value_t v = pld_v_none();
    v.kind = PLD_V_CTX;
    v.u.i = ctx_from_kernel(b->it, h);
    return set_slot(bk, slot, v);
}

static int64_t rt_param_ctx(void *bk, int slot)
{
    crt_block_t *b = bk;
    return slot >= 0 && slot < b->f.nslots && b->f.slots[slot].kind == PLD_V_CTX ? ctx_to_kernel(b->it, b->f.slots[slot].u.i)
                                                                                     : -1;
}

/* the tensor value for descriptor t when a's memory holds it: a itself, or
 * a view of a's buffer (window tensors keep their window), into *out;
 * 0 = not a's, -1 = failed */
static int tensor_value(crt_block_t *b, int site, const pc_tensor *t, const pld_value_t *a, pld_value_t *out)
{
    if (a->kind != PLD_V_TENSOR)
        return 0;
    const pld_tensor_t *x = pld_v_tensor(a);
    const char *lo = x->buf->data, *hi = lo + x->buf->bytes;
    if (t->data < lo || t->data >= hi)
        return 0;
    const int64_t es = pld_dtype_storage_bytes(x->dt);
    const int64_t off = (t->data - lo) / es;
    int same = off == x->offset && t->rank == x->rank && t->dt == (int32_t)x->dt;
    for (int d = 0; same && d < t->rank; d++)
        same = t->shape[d] == x->shape[d] && t->stride[d] == x->strides[d] && t->valid[d] == x->valid[d];
    if (same) {
        *out = *a;
        pld_value_retain(out);
        return 1;
    }
    pld_tensor_t *o = pld_tensor_view(x->buf, (pld_dtype_t)t->dt, t->rank, t->shape, off);
    if (!o) {
        rt_fail(b, site, "out of memory");
        return -1;
    }
    for (int d = 0; d < t->rank; d++) {
        o->strides[d] = t->stride[d];
        o->valid[d] = t->valid[d];
    }
    o->is_dist = x->is_dist;
    o->winbuf = x->winbuf;
    *out = pld_v_obj(&o->hdr, o->dt);
    return 1;
}

static int view_of(crt_block_t *b, int site, int slot, const pc_tensor *t, const pld_value_t *a)
{
    pld_value_t v;
    int r = tensor_value(b, site, t, a, &v);
    if (r <= 0)
        return r;
    return set_slot(b, slot, v) ? -1 : 1;
}

/* the value (a launch argument, a value of the frame a scope runs in, or a
 * tensor the runtime made for the block) whose memory holds descriptor t's
 * first element, or NULL */
static const pld_value_t *owner_of(const crt_block_t *b, const pc_tensor *t)
{
    const pld_sim_call_t *c = b->c;
    const pld_value_t *cand = c->fn ? c->args : c->caller->slots;
    const int np = c->fn ? c->fn->nparams : c->caller->nslots;
    for (int pass = 0; pass < 2; pass++) {
        const pld_value_t *v = pass ? b->made : cand;
        const int n = pass ? b->nmade : np;
        for (int i = 0; i < n; i++) {
            if (v[i].kind != PLD_V_TENSOR)
                continue;
            const pld_tensor_t *x = pld_v_tensor(&v[i]);
            const char *lo = x->buf->data;
            if (t->data >= lo && t->data < lo + x->buf->bytes)
                return &v[i];
        }
    }
    return NULL;
}

/* the tensor value of descriptor t: a view of the value that holds it */
static int rt_set_tensor(void *bk, int site, int slot, const pc_tensor *t)
{
    crt_block_t *b = bk;
    const pld_value_t *a = owner_of(b, t);
    if (!a)
        return rt_fail(b, site, "internal: a tensor of the compiled kernel is in no argument's memory");
    return view_of(b, site, slot, t, a) < 0;
}

static const void *rt_comm_ctx(void *bk, const pc_tensor *t)
{
    crt_block_t *b = bk;
    const pld_value_t *v = owner_of(b, t);
    const pld_tensor_t *x = v ? pld_v_tensor(v) : NULL;
    if (!x || !x->is_dist || x->winbuf < 0 || x->winbuf >= b->it->nwins)
        return NULL;
    const winbuf_t *w = &b->it->wins[x->winbuf];
    const domain_t *d = &b->it->doms[w->dom];
    /* the runtime path reports a rank outside the domain and a view whose
     * origin is not its slot's first byte; MPI RMA windows are reached only
     * through MPI, even this rank's own */
    if (d->me < 0 || !d->win || !w->buf || t->data != (const char *)w->buf->data ||
        pld_win_dom_transport(d->win) == PLD_WIN_RMA || pld_win_dom_transport(d->win) == PLD_WIN_HYBRID ||
        t->rank != x->rank)
        return NULL;
    /* the valid extents are the interpreter's (an argument's ChipTensor has none) */
    for (int k = 0; k < t->rank; k++)
        if (t->shape[k] != x->shape[k] || t->valid[k] != x->valid[k] || t->stride[k] != x->strides[k])
            return NULL;
    return pld_win_dom_ctx(d->win);
}

static int rt_set_tile(void *bk, int site, int slot, const pc_tile *t)
{
    crt_block_t *b = bk;
    pld_tile_t *o = pld_tile_new((pld_dtype_t)t->dt, t->rank, t->shape, PLD_MEM_VEC);
    if (!o)
        return rt_fail(b, site, "out of memory");
    memcpy(o->data, t->data, (size_t)pc_numel(t->shape, t->rank) * (size_t)pld_dtype_storage_bytes(o->dt));
    for (int d = 0; d < t->rank; d++)
        o->valid[d] = t->valid[d];
    return set_slot(b, slot, pld_tile_value(o));
}

static int to_out(crt_block_t *b, int site, pc_out *out);

/* 1 when a kernel's launch argument (they live as long as the launch) or a
 * tensor made for the block holds buffer buf */
static int holds_buffer(const crt_block_t *b, const pld_buffer_t *buf)
{
    const pld_sim_call_t *c = b->c;
    const pld_value_t *cand = c->fn ? c->args : NULL;
    const int np = c->fn ? c->fn->nparams : 0;
    for (int pass = 0; pass < 2; pass++) {
        const pld_value_t *v = pass ? b->made : cand;
        const int n = pass ? b->nmade : np;
        for (int i = 0; i < n; i++)
            if (v[i].kind == PLD_V_TENSOR && pld_v_tensor(&v[i])->buf == buf)
                return 1;
    }
    return 0;
}

/* b->last (an op's value) as what the kernel gets */

/* keeps tensor value v alive until the block ends (a tensor the runtime made
 * for the kernel); 1 after a recorded error */
static int keep_made(crt_block_t *b, int site, const pld_value_t *v)
{
    if (b->nmade == b->capmade) {
        int cap = b->capmade ? 2 * b->capmade : 8;
        pld_value_t *m = pld_mem_realloc(b->made, (size_t)cap * sizeof *m);
        if (!m)
            return rt_fail(b, site, "out of memory");
        b->made = m;
        b->capmade = cap;
    }
    b->made[b->nmade] = *v;
    pld_value_retain(&b->made[b->nmade++]);
    return 0;
}

/* the kernel's descriptor of tensor t (rank <= PC_MAX_RANK) */
static void pc_of_tensor(pc_tensor *o, const pld_tensor_t *t)
{
    o->data = (char *)t->buf->data + t->offset * pld_dtype_storage_bytes(t->dt);
    o->dt = (int32_t)t->dt;
    o->rank = t->rank;
    for (int d = 0; d < PC_MAX_RANK; d++) {
        o->shape[d] = d < t->rank ? t->shape[d] : 1;
        o->valid[d] = d < t->rank ? t->valid[d] : 1;
        o->stride[d] = d < t->rank ? t->strides[d] : 0;
    }
}

static int to_out(crt_block_t *b, int site, pc_out *out)
{
    const pld_value_t *v = &b->last;
    out->dt = (int32_t)v->dt;
    switch (v->kind) {
    case PLD_V_INT: out->kind = PC_OUT_INT; out->i = v->u.i; break;
    case PLD_V_FLOAT: out->kind = PC_OUT_FLOAT; out->f = v->u.f; break;
    case PLD_V_CTX: out->kind = PC_OUT_CTX; out->i = ctx_to_kernel(b->it, v->u.i); break;
    case PLD_V_TENSOR: {
        const pld_tensor_t *t = pld_v_tensor(v);
        if (t->rank > PC_MAX_RANK)
            return rt_fail(b, site, "a tensor of rank > 5 cannot enter a compiled kernel");
        /* a tensor over memory a value the block holds already owns (a
         * collective's or put's target): nothing to keep alive */
        if (holds_buffer(b, t->buf))
            goto described;
        if (keep_made(b, site, v))
            return 1;
    described:
        out->kind = PC_OUT_TENSOR;
        pc_of_tensor(&out->t, t);
        break;
    }
    case PLD_V_TILE: {
        const pld_tile_t *t = pld_v_tile(v);
        if (t->rank > PC_MAX_RANK)
            return rt_fail(b, site, "a tile of rank > 5 cannot enter a compiled kernel");
        out->kind = PC_OUT_TILE;
        out->tile.data = t->data;
        out->tile.dt = (int32_t)t->dt;
        out->tile.rank = t->rank;
        for (int d = 0; d < PC_MAX_RANK; d++) {
            out->tile.shape[d] = d < t->rank ? t->shape[d] : 1;
            out->tile.valid[d] = d < t->rank ? t->valid[d] : 1;
        }
        break;
    }
    default: out->kind = PC_OUT_NONE; break;
    }
    return 0;
}

/* the value of an operand the kernel evaluated (ae: its expression, for a
 * tile's memory space): 1 = *v set, 0 = none (absent, a list), -1 failed */
static int arg_value(crt_block_t *b, int site, const pc_arg *a, const pld_expr_t *ae, pld_value_t *v)
{
    *v = pld_v_none();
    switch (a->kind) {
    case PC_OUT_INT: *v = pld_v_int((pld_dtype_t)a->dt, a->i); return 1;
    case PC_OUT_FLOAT: *v = pld_v_float((pld_dtype_t)a->dt, a->f); return 1;
    case PC_OUT_CTX:
        v->kind = PLD_V_CTX;
        v->u.i = ctx_from_kernel(b->it, a->i);
        return 1;
    case PC_ARG_NONEVAL: return 1;
    case PC_OUT_TENSOR: {
        const pld_value_t *own = a->t ? owner_of(b, a->t) : NULL;
        if (!own) {
            rt_fail(b, site, "internal: a tensor of the compiled kernel is in no argument's memory");
            return -1;
        }
        return tensor_value(b, site, a->t, own, v) <= 0 ? -1 : 1;
    }
    case PC_OUT_TILE: {
        const pc_tile *t = a->tile;
        const pld_mem_t mem = ae && ae->type && ae->type->kind == PLD_TY_TILE && ae->type->mem != PLD_MEM_NONE
                                  ? ae->type->mem : PLD_MEM_VEC;
        pld_tile_t *o = t ? pld_tile_new((pld_dtype_t)t->dt, t->rank, t->shape, mem) : NULL;
        if (!o) {
            rt_fail(b, site, "out of memory");
            return -1;
        }
        memcpy(o->data, t->data, (size_t)pc_numel(t->shape, t->rank) * (size_t)pld_dtype_storage_bytes(o->dt));
        for (int d = 0; d < t->rank; d++)
            o->valid[d] = t->valid[d];
        *v = pld_tile_value(o);
        return 1;
    }
    default: return 0;
    }
}

/* a pld.* op with the operands the kernel evaluated: the interpreter's
 * binding of the op (pld_exec_dist.c / pld_exec_coll.c) reads them through
 * the frame's operand table (pld_opvals_t) instead of evaluating its
 * arguments; the op then runs as on sim (same checks, messages, window
 * layer calls) */
static int rt_op(void *bk, int site, pc_arg *args, int n, pc_out *out)
{
    crt_block_t *b = bk;
    pld_interp_t *it = b->it;
    const pld_expr_t *e = site_expr(b, site);
    memset(out, 0, sizeof *out);
    if (!e || e->kind != PLD_EX_CALL || e->op < 0 || n < 0 || n > PLD_OP_MAX_PARAMS)
        return rt_fail(b, site, "internal: a runtime op at an unknown site");
    pld_opvals_t *ov = pld_mem_calloc(1, sizeof *ov);
    if (!ov)
        return rt_fail(b, site, "out of memory");
    ov->e = e;
    int bad = 0;
    for (int i = 0; i < n && !bad; i++) {
        const int r = arg_value(b, site, &args[i], pld_op_arg(e, i), &ov->v[i]);
        if (r < 0)
            bad = 1;
        else if (r > 0)
            ov->given[i] = 1;
        else if (args[i].kind == PC_ARG_LIST) {
            if (args[i].n < 0 || args[i].n > 8) {
                bad = rt_fail(b, site, "internal: a runtime op's list operand is too long");
                break;
            }
            ov->nlist[i] = args[i].n;
            memcpy(ov->list[i], args[i].list, (size_t)args[i].n * sizeof args[i].list[0]);
            ov->given[i] = 2;
        }
    }
    int rc = bad;
    if (!bad) {
        pld_value_release(&b->last);
        pld_where_at(it, &b->f, e->span);
        it->ops_seen[e->op] = 1;
        const pld_opvals_t *saved = b->f.opvals;
        b->f.opvals = ov;
        pld_status_t st = pld_rt_step(it, &b->f, e->span);
        if (st == PLD_OK)
            st = pld_exec_op(it, &b->f, e, &b->last);
        b->f.opvals = saved;
        if (st != PLD_OK) {
            b->failed = 1;
            rc = 1;
        }
        /* tile operands the op filled go back to the kernel's tiles */
        for (int i = 0; i < n && !rc; i++)
            if (args[i].kind == PC_OUT_TILE && ov->given[i] == 1 && ov->v[i].kind == PLD_V_TILE) {
                const pld_tile_t *o = pld_v_tile(&ov->v[i]);
                pc_tile *t = args[i].tile;
                memcpy(t->data, o->data, (size_t)pc_numel(t->shape, t->rank) * (size_t)pld_dtype_storage_bytes(o->dt));
                for (int d = 0; d < t->rank; d++)
                    t->valid[d] = o->valid[d];
            }
        if (!rc)
            rc = to_out(b, site, out);
    }
    for (int i = 0; i < n; i++)
        pld_value_release(&ov->v[i]);
    pld_mem_free(ov);
    return rc;
}

static int rt_tile_bound(void *bk, int site, int slot, int32_t seq, int32_t mem, int64_t bytes)
{
    crt_block_t *b = bk;
    if (slot < 0 || slot >= b->f.nslots)
        return rt_fail(b, site, "internal: a compiled kernel named a local that does not exist");
    b->ub[slot].bytes = bytes;
    b->ub[slot].mem = (pld_mem_t)mem;
    if (pld_ub_check(b->it, &b->f, b->f.fn, seq, slot, b->ub, b->f.nslots, site_span(b, site)) != PLD_OK) {
        b->failed = 1;
        return 1;
    }
    return 0;
}

static int rt_ub_needed(void *bk, const int64_t *bytes, int n)
{
    crt_block_t *b = bk;
    return pld_ub_may_overflow(b->it, bytes, n);
}

static int ret_value(crt_block_t *b, int site, int i, int n, pld_value_t v);

/* `return v0, ..., vn-1` with value i evaluated by the kernel */
static int rt_ret_val(void *bk, int site, int i, int n, const pc_arg *a)
{
    crt_block_t *b = bk;
    const pld_expr_t *e = site_expr(b, site);
    pld_value_t v;
    if (!e || n < 1 || i < 0 || i >= n || arg_value(b, site, a, e, &v) < 0)
        return b->failed ? 1 : rt_fail(b, site, "internal: a bad return");
    return ret_value(b, site, i, n, v);
}

/* takes v */
static int ret_value(crt_block_t *b, int site, int i, int n, pld_value_t v)
{
    pld_sim_call_t *c = b->c;
    if (b->nested) { /* a called kernel function: its value goes back to the caller */
        if (n != 1) {
            pld_value_release(&v);
            return rt_fail(b, site, "a called kernel returning several values is not compiled by the native backend yet");
        }
        pld_value_release(&b->result);
        b->result = v;
        return 0;
    }
    if (b->f.block_idx != 0) { /* block 0's return value is the task's result */
        pld_value_release(&v);
        return 0;
    }
    if (n == 1) {
        pld_value_release(&c->result);
        c->result = v;
    } else {
        if (i == 0) {
            pld_tuple_t *t = pld_tuple_new(n);
            if (!t) {
                pld_value_release(&v);
                return rt_fail(b, site, "out of memory");
            }
            pld_value_release(&c->result);
            c->result = pld_v_obj(&t->hdr, PLD_DT_NONE);
        }
        if (c->result.kind != PLD_V_TUPLE) {
            pld_value_release(&v);
            return rt_fail(b, site, "internal: a return value out of order");
        }
        pld_tuple_t *t = pld_v_tuple(&c->result);
        pld_value_release(&t->items[i]);
        t->items[i] = v;
    }
    c->result_set = 1;
    return 0;
}

static int rt_kfail(void *bk, int site, const char *err)
{
    return kfail(bk, site, PLD_E_RUNTIME, err);
}

/* storage of a compiled tensor op's pool: a tensor the block holds (b->made,
 * so that set_tensor finds views of it) */
static void *rt_tensor_buf(void *bk, int site, int32_t dt, int64_t n)
{
    crt_block_t *b = bk;
    int64_t shape[1] = {n > 0 ? n : 1};
    if (b->nmade == b->capmade) {
        int cap = b->capmade ? 2 * b->capmade : 8;
        pld_value_t *m = pld_mem_realloc(b->made, (size_t)cap * sizeof *m);
        if (!m) {
            rt_fail(b, site, "out of memory");
            return NULL;
        }
        b->made = m;
        b->capmade = cap;
    }
    pld_tensor_t *t = pld_tensor_new((pld_dtype_t)dt, 1, shape, 1);
    if (!t) {
        rt_fail(b, site, "out of memory for tensor storage");
        return NULL;
    }
    b->made[b->nmade++] = pld_v_obj(&t->hdr, t->dt);
    return (char *)t->buf->data;
}

static int rt_dyn_dim(void *bk, int site, const char *name, int64_t *out)
{
    crt_block_t *b = bk;
    if (pld_dyn_get(b->it, name, out))
        return 0;
    char m[200];
    snprintf(m, sizeof m, "dynamic dimension '%s' is not bound (no input shape defines it)", name);
    return rt_fail(b, site, m);
}

static int rt_assemble(void *bk, int site, const pc_tensor *dst, const pc_tensor *src, const int64_t *off, int noff,
                       int atomic)
{
    crt_block_t *b = bk;
    pld_tensor_t td, ts;
    pld_buffer_t bd, bs;
    as_tensor(dst, &td, &bd);
    as_tensor(src, &ts, &bs);
    for (int d = 0; d < src->rank; d++) /* the source's valid region is what is written */
        ts.valid[d] = src->valid[d] < src->shape[d] ? src->valid[d] : src->shape[d];
    if (pld_assemble_tensor(b->it, &b->f, site_expr(b, site), &td, &ts, off, noff, atomic) != PLD_OK)
        return rt_fail(b, site, "");
    return 0;
}

/* --dump: the operand of marker `site` as the interpreter's value, then the
 * binding sim runs (pld_dump_tag: the tool's hook) */
static int rt_dump(void *bk, int site, const pc_tensor *t, const pc_tile *tile)
{
    crt_block_t *b = bk;
    const pld_expr_t *e = site_expr(b, site);
    if (!e || e->kind != PLD_EX_CALL || e->op != PLD_OPID_PL_DUMP_TAG || e->u.call.nargs != 1)
        return rt_fail(b, site, "internal: a dump marker at an unknown site");
    pc_arg a;
    memset(&a, 0, sizeof a);
    a.kind = t ? PC_OUT_TENSOR : PC_OUT_TILE;
    a.t = t;
    a.tile = (pc_tile *)tile;
    pld_value_t v;
    if (arg_value(b, site, &a, e->u.call.args[0].value, &v) <= 0)
        return 1;
    pld_where_at(b->it, &b->f, e->span);
    pld_status_t st = pld_dump_tag(b->it, &b->f, e, &v);
    pld_value_release(&v);
    if (st != PLD_OK)
        b->failed = 1;
    return st != PLD_OK;
}

static const pc_rt crt_table = {
    PC_VERSION, sizeof(pc_rt), rt_fail, rt_alloc, rt_tick, rt_round_f, rt_wrap_i, rt_from_bits, rt_load, rt_store,
    rt_get_f, rt_get_i, rt_set_f, rt_set_i, rt_fill,
    rt_set_int, rt_set_float, rt_set_tensor, rt_set_tile, rt_set_ctx, rt_param_ctx, rt_comm_ctx, rt_tile_bound, rt_ub_needed,
    &pld_cgen_kern_table, rt_kfail,
    pld_crt_sys_info, pld_crt_task_dummy, pld_crt_xcore, pld_crt_tpush, pld_crt_tpop, pld_crt_call, pld_crt_group,
    pld_crt_lanes, pld_crt_shard,
    rt_op, rt_ret_val,
    rt_tensor_buf, rt_assemble, rt_dyn_dim,
    rt_dump,
    rt_tick_n,
};

/* ---- kernel functions called by compiled code (pld_crt_sys.c) ---- */

static int host_block_close(void *bk, int rc);

void *pld_crt_nested_open(void *parent, int fidx, int site)
{
    crt_block_t *pb = parent;
    pld_interp_t *it = pb->it;
    const pld_cgen_t *code = fidx < 0 ? pb->code
                             : it->cgen && fidx < it->p->nfuncs && it->cgen[fidx].source ? &it->cgen[fidx] : NULL;
    if (!code) {
        rt_fail(pb, site, "internal: the called kernel has no compiled code");
        return NULL;
    }
    const pld_func_t *fn = fidx < 0 ? pb->f.fn : it->p->funcs[fidx];
    crt_block_t *b = pld_mem_calloc(1, sizeof *b);
    pld_value_t *slots = pld_mem_calloc((size_t)(fn->nslots > 0 ? fn->nslots : 1), sizeof *slots);
    pld_ub_slot_t *ub = pld_mem_calloc((size_t)(fn->nslots > 0 ? fn->nslots : 1), sizeof *ub);
    if (!b || !slots || !ub) {
        pld_mem_free(b);
        pld_mem_free(slots);
        pld_mem_free(ub);
        rt_fail(pb, site, "out of memory");
        return NULL;
    }
    b->it = it;
    b->c = pb->c;
    b->code = code;
    b->last = b->result = pld_v_none();
    b->own_slots = 1;
    b->nested = 1;
    b->t0 = pld_trace_now();
    b->ub = ub;
    pld_walk_frame_init(&b->f, &pb->f, fn, slots, PLD_CTX_KERNEL, site_span(pb, site));
    b->f.depth = pb->f.depth + 1;
    b->f.block_idx = pb->f.block_idx;
    b->f.block_num = pb->f.block_num;
    b->f.subblock_idx = pb->f.subblock_idx;
    b->f.xg = pb->f.xg;
    b->f.xcore = pb->f.xcore;
    b->f.lanes = pb->f.lanes;
    return b;
}

int pld_crt_nested_close(void *bk, int rc, pld_value_t *result)
{
    crt_block_t *b = bk;
    *result = b->result;
    b->result = pld_v_none();
    return host_block_close(b, rc);
}

int pld_crt_out(void *bk, int site, const pld_value_t *v, pc_out *out)
{
    crt_block_t *b = bk;
    memset(out, 0, sizeof *out);
    out->dt = (int32_t)v->dt;
    switch (v->kind) {
    case PLD_V_INT: out->kind = PC_OUT_INT; out->i = v->u.i; return 0;
    case PLD_V_FLOAT: out->kind = PC_OUT_FLOAT; out->f = v->u.f; return 0;
    case PLD_V_TENSOR: {
        const pld_tensor_t *t = pld_v_tensor(v);
        if (t->rank > PC_MAX_RANK)
            return rt_fail(b, site, "a tensor of rank > 5 cannot enter a compiled kernel");
        out->kind = PC_OUT_TENSOR;
        pc_of_tensor(&out->t, t);
        /* kept alive until the block ends, unless a launch argument or a
         * tensor already kept holds its memory (a call in a loop returning
         * its Out parameter keeps nothing) */
        if (owner_of(b, &out->t))
            return 0;
        return keep_made(b, site, v);
    }
    default: out->kind = PC_OUT_NONE; return 0;
    }
}

pld_interp_t *pld_crt_block(void *bk, frame_t **f, int site, const pld_expr_t **e, pld_span_t *sp)
{
    crt_block_t *b = bk;
    *f = &b->f;
    *e = site_expr(b, site);
    *sp = site_span(b, site);
    return b->it;
}

/* ---- pld_be_host_t ---- */

typedef struct run_arg {
    int (*fn)(void *arg, int b, int n);
    void *arg;
    pld_sim_call_t *c;
} run_arg_t;

static pld_status_t run_one(void *arg, int b, int n)
{
    run_arg_t *r = arg;
    pld_interp_t *it = r->c->it;
    pld_ev_t ev;
    if (it->trace && n > 1) {
        frame_t bf = *r->c->caller;
        bf.block_idx = b;
        bf.block_num = n;
        pld_tr_init(&bf, r->c->span, &ev, PLD_EV_BLOCK, r->c->fn ? r->c->fn->name : "scope");
        pld_trace_begin(it->trace, &ev);
    }
    pld_status_t st = r->fn(r->arg, b, n) == 0 ? PLD_OK : PLD_E_RUNTIME;
    if (it->trace && n > 1) {
        ev.failed = st != PLD_OK;
        pld_trace_end(it->trace, &ev);
    }
    return st;
}

static int host_run_blocks(void *launch_ctx, uint32_t n, int (*fn)(void *arg, int b, int n), void *arg)
{
    pld_sim_call_t *c = launch_ctx;
    run_arg_t r = {fn, arg, c};
    return pld_npu_run_blocks(c->it->sched, (int)(n ? n : 1), c->it->opts.block_stack_bytes, run_one, &r) == PLD_OK
               ? 0 : 1;
}

static const pld_cgen_t *scope_code(const pld_interp_t *it, const pld_stmt_t *s)
{
    for (int i = 0; s && i < it->ncgen_scopes; i++)
        if (it->cgen_scopes[i].s == s)
            return it->cgen_scopes[i].code.source ? &it->cgen_scopes[i].code : NULL;
    return NULL;
}

static int host_block_close(void *bk, int rc);

static void *host_block_open(void *launch_ctx, int bi, int n)
{
    pld_sim_call_t *c = launch_ctx;
    pld_interp_t *it = c->it;
    const pld_cgen_t *code = NULL;
    for (int i = 0; c->fn && i < it->p->nfuncs; i++)
        if (it->p->funcs[i] == c->fn && it->cgen && it->cgen[i].source)
            code = &it->cgen[i];
    if (!c->fn)
        code = scope_code(it, c->stmt);
    /* a kernel: a fresh frame; a pl.spmd grid: a copy of the caller's per
     * block (as sim); a pl.at scope: the caller's frame itself */
    const pld_func_t *fn = c->fn ? c->fn : c->caller->fn;
    const int own = c->fn || c->grid;
    crt_block_t *b = pld_mem_calloc(1, sizeof *b);
    pld_value_t *slots = own && fn ? pld_mem_calloc((size_t)(fn->nslots > 0 ? fn->nslots : 1), sizeof *slots) : NULL;
    if (!b || (own && !slots) || !code || !fn) {
        pld_mem_free(b);
        pld_mem_free(slots);
        pld_rt_error(it, c->caller, c->span, code ? "out of memory" : "internal: no compiled code for this kernel");
        return NULL;
    }
    b->it = it;
    b->c = c;
    b->code = code;
    b->last = b->result = pld_v_none();
    b->own_slots = own;
    b->t0 = pld_trace_now();
    if (c->fn) {
        pld_walk_frame_init(&b->f, c->caller, c->fn, slots, PLD_CTX_KERNEL, c->span);
        b->f.depth = c->caller ? c->caller->depth + 1 : 1;
        for (int i = 0; i < c->fn->nparams; i++) {
            const int s = c->fn->params[i].slot;
            if (s >= 0 && s < b->f.nslots) {
                b->f.slots[s] = c->args[i];
                pld_value_retain(&b->f.slots[s]);
            }
        }
    } else {
        b->f = *c->caller;
        b->f.ctx = PLD_CTX_KERNEL;
        b->f.in_kernel_scope = 1;
        b->f.loop = NULL;
        b->f.ret = pld_v_none();
        if (own) {
            b->f.slots = slots;
            for (int k = 0; k < b->f.nslots; k++)
                pld_value_set(&slots[k], &c->caller->slots[k]);
        }
    }
    b->f.block_idx = bi;
    b->f.block_num = n;
    b->f.ckernel = 1;
    b->f.opvals = NULL;
    b->ub = pld_mem_calloc((size_t)(b->f.nslots > 0 ? b->f.nslots : 1), sizeof *b->ub);
    if (!b->ub) {
        host_block_close(b, 1);
        return NULL;
    }
    return b;
}

static int host_block_close(void *bk, int rc)
{
    crt_block_t *b = bk;
    if (!b)
        return 1;
    int failed = rc != 0 || b->failed;
    if (failed && !b->it->failed)
        pld_rt_error(b->it, &b->f, b->c->span, "compiled kernel %s failed (code %d)",
                     b->c->fn ? b->c->fn->name : "scope", rc);
    pld_value_release(&b->last);
    pld_value_release(&b->result);
    for (int i = 0; i < b->nmade; i++)
        pld_value_release(&b->made[i]);
    pld_mem_free(b->made);
    if (b->own_slots) {
        for (int i = 0; i < b->f.nslots; i++)
            pld_value_release(&b->f.slots[i]);
        pld_mem_free(b->f.slots);
    }
    pld_value_release(&b->f.ret);
    for (int i = 0; i < b->nallocs; i++)
        free(b->allocs[i]);
    pld_mem_free(b->allocs);
    pld_mem_free(b->ub);
    pld_mem_free(b);
    return failed;
}

static int host_run_builtin(void *launch_ctx)
{
    pld_sim_call_t *c = launch_ctx;
    if (!c->builtin)
        return 1;
    c->ran = 1;
    return pld_builtin_run_sim(c) == PLD_OK ? 0 : 1;
}

static int host_should_stop(void *launch_ctx)
{
    const pld_sim_call_t *c = launch_ctx;
    return c && c->it->win ? pld_win_status_aborted(c->it->win) != 0 : 0;
}

static const pld_be_host_t host_table = {
    sizeof(pld_be_host_t), host_run_blocks, &crt_table, host_block_open, host_block_close, host_run_builtin,
    host_should_stop,
};

const pld_be_host_t *pld_interp_be_host(void)
{
    return &host_table;
}

/* ---- the C code of the program's kernels, for a C-kernel backend ---- */

void pld_crt_gen(pld_interp_t *it)
{
    if (it->cgen || !(pld_hw_caps(it->hw) & PLD_BE_CAP_C_KERNELS))
        return;
    it->cgen = pld_mem_calloc((size_t)(it->p->nfuncs > 0 ? it->p->nfuncs : 1), sizeof *it->cgen);
    if (!it->cgen)
        return;
    for (int i = 0; i < it->p->nfuncs; i++) {
        const pld_func_t *fn = it->p->funcs[i];
        if (pld_check_func_ctx(fn) == PLD_CTX_KERNEL)
            pld_cgen_kernel(it->p, fn, pld_crt_text, &it->cgen[i]);
    }
}

void pld_crt_describe_scope(pld_interp_t *it, const pld_func_t *fn, const pld_stmt_t *s, pld_be_kernel_desc_t *d)
{
    if (!it->cgen)
        return;
    for (int i = 0; i < it->ncgen_scopes; i++)
        if (it->cgen_scopes[i].s == s) {
            d->c_source = it->cgen_scopes[i].code.source;
            d->c_unsupported = d->c_source ? NULL : it->cgen_scopes[i].code.err;
            return;
        }
    struct pld_cgen_scope *n = pld_mem_realloc(it->cgen_scopes, (size_t)(it->ncgen_scopes + 1) * sizeof *n);
    if (!n) {
        d->c_unsupported = "out of memory";
        return;
    }
    it->cgen_scopes = n;
    struct pld_cgen_scope *e = &n[it->ncgen_scopes++];
    e->s = s;
    if (!fn)
        snprintf(e->code.err, sizeof e->code.err, "a scope outside a function");
    else
        pld_cgen_scope(it->p, fn, s, pld_crt_text, &e->code);
    d->c_source = e->code.source;
    d->c_unsupported = d->c_source ? NULL : e->code.err;
}

void pld_crt_fini(pld_interp_t *it)
{
    for (int i = 0; i < it->ncgen_scopes; i++)
        pld_cgen_free(&it->cgen_scopes[i].code);
    pld_mem_free(it->cgen_scopes);
    it->cgen_scopes = NULL;
    it->ncgen_scopes = 0;
    for (int i = 0; it->cgen && i < it->p->nfuncs; i++)
        pld_cgen_free(&it->cgen[i]);
    pld_mem_free(it->cgen);
    it->cgen = NULL;
}

void pld_crt_describe(const pld_interp_t *it, int fidx, pld_be_kernel_desc_t *d)
{
    if (!it->cgen)
        return;
    if (fidx < 0 || fidx >= it->p->nfuncs) {
        d->c_unsupported = "pl.at / pl.spmd scope bodies are not compiled to C yet (only kernel functions are)";
        return;
    }
    d->c_source = it->cgen[fidx].source;
    d->c_unsupported = it->cgen[fidx].source ? NULL : it->cgen[fidx].err;
}
