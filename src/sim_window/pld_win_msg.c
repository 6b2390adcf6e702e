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

#include "pld_mem.h"
#include "pld_trace.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MSG_TAG 0x5347
#define XFER_TAG 0x5348    /* two-sided transfers (pld_win_xset_*) matched by their probe */
#define XFER_SIZED 0x10000 /* and XFER_SIZED + the receive's bytes: PLD_XSET_SIZED */

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

/* ---- two-sided transfers ------------------------------------------------------
 * A set's requests are its receives (in post order) then its sends. A
 * receive whose capacity the sender knows is posted at once with the tag
 * XFER_SIZED + its capacity; any other is matched by a probe when its
 * message arrives
 * (xset_match). The sends are copied into one buffer of the set (send_bytes
 * at open) unless sent in place, taken from the system's cache (one buffer,
 * kept between sets: a fresh allocation of a few hundred KiB per call costs
 * page faults and an unmap, 4 ms per all_to_all_v call on the emulated hosts
 * against 0.7 with the cache) or allocated when another set holds it. A set
 * closed with a send still pending (a failed run: the receiver never took
 * its message) leaves it to MPI, and its buffer goes on the orphans list,
 * which the process keeps until it ends: MPI may read it in any later call,
 * its teardown included. */
typedef struct xorphan {
    struct xorphan *next;
    void *data;
} xorphan_t;
static xorphan_t *xorphans; /* reachable to the end: not a leak */

struct pld_win_xset {
    pld_win_dom_t *d;
    int cap, n, nrecv, ndone; /* requests: room, posted, receives among them, complete */
    int nmatched;             /* receives matched to their message */
    MPI_Request *req;         /* cap; a receive's once it is matched */
    unsigned char *matched;   /* cap, receives only: matched to its message (posted, or by xset_match) */
    int64_t *got;             /* cap, receives only: bytes received, -1 until complete */
    int *peer;                /* cap, receives only: the sender */
    size_t *want;             /* cap, receives only: the capacity */
    void **dst;               /* cap, receives only: where the message goes */
    int *idx;                 /* cap: MPI_Testsome's indices */
    MPI_Status *st;           /* cap: and statuses */
    char *buf;                /* the sends' copies */
    size_t bytes, used;       /* buf's size, and how much the sends took */
    int cached;               /* buf is the system's cache */
};

int pld_win_xset_two_sided(const pld_win_dom_t *d, int peer)
{
    return d->tr == PLD_WIN_HYBRID && peer >= 0 && peer < d->size && peer != d->rank &&
           pld_win_dom_host(d, peer) != pld_win_dom_host(d, d->rank);
}

/* The set's send buffer: the system's cache when free (grown to `bytes`),
 * else a buffer of its own. */
static int xset_buf(pld_win_xset_t *x, size_t bytes)
{
    pld_win_sys_t *sys = x->d->sys;
    x->bytes = bytes;
    if (!sys->xcache_busy) {
        if (sys->xcache_bytes < bytes || !sys->xcache) {
            pld_mem_free(sys->xcache);
            sys->xcache_bytes = 0;
            if (!(sys->xcache = pld_mem_alloc(bytes > 0 ? bytes : 1))) /* NULL: nothing left to free */
                return 0;
            sys->xcache_bytes = bytes;
        }
        sys->xcache_busy = 1;
        x->cached = 1;
        x->buf = sys->xcache;
        return 1;
    }
    return (x->buf = pld_mem_alloc(bytes > 0 ? bytes : 1)) != NULL;
}

pld_status_t pld_win_xset_open(pld_win_dom_t *d, int n, size_t send_bytes, pld_win_xset_t **out, char *err,
                               size_t errn)
{
    pld_win_sys_t *sys = d->sys;
    *out = NULL;
    if (d->tr != PLD_WIN_HYBRID || n < 0)
        return pld_win_fail(sys, PLD_E_USAGE, err, errn, "two-sided transfers need a hybrid domain");
    pld_win_xset_t *x = pld_mem_calloc(1, sizeof *x);
    const size_t k = (size_t)(n > 0 ? n : 1);
    if (x) {
        x->d = d;
        x->req = pld_mem_alloc(k * sizeof *x->req);
        x->got = pld_mem_alloc(k * sizeof *x->got);
        x->peer = pld_mem_alloc(k * sizeof *x->peer);
        x->want = pld_mem_alloc(k * sizeof *x->want);
        x->dst = pld_mem_alloc(k * sizeof *x->dst);
        x->matched = pld_mem_alloc(k * sizeof *x->matched);
        x->idx = pld_mem_alloc(k * sizeof *x->idx);
        x->st = pld_mem_alloc(k * sizeof *x->st);
    }
    if (!x || !x->req || !x->got || !x->peer || !x->want || !x->dst || !x->matched || !x->idx || !x->st ||
        !xset_buf(x, send_bytes)) {
        pld_win_xset_close(x);
        return pld_win_fail(sys, PLD_E_NOMEM, err, errn, "out of memory for a set of %d transfers (%zu bytes to send)",
                            n, send_bytes);
    }
    x->cap = n;
    *out = x;
    return PLD_OK;
}

/* Room for one more request, and bytes within one MPI count. */
static pld_status_t xset_room(pld_win_xset_t *x, int peer, size_t bytes, char *err, size_t errn)
{
    pld_win_sys_t *sys = x->d->sys;
    if (x->n >= x->cap)
        return pld_win_fail(sys, PLD_E_USAGE, err, errn, "a set of %d transfers is full", x->cap);
    if (!pld_win_xset_two_sided(x->d, peer))
        return pld_win_fail(sys, PLD_E_USAGE, err, errn, "domain rank %d is not on another host", peer);
    if (bytes > (size_t)INT32_MAX)
        return pld_win_fail(sys, PLD_E_USAGE, err, errn, "a two-sided transfer of %zu bytes (at most 2 GiB - 1)",
                            bytes);
    return PLD_OK;
}

/* The tag of a message to a receive of cap bytes (PLD_XSET_SIZED), or
 * XFER_TAG when cap is beyond the tags (then the receive is matched by its
 * probe). */
static int xset_tag(size_t cap)
{
    static int ub = 0;
    if (!ub) {
        int *v = NULL, flag = 0;
        ub = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag) == MPI_SUCCESS && flag ? *v : 32767;
    }
    /* MPI promises ub >= 32767 only */
    return ub > XFER_SIZED && cap <= (size_t)(ub - XFER_SIZED) ? XFER_SIZED + (int)cap : XFER_TAG;
}

pld_status_t pld_win_xset_recv(pld_win_xset_t *x, int peer, void *dst, size_t cap, int flags, char *err,
                               size_t errn)
{
    pld_win_sys_t *sys = x->d->sys;
    pld_status_t st = xset_room(x, peer, cap, err, errn);
    if (st != PLD_OK)
        return st;
    if (x->n > x->nrecv)
        return pld_win_fail(sys, PLD_E_USAGE, err, errn, "a set's receives are posted before its sends");
    const int i = x->n, tag = flags & PLD_XSET_SIZED ? xset_tag(cap) : XFER_TAG;
    x->req[i] = MPI_REQUEST_NULL;
    x->matched[i] = 0;
    x->dst[i] = dst;
    x->got[i] = -1;
    x->peer[i] = peer;
    x->want[i] = cap;
    if (tag != XFER_TAG) {
        /* only a message sent for cap bytes has this tag: posted now */
        PLD_MPI_CHECK(MPI_Irecv(dst, (int)cap, MPI_BYTE, peer, tag, x->d->sig, &x->req[i]));
        x->matched[i] = 1;
        x->nmatched++;
    } /* else matched when its message arrives (xset_match) */
    x->n++;
    x->nrecv++;
    return PLD_OK;
}

pld_status_t pld_win_xset_send(pld_win_xset_t *x, int peer, const void *src, size_t bytes, size_t cap, int flags,
                               char *err, size_t errn)
{
    pld_win_sys_t *sys = x->d->sys;
    pld_status_t st = xset_room(x, peer, bytes, err, errn);
    if (st != PLD_OK)
        return st;
    if ((flags & PLD_XSET_SIZED) && bytes > cap)
        return pld_win_fail(sys, PLD_E_USAGE, err, errn, "a send of %zu bytes to a receive of %zu", bytes, cap);
    const int copy = !(flags & PLD_XSET_INPLACE);
    if (copy && bytes > x->bytes - x->used)
        return pld_win_fail(sys, PLD_E_USAGE, err, errn, "the set's sends exceed the %zu bytes it was opened with",
                            x->bytes);
    const int i = x->n;
    if (copy) {
        char *buf = x->buf + x->used;
        if (bytes > 0)
            memcpy(buf, src, bytes);
        src = buf;
        x->used += bytes;
    }
    PLD_MPI_CHECK(MPI_Isend(src, (int)bytes, MPI_BYTE, peer, flags & PLD_XSET_SIZED ? xset_tag(cap) : XFER_TAG,
                            x->d->sig, &x->req[i]));
    x->n++;
    sys->counters.xsends++;
    sys->status->msgs_sent++;
    return PLD_OK;
}

void *pld_win_xset_buf(const pld_win_xset_t *x)
{
    return x->buf;
}

/* Matches every receive whose message arrived: the first unmatched one of
 * each sender (messages of one sender match in the order they were sent), by
 * a matched probe that reads the message's size before anything is received.
 * A message larger than its receive stays where it is, and is the receiver's
 * sticky error. Returns 0, or -1 with err. */
static int xset_match(pld_win_xset_t *x, char *err, size_t errn)
{
    pld_win_sys_t *sys = x->d->sys;
    uint64_t seen[(PLD_WIN_MAX_RANKS + 63) / 64] = {0}; /* senders with an earlier unmatched receive */
    for (int i = 0; i < x->nrecv && x->nmatched < x->nrecv; i++) {
        const int q = x->peer[i];
        if (x->matched[i] || (seen[q / 64] >> (q % 64) & 1))
            continue;
        seen[q / 64] |= (uint64_t)1 << (q % 64);
        int flag = 0, count = 0;
        MPI_Message msg;
        MPI_Status stat;
        int rc = MPI_Improbe(q, XFER_TAG, x->d->sig, &flag, &msg, &stat);
        sys->counters.mpi_calls++;
        if (rc == MPI_SUCCESS && flag)
            rc = MPI_Get_count(&stat, MPI_BYTE, &count);
        if (rc != MPI_SUCCESS)
            return pld_win_mpi_fail(sys, "MPI_Improbe(transfers)", rc, err, errn), -1;
        if (!flag)
            continue;
        if (count < 0 || (size_t)count > x->want[i]) {
            /* sticky: a wait loop's next pld_win_poll reports it */
            pld_win_fail(sys, PLD_E_RUNTIME, err, errn,
                         "domain rank %d sent %d bytes, more than the %zu bytes this rank's receive holds (a "
                         "mismatched exchange)",
                         q, count, x->want[i]);
            pld_win_stick(sys, PLD_E_RUNTIME);
            return -1;
        }
        rc = MPI_Imrecv(x->dst[i], count, MPI_BYTE, &msg, &x->req[i]);
        sys->counters.mpi_calls++;
        if (rc != MPI_SUCCESS)
            return pld_win_mpi_fail(sys, "MPI_Imrecv(transfers)", rc, err, errn), -1;
        x->matched[i] = 1;
        x->nmatched++;
    }
    return 0;
}

int pld_win_xset_test(pld_win_xset_t *x, int *done, char *err, size_t errn)
{
    pld_win_sys_t *sys = x->d->sys;
    *done = x->ndone;
    if (sys->sticky != PLD_OK)
        return pld_win_sticky(sys, err, errn), -1;
    if (x->ndone == x->n)
        return 1;
    if (xset_match(x, err, errn) != 0)
        return -1;
    /* one MPI entry for the requests under way: each idle one may yield the core */
    int out = 0;
    int rc = MPI_Testsome(x->n, x->req, &out, x->idx, x->st);
    sys->counters.mpi_calls++;
    if (rc == MPI_ERR_IN_STATUS) {
        for (int k = 0; k < out; k++)
            if (x->st[k].MPI_ERROR != MPI_SUCCESS && x->st[k].MPI_ERROR != MPI_ERR_PENDING) {
                rc = x->st[k].MPI_ERROR;
                break;
            }
    }
    if (rc != MPI_SUCCESS) {
        pld_win_mpi_fail(sys, "MPI_Testsome(transfers)", rc, err, errn);
        return -1;
    }
    for (int k = 0; k < out && out != MPI_UNDEFINED; k++) {
        const int i = x->idx[k];
        x->ndone++;
        if (i >= x->nrecv) {
            sys->status->msgs_applied++; /* the deadlock detector's count: see pld_win.h */
            continue;
        }
        int count = 0;
        PLD_MPI_NOTE(MPI_Get_count(&x->st[k], MPI_BYTE, &count));
        x->got[i] = count;
        sys->counters.xrecvs++;
    }
    *done = x->ndone;
    return x->ndone == x->n;
}

int pld_win_xset_size(const pld_win_xset_t *x)
{
    return x->n;
}

int64_t pld_win_xset_got(const pld_win_xset_t *x, int i)
{
    return i >= 0 && i < x->nrecv ? x->got[i] : -1;
}

void pld_win_xset_close(pld_win_xset_t *x)
{
    if (!x)
        return;
    pld_win_sys_t *sys = x->d ? x->d->sys : NULL;
    int orphan = 0;
    for (int i = 0; sys && i < x->n; i++) {
        if (x->req[i] == MPI_REQUEST_NULL)
            continue;
        if (i < x->nrecv) {
            PLD_MPI_NOTE(MPI_Cancel(&x->req[i]));
            PLD_MPI_NOTE(MPI_Wait(&x->req[i], MPI_STATUS_IGNORE));
        } else {
            PLD_MPI_NOTE(MPI_Request_free(&x->req[i]));
            orphan = 1;
        }
    }
    if (orphan) {
        /* not pld_mem: its fault injection must not lose the buffer; with no
         * room to record it the buffer stays allocated, unreferenced */
        xorphan_t *o = malloc(sizeof *o);
        if (o) {
            o->data = x->buf;
            o->next = xorphans;
            xorphans = o;
        }
        if (x->cached) { /* the cache goes with it */
            sys->xcache = NULL;
            sys->xcache_bytes = 0;
            sys->xcache_busy = 0;
        }
    } else if (x->cached) {
        sys->xcache_busy = 0;
    } else {
        pld_mem_free(x->buf);
    }
    pld_mem_free(x->req);
    pld_mem_free(x->got);
    pld_mem_free(x->peer);
    pld_mem_free(x->want);
    pld_mem_free(x->dst);
    pld_mem_free(x->matched);
    pld_mem_free(x->idx);
    pld_mem_free(x->st);
    pld_mem_free(x);
}
