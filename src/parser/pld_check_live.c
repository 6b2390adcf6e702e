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
 * it again). Parameters count as defined before the body.
 *
 * Also pld_func_t.autol0: the matmuls PyPTO's AutoTileMatmulL0 computes one
 * L0 sub-tile at a time (below). */
#include "pld_check_int.h"

#include <stdint.h>
#include <string.h>

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

/* ------------------------------------------------------------ AutoTileMatmulL0
 *
 * Which slots hold the result of a plain matmul that PyPTO's
 * AutoTileMatmulL0 pass computes one [m, n] sub-tile at a time when the
 * result does not fit L0C (docs/interpreter.md, "On-chip memory"): the
 * slot's only definition is pl.tile.matmul of two static 2-D Mat tiles with
 * K a multiple of 16, and its result is either stored once and read by
 * nothing else, or cast once (FP32 -> BF16/FP16, mode 'rint', the cast
 * assigned to a slot) and that slot only feeds matmuls (lhs / rhs). */

typedef struct a0 {
    int ndefs;
    const pld_expr_t *def;    /* the value of its (last) NAME assignment */
    int n_store, n_mm, n_cast, n_other;
    const pld_expr_t *cast;   /* the cast that reads it, assigned to cast_to */
    int cast_to;
} a0_t;

/* The index of v among the first n bound parameters of call c, or -1. */
static int bound_at(const pld_expr_t *c, const pld_expr_t *v, int n)
{
    for (int j = 0; c->bound && j < n; j++)
        if (c->bound[j] == v)
            return j;
    return -1;
}

static void a0_expr(a0_t *t, int nslots, const pld_expr_t *e, const pld_expr_t *parent);

static void a0_use(a0_t *t, int nslots, const pld_expr_t *e, const pld_expr_t *p)
{
    if (e->slot < 0 || e->slot >= nslots)
        return;
    a0_t *u = &t[e->slot];
    int k = p ? bound_at(p, e, 3) : -1;
    int op = p ? p->op : -1;
    if (op == PLD_OPID_TILE_STORE && k == 0)
        u->n_store++;
    else if ((op == PLD_OPID_TILE_MATMUL && (k == 0 || k == 1)) ||
             (op == PLD_OPID_TILE_MATMUL_ACC && (k == 1 || k == 2)) ||
             (op == PLD_OPID_TILE_MATMUL_BIAS && (k == 0 || k == 1)))
        u->n_mm++;
    else if (op == PLD_OPID_TILE_CAST && k == 0)
        u->n_cast++;
    else
        u->n_other++;
}

static void a0_expr(a0_t *t, int nslots, const pld_expr_t *e, const pld_expr_t *parent)
{
    if (!e)
        return;
    switch (e->kind) {
    case PLD_EX_NAME:
        a0_use(t, nslots, e, parent);
        return;
    case PLD_EX_UNARY:
        a0_expr(t, nslots, e->u.un.a, NULL);
        return;
    case PLD_EX_BINARY:
        a0_expr(t, nslots, e->u.bin.a, NULL);
        a0_expr(t, nslots, e->u.bin.b, NULL);
        return;
    case PLD_EX_CALL:
        a0_expr(t, nslots, e->u.call.fn, NULL);
        for (int i = 0; i < e->u.call.nargs; i++)
            a0_expr(t, nslots, e->u.call.args[i].value, e->op >= 0 ? e : NULL);
        return;
    case PLD_EX_ATTR:
        a0_expr(t, nslots, e->u.attr.obj, NULL);
        return;
    case PLD_EX_SUBSCRIPT:
        a0_expr(t, nslots, e->u.sub.obj, NULL);
        for (int i = 0; i < e->u.sub.n; i++)
            a0_expr(t, nslots, e->u.sub.items[i], NULL);
        return;
    case PLD_EX_SLICE:
        a0_expr(t, nslots, e->u.slice.lo, NULL);
        a0_expr(t, nslots, e->u.slice.hi, NULL);
        a0_expr(t, nslots, e->u.slice.step, NULL);
        return;
    case PLD_EX_LIST:
    case PLD_EX_TUPLE:
        for (int i = 0; i < e->u.seq.n; i++)
            a0_expr(t, nslots, e->u.seq.items[i], NULL);
        return;
    case PLD_EX_DICT:
        for (int i = 0; i < e->u.dict.n; i++) {
            a0_expr(t, nslots, e->u.dict.keys[i], NULL);
            a0_expr(t, nslots, e->u.dict.vals[i], NULL);
        }
        return;
    case PLD_EX_COND:
        a0_expr(t, nslots, e->u.cond.a, NULL);
        a0_expr(t, nslots, e->u.cond.cond, NULL);
        a0_expr(t, nslots, e->u.cond.b, NULL);
        return;
    default:
        return;
    }
}

/* Definitions of a target: names count; anything else is read. */
static void a0_target(a0_t *t, int nslots, const pld_expr_t *e, const pld_expr_t *value)
{
    if (!e)
        return;
    if (e->kind == PLD_EX_NAME) {
        if (e->slot >= 0 && e->slot < nslots) {
            t[e->slot].ndefs++;
            t[e->slot].def = value;
        }
    } else if (e->kind == PLD_EX_TUPLE || e->kind == PLD_EX_LIST) {
        for (int i = 0; i < e->u.seq.n; i++)
            a0_target(t, nslots, e->u.seq.items[i], NULL);
    } else {
        a0_expr(t, nslots, e, NULL);
    }
}

static void a0_block(a0_t *t, int nslots, const pld_block_t *b)
{
    for (int i = 0; i < b->n; i++) {
        const pld_stmt_t *s = b->stmts[i];
        switch (s->kind) {
        case PLD_ST_EXPR:
            a0_expr(t, nslots, s->u.expr, NULL);
            break;
        case PLD_ST_ASSIGN: {
            const pld_expr_t *v = s->u.assign.value, *tg = s->u.assign.target;
            a0_expr(t, nslots, v, NULL);
            a0_target(t, nslots, tg, v);
            if (v && v->kind == PLD_EX_CALL && v->op == PLD_OPID_TILE_CAST && v->bound && v->bound[0] &&
                v->bound[0]->kind == PLD_EX_NAME && v->bound[0]->slot >= 0 && v->bound[0]->slot < nslots &&
                tg && tg->kind == PLD_EX_NAME) {
                t[v->bound[0]->slot].cast = v;
                t[v->bound[0]->slot].cast_to = tg->slot;
            }
            break;
        }
        case PLD_ST_RETURN:
            for (int k = 0; k < s->u.ret.n; k++)
                a0_expr(t, nslots, s->u.ret.vals[k], NULL);
            break;
        case PLD_ST_IF:
            a0_expr(t, nslots, s->u.if_.cond, NULL);
            a0_block(t, nslots, &s->u.if_.then);
            a0_block(t, nslots, &s->u.if_.els);
            break;
        case PLD_ST_FOR:
            a0_expr(t, nslots, s->u.for_.iter, NULL);
            a0_target(t, nslots, s->u.for_.target, NULL);
            a0_block(t, nslots, &s->u.for_.body);
            break;
        case PLD_ST_WHILE:
            a0_expr(t, nslots, s->u.while_.cond, NULL);
            a0_block(t, nslots, &s->u.while_.body);
            break;
        case PLD_ST_WITH:
            a0_expr(t, nslots, s->u.with.item, NULL);
            a0_block(t, nslots, &s->u.with.body);
            break;
        default:
            break;
        }
    }
}

/* 1 and the two static dims of a 2-D tile type. */
static int static2d(const pld_type_t *ty, int64_t *r, int64_t *c)
{
    if (!ty || ty->kind != PLD_TY_TILE || ty->rank != 2 || !ty->shape || ty->shape[0].kind != PLD_DIM_CONST ||
        ty->shape[1].kind != PLD_DIM_CONST)
        return 0;
    *r = ty->shape[0].v;
    *c = ty->shape[1].v;
    return 1;
}

/* The extra rules of PyPTO's AutoTileMatmulL0 for pl.tile.matmul_bias d
 * ([M, K] @ [K, N] + [1, N], both operands in Mat): the bias is a static
 * [1, N] tile in Mat or Bias, and M, N, K are multiples of the operands' box
 * alignment (16 rows; 32 bytes of columns, at least 16 elements). Fills
 * a->bias and a->bias_dt; returns 0 or the PLD_AUTOL0_WHY_* reason. Whether
 * the platform moves a Mat bias of that dtype into the Bias table, and the
 * table's width, are the interpreter's (pld_exec.c acc_charge). */
static int bias_rule(const a0_t *t, int nslots, const pld_expr_t *d, pld_autol0_t *a, int64_t m, int64_t k,
                     int64_t n)
{
    const pld_expr_t *b = d->bound[2];
    const pld_type_t *bt = b ? b->type : NULL;
    int64_t br, bc;
    if (!static2d(bt, &br, &bc) || br != 1 || bc != n || (bt->mem != PLD_MEM_MAT && bt->mem != PLD_MEM_BIAS))
        return PLD_AUTOL0_WHY_BIAS;
    a->bias_dt = (uint8_t)bt->dtype;
    a->bias = bt->mem == PLD_MEM_BIAS ? PLD_AUTOL0_BIAS_BIAS : PLD_AUTOL0_BIAS_MAT;
    if (a->bias == PLD_AUTOL0_BIAS_MAT && b->kind == PLD_EX_NAME && b->slot >= 0 && b->slot < nslots) {
        const a0_t *u = &t[b->slot];
        if (u->ndefs == 1 && u->def && u->def->kind == PLD_EX_CALL && u->def->op == PLD_OPID_TILE_LOAD &&
            u->n_other == 1 && !u->n_store && !u->n_mm && !u->n_cast)
            a->bias = PLD_AUTOL0_BIAS_MAT_LOAD;
    }
    const int el = pld_dtype_bytes(d->bound[0]->type->dtype), er = pld_dtype_bytes(d->bound[1]->type->dtype);
    const int64_t kc = el > 0 && 32 / el > 16 ? 32 / el : 16, nc = er > 0 && 32 / er > 16 ? 32 / er : 16;
    return m % 16 || n % nc || k % kc ? PLD_AUTOL0_WHY_BOX : 0;
}

static void autol0(pld_ck_t *ck, pld_func_t *f)
{
    f->autol0 = NULL;
    a0_t *t = pld_arena_alloc(&ck->p->arena, sizeof *t * (size_t)f->nslots);
    pld_autol0_t *out = pld_arena_alloc(&ck->p->arena, sizeof *out * (size_t)f->nslots);
    if (!t || !out)
        return;
    memset(t, 0, sizeof *t * (size_t)f->nslots);
    memset(out, 0, sizeof *out * (size_t)f->nslots);
    for (int i = 0; i < f->nslots; i++)
        t[i].cast_to = -1;
    for (int i = 0; i < f->nparams; i++)
        if (f->params[i].slot >= 0 && f->params[i].slot < f->nslots)
            t[f->params[i].slot].ndefs++;
    a0_block(t, f->nslots, &f->body);
    for (int i = 0; i < f->nslots; i++) {
        const pld_expr_t *d = t[i].def;
        if (t[i].ndefs != 1 || !d || d->kind != PLD_EX_CALL ||
            (d->op != PLD_OPID_TILE_MATMUL && d->op != PLD_OPID_TILE_MATMUL_BIAS) || !d->bound)
            continue;
        pld_autol0_t *a = &out[i];
        a->kind = PLD_AUTOL0_KEPT;
        const pld_type_t *lt = d->bound[0] ? d->bound[0]->type : NULL, *rt = d->bound[1] ? d->bound[1]->type : NULL;
        int64_t lm, lk, rk, rn;
        if (!static2d(d->type, &a->m, &a->n) || !static2d(lt, &lm, &lk) || !static2d(rt, &rk, &rn)) {
            a->why = PLD_AUTOL0_WHY_SHAPE;
            continue;
        }
        a->cbytes = pld_dtype_bytes(d->type->dtype);
        a->acc_dt = (uint8_t)d->type->dtype;
        a->align_m = d->type->dtype == PLD_DT_INT32 ? 32 : 16;
        if (lt->mem != PLD_MEM_MAT || rt->mem != PLD_MEM_MAT) {
            a->why = PLD_AUTOL0_WHY_MEM;
            continue;
        }
        if (lk % 16) {
            a->why = PLD_AUTOL0_WHY_K;
            continue;
        }
        if (d->op == PLD_OPID_TILE_MATMUL_BIAS && (a->why = bias_rule(t, f->nslots, d, a, lm, lk, rn)) != 0)
            continue;
        const a0_t *u = &t[i];
        if (u->n_store == 1 && !u->n_mm && !u->n_cast && !u->n_other) {
            a->kind = PLD_AUTOL0_STORE;
            continue;
        }
        const int to = u->cast_to;
        if (u->n_cast != 1 || u->n_store || u->n_mm || u->n_other || to < 0 || to >= f->nslots || !u->cast ||
            t[to].ndefs != 1 || !t[to].n_mm || t[to].n_store || t[to].n_cast || t[to].n_other) {
            a->why = PLD_AUTOL0_WHY_USE;
            continue;
        }
        const pld_expr_t *c = u->cast, *mode = c->bound[2];
        const pld_dtype_t cd = c->type && c->type->kind == PLD_TY_TILE ? c->type->dtype : PLD_DT_FP32;
        if (d->type->dtype != PLD_DT_FP32 || (cd != PLD_DT_BF16 && cd != PLD_DT_FP16) || !mode ||
            mode->kind != PLD_EX_STR || strcmp(mode->u.str.s, "rint") != 0) {
            a->why = PLD_AUTOL0_WHY_CAST;
            continue;
        }
        a->kind = PLD_AUTOL0_SCRATCH;
        a->scratch = a->m * a->n * 2;
        out[to].kind = PLD_AUTOL0_SCRATCH_TILE;
    }
    f->autol0 = out;
}

void pld_ck_liveness(pld_ck_t *ck, pld_func_t *f)
{
    f->last_use = NULL;
    f->first_def = NULL;
    f->autol0 = NULL;
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
    autol0(ck, f);
}
