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

/* Reads every rank's status; returns 1 when every live rank is blocked and the
 * picture did not change since `prev`: no op was issued anywhere (epochs) and
 * every blocked rank has published its blocked state at least twice since
 * `prev` was taken. A rank publishes after it re-read its cell and found the
 * condition still false, so two publishes mean one full re-read that started
 * after the picture was taken: a rank whose signal arrived but that was off
 * the CPU (4 ranks on 2 cores) cannot be mistaken for a stuck one. */
static int deadlocked(pld_win_sys_t *win, snapshot_t *prev)
{
    int P = pld_win_world_size(win);
    snapshot_t cur;
    memset(&cur, 0, sizeof cur);
    cur.at = now_s();
    cur.seq = pld_mem_calloc((size_t)P, sizeof *cur.seq);
    if (!cur.seq)
        return 0;
    cur.nseq = P;
    for (int r = 0; r < P; r++) {
        pld_win_status_t s;
        if (pld_win_status_get(win, r, &s) != PLD_OK) {
            snapshot_free(&cur);
            return 0;
        }
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
    char what[200] = "";
    int published = 0;
    const char *why = NULL;
    pld_status_t st = PLD_OK;
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
        }
        w->h->found(w->ctx, v);
        int reason = pld_win_status_aborted(w->win);
        if (reason) {
            why = reason == PLD_WA_DEADLOCK ? "deadlock: every rank is waiting and nothing is in flight"
                : reason == PLD_WA_TIMEOUT ? "the hang watchdog's timeout expired"
                                           : "the run was stopped because another rank failed";
            break;
        }
        if (t - last >= 0.02) {
            last = t;
            pld_wait_publish(w->win, PLD_WS_BLOCKED, w->line, w->col, w->cmp, w->expected, v, w->dom_rank, what);
            if (deadlocked(w->win, &snap)) {
                why = "deadlock: every rank is waiting and nothing is in flight";
                pld_win_status_abort_all(w->win, PLD_WA_DEADLOCK);
                break;
            }
        }
        if (t - t0 >= w->timeout_s) {
            why = "the hang watchdog's timeout expired";
            pld_win_status_abort_all(w->win, PLD_WA_TIMEOUT);
            break;
        }
    }
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

int pld_wait_drain(pld_win_sys_t *win, double timeout_s)
{
    double t0 = now_s(), last = t0, aborted_at = -1;
    snapshot_t snap;
    memset(&snap, 0, sizeof snap);
    int P = pld_win_world_size(win), kill = 0;
    for (unsigned long polls = 0;; polls++) {
        pld_win_poll(win);
        if ((polls & 63) != 0)
            continue;
        double t = now_s();
        if (t - last < 0.01)
            continue;
        last = t;
        int live = 0;
        for (int r = 0; r < P; r++) {
            pld_win_status_t s;
            if (pld_win_status_get(win, r, &s) == PLD_OK && (s.state == PLD_WS_RUNNING || s.state == PLD_WS_BLOCKED))
                live++;
        }
        if (live == 0)
            break;
        if (deadlocked(win, &snap))
            pld_win_status_abort_all(win, PLD_WA_DEADLOCK);
        if (pld_win_status_aborted(win) && aborted_at < 0)
            aborted_at = t;
        if (aborted_at < 0 && t - t0 >= timeout_s) {
            pld_win_status_abort_all(win, PLD_WA_TIMEOUT);
            aborted_at = t;
        }
        if (aborted_at >= 0 && t - aborted_at > 5.0) {
            /* a rank neither finishes nor notices the abort (busy in a loop that
             * never waits): the job must be killed */
            kill = 1;
            break;
        }
    }
    snapshot_free(&snap);
    return kill;
}
