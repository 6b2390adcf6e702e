/* pld_win_msg.c - the hybrid transport's signals: a notify to a member on
 * another node travels as a two-sided message and is applied by the cell's
 * owner (docs/transport.md).
 *
 * Why messages: across nodes Open MPI's osc pt2pt completes an accumulate only
 * with a round trip through the target's progress engine, so a notify -> wait
 * round trip costs two of them (platform.md, multinode.md). A message costs
 * one way; the ack that follows it is off the critical path. And the owner
 * applies it with the same C11 atomic that same-node members use on the
 * shared segment: one cell, one mechanism.
 *
 * The rules that keep the semantics (pld_semantics.md §1.6, §1.7):
 *   - release: puts, gets and adds of the issuer complete (MPI_Win_flush,
 *     memmove) before its next notify is sent, and messages of one issuer
 *     to one target are applied in order (MPI's non-overtaking rule on one
 *     communicator and tag): what a rank wrote before a notify is in place
 *     when the cell changes;
 *   - a notify is posted, as a remote atomic is on the device: the issuer
 *     goes on at once, and its later operations to other targets may land
 *     first (§2.11 (d): a notify is not ordered against later stores to
 *     other addresses);
 *   - the message is applied into the window cell itself; every reader
 *     (a wait, defer_wait's check, a get of the cell, the hang report) reads
 *     the cell. The owner applies messages whenever it enters the layer:
 *     every poll of a wait loop, every read of a cell, every drain and
 *     barrier, and a put, get, add or notify when its last serve is 20 µs
 *     old (pld_win_ops.c: an idle MPI entry yields the core);
 *   - before a rank passes a phase between dispatches, says it finished, or
 *     enters a domain barrier, every message it sent has been applied
 *     (pld_win_msg_drain: a flush request to each member it sent to since
 *     the last drain, answered once everything before it is applied): no
 *     signal of a dispatch lands after the windows were cleared;
 *   - the status record counts the messages sent and applied: the deadlock
 *     detector needs both sums equal (nothing in flight) as well as every
 *     rank blocked.
 */
#include "pld_win_int.h"

#include "pld_trace.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define MSG_TAG 0x5347

static pld_status_t send_msg(pld_win_dom_t *d, int peer, size_t disp, int32_t v, int kind, char *err, size_t errn);

/* Applies one received message: a signal to this rank's cell, a flush
 * request (answered: everything before it from src is applied), a flush
 * answer. */
static void apply(pld_win_dom_t *d, const pld_win_msg_t *m, int src)
{
    pld_win_sys_t *sys = d->sys;
    if (m->kind == PLD_WIN_MSG_FLUSHED) {
        sys->flushing--;
        return;
    }
    if (m->kind == PLD_WIN_MSG_FLUSH) {
        (void)send_msg(d, src, 0, 0, PLD_WIN_MSG_FLUSHED, NULL, 0); /* a failure is the sticky error */
        return;
    }
    if (m->disp < 0 || m->disp % 4 != 0 || (size_t)m->disp > d->extent - 4) {
        /* the issuer checked the cell; this is a corrupted message */
        if (sys->sticky == PLD_OK) {
            pld_win_fail(sys, PLD_E_RUNTIME, NULL, 0, "signal message from domain rank %d for offset %lld: out of range",
                         src, (long long)m->disp);
            pld_win_stick(sys, PLD_E_RUNTIME);
        }
        return;
    }
    _Atomic int32_t *c = (_Atomic int32_t *)(void *)(d->base + m->disp);
    if (m->kind == PLD_WIN_MSG_SET)
        atomic_store_explicit(c, m->v, memory_order_release);
    else
        atomic_fetch_add_explicit(c, m->v, memory_order_release);
    sys->counters.msgs_applied++;
    sys->status->msgs_applied++;
}
/* Completes finished sends; returns a free slot, or -1. One MPI_Testsome
 * over the queue, not an MPI_Test per send: every test is a pass of the
 * progress engine (a poll of the sockets and, idle, a sched_yield that can
 * hand the core to another rank for a time slice). */
static int free_slot(pld_win_sys_t *sys)
{
    if (sys->nsend > 0) {
        int done = 0, idx[PLD_WIN_SENDQ];
        PLD_MPI_NOTE(MPI_Testsome(PLD_WIN_SENDQ, sys->sreq, &done, idx, MPI_STATUSES_IGNORE));
        if (done > 0)
            sys->nsend -= done;
    }
    if (sys->nsend >= PLD_WIN_SENDQ)
        return -1;
    for (int i = 0; i < PLD_WIN_SENDQ; i++)
        if (sys->sreq[i] == MPI_REQUEST_NULL)
            return i;
    return -1;
}

/* Sends {disp, v, kind} to domain rank peer on d's signal communicator. */
static pld_status_t send_msg(pld_win_dom_t *d, int peer, size_t disp, int32_t v, int kind, char *err, size_t errn)
{
    pld_win_sys_t *sys = d->sys;
    int slot;
    for (unsigned long n = 1; (slot = free_slot(sys)) < 0; n++) {
        pld_win_msg_serve_all(sys);
        if (n % 64 == 0)
            sched_yield();
        if (sys->sticky != PLD_OK)
            return pld_win_sticky(sys, err, errn);
    }
    pld_win_msg_t *m = &sys->sbuf[slot];
    m->disp = (int64_t)disp;
    m->v = v;
    m->kind = kind;
    PLD_MPI_CHECK(MPI_Isend(m, (int)sizeof *m, MPI_BYTE, peer, MSG_TAG, d->sig, &sys->sreq[slot]));
    sys->nsend++;
    return PLD_OK;
}

pld_status_t pld_win_msg_notify(pld_win_dom_t *d, int peer, size_t disp, int32_t v, int set, char *err, size_t errn)
{
    pld_status_t st = send_msg(d, peer, disp, v, set ? PLD_WIN_MSG_SET : PLD_WIN_MSG_ADD, err, errn);
    if (st == PLD_OK) {
        d->pend[peer]++;
        d->sys->pending++;
        d->sys->counters.msgs++;
        d->sys->status->msgs_sent++;
    }
    return st;
}

/* Applies the messages that have arrived for d. */
static void serve(pld_win_dom_t *d)
{
    pld_win_sys_t *sys = d->sys;
    for (;;) {
        int done = 0;
        MPI_Status status;
        if (d->rreq == MPI_REQUEST_NULL)
            return;
        int rc = MPI_Test(&d->rreq, &done, &status);
        sys->counters.mpi_calls++;
        if (rc != MPI_SUCCESS) {
            pld_win_mpi_fail(sys, "MPI_Test", rc, NULL, 0);
            return;
        }
        if (!done)
            return;
        pld_win_msg_t m = d->rbuf;
        PLD_MPI_NOTE(MPI_Irecv(&d->rbuf, (int)sizeof d->rbuf, MPI_BYTE, MPI_ANY_SOURCE, MSG_TAG, d->sig, &d->rreq));
        apply(d, &m, status.MPI_SOURCE);
    }
}

void pld_win_msg_serve_all(pld_win_sys_t *sys)
{
    for (pld_win_dom_t *d = sys->doms; d; d = d->next)
        if (d->tr == PLD_WIN_HYBRID)
            serve(d);
    (void)free_slot(sys);
    sys->entered = 1;
    sys->served_ns = sys->applied_ns = pld_trace_now();
}

pld_status_t pld_win_msg_drain(pld_win_sys_t *sys, char *err, size_t errn)
{
    if (sys->pending > 0) {
        for (pld_win_dom_t *d = sys->doms; d; d = d->next) {
            if (d->tr != PLD_WIN_HYBRID)
                continue;
            for (int p = 0; p < d->size; p++) {
                if (d->pend[p] == 0)
                    continue;
                d->pend[p] = 0;
                pld_status_t st = send_msg(d, p, 0, 0, PLD_WIN_MSG_FLUSH, err, errn);
                if (st != PLD_OK)
                    return st;
                sys->flushing++;
            }
        }
        sys->pending = 0;
    }
    for (unsigned long n = 1; sys->flushing > 0; n++) {
        pld_win_msg_serve_all(sys);
        if (sys->sticky != PLD_OK)
            return pld_win_sticky(sys, err, errn);
        if (n % 64 == 0)
            sched_yield();
        if (n % 1024 == 0 && pld_win_status_aborted(sys))
            return pld_win_fail(sys, PLD_E_RUNTIME, err, errn,
                                "aborted while waiting for this rank's signal messages to be applied");
    }
    return PLD_OK;
}

pld_status_t pld_win_msg_barrier(pld_win_dom_t *d, char *err, size_t errn)
{
    pld_win_sys_t *sys = d->sys;
    /* A drain that gives up (an aborted run) still enters the barrier: every
     * member must make the same collective calls, or one waits in the next
     * (MPI_Win_free at teardown) for a member still in this one. */
    pld_status_t st = pld_win_msg_drain(sys, err, errn);
    MPI_Request r = MPI_REQUEST_NULL;
    PLD_MPI_CHECK(MPI_Ibarrier(d->comm, &r));
    for (unsigned long n = 1;; n++) {
        int done = 0;
        PLD_MPI_CHECK(MPI_Test(&r, &done, MPI_STATUS_IGNORE));
        if (done)
            return st;
        pld_win_msg_serve_all(sys);
        if (n % 64 == 0)
            sched_yield();
    }
}

pld_status_t pld_win_msg_open(pld_win_dom_t *d, char *err, size_t errn)
{
    pld_win_sys_t *sys = d->sys;
    PLD_MPI_CHECK(MPI_Comm_dup(d->comm, &d->sig));
    PLD_MPI_CHECK(MPI_Comm_set_errhandler(d->sig, MPI_ERRORS_RETURN));
    PLD_MPI_CHECK(MPI_Irecv(&d->rbuf, (int)sizeof d->rbuf, MPI_BYTE, MPI_ANY_SOURCE, MSG_TAG, d->sig, &d->rreq));
    sys->nhybrid++;
    return PLD_OK;
}

void pld_win_msg_close(pld_win_dom_t *d)
{
    pld_win_sys_t *sys = d->sys;
    if (d->rreq != MPI_REQUEST_NULL) {
        PLD_MPI_NOTE(MPI_Cancel(&d->rreq));
        PLD_MPI_NOTE(MPI_Wait(&d->rreq, MPI_STATUS_IGNORE));
        sys->nhybrid--;
    }
    /* our sends on this domain (acks included) must complete before the
     * communicator goes */
    if (sys->nsend > 0)
        PLD_MPI_NOTE(MPI_Waitall(PLD_WIN_SENDQ, sys->sreq, MPI_STATUSES_IGNORE));
    sys->nsend = 0;
    if (d->sig != MPI_COMM_NULL)
        PLD_MPI_NOTE(MPI_Comm_free(&d->sig));
}
