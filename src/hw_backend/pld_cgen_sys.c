/* pld_cgen_sys.c - the C code of the system family (pld_cgen_int.h): arrays in
 * kernels (pl.array.*: C arrays, bounds checks with sim's messages), TaskId
 * ops (pl.system.task_invalid inline, task_dummy through the task runtime),
 * scopes inside a kernel (pl.scope, pl.manual_scope, pl.cluster, pl.at: their
 * body in place), the ops of the cores of a cluster (core counts and lanes,
 * the cross-core pipe, events, syncall: pc_rt entries over the simulated
 * cluster, src/sim_npu/pld_cluster.h, as src/interp/pld_xcore.c binds them
 * for sim), the ops sim gives no effect (pipe barriers, cache maintenance),
 * and the tokens of prefetch and allocation ops (constants).
 *
 * An array local is `unsigned char sN[bytes]` (elements in the array's dtype,
 * read and written with rt->get_* / rt->set_*, as sim's pld_array_t) and its
 * length `int64_t sN_n`; a token local is an int64_t. Each function returns
 * -2 when expression or statement e is not of this family. */
#include "pld_cgen_int.h"
#include "pld_crt.h"
#include "pld_hw.h"
#include "pld_kern.h"

#include <stdio.h>
#include <string.h>

/* token values (never leave the kernel) */
enum { TOK_PTR = -1, TOK_PCTX = 1, TOK_EVENT = 2, TOK_SESSION = 3 };

/* an int argument at signature position i (pld_op_iarg): absent = dflt; the
 * C expression into b */
static int iarg(cg_t *g, const pld_expr_t *e, int i, int64_t dflt, char *b, size_t n)
{
    const pld_expr_t *a = pld_op_bound(e, i);
    if (!a) {
        snprintf(b, n, "INT64_C(%lld)", (long long)dflt);
        return 0;
    }
    if (a->kind == PLD_EX_BOOL) {
        snprintf(b, n, "%d", a->u.bval ? 1 : 0);
        return 0;
    }
    int fl;
    pld_dtype_t dt;
    int t = pld_cg_scalar(g, a, &fl, &dt);
    if (t < 0)
        return -1;
    snprintf(b, n, fl ? "(int64_t)t%d" : "t%d", t);
    return 0;
}

/* a string keyword literal, or NULL */
static const char *str_arg(const pld_expr_t *e, int i)
{
    const pld_expr_t *a = pld_op_bound(e, i);
    return a && a->kind == PLD_EX_STR ? a->u.str.s : NULL;
}

/* ---------------------------------------------------------------- arrays */

static const cslot_t *array_slot(cg_t *g, const pld_expr_t *a)
{
    if (!a || a->kind != PLD_EX_NAME || a->slot < 0 || g->slots[a->slot].kind != SK_ARRAY) {
        pld_cg_fail(g, a ? a->span : g->fn->name_span, "the native backend needs a named array here");
        return NULL;
    }
    return &g->slots[a->slot];
}

/* the bounds check of index tK into array slot `sl` at site s (sim's message) */
static void check_index(cg_t *g, int sl, int k, int s)
{
    pld_cg_emit(g, "if (t%d < 0 || t%d >= s%d_n) { char m_[96]; snprintf(m_, sizeof m_, \"array index %%lld out of range "
                   "[0, %%lld)\", (long long)t%d, (long long)s%d_n); return pc_cold(), rt->fail(bk, %d, m_); }",
                k, k, sl, k, sl, s);
}

/* element k (temp) of array slot sl as a scalar temp */
static int array_get(cg_t *g, int sl, int k, int *fl, pld_dtype_t *dt)
{
    const pld_dtype_t d = g->slots[sl].dt;
    *fl = is_float_dt(d);
    *dt = d;
    int t = tmp(g);
    if (*fl)
        pld_cg_emit(g, "double t%d = rt->get_f(s%d, %d, t%d);", t, sl, (int)d, k);
    else
        pld_cg_emit(g, "int64_t t%d = rt->get_i(s%d, %d, t%d);", t, sl, (int)d, k);
    return t;
}

/* stores scalar temp v (fl) as element k of array slot sl (write_elem) */
static void array_set(cg_t *g, int sl, int k, int v, int fl)
{
    const pld_dtype_t d = g->slots[sl].dt;
    if (is_float_dt(d))
        pld_cg_emit(g, "rt->set_f(s%d, %d, t%d, (double)t%d);", sl, (int)d, k, v);
    else if (fl) /* pld_v_as_i: NaN 0, saturated, else truncated */
        pld_cg_emit(g, "rt->set_i(s%d, %d, t%d, t%d != t%d ? 0 : t%d >= 9.2233720368547758e18 ? INT64_MAX : t%d <= "
                       "-9.2233720368547758e18 ? INT64_MIN : (int64_t)t%d);",
                    sl, (int)d, k, v, v, v, v, v);
    else
        pld_cg_emit(g, "rt->set_i(s%d, %d, t%d, t%d);", sl, (int)d, k, v);
}

void pld_cg_sys_decl(const cg_t *g, int slot, pld_buf_t *src)
{
    const cslot_t *s = &g->slots[slot];
    if (s->kind == SK_ARRAY)
        pld_buf_printf(src, "    _Alignas(8) unsigned char s%d[%zu]; int64_t s%d_n = 0; memset(s%d, 0, sizeof s%d); /* %s */\n",
                       slot, s->bytes ? s->bytes : 8, slot, slot, slot, g->fn->slot_names[slot]);
    else if (s->kind == SK_TOKEN)
        pld_buf_printf(src, "    int64_t s%d = 0; /* %s */\n", slot, g->fn->slot_names[slot]);
}

int pld_cg_sys_move(cg_t *g, int to, int from)
{
    if (g->slots[to].kind != SK_ARRAY)
        return -2;
    if (to != from)
        pld_cg_emit(g, "memcpy(s%d, s%d, (size_t)s%d_n * %d); s%d_n = s%d_n;", to, from, from, esize(g->slots[to].dt), to,
                    from);
    return 0;
}

/* the value of an array expression into array slot `to` */
static int array_into(cg_t *g, int to, const pld_expr_t *e)
{
    if (e->kind == PLD_EX_NAME) {
        if (!array_slot(g, e))
            return -1;
        return pld_cg_sys_move(g, to, e->slot);
    }
    if (e->kind != PLD_EX_CALL)
        return pld_cg_fail(g, e->span, "this array expression is not compiled by the native backend");
    const int s = pld_cg_site(g, e);
    const pld_dtype_t d = g->slots[to].dt;
    if (e->op == PLD_OPID_ARRAY_CREATE) {
        char n[64];
        if (iarg(g, e, 0, 0, n, sizeof n))
            return -1;
        const int64_t len = e->type ? e->type->array_len : -1;
        pld_cg_emit(g, "if (%s <= 0) return pc_cold(), rt->fail(bk, %d, \"pl.array.create: extent must be positive\");", n, s);
        if (!pld_kern_dtype_ok(d)) {
            pld_cg_emit(g, "return pc_cold(), rt->fail(bk, %d, \"pl.array.create: pldrun has no %s arithmetic yet\");", s,
                        pld_dtype_name(d));
            return 0;
        }
        if (len <= 0)
            return pld_cg_fail(g, e->span, "pl.array.create: the native backend needs a constant extent");
        pld_cg_emit(g, "if (%s != %lld) return pc_cold(), rt->fail(bk, %d, \"internal: pl.array.create extent differs from its "
                       "type\");", n, (long long)len, s);
        pld_cg_emit(g, "memset(s%d, 0, %lld); s%d_n = %lld;", to, (long long)len * esize(d), to, (long long)len);
        return 0;
    }
    if (e->op == PLD_OPID_ARRAY_UPDATE) {
        const pld_expr_t *a = pld_op_bound(e, 0);
        if (!array_slot(g, a))
            return -1;
        int fl;
        pld_dtype_t dt;
        int k = pld_cg_scalar(g, pld_op_bound(e, 1), &fl, &dt);
        if (k < 0)
            return -1;
        if (fl)
            return pld_cg_fail(g, e->span, "an array index must be an integer");
        check_index(g, a->slot, k, s);
        int v = pld_cg_scalar(g, pld_op_bound(e, 2), &fl, &dt);
        if (v < 0)
            return -1;
        pld_cg_sys_move(g, to, a->slot);
        array_set(g, to, k, v, fl);
        return 0;
    }
    return pld_cg_fail(g, e->span, "%s does not give an array", opname(e));
}

int pld_cg_sys_store(cg_t *g, const pld_stmt_t *st)
{
    const pld_expr_t *t = st->u.assign.target, *v = st->u.assign.value, *o = t->u.sub.obj;
    if (!o->type || o->type->kind != PLD_TY_ARRAY)
        return -2;
    if (!array_slot(g, o))
        return -1;
    if (t->u.sub.n != 1)
        return pld_cg_fail(g, t->span, "an array takes one index");
    /* the value first, then the index (pld_walk_assign) */
    int fl, fk;
    pld_dtype_t dt;
    int x = pld_cg_scalar(g, v, &fl, &dt);
    if (x < 0)
        return -1;
    int k = pld_cg_scalar(g, t->u.sub.items[0], &fk, &dt);
    if (k < 0)
        return -1;
    if (fk)
        return pld_cg_fail(g, t->span, "an array index must be an integer");
    check_index(g, o->slot, k, pld_cg_site(g, t));
    array_set(g, o->slot, k, x, fl);
    return 0;
}

/* ---------------------------------------------------------------- tokens */

/* the token of a prefetch / allocation expression as a C expression */
static int token_of(cg_t *g, const pld_expr_t *e, char *b, size_t n)
{
    if (e->kind == PLD_EX_NAME && e->slot >= 0 && g->slots[e->slot].kind == SK_TOKEN) {
        snprintf(b, n, "s%d", e->slot);
        return 0;
    }
    if (e->kind != PLD_EX_CALL)
        return pld_cg_fail(g, e->span, "this handle is not compiled by the native backend");
    const int s = pld_cg_site(g, e);
    char x[48];
    int k;
    switch (e->op) {
    case PLD_OPID_TILE_ALLOC:
    case PLD_OPID_TENSOR_ALLOC: /* an identity token: no window buffer (index -1) */
        snprintf(b, n, "INT64_C(%d)", TOK_PTR);
        return 0;
    case PLD_OPID_PREFETCH_MAKE_CONTEXT: snprintf(b, n, "INT64_C(%d)", TOK_PCTX); return 0;
    case PLD_OPID_PREFETCH_ASYNC: {
        const pld_expr_t *src = pld_op_bound(e, 0);
        if (!src || src->kind != PLD_EX_NAME || src->slot < 0 || g->slots[src->slot].kind != SK_TENSOR)
            return pld_cg_fail(g, e->span, "pl.prefetch.async_prefetch: the native backend needs a named tensor");
        if (token_of(g, pld_op_bound(e, 1), x, sizeof x))
            return -1;
        k = TOK_EVENT;
        pld_cg_emit(g, "if (%s != %d) return pc_cold(), rt->fail(bk, %d, \"%s: argument 1 is not the prefetch handle it needs\");", x,
                    TOK_PCTX, s, opname(e));
        break;
    }
    case PLD_OPID_PREFETCH_SESSION:
        if (token_of(g, pld_op_bound(e, 0), x, sizeof x))
            return -1;
        k = TOK_SESSION;
        pld_cg_emit(g, "if (%s != %d) return pc_cold(), rt->fail(bk, %d, \"%s: argument 0 is not the prefetch handle it needs\");", x,
                    TOK_PCTX, s, opname(e));
        break;
    default: return pld_cg_fail(g, e->span, "%s does not give a handle", opname(e));
    }
    snprintf(b, n, "INT64_C(%d)", k);
    return 0;
}

/* pl.prefetch.wait: the handle checks (the result is BOOL True) */
static int prefetch_wait(cg_t *g, const pld_expr_t *e)
{
    char a[48], b[48];
    const int s = pld_cg_site(g, e);
    if (token_of(g, pld_op_bound(e, 0), a, sizeof a))
        return -1;
    pld_cg_emit(g, "if (%s != %d) return pc_cold(), rt->fail(bk, %d, \"%s: argument 0 is not the prefetch handle it needs\");", a,
                TOK_EVENT, s, opname(e));
    if (token_of(g, pld_op_bound(e, 1), b, sizeof b))
        return -1;
    pld_cg_emit(g, "if (%s != %d) return pc_cold(), rt->fail(bk, %d, \"%s: argument 1 is not the prefetch handle it needs\");", b,
                TOK_SESSION, s, opname(e));
    return 0;
}

int pld_cg_sys_assign(cg_t *g, int slot, const pld_expr_t *e)
{
    const int k = g->slots[slot].kind;
    if (k == SK_ARRAY)
        return array_into(g, slot, e);
    if (k != SK_TOKEN)
        return -2;
    char b[48];
    if (token_of(g, e, b, sizeof b))
        return -1;
    pld_cg_emit(g, "s%d = %s;", slot, b);
    return 0;
}

/* ---------------------------------------------------------------- TaskIds */

/* pl.system.task_dummy(deps=[...]): the TaskIds > 0 of the list (None and
 * unset array slots add no edge, pld_eval_deps), then the task runtime */
static int task_dummy(cg_t *g, const pld_expr_t *e)
{
    const pld_expr_t *d = pld_op_bound(e, 0);
    const int s = pld_cg_site(g, e);
    int dl = tmp(g), nd = tmp(g);
    pld_cg_emit(g, "int64_t t%d[%d]; int t%d = 0;", dl, PC_MAX_DEPS, nd);
    if (d && d->kind != PLD_EX_LIST && d->kind != PLD_EX_TUPLE)
        pld_cg_emit(g, "return pc_cold(), rt->fail(bk, %d, \"deps must be a list of TaskIds\");", pld_cg_site(g, d));
    for (int i = 0; d && (d->kind == PLD_EX_LIST || d->kind == PLD_EX_TUPLE) && i < d->u.seq.n; i++) {
        const pld_expr_t *it = d->u.seq.items[i];
        if (it->kind == PLD_EX_NONE)
            continue;
        if (it->type && it->type->kind == PLD_TY_ARRAY) {
            if (!array_slot(g, it))
                return -1;
            pld_cg_emit(g, "for (int64_t k_ = 0; k_ < s%d_n; k_++) { int64_t v_ = rt->get_i(s%d, %d, k_); if (v_ <= 0) "
                           "continue; if (t%d == %d) return pc_cold(), rt->fail(bk, %d, \"more than %d deps\"); t%d[t%d++] = v_; }",
                        it->slot, it->slot, (int)g->slots[it->slot].dt, nd, PC_MAX_DEPS, pld_cg_site(g, d), PC_MAX_DEPS,
                        dl, nd);
            continue;
        }
        int fl;
        pld_dtype_t dt;
        int v = pld_cg_scalar(g, it, &fl, &dt);
        if (v < 0)
            return -1;
        if (fl)
            return pld_cg_fail(g, it->span, "deps item %d is not a TaskId", i);
        pld_cg_emit(g, "if (t%d > 0) { if (t%d == %d) return pc_cold(), rt->fail(bk, %d, \"more than %d deps\"); t%d[t%d++] = t%d; }", v,
                    nd, PC_MAX_DEPS, pld_cg_site(g, d), PC_MAX_DEPS, dl, nd, v);
    }
    int r = tmp(g);
    pld_cg_emit(g, "int64_t t%d = -1;", r);
    pld_cg_emit(g, "if (rt->task_dummy(bk, %d, t%d, t%d, &t%d)) return pc_cold(), 1;", s, dl, nd, r);
    return r;
}

/* ---------------------------------------------------------------- cores of a cluster */

/* the shared part of the pipe ops: split (pos sp) and id (pos ip) into C
 * expressions */
static int pipe_args(cg_t *g, const pld_expr_t *e, int sp, int ip, char *split, char *id)
{
    if (sp >= 0 && iarg(g, e, sp, 0, split, 64))
        return -1;
    return iarg(g, e, ip, 0, id, 64);
}

static int tpush(cg_t *g, const pld_expr_t *e)
{
    const int to_aiv = e->op == PLD_OPID_SYS_TPUSH_TO_AIV;
    char split[64], id[64], nm[32];
    if (pipe_args(g, e, 1, to_aiv ? 3 : 2, split, id))
        return -1;
    /* the checks of split and id come before the tile is evaluated: the
     * runtime makes them (pc_rt.tpush with tile NULL first) */
    const int s = pld_cg_site(g, e);
    pld_cg_emit(g, "if (rt->tpush(bk, %d, %d, %s, %s, NULL)) return pc_cold(), 1;", s, to_aiv ? PC_C2V : PC_V2C, split, id);
    if (pld_cg_tile_operand(g, pld_op_bound(e, 0), e, nm))
        return -1;
    pld_cg_emit(g, "if (rt->tpush(bk, %d, %d, %s, %s, &%s)) return pc_cold(), 1;", s, to_aiv ? PC_C2V : PC_V2C, split, id, nm);
    return 0;
}

int pld_cg_sys_tile(cg_t *g, const pld_expr_t *e, const char *dst, size_t room)
{
    if (e->op == PLD_OPID_TILE_AIV_SHARD || e->op == PLD_OPID_TILE_AIC_GATHER) {
        /* split= (else the region's mode), then the tile; the runtime halves
         * or rejoins it (the lanes' rendezvous) */
        char split[64], nm[32];
        if (pld_op_bound(e, 2) ? iarg(g, e, 2, 0, split, sizeof split) : (snprintf(split, sizeof split, "-1"), 0))
            return -1;
        if (pld_cg_tile_operand(g, pld_op_bound(e, 0), e, nm))
            return -1;
        pld_cg_emit(g, "if (rt->shard(bk, %d, %d, %s, &%s, &%s, %zu)) return pc_cold(), 1;", pld_cg_site(g, e),
                    e->op == PLD_OPID_TILE_AIC_GATHER, split, nm, dst, room);
        return 0;
    }
    if (e->op != PLD_OPID_SYS_TPOP_FROM_AIC && e->op != PLD_OPID_SYS_TPOP_FROM_AIV)
        return -2;
    const int from_aic = e->op == PLD_OPID_SYS_TPOP_FROM_AIC;
    char split[64], id[64];
    if (pipe_args(g, e, 2, from_aic ? 4 : 3, split, id))
        return -1;
    pld_cg_emit(g, "if (rt->tpop(bk, %d, %d, %s, %s, &%s, %zu)) return pc_cold(), 1;", pld_cg_site(g, e), from_aic ? PC_C2V : PC_V2C,
                split, id, dst, room);
    return 0;
}

/* the xcore runtime entry with up to 4 int arguments */
static int xcore(cg_t *g, const pld_expr_t *e, int op, char a[][64], int n)
{
    int t = tmp(g);
    pld_buf_t b;
    pld_buf_init(&b);
    for (int i = 0; i < n; i++)
        pld_buf_printf(&b, "%s%s", i ? ", " : "", a[i]);
    pld_cg_emit(g, "int64_t t%d[4] = {%s};", t, n ? pld_buf_str(&b) : "0");
    pld_buf_fini(&b);
    pld_cg_emit(g, "if (rt->xcore(bk, %d, %d, t%d, %d)) return pc_cold(), 1;", pld_cg_site(g, e), op, t, n);
    return 0;
}

static int core_stmt(cg_t *g, const pld_expr_t *e)
{
    char a[4][64];
    switch (e->op) {
    case PLD_OPID_SYS_AIC_INITIALIZE_PIPE:
    case PLD_OPID_SYS_AIV_INITIALIZE_PIPE:
        if (iarg(g, e, 2, 0, a[0], 64) || iarg(g, e, 4, 0, a[1], 64) || iarg(g, e, 6, 0, a[2], 64))
            return -1;
        return xcore(g, e, PC_XC_INIT_PIPE, a, 3);
    case PLD_OPID_SYS_TPUSH_TO_AIV:
    case PLD_OPID_SYS_TPUSH_TO_AIC: return tpush(g, e);
    case PLD_OPID_SYS_TFREE_TO_AIC:
    case PLD_OPID_SYS_TFREE_TO_AIV:
        if (iarg(g, e, 3, 0, a[0], 64))
            return -1;
        snprintf(a[1], 64, "%d", e->op == PLD_OPID_SYS_TFREE_TO_AIC ? PC_C2V : PC_V2C);
        return xcore(g, e, PC_XC_TFREE, a, 2);
    case PLD_OPID_SYS_SYNC_SET:
    case PLD_OPID_SYS_SYNC_WAIT: {
        const int set = e->op == PLD_OPID_SYS_SYNC_SET;
        const pld_expr_t *ev = pld_op_bound(e, 0);
        /* outside a group the runtime does nothing and evaluates nothing:
         * the values are computed only when the block is in a group */
        int t = tmp(g);
        pld_cg_emit(g, "int64_t t%d = rt->sys_info(bk, %d);", t, PC_INFO_IN_GROUP);
        pld_cg_emit(g, "if (t%d) {", t);
        g->ind++;
        if (!ev) {
            pld_cg_emit(g, "return pc_cold(), rt->fail(bk, %d, \"%s needs an event_id\");", pld_cg_site(g, e), opname(e));
        } else {
            int fl;
            pld_dtype_t dt;
            int v = pld_cg_scalar(g, ev, &fl, &dt);
            if (v < 0)
                return -1;
            snprintf(a[0], 64, fl ? "(int64_t)t%d" : "t%d", v);
            if (set && iarg(g, e, 2, 0, a[1], 64))
                return -1;
            if (!set)
                snprintf(a[1], 64, "0");
            if (xcore(g, e, set ? PC_XC_SYNC_SET : PC_XC_SYNC_WAIT, a, 2))
                return -1;
        }
        g->ind--;
        pld_cg_emit(g, "}");
        return 0;
    }
    case PLD_OPID_SYS_SYNCALL: {
        const char *m = str_arg(e, 1), *ct = str_arg(e, 0);
        const int soft = m && strcmp(m, "soft") == 0;
        const char *type = ct ? ct : "mix";
        const int code = strcmp(type, "mix") == 0 ? 0 : strcmp(type, "aiv_only") == 0 ? 1 : strcmp(type, "aic_only") == 0 ? 2 : -1;
        if (code < 0)
            return pld_cg_fail(g, e->span, "pl.system.syncall: core_type '%s' is not compiled by the native backend", type);
        snprintf(a[0], 64, "%d", code);
        snprintf(a[1], 64, "%d", soft);
        snprintf(a[2], 64, "0");
        /* used_cores is read only for the soft form, after the group check
         * the runtime makes (type in a group): both made by the runtime */
        if (soft && iarg(g, e, 3, 0, a[2], 64))
            return -1;
        return xcore(g, e, PC_XC_SYNCALL, a, 3);
    }
    case PLD_OPID_SYS_SET_FFTS:
    case PLD_OPID_SYS_CACHEINVALID:
    case PLD_OPID_SYS_FENCE:
    case PLD_OPID_SYS_BAR_V:
    case PLD_OPID_SYS_BAR_M:
    case PLD_OPID_SYS_BAR_ALL:
    case PLD_OPID_SYS_SYNC_SRC:
    case PLD_OPID_SYS_SYNC_DST:
        /* coherent memory and program order: sim evaluates nothing */
        pld_cg_emit(g, "/* %s: no effect */", opname(e));
        return 0;
    default: return -2;
    }
}

static int region(cg_t *g, const pld_stmt_t *s, const pld_expr_t *it, const pld_block_t *body, const pld_expr_t *lv,
                  int grid);

/* ---------------------------------------------------------------- dispatch */

int pld_cg_sys_scalar(cg_t *g, const pld_expr_t *e, int *fl, pld_dtype_t *dt)
{
    *fl = 0;
    if (e->kind == PLD_EX_SUBSCRIPT) {
        const pld_expr_t *o = e->u.sub.obj;
        if (!o->type || o->type->kind != PLD_TY_ARRAY)
            return -2;
        if (!array_slot(g, o))
            return -1;
        if (e->u.sub.n != 1)
            return pld_cg_fail(g, e->span, "an array takes one index");
        int fk;
        pld_dtype_t dk;
        int k = pld_cg_scalar(g, e->u.sub.items[0], &fk, &dk);
        if (k < 0)
            return -1;
        if (fk)
            return pld_cg_fail(g, e->span, "an array index must be an integer");
        check_index(g, o->slot, k, pld_cg_site(g, e));
        return array_get(g, o->slot, k, fl, dt);
    }
    if (e->kind != PLD_EX_CALL)
        return -2;
    int t;
    switch (e->op) {
    case PLD_OPID_ARRAY_GET: {
        const pld_expr_t *a = pld_op_bound(e, 0);
        if (!array_slot(g, a))
            return -1;
        int fk;
        pld_dtype_t dk;
        int k = pld_cg_scalar(g, pld_op_bound(e, 1), &fk, &dk);
        if (k < 0)
            return -1;
        if (fk)
            return pld_cg_fail(g, e->span, "an array index must be an integer");
        check_index(g, a->slot, k, pld_cg_site(g, e));
        return array_get(g, a->slot, k, fl, dt);
    }
    case PLD_OPID_SYS_TASK_INVALID:
        *dt = PLD_DT_TASK_ID;
        t = tmp(g);
        pld_cg_emit(g, "int64_t t%d = -1;", t);
        return t;
    case PLD_OPID_SYS_TASK_DUMMY: *dt = PLD_DT_TASK_ID; return task_dummy(g, e);
    case PLD_OPID_TILE_GET_SUBBLOCK_IDX:
    case PLD_OPID_SYS_AVAILABLE_CLUSTER_COUNT:
    case PLD_OPID_SYS_AVAILABLE_AIV_COUNT:
        *dt = e->op == PLD_OPID_TILE_GET_SUBBLOCK_IDX ? PLD_DT_INDEX : PLD_DT_INT32;
        t = tmp(g);
        pld_cg_emit(g, "int64_t t%d = rt->sys_info(bk, %d);", t,
                    e->op == PLD_OPID_TILE_GET_SUBBLOCK_IDX      ? PC_INFO_SUBBLOCK
                    : e->op == PLD_OPID_SYS_AVAILABLE_CLUSTER_COUNT ? PC_INFO_CLUSTERS
                                                                 : PC_INFO_AIVS);
        return t;
    case PLD_OPID_SYS_RESERVE_BUFFER:
    case PLD_OPID_SYS_IMPORT_PEER_BUFFER: {
        /* the slot buffer's base: a given literal base, else 0 (AUTO) */
        const pld_expr_t *b = e->op == PLD_OPID_SYS_RESERVE_BUFFER ? pld_op_bound(e, 2) : NULL;
        *dt = PLD_DT_INT32;
        t = tmp(g);
        pld_cg_emit(g, "int64_t t%d = %lld;", t, b && b->kind == PLD_EX_INT && b->u.ival >= 0 ? (long long)b->u.ival : 0LL);
        return t;
    }
    case PLD_OPID_PREFETCH_WAIT:
        if (prefetch_wait(g, e))
            return -1;
        *dt = PLD_DT_BOOL;
        t = tmp(g);
        pld_cg_emit(g, "int64_t t%d = 1;", t);
        return t;
    default: return -2;
    }
}

int pld_cg_sys_stmt(cg_t *g, const pld_expr_t *e)
{
    int fl;
    pld_dtype_t dt;
    switch (e->op) {
    case PLD_OPID_ARRAY_GET:
    case PLD_OPID_SYS_TASK_INVALID:
    case PLD_OPID_SYS_TASK_DUMMY:
    case PLD_OPID_TILE_GET_SUBBLOCK_IDX:
    case PLD_OPID_SYS_AVAILABLE_CLUSTER_COUNT:
    case PLD_OPID_SYS_AVAILABLE_AIV_COUNT:
    case PLD_OPID_SYS_RESERVE_BUFFER:
    case PLD_OPID_SYS_IMPORT_PEER_BUFFER:
    case PLD_OPID_PREFETCH_WAIT:
        return pld_cg_sys_scalar(g, e, &fl, &dt) < 0 ? -1 : 0;
    case PLD_OPID_TILE_ALLOC:
    case PLD_OPID_TENSOR_ALLOC:
    case PLD_OPID_PREFETCH_MAKE_CONTEXT:
    case PLD_OPID_PREFETCH_ASYNC:
    case PLD_OPID_PREFETCH_SESSION: {
        char b[48];
        return token_of(g, e, b, sizeof b);
    }
    case PLD_OPID_SYS_TPOP_FROM_AIC:
    case PLD_OPID_SYS_TPOP_FROM_AIV:
    case PLD_OPID_TILE_AIV_SHARD:
    case PLD_OPID_TILE_AIC_GATHER: { /* the result unused: into a temporary */
        int64_t need = tile_bytes(e->type);
        if (need < 0)
            return pld_cg_fail(g, e->span, "%s: the native backend needs the popped tile's static shape", opname(e));
        int t = pld_cg_temp_tile(g, (size_t)need);
        char nm[32];
        snprintf(nm, sizeof nm, "t%d", t);
        return pld_cg_sys_tile(g, e, nm, (size_t)need);
    }
    default: return core_stmt(g, e);
    }
}

int pld_cg_sys_with(cg_t *g, const pld_stmt_t *s)
{
    const pld_expr_t *item = s->u.with.item;
    if (item->kind == PLD_EX_CALL && item->op == PLD_OPID_PL_SPMD) {
        /* a grid launched inside the kernel: a task of its own; `as` name: its TaskId */
        if (region(g, s, item, &s->u.with.body, NULL, 1))
            return -1;
        for (int i = 0; s->u.with.as_name && i < g->fn->nslots; i++)
            if (g->fn->slot_names[i] == s->u.with.as_name && g->slots[i].kind == SK_INT)
                pld_cg_emit(g, "s%d = rt->sys_info(bk, %d);", i, PC_INFO_TASKS);
        return 0;
    }
    if (item->kind != PLD_EX_CALL ||
        (item->op != PLD_OPID_PL_SCOPE && item->op != PLD_OPID_PL_MANUAL_SCOPE && item->op != PLD_OPID_PL_CLUSTER &&
         item->op != PLD_OPID_PL_AT))
        return pld_cg_fail(g, s->span, "%s inside a kernel is not compiled by the native backend yet",
                           item->kind == PLD_EX_CALL ? opname(item) : "this scope");
    /* inside a kernel sim runs the body in place (no task, no deps);
     * `as name` binds the TaskId count so far */
    pld_cg_emit(g, "{");
    g->ind++;
    int rc = pld_cg_block(g, &s->u.with.body, NULL);
    if (!rc && s->u.with.as_name) {
        for (int i = 0; i < g->fn->nslots; i++)
            if (g->fn->slot_names[i] == s->u.with.as_name && g->slots[i].kind == SK_INT)
                pld_cg_emit(g, "s%d = rt->sys_info(bk, %d);", i, PC_INFO_TASKS);
    }
    g->ind--;
    pld_cg_emit(g, "}");
    return rc;
}

void pld_cg_sys_scan_with(cg_t *g, const pld_stmt_t *s)
{
    for (int i = 0; s->u.with.as_name && i < g->fn->nslots; i++)
        if (g->fn->slot_names[i] == s->u.with.as_name && g->slots[i].kind == SK_NONE) {
            g->slots[i].kind = SK_INT;
            g->slots[i].dt = PLD_DT_TASK_ID;
        }
}

/* ---------------------------------------------------------------- calls of kernel functions */

/* the kernel function `self.k(...)` call e names, or -1 */
static int callee_of(const cg_t *g, const pld_expr_t *e)
{
    if (!e || e->kind != PLD_EX_CALL || e->op >= 0 || e->aux < 0 || e->aux >= g->p->nfuncs)
        return -1;
    const pld_expr_t *fn = e->u.call.fn;
    if (fn->kind != PLD_EX_ATTR || fn->u.attr.obj->kind != PLD_EX_NAME || strcmp(fn->u.attr.obj->u.name, "self") != 0)
        return -1;
    return e->aux;
}

static void note_callee(cg_t *g, int fidx)
{
    for (int i = 0; i < g->ncallees; i++)
        if (g->callees[i] == fidx)
            return;
    if (g->ncallees < 32)
        g->callees[g->ncallees++] = fidx;
}

/* args[] of call e of kernel function k (pld_abi_build's layout: tensors,
 * then scalars, args[48] / args[49] the caller's contexts); the temp
 * holding it */
static int call_args(cg_t *g, const pld_expr_t *e, const pld_func_t *k)
{
    if (e->u.call.nargs != k->nparams)
        return pld_cg_fail(g, e->span, "%s takes %d arguments, %d given", k->name, k->nparams, e->u.call.nargs);
    int nt = 0;
    for (int i = 0; i < k->nparams; i++) {
        if (e->u.call.args[i].kw)
            return pld_cg_fail(g, e->span, "keyword arguments of a kernel call are not compiled by the native backend yet");
        if (k->params[i].type && pld_type_is_tensorlike(k->params[i].type))
            nt++;
    }
    if (nt > 32 || k->nparams - nt > 16)
        return pld_cg_fail(g, e->span, "%s: more than 32 tensors or 16 scalars", k->name);
    const int s = pld_cg_site(g, e);
    int a = tmp(g), c = tmp(g);
    pld_cg_emit(g, "int64_t t%d[50]; memset(t%d, 0, sizeof t%d);", a, a, a);
    pld_cg_emit(g, "_Alignas(64) unsigned char t%d[%d][128];", c, nt ? nt : 1);
    for (int i = 0, ti = 0, si = nt; i < k->nparams; i++) {
        const pld_type_t *pt = k->params[i].type;
        const pld_expr_t *v = e->u.call.args[i].value;
        if (!pt)
            return pld_cg_fail(g, v->span, "parameter '%s' of %s has no static type", k->params[i].name, k->name);
        if (pld_type_is_tensorlike(pt)) {
            const pld_type_t *at = v->type;
            if (v->kind != PLD_EX_NAME || v->slot < 0 || g->slots[v->slot].kind != SK_TENSOR)
                return pld_cg_fail(g, v->span, "the native backend passes named tensors to a kernel call");
            int same = at && pld_type_is_tensorlike(at) && at->rank == pt->rank;
            for (int d = 0; same && d < pt->rank; d++)
                same = at->shape[d].kind == PLD_DIM_CONST && pt->shape[d].kind == PLD_DIM_CONST &&
                       at->shape[d].v == pt->shape[d].v;
            if (!same)
                return pld_cg_fail(g, v->span, "argument '%s' of %s: a tensor of another or unknown shape is not passed "
                                               "by the native backend yet", k->params[i].name, k->name);
            if (at->dtype != pt->dtype)
                pld_cg_emit(g, "return pc_cold(), rt->fail(bk, %d, \"argument '%s' of %s has dtype %s, declared %s\");", s,
                            k->params[i].name, k->name, pld_dtype_name(at->dtype), pld_dtype_name(pt->dtype));
            pld_cg_emit(g, "pc_chip_tensor(t%d[%d], &s%d, %d, %d); t%d[%d] = (int64_t)(uintptr_t)t%d[%d];", c, ti, v->slot,
                        esize(pt->dtype), pld_abi_dtype_code(pt->dtype), a, ti, c, ti);
            ti++;
            continue;
        }
        if (pt->kind != PLD_TY_SCALAR)
            return pld_cg_fail(g, v->span, "parameter '%s' of %s: only tensors and scalars are passed by the native "
                                           "backend yet", k->params[i].name, k->name);
        int fl;
        pld_dtype_t dt;
        int x = pld_cg_scalar(g, v, &fl, &dt);
        if (x < 0)
            return -1;
        const pld_dtype_t d = pt->dtype;
        if (is_float_dt(d)) {
            if (d != PLD_DT_FP32 && d != PLD_DT_FP64)
                return pld_cg_fail(g, v->span, "a %s scalar argument is not passed by the native backend yet",
                                   pld_dtype_name(d));
            if (d == PLD_DT_FP32)
                pld_cg_emit(g, "t%d[%d] = (int64_t)pc_f32_word((double)t%d);", a, si, x);
            else
                pld_cg_emit(g, "{ double d_ = (double)t%d; memcpy(&t%d[%d], &d_, 8); }", x, a, si);
        } else if (fl) {
            pld_cg_emit(g, "t%d[%d] = rt->wrap_i(%d, t%d != t%d ? 0 : t%d >= 9.2233720368547758e18 ? INT64_MAX : t%d <= "
                           "-9.2233720368547758e18 ? INT64_MIN : (int64_t)t%d);",
                        a, si, (int)d, x, x, x, x, x);
        } else {
            pld_cg_emit(g, "t%d[%d] = rt->wrap_i(%d, t%d);", a, si, (int)d, x);
        }
        si++;
    }
    pld_cg_emit(g, "t%d[48] = args[48]; t%d[49] = args[49];", a, a);
    return a;
}

/* the result of a call (pc_out tR) into name target */
static int call_result(cg_t *g, const pld_expr_t *target, int r, const pld_expr_t *e)
{
    if (!target)
        return 0;
    if (target->kind != PLD_EX_NAME || target->slot < 0)
        return pld_cg_fail(g, target->span, "the native backend assigns a kernel call's result to one name");
    const int sl = target->slot;
    switch (g->slots[sl].kind) {
    case SK_TENSOR:
        pld_cg_emit(g, "if (t%d.kind != PC_OUT_TENSOR) return pc_cold(), rt->fail(bk, %d, \"internal: the call returned no tensor\");", r,
                    pld_cg_site(g, e));
        pld_cg_emit(g, "s%d = t%d.t;", sl, r);
        return 0;
    case SK_INT: pld_cg_emit(g, "s%d = t%d.kind == PC_OUT_FLOAT ? (int64_t)t%d.f : t%d.i;", sl, r, r, r); return 0;
    case SK_FLT: pld_cg_emit(g, "s%d = t%d.kind == PC_OUT_FLOAT ? t%d.f : (double)t%d.i;", sl, r, r, r); return 0;
    default:
        return pld_cg_fail(g, target->span, "'%s': this kind of result of a kernel call is not compiled by the native "
                                            "backend yet", target->u.name);
    }
}

int pld_cg_sys_call(cg_t *g, const pld_expr_t *e, const pld_expr_t *target)
{
    const int fidx = callee_of(g, e);
    if (fidx < 0)
        return pld_cg_fail(g, e->span, "calls of other functions inside a kernel are not compiled by the native backend yet");
    const pld_func_t *k = g->p->funcs[fidx];
    if (k == g->fn)
        return pld_cg_fail(g, e->span, "a recursive kernel call is not compiled by the native backend");
    pld_cg_emit(g, "{");
    g->ind++;
    int a = call_args(g, e, k);
    if (a < 0)
        return -1;
    note_callee(g, fidx);
    int r = tmp(g);
    pld_cg_emit(g, "pc_out t%d;", r);
    pld_cg_emit(g, "if (rt->call(bk, %d, %d, pc_f%d, t%d, &t%d)) return pc_cold(), 1;", pld_cg_site(g, e), fidx, fidx, a, r);
    if (call_result(g, target, r, e))
        return -1;
    g->ind--;
    pld_cg_emit(g, "}");
    return 0;
}

/* ---------------------------------------------------------------- Group bodies */

/* the member call of statement st (an AIC / AIV kernel), or NULL; *target: the name assigned */
static const pld_expr_t *member_of(const cg_t *g, const pld_stmt_t *st, const pld_expr_t **target)
{
    const pld_expr_t *e = st->kind == PLD_ST_EXPR ? st->u.expr : st->kind == PLD_ST_ASSIGN ? st->u.assign.value : NULL;
    *target = st->kind == PLD_ST_ASSIGN ? st->u.assign.target : NULL;
    const int f = callee_of(g, e);
    if (f < 0)
        return NULL;
    const pld_func_t *k = g->p->funcs[f];
    return k->ftype == PLD_FT_AIC || k->ftype == PLD_FT_AIV ? e : NULL;
}

int pld_cg_sys_group(cg_t *g, const pld_block_t *b, int i)
{
    if (g->fn->ftype != PLD_FT_GROUP || b != &g->fn->body)
        return 0;
    const pld_expr_t *calls[8], *targets[8];
    int n = 0;
    while (i + n < b->n && n < 8 && (calls[n] = member_of(g, b->stmts[i + n], &targets[n])))
        n++;
    if (n == 0)
        return 0;
    int args[8], outs[8];
    pld_cg_emit(g, "{");
    g->ind++;
    for (int m = 0; m < n; m++) {
        const int f = callee_of(g, calls[m]);
        if ((args[m] = call_args(g, calls[m], g->p->funcs[f])) < 0)
            return -1;
        note_callee(g, f);
        outs[m] = tmp(g);
        pld_cg_emit(g, "pc_out t%d; memset(&t%d, 0, sizeof t%d);", outs[m], outs[m], outs[m]);
    }
    int mt = tmp(g);
    pld_cg_emit(g, "pc_member t%d[%d];", mt, n);
    for (int m = 0; m < n; m++) {
        const int f = callee_of(g, calls[m]);
        const pld_func_t *k = g->p->funcs[f];
        pld_cg_emit(g, "t%d[%d].fidx = %d; t%d[%d].site = %d; t%d[%d].aic = %d; t%d[%d].dual = %d; t%d[%d].fn = pc_f%d; "
                       "t%d[%d].args = t%d; t%d[%d].out = &t%d;",
                    mt, m, f, mt, m, pld_cg_site(g, calls[m]), mt, m, k->ftype == PLD_FT_AIC, mt, m, pld_func_dual_aiv(k), mt, m,
                    f, mt, m, args[m], mt, m, outs[m]);
    }
    pld_cg_emit(g, "if (rt->group(bk, %d, %d, t%d)) return pc_cold(), 1;", pld_cg_site(g, calls[0]), n, mt);
    for (int m = 0; m < n; m++)
        if (call_result(g, targets[m], outs[m], calls[m]))
            return -1;
    g->ind--;
    pld_cg_emit(g, "}");
    return n;
}

/* ---------------------------------------------------------------- pl.split_aiv regions */

static const char *slot_ctype(int kind)
{
    switch (kind) {
    case SK_INT: case SK_CTX: case SK_TOKEN: return "int64_t";
    case SK_FLT: return "double";
    case SK_TENSOR: return "pc_tensor";
    case SK_TILE: return "pc_tile";
    default: return NULL;
    }
}

/* The region's body is a static function run once per lane (pc_rt.lanes), as
 * sim runs each lane as a block with its own copy of the frame: its locals
 * are copies of the caller's (fr[]: their addresses; tiles get storage of
 * their own), and nothing it assigns flows back (tensor data is shared). */
/* a region (pl.split_aiv lanes, or grid != 0: a pl.spmd grid inside a
 * kernel) of statement s: its item it, body, loop variable lv */
static int region(cg_t *g, const pld_stmt_t *s, const pld_expr_t *it, const pld_block_t *body, const pld_expr_t *lv,
                  int grid)
{
    const pld_expr_t *na = NULL, *mode = NULL, *ss = NULL;
    for (int i = 0; i < it->u.call.nargs; i++) {
        const char *kw = it->u.call.args[i].kw;
        if (!kw && !na)
            na = it->u.call.args[i].value;
        else if (kw && strcmp(kw, "mode") == 0)
            mode = it->u.call.args[i].value;
        else if (kw && strcmp(kw, "sync_start") == 0)
            ss = it->u.call.args[i].value;
        else if (kw && strcmp(kw, "deps") == 0 && grid)
            return pld_cg_fail(g, it->span, "pl.spmd(deps=...) inside a kernel is not compiled by the native backend yet");
    }
    if (!na)
        return pld_cg_fail(g, it->span, "%s needs a count", opname(it));
    if (lv && (lv->kind != PLD_EX_NAME || lv->slot < 0))
        return pld_cg_fail(g, lv->span, "the native backend needs a plain lane variable");
    const char *mm = mode && mode->kind == PLD_EX_ATTR ? mode->u.attr.attr : "";
    /* split_aiv: the split mode 0-2; a grid: -1, or -2 with sync_start */
    const int split = grid ? (ss && ss->kind == PLD_EX_BOOL && ss->u.bval ? -2 : -1)
                           : strcmp(mm, "UP_DOWN") == 0 ? 1 : strcmp(mm, "LEFT_RIGHT") == 0 ? 2 : 0;
    int fl;
    pld_dtype_t dt;
    int n = pld_cg_scalar(g, na, &fl, &dt);
    if (n < 0)
        return -1;
    const int id = tmp(g), ns = g->fn->nslots;
    char name[160];
    snprintf(name, sizeof name, "pc_%s_%s_%d", grid ? "grid" : "lane", g->fn->name, id);
    /* the call: the locals' addresses (arrays: then their lengths at ns + i) */
    int fr = tmp(g);
    pld_cg_emit(g, "{");
    g->ind++;
    pld_cg_emit(g, "void *t%d[%d]; memset(t%d, 0, sizeof t%d);", fr, 2 * ns + 1, fr, fr);
    for (int i = 0; i < ns; i++) {
        if (!slot_ctype(g->slots[i].kind) && g->slots[i].kind != SK_ARRAY)
            continue;
        pld_cg_emit(g, "t%d[%d] = (void *)&s%d;", fr, i, i);
        if (g->slots[i].kind == SK_ARRAY)
            pld_cg_emit(g, "t%d[%d] = (void *)&s%d_n;", fr, ns + i, i);
    }
    pld_cg_emit(g, "if (rt->lanes(bk, %d, %s(int64_t)t%d, %d, %s, args, t%d, ubc)) return pc_cold(), 1;", pld_cg_site(g, it),
                fl ? "(int64_t)" : "", n, split, name, fr);
    g->ind--;
    pld_cg_emit(g, "}");
    /* the lane function: its body generated on its own */
    pld_buf_t out = g->out, tmpdecl = g->tmpdecl;
    const int ind = g->ind, depth = g->depth;
    pld_buf_init(&g->out);
    pld_buf_init(&g->tmpdecl);
    g->ind = 1;
    g->depth = 0;
    if (lv)
        pld_cg_emit(g, "s%d = lane;", lv->slot);
    int rc = pld_cg_block(g, body, NULL);
    if (!rc && !g->failed) {
        pld_buf_t *f = &g->fns;
        pld_buf_printf(&g->protos, "static int %s(const pc_rt *rt, void *bk, int64_t *args, void **fr, int ubc, int64_t lane);\n",
                       name);
        pld_buf_printf(f, "\n/* the %s at line %d of %s */\n", grid ? "blocks of the pl.spmd grid" : "lanes of the pl.split_aiv region",
                       (int)s->span.line, g->fn->name);
        pld_buf_printf(f, "static int %s(const pc_rt *rt, void *bk, int64_t *args, void **fr, int ubc, int64_t lane)\n{\n",
                       name);
        pld_buf_puts(f, "    (void)args; (void)ubc;\n");
        for (int i = 0; i < ns; i++) {
            const cslot_t *sl = &g->slots[i];
            const char *ct = slot_ctype(sl->kind);
            if (sl->kind == SK_ARRAY) {
                pld_cg_sys_decl(g, i, f);
                pld_buf_printf(f, "    memcpy(s%d, fr[%d], sizeof s%d); memcpy(&s%d_n, fr[%d], 8);\n", i, i, i, i, ns + i);
                continue;
            }
            if (!ct)
                continue;
            pld_buf_printf(f, "    %s s%d; memcpy(&s%d, fr[%d], sizeof s%d); /* %s */\n", ct, i, i, i, i,
                           g->fn->slot_names[i]);
            if (sl->kind == SK_TILE && !sl->nodata) /* (no storage: pld_cgen_fuse.c) */
                pld_buf_printf(f, "    { void *p_ = rt->alloc(bk, -1, %zu); if (!p_) return pc_cold(), 1; memcpy(p_, s%d.data, %zu); "
                                  "s%d.data = p_; }\n",
                               sl->bytes ? sl->bytes : 1, i, sl->bytes ? sl->bytes : 1, i);
        }
        pld_buf_puts(f, pld_buf_str(&g->tmpdecl));
        pld_buf_puts(f, pld_buf_str(&g->out));
        pld_buf_puts(f, "    return 0;\n}\n");
    }
    pld_buf_fini(&g->out);
    pld_buf_fini(&g->tmpdecl);
    g->out = out;
    g->tmpdecl = tmpdecl;
    g->ind = ind;
    g->depth = depth;
    return rc || g->failed ? -1 : 0;
}

int pld_cg_sys_lanes(cg_t *g, const pld_stmt_t *s)
{
    const pld_expr_t *it = s->u.for_.iter;
    return region(g, s, it, &s->u.for_.body, s->u.for_.target, it->op == PLD_OPID_PL_SPMD);
}

int pld_cg_dump_tag(cg_t *g, const pld_expr_t *e)
{
    const pld_expr_t *a = e->u.call.nargs == 1 && !e->u.call.args[0].kw ? e->u.call.args[0].value : NULL;
    const int tile = a && a->type && a->type->kind == PLD_TY_TILE;
    if (!a || (tile && (a->kind != PLD_EX_NAME || a->slot < 0 || g->slots[a->slot].kind != SK_TILE)))
        return pld_cg_fail(g, e->span, "%s in a compiled kernel takes one tensor or a tile's name", opname(e));
    const int s = pld_cg_site(g, e);
    pld_cg_emit(g, "if (rt->sys_info(bk, PC_INFO_DUMP)) {");
    g->ind++;
    if (tile) {
        pld_cg_emit(g, "if (rt->dump(bk, %d, NULL, &s%d)) return pc_cold(), 1;", s, a->slot);
    } else {
        int o = tmp(g);
        pld_cg_emit(g, "pc_tensor t%d;", o);
        char d[32];
        snprintf(d, sizeof d, "t%d", o);
        if (pld_cg_tensor_into(g, a, d))
            return -1;
        pld_cg_emit(g, "if (rt->dump(bk, %d, &t%d, NULL)) return pc_cold(), 1;", s, o);
    }
    g->ind--;
    pld_cg_emit(g, "}");
    return 0;
}
