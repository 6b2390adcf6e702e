/* bench_kern_matmul.c - pld_k_matmul on its own (issue 44): the CPU time of
 * one [M, K] x [K, N] product (default 256 x 256 x 256) with FP32 inputs and
 * with FP16 inputs (FP32 out, FP32 accumulators), the median of RUNS rounds
 * of ITERS calls each, and an FNV-1a hash of the output bits so that two
 * builds (this branch and another, linked the same way) can be checked to
 * compute the same bits. Inputs: a fixed generator, values in [-1, 1).
 *
 * Usage: bench_kern_matmul [M K N] [iters] [runs] [base] ("base": the baseline
 * SIMD set even where the CPU has AVX2, pld_kern_simd_force_base). Build: bench/kern.cmake
 * (target bench_kern_matmul; it links only pld_kern). To time another
 * tree's library with the same driver:
 *   cc -O2 -Isrc/sim_npu -Isrc/base bench/bench_kern_matmul.c OTHER/build/libpld_kern.a OTHER/build/libpld_base.a -lm */
#include "bench_time.h"
#include "pld_dtype.h"
#include "pld_kern.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint32_t state = 12345u;
static float next_val(void)
{
    state = state * 1664525u + 1013904223u;
    return (float)(state >> 8) * 0x1p-23f - 1.0f;
}

static uint64_t fnv(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211u;
    return h;
}

static int run(const char *name, pld_view_t *o, pld_view_t *a, pld_view_t *b, long iters, int runs, double flops)
{
    char err[256];
    double t[64];
    if (runs > 64)
        runs = 64;
    for (int r = 0; r < runs; r++) {
        const double t0 = cpu_s();
        for (long i = 0; i < iters; i++)
            if (pld_k_matmul(o, a, b, 0, err, sizeof err) != PLD_OK) {
                fprintf(stderr, "bench_kern_matmul: %s\n", err);
                return 1;
            }
        t[r] = (cpu_s() - t0) / (double)iters;
    }
    const double med = bench_median(t, runs);
    printf("%-14s [%lld, %lld] x [%lld, %lld]: %9.3f ms/call  %6.2f GFLOP/s  out hash %016llx\n", name,
           (long long)a->shape[0], (long long)a->shape[1], (long long)b->shape[0], (long long)b->shape[1], med * 1e3,
           flops / med * 1e-9, (unsigned long long)fnv(o->data, (size_t)(o->shape[0] * o->shape[1]) * 4));
    return 0;
}

int main(int argc, char **argv)
{
    const int64_t m = argc > 3 ? atoll(argv[1]) : 256, k = argc > 3 ? atoll(argv[2]) : 256, n = argc > 3 ? atoll(argv[3]) : 256;
    const long iters = argc > 4 ? atol(argv[4]) : 20;
    const int runs = argc > 5 ? atoi(argv[5]) : 5;
    if (argc > 6 && strcmp(argv[6], "base") == 0)
        pld_kern_simd_force_base(1);
    float *a = malloc((size_t)(m * k) * 4), *b = malloc((size_t)(k * n) * 4), *o = malloc((size_t)(m * n) * 4);
    uint16_t *ha = malloc((size_t)(m * k) * 2), *hb = malloc((size_t)(k * n) * 2);
    if (!a || !b || !o || !ha || !hb)
        return 1;
    for (int64_t i = 0; i < m * k; i++)
        ha[i] = pld_f32_to_f16(a[i] = next_val());
    for (int64_t i = 0; i < k * n; i++)
        hb[i] = pld_f32_to_f16(b[i] = next_val());
    pld_view_t vo = {0}, va = {0}, vb = {0};
    vo.data = o, vo.dt = PLD_DT_FP32, vo.rank = 2, vo.shape[0] = m, vo.shape[1] = n, vo.strides[0] = n, vo.strides[1] = 1;
    va.data = a, va.dt = PLD_DT_FP32, va.rank = 2, va.shape[0] = m, va.shape[1] = k, va.strides[0] = k, va.strides[1] = 1;
    vb.data = b, vb.dt = PLD_DT_FP32, vb.rank = 2, vb.shape[0] = k, vb.shape[1] = n, vb.strides[0] = n, vb.strides[1] = 1;
    const double flops = 2.0 * (double)m * (double)k * (double)n;
    printf("pld_k_matmul, SIMD set %s, CPU time per call, median of %d rounds of %ld calls\n", pld_kern_simd(), runs, iters);
    int rc = run("FP32", &vo, &va, &vb, iters, runs, flops);
    va.data = ha, va.dt = PLD_DT_FP16, vb.data = hb, vb.dt = PLD_DT_FP16;
    rc |= run("FP16->FP32", &vo, &va, &vb, iters, runs, flops);
    free(a), free(b), free(o), free(ha), free(hb);
    return rc;
}
