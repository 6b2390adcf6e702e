/* pld_coll.c - the common machinery of the collective protocols
 * (pld_coll.h): the call and its signal, the self-clearing credit barrier on
 * the signal cells (AtomicAdd +1 into every peer's cell for this rank, wait Ge
 * on the own cells, and an epilogue that subtracts every credit received),
 * data movement (remote regions through the caller's hook, this rank's
 * memory directly), folds, the kept buffers and the post-condition.
 *
 * So a rank that calls a different collective, or calls it with a different
 * shape, leaves the others waiting and the caller's hang watchdog reports it;
 * and a completed call leaves every signal cell it used at zero on every rank.
 * The multi-block HOST/CHIP forms (core_num > 1) run their blocks in
 * lockstep: every step first issues the notifies of every block, then waits
 * for every block, so no block ever waits for something a later block of the
 * same rank must do. */
#include "pld_coll_int.h"
#include "pld_assert.h"
#include "pld_mem.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ the call */

void pld_coll_bufs_fini(pld_coll_bufs_t *b)
{
    pld_mem_free(b->buf);
    memset(b, 0, sizeof *b);
}

void pld_coll_set_signal(pld_coll_t *c, const pld_coll_view_t *s, const char *text)
{
    c->sigdesc = *s;
    c->sig = &c->sigdesc;
    c->has_sig = 1;
    snprintf(c->sigtext, sizeof c->sigtext, "%s", text ? text : "<synthesized signal>");
}

void pld_coll_kview(const pld_coll_view_t *t, pld_view_t *v)
{
    memset(v, 0, sizeof *v);
    v->data = t->data;
    v->dt = t->dt;
    v->rank = t->rank;
    memcpy(v->shape, t->shape, (size_t)t->rank * sizeof *v->shape);
    memcpy(v->strides, t->strides, (size_t)t->rank * sizeof *v->strides);
}

void *pld_coll_at(const pld_coll_view_t *t, const int64_t *idx)
{
    int64_t off = 0;
    for (int i = 0; i < t->rank; i++)
        off += idx[i] * t->strides[i];
    return t->data + off * pld_dtype_bytes(t->dt);
}

size_t pld_coll_disp(const pld_coll_t *c, const pld_coll_view_t *v, const int64_t *idx)
{
    return (size_t)((char *)pld_coll_at(v, idx) - (char *)pld_win_dom_base(c->dom));
}

pld_status_t pld_coll_fail(pld_coll_t *c, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return c->h->error(c->ctx, msg);
}

/* The kind of a warning is recognised by a marker its messages contain. */
static const char *const warn_marker[] = {"does nothing", "send_counts[", "signal dim 0"};

void pld_coll_warn(pld_coll_t *c, int kind, const char *fmt, ...)
{
    if (kind != PLD_COLL_W_COUNTS && c->me != 0)
        return; /* rank-symmetric: domain rank 0 reports it */
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    c->h->warn(c->ctx, warn_marker[kind], msg);
}

pld_status_t pld_coll_oom(coll_t *c)
{
    return pld_coll_fail(c, "%s: out of memory", c->cname);
}

/* ------------------------------------------------------------ signal cells */

/* Displacement of the cell of rank `r` in slot k: [r, k] for mesh signals
 * (k = lane; rank-1 signals have one lane), [k, r] for ring signals (k = row). */
static size_t cell_disp(const coll_t *c, int64_t r, int64_t k)
{
    int64_t idx[2];
    if (c->sig->rank == 1) {
        idx[0] = r;
    } else if (c->ring) {
        idx[0] = k;
        idx[1] = r;
    } else {
        idx[0] = r;
        idx[1] = k;
    }
    return pld_coll_disp(c, c->sig, idx);
}

uint64_t pld_coll_all_peers(const coll_t *c)
{
    uint64_t m = c->P >= 64 ? ~(uint64_t)0 : RBIT(c->P) - 1;
    return m & ~RBIT(c->me);
}

/* lead, then "rank 2" or "ranks 2, 3" (the ranks of mask, ascending), into
 * buf (n bytes); returns the length (n or more when cut short). */
size_t pld_coll_rank_list(char *buf, size_t n, const char *lead, uint64_t mask, int P)
{
    int cnt = 0;
    for (int q = 0; q < P; q++)
        cnt += (mask & RBIT(q)) != 0;
    size_t k = (size_t)snprintf(buf, n, "%srank%s", lead, cnt > 1 ? "s" : "");
    for (int q = 0, i = 0; q < P && k < n; q++)
        if (mask & RBIT(q))
            k += (size_t)snprintf(buf + k, n - k, "%s %d", i++ ? "," : "", q);
    return k;
}

/* "all_to_all_v: wait for the rows to and from ranks 2, 3 (messages across
 * hosts) in f": a wait for two-sided transfers (pld_win_xset), of `what`
 * ("rows", "parts") with the members in `far`. */
void pld_coll_describe_far_wait(const void *ctx, char *what, size_t n)
{
    const far_wait_t *w = ctx;
    const coll_t *c = w->c;
    char lead[80];
    snprintf(lead, sizeof lead, "%s: wait for the %s to and from ", c->name, w->what);
    const size_t k = pld_coll_rank_list(what, n, lead, w->far, c->P);
    if (k < n)
        snprintf(what + k, n - k, " (messages across hosts) in %s", c->fn);
}

/* Credit +n into the cell for this rank (slot k) of every peer in `to`: n
 * barriers' arrivals at once (merged steps). */
pld_status_t pld_coll_arrive_to(coll_t *c, int64_t k, int32_t n, uint64_t to)
{
    for (int q = 0; q < c->P; q++) {
        if (q == c->me || !(to & RBIT(q)))
            continue;
        pld_status_t st = c->h->notify(c->ctx, q, cell_disp(c, c->me, k), n, 0);
        if (st != PLD_OK)
            return st;
    }
    return PLD_OK;
}

pld_status_t pld_coll_arrive_n(coll_t *c, int64_t k, int32_t n)
{
    return pld_coll_arrive_to(c, k, n, pld_coll_all_peers(c));
}

/* Credit +1 into every peer's cell for this rank (slot k). */
pld_status_t pld_coll_arrive(coll_t *c, int64_t k)
{
    return pld_coll_arrive_n(c, k, 1);
}

/* "allreduce (mesh): wait on sig[q, k] >= g in f" (formatted only when the
 * wait blocks or fails). */
typedef struct coll_wait {
    const coll_t *c;
    int q;
    int64_t k;
    int32_t g;
} coll_wait_t;

static void describe_coll_wait(const void *ctx, char *what, size_t n)
{
    const coll_wait_t *w = ctx;
    const coll_t *c = w->c;
    const char *fn = c->fn;
    if (c->sig->rank == 1)
        snprintf(what, n, "%s: wait on %s[%d] >= %d in %s", c->name, c->sigtext, w->q, (int)w->g, fn);
    else
        snprintf(what, n, "%s: wait on %s[%lld, %lld] >= %d in %s", c->name, c->sigtext,
                 (long long)(c->ring ? w->k : w->q), (long long)(c->ring ? w->q : w->k), (int)w->g, fn);
}

/* Waits until this rank's cell of every peer in `from` (slot k) is >= g. */
pld_status_t pld_coll_await_from(coll_t *c, int64_t k, int32_t g, uint64_t from)
{
    for (int q = 0; q < c->P; q++) {
        if (q == c->me || !(from & RBIT(q)))
            continue;
        coll_wait_t w = {c, q, k, g};
        pld_status_t st = c->h->wait(c->ctx, cell_disp(c, q, k), PLD_CMP_GE, g,
                                           describe_coll_wait, &w);
        if (st != PLD_OK)
            return st;
    }
    return PLD_OK;
}

pld_status_t pld_coll_await_all(coll_t *c, int64_t k, int32_t g)
{
    return pld_coll_await_from(c, k, g, pld_coll_all_peers(c));
}

/* tracing: lane b of `lanes` goes on block b's track (the HOST builtin
 * kernel runs one block per lane on a card; here they take turns) */
void pld_coll_lane_track(coll_t *c, int64_t b, int64_t lanes)
{
    if (c->trace && lanes > 1)
        c->h->track(c->ctx, b, lanes);
}

/* A PHASE event of c (tracing): begins at once, ended by phase_end. */
void pld_coll_phase_begin(coll_t *c, pld_ev_t *ev, const char *name)
{
    c->h->ev_init(c->ctx, ev, PLD_EV_PHASE, name);
    ev->obj = c->sigtext;
    pld_trace_begin(c->trace, ev);
}

pld_status_t pld_coll_phase_end(coll_t *c, pld_ev_t *ev, pld_status_t st)
{
    ev->failed = st != PLD_OK;
    pld_trace_end(c->trace, ev);
    return st;
}

/* n barriers of slot k at once: credit +n, then wait for credit g from every
 * peer (n = 1: one barrier). */
pld_status_t pld_coll_bar_n(coll_t *c, int64_t k, int32_t n, int32_t g)
{
    pld_ev_t ev;
    char name[80];
    if (c->trace) {
        if (n > 1)
            snprintf(name, sizeof name, "%d merged barriers (slot %lld, credit %d)", (int)n, (long long)k, (int)g);
        else
            snprintf(name, sizeof name, g == 1 ? "entry barrier (slot %lld)" : "barrier (slot %lld, credit %d)",
                     (long long)k, (int)g);
        pld_coll_phase_begin(c, &ev, name);
    }
    pld_status_t st = pld_coll_arrive_n(c, k, n);
    st = st != PLD_OK ? st : pld_coll_await_all(c, k, g);
    return c->trace ? pld_coll_phase_end(c, &ev, st) : st;
}

pld_status_t pld_coll_bar(coll_t *c, int64_t k, int32_t g)
{
    return pld_coll_bar_n(c, k, 1, g);
}

/* How many consecutive chunks (tiles) of `unit` elements of dtype size esz
 * one step of a mesh allreduce covers: as many as fit in MERGE_BYTES, on
 * every transport (across hosts each barrier and each transfer costs a
 * network round trip; on one host a per-chunk barrier costs a few atomics,
 * but a scheduler round when ranks share cores, and a merged step reads and
 * stores each range once: docs/transport.md, "Merged collective steps");
 * 1 under --collective-steps chunk. A merged step reads its whole range from
 * every peer, then passes its barriers at once (one notify of +n per peer,
 * one wait for the last credit), then stores: every rank still reads every
 * chunk before any rank stores it, and every element is folded in the same
 * order, so the results are bit-identical, and the signal cells see the same
 * total credit (a mismatched call still hangs at the same final count). Only
 * the intermediate cell values a per-chunk protocol passes through are
 * skipped; no correct program can observe them. */
int64_t pld_coll_merged_step(const coll_t *c, int64_t unit, int esz)
{
    if (c->chunk_steps)
        return 1;
    int64_t n = MERGE_BYTES / (unit * esz);
    return n > 1 ? n : 1;
}

/* The InCore ring's sub-chunks of `unit` elements per step: merged_step's,
 * but at most RING_STEP_BYTES. A ring step streams one segment (the left
 * neighbour's, this rank's, the fold, the store), and a bigger one spills the
 * cache: per 1 Mi FP32 call at P = 4 on one host, 14 ms at 1 MiB steps, 2-3
 * ms at 64-128 KiB, 8.5 ms per chunk (docs/transport.md, "The InCore ring"). */
int64_t pld_coll_ring_step(const coll_t *c, int64_t unit, int esz)
{
    if (c->device_order)
        return 1; /* a merged ring step stores its sub-chunks after barriers the device stores them before */
    const int64_t g = pld_coll_merged_step(c, unit, esz), cap = RING_STEP_BYTES / (unit * esz);
    return g < cap ? g : cap > 1 ? cap : 1;
}

/* Whether a row exchange sends its puts as one batch (one flush for all):
 * over RMA windows (rma, and hybrid towards another host), where each flush
 * costs a round trip; nobody reads the rows before the barrier after them. */
int pld_coll_rows_batched(const coll_t *c)
{
    const pld_win_transport_t tr = pld_win_dom_transport(c->dom);
    return (tr == PLD_WIN_HYBRID || tr == PLD_WIN_RMA) && c->can_batch;
}

/* Epilogue: subtract the n credits received from every peer (self-notify). */
pld_status_t pld_coll_clear(coll_t *c, int64_t k, int32_t n)
{
    if (n == 0)
        return PLD_OK;
    pld_ev_t ev;
    if (c->trace)
        pld_coll_phase_begin(c, &ev, "epilogue: clear the credits");
    pld_status_t st = PLD_OK;
    for (int q = 0; q < c->P && st == PLD_OK; q++)
        if (q != c->me)
            st = c->h->notify(c->ctx, c->me, cell_disp(c, q, k), -n, 0);
    return c->trace ? pld_coll_phase_end(c, &ev, st) : st;
}
/* ------------------------------------------------------------ data movement */

int pld_coll_view_packed(const pld_coll_view_t *t)
{
    int64_t s = 1;
    for (int k = t->rank - 1; k >= 0; k--) {
        if (t->shape[k] != 1 && t->strides[k] != s)
            return 0;
        s *= t->shape[k];
    }
    return 1;
}

int pld_coll_fully_valid(const pld_coll_view_t *t)
{
    for (int k = 0; k < t->rank; k++)
        if (t->valid[k] != t->shape[k])
            return 0;
    return 1;
}

/* A rank-1 descriptor over the elements of packed tensor t (borrowed buffer;
 * never released). */
void pld_coll_flat_desc(const pld_coll_view_t *t, pld_coll_view_t *out, int64_t n)
{
    *out = *t;
    out->rank = 1;
    out->shape[0] = n;
    out->strides[0] = 1;
    out->valid[0] = n;
}

/* A read of the box [off, off+ext) of a tensor in this rank's memory, as the
 * checking modes see it: --poison checks it, --check-races records it. */
void pld_coll_local_read_seen(coll_t *c, const pld_coll_view_t *t, const int64_t *off, const int64_t *ext)
{
    if (c->seen)
        c->h->local(c->ctx, t, off, ext, 0);
}

/* Copies the box [off, off+ext) of a tensor in this rank's memory to (dir 0)
 * or from (dir 1) a packed buffer. */
pld_status_t pld_coll_local_io(coll_t *c, const pld_coll_view_t *t, const int64_t *off, const int64_t *ext, void *buf,
                             int dir)
{
    for (int k = 0; k < t->rank; k++) {
        if (ext[k] <= 0)
            return PLD_OK;
        if (off[k] < 0 || ext[k] > t->shape[k] - off[k])
            return pld_coll_fail(c, "%s: region offset %lld + extent %lld is outside dimension %d (size %lld)",
                                c->cname, (long long)off[k], (long long)ext[k], k, (long long)t->shape[k]);
    }
    pld_view_t tv, pv;
    pld_coll_kview(t, &tv);
    int64_t o = 0;
    for (int k = 0; k < t->rank; k++)
        o += off[k] * t->strides[k];
    tv.data = (char *)tv.data + o * pld_dtype_bytes(t->dt);
    memcpy(tv.shape, ext, (size_t)t->rank * sizeof *ext);
    pld_view_packed(&pv, buf, t->dt, t->rank, ext);
    char err[256];
    if (!dir)
        pld_coll_local_read_seen(c, t, off, ext);
    if (pld_k_copy(dir ? &tv : &pv, dir ? &pv : &tv, err, sizeof err) != PLD_OK)
        return pld_coll_fail(c, "%s: %s", c->cname, err);
    if (c->seen && dir)
        c->h->local(c->ctx, t, off, ext, 1);
    return PLD_OK;
}

/* The source of a push: rows [row, row+nrows) of the rank-2 tensor `in` in
 * this rank's memory, for a put of them into target t. In place when they
 * are one contiguous run outside t's buffer (nothing writes the input while
 * a collective pushes it, so MPI may read it until the batch ends), seen by
 * the checking modes as local_io's read is (local_read_seen); else copied
 * into `stage`. */
pld_status_t pld_coll_push_src(coll_t *c, const pld_coll_view_t *in, const pld_coll_view_t *t, int64_t row, int64_t nrows,
                             char *stage, const void **src)
{
    int64_t off[2] = {row, 0}, ext[2] = {nrows, in->shape[1]};
    *src = stage;
    if (in->buf == t->buf || in->rank != 2 || in->strides[1] != 1 || (nrows > 1 && in->strides[0] != in->shape[1]) ||
        row < 0 || nrows <= 0 || nrows > in->shape[0] - row || in->shape[1] <= 0)
        return pld_coll_local_io(c, in, off, ext, stage, 0);
    pld_coll_local_read_seen(c, in, off, ext);
    *src = pld_coll_at(in, off);
    return PLD_OK;
}

/* The order in which a rank pushes to the members: batched, the members on
 * other hosts first (their transfers are on the wire while this rank copies
 * to its own host's), each group from me + 1 round; else 0 .. P - 1. */
void pld_coll_push_order(const coll_t *c, int batched, int *order)
{
    if (!batched) {
        for (int q = 0; q < c->P; q++)
            order[q] = q;
        return;
    }
    const int mine = pld_win_dom_host(c->dom, c->me);
    int n = 0;
    for (int far = 1; far >= 0; far--)
        for (int i = 0; i < c->P; i++) {
            const int q = (c->me + 1 + i) % c->P;
            if ((pld_win_dom_host(c->dom, q) != mine) == far)
                order[n++] = q;
        }
}

/* Moves the box [off, off+ext) of window tensor t on domain rank `peer` to
 * (dir 0, a get) or from (dir 1, a put) a packed buffer. */
pld_status_t pld_coll_xfer(coll_t *c, const pld_coll_view_t *t, int peer, const int64_t *off, const int64_t *ext, void *buf,
                         int dir)
{
    if (peer == c->me)
        return pld_coll_local_io(c, t, off, ext, buf, dir);
    return c->h->region(c->ctx, peer, t, off, ext, buf, dir);
}

/* Elements [lo, lo+n) of a rank-1 descriptor. */
pld_status_t pld_coll_xfer1(coll_t *c, const pld_coll_view_t *flat, int peer, int64_t lo, int64_t n, void *buf, int dir)
{
    int64_t off[1] = {lo}, ext[1] = {n};
    return pld_coll_xfer(c, flat, peer, off, ext, buf, dir);
}

/* Row `row` (cols [0, n)) of a rank-2 tensor. */
pld_status_t pld_coll_xfer_rows(coll_t *c, const pld_coll_view_t *t, int peer, int64_t row, int64_t nrows, void *buf,
                              int dir)
{
    int64_t off[2] = {row, 0}, ext[2] = {nrows, t->shape[1]};
    return pld_coll_xfer(c, t, peer, off, ext, buf, dir);
}

/* The kernel op of a ReduceOp (validated by the caller: 0..3). */
pld_binop_k_t pld_coll_binop_of(int64_t op)
{
    switch (op) {
    case 0: return PLD_K_ADD;
    case 1: return PLD_K_MAX;
    case 2: return PLD_K_MIN;
    case 3: return PLD_K_MUL;
    default: PLD_UNREACHABLE("binop_of: a ReduceOp outside 0..3 was not rejected");
    }
}

const char *pld_coll_redop_name(int64_t op)
{
    return op == 0 ? "Sum" : op == 1 ? "Max" : op == 2 ? "Min" : op == 3 ? "Prod" : "<not a ReduceOp>";
}

/* acc = op(acc, x) elementwise over n elements of dtype dt. */
pld_status_t pld_coll_fold(coll_t *c, pld_binop_k_t op, void *acc, void *x, pld_dtype_t dt, int64_t n)
{
    if (n <= 0)
        return PLD_OK;
    pld_view_t va, vx;
    pld_view_packed(&va, acc, dt, 1, &n);
    pld_view_packed(&vx, x, dt, 1, &n);
    char err[256];
    if (pld_k_binary(op, &va, &va, &vx, err, sizeof err) != PLD_OK)
        return pld_coll_fail(c, "%s: %s", c->cname, err);
    return PLD_OK;
}

/* Reads elements [lo, lo+n) of flat on this rank into acc and on every peer,
 * folding them in: own value, then the peers ascending (§2.14). batched
 * (merged steps across hosts): the peers' reads go out as one batch
 * (pld_win_batch_begin), each into its own part of tmp ((P-1) * n
 * elements), so that every rank waits for all its transfers at once and
 * serves its peers' meanwhile; then the folds, in the same order. */
pld_status_t pld_coll_read_fold(coll_t *c, const pld_coll_view_t *flat, int64_t lo, int64_t n, pld_binop_k_t op, void *acc,
                              char *tmp, int batched)
{
    const size_t nb = (size_t)n * (size_t)pld_dtype_bytes(flat->dt);
    pld_status_t st = pld_coll_xfer1(c, flat, c->me, lo, n, acc, 0);
    if (!batched) {
        for (int p = 0; p < c->P && st == PLD_OK; p++) {
            if (p == c->me)
                continue;
            st = pld_coll_xfer1(c, flat, p, lo, n, tmp, 0);
            if (st == PLD_OK)
                st = pld_coll_fold(c, op, acc, tmp, flat->dt, n);
        }
        return st;
    }
    if (st != PLD_OK)
        return st;
    pld_win_batch_begin(c->win);
    for (int p = 0, j = 0; p < c->P && st == PLD_OK; p++)
        if (p != c->me)
            st = pld_coll_xfer1(c, flat, p, lo, n, tmp + (size_t)j++ * nb, 0);
    st = c->h->batch_end(c->ctx, st);
    for (int j = 0; j < c->P - 1 && st == PLD_OK; j++)
        st = pld_coll_fold(c, op, acc, tmp + (size_t)j * nb, flat->dt, n);
    return st;
}
/* Whether this collective may move data as two-sided messages
 * (pld_win_xset): on a hybrid domain, and when no other block of this rank
 * can run while it waits. Messages match by sender and size alone, so two
 * collectives of two blocks under way at once (a pl.spmd launch whose blocks
 * each call one) could take each other's messages; their windows and
 * signals keep them apart, so they take the window path. */
int pld_coll_msgs_ok(const coll_t *c)
{
    return pld_win_dom_transport(c->dom) == PLD_WIN_HYBRID && !pld_npu_concurrent(c->sched);
}


/* A transfer by message in the trace: a PUT (rows or results written into
 * peer's window) or a GET (a part of peer's window read), at element idx of
 * t in peer's window; ev was started by pld_tr_init. */
void pld_coll_trace_msg(coll_t *c, pld_ev_t *ev, const pld_coll_view_t *t, int peer, const int64_t *idx, size_t bytes)
{
    ev->peer = peer;
    ev->peer_world = pld_win_dom_world_rank(c->dom, peer);
    ev->dom = c->dom_index;
    ev->obj = t->name;
    ev->offset = (int64_t)pld_coll_disp(c, t, idx);
    ev->bytes = (int64_t)bytes;
    pld_trace_end(c->trace, ev);
}

/* The located error of a message of the wrong size: a peer in another call
 * (another size, another collective). */
pld_status_t pld_coll_msg_mismatch(coll_t *c, int q, int64_t got, size_t want)
{
    return pld_coll_fail(c, "%s: rank %d sent %lld bytes, not the %zu bytes of its part (a mismatched call)", c->cname, q,
                        (long long)got, want);
}

pld_status_t pld_coll_xset_fail(coll_t *c, const char *err)
{
    return pld_coll_fail(c, "%s: %s", c->cname, err);
}

void *pld_coll_alloc_elems(pld_dtype_t dt, int64_t n)
{
    return pld_mem_alloc((size_t)(n > 0 ? n : 1) * (size_t)pld_dtype_bytes(dt));
}

/* The buffers of a merged step: acc (na elements) and tmp (nt) in one piece,
 * the interpreter's kept buffer when no other block holds it (*kept = 1),
 * else a fresh one. NULL when out of memory. Released by step_bufs_done. */
void *pld_coll_step_bufs(coll_t *c, pld_dtype_t dt, int64_t na, int64_t nt, char **tmp, int *kept)
{
    pld_coll_bufs_t *it = c->bufs;
    const size_t ab = (size_t)(na > 0 ? na : 1) * (size_t)pld_dtype_bytes(dt);
    const size_t bytes = ab + (size_t)(nt > 0 ? nt : 1) * (size_t)pld_dtype_bytes(dt);
    char *b = NULL;
    *kept = !it->busy;
    if (*kept && it->bytes < bytes) {
        pld_mem_free(it->buf);
        it->buf = pld_mem_alloc(bytes);
        it->bytes = it->buf ? bytes : 0;
    }
    b = *kept ? it->buf : pld_mem_alloc(bytes);
    if (!b)
        return NULL;
    if (*kept)
        it->busy = 1;
    *tmp = b + ab;
    return b;
}

void pld_coll_step_bufs_done(coll_t *c, void *acc, int kept)
{
    if (kept)
        c->bufs->busy = 0;
    else
        pld_mem_free(acc);
}

/* A staging buffer of n elements, kept across calls like step_bufs' (a fresh
 * MiB-sized one costs page faults on every call). Released by step_bufs_done. */
void *pld_coll_stage_buf(coll_t *c, pld_dtype_t dt, int64_t n, int *kept)
{
    char *tmp;
    return pld_coll_step_bufs(c, dt, n, 0, &tmp, kept);
}

/* Reads element `i` (rank-1 [NR] or rank-2 [NR, 1] tensor) of this rank's copy. */
int64_t pld_coll_read_count(const pld_coll_view_t *t, int64_t i)
{
    int64_t idx[2] = {i, 0};
    return pld_elem_get_i(pld_coll_at(t, idx), t->dt, 0);
}

/* The post-condition of the self-clearing credit barrier (pld_semantics.md
 * §1.9): when a collective returns on this rank, every cell of its signal in
 * this rank's window is back to zero, or 1 where a faster peer already
 * credited its next call. Anything else is a stale credit (an earlier notify
 * into the signal, a signal shared with another protocol) or a peer running a
 * different collective: reported here instead of passing a later barrier
 * early. */
pld_status_t pld_coll_post_check(coll_t *c)
{
    const pld_coll_view_t *s = &c->sigdesc;
    if (!c->has_sig || !s->is_dist || c->me < 0 || s->rank < 1 || s->rank > 2)
        return PLD_OK;
    int64_t rows = s->shape[0], cols = s->rank == 2 ? s->shape[1] : 1;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) {
            int64_t idx[2] = {i, j};
            int32_t v = pld_win_read_cell(c->dom, pld_coll_disp(c, s, idx));
            if (v >= 0 && v <= 1)
                continue;
            char cell[48];
            if (s->rank == 2)
                snprintf(cell, sizeof cell, "[%lld, %lld]", (long long)i, (long long)j);
            else
                snprintf(cell, sizeof cell, "[%lld]", (long long)i);
            return pld_coll_fail(c, "%s: signal %s%s holds %d after the collective returned (expected 0, or 1 from a peer "
                                "already in its next call): a stale credit from an earlier notify into this signal, a "
                                "signal shared with another protocol, or a peer running a different collective",
                                c->cname, c->sigtext, cell, (int)v);
        }
    return PLD_OK;
}
