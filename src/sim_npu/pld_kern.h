/* pld_kern.h - numeric kernels of the interpreter: dtype storage conversion
 * (FP16/BF16 round-to-nearest-even), element-wise, scalar, unary, reduction,
 * cast, matmul, copy and fill over strided N-D views.
 *
 * Every kernel is one tight C loop over the whole region (with a contiguous
 * fast path the compiler vectorises); there is no per-element dispatch on the
 * op inside the loop. Arithmetic on FP16/BF16 is done in float and rounded
 * back to the storage type after every element operation (as the hardware
 * does per instruction); FP32 arithmetic stays in float, FP64 in double.
 * Integer arithmetic wraps (two's complement) in the element width. */
#ifndef PLD_KERN_H
#define PLD_KERN_H

#include "pld_dtype.h"
#include "pld_status.h"

#include <stddef.h>
#include <stdint.h>

#define PLD_MAX_RANK 8

/* A strided view of elements. strides are in elements (not bytes) and may be
 * 0 (broadcast). shape/strides hold `rank` entries; rank 0 is one element. */
typedef struct pld_view {
    void *data;
    pld_dtype_t dt;
    int rank;
    int64_t shape[PLD_MAX_RANK];
    int64_t strides[PLD_MAX_RANK];
} pld_view_t;

/* Fills strides for a packed row-major view of `shape`. */
void pld_view_packed(pld_view_t *v, void *data, pld_dtype_t dt, int rank, const int64_t *shape);
/* Number of elements of the view (product of shape). */
int64_t pld_view_numel(const pld_view_t *v);
/* 1 when the view is packed row-major. */
int pld_view_is_packed(const pld_view_t *v);

/* Storage conversion (pld_f32_to_f16, pld_bf16_to_f32, ...): pld_dtype.h. */

/* Whether the kernels hold values of dt (BOOL, the 8..64-bit integers, FP16,
 * BF16, FP32, FP64, INDEX); the 4-bit and FP8 types and NONE are not: the
 * interpreter rejects them where a tensor or tile of that dtype is made. */
int pld_kern_dtype_ok(pld_dtype_t dt);

/* Element access by flat element index into `data` (no strides), for scalars,
 * tests and slow paths. Floats read as double; integers as int64. */
double pld_elem_get_f(const void *data, pld_dtype_t dt, int64_t i);
int64_t pld_elem_get_i(const void *data, pld_dtype_t dt, int64_t i);
/* Stores with conversion: floats rounded RNE to the storage type; integers
 * wrapped to the width (from a double: truncated toward zero, saturated to the
 * int64 range; NaN -> 0). */
void pld_elem_set_f(void *data, pld_dtype_t dt, int64_t i, double v);
void pld_elem_set_i(void *data, pld_dtype_t dt, int64_t i, int64_t v);

/* ---- kernels ----
 * Every kernel returns PLD_OK, or PLD_E_RUNTIME with a message written into
 * err (size errn, may be NULL) for: shape mismatch (after broadcasting),
 * unsupported dtype, integer division by zero. Views must not partially
 * overlap (out == a exactly is allowed: in-place). */

typedef enum pld_binop_k { PLD_K_ADD, PLD_K_SUB, PLD_K_MUL, PLD_K_DIV, PLD_K_MAX, PLD_K_MIN } pld_binop_k_t;
typedef enum pld_unop_k {
    PLD_K_EXP, PLD_K_LOG, PLD_K_SQRT, PLD_K_RSQRT, PLD_K_ABS, PLD_K_NEG, PLD_K_RECIP, PLD_K_RELU
} pld_unop_k_t;
typedef enum pld_redop_k {
    PLD_K_RSUM, PLD_K_RMAX, PLD_K_RMIN, PLD_K_RPROD, PLD_K_RARGMAX, PLD_K_RARGMIN
} pld_redop_k_t;
/* pld_k_reduce flags: the axis (row = the last one, else the second to last)
 * and, for column sums, the binary-tree order (docs/ops-numerics.md). */
#define PLD_K_RED_ROW 1
#define PLD_K_RED_TREE 2
typedef enum pld_round_k {
    PLD_R_NONE, PLD_R_RINT, PLD_R_ROUND, PLD_R_FLOOR, PLD_R_CEIL, PLD_R_TRUNC, PLD_R_ODD
} pld_round_k_t;

/* out = a op b, all three with the same shape as out; a and b may broadcast
 * through stride-0 dims (callers build such views). All three share one dtype.
 * Integer DIV truncates toward zero (C semantics) and fails on a zero divisor. */
pld_status_t pld_k_binary(pld_binop_k_t op, const pld_view_t *out, const pld_view_t *a, const pld_view_t *b,
                          char *err, size_t errn);
/* out = a op s, s given as double (float dtypes) or int64 (integer dtypes),
 * converted to the element dtype first. */
pld_status_t pld_k_binary_scalar(pld_binop_k_t op, const pld_view_t *out, const pld_view_t *a, double s_f,
                                 int64_t s_i, char *err, size_t errn);
/* Every operand order of a fold at once, over nx packed arrays of n
 * elements of dtype dt: out[r] = x[r] op x[0] op x[1] ... op x[nx-1] (x[r]
 * first, then the others ascending, x[r] skipped; left to right), for every
 * r < nx with out[r] != NULL: the documented fold orders of the collectives
 * (pld_semantics.md §2.14). Each output has the bits of the pld_k_binary
 * calls of the same fold (FP32 with 2 to 4 operands runs in one pass over
 * the inputs, everything else as those calls). The outputs must not
 * overlap the inputs or each other. */
pld_status_t pld_k_fold_orders(pld_binop_k_t op, pld_dtype_t dt, int nx, const void *const *x, void *const *out,
                               int64_t n, char *err, size_t errn);
/* The instruction set of the FP32 element-wise loops on this CPU: "avx2" or
 * "baseline" (docs/ops-numerics.md, "Vector kernels"). force_base (tests):
 * use the baseline loops even where AVX2 is available. */
const char *pld_kern_simd(void);
void pld_kern_simd_force_base(int on);
pld_status_t pld_k_unary(pld_unop_k_t op, const pld_view_t *out, const pld_view_t *a, char *err, size_t errn);
/* Reduction over the last axis (flags & PLD_K_RED_ROW: [..., C] -> out
 * [..., 1]) or the second-to-last axis ([..., R, C] -> out [..., 1, C]), each
 * leading (batch) index on its own; the order and
 * rounding of each op are those of docs/ops-numerics.md. Row sums and
 * products accumulate in float (FP16/BF16/FP32), double (FP64) or 64-bit
 * integers and store once, rounded/wrapped; column sums and products of
 * FP16/BF16 round to the dtype after every step, sequentially down the rows,
 * or (PLD_K_RED_TREE, sums only) in PyPTO's binary tree. ARGMAX/ARGMIN store
 * INT32 indices (out dtype INT32), the first index on ties. */
pld_status_t pld_k_reduce(pld_redop_k_t op, int flags, const pld_view_t *out, const pld_view_t *a, char *err,
                          size_t errn);
/* ---- issue 11 element-wise ops (pld_kern_ext.c; docs/ops-numerics.md) ---- */
typedef enum pld_xop_k {
    PLD_KX_FMOD, PLD_KX_REM, PLD_KX_AND, PLD_KX_OR, PLD_KX_XOR, PLD_KX_NOT, PLD_KX_SHL, PLD_KX_SHR, PLD_KX_SIN,
    PLD_KX_COS, PLD_KX_LRELU, PLD_KX_PRELU, PLD_KX_ADDC, PLD_KX_SUBC,
    PLD_KX_EQ, PLD_KX_NE, PLD_KX_LT, PLD_KX_LE, PLD_KX_GT, PLD_KX_GE /* PyPTO's cmp_type order 0..5 */
} pld_xop_k_t;
/* out = op(a, b, c): b and c may be NULL (unary / binary ops) and broadcast
 * through stride-0 dims. a, b, c share one dtype; out has it too except for
 * the compares (EQ..GE: 1 or 0 converted to out's dtype). FMOD truncates
 * (the dividend's sign), REM floors (the divisor's sign); integer FMOD/REM
 * fail on a zero divisor; shifts fail on a negative count, and a count of at
 * least the width shifts every bit out (SHR of a negative signed value: -1).
 * Floats: LRELU and PRELU a > 0 ? a : b*a, ADDC a+b+c, SUBC a-b-c,
 * each step in FP32 (FP16/BF16/FP32) or FP64, rounded once more to the dtype;
 * FMOD/REM/SIN/COS in double, rounded once. Integers wrap. */
pld_status_t pld_k_ext(pld_xop_k_t op, const pld_view_t *out, const pld_view_t *a, const pld_view_t *b,
                       const pld_view_t *c, char *err, size_t errn);
/* As pld_k_ext with b the scalar s (s_f for float dtypes, s_i for integers,
 * converted to a's dtype first; shift counts are checked before). */
pld_status_t pld_k_ext_scalar(pld_xop_k_t op, const pld_view_t *out, const pld_view_t *a, double s_f, int64_t s_i,
                              const pld_view_t *c, char *err, size_t errn);
/* PyPTO's packed predicate mask of a compare (EQ..GE): mask is a packed UINT8
 * view of a's rank whose last dim holds at least ceil(N / 8) bytes; bit j % 8
 * of byte j / 8 of a row is element j's result. Bytes past the bits are 0. */
pld_status_t pld_k_cmp_mask(pld_xop_k_t op, const pld_view_t *mask, const pld_view_t *a, const pld_view_t *b,
                            char *err, size_t errn);
/* 2-D select: out = mask bit ? a : b (the mask's rows read as bytes, as
 * pld_k_cmp_mask writes them; any integer mask dtype). */
pld_status_t pld_k_select(const pld_view_t *out, const pld_view_t *mask, const pld_view_t *a, const pld_view_t *b,
                          char *err, size_t errn);
/* Partial op (ADD, MUL, MAX, MIN) of a (valid extents va) and b (vb), all of
 * out's shape: op where both are valid, the valid one's element where one is,
 * a's element elsewhere. */
pld_status_t pld_k_part(pld_binop_k_t op, const pld_view_t *out, const pld_view_t *a, const int64_t *va,
                        const pld_view_t *b, const int64_t *vb, char *err, size_t errn);
/* ci: every row of the packed integer view out holds start + k (descending:
 * start - k) at column k, wrapped. tri: 1 where column j <= row i + diagonal
 * (upper: j >= i + diagonal) inside [vr, vc), else 0. */
pld_status_t pld_k_ci(const pld_view_t *out, int64_t start, int descending, char *err, size_t errn);
pld_status_t pld_k_tri(const pld_view_t *out, int64_t diagonal, int upper, int64_t vr, int64_t vc, char *err,
                       size_t errn);
/* random: pto-isa's TRANDOM over a packed 2-D INT32/UINT32 out of C columns
 * (docs/ops-numerics.md): Philox4x32 with key {key[0], key[1]} and `rounds`
 * rounds. Row i, chunk j (256 columns each) and lane l (0..63) encrypt the
 * 128-bit counter ctr + (i * ceil(vc / 256) + j) * floor(C / 4) + l; its word w
 * goes to column 256 j + 64 w + l. Only [vr, vc) is written. */
pld_status_t pld_k_random(const pld_view_t *out, const uint32_t key[2], const uint32_t ctr[4], int rounds, int64_t vr,
                          int64_t vc, char *err, size_t errn);
/* out = cast(a) with a rounding mode. Float -> integer: the mode picks the
 * rounding (ROUND = nearest, ties away from zero; RINT = nearest, ties to even;
 * NONE/default = RINT), then saturates to the integer range; NaN -> 0.
 * Float -> narrower float: ROUND/RINT/NONE = RNE; FLOOR/CEIL/TRUNC = directed;
 * ODD = round to odd. Integer -> float: exact, then RNE. Integer -> integer: wrap. */
pld_status_t pld_k_cast(const pld_view_t *out, const pld_view_t *a, pld_round_k_t mode, char *err, size_t errn);
/* out[M,N] = a[M,K] @ b[K,N] (+ out when accumulate). Float inputs accumulate
 * in FP32 (out any float dtype, rounded once); integer inputs in INT32
 * (wrapping). Rank > 2: one product per index of the leading (batch) dims,
 * which all three views share (callers broadcast with stride-0 dims). */
pld_status_t pld_k_matmul(const pld_view_t *out, const pld_view_t *a, const pld_view_t *b, int accumulate,
                          char *err, size_t errn);
/* MX block-scaled matmul (pl.tile.matmul_mx): out [M, N] FP32 = (accumulate ?
 * out : 0) + sum over k < K of a[i,k] 2^(sa[i,k/32]-127) * b[k,j] 2^(sb[k/32,j]-127);
 * a [M, K] and b [K, N] FP8E4M3FN, the scales sa [>= M, >= ceil(K/32)] and
 * sb [>= ceil(K/32), >= N] FP8E8M0 (pld_dtype.h decodes them). Each scaled
 * product is exact in double and rounded once to FP32; k from 0 up, each sum
 * rounded to FP32 (as pld_k_matmul). */
pld_status_t pld_k_matmul_mx(const pld_view_t *out, const pld_view_t *a, const pld_view_t *sa, const pld_view_t *b,
                             const pld_view_t *sb, int accumulate, char *err, size_t errn);
/* out = a (same dtype, same shape; strided either side). */
pld_status_t pld_k_copy(const pld_view_t *out, const pld_view_t *a, char *err, size_t errn);
/* out += a elementwise (atomic-add semantics are the caller's business). */
pld_status_t pld_k_accumulate(const pld_view_t *out, const pld_view_t *a, char *err, size_t errn);
/* The cube's FIXPIPE store of an FP32 accumulator into a narrower GM tensor
 * (pl.tile.store / pl.tensor.assemble of a matmul result into BF16 or FP16;
 * docs/ops-numerics.md): each element of a (FP32) is rounded to out's dtype
 * (BF16 / FP16, nearest-even: pld_k_cast with PLD_R_RINT) and written, or,
 * atomic, added to out in out's dtype (pld_k_accumulate: the two values summed
 * in FP32, rounded once to nearest-even). So an atomic add rounds twice:
 * out = rne(out + rne(a)). PLD_E_RUNTIME for other dtypes, PLD_E_NOMEM.
 * (pld_kern_cast.c) */
pld_status_t pld_k_store_narrow(const pld_view_t *out, const pld_view_t *a, int atomic, char *err, size_t errn);
/* Fills every element with v (converted as pld_elem_set_f / _i). */
pld_status_t pld_k_fill_f(const pld_view_t *out, double v);
pld_status_t pld_k_fill_i(const pld_view_t *out, int64_t v);
/* out (a 2-D view of 1-byte elements, [rows of the window, cols]) = the logical
 * scales at (off[0] + i, off[1] + j) of a pl.MX_A_ZZ (a_layout) or pl.MX_B_NN
 * scale tensor [rows, cols] whose packed bytes are src (PyPTO's GM packing:
 * MX_A_ZZ [16, 2] blocks of (row, col) row-major, the blocks row-major; MX_B_NN
 * [2, 16] blocks of (col, row), the blocks column-major). PLD_E_RUNTIME when
 * rows x cols is not a whole number of blocks. (pld_kern_mm.c) */
pld_status_t pld_k_mx_unpack(const pld_view_t *out, const void *src, int64_t rows, int64_t cols, const int64_t *off,
                             int a_layout, char *err, size_t errn);

/* ---- layout, valid shapes, gathers / scatters, sorts (pld_kern_layout.c) ----
 * Messages leave out the op name (callers prefix it). */
/* The valid box ov[ro] of a reshape of shape in[ri] (valid v[ri]) to out[ro]
 * (PyPTO's ComputeReshapeValidShape, never widening): full stays full, empty
 * stays empty, unit axes come and go, otherwise the valid data must be a
 * row-major flat prefix that is a box of the new shape; fails when not. */
pld_status_t pld_k_reshape_valid(int ri, const int64_t *in, const int64_t *v, int ro, const int64_t *out, int64_t *ov,
                                 char *err, size_t errn);
/* The valid region dvalid[r] (updated in place) of a tile of shape dshape
 * after a source of valid region svalid was written at off: the union of two
 * origin-anchored boxes, which must be one (no gap, no L-shape). Its message
 * follows the op name after a space ("<op> grows ..."), not after ": ". */
pld_status_t pld_k_assemble_valid(int r, const int64_t *dshape, int64_t *dvalid, const int64_t *svalid,
                                  const int64_t *off, char *err, size_t errn);
/* fillpad: dst (whole shape) = the pad of mode (0 zero, 1 max: +inf / the
 * largest integer, 2 min) with src's box [0, valid) copied to its top-left;
 * src == dst (same data): the complement of the box is filled in place. */
pld_status_t pld_k_fillpad(const pld_view_t *dst, const pld_view_t *src, const int64_t *valid, int mode, char *err,
                           size_t errn);
/* Index gather over idx's box [0, box) in row-major order: out[p] =
 * src[q] with q = the row-major position idx[p] of src (dim < 0, flat) or p
 * with dimension dim replaced by idx[p]; an index outside src fails
 * ("index J at [p] is outside [0, N)"). */
pld_status_t pld_k_gather(const pld_view_t *out, const pld_view_t *src, const pld_view_t *idx, const int64_t *box,
                          int dim, char *err, size_t errn);
/* Index scatter (2-D) over src's box [0, box) in row-major order (the last
 * write wins): out[q] = src[i, j] with q = the row-major position idx[i, j] of
 * out, or (row_form) [i, idx[i, j]]; an index outside fails. */
pld_status_t pld_k_scatter(const pld_view_t *out, const pld_view_t *src, const pld_view_t *idx, const int64_t *box,
                           int row_form, char *err, size_t errn);
/* sort32: each row of FP32 src [R, C] (C a multiple of 32) with its 4-byte
 * idx as [value, index] pairs into out [R, 2C], sorted descending (NaN
 * first, stable) within each block of 32. */
pld_status_t pld_k_sort32(const pld_view_t *out, const pld_view_t *src, const pld_view_t *idx, char *err, size_t errn);
/* mrgsort: the pair rows of src[0..nsrc) merged descending (stable), into
 * out's first min(out columns, total) / 2 pairs. block > 0 (format 1, one
 * source): runs of block / 2 pairs merged four at a time; else (format 2)
 * the sources are the runs (at most 4). */
pld_status_t pld_k_mrgsort(const pld_view_t *out, const pld_view_t *const *src, int nsrc, int64_t block, char *err,
                           size_t errn);

/* ---- the GM gather / scatter family (pld_kern_gather.c) ---- */
/* mgather over out's box [0, box) (2-D): row_mode: out[i, :] = mem's row
 * idx[i] (idx [1, R] or [R, 1]; mem as [rows, last]); else out[i, j] =
 * mem.flat[idx[i, j]]. Indices read as UINT32; one past the entries follows
 * oob (0 undefined: fails, 1 clamp, 2 wrap, 3 zero: out keeps its element).
 * scratch (or NULL): each gathered element also at scratch.flat[i * out
 * columns + j]. */
pld_status_t pld_k_mgather(const pld_view_t *out, const pld_view_t *mem, const pld_view_t *idx, const int64_t *box,
                           int row_mode, int oob, const pld_view_t *scratch, char *err, size_t errn);
/* mscatter: out.flat[idx[p]] = src[p] over src's valid box svalid (within
 * idx's shape), row-major (the last write wins); an index outside fails. */
pld_status_t pld_k_mscatter(const pld_view_t *out, const pld_view_t *src, const pld_view_t *idx, const int64_t *svalid,
                            char *err, size_t errn);
/* gatherb over off's box [0, box): block j of out row i (32 bytes at column
 * j * 32 / out's width) = src's bytes (row-major) from UINT32 byte offset
 * off[i, j], a multiple of 32 inside src (else fails). */
pld_status_t pld_k_gatherb(const pld_view_t *out, const pld_view_t *src, const pld_view_t *off, const int64_t *box,
                           char *err, size_t errn);
/* scatter_update over idx's box [0, box) (2-D), row-major: out's row
 * idx[i, j] (rows: all dims but the last) = src's row i * idx columns + j;
 * a row outside out or past src fails. out holds the input already. */
pld_status_t pld_k_scatter_update(const pld_view_t *out, const pld_view_t *idx, const pld_view_t *src,
                                  const int64_t *box, char *err, size_t errn);
/* gather_compare over src's box [0, box) (2-D): per row i the ascending
 * columns j with src[i, j] cmp k (mode 0..5: eq ne lt le gt ge; compared in
 * double, NaN unordered) into dst[i, 0..] (INT32, at most out_cols) and
 * their count into cnt[0, i]; a count other than out_cols fails (after the
 * row's count is written). */
pld_status_t pld_k_gather_compare(const pld_view_t *dst, const pld_view_t *cnt, const pld_view_t *src,
                                  const int64_t *box, int mode, double k, int64_t out_cols, char *err, size_t errn);

/* paged_gather: row i < n (n = idx's element count, row-major) of out (is_trans:
 * column i) = src[phys, col : col + size], phys = table[li / bs] * bs + li % bs
 * for li = idx's element i (table read row-major); out holds zeros already.
 * An index outside the table, or a row outside src, fails ("index ..."). */
pld_status_t pld_k_paged_gather(const pld_view_t *out, const pld_view_t *src, const pld_view_t *idx,
                                const pld_view_t *table, int64_t bs, int64_t size, int64_t col, int trans, char *err,
                                size_t errn);

#endif
