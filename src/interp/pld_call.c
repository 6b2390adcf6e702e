/* pld_call.c - the walker's calls and launches: function calls (argument
 * binding and shape checks), kernel launches through the backend interface,
 * pl.at(CORE_GROUP) scopes and pl.spmd grids as tasks (queued on deps), and
 * self.f(..., device=r) dispatch across ranks. */
#include "pld_interp_int.h"
#include "pld_mem.h"

#include <stdio.h>
#include <string.h>

#define MAX_DEPTH 200

/* ---- SPMD grids: every block runs the body on its own copy of the frame ---- */

typedef struct spmd_ctx {
    pld_interp_t *it;
    frame_t *f;
    const pld_block_t *body;
    const pld_expr_t *loopvar;
    int split_aiv;             /* pl.split_aiv: the blocks are AIV lanes */
    pld_lanes_t lanes;         /* pl.split_aiv: the region's split mode and exchange slots */
} spmd_ctx_t;

static pld_status_t spmd_block(void *arg, int b, int n)
{
    spmd_ctx_t *c = arg;
    frame_t *f = c->f;
    pld_value_t *slots = pld_mem_calloc((size_t)(f->nslots > 0 ? f->nslots : 1), sizeof *slots);
    if (!slots)
        return pld_rt_error(c->it, f, c->body->n ? c->body->stmts[0]->span : f->call_span, "out of memory");
    for (int k = 0; k < f->nslots; k++)
        pld_value_set(&slots[k], &f->slots[k]);
    frame_t bf = *f;
    bf.slots = slots;
    bf.ctx = PLD_CTX_KERNEL;
    bf.block_idx = b;
    bf.block_num = n;
    if (c->split_aiv) {
        /* pl.split_aiv lanes: the AIV lanes of the enclosing block */
        bf.block_idx = f->block_idx;
        bf.block_num = f->block_num;
        bf.subblock_idx = b;
        bf.lanes = &c->lanes;
    }
    bf.loop = NULL;
    bf.ret = pld_v_none();
    bf.in_kernel_scope = 1;
    if (c->it->race)
        pld_race_fork(c->it, f, &bf);
    int flow = FLOW_NORMAL;
    pld_ev_t ev;
    if (c->it->trace) {
        pld_tr_init(&bf, c->body->n ? c->body->stmts[0]->span : f->call_span, &ev, PLD_EV_BLOCK,
                    c->split_aiv ? "pl.split_aiv lane" : "pl.spmd block");
        pld_trace_begin(c->it->trace, &ev);
    }
    if (c->loopvar) {
        pld_value_t lv = pld_v_int(PLD_DT_INDEX, b);
        if (pld_walk_assign(c->it, &bf, c->loopvar, &lv) != PLD_OK)
            flow = FLOW_ERROR;
    }
    if (flow == FLOW_NORMAL)
        flow = pld_walk_block(c->it, &bf, c->body);
    if (c->it->trace) {
        ev.failed = flow == FLOW_ERROR;
        pld_trace_end(c->it->trace, &ev);
    }
    pld_value_release(&bf.ret);
    for (int k = 0; k < f->nslots; k++)
        pld_value_release(&slots[k]);
    pld_mem_free(slots);
    return flow == FLOW_ERROR ? PLD_E_RUNTIME : PLD_OK;
}

/* The CommContext image of domain d on this rank (NULL when it has none). */
uint32_t pld_call_timeout_ms(const pld_interp_t *it)
{
    const double s = it->opts.timeout_s > 0 ? it->opts.timeout_s : 30.0;
    return s * 1000.0 >= (double)UINT32_MAX ? UINT32_MAX : (uint32_t)(s * 1000.0);
}

static const void *comm_ctx_of(const pld_interp_t *it, int64_t d)
{
    return d >= 0 && d < it->ndoms && it->doms[d].win ? pld_win_dom_ctx(it->doms[d].win) : NULL;
}

/* ---- launches: every kernel, scope and grid crosses the backend boundary ---- */

#define LAUNCH_SMALL 8

/* The arguments of one launch as the boundary carries them: the ABI view of
 * each value and the kernel's description for a plugin. */
typedef struct launch_args {
    pld_hw_arg_t *a;
    pld_be_param_t *p;
    const pld_value_t **v;             /* the values (borrowed) */
    pld_be_kernel_desc_t desc;
    char name[64];
    char feature_at[192];
    pld_hw_arg_t a_small[LAUNCH_SMALL];
    pld_be_param_t p_small[LAUNCH_SMALL];
    const pld_value_t *v_small[LAUNCH_SMALL];
} launch_args_t;

static void args_fini(launch_args_t *la)
{
    if (la->a != la->a_small)
        pld_mem_free(la->a);
    if (la->p != la->p_small)
        pld_mem_free(la->p);
    if (la->v != la->v_small)
        pld_mem_free(la->v);
}

/* ---- constructs a backend may not run (pld_be_kernel_desc_t.features) ---- */

static int feature_of(int op)
{
    switch (op) {
    case PLD_OPID_PLD_DEFER_WAIT: return PLD_BE_F_DEFER_WAIT;
    case PLD_OPID_PREFETCH_MAKE_CONTEXT:
    case PLD_OPID_PREFETCH_ASYNC:
    case PLD_OPID_PREFETCH_SESSION:
    case PLD_OPID_PREFETCH_WAIT: return PLD_BE_F_SDMA_ASYNC;
    default: return 0;
    }
}

static int collect_feature(int op, void *ctx)
{
    *(uint32_t *)ctx |= (uint32_t)feature_of(op);
    return 0; /* visit every call */
}

static int is_feature(int op, void *ctx)
{
    (void)ctx;
    return feature_of(op) != 0;
}

/* Sets d->features from the kernel body `body`, and d->feature_at to the
 * first such construct in buf ("file:line:col: op"). */
static void describe_features(const pld_interp_t *it, const pld_block_t *body, pld_be_kernel_desc_t *d, char *buf,
                              size_t n)
{
    uint32_t f = 0;
    pld_ast_find_call(body, collect_feature, &f);
    d->features = f;
    d->feature_at = NULL;
    const pld_expr_t *e = f ? pld_ast_find_call(body, is_feature, NULL) : NULL;
    if (e) {
        snprintf(buf, n, "%s:%u:%u: %s", it->p->file ? it->p->file : "?", e->span.line, e->span.col,
                 pld_op_info((pld_op_id_t)e->op)->name);
        d->feature_at = buf;
    }
}

/* Prepares la for n arguments of kernel `name` defined at `line`. */
static pld_status_t args_init(pld_interp_t *it, launch_args_t *la, int n, const char *name, int line, uint32_t core)
{
    memset(&la->desc, 0, sizeof la->desc);
    la->a = n <= LAUNCH_SMALL ? la->a_small : pld_mem_calloc((size_t)n, sizeof *la->a);
    la->p = n <= LAUNCH_SMALL ? la->p_small : pld_mem_calloc((size_t)n, sizeof *la->p);
    la->v = n <= LAUNCH_SMALL ? la->v_small : pld_mem_calloc((size_t)n, sizeof *la->v);
    if (!la->a || !la->p || !la->v) {
        args_fini(la);
        return PLD_E_NOMEM;
    }
    snprintf(la->name, sizeof la->name, "%s", name);
    la->desc.struct_size = sizeof la->desc;
    la->desc.name = la->name;
    la->desc.program = it->p->file;
    la->desc.line = line;
    la->desc.core_type = core;
    la->desc.nparams = (uint32_t)n;
    la->desc.params = la->p;
    pld_crt_describe(it, -1, &la->desc);
    return PLD_OK;
}

void pld_call_hw_arg(const pld_interp_t *it, const pld_value_t *v, pld_hw_arg_t *a, pld_be_param_t *p)
{
    memset(a, 0, sizeof *a);
    p->kind = PLD_BE_P_SCALAR;
    p->window = 0;
    p->rank = 0;
    if (v->kind == PLD_V_TENSOR) {
        pld_tensor_t *t = pld_v_tensor(v);
        pld_view_t kv;
        pld_tensor_kview(t, &kv);
        a->is_tensor = 1;
        a->tensor.data = kv.data;
        a->tensor.dt = t->dt;
        a->tensor.rank = t->rank;
        memcpy(a->tensor.shape, t->shape, sizeof t->shape);
        memcpy(a->tensor.strides, t->strides, sizeof t->strides);
        if (t->winbuf >= 0 && t->winbuf < it->nwins)
            a->tensor.comm_ctx = comm_ctx_of(it, it->wins[t->winbuf].dom);
        p->kind = PLD_BE_P_TENSOR;
        p->window = a->tensor.comm_ctx != NULL;
        p->rank = (uint32_t)t->rank;
        p->dtype = (uint8_t)pld_abi_dtype_code(t->dt);
        return;
    }
    if (v->kind == PLD_V_CTX) {
        /* a CommCtx scalar is the address of the CommContext (kernel ABI) */
        a->bits = (uint64_t)(uintptr_t)comm_ctx_of(it, v->u.i);
        a->dt = PLD_DT_UINT64;
        p->kind = PLD_BE_P_COMM_CTX;
    } else if (v->kind == PLD_V_FLOAT) {
        double d = v->u.f;
        memcpy(&a->bits, &d, sizeof d);
        a->dt = v->dt;
    } else {
        a->bits = (uint64_t)v->u.i;
        a->dt = v->dt;
    }
    p->dtype = (uint8_t)pld_abi_dtype_code(a->dt);
}

/* Argument i of la: value v bound to parameter `pname` (declared type pt, or
 * NULL for a scope's capture). */
/* The direction of a parameter of declared type t (NULL: a scope's capture). */
static uint8_t be_dir(const pld_type_t *t)
{
    return !t ? PLD_BE_DIR_UNKNOWN
           : t->dir == PLD_DIR_OUT ? PLD_BE_DIR_OUT
           : t->dir == PLD_DIR_INOUT ? PLD_BE_DIR_INOUT : PLD_BE_DIR_IN;
}

static void args_set(const pld_interp_t *it, launch_args_t *la, int i, const pld_value_t *v, const char *pname,
                     const pld_type_t *pt)
{
    pld_be_param_t *p = &la->p[i];
    la->v[i] = v;
    memset(p, 0, sizeof *p);
    p->name = pname;
    p->dir = be_dir(pt);
    pld_call_hw_arg(it, v, &la->a[i], p);
}

/* The core type of a kernel function for a backend. */
static uint32_t core_of(const pld_func_t *fn)
{
    return fn->ftype == PLD_FT_AIC ? PLD_BE_CORE_AIC : fn->ftype == PLD_FT_GROUP ? PLD_BE_CORE_MIX : PLD_BE_CORE_AIV;
}

/* Launches call c (a kernel, a scope or a grid) through the backend as task
 * tid (0: the next TaskId); `what` names it in reports. */
static pld_status_t do_launch(pld_interp_t *it, frame_t *caller, pld_span_t sp, const char *what, pld_sim_call_t *c,
                              launch_args_t *la, int fidx, int blocks, int sync_start, int64_t tid)
{
    pld_hw_launch_t l;
    memset(&l, 0, sizeof l);
    l.kernel = la->desc.name;
    l.func_index = fidx;
    l.nargs = (int)la->desc.nparams;
    l.args = la->a;
    l.desc = &la->desc;
    l.block_num = blocks;
    l.sync_start = sync_start;
    l.timeout_ms = pld_call_timeout_ms(it);
    l.host_state = c;
    l.err = it->errbuf;
    l.errn = sizeof it->errbuf;
    it->errbuf[0] = '\0';
    int64_t saved;
    pld_task_begin(it, tid, &saved);
    pld_ev_t ev;
    if (it->trace) {
        pld_tr_init(caller, sp, &ev, PLD_EV_TASK, what);
        ev.count = blocks;
        pld_trace_begin(it->trace, &ev);
    }
    pld_status_t st = pld_hw_launch(it->hw, &l);
    if (it->trace) {
        ev.failed = st != PLD_OK;
        pld_trace_end(it->trace, &ev);
    }
    if (st == PLD_OK && !c->ran) {
        /* another backend ran it: every tensor it may write is this rank's
         * result (the interpreter marks exact boxes when it runs a kernel) */
        for (uint32_t i = 0; i < la->desc.nparams; i++)
            if (la->a[i].is_tensor && la->p[i].dir != PLD_BE_DIR_IN) {
                const pld_tensor_t *t = pld_v_tensor(la->v[i]);
                const int64_t zero[PLD_MAX_RANK] = {0};
                pld_tensor_mark_written(t, zero, t->shape);
            }
    }
    if (pld_task_end(it, caller, sp, what, saved, st == PLD_OK) != PLD_OK && st == PLD_OK)
        st = PLD_E_RUNTIME;
    if (st != PLD_OK && !it->failed)
        pld_rt_error(it, caller, sp, "kernel backend '%s' failed to run %s: %s", pld_hw_name(it->hw), what,
                     it->errbuf[0] ? it->errbuf : pld_status_name(st));
    return st;
}

static pld_status_t scope_args(pld_interp_t *it, frame_t *f, const pld_stmt_t *s, const pld_expr_t *item,
                               launch_args_t *la);
static pld_status_t eval_deps(pld_interp_t *it, frame_t *f, const pld_expr_t *call, int64_t *deps, int *n);

/* predicate= of task launch `call` (PyPTO's dispatch predicate), evaluated at
 * the dispatch point: after the task's deps complete. *run = 0 when it is
 * false. */
static pld_status_t dispatch_predicate(pld_interp_t *it, frame_t *f, const pld_expr_t *call, int *run)
{
    const pld_expr_t *p = call->op == PLD_OPID_PL_SPLIT_AIV ? NULL : pld_walk_kwarg(call, "predicate");
    int64_t v = 1;
    *run = 1;
    if (p && pld_eval_i64(it, f, p, &v) != PLD_OK)
        return PLD_E_RUNTIME;
    *run = v != 0;
    return PLD_OK;
}

/* A task whose predicate is false is retired without running (PyPTO: retired
 * inline, never dispatched to a core): it takes TaskId tid (0: the next one),
 * complete at once, so its fanout settles: a task with deps= on it proceeds,
 * ordered after this task's own deps (--check-races). */
static pld_status_t skip_task(pld_interp_t *it, frame_t *f, const pld_expr_t *call, pld_span_t sp, const char *what,
                              int64_t tid)
{
    int64_t saved, deps[PLD_MAX_DEPS];
    int ndeps;
    tid = pld_task_begin(it, tid, &saved);
    if (it->race && eval_deps(it, f, call, deps, &ndeps) == PLD_OK)
        pld_race_task_deps(it, f, tid, deps, ndeps);
    return pld_task_end(it, f, sp, what, saved, 1);
}


/* Runs `body` (of statement s) as an SPMD grid of n blocks, as task tid (0:
 * the next TaskId). A pl.spmd grid is a launch through the backend, its
 * captured values as the arguments (on sim: coroutines of this rank); the
 * AIV lanes of pl.split_aiv run inside their kernel. */
int pld_walk_spmd(pld_interp_t *it, frame_t *f, const pld_stmt_t *s, const pld_expr_t *item, const pld_block_t *body,
                  const pld_expr_t *loopvar, int64_t n, int64_t tid)
{
    const pld_expr_t *ss = pld_walk_kwarg(item, "sync_start");
    const int sync_start = ss && ss->kind == PLD_EX_BOOL && ss->u.bval;
    int limit = pld_npu_profile_or_default(it->opts.platform)->aiv_cores;
    if (n < 0) {
        pld_rt_error(it, f, item->span, "pl.spmd needs a non-negative block count, found %lld", (long long)n);
        return FLOW_ERROR;
    }
    if (sync_start && n > limit) {
        pld_rt_error(it, f, item->span, "a sync-start launch of %lld blocks cannot be admitted: the platform has %d AIV "
                                        "cores (all blocks must be resident together)",
                     (long long)n, limit);
        return FLOW_ERROR;
    }
    int run;
    if (dispatch_predicate(it, f, item, &run) != PLD_OK)
        return FLOW_ERROR;
    if (!run)
        return skip_task(it, f, item, item->span, "pl.spmd", tid) == PLD_OK ? FLOW_NORMAL : FLOW_ERROR;
    spmd_ctx_t c = {it, f, body, loopvar, item->op == PLD_OPID_PL_SPLIT_AIV, {0, {{0}}}};
    pld_status_t st;
    if (c.split_aiv) {
        const pld_expr_t *m = pld_walk_kwarg(item, "mode");
        const char *mm = m && m->kind == PLD_EX_ATTR ? m->u.attr.attr : "";
        c.lanes.split = strcmp(mm, "UP_DOWN") == 0 ? 1 : strcmp(mm, "LEFT_RIGHT") == 0 ? 2 : 0;
        c.lanes.v[0] = c.lanes.v[1] = pld_v_none();
        int64_t saved;
        pld_task_begin(it, tid, &saved);
        pld_ev_t ev;
        if (it->trace) {
            pld_tr_init(f, item->span, &ev, PLD_EV_TASK, "pl.split_aiv");
            ev.count = n;
            pld_trace_begin(it->trace, &ev);
        }
        st = pld_npu_run_blocks(it->sched, (int)n, it->opts.block_stack_bytes, spmd_block, &c);
        if (it->race)
            pld_race_join(it, f);
        if (it->trace) {
            ev.failed = st != PLD_OK;
            pld_trace_end(it->trace, &ev);
        }
        if (st != PLD_OK && !it->failed)
            pld_rt_error(it, f, item->span, "SPMD grid of %lld blocks failed: %s", (long long)n, pld_status_name(st));
        if (pld_task_end(it, f, item->span, "pl.split_aiv", saved, st == PLD_OK) != PLD_OK)
            st = PLD_E_RUNTIME;
        return st == PLD_OK ? FLOW_NORMAL : FLOW_ERROR;
    }
    launch_args_t *la = pld_mem_alloc(sizeof *la);
    if (!la || scope_args(it, f, s, item, la) != PLD_OK) {
        if (!la)
            pld_rt_error(it, f, item->span, "out of memory");
        pld_mem_free(la);
        return FLOW_ERROR;
    }
    pld_sim_call_t call = {.it = it, .caller = f, .span = item->span, .blocks = (int)n, .grid = &c, .stmt = s};
    st = do_launch(it, f, item->span, "pl.spmd", &call, la, -1, (int)n, sync_start, tid);
    args_fini(la);
    pld_mem_free(la);
    return st == PLD_OK ? FLOW_NORMAL : FLOW_ERROR;
}

static pld_status_t launch_scope(pld_interp_t *it, frame_t *f, const pld_stmt_t *s, int64_t tid, int *flow);
static void scope_name(const pld_stmt_t *s, const pld_expr_t *item, char *name, size_t n);
static const char *name_hint(const pld_expr_t *item);

/* 1 when with-item `item` launches a kernel task in context ctx
 * (pl.at(CORE_GROUP) outside a kernel, or pl.spmd). */
static int is_task_item(int ctx, const pld_expr_t *item)
{
    if (item->op == PLD_OPID_PL_SPMD)
        return 1;
    if (item->op != PLD_OPID_PL_AT || ctx == PLD_CTX_KERNEL)
        return 0;
    const pld_expr_t *lv = pld_walk_kwarg(item, "level");
    if (!lv && item->u.call.nargs > 0 && !item->u.call.args[0].kw)
        lv = item->u.call.args[0].value;
    char b[128];
    return lv && pld_ast_dotted(lv, b, sizeof b) &&
           (strstr(b, "CORE_GROUP") || strstr(b, "AIV") || strstr(b, "AIC") || strstr(b, "CHIP_DIE"));
}

/* The same for with-statement item `item` run in frame f. */
static int is_task_scope(const frame_t *f, const pld_expr_t *item)
{
    return is_task_item(f->ctx, item);
}

/* Evaluates deps=[...] of a task launch (*n = 0 without one). */
static pld_status_t eval_deps(pld_interp_t *it, frame_t *f, const pld_expr_t *call, int64_t *deps, int *n)
{
    return pld_eval_deps(it, f, pld_walk_kwarg(call, "deps"), deps, n);
}

static void bind_task_id(frame_t *f, const pld_stmt_t *s, int64_t tid)
{
    if (!s->u.with.as_name)
        return;
    for (int i = 0; f->fn && i < f->fn->nslots; i++)
        if (f->fn->slot_names[i] == s->u.with.as_name) {
            pld_value_t v = pld_v_int(PLD_DT_TASK_ID, tid);
            pld_value_set(&f->slots[i], &v);
            return;
        }
}

int pld_walk_with(pld_interp_t *it, frame_t *f, const pld_stmt_t *s)
{
    const pld_expr_t *item = s->u.with.item;
    int flow;
    if (item->op >= 0 && item->op < PLD_OPID__COUNT)
        it->ops_seen[item->op] = 1;
    const int task = is_task_scope(f, item);
    if (task) {
        /* a task: ready now, or queued until its deps complete */
        int64_t deps[PLD_MAX_DEPS];
        int ndeps;
        if (eval_deps(it, f, item, deps, &ndeps) != PLD_OK || pld_task_progress(it) != PLD_OK)
            return FLOW_ERROR;
        for (int i = 0; i < ndeps; i++)
            if (!pld_task_complete(it, deps[i])) {
                int64_t tid = (int64_t)++it->stats.tasks;
                if (pld_task_queue(it, f, s, name_hint(item), tid, deps, ndeps) != PLD_OK)
                    return FLOW_ERROR;
                if (it->race)
                    pld_race_task_issue(it, f, tid);
                bind_task_id(f, s, tid);
                return FLOW_NORMAL;
            }
        if (it->race && it->manual_scope)
            pld_race_task_detach(it, f, 0); /* ordered by deps= only */
        if (it->race && ndeps > 0)
            pld_race_task_deps(it, f, 0, deps, ndeps); /* ready now: it starts after its deps */
    }
    if (item->op == PLD_OPID_PL_AT && f->ctx != PLD_CTX_KERNEL) {
        if (task) {
            if (launch_scope(it, f, s, 0, &flow) != PLD_OK)
                return FLOW_ERROR;
        } else {
            const pld_expr_t *lv = pld_walk_kwarg(item, "level");
            if (!lv && item->u.call.nargs > 0 && !item->u.call.args[0].kw)
                lv = item->u.call.args[0].value;
            char b[128];
            int saved = f->ctx;
            if (lv && pld_ast_dotted(lv, b, sizeof b) && strstr(b, "CHIP"))
                f->ctx = PLD_CTX_CHIP;
            flow = pld_walk_block(it, f, &s->u.with.body);
            f->ctx = saved;
        }
    } else if (item->op == PLD_OPID_PL_SPMD) {
        int64_t n;
        if (pld_eval_i64(it, f, item->u.call.args[0].value, &n) != PLD_OK)
            return FLOW_ERROR;
        flow = pld_walk_spmd(it, f, s, item, &s->u.with.body, NULL, n, 0);
    } else if (item->op == PLD_OPID_PL_MANUAL_SCOPE && f->ctx != PLD_CTX_KERNEL) {
        const int64_t first = (int64_t)it->stats.tasks;
        it->manual_scope++;
        flow = pld_walk_block(it, f, &s->u.with.body);
        it->manual_scope--;
        /* the scope's tasks that have completed: the orchestration continues after them */
        for (int64_t tid = first + 1; it->race && tid <= (int64_t)it->stats.tasks; tid++)
            if (pld_task_complete(it, tid))
                pld_race_task_deps(it, f, 0, &tid, 1);
    } else {
        flow = pld_walk_block(it, f, &s->u.with.body);
    }
    if (flow != FLOW_ERROR)
        bind_task_id(f, s, (int64_t)it->stats.tasks);
    return flow;
}

/* Runs queued with-statement s (a pl.at(CORE_GROUP) scope or pl.spmd grid)
 * as task tid in frame f (pld_task.c, through it->walk, when the task's deps
 * complete). */
static pld_status_t run_queued(pld_interp_t *it, frame_t *f, const pld_stmt_t *s, int64_t tid)
{
    int flow;
    const pld_expr_t *item = s->u.with.item;
    if (item->op == PLD_OPID_PL_SPMD) {
        int64_t n;
        flow = pld_eval_i64(it, f, item->u.call.args[0].value, &n) != PLD_OK
                   ? FLOW_ERROR
                   : pld_walk_spmd(it, f, s, item, &s->u.with.body, NULL, n, tid);
    } else if (launch_scope(it, f, s, tid, &flow) != PLD_OK) {
        flow = FLOW_ERROR;
    }
    return flow == FLOW_ERROR ? PLD_E_RUNTIME : PLD_OK;
}

/* ------------------------------------------------------------ calls */

void pld_walk_frame_init(frame_t *f, frame_t *parent, const pld_func_t *fn, pld_value_t *slots, int ctx, pld_span_t sp)
{
    memset(f, 0, sizeof *f);
    f->parent = parent;
    f->fn = fn;
    f->slots = slots;
    f->nslots = fn ? fn->nslots : 0;
    f->ctx = ctx;
    f->call_span = sp;
    f->block_num = 1;
    f->ckernel = parent ? parent->ckernel : 0;
}

/* Binds argument values to the parameters of fn in a fresh frame, checking
 * tensor shapes against the declarations (binding dynamic dims on first use),
 * then runs the body. Takes no ownership of args. */
pld_status_t pld_walk_function(pld_interp_t *it, frame_t *caller, const pld_func_t *fn, const pld_value_t *args,
                                 int ctx, pld_span_t call_span, pld_value_t *result)
{
    const int depth = caller ? caller->depth + 1 : 1;
    if (depth > MAX_DEPTH)
        return pld_rt_error(it, caller, call_span, "call depth limit (%d) exceeded (recursion?)", MAX_DEPTH);
    if (pld_stack_check(it, caller, call_span) != PLD_OK)
        return PLD_E_RUNTIME;
    pld_value_t *slots = pld_mem_calloc((size_t)(fn->nslots > 0 ? fn->nslots : 1), sizeof *slots);
    if (!slots)
        return pld_rt_error(it, caller, call_span, "out of memory");
    frame_t f;
    pld_walk_frame_init(&f, caller, fn, slots, ctx, call_span);
    f.depth = depth;
    if (caller) {
        f.block_idx = caller->block_idx;
        f.block_num = caller->block_num;
        f.subblock_idx = caller->subblock_idx;
        f.xg = caller->xg;
        f.xcore = caller->xcore;
        f.lanes = caller->lanes;
    }
    pld_status_t st = PLD_OK;
    for (int i = 0; i < fn->nparams && st == PLD_OK; i++) {
        const pld_param_t *pp = &fn->params[i];
        const pld_value_t *a = &args[i];
        const pld_type_t *pt = pp->type;
        pld_value_t v = *a;
        pld_value_retain(&v);
        if (pt && (pt->kind == PLD_TY_TENSOR || pt->kind == PLD_TY_DTENSOR) && a->kind == PLD_V_TENSOR) {
            pld_tensor_t *t = pld_v_tensor(a);
            int64_t want[PLD_MAX_RANK];
            int ok = pt->rank <= PLD_MAX_RANK;
            for (int d = 0; d < pt->rank && ok; d++) {
                const pld_dim_t *dd = &pt->shape[d];
                int64_t w;
                if (dd->kind == PLD_DIM_SYM && !pld_dyn_get(it, dd->sym, &w) &&
                    !(dd->expr && dd->expr->slot >= 0)) {
                    int known_const = 0;
                    for (int c = 0; c < it->p->nconsts; c++)
                        if (it->p->consts[c].name == dd->sym && !it->const_is_dyn[c])
                            known_const = 1;
                    if (!known_const && t->rank == pt->rank) {
                        pld_dyn_set(it, dd->sym, t->shape[d]);
                        want[d] = t->shape[d];
                        continue;
                    }
                }
                if (pld_eval_dim(it, caller, dd, &want[d], call_span) != PLD_OK)
                    st = PLD_E_RUNTIME, ok = 0;
            }
            if (ok) {
                int same = t->rank == pt->rank;
                int64_t n1 = 1, n2 = 1;
                for (int d = 0; d < pt->rank; d++)
                    n2 *= want[d];
                for (int d = 0; d < t->rank; d++)
                    n1 *= t->shape[d];
                for (int d = 0; same && d < pt->rank; d++)
                    same = want[d] == t->shape[d];
                if (!same) {
                    /* the same bytes viewed with the parameter's shape (a [64] window
                     * view passed as [1, 64]) */
                    int packed = 1;
                    pld_view_t kv;
                    pld_tensor_kview(t, &kv);
                    packed = pld_view_is_packed(&kv);
                    if (n1 == n2 && packed) {
                        pld_tensor_t *r = pld_tensor_view(t->buf, t->dt, pt->rank, want, t->offset);
                        if (!r)
                            st = pld_rt_error(it, caller, call_span, "out of memory");
                        else {
                            r->is_dist = t->is_dist;
                            r->winbuf = t->winbuf;
                            pld_value_release(&v);
                            v = pld_v_obj(&r->hdr, t->dt);
                        }
                    } else {
                        char got[128] = "[", exp[128] = "[";
                        for (int d = 0; d < t->rank; d++)
                            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", d ? ", " : "",
                                     (long long)t->shape[d]);
                        for (int d = 0; d < pt->rank; d++)
                            snprintf(exp + strlen(exp), sizeof exp - strlen(exp), "%s%lld", d ? ", " : "",
                                     (long long)want[d]);
                        st = pld_rt_error(it, caller, call_span,
                                          "argument '%s' of %s has shape %s], but the parameter is declared %s]",
                                          pp->name, fn->name, got, exp);
                    }
                }
            }
            if (st == PLD_OK && t->dt != pt->dtype)
                st = pld_rt_error(it, caller, call_span, "argument '%s' of %s has dtype %s, declared %s", pp->name,
                                  fn->name, pld_dtype_name(t->dt), pld_dtype_name(pt->dtype));
        } else if (pt && pt->kind == PLD_TY_SCALAR && pld_v_is_scalar(a)) {
            pld_value_t c = pld_v_convert(a, pt->dtype);
            pld_value_release(&v);
            v = c;
        }
        if (pp->slot >= 0 && pp->slot < f.nslots)
            f.slots[pp->slot] = v;
        else
            pld_value_release(&v);
    }
    if (st == PLD_OK) {
        int flow = fn->ftype == PLD_FT_GROUP && ctx == PLD_CTX_KERNEL ? pld_xcore_group(it, &f, &fn->body)
                                                                       : pld_walk_block(it, &f, &fn->body);
        if (flow == FLOW_ERROR)
            st = PLD_E_RUNTIME;
        else if (flow == FLOW_BREAK || flow == FLOW_CONTINUE)
            st = pld_rt_error(it, &f, fn->name_span, "'break'/'continue' escaped function %s", fn->name);
        /* an orchestration function ends when every task it issued completed
         * (deferred waiters and the scopes queued on them run here) */
        if (st == PLD_OK && ctx != PLD_CTX_KERNEL && it->ntasks > 0)
            st = pld_task_drain(it, &f);
    }
    if (st == PLD_OK && result) {
        *result = f.ret;
        f.ret = pld_v_none();
    }
    pld_value_release(&f.ret);
    for (int i = 0; i < f.nslots; i++)
        pld_value_release(&slots[i]);
    pld_mem_free(slots);
    return st;
}

/* The kernel scopes of block b of function fn, outside a kernel: the
 * pl.at(CORE_GROUP) bodies and pl.spmd grids that launch through the backend
 * (pld_walk_with, pld_walk_spmd); counted in *n, stored in out[] when given. */
typedef struct load_scope {
    const pld_func_t *fn;
    const pld_stmt_t *s;
    const pld_expr_t *item;
} load_scope_t;

static void find_scopes(const pld_func_t *fn, const pld_block_t *b, load_scope_t *out, int *n)
{
    for (int i = 0; i < b->n; i++) {
        const pld_stmt_t *s = b->stmts[i];
        const pld_expr_t *item = s->kind == PLD_ST_WITH ? s->u.with.item
                                 : s->kind == PLD_ST_FOR && s->u.for_.iter->kind == PLD_EX_CALL ? s->u.for_.iter
                                                                                                 : NULL;
        if (item && (item->op == PLD_OPID_PL_SPMD || (s->kind == PLD_ST_WITH && is_task_item(PLD_CTX_HOST, item)))) {
            if (out)
                out[*n] = (load_scope_t){fn, s, item};
            (*n)++;
            continue;
        }
        if (item && item->op == PLD_OPID_PL_SPLIT_AIV)
            continue;
        if (s->kind == PLD_ST_IF) {
            find_scopes(fn, &s->u.if_.then, out, n);
            find_scopes(fn, &s->u.if_.els, out, n);
        } else if (s->kind == PLD_ST_WHILE) {
            find_scopes(fn, &s->u.while_.body, out, n);
        } else if (s->kind == PLD_ST_FOR) {
            find_scopes(fn, &s->u.for_.body, out, n);
        } else if (s->kind == PLD_ST_WITH) {
            find_scopes(fn, &s->u.with.body, out, n);
        }
    }
}

/* The kernels of the program as a backend sees them (pld_hw_load): every
 * kernel-level function with its declared parameters and, for a backend that
 * compiles kernels, every kernel scope (its captures named, their kinds known
 * at launch), so each is compiled at load, before anything runs. */
pld_status_t pld_walk_load_kernels(pld_interp_t *it, char *err, size_t errn)
{
    int nk = 0, np = 0, nsc = 0;
    const int scopes = (pld_hw_caps(it->hw) & PLD_BE_CAP_C_KERNELS) != 0;
    for (int i = 0; i < it->p->nfuncs; i++)
        if (pld_check_func_ctx(it->p->funcs[i]) == PLD_CTX_KERNEL) {
            nk++;
            np += it->p->funcs[i]->nparams;
        } else if (scopes) {
            find_scopes(it->p->funcs[i], &it->p->funcs[i]->body, NULL, &nsc);
        }
    load_scope_t *sc = pld_mem_calloc((size_t)(nsc ? nsc : 1), sizeof *sc);
    for (int i = 0, j = 0; sc && scopes && i < it->p->nfuncs; i++)
        if (pld_check_func_ctx(it->p->funcs[i]) != PLD_CTX_KERNEL)
            find_scopes(it->p->funcs[i], &it->p->funcs[i]->body, sc, &j);
    for (int i = 0; sc && i < nsc; i++)
        np += sc[i].s->captures ? sc[i].s->ncaptures : 0;
    const int nd = nk + nsc;
    pld_be_kernel_desc_t *ks = pld_mem_calloc((size_t)(nd ? nd : 1), sizeof *ks);
    pld_be_param_t *ps = pld_mem_calloc((size_t)(np ? np : 1), sizeof *ps);
    char(*fa)[192] = pld_mem_calloc((size_t)(nd ? nd : 1), sizeof *fa);
    char(*names)[64] = pld_mem_calloc((size_t)(nsc ? nsc : 1), sizeof *names);
    if (!ks || !ps || !fa || !sc || !names) {
        pld_mem_free(names);
        pld_mem_free(sc);
        pld_mem_free(fa);
        pld_mem_free(ks);
        pld_mem_free(ps);
        snprintf(err, errn, "out of memory");
        return PLD_E_NOMEM;
    }
    int k = 0, q = 0;
    pld_crt_gen(it);
    for (int i = 0; i < it->p->nfuncs; i++) {
        const pld_func_t *fn = it->p->funcs[i];
        if (pld_check_func_ctx(fn) != PLD_CTX_KERNEL)
            continue;
        ks[k] = (pld_be_kernel_desc_t){sizeof ks[k], fn->name, it->p->file, (int)fn->name_span.line, core_of(fn),
                                       (uint32_t)fn->nparams, &ps[q], NULL, NULL, NULL, NULL, 0, NULL};
        pld_crt_describe(it, i, &ks[k]);
        describe_features(it, &fn->body, &ks[k], fa[k], sizeof fa[k]);
        for (int j = 0; j < fn->nparams; j++, q++) {
            const pld_type_t *t = fn->params[j].type;
            pld_be_param_t *p = &ps[q];
            p->name = fn->params[j].name;
            p->dir = be_dir(t);
            p->kind = !t ? PLD_BE_P_SCALAR
                      : t->kind == PLD_TY_TENSOR || t->kind == PLD_TY_DTENSOR ? PLD_BE_P_TENSOR
                      : t->kind == PLD_TY_COMMCTX ? PLD_BE_P_COMM_CTX : PLD_BE_P_SCALAR;
            p->window = t && t->kind == PLD_TY_DTENSOR;
            p->rank = t && p->kind == PLD_BE_P_TENSOR ? (uint32_t)t->rank : 0;
            p->dtype = (uint8_t)(p->kind == PLD_BE_P_COMM_CTX ? pld_abi_dtype_code(PLD_DT_UINT64)
                                                              : t ? pld_abi_dtype_code(t->dtype) : -1);
        }
        k++;
    }
    /* the scopes' code first (pld_crt_describe_scope grows it->cgen_scopes),
     * then their descriptions, which point into it */
    pld_be_kernel_desc_t tmp;
    for (int i = 0; i < nsc; i++)
        pld_crt_describe_scope(it, sc[i].fn, sc[i].s, &tmp);
    for (int i = 0; i < nsc; i++, k++) {
        const pld_stmt_t *s = sc[i].s;
        const int nc = s->captures ? s->ncaptures : 0;
        scope_name(s, sc[i].item, names[i], sizeof names[i]);
        ks[k] = (pld_be_kernel_desc_t){sizeof ks[k], names[i], it->p->file, (int)s->span.line, PLD_BE_CORE_AIV,
                                       (uint32_t)nc, &ps[q], NULL, NULL, NULL, NULL, 0, NULL};
        pld_crt_describe_scope(it, sc[i].fn, s, &ks[k]);
        describe_features(it, s->kind == PLD_ST_FOR ? &s->u.for_.body : &s->u.with.body, &ks[k], fa[k],
                          sizeof fa[k]);
        for (int j = 0; j < nc; j++, q++) {
            ps[q].name = sc[i].fn->slot_names[s->captures[j]];
            ps[q].dir = be_dir(NULL);
        }
    }
    pld_hw_program_t prog = {it->p->file, nd, ks};
    pld_status_t st = pld_hw_load(it->hw, &prog, err, errn);
    pld_mem_free(names);
    pld_mem_free(sc);
    pld_mem_free(ks);
    pld_mem_free(ps);
    pld_mem_free(fa);
    return st;
}

/* What a kernel run by another backend returns: the parameter its final
 * `return` names (PyPTO kernels return the tensors they write), or None. */
static pld_status_t external_result(pld_interp_t *it, frame_t *caller, const pld_func_t *fn, const pld_value_t *args,
                                    pld_span_t sp, pld_value_t *result)
{
    const pld_stmt_t *last = fn->body.n ? fn->body.stmts[fn->body.n - 1] : NULL;
    if (!last || last->kind != PLD_ST_RETURN || last->u.ret.n == 0) {
        *result = pld_v_none();
        return PLD_OK;
    }
    if (last->u.ret.n == 1 && last->u.ret.vals[0]->kind == PLD_EX_NAME)
        for (int i = 0; i < fn->nparams; i++)
            if (fn->params[i].name == last->u.ret.vals[0]->u.name) {
                *result = args[i];
                pld_value_retain(result);
                return PLD_OK;
            }
    return pld_rt_error(it, caller, sp,
                        "kernel %s ran on backend '%s', but it returns a value that is not one of its parameters; "
                        "only the sim backend can return it",
                        fn->name, pld_hw_name(it->hw));
}

static pld_status_t launch_kernel(pld_interp_t *it, frame_t *caller, const pld_func_t *fn, int fidx, pld_value_t *args,
                                  pld_span_t sp, int blocks, int sync_start, pld_value_t *result)
{
    launch_args_t la;
    if (args_init(it, &la, fn->nparams, fn->name, fn->name_span.line, core_of(fn)) != PLD_OK)
        return pld_rt_error(it, caller, sp, "out of memory");
    for (int i = 0; i < fn->nparams; i++)
        args_set(it, &la, i, &args[i], fn->params[i].name, fn->params[i].type);
    pld_crt_describe(it, fidx, &la.desc);
    describe_features(it, &fn->body, &la.desc, la.feature_at, sizeof la.feature_at);
    pld_sim_call_t call = {.it = it, .caller = caller, .fn = fn, .args = args, .span = sp, .blocks = blocks};
    pld_status_t st = do_launch(it, caller, sp, fn->name, &call, &la, fidx, blocks, sync_start, 0);
    args_fini(&la);
    if (st == PLD_OK && !call.ran && !call.result_set)
        st = external_result(it, caller, fn, args, sp, &call.result);
    if (st != PLD_OK) {
        pld_value_release(&call.result);
        return st;
    }
    *result = call.result;
    return PLD_OK;
}

/* The name_hint of a pl.at / pl.spmd item, for reports. */
static const char *name_hint(const pld_expr_t *item)
{
    const pld_expr_t *h = pld_walk_kwarg(item, "name_hint");
    return h && h->kind == PLD_EX_STR ? h->u.str.s : item->op == PLD_OPID_PL_SPMD ? "pl.spmd" : "pl.at scope";
}

/* The kernel name of scope s (with-item or loop iterator `item`): its
 * name_hint, else pl.at@LINE / pl.spmd@LINE. */
static void scope_name(const pld_stmt_t *s, const pld_expr_t *item, char *name, size_t n)
{
    const pld_expr_t *h = pld_walk_kwarg(item, "name_hint");
    if (h && h->kind == PLD_EX_STR)
        snprintf(name, n, "%s", h->u.str.s);
    else
        snprintf(name, n, "%s@%d", item->op == PLD_OPID_PL_SPMD ? "pl.spmd" : "pl.at", s->span.line);
}

/* The launch arguments of kernel scope s (a pl.at body or a pl.spmd grid):
 * the values it captures (pld_stmt_t.captures), named after their slots. */
static pld_status_t scope_args(pld_interp_t *it, frame_t *f, const pld_stmt_t *s, const pld_expr_t *item,
                               launch_args_t *la)
{
    char name[64];
    scope_name(s, item, name, sizeof name);
    const int n = s->captures ? s->ncaptures : 0;
    if (args_init(it, la, n, name, s->span.line, PLD_BE_CORE_AIV) != PLD_OK)
        return pld_rt_error(it, f, s->span, "out of memory");
    for (int i = 0; i < n; i++) {
        const int slot = s->captures[i];
        args_set(it, la, i, &f->slots[slot], f->fn ? f->fn->slot_names[slot] : "?", NULL);
    }
    pld_crt_describe_scope(it, f->fn, s, &la->desc);
    describe_features(it, s->kind == PLD_ST_FOR ? &s->u.for_.body : &s->u.with.body, &la->desc, la->feature_at,
                      sizeof la->feature_at);
    return PLD_OK;
}

/* Launches the body of pl.at(CORE_GROUP) statement s as task tid (0: the next
 * TaskId), its captured values as the arguments. */
static pld_status_t launch_scope(pld_interp_t *it, frame_t *f, const pld_stmt_t *s, int64_t tid, int *flow)
{
    launch_args_t la;
    if (scope_args(it, f, s, s->u.with.item, &la) != PLD_OK)
        return PLD_E_RUNTIME;
    pld_sim_call_t call = {.it = it, .caller = f, .scope = &s->u.with.body, .span = s->span, .flow = FLOW_NORMAL,
                           .stmt = s};
    pld_status_t st = it->opts.dump ? pld_dump_launch(it, f, s->u.with.item, NULL, 0, 0) : PLD_OK;
    if (st == PLD_OK)
        st = do_launch(it, f, s->span, name_hint(s->u.with.item), &call, &la, -1, 1, 0, tid);
    if (st == PLD_OK && it->opts.dump)
        st = pld_dump_launch(it, f, s->u.with.item, NULL, 0, 1);
    args_fini(&la);
    if (st != PLD_OK)
        return PLD_E_RUNTIME;
    *flow = call.flow;
    return PLD_OK;
}

static pld_status_t kernel_block(void *arg, int b, int n)
{
    pld_sim_call_t *c = arg;
    frame_t caller = *c->caller; /* carries the block position into the kernel frame */
    caller.block_idx = b;
    caller.block_num = n;
    if (c->it->race) {
        frame_t kf = caller; /* the kernel's frame, as pld_walk_function makes it */
        kf.ctx = PLD_CTX_KERNEL;
        pld_race_fork(c->it, c->caller, &kf);
    }
    pld_value_t r = pld_v_none();
    pld_ev_t ev;
    if (c->it->trace) {
        pld_tr_init(&caller, c->fn->name_span, &ev, PLD_EV_BLOCK, c->fn->name);
        ev.func = c->fn->name;
        pld_trace_begin(c->it->trace, &ev);
    }
    pld_status_t st = pld_walk_function(c->it, &caller, c->fn, c->args, PLD_CTX_KERNEL, c->span, &r);
    if (c->it->trace) {
        ev.failed = st != PLD_OK;
        pld_trace_end(c->it->trace, &ev);
    }
    if (st == PLD_OK && b == 0) {
        pld_value_release(&c->result);
        c->result = r; /* block 0's return value is the task's result */
    } else {
        pld_value_release(&r);
    }
    return st;
}

pld_status_t pld_interp_run_kernel(pld_sim_call_t *c)
{
    c->ran = 1;
    if (c->builtin) /* a builtin collective kernel: the interpreter's collective code */
        return pld_builtin_run_sim(c);
    pld_interp_t *it = c->it;
    pld_status_t st;
    if (c->grid) {
        st = pld_npu_run_blocks(it->sched, c->blocks, it->opts.block_stack_bytes, spmd_block, c->grid);
    } else if (c->fn && c->blocks > 1) {
        st = pld_npu_run_blocks(it->sched, c->blocks, it->opts.block_stack_bytes, kernel_block, c);
    } else if (c->fn) {
        if (it->race) {
            frame_t kf = *c->caller; /* the kernel's frame, as pld_walk_function makes it */
            kf.ctx = PLD_CTX_KERNEL;
            pld_race_fork(it, c->caller, &kf);
        }
        st = pld_walk_function(it, c->caller, c->fn, c->args, PLD_CTX_KERNEL, c->span, &c->result);
    } else {
        frame_t *f = c->caller;
        int saved = f->ctx, saved_scope = f->in_kernel_scope;
        if (it->race) {
            frame_t kf = *f;
            kf.ctx = PLD_CTX_KERNEL;
            pld_race_fork(it, f, &kf);
        }
        f->ctx = PLD_CTX_KERNEL;
        f->in_kernel_scope = 1;
        c->flow = pld_walk_block(it, f, c->scope);
        f->ctx = saved;
        f->in_kernel_scope = saved_scope;
        st = c->flow == FLOW_ERROR ? PLD_E_RUNTIME : PLD_OK;
    }
    if (it->race)
        pld_race_join(it, c->caller); /* the launch is synchronous: the launcher continues after its blocks */
    return st;
}

/* A kernel call / submit with deps=[...]: its results are needed at once, so
 * it waits in place for deps that are still incomplete (deferred tasks). */
static pld_status_t gate_deps(pld_interp_t *it, frame_t *f, const pld_expr_t *call)
{
    int64_t deps[PLD_MAX_DEPS];
    int ndeps;
    if (eval_deps(it, f, call, deps, &ndeps) != PLD_OK || pld_task_progress(it) != PLD_OK)
        return PLD_E_RUNTIME;
    pld_status_t st = ndeps > 0 ? pld_task_wait_deps(it, f, call->span, deps, ndeps) : PLD_OK;
    if (st == PLD_OK && it->race && it->manual_scope) { /* ordered by deps= only */
        pld_race_task_detach(it, f, 0);
        pld_race_task_deps(it, f, 0, deps, ndeps);
    }
    return st;
}

/* self.f(...): runs f here, launches it as a kernel task, or (HOST -> CHIP)
 * dispatches it to its device (device=, or round-robin). */
/* Evaluates the positional arguments of call e from argument `first` on
 * into *out (owned: release each and free with free_args). */
static pld_status_t eval_args(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int first, pld_value_t **out, int *n)
{
    *n = 0;
    *out = pld_mem_calloc((size_t)(e->u.call.nargs > 0 ? e->u.call.nargs : 1), sizeof **out);
    if (!*out)
        return pld_rt_error(it, f, e->span, "out of memory");
    for (int i = first; i < e->u.call.nargs; i++) {
        if (e->u.call.args[i].kw)
            continue;
        if (pld_eval(it, f, e->u.call.args[i].value, &(*out)[*n]) != PLD_OK)
            return PLD_E_RUNTIME;
        (*n)++;
    }
    return PLD_OK;
}

static void free_args(pld_value_t *args, int n)
{
    for (int j = 0; j < n; j++)
        pld_value_release(&args[j]);
    pld_mem_free(args);
}

pld_status_t pld_walk_dispatch(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    const pld_func_t *fn = it->p->funcs[e->aux];
    if (f->ctx != PLD_CTX_KERNEL && pld_check_builtin_kernel(fn) >= 0)
        return pld_builtin_call(it, f, e, fn, out); /* a lowered CHIP collective (pld_builtin.c) */
    int callee_ctx = pld_check_func_ctx(fn);
    const pld_expr_t *device = pld_walk_kwarg(e, "device");
    pld_value_t *args;
    int n;
    if (eval_args(it, f, e, 0, &args, &n) != PLD_OK) {
        free_args(args, n);
        return PLD_E_RUNTIME;
    }
    pld_status_t st = PLD_OK;
    if (f->ctx == PLD_CTX_HOST && callee_ctx == PLD_CTX_CHIP) {
        int64_t target;
        if (device) {
            st = pld_eval_i64(it, f, device, &target);
            if (st == PLD_OK && (target < 0 || target >= it->comm.nranks))
                st = pld_rt_error(it, f, device->span, "device=%lld is outside [0, %d): the run has %d rank%s",
                                  (long long)target, it->comm.nranks, it->comm.nranks, it->comm.nranks == 1 ? "" : "s");
        } else {
            target = it->rr_counter++ % it->comm.nranks;
        }
        if (st == PLD_OK) {
            if (target == it->comm.rank) {
                it->stats.dispatches++;
                pld_ev_t ev;
                if (it->trace) {
                    pld_tr_init(f, e->span, &ev, PLD_EV_DISPATCH, fn->name);
                    pld_trace_begin(it->trace, &ev);
                }
                st = pld_walk_function(it, f, fn, args, PLD_CTX_CHIP, e->span, out);
                if (it->sched_on && st == PLD_OK)
                    st = pld_sched_flush(it, f, e->span); /* the dispatch's held-back puts land */
                if (it->trace) {
                    ev.failed = st != PLD_OK;
                    pld_trace_end(it->trace, &ev);
                }
            } else {
                out->kind = PLD_V_UNAVAIL;
                out->u.i = target;
            }
        }
    } else if (callee_ctx == 0 && fn->is_raw) {
        st = pld_walk_subworker(it, f, e, fn, args, n, out); /* Python, through the bridge (pld_subw.c) */
    } else if (callee_ctx == PLD_CTX_KERNEL && f->ctx != PLD_CTX_KERNEL) {
        st = gate_deps(it, f, e);
        if (st == PLD_OK && it->opts.dump)
            st = pld_dump_launch(it, f, e, fn, 0, 0);
        if (st == PLD_OK)
            st = launch_kernel(it, f, fn, e->aux, args, e->span, 1, 0, out);
        if (st == PLD_OK && it->opts.dump)
            st = pld_dump_launch(it, f, e, fn, 0, 1);
    } else {
        st = pld_walk_function(it, f, fn, args, callee_ctx ? callee_ctx : f->ctx, e->span, out);
    }
    free_args(args, n);
    return st;
}

/* Parameter index of what the kernel fn returns as result k of nr when it
 * does not run (a submit its predicate skips): the parameter a `return` names,
 * or the Out / InOut parameter a returned call writes (pl.store(t, off, out)),
 * else the k-th Out / InOut tensor parameter (PyPTO's kernels return the
 * tensors they write); -1 when none. */
static int returned_param(const pld_func_t *fn, int k, int nr)
{
    const pld_stmt_t *last = fn->body.n ? fn->body.stmts[fn->body.n - 1] : NULL;
    const pld_expr_t *v = last && last->kind == PLD_ST_RETURN && last->u.ret.n == nr ? last->u.ret.vals[k] : NULL;
    for (int i = 0; v && v->kind == PLD_EX_NAME && i < fn->nparams; i++)
        if (fn->params[i].name == v->u.name)
            return i;
    for (int j = 0; v && v->kind == PLD_EX_CALL && j < v->u.call.nargs; j++) {
        const pld_expr_t *a = v->u.call.args[j].value;
        for (int i = 0; a->kind == PLD_EX_NAME && i < fn->nparams; i++)
            if (fn->params[i].name == a->u.name && fn->params[i].type && fn->params[i].type->dir != PLD_DIR_IN)
                return i;
    }
    for (int i = 0, m = 0; i < fn->nparams; i++)
        if (fn->params[i].type && pld_type_is_tensorlike(fn->params[i].type) && fn->params[i].type->dir != PLD_DIR_IN &&
            m++ == k)
            return i;
    return -1;
}

/* The results of submit e of kernel fn that its predicate skipped: the
 * tensors it would have written, unchanged (a tuple when several). */
static pld_status_t skipped_results(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_func_t *fn,
                                    const pld_value_t *args, pld_value_t *r)
{
    const int nr = e->type && e->type->kind == PLD_TY_TUPLE ? e->type->nelems - 1 : 0;
    pld_tuple_t *t = nr > 1 ? pld_tuple_new(nr) : NULL;
    if (nr > 1 && !t)
        return pld_rt_error(it, f, e->span, "out of memory");
    *r = nr > 1 ? pld_v_obj(&t->hdr, PLD_DT_NONE) : pld_v_none();
    for (int k = 0; k < nr; k++) {
        int i = returned_param(fn, k, nr);
        if (i < 0)
            return pld_rt_error(it, f, e->span, "the predicate of this submit is false, so kernel %s does not run, but "
                                                "its result %d is none of its Out / InOut tensors", fn->name, k);
        pld_value_set(nr > 1 ? &t->items[k] : r, &args[i]);
    }
    return PLD_OK;
}

/* pl.submit / pl.spmd_submit: a kernel launch returning (results..., TaskId). */
pld_status_t pld_walk_submit(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    const pld_func_t *fn = it->p->funcs[e->aux];
    pld_value_t *args;
    int n;
    if (eval_args(it, f, e, 1, &args, &n) != PLD_OK) {
        free_args(args, n);
        return PLD_E_RUNTIME;
    }
    int64_t blocks = 1;
    const pld_expr_t *cn = pld_walk_kwarg(e, "core_num");
    if (cn && pld_eval_i64(it, f, cn, &blocks) != PLD_OK) {
        free_args(args, n);
        return PLD_E_RUNTIME;
    }
    const pld_expr_t *ss = pld_walk_kwarg(e, "sync_start");
    const int sync_start = ss && ss->kind == PLD_EX_BOOL && ss->u.bval;
    int limit = pld_npu_profile_or_default(it->opts.platform)->aiv_cores;
    if (blocks < 1 || (sync_start && blocks > limit)) {
        free_args(args, n);
        return pld_rt_error(it, f, e->span,
                            blocks < 1 ? "core_num must be at least 1, found %lld"
                                       : "a sync-start launch of %lld blocks cannot be admitted: the platform has too few "
                                         "AIV cores",
                            (long long)blocks);
    }
    pld_value_t r = pld_v_none();
    int run = 1;
    pld_status_t st = gate_deps(it, f, e);
    if (st == PLD_OK)
        st = dispatch_predicate(it, f, e, &run);
    if (st == PLD_OK && !run) { /* retired at its dispatch point: its Out tensors stay as they are */
        st = skipped_results(it, f, e, fn, args, &r);
        if (st == PLD_OK)
            st = skip_task(it, f, e, e->span, fn->name, 0);
    } else {
        if (st == PLD_OK && it->opts.dump)
            st = pld_dump_launch(it, f, e, fn, 1, 0);
        if (st == PLD_OK)
            st = launch_kernel(it, f, fn, e->aux, args, e->span, (int)blocks, sync_start, &r);
        if (st == PLD_OK && it->opts.dump)
            st = pld_dump_launch(it, f, e, fn, 1, 1);
    }
    free_args(args, n);
    if (st != PLD_OK) {
        pld_value_release(&r);
        return st;
    }
    /* (results..., TaskId) */
    int nr = r.kind == PLD_V_TUPLE ? pld_v_tuple(&r)->n : r.kind == PLD_V_NONE ? 0 : 1;
    pld_tuple_t *t = pld_tuple_new(nr + 1);
    if (!t) {
        pld_value_release(&r);
        return pld_rt_error(it, f, e->span, "out of memory");
    }
    for (int i = 0; i < nr; i++)
        pld_value_set(&t->items[i], r.kind == PLD_V_TUPLE ? &pld_v_tuple(&r)->items[i] : &r);
    t->items[nr] = pld_v_int(PLD_DT_TASK_ID, (int64_t)it->stats.tasks);
    pld_value_release(&r);
    *out = pld_v_obj(&t->hdr, PLD_DT_NONE);
    return PLD_OK;
}

/* The list of a launch's dumps: dumps=[...] or attrs={"dump_vars": [...]}. */
static const pld_expr_t *dump_list(const pld_expr_t *call)
{
    const pld_expr_t *l = pld_walk_kwarg(call, "dumps"), *a = pld_walk_kwarg(call, "attrs");
    for (int i = 0; !l && a && a->kind == PLD_EX_DICT && i < a->u.dict.n; i++)
        if (a->u.dict.keys[i]->kind == PLD_EX_STR && strcmp(a->u.dict.keys[i]->u.str.s, "dump_vars") == 0)
            l = a->u.dict.vals[i];
    return l && (l->kind == PLD_EX_LIST || l->kind == PLD_EX_TUPLE) ? l : NULL;
}

pld_status_t pld_dump_launch(pld_interp_t *it, frame_t *f, const pld_expr_t *call, const pld_func_t *fn, int first,
                             int stage)
{
    const pld_expr_t *l = it->opts.dump ? dump_list(call) : NULL;
    for (int k = 0; l && k < l->u.seq.n; k++) {
        const pld_expr_t *item = l->u.seq.items[k];
        int dir = PLD_DIR_INOUT; /* a scope's, or a name that is no argument: both stages */
        for (int i = first, j = 0; fn && item->kind == PLD_EX_NAME && i < call->u.call.nargs; i++) {
            const pld_expr_t *a = call->u.call.args[i].value;
            if (call->u.call.args[i].kw)
                continue;
            if (a->kind == PLD_EX_NAME && strcmp(a->u.name, item->u.name) == 0 && j < fn->nparams &&
                fn->params[j].type) {
                dir = fn->params[j].type->dir;
                break;
            }
            j++;
        }
        if ((stage == 0 && dir == PLD_DIR_OUT) || (stage == 1 && dir == PLD_DIR_IN))
            continue;
        pld_value_t v = pld_v_none();
        pld_status_t st = PLD_OK;
        int slot = item->kind == PLD_EX_NAME ? item->slot : -1;
        for (int i = 0; item->kind == PLD_EX_NAME && slot < 0 && f->fn && i < f->nslots; i++)
            if (f->fn->slot_names[i] && strcmp(f->fn->slot_names[i], item->u.name) == 0)
                slot = i; /* a scope's keyword list is not resolved by the checker */
        if (slot >= 0 && slot < f->nslots)
            pld_value_set(&v, &f->slots[slot]);
        else
            st = it->walk->eval(it, f, item, &v);
        if (st == PLD_OK)
            st = pld_dump_value(it, f, item, item->span, stage == 0 ? "before_dispatch" : "after_completion", &v);
        pld_value_release(&v);
        if (st != PLD_OK)
            return st;
    }
    return PLD_OK;
}

const pld_walker_t pld_walker = {pld_eval, pld_eval_i64, pld_eval_ilist, run_queued};
