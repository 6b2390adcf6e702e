/* pld_kern_cast.c - dtype conversion with rounding modes (pld_k_cast). Shared loops and helpers:
 * pld_kern_int.h; semantic choices: the top of pld_kern.c. */
#include "pld_kern_int.h"
#include "pld_mem.h"

/* ---- 6d. cast -------------------------------------------------------------------- */

/* Float -> integer rounding of double v (in place over a buffer); the
 * roundings: pld_kern_fn.h, shared with native's fused loops. */
static void round_buf(double *v, int n, pld_round_k_t mode)
{
    switch (mode) {
    case PLD_R_ROUND:
        for (int j = 0; j < n; j++)
            v[j] = round(v[j]); /* ties away from zero */
        break;
    case PLD_R_FLOOR:
        for (int j = 0; j < n; j++)
            v[j] = floor(v[j]);
        break;
    case PLD_R_CEIL:
        for (int j = 0; j < n; j++)
            v[j] = ceil(v[j]);
        break;
    case PLD_R_TRUNC:
        for (int j = 0; j < n; j++)
            v[j] = trunc(v[j]);
        break;
    case PLD_R_ODD:
        for (int j = 0; j < n; j++)
            v[j] = pld_kfn_odd_int(v[j]);
        break;
    default: /* NONE, RINT: ties to even */
        for (int j = 0; j < n; j++)
            v[j] = pld_kfn_rne_int(v[j]);
        break;
    }
}

/* Saturating stores of integral doubles (NaN -> 0). */
#define SAT_LOOP(LO, HI, STW, UT)                                                                               \
    for (int j = 0; j < n; j++) {                                                                               \
        const double v = fb[j];                                                                                 \
        const int64_t r = pld_kfn_sat(v, (LO), (HI));                                                         \
        STW(p + j * s, (UT)r);                                                                                  \
    }

static void store_sat(kcls_t dc, const double *fb, int n, char *p, int64_t s)
{
    switch (dc) {
    case K_I8: SAT_LOOP(-128.0, 127.0, st_w8, uint32_t) break;
    case K_U8: SAT_LOOP(0.0, 255.0, st_w8, uint32_t) break;
    case K_I16: SAT_LOOP(-32768.0, 32767.0, st_w16, uint32_t) break;
    case K_U16: SAT_LOOP(0.0, 65535.0, st_w16, uint32_t) break;
    case K_I32: SAT_LOOP(-2147483648.0, 2147483647.0, st_w32, uint32_t) break;
    case K_U32: SAT_LOOP(0.0, 4294967295.0, st_w32, uint32_t) break;
    case K_I64:
        for (int j = 0; j < n; j++)
            st_w64(p + j * s, (uint64_t)pld_kern_f64_to_i64_sat(fb[j]));
        break;
    case K_U64:
        for (int j = 0; j < n; j++) {
            const double v = fb[j];
            st_w64(p + j * s, v != v || v <= 0 ? 0 : v >= 0x1p64 ? UINT64_MAX : (uint64_t)v);
        }
        break;
    default: break;
    }
}

/* One chunk of a cast: n elements of a (class sc, stride as) into out (class
 * dc, stride os). Stage 1 loads into a double or 64-bit buffer, stage 2
 * converts and stores; each stage is one loop chosen outside it. */
static void cast_chunk(kcls_t dc, char *op, int64_t os, kcls_t sc, const char *ap, int64_t as, int n,
                       pld_round_k_t mode)
{
    double fb[KCH];
    uint64_t ib[KCH];
    const int rm = pld_kfn_cast_rm((int)mode);
    if (cls_is_float(sc)) {
        switch (sc) {
        case K_F16: for (int j = 0; j < n; j++) fb[j] = ld_f16(ap + j * as); break;
        case K_BF16: for (int j = 0; j < n; j++) fb[j] = ld_bf16(ap + j * as); break;
        case K_F32: for (int j = 0; j < n; j++) fb[j] = ld_f32(ap + j * as); break;
        default: for (int j = 0; j < n; j++) fb[j] = ld_f64(ap + j * as); break;
        }
        switch (dc) {
        case K_F16:
        case K_BF16:
        case K_F32:
            for (int j = 0; j < n; j++)
                pld_kern_store_float_of_f64(op + j * os, dc, fb[j], rm);
            break;
        case K_F64:
            for (int j = 0; j < n; j++)
                st_f64(op + j * os, fb[j]);
            break;
        case K_BOOL:
            for (int j = 0; j < n; j++)
                st_w8(op + j * os, fb[j] != 0.0);
            break;
        default:
            round_buf(fb, n, mode);
            store_sat(dc, fb, n, op, os);
            break;
        }
        return;
    }
    switch (sc) {
    case K_BOOL:
    case K_U8: for (int j = 0; j < n; j++) ib[j] = ld_u8(ap + j * as); break;
    case K_U16: for (int j = 0; j < n; j++) ib[j] = ld_u16(ap + j * as); break;
    case K_U32: for (int j = 0; j < n; j++) ib[j] = ld_u32(ap + j * as); break;
    case K_U64: for (int j = 0; j < n; j++) ib[j] = ld_u64(ap + j * as); break;
    case K_I8: for (int j = 0; j < n; j++) ib[j] = (uint64_t)(int64_t)ld_i8(ap + j * as); break;
    case K_I16: for (int j = 0; j < n; j++) ib[j] = (uint64_t)(int64_t)ld_i16(ap + j * as); break;
    case K_I32: for (int j = 0; j < n; j++) ib[j] = (uint64_t)(int64_t)ld_i32(ap + j * as); break;
    default: for (int j = 0; j < n; j++) ib[j] = (uint64_t)ld_i64(ap + j * as); break;
    }
    const int sgn = cls_is_signed(sc);
    if (cls_is_float(dc)) {
        for (int j = 0; j < n; j++) {
            int neg;
            uint64_t mag;
            pld_kern_int_split(ib[j], sgn, &neg, &mag);
            pld_kern_store_float_of_int(op + j * os, dc, neg, mag);
        }
    } else if (dc == K_BOOL) {
        for (int j = 0; j < n; j++)
            st_w8(op + j * os, ib[j] != 0);
    } else {
        switch (dc) {
        case K_U8:
        case K_I8: for (int j = 0; j < n; j++) st_w8(op + j * os, (uint32_t)ib[j]); break;
        case K_U16:
        case K_I16: for (int j = 0; j < n; j++) st_w16(op + j * os, (uint32_t)ib[j]); break;
        case K_U32:
        case K_I32: for (int j = 0; j < n; j++) st_w32(op + j * os, (uint32_t)ib[j]); break;
        default: for (int j = 0; j < n; j++) st_w64(op + j * os, ib[j]); break;
        }
    }
}

void pld_kern_copy_run(kit_t *it, int sz);

pld_status_t pld_k_cast(const pld_view_t *out, const pld_view_t *a, pld_round_k_t mode, char *err, size_t errn)
{
    const kcls_t dc = kcls(out->dt), sc = kcls(a->dt);
    if (dc == K_NONE || sc == K_NONE)
        return pld_kern_fail(err, errn, "cast: unsupported dtype %s", pld_dtype_name(dc == K_NONE ? out->dt : a->dt));
    if ((unsigned)mode > PLD_R_ODD)
        return pld_kern_fail(err, errn, "cast: unknown rounding mode %d", (int)mode);
    if (out->data == a->data && pld_dtype_storage_bytes(out->dt) != pld_dtype_storage_bytes(a->dt))
        return pld_kern_fail(err, errn, "cast: in place from %s to %s changes the element size", pld_dtype_name(a->dt),
                    pld_dtype_name(out->dt));
    kit_t itv, *it = &itv;
    int empty;
    pld_status_t st = pld_kern_pair_setup(out, a, it, &empty, err, errn);
    if (st || empty)
        return st;
    if (dc == sc) { /* same class (e.g. INT64 -> INDEX): bits are unchanged */
        pld_kern_copy_run(it, pld_dtype_storage_bytes(out->dt));
        return PLD_OK;
    }
    const int direct_rne = mode == PLD_R_NONE || mode == PLD_R_RINT || mode == PLD_R_ROUND;
    if (sc == K_F32 && dc == K_F16 && direct_rne) {
        RUN2(2, 4, float, ld_f32, st_f16, x);
        return PLD_OK;
    }
    if (sc == K_F32 && dc == K_BF16 && direct_rne) {
        RUN2(2, 4, float, ld_f32, st_bf16, x);
        return PLD_OK;
    }
    if (sc == K_F16 && dc == K_F32) {
        RUN2(4, 2, float, ld_f16, st_f32, x);
        return PLD_OK;
    }
    if (sc == K_BF16 && dc == K_F32) {
        RUN2(4, 2, float, ld_bf16, st_f32, x);
        return PLD_OK;
    }
    for (int64_t r = 0; r < it->rows; r++) {
        char *o = it->base[0] + it->off[0];
        const char *p = it->base[1] + it->off[1];
        for (int64_t j0 = 0; j0 < it->n; j0 += KCH) {
            const int cn = (int)(it->n - j0 < KCH ? it->n - j0 : KCH);
            cast_chunk(dc, o + j0 * it->s[0], it->s[0], sc, p + j0 * it->s[1], it->s[1], cn, mode);
        }
        kit_next(it);
    }
    return PLD_OK;
}

pld_status_t pld_k_store_narrow(const pld_view_t *out, const pld_view_t *a, int atomic, char *err, size_t errn)
{
    if (a->dt != PLD_DT_FP32 || (out->dt != PLD_DT_BF16 && out->dt != PLD_DT_FP16))
        return pld_kern_fail(err, errn, "an accumulator store narrows FP32 to BF16 or FP16, not %s to %s",
                             pld_dtype_name(a->dt), pld_dtype_name(out->dt));
    if (!atomic)
        return pld_k_cast(out, a, PLD_R_RINT, err, errn);
    /* atomic: the rounded values in a packed buffer of out's dtype, then added */
    const int64_t n = pld_view_numel(a);
    void *buf = pld_mem_alloc((size_t)(n > 0 ? n : 1) * (size_t)pld_dtype_storage_bytes(out->dt));
    if (!buf)
        return (void)pld_kern_fail(err, errn, "out of memory"), PLD_E_NOMEM;
    pld_view_t r;
    pld_view_packed(&r, buf, out->dt, a->rank, a->shape);
    pld_status_t st = pld_k_cast(&r, a, PLD_R_RINT, err, errn);
    if (st == PLD_OK)
        st = pld_k_accumulate(out, &r, err, errn);
    pld_mem_free(buf);
    return st;
}
