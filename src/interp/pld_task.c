/* pld_task.c - TaskIds, deferred completion and deps gating of one rank.
 *
 * Kernel tasks (kernel calls, pl.at(CORE_GROUP) scopes, pl.spmd grids) run one
 * at a time in program order. A task that calls pld.system.defer_wait does not
 * block: it registers "unsigned(cell) >= unsigned(expected)" and returns, and
 * its TaskId stays incomplete until every registered condition holds
 * (pld_semantics.md §2.13). A later pl.at / pl.spmd scope with deps=[...] on
 * an incomplete task is queued with a copy of its frame's slots instead of
 * running, so the rank keeps issuing later independent tasks (the publisher
 * that will satisfy the condition, conformance catalog §4.7). Queued scopes
 * run as soon as their deps complete (checked at every later task launch) and
 * at the latest when the orchestration function that issued them ends
 * (pld_task_drain), where the rank blocks on the remaining conditions under
 * the hang watchdog.
 *
 * A kernel call with deps= on an incomplete task needs its results at once,
 * so it is not queued: it waits for its deps in place (pld_task_wait_deps),
 * blocking only on conditions its deps need. */
#include "pld_interp_int.h"
#include "pld_mem.h"

#include <stdio.h>
#include <string.h>

/* Per waiter task (§2.13 (c)), and concurrently deferred tasks per scheduler. */
#define PLD_MAX_DEFER_CONDS 64
#define PLD_MAX_DEFERRED_TASKS 64

struct pld_defer {
    int dom;
    size_t disp;
    int32_t expected;
    const pld_expr_t *e; /* the defer_wait call */
    char what[96];       /* "sig[0, 0]" */
};

struct pld_task {
    int64_t tid;
    const char *name;    /* name_hint or kernel name */
    /* deferred: conditions still to hold */
    struct pld_defer *conds;
    int ncond;
    /* queued: a scope waiting for its deps */
    const pld_stmt_t *stmt;
    frame_t frame;       /* copy of the issuing frame; frame.slots owned */
    int64_t *deps;
    int ndeps;
};

static void task_free(struct pld_task *t)
{
    pld_mem_free(t->conds);
    pld_mem_free(t->deps);
    if (t->stmt) {
        for (int i = 0; i < t->frame.nslots; i++)
            pld_value_release(&t->frame.slots[i]);
        pld_mem_free(t->frame.slots);
    }
    memset(t, 0, sizeof *t);
}

/* Takes record i out of the table (the caller owns it). */
static struct pld_task task_take(pld_interp_t *it, int i)
{
    struct pld_task t = it->tasks[i];
    memmove(&it->tasks[i], &it->tasks[i + 1], (size_t)(it->ntasks - i - 1) * sizeof *it->tasks);
    it->ntasks--;
    return t;
}

static void task_remove(pld_interp_t *it, int i)
{
    struct pld_task t = task_take(it, i);
    task_free(&t);
}

static struct pld_task *task_add(pld_interp_t *it)
{
    if (it->ntasks == it->captasks) {
        int cap = it->captasks ? 2 * it->captasks : 16;
        struct pld_task *n = pld_mem_realloc(it->tasks, (size_t)cap * sizeof *n);
        if (!n)
            return NULL;
        it->tasks = n;
        it->captasks = cap;
    }
    struct pld_task *t = &it->tasks[it->ntasks++];
    memset(t, 0, sizeof *t);
    return t;
}

static struct pld_task *task_find(pld_interp_t *it, int64_t tid)
{
    for (int i = 0; i < it->ntasks; i++)
        if (it->tasks[i].tid == tid)
            return &it->tasks[i];
    return NULL;
}

int64_t pld_task_begin(pld_interp_t *it, int64_t tid, int64_t *saved)
{
    *saved = it->cur_task;
    it->cur_task = tid > 0 ? tid : (int64_t)++it->stats.tasks;
    it->ncur_defer = 0;
    if (it->race)
        pld_race_task_tid(it, it->cur_task); /* a detached launch ends in this task's clock */
    return it->cur_task;
}

pld_status_t pld_task_end(pld_interp_t *it, frame_t *f, pld_span_t sp, const char *name, int64_t saved, int ok)
{
    pld_status_t st = it->sched_on ? pld_sched_flush(it, f, sp) : PLD_OK; /* the task's held-back puts land */
    if (ok && it->ncur_defer > 0) {
        int deferred = 0;
        for (int i = 0; i < it->ntasks; i++)
            deferred += it->tasks[i].ncond > 0;
        struct pld_task *t = deferred < PLD_MAX_DEFERRED_TASKS ? task_add(it) : NULL;
        if (!t) {
            st = pld_rt_error(it, f, sp,
                              deferred >= PLD_MAX_DEFERRED_TASKS
                                  ? "more than %d tasks with a pending defer_wait at once (the scheduler's limit)"
                                  : "out of memory (%d deferred tasks)",
                              PLD_MAX_DEFERRED_TASKS);
            pld_mem_free(it->cur_defer);
        } else {
            t->tid = it->cur_task;
            t->name = name;
            t->conds = it->cur_defer;
            t->ncond = it->ncur_defer;
        }
        it->cur_defer = NULL;
    } else {
        pld_mem_free(it->cur_defer);
        it->cur_defer = NULL;
    }
    it->ncur_defer = 0;
    it->cur_task = saved;
    if (it->race && saved == 0)
        pld_race_task_tid(it, 0); /* the top-level launch is over */
    return st;
}

pld_status_t pld_task_defer(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int dom, size_t disp, int64_t expected,
                            const char *cell_text)
{
    if (it->cur_task == 0)
        return pld_rt_error(it, f, e->span, "pld.system.defer_wait must run inside a kernel task (a pl.at(CORE_GROUP) "
                                            "waiter scope)");
    if (expected < 0 || expected > INT32_MAX)
        return pld_rt_error(it, f, e->span,
                            "pld.system.defer_wait: expected must be in [0, INT32_MAX], found %lld (the task fails: "
                            "PTO2_ERROR_ASYNC_COMPLETION_INVALID)",
                            (long long)expected);
    if (it->ncur_defer >= PLD_MAX_DEFER_CONDS)
        return pld_rt_error(it, f, e->span, "a task may register at most %d defer_wait conditions",
                            PLD_MAX_DEFER_CONDS);
    if (it->ncur_defer == 0) {
        it->cur_defer = pld_mem_calloc(PLD_MAX_DEFER_CONDS, sizeof *it->cur_defer);
        if (!it->cur_defer)
            return pld_rt_error(it, f, e->span, "out of memory");
    }
    struct pld_defer *c = &it->cur_defer[it->ncur_defer++];
    c->dom = dom;
    c->disp = disp;
    c->expected = (int32_t)expected;
    c->e = e;
    snprintf(c->what, sizeof c->what, "%s", cell_text);
    return PLD_OK;
}

int pld_task_complete(pld_interp_t *it, int64_t tid)
{
    return task_find(it, tid) == NULL;
}

static int deps_complete(pld_interp_t *it, const int64_t *deps, int n)
{
    for (int i = 0; i < n; i++)
        if (!pld_task_complete(it, deps[i]))
            return 0;
    return 1;
}

/* Drops the conditions of deferred tasks that hold now and completes the
 * deferred and dummy tasks with nothing left to wait for; 1 when one did. */
static int poll_conditions(pld_interp_t *it)
{
    int changed = 0;
    for (int i = 0; i < it->ntasks; i++) {
        struct pld_task *t = &it->tasks[i];
        for (int k = 0; k < t->ncond;) {
            struct pld_defer *c = &t->conds[k];
            int32_t v = pld_win_read_cell(it->doms[c->dom].win, c->disp);
            if (pld_wait_cond_holds(PLD_CMP_GE_U, v, c->expected)) {
                if (it->race) /* the completion acquires, for the tasks that depend on it */
                    pld_race_task_acquire(it, t->tid, &it->doms[c->dom], c->disp, PLD_CMP_GE_U, c->expected);
                t->conds[k] = t->conds[--t->ncond];
                changed = 1;
            } else {
                k++;
            }
        }
        if (t->ncond == 0 && !t->stmt && deps_complete(it, t->deps, t->ndeps)) {
            if (it->race) /* a dummy task completes with its deps */
                pld_race_task_deps(it, NULL, t->tid, t->deps, t->ndeps);
            task_remove(it, i--);
            changed = 1;
        }
    }
    return changed;
}


/* Runs every queued scope whose deps are complete, in issue order, until
 * nothing changes. */
pld_status_t pld_task_progress(pld_interp_t *it)
{
    if (it->ntasks == 0)
        return PLD_OK;
    pld_win_poll(it->win);
    for (int again = 1; again;) {
        again = poll_conditions(it);
        for (int i = 0; i < it->ntasks; i++) {
            struct pld_task *t = &it->tasks[i];
            if (!t->stmt || !deps_complete(it, t->deps, t->ndeps))
                continue;
            /* take it out of the table first: it is running, and its own
             * defer_wait conditions (if any) go to a fresh record */
            struct pld_task q = task_take(it, i);
            if (it->race) { /* it starts from its issue and its deps, not from what ran since */
                pld_race_task_detach(it, &q.frame, q.tid);
                pld_race_task_deps(it, &q.frame, 0, q.deps, q.ndeps);
            }
            pld_status_t st = it->walk->run_queued(it, &q.frame, q.stmt, q.tid);
            task_free(&q);
            if (st != PLD_OK)
                return st;
            again = 1;
            break;
        }
    }
    return PLD_OK;
}

pld_status_t pld_eval_deps(pld_interp_t *it, frame_t *f, const pld_expr_t *d, int64_t *deps, int *n)
{
    *n = 0;
    if (!d || (d->kind != PLD_EX_LIST && d->kind != PLD_EX_TUPLE))
        return d ? pld_rt_error(it, f, d->span, "deps must be a list of TaskIds") : PLD_OK;
    for (int i = 0; i < d->u.seq.n; i++) {
        pld_value_t v;
        pld_status_t st = it->walk->eval(it, f, d->u.seq.items[i], &v);
        if (st != PLD_OK)
            return st;
        const pld_array_t *a = v.kind == PLD_V_ARRAY ? pld_v_array(&v) : NULL;
        int64_t cnt = a ? a->n : v.kind == PLD_V_INT;
        if (v.kind != PLD_V_NONE && v.kind != PLD_V_INT && !a)
            st = pld_rt_error(it, f, d->u.seq.items[i]->span, "deps item %d is not a TaskId", i);
        for (int64_t k = 0; st == PLD_OK && k < cnt; k++) {
            int64_t tid = a ? ((const int64_t *)a->data)[k] : v.u.i;
            if (tid <= 0)
                continue; /* task_invalid (None) or an unset TaskId array slot: no edge */
            if (*n == PLD_MAX_DEPS)
                st = pld_rt_error(it, f, d->span, "more than %d deps", PLD_MAX_DEPS);
            else
                deps[(*n)++] = tid;
        }
        pld_value_release(&v);
        if (st != PLD_OK)
            return st;
    }
    return PLD_OK;
}

pld_status_t pld_task_dummy(pld_interp_t *it, frame_t *f, pld_span_t sp, const int64_t *deps, int ndeps, int64_t *tid)
{
    *tid = ndeps > 0 ? (int64_t)++it->stats.tasks : -1;
    if (ndeps == 0 || deps_complete(it, deps, ndeps)) {
        if (it->race && ndeps > 0)
            pld_race_task_deps(it, f, *tid, deps, ndeps);
        return PLD_OK;
    }
    struct pld_task *t = task_add(it);
    if (t && !(t->deps = pld_mem_calloc((size_t)ndeps, sizeof *t->deps)))
        it->ntasks--;
    if (!t || !t->deps)
        return pld_rt_error(it, f, sp, "out of memory");
    t->tid = *tid;
    t->name = "task_dummy";
    memcpy(t->deps, deps, (size_t)ndeps * sizeof *deps);
    t->ndeps = ndeps;
    return PLD_OK;
}

pld_status_t pld_task_queue(pld_interp_t *it, frame_t *f, const pld_stmt_t *s, const char *name, int64_t tid,
                            const int64_t *deps, int ndeps)
{
    struct pld_task *t = task_add(it);
    if (!t)
        return pld_rt_error(it, f, s->span, "out of memory");
    t->tid = tid;
    t->name = name;
    t->stmt = s;
    t->frame = *f;
    t->frame.loop = NULL;
    t->frame.ret = pld_v_none();
    t->frame.slots = pld_mem_calloc((size_t)(f->nslots > 0 ? f->nslots : 1), sizeof *t->frame.slots);
    t->deps = pld_mem_calloc((size_t)(ndeps > 0 ? ndeps : 1), sizeof *t->deps);
    if (!t->frame.slots || !t->deps) {
        pld_mem_free(t->deps);
        t->deps = NULL;
        t->stmt = NULL;
        pld_mem_free(t->frame.slots);
        it->ntasks--;
        return pld_rt_error(it, f, s->span, "out of memory");
    }
    for (int i = 0; i < f->nslots; i++)
        pld_value_set(&t->frame.slots[i], &f->slots[i]);
    memcpy(t->deps, deps, (size_t)ndeps * sizeof *deps);
    t->ndeps = ndeps;
    return PLD_OK;
}

/* 1 when task tid is, or waits (through queued deps) for, task target. */
static int needs(pld_interp_t *it, int64_t tid, int64_t target, int depth)
{
    if (tid == target)
        return 1;
    struct pld_task *t = task_find(it, tid);
    if (!t || depth > 64)
        return 0;
    for (int k = 0; k < t->ndeps; k++)
        if (needs(it, t->deps[k], target, depth + 1))
            return 1;
    return 0;
}

/* Blocks until the first remaining condition of the oldest deferred task that
 * one of `want` needs (any when want is NULL) holds. */
static pld_status_t block_on_one(pld_interp_t *it, frame_t *f, const int64_t *want, int nwant)
{
    for (int i = 0; i < it->ntasks; i++) {
        struct pld_task *t = &it->tasks[i];
        if (t->ncond == 0)
            continue;
        int needed = !want;
        for (int k = 0; k < nwant && !needed; k++)
            needed = needs(it, want[k], t->tid, 0);
        if (!needed)
            continue;
        struct pld_defer *c = &t->conds[0];
        int waiting = 0;
        for (int j = 0; j < it->ntasks; j++)
            for (int k = 0; k < it->tasks[j].ndeps; k++)
                waiting += it->tasks[j].deps[k] == t->tid;
        char what[200];
        snprintf(what, sizeof what, "deferred completion of task %lld (%s): %s (Ge %d, unsigned)%s",
                 (long long)t->tid, t->name ? t->name : "?", c->what, (int)c->expected,
                 waiting ? ", with queued dependants" : "");
        if (it->race)
            pld_race_task_redirect(it, t->tid);
        pld_status_t st = pld_dist_wait(it, f, c->e, &it->doms[c->dom], c->disp, PLD_CMP_GE_U, c->expected, what);
        if (it->race)
            pld_race_task_redirect(it, 0);
        return st;
    }
    return PLD_OK;
}

pld_status_t pld_task_wait_deps(pld_interp_t *it, frame_t *f, pld_span_t sp, const int64_t *deps, int ndeps)
{
    for (;;) {
        pld_status_t st = pld_task_progress(it);
        if (st != PLD_OK)
            return st;
        if (deps_complete(it, deps, ndeps)) {
            if (it->race && !it->manual_scope) /* in a manual scope: gate_deps, detached */
                pld_race_task_deps(it, f, 0, deps, ndeps);
            return PLD_OK;
        }
        int conds = 0;
        for (int i = 0; i < it->ntasks; i++)
            for (int k = 0; k < ndeps; k++)
                conds += it->tasks[i].ncond > 0 && needs(it, deps[k], it->tasks[i].tid, 0);
        if (conds == 0)
            return pld_rt_error(it, f, sp, "this task depends on a task that never completes");
        if ((st = block_on_one(it, f, deps, ndeps)) != PLD_OK)
            return st;
    }
}

pld_status_t pld_task_drain(pld_interp_t *it, frame_t *f)
{
    while (it->ntasks > 0) {
        pld_status_t st = pld_task_progress(it);
        if (st != PLD_OK)
            return st;
        if (it->ntasks == 0)
            break;
        int conds = 0;
        for (int i = 0; i < it->ntasks; i++)
            conds += it->tasks[i].ncond;
        if (conds == 0) {
            /* queued tasks whose deps can never complete (a dep on a later task) */
            struct pld_task *t = &it->tasks[0];
            return pld_rt_error(it, f, t->stmt ? t->stmt->span : f->call_span,
                                "task %lld (%s) depends on a task that never completes", (long long)t->tid,
                                t->name ? t->name : "?");
        }
        if ((st = block_on_one(it, f, NULL, 0)) != PLD_OK)
            return st;
    }
    if (it->race) /* every task has completed: the orchestration continues after all of them */
        pld_race_task_settle(it, f);
    return PLD_OK;
}

void pld_task_fini(pld_interp_t *it)
{
    for (int i = 0; i < it->ntasks; i++)
        task_free(&it->tasks[i]);
    pld_mem_free(it->tasks);
    it->tasks = NULL;
    it->ntasks = it->captasks = 0;
    pld_mem_free(it->cur_defer);
    it->cur_defer = NULL;
    it->ncur_defer = 0;
}
