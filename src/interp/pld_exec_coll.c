/* pld_exec_coll.c - the collective ops (pld.tensor.allreduce, barrier,
 * broadcast, reduce_scatter, allgather, all_to_all, all_to_all_v) and the
 * lowered program's builtin collective kernels, on the three rails: InCore
 * composite (in a kernel), HOST builtin (HOST orchestrator) and the CHIP rail
 * (all_to_all_v in an Orchestration function).
 *
 * This file binds: it evaluates the operands, checks them (errors at their
 * source locations), binds them to views (pld_coll_view_t) and runs the
 * rail's protocol of src/sim_window/pld_coll.h with the interpreter's hooks:
 * errors and warnings at the call, notifies and waits under the hang watchdog
 * of pld_dist.c, remote regions through pld_dist_region (--poison,
 * --check-races, a seeded schedule), local reads and stores as the checking
 * modes see them, trace events on the frame's track. */
#include "pld_interp_int.h"

#include <stdio.h>
#include <string.h>

static int target_index(int op)
{
    return op == PLD_OPID_PLD_BARRIER ? 0
           : (op == PLD_OPID_PLD_ALLGATHER || op == PLD_OPID_PLD_ALL_TO_ALL || op == PLD_OPID_PLD_ALL_TO_ALL_V) ? 1 : 0;
}

/* ------------------------------------------------------------ call state */

typedef struct coll {
    pld_coll_t pc;                 /* the protocol's call (pld_coll.h); pc.ctx is this */
    pld_interp_t *it;
    frame_t *f;
    const pld_expr_t *e;           /* the call: a pld.tensor.* op, a builtin.tensor.* dispatch or a
                                      builtin kernel call (its operands bound like the collective's) */
    int kind;                      /* the collective (PLD_OPID_PLD_ALLREDUCE ..), pld_op_coll_kind */
    domain_t *d;
    int P, me;
    const pld_tensor_t *tgt;       /* the target (barrier: the signal) */
    pld_tensor_t sigdesc;          /* a copy of the signal's view (its buffer is the window's, alive all run) */
    int has_sig;
    int64_t saved_idx, saved_num;  /* the frame's block track at the call (hooks.track) */
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

/* ------------------------------------------------------------ views and hooks */

/* The view of tensor t (its window buffer's name for the trace). */
static void view_of(const coll_t *c, const pld_tensor_t *t, pld_coll_view_t *v)
{
    memset(v, 0, sizeof *v);
    v->data = (char *)t->buf->data + t->offset * pld_dtype_bytes(t->dt);
    v->buf = t->buf;
    v->dt = t->dt;
    v->rank = t->rank;
    memcpy(v->shape, t->shape, (size_t)t->rank * sizeof *v->shape);
    memcpy(v->strides, t->strides, (size_t)t->rank * sizeof *v->strides);
    memcpy(v->valid, t->valid, (size_t)t->rank * sizeof *v->valid);
    v->is_dist = t->is_dist;
    v->name = t->winbuf >= 0 ? c->it->wins[t->winbuf].name : NULL;
    v->obj = t;
}

/* The tensor a view of the protocol describes: its tensor (v->obj) with the
 * view's shape (the protocols' rank-1 descriptors over a packed tensor). A
 * borrowed copy, never released. */
static void tensor_of(const pld_coll_view_t *v, pld_tensor_t *t)
{
    *t = *(const pld_tensor_t *)v->obj;
    t->rank = v->rank;
    memcpy(t->shape, v->shape, (size_t)v->rank * sizeof *t->shape);
    memcpy(t->strides, v->strides, (size_t)v->rank * sizeof *t->strides);
    memcpy(t->valid, v->valid, (size_t)v->rank * sizeof *t->valid);
}

/* 1 when t is packed row-major. */
static int tensor_packed(const pld_tensor_t *t)
{
    pld_coll_view_t v;
    v.rank = t->rank;
    memcpy(v.shape, t->shape, (size_t)t->rank * sizeof *v.shape);
    memcpy(v.strides, t->strides, (size_t)t->rank * sizeof *v.strides);
    return pld_coll_view_packed(&v);
}

static pld_status_t h_error(void *ctx, const char *msg)
{
    coll_t *c = ctx;
    return pld_rt_error(c->it, c->f, c->e->span, "%s", msg);
}

/* A warning, once per call site and kind (its marker). */
static void h_warn(void *ctx, const char *marker, const char *msg)
{
    coll_t *c = ctx;
    pld_diag_list_t *l = &c->it->p->diags;
    for (const pld_diag_t *g = l->head; g; g = g->next)
        if (g->sev == PLD_SEV_WARNING && g->span.off == c->e->span.off && g->span.line == c->e->span.line &&
            g->msg && strstr(g->msg, marker))
            return;
    pld_diag_add(l, PLD_SEV_WARNING, c->e->span, "%s", msg);
}

static pld_status_t h_notify(void *ctx, int peer, size_t disp, int32_t v, int set)
{
    coll_t *c = ctx;
    return pld_dist_notify(c->it, c->f, c->e, c->d, peer, disp, v, set);
}

static pld_status_t h_wait(void *ctx, size_t disp, int cmp, int32_t g, pld_describe_fn describe, const void *dctx)
{
    coll_t *c = ctx;
    return pld_dist_wait_fn(c->it, c->f, c->e, c->d, disp, cmp, g, describe, dctx);
}

static pld_status_t h_xset_wait(void *ctx, pld_win_xset_t *x, pld_describe_fn describe, const void *dctx)
{
    coll_t *c = ctx;
    return pld_dist_xset_wait(c->it, c->f, c->e, c->d, x, describe, dctx);
}

static pld_status_t h_region(void *ctx, int peer, const pld_coll_view_t *v, const int64_t *off, const int64_t *ext,
                             void *buf, int dir)
{
    coll_t *c = ctx;
    pld_tensor_t t;
    tensor_of(v, &t);
    return pld_dist_region(c->it, c->f, c->e, c->d, peer, &t, off, ext, buf, dir);
}

static pld_status_t h_batch_end(void *ctx, pld_status_t st)
{
    coll_t *c = ctx;
    return pld_dist_batch_end(c->it, c->f, c->e, st);
}

/* A local read or store as the checking modes see it: --poison checks a read
 * and marks a store written, --check-races records both. */
static void h_local(void *ctx, const pld_coll_view_t *v, const int64_t *off, const int64_t *ext, int write)
{
    coll_t *c = ctx;
    pld_tensor_t t;
    tensor_of(v, &t);
    if (!write) {
        if (c->it->poison)
            pld_poison_check_local(c->it, c->e, &t, off, ext);
        if (c->it->race && !c->it->race_mute)
            pld_race_local(c->it, c->f, c->e, &t, off, ext, PLD_HB_READ);
        return;
    }
    if (c->it->poison)
        pld_tensor_shadow_mark(&t, off, ext);
    if (c->it->race && !c->it->race_mute)
        pld_race_local(c->it, c->f, c->e, &t, off, ext, PLD_HB_WRITE);
}

static void h_ev_init(void *ctx, pld_ev_t *ev, pld_ev_kind_t k, const char *name)
{
    coll_t *c = ctx;
    pld_tr_init(c->f, c->e->span, ev, k, name);
}

static void h_track(void *ctx, int64_t b, int64_t lanes)
{
    coll_t *c = ctx;
    c->f->block_idx = b < 0 ? c->saved_idx : b;
    c->f->block_num = b < 0 ? c->saved_num : lanes;
}

/* --check-races: the merged steps record what the device does, when it does
 * it (pld_coll_step.c); their own transfers are muted meanwhile. */
static void h_mute(void *ctx, int on)
{
    coll_t *c = ctx;
    c->it->race_mute = on;
}

static void h_record(void *ctx, int peer, const pld_coll_view_t *v, const int64_t *off, const int64_t *ext, int dir)
{
    coll_t *c = ctx;
    if (!c->it->race)
        return;
    pld_tensor_t t;
    tensor_of(v, &t);
    int64_t n = 1;
    for (int k = 0; k < v->rank; k++)
        n *= ext[k];
    if (n > 0)
        pld_race_remote(c->it, c->f, c->e, c->d, peer, pld_dist_disp(c->d, &t, off),
                        (size_t)n * (size_t)pld_dtype_bytes(v->dt), dir);
}

static const pld_coll_hooks_t coll_hooks = {h_error,     h_warn,  h_notify,  h_wait,  h_xset_wait,
                                            h_region,    h_batch_end, h_local, h_ev_init, h_track,
                                            h_mute,      h_record};

/* ------------------------------------------------------------ operands */

static pld_status_t oom(coll_t *c)
{
    return pld_rt_error(c->it, c->f, c->e->span, "%s: out of memory", cname(c));
}

/* s, printed as se (NULL: the synthesized signal), is the signal of the call. */
static void set_signal(coll_t *c, const pld_tensor_t *s, const pld_expr_t *se)
{
    pld_coll_view_t v;
    c->sigdesc = *s;
    c->has_sig = 1;
    view_of(c, &c->sigdesc, &v);
    if (!se) {
        pld_coll_set_signal(&c->pc, &v, NULL);
        return;
    }
    pld_buf_t b;
    pld_buf_init(&b);
    pld_ast_print_expr(se, &b);
    pld_coll_set_signal(&c->pc, &v, b.oom ? "signal" : pld_buf_str(&b));
    pld_buf_fini(&b);
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
    set_signal(c, s, se);
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
    pld_coll_view_t tv;
    view_of(c, t, &tv);
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
    c->pc.name = ring ? "allreduce (ring)" : "allreduce (mesh)";
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
                st = pld_coll_allreduce_incore_mesh(&c->pc, &tv, op);
        } else {
            c->pc.ring = 1;
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
                    st = pld_coll_allreduce_incore_ring(&c->pc, &tv, op);
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
            st = pld_coll_allreduce_host_mesh(&c->pc, &tv, op, core_num);
    } else {
        c->pc.ring = 1;
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
                st = pld_coll_allreduce_host_ring(&c->pc, &tv, op);
        }
    }
    pld_value_release(&sv);
    return st;
}

static pld_status_t builtin_guard(coll_t *c)
{
    if (c->f->ctx == PLD_CTX_KERNEL || c->P <= PLD_COLL_BUILTIN_MAX_RANKS)
        return PLD_E_RUNTIME; /* not guarded */
    pld_coll_warn(&c->pc, PLD_COLL_W_GUARD,
              "%s (%s) does nothing: the builtin kernel returns early when more than 16 ranks take part (%d here)",
              cname(c), rail_of(c), c->P);
    return PLD_OK;
}

static pld_status_t exec_barrier(coll_t *c, pld_value_t *sigv)
{
    pld_status_t st;
    c->pc.name = "barrier";
    if (c->f->ctx == PLD_CTX_HOST && builtin_guard(c) == PLD_OK)
        return PLD_OK;
    if ((st = check_signal(c, pld_v_tensor(sigv), pld_op_arg(c->e, 0), c->f->ctx == PLD_CTX_KERNEL ? 2 : 1, c->P,
                           "the rank count", 1, "1")) != PLD_OK)
        return st;
    return pld_coll_barrier(&c->pc);
}

static pld_status_t exec_broadcast(coll_t *c, const pld_tensor_t *t)
{
    pld_status_t st;
    pld_value_t sv = pld_v_none();
    int64_t root;
    c->pc.name = "broadcast";
    if ((st = pld_op_iarg(c->it, c->f, c->e, 2, 0, &root)) != PLD_OK)
        return st;
    if (root < 0 || root >= c->P)
        return pld_rt_error(c->it, c->f, pld_op_arg(c->e, 2) ? pld_op_arg(c->e, 2)->span : c->e->span,
                            "%s: root %lld is outside the comm domain [0, %d)", cname(c), (long long)root, c->P);
    if (c->f->ctx == PLD_CTX_HOST && builtin_guard(c) == PLD_OK)
        return PLD_OK;
    if ((st = cneed(c, 1, &sv)) != PLD_OK)
        return st;
    if ((st = check_signal(c, pld_v_tensor(&sv), pld_op_arg(c->e, 1), c->f->ctx == PLD_CTX_KERNEL ? 2 : 1, c->P,
                           "the rank count", 1, "1")) != PLD_OK)
        goto done;
    pld_coll_view_t tv;
    view_of(c, t, &tv);
    st = pld_coll_broadcast(&c->pc, &tv, root);
done:
    pld_value_release(&sv);
    return st;
}

static pld_status_t exec_reduce_scatter(coll_t *c, const pld_tensor_t *t)
{
    pld_status_t st;
    pld_value_t sv = pld_v_none();
    int64_t op;
    c->pc.name = "reduce_scatter";
    if ((st = pld_op_iarg(c->it, c->f, c->e, 2, 0, &op)) != PLD_OK)
        return st;
    if (op != 0)
        return pld_rt_error(c->it, c->f, c->e->span, "%s: op must be ReduceOp.Sum, found ReduceOp.%s", cname(c),
                            pld_coll_redop_name(op));
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
        pld_coll_warn(&c->pc, PLD_COLL_W_GUARD, "%s (HOST builtin) does nothing: the builtin kernel returns early when %s", cname(c),
                  t->shape[0] < c->P ? "the target has fewer rows than ranks" : "a row has no elements");
        return PLD_OK;
    }
    if ((st = cneed(c, 1, &sv)) != PLD_OK)
        return st;
    if ((st = check_signal(c, pld_v_tensor(&sv), pld_op_arg(c->e, 1), c->f->ctx == PLD_CTX_KERNEL ? 2 : 1, c->P,
                           "the rank count", 1, "1")) != PLD_OK)
        goto done;
    pld_coll_view_t tv;
    view_of(c, t, &tv);
    st = pld_coll_reduce_scatter(&c->pc, &tv);
done:
    pld_value_release(&sv);
    return st;
}

/* ------------------------------------------------------------ allgather / all_to_all */

static pld_status_t exec_gather(coll_t *c, const pld_tensor_t *t)
{
    const int a2a = c->kind == PLD_OPID_PLD_ALL_TO_ALL;
    pld_status_t st;
    pld_value_t iv, sv = pld_v_none();
    c->pc.name = a2a ? "all_to_all" : "allgather";
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
        pld_coll_warn(&c->pc, PLD_COLL_W_GUARD,
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
    pld_coll_view_t iv_, tv;
    view_of(c, in, &iv_);
    view_of(c, t, &tv);
    st = pld_coll_gather(&c->pc, &iv_, &tv, a2a);
done:
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
    int64_t L, B = 1, MR;
    c->pc.name = "all_to_all_v";
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
            if (!tensor_packed(ops[k])) {
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
            pld_coll_warn(&c->pc, PLD_COLL_W_NR,
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
            pld_coll_warn(&c->pc, PLD_COLL_W_GUARD, "%s (%s) does nothing: the builtin kernel returns early when %s", cname(c),
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
    pld_coll_view_t v[4];
    view_of(c, in, &v[0]);
    view_of(c, t, &v[1]);
    view_of(c, sc, &v[2]);
    view_of(c, rc, &v[3]);
    st = pld_coll_a2av(&c->pc, &v[0], &v[1], &v[2], &v[3], MR, B);
done:
    pld_value_release(&iv);
    pld_value_release(&sv);
    pld_value_release(&scv);
    pld_value_release(&rcv);
    return st;
}

/* ------------------------------------------------------------ entry */

pld_status_t pld_exec_coll(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    if (e->op == PLD_OPID_PLD_INDEXED_ALL_TO_ALL_V)
        return pld_rt_error(it, f, e->span, "pld.tensor.indexed_all_to_all_v is not supported by this simulator");
    if (pld_op_coll_kind(e->op) < 0)
        return pld_rt_error(it, f, e->span, "%s is not implemented", pld_op_info((pld_op_id_t)e->op)->name);
    return pld_exec_coll_run(it, f, e, pld_op_coll_kind(e->op), out);
}

pld_status_t pld_exec_coll_run(pld_interp_t *it, frame_t *f, const pld_expr_t *e, int kind, pld_value_t *out)
{
    const char *name = pld_op_info((pld_op_id_t)kind)->name;
    const int ti = target_index(kind);
    if (f->ctx == PLD_CTX_CHIP && kind != PLD_OPID_PLD_ALL_TO_ALL_V)
        return pld_rt_error(it, f, e->span,
                            "collective '%s' cannot run in a CHIP orchestration body (only all_to_all_v has a CHIP "
                            "rail); call it from the HOST orchestrator or inside an InCore kernel",
                            name);
    pld_value_t tgt;
    pld_status_t st = pld_op_value(it, f, e, ti, &tgt);
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
        c.d = pld_dist_domain_of(it, f, e, pld_v_tensor(&tgt));
        if (!c.d) {
            st = PLD_E_RUNTIME;
        } else {
            c.P = c.d->n;
            c.me = c.d->me;
            c.saved_idx = f->block_idx;
            c.saved_num = f->block_num;
            c.pc.h = &coll_hooks;
            c.pc.ctx = &c;
            c.pc.win = it->win;
            c.pc.dom = c.d->win;
            c.pc.dom_index = (int32_t)(c.d - it->doms);
            c.pc.P = c.P;
            c.pc.me = c.me;
            c.pc.rail = f->ctx == PLD_CTX_KERNEL ? PLD_COLL_INCORE : f->ctx == PLD_CTX_CHIP ? PLD_COLL_CHIP : PLD_COLL_HOST;
            c.pc.cname = name;
            c.pc.name = name;
            c.pc.opname = pld_op_name(e);
            c.pc.fn = f->fn ? f->fn->name : "?";
            c.pc.trace = it->trace;
            c.pc.sched = it->sched;
            c.pc.bytes_moved = &it->stats.bytes_moved;
            c.pc.bufs = &it->coll_bufs;
            c.pc.chunk_steps = it->opts.chunk_steps;
            c.pc.can_batch = pld_dist_can_batch(it);
            c.pc.seen = it->poison || it->race;
            c.pc.device_order = it->race != NULL;
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
                st = pld_coll_post_check(&c.pc);
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
