/* pld_dist.c - the distributed layer of the interpreter: comm-domain
 * inference for the HOST orchestrator's window buffers and their windows,
 * remote regions (get/put/atomic add), notify, and the waits on signal
 * cells and the barrier between dispatches bound to the hang watchdog of
 * src/sim_window/pld_wait.h (its poll loop, timeout, deadlock detection
 * through the status board and the stop of every rank are there; here the
 * interpreter's record of where it is, the seeded schedule, trace events, the
 * race detector's acquire, and the one-screen report at the end). The ops that use them are in pld_exec_dist.c and pld_exec_coll.c
 * (with the protocols of src/sim_window/pld_coll.h). */
#include "pld_interp_int.h"
#include "pld_mem.h"
#include "pld_buf.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* The largest window buffer, and comm-domain window, the simulator creates. */
#define PLD_WIN_MAX_BUF_BYTES PLD_MAX_BYTES

/* ------------------------------------------------------------ inference */

typedef struct loopvar {
    const char *name;
    const pld_expr_t *iter; /* the pl.range(...) call */
    int kind;            /* 0 other, 1 range(world_size()), 2 range(a, b, step) with bounds known at setup */
    int64_t a, b, step;
} loopvar_t;

typedef struct infer {
    pld_interp_t *it;
    frame_t *probe;      /* a frame without variables: evaluates constants, pld.world_size(), dims */
    const char *view_name[256];
    int view_buf[256];
    int nviews;
    loopvar_t loops[32];
    int nloops;
    pld_status_t st; /* the first error of the inference (reported) */
} infer_t;

static int is_op(const pld_expr_t *e, int op)
{
    return e && e->kind == PLD_EX_CALL && e->op == op;
}

static int buf_of_name(infer_t *in, const char *name)
{
    for (int i = in->nviews - 1; i >= 0; i--)
        if (in->view_name[i] == name)
            return in->view_buf[i];
    return -1;
}

static int buf_of_expr(infer_t *in, const pld_expr_t *e)
{
    if (!e)
        return -1;
    if (e->kind == PLD_EX_NAME)
        return buf_of_name(in, e->u.name);
    if (is_op(e, PLD_OPID_PLD_WINDOW) && e->bound)
        return buf_of_expr(in, e->bound[0]);
    if (e->kind == PLD_EX_CALL && pld_op_coll_kind(e->op) >= 0 && e->bound) {
        const int k = pld_op_coll_kind(e->op);
        int ti = k == PLD_OPID_PLD_BARRIER ? 0 : (k == PLD_OPID_PLD_ALLGATHER || k == PLD_OPID_PLD_ALL_TO_ALL ||
                                                  k == PLD_OPID_PLD_ALL_TO_ALL_V) ? 1 : 0;
        return buf_of_expr(in, e->bound[ti]);
    }
    return -1;
}

static void add_view(infer_t *in, const char *name, int b)
{
    if (b < 0 || in->nviews >= 256)
        return;
    in->view_name[in->nviews] = name;
    in->view_buf[in->nviews] = b;
    in->nviews++;
}

/* Value of an expression that needs no variable (module constants,
 * pld.world_size(), dynamic dims of the inputs, arithmetic of them). */
static int probe_i64(infer_t *in, const pld_expr_t *e, int64_t *v)
{
    if (!e)
        return 0;
    if (e->kind == PLD_EX_INT) {
        *v = e->u.ival;
        return 1;
    }
    in->it->quiet = 1;
    pld_status_t st = in->it->walk->eval_i64(in->it, in->probe, e, v);
    in->it->quiet = 0;
    return st == PLD_OK;
}

/* The devices a dispatch with device=<expr> reaches, as a set of ranks
 * (MaterializeCommDomainScopes, pld_semantics.md §1.2): a constant, the loop
 * variable of `for r in pl.range(pld.world_size())` (every rank), or of
 * `pl.range([start,] stop)` with constant bounds, start >= 0 and step 1 (also
 * through one plain copy `d = r`). Anything else is an error at the device=
 * expression, as PyPTO rejects it: the comm domain would be a guess. */
static void cover(infer_t *in, int b, const pld_expr_t *device)
{
    winbuf_t *w = &in->it->wins[b];
    w->covered = 1;
    int64_t v;
    if (!device) {
        w->cover_all = 1; /* round-robin: any rank */
        return;
    }
    if (in->st != PLD_OK)
        return;
    if (device->kind == PLD_EX_NAME && device->slot >= 0) {
        for (int i = in->nloops - 1; i >= 0; i--)
            if (in->loops[i].name == device->u.name) {
                const loopvar_t *l = &in->loops[i];
                if (l->kind == 1) {
                    w->cover_all = 1;
                } else if (l->kind == 2 && l->step == 1 && l->a >= 0 && l->b <= 64) {
                    for (v = l->a; v < l->b; v++)
                        w->cover[0] |= (uint64_t)1 << v;
                } else if (l->kind == 2 && l->step == 1 && l->a >= 0) {
                    w->cover_all = 1; /* reaches past rank 63: dispatching there is the run-time error */
                } else {
                    char why[96];
                    if (l->kind == 2 && l->step != 1)
                        snprintf(why, sizeof why, "has step %lld", (long long)l->step);
                    else if (l->kind == 2)
                        snprintf(why, sizeof why, "starts at %lld", (long long)l->a);
                    else
                        snprintf(why, sizeof why, "has bounds not known when the HOST orchestrator starts");
                    in->st = pld_rt_error(in->it, NULL, device->span,
                                          "the devices of window buffer '%s' come from a dispatch loop that %s: the "
                                          "comm domain is only inferred for pl.range(pld.world_size()) or "
                                          "pl.range([start,] stop) with constant bounds, start >= 0 and step 1",
                                          w->name, why);
                }
                return;
            }
    }
    if (device->kind != PLD_EX_NAME || device->slot < 0) {
        if (probe_i64(in, device, &v) && v >= 0 && v < 64) {
            w->cover[0] |= (uint64_t)1 << v;
            return;
        }
        if (probe_i64(in, device, &v)) {
            w->cover_all = 1; /* outside [0, 64): the dispatch reports it */
            return;
        }
    }
    in->st = pld_rt_error(in->it, NULL, device->span,
                          "the devices of window buffer '%s' cannot be inferred from this device= expression: it must "
                          "be a constant or the variable of a dispatch loop `for r in pl.range(pld.world_size())` "
                          "(or pl.range([start,] stop) with constant bounds and step 1)",
                          w->name);
}

static void infer_expr(infer_t *in, const pld_expr_t *e);

static void infer_call(infer_t *in, const pld_expr_t *e)
{
    const pld_interp_t *it = in->it;
    for (int i = 0; i < e->u.call.nargs; i++)
        infer_expr(in, e->u.call.args[i].value);
    const pld_expr_t *fn = e->u.call.fn;
    if (e->op < 0 && fn->kind == PLD_EX_ATTR && fn->u.attr.obj->kind == PLD_EX_NAME &&
        strcmp(fn->u.attr.obj->u.name, "self") == 0 && e->aux >= 0 &&
        pld_check_func_ctx(it->p->funcs[e->aux]) == PLD_CTX_CHIP) {
        const pld_expr_t *device = NULL;
        for (int i = 0; i < e->u.call.nargs; i++)
            if (e->u.call.args[i].kw && strcmp(e->u.call.args[i].kw, "device") == 0)
                device = e->u.call.args[i].value;
        for (int i = 0; i < e->u.call.nargs; i++) {
            if (e->u.call.args[i].kw)
                continue;
            int b = buf_of_expr(in, e->u.call.args[i].value);
            if (b >= 0)
                cover(in, b, device);
        }
    }
    /* HOST collectives: every operand shares the coverage of the others */
    /* (and their builtin.tensor.* dispatches, pld_lower.c) */
    if (pld_op_coll_kind(e->op) >= 0 && e->bound) {
        const pld_op_info_t *info = pld_op_info((pld_op_id_t)e->op);
        int bufs[8], nb = 0;
        for (int i = 0; i < info->nparams && nb < 8; i++) {
            int b = buf_of_expr(in, e->bound[i]);
            if (b >= 0)
                bufs[nb++] = b;
        }
        int sb = pld_dist_buf_of(it, e);
        if (sb >= 0 && nb < 8)
            bufs[nb++] = sb;
        int all = 0, any = 0;
        uint64_t set = 0;
        for (int i = 0; i < nb; i++) {
            winbuf_t *w = &in->it->wins[bufs[i]];
            any |= w->covered;
            all |= w->cover_all;
            set |= w->cover[0];
        }
        for (int i = 0; i < nb && any; i++) {
            winbuf_t *w = &in->it->wins[bufs[i]];
            w->covered = 1;
            w->cover_all |= all;
            w->cover[0] |= set;
        }
    }
}

static void infer_expr(infer_t *in, const pld_expr_t *e)
{
    if (!e)
        return;
    if (e->kind == PLD_EX_CALL)
        infer_call(in, e);
}

static void infer_block(infer_t *in, const pld_block_t *b);

static void infer_stmt(infer_t *in, const pld_stmt_t *s)
{
    switch (s->kind) {
    case PLD_ST_EXPR:
        infer_expr(in, s->u.expr);
        break;
    case PLD_ST_ASSIGN: {
        const pld_expr_t *v = s->u.assign.value, *t = s->u.assign.target;
        infer_expr(in, v);
        if (t->kind == PLD_EX_NAME && v->kind == PLD_EX_NAME && in->nloops < 32) {
            /* `d = r` of a loop variable: a second name of it */
            for (int i = in->nloops - 1; i >= 0; i--)
                if (in->loops[i].name == v->u.name) {
                    loopvar_t lv = in->loops[i];
                    lv.name = t->u.name;
                    in->loops[in->nloops++] = lv;
                    break;
                }
        }
        if (t->kind == PLD_EX_NAME) {
            if (is_op(v, PLD_OPID_PLD_ALLOC_WINDOW_BUFFER))
                add_view(in, t->u.name, pld_dist_buf_of(in->it, v));
            else
                add_view(in, t->u.name, buf_of_expr(in, v));
        }
        break;
    }
    case PLD_ST_IF:
        infer_block(in, &s->u.if_.then);
        infer_block(in, &s->u.if_.els);
        break;
    case PLD_ST_WHILE:
        infer_block(in, &s->u.while_.body);
        break;
    case PLD_ST_FOR: {
        const pld_expr_t *it = s->u.for_.iter, *tg = s->u.for_.target;
        loopvar_t lv = {NULL, it, 0, 0, 0, 1};
        if (tg->kind == PLD_EX_NAME)
            lv.name = tg->u.name;
        else if (tg->kind == PLD_EX_TUPLE && tg->u.seq.n > 0 && tg->u.seq.items[0]->kind == PLD_EX_NAME)
            lv.name = tg->u.seq.items[0]->u.name;
        int npos = 0;
        const pld_expr_t *pos[3] = {NULL, NULL, NULL};
        for (int i = 0; i < it->u.call.nargs; i++)
            if (!it->u.call.args[i].kw && npos < 3)
                pos[npos++] = it->u.call.args[i].value;
        if (it->op == PLD_OPID_PL_RANGE || it->op == PLD_OPID_PL_PARALLEL || it->op == PLD_OPID_PL_UNROLL) {
            if (npos == 1 && is_op(pos[0], PLD_OPID_PLD_WORLD_SIZE))
                lv.kind = 1;
            else if (npos == 1 && probe_i64(in, pos[0], &lv.b))
                lv.kind = 2, lv.a = 0;
            else if (npos >= 2 && probe_i64(in, pos[0], &lv.a) && probe_i64(in, pos[1], &lv.b) &&
                     (npos == 2 || probe_i64(in, pos[2], &lv.step)) && lv.step != 0)
                lv.kind = 2;
        }
        const int saved = in->nloops;
        if (in->nloops < 32)
            in->loops[in->nloops++] = lv;
        infer_block(in, &s->u.for_.body);
        in->nloops = saved; /* the loop variable and its copies in the body */
        break;
    }
    case PLD_ST_WITH:
        infer_block(in, &s->u.with.body);
        break;
    default:
        break;
    }
}

static void infer_block(infer_t *in, const pld_block_t *b)
{
    for (int i = 0; i < b->n; i++)
        infer_stmt(in, b->stmts[i]);
}

static winbuf_t *new_winbuf(pld_interp_t *it)
{
    if (it->nwins == it->capwins) {
        int cap = it->capwins ? it->capwins * 2 : 8;
        winbuf_t *nw = pld_mem_realloc(it->wins, (size_t)cap * sizeof *nw);
        if (!nw)
            return NULL;
        it->wins = nw;
        it->capwins = cap;
    }
    winbuf_t *w = &it->wins[it->nwins++];
    memset(w, 0, sizeof *w);
    w->dom = -1;
    return w;
}

int pld_dist_buf_of(const pld_interp_t *it, const pld_expr_t *e)
{
    for (int i = 0; i < it->nwins; i++)
        if (it->wins[i].alloc == e)
            return i;
    return -1;
}

/* HOST allreduce calls without a signal inside e: each gets a hidden signal
 * buffer (SynthesizeAllReduceSignals, §2.14.5), in source order. */
static pld_status_t collect_synth(pld_interp_t *it, const pld_expr_t *e)
{
    if (!e || e->kind != PLD_EX_CALL)
        return PLD_OK;
    for (int i = 0; i < e->u.call.nargs; i++) {
        pld_status_t st = collect_synth(it, e->u.call.args[i].value);
        if (st != PLD_OK)
            return st;
    }
    if ((is_op(e, PLD_OPID_PLD_ALLREDUCE) || is_op(e, PLD_OPID_BUILTIN_ALLREDUCE)) && e->bound && !e->bound[1] &&
        pld_dist_buf_of(it, e) < 0) {
        winbuf_t *w = new_winbuf(it);
        if (!w)
            return PLD_E_NOMEM;
        w->alloc = e;
        w->name = "__allreduce_signal_buf";
        w->synth = 1;
    }
    return PLD_OK;
}

/* Collects every alloc_window_buffer of the HOST body (source order). */
static pld_status_t collect_allocs(pld_interp_t *it, const pld_block_t *b)
{
    for (int i = 0; i < b->n; i++) {
        const pld_stmt_t *s = b->stmts[i];
        const pld_block_t *kids[2] = {NULL, NULL};
        pld_status_t sst = PLD_OK;
        if (s->kind == PLD_ST_ASSIGN && is_op(s->u.assign.value, PLD_OPID_PLD_ALLOC_WINDOW_BUFFER)) {
            winbuf_t *w = new_winbuf(it);
            if (!w)
                return PLD_E_NOMEM;
            w->alloc = s->u.assign.value;
            w->name = s->u.assign.target->kind == PLD_EX_NAME ? s->u.assign.target->u.name : "?";
        } else if (s->kind == PLD_ST_ASSIGN) {
            sst = collect_synth(it, s->u.assign.value);
        } else if (s->kind == PLD_ST_EXPR) {
            sst = collect_synth(it, s->u.expr);
        } else if (s->kind == PLD_ST_RETURN) {
            for (int k = 0; k < s->u.ret.n && sst == PLD_OK; k++)
                sst = collect_synth(it, s->u.ret.vals[k]);
        }
        if (sst != PLD_OK)
            return sst;
        switch (s->kind) {
        case PLD_ST_IF: kids[0] = &s->u.if_.then; kids[1] = &s->u.if_.els; break;
        case PLD_ST_WHILE: kids[0] = &s->u.while_.body; break;
        case PLD_ST_FOR: kids[0] = &s->u.for_.body; break;
        case PLD_ST_WITH: kids[0] = &s->u.with.body; break;
        default: break;
        }
        for (int k = 0; k < 2; k++)
            if (kids[k]) {
                pld_status_t st = collect_allocs(it, kids[k]);
                if (st != PLD_OK)
                    return st;
            }
    }
    return PLD_OK;
}

/* Byte size of an allocation, evaluated before the HOST body runs. */
static pld_status_t alloc_bytes(pld_interp_t *it, frame_t *f, winbuf_t *w)
{
    const pld_expr_t *e = w->alloc;
    const pld_expr_t *a0 = e->bound ? e->bound[0] : NULL;
    int64_t bytes = 0;
    int64_t shape[PLD_MAX_RANK];
    int n = 0, src = 0; /* 0 a byte count, 1 a shape */
    it->quiet = 1;
    pld_status_t st;
    if (w->synth) {
        /* [world_size, core_num] INT32 */
        int64_t lanes = 1;
        const pld_expr_t *cn = e->bound ? e->bound[4] : NULL;
        st = cn ? it->walk->eval_i64(it, f, cn, &lanes) : PLD_OK;
        shape[0] = it->comm.nranks;
        shape[1] = lanes > 0 ? lanes : 1;
        n = 2, src = 1;
    } else if (a0 && (a0->kind == PLD_EX_LIST || a0->kind == PLD_EX_TUPLE)) {
        st = it->walk->eval_ilist(it, f, a0, shape, PLD_MAX_RANK, &n);
        src = 1;
    } else {
        st = a0 ? it->walk->eval_i64(it, f, a0, &bytes) : PLD_E_RUNTIME;
    }
    it->quiet = 0;
    if (st != PLD_OK)
        return pld_rt_error(it, NULL, e->span,
                            "the size of window buffer '%s' must be known when the HOST orchestrator starts "
                            "(constants, pld.world_size(), dynamic dims of the inputs)",
                            w->name);
    if (src == 1) {
        int64_t esz = w->synth ? 4 : pld_dtype_bytes(pld_expr_dtype(it, e->bound[1]));
        int rc = pld_size_bytes(n, shape, esz, PLD_WIN_MAX_BUF_BYTES, &bytes);
        if (rc != PLD_SIZE_OK) {
            char sh[160];
            pld_shape_str(sh, sizeof sh, n, shape);
            return pld_rt_error(it, NULL, e->span, "the size of window buffer '%s' (shape %s, %lld-byte elements) %s%s",
                                w->name, sh, (long long)esz, pld_size_what(rc),
                                rc == PLD_SIZE_OVERFLOW ? " (at most 2^40 bytes)" : "");
        }
    }
    if (bytes < 0)
        return pld_rt_error(it, NULL, e->span, "window buffer '%s' has a negative size (%lld bytes)", w->name,
                            (long long)bytes);
    if (bytes > PLD_WIN_MAX_BUF_BYTES)
        return pld_rt_error(it, NULL, e->span, "window buffer '%s' of %lld bytes is too large (at most 2^40 bytes)",
                            w->name, (long long)bytes);
    w->bytes = (size_t)bytes;
    return PLD_OK;
}

/* Whether e can be evaluated before the HOST body runs without any effect:
 * literals, names, arithmetic, pld.world_size(), pl.tensor.dim of a
 * parameter, DTYPE.get_byte(). Nothing that dispatches, allocates or talks to
 * another rank. */
static int pure_size_expr(const pld_expr_t *e)
{
    if (!e)
        return 0;
    switch (e->kind) {
    case PLD_EX_INT: case PLD_EX_BOOL: case PLD_EX_NAME: case PLD_EX_ATTR:
        return 1;
    case PLD_EX_UNARY:
        return pure_size_expr(e->u.un.a);
    case PLD_EX_BINARY:
        return pure_size_expr(e->u.bin.a) && pure_size_expr(e->u.bin.b);
    case PLD_EX_CALL:
        /* pl.const / pl.cast / pl.min / pl.max: how PyPTO's printer writes computed sizes */
        if (e->op == PLD_OPID_PLD_WORLD_SIZE || e->op == PLD_OPID_TENSOR_DIM || e->op == PLD_OPID_PL_CONST ||
            e->op == PLD_OPID_PL_CAST_SCALAR || e->op == PLD_OPID_PL_MIN || e->op == PLD_OPID_PL_MAX) {
            for (int i = 0; i < e->u.call.nargs; i++)
                if (!pure_size_expr(e->u.call.args[i].value))
                    return 0;
            return 1;
        }
        return e->op < 0 && e->u.call.nargs == 0 && e->u.call.fn->kind == PLD_EX_ATTR &&
               strcmp(e->u.call.fn->u.attr.attr, "get_byte") == 0;
    default:
        return 0;
    }
}

/* Names a statement (or the blocks under it) assigns: forgotten by the size
 * pre-pass, whose values hold for straight-line code only. */
static void forget_assigned(frame_t *f, const pld_stmt_t *s)
{
    const pld_block_t *kids[2] = {NULL, NULL};
    switch (s->kind) {
    case PLD_ST_ASSIGN: {
        const pld_expr_t *t = s->u.assign.target;
        if (t->kind == PLD_EX_NAME && t->slot >= 0 && t->slot < f->nslots) {
            pld_value_release(&f->slots[t->slot]);
            f->slots[t->slot] = pld_v_none();
        }
        return;
    }
    case PLD_ST_IF: kids[0] = &s->u.if_.then; kids[1] = &s->u.if_.els; break;
    case PLD_ST_WHILE: kids[0] = &s->u.while_.body; break;
    case PLD_ST_FOR: kids[0] = &s->u.for_.body; break;
    case PLD_ST_WITH: kids[0] = &s->u.with.body; break;
    default: return;
    }
    for (int k = 0; k < 2; k++)
        for (int i = 0; kids[k] && i < kids[k]->n; i++)
            forget_assigned(f, kids[k]->stmts[i]);
}

/* Sizes of the window buffers, evaluated before the HOST body runs with what
 * the HOST orchestrator knows by then: module constants, pld.world_size(),
 * the entry's parameters (their dims) and the HOST locals its straight-line
 * code computed from those before the allocation (`nbytes = ...` then
 * pld.alloc_window_buffer(nbytes)). A top-level allocation is sized where it
 * stands; one inside a loop or a branch, and a synthesized signal, with the
 * locals of the straight-line code before the end. */
static pld_status_t size_buffers(pld_interp_t *it, const pld_func_t *host, frame_t *f)
{
    pld_status_t st = PLD_OK;
    int *done = pld_mem_calloc((size_t)it->nwins + 1, sizeof *done);
    if (!done)
        return PLD_E_NOMEM;
    for (int i = 0; i < host->nparams; i++) {
        int slot = host->params[i].slot;
        if (slot >= 0 && slot < f->nslots && it->entry == host && it->bound[i])
            pld_value_set(&f->slots[slot], &it->args[i]);
    }
    for (int i = 0; i < host->body.n && st == PLD_OK; i++) {
        const pld_stmt_t *s = host->body.stmts[i];
        if (s->kind == PLD_ST_ASSIGN && is_op(s->u.assign.value, PLD_OPID_PLD_ALLOC_WINDOW_BUFFER)) {
            int b = pld_dist_buf_of(it, s->u.assign.value);
            if (b >= 0) {
                st = alloc_bytes(it, f, &it->wins[b]);
                done[b] = 1;
            }
            continue;
        }
        const pld_expr_t *t = s->kind == PLD_ST_ASSIGN ? s->u.assign.target : NULL;
        if (t && t->kind == PLD_EX_NAME && t->slot >= 0 && t->slot < f->nslots && pure_size_expr(s->u.assign.value)) {
            pld_value_t v = pld_v_none();
            it->quiet = 1;
            pld_status_t vs = it->walk->eval(it, f, s->u.assign.value, &v);
            it->quiet = 0;
            pld_value_release(&f->slots[t->slot]);
            f->slots[t->slot] = vs == PLD_OK && pld_v_is_scalar(&v) ? v : pld_v_none();
            if (vs == PLD_OK && !pld_v_is_scalar(&v))
                pld_value_release(&v);
            continue;
        }
        forget_assigned(f, s);
    }
    for (int b = 0; b < it->nwins && st == PLD_OK; b++)
        if (!done[b])
            st = alloc_bytes(it, f, &it->wins[b]);
    pld_mem_free(done);
    return st;
}

pld_status_t pld_dist_plan(pld_interp_t *it, const pld_func_t *host)
{
    pld_status_t st = collect_allocs(it, &host->body);
    if (st != PLD_OK)
        return st;
    if (it->nwins == 0)
        return PLD_OK;
    if (!it->win) {
        if (it->comm.nranks > 1)
            return pld_rt_error(it, NULL, it->wins[0].alloc->span,
                                "window buffers over %d ranks need the MPI window layer, but none was given",
                                it->comm.nranks);
        char err[256];
        if (pld_win_sys_init(PLD_WIN_LOCAL, &it->win, err, sizeof err) != PLD_OK)
            return pld_rt_error(it, NULL, it->wins[0].alloc->span, "window layer: %s", err);
        it->own_win = 1;
    }
    infer_t *in = pld_mem_calloc(1, sizeof *in);
    if (!in)
        return PLD_E_NOMEM;
    /* sizes, membership, domains */
    frame_t f;
    memset(&f, 0, sizeof f);
    f.ctx = PLD_CTX_HOST;
    f.block_num = 1;
    in->it = it;
    in->probe = &f; /* no variables: a device= must not depend on HOST locals */
    infer_block(in, &host->body);
    st = in->st;
    pld_mem_free(in);
    if (st != PLD_OK)
        return st;
    for (int i = 0; i < it->nwins; i++)
        if (!it->wins[i].covered)
            return pld_rt_error(it, NULL, it->wins[i].alloc->span,
                                "window buffer '%s' reaches no dispatch (no pld.window view of it is passed to a "
                                "CHIP orchestration function with device=, nor used with such a buffer in a HOST "
                                "collective): its comm domain cannot be inferred",
                                it->wins[i].synth ? "the allreduce signal" : it->wins[i].name);
    it->doms = pld_mem_calloc((size_t)it->nwins, sizeof *it->doms);
    if (!it->doms)
        return PLD_E_NOMEM;
    /* sizes: a frame with the HOST orchestrator's slots (parameters, locals) */
    frame_t sf = f;
    sf.fn = host;
    sf.nslots = host->nslots;
    sf.slots = pld_mem_calloc((size_t)(host->nslots > 0 ? host->nslots : 1), sizeof *sf.slots);
    if (!sf.slots)
        return PLD_E_NOMEM;
    st = size_buffers(it, host, &sf);
    for (int k = 0; k < sf.nslots; k++)
        pld_value_release(&sf.slots[k]);
    pld_mem_free(sf.slots);
    if (st != PLD_OK)
        return st;
    int P = it->comm.nranks;
    for (int i = 0; i < it->nwins; i++) {
        winbuf_t *w = &it->wins[i];
        int members[PLD_WIN_MAX_RANKS], n = 0;
        if (P > PLD_WIN_MAX_RANKS)
            return pld_rt_error(it, NULL, w->alloc->span, "a comm domain holds at most %d ranks (this run has %d)",
                                PLD_WIN_MAX_RANKS, P);
        for (int r = 0; r < P; r++)
            if (!w->covered || w->cover_all || (w->cover[0] >> r & 1))
                members[n++] = r;
        if (!w->cover_all && w->covered && (w->cover[0] >> P) != 0)
            return pld_rt_error(it, NULL, w->alloc->span, "window buffer '%s' is dispatched to a device outside [0, %d)",
                                w->name, P);
        int d = -1;
        for (int k = 0; k < it->ndoms && d < 0; k++)
            if (it->doms[k].n == n && memcmp(it->doms[k].members, members, (size_t)n * sizeof *members) == 0)
                d = k;
        if (d < 0) {
            d = it->ndoms++;
            memcpy(it->doms[d].members, members, (size_t)n * sizeof *members);
            it->doms[d].n = n;
            it->doms[d].me = -1;
            for (int k = 0; k < n; k++)
                if (members[k] == it->comm.rank)
                    it->doms[d].me = k;
        }
        w->dom = d;
        w->offset = it->doms[d].bytes;
        int64_t end;
        if (pld_size_add((int64_t)it->doms[d].bytes, (int64_t)((w->bytes + 31) & ~(size_t)31), &end) != PLD_SIZE_OK ||
            end > PLD_WIN_MAX_BUF_BYTES)
            return pld_rt_error(it, NULL, w->alloc->span,
                                "the window of comm domain %d is too large with buffer '%s' (at most 2^40 bytes)", d,
                                w->name);
        it->doms[d].bytes = (size_t)end;
    }
    if (it->poison)
        pld_poison_classify(it, host);
    return PLD_OK;
}

/* ---- windows a kernel backend places itself (PLD_BE_CAP_WINDOWS) ----
 * The backend's collective steps run over the domain's members. */
static int grp_allgather(void *ctx, const void *send, void *recv, size_t bytes)
{
    return pld_win_dom_allgather(ctx, send, recv, bytes) != PLD_OK;
}
static int grp_bcast(void *ctx, void *buf, size_t bytes, int root)
{
    return pld_win_dom_bcast(ctx, buf, bytes, root) != PLD_OK;
}
static int grp_barrier(void *ctx)
{
    return pld_win_dom_barrier(ctx) != PLD_OK;
}
static pld_be_coll_t dom_group(pld_win_dom_t *w)
{
    pld_be_coll_t g = {w, grp_allgather, grp_bcast, grp_barrier};
    return g;
}

static int backend_windows(const pld_interp_t *it)
{
    return (pld_hw_caps(it->hw) & PLD_BE_CAP_WINDOWS) != 0;
}

/* The WINDOW event of domain d: its buffers by name, bytes, members, transport. */
static void trace_window(pld_interp_t *it, int d, pld_ev_t *ev)
{
    const domain_t *dm = &it->doms[d];
    char name[160];
    int len = snprintf(name, sizeof name, "domain %d:", d);
    for (int i = 0; i < it->nwins && len > 0 && (size_t)len < sizeof name; i++)
        if (it->wins[i].dom == d)
            len += snprintf(name + len, sizeof name - (size_t)len, " %s", it->wins[i].name);
    ev->name = name;
    ev->dom = d;
    ev->bytes = (int64_t)dm->bytes;
    ev->count = dm->n;
    ev->obj = pld_win_transport_name(pld_win_dom_transport(dm->win));
    pld_trace_end(it->trace, ev);
}

/* The INT32 cell at byte disp of domain d as "buffer[flat index]". */
static void cell_name(const pld_interp_t *it, const domain_t *d, size_t disp, char *buf, size_t n)
{
    const winbuf_t *w = pld_winbuf_at(it, d, disp);
    if (w)
        snprintf(buf, n, "%s[%zu]", w->name, (disp - w->offset) / 4);
    else
        snprintf(buf, n, "window byte %zu", disp);
}

pld_status_t pld_dist_create(pld_interp_t *it)
{
    pld_status_t st;
    pld_span_t at = it->entry->name_span;
    /* create the windows: same order on every rank; members only */
    for (int d = 0; d < it->ndoms; d++) {
        domain_t *dm = &it->doms[d];
        if (dm->me < 0)
            continue;
        char err[512];
        pld_ev_t ev;
        if (it->trace)
            pld_tr_init(NULL, at, &ev, PLD_EV_WINDOW, NULL);
        st = pld_win_dom_create(it->win, dm->members, dm->n, dm->bytes ? dm->bytes : 32, &dm->win, err, sizeof err);
        if (st != PLD_OK)
            return pld_rt_error(it, NULL, at, "cannot create the window of comm domain %d: %s", d, err);
        it->stats.transports |= 1u << pld_win_dom_transport(dm->win);
        if (it->trace)
            trace_window(it, d, &ev);
        if (backend_windows(it)) {
            const pld_be_coll_t g = dom_group(dm->win);
            const pld_hw_window_req_t req = {&g, dm->members, dm->n, dm->me, dm->bytes ? dm->bytes : 32,
                                             pld_win_dom_ctx(dm->win), pld_win_dom_base(dm->win)};
            st = pld_hw_window_alloc(it->hw, &req, err, sizeof err);
            if (st != PLD_OK)
                return pld_rt_error(it, NULL, at, "kernel backend '%s' cannot place the window of comm domain %d: %s",
                                    pld_hw_name(it->hw), d, err);
            dm->hw_window = 1;
        }
    }
    for (int i = 0; i < it->nwins; i++) {
        winbuf_t *w = &it->wins[i];
        domain_t *dm = &it->doms[w->dom];
        if (dm->me < 0)
            continue;
        w->buf = pld_buffer_wrap((char *)pld_win_dom_base(dm->win) + w->offset, w->bytes);
        if (!w->buf)
            return PLD_E_NOMEM;
    }
    st = it->poison ? pld_poison_create(it) : PLD_OK;
    return st == PLD_OK && it->race ? pld_race_create(it) : st;
}

pld_status_t pld_dist_fetch(pld_interp_t *it)
{
    for (int d = 0; d < it->ndoms; d++) {
        char err[256];
        if (it->doms[d].win && it->doms[d].hw_window &&
            pld_hw_window_fetch(it->hw, pld_win_dom_ctx(it->doms[d].win), err, sizeof err) != PLD_OK) {
            pld_diag_add(&it->p->diags, PLD_SEV_ERROR, (pld_span_t){0, 0, 0, 0}, "kernel backend '%s': %s",
                         pld_hw_name(it->hw), err);
            return PLD_E_HW;
        }
    }
    return PLD_OK;
}

void pld_dist_fini(pld_interp_t *it)
{
    if (it->race)
        pld_race_fini(it);
    if (it->poison)
        pld_poison_fini(it);
    for (int i = 0; i < it->nwins; i++)
        pld_buffer_release(it->wins[i].buf);
    for (int d = 0; d < it->ndoms; d++) {
        if (it->doms[d].win && it->doms[d].hw_window) {
            char err[256];
            const pld_be_coll_t g = dom_group(it->doms[d].win);
            if (pld_hw_window_free(it->hw, pld_win_dom_ctx(it->doms[d].win), &g, err, sizeof err) != PLD_OK)
                pld_diag_add(&it->p->diags, PLD_SEV_ERROR, (pld_span_t){0, 0, 0, 0}, "kernel backend '%s': %s",
                             pld_hw_name(it->hw), err);
        }
        if (it->doms[d].win)
            pld_win_dom_destroy(it->doms[d].win);
    }
    pld_mem_free(it->doms);
    it->doms = NULL;
    it->ndoms = 0;
    if (it->own_win)
        pld_win_sys_fini(it->win);
    it->win = NULL;
    pld_dist_progress_bind(it);
}

void pld_dist_progress_bind(pld_interp_t *it)
{
    it->prog = it->win ? pld_win_progress_slot(it->win) : &it->prog_local;
    if (!it->win) {
        pld_wait_watch_destroy(it->watch);
        it->watch = NULL;
    } else if (!it->watch) {
        it->watch = pld_wait_watch_create(pld_win_world_size(it->win)); /* NULL: each wait keeps its own */
    }
}

/* ------------------------------------------------------------ helpers */

static pld_status_t check_origin(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_tensor_t *t);

domain_t *pld_dist_domain_of(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_tensor_t *t)
{
    if (!t->is_dist || t->winbuf < 0 || t->winbuf >= it->nwins) {
        pld_rt_error(it, f, e->span, "%s needs a window-bound tensor (a pld.window view)", pld_op_name(e));
        return NULL;
    }
    if (e->op != PLD_OPID_PLD_GET_COMM_CTX && it->doms[it->wins[t->winbuf].dom].me >= 0 && check_origin(it, f, e, t) != PLD_OK)
        return NULL;
    domain_t *d = &it->doms[it->wins[t->winbuf].dom];
    if (d->me < 0 || !d->win) {
        pld_rt_error(it, f, e->span, "%s: this rank is not a member of the comm domain of window '%s'", pld_op_name(e),
                     it->wins[t->winbuf].name);
        return NULL;
    }
    return d;
}

/* Remote addressing starts at the window view's base: a view that does not
 * start at its slot's first byte (a slice with a non-zero origin) would be
 * addressed from the slot start on the device (pld_semantics.md §2.3). */
static pld_status_t check_origin(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_tensor_t *t)
{
    const winbuf_t *w = &it->wins[t->winbuf];
    long long off = (long long)((char *)t->buf->data + t->offset * pld_dtype_bytes(t->dt) - (char *)w->buf->data);
    if (off == 0)
        return PLD_OK;
    return pld_rt_error(it, f, e->span,
                        "%s on a view of window '%s' that starts %lld bytes into it: remote ops address the window "
                        "from its origin, so pass the position as the op's offsets instead of slicing",
                        pld_op_name(e), w->name, off);
}

size_t pld_dist_disp(const domain_t *d, const pld_tensor_t *t, const int64_t *idx)
{
    return (size_t)((char *)pld_tensor_at(t, idx) - (char *)pld_win_dom_base(d->win));
}

static pld_status_t region(pld_interp_t *it, frame_t *f, const pld_expr_t *e, domain_t *d, int peer,
                           const pld_tensor_t *t, const int64_t *off, const int64_t *ext, void *packed, int dir);

int pld_dist_can_batch(const pld_interp_t *it)
{
    /* --poison and --check-races read shadows and records right after each
     * transfer; a seeded schedule holds puts itself */
    return it->win && !it->poison && !it->race && !it->sched_on;
}

pld_status_t pld_dist_batch_end(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_status_t st)
{
    char err[256];
    pld_status_t bst = pld_win_batch_end(it->win, err, sizeof err);
    if (st == PLD_OK && bst != PLD_OK)
        st = pld_rt_error(it, f, e->span, "%s: %s", pld_op_name(e), err);
    return st;
}

/* The runs of one region reach the peer as one batch (pld_win_batch_begin):
 * across hosts one round trip, not one per row. */
pld_status_t pld_dist_region(pld_interp_t *it, frame_t *f, const pld_expr_t *e, domain_t *d, int peer,
                             const pld_tensor_t *t, const int64_t *off, const int64_t *ext, void *packed, int dir)
{
    if (!pld_dist_can_batch(it))
        return region(it, f, e, d, peer, t, off, ext, packed, dir);
    pld_win_batch_begin(it->win);
    return pld_dist_batch_end(it, f, e, region(it, f, e, d, peer, t, off, ext, packed, dir));
}

/* The region's hooks into the checking modes and the seeded schedule. */
typedef struct {
    pld_interp_t *it;
    frame_t *f;
    const pld_expr_t *e;
    domain_t *d;
    pld_dtype_t dt;
    pld_poison_acc_t unwritten;
} region_ctx_t;

static pld_status_t region_xfer(void *ctx, int peer, size_t disp, void *buf, size_t bytes, size_t count, int dir,
                                char *err, size_t errn)
{
    region_ctx_t *c = ctx;
    return dir == 0 ? pld_sched_win_get(c->it, c->d, peer, disp, buf, bytes, err, errn)
         : dir == 1 ? pld_sched_win_put(c->it, c->d, peer, disp, buf, bytes, err, errn)
                    : pld_sched_win_add(c->it, c->d, peer, disp, buf, c->dt, count, err, errn);
}

static pld_status_t region_moved(void *ctx, int peer, size_t disp, size_t bytes, int dir, char *err, size_t errn)
{
    region_ctx_t *c = ctx;
    pld_status_t st = PLD_OK;
    if (c->it->poison)
        st = pld_poison_run(c->it, c->d, peer, disp, bytes, dir, &c->unwritten, err, errn);
    if (st == PLD_OK && c->it->race && !c->it->race_mute)
        pld_race_remote(c->it, c->f, c->e, c->d, peer, disp, bytes, dir);
    return st;
}

/* The box [off, off + ext) of t moves as the window layer's region
 * (pld_win_region); the interpreter adds the schedule point, the trace
 * event, the checking modes' hooks and the located errors. */
static pld_status_t region(pld_interp_t *it, frame_t *f, const pld_expr_t *e, domain_t *d, int peer,
                           const pld_tensor_t *t, const int64_t *off, const int64_t *ext, void *packed, int dir)
{
    char err[512];
    if (it->sched_on && pld_sched_point(it, f, e->span) != PLD_OK)
        return PLD_E_RUNTIME;
    region_ctx_t c = {it, f, e, d, t->dt, {0, 0, 0}};
    pld_win_region_hooks_t hooks = {&c, it->sched_on ? region_xfer : NULL,
                                    it->poison || it->race ? region_moved : NULL};
    pld_win_view_t v = {t->rank, t->dt, t->shape, t->strides,
                        (size_t)((char *)t->buf->data + t->offset * pld_dtype_bytes(t->dt) -
                                 (char *)pld_win_dom_base(d->win))};
    pld_ev_t ev;
    if (it->trace)
        pld_tr_init(f, e->span, &ev, dir == 0 ? PLD_EV_GET : dir == 1 ? PLD_EV_PUT : PLD_EV_ADD, pld_op_name(e));
    uint64_t moved = 0;
    int why = PLD_WR_XFER;
    pld_status_t st = pld_win_region(d->win, peer, &v, off, ext, packed, dir,
                                     hooks.xfer || hooks.moved ? &hooks : NULL, &moved, &why, err, sizeof err);
    it->stats.bytes_moved += moved;
    if (st != PLD_OK)
        return why == PLD_WR_BOUNDS ? pld_rt_error(it, f, e->span, "%s %s", pld_op_name(e), err)
                                    : pld_rt_error(it, f, e->span, "%s: %s", pld_op_name(e), err);
    if (!moved)
        return PLD_OK; /* an empty box: nothing moved, nothing to report */
    if (it->trace) {
        ev.peer = peer;
        ev.peer_world = pld_win_dom_world_rank(d->win, peer);
        ev.dom = (int32_t)(d - it->doms);
        ev.obj = t->winbuf >= 0 ? it->wins[t->winbuf].name : NULL;
        ev.offset = (int64_t)(t->rank ? pld_dist_disp(d, t, off) : v.disp0);
        ev.bytes = (int64_t)moved;
        pld_trace_end(it->trace, &ev);
    }
    if (it->poison)
        pld_poison_report_remote(it, e, d, peer, t, &c.unwritten);
    return PLD_OK;
}

/* ------------------------------------------------------------ watchdog */

/* The waits: their poll loop, the status board, deadlock detection and the
 * timeout are the window layer's (src/sim_window/pld_wait.h); here they are
 * bound to the interpreter: its record of where this rank is (signal
 * handlers), the seeded schedule's held puts, errors at the wait's location,
 * trace events, the race detector's acquire. */

pld_status_t pld_dist_notify(pld_interp_t *it, frame_t *f, const pld_expr_t *e, domain_t *d, int peer, size_t disp,
                             int32_t v, int set)
{
    char err[512];
    pld_ev_t ev;
    if (it->sched_on && pld_sched_release(it, f, e->span) != PLD_OK)
        return PLD_E_RUNTIME;
    if (it->trace)
        pld_tr_init(f, e->span, &ev, PLD_EV_NOTIFY, pld_op_name(e));
    if (it->race)
        pld_race_notify_lock(it, d, peer); /* the cell and its release set change together */
    pld_status_t st = pld_win_notify(d->win, peer, disp, v, set, err, sizeof err);
    if (it->race)
        pld_race_notify_unlock(it, f, e, d, peer, disp, v, set, st == PLD_OK);
    if (st != PLD_OK)
        return pld_rt_error(it, f, e->span, "%s: %s", pld_op_name(e), err);
    if (it->trace) {
        ev.peer = peer;
        ev.peer_world = pld_win_dom_world_rank(d->win, peer);
        ev.dom = (int32_t)(d - it->doms);
        char cell[96];
        cell_name(it, d, disp, cell, sizeof cell);
        ev.obj = cell;
        ev.offset = (int64_t)disp;
        ev.value = v;
        ev.cmp = set != 0;
        pld_trace_end(it->trace, &ev);
    }
    return PLD_OK;
}

/* What a watched wait polls (pld_wait.h): a signal cell of domain d
 * (pld.system.wait, defer_wait, the collectives), the transfers of a set (d
 * their domain) or the status board (the barrier between dispatches, d NULL). */
typedef struct watch {
    pld_wait_poll_fn poll;
    const void *pctx;
    domain_t *d;
    size_t disp;
    int cmp;
    int32_t expected;
} watch_t;

/* The interpreter's side of a wait (pld_wait_hooks_t). */
typedef struct watch_ctx {
    pld_interp_t *it;
    frame_t *f;
    pld_span_t sp;
} watch_ctx_t;

static void w_blocked(void *ctx, const char *what)
{
    watch_ctx_t *c = ctx;
    pld_interp_t *it = c->it;
    pld_where_at(it, c->f, c->sp);
    snprintf(it->where.what, sizeof it->where.what, "%.*s", (int)sizeof it->where.what - 1, what);
    atomic_signal_fence(memory_order_seq_cst); /* `what` is whole before a handler sees waiting */
    it->where.waiting = 1;
}

static void w_found(void *ctx, int32_t v)
{
    watch_ctx_t *c = ctx;
    c->it->where.found = v;
}

static void w_resumed(void *ctx)
{
    watch_ctx_t *c = ctx;
    pld_where_at(c->it, c->f, c->sp);
}

static void w_done(void *ctx)
{
    watch_ctx_t *c = ctx;
    c->it->where.waiting = 0;
}

static pld_status_t w_flush(void *ctx)
{
    watch_ctx_t *c = ctx;
    return pld_sched_flush(c->it, c->f, c->sp);
}

static pld_status_t w_error(void *ctx, const char *msg)
{
    watch_ctx_t *c = ctx;
    return pld_rt_error(c->it, c->f, c->sp, "%s", msg);
}

static const pld_wait_hooks_t watch_hooks = {w_blocked, w_found, w_resumed, w_done, NULL, w_error};
static const pld_wait_hooks_t watch_hooks_sched = {w_blocked, w_found, w_resumed, w_done, w_flush, w_error};

/* Blocks until w is satisfied, under the hang watchdog (pld_wait_run): the
 * status board shows the location of e (none for the barrier between
 * dispatches), errors are located at sp. */
static pld_status_t watch_loop(pld_interp_t *it, frame_t *f, pld_span_t sp, const pld_expr_t *e, const watch_t *w,
                               pld_describe_fn describe, const void *dctx, int32_t *found)
{
    watch_ctx_t c = {it, f, sp};
    pld_rt_progress(it, e ? e->span : sp); /* exact, before it may block (pld_rt_step publishes every 64) */
    pld_wait_t pw;
    memset(&pw, 0, sizeof pw);
    pw.h = it->sched_on ? &watch_hooks_sched : &watch_hooks;
    pw.ctx = &c;
    pw.win = it->win;
    pw.sched = it->sched;
    pw.timeout_s = it->opts.timeout_s > 0 ? it->opts.timeout_s : 30.0;
    pw.wait_timeout_s = it->opts.wait_timeout_s;
    pw.watch = it->watch;
    pw.line = e ? (int32_t)e->span.line : 0;
    pw.col = e ? (int32_t)e->span.col : 0;
    pw.dom_rank = w->d ? w->d->me : it->comm.rank;
    pw.poll = w->poll;
    pw.pctx = w->pctx;
    pw.cmp = w->cmp;
    pw.expected = w->expected;
    pw.describe = describe;
    pw.dctx = dctx;
    pld_status_t st = pld_wait_run(&pw, found);
    if (pw.hang)
        it->hang = 1;
    return st;
}

/* watch_loop, recorded as a WAIT (a cell) or BARRIER (between dispatches)
 * event when tracing. */
static pld_status_t watch(pld_interp_t *it, frame_t *f, pld_span_t sp, const pld_expr_t *e, const watch_t *w,
                          pld_describe_fn describe, const void *dctx)
{
    int32_t v = 0;
    if (it->sched_on && pld_sched_release(it, f, sp) != PLD_OK)
        return PLD_E_RUNTIME;
    if (!it->trace) {
        pld_status_t st = watch_loop(it, f, sp, e, w, describe, dctx, &v);
        if (st == PLD_OK && it->race && w->d)
            pld_race_acquire(it, f, w->d, w->disp, w->cmp, w->expected);
        return st;
    }
    pld_ev_t ev;
    char what[200];
    describe(dctx, what, sizeof what);
    pld_tr_init(f, sp, &ev, w->d ? PLD_EV_WAIT : PLD_EV_BARRIER, e ? pld_op_name(e) : "between dispatches");
    ev.obj = what;
    if (w->d) {
        ev.dom = (int32_t)(w->d - it->doms);
        /* a signal cell's offset; a transfer set's wait has no cell (and no arrow in the trace) */
        ev.offset = w->poll == pld_wait_poll_cell ? (int64_t)w->disp : -1;
    }
    ev.cmp = w->cmp;
    ev.expected = w->expected;
    if (!w->poll(w->pctx, &v))
        pld_trace_begin(it->trace, &ev); /* it blocks: the log shows where, as it happens */
    pld_status_t st = watch_loop(it, f, sp, e, w, describe, dctx, &v);
    if (st == PLD_OK && it->race && w->d)
        pld_race_acquire(it, f, w->d, w->disp, w->cmp, w->expected);
    ev.value = v;
    ev.failed = st != PLD_OK;
    pld_trace_end(it->trace, &ev);
    return st;
}

static void describe_str(const void *ctx, char *buf, size_t n)
{
    snprintf(buf, n, "%s", (const char *)ctx);
}

pld_status_t pld_dist_wait_fn(pld_interp_t *it, frame_t *f, const pld_expr_t *e, domain_t *d, size_t disp, int cmp,
                              int32_t expected, pld_describe_fn describe, const void *ctx)
{
    const pld_wait_cell_t cell = {d->win, disp, cmp, expected};
    const watch_t w = {pld_wait_poll_cell, &cell, d, disp, cmp, expected};
    return watch(it, f, e->span, e, &w, describe, ctx);
}

pld_status_t pld_dist_xset_wait(pld_interp_t *it, frame_t *f, const pld_expr_t *e, domain_t *d, pld_win_xset_t *x,
                                pld_describe_fn describe, const void *ctx)
{
    const watch_t w = {pld_wait_poll_xset, x, d, 0, PLD_CMP_GE, pld_win_xset_size(x)};
    return watch(it, f, e->span, e, &w, describe, ctx);
}

pld_status_t pld_dist_wait(pld_interp_t *it, frame_t *f, const pld_expr_t *e, domain_t *d, size_t disp, int cmp,
                           int32_t expected, const char *what)
{
    return pld_dist_wait_fn(it, f, e, d, disp, cmp, expected, describe_str, what);
}

pld_status_t pld_dist_between(pld_interp_t *it, frame_t *f, pld_span_t sp, int done, int clear, int part)
{
    if (!it->win)
        return PLD_OK;
    /* part 1: the first barrier only; part 2: the second one (and the clear) */
    int first = part == 2 ? 1 : 0, last = part == 1 ? 0 : part == 2 || clear ? 1 : 0;
    for (int step = first; step <= last; step++) {
        if (step == 1 && clear) {
            /* every rank finished dispatch `done`: clear this rank's part of
             * every window, then wait until everybody did before anyone
             * writes into a peer's window again */
            for (int i = 0; i < it->ndoms; i++) {
                if (it->doms[i].win)
                    pld_win_dom_clear(it->doms[i].win);
                char err[256];
                if (it->doms[i].win && it->doms[i].hw_window &&
                    pld_hw_window_clear(it->hw, pld_win_dom_ctx(it->doms[i].win), err, sizeof err) != PLD_OK)
                    return pld_rt_error(it, f, sp, "kernel backend '%s': %s", pld_hw_name(it->hw), err);
            }
            if (it->poison)
                pld_poison_reset(it);
        }
        int64_t phase = 2 * (int64_t)done + step;
        if (it->race && step == 0)
            pld_race_barrier(it, done, 0, 0);
        pld_win_status_phase(it->win, phase);
        char what[96];
        snprintf(what, sizeof what, "%s dispatch %d: ranks that got there",
                 step == 0 ? "end of" : clear ? "windows cleared after" : "inputs and outputs between dispatches after",
                 done);
        const pld_wait_phase_t ph = {it->win, phase};
        const watch_t w = {pld_wait_poll_phase, &ph, NULL, (size_t)phase, PLD_CMP_GE, pld_win_world_size(it->win)};
        pld_status_t st = watch(it, f, sp, NULL, &w, describe_str, what);
        if (st != PLD_OK)
            return st;
        if (it->race && step == 0)
            pld_race_barrier(it, done, 1, clear);
    }
    return PLD_OK;
}

/* The window layer's sticky error (an MPI call that failed where no status
 * could be returned) as a runtime error, once; st when there is none. */
static pld_status_t sticky_error(pld_interp_t *it, pld_status_t st)
{
    char msg[256];
    if (st != PLD_OK || pld_win_sys_error(it->win, msg, sizeof msg) == PLD_OK)
        return st;
    pld_span_t none = {0, 0, 0, 0};
    return pld_rt_error(it, NULL, none, "%s", msg);
}

/* The function whose definition holds source line `line` (the last one
 * defined at or before it), "" when none. */
static const char *func_at_line(const pld_interp_t *it, uint32_t line)
{
    const char *name = "";
    for (int i = 0; i < it->p->nfuncs; i++)
        if (it->p->funcs[i]->name_span.line <= line)
            name = it->p->funcs[i]->name;
    return name;
}

/* Rank 0, after a hang: one-screen summary of every rank (its state, its
 * blocked wait, and its last progress as this rank's watch saw it) and the
 * budget. */
static void hang_summary(pld_interp_t *it)
{
    pld_span_t none = {0, 0, 0, 0};
    const int P = pld_win_world_size(it->win), reason = pld_win_status_aborted(it->win);
    const double budget = it->opts.timeout_s > 0 ? it->opts.timeout_s : 30.0;
    char limits[96];
    if (it->opts.wait_timeout_s > 0)
        snprintf(limits, sizeof limits, "budget: no progress for %g s, or one wait of %g s", budget,
                 it->opts.wait_timeout_s);
    else
        snprintf(limits, sizeof limits, "budget: no progress for %g s", budget);
    pld_diag_t *dg = pld_diag_add(&it->p->diags, PLD_SEV_NOTE, none, "the run stopped (%s; %s); state of every rank:",
                                  reason == PLD_WA_DEADLOCK        ? "deadlock"
                                  : reason == PLD_WA_TIMEOUT      ? "hang watchdog timeout: no rank made progress"
                                  : reason == PLD_WA_WAIT_TIMEOUT ? "hang watchdog: a wait passed the per-wait limit"
                                                                  : "a rank failed",
                                  limits);
    for (int r = 0; r < P; r++) {
        pld_win_status_t s;
        if (pld_win_status_get(it->win, r, &s) != PLD_OK)
            continue;
        const char *state = s.state == PLD_WS_FINISHED ? "finished" : s.state == PLD_WS_RUNNING ? "running"
                          : s.state == PLD_WS_BLOCKED ? "blocked" : "stopped";
        char prog[200] = "";
        double ago = 0;
        uint32_t line = 0, col = 0;
        if (pld_wait_watch_rank(it->watch, r, &ago, &line, &col)) {
            int n = snprintf(prog, sizeof prog, "; last progress %.2f s before the stop", ago);
            if (line > 0 && n > 0 && (size_t)n < sizeof prog)
                snprintf(prog + n, sizeof prog - (size_t)n, ", at %s:%u:%u in %s", it->p->file, line, col,
                         func_at_line(it, line));
        } else {
            snprintf(prog, sizeof prog, "; last progress not seen by rank 0");
        }
        if (s.line > 0)
            pld_diag_note(&it->p->diags, dg, none, "rank %d: %s at %s:%d:%d: %s (found %d, expected %s %d)%s", r,
                          state, it->p->file, (int)s.line, (int)s.col, s.what, (int)s.found, pld_wait_cmp_text(s.cmp),
                          (int)s.expected, prog);
        else
            pld_diag_note(&it->p->diags, dg, none, "rank %d: %s%s", r, s.what[0] ? s.what : state, prog);
    }
}

pld_status_t pld_dist_finish(pld_interp_t *it, pld_status_t st)
{
    if (it->win)
        st = sticky_error(it, st);
    if (!it->win || pld_win_world_size(it->win) == 1)
        return st;
    if (st != PLD_OK && !it->hang) {
        /* a failure: stop everyone who waits */
        pld_wait_publish(it->win, PLD_WS_FAILED, 0, 0, 0, 0, 0, 0, "failed");
        pld_win_status_abort_all(it->win, PLD_WA_FAILED);
    } else if (st == PLD_OK) {
        pld_wait_publish(it->win, PLD_WS_FINISHED, 0, 0, 0, 0, 0, 0, "finished");
    }
    if (pld_wait_drain(it->win, it->opts.timeout_s > 0 ? it->opts.timeout_s : 30.0, it->opts.wait_timeout_s,
                       it->watch))
        it->must_abort = 1;
    int P = pld_win_world_size(it->win);
    int aborted = pld_win_status_aborted(it->win);
    int waits = 0;
    for (int r = 0; aborted && r < P; r++) {
        pld_win_status_t s;
        if (pld_win_status_get(it->win, r, &s) == PLD_OK && s.line > 0)
            waits++;
    }
    if (aborted && waits && it->comm.rank == 0)
        hang_summary(it);
    if (aborted && st == PLD_OK)
        st = PLD_E_PEER; /* finished, but another rank failed or hung: its report says why */
    return sticky_error(it, st);
}

/* ------------------------------------------------------------ window state between runs
 * opts.load_windows / save_windows (pldrun --load-windows / --save-windows):
 * the windows of the program's comm domains, every member's memory with its
 * signal cells, kept in a directory between two runs, so that dispatches run
 * as separate runs see persistent windows without reset (PyPTO's
 * prepare(persistent=True, reset_persistent_windows=False)). DIR/windows.txt
 * (written by rank 0 last, once every rank saved) names the rank count, the
 * domain count and a generation; DIR/rank<R>.dom<D>.win is rank R's window of
 * domain D (pld_win_dom_save), tagged with the generation and the domain's
 * layout (members, every buffer's name, offset and size): a load checks all
 * of it before a byte changes. */

#define STATE_MANIFEST "windows.txt"

static void state_tag(const pld_interp_t *it, int d, long gen, pld_buf_t *b)
{
    const domain_t *dm = &it->doms[d];
    pld_buf_printf(b, "generation %ld\nranks %d\ndomain %d members", gen, it->comm.nranks, d);
    for (int k = 0; k < dm->n; k++)
        pld_buf_printf(b, "%s%d", k ? "," : " ", dm->members[k]);
    pld_buf_printf(b, "\nbytes %zu\n", dm->bytes);
    for (int i = 0; i < it->nwins; i++)
        if (it->wins[i].dom == d)
            pld_buf_printf(b, "buffer %s offset %zu bytes %zu\n", it->wins[i].name, it->wins[i].offset,
                           it->wins[i].bytes);
}

static pld_status_t state_refuse(pld_interp_t *it, const char *opt)
{
    for (int d = 0; d < it->ndoms; d++)
        if (it->doms[d].hw_window)
            return pld_rt_error(it, NULL, it->entry->name_span,
                                "%s: kernel backend '%s' places the windows itself; their state cannot be kept "
                                "between runs (the sim and native backends can)",
                                opt, pld_hw_name(it->hw)), PLD_E_USAGE;
    return PLD_OK;
}

/* A located error for a file whose layout differs: the first buffer of this
 * program the saved window does not hold as it is, else the header line. */
static pld_status_t state_mismatch(pld_interp_t *it, int d, const char *dir, const char *want, const char *got)
{
    for (int i = 0; i < it->nwins; i++) {
        if (it->wins[i].dom != d)
            continue;
        char line[512];
        snprintf(line, sizeof line, "buffer %s offset %zu bytes %zu\n", it->wins[i].name, it->wins[i].offset,
                 it->wins[i].bytes);
        if (!strstr(got, line)) {
            /* the saved buffers, one "name (B bytes at O)" each */
            char held[1024] = "";
            size_t len = 0;
            for (const char *b = strstr(got, "buffer "); b && len < sizeof held; b = strstr(b + 1, "\nbuffer ")) {
                char name[256];
                size_t o = 0, n = 0;
                if (sscanf(b + (*b == '\n'), "buffer %255s offset %zu bytes %zu", name, &o, &n) == 3)
                    len += (size_t)snprintf(held + len, sizeof held - len, "%s%s (%zu bytes at %zu)", len ? ", " : "",
                                            name, n, o);
            }
            return pld_rt_error(it, NULL, it->wins[i].alloc->span,
                                "window buffer '%s' (%zu bytes at offset %zu of comm domain %d) is not in the window "
                                "state saved in %s, whose rank-%d window holds %s",
                                it->wins[i].name, it->wins[i].bytes, it->wins[i].offset, d, dir, it->comm.rank,
                                len ? held : "no buffer"), PLD_E_USAGE;
        }
    }
    const char *a = want, *b = got;
    while (*a && *a == *b)
        a++, b++;
    while (a > want && a[-1] != '\n')
        a--, b--;
    return pld_rt_error(it, NULL, it->entry->name_span,
                        "the window state saved in %s does not match this program's comm domain %d: it has \"%.*s\" "
                        "where this run has \"%.*s\"",
                        dir, d, (int)strcspn(b, "\n"), b, (int)strcspn(a, "\n"), a), PLD_E_USAGE;
}

pld_status_t pld_dist_state_load(pld_interp_t *it, const char *dir)
{
    pld_span_t at = it->entry->name_span;
    pld_status_t st = state_refuse(it, "--load-windows");
    if (st != PLD_OK)
        return st;
    char path[4096];
    snprintf(path, sizeof path, "%s/" STATE_MANIFEST, dir);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return pld_rt_error(it, NULL, at, "--load-windows: no window state saved in %s (%s: %s)", dir, path,
                            strerror(errno)), PLD_E_IO;
    int ranks = -1, ndoms = -1;
    long gen = -1;
    int n = fscanf(fp, "pldrun window state\nranks %d\ndomains %d\ngeneration %ld\n", &ranks, &ndoms, &gen);
    fclose(fp);
    if (n != 3)
        return pld_rt_error(it, NULL, at, "--load-windows: %s is not a window state manifest of pldrun", path),
               PLD_E_IO;
    if (ranks != it->comm.nranks)
        return pld_rt_error(it, NULL, at,
                            "--load-windows: the window state in %s was saved by a run on %d rank%s; this run has %d",
                            dir, ranks, ranks == 1 ? "" : "s", it->comm.nranks), PLD_E_USAGE;
    if (ndoms != it->ndoms)
        return pld_rt_error(it, NULL, at,
                            "--load-windows: the window state in %s holds %d comm-domain window%s; this program "
                            "has %d (another program's state?)",
                            dir, ndoms, ndoms == 1 ? "" : "s", it->ndoms), PLD_E_USAGE;
    it->state_gen = gen;
    for (int d = 0; d < it->ndoms && st == PLD_OK; d++) {
        domain_t *dm = &it->doms[d];
        if (dm->me < 0 || !dm->win)
            continue;
        pld_buf_t tag;
        pld_buf_init(&tag);
        state_tag(it, d, gen, &tag);
        snprintf(path, sizeof path, "%s/rank%d.dom%d.win", dir, it->comm.rank, d);
        char got[4096], err[4352];
        st = pld_win_dom_load(dm->win, path, pld_buf_str(&tag), got, sizeof got, err, sizeof err);
        if (st == PLD_E_USAGE)
            st = state_mismatch(it, d, dir, pld_buf_str(&tag), got);
        else if (st != PLD_OK)
            st = (pld_rt_error(it, NULL, at, "--load-windows: %s", err), st == PLD_E_NOMEM ? st : PLD_E_IO);
        pld_buf_fini(&tag);
    }
    return st;
}

pld_status_t pld_dist_state_save(pld_interp_t *it, const char *dir)
{
    pld_span_t at = it->entry->name_span;
    pld_status_t st = state_refuse(it, "--save-windows");
    long gen = it->state_gen + 1;
    char path[4096], err[4352];
    for (int d = 0; d < it->ndoms && st == PLD_OK; d++) {
        domain_t *dm = &it->doms[d];
        if (dm->me < 0 || !dm->win)
            continue;
        pld_buf_t tag;
        pld_buf_init(&tag);
        state_tag(it, d, gen, &tag);
        snprintf(path, sizeof path, "%s/rank%d.dom%d.win", dir, it->comm.rank, d);
        st = pld_win_dom_save(dm->win, path, pld_buf_str(&tag), err, sizeof err);
        if (st != PLD_OK)
            st = (pld_rt_error(it, NULL, at, "--save-windows: %s", err), st == PLD_E_NOMEM ? st : PLD_E_IO);
        pld_buf_fini(&tag);
    }
    return st;
}

pld_status_t pld_dist_state_commit(pld_interp_t *it, const char *dir)
{
    if (it->comm.rank != 0)
        return PLD_OK;
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/" STATE_MANIFEST, dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *fp = fopen(tmp, "w");
    int ok = fp && fprintf(fp, "pldrun window state\nranks %d\ndomains %d\ngeneration %ld\n", it->comm.nranks,
                           it->ndoms, it->state_gen + 1) > 0;
    if (fp && fclose(fp) != 0)
        ok = 0;
    if (!ok || rename(tmp, path) != 0) {
        int e = errno;
        remove(tmp);
        return pld_rt_error(it, NULL, it->entry->name_span, "--save-windows: cannot write %s: %s", path, strerror(e)),
               PLD_E_IO;
    }
    return PLD_OK;
}
