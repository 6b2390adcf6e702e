/* pld_coll_step.c - the merged steps of the mesh allreduces
 * (docs/transport.md, "Merged collective steps", "Hub steps", "Hub steps by
 * messages"): a range of consecutive chunks (tiles) read, folded and stored
 * at once, with its barriers passed at once; plain, spread or hub, whichever
 * moves the fewest bytes between hosts. */
#include "pld_coll_int.h"
#include "pld_mem.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ merged steps */

/* How the merged steps of one call move their ranges (step_plan;
 * docs/transport.md, "Merged collective steps"):
 *   STEP_PLAIN   every rank reads every peer's range and folds its own
 *                result (read_fold), then the barrier, then it stores;
 *   STEP_SPREAD  rank j folds part j for every rank and stores each result
 *                into that rank's copy (spread_fold), then the barrier;
 *   STEP_HUB     the members of one host fold the whole range for every
 *                rank (a part each) and store the results (hub_fold).
 * Each folds every element of rank r's result in r's documented order, so
 * all three give the same bits; they differ in the bytes that cross
 * between hosts. */

/* Whether a merged step of n elements may go spread or hub: at least 3
 * ranks (with 2, each rank moves the same bytes either way) and parts of at
 * least P elements. */
static int spread_ok(const coll_t *c, int64_t n)
{
    return c->P >= 3 && n >= (int64_t)c->P * c->P;
}

/* The plan of a call's merged steps: the one that moves the fewest bytes
 * between hosts, in units of n / P for a step of n elements, with a and b
 * ranks on two hosts:
 *   PLAIN  2 a b P (every rank reads the whole range of every rank elsewhere:
 *          never the least at P >= 3, so only P = 2 uses it);
 *   SPREAD 4 a b (rank j reads and stores part j of every rank elsewhere);
 *   HUB on host X: P (2 o - t): it reads the o ranges of the other host and
 *          sends back o results, one fewer (t = 1) when ranks 0 and 1 are
 *          both there (rep and twin).
 * SPREAD wins ties (and covers one host and three or more). At P = 4, 2 + 2
 * with 0, 1 together: SPREAD 16, HUB 12: 12 MiB per 1 Mi FP32 call against
 * 16 (docs/transport.md, "Hub steps"). */
void pld_coll_step_plan(const coll_t *c, step_plan_t *pl)
{
    memset(pl, 0, sizeof *pl);
    pl->kind = c->P >= 3 ? STEP_SPREAD : STEP_PLAIN;
    pl->widx = pl->rep = pl->twin = -1;
    if (c->P < 3)
        return;
    int host[PLD_WIN_MAX_RANKS], h[2] = {pld_win_dom_host(c->dom, 0), -1}, cnt[2] = {0, 0};
    for (int q = 0; q < c->P; q++) {
        host[q] = pld_win_dom_host(c->dom, q);
        if (host[q] != h[0] && h[1] < 0)
            h[1] = host[q];
        if (host[q] != h[0] && host[q] != h[1])
            return; /* three hosts or more */
        cnt[host[q] == h[0] ? 0 : 1]++;
    }
    if (cnt[1] == 0)
        return;
    int64_t best = 4 * (int64_t)cnt[0] * cnt[1];
    int hub = -1;
    for (int x = 0; x < 2; x++) {
        const int o = cnt[1 - x], t = host[0] != h[x] && host[1] != h[x];
        const int64_t cost = (int64_t)c->P * (2 * o - t);
        if (cost < best) {
            best = cost;
            hub = x;
        }
    }
    if (hub < 0)
        return;
    pl->kind = STEP_HUB;
    for (int q = 0; q < c->P; q++)
        if (host[q] == h[hub]) {
            if (q == c->me)
                pl->widx = pl->nw;
            pl->workers[pl->nw++] = q;
        }
    if (host[0] != h[hub] && host[1] != h[hub]) {
        pl->rep = 0;
        pl->twin = 1;
    }
}

/* The elements of tmp the steps of at most n elements need beside acc: the
 * batched reads of a plain step, the inputs and results of a part. SPREAD
 * and HUB read plainly only a step too small to spread (fewer than P * P
 * elements: spread_ok). */
int64_t pld_coll_step_tmp(const coll_t *c, const step_plan_t *pl, int64_t n, int batched)
{
    const int64_t pn = pl->kind == STEP_PLAIN || n < (int64_t)c->P * c->P ? n : (int64_t)c->P * c->P - 1;
    const int64_t plain = pn * (batched ? c->P - 1 : 1);
    const int64_t part = pl->kind == STEP_HUB ? cdiv(n, pl->nw) : cdiv(n, c->P);
    const int64_t split = pl->kind == STEP_PLAIN ? 0 : 2 * (int64_t)c->P * part;
    return plain > split ? plain : split;
}

#ifndef PLD_TESTING
#define SPREAD_BLOCK 4096 /* elements per block of the spread and hub folds */
#else
#define SPREAD_BLOCK 768 /* pldrun_testing: the tests' parts of a few thousand elements take several blocks */
#endif


/* Lane b's credit (0: none) and the credit it waits for (0: none). */
static void bar_lane(const step_bar_t *sb, int64_t b, int32_t *n, int32_t *g)
{
    if (!sb->host) {
        *n = sb->n;
        *g = sb->g;
        return;
    }
    const int64_t upto = b < sb->ntiles ? cdiv(sb->ntiles - b, sb->lanes) : 0;
    const int64_t before = sb->j0 < upto ? sb->j0 : upto, last = sb->j1 < upto ? sb->j1 : upto;
    *n = (int32_t)(last - before);
    *g = last > sb->j0 ? (int32_t)(last + 1) : 0;
}


/* The step's credits of this rank into the cells of the peers in `peers`
 * (wait 0), or the wait for theirs (wait 1). */
static pld_status_t step_sync(coll_t *c, const step_bar_t *sb, uint64_t peers, int wait)
{
    for (int64_t b = 0; b < sb->lanes; b++) {
        int32_t n, g;
        bar_lane(sb, b, &n, &g);
        if ((wait ? g : n) <= 0)
            continue;
        pld_coll_lane_track(c, b, sb->lanes);
        pld_status_t st = wait ? pld_coll_await_from(c, b, g, peers) : pld_coll_arrive_to(c, b, n, peers);
        if (st != PLD_OK)
            return st;
    }
    return PLD_OK;
}

static pld_status_t step_arrive(coll_t *c, const step_bar_t *sb, uint64_t to)
{
    return step_sync(c, sb, to, 0);
}

static pld_status_t step_await(coll_t *c, const step_bar_t *sb, uint64_t from)
{
    return step_sync(c, sb, from, 1);
}

/* The step's whole barrier: credit every peer, then wait for every peer. */
static pld_status_t step_barrier(coll_t *c, const step_bar_t *sb)
{
    pld_ev_t ev;
    char name[80]; /* the event keeps the pointer until phase_end */
    if (c->trace && !sb->host) {
        snprintf(name, sizeof name, "%d merged barriers (slot 0, credit %d)", (int)sb->n, (int)sb->g);
        pld_coll_phase_begin(c, &ev, name);
    }
    pld_status_t st = step_arrive(c, sb, pld_coll_all_peers(c));
    st = st != PLD_OK ? st : step_await(c, sb, pld_coll_all_peers(c));
    return c->trace && !sb->host ? pld_coll_phase_end(c, &ev, st) : st;
}

/* Every rank r's result in its documented order (x_r first, then the
 * others ascending), over m elements: the inputs x_q are at in + q * L
 * elements, offset o bytes, rank r's result goes to res + r * L elements,
 * offset o. One pass over the inputs where the kernel has one
 * (pld_k_fold_orders). */
static pld_status_t fold_orders(coll_t *c, pld_binop_k_t op, pld_dtype_t dt, char *res, const char *in, size_t L,
                                size_t o, int64_t m)
{
    const size_t esz = (size_t)pld_dtype_bytes(dt);
    const void *x[PLD_WIN_MAX_RANKS];
    void *out[PLD_WIN_MAX_RANKS];
    for (int q = 0; q < c->P; q++) {
        x[q] = in + (size_t)q * L * esz + o;
        out[q] = res + (size_t)q * L * esz + o;
    }
    char err[256];
    if (pld_k_fold_orders(op, dt, c->P, x, out, m, err, sizeof err) != PLD_OK)
        return pld_coll_fail(c, "%s: %s", c->cname, err);
    return PLD_OK;
}

/* Elements [base+a, base+b) with this rank (local) and every peer q in `to`
 * (dir 0: get, 1: put), the buffer of q at buf + q * stride, element a at
 * its start (no batch of its own). */
static pld_status_t part_io(coll_t *c, const pld_coll_view_t *flat, int64_t base, int64_t a, int64_t b, char *buf,
                            size_t stride, int dir, uint64_t to)
{
    const size_t o = (size_t)a * (size_t)pld_dtype_bytes(flat->dt);
    pld_status_t st = PLD_OK;
    for (int q = 0; q < c->P && st == PLD_OK && a < b; q++)
        if (q == c->me || (to & RBIT(q)))
            st = pld_coll_xfer1(c, flat, q, base + a, b - a, buf + (size_t)q * stride + o, dir);
    return st;
}

/* Elements [lo, lo+n) with this rank and every peer (part_io), in one
 * batch when batched. */
static pld_status_t xfer_part(coll_t *c, const pld_coll_view_t *flat, int64_t lo, int64_t n, char *buf, size_t stride,
                              int dir, int batched)
{
    if (batched)
        pld_win_batch_begin(c->win);
    pld_status_t st = part_io(c, flat, lo, 0, n, buf, stride, dir, pld_coll_all_peers(c));
    return batched ? c->h->batch_end(c->ctx, st) : st;
}

/* A SPREAD step (step_plan): the range [lo, lo+n) is cut into P parts, and
 * rank j reads part j of every rank (own value, then the peers, one batch),
 * folds it in every rank's order (fold_order) and stores rank r's result
 * into part j of rank r's copy (puts, one batch). Part j of any copy is
 * read by rank j alone, before rank j stores into it, so no barrier is
 * needed inside the step; the caller's barrier follows, after which every
 * copy holds the whole result (a put is visible before the notify that
 * follows it). Each rank moves 2 (P - 1) / P of the range instead of P - 1
 * times it (docs/transport.md). tmp holds step_tmp(n) elements. */
static pld_status_t spread_fold(coll_t *c, const pld_coll_view_t *flat, int64_t lo, int64_t n, pld_binop_k_t op,
                                char *tmp, int batched)
{
    const int P = c->P, me = c->me;
    const size_t esz = (size_t)pld_dtype_bytes(flat->dt);
    const int64_t L = cdiv(n, P), b0 = me * n / P, len = (me + 1) * n / P - b0;
    char *in = tmp, *res = tmp + (size_t)P * (size_t)L * esz; /* x_q, res_r at q * L, r * L */
#define PART(base, q) ((base) + (size_t)(q) * (size_t)L * esz)
    pld_status_t st = xfer_part(c, flat, lo + b0, len, in, (size_t)L * esz, 0, batched);
    /* in blocks that stay in cache: the P results of a block read the same
     * P inputs */
    for (int64_t k = 0; k < len && st == PLD_OK; k += SPREAD_BLOCK) {
        const int64_t m = len - k < SPREAD_BLOCK ? len - k : SPREAD_BLOCK;
        st = fold_orders(c, op, flat->dt, res, in, (size_t)L, (size_t)k * esz, m);
    }
    st = st != PLD_OK ? st : xfer_part(c, flat, lo + b0, len, res, (size_t)L * esz, 1, batched);
#undef PART
    return st;
}

#define HUB_PIECES 4 /* pieces of a worker's part in a HUB step by window reads and stores (hub_take_rma) */

/* Worker w's part of a HUB step of n elements: [*b0, *b0 + *len). Every rank
 * computes the same. */
static void hub_part(const step_plan_t *pl, int w, int64_t n, int64_t *b0, int64_t *len)
{
    *b0 = w * n / pl->nw;
    *len = (w + 1) * n / pl->nw - *b0;
}

static uint64_t hub_workers(const step_plan_t *pl)
{
    uint64_t w = 0;
    for (int i = 0; i < pl->nw; i++)
        w |= RBIT(pl->workers[i]);
    return w;
}

/* Whether the transfers of a HUB step between the hosts go as two-sided
 * messages (pld_win_xset; docs/transport.md, "Hub steps by messages"): on a
 * hybrid domain (every member off the hub host is then on another host than
 * every worker), when the step may batch (not under --poison, --check-races
 * or a seeded schedule, which observe every read and store), and with a
 * part within one MPI count. Every rank computes the same answer. */
static int hub_by_msgs(const coll_t *c, const step_plan_t *pl, int64_t n, size_t esz, int batched)
{
    return batched && pld_coll_msgs_ok(c) && (uint64_t)cdiv(n, pl->nw) * esz <= (uint64_t)INT32_MAX;
}

/* A member off the hub host in a HUB step by messages: it sends part w of its
 * copy of [lo, lo+n) to worker w, from the copy itself, and once those sends
 * are complete (nothing may write a buffer under a send before), receives
 * its result's part w from worker w into the copy (but twin: hub_fold).
 * It returns when every transfer is complete. */
static pld_status_t hub_give(coll_t *c, const step_plan_t *pl, const pld_coll_view_t *flat, int64_t lo, int64_t n)
{
    const size_t esz = (size_t)pld_dtype_bytes(flat->dt);
    const int results = c->me != pl->twin;
    pld_view_t v;
    pld_coll_kview(flat, &v);
    char *data = (char *)v.data + (size_t)lo * esz, err[256];
    const far_wait_t fw = {c, hub_workers(pl), "parts"};
    int64_t b0[PLD_WIN_MAX_RANKS], len[PLD_WIN_MAX_RANKS]; /* worker w's part */
    for (int w = 0; w < pl->nw; w++)
        hub_part(pl, w, n, &b0[w], &len[w]);
    pld_win_xset_t *xs = NULL, *xr = NULL;
    pld_status_t st = PLD_OK;
    if (pld_win_xset_open(c->dom, pl->nw, 0, &xs, err, sizeof err) != PLD_OK ||
        (results && pld_win_xset_open(c->dom, pl->nw, 0, &xr, err, sizeof err) != PLD_OK))
        st = pld_coll_xset_fail(c, err);
    for (int w = 0; w < pl->nw && st == PLD_OK; w++) {
        const size_t bytes = (size_t)len[w] * esz;
        if (pld_win_xset_send(xs, pl->workers[w], data + (size_t)b0[w] * esz, bytes, bytes,
                              PLD_XSET_SIZED | PLD_XSET_INPLACE, err, sizeof err) != PLD_OK)
            st = pld_coll_xset_fail(c, err);
        *c->bytes_moved += (uint64_t)bytes;
    }
    if (st == PLD_OK)
        st = c->h->xset_wait(c->ctx, xs, pld_coll_describe_far_wait, &fw);
    for (int w = 0; w < pl->nw && st == PLD_OK && results; w++)
        if (pld_win_xset_recv(xr, pl->workers[w], data + (size_t)b0[w] * esz, (size_t)len[w] * esz, PLD_XSET_SIZED,
                              err, sizeof err) != PLD_OK)
            st = pld_coll_xset_fail(c, err);
    if (st == PLD_OK && results)
        st = c->h->xset_wait(c->ctx, xr, pld_coll_describe_far_wait, &fw);
    for (int w = 0; w < pl->nw && st == PLD_OK && results; w++)
        if (pld_win_xset_got(xr, w) != len[w] * (int64_t)esz)
            st = pld_coll_msg_mismatch(c, pl->workers[w], pld_win_xset_got(xr, w), (size_t)len[w] * esz);
    pld_win_xset_close(xs);
    pld_win_xset_close(xr);
    return st;
}

/* Pieces [k0, k1) of a worker's part: every rank's result, twin's too (it
 * goes out only where it differs from rep's: NaN pairs in x_rep and x_twin;
 * exc marks those blocks). */
static pld_status_t hub_piece(coll_t *c, const step_plan_t *pl, pld_binop_k_t op, pld_dtype_t dt, char *res,
                              const char *in, int64_t L, int64_t k0, int64_t k1, unsigned char *exc, int64_t *nexc)
{
    const size_t esz = (size_t)pld_dtype_bytes(dt);
    pld_status_t st = PLD_OK;
    for (int64_t k = k0; k < k1 && st == PLD_OK; k += SPREAD_BLOCK) {
        const int64_t m = k1 - k < SPREAD_BLOCK ? k1 - k : SPREAD_BLOCK;
        const size_t o = (size_t)k * esz;
        st = fold_orders(c, op, dt, res, in, (size_t)L, o, m);
        if (st == PLD_OK && pl->twin >= 0 &&
            memcmp(res + (size_t)pl->rep * (size_t)L * esz + o, res + (size_t)pl->twin * (size_t)L * esz + o,
                   (size_t)m * esz) != 0) {
            exc[k / SPREAD_BLOCK] = 1;
            (*nexc)++;
        }
    }
    return st;
}

/* A worker's transfers and folds by window reads and stores: the reads of
 * piece i + 1 and the stores of piece i go out as one batch, so that the
 * transfers from and to the other host overlap. */
static pld_status_t hub_take_rma(coll_t *c, const step_plan_t *pl, const pld_coll_view_t *flat, int64_t base,
                                 const int64_t *cut, int64_t L, pld_binop_k_t op, char *in, char *res,
                                 unsigned char *exc, int64_t *nexc, int batched)
{
    const size_t esz = (size_t)pld_dtype_bytes(flat->dt);
    const uint64_t peers = pld_coll_all_peers(c), to = pl->twin >= 0 ? peers & ~RBIT(pl->twin) : peers; /* twin's aside */
    pld_status_t st = PLD_OK;
    for (int i = -1; i < HUB_PIECES && st == PLD_OK; i++) {
        if (i >= 0)
            st = hub_piece(c, pl, op, flat->dt, res, in, L, cut[i], cut[i + 1], exc, nexc);
        if (st != PLD_OK)
            break;
        if (batched)
            pld_win_batch_begin(c->win);
        if (i + 1 < HUB_PIECES)
            st = part_io(c, flat, base, cut[i + 1], cut[i + 2], in, (size_t)L * esz, 0, peers);
        if (i >= 0 && st == PLD_OK)
            st = part_io(c, flat, base, cut[i], cut[i + 1], res, (size_t)L * esz, 1, to);
        if (batched)
            st = c->h->batch_end(c->ctx, st);
    }
    return st;
}

/* A worker's transfers and folds by messages (hub_by_msgs): it posts the
 * receives of its part of every member off the hub host into its inputs,
 * reads the part of the members on its host (window reads), waits for the
 * messages, folds into the send set's buffer, sends the results to the
 * members off the hub host from there (twin's aside) and stores those of its
 * host (window stores). One piece: nothing moves the messages while it
 * folds. Twin's result goes to twin_res when some of its blocks differ
 * (hub_fold sends them after the barrier). It returns when every transfer is
 * complete. */
static pld_status_t hub_take_msgs(coll_t *c, const step_plan_t *pl, const pld_coll_view_t *flat, int64_t base,
                                  int64_t len, int64_t L, pld_binop_k_t op, char *in, char *twin_res,
                                  unsigned char *exc, int64_t *nexc)
{
    const size_t esz = (size_t)pld_dtype_bytes(flat->dt), stride = (size_t)L * esz, bytes = (size_t)len * esz;
    const uint64_t own = hub_workers(pl), far = pld_coll_all_peers(c) & ~own;
    int nf = 0;
    for (int q = 0; q < c->P; q++)
        nf += (far & RBIT(q)) != 0;
    const far_wait_t fw = {c, far, "parts"};
    int64_t idx[1] = {base};
    char err[256];
    pld_win_xset_t *xr = NULL, *xs = NULL;
    pld_ev_t ev;
    pld_status_t st = PLD_OK;
    char *res = NULL; /* res_r at r * L: in the set's buffer, which outlives a failed send */
    if (pld_win_xset_open(c->dom, nf, 0, &xr, err, sizeof err) != PLD_OK ||
        pld_win_xset_open(c->dom, nf, (size_t)c->P * stride, &xs, err, sizeof err) != PLD_OK)
        st = pld_coll_xset_fail(c, err);
    else
        res = pld_win_xset_buf(xs);
    for (int q = 0; q < c->P && st == PLD_OK; q++)
        if ((far & RBIT(q)) &&
            pld_win_xset_recv(xr, q, in + (size_t)q * stride, bytes, PLD_XSET_SIZED, err, sizeof err) != PLD_OK)
            st = pld_coll_xset_fail(c, err);
    if (c->trace)
        c->h->ev_init(c->ctx, &ev, PLD_EV_GET, c->opname);
    if (st == PLD_OK) {
        pld_win_batch_begin(c->win);
        st = c->h->batch_end(c->ctx, part_io(c, flat, base, 0, len, in, stride, 0, own));
    }
    if (st == PLD_OK)
        st = c->h->xset_wait(c->ctx, xr, pld_coll_describe_far_wait, &fw);
    for (int q = 0, j = 0; q < c->P && st == PLD_OK; q++) {
        if (!(far & RBIT(q)))
            continue;
        if (pld_win_xset_got(xr, j++) != (int64_t)bytes)
            st = pld_coll_msg_mismatch(c, q, pld_win_xset_got(xr, j - 1), bytes);
        else if (c->trace) { /* one event per source, over the wait */
            pld_ev_t e1 = ev;
            pld_coll_trace_msg(c, &e1, flat, q, idx, bytes);
        }
    }
    st = st != PLD_OK ? st : hub_piece(c, pl, op, flat->dt, res, in, L, 0, len, exc, nexc);
    if (st == PLD_OK && *nexc)
        memcpy(twin_res, res + (size_t)pl->twin * stride, bytes);
    for (int q = 0; q < c->P && st == PLD_OK; q++) {
        if (!(far & RBIT(q)) || q == pl->twin)
            continue;
        if (c->trace)
            c->h->ev_init(c->ctx, &ev, PLD_EV_PUT, c->opname);
        if (pld_win_xset_send(xs, q, res + (size_t)q * stride, bytes, bytes, PLD_XSET_SIZED | PLD_XSET_INPLACE, err,
                              sizeof err) != PLD_OK)
            st = pld_coll_xset_fail(c, err);
        *c->bytes_moved += (uint64_t)bytes;
        if (c->trace && st == PLD_OK)
            pld_coll_trace_msg(c, &ev, flat, q, idx, bytes);
    }
    if (st == PLD_OK) {
        pld_win_batch_begin(c->win);
        st = c->h->batch_end(c->ctx, part_io(c, flat, base, 0, len, res, stride, 1, own));
    }
    if (st == PLD_OK)
        st = c->h->xset_wait(c->ctx, xs, pld_coll_describe_far_wait, &fw);
    pld_win_xset_close(xr);
    pld_win_xset_close(xs);
    return st;
}

/* The copy of [lo, lo+n) of rep's copy into twin's (HUB; twin shares rep's
 * host), made by rep (from == me) or by twin (to == me): a memmove between
 * the two windows (the members of one host share them), else, when batches
 * are not allowed (--poison, --check-races or a seeded schedule observe
 * every read and store), a read into tmp and a store. */
static pld_status_t hub_copy(coll_t *c, const pld_coll_view_t *flat, int64_t lo, int64_t n, int from, int to, char *tmp,
                             int batched)
{
    if (batched) {
        pld_view_t v;
        pld_coll_kview(flat, &v);
        char *mine = (char *)v.data + (size_t)lo * (size_t)pld_dtype_bytes(flat->dt);
        return pld_coll_xfer1(c, flat, from == c->me ? to : from, lo, n, mine, from == c->me);
    }
    pld_status_t st = pld_coll_xfer1(c, flat, from, lo, n, tmp, 0);
    return st != PLD_OK ? st : pld_coll_xfer1(c, flat, to, lo, n, tmp, 1);
}

/* A HUB step with its barrier (step_plan). Worker w (a member on the hub
 * host) takes part w of the range: it reads the part of every rank, folds
 * every rank's result in that rank's order and stores each into that rank's
 * copy; then it arrives and waits. Each part of a copy is read by its worker
 * alone before that worker stores into it, so, as in SPREAD, no barrier is
 * needed inside the step. The transfers are window reads and stores
 * (hub_take_rma), or messages with the members off the hub host
 * (hub_by_msgs: hub_give, hub_take_msgs).
 *
 * With rep and twin (ranks 0 and 1 off the hub host), the workers store
 * rep's result into rep's copy alone, and the range reaches twin's copy
 * (same host) by a copy before twin's credit goes out: no rank passes the
 * barrier before twin holds the result. With window stores rep makes it:
 * it waits for the workers' credits (their stores are visible then, and
 * every worker has read x_twin), copies, and only then arrives. With
 * messages twin makes it: once its own sends are complete (nothing may
 * write a buffer under a send before) it waits for rep's credit (rep
 * arrives once its results are in), copies, and arrives. Where twin's
 * result differs from rep's (a block whose first fold differs: NaNs in x0
 * and x1 with different payloads), the worker holds back its credit to
 * twin, waits for the barrier (after the copy), stores those blocks into
 * twin's copy and then credits twin. The credits every cell receives are
 * those of the plain step, only their timing differs. tmp holds
 * step_tmp(n) elements. */
static pld_status_t hub_fold(coll_t *c, const step_plan_t *pl, const step_bar_t *sb, const pld_coll_view_t *flat,
                             int64_t lo, int64_t n, pld_binop_k_t op, char *tmp, int batched)
{
    const int P = c->P, me = c->me, rep = pl->rep, twin = pl->twin;
    const uint64_t peers = pld_coll_all_peers(c);
    const size_t esz = (size_t)pld_dtype_bytes(flat->dt);
    const int msgs = hub_by_msgs(c, pl, n, esz, batched);
    pld_status_t st = PLD_OK;
    if (pl->widx < 0) {
        if (msgs) {
            /* twin copies rep's result for itself, once its sends are
             * complete and rep's credit says rep holds the result */
            st = hub_give(c, pl, flat, lo, n);
            if (me == twin && st == PLD_OK) {
                st = step_await(c, sb, RBIT(rep));
                st = st != PLD_OK ? st : hub_copy(c, flat, lo, n, rep, me, tmp, batched);
            }
        } else if (me == rep) {
            st = step_await(c, sb, hub_workers(pl));
            st = st != PLD_OK ? st : hub_copy(c, flat, lo, n, me, twin, tmp, batched);
        }
        st = st != PLD_OK ? st : step_arrive(c, sb, peers);
        return st != PLD_OK ? st : step_await(c, sb, peers);
    }
    int64_t b0, len, cut[HUB_PIECES + 1];
    hub_part(pl, pl->widx, n, &b0, &len);
    for (int i = 0; i <= HUB_PIECES; i++) /* hub_take_rma's pieces: multiples of SPREAD_BLOCK but the last */
        cut[i] = i == HUB_PIECES ? len : len * i / HUB_PIECES / SPREAD_BLOCK * SPREAD_BLOCK;
    const int64_t L = cdiv(n, pl->nw);
    char *in = tmp, *res = tmp + (size_t)P * (size_t)L * esz; /* x_q, res_r at q * L, r * L */
    unsigned char *exc = NULL;                                /* twin: the blocks that differ */
    int64_t nexc = 0;
    if (twin >= 0 && !(exc = pld_mem_calloc((size_t)cdiv(len, SPREAD_BLOCK) + 1, 1)))
        return pld_coll_oom(c);
    char *twin_res = twin >= 0 ? res + (size_t)twin * (size_t)L * esz : NULL;
    st = msgs ? hub_take_msgs(c, pl, flat, lo + b0, len, L, op, in, twin_res, exc, &nexc)
              : hub_take_rma(c, pl, flat, lo + b0, cut, L, op, in, res, exc, &nexc, batched);
    /* the credits (twin's held back when some of its blocks differ), the
     * wait; then twin's blocks and credit */
    const uint64_t to = twin >= 0 ? peers & ~RBIT(twin) : peers;
    st = st != PLD_OK ? st : step_arrive(c, sb, nexc ? to : peers);
    st = st != PLD_OK ? st : step_await(c, sb, peers);
    if (nexc && st == PLD_OK) {
        if (batched)
            pld_win_batch_begin(c->win);
        for (int64_t k = 0; k < len && st == PLD_OK; k += SPREAD_BLOCK)
            if (exc[k / SPREAD_BLOCK])
                st = pld_coll_xfer1(c, flat, twin, lo + b0 + k, len - k < SPREAD_BLOCK ? len - k : SPREAD_BLOCK,
                           res + ((size_t)twin * (size_t)L + (size_t)k) * esz, 1);
        st = batched ? c->h->batch_end(c->ctx, st) : st;
        st = st != PLD_OK ? st : step_arrive(c, sb, RBIT(twin));
    }
    pld_mem_free(exc);
    return st;
}

/* --check-races sees the device's order, not the merged step's (docs/races.md,
 * "The device's collective order"): on the device every rank reads the
 * range [lo, lo+n) of its own copy and of every peer's before the step's
 * barrier, and stores its result into its own copy after it. A SPREAD or HUB
 * step stores every rank's result before that barrier, from the rank that
 * folded it; its transfers are muted, and this records the device's: the
 * reads (write 0, before the barrier) or this rank's store (write 1, after
 * it). */
static void device_order(coll_t *c, const pld_coll_view_t *flat, int64_t lo, int64_t n, int write)
{
    if (!c->seen || !c->h->record)
        return;
    int64_t off[1] = {lo}, ext[1] = {n};
    for (int q = 0; q < c->P; q++)
        if (write ? q == c->me : 1)
            c->h->record(c->ctx, q, flat, off, ext, write);
}

static void device_mute(coll_t *c, int on)
{
    if (c->seen && c->h->mute && c->h->record)
        c->h->mute(c->ctx, on);
}

/* One merged step of [lo, lo+n) with its barrier sb, by plan pl; after it
 * every copy holds the result. acc and tmp come from step_bufs (tmp:
 * step_tmp(n) elements). */
pld_status_t pld_coll_merged_fold_step(coll_t *c, const step_plan_t *pl, const step_bar_t *sb, const pld_coll_view_t *flat,
                                     int64_t lo, int64_t n, pld_binop_k_t op, char *acc, char *tmp, int batched)
{
    pld_status_t st;
    if (pl->kind == STEP_HUB && spread_ok(c, n)) {
        pld_ev_t ev;
        char name[160]; /* the event keeps the pointer until phase_end */
        if (c->trace) { /* "hub step: ranks 2, 3 fold, rank 0 copies to rank 1"; by messages "hub
                               step: ranks 2, 3 fold, rank 1 copies from rank 0 (messages across hosts)" */
            const int msgs = hub_by_msgs(c, pl, n, (size_t)pld_dtype_bytes(flat->dt), batched);
            const size_t k = pld_coll_rank_list(name, sizeof name, "hub step: ", hub_workers(pl), c->P);
            if (k < sizeof name)
                snprintf(name + k, sizeof name - k, " fold%s%s",
                         pl->twin < 0 ? "" : msgs ? ", rank 1 copies from rank 0" : ", rank 0 copies to rank 1",
                         msgs ? " (messages across hosts)" : "");
            pld_coll_phase_begin(c, &ev, name);
        }
        device_order(c, flat, lo, n, 0);
        device_mute(c, 1);
        st = hub_fold(c, pl, sb, flat, lo, n, op, tmp, batched);
        device_mute(c, 0);
        if (st == PLD_OK)
            device_order(c, flat, lo, n, 1);
        return c->trace ? pld_coll_phase_end(c, &ev, st) : st;
    }
    if (pl->kind != STEP_PLAIN && spread_ok(c, n)) {
        device_order(c, flat, lo, n, 0);
        device_mute(c, 1);
        st = spread_fold(c, flat, lo, n, op, tmp, batched);
        device_mute(c, 0);
        st = st != PLD_OK ? st : step_barrier(c, sb);
        if (st == PLD_OK)
            device_order(c, flat, lo, n, 1);
        return st;
    }
    st = pld_coll_read_fold(c, flat, lo, n, op, acc, tmp, batched);
    st = st != PLD_OK ? st : step_barrier(c, sb);
    return st != PLD_OK ? st : pld_coll_xfer1(c, flat, c->me, lo, n, acc, 1);
}
