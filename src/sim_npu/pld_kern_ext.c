/* pld_kern_ext.c - the element-wise ops of issue 11 beyond the arithmetic
 * core of pld_kern_elem.c: fmod / rem, bitwise and shifts, compare (dense
 * 0/1 and PyPTO's packed predicate mask), select, leaky / parametric ReLU,
 * three-operand add / sub, sin / cos, the index generators ci and tri, and the
 * counter-based random generator (pto-isa TRANDOM, Philox4x32).
 *
 * These kernels favour clarity over speed: one N-D odometer over the output
 * and per-element access through pld_elem_get_* / pld_elem_set_* (which
 * round RNE to FP16/BF16/FP32 once, and wrap integers to their width). The
 * rounding of every op is stated next to it and in docs/ops-numerics.md. */
#include "pld_kern_int.h"

/* ---- the odometer ------------------------------------------------------------ */

/* Offsets (in elements) of up to 4 views walking out's shape; views with a
 * smaller rank or size-1 dims broadcast (stride 0). */
typedef struct xit {
    int rank, nv;
    int64_t shape[PLD_MAX_RANK], idx[PLD_MAX_RANK];
    int64_t st[4][PLD_MAX_RANK];
    int64_t off[4];
} xit_t;

static int xit_init(xit_t *x, const pld_view_t *out, const pld_view_t *const *v, int nv)
{
    memset(x, 0, sizeof *x);
    x->rank = out->rank;
    x->nv = nv;
    memcpy(x->shape, out->shape, sizeof x->shape);
    for (int k = 0; k < nv; k++) {
        if (!v[k])
            continue;
        if (k == 0)
            memcpy(x->st[0], out->strides, sizeof x->st[0]);
        else if (pld_kern_bcast_strides(v[k], out->rank, out->shape, x->st[k]))
            return -1;
    }
    return 0;
}

static void xit_next(xit_t *x)
{
    for (int d = x->rank - 1; d >= 0; d--) {
        x->idx[d]++;
        for (int k = 0; k < x->nv; k++)
            x->off[k] += x->st[k][d];
        if (x->idx[d] < x->shape[d])
            return;
        for (int k = 0; k < x->nv; k++)
            x->off[k] -= x->st[k][d] * x->shape[d];
        x->idx[d] = 0;
    }
}

static int is_int(pld_dtype_t dt)
{
    kcls_t c = kcls(dt);
    return c != K_NONE && !cls_is_float(c);
}

static int width_of(pld_dtype_t dt)
{
    return 8 * pld_dtype_storage_bytes(dt);
}

/* The value of an integer element as the dtype's unsigned bit pattern. */
static uint64_t ubits(int64_t v, int w)
{
    return w >= 64 ? (uint64_t)v : (uint64_t)v & (((uint64_t)1 << w) - 1);
}

/* ---- per-element semantics ------------------------------------------------------ */

/* Python's float %: the remainder takes the divisor's sign (CPython's
 * float_rem, exact in binary floating point). */
static double py_fmod_floor(double a, double b)
{
    double m = fmod(a, b);
    if (m != 0) {
        if ((b < 0) != (m < 0))
            m += b;
    } else {
        m = copysign(0.0, b);
    }
    return m;
}

/* Integer op; *bad set on a zero divisor (1) or a negative shift count (2). */
static int64_t int_op(pld_xop_k_t op, int64_t a, int64_t b, int64_t c, int w, int sgn, int *bad)
{
    switch (op) {
    case PLD_KX_FMOD:
    case PLD_KX_REM: {
        if (b == 0) {
            *bad = 1;
            return 0;
        }
        if (b == -1)
            return 0;
        if (!sgn) {
            uint64_t ua = ubits(a, w), ub = ubits(b, w);
            return (int64_t)(ua % ub);
        }
        int64_t r = a % b;
        if (op == PLD_KX_REM && r != 0 && ((r < 0) != (b < 0)))
            r += b;
        return r;
    }
    case PLD_KX_AND: return a & b;
    case PLD_KX_OR: return a | b;
    case PLD_KX_XOR: return a ^ b;
    case PLD_KX_NOT: return ~a;
    case PLD_KX_SHL:
    case PLD_KX_SHR:
        if (b < 0) {
            *bad = 2;
            return 0;
        }
        if (op == PLD_KX_SHL)
            return b >= w ? 0 : (int64_t)(ubits(a, w) << b);
        if (sgn)
            return b >= w ? (a < 0 ? -1 : 0) : a >> b;
        return b >= w ? 0 : (int64_t)(ubits(a, w) >> b);
    case PLD_KX_LRELU: /* as PRELU, with a scalar slope (TLRELU) */
    case PLD_KX_PRELU: return a > 0 ? a : (int64_t)((uint64_t)a * (uint64_t)b);
    case PLD_KX_ADDC: return (int64_t)((uint64_t)a + (uint64_t)b + (uint64_t)c);
    case PLD_KX_SUBC: return (int64_t)((uint64_t)a - (uint64_t)b - (uint64_t)c);
    case PLD_KX_EQ: return a == b;
    case PLD_KX_NE: return a != b;
    case PLD_KX_LT: return a < b;
    case PLD_KX_LE: return a <= b;
    case PLD_KX_GT: return a > b;
    case PLD_KX_GE: return a >= b;
    default: return 0;
    }
}

/* Float op on values of a float dtype (FP16/BF16/FP32 held exactly in
 * double). f32: the dtype is at most FP32 wide, so the arithmetic of the
 * multi-step ops is FP32 arithmetic (rounded to FP32 after each step), and the
 * result is rounded once more to the dtype by the store. */
static double flt_op(pld_xop_k_t op, double a, double b, double c, int f32)
{
    switch (op) {
    case PLD_KX_FMOD: return fmod(a, b);      /* exact: rounds once */
    case PLD_KX_REM: return py_fmod_floor(a, b);
    case PLD_KX_SIN: return sin(a);           /* double, rounded once to the dtype */
    case PLD_KX_COS: return cos(a);
    case PLD_KX_LRELU:                        /* pto-isa TLRELU: x > 0 ? x : x * slope */
    case PLD_KX_PRELU: return a > 0 ? a : (f32 ? (double)(float)(a * b) : a * b);
    case PLD_KX_ADDC: return f32 ? (double)((float)(a + b) + (float)c) : a + b + c;
    case PLD_KX_SUBC: return f32 ? (double)((float)(a - b) - (float)c) : a - b - c;
    case PLD_KX_EQ: return a == b;
    case PLD_KX_NE: return a != b;
    case PLD_KX_LT: return a < b;
    case PLD_KX_LE: return a <= b;
    case PLD_KX_GT: return a > b;
    case PLD_KX_GE: return a >= b;
    default: return 0;
    }
}

static const char *xop_name(pld_xop_k_t op)
{
    static const char *const names[] = {"fmod", "rem", "and", "or", "xor", "not", "shl", "shr", "sin", "cos",
                                        "lrelu", "prelu", "addc", "subc", "eq", "ne", "lt", "le", "gt", "ge"};
    return (unsigned)op < sizeof names / sizeof names[0] ? names[op] : "?";
}

static int xop_int_only(pld_xop_k_t op)
{
    return op == PLD_KX_AND || op == PLD_KX_OR || op == PLD_KX_XOR || op == PLD_KX_NOT || op == PLD_KX_SHL ||
           op == PLD_KX_SHR;
}

static int xop_is_cmp(pld_xop_k_t op)
{
    return op >= PLD_KX_EQ && op <= PLD_KX_GE;
}

pld_status_t pld_k_ext(pld_xop_k_t op, const pld_view_t *out, const pld_view_t *a, const pld_view_t *b,
                       const pld_view_t *c, char *err, size_t errn)
{
    pld_status_t st;
    if ((unsigned)op > PLD_KX_GE)
        return pld_kern_fail(err, errn, "unknown element-wise op %d", (int)op);
    if ((st = pld_kern_check_view(out, "out", err, errn)) || (st = pld_kern_check_view(a, "a", err, errn)) ||
        (b && (st = pld_kern_check_view(b, "b", err, errn))) || (c && (st = pld_kern_check_view(c, "c", err, errn))))
        return st;
    const pld_dtype_t dt = a->dt;
    if (kcls(dt) == K_NONE)
        return pld_kern_fail(err, errn, "%s: unsupported dtype %s", xop_name(op), pld_dtype_name(dt));
    if ((b && b->dt != dt) || (c && c->dt != dt) || (!xop_is_cmp(op) && out->dt != dt))
        return pld_kern_fail(err, errn, "%s: dtype mismatch (out %s, a %s%s%s)", xop_name(op), pld_dtype_name(out->dt),
                             pld_dtype_name(dt), b ? ", b " : "", b ? pld_dtype_name(b->dt) : "");
    if (xop_int_only(op) && !is_int(dt))
        return pld_kern_fail(err, errn, "%s needs an integer dtype, got %s", xop_name(op), pld_dtype_name(dt));
    if ((op == PLD_KX_SIN || op == PLD_KX_COS) && is_int(dt))
        return pld_kern_fail(err, errn, "%s needs a float dtype, got %s", xop_name(op), pld_dtype_name(dt));
    const pld_view_t *vs[4] = {out, a, b, c};
    xit_t x;
    if (xit_init(&x, out, vs, 4))
        return pld_kern_fail(err, errn, "%s: operand shapes do not broadcast to the result", xop_name(op));
    const int64_t n = pld_view_numel(out);
    const int fl = !is_int(dt), w = width_of(dt), sgn = cls_is_signed(kcls(dt));
    const int f32 = fl && dt != PLD_DT_FP64;
    int bad = 0;
    for (int64_t i = 0; i < n && !bad; i++, xit_next(&x)) {
        if (fl) {
            double va = pld_elem_get_f(a->data, dt, x.off[1]);
            double vb = b ? pld_elem_get_f(b->data, dt, x.off[2]) : 0;
            double vc = c ? pld_elem_get_f(c->data, dt, x.off[3]) : 0;
            double r = flt_op(op, va, vb, vc, f32);
            if (is_int(out->dt))
                pld_elem_set_i(out->data, out->dt, x.off[0], (int64_t)r);
            else
                pld_elem_set_f(out->data, out->dt, x.off[0], r);
        } else {
            int64_t va = pld_elem_get_i(a->data, dt, x.off[1]);
            int64_t vb = b ? pld_elem_get_i(b->data, dt, x.off[2]) : 0;
            int64_t vc = c ? pld_elem_get_i(c->data, dt, x.off[3]) : 0;
            int64_t r = int_op(op, va, vb, vc, w, sgn, &bad);
            if (is_int(out->dt))
                pld_elem_set_i(out->data, out->dt, x.off[0], r);
            else
                pld_elem_set_f(out->data, out->dt, x.off[0], (double)r);
        }
    }
    if (bad == 1)
        return pld_kern_fail(err, errn, "integer division by zero");
    if (bad == 2)
        return pld_kern_fail(err, errn, "negative shift count");
    return PLD_OK;
}

pld_status_t pld_k_ext_scalar(pld_xop_k_t op, const pld_view_t *out, const pld_view_t *a, double s_f, int64_t s_i,
                              const pld_view_t *c, char *err, size_t errn)
{
    uint64_t cell = 0; /* the scalar in the element dtype, 8-byte aligned */
    const kcls_t k = kcls(a->dt);
    if (k != K_NONE && !cls_is_float(k) && (op == PLD_KX_SHL || op == PLD_KX_SHR)) {
        if (s_i < 0)
            return pld_kern_fail(err, errn, "negative shift count %lld", (long long)s_i);
        if (s_i > width_of(a->dt))
            s_i = width_of(a->dt); /* every bit shifts out; the width itself fits every dtype */
    }
    if (k != K_NONE) {
        if (cls_is_float(k))
            pld_elem_set_f(&cell, a->dt, 0, s_f);
        else
            pld_elem_set_i(&cell, a->dt, 0, s_i);
    }
    pld_view_t sv;
    memset(&sv, 0, sizeof sv);
    sv.data = &cell;
    sv.dt = a->dt;
    return pld_k_ext(op, out, a, &sv, c, err, errn);
}

/* ---- packed predicate masks -------------------------------------------------- */

/* PyPTO's packing of tile.cmp (src/ir/op/tile_ops/elementwise.cpp,
 * MakePackedPredicateTileType): one bit per element along the last axis, 8 per
 * byte; the bit order is ours (bit j % 8 of byte j / 8, LSB first: PyPTO calls
 * the encoding target-defined). */
pld_status_t pld_k_cmp_mask(pld_xop_k_t op, const pld_view_t *mask, const pld_view_t *a, const pld_view_t *b,
                            char *err, size_t errn)
{
    if (!xop_is_cmp(op))
        return pld_kern_fail(err, errn, "unknown compare mode %d", (int)op);
    if (mask->dt != PLD_DT_UINT8 || !pld_view_is_packed(mask) || mask->rank != a->rank || a->rank < 1)
        return pld_kern_fail(err, errn, "cmp: the mask must be a packed UINT8 view of the operand's rank");
    const int r = a->rank;
    const int64_t N = a->shape[r - 1], bytes = mask->shape[r - 1];
    if (bytes * 8 < N)
        return pld_kern_fail(err, errn, "cmp: a mask row of %lld bytes cannot hold %lld bits", (long long)bytes,
                             (long long)N);
    for (int d = 0; d < r - 1; d++)
        if (mask->shape[d] != a->shape[d])
            return pld_kern_fail(err, errn, "cmp: mask and operand rows differ");
    memset(mask->data, 0, (size_t)pld_view_numel(mask));
    /* walk the operand's shape packed row-major: element i is row i / N, column i % N */
    pld_view_t shp = *a;
    int64_t tmp_st[PLD_MAX_RANK];
    int64_t s = 1;
    for (int d = r - 1; d >= 0; d--) {
        tmp_st[d] = s;
        s *= a->shape[d];
    }
    memcpy(shp.strides, tmp_st, sizeof tmp_st);
    const pld_view_t *vs[3] = {&shp, a, b};
    xit_t x;
    if (xit_init(&x, &shp, vs, 3))
        return pld_kern_fail(err, errn, "cmp: operand shapes do not broadcast");
    const pld_dtype_t dt = a->dt;
    const int fl = !is_int(dt);
    uint8_t *m = (uint8_t *)mask->data;
    const int64_t n = pld_view_numel(a);
    int bad = 0;
    for (int64_t i = 0; i < n; i++, xit_next(&x)) {
        int bit;
        if (fl)
            bit = flt_op(op, pld_elem_get_f(a->data, dt, x.off[1]), pld_elem_get_f(b->data, dt, x.off[2]), 0, 1) != 0;
        else
            bit = int_op(op, pld_elem_get_i(a->data, dt, x.off[1]), pld_elem_get_i(b->data, dt, x.off[2]), 0, 64, 1,
                         &bad) != 0;
        if (bit) {
            const int64_t row = i / N, j = i % N;
            m[row * bytes + j / 8] |= (uint8_t)(1u << (j % 8));
        }
    }
    return PLD_OK;
}

/* out[i, j] = bit (i, j) of mask ? a[i, j] : b[i, j] on 2-D views; the mask
 * (any integer dtype) is read as the bytes of its rows. */
pld_status_t pld_k_select(const pld_view_t *out, const pld_view_t *mask, const pld_view_t *a, const pld_view_t *b,
                          char *err, size_t errn)
{
    if (out->rank != 2 || mask->rank != 2)
        return pld_kern_fail(err, errn, "sel: 2-D operands and mask expected");
    const int esz = pld_dtype_storage_bytes(mask->dt);
    const int64_t R = out->shape[0], C = out->shape[1];
    if (mask->shape[0] < R || mask->shape[1] * esz * 8 < C)
        return pld_kern_fail(err, errn, "sel: the mask [%lld, %lld] (%s) has no bit for every element of [%lld, %lld]",
                             (long long)mask->shape[0], (long long)mask->shape[1], pld_dtype_name(mask->dt), (long long)R,
                             (long long)C);
    if (mask->strides[1] != 1)
        return pld_kern_fail(err, errn, "sel: the mask rows must be contiguous");
    const pld_view_t *vs[3] = {out, a, b};
    xit_t x;
    if (xit_init(&x, out, vs, 3))
        return pld_kern_fail(err, errn, "sel: operand shapes do not broadcast");
    const pld_dtype_t dt = out->dt;
    const int sz = pld_dtype_storage_bytes(dt);
    for (int64_t i = 0; i < R * C; i++, xit_next(&x)) {
        const int64_t r = i / C, j = i % C;
        const uint8_t *row = (const uint8_t *)mask->data + r * mask->strides[0] * esz;
        const int bit = (row[j / 8] >> (j % 8)) & 1;
        const char *src = bit ? (const char *)a->data + x.off[1] * sz : (const char *)b->data + x.off[2] * sz;
        memcpy((char *)out->data + x.off[0] * sz, src, (size_t)sz);
    }
    return PLD_OK;
}

/* ---- partial element-wise ------------------------------------------------------ */

static double part_f(pld_binop_k_t op, double a, double b, int f32)
{
    double r;
    switch (op) {
    case PLD_K_ADD: r = a + b; break;
    case PLD_K_MUL: r = a * b; break;
    case PLD_K_MAX: return FMAX_IEEE(a, b);
    default: return FMIN_IEEE(a, b);
    }
    return f32 ? (double)(float)r : r;
}

pld_status_t pld_k_part(pld_binop_k_t op, const pld_view_t *out, const pld_view_t *a, const int64_t *va,
                        const pld_view_t *b, const int64_t *vb, char *err, size_t errn)
{
    if (a->dt != out->dt || b->dt != out->dt)
        return pld_kern_fail(err, errn, "part: dtype mismatch");
    if (a->rank != out->rank || b->rank != out->rank)
        return pld_kern_fail(err, errn, "part: operands of the result's rank expected");
    for (int d = 0; d < out->rank; d++)
        if (a->shape[d] != out->shape[d] || b->shape[d] != out->shape[d])
            return pld_kern_fail(err, errn, "part: operands of the result's shape expected");
    const pld_view_t *vs[3] = {out, a, b};
    xit_t x;
    if (xit_init(&x, out, vs, 3))
        return pld_kern_fail(err, errn, "part: bad views");
    const pld_dtype_t dt = out->dt;
    const int fl = !is_int(dt), f32 = fl && dt != PLD_DT_FP64;
    const int sz = pld_dtype_storage_bytes(dt);
    const int64_t n = pld_view_numel(out);
    for (int64_t i = 0; i < n; i++, xit_next(&x)) {
        int in0 = 1, in1 = 1;
        for (int d = 0; d < out->rank; d++) {
            in0 &= x.idx[d] < va[d];
            in1 &= x.idx[d] < vb[d];
        }
        if (in0 && in1) {
            if (fl) {
                double r = part_f(op, pld_elem_get_f(a->data, dt, x.off[1]), pld_elem_get_f(b->data, dt, x.off[2]), f32);
                pld_elem_set_f(out->data, dt, x.off[0], r);
            } else {
                int64_t p = pld_elem_get_i(a->data, dt, x.off[1]), q = pld_elem_get_i(b->data, dt, x.off[2]);
                int64_t r = op == PLD_K_ADD   ? (int64_t)((uint64_t)p + (uint64_t)q)
                            : op == PLD_K_MUL ? (int64_t)((uint64_t)p * (uint64_t)q)
                            : op == PLD_K_MAX ? (p > q ? p : q)
                                              : (p < q ? p : q);
                pld_elem_set_i(out->data, dt, x.off[0], r);
            }
        } else {
            const char *src = in1 && !in0 ? (const char *)b->data + x.off[2] * sz : (const char *)a->data + x.off[1] * sz;
            memmove((char *)out->data + x.off[0] * sz, src, (size_t)sz);
        }
    }
    return PLD_OK;
}

/* ---- generators ---------------------------------------------------------------- */

pld_status_t pld_k_ci(const pld_view_t *out, int64_t start, int descending, char *err, size_t errn)
{
    if (!is_int(out->dt) || !pld_view_is_packed(out))
        return pld_kern_fail(err, errn, "ci: a packed integer result expected");
    const int64_t n = pld_view_numel(out), N = out->rank ? out->shape[out->rank - 1] : 1;
    for (int64_t i = 0; i < n; i++) {
        const int64_t k = i % N;
        pld_elem_set_i(out->data, out->dt, i, (int64_t)(descending ? (uint64_t)start - (uint64_t)k : (uint64_t)start + (uint64_t)k));
    }
    return PLD_OK;
}

pld_status_t pld_k_tri(const pld_view_t *out, int64_t diagonal, int upper, int64_t vr, int64_t vc, char *err,
                       size_t errn)
{
    if (out->rank != 2 || !pld_view_is_packed(out))
        return pld_kern_fail(err, errn, "tri: a packed 2-D result expected");
    const int64_t C = out->shape[1];
    for (int64_t i = 0; i < out->shape[0]; i++)
        for (int64_t j = 0; j < C; j++) {
            int one = i < vr && j < vc && (upper ? j >= i + diagonal : j <= i + diagonal);
            if (is_int(out->dt))
                pld_elem_set_i(out->data, out->dt, i * C + j, one);
            else
                pld_elem_set_f(out->data, out->dt, i * C + j, one);
        }
    return PLD_OK;
}

/* ---- random (pto-isa TRANDOM) ------------------------------------------------ */

/* c += v, c a 128-bit little-endian counter of four 32-bit words. */
static void ctr_add(uint32_t c[4], uint64_t v)
{
    for (int i = 0; i < 4 && v; i++) {
        v += c[i];
        c[i] = (uint32_t)v;
        v >>= 32;
    }
}

/* Philox4x32 (Salmon et al., SC11) of x under key {k0, k1}: each round
 * multiplies words 0 and 2 by its two constants and mixes the halves of the
 * products with words 1, 3 and the key; the key is bumped by the Weyl
 * constants after each round. */
static void philox4x32(uint32_t x[4], uint32_t k0, uint32_t k1, int rounds)
{
    for (int r = 0; r < rounds; r++) {
        const uint64_t p0 = (uint64_t)0xD2511F53u * x[0], p1 = (uint64_t)0xCD9E8D57u * x[2];
        const uint32_t y0 = (uint32_t)(p1 >> 32) ^ x[1] ^ k0, y2 = (uint32_t)(p0 >> 32) ^ x[3] ^ k1;
        x[0] = y0;
        x[1] = (uint32_t)p1;
        x[2] = y2;
        x[3] = (uint32_t)p0;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
}

pld_status_t pld_k_random(const pld_view_t *out, const uint32_t key[2], const uint32_t ctr[4], int rounds, int64_t vr,
                          int64_t vc, char *err, size_t errn)
{
    if (out->rank != 2 || !pld_view_is_packed(out) || (out->dt != PLD_DT_INT32 && out->dt != PLD_DT_UINT32))
        return pld_kern_fail(err, errn, "random: a packed 2-D INT32 or UINT32 result expected");
    enum { LANES = 64, WORDS = 4 };
    const int64_t C = out->shape[1], step = C / WORDS, chunks = (vc + LANES * WORDS - 1) / (LANES * WORDS);
    uint32_t *d = out->data, base[4] = {ctr[0], ctr[1], ctr[2], ctr[3]};
    for (int64_t i = 0; i < vr; i++)
        for (int64_t j = 0; j < chunks; j++) {
            for (int l = 0; l < LANES; l++) {
                uint32_t x[4] = {base[0], base[1], base[2], base[3]};
                ctr_add(x, (uint64_t)l);
                philox4x32(x, key[0], key[1], rounds);
                for (int w = 0; w < WORDS; w++) {
                    const int64_t col = j * LANES * WORDS + w * LANES + l;
                    if (col < vc)
                        d[i * C + col] = x[w];
                }
            }
            ctr_add(base, (uint64_t)step);
        }
    return PLD_OK;
}
