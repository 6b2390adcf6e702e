/* pld_cgen_fuse.c - fusion of element-wise chains in generated code
 * (pld_cgen_int.h; issue 44, docs/native.md "Fused element-wise chains").
 *
 * A chain is a run of consecutive statements of one block (with two
 * element-wise ops at least), each `name = tree` where tree is element-wise
 * ops the generator would emit as inline loops (pld_cg_ew_inline: FP32 /
 * FP16 / BF16 / INT32, static shapes; log and rsqrt through pld_kern_fn.h),
 * casts between those dtypes (every rounding mode: the library's
 * per-element functions of pld_kern_fn.h), binary ops or row / column expands
 * whose second operand is a broadcast tile ([M, 1], [1, N], [1, 1]), every
 * tile operand a local's name or a nested such op, a scalar operand an
 * expression that names no tile, all statements of one static shape. It
 * becomes, in program order, everything each statement does besides its
 * loop (the scalar operands evaluated and rounded to the dtype, the result's
 * descriptor, the capacity check rt->tile_bound: the same calls, messages
 * and order as unfused), then ONE loop over the elements (over rows, then
 * elements, when an operand is a row or column vector) that computes each
 * op in turn with the same C expression as its own loop, the value rounded
 * to its dtype and kept in a register (FP16 / BF16: the stored 16 bits,
 * converted back as the next loop would load them). A value a later
 * statement of the chain reads is taken from the register; a name the chain
 * has not defined yet is loaded from its tile; a tile that is read anywhere
 * else is stored (its last value in the chain). Element i reads and writes
 * index i of each tile only (a broadcast operand, read at its row or
 * column, is never assigned in its chain), in statement order, so the
 * in-place forms (`t = add(t, x)`, a tile read before the chain writes it)
 * give the unfused results.
 *
 * A local that only chains define and read (every occurrence of its name in
 * the function is a chain's definition or a read after one in the same
 * chain) gets no storage (cslot_t.nodata); its descriptor is still kept,
 * for the capacity check. */
#include "pld_cgen_int.h"
#include "pld_kern.h"
#include "pld_mem.h"

#include <stdio.h>
#include <string.h>

#define FUSE_MAX 64 /* statements in one chain (a longer run makes several) */
/* ops in one loop: a longer run is cut into several loops at a statement
 * (the value crossing the cut gets storage). GCC 12 spills SSE2's 16
 * registers in long loops: bench chain28 as one 28-op loop took 0.58 s (0.45 s
 * with the mask form of pc_fmaxf). With that form (issue 44), CPU time of
 * bench chain with loops of at most 4 ops 0.30-0.36 s, of 8 (one loop)
 * 0.30-0.33 s; instructions (callgrind) 139 K / 102 K an iteration; chain28
 * 25.0 M / 21.5 M for 50 iterations (docs/benchmarks-native.md). A slice is
 * read in place only when its readers share its loop: 8 holds rope's 6. */
#define FUSE_NODES 8

/* 1 when expression e names a tile local anywhere */
static int names_tile(const cg_t *g, const pld_expr_t *e)
{
    if (!e)
        return 0;
    switch (e->kind) {
    case PLD_EX_NAME: return e->slot >= 0 && g->slots[e->slot].kind == SK_TILE;
    case PLD_EX_UNARY: return names_tile(g, e->u.un.a);
    case PLD_EX_BINARY: return names_tile(g, e->u.bin.a) || names_tile(g, e->u.bin.b);
    case PLD_EX_CALL:
        if (names_tile(g, e->u.call.fn))
            return 1;
        for (int i = 0; i < e->u.call.nargs; i++)
            if (names_tile(g, e->u.call.args[i].value))
                return 1;
        return 0;
    case PLD_EX_ATTR: return names_tile(g, e->u.attr.obj);
    case PLD_EX_SUBSCRIPT:
        for (int i = 0; i < e->u.sub.n; i++)
            if (names_tile(g, e->u.sub.items[i]))
                return 1;
        return names_tile(g, e->u.sub.obj);
    case PLD_EX_SLICE: return names_tile(g, e->u.slice.lo) || names_tile(g, e->u.slice.hi) || names_tile(g, e->u.slice.step);
    case PLD_EX_LIST:
    case PLD_EX_TUPLE:
        for (int i = 0; i < e->u.seq.n; i++)
            if (names_tile(g, e->u.seq.items[i]))
                return 1;
        return 0;
    case PLD_EX_DICT:
        for (int i = 0; i < e->u.dict.n; i++)
            if (names_tile(g, e->u.dict.keys[i]) || names_tile(g, e->u.dict.vals[i]))
                return 1;
        return 0;
    case PLD_EX_COND: return names_tile(g, e->u.cond.a) || names_tile(g, e->u.cond.cond) || names_tile(g, e->u.cond.b);
    default: return 0;
    }
}

static int is_tile_name(const cg_t *g, const pld_expr_t *e)
{
    return e && e->kind == PLD_EX_NAME && e->slot >= 0 && g->slots[e->slot].kind == SK_TILE;
}

/* the same-shape binary op a row / column expand computes with its vector
 * broadcast (*expdif: then exp, as the library does in place); -1: none */
static int expand_binop(int op, int *expdif)
{
    *expdif = 0;
    switch (op) {
    case PLD_OPID_TILE_ROW_EXPAND_ADD: case PLD_OPID_TILE_COL_EXPAND_ADD: return PLD_OPID_TILE_ADD;
    case PLD_OPID_TILE_ROW_EXPAND_EXPDIF: case PLD_OPID_TILE_COL_EXPAND_EXPDIF: *expdif = 1; /* fall through */
    case PLD_OPID_TILE_ROW_EXPAND_SUB: case PLD_OPID_TILE_COL_EXPAND_SUB: return PLD_OPID_TILE_SUB;
    case PLD_OPID_TILE_ROW_EXPAND_MUL: case PLD_OPID_TILE_COL_EXPAND_MUL: return PLD_OPID_TILE_MUL;
    case PLD_OPID_TILE_ROW_EXPAND_DIV: case PLD_OPID_TILE_COL_EXPAND_DIV: return PLD_OPID_TILE_DIV;
    case PLD_OPID_TILE_ROW_EXPAND_MAX: case PLD_OPID_TILE_COL_EXPAND_MAX: return PLD_OPID_TILE_MAXIMUM;
    case PLD_OPID_TILE_ROW_EXPAND_MIN: case PLD_OPID_TILE_COL_EXPAND_MIN: return PLD_OPID_TILE_MINIMUM;
    default: return -1;
    }
}

static int same_shape(const pld_type_t *a, const pld_type_t *b)
{
    if (!a || !b || a->rank != b->rank || tile_bytes(a) < 0 || tile_bytes(b) < 0)
        return 0;
    for (int d = 0; d < a->rank; d++)
        if (a->shape[d].v != b->shape[d].v)
            return 0;
    return 1;
}

/* how a node reads its second tile operand: 0 element by element (or no
 * such operand), 'r' a [M, 1] vector, 'c' a [1, N] vector, 's' a [1, 1]
 * tile, -1: a broadcast the chain does not compute */
static int bcast_form(const pld_expr_t *e, const pld_expr_t *b)
{
    const pld_type_t *t = e->type, *bt = b->type;
    if (same_shape(t, bt))
        return 0;
    if (t->rank != 2 || !bt || bt->kind != PLD_TY_TILE || bt->rank != 2 || tile_bytes(bt) < 0)
        return -1;
    const int64_t m = t->shape[0].v, n = t->shape[1].v, bm = bt->shape[0].v, bn = bt->shape[1].v;
    if (bm == m && bn == 1)
        return 'r';
    if (bm == 1 && bn == n)
        return 'c';
    return bm == 1 && bn == 1 ? 's' : -1;
}

/* 1 when a fused loop computes a cast from dtype sd to dd: both of
 * pld_cg_ew_type (FP32, FP16, BF16, INT32), not a copy of 16-bit floats (the
 * loop holds them as floats, and a signalling NaN would come back quiet) */
static int cast_fusable(pld_dtype_t sd, pld_dtype_t dd)
{
    return pld_cg_ew_type(sd).st && pld_cg_ew_type(dd).st && !(sd == dd && sd != PLD_DT_FP32 && sd != PLD_DT_INT32);
}

/* the same-shape binary op node e computes (the op of a row / column expand;
 * a broadcasting binary op), its form (bcast_form) in *form, -1 when e is
 * not one; an op of pld_cg_ew_inline: its own op, *form 0 */
static int node_op(const cg_t *g, const pld_expr_t *e, int *form, int *expdif)
{
    int scalar;
    *form = *expdif = 0;
    if (!e || e->kind != PLD_EX_CALL || e->op < 0 || !e->type || e->type->kind != PLD_TY_TILE || tile_bytes(e->type) < 0)
        return -1;
    const pld_expr_t *a = pld_op_bound(e, 0), *b = pld_op_bound(e, 1);
    if (!a || !a->type || !same_shape(e->type, a->type))
        return -1;
    if (e->op == PLD_OPID_TILE_CAST)
        return cast_fusable(a->type->dtype, e->type->dtype) ? e->op : -1;
    if (e->type->dtype != a->type->dtype)
        return -1;
    const int isbin = pld_cg_ew_binary(e->op, &scalar) >= 0, xop = expand_binop(e->op, expdif);
    if ((isbin || pld_cg_ew_unary(e->op) >= 0) && pld_cg_ew_inline(e))
        return e->op;
    /* a second operand broadcast (the kernel library through pld_cg_ext_elementwise) */
    if (!((isbin && !scalar) || xop >= 0) || !is_tile_name(g, b) || b->type->dtype != a->type->dtype)
        return -1;
    const pld_cg_ewty_t ty = pld_cg_ew_type(a->type->dtype);
    const int op = xop >= 0 ? xop : e->op, ax = xop >= 0 ? pld_op_expand_axis(e->op) : 0;
    *form = bcast_form(e, b);
    if (!ty.st || !pld_cg_ew_cbody(op, ty.fl) || (*expdif && !ty.fl) || *form <= 0 || (ax == 'r' && *form != 'r') ||
        (ax == 'c' && *form != 'c'))
        return -1;
    return op;
}

/* 1 when e is a tree of element-wise ops the chain can compute: each node
 * an op of pld_cg_ew_inline, or a binary op / row or column expand whose
 * second operand is a broadcast tile's name, its result of its first
 * operand's dtype and shape; each tile operand a tile local's name or such a
 * node; a scalar operand naming no tile. Its nodes are counted in *nodes,
 * the names it reads broadcast added to bc[] (*nb). */
static int ew_tree(const cg_t *g, const pld_expr_t *e, int *nodes, int *bc, int *nb)
{
    int scalar, form, expdif;
    if (node_op(g, e, &form, &expdif) < 0)
        return 0;
    const pld_expr_t *a = pld_op_bound(e, 0), *b = pld_op_bound(e, 1);
    if (is_tile_name(g, a) ? g->slots[a->slot].dt != a->type->dtype : !ew_tree(g, a, nodes, bc, nb))
        return 0;
    if (form) {
        if (g->slots[b->slot].dt != b->type->dtype || *nb >= FUSE_MAX)
            return 0;
        bc[(*nb)++] = b->slot;
    } else if (pld_cg_ew_binary(e->op, &scalar) >= 0) {
        if (scalar ? !b || names_tile(g, b) : is_tile_name(g, b) ? g->slots[b->slot].dt != b->type->dtype : !ew_tree(g, b, nodes, bc, nb))
            return 0;
    }
    *nodes += 1 + expdif;
    return 1;
}

/* 1 when statement s can join a chain (*nodes: its element-wise ops; its
 * broadcast operands added to bc[]); its target not among them (the unfused
 * code copies such an operand first) */
static int fusable(const cg_t *g, const pld_stmt_t *s, int *nodes, int *bc, int *nb)
{
    *nodes = 0;
    if (s->kind != PLD_ST_ASSIGN || !is_tile_name(g, s->u.assign.target))
        return 0;
    const pld_expr_t *e = s->u.assign.value;
    const int nb0 = *nb;
    if (!ew_tree(g, e, nodes, bc, nb))
        return 0;
    const int t = s->u.assign.target->slot;
    const cslot_t *ts = &g->slots[t];
    for (int k = nb0; k < *nb; k++)
        if (bc[k] == t)
            return 0;
    return (size_t)tile_bytes(e->type) <= ts->bytes && ts->dt == e->type->dtype;
}

/* 1 when tree e (of ew_tree) holds a cast: one cast alone is a chain too
 * (its loop is the library's per-element code inline) */
static int has_cast(const pld_expr_t *e)
{
    return e && e->kind == PLD_EX_CALL &&
           (e->op == PLD_OPID_TILE_CAST || has_cast(pld_op_bound(e, 0)) ||
            (pld_cg_ew_binary(e->op, &(int){0}) >= 0 && has_cast(pld_op_bound(e, 1))));
}

/* ------------------------------------------------- slices and concats (views) */

static int pair_list(const pld_expr_t *e)
{
    return e && (e->kind == PLD_EX_LIST || e->kind == PLD_EX_TUPLE) && e->u.seq.n == 2;
}

/* 1 when s is `name = pl.tile.slice(src, [m, n], [o0, o1][, valid])` of a 2-D
 * tile local src of static shape, a window of shape t0 (when given) the loop
 * can read in place: a row pointer into src's storage (pld_cg_fuse); its
 * shape, offsets and valid shape naming no tile */
static int slice_stmt(const cg_t *g, const pld_stmt_t *s, const pld_type_t *t0)
{
    if (s->kind != PLD_ST_ASSIGN || !is_tile_name(g, s->u.assign.target))
        return 0;
    const pld_expr_t *e = s->u.assign.value;
    if (!e || e->kind != PLD_EX_CALL || e->op != PLD_OPID_TILE_SLICE || !e->type || e->type->kind != PLD_TY_TILE ||
        e->type->rank != 2 || tile_bytes(e->type) < 0 || !pld_cg_ew_type(e->type->dtype).st)
        return 0;
    const pld_expr_t *a = pld_op_bound(e, 0), *dr = pld_op_bound(e, 4);
    if (!is_tile_name(g, a) || !a->type || a->type->rank != 2 || tile_bytes(a->type) < 0 ||
        a->type->dtype != e->type->dtype || g->slots[a->slot].dt != e->type->dtype)
        return 0;
    if ((dr && dr->kind != PLD_EX_NONE) || !pair_list(pld_op_bound(e, 1)) || !pair_list(pld_op_bound(e, 2)))
        return 0;
    for (int k = 1; k <= 3; k++) /* evaluated before the loop: no tile the chain may compute */
        if (names_tile(g, pld_op_bound(e, k)))
            return 0;
    const cslot_t *ts = &g->slots[s->u.assign.target->slot];
    return (size_t)tile_bytes(e->type) <= ts->bytes && ts->dt == e->type->dtype && (!t0 || same_shape(e->type, t0));
}

/* 1 when s is `name = pl.tile.concat(a, b)` of two tiles of the chain's
 * shape t0 ([M, N]) into [M, 2N] */
static int concat_stmt(const cg_t *g, const pld_stmt_t *s, const pld_type_t *t0)
{
    if (!t0 || t0->rank != 2 || s->kind != PLD_ST_ASSIGN || !is_tile_name(g, s->u.assign.target))
        return 0;
    const pld_expr_t *e = s->u.assign.value;
    if (!e || e->kind != PLD_EX_CALL || e->op != PLD_OPID_TILE_CONCAT || !e->type || e->type->kind != PLD_TY_TILE ||
        e->type->rank != 2 || tile_bytes(e->type) < 0)
        return 0;
    const pld_expr_t *a = pld_op_bound(e, 0), *b = pld_op_bound(e, 1);
    const pld_dtype_t dt = e->type->dtype;
    if (!is_tile_name(g, a) || !is_tile_name(g, b) || !same_shape(a->type, t0) || !same_shape(b->type, t0) ||
        a->type->dtype != dt || b->type->dtype != dt || e->type->shape[0].v != t0->shape[0].v ||
        e->type->shape[1].v != 2 * t0->shape[1].v)
        return 0;
    const cslot_t *ts = &g->slots[s->u.assign.target->slot];
    return (size_t)tile_bytes(e->type) <= ts->bytes && ts->dt == dt;
}

static void count_expr(const pld_expr_t *e, int *cnt, int n, int only);

/* occurrences of local `slot`'s name in statements [k, end) of b (targets, annotations, values) */
static int occurrences(const pld_block_t *b, int k, int end, int slot)
{
    int c = 0;
    for (; k < end; k++) {
        const pld_stmt_t *s = b->stmts[k];
        count_expr(s->u.assign.target, &c, slot + 1, slot);
        count_expr(s->u.assign.ann, &c, slot + 1, slot);
        count_expr(s->u.assign.value, &c, slot + 1, slot);
    }
    return c;
}

/* the statements of the chain that begins at statement i of b (before
 * statement jmax): a run of fusable statements of one static shape, at most
 * FUSE_NODES element-wise ops (unless its first statement alone has more),
 * no statement assigning a name
 * another reads broadcast (element i of the loop reads a broadcast operand's
 * row or column, which other elements write); slices (slice_stmt) among
 * them, a concat of two names the chain's ops define (concat_stmt) ending
 * it, its target not in the chain before. Its ops counted in *tot. */
static int chain_scan(const cg_t *g, const pld_block_t *b, int i, int jmax, int *tot)
{
    int bc[FUSE_MAX], nb = 0, tg[FUSE_MAX], ew[FUSE_MAX], nodes, j;
    const pld_type_t *t0 = b->stmts[i]->kind == PLD_ST_ASSIGN ? b->stmts[i]->u.assign.value->type : NULL;
    *tot = 0;
    for (j = i; j < jmax && j - i < FUSE_MAX; j++) {
        const pld_stmt_t *s = b->stmts[j];
        const int nb0 = nb;
        int isew = 0;
        if (g->fuse_total && slice_stmt(g, s, t0)) {
            nodes = 0;
        } else if (j > i && concat_stmt(g, s, t0)) {
            const pld_expr_t *e = s->u.assign.value;
            int ok = occurrences(b, i, j, s->u.assign.target->slot) == 0;
            for (int o = 0; o < 2 && ok; o++) { /* an operand's latest definition in the chain is an op's */
                int last = -1;
                for (int m = 0; m < j - i; m++)
                    if (tg[m] == pld_op_bound(e, o)->slot)
                        last = m;
                ok = last >= 0 && ew[last];
            }
            for (int k = 0; k < nb && ok; k++)
                ok = bc[k] != s->u.assign.target->slot;
            j += ok;
            break;
        } else if (!fusable(g, s, &nodes, bc, &nb) || !same_shape(s->u.assign.value->type, t0) ||
                   (j > i && *tot + nodes > FUSE_NODES)) {
            nb = nb0;
            break;
        } else {
            isew = 1;
        }
        int clash = 0;
        for (int k = 0; k < nb && !clash; k++)
            clash = bc[k] == s->u.assign.target->slot;
        for (int k = nb0; k < nb && !clash; k++)
            for (int m = 0; m < j - i && !clash; m++)
                clash = bc[k] == tg[m];
        if (clash) {
            nb = nb0;
            break;
        }
        tg[j - i] = s->u.assign.target->slot;
        ew[j - i] = isew;
        *tot += nodes;
    }
    return j - i;
}

/* chain_scan's chain, cut before a slice whose window the loop cannot read
 * in place: its source assigned in the chain, or its name occurring outside
 * the chain after it (fuse_total: the slice then gets no storage); 0: none
 * (fewer than two ops, or one without a slice or concat) */
static int chain_len(const cg_t *g, const pld_block_t *b, int i)
{
    int jmax = b->n, tot;
    for (;;) {
        const int len = chain_scan(g, b, i, jmax, &tot);
        int cut = -1, lay = 0;
        for (int k = i; k < i + len && cut < 0; k++) {
            const pld_stmt_t *s = b->stmts[k];
            const pld_expr_t *e = s->u.assign.value;
            lay |= e->kind == PLD_EX_CALL && e->op == PLD_OPID_TILE_CONCAT;
            if (e->kind != PLD_EX_CALL || e->op != PLD_OPID_TILE_SLICE)
                continue;
            lay = 1;
            const int src = pld_op_bound(e, 0)->slot, t = s->u.assign.target->slot;
            for (int m = i; m < i + len && cut < 0; m++)
                if (b->stmts[m]->u.assign.target->slot == src)
                    cut = k;
            if (occurrences(b, k, i + len, t) != g->fuse_total[t])
                cut = k;
        }
        if (cut < 0) /* one op is a chain when it saves a copy, or is a cast */
            return tot >= 2 || (tot == 1 && lay) || (len > 0 && has_cast(b->stmts[i]->u.assign.value)) ? len : 0;
        jmax = cut;
    }
}

/* ---------------------------------------------------------------- the plan */

/* every occurrence of a local's name under e (reads, targets) counted in cnt */
static void count_expr(const pld_expr_t *e, int *cnt, int n, int only)
{
    if (!e)
        return;
    switch (e->kind) {
    case PLD_EX_NAME:
        if (e->slot >= 0 && e->slot < n && (only < 0 || e->slot == only))
            cnt[only < 0 ? e->slot : 0]++;
        return;
    case PLD_EX_UNARY: count_expr(e->u.un.a, cnt, n, only); return;
    case PLD_EX_BINARY: count_expr(e->u.bin.a, cnt, n, only), count_expr(e->u.bin.b, cnt, n, only); return;
    case PLD_EX_CALL:
        count_expr(e->u.call.fn, cnt, n, only);
        for (int i = 0; i < e->u.call.nargs; i++)
            count_expr(e->u.call.args[i].value, cnt, n, only);
        return;
    case PLD_EX_ATTR: count_expr(e->u.attr.obj, cnt, n, only); return;
    case PLD_EX_SUBSCRIPT:
        count_expr(e->u.sub.obj, cnt, n, only);
        for (int i = 0; i < e->u.sub.n; i++)
            count_expr(e->u.sub.items[i], cnt, n, only);
        return;
    case PLD_EX_SLICE:
        count_expr(e->u.slice.lo, cnt, n, only), count_expr(e->u.slice.hi, cnt, n, only), count_expr(e->u.slice.step, cnt, n, only);
        return;
    case PLD_EX_LIST:
    case PLD_EX_TUPLE:
        for (int i = 0; i < e->u.seq.n; i++)
            count_expr(e->u.seq.items[i], cnt, n, only);
        return;
    case PLD_EX_DICT:
        for (int i = 0; i < e->u.dict.n; i++)
            count_expr(e->u.dict.keys[i], cnt, n, only), count_expr(e->u.dict.vals[i], cnt, n, only);
        return;
    case PLD_EX_COND:
        count_expr(e->u.cond.a, cnt, n, only), count_expr(e->u.cond.cond, cnt, n, only), count_expr(e->u.cond.b, cnt, n, only);
        return;
    default: return;
    }
}

static void count_block(const pld_block_t *b, int *cnt, int n)
{
    for (int i = 0; i < b->n; i++) {
        const pld_stmt_t *s = b->stmts[i];
        switch (s->kind) {
        case PLD_ST_EXPR: count_expr(s->u.expr, cnt, n, -1); break;
        case PLD_ST_ASSIGN:
            count_expr(s->u.assign.target, cnt, n, -1), count_expr(s->u.assign.ann, cnt, n, -1), count_expr(s->u.assign.value, cnt, n, -1);
            break;
        case PLD_ST_RETURN:
            for (int k = 0; k < s->u.ret.n; k++)
                count_expr(s->u.ret.vals[k], cnt, n, -1);
            break;
        case PLD_ST_IF:
            count_expr(s->u.if_.cond, cnt, n, -1), count_block(&s->u.if_.then, cnt, n), count_block(&s->u.if_.els, cnt, n);
            break;
        case PLD_ST_WHILE: count_expr(s->u.while_.cond, cnt, n, -1), count_block(&s->u.while_.body, cnt, n); break;
        case PLD_ST_FOR:
            count_expr(s->u.for_.target, cnt, n, -1), count_expr(s->u.for_.iter, cnt, n, -1), count_block(&s->u.for_.body, cnt, n);
            break;
        case PLD_ST_WITH: count_expr(s->u.with.item, cnt, n, -1), count_block(&s->u.with.body, cnt, n); break;
        default: break;
        }
    }
}

/* the tile names under e: each read of a name the chain defined before
 * (def[slot]) counted in safe */
static void chain_reads(const cg_t *g, const pld_expr_t *e, const unsigned char *def, int *safe)
{
    if (!e)
        return;
    if (e->kind == PLD_EX_NAME) {
        if (e->slot >= 0 && e->slot < g->fn->nslots && def[e->slot])
            safe[e->slot]++;
        return;
    }
    if (e->kind == PLD_EX_CALL)
        for (int i = 0; i < e->u.call.nargs; i++)
            chain_reads(g, e->u.call.args[i].value, def, safe);
    /* other forms hold no tile names here (fusable: the scalar names none) */
}

static void plan_block(cg_t *g, const pld_block_t *b, int *safe, unsigned char *def)
{
    for (int i = 0; i < b->n; i++) {
        const int len = chain_len(g, b, i);
        if (len > 0) {
            memset(def, 0, (size_t)g->fn->nslots);
            for (int k = i; k < i + len; k++) {
                const pld_stmt_t *s = b->stmts[k];
                chain_reads(g, s->u.assign.value, def, safe);
                safe[s->u.assign.target->slot]++;
                def[s->u.assign.target->slot] = 1;
            }
            i += len - 1;
            continue;
        }
        const pld_stmt_t *s = b->stmts[i];
        switch (s->kind) {
        case PLD_ST_IF: plan_block(g, &s->u.if_.then, safe, def), plan_block(g, &s->u.if_.els, safe, def); break;
        case PLD_ST_WHILE: plan_block(g, &s->u.while_.body, safe, def); break;
        case PLD_ST_FOR: plan_block(g, &s->u.for_.body, safe, def); break;
        case PLD_ST_WITH: plan_block(g, &s->u.with.body, safe, def); break;
        default: break;
        }
    }
}

int pld_cg_fuse_plan(cg_t *g, const pld_block_t *body)
{
    const int n = g->fn->nslots;
    if (n <= 0)
        return 0;
    int *total = pld_mem_calloc((size_t)n, sizeof *total), *safe = pld_mem_calloc((size_t)n, sizeof *safe);
    unsigned char *def = pld_mem_calloc((size_t)n, 1);
    if (!total || !safe || !def) {
        pld_mem_free(total), pld_mem_free(safe), pld_mem_free(def);
        return pld_cg_fail(g, g->fn->name_span, "out of memory");
    }
    count_block(&g->fn->body, total, n); /* the whole function: a scope's unit is part of it */
    pld_mem_free(g->fuse_total);
    g->fuse_total = total;
    plan_block(g, body, safe, def);
    for (int sl = 0; sl < n; sl++)
        g->slots[sl].nodata = g->slots[sl].kind == SK_TILE && safe[sl] > 0 && safe[sl] == total[sl];
    for (int i = 0; i < g->unp; i++)
        g->slots[g->uparams[i]].nodata = 0;
    pld_mem_free(safe), pld_mem_free(def);
    return 0;
}

/* ---------------------------------------------------------------- emission */

typedef struct fuse {
    cg_t *g;
    int *reg;            /* per slot: the register holding its latest value in the chain, -1: its tile */
    unsigned char *use;  /* per slot: bit 0 loaded element by element, bit 1 stored, bit 2 loaded broadcast,
                            bit 3 a concat's result (stored at two columns) */
    int *vsrc, *voff;    /* per slot: a slice read in place: its source's slot and offsets (C array t<voff>),
                            else -1; voff[nslots + slot]: the source's columns */
    int nreg, ny;        /* registers, scalar operands */
    int rows;            /* a loop over rows (a [M, 1] or [1, N] operand, a slice, a concat): the loop's i is the column */
    pld_buf_t lb;        /* the loop's body */
} fuse_t;

/* before the loop: the scalar operands of tree e, in the order the unfused
 * code evaluates them (a subtree first, then the second operand) */
static int pre_tree(fuse_t *f, const pld_expr_t *e)
{
    int scalar;
    const pld_expr_t *a = pld_op_bound(e, 0), *b = pld_op_bound(e, 1);
    if (a->kind == PLD_EX_CALL && pre_tree(f, a))
        return -1;
    if (pld_cg_ew_binary(e->op, &scalar) < 0)
        return 0;
    if (!scalar)
        return b->kind == PLD_EX_CALL ? pre_tree(f, b) : 0;
    int fl;
    pld_dtype_t sd;
    const int v = pld_cg_scalar(f->g, b, &fl, &sd);
    if (v < 0)
        return -1;
    char yn[16];
    snprintf(yn, sizeof yn, "fy%d", f->ny++);
    pld_cg_ew_scalar_y(f->g, e->type->dtype, v, fl, yn);
    return 0;
}

/* 1 when tree e reads a [M, 1] or [1, N] operand */
static int reads_rows(const cg_t *g, const pld_expr_t *e)
{
    int form, expdif;
    if (!e || e->kind != PLD_EX_CALL || node_op(g, e, &form, &expdif) < 0)
        return 0;
    return form == 'r' || form == 'c' || reads_rows(g, pld_op_bound(e, 0)) || reads_rows(g, pld_op_bound(e, 1));
}

/* the C value of operand a (a name or a tree) inside the loop into out */
static void loop_operand(fuse_t *f, const pld_expr_t *a, char *out, size_t n);

/* one step into a new register (its number): `body` over x (and y) rounded
 * to the dtype (h), then as the next op loads it (r) */
static int loop_step(fuse_t *f, pld_dtype_t dt, const char *body, const char *xa, const char *yb)
{
    const pld_cg_ewty_t ty = pld_cg_ew_type(dt);
    char sto[320], ld[32], hk[16];
    const int k = f->nreg++;
    snprintf(sto, sizeof sto, ty.sto, body);
    snprintf(hk, sizeof hk, "h%d", k);
    snprintf(ld, sizeof ld, ty.ld, hk);
    pld_buf_printf(&f->lb, " %s h%d; { const %s x = %s%s%s; h%d = %s; } const %s r%d = %s;", ty.st, k, ty.ct, xa,
                   yb ? ", y = " : "", yb ? yb : "", k, sto, ty.ct, k, ld);
    return k;
}

/* a cast of value xa (dtype sd) to dd in rounding mode `mode` into a new
 * register (its number): what pld_k_cast does to one element (pld_kern_cast.c),
 * with the per-element functions of pld_kern_fn.h the library calls, or the
 * dtype's store conversion where the library uses it (FP32 to FP16 / BF16
 * rounded to nearest: NONE, RINT, ROUND) */
static int loop_cast(fuse_t *f, pld_dtype_t sd, pld_dtype_t dd, int mode, const char *xa)
{
    const pld_cg_ewty_t ty = pld_cg_ew_type(dd);
    const int k = f->nreg++, eb = dd == PLD_DT_FP16 ? 5 : 8, mb = dd == PLD_DT_FP16 ? 10 : 7;
    char v[256], ld[32], hk[16];
    if (sd == dd)
        snprintf(v, sizeof v, "%s", xa); /* FP32, INT32: a copy */
    else if (dd == PLD_DT_INT32) /* rounded in the mode, saturated (NaN: 0) */
        snprintf(v, sizeof v, "pld_kfn_f2i32((double)(%s), %d)", xa, mode);
    else if (sd == PLD_DT_INT32 && dd == PLD_DT_FP32) /* to nearest even */
        snprintf(v, sizeof v, "pld_bits_f32((uint32_t)pld_kfn_i64_round_bits((int64_t)(%s), 8, 23))", xa);
    else if (sd == PLD_DT_INT32)
        snprintf(v, sizeof v, "(uint16_t)pld_kfn_i64_round_bits((int64_t)(%s), %d, %d)", xa, eb, mb);
    else if (dd == PLD_DT_FP32) /* FP16 / BF16 to FP32: exact */
        snprintf(v, sizeof v, "%s", xa);
    else if (sd == PLD_DT_FP32 && mode <= PLD_R_ROUND)
        snprintf(v, sizeof v, ty.sto, xa);
    else /* through the double, in the mode (FP16 <-> BF16 too) */
        snprintf(v, sizeof v, "(uint16_t)pld_kfn_f64_round_bits((double)(%s), %d, %d, pld_kfn_cast_rm(%d))", xa, eb, mb, mode);
    snprintf(hk, sizeof hk, "h%d", k);
    snprintf(ld, sizeof ld, ty.ld, hk);
    pld_buf_printf(&f->lb, " %s h%d = %s; const %s r%d = %s;", ty.st, k, v, ty.ct, k, ld);
    return k;
}

/* tree e computed as its own inline loop computes each element: the same C
 * expression (a broadcast operand: the library's operation on the element
 * of its row / column) */
static int loop_tree(fuse_t *f, const pld_expr_t *e)
{
    int scalar, form, expdif;
    const int op = node_op(f->g, e, &form, &expdif), bin = pld_cg_ew_binary(op, &scalar) >= 0;
    const pld_dtype_t dt = e->type->dtype;
    const int fl = pld_cg_ew_type(dt).fl;
    char xa[64], yb[64] = "";
    loop_operand(f, pld_op_bound(e, 0), xa, sizeof xa);
    if (op == PLD_OPID_TILE_CAST)
        return loop_cast(f, pld_op_bound(e, 0)->type->dtype, dt, pld_cg_round_mode(pld_op_bound(e, 2)), xa);
    const pld_expr_t *b = pld_op_bound(e, 1);
    if (bin && scalar) {
        snprintf(yb, sizeof yb, "fy%d", f->ny++);
    } else if (form) {
        char p[32];
        snprintf(p, sizeof p, "p%d[%s]", b->slot, form == 'r' ? "r" : form == 'c' ? "i" : "0");
        snprintf(yb, sizeof yb, pld_cg_ew_type(dt).ld, p);
        f->use[b->slot] |= 4;
    } else if (bin) {
        loop_operand(f, b, yb, sizeof yb);
    }
    int k = loop_step(f, dt, pld_cg_ew_cbody(op, fl), xa, bin ? yb : NULL);
    if (expdif) { /* then exp of the rounded difference, in place */
        char r[16];
        snprintf(r, sizeof r, "r%d", k);
        k = loop_step(f, dt, pld_cg_ew_cbody(PLD_OPID_TILE_EXP, 1), r, NULL);
    }
    return k;
}

static void loop_operand(fuse_t *f, const pld_expr_t *a, char *out, size_t n)
{
    if (a->kind == PLD_EX_CALL) {
        snprintf(out, n, "r%d", loop_tree(f, a));
    } else if (f->reg[a->slot] >= 0) {
        snprintf(out, n, "r%d", f->reg[a->slot]);
    } else {
        char p[32];
        snprintf(p, sizeof p, "%c%d[i]", f->rows ? 'q' : 'p', a->slot);
        snprintf(out, n, pld_cg_ew_type(f->g->slots[a->slot].dt).ld, p);
        f->use[a->slot] |= 1;
    }
}

/* before the loop, a concat's descriptor (as pld_cg_lay_concat sets it; the
 * data: the loop) and its operands' valid widths in cv<k>a / cv<k>b */
static void pre_concat(cg_t *g, const pld_expr_t *e, int u, int k)
{
    const int a = pld_op_bound(e, 0)->slot, b = pld_op_bound(e, 1)->slot;
    pld_cg_emit(g, "s%d.dt = %d; s%d.rank = 2; s%d.shape[0] = s%d.valid[0] = s%d.shape[0]; s%d.shape[1] = s%d.valid[1] = "
                   "s%d.shape[1] + s%d.shape[1];", u, (int)e->type->dtype, u, u, u, a, u, u, a, b);
    pld_cg_emit(g, "s%d.valid[0] = s%d.valid[0] < s%d.valid[0] ? s%d.valid[0] : s%d.valid[0]; s%d.valid[1] = s%d.valid[1] + "
                   "s%d.valid[1];", u, a, b, a, b, u, a, b);
    pld_cg_emit(g, "const int64_t cv%da = s%d.valid[1], cv%db = s%d.valid[1];", k, a, k, b);
}

/* after the loop (which wrote a concat's operands at columns [0, N) and
 * [N, 2N) of each row): the concat of partially valid operands, b's valid
 * columns after a's, zeros after both (sim's concat) */
static void post_concat(cg_t *g, int u, int k, int64_t m, int64_t n)
{
    const int es = esize(g->slots[u].dt);
    pld_cg_emit(g, "if (cv%da + cv%db < %lld)", k, k, (long long)(2 * n));
    pld_cg_emit(g, "    for (int64_t r = 0; r < %lld; r++) { char *q = (char *)s%d.data + r * %lld; memmove(q + cv%da * %d, q + "
                   "%lld, (size_t)cv%db * %d); memset(q + (cv%da + cv%db) * %d, 0, (size_t)(%lld - cv%da - cv%db) * %d); }",
                (long long)m, u, (long long)(2 * n * es), k, es, (long long)(n * es), k, es, k, k, es, (long long)(2 * n), k,
                k, es);
}

int pld_cg_fuse(cg_t *g, const pld_block_t *b, int i)
{
    const int len = chain_len(g, b, i);
    if (len == 0)
        return 0;
    const int ns = g->fn->nslots;
    fuse_t f;
    memset(&f, 0, sizeof f);
    f.g = g;
    f.reg = pld_mem_calloc((size_t)ns, sizeof *f.reg);
    f.use = pld_mem_calloc((size_t)ns, 1);
    f.vsrc = pld_mem_calloc((size_t)ns, sizeof *f.vsrc);
    f.voff = pld_mem_calloc((size_t)ns * 2, sizeof *f.voff);
    if (!f.reg || !f.use || !f.vsrc || !f.voff) {
        pld_mem_free(f.reg), pld_mem_free(f.use), pld_mem_free(f.vsrc), pld_mem_free(f.voff);
        return pld_cg_fail(g, b->stmts[i]->span, "out of memory");
    }
    for (int sl = 0; sl < ns; sl++)
        f.reg[sl] = f.vsrc[sl] = f.voff[sl] = -1;
    int cat = -1; /* the concat's statement (the last), if any */
    for (int k = 0; k < len; k++) {
        const pld_expr_t *e = b->stmts[i + k]->u.assign.value;
        const int lay = e->op == PLD_OPID_TILE_SLICE || e->op == PLD_OPID_TILE_CONCAT;
        f.rows |= lay || reads_rows(g, e);
        if (e->op == PLD_OPID_TILE_CONCAT)
            cat = k;
    }
    pld_cg_emit(g, "{ /* %d element-wise statement%s fused into one loop (lines %d-%d) */", len, len > 1 ? "s" : "",
                (int)b->stmts[i]->span.line, (int)b->stmts[i + len - 1]->span.line);
    g->ind++;
    /* what each statement does besides its loop, in program order: its
     * scalar operands, its descriptor (its first leaf's: every node's
     * result has its first operand's shape, and its valid shape where no
     * operand is broadcast), the capacity check; a slice's checks and
     * descriptor (its window is read in place), a concat's descriptor */
    int rc = 0;
    for (int k = 0; k < len && !rc; k++) {
        const pld_stmt_t *s = b->stmts[i + k];
        const pld_expr_t *t = s->u.assign.target, *e = s->u.assign.value, *leaf = e;
        g->cur_seq = s->seq;
        g->target = t;
        char dv[32], av[32];
        snprintf(dv, sizeof dv, "s%d", t->slot);
        if (e->op == PLD_OPID_TILE_SLICE) {
            if (pld_cg_lay_slice_view(g, e, dv, &f.voff[t->slot])) {
                rc = -1;
                break;
            }
            f.vsrc[t->slot] = pld_op_bound(e, 0)->slot;
            f.voff[ns + t->slot] = (int)pld_op_bound(e, 0)->type->shape[1].v;
        } else if (e->op == PLD_OPID_TILE_CONCAT) {
            pre_concat(g, e, t->slot, i + k);
        } else {
            if (pre_tree(&f, e)) {
                rc = -1;
                break;
            }
            while (leaf->kind == PLD_EX_CALL)
                leaf = pld_op_bound(leaf, 0);
            snprintf(av, sizeof av, "s%d", leaf->slot);
            pld_cg_copy_desc(g, dv, av);
            if (e->type->dtype != leaf->type->dtype) /* a cast in the tree: the result's dtype */
                pld_cg_emit(g, "%s.dt = %d;", dv, (int)e->type->dtype);
        }
        pld_cg_bound_tile(g, t->slot, e->type->mem, t);
    }
    /* the loop: each statement's tree, its value stored into its tile when
     * the tile is read outside the chain and no later statement of it
     * assigns the name again; a concat's operands stored into its tile */
    pld_buf_init(&f.lb);
    f.ny = 0;
    int nstores = 0;
    const pld_type_t *t0 = b->stmts[i]->u.assign.value->type;
    const long long m0 = t0->rank == 2 ? (long long)t0->shape[0].v : 0, n0 = t0->rank == 2 ? (long long)t0->shape[1].v : 0;
    for (int k = 0; k < len && !rc && !g->failed; k++) {
        const pld_stmt_t *s = b->stmts[i + k];
        const int sl = s->u.assign.target->slot;
        const pld_expr_t *e = s->u.assign.value;
        if (e->op == PLD_OPID_TILE_SLICE) { /* read through its row pointer */
            f.reg[sl] = -1;
            continue;
        }
        if (e->op == PLD_OPID_TILE_CONCAT) {
            if (!g->slots[sl].nodata) {
                pld_buf_printf(&f.lb, " q%d_O[i] = h%d; q%d_O[%lld + i] = h%d;", sl, f.reg[pld_op_bound(e, 0)->slot], sl, n0,
                               f.reg[pld_op_bound(e, 1)->slot]);
                f.use[sl] |= 8;
                nstores++;
            }
            continue;
        }
        const int r = loop_tree(&f, e);
        f.reg[sl] = r;
        int later = 0;
        for (int j = k + 1; j < len && !later; j++)
            later = b->stmts[i + j]->u.assign.target->slot == sl;
        if (!later && !g->slots[sl].nodata) {
            pld_buf_printf(&f.lb, " %c%d_O[i] = h%d;", f.rows ? 'q' : 'p', sl, r);
            f.use[sl] |= 2;
            nstores++;
        }
    }
    if (rc || g->failed) {
        rc = -1;
    } else if (nstores == 0) {
        pld_cg_emit(g, "/* every result is read in the chain only: no loop */");
    } else {
        /* one restrict pointer per tile (distinct locals never share
         * storage); a stored one is p<slot>_O (bench/native_vec_report.sh
         * finds element-wise loops by `O[i] =`); over rows: q.. at the row;
         * a slice: q<slot> into its source's row (only read: its restrict
         * pointers may share the source's storage) */
        for (int sl = 0; sl < ns; sl++) {
            const char *st = f.use[sl] ? pld_cg_ew_type(g->slots[sl].dt).st : NULL;
            if (f.vsrc[sl] >= 0)
                continue;
            if (f.use[sl] & 10)
                pld_cg_emit(g, "%s *restrict p%d_O = (%s *)s%d.data;", st, sl, st, sl);
            if ((f.use[sl] & 2) && (f.use[sl] & 5)) /* loaded and stored: the same pointer */
                pld_cg_emit(g, "%s *const p%d = p%d_O;", st, sl, sl);
            else if (f.use[sl] && !(f.use[sl] & 10))
                pld_cg_emit(g, "const %s *restrict p%d = (const %s *)s%d.data;", st, sl, st, sl);
        }
        if (!f.rows) {
            pld_cg_emit(g, "for (int64_t i = 0; i < %lld; i++) {%s }", (long long)pld_type_static_numel(t0), pld_buf_str(&f.lb));
        } else {
            pld_cg_emit(g, "for (int64_t r = 0; r < %lld; r++) {", m0);
            g->ind++;
            for (int sl = 0; sl < ns; sl++) {
                const char *st = f.use[sl] ? pld_cg_ew_type(g->slots[sl].dt).st : NULL;
                if (f.vsrc[sl] >= 0 && (f.use[sl] & 1)) {
                    const int src = f.vsrc[sl];
                    pld_cg_emit(g, "const %s *restrict q%d = (const %s *)s%d.data + (r + t%d[0]) * %d + t%d[1];", st, sl, st,
                                src, f.voff[sl], f.voff[ns + sl], f.voff[sl]);
                    continue;
                }
                if (f.use[sl] & 8)
                    pld_cg_emit(g, "%s *restrict q%d_O = p%d_O + r * %lld;", st, sl, sl, 2 * n0);
                if (f.use[sl] & 2)
                    pld_cg_emit(g, "%s *restrict q%d_O = p%d_O + r * %lld;", st, sl, sl, n0);
                if ((f.use[sl] & 3) == 3)
                    pld_cg_emit(g, "%s *const q%d = q%d_O;", st, sl, sl);
                else if (f.use[sl] & 1)
                    pld_cg_emit(g, "const %s *restrict q%d = p%d + r * %lld;", st, sl, sl, n0);
            }
            pld_cg_emit(g, "for (int64_t i = 0; i < %lld; i++) {%s }", n0, pld_buf_str(&f.lb));
            g->ind--;
            pld_cg_emit(g, "}");
        }
        if (cat >= 0 && !g->slots[b->stmts[i + cat]->u.assign.target->slot].nodata)
            post_concat(g, b->stmts[i + cat]->u.assign.target->slot, i + cat, m0, n0);
    }
    pld_buf_fini(&f.lb);
    pld_mem_free(f.reg), pld_mem_free(f.use), pld_mem_free(f.vsrc), pld_mem_free(f.voff);
    g->ind--;
    pld_cg_emit(g, "}");
    return rc < 0 ? -1 : len;
}
