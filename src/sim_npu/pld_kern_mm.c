/* pld_kern_mm.c - the matmul family's data movement that is not a plain copy:
 * unpacking PyPTO's MX-layout scale tensors (pld_k_mx_unpack), and the
 * blocked matmul with FP32 accumulators that pld_k_matmul runs for FP16,
 * BF16 and FP32 inputs (pld_kern_mm_f32; its register kernels:
 * pld_kern_mm.inc). Shared loops and helpers: pld_kern_int.h. */
#include "pld_kern_int.h"
#include "pld_mem.h"

#include <stdint.h>
#include <stdio.h>

pld_status_t pld_k_mx_unpack(const pld_view_t *out, const void *src, int64_t rows, int64_t cols, const int64_t *off,
                             int a_layout, char *err, size_t errn)
{
    const int a = a_layout != 0;
    if (a ? rows % 16 || cols % 2 : rows % 2 || cols % 16) {
        if (err && errn)
            snprintf(err, errn, "the %s packing is made of [%d, %d] blocks; tensor [%lld, %lld] is not a whole number "
                     "of them", a ? "MX_A_ZZ" : "MX_B_NN", a ? 16 : 2, a ? 2 : 16, (long long)rows, (long long)cols);
        return PLD_E_RUNTIME;
    }
    const uint8_t *s = src;
    for (int64_t i = 0; i < out->shape[0]; i++) {
        uint8_t *row = (uint8_t *)out->data + i * out->strides[0];
        const int64_t r = off[0] + i;
        for (int64_t j = 0; j < out->shape[1]; j++) {
            const int64_t c = off[1] + j;
            row[j * out->strides[1]] = s[a ? ((r / 16) * (cols / 2) + c / 2) * 32 + (r % 16) * 2 + c % 2
                                           : ((c / 16) * (rows / 2) + r / 2) * 32 + (c % 16) * 2 + r % 2];
        }
    }
    return PLD_OK;
}

/* ---- the blocked matmul with FP32 accumulators ----------------------------------- */

#define MM_MR 4 /* rows of the register kernel */

#define MMK_SFX base
#define MMK_ATTR
#define MMK_NR 8
#include "pld_kern_mm.inc"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(PLD_KERN_NO_AVX2)
#define MM_AVX2 1
#define MMK_SFX avx2
#define MMK_ATTR __attribute__((target("avx2")))
#define MMK_NR 16
#include "pld_kern_mm.inc"
#else
#define MM_AVX2 0
#endif

typedef struct mm_set {
    int nr;
    void (*k4)(int64_t, const float *restrict, const float *restrict, float *restrict, int64_t);
    void (*k1)(int64_t, const float *restrict, const float *restrict, float *restrict);
} mm_set_t;

static const mm_set_t mm_base = {8, mm_k4_base, mm_k1_base};
#if MM_AVX2
static const mm_set_t mm_avx2 = {16, mm_k4_avx2, mm_k1_avx2};
#endif

/* n elements of float class c, s bytes apart, into d (exact: FP16 and BF16
 * widen exactly; FP64 rounds to FP32 as the accumulator rows of matmul did). */
void pld_kern_row_load_f(kcls_t c, const char *p, int64_t s, int64_t n, float *d)
{
    if (c == K_F32 && s == 4) {
        memcpy(d, p, (size_t)n * 4);
        return;
    }
    switch (c) {
    case K_F16: for (int64_t j = 0; j < n; j++) d[j] = ld_f16(p + j * s); break;
    case K_BF16: for (int64_t j = 0; j < n; j++) d[j] = ld_bf16(p + j * s); break;
    case K_F32: for (int64_t j = 0; j < n; j++) d[j] = ld_f32(p + j * s); break;
    default: for (int64_t j = 0; j < n; j++) d[j] = (float)ld_f64(p + j * s); break;
    }
}

void pld_kern_row_store_f(kcls_t c, char *p, int64_t s, int64_t n, const float *v)
{
    if (c == K_F32 && s == 4) {
        memcpy(p, v, (size_t)n * 4);
        return;
    }
    switch (c) {
    case K_F16: for (int64_t j = 0; j < n; j++) st_f16(p + j * s, v[j]); break;
    case K_BF16: for (int64_t j = 0; j < n; j++) st_bf16(p + j * s, v[j]); break;
    case K_F32: for (int64_t j = 0; j < n; j++) st_f32(p + j * s, v[j]); break;
    default: for (int64_t j = 0; j < n; j++) st_f64(p + j * s, v[j]); break;
    }
}

/* Packs columns [0, cn) of kk rows of b (row stride sbk, column stride sbn
 * bytes) as bp[nr k + j], columns cn..nr-1 zero. */
static void mm_pack_b(kcls_t c, const char *b, int64_t sbk, int64_t sbn, int64_t kk, int cn, int nr, float *bp)
{
    for (int64_t k = 0; k < kk; k++) {
        float *d = bp + k * nr;
        pld_kern_row_load_f(c, b + k * sbk, sbn, cn, d);
        for (int j = cn; j < nr; j++)
            d[j] = 0.0f;
    }
}

/* Packs rows [0, rn) of a (row stride sam, column stride sak bytes) as
 * ap[MM_MR k + r]; rows rn..MM_MR-1 zero. rn == 1: ap[k], a contiguous row. */
static void mm_pack_a(kcls_t c, const char *a, int64_t sam, int64_t sak, int64_t kk, int rn, float *ap)
{
    if (rn == 1) {
        pld_kern_row_load_f(c, a, sak, kk, ap);
        return;
    }
    for (int r = 0; r < MM_MR; r++) {
        if (r >= rn) {
            for (int64_t k = 0; k < kk; k++)
                ap[k * MM_MR + r] = 0.0f;
            continue;
        }
        const char *row = a + r * sam;
        switch (c) {
        case K_F16: for (int64_t k = 0; k < kk; k++) ap[k * MM_MR + r] = ld_f16(row + k * sak); break;
        case K_BF16: for (int64_t k = 0; k < kk; k++) ap[k * MM_MR + r] = ld_bf16(row + k * sak); break;
        default: for (int64_t k = 0; k < kk; k++) ap[k * MM_MR + r] = ld_f32(row + k * sak); break;
        }
    }
}

enum { MM_STACK = 6144 }; /* floats of workspace on the stack (24 KiB: a [64, 64] product fits) */

int pld_kern_mm_f32(const pld_view_t *out, const pld_view_t *a, const pld_view_t *b, const kmm_geom_t *g,
                    int accumulate, kcls_t ac, kcls_t oc)
{
    const int64_t m = g->m, kk = g->kk, nn = g->nn, sam = g->sam, sak = g->sak, sbk = g->sbk, sbn = g->sbn;
    const int64_t som = g->som, son = g->son;
    const mm_set_t *set = &mm_base;
#if MM_AVX2
    if (pld_kern_simd_avx2())
        set = &mm_avx2;
#endif
    const int nr = set->nr;
    if (m <= 0 || nn <= 0)
        return 0;
    /* a panel of nc columns: its packed B (kk x nc floats) about 128 KiB */
    const int64_t kk1 = kk > 0 ? kk : 1, nnr = (nn + nr - 1) / nr * nr;
    int64_t nc = 32768 / kk1 / nr * nr;
    if (nc < nr)
        nc = nr;
    if (nc > nnr)
        nc = nnr;
    const size_t need = (size_t)(kk1 * nc + kk1 * MM_MR + MM_MR * nr);
    float stk[MM_STACK];
    float *ws = need <= MM_STACK ? stk : pld_mem_alloc_aligned(64, need * sizeof(float), 0);
    if (!ws)
        return -1;
    float *bp = ws, *ap = ws + kk1 * nc, *cb = ap + kk1 * MM_MR;
    const int direct = oc == K_F32 && son == 4 && som % 4 == 0 && ((uintptr_t)out->data & 3) == 0;
    for (int64_t j0 = 0; j0 < nn; j0 += nc) {
        const int64_t ncw = nn - j0 < nc ? nn - j0 : nc;
        for (int64_t jp = 0; jp < ncw; jp += nr) {
            const int cn = (int)(ncw - jp < nr ? ncw - jp : nr);
            mm_pack_b(ac, (const char *)b->data + (j0 + jp) * sbn, sbk, sbn, kk, cn, nr, bp + jp * kk);
        }
        for (int64_t i0 = 0; i0 < m; i0 += MM_MR) {
            const int rn = (int)(m - i0 < MM_MR ? m - i0 : MM_MR);
            const char *arow = (const char *)a->data + i0 * sam;
            char *orow = (char *)out->data + i0 * som + j0 * son;
            /* row tails (and gemv) take the one-row kernel row by row */
            const int rows = rn == MM_MR ? 1 : rn;
            for (int q = 0; q < rows; q++) {
                mm_pack_a(ac, arow + q * sam, sam, sak, kk, rn == MM_MR ? MM_MR : 1, ap);
                char *o = orow + q * som;
                for (int64_t jp = 0; jp < ncw; jp += nr) {
                    const int cn = (int)(ncw - jp < nr ? ncw - jp : nr);
                    char *oc0 = o + jp * son;
                    const int rk = rn == MM_MR ? MM_MR : 1;
                    float *c = cb;
                    int64_t ldc = nr;
                    if (direct && cn == nr) {
                        c = (float *)(void *)oc0, ldc = som / 4;
                        if (!accumulate)
                            for (int r = 0; r < rk; r++)
                                memset(c + r * ldc, 0, (size_t)nr * 4);
                    } else {
                        for (int r = 0; r < rk; r++) {
                            if (accumulate)
                                pld_kern_row_load_f(oc, oc0 + r * som, son, cn, cb + r * nr);
                            else
                                memset(cb + r * nr, 0, (size_t)cn * 4);
                            for (int j = cn; j < nr; j++)
                                cb[r * nr + j] = 0.0f;
                        }
                    }
                    if (rk == MM_MR)
                        set->k4(kk, ap, bp + jp * kk, c, ldc);
                    else
                        set->k1(kk, ap, bp + jp * kk, c);
                    if (c == cb)
                        for (int r = 0; r < rk; r++)
                            pld_kern_row_store_f(oc, oc0 + r * som, son, cn, cb + r * nr);
                }
            }
        }
    }
    if (ws != stk)
        pld_mem_free(ws);
    return 0;
}
