/* pld_win_ops.c - data movement through a comm domain's window: put, get,
 * element-wise atomic add (MPI_Accumulate, or a lock word for FP16/BF16),
 * signal cells (notify, read_cell). Every call completes before it returns.
 * MPI calls per op follow shared/docs/platform.md §7.1. */
#include "pld_win_int.h"

#include "pld_mem.h"
#include "pld_trace.h"

#include <stdatomic.h>
#include <string.h>

/* Elements per FP16/BF16 read-modify-write step over MPI (the temporary
 * buffer holds one step). */
#define HALF_CHUNK 16384

/* FP16 / BF16 conversion: pld_dtype.h. */

/* dst[i] = dst[i] + src[i] for n halves (FP16 or BF16), computed in float. */
static void add_halves(char *dst, const char *src, size_t n, int bf)
{
    for (size_t i = 0; i < n; i++) {
        uint16_t a, b;
        memcpy(&a, dst + 2 * i, 2);
        memcpy(&b, src + 2 * i, 2);
        const uint16_t s = bf ? pld_f32_to_bf16(pld_bf16_to_f32(a) + pld_bf16_to_f32(b))
                              : pld_f32_to_f16(pld_f16_to_f32(a) + pld_f16_to_f32(b));
        memcpy(dst + 2 * i, &s, 2);
    }
}

/* ---- dtypes ---------------------------------------------------------------- */

/* The MPI type and size of a dtype the layer can add; MPI_DATATYPE_NULL with
 * *half set for FP16/BF16; MPI_DATATYPE_NULL and size 0 for the rest. */
static MPI_Datatype add_type(pld_dtype_t dt, size_t *size, int *half)
{
    *half = 0;
    switch (dt) {
    case PLD_DT_INT8: *size = 1; return MPI_INT8_T;
    case PLD_DT_UINT8: *size = 1; return MPI_UINT8_T;
    case PLD_DT_INT16: *size = 2; return MPI_INT16_T;
    case PLD_DT_UINT16: *size = 2; return MPI_UINT16_T;
    case PLD_DT_INT32: *size = 4; return MPI_INT32_T;
    case PLD_DT_UINT32: *size = 4; return MPI_UINT32_T;
    case PLD_DT_INT64:
    case PLD_DT_INDEX: *size = 8; return MPI_INT64_T;
    case PLD_DT_UINT64: *size = 8; return MPI_UINT64_T;
    case PLD_DT_FP32: *size = 4; return MPI_FLOAT;
    case PLD_DT_FP64: *size = 8; return MPI_DOUBLE;
    case PLD_DT_FP16: *size = 2; *half = 1; return MPI_DATATYPE_NULL;
    case PLD_DT_BF16: *size = 2; *half = 2; return MPI_DATATYPE_NULL;
    default: *size = 0; return MPI_DATATYPE_NULL;
    }
}

/* Local transport: element-wise dst += src (integers wrap). */
static void add_local(char *dst, const char *src, pld_dtype_t dt, size_t n)
{
#define ADD_INT(UT)                                                                                             \
    for (size_t i = 0; i < n; i++) {                                                                           \
        UT a, b;                                                                                               \
        memcpy(&a, dst + i * sizeof a, sizeof a);                                                              \
        memcpy(&b, src + i * sizeof b, sizeof b);                                                              \
        a = (UT)(a + b);                                                                                       \
        memcpy(dst + i * sizeof a, &a, sizeof a);                                                              \
    }
    switch (dt) {
    case PLD_DT_INT8:
    case PLD_DT_UINT8: ADD_INT(uint8_t) break;
    case PLD_DT_INT16:
    case PLD_DT_UINT16: ADD_INT(uint16_t) break;
    case PLD_DT_INT32:
    case PLD_DT_UINT32: ADD_INT(uint32_t) break;
    case PLD_DT_INT64:
    case PLD_DT_UINT64:
    case PLD_DT_INDEX: ADD_INT(uint64_t) break;
    case PLD_DT_FP32: ADD_INT(float) break;
    case PLD_DT_FP64: ADD_INT(double) break;
    case PLD_DT_FP16: add_halves(dst, src, n, 0); break;
    case PLD_DT_BF16: add_halves(dst, src, n, 1); break;
    default: break;
    }
#undef ADD_INT
}

/* ---- checks ------------------------------------------------------------------ */

/* Counts an op in the status epoch (put, add, notify). */
static void bump_epoch(pld_win_sys_t *sys) { sys->status->epoch++; }

static pld_status_t check_access(pld_win_dom_t *d, const char *what, int peer, size_t disp, size_t bytes,
                                 char *err, size_t errn)
{
    if (peer < 0 || peer >= d->size)
        return pld_win_fail(d->sys, PLD_E_RUNTIME, err, errn, "%s domain rank %d out of range (domain of %d ranks)",
                            what, peer, d->size);
    if (disp > d->extent || bytes > d->extent - disp)
        return pld_win_fail(d->sys, PLD_E_RUNTIME, err, errn,
                            "%s domain rank %d out of window bounds (offset %zu + %zu > size %zu)", what, peer, disp,
                            bytes, d->extent);
    return PLD_OK;
}

static pld_status_t flush(pld_win_dom_t *d, int peer, char *err, size_t errn)
{
    pld_win_sys_t *sys = d->sys;
    PLD_MPI_CHECK(MPI_Win_flush(peer, d->win));
    sys->counters.flushes++;
    sys->entered = d->tr == PLD_WIN_RMA || d->tr == PLD_WIN_HYBRID;
    return PLD_OK;
}

/* hybrid: a put/get/add/notify also applies the signals that have arrived
 * (a peer may be waiting for the answer to its flush request), unless this
 * rank served them less than SERVE_GAP_NS ago. Every serve is an MPI entry,
 * and an idle one yields the core (mpi_yield_when_idle): on an
 * oversubscribed node that can cost another rank's time slice, which
 * dominated a collective's steps when every op served. Waits, reads of a
 * cell, drains and barriers always serve; this serve is only progress for
 * the peers, never a condition of this rank's own ordering. It does not wait
 * for this rank's own signals in flight: a notify is posted, and only what
 * comes before it is ordered before it (pld_win_msg.c). */
#define SERVE_GAP_NS 20000

/* A batch's MPI_Win_flush_all is a long MPI entry; the serve the next op
 * would make right after it found nothing to do in the traces and cost an
 * idle entry's yield (20-45 µs per all_to_all_v call). So the end of a flush
 * restarts the gap's clock, but only while a real serve is at most
 * PLD_WIN_SERVE_STALE_NS old (pld_win_int.h): a rank that loops on batched
 * ops (the runs of a strided get of a remote flag) still serves at least
 * that often. */

static void batch_served(pld_win_sys_t *sys)
{
    const int64_t now = pld_trace_now();
    if (now - sys->applied_ns < PLD_WIN_SERVE_STALE_NS)
        sys->served_ns = now;
}

static void serve(pld_win_dom_t *d)
{
    pld_win_sys_t *sys = d->sys;
    if (sys->nhybrid > 0 && pld_trace_now() - sys->served_ns >= SERVE_GAP_NS)
        pld_win_msg_serve_all(sys);
}

/* Completes a put/get to peer, or leaves it to pld_win_batch_end. */
static pld_status_t complete(pld_win_dom_t *d, int peer, char *err, size_t errn)
{
    if (d->sys->batch > 0) {
        d->batched = 1;
        return PLD_OK;
    }
    return flush(d, peer, err, errn);
}

void pld_win_batch_begin(pld_win_sys_t *sys)
{
    sys->batch++;
}

pld_status_t pld_win_batch_end(pld_win_sys_t *sys, char *err, size_t errn)
{
    pld_status_t st = PLD_OK;
    if (sys->batch <= 0 || --sys->batch > 0)
        return PLD_OK;
    for (pld_win_dom_t *d = sys->doms; d; d = d->next) {
        if (!d->batched)
            continue;
        d->batched = 0;
        int rc = MPI_Win_flush_all(d->win);
#ifdef PLD_TESTING
        rc = pld_win_test_rc(sys, "MPI_Win_flush_all(d->win)", rc);
#endif
        sys->counters.mpi_calls++;
        sys->counters.flushes++;
        sys->entered = 1;
        batch_served(sys);
        if (rc != MPI_SUCCESS && st == PLD_OK)
            st = pld_win_mpi_fail(sys, "MPI_Win_flush_all", rc, err, errn);
    }
    return st;
}

/* The peer's window mapped here (shm, local; hybrid: a member on this
 * node), or NULL when it is reached through MPI. */
static char *mapped(const pld_win_dom_t *d, int peer)
{
    return d->tr == PLD_WIN_RMA ? NULL : d->peer[peer];
}

/* ---- put / get ---------------------------------------------------------------- */

pld_status_t pld_win_put(pld_win_dom_t *d, int peer, size_t disp, const void *src, size_t bytes, char *err, size_t errn)
{
    pld_win_sys_t *sys = d->sys;
    pld_status_t st = pld_win_sticky(sys, err, errn);
    if (st != PLD_OK)
        return st;
    st = check_access(d, "put to", peer, disp, bytes, err, errn);
    if (st != PLD_OK)
        return st;
    sys->counters.puts++;
    sys->spin = 0;
    bump_epoch(sys);
    if (bytes == 0)
        return PLD_OK;
    serve(d);
    char *to = mapped(d, peer);
    if (to) {
        memmove(to + disp, src, bytes);
        return PLD_OK;
    }
    for (size_t o = 0; o < bytes; o += sys->chunk_bytes) {
        const int c = (int)(bytes - o < sys->chunk_bytes ? bytes - o : sys->chunk_bytes);
        PLD_MPI_CHECK(MPI_Put((const char *)src + o, c, MPI_BYTE, peer, d->off[peer] + (MPI_Aint)(disp + o), c,
                              MPI_BYTE, d->win));
    }
    return complete(d, peer, err, errn);
}

pld_status_t pld_win_get(pld_win_dom_t *d, int peer, size_t disp, void *dst, size_t bytes, char *err, size_t errn)
{
    pld_win_sys_t *sys = d->sys;
    pld_status_t st = pld_win_sticky(sys, err, errn);
    if (st != PLD_OK)
        return st;
    st = check_access(d, "get from", peer, disp, bytes, err, errn);
    if (st != PLD_OK)
        return st;
    sys->counters.gets++;
    sys->spin = 0;
    if (bytes == 0)
        return PLD_OK;
    serve(d);
    const char *from = mapped(d, peer);
    if (from) {
        memmove(dst, from + disp, bytes);
        return PLD_OK;
    }
    for (size_t o = 0; o < bytes; o += sys->chunk_bytes) {
        const int c = (int)(bytes - o < sys->chunk_bytes ? bytes - o : sys->chunk_bytes);
        PLD_MPI_CHECK(
            MPI_Get((char *)dst + o, c, MPI_BYTE, peer, d->off[peer] + (MPI_Aint)(disp + o), c, MPI_BYTE, d->win));
    }
    return complete(d, peer, err, errn);
}

/* ---- atomic add --------------------------------------------------------------- */

/* Waits for, and takes, the FP16/BF16 lock word of peer's window (value: our
 * domain rank + 1). Gives up when the status board says abort. */
static pld_status_t half_lock(pld_win_dom_t *d, int peer, char *err, size_t errn)
{
    pld_win_sys_t *sys = d->sys;
    const int32_t mine = d->rank + 1, zero = 0;
    for (unsigned long n = 1;; n++) {
        int32_t old = 0;
        if (d->tr == PLD_WIN_SHM) {
            _Atomic int32_t *w = (_Atomic int32_t *)(void *)(d->peer[peer] + d->ctl + PLD_WIN_LOCK_OFF);
            old = 0;
            if (atomic_compare_exchange_strong_explicit(w, &old, mine, memory_order_acquire, memory_order_relaxed))
                return PLD_OK;
        } else {
            PLD_MPI_CHECK(MPI_Compare_and_swap(&mine, &zero, &old, MPI_INT32_T, peer,
                                               d->off[peer] + (MPI_Aint)(d->ctl + PLD_WIN_LOCK_OFF), d->win));
            pld_status_t st = flush(d, peer, err, errn);
            if (st != PLD_OK)
                return st;
            if (old == 0)
                return PLD_OK;
        }
        sys->counters.lock_spins++;
        pld_win_poll(sys);
        if (n % 1024 == 0 && pld_win_status_aborted(sys))
            return pld_win_fail(sys, PLD_E_RUNTIME, err, errn,
                                "aborted while waiting for the FP16/BF16 add lock of domain rank %d (held by %d)", peer,
                                old - 1);
    }
}

static pld_status_t half_unlock(pld_win_dom_t *d, int peer, char *err, size_t errn)
{
    pld_win_sys_t *sys = d->sys;
    if (d->tr == PLD_WIN_SHM) {
        _Atomic int32_t *w = (_Atomic int32_t *)(void *)(d->peer[peer] + d->ctl + PLD_WIN_LOCK_OFF);
        atomic_store_explicit(w, 0, memory_order_release);
        return PLD_OK;
    }
    /* CAS rather than a REPLACE: only one kind of atomic op ever touches the
     * lock word (MPI's default accumulate_ops is same_op_no_op). */
    const int32_t mine = d->rank + 1, zero = 0;
    int32_t old = 0;
    PLD_MPI_CHECK(MPI_Compare_and_swap(&zero, &mine, &old, MPI_INT32_T, peer,
                                       d->off[peer] + (MPI_Aint)(d->ctl + PLD_WIN_LOCK_OFF), d->win));
    pld_status_t st = flush(d, peer, err, errn);
    if (st == PLD_OK && old != mine)
        return pld_win_fail(sys, PLD_E_RUNTIME, err, errn, "FP16/BF16 add lock of domain rank %d was %d, not ours",
                            peer, (int)old);
    return st;
}

/* FP16/BF16 add under the target's lock: shm in place, rma by get, add, put. */
static pld_status_t add_half(pld_win_dom_t *d, int peer, size_t disp, const char *src, size_t count, int bf,
                             char *err, size_t errn)
{
    pld_win_sys_t *sys = d->sys;
    char *tmp = NULL;
    if (d->tr != PLD_WIN_SHM) {
        tmp = pld_mem_alloc(2 * (count < HALF_CHUNK ? count : HALF_CHUNK));
        if (!tmp)
            return pld_win_fail(sys, PLD_E_NOMEM, err, errn, "out of memory in an FP16/BF16 atomic add");
    }
    pld_status_t st = half_lock(d, peer, err, errn);
    if (st != PLD_OK) {
        pld_mem_free(tmp);
        return st;
    }
    if (d->tr == PLD_WIN_SHM) {
        add_halves(d->peer[peer] + disp, src, count, bf);
    } else {
        for (size_t o = 0; o < count && st == PLD_OK; o += HALF_CHUNK) {
            const size_t c = count - o < HALF_CHUNK ? count - o : HALF_CHUNK;
            const MPI_Aint td = d->off[peer] + (MPI_Aint)(disp + 2 * o);
            int rc = MPI_Get(tmp, (int)(2 * c), MPI_BYTE, peer, td, (int)(2 * c), MPI_BYTE, d->win);
            sys->counters.mpi_calls++;
            if (rc != MPI_SUCCESS) {
                st = pld_win_mpi_fail(sys, "MPI_Get", rc, err, errn);
                break;
            }
            if ((st = flush(d, peer, err, errn)) != PLD_OK)
                break;
            add_halves(tmp, src + 2 * o, c, bf);
            rc = MPI_Put(tmp, (int)(2 * c), MPI_BYTE, peer, td, (int)(2 * c), MPI_BYTE, d->win);
            sys->counters.mpi_calls++;
            if (rc != MPI_SUCCESS) {
                st = pld_win_mpi_fail(sys, "MPI_Put", rc, err, errn);
                break;
            }
            st = flush(d, peer, err, errn);
        }
    }
    /* Unlock even after a failure, so peers do not wait forever; the first
     * error wins. */
    char uerr[256];
    pld_status_t ust = half_unlock(d, peer, uerr, sizeof uerr);
    if (st == PLD_OK && ust != PLD_OK) {
        st = ust;
        pld_win_fail(sys, ust, err, errn, "%s", uerr);
    }
    pld_mem_free(tmp);
    return st;
}

pld_status_t pld_win_add(pld_win_dom_t *d, int peer, size_t disp, const void *src, pld_dtype_t dt, size_t count,
                         char *err, size_t errn)
{
    pld_win_sys_t *sys = d->sys;
    size_t es = 0;
    int half = 0;
    MPI_Datatype mt = add_type(dt, &es, &half);
    pld_status_t st = pld_win_sticky(sys, err, errn);
    if (st != PLD_OK)
        return st;
    if (es == 0)
        return pld_win_fail(sys, PLD_E_RUNTIME, err, errn, "atomic add is not supported for %s", pld_dtype_name(dt));
    st = check_access(d, "atomic add to", peer, disp, count > SIZE_MAX / es ? SIZE_MAX : count * es,
                                   err, errn);
    if (st != PLD_OK)
        return st;
    if (disp % es != 0)
        return pld_win_fail(sys, PLD_E_RUNTIME, err, errn,
                            "atomic add to domain rank %d at offset %zu, not a multiple of the element size %zu", peer,
                            disp, es);
    sys->counters.adds++;
    sys->spin = 0;
    bump_epoch(sys);
    if (count == 0)
        return PLD_OK;
    if (d->tr == PLD_WIN_LOCAL) {
        add_local(d->base + disp, src, dt, count);
        return PLD_OK;
    }
    /* hybrid: every add goes through MPI_Accumulate on the MPI_Win_create
     * window, same-node members included, so that adds to one element stay
     * atomic with each other (one mechanism) */
    serve(d);
    if (half)
        return add_half(d, peer, disp, src, count, half == 2, err, errn);
    const size_t step = sys->chunk_bytes / es > 0 ? sys->chunk_bytes / es : 1;
    for (size_t o = 0; o < count; o += step) {
        const int c = (int)(count - o < step ? count - o : step);
        PLD_MPI_CHECK(MPI_Accumulate((const char *)src + o * es, c, mt, peer, d->off[peer] + (MPI_Aint)(disp + o * es),
                                     c, mt, MPI_SUM, d->win));
    }
    return flush(d, peer, err, errn);
}

/* ---- signal cells ------------------------------------------------------------- */

pld_status_t pld_win_notify(pld_win_dom_t *d, int peer, size_t disp, int32_t v, int set, char *err, size_t errn)
{
    pld_win_sys_t *sys = d->sys;
    pld_status_t st = pld_win_sticky(sys, err, errn);
    if (st != PLD_OK)
        return st;
    st = check_access(d, "notify to", peer, disp, 4, err, errn);
    if (st != PLD_OK)
        return st;
    if (disp % 4 != 0)
        return pld_win_fail(sys, PLD_E_RUNTIME, err, errn,
                            "notify to domain rank %d at offset %zu: a signal cell must be 4-byte aligned", peer, disp);
    if (sys->batch > 0)
        return pld_win_fail(sys, PLD_E_USAGE, err, errn, "notify inside a batch of transfers (its puts are not complete)");
    sys->counters.notifies++;
    sys->spin = 0;
    bump_epoch(sys);
    const int by_msg = d->tr == PLD_WIN_HYBRID && !d->peer[peer];
    if (!by_msg)
        serve(d);
    if (d->tr == PLD_WIN_LOCAL) {
        int32_t c;
        memcpy(&c, d->base + disp, 4);
        c = set ? v : (int32_t)((uint32_t)c + (uint32_t)v);
        memcpy(d->base + disp, &c, 4);
        return PLD_OK;
    }
    if (d->tr == PLD_WIN_HYBRID) {
        /* puts/adds were complete when issued; a member on this node gets a
         * C11 release RMW on the shared segment, one elsewhere a message
         * that its owner applies the same way */
        _Atomic int32_t *c = (_Atomic int32_t *)(void *)(d->peer[peer] ? d->peer[peer] + disp : NULL);
        if (!c) {
            /* the message first, then the serve every op does: an MPI entry
             * before the send would be on the round trip's path */
            st = pld_win_msg_notify(d, peer, disp, v, set, err, errn);
            serve(d);
            return st;
        }
        if (set)
            atomic_store_explicit(c, v, memory_order_release);
        else
            atomic_fetch_add_explicit(c, v, memory_order_release);
        return PLD_OK;
    }
    /* Release: this rank's plain stores to its own window become visible
     * before the cell changes (puts/adds were flushed when issued). */
    PLD_MPI_CHECK(MPI_Win_sync(d->win));
    if (d->tr == PLD_WIN_SHM) {
        _Atomic int32_t *c = (_Atomic int32_t *)(void *)(d->peer[peer] + disp);
        if (set)
            atomic_store_explicit(c, v, memory_order_release);
        else
            atomic_fetch_add_explicit(c, v, memory_order_release);
        return PLD_OK;
    }
    PLD_MPI_CHECK(MPI_Accumulate(&v, 1, MPI_INT32_T, peer, d->off[peer] + (MPI_Aint)disp, 1, MPI_INT32_T,
                                 set ? MPI_REPLACE : MPI_SUM, d->win));
    return flush(d, peer, err, errn);
}

/* A cell offset read_cell and peek_cell accept: 4-aligned, below the extent. */
static int cell_ok(const pld_win_dom_t *d, size_t disp)
{
    return disp % 4 == 0 && disp <= d->extent - 4;
}

int32_t pld_win_read_cell(pld_win_dom_t *d, size_t disp)
{
    if (!cell_ok(d, disp))
        return 0;
    if (d->tr == PLD_WIN_LOCAL) {
        int32_t c;
        memcpy(&c, d->base + disp, 4);
        return c;
    }
    /* Acquire: MPI_Win_sync makes peers' completed updates (and, after the
     * cell is seen, the data they released) visible to plain loads. A
     * failure becomes the sticky error (the caller's next poll returns it). */
    pld_win_sys_t *sys = d->sys;
    if (d->tr == PLD_WIN_HYBRID) /* apply the signals that have arrived (every domain's: pld_win_poll leaves it to us) */
        pld_win_msg_serve_all(sys);
    else
        PLD_MPI_NOTE(MPI_Win_sync(d->win));
    sys->entered = d->tr == PLD_WIN_RMA || d->tr == PLD_WIN_HYBRID;
    return atomic_load_explicit((_Atomic int32_t *)(void *)(d->base + disp), memory_order_acquire);
}

int pld_win_peek_cell(pld_win_dom_t *d, size_t disp, int32_t *v)
{
    if (d->tr != PLD_WIN_HYBRID || !cell_ok(d, disp))
        return 0;
    /* every update of a hybrid cell is a C11 release RMW (a member on this
     * node, or this rank applying a message in a serve): the acquire load
     * sees the data released before it, as read_cell's does */
    *v = atomic_load_explicit((_Atomic int32_t *)(void *)(d->base + disp), memory_order_acquire);
    return 1;
}
