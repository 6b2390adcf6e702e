/* pld_check_gather.c - checker rules of the GM gather/scatter family:
 * pl.tile.mgather (Vec and Mat forms), pl.tile.mscatter, pl.tile.gatherb,
 * pl.tile.gather_compare, pl.tile/tensor.scatter_update, pl.tensor.paged_gather,
 * pl.tensor.no_dep,
 * with PyPTO's constraints (snapshot e2d0f78ae6d7: src/ir/op/tile_ops/memory.cpp
 * DeduceTileMgatherType, DeduceTileMscatterType; src/ir/op/tile_ops/gather.cpp
 * DeduceTileGatherbType, DeduceTileGatherCompareType;
 * src/ir/op/tile_ops/transform.cpp and
 * src/ir/op/tensor_ops/scatter_update.cpp; src/ir/op/tensor_ops/paged_gather.cpp;
 * python/pypto/ir/op/tile_ops.py mgather's coalesce / gather_oob spellings).
 * pld_ck_gather_call() returns NULL for every other op. */
#include "pld_check.h"
#include "pld_check_int.h"

#include <string.h>

static int known(const pld_type_t *t)
{
    return t && t->kind != PLD_TY_UNKNOWN;
}

int pld_check_mode_arg(const pld_expr_t *e, const char *const *names, int n, int dflt)
{
    if (!e)
        return dflt;
    if (e->kind == PLD_EX_INT)
        return e->u.ival >= 0 && e->u.ival < n ? (int)e->u.ival : -1;
    if (e->kind == PLD_EX_STR)
        for (int i = 0; i < n; i++)
            if (strcmp(e->u.str.s, names[i]) == 0)
                return i;
    return -1;
}

const char *const pld_mgather_coalesce[2] = {"row", "elem"};
const char *const pld_mgather_oob[4] = {"undefined", "clamp", "wrap", "zero"};
const char *const pld_gather_cmp_modes[6] = {"eq", "ne", "lt", "le", "gt", "ge"};

int pld_check_scatter_update_args(const pld_expr_t *const *a, int pos[3])
{
    /* parameters: 0 input, 1-3 positional arg1..arg3, 4 dim, 5 index, 6 src */
    int np = (a[1] != NULL) + (a[2] != NULL) + (a[3] != NULL);
    if (np == 3 && !a[4] && !a[5] && !a[6])
        pos[0] = 1, pos[1] = 2, pos[2] = 3;
    else if (np == 2 && a[1] && a[2] && a[4] && !a[5] && !a[6])
        pos[0] = 4, pos[1] = 1, pos[2] = 2;
    else if (np == 1 && a[1] && !a[4] && a[5] && a[6])
        pos[0] = 1, pos[1] = 5, pos[2] = 6;
    else if (np == 0 && a[4] && a[5] && a[6])
        pos[0] = 4, pos[1] = 5, pos[2] = 6;
    else
        return 0;
    return 1;
}

static int mgather_dtype_ok(pld_dtype_t d)
{
    return d == PLD_DT_INT8 || d == PLD_DT_UINT8 || d == PLD_DT_INT16 || d == PLD_DT_UINT16 || d == PLD_DT_INT32 ||
           d == PLD_DT_UINT32 || d == PLD_DT_FP16 || d == PLD_DT_BF16 || d == PLD_DT_FP32 || d == PLD_DT_FP8E4M3FN ||
           d == PLD_DT_FP8E5M2 || d == PLD_DT_HF8;
}

static int is_tensor(const pld_type_t *t)
{
    return t->kind == PLD_TY_TENSOR || t->kind == PLD_TY_DTENSOR;
}

/* 1 when a and b name the same variable. */
static int same_name(const pld_expr_t *a, const pld_expr_t *b)
{
    return a->kind == PLD_EX_NAME && b->kind == PLD_EX_NAME && a->u.name == b->u.name;
}

/* A constant dim of t (-1 when dynamic). */
static int64_t cdim(const pld_type_t *t, int i)
{
    return t->shape[i].kind == PLD_DIM_CONST ? t->shape[i].v : -1;
}

/* Mat output: rows a multiple of 16, cols of 32 bytes; valid_shape (parameter 6) constants in (0, shape]. */
static const pld_type_t *mgather_mat(pld_ck_t *ck, ck_call_t *c, pld_dtype_t dt, const pld_dim_t *d)
{
    pld_dim_t v[2] = {d[0], d[1]};
    int64_t c0 = 32 / pld_dtype_bytes(dt);
    if (d[0].kind != PLD_DIM_CONST || d[1].kind != PLD_DIM_CONST || d[0].v % 16 || d[1].v % c0) {
        pld_ck_error(ck, c->call->span, "%s Mat output must have static rows, a multiple of 16, and static columns, a "
                     "multiple of %lld (32 bytes of %s)", c->info->name, (long long)c0, pld_dtype_name(dt));
        return &pld_type_unknown;
    }
    if (c->args[6]) {
        pld_dim_t w[PLD_CK_MAX_RANK];
        int r = pld_ck_dims_of_list(ck, c->args[6], w);
        for (int i = 0; r == 2 && i < 2; i++)
            if (w[i].kind != PLD_DIM_CONST || w[i].v <= 0 || w[i].v > d[i].v)
                r = -1;
        if (r != 2) {
            pld_ck_error(ck, c->args[6]->span, "%s Mat valid_shape must be two constants with 0 < valid_shape[i] <= "
                         "output shape [%lld, %lld]", c->info->name, (long long)d[0].v, (long long)d[1].v);
            return &pld_type_unknown;
        }
        v[0] = w[0], v[1] = w[1];
    }
    return pld_ck_shaped(ck, PLD_TY_TILE, dt, d, 2, v, PLD_MEM_MAT);
}

static const pld_type_t *mgather(pld_ck_t *ck, ck_call_t *c)
{
    const pld_type_t *m = c->types[0], *ix = c->types[1], *sc = c->types[5];
    int co = pld_check_mode_arg(c->args[2], pld_mgather_coalesce, 2, 0);
    int oob = pld_check_mode_arg(c->args[3], pld_mgather_oob, 4, 0);
    if (co < 0)
        pld_ck_error(ck, c->args[2]->span, "%s coalesce must be 'row', 'elem', 0, or 1", c->info->name);
    if (oob < 0)
        pld_ck_error(ck, c->args[3]->span, "%s gather_oob must be 'undefined', 'clamp', 'wrap', 'zero', or int 0-3",
                     c->info->name);
    int mat = c->args[4] && c->args[4]->kind == PLD_EX_ATTR && pld_mem_from_name(c->args[4]->u.attr.attr) == PLD_MEM_MAT;
    if (c->args[4] && !mat && !(c->args[4]->kind == PLD_EX_ATTR && strcmp(c->args[4]->u.attr.attr, "Vec") == 0)) {
        pld_ck_error(ck, c->args[4]->span, "%s target_memory must be MemorySpace.Vec or MemorySpace.Mat", c->info->name);
        return &pld_type_unknown;
    }
    if (co < 0 || oob < 0 || !known(m) || !known(ix))
        return &pld_type_unknown;
    if (!mgather_dtype_ok(m->dtype) || m->rank < 1) {
        pld_ck_error(ck, c->args[0]->span, "%s mem must be a tensor of I8, U8, I16, U16, I32, U32, FP16, BF16, FP32, "
                     "FP8E4M3FN, FP8E5M2 or HF8, got %s", c->info->name, pld_ck_tystr(ck, m));
        return &pld_type_unknown;
    }
    if (ix->dtype != PLD_DT_INT32 || ix->rank != 2 || (mat ? !is_tensor(ix) : ix->kind != PLD_TY_TILE)) {
        pld_ck_error(ck, c->args[1]->span, "%s with %s output needs a 2-D INT32 index %s, got %s", c->info->name,
                     mat ? "Mat" : "Vec", mat ? "GM tensor" : "tile", pld_ck_tystr(ck, ix));
        return &pld_type_unknown;
    }
    if (!mat && (c->args[5] || c->args[6])) {
        pld_ck_error(ck, (c->args[5] ? c->args[5] : c->args[6])->span, "%s permits scratch only for Mat elem mode and "
                     "valid_shape only for Mat output (Vec output takes the index tile's valid region)", c->info->name);
        return &pld_type_unknown;
    }
    if (co == 0 && m->rank < 2) {
        pld_ck_error(ck, c->args[0]->span, "%s row mode requires mem rank >= 2 so rows have an element dimension, got %s",
                     c->info->name, pld_ck_tystr(ck, m));
        return &pld_type_unknown;
    }
    pld_dim_t d[2], v[2];
    const pld_dim_t *iv = ix->valid ? ix->valid : ix->shape;
    if (co == 1) { /* elem: the index's shape */
        d[0] = ix->shape[0], d[1] = ix->shape[1], v[0] = iv[0], v[1] = iv[1];
    } else {
        int64_t r0 = cdim(ix, 0), r1 = cdim(ix, 1);
        if (r0 < 0 || r1 < 0 || (r0 != 1 && (mat || r1 != 1))) {
            pld_ck_error(ck, c->args[1]->span, "%s row mode requires a static %s index, got %s", c->info->name,
                         mat ? "[1, R] GM" : "[1, R] or [R, 1]", pld_ck_tystr(ck, ix));
            return &pld_type_unknown;
        }
        int a = r0 == 1 ? 1 : 0;
        d[0] = ix->shape[a], d[1] = m->shape[m->rank - 1], v[0] = iv[a], v[1] = d[1];
    }
    if (!mat)
        return pld_ck_shaped(ck, PLD_TY_TILE, m->dtype, d, 2, v, PLD_MEM_VEC);
    if (co == 1) {
        if (!c->args[5] || !known(sc)) {
            if (!c->args[5])
                pld_ck_error(ck, c->call->span, "%s Mat elem mode requires a GM scratch tensor (scratch=)", c->info->name);
            return &pld_type_unknown;
        }
        int64_t need = pld_type_static_numel(ix), have = pld_type_static_numel(sc);
        if (sc->dtype != m->dtype || (need >= 0 && have >= 0 && have < need) || same_name(c->args[5], c->args[0]) ||
            same_name(c->args[5], c->args[1])) {
            pld_ck_error(ck, c->args[5]->span, "%s Mat elem scratch must be a distinct GM tensor of mem's dtype with at "
                         "least %lld elements, got %s", c->info->name, (long long)need, pld_ck_tystr(ck, sc));
            return &pld_type_unknown;
        }
    } else if (c->args[5]) {
        pld_ck_error(ck, c->args[5]->span, "%s permits scratch only for Mat elem mode", c->info->name);
        return &pld_type_unknown;
    }
    return mgather_mat(ck, c, m->dtype, d);
}

static const pld_type_t *mscatter(pld_ck_t *ck, ck_call_t *c)
{
    const pld_type_t *s = c->types[0], *ix = c->types[1], *o = c->types[2];
    if (!known(s) || !known(ix) || !known(o))
        return &pld_type_unknown;
    pld_dtype_t d = s->dtype;
    if (d != PLD_DT_FP16 && d != PLD_DT_FP32 && d != PLD_DT_INT16 && d != PLD_DT_INT32) {
        pld_ck_error(ck, c->args[0]->span, "%s requires src dtype to be FP16, FP32, INT16, or INT32, got %s",
                     c->info->name, pld_dtype_name(d));
        return &pld_type_unknown;
    }
    if (ix->dtype != PLD_DT_INT32 || ix->rank != s->rank) {
        pld_ck_error(ck, c->args[1]->span, "%s requires an INT32 idx of src's rank %d, got %s", c->info->name, s->rank,
                     pld_ck_tystr(ck, ix));
        return &pld_type_unknown;
    }
    for (int i = 0; i < s->rank; i++)
        if (pld_dim_eq(&s->shape[i], &ix->shape[i]) == 0) {
            pld_ck_error(ck, c->args[1]->span, "%s requires idx shape to match src shape at dimension %d, got %s and %s",
                         c->info->name, i, pld_ck_tystr(ck, ix), pld_ck_tystr(ck, s));
            return &pld_type_unknown;
        }
    if (o->dtype != d || o->rank < 1) {
        pld_ck_error(ck, c->args[2]->span, "%s requires output_tensor of src's dtype %s (at least 1-D), got %s",
                     c->info->name, pld_dtype_name(d), pld_ck_tystr(ck, o));
        return &pld_type_unknown;
    }
    return o;
}

static int gatherb_dtype_ok(pld_dtype_t d)
{
    return d == PLD_DT_INT8 || d == PLD_DT_UINT8 || d == PLD_DT_INT16 || d == PLD_DT_UINT16 || d == PLD_DT_INT32 ||
           d == PLD_DT_UINT32 || d == PLD_DT_FP16 || d == PLD_DT_BF16 || d == PLD_DT_FP32;
}

static const pld_type_t *gatherb(pld_ck_t *ck, ck_call_t *c)
{
    const pld_type_t *s = c->types[0], *ofs = c->types[1];
    if (!known(s) || !known(ofs))
        return &pld_type_unknown;
    pld_dtype_t od = c->args[2] ? pld_ck_ann_dtype(ck, c->args[2]) : s->dtype;
    if (!gatherb_dtype_ok(s->dtype) || !gatherb_dtype_ok(od) || s->rank != 2) {
        pld_ck_error(ck, c->call->span, "%s requires a 2-D src and an output_dtype among the 8/16/32-bit ints/uints, "
                     "FP16, BF16, FP32; got %s and %s", c->info->name, pld_ck_tystr(ck, s), pld_dtype_name(od));
        return &pld_type_unknown;
    }
    int64_t oc = cdim(ofs, ofs->rank > 1 ? 1 : 0);
    if (ofs->dtype != PLD_DT_UINT32 || ofs->rank != 2 || oc <= 0 || oc % 8) {
        pld_ck_error(ck, c->args[1]->span, "%s requires a 2-D UINT32 offset tile with a static positive multiple of 8 "
                     "columns (a 32-byte row), got %s", c->info->name, pld_ck_tystr(ck, ofs));
        return &pld_type_unknown;
    }
    int64_t k = 32 / pld_dtype_bytes(od);
    const pld_dim_t *ov = ofs->valid ? ofs->valid : ofs->shape;
    pld_dim_t d[2] = {ofs->shape[0], {PLD_DIM_CONST, oc * k, NULL, NULL}};
    pld_dim_t v[2] = {ov[0], {PLD_DIM_CONST, ov[1].v * k, NULL, NULL}};
    return pld_ck_shaped(ck, PLD_TY_TILE, od, d, 2, ov[1].kind == PLD_DIM_CONST ? v : NULL, PLD_MEM_VEC);
}

static const pld_type_t *scatter_update(pld_ck_t *ck, ck_call_t *c)
{
    int pos[3], tile = c->info->id == PLD_OPID_TILE_SCATTER_UPDATE;
    int64_t dim;
    if (!pld_check_scatter_update_args((const pld_expr_t *const *)c->args, pos)) {
        pld_ck_error(ck, c->call->span, "%s expects (input, dim, index, src), (input, index, src, dim=...), or (input, "
                     "dim, index=..., src=...)", c->info->name);
        return &pld_type_unknown;
    }
    if (!pld_ck_const_int(ck, c->args[pos[0]], &dim) || dim != -2) {
        pld_ck_error(ck, c->args[pos[0]]->span, "%s: only dim=-2 is currently supported", c->info->name);
        return &pld_type_unknown;
    }
    const pld_type_t *in = c->types[0], *ix = c->types[pos[1]], *s = c->types[pos[2]];
    if (!known(in) || !known(ix) || !known(s))
        return &pld_type_unknown;
    pld_type_kind_t k = tile ? PLD_TY_TILE : PLD_TY_TENSOR;
    if (ix->kind != k || s->kind != k || ix->rank != 2 || !pld_dtype_is_int(ix->dtype)) {
        pld_ck_error(ck, c->call->span, "%s needs a 2-D integer index [b, s] and a src %s, got %s and %s", c->info->name,
                     tile ? "tile" : "tensor", pld_ck_tystr(ck, ix), pld_ck_tystr(ck, s));
        return &pld_type_unknown;
    }
    if ((in->rank != 2 && in->rank != 4) || s->rank != in->rank || s->dtype != in->dtype ||
        pld_dim_eq(&s->shape[s->rank - 1], &in->shape[in->rank - 1]) == 0 ||
        (in->rank == 4 && (cdim(in, 2) != 1 || cdim(s, 2) != 1))) {
        pld_ck_error(ck, c->call->span, "%s needs input [rows, d] with src [b * s, d], or input [blocks, block_size, 1, "
                     "d] with src [b, s, 1, d], of one dtype; got %s and %s", c->info->name, pld_ck_tystr(ck, in),
                     pld_ck_tystr(ck, s));
        return &pld_type_unknown;
    }
    return pld_ck_shaped(ck, in->kind, in->dtype, in->shape, in->rank, tile ? in->valid : NULL, in->mem);
}

static const pld_type_t *paged_gather(pld_ck_t *ck, ck_call_t *c)
{
    const pld_type_t *s = c->types[0], *ix = c->types[1], *bt = c->types[2];
    int64_t v[4] = {0, 0, 0, 0}, tr = 0; /* block_size, size, max_indices, col_off */
    static const int at[4] = {3, 4, 5, 7};
    for (int i = 0; i < 4; i++)
        if (c->args[at[i]] && (!pld_ck_const_int(ck, c->args[at[i]], &v[i]) || v[i] < (i == 3 ? 0 : 1))) {
            pld_ck_error(ck, c->args[at[i]]->span, "%s %s must be a %s constant", c->info->name,
                         c->info->params[at[i]].name, i == 3 ? "non-negative" : "positive");
            return &pld_type_unknown;
        }
    if (c->args[8])
        tr = c->args[8]->kind == PLD_EX_BOOL && c->args[8]->u.bval;
    if (tr && c->args[6] && !(c->args[6]->kind == PLD_EX_ATTR && pld_mem_from_name(c->args[6]->u.attr.attr) == PLD_MEM_MAT))
        pld_ck_error(ck, c->args[6]->span, "%s requires space=MemorySpace.Mat (L1) when is_trans=True", c->info->name);
    if (!known(s) || !known(ix) || !known(bt))
        return &pld_type_unknown;
    pld_dtype_t d = s->dtype;
    if ((d != PLD_DT_FP16 && d != PLD_DT_BF16 && d != PLD_DT_FP32 && d != PLD_DT_INT8) || s->rank != 2) {
        pld_ck_error(ck, c->args[0]->span, "%s requires a 2-D src of FP16, BF16, FP32 or INT8, got %s", c->info->name,
                     pld_ck_tystr(ck, s));
        return &pld_type_unknown;
    }
    for (int i = 1; i <= 2; i++) {
        const pld_type_t *t = c->types[i];
        if (t->dtype != PLD_DT_INT32 || (t->rank != 1 && (t->rank != 2 || cdim(t, 0) != 1))) {
            pld_ck_error(ck, c->args[i]->span, "%s requires %s to be INT32 [n] or [1, n], got %s", c->info->name,
                         c->info->params[i].name, pld_ck_tystr(ck, t));
            return &pld_type_unknown;
        }
    }
    if (cdim(s, 1) >= 0 && v[3] + v[1] > cdim(s, 1)) {
        pld_ck_error(ck, c->call->span, "%s requires col_off + size (%lld) <= src columns (%lld)", c->info->name,
                     (long long)(v[3] + v[1]), (long long)cdim(s, 1));
        return &pld_type_unknown;
    }
    pld_dim_t o[2] = {{PLD_DIM_CONST, tr ? v[1] : v[2], NULL, NULL}, {PLD_DIM_CONST, tr ? v[2] : v[1], NULL, NULL}};
    return pld_ck_shaped(ck, PLD_TY_TENSOR, d, o, 2, NULL, PLD_MEM_NONE);
}

const pld_type_t *pld_ck_gather_compare(pld_ck_t *ck, ck_call_t *c, const int *at)
{
    const pld_type_t *s = c->types[at[0]], *kv = c->types[at[1]];
    int64_t oc = 0, off = 0;
    if (pld_check_mode_arg(c->args[at[2]], pld_gather_cmp_modes, 6, 0) < 0)
        pld_ck_error(ck, c->args[at[2]]->span, "%s cmp_mode must be one of 'eq', 'ne', 'lt', 'le', 'gt', 'ge' or int 0-5",
                     c->info->name);
    if (c->args[at[3]] && (!pld_ck_const_int(ck, c->args[at[3]], &off) || off != 0))
        pld_ck_error(ck, c->args[at[3]]->span, "%s offset must be 0: PyPTO does not define what a nonzero offset does",
                     c->info->name);
    if (!c->args[at[4]] || !pld_ck_const_int(ck, c->args[at[4]], &oc) || oc <= 0) {
        pld_ck_error(ck, c->args[at[4]] ? c->args[at[4]]->span : c->call->span, "%s requires out_cols=, a positive constant",
                     c->info->name);
        return &pld_type_unknown;
    }
    pld_dtype_t cd = c->args[at[5]] ? pld_ck_ann_dtype(ck, c->args[at[5]]) : PLD_DT_INT32;
    if (cd != PLD_DT_INT32 && cd != PLD_DT_UINT32) {
        pld_ck_error(ck, c->args[at[5]]->span, "%s requires count_dtype to be INT32 or UINT32", c->info->name);
        return &pld_type_unknown;
    }
    if (!known(s) || !known(kv))
        return &pld_type_unknown;
    pld_dtype_t d = s->dtype;
    if ((d != PLD_DT_FP16 && d != PLD_DT_FP32 && d != PLD_DT_INT16 && d != PLD_DT_INT32) || s->rank != 2) {
        pld_ck_error(ck, c->args[at[0]]->span, "%s requires a 2-D src of FP16, FP32, INT16 or INT32, got %s", c->info->name,
                     pld_ck_tystr(ck, s));
        return &pld_type_unknown;
    }
    if (pld_dtype_is_float(kv->dtype) != pld_dtype_is_float(d)) {
        pld_ck_error(ck, c->args[at[1]]->span, "%s requires kvalue of src's dtype %s, got %s", c->info->name,
                     pld_dtype_name(d), pld_ck_tystr(ck, kv));
        return &pld_type_unknown;
    }
    pld_dim_t dd[2] = {s->shape[0], {PLD_DIM_CONST, oc, NULL, NULL}}, cc[2] = {{PLD_DIM_CONST, 1, NULL, NULL}, s->shape[0]};
    pld_type_t *t = pld_type_new(ck->p, PLD_TY_TUPLE);
    const pld_type_t **el = pld_arena_alloc(&ck->p->arena, sizeof *el * 2);
    if (!t || !el)
        return &pld_type_unknown;
    el[0] = pld_ck_shaped(ck, s->kind, PLD_DT_INT32, dd, 2, NULL, s->mem);
    el[1] = pld_ck_shaped(ck, s->kind, cd, cc, 2, NULL, s->mem);
    t->nelems = 2;
    t->elems = el;
    return t;
}

const pld_type_t *pld_ck_gather_call(pld_ck_t *ck, ck_call_t *c)
{
    switch (c->info->id) {
    case PLD_OPID_TILE_MGATHER:
        return mgather(ck, c);
    case PLD_OPID_TILE_MSCATTER:
        return mscatter(ck, c);
    case PLD_OPID_TILE_GATHERB:
        return gatherb(ck, c);
    case PLD_OPID_TILE_GATHER_COMPARE: {
        static const int at[6] = {0, 1, 3, 4, 5, 6}; /* src, kvalue, cmp_mode, offset, out_cols, count_dtype */
        return pld_ck_gather_compare(ck, c, at);
    }
    case PLD_OPID_TILE_SCATTER_UPDATE:
    case PLD_OPID_TENSOR_SCATTER_UPDATE:
        return scatter_update(ck, c);
    case PLD_OPID_TENSOR_PAGED_GATHER:
        return paged_gather(ck, c);
    case PLD_OPID_TENSOR_NO_DEP:
        return c->types[0] ? c->types[0] : &pld_type_unknown;
    default:
        return NULL;
    }
}
