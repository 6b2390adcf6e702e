/* pld_cgen_stmt.c - statements and control flow in generated code
 * (pld_cgen_int.h): assignments to locals of each kind, moves between locals,
 * pl.yield_ and loop-carried names, for / while / if, return, expression
 * statements. */
#include "pld_cgen_int.h"
#include "pld_mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- statements */

static const char *slot_var(char *b, size_t n, int slot)
{
    snprintf(b, n, "s%d", slot);
    return b;
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
        int t = pld_cg_scalar(g, e, &fl, &dt);
        if (t < 0)
            return -1;
        if (fl != (sl->kind == SK_FLT))
            return pld_cg_fail(g, e->span, "'%s' holds integers and floats: the native backend needs one kind per name",
                               g->fn->slot_names[slot]);
        const pld_type_t *tt = g->target && g->target->slot == slot ? g->target->type : NULL;
        if (!fl && tt && tt->kind == PLD_TY_SCALAR && pld_dtype_is_int(tt->dtype) && tt->dtype != dt)
            t = pld_cg_wrap_int(g, t, tt->dtype); /* `b: pl.INT32 = <INDEX value>` */
        pld_cg_emit(g, "%s = t%d;", v, t);
        return 0;
    }
    case SK_CTX: {
        if (e->kind == PLD_EX_NAME && e->slot >= 0) {
            pld_cg_emit(g, "%s = s%d;", v, e->slot);
            return 0;
        }
        int t = pld_cg_exec(g, e, SK_CTX);
        if (t < 0)
            return -1;
        pld_cg_emit(g, "%s = t%d;", v, t);
        return 0;
    }
    case SK_TENSOR:
        return pld_cg_tensor_into(g, e, v);
    case SK_ARRAY:
    case SK_TOKEN:
        return pld_cg_sys_assign(g, slot, e);
    case SK_TILE: {
        if (e->kind == PLD_EX_NAME && e->slot >= 0 && g->slots[e->slot].kind == SK_TILE) {
            move_slot(g, slot, e->slot);
            return 0;
        }
        if (e->kind == PLD_EX_CALL && pld_cg_ew_binary(e->op, &(int){0}) < 0 && pld_cg_ew_unary(e->op) < 0 && reads_slot(e, slot)) {
            int64_t need = tile_bytes(e->type);
            if (need < 0)
                return pld_cg_fail(g, e->span, "%s: the result tile needs a static shape", opname(e));
            int t = pld_cg_temp_tile(g, (size_t)need);
            char tv[32];
            snprintf(tv, sizeof tv, "t%d", t);
            if (pld_cg_tile_into(g, e, tv, (size_t)need))
                return -1;
            pld_cg_copy_tile(g, v, tv, e->type->dtype);
            pld_cg_bound_tile(g, slot, e->type->mem, g->target ? g->target : e);
            return 0;
        }
        if (pld_cg_tile_into(g, e, v, sl->bytes))
            return -1;
        pld_cg_bound_tile(g, slot, e->kind == PLD_EX_NAME ? g->slots[e->slot].mem : e->type ? e->type->mem : PLD_MEM_VEC,
                          g->target ? g->target : e);
        return 0;
    }
    default:
        /* a value nothing reads (None): run it for its effects */
        if (e->kind == PLD_EX_CALL && pld_cgen_op_class(e->op, NULL) == PLD_CGEN_RUNTIME)
            return pld_cg_exec(g, e, SK_NONE) < 0 ? -1 : 0;
        return pld_cg_fail(g, e->span, "this assignment is not compiled by the native backend");
    }
}

/* copies local `from` into local `to` (same kind) */
static void move_slot(cg_t *g, int to, int from)
{
    if (to == from || pld_cg_sys_move(g, to, from) != -2)
        return;
    if (g->slots[to].kind == SK_TILE) {
        char a[32], b[32];
        snprintf(a, sizeof a, "s%d", to);
        snprintf(b, sizeof b, "s%d", from);
        /* a source no later statement reads: hand its storage over instead of copying */
        const int32_t *lu = g->fn->last_use;
        if (lu && lu[from] <= g->cur_seq && g->slots[to].bytes == g->slots[from].bytes) {
            pld_cg_emit(g, "{ void *p = s%d.data; s%d.data = s%d.data; s%d.data = p; }", to, to, from, from);
            pld_cg_copy_desc(g, a, b);
        } else {
            pld_cg_copy_tile(g, a, b, g->slots[to].dt);
        }
        g->slots[to].mems |= 1u << (g->slots[from].mem == PLD_MEM_NONE ? PLD_MEM_VEC : g->slots[from].mem);
        pld_cg_ub_site(g, to);
        pld_cg_emit(g, "if (ubc && rt->tile_bound(bk, %d, %d, %d, %d, pc_numel(s%d.shape, s%d.rank) * %d)) return pc_cold(), 1;",
                    g->target ? pld_cg_site(g, g->target) : -1, to, (int)g->cur_seq, (int)g->slots[from].mem, to, to,
                    esize(g->slots[to].dt));
    } else {
        pld_cg_emit(g, "s%d = s%d;", to, from);
    }
}

/* the values of a yield: each into a temp local of the target's kind, then
 * into the targets (names: tN items) and, for the loop's carried names,
 * into those */
static int gen_yield(cg_t *g, const pld_expr_t *call, const pld_expr_t *targets, const pld_expr_t *carried)
{
    int n = call->u.call.nargs;
    if (n > 16)
        return pld_cg_fail(g, call->span, "pl.yield_ of more than 16 values");
    const pld_expr_t *tg[16], *cr[16];
    for (int i = 0; i < n; i++) {
        tg[i] = targets ? (targets->kind == PLD_EX_TUPLE ? targets->u.seq.items[i] : targets) : NULL;
        cr[i] = carried ? (carried->kind == PLD_EX_TUPLE ? carried->u.seq.items[i] : carried) : NULL;
    }
    int nc = carried ? (carried->kind == PLD_EX_TUPLE ? carried->u.seq.n : 1) : 0;
    if (carried && nc != n)
        return pld_cg_fail(g, call->span, "%d loop-carried names but %d yielded values", nc, n);
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
                return pld_cg_fail(g, v->span, "a yield that reads a name an earlier yielded value replaces is not compiled "
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

int pld_cg_block(cg_t *g, const pld_block_t *b, const pld_expr_t *carried);

static int block_reads(const pld_block_t *b, int slot, const pld_stmt_t *skip);
const pld_type_t *pld_cg_def_type_stmt(const pld_stmt_t *s, int slot);

/* 1 when a statement of b other than skip assigns local `slot` */
static int def_type_in_skip(const pld_block_t *b, int slot, const pld_stmt_t *skip)
{
    for (int i = 0; i < b->n; i++)
        if (b->stmts[i] != skip && pld_cg_def_type_stmt(b->stmts[i], slot))
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

/* enters a loop body: carried names, a fresh continue label */
static int loop_enter(cg_t *g, const pld_stmt_t *s, const pld_expr_t *carried)
{
    if (g->depth >= 32)
        return pld_cg_fail(g, s->span, "loops nested too deeply");
    g->carried[g->depth] = carried;
    g->cont[g->depth] = tmp(g);
    g->cont_used[g->depth] = 0;
    g->depth++;
    return 0;
}

/* the back-edge counter of a loop about to start (declared before it): its
 * number, for loop_leave and loop_end */
static int loop_counter(cg_t *g)
{
    const int tk = tmp(g);
    pld_cg_emit(g, "uint32_t t%d = 0;", tk);
    return tk;
}

/* leaves a loop body: the end of every trip and the target of its
 * `continue`s, then the watchdog tick (every back edge passes it): counted,
 * and handed to the runtime every PC_TICK_EVERY trips (pc_rt.tick_n) */
static void loop_leave(cg_t *g, int site, int tk)
{
    g->depth--;
    if (g->cont_used[g->depth])
        pld_cg_emit(g, "c%d:;", g->cont[g->depth]);
    /* this exit is left an ordinary one (no pc_cold): marked cold too, it made
     * GCC 12 lay out the bench's matmul loop nest 1.5x slower (issue 44) */
    pld_cg_emit(g, "if (__builtin_expect(++t%d == PC_TICK_EVERY, 0)) { t%d = 0; if (rt->tick_n(bk, %d, PC_TICK_EVERY)) "
                   "return 1; }", tk, tk, site);
}

/* after a loop (its end or a break): the back edges not yet handed over */
static void loop_end(cg_t *g, int site, int tk)
{
    pld_cg_emit(g, "if (t%d && rt->tick_n(bk, %d, t%d)) return pc_cold(), 1;", tk, site, tk);
}

static int gen_for(cg_t *g, const pld_stmt_t *s)
{
    const pld_expr_t *it = s->u.for_.iter, *t = s->u.for_.target;
    /* pl.while_: the target is the carried names, the body's first statement
     * is pl.cond(test) (pld_cgen.c scan_stmt checks it), no loop variable */
    const int is_while = it->op == PLD_OPID_PL_WHILE_;
    const pld_expr_t *lv = is_while ? NULL : t, *carried = is_while ? t : NULL, *iv = NULL;
    if (!is_while && t->kind == PLD_EX_TUPLE && t->u.seq.n == 2) {
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
        if (npos < 3 && (b[npos] = pld_cg_scalar(g, it->u.call.args[i].value, &fl, &dt)) < 0)
            return -1;
        npos++;
    }
    int start = -1, stop = npos >= 1 ? b[0] : -1, step = -1;
    if (npos >= 2)
        start = b[0], stop = b[1];
    if (npos == 3)
        step = b[2];
    if (stop < 0 && !is_while)
        return pld_cg_fail(g, it->span, "a loop without bounds");
    const int sid = pld_cg_site(g, it);
    int vs = tmp(g), vst = tmp(g);
    if (!is_while) {
        if (start >= 0)
            pld_cg_emit(g, "int64_t t%d = t%d;", vs, start);
        else
            pld_cg_emit(g, "int64_t t%d = 0;", vs);
        if (step >= 0)
            pld_cg_emit(g, "int64_t t%d = t%d;", vst, step);
        else
            pld_cg_emit(g, "int64_t t%d = 1;", vst);
        pld_cg_emit(g, "if (t%d == 0) return pc_cold(), rt->fail(bk, %d, \"loop step is zero\");", vst, sid);
    }
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
                return pld_cg_fail(g, last->span, "the loop yields %d values for %d carried names", ny, nc);
            /* The final yield's targets are the loop's results: they equal the
             * carried values whenever the loop leaves (the last yield set both;
             * a loop of zero trips gives both the initial values). When nothing
             * else in the body reads or sets them, they are set once, after the
             * loop, instead of on every trip. */
            defer = 1;
            for (int i = 0; i < nc && defer; i++) {
                const pld_expr_t *y = ytargets->kind == PLD_EX_TUPLE ? ytargets->u.seq.items[i] : ytargets;
                if (y->kind != PLD_EX_NAME || y->slot < 0)
                    return pld_cg_fail(g, y->span, "a yield target must be a name");
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
    pld_block_t body = s->u.for_.body;
    const int tk = loop_counter(g);
    if (is_while) {
        /* the test with the current carried values before every trip */
        pld_cg_emit(g, "for (;;) {");
        g->ind++;
        int fl;
        pld_dtype_t dt;
        g->cur_seq = body.stmts[0]->seq;
        int c = pld_cg_scalar(g, body.stmts[0]->u.expr->u.call.args[0].value, &fl, &dt);
        if (c < 0)
            return -1;
        pld_cg_emit(g, "if (t%d == 0) break;", c);
        body.stmts++;
        body.n--;
    } else {
        pld_cg_emit(g, "for (int64_t i%d = t%d; t%d > 0 ? i%d < t%d : i%d > t%d; ) {", vs, vs, vst, vs, stop, vs, stop);
        g->ind++;
        pld_cg_emit(g, "s%d = i%d;", lv->slot, vs);
    }
    if (loop_enter(g, s, carried))
        return -1;
    const int saved_defer = g->defer_targets;
    g->defer_targets = defer;
    int rc = pld_cg_block(g, &body, carried);
    g->defer_targets = saved_defer;
    loop_leave(g, sid, tk);
    if (rc)
        return -1;
    if (!is_while)
        pld_cg_emit(g, "if (__builtin_add_overflow(i%d, t%d, &i%d)) break;", vs, vst, vs);
    g->ind--;
    pld_cg_emit(g, "}");
    loop_end(g, sid, tk);
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
    case PLD_ST_BREAK: pld_cg_emit(g, "break;"); return 0;
    case PLD_ST_CONTINUE:
        /* to the end of the trip: the increment and the tick still run */
        if (g->depth <= 0)
            return pld_cg_fail(g, s->span, "continue outside a loop");
        g->cont_used[g->depth - 1] = 1;
        pld_cg_emit(g, "goto c%d;", g->cont[g->depth - 1]);
        return 0;
    case PLD_ST_RETURN:
        if (s->u.ret.n > 0)
            return pld_cg_return(g, s);
        pld_cg_emit(g, "return 0;");
        return 0;
    case PLD_ST_ASSIGN: {
        const pld_expr_t *t = s->u.assign.target, *v = s->u.assign.value;
        if (is_yield(v))
            return gen_yield(g, v, final && carried && g->defer_targets ? NULL : t, final ? carried : NULL);
        if (t->kind == PLD_EX_SUBSCRIPT && pld_cg_sys_store(g, s) != -2)
            return g->failed ? -1 : 0;
        if (t->kind == PLD_EX_SUBSCRIPT) {
            const int te = pld_cg_tile_elem_assign(g, t, v);
            if (te != -2)
                return te;
            if (!t->u.sub.obj->type || !pld_type_is_tensorlike(t->u.sub.obj->type))
                return pld_cg_fail(g, t->span, "subscript assignment to a non-tensor is not compiled by the native backend");
            int r = pld_cg_slice_assign(g, t, v);
            if (r == -2)
                r = pld_cg_elem_assign(g, t, v);
            if (r != -2)
                return r;
            return pld_cg_fail(g, t->span, "this subscript assignment is not compiled by the native backend");
        }
        if (t->kind == PLD_EX_TUPLE && v->kind == PLD_EX_CALL && v->op == PLD_OPID_TILE_GATHER_COMPARE)
            return pld_cg_gather_compare(g, t, v);
        if (t->kind == PLD_EX_TUPLE && v->kind == PLD_EX_CALL && v->op == PLD_OPID_TENSOR_GATHER)
            return pld_cg_tensor_gather_compare(g, t, v);
        if (t->kind != PLD_EX_NAME)
            return pld_cg_fail(g, t->span, "the native backend compiles assignments to plain names only");
        if (v->kind == PLD_EX_CALL && v->op < 0)
            return pld_cg_sys_call(g, v, t);
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
        if (e->op == PLD_OPID_PL_DUMP_TAG)
            return pld_cg_dump_tag(g, e);
        if (c == PLD_CGEN_NO_CODE)
            return 0;
        if (e->op == PLD_OPID_TENSOR_WRITE || e->op == PLD_OPID_TILE_WRITE)
            return pld_cg_elem_write(g, e);
        if (e->op == PLD_OPID_TILE_STORE || e->op == PLD_OPID_TILE_MSCATTER) {
            int o = tmp(g);
            pld_cg_emit(g, "pc_tensor t%d;", o);
            char d[32];
            snprintf(d, sizeof d, "t%d", o);
            return pld_cg_tensor_into(g, e, d);
        }
        if (e->op == PLD_OPID_PLD_TILE_REMOTE_STORE)
            return pld_cg_remote_store(g, e);
        if (c == PLD_CGEN_LIBRARY && e->op >= PLD_OPID_TENSOR_CREATE && e->type &&
            (e->type->kind == PLD_TY_TENSOR || e->type->kind == PLD_TY_DTENSOR)) { /* pl.tensor.assemble(...) alone */
            int o = tmp(g);
            pld_cg_emit(g, "pc_tensor t%d; memset(&t%d, 0, sizeof t%d);", o, o, o);
            char d[32];
            snprintf(d, sizeof d, "t%d", o);
            return pld_cg_tensor_into(g, e, d);
        }
        if (c == PLD_CGEN_RUNTIME)
            return pld_cg_exec(g, e, SK_NONE) < 0 ? -1 : 0;
        const int sys = e->op >= 0 ? pld_cg_sys_stmt(g, e) : -2;
        if (sys != -2)
            return sys < 0 ? -1 : 0;
        if (e->op < 0)
            return pld_cg_sys_call(g, e, NULL);
        return pld_cg_fail(g, e->span, "%s is not compiled by the native backend (%s)", opname(e), note);
    }
    case PLD_ST_IF: {
        int fl;
        pld_dtype_t dt;
        int c = pld_cg_scalar(g, s->u.if_.cond, &fl, &dt);
        if (c < 0)
            return -1;
        pld_cg_emit(g, "if (t%d != 0) {", c);
        g->ind++;
        if (pld_cg_block(g, &s->u.if_.then, NULL))
            return -1;
        g->ind--;
        pld_cg_emit(g, "} else {");
        g->ind++;
        if (pld_cg_block(g, &s->u.if_.els, NULL))
            return -1;
        g->ind--;
        pld_cg_emit(g, "}");
        return 0;
    }
    case PLD_ST_WHILE: {
        const int tk = loop_counter(g), ws = pld_cg_site(g, s->u.while_.cond);
        pld_cg_emit(g, "for (;;) {");
        g->ind++;
        int fl;
        pld_dtype_t dt;
        int c = pld_cg_scalar(g, s->u.while_.cond, &fl, &dt);
        if (c < 0)
            return -1;
        pld_cg_emit(g, "if (t%d == 0) break;", c);
        if (loop_enter(g, s, NULL))
            return -1;
        int rc = pld_cg_block(g, &s->u.while_.body, NULL);
        loop_leave(g, ws, tk);
        if (rc)
            return -1;
        g->ind--;
        pld_cg_emit(g, "}");
        loop_end(g, ws, tk);
        return 0;
    }
    case PLD_ST_FOR:
        if (s->u.for_.iter->op == PLD_OPID_PL_SPLIT_AIV || s->u.for_.iter->op == PLD_OPID_PL_SPMD)
            return pld_cg_sys_lanes(g, s);
        pld_cg_emit(g, "{");
        g->ind++;
        if (gen_for(g, s))
            return -1;
        g->ind--;
        pld_cg_emit(g, "}");
        return 0;
    case PLD_ST_WITH:
        return pld_cg_sys_with(g, s);
    }
    return 0;
}

int pld_cg_block(cg_t *g, const pld_block_t *b, const pld_expr_t *carried)
{
    for (int i = 0; i < b->n; i++) {
        const int grp = pld_cg_sys_group(g, b, i); /* a Group body's member calls */
        if (grp < 0 || g->failed)
            return -1;
        if (grp > 0) {
            i += grp - 1;
            continue;
        }
        const int fused = pld_cg_fuse(g, b, i); /* a chain of element-wise statements: one loop */
        if (fused < 0 || g->failed)
            return -1;
        if (fused > 0) {
            i += fused - 1;
            continue;
        }
        if (gen_stmt(g, b->stmts[i], i == b->n - 1, carried))
            return -1;
    }
    return 0;
}
