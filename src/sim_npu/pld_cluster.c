/* pld_cluster.c - the cores of a cluster: mixed AIC+AIV kernels.
 *
 * A FunctionType.Group function calls an AIC (cube) kernel and an AIV
 * (vector) kernel that run at the same time on one cluster and pass tiles
 * through the cross-core pipe (tpush / tpop / tfree). Here every core is a
 * block of the rank's scheduler (pld_npu.h): the group's consecutive member
 * calls start together (the AIC, then one or two AIV lanes) and join before
 * the next other statement, so a pop that comes before its push simply
 * waits. The model is PyPTO's own executable reference (the torch debug
 * runtime, docs/en/dev/debug/00-torch_codegen.md at e2d0f78ae6d7) plus the
 * ring depth of pto-isa's TPUSH/TPOP (01-tpush_tpop.md):
 *
 * - a pipe is one direction (C2V: AIC -> AIV, V2C: AIV -> AIC) and one id,
 *   with one FIFO per AIV lane (one lane: one FIFO);
 * - tpush_to_aiv sends the tile whole to the one lane, a copy to each of two
 *   lanes (split 0), or half to each lane (split 1/3: rows, 2/4: columns;
 *   3/4: odd extents, lane 0 takes the larger half); tpop_from_aic pops the
 *   lane's FIFO;
 * - tpush_to_aic enqueues on the pushing lane's FIFO; tpop_from_aiv takes one
 *   tile from every lane: lane 0's (split 0) or the halves joined (split 1-4);
 * - a FIFO holds at most its ring depth of tiles pushed and not yet freed
 *   (slot_num of the initialize_pipe, else 8, 4 when the pipe is
 *   bidirectional): a push waits for a free slot, a pop for a tile, and
 *   tfree returns the oldest popped slot.
 *
 * When every core of a group waits on the pipe or on an event at once, none
 * can ever go on: the run stops at once with a report of what each core
 * waits for (the hardware just hangs until its timeout).
 *
 * Events (sync_set / sync_wait) count per event id and direction; a
 * sync_set with ffts_mode=2 on the AIV side is a reduction: the AIC's wait
 * needs one set from every lane. The interpreter's side (binding the ops'
 * arguments, its tiles, pipe barriers and cache maintenance that have
 * nothing to do, the ops outside a group): src/interp/pld_xcore.c. */
#include "pld_cluster.h"
#include "pld_mem.h"
#include "pld_size.h"

#include <stdio.h>
#include <string.h>

#define XC_IDS PLD_CLUSTER_IDS
#define XC_CORES PLD_CLUSTER_CORES
#define XC_LANES PLD_CLUSTER_LANES
#define XC_C2V PLD_CLUSTER_C2V
#define XC_V2C PLD_CLUSTER_V2C

typedef struct xq {
    pld_cluster_tile_t *items; /* ring of pushed tiles not yet popped */
    int head, n, cap;
    int held;           /* popped and not yet freed */
    long pushed, popped, freed;
} xq_t;

/* What a blocked core waits for. */
typedef struct xwait {
    const char *op;
    int kind;           /* 'p' a tile to pop, 's' a free slot to push into, 'e' an event */
    xq_t *q[XC_LANES];
    int nq;
    int depth;
    int *ev;            /* 'e': the counter and the count needed */
    int need;
    int dir, id;
} xwait_t;

typedef struct xcore {
    const char *kernel;
    int aic;
    int lane;
    int done;
    const xwait_t *wait; /* NULL while running */
    int line;
} xcore_t;

struct pld_cluster {
    pld_npu_sched_t *sched;
    const char *name;                    /* the group's, for the deadlock report */
    int nlanes;
    int depth[2][XC_IDS];                /* ring depth per pipe (0: the default 8) */
    xq_t q[2][XC_IDS][XC_LANES];
    int ev_aic[XC_IDS];                  /* sets the AIC may consume */
    int ev_aic_mode[XC_IDS];             /* ffts_mode of the last AIV set */
    int ev_aiv[XC_LANES][XC_IDS];        /* sets each AIV lane may consume */
    xcore_t cores[XC_CORES];
    int ncores;
};

static const char *const dir_name[2] = {"C2V (AIC -> AIV)", "V2C (AIV -> AIC)"};

/* ------------------------------------------------------------ tiles */

/* Allocates out's data for its dtype and shape (at least one element). */
static pld_status_t tile_alloc(pld_cluster_tile_t *out)
{
    int64_t bytes;
    if (pld_size_bytes(out->rank, out->shape, pld_dtype_bytes(out->dt), (int64_t)1 << 40, &bytes) != PLD_SIZE_OK)
        return PLD_E_NOMEM;
    out->data = pld_mem_calloc((size_t)(bytes > 0 ? bytes : pld_dtype_bytes(out->dt)), 1);
    return out->data ? PLD_OK : PLD_E_NOMEM;
}

static void tile_view(const pld_cluster_tile_t *t, pld_view_t *v)
{
    pld_view_packed(v, t->data, t->dt, t->rank, t->shape);
}

pld_status_t pld_cluster_tile_part(const pld_cluster_tile_t *t, int axis, int64_t off, int64_t ext, int64_t phys,
                                   pld_cluster_tile_t *out)
{
    memset(out, 0, sizeof *out);
    out->dt = t->dt;
    out->rank = t->rank;
    memcpy(out->shape, t->shape, (size_t)t->rank * sizeof *t->shape);
    if (ext >= 0)
        out->shape[axis] = phys;
    if (tile_alloc(out) != PLD_OK)
        return PLD_E_NOMEM;
    for (int d = 0; d < t->rank; d++)
        out->valid[d] = t->valid[d];
    if (ext >= 0) {
        int64_t v = t->valid[axis] - off;
        out->valid[axis] = v < 0 ? 0 : v > ext ? ext : v;
    }
    pld_view_t src, dst;
    tile_view(t, &src);
    tile_view(out, &dst);
    if (ext >= 0) {
        src.data = (char *)src.data + off * src.strides[axis] * pld_dtype_bytes(t->dt);
        src.shape[axis] = dst.shape[axis] = ext;
    }
    char err[64];
    pld_k_copy(&dst, &src, err, sizeof err);
    return PLD_OK;
}

pld_status_t pld_cluster_tile_join(const pld_cluster_tile_t *a, const pld_cluster_tile_t *b, int axis, int odd,
                                   pld_cluster_tile_t *out)
{
    memset(out, 0, sizeof *out);
    if (a->dt != b->dt || a->rank != b->rank)
        return PLD_E_NOMEM;
    int64_t take[2] = {a->shape[axis], b->shape[axis] - (odd ? 1 : 0)};
    out->dt = a->dt;
    out->rank = a->rank;
    memcpy(out->shape, a->shape, (size_t)a->rank * sizeof *a->shape);
    out->shape[axis] = take[0] + take[1];
    if (tile_alloc(out) != PLD_OK)
        return PLD_E_NOMEM;
    for (int d = 0; d < a->rank; d++)
        out->valid[d] = a->valid[d] > b->valid[d] ? a->valid[d] : b->valid[d];
    int64_t bv = b->valid[axis] < take[1] ? b->valid[axis] : take[1];
    out->valid[axis] = a->valid[axis] + (a->valid[axis] == a->shape[axis] ? bv : 0);
    const pld_cluster_tile_t *part[2] = {a, b};
    int64_t off = 0;
    for (int i = 0; i < 2; i++) {
        pld_view_t src, dst;
        tile_view(part[i], &src);
        tile_view(out, &dst);
        dst.data = (char *)dst.data + off * dst.strides[axis] * pld_dtype_bytes(a->dt);
        dst.shape[axis] = src.shape[axis] = take[i];
        char err[64];
        pld_k_copy(&dst, &src, err, sizeof err);
        off += take[i];
    }
    return PLD_OK;
}

void pld_cluster_tile_fini(pld_cluster_tile_t *t)
{
    pld_mem_free(t->data);
    t->data = NULL;
}

int pld_cluster_split_axis(int split, int rank)
{
    if (rank < 2)
        return 0;
    return split == 1 || split == 3 ? rank - 2 : rank - 1;
}

/* ------------------------------------------------------------ the FIFOs */

static int xq_push(xq_t *q, const pld_cluster_tile_t *v)
{
    if (q->n == q->cap) {
        int cap = q->cap ? q->cap * 2 : 8;
        pld_cluster_tile_t *ni = pld_mem_calloc((size_t)cap, sizeof *ni);
        if (!ni)
            return -1;
        for (int i = 0; i < q->n; i++)
            ni[i] = q->items[(q->head + i) % q->cap];
        pld_mem_free(q->items);
        q->items = ni;
        q->head = 0;
        q->cap = cap;
    }
    q->items[(q->head + q->n) % q->cap] = *v;
    q->n++;
    q->pushed++;
    return 0;
}

static pld_cluster_tile_t xq_pop(xq_t *q)
{
    pld_cluster_tile_t v = q->items[q->head];
    q->head = (q->head + 1) % q->cap;
    q->n--;
    q->held++;
    q->popped++;
    return v;
}

static void xq_free(xq_t *q)
{
    while (q->n > 0) {
        pld_cluster_tile_t v = xq_pop(q);
        pld_cluster_tile_fini(&v);
    }
    pld_mem_free(q->items);
    memset(q, 0, sizeof *q);
}

static int ring_depth(const pld_cluster_t *g, int dir, int id)
{
    return g->depth[dir][id] > 0 ? g->depth[dir][id] : 8;
}

/* ------------------------------------------------------------ waiting */

static int wait_ready(const xwait_t *w)
{
    for (int i = 0; i < w->nq; i++) {
        const xq_t *q = w->q[i];
        if (w->kind == 'p' ? q->n == 0 : q->n + q->held >= w->depth)
            return 0;
    }
    return w->kind == 'e' ? *w->ev >= w->need : 1;
}

static void describe(const pld_cluster_t *g, const xcore_t *c, char *buf, size_t n)
{
    const char *who = c->kernel ? c->kernel : "?";
    size_t k = (size_t)snprintf(buf, n, "%s %s", c->kernel && c->aic ? "AIC" : "AIV", who);
    if (k < n && g->nlanes > 1 && !(c->kernel && c->aic))
        k += (size_t)snprintf(buf + k, n - k, " lane %d", c->lane);
    if (k >= n)
        return;
    if (c->done) {
        snprintf(buf + k, n - k, ": returned");
        return;
    }
    const xwait_t *w = c->wait;
    if (!w) {
        snprintf(buf + k, n - k, ": running");
        return;
    }
    k += (size_t)snprintf(buf + k, n - k, " at line %d: %s", c->line, w->op);
    if (k >= n)
        return;
    if (w->kind == 'e') {
        snprintf(buf + k, n - k, " waits for event %d: %d set%s, %d needed", w->id, *w->ev, *w->ev == 1 ? "" : "s",
                 w->need);
        return;
    }
    for (int i = 0; i < w->nq && k < n; i++) {
        const xq_t *q = w->q[i];
        k += (size_t)snprintf(buf + k, n - k, "%s %s pipe id %d%s%s: %d queued, %d popped and not freed "
                                               "(pushed %ld, popped %ld, freed %ld; ring depth %d)",
                              i ? ";" : w->kind == 'p' ? " waits for a tile on" : " waits for a free slot on",
                              dir_name[w->dir], w->id, w->nq > 1 || g->nlanes > 1 ? " lane " : "",
                              w->nq > 1 || g->nlanes > 1 ? (i == 0 && w->nq > 1 ? "0" : w->nq > 1 ? "1" : c->lane ? "1" : "0")
                                                         : "",
                              q->n, q->held, q->pushed, q->popped, q->freed, w->depth);
        if (w->kind == 's' && q->held > 0 && k < n)
            k += (size_t)snprintf(buf + k, n - k, " - the consumer holds %d slot%s it popped: a tfree missing?",
                                  q->held, q->held == 1 ? "" : "s");
    }
}

static void set_err(char *err, size_t errn, const char *msg)
{
    if (err && errn)
        snprintf(err, errn, "%s", msg);
}

/* Blocks core `core` until w is ready: yields to the other cores of the
 * group (and of the rank); when every core of the group is waiting for
 * something not ready, or has returned, reports the deadlock. */
static pld_status_t xwait(pld_cluster_t *g, int core, const pld_cluster_site_t *at, const xwait_t *w, char *err,
                          size_t errn)
{
    set_err(err, errn, "");
    if (wait_ready(w))
        return PLD_OK;
    xcore_t *me = &g->cores[core];
    me->wait = w;
    me->line = at->line;
    pld_status_t st = PLD_OK;
    for (;;) {
        int stuck = 1;
        for (int k = 0; k < g->ncores && stuck; k++)
            if (!g->cores[k].done && (!g->cores[k].wait || wait_ready(g->cores[k].wait)))
                stuck = 0;
        if (stuck) {
            char rep[1536] = "";
            size_t k = 0;
            for (int c = 0; c < g->ncores && k < sizeof rep; c++) {
                char one[512];
                describe(g, &g->cores[c], one, sizeof one);
                k += (size_t)snprintf(rep + k, sizeof rep - k, "\n    %s", one);
            }
            /* where the tiles are that nobody pops (a push to the wrong id or lane) */
            for (int d = 0; d < 2; d++)
                for (int id = 0; id < XC_IDS; id++)
                    for (int l = 0; l < g->nlanes && k < sizeof rep; l++)
                        if (g->q[d][id][l].n > 0)
                            k += (size_t)snprintf(rep + k, sizeof rep - k, "\n    tiles left: %s id %d%s: %d queued",
                                                  dir_name[d], id, g->nlanes > 1 ? (l ? " lane 1" : " lane 0") : "",
                                                  g->q[d][id][l].n);
            if (err && errn)
                snprintf(err, errn,
                         "cross-core deadlock in group '%s': every core of the cluster is waiting and none can "
                         "go on (on the device this hangs until the AICore timeout):%s",
                         g->name ? g->name : "?", rep);
            st = PLD_E_RUNTIME;
            break;
        }
        if (at->yield)
            at->yield(at->arg, 1);
        pld_npu_yield(g->sched);
        if (at->yield)
            at->yield(at->arg, 0);
        if (pld_npu_cancelled(g->sched)) {
            st = PLD_E_RUNTIME; /* another core failed and reported */
            break;
        }
        if (wait_ready(w))
            break;
    }
    me->wait = NULL;
    return st;
}

static void sync_hook(const pld_cluster_site_t *at, pld_cluster_sync_t how)
{
    if (at->sync)
        at->sync(at->arg, how);
}

/* ------------------------------------------------------------ the pipe */

/* The FIFOs an op of core lane `lane` on pipe (dir, id) uses: a producer's
 * (push) or a consumer's (pop): the caller's lane on its own side, every
 * lane on the AIC's. */
static int fifos(pld_cluster_t *g, int lane, int dir, int id, int aiv_side, xq_t **q)
{
    int n = 0;
    if (aiv_side)
        q[n++] = &g->q[dir][id][g->nlanes > 1 ? lane : 0];
    else
        for (int l = 0; l < g->nlanes; l++)
            q[n++] = &g->q[dir][id][l];
    return n;
}

void pld_cluster_init_pipe(pld_cluster_t *c, int dir_mask, int64_t slots, int id)
{
    int depth = slots > 0 ? (int)slots : dir_mask == 3 ? 4 : 8;
    for (int d = 0; d < 2; d++)
        if (dir_mask & (d == XC_C2V ? 1 : 2))
            c->depth[d][id] = depth;
}

pld_status_t pld_cluster_push(pld_cluster_t *g, int core, int lane, pld_cluster_dir_t dir, int id, int split,
                              const pld_cluster_tile_t *t, const pld_cluster_site_t *at, char *err, size_t errn)
{
    /* the pusher's side: the AIV lane for V2C, the AIC (every lane) for C2V */
    xwait_t w = {at->op, 's', {NULL, NULL}, 0, ring_depth(g, dir, id), NULL, 0, dir, id};
    w.nq = fifos(g, lane, dir, id, dir == XC_V2C, w.q);
    int axis = split ? pld_cluster_split_axis(split, t->rank) : 0;
    int64_t ext = split ? t->shape[axis] : 0, h0 = split == 3 || split == 4 ? (ext + 1) / 2 : ext / 2;
    if (split && ((split <= 2 && ext % 2) || (split >= 3 && ext % 2 == 0))) {
        if (err && errn)
            snprintf(err, errn, "%s(split=%lld) needs an %s extent along axis %d, found %lld", at->op, (long long)split,
                     split <= 2 ? "even" : "odd", axis, (long long)ext);
        return PLD_E_RUNTIME;
    }
    pld_status_t st = xwait(g, core, at, &w, err, errn);
    if (st != PLD_OK)
        return st;
    sync_hook(at, PLD_CLUSTER_RELEASE); /* what the consumer pops orders this core's work before it */
    for (int i = 0; i < w.nq && st == PLD_OK; i++) {
        pld_cluster_tile_t p;
        if ((!split || dir == XC_V2C ? pld_cluster_tile_part(t, 0, 0, -1, 0, &p)
                                     : pld_cluster_tile_part(t, axis, i ? h0 : 0, i ? ext - h0 : h0, h0, &p)) != PLD_OK)
            st = PLD_E_NOMEM;
        else if (xq_push(w.q[i], &p) != 0) {
            pld_cluster_tile_fini(&p);
            st = PLD_E_NOMEM;
        }
    }
    return st;
}

pld_status_t pld_cluster_pop(pld_cluster_t *g, int core, int lane, pld_cluster_dir_t dir, int id, int split,
                             const pld_cluster_site_t *at, pld_cluster_tile_t *out, char *err, size_t errn)
{
    memset(out, 0, sizeof *out);
    xwait_t w = {at->op, 'p', {NULL, NULL}, 0, ring_depth(g, dir, id), NULL, 0, dir, id};
    w.nq = fifos(g, lane, dir, id, dir == XC_C2V, w.q);
    pld_status_t st = xwait(g, core, at, &w, err, errn);
    if (st != PLD_OK)
        return st;
    sync_hook(at, PLD_CLUSTER_ACQUIRE);
    pld_cluster_tile_t got[XC_LANES];
    for (int i = 0; i < w.nq; i++)
        got[i] = xq_pop(w.q[i]);
    if (w.nq == 1 || split == 0) {
        *out = got[0];
        if (w.nq > 1)
            pld_cluster_tile_fini(&got[1]);
        return PLD_OK;
    }
    st = pld_cluster_tile_join(&got[0], &got[1], pld_cluster_split_axis(split, got[0].rank), split >= 3, out);
    pld_cluster_tile_fini(&got[0]);
    pld_cluster_tile_fini(&got[1]);
    return st;
}

pld_status_t pld_cluster_free_slot(pld_cluster_t *g, int lane, pld_cluster_dir_t dir, int id,
                                   const pld_cluster_site_t *at, char *err, size_t errn)
{
    int from = dir == XC_C2V ? (g->nlanes > 1 ? lane : 0) : 0;
    int to = dir == XC_C2V ? from + 1 : g->nlanes;
    for (int l = from; l < to; l++)
        if (g->q[dir][id][l].held == 0) {
            if (err && errn)
                snprintf(err, errn,
                         "%s(id=%lld) frees a slot of pipe %s id %lld, but no tile popped from it is waiting "
                         "to be freed (popped %ld, freed %ld)",
                         at->op, (long long)id, dir_name[dir], (long long)id, g->q[dir][id][l].popped,
                         g->q[dir][id][l].freed);
            return PLD_E_RUNTIME;
        }
    for (int l = from; l < to; l++) {
        g->q[dir][id][l].held--;
        g->q[dir][id][l].freed++;
    }
    return PLD_OK;
}

/* ------------------------------------------------------------ events */

void pld_cluster_event_set(pld_cluster_t *g, int on_aic, int ev, int mode, const pld_cluster_site_t *at)
{
    sync_hook(at, PLD_CLUSTER_RELEASE);
    if (on_aic) {
        for (int l = 0; l < g->nlanes; l++)
            g->ev_aiv[l][ev]++;
    } else {
        g->ev_aic[ev]++;
        g->ev_aic_mode[ev] = mode;
    }
}

pld_status_t pld_cluster_event_wait(pld_cluster_t *g, int core, int lane, int on_aic, int ev,
                                    const pld_cluster_site_t *at, char *err, size_t errn)
{
    const int l = g->nlanes > 1 ? lane : 0;
    xwait_t w = {at->op, 'e', {NULL, NULL}, 0, 0, on_aic ? &g->ev_aic[ev] : &g->ev_aiv[l][ev], 1, 0, ev};
    if (on_aic && g->ev_aic_mode[ev] == 2)
        w.need = g->nlanes;
    pld_status_t st = xwait(g, core, at, &w, err, errn);
    if (st != PLD_OK)
        return st;
    if (on_aic && g->ev_aic_mode[ev] == 2)
        w.need = g->nlanes; /* a mode-2 set may have come while waiting */
    *w.ev -= w.need;
    sync_hook(at, PLD_CLUSTER_ACQUIRE);
    return PLD_OK;
}

/* ------------------------------------------------------------ syncall */

pld_status_t pld_cluster_syncall_check(const pld_npu_profile_t *pf, const pld_cluster_t *g, const char *type,
                                       int soft, int64_t used, int64_t block_num, char *err, size_t errn)
{
    const int mix = strcmp(type, "mix") == 0;
    const int64_t cores = strcmp(type, "aiv_only") == 0 ? pf->aiv_cores : pf->aic_cores;
    const int64_t parts = block_num * (mix ? (g ? g->ncores : 3) : 1);
    if (!soft && block_num < cores) {
        if (err && errn)
            snprintf(err, errn,
                     "a hard syncall(core_type='%s') waits for all %lld %s of platform %s, but this launch "
                     "has %lld block%s: the others never arrive (on the device: a hang, error 507018); launch "
                     "%lld blocks with sync_start=True, or use mode='soft' with used_cores",
                     type, (long long)cores, strcmp(type, "aiv_only") == 0 ? "AIV cores" : "clusters (AIC cores)",
                     pf->name, (long long)block_num, block_num == 1 ? "" : "s", (long long)cores);
        return PLD_E_RUNTIME;
    }
    if (soft && used != 0 && used != parts) {
        if (err && errn)
            snprintf(err, errn,
                     "a soft syncall(core_type='%s') with used_cores=%lld, but the launch has %lld participant%s "
                     "(%lld block%s%s): %s",
                     type, (long long)used, (long long)parts, parts == 1 ? "" : "s", (long long)block_num,
                     block_num == 1 ? "" : "s", mix ? " x the cores of a cluster" : "",
                     used > parts ? "the barrier waits for cores that do not exist (a hang)"
                                  : "the barrier opens before every participant arrived");
        return PLD_E_RUNTIME;
    }
    return PLD_OK;
}

/* One barrier step of syncall; reports a barrier that can never complete. */
static pld_status_t barrier(pld_npu_sched_t *s, const pld_cluster_t *g, int up, const pld_cluster_site_t *at,
                            char *err, size_t errn)
{
    int arrived = 0, blocks = 0;
    sync_hook(at, PLD_CLUSTER_RELEASE);
    int r = pld_npu_barrier(s, up, &arrived, &blocks);
    if (r == 0)
        sync_hook(at, PLD_CLUSTER_ACQUIRE_ALL);
    if (r == 1)
        return PLD_E_RUNTIME;
    if (r == 2) {
        if (err && errn)
            snprintf(err, errn,
                     "pl.system.syncall can never complete: %d of the %d %s arrived and the others returned "
                     "without reaching it",
                     arrived, blocks, g && up == 0 ? "cores of the cluster" : "blocks");
        return PLD_E_RUNTIME;
    }
    return PLD_OK;
}

pld_status_t pld_cluster_syncall(pld_npu_sched_t *s, pld_cluster_t *g, int core, int64_t block_num,
                                 const pld_cluster_site_t *at, char *err, size_t errn)
{
    set_err(err, errn, "");
    if (!g)
        return barrier(s, g, 0, at, err, errn);
    const int local = g->ncores > 1; /* a group of one core is no grid of its own */
    pld_status_t st;
    if (local && (st = barrier(s, g, 0, at, err, errn)) != PLD_OK)
        return st;
    if (core == 0 && block_num > 1 && (st = barrier(s, g, local, at, err, errn)) != PLD_OK)
        return st;
    return local ? barrier(s, g, 0, at, err, errn) : PLD_OK;
}

/* ------------------------------------------------------------ the cluster */

pld_status_t pld_cluster_create(pld_npu_sched_t *s, const char *name, int nlanes, pld_cluster_t **out)
{
    pld_cluster_t *g = pld_mem_calloc(1, sizeof *g);
    *out = g;
    if (!g)
        return PLD_E_NOMEM;
    g->sched = s;
    g->name = name;
    g->nlanes = nlanes;
    return PLD_OK;
}

int pld_cluster_add_core(pld_cluster_t *g, int aic, const char *kernel, int lane)
{
    if (g->ncores == XC_CORES)
        return -1;
    xcore_t *c = &g->cores[g->ncores];
    c->kernel = kernel;
    c->aic = aic;
    c->lane = lane;
    return g->ncores++;
}

int pld_cluster_ncores(const pld_cluster_t *g)
{
    return g->ncores;
}

int pld_cluster_nlanes(const pld_cluster_t *g)
{
    return g->nlanes;
}

int pld_cluster_core_lane(const pld_cluster_t *g, int b)
{
    return g->cores[b].lane;
}

void pld_cluster_core_done(pld_cluster_t *g, int b)
{
    g->cores[b].done = 1;
}

void pld_cluster_destroy(pld_cluster_t *g)
{
    if (!g)
        return;
    for (int d = 0; d < 2; d++)
        for (int id = 0; id < XC_IDS; id++)
            for (int l = 0; l < XC_LANES; l++)
                xq_free(&g->q[d][id][l]);
    pld_mem_free(g);
}
