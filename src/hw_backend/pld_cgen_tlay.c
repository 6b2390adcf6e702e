/* pld_cgen_tlay.c - the pl.tensor.* layout, valid-shape and gather / scatter
 * ops in generated code (pld_cgen_int.h): transpose, concat, gather (index
 * and mask forms), scatter (index and mask forms), sort32, mrgsort, fillpad,
 * fillpad_expand, gather_row, scatter_update and reinterpret_view.
 *
 * Semantics, checks and messages are the interpreter's (src/interp/
 * pld_exec_layout.c, pld_exec_gather.c, pld_exec_mem.c pld_exec_valid). The
 * numerics are the kernel library's (rt->k: copy, gather, scatter, sort32,
 * mrgsort, fillpad, scatter_update) over views of pc_tensor descriptors; a
 * new tensor's storage is a buffer of the op's pool (pld_cg_tresult), zeroed
 * first as sim's new tensors are. Shapes known when the kernel is compiled
 * are used as constants; a dynamic dimension's shapes and checks are made at
 * run time (pld_cg_tresult_rt). A form none of these covers returns -2, which
 * the caller reports as not compiled (nothing reaches the tree walker). */
#include "pld_cgen_int.h"
#include "pld_check.h"
#include "pld_crt.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

static int absent(const pld_expr_t *a)
{
    return !a || a->kind == PLD_EX_NONE;
}

/* a literal integer (or its negation) in *v: 1, else 0 */
static int lit_int(const pld_expr_t *a, int64_t *v)
{
    if (a && a->kind == PLD_EX_INT) {
        *v = a->u.ival;
        return 1;
    }
    if (a && a->kind == PLD_EX_BOOL) {
        *v = a->u.bval != 0;
        return 1;
    }
    if (a && a->kind == PLD_EX_UNARY && a->u.un.op == PLD_UOP_NEG && a->u.un.a && a->u.un.a->kind == PLD_EX_INT) {
        *v = -a->u.un.a->u.ival;
        return 1;
    }
    return 0;
}

/* the rank of operand i (a tensor of a known dtype; static dims or not), or -1 */
static int orank(const pld_expr_t *e, int i)
{
    const pld_expr_t *a = pld_op_bound(e, i);
    return a && a->type && a->type->dtype != PLD_DT_NONE ? pld_cg_trank(a->type) : -1;
}

/* the static shape of operand i (a tensor): its rank, or -1 */
static int oshape(const pld_expr_t *e, int i, int64_t *s)
{
    const pld_expr_t *a = pld_op_bound(e, i);
    return a ? pld_cg_tshape(a->type, s) : -1;
}

static void zero_t(cg_t *g, int q, pld_dtype_t dt, int r, const int64_t *s)
{
    int64_t n = 1;
    for (int i = 0; i < r; i++)
        n *= s[i];
    pld_cg_emit(g, "memset(r%d.data, 0, %lld);", q, (long long)(n * esize(dt)));
}

static int fail_now(cg_t *g, int s, const char *op, const char *msg)
{
    pld_cg_emit(g, "return pc_cold(), rt->fail(bk, %d, \"%s%s\");", s, op, msg);
    return 0;
}

/* ---------------------------------------------------------------- transpose, concat */

/* transpose with axes known at run time, or of a dynamic dim (sa NULL): the
 * result's storage has the source's element count; its shape (and the
 * checks) are made at run time */
static int gen_transpose_rt(cg_t *g, const pld_expr_t *e, const char *dst, int s, int r, const int64_t *sa)
{
    char av[32];
    if (pld_cg_toperand(g, pld_op_bound(e, 0), e, av))
        return -1;
    int ax[2];
    for (int i = 0; i < 2; i++) {
        int fl;
        pld_dtype_t d;
        if ((ax[i] = pld_cg_scalar(g, pld_op_bound(e, 1 + i), &fl, &d)) < 0)
            return -1;
        if (fl)
            return -2;
    }
    const char *ops[1] = {av};
    char shv[48];
    snprintf(shv, sizeof shv, "%s.shape", av); /* the source's element count */
    const pld_dtype_t dt = pld_op_bound(e, 0)->type->dtype;
    const int q = sa ? pld_cg_tresult(g, s, dt, r, sa, ops, 1) : pld_cg_tresult_rt(g, s, dt, r, shv, ops, 1);
    pld_cg_emit(g, "{ int64_t x0 = (int64_t)t%d, x1 = (int64_t)t%d; const int r_ = %d;", ax[0], ax[1], r);
    g->ind++;
    pld_cg_emit(g, "if (x0 < 0) x0 += r_;");
    pld_cg_emit(g, "if (x1 < 0) x1 += r_;");
    pld_cg_emit(g, "if (r_ < 2 || x0 < 0 || x0 >= r_ || x1 < 0 || x1 >= r_ || x0 == x1)");
    pld_cg_emit(g, "    PC_FAILF(%d, \"%s: axes %%lld and %%lld do not name two axes of a rank-%%d operand\", (long long)x0, "
                   "(long long)x1, r_);", s, opname(e));
    pld_cg_emit(g, "int64_t sh[PC_MAX_RANK]; memcpy(sh, %s.shape, sizeof sh); sh[x0] = %s.shape[x1]; sh[x1] = %s.shape[x0];", av,
                av, av);
    pld_cg_emit(g, "pc_tensor_packed(&r%d, r%d.data, r%d.dt, r_, sh);", q, q, q);
    pld_cg_emit(g, "memcpy(r%d.valid, %s.valid, sizeof r%d.valid); r%d.valid[x0] = %s.valid[x1]; r%d.valid[x1] = %s.valid[x0];",
                q, av, q, q, av, q, av);
    pld_cg_emit(g, "pc_view vo, vs; pc_view_tensor(&vo, &r%d); pc_view_tensor(&vs, &%s);", q, av);
    pld_cg_emit(g, "{ int64_t x = vs.shape[x0]; vs.shape[x0] = vs.shape[x1]; vs.shape[x1] = x;");
    pld_cg_emit(g, "  x = vs.strides[x0]; vs.strides[x0] = vs.strides[x1]; vs.strides[x1] = x; }");
    pld_cg_emit(g, "PC_K(%d, copy, &vo, &vs);", s);
    g->ind--;
    pld_cg_emit(g, "}");
    pld_cg_emit(g, "%s = r%d;", dst, q);
    return 0;
}

static int gen_transpose(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    int64_t sa[PC_MAX_RANK], ax[2];
    const int r = oshape(e, 0, sa);
    const pld_expr_t *A = pld_op_bound(e, 0);
    if (r < 0 && A && A->type && A->type->dtype != PLD_DT_NONE && pld_cg_trank(A->type) >= 0)
        return gen_transpose_rt(g, e, dst, s, pld_cg_trank(A->type), NULL); /* a dynamic dim: shapes at run time */
    if (r < 0)
        return -2;
    if (!lit_int(pld_op_bound(e, 1), &ax[0]) || !lit_int(pld_op_bound(e, 2), &ax[1]))
        return gen_transpose_rt(g, e, dst, s, r, sa);
    for (int i = 0; i < 2; i++)
        if (ax[i] < 0)
            ax[i] += r;
    char av[32], m[160];
    if (pld_cg_toperand(g, pld_op_bound(e, 0), e, av))
        return -1;
    if (r < 2 || ax[0] < 0 || ax[0] >= r || ax[1] < 0 || ax[1] >= r || ax[0] == ax[1]) {
        snprintf(m, sizeof m, ": axes %lld and %lld do not name two axes of a rank-%d operand", (long long)ax[0],
                 (long long)ax[1], r);
        return fail_now(g, s, opname(e), m);
    }
    const int a = (int)ax[0], b = (int)ax[1];
    int64_t os[PC_MAX_RANK];
    memcpy(os, sa, sizeof os);
    os[a] = sa[b], os[b] = sa[a];
    const char *ops[1] = {av};
    const int q = pld_cg_tresult(g, s, pld_op_bound(e, 0)->type->dtype, r, os, ops, 1);
    pld_cg_emit(g, "{ pc_view vo, vs; pc_view_tensor(&vo, &r%d); pc_view_tensor(&vs, &%s);", q, av);
    pld_cg_emit(g, "  int64_t x = vs.shape[%d]; vs.shape[%d] = vs.shape[%d]; vs.shape[%d] = x;", a, a, b, b);
    pld_cg_emit(g, "  x = vs.strides[%d]; vs.strides[%d] = vs.strides[%d]; vs.strides[%d] = x;", a, a, b, b);
    pld_cg_emit(g, "  memcpy(r%d.valid, %s.valid, sizeof r%d.valid); r%d.valid[%d] = %s.valid[%d]; r%d.valid[%d] = %s.valid[%d];",
                q, av, q, q, a, av, b, q, b, av, a);
    pld_cg_emit(g, "  PC_K(%d, copy, &vo, &vs); }", s);
    pld_cg_emit(g, "%s = r%d;", dst, q);
    return 0;
}

static int gen_concat(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    int64_t sa[PC_MAX_RANK], sb[PC_MAX_RANK];
    const int ra = oshape(e, 0, sa), rb = oshape(e, 1, sb);
    if (ra < 0 || rb < 0)
        return -2;
    char av[32], bv[32];
    if (pld_cg_toperand(g, pld_op_bound(e, 0), e, av) || pld_cg_toperand(g, pld_op_bound(e, 1), e, bv))
        return -1;
    const pld_dtype_t dt = pld_op_bound(e, 0)->type->dtype;
    if (ra != 2 || rb != 2 || sa[0] != sb[0] || dt != pld_op_bound(e, 1)->type->dtype)
        return fail_now(g, s, opname(e), " needs two 2-D operands of one kind, dtype and row count");
    const int64_t os[2] = {sa[0], sa[1] + sb[1]};
    const int es = esize(dt);
    const char *ops[2] = {av, bv};
    const int q = pld_cg_tresult(g, s, dt, 2, os, ops, 2);
    zero_t(g, q, dt, 2, os);
    pld_cg_emit(g, "{ int64_t o0[2] = {0, 0}, e0[2] = {%lld, %s.valid[1]}, o1[2] = {0, %s.valid[1]}, e1[2] = {%lld, %s.valid[1]};",
                (long long)os[0], av, av, (long long)os[0], bv);
    pld_cg_emit(g, "  pc_view w0, w1, u0, u1; pc_view_tensor(&w0, &r%d); w1 = w0; pc_view_tensor(&u0, &%s); pc_view_tensor(&u1, "
                   "&%s);", q, av, bv);
    pld_cg_emit(g, "  pc_view_box(&w0, o0, e0, %d); pc_view_box(&w1, o1, e1, %d); pc_view_box(&u0, o0, e0, %d); "
                   "pc_view_box(&u1, o0, e1, %d);", es, es, es, es);
    pld_cg_emit(g, "  PC_K(%d, copy, &w0, &u0);", s);
    pld_cg_emit(g, "  PC_K(%d, copy, &w1, &u1);", s);
    pld_cg_emit(g, "  r%d.valid[0] = %s.valid[0] < %s.valid[0] ? %s.valid[0] : %s.valid[0]; r%d.valid[1] = %s.valid[1] + "
                   "%s.valid[1]; }", q, av, bv, av, bv, q, av, bv);
    pld_cg_emit(g, "%s = r%d;", dst, q);
    return 0;
}

/* ---------------------------------------------------------------- gather, scatter (index and mask forms) */

/* the column stride and first column a MaskPattern (1..7) selects */
static void mask_cols(int m, int *stride, int *first)
{
    *stride = m <= 2 ? 2 : m <= 6 ? 4 : 1;
    *first = m == 2 ? 1 : m >= 3 && m <= 6 ? m - 3 : 0;
}

/* pl.tensor.gather(input, dim, index): torch.gather (pld_k_gather with dim) */
static int gen_gather(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    int64_t sa[PC_MAX_RANK], sx[PC_MAX_RANK], dim;
    int ra = oshape(e, 0, sa), r = oshape(e, 2, sx), dyn = 0;
    if ((ra < 0 || r < 0) && (ra = orank(e, 0)) >= 0 && (r = orank(e, 2)) >= 0)
        dyn = 1; /* a dynamic dim: the shapes and their checks at run time */
    if (ra < 0 || r < 0)
        return -2;
    char av[32], xv[32], m[200];
    if (pld_cg_toperand(g, pld_op_bound(e, 0), e, av) || pld_cg_toperand(g, pld_op_bound(e, 2), e, xv))
        return -1;
    if (dyn || !lit_int(pld_op_bound(e, 1), &dim)) { /* a constant expression: dim and its checks at run time */
        int fl, dv;
        pld_dtype_t dd;
        if ((dv = pld_cg_scalar(g, pld_op_bound(e, 1), &fl, &dd)) < 0)
            return -1;
        if (fl)
            return -2;
        const pld_dtype_t dt = pld_op_bound(e, 0)->type->dtype;
        const char *ops[2] = {av, xv};
        char shv[48];
        snprintf(shv, sizeof shv, "%s.shape", xv);
        const int q = dyn ? pld_cg_tresult_rt(g, s, dt, r, shv, ops, 2) : pld_cg_tresult(g, s, dt, r, sx, ops, 2);
        pld_cg_emit(g, "{ int64_t dm = (int64_t)t%d; if (dm < 0) dm += %d;", dv, ra);
        g->ind++;
        pld_cg_emit(g, "if (%d != %d || dm < 0 || dm >= %d)", r, ra, r);
        pld_cg_emit(g, "    PC_FAILF(%d, \"%s: index rank %d and dim %%lld do not fit a rank-%d input\", (long long)dm);", s,
                    opname(e), r, ra);
        for (int d = 0; d < r && d < ra; d++)
            if (dyn)
                pld_cg_emit(g, "if (dm != %d && %s.shape[%d] > %s.shape[%d]) PC_FAILF(%d, \"%s: index dimension %d (%%lld) exceeds "
                               "the input's (%%lld)\", (long long)%s.shape[%d], (long long)%s.shape[%d]);", d, xv, d, av, d, s,
                            opname(e), d, xv, d, av, d);
            else if (sx[d] > sa[d])
                pld_cg_emit(g, "if (dm != %d) PC_FAILF(%d, \"%s: index dimension %d (%lld) exceeds the input's (%lld)\");", d,
                            s, opname(e), d, (long long)sx[d], (long long)sa[d]);
        if (dyn)
            pld_cg_emit(g, "memset(r%d.data, 0, (size_t)pc_numel(r%d.shape, %d) * %d);", q, q, r, esize(dt));
        else
            zero_t(g, q, dt, r, sx);
        pld_cg_emit(g, "memcpy(r%d.valid, %s.valid, sizeof r%d.valid);", q, xv, q);
        pld_cg_emit(g, "pc_view vo, vs, vx; pc_view_tensor(&vo, &r%d); pc_view_tensor(&vs, &%s); pc_view_tensor(&vx, &%s);", q,
                    av, xv);
        pld_cg_emit(g, "PC_K(%d, gather, &vo, &vs, &vx, %s.valid, (int)dm);", s, xv);
        g->ind--;
        pld_cg_emit(g, "}");
        pld_cg_emit(g, "%s = r%d;", dst, q);
        return 0;
    }
    if (dim < 0)
        dim += ra;
    if (r != ra || dim < 0 || dim >= r) {
        snprintf(m, sizeof m, ": index rank %d and dim %lld do not fit a rank-%d input", r, (long long)dim, ra);
        return fail_now(g, s, opname(e), m);
    }
    for (int d = 0; d < r; d++)
        if (d != dim && sx[d] > sa[d]) {
            snprintf(m, sizeof m, ": index dimension %d (%lld) exceeds the input's (%lld)", d, (long long)sx[d],
                     (long long)sa[d]);
            return fail_now(g, s, opname(e), m);
        }
    const pld_dtype_t dt = pld_op_bound(e, 0)->type->dtype;
    const char *ops[2] = {av, xv};
    const int q = pld_cg_tresult(g, s, dt, r, sx, ops, 2);
    zero_t(g, q, dt, r, sx);
    pld_cg_emit(g, "memcpy(r%d.valid, %s.valid, sizeof r%d.valid);", q, xv, q);
    pld_cg_emit(g, "{ pc_view vo, vs, vx; pc_view_tensor(&vo, &r%d); pc_view_tensor(&vs, &%s); pc_view_tensor(&vx, &%s);", q, av,
                xv);
    pld_cg_emit(g, "  PC_K(%d, gather, &vo, &vs, &vx, %s.valid, %d); }", s, xv, (int)dim);
    pld_cg_emit(g, "%s = r%d;", dst, q);
    return 0;
}

/* pl.tensor.gather's mask form (mask_pattern arg 3, output_dtype arg 4) */
static int gen_gather_mask(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    int64_t sa[PC_MAX_RANK];
    int ra = oshape(e, 0, sa), dyn = 0;
    if (ra < 0 && (ra = orank(e, 0)) >= 0)
        dyn = 1; /* a dynamic row count (the checker wants constant columns): the shape at run time */
    if (ra < 0)
        return -2;
    int stride, first;
    const int m = pld_check_mask_pattern(pld_op_bound(e, 3));
    char av[32];
    if (pld_cg_toperand(g, pld_op_bound(e, 0), e, av))
        return -1;
    mask_cols(m, &stride, &first);
    const pld_dtype_t sd = pld_op_bound(e, 0)->type->dtype;
    pld_dtype_t od = sd;
    const pld_expr_t *o = pld_op_bound(e, 4);
    if (!absent(o)) {
        if (!e->type || e->type->kind != PLD_TY_TENSOR || e->type->dtype == PLD_DT_NONE)
            return -2;
        od = e->type->dtype;
    }
    if (m < 0 || ra != 2 || (!dyn && sa[1] % stride) || esize(od) != esize(sd))
        return fail_now(g, s, opname(e), ": bad mask pattern, shape or output dtype");
    const char *ops[1] = {av};
    int q;
    if (dyn) {
        const int sh = tmp(g);
        pld_cg_emit(g, "if (%s.shape[1] %% %d) return pc_cold(), rt->fail(bk, %d, \"%s: bad mask pattern, shape or output dtype\");", av,
                    stride, s, opname(e));
        pld_cg_emit(g, "int64_t t%d[2] = {%s.shape[0], %s.shape[1] / %d};", sh, av, av, stride);
        char shv[32];
        snprintf(shv, sizeof shv, "t%d", sh);
        q = pld_cg_tresult_rt(g, s, od, 2, shv, ops, 1);
        pld_cg_emit(g, "{ int64_t z[2] = {0, %d}; const int64_t ext[2] = {t%d[0], t%d[1]}; pc_view vo, sel;", first, sh, sh);
    } else {
        const int64_t os[2] = {sa[0], sa[1] / stride};
        q = pld_cg_tresult(g, s, od, 2, os, ops, 1);
        pld_cg_emit(g, "{ int64_t z[2] = {0, %d}; const int64_t ext[2] = {%lld, %lld}; pc_view vo, sel;", first,
                    (long long)os[0], (long long)os[1]);
    }
    pld_cg_emit(g, "  pc_view_tensor(&vo, &r%d); pc_view_tensor(&sel, &%s); pc_view_box(&sel, z, ext, %d);", q, av, esize(sd));
    pld_cg_emit(g, "  sel.strides[1] *= %d; sel.dt = %d;", stride, (int)od);
    pld_cg_emit(g, "  PC_K(%d, copy, &vo, &sel); }", s);
    pld_cg_emit(g, "%s = r%d;", dst, q);
    return 0;
}

/* pl.tensor.scatter(input, dim, index, src): a copy of input, then pld_k_scatter (row form) */
static int gen_scatter(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    int64_t sd[PC_MAX_RANK], ss[PC_MAX_RANK], sx[PC_MAX_RANK];
    int rd = oshape(e, 0, sd), rs = oshape(e, 3, ss), rx = oshape(e, 2, sx), dyn = 0;
    if ((rd < 0 || rs < 0 || rx < 0) && orank(e, 0) >= 0 && orank(e, 3) >= 0 && orank(e, 2) >= 0)
        rd = orank(e, 0), rs = orank(e, 3), rx = orank(e, 2), dyn = 1; /* a dynamic dim: input's shape at run time */
    if (rd < 0 || rs < 0 || rx < 0)
        return -2;
    char dv[32], sv[32], xv[32];
    if (pld_cg_toperand(g, pld_op_bound(e, 0), e, dv) || pld_cg_toperand(g, pld_op_bound(e, 3), e, sv) ||
        pld_cg_toperand(g, pld_op_bound(e, 2), e, xv))
        return -1;
    const char *msg = ": the index does not cover src's valid box, or src does not fit";
    if (rs != 2 || rx != 2 || rd != 2)
        return fail_now(g, s, opname(e), msg);
    pld_cg_emit(g, "if (%s.shape[0] < %s.valid[0] || %s.shape[1] < %s.valid[1] || %s.valid[0] > %s.shape[0])", xv, sv, xv, sv, sv,
                dv);
    pld_cg_emit(g, "    return pc_cold(), rt->fail(bk, %d, \"%s%s\");", s, opname(e), msg);
    const pld_dtype_t dt = pld_op_bound(e, 0)->type->dtype;
    const char *ops[3] = {dv, sv, xv};
    char shv[48];
    snprintf(shv, sizeof shv, "%s.shape", dv);
    const int q = dyn ? pld_cg_tresult_rt(g, s, dt, 2, shv, ops, 3) : pld_cg_tresult(g, s, dt, 2, sd, ops, 3);
    pld_cg_emit(g, "memcpy(r%d.valid, %s.valid, sizeof r%d.valid);", q, dv, q);
    pld_cg_emit(g, "{ pc_view vo, vd, vs, vx; pc_view_tensor(&vo, &r%d); pc_view_tensor(&vd, &%s); pc_view_tensor(&vs, &%s); "
                   "pc_view_tensor(&vx, &%s);", q, dv, sv, xv);
    pld_cg_emit(g, "  PC_K(%d, copy, &vo, &vd);", s);
    pld_cg_emit(g, "  PC_K(%d, scatter, &vo, &vs, &vx, %s.valid, 1); }", s, sv);
    pld_cg_emit(g, "%s = r%d;", dst, q);
    return 0;
}

/* pl.tensor.scatter's mask form (input = src at 0, mask_pattern at 4, dst at 5): a copy of dst with src's rows in the
 * pattern's columns */
static int gen_scatter_mask(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    int64_t sd[PC_MAX_RANK], ss[PC_MAX_RANK];
    const int rd = oshape(e, 5, sd), rs = oshape(e, 0, ss);
    if (rd < 0 || rs < 0)
        return -2;
    int stride, first;
    const int m = pld_check_mask_pattern(pld_op_bound(e, 4));
    char dv[32], sv[32];
    if (pld_cg_toperand(g, pld_op_bound(e, 5), e, dv) || pld_cg_toperand(g, pld_op_bound(e, 0), e, sv))
        return -1;
    mask_cols(m, &stride, &first);
    const pld_dtype_t dt = pld_op_bound(e, 5)->type->dtype;
    if (m < 0 || rd != 2 || rs != 2 || dt != pld_op_bound(e, 0)->type->dtype || sd[0] != ss[0] || sd[1] != ss[1] * stride)
        return fail_now(g, s, opname(e), ": bad mask pattern or shapes");
    const char *ops[2] = {dv, sv};
    const int q = pld_cg_tresult(g, s, dt, 2, sd, ops, 2);
    pld_cg_emit(g, "memcpy(r%d.valid, %s.valid, sizeof r%d.valid);", q, dv, q);
    pld_cg_emit(g, "{ int64_t z[2] = {0, %d}; const int64_t ext[2] = {%lld, %lld}; pc_view vo, sel, vd, vs;", first,
                (long long)ss[0], (long long)ss[1]);
    pld_cg_emit(g, "  pc_view_tensor(&vo, &r%d); pc_view_tensor(&vd, &%s); pc_view_tensor(&vs, &%s);", q, dv, sv);
    pld_cg_emit(g, "  sel = vo; pc_view_box(&sel, z, ext, %d); sel.strides[1] *= %d;", esize(dt), stride);
    pld_cg_emit(g, "  PC_K(%d, copy, &vo, &vd);", s);
    pld_cg_emit(g, "  PC_K(%d, copy, &sel, &vs); }", s);
    pld_cg_emit(g, "%s = r%d;", dst, q);
    return 0;
}

/* ---------------------------------------------------------------- sort32, mrgsort */

static int gen_sort(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    const int sort = e->op == PLD_OPID_TENSOR_SORT32;
    const int fmt1 = !sort && !absent(pld_op_bound(e, 5));
    int64_t sh[5][PC_MAX_RANK];
    int rk[5], ns = 0, at[5], dyn = 0;
    char nm[5][32];
    for (int i = 0; i < (sort ? 2 : fmt1 ? 1 : 4); i++) {
        if (!sort && i > 0 && absent(pld_op_bound(e, i)))
            continue;
        if ((rk[ns] = oshape(e, i, sh[ns])) < 0) {
            /* a dynamic row count (the checker wants constant columns): the rows and their check at run time */
            const pld_type_t *t = pld_op_bound(e, i)->type;
            if ((rk[ns] = orank(e, i)) != 2 || t->shape[1].kind != PLD_DIM_CONST)
                return -2;
            sh[ns][0] = -1;
            sh[ns][1] = t->shape[1].v;
            dyn = 1;
        }
        at[ns++] = i;
    }
    for (int i = 0; i < ns; i++)
        if (pld_cg_toperand(g, pld_op_bound(e, at[i]), e, nm[i]))
            return -1;
    int bl = -1;
    if (fmt1) {
        int fl;
        pld_dtype_t d;
        if ((bl = pld_cg_scalar(g, pld_op_bound(e, 5), &fl, &d)) < 0)
            return -1;
        pld_cg_emit(g, "if ((int64_t)t%d <= 0 || (int64_t)t%d %% 64)", bl, bl);
        pld_cg_emit(g, "    PC_FAILF(%d, \"%s: block_len %%lld is not a positive multiple of 64\", (long long)t%d);", s,
                    opname(e), bl);
    }
    const int nsrc = sort ? 1 : ns;
    const int64_t R = sh[0][0];
    const char *rows_msg = " needs 2-D FP32 sources of one row count (pairs: an even column count)";
    for (int i = 0; dyn && i < ns; i++)
        if (rk[i] == 2)
            pld_cg_emit(g, "if (%s.shape[0] != %s.shape[0]) return pc_cold(), rt->fail(bk, %d, \"%s%s\");", nm[i], nm[0], s, opname(e),
                        rows_msg);
    for (int i = 0; i < ns; i++)
        if (rk[i] != 2 || (!dyn && sh[i][0] != R) ||
            (i < nsrc && (pld_op_bound(e, at[i])->type->dtype != PLD_DT_FP32 || (!sort && sh[i][1] % 2))))
            return fail_now(g, s, opname(e), rows_msg);
    if (sort && (sh[1][1] != sh[0][1] || sh[0][1] % 32 || esize(pld_op_bound(e, 1)->type->dtype) != 4))
        return fail_now(g, s, opname(e), ": idx must have src's shape (columns a multiple of 32), 4-byte elements");
    int64_t cols = 0;
    for (int i = 0; i < nsrc; i++)
        cols += sh[i][1];
    const int64_t os[2] = {R, sort ? 2 * cols : cols};
    const char *ops[4];
    for (int i = 0; i < ns; i++)
        ops[i] = nm[i];
    int q;
    if (dyn) {
        const int sv = tmp(g);
        pld_cg_emit(g, "int64_t t%d[2] = {%s.shape[0], %lld};", sv, nm[0], (long long)os[1]);
        char shv[32];
        snprintf(shv, sizeof shv, "t%d", sv);
        q = pld_cg_tresult_rt(g, s, PLD_DT_FP32, 2, shv, ops, ns);
        pld_cg_emit(g, "memset(r%d.data, 0, (size_t)pc_numel(r%d.shape, 2) * 4);", q, q);
    } else {
        q = pld_cg_tresult(g, s, PLD_DT_FP32, 2, os, ops, ns);
        zero_t(g, q, PLD_DT_FP32, 2, os);
    }
    pld_cg_emit(g, "{ pc_view vo, vs[4]; const pc_view *sv[4] = {NULL}; pc_view_tensor(&vo, &r%d);", q);
    for (int i = 0; i < ns; i++)
        pld_cg_emit(g, "  pc_view_tensor(&vs[%d], &%s); sv[%d] = &vs[%d];", i, nm[i], i, i);
    if (sort)
        pld_cg_emit(g, "  PC_K(%d, sort32, &vo, &vs[0], &vs[1]); }", s);
    else if (fmt1)
        pld_cg_emit(g, "  PC_K(%d, mrgsort, &vo, sv, 1, (int64_t)t%d); }", s, bl);
    else
        pld_cg_emit(g, "  PC_K(%d, mrgsort, &vo, sv, %d, 0); }", s, nsrc);
    pld_cg_emit(g, "%s = r%d;", dst, q);
    return 0;
}

/* ---------------------------------------------------------------- fillpad, gather_row */

/* fillpad_expand whose shape is a constant expression, or of a source of a
 * dynamic dim (sa NULL): the checks at run time; the result's shape is the
 * checker's static one where it has one, else the shape argument's values */
static int gen_fillpad_expand_rt(cg_t *g, const pld_expr_t *e, const char *dst, int s, int r, const int64_t *sa)
{
    int64_t os[PC_MAX_RANK];
    const int st = pld_cg_tshape(e->type, os) == r;
    char av[32];
    if (pld_cg_toperand(g, pld_op_bound(e, 0), e, av))
        return -1;
    int n;
    const int ns = pld_cg_ilist(g, pld_op_bound(e, 1), &n);
    if (ns < 0)
        return -1;
    const int mode = pld_check_pad_mode(pld_op_bound(e, 2));
    if (mode < 0)
        return fail_now(g, s, opname(e), ": pad_value is not one of the three padding modes");
    if (n != r) {
        char m[96];
        snprintf(m, sizeof m, ": shape has %d entries, the source rank %d", n, r);
        return fail_now(g, s, opname(e), m);
    }
    for (int d = 0; d < r; d++) {
        if (sa)
            pld_cg_emit(g, "if (t%d[%d] < %lld)", ns, d, (long long)sa[d]);
        else
            pld_cg_emit(g, "if (t%d[%d] < %s.shape[%d])", ns, d, av, d);
        pld_cg_emit(g, "    PC_FAILF(%d, \"%s: destination dimension %d (%%lld) is smaller than the source's (%%lld)\", "
                       "(long long)t%d[%d], (long long)%s.shape[%d]);", s, opname(e), d, ns, d, av, d);
        if (st)
            pld_cg_emit(g, "if (t%d[%d] != %lld) return pc_cold(), rt->fail(bk, %d, \"%s: internal: the result's shape differs from its "
                           "static type\");", ns, d, (long long)os[d], s, opname(e));
    }
    const char *ops[1] = {av};
    char shv[32];
    snprintf(shv, sizeof shv, "t%d", ns);
    const pld_dtype_t dt = pld_op_bound(e, 0)->type->dtype;
    const int q = st ? pld_cg_tresult(g, s, dt, r, os, ops, 1) : pld_cg_tresult_rt(g, s, dt, r, shv, ops, 1);
    pld_cg_emit(g, "{ pc_view vs, vd; pc_view_tensor(&vs, &%s); pc_view_tensor(&vd, &r%d);", av, q);
    pld_cg_emit(g, "  PC_K(%d, fillpad, &vd, &vs, %s.valid, %d); }", s, av, mode);
    pld_cg_emit(g, "%s = r%d;", dst, q);
    return 0;
}

static int gen_fillpad(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    const int expand = e->op == PLD_OPID_TENSOR_FILLPAD_EXPAND;
    int64_t sa[PC_MAX_RANK], os[PC_MAX_RANK];
    int r = oshape(e, 0, sa), dyn = 0;
    if (r < 0 && (r = orank(e, 0)) >= 0)
        dyn = 1; /* a dynamic dim: the source's shape at run time */
    if (r < 0)
        return -2;
    if (expand && dyn)
        return gen_fillpad_expand_rt(g, e, dst, s, r, NULL);
    memcpy(os, sa, sizeof os);
    if (expand) {
        const pld_expr_t *l = pld_op_bound(e, 1);
        int lit = l && (l->kind == PLD_EX_LIST || l->kind == PLD_EX_TUPLE) && l->u.seq.n <= PC_MAX_RANK;
        for (int d = 0; lit && d < l->u.seq.n; d++)
            lit = lit_int(l->u.seq.items[d], &os[d]);
        if (!lit)
            return gen_fillpad_expand_rt(g, e, dst, s, r, sa);
        const int n = l->u.seq.n;
        const int mode = pld_check_pad_mode(pld_op_bound(e, 2));
        char av[32], m[200];
        if (pld_cg_toperand(g, pld_op_bound(e, 0), e, av))
            return -1;
        if (mode < 0)
            return fail_now(g, s, opname(e), ": pad_value is not one of the three padding modes");
        if (n != r) {
            snprintf(m, sizeof m, ": shape has %d entries, the source rank %d", n, r);
            return fail_now(g, s, opname(e), m);
        }
        for (int d = 0; d < r; d++)
            if (os[d] < sa[d]) {
                snprintf(m, sizeof m, ": destination dimension %d (%lld) is smaller than the source's (%lld)", d,
                         (long long)os[d], (long long)sa[d]);
                return fail_now(g, s, opname(e), m);
            }
        const char *ops[1] = {av};
        const int q = pld_cg_tresult(g, s, pld_op_bound(e, 0)->type->dtype, r, os, ops, 1);
        pld_cg_emit(g, "{ pc_view vs, vd; pc_view_tensor(&vs, &%s); pc_view_tensor(&vd, &r%d);", av, q);
        pld_cg_emit(g, "  PC_K(%d, fillpad, &vd, &vs, %s.valid, %d); }", s, av, mode);
        pld_cg_emit(g, "%s = r%d;", dst, q);
        return 0;
    }
    const int mode = pld_check_pad_mode(pld_op_bound(e, 1));
    char av[32];
    if (pld_cg_toperand(g, pld_op_bound(e, 0), e, av))
        return -1;
    if (mode < 0)
        return fail_now(g, s, opname(e), ": pad_value is not one of the three padding modes");
    const char *ops[1] = {av};
    char shv[48];
    snprintf(shv, sizeof shv, "%s.shape", av);
    const pld_dtype_t dt = pld_op_bound(e, 0)->type->dtype;
    const int q = dyn ? pld_cg_tresult_rt(g, s, dt, r, shv, ops, 1) : pld_cg_tresult(g, s, dt, r, os, ops, 1);
    pld_cg_emit(g, "{ pc_view vs, vd; pc_view_tensor(&vs, &%s); pc_view_tensor(&vd, &r%d);", av, q);
    pld_cg_emit(g, "  PC_K(%d, fillpad, &vd, &vs, %s.valid, %d); }", s, av, mode);
    pld_cg_emit(g, "%s = r%d;", dst, q);
    return 0;
}

/* pl.tensor.gather_row(acc, src, dst_offset, src_offset, shapes, transpose, valid_shape): acc written in place */
static int gen_gather_row(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    char dv[32], sv[32];
    int nd, ns, nw, nv = -1;
    for (int i = 0; i < 2; i++) {
        const pld_expr_t *a = pld_op_bound(e, i);
        if (!a || !a->type || a->type->kind != PLD_TY_TENSOR)
            return -2;
    }
    if (pld_cg_toperand(g, pld_op_bound(e, 0), e, dv) || pld_cg_toperand(g, pld_op_bound(e, 1), e, sv))
        return -1;
    const int doff = pld_cg_ilist(g, pld_op_bound(e, 2), &nd);
    const int soff = doff < 0 ? -1 : pld_cg_ilist(g, pld_op_bound(e, 3), &ns);
    const int win = soff < 0 ? -1 : pld_cg_ilist(g, pld_op_bound(e, 4), &nw);
    if (win < 0)
        return -1;
    int tr = -1, vs = -1;
    const pld_expr_t *ta = pld_op_bound(e, 5);
    if (absent(ta)) {
        tr = tmp(g);
        pld_cg_emit(g, "const int64_t t%d = 0;", tr);
    } else {
        int fl;
        pld_dtype_t d;
        if ((tr = pld_cg_scalar(g, ta, &fl, &d)) < 0)
            return -1;
    }
    if (!absent(pld_op_bound(e, 6)) && (vs = pld_cg_ilist(g, pld_op_bound(e, 6), &nv)) < 0)
        return -1;
    const pld_type_t *td = pld_op_bound(e, 0)->type, *tsr = pld_op_bound(e, 1)->type;
    if (nd != 2 || ns != 2 || nw != 2 || (nv >= 0 && nv != 2) || !td || !tsr || td->rank != 2 || tsr->rank != 2 ||
        td->dtype != tsr->dtype)
        return fail_now(g, s, opname(e), " needs 2-D operands of one dtype and 2-entry offsets and shapes");
    const int es = esize(td->dtype);
    pld_cg_emit(g, "{ const int64_t *doff = t%d, *soff = t%d, *win = t%d; const int tr_ = (int64_t)t%d != 0;", doff, soff, win, tr);
    g->ind++;
    if (nv == 2)
        pld_cg_emit(g, "int64_t ext[2] = {t%d[0], t%d[1]};", vs, vs);
    else
        pld_cg_emit(g, "int64_t ext[2] = {win[0], win[1]};");
    pld_cg_emit(g, "int64_t dext[2] = {tr_ ? ext[1] : ext[0], tr_ ? ext[0] : ext[1]};");
    pld_cg_emit(g, "for (int k = 0; k < 2; k++)");
    pld_cg_emit(g, "    if (ext[k] < 0 || ext[k] > win[k] || soff[k] < 0 || soff[k] > %s.shape[k] - ext[k] || doff[k] < 0 || "
                   "doff[k] > %s.shape[k] - dext[k])", sv, dv);
    pld_cg_emit(g, "        PC_FAILF(%d, \"%s: the window (dimension %%d: src %%lld + %%lld of %%lld, dst %%lld + %%lld of "
                   "%%lld) is outside src or dst\", k, (long long)soff[k], (long long)ext[k], (long long)%s.shape[k], "
                   "(long long)doff[k], (long long)dext[k], (long long)%s.shape[k]);", s, opname(e), sv, dv);
    pld_cg_emit(g, "pc_view sw, dw; pc_view_tensor(&sw, &%s); pc_view_box(&sw, soff, ext, %d);", sv, es);
    pld_cg_emit(g, "pc_view_tensor(&dw, &%s); pc_view_box(&dw, doff, dext, %d);", dv, es);
    pld_cg_emit(g, "if (tr_) { int64_t q = sw.shape[0]; sw.shape[0] = sw.shape[1]; sw.shape[1] = q; q = sw.strides[0]; "
                   "sw.strides[0] = sw.strides[1]; sw.strides[1] = q; }");
    pld_cg_emit(g, "PC_K(%d, copy, &dw, &sw);", s);
    g->ind--;
    pld_cg_emit(g, "}");
    if (strcmp(dst, dv) != 0)
        pld_cg_emit(g, "%s = %s;", dst, dv);
    return 0;
}

/* ---------------------------------------------------------------- scatter_update, reinterpret_view */

static int gen_scatter_update(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    int pos[3];
    if (!pld_check_scatter_update_args((const pld_expr_t *const *)e->bound, pos))
        return -2;
    int64_t si[PC_MAX_RANK], sx[PC_MAX_RANK], ss[PC_MAX_RANK];
    int ri = oshape(e, 0, si), rx = oshape(e, pos[1], sx), rs = oshape(e, pos[2], ss), dyn = 0;
    if ((ri < 0 || rx < 0 || rs < 0) && orank(e, 0) >= 1 && orank(e, pos[1]) >= 0 && orank(e, pos[2]) >= 1)
        ri = orank(e, 0), rx = orank(e, pos[1]), rs = orank(e, pos[2]), dyn = 1; /* a dynamic dim: shapes at run time */
    if (ri < 1 || rx < 0 || rs < 1)
        return -2;
    char iv[32], xv[32], sv[32];
    if (pld_cg_toperand(g, pld_op_bound(e, 0), e, iv) || pld_cg_toperand(g, pld_op_bound(e, pos[1]), e, xv) ||
        pld_cg_toperand(g, pld_op_bound(e, pos[2]), e, sv))
        return -1;
    const pld_dtype_t dt = pld_op_bound(e, 0)->type->dtype;
    if (rx != 2 || (!dyn && ss[rs - 1] != si[ri - 1]) || pld_op_bound(e, pos[2])->type->dtype != dt)
        return fail_now(g, s, opname(e), " needs a 2-D index and src rows of input's length and dtype");
    if (dyn)
        pld_cg_emit(g, "if (%s.shape[%d] != %s.shape[%d]) return pc_cold(), rt->fail(bk, %d, \"%s needs a 2-D index and src rows of input's "
                       "length and dtype\");", sv, rs - 1, iv, ri - 1, s, opname(e));
    const char *ops[3] = {iv, xv, sv};
    char shv[48];
    snprintf(shv, sizeof shv, "%s.shape", iv);
    const int q = dyn ? pld_cg_tresult_rt(g, s, dt, ri, shv, ops, 3) : pld_cg_tresult(g, s, dt, ri, si, ops, 3);
    pld_cg_emit(g, "memcpy(r%d.valid, %s.valid, sizeof r%d.valid);", q, iv, q);
    pld_cg_emit(g, "{ pc_view vo, vi, vx, vs; pc_view_tensor(&vo, &r%d); pc_view_tensor(&vi, &%s); pc_view_tensor(&vx, &%s); "
                   "pc_view_tensor(&vs, &%s);", q, iv, xv, sv);
    pld_cg_emit(g, "  PC_K(%d, copy, &vo, &vi);", s);
    pld_cg_emit(g, "  PC_K(%d, scatter_update, &vo, &vx, &vs, %s.valid); }", s, xv);
    pld_cg_emit(g, "%s = r%d;", dst, q);
    return 0;
}

/* pl.tensor.reinterpret_view(data, dtype, shape): a view of the same bytes (no copy) */
static int gen_reinterpret(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    const pld_expr_t *A = pld_op_bound(e, 0);
    if (!A || !A->type || A->type->kind != PLD_TY_TENSOR || !e->type || e->type->dtype == PLD_DT_NONE)
        return -2;
    const pld_dtype_t to = e->type->dtype, from = A->type->dtype;
    const int sb = esize(from), db = esize(to);
    if (sb <= 0 || db <= 0)
        return -2;
    char av[32];
    if (pld_cg_toperand(g, A, e, av))
        return -1;
    int n = -1, shp = -1;
    if (!absent(pld_op_bound(e, 2)) && (shp = pld_cg_ilist(g, pld_op_bound(e, 2), &n)) < 0)
        return -1;
    if (n > PC_MAX_RANK)
        return -2;
    const int q = tmp(g);
    pld_cg_emit(g, "pc_tensor r%d = %s;", q, av);
    pld_cg_emit(g, "{ int full = 1, packed = 1; int64_t numel = 1, st = 1;");
    g->ind++;
    pld_cg_emit(g, "for (int d = 0; d < %s.rank; d++) { full &= %s.valid[d] == %s.shape[d]; numel *= %s.shape[d]; }", av, av, av,
                av);
    pld_cg_emit(g, "for (int d = %s.rank - 1; d >= 0; d--) { if (%s.shape[d] != 1 && %s.stride[d] != st) packed = 0; st *= "
                   "%s.shape[d]; }", av, av, av, av);
    pld_cg_emit(g, "if (numel == 0) packed = 1;");
    if (n >= 0) {
        pld_cg_emit(g, "int64_t b = 1; for (int d = 0; d < %d; d++) b *= t%d[d];", n, shp);
        pld_cg_emit(g, "if (numel * %d != b * %d || !full) { if (full) PC_FAILF(%d, \"%s: the shape does not hold the source's "
                       "%%lld bytes\", (long long)(numel * %d)); return pc_cold(), rt->fail(bk, %d, \"%s: an explicit shape needs a fully valid "
                       "source\"); }", sb, db, s, opname(e), sb, s, opname(e));
        pld_cg_emit(g, "r%d.rank = %d; for (int d = 0; d < %d; d++) { r%d.shape[d] = r%d.valid[d] = t%d[d]; }", q, n, n, q, q, shp);
    } else {
        pld_cg_emit(g, "const int r = %s.rank; const int64_t sh = r ? %s.shape[r - 1] : 0, va = r ? %s.valid[r - 1] : 0;", av, av,
                    av);
        pld_cg_emit(g, "if (r < 1 || sh * %d %% %d != 0 || va * %d %% %d != 0)", sb, db, sb, db);
        pld_cg_emit(g, "    PC_FAILF(%d, \"%s: the last dimension (valid %%lld of %%lld) does not scale to whole %s elements\", "
                       "(long long)va, (long long)sh);", s, opname(e), pld_dtype_name(to));
        pld_cg_emit(g, "r%d.shape[r - 1] = sh * %d / %d; r%d.valid[r - 1] = va * %d / %d;", q, sb, db, q, sb, db);
    }
    pld_cg_emit(g, "if (!packed || (uintptr_t)%s.data %% %d != 0) return pc_cold(), rt->fail(bk, %d, \"%s needs a packed tensor at a "
                   "whole-element offset\");", av, db, s, opname(e));
    pld_cg_emit(g, "r%d.dt = %d; { int64_t st2 = 1; for (int d = PC_MAX_RANK - 1; d >= 0; d--) { if (d >= r%d.rank) { "
                   "r%d.shape[d] = r%d.valid[d] = 1; r%d.stride[d] = 0; } else { r%d.stride[d] = st2; st2 *= r%d.shape[d]; } } }",
                q, (int)to, q, q, q, q, q, q);
    g->ind--;
    pld_cg_emit(g, "}");
    pld_cg_emit(g, "%s = r%d;", dst, q);
    return 0;
}

/* `d, c = pl.tensor.gather(src, kvalue=, cmp_mode=, out_cols=)`: two new
 * tensors (dst INT32 [rows, out_cols], cdst [1, rows]) by pld_k_gather_compare,
 * bound to the two tensor names (pld_exec_gather.c gather_compare) */
int pld_cg_tensor_gather_compare(cg_t *g, const pld_expr_t *targets, const pld_expr_t *e)
{
    const int s = pld_cg_site(g, e);
    const pld_type_t *rt = e->type;
    if (pld_cg_two_targets(g, targets, e, SK_TENSOR, "tensor"))
        return -1;
    int64_t sa[PC_MAX_RANK], oc = 0, ts[PC_MAX_RANK];
    int ra = oshape(e, 0, sa), dyn = 0;
    if (ra < 0 && (ra = orank(e, 0)) >= 0)
        dyn = 1; /* a source of a dynamic dim: the result shapes at run time */
    const int lit = lit_int(pld_op_bound(e, 7), &oc);
    const int stc = lit || pld_cg_tshape(rt->elems[0], ts) == 2; /* a constant expression: the checker's static shape */
    if (!lit && stc)
        oc = ts[1];
    if (ra < 0)
        return pld_cg_fail(g, e->span, "%s: the native backend needs a source of a known rank", opname(e));
    int v = -1;
    if (!lit) {
        int fl;
        pld_dtype_t d;
        if ((v = pld_cg_scalar(g, pld_op_bound(e, 7), &fl, &d)) < 0)
            return -1;
        if (stc)
            pld_cg_emit(g, "if ((int64_t)t%d != %lld) return pc_cold(), rt->fail(bk, %d, \"%s: internal: the result's shape differs from "
                           "its static type\");", v, (long long)oc, s, opname(e));
    }
    const int mode = pld_check_mode_arg(pld_op_bound(e, 6), pld_gather_cmp_modes, 6, 0);
    char av[32];
    if (pld_cg_toperand(g, pld_op_bound(e, 0), e, av))
        return -1;
    int fl;
    pld_dtype_t kd;
    const int kv = pld_cg_scalar(g, pld_op_bound(e, 5), &fl, &kd);
    if (kv < 0)
        return -1;
    if (ra != 2 || (stc && oc < 0))
        return fail_now(g, s, opname(e), " needs a 2-D src and a scalar kvalue");
    const pld_dtype_t cd = rt->elems[1] && rt->elems[1]->dtype != PLD_DT_NONE ? rt->elems[1]->dtype : PLD_DT_INT32;
    const char *ops[1] = {av};
    int qd, qc;
    char ocx[48];
    if (stc)
        snprintf(ocx, sizeof ocx, "%lldLL", (long long)oc);
    else
        snprintf(ocx, sizeof ocx, "(int64_t)t%d", v);
    if (!dyn && stc) {
        const int64_t ds[2] = {sa[0], oc}, cs[2] = {1, sa[0]};
        qd = pld_cg_tresult(g, s, PLD_DT_INT32, 2, ds, ops, 1);
        zero_t(g, qd, PLD_DT_INT32, 2, ds);
        qc = pld_cg_tresult(g, s, cd, 2, cs, ops, 1);
        zero_t(g, qc, cd, 2, cs);
    } else {
        const int sd = tmp(g), sc = tmp(g);
        pld_cg_emit(g, "if (%s < 0) return pc_cold(), rt->fail(bk, %d, \"%s needs a 2-D src and a scalar kvalue\");", ocx, s, opname(e));
        pld_cg_emit(g, "int64_t t%d[2] = {%s.shape[0], %s}, t%d[2] = {1, %s.shape[0]};", sd, av, ocx, sc, av);
        char dv[32], cv[32];
        snprintf(dv, sizeof dv, "t%d", sd);
        snprintf(cv, sizeof cv, "t%d", sc);
        qd = pld_cg_tresult_rt(g, s, PLD_DT_INT32, 2, dv, ops, 1);
        pld_cg_emit(g, "memset(r%d.data, 0, (size_t)pc_numel(r%d.shape, 2) * 4);", qd, qd);
        qc = pld_cg_tresult_rt(g, s, cd, 2, cv, ops, 1);
        pld_cg_emit(g, "memset(r%d.data, 0, (size_t)pc_numel(r%d.shape, 2) * %d);", qc, qc, esize(cd));
    }
    pld_cg_emit(g, "{ pc_view dv, cv, sv; pc_view_tensor(&dv, &r%d); pc_view_tensor(&cv, &r%d); pc_view_tensor(&sv, &%s);", qd, qc,
                av);
    pld_cg_emit(g, "  PC_K(%d, gather_compare, &dv, &cv, &sv, %s.valid, %d, (double)t%d, %s); }", s, av, mode, kv, ocx);
    pld_cg_emit(g, "s%d = r%d;", targets->u.seq.items[0]->slot, qd);
    pld_cg_emit(g, "s%d = r%d;", targets->u.seq.items[1]->slot, qc);
    return 0;
}

/* pl.tensor.paged_gather(src, indices, block_table, block_size, size, max_indices, space, col_off, is_trans):
 * a new zeroed [max_indices, size] tensor ([size, max_indices] transposed) filled by pld_k_paged_gather */
static int gen_paged_gather(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    int64_t os[PC_MAX_RANK], size = 0, mx = 0, tr = 0;
    /* operands of dynamic dims too: their shapes at run time */
    const int rs = orank(e, 0), rx = orank(e, 1), rb = orank(e, 2);
    const int lit = lit_int(pld_op_bound(e, 4), &size) && lit_int(pld_op_bound(e, 5), &mx) &&
                    (absent(pld_op_bound(e, 8)) || lit_int(pld_op_bound(e, 8), &tr)) && size >= 0 && mx >= 0;
    /* constant expressions: the checker's static result shape where it has one, checked against them at run time;
     * else the shape they give, at run time */
    const int st = lit || pld_cg_tshape(e->type, os) == 2;
    if (rs < 0 || rx < 0 || rb < 0 || !e->type || e->type->dtype == PLD_DT_NONE)
        return -2;
    char sv[32], xv[32], bv[32];
    if (pld_cg_toperand(g, pld_op_bound(e, 0), e, sv) || pld_cg_toperand(g, pld_op_bound(e, 1), e, xv) ||
        pld_cg_toperand(g, pld_op_bound(e, 2), e, bv))
        return -1;
    int v[5], fl;
    pld_dtype_t d;
    static const int argi[5] = {3, 4, 5, 7, 8}; /* block_size, size, max_indices, col_off, is_trans */
    for (int i = 0; i < 5; i++) {
        if (absent(pld_op_bound(e, argi[i]))) {
            v[i] = tmp(g);
            pld_cg_emit(g, "const int64_t t%d = 0;", v[i]);
        } else if ((v[i] = pld_cg_scalar(g, pld_op_bound(e, argi[i]), &fl, &d)) < 0) {
            return -1;
        }
    }
    const int osv = tmp(g);
    pld_cg_emit(g, "int64_t t%d[2];", osv);
    pld_cg_emit(g, "{ const int64_t bs_ = (int64_t)t%d, sz_ = (int64_t)t%d, mx_ = (int64_t)t%d, col_ = (int64_t)t%d; const int tr_ "
                   "= (int64_t)t%d != 0;", v[0], v[1], v[2], v[3], v[4]);
    g->ind++;
    if (rs >= 2)
        pld_cg_emit(g, "const int64_t n_ = pc_numel(%s.shape, %d), c_ = %s.shape[1];", xv, rx, sv);
    else
        pld_cg_emit(g, "const int64_t n_ = pc_numel(%s.shape, %d), c_ = 0;", xv, rx);
    pld_cg_emit(g, "if (%d != 2 || bs_ <= 0 || sz_ <= 0 || col_ < 0 || col_ + sz_ > c_ || n_ > mx_)", rs);
    pld_cg_emit(g, "    PC_FAILF(%d, \"%s: %%lld indices for max_indices %%lld, or columns %%lld + %%lld of src's %%lld\", "
                   "(long long)n_, (long long)mx_, (long long)col_, (long long)sz_, (long long)%s.shape[%d]);", s, opname(e),
                sv, rs >= 2 ? 1 : 0);
    if (lit)
        os[0] = tr ? size : mx, os[1] = tr ? mx : size;
    else if (st)
        pld_cg_emit(g, "if ((tr_ ? sz_ : mx_) != %lld || (tr_ ? mx_ : sz_) != %lld) return pc_cold(), rt->fail(bk, %d, \"%s: internal: the "
                       "result's shape differs from its static type\");", (long long)os[0], (long long)os[1], s, opname(e));
    pld_cg_emit(g, "t%d[0] = tr_ ? sz_ : mx_; t%d[1] = tr_ ? mx_ : sz_;", osv, osv);
    g->ind--;
    pld_cg_emit(g, "}");
    const char *ops[3] = {sv, xv, bv};
    const pld_dtype_t dt = pld_op_bound(e, 0)->type->dtype;
    char shv[32];
    snprintf(shv, sizeof shv, "t%d", osv);
    const int q = st ? pld_cg_tresult(g, s, dt, 2, os, ops, 3) : pld_cg_tresult_rt(g, s, dt, 2, shv, ops, 3);
    if (st)
        zero_t(g, q, dt, 2, os);
    else
        pld_cg_emit(g, "memset(r%d.data, 0, (size_t)pc_numel(r%d.shape, 2) * %d);", q, q, esize(dt));
    pld_cg_emit(g, "{ pc_view vo, vs, vx, vb; pc_view_tensor(&vo, &r%d); pc_view_tensor(&vs, &%s); pc_view_tensor(&vx, &%s); "
                   "pc_view_tensor(&vb, &%s);", q, sv, xv, bv);
    pld_cg_emit(g, "  PC_K(%d, paged_gather, &vo, &vs, &vx, &vb, (int64_t)t%d, (int64_t)t%d, (int64_t)t%d, (int64_t)t%d != 0); }", s,
                v[0], v[1], v[3], v[4]);
    pld_cg_emit(g, "%s = r%d;", dst, q);
    return 0;
}

/* ---------------------------------------------------------------- entry point */

int pld_cg_tlay_op(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    switch (e->op) {
    case PLD_OPID_TENSOR_TRANSPOSE: return gen_transpose(g, e, dst, s);
    case PLD_OPID_TENSOR_CONCAT: return gen_concat(g, e, dst, s);
    case PLD_OPID_TENSOR_GATHER:
        if (!absent(pld_op_bound(e, 3)))
            return gen_gather_mask(g, e, dst, s);
        if (!absent(pld_op_bound(e, 5)))
            return -2; /* the compare form: a tuple (pld_cg_tensor_gather_compare) */
        return gen_gather(g, e, dst, s);
    case PLD_OPID_TENSOR_SCATTER:
        if (!absent(pld_op_bound(e, 4)))
            return gen_scatter_mask(g, e, dst, s);
        return gen_scatter(g, e, dst, s);
    case PLD_OPID_TENSOR_SORT32:
    case PLD_OPID_TENSOR_MRGSORT: return gen_sort(g, e, dst, s);
    case PLD_OPID_TENSOR_FILLPAD:
    case PLD_OPID_TENSOR_FILLPAD_EXPAND: return gen_fillpad(g, e, dst, s);
    case PLD_OPID_TENSOR_GATHER_ROW: return gen_gather_row(g, e, dst, s);
    case PLD_OPID_TENSOR_SCATTER_UPDATE: return gen_scatter_update(g, e, dst, s);
    case PLD_OPID_TENSOR_REINTERPRET_VIEW: return gen_reinterpret(g, e, dst, s);
    case PLD_OPID_TENSOR_PAGED_GATHER: return gen_paged_gather(g, e, dst, s);
    default: return -2;
    }
}
