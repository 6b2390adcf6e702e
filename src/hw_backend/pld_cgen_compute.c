/* pld_cgen_compute.c - the compute ops in generated code (pld_cgen_int.h):
 * element-wise binary, tile-scalar and unary ops (inline loops for FP32, FP16,
 * BF16 and INT32 in the kernel library's order and rounding; other dtypes
 * and broadcasting operands: pld_cgen_ext.c); matmul and cast:
 * pld_cgen_mm.c. */
#include "pld_cgen_int.h"
#include "pld_crt.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- element-wise */

static int same_static_shape(const pld_type_t *a, const pld_type_t *b)
{
    if (!a || !b || a->rank != b->rank)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->shape[i].kind != PLD_DIM_CONST || b->shape[i].kind != PLD_DIM_CONST || a->shape[i].v != b->shape[i].v)
            return 0;
    return 1;
}

/* element-wise binary op codes (PC_*) and their C forms for FP32 / INT32 */
int pld_cg_ew_binary(int op, int *scalar)
{
    *scalar = 0;
    switch (op) {
    case PLD_OPID_TILE_ADDS: *scalar = 1; /* fall through */
    case PLD_OPID_TILE_ADD: return PC_ADD;
    case PLD_OPID_TILE_SUBS: *scalar = 1; /* fall through */
    case PLD_OPID_TILE_SUB: return PC_SUB;
    case PLD_OPID_TILE_MULS: *scalar = 1; /* fall through */
    case PLD_OPID_TILE_MUL: return PC_MUL;
    case PLD_OPID_TILE_DIVS: *scalar = 1; /* fall through */
    case PLD_OPID_TILE_DIV: return PC_DIV;
    case PLD_OPID_TILE_MAXIMUMS: *scalar = 1; /* fall through */
    case PLD_OPID_TILE_MAXIMUM: return PC_MAX;
    case PLD_OPID_TILE_MINIMUMS: *scalar = 1; /* fall through */
    case PLD_OPID_TILE_MINIMUM: return PC_MIN;
    default: return -1;
    }
}

int pld_cg_ew_unary(int op)
{
    switch (op) {
    case PLD_OPID_TILE_EXP: return PC_EXP;
    case PLD_OPID_TILE_LOG: return PC_LOG;
    case PLD_OPID_TILE_SQRT: return PC_SQRT;
    case PLD_OPID_TILE_RSQRT: return PC_RSQRT;
    case PLD_OPID_TILE_ABS: return PC_ABS;
    case PLD_OPID_TILE_NEG: return PC_NEG;
    case PLD_OPID_TILE_RECIP: return PC_RECIP;
    case PLD_OPID_TILE_RELU: return PC_RELU;
    default: return -1;
    }
}

static const char *f32_binary(int code)
{
    switch (code) {
    case PC_ADD: return "x + y";
    case PC_SUB: return "x - y";
    case PC_MUL: return "x * y";
    case PC_DIV: return "x / y";
    case PC_MAX: return "pc_fmaxf(x, y)";
    case PC_MIN: return "pc_fminf(x, y)";
    default: return NULL;
    }
}

static const char *i32_binary(int code)
{
    switch (code) {
    case PC_ADD: return "(int32_t)((uint32_t)x + (uint32_t)y)";
    case PC_SUB: return "(int32_t)((uint32_t)x - (uint32_t)y)";
    case PC_MUL: return "(int32_t)((uint32_t)x * (uint32_t)y)";
    case PC_MAX: return "(x > y ? x : y)";
    case PC_MIN: return "(x < y ? x : y)";
    default: return NULL;
    }
}

static const char *f32_unary(int code)
{
    switch (code) {
    case PC_EXP: return "(float)exp((double)x)";
    case PC_LOG: return "pld_kfn_log(x)"; /* pld_kern_fn.h: the library's log and rsqrt */
    case PC_RSQRT: return "pld_kfn_rsqrt(x)";
    case PC_SQRT: return "sqrtf(x)";
    case PC_ABS: return "fabsf(x)";
    case PC_NEG: return "-x";
    case PC_RECIP: return "1.0f / x";
    case PC_RELU: return "((x > 0 || x != x) ? x : 0.0f)";
    default: return NULL;
    }
}

/* How an element-wise loop holds a dtype: storage type, compute type, the
 * load and store conversions (FP16 / BF16 computed in float and rounded on
 * every store, as the kernel library does). NULL st: no inline loop. */
typedef pld_cg_ewty_t ew_ty_t;

ew_ty_t pld_cg_ew_type(pld_dtype_t dt)
{
    switch (dt) {
    case PLD_DT_FP32: return (ew_ty_t){"float", "float", "%s", "%s", 1};
    case PLD_DT_FP16: return (ew_ty_t){"uint16_t", "float", "pld_f16_to_f32(%s)", "pld_f32_to_f16(%s)", 1};
    case PLD_DT_BF16: return (ew_ty_t){"uint16_t", "float", "pld_bf16_to_f32(%s)", "pld_f32_to_bf16(%s)", 1};
    case PLD_DT_INT32: return (ew_ty_t){"int32_t", "int32_t", "%s", "%s", 0};
    default: return (ew_ty_t){NULL, NULL, NULL, NULL, 0};
    }
}

/* emits `for (i < n) { ct x = ld(A[i]) [, y = ld(B[i])]; O[i] = sto(body); }` */
static void ew_loop(cg_t *g, const ew_ty_t *t, int64_t n, const char *a, const char *b, const char *dst, const char *body)
{
    char la[64], lb[64], so[256];
    snprintf(la, sizeof la, t->ld, "A[i]");
    snprintf(lb, sizeof lb, t->ld, "B[i]");
    snprintf(so, sizeof so, t->sto, body);
    pld_cg_emit(g, "{ const %s *A = (const %s *)%s.data; %s *O = (%s *)%s.data;", t->st, t->st, a, t->st, t->st, dst);
    if (b)
        pld_cg_emit(g, "  const %s *B = (const %s *)%s.data;", t->st, t->st, b);
    pld_cg_emit(g, "  for (int64_t i = 0; i < %lld; i++) { %s x = %s%s%s; O[i] = %s; } }", (long long)n, t->ct, la,
                b ? ", y = " : "", b ? lb : "", so);
}

/* 1 when e is emitted as an inline loop: a dtype of ew_ty with a C form of
 * the op, and for two tiles one static shape and dtype */
int pld_cg_ew_inline(const pld_expr_t *e)
{
    int scalar, code = pld_cg_ew_binary(e->op, &scalar), ucode = pld_cg_ew_unary(e->op);
    const pld_expr_t *a = pld_op_bound(e, 0), *b = pld_op_bound(e, 1);
    if (!a || !a->type || tile_bytes(a->type) < 0)
        return 0;
    const ew_ty_t ty = pld_cg_ew_type(a->type->dtype);
    if (!ty.st)
        return 0;
    if (ucode >= 0)
        return ty.fl && f32_unary(ucode);
    if (!(ty.fl ? f32_binary(code) : i32_binary(code)))
        return 0;
    return scalar || (b && b->type && b->type->kind == PLD_TY_TILE && same_static_shape(a->type, b->type) &&
                      b->type->dtype == a->type->dtype);
}

/* the C form of element-wise op `op` over x (and y) for a float (fl) or INT32 dtype, NULL when none */
const char *pld_cg_ew_cbody(int op, int fl)
{
    int scalar, code = pld_cg_ew_binary(op, &scalar), ucode = pld_cg_ew_unary(op);
    if (ucode >= 0)
        return fl ? f32_unary(ucode) : NULL;
    return code < 0 ? NULL : fl ? f32_binary(code) : i32_binary(code);
}

/* `const CT name = ...;`: scalar t<v> (a double when fl) in the element dtype dt
 * first (pld_elem_set_f / _i), as the library does, then in the compute type */
void pld_cg_ew_scalar_y(cg_t *g, pld_dtype_t dt, int v, int fl, const char *name)
{
    const ew_ty_t ty = pld_cg_ew_type(dt);
    if (dt == PLD_DT_FP32)
        pld_cg_emit(g, "const float %s = (float)%st%d;", name, fl ? "" : "(double)", v);
    else if (ty.fl) {
        char ly[64], yb[40];
        snprintf(yb, sizeof yb, "%sb", name);
        snprintf(ly, sizeof ly, ty.ld, yb);
        pld_cg_emit(g, "uint16_t %s; rt->set_f(&%s, %d, 0, (double)t%d); const float %s = %s;", yb, yb, (int)dt, v, name, ly);
    } else
        pld_cg_emit(g, "const int32_t %s = (int32_t)(uint32_t)(uint64_t)%st%d%s;", name, fl ? "pc_f2i(" : "", v, fl ? ")" : "");
}

int pld_cg_ew(cg_t *g, const pld_expr_t *e, const char *dst)
{
    if (!pld_cg_ew_inline(e)) /* other dtypes, broadcasting operands: the kernel library (pld_cgen_ext.c) */
        return pld_cg_ext_elementwise(g, e, dst);
    int scalar, code = pld_cg_ew_binary(e->op, &scalar), ucode = pld_cg_ew_unary(e->op);
    char av[32], bv[32];
    if (pld_cg_tile_operand(g, pld_op_bound(e, 0), e, av))
        return -1;
    const pld_type_t *ta = pld_op_bound(e, 0)->type;
    pld_dtype_t dt = ta->dtype;
    const ew_ty_t ty = pld_cg_ew_type(dt);
    int64_t n = pld_type_static_numel(ta);
    if (ucode >= 0) {
        pld_cg_copy_desc(g, dst, av);
        ew_loop(g, &ty, n, av, NULL, dst, f32_unary(ucode));
        return 0;
    }
    const char *bf = ty.fl ? f32_binary(code) : i32_binary(code);
    if (scalar) {
        int fl;
        pld_dtype_t sd;
        int v = pld_cg_scalar(g, pld_op_bound(e, 1), &fl, &sd);
        if (v < 0)
            return -1;
        pld_cg_copy_desc(g, dst, av);
        pld_cg_emit(g, "{");
        g->ind++;
        pld_cg_ew_scalar_y(g, dt, v, fl, "y");
        ew_loop(g, &ty, n, av, NULL, dst, bf);
        g->ind--;
        pld_cg_emit(g, "}");
        return 0;
    }
    if (pld_cg_tile_operand(g, pld_op_bound(e, 1), e, bv))
        return -1;
    pld_cg_copy_desc(g, dst, av);
    ew_loop(g, &ty, n, av, bv, dst, bf);
    return 0;
}
