/* test_base.c - src/base: the dtype table (pld_dtype.h) and checked size
 * arithmetic (pld_size.h), the event recorder (pld_trace.h), the race detector's
 * happens-before records (pld_hb.h). */
#include "pld_dtype.h"
#include "pld_size.h"
#include "pld_test.h"
#include "pld_trace.h"
#include "pld_hb.h"

#include <stdlib.h>
#include "pld_buf.h"

#include <math.h>

static void test_base_dtype_table(void)
{
    for (int d = 1; d < PLD_DT__COUNT; d++) {
        const char *n = pld_dtype_name((pld_dtype_t)d);
        CU_ASSERT_EQUAL(pld_dtype_from_name(n), (pld_dtype_t)d); /* names are unique and round-trip */
        CU_ASSERT(pld_dtype_bytes((pld_dtype_t)d) >= 1);
    }
    CU_ASSERT_STRING_EQUAL(pld_dtype_name(PLD_DT__COUNT), "?");
    CU_ASSERT_EQUAL(pld_dtype_from_name("FP33"), PLD_DT_NONE);
    CU_ASSERT_EQUAL(pld_dtype_bits(PLD_DT_BF16), 16);
    CU_ASSERT_EQUAL(pld_dtype_bytes(PLD_DT_INT4), 1);          /* PyPTO's get_byte() */
    CU_ASSERT_EQUAL(pld_dtype_storage_bytes(PLD_DT_INT4), 0);  /* not storable element-wise */
    CU_ASSERT_EQUAL(pld_dtype_storage_bytes(PLD_DT_INDEX), 8);
    CU_ASSERT(pld_dtype_is_float(PLD_DT_BF16) && !pld_dtype_is_int(PLD_DT_BF16));
    CU_ASSERT(pld_dtype_is_int(PLD_DT_BOOL) && pld_dtype_is_int(PLD_DT_INDEX) && !pld_dtype_is_int(PLD_DT_TASK_ID));
}

static void test_base_half_conversions(void)
{
    CU_ASSERT_EQUAL(pld_f32_to_f16(1.0f), 0x3c00);
    CU_ASSERT_EQUAL(pld_f32_to_f16(65504.0f), 0x7bff);
    CU_ASSERT_EQUAL(pld_f32_to_f16(65520.0f), 0x7c00);            /* the tie rounds to even: inf */
    CU_ASSERT_EQUAL(pld_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);     /* tie to even, down */
    CU_ASSERT_EQUAL(pld_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02); /* tie to even, up */
    CU_ASSERT_EQUAL(pld_f32_to_f16(0x1p-24f), 0x0001);            /* smallest subnormal */
    CU_ASSERT_EQUAL(pld_f32_to_f16(0x1p-25f), 0x0000);            /* half of it ties to zero */
    CU_ASSERT(isnan(pld_f16_to_f32(pld_f32_to_f16(NAN))));
    CU_ASSERT_EQUAL(pld_f16_to_f32(0x0001), 0x1p-24f);
    CU_ASSERT_EQUAL(pld_f32_to_bf16(1.0f), 0x3f80);
    CU_ASSERT_EQUAL(pld_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);     /* tie to even, down */
    CU_ASSERT_EQUAL(pld_f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82); /* tie to even, up */
    CU_ASSERT_EQUAL(pld_bf16_to_f32(0x3f82), 1.0f + 2 * 0x1p-7f);
    CU_ASSERT(isnan(pld_bf16_to_f32(pld_f32_to_bf16(NAN))));
}

static void test_base_size_checked(void)
{
    int64_t r = -7;
    const int64_t ok[3] = {2, 3, 4}, zero[3] = {5, 0, 7}, neg[2] = {3, -1};
    const int64_t huge[2] = {INT64_C(1) << 31, INT64_C(1) << 31}, wide[2] = {0, INT64_MAX};
    CU_ASSERT_EQUAL(pld_size_numel(3, ok, &r), PLD_SIZE_OK);
    CU_ASSERT_EQUAL(r, 24);
    CU_ASSERT_EQUAL(pld_size_numel(0, NULL, &r), PLD_SIZE_OK);
    CU_ASSERT_EQUAL(r, 1);
    CU_ASSERT_EQUAL(pld_size_numel(3, zero, &r), PLD_SIZE_OK);
    CU_ASSERT_EQUAL(r, 0);
    CU_ASSERT_EQUAL(pld_size_numel(2, neg, &r), PLD_SIZE_NEGATIVE);
    CU_ASSERT_EQUAL(pld_size_numel(2, huge, &r), PLD_SIZE_OK); /* 2^62 fits */
    CU_ASSERT_EQUAL(r, INT64_C(1) << 62);
    const int64_t huge3[3] = {INT64_C(1) << 31, INT64_C(1) << 31, 2}; /* 2^63 does not */
    CU_ASSERT_EQUAL(pld_size_numel(3, huge3, &r), PLD_SIZE_OVERFLOW);
    CU_ASSERT_EQUAL(pld_size_bytes(3, ok, 4, INT64_MAX, &r), PLD_SIZE_OK);
    CU_ASSERT_EQUAL(r, 96);
    CU_ASSERT_EQUAL(pld_size_bytes(3, ok, 4, 95, &r), PLD_SIZE_OVERFLOW); /* over the limit */
    CU_ASSERT_EQUAL(pld_size_bytes(2, wide, 8, INT64_MAX, &r), PLD_SIZE_OVERFLOW); /* other dims must be sane */
    CU_ASSERT_EQUAL(pld_size_bytes(2, wide, 1, INT64_MAX, &r), PLD_SIZE_OK);
    CU_ASSERT_EQUAL(r, 0);
    CU_ASSERT_EQUAL(pld_size_mul(INT64_MAX, 2, &r), PLD_SIZE_OVERFLOW);
    CU_ASSERT_EQUAL(pld_size_add(INT64_MAX, 1, &r), PLD_SIZE_OVERFLOW);
    CU_ASSERT_EQUAL(pld_size_add(INT64_MAX - 1, 1, &r), PLD_SIZE_OK);
    const int64_t idx[2] = {3, 5}, str[2] = {10, 1}, bigstr[2] = {INT64_MAX / 2, 1};
    CU_ASSERT_EQUAL(pld_size_offset(2, idx, str, &r), PLD_SIZE_OK);
    CU_ASSERT_EQUAL(r, 35);
    CU_ASSERT_EQUAL(pld_size_offset(2, idx, bigstr, &r), PLD_SIZE_OVERFLOW);
    CU_ASSERT_STRING_EQUAL(pld_size_what(PLD_SIZE_OVERFLOW), "overflows");
}

/* The event recorder (pld_trace.h): strings are copied, the limit drops and
 * counts, JSON escapes and names the tracks, the log line reads. */
static void lines_sink(void *ctx, const char *line, size_t len)
{
    pld_buf_t *b = ctx;
    pld_buf_putn(b, line, len);
    pld_buf_putc(b, '\n');
}

static void test_base_trace(void)
{
    pld_buf_t lines, js;
    pld_buf_init(&lines);
    pld_buf_init(&js);
    pld_trace_t *tr = pld_trace_create(1, 2, lines_sink, &lines, "p.pld");
    CU_ASSERT_FATAL(tr != NULL);
    char name[32], obj[48];
    snprintf(name, sizeof name, "pld.tensor.put");
    snprintf(obj, sizeof obj, "wait on \"sig\"[1]\n");
    pld_ev_t ev;
    pld_trace_ev_init(&ev, PLD_EV_PUT);
    ev.t0 = 1000;
    ev.track = pld_trace_track(2, -1);
    ev.name = name;
    ev.obj = "buf";
    ev.peer = 1;
    ev.peer_world = 3;
    ev.bytes = 256;
    ev.offset = 64;
    ev.line = 12;
    ev.col = 5;
    pld_trace_end(tr, &ev);
    memset(name, 'x', sizeof name - 1); /* the recorder kept its own copy */
    pld_trace_ev_init(&ev, PLD_EV_WAIT);
    ev.obj = obj;
    ev.value = 0;
    ev.expected = 1;
    ev.cmp = 1;
    ev.failed = 1;
    pld_trace_end(tr, &ev);
    pld_trace_ev_init(&ev, PLD_EV_NOTIFY); /* third: over the limit of 2 */
    pld_trace_end(tr, &ev);
    CU_ASSERT_EQUAL(pld_trace_count(tr), 2);
    CU_ASSERT_EQUAL(pld_trace_dropped(tr), 1);
    /* the latest event replaced the second (the ring is the second half) */
    CU_ASSERT_EQUAL(pld_trace_event(tr, 1)->kind, PLD_EV_NOTIFY);
    CU_ASSERT_STRING_EQUAL(pld_trace_event(tr, 0)->name, "pld.tensor.put");
    CU_ASSERT_EQUAL(pld_trace_event(tr, 0)->track, 3);
    CU_ASSERT_EQUAL(pld_trace_track(-1, -1), 0);
    CU_ASSERT_EQUAL(pld_trace_track(0, 1), 1 + 2 * PLD_TRACE_LANE_STRIDE);
    /* every event was logged, the dropped one too */
    CU_ASSERT_PTR_NOT_NULL(strstr(pld_buf_str(&lines), "block 2: put pld.tensor.put to rank 1 (world 3): buf, 256 bytes "
                                                        "at window offset 64 at p.pld:12:5"));
    CU_ASSERT_PTR_NOT_NULL(strstr(pld_buf_str(&lines), "found 0, expected >= 1, stopped"));
    CU_ASSERT_PTR_NOT_NULL(strstr(pld_buf_str(&lines), "host: notify"));
    CU_ASSERT_EQUAL(pld_trace_json(tr, 1, 4, "h", 0, 0, &js), PLD_OK);
    const char *j = pld_buf_str(&js);
    CU_ASSERT_PTR_NOT_NULL(strstr(j, "\"rank 1 of 4 on h\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(j, "\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":3,\"args\":{\"name\":\"block 2\"}"));
    CU_ASSERT_PTR_NOT_NULL(strstr(j, "\"ts\":1.000,\"dur\":"));
    CU_ASSERT_PTR_NULL(strstr(j, "wait on")); /* the wait was dropped */
    CU_ASSERT_PTR_NOT_NULL(strstr(j, "\"dropped\":1"));
    pld_trace_destroy(tr);
    /* limit 4: 2 kept from the start, a ring of 2: 10 events keep 0, 1, 8, 9 */
    tr = pld_trace_create(1, 4, NULL, NULL, "p.pld");
    CU_ASSERT_FATAL(tr != NULL);
    for (int i = 0; i < 10; i++) {
        pld_trace_ev_init(&ev, PLD_EV_ERROR);
        ev.line = i;
        ev.obj = i == 9 ? obj : "m";
        pld_trace_end(tr, &ev);
    }
    CU_ASSERT_EQUAL(pld_trace_count(tr), 4);
    CU_ASSERT_EQUAL(pld_trace_dropped(tr), 6);
    CU_ASSERT_EQUAL(pld_trace_event(tr, 0)->line, 0);
    CU_ASSERT_EQUAL(pld_trace_event(tr, 1)->line, 1);
    CU_ASSERT_EQUAL(pld_trace_event(tr, 2)->line, 8);
    CU_ASSERT_EQUAL(pld_trace_event(tr, 3)->line, 9);
    pld_buf_reset(&js);
    CU_ASSERT_EQUAL(pld_trace_json(tr, 0, 1, "", 0, 0, &js), PLD_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(pld_buf_str(&js), "wait on \\\"sig\\\"[1]\\u000a")); /* escaped */
    CU_ASSERT_PTR_NOT_NULL(strstr(pld_buf_str(&js), "\"dropped\":6"));
    pld_trace_destroy(tr);
    pld_buf_fini(&lines);
    pld_buf_fini(&js);
}


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

static void test_base_hb(void)
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

static CU_TestInfo base_tests[] = {
    {"test_base_hb", test_base_hb},
    {"test_base_trace", test_base_trace},
    {"test_base_dtype_table", test_base_dtype_table},
    {"test_base_half_conversions", test_base_half_conversions},
    {"test_base_size_checked", test_base_size_checked},
    CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
    {"base", NULL, NULL, NULL, NULL, base_tests},
    CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv)
{
    return pld_test_main(argc, argv, suites);
}
