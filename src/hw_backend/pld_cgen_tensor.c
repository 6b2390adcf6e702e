/* pld_cgen_tensor.c - pl.tensor.* ops in generated code (pld_cgen_int.h):
 * element-wise (broadcasting binary, tensor-scalar, unary), row / column
 * expands, expands, row / column reductions (argmax / argmin too), cast,
 * create / full / create_l1, no_dep and slice. The numerics are the kernel
 * library's (rt->k) over views of pc_tensor descriptors; a result's storage
 * is a buffer of the op's pool (pc_pool_get): one buffer per value still
 * live, reused by the next execution of the op once its value is dead, so a
 * loop of tensor ops runs in bounded memory (the interpreter makes a new
 * tensor per execution and frees it with its last reference). Element-wise,
 * reduction, cast and create / full ops of a dynamic dim compute their result
 * shape at run time from the operands' descriptors or the shape argument (the
 * interpreter's rules and messages; pc_pool_get_dyn); the other ops need
 * static shapes.
 * Checks and messages are the interpreter's (pld_exec_compute.c
 * pld_exec_elementwise / pld_exec_reduce / pld_exec_cast, pld_exec_mem.c
 * pld_exec_create / pld_exec_slice). */
#include "pld_cgen_int.h"
#include "pld_crt.h"
#include "pld_kern.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

/* the static shape of tensor type t: its rank, or -1 */
static int tshape(const pld_type_t *t, int64_t *s)
{
    if (!t || (t->kind != PLD_TY_TENSOR && t->kind != PLD_TY_DTENSOR) || t->rank < 0 || t->rank > PC_MAX_RANK)
        return -1;
    for (int i = 0; i < t->rank; i++) {
        if (t->shape[i].kind != PLD_DIM_CONST || t->shape[i].v < 0)
            return -1;
        s[i] = t->shape[i].v;
    }
    return t->rank;
}

/* a tensor operand: a local (its C name in nm) or a nested tensor expression
 * evaluated into a temporary descriptor first */
static int toperand(cg_t *g, const pld_expr_t *a, const pld_expr_t *e, char *nm)
{
    if (!a)
        return pld_cg_fail(g, e->span, "%s: a tensor operand is missing", opname(e));
    if (a->kind == PLD_EX_NAME && a->slot >= 0 && g->slots[a->slot].kind == SK_TENSOR) {
        snprintf(nm, 32, "s%d", a->slot);
        return 0;
    }
    int t = tmp(g);
    pld_cg_emit(g, "pc_tensor t%d; memset(&t%d, 0, sizeof t%d);", t, t, t);
    snprintf(nm, 32, "t%d", t);
    return pld_cg_tensor_into(g, a, nm);
}

/* the rank of tensor type t (its dims static or not), or -1 */
static int trank(const pld_type_t *t)
{
    if (!t || (t->kind != PLD_TY_TENSOR && t->kind != PLD_TY_DTENSOR) || t->rank < 0 || t->rank > PC_MAX_RANK)
        return -1;
    return t->rank;
}

/* the result descriptor rN (packed, dtype dt, rank r) over a buffer of the
 * op's pool; its shape: s (static), or when s is NULL the C array named shv
 * the generated code computed (the buffer's size known at run time only:
 * pc_pool_get_dyn). ops: the operands' C names (their storage is live).
 * Returns N. */
static int result_x(cg_t *g, int site, pld_dtype_t dt, int r, const int64_t *s, const char *shv, const char *const *ops,
                    int nops)
{
    int64_t n = 1;
    for (int i = 0; s && i < r; i++)
        n *= s[i];
    const int nt = g->fn->nslots;
    int nlive = nops;
    for (int i = 0; i < nt; i++)
        nlive += g->slots[i].kind == SK_TENSOR;
    const int q = tmp(g);
    pld_buf_printf(&g->tmpdecl, "    void *p%d[%d]; memset(p%d, 0, sizeof p%d);\n", q, nlive + 1, q, q);
    if (!s)
        pld_buf_printf(&g->tmpdecl, "    size_t z%d[%d]; memset(z%d, 0, sizeof z%d);\n", q, nlive + 1, q, q);
    pld_buf_t u;
    pld_buf_init(&u);
    int k = 0;
    for (int i = 0; i < nt; i++)
        if (g->slots[i].kind == SK_TENSOR)
            pld_buf_printf(&u, "%ss%d.data", k++ ? ", " : "", i);
    for (int i = 0; i < nops; i++)
        pld_buf_printf(&u, "%s%s.data", k++ ? ", " : "", ops[i]);
    pld_cg_emit(g, "pc_tensor r%d;", q);
    pld_cg_emit(g, "{ const void *u[] = {%s};", k ? pld_buf_str(&u) : "NULL");
    pld_buf_fini(&u);
    if (!s) {
        shv = shv ? shv : "NULL";
        pld_cg_emit(g, "  const int64_t n = pc_numel(%s, %d);", shv, r);
        pld_cg_emit(g, "  void *b = pc_pool_get_dyn(rt, bk, %d, p%d, z%d, %d, (size_t)n * %d, %d, n, u, %d); if (!b) return pc_cold(), 1;",
                    site, q, q, nlive + 1, esize(dt), (int)dt, k);
        pld_cg_emit(g, "  pc_tensor_packed(&r%d, b, %d, %d, %s); }", q, (int)dt, r, shv);
        return q;
    }
    pld_cg_emit(g, "  void *b = pc_pool_get(rt, bk, %d, p%d, %d, %lld, %d, %lld, u, %d); if (!b) return pc_cold(), 1;", site, q, nlive + 1,
                (long long)(n * esize(dt)), (int)dt, (long long)n, k);
    pld_cg_emit(g, "  const int64_t sh[%d] = {", r > 0 ? r : 1);
    for (int i = 0; i < r; i++)
        pld_cg_emit(g, "    %lld,", (long long)s[i]);
    if (r == 0)
        pld_cg_emit(g, "    1,");
    pld_cg_emit(g, "  }; pc_tensor_packed(&r%d, b, %d, %d, sh); }", q, (int)dt, r);
    return q;
}

static int result(cg_t *g, int site, pld_dtype_t dt, int r, const int64_t *s, const char *const *ops, int nops)
{
    return result_x(g, site, dt, r, s, NULL, ops, nops);
}

/* ---------------------------------------------------------------- element-wise */

static int binop(int op)
{
    switch (op) {
    case PLD_OPID_TENSOR_ADD: case PLD_OPID_TENSOR_ADDS: case PLD_OPID_TENSOR_ROW_EXPAND_ADD:
    case PLD_OPID_TENSOR_COL_EXPAND_ADD: return PLD_K_ADD;
    case PLD_OPID_TENSOR_SUB: case PLD_OPID_TENSOR_SUBS: case PLD_OPID_TENSOR_ROW_EXPAND_SUB:
    case PLD_OPID_TENSOR_COL_EXPAND_SUB: case PLD_OPID_TENSOR_ROW_EXPAND_EXPDIF:
    case PLD_OPID_TENSOR_COL_EXPAND_EXPDIF: return PLD_K_SUB;
    case PLD_OPID_TENSOR_MUL: case PLD_OPID_TENSOR_MULS: case PLD_OPID_TENSOR_ROW_EXPAND_MUL:
    case PLD_OPID_TENSOR_COL_EXPAND_MUL: return PLD_K_MUL;
    case PLD_OPID_TENSOR_DIV: case PLD_OPID_TENSOR_DIVS: case PLD_OPID_TENSOR_ROW_EXPAND_DIV:
    case PLD_OPID_TENSOR_COL_EXPAND_DIV: return PLD_K_DIV;
    case PLD_OPID_TENSOR_MAXIMUM: case PLD_OPID_TENSOR_ROW_EXPAND_MAX: case PLD_OPID_TENSOR_COL_EXPAND_MAX: return PLD_K_MAX;
    case PLD_OPID_TENSOR_MINIMUM: case PLD_OPID_TENSOR_ROW_EXPAND_MIN: case PLD_OPID_TENSOR_COL_EXPAND_MIN: return PLD_K_MIN;
    case PLD_OPID_TENSOR_ROW_EXPAND: case PLD_OPID_TENSOR_COL_EXPAND: return 100; /* a copy of the vector */
    default: return -1;
    }
}

static int unop(int op)
{
    switch (op) {
    case PLD_OPID_TENSOR_EXP: return PLD_K_EXP;
    case PLD_OPID_TENSOR_LOG: return PLD_K_LOG;
    case PLD_OPID_TENSOR_SQRT: return PLD_K_SQRT;
    case PLD_OPID_TENSOR_RSQRT: return PLD_K_RSQRT;
    case PLD_OPID_TENSOR_ABS: return PLD_K_ABS;
    case PLD_OPID_TENSOR_NEG: return PLD_K_NEG;
    case PLD_OPID_TENSOR_RECIP: return PLD_K_RECIP;
    default: return -1;
    }
}

/* pld_k_ext ops of tensors (pld_exec_elem.c): *form 'u' unary, 's' scalar rhs,
 * 'x' tensor or scalar rhs (by its static type), 'c' compare; -1 when none */
static int xop(const pld_expr_t *e, int *form)
{
    *form = 'x';
    switch (e->op) {
    case PLD_OPID_TENSOR_SIN: *form = 'u'; return PLD_KX_SIN;
    case PLD_OPID_TENSOR_COS: *form = 'u'; return PLD_KX_COS;
    case PLD_OPID_TENSOR_NOT: *form = 'u'; return PLD_KX_NOT;
    case PLD_OPID_TENSOR_FMODS: *form = 's'; return PLD_KX_FMOD;
    case PLD_OPID_TENSOR_ANDS: *form = 's'; return PLD_KX_AND;
    case PLD_OPID_TENSOR_ORS: *form = 's'; return PLD_KX_OR;
    case PLD_OPID_TENSOR_XORS: *form = 's'; return PLD_KX_XOR;
    case PLD_OPID_TENSOR_SHLS: *form = 's'; return PLD_KX_SHL;
    case PLD_OPID_TENSOR_SHRS: *form = 's'; return PLD_KX_SHR;
    case PLD_OPID_TENSOR_FMOD: return PLD_KX_FMOD;
    case PLD_OPID_TENSOR_AND: return PLD_KX_AND;
    case PLD_OPID_TENSOR_OR: return PLD_KX_OR;
    case PLD_OPID_TENSOR_XOR: return PLD_KX_XOR;
    case PLD_OPID_TENSOR_SHL: return PLD_KX_SHL;
    case PLD_OPID_TENSOR_SHR: return PLD_KX_SHR;
    case PLD_OPID_TENSOR_CMP: *form = 'c'; return PLD_KX_EQ;
    default: return -1;
    }
}

static int is_scalar_op(const pld_expr_t *e)
{
    switch (e->op) {
    case PLD_OPID_TENSOR_ADDS: case PLD_OPID_TENSOR_SUBS: case PLD_OPID_TENSOR_MULS: case PLD_OPID_TENSOR_DIVS: return 1;
    case PLD_OPID_TENSOR_MAXIMUM: case PLD_OPID_TENSOR_MINIMUM: {
        const pld_expr_t *r = pld_op_bound(e, 1);
        return r && r->type && r->type->kind == PLD_TY_SCALAR;
    }
    default: {
        int form;
        const pld_expr_t *r = pld_op_bound(e, 1);
        return xop(e, &form) >= 0 && (form == 's' || ((form == 'x' || form == 'c') && r && r->type &&
                                                       r->type->kind == PLD_TY_SCALAR));
    }
    }
}

static int expand_axis(int op)
{
    switch (op) {
    case PLD_OPID_TENSOR_ROW_EXPAND: case PLD_OPID_TENSOR_ROW_EXPAND_ADD: case PLD_OPID_TENSOR_ROW_EXPAND_SUB:
    case PLD_OPID_TENSOR_ROW_EXPAND_MUL: case PLD_OPID_TENSOR_ROW_EXPAND_DIV: case PLD_OPID_TENSOR_ROW_EXPAND_MAX:
    case PLD_OPID_TENSOR_ROW_EXPAND_MIN: case PLD_OPID_TENSOR_ROW_EXPAND_EXPDIF: return 'r';
    case PLD_OPID_TENSOR_COL_EXPAND: case PLD_OPID_TENSOR_COL_EXPAND_ADD: case PLD_OPID_TENSOR_COL_EXPAND_SUB:
    case PLD_OPID_TENSOR_COL_EXPAND_MUL: case PLD_OPID_TENSOR_COL_EXPAND_DIV: case PLD_OPID_TENSOR_COL_EXPAND_MAX:
    case PLD_OPID_TENSOR_COL_EXPAND_MIN: case PLD_OPID_TENSOR_COL_EXPAND_EXPDIF: return 'c';
    default: return 0;
    }
}

/* a scalar operand as the two library arguments (double, int64) in sf / si */
static int scalar_args(cg_t *g, const pld_expr_t *x, char *sf, char *si)
{
    int fl;
    pld_dtype_t d;
    int v = pld_cg_scalar(g, x, &fl, &d);
    if (v < 0)
        return -1;
    snprintf(sf, 48, "(double)t%d", v);
    snprintf(si, 48, "%st%d", fl ? "(int64_t)" : "", v);
    return 0;
}

/* the C name oN of the int64_t array the generated code holds */
static const char *pc_name(int o)
{
    static char b[4][24];
    static int k;
    k = (k + 1) & 3;
    snprintf(b[k], sizeof b[k], "o%d", o);
    return b[k];
}

/* the broadcast shape oN of tensors a (rank ra) and b (rank rb; NULL: a
 * scalar or none) computed at run time, with the interpreter's checks and
 * messages (pld_exec_compute.c pld_exec_elementwise); xk: a row / column
 * expand. Returns N. */
static int emit_bcast_shape(cg_t *g, const pld_expr_t *e, int s, int xk, const char *a, int ra, const char *b, int rb)
{
    const int orank = b && rb > ra ? rb : ra, o = tmp(g);
    char sb[48];
    snprintf(sb, sizeof sb, "%s%s", b ? b : "NULL", b ? ".shape" : "");
    pld_cg_emit(g, "int64_t o%d[%d];", o, orank > 0 ? orank : 1);
    pld_cg_emit(g, "{ const int64_t *sa = %s.shape, *sb = %s; char h1[96], h2[96], m[320]; (void)sb;", a, sb);
    if (xk) {
        pld_cg_emit(g, "  if (!(%d == 2 && %d == 2 && (%s))) {", ra, b ? rb : 0,
                    !b ? "0" : xk == 'r' ? "sb[1] == 1 && sb[0] == sa[0]" : "sb[0] == 1 && sb[1] == sa[1]");
        pld_cg_emit(g, "    pc_shape_str(h1, sizeof h1, %d, sa); pc_shape_str(h2, sizeof h2, %d, sb);", ra, b ? rb : 0);
        pld_cg_emit(g, "    snprintf(m, sizeof m, \"%s: the vector %%s must be %s for the operand %%s\", h2, h1); "
                       "return pc_cold(), rt->fail(bk, %d, m); }", opname(e), xk == 'r' ? "[M, 1]" : "[1, N]", s);
    }
    pld_cg_emit(g, "  for (int d = 0; d < %d; d++) {", orank);
    pld_cg_emit(g, "    const int ja = d - %d, jb = d - %d;", orank - ra, orank - rb);
    pld_cg_emit(g, "    const int64_t x = ja >= 0 ? sa[ja] : 1, y = %s;", b ? "jb >= 0 ? sb[jb] : 1" : "1");
    pld_cg_emit(g, "    if (x != y && x != 1 && y != 1) { pc_shape_str(h1, sizeof h1, %d, sa); pc_shape_str(h2, sizeof h2, %d, sb);",
                ra, b ? rb : 0);
    pld_cg_emit(g, "      snprintf(m, sizeof m, \"%s: shapes %%s and %%s do not broadcast\", h1, h2); return pc_cold(), rt->fail(bk, %d, m); }",
                opname(e), s);
    pld_cg_emit(g, "    o%d[d] = x > y ? x : y; } }", o);
    return o;
}

static int gen_elementwise(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    int form;
    const int xo = xop(e, &form);
    const int un = xo >= 0 ? (form == 'u' ? xo : -1) : unop(e->op), bin = xo >= 0 ? xo : binop(e->op);
    const int sc = is_scalar_op(e), fill = e->op == PLD_OPID_TENSOR_EXPANDS;
    const int nary = un >= 0 ? 1 : 2;
    char av[32], bv[32], sf[48], si[48];
    int64_t sa[PC_MAX_RANK], sb[PC_MAX_RANK], os[PC_MAX_RANK];
    const pld_expr_t *A = pld_op_bound(e, 0), *B = pld_op_bound(e, 1);
    int ra = A ? tshape(A->type, sa) : -1, dyn = 0;
    if (ra < 0 && A && (ra = trank(A->type)) >= 0)
        dyn = 1; /* a dynamic dim: shapes at run time (emit_bcast_shape) */
    int rb = 0;
    if (ra < 0 || !A->type || A->type->dtype == PLD_DT_NONE)
        return -2;
    if (nary == 2 && !sc && !fill) {
        if (!B || (rb = tshape(B->type, sb)) < 0) {
            if (!B || (rb = trank(B->type)) < 0 || B->type->dtype == PLD_DT_NONE)
                return -2;
            dyn = 1;
        }
    }
    if (toperand(g, A, e, av))
        return -1;
    const pld_dtype_t dt = A->type->dtype;
    if (nary == 2 && (sc || fill)) {
        if (scalar_args(g, B, sf, si))
            return -1;
    } else if (nary == 2) {
        if (toperand(g, B, e, bv))
            return -1;
        if (B->type->dtype != dt) {
            pld_cg_emit(g, "return pc_cold(), rt->fail(bk, %d, \"%s: operand dtypes differ (%s and %s)\");", s, opname(e), pld_dtype_name(dt),
                        pld_dtype_name(B->type->dtype));
            return 0;
        }
    }
    int mode = -1; /* tensor.cmp: cmp_type, checked at run time as sim does */
    if (form == 'c' && xo >= 0) {
        int fl;
        pld_dtype_t md;
        const pld_expr_t *m = pld_op_bound(e, 2);
        if (!m || m->kind == PLD_EX_NONE) {
            mode = tmp(g);
            pld_cg_emit(g, "const int64_t t%d = 0;", mode);
        } else if ((mode = pld_cg_scalar(g, m, &fl, &md)) < 0) {
            return -1;
        } else if (fl) {
            return pld_cg_fail(g, m->span, "%s: cmp_type must be an integer", opname(e));
        }
        pld_cg_emit(g, "if (t%d < 0 || t%d > 5) { char m[160]; snprintf(m, sizeof m, \"%s: cmp_type %%lld is not one of EQ=0, "
                       "NE=1, LT=2, LE=3, GT=4, GE=5\", (long long)t%d); return pc_cold(), rt->fail(bk, %d, m); }", mode, mode,
                    opname(e), mode, s);
    }
    const int xk = expand_axis(e->op);
    const int two = nary == 2 && !sc && !fill;
    const char *ops[2] = {av, bv};
    const int orank = two && rb > ra ? rb : ra;
    int q;
    if (dyn) {
        const int o = emit_bcast_shape(g, e, s, xk, av, ra, two ? bv : NULL, rb);
        q = result_x(g, s, dt, orank, NULL, pc_name(o), ops, two ? 2 : 1);
        goto views;
    }
    char s1[96], s2[96];
    pc_shape_str(s1, sizeof s1, ra, sa);
    pc_shape_str(s2, sizeof s2, two ? rb : 0, sb);
    if (xk && !(ra == 2 && rb == 2 && (xk == 'r' ? sb[1] == 1 && sb[0] == sa[0] : sb[0] == 1 && sb[1] == sa[1]))) {
        pld_cg_emit(g, "return pc_cold(), rt->fail(bk, %d, \"%s: the vector %s must be %s for the operand %s\");", s, opname(e), s2,
                    xk == 'r' ? "[M, 1]" : "[1, N]", s1);
        return 0;
    }
    for (int d = 0; d < orank; d++) {
        const int ja = d - (orank - ra), jb = d - (orank - rb);
        const int64_t x = ja >= 0 ? sa[ja] : 1, y = two && jb >= 0 ? sb[jb] : 1;
        if (x != y && x != 1 && y != 1) {
            pld_cg_emit(g, "return pc_cold(), rt->fail(bk, %d, \"%s: shapes %s and %s do not broadcast\");", s, opname(e), s1, s2);
            return 0;
        }
        os[d] = x > y ? x : y;
    }
    q = result(g, s, dt, orank, os, ops, two ? 2 : 1);
views:
    pld_cg_emit(g, "{ pc_view vo, va; pc_view_tensor(&vo, &r%d); pc_view_tbcast(&va, &%s, %d, r%d.shape);", q, av, orank, q);
    char opx[48];
    if (mode >= 0)
        snprintf(opx, sizeof opx, "%d + (int)t%d", bin, mode);
    else
        snprintf(opx, sizeof opx, "%d", bin);
    if (xo >= 0 && un >= 0) {
        pld_cg_emit(g, "  PC_K(%d, ext, %d, &vo, &va, NULL, NULL);", s, un);
    } else if (xo >= 0 && sc) {
        pld_cg_emit(g, "  PC_K(%d, ext_s, %s, &vo, &va, %s, %s, NULL);", s, opx, sf, si);
    } else if (xo >= 0) {
        pld_cg_emit(g, "  pc_view vb; pc_view_tbcast(&vb, &%s, %d, r%d.shape);", bv, orank, q);
        pld_cg_emit(g, "  PC_K(%d, ext, %s, &vo, &va, &vb, NULL);", s, opx);
    } else if (un >= 0) {
        pld_cg_emit(g, "  PC_K(%d, unary, %d, &vo, &va);", s, un);
    } else if (fill) {
        if (is_float_dt(dt))
            pld_cg_emit(g, "  PC_K(%d, fill_f, &vo, %s);", s, sf);
        else
            pld_cg_emit(g, "  PC_K(%d, fill_i, &vo, %s);", s, si);
    } else if (sc) {
        pld_cg_emit(g, "  PC_K(%d, binary_s, %d, &vo, &va, %s, %s);", s, bin, sf, si);
    } else {
        pld_cg_emit(g, "  pc_view vb; pc_view_tbcast(&vb, &%s, %d, r%d.shape);", bv, orank, q);
        if (bin == 100)
            pld_cg_emit(g, "  PC_K(%d, copy, &vo, &vb);", s);
        else
            pld_cg_emit(g, "  PC_K(%d, binary, %d, &vo, &va, &vb);", s, bin);
        if (e->op == PLD_OPID_TENSOR_ROW_EXPAND_EXPDIF || e->op == PLD_OPID_TENSOR_COL_EXPAND_EXPDIF)
            pld_cg_emit(g, "  PC_K(%d, unary, %d, &vo, &vo);", s, (int)PLD_K_EXP);
    }
    pld_cg_emit(g, "}");
    /* the result's valid shape (PyPTO's rule): none kept by cmp, xor / xors, the expands */
    const int none = fill || xk || e->op == PLD_OPID_TENSOR_CMP || e->op == PLD_OPID_TENSOR_XOR || e->op == PLD_OPID_TENSOR_XORS;
    char ap[40] = "NULL", bp[40] = "NULL";
    if (!none)
        snprintf(ap, sizeof ap, "&%s", av);
    if (two)
        snprintf(bp, sizeof bp, "&%s", bv);
    pld_cg_emit(g, "pc_tensor_elem_valid(&r%d, %s, %s);", q, ap, bp);
    pld_cg_emit(g, "%s = r%d;", dst, q);
    return 0;
}

/* ---------------------------------------------------------------- reductions */

static int redop(int op, int *row)
{
    *row = 1;
    switch (op) {
    case PLD_OPID_TENSOR_ROW_SUM: return PLD_K_RSUM;
    case PLD_OPID_TENSOR_ROW_MAX: return PLD_K_RMAX;
    case PLD_OPID_TENSOR_ROW_MIN: return PLD_K_RMIN;
    case PLD_OPID_TENSOR_ROW_PROD: return PLD_K_RPROD;
    case PLD_OPID_TENSOR_ROW_ARGMAX: return PLD_K_RARGMAX;
    case PLD_OPID_TENSOR_ROW_ARGMIN: return PLD_K_RARGMIN;
    default: break;
    }
    *row = 0;
    switch (op) {
    case PLD_OPID_TENSOR_COL_SUM: return PLD_K_RSUM;
    case PLD_OPID_TENSOR_COL_MAX: return PLD_K_RMAX;
    case PLD_OPID_TENSOR_COL_MIN: return PLD_K_RMIN;
    case PLD_OPID_TENSOR_COL_PROD: return PLD_K_RPROD;
    case PLD_OPID_TENSOR_COL_ARGMAX: return PLD_K_RARGMAX;
    case PLD_OPID_TENSOR_COL_ARGMIN: return PLD_K_RARGMIN;
    default: return -1;
    }
}

static int gen_reduce(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    int row;
    const int op = redop(e->op, &row);
    int64_t sa[PC_MAX_RANK];
    const pld_expr_t *A = pld_op_bound(e, 0);
    int r = A ? tshape(A->type, sa) : -1, dyn = 0;
    if (r < 0 && A && (r = trank(A->type)) >= 0 && A->type->dtype != PLD_DT_NONE)
        dyn = 1; /* a dynamic dim: the result's shape at run time */
    if (r < 0)
        return -2;
    char av[32];
    if (toperand(g, A, e, av))
        return -1;
    const int ax = row ? r - 1 : r - 2;
    if (ax < 0) {
        pld_cg_emit(g, "return pc_cold(), rt->fail(bk, %d, \"%s needs a tensor of rank >= %d\");", s, opname(e), row ? 1 : 2);
        return 0;
    }
    const pld_dtype_t odt = op == PLD_K_RARGMAX || op == PLD_K_RARGMIN ? PLD_DT_INT32 : A->type->dtype;
    const char *ops[1] = {av};
    int q;
    if (dyn) {
        const int o = tmp(g);
        pld_cg_emit(g, "int64_t o%d[%d]; for (int d = 0; d < %d; d++) o%d[d] = d == %d ? 1 : %s.shape[d];", o, r, r, o, ax, av);
        q = result_x(g, s, odt, r, NULL, pc_name(o), ops, 1);
        pld_cg_emit(g, "memset(r%d.data, 0, (size_t)pc_numel(o%d, %d) * %d);", q, o, r, esize(odt));
    } else {
        sa[ax] = 1;
        q = result(g, s, odt, r, sa, ops, 1);
        /* a new tensor: zero outside the valid region */
        int64_t n = 1;
        for (int i = 0; i < r; i++)
            n *= sa[i];
        pld_cg_emit(g, "memset(r%d.data, 0, %lld);", q, (long long)(n * esize(odt)));
    }
    pld_cg_emit(g, "for (int d = 0; d < %d; d++) r%d.valid[d] = d == %d ? 1 : %s.valid[d];", r, q, ax, av);
    pld_cg_emit(g, "{ pc_view vo, vi; pc_view_tensor(&vi, &%s); pc_view_tensor(&vo, &r%d);", av, q);
    pld_cg_emit(g, "  for (int d = 0; d < %d; d++) { vi.shape[d] = %s.valid[d]; vo.shape[d] = r%d.valid[d]; }", r, av, q);
    pld_cg_emit(g, "  PC_K(%d, reduce, %d, %d, &vo, &vi); }", s, op, row ? (int)PLD_K_RED_ROW : 0);
    pld_cg_emit(g, "%s = r%d;", dst, q);
    return 0;
}

/* ---------------------------------------------------------------- cast, create */

/* pld_round_mode (pld_exec_compute.c) of the mode argument m */
static int round_mode(const pld_expr_t *m)
{
    static const char *const names[] = {"none", "rint", "round", "floor", "ceil", "trunc", "odd"};
    if (m && m->kind == PLD_EX_STR)
        for (int i = 0; i < 7; i++)
            if (strcmp(m->u.str.s, names[i]) == 0)
                return i;
    if (m && m->kind == PLD_EX_INT && m->u.ival >= 0 && m->u.ival <= 6)
        return (int)m->u.ival;
    return PLD_R_ROUND;
}

static int gen_cast(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    int64_t sa[PC_MAX_RANK];
    const pld_expr_t *A = pld_op_bound(e, 0);
    int r = A ? tshape(A->type, sa) : -1, dyn = 0;
    if (r < 0 && A && (r = trank(A->type)) >= 0)
        dyn = 1; /* a dynamic dim: the operand's shape at run time */
    if (r < 0 || !e->type || e->type->dtype == PLD_DT_NONE)
        return -2;
    char av[32];
    if (toperand(g, A, e, av))
        return -1;
    const char *ops[1] = {av};
    char shv[48];
    snprintf(shv, sizeof shv, "%s.shape", av);
    const int q = result_x(g, s, e->type->dtype, r, dyn ? NULL : sa, shv, ops, 1);
    pld_cg_emit(g, "{ pc_view vo, va; pc_view_tensor(&vo, &r%d); pc_view_tensor(&va, &%s); PC_K(%d, cast, &vo, &va, %d); }", q,
                av, s, round_mode(pld_op_bound(e, 2)));
    pld_cg_emit(g, "pc_tensor_elem_valid(&r%d, &%s, NULL);", q, av);
    pld_cg_emit(g, "%s = r%d;", dst, q);
    return 0;
}

/* the shape argument i of e as the C array tN (r entries) with pld_op_shape's
 * negative-dim check; N, or -1 */
static int shape_arg(cg_t *g, const pld_expr_t *e, int i, int r, int s)
{
    int ns;
    const pld_expr_t *sh = pld_op_bound(e, i);
    if (!sh)
        return pld_cg_fail(g, e->span, "internal: %s: no shape argument", opname(e));
    const int shl = pld_cg_ilist(g, sh, &ns);
    if (shl < 0)
        return -1;
    if (ns != r)
        return pld_cg_fail(g, e->span, "internal: %s: a shape of %d entries for a result of rank %d", opname(e), ns, r);
    pld_cg_emit(g, "for (int d = 0; d < %d; d++) if (t%d[d] < 0) { char m[200]; snprintf(m, sizeof m, \"%s: shape "
                   "dimension %%d is negative (%%lld)\", d, (long long)t%d[d]); return pc_cold(), rt->fail(bk, %d, m); }",
                r, shl, opname(e), shl, s);
    return shl;
}

/* create (value: arg 4 as a float), full (arg 2 as its kind), create_l1 */
static int gen_create(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    int64_t os[PC_MAX_RANK];
    int r = tshape(e->type, os), dyn = 0, shl = -1;
    if (r < 0 && (r = trank(e->type)) >= 0)
        dyn = 1; /* a dynamic dim: the shape argument's values at run time (pld_op_shape's checks) */
    if (r < 0 || e->type->dtype == PLD_DT_NONE)
        return -2;
    if (dyn && (shl = shape_arg(g, e, 0, r, s)) < 0)
        return -1;
    const pld_dtype_t dt = e->type->dtype;
    const int full = e->op == PLD_OPID_TENSOR_FULL;
    if (full && !pld_kern_dtype_ok(dt)) {
        pld_cg_emit(g, "return pc_cold(), rt->fail(bk, %d, \"%s: pldrun cannot fill dtype %s with a value (no 4-bit or FP8 arithmetic "
                       "yet)\");", s, opname(e), pld_dtype_name(dt));
        return 0;
    }
    const pld_expr_t *v = e->op == PLD_OPID_TENSOR_CREATE ? pld_op_bound(e, 4) : full ? pld_op_bound(e, 2) : NULL;
    if (v && v->kind == PLD_EX_NONE)
        v = NULL;
    int fl = 0, t = -1;
    pld_dtype_t vd;
    if (v && (t = pld_cg_scalar(g, v, &fl, &vd)) < 0)
        return -1;
    char shv[24];
    snprintf(shv, sizeof shv, "t%d", shl);
    if (dyn) /* pld_value_bytes's limit, before the value is evaluated (as sim does) */
        pld_cg_emit(g, "if (!pc_bytes_ok(%d, t%d, %d)) { char sh[96], m[300]; pc_shape_str(sh, sizeof sh, %d, t%d); snprintf(m, "
                       "sizeof m, \"%s: a %s tensor of shape %%s is larger than pldrun allows (1 TiB)\", sh); "
                       "return pc_cold(), rt->fail(bk, %d, m); }", r, shl, pld_dtype_bytes(dt), r, shl, opname(e), pld_dtype_name(dt), s);
    const int q = result_x(g, s, dt, r, dyn ? NULL : os, shv, NULL, 0);
    int64_t n = 1;
    for (int i = 0; i < r; i++)
        n *= os[i];
    if (dyn)
        pld_cg_emit(g, "memset(r%d.data, 0, (size_t)pc_numel(t%d, %d) * %d);", q, shl, r, esize(dt));
    else
        pld_cg_emit(g, "memset(r%d.data, 0, %lld);", q, (long long)(n * esize(dt)));
    if (v) {
        pld_cg_emit(g, "{ pc_view vo; pc_view_tensor(&vo, &r%d);", q);
        if (e->op == PLD_OPID_TENSOR_CREATE || fl)
            pld_cg_emit(g, "  PC_K(%d, fill_f, &vo, (double)t%d); }", s, t);
        else
            pld_cg_emit(g, "  PC_K(%d, fill_i, &vo, (int64_t)t%d); }", s, t);
    }
    pld_cg_emit(g, "%s = r%d;", dst, q);
    return 0;
}

/* ---------------------------------------------------------------- views */

static int gen_slice(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    const pld_expr_t *A = pld_op_bound(e, 0);
    if (!A || !A->type || A->type->dtype == PLD_DT_NONE)
        return -2;
    char av[32];
    if (toperand(g, A, e, av))
        return -1;
    int ns, no, nv, nd, cf = 0, c = -1;
    pld_dtype_t cd;
    const int shp = pld_cg_ilist(g, pld_op_bound(e, 1), &ns);
    if (shp < 0)
        return -1;
    const int off = pld_cg_ilist(g, pld_op_bound(e, 2), &no);
    if (off < 0)
        return -1;
    const int val = pld_cg_ilist(g, pld_op_bound(e, 3), &nv);
    const int drop = pld_cg_ilist(g, pld_op_bound(e, 4), &nd);
    const pld_expr_t *cl = pld_op_bound(e, 6);
    if (cl && cl->kind != PLD_EX_NONE && (c = pld_cg_scalar(g, cl, &cf, &cd)) < 0)
        return -1;
    if (g->failed)
        return -1;
    char vb[32] = "NULL", db[32] = "NULL", cb[48] = "0";
    if (val >= 0)
        snprintf(vb, sizeof vb, "t%d", val);
    if (drop >= 0)
        snprintf(db, sizeof db, "t%d", drop);
    if (c >= 0)
        snprintf(cb, sizeof cb, "%st%d != 0", cf ? "(int64_t)" : "", c);
    const int q = tmp(g);
    pld_cg_emit(g, "pc_tensor r%d;", q);
    pld_cg_emit(g, "{ char m[240]; if (pc_tensor_slice(\"%s\", &r%d, &%s, t%d, %d, t%d, %d, %s, %d, %s, %d, %s, %d, m, sizeof m)) "
                   "return pc_cold(), rt->fail(bk, %d, m); }", opname(e), q, av, shp, ns, off, no, vb, val >= 0 ? nv : -1, db,
                drop >= 0 ? nd : 0, cb, esize(A->type->dtype), s);
    pld_cg_emit(g, "%s = r%d;", dst, q);
    return 0;
}

/* the run-time check that tensors a (rank ra, dtype da) and b have one shape
 * and dtype (shapes of a dynamic dim), with `what` the message's format
 * ("%s: ... (%s %s and %s %s)": op, shape a, dtype a, shape b, dtype b); for
 * expand (the expand_clone rule) a dim of a may be 1 instead */
static void emit_same_shape(cg_t *g, int s, const char *a, int ra, pld_dtype_t da, const char *b, int rb, pld_dtype_t db,
                            int expand, const char *what)
{
    pld_cg_emit(g, "{ int ok = %d; for (int d = 0; ok && d < %d; d++) ok = %s.shape[d] == %s.shape[d]%s%s%s;", ra == rb && da == db,
                ra, a, b, expand ? " || " : "", expand ? a : "", expand ? ".shape[d] == 1" : "");
    pld_cg_emit(g, "  if (!ok) { char h1[96], h2[96], m[320]; pc_shape_str(h1, sizeof h1, %d, %s.shape); pc_shape_str(h2, sizeof h2, "
                   "%d, %s.shape);", ra, a, rb, b);
    pld_cg_emit(g, "    snprintf(m, sizeof m, \"%s\", h1, h2); return pc_cold(), rt->fail(bk, %d, m); } }", what, s);
}

/* gen_part of sources with a dynamic dim: the shape check and the result's
 * shape (lhs's) at run time */
static int gen_part_dyn(cg_t *g, const pld_expr_t *e, const char *dst, int s, int op)
{
    const pld_expr_t *A = pld_op_bound(e, 0), *B = pld_op_bound(e, 1);
    const int ra = trank(A->type), rb = trank(B->type);
    char av[32], bv[32], what[200];
    if (toperand(g, A, e, av) || toperand(g, B, e, bv))
        return -1;
    snprintf(what, sizeof what, "%s: the sources must have one shape and dtype (%%s %s and %%s %s)", opname(e),
             pld_dtype_name(A->type->dtype), pld_dtype_name(B->type->dtype));
    emit_same_shape(g, s, av, ra, A->type->dtype, bv, rb, B->type->dtype, 0, what);
    char shv[48];
    snprintf(shv, sizeof shv, "%s.shape", av);
    const char *ops[2] = {av, bv};
    const int q = result_x(g, s, A->type->dtype, ra, NULL, shv, ops, 2);
    pld_cg_emit(g, "{ pc_view vo, va, vb; pc_view_tensor(&vo, &r%d); pc_view_tensor(&va, &%s); pc_view_tensor(&vb, &%s);", q,
                av, bv);
    pld_cg_emit(g, "  PC_K(%d, part, %d, &vo, &va, %s.valid, &vb, %s.valid); }", s, op, av, bv);
    pld_cg_emit(g, "%s = r%d;", dst, q);
    return 0;
}

/* part_add / part_mul / part_max / part_min: pld_k_part over the sources'
 * valid regions, a result of lhs's shape (pld_exec_elem.c exec_part) */
static int gen_part(cg_t *g, const pld_expr_t *e, const char *dst, int s, int op)
{
    int64_t sa[PC_MAX_RANK], sb[PC_MAX_RANK];
    const pld_expr_t *A = pld_op_bound(e, 0), *B = pld_op_bound(e, 1);
    const int ra = A ? tshape(A->type, sa) : -1, rb = B ? tshape(B->type, sb) : -1;
    if ((ra < 0 || rb < 0) && A && B && trank(A->type) >= 0 && trank(B->type) >= 0)
        return gen_part_dyn(g, e, dst, s, op);
    if (ra < 0 || rb < 0)
        return -2;
    char av[32], bv[32];
    if (toperand(g, A, e, av) || toperand(g, B, e, bv))
        return -1;
    int same = ra == rb && A->type->dtype == B->type->dtype;
    for (int d = 0; same && d < ra; d++)
        same = sa[d] == sb[d];
    if (!same) {
        char s1[96], s2[96];
        pc_shape_str(s1, sizeof s1, ra, sa);
        pc_shape_str(s2, sizeof s2, rb, sb);
        pld_cg_emit(g, "return pc_cold(), rt->fail(bk, %d, \"%s: the sources must have one shape and dtype (%s %s and %s %s)\");", s,
                    opname(e), s1, pld_dtype_name(A->type->dtype), s2, pld_dtype_name(B->type->dtype));
        return 0;
    }
    const char *ops[2] = {av, bv};
    const int q = result(g, s, A->type->dtype, ra, sa, ops, 2);
    pld_cg_emit(g, "{ pc_view vo, va, vb; pc_view_tensor(&vo, &r%d); pc_view_tensor(&va, &%s); pc_view_tensor(&vb, &%s);", q,
                av, bv);
    pld_cg_emit(g, "  PC_K(%d, part, %d, &vo, &va, %s.valid, &vb, %s.valid); }", s, op, av, bv);
    pld_cg_emit(g, "%s = r%d;", dst, q);
    return 0;
}

/* tensor.ci(start, shape, dtype, descending) and tensor.random(key0, key1,
 * counter0..3, shape, dtype, rounds): new tensors of static shape (the checker,
 * pld_check_elem.c, admits constant shapes only: another is an internal error) */
static int gen_gen(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    int64_t os[PC_MAX_RANK];
    const int r = tshape(e->type, os), rnd = e->op == PLD_OPID_TENSOR_RANDOM;
    if (r < 0 || e->type->dtype == PLD_DT_NONE) /* pld_check_elem.c: "shape element %d must be a positive compile-time constant" */
        return pld_cg_fail(g, e->span, "internal: %s: a result shape that is not constant (the checker admits constant "
                                       "shapes only)", opname(e));
    int v[8], nv = rnd ? 6 : 1;
    for (int i = 0; i < nv; i++) {
        int fl;
        pld_dtype_t d;
        if ((v[i] = pld_cg_scalar(g, pld_op_bound(e, i), &fl, &d)) < 0)
            return -1;
        if (fl)
            return pld_cg_fail(g, pld_op_bound(e, i)->span, "%s: an integer is needed", opname(e));
    }
    const pld_expr_t *fx = pld_op_bound(e, rnd ? 8 : 3);
    int flag = -1;
    if (fx && fx->kind != PLD_EX_NONE) {
        int fl;
        pld_dtype_t d;
        if ((flag = pld_cg_scalar(g, fx, &fl, &d)) < 0)
            return -1;
    }
    if (rnd && r != 2) {
        pld_cg_emit(g, "return pc_cold(), rt->fail(bk, %d, \"%s needs a 2-D shape and a valid_shape within it\");", s, opname(e));
        return 0;
    }
    const int q = result(g, s, e->type->dtype, r, os, NULL, 0);
    char fb[48];
    if (flag >= 0)
        snprintf(fb, sizeof fb, "(int64_t)t%d", flag);
    else
        snprintf(fb, sizeof fb, "%d", rnd ? 10 : 0);
    pld_cg_emit(g, "{ pc_view vo; pc_view_tensor(&vo, &r%d);", q);
    if (rnd) {
        pld_cg_emit(g, "  const uint32_t key[2] = {(uint32_t)t%d, (uint32_t)t%d};", v[0], v[1]);
        pld_cg_emit(g, "  const uint32_t ctr[4] = {(uint32_t)t%d, (uint32_t)t%d, (uint32_t)t%d, (uint32_t)t%d};", v[2], v[3], v[4],
                    v[5]);
        pld_cg_emit(g, "  PC_K(%d, random, &vo, key, ctr, (int)%s, %lld, %lld); }", s, fb, (long long)os[0], (long long)os[1]);
    } else {
        pld_cg_emit(g, "  PC_K(%d, ci, &vo, (int64_t)t%d, (int)(%s)); }", s, v[0], fb);
    }
    pld_cg_emit(g, "%s = r%d;", dst, q);
    return 0;
}

/* expand_clone(src, target): src broadcast into target in place (the result is
 * target, as pld_exec_compute.c's pld_exec_expand_clone) */
static int gen_expand_clone(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    int64_t sa[PC_MAX_RANK], sb[PC_MAX_RANK];
    const pld_expr_t *A = pld_op_bound(e, 0), *B = pld_op_bound(e, 1);
    const int ra = A ? tshape(A->type, sa) : -1, rb = B ? tshape(B->type, sb) : -1;
    if ((ra < 0 || rb < 0) && A && B && trank(A->type) >= 0 && trank(B->type) >= 0) { /* a dynamic dim: at run time */
        const int xa = trank(A->type), xb = trank(B->type);
        char av[32], bv[32], what[200];
        if (toperand(g, A, e, av) || toperand(g, B, e, bv))
            return -1;
        snprintf(what, sizeof what, "%s: cannot expand %s %%s to %s %%s", opname(e), pld_dtype_name(A->type->dtype),
                 pld_dtype_name(B->type->dtype));
        emit_same_shape(g, s, av, xa, A->type->dtype, bv, xb, B->type->dtype, 1, what);
        pld_cg_emit(g, "{ pc_view vo, vs; pc_view_tensor(&vo, &%s); pc_view_tbcast(&vs, &%s, %d, %s.shape);", bv, av, xb, bv);
        pld_cg_emit(g, "  PC_K(%d, copy, &vo, &vs); }", s);
        if (strcmp(dst, bv) != 0)
            pld_cg_emit(g, "%s = %s;", dst, bv);
        return 0;
    }
    if (ra < 0 || rb < 0)
        return -2;
    char av[32], bv[32];
    if (toperand(g, A, e, av) || toperand(g, B, e, bv))
        return -1;
    int ok = ra == rb && A->type->dtype == B->type->dtype;
    for (int d = 0; ok && d < ra; d++)
        ok = sa[d] == sb[d] || sa[d] == 1;
    if (!ok) {
        char s1[96], s2[96];
        pc_shape_str(s1, sizeof s1, ra, sa);
        pc_shape_str(s2, sizeof s2, rb, sb);
        pld_cg_emit(g, "return pc_cold(), rt->fail(bk, %d, \"%s: cannot expand %s %s to %s %s\");", s, opname(e),
                    pld_dtype_name(A->type->dtype), s1, pld_dtype_name(B->type->dtype), s2);
        return 0;
    }
    pld_cg_emit(g, "{ pc_view vo, vs; pc_view_tensor(&vo, &%s); pc_view_tbcast(&vs, &%s, %d, %s.shape);", bv, av, rb, bv);
    pld_cg_emit(g, "  PC_K(%d, copy, &vo, &vs); }", s);
    if (strcmp(dst, bv) != 0)
        pld_cg_emit(g, "%s = %s;", dst, bv);
    return 0;
}

/* a literal bool / int argument: 0 / 1, dflt when absent, -1 otherwise */
static int lit_flag(const pld_expr_t *x, int dflt)
{
    if (!x || x->kind == PLD_EX_NONE)
        return dflt;
    if (x->kind == PLD_EX_BOOL)
        return x->u.bval != 0;
    if (x->kind == PLD_EX_INT)
        return x->u.ival != 0;
    return -1;
}

/* view v (rank n + 2) of tensor operand `nm` of static shape xs (rank xr):
 * its batch dims right-aligned with os, broadcast ones stride 0; the last two
 * swapped when t (the interpreter's mm_operand) */
static void emit_mm_view(cg_t *g, const char *v, const char *nm, const int64_t *xs, int xr, int n, const int64_t *os,
                         int t)
{
    const int lead = n - (xr - 2);
    pld_cg_emit(g, "%s.data = %s.data; %s.dt = %s.dt; %s.rank = %d;", v, nm, v, nm, v, n + 2);
    for (int d = 0; d < n + 2; d++) {
        const int k = d - lead;
        const int bc = d < n && (k < 0 || xs[k] == 1);
        const int dd = t && d >= n ? (d == n ? n + 1 : n) : d; /* where dim d of the operand lands */
        if (bc)
            pld_cg_emit(g, "%s.shape[%d] = %lld; %s.strides[%d] = 0;", v, dd, (long long)os[d], v, dd);
        else
            pld_cg_emit(g, "%s.shape[%d] = %lld; %s.strides[%d] = %s.stride[%d];", v, dd, (long long)xs[k], v, dd, nm, k);
    }
}

/* gen_matmul of operands with a dynamic dim (ranks xr, yr): the batch
 * broadcast, the operand views (pc_mm_operand) and the result shape at run
 * time, with pld_exec_matmul's checks and messages */
static int gen_matmul_dyn(cg_t *g, const pld_expr_t *e, const char *dst, int s, int xr, int yr, int ta, int tb)
{
    const pld_expr_t *A = pld_op_bound(e, 0), *B = pld_op_bound(e, 1);
    char av[32], bv[32];
    if (toperand(g, A, e, av) || toperand(g, B, e, bv))
        return -1;
    const int na = xr - 2, nb = yr - 2, n = na > nb ? na : nb;
    if (na < 0 || nb < 0 || n + 2 > PC_MAX_RANK) {
        pld_cg_emit(g, "return pc_cold(), rt->fail(bk, %d, \"%s: incompatible shapes\");", s, opname(e));
        return 0;
    }
    const int o = tmp(g);
    pld_cg_emit(g, "int64_t o%d[%d]; pc_view ma%d, mb%d;", o, n + 2, o, o);
    pld_cg_emit(g, "for (int i = 0; i < %d; i++) {", n);
    pld_cg_emit(g, "  const int64_t p = i < %d ? 1 : %s.shape[i - %d], q = i < %d ? 1 : %s.shape[i - %d];", n - na, av, n - na,
                n - nb, bv, n - nb);
    pld_cg_emit(g, "  if (p != q && p != 1 && q != 1) { char m[200]; snprintf(m, sizeof m, \"%s: batch dims %%lld and %%lld do "
                   "not broadcast\", (long long)p, (long long)q); return pc_cold(), rt->fail(bk, %d, m); }", opname(e), s);
    pld_cg_emit(g, "  o%d[i] = p == 1 ? q : p; }", o);
    pld_cg_emit(g, "pc_mm_operand(&ma%d, &%s, %d, %d, o%d); pc_mm_operand(&mb%d, &%s, %d, %d, o%d);", o, av, ta, n, o, o, bv, tb, n, o);
    pld_cg_emit(g, "if (ma%d.shape[%d] != mb%d.shape[%d]) return pc_cold(), rt->fail(bk, %d, \"%s: incompatible shapes\");", o, n + 1, o, n,
                s, opname(e));
    pld_cg_emit(g, "o%d[%d] = ma%d.shape[%d]; o%d[%d] = mb%d.shape[%d];", o, n, o, n, o, n + 1, o, n + 1);
    const pld_dtype_t dt = e->type->dtype != PLD_DT_NONE ? e->type->dtype : A->type->dtype;
    const char *ops[2] = {av, bv};
    const int q = result_x(g, s, dt, n + 2, NULL, pc_name(o), ops, 2);
    pld_cg_emit(g, "{ pc_view vo; pc_view_tensor(&vo, &r%d); PC_K(%d, matmul, &vo, &ma%d, &mb%d, 0); }", q, s, o, o);
    pld_cg_emit(g, "%s = r%d;", dst, q);
    return 0;
}

/* pl.tensor.matmul(lhs, rhs, out_dtype, a_trans, b_trans): batch dims
 * broadcast, literal transposes (pld_exec_matmul's tensor path) */
static int gen_matmul(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    int64_t xs[PC_MAX_RANK], ys[PC_MAX_RANK], os[PC_MAX_RANK + 3];
    const pld_expr_t *A = pld_op_bound(e, 0), *B = pld_op_bound(e, 1);
    const int xr = A ? tshape(A->type, xs) : -1, yr = B ? tshape(B->type, ys) : -1;
    const int ta = lit_flag(pld_op_bound(e, 3), 0), tb = lit_flag(pld_op_bound(e, 4), 0);
    if (ta < 0 || tb < 0) /* pld_check_infer.c: "a_trans must be True or False" (literal booleans only) */
        return pld_cg_fail(g, e->span, "internal: %s: a_trans / b_trans not literal booleans (the checker admits only those)",
                           opname(e));
    if ((xr < 0 || yr < 0) && A && B && trank(A->type) >= 0 && trank(B->type) >= 0 && ta >= 0 && tb >= 0 && e->type &&
        A->type->dtype != PLD_DT_NONE)
        return gen_matmul_dyn(g, e, dst, s, trank(A->type), trank(B->type), ta, tb);
    if (xr < 0 || yr < 0 || ta < 0 || tb < 0 || !e->type)
        return -2;
    char av[32], bv[32];
    if (toperand(g, A, e, av) || toperand(g, B, e, bv))
        return -1;
    const int na = xr - 2, nb = yr - 2, n = na > nb ? na : nb;
    if (na < 0 || nb < 0 || n + 2 > PC_MAX_RANK) {
        pld_cg_emit(g, "return pc_cold(), rt->fail(bk, %d, \"%s: incompatible shapes\");", s, opname(e));
        return 0;
    }
    if (pld_cg_batch_dims(g, s, e, xs, na, ys, nb, os))
        return 0;
    const int64_t am = ta ? xs[xr - 1] : xs[xr - 2], ak = ta ? xs[xr - 2] : xs[xr - 1];
    const int64_t bk_ = tb ? ys[yr - 1] : ys[yr - 2], bn = tb ? ys[yr - 2] : ys[yr - 1];
    if (ak != bk_) {
        pld_cg_emit(g, "return pc_cold(), rt->fail(bk, %d, \"%s: incompatible shapes\");", s, opname(e));
        return 0;
    }
    os[n] = am, os[n + 1] = bn;
    const pld_dtype_t dt = e->type->dtype != PLD_DT_NONE ? e->type->dtype : A->type->dtype;
    const char *ops[2] = {av, bv};
    const int q = result(g, s, dt, n + 2, os, ops, 2);
    pld_cg_emit(g, "{ pc_view vo, va, vb; pc_view_tensor(&vo, &r%d);", q);
    emit_mm_view(g, "va", av, xs, xr, n, os, ta);
    emit_mm_view(g, "vb", bv, ys, yr, n, os, tb);
    pld_cg_emit(g, "  PC_K(%d, matmul, &vo, &va, &vb, 0); }", s);
    pld_cg_emit(g, "%s = r%d;", dst, q);
    return 0;
}

/* pl.tensor.matmul_acc(acc, lhs, rhs, a_trans, b_trans, init_cond): a new
 * tensor (acc's dtype, shape and valid shape) acc + op(lhs) @ op(rhs), or
 * op(lhs) @ op(rhs) where init_cond holds (pld_exec_tensor_matmul_acc) */
static int gen_matmul_acc(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    int64_t cs[PC_MAX_RANK], xs[PC_MAX_RANK], ys[PC_MAX_RANK];
    const pld_expr_t *C = pld_op_bound(e, 0), *A = pld_op_bound(e, 1), *B = pld_op_bound(e, 2);
    int cr = C ? tshape(C->type, cs) : -1, dyn = 0;
    const int xr = A ? tshape(A->type, xs) : -1, yr = B ? tshape(B->type, ys) : -1;
    if ((cr < 0 || xr < 0 || yr < 0) && C && A && B && trank(C->type) >= 0 && trank(A->type) >= 0 && trank(B->type) >= 0 &&
        C->type->dtype != PLD_DT_NONE)
        cr = trank(C->type), dyn = 1; /* a dynamic dim: the result has acc's shape at run time */
    else if (cr < 0 || xr < 0 || yr < 0)
        return -2;
    char cv[32], av[32], bv[32];
    if (toperand(g, C, e, cv) || toperand(g, A, e, av) || toperand(g, B, e, bv))
        return -1;
    int fl[3];
    for (int i = 0; i < 3; i++) {
        const pld_expr_t *x = pld_op_bound(e, 3 + i);
        if (!x || x->kind == PLD_EX_NONE) {
            fl[i] = tmp(g);
            pld_cg_emit(g, "const int64_t t%d = 0;", fl[i]);
            continue;
        }
        int isf;
        pld_dtype_t d;
        if ((fl[i] = pld_cg_scalar(g, x, &isf, &d)) < 0)
            return -1;
    }
    if (cr != 2) {
        pld_cg_emit(g, "return pc_cold(), rt->fail(bk, %d, \"%s needs 2-D operands\");", s, opname(e));
        return 0;
    }
    const char *ops[3] = {cv, av, bv};
    char shv[48];
    snprintf(shv, sizeof shv, "%s.shape", cv);
    const int q = result_x(g, s, C->type->dtype, 2, dyn ? NULL : cs, shv, ops, 3);
    pld_cg_emit(g, "memcpy(r%d.valid, %s.valid, sizeof r%d.valid);", q, cv, q);
    pld_cg_emit(g, "{ pc_view vo, vc, va, vb; pc_view_tensor(&vo, &r%d); pc_view_tensor(&vc, &%s); pc_view_tensor(&va, &%s); "
                   "pc_view_tensor(&vb, &%s);", q, cv, av, bv);
    pld_cg_emit(g, "  if (t%d && va.rank == 2) { int64_t x = va.shape[0], y = va.strides[0]; va.shape[0] = va.shape[1], "
                   "va.strides[0] = va.strides[1]; va.shape[1] = x, va.strides[1] = y; }", fl[0]);
    pld_cg_emit(g, "  if (t%d && vb.rank == 2) { int64_t x = vb.shape[0], y = vb.strides[0]; vb.shape[0] = vb.shape[1], "
                   "vb.strides[0] = vb.strides[1]; vb.shape[1] = x, vb.strides[1] = y; }", fl[1]);
    pld_cg_emit(g, "  if (!t%d) PC_K(%d, copy, &vo, &vc);", fl[2], s);
    pld_cg_emit(g, "  PC_K(%d, matmul, &vo, &va, &vb, !t%d); }", s, fl[2]);
    pld_cg_emit(g, "%s = r%d;", dst, q);
    return 0;
}

/* pl.tensor.assemble(target, source, offset, atomic): in place into target
 * (the result is target); a tensor source through rt->assemble, a tile one
 * through rt->store (the checks sim makes) */
static int gen_assemble(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    const pld_expr_t *A = pld_op_bound(e, 0), *B = pld_op_bound(e, 1), *at = pld_op_bound(e, 3);
    if (!A || !B || !B->type || (B->type->kind != PLD_TY_TILE && B->type->kind != PLD_TY_TENSOR))
        return -2;
    const int tile = B->type->kind == PLD_TY_TILE;
    char av[32], bv[32], ab[48] = "0";
    if (toperand(g, A, e, av))
        return -1;
    if (tile ? pld_cg_tile_operand(g, B, e, bv) : toperand(g, B, e, bv))
        return -1;
    int no;
    const int off = pld_cg_ilist(g, pld_op_bound(e, 2), &no);
    if (off < 0)
        return -1;
    if (at && at->kind == PLD_EX_ATTR && at->u.attr.obj->kind == PLD_EX_ATTR &&
        strcmp(at->u.attr.obj->u.attr.attr, "AtomicType") == 0) {
        snprintf(ab, sizeof ab, "%d", strcmp(at->u.attr.attr, "Add") == 0);
    } else if (at && at->kind != PLD_EX_NONE) {
        int fl;
        pld_dtype_t d;
        const int v = pld_cg_scalar(g, at, &fl, &d);
        if (v < 0)
            return -1;
        snprintf(ab, sizeof ab, "%st%d != 0", fl ? "(int64_t)" : "", v);
    }
    if (tile)
        pld_cg_emit(g, "if (rt->store(bk, %d, &%s, t%d, %d, &%s, NULL, %s)) return pc_cold(), 1;", s, bv, off, no, av, ab);
    else
        pld_cg_emit(g, "if (rt->assemble(bk, %d, &%s, &%s, t%d, %d, %s)) return pc_cold(), 1;", s, av, bv, off, no, ab);
    if (strcmp(dst, av) != 0)
        pld_cg_emit(g, "%s = %s;", dst, av);
    return 0;
}

/* pl.tensor.view(t, shape, valid_shape) and pl.tensor.reshape(t, shape):
 * views of a packed tensor (pc_tensor_view_of / pc_tensor_reshape) */
static int gen_view(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    const int view = e->op == PLD_OPID_TENSOR_VIEW;
    const pld_expr_t *A = pld_op_bound(e, 0);
    if (!A || !A->type || (view && pld_op_bound(e, 3) && pld_op_bound(e, 3)->kind != PLD_EX_NONE))
        return -2; /* layout= (refused by sim): the runtime */
    char av[32];
    if (toperand(g, A, e, av))
        return -1;
    int ns, nv = -1;
    const int shp = pld_cg_ilist(g, pld_op_bound(e, 1), &ns);
    if (shp < 0)
        return -1;
    const int val = view ? pld_cg_ilist(g, pld_op_bound(e, 2), &nv) : -1;
    if (g->failed)
        return -1;
    if (ns > PC_MAX_RANK || nv > PC_MAX_RANK)
        return pld_cg_fail(g, e->span, "%s: a rank above %d is not compiled by the native backend", opname(e), PC_MAX_RANK);
    pld_cg_emit(g, "for (int d = 0; d < %d; d++) if (t%d[d] < 0) { char m[160]; snprintf(m, sizeof m, \"%s: shape dimension "
                   "%%d is negative (%%lld)\", d, (long long)t%d[d]); return pc_cold(), rt->fail(bk, %d, m); }", ns, shp, opname(e), shp, s);
    if (val >= 0)
        pld_cg_emit(g, "for (int d = 0; d < %d; d++) if (t%d[d] < 0) { char m[160]; snprintf(m, sizeof m, \"%s: shape dimension "
                       "%%d is negative (%%lld)\", d, (long long)t%d[d]); return pc_cold(), rt->fail(bk, %d, m); }", nv, val, opname(e), val, s);
    const int q = tmp(g);
    pld_cg_emit(g, "pc_tensor r%d;", q);
    if (view) {
        char vb[32] = "NULL";
        if (val >= 0)
            snprintf(vb, sizeof vb, "t%d", val);
        pld_cg_emit(g, "{ char m[240]; if (pc_tensor_view_of(\"%s\", &r%d, &%s, t%d, %d, %s, %d, m, sizeof m)) return pc_cold(), rt->fail(bk, "
                       "%d, m); }", opname(e), q, av, shp, ns, vb, val >= 0 ? nv : -1, s);
    } else {
        pld_cg_emit(g, "{ char m[240]; if (pc_tensor_reshape(rt, \"%s\", &r%d, &%s, t%d, %d, m, sizeof m)) return pc_cold(), rt->fail(bk, %d, m); }",
                    opname(e), q, av, shp, ns, s);
    }
    pld_cg_emit(g, "%s = r%d;", dst, q);
    return 0;
}

/* pl.tensor.set_validshape(t, rows, cols): a view with the valid extents
 * clamped to [0, shape] (pld_exec_valid) */
static int gen_set_valid(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    const pld_expr_t *A = pld_op_bound(e, 0);
    if (!A || !A->type)
        return -2;
    char av[32];
    if (toperand(g, A, e, av))
        return -1;
    int v[2];
    for (int i = 0; i < 2; i++) {
        const pld_expr_t *x = pld_op_bound(e, 1 + i);
        int fl;
        pld_dtype_t d;
        if (!x || x->kind == PLD_EX_NONE) {
            v[i] = tmp(g);
            pld_cg_emit(g, "const int64_t t%d = 0;", v[i]);
        } else if ((v[i] = pld_cg_scalar(g, x, &fl, &d)) < 0) {
            return -1;
        } else if (fl) {
            return pld_cg_fail(g, x->span, "%s: an integer is needed", opname(e));
        }
    }
    const int q = tmp(g);
    pld_cg_emit(g, "pc_tensor r%d = %s;", q, av);
    pld_cg_emit(g, "if (r%d.rank != 2) return pc_cold(), rt->fail(bk, %d, \"%s: the tensor must be 2-D\");", q, s, opname(e));
    for (int d = 0; d < 2; d++)
        pld_cg_emit(g, "r%d.valid[%d] = t%d < 0 ? 0 : t%d > r%d.shape[%d] ? r%d.shape[%d] : t%d;", q, d, v[d], v[d], q, d, q, d,
                    v[d]);
    pld_cg_emit(g, "%s = r%d;", dst, q);
    return 0;
}

/* ---------------------------------------------------------------- entry point */

int pld_cg_tensor_op(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    int row;
    int form;
    if (unop(e->op) >= 0 || binop(e->op) >= 0 || xop(e, &form) >= 0 || is_scalar_op(e) || e->op == PLD_OPID_TENSOR_EXPANDS)
        return gen_elementwise(g, e, dst, s);
    if (redop(e->op, &row) >= 0)
        return gen_reduce(g, e, dst, s);
    switch (e->op) {
    case PLD_OPID_TENSOR_CAST: return gen_cast(g, e, dst, s);
    case PLD_OPID_TENSOR_CREATE:
    case PLD_OPID_TENSOR_FULL:
    case PLD_OPID_TENSOR_CREATE_L1: return gen_create(g, e, dst, s);
    case PLD_OPID_TENSOR_NO_DEP: return pld_cg_tensor_into(g, pld_op_bound(e, 0), dst);
    case PLD_OPID_TENSOR_SLICE: return gen_slice(g, e, dst, s);
    case PLD_OPID_TENSOR_ASSEMBLE: return gen_assemble(g, e, dst, s);
    case PLD_OPID_TENSOR_PART_ADD: return gen_part(g, e, dst, s, PLD_K_ADD);
    case PLD_OPID_TENSOR_PART_MUL: return gen_part(g, e, dst, s, PLD_K_MUL);
    case PLD_OPID_TENSOR_PART_MAX: return gen_part(g, e, dst, s, PLD_K_MAX);
    case PLD_OPID_TENSOR_PART_MIN: return gen_part(g, e, dst, s, PLD_K_MIN);
    case PLD_OPID_TENSOR_CI:
    case PLD_OPID_TENSOR_RANDOM: return gen_gen(g, e, dst, s);
    case PLD_OPID_TENSOR_EXPAND_CLONE: return gen_expand_clone(g, e, dst, s);
    case PLD_OPID_TENSOR_MATMUL: return gen_matmul(g, e, dst, s);
    case PLD_OPID_TENSOR_VIEW:
    case PLD_OPID_TENSOR_RESHAPE: return gen_view(g, e, dst, s);
    case PLD_OPID_TENSOR_SET_VALIDSHAPE: return gen_set_valid(g, e, dst, s);
    case PLD_OPID_TENSOR_MATMUL_ACC: return gen_matmul_acc(g, e, dst, s);
    default: return pld_cg_tlay_op(g, e, dst, s);
    }
}

/* ---------------------------------------------------------------- for pld_cgen_tlay.c */

int pld_cg_tshape(const pld_type_t *t, int64_t *s)
{
    return tshape(t, s);
}

int pld_cg_toperand(cg_t *g, const pld_expr_t *a, const pld_expr_t *e, char *nm)
{
    return toperand(g, a, e, nm);
}

int pld_cg_tresult(cg_t *g, int site, pld_dtype_t dt, int r, const int64_t *s, const char *const *ops, int nops)
{
    return result(g, site, dt, r, s, ops, nops);
}

int pld_cg_tresult_rt(cg_t *g, int site, pld_dtype_t dt, int r, const char *shv, const char *const *ops, int nops)
{
    return result_x(g, site, dt, r, NULL, shv, ops, nops);
}

int pld_cg_trank(const pld_type_t *t)
{
    return trank(t);
}
