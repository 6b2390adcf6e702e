/* pld_cgen_mm.c - the matmul family in generated code (pld_cgen_int.h):
 * pl.tile.matmul / matmul_acc (init_cond) / matmul_bias, gemv / gemv_acc /
 * gemv_bias, batch_matmul(_acc), matmul_mx(_acc, _bias), pl.tile.cast with
 * its rounding mode, pl.tile.load of an MX-layout scale tensor and
 * pl.tile.store with atomic=. Every matmul (FP32 too: issue 44, one
 * implementation of its numerics) calls the library
 * (rt->k: pld_k_matmul, pld_k_matmul_mx, pld_k_binary for the bias,
 * pld_k_cast, pld_k_mx_unpack) with views the generated code builds. The
 * checks and messages are the interpreter's (pld_exec_compute.c
 * pld_exec_matmul / pld_exec_batch_matmul / pld_exec_matmul_mx / add_bias,
 * pld_exec_mem.c pld_exec_load / pld_exec_store). */
#include "pld_cgen_int.h"
#include "pld_crt.h"
#include "pld_kern.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

/* a tile operand i of e in nm */
static int operand(cg_t *g, const pld_expr_t *e, int i, char *nm)
{
    return pld_cg_tile_operand(g, pld_op_bound(e, i), e, nm);
}

/* the static physical shape of tile type t (rank, or -1) */
static int static_shape(const pld_type_t *t, int64_t *s)
{
    if (!t || t->kind != PLD_TY_TILE || t->rank < 1 || t->rank > PC_MAX_RANK || tile_bytes(t) < 0)
        return -1;
    for (int i = 0; i < t->rank; i++)
        s[i] = t->shape[i].v;
    return t->rank;
}

/* the bias check and add of add_bias (pld_exec_compute.c): bias tile bv
 * [1, n] of the result's dtype added to every row of view vo (already
 * emitted), its first vo.shape[1] columns; n: a C expression */
static void emit_bias(cg_t *g, const pld_expr_t *e, int s, const char *bv, const char *n, pld_dtype_t odt)
{
    pld_cg_emit(g, "if (%s.rank != 2 || %s.shape[0] != 1 || %s.shape[1] != (%s) || %s.dt != %d) { char m[160]; "
                   "snprintf(m, sizeof m, \"%s: bias must be [1, %%lld] of %s\", (long long)(%s)); return pc_cold(), rt->fail(bk, %d, m); }",
                bv, bv, bv, n, bv, (int)odt, opname(e), pld_dtype_name(odt), n, s);
    pld_cg_emit(g, "{ pc_view vbias; pc_view_tile(&vbias, &%s); vbias.shape[0] = vo.shape[0]; vbias.strides[0] = 0; "
                   "vbias.shape[1] = vo.shape[1];", bv);
    pld_cg_emit(g, "  PC_K(%d, binary, %d /*PLD_K_ADD*/, &vo, &vo, &vbias); }", s, (int)PLD_K_ADD);
}

/* ---------------------------------------------------------------- matmul, gemv */

/* pl.tile.matmul / gemv (mode 0), matmul_acc / gemv_acc (1), matmul_bias /
 * gemv_bias (2): pld_exec_matmul's tile path */
static int gen_matmul(cg_t *g, const pld_expr_t *e, const char *dst, size_t room, int s, int mode)
{
    const int acc = mode == 1;
    char av[32], bv[32], cv[32];
    int ov = -1; /* init_cond: a C local, nonzero = overwrite */
    if (acc && e->op == PLD_OPID_TILE_MATMUL_ACC && pld_op_bound(e, 3)) {
        int fl;
        pld_dtype_t d;
        int c = pld_cg_scalar(g, pld_op_bound(e, 3), &fl, &d);
        if (c < 0)
            return -1;
        ov = tmp(g);
        pld_cg_emit(g, "const int t%d = %st%d != 0;", ov, fl ? "(int64_t)" : "", c);
    }
    const pld_expr_t *a0 = pld_op_bound(e, 0);
    if (acc && a0 && a0->kind == PLD_EX_NAME && a0->slot >= 0 && g->slots[a0->slot].accwin)
        return pld_cg_fail(g, a0->span, "%s into a pl.tile.slice window of an Acc tile is not compiled by the native "
                                        "backend (the window shares the tile's storage: the sim backend writes it through)",
                           opname(e));
    if (operand(g, e, acc, av) || operand(g, e, acc + 1, bv))
        return -1;
    pld_cg_emit(g, "if (%s.rank != 2 || %s.rank != 2 || %s.shape[1] != %s.shape[0]) return pc_cold(), rt->fail(bk, %d, \"%s: "
                   "incompatible shapes\");", av, bv, av, bv, s, opname(e));
    if (mode == 2 && operand(g, e, 2, cv))
        return -1;
    if (acc) {
        if (pld_cg_tile_into(g, pld_op_bound(e, 0), dst, room))
            return -1;
    } else {
        if (pld_cg_set_desc(g, dst, e->type, e))
            return -1;
        pld_cg_emit(g, "%s.valid[0] = %s.valid[0]; %s.valid[1] = %s.valid[1];", dst, av, dst, bv);
    }
    const pld_type_t *to = acc ? pld_op_bound(e, 0)->type : e->type;
    char accx[48];
    if (ov >= 0)
        snprintf(accx, sizeof accx, "%d && !t%d", acc, ov);
    else
        snprintf(accx, sizeof accx, "%d", acc);
    /* every dtype (FP32 too): the kernel library's blocked matmul, the one
     * implementation (sim and native; docs/ops-numerics.md, "Matmul") */
    pld_cg_emit(g, "{ pc_view vo, va, vb; pc_view_tile(&vo, &%s); pc_view_tile(&va, &%s); pc_view_tile(&vb, &%s);", dst, av,
                bv);
    pld_cg_emit(g, "  PC_K(%d, matmul, &vo, &va, &vb, %s);", s, accx);
    if (mode == 2)
        emit_bias(g, e, s, cv, "vo.shape[1]", to ? to->dtype : PLD_DT_FP32);
    pld_cg_emit(g, "}");
    return 0;
}

/* ---------------------------------------------------------------- batch_matmul */

/* the broadcast batch dims os[0..max(na, nb)) of two matmul operands with na
 * and nb leading dims (xs, ys: their shapes), as pld_exec_matmul's mm_batch;
 * 1 after emitting sim's failure (dims that do not broadcast) */
int pld_cg_batch_dims(cg_t *g, int s, const pld_expr_t *e, const int64_t *xs, int na, const int64_t *ys, int nb,
                      int64_t *os)
{
    const int n = na > nb ? na : nb;
    for (int i = 0; i < n; i++) {
        const int64_t p = i < n - na ? 1 : xs[i - (n - na)], q = i < n - nb ? 1 : ys[i - (n - nb)];
        if (p != q && p != 1 && q != 1) {
            pld_cg_emit(g, "return pc_cold(), rt->fail(bk, %d, \"%s: batch dims %lld and %lld do not broadcast\");", s, opname(e),
                        (long long)p, (long long)q);
            return 1;
        }
        os[i] = p == 1 ? q : p;
    }
    return 0;
}

/* mm_operand (pld_exec_compute.c) over a packed tile of static shape xs
 * (rank xr): the view's shape and strides as rank n + 2 */
static void batch_view(const int64_t *xs, int xr, int n, const int64_t *os, int64_t *vs, int64_t *vt)
{
    int64_t st[PC_MAX_RANK], m = 1;
    for (int d = xr - 1; d >= 0; d--) {
        st[d] = m;
        m *= xs[d];
    }
    const int lead = n - (xr - 2);
    for (int d = 0; d < n + 2; d++) {
        const int k = d - lead;
        const int bc = d < n && (k < 0 || xs[k] == 1);
        vs[d] = bc ? os[d] : xs[k];
        vt[d] = bc ? 0 : st[k];
    }
}

static void emit_view(cg_t *g, const char *v, const char *tile, int r, const int64_t *vs, const int64_t *vt)
{
    pld_cg_emit(g, "%s.data = %s.data; %s.dt = %s.dt; %s.rank = %d;", v, tile, v, tile, v, r);
    for (int d = 0; d < r; d++)
        pld_cg_emit(g, "%s.shape[%d] = %lld; %s.strides[%d] = %lld;", v, d, (long long)vs[d], v, d, (long long)vt[d]);
}

static int gen_batch_matmul(cg_t *g, const pld_expr_t *e, const char *dst, size_t room, int s)
{
    const int acc = e->op == PLD_OPID_TILE_BATCH_MATMUL_ACC;
    char av[32], bv[32];
    if (operand(g, e, acc, av) || operand(g, e, acc + 1, bv))
        return -1;
    int64_t xs[PC_MAX_RANK], ys[PC_MAX_RANK], os[PC_VIEW_MAX_RANK];
    const pld_type_t *ta = pld_op_bound(e, acc)->type, *tb = pld_op_bound(e, acc + 1)->type;
    const int xr = static_shape(ta, xs), yr = static_shape(tb, ys);
    if (xr < 0 || yr < 0)
        return pld_cg_fail(g, e->span, "%s: the native backend needs operands of static shape", opname(e));
    /* mm_batch: a failure here is sim's on every run */
    const int na = xr - 2, nb = yr - 2, n = na > nb ? na : nb;
    if (na < 0 || nb < 0 || n + 2 > PC_VIEW_MAX_RANK || xs[xr - 1] != ys[yr - 2]) {
        pld_cg_emit(g, "return pc_cold(), rt->fail(bk, %d, \"%s: incompatible shapes\");", s, opname(e));
        return 0;
    }
    if (pld_cg_batch_dims(g, s, e, xs, na, ys, nb, os))
        return 0;
    os[n] = xs[xr - 2], os[n + 1] = ys[yr - 1];
    if (n + 2 > PC_MAX_RANK)
        return pld_cg_fail(g, e->span, "%s: a result of rank > %d is not compiled by the native backend", opname(e),
                           PC_MAX_RANK);
    if (acc) {
        int64_t cs[PC_MAX_RANK];
        const int cr = static_shape(pld_op_bound(e, 0)->type, cs);
        int bad = cr != n + 2;
        for (int i = 0; !bad && i < n + 2; i++)
            bad = cs[i] != os[i];
        if (bad) {
            pld_cg_emit(g, "return pc_cold(), rt->fail(bk, %d, \"%s: acc does not have the result's shape\");", s, opname(e));
            return 0;
        }
        if (pld_cg_tile_into(g, pld_op_bound(e, 0), dst, room))
            return -1;
    } else {
        const pld_dtype_t odt = is_float_dt(ta->dtype) ? PLD_DT_FP32 : PLD_DT_INT32;
        int64_t cnt = 1;
        for (int i = 0; i < n + 2; i++)
            cnt *= os[i];
        if ((size_t)(cnt * esize(odt)) > room)
            return pld_cg_fail(g, e->span, "internal: tile storage too small");
        pld_cg_emit(g, "%s.dt = %d; %s.rank = %d;", dst, (int)odt, dst, n + 2);
        for (int i = 0; i < n + 2; i++)
            pld_cg_emit(g, "%s.shape[%d] = %s.valid[%d] = %lld;", dst, i, dst, i, (long long)os[i]);
    }
    int64_t vs[PC_VIEW_MAX_RANK], vt[PC_VIEW_MAX_RANK];
    pld_cg_emit(g, "{ pc_view vo, va, vb; pc_view_tile(&vo, &%s);", dst);
    batch_view(xs, xr, n, os, vs, vt);
    emit_view(g, "va", av, n + 2, vs, vt);
    batch_view(ys, yr, n, os, vs, vt);
    emit_view(g, "vb", bv, n + 2, vs, vt);
    pld_cg_emit(g, "  PC_K(%d, matmul, &vo, &va, &vb, %d); }", s, acc);
    return 0;
}

/* ---------------------------------------------------------------- matmul_mx */

static int gen_matmul_mx(cg_t *g, const pld_expr_t *e, const char *dst, size_t room, int s)
{
    const int acc = e->op == PLD_OPID_TILE_MATMUL_MX_ACC, bias = e->op == PLD_OPID_TILE_MATMUL_MX_BIAS, l = acc;
    char v[5][32];
    for (int i = 0; i < 4 + acc + bias; i++)
        if (operand(g, e, i, v[i]))
            return -1;
    const char *x = v[l], *xs = v[l + 1], *y = v[l + 2], *ys = v[l + 3];
    const char *nm = opname(e);
    pld_cg_emit(g, "if (%s.rank != 2 || %s.rank != 2 || %s.rank != 2 || %s.rank != 2 || %s.shape[1] != %s.shape[0]) "
                   "return pc_cold(), rt->fail(bk, %d, \"%s needs 2-D tiles: lhs [M, K], rhs [K, N] and their scales\");",
                x, xs, y, ys, x, y, s, nm);
    const int q = tmp(g);
    pld_cg_emit(g, "const int64_t vm%d = %s.valid[0], vk%d = %s.valid[1], vn%d = %s.valid[1], gk%d = (vk%d + 31) / 32;", q,
                x, q, x, q, y, q, q);
    pld_cg_emit(g, "if (%s.valid[0] != vk%d) { char m[200]; snprintf(m, sizeof m, \"%s requires matching valid K, but got "
                   "lhs valid K=%%lld and rhs valid K=%%lld\", (long long)vk%d, (long long)%s.valid[0]); return pc_cold(), rt->fail(bk, "
                   "%d, m); }", y, q, nm, q, y, s);
    pld_cg_emit(g, "if (%s.valid[0] < vm%d || %s.valid[1] < gk%d || %s.valid[0] < gk%d || %s.valid[1] < vn%d) {", xs, q, xs, q,
                ys, q, ys, q);
    pld_cg_emit(g, "  const int left = %s.valid[0] < vm%d || %s.valid[1] < gk%d; const pc_tile *st = left ? &%s : &%s; "
                   "char m[240];", xs, q, xs, q, xs, ys);
    pld_cg_emit(g, "  snprintf(m, sizeof m, \"%s: %%s's valid box [%%lld, %%lld] does not cover the [%%lld, %%lld] scales of "
                   "valid K=%%lld\", left ? \"lhs_scale\" : \"rhs_scale\", (long long)st->valid[0], (long long)st->valid[1], "
                   "(long long)(left ? vm%d : gk%d), (long long)(left ? gk%d : vn%d), (long long)vk%d);", nm, q, q, q, q, q);
    pld_cg_emit(g, "  return pc_cold(), rt->fail(bk, %d, m); }", s);
    if (acc) {
        if (pld_cg_tile_into(g, pld_op_bound(e, 0), dst, room))
            return -1;
        pld_cg_emit(g, "if (%s.rank != 2 || %s.shape[0] != %s.shape[0] || %s.shape[1] != %s.shape[1]) { char m[160]; "
                       "snprintf(m, sizeof m, \"%s: acc must be [%%lld, %%lld]\", (long long)%s.shape[0], (long long)%s.shape[1]); "
                       "return pc_cold(), rt->fail(bk, %d, m); }", dst, dst, x, dst, y, nm, x, y, s);
    } else {
        int64_t xsh[PC_MAX_RANK], ysh[PC_MAX_RANK];
        if (static_shape(pld_op_bound(e, l)->type, xsh) != 2 || static_shape(pld_op_bound(e, l + 2)->type, ysh) != 2)
            return pld_cg_fail(g, e->span, "%s: the native backend needs 2-D operands of static shape", nm);
        if ((size_t)(xsh[0] * ysh[1] * 4) > room)
            return pld_cg_fail(g, e->span, "internal: tile storage too small");
        /* a new FP32 tile: zero outside the [valid M, valid N] box */
        pld_cg_emit(g, "%s.dt = %d; %s.rank = 2; %s.shape[0] = %s.shape[0]; %s.shape[1] = %s.shape[1];", dst, (int)PLD_DT_FP32,
                    dst, dst, x, dst, y);
        pld_cg_emit(g, "%s.valid[0] = vm%d; %s.valid[1] = vn%d;", dst, q, dst, q);
        pld_cg_emit(g, "memset(%s.data, 0, (size_t)(%s.shape[0] * %s.shape[1]) * 4);", dst, dst, dst);
    }
    pld_cg_emit(g, "{ pc_view va, vsa, vb, vsb, vo; pc_view_tile(&va, &%s); pc_view_tile(&vsa, &%s); pc_view_tile(&vb, &%s); "
                   "pc_view_tile(&vsb, &%s); pc_view_tile(&vo, &%s);", x, xs, y, ys, dst);
    pld_cg_emit(g, "  va.shape[0] = vo.shape[0] = vm%d, va.shape[1] = vb.shape[0] = vk%d, vb.shape[1] = vo.shape[1] = vn%d;",
                q, q, q);
    pld_cg_emit(g, "  PC_K(%d, matmul_mx, &vo, &va, &vsa, &vb, &vsb, %d);", s, acc);
    if (bias) {
        char n[48];
        snprintf(n, sizeof n, "%s.shape[1]", y);
        emit_bias(g, e, s, v[4], n, PLD_DT_FP32);
    }
    pld_cg_emit(g, "}");
    return 0;
}

/* ---------------------------------------------------------------- entry points */

int pld_cg_mm(cg_t *g, const pld_expr_t *e, const char *dst, size_t room, int s)
{
    switch (e->op) {
    case PLD_OPID_TILE_MATMUL:
    case PLD_OPID_TILE_GEMV: return gen_matmul(g, e, dst, room, s, 0);
    case PLD_OPID_TILE_MATMUL_ACC:
    case PLD_OPID_TILE_GEMV_ACC: return gen_matmul(g, e, dst, room, s, 1);
    case PLD_OPID_TILE_MATMUL_BIAS:
    case PLD_OPID_TILE_GEMV_BIAS: return gen_matmul(g, e, dst, room, s, 2);
    case PLD_OPID_TILE_BATCH_MATMUL:
    case PLD_OPID_TILE_BATCH_MATMUL_ACC: return gen_batch_matmul(g, e, dst, room, s);
    case PLD_OPID_TILE_MATMUL_MX:
    case PLD_OPID_TILE_MATMUL_MX_ACC:
    case PLD_OPID_TILE_MATMUL_MX_BIAS: return gen_matmul_mx(g, e, dst, room, s);
    default: return -2;
    }
}

/* pld_round_mode (pld_exec_compute.c) of the mode argument m */
int pld_cg_round_mode(const pld_expr_t *m)
{
    static const char *const names[] = {"none", "rint", "round", "floor", "ceil", "trunc", "odd"};
    if (!m)
        return PLD_R_ROUND;
    if (m->kind == PLD_EX_STR)
        for (int i = 0; i < 7; i++)
            if (strcmp(m->u.str.s, names[i]) == 0)
                return i;
    if (m->kind == PLD_EX_INT && m->u.ival >= 0 && m->u.ival <= 6)
        return (int)m->u.ival;
    return PLD_R_ROUND;
}

int pld_cg_mm_cast(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    char av[32];
    if (pld_cg_tile_operand(g, pld_op_bound(e, 0), e, av) || pld_cg_set_desc(g, dst, e->type, e))
        return -1;
    pld_cg_emit(g, "memcpy(%s.valid, %s.valid, sizeof %s.valid);", dst, av, dst);
    pld_cg_emit(g, "{ pc_view vo, va; pc_view_tile(&vo, &%s); pc_view_tile(&va, &%s); PC_K(%d, cast, &vo, &va, %d); }", dst,
                av, s, pld_cg_round_mode(pld_op_bound(e, 2)));
    return 0;
}

/* after rt->load (region checks, valid extents) of MX-layout tensor slot
 * `src` at offsets C array t`off` into dst: the logical scales (mx_unpack) */
int pld_cg_mm_load_mx(cg_t *g, const pld_expr_t *e, const char *dst, int src, int off, int s)
{
    const pld_type_t *st = pld_op_bound(e, 0)->type;
    const int a = st->layout == PLD_LAYOUT_MX_A;
    pld_cg_emit(g, "if (s%d.rank != 2 || %d || s%d.stride[1] != 1 || s%d.stride[0] != s%d.shape[1]) "
                   "return pc_cold(), rt->fail(bk, %d, \"%s of an MX-layout tensor only supports packed 2D sources of 1-byte elements\");",
                src, esize(st->dtype) != 1, src, src, src, s, opname(e));
    pld_cg_emit(g, "{ pc_view vd; pc_view_tile_valid(&vd, &%s); PC_K(%d, mx_unpack, &vd, s%d.data, s%d.shape[0], s%d.shape[1], "
                   "t%d, %d); }", dst, s, src, src, src, off, a);
    return 0;
}
