/* pld_cgen_kern.c - the kernel library as compiled kernels call it
 * (pld_crt.h's pc_kern): each entry is the pld_k_* function of the same
 * name, the numerics `sim` runs (src/sim_npu/pld_kern.h), reached with a
 * view the generated code built. pc_view has pld_view_t's layout (checked
 * below), so an entry only passes its arguments on. */
#include "pld_cgen.h"
#include "pld_crt.h"
#include "pld_kern.h"

#include <stddef.h>

_Static_assert(sizeof(pc_view) == sizeof(pld_view_t) && offsetof(pc_view, data) == offsetof(pld_view_t, data) &&
                   offsetof(pc_view, dt) == offsetof(pld_view_t, dt) &&
                   offsetof(pc_view, rank) == offsetof(pld_view_t, rank) &&
                   offsetof(pc_view, shape) == offsetof(pld_view_t, shape) &&
                   offsetof(pc_view, strides) == offsetof(pld_view_t, strides) && PC_VIEW_MAX_RANK == PLD_MAX_RANK &&
                   sizeof(pld_dtype_t) == sizeof(int32_t),
               "pc_view is pld_view_t");

#define V(x) ((const pld_view_t *)(const void *)(x))

static int k_binary(int op, const pc_view *out, const pc_view *a, const pc_view *b, char *err, size_t errn)
{
    return pld_k_binary((pld_binop_k_t)op, V(out), V(a), V(b), err, errn) != PLD_OK;
}

static int k_binary_s(int op, const pc_view *out, const pc_view *a, double sf, int64_t si, char *err, size_t errn)
{
    return pld_k_binary_scalar((pld_binop_k_t)op, V(out), V(a), sf, si, err, errn) != PLD_OK;
}

static int k_unary(int op, const pc_view *out, const pc_view *a, char *err, size_t errn)
{
    return pld_k_unary((pld_unop_k_t)op, V(out), V(a), err, errn) != PLD_OK;
}

static int k_reduce(int op, int flags, const pc_view *out, const pc_view *a, char *err, size_t errn)
{
    return pld_k_reduce((pld_redop_k_t)op, flags, V(out), V(a), err, errn) != PLD_OK;
}

static int k_ext(int op, const pc_view *out, const pc_view *a, const pc_view *b, const pc_view *c, char *err,
                 size_t errn)
{
    return pld_k_ext((pld_xop_k_t)op, V(out), V(a), V(b), V(c), err, errn) != PLD_OK;
}

static int k_ext_s(int op, const pc_view *out, const pc_view *a, double sf, int64_t si, const pc_view *c, char *err,
                   size_t errn)
{
    return pld_k_ext_scalar((pld_xop_k_t)op, V(out), V(a), sf, si, V(c), err, errn) != PLD_OK;
}

static int k_cmp_mask(int op, const pc_view *mask, const pc_view *a, const pc_view *b, char *err, size_t errn)
{
    return pld_k_cmp_mask((pld_xop_k_t)op, V(mask), V(a), V(b), err, errn) != PLD_OK;
}

static int k_select(const pc_view *out, const pc_view *mask, const pc_view *a, const pc_view *b, char *err,
                    size_t errn)
{
    return pld_k_select(V(out), V(mask), V(a), V(b), err, errn) != PLD_OK;
}

static int k_part(int op, const pc_view *out, const pc_view *a, const int64_t *va, const pc_view *b,
                  const int64_t *vb, char *err, size_t errn)
{
    return pld_k_part((pld_binop_k_t)op, V(out), V(a), va, V(b), vb, err, errn) != PLD_OK;
}

static int k_ci(const pc_view *out, int64_t start, int descending, char *err, size_t errn)
{
    return pld_k_ci(V(out), start, descending, err, errn) != PLD_OK;
}

static int k_tri(const pc_view *out, int64_t diagonal, int upper, int64_t vr, int64_t vc, char *err, size_t errn)
{
    return pld_k_tri(V(out), diagonal, upper, vr, vc, err, errn) != PLD_OK;
}

static int k_random(const pc_view *out, const uint32_t key[2], const uint32_t ctr[4], int rounds, int64_t vr,
                    int64_t vc, char *err, size_t errn)
{
    return pld_k_random(V(out), key, ctr, rounds, vr, vc, err, errn) != PLD_OK;
}

static int k_cast(const pc_view *out, const pc_view *a, int mode, char *err, size_t errn)
{
    return pld_k_cast(V(out), V(a), (pld_round_k_t)mode, err, errn) != PLD_OK;
}

static int k_matmul(const pc_view *out, const pc_view *a, const pc_view *b, int accumulate, char *err, size_t errn)
{
    return pld_k_matmul(V(out), V(a), V(b), accumulate, err, errn) != PLD_OK;
}

static int k_matmul_mx(const pc_view *out, const pc_view *a, const pc_view *sa, const pc_view *b, const pc_view *sb,
                       int accumulate, char *err, size_t errn)
{
    return pld_k_matmul_mx(V(out), V(a), V(sa), V(b), V(sb), accumulate, err, errn) != PLD_OK;
}

static int k_copy(const pc_view *out, const pc_view *a, char *err, size_t errn)
{
    return pld_k_copy(V(out), V(a), err, errn) != PLD_OK;
}

static int k_accumulate(const pc_view *out, const pc_view *a, char *err, size_t errn)
{
    return pld_k_accumulate(V(out), V(a), err, errn) != PLD_OK;
}

static int k_fill_f(const pc_view *out, double v, char *err, size_t errn)
{
    (void)err, (void)errn;
    return pld_k_fill_f(V(out), v) != PLD_OK;
}

static int k_fill_i(const pc_view *out, int64_t v, char *err, size_t errn)
{
    (void)err, (void)errn;
    return pld_k_fill_i(V(out), v) != PLD_OK;
}

static int k_reshape_valid(int ri, const int64_t *in, const int64_t *v, int ro, const int64_t *out, int64_t *ov,
                           char *err, size_t errn)
{
    return pld_k_reshape_valid(ri, in, v, ro, out, ov, err, errn) != PLD_OK;
}

static int k_assemble_valid(int r, const int64_t *dshape, int64_t *dvalid, const int64_t *svalid, const int64_t *off,
                            char *err, size_t errn)
{
    return pld_k_assemble_valid(r, dshape, dvalid, svalid, off, err, errn) != PLD_OK;
}

static int k_fillpad(const pc_view *dst, const pc_view *src, const int64_t *valid, int mode, char *err, size_t errn)
{
    return pld_k_fillpad(V(dst), V(src), valid, mode, err, errn) != PLD_OK;
}

static int k_gather(const pc_view *out, const pc_view *src, const pc_view *idx, const int64_t *box, int dim, char *err,
                    size_t errn)
{
    return pld_k_gather(V(out), V(src), V(idx), box, dim, err, errn) != PLD_OK;
}

static int k_scatter(const pc_view *out, const pc_view *src, const pc_view *idx, const int64_t *box, int row_form,
                     char *err, size_t errn)
{
    return pld_k_scatter(V(out), V(src), V(idx), box, row_form, err, errn) != PLD_OK;
}

static int k_sort32(const pc_view *out, const pc_view *src, const pc_view *idx, char *err, size_t errn)
{
    return pld_k_sort32(V(out), V(src), V(idx), err, errn) != PLD_OK;
}

static int k_mrgsort(const pc_view *out, const pc_view *const *src, int nsrc, int64_t block, char *err, size_t errn)
{
    const pld_view_t *sv[8];
    for (int i = 0; i < nsrc && i < 8; i++)
        sv[i] = V(src[i]);
    return pld_k_mrgsort(V(out), sv, nsrc < 8 ? nsrc : 8, block, err, errn) != PLD_OK;
}

static int k_mgather(const pc_view *out, const pc_view *mem, const pc_view *idx, const int64_t *box, int row_mode,
                     int oob, const pc_view *scratch, char *err, size_t errn)
{
    return pld_k_mgather(V(out), V(mem), V(idx), box, row_mode, oob, V(scratch), err, errn) != PLD_OK;
}

static int k_mscatter(const pc_view *out, const pc_view *src, const pc_view *idx, const int64_t *svalid, char *err,
                      size_t errn)
{
    return pld_k_mscatter(V(out), V(src), V(idx), svalid, err, errn) != PLD_OK;
}

static int k_gatherb(const pc_view *out, const pc_view *src, const pc_view *off, const int64_t *box, char *err,
                     size_t errn)
{
    return pld_k_gatherb(V(out), V(src), V(off), box, err, errn) != PLD_OK;
}

static int k_scatter_update(const pc_view *out, const pc_view *idx, const pc_view *src, const int64_t *box, char *err,
                            size_t errn)
{
    return pld_k_scatter_update(V(out), V(idx), V(src), box, err, errn) != PLD_OK;
}

static int k_gather_compare(const pc_view *dst, const pc_view *cnt, const pc_view *src, const int64_t *box, int mode,
                            double k, int64_t out_cols, char *err, size_t errn)
{
    return pld_k_gather_compare(V(dst), V(cnt), V(src), box, mode, k, out_cols, err, errn) != PLD_OK;
}

static int k_mx_unpack(const pc_view *out, const void *src, int64_t rows, int64_t cols, const int64_t *off, int a_layout,
                       char *err, size_t errn)
{
    return pld_k_mx_unpack(V(out), src, rows, cols, off, a_layout, err, errn) != PLD_OK;
}

static int k_paged_gather(const pc_view *out, const pc_view *src, const pc_view *idx, const pc_view *table, int64_t bs,
                          int64_t size, int64_t col, int trans, char *err, size_t errn)
{
    return pld_k_paged_gather(V(out), V(src), V(idx), V(table), bs, size, col, trans, err, errn) != PLD_OK;
}

const pc_kern pld_cgen_kern_table = {
    k_binary, k_binary_s, k_unary, k_reduce, k_ext, k_ext_s, k_cmp_mask, k_select, k_part, k_ci,
    k_tri, k_random, k_cast, k_matmul, k_matmul_mx, k_copy, k_accumulate, k_fill_f, k_fill_i,
    /* layout (pld_kern_layout.c) */
    k_reshape_valid, k_assemble_valid, k_fillpad, k_gather, k_scatter, k_sort32, k_mrgsort,
    /* the GM gather / scatter family (pld_kern_gather.c) */
    k_mgather, k_mscatter, k_gatherb, k_scatter_update, k_gather_compare,
    k_mx_unpack,
    k_paged_gather,
};
