/* pld_kern.c - numeric kernels of the interpreter (see pld_kern.h): views,
 * element access, the generic IEEE rounding core and the N-D iterator. The
 * kernels themselves are in pld_kern_elem.c (binary, scalar, unary, copy,
 * fill), pld_kern_reduce.c (reductions, matmul) and pld_kern_cast.c (casts);
 * what they share is in pld_kern_int.h.
 *
 * Layout of this file:
 *   1. IEEE conversions: one generic rounding core (any binary format, five
 *      rounding modes) written from IEEE 754-2019 §4.3 (the FP16 / BF16 fast
 *      paths are in pld_dtype.h)
 *   2. views, element access
 *   3. errors and the N-D iterator: dims of size 1 dropped, mergeable dims
 *      collapsed, then an odometer over all but the innermost dim and one
 *      strided inner loop
 *
 * How the kernels are written (all four files):
 * Every kernel picks its loop (op x dtype) with a switch *outside* the element
 * loops: the RUN* macros instantiate one loop per op and dtype. Each loop has
 * a packed fast path (compile-time element stride, vectorisable) and a strided
 * path; FP32 binary ops on packed, aligned operands use plain float arrays.
 *
 * Semantic choices not spelled out in pld_kern.h:
 *  - MAX/MIN on floats are IEEE 754-2019 maximum/minimum, not fmaxf/fminf: a
 *    NaN operand gives NaN (NaN propagates, like torch.maximum), and -0 < +0.
 *    RELU is maximum(x, +0): NaN stays NaN, -0 gives +0. Reductions RMAX/RMIN
 *    use the same rule.
 *  - Binary operands broadcast NumPy-style against out: right-aligned, a
 *    missing or size-1 dim repeats (the stride-0 views of the header work too).
 *  - Reductions combine left to right starting from the first element, in
 *    float (FP16/BF16/FP32), double (FP64) or 64-bit (integers); an empty
 *    reduced axis gives 0 for RSUM and an error for RMAX/RMIN.
 *  - cast to BOOL follows C's conversion to _Bool: 1 when the value compares
 *    unequal to 0 (so NaN -> 1, 0.5 -> 1), else 0; the rounding mode is not
 *    used. Every other integer target follows the header (wrap / saturate).
 *  - cast mode ODD: round to odd = truncate toward zero, then set the lowest
 *    bit of the result's significand (float target) or of the integer
 *    magnitude (integer target) when the truncation was inexact. An out of
 *    range value gives the largest finite value (round-to-odd never creates
 *    an infinity from a finite value). In-place casts (out->data == a->data)
 *    are refused when the element size changes.
 *  - NaN conversions keep the sign and the top payload bits and set the quiet
 *    bit (as hardware converters do); .npy I/O (pld_npy.c) does the same.
 *  - matmul accepts any float out dtype for float inputs (the FP32 sum is
 *    rounded once into it) and any integer out dtype for integer inputs (the
 *    INT32 wrapping sum is truncated into narrower outs and sign-extended into
 *    64-bit ones); FP64 inputs accumulate in double. a and b must share a
 *    dtype, and out must not share storage with a or b.
 *  - pld_elem_get_i on a float truncates toward zero and saturates (NaN -> 0). */
#include "pld_kern_int.h"
#include "pld_assert.h"

/* ---- 1. IEEE conversions ------------------------------------------------------- */

/* The IEEE rounding core (round_bits, f64_round_bits): pld_kern_fn.h, shared with
 * the code the native backend generates. */
/* FP16/BF16 <-> FP32: pld_dtype.h (one home for the kernels, .npy I/O and the
 * window layer's FP16/BF16 atomic add). */

/* ---- 2. views and element access ------------------------------------------- */

void pld_view_packed(pld_view_t *v, void *data, pld_dtype_t dt, int rank, const int64_t *shape)
{
    memset(v, 0, sizeof *v);
    if (rank < 0)
        rank = 0;
    if (rank > PLD_MAX_RANK)
        rank = PLD_MAX_RANK;
    v->data = data;
    v->dt = dt;
    v->rank = rank;
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        v->shape[d] = shape[d];
        v->strides[d] = s;
        s *= shape[d];
    }
}

int64_t pld_view_numel(const pld_view_t *v)
{
    int64_t n = 1;
    for (int d = 0; d < v->rank && d < PLD_MAX_RANK; d++)
        n *= v->shape[d];
    return n;
}

int pld_view_is_packed(const pld_view_t *v)
{
    int64_t s = 1;
    if (pld_view_numel(v) == 0)
        return 1;
    for (int d = v->rank - 1; d >= 0; d--) {
        if (v->shape[d] != 1 && v->strides[d] != s) /* a size-1 dim's stride never matters */
            return 0;
        s *= v->shape[d];
    }
    return 1;
}

/* double -> int64: truncate toward zero, saturate, NaN -> 0. */
int64_t pld_kern_f64_to_i64_sat(double v)
{
    if (v != v)
        return 0;
    if (v >= 0x1p63)
        return INT64_MAX;
    if (v < -0x1p63)
        return INT64_MIN;
    return (int64_t)v;
}

/* Integer (sign, magnitude) -> float bits, RNE. */
static uint64_t int_round_bits(int neg, uint64_t mag, int ebits, int mbits)
{
    return pld_kfn_round_bits(neg, mag, 0, ebits, mbits, RM_NE);
}

/* Float value of an integer given as 64 raw bits and a signedness. */
void pld_kern_int_split(uint64_t v, int is_signed, int *neg, uint64_t *mag)
{
    *neg = is_signed && (v >> 63);
    *mag = *neg ? (uint64_t)0 - v : v;
}

int pld_kern_dtype_ok(pld_dtype_t dt)
{
    return kcls(dt) != K_NONE;
}

double pld_elem_get_f(const void *data, pld_dtype_t dt, int64_t i)
{
    const char *p = (const char *)data + i * pld_dtype_storage_bytes(dt);
    switch (kcls(dt)) {
    case K_BOOL:
    case K_U8: return ld_u8(p);
    case K_U16: return ld_u16(p);
    case K_U32: return ld_u32(p);
    case K_U64: return (double)ld_u64(p);
    case K_I8: return ld_i8(p);
    case K_I16: return ld_i16(p);
    case K_I32: return ld_i32(p);
    case K_I64: return (double)ld_i64(p);
    case K_F16: return ld_f16(p);
    case K_BF16: return ld_bf16(p);
    case K_F32: return ld_f32(p);
    case K_F64: return ld_f64(p);
    default: PLD_UNREACHABLE("pld_elem_get_f: a dtype the kernels do not hold (pld_kern_dtype_ok)");
    }
}

int64_t pld_elem_get_i(const void *data, pld_dtype_t dt, int64_t i)
{
    const char *p = (const char *)data + i * pld_dtype_storage_bytes(dt);
    uint64_t u;
    switch (kcls(dt)) {
    case K_BOOL:
    case K_U8: return ld_u8(p);
    case K_U16: return ld_u16(p);
    case K_U32: return ld_u32(p);
    case K_U64:
        u = ld_u64(p);
        return u > (uint64_t)INT64_MAX ? -(int64_t)(~u) - 1 : (int64_t)u; /* two's complement reinterpretation */
    case K_I8: return ld_i8(p);
    case K_I16: return ld_i16(p);
    case K_I32: return ld_i32(p);
    case K_I64: return ld_i64(p);
    case K_F16:
    case K_BF16:
    case K_F32:
    case K_F64: return pld_kern_f64_to_i64_sat(pld_elem_get_f(data, dt, i));
    default: PLD_UNREACHABLE("pld_elem_get_i: a dtype the kernels do not hold (pld_kern_dtype_ok)");
    }
}

/* Stores the integer bits `u` (already two's complement) into element p. */
static void store_int_bits(char *p, kcls_t c, uint64_t u)
{
    switch (c) {
    case K_BOOL:
    case K_U8:
    case K_I8: st_w8(p, (uint32_t)u); break;
    case K_U16:
    case K_I16: st_w16(p, (uint32_t)u); break;
    case K_U32:
    case K_I32: st_w32(p, (uint32_t)u); break;
    case K_U64:
    case K_I64: st_w64(p, u); break;
    default: break;
    }
}

/* Stores the float value of (-1)^neg * mag into a float element p (RNE). */
void pld_kern_store_float_of_int(char *p, kcls_t c, int neg, uint64_t mag)
{
    switch (c) {
    case K_F16: {
        uint16_t h = (uint16_t)int_round_bits(neg, mag, 5, 10);
        memcpy(p, &h, 2);
        break;
    }
    case K_BF16: {
        uint16_t h = (uint16_t)int_round_bits(neg, mag, 8, 7);
        memcpy(p, &h, 2);
        break;
    }
    case K_F32: st_w32(p, (uint32_t)int_round_bits(neg, mag, 8, 23)); break;
    case K_F64: st_w64(p, int_round_bits(neg, mag, 11, 52)); break;
    default: break;
    }
}

/* Stores double v into a float element p with rounding mode rm. */
void pld_kern_store_float_of_f64(char *p, kcls_t c, double v, int rm)
{
    switch (c) {
    case K_F16: {
        uint16_t h = (uint16_t)pld_kfn_f64_round_bits(v, 5, 10, rm);
        memcpy(p, &h, 2);
        break;
    }
    case K_BF16: {
        uint16_t h = (uint16_t)pld_kfn_f64_round_bits(v, 8, 7, rm);
        memcpy(p, &h, 2);
        break;
    }
    case K_F32: st_w32(p, (uint32_t)pld_kfn_f64_round_bits(v, 8, 23, rm)); break;
    case K_F64: st_f64(p, v); break;
    default: break;
    }
}

void pld_elem_set_f(void *data, pld_dtype_t dt, int64_t i, double v)
{
    const kcls_t c = kcls(dt);
    char *p = (char *)data + i * pld_dtype_storage_bytes(dt);
    if (c == K_NONE)
        PLD_UNREACHABLE("pld_elem_set_f: a dtype the kernels do not hold (pld_kern_dtype_ok)");
    if (cls_is_float(c))
        pld_kern_store_float_of_f64(p, c, v, RM_NE);
    else
        store_int_bits(p, c, (uint64_t)pld_kern_f64_to_i64_sat(v));
}

void pld_elem_set_i(void *data, pld_dtype_t dt, int64_t i, int64_t v)
{
    const kcls_t c = kcls(dt);
    char *p = (char *)data + i * pld_dtype_storage_bytes(dt);
    if (c == K_NONE)
        PLD_UNREACHABLE("pld_elem_set_i: a dtype the kernels do not hold (pld_kern_dtype_ok)");
    if (cls_is_float(c)) {
        int neg;
        uint64_t mag;
        pld_kern_int_split((uint64_t)v, 1, &neg, &mag);
        pld_kern_store_float_of_int(p, c, neg, mag);
    } else {
        store_int_bits(p, c, (uint64_t)v);
    }
}

/* ---- 3. errors and the N-D iterator ------------------------------------------ */

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
pld_status_t pld_kern_fail(char *err, size_t errn, const char *fmt, ...)
{
    if (err && errn > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errn, fmt, ap);
        va_end(ap);
    }
    return PLD_E_RUNTIME;
}

/* "[4, 8]" into buf. */
const char *pld_kern_shape_str(char *buf, size_t n, int rank, const int64_t *shape)
{
    size_t k = 0;
    buf[0] = '\0';
    k += (size_t)snprintf(buf + k, n - k, "[");
    for (int d = 0; d < rank && k < n; d++)
        k += (size_t)snprintf(buf + k, n - k, d ? ", %lld" : "%lld", (long long)shape[d]);
    if (k < n)
        snprintf(buf + k, n - k, "]");
    return buf;
}

int pld_kern_view_ok(const pld_view_t *v)
{
    if (v->rank < 0 || v->rank > PLD_MAX_RANK)
        return 0;
    for (int d = 0; d < v->rank; d++)
        if (v->shape[d] < 0)
            return 0;
    return 1;
}

pld_status_t pld_kern_check_view(const pld_view_t *v, const char *what, char *err, size_t errn)
{
    if (!pld_kern_view_ok(v))
        return pld_kern_fail(err, errn, "bad view for %s (rank %d)", what, v->rank);
    return PLD_OK;
}

/* Element strides of v broadcast (right-aligned) to `shape`; -1 on mismatch. */
int pld_kern_bcast_strides(const pld_view_t *v, int rank, const int64_t *shape, int64_t *str)
{
    if (v->rank > rank)
        return -1;
    const int lead = rank - v->rank;
    for (int d = 0; d < rank; d++) {
        if (d < lead) {
            str[d] = 0;
            continue;
        }
        const int e = d - lead;
        if (v->shape[e] == shape[d])
            str[d] = shape[d] == 1 ? 0 : v->strides[e];
        else if (v->shape[e] == 1)
            str[d] = 0;
        else
            return -1;
    }
    return 0;
}

pld_status_t pld_kern_shape_mismatch(const pld_view_t *out, const pld_view_t *v, const char *what, char *err,
                                   size_t errn)
{
    char b1[128], b2[128];
    return pld_kern_fail(err, errn, "shape mismatch: out %s vs %s %s", pld_kern_shape_str(b1, sizeof b1, out->rank, out->shape),
                what, pld_kern_shape_str(b2, sizeof b2, v->rank, v->shape));
}


/* Builds the iterator for `rank` dims of `shape` (all > 0); estr[k] are the
 * element strides of operand k, esz[k] its element size. Size-1 dims are
 * dropped and a dim is merged into the next inner one when every operand
 * steps through both as one. */
void pld_kern_kit_init(kit_t *it, int nops, int rank, const int64_t *shape, char *const *base,
                     const int64_t (*estr)[PLD_MAX_RANK], const int *esz)
{
    int64_t sh[PLD_MAX_RANK];
    int64_t st[KMAXOPS][PLD_MAX_RANK];
    int nd = 0;
    memset(it, 0, sizeof *it);
    it->nops = nops;
    for (int d = 0; d < rank; d++) {
        if (shape[d] == 1)
            continue;
        int merge = nd > 0;
        for (int k = 0; k < nops && merge; k++)
            merge = st[k][nd - 1] == estr[k][d] * esz[k] * shape[d];
        if (merge) {
            sh[nd - 1] *= shape[d];
            for (int k = 0; k < nops; k++)
                st[k][nd - 1] = estr[k][d] * esz[k];
            continue;
        }
        sh[nd] = shape[d];
        for (int k = 0; k < nops; k++)
            st[k][nd] = estr[k][d] * esz[k];
        nd++;
    }
    for (int k = 0; k < nops; k++)
        it->base[k] = base[k];
    it->rows = 1;
    if (nd == 0) {
        it->n = 1;
        for (int k = 0; k < nops; k++)
            it->s[k] = esz[k];
    } else {
        it->n = sh[nd - 1];
        for (int k = 0; k < nops; k++)
            it->s[k] = st[k][nd - 1];
        it->nd = nd - 1;
        for (int d = 0; d < nd - 1; d++) {
            it->shape[d] = sh[d];
            it->rows *= sh[d];
            for (int k = 0; k < nops; k++)
                it->str[k][d] = st[k][d];
        }
    }
    it->contig = it->nd == 0;
    for (int k = 0; k < nops; k++)
        if (it->s[k] != esz[k])
            it->contig = 0;
}
