/* pld_poison.c - the interpreter's side of --poison (src/debug,
 * pld_debug.h: patterns, shadow windows, never-written reads, reports).
 *
 * Window bytes that were never written read as a NaN (float views) or a byte
 * pattern (integer views), and every read of them is a warning, once per
 * source site (docs/debugging.md, "--poison"). What needs the program stays
 * here: the static classification of the window buffers used as signals
 * (they stay zero, pld_semantics.md §1.5, and are neither filled nor ever
 * reported: their shadow is all ones), which walks the AST before the run;
 * the window buffers behind tensors; which operand of an op it only writes.
 * The rest is the library's, entered through it->debug (it->poison is
 * it->debug when --poison is on, else NULL).
 *
 * Layer: base (called by pld_dist.c, the ops, pld_op_eval and the walker). */
#include "pld_interp_int.h"
#include "pld_mem.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ classification */

#define ID_WIN 100000 /* ids >= ID_WIN name window buffer (id - ID_WIN); below: a parameter */

typedef struct cls {
    pld_interp_t *it;
    uint64_t *sig;       /* per function: bit i = parameter i is used as a signal (i < 64) */
    int fi;              /* the function being walked */
    int changed;
    const char *names[512];
    int ids[512];
    int n;
} cls_t;

/* What a tensor expression is a view of: a parameter of the function, a
 * window buffer (HOST), or -1. Views and ops that return their first operand
 * (slices, pld.window, collectives returning their target) pass through. */
static int buf_of_alloc(const pld_interp_t *it, const pld_expr_t *e)
{
    for (int i = 0; i < it->nwins; i++)
        if (it->wins[i].alloc == e)
            return i;
    return -1;
}

static int root_of(cls_t *c, const pld_expr_t *e)
{
    if (!e)
        return -1;
    switch (e->kind) {
    case PLD_EX_NAME:
        for (int i = c->n - 1; i >= 0; i--)
            if (c->names[i] == e->u.name)
                return c->ids[i];
        return -1;
    case PLD_EX_SUBSCRIPT:
        return root_of(c, e->u.sub.obj);
    case PLD_EX_CALL: {
        if (e->op == PLD_OPID_PLD_ALLOC_WINDOW_BUFFER) {
            int b = buf_of_alloc(c->it, e);
            return b >= 0 ? ID_WIN + b : -1;
        }
        if (e->op < 0 || !e->bound)
            return -1;
        int k = pld_op_coll_kind(e->op);
        int ti = k < 0 || k == PLD_OPID_PLD_BARRIER ? 0
                 : (k == PLD_OPID_PLD_ALLGATHER || k == PLD_OPID_PLD_ALL_TO_ALL || k == PLD_OPID_PLD_ALL_TO_ALL_V) ? 1
                                                                                                                 : 0;
        return root_of(c, e->bound[ti]);
    }
    default:
        return -1;
    }
}

static void mark(cls_t *c, int id)
{
    if (id >= ID_WIN) {
        c->it->wins[id - ID_WIN].signal = 1;
    } else if (id >= 0 && id < 64 && !(c->sig[c->fi] >> id & 1)) {
        c->sig[c->fi] |= (uint64_t)1 << id;
        c->changed = 1;
    }
}

/* 1 unless the atomic= argument is absent, 0 or AtomicType.None_. */
static int atomic_arg(const pld_expr_t *a)
{
    if (!a)
        return 0;
    if (a->kind == PLD_EX_INT)
        return a->u.ival != 0;
    if (a->kind == PLD_EX_ATTR)
        return strcmp(a->u.attr.attr, "None_") != 0 && strcmp(a->u.attr.attr, "None") != 0;
    return a->kind != PLD_EX_NONE;
}

static void cls_expr(cls_t *c, const pld_expr_t *e);

static void cls_call(cls_t *c, const pld_expr_t *e)
{
    pld_interp_t *it = c->it;
    cls_expr(c, e->u.call.fn);
    for (int i = 0; i < e->u.call.nargs; i++)
        cls_expr(c, e->u.call.args[i].value);
    if (e->op >= 0 && e->bound) {
        const pld_op_info_t *info = pld_op_info((pld_op_id_t)e->op);
        const int atomic_op = e->op == PLD_OPID_PLD_TILE_REMOTE_STORE || e->op == PLD_OPID_PLD_TENSOR_REMOTE_STORE ||
                              e->op == PLD_OPID_PLD_PUT || e->op == PLD_OPID_PLD_TILE_PUT;
        int atomic = 0;
        for (int i = 0; i < info->nparams && atomic_op; i++)
            if (strcmp(info->params[i].name, "atomic") == 0)
                atomic = atomic_arg(e->bound[i]);
        for (int i = 0; i < info->nparams; i++) {
            const char *pn = info->params[i].name;
            int role = strcmp(pn, "signal") == 0 || strcmp(pn, "recv_counts") == 0 ||
                       (e->op == PLD_OPID_PLD_NOTIFY && strcmp(pn, "target") == 0) ||
                       (atomic && (strcmp(pn, "target") == 0 || strcmp(pn, "dst") == 0));
            if (role && e->bound[i])
                mark(c, root_of(c, e->bound[i]));
        }
        /* an integer cell read as a scalar (pl.tensor.read): an epoch, a counter, a flag, state
         * that relies on fresh windows being zero like a signal (§1.5) */
        if (e->op == PLD_OPID_TENSOR_READ && e->bound[0] && e->bound[0]->type &&
            !pld_dtype_is_float(e->bound[0]->type->dtype))
            mark(c, root_of(c, e->bound[0]));
        /* the dtype that fills a buffer: its allocation's, else its first typed view's */
        if (e->op == PLD_OPID_PLD_WINDOW && e->bound[0] && e->bound[2]) {
            int b = root_of(c, e->bound[0]) - ID_WIN;
            if (b >= 0 && it->wins[b].fill_dt == PLD_DT_NONE)
                it->wins[b].fill_dt = pld_expr_dtype(it, e->bound[2]);
        }
        if (e->op == PLD_OPID_PLD_ALLOC_WINDOW_BUFFER && e->bound[1]) {
            int b = buf_of_alloc(it, e);
            if (b >= 0)
                it->wins[b].fill_dt = pld_expr_dtype(it, e->bound[1]);
        }
        return;
    }
    /* a call of one of the program's functions: its signal parameters make
     * signals of the arguments passed to them */
    if (e->op < 0 && e->aux >= 0 && e->aux < it->p->nfuncs) {
        const pld_func_t *g = it->p->funcs[e->aux];
        int pos = 0;
        for (int i = 0; i < e->u.call.nargs; i++) {
            int k = -1;
            if (!e->u.call.args[i].kw) {
                k = pos++;
            } else {
                for (int j = 0; j < g->nparams; j++)
                    if (g->params[j].name == e->u.call.args[i].kw)
                        k = j;
            }
            if (k >= 0 && k < 64 && (c->sig[e->aux] >> k & 1))
                mark(c, root_of(c, e->u.call.args[i].value));
        }
    }
}

static void cls_expr(cls_t *c, const pld_expr_t *e)
{
    if (!e)
        return;
    switch (e->kind) {
    case PLD_EX_CALL: cls_call(c, e); break;
    case PLD_EX_UNARY: cls_expr(c, e->u.un.a); break;
    case PLD_EX_BINARY: cls_expr(c, e->u.bin.a); cls_expr(c, e->u.bin.b); break;
    case PLD_EX_SUBSCRIPT:
        cls_expr(c, e->u.sub.obj);
        for (int i = 0; i < e->u.sub.n; i++)
            cls_expr(c, e->u.sub.items[i]);
        break;
    case PLD_EX_LIST: case PLD_EX_TUPLE:
        for (int i = 0; i < e->u.seq.n; i++)
            cls_expr(c, e->u.seq.items[i]);
        break;
    default: break;
    }
}

static void cls_block(cls_t *c, const pld_block_t *b);

static void cls_stmt(cls_t *c, const pld_stmt_t *s)
{
    switch (s->kind) {
    case PLD_ST_EXPR: cls_expr(c, s->u.expr); break;
    case PLD_ST_ASSIGN: {
        const pld_expr_t *t = s->u.assign.target;
        cls_expr(c, s->u.assign.value);
        int id = root_of(c, s->u.assign.value);
        if (t->kind == PLD_EX_NAME && id >= 0 && c->n < 512) {
            c->names[c->n] = t->u.name;
            c->ids[c->n++] = id;
        }
        break;
    }
    case PLD_ST_RETURN:
        for (int i = 0; i < s->u.ret.n; i++)
            cls_expr(c, s->u.ret.vals[i]);
        break;
    case PLD_ST_IF: cls_expr(c, s->u.if_.cond); cls_block(c, &s->u.if_.then); cls_block(c, &s->u.if_.els); break;
    case PLD_ST_WHILE: cls_expr(c, s->u.while_.cond); cls_block(c, &s->u.while_.body); break;
    case PLD_ST_FOR: cls_expr(c, s->u.for_.iter); cls_block(c, &s->u.for_.body); break;
    case PLD_ST_WITH: cls_expr(c, s->u.with.item); cls_block(c, &s->u.with.body); break;
    default: break;
    }
}

static void cls_block(cls_t *c, const pld_block_t *b)
{
    for (int i = 0; i < b->n; i++)
        cls_stmt(c, b->stmts[i]);
}

void pld_poison_classify(pld_interp_t *it, const pld_func_t *host)
{
    (void)host;
    for (int i = 0; i < it->nwins; i++) {
        it->wins[i].fill_dt = PLD_DT_NONE;
        it->wins[i].signal = it->wins[i].synth;
    }
    const pld_program_t *p = it->p;
    cls_t *c = pld_mem_calloc(1, sizeof *c);
    uint64_t *sig = pld_mem_calloc((size_t)p->nfuncs + 1, sizeof *sig);
    if (!c || !sig) {
        /* no memory for the analysis: every buffer a signal (nothing poisoned, nothing reported) */
        for (int i = 0; i < it->nwins; i++)
            it->wins[i].signal = 1;
        pld_mem_free(c);
        pld_mem_free(sig);
        return;
    }
    c->it = it;
    c->sig = sig;
    /* the CHIP rail's synthesized builtin kernels (self.__builtin_all_to_all_v__<dt>, pld_lower.c) have
     * no body to look into: their signal and recv_counts parameters are the collective's */
    for (int f = 0; f < p->nfuncs; f++)
        if (strncmp(p->funcs[f]->name, "__builtin_", 10) == 0)
            for (int i = 0; i < p->funcs[f]->nparams && i < 64; i++)
                if (strcmp(p->funcs[f]->params[i].name, "signal") == 0 ||
                    strcmp(p->funcs[f]->params[i].name, "recv_counts") == 0)
                    sig[f] |= (uint64_t)1 << i;
    /* parameters used as signals flow up through calls: iterate to a fixed point */
    for (int pass = 0; pass <= p->nfuncs + 1; pass++) {
        c->changed = 0;
        for (int f = 0; f < p->nfuncs; f++) {
            const pld_func_t *fn = p->funcs[f];
            if (fn->is_raw)
                continue;
            c->fi = f;
            c->n = 0;
            for (int i = 0; i < fn->nparams && c->n < 512; i++) {
                c->names[c->n] = fn->params[i].name;
                c->ids[c->n++] = i;
            }
            cls_block(c, &fn->body);
        }
        if (!c->changed)
            break;
    }
    pld_mem_free(sig);
    pld_mem_free(c);
}

/* ------------------------------------------------------------ windows */

/* Pattern in the data of this rank's non-signal buffers of domain d, ones in
 * the shadow of its signal buffers. */
static void prime(pld_interp_t *it, int d, int data, int shadow)
{
    for (int i = 0; i < it->nwins; i++) {
        winbuf_t *w = &it->wins[i];
        if (w->dom != d || !w->buf)
            continue;
        if (data && !w->signal)
            pld_debug_poison_fill(w->buf->data, w->bytes, w->fill_dt);
        if (shadow && w->signal && w->buf->shadow)
            memset(w->buf->shadow, 1, w->bytes);
    }
}

pld_status_t pld_poison_create(pld_interp_t *it)
{
    /* the pattern first: the shadow windows' creation ends with a barrier
     * over the members, so no peer writes into this window before */
    for (int d = 0; d < it->ndoms; d++)
        if (it->doms[d].me >= 0)
            prime(it, d, 1, 0);
    for (int d = 0; d < it->ndoms; d++) {
        domain_t *dm = &it->doms[d];
        if (dm->me < 0)
            continue;
        char err[1024];
        pld_status_t st = pld_debug_poison_shadow(it->win, d, dm->members, dm->n, dm->bytes, &dm->shadow, err,
                                                  sizeof err);
        if (st != PLD_OK)
            return pld_rt_error(it, NULL, it->entry->name_span, "%s", err);
        for (int i = 0; i < it->nwins; i++)
            if (it->wins[i].dom == d && it->wins[i].buf)
                it->wins[i].buf->shadow = (uint8_t *)pld_win_dom_base(dm->shadow) + it->wins[i].offset;
        prime(it, d, 0, 1); /* idempotent with a peer's 1s already there */
    }
    return PLD_OK;
}

void pld_poison_reset(pld_interp_t *it)
{
    for (int d = 0; d < it->ndoms; d++) {
        if (it->doms[d].me < 0 || !it->doms[d].shadow)
            continue;
        pld_win_dom_clear(it->doms[d].shadow);
        prime(it, d, 1, 1);
    }
}

void pld_poison_fini(pld_interp_t *it)
{
    for (int i = 0; i < it->nwins; i++)
        if (it->wins[i].buf)
            it->wins[i].buf->shadow = NULL;
    for (int d = 0; d < it->ndoms; d++)
        if (it->doms[d].shadow) {
            pld_win_dom_destroy(it->doms[d].shadow);
            it->doms[d].shadow = NULL;
        }
}

/* ------------------------------------------------------------ reads and writes */

pld_status_t pld_poison_run(pld_interp_t *it, domain_t *d, int peer, size_t disp, size_t bytes, int dir,
                            pld_poison_acc_t *acc, char *err, size_t errn)
{
    return pld_debug_poison_run(it->debug, d->shadow, peer, disp, bytes, dir, acc, err, errn);
}

/* The window buffer behind buffer b as the library names it: 1 and *out, or 0. */
static int window_of(const pld_interp_t *it, const pld_buffer_t *b, pld_debug_window_t *out)
{
    for (int i = 0; i < it->nwins; i++)
        if (it->wins[i].buf == b) {
            const winbuf_t *w = &it->wins[i];
            out->name = w->name;
            out->offset = w->offset;
            out->bytes = w->bytes;
            out->synth = w->synth;
            return 1;
        }
    return 0;
}

static pld_debug_at_t at_of(const pld_expr_t *e)
{
    pld_debug_at_t at = {e, e->span, e->op};
    return at;
}

void pld_poison_report_remote(pld_interp_t *it, const pld_expr_t *e, const domain_t *d, int peer,
                              const pld_tensor_t *t, const pld_poison_acc_t *acc)
{
    pld_debug_window_t w;
    if (!window_of(it, t->buf, &w) || !acc->n)
        return;
    pld_poison_acc_t rel = {acc->n, acc->lo - w.offset, acc->hi - w.offset};
    pld_debug_at_t at = at_of(e);
    pld_debug_poison_report(it->debug, &at, &w, d->members[peer], t->dt, &rel);
}

typedef struct scan {
    const uint8_t *shadow;
    pld_debug_acc_t acc;
} scan_t;

static void scan_run(void *ctx, int64_t at, int64_t bytes)
{
    scan_t *s = ctx;
    pld_debug_poison_scan(&s->acc, s->shadow, at, bytes);
}

void pld_poison_check_local(pld_interp_t *it, const pld_expr_t *e, const pld_tensor_t *t, const int64_t *off,
                            const int64_t *ext)
{
    if (!t->buf->shadow)
        return;
    scan_t s = {t->buf->shadow, {0, 0, 0}};
    pld_tensor_box_runs(t, off, ext, scan_run, &s);
    pld_debug_window_t w;
    if (s.acc.n && window_of(it, t->buf, &w)) {
        pld_debug_at_t at = at_of(e);
        pld_debug_poison_report(it->debug, &at, &w, it->comm.rank, t->dt, &s.acc);
    }
}

/* ------------------------------------------------------------ tiles */

pld_status_t pld_poison_tile_created(pld_interp_t *it, const pld_expr_t *e, pld_tile_t *t)
{
    (void)it;
    int64_t n = 1;
    for (int d = 0; d < t->rank; d++)
        n *= t->shape[d];
    pld_status_t st = pld_debug_poison_tile_new(t->data, n, t->dt, &t->unw);
    if (st != PLD_OK)
        return st;
    t->born = e->span;
    return PLD_OK;
}

/* 1 when operand i of op e is only written (or is scratch), not read. */
static int write_only(const pld_expr_t *e, int i)
{
    if (e->op < 0)
        return 0;
    const pld_op_info_t *info = pld_op_info((pld_op_id_t)e->op);
    if (i < 0 || i >= info->nparams)
        return 0;
    const char *pn = info->params[i].name;
    if (strcmp(pn, "target") == 0 || strcmp(pn, "dst") == 0 || strncmp(pn, "tmp", 3) == 0 ||
        strncmp(pn, "stage", 5) == 0)
        return 1;
    return i == 0 && (e->op == PLD_OPID_TILE_WRITE || e->op == PLD_OPID_TENSOR_WRITE ||
                      e->op == PLD_OPID_TILE_SET_VALIDSHAPE);
}

void pld_poison_tile_read(pld_interp_t *it, const pld_expr_t *e, int i, const pld_tile_t *t)
{
    if (!t->unw || write_only(e, i))
        return;
    const pld_expr_t *a = pld_op_arg(e, i);
    pld_debug_at_t at = at_of(e);
    pld_debug_poison_tile_read(it->debug, &at, a && a->kind == PLD_EX_NAME ? a->u.name : NULL, t->rank, t->shape,
                               t->valid, t->unw, t->dt, t->born);
}
