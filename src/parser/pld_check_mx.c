/* pld_check_mx.c - checker rules of PyPTO's MX block-scaled matmul
 * (pl.tile.matmul_mx, matmul_mx_acc, matmul_mx_bias) and of the scale tiles'
 * path: pl.tile.load of a pl.MX_A_ZZ / pl.MX_B_NN tensor into Mat, pl.tile.move
 * of that Mat tile into LeftScale / RightScale, no tile.create there.
 * Facts and messages of PyPTO e2d0f78ae6d7: src/ir/op/tile_ops/matmul_mx.cpp
 * (DeduceTileMatMulMx*Type; "The operator tile.matmul_mx" reads
 * "pl.tile.matmul_mx" here) and src/ir/op/tile_ops/memory.cpp (tile.load,
 * tile.move, tile.create). Like PyPTO, the shape rules apply to constant
 * extents only. */
#include "pld_check.h"
#include "pld_check_int.h"

#include <string.h>

static int64_t cdim(const pld_dim_t *d)
{
    return d->kind == PLD_DIM_CONST ? d->v : -1;
}

static const pld_dim_t *vdim(const pld_type_t *t, int i)
{
    return t->valid ? &t->valid[i] : &t->shape[i];
}

/* MX scale groups along K: ceil(K / 32); -1 when K is not known. */
static int64_t groups(int64_t k)
{
    return k < 0 ? -1 : (k + 31) / 32;
}

/* A scale tile's dim d against the extent e the data operand implies (-1: not known). */
static int mx_dim(pld_ck_t *ck, ck_call_t *c, const char *role, const char *which, const char *axis, int64_t e,
                  const pld_dim_t *d)
{
    int64_t a = cdim(d);
    if (e < 0 || a < 0 || e == a)
        return 1;
    pld_ck_error(ck, c->call->span, "%s requires %s %s %s=%lld, but got %lld", c->info->name, role, which, axis,
                 (long long)e, (long long)a);
    return 0;
}

/* Operand i is a 2-D tile of dtype dt (role names it); 0 after an error or when unknown. */
static int mx_tile(pld_ck_t *ck, ck_call_t *c, int i, const char *role, pld_dtype_t dt)
{
    const pld_type_t *t = c->types[i];
    const char *nm = c->info->name;
    if (!t || t->kind == PLD_TY_UNKNOWN)
        return 0;
    if (t->kind != PLD_TY_TILE)
        pld_ck_error(ck, c->args[i]->span, "%s requires %s to be a TileType, but got %s", nm, role, pld_ck_tystr(ck, t));
    else if (t->rank != 2)
        pld_ck_error(ck, c->args[i]->span, "%s requires %s to be 2D, but got %d dimensions", nm, role, t->rank);
    else if (t->dtype != dt)
        pld_ck_error(ck, c->args[i]->span, "%s requires %s dtype %s, but got %s", nm, role, pld_dtype_name(dt),
                     pld_dtype_name(t->dtype));
    else
        return 1;
    return 0;
}

/* A scale tile (operand i): FP8E8M0, 2-D, physical [pr, pc], valid [vr, vc]. */
static int mx_scale(pld_ck_t *ck, ck_call_t *c, int i, const char *role, int64_t pr, int64_t pc, int64_t vr, int64_t vc)
{
    if (!mx_tile(ck, c, i, role, PLD_DT_FP8E8M0))
        return 0;
    const pld_type_t *t = c->types[i];
    return mx_dim(ck, c, role, "physical", "rows", pr, &t->shape[0]) &&
           mx_dim(ck, c, role, "physical", "cols", pc, &t->shape[1]) &&
           mx_dim(ck, c, role, "valid", "rows", vr, vdim(t, 0)) && mx_dim(ck, c, role, "valid", "cols", vc, vdim(t, 1));
}

/* One data operand's dtype rule (FP8E4M3FN; an FP4 one gets PyPTO's pl.cast hint). */
static int mx_data(pld_ck_t *ck, ck_call_t *c, const pld_type_t *t, const char *role)
{
    if (t->dtype == PLD_DT_FP8E4M3FN)
        return 1;
    pld_ck_error(ck, c->call->span, "%s requires %s dtype FP8E4M3FN, but got %s%s%s%s", c->info->name, role,
                 pld_dtype_name(t->dtype),
                 t->dtype == PLD_DT_FP4 ? "; native FP4 matmul is not supported, so cast the FP4 " : "",
                 t->dtype == PLD_DT_FP4 ? role : "", t->dtype == PLD_DT_FP4 ? " to FP8E4M3FN with pl.cast first" : "");
    return 0;
}

/* The K rules of one side: physical K % 64, valid K > 0, ceil(validK/32) == ceil(K/32). */
static int mx_k(pld_ck_t *ck, ck_call_t *c, const char *side, int64_t k, int64_t vk)
{
    const char *nm = c->info->name;
    if (k >= 0 && (k <= 0 || k % 64)) {
        pld_ck_error(ck, c->call->span, "%s requires physical K divisible by 64 (ISA/PTOAS tmatmul_mx), but got %s K=%lld",
                     nm, side, (long long)k);
        return 0;
    }
    if (vk >= 0 && vk <= 0) {
        pld_ck_error(ck, c->call->span, "%s requires positive valid K, but got %s valid K=%lld", nm, side, (long long)vk);
        return 0;
    }
    if (k >= 0 && vk >= 0 && groups(k) != groups(vk)) {
        pld_ck_error(ck, c->call->span, "%s requires %s valid K to round up to the same scale-group count as physical K "
                     "(ceil(validK/32) == ceil(physicalK/32)); otherwise the PTOAS matmul_mx and tget_scale_addr "
                     "verifiers conflict. Got physical K=%lld, valid K=%lld", nm, side, (long long)k, (long long)vk);
        return 0;
    }
    return 1;
}

/* lhs (index l), lhs_scale, rhs, rhs_scale: the [M, N] FP32 Acc result (valid [lhs valid M, rhs valid N]). */
static const pld_type_t *mx_result(pld_ck_t *ck, ck_call_t *c, int l)
{
    const pld_type_t *a = c->types[l], *b = c->types[l + 2];
    const char *nm = c->info->name;
    if (!a || !b || a->kind == PLD_TY_UNKNOWN || b->kind == PLD_TY_UNKNOWN)
        return NULL;
    if (a->kind != PLD_TY_TILE || b->kind != PLD_TY_TILE) {
        int r = a->kind != PLD_TY_TILE ? l : l + 2;
        pld_ck_error(ck, c->args[r]->span, "%s requires %s to be a TileType, but got %s", nm, r == l ? "lhs" : "rhs",
                     pld_ck_tystr(ck, c->types[r]));
        return NULL;
    }
    if (a->rank != 2 || b->rank != 2) {
        pld_ck_error(ck, c->call->span, "%s requires 2D lhs/rhs tiles", nm);
        return NULL;
    }
    if (!mx_data(ck, c, a, "lhs") || !mx_data(ck, c, b, "rhs"))
        return NULL;
    int64_t m = cdim(&a->shape[0]), ka = cdim(&a->shape[1]), kb = cdim(&b->shape[0]), n = cdim(&b->shape[1]);
    int64_t vka = cdim(vdim(a, 1)), vkb = cdim(vdim(b, 0));
    if (m >= 0 && (m <= 0 || m % 16)) {
        pld_ck_error(ck, c->call->span, "%s requires physical M divisible by 16 (ISA/PTOAS tmatmul_mx), but got M=%lld", nm,
                     (long long)m);
        return NULL;
    }
    if (n >= 0 && (n <= 0 || n % 32)) {
        pld_ck_error(ck, c->call->span, "%s requires physical N divisible by 32 for FP8E4M3FN (ISA/PTOAS tmatmul_mx "
                     "32-byte row), but got N=%lld", nm, (long long)n);
        return NULL;
    }
    if (ka >= 0 && kb >= 0 && ka != kb) {
        pld_ck_error(ck, c->call->span, "%s requires matching physical K, but got lhs K=%lld and rhs K=%lld", nm,
                     (long long)ka, (long long)kb);
        return NULL;
    }
    if (vka >= 0 && vkb >= 0 && vka != vkb) {
        pld_ck_error(ck, c->call->span, "%s requires matching valid K, but got lhs valid K=%lld and rhs valid K=%lld", nm,
                     (long long)vka, (long long)vkb);
        return NULL;
    }
    if (!mx_k(ck, c, "lhs", ka, vka) || !mx_k(ck, c, "rhs", kb, vkb))
        return NULL;
    int64_t vm = cdim(vdim(a, 0)), vn = cdim(vdim(b, 1));
    if (!mx_scale(ck, c, l + 1, "lhs_scale", m, groups(ka), vm, groups(vka >= 0 ? vka : ka)) ||
        !mx_scale(ck, c, l + 3, "rhs_scale", groups(kb), n, groups(vkb >= 0 ? vkb : kb), vn))
        return NULL;
    pld_dim_t d[2] = {a->shape[0], b->shape[1]}, v[2] = {*vdim(a, 0), *vdim(b, 1)};
    return pld_ck_shaped(ck, PLD_TY_TILE, PLD_DT_FP32, d, 2, a->valid || b->valid ? v : NULL, PLD_MEM_ACC);
}

/* matmul_mx_acc: acc (operand 0) FP32 2-D of the result's physical and valid shape. */
static const pld_type_t *mx_acc(pld_ck_t *ck, ck_call_t *c)
{
    const pld_type_t *acc = c->types[0];
    if (!mx_tile(ck, c, 0, "acc", PLD_DT_FP32))
        return acc && acc->kind == PLD_TY_TILE ? acc : &pld_type_unknown;
    const pld_type_t *o = mx_result(ck, c, 1);
    if (!o)
        return acc;
    for (int i = 0; i < 2; i++) {
        int64_t x = cdim(&acc->shape[i]), y = cdim(&o->shape[i]);
        if (x >= 0 && y >= 0 && x != y) {
            pld_ck_error(ck, c->call->span, "%s requires acc %s to match output %s", c->info->name, i ? "cols" : "rows",
                         i ? "N" : "M");
            return acc;
        }
        if (!mx_dim(ck, c, "acc", "valid", i ? "cols" : "rows", cdim(vdim(o, i)), vdim(acc, i)))
            return acc;
    }
    return acc;
}

/* matmul_mx_bias: bias (operand 4) FP32 [1, N], valid rows 1 and valid cols the result's. */
static const pld_type_t *mx_bias(pld_ck_t *ck, ck_call_t *c)
{
    if (!mx_tile(ck, c, 4, "bias", PLD_DT_FP32))
        return &pld_type_unknown;
    const pld_type_t *bias = c->types[4], *o = mx_result(ck, c, 0);
    if (!o)
        return &pld_type_unknown;
    const char *nm = c->info->name;
    int64_t br = cdim(&bias->shape[0]), bc = cdim(&bias->shape[1]), n = cdim(&o->shape[1]), vr = cdim(vdim(bias, 0));
    if (br >= 0 && br != 1)
        pld_ck_error(ck, c->call->span, "%s requires bias shape [1, N]", nm);
    else if (n >= 0 && bc >= 0 && n != bc)
        pld_ck_error(ck, c->call->span, "%s requires bias cols to match N", nm);
    else if (vr >= 0 && vr != 1)
        pld_ck_error(ck, c->call->span, "%s requires bias valid rows to be 1, but got %lld", nm, (long long)vr);
    else
        mx_dim(ck, c, "bias", "valid", "cols", cdim(vdim(o, 1)), vdim(bias, 1));
    return o;
}

const pld_type_t *pld_ck_mx_call(pld_ck_t *ck, ck_call_t *c)
{
    const pld_type_t *o;
    switch (c->info->id) {
    case PLD_OPID_TILE_MATMUL_MX:
        o = mx_result(ck, c, 0);
        return o ? o : &pld_type_unknown;
    case PLD_OPID_TILE_MATMUL_MX_ACC:
        return mx_acc(ck, c);
    case PLD_OPID_TILE_MATMUL_MX_BIAS:
        return mx_bias(ck, c);
    default:
        return NULL;
    }
}

/* ---- the scale tiles' memory path ---- */

static const pld_type_t *with_layout(pld_ck_t *ck, const pld_type_t *src, int layout, pld_dtype_t dt)
{
    pld_type_t *t = pld_type_new(ck->p, src->kind);
    if (!t) {
        ck->oom = 1;
        return src;
    }
    *t = *src;
    t->layout = layout;
    t->dtype = dt;
    return t;
}

const pld_type_t *pld_ck_mx_memory(pld_ck_t *ck, ck_call_t *c, const pld_type_t *res)
{
    const pld_type_t *t0 = c->types[0];
    const char *nm = c->info->name;
    if (!res || res->kind != PLD_TY_TILE || !t0)
        return res;
    if (c->info->id == PLD_OPID_TILE_CREATE) {
        if (res->mem == PLD_MEM_LEFTSCALE || res->mem == PLD_MEM_RIGHTSCALE)
            pld_ck_error(ck, c->call->span, "%s does not support target_memory=LeftScale/RightScale; create the scale tile "
                         "with tile.load to Mat followed by tile.move", nm);
        return res;
    }
    if (c->info->id == PLD_OPID_TILE_LOAD && (t0->layout == PLD_LAYOUT_MX_A || t0->layout == PLD_LAYOUT_MX_B)) {
        const char *err = NULL;
        if (t0->dtype != PLD_DT_FP8E8M0 && t0->dtype != PLD_DT_UINT8)
            pld_ck_error(ck, c->call->span, "%s of an MX-layout tensor requires FP8E8M0 or UINT8 dtype, but got %s", nm,
                         pld_dtype_name(t0->dtype));
        else if (t0->rank != 2)
            pld_ck_error(ck, c->call->span, "%s of an MX-layout tensor requires a 2D tensor, got rank %d", nm, t0->rank);
        else if (res->rank != 2)
            pld_ck_error(ck, c->call->span, "%s of an MX-layout tensor requires a 2D load window, got rank %d", nm,
                         res->rank);
        else if (t0->has_stride)
            err = "only supports packed 2D sources; strided sources are not supported";
        else if (res->mem != PLD_MEM_MAT)
            err = "requires target_memory=MemorySpace.Mat";
        else
            return with_layout(ck, res, t0->layout, res->dtype);
        if (err)
            pld_ck_error(ck, c->call->span, "%s of an MX-layout tensor %s", nm, err);
        return res;
    }
    if (c->info->id == PLD_OPID_TILE_MOVE && (res->mem == PLD_MEM_LEFTSCALE || res->mem == PLD_MEM_RIGHTSCALE)) {
        int left = res->mem == PLD_MEM_LEFTSCALE;
        if (t0->rank != 2)
            pld_ck_error(ck, c->call->span, "%s into LeftScale/RightScale requires a 2D tile, got rank %d", nm, t0->rank);
        else if (t0->mem != PLD_MEM_MAT)
            pld_ck_error(ck, c->call->span, "%s into LeftScale/RightScale requires the input tile to be in Mat memory", nm);
        else if (t0->dtype != PLD_DT_FP8E8M0 && t0->dtype != PLD_DT_UINT8)
            pld_ck_error(ck, c->call->span, "%s into LeftScale/RightScale requires UINT8 or FP8E8M0 dtype, but got %s", nm,
                         pld_dtype_name(t0->dtype));
        else if (t0->layout != (left ? PLD_LAYOUT_MX_A : PLD_LAYOUT_MX_B))
            pld_ck_error(ck, c->call->span, "%s into %s requires the source Mat tile to use the matching %s layout", nm,
                         left ? "LeftScale" : "RightScale", left ? "row/row/32" : "col/col/32");
        else /* a UINT8 scale becomes FP8E8M0 (the same bytes) */
            return with_layout(ck, res, t0->layout, PLD_DT_FP8E8M0);
    }
    return res;
}
