/* pld_race.c - --check-races: every pair of conflicting window accesses
 * that no happens-before edge orders is reported, both sides named
 * (docs/races.md is the model; pld_hb.c keeps the records).
 *
 * Threads: slot 0 of each rank is its orchestration (HOST and CHIP
 * functions); slots 1..PLD_RACE_SLOTS-1 are the blocks, cores and lanes of
 * kernel launches (block b, core/lane c -> 1 + (4b + c) mod 32: a launch of
 * more than 32 blocks folds blocks onto one slot, which can only hide a race
 * between them). Thread id = world rank x PLD_RACE_SLOTS + slot; each rank
 * keeps the clocks of its own slots.
 *
 * Every domain gets a segment window beside its data window (pld_hb.h
 * layout, same members), mapped by every member: only the shm and local
 * transports map peers, so --check-races refuses a domain over rma. An
 * access is recorded in the segment of the rank that owns the bytes, under
 * that segment's lock; a notify updates the target's release set under the
 * target's lock, together with the cell itself, so a waiter that saw the
 * value acquires exactly the contributions behind it.
 *
 * Layer: base (called by pld_dist.c, pld_task.c, the ops and the walker). */
#include "pld_interp_int.h"
#include "pld_hb.h"
#include "pld_mem.h"

#include <stdio.h>
#include <string.h>

#define PLD_RACE_SLOTS 33      /* per rank: orchestration + 32 block slots */
#define PLD_RACE_CELLS 1024    /* signal cells per window with a release set */
#define PLD_RACE_MAX_REPORTS 200

typedef struct rdom {
    pld_win_dom_t *w;          /* the segments (NULL: not a member) */
    pld_hb_geom_t g;
    void **seg;                /* by domain rank: that member's segment as mapped here */
} rdom_t;

/* The clock a deferred task completed with (edge 7). */
typedef struct tclock {
    int64_t tid;
    uint32_t *clk;
} tclock_t;

typedef struct pair {
    pld_hb_site_t a, b;
} pair_t;

struct pld_race {
    uint32_t P, V, me;
    uint32_t *clk;             /* PLD_RACE_SLOTS x V: the clock of each local slot */
    uint64_t children[PLD_RACE_SLOTS]; /* slots forked by each slot's running launch */
    uint8_t parent[PLD_RACE_SLOTS];    /* the launcher of each forked slot */
    rdom_t *dom;
    int ndom;
    pair_t *pairs;             /* pairs of sites already reported */
    int npairs, cappairs;
    uint64_t evicted;
    int full_reported;
    tclock_t *tasks;           /* completion clocks of deferred tasks */
    int ntasks, captasks;
    int64_t redirect;          /* > 0: waits acquire into this task's clock (its deferred completion) */
};

/* ------------------------------------------------------------ threads */

static uint32_t slot_of(const frame_t *f)
{
    if (!f || f->ctx != PLD_CTX_KERNEL)
        return 0;
    uint64_t c = (uint64_t)(f->xg ? f->xcore : f->subblock_idx) & 3;
    return 1 + (uint32_t)(((uint64_t)f->block_idx * 4 + c) % (PLD_RACE_SLOTS - 1));
}

static uint32_t *clock_of(struct pld_race *r, uint32_t slot)
{
    return &r->clk[(size_t)slot * r->V];
}

static uint32_t tid_of(const struct pld_race *r, uint32_t slot)
{
    return r->me * PLD_RACE_SLOTS + slot;
}

static pld_hb_site_t site_of(const frame_t *f, const pld_expr_t *e)
{
    pld_hb_site_t s;
    s.off = e ? e->span.off : 0;
    s.len = e ? (e->span.len < 0xFFFF ? e->span.len : 0xFFFF) : 0;
    s.op = e ? (uint16_t)(e->op + 1) : 0;
    s.block = f && f->ctx == PLD_CTX_KERNEL ? (uint16_t)(f->block_idx < 0xFFFF ? f->block_idx : 0xFFFE) : 0xFFFF;
    return s;
}

/* ------------------------------------------------------------ state */

pld_status_t pld_race_open(pld_interp_t *it, char *err, size_t errn)
{
    if (strcmp(pld_hw_name(it->hw), "sim") != 0) {
        snprintf(err, errn,
                 "--check-races needs --backend sim: with backend '%s' compiled kernels access the windows directly "
                 "and their accesses cannot be recorded",
                 pld_hw_name(it->hw));
        return PLD_E_USAGE;
    }
    struct pld_race *r = pld_mem_calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errn, "out of memory");
        return PLD_E_NOMEM;
    }
    r->P = (uint32_t)it->comm.nranks;
    r->me = (uint32_t)it->comm.rank;
    r->V = r->P * PLD_RACE_SLOTS;
    r->clk = pld_mem_calloc((size_t)PLD_RACE_SLOTS * r->V, sizeof *r->clk);
    if (!r->clk) {
        pld_mem_free(r);
        snprintf(err, errn, "out of memory");
        return PLD_E_NOMEM;
    }
    /* every thread starts at epoch 1: nothing of it is known to the others */
    for (uint32_t s = 0; s < PLD_RACE_SLOTS; s++)
        clock_of(r, s)[tid_of(r, s)] = 1;
    it->race = r;
    return PLD_OK;
}

void pld_race_close(pld_interp_t *it)
{
    struct pld_race *r = it->race;
    if (!r)
        return;
    pld_mem_free(r->clk);
    pld_mem_free(r->pairs);
    for (int i = 0; i < r->ntasks; i++)
        pld_mem_free(r->tasks[i].clk);
    pld_mem_free(r->tasks);
    pld_mem_free(r);
    it->race = NULL;
}

pld_status_t pld_race_create(pld_interp_t *it)
{
    struct pld_race *r = it->race;
    r->dom = pld_mem_calloc((size_t)(it->ndoms ? it->ndoms : 1), sizeof *r->dom);
    if (!r->dom)
        return pld_rt_error(it, NULL, it->entry->name_span, "out of memory");
    r->ndom = it->ndoms;
    for (int d = 0; d < it->ndoms; d++) {
        domain_t *dm = &it->doms[d];
        if (dm->me < 0)
            continue;
        rdom_t *rd = &r->dom[d];
        rd->g.nthreads = r->V;
        rd->g.ncells = PLD_RACE_CELLS;
        rd->g.bytes = pld_win_dom_extent(dm->win);
        char err[512];
        pld_status_t st = pld_win_dom_create(it->win, dm->members, dm->n, pld_hb_seg_bytes(&rd->g), &rd->w, err,
                                             sizeof err);
        if (st != PLD_OK)
            return pld_rt_error(it, NULL, it->entry->name_span,
                                "--check-races: cannot create the access records of comm domain %d: %s", d, err);
        rd->seg = pld_mem_calloc((size_t)dm->n, sizeof *rd->seg);
        if (!rd->seg)
            return pld_rt_error(it, NULL, it->entry->name_span, "out of memory");
        for (int m = 0; m < dm->n; m++) {
            rd->seg[m] = pld_win_dom_peer_addr(rd->w, m);
            if (!rd->seg[m])
                /* every member sees the same transport: all of them stop here */
                return pld_rt_error(it, NULL, it->entry->name_span,
                                    "--check-races needs every member of a comm domain to map the others' windows "
                                    "(all ranks on one host, window transport shm); comm domain %d uses %s",
                                    d, pld_win_transport_name(pld_win_dom_transport(dm->win)));
        }
    }
    return PLD_OK;
}

void pld_race_fini(pld_interp_t *it)
{
    struct pld_race *r = it->race;
    if (!r || !r->dom)
        return;
    for (int d = 0; d < r->ndom; d++) {
        if (r->dom[d].w)
            pld_win_dom_destroy(r->dom[d].w);
        pld_mem_free(r->dom[d].seg);
    }
    pld_mem_free(r->dom);
    r->dom = NULL;
    r->ndom = 0;
}

/* ------------------------------------------------------------ reports */

typedef struct rctx {
    pld_interp_t *it;
    const frame_t *f;
    const pld_expr_t *e;
    const domain_t *d;
    int owner;                 /* domain rank of the bytes' owner */
    int kind;
    pld_hb_site_t site;
} rctx_t;

static const char *kind_now(int k)
{
    return k == PLD_HB_READ ? "reads" : k == PLD_HB_WRITE ? "writes" : "atomically adds to";
}

static const char *kind_then(int k)
{
    return k == PLD_HB_READ ? "read" : k == PLD_HB_WRITE ? "wrote" : "atomically added to";
}

static const char *op_text(uint16_t op)
{
    return op ? pld_op_info((pld_op_id_t)(op - 1))->name : "a builtin collective kernel";
}

static void thread_text(char *buf, size_t n, uint32_t rank, uint16_t block)
{
    if (block == 0xFFFF)
        snprintf(buf, n, "rank %u (orchestration)", rank);
    else
        snprintf(buf, n, "rank %u block %u", rank, (unsigned)block);
}

static int seen_pair(struct pld_race *r, const pld_hb_site_t *a, const pld_hb_site_t *b)
{
    for (int i = 0; i < r->npairs; i++) {
        const pair_t *p = &r->pairs[i];
        if ((!memcmp(&p->a, a, sizeof *a) && !memcmp(&p->b, b, sizeof *b)) ||
            (!memcmp(&p->a, b, sizeof *b) && !memcmp(&p->b, a, sizeof *a)))
            return 1;
    }
    if (r->npairs == r->cappairs) {
        int cap = r->cappairs ? 2 * r->cappairs : 16;
        pair_t *np = pld_mem_realloc(r->pairs, (size_t)cap * sizeof *np);
        if (!np)
            return 1;
        r->pairs = np;
        r->cappairs = cap;
    }
    r->pairs[r->npairs++] = (pair_t){*a, *b};
    return 0;
}

/* The span of a site: line and column from the byte offset. */
static pld_span_t span_of(const pld_program_t *p, const pld_hb_site_t *s)
{
    pld_span_t sp = {s->off, s->len, 1, 1};
    for (uint32_t i = 0; i < s->off && i < p->src_len; i++) {
        if (p->src[i] == '\n') {
            sp.line++;
            sp.col = 1;
        } else {
            sp.col++;
        }
    }
    return sp;
}

static void on_race(void *ctx, const pld_hb_race_t *x)
{
    rctx_t *c = ctx;
    struct pld_race *r = c->it->race;
    pld_hb_site_t other = x->site;
    if (seen_pair(r, &c->site, &other) || r->npairs > PLD_RACE_MAX_REPORTS)
        return;
    const winbuf_t *w = pld_winbuf_at(c->it, c->d, x->lo);
    size_t base = w ? w->offset : 0;
    char me[64], them[64];
    thread_text(me, sizeof me, r->me, c->site.block);
    thread_text(them, sizeof them, x->tid / PLD_RACE_SLOTS, other.block);
    c->it->stats.races++;
    pld_diag_t *dg = pld_diag_add(&c->it->p->diags, PLD_SEV_WARNING, c->e->span,
                                  "data race on window '%s' of rank %d, bytes [%zu, %zu): %s by %s %s them, and "
                                  "nothing orders it with %s by %s, which %s them (docs/races.md)",
                                  w ? (w->synth ? "the allreduce signal" : w->name) : "?", c->d->members[c->owner],
                                  x->lo - base, x->hi - base, pld_op_name(c->e), me, kind_now(c->kind),
                                  op_text(other.op), them, kind_then(x->kind));
    pld_diag_note(&c->it->p->diags, dg, span_of(c->it->p, &other), "the other access: %s by %s", op_text(other.op),
                  them);
}

/* ------------------------------------------------------------ accesses */

static void access(pld_interp_t *it, const frame_t *f, const pld_expr_t *e, domain_t *d, int owner, size_t disp,
                   size_t bytes, int kind)
{
    struct pld_race *r = it->race;
    int di = (int)(d - it->doms);
    if (di < 0 || di >= r->ndom || !r->dom[di].w || !bytes)
        return;
    rdom_t *rd = &r->dom[di];
    uint32_t slot = slot_of(f);
    rctx_t c = {it, f, e, d, owner, kind, site_of(f, e)};
    void *seg = rd->seg[owner];
    pld_hb_lock(seg);
    r->evicted += pld_hb_access(seg, &rd->g, tid_of(r, slot), clock_of(r, slot), kind, c.site, disp, bytes, on_race, &c);
    pld_hb_unlock(seg);
}

void pld_race_remote(pld_interp_t *it, frame_t *f, const pld_expr_t *e, domain_t *d, int peer, size_t disp,
                     size_t bytes, int dir)
{
    access(it, f, e, d, peer, disp, bytes, dir == 0 ? PLD_HB_READ : dir == 1 ? PLD_HB_WRITE : PLD_HB_ATOMIC);
}

typedef struct lctx {
    pld_interp_t *it;
    const frame_t *f;
    const pld_expr_t *e;
    domain_t *d;
    size_t base;               /* window byte of the buffer's first byte */
    int kind;
} lctx_t;

static void local_run(void *ctx, int64_t at, int64_t bytes)
{
    lctx_t *c = ctx;
    access(c->it, c->f, c->e, c->d, c->d->me, c->base + (size_t)at, (size_t)bytes, c->kind);
}

void pld_race_local(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_tensor_t *t, const int64_t *off,
                    const int64_t *ext, int kind)
{
    if (!t || !t->buf)
        return;
    for (int i = 0; i < it->nwins; i++) {
        const winbuf_t *w = &it->wins[i];
        if (w->buf && w->buf->data == t->buf->data) {
            domain_t *d = &it->doms[w->dom];
            if (d->me < 0 || !d->win)
                return;
            lctx_t c = {it, f, e, d, (size_t)((char *)t->buf->data - (char *)pld_win_dom_base(d->win)), kind};
            int64_t zero[PLD_MAX_RANK] = {0};
            pld_tensor_box_runs(t, off ? off : zero, ext ? ext : t->shape, local_run, &c);
            return;
        }
    }
}

/* ------------------------------------------------------------ edges */

void pld_race_notify_lock(pld_interp_t *it, domain_t *d, int peer)
{
    struct pld_race *r = it->race;
    int di = (int)(d - it->doms);
    if (di >= 0 && di < r->ndom && r->dom[di].w)
        pld_hb_lock(r->dom[di].seg[peer]);
}

void pld_race_notify_unlock(pld_interp_t *it, frame_t *f, const pld_expr_t *e, domain_t *d, int peer, size_t disp,
                            int32_t v, int set, int done)
{
    struct pld_race *r = it->race;
    int di = (int)(d - it->doms);
    if (di < 0 || di >= r->ndom || !r->dom[di].w)
        return;
    rdom_t *rd = &r->dom[di];
    uint32_t slot = slot_of(f);
    int full = done && pld_hb_release(rd->seg[peer], &rd->g, disp, v, set, clock_of(r, slot)) != 0;
    pld_hb_unlock(rd->seg[peer]);
    if (done && set == 0 && v < 0)
        return; /* the epilogue releases nothing */
    clock_of(r, slot)[tid_of(r, slot)]++;
    if (full && !r->full_reported) {
        r->full_reported = 1;
        pld_diag_add(&it->p->diags, PLD_SEV_WARNING, e->span,
                     "--check-races: window of comm domain %d has more than %d signal cells; notifies of further "
                     "cells order nothing, so races may be reported that are not",
                     di, PLD_RACE_CELLS);
    }
}

/* Task tid's completion clock (created zero when absent), or NULL (OOM). */
static uint32_t *task_clock(struct pld_race *r, int64_t tid, int create)
{
    for (int i = 0; i < r->ntasks; i++)
        if (r->tasks[i].tid == tid)
            return r->tasks[i].clk;
    if (!create)
        return NULL;
    if (r->ntasks == r->captasks) {
        int cap = r->captasks ? 2 * r->captasks : 8;
        tclock_t *nt = pld_mem_realloc(r->tasks, (size_t)cap * sizeof *nt);
        if (!nt)
            return NULL;
        r->tasks = nt;
        r->captasks = cap;
    }
    uint32_t *c = pld_mem_calloc(r->V, sizeof *c);
    if (!c)
        return NULL;
    r->tasks[r->ntasks++] = (tclock_t){tid, c};
    return c;
}

static void acquire_into(pld_interp_t *it, domain_t *d, size_t disp, int cmp, int32_t expected, uint32_t *clk)
{
    struct pld_race *r = it->race;
    int di = (int)(d - it->doms);
    if (!clk || di < 0 || di >= r->ndom || !r->dom[di].w)
        return;
    rdom_t *rd = &r->dom[di];
    void *seg = rd->seg[d->me];
    pld_hb_lock(seg);
    pld_hb_acquire(seg, &rd->g, disp, cmp, expected, clk);
    pld_hb_unlock(seg);
}

void pld_race_acquire(pld_interp_t *it, frame_t *f, domain_t *d, size_t disp, int cmp, int32_t expected)
{
    struct pld_race *r = it->race;
    acquire_into(it, d, disp, cmp, expected, r->redirect > 0 ? task_clock(r, r->redirect, 1) : clock_of(r, slot_of(f)));
}

void pld_race_task_acquire(pld_interp_t *it, int64_t tid, domain_t *d, size_t disp, int cmp, int32_t expected)
{
    acquire_into(it, d, disp, cmp, expected, task_clock(it->race, tid, 1));
}

void pld_race_task_redirect(pld_interp_t *it, int64_t tid)
{
    it->race->redirect = tid;
}

void pld_race_task_deps(pld_interp_t *it, const frame_t *f, int64_t tid, const int64_t *deps, int ndeps)
{
    struct pld_race *r = it->race;
    uint32_t *into = tid > 0 ? task_clock(r, tid, 1) : clock_of(r, slot_of(f));
    for (int k = 0; into && k < ndeps; k++) {
        const uint32_t *c = task_clock(r, deps[k], 0);
        if (c)
            pld_hb_join(into, c, r->V);
    }
}

void pld_race_fork(pld_interp_t *it, const frame_t *parent, const frame_t *child)
{
    struct pld_race *r = it->race;
    uint32_t l = slot_of(parent), s = slot_of(child);
    if (l == s)
        return;
    pld_hb_join(clock_of(r, s), clock_of(r, l), r->V);
    clock_of(r, s)[tid_of(r, s)]++;
    r->children[l] |= 1ull << s;
    r->parent[s] = (uint8_t)l;
}

void pld_race_sync(pld_interp_t *it, const frame_t *f, int how)
{
    struct pld_race *r = it->race;
    uint32_t s = slot_of(f);
    if (how == 0) {
        clock_of(r, s)[tid_of(r, s)]++;
        return;
    }
    uint64_t from = how == 1 ? r->children[r->parent[s]] | 1ull << r->parent[s] : ~0ull;
    for (uint32_t k = 0; k < PLD_RACE_SLOTS; k++)
        if (k != s && (from & (1ull << k)))
            pld_hb_join(clock_of(r, s), clock_of(r, k), r->V);
}

void pld_race_join(pld_interp_t *it, const frame_t *parent)
{
    struct pld_race *r = it->race;
    uint32_t l = slot_of(parent);
    for (uint32_t s = 0; s < PLD_RACE_SLOTS; s++)
        if (r->children[l] & (1ull << s)) {
            pld_hb_join(clock_of(r, l), clock_of(r, s), r->V);
            clock_of(r, s)[tid_of(r, s)]++;
        }
    r->children[l] = 0;
    clock_of(r, l)[tid_of(r, l)]++;
}

void pld_race_barrier(pld_interp_t *it, int done, int after, int clear)
{
    struct pld_race *r = it->race;
    if (!after) {
        /* before the barrier: publish everything this rank did */
        uint32_t *all = pld_mem_calloc(r->V, sizeof *all);
        if (!all)
            return;
        for (uint32_t s = 0; s < PLD_RACE_SLOTS; s++)
            pld_hb_join(all, clock_of(r, s), r->V);
        for (int d = 0; d < r->ndom; d++)
            if (r->dom[d].w) {
                void *seg = r->dom[d].seg[it->doms[d].me];
                pld_hb_lock(seg);
                pld_hb_publish(seg, &r->dom[d].g, done, all);
                pld_hb_unlock(seg);
            }
        pld_mem_free(all);
        return;
    }
    /* every rank got there: each thread of this rank is ordered after
     * every thread of every member */
    for (int d = 0; d < r->ndom; d++) {
        if (!r->dom[d].w)
            continue;
        for (int m = 0; m < it->doms[d].n; m++) {
            void *seg = r->dom[d].seg[m];
            pld_hb_lock(seg);
            for (uint32_t s = 0; s < PLD_RACE_SLOTS; s++)
                pld_hb_join_published(seg, &r->dom[d].g, done, clock_of(r, s));
            pld_hb_unlock(seg);
        }
        if (clear) {
            void *seg = r->dom[d].seg[it->doms[d].me];
            pld_hb_lock(seg);
            pld_hb_clear(seg, &r->dom[d].g);
            pld_hb_unlock(seg);
        }
    }
}

void pld_race_summary(pld_interp_t *it)
{
    struct pld_race *r = it->race;
    if (r && r->evicted) {
        pld_span_t none = {0, 0, 0, 0};
        pld_diag_add(&it->p->diags, PLD_SEV_WARNING, none,
                     "--check-races forgot %llu access records (more than %d live accesses in a 64-byte granule of a "
                     "window): races with them may have been missed",
                     (unsigned long long)r->evicted, PLD_HB_SLOTS);
    }
}
