/* pld_coll_int.h - internals shared by the files of the collective protocols
 * (pld_coll.h): the call, the credit barrier on the signal cells, data
 * movement and folds (pld_coll.c), the merged steps (pld_coll_step.c) and the
 * rows by message (pld_coll_gather.c). */
#ifndef PLD_COLL_INT_H
#define PLD_COLL_INT_H

#include "pld_coll.h"
#include "pld_size.h"

#include <stdint.h>

typedef pld_coll_t coll_t;

#define HOST_TILE 256            /* elements per builtin tile */
#define MESH_CHUNK_BYTES 16384   /* InCore composite chunk */
/* The mesh allreduces merge consecutive chunks (tiles) into one step of at
 * most this many bytes per peer (merged_step; docs/transport.md). */
#define MERGE_BYTES ((int64_t)8 << 20)
#ifndef PLD_TESTING
#define RING_STEP_BYTES ((int64_t)128 << 10) /* the InCore ring's steps: within the cache (ring_step) */
#else
#define RING_STEP_BYTES ((int64_t)32 << 10) /* pldrun_testing: 2 sub-chunks, so the tests' segments take several steps */
#endif

/* Bit q of a mask of domain ranks. */
#define RBIT(q) ((uint64_t)1 << (q))

#define TRY(x)                                                                                                         \
    do {                                                                                                               \
        if ((st = (x)) != PLD_OK)                                                                                      \
            goto done;                                                                                                 \
    } while (0)

static inline int64_t imod(int64_t a, int64_t m)
{
    int64_t r = a % m;
    return r < 0 ? r + m : r;
}

static inline int64_t cdiv(int64_t a, int64_t b)
{
    return b > 0 ? (a + b - 1) / b : 0;
}

/* Element count of the shape of a tensor that exists (its size was checked
 * when it was made, so it fits; pld_size.h all the same). */
static inline int64_t numel_of(int rank, const int64_t *shape)
{
    int64_t n;
    return pld_size_numel(rank, shape, &n) == PLD_SIZE_OK ? n : -1;
}

/* "all_to_all_v: wait for the rows to and from ranks 2, 3 (messages across
 * hosts) in f": a wait for two-sided transfers (pld_win_xset), of `what`
 * ("rows", "parts") with the members in `far` (describe_far_wait). */
typedef struct far_wait {
    const coll_t *c;
    uint64_t far;
    const char *what;
} far_wait_t;

/* A kernel view over view t (pld_kern.h). */
pld_status_t pld_coll_oom(coll_t *c);
void pld_coll_kview(const pld_coll_view_t *t, pld_view_t *v);
/* The address of element idx of this rank's copy of t. */
void *pld_coll_at(const pld_coll_view_t *t, const int64_t *idx);

/* ---- pld_coll.c: signal cells, the credit barrier, data movement, folds, buffers ---- */
uint64_t pld_coll_all_peers(const coll_t *c);
size_t pld_coll_rank_list(char *buf, size_t n, const char *lead, uint64_t mask, int P);
void pld_coll_describe_far_wait(const void *ctx, char *what, size_t n);
pld_status_t pld_coll_arrive_to(coll_t *c, int64_t k, int32_t n, uint64_t to);
pld_status_t pld_coll_arrive_n(coll_t *c, int64_t k, int32_t n);
pld_status_t pld_coll_arrive(coll_t *c, int64_t k);
pld_status_t pld_coll_await_from(coll_t *c, int64_t k, int32_t g, uint64_t from);
pld_status_t pld_coll_await_all(coll_t *c, int64_t k, int32_t g);
void pld_coll_lane_track(coll_t *c, int64_t b, int64_t lanes);
void pld_coll_phase_begin(coll_t *c, pld_ev_t *ev, const char *name);
pld_status_t pld_coll_phase_end(coll_t *c, pld_ev_t *ev, pld_status_t st);
pld_status_t pld_coll_bar_n(coll_t *c, int64_t k, int32_t n, int32_t g);
pld_status_t pld_coll_bar(coll_t *c, int64_t k, int32_t g);
int64_t pld_coll_merged_step(const coll_t *c, int64_t unit, int esz);
int64_t pld_coll_ring_step(const coll_t *c, int64_t unit, int esz);
int pld_coll_rows_batched(const coll_t *c);
pld_status_t pld_coll_clear(coll_t *c, int64_t k, int32_t n);
int pld_coll_fully_valid(const pld_coll_view_t *t);
void pld_coll_flat_desc(const pld_coll_view_t *t, pld_coll_view_t *out, int64_t n);
void pld_coll_local_read_seen(coll_t *c, const pld_coll_view_t *t, const int64_t *off, const int64_t *ext);
pld_status_t pld_coll_local_io(coll_t *c, const pld_coll_view_t *t, const int64_t *off, const int64_t *ext, void *buf, int dir);
pld_status_t pld_coll_push_src(coll_t *c, const pld_coll_view_t *in, const pld_coll_view_t *t, int64_t row, int64_t nrows, char *stage, const void **src);
void pld_coll_push_order(const coll_t *c, int batched, int *order);
pld_status_t pld_coll_xfer(coll_t *c, const pld_coll_view_t *t, int peer, const int64_t *off, const int64_t *ext, void *buf, int dir);
pld_status_t pld_coll_xfer1(coll_t *c, const pld_coll_view_t *flat, int peer, int64_t lo, int64_t n, void *buf, int dir);
pld_status_t pld_coll_xfer_rows(coll_t *c, const pld_coll_view_t *t, int peer, int64_t row, int64_t nrows, void *buf, int dir);
pld_binop_k_t pld_coll_binop_of(int64_t op);
pld_status_t pld_coll_fold(coll_t *c, pld_binop_k_t op, void *acc, void *x, pld_dtype_t dt, int64_t n);
pld_status_t pld_coll_read_fold(coll_t *c, const pld_coll_view_t *flat, int64_t lo, int64_t n, pld_binop_k_t op, void *acc, char *tmp, int batched);
int pld_coll_msgs_ok(const coll_t *c);
void pld_coll_trace_msg(coll_t *c, pld_ev_t *ev, const pld_coll_view_t *t, int peer, const int64_t *idx, size_t bytes);
pld_status_t pld_coll_msg_mismatch(coll_t *c, int q, int64_t got, size_t want);
pld_status_t pld_coll_xset_fail(coll_t *c, const char *err);
void *pld_coll_alloc_elems(pld_dtype_t dt, int64_t n);
void *pld_coll_step_bufs(coll_t *c, pld_dtype_t dt, int64_t na, int64_t nt, char **tmp, int *kept);
void pld_coll_step_bufs_done(coll_t *c, void *acc, int kept);
void *pld_coll_stage_buf(coll_t *c, pld_dtype_t dt, int64_t n, int *kept);
int64_t pld_coll_read_count(const pld_coll_view_t *t, int64_t i);

/* ---- pld_coll_step.c: the merged steps of the mesh allreduces ---- */

/* How the merged steps of one call move their ranges (step_plan). */
enum { STEP_PLAIN, STEP_SPREAD, STEP_HUB };

typedef struct step_plan {
    int kind;
    int nw;                           /* HUB: the members on the hub host, ascending */
    int workers[PLD_WIN_MAX_RANKS];
    int widx;                         /* HUB: this rank's index in workers, or -1 */
    /* HUB: ranks 0 and 1 both off the hub host: their results agree except
     * where x0 and x1 are NaNs with different payloads (the first fold is
     * x0 (+) x1 against x1 (+) x0), so the workers send it to rep (0) alone,
     * rep copies it to twin (1) within its host, and the blocks where twin's
     * differ follow after the barrier. -1: none. */
    int rep, twin;
} step_plan_t;

/* The barrier of one merged step. InCore (.host = 0): slot 0, credit n,
 * wait for g. HOST (.host = 1): lane b < lanes credits its tiles in rounds [j0, j1)
 * (tiles b + j * lanes < ntiles) and waits for 1 + its tiles before j1. */
typedef struct step_bar {
    int host;
    int64_t lanes, j0, j1, ntiles;
    int32_t n, g;
} step_bar_t;

void pld_coll_step_plan(const coll_t *c, step_plan_t *pl);
int64_t pld_coll_step_tmp(const coll_t *c, const step_plan_t *pl, int64_t n, int batched);
pld_status_t pld_coll_merged_fold_step(coll_t *c, const step_plan_t *pl, const step_bar_t *sb, const pld_coll_view_t *flat,
                                     int64_t lo, int64_t n, pld_binop_k_t op, char *acc, char *tmp, int batched);

/* ---- pld_coll_gather.c: rows by message (allgather, all_to_all, all_to_all_v) ---- */

typedef struct far_rows {
    uint64_t far;       /* the members whose rows go by message; 0: none */
    int64_t MR;         /* rows per source in the target */
    pld_win_xset_t *xs; /* the transfers (far_post) */
    char *bounce;       /* where bounced rows land first (far_bounced) */
} far_rows_t;

uint64_t pld_coll_far_members(const coll_t *c, int batched, const pld_coll_view_t *t, int64_t MR);
pld_status_t pld_coll_far_post(coll_t *c, const pld_coll_view_t *t, far_rows_t *fr);
pld_status_t pld_coll_far_send(coll_t *c, const pld_coll_view_t *in, const pld_coll_view_t *t, const far_rows_t *fr,
                             int dest, int64_t row, int64_t rows, char *stage);
pld_status_t pld_coll_far_land(coll_t *c, const pld_coll_view_t *t, const pld_coll_view_t *rc, const far_rows_t *fr);
void pld_coll_far_done(far_rows_t *fr);

#endif
