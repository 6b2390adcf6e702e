/* pld_cgen_mem.c - memory and layout in generated code (pld_cgen_int.h): the
 * tile and tensor value of an expression (the dispatch to pld_cgen_compute.c and
 * pld_cgen_dist.c), tile descriptors and storage, element read / write,
 * pl.tile.load / store, create / full, move. */
#include "pld_cgen_int.h"
#include "pld_crt.h"
#include "pld_kern.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- elements */

/* tensor.read / tile.read (write = 0), tensor.write / tile.write (1):
 * bounds-checked element access. */
int pld_cg_elem_access(cg_t *g, const pld_expr_t *e, int write, int *fl, pld_dtype_t *dt)
{
    const pld_expr_t *obj = pld_op_bound(e, 0);
    if (!obj || obj->kind != PLD_EX_NAME || obj->slot < 0)
        return pld_cg_fail(g, e->span, "%s of an expression: the native backend needs a named tensor or tile",
                           pld_op_info((pld_op_id_t)e->op)->name);
    const cslot_t *s = &g->slots[obj->slot];
    int tile = s->kind == SK_TILE;
    if (!tile && s->kind != SK_TENSOR)
        return pld_cg_fail(g, e->span, "'%s' is not a tensor or a tile here", obj->u.name);
    int n;
    int idx = pld_cg_ilist(g, pld_op_bound(e, 1), &n);
    if (idx < 0)
        return -1;
    int v = -1, vf = 0;
    pld_dtype_t vd;
    if (write && (v = pld_cg_scalar(g, pld_op_bound(e, 2), &vf, &vd)) < 0)
        return -1;
    int st = pld_cg_site(g, e), off = tmp(g);
    char strd[32] = "NULL";
    if (!tile)
        snprintf(strd, sizeof strd, "s%d.stride", obj->slot);
    pld_cg_emit(g, "int64_t t%d = 0;", off);
    /* a tensor parameter the unit never assigns has its declared shape
     * (checked at entry): constants in the bounds checks */
    const pld_type_t *fx = tile ? NULL : s->fixed;
    if (n >= 1 && n <= PC_MAX_RANK) {
        /* the in-range case inline (issue 44): one index per dimension, each
         * in [0, extent) (one unsigned compare); anything else takes
         * pc_elem_off (its message, or a flat index), which alone sees the
         * index array and the offset's address: in the hot path they stay
         * in registers */
        pld_buf_t c, o;
        pld_buf_init(&c);
        pld_buf_init(&o);
        if (fx && fx->rank != n)
            pld_buf_puts(&c, "0");
        else if (!fx)
            pld_buf_printf(&c, "s%d.rank == %d", obj->slot, n);
        else
            pld_buf_puts(&c, "1");
        for (int d = 0; d < n; d++) {
            if (fx && fx->rank == n)
                pld_buf_printf(&c, " && (uint64_t)t%d[%d] < UINT64_C(%lld)", idx, d, (long long)fx->shape[d].v);
            else
                pld_buf_printf(&c, " && (uint64_t)t%d[%d] < (uint64_t)s%d.shape[%d]", idx, d, obj->slot, d);
            if (!tile)
                pld_buf_printf(&o, "%st%d[%d] * s%d.stride[%d]", d ? " + " : "", idx, d, obj->slot, d);
            else if (d == 0) /* packed row-major: Horner over the physical shape */
                pld_buf_printf(&o, "%.*st%d[0]", n - 1, "((((", idx);
            else
                pld_buf_printf(&o, ") * s%d.shape[%d] + t%d[%d]", obj->slot, d, idx, d);
        }
        pld_cg_emit(g, "if (__builtin_expect(%s, 1)) t%d = %s; else", pld_buf_str(&c), off, pld_buf_str(&o));
        pld_buf_fini(&c);
        pld_buf_fini(&o);
    }
    {
        pld_buf_t ix;
        pld_buf_init(&ix);
        for (int d = 0; d < n; d++)
            pld_buf_printf(&ix, "%st%d[%d]", d ? ", " : "", idx, d);
        pld_cg_emit(g, "{ int64_t ix_[%d] = {%s}, o_ = 0; char m[200]; if (pc_elem_off(\"%s\", s%d.shape, %s, s%d.rank, ix_, %d, "
                       "&o_, m, sizeof m)) return pc_cold(), rt->fail(bk, %d, m); t%d = o_; }",
                    n > 0 ? n : 1, n > 0 ? pld_buf_str(&ix) : "0", pld_op_info((pld_op_id_t)e->op)->name, obj->slot, strd,
                    obj->slot, n, st, off);
        pld_buf_fini(&ix);
    }
    pld_dtype_t edt = obj->type && obj->type->dtype != PLD_DT_NONE ? obj->type->dtype : PLD_DT_NONE;
    if (edt == PLD_DT_NONE)
        return pld_cg_fail(g, e->span, "'%s' has no static dtype", obj->u.name);
    *fl = is_float_dt(edt);
    *dt = edt;
    if (write) {
        if (edt == PLD_DT_FP32)
            pld_cg_emit(g, "((float *)s%d.data)[t%d] = (float)%st%d;", obj->slot, off, vf ? "" : "(double)", v);
        else if (edt == PLD_DT_INT32)
            pld_cg_emit(g, "((int32_t *)s%d.data)[t%d] = (int32_t)%st%d;", obj->slot, off, vf ? "(int64_t)" : "", v);
        else if (is_float_dt(edt))
            pld_cg_emit(g, "rt->set_f(s%d.data, %d, t%d, (double)t%d);", obj->slot, (int)edt, off, v);
        else
            pld_cg_emit(g, "rt->set_i(s%d.data, %d, t%d, (int64_t)t%d);", obj->slot, (int)edt, off, v);
        return 0;
    }
    int r = tmp(g);
    if (edt == PLD_DT_FP32)
        pld_cg_emit(g, "double t%d = ((const float *)s%d.data)[t%d];", r, obj->slot, off);
    else if (edt == PLD_DT_INT32)
        pld_cg_emit(g, "int64_t t%d = ((const int32_t *)s%d.data)[t%d];", r, obj->slot, off);
    else if (edt == PLD_DT_INT64 || edt == PLD_DT_INDEX)
        pld_cg_emit(g, "int64_t t%d = ((const int64_t *)s%d.data)[t%d];", r, obj->slot, off);
    else if (is_float_dt(edt))
        pld_cg_emit(g, "double t%d = rt->get_f(s%d.data, %d, t%d);", r, obj->slot, (int)edt, off);
    else
        pld_cg_emit(g, "int64_t t%d = rt->get_i(s%d.data, %d, t%d);", r, obj->slot, (int)edt, off);
    return r;
}

/* tensor.write / tile.write: the element store (0, or -1) */
int pld_cg_elem_write(cg_t *g, const pld_expr_t *e)
{
    int fl;
    pld_dtype_t d;
    return pld_cg_elem_access(g, e, 1, &fl, &d) < 0 ? -1 : 0;
}

/* the integer index expressions items[0..n) evaluated in order into C
 * locals idx[] (0, or -1 after an error) */
int pld_cg_int_indices(cg_t *g, pld_expr_t *const *items, int n, int *idx)
{
    for (int d = 0; d < n; d++) {
        int fl;
        pld_dtype_t dt;
        if ((idx[d] = pld_cg_scalar(g, items[d], &fl, &dt)) < 0)
            return -1;
        if (fl)
            return pld_cg_fail(g, items[d]->span, "an index must be an integer");
    }
    return 0;
}

/* an element of edt data cannot be a number (sim's elem_dtype_ok): the
 * failure emitted at `site`, 1; else 0 */
int pld_cg_elem_dtype_refused(cg_t *g, int site, pld_dtype_t edt)
{
    if (pld_kern_dtype_ok(edt))
        return 0;
    pld_cg_emit(g, "return pc_cold(), rt->fail(bk, %d, \"cannot read or write an element of %s data as a number (pldrun has no "
                   "4-bit or FP8 arithmetic yet)\");", site, pld_dtype_name(edt));
    return 1;
}

/* stores C value t<val> (a double when fv) into element t<off> of `data`
 * (edt), as sim's write_elem: a float into integers truncated toward zero,
 * saturated, NaN 0 */
void pld_cg_elem_store(cg_t *g, const char *data, pld_dtype_t edt, int off, int val, int fv)
{
    if (pld_dtype_is_float(edt))
        pld_cg_emit(g, "rt->set_f(%s, %d, t%d, (double)t%d);", data, (int)edt, off, val);
    else if (fv)
        pld_cg_emit(g, "rt->set_i(%s, %d, t%d, t%d != t%d ? 0 : t%d >= 9.2233720368547758e18 ? INT64_MAX : t%d <= "
                       "-9.2233720368547758e18 ? INT64_MIN : (int64_t)t%d);", data, (int)edt, off, val, val, val, val, val);
    else
        pld_cg_emit(g, "rt->set_i(%s, %d, t%d, t%d);", data, (int)edt, off, val);
}

/* x[i, j, ...] of a tensor or a tile, one integer index per dimension, read
 * as a scalar: pld_exec_subscript's element read (the object, then each
 * index: negative from the end, its bounds check at the index with sim's
 * message; the dtype check; tensors through their strides, tiles packed
 * row-major over the physical shape); -2 when e is not such a read */
int pld_cg_elem_read(cg_t *g, const pld_expr_t *e, int *fl, pld_dtype_t *dt)
{
    const pld_expr_t *obj = e->u.sub.obj;
    const pld_type_t *ot = obj->type;
    const int n = e->u.sub.n;
    if (!ot || (!pld_type_is_tensorlike(ot) && ot->kind != PLD_TY_TILE) || n < 1 || n != ot->rank || n > PC_MAX_RANK)
        return -2;
    for (int d = 0; d < n; d++)
        if (e->u.sub.items[d]->kind == PLD_EX_SLICE)
            return -2;
    const int tile = ot->kind == PLD_TY_TILE, s = pld_cg_site(g, e);
    const pld_dtype_t edt = ot->dtype;
    if (edt == PLD_DT_NONE)
        return pld_cg_fail(g, e->span, "this element read has no static dtype");
    char on[32];
    if (tile) {
        if (obj->kind != PLD_EX_NAME || obj->slot < 0 || g->slots[obj->slot].kind != SK_TILE)
            return pld_cg_fail(g, obj->span, "the native backend reads elements of named tiles only");
        snprintf(on, sizeof on, "s%d", obj->slot);
    } else {
        const int ob = tmp(g);
        snprintf(on, sizeof on, "t%d", ob);
        pld_cg_emit(g, "pc_tensor t%d;", ob);
        if (pld_cg_tensor_into(g, obj, on))
            return -1;
        pld_cg_emit(g, "if (%d > %s.rank) PC_FAILF(%d, \"%d indices for a rank-%%d value\", (int)%s.rank);", n, on, s, n, on);
    }
    const int off = tmp(g);
    pld_cg_emit(g, "int64_t t%d = 0;", off);
    for (int d = 0; d < n; d++) {
        const pld_expr_t *it = e->u.sub.items[d];
        int ifl;
        pld_dtype_t idt;
        const int k = pld_cg_scalar(g, it, &ifl, &idt);
        if (k < 0)
            return -1;
        if (ifl)
            return pld_cg_fail(g, it->span, "an index must be an integer");
        pld_cg_emit(g, "{ int64_t k_ = (int64_t)t%d; if (k_ < 0) k_ += %s.shape[%d];", k, on, d);
        pld_cg_emit(g, "  if (k_ < 0 || k_ >= %s.shape[%d]) PC_FAILF(%d, \"index %%lld out of range for dimension %d (size "
                       "%%lld)\", (long long)k_, (long long)%s.shape[%d]);", on, d, pld_cg_site(g, it), d, on, d);
        if (tile)
            pld_cg_emit(g, "  t%d = t%d * %s.shape[%d] + k_; }", off, off, on, d);
        else
            pld_cg_emit(g, "  t%d += k_ * %s.stride[%d]; }", off, on, d);
    }
    if (pld_cg_elem_dtype_refused(g, s, edt)) {
        *fl = 0;
        *dt = PLD_DT_INT64;
        const int z = tmp(g);
        pld_cg_emit(g, "int64_t t%d = 0;", z);
        return z;
    }
    *fl = pld_dtype_is_float(edt);
    *dt = edt;
    const int r = tmp(g);
    if (*fl)
        pld_cg_emit(g, "double t%d = rt->get_f(%s.data, %d, t%d);", r, on, (int)edt, off);
    else
        pld_cg_emit(g, "int64_t t%d = rt->get_i(%s.data, %d, t%d);", r, on, (int)edt, off);
    return r;
}

/* tile[i, j, ...] = scalar: pld_exec_subscript_assign's tile element write
 * (the value first, then the indices; the dtype check; every index in range
 * of the physical shape, no negatives, else "tile index out of range"), into
 * the named tile's own storage (tiles are values: each local has its own) */
int pld_cg_tile_elem_assign(cg_t *g, const pld_expr_t *t, const pld_expr_t *v)
{
    const pld_expr_t *obj = t->u.sub.obj;
    const int n = t->u.sub.n, s = pld_cg_site(g, t);
    if (!obj->type || obj->type->kind != PLD_TY_TILE || !v->type || v->type->kind != PLD_TY_SCALAR)
        return -2;
    if (obj->kind != PLD_EX_NAME || obj->slot < 0 || g->slots[obj->slot].kind != SK_TILE)
        return pld_cg_fail(g, obj->span, "the native backend writes elements of named tiles only");
    if (n < 1 || n > PC_MAX_RANK)
        return pld_cg_fail(g, t->span, "%d indices for a tile", n);
    int fv;
    pld_dtype_t dv;
    const int val = pld_cg_scalar(g, v, &fv, &dv);
    if (val < 0)
        return -1;
    int idx[PC_MAX_RANK];
    if (pld_cg_int_indices(g, t->u.sub.items, n, idx))
        return -1;
    if (pld_cg_elem_dtype_refused(g, s, obj->type->dtype))
        return 0;
    const pld_dtype_t edt = obj->type->dtype;
    const int sl = obj->slot, off = tmp(g);
    pld_cg_emit(g, "int64_t t%d = 0;", off);
    pld_cg_emit(g, "if (%d < s%d.rank) return pc_cold(), rt->fail(bk, %d, \"tile index out of range\");", n, sl, s);
    for (int d = 0; d < n; d++) {
        pld_cg_emit(g, "if (%d < s%d.rank) {", d, sl);
        pld_cg_emit(g, "    if (t%d < 0 || t%d >= s%d.shape[%d]) return pc_cold(), rt->fail(bk, %d, \"tile index out of range\");", idx[d],
                    idx[d], sl, d, s);
        pld_cg_emit(g, "    t%d = t%d * s%d.shape[%d] + t%d;", off, off, sl, d, idx[d]);
        pld_cg_emit(g, "}");
    }
    char data[32];
    snprintf(data, sizeof data, "s%d.data", sl);
    pld_cg_elem_store(g, data, edt, off, val, fv);
    return 0;
}

/* ---------------------------------------------------------------- tiles */

/* the capacity check after a tile is bound to local `slot` (pc_rt.tile_bound) */
void pld_cg_ub_site(cg_t *g, int slot)
{
    /* pld_ub_check counts the tile just bound and those fd <= seq < lu, each
     * at most its storage (every space alike: a bound for each) */
    const int32_t *lu = g->fn->last_use, *fd = g->fn->first_def;
    int64_t live = 0;
    for (int i = 0; i < g->fn->nslots && lu && fd; i++)
        if (g->slots[i].kind == SK_TILE && (i == slot || (fd[i] <= g->cur_seq && lu[i] > g->cur_seq)))
            live += (int64_t)g->slots[i].bytes;
    if (!lu || !fd)
        g->ub_live = -1;
    else if (g->ub_live >= 0 && live > g->ub_live)
        g->ub_live = live;
}

void pld_cg_bound_tile(cg_t *g, int slot, pld_mem_t mem, const pld_expr_t *at)
{
    pld_cg_ub_site(g, slot);
    g->slots[slot].mems |= 1u << (mem == PLD_MEM_NONE ? PLD_MEM_VEC : mem);
    pld_cg_emit(g, "if (ubc && rt->tile_bound(bk, %d, %d, %d, %d, pc_numel(s%d.shape, s%d.rank) * %d)) return pc_cold(), 1;", pld_cg_site(g, at),
                slot, (int)g->cur_seq, (int)mem, slot, slot, esize(g->slots[slot].dt));
}

/* a tile operand: a local tile (its C name in nm), or a nested tile
 * expression evaluated into a temporary first */
int pld_cg_tile_operand(cg_t *g, const pld_expr_t *a, const pld_expr_t *e, char *nm)
{
    if (!a)
        return pld_cg_fail(g, e->span, "%s: a tile operand is missing", pld_op_info((pld_op_id_t)e->op)->name);
    if (a->kind == PLD_EX_NAME && a->slot >= 0 && g->slots[a->slot].kind == SK_TILE) {
        snprintf(nm, 32, "s%d", a->slot);
        return 0;
    }
    int64_t need = tile_bytes(a->type);
    if (a->kind != PLD_EX_CALL || need < 0)
        return pld_cg_fail(g, a->span, "%s: the native backend needs a tile operand of static shape here",
                           pld_op_info((pld_op_id_t)e->op)->name);
    int t = pld_cg_temp_tile(g, (size_t)need);
    snprintf(nm, 32, "t%d", t);
    return pld_cg_tile_into(g, a, nm, (size_t)need);
}

/* sets the descriptor `d` (a C lvalue) to the static type t (shape = valid) */
int pld_cg_set_desc(cg_t *g, const char *d, const pld_type_t *t, const pld_expr_t *e)
{
    if (!t || t->kind != PLD_TY_TILE || tile_bytes(t) < 0)
        return pld_cg_fail(g, e->span, "%s: the result tile needs a static shape for the native backend",
                           e->op >= 0 ? pld_op_info((pld_op_id_t)e->op)->name : "expression");
    pld_cg_emit(g, "%s.dt = %d; %s.rank = %d;", d, (int)t->dtype, d, t->rank);
    for (int i = 0; i < t->rank; i++)
        pld_cg_emit(g, "%s.shape[%d] = %s.valid[%d] = %lld;", d, i, d, i, (long long)t->shape[i].v);
    return 0;
}

/* a boolean keyword that must be a literal: 0/1, -1 when not a literal */
static int lit_bool(const pld_expr_t *e, int dflt)
{
    if (!e || e->kind == PLD_EX_NONE)
        return dflt;
    if (e->kind == PLD_EX_BOOL)
        return e->u.bval;
    if (e->kind == PLD_EX_INT)
        return e->u.ival != 0;
    return -1;
}

/* copies the descriptor fields of tile `src` into `dst` (not the data pointer) */
void pld_cg_copy_desc(cg_t *g, const char *dst, const char *src)
{
    pld_cg_emit(g, "%s.dt = %s.dt; %s.rank = %s.rank;", dst, src, dst, src);
    pld_cg_emit(g, "memcpy(%s.shape, %s.shape, sizeof %s.shape); memcpy(%s.valid, %s.valid, sizeof %s.valid);", dst, src, dst,
                dst, src, dst);
}

/* copies a whole tile (descriptor and physical data) */
void pld_cg_copy_tile(cg_t *g, const char *dst, const char *src, pld_dtype_t dt)
{
    pld_cg_emit(g, "if (%s.data != %s.data) memcpy(%s.data, %s.data, (size_t)pc_numel(%s.shape, %s.rank) * %d);", dst, src, dst,
                src, src, src, esize(dt));
    pld_cg_copy_desc(g, dst, src);
}

/* storage for a temporary tile of `bytes` (allocated once per block at entry) */
int pld_cg_temp_tile(cg_t *g, size_t bytes)
{
    int t = tmp(g);
    pld_buf_printf(&g->tmpdecl, "    pc_tile t%d; memset(&t%d, 0, sizeof t%d);\n", t, t, t);
    pld_buf_printf(&g->tmpdecl, "    if (!(t%d.data = rt->alloc(bk, -1, %zu))) return pc_cold(), 1;\n", t, bytes ? bytes : 1);
    return t;
}

/* writes the tile value of expression e into descriptor `dst` (its storage:
 * `room` bytes). Operands may be dst itself only for element-wise ops. */
int pld_cg_tile_into(cg_t *g, const pld_expr_t *e, const char *dst, size_t room)
{
    if (g->failed)
        return -1;
    if (e->kind == PLD_EX_NAME) {
        if (e->slot < 0 || g->slots[e->slot].kind != SK_TILE)
            return pld_cg_fail(g, e->span, "'%s' is not a tile here", e->u.name);
        char src[32];
        snprintf(src, sizeof src, "s%d", e->slot);
        pld_cg_copy_tile(g, dst, src, e->type ? e->type->dtype : PLD_DT_FP32);
        return 0;
    }
    if (e->kind != PLD_EX_CALL || e->op < 0)
        return pld_cg_fail(g, e->span, "this tile expression is not compiled by the native backend");
    int64_t need = tile_bytes(e->type);
    if (need >= 0 && (size_t)need > room)
        return pld_cg_fail(g, e->span, "internal: tile storage too small");
    const int s = pld_cg_site(g, e);
    int scalar;
    if (pld_cg_ew_binary(e->op, &scalar) >= 0 || pld_cg_ew_unary(e->op) >= 0)
        return pld_cg_ew(g, e, dst);
    if (pld_cg_ext_op(e->op))
        return pld_cg_ext(g, e, dst, s);
    const int sys = pld_cg_sys_tile(g, e, dst, room);
    if (sys != -2)
        return sys;
    if (pld_cg_is_layout(e->op))
        return pld_cg_layout(g, e, dst, room, s);
    int mm = pld_cg_mm(g, e, dst, room, s);
    if (mm != -2)
        return mm;
    switch (e->op) {
    case PLD_OPID_TILE_LOAD: {
        const pld_expr_t *src = pld_op_bound(e, 0);
        if (!src || src->kind != PLD_EX_NAME || src->slot < 0 || g->slots[src->slot].kind != SK_TENSOR)
            return pld_cg_fail(g, e->span, "pl.tile.load: the native backend needs a named tensor operand");
        const pld_type_t *st = src->type;
        const int mx = st && (st->layout == PLD_LAYOUT_MX_A || st->layout == PLD_LAYOUT_MX_B);
        int clamp = lit_bool(pld_op_bound(e, 5), 0);
        if (clamp < 0)
            return pld_cg_fail(g, e->span, "pl.tile.load: clamp must be a literal for the native backend");
        int no, nv;
        int off = pld_cg_ilist(g, pld_op_bound(e, 1), &no);
        if (off < 0)
            return -1;
        int val = pld_cg_ilist(g, pld_op_bound(e, 3), &nv);
        if (g->failed || pld_cg_set_desc(g, dst, e->type, e))
            return -1;
        if (val >= 0) {
            pld_cg_emit(g, "if (%d != %s.rank) return pc_cold(), rt->fail(bk, %d, \"pl.tile.load: valid_shape has %d entries, shape has "
                           "%d\");", nv, dst, s, nv, e->type->rank);
        }
        char vb[32];
        snprintf(vb, sizeof vb, "t%d", val);
        pld_cg_emit(g, "if (rt->load(bk, %d, &%s, &s%d, t%d, %d, %s, %d)) return pc_cold(), 1;", s, dst, src->slot, off, no,
                    val >= 0 ? vb : "NULL", clamp);
        return mx ? pld_cg_mm_load_mx(g, e, dst, src->slot, off, s) : 0;
    }
    case PLD_OPID_TILE_CREATE:
    case PLD_OPID_TILE_FULL: {
        if (pld_cg_set_desc(g, dst, e->type, e))
            return -1;
        pld_cg_emit(g, "memset(%s.data, 0, %lld);", dst, (long long)need);
        if (e->op == PLD_OPID_TILE_FULL && pld_op_bound(e, 2)) {
            int fl;
            pld_dtype_t d;
            int v = pld_cg_scalar(g, pld_op_bound(e, 2), &fl, &d);
            if (v < 0)
                return -1;
            pld_cg_emit(g, "if (rt->fill(bk, %d, &%s, (double)t%d, %st%d)) return pc_cold(), 1;", s, dst, v, fl ? "(int64_t)" : "", v);
        }
        return 0;
    }
    case PLD_OPID_PL_DUMP_TAG:
        return pld_cg_dump_tag(g, e) ? -1 : pld_cg_tile_into(g, e->u.call.args[0].value, dst, room);
    case PLD_OPID_TILE_MOVE: {
        if (pld_cg_tile_into(g, pld_op_bound(e, 0), dst, room))
            return -1;
        /* a UINT8 MX scale tile becomes FP8E8M0 in LeftScale / RightScale (the same bytes; pld_exec_move) */
        const pld_type_t *at = pld_op_bound(e, 0)->type;
        const pld_mem_t mem = e->type && e->type->mem ? e->type->mem : at ? at->mem : PLD_MEM_NONE;
        if (mem == PLD_MEM_LEFTSCALE || mem == PLD_MEM_RIGHTSCALE)
            pld_cg_emit(g, "if (%s.dt == %d) %s.dt = %d;", dst, (int)PLD_DT_UINT8, dst, (int)PLD_DT_FP8E8M0);
        return 0;
    }
    case PLD_OPID_TILE_CAST:
        return pld_cg_mm_cast(g, e, dst, s);
    case PLD_OPID_TILE_WRITE: /* writes the element into the named tile, then the result is that tile */
        return pld_cg_elem_write(g, e) ? -1 : pld_cg_tile_into(g, pld_op_bound(e, 0), dst, room);
    case PLD_OPID_PLD_REMOTE_LOAD:
        return pld_cg_remote_load(g, e, dst, need);
    default:
        break;
    }
    const char *note;
    if (pld_cgen_op_class(e->op, &note) == PLD_CGEN_RUNTIME)
        return pld_cg_tile_exec(g, e, dst, need);
    return pld_cg_fail(g, e->span, "%s is not compiled by the native backend (%s)", opname(e), note);
}

/* ---------------------------------------------------------------- tensors */

/* the tensor value of e into descriptor `dst` */
int pld_cg_tensor_into(cg_t *g, const pld_expr_t *e, const char *dst)
{
    if (e->kind == PLD_EX_NAME) {
        if (e->slot < 0 || g->slots[e->slot].kind != SK_TENSOR)
            return pld_cg_fail(g, e->span, "'%s' is not a tensor here", e->u.name);
        pld_cg_emit(g, "%s = s%d;", dst, e->slot);
        return 0;
    }
    if (e->kind == PLD_EX_SUBSCRIPT) { /* tensor[a:b, ...]: a view the kernel makes (pld_cgen_rtop.c) */
        const int r = pld_cg_subscript(g, e, dst);
        if (r != -2)
            return r;
        int o = pld_cg_exec(g, e, SK_TENSOR);
        if (o < 0)
            return -1;
        pld_cg_emit(g, "if (t%d.kind != PC_OUT_TENSOR) return pc_cold(), rt->fail(bk, %d, \"a subscript gave no tensor\");", o, pld_cg_site(g, e));
        pld_cg_emit(g, "%s = t%d.t;", dst, o);
        return 0;
    }
    if (e->kind != PLD_EX_CALL || e->op < 0)
        return pld_cg_fail(g, e->span, "this tensor expression is not compiled by the native backend");
    const int s = pld_cg_site(g, e);
    switch (e->op) {
    case PLD_OPID_TILE_STORE: {
        char av[32];
        if (pld_cg_tile_operand(g, pld_op_bound(e, 0), e, av))
            return -1;
        const pld_expr_t *out = pld_op_bound(e, 2), *at = pld_op_bound(e, 4);
        if (!out || out->kind != PLD_EX_NAME || out->slot < 0 || g->slots[out->slot].kind != SK_TENSOR)
            return pld_cg_fail(g, e->span, "pl.tile.store: the native backend needs a named output tensor");
        int no, nl, ai = -1, af = 0;
        int off = pld_cg_ilist(g, pld_op_bound(e, 1), &no);
        if (off < 0)
            return -1;
        int lim = pld_cg_ilist(g, pld_op_bound(e, 3), &nl);
        pld_dtype_t ad;
        int lit = -1; /* pl.AtomicType.None_ / Add (the checker's enum values) */
        if (at && at->kind == PLD_EX_ATTR && at->u.attr.obj->kind == PLD_EX_ATTR &&
            strcmp(at->u.attr.obj->u.attr.attr, "AtomicType") == 0)
            lit = strcmp(at->u.attr.attr, "Add") == 0;
        if (at && lit < 0 && at->kind != PLD_EX_NONE && (ai = pld_cg_scalar(g, at, &af, &ad)) < 0)
            return -1;
        if (g->failed)
            return -1;
        char lb[32], ab[48] = "0";
        snprintf(lb, sizeof lb, "t%d", lim);
        if (ai >= 0)
            snprintf(ab, sizeof ab, "%st%d != 0", af ? "(int64_t)" : "", ai);
        else if (lit > 0)
            snprintf(ab, sizeof ab, "1");
        pld_cg_emit(g, "if (rt->store(bk, %d, &%s, t%d, %d, &s%d, %s, %s)) return pc_cold(), 1;", s, av, off, no, out->slot,
                    lim >= 0 ? lb : "NULL", ab);
        pld_cg_emit(g, "%s = s%d;", dst, out->slot);
        return 0;
    }
    case PLD_OPID_TENSOR_WRITE:
        return pld_cg_elem_write(g, e) ? -1 : pld_cg_tensor_into(g, pld_op_bound(e, 0), dst);
    case PLD_OPID_TILE_MSCATTER:
        return pld_cg_mscatter(g, e, dst);
    case PLD_OPID_PL_DUMP_TAG: /* its operand, after --dump's hook (pld_cgen_sys.c) */
        return pld_cg_dump_tag(g, e) ? -1 : pld_cg_tensor_into(g, e->u.call.args[0].value, dst);
    default:
        break;
    }
    int r = pld_cg_tensor_op(g, e, dst, s);
    if (r != -2)
        return r;
    const char *note;
    if (pld_cgen_op_class(e->op, &note) == PLD_CGEN_RUNTIME || pld_cgen_op_class(e->op, &note) == PLD_CGEN_LIBRARY) {
        int o = pld_cg_exec(g, e, SK_TENSOR);
        if (o < 0)
            return -1;
        pld_cg_emit(g, "if (t%d.kind != PC_OUT_TENSOR) return pc_cold(), rt->fail(bk, %d, \"%s: the runtime returned no tensor\");", o, s,
                    opname(e));
        pld_cg_emit(g, "%s = t%d.t;", dst, o);
        return 0;
    }
    return pld_cg_fail(g, e->span, "%s is not compiled by the native backend (%s)", opname(e), note);
}
