/* pld_coll.c - collectives (pld.tensor.allreduce, barrier, broadcast,
 * reduce_scatter, allgather, all_to_all, all_to_all_v) on the three rails:
 * InCore composite (in a kernel), HOST builtin (HOST orchestrator) and the
 * CHIP rail (all_to_all_v in an Orchestration function).
 *
 * Every collective replays the wire protocol of its rail
 * (docs/pld_semantics.md §1.9, §2.14-§2.20): the self-clearing credit barrier
 * on the signal cells (AtomicAdd +1 into every peer's cell for this rank, wait
 * Ge on the own cells, and an epilogue that subtracts every credit received),
 * the documented chunking / tiling with its per-chunk barriers, and the
 * documented fold orders. So a rank that calls a different collective, or
 * calls it with a different shape, leaves the others waiting and the hang
 * watchdog of pld_dist.c reports it; and a completed call leaves every signal
 * cell it used at zero on every rank.
 *
 * Data moves with pld_dist_region (remote ranks) or directly in the local
 * window memory (this rank), exactly like the primitive ops. The multi-block
 * HOST/CHIP forms (core_num > 1) run their blocks in lockstep: every step
 * first issues the notifies of every block, then waits for every block, so no
 * block ever waits for something a later block of the same rank must do. */
#include "pld_interp_int.h"
#include "pld_assert.h"
#include "pld_mem.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define HOST_TILE 256            /* elements per builtin tile */
#define MESH_CHUNK_BYTES 16384   /* InCore composite chunk */
#define BUILTIN_MAX_RANKS 16     /* builtins silently do nothing above this */
/* The mesh allreduces merge consecutive chunks (tiles) into one step of at
 * most this many bytes per peer (merged_step; docs/transport.md). */
#define MERGE_BYTES ((int64_t)8 << 20)
#ifndef PLD_TESTING
#define RING_STEP_BYTES ((int64_t)128 << 10) /* the InCore ring's steps: within the cache (ring_step) */
#else
#define RING_STEP_BYTES ((int64_t)32 << 10) /* pldrun_testing: 2 sub-chunks, so the tests' segments take several steps */
#endif

static int target_index(int op)
{
    return op == PLD_OPID_PLD_BARRIER ? 0
           : (op == PLD_OPID_PLD_ALLGATHER || op == PLD_OPID_PLD_ALL_TO_ALL || op == PLD_OPID_PLD_ALL_TO_ALL_V) ? 1 : 0;
}

static int64_t imod(int64_t a, int64_t m)
{
    int64_t r = a % m;
    return r < 0 ? r + m : r;
}

static int64_t cdiv(int64_t a, int64_t b)
{
    return b > 0 ? (a + b - 1) / b : 0;
}

/* Element count of the shape of a tensor that exists (its size was checked
 * when it was made, so it fits; pld_size.h all the same). */
static int64_t numel_of(int rank, const int64_t *shape)
{
    int64_t n;
    return pld_size_numel(rank, shape, &n) == PLD_SIZE_OK ? n : -1;
}

/* ------------------------------------------------------------ call state */

typedef struct coll {
    pld_interp_t *it;
    frame_t *f;
    const pld_expr_t *e;           /* the call: a pld.tensor.* op, a builtin.tensor.* dispatch or a
                                      builtin kernel call (its operands bound like the collective's) */
    int kind;                      /* the collective (PLD_OPID_PLD_ALLREDUCE ..), pld_op_coll_kind */
    const char *name;              /* short op name, e.g. "allreduce" */
    domain_t *d;
    int P, me;
    const pld_tensor_t *sig;       /* the signal of the current protocol */
    int ring;                      /* cells [row, rank] instead of [rank, lane] */
    char sigtext[48];              /* printed signal expression */
    const pld_tensor_t *tgt;       /* the target (barrier: the signal) */
    pld_tensor_t sigdesc;          /* a copy of the signal's view (its buffer is the window's, alive all run) */
    int has_sig;
} coll_t;

static const char *rail_of(const coll_t *c)
{
    return c->f->ctx == PLD_CTX_HOST ? "HOST builtin" : c->f->ctx == PLD_CTX_CHIP ? "CHIP builtin" : "InCore composite";
}

/* The collective's source name (pld.tensor.<op>) for messages: the same on
 * every rail and before or after the lowering (pld_lower.c). */
static const char *cname(const coll_t *c)
{
    return pld_op_info((pld_op_id_t)c->kind)->name;
}

/* Evaluates operand i of the collective, which must be a tensor. */
static pld_status_t cneed(coll_t *c, int i, pld_value_t *v)
{
    pld_status_t st = pld_op_eval(c->it, c->f, c->e, i, v);
    if (st != PLD_OK || (v->kind == PLD_V_TENSOR && v->u.obj))
        return st;
    pld_vkind_t got = v->kind;
    pld_value_release(v);
    return pld_rt_error(c->it, c->f, pld_op_arg(c->e, i) ? pld_op_arg(c->e, i)->span : c->e->span,
                        "%s: '%s' must be a tensor, found a %s", cname(c), pld_op_info((pld_op_id_t)c->kind)->params[i].name,
                        pld_vkind_name(got));
}

/* A warning, once per call site and kind; rank-symmetric kinds only on
 * domain rank 0. The kind is recognised by a marker its messages contain. */
enum { W_GUARD, W_COUNTS, W_NR };
static const char *const warn_marker[] = {"does nothing", "send_counts[", "signal dim 0"};

static void warn_once(coll_t *c, int kind, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static void warn_once(coll_t *c, int kind, const char *fmt, ...)
{
    if (kind != W_COUNTS && c->me != 0)
        return; /* rank-symmetric: domain rank 0 reports it */
    pld_diag_list_t *l = &c->it->p->diags;
    for (const pld_diag_t *g = l->head; g; g = g->next)
        if (g->sev == PLD_SEV_WARNING && g->span.off == c->e->span.off && g->span.line == c->e->span.line &&
            g->msg && strstr(g->msg, warn_marker[kind]))
            return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pld_diag_add(l, PLD_SEV_WARNING, c->e->span, "%s", msg);
}

static pld_status_t oom(coll_t *c)
{
    return pld_rt_error(c->it, c->f, c->e->span, "%s: out of memory", cname(c));
}

static void set_sigtext(coll_t *c, const pld_expr_t *sig_expr)
{
    if (!sig_expr) {
        snprintf(c->sigtext, sizeof c->sigtext, "<synthesized signal>");
        return;
    }
    pld_buf_t b;
    pld_buf_init(&b);
    pld_ast_print_expr(sig_expr, &b);
    snprintf(c->sigtext, sizeof c->sigtext, "%s", b.oom ? "signal" : pld_buf_str(&b));
    pld_buf_fini(&b);
}

/* ------------------------------------------------------------ signal cells */

/* Displacement of the cell of rank `r` in slot k: [r, k] for mesh signals
 * (k = lane; rank-1 signals have one lane), [k, r] for ring signals (k = row). */
static size_t cell_disp(const coll_t *c, int64_t r, int64_t k)
{
    int64_t idx[2];
    if (c->sig->rank == 1) {
        idx[0] = r;
    } else if (c->ring) {
        idx[0] = k;
        idx[1] = r;
    } else {
        idx[0] = r;
        idx[1] = k;
    }
    return pld_dist_disp(c->d, c->sig, idx);
}

/* Bit q of a mask of domain ranks. */
#define RBIT(q) ((uint64_t)1 << (q))

static uint64_t all_peers(const coll_t *c)
{
    uint64_t m = c->P >= 64 ? ~(uint64_t)0 : RBIT(c->P) - 1;
    return m & ~RBIT(c->me);
}

/* lead, then "rank 2" or "ranks 2, 3" (the ranks of mask, ascending), into
 * buf (n bytes); returns the length (n or more when cut short). */
static size_t rank_list(char *buf, size_t n, const char *lead, uint64_t mask, int P)
{
    int cnt = 0;
    for (int q = 0; q < P; q++)
        cnt += (mask & RBIT(q)) != 0;
    size_t k = (size_t)snprintf(buf, n, "%srank%s", lead, cnt > 1 ? "s" : "");
    for (int q = 0, i = 0; q < P && k < n; q++)
        if (mask & RBIT(q))
            k += (size_t)snprintf(buf + k, n - k, "%s %d", i++ ? "," : "", q);
    return k;
}

/* "all_to_all_v: wait for the rows to and from ranks 2, 3 (messages across
 * hosts) in f": a wait for two-sided transfers (pld_win_xset), of `what`
 * ("rows", "parts") with the members in `far`. */
typedef struct far_wait {
    const coll_t *c;
    uint64_t far;
    const char *what;
} far_wait_t;

static void describe_far_wait(const void *ctx, char *what, size_t n)
{
    const far_wait_t *w = ctx;
    const coll_t *c = w->c;
    char lead[80];
    snprintf(lead, sizeof lead, "%s: wait for the %s to and from ", c->name, w->what);
    const size_t k = rank_list(what, n, lead, w->far, c->P);
    if (k < n)
        snprintf(what + k, n - k, " (messages across hosts) in %s", c->f->fn ? c->f->fn->name : "?");
}

/* Credit +n into the cell for this rank (slot k) of every peer in `to`: n
 * barriers' arrivals at once (merged steps). */
static pld_status_t arrive_to(coll_t *c, int64_t k, int32_t n, uint64_t to)
{
    for (int q = 0; q < c->P; q++) {
        if (q == c->me || !(to & RBIT(q)))
            continue;
        pld_status_t st = pld_dist_notify(c->it, c->f, c->e, c->d, q, cell_disp(c, c->me, k), n, 0);
        if (st != PLD_OK)
            return st;
    }
    return PLD_OK;
}

static pld_status_t arrive_n(coll_t *c, int64_t k, int32_t n)
{
    return arrive_to(c, k, n, all_peers(c));
}

/* Credit +1 into every peer's cell for this rank (slot k). */
static pld_status_t arrive(coll_t *c, int64_t k)
{
    return arrive_n(c, k, 1);
}

/* "allreduce (mesh): wait on sig[q, k] >= g in f" (formatted only when the
 * wait blocks or fails). */
typedef struct coll_wait {
    const coll_t *c;
    int q;
    int64_t k;
    int32_t g;
} coll_wait_t;

static void describe_coll_wait(const void *ctx, char *what, size_t n)
{
    const coll_wait_t *w = ctx;
    const coll_t *c = w->c;
    const char *fn = c->f->fn ? c->f->fn->name : "?";
    if (c->sig->rank == 1)
        snprintf(what, n, "%s: wait on %s[%d] >= %d in %s", c->name, c->sigtext, w->q, (int)w->g, fn);
    else
        snprintf(what, n, "%s: wait on %s[%lld, %lld] >= %d in %s", c->name, c->sigtext,
                 (long long)(c->ring ? w->k : w->q), (long long)(c->ring ? w->q : w->k), (int)w->g, fn);
}

/* Waits until this rank's cell of every peer in `from` (slot k) is >= g. */
static pld_status_t await_from(coll_t *c, int64_t k, int32_t g, uint64_t from)
{
    for (int q = 0; q < c->P; q++) {
        if (q == c->me || !(from & RBIT(q)))
            continue;
        coll_wait_t w = {c, q, k, g};
        pld_status_t st = pld_dist_wait_fn(c->it, c->f, c->e, c->d, cell_disp(c, q, k), PLD_CMP_GE, g,
                                           describe_coll_wait, &w);
        if (st != PLD_OK)
            return st;
    }
    return PLD_OK;
}

static pld_status_t await_all(coll_t *c, int64_t k, int32_t g)
{
    return await_from(c, k, g, all_peers(c));
}

/* tracing: lane b of `lanes` goes on block b's track (the HOST builtin
 * kernel runs one block per lane on a card; here they take turns) */
static void lane_track(coll_t *c, int64_t b, int64_t lanes)
{
    if (c->it->trace && lanes > 1) {
        c->f->block_idx = b;
        c->f->block_num = lanes;
    }
}

/* A PHASE event of c (tracing): begins at once, ended by phase_end. */
static void phase_begin(coll_t *c, pld_ev_t *ev, const char *name)
{
    pld_tr_init(c->f, c->e->span, ev, PLD_EV_PHASE, name);
    ev->obj = c->sigtext;
    pld_trace_begin(c->it->trace, ev);
}

static pld_status_t phase_end(coll_t *c, pld_ev_t *ev, pld_status_t st)
{
    ev->failed = st != PLD_OK;
    pld_trace_end(c->it->trace, ev);
    return st;
}

/* n barriers of slot k at once: credit +n, then wait for credit g from every
 * peer (n = 1: one barrier). */
static pld_status_t barrier_n(coll_t *c, int64_t k, int32_t n, int32_t g)
{
    pld_ev_t ev;
    char name[80];
    if (c->it->trace) {
        if (n > 1)
            snprintf(name, sizeof name, "%d merged barriers (slot %lld, credit %d)", (int)n, (long long)k, (int)g);
        else
            snprintf(name, sizeof name, g == 1 ? "entry barrier (slot %lld)" : "barrier (slot %lld, credit %d)",
                     (long long)k, (int)g);
        phase_begin(c, &ev, name);
    }
    pld_status_t st = arrive_n(c, k, n);
    st = st != PLD_OK ? st : await_all(c, k, g);
    return c->it->trace ? phase_end(c, &ev, st) : st;
}

static pld_status_t barrier(coll_t *c, int64_t k, int32_t g)
{
    return barrier_n(c, k, 1, g);
}

/* How many consecutive chunks (tiles) of `unit` elements of dtype size esz
 * one step of a mesh allreduce covers: as many as fit in MERGE_BYTES, on
 * every transport (across hosts each barrier and each transfer costs a
 * network round trip; on one host a per-chunk barrier costs a few atomics,
 * but a scheduler round when ranks share cores, and a merged step reads and
 * stores each range once: docs/transport.md, "Merged collective steps");
 * 1 under --collective-steps chunk. A merged step reads its whole range from
 * every peer, then passes its barriers at once (one notify of +n per peer,
 * one wait for the last credit), then stores: every rank still reads every
 * chunk before any rank stores it, and every element is folded in the same
 * order, so the results are bit-identical, and the signal cells see the same
 * total credit (a mismatched call still hangs at the same final count). Only
 * the intermediate cell values a per-chunk protocol passes through are
 * skipped; no correct program can observe them. */
static int64_t merged_step(const coll_t *c, int64_t unit, int esz)
{
    if (c->it->opts.chunk_steps)
        return 1;
    int64_t n = MERGE_BYTES / (unit * esz);
    return n > 1 ? n : 1;
}

/* The InCore ring's sub-chunks of `unit` elements per step: merged_step's,
 * but at most RING_STEP_BYTES. A ring step streams one segment (the left
 * neighbour's, this rank's, the fold, the store), and a bigger one spills the
 * cache: per 1 Mi FP32 call at P = 4 on one host, 14 ms at 1 MiB steps, 2-3
 * ms at 64-128 KiB, 8.5 ms per chunk (docs/transport.md, "The InCore ring"). */
static int64_t ring_step(const coll_t *c, int64_t unit, int esz)
{
    const int64_t g = merged_step(c, unit, esz), cap = RING_STEP_BYTES / (unit * esz);
    return g < cap ? g : cap > 1 ? cap : 1;
}

/* Whether a row exchange sends its puts as one batch (one flush for all):
 * over RMA windows (rma, and hybrid towards another host), where each flush
 * costs a round trip; nobody reads the rows before the barrier after them. */
static int rows_batched(const coll_t *c)
{
    const pld_win_transport_t tr = pld_win_dom_transport(c->d->win);
    return (tr == PLD_WIN_HYBRID || tr == PLD_WIN_RMA) && pld_dist_can_batch(c->it);
}

/* Epilogue: subtract the n credits received from every peer (self-notify). */
static pld_status_t clear(coll_t *c, int64_t k, int32_t n)
{
    if (n == 0)
        return PLD_OK;
    pld_ev_t ev;
    if (c->it->trace)
        phase_begin(c, &ev, "epilogue: clear the credits");
    pld_status_t st = PLD_OK;
    for (int q = 0; q < c->P && st == PLD_OK; q++)
        if (q != c->me)
            st = pld_dist_notify(c->it, c->f, c->e, c->d, c->me, cell_disp(c, q, k), -n, 0);
    return c->it->trace ? phase_end(c, &ev, st) : st;
}

/* Operands of a collective are pairwise distinct windows (pld_semantics.md
 * §3.2; PyPTO checks it on the HOST rail only, statically): two views of one
 * window buffer overlap, so a collective over them reads what it writes or
 * counts credits in its data. A run-time error on every rail. */
static pld_status_t distinct(coll_t *c, const pld_tensor_t *t, const pld_expr_t *te, const char *role,
                             const pld_tensor_t *other, const char *other_role)
{
    if (!other || !t->is_dist || !other->is_dist || t->winbuf < 0 || t->winbuf != other->winbuf)
        return PLD_OK;
    return pld_rt_error(c->it, c->f, te ? te->span : c->e->span,
                        "%s (%s): %s and %s are views of the same window buffer '%s': the operands of a collective "
                        "must be pairwise distinct windows",
                        cname(c), rail_of(c), role, other_role, c->it->wins[t->winbuf].name);
}

/* Validates a signal operand: window-bound INT32 tensor in the collective's
 * domain, rank in [min_rank, 2], at least `rows` x `cols` cells (cols checked
 * for rank-2 signals only). */
static pld_status_t check_signal(coll_t *c, const pld_tensor_t *s, const pld_expr_t *se, int min_rank, int64_t rows,
                                 const char *rows_what, int64_t cols, const char *cols_what)
{
    pld_interp_t *it = c->it;
    pld_span_t sp = se ? se->span : c->e->span;
    if (!s->is_dist)
        return pld_rt_error(it, c->f, sp, "%s: the signal must be a window-bound DistributedTensor", cname(c));
    if (s->dt != PLD_DT_INT32)
        return pld_rt_error(it, c->f, sp, "%s: the signal must be INT32, found %s", cname(c),
                            pld_dtype_name(s->dt));
    if (s->rank < min_rank || s->rank > 2)
        return pld_rt_error(it, c->f, sp, "%s: the signal must be %s, found a rank-%d tensor", cname(c),
                            min_rank == 2 ? "2-D" : "1-D or 2-D", s->rank);
    domain_t *sd = pld_dist_domain_of(it, c->f, c->e, s);
    if (!sd)
        return PLD_E_RUNTIME;
    if (sd != c->d)
        return pld_rt_error(it, c->f, sp, "%s: the signal and the target belong to different comm domains (%d and %d "
                                          "ranks); every operand of a collective must be in one domain",
                            cname(c), sd->n, c->d->n);
    if (s->shape[0] < rows)
        return pld_rt_error(it, c->f, sp, "%s: signal shape[0] (%lld) must be at least %s (%lld) at run time",
                            cname(c), (long long)s->shape[0], rows_what, (long long)rows);
    if (s->rank == 2 && s->shape[1] < cols)
        return pld_rt_error(it, c->f, sp, "%s: signal shape[1] (%lld) must be at least %s (%lld)", cname(c),
                            (long long)s->shape[1], cols_what, (long long)cols);
    pld_status_t dst;
    if (c->kind != PLD_OPID_PLD_BARRIER && (dst = distinct(c, s, se, "the signal", c->tgt, "the target")) != PLD_OK)
        return dst;
    c->sig = s;
    c->sigdesc = *s;
    c->has_sig = 1;
    set_sigtext(c, se);
    return PLD_OK;
}

/* Another window operand of the collective must be in the same domain. */
static pld_status_t same_domain(coll_t *c, const pld_tensor_t *t, const pld_expr_t *te, const char *role)
{
    if (!t->is_dist)
        return pld_rt_error(c->it, c->f, te ? te->span : c->e->span,
                            "%s: %s must be a window-bound DistributedTensor here", cname(c), role);
    pld_status_t st;
    if ((st = distinct(c, t, te, role, c->tgt, "the target")) != PLD_OK ||
        (st = distinct(c, t, te, role, c->has_sig ? &c->sigdesc : NULL, "the signal")) != PLD_OK)
        return st;
    domain_t *d = pld_dist_domain_of(c->it, c->f, c->e, t);
    if (!d)
        return PLD_E_RUNTIME;
    if (d != c->d)
        return pld_rt_error(c->it, c->f, te ? te->span : c->e->span,
                            "%s: %s and the target belong to different comm domains (%d and %d ranks); every "
                            "operand of a collective must be in one domain",
                            cname(c), role, d->n, c->d->n);
    return PLD_OK;
}

/* ------------------------------------------------------------ data movement */

static int is_packed(const pld_tensor_t *t)
{
    int64_t s = 1;
    for (int k = t->rank - 1; k >= 0; k--) {
        if (t->shape[k] != 1 && t->strides[k] != s)
            return 0;
        s *= t->shape[k];
    }
    return 1;
}

static int fully_valid(const pld_tensor_t *t)
{
    for (int k = 0; k < t->rank; k++)
        if (t->valid[k] != t->shape[k])
            return 0;
    return 1;
}

/* A rank-1 descriptor over the elements of packed tensor t (borrowed buffer;
 * never released). */
static void flat_desc(const pld_tensor_t *t, pld_tensor_t *out, int64_t n)
{
    *out = *t;
    out->rank = 1;
    out->shape[0] = n;
    out->strides[0] = 1;
    out->valid[0] = n;
}

/* A read of the box [off, off+ext) of a tensor in this rank's memory, as the
 * checking modes see it: --poison checks it, --check-races records it. */
static void local_read_seen(coll_t *c, const pld_tensor_t *t, const int64_t *off, const int64_t *ext)
{
    if (c->it->poison)
        pld_poison_check_local(c->it, c->e, t, off, ext);
    if (c->it->race)
        pld_race_local(c->it, c->f, c->e, t, off, ext, PLD_HB_READ);
}

/* Copies the box [off, off+ext) of a tensor in this rank's memory to (dir 0)
 * or from (dir 1) a packed buffer. */
static pld_status_t local_io(coll_t *c, const pld_tensor_t *t, const int64_t *off, const int64_t *ext, void *buf,
                             int dir)
{
    for (int k = 0; k < t->rank; k++) {
        if (ext[k] <= 0)
            return PLD_OK;
        if (off[k] < 0 || ext[k] > t->shape[k] - off[k])
            return pld_rt_error(c->it, c->f, c->e->span,
                                "%s: region offset %lld + extent %lld is outside dimension %d (size %lld)",
                                cname(c), (long long)off[k], (long long)ext[k], k, (long long)t->shape[k]);
    }
    pld_view_t tv, pv;
    pld_tensor_kview(t, &tv);
    int64_t o = 0;
    for (int k = 0; k < t->rank; k++)
        o += off[k] * t->strides[k];
    tv.data = (char *)tv.data + o * pld_dtype_bytes(t->dt);
    memcpy(tv.shape, ext, (size_t)t->rank * sizeof *ext);
    pld_view_packed(&pv, buf, t->dt, t->rank, ext);
    char err[256];
    if (!dir)
        local_read_seen(c, t, off, ext);
    if (pld_k_copy(dir ? &tv : &pv, dir ? &pv : &tv, err, sizeof err) != PLD_OK)
        return pld_rt_error(c->it, c->f, c->e->span, "%s: %s", cname(c), err);
    if (c->it->poison && dir)
        pld_tensor_shadow_mark(t, off, ext);
    if (c->it->race && dir)
        pld_race_local(c->it, c->f, c->e, t, off, ext, PLD_HB_WRITE);
    return PLD_OK;
}

/* The source of a push: rows [row, row+nrows) of the rank-2 tensor `in` in
 * this rank's memory, for a put of them into target t. In place when they
 * are one contiguous run outside t's buffer (nothing writes the input while
 * a collective pushes it, so MPI may read it until the batch ends), seen by
 * the checking modes as local_io's read is (local_read_seen); else copied
 * into `stage`. */
static pld_status_t push_src(coll_t *c, const pld_tensor_t *in, const pld_tensor_t *t, int64_t row, int64_t nrows,
                             char *stage, const void **src)
{
    int64_t off[2] = {row, 0}, ext[2] = {nrows, in->shape[1]};
    *src = stage;
    if (in->buf == t->buf || in->rank != 2 || in->strides[1] != 1 || (nrows > 1 && in->strides[0] != in->shape[1]) ||
        row < 0 || nrows <= 0 || nrows > in->shape[0] - row || in->shape[1] <= 0)
        return local_io(c, in, off, ext, stage, 0);
    local_read_seen(c, in, off, ext);
    *src = pld_tensor_at(in, off);
    return PLD_OK;
}

/* The order in which a rank pushes to the members: batched, the members on
 * other hosts first (their transfers are on the wire while this rank copies
 * to its own host's), each group from me + 1 round; else 0 .. P - 1. */
static void push_order(const coll_t *c, int batched, int *order)
{
    if (!batched) {
        for (int q = 0; q < c->P; q++)
            order[q] = q;
        return;
    }
    const int mine = pld_win_dom_host(c->d->win, c->me);
    int n = 0;
    for (int far = 1; far >= 0; far--)
        for (int i = 0; i < c->P; i++) {
            const int q = (c->me + 1 + i) % c->P;
            if ((pld_win_dom_host(c->d->win, q) != mine) == far)
                order[n++] = q;
        }
}

/* Moves the box [off, off+ext) of window tensor t on domain rank `peer` to
 * (dir 0, a get) or from (dir 1, a put) a packed buffer. */
static pld_status_t xfer(coll_t *c, const pld_tensor_t *t, int peer, const int64_t *off, const int64_t *ext, void *buf,
                         int dir)
{
    if (peer == c->me)
        return local_io(c, t, off, ext, buf, dir);
    return pld_dist_region(c->it, c->f, c->e, c->d, peer, t, off, ext, buf, dir);
}

/* Elements [lo, lo+n) of a rank-1 descriptor. */
static pld_status_t xfer1(coll_t *c, const pld_tensor_t *flat, int peer, int64_t lo, int64_t n, void *buf, int dir)
{
    int64_t off[1] = {lo}, ext[1] = {n};
    return xfer(c, flat, peer, off, ext, buf, dir);
}

/* Row `row` (cols [0, n)) of a rank-2 tensor. */
static pld_status_t xfer_rows(coll_t *c, const pld_tensor_t *t, int peer, int64_t row, int64_t nrows, void *buf,
                              int dir)
{
    int64_t off[2] = {row, 0}, ext[2] = {nrows, t->shape[1]};
    return xfer(c, t, peer, off, ext, buf, dir);
}

/* The kernel op of a ReduceOp (validated by the caller: 0..3). */
static pld_binop_k_t binop_of(int64_t op)
{
    switch (op) {
    case 0: return PLD_K_ADD;
    case 1: return PLD_K_MAX;
    case 2: return PLD_K_MIN;
    case 3: return PLD_K_MUL;
    default: PLD_UNREACHABLE("binop_of: a ReduceOp outside 0..3 was not rejected");
    }
}

static const char *redop_name(int64_t op)
{
    return op == 0 ? "Sum" : op == 1 ? "Max" : op == 2 ? "Min" : op == 3 ? "Prod" : "<not a ReduceOp>";
}

/* acc = op(acc, x) elementwise over n elements of dtype dt. */
static pld_status_t fold(coll_t *c, pld_binop_k_t op, void *acc, void *x, pld_dtype_t dt, int64_t n)
{
    if (n <= 0)
        return PLD_OK;
    pld_view_t va, vx;
    pld_view_packed(&va, acc, dt, 1, &n);
    pld_view_packed(&vx, x, dt, 1, &n);
    char err[256];
    if (pld_k_binary(op, &va, &va, &vx, err, sizeof err) != PLD_OK)
        return pld_rt_error(c->it, c->f, c->e->span, "%s: %s", cname(c), err);
    return PLD_OK;
}

/* Reads elements [lo, lo+n) of flat on this rank into acc and on every peer,
 * folding them in: own value, then the peers ascending (§2.14). batched
 * (merged steps across hosts): the peers' reads go out as one batch
 * (pld_win_batch_begin), each into its own part of tmp ((P-1) * n
 * elements), so that every rank waits for all its transfers at once and
 * serves its peers' meanwhile; then the folds, in the same order. */
static pld_status_t read_fold(coll_t *c, const pld_tensor_t *flat, int64_t lo, int64_t n, pld_binop_k_t op, void *acc,
                              char *tmp, int batched)
{
    const size_t nb = (size_t)n * (size_t)pld_dtype_bytes(flat->dt);
    pld_status_t st = xfer1(c, flat, c->me, lo, n, acc, 0);
    if (!batched) {
        for (int p = 0; p < c->P && st == PLD_OK; p++) {
            if (p == c->me)
                continue;
            st = xfer1(c, flat, p, lo, n, tmp, 0);
            if (st == PLD_OK)
                st = fold(c, op, acc, tmp, flat->dt, n);
        }
        return st;
    }
    if (st != PLD_OK)
        return st;
    pld_win_batch_begin(c->it->win);
    for (int p = 0, j = 0; p < c->P && st == PLD_OK; p++)
        if (p != c->me)
            st = xfer1(c, flat, p, lo, n, tmp + (size_t)j++ * nb, 0);
    st = pld_dist_batch_end(c->it, c->f, c->e, st);
    for (int j = 0; j < c->P - 1 && st == PLD_OK; j++)
        st = fold(c, op, acc, tmp + (size_t)j * nb, flat->dt, n);
    return st;
}

/* ------------------------------------------------------------ merged steps */

/* How the merged steps of one call move their ranges (step_plan;
 * docs/transport.md, "Merged collective steps"):
 *   STEP_PLAIN   every rank reads every peer's range and folds its own
 *                result (read_fold), then the barrier, then it stores;
 *   STEP_SPREAD  rank j folds part j for every rank and stores each result
 *                into that rank's copy (spread_fold), then the barrier;
 *   STEP_HUB     the members of one host fold the whole range for every
 *                rank (a part each) and store the results (hub_fold).
 * Each folds every element of rank r's result in r's documented order, so
 * all three give the same bits; they differ in the bytes that cross
 * between hosts. */
enum { STEP_PLAIN, STEP_SPREAD, STEP_HUB };

typedef struct step_plan {
    int kind;
    int nw;                           /* HUB: the members on the hub host, ascending */
    int workers[PLD_WIN_MAX_RANKS];
    int widx;                         /* HUB: this rank's index in workers, or -1 */
    /* HUB: ranks 0 and 1 both off the hub host: their results agree except
     * where x0 and x1 are NaNs with different payloads (the first fold is
     * x0 (+) x1 against x1 (+) x0), so the workers send it to rep (0) alone,
     * rep copies it to twin (1) within its host, and the blocks where twin's
     * differ follow after the barrier. -1: none. */
    int rep, twin;
} step_plan_t;

/* Whether a merged step of n elements may go spread or hub: at least 3
 * ranks (with 2, each rank moves the same bytes either way) and parts of at
 * least P elements. */
static int spread_ok(const coll_t *c, int64_t n)
{
    return c->P >= 3 && n >= (int64_t)c->P * c->P;
}

/* The plan of a call's merged steps: the one that moves the fewest bytes
 * between hosts, in units of n / P for a step of n elements, with a and b
 * ranks on two hosts:
 *   PLAIN  2 a b P (every rank reads the whole range of every rank elsewhere:
 *          never the least at P >= 3, so only P = 2 uses it);
 *   SPREAD 4 a b (rank j reads and stores part j of every rank elsewhere);
 *   HUB on host X: P (2 o - t): it reads the o ranges of the other host and
 *          sends back o results, one fewer (t = 1) when ranks 0 and 1 are
 *          both there (rep and twin).
 * SPREAD wins ties (and covers one host and three or more). At P = 4, 2 + 2
 * with 0, 1 together: SPREAD 16, HUB 12: 12 MiB per 1 Mi FP32 call against
 * 16 (docs/transport.md, "Hub steps"). */
static void step_plan(const coll_t *c, step_plan_t *pl)
{
    memset(pl, 0, sizeof *pl);
    pl->kind = c->P >= 3 ? STEP_SPREAD : STEP_PLAIN;
    pl->widx = pl->rep = pl->twin = -1;
    if (c->P < 3)
        return;
    int host[PLD_WIN_MAX_RANKS], h[2] = {pld_win_dom_host(c->d->win, 0), -1}, cnt[2] = {0, 0};
    for (int q = 0; q < c->P; q++) {
        host[q] = pld_win_dom_host(c->d->win, q);
        if (host[q] != h[0] && h[1] < 0)
            h[1] = host[q];
        if (host[q] != h[0] && host[q] != h[1])
            return; /* three hosts or more */
        cnt[host[q] == h[0] ? 0 : 1]++;
    }
    if (cnt[1] == 0)
        return;
    int64_t best = 4 * (int64_t)cnt[0] * cnt[1];
    int hub = -1;
    for (int x = 0; x < 2; x++) {
        const int o = cnt[1 - x], t = host[0] != h[x] && host[1] != h[x];
        const int64_t cost = (int64_t)c->P * (2 * o - t);
        if (cost < best) {
            best = cost;
            hub = x;
        }
    }
    if (hub < 0)
        return;
    pl->kind = STEP_HUB;
    for (int q = 0; q < c->P; q++)
        if (host[q] == h[hub]) {
            if (q == c->me)
                pl->widx = pl->nw;
            pl->workers[pl->nw++] = q;
        }
    if (host[0] != h[hub] && host[1] != h[hub]) {
        pl->rep = 0;
        pl->twin = 1;
    }
}

/* The elements of tmp the steps of at most n elements need beside acc: the
 * batched reads of a plain step, the inputs and results of a part. SPREAD
 * and HUB read plainly only a step too small to spread (fewer than P * P
 * elements: spread_ok). */
static int64_t step_tmp(const coll_t *c, const step_plan_t *pl, int64_t n, int batched)
{
    const int64_t pn = pl->kind == STEP_PLAIN || n < (int64_t)c->P * c->P ? n : (int64_t)c->P * c->P - 1;
    const int64_t plain = pn * (batched ? c->P - 1 : 1);
    const int64_t part = pl->kind == STEP_HUB ? cdiv(n, pl->nw) : cdiv(n, c->P);
    const int64_t split = pl->kind == STEP_PLAIN ? 0 : 2 * (int64_t)c->P * part;
    return plain > split ? plain : split;
}

#ifndef PLD_TESTING
#define SPREAD_BLOCK 4096 /* elements per block of the spread and hub folds */
#else
#define SPREAD_BLOCK 768 /* pldrun_testing: the tests' parts of a few thousand elements take several blocks */
#endif

/* The barrier of one merged step. InCore (.host = 0): slot 0, credit n,
 * wait for g. HOST (.host = 1): lane b < lanes credits its tiles in rounds [j0, j1)
 * (tiles b + j * lanes < ntiles) and waits for 1 + its tiles before j1. */
typedef struct step_bar {
    int host;
    int64_t lanes, j0, j1, ntiles;
    int32_t n, g;
} step_bar_t;

/* Lane b's credit (0: none) and the credit it waits for (0: none). */
static void bar_lane(const step_bar_t *sb, int64_t b, int32_t *n, int32_t *g)
{
    if (!sb->host) {
        *n = sb->n;
        *g = sb->g;
        return;
    }
    const int64_t upto = b < sb->ntiles ? cdiv(sb->ntiles - b, sb->lanes) : 0;
    const int64_t before = sb->j0 < upto ? sb->j0 : upto, last = sb->j1 < upto ? sb->j1 : upto;
    *n = (int32_t)(last - before);
    *g = last > sb->j0 ? (int32_t)(last + 1) : 0;
}


/* The step's credits of this rank into the cells of the peers in `peers`
 * (wait 0), or the wait for theirs (wait 1). */
static pld_status_t step_sync(coll_t *c, const step_bar_t *sb, uint64_t peers, int wait)
{
    for (int64_t b = 0; b < sb->lanes; b++) {
        int32_t n, g;
        bar_lane(sb, b, &n, &g);
        if ((wait ? g : n) <= 0)
            continue;
        lane_track(c, b, sb->lanes);
        pld_status_t st = wait ? await_from(c, b, g, peers) : arrive_to(c, b, n, peers);
        if (st != PLD_OK)
            return st;
    }
    return PLD_OK;
}

static pld_status_t step_arrive(coll_t *c, const step_bar_t *sb, uint64_t to)
{
    return step_sync(c, sb, to, 0);
}

static pld_status_t step_await(coll_t *c, const step_bar_t *sb, uint64_t from)
{
    return step_sync(c, sb, from, 1);
}

/* The step's whole barrier: credit every peer, then wait for every peer. */
static pld_status_t step_barrier(coll_t *c, const step_bar_t *sb)
{
    pld_ev_t ev;
    char name[80]; /* the event keeps the pointer until phase_end */
    if (c->it->trace && !sb->host) {
        snprintf(name, sizeof name, "%d merged barriers (slot 0, credit %d)", (int)sb->n, (int)sb->g);
        phase_begin(c, &ev, name);
    }
    pld_status_t st = step_arrive(c, sb, all_peers(c));
    st = st != PLD_OK ? st : step_await(c, sb, all_peers(c));
    return c->it->trace && !sb->host ? phase_end(c, &ev, st) : st;
}

/* Every rank r's result in its documented order (x_r first, then the
 * others ascending), over m elements: the inputs x_q are at in + q * L
 * elements, offset o bytes, rank r's result goes to res + r * L elements,
 * offset o. One pass over the inputs where the kernel has one
 * (pld_k_fold_orders). */
static pld_status_t fold_orders(coll_t *c, pld_binop_k_t op, pld_dtype_t dt, char *res, const char *in, size_t L,
                                size_t o, int64_t m)
{
    const size_t esz = (size_t)pld_dtype_bytes(dt);
    const void *x[PLD_WIN_MAX_RANKS];
    void *out[PLD_WIN_MAX_RANKS];
    for (int q = 0; q < c->P; q++) {
        x[q] = in + (size_t)q * L * esz + o;
        out[q] = res + (size_t)q * L * esz + o;
    }
    char err[256];
    if (pld_k_fold_orders(op, dt, c->P, x, out, m, err, sizeof err) != PLD_OK)
        return pld_rt_error(c->it, c->f, c->e->span, "%s: %s", cname(c), err);
    return PLD_OK;
}

/* Elements [base+a, base+b) with this rank (local) and every peer q in `to`
 * (dir 0: get, 1: put), the buffer of q at buf + q * stride, element a at
 * its start (no batch of its own). */
static pld_status_t part_io(coll_t *c, const pld_tensor_t *flat, int64_t base, int64_t a, int64_t b, char *buf,
                            size_t stride, int dir, uint64_t to)
{
    const size_t o = (size_t)a * (size_t)pld_dtype_bytes(flat->dt);
    pld_status_t st = PLD_OK;
    for (int q = 0; q < c->P && st == PLD_OK && a < b; q++)
        if (q == c->me || (to & RBIT(q)))
            st = xfer1(c, flat, q, base + a, b - a, buf + (size_t)q * stride + o, dir);
    return st;
}

/* Elements [lo, lo+n) with this rank and every peer (part_io), in one
 * batch when batched. */
static pld_status_t xfer_part(coll_t *c, const pld_tensor_t *flat, int64_t lo, int64_t n, char *buf, size_t stride,
                              int dir, int batched)
{
    if (batched)
        pld_win_batch_begin(c->it->win);
    pld_status_t st = part_io(c, flat, lo, 0, n, buf, stride, dir, all_peers(c));
    return batched ? pld_dist_batch_end(c->it, c->f, c->e, st) : st;
}

/* A SPREAD step (step_plan): the range [lo, lo+n) is cut into P parts, and
 * rank j reads part j of every rank (own value, then the peers, one batch),
 * folds it in every rank's order (fold_order) and stores rank r's result
 * into part j of rank r's copy (puts, one batch). Part j of any copy is
 * read by rank j alone, before rank j stores into it, so no barrier is
 * needed inside the step; the caller's barrier follows, after which every
 * copy holds the whole result (a put is visible before the notify that
 * follows it). Each rank moves 2 (P - 1) / P of the range instead of P - 1
 * times it (docs/transport.md). tmp holds step_tmp(n) elements. */
static pld_status_t spread_fold(coll_t *c, const pld_tensor_t *flat, int64_t lo, int64_t n, pld_binop_k_t op,
                                char *tmp, int batched)
{
    const int P = c->P, me = c->me;
    const size_t esz = (size_t)pld_dtype_bytes(flat->dt);
    const int64_t L = cdiv(n, P), b0 = me * n / P, len = (me + 1) * n / P - b0;
    char *in = tmp, *res = tmp + (size_t)P * (size_t)L * esz; /* x_q, res_r at q * L, r * L */
#define PART(base, q) ((base) + (size_t)(q) * (size_t)L * esz)
    pld_status_t st = xfer_part(c, flat, lo + b0, len, in, (size_t)L * esz, 0, batched);
    /* in blocks that stay in cache: the P results of a block read the same
     * P inputs */
    for (int64_t k = 0; k < len && st == PLD_OK; k += SPREAD_BLOCK) {
        const int64_t m = len - k < SPREAD_BLOCK ? len - k : SPREAD_BLOCK;
        st = fold_orders(c, op, flat->dt, res, in, (size_t)L, (size_t)k * esz, m);
    }
    st = st != PLD_OK ? st : xfer_part(c, flat, lo + b0, len, res, (size_t)L * esz, 1, batched);
#undef PART
    return st;
}

#define HUB_PIECES 4 /* pieces of a worker's part in a HUB step by window reads and stores (hub_take_rma) */

/* Worker w's part of a HUB step of n elements: [*b0, *b0 + *len). Every rank
 * computes the same. */
static void hub_part(const step_plan_t *pl, int w, int64_t n, int64_t *b0, int64_t *len)
{
    *b0 = w * n / pl->nw;
    *len = (w + 1) * n / pl->nw - *b0;
}

static uint64_t hub_workers(const step_plan_t *pl)
{
    uint64_t w = 0;
    for (int i = 0; i < pl->nw; i++)
        w |= RBIT(pl->workers[i]);
    return w;
}

/* Whether this collective may move data as two-sided messages
 * (pld_win_xset): on a hybrid domain, and when no other block of this rank
 * can run while it waits. Messages match by sender and size alone, so two
 * collectives of two blocks under way at once (a pl.spmd launch whose blocks
 * each call one) could take each other's messages; their windows and
 * signals keep them apart, so they take the window path. */
static int msgs_ok(const coll_t *c)
{
    return pld_win_dom_transport(c->d->win) == PLD_WIN_HYBRID && !pld_npu_concurrent(c->it->sched);
}

/* Whether the transfers of a HUB step between the hosts go as two-sided
 * messages (pld_win_xset; docs/transport.md, "Hub steps by messages"): on a
 * hybrid domain (every member off the hub host is then on another host than
 * every worker), when the step may batch (not under --poison, --check-races
 * or a seeded schedule, which observe every read and store), and with a
 * part within one MPI count. Every rank computes the same answer. */
static int hub_by_msgs(const coll_t *c, const step_plan_t *pl, int64_t n, size_t esz, int batched)
{
    return batched && msgs_ok(c) && (uint64_t)cdiv(n, pl->nw) * esz <= (uint64_t)INT32_MAX;
}

/* A transfer by message in the trace: a PUT (rows or results written into
 * peer's window) or a GET (a part of peer's window read), at element idx of
 * t in peer's window; ev was started by pld_tr_init. */
static void trace_msg(coll_t *c, pld_ev_t *ev, const pld_tensor_t *t, int peer, const int64_t *idx, size_t bytes)
{
    pld_interp_t *it = c->it;
    ev->peer = peer;
    ev->peer_world = pld_win_dom_world_rank(c->d->win, peer);
    ev->dom = (int32_t)(c->d - it->doms);
    ev->obj = t->winbuf >= 0 ? it->wins[t->winbuf].name : NULL;
    ev->offset = (int64_t)pld_dist_disp(c->d, t, idx);
    ev->bytes = (int64_t)bytes;
    pld_trace_end(it->trace, ev);
}

/* The located error of a message of the wrong size: a peer in another call
 * (another size, another collective). */
static pld_status_t msg_mismatch(coll_t *c, int q, int64_t got, size_t want)
{
    return pld_rt_error(c->it, c->f, c->e->span,
                        "%s: rank %d sent %lld bytes, not the %zu bytes of its part (a mismatched call)", cname(c), q,
                        (long long)got, want);
}

static pld_status_t xset_fail(coll_t *c, const char *err)
{
    return pld_rt_error(c->it, c->f, c->e->span, "%s: %s", cname(c), err);
}

/* A member off the hub host in a HUB step by messages: it sends part w of its
 * copy of [lo, lo+n) to worker w, from the copy itself, and once those sends
 * are complete (nothing may write a buffer under a send before), receives
 * its result's part w from worker w into the copy (but twin: hub_fold).
 * It returns when every transfer is complete. */
static pld_status_t hub_give(coll_t *c, const step_plan_t *pl, const pld_tensor_t *flat, int64_t lo, int64_t n)
{
    const size_t esz = (size_t)pld_dtype_bytes(flat->dt);
    const int results = c->me != pl->twin;
    pld_view_t v;
    pld_tensor_kview(flat, &v);
    char *data = (char *)v.data + (size_t)lo * esz, err[256];
    const far_wait_t fw = {c, hub_workers(pl), "parts"};
    int64_t b0[PLD_WIN_MAX_RANKS], len[PLD_WIN_MAX_RANKS]; /* worker w's part */
    for (int w = 0; w < pl->nw; w++)
        hub_part(pl, w, n, &b0[w], &len[w]);
    pld_win_xset_t *xs = NULL, *xr = NULL;
    pld_status_t st = PLD_OK;
    if (pld_win_xset_open(c->d->win, pl->nw, 0, &xs, err, sizeof err) != PLD_OK ||
        (results && pld_win_xset_open(c->d->win, pl->nw, 0, &xr, err, sizeof err) != PLD_OK))
        st = xset_fail(c, err);
    for (int w = 0; w < pl->nw && st == PLD_OK; w++) {
        const size_t bytes = (size_t)len[w] * esz;
        if (pld_win_xset_send(xs, pl->workers[w], data + (size_t)b0[w] * esz, bytes, bytes,
                              PLD_XSET_SIZED | PLD_XSET_INPLACE, err, sizeof err) != PLD_OK)
            st = xset_fail(c, err);
        c->it->stats.bytes_moved += (uint64_t)bytes;
    }
    if (st == PLD_OK)
        st = pld_dist_xset_wait(c->it, c->f, c->e, c->d, xs, describe_far_wait, &fw);
    for (int w = 0; w < pl->nw && st == PLD_OK && results; w++)
        if (pld_win_xset_recv(xr, pl->workers[w], data + (size_t)b0[w] * esz, (size_t)len[w] * esz, PLD_XSET_SIZED,
                              err, sizeof err) != PLD_OK)
            st = xset_fail(c, err);
    if (st == PLD_OK && results)
        st = pld_dist_xset_wait(c->it, c->f, c->e, c->d, xr, describe_far_wait, &fw);
    for (int w = 0; w < pl->nw && st == PLD_OK && results; w++)
        if (pld_win_xset_got(xr, w) != len[w] * (int64_t)esz)
            st = msg_mismatch(c, pl->workers[w], pld_win_xset_got(xr, w), (size_t)len[w] * esz);
    pld_win_xset_close(xs);
    pld_win_xset_close(xr);
    return st;
}

/* Pieces [k0, k1) of a worker's part: every rank's result, twin's too (it
 * goes out only where it differs from rep's: NaN pairs in x_rep and x_twin;
 * exc marks those blocks). */
static pld_status_t hub_piece(coll_t *c, const step_plan_t *pl, pld_binop_k_t op, pld_dtype_t dt, char *res,
                              const char *in, int64_t L, int64_t k0, int64_t k1, unsigned char *exc, int64_t *nexc)
{
    const size_t esz = (size_t)pld_dtype_bytes(dt);
    pld_status_t st = PLD_OK;
    for (int64_t k = k0; k < k1 && st == PLD_OK; k += SPREAD_BLOCK) {
        const int64_t m = k1 - k < SPREAD_BLOCK ? k1 - k : SPREAD_BLOCK;
        const size_t o = (size_t)k * esz;
        st = fold_orders(c, op, dt, res, in, (size_t)L, o, m);
        if (st == PLD_OK && pl->twin >= 0 &&
            memcmp(res + (size_t)pl->rep * (size_t)L * esz + o, res + (size_t)pl->twin * (size_t)L * esz + o,
                   (size_t)m * esz) != 0) {
            exc[k / SPREAD_BLOCK] = 1;
            (*nexc)++;
        }
    }
    return st;
}

/* A worker's transfers and folds by window reads and stores: the reads of
 * piece i + 1 and the stores of piece i go out as one batch, so that the
 * transfers from and to the other host overlap. */
static pld_status_t hub_take_rma(coll_t *c, const step_plan_t *pl, const pld_tensor_t *flat, int64_t base,
                                 const int64_t *cut, int64_t L, pld_binop_k_t op, char *in, char *res,
                                 unsigned char *exc, int64_t *nexc, int batched)
{
    const size_t esz = (size_t)pld_dtype_bytes(flat->dt);
    const uint64_t peers = all_peers(c), to = pl->twin >= 0 ? peers & ~RBIT(pl->twin) : peers; /* twin's aside */
    pld_status_t st = PLD_OK;
    for (int i = -1; i < HUB_PIECES && st == PLD_OK; i++) {
        if (i >= 0)
            st = hub_piece(c, pl, op, flat->dt, res, in, L, cut[i], cut[i + 1], exc, nexc);
        if (st != PLD_OK)
            break;
        if (batched)
            pld_win_batch_begin(c->it->win);
        if (i + 1 < HUB_PIECES)
            st = part_io(c, flat, base, cut[i + 1], cut[i + 2], in, (size_t)L * esz, 0, peers);
        if (i >= 0 && st == PLD_OK)
            st = part_io(c, flat, base, cut[i], cut[i + 1], res, (size_t)L * esz, 1, to);
        if (batched)
            st = pld_dist_batch_end(c->it, c->f, c->e, st);
    }
    return st;
}

/* A worker's transfers and folds by messages (hub_by_msgs): it posts the
 * receives of its part of every member off the hub host into its inputs,
 * reads the part of the members on its host (window reads), waits for the
 * messages, folds into the send set's buffer, sends the results to the
 * members off the hub host from there (twin's aside) and stores those of its
 * host (window stores). One piece: nothing moves the messages while it
 * folds. Twin's result goes to twin_res when some of its blocks differ
 * (hub_fold sends them after the barrier). It returns when every transfer is
 * complete. */
static pld_status_t hub_take_msgs(coll_t *c, const step_plan_t *pl, const pld_tensor_t *flat, int64_t base,
                                  int64_t len, int64_t L, pld_binop_k_t op, char *in, char *twin_res,
                                  unsigned char *exc, int64_t *nexc)
{
    pld_interp_t *it = c->it;
    const size_t esz = (size_t)pld_dtype_bytes(flat->dt), stride = (size_t)L * esz, bytes = (size_t)len * esz;
    const uint64_t own = hub_workers(pl), far = all_peers(c) & ~own;
    int nf = 0;
    for (int q = 0; q < c->P; q++)
        nf += (far & RBIT(q)) != 0;
    const far_wait_t fw = {c, far, "parts"};
    int64_t idx[1] = {base};
    char err[256];
    pld_win_xset_t *xr = NULL, *xs = NULL;
    pld_ev_t ev;
    pld_status_t st = PLD_OK;
    char *res = NULL; /* res_r at r * L: in the set's buffer, which outlives a failed send */
    if (pld_win_xset_open(c->d->win, nf, 0, &xr, err, sizeof err) != PLD_OK ||
        pld_win_xset_open(c->d->win, nf, (size_t)c->P * stride, &xs, err, sizeof err) != PLD_OK)
        st = xset_fail(c, err);
    else
        res = pld_win_xset_buf(xs);
    for (int q = 0; q < c->P && st == PLD_OK; q++)
        if ((far & RBIT(q)) &&
            pld_win_xset_recv(xr, q, in + (size_t)q * stride, bytes, PLD_XSET_SIZED, err, sizeof err) != PLD_OK)
            st = xset_fail(c, err);
    if (it->trace)
        pld_tr_init(c->f, c->e->span, &ev, PLD_EV_GET, pld_op_name(c->e));
    if (st == PLD_OK) {
        pld_win_batch_begin(it->win);
        st = pld_dist_batch_end(it, c->f, c->e, part_io(c, flat, base, 0, len, in, stride, 0, own));
    }
    if (st == PLD_OK)
        st = pld_dist_xset_wait(it, c->f, c->e, c->d, xr, describe_far_wait, &fw);
    for (int q = 0, j = 0; q < c->P && st == PLD_OK; q++) {
        if (!(far & RBIT(q)))
            continue;
        if (pld_win_xset_got(xr, j++) != (int64_t)bytes)
            st = msg_mismatch(c, q, pld_win_xset_got(xr, j - 1), bytes);
        else if (it->trace) { /* one event per source, over the wait */
            pld_ev_t e1 = ev;
            trace_msg(c, &e1, flat, q, idx, bytes);
        }
    }
    st = st != PLD_OK ? st : hub_piece(c, pl, op, flat->dt, res, in, L, 0, len, exc, nexc);
    if (st == PLD_OK && *nexc)
        memcpy(twin_res, res + (size_t)pl->twin * stride, bytes);
    for (int q = 0; q < c->P && st == PLD_OK; q++) {
        if (!(far & RBIT(q)) || q == pl->twin)
            continue;
        if (it->trace)
            pld_tr_init(c->f, c->e->span, &ev, PLD_EV_PUT, pld_op_name(c->e));
        if (pld_win_xset_send(xs, q, res + (size_t)q * stride, bytes, bytes, PLD_XSET_SIZED | PLD_XSET_INPLACE, err,
                              sizeof err) != PLD_OK)
            st = xset_fail(c, err);
        it->stats.bytes_moved += (uint64_t)bytes;
        if (it->trace && st == PLD_OK)
            trace_msg(c, &ev, flat, q, idx, bytes);
    }
    if (st == PLD_OK) {
        pld_win_batch_begin(it->win);
        st = pld_dist_batch_end(it, c->f, c->e, part_io(c, flat, base, 0, len, res, stride, 1, own));
    }
    if (st == PLD_OK)
        st = pld_dist_xset_wait(it, c->f, c->e, c->d, xs, describe_far_wait, &fw);
    pld_win_xset_close(xr);
    pld_win_xset_close(xs);
    return st;
}

/* The copy of [lo, lo+n) of rep's copy into twin's (HUB; twin shares rep's
 * host), made by rep (from == me) or by twin (to == me): a memmove between
 * the two windows (the members of one host share them), else, when batches
 * are not allowed (--poison, --check-races or a seeded schedule observe
 * every read and store), a read into tmp and a store. */
static pld_status_t hub_copy(coll_t *c, const pld_tensor_t *flat, int64_t lo, int64_t n, int from, int to, char *tmp,
                             int batched)
{
    if (batched) {
        pld_view_t v;
        pld_tensor_kview(flat, &v);
        char *mine = (char *)v.data + (size_t)lo * (size_t)pld_dtype_bytes(flat->dt);
        return xfer1(c, flat, from == c->me ? to : from, lo, n, mine, from == c->me);
    }
    pld_status_t st = xfer1(c, flat, from, lo, n, tmp, 0);
    return st != PLD_OK ? st : xfer1(c, flat, to, lo, n, tmp, 1);
}

/* A HUB step with its barrier (step_plan). Worker w (a member on the hub
 * host) takes part w of the range: it reads the part of every rank, folds
 * every rank's result in that rank's order and stores each into that rank's
 * copy; then it arrives and waits. Each part of a copy is read by its worker
 * alone before that worker stores into it, so, as in SPREAD, no barrier is
 * needed inside the step. The transfers are window reads and stores
 * (hub_take_rma), or messages with the members off the hub host
 * (hub_by_msgs: hub_give, hub_take_msgs).
 *
 * With rep and twin (ranks 0 and 1 off the hub host), the workers store
 * rep's result into rep's copy alone, and the range reaches twin's copy
 * (same host) by a copy before twin's credit goes out: no rank passes the
 * barrier before twin holds the result. With window stores rep makes it:
 * it waits for the workers' credits (their stores are visible then, and
 * every worker has read x_twin), copies, and only then arrives. With
 * messages twin makes it: once its own sends are complete (nothing may
 * write a buffer under a send before) it waits for rep's credit (rep
 * arrives once its results are in), copies, and arrives. Where twin's
 * result differs from rep's (a block whose first fold differs: NaNs in x0
 * and x1 with different payloads), the worker holds back its credit to
 * twin, waits for the barrier (after the copy), stores those blocks into
 * twin's copy and then credits twin. The credits every cell receives are
 * those of the plain step, only their timing differs. tmp holds
 * step_tmp(n) elements. */
static pld_status_t hub_fold(coll_t *c, const step_plan_t *pl, const step_bar_t *sb, const pld_tensor_t *flat,
                             int64_t lo, int64_t n, pld_binop_k_t op, char *tmp, int batched)
{
    const int P = c->P, me = c->me, rep = pl->rep, twin = pl->twin;
    const uint64_t peers = all_peers(c);
    const size_t esz = (size_t)pld_dtype_bytes(flat->dt);
    const int msgs = hub_by_msgs(c, pl, n, esz, batched);
    pld_status_t st = PLD_OK;
    if (pl->widx < 0) {
        if (msgs) {
            /* twin copies rep's result for itself, once its sends are
             * complete and rep's credit says rep holds the result */
            st = hub_give(c, pl, flat, lo, n);
            if (me == twin && st == PLD_OK) {
                st = step_await(c, sb, RBIT(rep));
                st = st != PLD_OK ? st : hub_copy(c, flat, lo, n, rep, me, tmp, batched);
            }
        } else if (me == rep) {
            st = step_await(c, sb, hub_workers(pl));
            st = st != PLD_OK ? st : hub_copy(c, flat, lo, n, me, twin, tmp, batched);
        }
        st = st != PLD_OK ? st : step_arrive(c, sb, peers);
        return st != PLD_OK ? st : step_await(c, sb, peers);
    }
    int64_t b0, len, cut[HUB_PIECES + 1];
    hub_part(pl, pl->widx, n, &b0, &len);
    for (int i = 0; i <= HUB_PIECES; i++) /* hub_take_rma's pieces: multiples of SPREAD_BLOCK but the last */
        cut[i] = i == HUB_PIECES ? len : len * i / HUB_PIECES / SPREAD_BLOCK * SPREAD_BLOCK;
    const int64_t L = cdiv(n, pl->nw);
    char *in = tmp, *res = tmp + (size_t)P * (size_t)L * esz; /* x_q, res_r at q * L, r * L */
    unsigned char *exc = NULL;                                /* twin: the blocks that differ */
    int64_t nexc = 0;
    if (twin >= 0 && !(exc = pld_mem_calloc((size_t)cdiv(len, SPREAD_BLOCK) + 1, 1)))
        return oom(c);
    char *twin_res = twin >= 0 ? res + (size_t)twin * (size_t)L * esz : NULL;
    st = msgs ? hub_take_msgs(c, pl, flat, lo + b0, len, L, op, in, twin_res, exc, &nexc)
              : hub_take_rma(c, pl, flat, lo + b0, cut, L, op, in, res, exc, &nexc, batched);
    /* the credits (twin's held back when some of its blocks differ), the
     * wait; then twin's blocks and credit */
    const uint64_t to = twin >= 0 ? peers & ~RBIT(twin) : peers;
    st = st != PLD_OK ? st : step_arrive(c, sb, nexc ? to : peers);
    st = st != PLD_OK ? st : step_await(c, sb, peers);
    if (nexc && st == PLD_OK) {
        if (batched)
            pld_win_batch_begin(c->it->win);
        for (int64_t k = 0; k < len && st == PLD_OK; k += SPREAD_BLOCK)
            if (exc[k / SPREAD_BLOCK])
                st = xfer1(c, flat, twin, lo + b0 + k, len - k < SPREAD_BLOCK ? len - k : SPREAD_BLOCK,
                           res + ((size_t)twin * (size_t)L + (size_t)k) * esz, 1);
        st = batched ? pld_dist_batch_end(c->it, c->f, c->e, st) : st;
        st = st != PLD_OK ? st : step_arrive(c, sb, RBIT(twin));
    }
    pld_mem_free(exc);
    return st;
}

/* One merged step of [lo, lo+n) with its barrier sb, by plan pl; after it
 * every copy holds the result. acc and tmp come from step_bufs (tmp:
 * step_tmp(n) elements). */
static pld_status_t merged_fold_step(coll_t *c, const step_plan_t *pl, const step_bar_t *sb, const pld_tensor_t *flat,
                                     int64_t lo, int64_t n, pld_binop_k_t op, char *acc, char *tmp, int batched)
{
    pld_status_t st;
    if (pl->kind == STEP_HUB && spread_ok(c, n)) {
        pld_ev_t ev;
        char name[160]; /* the event keeps the pointer until phase_end */
        if (c->it->trace) { /* "hub step: ranks 2, 3 fold, rank 0 copies to rank 1"; by messages "hub
                               step: ranks 2, 3 fold, rank 1 copies from rank 0 (messages across hosts)" */
            const int msgs = hub_by_msgs(c, pl, n, (size_t)pld_dtype_bytes(flat->dt), batched);
            const size_t k = rank_list(name, sizeof name, "hub step: ", hub_workers(pl), c->P);
            if (k < sizeof name)
                snprintf(name + k, sizeof name - k, " fold%s%s",
                         pl->twin < 0 ? "" : msgs ? ", rank 1 copies from rank 0" : ", rank 0 copies to rank 1",
                         msgs ? " (messages across hosts)" : "");
            phase_begin(c, &ev, name);
        }
        st = hub_fold(c, pl, sb, flat, lo, n, op, tmp, batched);
        return c->it->trace ? phase_end(c, &ev, st) : st;
    }
    if (pl->kind != STEP_PLAIN && spread_ok(c, n)) {
        st = spread_fold(c, flat, lo, n, op, tmp, batched);
        return st != PLD_OK ? st : step_barrier(c, sb);
    }
    st = read_fold(c, flat, lo, n, op, acc, tmp, batched);
    st = st != PLD_OK ? st : step_barrier(c, sb);
    return st != PLD_OK ? st : xfer1(c, flat, c->me, lo, n, acc, 1);
}

static void *alloc_elems(pld_dtype_t dt, int64_t n)
{
    return pld_mem_alloc((size_t)(n > 0 ? n : 1) * (size_t)pld_dtype_bytes(dt));
}

/* The buffers of a merged step: acc (na elements) and tmp (nt) in one piece,
 * the interpreter's kept buffer when no other block holds it (*kept = 1),
 * else a fresh one. NULL when out of memory. Released by step_bufs_done. */
static void *step_bufs(coll_t *c, pld_dtype_t dt, int64_t na, int64_t nt, char **tmp, int *kept)
{
    pld_interp_t *it = c->it;
    const size_t ab = (size_t)(na > 0 ? na : 1) * (size_t)pld_dtype_bytes(dt);
    const size_t bytes = ab + (size_t)(nt > 0 ? nt : 1) * (size_t)pld_dtype_bytes(dt);
    char *b = NULL;
    *kept = !it->coll_buf_busy;
    if (*kept && it->coll_buf_bytes < bytes) {
        pld_mem_free(it->coll_buf);
        it->coll_buf = pld_mem_alloc(bytes);
        it->coll_buf_bytes = it->coll_buf ? bytes : 0;
    }
    b = *kept ? it->coll_buf : pld_mem_alloc(bytes);
    if (!b)
        return NULL;
    if (*kept)
        it->coll_buf_busy = 1;
    *tmp = b + ab;
    return b;
}

static void step_bufs_done(coll_t *c, void *acc, int kept)
{
    if (kept)
        c->it->coll_buf_busy = 0;
    else
        pld_mem_free(acc);
}

/* A staging buffer of n elements, kept across calls like step_bufs' (a fresh
 * MiB-sized one costs page faults on every call). Released by step_bufs_done. */
static void *stage_buf(coll_t *c, pld_dtype_t dt, int64_t n, int *kept)
{
    char *tmp;
    return step_bufs(c, dt, n, 0, &tmp, kept);
}

/* Reads element `i` (rank-1 [NR] or rank-2 [NR, 1] tensor) of this rank's copy. */
static int64_t read_count(const pld_tensor_t *t, int64_t i)
{
    int64_t idx[2] = {i, 0};
    return pld_elem_get_i(pld_tensor_at(t, idx), t->dt, 0);
}

#define TRY(x)                                                                                                         \
    do {                                                                                                               \
        if ((st = (x)) != PLD_OK)                                                                                      \
            goto done;                                                                                                 \
    } while (0)

/* ------------------------------------------------------------ allreduce */

/* InCore mesh (§2.14.1): barrier(1); per chunk: own + peers ascending, barrier
 * (k + 2), store; epilogue -(1 + chunks). */
static pld_status_t incore_allreduce_mesh(coll_t *c, const pld_tensor_t *t, int64_t op)
{
    pld_status_t st = PLD_OK;
    int esz = pld_dtype_bytes(t->dt);
    int64_t C = MESH_CHUNK_BYTES / esz, N, nch;
    pld_tensor_t flat;
    int64_t boxo[PLD_MAX_RANK] = {0};
    int box = !fully_valid(t);
    void *acc = NULL;
    char *tmp = NULL;
    if (!box) {
        if (!is_packed(t))
            return pld_rt_error(c->it, c->f, c->e->span,
                                "%s: the target must be a packed row-major view on the InCore rail", cname(c));
        N = numel_of(t->rank, t->shape);
        flat_desc(t, &flat, N);
        nch = cdiv(N, C);
    } else {
        N = numel_of(t->rank, t->valid);
        if (N > C)
            return pld_rt_error(c->it, c->f, c->e->span,
                                "%s: a partial valid_shape must fit within one %d-byte mesh chunk (%lld elements of "
                                "%s hold %lld bytes)",
                                cname(c), MESH_CHUNK_BYTES, (long long)N, pld_dtype_name(t->dt),
                                (long long)(N * esz));
        nch = 1;
    }
    /* G chunks per step (merged_step: 1 under --collective-steps chunk) */
    const int64_t G = box ? 1 : merged_step(c, C, esz), W = G * C;
    const int batched = G > 1 && pld_dist_can_batch(c->it);
    int kept = 0;
    step_plan_t plan;
    if (G > 1) {
        const int64_t w = N < W ? N : W;
        step_plan(c, &plan);
        acc = step_bufs(c, t->dt, w, step_tmp(c, &plan, w, batched), &tmp, &kept);
    } else {
        acc = alloc_elems(t->dt, N < W ? N : W);
        tmp = alloc_elems(t->dt, N < W ? N : W);
    }
    if (!acc || !tmp) {
        st = oom(c);
        goto done;
    }
    TRY(barrier(c, 0, 1));
    for (int64_t k0 = 0; k0 < nch; k0 += G) {
        const int64_t k = k0 + G < nch ? k0 + G - 1 : nch - 1; /* the step's last chunk */
        int64_t lo = k0 * C, n = box ? N : (N - lo < W ? N - lo : W);
        if (box) {
            for (int p = -1; p < c->P; p++) {
                int who = p < 0 ? c->me : p;
                if (p == c->me)
                    continue;
                TRY(xfer(c, t, who, boxo, t->valid, p < 0 ? acc : tmp, 0));
                if (p >= 0)
                    TRY(fold(c, binop_of(op), acc, tmp, t->dt, n));
            }
        } else if (G > 1) {
            /* the step's reads, folds, barrier and stores (merged_fold_step) */
            const step_bar_t sb = {.lanes = 1, .n = (int32_t)(k - k0 + 1), .g = (int32_t)(k + 2)};
            TRY(merged_fold_step(c, &plan, &sb, &flat, lo, n, binop_of(op), acc, tmp, batched));
            continue;
        } else {
            TRY(read_fold(c, &flat, lo, n, binop_of(op), acc, tmp, batched));
        }
        TRY(barrier_n(c, 0, (int32_t)(k - k0 + 1), (int32_t)(k + 2)));
        TRY(box ? local_io(c, t, boxo, t->valid, acc, 1) : xfer1(c, &flat, c->me, lo, n, acc, 1));
    }
    TRY(clear(c, 0, (int32_t)(1 + nch)));
done:
    if (G > 1) {
        step_bufs_done(c, acc, kept);
    } else {
        pld_mem_free(acc);
        pld_mem_free(tmp);
    }
    return st;
}

/* A valid box that is a row-major prefix of the flat tensor: its length, or -1. */
static int64_t prefix_len(const pld_tensor_t *t)
{
    for (int k = 0; k < t->rank; k++) {
        int ok = 1;
        for (int d = 0; d < k && ok; d++)
            ok = t->valid[d] == 1;
        for (int d = k + 1; d < t->rank && ok; d++)
            ok = t->valid[d] == t->shape[d];
        if (ok)
            return numel_of(t->rank, t->valid);
    }
    return t->rank == 0 ? 1 : numel_of(t->rank, t->valid) == 0 ? 0 : -1;
}

/* InCore ring (§2.14.2). */
static pld_status_t incore_allreduce_ring(coll_t *c, const pld_tensor_t *t, int64_t op)
{
    pld_status_t st = PLD_OK;
    const int P = c->P, me = c->me, left = (int)imod(me - 1, P);
    const int64_t NR = c->sig->shape[1];
    int esz = pld_dtype_bytes(t->dt), fp16 = t->dt == PLD_DT_FP16;
    int64_t SIZE = prefix_len(t), C = MESH_CHUNK_BYTES / esz;
    pld_tensor_t flat;
    void *acc = NULL, *tmp = NULL;
    int64_t b[PLD_WIN_MAX_RANKS + 1];
    if (SIZE < 0)
        return pld_rt_error(c->it, c->f, c->e->span,
                            "%s: mode=\"ring\" target valid_shape must be a contiguous row-major prefix", cname(c));
    if (!is_packed(t))
        return pld_rt_error(c->it, c->f, c->e->span,
                            "%s: the target must be a packed row-major view on the InCore rail", cname(c));
    flat_desc(t, &flat, numel_of(t->rank, t->shape));
    for (int64_t i = 0; i <= NR; i++)
        b[i] = fp16 ? (cdiv(i * SIZE, 16 * NR) * 16 < SIZE ? cdiv(i * SIZE, 16 * NR) * 16 : SIZE) : i * SIZE / NR;
    int64_t maxseg = cdiv(SIZE, NR);
    if (fp16)
        maxseg = maxseg + 15 < SIZE ? maxseg + 15 : SIZE;
    int64_t nsub = cdiv(maxseg, C);
    /* G sub-chunks per step (ring_step): the step's first barrier (2 j0 + 1),
     * its reads, the rest of its barriers at once (credit 2 G - 1, wait for
     * 2 j1), its stores. Within a row every rank stores segment s of its own
     * copy while its right neighbour reads segment s + 1 of it, so no read
     * meets a store of the same row; a row's reads still follow every store
     * of the row before (its first barrier), and its stores every read of
     * its own sub-chunks: the per-chunk order, coarser (G = 1: it). */
    const int64_t G = ring_step(c, C, esz), W = G * C < maxseg ? G * C : maxseg;
    acc = alloc_elems(t->dt, W);
    tmp = alloc_elems(t->dt, W);
    if (!acc || !tmp) {
        st = oom(c);
        goto done;
    }
    for (int phase = 0; phase < 2; phase++) {
        for (int64_t k = 0; k + 1 < P; k++) {
            int64_t row = phase == 0 ? k : P - 1 + k;
            int64_t s = phase == 0 ? imod(me - k - 2, P) : imod(me - k - 1, P);
            for (int64_t j0 = 0; j0 < nsub; j0 += G) {
                const int64_t j1 = j0 + G < nsub ? j0 + G : nsub;
                int64_t lo = b[s] + j0 * C, hi = b[s] + j1 * C < b[s + 1] ? b[s] + j1 * C : b[s + 1];
                int active = lo < hi;
                TRY(barrier(c, row, (int32_t)(2 * j0 + 1)));
                if (active) {
                    TRY(xfer1(c, &flat, left, lo, hi - lo, tmp, 0));
                    if (phase == 0) {
                        TRY(xfer1(c, &flat, me, lo, hi - lo, acc, 0));
                        TRY(fold(c, binop_of(op), acc, tmp, t->dt, hi - lo));
                    }
                }
                TRY(barrier_n(c, row, (int32_t)(2 * (j1 - j0) - 1), (int32_t)(2 * j1)));
                if (active)
                    TRY(xfer1(c, &flat, me, lo, hi - lo, phase == 0 ? acc : tmp, 1));
            }
        }
    }
    for (int64_t r = 0; r < c->sig->shape[0]; r++)
        TRY(clear(c, r, (int32_t)(2 * nsub)));
done:
    pld_mem_free(acc);
    pld_mem_free(tmp);
    return st;
}

/* HOST mesh (§2.14.3): blocks b < B = min(core_num, S) on lanes [q, b]; ready
 * barrier, 256-element tiles block-cyclic with a lane barrier per tile, and
 * an epilogue of -(1 + tiles of the block). */
static pld_status_t host_allreduce_mesh(coll_t *c, const pld_tensor_t *t, int64_t op, int64_t core_num)
{
    pld_status_t st = PLD_OK;
    int64_t N = numel_of(t->rank, t->shape);
    int64_t S = c->sig->rank == 2 ? c->sig->shape[1] : 1;
    int64_t B = core_num < S ? core_num : S;
    pld_tensor_t flat;
    char *acc = NULL;
    char *tmp = NULL;
    int esz = pld_dtype_bytes(t->dt);
    /* tracing: core b's steps go on block b's track (the builtin kernel runs
     * core_num blocks on a card; here they take turns) */
    const int64_t saved_idx = c->f->block_idx, saved_num = c->f->block_num;
#define LANE(b) lane_track(c, (b), B)
    if (c->P > BUILTIN_MAX_RANKS || N <= 0) {
        warn_once(c, W_GUARD, "%s (HOST builtin) does nothing: the builtin kernel returns early when %s (%d here)",
                  cname(c), N <= 0 ? "the target has no elements" : "more than 16 ranks take part",
                  N <= 0 ? 0 : c->P);
        return PLD_OK;
    }
    if (!is_packed(t))
        return pld_rt_error(c->it, c->f, c->e->span, "%s: the target must be a packed window view", cname(c));
    flat_desc(t, &flat, N);
    int64_t ntiles = cdiv(N, HOST_TILE), maxT = B > 0 ? cdiv(ntiles, B) : 0;
    /* rounds of B tiles per step (merged_step: 1 under --collective-steps chunk) */
    const int64_t R = B > 0 ? (merged_step(c, B * HOST_TILE, esz)) : 1;
    const int batched = R > 1 && pld_dist_can_batch(c->it);
    int kept = 0;
    step_plan_t plan;
    if (R > 1) {
        const int64_t w = R * B * HOST_TILE < N ? R * B * HOST_TILE : N;
        step_plan(c, &plan);
        acc = step_bufs(c, t->dt, w, step_tmp(c, &plan, w, batched), &tmp, &kept);
    } else {
        acc = alloc_elems(t->dt, B * HOST_TILE);
        tmp = alloc_elems(t->dt, HOST_TILE);
    }
    if (!acc || !tmp) {
        st = oom(c);
        goto done;
    }
    for (int64_t b = 0; b < B; b++) {
        LANE(b);
        TRY(arrive(c, b));
    }
    for (int64_t b = 0; b < B; b++) {
        LANE(b);
        TRY(await_all(c, b, 1));
    }
    for (int64_t j0 = 0; R > 1 && j0 < maxT; j0 += R) {
        /* rounds j0 .. j1-1 at once: tiles [j0*B, j1*B) are one contiguous
         * range; one merged step (merged_fold_step), in which every lane
         * passes its barriers of these rounds at once (credit + its tiles
         * in them, wait for 1 + its tiles so far) */
        const int64_t j1 = j0 + R < maxT ? j0 + R : maxT;
        const int64_t lo = j0 * B * HOST_TILE, hi = j1 * B * HOST_TILE < N ? j1 * B * HOST_TILE : N;
        const step_bar_t sb = {.host = 1, .lanes = B, .j0 = j0, .j1 = j1, .ntiles = ntiles};
        if (c->it->trace) { /* the step's data moves cover every block's tiles: the collective's own track */
            c->f->block_idx = saved_idx;
            c->f->block_num = saved_num;
        }
        TRY(merged_fold_step(c, &plan, &sb, &flat, lo, hi - lo, binop_of(op), acc, tmp, batched));
    }
    for (int64_t j = 0; R == 1 && j < maxT; j++) {
        for (int64_t b = 0; b < B; b++) {
            int64_t tile = b + j * B;
            if (tile >= ntiles)
                continue;
            int64_t lo = tile * HOST_TILE, n = N - lo < HOST_TILE ? N - lo : HOST_TILE;
            char *ab = acc + (size_t)b * HOST_TILE * (size_t)esz;
            LANE(b);
            TRY(xfer1(c, &flat, c->me, lo, n, ab, 0));
            for (int p = 0; p < c->P; p++) {
                if (p == c->me)
                    continue;
                TRY(xfer1(c, &flat, p, lo, n, tmp, 0));
                TRY(fold(c, binop_of(op), ab, tmp, t->dt, n));
            }
            TRY(arrive(c, b));
        }
        for (int64_t b = 0; b < B; b++) {
            int64_t tile = b + j * B;
            if (tile >= ntiles)
                continue;
            int64_t lo = tile * HOST_TILE, n = N - lo < HOST_TILE ? N - lo : HOST_TILE;
            LANE(b);
            TRY(await_all(c, b, (int32_t)(j + 2)));
            TRY(xfer1(c, &flat, c->me, lo, n, acc + (size_t)b * HOST_TILE * (size_t)esz, 1));
        }
    }
    for (int64_t b = 0; b < B; b++) {
        int64_t tb = b < ntiles ? cdiv(ntiles - b, B) : 0;
        LANE(b);
        TRY(clear(c, b, (int32_t)(1 + tb)));
    }
done:
#undef LANE
    c->f->block_idx = saved_idx;
    c->f->block_num = saved_num;
    if (R > 1) {
        step_bufs_done(c, acc, kept);
    } else {
        pld_mem_free(acc);
        pld_mem_free(tmp);
    }
    return st;
}

/* HOST ring (§2.14.4): Sum, FP32, one block; rows 0..P-2 reduce-scatter,
 * P-1..2P-3 all-gather, 2P-2 the return barrier; -1 on every used row. */
static pld_status_t host_allreduce_ring(coll_t *c, const pld_tensor_t *t, int64_t op)
{
    pld_status_t st = PLD_OK;
    const int P = c->P, me = c->me, left = (int)imod(me - 1, P);
    int64_t N = numel_of(t->rank, t->shape);
    pld_tensor_t flat;
    void *acc = NULL, *tmp = NULL;
    if (op != 0 || t->dt != PLD_DT_FP32)
        return pld_rt_error(c->it, c->f, c->e->span,
                            "%s: mode=\"ring\" on the HOST rail supports only op=ReduceOp.Sum with FP32, found "
                            "ReduceOp.%s with %s",
                            cname(c), redop_name(op), pld_dtype_name(t->dt));
    if (P <= 1)
        return PLD_OK;
    if (P > BUILTIN_MAX_RANKS || N <= 0 || N % P != 0) {
        warn_once(c, W_GUARD, "%s (HOST builtin ring) does nothing: the builtin kernel returns early when %s",
                  cname(c),
                  P > BUILTIN_MAX_RANKS ? "more than 16 ranks take part"
                  : N <= 0              ? "the target has no elements"
                                        : "the element count is not a multiple of the rank count");
        return PLD_OK;
    }
    if (!is_packed(t))
        return pld_rt_error(c->it, c->f, c->e->span, "%s: the target must be a packed window view", cname(c));
    flat_desc(t, &flat, N);
    int64_t chunk = N / P;
    acc = alloc_elems(t->dt, chunk);
    tmp = alloc_elems(t->dt, chunk);
    if (!acc || !tmp) {
        st = oom(c);
        goto done;
    }
    for (int64_t s = 1; s < P; s++) {
        int64_t ch = imod(me - s - 1, P);
        TRY(barrier(c, s - 1, 1));
        TRY(xfer1(c, &flat, me, ch * chunk, chunk, acc, 0));
        TRY(xfer1(c, &flat, left, ch * chunk, chunk, tmp, 0));
        TRY(fold(c, PLD_K_ADD, acc, tmp, t->dt, chunk));
        TRY(xfer1(c, &flat, me, ch * chunk, chunk, acc, 1));
    }
    for (int64_t s = 1; s < P; s++) {
        int64_t ch = imod(me - s, P);
        TRY(barrier(c, P - 2 + s, 1));
        TRY(xfer1(c, &flat, left, ch * chunk, chunk, tmp, 0));
        TRY(xfer1(c, &flat, me, ch * chunk, chunk, tmp, 1));
    }
    TRY(barrier(c, 2 * (P - 1), 1));
    for (int64_t r = 0; r <= 2 * (P - 1); r++)
        TRY(clear(c, r, 1));
done:
    pld_mem_free(acc);
    pld_mem_free(tmp);
    return st;
}

/* The [world_size, core_num] INT32 view over the buffer pld_dist_setup
 * reserved for a HOST allreduce without a signal (§2.14.5). */
static pld_status_t synth_signal(coll_t *c, int64_t core_num, pld_value_t *out)
{
    int w = pld_dist_buf_of(c->it, c->e);
    if (w < 0)
        return pld_rt_error(c->it, c->f, c->e->span,
                            "%s without a signal: no synthesized signal buffer was reserved for this call (it must "
                            "be a statement of the HOST orchestrator that runs as the entry)",
                            cname(c));
    winbuf_t *wb = &c->it->wins[w];
    int64_t shape[2] = {c->it->comm.nranks, core_num};
    int64_t need;
    if (pld_size_bytes(2, shape, 4, INT64_MAX, &need) != PLD_SIZE_OK || (size_t)need > wb->bytes || !wb->buf)
        return pld_rt_error(c->it, c->f, c->e->span, "%s: the synthesized signal buffer is too small", cname(c));
    pld_tensor_t *t = pld_tensor_view(wb->buf, PLD_DT_INT32, 2, shape, 0);
    if (!t)
        return oom(c);
    t->is_dist = 1;
    t->winbuf = w;
    *out = pld_v_obj(&t->hdr, PLD_DT_INT32);
    return PLD_OK;
}

static pld_status_t exec_allreduce(coll_t *c, const pld_tensor_t *t)
{
    pld_interp_t *it = c->it;
    const pld_expr_t *e = c->e;
    pld_status_t st;
    int64_t op, core_num;
    int ring = e->op == PLD_OPID_BUILTIN_ALLREDUCE_RING; /* its default mode */
    pld_value_t sv = pld_v_none();
    if ((st = pld_op_iarg(it, c->f, e, 2, 0, &op)) != PLD_OK || (st = pld_op_iarg(it, c->f, e, 4, 1, &core_num)) != PLD_OK)
        return st;
    if (op < 0 || op > 3)
        return pld_rt_error(it, c->f, e->span, "%s: op must be ReduceOp.Sum, Max, Min or Prod, found %lld", cname(c),
                            (long long)op);
    if (core_num < 1)
        return pld_rt_error(it, c->f, e->span, "%s: core_num must be positive, found %lld", cname(c),
                            (long long)core_num);
    if (pld_op_arg(e, 3)) {
        const pld_expr_t *m = pld_op_arg(e, 3);
        if (m->kind != PLD_EX_STR || (strcmp(m->u.str.s, "ring") != 0 && strcmp(m->u.str.s, "mesh") != 0))
            return pld_rt_error(it, c->f, m->span, "%s: mode must be \"mesh\" or \"ring\"", cname(c));
        ring = strcmp(m->u.str.s, "ring") == 0;
    }
    if (t->dt != PLD_DT_FP16 && t->dt != PLD_DT_FP32)
        return pld_rt_error(it, c->f, e->span, "%s: target dtype must be FP16 or FP32, found %s", cname(c),
                            pld_dtype_name(t->dt));
    c->name = ring ? "allreduce (ring)" : "allreduce (mesh)";
    if (!pld_op_arg(e, 1)) {
        if (c->f->ctx != PLD_CTX_HOST)
            return pld_rt_error(it, c->f, e->span, "%s requires an explicit signal outside a HOST orchestrator",
                                cname(c));
        if (ring)
            return pld_rt_error(it, c->f, e->span, "%s: mode=\"ring\" requires an explicit signal", cname(c));
        if ((st = synth_signal(c, core_num, &sv)) != PLD_OK)
            return st;
    } else if ((st = cneed(c, 1, &sv)) != PLD_OK) {
        return st;
    }
    const pld_tensor_t *s = pld_v_tensor(&sv);
    if (c->f->ctx == PLD_CTX_KERNEL) {
        if (core_num != 1) {
            st = pld_rt_error(it, c->f, e->span,
                              "%s: core_num > 1 is supported only in a HOST orchestrator; use an enclosing "
                              "pl.spmd(...)",
                              cname(c));
        } else if (!ring) {
            if ((st = check_signal(c, s, pld_op_arg(e, 1), 2, c->P, "the rank count", 1, "1")) == PLD_OK)
                st = incore_allreduce_mesh(c, t, op);
        } else {
            c->ring = 1;
            if ((st = check_signal(c, s, pld_op_arg(e, 1), 2, 2 * (c->P - 1), "2*(P-1)", c->P, "the rank count")) ==
                PLD_OK) {
                if (s->shape[1] != c->P)
                    st = pld_rt_error(it, c->f, pld_op_arg(e, 1)->span,
                                      "%s: mode=\"ring\" signal shape[1] (%lld) is the NR that segments the payload "
                                      "and must equal the rank count of the comm domain (%d)",
                                      cname(c), (long long)s->shape[1], c->P);
                else if (s->shape[0] != 2 * (c->P - 1))
                    st = pld_rt_error(it, c->f, pld_op_arg(e, 1)->span,
                                      "%s: mode=\"ring\" signal shape[0] (%lld) must equal 2*(NR-1) = %d", cname(c),
                                      (long long)s->shape[0], 2 * (c->P - 1));
                else
                    st = incore_allreduce_ring(c, t, op);
            }
        }
    } else if (!ring) {
        if (s->rank == 1 && core_num > 1)
            st = pld_rt_error(it, c->f, pld_op_arg(e, 1)->span,
                              "%s: a rank-1 signal is valid only with core_num == 1, found core_num %lld", cname(c),
                              (long long)core_num);
        else if (core_num > pld_npu_profile_or_default(it->opts.platform)->aiv_cores)
            st = pld_rt_error(it, c->f, e->span, "%s: core_num (%lld) exceeds the AIV core count (%d)", cname(c),
                              (long long)core_num, pld_npu_profile_or_default(it->opts.platform)->aiv_cores);
        else if ((st = check_signal(c, s, pld_op_arg(e, 1), 1, c->P, "the participating device count", core_num,
                                    "the required lane count (core_num)")) == PLD_OK)
            st = host_allreduce_mesh(c, t, op, core_num);
    } else {
        c->ring = 1;
        if (core_num != 1)
            st = pld_rt_error(it, c->f, e->span, "%s: mode=\"ring\" on the HOST rail does not support core_num > 1",
                              cname(c));
        else if ((st = check_signal(c, s, pld_op_arg(e, 1), 2, 2 * (c->P - 1) + 1, "2*(P-1)+1", c->P,
                                    "the participating device count")) == PLD_OK) {
            if (s->shape[1] != c->P)
                st = pld_rt_error(it, c->f, pld_op_arg(e, 1)->span,
                                  "%s: mode=\"ring\" signal shape[1] (%lld) must equal the participating device "
                                  "count (%d)",
                                  cname(c), (long long)s->shape[1], c->P);
            else
                st = host_allreduce_ring(c, t, op);
        }
    }
    pld_value_release(&sv);
    return st;
}

/* ------------------------------------------------------------ barrier / broadcast / reduce_scatter */

static pld_status_t builtin_guard(coll_t *c)
{
    if (c->f->ctx == PLD_CTX_KERNEL || c->P <= BUILTIN_MAX_RANKS)
        return PLD_E_RUNTIME; /* not guarded */
    warn_once(c, W_GUARD,
              "%s (%s) does nothing: the builtin kernel returns early when more than 16 ranks take part (%d here)",
              cname(c), rail_of(c), c->P);
    return PLD_OK;
}

static pld_status_t exec_barrier(coll_t *c, pld_value_t *sigv)
{
    pld_status_t st;
    c->name = "barrier";
    if (c->f->ctx == PLD_CTX_HOST && builtin_guard(c) == PLD_OK)
        return PLD_OK;
    if ((st = check_signal(c, pld_v_tensor(sigv), pld_op_arg(c->e, 0), c->f->ctx == PLD_CTX_KERNEL ? 2 : 1, c->P,
                           "the rank count", 1, "1")) != PLD_OK)
        return st;
    if ((st = barrier(c, 0, 1)) != PLD_OK)
        return st;
    return clear(c, 0, 1);
}

static pld_status_t exec_broadcast(coll_t *c, const pld_tensor_t *t)
{
    pld_status_t st;
    pld_value_t sv = pld_v_none();
    int64_t root;
    void *buf = NULL;
    int kept = 0;
    c->name = "broadcast";
    if ((st = pld_op_iarg(c->it, c->f, c->e, 2, 0, &root)) != PLD_OK)
        return st;
    if (root < 0 || root >= c->P)
        return pld_rt_error(c->it, c->f, pld_op_arg(c->e, 2) ? pld_op_arg(c->e, 2)->span : c->e->span,
                            "%s: root %lld is outside the comm domain [0, %d)", cname(c), (long long)root, c->P);
    if (c->f->ctx == PLD_CTX_HOST && builtin_guard(c) == PLD_OK)
        return PLD_OK;
    if ((st = cneed(c, 1, &sv)) != PLD_OK)
        return st;
    int64_t N = numel_of(t->rank, t->shape);
    if ((st = check_signal(c, pld_v_tensor(&sv), pld_op_arg(c->e, 1), c->f->ctx == PLD_CTX_KERNEL ? 2 : 1, c->P,
                           "the rank count", 1, "1")) != PLD_OK)
        goto done;
    if (c->f->ctx == PLD_CTX_KERNEL) {
        /* barrier(1) -> full-slice get from root -> epilogue -1 (no post barrier) */
        int64_t off[PLD_MAX_RANK] = {0};
        TRY(barrier(c, 0, 1));
        if (c->me != root) {
            if (!(buf = stage_buf(c, t->dt, N, &kept))) {
                st = oom(c);
                goto done;
            }
            TRY(xfer(c, t, (int)root, off, t->shape, buf, 0));
            TRY(local_io(c, t, off, t->shape, buf, 1));
        }
        TRY(clear(c, 0, 1));
    } else {
        /* per 256-element tile: barrier (t + 1), non-roots copy root's tile */
        pld_tensor_t flat;
        if (N <= 0) {
            warn_once(c, W_GUARD,
                      "%s (HOST builtin) does nothing: the builtin kernel returns early when the target has no "
                      "elements",
                      cname(c));
            goto done;
        }
        if (!is_packed(t)) {
            st = pld_rt_error(c->it, c->f, c->e->span, "%s: the target must be a packed window view", cname(c));
            goto done;
        }
        flat_desc(t, &flat, N);
        int64_t ntiles = cdiv(N, HOST_TILE);
        if (!(buf = alloc_elems(t->dt, HOST_TILE))) {
            st = oom(c);
            goto done;
        }
        for (int64_t k = 0; k < ntiles; k++) {
            int64_t lo = k * HOST_TILE, n = N - lo < HOST_TILE ? N - lo : HOST_TILE;
            TRY(barrier(c, 0, (int32_t)(k + 1)));
            if (c->me != root) {
                TRY(xfer1(c, &flat, (int)root, lo, n, buf, 0));
                TRY(xfer1(c, &flat, c->me, lo, n, buf, 1));
            }
        }
        TRY(clear(c, 0, (int32_t)ntiles));
    }
done:
    step_bufs_done(c, buf, kept);
    pld_value_release(&sv);
    return st;
}

static pld_status_t exec_reduce_scatter(coll_t *c, const pld_tensor_t *t)
{
    pld_status_t st;
    pld_value_t sv = pld_v_none();
    int64_t op;
    void *acc = NULL, *tmp = NULL;
    c->name = "reduce_scatter";
    if ((st = pld_op_iarg(c->it, c->f, c->e, 2, 0, &op)) != PLD_OK)
        return st;
    if (op != 0)
        return pld_rt_error(c->it, c->f, c->e->span, "%s: op must be ReduceOp.Sum, found ReduceOp.%s", cname(c),
                            redop_name(op));
    if (c->f->ctx == PLD_CTX_HOST && builtin_guard(c) == PLD_OK)
        return PLD_OK;
    if (t->rank != 2)
        return pld_rt_error(c->it, c->f, c->e->span, "%s: the target must be 2-D [NR, SIZE], found rank %d",
                            cname(c), t->rank);
    if (t->shape[0] < c->P || t->shape[1] <= 0) {
        if (c->f->ctx == PLD_CTX_KERNEL)
            return pld_rt_error(c->it, c->f, c->e->span,
                                "%s: the target [%lld, %lld] needs at least one row per rank (%d) and SIZE > 0",
                                cname(c), (long long)t->shape[0], (long long)t->shape[1], c->P);
        warn_once(c, W_GUARD, "%s (HOST builtin) does nothing: the builtin kernel returns early when %s", cname(c),
                  t->shape[0] < c->P ? "the target has fewer rows than ranks" : "a row has no elements");
        return PLD_OK;
    }
    if ((st = cneed(c, 1, &sv)) != PLD_OK)
        return st;
    if ((st = check_signal(c, pld_v_tensor(&sv), pld_op_arg(c->e, 1), c->f->ctx == PLD_CTX_KERNEL ? 2 : 1, c->P,
                           "the rank count", 1, "1")) != PLD_OK)
        goto done;
    int64_t SIZE = t->shape[1];
    if (c->f->ctx == PLD_CTX_KERNEL) {
        /* barrier(1) -> own row me + peers' rows me -> barrier(2) -> store -> -2 */
        acc = alloc_elems(t->dt, SIZE);
        tmp = alloc_elems(t->dt, SIZE);
        if (!acc || !tmp) {
            st = oom(c);
            goto done;
        }
        TRY(barrier(c, 0, 1));
        TRY(xfer_rows(c, t, c->me, c->me, 1, acc, 0));
        for (int p = 0; p < c->P; p++) {
            if (p == c->me)
                continue;
            TRY(xfer_rows(c, t, p, c->me, 1, tmp, 0));
            TRY(fold(c, PLD_K_ADD, acc, tmp, t->dt, SIZE));
        }
        TRY(barrier(c, 0, 2));
        TRY(xfer_rows(c, t, c->me, c->me, 1, acc, 1));
        TRY(clear(c, 0, 2));
    } else {
        /* ready barrier -> tiles of row me reduced and stored -> barrier (2) -> -2 */
        acc = alloc_elems(t->dt, HOST_TILE);
        tmp = alloc_elems(t->dt, HOST_TILE);
        if (!acc || !tmp) {
            st = oom(c);
            goto done;
        }
        TRY(barrier(c, 0, 1));
        for (int64_t lo = 0; lo < SIZE; lo += HOST_TILE) {
            int64_t n = SIZE - lo < HOST_TILE ? SIZE - lo : HOST_TILE;
            int64_t off[2] = {c->me, lo}, ext[2] = {1, n};
            TRY(xfer(c, t, c->me, off, ext, acc, 0));
            for (int p = 0; p < c->P; p++) {
                if (p == c->me)
                    continue;
                TRY(xfer(c, t, p, off, ext, tmp, 0));
                TRY(fold(c, PLD_K_ADD, acc, tmp, t->dt, n));
            }
            TRY(xfer(c, t, c->me, off, ext, acc, 1));
        }
        TRY(barrier(c, 0, 2));
        TRY(clear(c, 0, 2));
    }
done:
    pld_mem_free(acc);
    pld_mem_free(tmp);
    pld_value_release(&sv);
    return st;
}

/* ------------------------------------------------------------ rows by message */

/* The row exchanges whose receivers know their sources (allgather,
 * all_to_all, all_to_all_v) move their rows between hosts as two-sided
 * messages instead of puts, on a hybrid domain when the step may batch
 * (docs/transport.md, "Row exchanges by messages"). Every rank posts a
 * receive of MR rows from each member on another host, straight into its own
 * target rows [q * MR, (q + 1) * MR), before it sends, and sends each of
 * them its rows (a message even for none: the receive waits for one). It
 * waits for every transfer before the protocol's barrier; all_to_all_v's
 * receiver then sets recv_counts[q] itself to the rows that arrived (the cell
 * changes after its data is in place, as after a put and its notify, and
 * through the owner's atomic, the mechanism of every signal from another
 * host). */
typedef struct far_rows {
    uint64_t far;       /* the members whose rows go by message; 0: none */
    int64_t MR;         /* rows per source in the target */
    pld_win_xset_t *xs; /* the transfers (far_post) */
    char *bounce;       /* where bounced rows land first (far_bounced) */
} far_rows_t;

/* The bytes of `rows` rows of the rank-2 tensor t. */
static size_t row_bytes(const pld_tensor_t *t, int64_t rows)
{
    return (size_t)rows * (size_t)t->shape[1] * (size_t)pld_dtype_bytes(t->dt);
}

/* The members on other hosts when rows of MR x t's columns may go by message
 * (msgs_ok, a batched step, within one MPI count), else none. */
static uint64_t far_members(const coll_t *c, int batched, const pld_tensor_t *t, int64_t MR)
{
    uint64_t far = 0;
    if (!batched || !msgs_ok(c) || row_bytes(t, MR) > (size_t)INT32_MAX)
        return 0;
    for (int q = 0; q < c->P; q++)
        if (pld_win_xset_two_sided(c->d->win, q))
            far |= RBIT(q);
    return far;
}

/* Whether the rows from q land in a bounce buffer first: when t is not
 * packed; pldrun_testing also takes that path for every odd q, so that the
 * hybrid tests (packed targets) cover both. */
static int far_bounced(const pld_tensor_t *t, int q)
{
#ifdef PLD_TESTING
    if (q % 2)
        return 1;
#else
    (void)q;
#endif
    return !is_packed(t);
}

/* Posts the receives of the rows of every member in fr->far: rows
 * [q * MR, (q + 1) * MR) of t in this rank's memory, or slot j (the j-th
 * member of far) of fr->bounce (far_bounced). */
static pld_status_t far_post(coll_t *c, const pld_tensor_t *t, far_rows_t *fr)
{
    const size_t cap = row_bytes(t, fr->MR);
    char err[256];
    int nf = 0, nb = 0;
    for (int q = 0; q < c->P; q++)
        if (fr->far & RBIT(q)) {
            nf++;
            nb += far_bounced(t, q);
        }
    if (pld_win_xset_open(c->d->win, 2 * nf, cap * (size_t)nf, &fr->xs, err, sizeof err) != PLD_OK)
        return xset_fail(c, err);
    if (nb > 0 && !(fr->bounce = pld_mem_alloc(cap * (size_t)nf)))
        return oom(c);
    for (int q = 0, j = 0; q < c->P; q++) {
        if (!(fr->far & RBIT(q)))
            continue;
        int64_t idx[2] = {q * fr->MR, 0};
        void *dst = far_bounced(t, q) ? fr->bounce + cap * (size_t)j : pld_tensor_at(t, idx);
        j++;
        if (pld_win_xset_recv(fr->xs, q, dst, cap, PLD_XSET_SIZED, err, sizeof err) != PLD_OK)
            return xset_fail(c, err);
    }
    return PLD_OK;
}

/* Sends rows [row, row + rows) of `in` to dest, for its target rows from
 * me * MR (far_post's receive there), staged through `stage` when they are
 * not one run. A put event in the trace: rows written into dest's window. */
static pld_status_t far_send(coll_t *c, const pld_tensor_t *in, const pld_tensor_t *t, const far_rows_t *fr, int dest,
                             int64_t row, int64_t rows, char *stage)
{
    pld_interp_t *it = c->it;
    const void *src = NULL;
    char err[256];
    pld_ev_t ev;
    if (it->trace)
        pld_tr_init(c->f, c->e->span, &ev, PLD_EV_PUT, pld_op_name(c->e));
    pld_status_t st = rows > 0 ? push_src(c, in, t, row, rows, stage, &src) : PLD_OK;
    const size_t bytes = row_bytes(t, rows);
    if (st == PLD_OK &&
        pld_win_xset_send(fr->xs, dest, src, bytes, row_bytes(t, fr->MR), PLD_XSET_SIZED, err, sizeof err) != PLD_OK)
        st = xset_fail(c, err);
    if (st != PLD_OK)
        return st;
    it->stats.bytes_moved += (uint64_t)bytes;
    if (it->trace) {
        int64_t idx[2] = {c->me * fr->MR, 0};
        trace_msg(c, &ev, t, dest, idx, bytes);
    }
    return PLD_OK;
}

/* Waits for every transfer of fr, then for each member q in fr->far: its
 * rows into t (from the bounce buffer); with recv_counts rc,
 * rc[q] = the rows that arrived, else exactly MR rows must have. */
static pld_status_t far_land(coll_t *c, const pld_tensor_t *t, const pld_tensor_t *rc, const far_rows_t *fr)
{
    const far_wait_t w = {c, fr->far, "rows"};
    pld_status_t st = pld_dist_xset_wait(c->it, c->f, c->e, c->d, fr->xs, describe_far_wait, &w);
    const size_t row = row_bytes(t, 1);
    for (int q = 0, j = 0; q < c->P && st == PLD_OK; q++) {
        if (!(fr->far & RBIT(q)))
            continue;
        const int64_t got = pld_win_xset_got(fr->xs, j);
        if (got < 0 || (size_t)got % row != 0 || (!rc && (size_t)got != (size_t)fr->MR * row))
            return pld_rt_error(c->it, c->f, c->e->span,
                                rc ? "%s: rank %d sent %lld bytes, not whole rows of %zu bytes (a mismatched call)"
                                   : "%s: rank %d sent %lld bytes, not its row of %zu bytes (a mismatched call)",
                                cname(c), q, (long long)got, row);
        const int64_t rows = (int64_t)((size_t)got / row);
        int64_t off[2] = {q * fr->MR, 0}, ext[2] = {rows, t->shape[1]}, cell[2] = {q, 0};
        if (far_bounced(t, q) && rows > 0)
            st = local_io(c, t, off, ext, fr->bounce + (size_t)fr->MR * row * (size_t)j, 1);
        if (st == PLD_OK && rc)
            st = pld_dist_notify(c->it, c->f, c->e, c->d, c->me, pld_dist_disp(c->d, rc, cell), (int32_t)rows, 1);
        j++;
    }
    return st;
}

static void far_done(far_rows_t *fr)
{
    pld_win_xset_close(fr->xs);
    pld_mem_free(fr->bounce);
}

/* ------------------------------------------------------------ allgather / all_to_all */

static pld_status_t exec_gather(coll_t *c, const pld_tensor_t *t)
{
    const int a2a = c->kind == PLD_OPID_PLD_ALL_TO_ALL;
    pld_status_t st;
    pld_value_t iv, sv = pld_v_none();
    void *buf = NULL;
    far_rows_t fr = {0, 1, NULL, NULL}; /* the rows to and from other hosts */
    int kept = 0;
    c->name = a2a ? "all_to_all" : "allgather";
    if (c->f->ctx == PLD_CTX_HOST && builtin_guard(c) == PLD_OK)
        return PLD_OK;
    if ((st = cneed(c, 0, &iv)) != PLD_OK)
        return st;
    const pld_tensor_t *in = pld_v_tensor(&iv);
    if (t->rank != 2 || in->rank != 2) {
        st = pld_rt_error(c->it, c->f, c->e->span, "%s: the input and the target must be 2-D", cname(c));
        goto done;
    }
    if (in->dt != t->dt || in->shape[1] != t->shape[1]) {
        st = pld_rt_error(c->it, c->f, c->e->span, "%s: input %s [.., %lld] and target %s [.., %lld] differ",
                          cname(c), pld_dtype_name(in->dt), (long long)in->shape[1], pld_dtype_name(t->dt),
                          (long long)t->shape[1]);
        goto done;
    }
    if (t->shape[0] < c->P || (a2a && in->shape[0] < c->P)) {
        st = pld_rt_error(c->it, c->f, c->e->span, "%s: the %s has %lld rows, fewer than the %d ranks", cname(c),
                          t->shape[0] < c->P ? "target" : "input",
                          (long long)(t->shape[0] < c->P ? t->shape[0] : in->shape[0]),
                          c->P);
        goto done;
    }
    int64_t SIZE = t->shape[1];
    if (c->f->ctx == PLD_CTX_HOST && SIZE <= 0) {
        warn_once(c, W_GUARD,
                  "%s (HOST builtin) does nothing: the builtin kernel returns early when a row has no elements",
                  cname(c));
        goto done;
    }
    if ((st = cneed(c, 2, &sv)) != PLD_OK)
        goto done;
    if ((st = check_signal(c, pld_v_tensor(&sv), pld_op_arg(c->e, 2), c->f->ctx == PLD_CTX_KERNEL ? 2 : 1, c->P,
                           "the rank count", 1, "1")) != PLD_OK)
        goto done;
    if (c->f->ctx == PLD_CTX_HOST && (st = same_domain(c, in, pld_op_arg(c->e, 0), "input")) != PLD_OK)
        goto done;
    /* across hosts the puts go out as one batch (all_to_all: a buffer per
     * destination); the barrier's notifies follow them, as one by one */
    const int batched = rows_batched(c);
    const int nbuf = batched && a2a ? c->P : 1;
    if (!(buf = stage_buf(c, t->dt, SIZE * nbuf, &kept))) {
        st = oom(c);
        goto done;
    }
    /* the members on other hosts: rows by message */
    if ((fr.far = far_members(c, batched, t, 1)) != 0)
        TRY(far_post(c, t, &fr));
    if (batched)
        pld_win_batch_begin(c->it->win);
    /* push: local row (allgather: row 0; all_to_all: row dest) -> dest's target[me, :] */
    int order[PLD_WIN_MAX_RANKS];
    push_order(c, batched, order);
    const void *src = NULL;
    for (int i = 0, staged = 0; i < c->P && st == PLD_OK; i++) {
        int dest = order[i];
        char *b = (char *)buf + (nbuf > 1 ? (size_t)dest * (size_t)SIZE * (size_t)pld_dtype_bytes(t->dt) : 0);
        if (fr.far & RBIT(dest)) {
            st = far_send(c, in, t, &fr, dest, a2a ? dest : 0, 1, b);
            continue;
        }
        if (!staged++ || a2a)
            st = push_src(c, in, t, a2a ? dest : 0, 1, b, &src);
        if (st == PLD_OK)
            st = xfer_rows(c, t, dest, c->me, 1, (void *)src, 1);
    }
    if (batched)
        st = pld_dist_batch_end(c->it, c->f, c->e, st);
    if (st != PLD_OK)
        goto done;
    if (fr.far)
        TRY(far_land(c, t, NULL, &fr));
    TRY(barrier(c, 0, 1));
    TRY(clear(c, 0, 1));
done:
    far_done(&fr);
    step_bufs_done(c, buf, kept);
    pld_value_release(&iv);
    pld_value_release(&sv);
    return st;
}

/* ------------------------------------------------------------ all_to_all_v */

static int64_t a2av_blocks(int64_t p, int64_t l)
{
    return l < p ? l : (l / p) * p;
}

static pld_status_t exec_a2av(coll_t *c, const pld_tensor_t *t)
{
    pld_interp_t *it = c->it;
    const pld_expr_t *e = c->e;
    const int incore = c->f->ctx == PLD_CTX_KERNEL;
    pld_status_t st;
    pld_value_t iv = pld_v_none(), sv = pld_v_none(), scv = pld_v_none(), rcv = pld_v_none();
    void *buf = NULL;
    far_rows_t fr = {0, 0, NULL, NULL}; /* the rows to and from other hosts */
    int kept = 0;
    int64_t L, B = 1, MR;
    c->name = "all_to_all_v";
    if ((st = pld_op_iarg(it, c->f, e, 5, 1, &L)) != PLD_OK)
        return st;
    if (L < 1 || L > INT32_MAX)
        return pld_rt_error(it, c->f, e->span, "%s: core_num must be in [1, INT32_MAX], found %lld", cname(c),
                            (long long)L);
    if (incore && L != 1)
        return pld_rt_error(it, c->f, e->span,
                            "%s: core_num must be 1 on the InCore rail, found %lld; multi-block all_to_all_v runs on "
                            "the CHIP rail",
                            cname(c), (long long)L);
    if (!incore && builtin_guard(c) == PLD_OK)
        return PLD_OK;
    if ((st = cneed(c, 0, &iv)) != PLD_OK || (st = cneed(c, 2, &sv)) != PLD_OK ||
        (st = cneed(c, 3, &scv)) != PLD_OK || (st = cneed(c, 4, &rcv)) != PLD_OK)
        goto done;
    const pld_tensor_t *in = pld_v_tensor(&iv), *s = pld_v_tensor(&sv), *sc = pld_v_tensor(&scv),
                       *rc = pld_v_tensor(&rcv);
    if (c->f->ctx == PLD_CTX_CHIP) {
        /* the CHIP builtin's is_contiguous check (pld_semantics.md §2.20 (e)):
         * a transposed or column-sliced view is rejected at run time too */
        const pld_tensor_t *ops[5] = {in, t, s, sc, rc};
        for (int k = 0; k < 5; k++)
            if (!is_packed(ops[k])) {
                st = pld_rt_error(it, c->f, pld_op_arg(e, k) ? pld_op_arg(e, k)->span : e->span,
                                  "%s (CHIP builtin): '%s' must be a contiguous row-major view (its strides are not "
                                  "packed: a transposed or column-sliced operand is rejected by the builtin)",
                                  cname(c), pld_op_info((pld_op_id_t)c->kind)->params[k].name);
                goto done;
            }
    }
    if (t->rank != 2 || in->rank != 2 || in->dt != t->dt || in->shape[0] != t->shape[0] ||
        in->shape[1] != t->shape[1]) {
        st = pld_rt_error(it, c->f, e->span, "%s: input and target must both be 2-D [NR*MAX_RECV, SIZE] %s",
                          cname(c), pld_dtype_name(t->dt));
        goto done;
    }
    /* signal [NR, 1] (InCore) / [NR, S] (HOST, CHIP) with NR >= P */
    if ((st = check_signal(c, s, pld_op_arg(e, 2), 2, c->P, "the rank count", 1, "1")) != PLD_OK)
        goto done;
    int64_t NR = s->shape[0];
    if (sc->dt != PLD_DT_INT32 || rc->dt != PLD_DT_INT32 || sc->rank < 1 || sc->rank > 2 || rc->rank != 2 ||
        sc->shape[0] < c->P || rc->shape[0] < c->P) {
        st = pld_rt_error(it, c->f, e->span,
                          "%s: send_counts must be INT32 [NR] or [NR, 1] and recv_counts INT32 [NR, 1], with NR >= the "
                          "rank count (%d)",
                          cname(c), c->P);
        goto done;
    }
    if ((st = same_domain(c, rc, pld_op_arg(e, 4), "recv_counts")) != PLD_OK)
        goto done;
    if (incore) {
        /* MAX_RECV = target dim 0 / signal dim 0 (compile time) */
        if (NR <= 0 || t->shape[0] % NR != 0) {
            st = pld_rt_error(it, c->f, pld_op_arg(e, 2)->span, "%s: signal dim 0 (%lld) must divide target dim 0 (%lld)",
                              cname(c), (long long)NR, (long long)t->shape[0]);
            goto done;
        }
        MR = t->shape[0] / NR;
        if (NR != c->P)
            warn_once(c, W_NR,
                      "%s: signal dim 0 (%lld) differs from the rank count (%d); the InCore rail takes MAX_RECV = "
                      "target dim 0 / signal dim 0 = %lld, the HOST and CHIP rails take target dim 0 / P",
                      cname(c), (long long)NR, c->P, (long long)MR);
    } else {
        if (c->f->ctx == PLD_CTX_CHIP && NR != c->P) {
            st = pld_rt_error(it, c->f, pld_op_arg(e, 2)->span,
                              "%s: signal dim 0 (%lld) must equal the comm domain's rank count (%d) on the CHIP "
                              "rail (the kernel reads the rank count from the CommContext)",
                              cname(c), (long long)NR, c->P);
            goto done;
        }
        if (t->shape[0] % c->P != 0) {
            st = pld_rt_error(it, c->f, e->span,
                              "%s: target dim 0 (%lld) must be a multiple of the rank count (%d): MAX_RECV = target "
                              "dim 0 / P",
                              cname(c), (long long)t->shape[0], c->P);
            goto done;
        }
        MR = t->shape[0] / c->P;
        if (MR <= 0 || t->shape[1] <= 0) {
            warn_once(c, W_GUARD, "%s (%s) does nothing: the builtin kernel returns early when %s", cname(c),
                      rail_of(c), MR <= 0 ? "MAX_RECV is 0" : "a row has no elements");
            goto done;
        }
        if ((st = same_domain(c, in, pld_op_arg(e, 0), "input")) != PLD_OK ||
            (st = same_domain(c, sc, pld_op_arg(e, 3), "send_counts (peers read it)")) != PLD_OK)
            goto done;
        B = a2av_blocks(c->P, L);
        int64_t S = s->shape[1];
        if (S < B) {
            st = pld_rt_error(it, c->f, pld_op_arg(e, 2)->span,
                              "%s: signal shape[1] (%lld) must be at least the admitted block count %lld (core_num "
                              "%lld folded over %d ranks)",
                              cname(c), (long long)S, (long long)B, (long long)L, c->P);
            goto done;
        }
        if (B > pld_npu_profile_or_default(it->opts.platform)->aiv_cores) {
            st = pld_rt_error(it, c->f, e->span,
                              "%s: require_sync_start block_num=%lld > limit=%d (the admitted block count exceeds "
                              "the AIV core count)",
                              cname(c), (long long)B, pld_npu_profile_or_default(it->opts.platform)->aiv_cores);
            goto done;
        }
    }
    int64_t SIZE = t->shape[1];
    /* across hosts the puts to every destination go out as one batch (a
     * buffer per destination), and the recv_counts notifies follow them:
     * nobody reads either before the barrier after them (rows_batched) */
    const int batched = rows_batched(c);
    if (!(buf = stage_buf(c, t->dt, MR * SIZE * (batched ? c->P : 1), &kept))) {
        st = oom(c);
        goto done;
    }
    fr.far = far_members(c, batched, t, MR);
    fr.MR = MR;
    if (fr.far)
        TRY(far_post(c, t, &fr));
    /* start barrier (HOST / CHIP): no put before every rank entered the call */
    if (!incore) {
        for (int64_t b = 0; b < B; b++)
            TRY(arrive(c, b));
        for (int64_t b = 0; b < B; b++)
            TRY(await_all(c, b, 1));
    }
    if (batched)
        pld_win_batch_begin(it->win);
    int order[PLD_WIN_MAX_RANKS];
    push_order(c, batched, order);
    for (int pass = batched ? 0 : 1; pass < 2; pass++) {
        /* pass 0 (batched): the rows; pass 1: the count, then (not batched) the rows */
        if (pass == 1 && batched && (st = pld_dist_batch_end(it, c->f, e, PLD_OK)) != PLD_OK)
            goto done;
        for (int di = 0; di < c->P; di++) {
            int dest = order[di];
            int64_t cnt = read_count(sc, dest), rows = cnt < 0 ? 0 : cnt > MR ? MR : cnt;
            if (cnt != rows && pass == 1)
                warn_once(c, W_COUNTS,
                          "%s: send_counts[%d] = %lld is outside [0, MAX_RECV = %lld]; %lld rows are sent (counts "
                          "are clamped to [0, MAX_RECV]; further ones are not reported)",
                          cname(c), dest, (long long)cnt, (long long)MR, (long long)rows);
            int64_t cell[2] = {c->me, 0};
            char *b = (char *)buf + (batched ? (size_t)dest * (size_t)(MR * SIZE) * (size_t)pld_dtype_bytes(t->dt) : 0);
            if (pass == 1 && !(fr.far & RBIT(dest)))
                TRY(pld_dist_notify(it, c->f, e, c->d, dest, pld_dist_disp(c->d, rc, cell), (int32_t)rows, 1));
            if ((fr.far & RBIT(dest)) && pass == 0) {
                if ((st = far_send(c, in, t, &fr, dest, dest * MR, rows, b)) != PLD_OK) {
                    (void)pld_dist_batch_end(it, c->f, e, st);
                    goto done;
                }
            } else if (rows > 0 && pass == (batched ? 0 : 1)) {
                const void *src;
                if ((st = push_src(c, in, t, dest * MR, rows, b, &src)) == PLD_OK)
                    st = xfer_rows(c, t, dest, c->me * MR, rows, (void *)src, 1);
                if (st != PLD_OK) {
                    if (batched)
                        (void)pld_dist_batch_end(it, c->f, e, st);
                    goto done;
                }
            }
        }
    }
    if (fr.far)
        TRY(far_land(c, t, rc, &fr));
    if (incore) {
        TRY(barrier(c, 0, 1));
        TRY(clear(c, 0, 1));
    } else {
        /* completion barrier, then the authoritative recv_counts fill */
        for (int64_t b = 0; b < B; b++)
            TRY(arrive(c, b));
        for (int64_t b = 0; b < B; b++)
            TRY(await_all(c, b, 2));
        for (int src = 0; src < c->P; src++) {
            int64_t cnt;
            if (src == c->me) {
                cnt = read_count(sc, c->me);
            } else {
                int32_t v = 0;
                int64_t off[2] = {c->me, 0}, ext[2] = {1, 1};
                TRY(pld_dist_region(it, c->f, e, c->d, src, sc, off, ext, &v, 0));
                cnt = v;
            }
            int64_t idx[2] = {src, 0};
            pld_elem_set_i(pld_tensor_at(rc, idx), PLD_DT_INT32, 0, cnt < 0 ? 0 : cnt > MR ? MR : cnt);
        }
        for (int64_t b = 0; b < B; b++)
            TRY(clear(c, b, 2));
    }
done:
    far_done(&fr);
    step_bufs_done(c, buf, kept);
    pld_value_release(&iv);
    pld_value_release(&sv);
    pld_value_release(&scv);
    pld_value_release(&rcv);
    return st;
}

/* The post-condition of the self-clearing credit barrier (pld_semantics.md
 * §1.9): when a collective returns on this rank, every cell of its signal in
 * this rank's window is back to zero, or 1 where a faster peer already
 * credited its next call. Anything else is a stale credit (an earlier notify
 * into the signal, a signal shared with another protocol) or a peer running a
 * different collective: reported here instead of passing a later barrier
 * early. */
static pld_status_t post_check(coll_t *c)
{
    const pld_tensor_t *s = &c->sigdesc;
    if (!c->has_sig || !s->is_dist || c->d->me < 0 || s->rank < 1 || s->rank > 2)
        return PLD_OK;
    int64_t rows = s->shape[0], cols = s->rank == 2 ? s->shape[1] : 1;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) {
            int64_t idx[2] = {i, j};
            int32_t v = pld_win_read_cell(c->d->win, pld_dist_disp(c->d, s, idx));
            if (v >= 0 && v <= 1)
                continue;
            char cell[48];
            if (s->rank == 2)
                snprintf(cell, sizeof cell, "[%lld, %lld]", (long long)i, (long long)j);
            else
                snprintf(cell, sizeof cell, "[%lld]", (long long)i);
            return pld_rt_error(c->it, c->f, c->e->span,
                                "%s: signal %s%s holds %d after the collective returned (expected 0, or 1 from a peer "
                                "already in its next call): a stale credit from an earlier notify into this signal, a "
                                "signal shared with another protocol, or a peer running a different collective",
                                cname(c), c->sigtext, cell, (int)v);
        }
    return PLD_OK;
}

/* ------------------------------------------------------------ entry */

pld_status_t pld_coll_exec(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    if (e->op == PLD_OPID_PLD_INDEXED_ALL_TO_ALL_V)
        return pld_rt_error(it, f, e->span, "pld.tensor.indexed_all_to_all_v is not supported by this simulator");
    if (pld_op_coll_kind(e->op) < 0)
        return pld_rt_error(it, f, e->span, "%s is not implemented", pld_op_info((pld_op_id_t)e->op)->name);
    return pld_coll_run(it, f, e, pld_op_coll_kind(e->op), out);
}

pld_status_t pld_coll_run(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int kind, pld_value_t *out)
{
    const char *name = pld_op_info((pld_op_id_t)kind)->name;
    const int ti = target_index(kind);
    if (f->ctx == PLD_CTX_CHIP && kind != PLD_OPID_PLD_ALL_TO_ALL_V)
        return pld_rt_error(it, f, e->span,
                            "collective '%s' cannot run in a CHIP orchestration body (only all_to_all_v has a CHIP "
                            "rail); call it from the HOST orchestrator or inside an InCore kernel",
                            name);
    pld_value_t tgt;
    pld_status_t st = it->walk->eval(it, f, pld_op_arg(e, ti), &tgt);
    if (st != PLD_OK)
        return st;
    if (tgt.kind == PLD_V_UNAVAIL && f->ctx == PLD_CTX_HOST) {
        /* HOST builtin: this rank is not in the comm domain of the operands;
         * only members run the builtin */
        *out = tgt;
        return PLD_OK;
    }
    if (tgt.kind != PLD_V_TENSOR) {
        pld_vkind_t k = tgt.kind;
        pld_value_release(&tgt);
        return pld_rt_error(it, f, pld_op_arg(e, ti)->span, "%s: '%s' must be a tensor, found a %s",
                            name, pld_op_info((pld_op_id_t)kind)->params[ti].name,
                            pld_vkind_name(k));
    }
    if (!pld_v_tensor(&tgt)->is_dist) {
        /* PyPTO needs a materialised window view on every rail (its CommContext
         * names the domain); there is no single-rank fallback (§3.1) */
        st = pld_rt_error(it, f, pld_op_arg(e, ti)->span,
                          "%s: '%s' is not window-bound (a pld.window view of a window buffer, passed down from the "
                          "HOST orchestrator): a collective needs the comm domain of its target",
                          name, pld_op_info((pld_op_id_t)kind)->params[ti].name);
    } else {
        coll_t c;
        memset(&c, 0, sizeof c);
        c.it = it;
        c.f = f;
        c.e = e;
        c.kind = kind;
        c.name = name;
        c.d = pld_dist_domain_of(it, f, e, pld_v_tensor(&tgt));
        if (!c.d) {
            st = PLD_E_RUNTIME;
        } else {
            c.P = c.d->n;
            c.me = c.d->me;
            const pld_tensor_t *t = pld_v_tensor(&tgt);
            c.tgt = t;
            pld_ev_t ev;
            char evname[96];
            if (it->trace) {
                snprintf(evname, sizeof evname, "%s (%s)", name, rail_of(&c));
                pld_tr_init(f, e->span, &ev, PLD_EV_COLL, evname);
                ev.obj = t->winbuf >= 0 ? it->wins[t->winbuf].name : NULL;
                ev.dom = (int32_t)(c.d - it->doms);
                ev.count = 0;
                pld_trace_begin(it->trace, &ev);
            }
            switch (kind) {
            case PLD_OPID_PLD_ALLREDUCE: st = exec_allreduce(&c, t); break;
            case PLD_OPID_PLD_BARRIER: st = exec_barrier(&c, &tgt); break;
            case PLD_OPID_PLD_BROADCAST: st = exec_broadcast(&c, t); break;
            case PLD_OPID_PLD_REDUCE_SCATTER: st = exec_reduce_scatter(&c, t); break;
            case PLD_OPID_PLD_ALLGATHER:
            case PLD_OPID_PLD_ALL_TO_ALL: st = exec_gather(&c, t); break;
            default: st = exec_a2av(&c, t); break;
            }
            if (st == PLD_OK)
                st = post_check(&c);
            if (it->trace) {
                ev.failed = st != PLD_OK;
                pld_trace_end(it->trace, &ev);
            }
        }
    }
    if (st == PLD_OK)
        *out = tgt;
    else
        pld_value_release(&tgt);
    return st;
}
