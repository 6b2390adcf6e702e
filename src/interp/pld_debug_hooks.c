/* pld_debug_hooks.c - the interpreter's side of the debugging machinery
 * (src/debug, pld_debug.h): --check-races and --schedule-seed hooks, and the
 * one handle of the three tools (--poison's hooks are in pld_poison.c).
 *
 * it->debug is the library's handle, NULL when no debug option is on. The
 * hooks the other files call keep their names and interpreter arguments
 * (frames, domains, expressions, tensors); each one turns them into the
 * library's neutral ones (a thread, a site, a domain index, window bytes)
 * and calls src/debug. Callers guard every hook with one test: it->race,
 * it->poison (both it->debug when that tool is on, else NULL) or
 * it->sched_on.
 *
 * Layer: base (called by pld_dist.c, pld_task.c, pld_rt.c, the ops and the
 * walker). */
#include "pld_interp_int.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ the handle */

static const char *host_site_name(void *ctx, const void *key)
{
    (void)ctx;
    const pld_expr_t *e = key;
    if (e->kind == PLD_EX_SUBSCRIPT) /* x = win[...], win[...] = x: the sugar of a slice */
        return pld_op_info(PLD_OPID_TENSOR_SLICE)->name;
    return pld_op_name(e);
}

static const char *host_op_name(void *ctx, int op)
{
    (void)ctx;
    return pld_op_info((pld_op_id_t)op)->name;
}

static int host_window_at(void *ctx, int dom, size_t disp, int last, pld_debug_window_t *out)
{
    const pld_interp_t *it = ctx;
    const winbuf_t *found = NULL;
    for (int i = 0; i < it->nwins; i++) {
        const winbuf_t *w = &it->wins[i];
        if (w->dom == dom && disp >= w->offset && disp < w->offset + (w->bytes ? w->bytes : 1)) {
            found = w;
            if (!last)
                break;
        }
    }
    if (!found)
        return 0;
    out->name = found->name;
    out->offset = found->offset;
    out->bytes = found->bytes;
    out->synth = found->synth;
    return 1;
}

pld_status_t pld_debug_hooks_open(pld_interp_t *it, char *err, size_t errn)
{
    pld_debug_opts_t o;
    memset(&o, 0, sizeof o);
    o.tools = (it->opts.poison ? PLD_DEBUG_POISON : 0) | (it->opts.check_races ? PLD_DEBUG_RACES : 0) |
              (it->opts.schedule ? PLD_DEBUG_SCHEDULE : 0);
    o.seed = it->opts.schedule_seed;
    o.backend = pld_hw_name(it->hw);
    o.rank = it->comm.rank;
    o.nranks = it->comm.nranks;
    o.sched = it->sched;
    o.diags = &it->p->diags;
    o.src = it->p->src;
    o.src_len = it->p->src_len;
    o.trace = it->trace;
    o.steps = &it->steps;
    o.step_limit = &it->step_limit;
    o.races = &it->stats.races;
    o.puts_held = &it->stats.puts_held;
    o.host.ctx = it;
    o.host.site_name = host_site_name;
    o.host.op_name = host_op_name;
    o.host.window_at = host_window_at;
    o.finding = it->opts.finding;
    o.finding_ctx = it->opts.finding_ctx;
    pld_status_t st = pld_debug_create(&o, &it->debug, err, errn);
    if (st != PLD_OK)
        return st;
    it->poison = pld_debug_on(it->debug, PLD_DEBUG_POISON) ? it->debug : NULL;
    it->race = pld_debug_on(it->debug, PLD_DEBUG_RACES) ? it->debug : NULL;
    it->sched_on = pld_debug_on(it->debug, PLD_DEBUG_SCHEDULE);
    return PLD_OK;
}

void pld_debug_hooks_close(pld_interp_t *it)
{
    pld_debug_destroy(it->debug);
    it->debug = NULL;
    it->poison = NULL;
    it->race = NULL;
    it->sched_on = 0;
}

/* ------------------------------------------------------------ --check-races */

static pld_debug_thread_t thread_of(const frame_t *f)
{
    pld_debug_thread_t t = {0, 0, 0};
    if (f && f->ctx == PLD_CTX_KERNEL) {
        t.kernel = 1;
        t.block = f->block_idx;
        t.lane = f->xg ? f->xcore : f->subblock_idx;
    }
    return t;
}

static pld_debug_at_t at_of(const pld_expr_t *e)
{
    pld_debug_at_t at = {e, {0, 0, 0, 0}, -1};
    if (e) {
        at.span = e->span;
        at.op = e->kind == PLD_EX_SUBSCRIPT ? PLD_OPID_TENSOR_SLICE : e->op;
    }
    return at;
}

static int dom_of(const pld_interp_t *it, const domain_t *d)
{
    return (int)(d - it->doms);
}

/* The 4-byte integer elements of domain d's window buffers (the allocation's
 * dtype; a buffer of unknown dtype counts all its bytes): the signal cells
 * it can hold, short of a view that reinterprets a float buffer (such cells
 * go into the overflow set: ordered more, never less). */
static size_t int32_cells(pld_interp_t *it, int d)
{
    size_t n = 0;
    for (int i = 0; i < it->nwins; i++) {
        const winbuf_t *w = &it->wins[i];
        if (w->dom != d)
            continue;
        pld_dtype_t dt = w->synth ? PLD_DT_INT32 : PLD_DT_NONE;
        if (!w->synth && w->alloc && w->alloc->op == PLD_OPID_PLD_ALLOC_WINDOW_BUFFER && w->alloc->bound &&
            w->alloc->bound[1])
            dt = pld_expr_dtype(it, w->alloc->bound[1]);
        if (dt == PLD_DT_NONE || dt == PLD_DT_INT32 || dt == PLD_DT_UINT32)
            n += w->bytes / 4;
    }
    return n;
}

pld_status_t pld_race_create(pld_interp_t *it)
{
    char err[1024];
    pld_status_t st = pld_debug_race_domains(it->debug, it->ndoms, err, sizeof err);
    for (int d = 0; st == PLD_OK && d < it->ndoms; d++)
        pld_debug_race_cells(it->debug, d, int32_cells(it, d));
    for (int d = 0; st == PLD_OK && d < it->ndoms; d++) {
        domain_t *dm = &it->doms[d];
        st = pld_debug_race_domain(it->debug, it->win, d, dm->win, dm->members, dm->n, dm->me, err, sizeof err);
    }
    return st == PLD_OK ? PLD_OK : pld_rt_error(it, NULL, it->entry->name_span, "%s", err);
}

void pld_race_fini(pld_interp_t *it)
{
    if (it->race)
        pld_debug_race_fini(it->debug);
}

void pld_race_remote(pld_interp_t *it, frame_t *f, const pld_expr_t *e, domain_t *d, int peer, size_t disp,
                     size_t bytes, int dir)
{
    pld_debug_thread_t t = thread_of(f);
    pld_debug_at_t at = at_of(e);
    pld_debug_race_access(it->debug, &t, &at, dom_of(it, d), peer, disp, bytes,
                          dir == 0 ? PLD_HB_READ : dir == 1 ? PLD_HB_WRITE : PLD_HB_ATOMIC);
}

typedef struct lctx {
    pld_interp_t *it;
    pld_debug_thread_t t;
    pld_debug_at_t at;
    int dom, me;
    size_t base;               /* window byte of the buffer's first byte */
    int kind;
} lctx_t;

static void local_run(void *ctx, int64_t at, int64_t bytes)
{
    lctx_t *c = ctx;
    pld_debug_race_access(c->it->debug, &c->t, &c->at, c->dom, c->me, c->base + (size_t)at, (size_t)bytes, c->kind);
}

/* A kernel's write of a plain (non-window) tensor: block against block
 * (docs/races.md, "Output tensors"). */
typedef struct pwctx {
    pld_interp_t *it;
    pld_debug_thread_t t;
    pld_debug_at_t at;
    const pld_buffer_t *buf;
    const char *name;
    int kind;
} pwctx_t;

static void plain_run(void *ctx, int64_t at, int64_t bytes)
{
    pwctx_t *c = ctx;
    pld_debug_race_plain(c->it->debug, &c->t, &c->at, c->buf, c->buf->bytes, c->name, (size_t)at, (size_t)bytes,
                         c->kind);
}

static void race_plain(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_tensor_t *t, const int64_t *off,
                       const int64_t *ext, int kind)
{
    if (kind == PLD_HB_READ || !f || f->ctx != PLD_CTX_KERNEL)
        return;
    const char *name = NULL; /* an entry parameter's buffer is named by the parameter */
    for (int i = 0; i < it->entry->nparams && !name; i++)
        if (it->args && it->args[i].kind == PLD_V_TENSOR && pld_v_tensor(&it->args[i])->buf == t->buf)
            name = it->entry->params[i].name;
    pwctx_t c = {it, thread_of(f), at_of(e), t->buf, name, kind};
    int64_t zero[PLD_MAX_RANK] = {0};
    pld_tensor_box_runs(t, off ? off : zero, ext ? ext : t->shape, plain_run, &c);
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
            lctx_t c = {it, thread_of(f), at_of(e), w->dom, d->me,
                        (size_t)((char *)t->buf->data - (char *)pld_win_dom_base(d->win)), kind};
            int64_t zero[PLD_MAX_RANK] = {0};
            pld_tensor_box_runs(t, off ? off : zero, ext ? ext : t->shape, local_run, &c);
            return;
        }
    }
    race_plain(it, f, e, t, off, ext, kind);
}

void pld_race_notify_lock(pld_interp_t *it, domain_t *d, int peer)
{
    pld_debug_race_notify_lock(it->debug, dom_of(it, d), peer);
}

void pld_race_notify_unlock(pld_interp_t *it, frame_t *f, const pld_expr_t *e, domain_t *d, int peer, size_t disp,
                            int32_t v, int set, int done)
{
    pld_debug_thread_t t = thread_of(f);
    pld_debug_at_t at = at_of(e);
    pld_debug_race_notify_unlock(it->debug, &t, &at, dom_of(it, d), peer, disp, v, set, done);
}

void pld_race_acquire(pld_interp_t *it, frame_t *f, domain_t *d, size_t disp, int cmp, int32_t expected)
{
    pld_debug_thread_t t = thread_of(f);
    pld_debug_race_acquire(it->debug, &t, dom_of(it, d), disp, cmp, expected);
}

void pld_race_task_acquire(pld_interp_t *it, int64_t tid, domain_t *d, size_t disp, int cmp, int32_t expected)
{
    pld_debug_race_task_acquire(it->debug, tid, dom_of(it, d), disp, cmp, expected);
}

void pld_race_task_redirect(pld_interp_t *it, int64_t tid)
{
    pld_debug_race_task_redirect(it->debug, tid);
}

void pld_race_task_deps(pld_interp_t *it, const frame_t *f, int64_t tid, const int64_t *deps, int ndeps)
{
    pld_debug_thread_t t = thread_of(f);
    pld_debug_race_task_deps(it->debug, &t, tid, deps, ndeps);
}

void pld_race_task_issue(pld_interp_t *it, const frame_t *f, int64_t tid)
{
    pld_debug_thread_t t = thread_of(f);
    pld_debug_race_task_issue(it->debug, &t, tid);
}

void pld_race_task_detach(pld_interp_t *it, const frame_t *f, int64_t queued)
{
    pld_debug_thread_t t = thread_of(f);
    pld_debug_race_task_detach(it->debug, &t, queued);
}

void pld_race_task_tid(pld_interp_t *it, int64_t tid)
{
    pld_debug_race_task_tid(it->debug, tid);
}

void pld_race_task_settle(pld_interp_t *it, const frame_t *f)
{
    pld_debug_thread_t t = thread_of(f);
    pld_debug_race_task_settle(it->debug, &t);
}

void pld_race_fork(pld_interp_t *it, const frame_t *parent, const frame_t *child)
{
    pld_debug_thread_t p = thread_of(parent), c = thread_of(child);
    pld_debug_race_fork(it->debug, &p, &c);
}

void pld_race_sync(pld_interp_t *it, const frame_t *f, int how)
{
    pld_debug_thread_t t = thread_of(f);
    pld_debug_race_sync(it->debug, &t, how);
}

void pld_race_join(pld_interp_t *it, const frame_t *parent)
{
    pld_debug_thread_t p = thread_of(parent);
    pld_debug_race_join(it->debug, &p);
}

void pld_race_barrier(pld_interp_t *it, int done, int after, int clear)
{
    pld_debug_race_barrier(it->debug, done, after, clear);
}

void pld_race_summary(pld_interp_t *it)
{
    if (it->race)
        pld_debug_race_summary(it->debug);
}

/* ------------------------------------------------------------ --schedule-seed */

void pld_sched_run_begin(pld_interp_t *it)
{
    pld_debug_sched_run_begin(it->debug);
}

static pld_status_t report(pld_interp_t *it, frame_t *f, pld_span_t sp, pld_status_t st, const char *err)
{
    if (st == PLD_OK)
        return PLD_OK;
    return pld_rt_error(it, f, sp, "a put the schedule held back could not be applied: %s", err);
}

/* A preemption point at sp: when the block yielded, the other blocks ran
 * statements of their own; it->where names this op again. */
static void preempt(pld_interp_t *it, frame_t *f, pld_span_t sp)
{
    if (pld_npu_preempt(it->sched)) {
        it->stats.preemptions++;
        pld_where_at(it, f, sp);
    }
}

pld_status_t pld_sched_point(pld_interp_t *it, frame_t *f, pld_span_t sp)
{
    preempt(it, f, sp);
    if (it->trace) {
        /* after the yield: the op this block issues now */
        pld_ev_t ev;
        pld_tr_init(f, sp, &ev, PLD_EV_PUT, NULL);
        pld_debug_sched_site(it->debug, ev.track, ev.func, ev.line, ev.col);
    }
    if (pld_debug_sched_pending(it->debug) == 0)
        return PLD_OK;
    char err[256] = "";
    pld_status_t st = pld_debug_sched_point(it->debug, err, sizeof err);
    return report(it, f, sp, st, err);
}

pld_status_t pld_sched_release(pld_interp_t *it, frame_t *f, pld_span_t sp)
{
    preempt(it, f, sp);
    return pld_sched_flush(it, f, sp);
}

pld_status_t pld_sched_flush(pld_interp_t *it, frame_t *f, pld_span_t sp)
{
    if (pld_debug_sched_pending(it->debug) == 0)
        return PLD_OK;
    char err[256] = "";
    pld_status_t st = pld_debug_sched_flush(it->debug, err, sizeof err);
    return report(it, f, sp, st, err);
}

pld_status_t pld_sched_finish(pld_interp_t *it, pld_status_t st)
{
    if (pld_debug_sched_pending(it->debug) == 0)
        return st;
    char err[256] = "";
    pld_status_t fs = pld_debug_sched_flush(it->debug, err, sizeof err);
    if (st != PLD_OK)
        return st;
    pld_span_t none = {0, 0, 0, 0};
    return report(it, NULL, none, fs, err);
}

pld_status_t pld_sched_stale(pld_interp_t *it, frame_t *f, pld_span_t sp)
{
    it->step_limit = pld_debug_sched_budget(it->debug);
    return pld_sched_flush(it, f, sp);
}

uint64_t pld_sched_budget(const pld_interp_t *it)
{
    return pld_debug_sched_budget(it->debug);
}

pld_status_t pld_sched_overlap(pld_interp_t *it, domain_t *d, int peer, size_t disp, size_t bytes, char *err,
                               size_t errn)
{
    return pld_debug_sched_overlap(it->debug, dom_of(it, d), peer, disp, bytes, err, errn);
}

pld_status_t pld_sched_put(pld_interp_t *it, domain_t *d, int peer, size_t disp, const void *src, size_t bytes,
                           char *err, size_t errn)
{
    return pld_debug_sched_put(it->debug, dom_of(it, d), d->win, d->me, d->n, peer, disp, src, bytes, err, errn);
}
