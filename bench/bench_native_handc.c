/* bench_native_handc.c - the kernels of bench/native_*.pld written by hand in
 * plain C, the baseline of the "native / hand C" column of
 * bench/run_bench_native.sh (docs/benchmarks-native.md).
 *
 * Same sizes, inputs and iteration counts as the .pld kernels: the inputs are
 * pldrun's `random:SEED` generator (docs/npy.md, reproduced here), the counts
 * come from the command line. Each kernel does the same FP32 operations in the
 * same order as sim (one rounding per op; built with native's flags,
 * -ffp-contract=off among them: bench/native.cmake), so its
 * outputs are bit-identical to pldrun's and the script compares them. The C is
 * what one writes by hand without intrinsics: the element-wise chain fused into
 * one pass per iteration, matmul in i-k-j order over restrict rows (the same
 * k-ascending sum per element), row_sum as one sequential sum per row.
 *
 * usage: bench_native_handc KERNEL N RUNS [OUTDIR] | --flags
 *   KERNEL: scan | small_chain | chain | chain28 | matmul | rowsum
 *   prints "KERNEL median_seconds" (median of RUNS timed runs of N iterations,
 *   inputs built outside the timing) and, with OUTDIR, writes the outputs of
 *   the last run as OUTDIR/NAME.npy (the names of the .pld's Out parameters). */
#include "bench_time.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* keeps the compiler from moving work across iterations or dropping it */
#define BARRIER(p) __asm__ __volatile__("" : : "r"(p) : "memory")

/* pldrun's random:SEED (docs/npy.md): one splitmix64 output per element */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void random_f32(float *v, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (float)((double)((int32_t)(splitmix64(&seed) >> 40) - (1 << 23)) * 0x1p-23);
}

static void random_i32(int32_t *v, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (int32_t)((((splitmix64(&seed) >> 32) * 17u) >> 32)) - 8;
}

/* Writes a 2-D little-endian .npy (descr "<f4" or "<i4"); 0 on success. */
static int write_npy(const char *dir, const char *name, const char *descr, long rows, long cols, const void *data)
{
    char path[4096], hdr[128];
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    int len = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (%ld, %ld), }", descr,
                       rows, cols);
    int total = (10 + len + 1 + 63) / 64 * 64; /* magic + version + length, header, '\n': a multiple of 64 */
    while (10 + len + 1 < total)
        hdr[len++] = ' ';
    hdr[len++] = '\n';
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "bench_native_handc: %s: %s\n", path, strerror(errno));
        return 1;
    }
    const unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(len & 0xff),
                                   (unsigned char)(len >> 8)};
    size_t n = (size_t)rows * (size_t)cols * 4;
    int bad = fwrite(pre, 1, 10, f) != 10 || fwrite(hdr, 1, (size_t)len, f) != (size_t)len ||
              fwrite(data, 1, n, f) != n;
    bad |= fclose(f) != 0;
    if (bad)
        fprintf(stderr, "bench_native_handc: %s: write failed\n", path);
    return bad;
}

/* ---- bench/native_scan.pld: x [1, 4096] INT32 random:1 -> sums, hist */
enum { SCAN_N = 4096, SCAN_BINS = 17 };
static int32_t scan_x[SCAN_N], scan_sums[SCAN_N], scan_hist[SCAN_BINS];

static void scan_setup(void)
{
    random_i32(scan_x, SCAN_N, 1);
}

static void scan_run(long n)
{
    memset(scan_sums, 0, sizeof scan_sums);
    memset(scan_hist, 0, sizeof scan_hist);
    for (long p = 0; p < n; p++) {
        int32_t acc = 0;
        for (int i = 0; i < SCAN_N; i++) {
            const int32_t v = scan_x[i];
            acc += v;
            scan_sums[i] = acc;
            scan_hist[v + 8] += 1;
        }
        BARRIER(scan_sums);
    }
}

static int scan_save(const char *dir)
{
    return write_npy(dir, "sums", "<i4", 1, SCAN_N, scan_sums) | write_npy(dir, "hist", "<i4", 1, SCAN_BINS, scan_hist);
}

/* ---- bench/native_small_chain.pld: a, b [16, 16] FP32 random:2, random:3 -> y */
enum { SC_N = 16 * 16 };
static float sc_a[SC_N], sc_b[SC_N], sc_t[SC_N];

static void small_chain_setup(void)
{
    random_f32(sc_a, SC_N, 2);
    random_f32(sc_b, SC_N, 3);
}

static void small_chain_run(long n)
{
    for (int e = 0; e < SC_N; e++)
        sc_t[e] = sc_b[e] + 1.0f;
    for (long i = 0; i < n; i++) {
        for (int e = 0; e < SC_N; e++) {
            float u = sc_t[e] * sc_a[e];
            u = u + sc_b[e];
            u = u > -0.5f ? u : -0.5f;
            u = u < 3.0f ? u : 3.0f;
            sc_t[e] = fabsf(u) * 0.875f;
        }
        BARRIER(sc_t);
    }
}

static int small_chain_save(const char *dir)
{
    return write_npy(dir, "y", "<f4", 16, 16, sc_t);
}

/* ---- bench/native_chain.pld: x [64, 256] FP32 random:4 -> y */
enum { CH_N = 64 * 256 };
static float ch_x[CH_N], ch_t[CH_N];

static void chain_setup(void)
{
    random_f32(ch_x, CH_N, 4);
}

static void chain_run(long n)
{
    memcpy(ch_t, ch_x, sizeof ch_t);
    for (long i = 0; i < n; i++) {
        for (int e = 0; e < CH_N; e++) {
            const float x = ch_x[e];
            float u = ch_t[e] * 0.75f;
            u = u + x;
            u = fabsf(u);
            u = u + 0.5f;
            u = sqrtf(u);
            u = u * 0.875f;
            ch_t[e] = u > x ? u : x;
        }
        BARRIER(ch_t);
    }
}

/* ---- bench/native_chain28.pld: the same step four times per iteration (x as chain's) */
static void chain28_run(long n)
{
    memcpy(ch_t, ch_x, sizeof ch_t);
    for (long i = 0; i < n; i++) {
        for (int e = 0; e < CH_N; e++) {
            const float x = ch_x[e];
            float u = ch_t[e];
            for (int r = 0; r < 4; r++) {
                u = u * 0.75f;
                u = u + x;
                u = fabsf(u);
                u = u + 0.5f;
                u = sqrtf(u);
                u = u * 0.875f;
                u = u > x ? u : x;
            }
            ch_t[e] = u;
        }
        BARRIER(ch_t);
    }
}

static int chain_save(const char *dir)
{
    return write_npy(dir, "y", "<f4", 64, 256, ch_t);
}

/* ---- bench/native_matmul.pld: x, w [64, 64] FP32 random:4, random:5 -> y */
enum { MM = 64 };
static float mm_x[MM * MM], mm_w[MM * MM], mm_t[MM * MM], mm_c[MM * MM];

static void matmul_setup(void)
{
    random_f32(mm_x, MM * MM, 4);
    random_f32(mm_w, MM * MM, 5);
    for (int e = 0; e < MM * MM; e++)
        mm_w[e] = mm_w[e] * 0.0625f;
}

/* c = t @ w, each c[i][j] summed over k from 0 up in FP32 */
static void matmul_once(float *restrict c, const float *restrict t, const float *restrict w)
{
    for (int i = 0; i < MM; i++) {
        float *restrict ci = c + i * MM;
        for (int j = 0; j < MM; j++)
            ci[j] = 0.0f;
        for (int k = 0; k < MM; k++) {
            const float a = t[i * MM + k];
            const float *restrict wk = w + k * MM;
            for (int j = 0; j < MM; j++) {
                const float p = a * wk[j];
                ci[j] = ci[j] + p;
            }
        }
    }
}

static void matmul_run(long n)
{
    memcpy(mm_t, mm_x, sizeof mm_t);
    for (long i = 0; i < n; i++) {
        matmul_once(mm_c, mm_t, mm_w);
        for (int e = 0; e < MM * MM; e++)
            mm_t[e] = mm_c[e] + mm_x[e];
        BARRIER(mm_t);
    }
}

static int matmul_save(const char *dir)
{
    return write_npy(dir, "y", "<f4", MM, MM, mm_t);
}

/* ---- bench/native_rowsum.pld: x [64, 256] FP32 random:4 -> y [64, 1] */
enum { RS_R = 64, RS_C = 256 };
static float rs_x[RS_R * RS_C], rs_acc[RS_R];

static void rowsum_setup(void)
{
    random_f32(rs_x, RS_R * RS_C, 4);
}

static void rowsum_run(long n)
{
    memset(rs_acc, 0, sizeof rs_acc);
    for (long i = 0; i < n; i++) {
        for (int r = 0; r < RS_R; r++) {
            const float *row = rs_x + r * RS_C;
            float s = row[0];
            for (int c = 1; c < RS_C; c++)
                s = s + row[c];
            rs_acc[r] = rs_acc[r] + s;
        }
        BARRIER(rs_acc);
    }
}

static int rowsum_save(const char *dir)
{
    return write_npy(dir, "y", "<f4", RS_R, 1, rs_acc);
}

typedef struct kernel {
    const char *name;
    void (*setup)(void);
    void (*run)(long n);
    int (*save)(const char *dir);
} kernel_t;

static const kernel_t kernels[] = {
    {"scan", scan_setup, scan_run, scan_save},
    {"small_chain", small_chain_setup, small_chain_run, small_chain_save},
    {"chain", chain_setup, chain_run, chain_save},
    {"chain28", chain_setup, chain28_run, chain_save},
    {"matmul", matmul_setup, matmul_run, matmul_save},
    {"rowsum", rowsum_setup, rowsum_run, rowsum_save},
};

#ifndef PLD_HANDC_FLAGS
#define PLD_HANDC_FLAGS "unknown (not built by bench/native.cmake)"
#endif

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--flags") == 0) {
        /* the flags and the compiler this was built with (bench/native.cmake) */
        printf("%s\n%s\n", PLD_HANDC_FLAGS, __VERSION__);
        return 0;
    }
    const kernel_t *k = NULL;
    for (size_t i = 0; argc > 1 && i < sizeof kernels / sizeof kernels[0]; i++)
        if (strcmp(argv[1], kernels[i].name) == 0)
            k = &kernels[i];
    const long n = argc > 2 ? atol(argv[2]) : 0;
    const int runs = argc > 3 ? atoi(argv[3]) : 0;
    if (!k || n <= 0 || runs <= 0 || runs > 99 || argc > 5) {
        fprintf(stderr, "usage: bench_native_handc scan|small_chain|chain|chain28|matmul|rowsum N RUNS(1..99) [OUTDIR]\n");
        return 64;
    }
    double t[99];
    k->setup();
    for (int r = 0; r < runs; r++) {
        const double t0 = bench_now_s();
        k->run(n);
        t[r] = bench_now_s() - t0;
    }
    printf("%s %.6f\n", k->name, bench_median(t, runs));
    return argc > 4 && k->save(argv[4]) ? 74 : 0;
}
