/* pld_xcore.c - the cores of a cluster: mixed AIC+AIV kernels.
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
 * needs one set from every lane. Pipe barriers and cache maintenance
 * (bar_*, fence, sync_src/dst, cacheinvalid, set_ffts) have nothing to do on
 * a CPU with coherent memory and program order. Outside a group (a mixed
 * pl.at scope, pl.split_aiv lanes) the cores already run in program order:
 * sync_set / sync_wait have no effect, and the pipe ops need a group. */
#include "pld_interp_int.h"
#include "pld_mem.h"

#include <stdio.h>
#include <string.h>

#define XC_IDS 16    /* pipe ids and event ids */
#define XC_CORES 8   /* cores of one group launch */
#define XC_LANES 2

enum { XC_C2V = 0, XC_V2C = 1 };

typedef struct xq {
    pld_value_t *items; /* ring of pushed tiles not yet popped */
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
    const pld_func_t *fn;
    const pld_stmt_t *stmt;
    int lane;
    int done;
    const xwait_t *wait; /* NULL while running */
    pld_span_t at;
} xcore_t;

struct pld_xgroup {
    pld_interp_t *it;
    frame_t *f;                          /* the group function's frame */
    int nlanes;
    int depth[2][XC_IDS];                /* ring depth per pipe (0: the default 8) */
    xq_t q[2][XC_IDS][XC_LANES];
    int ev_aic[XC_IDS];                  /* sets the AIC may consume */
    int ev_aic_mode[XC_IDS];             /* ffts_mode of the last AIV set */
    int ev_aiv[XC_LANES][XC_IDS];        /* sets each AIV lane may consume */
    xcore_t cores[XC_CORES];
    int ncores;
};
typedef pld_xgroup_t xgroup_t;

static const char *const dir_name[2] = {"C2V (AIC -> AIV)", "V2C (AIV -> AIC)"};

/* ------------------------------------------------------------ the FIFOs */

static int xq_push(xq_t *q, const pld_value_t *v)
{
    if (q->n == q->cap) {
        int cap = q->cap ? q->cap * 2 : 8;
        pld_value_t *ni = pld_mem_calloc((size_t)cap, sizeof *ni);
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

static pld_value_t xq_pop(xq_t *q)
{
    pld_value_t v = q->items[q->head];
    q->head = (q->head + 1) % q->cap;
    q->n--;
    q->held++;
    q->popped++;
    return v;
}

static void xq_free(xq_t *q)
{
    while (q->n > 0) {
        pld_value_t v = xq_pop(q);
        pld_value_release(&v);
    }
    pld_mem_free(q->items);
    memset(q, 0, sizeof *q);
}

static int ring_depth(const xgroup_t *g, int dir, int id)
{
    return g->depth[dir][id] > 0 ? g->depth[dir][id] : 8;
}

static int wait_ready(const xwait_t *w)
{
    for (int i = 0; i < w->nq; i++) {
        const xq_t *q = w->q[i];
        if (w->kind == 'p' ? q->n == 0 : q->n + q->held >= w->depth)
            return 0;
    }
    return w->kind == 'e' ? *w->ev >= w->need : 1;
}

static void describe(const xgroup_t *g, const xcore_t *c, char *buf, size_t n)
{
    const char *who = c->fn ? c->fn->name : "?";
    size_t k = (size_t)snprintf(buf, n, "%s %s", c->fn && c->fn->ftype == PLD_FT_AIC ? "AIC" : "AIV", who);
    if (k < n && g->nlanes > 1 && !(c->fn && c->fn->ftype == PLD_FT_AIC))
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
    k += (size_t)snprintf(buf + k, n - k, " at line %d: %s", c->at.line, w->op);
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

/* Blocks the calling core until w is ready: yields to the other cores of the
 * group (and of the rank); when every core of the group is waiting for
 * something not ready, or has returned, reports the deadlock. */
static pld_status_t xwait(pld_interp_t *it, frame_t *f, const pld_expr_t *e, xgroup_t *g, const xwait_t *w)
{
    if (wait_ready(w))
        return PLD_OK;
    xcore_t *me = &g->cores[f->xcore];
    me->wait = w;
    me->at = e->span;
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
            st = pld_rt_error(it, f, e->span,
                              "cross-core deadlock in group '%s': every core of the cluster is waiting and none can "
                              "go on (on the device this hangs until the AICore timeout):%s",
                              g->f->fn ? g->f->fn->name : "?", rep);
            break;
        }
        snprintf(it->where.what, sizeof it->where.what, "%s (cross-core)", w->op);
        it->where.waiting = 1;
        pld_npu_yield(it->sched);
        it->where.waiting = 0;
        pld_where_at(it, f, e->span);
        if (pld_npu_cancelled(it->sched)) {
            st = PLD_E_RUNTIME; /* another core failed and reported */
            break;
        }
        if (wait_ready(w))
            break;
    }
    me->wait = NULL;
    return st;
}

/* ------------------------------------------------------------ tiles */

/* A copy of tile t in memory space mem: all of it (ext < 0), or the box
 * [off, off + ext) along `axis` in a tile `phys` long on that axis (an odd
 * split gives both lanes the larger half's shape; lane 1's valid extent is
 * its own). */
static pld_tile_t *tile_part(const pld_tile_t *t, int axis, int64_t off, int64_t ext, int64_t phys, pld_mem_t mem)
{
    int64_t shape[PLD_MAX_RANK];
    memcpy(shape, t->shape, sizeof shape);
    if (ext >= 0)
        shape[axis] = phys;
    pld_tile_t *r = pld_tile_new(t->dt, t->rank, shape, mem);
    if (!r)
        return NULL;
    for (int d = 0; d < t->rank; d++)
        r->valid[d] = t->valid[d];
    if (ext >= 0) {
        int64_t v = t->valid[axis] - off;
        r->valid[axis] = v < 0 ? 0 : v > ext ? ext : v;
    }
    pld_view_t src, dst;
    pld_tile_kview(t, &src, 0);
    pld_tile_kview(r, &dst, 0);
    if (ext >= 0) {
        src.data = (char *)src.data + off * src.strides[axis] * pld_dtype_bytes(t->dt);
        src.shape[axis] = dst.shape[axis] = ext;
    }
    char err[64];
    pld_k_copy(&dst, &src, err, sizeof err);
    return r;
}

/* Lanes' halves joined along axis into one tile (valid extents added when
 * lane 0's half is whole). odd: the split of an odd extent, where lane 1's
 * half is one shorter than its tile. */
static pld_tile_t *tile_join(const pld_tile_t *a, const pld_tile_t *b, int axis, int odd, pld_mem_t mem)
{
    int64_t shape[PLD_MAX_RANK], take[2] = {a->shape[axis], b->shape[axis] - (odd ? 1 : 0)};
    memcpy(shape, a->shape, sizeof shape);
    shape[axis] = take[0] + take[1];
    pld_tile_t *r = pld_tile_new(a->dt, a->rank, shape, mem);
    if (!r)
        return NULL;
    for (int d = 0; d < a->rank; d++)
        r->valid[d] = a->valid[d] > b->valid[d] ? a->valid[d] : b->valid[d];
    int64_t bv = b->valid[axis] < take[1] ? b->valid[axis] : take[1];
    r->valid[axis] = a->valid[axis] + (a->valid[axis] == a->shape[axis] ? bv : 0);
    const pld_tile_t *part[2] = {a, b};
    int64_t off = 0;
    for (int i = 0; i < 2; i++) {
        pld_view_t src, dst;
        pld_tile_kview(part[i], &src, 0);
        pld_tile_kview(r, &dst, 0);
        dst.data = (char *)dst.data + off * dst.strides[axis] * pld_dtype_bytes(a->dt);
        dst.shape[axis] = src.shape[axis] = take[i];
        char err[64];
        pld_k_copy(&dst, &src, err, sizeof err);
        off += take[i];
    }
    return r;
}

/* The axis of a split code (1/3 rows, 2/4 columns) of a rank-r tile (a
 * rank-1 tile splits along its only axis). */
static int split_axis(int split, int rank)
{
    if (rank < 2)
        return 0;
    return split == 1 || split == 3 ? rank - 2 : rank - 1;
}

/* ------------------------------------------------------------ the ops */

static pld_status_t need_group(pld_interp_t *it, frame_t *f, const pld_expr_t *e)
{
    if (f->xg)
        return PLD_OK;
    return pld_rt_error(it, f, e->span,
                        "%s needs its peer core: call the AIC and AIV kernels together from a "
                        "pl.FunctionType.Group function (this kernel runs on its own)",
                        pld_op_name(e));
}

/* Signature positions (pld_ops.def) of split= and id= of the pipe ops. */
static int split_pos(pld_op_id_t op)
{
    return op == PLD_OPID_SYS_TPUSH_TO_AIV || op == PLD_OPID_SYS_TPUSH_TO_AIC ? 1 : 2;
}

static int id_pos(pld_op_id_t op)
{
    switch (op) {
    case PLD_OPID_SYS_TPUSH_TO_AIC: return 2;
    case PLD_OPID_SYS_TPOP_FROM_AIC: return 4;
    default: return 3; /* tpush_to_aiv, tpop_from_aiv, tfree_* */
    }
}

/* Checks a popped tile against the declared type of the pop (shape=/dtype=
 * or the annotation). */
static pld_status_t check_pop(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_tile_t *t)
{
    const pld_type_t *ty = e->type;
    if (!ty || ty->kind != PLD_TY_TILE)
        return PLD_OK;
    int same = ty->dtype == t->dt && ty->rank == t->rank;
    for (int d = 0; same && d < ty->rank; d++)
        if (ty->shape[d].kind == PLD_DIM_CONST && ty->shape[d].v != t->shape[d])
            same = 0;
    if (same)
        return PLD_OK;
    char got[96], want[96] = "[";
    pld_shape_str(got, sizeof got, t->rank, t->shape);
    for (int d = 0; d < ty->rank; d++)
        if (ty->shape[d].kind == PLD_DIM_CONST)
            snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", d ? ", " : "", (long long)ty->shape[d].v);
        else
            snprintf(want + strlen(want), sizeof want - strlen(want), "%s?", d ? ", " : "");
    return pld_rt_error(it, f, e->span, "%s received a %s %s tile, but it declares %s] %s", pld_op_name(e),
                        got, pld_dtype_name(t->dt), want, pld_dtype_name(ty->dtype));
}

static pld_status_t tpush(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int dir)
{
    xgroup_t *g = f->xg;
    int64_t split, id;
    pld_value_t v;
    pld_status_t st;
    if ((st = need_group(it, f, e)) != PLD_OK || (st = pld_op_iarg(it, f, e, split_pos((pld_op_id_t)e->op), 0, &split)) != PLD_OK ||
        (st = pld_op_iarg(it, f, e, id_pos((pld_op_id_t)e->op), 0, &id)) != PLD_OK)
        return st;
    if (id < 0 || id >= XC_IDS || split < 0 || split > 4)
        return pld_rt_error(it, f, e->span, "%s: id %lld / split %lld out of range", pld_op_name(e), (long long)id,
                            (long long)split);
    if (split && g->nlanes < 2)
        return pld_rt_error(it, f, e->span,
                            "%s(split=%lld) divides the tile between two AIV lanes, but the AIV kernel runs on one "
                            "(mark it attrs={\"dual_aiv_dispatch\": True})",
                            pld_op_name(e), (long long)split);
    if ((st = pld_op_need(it, f, e, 0, &v, PLD_V_TILE)) != PLD_OK)
        return st;
    const pld_tile_t *t = pld_v_tile(&v);
    int lane = dir == XC_V2C ? (g->nlanes > 1 ? (int)f->subblock_idx : 0) : -1;
    xwait_t w = {pld_op_name(e), 's', {NULL, NULL}, 0, ring_depth(g, dir, (int)id), NULL, 0, dir, (int)id};
    if (lane >= 0)
        w.q[w.nq++] = &g->q[dir][id][lane];
    else
        for (int l = 0; l < g->nlanes; l++)
            w.q[w.nq++] = &g->q[dir][id][l];
    int axis = split ? split_axis((int)split, t->rank) : 0;
    int64_t ext = split ? t->shape[axis] : 0, h0 = split == 3 || split == 4 ? (ext + 1) / 2 : ext / 2;
    if (split && ((split <= 2 && ext % 2) || (split >= 3 && ext % 2 == 0))) {
        pld_value_release(&v);
        return pld_rt_error(it, f, e->span, "%s(split=%lld) needs an %s extent along axis %d, found %lld",
                            pld_op_name(e), (long long)split, split <= 2 ? "even" : "odd", axis, (long long)ext);
    }
    if ((st = xwait(it, f, e, g, &w)) != PLD_OK) {
        pld_value_release(&v);
        return st;
    }
    const pld_mem_t mem = dir == XC_C2V ? PLD_MEM_VEC : PLD_MEM_MAT;
    if (it->race)
        pld_race_sync(it, f, 0); /* a release: what the consumer pops orders this core's work before it */
    for (int i = 0; i < w.nq && st == PLD_OK; i++) {
        pld_tile_t *p = !split || lane >= 0 ? tile_part(t, 0, 0, -1, 0, mem)
                                            : tile_part(t, axis, i ? h0 : 0, i ? ext - h0 : h0, h0, mem);
        pld_value_t pv;
        if (!p)
            st = pld_rt_error(it, f, e->span, "out of memory");
        else if (pv = pld_tile_value(p), xq_push(w.q[i], &pv) != 0) {
            pld_value_release(&pv);
            st = pld_rt_error(it, f, e->span, "out of memory");
        }
    }
    pld_value_release(&v);
    return st;
}

static pld_status_t tpop(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int dir, pld_value_t *out)
{
    xgroup_t *g = f->xg;
    int64_t split, id;
    pld_status_t st;
    if ((st = need_group(it, f, e)) != PLD_OK || (st = pld_op_iarg(it, f, e, split_pos((pld_op_id_t)e->op), 0, &split)) != PLD_OK ||
        (st = pld_op_iarg(it, f, e, id_pos((pld_op_id_t)e->op), 0, &id)) != PLD_OK)
        return st;
    if (id < 0 || id >= XC_IDS)
        return pld_rt_error(it, f, e->span, "%s: id %lld out of range", pld_op_name(e), (long long)id);
    xwait_t w = {pld_op_name(e), 'p', {NULL, NULL}, 0, ring_depth(g, dir, (int)id), NULL, 0, dir, (int)id};
    if (dir == XC_C2V)
        w.q[w.nq++] = &g->q[dir][id][g->nlanes > 1 ? (int)f->subblock_idx : 0];
    else
        for (int l = 0; l < g->nlanes; l++)
            w.q[w.nq++] = &g->q[dir][id][l];
    if ((st = xwait(it, f, e, g, &w)) != PLD_OK)
        return st;
    if (it->race)
        pld_race_sync(it, f, 1);
    pld_value_t got[XC_LANES];
    for (int i = 0; i < w.nq; i++)
        got[i] = xq_pop(w.q[i]);
    if (w.nq == 1 || split == 0) {
        *out = got[0];
        if (w.nq > 1)
            pld_value_release(&got[1]);
    } else {
        const pld_tile_t *a = pld_v_tile(&got[0]);
        const pld_tile_t *b = pld_v_tile(&got[1]);
        pld_tile_t *r = a->dt != b->dt || a->rank != b->rank
                            ? NULL
                            : tile_join(a, b, split_axis((int)split, a->rank), split >= 3, PLD_MEM_MAT);
        pld_value_release(&got[0]);
        pld_value_release(&got[1]);
        if (!r)
            return pld_rt_error(it, f, e->span, "out of memory");
        *out = pld_tile_value(r);
    }
    if ((st = check_pop(it, f, e, pld_v_tile(out))) != PLD_OK)
        pld_value_release(out);
    return st;
}

static pld_status_t tfree(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int dir)
{
    xgroup_t *g = f->xg;
    int64_t id;
    pld_status_t st;
    if ((st = need_group(it, f, e)) != PLD_OK || (st = pld_op_iarg(it, f, e, id_pos((pld_op_id_t)e->op), 0, &id)) != PLD_OK)
        return st;
    if (id < 0 || id >= XC_IDS)
        return pld_rt_error(it, f, e->span, "%s: id %lld out of range", pld_op_name(e), (long long)id);
    int from = dir == XC_C2V ? (g->nlanes > 1 ? (int)f->subblock_idx : 0) : 0;
    int to = dir == XC_C2V ? from + 1 : g->nlanes;
    for (int l = from; l < to; l++)
        if (g->q[dir][id][l].held == 0)
            return pld_rt_error(it, f, e->span,
                                "%s(id=%lld) frees a slot of pipe %s id %lld, but no tile popped from it is waiting "
                                "to be freed (popped %ld, freed %ld)",
                                pld_op_name(e), (long long)id, dir_name[dir], (long long)id, g->q[dir][id][l].popped,
                                g->q[dir][id][l].freed);
    for (int l = from; l < to; l++) {
        g->q[dir][id][l].held--;
        g->q[dir][id][l].freed++;
    }
    return PLD_OK;
}

static pld_status_t init_pipe(pld_interp_t *it, frame_t *f, const pld_expr_t *e)
{
    int64_t mask, slots, id;
    pld_status_t st;
    if (!f->xg)
        return PLD_OK; /* a kernel on its own: nothing to connect */
    if ((st = pld_op_iarg(it, f, e, 2, 0, &mask)) != PLD_OK || (st = pld_op_iarg(it, f, e, 4, 0, &slots)) != PLD_OK ||
        (st = pld_op_iarg(it, f, e, 6, 0, &id)) != PLD_OK)
        return st;
    if (id < 0 || id >= XC_IDS || mask < 1 || mask > 3)
        return pld_rt_error(it, f, e->span, "%s: id %lld / dir_mask %lld out of range", pld_op_name(e), (long long)id,
                            (long long)mask);
    int depth = slots > 0 ? (int)slots : mask == 3 ? 4 : 8;
    for (int d = 0; d < 2; d++)
        if (mask & (d == XC_C2V ? 1 : 2))
            f->xg->depth[d][id] = depth;
    return PLD_OK;
}

static pld_status_t sync_event(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int set)
{
    xgroup_t *g = f->xg;
    int64_t ev, mode = 0;
    pld_status_t st;
    const pld_expr_t *ea = pld_op_arg(e, 0);
    if (!g)
        return PLD_OK; /* the cores run in program order here */
    if ((st = ea ? it->walk->eval_i64(it, f, ea, &ev) : PLD_E_RUNTIME) != PLD_OK ||
        (st = set ? pld_op_iarg(it, f, e, 2, 0, &mode) : PLD_OK) != PLD_OK)
        return st == PLD_E_RUNTIME && !ea ? pld_rt_error(it, f, e->span, "%s needs an event_id", pld_op_name(e)) : st;
    if (ev < 0 || ev >= XC_IDS)
        return pld_rt_error(it, f, e->span, "%s: event %lld is outside 0-15", pld_op_name(e), (long long)ev);
    const int on_aic = f->fn && f->fn->ftype == PLD_FT_AIC;
    const int lane = g->nlanes > 1 ? (int)f->subblock_idx : 0;
    if (set) {
        if (it->race)
            pld_race_sync(it, f, 0);
        if (on_aic) {
            for (int l = 0; l < g->nlanes; l++)
                g->ev_aiv[l][ev]++;
        } else {
            g->ev_aic[ev]++;
            g->ev_aic_mode[ev] = (int)mode;
        }
        return PLD_OK;
    }
    xwait_t w = {pld_op_name(e), 'e', {NULL, NULL}, 0, 0, on_aic ? &g->ev_aic[ev] : &g->ev_aiv[lane][ev], 1, 0, (int)ev};
    if (on_aic && g->ev_aic_mode[ev] == 2)
        w.need = g->nlanes;
    if ((st = xwait(it, f, e, g, &w)) != PLD_OK)
        return st;
    if (on_aic && g->ev_aic_mode[ev] == 2)
        w.need = g->nlanes; /* a mode-2 set may have come while waiting */
    *w.ev -= w.need;
    if (it->race)
        pld_race_sync(it, f, 1);
    return PLD_OK;
}

/* One barrier step of syncall; reports a barrier that can never complete. */
static pld_status_t barrier(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int up)
{
    int arrived = 0, blocks = 0;
    if (it->race)
        pld_race_sync(it, f, 0);
    int r = pld_npu_barrier(it->sched, up, &arrived, &blocks);
    if (r == 0 && it->race)
        pld_race_sync(it, f, 2);
    if (r == 1)
        return PLD_E_RUNTIME;
    if (r == 2)
        return pld_rt_error(it, f, e->span,
                            "pl.system.syncall can never complete: %d of the %d %s arrived and the others returned "
                            "without reaching it",
                            arrived, blocks, f->xg && up == 0 ? "cores of the cluster" : "blocks");
    return PLD_OK;
}

/* syncall: a barrier of every participant of the launch: one per block, or
 * for core_type='mix' every core of each block's cluster (its Group's cores;
 * 1 AIC + 2 AIV per block of a mixed kernel). In a Group the cores meet
 * first, one of them meets the other clusters, then all go on. */
static pld_status_t syncall(pld_interp_t *it, frame_t *f, const pld_expr_t *e)
{
    const pld_expr_t *m = pld_op_arg(e, 1), *ct = pld_op_arg(e, 0);
    const int soft = m && m->kind == PLD_EX_STR && strcmp(m->u.str.s, "soft") == 0;
    const char *type = ct && ct->kind == PLD_EX_STR ? ct->u.str.s : "mix";
    const int mix = strcmp(type, "mix") == 0;
    xgroup_t *g = f->xg;
    if (g && !mix)
        return pld_rt_error(it, f, e->span,
                            "pl.system.syncall(core_type='%s') inside a Group (a barrier of only some cores of each "
                            "cluster) is not supported yet; core_type='mix' is",
                            type);
    const pld_npu_profile_t *pf = pld_npu_profile_or_default(it->opts.platform);
    const int64_t cores = strcmp(type, "aiv_only") == 0 ? pf->aiv_cores : pf->aic_cores;
    const int64_t parts = f->block_num * (mix ? (g ? g->ncores : 3) : 1);
    int64_t used = 0;
    pld_status_t st;
    if (soft && (st = pld_op_iarg(it, f, e, 3, 0, &used)) != PLD_OK)
        return st;
    if (!soft && f->block_num < cores)
        return pld_rt_error(it, f, e->span,
                            "a hard syncall(core_type='%s') waits for all %lld %s of platform %s, but this launch "
                            "has %lld block%s: the others never arrive (on the device: a hang, error 507018); launch "
                            "%lld blocks with sync_start=True, or use mode='soft' with used_cores",
                            type, (long long)cores, strcmp(type, "aiv_only") == 0 ? "AIV cores" : "clusters (AIC cores)",
                            pf->name, (long long)f->block_num, f->block_num == 1 ? "" : "s", (long long)cores);
    if (soft && used != 0 && used != parts)
        return pld_rt_error(it, f, e->span,
                            "a soft syncall(core_type='%s') with used_cores=%lld, but the launch has %lld participant%s "
                            "(%lld block%s%s): %s",
                            type, (long long)used, (long long)parts, parts == 1 ? "" : "s", (long long)f->block_num,
                            f->block_num == 1 ? "" : "s", mix ? " x the cores of a cluster" : "",
                            used > parts ? "the barrier waits for cores that do not exist (a hang)"
                                         : "the barrier opens before every participant arrived");
    if (!g)
        return barrier(it, f, e, 0);
    const int local = g->ncores > 1; /* a group of one core is no grid of its own */
    if (local && (st = barrier(it, f, e, 0)) != PLD_OK)
        return st;
    if (f->xcore == 0 && f->block_num > 1 && (st = barrier(it, f, e, local)) != PLD_OK)
        return st;
    return local ? barrier(it, f, e, 0) : PLD_OK;
}

/* pl.tile.aiv_shard / aic_gather in a pl.split_aiv region (split= or the
 * region's mode): a shard takes this lane's ceil half (lane 1's valid extent
 * is what is left), a gather rejoins the two lanes' halves (lane l at offset
 * l * half) once both lanes arrived; mode NONE passes the tile through. */
static pld_status_t shard_gather(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int gather, pld_value_t *out)
{
    int64_t split;
    pld_value_t v;
    pld_status_t st;
    if ((st = pld_op_iarg(it, f, e, 2, f->lanes ? f->lanes->split : 0, &split)) != PLD_OK)
        return st;
    if ((st = pld_op_need(it, f, e, 0, &v, PLD_V_TILE)) != PLD_OK)
        return st;
    if (split == 0) {
        *out = v; /* the crossing keeps the shape */
        return PLD_OK;
    }
    const pld_tile_t *t = pld_v_tile(&v);
    const int lane = (int)f->subblock_idx;
    if (!f->lanes || t->rank != 2 || split < 0 || split > 2 || lane < 0 || lane > 1) {
        pld_value_release(&v);
        if (!f->lanes)
            return pld_rt_error(it, f, e->span, "%s with split=%lld needs the two lanes of a pl.split_aiv region",
                                pld_op_name(e), (long long)split);
        return pld_rt_error(it, f, e->span, "%s needs a 2-D tile and split 1 (UP_DOWN) or 2 (LEFT_RIGHT), found rank %d, "
                                            "split %lld",
                            pld_op_name(e), t->rank, (long long)split);
    }
    const int axis = split == 1 ? 0 : 1;
    pld_tile_t *r = NULL;
    if (!gather) {
        const int64_t h = (t->shape[axis] + 1) / 2, off = lane * h;
        const int64_t ext = t->shape[axis] - off < h ? t->shape[axis] - off : h;
        r = tile_part(t, axis, off, ext, h, PLD_MEM_VEC);
    } else {
        pld_lanes_t *ln = f->lanes;
        pld_value_set(&ln->v[lane], &v);
        int arrived = 0, blocks = 0, b = pld_npu_barrier(it->sched, 0, &arrived, &blocks);
        if (b == 0) {
            const pld_tile_t *a0 = pld_v_tile(&ln->v[0]), *a1 = pld_v_tile(&ln->v[1]);
            if (ln->v[0].kind == PLD_V_TILE && ln->v[1].kind == PLD_V_TILE && a0->dt == a1->dt && a0->rank == a1->rank)
                r = tile_join(a0, a1, axis, 0, PLD_MEM_MAT);
            b = pld_npu_barrier(it->sched, 0, &arrived, &blocks); /* both lanes read the slots */
        }
        pld_value_release(&ln->v[lane]);
        ln->v[lane] = pld_v_none();
        if (b != 0) {
            pld_value_release(&v);
            if (r) {
                pld_value_t rv = pld_tile_value(r);
                pld_value_release(&rv);
            }
            return b == 1 ? PLD_E_RUNTIME
                          : pld_rt_error(it, f, e->span, "%s can never complete: the other lane returned without "
                                                         "reaching it",
                                         pld_op_name(e));
        }
    }
    pld_value_release(&v);
    if (!r)
        return pld_rt_error(it, f, e->span, gather ? "%s: the lanes' halves differ in dtype or rank, or out of memory"
                                                   : "%s: out of memory",
                            pld_op_name(e));
    *out = pld_tile_value(r);
    return PLD_OK;
}

pld_status_t pld_exec_xcore(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    const pld_npu_profile_t *pf = pld_npu_profile_or_default(it->opts.platform);
    *out = pld_v_none();
    switch (e->op) {
    case PLD_OPID_TILE_GET_SUBBLOCK_IDX:
        *out = pld_v_int(PLD_DT_INDEX, f->subblock_idx);
        return PLD_OK;
    case PLD_OPID_TILE_AIV_SHARD: return shard_gather(it, f, e, 0, out);
    case PLD_OPID_TILE_AIC_GATHER: return shard_gather(it, f, e, 1, out);
    case PLD_OPID_SYS_AVAILABLE_CLUSTER_COUNT:
        *out = pld_v_int(PLD_DT_INT32, pf->aic_cores);
        return PLD_OK;
    case PLD_OPID_SYS_AVAILABLE_AIV_COUNT:
        *out = pld_v_int(PLD_DT_INT32, pf->aiv_cores);
        return PLD_OK;
    case PLD_OPID_SYS_RESERVE_BUFFER: {
        /* the slot buffer's base address: the given one, or 0 for AUTO */
        const pld_expr_t *b = pld_op_arg(e, 2);
        int64_t base = 0;
        if (b && b->kind == PLD_EX_INT && b->u.ival >= 0)
            base = b->u.ival;
        *out = pld_v_int(PLD_DT_INT32, base);
        return PLD_OK;
    }
    case PLD_OPID_SYS_IMPORT_PEER_BUFFER:
        *out = pld_v_int(PLD_DT_INT32, 0);
        return PLD_OK;
    case PLD_OPID_SYS_AIC_INITIALIZE_PIPE:
    case PLD_OPID_SYS_AIV_INITIALIZE_PIPE:
        return init_pipe(it, f, e);
    case PLD_OPID_SYS_TPUSH_TO_AIV: return tpush(it, f, e, XC_C2V);
    case PLD_OPID_SYS_TPUSH_TO_AIC: return tpush(it, f, e, XC_V2C);
    case PLD_OPID_SYS_TPOP_FROM_AIC: return tpop(it, f, e, XC_C2V, out);
    case PLD_OPID_SYS_TPOP_FROM_AIV: return tpop(it, f, e, XC_V2C, out);
    case PLD_OPID_SYS_TFREE_TO_AIC: return tfree(it, f, e, XC_C2V);
    case PLD_OPID_SYS_TFREE_TO_AIV: return tfree(it, f, e, XC_V2C);
    case PLD_OPID_SYS_SYNC_SET: return sync_event(it, f, e, 1);
    case PLD_OPID_SYS_SYNC_WAIT: return sync_event(it, f, e, 0);
    case PLD_OPID_SYS_SYNCALL: return syncall(it, f, e);
    default:
        /* set_ffts, cacheinvalid, fence, bar_*, sync_src/dst: coherent memory, program order */
        return PLD_OK;
    }
}

/* ------------------------------------------------------------ groups (for pld_group.c) */

pld_xgroup_t *pld_xgroup_new(pld_interp_t *it, frame_t *f, int nlanes)
{
    xgroup_t *g = pld_mem_calloc(1, sizeof *g);
    if (g) {
        g->it = it;
        g->f = f;
        g->nlanes = nlanes;
    }
    return g;
}

int pld_xgroup_add(pld_xgroup_t *g, const pld_func_t *fn, const pld_stmt_t *s, int lane)
{
    if (g->ncores == XC_CORES)
        return -1;
    xcore_t *c = &g->cores[g->ncores++];
    c->fn = fn;
    c->stmt = s;
    c->lane = lane;
    return 0;
}

int pld_xgroup_ncores(const pld_xgroup_t *g)
{
    return g->ncores;
}

const pld_stmt_t *pld_xgroup_core(const pld_xgroup_t *g, int b, int *lane)
{
    *lane = g->cores[b].lane;
    return g->cores[b].stmt;
}

void pld_xgroup_done(pld_xgroup_t *g, int b)
{
    g->cores[b].done = 1;
}

void pld_xgroup_free(pld_xgroup_t *g)
{
    if (!g)
        return;
    for (int d = 0; d < 2; d++)
        for (int id = 0; id < XC_IDS; id++)
            for (int l = 0; l < XC_LANES; l++)
                xq_free(&g->q[d][id][l]);
    pld_mem_free(g);
}
