/* pld_eval.c - the walker's evaluator: expressions, statements and control
 * flow (if, while, for over pl.range / pl.while_ with loop-carried values).
 * Calls, launches and task scopes are in pld_call.c. */
#include "pld_interp_int.h"
#include "pld_crt.h" /* pc_floordiv / pc_floormod: one definition for sim and compiled kernels */

#include <math.h>
#include <string.h>

static int truthy(const pld_value_t *v)
{
    if (v->kind == PLD_V_FLOAT)
        return v->u.f != 0.0;
    if (v->kind == PLD_V_INT)
        return v->u.i != 0;
    return v->kind != PLD_V_NONE;
}

/* ------------------------------------------------------------ expressions */

static pld_status_t eval_call(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out);

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
    /* module constant or dynamic dim */
    int ci = pld_const_index(it, e->u.name);
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
                                                                                               : pld_dtype_promote(a.dt, b.dt);
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
        r = op == PLD_OP_FLOORDIV ? pc_floordiv(a.u.i, b.u.i) : pc_floormod(a.u.i, b.u.i);
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

pld_status_t pld_eval(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    it->stats.ops++;
    if (f && f->ckernel)
        it->stats.kernel_ops++;
    *out = pld_v_none();
    if (pld_stack_check(it, f, e->span) != PLD_OK || pld_rt_step(it, f, e->span) != PLD_OK)
        return PLD_E_RUNTIME;
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
    case PLD_EX_COND: /* module constants only, folded by the checker (pld_const_value) */
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
                const pld_expr_t *v = pld_const_value(&it->p->consts[i]);
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
    if (v.kind == PLD_V_INT && n > 0) { /* one (flat) index */
        out[0] = v.u.i;
        *count = 1;
        return PLD_OK;
    }
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
            return pld_exec_check_ub(it, f, t->slot, t->span);
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
    if (it->race && v->kind == PLD_EX_SUBSCRIPT && val.kind == PLD_V_TENSOR && f->ctx == PLD_CTX_KERNEL)
        pld_race_local(it, f, v, pld_v_tensor(&val), NULL, NULL, PLD_HB_READ); /* x = win[...]: a slice read */
    const pld_type_t *tt = s->u.assign.target->type;
    if (s->u.assign.ann && val.kind == PLD_V_INT && tt && tt->kind == PLD_TY_SCALAR && pld_dtype_is_int(tt->dtype) && tt->dtype != val.dt)
        val = pld_v_int(tt->dtype, val.u.i); /* `b: pl.INT32 = <INDEX value>`: stored as an INT32 */
    st = assign_target(it, f, s->u.assign.target, &val);
    pld_value_release(&val);
    return st == PLD_OK ? FLOW_NORMAL : FLOW_ERROR;
}

const pld_expr_t *pld_walk_kwarg(const pld_expr_t *call, const char *kw)
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

static int exec_for(pld_interp_t *it, frame_t *f, const pld_stmt_t *s)
{
    const pld_expr_t *iter = s->u.for_.iter, *target = s->u.for_.target;
    int kind = iter->op;
    const pld_expr_t *loopvar = NULL, *carried = NULL;
    if (kind >= 0 && kind < PLD_OPID__COUNT)
        it->ops_seen[kind] = 1;
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
        return pld_walk_spmd(it, f, s, iter, &s->u.for_.body, loopvar, stop, 0);
    /* init values */
    const pld_expr_t *iv = pld_walk_kwarg(iter, "init_values");
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
static int exec_stmt(pld_interp_t *it, frame_t *f, const pld_stmt_t *s)
{
    pld_where_at(it, f, s->span);
    f->cur_seq = s->seq;
    if (pld_rt_step(it, f, s->span) != PLD_OK)
        return FLOW_ERROR;
    pld_rt_progress_at(it, s->span);
    switch (s->kind) {
    case PLD_ST_EXPR: {
        const pld_expr_t *e = s->u.expr;
        if (e->kind == PLD_EX_CALL && (e->op == PLD_OPID_PL_FUNC_ATTR || e->op == PLD_OPID_PL_STATIC_PRINT ||
                                       e->op == PLD_OPID_PL_STATIC_ASSERT ||
                                       (e->op == PLD_OPID_PL_DUMP_TAG && !it->opts.dump)))
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
        return pld_walk_with(it, f, s);
    }
    return FLOW_NORMAL;
}

static int exec_block(pld_interp_t *it, frame_t *f, const pld_block_t *b)
{
    if (b->n > 0 && pld_stack_check(it, f, b->stmts[0]->span) != PLD_OK)
        return FLOW_ERROR;
    for (int i = 0; i < b->n; i++) {
        int flow = exec_stmt(it, f, b->stmts[i]);
        if (flow != FLOW_NORMAL)
            return flow;
    }
    return FLOW_NORMAL;
}

static pld_status_t eval_call(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    const pld_expr_t *fn = e->u.call.fn;
    if (e->op >= 0 && e->op < PLD_OPID__COUNT)
        it->ops_seen[e->op] = 1;
    if (e->op < 0) {
        if (fn->kind == PLD_EX_ATTR && fn->u.attr.obj->kind == PLD_EX_NAME && strcmp(fn->u.attr.obj->u.name, "self") == 0 &&
            e->aux >= 0)
            return pld_walk_dispatch(it, f, e, out);
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
    if (pld_op_is_builtin_coll(e->op)) /* a HOST builtin dispatch of the lowered program */
        return pld_builtin_exec(it, f, e, out);
    switch (e->op) {
    case PLD_OPID_PL_SUBMIT:
    case PLD_OPID_PL_SPMD_SUBMIT:
        return pld_walk_submit(it, f, e, out);
    default:
        return pld_exec_op(it, f, e, out);
    }
}

/* ------------------------------------------------------------ for pld_call.c */

int pld_walk_block(pld_interp_t *it, frame_t *f, const pld_block_t *b)
{
    return exec_block(it, f, b);
}

pld_status_t pld_walk_assign(pld_interp_t *it, frame_t *f, const pld_expr_t *t, const pld_value_t *v)
{
    return assign_target(it, f, t, v);
}
