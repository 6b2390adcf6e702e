/* pld_interp.c - the evaluator: expressions, statements and control flow,
 * calls and dispatch across ranks, entry binding and output assembly. */
#include "pld_interp_int.h"
#include "pld_mem.h"
#include "pld_npy.h"
#include "pld_npu.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MAX_DEPTH 200

/* ------------------------------------------------------------ errors */

pld_status_t pld_rt_error(pld_interp_t *it, frame_t *f, pld_span_t sp, const char *fmt, ...)
{
    if (it->quiet || it->failed)
        return PLD_E_RUNTIME;
    it->failed = 1;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pld_diag_t *d = pld_diag_add(&it->p->diags, PLD_SEV_ERROR, sp, "%s", msg);
    for (frame_t *fr = f; fr && d; fr = fr->parent) {
        if (fr->fn)
            pld_diag_note(&it->p->diags, d, fr->call_span.line ? fr->call_span : fr->fn->name_span, "in %s%s",
                          fr->fn->name, fr->call_span.line ? " (called here)" : "");
    }
    return PLD_E_RUNTIME;
}

/* ------------------------------------------------------------ dynamic dims */

int pld_dyn_get(pld_interp_t *it, const char *name, int64_t *out)
{
    for (int i = 0; i < it->ndyn; i++)
        if (it->dyn_names[i] == name || strcmp(it->dyn_names[i], name) == 0) {
            *out = it->dyn_vals[i];
            return 1;
        }
    return 0;
}

int pld_dyn_set(pld_interp_t *it, const char *name, int64_t v)
{
    for (int i = 0; i < it->ndyn; i++)
        if (it->dyn_names[i] == name || strcmp(it->dyn_names[i], name) == 0) {
            it->dyn_vals[i] = v;
            return 1;
        }
    if (it->ndyn == it->capdyn) {
        int cap = it->capdyn ? it->capdyn * 2 : 8;
        const char **nn = pld_mem_realloc(it->dyn_names, (size_t)cap * sizeof *nn);
        if (!nn)
            return 0;
        it->dyn_names = nn;
        int64_t *nv = pld_mem_realloc(it->dyn_vals, (size_t)cap * sizeof *nv);
        if (!nv)
            return 0;
        it->dyn_vals = nv;
        it->capdyn = cap;
    }
    it->dyn_names[it->ndyn] = name;
    it->dyn_vals[it->ndyn] = v;
    it->ndyn++;
    return 1;
}

/* ------------------------------------------------------------ helpers */

pld_dtype_t pld_expr_dtype(pld_interp_t *it, const pld_expr_t *e)
{
    char b[128];
    if (!e)
        return PLD_DT_NONE;
    if (e->kind == PLD_EX_NAME) {
        for (int i = 0; i < it->p->nconsts; i++)
            if (it->p->consts[i].name == e->u.name) {
                const pld_expr_t *v = it->p->consts[i].value;
                return v != e ? pld_expr_dtype(it, v) : PLD_DT_NONE;
            }
        return pld_dtype_from_name(e->u.name);
    }
    if (e->kind == PLD_EX_ATTR && pld_ast_dotted(e, b, sizeof b)) {
        const char *last = strrchr(b, '.');
        return pld_dtype_from_name(last ? last + 1 : b);
    }
    return PLD_DT_NONE;
}

static int truthy(const pld_value_t *v)
{
    if (v->kind == PLD_V_FLOAT)
        return v->u.f != 0.0;
    if (v->kind == PLD_V_INT)
        return v->u.i != 0;
    return v->kind != PLD_V_NONE;
}

static pld_dtype_t promote(pld_dtype_t a, pld_dtype_t b)
{
    if (a == b)
        return a;
    if (pld_dtype_is_float(a) != pld_dtype_is_float(b))
        return pld_dtype_is_float(a) ? a : b;
    if (a == PLD_DT_INDEX || b == PLD_DT_INDEX)
        return PLD_DT_INDEX;
    return pld_dtype_bits(a) >= pld_dtype_bits(b) ? a : b;
}

static int64_t floordiv(int64_t a, int64_t b)
{
    if (b == -1)
        return (int64_t)(0 - (uint64_t)a);
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

static int64_t floormod(int64_t a, int64_t b)
{
    if (b == -1)
        return 0;
    int64_t m = a % b;
    if (m != 0 && ((m < 0) != (b < 0)))
        m += b;
    return m;
}

/* ------------------------------------------------------------ expressions */

static pld_status_t eval_name(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    if (e->slot >= 0 && f && e->slot < f->nslots) {
        const pld_value_t *v = &f->slots[e->slot];
        if (v->kind == PLD_V_NONE)
            return pld_rt_error(it, f, e->span, "variable '%s' has no value here", e->u.name);
        /* an unavailable value (computed on another rank) flows on; using it as an
         * operand is the error */
        *out = *v;
        pld_value_retain(out);
        return PLD_OK;
    }
    /* module constant (e->aux = index) or dynamic dim */
    int ci = e->aux;
    if (ci < 0 || ci >= it->p->nconsts || it->p->consts[ci].name != e->u.name) {
        ci = -1;
        for (int i = 0; i < it->p->nconsts; i++)
            if (it->p->consts[i].name == e->u.name)
                ci = i;
    }
    if (ci >= 0 && !it->const_is_dyn[ci]) {
        *out = it->consts[ci];
        pld_value_retain(out);
        return PLD_OK;
    }
    int64_t v;
    if (pld_dyn_get(it, e->u.name, &v)) {
        *out = pld_v_int(PLD_DT_INDEX, v);
        return PLD_OK;
    }
    return pld_rt_error(it, f, e->span, "dynamic dimension '%s' is not bound (no input shape defines it)", e->u.name);
}

static pld_status_t scalar_of(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *v)
{
    pld_status_t st = pld_eval(it, f, e, v);
    if (st != PLD_OK)
        return st;
    if (!pld_v_is_scalar(v)) {
        pld_vkind_t k = v->kind;
        pld_value_release(v);
        return pld_rt_error(it, f, e->span, "expected a scalar here, found a %s", pld_vkind_name(k));
    }
    return PLD_OK;
}

static pld_status_t eval_binary(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    pld_value_t a, b;
    pld_status_t st = scalar_of(it, f, e->u.bin.a, &a);
    if (st != PLD_OK)
        return st;
    st = scalar_of(it, f, e->u.bin.b, &b);
    if (st != PLD_OK)
        return st;
    pld_binop_t op = e->u.bin.op;
    int fl = a.kind == PLD_V_FLOAT || b.kind == PLD_V_FLOAT;
    if (op >= PLD_OP_EQ && op <= PLD_OP_GE) {
        int r;
        if (fl) {
            double x = pld_v_as_f(&a), y = pld_v_as_f(&b);
            r = op == PLD_OP_EQ ? x == y : op == PLD_OP_NE ? x != y : op == PLD_OP_LT ? x < y
              : op == PLD_OP_LE ? x <= y : op == PLD_OP_GT ? x > y : x >= y;
        } else {
            int64_t x = a.u.i, y = b.u.i;
            r = op == PLD_OP_EQ ? x == y : op == PLD_OP_NE ? x != y : op == PLD_OP_LT ? x < y
              : op == PLD_OP_LE ? x <= y : op == PLD_OP_GT ? x > y : x >= y;
        }
        *out = pld_v_int(PLD_DT_BOOL, r);
        return PLD_OK;
    }
    if (op == PLD_OP_AND || op == PLD_OP_OR || op == PLD_OP_XOR) {
        int x = truthy(&a), y = truthy(&b);
        *out = pld_v_int(PLD_DT_BOOL, op == PLD_OP_AND ? (x && y) : op == PLD_OP_OR ? (x || y) : (x != y));
        return PLD_OK;
    }
    pld_dtype_t dt = e->type && e->type->kind == PLD_TY_SCALAR && e->type->dtype != PLD_DT_NONE ? e->type->dtype
                                                                                               : promote(a.dt, b.dt);
    if (fl || op == PLD_OP_DIV || pld_dtype_is_float(dt)) {
        double x = pld_v_as_f(&a), y = pld_v_as_f(&b), r;
        switch (op) {
        case PLD_OP_ADD: r = x + y; break;
        case PLD_OP_SUB: r = x - y; break;
        case PLD_OP_MUL: r = x * y; break;
        case PLD_OP_DIV: r = x / y; break;
        case PLD_OP_FLOORDIV: r = floor(x / y); break;
        case PLD_OP_MOD: r = y != 0 ? x - floor(x / y) * y : NAN; break;
        case PLD_OP_POW: r = pow(x, y); break;
        default:
            return pld_rt_error(it, f, e->span, "operator not supported on float scalars");
        }
        *out = pld_v_float(pld_dtype_is_float(dt) ? dt : PLD_DT_FP32, r);
        return PLD_OK;
    }
    uint64_t x = (uint64_t)a.u.i, y = (uint64_t)b.u.i;
    int64_t r;
    switch (op) {
    case PLD_OP_ADD: r = (int64_t)(x + y); break;
    case PLD_OP_SUB: r = (int64_t)(x - y); break;
    case PLD_OP_MUL: r = (int64_t)(x * y); break;
    case PLD_OP_FLOORDIV:
    case PLD_OP_MOD:
        if (b.u.i == 0)
            return pld_rt_error(it, f, e->span, "integer %s by zero", op == PLD_OP_MOD ? "modulo" : "division");
        r = op == PLD_OP_FLOORDIV ? floordiv(a.u.i, b.u.i) : floormod(a.u.i, b.u.i);
        break;
    case PLD_OP_LSHIFT: r = b.u.i < 0 || b.u.i > 63 ? 0 : (int64_t)(x << b.u.i); break;
    case PLD_OP_RSHIFT: r = b.u.i < 0 || b.u.i > 63 ? (a.u.i < 0 ? -1 : 0) : a.u.i >> b.u.i; break;
    case PLD_OP_BITAND: r = (int64_t)(x & y); break;
    case PLD_OP_BITOR: r = (int64_t)(x | y); break;
    case PLD_OP_BITXOR: r = (int64_t)(x ^ y); break;
    case PLD_OP_POW: {
        if (b.u.i < 0)
            return pld_rt_error(it, f, e->span, "negative integer exponent");
        uint64_t p = 1, base = x;
        for (int64_t k = b.u.i; k > 0; k >>= 1) {
            if (k & 1)
                p *= base;
            base *= base;
        }
        r = (int64_t)p;
        break;
    }
    default:
        return pld_rt_error(it, f, e->span, "unsupported scalar operator");
    }
    *out = pld_v_int(dt == PLD_DT_NONE ? PLD_DT_INDEX : dt, r);
    return PLD_OK;
}

static pld_status_t eval_unary(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    pld_value_t a;
    pld_status_t st = scalar_of(it, f, e->u.un.a, &a);
    if (st != PLD_OK)
        return st;
    switch (e->u.un.op) {
    case PLD_UOP_NOT: *out = pld_v_int(PLD_DT_BOOL, !truthy(&a)); break;
    case PLD_UOP_POS: *out = a; break;
    case PLD_UOP_NEG:
        *out = a.kind == PLD_V_FLOAT ? pld_v_float(a.dt, -a.u.f) : pld_v_int(a.dt, (int64_t)(0 - (uint64_t)a.u.i));
        break;
    case PLD_UOP_INVERT:
        if (a.kind == PLD_V_FLOAT)
            return pld_rt_error(it, f, e->span, "'~' needs an integer");
        *out = pld_v_int(a.dt, ~a.u.i);
        break;
    }
    return PLD_OK;
}

static pld_status_t eval_seq(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    pld_tuple_t *t = pld_tuple_new(e->u.seq.n);
    if (!t)
        return pld_rt_error(it, f, e->span, "out of memory");
    for (int i = 0; i < e->u.seq.n; i++) {
        pld_status_t st = pld_eval(it, f, e->u.seq.items[i], &t->items[i]);
        if (st != PLD_OK) {
            pld_value_t tv = pld_v_obj(&t->hdr, PLD_DT_NONE);
            pld_value_release(&tv);
            return st;
        }
    }
    *out = pld_v_obj(&t->hdr, PLD_DT_NONE);
    return PLD_OK;
}

static pld_status_t eval_call(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out);

pld_status_t pld_eval(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    it->stats.ops++;
    *out = pld_v_none();
    switch (e->kind) {
    case PLD_EX_INT:
        *out = pld_v_int(e->type && e->type->kind == PLD_TY_SCALAR && e->type->dtype != PLD_DT_NONE ? e->type->dtype
                                                                                                 : PLD_DT_INDEX,
                         e->u.ival);
        return PLD_OK;
    case PLD_EX_FLOAT:
        *out = pld_v_float(PLD_DT_FP32, e->u.fval);
        return PLD_OK;
    case PLD_EX_BOOL:
        *out = pld_v_int(PLD_DT_BOOL, e->u.bval);
        return PLD_OK;
    case PLD_EX_NONE:
        *out = pld_v_int(PLD_DT_TASK_ID, -1);
        return PLD_OK;
    case PLD_EX_NAME:
        return eval_name(it, f, e, out);
    case PLD_EX_UNARY:
        return eval_unary(it, f, e, out);
    case PLD_EX_BINARY:
        return eval_binary(it, f, e, out);
    case PLD_EX_CALL:
        return eval_call(it, f, e, out);
    case PLD_EX_SUBSCRIPT: {
        pld_value_t obj;
        pld_status_t st = pld_eval(it, f, e->u.sub.obj, &obj);
        if (st != PLD_OK)
            return st;
        st = pld_exec_subscript(it, f, e, &obj, out);
        pld_value_release(&obj);
        return st;
    }
    case PLD_EX_LIST:
    case PLD_EX_TUPLE:
        return eval_seq(it, f, e, out);
    case PLD_EX_STR:
    case PLD_EX_ATTR:
    case PLD_EX_ELLIPSIS:
    case PLD_EX_DICT:
    case PLD_EX_SLICE:
        return PLD_OK; /* read by the ops that take them, never as values */
    }
    return PLD_OK;
}

pld_status_t pld_eval_i64(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int64_t *out)
{
    pld_value_t v;
    pld_status_t st = scalar_of(it, f, e, &v);
    if (st != PLD_OK)
        return st;
    if (v.kind == PLD_V_FLOAT)
        return pld_rt_error(it, f, e->span, "expected an integer, found the float %g", v.u.f);
    *out = v.u.i;
    return PLD_OK;
}

static const pld_expr_t *list_expr(pld_interp_t *it, const pld_expr_t *e)
{
    if (e->kind == PLD_EX_LIST || e->kind == PLD_EX_TUPLE)
        return e;
    if (e->kind == PLD_EX_NAME && e->slot < 0)
        for (int i = 0; i < it->p->nconsts; i++)
            if (it->p->consts[i].name == e->u.name) {
                const pld_expr_t *v = it->p->consts[i].value;
                if (v->kind == PLD_EX_LIST || v->kind == PLD_EX_TUPLE)
                    return v;
            }
    return NULL;
}

pld_status_t pld_eval_ilist(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int64_t *out, int n, int *count)
{
    const pld_expr_t *l = list_expr(it, e);
    if (l) {
        if (l->u.seq.n > n)
            return pld_rt_error(it, f, e->span, "list has %d entries (limit %d)", l->u.seq.n, n);
        for (int i = 0; i < l->u.seq.n; i++) {
            pld_status_t st = pld_eval_i64(it, f, l->u.seq.items[i], &out[i]);
            if (st != PLD_OK)
                return st;
        }
        *count = l->u.seq.n;
        return PLD_OK;
    }
    pld_value_t v;
    pld_status_t st = pld_eval(it, f, e, &v);
    if (st != PLD_OK)
        return st;
    if (v.kind != PLD_V_TUPLE) {
        pld_value_release(&v);
        return pld_rt_error(it, f, e->span, "expected a list of integers");
    }
    pld_tuple_t *t = pld_v_tuple(&v);
    if (t->n > n) {
        pld_value_release(&v);
        return pld_rt_error(it, f, e->span, "list has %d entries (limit %d)", t->n, n);
    }
    for (int i = 0; i < t->n; i++) {
        if (t->items[i].kind != PLD_V_INT) {
            pld_value_release(&v);
            return pld_rt_error(it, f, e->span, "expected a list of integers");
        }
        out[i] = t->items[i].u.i;
    }
    *count = t->n;
    pld_value_release(&v);
    return PLD_OK;
}

pld_status_t pld_eval_dim(pld_interp_t *it, frame_t *f, const pld_dim_t *d, int64_t *out, pld_span_t sp)
{
    switch (d->kind) {
    case PLD_DIM_CONST:
        *out = d->v;
        return PLD_OK;
    case PLD_DIM_SYM:
        if (pld_dyn_get(it, d->sym, out))
            return PLD_OK;
        for (int i = 0; i < it->p->nconsts; i++)
            if (it->p->consts[i].name == d->sym && !it->const_is_dyn[i] && it->consts[i].kind == PLD_V_INT) {
                *out = it->consts[i].u.i;
                return PLD_OK;
            }
        if (f && d->expr && d->expr->slot >= 0)
            return pld_eval_i64(it, f, d->expr, out);
        return pld_rt_error(it, f, sp, "dynamic dimension '%s' is not bound", d->sym);
    case PLD_DIM_EXPR:
        return pld_eval_i64(it, f, d->expr, out);
    }
    return PLD_E_RUNTIME;
}

/* ------------------------------------------------------------ statements */

static int exec_block(pld_interp_t *it, frame_t *f, const pld_block_t *b);

static pld_status_t assign_target(pld_interp_t *it, frame_t *f, const pld_expr_t *t, const pld_value_t *v)
{
    switch (t->kind) {
    case PLD_EX_NAME:
        if (t->slot < 0 || t->slot >= f->nslots)
            return pld_rt_error(it, f, t->span, "internal error: '%s' has no slot", t->u.name);
        pld_value_set(&f->slots[t->slot], v);
        if (f->ctx == PLD_CTX_KERNEL && v->kind == PLD_V_TILE)
            return pld_exec_check_ub(it, f, t->span);
        return PLD_OK;
    case PLD_EX_TUPLE:
    case PLD_EX_LIST: {
        if (v->kind == PLD_V_UNAVAIL) {
            /* a dispatch result from another rank: every name is unavailable here */
            for (int i = 0; i < t->u.seq.n; i++) {
                pld_status_t st = assign_target(it, f, t->u.seq.items[i], v);
                if (st != PLD_OK)
                    return st;
            }
            return PLD_OK;
        }
        if (v->kind != PLD_V_TUPLE || pld_v_tuple(v)->n != t->u.seq.n)
            return pld_rt_error(it, f, t->span, "cannot unpack %s into %d names",
                                v->kind == PLD_V_TUPLE ? "a tuple of another length" : pld_vkind_name(v->kind),
                                t->u.seq.n);
        for (int i = 0; i < t->u.seq.n; i++) {
            pld_status_t st = assign_target(it, f, t->u.seq.items[i], &pld_v_tuple(v)->items[i]);
            if (st != PLD_OK)
                return st;
        }
        return PLD_OK;
    }
    case PLD_EX_SUBSCRIPT:
        return pld_exec_subscript_assign(it, f, t, v);
    default:
        return pld_rt_error(it, f, t->span, "cannot assign to this expression");
    }
}

/* Evaluates the arguments of pl.yield_ into a tuple value. */
static pld_status_t eval_yield(pld_interp_t *it, frame_t *f, const pld_expr_t *call, pld_value_t *out)
{
    int n = call->u.call.nargs;
    pld_tuple_t *t = pld_tuple_new(n);
    if (!t)
        return pld_rt_error(it, f, call->span, "out of memory");
    pld_value_t tv = pld_v_obj(&t->hdr, PLD_DT_NONE);
    for (int i = 0; i < n; i++) {
        pld_status_t st = pld_eval(it, f, call->u.call.args[i].value, &t->items[i]);
        if (st != PLD_OK) {
            pld_value_release(&tv);
            return st;
        }
    }
    *out = tv;
    return PLD_OK;
}

static int exec_assign(pld_interp_t *it, frame_t *f, const pld_stmt_t *s)
{
    const pld_expr_t *v = s->u.assign.value;
    pld_value_t val;
    pld_status_t st;
    if (v->kind == PLD_EX_CALL && v->op == PLD_OPID_PL_YIELD_) {
        st = eval_yield(it, f, v, &val);
        if (st != PLD_OK)
            return FLOW_ERROR;
        pld_tuple_t *t = pld_v_tuple(&val);
        if (s->u.assign.target->kind == PLD_EX_NAME)
            st = t->n == 1 ? assign_target(it, f, s->u.assign.target, &t->items[0])
                           : pld_rt_error(it, f, v->span, "pl.yield_ of %d values assigned to one name", t->n);
        else
            st = assign_target(it, f, s->u.assign.target, &val);
        if (st == PLD_OK && f->loop && f->loop->yield_stmt == s) {
            loop_ctx_t *lc = f->loop;
            for (int i = 0; i < lc->nnext; i++)
                pld_value_release(&lc->next[i]);
            lc->nnext = t->n < 16 ? t->n : 16;
            for (int i = 0; i < lc->nnext; i++)
                pld_value_set(&lc->next[i], &t->items[i]);
            lc->have_next = 1;
        }
        pld_value_release(&val);
        return st == PLD_OK ? FLOW_NORMAL : FLOW_ERROR;
    }
    st = pld_eval(it, f, v, &val);
    if (st != PLD_OK)
        return FLOW_ERROR;
    st = assign_target(it, f, s->u.assign.target, &val);
    pld_value_release(&val);
    return st == PLD_OK ? FLOW_NORMAL : FLOW_ERROR;
}

static const pld_expr_t *kwarg(const pld_expr_t *call, const char *kw)
{
    for (int i = 0; i < call->u.call.nargs; i++)
        if (call->u.call.args[i].kw && strcmp(call->u.call.args[i].kw, kw) == 0)
            return call->u.call.args[i].value;
    return NULL;
}

/* The final statement of a loop body when it is a yield assignment. */
static const pld_stmt_t *final_yield(const pld_block_t *b)
{
    if (b->n == 0)
        return NULL;
    const pld_stmt_t *s = b->stmts[b->n - 1];
    if (s->kind == PLD_ST_ASSIGN && s->u.assign.value->kind == PLD_EX_CALL && s->u.assign.value->op == PLD_OPID_PL_YIELD_)
        return s;
    return NULL;
}

static pld_status_t set_carried(pld_interp_t *it, frame_t *f, const pld_expr_t *carried, const pld_value_t *vals,
                                int n)
{
    int nc = carried->kind == PLD_EX_TUPLE ? carried->u.seq.n : 1;
    if (nc != n)
        return pld_rt_error(it, f, carried->span, "%d loop-carried names but %d values", nc, n);
    for (int i = 0; i < nc; i++) {
        const pld_expr_t *nm = carried->kind == PLD_EX_TUPLE ? carried->u.seq.items[i] : carried;
        pld_status_t st = assign_target(it, f, nm, &vals[i]);
        if (st != PLD_OK)
            return st;
    }
    return PLD_OK;
}

/* ---- SPMD grids: every block runs the body on its own copy of the frame ---- */

typedef struct spmd_ctx {
    pld_interp_t *it;
    frame_t *f;
    const pld_block_t *body;
    const pld_expr_t *loopvar;
} spmd_ctx_t;

static pld_status_t spmd_block(void *arg, int b, int n)
{
    spmd_ctx_t *c = arg;
    frame_t *f = c->f;
    pld_value_t *slots = pld_mem_calloc((size_t)(f->nslots > 0 ? f->nslots : 1), sizeof *slots);
    if (!slots)
        return pld_rt_error(c->it, f, c->body->n ? c->body->stmts[0]->span : f->call_span, "out of memory");
    for (int k = 0; k < f->nslots; k++)
        pld_value_set(&slots[k], &f->slots[k]);
    frame_t bf = *f;
    bf.slots = slots;
    bf.ctx = PLD_CTX_KERNEL;
    bf.block_idx = b;
    bf.block_num = n;
    bf.loop = NULL;
    bf.ret = pld_v_none();
    bf.in_kernel_scope = 1;
    int flow = FLOW_NORMAL;
    if (c->loopvar) {
        pld_value_t lv = pld_v_int(PLD_DT_INDEX, b);
        if (assign_target(c->it, &bf, c->loopvar, &lv) != PLD_OK)
            flow = FLOW_ERROR;
    }
    if (flow == FLOW_NORMAL)
        flow = exec_block(c->it, &bf, c->body);
    pld_value_release(&bf.ret);
    for (int k = 0; k < f->nslots; k++)
        pld_value_release(&slots[k]);
    pld_mem_free(slots);
    return flow == FLOW_ERROR ? PLD_E_RUNTIME : PLD_OK;
}

/* Runs `body` as an SPMD grid of n blocks (coroutines of this rank), as task
 * tid (0: the next TaskId). */
static int run_spmd(pld_interp_t *it, frame_t *f, const pld_expr_t *item, const pld_block_t *body,
                    const pld_expr_t *loopvar, int64_t n, int64_t tid)
{
    const pld_expr_t *ss = kwarg(item, "sync_start");
    int limit = pld_npu_profile_or_default(it->opts.platform)->aiv_cores;
    if (n < 0) {
        pld_rt_error(it, f, item->span, "pl.spmd needs a non-negative block count, found %lld", (long long)n);
        return FLOW_ERROR;
    }
    if (ss && ss->kind == PLD_EX_BOOL && ss->u.bval && n > limit) {
        pld_rt_error(it, f, item->span, "a sync-start launch of %lld blocks cannot be admitted: the platform has %d AIV "
                                        "cores (all blocks must be resident together)",
                     (long long)n, limit);
        return FLOW_ERROR;
    }
    spmd_ctx_t c = {it, f, body, loopvar};
    int64_t saved;
    pld_task_begin(it, tid, &saved);
    pld_status_t st = pld_npu_run_blocks((int)n, 0, spmd_block, &c);
    if (st != PLD_OK && !it->failed)
        pld_rt_error(it, f, item->span, "SPMD grid of %lld blocks failed: %s", (long long)n, pld_status_name(st));
    if (pld_task_end(it, f, item->span, "pl.spmd", saved, st == PLD_OK) != PLD_OK)
        st = PLD_E_RUNTIME;
    return st == PLD_OK ? FLOW_NORMAL : FLOW_ERROR;
}

static int exec_for(pld_interp_t *it, frame_t *f, const pld_stmt_t *s)
{
    const pld_expr_t *iter = s->u.for_.iter, *target = s->u.for_.target;
    int kind = iter->op;
    const pld_expr_t *loopvar = NULL, *carried = NULL;
    if (kind == PLD_OPID_PL_WHILE_)
        carried = target;
    else if (target->kind == PLD_EX_NAME)
        loopvar = target;
    else if (target->kind == PLD_EX_TUPLE && target->u.seq.n == 2) {
        loopvar = target->u.seq.items[0];
        carried = target->u.seq.items[1];
    }
    /* bounds */
    int64_t b[3] = {0, 0, 1};
    int npos = 0;
    for (int i = 0; i < iter->u.call.nargs; i++) {
        if (iter->u.call.args[i].kw)
            continue;
        if (npos < 3 && pld_eval_i64(it, f, iter->u.call.args[i].value, &b[npos]) != PLD_OK)
            return FLOW_ERROR;
        npos++;
    }
    int64_t start = 0, stop = 0, step = 1;
    if (kind == PLD_OPID_PL_SPMD || kind == PLD_OPID_PL_SPLIT_AIV || npos == 1)
        stop = b[0];
    else if (npos >= 2) {
        start = b[0];
        stop = b[1];
        step = npos == 3 ? b[2] : 1;
    }
    if (step == 0) {
        pld_rt_error(it, f, iter->span, "loop step is zero");
        return FLOW_ERROR;
    }
    if (kind == PLD_OPID_PL_SPMD || kind == PLD_OPID_PL_SPLIT_AIV)
        return run_spmd(it, f, iter, &s->u.for_.body, loopvar, stop, 0);
    /* init values */
    const pld_expr_t *iv = kwarg(iter, "init_values");
    pld_value_t init[16];
    int ninit = 0;
    if (iv) {
        ninit = iv->u.seq.n < 16 ? iv->u.seq.n : 16;
        for (int i = 0; i < ninit; i++)
            if (pld_eval(it, f, iv->u.seq.items[i], &init[i]) != PLD_OK) {
                for (int j = 0; j < i; j++)
                    pld_value_release(&init[j]);
                return FLOW_ERROR;
            }
        if (carried && set_carried(it, f, carried, init, ninit) != PLD_OK)
            goto fail;
    }
    loop_ctx_t lc;
    memset(&lc, 0, sizeof lc);
    lc.outer = f->loop;
    lc.yield_stmt = final_yield(&s->u.for_.body);
    f->loop = &lc;
    int64_t trips = 0;
    int flow = FLOW_NORMAL;
    int body_from = kind == PLD_OPID_PL_WHILE_ ? 1 : 0; /* pl.cond comes first */
    for (int64_t i = start; kind == PLD_OPID_PL_WHILE_ || (step > 0 ? i < stop : i > stop);) {
        if (kind == PLD_OPID_PL_WHILE_) {
            const pld_stmt_t *cs = s->u.for_.body.stmts[0];
            pld_value_t c;
            if (scalar_of(it, f, cs->u.expr->u.call.args[0].value, &c) != PLD_OK) {
                flow = FLOW_ERROR;
                break;
            }
            if (!truthy(&c))
                break;
        }
        if (loopvar) {
            pld_value_t lv = pld_v_int(PLD_DT_INDEX, i);
            if (assign_target(it, f, loopvar, &lv) != PLD_OK) {
                flow = FLOW_ERROR;
                break;
            }
        }
        lc.have_next = 0;
        pld_block_t body = {s->u.for_.body.stmts + body_from, s->u.for_.body.n - body_from};
        flow = exec_block(it, f, &body);
        trips++;
        if (flow == FLOW_ERROR || flow == FLOW_RETURN)
            break;
        if (carried && lc.have_next && set_carried(it, f, carried, lc.next, lc.nnext) != PLD_OK) {
            flow = FLOW_ERROR;
            break;
        }
        if (flow == FLOW_BREAK) {
            flow = FLOW_NORMAL;
            break;
        }
        flow = FLOW_NORMAL;
        if (kind == PLD_OPID_PL_WHILE_)
            continue;
        if (__builtin_add_overflow(i, step, &i))
            break; /* the next value is beyond int64: the range has ended */
    }
    f->loop = lc.outer;
    for (int i = 0; i < lc.nnext; i++)
        pld_value_release(&lc.next[i]);
    /* zero trips: the yield's targets take the init values */
    if (flow == FLOW_NORMAL && trips == 0 && lc.yield_stmt && iv) {
        const pld_expr_t *yt = lc.yield_stmt->u.assign.target;
        if (yt->kind == PLD_EX_NAME && ninit == 1) {
            if (assign_target(it, f, yt, &init[0]) != PLD_OK)
                flow = FLOW_ERROR;
        } else if (set_carried(it, f, yt, init, ninit) != PLD_OK) {
            flow = FLOW_ERROR;
        }
    }
    for (int i = 0; i < ninit; i++)
        pld_value_release(&init[i]);
    return flow;
fail:
    for (int i = 0; i < ninit; i++)
        pld_value_release(&init[i]);
    return FLOW_ERROR;
}

static pld_status_t launch_scope(pld_interp_t *it, frame_t *f, const pld_stmt_t *s, int64_t tid, int *flow);
static const char *name_hint(const pld_expr_t *item);

/* 1 when with-item `item` launches a kernel task (pl.at(CORE_GROUP) outside a
 * kernel, or pl.spmd). */
static int is_task_scope(const frame_t *f, const pld_expr_t *item)
{
    if (item->op == PLD_OPID_PL_SPMD)
        return 1;
    if (item->op != PLD_OPID_PL_AT || f->ctx == PLD_CTX_KERNEL)
        return 0;
    const pld_expr_t *lv = kwarg(item, "level");
    if (!lv && item->u.call.nargs > 0 && !item->u.call.args[0].kw)
        lv = item->u.call.args[0].value;
    char b[128];
    return lv && pld_ast_dotted(lv, b, sizeof b) &&
           (strstr(b, "CORE_GROUP") || strstr(b, "AIV") || strstr(b, "AIC") || strstr(b, "CHIP_DIE"));
}

/* Evaluates deps=[...] of a task launch (*n = 0 without one). */
static pld_status_t eval_deps(pld_interp_t *it, frame_t *f, const pld_expr_t *call, int64_t *deps, int *n)
{
    const pld_expr_t *d = kwarg(call, "deps");
    *n = 0;
    if (!d)
        return PLD_OK;
    return pld_eval_ilist(it, f, d, deps, 64, n);
}

static void bind_task_id(frame_t *f, const pld_stmt_t *s, int64_t tid)
{
    if (!s->u.with.as_name)
        return;
    for (int i = 0; f->fn && i < f->fn->nslots; i++)
        if (f->fn->slot_names[i] == s->u.with.as_name) {
            pld_value_t v = pld_v_int(PLD_DT_TASK_ID, tid);
            pld_value_set(&f->slots[i], &v);
            return;
        }
}

static int exec_with(pld_interp_t *it, frame_t *f, const pld_stmt_t *s)
{
    const pld_expr_t *item = s->u.with.item;
    int flow;
    const int task = is_task_scope(f, item);
    if (task) {
        /* a task: ready now, or queued until its deps complete */
        int64_t deps[64];
        int ndeps;
        if (eval_deps(it, f, item, deps, &ndeps) != PLD_OK || pld_task_progress(it) != PLD_OK)
            return FLOW_ERROR;
        for (int i = 0; i < ndeps; i++)
            if (!pld_task_complete(it, deps[i])) {
                int64_t tid = (int64_t)++it->stats.tasks;
                if (pld_task_queue(it, f, s, name_hint(item), tid, deps, ndeps) != PLD_OK)
                    return FLOW_ERROR;
                bind_task_id(f, s, tid);
                return FLOW_NORMAL;
            }
    }
    if (item->op == PLD_OPID_PL_AT && f->ctx != PLD_CTX_KERNEL) {
        if (task) {
            if (launch_scope(it, f, s, 0, &flow) != PLD_OK)
                return FLOW_ERROR;
        } else {
            const pld_expr_t *lv = kwarg(item, "level");
            if (!lv && item->u.call.nargs > 0 && !item->u.call.args[0].kw)
                lv = item->u.call.args[0].value;
            char b[128];
            int saved = f->ctx;
            if (lv && pld_ast_dotted(lv, b, sizeof b) && strstr(b, "CHIP"))
                f->ctx = PLD_CTX_CHIP;
            flow = exec_block(it, f, &s->u.with.body);
            f->ctx = saved;
        }
    } else if (item->op == PLD_OPID_PL_SPMD) {
        int64_t n;
        if (pld_eval_i64(it, f, item->u.call.args[0].value, &n) != PLD_OK)
            return FLOW_ERROR;
        flow = run_spmd(it, f, item, &s->u.with.body, NULL, n, 0);
    } else {
        flow = exec_block(it, f, &s->u.with.body);
    }
    if (flow != FLOW_ERROR)
        bind_task_id(f, s, (int64_t)it->stats.tasks);
    return flow;
}

pld_status_t pld_interp_run_queued(pld_interp_t *it, frame_t *f, const pld_stmt_t *s, int64_t tid)
{
    int flow;
    const pld_expr_t *item = s->u.with.item;
    if (item->op == PLD_OPID_PL_SPMD) {
        int64_t n;
        flow = pld_eval_i64(it, f, item->u.call.args[0].value, &n) != PLD_OK
                   ? FLOW_ERROR
                   : run_spmd(it, f, item, &s->u.with.body, NULL, n, tid);
    } else if (launch_scope(it, f, s, tid, &flow) != PLD_OK) {
        flow = FLOW_ERROR;
    }
    return flow == FLOW_ERROR ? PLD_E_RUNTIME : PLD_OK;
}

static int exec_stmt(pld_interp_t *it, frame_t *f, const pld_stmt_t *s)
{
    switch (s->kind) {
    case PLD_ST_EXPR: {
        const pld_expr_t *e = s->u.expr;
        if (e->kind == PLD_EX_CALL && (e->op == PLD_OPID_PL_FUNC_ATTR || e->op == PLD_OPID_PL_STATIC_PRINT ||
                                       e->op == PLD_OPID_PL_STATIC_ASSERT || e->op == PLD_OPID_PL_DUMP_TAG))
            return FLOW_NORMAL;
        pld_value_t v;
        if (e->kind == PLD_EX_CALL && e->op == PLD_OPID_PL_YIELD_) {
            if (eval_yield(it, f, e, &v) != PLD_OK)
                return FLOW_ERROR;
            if (f->loop) {
                loop_ctx_t *lc = f->loop;
                pld_tuple_t *t = pld_v_tuple(&v);
                for (int i = 0; i < lc->nnext; i++)
                    pld_value_release(&lc->next[i]);
                lc->nnext = t->n < 16 ? t->n : 16;
                for (int i = 0; i < lc->nnext; i++)
                    pld_value_set(&lc->next[i], &t->items[i]);
                lc->have_next = 1;
            }
            pld_value_release(&v);
            return FLOW_NORMAL;
        }
        if (pld_eval(it, f, e, &v) != PLD_OK)
            return FLOW_ERROR;
        pld_value_release(&v);
        return FLOW_NORMAL;
    }
    case PLD_ST_ASSIGN:
        return exec_assign(it, f, s);
    case PLD_ST_RETURN: {
        pld_value_t v;
        if (s->u.ret.n == 1) {
            if (pld_eval(it, f, s->u.ret.vals[0], &v) != PLD_OK)
                return FLOW_ERROR;
        } else if (s->u.ret.n > 1) {
            pld_tuple_t *t = pld_tuple_new(s->u.ret.n);
            if (!t) {
                pld_rt_error(it, f, s->span, "out of memory");
                return FLOW_ERROR;
            }
            v = pld_v_obj(&t->hdr, PLD_DT_NONE);
            for (int i = 0; i < s->u.ret.n; i++)
                if (pld_eval(it, f, s->u.ret.vals[i], &t->items[i]) != PLD_OK) {
                    pld_value_release(&v);
                    return FLOW_ERROR;
                }
        } else {
            v = pld_v_none();
        }
        pld_value_release(&f->ret);
        f->ret = v;
        return FLOW_RETURN;
    }
    case PLD_ST_PASS:
        return FLOW_NORMAL;
    case PLD_ST_BREAK:
        return FLOW_BREAK;
    case PLD_ST_CONTINUE:
        return FLOW_CONTINUE;
    case PLD_ST_IF: {
        pld_value_t c;
        if (scalar_of(it, f, s->u.if_.cond, &c) != PLD_OK)
            return FLOW_ERROR;
        return exec_block(it, f, truthy(&c) ? &s->u.if_.then : &s->u.if_.els);
    }
    case PLD_ST_WHILE: {
        loop_ctx_t lc;
        memset(&lc, 0, sizeof lc);
        lc.outer = f->loop;
        f->loop = &lc;
        int flow = FLOW_NORMAL;
        for (;;) {
            pld_value_t c;
            if (scalar_of(it, f, s->u.while_.cond, &c) != PLD_OK) {
                flow = FLOW_ERROR;
                break;
            }
            if (!truthy(&c))
                break;
            flow = exec_block(it, f, &s->u.while_.body);
            if (flow == FLOW_BREAK) {
                flow = FLOW_NORMAL;
                break;
            }
            if (flow == FLOW_ERROR || flow == FLOW_RETURN)
                break;
            flow = FLOW_NORMAL;
        }
        f->loop = lc.outer;
        for (int i = 0; i < lc.nnext; i++)
            pld_value_release(&lc.next[i]);
        return flow;
    }
    case PLD_ST_FOR:
        return exec_for(it, f, s);
    case PLD_ST_WITH:
        return exec_with(it, f, s);
    }
    return FLOW_NORMAL;
}

static int exec_block(pld_interp_t *it, frame_t *f, const pld_block_t *b)
{
    for (int i = 0; i < b->n; i++) {
        int flow = exec_stmt(it, f, b->stmts[i]);
        if (flow != FLOW_NORMAL)
            return flow;
    }
    return FLOW_NORMAL;
}

/* ------------------------------------------------------------ calls */

static void frame_init(frame_t *f, frame_t *parent, const pld_func_t *fn, pld_value_t *slots, int ctx, pld_span_t sp)
{
    memset(f, 0, sizeof *f);
    f->parent = parent;
    f->fn = fn;
    f->slots = slots;
    f->nslots = fn ? fn->nslots : 0;
    f->ctx = ctx;
    f->call_span = sp;
    f->block_num = 1;
}

/* Binds argument values to the parameters of fn in a fresh frame, checking
 * tensor shapes against the declarations (binding dynamic dims on first use),
 * then runs the body. Takes no ownership of args. */
static pld_status_t run_function(pld_interp_t *it, frame_t *caller, const pld_func_t *fn, const pld_value_t *args,
                                 int ctx, pld_span_t call_span, pld_value_t *result)
{
    if (it->depth >= MAX_DEPTH)
        return pld_rt_error(it, caller, call_span, "call depth limit (%d) exceeded (recursion?)", MAX_DEPTH);
    pld_value_t *slots = pld_mem_calloc((size_t)(fn->nslots > 0 ? fn->nslots : 1), sizeof *slots);
    if (!slots)
        return pld_rt_error(it, caller, call_span, "out of memory");
    frame_t f;
    frame_init(&f, caller, fn, slots, ctx, call_span);
    if (caller) {
        f.block_idx = caller->block_idx;
        f.block_num = caller->block_num;
    }
    pld_status_t st = PLD_OK;
    for (int i = 0; i < fn->nparams && st == PLD_OK; i++) {
        const pld_param_t *pp = &fn->params[i];
        const pld_value_t *a = &args[i];
        const pld_type_t *pt = pp->type;
        pld_value_t v = *a;
        pld_value_retain(&v);
        if (pt && (pt->kind == PLD_TY_TENSOR || pt->kind == PLD_TY_DTENSOR) && a->kind == PLD_V_TENSOR) {
            pld_tensor_t *t = pld_v_tensor(a);
            int64_t want[PLD_MAX_RANK];
            int ok = pt->rank <= PLD_MAX_RANK;
            for (int d = 0; d < pt->rank && ok; d++) {
                const pld_dim_t *dd = &pt->shape[d];
                int64_t w;
                if (dd->kind == PLD_DIM_SYM && !pld_dyn_get(it, dd->sym, &w) &&
                    !(dd->expr && dd->expr->slot >= 0)) {
                    int known_const = 0;
                    for (int c = 0; c < it->p->nconsts; c++)
                        if (it->p->consts[c].name == dd->sym && !it->const_is_dyn[c])
                            known_const = 1;
                    if (!known_const && t->rank == pt->rank) {
                        pld_dyn_set(it, dd->sym, t->shape[d]);
                        want[d] = t->shape[d];
                        continue;
                    }
                }
                if (pld_eval_dim(it, caller, dd, &want[d], call_span) != PLD_OK)
                    st = PLD_E_RUNTIME, ok = 0;
            }
            if (ok) {
                int same = t->rank == pt->rank;
                int64_t n1 = 1, n2 = 1;
                for (int d = 0; d < pt->rank; d++)
                    n2 *= want[d];
                for (int d = 0; d < t->rank; d++)
                    n1 *= t->shape[d];
                for (int d = 0; same && d < pt->rank; d++)
                    same = want[d] == t->shape[d];
                if (!same) {
                    /* the same bytes viewed with the parameter's shape (a [64] window
                     * view passed as [1, 64]) */
                    int packed = 1;
                    pld_view_t kv;
                    pld_tensor_kview(t, &kv);
                    packed = pld_view_is_packed(&kv);
                    if (n1 == n2 && packed) {
                        pld_tensor_t *r = pld_tensor_view(t->buf, t->dt, pt->rank, want, t->offset);
                        if (!r)
                            st = pld_rt_error(it, caller, call_span, "out of memory");
                        else {
                            r->is_dist = t->is_dist;
                            r->winbuf = t->winbuf;
                            pld_value_release(&v);
                            v = pld_v_obj(&r->hdr, t->dt);
                        }
                    } else {
                        char got[128] = "[", exp[128] = "[";
                        for (int d = 0; d < t->rank; d++)
                            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", d ? ", " : "",
                                     (long long)t->shape[d]);
                        for (int d = 0; d < pt->rank; d++)
                            snprintf(exp + strlen(exp), sizeof exp - strlen(exp), "%s%lld", d ? ", " : "",
                                     (long long)want[d]);
                        st = pld_rt_error(it, caller, call_span,
                                          "argument '%s' of %s has shape %s], but the parameter is declared %s]",
                                          pp->name, fn->name, got, exp);
                    }
                }
            }
            if (st == PLD_OK && t->dt != pt->dtype)
                st = pld_rt_error(it, caller, call_span, "argument '%s' of %s has dtype %s, declared %s", pp->name,
                                  fn->name, pld_dtype_name(t->dt), pld_dtype_name(pt->dtype));
        } else if (pt && pt->kind == PLD_TY_SCALAR && pld_v_is_scalar(a)) {
            pld_value_t c = pld_v_convert(a, pt->dtype);
            pld_value_release(&v);
            v = c;
        }
        if (pp->slot >= 0 && pp->slot < f.nslots)
            f.slots[pp->slot] = v;
        else
            pld_value_release(&v);
    }
    if (st == PLD_OK) {
        it->depth++;
        int flow = exec_block(it, &f, &fn->body);
        it->depth--;
        if (flow == FLOW_ERROR)
            st = PLD_E_RUNTIME;
        else if (flow == FLOW_BREAK || flow == FLOW_CONTINUE)
            st = pld_rt_error(it, &f, fn->name_span, "'break'/'continue' escaped function %s", fn->name);
        /* an orchestration function ends when every task it issued completed
         * (deferred waiters and the scopes queued on them run here) */
        if (st == PLD_OK && ctx != PLD_CTX_KERNEL && it->ntasks > 0)
            st = pld_task_drain(it, &f);
    }
    if (st == PLD_OK && result) {
        *result = f.ret;
        f.ret = pld_v_none();
    }
    pld_value_release(&f.ret);
    for (int i = 0; i < f.nslots; i++)
        pld_value_release(&slots[i]);
    pld_mem_free(slots);
    return st;
}

/* The CommContext image of domain d on this rank (NULL when it has none). */
static const void *comm_ctx_of(const pld_interp_t *it, int64_t d)
{
    return d >= 0 && d < it->ndoms && it->doms[d].win ? pld_win_dom_ctx(it->doms[d].win) : NULL;
}

/* Builds the ABI description of launch arguments (for compiled backends). */
static void hw_arg_of(const pld_interp_t *it, const pld_value_t *v, pld_hw_arg_t *a)
{
    memset(a, 0, sizeof *a);
    if (v->kind == PLD_V_TENSOR) {
        pld_tensor_t *t = pld_v_tensor(v);
        pld_view_t kv;
        pld_tensor_kview(t, &kv);
        a->is_tensor = 1;
        a->tensor.data = kv.data;
        a->tensor.dt = t->dt;
        a->tensor.rank = t->rank;
        memcpy(a->tensor.shape, t->shape, sizeof t->shape);
        memcpy(a->tensor.strides, t->strides, sizeof t->strides);
        if (t->winbuf >= 0 && t->winbuf < it->nwins)
            a->tensor.comm_ctx = comm_ctx_of(it, it->wins[t->winbuf].dom);
    } else if (v->kind == PLD_V_CTX) {
        /* a CommCtx scalar is the address of the CommContext (kernel ABI) */
        a->bits = (uint64_t)(uintptr_t)comm_ctx_of(it, v->u.i);
        a->dt = PLD_DT_UINT64;
    } else if (v->kind == PLD_V_FLOAT) {
        double d = v->u.f;
        memcpy(&a->bits, &d, sizeof d);
        a->dt = v->dt;
    } else {
        a->bits = (uint64_t)v->u.i;
        a->dt = v->dt;
    }
}

static pld_status_t launch_kernel(pld_interp_t *it, frame_t *caller, const pld_func_t *fn, int fidx, pld_value_t *args,
                                  pld_span_t sp, int blocks, pld_value_t *result)
{
    pld_hw_arg_t hargs[64];
    int n = fn->nparams < 64 ? fn->nparams : 64;
    for (int i = 0; i < n; i++)
        hw_arg_of(it, &args[i], &hargs[i]);
    pld_sim_call_t call;
    memset(&call, 0, sizeof call);
    call.it = it;
    call.caller = caller;
    call.fn = fn;
    call.args = args;
    call.span = sp;
    call.blocks = blocks;
    pld_hw_launch_t l;
    memset(&l, 0, sizeof l);
    l.kernel = fn->name;
    l.func_index = fidx;
    l.nargs = n;
    l.args = hargs;
    l.block_num = blocks;
    l.host_state = &call;
    l.err = it->errbuf;
    l.errn = sizeof it->errbuf;
    it->errbuf[0] = '\0';
    int64_t saved;
    pld_task_begin(it, 0, &saved);
    pld_status_t st = pld_hw_launch(it->hw, &l);
    if (pld_task_end(it, caller, sp, fn->name, saved, st == PLD_OK) != PLD_OK && st == PLD_OK)
        st = PLD_E_RUNTIME;
    if (st != PLD_OK) {
        pld_value_release(&call.result);
        if (!it->failed)
            return pld_rt_error(it, caller, sp, "kernel backend '%s' failed to run %s: %s", pld_hw_name(it->hw),
                                fn->name, it->errbuf[0] ? it->errbuf : pld_status_name(st));
        return st;
    }
    *result = call.result;
    return PLD_OK;
}

/* The name_hint of a pl.at / pl.spmd item, for reports. */
static const char *name_hint(const pld_expr_t *item)
{
    const pld_expr_t *h = kwarg(item, "name_hint");
    return h && h->kind == PLD_EX_STR ? h->u.str.s : item->op == PLD_OPID_PL_SPMD ? "pl.spmd" : "pl.at scope";
}

/* Launches the body of pl.at(CORE_GROUP) statement s as task tid (0: the next
 * TaskId). */
static pld_status_t launch_scope(pld_interp_t *it, frame_t *f, const pld_stmt_t *s, int64_t tid, int *flow)
{
    pld_sim_call_t call;
    memset(&call, 0, sizeof call);
    call.it = it;
    call.caller = f;
    call.scope = &s->u.with.body;
    call.span = s->span;
    pld_hw_launch_t l;
    memset(&l, 0, sizeof l);
    l.kernel = "pl.at(CORE_GROUP) scope";
    l.func_index = -1;
    l.block_num = 1;
    l.host_state = &call;
    l.err = it->errbuf;
    l.errn = sizeof it->errbuf;
    it->errbuf[0] = '\0';
    int64_t saved;
    pld_task_begin(it, tid, &saved);
    pld_status_t st = pld_hw_launch(it->hw, &l);
    if (pld_task_end(it, f, s->span, name_hint(s->u.with.item), saved, st == PLD_OK) != PLD_OK)
        return PLD_E_RUNTIME;
    if (st != PLD_OK) {
        if (!it->failed)
            pld_rt_error(it, f, s->span, "kernel backend '%s' failed to run a pl.at scope: %s", pld_hw_name(it->hw),
                         it->errbuf[0] ? it->errbuf : pld_status_name(st));
        return PLD_E_RUNTIME;
    }
    *flow = call.flow;
    return PLD_OK;
}

static pld_status_t kernel_block(void *arg, int b, int n)
{
    pld_sim_call_t *c = arg;
    frame_t caller = *c->caller; /* carries the block position into the kernel frame */
    caller.block_idx = b;
    caller.block_num = n;
    pld_value_t r = pld_v_none();
    pld_status_t st = run_function(c->it, &caller, c->fn, c->args, PLD_CTX_KERNEL, c->span, &r);
    if (st == PLD_OK && b == 0) {
        pld_value_release(&c->result);
        c->result = r; /* block 0's return value is the task's result */
    } else {
        pld_value_release(&r);
    }
    return st;
}

pld_status_t pld_interp_run_kernel(pld_sim_call_t *c)
{
    pld_interp_t *it = c->it;
    if (c->fn && c->blocks > 1)
        return pld_npu_run_blocks(c->blocks, 0, kernel_block, c);
    if (c->fn)
        return run_function(it, c->caller, c->fn, c->args, PLD_CTX_KERNEL, c->span, &c->result);
    frame_t *f = c->caller;
    int saved = f->ctx, saved_scope = f->in_kernel_scope;
    f->ctx = PLD_CTX_KERNEL;
    f->in_kernel_scope = 1;
    c->flow = exec_block(it, f, c->scope);
    f->ctx = saved;
    f->in_kernel_scope = saved_scope;
    return c->flow == FLOW_ERROR ? PLD_E_RUNTIME : PLD_OK;
}

/* A kernel call / submit with deps=[...]: its results are needed at once, so
 * it waits in place for deps that are still incomplete (deferred tasks). */
static pld_status_t gate_deps(pld_interp_t *it, frame_t *f, const pld_expr_t *call)
{
    int64_t deps[64];
    int ndeps;
    if (eval_deps(it, f, call, deps, &ndeps) != PLD_OK || pld_task_progress(it) != PLD_OK)
        return PLD_E_RUNTIME;
    return ndeps > 0 ? pld_task_wait_deps(it, f, call->span, deps, ndeps) : PLD_OK;
}

static pld_status_t eval_dispatch(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    const pld_func_t *fn = it->p->funcs[e->aux];
    int callee_ctx = pld_check_func_ctx(fn);
    const pld_expr_t *device = NULL;
    pld_value_t args[64];
    int n = 0;
    for (int i = 0; i < e->u.call.nargs; i++) {
        const pld_arg_t *a = &e->u.call.args[i];
        if (a->kw) {
            if (strcmp(a->kw, "device") == 0)
                device = a->value;
            continue;
        }
        if (n >= 64) {
            for (int j = 0; j < n; j++)
                pld_value_release(&args[j]);
            return pld_rt_error(it, f, e->span, "too many arguments (limit 64)");
        }
        if (pld_eval(it, f, a->value, &args[n]) != PLD_OK) {
            for (int j = 0; j < n; j++)
                pld_value_release(&args[j]);
            return PLD_E_RUNTIME;
        }
        n++;
    }
    pld_status_t st = PLD_OK;
    if (f->ctx == PLD_CTX_HOST && callee_ctx == PLD_CTX_CHIP) {
        int64_t target;
        if (device) {
            st = pld_eval_i64(it, f, device, &target);
            if (st == PLD_OK && (target < 0 || target >= it->comm.nranks))
                st = pld_rt_error(it, f, device->span, "device=%lld is outside [0, %d): the run has %d rank%s",
                                  (long long)target, it->comm.nranks, it->comm.nranks, it->comm.nranks == 1 ? "" : "s");
        } else {
            target = it->rr_counter++ % it->comm.nranks;
        }
        if (st == PLD_OK) {
            if (target == it->comm.rank) {
                it->stats.dispatches++;
                st = run_function(it, f, fn, args, PLD_CTX_CHIP, e->span, out);
            } else {
                out->kind = PLD_V_UNAVAIL;
                out->u.i = target;
            }
        }
    } else if (callee_ctx == PLD_CTX_KERNEL && f->ctx != PLD_CTX_KERNEL) {
        st = gate_deps(it, f, e);
        if (st == PLD_OK)
            st = launch_kernel(it, f, fn, e->aux, args, e->span, 1, out);
    } else {
        st = run_function(it, f, fn, args, callee_ctx ? callee_ctx : f->ctx, e->span, out);
    }
    for (int j = 0; j < n; j++)
        pld_value_release(&args[j]);
    return st;
}

static pld_status_t eval_submit(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    const pld_func_t *fn = it->p->funcs[e->aux];
    pld_value_t args[64];
    int n = 0;
    for (int i = 1; i < e->u.call.nargs && n < 64; i++) {
        if (e->u.call.args[i].kw)
            continue;
        if (pld_eval(it, f, e->u.call.args[i].value, &args[n]) != PLD_OK) {
            for (int j = 0; j < n; j++)
                pld_value_release(&args[j]);
            return PLD_E_RUNTIME;
        }
        n++;
    }
    int64_t blocks = 1;
    for (int i = 1; i < e->u.call.nargs; i++)
        if (e->u.call.args[i].kw && strcmp(e->u.call.args[i].kw, "core_num") == 0 &&
            pld_eval_i64(it, f, e->u.call.args[i].value, &blocks) != PLD_OK) {
            for (int j = 0; j < n; j++)
                pld_value_release(&args[j]);
            return PLD_E_RUNTIME;
        }
    const pld_expr_t *ss = kwarg(e, "sync_start");
    int limit = pld_npu_profile_or_default(it->opts.platform)->aiv_cores;
    if (blocks < 1 || (ss && ss->kind == PLD_EX_BOOL && ss->u.bval && blocks > limit)) {
        for (int j = 0; j < n; j++)
            pld_value_release(&args[j]);
        return pld_rt_error(it, f, e->span,
                            blocks < 1 ? "core_num must be at least 1, found %lld"
                                       : "a sync-start launch of %lld blocks cannot be admitted: the platform has too few "
                                         "AIV cores",
                            (long long)blocks);
    }
    pld_value_t r = pld_v_none();
    pld_status_t st = gate_deps(it, f, e);
    if (st == PLD_OK)
        st = launch_kernel(it, f, fn, e->aux, args, e->span, (int)blocks, &r);
    for (int j = 0; j < n; j++)
        pld_value_release(&args[j]);
    if (st != PLD_OK)
        return st;
    /* (results..., TaskId) */
    int nr = r.kind == PLD_V_TUPLE ? pld_v_tuple(&r)->n : r.kind == PLD_V_NONE ? 0 : 1;
    pld_tuple_t *t = pld_tuple_new(nr + 1);
    if (!t) {
        pld_value_release(&r);
        return pld_rt_error(it, f, e->span, "out of memory");
    }
    for (int i = 0; i < nr; i++)
        pld_value_set(&t->items[i], r.kind == PLD_V_TUPLE ? &pld_v_tuple(&r)->items[i] : &r);
    t->items[nr] = pld_v_int(PLD_DT_TASK_ID, (int64_t)it->stats.tasks);
    pld_value_release(&r);
    *out = pld_v_obj(&t->hdr, PLD_DT_NONE);
    return PLD_OK;
}

static pld_status_t eval_call(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    const pld_expr_t *fn = e->u.call.fn;
    if (e->op < 0) {
        if (fn->kind == PLD_EX_ATTR && fn->u.attr.obj->kind == PLD_EX_NAME && strcmp(fn->u.attr.obj->u.name, "self") == 0 &&
            e->aux >= 0)
            return eval_dispatch(it, f, e, out);
        /* pl.FP32.get_byte() */
        if (fn->kind == PLD_EX_ATTR && strcmp(fn->u.attr.attr, "get_byte") == 0) {
            pld_dtype_t dt = pld_expr_dtype(it, fn->u.attr.obj);
            if (dt != PLD_DT_NONE) {
                *out = pld_v_int(PLD_DT_INDEX, pld_dtype_bytes(dt));
                return PLD_OK;
            }
        }
        if (e->type && e->type->kind == PLD_TY_UNKNOWN) {
            /* a unified op whose operand type was unknown statically: not runnable */
        }
        return pld_rt_error(it, f, e->span, "this call cannot be executed (it was not resolved to an op)");
    }
    switch (e->op) {
    case PLD_OPID_PL_SUBMIT:
    case PLD_OPID_PL_SPMD_SUBMIT:
        return eval_submit(it, f, e, out);
    default:
        return pld_exec_op(it, f, e, out);
    }
}

/* ------------------------------------------------------------ setup */

static void resolve_expr(pld_interp_t *it, pld_expr_t *e);

static void resolve_block(pld_interp_t *it, pld_block_t *b)
{
    for (int i = 0; i < b->n; i++) {
        pld_stmt_t *s = b->stmts[i];
        switch (s->kind) {
        case PLD_ST_EXPR: resolve_expr(it, s->u.expr); break;
        case PLD_ST_ASSIGN:
            resolve_expr(it, s->u.assign.target);
            resolve_expr(it, s->u.assign.value);
            break;
        case PLD_ST_RETURN:
            for (int j = 0; j < s->u.ret.n; j++)
                resolve_expr(it, s->u.ret.vals[j]);
            break;
        case PLD_ST_IF:
            resolve_expr(it, s->u.if_.cond);
            resolve_block(it, &s->u.if_.then);
            resolve_block(it, &s->u.if_.els);
            break;
        case PLD_ST_WHILE:
            resolve_expr(it, s->u.while_.cond);
            resolve_block(it, &s->u.while_.body);
            break;
        case PLD_ST_FOR:
            resolve_expr(it, s->u.for_.iter);
            resolve_block(it, &s->u.for_.body);
            break;
        case PLD_ST_WITH:
            resolve_expr(it, s->u.with.item);
            resolve_block(it, &s->u.with.body);
            break;
        default:
            break;
        }
    }
}

/* Pre-resolves module-constant names (e->aux = constant index): no string
 * lookups on the hot path. */
static void resolve_expr(pld_interp_t *it, pld_expr_t *e)
{
    if (!e)
        return;
    switch (e->kind) {
    case PLD_EX_NAME:
        if (e->slot < 0)
            for (int i = 0; i < it->p->nconsts; i++)
                if (it->p->consts[i].name == e->u.name)
                    e->aux = i;
        break;
    case PLD_EX_UNARY: resolve_expr(it, e->u.un.a); break;
    case PLD_EX_BINARY:
        resolve_expr(it, e->u.bin.a);
        resolve_expr(it, e->u.bin.b);
        break;
    case PLD_EX_CALL:
        for (int i = 0; i < e->u.call.nargs; i++)
            resolve_expr(it, e->u.call.args[i].value);
        break;
    case PLD_EX_SUBSCRIPT:
        resolve_expr(it, e->u.sub.obj);
        for (int i = 0; i < e->u.sub.n; i++)
            resolve_expr(it, e->u.sub.items[i]);
        break;
    case PLD_EX_SLICE:
        resolve_expr(it, e->u.slice.lo);
        resolve_expr(it, e->u.slice.hi);
        resolve_expr(it, e->u.slice.step);
        break;
    case PLD_EX_LIST:
    case PLD_EX_TUPLE:
        for (int i = 0; i < e->u.seq.n; i++)
            resolve_expr(it, e->u.seq.items[i]);
        break;
    default:
        break;
    }
}

static pld_status_t comm_self_gather(void *ctx, const void *send, size_t bytes, void *recv)
{
    (void)ctx;
    if (recv)
        memcpy(recv, send, bytes);
    return PLD_OK;
}

static pld_status_t comm_self_max(void *ctx, int64_t in, int64_t *out)
{
    (void)ctx;
    *out = in;
    return PLD_OK;
}

const pld_comm_t *pld_comm_self(void)
{
    static const pld_comm_t self = {NULL, 0, 1, comm_self_gather, comm_self_max};
    return &self;
}

pld_status_t pld_interp_create(pld_program_t *p, const pld_interp_opts_t *opts, const pld_comm_t *comm,
                               pld_interp_t **out, char *err, size_t errn)
{
    *out = NULL;
    pld_interp_t *it = pld_mem_calloc(1, sizeof *it);
    if (!it)
        return PLD_E_NOMEM;
    if (opts)
        it->opts = *opts;
    it->comm = comm ? *comm : *pld_comm_self();
    it->p = p;
    it->entry_index = -1;
    /* entry */
    int nhost = 0, norch = 0, host = -1, orch = -1;
    for (int i = 0; i < p->nfuncs; i++) {
        int c = pld_check_func_ctx(p->funcs[i]);
        if (opts && opts->entry && strcmp(p->funcs[i]->name, opts->entry) == 0)
            it->entry_index = i;
        if (c == PLD_CTX_HOST)
            nhost++, host = i;
        if (c == PLD_CTX_CHIP)
            norch++, orch = i;
    }
    if (opts && opts->entry && it->entry_index < 0) {
        snprintf(err, errn, "the program has no function '%s' (--entry)", opts->entry);
        pld_mem_free(it);
        return PLD_E_USAGE;
    }
    if (it->entry_index < 0) {
        if (nhost == 1)
            it->entry_index = host;
        else if (nhost == 0 && norch == 1)
            it->entry_index = orch;
        else {
            snprintf(err, errn, nhost > 1 ? "the program has %d HOST orchestrators; choose one with --entry NAME"
                                          : "the program has no HOST orchestrator and %d orchestration functions; "
                                            "choose one with --entry NAME",
                     nhost > 1 ? nhost : norch);
            pld_mem_free(it);
            return PLD_E_USAGE;
        }
    }
    it->entry = p->funcs[it->entry_index];
    if (pld_check_func_ctx(it->entry) == PLD_CTX_KERNEL || pld_check_func_ctx(it->entry) == 0) {
        snprintf(err, errn, "'%s' cannot be the entry: run a HOST orchestrator or a CHIP orchestration function",
                 it->entry->name);
        pld_mem_free(it);
        return PLD_E_USAGE;
    }
    it->args = pld_mem_calloc((size_t)(it->entry->nparams + 1), sizeof *it->args);
    it->bound = pld_mem_calloc((size_t)(it->entry->nparams + 1), sizeof *it->bound);
    it->consts = pld_mem_calloc((size_t)(p->nconsts + 1), sizeof *it->consts);
    it->const_is_dyn = pld_mem_calloc((size_t)(p->nconsts + 1), sizeof *it->const_is_dyn);
    if (!it->args || !it->bound || !it->consts || !it->const_is_dyn) {
        pld_interp_destroy(it);
        return PLD_E_NOMEM;
    }
    /* module constants */
    for (int i = 0; i < p->nconsts; i++) {
        const pld_expr_t *v = p->consts[i].value;
        if (v->kind == PLD_EX_CALL && v->u.call.fn->kind == PLD_EX_ATTR && strcmp(v->u.call.fn->u.attr.attr, "dynamic") == 0) {
            it->const_is_dyn[i] = 1;
            continue;
        }
        if (v->kind == PLD_EX_LIST || v->kind == PLD_EX_TUPLE || v->kind == PLD_EX_STR ||
            pld_expr_dtype(it, v) != PLD_DT_NONE)
            continue;
        frame_t cf;
        pld_span_t none = {0, 0, 0, 0};
        frame_init(&cf, NULL, NULL, NULL, PLD_CTX_HOST, none);
        it->quiet = 1;
        pld_status_t st = pld_eval(it, &cf, v, &it->consts[i]);
        it->quiet = 0;
        if (st != PLD_OK)
            it->consts[i] = pld_v_none();
        if (it->consts[i].kind == PLD_V_INT && it->consts[i].dt != PLD_DT_BOOL)
            it->consts[i].dt = PLD_DT_INDEX;
    }
    for (int i = 0; i < p->nfuncs; i++)
        if (!p->funcs[i]->is_raw)
            resolve_block(it, &p->funcs[i]->body);
    /* kernel backend */
    if (opts && opts->hw) {
        it->hw = opts->hw;
    } else {
        pld_hw_registry_t reg;
        pld_hw_registry_init(&reg);
        pld_hw_register(&reg, pld_interp_sim_backend());
        pld_status_t st = pld_hw_open(&reg, "sim", NULL, it->comm.rank, it->comm.nranks, &it->hw, err, errn);
        if (st != PLD_OK) {
            pld_interp_destroy(it);
            return st;
        }
        it->own_hw = 1;
    }
    *out = it;
    return PLD_OK;
}

void pld_interp_destroy(pld_interp_t *it)
{
    if (!it)
        return;
    if (it->args)
        for (int i = 0; i < it->entry->nparams; i++)
            pld_value_release(&it->args[i]);
    if (it->consts)
        for (int i = 0; i < it->p->nconsts; i++)
            pld_value_release(&it->consts[i]);
    pld_task_fini(it);
    pld_dist_fini(it);
    pld_mem_free(it->wins);
    if (it->own_hw)
        pld_hw_close(it->hw);
    pld_mem_free(it->args);
    pld_mem_free(it->bound);
    pld_mem_free(it->consts);
    pld_mem_free(it->const_is_dyn);
    pld_mem_free(it->dyn_names);
    pld_mem_free(it->dyn_vals);
    pld_mem_free(it);
}

int pld_interp_nparams(const pld_interp_t *it)
{
    return it->entry->nparams;
}

const pld_param_t *pld_interp_param(const pld_interp_t *it, int i)
{
    return &it->entry->params[i];
}

int pld_interp_param_index(const pld_interp_t *it, const char *name)
{
    for (int i = 0; i < it->entry->nparams; i++)
        if (strcmp(it->entry->params[i].name, name) == 0)
            return i;
    return -1;
}

int pld_interp_is_bound(const pld_interp_t *it, int i)
{
    return it->bound[i];
}

void pld_interp_param_desc(const pld_interp_t *it, int i, char *buf, size_t n)
{
    const pld_type_t *t = it->entry->params[i].type;
    pld_buf_t b;
    pld_buf_init(&b);
    if (!t || (t->kind != PLD_TY_TENSOR && t->kind != PLD_TY_DTENSOR)) {
        pld_type_print(t ? t : &pld_type_unknown, &b);
    } else {
        pld_buf_putc(&b, '[');
        for (int d = 0; d < t->rank; d++) {
            int64_t v;
            if (d)
                pld_buf_puts(&b, ", ");
            if (t->shape[d].kind == PLD_DIM_CONST)
                pld_buf_printf(&b, "%lld", (long long)t->shape[d].v);
            else if (t->shape[d].kind == PLD_DIM_SYM && pld_dyn_get((pld_interp_t *)it, t->shape[d].sym, &v))
                pld_buf_printf(&b, "%s=%lld", t->shape[d].sym, (long long)v);
            else
                pld_dim_print(&t->shape[d], &b);
        }
        pld_buf_printf(&b, "] %s", pld_dtype_name(t->dtype));
    }
    snprintf(buf, n, "%s", pld_buf_str(&b));
    pld_buf_fini(&b);
}

/* Evaluates a declared dim before the run (constants, bound dynamic dims,
 * pld.system.world_size() expressions) without recording errors. */
static int probe_dim(pld_interp_t *it, const pld_dim_t *d, int64_t *v)
{
    frame_t f;
    pld_span_t none = {0, 0, 0, 0};
    frame_init(&f, NULL, NULL, NULL, PLD_CTX_HOST, none);
    it->quiet = 1;
    pld_status_t st = pld_eval_dim(it, &f, d, v, none);
    it->quiet = 0;
    return st == PLD_OK;
}

/* Binds parameter i: copies `data` (mode 0), adopts it (mode 1: a pld_mem
 * allocation of exactly the array's bytes, owned by the tensor afterwards),
 * or fills the new tensor from the generator `spec` (mode 2). */
static pld_status_t bind_any(pld_interp_t *it, int i, pld_dtype_t dt, int rank, const int64_t *shape, const void *data,
                             int mode, const char *spec, char *err, size_t errn);

pld_status_t pld_interp_bind(pld_interp_t *it, int i, pld_dtype_t dt, int rank, const int64_t *shape,
                             const void *data, char *err, size_t errn)
{
    return bind_any(it, i, dt, rank, shape, data, 0, NULL, err, errn);
}

pld_status_t pld_interp_bind_adopt(pld_interp_t *it, int i, pld_dtype_t dt, int rank, const int64_t *shape,
                                   void *data, char *err, size_t errn)
{
    pld_status_t st = bind_any(it, i, dt, rank, shape, data, 1, NULL, err, errn);
    if (st != PLD_OK)
        pld_mem_free(data);
    return st;
}

static pld_status_t bind_any(pld_interp_t *it, int i, pld_dtype_t dt, int rank, const int64_t *shape, const void *data,
                             int mode, const char *spec, char *err, size_t errn)
{
    const pld_param_t *pp = &it->entry->params[i];
    const pld_type_t *t = pp->type;
    if (t && t->kind == PLD_TY_SCALAR) {
        if (rank != 0) {
            snprintf(err, errn, "parameter '%s' is a scalar (%s); the input has rank %d", pp->name,
                     pld_dtype_name(t->dtype), rank);
            return PLD_E_USAGE;
        }
        unsigned char one[8] = {0};
        if (mode == 2 && pld_npy_generate(spec, dt, one, 1, err, errn) != PLD_OK)
            return PLD_E_USAGE;
        const void *src = mode == 2 ? (const void *)one : data;
        pld_value_t v = pld_dtype_is_float(dt) ? pld_v_float(dt, pld_elem_get_f(src, dt, 0))
                                               : pld_v_int(dt, pld_elem_get_i(src, dt, 0));
        pld_value_release(&it->args[i]);
        it->args[i] = pld_v_convert(&v, t->dtype);
        it->bound[i] = 1;
        if (mode == 1)
            pld_mem_free((void *)data);
        return PLD_OK;
    }
    if (!t || (t->kind != PLD_TY_TENSOR && t->kind != PLD_TY_DTENSOR)) {
        snprintf(err, errn, "parameter '%s' is not a tensor and cannot be bound from a file", pp->name);
        return PLD_E_USAGE;
    }
    char desc[256];
    pld_buf_t got;
    pld_buf_init(&got);
    pld_buf_putc(&got, '[');
    for (int d = 0; d < rank; d++)
        pld_buf_printf(&got, "%s%lld", d ? ", " : "", (long long)shape[d]);
    pld_buf_printf(&got, "] %s", pld_dtype_name(dt));
    /* .npy has no INDEX type: INDEX is stored as int64 */
    if (dt == PLD_DT_INT64 && t->dtype == PLD_DT_INDEX)
        dt = PLD_DT_INDEX;
    int ok = rank == t->rank && dt == t->dtype;
    /* bind dynamic dims from this shape (tentatively) */
    const char *newdyn[PLD_MAX_RANK];
    int nnew = 0;
    for (int d = 0; ok && d < rank; d++) {
        const pld_dim_t *dd = &t->shape[d];
        int64_t v;
        if (dd->kind == PLD_DIM_CONST) {
            ok = dd->v == shape[d];
        } else if (dd->kind == PLD_DIM_SYM) {
            int is_const = 0;
            for (int c = 0; c < it->p->nconsts; c++)
                if (it->p->consts[c].name == dd->sym && !it->const_is_dyn[c] && it->consts[c].kind == PLD_V_INT) {
                    is_const = 1;
                    ok = it->consts[c].u.i == shape[d];
                }
            if (!is_const) {
                if (pld_dyn_get(it, dd->sym, &v))
                    ok = v == shape[d];
                else if (nnew < PLD_MAX_RANK && pld_dyn_set(it, dd->sym, shape[d]))
                    newdyn[nnew++] = dd->sym;
            }
        } else if (probe_dim(it, dd, &v)) {
            ok = v == shape[d];
        }
    }
    if (!ok) {
        /* undo tentative dynamic bindings */
        for (int k = 0; k < nnew; k++)
            for (int j = 0; j < it->ndyn; j++)
                if (it->dyn_names[j] == newdyn[k]) {
                    it->dyn_names[j] = it->dyn_names[it->ndyn - 1];
                    it->dyn_vals[j] = it->dyn_vals[it->ndyn - 1];
                    it->ndyn--;
                }
        pld_interp_param_desc(it, i, desc, sizeof desc);
        snprintf(err, errn, "input for '%s' has shape/dtype %s, but the parameter is declared %s", pp->name,
                 pld_buf_str(&got), desc);
        pld_buf_fini(&got);
        return PLD_E_USAGE;
    }
    pld_buf_fini(&got);
    pld_tensor_t *tt;
    if (mode == 1) {
        int64_t bytes = pld_value_bytes(dt, rank, shape);
        pld_buffer_t *b = bytes < 0 ? NULL : pld_buffer_wrap((void *)data, (size_t)bytes);
        if (!b)
            return PLD_E_NOMEM;
        tt = pld_tensor_view(b, dt, rank, shape, 0);
        if (tt)
            b->external = 0; /* adopted: the buffer frees it from now on */
        pld_buffer_release(b);
        if (!tt)
            return PLD_E_NOMEM; /* data stays the caller's (pld_interp_bind_adopt frees it) */
    } else {
        tt = pld_tensor_new(dt, rank, shape, 0);
        if (!tt)
            return PLD_E_NOMEM;
        int64_t count = 1;
        for (int d = 0; d < rank; d++)
            count *= shape[d];
        if (mode == 2) {
            pld_status_t gs = pld_npy_generate(spec, dt, tt->buf->data, count, err, errn);
            if (gs != PLD_OK) {
                pld_value_t tv = pld_v_obj(&tt->hdr, dt);
                pld_value_release(&tv);
                return gs;
            }
        } else {
            memcpy(tt->buf->data, data, tt->buf->bytes);
        }
    }
    pld_value_release(&it->args[i]);
    it->args[i] = pld_v_obj(&tt->hdr, dt);
    it->bound[i] = 1;
    return PLD_OK;
}

pld_status_t pld_interp_bind_generated(pld_interp_t *it, int i, const char *spec, char *err, size_t errn)
{
    const pld_param_t *pp = &it->entry->params[i];
    const pld_type_t *t = pp->type;
    if (!t || (t->kind != PLD_TY_TENSOR && t->kind != PLD_TY_DTENSOR && t->kind != PLD_TY_SCALAR)) {
        snprintf(err, errn, "parameter '%s' cannot be generated", pp->name);
        return PLD_E_USAGE;
    }
    int64_t shape[PLD_MAX_RANK];
    int rank = t->kind == PLD_TY_SCALAR ? 0 : t->rank;
    for (int d = 0; d < rank; d++) {
        const pld_dim_t *dd = &t->shape[d];
        if (dd->kind == PLD_DIM_SYM && !pld_dyn_get(it, dd->sym, &shape[d])) {
            int is_const = 0;
            for (int c = 0; c < it->p->nconsts; c++)
                if (it->p->consts[c].name == dd->sym && !it->const_is_dyn[c] && it->consts[c].kind == PLD_V_INT) {
                    shape[d] = it->consts[c].u.i;
                    is_const = 1;
                }
            if (!is_const)
                shape[d] = it->comm.nranks; /* dynamic dims take the rank count */
        } else if (dd->kind != PLD_DIM_SYM && !probe_dim(it, dd, &shape[d])) {
            snprintf(err, errn, "cannot generate '%s': dimension %d is not known before the run", pp->name, d);
            return PLD_E_USAGE;
        }
    }
    /* generated straight into the parameter's tensor: no second copy */
    return bind_any(it, i, t->dtype, rank, shape, NULL, 2, spec, err, errn);
}

/* ------------------------------------------------------------ run */

static pld_status_t assemble_outputs(pld_interp_t *it)
{
    pld_status_t st = PLD_OK;
    for (int i = 0; i < it->entry->nparams && st == PLD_OK; i++) {
        const pld_type_t *t = it->entry->params[i].type;
        if (!t || it->args[i].kind != PLD_V_TENSOR || (t->dir != PLD_DIR_OUT && t->dir != PLD_DIR_INOUT))
            continue;
        pld_tensor_t *tt = pld_v_tensor(&it->args[i]);
        pld_buffer_t *b = tt->buf;
        if (it->comm.nranks == 1 || !b->written)
            continue;
        size_t mbytes = (size_t)(b->track_n + 7) / 8;
        size_t one = mbytes + b->bytes;
        char *send = pld_mem_alloc(one);
        char *recv = it->comm.rank == 0 ? pld_mem_alloc(one * (size_t)it->comm.nranks) : NULL;
        if (!send || (it->comm.rank == 0 && !recv)) {
            pld_mem_free(send);
            pld_mem_free(recv);
            return PLD_E_NOMEM;
        }
        memcpy(send, b->written, mbytes);
        memcpy(send + mbytes, b->data, b->bytes);
        st = it->comm.gather(it->comm.ctx, send, one, recv);
        if (st == PLD_OK && recv) {
            int esz = pld_dtype_bytes(b->track_dt);
            int64_t conflicts = 0, first_conflict = -1;
            for (int r = 1; r < it->comm.nranks; r++) {
                const uint8_t *m = (const uint8_t *)recv + (size_t)r * one;
                const char *d = (const char *)m + mbytes;
                for (int64_t e = 0; e < b->track_n; e++) {
                    if (!(m[e / 8] & (1u << (e % 8))))
                        continue;
                    if ((b->written[e / 8] & (1u << (e % 8))) &&
                        memcmp((char *)b->data + e * esz, d + e * esz, (size_t)esz) != 0) {
                        if (first_conflict < 0)
                            first_conflict = e;
                        conflicts++;
                    }
                    memcpy((char *)b->data + e * esz, d + e * esz, (size_t)esz);
                    b->written[e / 8] |= (uint8_t)(1u << (e % 8));
                }
            }
            if (conflicts)
                pld_diag_add(&it->p->diags, PLD_SEV_WARNING, it->entry->params[i].span,
                             "output '%s': %lld element%s written by several ranks with different values (first at "
                             "flat index %lld); the highest rank's value was kept",
                             it->entry->params[i].name, (long long)conflicts, conflicts == 1 ? " was" : "s were",
                             (long long)first_conflict);
        }
        pld_mem_free(send);
        pld_mem_free(recv);
    }
    return st;
}

pld_status_t pld_interp_run(pld_interp_t *it)
{
    const pld_func_t *fn = it->entry;
    for (int i = 0; i < fn->nparams; i++) {
        if (!it->bound[i]) {
            char desc[256];
            pld_interp_param_desc(it, i, desc, sizeof desc);
            pld_diag_add(&it->p->diags, PLD_SEV_ERROR, fn->params[i].span, "entry parameter '%s' (%s) has no input",
                         fn->params[i].name, desc);
            return PLD_E_USAGE;
        }
        const pld_type_t *t = fn->params[i].type;
        if (it->args[i].kind == PLD_V_TENSOR && t && (t->dir == PLD_DIR_OUT || t->dir == PLD_DIR_INOUT)) {
            pld_tensor_t *tt = pld_v_tensor(&it->args[i]);
            if (!pld_buffer_track(tt->buf, tt->dt, (int64_t)(tt->buf->bytes / (size_t)pld_dtype_bytes(tt->dt))))
                return PLD_E_NOMEM;
        }
    }
    /* a dynamic leading dim bound from an input that differs from the rank
     * count: a dispatch loop over pld.world_size() does not cover every row */
    const char *warned = NULL;
    for (int i = 0; i < fn->nparams && it->comm.rank == 0; i++) {
        const pld_type_t *t = fn->params[i].type;
        int64_t v;
        if (t && (t->kind == PLD_TY_TENSOR || t->kind == PLD_TY_DTENSOR) && t->rank > 0 &&
            t->shape[0].kind == PLD_DIM_SYM && t->shape[0].sym != warned && pld_dyn_get(it, t->shape[0].sym, &v) &&
            v != it->comm.nranks && (warned = t->shape[0].sym) != NULL)
            pld_diag_add(&it->p->diags, PLD_SEV_WARNING, fn->params[i].span,
                         "'%s' has %s = %lld rows but the run has %d rank%s; a loop over pld.world_size() covers "
                         "rows 0..%d only",
                         fn->params[i].name, t->shape[0].sym, (long long)v, it->comm.nranks,
                         it->comm.nranks == 1 ? "" : "s", it->comm.nranks - 1);
    }
    pld_value_t result = pld_v_none();
    pld_span_t none = {0, 0, 0, 0};
    int ctx = pld_check_func_ctx(fn);
    pld_status_t st = PLD_OK;
    it->win = it->opts.win;
    if (ctx == PLD_CTX_HOST)
        st = pld_dist_setup(it, fn);
    int n = it->opts.dispatches > 1 ? it->opts.dispatches : 1;
    int clear = !it->opts.persistent_windows || it->opts.reset_windows != 0;
    for (int d = 0; d < n && st == PLD_OK; d++) {
        if (d > 0) {
            frame_t top;
            frame_init(&top, NULL, fn, NULL, ctx, none);
            st = pld_dist_between(it, &top, fn->name_span, d, clear);
            if (st != PLD_OK)
                break;
        }
        pld_value_release(&result);
        it->rr_counter = 0; /* every dispatch runs the HOST orchestrator afresh */
        st = run_function(it, NULL, fn, it->args, ctx, none, &result);
    }
    pld_value_release(&result);
    st = pld_dist_finish(it, st);
    if (st == PLD_OK && it->hw) {
        char err[256] = "";
        st = pld_hw_sync(it->hw, err, sizeof err);
        if (st != PLD_OK)
            pld_diag_add(&it->p->diags, PLD_SEV_ERROR, none, "kernel backend: %s", err);
    }
    /* every rank must agree before the collective output assembly */
    int64_t mine = st != PLD_OK, any = mine;
    if (it->comm.allreduce_max(it->comm.ctx, mine, &any) != PLD_OK)
        return PLD_E_MPI;
    if (any)
        return st != PLD_OK ? st : PLD_E_RUNTIME;
    return assemble_outputs(it);
}

pld_status_t pld_interp_result(const pld_interp_t *it, int i, pld_dtype_t *dt, int *rank, const int64_t **shape,
                               const void **data)
{
    const pld_value_t *v = &it->args[i];
    if (v->kind != PLD_V_TENSOR)
        return PLD_E_USAGE;
    pld_tensor_t *t = pld_v_tensor(v);
    *dt = t->dt;
    *rank = t->rank;
    *shape = t->shape;
    *data = (const char *)t->buf->data + t->offset * pld_dtype_bytes(t->dt);
    return PLD_OK;
}

int pld_interp_hang(const pld_interp_t *it)
{
    return it->must_abort ? 2 : it->hang ? 1 : 0;
}

void pld_interp_stats(const pld_interp_t *it, pld_interp_stats_t *st)
{
    *st = it->stats;
}
