/* pld_coll_gather.c - barrier, broadcast, reduce_scatter, allgather and
 * all_to_all (docs/pld_semantics.md §2.15-§2.19), and the rows by message
 * that allgather, all_to_all and all_to_all_v send between hosts. */
#include "pld_coll_int.h"
#include "pld_mem.h"

#include <string.h>

/* ------------------------------------------------------------ barrier / broadcast / reduce_scatter */

pld_status_t pld_coll_barrier(coll_t *c)
{
    pld_status_t st;
    if ((st = pld_coll_bar(c, 0, 1)) != PLD_OK)
        return st;
    return pld_coll_clear(c, 0, 1);
}

pld_status_t pld_coll_broadcast(coll_t *c, const pld_coll_view_t *t, int64_t root)
{
    pld_status_t st = PLD_OK;
    void *buf = NULL;
    int kept = 0;
    int64_t N = numel_of(t->rank, t->shape);
    if (c->rail == PLD_COLL_INCORE) {
        /* barrier(1) -> full-slice get from root -> epilogue -1 (no post barrier) */
        int64_t off[PLD_MAX_RANK] = {0};
        TRY(pld_coll_bar(c, 0, 1));
        if (c->me != root) {
            if (!(buf = pld_coll_stage_buf(c, t->dt, N, &kept))) {
                st = pld_coll_oom(c);
                goto done;
            }
            TRY(pld_coll_xfer(c, t, (int)root, off, t->shape, buf, 0));
            TRY(pld_coll_local_io(c, t, off, t->shape, buf, 1));
        }
        TRY(pld_coll_clear(c, 0, 1));
    } else {
        /* per 256-element tile: barrier (t + 1), non-roots copy root's tile */
        pld_coll_view_t flat;
        if (N <= 0) {
            pld_coll_warn(c, PLD_COLL_W_GUARD,
                      "%s (HOST builtin) does nothing: the builtin kernel returns early when the target has no "
                      "elements",
                      c->cname);
            goto done;
        }
        if (!pld_coll_view_packed(t)) {
            st = pld_coll_fail(c, "%s: the target must be a packed window view", c->cname);
            goto done;
        }
        pld_coll_flat_desc(t, &flat, N);
        int64_t ntiles = cdiv(N, HOST_TILE);
        if (!(buf = pld_coll_alloc_elems(t->dt, HOST_TILE))) {
            st = pld_coll_oom(c);
            goto done;
        }
        for (int64_t k = 0; k < ntiles; k++) {
            int64_t lo = k * HOST_TILE, n = N - lo < HOST_TILE ? N - lo : HOST_TILE;
            TRY(pld_coll_bar(c, 0, (int32_t)(k + 1)));
            if (c->me != root) {
                TRY(pld_coll_xfer1(c, &flat, (int)root, lo, n, buf, 0));
                TRY(pld_coll_xfer1(c, &flat, c->me, lo, n, buf, 1));
            }
        }
        TRY(pld_coll_clear(c, 0, (int32_t)ntiles));
    }
done:
    pld_coll_step_bufs_done(c, buf, kept);
    return st;
}

pld_status_t pld_coll_reduce_scatter(coll_t *c, const pld_coll_view_t *t)
{
    pld_status_t st = PLD_OK;
    void *acc = NULL, *tmp = NULL;
    int64_t SIZE = t->shape[1];
    if (c->rail == PLD_COLL_INCORE) {
        /* barrier(1) -> own row me + peers' rows me -> barrier(2) -> store -> -2 */
        acc = pld_coll_alloc_elems(t->dt, SIZE);
        tmp = pld_coll_alloc_elems(t->dt, SIZE);
        if (!acc || !tmp) {
            st = pld_coll_oom(c);
            goto done;
        }
        TRY(pld_coll_bar(c, 0, 1));
        TRY(pld_coll_xfer_rows(c, t, c->me, c->me, 1, acc, 0));
        for (int p = 0; p < c->P; p++) {
            if (p == c->me)
                continue;
            TRY(pld_coll_xfer_rows(c, t, p, c->me, 1, tmp, 0));
            TRY(pld_coll_fold(c, PLD_K_ADD, acc, tmp, t->dt, SIZE));
        }
        TRY(pld_coll_bar(c, 0, 2));
        TRY(pld_coll_xfer_rows(c, t, c->me, c->me, 1, acc, 1));
        TRY(pld_coll_clear(c, 0, 2));
    } else {
        /* ready barrier -> tiles of row me reduced and stored -> barrier (2) -> -2 */
        acc = pld_coll_alloc_elems(t->dt, HOST_TILE);
        tmp = pld_coll_alloc_elems(t->dt, HOST_TILE);
        if (!acc || !tmp) {
            st = pld_coll_oom(c);
            goto done;
        }
        TRY(pld_coll_bar(c, 0, 1));
        for (int64_t lo = 0; lo < SIZE; lo += HOST_TILE) {
            int64_t n = SIZE - lo < HOST_TILE ? SIZE - lo : HOST_TILE;
            int64_t off[2] = {c->me, lo}, ext[2] = {1, n};
            TRY(pld_coll_xfer(c, t, c->me, off, ext, acc, 0));
            for (int p = 0; p < c->P; p++) {
                if (p == c->me)
                    continue;
                TRY(pld_coll_xfer(c, t, p, off, ext, tmp, 0));
                TRY(pld_coll_fold(c, PLD_K_ADD, acc, tmp, t->dt, n));
            }
            TRY(pld_coll_xfer(c, t, c->me, off, ext, acc, 1));
        }
        TRY(pld_coll_bar(c, 0, 2));
        TRY(pld_coll_clear(c, 0, 2));
    }
done:
    pld_mem_free(acc);
    pld_mem_free(tmp);
    return st;
}

/* ------------------------------------------------------------ rows by message */

/* The row exchanges whose receivers know their sources (allgather,
 * all_to_all, all_to_all_v) move their rows between hosts as two-sided
 * messages instead of puts, on a hybrid domain when the step may batch
 * (docs/transport.md, "Row exchanges by messages"). Every rank posts a
 * receive of MR rows from each member on another host, straight into its own
 * target rows [q * MR, (q + 1) * MR), before it sends, and sends each of
 * them its rows (a message even for none: the receive waits for one). It
 * waits for every transfer before the protocol's barrier; all_to_all_v's
 * receiver then sets recv_counts[q] itself to the rows that arrived (the cell
 * changes after its data is in place, as after a put and its notify, and
 * through the owner's atomic, the mechanism of every signal from another
 * host). */

/* The bytes of `rows` rows of the rank-2 tensor t. */
static size_t row_bytes(const pld_coll_view_t *t, int64_t rows)
{
    return (size_t)rows * (size_t)t->shape[1] * (size_t)pld_dtype_bytes(t->dt);
}

/* The members on other hosts when rows of MR x t's columns may go by message
 * (msgs_ok, a batched step, within one MPI count), else none. */
uint64_t pld_coll_far_members(const coll_t *c, int batched, const pld_coll_view_t *t, int64_t MR)
{
    uint64_t far = 0;
    if (!batched || !pld_coll_msgs_ok(c) || row_bytes(t, MR) > (size_t)INT32_MAX)
        return 0;
    for (int q = 0; q < c->P; q++)
        if (pld_win_xset_two_sided(c->dom, q))
            far |= RBIT(q);
    return far;
}

/* Whether the rows from q land in a bounce buffer first: when t is not
 * packed; pldrun_testing also takes that path for every odd q, so that the
 * hybrid tests (packed targets) cover both. */
static int far_bounced(const pld_coll_view_t *t, int q)
{
#ifdef PLD_TESTING
    if (q % 2)
        return 1;
#else
    (void)q;
#endif
    return !pld_coll_view_packed(t);
}

/* Posts the receives of the rows of every member in fr->far: rows
 * [q * MR, (q + 1) * MR) of t in this rank's memory, or slot j (the j-th
 * member of far) of fr->bounce (far_bounced). */
pld_status_t pld_coll_far_post(coll_t *c, const pld_coll_view_t *t, far_rows_t *fr)
{
    const size_t cap = row_bytes(t, fr->MR);
    char err[256];
    int nf = 0, nb = 0;
    for (int q = 0; q < c->P; q++)
        if (fr->far & RBIT(q)) {
            nf++;
            nb += far_bounced(t, q);
        }
    if (pld_win_xset_open(c->dom, 2 * nf, cap * (size_t)nf, &fr->xs, err, sizeof err) != PLD_OK)
        return pld_coll_xset_fail(c, err);
    if (nb > 0 && !(fr->bounce = pld_mem_alloc(cap * (size_t)nf)))
        return pld_coll_oom(c);
    for (int q = 0, j = 0; q < c->P; q++) {
        if (!(fr->far & RBIT(q)))
            continue;
        int64_t idx[2] = {q * fr->MR, 0};
        void *dst = far_bounced(t, q) ? fr->bounce + cap * (size_t)j : pld_coll_at(t, idx);
        j++;
        if (pld_win_xset_recv(fr->xs, q, dst, cap, PLD_XSET_SIZED, err, sizeof err) != PLD_OK)
            return pld_coll_xset_fail(c, err);
    }
    return PLD_OK;
}

/* Sends rows [row, row + rows) of `in` to dest, for its target rows from
 * me * MR (far_post's receive there), staged through `stage` when they are
 * not one run. A put event in the trace: rows written into dest's window. */
pld_status_t pld_coll_far_send(coll_t *c, const pld_coll_view_t *in, const pld_coll_view_t *t, const far_rows_t *fr, int dest,
                             int64_t row, int64_t rows, char *stage)
{
    const void *src = NULL;
    char err[256];
    pld_ev_t ev;
    if (c->trace)
        c->h->ev_init(c->ctx, &ev, PLD_EV_PUT, c->opname);
    pld_status_t st = rows > 0 ? pld_coll_push_src(c, in, t, row, rows, stage, &src) : PLD_OK;
    const size_t bytes = row_bytes(t, rows);
    if (st == PLD_OK &&
        pld_win_xset_send(fr->xs, dest, src, bytes, row_bytes(t, fr->MR), PLD_XSET_SIZED, err, sizeof err) != PLD_OK)
        st = pld_coll_xset_fail(c, err);
    if (st != PLD_OK)
        return st;
    *c->bytes_moved += (uint64_t)bytes;
    if (c->trace) {
        int64_t idx[2] = {c->me * fr->MR, 0};
        pld_coll_trace_msg(c, &ev, t, dest, idx, bytes);
    }
    return PLD_OK;
}

/* Waits for every transfer of fr, then for each member q in fr->far: its
 * rows into t (from the bounce buffer); with recv_counts rc,
 * rc[q] = the rows that arrived, else exactly MR rows must have. */
pld_status_t pld_coll_far_land(coll_t *c, const pld_coll_view_t *t, const pld_coll_view_t *rc, const far_rows_t *fr)
{
    const far_wait_t w = {c, fr->far, "rows"};
    pld_status_t st = c->h->xset_wait(c->ctx, fr->xs, pld_coll_describe_far_wait, &w);
    const size_t row = row_bytes(t, 1);
    for (int q = 0, j = 0; q < c->P && st == PLD_OK; q++) {
        if (!(fr->far & RBIT(q)))
            continue;
        const int64_t got = pld_win_xset_got(fr->xs, j);
        if (got < 0 || (size_t)got % row != 0 || (!rc && (size_t)got != (size_t)fr->MR * row))
            return pld_coll_fail(c, rc ? "%s: rank %d sent %lld bytes, not whole rows of %zu bytes (a mismatched call)"
                                   : "%s: rank %d sent %lld bytes, not its row of %zu bytes (a mismatched call)",
                                c->cname, q, (long long)got, row);
        const int64_t rows = (int64_t)((size_t)got / row);
        int64_t off[2] = {q * fr->MR, 0}, ext[2] = {rows, t->shape[1]}, cell[2] = {q, 0};
        if (far_bounced(t, q) && rows > 0)
            st = pld_coll_local_io(c, t, off, ext, fr->bounce + (size_t)fr->MR * row * (size_t)j, 1);
        if (st == PLD_OK && rc)
            st = c->h->notify(c->ctx, c->me, pld_coll_disp(c, rc, cell), (int32_t)rows, 1);
        j++;
    }
    return st;
}

void pld_coll_far_done(far_rows_t *fr)
{
    pld_win_xset_close(fr->xs);
    pld_mem_free(fr->bounce);
}

/* ------------------------------------------------------------ allgather / all_to_all */

pld_status_t pld_coll_gather(coll_t *c, const pld_coll_view_t *in, const pld_coll_view_t *t, int a2a)
{
    pld_status_t st = PLD_OK;
    void *buf = NULL;
    far_rows_t fr = {0, 1, NULL, NULL}; /* the rows to and from other hosts */
    int kept = 0;
    const int64_t SIZE = t->shape[1];
    /* across hosts the puts go out as one batch (all_to_all: a buffer per
     * destination); the barrier's notifies follow them, as one by one */
    const int batched = pld_coll_rows_batched(c);
    const int nbuf = batched && a2a ? c->P : 1;
    if (!(buf = pld_coll_stage_buf(c, t->dt, SIZE * nbuf, &kept))) {
        st = pld_coll_oom(c);
        goto done;
    }
    /* the members on other hosts: rows by message */
    if ((fr.far = pld_coll_far_members(c, batched, t, 1)) != 0)
        TRY(pld_coll_far_post(c, t, &fr));
    if (batched)
        pld_win_batch_begin(c->win);
    /* push: local row (allgather: row 0; all_to_all: row dest) -> dest's target[me, :] */
    int order[PLD_WIN_MAX_RANKS];
    pld_coll_push_order(c, batched, order);
    const void *src = NULL;
    for (int i = 0, staged = 0; i < c->P && st == PLD_OK; i++) {
        int dest = order[i];
        char *b = (char *)buf + (nbuf > 1 ? (size_t)dest * (size_t)SIZE * (size_t)pld_dtype_bytes(t->dt) : 0);
        if (fr.far & RBIT(dest)) {
            st = pld_coll_far_send(c, in, t, &fr, dest, a2a ? dest : 0, 1, b);
            continue;
        }
        if (!staged++ || a2a)
            st = pld_coll_push_src(c, in, t, a2a ? dest : 0, 1, b, &src);
        if (st == PLD_OK)
            st = pld_coll_xfer_rows(c, t, dest, c->me, 1, (void *)src, 1);
    }
    if (batched)
        st = c->h->batch_end(c->ctx, st);
    if (st != PLD_OK)
        goto done;
    if (fr.far)
        TRY(pld_coll_far_land(c, t, NULL, &fr));
    TRY(pld_coll_bar(c, 0, 1));
    TRY(pld_coll_clear(c, 0, 1));
done:
    pld_coll_far_done(&fr);
    pld_coll_step_bufs_done(c, buf, kept);
    return st;
}
