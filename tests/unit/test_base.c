/* test_base.c - src/base: the dtype table (pld_dtype.h) and checked size
 * arithmetic (pld_size.h), the event recorder (pld_trace.h). (The race
 * detector's happens-before records, once here, are src/debug's: test_debug.c.) */
#include "pld_dtype.h"
#include "pld_size.h"
#include "pld_test.h"
#include "pld_trace.h"

#include <stdlib.h>
#include "pld_buf.h"

#include <math.h>
#include <string.h>

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

/* The FP16 conversions as pldrun first wrote them (branchy, case by case):
 * the reference pld_half.h's branch-free ones must equal bit for bit. */
static uint16_t ref_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u)
        return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    if (ax >= 0x477ff000u)
        return (uint16_t)(sign | 0x7c00u);
    if (ax >= 0x38800000u) {
        const uint32_t r = ax - 0x38000000u + 0x0fffu + ((ax >> 13) & 1u);
        return (uint16_t)(sign | (r >> 13));
    }
    if (ax <= 0x33000000u)
        return (uint16_t)sign;
    const uint32_t e = ax >> 23;
    const uint32_t mant = (ax & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - e;
    uint32_t q = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u)))
        q++;
    return (uint16_t)(sign | q);
}

static uint32_t ref_f16_to_f32_bits(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t ef = (h >> 10) & 0x1fu, fr = h & 0x3ffu;
    if (ef == 0x1f)
        return sign | 0x7f800000u | (fr << 13);
    if (ef != 0)
        return sign | ((ef + 112u) << 23) | (fr << 13);
    const float v = (float)fr * 0x1p-24f;
    return pld_f32_bits(sign ? -v : v);
}

static uint16_t ref_f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

/* one FP32 bit pattern through both directions of both formats; 0 = equal */
static int half_differs(uint32_t x)
{
    const float f = pld_bits_f32(x);
    return pld_f32_to_f16(f) != ref_f32_to_f16(f) || pld_f32_to_bf16(f) != ref_f32_to_bf16(f);
}

/* issue 44: the branch-free FP16 conversions (they vectorise) equal the
 * branchy reference on every FP16 / BF16 input, on every FP32 pattern of the
 * top 16 bits (sign, exponent, top fraction: every rounding case of BF16 and
 * FP16's normal, overflow, NaN and subnormal ranges) with edge low bits (ties,
 * sticky bits, all ones), on every FP32 near the boundaries, on every FP32 in
 * FP16's subnormal range, and on two million random FP32 patterns */
static void test_base_half_exhaustive(void)
{
    unsigned bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        bad += pld_f32_bits(pld_f16_to_f32((uint16_t)h)) != ref_f16_to_f32_bits((uint16_t)h);
        bad += pld_f32_bits(pld_bf16_to_f32((uint16_t)h)) != h << 16;
        bad += half_differs(pld_f32_bits(pld_f16_to_f32((uint16_t)h)));   /* round trips */
    }
    static const uint32_t low[] = {0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x1fff, 0x2000, 0x2001, 0x3fff, 0x7fff,
                                   0x8000, 0x8001, 0x9000, 0xbfff, 0xc000, 0xefff, 0xf000, 0xffff};
    for (uint32_t hi = 0; hi < 65536; hi++)
        for (size_t i = 0; i < sizeof low / sizeof low[0]; i++)
            bad += half_differs(hi << 16 | low[i]);
    /* every FP32 around the FP16 subnormal / normal / overflow boundaries */
    static const uint32_t edge[] = {0x33000000u, 0x33800000u, 0x387fc000u, 0x38800000u, 0x477fe000u, 0x477ff000u,
                                    0x7f800000u, 0x7fc00000u, 0x00000000u, 0x00800000u};
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
        for (uint32_t d = 0; d < 0x4000u; d++) {
            bad += half_differs(edge[i] + d) + half_differs(edge[i] - d);
            bad += half_differs((edge[i] + d) | 0x80000000u);
        }
    /* exhaustively, every positive FP32 whose FP16 result is subnormal or zero
     * (the range the FP32 addition rounds), and a margin on both sides */
    for (uint32_t x = 0x32f00000u; x < 0x38900000u; x++)
        bad += pld_f32_to_f16(pld_bits_f32(x)) != ref_f32_to_f16(pld_bits_f32(x));
    uint64_t st = 44;
    for (int i = 0; i < 2000000; i++) {
        uint64_t z = (st += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        bad += half_differs((uint32_t)(z ^ (z >> 31)));
    }
    CU_ASSERT_EQUAL(bad, 0);
}

static CU_TestInfo base_tests[] = {
    {"test_base_trace", test_base_trace},
    {"test_base_dtype_table", test_base_dtype_table},
    {"test_base_half_conversions", test_base_half_conversions},
    {"test_base_half_exhaustive", test_base_half_exhaustive},
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
