/* pld_debug_race.c - --check-races: every pair of conflicting window
 * accesses that no happens-before edge orders is reported, both sides named
 * (docs/races.md is the model; pld_hb.c keeps the records).
 *
 * Threads: slot 0 of each rank is its orchestration (HOST and CHIP
 * functions); slots 1..PLD_RACE_SLOTS-1 are the blocks, cores and lanes of
 * kernel launches, taken when a thread is forked and given back when its
 * launcher joins it. A slot is reused only by a thread that is ordered after
 * the slot's last thread (exact: the two are one thread in program order);
 * when no such slot is free, threads share one (a race between them can be
 * missed, never invented) and the run ends with a warning (r->folded).
 * Thread id = world rank x PLD_RACE_SLOTS + slot; each rank keeps the clocks
 * of its own slots.
 *
 * Detached launches (a task queued behind deps=, a task of a manual scope):
 * the blocks start from the issue clock joined with the deps' completion
 * clocks (det_base) and end in the task's completion clock, not in the
 * orchestration's, which joins them where the program waits for them (the
 * end of a manual scope, the end of the orchestration function).
 *
 * Every domain gets a segment window beside its data window (pld_hb.h
 * layout, same members), mapped by every member: only the shm and local
 * transports map peers, so --check-races refuses a domain over rma. An
 * access is recorded in the segment of the rank that owns the bytes, under
 * that segment's lock; a notify updates the target's release set under the
 * target's lock, together with the cell itself, so a waiter that saw the
 * value acquires exactly the contributions behind it. */
#include "pld_debug_int.h"
#include "pld_mem.h"

#include <stdio.h>
#include <string.h>

#define PLD_RACE_CELLS 1024    /* signal cells per window with a release set */
#define PLD_RACE_MAX_REPORTS 200

/* ------------------------------------------------------------ threads */

static uint32_t *clock_of(dbg_race_t *r, uint32_t slot)
{
    return &r->clk[(size_t)slot * r->V];
}

static uint32_t tid_of(const dbg_race_t *r, uint32_t slot)
{
    return r->me * PLD_RACE_SLOTS + slot;
}

/* The live kernel thread (block, lane) of t: its index in r->keys, or -1. */
static int key_find(const dbg_race_t *r, const pld_debug_thread_t *t)
{
    for (int i = r->nkeys - 1; i >= 0; i--)
        if (r->keys[i].block == t->block && r->keys[i].lane == t->lane)
            return i;
    return -1;
}

/* A slot for a thread of no key (more live threads than PLD_RACE_KEYS, or
 * one that was never forked): a fixed one, shared. */
static uint32_t fixed_slot(const pld_debug_thread_t *t)
{
    return 1 + (uint32_t)(((uint64_t)t->block * 4 + ((uint64_t)t->lane & 3)) % (PLD_RACE_SLOTS - 1));
}

/* Slot s has run a thread (or is running one). */
static int slot_used(const dbg_race_t *r, uint32_t s)
{
    return s == 0 || r->last[s] || (r->busy & (1ull << s));
}

static uint32_t slot_of(const dbg_race_t *r, const pld_debug_thread_t *t)
{
    if (!t || !t->kernel)
        return 0;
    int i = key_find(r, t);
    return i >= 0 ? r->keys[i].slot : fixed_slot(t);
}

/* A free slot for a thread starting with clock src: one whose last thread
 * src is ordered after (exact), else any free one, else a busy one (both
 * fold: counted). */
static uint32_t take_slot(dbg_race_t *r, const uint32_t *src, const pld_debug_thread_t *t)
{
    uint32_t any = 0;
    for (uint32_t s = 1; s < PLD_RACE_SLOTS; s++) {
        if (r->busy & (1ull << s))
            continue;
        if (r->last[s] <= src[tid_of(r, s)])
            return s;
        if (!any)
            any = s;
    }
    r->folded++;
    return any ? any : fixed_slot(t);
}

static pld_hb_site_t site_of(const pld_debug_thread_t *t, const pld_debug_at_t *at)
{
    pld_hb_site_t s;
    s.off = at->span.off;
    s.len = at->span.len < 0xFFFF ? at->span.len : 0xFFFF;
    s.op = (uint16_t)(at->op + 1);
    s.block = t && t->kernel ? (uint16_t)(t->block < 0xFFFF ? t->block : 0xFFFE) : 0xFFFF;
    return s;
}

/* ------------------------------------------------------------ state */

/* A plain tensor buffer kernels of the running launch wrote: its records (a
 * segment of pld_hb.h in this rank's memory: no other rank sees its bytes). */
typedef struct plain {
    const void *buf;
    size_t bytes;
    const char *name;
    pld_hb_geom_t g;
    void *seg;
} plain_t;

static void plain_reset(dbg_race_t *r)
{
    for (int i = 0; i < r->nplain; i++)
        pld_mem_free(r->plain[i].seg);
    r->nplain = 0;
}

pld_status_t pld_debug_race_open(pld_debug_t *d, char *err, size_t errn)
{
    if (strcmp(d->o.backend, "sim") != 0) {
        snprintf(err, errn,
                 "--check-races needs --backend sim: with backend '%s' compiled kernels access the windows directly "
                 "and their accesses cannot be recorded",
                 d->o.backend);
        return PLD_E_USAGE;
    }
    dbg_race_t *r = pld_mem_calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errn, "out of memory");
        return PLD_E_NOMEM;
    }
    r->P = (uint32_t)d->o.nranks;
    r->me = (uint32_t)d->o.rank;
    r->V = r->P * PLD_RACE_SLOTS;
    if (r->V > PLD_HB_MAX_THREADS) {
        pld_mem_free(r);
        snprintf(err, errn, "--check-races supports at most %d ranks, found %u", PLD_HB_MAX_THREADS / PLD_RACE_SLOTS,
                 (unsigned)d->o.nranks);
        return PLD_E_USAGE;
    }
    r->clk = pld_mem_calloc((size_t)PLD_RACE_SLOTS * r->V, sizeof *r->clk);
    if (!r->clk) {
        pld_mem_free(r);
        snprintf(err, errn, "out of memory");
        return PLD_E_NOMEM;
    }
    /* every thread starts at epoch 1: nothing of it is known to the others */
    for (uint32_t s = 0; s < PLD_RACE_SLOTS; s++)
        clock_of(r, s)[tid_of(r, s)] = 1;
    d->race = r;
    return PLD_OK;
}

void pld_debug_race_close(pld_debug_t *d)
{
    dbg_race_t *r = d->race;
    if (!r)
        return;
    pld_mem_free(r->clk);
    pld_mem_free(r->pairs);
    for (int i = 0; i < r->ntasks; i++) {
        pld_mem_free(r->tasks[i].clk);
        pld_mem_free(r->tasks[i].start);
    }
    pld_mem_free(r->tasks);
    pld_mem_free(r->det_base);
    plain_reset(r);
    pld_mem_free(r->plain);
    pld_mem_free(r);
    d->race = NULL;
}

pld_status_t pld_debug_race_domains(pld_debug_t *d, int ndoms, char *err, size_t errn)
{
    dbg_race_t *r = d->race;
    r->dom = pld_mem_calloc((size_t)(ndoms ? ndoms : 1), sizeof *r->dom);
    if (!r->dom) {
        snprintf(err, errn, "out of memory");
        return PLD_E_NOMEM;
    }
    r->ndom = ndoms;
    return PLD_OK;
}

pld_status_t pld_debug_race_domain(pld_debug_t *d, pld_win_sys_t *world, int dom, pld_win_dom_t *data, const int *members,
                                   int n, int me, char *err, size_t errn)
{
    dbg_race_t *r = d->race;
    if (me < 0)
        return PLD_OK;
    rdom_t *rd = &r->dom[dom];
    rd->g.nthreads = r->V;
    rd->g.bytes = pld_win_dom_extent(data);
    /* a window of E bytes has at most E / 4 INT32 cells, and the caller may
     * know fewer (pld_debug_race_cells): a smaller table holds them all (the
     * window layer zeroes the whole segment, so its size is paid at start-up) */
    size_t cells = rd->g.bytes / 4;
    if (rd->cells_hint > 0 && (size_t)rd->cells_hint - 1 < cells)
        cells = (size_t)rd->cells_hint - 1;
    rd->g.ncells = cells + 2 < PLD_RACE_CELLS ? (uint32_t)(cells + 2) : PLD_RACE_CELLS;
    rd->n = n;
    rd->me = me;
    char werr[512];
    pld_status_t st = pld_win_dom_create(world, members, n, pld_hb_seg_bytes(&rd->g), &rd->w, werr, sizeof werr);
    if (st != PLD_OK) {
        snprintf(err, errn, "--check-races: cannot create the access records of comm domain %d: %s", dom, werr);
        return st;
    }
    rd->seg = pld_mem_calloc((size_t)n, sizeof *rd->seg);
    rd->members = pld_mem_calloc((size_t)n, sizeof *rd->members);
    if (!rd->seg || !rd->members) {
        snprintf(err, errn, "out of memory");
        return PLD_E_NOMEM;
    }
    memcpy(rd->members, members, (size_t)n * sizeof *members);
    for (int m = 0; m < n; m++) {
        rd->seg[m] = pld_win_dom_peer_addr(rd->w, m);
        if (!rd->seg[m]) {
            /* every member sees the same transport: all of them stop here */
            snprintf(err, errn,
                     "--check-races needs every member of a comm domain to map the others' windows "
                     "(all ranks on one host, window transport shm); comm domain %d uses %s",
                     dom, pld_win_transport_name(pld_win_dom_transport(data)));
            return PLD_E_RUNTIME;
        }
    }
    return PLD_OK;
}

void pld_debug_race_cells(pld_debug_t *d, int dom, size_t cells)
{
    dbg_race_t *r = d->race;
    if (dom >= 0 && dom < r->ndom)
        r->dom[dom].cells_hint = (int64_t)(cells < (size_t)INT32_MAX ? cells : INT32_MAX) + 1;
}

void pld_debug_race_fini(pld_debug_t *d)
{
    dbg_race_t *r = d ? d->race : NULL;
    if (!r || !r->dom)
        return;
    for (int i = 0; i < r->ndom; i++) {
        if (r->dom[i].w)
            pld_win_dom_destroy(r->dom[i].w);
        pld_mem_free(r->dom[i].seg);
        pld_mem_free(r->dom[i].members);
    }
    pld_mem_free(r->dom);
    r->dom = NULL;
    r->ndom = 0;
}

/* ------------------------------------------------------------ reports */

typedef struct rctx {
    pld_debug_t *d;
    const pld_debug_at_t *at;
    int dom;
    int owner;                 /* domain rank of the bytes' owner */
    int kind;
    pld_hb_site_t site;
} rctx_t;

static const char *kind_now(int k)
{
    return k == PLD_HB_READ ? "reads" : k == PLD_HB_WRITE ? "writes" : k == PLD_HB_SIGNAL ? "notifies" : "atomically adds to";
}

static const char *kind_then(int k)
{
    return k == PLD_HB_READ ? "read" : k == PLD_HB_WRITE ? "wrote" : k == PLD_HB_SIGNAL ? "notified" : "atomically added to";
}

static const char *access_text(int k)
{
    return k == PLD_HB_READ ? "read" : k == PLD_HB_WRITE ? "write" : k == PLD_HB_SIGNAL ? "notify" : "atomic";
}

static const char *op_text(const pld_debug_t *d, uint16_t op)
{
    return op ? d->o.host.op_name(d->o.host.ctx, op - 1) : "a builtin collective kernel";
}

static void thread_text(char *buf, size_t n, uint32_t rank, uint16_t block)
{
    if (block == 0xFFFF)
        snprintf(buf, n, "rank %u (orchestration)", rank);
    else
        snprintf(buf, n, "rank %u block %u", rank, (unsigned)block);
}

static int seen_pair(dbg_race_t *r, const pld_hb_site_t *a, const pld_hb_site_t *b)
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
static pld_span_t span_of(const pld_debug_t *d, const pld_hb_site_t *s)
{
    pld_span_t sp = {s->off, s->len, 1, 1};
    for (uint32_t i = 0; i < s->off && i < d->o.src_len; i++) {
        if (d->o.src[i] == '\n') {
            sp.line++;
            sp.col = 1;
        } else {
            sp.col++;
        }
    }
    return sp;
}

/* the record of race x for the tool's --findings: this rank's access (at,
 * site, kind) and the other side (x) */
static void race_finding(pld_debug_t *d, pld_debug_finding_t *f, const pld_diag_t *dg, const pld_debug_at_t *at,
                         pld_hb_site_t site, int kind, const pld_hb_race_t *x)
{
    const dbg_race_t *r = d->race;
    const pld_hb_site_t other = x->site;
    memset(f, 0, sizeof *f);
    f->kind = PLD_DEBUG_FINDING_RACE;
    f->message = dg ? dg->msg : "";
    f->nsides = 2;
    f->side[0] = (pld_debug_side_t){(int)r->me, site.block == 0xFFFF ? -1 : site.block, op_text(d, site.op),
                                    access_text(kind), at->span};
    f->side[1] = (pld_debug_side_t){(int)(x->tid / PLD_RACE_SLOTS), other.block == 0xFFFF ? -1 : other.block,
                                    op_text(d, other.op), access_text(x->kind), span_of(d, &other)};
}

static void on_race(void *ctx, const pld_hb_race_t *x)
{
    rctx_t *c = ctx;
    pld_debug_t *d = c->d;
    dbg_race_t *r = d->race;
    pld_hb_site_t other = x->site;
    if (seen_pair(r, &c->site, &other) || r->npairs > PLD_RACE_MAX_REPORTS)
        return;
    pld_debug_window_t w;
    int have = d->o.host.window_at(d->o.host.ctx, c->dom, x->lo, 0, &w);
    size_t base = have ? w.offset : 0;
    char me[64], them[64];
    thread_text(me, sizeof me, r->me, c->site.block);
    thread_text(them, sizeof them, x->tid / PLD_RACE_SLOTS, other.block);
    if (d->o.races)
        (*d->o.races)++;
    pld_diag_t *dg = pld_diag_add(d->o.diags, PLD_SEV_WARNING, c->at->span,
                                  "data race on window '%s' of rank %d, bytes [%zu, %zu): %s by %s %s them, and "
                                  "nothing orders it with %s by %s, which %s them (docs/races.md)",
                                  have ? (w.synth ? "the allreduce signal" : w.name) : "?",
                                  r->dom[c->dom].members[c->owner], x->lo - base, x->hi - base,
                                  d->o.host.site_name(d->o.host.ctx, c->at->key), me, kind_now(c->kind),
                                  op_text(d, other.op), them, kind_then(x->kind));
    pld_diag_note(d->o.diags, dg, span_of(d, &other), "the other access: %s by %s", op_text(d, other.op), them);
    if (d->o.finding) {
        pld_debug_finding_t f;
        race_finding(d, &f, dg, c->at, c->site, c->kind, x);
        f.target = have ? (w.synth ? "the allreduce signal" : w.name) : "?";
        f.owner = r->dom[c->dom].members[c->owner];
        f.lo = x->lo - base;
        f.hi = x->hi - base;
        d->o.finding(d->o.finding_ctx, &f);
    }
}

/* ------------------------------------------------------------ accesses */

void pld_debug_race_access(pld_debug_t *d, const pld_debug_thread_t *t, const pld_debug_at_t *at, int dom, int owner,
                           size_t disp, size_t bytes, int kind)
{
    dbg_race_t *r = d->race;
    if (dom < 0 || dom >= r->ndom || !r->dom[dom].w || !bytes)
        return;
    rdom_t *rd = &r->dom[dom];
    uint32_t slot = slot_of(r, t);
    rctx_t c = {d, at, dom, owner, kind, site_of(t, at)};
    void *seg = rd->seg[owner];
    pld_hb_lock(seg);
    r->evicted += pld_hb_access(seg, &rd->g, tid_of(r, slot), clock_of(r, slot), kind, c.site, disp, bytes, on_race, &c);
    pld_hb_unlock(seg);
}

/* ------------------------------------------------------------ edges */

void pld_debug_race_notify_lock(pld_debug_t *d, int dom, int peer)
{
    dbg_race_t *r = d->race;
    if (dom >= 0 && dom < r->ndom && r->dom[dom].w)
        pld_hb_lock(r->dom[dom].seg[peer]);
}

void pld_debug_race_notify_unlock(pld_debug_t *d, const pld_debug_thread_t *t, const pld_debug_at_t *at, int dom,
                                  int peer, size_t disp, int32_t v, int set, int done)
{
    dbg_race_t *r = d->race;
    if (dom < 0 || dom >= r->ndom || !r->dom[dom].w)
        return;
    rdom_t *rd = &r->dom[dom];
    uint32_t slot = slot_of(r, t);
    if (done) { /* the notify as an access of the cell (before its release moves the epoch) */
        rctx_t c = {d, at, dom, peer, PLD_HB_SIGNAL, site_of(t, at)};
        r->evicted += pld_hb_access(rd->seg[peer], &rd->g, tid_of(r, slot), clock_of(r, slot), PLD_HB_SIGNAL, c.site,
                                    disp, sizeof(int32_t), on_race, &c);
    }
    int full = done && pld_hb_release(rd->seg[peer], &rd->g, disp, v, set, clock_of(r, slot)) != 0;
    pld_hb_unlock(rd->seg[peer]);
    if (done && set == 0 && v < 0)
        return; /* the epilogue releases nothing */
    clock_of(r, slot)[tid_of(r, slot)]++;
    if (full && !r->full_reported) {
        r->full_reported = 1;
        pld_diag_add(d->o.diags, PLD_SEV_WARNING, at->span,
                     "--check-races: window of comm domain %d has more than %u signal cells; the further cells share "
                     "one merged release set (a wait on any of them acquires every notify of all of them), so races "
                     "they should expose may be missed",
                     dom, (unsigned)rd->g.ncells);
    }
}

/* Task tid's record (created with a zero completion clock when absent), or
 * NULL (absent, OOM). Valid until the next call (the table moves). */
static tclock_t *task_entry(dbg_race_t *r, int64_t tid, int create)
{
    for (int i = 0; i < r->ntasks; i++)
        if (r->tasks[i].tid == tid)
            return &r->tasks[i];
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
    r->tasks[r->ntasks] = (tclock_t){tid, c, NULL};
    return &r->tasks[r->ntasks++];
}

/* Task tid's completion clock (created zero when absent), or NULL. */
static uint32_t *task_clock(dbg_race_t *r, int64_t tid, int create)
{
    tclock_t *e = task_entry(r, tid, create);
    return e ? e->clk : NULL;
}

static void acquire_into(dbg_race_t *r, int dom, size_t disp, int cmp, int32_t expected, uint32_t *clk)
{
    if (!clk || dom < 0 || dom >= r->ndom || !r->dom[dom].w)
        return;
    rdom_t *rd = &r->dom[dom];
    void *seg = rd->seg[rd->me];
    pld_hb_lock(seg);
    pld_hb_acquire(seg, &rd->g, disp, cmp, expected, clk);
    pld_hb_unlock(seg);
}

void pld_debug_race_acquire(pld_debug_t *d, const pld_debug_thread_t *t, int dom, size_t disp, int cmp,
                            int32_t expected)
{
    dbg_race_t *r = d->race;
    acquire_into(r, dom, disp, cmp, expected, r->redirect > 0 ? task_clock(r, r->redirect, 1) : clock_of(r, slot_of(r, t)));
}

void pld_debug_race_task_acquire(pld_debug_t *d, int64_t tid, int dom, size_t disp, int cmp, int32_t expected)
{
    acquire_into(d->race, dom, disp, cmp, expected, task_clock(d->race, tid, 1));
}

void pld_debug_race_task_redirect(pld_debug_t *d, int64_t tid)
{
    d->race->redirect = tid;
}

void pld_debug_race_task_deps(pld_debug_t *d, const pld_debug_thread_t *t, int64_t tid, const int64_t *deps,
                              int ndeps)
{
    dbg_race_t *r = d->race;
    uint32_t *into = tid > 0                                   ? task_clock(r, tid, 1)
                     : r->det_on && slot_of(r, t) == 0 ? r->det_base /* a detached launch's start */
                                                       : clock_of(r, slot_of(r, t));
    for (int k = 0; into && k < ndeps; k++) {
        const uint32_t *c = task_clock(r, deps[k], 0);
        if (c)
            pld_hb_join(into, c, r->V);
    }
}

void pld_debug_race_fork(pld_debug_t *d, const pld_debug_thread_t *parent, const pld_debug_thread_t *child)
{
    dbg_race_t *r = d->race;
    if (!child || !child->kernel)
        return;
    uint32_t l = slot_of(r, parent), s;
    const uint32_t *src = l == 0 && r->det_on ? r->det_base : clock_of(r, l);
    int i = key_find(r, child);
    if (i >= 0) {
        /* a nested grid's block with the key of a live thread: that thread */
        s = r->keys[i].slot;
        if (s == l)
            return;
    } else if (r->nkeys == PLD_RACE_KEYS) {
        s = fixed_slot(child);
        r->folded++;
    } else {
        s = take_slot(r, src, child);
        r->keys[r->nkeys++] = (tkey_t){child->block, child->lane, (uint8_t)s, (uint8_t)l, 1};
        r->busy |= 1ull << s;
    }
    pld_hb_join(clock_of(r, s), src, r->V);
    clock_of(r, s)[tid_of(r, s)]++;
    r->children[l] |= 1ull << s;
    r->parent[s] = (uint8_t)l;
}

void pld_debug_race_sync(pld_debug_t *d, const pld_debug_thread_t *t, int how)
{
    dbg_race_t *r = d->race;
    uint32_t s = slot_of(r, t);
    if (how == 0) {
        clock_of(r, s)[tid_of(r, s)]++;
        return;
    }
    uint64_t from = how == 1 ? r->children[r->parent[s]] | 1ull << r->parent[s] : ~0ull;
    for (uint32_t k = 0; k < PLD_RACE_SLOTS; k++)
        if (k != s && (from & (1ull << k)))
            pld_hb_join(clock_of(r, s), clock_of(r, k), r->V);
}

void pld_debug_race_join(pld_debug_t *d, const pld_debug_thread_t *parent)
{
    dbg_race_t *r = d->race;
    uint32_t l = slot_of(r, parent);
    int detached = l == 0 && r->det_on;
    uint32_t *into = detached && r->det_tid > 0 ? task_clock(r, r->det_tid, 1) : NULL;
    if (!into)
        into = clock_of(r, l);
    for (uint32_t s = 0; s < PLD_RACE_SLOTS; s++)
        if (r->children[l] & (1ull << s)) {
            pld_hb_join(into, clock_of(r, s), r->V);
            r->last[s] = clock_of(r, s)[tid_of(r, s)];
            clock_of(r, s)[tid_of(r, s)]++;
        }
    r->children[l] = 0;
    /* the threads this launch forked end: their slots are free again (the
     * orchestration's launch ends every kernel thread) */
    int n = 0;
    for (int i = 0; i < r->nkeys; i++) {
        if (l == 0 || (r->keys[i].parent == l && r->keys[i].owned)) {
            r->busy &= ~(1ull << r->keys[i].slot);
            continue;
        }
        r->keys[n++] = r->keys[i];
    }
    r->nkeys = n;
    clock_of(r, l)[tid_of(r, l)]++;
    if (detached) {
        r->det_on = 0;
        r->det_tid = 0;
    }
    if (l == 0) /* the orchestration's launch is over: what its blocks wrote is ordered before everything after */
        plain_reset(r);
}

void pld_debug_race_barrier(pld_debug_t *d, int done, int after, int clear)
{
    dbg_race_t *r = d->race;
    if (!after) {
        /* before the barrier: publish everything this rank did */
        uint32_t *all = pld_mem_calloc(r->V, sizeof *all);
        if (!all)
            return;
        for (uint32_t s = 0; s < PLD_RACE_SLOTS; s++)
            if (slot_used(r, s))
                pld_hb_join(all, clock_of(r, s), r->V);
        for (int i = 0; i < r->ndom; i++)
            if (r->dom[i].w) {
                void *seg = r->dom[i].seg[r->dom[i].me];
                pld_hb_lock(seg);
                pld_hb_publish(seg, &r->dom[i].g, done, all);
                pld_hb_unlock(seg);
            }
        pld_mem_free(all);
        return;
    }
    /* every rank got there: each thread of this rank is ordered after
     * every thread of every member. The threads that act after the barrier
     * are the orchestration and the kernel threads it forks (from its
     * clock): slot 0 and the live ones (none between dispatches) are enough */
    for (int i = 0; i < r->ndom; i++) {
        if (!r->dom[i].w)
            continue;
        for (int m = 0; m < r->dom[i].n; m++) {
            void *seg = r->dom[i].seg[m];
            pld_hb_lock(seg);
            for (uint32_t s = 0; s < PLD_RACE_SLOTS; s++)
                if (s == 0 || (r->busy & (1ull << s)))
                    pld_hb_join_published(seg, &r->dom[i].g, done, clock_of(r, s));
            pld_hb_unlock(seg);
        }
        if (clear) {
            void *seg = r->dom[i].seg[r->dom[i].me];
            pld_hb_lock(seg);
            pld_hb_clear(seg, &r->dom[i].g);
            pld_hb_unlock(seg);
        }
    }
}

/* ------------------------------------------------------------ detached tasks */

void pld_debug_race_task_issue(pld_debug_t *d, const pld_debug_thread_t *t, int64_t tid)
{
    dbg_race_t *r = d->race;
    if (slot_of(r, t) != 0)
        return;
    tclock_t *e = task_entry(r, tid, 1);
    if (!e)
        return;
    if (!e->start && !(e->start = pld_mem_calloc(r->V, sizeof *e->start)))
        return;
    memcpy(e->start, clock_of(r, 0), r->V * sizeof *e->start);
    clock_of(r, 0)[tid_of(r, 0)]++; /* what the orchestration does next is not before the task */
}

void pld_debug_race_task_detach(pld_debug_t *d, const pld_debug_thread_t *t, int64_t queued)
{
    dbg_race_t *r = d->race;
    if (slot_of(r, t) != 0)
        return;
    if (!r->det_base && !(r->det_base = pld_mem_calloc(r->V, sizeof *r->det_base)))
        return;
    tclock_t *e = queued > 0 ? task_entry(r, queued, 0) : NULL;
    if (e && e->start) {
        memcpy(r->det_base, e->start, r->V * sizeof *r->det_base);
    } else {
        memcpy(r->det_base, clock_of(r, 0), r->V * sizeof *r->det_base);
        clock_of(r, 0)[tid_of(r, 0)]++;
    }
    r->det_on = 1;
    r->det_tid = 0;
}

void pld_debug_race_task_tid(pld_debug_t *d, int64_t tid)
{
    dbg_race_t *r = d->race;
    if (tid == 0) {
        r->det_on = 0; /* the launch is over (also one that never joined) */
        r->det_tid = 0;
    } else if (r->det_on && r->det_tid == 0) {
        r->det_tid = tid;
    }
}

void pld_debug_race_task_settle(pld_debug_t *d, const pld_debug_thread_t *t)
{
    dbg_race_t *r = d->race;
    uint32_t *into = clock_of(r, slot_of(r, t));
    for (int i = 0; i < r->ntasks; i++) {
        pld_hb_join(into, r->tasks[i].clk, r->V);
        pld_mem_free(r->tasks[i].clk);
        pld_mem_free(r->tasks[i].start);
    }
    r->ntasks = 0;
}

void pld_debug_race_summary(pld_debug_t *d)
{
    dbg_race_t *r = d ? d->race : NULL;
    if (r && r->folded) {
        pld_span_t none = {0, 0, 0, 0};
        pld_diag_add(d->o.diags, PLD_SEV_WARNING, none,
                     "--check-races: %llu kernel threads had to share a clock slot (more than %d threads of a rank "
                     "not ordered with each other at once): races between threads that shared a slot may have been "
                     "missed",
                     (unsigned long long)r->folded, PLD_RACE_SLOTS - 1);
    }
    if (r && r->evicted) {
        pld_span_t none = {0, 0, 0, 0};
        pld_diag_add(d->o.diags, PLD_SEV_WARNING, none,
                     "--check-races forgot %llu access records (more than %d live accesses in a 64-byte granule of a "
                     "window): races with them may have been missed",
                     (unsigned long long)r->evicted, PLD_HB_SLOTS);
    }
}

/* ------------------------------------------------------------ plain tensors */

typedef struct pctx {
    pld_debug_t *d;
    const pld_debug_at_t *at;
    const plain_t *p;
    int kind;
    pld_hb_site_t site;
} pctx_t;

static void on_plain_race(void *ctx, const pld_hb_race_t *x)
{
    pctx_t *c = ctx;
    pld_debug_t *d = c->d;
    dbg_race_t *r = d->race;
    pld_hb_site_t other = x->site;
    if (seen_pair(r, &c->site, &other) || r->npairs > PLD_RACE_MAX_REPORTS)
        return;
    char me[64], them[64];
    thread_text(me, sizeof me, r->me, c->site.block);
    thread_text(them, sizeof them, x->tid / PLD_RACE_SLOTS, other.block);
    if (d->o.races)
        (*d->o.races)++;
    const char *name = c->p->name ? c->p->name : "?";
    pld_diag_t *dg = pld_diag_add(d->o.diags, PLD_SEV_WARNING, c->at->span,
                                  "data race on tensor '%s' of rank %u (not a window), bytes [%zu, %zu): %s by %s %s "
                                  "them, and nothing orders it with %s by %s, which %s them (docs/races.md)",
                                  name, r->me, x->lo, x->hi, d->o.host.site_name(d->o.host.ctx, c->at->key), me,
                                  kind_now(c->kind), op_text(d, other.op), them, kind_then(x->kind));
    pld_diag_note(d->o.diags, dg, span_of(d, &other), "the other access: %s by %s", op_text(d, other.op), them);
    if (d->o.finding) {
        pld_debug_finding_t f;
        race_finding(d, &f, dg, c->at, c->site, c->kind, x);
        f.target = name;
        f.plain = 1;
        f.owner = (int)r->me;
        f.lo = x->lo;
        f.hi = x->hi;
        d->o.finding(d->o.finding_ctx, &f);
    }
}

/* The records of buffer buf (created empty when absent), or NULL (OOM). */
static plain_t *plain_of(dbg_race_t *r, const void *buf, size_t bytes, const char *name)
{
    for (int i = 0; i < r->nplain; i++)
        if (r->plain[i].buf == buf && r->plain[i].bytes == bytes)
            return &r->plain[i];
    if (r->nplain == r->capplain) {
        int cap = r->capplain ? 2 * r->capplain : 8;
        plain_t *np = pld_mem_realloc(r->plain, (size_t)cap * sizeof *np);
        if (!np)
            return NULL;
        r->plain = np;
        r->capplain = cap;
    }
    plain_t *p = &r->plain[r->nplain];
    p->buf = buf;
    p->bytes = bytes;
    p->name = name;
    p->g.nthreads = r->V;
    p->g.ncells = 0;
    p->g.bytes = bytes;
    if (!(p->seg = pld_mem_calloc(1, pld_hb_seg_bytes(&p->g))))
        return NULL;
    r->nplain++;
    return p;
}

void pld_debug_race_plain(pld_debug_t *d, const pld_debug_thread_t *t, const pld_debug_at_t *at, const void *buf,
                          size_t bytes, const char *name, size_t off, size_t len, int kind)
{
    dbg_race_t *r = d->race;
    if (!t || !t->kernel || kind == PLD_HB_READ || kind == PLD_HB_SIGNAL || !len)
        return;
    plain_t *p = plain_of(r, buf, bytes, name);
    if (!p)
        return;
    uint32_t slot = slot_of(r, t);
    pctx_t c = {d, at, p, kind, site_of(t, at)};
    r->evicted += pld_hb_access(p->seg, &p->g, tid_of(r, slot), clock_of(r, slot), kind, c.site, off, len,
                                on_plain_race, &c);
}
