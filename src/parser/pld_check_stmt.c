/* pld_check_stmt.c - the checker's statements and function bodies: local name
 * slots, assignments (and the window-buffer assignment form), if/while/for/with
 * (loops, pl.at/pl.spmd scopes, yields), returns, and the HOST dispatch scan
 * that decides whether comm domains may be world subsets. */
#include "pld_check_int.h"
#include "pld_mem.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ names */

static int add_slot(pld_ck_t *ck, const char *name)
{
    int s = pld_ck_find_slot(ck, name);
    if (s >= 0)
        return s;
    if (ck->nslots == ck->capslots) {
        int cap = ck->capslots ? ck->capslots * 2 : 32;
        ck_slot_t *ns = pld_mem_realloc(ck->slots, (size_t)cap * sizeof *ns);
        if (!ns) {
            ck->oom = 1;
            return -1;
        }
        ck->slots = ns;
        ck->capslots = cap;
    }
    ck_slot_t *sl = &ck->slots[ck->nslots];
    memset(sl, 0, sizeof *sl);
    sl->name = name;
    sl->winbuf = -1;
    sl->slice_of = -1;
    return ck->nslots++;
}

/* Collects every name a statement list assigns (Python: function-wide locals). */
static void collect_target(pld_ck_t *ck, const pld_expr_t *t)
{
    if (t->kind == PLD_EX_NAME)
        add_slot(ck, t->u.name);
    else if (t->kind == PLD_EX_TUPLE || t->kind == PLD_EX_LIST)
        for (int i = 0; i < t->u.seq.n; i++)
            collect_target(ck, t->u.seq.items[i]);
}

static void collect_block(pld_ck_t *ck, const pld_block_t *b)
{
    for (int i = 0; i < b->n; i++) {
        const pld_stmt_t *s = b->stmts[i];
        switch (s->kind) {
        case PLD_ST_ASSIGN:
            collect_target(ck, s->u.assign.target);
            break;
        case PLD_ST_IF:
            collect_block(ck, &s->u.if_.then);
            collect_block(ck, &s->u.if_.els);
            break;
        case PLD_ST_WHILE:
            collect_block(ck, &s->u.while_.body);
            break;
        case PLD_ST_FOR:
            collect_target(ck, s->u.for_.target);
            collect_block(ck, &s->u.for_.body);
            break;
        case PLD_ST_WITH:
            if (s->u.with.as_name)
                add_slot(ck, s->u.with.as_name);
            collect_block(ck, &s->u.with.body);
            break;
        default:
            break;
        }
    }
}

/* ------------------------------------------------------------ statements */

static void check_block(pld_ck_t *ck, pld_block_t *b);

static int is_op_call(pld_ck_t *ck, const pld_expr_t *e, int id)
{
    char buf[256];
    if (!e || e->kind != PLD_EX_CALL || !pld_ast_dotted(e->u.call.fn, buf, sizeof buf))
        return 0;
    const char *h = pld_ck_ann_head(ck, e->u.call.fn, buf, sizeof buf);
    return h && pld_op_lookup(h) == id;
}

static void assign_name(pld_ck_t *ck, pld_expr_t *target, const pld_type_t *t)
{
    int s = pld_ck_find_slot(ck, target->u.name);
    if (s < 0)
        return;
    target->slot = s;
    target->type = t;
    ck_slot_t *sl = &ck->slots[s];
    if (sl->type && t && sl->type->kind != PLD_TY_UNKNOWN && t->kind != PLD_TY_UNKNOWN && t->kind != PLD_TY_NONE) {
        int a = sl->type->kind, b = t->kind;
        int tens_a = a == PLD_TY_TENSOR || a == PLD_TY_DTENSOR, tens_b = b == PLD_TY_TENSOR || b == PLD_TY_DTENSOR;
        if (a != b && !(tens_a && tens_b)) {
            pld_ck_error(ck, target->span, "cannot reassign '%s' (%s) with a value of a different kind (%s)",
                     target->u.name, pld_ck_tystr(ck, sl->type), pld_ck_tystr(ck, t));
        }
    }
    if (t && t->kind == PLD_TY_NONE) {
        pld_ck_error(ck, target->span, "the value assigned to '%s' has no result (the op only has side effects)", target->u.name);
        t = &pld_type_unknown;
    }
    if (!sl->type || sl->type->kind == PLD_TY_UNKNOWN)
        sl->type = t;
    sl->defined = 1;
}

/* the tuple type of a return of several values */
static const pld_type_t *return_tuple(pld_ck_t *ck, const pld_stmt_t *s)
{
    pld_type_t *t = pld_type_new(ck->p, PLD_TY_TUPLE);
    const pld_type_t **el = pld_arena_alloc(&ck->p->arena, sizeof *el * (size_t)(s->u.ret.n + 1));
    if (!t || !el) {
        ck->oom = 1;
        return &pld_type_unknown;
    }
    for (int i = 0; i < s->u.ret.n; i++)
        el[i] = s->u.ret.vals[i]->type ? s->u.ret.vals[i]->type : &pld_type_unknown;
    t->nelems = s->u.ret.n;
    t->elems = el;
    return t;
}

static void assign_targets(pld_ck_t *ck, pld_expr_t *target, const pld_type_t *t, pld_span_t value_span)
{
    if (target->kind == PLD_EX_NAME) {
        assign_name(ck, target, t);
        return;
    }
    if (target->kind == PLD_EX_TUPLE || target->kind == PLD_EX_LIST) {
        int n = target->u.seq.n;
        if (t->kind == PLD_TY_TUPLE && t->nelems != n) {
            pld_ck_error(ck, value_span, "cannot unpack %d value%s into %d name%s", t->nelems, t->nelems == 1 ? "" : "s",
                     n, n == 1 ? "" : "s");
            t = &pld_type_unknown;
        } else if (t->kind != PLD_TY_TUPLE && t->kind != PLD_TY_UNKNOWN) {
            pld_ck_error(ck, value_span, "cannot unpack %s into %d names", pld_ck_tystr(ck, t), n);
            t = &pld_type_unknown;
        }
        for (int i = 0; i < n; i++)
            assign_targets(ck, target->u.seq.items[i], t->kind == PLD_TY_TUPLE ? t->elems[i] : &pld_type_unknown, value_span);
        return;
    }
    if (target->kind == PLD_EX_SUBSCRIPT) {
        /* t[...] = v : tensor/tile window write or array element write */
        const pld_type_t *ot = pld_ck_expr(ck, target->u.sub.obj);
        int slices = 0;
        for (int i = 0; i < target->u.sub.n; i++) {
            pld_expr_t *it = target->u.sub.items[i];
            if (it->kind == PLD_EX_SLICE) {
                slices++;
                if (it->u.slice.lo)
                    pld_ck_expr(ck, it->u.slice.lo);
                if (it->u.slice.hi)
                    pld_ck_expr(ck, it->u.slice.hi);
            } else {
                pld_ck_expr(ck, it);
            }
        }
        if (ot->kind != PLD_TY_UNKNOWN && ot->kind != PLD_TY_TENSOR && ot->kind != PLD_TY_DTENSOR &&
            ot->kind != PLD_TY_TILE && ot->kind != PLD_TY_ARRAY)
            pld_ck_error(ck, target->span, "cannot assign into %s", pld_ck_tystr(ck, ot));
        else if (slices && ot->kind == PLD_TY_TILE) /* pld_exec_subscript_assign writes one element of a tile */
            pld_ck_error(ck, target->span, "assigning into a slice of a tile is not supported; use pl.tile.assemble");
        else if (slices && t->kind == PLD_TY_SCALAR)
            pld_ck_error(ck, value_span, "a scalar cannot be assigned to a slice; assign a tensor of the slice's shape "
                                         "(pl.tensor.full)");
        else if (pld_type_is_tensorlike(ot) && t->kind == PLD_TY_TENSOR && t->dtype != ot->dtype)
            pld_ck_error(ck, value_span, "cannot assemble a %s tensor into a %s tensor", pld_dtype_name(t->dtype),
                     pld_dtype_name(ot->dtype));
        if (target->u.sub.obj->kind == PLD_EX_NAME && pld_ck_find_slot(ck, target->u.sub.obj->u.name) < 0 &&
            ot->kind != PLD_TY_UNKNOWN)
            pld_ck_error(ck, target->span, "cannot assign into '%s'", target->u.sub.obj->u.name);
        return;
    }
    pld_ck_error(ck, target->span, "cannot assign to this expression");
}

/* `buf = pld.alloc_window_buffer(...)`: HOST only, single name, unique program-wide. */
static void window_alloc(pld_ck_t *ck, pld_stmt_t *s)
{
    pld_expr_t *v = s->u.assign.value;
    for (int i = 0; i < v->u.call.nargs; i++)
        if (v->u.call.args[i].kw && strcmp(v->u.call.args[i].kw, "name") == 0) {
            pld_ck_error(ck, v->u.call.args[i].kw_span, "the 'name' argument of pld.alloc_window_buffer cannot be passed "
                                                    "explicitly: the assigned variable names the buffer");
            return;
        }
    const pld_type_t *t = pld_ck_expr(ck, v);
    if (t->kind == PLD_TY_UNKNOWN && ck->ctx != PLD_CTX_HOST)
        return; /* level error already reported */
    if (s->u.assign.target->kind != PLD_EX_NAME) {
        pld_ck_error(ck, v->span, "pld.alloc_window_buffer must be assigned to a single variable name");
        return;
    }
    const char *name = s->u.assign.target->u.name;
    for (int i = 0; i < ck->nwinbufs; i++)
        if (ck->winbufs[i].name == name) {
            pld_diag_t *d = pld_ck_error(ck, s->u.assign.target->span, "window buffer name '%s' is already declared in this program", name);
            pld_diag_note(&ck->p->diags, d, ck->winbufs[i].span, "first declared here");
            assign_name(ck, s->u.assign.target, &pld_type_ptr);
            ck->slots[s->u.assign.target->slot].winbuf = i;
            return;
        }
    if (ck->nwinbufs == ck->capwinbufs) {
        int cap = ck->capwinbufs ? ck->capwinbufs * 2 : 16;
        ck_winbuf_t *nw = pld_mem_realloc(ck->winbufs, (size_t)cap * sizeof *nw);
        if (!nw) {
            ck->oom = 1;
            return;
        }
        ck->winbufs = nw;
        ck->capwinbufs = cap;
    }
    ck_winbuf_t *w = &ck->winbufs[ck->nwinbufs];
    memset(w, 0, sizeof *w);
    w->name = name;
    w->span = s->u.assign.target->span;
    w->in_loop = ck->loop_depth > 0;
    w->bytes = -1;
    /* static byte size: bytes form or shape + dtype form */
    if (v->u.call.nargs >= 1 && !v->u.call.args[0].kw) {
        const pld_expr_t *a0 = v->u.call.args[0].value;
        int64_t n;
        if (a0->kind == PLD_EX_LIST || a0->kind == PLD_EX_TUPLE) {
            int64_t shape[PLD_CK_MAX_RANK], prod = -1;
            int ok = a0->u.seq.n <= PLD_CK_MAX_RANK;
            for (int i = 0; i < a0->u.seq.n && ok; i++)
                ok = pld_ck_const_int(ck, a0->u.seq.items[i], &shape[i]);
            const pld_expr_t *dt = NULL;
            for (int i = 0; i < v->u.call.nargs; i++)
                if (v->u.call.args[i].kw && strcmp(v->u.call.args[i].kw, "dtype") == 0)
                    dt = v->u.call.args[i].value;
            pld_dtype_t d = dt ? pld_ck_ann_dtype(ck, dt) : PLD_DT_NONE;
            /* an overflowing or negative shape was reported by the op check */
            if (ok && d != PLD_DT_NONE &&
                pld_size_bytes(a0->u.seq.n, shape, pld_dtype_bytes(d), INT64_MAX, &prod) == PLD_SIZE_OK)
                w->bytes = prod;
        } else if (pld_ck_const_int(ck, a0, &n)) {
            w->bytes = n;
            if (n <= 0)
                pld_ck_error(ck, a0->span, "window buffer size must be positive, found %lld bytes", (long long)n);
        }
    }
    assign_name(ck, s->u.assign.target, &pld_type_ptr);
    ck->slots[s->u.assign.target->slot].winbuf = ck->nwinbufs;
    ck->nwinbufs++;
}

static void cover_text(uint64_t m, pld_buf_t *b)
{
    int first = 1;
    pld_buf_putc(b, '{');
    for (int r = 0; r < 64; r++)
        if (m >> r & 1) {
            pld_buf_printf(b, first ? "%d" : ", %d", r);
            first = 0;
        }
    pld_buf_putc(b, '}');
}

/* End of a HOST function: the comm-domain rules of its collectives, decided
 * over every dispatch of the function (they may follow the collective). */
static void host_collective_domains(pld_ck_t *ck)
{
    for (int i = 0; i < ck->nbarriers; i++) {
        const ck_barrier_t *c = &ck->barriers[i];
        const ck_winbuf_t *w0 = c->winbuf[0] >= 0 && c->winbuf[0] < ck->nwinbufs ? &ck->winbufs[c->winbuf[0]] : NULL;
        /* the devices LowerHostTensorCollectives dispatches to (pld_lower.c):
         * bit d = device d when every operand's buffer reaches a listed set
         * below 31, else -1 (every device: a loop over the world size) */
        uint64_t devs = 0;
        int listed = c->n > 0;
        for (int k = 0; k < c->n; k++) {
            const ck_winbuf_t *wk = c->winbuf[k] >= 0 && c->winbuf[k] < ck->nwinbufs ? &ck->winbufs[c->winbuf[k]] : NULL;
            listed &= wk && wk->dispatched && !wk->cover_unknown;
            if (listed)
                devs |= wk->cover;
        }
        c->call->aux = listed && devs && devs < ((uint64_t)1 << 31) ? (int32_t)devs : -1;
        /* §2.15: a barrier's signal buffer needs a device set (comm domain);
         * the barrier alone does not give it one */
        if (c->is_barrier && w0 && !w0->dispatched) {
            pld_ck_error(ck, c->span,
                         "pld.tensor.barrier signal buffer '%s' has no inferred comm-domain coverage: no dispatch "
                         "receives a view of it, so the barrier does not cover every rank; pass a view of it to the "
                         "dispatches (device=r) of the ranks it synchronises",
                         w0->name);
            continue;
        }
        for (int k = 1; w0 && k < c->n; k++) {
            const ck_winbuf_t *wk = c->winbuf[k] >= 0 && c->winbuf[k] < ck->nwinbufs ? &ck->winbufs[c->winbuf[k]] : NULL;
            if (!wk || !wk->dispatched || !w0->dispatched || wk->cover_unknown || w0->cover_unknown ||
                wk->cover == w0->cover)
                continue;
            pld_buf_t a, b;
            pld_buf_init(&a);
            pld_buf_init(&b);
            cover_text(w0->cover, &a);
            cover_text(wk->cover, &b);
            pld_ck_error(ck, c->span,
                         "%s %s and %s are in different comm domains: window buffer '%s' is dispatched to devices %s, "
                         "'%s' to devices %s; the window buffers of one collective must resolve to the same "
                         "comm-domain scope",
                         c->op, c->roles[0], c->roles[k], w0->name, pld_buf_str(&a), wk->name, pld_buf_str(&b));
            if (a.oom || b.oom)
                ck->oom = 1;
            pld_buf_fini(&a);
            pld_buf_fini(&b);
            break;
        }
    }
}

static int iter_kind(pld_ck_t *ck, const pld_expr_t *it)
{
    static const int kinds[] = {PLD_OPID_PL_RANGE, PLD_OPID_PL_PARALLEL, PLD_OPID_PL_UNROLL, PLD_OPID_PL_PIPELINE,
                                PLD_OPID_PL_WHILE_, PLD_OPID_PL_SPMD, PLD_OPID_PL_SPLIT_AIV};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (is_op_call(ck, it, kinds[i]))
            return kinds[i];
    return -1;
}

static const pld_expr_t *kwarg(const pld_expr_t *call, const char *kw)
{
    for (int i = 0; i < call->u.call.nargs; i++)
        if (call->u.call.args[i].kw && strcmp(call->u.call.args[i].kw, kw) == 0)
            return call->u.call.args[i].value;
    return NULL;
}

static int last_is_yield(pld_ck_t *ck, const pld_block_t *b)
{
    if (b->n == 0)
        return 0;
    const pld_stmt_t *s = b->stmts[b->n - 1];
    const pld_expr_t *v = s->kind == PLD_ST_ASSIGN ? s->u.assign.value : s->kind == PLD_ST_EXPR ? s->u.expr : NULL;
    return is_op_call(ck, v, PLD_OPID_PL_YIELD_);
}

static void check_for(pld_ck_t *ck, pld_stmt_t *s)
{
    pld_expr_t *it = s->u.for_.iter, *target = s->u.for_.target;
    int kind = iter_kind(ck, it);
    if (kind < 0) {
        char b[128];
        if (it->kind == PLD_EX_CALL && pld_ast_dotted(it->u.call.fn, b, sizeof b) && strcmp(b, "range") == 0)
            pld_ck_error(ck, it->span, "use pl.range(...) instead of Python's range(...)");
        else
            pld_ck_error(ck, it->span, "a for loop must iterate over pl.range, pl.parallel, pl.unroll, pl.pipeline, "
                                   "pl.while_, pl.spmd or pl.split_aiv");
        /* bind the targets anyway so the body does not report them as unassigned */
        if (target->kind == PLD_EX_NAME)
            assign_name(ck, target, pld_type_scalar(ck->p, PLD_DT_INDEX));
        else if (target->kind == PLD_EX_TUPLE)
            for (int i = 0; i < target->u.seq.n; i++)
                if (target->u.seq.items[i]->kind == PLD_EX_NAME)
                    assign_name(ck, target->u.seq.items[i], &pld_type_unknown);
        ck->loop_depth++;
        check_block(ck, &s->u.for_.body);
        ck->loop_depth--;
        return;
    }
    it->op = kind;
    const pld_op_info_t *info = pld_op_info((pld_op_id_t)kind);
    /* bind and check the iterator arguments */
    int npos = 0;
    for (int i = 0; i < it->u.call.nargs; i++) {
        pld_arg_t *a = &it->u.call.args[i];
        if (a->kw) {
            int idx = pld_op_param_index(info, a->kw);
            if (idx < 0) {
                pld_diag_t *d = pld_ck_error(ck, a->kw_span, "%s got an unexpected keyword argument '%s'", info->name, a->kw);
                const char *sg = pld_op_suggest_param(info, a->kw);
                if (sg)
                    pld_diag_note(&ck->p->diags, d, a->kw_span, "did you mean '%s'?", sg);
            }
            if (strcmp(a->kw, "init_values") == 0) {
                if (a->value->kind != PLD_EX_LIST && a->value->kind != PLD_EX_TUPLE)
                    pld_ck_error(ck, a->value->span, "init_values must be a tuple or list of values");
                else
                    for (int j = 0; j < a->value->u.seq.n; j++)
                        pld_ck_expr(ck, a->value->u.seq.items[j]);
            } else if (strcmp(a->kw, "predicate") == 0 && kind == PLD_OPID_PL_SPMD) {
                pld_ck_predicate(ck, a->value, "pl.spmd", ck->ctx);
            } else if (strcmp(a->kw, "attrs") != 0 && strcmp(a->kw, "optimizations") != 0 && strcmp(a->kw, "deps") != 0 &&
                       strcmp(a->kw, "mode") != 0) {
                pld_ck_expr(ck, a->value);
            }
            continue;
        }
        npos++;
        const pld_type_t *t = pld_ck_expr(ck, a->value);
        if (t->kind != PLD_TY_SCALAR && t->kind != PLD_TY_UNKNOWN)
            pld_ck_error(ck, a->value->span, "%s bounds must be scalars, found %s", info->name, pld_ck_tystr(ck, t));
        else if (t->kind == PLD_TY_SCALAR && pld_dtype_is_float(t->dtype))
            pld_ck_error(ck, a->value->span, "%s bounds must be integers, found %s", info->name, pld_dtype_name(t->dtype));
    }
    int maxpos = kind == PLD_OPID_PL_WHILE_ ? 0 : kind == PLD_OPID_PL_SPMD || kind == PLD_OPID_PL_SPLIT_AIV ? 1 : 3;
    if (npos > maxpos || (npos == 0 && kind != PLD_OPID_PL_WHILE_))
        pld_ck_error(ck, it->span, "%s takes %s", info->name,
                 kind == PLD_OPID_PL_WHILE_ ? "no positional arguments (only init_values=...)"
                 : maxpos == 1 ? "one positional argument" : "1 to 3 bounds: (stop), (start, stop) or (start, stop, step)");
    if (kind == PLD_OPID_PL_UNROLL) {
        for (int i = 0; i < it->u.call.nargs; i++) {
            int64_t v;
            if (!it->u.call.args[i].kw && !pld_ck_const_int(ck, it->u.call.args[i].value, &v))
                pld_ck_error(ck, it->u.call.args[i].value->span, "pl.unroll bounds must be compile-time integers");
        }
    }
    if (!it->u.call.nargs && kind != PLD_OPID_PL_WHILE_)
        (void)0;
    /* step must not be zero */
    if (npos == 3 && kind != PLD_OPID_PL_WHILE_) {
        int64_t st;
        if (pld_ck_const_int(ck, it->u.call.args[2].value, &st) && st == 0)
            pld_ck_error(ck, it->u.call.args[2].value->span, "%s step must not be zero", info->name);
    }
    const pld_expr_t *iv = kwarg(it, "init_values");
    int niv = iv && (iv->kind == PLD_EX_LIST || iv->kind == PLD_EX_TUPLE) ? iv->u.seq.n : 0;
    if (kind == PLD_OPID_PL_WHILE_ && niv == 0)
        pld_ck_error(ck, it->span, "pl.while_ needs init_values=(...) with at least one value");
    if (kind == PLD_OPID_PL_UNROLL && iv)
        pld_ck_error(ck, iv->span, "pl.unroll cannot carry init_values");
    /* targets: loop variable and iter-args */
    pld_expr_t *loopvar = NULL, *carried = NULL;
    if (kind == PLD_OPID_PL_WHILE_) {
        carried = target;
    } else if (target->kind == PLD_EX_NAME) {
        loopvar = target;
    } else if (target->kind == PLD_EX_TUPLE && target->u.seq.n == 2 && target->u.seq.items[0]->kind == PLD_EX_NAME &&
               target->u.seq.items[1]->kind == PLD_EX_TUPLE) {
        loopvar = target->u.seq.items[0];
        carried = target->u.seq.items[1];
    } else {
        pld_ck_error(ck, target->span, "loop target must be a name, or 'i, (a, b)' with init_values");
    }
    if (carried && !iv && kind != PLD_OPID_PL_WHILE_)
        pld_ck_error(ck, carried->span, "loop-carried names need init_values=(...) on %s", info->name);
    if (iv && !carried && kind != PLD_OPID_PL_WHILE_)
        pld_ck_error(ck, target->span, "%s has init_values but the loop target names no carried values: write 'for i, (x,) in ...'",
                 info->name);
    if (loopvar) {
        assign_name(ck, loopvar, pld_type_scalar(ck->p, PLD_DT_INDEX));
        int ls = pld_ck_find_slot(ck, loopvar->u.name);
        if (ls >= 0) {
            ck->slots[ls].has_cval = 0;
            ck->slots[ls].is_loopvar_world = npos == 1 && is_op_call(ck, it->u.call.args[0].value, PLD_OPID_PLD_WORLD_SIZE);
            /* constant range with step 1: the devices a device=<loopvar> dispatch reaches */
            int64_t b[3] = {0, 0, 1};
            int known = kind == PLD_OPID_PL_RANGE && npos >= 1 && npos <= 3;
            for (int i = 0, k = 0; known && i < it->u.call.nargs; i++)
                if (!it->u.call.args[i].kw)
                    known = pld_ck_const_int(ck, it->u.call.args[i].value, &b[k++]);
            if (known && npos == 1) {
                b[1] = b[0];
                b[0] = 0;
            }
            ck->slots[ls].has_range = known && b[2] == 1;
            ck->slots[ls].lo = b[0];
            ck->slots[ls].hi = b[1];
        }
    }
    if (carried) {
        int nc = carried->kind == PLD_EX_TUPLE ? carried->u.seq.n : 1;
        if (iv && nc != niv)
            pld_ck_error(ck, carried->span, "%d loop-carried name%s but init_values has %d value%s", nc, nc == 1 ? "" : "s",
                     niv, niv == 1 ? "" : "s");
        for (int i = 0; i < nc; i++) {
            pld_expr_t *nm = carried->kind == PLD_EX_TUPLE ? carried->u.seq.items[i] : carried;
            const pld_type_t *t = iv && i < niv && iv->u.seq.items[i]->type ? iv->u.seq.items[i]->type : &pld_type_unknown;
            if (nm->kind == PLD_EX_NAME)
                assign_name(ck, nm, t);
            else
                pld_ck_error(ck, nm->span, "loop-carried targets must be names");
        }
    }
    int saved_ctx = ck->ctx, saved_split = ck->split_mode;
    if (kind == PLD_OPID_PL_SPMD || kind == PLD_OPID_PL_SPLIT_AIV) {
        ck->ctx = PLD_CTX_KERNEL;
        ck->spmd_depth++;
    }
    if (kind == PLD_OPID_PL_SPLIT_AIV) {
        const pld_expr_t *m = kwarg(s->u.for_.iter, "mode");
        const char *mm = m && m->kind == PLD_EX_ATTR ? m->u.attr.attr : "";
        ck->split_mode = strcmp(mm, "UP_DOWN") == 0 ? 1 : strcmp(mm, "LEFT_RIGHT") == 0 ? 2 : 0;
    }
    ck->loop_depth++;
    pld_block_t *body = &s->u.for_.body;
    int start = 0;
    if (kind == PLD_OPID_PL_WHILE_) {
        const pld_stmt_t *first = body->n ? body->stmts[0] : NULL;
        if (!first || first->kind != PLD_ST_EXPR || !is_op_call(ck, first->u.expr, PLD_OPID_PL_COND))
            pld_ck_error(ck, first ? first->span : s->span, "the first statement of a pl.while_ body must be pl.cond(<condition>)");
        else {
            pld_expr_t *ce = first->u.expr;
            ce->op = PLD_OPID_PL_COND;
            if (ce->u.call.nargs != 1)
                pld_ck_error(ck, ce->span, "pl.cond takes one condition");
            else
                pld_ck_expr(ck, ce->u.call.args[0].value);
            start = 1;
        }
    }
    if (iv && !last_is_yield(ck, body) && body->n > 0 && kind != PLD_OPID_PL_WHILE_)
        (void)0; /* pre-SSA form: the carried names' last values flow on */
    pld_block_t rest = {body->stmts + start, body->n - start};
    check_block(ck, &rest);
    ck->loop_depth--;
    if (loopvar && pld_ck_find_slot(ck, loopvar->u.name) >= 0)
        ck->slots[pld_ck_find_slot(ck, loopvar->u.name)].has_range = 0; /* the range holds inside the loop */
    if (kind == PLD_OPID_PL_SPMD || kind == PLD_OPID_PL_SPLIT_AIV) {
        ck->ctx = saved_ctx;
        ck->spmd_depth--;
    }
    ck->split_mode = saved_split;
}

static void check_with(pld_ck_t *ck, pld_stmt_t *s)
{
    pld_expr_t *it = s->u.with.item;
    int saved = ck->ctx;
    int is_spmd = 0;
    if (is_op_call(ck, it, PLD_OPID_PL_AT)) {
        it->op = PLD_OPID_PL_AT;
        const pld_expr_t *lv = kwarg(it, "level");
        if (!lv && it->u.call.nargs > 0 && !it->u.call.args[0].kw)
            lv = it->u.call.args[0].value;
        const char *t = lv ? pld_ck_enum_tail(ck, lv, "Level", NULL) : NULL;
        pld_level_t level = t ? pld_level_from_name(t) : PLD_LV_NONE;
        if (!lv || level == PLD_LV_NONE)
            pld_ck_error(ck, it->span, "pl.at needs level=pl.Level.<CORE_GROUP|CHIP|HOST|...>");
        else if (level <= PLD_LV_CHIP_DIE)
            ck->ctx = PLD_CTX_KERNEL;
        else if (level == PLD_LV_CHIP)
            ck->ctx = PLD_CTX_CHIP;
        for (int i = 0; i < it->u.call.nargs; i++) {
            const pld_arg_t *a = &it->u.call.args[i];
            if (a->kw && strcmp(a->kw, "deps") == 0)
                pld_ck_deps(ck, a->value, saved);
            if (a->kw && pld_op_param_index(pld_op_info(PLD_OPID_PL_AT), a->kw) < 0) {
                pld_diag_t *d = pld_ck_error(ck, a->kw_span, "pl.at got an unexpected keyword argument '%s'", a->kw);
                const char *sg = pld_op_suggest_param(pld_op_info(PLD_OPID_PL_AT), a->kw);
                if (sg)
                    pld_diag_note(&ck->p->diags, d, a->kw_span, "did you mean '%s'?", sg);
            }
        }
    } else if (is_op_call(ck, it, PLD_OPID_PL_SPMD)) {
        it->op = PLD_OPID_PL_SPMD;
        is_spmd = 1;
        if (it->u.call.nargs < 1 || it->u.call.args[0].kw)
            pld_ck_error(ck, it->span, "pl.spmd needs the block count: pl.spmd(4)");
        else
            pld_ck_expr(ck, it->u.call.args[0].value);
        const pld_expr_t *dk = kwarg(it, "deps"), *pk = kwarg(it, "predicate");
        if (dk)
            pld_ck_deps(ck, (pld_expr_t *)dk, saved);
        if (pk)
            pld_ck_predicate(ck, (pld_expr_t *)pk, "pl.spmd", saved);
        ck->ctx = PLD_CTX_KERNEL;
    } else if (is_op_call(ck, it, PLD_OPID_PL_SCOPE) || is_op_call(ck, it, PLD_OPID_PL_MANUAL_SCOPE) ||
               is_op_call(ck, it, PLD_OPID_PL_CLUSTER)) {
        it->op = is_op_call(ck, it, PLD_OPID_PL_SCOPE) ? PLD_OPID_PL_SCOPE
                 : is_op_call(ck, it, PLD_OPID_PL_MANUAL_SCOPE) ? PLD_OPID_PL_MANUAL_SCOPE : PLD_OPID_PL_CLUSTER;
    } else {
        pld_ck_error(ck, it->span, "unsupported 'with' item: expected pl.at(...), pl.spmd(...), pl.scope(...), "
                               "pl.manual_scope() or pl.cluster()");
    }
    if (s->u.with.as_name) {
        int sl = pld_ck_find_slot(ck, s->u.with.as_name);
        if (sl >= 0) {
            ck->slots[sl].type = pld_type_scalar(ck->p, PLD_DT_TASK_ID);
            ck->slots[sl].defined = 1;
        }
    }
    if (is_spmd)
        ck->spmd_depth++;
    const pld_expr_t *saved_at = ck->at_scope, *saved_def = ck->deferred;
    if (it->op == PLD_OPID_PL_AT && ck->ctx == PLD_CTX_KERNEL && saved != PLD_CTX_KERNEL) {
        ck->at_scope = it;
        ck->deferred = NULL;
    }
    check_block(ck, &s->u.with.body);
    ck->at_scope = saved_at;
    ck->deferred = saved_def;
    if (is_spmd)
        ck->spmd_depth--;
    ck->ctx = saved;
}

static void check_yield_assign(pld_ck_t *ck, pld_stmt_t *s)
{
    pld_expr_t *v = s->u.assign.value;
    v->op = PLD_OPID_PL_YIELD_;
    if (ck->loop_depth == 0 && ck->if_depth == 0)
        pld_ck_error(ck, v->span, "pl.yield_ outside a loop or if body; use a plain assignment here");
    int n = v->u.call.nargs;
    pld_type_t *tt = pld_type_new(ck->p, PLD_TY_TUPLE);
    const pld_type_t **el = pld_arena_alloc(&ck->p->arena, sizeof *el * (size_t)(n + 1));
    if (!tt || !el) {
        ck->oom = 1;
        return;
    }
    for (int i = 0; i < n; i++) {
        if (v->u.call.args[i].kw) {
            pld_ck_error(ck, v->u.call.args[i].kw_span, "pl.yield_ takes positional values only");
            return;
        }
        el[i] = pld_ck_expr(ck, v->u.call.args[i].value);
    }
    tt->nelems = n;
    tt->elems = el;
    v->type = tt;
    pld_expr_t *target = s->u.assign.target;
    if (target->kind == PLD_EX_NAME) {
        if (n != 1) {
            pld_ck_error(ck, v->span, "pl.yield_ yields %d values but is assigned to one name", n);
            return;
        }
        assign_name(ck, target, el[0]);
        return;
    }
    assign_targets(ck, target, tt, v->span);
}

static void check_stmt(pld_ck_t *ck, pld_stmt_t *s)
{
    switch (s->kind) {
    case PLD_ST_EXPR: {
        pld_expr_t *e = s->u.expr;
        if (is_op_call(ck, e, PLD_OPID_PL_YIELD_)) {
            e->op = PLD_OPID_PL_YIELD_;
            if (ck->loop_depth == 0 && ck->if_depth == 0)
                pld_ck_error(ck, e->span, "pl.yield_ outside a loop or if body; use return to leave a function");
            for (int i = 0; i < e->u.call.nargs; i++)
                pld_ck_expr(ck, e->u.call.args[i].value);
            return;
        }
        if (is_op_call(ck, e, PLD_OPID_PL_COND)) {
            pld_ck_error(ck, e->span, "pl.cond must be the first statement of a pl.while_ loop body");
            return;
        }
        if (is_op_call(ck, e, PLD_OPID_PLD_ALLOC_WINDOW_BUFFER)) {
            pld_ck_error(ck, e->span, "pld.alloc_window_buffer must appear as the right-hand side of a simple assignment");
            return;
        }
        ck->direct = e;
        pld_ck_expr(ck, e);
        ck->direct = NULL;
        return;
    }
    case PLD_ST_ASSIGN: {
        pld_expr_t *v = s->u.assign.value;
        if (is_op_call(ck, v, PLD_OPID_PL_YIELD_)) {
            check_yield_assign(ck, s);
            return;
        }
        if (is_op_call(ck, v, PLD_OPID_PLD_ALLOC_WINDOW_BUFFER)) {
            window_alloc(ck, s);
            return;
        }
        ck->direct = v;
        const pld_type_t *t = pld_ck_expr(ck, v);
        ck->direct = NULL;
        if (s->u.assign.ann) {
            const pld_type_t *at = pld_ck_ann_type(ck, s->u.assign.ann, NULL, 0);
            int a = at->kind, b = t->kind;
            int tens_a = a == PLD_TY_TENSOR || a == PLD_TY_DTENSOR, tens_b = b == PLD_TY_TENSOR || b == PLD_TY_DTENSOR;
            if (a != PLD_TY_UNKNOWN && b != PLD_TY_UNKNOWN && b != PLD_TY_NONE && a != b && !(tens_a && tens_b))
                pld_ck_error(ck, s->u.assign.ann->span, "annotation %s does not match the value's type %s", pld_ck_tystr(ck, at), pld_ck_tystr(ck, t));
            else if (a == b && (a == PLD_TY_TILE || tens_a) && at->dtype != t->dtype && t->dtype != PLD_DT_NONE)
                pld_ck_error(ck, s->u.assign.ann->span, "annotation dtype %s does not match the value's dtype %s",
                         pld_dtype_name(at->dtype), pld_dtype_name(t->dtype));
            /* PyPTO's override: an integer annotation of an INDEX value (an untyped
             * literal, a loop index, arithmetic of them) types the name with the
             * annotation, and the value is converted (wrapped) as it is stored */
            if (at->kind == PLD_TY_SCALAR && t->kind == PLD_TY_SCALAR && t->dtype == PLD_DT_INDEX &&
                pld_dtype_is_int(at->dtype) && at->dtype != PLD_DT_INDEX && at->dtype != PLD_DT_BOOL)
                t = at;
            if (t->kind == PLD_TY_UNKNOWN) {
                t = at;
                /* a tpop without shape=/dtype=: the annotation declares what it pops */
                if (v->kind == PLD_EX_CALL && (v->op == PLD_OPID_SYS_TPOP_FROM_AIC || v->op == PLD_OPID_SYS_TPOP_FROM_AIV))
                    v->type = at;
            }
        }
        assign_targets(ck, s->u.assign.target, t, v->span);
        /* constant tracking and HOST window provenance */
        if (s->u.assign.target->kind == PLD_EX_NAME && s->u.assign.target->slot >= 0) {
            ck_slot_t *sl = &ck->slots[s->u.assign.target->slot];
            int64_t cv;
            sl->has_cval = ck->loop_depth == 0 && pld_ck_const_int(ck, v, &cv);
            sl->cval = sl->has_cval ? cv : 0;
            sl->mm_result = pld_ck_is_matmul(v);
            if (ck->ctx == PLD_CTX_HOST) {
                int w = pld_ck_window_of(ck, v);
                if (w >= 0)
                    sl->winbuf = w;
                sl->slice_of = pld_ck_window_slice_of(ck, v);
            }
        }
        return;
    }
    case PLD_ST_RETURN: {
        const pld_type_t *ret = NULL;
        for (int i = 0; i < s->u.ret.n; i++) {
            ck->direct = s->u.ret.vals[i];
            pld_ck_expr(ck, s->u.ret.vals[i]);
        }
        ck->direct = NULL;
        ck_prog_t *pr = ck_prog_of(ck);
        for (int i = 0; i < pr->nfns; i++)
            if (pr->fns[i].f == ck->fn) {
                ret = pr->fns[i].ret;
                /* no `->` annotation: the first `return <values>` gives the
                 * result type (PyPTO's _FirstReturnTypeCollector) */
                if (!ck->fn->ret_ann && ck->ctx == ck->fn_ctx && s->u.ret.n > 0 && ret == &pld_type_unknown)
                    pr->fns[i].ret = s->u.ret.n == 1 ? s->u.ret.vals[0]->type : return_tuple(ck, s);
            }
        if (ret && ck->fn->ret_ann && ck->ctx == ck->fn_ctx) {
            int want = ret->kind == PLD_TY_TUPLE ? ret->nelems : 1;
            if (s->u.ret.n != want && !(s->u.ret.n == 1 && ret->kind == PLD_TY_TUPLE))
                pld_ck_error(ck, s->span, "'%s' returns %d value%s but its annotation declares %d", ck->fn->name, s->u.ret.n,
                         s->u.ret.n == 1 ? "" : "s", want);
        }
        return;
    }
    case PLD_ST_PASS:
        return;
    case PLD_ST_BREAK:
    case PLD_ST_CONTINUE:
        if (ck->loop_depth == 0)
            pld_ck_error(ck, s->span, "'%s' outside a loop", s->kind == PLD_ST_BREAK ? "break" : "continue");
        return;
    case PLD_ST_IF: {
        const pld_type_t *t = pld_ck_expr(ck, s->u.if_.cond);
        if (t->kind != PLD_TY_SCALAR && t->kind != PLD_TY_UNKNOWN)
            pld_ck_error(ck, s->u.if_.cond->span, "an if condition must be a scalar, found %s", pld_ck_tystr(ck, t));
        ck->if_depth++;
        check_block(ck, &s->u.if_.then);
        check_block(ck, &s->u.if_.els);
        ck->if_depth--;
        return;
    }
    case PLD_ST_WHILE: {
        const pld_type_t *t = pld_ck_expr(ck, s->u.while_.cond);
        if (t->kind != PLD_TY_SCALAR && t->kind != PLD_TY_UNKNOWN)
            pld_ck_error(ck, s->u.while_.cond->span, "a while condition must be a scalar, found %s", pld_ck_tystr(ck, t));
        ck->loop_depth++;
        check_block(ck, &s->u.while_.body);
        ck->loop_depth--;
        return;
    }
    case PLD_ST_FOR:
        check_for(ck, s);
        return;
    case PLD_ST_WITH:
        check_with(ck, s);
        return;
    }
}

static void check_block(pld_ck_t *ck, pld_block_t *b)
{
    for (int i = 0; i < b->n && !ck->oom; i++) {
        pld_stmt_t *s = b->stmts[i];
        /* pl.func_attr({...}) only as the first statement(s) of a function body */
        if (s->kind == PLD_ST_EXPR && is_op_call(ck, s->u.expr, PLD_OPID_PL_FUNC_ATTR)) {
            s->u.expr->op = PLD_OPID_PL_FUNC_ATTR;
            if (b != &ck->fn->body || i > 0)
                pld_ck_error(ck, s->span, "pl.func_attr may only appear at the start of a function body");
            continue;
        }
        check_stmt(ck, s);
    }
}

void pld_ck_function(pld_ck_t *ck, ck_fn_info_t *fi)
{
    pld_func_t *f = fi->f;
    f->last_use = NULL;
    f->first_def = NULL;
    ck->fn = f;
    ck->nslots = 0;
    ck->loop_depth = 0;
    ck->spmd_depth = 0;
    ck->at_scope = NULL;
    ck->deferred = NULL;
    ck->ctx = ck->fn_ctx = fi->ctx;
    ck->if_depth = 0;
    ck->nbarriers = 0;
    ck->direct = NULL;
    if (fi->ctx == 0 || fi->bad_header)
        return; /* SubWorker (raw Python), or a function whose kind is unknown */
    for (int i = 0; i < f->nparams; i++) {
        int s = add_slot(ck, f->params[i].name);
        if (s < 0)
            return;
        f->params[i].slot = s;
        ck->slots[s].type = fi->ptypes[i];
        ck->slots[s].defined = 1;
        ck->slots[s].is_param = 1;
    }
    collect_block(ck, &f->body);
    check_block(ck, &f->body);
    host_collective_domains(ck);
    f->nslots = ck->nslots;
    f->slot_names = pld_arena_alloc(&ck->p->arena, sizeof *f->slot_names * (size_t)(ck->nslots + 1));
    for (int i = 0; f->slot_names && i < ck->nslots; i++)
        f->slot_names[i] = ck->slots[i].name;
    pld_ck_liveness(ck, f);
    ck->fn = NULL;
}

/* 1 when a HOST body dispatches with a device= that is not the loop variable
 * of `for r in pl.range(pld.world_size())`: comm domains may then be subsets
 * of the world, so rules that compare shapes with P do not apply statically.
 * `world_vars` holds the names of the enclosing world loops. */
static int subset_dispatch_expr(const pld_expr_t *e, const char *const *world_vars, int nw)
{
    if (!e || e->kind != PLD_EX_CALL)
        return 0;
    for (int i = 0; i < e->u.call.nargs; i++) {
        const pld_arg_t *a = &e->u.call.args[i];
        if (a->kw && strcmp(a->kw, "device") == 0) {
            int world = 0;
            for (int k = 0; k < nw; k++)
                world |= a->value->kind == PLD_EX_NAME && a->value->u.name == world_vars[k];
            if (!world)
                return 1;
        }
        if (subset_dispatch_expr(a->value, world_vars, nw))
            return 1;
    }
    return 0;
}

int pld_ck_subset_dispatch(const pld_block_t *b, const char **world_vars, int nw)
{
    const char *vars[32];
    for (int k = 0; k < nw && k < 32; k++)
        vars[k] = world_vars[k];
    for (int i = 0; i < b->n; i++) {
        const pld_stmt_t *s = b->stmts[i];
        switch (s->kind) {
        case PLD_ST_EXPR:
            if (subset_dispatch_expr(s->u.expr, vars, nw))
                return 1;
            break;
        case PLD_ST_ASSIGN:
            if (subset_dispatch_expr(s->u.assign.value, vars, nw))
                return 1;
            break;
        case PLD_ST_RETURN:
            for (int k = 0; k < s->u.ret.n; k++)
                if (subset_dispatch_expr(s->u.ret.vals[k], vars, nw))
                    return 1;
            break;
        case PLD_ST_IF:
            if (pld_ck_subset_dispatch(&s->u.if_.then, vars, nw) || pld_ck_subset_dispatch(&s->u.if_.els, vars, nw))
                return 1;
            break;
        case PLD_ST_WHILE:
            if (pld_ck_subset_dispatch(&s->u.while_.body, vars, nw))
                return 1;
            break;
        case PLD_ST_WITH:
            if (pld_ck_subset_dispatch(&s->u.with.body, vars, nw))
                return 1;
            break;
        case PLD_ST_FOR: {
            const pld_expr_t *it = s->u.for_.iter, *tg = s->u.for_.target;
            int n = nw;
            int npos = 0;
            const pld_expr_t *p0 = NULL;
            for (int k = 0; it && it->kind == PLD_EX_CALL && k < it->u.call.nargs; k++)
                if (!it->u.call.args[k].kw && npos++ == 0)
                    p0 = it->u.call.args[k].value;
            char b2[128];
            if (npos == 1 && tg && tg->kind == PLD_EX_NAME && p0 && p0->kind == PLD_EX_CALL &&
                pld_ast_dotted(p0->u.call.fn, b2, sizeof b2) && strstr(b2, "world_size") && n < 32)
                vars[n++] = tg->u.name;
            if (pld_ck_subset_dispatch(&s->u.for_.body, vars, n))
                return 1;
            break;
        }
        default:
            break;
        }
    }
    return 0;
}

