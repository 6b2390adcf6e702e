/* pld_coll_a2av.c - pld.tensor.all_to_all_v (docs/pld_semantics.md §2.20)
 * on its three rails: up to MAX_RECV rows to every member, the counts into
 * the receivers' recv_counts; HOST and CHIP with a start and a completion
 * barrier on B blocks and the authoritative recv_counts fill, InCore with
 * one barrier after the rows. Rows to other hosts go by message
 * (pld_coll_gather.c). */
#include "pld_coll_int.h"

pld_status_t pld_coll_a2av(coll_t *c, const pld_coll_view_t *in, const pld_coll_view_t *t, const pld_coll_view_t *sc,
                           const pld_coll_view_t *rc, int64_t MR, int64_t B)
{
    const int incore = c->rail == PLD_COLL_INCORE;
    pld_status_t st = PLD_OK;
    void *buf = NULL;
    far_rows_t fr = {0, 0, NULL, NULL}; /* the rows to and from other hosts */
    int kept = 0;
    int64_t SIZE = t->shape[1];
    /* across hosts the puts to every destination go out as one batch (a
     * buffer per destination), and the recv_counts notifies follow them:
     * nobody reads either before the barrier after them (rows_batched) */
    const int batched = pld_coll_rows_batched(c);
    if (!(buf = pld_coll_stage_buf(c, t->dt, MR * SIZE * (batched ? c->P : 1), &kept))) {
        st = pld_coll_oom(c);
        goto done;
    }
    fr.far = pld_coll_far_members(c, batched, t, MR);
    fr.MR = MR;
    if (fr.far)
        TRY(pld_coll_far_post(c, t, &fr));
    /* start barrier (HOST / CHIP): no put before every rank entered the call */
    if (!incore) {
        for (int64_t b = 0; b < B; b++)
            TRY(pld_coll_arrive(c, b));
        for (int64_t b = 0; b < B; b++)
            TRY(pld_coll_await_all(c, b, 1));
    }
    if (batched)
        pld_win_batch_begin(c->win);
    int order[PLD_WIN_MAX_RANKS];
    pld_coll_push_order(c, batched, order);
    for (int pass = batched ? 0 : 1; pass < 2; pass++) {
        /* pass 0 (batched): the rows; pass 1: the count, then (not batched) the rows */
        if (pass == 1 && batched && (st = c->h->batch_end(c->ctx, PLD_OK)) != PLD_OK)
            goto done;
        for (int di = 0; di < c->P; di++) {
            int dest = order[di];
            int64_t cnt = pld_coll_read_count(sc, dest), rows = cnt < 0 ? 0 : cnt > MR ? MR : cnt;
            if (cnt != rows && pass == 1)
                pld_coll_warn(c, PLD_COLL_W_COUNTS,
                          "%s: send_counts[%d] = %lld is outside [0, MAX_RECV = %lld]; %lld rows are sent (counts "
                          "are clamped to [0, MAX_RECV]; further ones are not reported)",
                          c->cname, dest, (long long)cnt, (long long)MR, (long long)rows);
            int64_t cell[2] = {c->me, 0};
            char *b = (char *)buf + (batched ? (size_t)dest * (size_t)(MR * SIZE) * (size_t)pld_dtype_bytes(t->dt) : 0);
            if (pass == 1 && !(fr.far & RBIT(dest)))
                TRY(c->h->notify(c->ctx, dest, pld_coll_disp(c, rc, cell), (int32_t)rows, 1));
            if ((fr.far & RBIT(dest)) && pass == 0) {
                if ((st = pld_coll_far_send(c, in, t, &fr, dest, dest * MR, rows, b)) != PLD_OK) {
                    (void)c->h->batch_end(c->ctx, st);
                    goto done;
                }
            } else if (rows > 0 && pass == (batched ? 0 : 1)) {
                const void *src;
                if ((st = pld_coll_push_src(c, in, t, dest * MR, rows, b, &src)) == PLD_OK)
                    st = pld_coll_xfer_rows(c, t, dest, c->me * MR, rows, (void *)src, 1);
                if (st != PLD_OK) {
                    if (batched)
                        (void)c->h->batch_end(c->ctx, st);
                    goto done;
                }
            }
        }
    }
    if (fr.far)
        TRY(pld_coll_far_land(c, t, rc, &fr));
    if (incore) {
        TRY(pld_coll_bar(c, 0, 1));
        TRY(pld_coll_clear(c, 0, 1));
    } else {
        /* completion barrier, then the authoritative recv_counts fill */
        for (int64_t b = 0; b < B; b++)
            TRY(pld_coll_arrive(c, b));
        for (int64_t b = 0; b < B; b++)
            TRY(pld_coll_await_all(c, b, 2));
        for (int src = 0; src < c->P; src++) {
            int64_t cnt;
            if (src == c->me) {
                cnt = pld_coll_read_count(sc, c->me);
            } else {
                int32_t v = 0;
                int64_t off[2] = {c->me, 0}, ext[2] = {1, 1};
                TRY(c->h->region(c->ctx, src, sc, off, ext, &v, 0));
                cnt = v;
            }
            int64_t idx[2] = {src, 0};
            pld_elem_set_i(pld_coll_at(rc, idx), PLD_DT_INT32, 0, cnt < 0 ? 0 : cnt > MR ? MR : cnt);
        }
        for (int64_t b = 0; b < B; b++)
            TRY(pld_coll_clear(c, b, 2));
    }
done:
    pld_coll_far_done(&fr);
    pld_coll_step_bufs_done(c, buf, kept);
    return st;
}
