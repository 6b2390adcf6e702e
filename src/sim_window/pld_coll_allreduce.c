/* pld_coll_allreduce.c - pld.tensor.allreduce on its two rails, mesh and
 * ring each (docs/pld_semantics.md §2.14): the InCore composite's 16 KiB
 * chunks, the HOST builtin's 256-element tiles on core_num lanes, the rings'
 * reduce-scatter and all-gather rows; the mesh forms in merged steps
 * (pld_coll_step.c). */
#include "pld_coll_int.h"
#include "pld_mem.h"

/* ------------------------------------------------------------ allreduce */

/* InCore mesh (§2.14.1): barrier(1); per chunk: own + peers ascending, barrier
 * (k + 2), store; epilogue -(1 + chunks). */
pld_status_t pld_coll_allreduce_incore_mesh(coll_t *c, const pld_coll_view_t *t, int64_t op)
{
    pld_status_t st = PLD_OK;
    int esz = pld_dtype_bytes(t->dt);
    int64_t C = MESH_CHUNK_BYTES / esz, N, nch;
    pld_coll_view_t flat;
    int64_t boxo[PLD_MAX_RANK] = {0};
    int box = !pld_coll_fully_valid(t);
    void *acc = NULL;
    char *tmp = NULL;
    if (!box) {
        if (!pld_coll_view_packed(t))
            return pld_coll_fail(c, "%s: the target must be a packed row-major view on the InCore rail", c->cname);
        N = numel_of(t->rank, t->shape);
        pld_coll_flat_desc(t, &flat, N);
        nch = cdiv(N, C);
    } else {
        N = numel_of(t->rank, t->valid);
        if (N > C)
            return pld_coll_fail(c, "%s: a partial valid_shape must fit within one %d-byte mesh chunk (%lld elements of "
                                "%s hold %lld bytes)",
                                c->cname, MESH_CHUNK_BYTES, (long long)N, pld_dtype_name(t->dt),
                                (long long)(N * esz));
        nch = 1;
    }
    /* G chunks per step (merged_step: 1 under --collective-steps chunk) */
    const int64_t G = box ? 1 : pld_coll_merged_step(c, C, esz), W = G * C;
    const int batched = G > 1 && c->can_batch;
    int kept = 0;
    step_plan_t plan;
    if (G > 1) {
        const int64_t w = N < W ? N : W;
        pld_coll_step_plan(c, &plan);
        acc = pld_coll_step_bufs(c, t->dt, w, pld_coll_step_tmp(c, &plan, w, batched), &tmp, &kept);
    } else {
        acc = pld_coll_alloc_elems(t->dt, N < W ? N : W);
        tmp = pld_coll_alloc_elems(t->dt, N < W ? N : W);
    }
    if (!acc || !tmp) {
        st = pld_coll_oom(c);
        goto done;
    }
    TRY(pld_coll_bar(c, 0, 1));
    for (int64_t k0 = 0; k0 < nch; k0 += G) {
        const int64_t k = k0 + G < nch ? k0 + G - 1 : nch - 1; /* the step's last chunk */
        int64_t lo = k0 * C, n = box ? N : (N - lo < W ? N - lo : W);
        if (box) {
            for (int p = -1; p < c->P; p++) {
                int who = p < 0 ? c->me : p;
                if (p == c->me)
                    continue;
                TRY(pld_coll_xfer(c, t, who, boxo, t->valid, p < 0 ? acc : tmp, 0));
                if (p >= 0)
                    TRY(pld_coll_fold(c, pld_coll_binop_of(op), acc, tmp, t->dt, n));
            }
        } else if (G > 1) {
            /* the step's reads, folds, barrier and stores (merged_fold_step) */
            const step_bar_t sb = {.lanes = 1, .n = (int32_t)(k - k0 + 1), .g = (int32_t)(k + 2)};
            TRY(pld_coll_merged_fold_step(c, &plan, &sb, &flat, lo, n, pld_coll_binop_of(op), acc, tmp, batched));
            continue;
        } else {
            TRY(pld_coll_read_fold(c, &flat, lo, n, pld_coll_binop_of(op), acc, tmp, batched));
        }
        TRY(pld_coll_bar_n(c, 0, (int32_t)(k - k0 + 1), (int32_t)(k + 2)));
        TRY(box ? pld_coll_local_io(c, t, boxo, t->valid, acc, 1) : pld_coll_xfer1(c, &flat, c->me, lo, n, acc, 1));
    }
    TRY(pld_coll_clear(c, 0, (int32_t)(1 + nch)));
done:
    if (G > 1) {
        pld_coll_step_bufs_done(c, acc, kept);
    } else {
        pld_mem_free(acc);
        pld_mem_free(tmp);
    }
    return st;
}

/* A valid box that is a row-major prefix of the flat tensor: its length, or -1. */
static int64_t prefix_len(const pld_coll_view_t *t)
{
    for (int k = 0; k < t->rank; k++) {
        int ok = 1;
        for (int d = 0; d < k && ok; d++)
            ok = t->valid[d] == 1;
        for (int d = k + 1; d < t->rank && ok; d++)
            ok = t->valid[d] == t->shape[d];
        if (ok)
            return numel_of(t->rank, t->valid);
    }
    return t->rank == 0 ? 1 : numel_of(t->rank, t->valid) == 0 ? 0 : -1;
}

/* InCore ring (§2.14.2). */
pld_status_t pld_coll_allreduce_incore_ring(coll_t *c, const pld_coll_view_t *t, int64_t op)
{
    pld_status_t st = PLD_OK;
    const int P = c->P, me = c->me, left = (int)imod(me - 1, P);
    const int64_t NR = c->sig->shape[1];
    int esz = pld_dtype_bytes(t->dt), fp16 = t->dt == PLD_DT_FP16;
    int64_t SIZE = prefix_len(t), C = MESH_CHUNK_BYTES / esz;
    pld_coll_view_t flat;
    void *acc = NULL, *tmp = NULL;
    int64_t b[PLD_WIN_MAX_RANKS + 1];
    if (SIZE < 0)
        return pld_coll_fail(c, "%s: mode=\"ring\" target valid_shape must be a contiguous row-major prefix", c->cname);
    if (!pld_coll_view_packed(t))
        return pld_coll_fail(c, "%s: the target must be a packed row-major view on the InCore rail", c->cname);
    pld_coll_flat_desc(t, &flat, numel_of(t->rank, t->shape));
    for (int64_t i = 0; i <= NR; i++)
        b[i] = fp16 ? (cdiv(i * SIZE, 16 * NR) * 16 < SIZE ? cdiv(i * SIZE, 16 * NR) * 16 : SIZE) : i * SIZE / NR;
    int64_t maxseg = cdiv(SIZE, NR);
    if (fp16)
        maxseg = maxseg + 15 < SIZE ? maxseg + 15 : SIZE;
    int64_t nsub = cdiv(maxseg, C);
    /* G sub-chunks per step (ring_step): the step's first barrier (2 j0 + 1),
     * its reads, the rest of its barriers at once (credit 2 G - 1, wait for
     * 2 j1), its stores. Within a row every rank stores segment s of its own
     * copy while its right neighbour reads segment s + 1 of it, so no read
     * meets a store of the same row; a row's reads still follow every store
     * of the row before (its first barrier), and its stores every read of
     * its own sub-chunks: the per-chunk order, coarser (G = 1: it). */
    const int64_t G = pld_coll_ring_step(c, C, esz), W = G * C < maxseg ? G * C : maxseg;
    acc = pld_coll_alloc_elems(t->dt, W);
    tmp = pld_coll_alloc_elems(t->dt, W);
    if (!acc || !tmp) {
        st = pld_coll_oom(c);
        goto done;
    }
    for (int phase = 0; phase < 2; phase++) {
        for (int64_t k = 0; k + 1 < P; k++) {
            int64_t row = phase == 0 ? k : P - 1 + k;
            int64_t s = phase == 0 ? imod(me - k - 2, P) : imod(me - k - 1, P);
            for (int64_t j0 = 0; j0 < nsub; j0 += G) {
                const int64_t j1 = j0 + G < nsub ? j0 + G : nsub;
                int64_t lo = b[s] + j0 * C, hi = b[s] + j1 * C < b[s + 1] ? b[s] + j1 * C : b[s + 1];
                int active = lo < hi;
                TRY(pld_coll_bar(c, row, (int32_t)(2 * j0 + 1)));
                if (active) {
                    TRY(pld_coll_xfer1(c, &flat, left, lo, hi - lo, tmp, 0));
                    if (phase == 0) {
                        TRY(pld_coll_xfer1(c, &flat, me, lo, hi - lo, acc, 0));
                        TRY(pld_coll_fold(c, pld_coll_binop_of(op), acc, tmp, t->dt, hi - lo));
                    }
                }
                TRY(pld_coll_bar_n(c, row, (int32_t)(2 * (j1 - j0) - 1), (int32_t)(2 * j1)));
                if (active)
                    TRY(pld_coll_xfer1(c, &flat, me, lo, hi - lo, phase == 0 ? acc : tmp, 1));
            }
        }
    }
    for (int64_t r = 0; r < c->sig->shape[0]; r++)
        TRY(pld_coll_clear(c, r, (int32_t)(2 * nsub)));
done:
    pld_mem_free(acc);
    pld_mem_free(tmp);
    return st;
}

/* HOST mesh (§2.14.3): blocks b < B = min(core_num, S) on lanes [q, b]; ready
 * barrier, 256-element tiles block-cyclic with a lane barrier per tile, and
 * an epilogue of -(1 + tiles of the block). */
pld_status_t pld_coll_allreduce_host_mesh(coll_t *c, const pld_coll_view_t *t, int64_t op, int64_t core_num)
{
    pld_status_t st = PLD_OK;
    int64_t N = numel_of(t->rank, t->shape);
    int64_t S = c->sig->rank == 2 ? c->sig->shape[1] : 1;
    int64_t B = core_num < S ? core_num : S;
    pld_coll_view_t flat;
    char *acc = NULL;
    char *tmp = NULL;
    int esz = pld_dtype_bytes(t->dt);
    /* tracing: core b's steps go on block b's track (the builtin kernel runs
     * core_num blocks on a card; here they take turns), back on the call's
     * own at the end */
#define LANE(b) pld_coll_lane_track(c, (b), B)
    if (c->P > PLD_COLL_BUILTIN_MAX_RANKS || N <= 0) {
        pld_coll_warn(c, PLD_COLL_W_GUARD, "%s (HOST builtin) does nothing: the builtin kernel returns early when %s (%d here)",
                  c->cname, N <= 0 ? "the target has no elements" : "more than 16 ranks take part",
                  N <= 0 ? 0 : c->P);
        return PLD_OK;
    }
    if (!pld_coll_view_packed(t))
        return pld_coll_fail(c, "%s: the target must be a packed window view", c->cname);
    pld_coll_flat_desc(t, &flat, N);
    int64_t ntiles = cdiv(N, HOST_TILE), maxT = B > 0 ? cdiv(ntiles, B) : 0;
    /* rounds of B tiles per step (merged_step: 1 under --collective-steps chunk) */
    const int64_t R = B > 0 ? (pld_coll_merged_step(c, B * HOST_TILE, esz)) : 1;
    const int batched = R > 1 && c->can_batch;
    int kept = 0;
    step_plan_t plan;
    if (R > 1) {
        const int64_t w = R * B * HOST_TILE < N ? R * B * HOST_TILE : N;
        pld_coll_step_plan(c, &plan);
        acc = pld_coll_step_bufs(c, t->dt, w, pld_coll_step_tmp(c, &plan, w, batched), &tmp, &kept);
    } else {
        acc = pld_coll_alloc_elems(t->dt, B * HOST_TILE);
        tmp = pld_coll_alloc_elems(t->dt, HOST_TILE);
    }
    if (!acc || !tmp) {
        st = pld_coll_oom(c);
        goto done;
    }
    for (int64_t b = 0; b < B; b++) {
        LANE(b);
        TRY(pld_coll_arrive(c, b));
    }
    for (int64_t b = 0; b < B; b++) {
        LANE(b);
        TRY(pld_coll_await_all(c, b, 1));
    }
    for (int64_t j0 = 0; R > 1 && j0 < maxT; j0 += R) {
        /* rounds j0 .. j1-1 at once: tiles [j0*B, j1*B) are one contiguous
         * range; one merged step (merged_fold_step), in which every lane
         * passes its barriers of these rounds at once (credit + its tiles
         * in them, wait for 1 + its tiles so far) */
        const int64_t j1 = j0 + R < maxT ? j0 + R : maxT;
        const int64_t lo = j0 * B * HOST_TILE, hi = j1 * B * HOST_TILE < N ? j1 * B * HOST_TILE : N;
        const step_bar_t sb = {.host = 1, .lanes = B, .j0 = j0, .j1 = j1, .ntiles = ntiles};
        if (c->trace) /* the step's data moves cover every block's tiles: the collective's own track */
            c->h->track(c->ctx, -1, 0);
        TRY(pld_coll_merged_fold_step(c, &plan, &sb, &flat, lo, hi - lo, pld_coll_binop_of(op), acc, tmp, batched));
    }
    for (int64_t j = 0; R == 1 && j < maxT; j++) {
        for (int64_t b = 0; b < B; b++) {
            int64_t tile = b + j * B;
            if (tile >= ntiles)
                continue;
            int64_t lo = tile * HOST_TILE, n = N - lo < HOST_TILE ? N - lo : HOST_TILE;
            char *ab = acc + (size_t)b * HOST_TILE * (size_t)esz;
            LANE(b);
            TRY(pld_coll_xfer1(c, &flat, c->me, lo, n, ab, 0));
            for (int p = 0; p < c->P; p++) {
                if (p == c->me)
                    continue;
                TRY(pld_coll_xfer1(c, &flat, p, lo, n, tmp, 0));
                TRY(pld_coll_fold(c, pld_coll_binop_of(op), ab, tmp, t->dt, n));
            }
            TRY(pld_coll_arrive(c, b));
        }
        for (int64_t b = 0; b < B; b++) {
            int64_t tile = b + j * B;
            if (tile >= ntiles)
                continue;
            int64_t lo = tile * HOST_TILE, n = N - lo < HOST_TILE ? N - lo : HOST_TILE;
            LANE(b);
            TRY(pld_coll_await_all(c, b, (int32_t)(j + 2)));
            TRY(pld_coll_xfer1(c, &flat, c->me, lo, n, acc + (size_t)b * HOST_TILE * (size_t)esz, 1));
        }
    }
    for (int64_t b = 0; b < B; b++) {
        int64_t tb = b < ntiles ? cdiv(ntiles - b, B) : 0;
        LANE(b);
        TRY(pld_coll_clear(c, b, (int32_t)(1 + tb)));
    }
done:
#undef LANE
    if (c->trace)
        c->h->track(c->ctx, -1, 0);
    if (R > 1) {
        pld_coll_step_bufs_done(c, acc, kept);
    } else {
        pld_mem_free(acc);
        pld_mem_free(tmp);
    }
    return st;
}

/* HOST ring (§2.14.4): Sum, FP32, one block; rows 0..P-2 reduce-scatter,
 * P-1..2P-3 all-gather, 2P-2 the return barrier; -1 on every used row. */
pld_status_t pld_coll_allreduce_host_ring(coll_t *c, const pld_coll_view_t *t, int64_t op)
{
    pld_status_t st = PLD_OK;
    const int P = c->P, me = c->me, left = (int)imod(me - 1, P);
    int64_t N = numel_of(t->rank, t->shape);
    pld_coll_view_t flat;
    void *acc = NULL, *tmp = NULL;
    if (op != 0 || t->dt != PLD_DT_FP32)
        return pld_coll_fail(c, "%s: mode=\"ring\" on the HOST rail supports only op=ReduceOp.Sum with FP32, found "
                            "ReduceOp.%s with %s",
                            c->cname, pld_coll_redop_name(op), pld_dtype_name(t->dt));
    if (P <= 1)
        return PLD_OK;
    if (P > PLD_COLL_BUILTIN_MAX_RANKS || N <= 0 || N % P != 0) {
        pld_coll_warn(c, PLD_COLL_W_GUARD, "%s (HOST builtin ring) does nothing: the builtin kernel returns early when %s",
                  c->cname,
                  P > PLD_COLL_BUILTIN_MAX_RANKS ? "more than 16 ranks take part"
                  : N <= 0              ? "the target has no elements"
                                        : "the element count is not a multiple of the rank count");
        return PLD_OK;
    }
    if (!pld_coll_view_packed(t))
        return pld_coll_fail(c, "%s: the target must be a packed window view", c->cname);
    pld_coll_flat_desc(t, &flat, N);
    int64_t chunk = N / P;
    acc = pld_coll_alloc_elems(t->dt, chunk);
    tmp = pld_coll_alloc_elems(t->dt, chunk);
    if (!acc || !tmp) {
        st = pld_coll_oom(c);
        goto done;
    }
    for (int64_t s = 1; s < P; s++) {
        int64_t ch = imod(me - s - 1, P);
        TRY(pld_coll_bar(c, s - 1, 1));
        TRY(pld_coll_xfer1(c, &flat, me, ch * chunk, chunk, acc, 0));
        TRY(pld_coll_xfer1(c, &flat, left, ch * chunk, chunk, tmp, 0));
        TRY(pld_coll_fold(c, PLD_K_ADD, acc, tmp, t->dt, chunk));
        TRY(pld_coll_xfer1(c, &flat, me, ch * chunk, chunk, acc, 1));
    }
    for (int64_t s = 1; s < P; s++) {
        int64_t ch = imod(me - s, P);
        TRY(pld_coll_bar(c, P - 2 + s, 1));
        TRY(pld_coll_xfer1(c, &flat, left, ch * chunk, chunk, tmp, 0));
        TRY(pld_coll_xfer1(c, &flat, me, ch * chunk, chunk, tmp, 1));
    }
    TRY(pld_coll_bar(c, 2 * (P - 1), 1));
    for (int64_t r = 0; r <= 2 * (P - 1); r++)
        TRY(pld_coll_clear(c, r, 1));
done:
    pld_mem_free(acc);
    pld_mem_free(tmp);
    return st;
}
