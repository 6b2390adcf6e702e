/* pld_check_live.c - liveness of a function's local slots, for the on-chip
 * memory check of the interpreter (docs/interpreter.md, "On-chip memory").
 *
 * Statements are numbered in pre-order (pld_stmt_t.seq, from 0); a compound
 * statement's body follows it. pld_func_t.last_use[slot] is the number of the
 * last statement that reads the slot, or -1 when nothing does: after
 * statement k, a slot with first_def <= k < last_use holds a value a later
 * statement needs (first_def > k inside a loop body: what the slot holds is
 * the previous iteration's value, dead unless the slot is also defined
 * before the loop).
 * A read inside a loop of a slot first defined before that loop keeps the
 * slot alive to the end of the outermost such loop (the next iteration reads
 * it again). Parameters count as defined before the body. */
#include "pld_check_int.h"

#include <stdint.h>

#define LIVE_MAX_LOOPS 128 /* deeper loops (beyond the parser's nesting limit) are not tracked */
#define LIVE_MAX_SCOPES 16 /* nested kernel scopes whose captures are collected */

typedef struct live {
    int32_t seq;              /* next statement number */
    int32_t *first_def;       /* per slot: first defining statement, -1 = parameter / before the body */
    int32_t *last_use;
    int nslots;
    /* enclosing loops, outermost first: [start, end] statement numbers */
    int32_t loop_start[LIVE_MAX_LOOPS];
    int32_t loop_end[LIVE_MAX_LOOPS];
    int nloops;
    /* kernel scopes being walked (pass 1): their captures grow as reads are found */
    pld_stmt_t *scopes[LIVE_MAX_SCOPES];
    int nscopes;
    pld_arena_t *arena;
} live_t;

/* A read of `slot` inside the open kernel scopes: a capture of each scope
 * that starts after the slot's first definition. */
static void capture_slot(live_t *lv, int slot)
{
    for (int i = 0; i < lv->nscopes; i++) {
        pld_stmt_t *s = lv->scopes[i];
        if (lv->first_def[slot] >= s->seq)
            continue;
        int seen = 0;
        for (int k = 0; k < s->ncaptures && !seen; k++)
            seen = s->captures[k] == slot;
        if (!seen && s->captures)
            s->captures[s->ncaptures++] = slot;
    }
}

static void use_slot(live_t *lv, int slot, int32_t at)
{
    if (slot < 0 || slot >= lv->nslots)
        return;
    capture_slot(lv, slot);
    int32_t until = at;
    for (int i = 0; i < lv->nloops; i++)
        if (lv->first_def[slot] < lv->loop_start[i]) {
            until = lv->loop_end[i]; /* outermost loop the value crosses */
            break;
        }
    if (until > lv->last_use[slot])
        lv->last_use[slot] = until;
}

static void use_expr(live_t *lv, const pld_expr_t *e, int32_t at)
{
    if (!e)
        return;
    switch (e->kind) {
    case PLD_EX_NAME:
        use_slot(lv, e->slot, at);
        return;
    case PLD_EX_UNARY:
        use_expr(lv, e->u.un.a, at);
        return;
    case PLD_EX_BINARY:
        use_expr(lv, e->u.bin.a, at);
        use_expr(lv, e->u.bin.b, at);
        return;
    case PLD_EX_CALL:
        use_expr(lv, e->u.call.fn, at);
        for (int i = 0; i < e->u.call.nargs; i++)
            use_expr(lv, e->u.call.args[i].value, at);
        return;
    case PLD_EX_ATTR:
        use_expr(lv, e->u.attr.obj, at);
        return;
    case PLD_EX_SUBSCRIPT:
        use_expr(lv, e->u.sub.obj, at);
        for (int i = 0; i < e->u.sub.n; i++)
            use_expr(lv, e->u.sub.items[i], at);
        return;
    case PLD_EX_SLICE:
        use_expr(lv, e->u.slice.lo, at);
        use_expr(lv, e->u.slice.hi, at);
        use_expr(lv, e->u.slice.step, at);
        return;
    case PLD_EX_LIST:
    case PLD_EX_TUPLE:
        for (int i = 0; i < e->u.seq.n; i++)
            use_expr(lv, e->u.seq.items[i], at);
        return;
    case PLD_EX_DICT:
        for (int i = 0; i < e->u.dict.n; i++) {
            use_expr(lv, e->u.dict.keys[i], at);
            use_expr(lv, e->u.dict.vals[i], at);
        }
        return;
    case PLD_EX_COND:
        use_expr(lv, e->u.cond.a, at);
        use_expr(lv, e->u.cond.cond, at);
        use_expr(lv, e->u.cond.b, at);
        return;
    default:
        return;
    }
}

/* An assignment or loop target: names are defined; a subscript target reads
 * the object it writes into. */
static void def_target(live_t *lv, const pld_expr_t *t, int32_t at, int pass)
{
    if (!t)
        return;
    if (t->kind == PLD_EX_NAME) {
        if (pass == 0 && t->slot >= 0 && t->slot < lv->nslots && lv->first_def[t->slot] == INT32_MAX)
            lv->first_def[t->slot] = at;
    } else if (t->kind == PLD_EX_TUPLE || t->kind == PLD_EX_LIST) {
        for (int i = 0; i < t->u.seq.n; i++)
            def_target(lv, t->u.seq.items[i], at, pass);
    } else if (pass == 1) {
        use_expr(lv, t, at);
    }
}

/* Pass 0 numbers the statements and finds first definitions and loop
 * extents; pass 1 (same numbering) records the reads. */
static void walk_block(live_t *lv, const pld_block_t *b, int pass);

/* The body of a kernel scope s: in pass 1, reads inside it are its captures. */
static void walk_scope(live_t *lv, pld_stmt_t *s, const pld_block_t *body, int pass)
{
    if (pass == 1 && lv->nscopes < LIVE_MAX_SCOPES) {
        s->ncaptures = 0;
        s->captures = pld_arena_alloc(lv->arena, sizeof *s->captures * (size_t)lv->nslots);
        lv->scopes[lv->nscopes++] = s;
        walk_block(lv, body, pass);
        lv->nscopes--;
        return;
    }
    walk_block(lv, body, pass);
}

static void walk_stmt(live_t *lv, pld_stmt_t *s, int pass)
{
    int32_t at = lv->seq++;
    if (pass == 0)
        s->seq = at;
    switch (s->kind) {
    case PLD_ST_EXPR:
        if (pass == 1)
            use_expr(lv, s->u.expr, at);
        return;
    case PLD_ST_ASSIGN:
        if (pass == 1)
            use_expr(lv, s->u.assign.value, at);
        def_target(lv, s->u.assign.target, at, pass);
        return;
    case PLD_ST_RETURN:
        for (int i = 0; pass == 1 && i < s->u.ret.n; i++)
            use_expr(lv, s->u.ret.vals[i], at);
        return;
    case PLD_ST_IF:
        if (pass == 1)
            use_expr(lv, s->u.if_.cond, at);
        walk_block(lv, &s->u.if_.then, pass);
        walk_block(lv, &s->u.if_.els, pass);
        return;
    case PLD_ST_WHILE:
    case PLD_ST_FOR: {
        if (s->kind == PLD_ST_FOR && s->u.for_.iter && s->u.for_.iter->kind == PLD_EX_CALL &&
            (s->u.for_.iter->op == PLD_OPID_PL_SPMD || s->u.for_.iter->op == PLD_OPID_PL_SPLIT_AIV)) {
            if (pass == 1)
                use_expr(lv, s->u.for_.iter, at);
            walk_scope(lv, s, &s->u.for_.body, pass);
            if (pass == 0)
                s->seq_end = lv->seq - 1;
            return;
        }
        int loop = lv->nloops < LIVE_MAX_LOOPS ? lv->nloops : -1;
        if (pass == 1) {
            use_expr(lv, s->kind == PLD_ST_FOR ? s->u.for_.iter : s->u.while_.cond, at);
            if (loop >= 0) {
                lv->loop_start[loop] = at;
                lv->loop_end[loop] = s->seq_end;
                lv->nloops++;
            }
        }
        if (s->kind == PLD_ST_FOR)
            def_target(lv, s->u.for_.target, at, pass);
        walk_block(lv, s->kind == PLD_ST_FOR ? &s->u.for_.body : &s->u.while_.body, pass);
        if (pass == 0)
            s->seq_end = lv->seq - 1;
        else if (loop >= 0)
            lv->nloops--;
        return;
    }
    case PLD_ST_WITH:
        if (pass == 1)
            use_expr(lv, s->u.with.item, at);
        walk_scope(lv, s, &s->u.with.body, pass);
        return;
    default:
        return;
    }
}

static void walk_block(live_t *lv, const pld_block_t *b, int pass)
{
    for (int i = 0; i < b->n; i++)
        walk_stmt(lv, b->stmts[i], pass);
}

void pld_ck_liveness(pld_ck_t *ck, pld_func_t *f)
{
    f->last_use = NULL;
    f->first_def = NULL;
    if (f->nslots <= 0)
        return;
    live_t lv;
    lv.nslots = f->nslots;
    lv.nloops = 0;
    lv.nscopes = 0;
    lv.arena = &ck->p->arena;
    lv.first_def = pld_arena_alloc(&ck->p->arena, sizeof *lv.first_def * (size_t)f->nslots);
    lv.last_use = pld_arena_alloc(&ck->p->arena, sizeof *lv.last_use * (size_t)f->nslots);
    if (!lv.first_def || !lv.last_use)
        return; /* no liveness: the interpreter counts every bound tile */
    for (int i = 0; i < f->nslots; i++) {
        lv.first_def[i] = INT32_MAX;
        lv.last_use[i] = -1;
    }
    for (int i = 0; i < f->nparams; i++)
        if (f->params[i].slot >= 0 && f->params[i].slot < f->nslots)
            lv.first_def[f->params[i].slot] = -1;
    for (int pass = 0; pass < 2; pass++) {
        lv.seq = 0;
        walk_block(&lv, &f->body, pass);
    }
    f->last_use = lv.last_use;
    f->first_def = lv.first_def;
}
