/* pld_cgen_ext.c - the element-wise extension ops, broadcasts and reductions
 * in generated code (pld_cgen_int.h): sin / cos / not, fmod / rem, bitwise
 * ops and shifts, lrelu / prelu, addc / subc / addsc / subsc, cmp / cmps
 * (PyPTO's packed mask), sel / sels, the partial ops, ci / tri / random,
 * expands, row_expand* / col_expand*, the element-wise ops pld_cgen_compute.c
 * does not emit inline (other dtypes, broadcasting operands) and the row /
 * column reductions (argmax / argmin, col_sum's tree order, every dtype).
 *
 * Each op makes the checks the interpreter makes (pld_exec_elem.c,
 * pld_exec_compute.c) with its messages, sets the result descriptor as sim
 * makes the new tile (shape, valid shape, zeroed where sim zeroes it) and
 * calls the kernel library sim runs, directly (rt->k, pld_crt.h's pc_kern),
 * on views the generated code builds (broadcast dims stride 0). A check
 * whose outcome is known from the static types becomes an unconditional
 * located error at the op (sim fails there on every run that reaches it). */
#include "pld_cgen_int.h"
#include "pld_crt.h"
#include "pld_kern.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- operands */

/* One operand: a tile (its C name and static geometry) or a scalar (its temp). */
typedef struct eop {
    char nm[32];
    int tile;
    int rank;
    int64_t shape[PLD_MAX_RANK];
    pld_dtype_t dt;
    int sv, sfl; /* scalars: temp tN, 1 when a double */
} eop_t;

static int static_geom(cg_t *g, const pld_type_t *t, const pld_expr_t *at, const pld_expr_t *e, eop_t *o)
{
    if (!t || t->kind != PLD_TY_TILE || tile_bytes(t) < 0)
        return pld_cg_fail(g, at->span, "%s: the native backend needs a tile of static shape here", opname(e));
    o->rank = t->rank;
    o->dt = t->dtype;
    for (int d = 0; d < t->rank; d++)
        o->shape[d] = t->shape[d].v;
    return 0;
}

/* operand i of e as a tile */
static int get_tile(cg_t *g, const pld_expr_t *e, int i, eop_t *o)
{
    memset(o, 0, sizeof *o);
    const pld_expr_t *a = pld_op_bound(e, i);
    if (pld_cg_tile_operand(g, a, e, o->nm))
        return -1;
    o->tile = 1;
    return static_geom(g, a->type, a, e, o);
}

/* operand i of e as a scalar */
static int get_scalar(cg_t *g, const pld_expr_t *e, int i, eop_t *o)
{
    memset(o, 0, sizeof *o);
    const pld_expr_t *a = pld_op_bound(e, i);
    if (!a)
        return pld_cg_fail(g, e->span, "%s: a scalar operand is missing", opname(e));
    o->sv = pld_cg_scalar(g, a, &o->sfl, &o->dt);
    return o->sv < 0 ? -1 : 0;
}

/* the (double sf, int64_t si) pair of a scalar as the interpreter passes it
 * to the library (pld_v_as_f, pld_v_as_i) */
static void scalar_args(char *b, size_t n, const eop_t *o)
{
    if (o->sfl)
        snprintf(b, n, "t%d, pc_f2i(t%d)", o->sv, o->sv);
    else
        snprintf(b, n, "(double)t%d, (int64_t)t%d", o->sv, o->sv);
}

/* an integer argument i of e (pld_op_iarg) as a C expression in b; dflt when absent */
static int iarg(cg_t *g, const pld_expr_t *e, int i, long long dflt, char *b, size_t n)
{
    const pld_expr_t *a = pld_op_bound(e, i);
    if (!a || a->kind == PLD_EX_NONE) {
        snprintf(b, n, "(int64_t)%lldLL", dflt);
        return 0;
    }
    if (a->kind == PLD_EX_BOOL) {
        snprintf(b, n, "(int64_t)%d", a->u.bval ? 1 : 0);
        return 0;
    }
    if (a->kind == PLD_EX_INT) {
        snprintf(b, n, "(int64_t)%lldLL", (long long)a->u.ival);
        return 0;
    }
    int fl;
    pld_dtype_t d;
    int v = pld_cg_scalar(g, a, &fl, &d);
    if (v < 0)
        return -1;
    snprintf(b, n, fl ? "pc_f2i(t%d)" : "(int64_t)t%d", v);
    return 0;
}

/* a located runtime error at e, as sim reports it (the op is reached) */
static int emit_fail(cg_t *g, int s, const char *msg)
{
    pld_cg_emit(g, "return pc_cold(), rt->fail(bk, %d, \"%s\");", s, msg);
    return 0;
}

/* The broadcast shape of the tiles among o[0..n) (the interpreter's rule: dim
 * by dim, every operand against the running extent); 0, or 1 with the
 * message "shapes <o[0]> and <o[i]> do not broadcast" in msg. */
static int bcast(const pld_expr_t *e, const eop_t *o, int n, int *orank, int64_t *osh, char *msg, size_t mn)
{
    int r = 0;
    for (int i = 0; i < n; i++)
        if (o[i].tile && o[i].rank > r)
            r = o[i].rank;
    for (int d = 0; d < r; d++) {
        int64_t x = 1;
        for (int i = 0; i < n; i++) {
            if (!o[i].tile)
                continue;
            int j = d - (r - o[i].rank);
            int64_t y = j >= 0 ? o[i].shape[j] : 1;
            if (y != x && x != 1 && y != 1) {
                char s1[96], s2[96];
                pc_shape_str(s1, sizeof s1, o[0].rank, o[0].shape);
                pc_shape_str(s2, sizeof s2, o[i].rank, o[i].shape);
                snprintf(msg, mn, "%s: shapes %s and %s do not broadcast", opname(e), s1, s2);
                return 1;
            }
            if (y > x)
                x = y;
        }
        osh[d] = x;
    }
    *orank = r;
    return 0;
}

static int64_t numel(int r, const int64_t *s)
{
    int64_t n = 1;
    for (int d = 0; d < r; d++)
        n *= s[d];
    return n;
}

/* the result of e: bytes of (dt, r, osh) within the storage of e's static type */
static int check_room(cg_t *g, const pld_expr_t *e, pld_dtype_t dt, int r, const int64_t *osh)
{
    int64_t have = tile_bytes(e->type);
    if (r < 1 || r > PC_MAX_RANK || have < 0 || numel(r, osh) * esize(dt) > have)
        return pld_cg_fail(g, e->span, "%s: the result tile needs a static shape for the native backend", opname(e));
    return 0;
}

/* dst := a new tile (dt, r, osh) whose valid extents are those of tile v
 * where v is not broadcast along the dim, the full extent elsewhere (v NULL:
 * the full shape); zeroed when zero */
static void emit_result(cg_t *g, const char *dst, pld_dtype_t dt, int r, const int64_t *osh, const eop_t *v, int zero)
{
    pld_buf_t b;
    pld_buf_init(&b);
    for (int d = 0; d < r; d++) {
        int j = v ? d - (r - v->rank) : -1;
        if (j >= 0 && !(v->shape[j] == 1 && osh[d] != 1))
            pld_buf_printf(&b, "%s%s.valid[%d]", d ? ", " : "", v->nm, j);
        else
            pld_buf_printf(&b, "%s%lld", d ? ", " : "", (long long)osh[d]);
    }
    pld_cg_emit(g, "{ const int64_t vl_[%d] = {%s};", r, pld_buf_str(&b));
    pld_buf_fini(&b);
    pld_cg_emit(g, "  %s.dt = %d; %s.rank = %d; memcpy(%s.valid, vl_, sizeof vl_); }", dst, (int)dt, dst, r, dst);
    for (int d = 0; d < r; d++)
        pld_cg_emit(g, "%s.shape[%d] = %lld;", dst, d, (long long)osh[d]);
    if (zero)
        pld_cg_emit(g, "memset(%s.data, 0, %lld);", dst, (long long)(numel(r, osh) * esize(dt)));
}

/* an operand that names dst itself is copied to a temporary first: always
 * (always = 1: the op zeroes dst first, or the library does not allow that
 * operand in place), else when dst gets another shape */
static void unalias(cg_t *g, const char *dst, eop_t *o, int r, const int64_t *osh, int always)
{
    if (!o->tile || strcmp(o->nm, dst) != 0)
        return;
    int same = o->rank == r;
    for (int d = 0; same && d < r; d++)
        same = o->shape[d] == osh[d];
    if (same && !always)
        return;
    int t = pld_cg_temp_tile(g, (size_t)(numel(o->rank, o->shape) * esize(o->dt)));
    char tv[32];
    snprintf(tv, sizeof tv, "t%d", t);
    pld_cg_copy_tile(g, tv, o->nm, o->dt);
    snprintf(o->nm, sizeof o->nm, "%s", tv);
}

/* "const int64_t NAME[r] = {osh}" */
static void emit_shape(cg_t *g, const char *name, int r, const int64_t *osh)
{
    pld_buf_t b;
    pld_buf_init(&b);
    for (int d = 0; d < r; d++)
        pld_buf_printf(&b, "%s%lld", d ? ", " : "", (long long)osh[d]);
    pld_cg_emit(g, "const int64_t %s[%d] = {%s};", name, r > 0 ? r : 1, r > 0 ? pld_buf_str(&b) : "1");
    pld_buf_fini(&b);
}

/* a scalar as one element of dtype dt in C local cell_ (sim's pld_elem_set_f / _i) */
static void emit_cell(cg_t *g, pld_dtype_t dt, const eop_t *sc)
{
    if (is_float_dt(dt))
        pld_cg_emit(g, "uint64_t cell_ = 0; rt->set_f(&cell_, %d, 0, %st%d);", (int)dt, sc->sfl ? "" : "(double)", sc->sv);
    else
        pld_cg_emit(g, "uint64_t cell_ = 0; rt->set_i(&cell_, %d, 0, %s(t%d));", (int)dt, sc->sfl ? "pc_f2i" : "(int64_t)",
                    sc->sv);
}

static int dtypes_differ(cg_t *g, const pld_expr_t *e, int s, pld_dtype_t a, pld_dtype_t b)
{
    char m[160];
    snprintf(m, sizeof m, "%s: operand dtypes differ (%s and %s)", opname(e), pld_dtype_name(a), pld_dtype_name(b));
    return emit_fail(g, s, m);
}

/* ---------------------------------------------------------------- element-wise (pld_exec_elementwise) */

static int ew_binop(int op)
{
    int scalar, c = pld_cg_ew_binary(op, &scalar);
    if (c >= 0)
        return c;
    switch (op) {
    case PLD_OPID_TILE_ROW_EXPAND_ADD: case PLD_OPID_TILE_COL_EXPAND_ADD: return PLD_K_ADD;
    case PLD_OPID_TILE_ROW_EXPAND_SUB: case PLD_OPID_TILE_COL_EXPAND_SUB:
    case PLD_OPID_TILE_ROW_EXPAND_EXPDIF: case PLD_OPID_TILE_COL_EXPAND_EXPDIF: return PLD_K_SUB;
    case PLD_OPID_TILE_ROW_EXPAND_MUL: case PLD_OPID_TILE_COL_EXPAND_MUL: return PLD_K_MUL;
    case PLD_OPID_TILE_ROW_EXPAND_DIV: case PLD_OPID_TILE_COL_EXPAND_DIV: return PLD_K_DIV;
    case PLD_OPID_TILE_ROW_EXPAND_MAX: case PLD_OPID_TILE_COL_EXPAND_MAX: return PLD_K_MAX;
    case PLD_OPID_TILE_ROW_EXPAND_MIN: case PLD_OPID_TILE_COL_EXPAND_MIN: return PLD_K_MIN;
    default: return -1; /* row_expand / col_expand: a copy of the vector */
    }
}

/* binary (tile rhs, broadcasting), tile-scalar and unary ops, row / column
 * expands and expands (a fill of the lhs's shape): the whole physical result
 * as the interpreter computes it */
int pld_cg_ext_elementwise(cg_t *g, const pld_expr_t *e, const char *dst)
{
    const int s = pld_cg_site(g, e);
    int scalar = 0;
    const int ucode = pld_cg_ew_unary(e->op), expands = e->op == PLD_OPID_TILE_EXPANDS;
    if (ucode < 0 && !expands)
        pld_cg_ew_binary(e->op, &scalar);
    const int xk = pld_op_expand_axis(e->op), code = ucode >= 0 || expands ? -1 : ew_binop(e->op);
    eop_t a, b;
    memset(&b, 0, sizeof b);
    if (get_tile(g, e, 0, &a))
        return -1;
    if (ucode < 0 && ((scalar || expands) ? get_scalar(g, e, 1, &b) : get_tile(g, e, 1, &b)))
        return -1;
    char m[320];
    if (b.tile && b.dt != a.dt)
        return dtypes_differ(g, e, s, a.dt, b.dt);
    if (xk) {
        int ok = a.rank == 2 && b.rank == 2 &&
                 (xk == 'r' ? b.shape[1] == 1 && b.shape[0] == a.shape[0] : b.shape[0] == 1 && b.shape[1] == a.shape[1]);
        if (!ok) {
            char s1[96], s2[96];
            pc_shape_str(s1, sizeof s1, a.rank, a.shape);
            pc_shape_str(s2, sizeof s2, b.rank, b.shape);
            snprintf(m, sizeof m, "%s: the vector %s must be %s for the operand %s", opname(e), s2,
                     xk == 'r' ? "[M, 1]" : "[1, N]", s1);
            return emit_fail(g, s, m);
        }
    }
    int r;
    int64_t osh[PLD_MAX_RANK];
    eop_t ab[2] = {a, b};
    if (bcast(e, ab, b.tile ? 2 : 1, &r, osh, m, sizeof m))
        return emit_fail(g, s, m);
    if (check_room(g, e, a.dt, r, osh))
        return -1;
    unalias(g, dst, &a, r, osh, 0); /* in place: out == a exactly (the library allows it) */
    unalias(g, dst, &b, r, osh, 1);
    emit_result(g, dst, a.dt, r, osh, &a, 0);
    pld_cg_emit(g, "{ pc_view vo, va, vb; (void)va; (void)vb;");
    g->ind++;
    emit_shape(g, "os_", r, osh);
    pld_cg_emit(g, "pc_view_tile(&vo, &%s); pc_view_bcast(&va, &%s, %d, os_);", dst, a.nm, r);
    char sa[96];
    if (ucode >= 0) {
        pld_cg_emit(g, "PC_K(%d, unary, %d, &vo, &va);", s, ucode);
    } else if (expands) {
        if (is_float_dt(a.dt))
            pld_cg_emit(g, "PC_K(%d, fill_f, &vo, %st%d);", s, b.sfl ? "" : "(double)", b.sv);
        else
            pld_cg_emit(g, "PC_K(%d, fill_i, &vo, %s(t%d));", s, b.sfl ? "pc_f2i" : "(int64_t)", b.sv);
    } else if (scalar) {
        scalar_args(sa, sizeof sa, &b);
        pld_cg_emit(g, "PC_K(%d, binary_s, %d, &vo, &va, %s);", s, code, sa);
    } else {
        pld_cg_emit(g, "pc_view_bcast(&vb, &%s, %d, os_);", b.nm, r);
        if (code < 0)
            pld_cg_emit(g, "PC_K(%d, copy, &vo, &vb);", s);
        else
            pld_cg_emit(g, "PC_K(%d, binary, %d, &vo, &va, &vb);", s, code);
        if (e->op == PLD_OPID_TILE_ROW_EXPAND_EXPDIF || e->op == PLD_OPID_TILE_COL_EXPAND_EXPDIF)
            pld_cg_emit(g, "PC_K(%d, unary, %d, &vo, &vo);", s, (int)PLD_K_EXP);
    }
    g->ind--;
    pld_cg_emit(g, "}");
    return 0;
}

/* ---------------------------------------------------------------- extension ops (pld_exec_elem) */

/* the operand signature of an op of pld_k_ext ("a" tile, "s" scalar, "-"
 * skipped scratch) and its op code; NULL when op is none */
static const char *ext_sig(int op, pld_xop_k_t *x)
{
    switch (op) {
    case PLD_OPID_TILE_SIN: *x = PLD_KX_SIN; return "a";
    case PLD_OPID_TILE_COS: *x = PLD_KX_COS; return "a";
    case PLD_OPID_TILE_NOT: *x = PLD_KX_NOT; return "a";
    case PLD_OPID_TILE_FMOD: *x = PLD_KX_FMOD; return "aa";
    case PLD_OPID_TILE_AND: *x = PLD_KX_AND; return "aa";
    case PLD_OPID_TILE_OR: *x = PLD_KX_OR; return "aa";
    case PLD_OPID_TILE_SHL: *x = PLD_KX_SHL; return "aa";
    case PLD_OPID_TILE_SHR: *x = PLD_KX_SHR; return "aa";
    case PLD_OPID_TILE_REM: *x = PLD_KX_REM; return "aa-";
    case PLD_OPID_TILE_XOR: *x = PLD_KX_XOR; return "aa-";
    case PLD_OPID_TILE_PRELU: *x = PLD_KX_PRELU; return "aa-";
    case PLD_OPID_TILE_FMODS: *x = PLD_KX_FMOD; return "as";
    case PLD_OPID_TILE_ANDS: *x = PLD_KX_AND; return "as";
    case PLD_OPID_TILE_ORS: *x = PLD_KX_OR; return "as";
    case PLD_OPID_TILE_SHLS: *x = PLD_KX_SHL; return "as";
    case PLD_OPID_TILE_SHRS: *x = PLD_KX_SHR; return "as";
    case PLD_OPID_TILE_LRELU: *x = PLD_KX_LRELU; return "as";
    case PLD_OPID_TILE_REMS: *x = PLD_KX_REM; return "as-";
    case PLD_OPID_TILE_XORS: *x = PLD_KX_XOR; return "as-";
    case PLD_OPID_TILE_ADDC: *x = PLD_KX_ADDC; return "aaa";
    case PLD_OPID_TILE_SUBC: *x = PLD_KX_SUBC; return "aaa";
    case PLD_OPID_TILE_ADDSC: *x = PLD_KX_ADDC; return "asa";
    case PLD_OPID_TILE_SUBSC: *x = PLD_KX_SUBC; return "asa";
    default: return NULL;
    }
}

/* unary, binary (tile or scalar rhs) and ternary ops: a zeroed result of the
 * broadcast shape, the first operand's valid shape, computed over the valid
 * region only */
static int gen_ext(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    pld_xop_k_t x = PLD_KX_SIN;
    const char *sig = ext_sig(e->op, &x);
    eop_t o[3];
    int n = 0, sidx = -1;
    for (int i = 0; sig[i]; i++) {
        if (sig[i] == '-')
            continue;
        if ((sig[i] == 's' ? get_scalar(g, e, i, &o[n]) : get_tile(g, e, i, &o[n])))
            return -1;
        if (sig[i] == 's')
            sidx = n;
        n++;
    }
    for (int i = 1; i < n; i++)
        if (o[i].tile && o[i].dt != o[0].dt)
            return dtypes_differ(g, e, s, o[0].dt, o[i].dt);
    char m[320];
    int r;
    int64_t osh[PLD_MAX_RANK];
    if (bcast(e, o, n, &r, osh, m, sizeof m))
        return emit_fail(g, s, m);
    if (check_room(g, e, o[0].dt, r, osh))
        return -1;
    for (int i = 0; i < n; i++)
        unalias(g, dst, &o[i], r, osh, 1);
    emit_result(g, dst, o[0].dt, r, osh, &o[0], 1);
    pld_cg_emit(g, "{ pc_view vo, va, vb, vc; (void)vb; (void)vc;");
    g->ind++;
    pld_cg_emit(g, "pc_view_tile_valid(&vo, &%s);", dst);
    pld_cg_emit(g, "pc_view_bcast(&va, &%s, %d, vo.shape);", o[0].nm, r);
    const char *c = "NULL";
    if (n == 3) {
        pld_cg_emit(g, "pc_view_bcast(&vc, &%s, %d, vo.shape);", o[2].nm, r);
        c = "&vc";
    }
    if (sidx >= 0) {
        char sa[96];
        scalar_args(sa, sizeof sa, &o[sidx]);
        pld_cg_emit(g, "PC_K(%d, ext_s, %d, &vo, &va, %s, %s);", s, (int)x, sa, c);
    } else {
        if (n >= 2)
            pld_cg_emit(g, "pc_view_bcast(&vb, &%s, %d, vo.shape);", o[1].nm, r);
        pld_cg_emit(g, "PC_K(%d, ext, %d, &vo, &va, %s, %s);", s, (int)x, n >= 2 ? "&vb" : "NULL", c);
    }
    g->ind--;
    pld_cg_emit(g, "}");
    return 0;
}

/* tile.cmp / tile.cmps: PyPTO's packed UINT8 predicate mask of the whole
 * compared shape */
static int gen_cmp(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    const int scal = e->op == PLD_OPID_TILE_CMPS;
    eop_t o[2];
    if (get_tile(g, e, 0, &o[0]) || (scal ? get_scalar(g, e, 1, &o[1]) : get_tile(g, e, 1, &o[1])))
        return -1;
    char mode[64], m[320];
    const pld_expr_t *ma = pld_op_bound(e, 2);
    if (iarg(g, e, 2, 0, mode, sizeof mode))
        return -1;
    const char *range = "cmp_type %lld is not one of EQ=0, NE=1, LT=2, LE=3, GT=4, GE=5";
    if (ma && ma->kind == PLD_EX_INT) {
        if (ma->u.ival < 0 || ma->u.ival > 5) {
            char f[160];
            snprintf(f, sizeof f, "%%s: %s", range);
            snprintf(m, sizeof m, f, opname(e), (long long)ma->u.ival);
            return emit_fail(g, s, m);
        }
    } else if (ma) {
        pld_cg_emit(g, "if (%s < 0 || %s > 5) { char m_[160]; snprintf(m_, sizeof m_, \"%s: %s\", (long long)%s); "
                       "return pc_cold(), rt->fail(bk, %d, m_); }", mode, mode, opname(e), range, mode, s);
    }
    if (!scal && o[1].dt != o[0].dt)
        return dtypes_differ(g, e, s, o[0].dt, o[1].dt);
    int r;
    int64_t osh[PLD_MAX_RANK], msh[PLD_MAX_RANK];
    if (bcast(e, o, scal ? 1 : 2, &r, osh, m, sizeof m))
        return emit_fail(g, s, m);
    memcpy(msh, osh, sizeof msh);
    msh[r - 1] = ((osh[r - 1] + 7) / 8 + 31) / 32 * 32;
    if (check_room(g, e, PLD_DT_UINT8, r, msh))
        return -1;
    for (int i = 0; i < 2; i++)
        unalias(g, dst, &o[i], r, osh, 1);
    /* the valid shape: the compared one, its last dim in bytes */
    emit_result(g, dst, PLD_DT_UINT8, r, osh, &o[0], 0);
    pld_cg_emit(g, "%s.valid[%d] = (%s.valid[%d] + 7) / 8;", dst, r - 1, dst, r - 1);
    for (int d = 0; d < r; d++)
        pld_cg_emit(g, "%s.shape[%d] = %lld;", dst, d, (long long)msh[d]);
    pld_cg_emit(g, "memset(%s.data, 0, %lld);", dst, (long long)numel(r, msh));
    pld_cg_emit(g, "{ pc_view vo, va, vb;");
    g->ind++;
    emit_shape(g, "os_", r, osh);
    pld_cg_emit(g, "pc_view_tile(&vo, &%s); pc_view_bcast(&va, &%s, %d, os_);", dst, o[0].nm, r);
    if (scal) {
        emit_cell(g, o[0].dt, &o[1]);
        pld_cg_emit(g, "pc_view_cell(&vb, &cell_, %d, %d, os_);", (int)o[0].dt, r);
    } else {
        pld_cg_emit(g, "pc_view_bcast(&vb, &%s, %d, os_);", o[1].nm, r);
    }
    pld_cg_emit(g, "PC_K(%d, cmp_mask, %d + (int)%s, &vo, &va, &vb);", s, (int)PLD_KX_EQ, mode);
    g->ind--;
    pld_cg_emit(g, "}");
    return 0;
}

/* tile.sel(mask, lhs, rhs, tmp) / tile.sels(mask, src, tmp, scalar) */
static int gen_sel(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    const int sels = e->op == PLD_OPID_TILE_SELS;
    eop_t mk, o[2];
    if (get_tile(g, e, 0, &mk) || get_tile(g, e, 1, &o[0]) ||
        (sels ? get_scalar(g, e, 3, &o[1]) : get_tile(g, e, 2, &o[1])))
        return -1;
    char m[320];
    if (!sels && o[1].dt != o[0].dt)
        return dtypes_differ(g, e, s, o[0].dt, o[1].dt);
    if (is_float_dt(mk.dt) || mk.rank != 2) {
        snprintf(m, sizeof m, "%s: the mask must be a 2-D integer tile", opname(e));
        return emit_fail(g, s, m);
    }
    int r;
    int64_t osh[PLD_MAX_RANK];
    if (bcast(e, o, sels ? 1 : 2, &r, osh, m, sizeof m))
        return emit_fail(g, s, m);
    if (check_room(g, e, o[0].dt, r, osh))
        return -1;
    unalias(g, dst, &mk, r, osh, 1);
    for (int i = 0; i < 2; i++)
        unalias(g, dst, &o[i], r, osh, 1);
    emit_result(g, dst, o[0].dt, r, osh, &o[0], 1);
    pld_cg_emit(g, "{ pc_view vo, vm, va, vb;");
    g->ind++;
    emit_shape(g, "os_", r, osh);
    pld_cg_emit(g, "pc_view_tile(&vo, &%s); pc_view_tile(&vm, &%s); pc_view_bcast(&va, &%s, %d, os_);", dst, mk.nm,
                o[0].nm, r);
    if (sels) {
        emit_cell(g, o[0].dt, &o[1]);
        pld_cg_emit(g, "pc_view_cell(&vb, &cell_, %d, %d, os_);", (int)o[0].dt, r);
    } else {
        pld_cg_emit(g, "pc_view_bcast(&vb, &%s, %d, os_);", o[1].nm, r);
    }
    pld_cg_emit(g, "PC_K(%d, select, &vo, &vm, &va, &vb);", s);
    g->ind--;
    pld_cg_emit(g, "}");
    return 0;
}

/* part_add / part_mul / part_max / part_min: src0's shape and valid shape */
static int gen_part(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    eop_t o[2];
    if (get_tile(g, e, 0, &o[0]) || get_tile(g, e, 1, &o[1]))
        return -1;
    int same = o[0].rank == o[1].rank && o[0].dt == o[1].dt;
    for (int d = 0; same && d < o[0].rank; d++)
        same = o[0].shape[d] == o[1].shape[d];
    if (!same) {
        char s1[96], s2[96], m[320];
        pc_shape_str(s1, sizeof s1, o[0].rank, o[0].shape);
        pc_shape_str(s2, sizeof s2, o[1].rank, o[1].shape);
        snprintf(m, sizeof m, "%s: the sources must have one shape and dtype (%s %s and %s %s)", opname(e), s1,
                 pld_dtype_name(o[0].dt), s2, pld_dtype_name(o[1].dt));
        return emit_fail(g, s, m);
    }
    const int op = e->op == PLD_OPID_TILE_PART_ADD ? PLD_K_ADD
                   : e->op == PLD_OPID_TILE_PART_MUL ? PLD_K_MUL
                   : e->op == PLD_OPID_TILE_PART_MAX ? PLD_K_MAX
                                                     : PLD_K_MIN;
    if (check_room(g, e, o[0].dt, o[0].rank, o[0].shape))
        return -1;
    for (int i = 0; i < 2; i++)
        unalias(g, dst, &o[i], o[0].rank, o[0].shape, 1);
    emit_result(g, dst, o[0].dt, o[0].rank, o[0].shape, &o[0], 1);
    pld_cg_emit(g, "{ pc_view vo, va, vb; pc_view_tile(&vo, &%s); pc_view_tile(&va, &%s); pc_view_tile(&vb, &%s);", dst,
                o[0].nm, o[1].nm);
    pld_cg_emit(g, "  PC_K(%d, part, %d, &vo, &va, %s.valid, &vb, %s.valid); }", s, op, o[0].nm, o[1].nm);
    return 0;
}

/* the static geometry of a generator's result (its type) */
static int gen_geom(cg_t *g, const pld_expr_t *e, eop_t *o)
{
    memset(o, 0, sizeof *o);
    return static_geom(g, e->type, e, e, o);
}

/* tile.ci(start, shape, dtype, descending) / tile.tri(diagonal, shape,
 * valid_shape, dtype, upper) */
static int gen_citri(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    const int tri = e->op == PLD_OPID_TILE_TRI;
    char first[64], flag[64];
    eop_t o;
    if (iarg(g, e, 0, 0, first, sizeof first) || gen_geom(g, e, &o) || iarg(g, e, tri ? 4 : 3, 0, flag, sizeof flag))
        return -1;
    int nv = -1, val = -1;
    if (tri && pld_op_bound(e, 2) && (val = pld_cg_ilist(g, pld_op_bound(e, 2), &nv)) < 0)
        return -1;
    if (tri && o.rank != 2) {
        char m[160];
        snprintf(m, sizeof m, "%s needs a 2-D shape", opname(e));
        return emit_fail(g, s, m);
    }
    emit_result(g, dst, o.dt, o.rank, o.shape, NULL, 1);
    if (tri && nv == o.rank)
        pld_cg_emit(g, "%s.valid[0] = t%d[0]; %s.valid[1] = t%d[1];", dst, val, dst, val);
    if (tri)
        pld_cg_emit(g, "{ pc_view vo; pc_view_tile(&vo, &%s); PC_K(%d, tri, &vo, %s, (int)%s, %s.valid[0], %s.valid[1]); }",
                    dst, s, first, flag, dst, dst);
    else
        pld_cg_emit(g, "{ pc_view vo; pc_view_tile(&vo, &%s); PC_K(%d, ci, &vo, %s, (int)%s); }", dst, s, first, flag);
    return 0;
}

/* tile.random(key0, key1, counter0..3, shape, valid_shape, dtype, rounds) */
static int gen_random(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    char seed[6][64], rounds[64];
    eop_t o;
    for (int i = 0; i < 6; i++)
        if (iarg(g, e, i, 0, seed[i], sizeof seed[i]))
            return -1;
    if (gen_geom(g, e, &o) || iarg(g, e, 9, 10, rounds, sizeof rounds))
        return -1;
    int nv = -1, val = -1;
    if (pld_op_bound(e, 7) && (val = pld_cg_ilist(g, pld_op_bound(e, 7), &nv)) < 0)
        return -1;
    char m[160];
    snprintf(m, sizeof m, "%s needs a 2-D shape and a valid_shape within it", opname(e));
    if (o.rank != 2 || (nv >= 0 && nv != 2))
        return emit_fail(g, s, m);
    if (nv == 2)
        pld_cg_emit(g, "if (t%d[0] < 0 || t%d[0] > %lld || t%d[1] < 0 || t%d[1] > %lld) return pc_cold(), rt->fail(bk, %d, \"%s\");",
                    val, val, (long long)o.shape[0], val, val, (long long)o.shape[1], s, m);
    emit_result(g, dst, o.dt, 2, o.shape, NULL, 1);
    if (nv == 2)
        pld_cg_emit(g, "%s.valid[0] = t%d[0]; %s.valid[1] = t%d[1];", dst, val, dst, val);
    pld_cg_emit(g, "{ pc_view vo; pc_view_tile(&vo, &%s);", dst);
    pld_cg_emit(g, "  const uint32_t key_[2] = {(uint32_t)%s, (uint32_t)%s};", seed[0], seed[1]);
    pld_cg_emit(g, "  const uint32_t ctr_[4] = {(uint32_t)%s, (uint32_t)%s, (uint32_t)%s, (uint32_t)%s};", seed[2],
                seed[3], seed[4], seed[5]);
    pld_cg_emit(g, "  PC_K(%d, random, &vo, key_, ctr_, (int)%s, %s.valid[0], %s.valid[1]); }", s, rounds, dst, dst);
    return 0;
}

/* ---------------------------------------------------------------- reductions */

/* a reduction's library op (pld_redop_k_t; *row: 1 for a row reduction), -1 when op is none */
int pld_cg_ext_reduce_op(int op, int *row)
{
    *row = 1;
    switch (op) {
    case PLD_OPID_TILE_ROW_SUM: return PLD_K_RSUM;
    case PLD_OPID_TILE_ROW_MAX: return PLD_K_RMAX;
    case PLD_OPID_TILE_ROW_MIN: return PLD_K_RMIN;
    case PLD_OPID_TILE_ROW_PROD: return PLD_K_RPROD;
    case PLD_OPID_TILE_ROW_ARGMAX: return PLD_K_RARGMAX;
    case PLD_OPID_TILE_ROW_ARGMIN: return PLD_K_RARGMIN;
    default: break;
    }
    *row = 0;
    switch (op) {
    case PLD_OPID_TILE_COL_SUM: return PLD_K_RSUM;
    case PLD_OPID_TILE_COL_MAX: return PLD_K_RMAX;
    case PLD_OPID_TILE_COL_MIN: return PLD_K_RMIN;
    case PLD_OPID_TILE_COL_PROD: return PLD_K_RPROD;
    case PLD_OPID_TILE_COL_ARGMAX: return PLD_K_RARGMAX;
    case PLD_OPID_TILE_COL_ARGMIN: return PLD_K_RARGMIN;
    default: return -1;
    }
}

/* a row / column reduction into dst: a zeroed result (INT32 for argmax /
 * argmin) of the operand's shape with the axis 1, over the valid region */
int pld_cg_ext_reduce(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    int row, op = pld_cg_ext_reduce_op(e->op, &row);
    eop_t a;
    if (get_tile(g, e, 0, &a))
        return -1;
    const int ax = row ? a.rank - 1 : a.rank - 2;
    if (ax < 0) {
        char m[160];
        snprintf(m, sizeof m, "%s needs a tile of rank >= %d", opname(e), row ? 1 : 2);
        return emit_fail(g, s, m);
    }
    int flags = row ? PLD_K_RED_ROW : 0;
    if (e->op == PLD_OPID_TILE_COL_SUM && pld_op_bound(e, 1)) /* the tree order of col_sum: its tmp_tile (PyPTO) */
        flags |= PLD_K_RED_TREE;
    const pld_dtype_t odt = op == PLD_K_RARGMAX || op == PLD_K_RARGMIN ? PLD_DT_INT32 : a.dt;
    int64_t os[PLD_MAX_RANK];
    memcpy(os, a.shape, sizeof os);
    os[ax] = 1;
    if (check_room(g, e, odt, a.rank, os))
        return -1;
    unalias(g, dst, &a, a.rank, os, 1);
    emit_result(g, dst, odt, a.rank, os, &a, 1);
    pld_cg_emit(g, "%s.valid[%d] = 1;", dst, ax);
    pld_cg_emit(g, "{ pc_view vo, va; pc_view_tile_valid(&vo, &%s); pc_view_tile_valid(&va, &%s); PC_K(%d, reduce, %d, %d, "
                   "&vo, &va); }", dst, a.nm, s, op, flags);
    return 0;
}

/* ---------------------------------------------------------------- dispatch */

int pld_cg_ext_op(int op)
{
    pld_xop_k_t x;
    int row;
    if (ext_sig(op, &x) || pld_cg_ext_reduce_op(op, &row) >= 0 || pld_op_expand_axis(op))
        return 1;
    switch (op) {
    case PLD_OPID_TILE_CMP: case PLD_OPID_TILE_CMPS: case PLD_OPID_TILE_SEL: case PLD_OPID_TILE_SELS:
    case PLD_OPID_TILE_PART_ADD: case PLD_OPID_TILE_PART_MUL: case PLD_OPID_TILE_PART_MAX: case PLD_OPID_TILE_PART_MIN:
    case PLD_OPID_TILE_CI: case PLD_OPID_TILE_TRI: case PLD_OPID_TILE_RANDOM: case PLD_OPID_TILE_EXPANDS:
        return 1;
    default:
        return 0;
    }
}

int pld_cg_ext(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    pld_xop_k_t x;
    int row;
    if (ext_sig(e->op, &x))
        return gen_ext(g, e, dst, s);
    if (pld_cg_ext_reduce_op(e->op, &row) >= 0)
        return pld_cg_ext_reduce(g, e, dst, s);
    switch (e->op) {
    case PLD_OPID_TILE_CMP: case PLD_OPID_TILE_CMPS: return gen_cmp(g, e, dst, s);
    case PLD_OPID_TILE_SEL: case PLD_OPID_TILE_SELS: return gen_sel(g, e, dst, s);
    case PLD_OPID_TILE_PART_ADD: case PLD_OPID_TILE_PART_MUL: case PLD_OPID_TILE_PART_MAX: case PLD_OPID_TILE_PART_MIN:
        return gen_part(g, e, dst, s);
    case PLD_OPID_TILE_CI: case PLD_OPID_TILE_TRI: return gen_citri(g, e, dst, s);
    case PLD_OPID_TILE_RANDOM: return gen_random(g, e, dst, s);
    default: return pld_cg_ext_elementwise(g, e, dst); /* expands, row / column expands */
    }
}
