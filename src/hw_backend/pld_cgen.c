/* pld_cgen.c - C code generation for one kernel function (pld_cgen.h).
 *
 * Values in generated code: an integer scalar is an int64_t holding the value
 * wrapped to its dtype, a float scalar a double rounded to its dtype (as the
 * interpreter's values), a tensor a pc_tensor, a tile a pc_tile over storage
 * allocated once per block for its slot (the largest tile the slot holds), a
 * comm context an int64_t handle of the runtime. Every expression is
 * evaluated into a fresh C local in source order, so evaluation order and
 * error sites match the interpreter; the C compiler folds the locals away. */
#include "pld_cgen.h"
#include "pld_crt.h"
#include "pld_buf.h"
#include "pld_check.h"
#include "pld_dtype.h"
#include "pld_mem.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- op table */

static const struct {
    pld_cgen_class_t cls;
    const char *note;
} op_table[PLD_OPID__COUNT] = {
#define CG(id, cls, note) [PLD_OPID_##id] = {PLD_CGEN_##cls, note},
#include "pld_cgen_ops.def"
#undef CG
};

pld_cgen_class_t pld_cgen_op_class(int op, const char **note)
{
    if (op < 0 || op >= PLD_OPID__COUNT) {
        if (note)
            *note = "not an op";
        return PLD_CGEN_UNCLASSIFIED;
    }
    if (note)
        *note = op_table[op].note ? op_table[op].note : "missing from src/hw_backend/pld_cgen_ops.def";
    return op_table[op].cls;
}

const char *pld_cgen_class_name(pld_cgen_class_t c)
{
    switch (c) {
    case PLD_CGEN_INLINE: return "inline";
    case PLD_CGEN_LIBRARY: return "library";
    case PLD_CGEN_RUNTIME: return "runtime";
    case PLD_CGEN_NO_CODE: return "no code";
    case PLD_CGEN_UNSUPPORTED: return "unsupported";
    default: return "UNCLASSIFIED";
    }
}

/* ---------------------------------------------------------------- state */

enum { SK_NONE = 0, SK_INT, SK_FLT, SK_TENSOR, SK_TILE, SK_CTX };

typedef struct cslot {
    int kind;          /* SK_* */
    pld_dtype_t dt;    /* scalars, tiles */
    size_t bytes;      /* tiles: storage */
    pld_mem_t mem;     /* tiles: the memory space of the first tile it holds */
    unsigned mems;     /* tiles: bit m: a tile of memory space m is bound to it (the capacity check) */
} cslot_t;

typedef struct cg {
    const pld_program_t *p;
    const pld_func_t *fn;
    cslot_t *slots;
    pld_buf_t out;     /* the function body */
    int ind;
    int ntmp;
    const pld_expr_t **sites;
    int nsites, capsites;
    pld_buf_t tmpdecl; /* storage of temporary tiles (declared at the top) */
    int failed;
    char *err;
    size_t errn;
    /* loops with carried values (innermost last): the carried names */
    const pld_expr_t *carried[32];
    int depth;
    int32_t cur_seq;   /* pld_stmt_t.seq of the statement being generated */
    const pld_expr_t *target; /* the name being assigned (where the interpreter reports a tile check) */
    int defer_targets; /* the final yield of the innermost loop sets the carried names only (gen_for) */
} cg_t;

static int fail(cg_t *g, pld_span_t sp, const char *fmt, ...)
{
    if (g->failed)
        return -1;
    g->failed = 1;
    char msg[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(g->err, g->errn, "%s:%d:%d: %s", g->p->file, (int)sp.line, (int)sp.col, msg);
    return -1;
}

static void emit(cg_t *g, const char *fmt, ...)
{
    for (int i = 0; i < g->ind; i++)
        pld_buf_puts(&g->out, "    ");
    va_list ap;
    va_start(ap, fmt);
    pld_buf_vprintf(&g->out, fmt, ap);
    va_end(ap);
    pld_buf_putc(&g->out, '\n');
}

static int site(cg_t *g, const pld_expr_t *e)
{
    for (int i = g->nsites - 1; i >= 0 && i >= g->nsites - 4; i--)
        if (g->sites[i] == e)
            return i;
    if (g->nsites == g->capsites) {
        int cap = g->capsites ? 2 * g->capsites : 64;
        const pld_expr_t **s = pld_mem_realloc((void *)g->sites, (size_t)cap * sizeof *s);
        if (!s) {
            fail(g, e->span, "out of memory");
            return 0;
        }
        g->sites = s;
        g->capsites = cap;
    }
    g->sites[g->nsites] = e;
    return g->nsites++;
}

static int tmp(cg_t *g)
{
    return g->ntmp++;
}

static int is_float_dt(pld_dtype_t d)
{
    return pld_dtype_is_float(d);
}

static int kind_of(const pld_type_t *t, pld_dtype_t *dt)
{
    if (!t)
        return -1;
    *dt = t->dtype;
    switch (t->kind) {
    case PLD_TY_SCALAR: return is_float_dt(t->dtype) ? SK_FLT : SK_INT;
    case PLD_TY_TENSOR:
    case PLD_TY_DTENSOR: return SK_TENSOR;
    case PLD_TY_TILE: return SK_TILE;
    case PLD_TY_COMMCTX: return SK_CTX;
    case PLD_TY_NONE: return SK_NONE;
    default: return -1;
    }
}

/* bytes of a tile type with constant dims, -1 otherwise */
static int64_t tile_bytes(const pld_type_t *t)
{
    if (!t || t->kind != PLD_TY_TILE || t->rank < 1 || t->rank > 5)
        return -1;
    int64_t n = pld_type_static_numel(t);
    if (n < 0)
        return -1;
    return n * pld_dtype_storage_bytes(t->dtype);
}

/* ---------------------------------------------------------------- slot kinds */

static int note_slot(cg_t *g, const pld_expr_t *name, const pld_type_t *t)
{
    if (name->kind != PLD_EX_NAME || name->slot < 0)
        return fail(g, name->span, "the native backend compiles assignments to plain names only");
    if (!t)
        return fail(g, name->span, "'%s' has no static type: the native backend needs one", name->u.name);
    pld_dtype_t dt;
    int k = kind_of(t, &dt);
    if (k < 0)
        return fail(g, name->span, "'%s' is a value the native backend does not compile (a tuple, an array or a "
                                   "handle)", name->u.name);
    cslot_t *s = &g->slots[name->slot];
    if (s->kind != SK_NONE && k != SK_NONE && s->kind != k)
        return fail(g, name->span, "'%s' holds values of different kinds; the native backend needs one kind per name",
                    name->u.name);
    if (s->kind == SK_NONE)
        s->kind = k;
    if ((k == SK_INT || k == SK_FLT) && s->dt == PLD_DT_NONE)
        s->dt = dt;
    if (k == SK_TILE) {
        if (s->dt == PLD_DT_NONE)
            s->dt = dt;
        else if (s->dt != dt)
            return fail(g, name->span, "tile '%s' holds tiles of different dtypes: the native backend needs one dtype "
                                       "per name", name->u.name);
        if (s->mem == PLD_MEM_NONE)
            s->mem = t->mem;
        int64_t b = tile_bytes(t);
        if (b < 0)
            return fail(g, name->span, "tile '%s' has a shape that is not constant: the native backend needs static "
                                       "tile shapes", name->u.name);
        if ((size_t)b > s->bytes)
            s->bytes = (size_t)b;
    }
    return 0;
}

static const pld_expr_t *pld_op_bound(const pld_expr_t *e, int i)
{
    return e->bound ? e->bound[i] : NULL;
}

static int is_yield(const pld_expr_t *v)
{
    return v && v->kind == PLD_EX_CALL && v->op == PLD_OPID_PL_YIELD_;
}

static int scan_targets(cg_t *g, const pld_expr_t *target, const pld_expr_t *v)
{
    if (is_yield(v)) {
        int n = v->u.call.nargs;
        if (target->kind == PLD_EX_NAME)
            return n == 1 ? note_slot(g, target, v->u.call.args[0].value->type) : fail(g, v->span, "pl.yield_ of %d "
                                                                                       "values assigned to one name", n);
        if (target->kind != PLD_EX_TUPLE || target->u.seq.n != n)
            return fail(g, v->span, "pl.yield_ of %d values: the targets do not match", n);
        for (int i = 0; i < n; i++)
            if (note_slot(g, target->u.seq.items[i], v->u.call.args[i].value->type))
                return -1;
        return 0;
    }
    if (target->kind == PLD_EX_NAME)
        return note_slot(g, target, v->type);
    if (target->kind == PLD_EX_TUPLE && v->type && v->type->kind == PLD_TY_TUPLE &&
        v->type->nelems == target->u.seq.n) {
        for (int i = 0; i < target->u.seq.n; i++)
            if (note_slot(g, target->u.seq.items[i], v->type->elems[i]))
                return -1;
        return 0;
    }
    return fail(g, target->span, "the native backend compiles assignments to plain names only");
}

static int scan_block(cg_t *g, const pld_block_t *b);

static int scan_stmt(cg_t *g, const pld_stmt_t *s)
{
    switch (s->kind) {
    case PLD_ST_ASSIGN:
        if (s->u.assign.target->kind == PLD_EX_SUBSCRIPT)
            return 0; /* tensor[a:b, ...] = v: the runtime assigns (rt->assign) */
        return scan_targets(g, s->u.assign.target, s->u.assign.value);
    case PLD_ST_IF:
        return scan_block(g, &s->u.if_.then) || scan_block(g, &s->u.if_.els) ? -1 : 0;
    case PLD_ST_WHILE:
        return scan_block(g, &s->u.while_.body);
    case PLD_ST_FOR: {
        const pld_expr_t *it = s->u.for_.iter, *t = s->u.for_.target;
        if (it->kind != PLD_EX_CALL || (it->op != PLD_OPID_PL_RANGE && it->op != PLD_OPID_PL_PARALLEL &&
                                        it->op != PLD_OPID_PL_UNROLL && it->op != PLD_OPID_PL_PIPELINE))
            return fail(g, it->span, "%s loops are not compiled by the native backend yet",
                        it->kind == PLD_EX_CALL && it->op >= 0 ? pld_op_info((pld_op_id_t)it->op)->name : "these");
        const pld_expr_t *lv = t, *carried = NULL;
        if (t->kind == PLD_EX_TUPLE && t->u.seq.n == 2) {
            lv = t->u.seq.items[0];
            carried = t->u.seq.items[1];
        }
        if (lv->kind != PLD_EX_NAME || lv->slot < 0)
            return fail(g, t->span, "the native backend needs a plain loop variable");
        g->slots[lv->slot].kind = SK_INT;
        g->slots[lv->slot].dt = PLD_DT_INDEX;
        if (carried) {
            const pld_expr_t *iv = NULL;
            for (int i = 0; i < it->u.call.nargs; i++)
                if (it->u.call.args[i].kw && strcmp(it->u.call.args[i].kw, "init_values") == 0)
                    iv = it->u.call.args[i].value;
            int nc = carried->kind == PLD_EX_TUPLE ? carried->u.seq.n : 1;
            if (!iv || (iv->kind != PLD_EX_LIST && iv->kind != PLD_EX_TUPLE) || iv->u.seq.n != nc)
                return fail(g, t->span, "loop-carried names without matching init_values");
            for (int i = 0; i < nc; i++)
                if (note_slot(g, carried->kind == PLD_EX_TUPLE ? carried->u.seq.items[i] : carried,
                              iv->u.seq.items[i]->type))
                    return -1;
        }
        return scan_block(g, &s->u.for_.body);
    }
    case PLD_ST_WITH:
        return fail(g, s->span, "scopes inside a kernel are not compiled by the native backend yet");
    default:
        return 0;
    }
}

static int scan_block(cg_t *g, const pld_block_t *b)
{
    for (int i = 0; i < b->n; i++)
        if (scan_stmt(g, b->stmts[i]))
            return -1;
    return 0;
}

/* ---------------------------------------------------------------- scalars */

/* A scalar expression's value in a fresh C local; *fl: 1 for a double. */
static int gen_scalar(cg_t *g, const pld_expr_t *e, int *fl, pld_dtype_t *dt);
static int gen_exec(cg_t *g, const pld_expr_t *e, int want);

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
    emit(g, "%s t%d = %s;", fl ? "double" : "int64_t", t, b);
    return t;
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
    /* a dynamic dimension or a computed constant: the runtime evaluates it */
    const pld_type_t *t = scalar_type(e);
    *fl = t && is_float_dt(t->dtype);
    *dt = t ? t->dtype : PLD_DT_INDEX;
    return gen_exec(g, e, *fl ? SK_FLT : SK_INT);
}

static const char *slot_var(char *b, size_t n, int slot)
{
    snprintf(b, n, "s%d", slot);
    return b;
}

/* the C value of scalar local `slot` */
static int name_scalar(cg_t *g, const pld_expr_t *e, int *fl, pld_dtype_t *dt)
{
    const cslot_t *s = &g->slots[e->slot];
    if (s->kind != SK_INT && s->kind != SK_FLT && s->kind != SK_CTX)
        return fail(g, e->span, "'%s' is not a scalar here", e->u.name);
    *fl = s->kind == SK_FLT;
    *dt = s->kind == SK_CTX ? PLD_DT_INT64 : s->dt;
    int t = tmp(g);
    emit(g, "%s t%d = s%d;", *fl ? "double" : "int64_t", t, e->slot);
    return t;
}

/* one (possibly list) index/offset argument as a C array; *n entries; -1 absent */
static int gen_ilist(cg_t *g, const pld_expr_t *e, int *n)
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
        return fail(g, e->span, "more than 8 indices");
    int vals[8];
    for (int i = 0; i < k; i++) {
        int fl;
        pld_dtype_t dt;
        vals[i] = gen_scalar(g, items[i], &fl, &dt);
        if (vals[i] < 0)
            return -1;
        if (fl)
            return fail(g, items[i]->span, "an index must be an integer");
    }
    int t = tmp(g);
    pld_buf_t b;
    pld_buf_init(&b);
    for (int i = 0; i < k; i++)
        pld_buf_printf(&b, "%st%d", i ? ", " : "", vals[i]);
    emit(g, "int64_t t%d[%d] = {%s};", t, k > 0 ? k : 1, k > 0 ? pld_buf_str(&b) : "0");
    pld_buf_fini(&b);
    *n = k;
    return t;
}

static int gen_binary(cg_t *g, const pld_expr_t *e, int *fl, pld_dtype_t *dt)
{
    int fa, fb;
    pld_dtype_t da, db;
    int a = gen_scalar(g, e->u.bin.a, &fa, &da);
    if (a < 0)
        return -1;
    int b = gen_scalar(g, e->u.bin.b, &fb, &db);
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
        emit(g, "int64_t t%d = %s;", t, x);
        return t;
    }
    if (op == PLD_OP_AND || op == PLD_OP_OR || op == PLD_OP_XOR) {
        *fl = 0;
        *dt = PLD_DT_BOOL;
        int t = tmp(g);
        emit(g, "int64_t t%d = (int64_t)((t%d != 0) %s (t%d != 0));", t, a, op == PLD_OP_AND ? "&&" : op == PLD_OP_OR ? "||" : "!=", b);
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
        default: return fail(g, e->span, "operator not supported on float scalars");
        }
        *fl = 1;
        *dt = is_float_dt(rdt) ? rdt : PLD_DT_FP32;
        return def_scalar(g, 1, *dt, x);
    }
    int s = site(g, e);
    switch (op) {
    case PLD_OP_ADD: snprintf(x, sizeof x, "(int64_t)((uint64_t)t%d + (uint64_t)t%d)", a, b); break;
    case PLD_OP_SUB: snprintf(x, sizeof x, "(int64_t)((uint64_t)t%d - (uint64_t)t%d)", a, b); break;
    case PLD_OP_MUL: snprintf(x, sizeof x, "(int64_t)((uint64_t)t%d * (uint64_t)t%d)", a, b); break;
    case PLD_OP_FLOORDIV:
    case PLD_OP_MOD:
        emit(g, "if (t%d == 0) return rt->fail(bk, %d, \"integer %s by zero\");", b, s,
             op == PLD_OP_MOD ? "modulo" : "division");
        snprintf(x, sizeof x, "%s(t%d, t%d)", op == PLD_OP_MOD ? "pc_floormod" : "pc_floordiv", a, b);
        break;
    case PLD_OP_LSHIFT: snprintf(x, sizeof x, "(t%d < 0 || t%d > 63 ? 0 : (int64_t)((uint64_t)t%d << t%d))", b, b, a, b); break;
    case PLD_OP_RSHIFT: snprintf(x, sizeof x, "(t%d < 0 || t%d > 63 ? (t%d < 0 ? -1 : 0) : t%d >> t%d)", b, b, a, a, b); break;
    case PLD_OP_BITAND: snprintf(x, sizeof x, "(t%d & t%d)", a, b); break;
    case PLD_OP_BITOR: snprintf(x, sizeof x, "(t%d | t%d)", a, b); break;
    case PLD_OP_BITXOR: snprintf(x, sizeof x, "(t%d ^ t%d)", a, b); break;
    default: return fail(g, e->span, "this integer operator is not compiled by the native backend yet");
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

static int gen_elem_access(cg_t *g, const pld_expr_t *e, int write, int *fl, pld_dtype_t *dt);

static int gen_call_scalar(cg_t *g, const pld_expr_t *e, int *fl, pld_dtype_t *dt)
{
    const pld_type_t *ty = scalar_type(e);
    switch (e->op) {
    case PLD_OPID_PL_CONST: {
        int f0;
        pld_dtype_t d0;
        int a = gen_scalar(g, e->u.call.args[0].value, &f0, &d0);
        if (a < 0)
            return -1;
        *dt = e->u.call.nargs > 1 ? dtype_arg(e->u.call.args[1].value) : (ty ? ty->dtype : PLD_DT_NONE);
        if (*dt == PLD_DT_NONE)
            return fail(g, e->span, "pl.const needs a dtype the native backend can read");
        *fl = is_float_dt(*dt);
        return convert(g, a, f0, *dt);
    }
    case PLD_OPID_PL_CAST_SCALAR: {
        int f0;
        pld_dtype_t d0;
        int a = gen_scalar(g, e->u.call.args[0].value, &f0, &d0);
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
        int a = gen_scalar(g, e->u.call.args[0].value, &fa, &da);
        if (a < 0)
            return -1;
        int b = gen_scalar(g, e->u.call.args[1].value, &fb, &db);
        if (b < 0)
            return -1;
        *dt = ty && ty->dtype != PLD_DT_NONE ? ty->dtype : da;
        *fl = is_float_dt(*dt);
        int t = tmp(g);
        const char *cmp = e->op == PLD_OPID_PL_MIN ? "<=" : ">=";
        if (fa || fb)
            emit(g, "int t%d = (double)t%d %s (double)t%d;", t, a, cmp, b);
        else
            emit(g, "int t%d = t%d %s t%d;", t, a, cmp, b);
        int ca = convert(g, a, fa, *dt), cb = convert(g, b, fb, *dt);
        int r = tmp(g);
        emit(g, "%s t%d = t%d ? t%d : t%d;", *fl ? "double" : "int64_t", r, t, ca, cb);
        return r;
    }
    case PLD_OPID_TILE_GET_BLOCK_IDX:
    case PLD_OPID_TILE_GET_BLOCK_NUM: {
        *fl = 0;
        *dt = PLD_DT_INDEX;
        int t = tmp(g);
        emit(g, "int64_t t%d = %s(args);", t, e->op == PLD_OPID_TILE_GET_BLOCK_IDX ? "pc_block_idx" : "pc_block_num");
        return t;
    }
    case PLD_OPID_TENSOR_READ:
    case PLD_OPID_TILE_READ:
        return gen_elem_access(g, e, 0, fl, dt);
    default:
        break;
    }
    const char *note;
    pld_cgen_class_t c = pld_cgen_op_class(e->op, &note);
    if (c == PLD_CGEN_RUNTIME) {
        *fl = ty && is_float_dt(ty->dtype);
        *dt = ty ? ty->dtype : PLD_DT_INDEX;
        if (e->type && e->type->kind == PLD_TY_COMMCTX)
            return gen_exec(g, e, SK_CTX);
        return gen_exec(g, e, *fl ? SK_FLT : SK_INT);
    }
    return fail(g, e->span, "%s is not compiled by the native backend (%s)",
                e->op >= 0 ? pld_op_info((pld_op_id_t)e->op)->name : "this call", note);
}

static int gen_scalar(cg_t *g, const pld_expr_t *e, int *fl, pld_dtype_t *dt)
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
        int a = gen_scalar(g, e->u.un.a, &fa, &da);
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
                return fail(g, e->span, "'~' needs an integer");
            snprintf(x, sizeof x, "~t%d", a);
            return def_scalar(g, 0, da, x);
        }
        return -1;
    }
    case PLD_EX_CALL:
        if (e->op < 0)
            return fail(g, e->span, "calls of other functions inside a kernel are not compiled by the native backend yet");
        return gen_call_scalar(g, e, fl, dt);
    default:
        return fail(g, e->span, "this expression is not compiled by the native backend");
    }
}

/* ---------------------------------------------------------------- runtime exec */

/* hands every local that expression e reads to the runtime */
static void spill_expr(cg_t *g, const pld_expr_t *e, unsigned char *done)
{
    if (!e || g->failed)
        return;
    switch (e->kind) {
    case PLD_EX_NAME:
        if (e->slot >= 0 && !done[e->slot]) {
            done[e->slot] = 1;
            const cslot_t *s = &g->slots[e->slot];
            int st = site(g, e);
            switch (s->kind) {
            case SK_INT: emit(g, "if (rt->set_int(bk, %d, %d, s%d)) return 1;", e->slot, (int)s->dt, e->slot); break;
            case SK_FLT: emit(g, "if (rt->set_float(bk, %d, %d, s%d)) return 1;", e->slot, (int)s->dt, e->slot); break;
            case SK_TENSOR: emit(g, "if (rt->set_tensor(bk, %d, %d, &s%d)) return 1;", st, e->slot, e->slot); break;
            case SK_TILE: emit(g, "if (rt->set_tile(bk, %d, %d, &s%d)) return 1;", st, e->slot, e->slot); break;
            case SK_CTX: emit(g, "if (rt->set_ctx(bk, %d, s%d)) return 1;", e->slot, e->slot); break;
            default: break;
            }
        }
        return;
    case PLD_EX_UNARY: spill_expr(g, e->u.un.a, done); return;
    case PLD_EX_BINARY:
        spill_expr(g, e->u.bin.a, done);
        spill_expr(g, e->u.bin.b, done);
        return;
    case PLD_EX_CALL:
        spill_expr(g, e->u.call.fn, done);
        for (int i = 0; i < e->u.call.nargs; i++)
            spill_expr(g, e->u.call.args[i].value, done);
        return;
    case PLD_EX_ATTR: spill_expr(g, e->u.attr.obj, done); return;
    case PLD_EX_SUBSCRIPT:
        spill_expr(g, e->u.sub.obj, done);
        for (int i = 0; i < e->u.sub.n; i++)
            spill_expr(g, e->u.sub.items[i], done);
        return;
    case PLD_EX_LIST:
    case PLD_EX_TUPLE:
        for (int i = 0; i < e->u.seq.n; i++)
            spill_expr(g, e->u.seq.items[i], done);
        return;
    default:
        return;
    }
}

/* Runs expression e in the runtime; the result as kind `want` (SK_NONE:
 * ignored; SK_TILE / SK_TENSOR: in pc_out tN). Returns the temp. */
static int gen_exec(cg_t *g, const pld_expr_t *e, int want)
{
    unsigned char *done = pld_mem_calloc((size_t)(g->fn->nslots > 0 ? g->fn->nslots : 1), 1);
    if (!done)
        return fail(g, e->span, "out of memory");
    spill_expr(g, e, done);
    pld_mem_free(done);
    int s = site(g, e), o = tmp(g);
    emit(g, "pc_out t%d;", o);
    emit(g, "if (rt->exec(bk, %d, &t%d)) return 1;", s, o);
    if (want == SK_INT || want == SK_CTX) {
        int t = tmp(g);
        emit(g, "int64_t t%d = t%d.kind == PC_OUT_FLOAT ? (int64_t)t%d.f : t%d.i;", t, o, o, o);
        return t;
    }
    if (want == SK_FLT) {
        int t = tmp(g);
        emit(g, "double t%d = t%d.kind == PC_OUT_FLOAT ? t%d.f : (double)t%d.i;", t, o, o, o);
        return t;
    }
    return o;
}

/* ---------------------------------------------------------------- elements */

/* tensor.read / tile.read (write = 0), tensor.write / tile.write (1):
 * bounds-checked element access. */
static int gen_elem_access(cg_t *g, const pld_expr_t *e, int write, int *fl, pld_dtype_t *dt)
{
    const pld_expr_t *obj = pld_op_bound(e, 0);
    if (!obj || obj->kind != PLD_EX_NAME || obj->slot < 0)
        return fail(g, e->span, "%s of an expression: the native backend needs a named tensor or tile",
                    pld_op_info((pld_op_id_t)e->op)->name);
    const cslot_t *s = &g->slots[obj->slot];
    int tile = s->kind == SK_TILE;
    if (!tile && s->kind != SK_TENSOR)
        return fail(g, e->span, "'%s' is not a tensor or a tile here", obj->u.name);
    int n;
    int idx = gen_ilist(g, pld_op_bound(e, 1), &n);
    if (idx < 0)
        return -1;
    int v = -1, vf = 0;
    pld_dtype_t vd;
    if (write && (v = gen_scalar(g, pld_op_bound(e, 2), &vf, &vd)) < 0)
        return -1;
    int st = site(g, e), off = tmp(g);
    char strd[32] = "NULL";
    if (!tile)
        snprintf(strd, sizeof strd, "s%d.stride", obj->slot);
    emit(g, "int64_t t%d = 0;", off);
    emit(g, "{ char m[200]; if (pc_elem_off(\"%s\", s%d.shape, %s, s%d.rank, t%d, %d, &t%d, m, sizeof m)) return "
            "rt->fail(bk, %d, m); }", pld_op_info((pld_op_id_t)e->op)->name, obj->slot, strd, obj->slot, idx, n, off, st);
    pld_dtype_t edt = obj->type && obj->type->dtype != PLD_DT_NONE ? obj->type->dtype : PLD_DT_NONE;
    if (edt == PLD_DT_NONE)
        return fail(g, e->span, "'%s' has no static dtype", obj->u.name);
    *fl = is_float_dt(edt);
    *dt = edt;
    if (write) {
        if (edt == PLD_DT_FP32)
            emit(g, "((float *)s%d.data)[t%d] = (float)%st%d;", obj->slot, off, vf ? "" : "(double)", v);
        else if (edt == PLD_DT_INT32)
            emit(g, "((int32_t *)s%d.data)[t%d] = (int32_t)%st%d;", obj->slot, off, vf ? "(int64_t)" : "", v);
        else if (is_float_dt(edt))
            emit(g, "rt->set_f(s%d.data, %d, t%d, (double)t%d);", obj->slot, (int)edt, off, v);
        else
            emit(g, "rt->set_i(s%d.data, %d, t%d, (int64_t)t%d);", obj->slot, (int)edt, off, v);
        return 0;
    }
    int r = tmp(g);
    if (edt == PLD_DT_FP32)
        emit(g, "double t%d = ((const float *)s%d.data)[t%d];", r, obj->slot, off);
    else if (edt == PLD_DT_INT32)
        emit(g, "int64_t t%d = ((const int32_t *)s%d.data)[t%d];", r, obj->slot, off);
    else if (edt == PLD_DT_INT64 || edt == PLD_DT_INDEX)
        emit(g, "int64_t t%d = ((const int64_t *)s%d.data)[t%d];", r, obj->slot, off);
    else if (is_float_dt(edt))
        emit(g, "double t%d = rt->get_f(s%d.data, %d, t%d);", r, obj->slot, (int)edt, off);
    else
        emit(g, "int64_t t%d = rt->get_i(s%d.data, %d, t%d);", r, obj->slot, (int)edt, off);
    return r;
}

/* tensor.write / tile.write: the element store (0, or -1) */
static int elem_write(cg_t *g, const pld_expr_t *e)
{
    int fl;
    pld_dtype_t d;
    return gen_elem_access(g, e, 1, &fl, &d) < 0 ? -1 : 0;
}

/* ---------------------------------------------------------------- tiles */

static int gen_tile_into(cg_t *g, const pld_expr_t *e, const char *dst, size_t room);
static int temp_tile(cg_t *g, size_t bytes);

static int esize(pld_dtype_t dt);

/* the capacity check after a tile is bound to local `slot` (pc_rt.tile_bound) */
static void bound_tile(cg_t *g, int slot, pld_mem_t mem, const pld_expr_t *at)
{
    g->slots[slot].mems |= 1u << (mem == PLD_MEM_NONE ? PLD_MEM_VEC : mem);
    emit(g, "if (ubc && rt->tile_bound(bk, %d, %d, %d, %d, pc_numel(s%d.shape, s%d.rank) * %d)) return 1;", site(g, at),
         slot, (int)g->cur_seq, (int)mem, slot, slot, esize(g->slots[slot].dt));
}

/* a tile operand: a local tile (its C name in nm), or a nested tile
 * expression evaluated into a temporary first */
static int tile_operand(cg_t *g, const pld_expr_t *a, const pld_expr_t *e, char *nm)
{
    if (!a)
        return fail(g, e->span, "%s: a tile operand is missing", pld_op_info((pld_op_id_t)e->op)->name);
    if (a->kind == PLD_EX_NAME && a->slot >= 0 && g->slots[a->slot].kind == SK_TILE) {
        snprintf(nm, 32, "s%d", a->slot);
        return 0;
    }
    int64_t need = tile_bytes(a->type);
    if (a->kind != PLD_EX_CALL || need < 0)
        return fail(g, a->span, "%s: the native backend needs a tile operand of static shape here",
                    pld_op_info((pld_op_id_t)e->op)->name);
    int t = temp_tile(g, (size_t)need);
    snprintf(nm, 32, "t%d", t);
    return gen_tile_into(g, a, nm, (size_t)need);
}

/* sets the descriptor `d` (a C lvalue) to the static type t (shape = valid) */
static int set_desc(cg_t *g, const char *d, const pld_type_t *t, const pld_expr_t *e)
{
    if (!t || t->kind != PLD_TY_TILE || tile_bytes(t) < 0)
        return fail(g, e->span, "%s: the result tile needs a static shape for the native backend",
                    e->op >= 0 ? pld_op_info((pld_op_id_t)e->op)->name : "expression");
    emit(g, "%s.dt = %d; %s.rank = %d;", d, (int)t->dtype, d, t->rank);
    for (int i = 0; i < t->rank; i++)
        emit(g, "%s.shape[%d] = %s.valid[%d] = %lld;", d, i, d, i, (long long)t->shape[i].v);
    return 0;
}

static int esize(pld_dtype_t dt)
{
    return pld_dtype_storage_bytes(dt);
}

static const char *opname(const pld_expr_t *e)
{
    return e->op >= 0 ? pld_op_info((pld_op_id_t)e->op)->name : "call";
}

/* 1 when expression e reads local `slot` */
static int reads_slot(const pld_expr_t *e, int slot)
{
    if (!e)
        return 0;
    switch (e->kind) {
    case PLD_EX_NAME: return e->slot == slot;
    case PLD_EX_UNARY: return reads_slot(e->u.un.a, slot);
    case PLD_EX_BINARY: return reads_slot(e->u.bin.a, slot) || reads_slot(e->u.bin.b, slot);
    case PLD_EX_CALL:
        for (int i = 0; i < e->u.call.nargs; i++)
            if (reads_slot(e->u.call.args[i].value, slot))
                return 1;
        return 0;
    case PLD_EX_LIST:
    case PLD_EX_TUPLE:
        for (int i = 0; i < e->u.seq.n; i++)
            if (reads_slot(e->u.seq.items[i], slot))
                return 1;
        return 0;
    default: return 0;
    }
}

static int same_static_shape(const pld_type_t *a, const pld_type_t *b)
{
    if (!a || !b || a->rank != b->rank)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->shape[i].kind != PLD_DIM_CONST || b->shape[i].kind != PLD_DIM_CONST || a->shape[i].v != b->shape[i].v)
            return 0;
    return 1;
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

/* element-wise binary op codes (PC_*) and their C forms for FP32 / INT32 */
static int ew_binary(int op, int *scalar)
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

static int ew_unary(int op)
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
    case PC_SQRT: return "sqrtf(x)";
    case PC_ABS: return "fabsf(x)";
    case PC_NEG: return "-x";
    case PC_RECIP: return "1.0f / x";
    case PC_RELU: return "((x > 0 || x != x) ? x : 0.0f)";
    default: return NULL;
    }
}

/* copies the descriptor fields of tile `src` into `dst` (not the data pointer) */
static void copy_desc(cg_t *g, const char *dst, const char *src)
{
    emit(g, "%s.dt = %s.dt; %s.rank = %s.rank;", dst, src, dst, src);
    emit(g, "memcpy(%s.shape, %s.shape, sizeof %s.shape); memcpy(%s.valid, %s.valid, sizeof %s.valid);", dst, src, dst,
         dst, src, dst);
}

/* copies a whole tile (descriptor and physical data) */
static void copy_tile(cg_t *g, const char *dst, const char *src, pld_dtype_t dt)
{
    emit(g, "if (%s.data != %s.data) memcpy(%s.data, %s.data, (size_t)pc_numel(%s.shape, %s.rank) * %d);", dst, src, dst,
         src, src, src, esize(dt));
    copy_desc(g, dst, src);
}

/* storage for a temporary tile of `bytes` (allocated once per block at entry) */
static int temp_tile(cg_t *g, size_t bytes)
{
    int t = tmp(g);
    pld_buf_printf(&g->tmpdecl, "    pc_tile t%d; memset(&t%d, 0, sizeof t%d);\n", t, t, t);
    pld_buf_printf(&g->tmpdecl, "    if (!(t%d.data = rt->alloc(bk, -1, %zu))) return 1;\n", t, bytes ? bytes : 1);
    return t;
}

/* How an element-wise loop holds a dtype: storage type, compute type, the
 * load and store conversions (FP16 / BF16 computed in float and rounded on
 * every store, as the kernel library does). NULL st: no inline loop. */
typedef struct ew_ty {
    const char *st, *ct, *ld, *sto; /* ld / sto: printf formats of one %s */
    int fl;
} ew_ty_t;

static ew_ty_t ew_ty(pld_dtype_t dt)
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
    emit(g, "{ const %s *A = (const %s *)%s.data; %s *O = (%s *)%s.data;", t->st, t->st, a, t->st, t->st, dst);
    if (b)
        emit(g, "  const %s *B = (const %s *)%s.data;", t->st, t->st, b);
    emit(g, "  for (int64_t i = 0; i < %lld; i++) { %s x = %s%s%s; O[i] = %s; } }", (long long)n, t->ct, la,
         b ? ", y = " : "", b ? lb : "", so);
}

static int gen_ew(cg_t *g, const pld_expr_t *e, const char *dst)
{
    int scalar, code = ew_binary(e->op, &scalar), ucode = ew_unary(e->op);
    char av[32], bv[32];
    if (tile_operand(g, pld_op_bound(e, 0), e, av))
        return -1;
    const pld_type_t *ta = pld_op_bound(e, 0)->type;
    pld_dtype_t dt = ta->dtype;
    const ew_ty_t ty = ew_ty(dt);
    const int s = site(g, e);
    int64_t n = pld_type_static_numel(ta);
    if (ucode >= 0) {
        copy_desc(g, dst, av);
        const char *body = ty.st && ty.fl ? f32_unary(ucode) : NULL;
        if (body)
            ew_loop(g, &ty, n, av, NULL, dst, body);
        else
            emit(g, "if (rt->unary(bk, %d, %d, &%s, &%s)) return 1;", s, ucode, dst, av);
        return 0;
    }
    const char *bf = !ty.st ? NULL : ty.fl ? f32_binary(code) : i32_binary(code);
    if (scalar) {
        int fl;
        pld_dtype_t sd;
        int v = gen_scalar(g, pld_op_bound(e, 1), &fl, &sd);
        if (v < 0)
            return -1;
        copy_desc(g, dst, av);
        if (bf) {
            /* the scalar in the element dtype first (pld_elem_set_f / _i), as the library does */
            if (dt == PLD_DT_FP32)
                emit(g, "{ const float y = (float)%st%d;", fl ? "" : "(double)", v);
            else if (ty.fl) {
                char ly[64];
                snprintf(ly, sizeof ly, ty.ld, "yb");
                emit(g, "{ uint16_t yb; rt->set_f(&yb, %d, 0, (double)t%d); const float y = %s;", (int)dt, v, ly);
            } else
                emit(g, "{ const int32_t y = (int32_t)(uint32_t)(uint64_t)%st%d;", fl ? "(int64_t)" : "", v);
            g->ind++;
            ew_loop(g, &ty, n, av, NULL, dst, bf);
            g->ind--;
            emit(g, "}");
        } else {
            emit(g, "if (rt->binary_s(bk, %d, %d, &%s, &%s, (double)t%d, %st%d)) return 1;", s, code, dst, av, v,
                 fl ? "(int64_t)" : "", v);
        }
        return 0;
    }
    if (tile_operand(g, pld_op_bound(e, 1), e, bv))
        return -1;
    if (!same_static_shape(ta, pld_op_bound(e, 1)->type) || pld_op_bound(e, 1)->type->dtype != dt)
        return fail(g, e->span, "%s: operands of different shapes or dtypes (broadcasting) are not compiled by the "
                                "native backend yet", opname(e));
    copy_desc(g, dst, av);
    if (bf)
        ew_loop(g, &ty, n, av, bv, dst, bf);
    else
        emit(g, "if (rt->binary(bk, %d, %d, &%s, &%s, &%s)) return 1;", s, code, dst, av, bv);
    return 0;
}

static int reduce_code(int op, int *row)
{
    *row = 1;
    switch (op) {
    case PLD_OPID_TILE_ROW_SUM: return PC_RSUM;
    case PLD_OPID_TILE_ROW_MAX: return PC_RMAX;
    case PLD_OPID_TILE_ROW_MIN: return PC_RMIN;
    case PLD_OPID_TILE_ROW_PROD: return PC_RPROD;
    }
    *row = 0;
    switch (op) {
    case PLD_OPID_TILE_COL_SUM: return PC_RSUM;
    case PLD_OPID_TILE_COL_MAX: return PC_RMAX;
    case PLD_OPID_TILE_COL_MIN: return PC_RMIN;
    case PLD_OPID_TILE_COL_PROD: return PC_RPROD;
    }
    return -1;
}

/* a tile op the runtime runs: its result copied into dst (need bytes) */
static int gen_tile_exec(cg_t *g, const pld_expr_t *e, const char *dst, int64_t need)
{
    const int s = site(g, e);
    if (need < 0)
        return fail(g, e->span, "%s: the result tile needs a static shape for the native backend", opname(e));
    int o = gen_exec(g, e, SK_TILE);
    if (o < 0)
        return -1;
    emit(g, "if (t%d.kind != PC_OUT_TILE || (size_t)pc_numel(t%d.tile.shape, t%d.tile.rank) * %d > %lld) return "
            "rt->fail(bk, %d, \"%s: the runtime returned no tile of the static shape\");", o, o, o,
         esize(e->type->dtype), (long long)need, s, opname(e));
    char src[32];
    snprintf(src, sizeof src, "t%d.tile", o);
    copy_tile(g, dst, src, e->type->dtype);
    return 0;
}

/* the named window tensor operand i of e (its slot), -1 when not one */
static int window_operand(cg_t *g, const pld_expr_t *e, int i)
{
    const pld_expr_t *a = pld_op_bound(e, i);
    return a && a->kind == PLD_EX_NAME && a->slot >= 0 && g->slots[a->slot].kind == SK_TENSOR ? a->slot : -1;
}

/* The end of a direct access's bounds loop (dimension k, extent x), then
 * `if (direct) { pc_tensor pv = <window tensor of the peer>; ...`: the
 * direct form; direct_else opens the runtime form, direct_end closes both. */
static void direct_begin(cg_t *g, int off, int ts, int dir, int dl)
{
    emit(g, "if (t%d[k] < 0 || t%d[k] > s%d.shape[k] - x) t%d = 0;", off, off, ts, dir);
    g->ind--;
    emit(g, "}");
    emit(g, "if (t%d) {", dir);
    g->ind++;
    emit(g, "pc_tensor pv = s%d;", ts);
    emit(g, "pv.data += t%d;", dl);
}

static void direct_else(cg_t *g)
{
    g->ind--;
    emit(g, "} else {");
    g->ind++;
}

static void direct_end(cg_t *g)
{
    g->ind--;
    emit(g, "}");
}

/* pld.tile.remote_load: where the peer's window is mapped here (the
 * CommContext's windowsIn[peer] != 0), the kernel reads it directly, as the
 * NPU does; otherwise, and for anything the runtime must report (a peer
 * outside the domain, a region out of bounds), the runtime runs it */
static int gen_remote_load(cg_t *g, const pld_expr_t *e, const char *dst, int64_t need)
{
    const pld_expr_t *shp = pld_op_bound(e, 3), *val = pld_op_bound(e, 4);
    const int ts = window_operand(g, e, 0), r = e->type ? e->type->rank : -1;
    const int nshp = shp && (shp->kind == PLD_EX_LIST || shp->kind == PLD_EX_TUPLE) ? shp->u.seq.n : -1;
    const int nval = val && (val->kind == PLD_EX_LIST || val->kind == PLD_EX_TUPLE) ? val->u.seq.n : -1;
    if (ts < 0 || need < 0 || nshp != r || (val && nval != r) || r < 1 || r > PC_MAX_RANK)
        return gen_tile_exec(g, e, dst, need);
    const int s = site(g, e);
    int fl, no, nv;
    pld_dtype_t dt;
    int peer = gen_scalar(g, pld_op_bound(e, 1), &fl, &dt);
    if (peer < 0)
        return -1;
    if (fl)
        return gen_tile_exec(g, e, dst, need);
    int off = gen_ilist(g, pld_op_bound(e, 2), &no);
    int vl = val ? gen_ilist(g, val, &nv) : -1;
    if (g->failed)
        return -1;
    int dl = tmp(g), dir = tmp(g), v = tmp(g);
    emit(g, "int64_t t%d = 0;", dl);
    emit(g, "int t%d = pc_peer_delta(rt->comm_ctx(bk, &s%d), t%d, &t%d) && %d == s%d.rank && %d <= s%d.rank;", dir, ts,
         peer, dl, no, ts, r, ts);
    emit(g, "int64_t t%d[%d];", v, r);
    emit(g, "for (int k = 0; t%d && k < s%d.rank; k++) {", dir, ts);
    g->ind++;
    emit(g, "const int j = k - (s%d.rank - %d);", ts, r);
    emit(g, "int64_t x = 1;");
    emit(g, "if (j >= 0) {");
    g->ind++;
    for (int j = 0; j < r; j++) {
        if (vl >= 0)
            emit(g, "if (j == %d) x = t%d[%d] < %lld ? t%d[%d] : %lld;", j, vl, j, (long long)e->type->shape[j].v, vl, j,
                 (long long)e->type->shape[j].v);
        else
            emit(g, "if (j == %d) x = %lld;", j, (long long)e->type->shape[j].v);
    }
    emit(g, "int64_t room = s%d.valid[k] - t%d[k];", ts, off);
    emit(g, "if (x > room) x = room;");
    emit(g, "if (x < 0) x = 0;");
    emit(g, "t%d[j] = x;", v);
    g->ind--;
    emit(g, "}");
    direct_begin(g, off, ts, dir, dl);
    if (set_desc(g, dst, e->type, e))
        return -1;
    emit(g, "if (rt->load(bk, %d, &%s, &pv, t%d, %d, t%d, 0)) return 1;", s, dst, off, no, v);
    direct_else(g);
    if (gen_tile_exec(g, e, dst, need))
        return -1;
    direct_end(g);
    return 0;
}

/* pld.tile.remote_store of a local tile, not atomic: directly into the
 * peer's mapped window where there is one (see gen_remote_load) */
static int gen_remote_store(cg_t *g, const pld_expr_t *e)
{
    const pld_expr_t *src = pld_op_bound(e, 0), *at = pld_op_bound(e, 4);
    const int ts = window_operand(g, e, 1);
    const int tile = src && src->kind == PLD_EX_NAME && src->slot >= 0 && g->slots[src->slot].kind == SK_TILE;
    const pld_expr_t *tgt = pld_op_bound(e, 1);
    if (ts < 0 || !tile || (at && !(at->kind == PLD_EX_INT && at->u.ival == 0)) || !src->type || !tgt->type ||
        src->type->dtype != tgt->type->dtype)
        return gen_exec(g, e, SK_NONE) < 0 ? -1 : 0;
    const int s = site(g, e);
    int fl, no;
    pld_dtype_t dt;
    int peer = gen_scalar(g, pld_op_bound(e, 2), &fl, &dt);
    if (peer < 0)
        return -1;
    if (fl)
        return gen_exec(g, e, SK_NONE) < 0 ? -1 : 0;
    int off = gen_ilist(g, pld_op_bound(e, 3), &no);
    if (off < 0)
        return -1;
    int dl = tmp(g), dir = tmp(g);
    emit(g, "int64_t t%d = 0;", dl);
    emit(g, "int t%d = pc_peer_delta(rt->comm_ctx(bk, &s%d), t%d, &t%d) && %d == s%d.rank && s%d.rank <= s%d.rank;", dir,
         ts, peer, dl, no, ts, src->slot, ts);
    emit(g, "for (int k = 0; t%d && k < s%d.rank; k++) {", dir, ts);
    g->ind++;
    emit(g, "const int j = k - (s%d.rank - s%d.rank);", ts, src->slot);
    emit(g, "const int64_t x = j >= 0 ? s%d.valid[j] : 1;", src->slot);
    direct_begin(g, off, ts, dir, dl);
    emit(g, "if (rt->store(bk, %d, &s%d, t%d, %d, &pv, NULL, 0)) return 1;", s, src->slot, off, no);
    direct_else(g);
    if (gen_exec(g, e, SK_NONE) < 0)
        return -1;
    direct_end(g);
    return 0;
}

/* writes the tile value of expression e into descriptor `dst` (its storage:
 * `room` bytes). Operands may be dst itself only for element-wise ops. */
static int gen_tile_into(cg_t *g, const pld_expr_t *e, const char *dst, size_t room)
{
    if (g->failed)
        return -1;
    if (e->kind == PLD_EX_NAME) {
        if (e->slot < 0 || g->slots[e->slot].kind != SK_TILE)
            return fail(g, e->span, "'%s' is not a tile here", e->u.name);
        char src[32];
        snprintf(src, sizeof src, "s%d", e->slot);
        copy_tile(g, dst, src, e->type ? e->type->dtype : PLD_DT_FP32);
        return 0;
    }
    if (e->kind != PLD_EX_CALL || e->op < 0)
        return fail(g, e->span, "this tile expression is not compiled by the native backend");
    int64_t need = tile_bytes(e->type);
    if (need >= 0 && (size_t)need > room)
        return fail(g, e->span, "internal: tile storage too small");
    const int s = site(g, e);
    int scalar, row;
    if (ew_binary(e->op, &scalar) >= 0 || ew_unary(e->op) >= 0)
        return gen_ew(g, e, dst);
    int rc = reduce_code(e->op, &row);
    if (rc >= 0) {
        char av[32];
        if (tile_operand(g, pld_op_bound(e, 0), e, av) || set_desc(g, dst, e->type, e))
            return -1;
        if (e->op == PLD_OPID_TILE_COL_SUM && pld_op_bound(e, 1))
            return fail(g, e->span, "pl.tile.col_sum with a tmp_tile (the tree order) is not compiled by the native "
                                    "backend yet");
        emit(g, "if (rt->reduce(bk, %d, %d, %d, &%s, &%s)) return 1;", s, rc, row, dst, av);
        return 0;
    }
    switch (e->op) {
    case PLD_OPID_TILE_LOAD: {
        const pld_expr_t *src = pld_op_bound(e, 0);
        if (!src || src->kind != PLD_EX_NAME || src->slot < 0 || g->slots[src->slot].kind != SK_TENSOR)
            return fail(g, e->span, "pl.tile.load: the native backend needs a named tensor operand");
        const pld_type_t *st = src->type;
        if (st && (st->layout == PLD_LAYOUT_MX_A || st->layout == PLD_LAYOUT_MX_B))
            return fail(g, e->span, "pl.tile.load of an MX-layout tensor is not compiled by the native backend yet");
        int clamp = lit_bool(pld_op_bound(e, 5), 0);
        if (clamp < 0)
            return fail(g, e->span, "pl.tile.load: clamp must be a literal for the native backend");
        int no, nv;
        int off = gen_ilist(g, pld_op_bound(e, 1), &no);
        if (off < 0)
            return -1;
        int val = gen_ilist(g, pld_op_bound(e, 3), &nv);
        if (g->failed || set_desc(g, dst, e->type, e))
            return -1;
        if (val >= 0) {
            emit(g, "if (%d != %s.rank) return rt->fail(bk, %d, \"pl.tile.load: valid_shape has %d entries, shape has "
                    "%d\");", nv, dst, s, nv, e->type->rank);
        }
        char vb[32];
        snprintf(vb, sizeof vb, "t%d", val);
        emit(g, "if (rt->load(bk, %d, &%s, &s%d, t%d, %d, %s, %d)) return 1;", s, dst, src->slot, off, no,
             val >= 0 ? vb : "NULL", clamp);
        return 0;
    }
    case PLD_OPID_TILE_CREATE:
    case PLD_OPID_TILE_FULL: {
        if (set_desc(g, dst, e->type, e))
            return -1;
        emit(g, "memset(%s.data, 0, %lld);", dst, (long long)need);
        if (e->op == PLD_OPID_TILE_FULL && pld_op_bound(e, 2)) {
            int fl;
            pld_dtype_t d;
            int v = gen_scalar(g, pld_op_bound(e, 2), &fl, &d);
            if (v < 0)
                return -1;
            emit(g, "if (rt->fill(bk, %d, &%s, (double)t%d, %st%d)) return 1;", s, dst, v, fl ? "(int64_t)" : "", v);
        }
        return 0;
    }
    case PLD_OPID_TILE_MOVE:
        return gen_tile_into(g, pld_op_bound(e, 0), dst, room);
    case PLD_OPID_TILE_MATMUL:
    case PLD_OPID_TILE_MATMUL_ACC: {
        const int acc = e->op == PLD_OPID_TILE_MATMUL_ACC;
        if (acc && pld_op_bound(e, 3))
            return fail(g, e->span, "pl.tile.matmul_acc with init_cond is not compiled by the native backend yet");
        char av[32], bv[32];
        if (tile_operand(g, pld_op_bound(e, acc), e, av) || tile_operand(g, pld_op_bound(e, acc + 1), e, bv))
            return -1;
        if (acc) {
            if (gen_tile_into(g, pld_op_bound(e, 0), dst, room))
                return -1;
        } else if (set_desc(g, dst, e->type, e)) {
            return -1;
        }
        const pld_type_t *ta = pld_op_bound(e, acc)->type, *tb = pld_op_bound(e, acc + 1)->type;
        if (ta && tb && e->type && ta->dtype == PLD_DT_FP32 && tb->dtype == PLD_DT_FP32 &&
            e->type->dtype == PLD_DT_FP32 && ta->rank == 2 && tb->rank == 2 && e->type->rank == 2 &&
            tile_bytes(ta) >= 0 && tile_bytes(tb) >= 0 && ta->shape[1].v == tb->shape[0].v &&
            e->type->shape[0].v == ta->shape[0].v && e->type->shape[1].v == tb->shape[1].v) {
            /* FP32: the library's order (per element, k ascending, in float), vectorised over j */
            const long long M = ta->shape[0].v, K = ta->shape[1].v, N = tb->shape[1].v;
            if (!acc)
                emit(g, "%s.valid[0] = %s.valid[0]; %s.valid[1] = %s.valid[1];", dst, av, dst, bv);
            emit(g, "{ const float *A = (const float *)%s.data, *B = (const float *)%s.data; float *O = (float *)%s.data;",
                 av, bv, dst);
            emit(g, "  for (int64_t i = 0; i < %lld; i++) {", M);
            emit(g, "    float *o = O + i * %lld;", N);
            if (!acc)
                emit(g, "    for (int64_t j = 0; j < %lld; j++) o[j] = 0.0f;", N);
            emit(g, "    for (int64_t k = 0; k < %lld; k++) {", K);
            emit(g, "      const float x = A[i * %lld + k]; const float *b = B + k * %lld;", K, N);
            emit(g, "      for (int64_t j = 0; j < %lld; j++) o[j] += x * b[j];", N);
            emit(g, "    } } }");
            return 0;
        }
        emit(g, "if (rt->matmul(bk, %d, %d, &%s, &%s, &%s)) return 1;", s, acc, dst, av, bv);
        return 0;
    }
    case PLD_OPID_TILE_CAST: {
        char av[32];
        if (tile_operand(g, pld_op_bound(e, 0), e, av) || set_desc(g, dst, e->type, e))
            return -1;
        emit(g, "if (rt->cast(bk, %d, 0, &%s, &%s)) return 1;", s, dst, av);
        return 0;
    }
    case PLD_OPID_TILE_WRITE: /* writes the element into the named tile, then the result is that tile */
        return elem_write(g, e) ? -1 : gen_tile_into(g, pld_op_bound(e, 0), dst, room);
    case PLD_OPID_PLD_REMOTE_LOAD:
        return gen_remote_load(g, e, dst, need);
    default:
        break;
    }
    const char *note;
    if (pld_cgen_op_class(e->op, &note) == PLD_CGEN_RUNTIME)
        return gen_tile_exec(g, e, dst, need);
    return fail(g, e->span, "%s is not compiled by the native backend (%s)", opname(e), note);
}

/* ---------------------------------------------------------------- tensors */

/* the tensor value of e into descriptor `dst` */
static int gen_tensor_into(cg_t *g, const pld_expr_t *e, const char *dst)
{
    if (e->kind == PLD_EX_NAME) {
        if (e->slot < 0 || g->slots[e->slot].kind != SK_TENSOR)
            return fail(g, e->span, "'%s' is not a tensor here", e->u.name);
        emit(g, "%s = s%d;", dst, e->slot);
        return 0;
    }
    if (e->kind == PLD_EX_SUBSCRIPT) { /* tensor[a:b, ...]: a view the runtime makes */
        int o = gen_exec(g, e, SK_TENSOR);
        if (o < 0)
            return -1;
        emit(g, "if (t%d.kind != PC_OUT_TENSOR) return rt->fail(bk, %d, \"a subscript gave no tensor\");", o, site(g, e));
        emit(g, "%s = t%d.t;", dst, o);
        return 0;
    }
    if (e->kind != PLD_EX_CALL || e->op < 0)
        return fail(g, e->span, "this tensor expression is not compiled by the native backend");
    const int s = site(g, e);
    switch (e->op) {
    case PLD_OPID_TILE_STORE: {
        char av[32];
        if (tile_operand(g, pld_op_bound(e, 0), e, av))
            return -1;
        const pld_expr_t *out = pld_op_bound(e, 2), *at = pld_op_bound(e, 4);
        if (!out || out->kind != PLD_EX_NAME || out->slot < 0 || g->slots[out->slot].kind != SK_TENSOR)
            return fail(g, e->span, "pl.tile.store: the native backend needs a named output tensor");
        if (at && !(at->kind == PLD_EX_INT && at->u.ival == 0))
            return fail(g, e->span, "pl.tile.store with atomic= is not compiled by the native backend yet");
        int no, nl;
        int off = gen_ilist(g, pld_op_bound(e, 1), &no);
        if (off < 0)
            return -1;
        int lim = gen_ilist(g, pld_op_bound(e, 3), &nl);
        if (g->failed)
            return -1;
        char lb[32];
        snprintf(lb, sizeof lb, "t%d", lim);
        emit(g, "if (rt->store(bk, %d, &%s, t%d, %d, &s%d, %s, 0)) return 1;", s, av, off, no, out->slot,
             lim >= 0 ? lb : "NULL");
        emit(g, "%s = s%d;", dst, out->slot);
        return 0;
    }
    case PLD_OPID_TENSOR_WRITE:
        return elem_write(g, e) ? -1 : gen_tensor_into(g, pld_op_bound(e, 0), dst);
    default:
        break;
    }
    const char *note;
    if (pld_cgen_op_class(e->op, &note) == PLD_CGEN_RUNTIME) {
        int o = gen_exec(g, e, SK_TENSOR);
        if (o < 0)
            return -1;
        emit(g, "if (t%d.kind != PC_OUT_TENSOR) return rt->fail(bk, %d, \"%s: the runtime returned no tensor\");", o, s,
             opname(e));
        emit(g, "%s = t%d.t;", dst, o);
        return 0;
    }
    return fail(g, e->span, "%s is not compiled by the native backend (%s)", opname(e), note);
}

/* ---------------------------------------------------------------- statements */

static void move_slot(cg_t *g, int to, int from);

/* assigns the value of e to local `slot` */
static int assign_slot(cg_t *g, int slot, const pld_expr_t *e)
{
    cslot_t *sl = &g->slots[slot];
    char v[32];
    slot_var(v, sizeof v, slot);
    switch (sl->kind) {
    case SK_INT:
    case SK_FLT: {
        int fl;
        pld_dtype_t dt;
        int t = gen_scalar(g, e, &fl, &dt);
        if (t < 0)
            return -1;
        if (fl != (sl->kind == SK_FLT))
            return fail(g, e->span, "'%s' holds integers and floats: the native backend needs one kind per name",
                        g->fn->slot_names[slot]);
        emit(g, "%s = t%d;", v, t);
        return 0;
    }
    case SK_CTX: {
        if (e->kind == PLD_EX_NAME && e->slot >= 0) {
            emit(g, "%s = s%d;", v, e->slot);
            return 0;
        }
        int t = gen_exec(g, e, SK_CTX);
        if (t < 0)
            return -1;
        emit(g, "%s = t%d;", v, t);
        return 0;
    }
    case SK_TENSOR:
        return gen_tensor_into(g, e, v);
    case SK_TILE: {
        if (e->kind == PLD_EX_NAME && e->slot >= 0 && g->slots[e->slot].kind == SK_TILE) {
            move_slot(g, slot, e->slot);
            return 0;
        }
        if (e->kind == PLD_EX_CALL && ew_binary(e->op, &(int){0}) < 0 && ew_unary(e->op) < 0 && reads_slot(e, slot)) {
            int64_t need = tile_bytes(e->type);
            if (need < 0)
                return fail(g, e->span, "%s: the result tile needs a static shape", opname(e));
            int t = temp_tile(g, (size_t)need);
            char tv[32];
            snprintf(tv, sizeof tv, "t%d", t);
            if (gen_tile_into(g, e, tv, (size_t)need))
                return -1;
            copy_tile(g, v, tv, e->type->dtype);
            bound_tile(g, slot, e->type->mem, g->target ? g->target : e);
            return 0;
        }
        if (gen_tile_into(g, e, v, sl->bytes))
            return -1;
        bound_tile(g, slot, e->kind == PLD_EX_NAME ? g->slots[e->slot].mem : e->type ? e->type->mem : PLD_MEM_VEC,
                   g->target ? g->target : e);
        return 0;
    }
    default:
        /* a value nothing reads (None): run it for its effects */
        if (e->kind == PLD_EX_CALL && pld_cgen_op_class(e->op, NULL) == PLD_CGEN_RUNTIME)
            return gen_exec(g, e, SK_NONE) < 0 ? -1 : 0;
        return fail(g, e->span, "this assignment is not compiled by the native backend");
    }
}

/* copies local `from` into local `to` (same kind) */
static void move_slot(cg_t *g, int to, int from)
{
    if (to == from)
        return;
    if (g->slots[to].kind == SK_TILE) {
        char a[32], b[32];
        snprintf(a, sizeof a, "s%d", to);
        snprintf(b, sizeof b, "s%d", from);
        /* a source no later statement reads: hand its storage over instead of copying */
        const int32_t *lu = g->fn->last_use;
        if (lu && lu[from] <= g->cur_seq && g->slots[to].bytes == g->slots[from].bytes) {
            emit(g, "{ void *p = s%d.data; s%d.data = s%d.data; s%d.data = p; }", to, to, from, from);
            copy_desc(g, a, b);
        } else {
            copy_tile(g, a, b, g->slots[to].dt);
        }
        g->slots[to].mems |= 1u << (g->slots[from].mem == PLD_MEM_NONE ? PLD_MEM_VEC : g->slots[from].mem);
        emit(g, "if (ubc && rt->tile_bound(bk, %d, %d, %d, %d, pc_numel(s%d.shape, s%d.rank) * %d)) return 1;",
             g->target ? site(g, g->target) : -1, to, (int)g->cur_seq, (int)g->slots[from].mem, to, to,
             esize(g->slots[to].dt));
    } else {
        emit(g, "s%d = s%d;", to, from);
    }
}

/* the values of a yield: each into a temp local of the target's kind, then
 * into the targets (names: tN items) and, for the loop's carried names,
 * into those */
static int gen_yield(cg_t *g, const pld_expr_t *call, const pld_expr_t *targets, const pld_expr_t *carried)
{
    int n = call->u.call.nargs;
    if (n > 16)
        return fail(g, call->span, "pl.yield_ of more than 16 values");
    const pld_expr_t *tg[16], *cr[16];
    for (int i = 0; i < n; i++) {
        tg[i] = targets ? (targets->kind == PLD_EX_TUPLE ? targets->u.seq.items[i] : targets) : NULL;
        cr[i] = carried ? (carried->kind == PLD_EX_TUPLE ? carried->u.seq.items[i] : carried) : NULL;
    }
    int nc = carried ? (carried->kind == PLD_EX_TUPLE ? carried->u.seq.n : 1) : 0;
    if (carried && nc != n)
        return fail(g, call->span, "%d loop-carried names but %d yielded values", nc, n);
    /* evaluate into the first destination, then copy to the second */
    for (int i = 0; i < n; i++) {
        const pld_expr_t *v = call->u.call.args[i].value;
        const pld_expr_t *d0 = tg[i] ? tg[i] : cr[i];
        if (!d0)
            continue;
        /* a value that is a name another destination overwrites first: the
         * interpreter evaluates every value before assigning */
        for (int j = 0; j < i; j++) {
            const pld_expr_t *dj = tg[j] ? tg[j] : cr[j];
            if ((dj && reads_slot(v, dj->slot)) || (tg[j] && cr[j] && reads_slot(v, cr[j]->slot)))
                return fail(g, v->span, "a yield that reads a name an earlier yielded value replaces is not compiled "
                                        "by the native backend yet");
        }
        if (v->kind == PLD_EX_NAME && v->slot >= 0)
            g->target = d0, move_slot(g, d0->slot, v->slot);
        else if ((g->target = d0, assign_slot(g, d0->slot, v)))
            return -1;
        if (tg[i] && cr[i])
            g->target = cr[i], move_slot(g, cr[i]->slot, tg[i]->slot);
    }
    return 0;
}

static int gen_block(cg_t *g, const pld_block_t *b, const pld_expr_t *carried);

static int block_reads(const pld_block_t *b, int slot, const pld_stmt_t *skip);
static const pld_type_t *def_type_stmt(const pld_stmt_t *s, int slot);

/* 1 when a statement of b other than skip assigns local `slot` */
static int def_type_in_skip(const pld_block_t *b, int slot, const pld_stmt_t *skip)
{
    for (int i = 0; i < b->n; i++)
        if (b->stmts[i] != skip && def_type_stmt(b->stmts[i], slot))
            return 1;
    return 0;
}

/* 1 when statement st reads local `slot` (skip: a statement not looked at) */
static int stmt_reads(const pld_stmt_t *st, int slot, const pld_stmt_t *skip)
{
    if (st == skip)
        return 0;
    switch (st->kind) {
    case PLD_ST_EXPR: return reads_slot(st->u.expr, slot);
    case PLD_ST_ASSIGN:
        return reads_slot(st->u.assign.value, slot) ||
               (st->u.assign.target->kind == PLD_EX_SUBSCRIPT && reads_slot(st->u.assign.target->u.sub.obj, slot));
    case PLD_ST_RETURN:
        for (int i = 0; i < st->u.ret.n; i++)
            if (reads_slot(st->u.ret.vals[i], slot))
                return 1;
        return 0;
    case PLD_ST_IF:
        return reads_slot(st->u.if_.cond, slot) || block_reads(&st->u.if_.then, slot, skip) ||
               block_reads(&st->u.if_.els, slot, skip);
    case PLD_ST_WHILE: return reads_slot(st->u.while_.cond, slot) || block_reads(&st->u.while_.body, slot, skip);
    case PLD_ST_FOR: return reads_slot(st->u.for_.iter, slot) || block_reads(&st->u.for_.body, slot, skip);
    case PLD_ST_WITH: return 1; /* not compiled inside kernels */
    default: return 0;
    }
}

static int block_reads(const pld_block_t *b, int slot, const pld_stmt_t *skip)
{
    for (int i = 0; i < b->n; i++)
        if (stmt_reads(b->stmts[i], slot, skip))
            return 1;
    return 0;
}

static int gen_for(cg_t *g, const pld_stmt_t *s)
{
    const pld_expr_t *it = s->u.for_.iter, *t = s->u.for_.target;
    const pld_expr_t *lv = t, *carried = NULL, *iv = NULL;
    if (t->kind == PLD_EX_TUPLE && t->u.seq.n == 2) {
        lv = t->u.seq.items[0];
        carried = t->u.seq.items[1];
    }
    int b[3], npos = 0;
    for (int i = 0; i < it->u.call.nargs; i++) {
        if (it->u.call.args[i].kw) {
            if (strcmp(it->u.call.args[i].kw, "init_values") == 0)
                iv = it->u.call.args[i].value;
            continue;
        }
        int fl;
        pld_dtype_t dt;
        if (npos < 3 && (b[npos] = gen_scalar(g, it->u.call.args[i].value, &fl, &dt)) < 0)
            return -1;
        npos++;
    }
    int start = -1, stop = npos >= 1 ? b[0] : -1, step = -1;
    if (npos >= 2)
        start = b[0], stop = b[1];
    if (npos == 3)
        step = b[2];
    if (stop < 0)
        return fail(g, it->span, "a loop without bounds");
    const int sid = site(g, it);
    int vs = tmp(g), vst = tmp(g);
    if (start >= 0)
        emit(g, "int64_t t%d = t%d;", vs, start);
    else
        emit(g, "int64_t t%d = 0;", vs);
    if (step >= 0)
        emit(g, "int64_t t%d = t%d;", vst, step);
    else
        emit(g, "int64_t t%d = 1;", vst);
    emit(g, "if (t%d == 0) return rt->fail(bk, %d, \"loop step is zero\");", vst, sid);
    /* init values, and the final yield's targets for a loop of zero trips */
    const pld_stmt_t *last = s->u.for_.body.n ? s->u.for_.body.stmts[s->u.for_.body.n - 1] : NULL;
    const pld_expr_t *ytargets = last && last->kind == PLD_ST_ASSIGN && is_yield(last->u.assign.value)
                                     ? last->u.assign.target : NULL;
    int defer = 0;
    if (carried) {
        int nc = carried->kind == PLD_EX_TUPLE ? carried->u.seq.n : 1;
        for (int i = 0; i < nc; i++) {
            const pld_expr_t *c = carried->kind == PLD_EX_TUPLE ? carried->u.seq.items[i] : carried;
            g->target = c;
            if (assign_slot(g, c->slot, iv->u.seq.items[i]))
                return -1;
        }
        if (ytargets) {
            int ny = ytargets->kind == PLD_EX_TUPLE ? ytargets->u.seq.n : 1;
            if (ny != nc)
                return fail(g, last->span, "the loop yields %d values for %d carried names", ny, nc);
            /* The final yield's targets are the loop's results: they equal the
             * carried values whenever the loop leaves (the last yield set both;
             * a loop of zero trips gives both the initial values). When nothing
             * else in the body reads or sets them, they are set once, after the
             * loop, instead of on every trip. */
            defer = 1;
            for (int i = 0; i < nc && defer; i++) {
                const pld_expr_t *y = ytargets->kind == PLD_EX_TUPLE ? ytargets->u.seq.items[i] : ytargets;
                if (y->kind != PLD_EX_NAME || y->slot < 0)
                    return fail(g, y->span, "a yield target must be a name");
                defer = !block_reads(&s->u.for_.body, y->slot, last) && !def_type_in_skip(&s->u.for_.body, y->slot, last);
            }
            for (int i = 0; i < nc && !defer; i++) {
                const pld_expr_t *c = carried->kind == PLD_EX_TUPLE ? carried->u.seq.items[i] : carried;
                const pld_expr_t *y = ytargets->kind == PLD_EX_TUPLE ? ytargets->u.seq.items[i] : ytargets;
                g->target = y;
                move_slot(g, y->slot, c->slot);
            }
        }
    }
    emit(g, "for (int64_t i%d = t%d; t%d > 0 ? i%d < t%d : i%d > t%d; ) {", vs, vs, vst, vs, stop, vs, stop);
    g->ind++;
    emit(g, "s%d = i%d;", lv->slot, vs);
    if (g->depth >= 32)
        return fail(g, s->span, "loops nested too deeply");
    g->carried[g->depth++] = carried;
    const int saved_defer = g->defer_targets;
    g->defer_targets = defer;
    int rc = gen_block(g, &s->u.for_.body, carried);
    g->defer_targets = saved_defer;
    g->depth--;
    if (rc)
        return -1;
    emit(g, "if (rt->tick(bk, %d)) return 1;", sid);
    emit(g, "if (__builtin_add_overflow(i%d, t%d, &i%d)) break;", vs, vst, vs);
    g->ind--;
    emit(g, "}");
    for (int i = 0; defer && i < (carried->kind == PLD_EX_TUPLE ? carried->u.seq.n : 1); i++) {
        const pld_expr_t *c = carried->kind == PLD_EX_TUPLE ? carried->u.seq.items[i] : carried;
        const pld_expr_t *y = ytargets->kind == PLD_EX_TUPLE ? ytargets->u.seq.items[i] : ytargets;
        g->cur_seq = s->seq_end; /* after the loop */
        g->target = y;
        move_slot(g, y->slot, c->slot);
    }
    return 0;
}

static int gen_stmt(cg_t *g, const pld_stmt_t *s, int final, const pld_expr_t *carried)
{
    if (g->failed)
        return -1;
    g->cur_seq = s->seq;
    switch (s->kind) {
    case PLD_ST_PASS: return 0;
    case PLD_ST_BREAK: emit(g, "break;"); return 0;
    case PLD_ST_CONTINUE: emit(g, "continue;"); return 0;
    case PLD_ST_RETURN: {
        unsigned char *done = pld_mem_calloc((size_t)(g->fn->nslots > 0 ? g->fn->nslots : 1), 1);
        if (!done)
            return fail(g, s->span, "out of memory");
        for (int i = 0; i < s->u.ret.n; i++)
            spill_expr(g, s->u.ret.vals[i], done);
        pld_mem_free(done);
        for (int i = 0; i < s->u.ret.n; i++)
            emit(g, "if (rt->ret(bk, %d, %d, %d)) return 1;", site(g, s->u.ret.vals[i]), i, s->u.ret.n);
        emit(g, "return 0;");
        return 0;
    }
    case PLD_ST_ASSIGN: {
        const pld_expr_t *t = s->u.assign.target, *v = s->u.assign.value;
        if (is_yield(v))
            return gen_yield(g, v, final && carried && g->defer_targets ? NULL : t, final ? carried : NULL);
        if (t->kind == PLD_EX_SUBSCRIPT) {
            if (!t->u.sub.obj->type || !pld_type_is_tensorlike(t->u.sub.obj->type))
                return fail(g, t->span, "subscript assignment to a non-tensor is not compiled by the native backend");
            unsigned char *done = pld_mem_calloc((size_t)(g->fn->nslots > 0 ? g->fn->nslots : 1), 1);
            if (!done)
                return fail(g, s->span, "out of memory");
            spill_expr(g, t, done);
            spill_expr(g, v, done);
            pld_mem_free(done);
            emit(g, "if (rt->assign(bk, %d, %d)) return 1;", site(g, t), site(g, v));
            return 0;
        }
        if (t->kind != PLD_EX_NAME)
            return fail(g, t->span, "the native backend compiles assignments to plain names only");
        g->target = t;
        return assign_slot(g, t->slot, v);
    }
    case PLD_ST_EXPR: {
        const pld_expr_t *e = s->u.expr;
        if (e->kind != PLD_EX_CALL)
            return 0;
        if (is_yield(e))
            return g->depth > 0 && g->carried[g->depth - 1] ? gen_yield(g, e, NULL, g->carried[g->depth - 1]) : 0;
        const char *note;
        pld_cgen_class_t c = pld_cgen_op_class(e->op, &note);
        if (c == PLD_CGEN_NO_CODE)
            return 0;
        if (e->op == PLD_OPID_TENSOR_WRITE || e->op == PLD_OPID_TILE_WRITE)
            return elem_write(g, e);
        if (e->op == PLD_OPID_TILE_STORE) {
            int o = tmp(g);
            emit(g, "pc_tensor t%d;", o);
            char d[32];
            snprintf(d, sizeof d, "t%d", o);
            return gen_tensor_into(g, e, d);
        }
        if (e->op == PLD_OPID_PLD_TILE_REMOTE_STORE)
            return gen_remote_store(g, e);
        if (c == PLD_CGEN_RUNTIME)
            return gen_exec(g, e, SK_NONE) < 0 ? -1 : 0;
        if (e->op < 0)
            return fail(g, e->span, "calls of other functions inside a kernel are not compiled by the native backend yet");
        return fail(g, e->span, "%s is not compiled by the native backend (%s)", opname(e), note);
    }
    case PLD_ST_IF: {
        int fl;
        pld_dtype_t dt;
        int c = gen_scalar(g, s->u.if_.cond, &fl, &dt);
        if (c < 0)
            return -1;
        emit(g, "if (t%d != 0) {", c);
        g->ind++;
        if (gen_block(g, &s->u.if_.then, NULL))
            return -1;
        g->ind--;
        emit(g, "} else {");
        g->ind++;
        if (gen_block(g, &s->u.if_.els, NULL))
            return -1;
        g->ind--;
        emit(g, "}");
        return 0;
    }
    case PLD_ST_WHILE: {
        emit(g, "for (;;) {");
        g->ind++;
        int fl;
        pld_dtype_t dt;
        int c = gen_scalar(g, s->u.while_.cond, &fl, &dt);
        if (c < 0)
            return -1;
        emit(g, "if (t%d == 0) break;", c);
        if (g->depth >= 32)
            return fail(g, s->span, "loops nested too deeply");
        g->carried[g->depth++] = NULL;
        int rc = gen_block(g, &s->u.while_.body, NULL);
        g->depth--;
        if (rc)
            return -1;
        emit(g, "if (rt->tick(bk, %d)) return 1;", site(g, s->u.while_.cond));
        g->ind--;
        emit(g, "}");
        return 0;
    }
    case PLD_ST_FOR:
        emit(g, "{");
        g->ind++;
        if (gen_for(g, s))
            return -1;
        g->ind--;
        emit(g, "}");
        return 0;
    case PLD_ST_WITH:
        return fail(g, s->span, "scopes inside a kernel are not compiled by the native backend yet");
    }
    return 0;
}

static int gen_block(cg_t *g, const pld_block_t *b, const pld_expr_t *carried)
{
    for (int i = 0; i < b->n; i++)
        if (gen_stmt(g, b->stmts[i], i == b->n - 1, carried))
            return -1;
    return 0;
}

/* ---------------------------------------------------------------- entry */

static const char *ctype(int kind)
{
    switch (kind) {
    case SK_INT: case SK_CTX: return "int64_t";
    case SK_FLT: return "double";
    case SK_TENSOR: return "pc_tensor";
    case SK_TILE: return "pc_tile";
    default: return NULL;
    }
}

/* the static type a slot of fn gets where it is defined (a parameter, an
 * assignment, a loop variable or carried name), NULL when none is found */
static const pld_type_t *def_type_in(const pld_block_t *b, int slot);

static const pld_type_t *target_type(const pld_expr_t *t, const pld_expr_t *v, int slot)
{
    if (t->kind == PLD_EX_NAME)
        return t->slot == slot ? (is_yield(v) ? (v->u.call.nargs == 1 ? v->u.call.args[0].value->type : NULL) : v->type)
                               : NULL;
    if (t->kind != PLD_EX_TUPLE)
        return NULL;
    for (int i = 0; i < t->u.seq.n; i++)
        if (t->u.seq.items[i]->kind == PLD_EX_NAME && t->u.seq.items[i]->slot == slot) {
            if (is_yield(v))
                return i < v->u.call.nargs ? v->u.call.args[i].value->type : NULL;
            return v->type && v->type->kind == PLD_TY_TUPLE && i < v->type->nelems ? v->type->elems[i] : NULL;
        }
    return NULL;
}

static const pld_type_t *def_type_stmt(const pld_stmt_t *s, int slot)
{
    static const pld_type_t index_type = {.kind = PLD_TY_SCALAR, .dtype = PLD_DT_INDEX};
    const pld_type_t *t = NULL;
    switch (s->kind) {
    case PLD_ST_ASSIGN: return target_type(s->u.assign.target, s->u.assign.value, slot);
    case PLD_ST_IF:
        return (t = def_type_in(&s->u.if_.then, slot)) ? t : def_type_in(&s->u.if_.els, slot);
    case PLD_ST_WHILE: return def_type_in(&s->u.while_.body, slot);
    case PLD_ST_WITH: return def_type_in(&s->u.with.body, slot);
    case PLD_ST_FOR: {
        const pld_expr_t *tg = s->u.for_.target, *lv = tg;
        if (tg->kind == PLD_EX_TUPLE && tg->u.seq.n == 2) {
            lv = tg->u.seq.items[0];
            const pld_expr_t *c = tg->u.seq.items[1], *it = s->u.for_.iter, *iv = NULL;
            for (int i = 0; it->kind == PLD_EX_CALL && i < it->u.call.nargs; i++)
                if (it->u.call.args[i].kw && strcmp(it->u.call.args[i].kw, "init_values") == 0)
                    iv = it->u.call.args[i].value;
            int nc = c->kind == PLD_EX_TUPLE ? c->u.seq.n : 1;
            for (int i = 0; iv && (iv->kind == PLD_EX_LIST || iv->kind == PLD_EX_TUPLE) && i < nc && i < iv->u.seq.n; i++) {
                const pld_expr_t *ci = c->kind == PLD_EX_TUPLE ? c->u.seq.items[i] : c;
                if (ci->kind == PLD_EX_NAME && ci->slot == slot)
                    return iv->u.seq.items[i]->type;
            }
        }
        if (lv->kind == PLD_EX_NAME && lv->slot == slot)
            return &index_type;
        return def_type_in(&s->u.for_.body, slot);
    }
    default: return NULL;
    }
}

static const pld_type_t *def_type_in(const pld_block_t *b, int slot)
{
    for (int i = 0; i < b->n; i++) {
        const pld_type_t *t = def_type_stmt(b->stmts[i], slot);
        if (t)
            return t;
    }
    return NULL;
}

static int32_t max_seq(const pld_block_t *b)
{
    int32_t m = -1;
    for (int i = 0; i < b->n; i++) {
        const pld_stmt_t *s = b->stmts[i];
        int32_t v = s->seq;
        if ((s->kind == PLD_ST_FOR || s->kind == PLD_ST_WHILE) && s->seq_end > v)
            v = s->seq_end;
        int32_t w = s->kind == PLD_ST_IF ? (max_seq(&s->u.if_.then) > max_seq(&s->u.if_.els) ? max_seq(&s->u.if_.then)
                                                                                               : max_seq(&s->u.if_.els))
                    : s->kind == PLD_ST_WITH ? max_seq(&s->u.with.body) : -1;
        if (w > v)
            v = w;
        if (v > m)
            m = v;
    }
    return m;
}

/* 1 when slot is assigned somewhere in block b */
static int assigns(const pld_block_t *b, int slot)
{
    return def_type_in(b, slot) != NULL;
}

/* One compiled unit: `body` of function fn, its parameters the slots
 * params[0..np) (types ptypes), for a pl.spmd grid its loop variable; for a
 * pl.at scope (writeback), the slots it assigns that are read after it are
 * handed back to the runtime (the caller's frame) at the end. */
static int gen_unit(const pld_program_t *p, const pld_func_t *fn, const pld_block_t *body, const int32_t *params,
                    const pld_type_t *const *ptypes, int np, const pld_expr_t *loopvar, int writeback,
                    const char *what, const char *crt_text, pld_cgen_t *out)
{
    cg_t g;
    memset(&g, 0, sizeof g);
    g.p = p;
    g.fn = fn;
    g.err = out->err;
    g.errn = sizeof out->err;
    pld_buf_init(&g.out);
    pld_buf_init(&g.tmpdecl);
    g.slots = pld_mem_calloc((size_t)(fn->nslots > 0 ? fn->nslots : 1), sizeof *g.slots);
    if (!g.slots) {
        snprintf(out->err, sizeof out->err, "out of memory");
        return -1;
    }
    for (int i = 0; i < np && !g.failed; i++) {
        pld_expr_t nm;
        memset(&nm, 0, sizeof nm);
        nm.kind = PLD_EX_NAME;
        nm.span = fn->name_span;
        nm.u.name = fn->slot_names[params[i]];
        nm.slot = params[i];
        note_slot(&g, &nm, ptypes[i]);
    }
    if (loopvar && !g.failed) {
        if (loopvar->kind != PLD_EX_NAME || loopvar->slot < 0)
            fail(&g, loopvar->span, "the native backend needs a plain loop variable");
        else
            g.slots[loopvar->slot].kind = SK_INT, g.slots[loopvar->slot].dt = PLD_DT_INDEX;
    }
    if (!g.failed)
        scan_block(&g, body);
    /* a scope's results: what it assigns and a later statement reads */
    int32_t wb[64];
    int nwb = 0;
    if (writeback && !g.failed && fn->last_use) {
        const int32_t end = max_seq(body);
        for (int sl = 0; sl < fn->nslots && !g.failed; sl++) {
            if (!assigns(body, sl) || fn->last_use[sl] <= end)
                continue;
            /* a tile never flows out: only another kernel scope could read it,
             * as a captured tile, which no backend launch carries */
            if (g.slots[sl].kind == SK_TILE || g.slots[sl].kind == SK_NONE)
                continue;
            if (nwb == 64)
                fail(&g, body->n ? body->stmts[0]->span : fn->name_span,
                     "more than 64 values assigned in the scope are read after it");
            else
                wb[nwb++] = sl;
        }
    }
    g.ind = 1;
    if (loopvar && !g.failed)
        emit(&g, "s%d = pc_block_idx(args);", loopvar->slot);
    if (!g.failed)
        gen_block(&g, body, NULL);
    int rc = -1;
    if (!g.failed) {
        pld_buf_t src;
        pld_buf_init(&src);
        pld_buf_puts(&src, crt_text);
        /* the file's base name only: copies of a program elsewhere share the cache */
        const char *base = strrchr(p->file, '/') ? strrchr(p->file, '/') + 1 : p->file;
        pld_buf_printf(&src, "\n/* %s of %s (generated by pldrun; do not edit) */\n", what, base);
        pld_buf_puts(&src, "int pld_ckernel(const pc_rt *rt, void *bk, int64_t *args);\n");
        pld_buf_puts(&src, "int pld_ckernel(const pc_rt *rt, void *bk, int64_t *args)\n{\n");
        pld_buf_puts(&src, "    if (rt->version != PC_VERSION || rt->size < sizeof(pc_rt))\n"
                           "        return rt->fail(bk, -1, \"the kernel was compiled for another runtime version\");\n");
        for (int i = 0; i < fn->nslots; i++) {
            const char *ct = ctype(g.slots[i].kind);
            if (!ct)
                continue;
            pld_buf_printf(&src, "    %s s%d; memset(&s%d, 0, sizeof s%d); /* %s */\n", ct, i, i, i, fn->slot_names[i]);
            if (g.slots[i].kind == SK_TILE)
                pld_buf_printf(&src, "    if (!(s%d.data = rt->alloc(bk, -1, %zu))) return 1;\n", i,
                               g.slots[i].bytes ? g.slots[i].bytes : 1);
        }
        pld_buf_puts(&src, pld_buf_str(&g.tmpdecl));
        /* the capacity check only where the tiles could exceed a memory space */
        int64_t tot[16] = {0};
        for (int i = 0; i < fn->nslots; i++)
            for (int m = 0; m < 16; m++)
                if (g.slots[i].kind == SK_TILE && (g.slots[i].mems >> m & 1u))
                    tot[m] += (int64_t)g.slots[i].bytes;
        pld_buf_puts(&src, "    static const int64_t ub_tot[16] = {");
        for (int m = 0; m < 16; m++)
            pld_buf_printf(&src, "%s%lld", m ? ", " : "", (long long)tot[m]);
        pld_buf_puts(&src, "};\n    const int ubc = rt->ub_needed(bk, ub_tot, 16);\n    (void)ubc;\n");
        /* parameters: tensors first, then scalars (pld_abi_build) */
        int nt = 0;
        for (int i = 0; i < np; i++)
            if (g.slots[params[i]].kind == SK_TENSOR)
                nt++;
        for (int i = 0, ti = 0, si = nt; i < np; i++) {
            const int sl = params[i];
            const pld_dtype_t dt = ptypes[i] ? ptypes[i]->dtype : PLD_DT_NONE;
            switch (g.slots[sl].kind) {
            case SK_TENSOR:
                pld_buf_printf(&src, "    pc_tensor_arg(&s%d, args[%d], %d, %d);\n", sl, ti++, (int)dt,
                               pld_dtype_storage_bytes(dt));
                continue;
            case SK_INT: pld_buf_printf(&src, "    s%d = (int64_t)args[%d];\n", sl, si); break;
            case SK_FLT:
                if (dt == PLD_DT_FP32)
                    pld_buf_printf(&src, "    s%d = (double)pc_f32_bits((uint64_t)args[%d]);\n", sl, si);
                else
                    pld_buf_printf(&src, "    s%d = rt->from_bits(%d, (uint64_t)args[%d]);\n", sl, (int)dt, si);
                break;
            case SK_CTX: pld_buf_printf(&src, "    s%d = rt->param_ctx(bk, %d);\n", sl, sl); break;
            default: break;
            }
            si++;
        }
        pld_buf_puts(&src, pld_buf_str(&g.out));
        for (int i = 0; i < nwb; i++) {
            const int sl = wb[i];
            switch (g.slots[sl].kind) {
            case SK_INT: pld_buf_printf(&src, "    if (rt->set_int(bk, %d, %d, s%d)) return 1;\n", sl, (int)g.slots[sl].dt, sl); break;
            case SK_FLT: pld_buf_printf(&src, "    if (rt->set_float(bk, %d, %d, s%d)) return 1;\n", sl, (int)g.slots[sl].dt, sl); break;
            case SK_TENSOR: pld_buf_printf(&src, "    if (rt->set_tensor(bk, -1, %d, &s%d)) return 1;\n", sl, sl); break;
            case SK_CTX: pld_buf_printf(&src, "    if (rt->set_ctx(bk, %d, s%d)) return 1;\n", sl, sl); break;
            default: break;
            }
        }
        pld_buf_puts(&src, "    return 0;\n}\n");
        out->source = pld_mem_strdup(pld_buf_str(&src));
        pld_buf_fini(&src);
        if (out->source) {
            rc = 0;
            out->sites = g.sites;
            out->nsites = g.nsites;
            g.sites = NULL;
        } else {
            snprintf(out->err, sizeof out->err, "out of memory");
        }
    }
    pld_mem_free((void *)g.sites);
    pld_mem_free(g.slots);
    pld_buf_fini(&g.out);
    pld_buf_fini(&g.tmpdecl);
    return rc;
}

int pld_cgen_kernel(const pld_program_t *p, const pld_func_t *fn, const char *crt_text, pld_cgen_t *out)
{
    memset(out, 0, sizeof *out);
    int32_t *params = pld_mem_calloc((size_t)(fn->nparams > 0 ? fn->nparams : 1), sizeof *params);
    const pld_type_t **types = pld_mem_calloc((size_t)(fn->nparams > 0 ? fn->nparams : 1), sizeof *types);
    if (!params || !types) {
        pld_mem_free(params);
        pld_mem_free((void *)types);
        snprintf(out->err, sizeof out->err, "out of memory");
        return -1;
    }
    for (int i = 0; i < fn->nparams; i++) {
        params[i] = fn->params[i].slot;
        types[i] = fn->params[i].type;
    }
    char what[160];
    snprintf(what, sizeof what, "kernel %s", fn->name);
    int rc = gen_unit(p, fn, &fn->body, params, types, fn->nparams, NULL, 0, what, crt_text, out);
    pld_mem_free(params);
    pld_mem_free((void *)types);
    return rc;
}

int pld_cgen_scope(const pld_program_t *p, const pld_func_t *fn, const pld_stmt_t *s, const char *crt_text,
                   pld_cgen_t *out)
{
    memset(out, 0, sizeof *out);
    const pld_block_t *body;
    const pld_expr_t *loopvar = NULL;
    if (s->kind == PLD_ST_WITH) {
        body = &s->u.with.body;
    } else if (s->kind == PLD_ST_FOR && s->u.for_.iter->kind == PLD_EX_CALL && s->u.for_.iter->op == PLD_OPID_PL_SPMD) {
        body = &s->u.for_.body;
        loopvar = s->u.for_.target;
    } else {
        snprintf(out->err, sizeof out->err, "%s:%d:%d: this scope is not compiled by the native backend", p->file,
                 (int)s->span.line, (int)s->span.col);
        return -1;
    }
    const int np = s->captures ? s->ncaptures : 0;
    const pld_type_t **types = pld_mem_calloc((size_t)(np > 0 ? np : 1), sizeof *types);
    if (!types) {
        snprintf(out->err, sizeof out->err, "out of memory");
        return -1;
    }
    for (int i = 0; i < np; i++) {
        const int sl = s->captures[i];
        for (int k = 0; k < fn->nparams && !types[i]; k++)
            if (fn->params[k].slot == sl)
                types[i] = fn->params[k].type;
        if (!types[i])
            types[i] = def_type_in(&fn->body, sl);
    }
    char what[160];
    snprintf(what, sizeof what, "scope at line %d of %s", (int)s->span.line, fn->name);
    int rc = gen_unit(p, fn, body, s->captures, types, np, loopvar, s->kind == PLD_ST_WITH, what, crt_text, out);
    pld_mem_free((void *)types);
    return rc;
}

void pld_cgen_free(pld_cgen_t *g)
{
    if (!g)
        return;
    pld_mem_free(g->source);
    pld_mem_free((void *)g->sites);
    g->source = NULL;
    g->sites = NULL;
    g->nsites = 0;
}
