/* pld_cgen_dist.c - distributed ops in generated code (pld_cgen_int.h): a tile
 * op the runtime runs (pld.*: windows, signals, collectives) and
 * pld.tile.remote_load / remote_store, which the kernel runs directly where the
 * peer's window is mapped here, as the NPU does. */
#include "pld_cgen_int.h"
#include "pld_crt.h"

#include <stdio.h>

/* a tile op the runtime runs: its result copied into dst (need bytes) */
int pld_cg_tile_exec(cg_t *g, const pld_expr_t *e, const char *dst, int64_t need)
{
    const int s = pld_cg_site(g, e);
    if (need < 0)
        return pld_cg_fail(g, e->span, "%s: the result tile needs a static shape for the native backend", opname(e));
    int o = pld_cg_exec(g, e, SK_TILE);
    if (o < 0)
        return -1;
    pld_cg_emit(g, "if (t%d.kind != PC_OUT_TILE || (size_t)pc_numel(t%d.tile.shape, t%d.tile.rank) * %d > %lld) return pc_cold(), "
                   "rt->fail(bk, %d, \"%s: the runtime returned no tile of the static shape\");", o, o, o,
                esize(e->type->dtype), (long long)need, s, opname(e));
    char src[32];
    snprintf(src, sizeof src, "t%d.tile", o);
    pld_cg_copy_tile(g, dst, src, e->type->dtype);
    return 0;
}

/* the named window tensor operand i of e (its slot), -1 when not one */
static int window_operand(cg_t *g, const pld_expr_t *e, int i)
{
    const pld_expr_t *a = pld_op_bound(e, i);
    return a && a->kind == PLD_EX_NAME && a->slot >= 0 && g->slots[a->slot].kind == SK_TENSOR ? a->slot : -1;
}

/* The end of a direct access's bounds loop (dimension k, extent x), then
 * `if (direct) { pc_tensor pv = <window tensor of the peer>; ...`: the
 * direct form; direct_else opens the runtime form, direct_end closes both. */
static void direct_begin(cg_t *g, int off, int ts, int dir, int dl)
{
    pld_cg_emit(g, "if (t%d[k] < 0 || t%d[k] > s%d.shape[k] - x) t%d = 0;", off, off, ts, dir);
    g->ind--;
    pld_cg_emit(g, "}");
    pld_cg_emit(g, "if (t%d) {", dir);
    g->ind++;
    pld_cg_emit(g, "pc_tensor pv = s%d;", ts);
    pld_cg_emit(g, "pv.data += t%d;", dl);
}

static void direct_else(cg_t *g)
{
    g->ind--;
    pld_cg_emit(g, "} else {");
    g->ind++;
}

static void direct_end(cg_t *g)
{
    g->ind--;
    pld_cg_emit(g, "}");
}

/* pld.tile.remote_load: where the peer's window is mapped here (the
 * CommContext's windowsIn[peer] != 0), the kernel reads it directly, as the
 * NPU does; otherwise, and for anything the runtime must report (a peer
 * outside the domain, a region out of bounds), the runtime runs it */
int pld_cg_remote_load(cg_t *g, const pld_expr_t *e, const char *dst, int64_t need)
{
    const pld_expr_t *shp = pld_op_bound(e, 3), *val = pld_op_bound(e, 4);
    const int ts = window_operand(g, e, 0), r = e->type ? e->type->rank : -1;
    const int nshp = shp && (shp->kind == PLD_EX_LIST || shp->kind == PLD_EX_TUPLE) ? shp->u.seq.n : -1;
    const int nval = val && (val->kind == PLD_EX_LIST || val->kind == PLD_EX_TUPLE) ? val->u.seq.n : -1;
    if (ts < 0 || need < 0 || nshp != r || (val && nval != r) || r < 1 || r > PC_MAX_RANK)
        return pld_cg_tile_exec(g, e, dst, need);
    const int s = pld_cg_site(g, e);
    int fl, no, nv;
    pld_dtype_t dt;
    int peer = pld_cg_scalar(g, pld_op_bound(e, 1), &fl, &dt);
    if (peer < 0)
        return -1;
    if (fl)
        return pld_cg_tile_exec(g, e, dst, need);
    int off = pld_cg_ilist(g, pld_op_bound(e, 2), &no);
    int vl = val ? pld_cg_ilist(g, val, &nv) : -1;
    if (g->failed)
        return -1;
    int dl = tmp(g), dir = tmp(g), v = tmp(g);
    pld_cg_emit(g, "int64_t t%d = 0;", dl);
    pld_cg_emit(g, "int t%d = pc_peer_delta(rt->comm_ctx(bk, &s%d), t%d, &t%d) && %d == s%d.rank && %d <= s%d.rank;", dir, ts,
                peer, dl, no, ts, r, ts);
    pld_cg_emit(g, "int64_t t%d[%d];", v, r);
    pld_cg_emit(g, "for (int k = 0; t%d && k < s%d.rank; k++) {", dir, ts);
    g->ind++;
    pld_cg_emit(g, "const int j = k - (s%d.rank - %d);", ts, r);
    pld_cg_emit(g, "int64_t x = 1;");
    pld_cg_emit(g, "if (j >= 0) {");
    g->ind++;
    for (int j = 0; j < r; j++) {
        if (vl >= 0)
            pld_cg_emit(g, "if (j == %d) x = t%d[%d] < %lld ? t%d[%d] : %lld;", j, vl, j, (long long)e->type->shape[j].v, vl, j,
                        (long long)e->type->shape[j].v);
        else
            pld_cg_emit(g, "if (j == %d) x = %lld;", j, (long long)e->type->shape[j].v);
    }
    pld_cg_emit(g, "int64_t room = s%d.valid[k] - t%d[k];", ts, off);
    pld_cg_emit(g, "if (x > room) x = room;");
    pld_cg_emit(g, "if (x < 0) x = 0;");
    pld_cg_emit(g, "t%d[j] = x;", v);
    g->ind--;
    pld_cg_emit(g, "}");
    direct_begin(g, off, ts, dir, dl);
    if (pld_cg_set_desc(g, dst, e->type, e))
        return -1;
    pld_cg_emit(g, "if (rt->load(bk, %d, &%s, &pv, t%d, %d, t%d, 0)) return pc_cold(), 1;", s, dst, off, no, v);
    direct_else(g);
    if (pld_cg_tile_exec(g, e, dst, need))
        return -1;
    direct_end(g);
    return 0;
}

/* pld.tile.remote_store of a local tile, not atomic: directly into the
 * peer's mapped window where there is one (see pld_cg_remote_load) */
int pld_cg_remote_store(cg_t *g, const pld_expr_t *e)
{
    const pld_expr_t *src = pld_op_bound(e, 0), *at = pld_op_bound(e, 4);
    const int ts = window_operand(g, e, 1);
    const int tile = src && src->kind == PLD_EX_NAME && src->slot >= 0 && g->slots[src->slot].kind == SK_TILE;
    const pld_expr_t *tgt = pld_op_bound(e, 1);
    if (ts < 0 || !tile || (at && !(at->kind == PLD_EX_INT && at->u.ival == 0)) || !src->type || !tgt->type ||
        src->type->dtype != tgt->type->dtype)
        return pld_cg_exec(g, e, SK_NONE) < 0 ? -1 : 0;
    const int s = pld_cg_site(g, e);
    int fl, no;
    pld_dtype_t dt;
    int peer = pld_cg_scalar(g, pld_op_bound(e, 2), &fl, &dt);
    if (peer < 0)
        return -1;
    if (fl)
        return pld_cg_exec(g, e, SK_NONE) < 0 ? -1 : 0;
    int off = pld_cg_ilist(g, pld_op_bound(e, 3), &no);
    if (off < 0)
        return -1;
    int dl = tmp(g), dir = tmp(g);
    pld_cg_emit(g, "int64_t t%d = 0;", dl);
    pld_cg_emit(g, "int t%d = pc_peer_delta(rt->comm_ctx(bk, &s%d), t%d, &t%d) && %d == s%d.rank && s%d.rank <= s%d.rank;", dir,
                ts, peer, dl, no, ts, src->slot, ts);
    pld_cg_emit(g, "for (int k = 0; t%d && k < s%d.rank; k++) {", dir, ts);
    g->ind++;
    pld_cg_emit(g, "const int j = k - (s%d.rank - s%d.rank);", ts, src->slot);
    pld_cg_emit(g, "const int64_t x = j >= 0 ? s%d.valid[j] : 1;", src->slot);
    direct_begin(g, off, ts, dir, dl);
    pld_cg_emit(g, "if (rt->store(bk, %d, &s%d, t%d, %d, &pv, NULL, 0)) return pc_cold(), 1;", s, src->slot, off, no);
    direct_else(g);
    if (pld_cg_exec(g, e, SK_NONE) < 0)
        return -1;
    direct_end(g);
    return 0;
}
