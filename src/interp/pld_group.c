/* pld_group.c - a FunctionType.Group body: its consecutive calls of AIC and
 * AIV kernels start together as the cores of one cluster (one block for the
 * AIC kernel, one per AIV lane) and join before the next other statement.
 * The cluster (its cores, the pipe, events and barriers between them):
 * src/sim_npu/pld_cluster.h; the ops: pld_xcore.c; the model:
 * docs/cluster.md. */
#include "pld_interp_int.h"

#include <string.h>

/* The AIC/AIV kernel a group statement calls (`self.k(...)` or
 * `x = self.k(...)`), or NULL. */
static const pld_func_t *member_of(const pld_interp_t *it, const pld_stmt_t *s)
{
    const pld_expr_t *e = s->kind == PLD_ST_EXPR ? s->u.expr : s->kind == PLD_ST_ASSIGN ? s->u.assign.value : NULL;
    if (!e || e->kind != PLD_EX_CALL || e->op >= 0 || e->aux < 0 || e->aux >= it->p->nfuncs)
        return NULL;
    const pld_expr_t *fn = e->u.call.fn;
    if (fn->kind != PLD_EX_ATTR || fn->u.attr.obj->kind != PLD_EX_NAME || strcmp(fn->u.attr.obj->u.name, "self") != 0)
        return NULL;
    const pld_func_t *k = it->p->funcs[e->aux];
    return k->ftype == PLD_FT_AIC || k->ftype == PLD_FT_AIV ? k : NULL;
}

typedef struct run {
    pld_interp_t *it;
    frame_t *f;
    pld_cluster_t *g;
    const pld_stmt_t *stmt[PLD_CLUSTER_CORES]; /* core b's member statement */
} run_t;

/* Core b of the group: its member statement in a copy of the group's frame
 * (the slots are shared: each member assigns its own target). */
static pld_status_t core_block(void *arg, int b, int n)
{
    (void)n;
    run_t *r = arg;
    const int lane = pld_cluster_core_lane(r->g, b);
    const pld_stmt_t *s = r->stmt[b];
    frame_t bf = *r->f;
    bf.xg = r->g;
    bf.xcore = b;
    bf.subblock_idx = lane;
    bf.ret = pld_v_none();
    if (r->it->race)
        pld_race_fork(r->it, r->f, &bf);
    int flow;
    if (lane > 0 && s->kind == PLD_ST_ASSIGN) {
        /* the group's result is lane 0's */
        pld_value_t v;
        flow = pld_eval(r->it, &bf, s->u.assign.value, &v) == PLD_OK ? FLOW_NORMAL : FLOW_ERROR;
        if (flow == FLOW_NORMAL)
            pld_value_release(&v);
    } else {
        pld_block_t one = {(pld_stmt_t **)&s, 1};
        flow = pld_walk_block(r->it, &bf, &one);
    }
    pld_value_release(&bf.ret);
    pld_cluster_core_done(r->g, b);
    return flow == FLOW_ERROR ? PLD_E_RUNTIME : PLD_OK;
}

/* Runs member statements [from, to) of body as the cores of one cluster. */
static int run_members(pld_interp_t *it, frame_t *f, const pld_block_t *body, int from, int to)
{
    int nlanes = 1;
    for (int i = from; i < to; i++) {
        const pld_func_t *k = member_of(it, body->stmts[i]);
        if (k->ftype == PLD_FT_AIV && pld_func_dual_aiv(k))
            nlanes = 2;
    }
    pld_cluster_t *g;
    if (pld_cluster_create(it->sched, f->fn ? f->fn->name : NULL, nlanes, &g) != PLD_OK) {
        pld_rt_error(it, f, body->stmts[from]->span, "out of memory");
        return FLOW_ERROR;
    }
    int flow = FLOW_NORMAL;
    run_t r = {it, f, g, {NULL}};
    for (int i = from; i < to && flow == FLOW_NORMAL; i++) {
        const pld_func_t *k = member_of(it, body->stmts[i]);
        for (int l = 0; l < (k->ftype == PLD_FT_AIV ? nlanes : 1); l++) {
            int b = pld_cluster_add_core(g, k->ftype == PLD_FT_AIC, k->name, l);
            if (b < 0) {
                pld_rt_error(it, f, body->stmts[i]->span, "a group launches at most %d cores at once",
                             pld_cluster_ncores(g));
                flow = FLOW_ERROR;
                break;
            }
            r.stmt[b] = body->stmts[i];
        }
    }
    if (flow == FLOW_NORMAL) {
        pld_status_t st = pld_npu_run_blocks(it->sched, pld_cluster_ncores(g), it->opts.block_stack_bytes, core_block, &r);
        if (it->race)
            pld_race_join(it, f);
        if (st != PLD_OK && !it->failed)
            pld_rt_error(it, f, body->stmts[from]->span, "the cores of group %s failed: %s", f->fn ? f->fn->name : "?",
                         pld_status_name(st));
        flow = st == PLD_OK ? FLOW_NORMAL : FLOW_ERROR;
    }
    pld_cluster_destroy(g);
    return flow;
}

int pld_xcore_group(pld_interp_t *it, frame_t *f, const pld_block_t *body)
{
    int flow = FLOW_NORMAL;
    for (int i = 0; i < body->n && flow == FLOW_NORMAL;) {
        int j = i;
        while (j < body->n && member_of(it, body->stmts[j]))
            j++;
        if (j > i) {
            flow = run_members(it, f, body, i, j);
            i = j;
            continue;
        }
        pld_block_t one = {(pld_stmt_t **)&body->stmts[i], 1};
        flow = pld_walk_block(it, f, &one);
        i++;
    }
    return flow;
}
