/* pld_xcore.c - the ops between the cores of a cluster, bound to the
 * simulated cluster (src/sim_npu/pld_cluster.h: the cross-core pipe, events,
 * barriers and the deadlock report; the model: docs/cluster.md).
 *
 * This file binds the ops' arguments (pipe ids, split codes, event ids, the
 * syncall's mode and core type), turns the interpreter's tiles into the
 * cluster's tiles and back, feeds the waits' progress to it->where and the
 * cores' ordering to the race detector, and reports the errors at the op's
 * source location. A FunctionType.Group body runs its cores: pld_group.c.
 *
 * Pipe barriers and cache maintenance (bar_*, fence, sync_src/dst,
 * cacheinvalid, set_ffts) have nothing to do on a CPU with coherent memory
 * and program order. Outside a group (a mixed pl.at scope, pl.split_aiv
 * lanes) the cores already run in program order: sync_set / sync_wait have
 * no effect, and the pipe ops need a group. pl.split_aiv's crossings
 * (aiv_shard / aic_gather) halve and rejoin tiles with the cluster's tile
 * functions. */
#include "pld_interp_int.h"
#include "pld_mem.h"

#include <stdio.h>
#include <string.h>

#define XC_IDS PLD_CLUSTER_IDS
#define XC_C2V PLD_CLUSTER_C2V
#define XC_V2C PLD_CLUSTER_V2C

/* ------------------------------------------------------------ the cluster's side */

static void on_yield(void *arg, int waiting)
{
    pld_xsite_t *s = arg;
    if (waiting) {
        snprintf(s->it->where.what, sizeof s->it->where.what, "%s (cross-core)", s->at.op);
        s->it->where.waiting = 1;
    } else {
        s->it->where.waiting = 0;
        pld_where_at(s->it, s->f, s->sp);
    }
}

static void on_sync(void *arg, pld_cluster_sync_t how)
{
    pld_xsite_t *s = arg;
    pld_race_sync(s->it, s->f, (int)how);
}

void pld_xsite_init(pld_xsite_t *s, pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_span_t sp)
{
    memset(s, 0, sizeof *s);
    s->it = it;
    s->f = f;
    s->e = e;
    s->sp = sp;
    s->at.op = pld_op_name(e);
    s->at.line = (int)sp.line;
    s->at.yield = on_yield;
    s->at.sync = it->race ? on_sync : NULL;
    s->at.arg = s;
}

/* A failed op of the cluster, reported at e (err empty: another core failed
 * and reported). */
static pld_status_t failed(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_status_t st, const char *err)
{
    if (st == PLD_E_NOMEM)
        return pld_rt_error(it, f, e->span, "out of memory");
    if (err[0])
        return pld_rt_error(it, f, e->span, "%s", err);
    return st;
}

/* The cluster's view of tile t (borrows its data). */
static void tile_desc(const pld_tile_t *t, pld_cluster_tile_t *d)
{
    memset(d, 0, sizeof *d);
    d->dt = t->dt;
    d->rank = t->rank;
    memcpy(d->shape, t->shape, sizeof d->shape);
    memcpy(d->valid, t->valid, sizeof d->valid);
    d->data = t->data;
}

/* A tile of memory space mem over the cluster's tile d (takes its data). */
static pld_tile_t *tile_adopt(pld_cluster_tile_t *d, pld_mem_t mem)
{
    pld_tile_t *t = pld_tile_adopt(d->dt, d->rank, d->shape, d->valid, mem, d->data);
    d->data = NULL;
    return t;
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
    pld_cluster_t *g = f->xg;
    int64_t split, id;
    pld_value_t v;
    pld_status_t st;
    if ((st = need_group(it, f, e)) != PLD_OK || (st = pld_op_iarg(it, f, e, split_pos((pld_op_id_t)e->op), 0, &split)) != PLD_OK ||
        (st = pld_op_iarg(it, f, e, id_pos((pld_op_id_t)e->op), 0, &id)) != PLD_OK)
        return st;
    if (id < 0 || id >= XC_IDS || split < 0 || split > 4)
        return pld_rt_error(it, f, e->span, "%s: id %lld / split %lld out of range", pld_op_name(e), (long long)id,
                            (long long)split);
    if (split && pld_cluster_nlanes(g) < 2)
        return pld_rt_error(it, f, e->span,
                            "%s(split=%lld) divides the tile between two AIV lanes, but the AIV kernel runs on one "
                            "(mark it attrs={\"dual_aiv_dispatch\": True})",
                            pld_op_name(e), (long long)split);
    if ((st = pld_op_need(it, f, e, 0, &v, PLD_V_TILE)) != PLD_OK)
        return st;
    pld_cluster_tile_t t;
    tile_desc(pld_v_tile(&v), &t);
    pld_xsite_t s;
    pld_xsite_init(&s, it, f, e, e->span);
    char err[1024];
    st = pld_cluster_push(g, f->xcore, (int)f->subblock_idx, (pld_cluster_dir_t)dir, (int)id, (int)split, &t, &s.at,
                          err, sizeof err);
    pld_value_release(&v);
    return st == PLD_OK ? PLD_OK : failed(it, f, e, st, err);
}

static pld_status_t tpop(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int dir, pld_value_t *out)
{
    pld_cluster_t *g = f->xg;
    int64_t split, id;
    pld_status_t st;
    if ((st = need_group(it, f, e)) != PLD_OK || (st = pld_op_iarg(it, f, e, split_pos((pld_op_id_t)e->op), 0, &split)) != PLD_OK ||
        (st = pld_op_iarg(it, f, e, id_pos((pld_op_id_t)e->op), 0, &id)) != PLD_OK)
        return st;
    if (id < 0 || id >= XC_IDS)
        return pld_rt_error(it, f, e->span, "%s: id %lld out of range", pld_op_name(e), (long long)id);
    pld_xsite_t s;
    pld_xsite_init(&s, it, f, e, e->span);
    char err[1024];
    pld_cluster_tile_t got;
    st = pld_cluster_pop(g, f->xcore, (int)f->subblock_idx, (pld_cluster_dir_t)dir, (int)id, (int)split, &s.at, &got,
                         err, sizeof err);
    if (st != PLD_OK)
        return failed(it, f, e, st, err);
    /* a tile from the AIC lands in the AIV's Vec, one from the AIV lanes in the AIC's Mat */
    pld_tile_t *r = tile_adopt(&got, dir == XC_C2V ? PLD_MEM_VEC : PLD_MEM_MAT);
    if (!r)
        return pld_rt_error(it, f, e->span, "out of memory");
    *out = pld_tile_value(r);
    if ((st = check_pop(it, f, e, pld_v_tile(out))) != PLD_OK)
        pld_value_release(out);
    return st;
}

static pld_status_t tfree(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int dir)
{
    int64_t id;
    pld_status_t st;
    if ((st = need_group(it, f, e)) != PLD_OK || (st = pld_op_iarg(it, f, e, id_pos((pld_op_id_t)e->op), 0, &id)) != PLD_OK)
        return st;
    if (id < 0 || id >= XC_IDS)
        return pld_rt_error(it, f, e->span, "%s: id %lld out of range", pld_op_name(e), (long long)id);
    pld_xsite_t s;
    pld_xsite_init(&s, it, f, e, e->span);
    char err[1024];
    st = pld_cluster_free_slot(f->xg, (int)f->subblock_idx, (pld_cluster_dir_t)dir, (int)id, &s.at, err, sizeof err);
    return st == PLD_OK ? PLD_OK : failed(it, f, e, st, err);
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
    pld_cluster_init_pipe(f->xg, (int)mask, slots, (int)id);
    return PLD_OK;
}

static pld_status_t sync_event(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int set)
{
    pld_cluster_t *g = f->xg;
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
    pld_xsite_t s;
    pld_xsite_init(&s, it, f, e, e->span);
    if (set) {
        pld_cluster_event_set(g, on_aic, (int)ev, (int)mode, &s.at);
        return PLD_OK;
    }
    char err[1024];
    st = pld_cluster_event_wait(g, f->xcore, (int)f->subblock_idx, on_aic, (int)ev, &s.at, err, sizeof err);
    return st == PLD_OK ? PLD_OK : failed(it, f, e, st, err);
}

/* syncall: a barrier of every participant of the launch: one per block, or
 * for core_type='mix' every core of each block's cluster (its Group's cores;
 * 1 AIC + 2 AIV per block of a mixed kernel); the rules and the barriers:
 * pld_cluster_syncall_check, pld_cluster_syncall. */
static pld_status_t syncall(pld_interp_t *it, frame_t *f, const pld_expr_t *e)
{
    const pld_expr_t *m = pld_op_arg(e, 1), *ct = pld_op_arg(e, 0);
    const int soft = m && m->kind == PLD_EX_STR && strcmp(m->u.str.s, "soft") == 0;
    const char *type = ct && ct->kind == PLD_EX_STR ? ct->u.str.s : "mix";
    const int mix = strcmp(type, "mix") == 0;
    pld_cluster_t *g = f->xg;
    if (g && !mix)
        return pld_rt_error(it, f, e->span,
                            "pl.system.syncall(core_type='%s') inside a Group (a barrier of only some cores of each "
                            "cluster) is not supported yet; core_type='mix' is",
                            type);
    const pld_npu_profile_t *pf = pld_npu_profile_or_default(it->opts.platform);
    int64_t used = 0;
    pld_status_t st;
    if (soft && (st = pld_op_iarg(it, f, e, 3, 0, &used)) != PLD_OK)
        return st;
    char err[1024];
    if (pld_cluster_syncall_check(pf, g, type, soft, used, f->block_num, err, sizeof err) != PLD_OK)
        return pld_rt_error(it, f, e->span, "%s", err);
    pld_xsite_t s;
    pld_xsite_init(&s, it, f, e, e->span);
    st = pld_cluster_syncall(it->sched, g, f->xcore, f->block_num, &s.at, err, sizeof err);
    return st == PLD_OK ? PLD_OK : failed(it, f, e, st, err);
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
        pld_cluster_tile_t d, p;
        tile_desc(t, &d);
        if (pld_cluster_tile_part(&d, axis, off, ext, h, &p) == PLD_OK)
            r = tile_adopt(&p, PLD_MEM_VEC);
    } else {
        pld_lanes_t *ln = f->lanes;
        pld_value_set(&ln->v[lane], &v);
        int arrived = 0, blocks = 0, b = pld_npu_barrier(it->sched, 0, &arrived, &blocks);
        if (b == 0) {
            if (ln->v[0].kind == PLD_V_TILE && ln->v[1].kind == PLD_V_TILE) {
                pld_cluster_tile_t d0, d1, j; /* the join fails on halves of another dtype or rank */
                tile_desc(pld_v_tile(&ln->v[0]), &d0);
                tile_desc(pld_v_tile(&ln->v[1]), &d1);
                if (pld_cluster_tile_join(&d0, &d1, axis, 0, &j) == PLD_OK)
                    r = tile_adopt(&j, PLD_MEM_MAT);
            }
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
