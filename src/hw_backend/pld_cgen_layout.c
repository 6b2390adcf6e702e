/* pld_cgen_layout.c - the layout, valid-shape and gather / scatter tile ops
 * in generated code (pld_cgen_int.h): slice, reshape, assemble, transpose,
 * transpose_view, reinterpret_view, extract, concat, fillpad (copy, in place,
 * expand), set_validshape, gather, scatter, sort32, mrgsort, gather_row,
 * gather_mask, scatter_mask; the GM family mgather, mscatter, gatherb,
 * scatter_update, gather_compare.
 *
 * Each op's semantics are the interpreter's (src/interp/pld_exec_layout.c,
 * pld_exec_mem.c): the same checks with the same messages at the op's site,
 * the same result shape and valid region. Data moves through the kernel
 * library (pc_kern: copy, fillpad, gather, scatter, sort32, mrgsort, and the
 * valid regions of reshape and assemble); only descriptors, byte copies of
 * whole tiles and valid-region arithmetic are inline. Descriptors are C
 * lvalues of pc_tile (the emitters below take their names, so the tensor
 * forms can reuse them). A result tile's storage is zeroed first wherever the
 * op leaves elements unwritten (sim's new tiles are zeroed). */
#include "pld_cgen_int.h"
#include "pld_crt.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

static int absent(const pld_expr_t *a)
{
    return !a || a->kind == PLD_EX_NONE;
}

/* an integer argument (dflt when absent) in a fresh int64_t local */
static int iarg(cg_t *g, const pld_expr_t *e, int i, int64_t dflt)
{
    const pld_expr_t *a = pld_op_bound(e, i);
    int t;
    if (absent(a)) {
        t = tmp(g);
        pld_cg_emit(g, "int64_t t%d = %lld;", t, (long long)dflt);
        return t;
    }
    int fl;
    pld_dtype_t dt;
    int v = pld_cg_scalar(g, a, &fl, &dt);
    if (v < 0)
        return -1;
    t = tmp(g);
    pld_cg_emit(g, "int64_t t%d = (int64_t)t%d;", t, v);
    return t;
}

/* the static type of operand i */
static const pld_type_t *aty(const pld_expr_t *e, int i)
{
    const pld_expr_t *a = pld_op_bound(e, i);
    return a ? a->type : NULL;
}

static int64_t sdim(const pld_type_t *t, int d)
{
    return t && d < t->rank ? t->shape[d].v : -1;
}

/* an error sim reports on every run (its check depends on static values only) */
static int always_fail(cg_t *g, int s, const char *op, const char *msg)
{
    pld_cg_emit(g, "return pc_cold(), rt->fail(bk, %d, \"%s%s\");", s, op, msg);
    return 0;
}

static void zero(cg_t *g, const char *dst, int es)
{
    pld_cg_emit(g, "memset(%s.data, 0, (size_t)pc_numel(%s.shape, %s.rank) * %d);", dst, dst, dst, es);
}

/* dst's descriptor: dtype dt, rank r, shape and valid from C arrays (or "" = the shape) */
static void set_desc(cg_t *g, const char *dst, pld_dtype_t dt, const char *rank, const char *shape, const char *valid)
{
    pld_cg_emit(g, "%s.dt = %d; %s.rank = (int32_t)(%s);", dst, (int)dt, dst, rank);
    pld_cg_emit(g, "for (int d_ = 0; d_ < %s.rank; d_++) { %s.shape[d_] = %s[d_]; %s.valid[d_] = %s[d_]; }", dst, dst,
                shape, dst, valid[0] ? valid : shape);
}

/* ---------------------------------------------------------------- transpose, extract, concat */

/* transpose of tile src (axes in C locals ax0, ax1) into dst */
int pld_cg_lay_transpose(cg_t *g, int s, const char *op, const char *dst, const char *src, int ax0, int ax1)
{
    pld_cg_emit(g, "{ int64_t x0 = t%d, x1 = t%d; const int r = %s.rank;", ax0, ax1, src);
    g->ind++;
    pld_cg_emit(g, "if (x0 < 0) x0 += r;");
    pld_cg_emit(g, "if (x1 < 0) x1 += r;");
    pld_cg_emit(g, "if (r < 2 || x0 < 0 || x0 >= r || x1 < 0 || x1 >= r || x0 == x1)");
    pld_cg_emit(g, "    PC_FAILF(%d, \"%s: axes %%lld and %%lld do not name two axes of a rank-%%d operand\", (long long)x0, "
                   "(long long)x1, r);", s, op);
    pld_cg_emit(g, "pc_view vs, vo; pc_view_tile(&vs, &%s);", src);
    pld_cg_copy_desc(g, dst, src);
    pld_cg_emit(g, "%s.shape[x0] = %s.shape[x1]; %s.shape[x1] = %s.shape[x0];", dst, src, dst, src);
    pld_cg_emit(g, "%s.valid[x0] = %s.valid[x1]; %s.valid[x1] = %s.valid[x0];", dst, src, dst, src);
    pld_cg_emit(g, "{ int64_t q = vs.shape[x0]; vs.shape[x0] = vs.shape[x1]; vs.shape[x1] = q;");
    pld_cg_emit(g, "  q = vs.strides[x0]; vs.strides[x0] = vs.strides[x1]; vs.strides[x1] = q; }");
    pld_cg_emit(g, "pc_view_tile(&vo, &%s);", dst);
    pld_cg_emit(g, "PC_K(%d, copy, &vo, &vs);", s);
    g->ind--;
    pld_cg_emit(g, "}");
    return 0;
}

static int gen_transpose(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    char a[32];
    if (pld_cg_tile_operand(g, pld_op_bound(e, 0), e, a))
        return -1;
    int x0, x1;
    if (e->op == PLD_OPID_TILE_TRANSPOSE_VIEW) {
        x0 = tmp(g), x1 = tmp(g);
        pld_cg_emit(g, "int64_t t%d = -2, t%d = -1;", x0, x1);
    } else if ((x0 = iarg(g, e, 1, 0)) < 0 || (x1 = iarg(g, e, 2, 0)) < 0) {
        return -1;
    }
    return pld_cg_lay_transpose(g, s, opname(e), dst, a, x0, x1);
}

static int gen_extract(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    char a[32];
    int n;
    if (pld_cg_tile_operand(g, pld_op_bound(e, 0), e, a))
        return -1;
    int r0 = iarg(g, e, 1, 0), r1 = r0 < 0 ? -1 : iarg(g, e, 2, 0);
    int sh = r1 < 0 ? -1 : pld_cg_ilist(g, pld_op_bound(e, 3), &n);
    if (sh < 0)
        return -1;
    const pld_type_t *ta = aty(e, 0);
    if (!ta || ta->rank != 2 || n != 2)
        return always_fail(g, s, opname(e), " needs a 2-D tile and a 2-D shape");
    const int es = esize(ta->dtype);
    pld_cg_emit(g, "{ int64_t off[2] = {t%d, t%d}; const int64_t *ext = t%d;", r0, r1, sh);
    g->ind++;
    pld_cg_emit(g, "for (int d = 0; d < 2; d++)");
    pld_cg_emit(g, "    if (off[d] < 0 || ext[d] > %s.shape[d] || off[d] > %s.shape[d] - ext[d])", a, a);
    pld_cg_emit(g, "        PC_FAILF(%d, \"%s: window [%%lld, %%lld) of dimension %%d is outside the source's [0, %%lld)\", "
                   "(long long)off[d], (long long)(off[d] + ext[d]), d, (long long)%s.shape[d]);", s, opname(e), a);
    set_desc(g, dst, ta->dtype, "2", "ext", "");
    pld_cg_emit(g, "for (int d = 0; d < 2; d++) { int64_t v = %s.valid[d] - off[d]; %s.valid[d] = v < 0 ? 0 : v > ext[d] ? "
                   "ext[d] : v; }", a, dst);
    pld_cg_emit(g, "pc_view vs, vo; pc_view_tile(&vs, &%s); pc_view_box(&vs, off, ext, %d); pc_view_tile(&vo, &%s);", a, es,
                dst);
    pld_cg_emit(g, "PC_K(%d, copy, &vo, &vs);", s);
    g->ind--;
    pld_cg_emit(g, "}");
    return 0;
}

/* column concatenation of 2-D tiles a and b into dst */
int pld_cg_lay_concat(cg_t *g, int s, const char *dst, const char *a, const char *b, pld_dtype_t dt)
{
    const int es = esize(dt);
    pld_cg_emit(g, "{ int64_t shp[2] = {%s.shape[0], %s.shape[1] + %s.shape[1]};", a, a, b);
    g->ind++;
    set_desc(g, dst, dt, "2", "shp", "");
    /* the boxes below cover every row and the valid columns: only columns
     * beyond both valid widths are left for the zeros */
    pld_cg_emit(g, "if (%s.valid[1] + %s.valid[1] < shp[1])", a, b);
    g->ind++;
    zero(g, dst, es);
    g->ind--;
    pld_cg_emit(g, "int64_t o0[2] = {0, 0}, e0[2] = {shp[0], %s.valid[1]}, o1[2] = {0, %s.valid[1]}, e1[2] = {shp[0], "
                   "%s.valid[1]};", a, a, b);
    pld_cg_emit(g, "pc_view d0, d1, s0, s1; pc_view_tile(&d0, &%s); d1 = d0; pc_view_tile(&s0, &%s); pc_view_tile(&s1, &%s);",
                dst, a, b);
    pld_cg_emit(g, "pc_view_box(&d0, o0, e0, %d); pc_view_box(&d1, o1, e1, %d); pc_view_box(&s0, o0, e0, %d); "
                   "pc_view_box(&s1, o0, e1, %d);", es, es, es, es);
    pld_cg_emit(g, "PC_K(%d, copy, &d0, &s0);", s);
    pld_cg_emit(g, "PC_K(%d, copy, &d1, &s1);", s);
    pld_cg_emit(g, "%s.valid[0] = %s.valid[0] < %s.valid[0] ? %s.valid[0] : %s.valid[0]; %s.valid[1] = %s.valid[1] + "
                   "%s.valid[1];", dst, a, b, a, b, dst, a, b);
    g->ind--;
    pld_cg_emit(g, "}");
    return 0;
}

static int gen_concat(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    char a[32], b[32];
    if (pld_cg_tile_operand(g, pld_op_bound(e, 0), e, a) || pld_cg_tile_operand(g, pld_op_bound(e, 1), e, b))
        return -1;
    const pld_type_t *ta = aty(e, 0), *tb = aty(e, 1);
    if (!ta || !tb || ta->rank != 2 || tb->rank != 2 || sdim(ta, 0) != sdim(tb, 0) || ta->dtype != tb->dtype)
        return always_fail(g, s, opname(e), " needs two 2-D operands of one kind, dtype and row count");
    return pld_cg_lay_concat(g, s, dst, a, b, ta->dtype);
}

/* ---------------------------------------------------------------- gather, scatter, sorts */

/* pl.tile.gather (flat: dim < 0) of tile a by index tile x into dst */
int pld_cg_lay_gather(cg_t *g, int s, const char *dst, const char *a, const char *x, pld_dtype_t dt, int dim)
{
    pld_cg_emit(g, "{ pc_view vo, vs, vx;");
    g->ind++;
    pld_cg_emit(g, "%s.dt = %d; %s.rank = %s.rank;", dst, (int)dt, dst, x);
    pld_cg_emit(g, "memcpy(%s.shape, %s.shape, sizeof %s.shape); memcpy(%s.valid, %s.valid, sizeof %s.valid);", dst, x, dst, dst,
                x, dst);
    zero(g, dst, esize(dt));
    pld_cg_emit(g, "pc_view_tile(&vo, &%s); pc_view_tile(&vs, &%s); pc_view_tile(&vx, &%s);", dst, a, x);
    pld_cg_emit(g, "PC_K(%d, gather, &vo, &vs, &vx, %s.valid, %d);", s, x, dim);
    g->ind--;
    pld_cg_emit(g, "}");
    return 0;
}

static int gen_gather(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    char a[32], x[32];
    if (pld_cg_tile_operand(g, pld_op_bound(e, 0), e, a) || pld_cg_tile_operand(g, pld_op_bound(e, 1), e, x))
        return -1;
    return pld_cg_lay_gather(g, s, dst, a, x, aty(e, 0)->dtype, -1);
}

/* pl.tile.scatter: dst (already a copy of the target) updated from src by index tile x */
int pld_cg_lay_scatter(cg_t *g, int s, const char *op, const char *dst, const char *src, const char *x)
{
    pld_cg_emit(g, "if (%s.shape[0] < %s.valid[0] || %s.shape[1] < %s.valid[1])", x, src, x, src);
    pld_cg_emit(g, "    return pc_cold(), rt->fail(bk, %d, \"%s: the index does not cover src's valid box, or src does not fit\");", s, op);
    pld_cg_emit(g, "{ pc_view vo, vs, vx; pc_view_tile(&vo, &%s); pc_view_tile(&vs, &%s); pc_view_tile(&vx, &%s);", dst, src, x);
    pld_cg_emit(g, "  PC_K(%d, scatter, &vo, &vs, &vx, %s.valid, 0); }", s, src);
    return 0;
}

static int gen_scatter(cg_t *g, const pld_expr_t *e, const char *dst, size_t room, int s)
{
    char b[32], x[32];
    if (pld_cg_tile_into(g, pld_op_bound(e, 0), dst, room) || pld_cg_tile_operand(g, pld_op_bound(e, 1), e, b) ||
        pld_cg_tile_operand(g, pld_op_bound(e, 2), e, x))
        return -1;
    const pld_type_t *td = aty(e, 0), *ts = aty(e, 1), *tx = aty(e, 2);
    if (!td || !ts || !tx || td->rank != 2 || ts->rank != 2 || tx->rank != 2)
        return always_fail(g, s, opname(e), ": the index does not cover src's valid box, or src does not fit");
    return pld_cg_lay_scatter(g, s, opname(e), dst, b, x);
}

static int gen_sort32(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    char a[32], x[32];
    if (pld_cg_tile_operand(g, pld_op_bound(e, 0), e, a) || pld_cg_tile_operand(g, pld_op_bound(e, 1), e, x))
        return -1;
    const pld_type_t *ta = aty(e, 0), *tx = aty(e, 1);
    if (!ta || !tx || ta->rank != 2 || tx->rank != 2 || sdim(ta, 0) != sdim(tx, 0) || ta->dtype != PLD_DT_FP32)
        return always_fail(g, s, opname(e), " needs 2-D FP32 sources of one row count (pairs: an even column count)");
    if (sdim(tx, 1) != sdim(ta, 1) || sdim(ta, 1) % 32 || esize(tx->dtype) != 4)
        return always_fail(g, s, opname(e), ": idx must have src's shape (columns a multiple of 32), 4-byte elements");
    pld_cg_emit(g, "{ int64_t shp[2] = {%s.shape[0], 2 * %s.shape[1]}; pc_view vo, vs, vx;", a, a);
    g->ind++;
    set_desc(g, dst, PLD_DT_FP32, "2", "shp", "");
    pld_cg_emit(g, "pc_view_tile(&vo, &%s); pc_view_tile(&vs, &%s); pc_view_tile(&vx, &%s);", dst, a, x);
    pld_cg_emit(g, "PC_K(%d, sort32, &vo, &vs, &vx);", s);
    g->ind--;
    pld_cg_emit(g, "}");
    return 0;
}

static int gen_mrgsort(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    const int fmt1 = !absent(pld_op_bound(e, 6));
    char nm[5][32];
    const pld_type_t *ty[5];
    int ns = 0;
    for (int i = 0; i < (fmt1 ? 1 : 5); i++) {
        if (i > 0 && absent(pld_op_bound(e, i)))
            continue;
        if (pld_cg_tile_operand(g, pld_op_bound(e, i), e, nm[ns]))
            return -1;
        ty[ns++] = aty(e, i);
    }
    int bl = -1;
    if (fmt1) {
        if ((bl = iarg(g, e, 6, 0)) < 0)
            return -1;
        pld_cg_emit(g, "if (t%d <= 0 || t%d %% 64)", bl, bl);
        pld_cg_emit(g, "    PC_FAILF(%d, \"%s: block_len %%lld is not a positive multiple of 64\", (long long)t%d);", s,
                    opname(e), bl);
    }
    const int nsrc = fmt1 ? 1 : ns - 1;
    const int64_t R = sdim(ty[0], 0);
    for (int i = 0; i < ns; i++)
        if (!ty[i] || ty[i]->rank != 2 || sdim(ty[i], 0) != R ||
            (i < nsrc && (ty[i]->dtype != PLD_DT_FP32 || sdim(ty[i], 1) % 2)))
            return always_fail(g, s, opname(e), " needs 2-D FP32 sources of one row count (pairs: an even column count)");
    /* format 2 with src0 alone: it is the tmp, nothing is merged (sim's zero tile) */
    int64_t cols = 0;
    for (int i = 0; i < nsrc; i++)
        cols += sdim(ty[i], 1);
    pld_cg_emit(g, "{ int64_t shp[2] = {%lld, %lld}; pc_view vo, vs[4]; const pc_view *sv[4] = {NULL};", (long long)R,
                (long long)(fmt1 ? cols : sdim(ty[ns - 1], 1)));
    g->ind++;
    set_desc(g, dst, PLD_DT_FP32, "2", "shp", "");
    zero(g, dst, 4);
    pld_cg_emit(g, "pc_view_tile(&vo, &%s);", dst);
    for (int i = 0; i < nsrc; i++)
        pld_cg_emit(g, "pc_view_tile(&vs[%d], &%s); sv[%d] = &vs[%d];", i, nm[i], i, i);
    if (fmt1)
        pld_cg_emit(g, "PC_K(%d, mrgsort, &vo, sv, 1, t%d);", s, bl);
    else
        pld_cg_emit(g, "PC_K(%d, mrgsort, &vo, sv, %d, 0);", s, nsrc);
    g->ind--;
    pld_cg_emit(g, "}");
    return 0;
}

/* ---------------------------------------------------------------- mask patterns, gather_row */

/* the column stride and first column a MaskPattern (1..7) selects */
static void mask_cols(int m, int *stride, int *first)
{
    *stride = m <= 2 ? 2 : m <= 6 ? 4 : 1;
    *first = m == 2 ? 1 : m >= 3 && m <= 6 ? m - 3 : 0;
}

static int gen_gather_mask(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    char a[32];
    int m = pld_check_mask_pattern(pld_op_bound(e, 1)), stride, first;
    if (pld_cg_tile_operand(g, pld_op_bound(e, 0), e, a))
        return -1;
    mask_cols(m, &stride, &first);
    const pld_type_t *ta = aty(e, 0);
    pld_dtype_t od = e->type && e->type->dtype != PLD_DT_NONE ? e->type->dtype : ta->dtype;
    if (m < 0 || ta->rank != 2 || sdim(ta, 1) % stride || esize(od) != esize(ta->dtype))
        return always_fail(g, s, opname(e), ": bad mask pattern, shape or output dtype");
    const int es = esize(od);
    pld_cg_emit(g, "{ int64_t shp[2] = {%s.shape[0], %s.shape[1] / %d}, z[2] = {0, %d}; pc_view vo, sel;", a, a, stride, first);
    g->ind++;
    set_desc(g, dst, od, "2", "shp", "");
    pld_cg_emit(g, "pc_view_tile(&vo, &%s); pc_view_tile(&sel, &%s); pc_view_box(&sel, z, shp, %d);", dst, a, es);
    pld_cg_emit(g, "sel.strides[1] *= %d; sel.dt = %d;", stride, (int)od);
    pld_cg_emit(g, "PC_K(%d, copy, &vo, &sel);", s);
    g->ind--;
    pld_cg_emit(g, "}");
    return 0;
}

static int gen_scatter_mask(cg_t *g, const pld_expr_t *e, const char *dst, size_t room, int s)
{
    char b[32];
    int m = pld_check_mask_pattern(pld_op_bound(e, 2)), stride, first;
    if (pld_cg_tile_into(g, pld_op_bound(e, 0), dst, room) || pld_cg_tile_operand(g, pld_op_bound(e, 1), e, b))
        return -1;
    mask_cols(m, &stride, &first);
    const pld_type_t *td = aty(e, 0), *ts = aty(e, 1);
    if (m < 0 || td->rank != 2 || ts->rank != 2 || td->dtype != ts->dtype || sdim(td, 0) != sdim(ts, 0) ||
        sdim(td, 1) != sdim(ts, 1) * stride)
        return always_fail(g, s, opname(e), ": bad mask pattern or shapes");
    pld_cg_emit(g, "{ int64_t z[2] = {0, %d}; pc_view sel, vs; pc_view_tile(&sel, &%s); pc_view_tile(&vs, &%s);", first, dst, b);
    pld_cg_emit(g, "  pc_view_box(&sel, z, vs.shape, %d); sel.strides[1] *= %d;", esize(td->dtype), stride);
    pld_cg_emit(g, "  PC_K(%d, copy, &sel, &vs); }", s);
    return 0;
}

/* the tensor value of operand i: a named tensor's C name, or a temporary */
static int tensor_operand(cg_t *g, const pld_expr_t *e, int i, char *nm)
{
    const pld_expr_t *a = pld_op_bound(e, i);
    if (a && a->kind == PLD_EX_NAME && a->slot >= 0 && g->slots[a->slot].kind == SK_TENSOR) {
        snprintf(nm, 32, "s%d", a->slot);
        return 0;
    }
    if (!a)
        return pld_cg_fail(g, e->span, "%s: a tensor operand is missing", opname(e));
    int t = tmp(g);
    snprintf(nm, 32, "t%d", t);
    pld_cg_emit(g, "pc_tensor t%d;", t);
    return pld_cg_tensor_into(g, a, nm);
}

static int gen_gather_row(cg_t *g, const pld_expr_t *e, const char *dst, size_t room, int s)
{
    char src[32];
    int nd, ns, nw, nv = -1;
    if (pld_cg_tile_into(g, pld_op_bound(e, 0), dst, room) || tensor_operand(g, e, 1, src))
        return -1;
    int doff = pld_cg_ilist(g, pld_op_bound(e, 2), &nd);
    int soff = doff < 0 ? -1 : pld_cg_ilist(g, pld_op_bound(e, 3), &ns);
    int win = soff < 0 ? -1 : pld_cg_ilist(g, pld_op_bound(e, 4), &nw);
    int tr = win < 0 ? -1 : iarg(g, e, 5, 0), vs = -1;
    if (tr < 0)
        return -1;
    if (!absent(pld_op_bound(e, 6)) && (vs = pld_cg_ilist(g, pld_op_bound(e, 6), &nv)) < 0)
        return -1;
    const pld_type_t *td = aty(e, 0), *tsr = aty(e, 1);
    if (nd != 2 || ns != 2 || nw != 2 || (nv >= 0 && nv != 2) || !td || !tsr || td->rank != 2 || tsr->rank != 2 ||
        td->dtype != tsr->dtype)
        return always_fail(g, s, opname(e), " needs 2-D operands of one dtype and 2-entry offsets and shapes");
    const int es = esize(td->dtype);
    pld_cg_emit(g, "{ const int64_t *doff = t%d, *soff = t%d, *win = t%d;", doff, soff, win);
    g->ind++;
    if (nv == 2)
        pld_cg_emit(g, "int64_t ext[2] = {t%d[0], t%d[1]};", vs, vs);
    else
        pld_cg_emit(g, "int64_t ext[2] = {win[0], win[1]};");
    pld_cg_emit(g, "int64_t dext[2] = {t%d ? ext[1] : ext[0], t%d ? ext[0] : ext[1]};", tr, tr);
    pld_cg_emit(g, "for (int k = 0; k < 2; k++)");
    pld_cg_emit(g, "    if (ext[k] < 0 || ext[k] > win[k] || soff[k] < 0 || soff[k] > %s.shape[k] - ext[k] || doff[k] < 0 || "
                   "doff[k] > %s.shape[k] - dext[k])", src, dst);
    pld_cg_emit(g, "        PC_FAILF(%d, \"%s: the window (dimension %%d: src %%lld + %%lld of %%lld, dst %%lld + %%lld of "
                   "%%lld) is outside src or dst\", k, (long long)soff[k], (long long)ext[k], (long long)%s.shape[k], "
                   "(long long)doff[k], (long long)dext[k], (long long)%s.shape[k]);", s, opname(e), src, dst);
    pld_cg_emit(g, "pc_view sw, dw; pc_view_tensor(&sw, &%s); pc_view_box(&sw, soff, ext, %d);", src, es);
    pld_cg_emit(g, "pc_view_tile(&dw, &%s); pc_view_box(&dw, doff, dext, %d);", dst, es);
    pld_cg_emit(g, "if (t%d) { int64_t q = sw.shape[0]; sw.shape[0] = sw.shape[1]; sw.shape[1] = q; q = sw.strides[0]; "
                   "sw.strides[0] = sw.strides[1]; sw.strides[1] = q; }", tr);
    pld_cg_emit(g, "PC_K(%d, copy, &dw, &sw);", s);
    g->ind--;
    pld_cg_emit(g, "}");
    return 0;
}

/* ---------------------------------------------------------------- views: reinterpret */

static int gen_reinterpret(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    char a[32];
    int n = -1, sh = -1;
    if (pld_cg_tile_operand(g, pld_op_bound(e, 0), e, a))
        return -1;
    const pld_type_t *ta = aty(e, 0);
    pld_dtype_t to = e->type ? e->type->dtype : PLD_DT_NONE;
    if (to == PLD_DT_NONE || !ta)
        return pld_cg_fail(g, e->span, "%s: the native backend needs a static dtype", opname(e));
    const int sb = esize(ta->dtype), db = esize(to);
    if (!absent(pld_op_bound(e, 2)) && (sh = pld_cg_ilist(g, pld_op_bound(e, 2), &n)) < 0)
        return -1;
    pld_cg_emit(g, "{ int full = 1; const int64_t na = pc_numel(%s.shape, %s.rank);", a, a);
    g->ind++;
    pld_cg_emit(g, "for (int d = 0; d < %s.rank; d++) full &= %s.valid[d] == %s.shape[d];", a, a, a);
    if (n >= 0) {
        pld_cg_emit(g, "const int64_t nb = pc_numel(t%d, %d);", sh, n);
        pld_cg_emit(g, "if (na * %d != nb * %d || !full) {", sb, db);
        pld_cg_emit(g, "    if (full) PC_FAILF(%d, \"%s: the shape does not hold the source's %%lld bytes\", (long long)(na * %d));",
                    s, opname(e), sb);
        pld_cg_emit(g, "    return pc_cold(), rt->fail(bk, %d, \"%s: an explicit shape needs a fully valid source\"); }", s, opname(e));
        pld_cg_emit(g, "%s.dt = %d; %s.rank = %d;", dst, (int)to, dst, n);
        pld_cg_emit(g, "for (int d = 0; d < %d; d++) %s.shape[d] = %s.valid[d] = t%d[d];", n, dst, dst, sh);
    } else {
        pld_cg_emit(g, "(void)full; const int r = %s.rank;", a);
        pld_cg_emit(g, "if (r < 1 || %s.shape[r - 1] * %d %% %d != 0 || %s.valid[r - 1] * %d %% %d != 0)", a, sb, db, a, sb, db);
        pld_cg_emit(g, "    PC_FAILF(%d, \"%s: the last dimension (valid %%lld of %%lld) does not scale to whole %s elements\", "
                       "(long long)(r ? %s.valid[r - 1] : 0), (long long)(r ? %s.shape[r - 1] : 0));", s, opname(e),
                    pld_dtype_name(to), a, a);
        pld_cg_copy_desc(g, dst, a);
        pld_cg_emit(g, "%s.dt = %d; %s.shape[r - 1] = %s.shape[r - 1] * %d / %d; %s.valid[r - 1] = %s.valid[r - 1] * %d / %d;",
                    dst, (int)to, dst, a, sb, db, dst, a, sb, db);
    }
    pld_cg_emit(g, "memmove(%s.data, %s.data, (size_t)(na * %d));", dst, a, sb);
    g->ind--;
    pld_cg_emit(g, "}");
    return 0;
}

/* ---------------------------------------------------------------- slice, reshape, assemble */

/* pl.tile.slice into dst; with view (a fused chain reads the window in place,
 * pld_cgen_fuse.c): everything but the copy, the offsets' C array in *view */
static int gen_slice(cg_t *g, const pld_expr_t *e, const char *dst, int s, int *view)
{
    char a[32];
    int ns, no, nv = -1, nd = -1;
    if (pld_cg_tile_operand(g, pld_op_bound(e, 0), e, a))
        return -1;
    int shp = pld_cg_ilist(g, pld_op_bound(e, 1), &ns);
    int off = shp < 0 ? -1 : pld_cg_ilist(g, pld_op_bound(e, 2), &no);
    if (off < 0)
        return -1;
    int val = -1, drop = -1;
    if (!absent(pld_op_bound(e, 3)) && (val = pld_cg_ilist(g, pld_op_bound(e, 3), &nv)) < 0)
        return -1;
    if (!absent(pld_op_bound(e, 4)) && (drop = pld_cg_ilist(g, pld_op_bound(e, 4), &nd)) < 0)
        return -1;
    const pld_type_t *ta = aty(e, 0);
    const int es = esize(ta->dtype);
    pld_cg_emit(g, "{ const int64_t *shp = t%d, *off = t%d; const int r = %s.rank;", shp, off, a);
    g->ind++;
    pld_cg_emit(g, "for (int d = 0; d < r; d++)");
    pld_cg_emit(g, "    if (d >= %d || d >= %d || off[d] < 0 || shp[d] < 0 || shp[d] > %s.shape[d] - off[d])", no, ns, a);
    pld_cg_emit(g, "        return pc_cold(), rt->fail(bk, %d, \"%s: the window is outside the tile\");", s, opname(e));
    pld_cg_emit(g, "%s.dt = %d; %s.rank = r;", dst, (int)ta->dtype, dst);
    pld_cg_emit(g, "for (int d = 0; d < r; d++) {");
    pld_cg_emit(g, "    int64_t room = %s.valid[d] - off[d];", a);
    pld_cg_emit(g, "    %s.shape[d] = shp[d]; %s.valid[d] = room < 0 ? 0 : room < shp[d] ? room : shp[d];", dst, dst);
    if (nv >= 0)
        pld_cg_emit(g, "    if (%d == r && t%d[d] < %s.valid[d]) %s.valid[d] = t%d[d] < 0 ? 0 : t%d[d];", nv, val, dst, dst, val, val);
    pld_cg_emit(g, "}");
    if (view) {
        *view = off;
    } else {
        pld_cg_emit(g, "pc_view vs, vo; pc_view_tile(&vs, &%s); pc_view_box(&vs, off, shp, %d); pc_view_tile(&vo, &%s);", a, es,
                    dst);
        pld_cg_emit(g, "PC_K(%d, copy, &vo, &vs);", s);
    }
    if (nd > 0) {
        /* the dropped unit dims (the interpreter's slice_drop_dims; tiles stay at least 2-D) */
        pld_cg_emit(g, "int isdrop[PC_MAX_RANK] = {0}, k = 0;");
        pld_cg_emit(g, "for (int j = 0; j < %d; j++) if (t%d[j] >= 0 && t%d[j] < r) isdrop[t%d[j]] = 1;", nd, drop, drop, drop);
        pld_cg_emit(g, "for (int d = 0; d < r; d++) {");
        pld_cg_emit(g, "    if (isdrop[d] && (%s.shape[d] != 1 || %s.valid[d] != 1))", dst, dst);
        pld_cg_emit(g, "        PC_FAILF(%d, \"%s: dropped dimension %%d has extent %%lld (valid %%lld), not 1\", d, "
                       "(long long)%s.shape[d], (long long)%s.valid[d]);", s, opname(e), dst, dst);
        pld_cg_emit(g, "    if (isdrop[d]) continue;");
        pld_cg_emit(g, "    %s.shape[k] = %s.shape[d]; %s.valid[k] = %s.valid[d]; k++;", dst, dst, dst, dst);
        pld_cg_emit(g, "}");
        pld_cg_emit(g, "int lift = k < 2 ? 2 - k : 0;");
        pld_cg_emit(g, "for (int d = k - 1; lift && d >= 0; d--) { %s.shape[d + lift] = %s.shape[d]; %s.valid[d + lift] = "
                       "%s.valid[d]; }", dst, dst, dst, dst);
        pld_cg_emit(g, "for (int d = 0; d < lift; d++) %s.shape[d] = %s.valid[d] = 1;", dst, dst);
        pld_cg_emit(g, "%s.rank = k + lift;", dst);
    }
    g->ind--;
    pld_cg_emit(g, "}");
    return 0;
}

static int gen_reshape(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    char a[32];
    int n;
    if (pld_cg_tile_operand(g, pld_op_bound(e, 0), e, a))
        return -1;
    int shp = pld_cg_ilist(g, pld_op_bound(e, 1), &n);
    if (shp < 0)
        return -1;
    const pld_type_t *ta = aty(e, 0);
    pld_cg_emit(g, "{ const int64_t n1 = pc_numel(%s.shape, %s.rank), n2 = pc_numel(t%d, %d);", a, a, shp, n);
    g->ind++;
    pld_cg_emit(g, "if (n1 != n2) PC_FAILF(%d, \"%s: %%lld elements cannot take %%lld\", (long long)n1, (long long)n2);", s,
                opname(e));
    pld_cg_emit(g, "int64_t iv[PC_MAX_RANK], ishape[PC_MAX_RANK]; const int ir = %s.rank;", a);
    pld_cg_emit(g, "memcpy(iv, %s.valid, sizeof iv); memcpy(ishape, %s.shape, sizeof ishape);", a, a);
    pld_cg_emit(g, "memmove(%s.data, %s.data, (size_t)n1 * %d);", dst, a, esize(ta->dtype));
    pld_cg_emit(g, "%s.dt = %d; %s.rank = %d;", dst, (int)ta->dtype, dst, n);
    pld_cg_emit(g, "for (int d = 0; d < %d; d++) %s.shape[d] = t%d[d];", n, dst, shp);
    pld_cg_emit(g, "PC_K(%d, reshape_valid, ir, ishape, iv, %d, t%d, %s.valid);", s, n, shp, dst);
    g->ind--;
    pld_cg_emit(g, "}");
    return 0;
}

static void shape_str(char *buf, size_t n, const pld_type_t *t)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < t->rank && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? ", " : "", (long long)t->shape[i].v);
    if (k < n)
        snprintf(buf + k, n - k, "]");
}

static int gen_assemble(cg_t *g, const pld_expr_t *e, const char *dst, size_t room, int s)
{
    char b[32];
    int n;
    const pld_type_t *td = aty(e, 0), *ts = aty(e, 1);
    if (!td || !ts || td->kind != PLD_TY_TILE || ts->kind != PLD_TY_TILE)
        return pld_cg_fail(g, e->span, "%s of a tensor is not compiled by the native backend here", opname(e));
    if (pld_cg_tile_into(g, pld_op_bound(e, 0), dst, room) || pld_cg_tile_operand(g, pld_op_bound(e, 1), e, b))
        return -1;
    int off = pld_cg_ilist(g, pld_op_bound(e, 2), &n);
    if (off < 0)
        return -1;
    if (n != td->rank || ts->rank != td->rank)
        return always_fail(g, s, opname(e), ": ranks differ");
    char ss[96], ds[96];
    shape_str(ss, sizeof ss, ts);
    shape_str(ds, sizeof ds, td);
    const int es = esize(td->dtype);
    pld_cg_emit(g, "{ const int64_t *off = t%d;", off);
    g->ind++;
    pld_cg_emit(g, "for (int d = 0; d < %d; d++)", n);
    pld_cg_emit(g, "    if (off[d] < 0 || %s.shape[d] > %s.shape[d] - off[d])", b, dst);
    pld_cg_emit(g, "        PC_FAILF(%d, \"%s: a %s source at offset %%lld in dimension %%d does not fit in the %s target\", "
                   "(long long)off[d], d);", s, opname(e), ss, ds);
    pld_cg_emit(g, "{ char m[256]; m[0] = 0; if (rt->k->assemble_valid(%d, %s.shape, %s.valid, %s.valid, off, m, sizeof m)) "
                   "PC_FAILF(%d, \"%s %%s\", m); }", n, dst, dst, b, s, opname(e));
    pld_cg_emit(g, "pc_view vs, vd; pc_view_tile(&vs, &%s); pc_view_tile(&vd, &%s); pc_view_box(&vd, off, vs.shape, %d);", b, dst,
                es);
    pld_cg_emit(g, "PC_K(%d, copy, &vd, &vs);", s);
    g->ind--;
    pld_cg_emit(g, "}");
    return 0;
}

/* ---------------------------------------------------------------- valid shapes: fillpad, set_validshape */

static int gen_fillpad(cg_t *g, const pld_expr_t *e, const char *dst, size_t room, int s)
{
    const int expand = e->op == PLD_OPID_TILE_FILLPAD_EXPAND, inplace = e->op == PLD_OPID_TILE_FILLPAD_INPLACE;
    char a[32];
    const pld_type_t *ta = aty(e, 0);
    if (inplace) {
        if (pld_cg_tile_into(g, pld_op_bound(e, 0), dst, room))
            return -1;
        snprintf(a, sizeof a, "%s", dst);
    } else if (pld_cg_tile_operand(g, pld_op_bound(e, 0), e, a)) {
        return -1;
    }
    int mode = pld_check_pad_mode(pld_op_bound(e, expand ? 2 : 1));
    if (mode < 0)
        return always_fail(g, s, opname(e), ": pad_value is not one of the three padding modes");
    int ns = -1, n = 0;
    if (expand && (ns = pld_cg_ilist(g, pld_op_bound(e, 1), &n)) < 0)
        return -1;
    if (expand && n != ta->rank) {
        char m[96];
        snprintf(m, sizeof m, ": shape has %d entries, the source rank %d", n, ta->rank);
        return always_fail(g, s, opname(e), m);
    }
    pld_cg_emit(g, "{ int64_t valid[PC_MAX_RANK], shp[PC_MAX_RANK]; pc_view vs, vd;");
    g->ind++;
    pld_cg_emit(g, "memcpy(valid, %s.valid, sizeof valid); memcpy(shp, %s.shape, sizeof shp);", a, a);
    if (expand) {
        pld_cg_emit(g, "for (int d = 0; d < %d; d++) {", n);
        pld_cg_emit(g, "    if (t%d[d] < shp[d])", ns);
        pld_cg_emit(g, "        PC_FAILF(%d, \"%s: destination dimension %%d (%%lld) is smaller than the source's (%%lld)\", d, "
                       "(long long)t%d[d], (long long)shp[d]);", s, opname(e), ns);
        pld_cg_emit(g, "    shp[d] = t%d[d];", ns);
        pld_cg_emit(g, "}");
    }
    pld_cg_emit(g, "pc_view_tile(&vs, &%s);", a);
    if (!inplace)
        set_desc(g, dst, ta->dtype, "vs.rank", "shp", "");
    else
        pld_cg_emit(g, "memcpy(%s.valid, %s.shape, sizeof %s.valid);", dst, dst, dst);
    pld_cg_emit(g, "pc_view_tile(&vd, &%s);", dst);
    pld_cg_emit(g, "PC_K(%d, fillpad, &vd, &vs, valid, %d);", s, mode);
    g->ind--;
    pld_cg_emit(g, "}");
    return 0;
}

static int gen_set_validshape(cg_t *g, const pld_expr_t *e, const char *dst, size_t room, int s)
{
    if (pld_cg_tile_into(g, pld_op_bound(e, 0), dst, room))
        return -1;
    int r0 = iarg(g, e, 1, 0), r1 = r0 < 0 ? -1 : iarg(g, e, 2, 0);
    if (r1 < 0)
        return -1;
    const pld_type_t *ta = aty(e, 0);
    if (!ta || ta->rank != 2)
        return always_fail(g, s, opname(e), ": the tile must be 2-D");
    pld_cg_emit(g, "{ const int64_t rc[2] = {t%d, t%d};", r0, r1);
    pld_cg_emit(g, "  for (int d = 0; d < 2; d++) %s.valid[d] = rc[d] < 0 ? 0 : rc[d] > %s.shape[d] ? %s.shape[d] : rc[d]; }", dst,
                dst, dst);
    return 0;
}

/* ---------------------------------------------------------------- the GM gather / scatter family */

/* operand i, a tile or a tensor: its C name in nm, *tile set; the view is
 * built with pc_view_tile / pc_view_tensor */
static int shaped_operand(cg_t *g, const pld_expr_t *e, int i, char *nm, int *tile)
{
    const pld_type_t *t = aty(e, i);
    *tile = t && t->kind == PLD_TY_TILE;
    return *tile ? pld_cg_tile_operand(g, pld_op_bound(e, i), e, nm) : tensor_operand(g, e, i, nm);
}

static int gen_mgather(cg_t *g, const pld_expr_t *e, const char *dst, size_t room, int s)
{
    char mn[32], xn[32], sn[32];
    int mt, xt, nv = -1, vs = -1;
    const int co = pld_check_mode_arg(pld_op_bound(e, 2), pld_mgather_coalesce, 2, 0);
    const int oob = pld_check_mode_arg(pld_op_bound(e, 3), pld_mgather_oob, 4, 0);
    if (shaped_operand(g, e, 0, mn, &mt) || shaped_operand(g, e, 1, xn, &xt))
        return -1;
    const int mat = !xt;
    if (mat && !absent(pld_op_bound(e, 6)) && (vs = pld_cg_ilist(g, pld_op_bound(e, 6), &nv)) < 0)
        return -1;
    const int scr = mat && co == 1 && !absent(pld_op_bound(e, 5));
    if (scr && tensor_operand(g, e, 5, sn))
        return -1;
    pld_dtype_t dt = aty(e, 0)->dtype;
    const int es = esize(dt);
    pld_cg_emit(g, "{ pc_view vm, vx, vo, vsc; %s(&vm, &%s); %s(&vx, &%s);", mt ? "pc_view_tile" : "pc_view_tensor", mn,
                xt ? "pc_view_tile" : "pc_view_tensor", xn);
    g->ind++;
    pld_cg_emit(g, "const int64_t n = pc_numel(vm.shape, vm.rank), last = vm.shape[vm.rank - 1]; const int rowvec = vx.shape[0] "
                   "== 1; (void)rowvec; (void)last;");
    if (co == 0)
        pld_cg_emit(g, "int64_t shp[2] = {vx.shape[rowvec ? 1 : 0], last};");
    else
        pld_cg_emit(g, "int64_t shp[2] = {vx.shape[0], vx.shape[1]};");
    if (scr) {
        pld_cg_emit(g, "pc_view_tensor(&vsc, &%s);", sn);
        pld_cg_emit(g, "if (pc_numel(vsc.shape, vsc.rank) < shp[0] * shp[1])");
        pld_cg_emit(g, "    PC_FAILF(%d, \"%s: scratch holds %%lld elements, the gather needs %%lld\", (long long)pc_numel(vsc.shape, "
                       "vsc.rank), (long long)(shp[0] * shp[1]));", s, opname(e));
    }
    char vcheck[160] = "";
    if (nv >= 0 && nv != 2)
        snprintf(vcheck, sizeof vcheck, " || 1");
    else if (nv == 2)
        snprintf(vcheck, sizeof vcheck, " || t%d[0] > shp[0] || t%d[1] > shp[1]", vs, vs);
    pld_cg_emit(g, "if (vm.rank < %d || vx.rank != 2 || n == 0%s)", co == 0 ? 2 : 1, vcheck);
    pld_cg_emit(g, "    return pc_cold(), rt->fail(bk, %d, \"%s needs a non-empty mem (rank >= 2 in row mode), a 2-D index and a valid_shape "
                   "within the result\");", s, opname(e));
    pld_cg_emit(g, "if ((size_t)(shp[0] * shp[1] * %d) > (size_t)%zu) return pc_cold(), rt->fail(bk, %d, \"%s: internal: tile storage too "
                   "small\");", es, room, s, opname(e));
    set_desc(g, dst, dt, "2", "shp", "");
    if (mat && nv == 2)
        pld_cg_emit(g, "%s.valid[0] = t%d[0]; %s.valid[1] = t%d[1];", dst, vs, dst, vs);
    else if (!mat && co == 0)
        pld_cg_emit(g, "%s.valid[0] = %s.valid[rowvec ? 1 : 0]; %s.valid[1] = last;", dst, xn, dst);
    else if (!mat)
        pld_cg_emit(g, "%s.valid[0] = %s.valid[0]; %s.valid[1] = %s.valid[1];", dst, xn, dst, xn);
    zero(g, dst, es);
    pld_cg_emit(g, "pc_view_tile(&vo, &%s);", dst);
    pld_cg_emit(g, "PC_K(%d, mgather, &vo, &vm, &vx, %s.valid, %d, %d, %s);", s, dst, co == 0, oob, scr ? "&vsc" : "NULL");
    g->ind--;
    pld_cg_emit(g, "}");
    return 0;
}

/* pl.tile.mscatter: the output tensor updated in place; dst (a pc_tensor) = it */
int pld_cg_mscatter(cg_t *g, const pld_expr_t *e, const char *dst)
{
    char sn[32], xn[32], on[32];
    const int s = pld_cg_site(g, e);
    if (pld_cg_tile_operand(g, pld_op_bound(e, 0), e, sn) || pld_cg_tile_operand(g, pld_op_bound(e, 1), e, xn) ||
        tensor_operand(g, e, 2, on))
        return -1;
    const pld_type_t *ts = aty(e, 0), *tx = aty(e, 1), *to = aty(e, 2);
    if (!to || to->kind == PLD_TY_TILE || !tx || !ts || tx->rank != ts->rank || to->dtype != ts->dtype)
        return always_fail(g, s, opname(e), " needs an index of src's rank and a tensor of src's dtype");
    pld_cg_emit(g, "{ pc_view vo, vs, vx; pc_view_tensor(&vo, &%s); pc_view_tile(&vs, &%s); pc_view_tile(&vx, &%s);", on, sn, xn);
    pld_cg_emit(g, "  PC_K(%d, mscatter, &vo, &vs, &vx, %s.valid); }", s, sn);
    pld_cg_emit(g, "%s = %s;", dst, on);
    return 0;
}

static int gen_gatherb(cg_t *g, const pld_expr_t *e, const char *dst, int s)
{
    char a[32], x[32];
    if (pld_cg_tile_operand(g, pld_op_bound(e, 0), e, a) || pld_cg_tile_operand(g, pld_op_bound(e, 1), e, x))
        return -1;
    const pld_type_t *ta = aty(e, 0), *tx = aty(e, 1);
    pld_dtype_t od = e->type && e->type->dtype != PLD_DT_NONE ? e->type->dtype : ta->dtype;
    const int k = 32 / esize(od);
    if (!tx || tx->rank != 2 || ta->rank != 2)
        return always_fail(g, s, opname(e), " needs a 2-D src and a 2-D offset tile");
    pld_cg_emit(g, "{ int64_t shp[2] = {%s.shape[0], %s.shape[1] * %d}; pc_view vo, vs, vx;", x, x, k);
    g->ind++;
    set_desc(g, dst, od, "2", "shp", "");
    pld_cg_emit(g, "%s.valid[0] = %s.valid[0]; %s.valid[1] = %s.valid[1] * %d;", dst, x, dst, x, k);
    zero(g, dst, esize(od));
    pld_cg_emit(g, "pc_view_tile(&vo, &%s); pc_view_tile(&vs, &%s); pc_view_tile(&vx, &%s);", dst, a, x);
    pld_cg_emit(g, "PC_K(%d, gatherb, &vo, &vs, &vx, %s.valid);", s, x);
    g->ind--;
    pld_cg_emit(g, "}");
    return 0;
}

static int gen_scatter_update(cg_t *g, const pld_expr_t *e, const char *dst, size_t room, int s)
{
    int pos[3];
    if (!pld_check_scatter_update_args((const pld_expr_t *const *)e->bound, pos))
        return always_fail(g, s, opname(e), ": arguments do not match a call form");
    char x[32], b[32];
    if (pld_cg_tile_into(g, pld_op_bound(e, 0), dst, room) || pld_cg_tile_operand(g, pld_op_bound(e, pos[1]), e, x) ||
        pld_cg_tile_operand(g, pld_op_bound(e, pos[2]), e, b))
        return -1;
    const pld_type_t *ti = aty(e, 0), *tx = aty(e, pos[1]), *ts = aty(e, pos[2]);
    if (!ti || !tx || !ts || tx->rank != 2 || sdim(ts, ts->rank - 1) != sdim(ti, ti->rank - 1) || ts->dtype != ti->dtype)
        return always_fail(g, s, opname(e), " needs a 2-D index and src rows of input's length and dtype");
    pld_cg_emit(g, "{ pc_view vo, vx, vs; pc_view_tile(&vo, &%s); pc_view_tile(&vx, &%s); pc_view_tile(&vs, &%s);", dst, x, b);
    pld_cg_emit(g, "  PC_K(%d, scatter_update, &vo, &vx, &vs, %s.valid); }", s, x);
    return 0;
}

/* the two names `d, c = op(...)` binds (gather_compare's results): 0 when
 * targets is a tuple of two names of local kind `kind` (word: its name in
 * the message) and e's type a pair */
int pld_cg_two_targets(cg_t *g, const pld_expr_t *targets, const pld_expr_t *e, int kind, const char *word)
{
    const pld_type_t *rt = e->type;
    if (targets->kind != PLD_EX_TUPLE || targets->u.seq.n != 2 || !rt || rt->kind != PLD_TY_TUPLE || rt->nelems != 2)
        return pld_cg_fail(g, e->span, "%s: the native backend needs two names for its two results", opname(e));
    for (int i = 0; i < 2; i++) {
        const pld_expr_t *t = targets->u.seq.items[i];
        if (t->kind != PLD_EX_NAME || t->slot < 0 || g->slots[t->slot].kind != kind)
            return pld_cg_fail(g, t->span, "%s: the native backend needs two %s names for its results", opname(e), word);
    }
    return 0;
}

/* `d, c = pl.tile.gather_compare(...)`: both tiles made in temporaries, then
 * bound to the two names */
int pld_cg_gather_compare(cg_t *g, const pld_expr_t *targets, const pld_expr_t *e)
{
    const int s = pld_cg_site(g, e);
    const pld_type_t *rt = e->type;
    if (pld_cg_two_targets(g, targets, e, SK_TILE, "tile"))
        return -1;
    int64_t bd = tile_bytes(rt->elems[0]), bc = tile_bytes(rt->elems[1]);
    if (bd < 0 || bc < 0)
        return pld_cg_fail(g, e->span, "%s: the results need static shapes for the native backend", opname(e));
    const int mode = pld_check_mode_arg(pld_op_bound(e, 3), pld_gather_cmp_modes, 6, 0);
    char a[32];
    if (pld_cg_tile_operand(g, pld_op_bound(e, 0), e, a))
        return -1;
    int fl;
    pld_dtype_t kd;
    int kv = pld_cg_scalar(g, pld_op_bound(e, 1), &fl, &kd);
    int oc = kv < 0 ? -1 : iarg(g, e, 5, 0);
    if (oc < 0)
        return -1;
    const pld_type_t *ta = aty(e, 0);
    if (!ta || ta->rank != 2)
        return always_fail(g, s, opname(e), " needs a 2-D src and a scalar kvalue");
    const int td = pld_cg_temp_tile(g, (size_t)bd), tc = pld_cg_temp_tile(g, (size_t)bc);
    char dn[32], cn[32];
    snprintf(dn, sizeof dn, "t%d", td);
    snprintf(cn, sizeof cn, "t%d", tc);
    pld_cg_emit(g, "{ int64_t ds[2] = {%s.shape[0], t%d}, cs[2] = {1, %s.shape[0]}; pc_view dv, cv, sv;", a, oc, a);
    g->ind++;
    pld_cg_emit(g, "if (ds[1] < 0 || (size_t)(ds[0] * ds[1] * 4) > (size_t)%lld) return pc_cold(), rt->fail(bk, %d, \"%s: internal: tile "
                   "storage too small\");", (long long)bd, s, opname(e));
    set_desc(g, dn, PLD_DT_INT32, "2", "ds", "");
    zero(g, dn, 4);
    set_desc(g, cn, rt->elems[1]->dtype, "2", "cs", "");
    zero(g, cn, esize(rt->elems[1]->dtype));
    pld_cg_emit(g, "pc_view_tile(&dv, &%s); pc_view_tile(&cv, &%s); pc_view_tile(&sv, &%s);", dn, cn, a);
    pld_cg_emit(g, "PC_K(%d, gather_compare, &dv, &cv, &sv, %s.valid, %d, (double)t%d, t%d);", s, a, mode, kv, oc);
    g->ind--;
    pld_cg_emit(g, "}");
    for (int i = 0; i < 2; i++) {
        const pld_expr_t *t = targets->u.seq.items[i];
        char v[32];
        snprintf(v, sizeof v, "s%d", t->slot);
        pld_cg_copy_tile(g, v, i ? cn : dn, rt->elems[i]->dtype);
        pld_cg_bound_tile(g, t->slot, PLD_MEM_VEC, t);
    }
    return 0;
}

/* ---------------------------------------------------------------- dispatch */

int pld_cg_is_layout(int op)
{
    switch (op) {
    case PLD_OPID_TILE_SLICE: case PLD_OPID_TILE_RESHAPE: case PLD_OPID_TILE_ASSEMBLE: case PLD_OPID_TILE_TRANSPOSE:
    case PLD_OPID_TILE_TRANSPOSE_VIEW: case PLD_OPID_TILE_REINTERPRET_VIEW: case PLD_OPID_TILE_EXTRACT:
    case PLD_OPID_TILE_CONCAT: case PLD_OPID_TILE_FILLPAD: case PLD_OPID_TILE_FILLPAD_INPLACE:
    case PLD_OPID_TILE_FILLPAD_EXPAND: case PLD_OPID_TILE_SET_VALIDSHAPE: case PLD_OPID_TILE_GATHER:
    case PLD_OPID_TILE_SCATTER: case PLD_OPID_TILE_SORT32: case PLD_OPID_TILE_MRGSORT: case PLD_OPID_TILE_GATHER_ROW:
    case PLD_OPID_TILE_GATHER_MASK: case PLD_OPID_TILE_SCATTER_MASK: case PLD_OPID_TILE_MGATHER:
    case PLD_OPID_TILE_GATHERB: case PLD_OPID_TILE_SCATTER_UPDATE:
        return 1;
    default:
        return 0;
    }
}

int pld_cg_layout(cg_t *g, const pld_expr_t *e, const char *dst, size_t room, int s)
{
    switch (e->op) {
    case PLD_OPID_TILE_SLICE: return gen_slice(g, e, dst, s, NULL);
    case PLD_OPID_TILE_RESHAPE: return gen_reshape(g, e, dst, s);
    case PLD_OPID_TILE_ASSEMBLE: return gen_assemble(g, e, dst, room, s);
    case PLD_OPID_TILE_TRANSPOSE:
    case PLD_OPID_TILE_TRANSPOSE_VIEW: return gen_transpose(g, e, dst, s);
    case PLD_OPID_TILE_REINTERPRET_VIEW: return gen_reinterpret(g, e, dst, s);
    case PLD_OPID_TILE_EXTRACT: return gen_extract(g, e, dst, s);
    case PLD_OPID_TILE_CONCAT: return gen_concat(g, e, dst, s);
    case PLD_OPID_TILE_FILLPAD:
    case PLD_OPID_TILE_FILLPAD_INPLACE:
    case PLD_OPID_TILE_FILLPAD_EXPAND: return gen_fillpad(g, e, dst, room, s);
    case PLD_OPID_TILE_SET_VALIDSHAPE: return gen_set_validshape(g, e, dst, room, s);
    case PLD_OPID_TILE_GATHER: return gen_gather(g, e, dst, s);
    case PLD_OPID_TILE_SCATTER: return gen_scatter(g, e, dst, room, s);
    case PLD_OPID_TILE_SORT32: return gen_sort32(g, e, dst, s);
    case PLD_OPID_TILE_MRGSORT: return gen_mrgsort(g, e, dst, s);
    case PLD_OPID_TILE_GATHER_ROW: return gen_gather_row(g, e, dst, room, s);
    case PLD_OPID_TILE_GATHER_MASK: return gen_gather_mask(g, e, dst, s);
    case PLD_OPID_TILE_SCATTER_MASK: return gen_scatter_mask(g, e, dst, room, s);
    case PLD_OPID_TILE_MGATHER: return gen_mgather(g, e, dst, room, s);
    case PLD_OPID_TILE_GATHERB: return gen_gatherb(g, e, dst, s);
    case PLD_OPID_TILE_SCATTER_UPDATE: return gen_scatter_update(g, e, dst, room, s);
    default: return pld_cg_fail(g, e->span, "internal: %s is not a layout op", opname(e));
    }
}

int pld_cg_lay_slice_view(cg_t *g, const pld_expr_t *e, const char *dst, int *off)
{
    return gen_slice(g, e, dst, pld_cg_site(g, e), off);
}
