/* pld_check_coll.c - the static rules of the collectives (docs/pld_semantics.md
 * §3; seed 004): allreduce, barrier, broadcast, reduce_scatter, allgather,
 * all_to_all, all_to_all_v, on each rail (InCore composite, CHIP builtin, HOST
 * builtin) and as the lowered builtin.tensor.* dispatches (pld_lower.c). Called
 * by pld_ck_pld_call (pld_check_pld.c), whose helpers it shares
 * (pld_check_int.h). Anything that depends on the rank count P is checked only
 * when every comm domain spans the world (ck->dom_ranks > 0). */
#include "pld_check_int.h"

#include <stdint.h>
#include <string.h>

/* -------------------------------------------------------------- collectives */

static const char *rail_name(int ctx)
{
    return ctx == PLD_CTX_HOST ? "HOST" : ctx == PLD_CTX_CHIP ? "CHIP" : "InCore";
}

/* InCore mesh signal [NR, 1] (and, when P is known, NR >= P). */
static void incore_mesh_signal(ck_pc_t *x, const pld_type_t *s)
{
    int64_t v;
    if (s->rank != 2) {
        pld_ck_perr(x, "signal must be 2-D [NR, 1] on the InCore rail, found %s", pld_ck_tystr(x->ck, s));
        return;
    }
    if (ck_dimc(s, 1, &v) && v != 1) {
        pld_ck_perr(x, "signal shape[1] must be 1 (one cell per rank), found %lld; a signal shaped for mode=\"ring\" or "
                       "for several lanes cannot be used here",
                    (long long)v);
        return;
    }
    if (x->ck->dom_ranks > 0 && ck_dimc(s, 0, &v) && v < x->ck->dom_ranks)
        pld_ck_perr(x, "signal shape[0] (%lld) must be at least the rank count (%d)", (long long)v, x->ck->dom_ranks);
}

/* HOST signal capacity (§3.4). rank1_only: barrier / broadcast /
 * reduce_scatter. lanes: required lane count (exact when `exact`). */
static void host_signal(ck_pc_t *x, const pld_type_t *s, int rank1_only, int64_t lanes, int exact)
{
    int64_t v;
    if (rank1_only && s->rank != 1) {
        pld_ck_perr(x, "signal must be a rank-1 [P] DistributedTensor on the HOST rail, found %s", pld_ck_tystr(x->ck, s));
        return;
    }
    if (s->rank != 1 && s->rank != 2) {
        pld_ck_perr(x, "signal must be rank-1 [world_size] or rank-2 [world_size, lanes] on the HOST rail, found %s",
                    pld_ck_tystr(x->ck, s));
        return;
    }
    if (s->rank == 2) {
        if (!ck_dimc(s, 1, &v)) {
            pld_ck_perr(x, "rank-2 signal shape[1] must be a compile-time constant");
            return;
        }
        if (exact ? v != lanes : v < lanes) {
            pld_ck_perr(x, "signal shape[1] (%lld) must %s the required lane count (%lld)", (long long)v,
                        exact ? "equal" : "be at least", (long long)lanes);
            return;
        }
    }
    if (x->ck->dom_ranks > 0 && ck_dimc(s, 0, &v) && v < x->ck->dom_ranks)
        pld_ck_perr(x, "signal shape[0] (%lld) must be at least the participating device count (%d)", (long long)v,
                    x->ck->dom_ranks);
}

/* HOST rail: every operand is a window view, and all are different
 * allocations (§3.1, §3.2). skip_same: index pair already reported as the
 * same expression (-1 for none). */
static void host_windows(ck_pc_t *x, const ck_operand_t *ops, int n, int skip_a, int skip_b)
{
    int w[8];
    for (int i = 0; i < n; i++) {
        const pld_expr_t *e = ck_arg(x, ops[i].idx);
        w[i] = -2;
        if (!e || !ck_known(ck_ty(x, ops[i].idx)))
            continue;
        w[i] = pld_ck_window_of(x->ck, e);
        if (w[i] < 0)
            pld_ck_perr(x, "%s must be a window-bound DistributedTensor (a pld.window view of an alloc_window_buffer) "
                           "when called from a HOST orchestrator; got %s",
                        ops[i].role, pld_ck_tystr(x->ck, ck_ty(x, ops[i].idx)));
    }
    /* coverage and domains are decided at the end of the function (the
     * dispatches may follow the collective) */
    if (x->nerr == 0 && x->ck->nbarriers < PLD_CK_MAX_BARRIERS) {
        ck_barrier_t *c = &x->ck->barriers[x->ck->nbarriers++];
        c->is_barrier = pld_op_coll_kind(x->c->info->id) == PLD_OPID_PLD_BARRIER;
        c->n = 0;
        c->op = x->op;
        c->span = x->c->call->span;
        c->call = (pld_expr_t *)x->c->call;
        for (int i = 0; i < n && c->n < 4; i++)
            if (w[i] >= 0) {
                c->roles[c->n] = ops[i].role;
                c->winbuf[c->n++] = w[i];
            }
    }
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            if (w[i] < 0 || w[i] != w[j] || (ops[i].idx == skip_a && ops[j].idx == skip_b))
                continue;
            pld_ck_perr(x, "%s and %s must be different window allocations, but both are views of '%s' (two views of one "
                           "buffer are a cross-process data race)",
                        ops[i].role, ops[j].role, w[i] < x->ck->nwinbufs ? x->ck->winbufs[w[i]].name : "?");
            return;
        }
}

/* core_num: positive compile-time int; returns the value (1 when absent or
 * not static; *is_static tells which). */
static int64_t core_num_arg(ck_pc_t *x, int i, int need_static, int *is_static)
{
    int64_t v = 1;
    int r = pld_ck_int_arg(x, i, &v);
    *is_static = r != -1;
    if (r == -1) {
        if (need_static)
            pld_ck_perr(x, "core_num must be a positive compile-time int");
        return 1;
    }
    if (r == 1 && v <= 0) {
        pld_ck_perr(x, "core_num must be positive, found %lld", (long long)v);
        return 1;
    }
    return r == 1 ? v : 1;
}

static int64_t a2av_blocks(int64_t p, int64_t l)
{
    return l < p ? l : (l / p) * p;
}

static const pld_type_t *result_of(ck_pc_t *x, int i)
{
    const pld_type_t *t = ck_ty(x, i);
    return t ? t : &pld_type_unknown;
}

static const pld_type_t *chk_allreduce(ck_pc_t *x)
{
    const int rail = x->ck->ctx, P = x->ck->dom_ranks;
    const pld_type_t *tt = pld_ck_want_dt(x, 0, "target") > 0 ? ck_ty(x, 0) : NULL;
    const pld_type_t *st = NULL;
    int has_sig = ck_arg(x, 1) != NULL, ring = 0, cn_static;
    int64_t op = 0, cn, v0, v1;

    if (tt && tt->dtype != PLD_DT_FP16 && tt->dtype != PLD_DT_FP32)
        pld_ck_perr(x, "target dtype must be FP16 or FP32, found %s", pld_dtype_name(tt->dtype));
    if (has_sig && pld_ck_want_signal(x, 1, "signal") > 0)
        st = ck_ty(x, 1);
    pld_ck_enum_arg(x, 2, "ReduceOp", 4, "ReduceOp.Sum, Max, Min or Prod", 0, &op);
    if (ck_arg(x, 3)) {
        const char *m = pld_ck_const_str(ck_arg(x, 3));
        if (!m)
            pld_ck_perr(x, "mode must be the string \"mesh\" or \"ring\"");
        else if (strcmp(m, "ring") == 0)
            ring = 1;
        else if (strcmp(m, "mesh") != 0)
            pld_ck_perr(x, "mode must be \"mesh\" or \"ring\", found \"%s\"", m);
    }
    if (!ck_arg(x, 3) && x->c->info->id == PLD_OPID_BUILTIN_ALLREDUCE_RING)
        ring = 1; /* the ring builtin's default mode */
    cn = core_num_arg(x, 4, 1, &cn_static);
    if (x->builtin && ring != (x->c->info->id == PLD_OPID_BUILTIN_ALLREDUCE_RING))
        pld_ck_perr(x, "needs mode=\"%s\" (builtin.tensor.allreduce is the mesh kernel, builtin.tensor.allreduce_ring the ring "
                       "kernel)",
                    ring ? "mesh" : "ring");

    if (!has_sig) {
        if (rail != PLD_CTX_HOST)
            pld_ck_perr(x, "requires an explicit signal outside a HOST orchestrator");
        else if (x->ck->loop_depth > 0 && !x->builtin)
            pld_ck_perr(x, "without an explicit signal is not supported inside a for/while loop on the HOST rail; pass "
                           "an explicit signal");
        else if (ring)
            pld_ck_perr(x, "mode=\"ring\" requires an explicit signal");
        else if (x->c->call != x->ck->direct)
            pld_ck_perr(x, "without an explicit signal must be a direct assignment, expression statement, or return value "
                           "(the signal is synthesized at statement level); pass an explicit signal or bind the result first");
    }

    if (rail == PLD_CTX_KERNEL) {
        if (cn != 1)
            pld_ck_perr(x, "core_num > 1 is supported only in a HOST orchestrator, found %lld; use an enclosing "
                           "pl.spmd(...) for multi-core work",
                        (long long)cn);
        if (tt && tt->layout != 0)
            pld_ck_perr(x, "target view supports only the ND layout on the InCore rail");
        if (!st)
            return result_of(x, 0);
        if (!ring) {
            incore_mesh_signal(x, st);
        } else if (st->rank != 2) {
            pld_ck_perr(x, "mode=\"ring\" signal must be 2-D [2*(NR-1), NR], found %s", pld_ck_tystr(x->ck, st));
        } else if (ck_dimc(st, 0, &v0) && ck_dimc(st, 1, &v1) && v0 != 2 * (v1 - 1)) {
            pld_ck_perr(x, "mode=\"ring\" signal shape[0] (%lld) must equal 2*(NR-1) = %lld", (long long)v0,
                        (long long)(2 * (v1 - 1)));
        } else if (P > 0 && ck_dimc(st, 1, &v1) && v1 != P) {
            pld_ck_perr(x, "mode=\"ring\" signal shape[1] (%lld) must equal the rank count (%d)", (long long)v1, P);
        }
        return result_of(x, 0);
    }

    /* HOST builtin rail */
    if (cn > ck_aiv_cores(x->ck))
        pld_ck_perr(x, "core_num (%lld) exceeds the AIV core count (%d)", (long long)cn, ck_aiv_cores(x->ck));
    if (ring) {
        if (op != 0 || (tt && tt->dtype != PLD_DT_FP32))
            pld_ck_perr(x, "mode=\"ring\" on the HOST rail supports only op=ReduceOp.Sum with FP32, found ReduceOp.%s "
                           "with %s",
                        pld_ck_enum_value_name("ReduceOp", op), tt ? pld_dtype_name(tt->dtype) : "?");
        else if (cn != 1)
            pld_ck_perr(x, "mode=\"ring\" on the HOST rail does not support core_num > 1, found %lld", (long long)cn);
        else if (P > 16)
            pld_ck_perr(x, "mode=\"ring\" on the HOST rail requires 16 or fewer ranks, found %d", P);
        else if (tt && pld_type_static_numel(tt) == -1)
            pld_ck_perr(x, "mode=\"ring\" on the HOST rail requires a statically-known target shape, found %s",
                        pld_ck_tystr(x->ck, tt));
        else if (tt && P > 0 && pld_type_static_numel(tt) % P != 0)
            pld_ck_perr(x, "mode=\"ring\" target element count (%lld) must be an exact multiple of the rank count (%d)",
                        (long long)pld_type_static_numel(tt), P);
        else if (st && st->rank != 2)
            pld_ck_perr(x, "mode=\"ring\" signal must be rank-2 [2*(NR-1)+1, NR] on the HOST rail, found %s",
                        pld_ck_tystr(x->ck, st));
        else if (st && ck_dimc(st, 1, &v1) && P > 0 && v1 != P)
            pld_ck_perr(x, "mode=\"ring\" signal shape[1] (%lld) must equal the participating device count (%d)",
                        (long long)v1, P);
        else if (st && ck_dimc(st, 1, &v1) && v1 > 16)
            pld_ck_perr(x, "mode=\"ring\" signal shape[1] (%lld) must be at most 16", (long long)v1);
        else if (st && ck_dimc(st, 1, &v1) && ck_dimc(st, 0, &v0) && v0 != 2 * (v1 - 1) + 1)
            pld_ck_perr(x, "mode=\"ring\" signal shape[0] (%lld) must equal 2*(NR-1)+1 = %lld on the HOST rail",
                        (long long)v0, (long long)(2 * (v1 - 1) + 1));
    } else if (st) {
        if (st->rank == 1 && cn > 1)
            pld_ck_perr(x, "a rank-1 signal is valid only with core_num == 1, found core_num %lld; use a [P, lanes] signal",
                        (long long)cn);
        else
            host_signal(x, st, 0, cn, 0);
    }
    {
        static const ck_operand_t ops[] = {{0, "target"}, {1, "signal"}};
        host_windows(x, ops, has_sig ? 2 : 1, -1, -1);
    }
    return result_of(x, 0);
}

/* barrier / broadcast / reduce_scatter */
static const pld_type_t *chk_simple_coll(ck_pc_t *x, pld_op_id_t id)
{
    const int rail = x->ck->ctx, P = x->ck->dom_ranks;
    const int sig_i = id == PLD_OPID_PLD_BARRIER ? 0 : 1;
    const pld_type_t *tt = NULL, *st = NULL;
    int64_t v;

    if (id != PLD_OPID_PLD_BARRIER && pld_ck_want_dt(x, 0, "target") > 0)
        tt = ck_ty(x, 0);
    if (pld_ck_want_signal(x, sig_i, "signal") > 0)
        st = ck_ty(x, sig_i);

    if (id == PLD_OPID_PLD_BROADCAST && ck_arg(x, 2) && pld_ck_int_arg(x, 2, &v) == 1) {
        if (v < 0)
            pld_ck_perr(x, "root rank must be non-negative, found %lld", (long long)v);
        else if (P > 0 && v >= P)
            pld_ck_perr(x, "root (%lld) must be a valid rank in [0, %d)", (long long)v, P);
    }
    if (id == PLD_OPID_PLD_REDUCE_SCATTER) {
        if (pld_ck_enum_arg(x, 2, "ReduceOp", 4, "ReduceOp.Sum, Max, Min or Prod", 0, &v) && v != 0)
            pld_ck_perr(x, "op must be ReduceOp.Sum, found ReduceOp.%s (%lld); Max / Min / Prod are not implemented",
                        pld_ck_enum_value_name("ReduceOp", v), (long long)v);
        if (tt && tt->rank != 2) {
            pld_ck_perr(x, "target must be 2-D [NR, SIZE], found %s", pld_ck_tystr(x->ck, tt));
            tt = NULL;
        } else if (tt && P > 0 && ck_dimc(tt, 0, &v) && v < P) {
            pld_ck_perr(x, "target shape[0] (%lld) must be at least the rank count (%d)", (long long)v, P);
        }
    }

    if (rail == PLD_CTX_KERNEL) {
        if (st)
            incore_mesh_signal(x, st);
        if (id == PLD_OPID_PLD_BROADCAST && tt && pld_type_static_numel(tt) == -1)
            pld_ck_perr(x, "target must have a static shape on the InCore rail, found %s", pld_ck_tystr(x->ck, tt));
    } else {
        if (tt && tt->dtype != PLD_DT_FP32)
            pld_ck_perr(x, "supports only FP32 on the HOST rail, found %s", pld_dtype_name(tt->dtype));
        if (st)
            host_signal(x, st, 1, 1, 1);
        if (id == PLD_OPID_PLD_BARRIER) {
            static const ck_operand_t ops[] = {{0, "signal"}};
            host_windows(x, ops, 1, -1, -1);
        } else {
            static const ck_operand_t ops[] = {{0, "target"}, {1, "signal"}};
            host_windows(x, ops, 2, -1, -1);
        }
    }
    return result_of(x, 0);
}

/* allgather / all_to_all */
static const pld_type_t *chk_gather(ck_pc_t *x, int is_a2a)
{
    const int rail = x->ck->ctx;
    const pld_type_t *it = NULL, *tt = NULL, *st = NULL;
    int same = pld_ck_same_expr(ck_arg(x, 0), ck_arg(x, 1));
    int64_t v, w;
    pld_buf_t b1, b2;

    if (same)
        pld_ck_perr(x, "input and target must be different buffers, but the same expression was passed for both");
    if (pld_ck_want_tensorlike(x, 0, "input") > 0)
        it = ck_ty(x, 0);
    if (pld_ck_want_dt(x, 1, "target") > 0)
        tt = ck_ty(x, 1);
    if (pld_ck_want_signal(x, 2, "signal") > 0)
        st = ck_ty(x, 2);
    if (it && it->rank != 2) {
        pld_ck_perr(x, "input must be 2-D %s, found %s", is_a2a ? "[NR, SIZE]" : "[1, SIZE]", pld_ck_tystr(x->ck, it));
        it = NULL;
    }
    if (tt && tt->rank != 2) {
        pld_ck_perr(x, "target must be 2-D [NR, SIZE], found %s", pld_ck_tystr(x->ck, tt));
        tt = NULL;
    }
    if (it && !is_a2a && ck_dimc(it, 0, &v) && v != 1)
        pld_ck_perr(x, "input must be [1, SIZE] (this rank's single chunk), found %s", pld_ck_tystr(x->ck, it));
    if (it && tt) {
        pld_buf_init(&b1);
        pld_buf_init(&b2);
        if (it->dtype != tt->dtype)
            pld_ck_perr(x, "target dtype (%s) must match input dtype (%s)", pld_dtype_name(tt->dtype),
                        pld_dtype_name(it->dtype));
        else if (is_a2a && ck_dimc(it, 0, &v) && ck_dimc(tt, 0, &w) && v != w)
            pld_ck_perr(x, "target shape must equal input shape; dimension 0 differs (%lld vs %lld)", (long long)w,
                        (long long)v);
        else if (pld_ck_dim_same(&it->shape[1], &tt->shape[1]) == 0)
            pld_ck_perr(x, "target SIZE (%s) must equal input SIZE (%s)", pld_ck_dim_text(&tt->shape[1], &b1),
                        pld_ck_dim_text(&it->shape[1], &b2));
        pld_buf_fini(&b1);
        pld_buf_fini(&b2);
    }
    if (st) {
        if (st->rank != 1 && st->rank != 2) {
            pld_ck_perr(x, "signal must be [NR] or [NR, 1], found %s", pld_ck_tystr(x->ck, st));
            st = NULL;
        } else if (st->rank == 2 && ck_dimc(st, 1, &v) && v != 1) {
            pld_ck_perr(x, "signal second dimension must be 1, found %lld", (long long)v);
            st = NULL;
        } else if (ck_dimc(st, 0, &v) && ck_dimc(is_a2a ? it : tt, 0, &w) && v != w) {
            pld_ck_perr(x, "signal dim 0 (%lld) must equal %s dim 0 (%lld)", (long long)v, is_a2a ? "input" : "target",
                        (long long)w);
            st = NULL;
        }
    }

    if (rail == PLD_CTX_KERNEL) {
        if (ck_known(ck_ty(x, 0)) && ck_ty(x, 0)->kind != PLD_TY_TENSOR && !same)
            pld_ck_perr(x, "input must be a plain Tensor on the InCore path, found %s", pld_ck_tystr(x->ck, ck_ty(x, 0)));
        if (st)
            incore_mesh_signal(x, st);
    } else {
        static const ck_operand_t ops[] = {{0, "input"}, {1, "target"}, {2, "signal"}};
        if (tt && tt->dtype != PLD_DT_FP32)
            pld_ck_perr(x, "supports only FP32 on the HOST rail, found %s", pld_dtype_name(tt->dtype));
        if (st)
            host_signal(x, st, 0, 1, 1);
        host_windows(x, ops, 3, same ? 0 : -1, same ? 1 : -1);
    }
    return result_of(x, 1);
}

/* send_counts / recv_counts of all_to_all_v against NR (nr < 0: unknown). */
static void a2av_counts(ck_pc_t *x, int i, const char *role, int recv, int64_t nr)
{
    const pld_type_t *t;
    int64_t v;

    if ((recv ? pld_ck_want_dt(x, i, role) : pld_ck_want_tensorlike(x, i, role)) <= 0)
        return;
    t = ck_ty(x, i);
    if (t->dtype != PLD_DT_INT32) {
        pld_ck_perr(x, "%s must have INT32 element type, found %s", role, pld_dtype_name(t->dtype));
        return;
    }
    if (recv ? t->rank != 2 : (t->rank != 1 && t->rank != 2)) {
        pld_ck_perr(x, "%s must be %s, found %s", role, recv ? "2-D [NR, 1]" : "1-D [NR] or 2-D [NR, 1]", pld_ck_tystr(x->ck, t));
        return;
    }
    if (t->rank == 2 && ck_dimc(t, 1, &v) && v != 1) {
        pld_ck_perr(x, "%s second dimension must be 1, found %lld", role, (long long)v);
        return;
    }
    if (!ck_dimc(t, 0, &v)) {
        pld_ck_perr(x, "%s dim 0 (NR) must be a compile-time constant, found %s", role, pld_ck_tystr(x->ck, t));
        return;
    }
    if (nr > 0 && v != nr)
        pld_ck_perr(x, "%s dim 0 (%lld) must equal signal dim 0 (%lld)", role, (long long)v, (long long)nr);
}

/* A packed, fully valid ND operand (seed 004). */
static void a2av_packed(ck_pc_t *x, const pld_type_t *t, const char *role)
{
    if (t->layout != 0) {
        pld_ck_perr(x, "%s must use the ND layout (a packed row-major view)", role);
        return;
    }
    if (t->has_stride) {
        pld_ck_perr(x, "%s must be a packed row-major view without explicit strides", role);
        return;
    }
    for (int d = 0; t->valid && d < t->rank; d++)
        if (pld_ck_dim_same(&t->valid[d], &t->shape[d]) == 0) {
            pld_ck_perr(x, "%s valid_shape must cover the whole shape (dimension %d is narrower)", role, d);
            return;
        }
}

static const pld_type_t *chk_a2av(ck_pc_t *x)
{
    const int rail = x->ck->ctx, P = x->ck->dom_ranks;
    const pld_type_t *it = NULL, *tt = NULL, *st = NULL;
    int same = pld_ck_same_expr(ck_arg(x, 0), ck_arg(x, 1)), cn_static;
    int64_t nr = -1, rows = -1, v, w, cn;
    pld_buf_t b1, b2;

    if (same)
        pld_ck_perr(x, "input and target must be different buffers, but the same expression was passed for both");
    if (pld_ck_want_tensorlike(x, 0, "input") > 0)
        it = ck_ty(x, 0);
    if (pld_ck_want_dt(x, 1, "target") > 0)
        tt = ck_ty(x, 1);
    if (pld_ck_want_signal(x, 2, "signal") > 0)
        st = ck_ty(x, 2);
    if (it && it->rank != 2) {
        pld_ck_perr(x, "input must be 2-D [NR*MAX_RECV, SIZE], found %s", pld_ck_tystr(x->ck, it));
        it = NULL;
    }
    if (tt && tt->rank != 2) {
        pld_ck_perr(x, "target must be 2-D [NR*MAX_RECV, SIZE], found %s", pld_ck_tystr(x->ck, tt));
        tt = NULL;
    }
    if (tt && !ck_dimc(tt, 0, &rows)) {
        pld_ck_perr(x, "target dim 0 (NR*MAX_RECV) must be a compile-time constant, found %s", pld_ck_tystr(x->ck, tt));
        rows = -1;
    }
    if (it)
        a2av_packed(x, it, "input");
    if (tt)
        a2av_packed(x, tt, "target");
    if (it && tt) {
        pld_buf_init(&b1);
        pld_buf_init(&b2);
        if (it->dtype != tt->dtype)
            pld_ck_perr(x, "target dtype (%s) must match input dtype (%s)", pld_dtype_name(tt->dtype),
                        pld_dtype_name(it->dtype));
        else if (rows >= 0 && ck_dimc(it, 0, &v) && v != rows)
            pld_ck_perr(x, "target first dimension (%lld) must equal input first dimension (%lld)", (long long)rows,
                        (long long)v);
        else if (pld_ck_dim_same(&it->shape[1], &tt->shape[1]) == 0)
            pld_ck_perr(x, "target SIZE (%s) must equal input SIZE (%s)", pld_ck_dim_text(&tt->shape[1], &b1),
                        pld_ck_dim_text(&it->shape[1], &b2));
        pld_buf_fini(&b1);
        pld_buf_fini(&b2);
    }
    if (st) {
        if (st->rank != 2) {
            pld_ck_perr(x, "signal must be 2-D [NR, 1], found %s", pld_ck_tystr(x->ck, st));
            st = NULL;
        } else if (!ck_dimc(st, 0, &nr) || nr <= 0) {
            pld_ck_perr(x, "signal dim 0 (NR) must be a positive compile-time constant, found %s", pld_ck_tystr(x->ck, st));
            st = NULL;
            nr = -1;
        } else if (rows >= 0 && rows % nr != 0) {
            pld_ck_perr(x, "signal dim 0 (%lld) must divide target dim 0 (%lld)", (long long)nr, (long long)rows);
            nr = -1; /* the counts are not compared against a wrong NR */
        }
    }
    a2av_counts(x, 3, "send_counts", 0, nr);
    a2av_counts(x, 4, "recv_counts", 1, nr);
    /* the CHIP rail's core_num, dtype and capacity rules are
     * LowerL2TensorCollectives' (src/parser/pld_lower.c), which runs next */
    cn = core_num_arg(x, 5, rail == PLD_CTX_KERNEL, &cn_static);
    if (rail != PLD_CTX_CHIP && cn_static && cn > PLD_CK_I32_MAX) {
        pld_ck_perr(x, "core_num must be in [1, INT32_MAX], found %lld", (long long)cn);
        cn = 1;
    }

    if (rail == PLD_CTX_KERNEL) {
        if (st)
            incore_mesh_signal(x, st);
        if (cn != 1)
            pld_ck_perr(x, "core_num must be 1 on the InCore rail, found %lld; multi-block all_to_all_v runs on the CHIP "
                           "rail (write the call in a CHIP orchestration body)",
                        (long long)cn);
        return result_of(x, 1);
    }
    if (rail == PLD_CTX_CHIP) {
        if (st && P > 0 && nr != P)
            pld_ck_perr(x, "signal dim 0 (%lld) must equal the rank count (%d) on the CHIP rail", (long long)nr, P);
        return result_of(x, 1);
    }
    if (tt && tt->dtype != PLD_DT_FP32 && tt->dtype != PLD_DT_INT8)
        pld_ck_perr(x, "supports only FP32 or INT8 on the %s rail, found %s", rail_name(rail), pld_dtype_name(tt->dtype));

    /* HOST builtin rail (a builtin dispatch sits in the lowering's per-device
     * loop: the loop rule was applied to the source collective) */
    if (x->ck->loop_depth > 0 && !x->builtin)
        pld_ck_perr(x, "is not supported inside a for/while loop in a HOST orchestrator; call it once, outside the loop");
    if (st) {
        if (P > 0 && nr < P)
            pld_ck_perr(x, "signal shape[0] (%lld) must be at least the participating device count (%d)", (long long)nr, P);
        if (P > 0 && cn_static) {
            int64_t b = a2av_blocks(P, cn);
            if (ck_dimc(st, 1, &w) && w < b)
                pld_ck_perr(x, "signal shape[1] (%lld) must be at least the admitted block count %lld (core_num %lld "
                               "folded over %d ranks)",
                            (long long)w, (long long)b, (long long)cn, P);
            else if (b > ck_aiv_cores(x->ck))
                pld_ck_perr(x, "admitted block count %lld exceeds the AIV core count (%d)", (long long)b, ck_aiv_cores(x->ck));
        }
    }
    {
        static const ck_operand_t ops[] = {
            {0, "input"}, {1, "target"}, {2, "signal"}, {3, "send_counts"}, {4, "recv_counts"}};
        host_windows(x, ops, 5, same ? 0 : -1, same ? 1 : -1);
    }
    return result_of(x, 1);
}

const pld_type_t *pld_ck_coll_call(ck_pc_t *x, pld_op_id_t id)
{
    if (id == PLD_OPID_PLD_INDEXED_ALL_TO_ALL_V) {
        pld_ck_perr(x, "is not supported by this simulator (its row-selection contract is not specified)");
        return result_of(x, 1);
    }
    /* a collective other than all_to_all_v in a CHIP orchestration body is
     * rejected by LowerL2TensorCollectives' postcondition (pld_lower.c) */
    if (x->ck->ctx == PLD_CTX_CHIP && id != PLD_OPID_PLD_ALL_TO_ALL_V)
        return result_of(x, id == PLD_OPID_PLD_ALLGATHER || id == PLD_OPID_PLD_ALL_TO_ALL ? 1 : 0);
    switch (id) {
    case PLD_OPID_PLD_ALLREDUCE:
        return chk_allreduce(x);
    case PLD_OPID_PLD_BARRIER:
    case PLD_OPID_PLD_BROADCAST:
    case PLD_OPID_PLD_REDUCE_SCATTER:
        return chk_simple_coll(x, id);
    case PLD_OPID_PLD_ALLGATHER:
        return chk_gather(x, 0);
    case PLD_OPID_PLD_ALL_TO_ALL:
        return chk_gather(x, 1);
    case PLD_OPID_PLD_ALL_TO_ALL_V:
        return chk_a2av(x);
    default:
        return &pld_type_unknown;
    }
}
