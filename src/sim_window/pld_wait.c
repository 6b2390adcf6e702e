/* pld_wait.c - waits between ranks under the hang watchdog (pld_wait.h):
 * the poll loop, the status board records, deadlock detection, the timeout,
 * and the drain at the end of a run. */
#include "pld_wait.h"
#include "pld_mem.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int pld_wait_cond_holds(int cmp, int32_t v, int32_t expected)
{
    return cmp == PLD_CMP_EQ ? v == expected
         : cmp == PLD_CMP_GE ? v >= expected
                             : (uint32_t)v >= (uint32_t)expected;
}

const char *pld_wait_cmp_text(int cmp)
{
    return cmp == PLD_CMP_EQ ? "==" : cmp == PLD_CMP_GE ? ">=" : ">= (unsigned)";
}

void pld_wait_publish(pld_win_sys_t *win, int state, int32_t line, int32_t col, int cmp, int32_t expected,
                      int32_t found, int dom_rank, const char *what)
{
    pld_win_status_t s;
    memset(&s, 0, sizeof s);
    s.state = state;
    s.line = line;
    s.col = col;
    s.cmp = cmp;
    s.expected = expected;
    s.found = found;
    s.dom_rank = dom_rank;
    if (what)
        snprintf(s.what, sizeof s.what, "%s", what);
    pld_win_status_set(win, &s);
}

typedef struct snapshot {
    int64_t epoch_sum;
    int64_t inflight, applied_sum; /* hybrid: signal messages sent - applied; applied */
    int blocked, running, done;
    int valid;
    double at;
    int64_t *seq; /* per world rank: the status seq when the picture was taken */
    int nseq;
} snapshot_t;

static void snapshot_free(snapshot_t *s)
{
    pld_mem_free(s->seq);
    memset(s, 0, sizeof *s);
}

/* How long the all-blocked picture must stay unchanged before it counts as a
 * deadlock, at the least. The real guard is the republish rule below; the time
 * only keeps a report from racing a notify that is still being flushed. */
#define PLD_DEADLOCK_STABLE_S 0.2

/* Reads every rank's record into recs (P of them); 0 when a read failed
 * (the sticky error: the wait loop's next pld_win_poll reports it). */
static int read_board(pld_win_sys_t *win, pld_win_status_t *recs, int P)
{
    for (int r = 0; r < P; r++)
        if (pld_win_status_get(win, r, &recs[r]) != PLD_OK)
            return 0;
    return 1;
}

/* Given every rank's record (recs), returns 1 when every live rank is
 * blocked and the picture did not change since `prev`: no op was issued
 * anywhere (epochs) and every blocked rank has published its blocked state at
 * least twice since `prev` was taken. A rank publishes after it re-read its
 * cell and found the condition still false, so two publishes mean one full
 * re-read that started after the picture was taken: a rank whose signal
 * arrived but that was off the CPU (4 ranks on 2 cores) cannot be mistaken
 * for a stuck one. */
static int deadlocked(const pld_win_status_t *recs, int P, snapshot_t *prev)
{
    snapshot_t cur;
    memset(&cur, 0, sizeof cur);
    cur.at = now_s();
    cur.seq = pld_mem_calloc((size_t)P, sizeof *cur.seq);
    if (!cur.seq)
        return 0;
    cur.nseq = P;
    for (int r = 0; r < P; r++) {
        const pld_win_status_t s = recs[r];
        cur.epoch_sum += s.epoch;
        cur.inflight += s.msgs_sent - s.msgs_applied; /* hybrid: signal messages on their way */
        cur.applied_sum += s.msgs_applied;
        cur.seq[r] = s.state == PLD_WS_BLOCKED ? s.seq : -1;
        if (s.state == PLD_WS_BLOCKED)
            cur.blocked++;
        else if (s.state == PLD_WS_RUNNING)
            cur.running++;
        else
            cur.done++;
    }
    cur.valid = 1;
    int same = prev->valid && prev->running == 0 && cur.running == 0 && prev->epoch_sum == cur.epoch_sum &&
               prev->applied_sum == cur.applied_sum && cur.inflight == 0 && prev->blocked == cur.blocked &&
               prev->nseq == P;
    int dead = same && cur.blocked > 0 && cur.at - prev->at >= PLD_DEADLOCK_STABLE_S;
    for (int r = 0; dead && r < P; r++)
        if (cur.seq[r] >= 0 && (prev->seq[r] < 0 || cur.seq[r] < prev->seq[r] + 2))
            dead = 0;
    if (!same) {
        snapshot_free(prev);
        *prev = cur;
    } else {
        snapshot_free(&cur);
    }
    return dead;
}

/* ------------------------------------------------------------ progress */

/* What the watch remembers of one rank: the fields of its record that change
 * when it progresses, and when they last changed. The seq is not one of them
 * (a blocked rank republishes every 20 ms without doing anything). */
typedef struct seen {
    int64_t count, epoch, sent, applied, phase;
    int32_t state, found;
    uint32_t line, col;
    double since; /* now_s() when a change was first seen */
    int valid;
} seen_t;

struct pld_wait_watch {
    int n;
    double stopped_at; /* when this rank saw the run stop (0: running) */
    seen_t *r;
};

pld_wait_watch_t *pld_wait_watch_create(int nranks)
{
    pld_wait_watch_t *w = pld_mem_calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->n = nranks > 0 ? nranks : 1;
    w->r = pld_mem_calloc((size_t)w->n, sizeof *w->r);
    if (!w->r) {
        pld_mem_free(w);
        return NULL;
    }
    return w;
}

void pld_wait_watch_destroy(pld_wait_watch_t *w)
{
    if (!w)
        return;
    pld_mem_free(w->r);
    pld_mem_free(w);
}

int pld_wait_watch_rank(const pld_wait_watch_t *w, int r, double *ago_s, uint32_t *line, uint32_t *col)
{
    if (!w || r < 0 || r >= w->n || !w->r[r].valid)
        return 0;
    const seen_t *s = &w->r[r];
    *ago_s = (w->stopped_at > 0 ? w->stopped_at : now_s()) - s->since;
    *line = s->line;
    *col = s->col;
    return 1;
}

/* Records what recs show at time t (nothing once the run stopped: the
 * report tells how things stood then). */
static void watch_observe(pld_wait_watch_t *w, const pld_win_status_t *recs, int P, double t)
{
    if (w->stopped_at > 0)
        return;
    for (int r = 0; r < P && r < w->n; r++) {
        const pld_win_status_t *s = &recs[r];
        seen_t *o = &w->r[r];
        const int32_t found = s->state == PLD_WS_BLOCKED ? s->found : 0;
        if (o->valid && o->count == s->progress.count && o->epoch == s->epoch && o->sent == s->msgs_sent &&
            o->applied == s->msgs_applied && o->phase == s->phase && o->state == s->state && o->found == found)
            continue;
        o->count = s->progress.count;
        o->epoch = s->epoch;
        o->sent = s->msgs_sent;
        o->applied = s->msgs_applied;
        o->phase = s->phase;
        o->state = s->state;
        o->found = found;
        o->line = (uint32_t)s->progress.at;
        o->col = (uint32_t)(s->progress.at >> 32);
        o->since = t;
        o->valid = 1;
    }
}

/* Seconds since the last progress of any rank at time t (0 while a rank was
 * never seen). Ranks that finished or failed count as not progressing. */
static double watch_quiet(const pld_wait_watch_t *w, int P, double t)
{
    double q = -1;
    for (int r = 0; r < P && r < w->n; r++) {
        if (!w->r[r].valid)
            return 0;
        const double d = t - w->r[r].since;
        if (q < 0 || d < q)
            q = d;
    }
    return q < 0 ? 0 : q;
}

static void watch_stop(pld_wait_watch_t *w, double t)
{
    if (w && w->stopped_at <= 0)
        w->stopped_at = t;
}

/* ------------------------------------------------------------ pollers */

int pld_wait_poll_cell(const void *ctx, int32_t *found)
{
    const pld_wait_cell_t *w = ctx;
    /* hybrid, met already: no MPI entry (an idle one yields the core) */
    if (pld_win_peek_cell(w->dom, w->disp, found) && pld_wait_cond_holds(w->cmp, *found, w->expected))
        return 1;
    *found = pld_win_read_cell(w->dom, w->disp);
    return pld_wait_cond_holds(w->cmp, *found, w->expected);
}

/* found = the transfers of the set complete. An error of the set is the
 * window layer's sticky error, which the wait loop's next pld_win_poll
 * reports. */
int pld_wait_poll_xset(const void *ctx, int32_t *found)
{
    pld_win_xset_t *x = (pld_win_xset_t *)ctx;
    int done = 0;
    char err[256];
    const int r = pld_win_xset_test(x, &done, err, sizeof err);
    *found = done;
    return r == 1;
}

/* found = how many ranks published a phase >= the one waited for; satisfied
 * when all of them did. */
int pld_wait_poll_phase(const void *ctx, int32_t *found)
{
    const pld_wait_phase_t *w = ctx;
    int P = pld_win_world_size(w->win), n = 0;
    for (int r = 0; r < P; r++) {
        pld_win_status_t s;
        if (pld_win_status_get(w->win, r, &s) == PLD_OK && s.phase >= w->phase)
            n++;
    }
    *found = n;
    return n == P;
}

/* ------------------------------------------------------------ the watched wait */

/* The reason of a stop, as the report says it (buf: n bytes). */
static const char *stop_why(int reason, double timeout_s, double wait_timeout_s, char *buf, size_t n)
{
    if (reason == PLD_WA_DEADLOCK)
        return "deadlock: every rank is waiting and nothing is in flight";
    if (reason == PLD_WA_TIMEOUT) {
        snprintf(buf, n, "the hang watchdog's timeout expired: no rank made progress for %g s", timeout_s);
        return buf;
    }
    if (reason == PLD_WA_WAIT_TIMEOUT) {
        snprintf(buf, n, "the hang watchdog's per-wait limit of %g s expired", wait_timeout_s);
        return buf;
    }
    return "the run was stopped because another rank failed";
}

pld_status_t pld_wait_run(pld_wait_t *w, int32_t *found)
{
    int32_t v = 0;
    if (w->poll(w->pctx, &v)) {
        *found = v;
        return PLD_OK;
    }
    double t0 = 0, last = 0;
    snapshot_t snap;
    memset(&snap, 0, sizeof snap);
    char what[200] = "", whybuf[160];
    int published = 0;
    const char *why = NULL;
    pld_status_t st = PLD_OK;
    const int P = pld_win_world_size(w->win);
    pld_win_status_t *recs = NULL; /* the status board, as last read */
    pld_wait_watch_t *own = NULL, *watch = w->watch;
    int observed = 0; /* watch was updated during this wait */
    for (unsigned long polls = 1;; polls++) {
        /* let the other blocks of this rank run first: one of them may be the
         * one that notifies */
        if (pld_npu_can_yield(w->sched)) {
            pld_npu_yield(w->sched);
            if (published)
                w->h->resumed(w->ctx); /* the other blocks ran statements of their own */
        }
        if (pld_npu_cancelled(w->sched)) {
            st = PLD_E_RUNTIME; /* another block failed and reported */
            break;
        }
        if (pld_win_poll(w->win) != PLD_OK) {
            /* an MPI call of this rank failed (one with no status of its
             * own, e.g. read_cell's MPI_Win_sync): stop here, at the wait */
            char msg[256];
            pld_win_sys_error(w->win, msg, sizeof msg);
            st = w->h->error(w->ctx, msg);
            break;
        }
        if (w->poll(w->pctx, &v))
            break;
        if ((polls & 63) != 0)
            continue;
        if (w->h->flush && (st = w->h->flush(w->ctx)) != PLD_OK)
            break; /* what the other blocks of this rank held back lands while this one waits */
        double t = now_s();
        if (!published) {
            w->describe(w->dctx, what, sizeof what);
            pld_wait_publish(w->win, PLD_WS_BLOCKED, w->line, w->col, w->cmp, w->expected, v, w->dom_rank, what);
            published = 1;
            t0 = last = t;
            w->h->blocked(w->ctx, what);
            recs = pld_mem_calloc((size_t)P, sizeof *recs);
            if (!watch)
                watch = own = pld_wait_watch_create(P);
            /* what changed since the run's record was last updated (it may be
             * from an earlier wait) counts from now */
            if (recs && watch && read_board(w->win, recs, P)) {
                watch_observe(watch, recs, P, t);
                observed = 1;
            }
        }
        w->h->found(w->ctx, v);
        int reason = pld_win_status_aborted(w->win);
        if (reason) {
            why = stop_why(reason, w->timeout_s, w->wait_timeout_s, whybuf, sizeof whybuf);
            break;
        }
        if (t - last >= 0.02) {
            last = t;
            pld_wait_publish(w->win, PLD_WS_BLOCKED, w->line, w->col, w->cmp, w->expected, v, w->dom_rank, what);
            if (recs && read_board(w->win, recs, P)) {
                if (watch) {
                    watch_observe(watch, recs, P, t);
                    observed = 1;
                }
                if (deadlocked(recs, P, &snap)) {
                    why = stop_why(PLD_WA_DEADLOCK, 0, 0, whybuf, sizeof whybuf);
                    pld_win_status_abort_all(w->win, PLD_WA_DEADLOCK);
                    break;
                }
            }
        }
        /* no rank progressed for the timeout (without a record of the ranks,
         * out of memory: this wait lasted the timeout) */
        if (watch && recs ? observed && watch_quiet(watch, P, t) >= w->timeout_s : t - t0 >= w->timeout_s) {
            why = stop_why(PLD_WA_TIMEOUT, w->timeout_s, 0, whybuf, sizeof whybuf);
            pld_win_status_abort_all(w->win, PLD_WA_TIMEOUT);
            break;
        }
        if (w->wait_timeout_s > 0 && t - t0 >= w->wait_timeout_s) {
            why = stop_why(PLD_WA_WAIT_TIMEOUT, 0, w->wait_timeout_s, whybuf, sizeof whybuf);
            pld_win_status_abort_all(w->win, PLD_WA_WAIT_TIMEOUT);
            break;
        }
    }
    if (why)
        watch_stop(watch, now_s());
    pld_wait_watch_destroy(own);
    pld_mem_free(recs);
    snapshot_free(&snap);
    w->h->done(w->ctx);
    *found = v;
    if (!why) {
        if (published)
            pld_wait_publish(w->win, PLD_WS_RUNNING, 0, 0, 0, 0, 0, 0, NULL);
        return st;
    }
    if (!what[0])
        w->describe(w->dctx, what, sizeof what);
    w->hang = 1;
    pld_wait_publish(w->win, PLD_WS_FAILED, w->line, w->col, w->cmp, w->expected, v, w->dom_rank, what);
    char msg[512];
    snprintf(msg, sizeof msg, "%s: found %d, expected %s %d (%s)", what, (int)v, pld_wait_cmp_text(w->cmp),
             (int)w->expected, why);
    return w->h->error(w->ctx, msg);
}

/* ------------------------------------------------------------ the end of a run */

int pld_wait_drain(pld_win_sys_t *win, double timeout_s, double wait_timeout_s, pld_wait_watch_t *watch)
{
    double t0 = now_s(), last = t0, aborted_at = -1;
    snapshot_t snap;
    memset(&snap, 0, sizeof snap);
    int P = pld_win_world_size(win), kill = 0;
    pld_win_status_t *recs = pld_mem_calloc((size_t)P, sizeof *recs);
    pld_wait_watch_t *own = watch ? NULL : pld_wait_watch_create(P);
    if (!watch)
        watch = own;
    for (unsigned long polls = 0; recs; polls++) {
        pld_win_poll(win);
        if ((polls & 63) != 0)
            continue;
        double t = now_s();
        if (t - last < 0.01)
            continue;
        last = t;
        if (!read_board(win, recs, P))
            break; /* the sticky error: the caller reports it */
        int live = 0;
        for (int r = 0; r < P; r++)
            if (recs[r].state == PLD_WS_RUNNING || recs[r].state == PLD_WS_BLOCKED)
                live++;
        if (live == 0)
            break;
        if (watch)
            watch_observe(watch, recs, P, t);
        if (deadlocked(recs, P, &snap))
            pld_win_status_abort_all(win, PLD_WA_DEADLOCK);
        if (pld_win_status_aborted(win) && aborted_at < 0) {
            aborted_at = t;
            watch_stop(watch, t);
        }
        /* no rank progressed for the timeout (without a record: the drain
         * lasted it), or the drain, a wait, passed the per-wait limit */
        const int quiet = watch ? watch_quiet(watch, P, t) >= timeout_s : t - t0 >= timeout_s;
        if (aborted_at < 0 && (quiet || (wait_timeout_s > 0 && t - t0 >= wait_timeout_s))) {
            pld_win_status_abort_all(win, quiet ? PLD_WA_TIMEOUT : PLD_WA_WAIT_TIMEOUT);
            aborted_at = t;
            watch_stop(watch, t);
        }
        if (aborted_at >= 0 && t - aborted_at > 5.0) {
            /* a rank neither finishes nor notices the abort (busy in a loop that
             * never waits): the job must be killed */
            kill = 1;
            break;
        }
    }
    pld_wait_watch_destroy(own);
    pld_mem_free(recs);
    snapshot_free(&snap);
    return kill;
}
