/* pld_cgen_scalar.c - the C code of scalar expressions (pld_cgen_int.h): literals,
 * locals, module constants, unary and binary operators, pl.const / cast_scalar /
 * min / max, block indices, index lists. An integer is an int64_t wrapped to its
 * dtype, a float a double rounded to its dtype, as the interpreter's values. */
#include "pld_cgen_int.h"

#include <stdio.h>
#include <string.h>

/* C text that wraps an int64 expression `x` to dt */
static void wrap_i(char *b, size_t n, pld_dtype_t dt, const char *x)
{
    switch (dt) {
    case PLD_DT_INT64: case PLD_DT_INDEX: case PLD_DT_NONE: case PLD_DT_UINT64: case PLD_DT_TASK_ID:
        snprintf(b, n, "(%s)", x);
        break;
    case PLD_DT_INT32: snprintf(b, n, "((int64_t)(int32_t)(uint32_t)(uint64_t)(%s))", x); break;
    case PLD_DT_UINT32: snprintf(b, n, "((int64_t)(uint32_t)(uint64_t)(%s))", x); break;
    case PLD_DT_INT16: snprintf(b, n, "((int64_t)(int16_t)(uint16_t)(uint64_t)(%s))", x); break;
    case PLD_DT_UINT16: snprintf(b, n, "((int64_t)(uint16_t)(uint64_t)(%s))", x); break;
    case PLD_DT_INT8: snprintf(b, n, "((int64_t)(int8_t)(uint8_t)(uint64_t)(%s))", x); break;
    case PLD_DT_UINT8: snprintf(b, n, "((int64_t)(uint8_t)(uint64_t)(%s))", x); break;
    default: snprintf(b, n, "rt->wrap_i(%d, %s)", (int)dt, x); break;
    }
}

static void round_f(char *b, size_t n, pld_dtype_t dt, const char *x)
{
    switch (dt) {
    case PLD_DT_FP64: snprintf(b, n, "(%s)", x); break;
    case PLD_DT_FP32: snprintf(b, n, "((double)(float)(%s))", x); break;
    default: snprintf(b, n, "rt->round_f(%d, %s)", (int)dt, x); break;
    }
}

/* declares `int64_t tN = <wrap(x)>` or `double tN = <round(x)>`; returns N */
static int def_scalar(cg_t *g, int fl, pld_dtype_t dt, const char *x)
{
    char b[1024];
    if (fl)
        round_f(b, sizeof b, dt == PLD_DT_NONE ? PLD_DT_FP32 : dt, x);
    else
        wrap_i(b, sizeof b, dt, x);
    int t = tmp(g);
    pld_cg_emit(g, "%s t%d = %s;", fl ? "double" : "int64_t", t, b);
    return t;
}

int pld_cg_wrap_int(cg_t *g, int t, pld_dtype_t dt)
{
    char x[32];
    snprintf(x, sizeof x, "t%d", t);
    return def_scalar(g, 0, dt, x);
}

static const pld_type_t *scalar_type(const pld_expr_t *e)
{
    return e->type && e->type->kind == PLD_TY_SCALAR ? e->type : NULL;
}

static int module_const(cg_t *g, const pld_expr_t *e, int *fl, pld_dtype_t *dt)
{
    for (int i = 0; i < g->p->nconsts; i++) {
        const pld_const_decl_t *cd = &g->p->consts[i];
        if (cd->name != e->u.name)
            continue;
        const pld_expr_t *v = pld_const_value(cd);
        if (v->kind == PLD_EX_INT || v->kind == PLD_EX_BOOL) {
            *fl = 0;
            *dt = v->kind == PLD_EX_BOOL ? PLD_DT_BOOL : PLD_DT_INDEX;
            char x[64];
            snprintf(x, sizeof x, "INT64_C(%lld)", (long long)(v->kind == PLD_EX_INT ? v->u.ival : v->u.bval));
            return def_scalar(g, 0, *dt, x);
        }
        if (v->kind == PLD_EX_FLOAT) {
            *fl = 1;
            *dt = PLD_DT_FP32;
            char x[64];
            snprintf(x, sizeof x, "%.17g", v->u.fval);
            return def_scalar(g, 1, *dt, x);
        }
        break;
    }
    /* a dynamic dimension or a computed constant: from the arguments or
     * computed here (pld_cgen_rtop.c), else the runtime evaluates it */
    const int cd = pld_cg_const_dyn(g, e, fl, dt);
    if (cd != -2)
        return cd;
    const pld_type_t *t = scalar_type(e);
    *fl = t && is_float_dt(t->dtype);
    *dt = t ? t->dtype : PLD_DT_INDEX;
    return pld_cg_exec(g, e, *fl ? SK_FLT : SK_INT);
}

/* the C value of scalar local `slot` */
static int name_scalar(cg_t *g, const pld_expr_t *e, int *fl, pld_dtype_t *dt)
{
    const cslot_t *s = &g->slots[e->slot];
    if (s->kind != SK_INT && s->kind != SK_FLT && s->kind != SK_CTX)
        return pld_cg_fail(g, e->span, "'%s' is not a scalar here", e->u.name);
    *fl = s->kind == SK_FLT;
    *dt = s->kind == SK_CTX ? PLD_DT_INT64 : s->dt;
    int t = tmp(g);
    pld_cg_emit(g, "%s t%d = s%d;", *fl ? "double" : "int64_t", t, e->slot);
    return t;
}

/* one (possibly list) index/offset argument as a C array; *n entries; -1 absent */
int pld_cg_ilist(cg_t *g, const pld_expr_t *e, int *n)
{
    if (!e) {
        *n = -1;
        return -1;
    }
    const pld_expr_t *one[1] = {e};
    const pld_expr_t *const *items = one;
    int k = 1;
    if (e->kind == PLD_EX_LIST || e->kind == PLD_EX_TUPLE) {
        items = (const pld_expr_t *const *)e->u.seq.items;
        k = e->u.seq.n;
    }
    if (k > 8)
        return pld_cg_fail(g, e->span, "more than 8 indices");
    int vals[8];
    for (int i = 0; i < k; i++) {
        int fl;
        pld_dtype_t dt;
        vals[i] = pld_cg_scalar(g, items[i], &fl, &dt);
        if (vals[i] < 0)
            return -1;
        if (fl)
            return pld_cg_fail(g, items[i]->span, "an index must be an integer");
    }
    int t = tmp(g);
    pld_buf_t b;
    pld_buf_init(&b);
    for (int i = 0; i < k; i++)
        pld_buf_printf(&b, "%st%d", i ? ", " : "", vals[i]);
    pld_cg_emit(g, "int64_t t%d[%d] = {%s};", t, k > 0 ? k : 1, k > 0 ? pld_buf_str(&b) : "0");
    pld_buf_fini(&b);
    *n = k;
    return t;
}

static int gen_binary(cg_t *g, const pld_expr_t *e, int *fl, pld_dtype_t *dt)
{
    int fa, fb;
    pld_dtype_t da, db;
    int a = pld_cg_scalar(g, e->u.bin.a, &fa, &da);
    if (a < 0)
        return -1;
    int b = pld_cg_scalar(g, e->u.bin.b, &fb, &db);
    if (b < 0)
        return -1;
    pld_binop_t op = e->u.bin.op;
    char x[256];
    int f = fa || fb;
    if (op >= PLD_OP_EQ && op <= PLD_OP_GE) {
        static const char *cmp[] = {"==", "!=", "<", "<=", ">", ">="};
        if (f)
            snprintf(x, sizeof x, "(int64_t)((double)t%d %s (double)t%d)", a, cmp[op - PLD_OP_EQ], b);
        else
            snprintf(x, sizeof x, "(int64_t)(t%d %s t%d)", a, cmp[op - PLD_OP_EQ], b);
        *fl = 0;
        *dt = PLD_DT_BOOL;
        int t = tmp(g);
        pld_cg_emit(g, "int64_t t%d = %s;", t, x);
        return t;
    }
    if (op == PLD_OP_AND || op == PLD_OP_OR || op == PLD_OP_XOR) {
        *fl = 0;
        *dt = PLD_DT_BOOL;
        int t = tmp(g);
        pld_cg_emit(g, "int64_t t%d = (int64_t)((t%d != 0) %s (t%d != 0));", t, a, op == PLD_OP_AND ? "&&" : op == PLD_OP_OR ? "||" : "!=", b);
        return t;
    }
    const pld_type_t *ty = scalar_type(e);
    pld_dtype_t rdt = ty && ty->dtype != PLD_DT_NONE ? ty->dtype : pld_dtype_promote(da, db);
    if (f || op == PLD_OP_DIV || is_float_dt(rdt)) {
        switch (op) {
        case PLD_OP_ADD: snprintf(x, sizeof x, "(double)t%d + (double)t%d", a, b); break;
        case PLD_OP_SUB: snprintf(x, sizeof x, "(double)t%d - (double)t%d", a, b); break;
        case PLD_OP_MUL: snprintf(x, sizeof x, "(double)t%d * (double)t%d", a, b); break;
        case PLD_OP_DIV: snprintf(x, sizeof x, "(double)t%d / (double)t%d", a, b); break;
        case PLD_OP_FLOORDIV: snprintf(x, sizeof x, "floor((double)t%d / (double)t%d)", a, b); break;
        case PLD_OP_MOD: snprintf(x, sizeof x, "pc_fmod_py((double)t%d, (double)t%d)", a, b); break;
        case PLD_OP_POW: snprintf(x, sizeof x, "pow((double)t%d, (double)t%d)", a, b); break;
        default: return pld_cg_fail(g, e->span, "operator not supported on float scalars");
        }
        *fl = 1;
        *dt = is_float_dt(rdt) ? rdt : PLD_DT_FP32;
        return def_scalar(g, 1, *dt, x);
    }
    int s = pld_cg_site(g, e);
    switch (op) {
    case PLD_OP_ADD: snprintf(x, sizeof x, "(int64_t)((uint64_t)t%d + (uint64_t)t%d)", a, b); break;
    case PLD_OP_SUB: snprintf(x, sizeof x, "(int64_t)((uint64_t)t%d - (uint64_t)t%d)", a, b); break;
    case PLD_OP_MUL: snprintf(x, sizeof x, "(int64_t)((uint64_t)t%d * (uint64_t)t%d)", a, b); break;
    case PLD_OP_FLOORDIV:
    case PLD_OP_MOD:
        pld_cg_emit(g, "if (t%d == 0) return pc_cold(), rt->fail(bk, %d, \"integer %s by zero\");", b, s,
                    op == PLD_OP_MOD ? "modulo" : "division");
        snprintf(x, sizeof x, "%s(t%d, t%d)", op == PLD_OP_MOD ? "pc_floormod" : "pc_floordiv", a, b);
        break;
    case PLD_OP_LSHIFT: snprintf(x, sizeof x, "(t%d < 0 || t%d > 63 ? 0 : (int64_t)((uint64_t)t%d << t%d))", b, b, a, b); break;
    case PLD_OP_RSHIFT: snprintf(x, sizeof x, "(t%d < 0 || t%d > 63 ? (t%d < 0 ? -1 : 0) : t%d >> t%d)", b, b, a, a, b); break;
    case PLD_OP_BITAND: snprintf(x, sizeof x, "(t%d & t%d)", a, b); break;
    case PLD_OP_BITOR: snprintf(x, sizeof x, "(t%d | t%d)", a, b); break;
    case PLD_OP_BITXOR: snprintf(x, sizeof x, "(t%d ^ t%d)", a, b); break;
    default: return pld_cg_fail(g, e->span, "this integer operator is not compiled by the native backend yet");
    }
    *fl = 0;
    *dt = rdt == PLD_DT_NONE ? PLD_DT_INDEX : rdt;
    return def_scalar(g, 0, *dt, x);
}

/* A scalar cast of value t (fl, from) to dt. */
static int convert(cg_t *g, int t, int fl, pld_dtype_t dt)
{
    char x[64];
    if (is_float_dt(dt)) {
        snprintf(x, sizeof x, "(double)t%d", t);
        return def_scalar(g, 1, dt, x);
    }
    if (fl) /* float -> int: truncation toward zero (pld_v_convert) */
        snprintf(x, sizeof x, "(int64_t)t%d", t);
    else
        snprintf(x, sizeof x, "t%d", t);
    return def_scalar(g, 0, dt, x);
}

static pld_dtype_t dtype_arg(const pld_expr_t *e)
{
    char b[64];
    if (!e || !pld_ast_dotted(e, b, sizeof b))
        return PLD_DT_NONE;
    const char *dot = strrchr(b, '.');
    return pld_dtype_from_name(dot ? dot + 1 : b);
}

static int gen_call_scalar(cg_t *g, const pld_expr_t *e, int *fl, pld_dtype_t *dt)
{
    const pld_type_t *ty = scalar_type(e);
    switch (e->op) {
    case PLD_OPID_PL_CONST: {
        int f0;
        pld_dtype_t d0;
        int a = pld_cg_scalar(g, e->u.call.args[0].value, &f0, &d0);
        if (a < 0)
            return -1;
        *dt = e->u.call.nargs > 1 ? dtype_arg(e->u.call.args[1].value) : (ty ? ty->dtype : PLD_DT_NONE);
        if (*dt == PLD_DT_NONE)
            return pld_cg_fail(g, e->span, "pl.const needs a dtype the native backend can read");
        *fl = is_float_dt(*dt);
        return convert(g, a, f0, *dt);
    }
    case PLD_OPID_PL_CAST_SCALAR: {
        int f0;
        pld_dtype_t d0;
        int a = pld_cg_scalar(g, e->u.call.args[0].value, &f0, &d0);
        if (a < 0)
            return -1;
        *dt = ty && ty->dtype != PLD_DT_NONE ? ty->dtype : d0;
        *fl = is_float_dt(*dt);
        return convert(g, a, f0, *dt);
    }
    case PLD_OPID_PL_MIN:
    case PLD_OPID_PL_MAX: {
        int fa, fb;
        pld_dtype_t da, db;
        int a = pld_cg_scalar(g, e->u.call.args[0].value, &fa, &da);
        if (a < 0)
            return -1;
        int b = pld_cg_scalar(g, e->u.call.args[1].value, &fb, &db);
        if (b < 0)
            return -1;
        *dt = ty && ty->dtype != PLD_DT_NONE ? ty->dtype : da;
        *fl = is_float_dt(*dt);
        int t = tmp(g);
        const char *cmp = e->op == PLD_OPID_PL_MIN ? "<=" : ">=";
        if (fa || fb)
            pld_cg_emit(g, "int t%d = (double)t%d %s (double)t%d;", t, a, cmp, b);
        else
            pld_cg_emit(g, "int t%d = t%d %s t%d;", t, a, cmp, b);
        int ca = convert(g, a, fa, *dt), cb = convert(g, b, fb, *dt);
        int r = tmp(g);
        pld_cg_emit(g, "%s t%d = t%d ? t%d : t%d;", *fl ? "double" : "int64_t", r, t, ca, cb);
        return r;
    }
    case PLD_OPID_TILE_GET_BLOCK_IDX:
    case PLD_OPID_TILE_GET_BLOCK_NUM: {
        *fl = 0;
        *dt = PLD_DT_INDEX;
        int t = tmp(g);
        pld_cg_emit(g, "int64_t t%d = %s(args);", t, e->op == PLD_OPID_TILE_GET_BLOCK_IDX ? "pc_block_idx" : "pc_block_num");
        return t;
    }
    case PLD_OPID_TENSOR_READ:
    case PLD_OPID_TILE_READ:
        return pld_cg_elem_access(g, e, 0, fl, dt);
    default:
        break;
    }
    const int sys = pld_cg_sys_scalar(g, e, fl, dt);
    if (sys != -2)
        return sys;
    const char *note;
    pld_cgen_class_t c = pld_cgen_op_class(e->op, &note);
    if (c == PLD_CGEN_RUNTIME) {
        *fl = ty && is_float_dt(ty->dtype);
        *dt = ty ? ty->dtype : PLD_DT_INDEX;
        if (e->type && e->type->kind == PLD_TY_COMMCTX)
            return pld_cg_exec(g, e, SK_CTX);
        return pld_cg_exec(g, e, *fl ? SK_FLT : SK_INT);
    }
    return pld_cg_fail(g, e->span, "%s is not compiled by the native backend (%s)",
                       e->op >= 0 ? pld_op_info((pld_op_id_t)e->op)->name : "this call", note);
}

int pld_cg_scalar(cg_t *g, const pld_expr_t *e, int *fl, pld_dtype_t *dt)
{
    if (g->failed)
        return -1;
    switch (e->kind) {
    case PLD_EX_INT: {
        const pld_type_t *t = scalar_type(e);
        *fl = 0;
        *dt = t && t->dtype != PLD_DT_NONE ? t->dtype : PLD_DT_INDEX;
        char x[64];
        snprintf(x, sizeof x, "INT64_C(%lld)", (long long)e->u.ival);
        return def_scalar(g, 0, *dt, x);
    }
    case PLD_EX_FLOAT: {
        *fl = 1;
        *dt = PLD_DT_FP32;
        char x[64];
        snprintf(x, sizeof x, "%.17g", e->u.fval);
        return def_scalar(g, 1, *dt, x);
    }
    case PLD_EX_BOOL:
        *fl = 0;
        *dt = PLD_DT_BOOL;
        return def_scalar(g, 0, PLD_DT_INT64, e->u.bval ? "1" : "0");
    case PLD_EX_NAME:
        if (e->slot >= 0)
            return name_scalar(g, e, fl, dt);
        return module_const(g, e, fl, dt);
    case PLD_EX_BINARY:
        return gen_binary(g, e, fl, dt);
    case PLD_EX_UNARY: {
        int fa;
        pld_dtype_t da;
        int a = pld_cg_scalar(g, e->u.un.a, &fa, &da);
        if (a < 0)
            return -1;
        char x[96];
        *fl = fa;
        *dt = da;
        switch (e->u.un.op) {
        case PLD_UOP_NOT:
            *fl = 0;
            *dt = PLD_DT_BOOL;
            snprintf(x, sizeof x, "(int64_t)(t%d == 0)", a);
            return def_scalar(g, 0, PLD_DT_INT64, x);
        case PLD_UOP_POS: return a;
        case PLD_UOP_NEG:
            snprintf(x, sizeof x, fa ? "-t%d" : "(int64_t)(0 - (uint64_t)t%d)", a);
            return def_scalar(g, fa, da, x);
        case PLD_UOP_INVERT:
            if (fa)
                return pld_cg_fail(g, e->span, "'~' needs an integer");
            snprintf(x, sizeof x, "~t%d", a);
            return def_scalar(g, 0, da, x);
        }
        return -1;
    }
    case PLD_EX_CALL:
        if (e->op < 0)
            return pld_cg_fail(g, e->span, "calls of other functions inside a kernel are not compiled by the native backend yet");
        return gen_call_scalar(g, e, fl, dt);
    default: {
        const int sys = pld_cg_sys_scalar(g, e, fl, dt); /* an array element a[i] */
        if (sys != -2)
            return sys;
        if (e->kind == PLD_EX_SUBSCRIPT) { /* an element x[i, j] of a tensor or a tile */
            const int el = pld_cg_elem_read(g, e, fl, dt);
            if (el != -2)
                return el;
        }
        return pld_cg_fail(g, e->span, "this expression is not compiled by the native backend");
    }
    }
}
