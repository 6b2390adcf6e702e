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
 *   KERNEL: scan | small_chain | chain | chain28 | matmul | rowsum, and the
 *   kernels of issue 44: softmax_rmsnorm | layernorm | rope | attention |
 *   matmul256 | matmul256_f16 | scan_continue
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

/* Writes a 2-D little-endian .npy (descr "<f4", "<i4" or "<f2"); 0 on success. */
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
    size_t n = (size_t)rows * (size_t)cols * (size_t)(descr[2] - '0');
    int bad = fwrite(pre, 1, 10, f) != 10 || fwrite(hdr, 1, (size_t)len, f) != (size_t)len ||
              fwrite(data, 1, n, f) != n;
    bad |= fclose(f) != 0;
    if (bad)
        fprintf(stderr, "bench_native_handc: %s: write failed\n", path);
    return bad;
}

/* ---- the two reductions whose order the kernel library fixes: every kernel
 * below sums rows and multiplies matrices through these two functions only,
 * so a change of the library's order (docs/ops-numerics.md) is a change here
 * and nowhere else. */

/* The sum of a row of n floats in the library's order (pld_kern_reduce.c,
 * RED_ROW): the first element, then each next one added, left to right, one
 * FP32 rounding per step. */
static inline float row_sum_f32(const float *restrict row, int n)
{
    float s = row[0];
    for (int c = 1; c < n; c++)
        s = s + row[c];
    return s;
}

/* c[m, n] = a[m, kk] @ b[kk, n], row-major, in the library's order
 * (pld_kern_reduce.c, matmul2): each c[i][j] starts at 0 and adds
 * a[i][k] * b[k][j] for k from 0 up, product and sum each rounded to FP32 (no
 * FMA: -ffp-contract=off). Written i-k-j over restrict rows, so the inner loop
 * vectorises across j; FP16 operands come in as floats (exact, and their
 * products are exact in FP32, as in the library). Not inline: one copy of the
 * loop, so its speed does not depend on where GCC places each inlined copy
 * (inlined into matmul_run, the 64x64 kernel ran 1.5-1.8x slower than this
 * copy, the same instructions at another loop alignment). */
static void matmul_f32(float *restrict c, const float *restrict a, const float *restrict b, int m, int kk, int n)
{
    for (int i = 0; i < m; i++) {
        float *restrict ci = c + (size_t)i * n;
        for (int j = 0; j < n; j++)
            ci[j] = 0.0f;
        for (int k = 0; k < kk; k++) {
            const float av = a[(size_t)i * kk + k];
            const float *restrict bk = b + (size_t)k * n;
            for (int j = 0; j < n; j++) {
                const float p = av * bk[j];
                ci[j] = ci[j] + p;
            }
        }
    }
}

/* FP16 <-> FP32 in plain C: FP16 to FP32 is exact; FP32 to FP16 rounds to
 * nearest, ties to even (pldrun's casts with mode rint / round and its FP16
 * random inputs), subnormal results included. Checked once against
 * src/base/pld_half.h (the library's) on every FP16 and every FP32 input: the
 * same bits. */
static float f16_to_f32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    uint32_t bits;
    float f;
    if (e == 0) { /* zero or subnormal: m * 2^-24, exact */
        f = (float)m * 0x1p-24f;
        return sign ? -f : f;
    }
    if (e == 31)
        bits = sign | 0x7f800000u | (m << 13);
    else
        bits = sign | ((e + 112u) << 23) | (m << 13);
    memcpy(&f, &bits, sizeof f);
    return f;
}

static uint16_t f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    const uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) /* NaN: quiet, the top payload bits */
        return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    if (ax >= 0x477ff000u) /* >= 65520 (and inf): inf */
        return (uint16_t)(sign | 0x7c00u);
    if (ax >= 0x38800000u) /* normal: rebias, round the 13 dropped bits to nearest even */
        return (uint16_t)(sign | ((ax - 0x38000000u + 0x0fffu + ((ax >> 13) & 1u)) >> 13));
    const uint32_t e = ax >> 23;
    if (e < 102) /* below 2^-25: 0 */
        return (uint16_t)sign;
    const uint32_t m = (ax & 0x7fffffu) | 0x800000u, sh = 126 - e; /* subnormal: m * 2^(e-150) / 2^-24 */
    uint32_t r = m >> sh;
    const uint32_t rest = m & ((1u << sh) - 1), half = 1u << (sh - 1);
    if (rest > half || (rest == half && (r & 1u)))
        r++;
    return (uint16_t)(sign | r);
}

static void random_f16(uint16_t *v, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        v[i] = f32_to_f16((float)((double)((int32_t)(splitmix64(&seed) >> 40) - (1 << 23)) * 0x1p-23));
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

static void matmul_run(long n)
{
    memcpy(mm_t, mm_x, sizeof mm_t);
    for (long i = 0; i < n; i++) {
        matmul_f32(mm_c, mm_t, mm_w, MM, MM, MM);
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
        for (int r = 0; r < RS_R; r++)
            rs_acc[r] = rs_acc[r] + row_sum_f32(rs_x + r * RS_C, RS_C);
        BARRIER(rs_acc);
    }
}

static int rowsum_save(const char *dir)
{
    return write_npy(dir, "y", "<f4", RS_R, 1, rs_acc);
}

/* ==== issue 44: kernels of realistic length ==== */

/* ---- bench/native_softmax_rmsnorm.pld: x [64, 128] FP32 random:4, gamma [1, 128]
 * random:6 -> y. Per row: softmax, then rmsnorm times gamma, fused by row. */
enum { SR_R = 64, SR_C = 128 };
static float sr_x[SR_R * SR_C], sr_g[SR_C], sr_t[SR_R * SR_C];

static void softmax_rmsnorm_setup(void)
{
    random_f32(sr_x, SR_R * SR_C, 4);
    random_f32(sr_g, SR_C, 6);
}

static void softmax_rmsnorm_run(long n)
{
    memcpy(sr_t, sr_x, sizeof sr_t);
    for (long it = 0; it < n; it++) {
        for (int r = 0; r < SR_R; r++) {
            float *restrict t = sr_t + r * SR_C;
            float e[SR_C], q[SR_C];
            float m = t[0];
            for (int c = 1; c < SR_C; c++)
                m = t[c] > m ? t[c] : m;
            for (int c = 0; c < SR_C; c++)
                e[c] = (float)exp((double)(t[c] - m)); /* the library's exp: double, rounded once */
            const float s = row_sum_f32(e, SR_C);
            for (int c = 0; c < SR_C; c++) {
                e[c] = e[c] / s; /* p */
                q[c] = e[c] * e[c];
            }
            const float ms = row_sum_f32(q, SR_C) * 0.0078125f;
            const float rs = 1.0f / sqrtf(ms + (float)1e-06); /* rsqrt: sqrt, then 1 / x */
            for (int c = 0; c < SR_C; c++)
                t[c] = e[c] * rs * sr_g[c];
        }
        BARRIER(sr_t);
    }
}

static int softmax_rmsnorm_save(const char *dir)
{
    return write_npy(dir, "y", "<f4", SR_R, SR_C, sr_t);
}

/* ---- bench/native_layernorm.pld: x [64, 128] FP32 random:4, gamma, beta [1, 128]
 * random:6, random:7 -> y. Per row: t <- (t - mean) * rsqrt(var + eps) * gamma + beta + x. */
static float ln_b[SR_C];

static void layernorm_setup(void)
{
    softmax_rmsnorm_setup();
    random_f32(ln_b, SR_C, 7);
}

static void layernorm_run(long n)
{
    memcpy(sr_t, sr_x, sizeof sr_t);
    for (long it = 0; it < n; it++) {
        for (int r = 0; r < SR_R; r++) {
            float *restrict t = sr_t + r * SR_C;
            const float *restrict x = sr_x + r * SR_C;
            float d[SR_C], q[SR_C];
            const float mean = row_sum_f32(t, SR_C) * 0.0078125f;
            for (int c = 0; c < SR_C; c++) {
                d[c] = t[c] - mean;
                q[c] = d[c] * d[c];
            }
            const float var = row_sum_f32(q, SR_C) * 0.0078125f;
            const float rs = 1.0f / sqrtf(var + (float)1e-05);
            for (int c = 0; c < SR_C; c++)
                t[c] = d[c] * rs * sr_g[c] + ln_b[c] + x[c];
        }
        BARRIER(sr_t);
    }
}

/* ---- bench/native_rope.pld: x [64, 128] FP32 random:4, angles th [64, 64] random:8 -> y.
 * Each (lo, hi) = (t[r][j], t[r][64 + j]) pair rotated by th[r][j], in place. */
enum { RO_R = 64, RO_D = 128, RO_H = 64 };
static float ro_x[RO_R * RO_D], ro_th[RO_R * RO_H], ro_t[RO_R * RO_D];

static void rope_setup(void)
{
    random_f32(ro_x, RO_R * RO_D, 4);
    random_f32(ro_th, RO_R * RO_H, 8);
}

static void rope_run(long n)
{
    static float cs[RO_R * RO_H], sn[RO_R * RO_H];
    for (int e = 0; e < RO_R * RO_H; e++) { /* pl.tile.cos / sin: double, rounded once */
        cs[e] = (float)cos((double)ro_th[e]);
        sn[e] = (float)sin((double)ro_th[e]);
    }
    memcpy(ro_t, ro_x, sizeof ro_t);
    for (long it = 0; it < n; it++) {
        for (int r = 0; r < RO_R; r++) {
            float *restrict lo = ro_t + r * RO_D, *restrict hi = lo + RO_H;
            const float *restrict c = cs + r * RO_H, *restrict s = sn + r * RO_H;
            for (int j = 0; j < RO_H; j++) {
                const float l = lo[j], h = hi[j];
                lo[j] = l * c[j] - h * s[j];
                hi[j] = h * c[j] + l * s[j];
            }
        }
        BARRIER(ro_t);
    }
}

static int rope_save(const char *dir)
{
    return write_npy(dir, "y", "<f4", RO_R, RO_D, ro_t);
}

/* ---- bench/native_attention.pld: q, k, v [64, 64] FP16 random:9, 10, 11 -> y FP16.
 * q <- fp16(softmax(q k^T / 8) as FP16 @ v + q0), FP32 accumulation. */
enum { AT_S = 64, AT_D = 64 };
static uint16_t at_q[AT_S * AT_D], at_k[AT_S * AT_D], at_v[AT_S * AT_D], at_t[AT_S * AT_D];

static void attention_setup(void)
{
    random_f16(at_q, AT_S * AT_D, 9);
    random_f16(at_k, AT_S * AT_D, 10);
    random_f16(at_v, AT_S * AT_D, 11);
}

static void attention_run(long n)
{
    static float kt[AT_D * AT_S], vf[AT_S * AT_D], q0[AT_S * AT_D], tf[AT_S * AT_D], sc[AT_S * AT_S],
        o[AT_S * AT_D];
    for (int i = 0; i < AT_S; i++)
        for (int j = 0; j < AT_D; j++) {
            kt[j * AT_S + i] = f16_to_f32(at_k[i * AT_D + j]);
            vf[i * AT_D + j] = f16_to_f32(at_v[i * AT_D + j]);
            q0[i * AT_D + j] = f16_to_f32(at_q[i * AT_D + j]);
        }
    memcpy(at_t, at_q, sizeof at_t);
    for (long it = 0; it < n; it++) {
        for (int e = 0; e < AT_S * AT_D; e++)
            tf[e] = f16_to_f32(at_t[e]);
        matmul_f32(sc, tf, kt, AT_S, AT_D, AT_S);
        for (int r = 0; r < AT_S; r++) {
            float *restrict p = sc + r * AT_S;
            for (int c = 0; c < AT_S; c++)
                p[c] = p[c] * 0.125f;
            float m = p[0];
            for (int c = 1; c < AT_S; c++)
                m = p[c] > m ? p[c] : m;
            for (int c = 0; c < AT_S; c++)
                p[c] = (float)exp((double)(p[c] - m));
            const float z = row_sum_f32(p, AT_S);
            for (int c = 0; c < AT_S; c++)
                p[c] = f16_to_f32(f32_to_f16(p[c] / z)); /* P rounded to FP16 for the second matmul */
        }
        matmul_f32(o, sc, vf, AT_S, AT_S, AT_D);
        for (int e = 0; e < AT_S * AT_D; e++)
            at_t[e] = f32_to_f16(o[e] + q0[e]);
        BARRIER(at_t);
    }
}

static int attention_save(const char *dir)
{
    return write_npy(dir, "y", "<f2", AT_S, AT_D, at_t);
}

/* ---- bench/native_matmul256.pld (FP32) and native_matmul256_f16.pld (FP16 inputs):
 * x, w [256, 256] random:4, random:5 -> y [256, 256] FP32 = x @ w, n times. One
 * unblocked product: the .pld's blocks sum each element in the same order. */
enum { M2 = 256 };
static float m2_x[M2 * M2], m2_w[M2 * M2], m2_y[M2 * M2];
static uint16_t m2_xh[M2 * M2], m2_wh[M2 * M2];

static void matmul256_setup(void)
{
    random_f32(m2_x, M2 * M2, 4);
    random_f32(m2_w, M2 * M2, 5);
}

static void matmul256_run(long n)
{
    for (long it = 0; it < n; it++) {
        matmul_f32(m2_y, m2_x, m2_w, M2, M2, M2);
        BARRIER(m2_y);
    }
}

static void matmul256_f16_setup(void)
{
    random_f16(m2_xh, M2 * M2, 4);
    random_f16(m2_wh, M2 * M2, 5);
}

static void matmul256_f16_run(long n)
{
    for (long it = 0; it < n; it++) {
        /* the kernel loads its FP16 inputs on every iteration: converted here each time too */
        for (int e = 0; e < M2 * M2; e++) {
            m2_x[e] = f16_to_f32(m2_xh[e]);
            m2_w[e] = f16_to_f32(m2_wh[e]);
        }
        matmul_f32(m2_y, m2_x, m2_w, M2, M2, M2);
        BARRIER(m2_y);
    }
}

static int matmul256_save(const char *dir)
{
    return write_npy(dir, "y", "<f4", M2, M2, m2_y);
}

/* ---- bench/native_scan_continue.pld: x [1, 4096] INT32 random:1 -> sums, hist [1, 9].
 * The scan with the negative elements skipped (`continue`). */
enum { SCC_BINS = 9 };
static int32_t scc_hist[SCC_BINS];

static void scan_continue_run(long n)
{
    memset(scan_sums, 0, sizeof scan_sums);
    memset(scc_hist, 0, sizeof scc_hist);
    for (long p = 0; p < n; p++) {
        int32_t acc = 0;
        for (int i = 0; i < SCAN_N; i++) {
            const int32_t v = scan_x[i];
            if (v < 0)
                continue;
            acc += v;
            scan_sums[i] = acc;
            scc_hist[v] += 1;
        }
        BARRIER(scan_sums);
    }
}

static int scan_continue_save(const char *dir)
{
    return write_npy(dir, "sums", "<i4", 1, SCAN_N, scan_sums) | write_npy(dir, "hist", "<i4", 1, SCC_BINS, scc_hist);
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
    {"softmax_rmsnorm", softmax_rmsnorm_setup, softmax_rmsnorm_run, softmax_rmsnorm_save},
    {"layernorm", layernorm_setup, layernorm_run, softmax_rmsnorm_save},
    {"rope", rope_setup, rope_run, rope_save},
    {"attention", attention_setup, attention_run, attention_save},
    {"matmul256", matmul256_setup, matmul256_run, matmul256_save},
    {"matmul256_f16", matmul256_f16_setup, matmul256_f16_run, matmul256_save},
    {"scan_continue", scan_setup, scan_continue_run, scan_continue_save},
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
        fprintf(stderr, "usage: bench_native_handc KERNEL N RUNS(1..99) [OUTDIR]; KERNEL:");
        for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
            fprintf(stderr, " %s", kernels[i].name);
        fprintf(stderr, "\n");
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
