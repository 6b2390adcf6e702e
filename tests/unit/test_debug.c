/* test_debug.c - src/debug: the race detector's happens-before records
 * (pld_hb.h), moved here from test_base.c with pld_hb.c. */
#include "pld_hb.h"
#include "pld_test.h"

#include <stdlib.h>

/* The race detector's records (pld_hb.h): conflicts need an unordered pair
 * with a write (atomic adds only race with plain accesses), bytes are exact,
 * a wait acquires exactly the contributions still counted in its cell, the
 * epilogue's negative add releases nothing, Set replaces. Two threads: 0, 1. */
typedef struct hb_seen {
    int n;
    pld_hb_race_t last;
} hb_seen_t;

static void hb_note(void *ctx, const pld_hb_race_t *r)
{
    hb_seen_t *s = ctx;
    s->n++;
    s->last = *r;
}

static void test_debug_hb(void)
{
    pld_hb_geom_t g = {2, 8, 256};
    size_t n = pld_hb_seg_bytes(&g);
    void *seg = calloc(1, n);
    CU_ASSERT_FATAL(seg != NULL);
    uint32_t c0[2] = {1, 0}, c1[2] = {0, 1};
    pld_hb_site_t sa = {10, 5, 1, 0xFFFF}, sb = {20, 7, 2, 0};
    hb_seen_t seen = {0, {0}};
    pld_hb_lock(seg);
    /* thread 0 writes bytes 0..16; thread 1 reads 8..24 unordered: one race on 8..16 */
    CU_ASSERT_EQUAL(pld_hb_access(seg, &g, 0, c0, PLD_HB_WRITE, sa, 0, 16, hb_note, &seen), 0);
    CU_ASSERT_EQUAL(seen.n, 0);
    pld_hb_access(seg, &g, 1, c1, PLD_HB_READ, sb, 8, 16, hb_note, &seen);
    CU_ASSERT_EQUAL(seen.n, 1);
    CU_ASSERT_EQUAL(seen.last.tid, 0);
    CU_ASSERT_EQUAL(seen.last.kind, PLD_HB_WRITE);
    CU_ASSERT_EQUAL(seen.last.site.off, 10);
    CU_ASSERT_EQUAL(seen.last.lo, 8);
    CU_ASSERT_EQUAL(seen.last.hi, 16);
    /* disjoint bytes of the same granule: no race */
    seen.n = 0;
    pld_hb_access(seg, &g, 1, c1, PLD_HB_WRITE, sb, 16, 8, hb_note, &seen);
    CU_ASSERT_EQUAL(seen.n, 0);
    /* reads never race with reads; atomics not with atomics, but with plain reads */
    pld_hb_access(seg, &g, 0, c0, PLD_HB_READ, sa, 64, 4, hb_note, &seen);
    pld_hb_access(seg, &g, 1, c1, PLD_HB_READ, sb, 64, 4, hb_note, &seen);
    pld_hb_access(seg, &g, 0, c0, PLD_HB_ATOMIC, sa, 128, 4, hb_note, &seen);
    pld_hb_access(seg, &g, 1, c1, PLD_HB_ATOMIC, sb, 128, 4, hb_note, &seen);
    CU_ASSERT_EQUAL(seen.n, 0);
    pld_hb_access(seg, &g, 1, c1, PLD_HB_READ, sb, 128, 4, hb_note, &seen);
    CU_ASSERT_EQUAL(seen.n, 1);
    CU_ASSERT_EQUAL(seen.last.kind, PLD_HB_ATOMIC);
    /* an atomic add does not supersede an earlier plain write of its thread: a
     * peer's atomic add still races with the write */
    seen.n = 0;
    pld_hb_access(seg, &g, 0, c0, PLD_HB_WRITE, sa, 160, 8, hb_note, &seen);
    pld_hb_access(seg, &g, 0, c0, PLD_HB_ATOMIC, sb, 160, 8, hb_note, &seen);
    pld_hb_access(seg, &g, 1, c1, PLD_HB_ATOMIC, sb, 160, 8, hb_note, &seen);
    CU_ASSERT_EQUAL(seen.n, 1);
    CU_ASSERT_EQUAL(seen.last.kind, PLD_HB_WRITE);
    /* release / acquire: thread 0 writes at epoch 1, notifies (+1), moves to epoch 2 */
    seen.n = 0;
    pld_hb_access(seg, &g, 0, c0, PLD_HB_WRITE, sa, 192, 8, hb_note, &seen);
    CU_ASSERT_EQUAL(pld_hb_release(seg, &g, 4, 1, 0, c0), 0);
    c0[0]++;
    pld_hb_acquire(seg, &g, 4, 1, 1, c1);
    CU_ASSERT_EQUAL(c1[0], 1);
    pld_hb_access(seg, &g, 1, c1, PLD_HB_READ, sb, 192, 8, hb_note, &seen);
    CU_ASSERT_EQUAL(seen.n, 0); /* ordered */
    /* the epilogue (-1) consumes the contribution: a stale wait acquires nothing new */
    CU_ASSERT_EQUAL(pld_hb_release(seg, &g, 4, -1, 0, c1), 0);
    pld_hb_access(seg, &g, 0, c0, PLD_HB_WRITE, sa, 192, 8, hb_note, &seen); /* epoch 2 */
    CU_ASSERT_EQUAL(seen.n, 1); /* thread 1's read is not ordered before it */
    uint32_t c2[2] = {0, 0};
    pld_hb_acquire(seg, &g, 4, 1, 0, c2);
    CU_ASSERT_EQUAL(c2[0], 0);
    /* a stale credit (+1 at epoch 2, never consumed) orders epoch 2 only, not epoch 3 */
    CU_ASSERT_EQUAL(pld_hb_release(seg, &g, 8, 1, 0, c0), 0);
    c0[0]++;
    pld_hb_acquire(seg, &g, 8, 1, 1, c2);
    CU_ASSERT_EQUAL(c2[0], 2);
    /* a newer credit arrives (epoch 3): Ge 1 still observed only the old one, Ge 2 both */
    CU_ASSERT_EQUAL(pld_hb_release(seg, &g, 8, 1, 0, c0), 0);
    c0[0]++;
    uint32_t c6[2] = {0, 0};
    pld_hb_acquire(seg, &g, 8, 1, 1, c6);
    CU_ASSERT_EQUAL(c6[0], 2);
    pld_hb_acquire(seg, &g, 8, 1, 2, c6);
    CU_ASSERT_EQUAL(c6[0], 3);
    /* Eq 2 is first true after both; Eq 5 never: all of them */
    uint32_t c7[2] = {0, 0};
    pld_hb_acquire(seg, &g, 8, 0, 2, c7);
    CU_ASSERT_EQUAL(c7[0], 3);
    /* Set replaces the release set */
    uint32_t c3[2] = {0, 5};
    CU_ASSERT_EQUAL(pld_hb_release(seg, &g, 8, 0, 1, c3), 0);
    uint32_t c4[2] = {0, 0};
    pld_hb_acquire(seg, &g, 8, 0, 0, c4);
    CU_ASSERT_EQUAL(c4[0], 0);
    CU_ASSERT_EQUAL(c4[1], 5);
    /* more cells than the table holds */
    int full = 0;
    for (size_t cell = 100; cell < 100 + 4 * 20; cell += 4)
        full |= pld_hb_release(seg, &g, cell, 1, 0, c0) != 0;
    CU_ASSERT_EQUAL(full, 1);
    /* the barrier between dispatches: a published clock joins */
    pld_hb_publish(seg, &g, 1, c3);
    uint32_t c5[2] = {7, 0};
    pld_hb_join_published(seg, &g, 1, c5);
    CU_ASSERT_EQUAL(c5[0], 7);
    CU_ASSERT_EQUAL(c5[1], 5);
    /* clear forgets records and release sets */
    pld_hb_clear(seg, &g);
    seen.n = 0;
    pld_hb_access(seg, &g, 1, c1, PLD_HB_WRITE, sb, 0, 256, hb_note, &seen);
    CU_ASSERT_EQUAL(seen.n, 0);
    pld_hb_unlock(seg);
    free(seg);
}

/* Issue 43: a notify of a cell beyond the table goes into the overflow set,
 * and a wait on such a cell acquires all of it (never less than its own
 * notify: no false race). More than PLD_HB_SLOTS unordered readers of one
 * granule take an extension block: none is forgotten, and a write ordered
 * with none of them conflicts with every one. */
static void test_debug_hb_overflow(void)
{
    enum { V = 20 };
    pld_hb_geom_t g = {V, 2, 256};
    void *seg = calloc(1, pld_hb_seg_bytes(&g));
    CU_ASSERT_FATAL(seg != NULL);
    pld_hb_lock(seg);
    uint32_t c0[V] = {3};
    CU_ASSERT_EQUAL(pld_hb_release(seg, &g, 0, 1, 0, c0), 0);
    CU_ASSERT_EQUAL(pld_hb_release(seg, &g, 4, 1, 0, c0), 0);
    c0[0] = 4;
    CU_ASSERT_EQUAL(pld_hb_release(seg, &g, 8, 1, 1, c0), 1); /* the table is full */
    c0[0] = 5;
    CU_ASSERT_EQUAL(pld_hb_release(seg, &g, 8, -1, 0, c0), 1); /* an epilogue keeps the overflow clocks */
    uint32_t w[V] = {0};
    pld_hb_acquire(seg, &g, 8, 1, 1, w);
    CU_ASSERT_EQUAL(w[0], 4);
    uint32_t w2[V] = {0};
    pld_hb_acquire(seg, &g, 12, 1, 1, w2); /* another cell beyond the table: the same set */
    CU_ASSERT_EQUAL(w2[0], 4);
    /* 16 readers, threads 1..16, then a write by thread 17 ordered with none */
    pld_hb_site_t sr = {1, 1, 1, 0}, sw = {2, 1, 2, 0};
    hb_seen_t seen = {0, {0}};
    for (uint32_t t = 1; t <= 16; t++) {
        uint32_t c[V] = {0};
        c[t] = 1;
        CU_ASSERT_EQUAL(pld_hb_access(seg, &g, t, c, PLD_HB_READ, sr, 64, 8, hb_note, &seen), 0);
    }
    CU_ASSERT_EQUAL(seen.n, 0);
    uint32_t c17[V] = {0};
    c17[17] = 1;
    CU_ASSERT_EQUAL(pld_hb_access(seg, &g, 17, c17, PLD_HB_WRITE, sw, 64, 8, hb_note, &seen), 0);
    CU_ASSERT_EQUAL(seen.n, 16);
    pld_hb_clear(seg, &g);
    seen.n = 0;
    CU_ASSERT_EQUAL(pld_hb_access(seg, &g, 17, c17, PLD_HB_WRITE, sw, 64, 8, hb_note, &seen), 0);
    CU_ASSERT_EQUAL(seen.n, 0);
    pld_hb_unlock(seg);
    free(seg);
}

/* Signal accesses (issue 43, docs/races.md "Signals as accesses"): a notify
 * races with a plain write of its cell only, never with a read, an atomic
 * add or another notify; a full granule forgets a notify's record first,
 * without counting it as forgotten. */
static void test_debug_hb_signal(void)
{
    pld_hb_geom_t g = {2, 8, 256};
    void *seg = calloc(1, pld_hb_seg_bytes(&g));
    CU_ASSERT_FATAL(seg != NULL);
    uint32_t c0[2] = {1, 0}, c1[2] = {0, 1};
    pld_hb_site_t sa = {10, 5, 1, 0xFFFF}, sb = {20, 7, 2, 0};
    hb_seen_t seen = {0, {0}};
    pld_hb_lock(seg);
    pld_hb_access(seg, &g, 0, c0, PLD_HB_SIGNAL, sa, 0, 4, hb_note, &seen);
    pld_hb_access(seg, &g, 1, c1, PLD_HB_READ, sb, 0, 4, hb_note, &seen);
    pld_hb_access(seg, &g, 1, c1, PLD_HB_ATOMIC, sb, 0, 4, hb_note, &seen);
    pld_hb_access(seg, &g, 1, c1, PLD_HB_SIGNAL, sb, 0, 4, hb_note, &seen);
    CU_ASSERT_EQUAL(seen.n, 0);
    pld_hb_access(seg, &g, 1, c1, PLD_HB_WRITE, sb, 0, 4, hb_note, &seen);
    CU_ASSERT_EQUAL(seen.n, 1);
    CU_ASSERT_EQUAL(seen.last.tid, 0);
    CU_ASSERT_EQUAL(seen.last.kind, PLD_HB_SIGNAL);
    CU_ASSERT_EQUAL(seen.last.lo, 0);
    CU_ASSERT_EQUAL(seen.last.hi, 4);
    /* the other order: a plain write, then an unordered notify */
    seen.n = 0;
    pld_hb_access(seg, &g, 0, c0, PLD_HB_WRITE, sa, 64, 4, hb_note, &seen);
    pld_hb_access(seg, &g, 1, c1, PLD_HB_SIGNAL, sb, 64, 4, hb_note, &seen);
    CU_ASSERT_EQUAL(seen.n, 1);
    CU_ASSERT_EQUAL(seen.last.kind, PLD_HB_WRITE);
    /* a granule full of notifies: the next record replaces one, not counted */
    uint64_t ev = 0;
    for (uint32_t e = 1; e <= PLD_HB_SLOTS + 4; e++) {
        uint32_t ce[2] = {e, 0};
        ev += pld_hb_access(seg, &g, 0, ce, PLD_HB_SIGNAL, sa, 128 + 4 * (e % 16), 4, NULL, NULL);
    }
    CU_ASSERT_EQUAL(ev, 0);
    pld_hb_unlock(seg);
    free(seg);
}

static CU_TestInfo debug_tests[] = {
    {"test_debug_hb", test_debug_hb},
    {"test_debug_hb_overflow", test_debug_hb_overflow},
    {"test_debug_hb_signal", test_debug_hb_signal},
    CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
    {"debug", NULL, NULL, NULL, NULL, debug_tests},
    CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv)
{
    return pld_test_main(argc, argv, suites);
}
