/* bench_tile_add.c - bandwidth of pld_k_binary(ADD) on FP32 64 KiB tiles
 * ([128, 128] FP32 = 64 KiB per operand) against memcpy of the same tile.
 *
 * Bytes moved per call: ADD reads a and b and writes out (3 x 64 KiB);
 * memcpy reads src and writes dst (2 x 64 KiB). Each measurement runs ITERS
 * calls; the figures reported are medians over RUNS interleaved rounds. The
 * working set (192 KiB / 128 KiB) fits in L2, so this measures the kernel's
 * loop, not DRAM. Extra rows (not part of the target) show the in-place form,
 * a strided [128, 128] window of a [128, 136] buffer (odometer path) and FP16.
 *
 * Usage: bench_tile_add [iters] [runs] [stagger]. Build: see docs/benchmarks-kernels.md. */
#include "bench_time.h"
#include "pld_kern.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define R 128
#define C 128
#define TILE_BYTES ((size_t)R * C * sizeof(float))

/* memcpy through a volatile pointer: the compiler cannot drop or merge calls */
static void *(*volatile copy_fn)(void *, const void *, size_t) = memcpy;
static volatile float sink;

typedef struct bench_case {
    const char *name;
    pld_view_t out, a, b;
    double bytes_per_call;
} bench_case_t;

/* Seconds for `iters` calls of the case (k >= 0) or of memcpy (k < 0). */
static double time_batch(const bench_case_t *cases, int k, void *dst, const void *src, long iters)
{
    char err[128];
    const double t0 = bench_now_s();
    if (k < 0) {
        for (long i = 0; i < iters; i++)
            copy_fn(dst, src, TILE_BYTES);
    } else {
        const bench_case_t *bc = &cases[k];
        for (long i = 0; i < iters; i++)
            if (pld_k_binary(PLD_K_ADD, &bc->out, &bc->a, &bc->b, err, sizeof err) != PLD_OK) {
                fprintf(stderr, "bench_tile_add: %s\n", err);
                exit(1);
            }
    }
    const double dt = bench_now_s() - t0;
    sink = k < 0 ? ((const float *)dst)[7] : ((const float *)cases[k].out.data)[7];
    return dt;
}

int main(int argc, char **argv)
{
    const long iters = argc > 1 ? atol(argv[1]) : 20000;
    int runs = argc > 2 ? atoi(argv[2]) : 11;
    if (iters <= 0 || runs <= 0) {
        fprintf(stderr, "usage: bench_tile_add [iters > 0] [runs 1..64]\n");
        return 64;
    }
    if (runs > 64)
        runs = 64;
    /* All operands live in one pool, in 80 KiB slots (a multiple of 4 KiB)
     * shifted by k * stagger bytes: with stagger 0 every operand has the same
     * address bits 0..11, the worst case for 4K aliasing between the loads of
     * one operand and the stores of another. */
    const long stagger = argc > 3 ? atol(argv[3]) : 256;
    if (stagger < 0 || stagger % 64 != 0 || stagger > 4096) {
        fprintf(stderr, "bench_tile_add: stagger must be a multiple of 64 in 0..4096\n");
        return 64;
    }
    const size_t wide = (size_t)R * (C + 8) * sizeof(float), slot = 80 * 1024;
    unsigned char *pool = aligned_alloc(4096, 9 * (slot + 4096));
    if (!pool) {
        fprintf(stderr, "bench_tile_add: out of memory\n");
        return 70;
    }
    void *at[8];
    for (int k = 0; k < 8; k++)
        at[k] = pool + (size_t)k * slot + (size_t)k * (size_t)stagger;
    float *a = at[0], *b = at[1], *o = at[2], *src = at[3], *dst = at[4];
    uint16_t *ha = at[5], *hb = at[6], *ho = at[7];
    for (size_t i = 0; i < wide / sizeof(float); i++) {
        a[i] = (float)(i % 251) * 0.5f;
        b[i] = (float)(i % 13) - 6.0f;
        o[i] = 0.0f;
    }
    memcpy(src, a, TILE_BYTES);
    memset(dst, 0, TILE_BYTES);
    for (size_t i = 0; i < (size_t)R * C; i++) {
        ha[i] = pld_f32_to_f16(a[i]);
        hb[i] = pld_f32_to_f16(b[i]);
    }

    const int64_t shape[2] = {R, C};
    bench_case_t cases[4];
    memset(cases, 0, sizeof cases);
    cases[0].name = "add FP32 [128,128] packed";
    pld_view_packed(&cases[0].out, o, PLD_DT_FP32, 2, shape);
    pld_view_packed(&cases[0].a, a, PLD_DT_FP32, 2, shape);
    pld_view_packed(&cases[0].b, b, PLD_DT_FP32, 2, shape);
    cases[1] = cases[0];
    cases[1].name = "add FP32 [128,128] in place";
    cases[1].out = cases[1].a;
    cases[2] = cases[0];
    cases[2].name = "add FP32 [128,128] row stride 136";
    cases[2].out.strides[0] = cases[2].a.strides[0] = cases[2].b.strides[0] = C + 8;
    cases[3].name = "add FP16 [128,128] packed";
    pld_view_packed(&cases[3].out, ho, PLD_DT_FP16, 2, shape);
    pld_view_packed(&cases[3].a, ha, PLD_DT_FP16, 2, shape);
    pld_view_packed(&cases[3].b, hb, PLD_DT_FP16, 2, shape);
    for (int k = 0; k < 4; k++) /* FP16: 2-byte elements */
        cases[k].bytes_per_call = 3.0 * (double)TILE_BYTES * (k == 3 ? 0.5 : 1.0);

    /* Rounds interleave memcpy and every case, so a slow period of a shared
     * machine hits all of them alike; each figure is the median over rounds,
     * and "vs copy" is the median of the per-round ratios. */
    enum { NCASE = 4 };
    static double gbs[NCASE + 1][64], ns[NCASE + 1][64], ratio[NCASE][64];
    for (int k = -1; k < NCASE; k++) /* warm up */
        time_batch(cases, k, dst, src, iters / 10 + 1);
    for (int r = 0; r < runs; r++) {
        for (int k = -1; k < NCASE; k++) {
            const double dt = time_batch(cases, k, dst, src, iters);
            const double bytes = k < 0 ? 2.0 * (double)TILE_BYTES : cases[k].bytes_per_call;
            gbs[k + 1][r] = bytes * (double)iters / dt / 1e9;
            ns[k + 1][r] = dt / (double)iters * 1e9;
        }
        for (int k = 0; k < NCASE; k++)
            ratio[k][r] = gbs[k + 1][r] / gbs[0][r];
    }
    printf("tile: [%d, %d] FP32 = %zu KiB per operand; %ld calls per batch, median of %d interleaved rounds; "
           "operand stagger %ld bytes\n",
           R, C, TILE_BYTES / 1024, iters, runs, stagger);
    printf("%-36s %10s %12s %8s\n", "case", "GB/s", "ns/call", "vs copy");
    printf("%-36s %10.1f %12.0f %8s\n", "memcpy 64 KiB (1 read + 1 write)", bench_median(gbs[0], runs),
           bench_median(ns[0], runs), "1.00");
    for (int k = 0; k < NCASE; k++)
        printf("%-36s %10.1f %12.0f %8.2f\n", cases[k].name, bench_median(gbs[k + 1], runs),
               bench_median(ns[k + 1], runs), bench_median(ratio[k], runs));
    free(pool);
    return 0;
}
