/* pld_debug_sched.c - --schedule-seed: seeded schedules (docs/races.md,
 * "Schedules"; docs/debugging.md, "Schedules").
 *
 * Two PRNGs (splitmix64) decide everything, per rank, both seeded from the
 * run's seed XOR the world rank: the block scheduler's (pld_npu.h) and this
 * file's. Neither ever reads the clock, so the same seed repeats a rank's
 * decisions as long as what the rank observes of its peers does not depend
 * on timing (docs/races.md, "Limits").
 *
 *   - Blocks: the next block of a grid is drawn among the live ones, and
 *     every remote op of a block is a preemption point (the caller yields to
 *     the other blocks with pld_npu_preempt, then calls pld_debug_sched_point
 *     or, before a notify or wait, pld_debug_sched_flush).
 *   - Puts: a put to a peer's window (the shm and local transports, the sim
 *     backend) is held back in this rank's pending list, its bytes copied,
 *     and lands later: at a random later preemption point of this rank (each
 *     point lands randomly chosen entries while a coin says so), and always
 *     before this rank's next notify or wait (every pending put to every
 *     target), every 64 polls of a wait that blocks, before a get or an
 *     atomic add of this rank that overlaps it on the same target
 *     (read-your-writes, program order), at the end of every kernel task,
 *     CHIP dispatch and run (also a failed one), and after 2^26 operations
 *     of this rank at the latest (a rank spinning on plain reads never
 *     blocks the peers that spin on its data). Entries to the same target
 *     that overlap land in issue order; a put that covers an earlier pending
 *     one replaces it. Atomic adds, notifies and puts to the own window are
 *     never held; with the rma transport (or a backend other than sim) no
 *     put is. */
#include "pld_debug_int.h"
#include "pld_mem.h"

#include <stdio.h>
#include <string.h>

#define SCHED_MAX_HELD ((size_t)64 << 20)       /* bytes held at once */
#define SCHED_STALE_STEPS ((uint64_t)1 << 26)   /* operations a pending put may wait at the most */
#define SCHED_SEED_MIX 0xD1B54A32D192ED03ull    /* this file's stream vs the block scheduler's */

/* A buffer of at least `bytes` bytes: the smallest pooled one that fits and
 * is not more than 4 times too large, else a new one. NULL on out of memory. */
static unsigned char *buf_get(dbg_sched_t *s, size_t bytes, size_t *cap)
{
    int best = -1;
    for (int i = 0; i < s->npool; i++)
        if (s->pool_cap[i] >= bytes && s->pool_cap[i] / 4 <= bytes &&
            (best < 0 || s->pool_cap[i] < s->pool_cap[best]))
            best = i;
    if (best >= 0) {
        unsigned char *p = s->pool[best];
        *cap = s->pool_cap[best];
        s->npool--;
        s->pool[best] = s->pool[s->npool];
        s->pool_cap[best] = s->pool_cap[s->npool];
        return p;
    }
    *cap = bytes;
    return pld_mem_alloc(bytes);
}

/* Gives a buffer back to the pool (freed when the pool is full). */
static void buf_put(dbg_sched_t *s, unsigned char *p, size_t cap)
{
    if (!p)
        return;
    if (s->npool == SCHED_MAX_PENDING) {
        pld_mem_free(p);
        return;
    }
    s->pool[s->npool] = p;
    s->pool_cap[s->npool] = cap;
    s->npool++;
}

static uint64_t draw(dbg_sched_t *s)
{
    uint64_t z = (s->rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

pld_status_t pld_debug_sched_open(pld_debug_t *d)
{
    dbg_sched_t *s = pld_mem_calloc(1, sizeof *s);
    if (!s)
        return PLD_E_NOMEM;
    s->q = pld_mem_calloc(SCHED_MAX_PENDING, sizeof *s->q);
    if (!s->q) {
        pld_mem_free(s);
        return PLD_E_NOMEM;
    }
    const uint64_t seed = d->o.seed ^ (uint64_t)d->o.rank;
    s->rng = seed ^ SCHED_SEED_MIX;
    /* compiled kernels reach shm windows without the interpreter: their reads
     * would miss what is held here, so only the sim backend delays puts */
    s->delay = strcmp(d->o.backend, "sim") == 0;
    s->budget = UINT64_MAX;
    pld_npu_sched_seed(d->o.sched, seed);
    d->sched = s;
    return PLD_OK;
}

void pld_debug_sched_close(pld_debug_t *d)
{
    dbg_sched_t *s = d->sched;
    if (!s)
        return;
    for (int i = 0; i < s->n; i++)
        pld_mem_free(s->q[i].data);
    for (int i = 0; i < s->npool; i++)
        pld_mem_free(s->pool[i]);
    pld_mem_free(s->q);
    pld_mem_free(s);
    d->sched = NULL;
}

void pld_debug_sched_run_begin(pld_debug_t *d)
{
    d->sched->budget = *d->o.step_limit;
}

uint64_t pld_debug_sched_budget(const pld_debug_t *d)
{
    return d->sched->budget;
}

int pld_debug_sched_pending(const pld_debug_t *d)
{
    return d->sched->n;
}

void pld_debug_sched_site(pld_debug_t *d, int32_t track, const char *func, int32_t line, int32_t col)
{
    site_t *at = &d->sched->site;
    at->track = track;
    at->func = func;
    at->line = line;
    at->col = col;
}

/* Removes the applied entries; re-arms the step limit. */
static void compact(pld_debug_t *d, dbg_sched_t *s)
{
    int k = 0;
    for (int i = 0; i < s->n; i++)
        if (!s->q[i].done)
            s->q[k++] = s->q[i];
    s->n = k;
    if (k == 0)
        *d->o.step_limit = s->budget;
}

static int overlaps(const pend_t *a, int dom, int peer, size_t disp, size_t bytes)
{
    return a->dom == dom && a->peer == peer && a->disp < disp + bytes && disp < a->disp + a->bytes;
}

/* The PUT event of a held put that lands now, at its issue site and track:
 * "put landed (held back N us) to rank ...". */
static void trace_landed(pld_debug_t *d, const pend_t *p)
{
    pld_ev_t ev;
    pld_trace_ev_init(&ev, PLD_EV_PUT);
    char name[64];
    snprintf(name, sizeof name, "landed (held back %.0f us)", (double)(ev.t0 - p->t_issue) / 1e3);
    ev.name = name;
    ev.track = p->at.track;
    ev.func = p->at.func;
    ev.line = p->at.line;
    ev.col = p->at.col;
    ev.peer = p->peer;
    ev.peer_world = pld_win_dom_world_rank(p->win, p->peer);
    ev.dom = (int32_t)p->dom;
    pld_debug_window_t w;
    if (d->o.host.window_at(d->o.host.ctx, p->dom, p->disp, 1, &w))
        ev.obj = w.name;
    ev.bytes = (int64_t)p->bytes;
    ev.offset = (int64_t)p->disp;
    pld_trace_end(d->o.trace, &ev);
}

/* Applies entry i, after every earlier pending entry to the same target that
 * overlaps it (so overlapping puts land in issue order). The entry is gone
 * either way; a failure keeps the first error's text in err. */
static pld_status_t apply(pld_debug_t *d, dbg_sched_t *s, int i, char *err, size_t errn)
{
    pend_t *p = &s->q[i];
    pld_status_t first = PLD_OK;
    for (int j = 0; j < i; j++)
        if (!s->q[j].done && overlaps(&s->q[j], p->dom, p->peer, p->disp, p->bytes)) {
            pld_status_t st = apply(d, s, j, err, errn);
            if (first == PLD_OK)
                first = st;
        }
    char e2[256];
    pld_status_t st = pld_win_put(p->win, p->peer, p->disp, p->data, p->bytes, e2, sizeof e2);
    if (d->o.trace && st == PLD_OK)
        trace_landed(d, p);
    if (st != PLD_OK && first == PLD_OK) {
        snprintf(err, errn, "%s", e2);
        first = st;
    }
    p->done = 1;
    s->held -= p->bytes;
    buf_put(s, p->data, p->cap);
    p->data = NULL;
    return first;
}

pld_status_t pld_debug_sched_flush(pld_debug_t *d, char *err, size_t errn)
{
    dbg_sched_t *s = d->sched;
    if (s->n == 0)
        return PLD_OK;
    pld_status_t first = PLD_OK;
    for (int i = 0; i < s->n; i++)
        if (!s->q[i].done) {
            pld_status_t st = apply(d, s, i, err, errn);
            if (first == PLD_OK)
                first = st;
        }
    compact(d, s);
    return first;
}

/* The random part of a preemption point: while a coin says so, one pending
 * entry (drawn among them) is applied. */
pld_status_t pld_debug_sched_point(pld_debug_t *d, char *err, size_t errn)
{
    dbg_sched_t *s = d->sched;
    if (s->n == 0)
        return PLD_OK;
    pld_status_t first = PLD_OK;
    int live = 0;
    for (int i = 0; i < s->n; i++)
        live += !s->q[i].done;
    while (live > 0 && (draw(s) >> 63)) {
        int j = (int)(draw(s) % (uint64_t)live), i = 0;
        for (i = 0; i < s->n; i++)
            if (!s->q[i].done && j-- == 0)
                break;
        pld_status_t st = apply(d, s, i, err, errn);
        if (first == PLD_OK)
            first = st;
        live = 0;
        for (i = 0; i < s->n; i++)
            live += !s->q[i].done;
    }
    compact(d, s);
    return first;
}

pld_status_t pld_debug_sched_overlap(pld_debug_t *d, int dom, int peer, size_t disp, size_t bytes, char *err,
                                     size_t errn)
{
    dbg_sched_t *s = d->sched;
    pld_status_t first = PLD_OK;
    if (s->n == 0)
        return PLD_OK;
    for (int i = 0; i < s->n; i++)
        if (!s->q[i].done && overlaps(&s->q[i], dom, peer, disp, bytes)) {
            pld_status_t st = apply(d, s, i, err, errn);
            if (first == PLD_OK)
                first = st;
        }
    compact(d, s);
    return first;
}

pld_status_t pld_debug_sched_put(pld_debug_t *d, int dom, pld_win_dom_t *win, int me, int n, int peer, size_t disp,
                                 const void *src, size_t bytes, char *err, size_t errn)
{
    dbg_sched_t *s = d->sched;
    if (!s->delay || peer == me || bytes == 0 || bytes > SCHED_MAX_HELD / 4 ||
        pld_win_dom_transport(win) == PLD_WIN_RMA || pld_win_dom_transport(win) == PLD_WIN_HYBRID || peer < 0 ||
        peer >= n || disp + bytes > pld_win_dom_extent(win)) {
        /* not held (the window layer reports a bad peer or range itself) */
        pld_status_t st = pld_debug_sched_overlap(d, dom, peer, disp, bytes, err, errn);
        return st != PLD_OK ? st : pld_win_put(win, peer, disp, src, bytes, err, errn);
    }
    /* a pending put to the same target that this one covers entirely is
     * dropped: it is as if it had landed just before this one (no one can
     * tell), and a loop of puts to one place holds one copy, not many */
    int dropped = 0;
    for (int i = 0; i < s->n; i++) {
        pend_t *q = &s->q[i];
        if (!q->done && q->dom == dom && q->peer == peer && q->disp >= disp && q->disp + q->bytes <= disp + bytes) {
            q->done = 1;
            s->held -= q->bytes;
            buf_put(s, q->data, q->cap);
            q->data = NULL;
            dropped = 1;
        }
    }
    if (dropped)
        compact(d, s);
    while (s->n > 0 && (s->n == SCHED_MAX_PENDING || s->held + bytes > SCHED_MAX_HELD)) {
        pld_status_t st = apply(d, s, 0, err, errn); /* the oldest first: nothing is earlier */
        compact(d, s);
        if (st != PLD_OK)
            return st;
    }
    size_t cap;
    unsigned char *copy = buf_get(s, bytes, &cap);
    if (!copy) {
        snprintf(err, errn, "out of memory (holding back a put of %zu bytes)", bytes);
        return PLD_E_NOMEM;
    }
    memcpy(copy, src, bytes);
    if (s->n == 0) {
        /* the oldest pending put is applied after SCHED_STALE_STEPS operations at the latest */
        const uint64_t at = *d->o.steps + SCHED_STALE_STEPS;
        *d->o.step_limit = at < s->budget ? at : s->budget;
    }
    pend_t *p = &s->q[s->n++];
    memset(p, 0, sizeof *p);
    p->dom = dom;
    p->win = win;
    p->peer = peer;
    p->disp = disp;
    p->bytes = bytes;
    p->data = copy;
    p->cap = cap;
    if (d->o.trace) {
        p->at = s->site;
        p->t_issue = pld_trace_now();
    }
    s->held += bytes;
    if (d->o.puts_held)
        (*d->o.puts_held)++;
    return PLD_OK;
}
