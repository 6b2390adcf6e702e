/* pld_check_pld.c - the static rules of the pld.* ops and the collectives
 * (docs/pld_semantics.md §2 (e) tables and §3; seeds 000 and 004), and HOST
 * window provenance.
 *
 * The checker core binds every call of a PLD_OPID_PLD_* op (arity, keywords,
 * level masks), checks each argument and then hands the call to
 * pld_ck_pld_call(), which applies every rule that can be decided from the text:
 * operand kinds, dtypes, ranks, provable offsets and extents, enum ranges, the
 * per-rail rules of the collectives (InCore composite, CHIP builtin, HOST
 * builtin) and the HOST-rail window rules. Anything that depends on the rank
 * count P is checked only when P is known and every comm domain spans the
 * world (ck->dom_ranks > 0; a program dispatching to device subsets has
 * smaller domains, whose sizes the checker does not infer).
 *
 * Every diagnostic points at the call and starts with the op's name. */
#include "pld_check_int.h"

#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#define I32_MAX INT64_C(2147483647)

/* One call being checked. */
typedef struct pc {
    pld_ck_t *ck;
    ck_call_t *c;
    const char *op;    /* canonical op name, e.g. "pld.tensor.allreduce" */
    int nerr;          /* errors reported for this call */
    int builtin;       /* a builtin.tensor.* dispatch of the lowered program (pld_lower.c) */
} pc_t;

/* A role-named operand of a collective. */
typedef struct operand {
    int idx;
    const char *role;
} operand_t;

/* ------------------------------------------------------------------ helpers */

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void perr(pc_t *x, const char *fmt, ...)
{
    pld_buf_t b;
    va_list ap;

    pld_buf_init(&b);
    pld_buf_printf(&b, "%s ", x->op);
    va_start(ap, fmt);
    pld_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    if (b.oom)
        x->ck->oom = 1;
    pld_ck_error(x->ck, x->c->call->span, "%s", pld_buf_str(&b));
    pld_buf_fini(&b);
    x->nerr++;
}

static const pld_type_t *ty(const pc_t *x, int i)
{
    return x->c->types[i];
}

static const pld_expr_t *arg(const pc_t *x, int i)
{
    return x->c->args[i];
}

static int known(const pld_type_t *t)
{
    return t && t->kind != PLD_TY_UNKNOWN;
}

/* Static value of dimension i of t; 1 when constant. */
static int dimc(const pld_type_t *t, int i, int64_t *v)
{
    if (!t || i < 0 || i >= t->rank || !t->shape || t->shape[i].kind != PLD_DIM_CONST)
        return 0;
    *v = t->shape[i].v;
    return 1;
}

/* Static value of item k of the list argument i; 1 when known. */
static int item_const(const pc_t *x, int i, int k, int64_t *v)
{
    const pld_expr_t *e = arg(x, i) ? pld_ck_list_item(x->ck, arg(x, i), k) : NULL;
    return e && pld_ck_const_int(x->ck, e, v);
}

static const char *dim_text(const pld_dim_t *d, pld_buf_t *b)
{
    pld_buf_reset(b);
    pld_dim_print(d, b);
    return pld_buf_str(b);
}

/* 1 when both dims are structurally equal, 0 when provably or structurally
 * different (two constants, or two different named dims), -1 unknown. */
static int dim_same(const pld_dim_t *a, const pld_dim_t *b)
{
    if (a->kind == PLD_DIM_CONST && b->kind == PLD_DIM_CONST)
        return a->v == b->v;
    if (a->kind == PLD_DIM_SYM && b->kind == PLD_DIM_SYM)
        return a->sym == b->sym || (a->sym && b->sym && strcmp(a->sym, b->sym) == 0);
    return -1;
}

/* 1 when two argument expressions are written identically. */
static int same_expr(const pld_expr_t *a, const pld_expr_t *b)
{
    pld_buf_t ba, bb;
    int same;

    if (!a || !b)
        return 0;
    if (a->kind == PLD_EX_NAME && b->kind == PLD_EX_NAME)
        return a->u.name == b->u.name || strcmp(a->u.name, b->u.name) == 0;
    pld_buf_init(&ba);
    pld_buf_init(&bb);
    pld_ast_print_expr(a, &ba);
    pld_ast_print_expr(b, &bb);
    same = !ba.oom && !bb.oom && strcmp(pld_buf_str(&ba), pld_buf_str(&bb)) == 0;
    pld_buf_fini(&ba);
    pld_buf_fini(&bb);
    return same;
}

/* The dtype named by a dtype argument (pl.FP32, a module dtype constant). */
static pld_dtype_t dtype_of(pld_ck_t *ck, const pld_expr_t *e)
{
    if (!e)
        return PLD_DT_NONE;
    if (e->kind == PLD_EX_NAME) {
        const ck_const_t *k = pld_ck_find_const(ck, e->u.name);
        if (k && k->kind == CK_C_DTYPE)
            return k->dt;
        return pld_dtype_from_name(e->u.name);
    }
    if (e->kind == PLD_EX_ATTR)
        return pld_dtype_from_name(e->u.attr.attr);
    return PLD_DT_NONE;
}

static const char *enum_member(const char *enum_name, int64_t v)
{
    static const char *const reduce[] = {"Sum", "Max", "Min", "Prod"};
    static const char *const notify[] = {"AtomicAdd", "Set"};
    static const char *const cmp[] = {"Eq", "Ge"};
    static const char *const atomic[] = {"None_", "Add"};

    if (strcmp(enum_name, "ReduceOp") == 0 && v >= 0 && v < 4)
        return reduce[v];
    if (strcmp(enum_name, "NotifyOp") == 0 && v >= 0 && v < 2)
        return notify[v];
    if (strcmp(enum_name, "WaitCmp") == 0 && v >= 0 && v < 2)
        return cmp[v];
    if (strcmp(enum_name, "AtomicType") == 0 && v >= 0 && v < 2)
        return atomic[v];
    return "?";
}

/* Copies n dims into the program arena. */
static const pld_dim_t *dims_dup(pc_t *x, const pld_dim_t *d, int n)
{
    pld_dim_t *out = pld_dims_new(x->ck->p, n);
    if (!out) {
        x->ck->oom = 1;
        return NULL;
    }
    if (n > 0)
        memcpy(out, d, (size_t)n * sizeof *d);
    return out;
}

static int aiv_cores(const pld_ck_t *ck)
{
    return pld_npu_profile_or_default(ck->opts.platform)->aiv_cores;
}

/* ---- operand kinds: each returns 1 when the operand has the wanted kind, 0
 * when it is absent or its type is unknown (skip dependent checks), -1 when an
 * error was reported. */

static int want_dt(pc_t *x, int i, const char *role)
{
    const pld_type_t *t = ty(x, i);
    if (!known(t))
        return 0;
    if (t->kind == PLD_TY_DTENSOR)
        return 1;
    perr(x, "expects a DistributedTensor %s (window-bound); got %s", role, pld_ck_tystr(x->ck, t));
    return -1;
}

static int want_tensorlike(pc_t *x, int i, const char *role)
{
    const pld_type_t *t = ty(x, i);
    if (!known(t))
        return 0;
    if (pld_type_is_tensorlike(t))
        return 1;
    perr(x, "%s must be a Tensor or DistributedTensor; got %s", role, pld_ck_tystr(x->ck, t));
    return -1;
}

static int want_scalar(pc_t *x, int i, const char *role, const char *what)
{
    const pld_type_t *t = ty(x, i);
    if (!known(t))
        return 0;
    if (t->kind == PLD_TY_SCALAR)
        return 1;
    perr(x, "%s must be a scalar%s; got %s", role, what, pld_ck_tystr(x->ck, t));
    return -1;
}

static int want_int_scalar(pc_t *x, int i, const char *role)
{
    const pld_type_t *t = ty(x, i);
    int r = want_scalar(x, i, role, "");
    if (r > 0 && t->dtype != PLD_DT_NONE && !pld_dtype_is_int(t->dtype)) {
        perr(x, "%s must be an integer or index scalar, found %s", role, pld_dtype_name(t->dtype));
        return -1;
    }
    return r;
}

/* A signal window: DistributedTensor of INT32. */
static int want_signal(pc_t *x, int i, const char *role)
{
    int r = want_dt(x, i, role);
    if (r > 0 && ty(x, i)->dtype != PLD_DT_INT32) {
        perr(x, "%s must be INT32, found %s", role, pld_dtype_name(ty(x, i)->dtype));
        return -1;
    }
    return r;
}

/* A list argument of `want` items (want < 0: any length). Returns its length,
 * or -1 when absent, not a list (reported) or of the wrong length (reported). */
static int want_list(pc_t *x, int i, const char *role, int want, const char *against)
{
    const pld_expr_t *e = arg(x, i);
    int n;

    if (!e)
        return -1;
    n = pld_ck_list_len(x->ck, e);
    if (n < 0) {
        if (known(ty(x, i)))
            perr(x, "%s must be a list of scalars; got %s", role, pld_ck_tystr(x->ck, ty(x, i)));
        return -1;
    }
    if (want >= 0 && n != want) {
        perr(x, "%s rank (%d) must match %s rank (%d)", role, n, against, want);
        return -1;
    }
    return n;
}

/* Enum argument i; returns 1 and *v when known. Reports values outside
 * [0, n). `required` reports a missing argument. */
static int enum_arg(pc_t *x, int i, const char *enum_name, int n, const char *allowed, int required,
                    int64_t *v)
{
    const pld_expr_t *e = arg(x, i);
    const char *kw = x->c->info->params[i].name;

    if (!e) {
        if (required)
            perr(x, "requires %s= (%s)", kw, allowed);
        return 0;
    }
    if (!pld_ck_enum_int(x->ck, e, enum_name, v))
        return 0;
    if (*v < 0 || *v >= n) {
        perr(x, "%s must be %s, found %lld", kw, allowed, (long long)*v);
        return 0;
    }
    return 1;
}

/* A compile-time int argument (core_num, chunk sizes, root): 1 and *v when
 * constant, 0 when absent, -1 when not a compile-time int (not reported). */
static int int_arg(pc_t *x, int i, int64_t *v)
{
    const pld_expr_t *e = arg(x, i);
    if (!e)
        return 0;
    if (e->kind == PLD_EX_BOOL)
        return -1;
    return pld_ck_const_int(x->ck, e, v) ? 1 : -1;
}

/* pl.tensor.slice with a provably non-zero origin, passed directly as the
 * operand of a remote op (§2.3): the op would address byte 0 of the window. */
static void no_offset_alias(pc_t *x, int i, const char *role)
{
    const pld_expr_t *e = arg(x, i);
    int64_t v;

    if (!e || e->kind != PLD_EX_CALL || e->op != PLD_OPID_TENSOR_SLICE || e->u.call.nargs < 3)
        return;
    for (int k = 0; k < e->u.call.nargs; k++) {
        const pld_arg_t *a = &e->u.call.args[k];
        if ((a->kw && strcmp(a->kw, "offset") == 0) || (!a->kw && k == 2)) {
            int n = pld_ck_list_len(x->ck, a->value);
            for (int d = 0; d < n; d++) {
                const pld_expr_t *it = pld_ck_list_item(x->ck, a->value, d);
                if (it && pld_ck_const_int(x->ck, it, &v) && v != 0) {
                    perr(x, "%s must not be a slice with a non-zero origin (the remote address starts at the "
                            "window base); pass the offsets to the op instead", role);
                    return;
                }
            }
        }
    }
}

/* ------------------------------------------------------ system ops / windows */

static const pld_type_t *chk_get_comm_ctx(pc_t *x)
{
    const pld_type_t *t = ty(x, 0);
    if (known(t) && t->kind != PLD_TY_DTENSOR)
        perr(x, "expects a DistributedTensor (window-bound); got %s", pld_ck_tystr(x->ck, t));
    return &pld_type_commctx;
}

static const pld_type_t *chk_rank(pc_t *x)
{
    const pld_type_t *t = ty(x, 0);
    if (known(t) && t->kind != PLD_TY_COMMCTX)
        perr(x, "expects a CommCtx (output of pld.system.get_comm_ctx); got %s", pld_ck_tystr(x->ck, t));
    return pld_type_scalar(x->ck->p, PLD_DT_INT32);
}

static const pld_type_t *chk_alloc(pc_t *x)
{
    const pld_expr_t *size = arg(x, 0);
    const pld_expr_t *dt = arg(x, 1);
    pld_dim_t dims[PLD_CK_MAX_RANK];
    int64_t v;

    if (!size)
        return &pld_type_ptr;
    if (pld_ck_list_len(x->ck, size) >= 0) {
        int r = pld_ck_dims_of_list(x->ck, size, dims);
        if (!dt)
            perr(x, "requires dtype= when the first argument is a shape");
        if (r == 0)
            perr(x, "shape must be non-empty");
        for (int i = 0; i < r; i++)
            if (dims[i].kind == PLD_DIM_CONST && dims[i].v <= 0) {
                perr(x, "shape dimensions must all be positive, found dimension %d = %lld", i,
                     (long long)dims[i].v);
                return &pld_type_ptr;
            }
        pld_dtype_t d = dt ? dtype_of(x->ck, dt) : PLD_DT_NONE;
        pld_ck_shape_size(x->ck, x->c->call->span, "pld.alloc_window_buffer", dims, r, d, NULL);
        return &pld_type_ptr;
    }
    if (dt)
        perr(x, "dtype= is only valid when the first argument is a shape; found a byte count with dtype=");
    else if (known(ty(x, 0)) && ty(x, 0)->kind != PLD_TY_SCALAR)
        perr(x, "size must be a byte count or a shape list; got %s", pld_ck_tystr(x->ck, ty(x, 0)));
    else if (pld_ck_const_int(x->ck, size, &v) && v < 0)
        perr(x, "size must be non-negative, found %lld bytes", (long long)v);
    else if ((x->ck->fold_overflow = 0, !pld_ck_const_int(x->ck, size, &v)) && x->ck->fold_overflow)
        perr(x, "size overflows int64 (PyPTO integers are 64-bit)");
    return &pld_type_ptr;
}

static const pld_type_t *chk_window(pc_t *x)
{
    const pld_type_t *bt = ty(x, 0);
    pld_dim_t dims[PLD_CK_MAX_RANK];
    pld_dtype_t dt = dtype_of(x->ck, arg(x, 2));
    int r = -1;
    pld_type_t *t;

    if (known(bt) && bt->kind != PLD_TY_PTR)
        perr(x, "expects a Ptr handle (output of pld.tensor.alloc_window_buffer); got %s", pld_ck_tystr(x->ck, bt));
    if (arg(x, 1)) {
        r = pld_ck_dims_of_list(x->ck, arg(x, 1), dims);
        if (r < 0)
            perr(x, "second argument must be a shape list");
    }
    for (int i = 0; i < r; i++)
        if (dims[i].kind == PLD_DIM_CONST && dims[i].v < 0) {
            perr(x, "shape dimension %d must be non-negative, found %lld", i, (long long)dims[i].v);
            r = -1;
            break;
        }
    if (r < 0 || dt == PLD_DT_NONE)
        return &pld_type_unknown;

    /* the view must fit in the slot when both sizes are static */
    if (arg(x, 0)) {
        int w = pld_ck_window_of(x->ck, arg(x, 0));
        int64_t n = 0, need = -1;
        if (!pld_ck_shape_size(x->ck, x->c->call->span, "pld.window view", dims, r, dt, &need))
            return &pld_type_unknown;
        pld_ck_shape_size(x->ck, x->c->call->span, "pld.window view", dims, r, PLD_DT_NONE, &n);
        if (need >= 0 && w >= 0 && w < x->ck->nwinbufs && x->ck->winbufs[w].bytes >= 0) {
            if (need > x->ck->winbufs[w].bytes)
                perr(x, "view of %lld %s elements needs %lld bytes but window buffer '%s' holds %lld bytes",
                     (long long)n, pld_dtype_name(dt), (long long)need, x->ck->winbufs[w].name,
                     (long long)x->ck->winbufs[w].bytes);
        }
    }

    t = pld_type_new(x->ck->p, PLD_TY_DTENSOR);
    if (!t) {
        x->ck->oom = 1;
        return &pld_type_unknown;
    }
    t->dtype = dt;
    t->rank = r;
    t->shape = dims_dup(x, dims, r);
    t->dir = PLD_DIR_INOUT;
    return t->shape ? t : &pld_type_unknown;
}

/* -------------------------------------------------------------- remote_load */

static const pld_type_t *chk_remote_load(pc_t *x)
{
    const pld_type_t *tt = want_dt(x, 0, "target") > 0 ? ty(x, 0) : NULL;
    int rank = tt ? tt->rank : -1;
    pld_dim_t shp[PLD_CK_MAX_RANK], vld[PLD_CK_MAX_RANK];
    int ns, nv = -1, no;
    pld_type_t *res;

    if (tt && rank == 0) {
        perr(x, "requires at least one dimension on target");
        rank = -1;
    }
    if (tt && pld_dtype_bits(tt->dtype) < 8)
        perr(x, "supports only byte-sized element types; target is %s", pld_dtype_name(tt->dtype));
    if (tt && (tt->layout == PLD_LAYOUT_MX_A || tt->layout == PLD_LAYOUT_MX_B)) /* as PyPTO's remote_load */
        perr(x, "does not support MX-layout (MX_A_ZZ / MX_B_NN) targets");
    no_offset_alias(x, 0, "target");
    want_scalar(x, 1, "peer", " (rank index)");
    no = want_list(x, 2, "offsets", rank, "target tensor");
    ns = want_list(x, 3, "shape", rank, "target tensor");
    if (arg(x, 4))
        nv = want_list(x, 4, "valid_shape", rank, "target tensor");
    if (ns >= 0)
        ns = pld_ck_dims_of_list(x->ck, arg(x, 3), shp);
    if (nv >= 0)
        nv = pld_ck_dims_of_list(x->ck, arg(x, 4), vld);

    for (int d = 0; d < ns && d < PLD_CK_MAX_RANK; d++) {
        int64_t off = 0, ext = 0, dim = 0, s = 0, vv = 0;
        int has_off = no > d && item_const(x, 2, d, &off);
        int has_s = shp[d].kind == PLD_DIM_CONST;
        int has_v = nv > d && vld[d].kind == PLD_DIM_CONST;
        const pld_expr_t *vi = nv > d ? pld_ck_list_item(x->ck, arg(x, 4), d) : NULL;

        s = has_s ? shp[d].v : 0;
        vv = has_v ? vld[d].v : 0;
        if (has_s && s <= 0) {
            perr(x, "shape %d must be positive, found %lld", d, (long long)s);
            break;
        }
        if (has_off && off < 0) {
            perr(x, "offset %d is provably negative (%lld)", d, (long long)off);
            break;
        }
        if (vi && vi->type && vi->type->kind == PLD_TY_SCALAR && pld_dtype_is_float(vi->type->dtype)) {
            perr(x, "valid_shape %d must be an integer scalar, found %s", d, pld_dtype_name(vi->type->dtype));
            break;
        }
        if (has_v && vv < 0) {
            perr(x, "valid_shape %d is provably negative (%lld)", d, (long long)vv);
            break;
        }
        if (has_v && has_s && vv > s) {
            perr(x, "valid_shape %d (%lld) exceeds the window extent %lld", d, (long long)vv, (long long)s);
            break;
        }
        ext = has_v ? vv : s;
        if (has_off && (has_v || has_s) && dimc(tt, d, &dim) && pld_ck_past_end(off, ext, dim)) {
            perr(x, "reads past the end of dimension %d: offset %lld + extent %lld > %lld; pass a smaller "
                    "valid_shape to describe a ragged tail",
                 d, (long long)off, (long long)ext, (long long)dim);
            break;
        }
    }

    if (!tt || ns < 0 || (rank >= 0 && ns != rank) ||
        (x->nerr == 0 && !pld_ck_shape_size(x->ck, x->c->call->span, x->op, shp, ns, tt->dtype, NULL)))
        return &pld_type_unknown;
    res = pld_type_new(x->ck->p, PLD_TY_TILE);
    if (!res) {
        x->ck->oom = 1;
        return &pld_type_unknown;
    }
    res->dtype = tt->dtype;
    res->rank = ns;
    res->shape = dims_dup(x, shp, ns);
    res->valid = nv == ns ? dims_dup(x, vld, nv) : NULL;
    res->mem = PLD_MEM_NONE;
    return res->shape ? res : &pld_type_unknown;
}

/* ------------------------------------------------------------- remote_store */

static int atomic_add_dtype_ok(pld_dtype_t d)
{
    return d == PLD_DT_FP32 || d == PLD_DT_BF16 || d == PLD_DT_FP16 || d == PLD_DT_INT32 ||
           d == PLD_DT_INT16 || d == PLD_DT_INT8;
}

/* The atomic kwarg of put / remote_store against destination dtype dt. */
static void chk_atomic(pc_t *x, int i, pld_dtype_t dt)
{
    int64_t v;
    if (!enum_arg(x, i, "AtomicType", 2, "AtomicType.None_ or AtomicType.Add", 0, &v) || v != 1 ||
        dt == PLD_DT_NONE)
        return;
    if (!atomic_add_dtype_ok(dt))
        perr(x, "atomic=AtomicType.Add requires an FP32, BF16, FP16, INT32, INT16 or INT8 destination, found %s",
             pld_dtype_name(dt));
    else if (dt == PLD_DT_BF16 && !pld_npu_profile_or_default(x->ck->opts.platform)->bf16_atomic_add)
        perr(x, "atomic=AtomicType.Add on BF16 requires the a2a3 platform profile");
}

static const pld_type_t *chk_remote_store(pc_t *x, int tile_form)
{
    const pld_type_t *st = ty(x, 0);
    const pld_type_t *tt = want_dt(x, 1, "target") > 0 ? ty(x, 1) : NULL;
    int src_ok = 0;
    int no;

    if (known(st)) {
        if (tile_form && st->kind != PLD_TY_TILE)
            perr(x, "src_tile must be a Tile; got %s (in a tensor-level kernel call pld.tensor.remote_store instead)",
                 pld_ck_tystr(x->ck, st));
        else if (!tile_form && st->kind == PLD_TY_TILE)
            perr(x, "src must be a Tensor; got %s (push a tile with pld.tile.remote_store)", pld_ck_tystr(x->ck, st));
        else if (!tile_form && st->kind != PLD_TY_TENSOR)
            perr(x, "src must be a plain Tensor; got %s (to push one window buffer into another, use pld.tensor.put)",
                 pld_ck_tystr(x->ck, st));
        else
            src_ok = 1;
    }
    no_offset_alias(x, 1, "target");
    if (tt && tt->rank < 2) {
        perr(x, "target rank must be >= 2 to hold a 2-D push, found rank %d", tt->rank);
        tt = NULL;
    }
    want_scalar(x, 2, "peer", " (rank index)");
    no = want_list(x, 3, "offsets", tt ? tt->rank : -1, "target tensor");

    if (src_ok && tt && st->dtype != tt->dtype)
        perr(x, "src dtype (%s) must match target dtype (%s)", pld_dtype_name(st->dtype), pld_dtype_name(tt->dtype));
    if (src_ok && st->rank < 2) {
        perr(x, "src must be at least 2-D (it is pushed as a 2-D region), found rank %d", st->rank);
        src_ok = 0;
    }
    if (src_ok) {
        for (int d = 0; d + 2 < st->rank; d++) {
            int64_t v;
            if (dimc(st, d, &v) && v != 1) {
                perr(x, "src leading dimension %d must be 1, found %lld", d, (long long)v);
                src_ok = 0;
                break;
            }
        }
    }
    /* offsets and the pushed region */
    if (tt && no == tt->rank) {
        int n = tt->rank;
        for (int d = 0; d < n; d++) {
            int64_t off, ext = 1, dim;
            int has_ext = 1;
            if (!item_const(x, 3, d, &off))
                continue;
            if (off < 0) {
                perr(x, "offsets dimension %d must be non-negative, found %lld", d, (long long)off);
                break;
            }
            if (d >= n - 2) {
                int sd = d - (n - 2) + (src_ok ? st->rank - 2 : 0);
                const pld_dim_t *ed = NULL;
                if (src_ok)
                    ed = (st->kind == PLD_TY_TILE && st->valid) ? &st->valid[sd] : &st->shape[sd];
                has_ext = ed && ed->kind == PLD_DIM_CONST;
                ext = has_ext ? ed->v : 0;
            }
            if (has_ext && dimc(tt, d, &dim) && pld_ck_past_end(off, ext, dim)) {
                perr(x, "push exceeds the peer's target region in dimension %d: offset %lld + extent %lld > %lld", d,
                     (long long)off, (long long)ext, (long long)dim);
                break;
            }
        }
    }
    chk_atomic(x, 4, tt ? tt->dtype : PLD_DT_NONE);
    return &pld_type_none;
}

/* ------------------------------------------------------------------ put/get */

/* The printed IR of a single-stage subregion pld.tile.put/get lists the
 * region after the stage: (dst, peer, src, stage, dst_offsets, src_offsets,
 * shape). A list in the stage2 slot is that form: shift it back into the
 * region parameters (PyPTO's put/get do the same), in the call's binding too. */
static void unshift_region(pc_t *x)
{
    ck_call_t *c = x->c;
    const pld_expr_t *s2 = c->args[4];
    if (s2 && s2->kind == PLD_EX_NONE) { /* stage2=None: absent */
        c->args[4] = NULL;
        c->types[4] = NULL;
        if (c->call->bound)
            c->call->bound[4] = NULL;
        return;
    }
    if (!s2 || (s2->kind != PLD_EX_LIST && s2->kind != PLD_EX_TUPLE && !(s2->type && s2->type->kind == PLD_TY_TUPLE)))
        return;
    if (c->args[7]) {
        perr(x, "stage2 must be a tile; got a list with all three region arguments also given");
        return;
    }
    for (int i = 7; i > 4; i--) {
        c->args[i] = c->args[i - 1];
        c->types[i] = c->types[i - 1];
    }
    c->args[4] = NULL;
    c->types[4] = NULL;
    if (c->call->bound)
        for (int i = 4; i < 8; i++)
            c->call->bound[i] = c->args[i];
}

/* The staging tiles of pld.tile.put/get (PyPTO comm_op_utils.h
 * ValidateStageTile / ValidateStageFitsTransfer, put.cpp): 2-D tiles of dst's
 * dtype, stage2 of stage's shape, each no larger than the flattened transfer
 * [prod(leading dims), last dim] (a smaller stage is walked in chunks). */
static void chk_stage(pc_t *x, pld_dtype_t dtype, const pld_dim_t *xfer, int rank)
{
    const pld_type_t *st[2] = {ty(x, 3), arg(x, 4) ? ty(x, 4) : NULL};
    const char *nm[2] = {"stage", "stage2"};
    for (int s = 0; s < 2; s++) {
        const pld_type_t *t = st[s];
        if (!known(t))
            continue;
        if (t->kind != PLD_TY_TILE) {
            perr(x, "%s must be a TileType, got %s", nm[s], pld_ck_tystr(x->ck, t));
            return;
        }
        if (dtype != PLD_DT_NONE && t->dtype != dtype) {
            perr(x, "%s dtype must match dst dtype, got stage=%s dst=%s", nm[s], pld_dtype_name(t->dtype),
                 pld_dtype_name(dtype));
            return;
        }
        if (t->rank != 2) {
            perr(x, "%s must be a 2D VEC staging tile, got rank %d", nm[s], t->rank);
            return;
        }
    }
    if (known(st[1]) && known(st[0]) && (dim_same(&st[0]->shape[0], &st[1]->shape[0]) == 0 ||
                                         dim_same(&st[0]->shape[1], &st[1]->shape[1]) == 0)) {
        perr(x, "ping/pong staging tiles must have identical shape");
        return;
    }
    int64_t rows = 1, cols = 0, v;
    int rows_static = 1, cols_static = xfer && rank > 0 && xfer[rank - 1].kind == PLD_DIM_CONST;
    for (int d = 0; xfer && d + 1 < rank; d++) {
        if (xfer[d].kind == PLD_DIM_CONST)
            rows *= xfer[d].v;
        else
            rows_static = 0;
    }
    if (cols_static)
        cols = xfer[rank - 1].v;
    for (int s = 0; s < 2 && xfer; s++) {
        if (!known(st[s]))
            continue;
        if (rows_static && dimc(st[s], 0, &v) && v > rows) {
            perr(x, "stage rows %lld must fit within flattened transfer rows %lld (pto-isa auto-chunks a smaller stage)",
                 (long long)v, (long long)rows);
            return;
        }
        if (cols_static && dimc(st[s], 1, &v) && v > cols) {
            perr(x, "stage cols %lld must fit within transfer cols %lld (pto-isa auto-chunks a smaller stage)",
                 (long long)v, (long long)cols);
            return;
        }
    }
}

/* pld.tensor.put/get (tile = 0) and pld.tile.put/get (tile = 1: stage,
 * stage2 before the region, no chunk keywords). */
static const pld_type_t *chk_put_get(pc_t *x, int is_put, int tile)
{
    /* parameter indices */
    const int DST = 0, PEER = 1, SRC = 2, DOFS = tile ? 5 : 3, SOFS = DOFS + 1, SHAPE = DOFS + 2, ATOM = DOFS + 3;
    const int CROWS = tile ? -1 : is_put ? 7 : 6, CCOLS = tile ? -1 : CROWS + 1, PIPE = tile ? -1 : CROWS + 2;
    const pld_type_t *dt = NULL, *sr = NULL;
    const pld_dim_t *xfer = NULL;
    pld_dim_t shp[PLD_CK_MAX_RANK];
    int64_t crows = 0, ccols = 0;
    int nreg, rank = -1, ok = 1;
    pld_buf_t b1, b2;

    if (tile)
        unshift_region(x);

    if (is_put) {
        if (want_dt(x, DST, "dst") > 0)
            dt = ty(x, DST);
        if (known(ty(x, SRC)) && ty(x, SRC)->kind == PLD_TY_TILE)
            perr(x, "src must be a GM tensor; got %s (push a computed value with pld.tensor.remote_store)",
                 pld_ck_tystr(x->ck, ty(x, SRC)));
        else if (want_tensorlike(x, SRC, "src") > 0)
            sr = ty(x, SRC);
        no_offset_alias(x, DST, "dst");
    } else {
        if (want_tensorlike(x, DST, "dst") > 0)
            dt = ty(x, DST);
        if (want_dt(x, SRC, "src") > 0)
            sr = ty(x, SRC);
        no_offset_alias(x, SRC, "src");
    }
    want_scalar(x, PEER, "peer", " (rank index)");

    if (dt && sr) {
        if (dt->dtype != sr->dtype) {
            perr(x, "dst and src must have the same element type, found %s and %s", pld_dtype_name(dt->dtype),
                 pld_dtype_name(sr->dtype));
            ok = 0;
        }
        if (dt->rank == 0 || sr->rank == 0) {
            perr(x, "requires at least one dimension on %s", dt->rank == 0 ? "dst" : "src");
            ok = 0;
        } else if (dt->rank != sr->rank) {
            perr(x, "dst rank (%d) must match src rank (%d)", dt->rank, sr->rank);
            ok = 0;
        }
        rank = dt->rank;
    }
    for (int w = 0; w < 2 && ok; w++) {
        const pld_type_t *t = w ? sr : dt;
        for (int d = 0; t && d < t->rank; d++) {
            int64_t v;
            if (dimc(t, d, &v) && v <= 0) {
                perr(x, "%s shape dimension %d must be positive, found %lld", w ? "src" : "dst", d, (long long)v);
                ok = 0;
                break;
            }
        }
    }

    /* chunking (the tile forms chunk by their stage tile) */
    if (tile)
        crows = ccols = 1;
    else if (arg(x, CROWS) && (int_arg(x, CROWS, &crows) < 0 || crows < 0)) {
        perr(x, "chunk_rows must be a non-negative static int (0 = full)");
        ok = 0;
    }
    if (!tile && arg(x, CCOLS) && (int_arg(x, CCOLS, &ccols) < 0 || ccols < 0)) {
        perr(x, "chunk_cols must be a non-negative static int (0 = full)");
        ok = 0;
    }
    if (!tile && arg(x, PIPE) && arg(x, PIPE)->kind == PLD_EX_BOOL && arg(x, PIPE)->u.bval && ok &&
        (crows <= 0 || ccols <= 0)) {
        perr(x, "pipeline=True requires both chunk_rows > 0 and chunk_cols > 0");
        ok = 0;
    }

    nreg = !!arg(x, DOFS) + !!arg(x, SOFS) + !!arg(x, SHAPE);
    if (nreg != 0 && nreg != 3) {
        perr(x, "dst_offsets, src_offsets and shape must be given together");
        return &pld_type_none;
    }
    if (!ok || rank < 0)
        goto atomic;

    pld_buf_init(&b1);
    pld_buf_init(&b2);
    if (nreg == 0) {
        /* full slice: equal shapes */
        for (int d = 0; d < rank; d++) {
            int s = dim_same(&dt->shape[d], &sr->shape[d]);
            if (s == 0) {
                perr(x, "full-slice dst and src must have the same shape; dimension %d differs (%s vs %s)", d,
                     dim_text(&dt->shape[d], &b1), dim_text(&sr->shape[d], &b2));
                ok = 0;
                break;
            }
        }
        if (ok) {
            int dyn_lead = 0;
            xfer = dt->shape;
            for (int d = 0; d + 1 < rank; d++)
                dyn_lead |= dt->shape[d].kind != PLD_DIM_CONST;
            if (dyn_lead && crows == 0)
                perr(x, "a dynamic leading transfer dimension needs a static chunk_rows to bound the staging tile");
            else if (dt->shape[rank - 1].kind != PLD_DIM_CONST && ccols == 0)
                perr(x, "a dynamic innermost transfer dimension needs a static chunk_cols to bound the staging tile");
        }
    } else {
        int nd = want_list(x, DOFS, "dst_offsets", rank, "dst");
        int ns = want_list(x, SOFS, "src_offsets", rank, "src");
        int nt = want_list(x, SHAPE, "shape", rank, "tensor");
        if (nt == rank && nt > 0 && pld_ck_dims_of_list(x->ck, arg(x, SHAPE), shp) == rank) {
            int dyn_lead = 0, bad = 0;
            xfer = shp;
            for (int d = 0; d < rank && !bad; d++) {
                int64_t e = 0, off, dim;
                int has_e = shp[d].kind == PLD_DIM_CONST;
                e = has_e ? shp[d].v : 0;
                if (d + 1 < rank)
                    dyn_lead |= !has_e;
                if (has_e && e <= 0) {
                    perr(x, "shape dimension %d must be positive, found %lld", d, (long long)e);
                    bad = 1;
                    break;
                }
                for (int w = 0; w < 2 && !bad; w++) {
                    const char *nm = w ? "src" : "dst";
                    const pld_type_t *t = w ? sr : dt;
                    int li = w ? SOFS : DOFS;
                    if ((w ? ns : nd) != rank || !item_const(x, li, d, &off))
                        continue;
                    if (off < 0) {
                        perr(x, "%s_offsets dimension %d must be non-negative, found %lld", nm, d, (long long)off);
                        bad = 1;
                    } else if (has_e && dimc(t, d, &dim) && pld_ck_past_end(off, e, dim)) {
                        perr(x, "%s subregion dimension %d exceeds %s shape: offset %lld + extent %lld > %lld", nm, d,
                             nm, (long long)off, (long long)e, (long long)dim);
                        bad = 1;
                    }
                }
            }
            if (!bad && dyn_lead && crows == 0)
                perr(x, "a dynamic leading transfer dimension needs a static chunk_rows to bound the staging tile");
            else if (!bad && shp[rank - 1].kind != PLD_DIM_CONST && ccols == 0)
                perr(x, "a dynamic innermost transfer dimension needs a static chunk_cols to bound the staging tile");
        }
    }
    pld_buf_fini(&b1);
    pld_buf_fini(&b2);
atomic:
    if (tile)
        chk_stage(x, dt ? dt->dtype : PLD_DT_NONE, xfer, rank);
    if (is_put)
        chk_atomic(x, ATOM, dt ? dt->dtype : PLD_DT_NONE);
    return &pld_type_none;
}

/* ------------------------------------------------------ notify / wait / defer */

/* Static cell offsets of a signal op: list of `rank` items, each in bounds. */
static void chk_cell(pc_t *x, int li, const pld_type_t *sig)
{
    int n = want_list(x, li, "offsets", sig ? sig->rank : -1, sig ? "signal tensor" : "");
    for (int d = 0; sig && d < n; d++) {
        int64_t off, dim;
        const pld_expr_t *it = pld_ck_list_item(x->ck, arg(x, li), d);
        if (it && it->type && it->type->kind == PLD_TY_SCALAR && pld_dtype_is_float(it->type->dtype)) {
            perr(x, "offset %d must be an integer or index scalar, found %s", d, pld_dtype_name(it->type->dtype));
            return;
        }
        if (!item_const(x, li, d, &off))
            continue;
        if (off < 0 || (dimc(sig, d, &dim) && off >= dim)) {
            if (dimc(sig, d, &dim))
                perr(x, "cell offset %d (%lld) is outside dimension %d of the signal (size %lld)", d, (long long)off,
                     d, (long long)dim);
            else
                perr(x, "cell offset %d is provably negative (%lld)", d, (long long)off);
            return;
        }
    }
}

static const pld_type_t *chk_notify(pc_t *x)
{
    const pld_type_t *t = want_dt(x, 0, "target") > 0 ? ty(x, 0) : NULL;
    int64_t v;

    /* pldrun's own rule (PyPTO accepts any dtype): signal cells are INT32 */
    if (t && t->dtype != PLD_DT_INT32)
        perr(x, "signal must be INT32, found %s", pld_dtype_name(t->dtype));
    no_offset_alias(x, 0, "target");
    want_scalar(x, 1, "peer", " (rank index)");
    chk_cell(x, 2, t);
    want_scalar(x, 3, "value", "");
    enum_arg(x, 4, "NotifyOp", 2, "NotifyOp.AtomicAdd or NotifyOp.Set", 1, &v);
    return &pld_type_none;
}

static const pld_type_t *chk_wait(pc_t *x, int deferred)
{
    const pld_type_t *t = want_signal(x, 0, "signal") > 0 ? ty(x, 0) : NULL;
    int64_t v;

    if (t && t->rank == 0) {
        perr(x, "signal rank must be at least 1, found 0");
        t = NULL;
    }
    no_offset_alias(x, 0, "signal");
    chk_cell(x, 1, t);
    if (!deferred) {
        want_scalar(x, 2, "expected", "");
        enum_arg(x, 3, "WaitCmp", 2, "WaitCmp.Eq or WaitCmp.Ge", 1, &v);
        return &pld_type_none;
    }
    /* defer_wait: only in a dedicated single-block waiter (a pl.at(CORE_GROUP)
     * scope, or the InCore function outlined from one) that is not
     * early-resolvable and has no predicate */
    if (x->ck->spmd_depth > 0)
        perr(x, "cannot run inside pl.spmd: a waiter must be single-block");
    if (!x->ck->deferred)
        x->ck->deferred = x->c->call;
    if (x->ck->at_scope) {
        const pld_expr_t *at = x->ck->at_scope;
        for (int i = 0; i < at->u.call.nargs; i++) {
            const pld_arg_t *a = &at->u.call.args[i];
            if (a->kw && strcmp(a->kw, "predicate") == 0)
                perr(x, "cannot run in a waiter scope with predicate=");
            else if (a->kw && strcmp(a->kw, "allow_early_resolve") == 0 && a->value->kind == PLD_EX_BOOL &&
                     a->value->u.bval)
                perr(x, "cannot run in an early-resolvable waiter scope (allow_early_resolve=True)");
        }
    }
    /* defer_wait: direct parameter, integer threshold in [0, INT32_MAX], Ge only */
    if (arg(x, 0)) {
        const pld_expr_t *e = arg(x, 0);
        int slot = e->kind == PLD_EX_NAME ? pld_ck_find_slot(x->ck, e->u.name) : -1;
        if (known(ty(x, 0)) && (e->kind != PLD_EX_NAME || (slot >= 0 && !x->ck->slots[slot].is_param)))
            perr(x, "signal must be a direct DistributedTensor function parameter (slices, views and aliases do "
                    "not carry their base offset)");
    }
    if (want_int_scalar(x, 2, "expected") >= 0 && arg(x, 2) && pld_ck_const_int(x->ck, arg(x, 2), &v) &&
        (v < 0 || v > I32_MAX))
        perr(x, "constant expected must be in [0, INT32_MAX], found %lld", (long long)v);
    if (enum_arg(x, 3, "WaitCmp", 2, "WaitCmp.Eq or WaitCmp.Ge", 1, &v) && v != 1)
        perr(x, "only supports cmp=WaitCmp.Ge, found WaitCmp.%s", enum_member("WaitCmp", v));
    return &pld_type_none;
}

/* -------------------------------------------------------------- collectives */

static const char *rail_name(int ctx)
{
    return ctx == PLD_CTX_HOST ? "HOST" : ctx == PLD_CTX_CHIP ? "CHIP" : "InCore";
}

/* InCore mesh signal [NR, 1] (and, when P is known, NR >= P). */
static void incore_mesh_signal(pc_t *x, const pld_type_t *s)
{
    int64_t v;
    if (s->rank != 2) {
        perr(x, "signal must be 2-D [NR, 1] on the InCore rail, found %s", pld_ck_tystr(x->ck, s));
        return;
    }
    if (dimc(s, 1, &v) && v != 1) {
        perr(x, "signal shape[1] must be 1 (one cell per rank), found %lld; a signal shaped for mode=\"ring\" or "
                "for several lanes cannot be used here",
             (long long)v);
        return;
    }
    if (x->ck->dom_ranks > 0 && dimc(s, 0, &v) && v < x->ck->dom_ranks)
        perr(x, "signal shape[0] (%lld) must be at least the rank count (%d)", (long long)v, x->ck->dom_ranks);
}

/* HOST signal capacity (§3.4). rank1_only: barrier / broadcast /
 * reduce_scatter. lanes: required lane count (exact when `exact`). */
static void host_signal(pc_t *x, const pld_type_t *s, int rank1_only, int64_t lanes, int exact)
{
    int64_t v;
    if (rank1_only && s->rank != 1) {
        perr(x, "signal must be a rank-1 [P] DistributedTensor on the HOST rail, found %s", pld_ck_tystr(x->ck, s));
        return;
    }
    if (s->rank != 1 && s->rank != 2) {
        perr(x, "signal must be rank-1 [world_size] or rank-2 [world_size, lanes] on the HOST rail, found %s",
             pld_ck_tystr(x->ck, s));
        return;
    }
    if (s->rank == 2) {
        if (!dimc(s, 1, &v)) {
            perr(x, "rank-2 signal shape[1] must be a compile-time constant");
            return;
        }
        if (exact ? v != lanes : v < lanes) {
            perr(x, "signal shape[1] (%lld) must %s the required lane count (%lld)", (long long)v,
                 exact ? "equal" : "be at least", (long long)lanes);
            return;
        }
    }
    if (x->ck->dom_ranks > 0 && dimc(s, 0, &v) && v < x->ck->dom_ranks)
        perr(x, "signal shape[0] (%lld) must be at least the participating device count (%d)", (long long)v,
             x->ck->dom_ranks);
}

/* HOST rail: every operand is a window view, and all are different
 * allocations (§3.1, §3.2). skip_same: index pair already reported as the
 * same expression (-1 for none). */
static void host_windows(pc_t *x, const operand_t *ops, int n, int skip_a, int skip_b)
{
    int w[8];
    for (int i = 0; i < n; i++) {
        const pld_expr_t *e = arg(x, ops[i].idx);
        w[i] = -2;
        if (!e || !known(ty(x, ops[i].idx)))
            continue;
        w[i] = pld_ck_window_of(x->ck, e);
        if (w[i] < 0)
            perr(x, "%s must be a window-bound DistributedTensor (a pld.window view of an alloc_window_buffer) "
                    "when called from a HOST orchestrator; got %s",
                 ops[i].role, pld_ck_tystr(x->ck, ty(x, ops[i].idx)));
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
            perr(x, "%s and %s must be different window allocations, but both are views of '%s' (two views of one "
                    "buffer are a cross-process data race)",
                 ops[i].role, ops[j].role, w[i] < x->ck->nwinbufs ? x->ck->winbufs[w[i]].name : "?");
            return;
        }
}

/* core_num: positive compile-time int; returns the value (1 when absent or
 * not static; *is_static tells which). */
static int64_t core_num_arg(pc_t *x, int i, int need_static, int *is_static)
{
    int64_t v = 1;
    int r = int_arg(x, i, &v);
    *is_static = r != -1;
    if (r == -1) {
        if (need_static)
            perr(x, "core_num must be a positive compile-time int");
        return 1;
    }
    if (r == 1 && v <= 0) {
        perr(x, "core_num must be positive, found %lld", (long long)v);
        return 1;
    }
    return r == 1 ? v : 1;
}

static int64_t a2av_blocks(int64_t p, int64_t l)
{
    return l < p ? l : (l / p) * p;
}

static const pld_type_t *result_of(pc_t *x, int i)
{
    const pld_type_t *t = ty(x, i);
    return t ? t : &pld_type_unknown;
}

static const pld_type_t *chk_allreduce(pc_t *x)
{
    const int rail = x->ck->ctx, P = x->ck->dom_ranks;
    const pld_type_t *tt = want_dt(x, 0, "target") > 0 ? ty(x, 0) : NULL;
    const pld_type_t *st = NULL;
    int has_sig = arg(x, 1) != NULL, ring = 0, cn_static;
    int64_t op = 0, cn, v0, v1;

    if (tt && tt->dtype != PLD_DT_FP16 && tt->dtype != PLD_DT_FP32)
        perr(x, "target dtype must be FP16 or FP32, found %s", pld_dtype_name(tt->dtype));
    if (has_sig && want_signal(x, 1, "signal") > 0)
        st = ty(x, 1);
    enum_arg(x, 2, "ReduceOp", 4, "ReduceOp.Sum, Max, Min or Prod", 0, &op);
    if (arg(x, 3)) {
        const char *m = pld_ck_const_str(arg(x, 3));
        if (!m)
            perr(x, "mode must be the string \"mesh\" or \"ring\"");
        else if (strcmp(m, "ring") == 0)
            ring = 1;
        else if (strcmp(m, "mesh") != 0)
            perr(x, "mode must be \"mesh\" or \"ring\", found \"%s\"", m);
    }
    if (!arg(x, 3) && x->c->info->id == PLD_OPID_BUILTIN_ALLREDUCE_RING)
        ring = 1; /* the ring builtin's default mode */
    cn = core_num_arg(x, 4, 1, &cn_static);
    if (x->builtin && ring != (x->c->info->id == PLD_OPID_BUILTIN_ALLREDUCE_RING))
        perr(x, "needs mode=\"%s\" (builtin.tensor.allreduce is the mesh kernel, builtin.tensor.allreduce_ring the ring "
                "kernel)",
             ring ? "mesh" : "ring");

    if (!has_sig) {
        if (rail != PLD_CTX_HOST)
            perr(x, "requires an explicit signal outside a HOST orchestrator");
        else if (x->ck->loop_depth > 0 && !x->builtin)
            perr(x, "without an explicit signal is not supported inside a for/while loop on the HOST rail; pass "
                    "an explicit signal");
        else if (ring)
            perr(x, "mode=\"ring\" requires an explicit signal");
        else if (x->c->call != x->ck->direct)
            perr(x, "without an explicit signal must be a direct assignment, expression statement, or return value "
                    "(the signal is synthesized at statement level); pass an explicit signal or bind the result first");
    }

    if (rail == PLD_CTX_KERNEL) {
        if (cn != 1)
            perr(x, "core_num > 1 is supported only in a HOST orchestrator, found %lld; use an enclosing "
                    "pl.spmd(...) for multi-core work",
                 (long long)cn);
        if (tt && tt->layout != 0)
            perr(x, "target view supports only the ND layout on the InCore rail");
        if (!st)
            return result_of(x, 0);
        if (!ring) {
            incore_mesh_signal(x, st);
        } else if (st->rank != 2) {
            perr(x, "mode=\"ring\" signal must be 2-D [2*(NR-1), NR], found %s", pld_ck_tystr(x->ck, st));
        } else if (dimc(st, 0, &v0) && dimc(st, 1, &v1) && v0 != 2 * (v1 - 1)) {
            perr(x, "mode=\"ring\" signal shape[0] (%lld) must equal 2*(NR-1) = %lld", (long long)v0,
                 (long long)(2 * (v1 - 1)));
        } else if (P > 0 && dimc(st, 1, &v1) && v1 != P) {
            perr(x, "mode=\"ring\" signal shape[1] (%lld) must equal the rank count (%d)", (long long)v1, P);
        }
        return result_of(x, 0);
    }

    /* HOST builtin rail */
    if (cn > aiv_cores(x->ck))
        perr(x, "core_num (%lld) exceeds the AIV core count (%d)", (long long)cn, aiv_cores(x->ck));
    if (ring) {
        if (op != 0 || (tt && tt->dtype != PLD_DT_FP32))
            perr(x, "mode=\"ring\" on the HOST rail supports only op=ReduceOp.Sum with FP32, found ReduceOp.%s "
                    "with %s",
                 enum_member("ReduceOp", op), tt ? pld_dtype_name(tt->dtype) : "?");
        else if (cn != 1)
            perr(x, "mode=\"ring\" on the HOST rail does not support core_num > 1, found %lld", (long long)cn);
        else if (P > 16)
            perr(x, "mode=\"ring\" on the HOST rail requires 16 or fewer ranks, found %d", P);
        else if (tt && pld_type_static_numel(tt) == -1)
            perr(x, "mode=\"ring\" on the HOST rail requires a statically-known target shape, found %s",
                 pld_ck_tystr(x->ck, tt));
        else if (tt && P > 0 && pld_type_static_numel(tt) % P != 0)
            perr(x, "mode=\"ring\" target element count (%lld) must be an exact multiple of the rank count (%d)",
                 (long long)pld_type_static_numel(tt), P);
        else if (st && st->rank != 2)
            perr(x, "mode=\"ring\" signal must be rank-2 [2*(NR-1)+1, NR] on the HOST rail, found %s",
                 pld_ck_tystr(x->ck, st));
        else if (st && dimc(st, 1, &v1) && P > 0 && v1 != P)
            perr(x, "mode=\"ring\" signal shape[1] (%lld) must equal the participating device count (%d)",
                 (long long)v1, P);
        else if (st && dimc(st, 1, &v1) && v1 > 16)
            perr(x, "mode=\"ring\" signal shape[1] (%lld) must be at most 16", (long long)v1);
        else if (st && dimc(st, 1, &v1) && dimc(st, 0, &v0) && v0 != 2 * (v1 - 1) + 1)
            perr(x, "mode=\"ring\" signal shape[0] (%lld) must equal 2*(NR-1)+1 = %lld on the HOST rail",
                 (long long)v0, (long long)(2 * (v1 - 1) + 1));
    } else if (st) {
        if (st->rank == 1 && cn > 1)
            perr(x, "a rank-1 signal is valid only with core_num == 1, found core_num %lld; use a [P, lanes] signal",
                 (long long)cn);
        else
            host_signal(x, st, 0, cn, 0);
    }
    {
        static const operand_t ops[] = {{0, "target"}, {1, "signal"}};
        host_windows(x, ops, has_sig ? 2 : 1, -1, -1);
    }
    return result_of(x, 0);
}

/* barrier / broadcast / reduce_scatter */
static const pld_type_t *chk_simple_coll(pc_t *x, pld_op_id_t id)
{
    const int rail = x->ck->ctx, P = x->ck->dom_ranks;
    const int sig_i = id == PLD_OPID_PLD_BARRIER ? 0 : 1;
    const pld_type_t *tt = NULL, *st = NULL;
    int64_t v;

    if (id != PLD_OPID_PLD_BARRIER && want_dt(x, 0, "target") > 0)
        tt = ty(x, 0);
    if (want_signal(x, sig_i, "signal") > 0)
        st = ty(x, sig_i);

    if (id == PLD_OPID_PLD_BROADCAST && arg(x, 2) && int_arg(x, 2, &v) == 1) {
        if (v < 0)
            perr(x, "root rank must be non-negative, found %lld", (long long)v);
        else if (P > 0 && v >= P)
            perr(x, "root (%lld) must be a valid rank in [0, %d)", (long long)v, P);
    }
    if (id == PLD_OPID_PLD_REDUCE_SCATTER) {
        if (enum_arg(x, 2, "ReduceOp", 4, "ReduceOp.Sum, Max, Min or Prod", 0, &v) && v != 0)
            perr(x, "op must be ReduceOp.Sum, found ReduceOp.%s (%lld); Max / Min / Prod are not implemented",
                 enum_member("ReduceOp", v), (long long)v);
        if (tt && tt->rank != 2) {
            perr(x, "target must be 2-D [NR, SIZE], found %s", pld_ck_tystr(x->ck, tt));
            tt = NULL;
        } else if (tt && P > 0 && dimc(tt, 0, &v) && v < P) {
            perr(x, "target shape[0] (%lld) must be at least the rank count (%d)", (long long)v, P);
        }
    }

    if (rail == PLD_CTX_KERNEL) {
        if (st)
            incore_mesh_signal(x, st);
        if (id == PLD_OPID_PLD_BROADCAST && tt && pld_type_static_numel(tt) == -1)
            perr(x, "target must have a static shape on the InCore rail, found %s", pld_ck_tystr(x->ck, tt));
    } else {
        if (tt && tt->dtype != PLD_DT_FP32)
            perr(x, "supports only FP32 on the HOST rail, found %s", pld_dtype_name(tt->dtype));
        if (st)
            host_signal(x, st, 1, 1, 1);
        if (id == PLD_OPID_PLD_BARRIER) {
            static const operand_t ops[] = {{0, "signal"}};
            host_windows(x, ops, 1, -1, -1);
        } else {
            static const operand_t ops[] = {{0, "target"}, {1, "signal"}};
            host_windows(x, ops, 2, -1, -1);
        }
    }
    return result_of(x, 0);
}

/* allgather / all_to_all */
static const pld_type_t *chk_gather(pc_t *x, int is_a2a)
{
    const int rail = x->ck->ctx;
    const pld_type_t *it = NULL, *tt = NULL, *st = NULL;
    int same = same_expr(arg(x, 0), arg(x, 1));
    int64_t v, w;
    pld_buf_t b1, b2;

    if (same)
        perr(x, "input and target must be different buffers, but the same expression was passed for both");
    if (want_tensorlike(x, 0, "input") > 0)
        it = ty(x, 0);
    if (want_dt(x, 1, "target") > 0)
        tt = ty(x, 1);
    if (want_signal(x, 2, "signal") > 0)
        st = ty(x, 2);
    if (it && it->rank != 2) {
        perr(x, "input must be 2-D %s, found %s", is_a2a ? "[NR, SIZE]" : "[1, SIZE]", pld_ck_tystr(x->ck, it));
        it = NULL;
    }
    if (tt && tt->rank != 2) {
        perr(x, "target must be 2-D [NR, SIZE], found %s", pld_ck_tystr(x->ck, tt));
        tt = NULL;
    }
    if (it && !is_a2a && dimc(it, 0, &v) && v != 1)
        perr(x, "input must be [1, SIZE] (this rank's single chunk), found %s", pld_ck_tystr(x->ck, it));
    if (it && tt) {
        pld_buf_init(&b1);
        pld_buf_init(&b2);
        if (it->dtype != tt->dtype)
            perr(x, "target dtype (%s) must match input dtype (%s)", pld_dtype_name(tt->dtype),
                 pld_dtype_name(it->dtype));
        else if (is_a2a && dimc(it, 0, &v) && dimc(tt, 0, &w) && v != w)
            perr(x, "target shape must equal input shape; dimension 0 differs (%lld vs %lld)", (long long)w,
                 (long long)v);
        else if (dim_same(&it->shape[1], &tt->shape[1]) == 0)
            perr(x, "target SIZE (%s) must equal input SIZE (%s)", dim_text(&tt->shape[1], &b1),
                 dim_text(&it->shape[1], &b2));
        pld_buf_fini(&b1);
        pld_buf_fini(&b2);
    }
    if (st) {
        if (st->rank != 1 && st->rank != 2) {
            perr(x, "signal must be [NR] or [NR, 1], found %s", pld_ck_tystr(x->ck, st));
            st = NULL;
        } else if (st->rank == 2 && dimc(st, 1, &v) && v != 1) {
            perr(x, "signal second dimension must be 1, found %lld", (long long)v);
            st = NULL;
        } else if (dimc(st, 0, &v) && dimc(is_a2a ? it : tt, 0, &w) && v != w) {
            perr(x, "signal dim 0 (%lld) must equal %s dim 0 (%lld)", (long long)v, is_a2a ? "input" : "target",
                 (long long)w);
            st = NULL;
        }
    }

    if (rail == PLD_CTX_KERNEL) {
        if (known(ty(x, 0)) && ty(x, 0)->kind != PLD_TY_TENSOR && !same)
            perr(x, "input must be a plain Tensor on the InCore path, found %s", pld_ck_tystr(x->ck, ty(x, 0)));
        if (st)
            incore_mesh_signal(x, st);
    } else {
        static const operand_t ops[] = {{0, "input"}, {1, "target"}, {2, "signal"}};
        if (tt && tt->dtype != PLD_DT_FP32)
            perr(x, "supports only FP32 on the HOST rail, found %s", pld_dtype_name(tt->dtype));
        if (st)
            host_signal(x, st, 0, 1, 1);
        host_windows(x, ops, 3, same ? 0 : -1, same ? 1 : -1);
    }
    return result_of(x, 1);
}

/* send_counts / recv_counts of all_to_all_v against NR (nr < 0: unknown). */
static void a2av_counts(pc_t *x, int i, const char *role, int recv, int64_t nr)
{
    const pld_type_t *t;
    int64_t v;

    if ((recv ? want_dt(x, i, role) : want_tensorlike(x, i, role)) <= 0)
        return;
    t = ty(x, i);
    if (t->dtype != PLD_DT_INT32) {
        perr(x, "%s must have INT32 element type, found %s", role, pld_dtype_name(t->dtype));
        return;
    }
    if (recv ? t->rank != 2 : (t->rank != 1 && t->rank != 2)) {
        perr(x, "%s must be %s, found %s", role, recv ? "2-D [NR, 1]" : "1-D [NR] or 2-D [NR, 1]", pld_ck_tystr(x->ck, t));
        return;
    }
    if (t->rank == 2 && dimc(t, 1, &v) && v != 1) {
        perr(x, "%s second dimension must be 1, found %lld", role, (long long)v);
        return;
    }
    if (!dimc(t, 0, &v)) {
        perr(x, "%s dim 0 (NR) must be a compile-time constant, found %s", role, pld_ck_tystr(x->ck, t));
        return;
    }
    if (nr > 0 && v != nr)
        perr(x, "%s dim 0 (%lld) must equal signal dim 0 (%lld)", role, (long long)v, (long long)nr);
}

/* A packed, fully valid ND operand (seed 004). */
static void a2av_packed(pc_t *x, const pld_type_t *t, const char *role)
{
    if (t->layout != 0) {
        perr(x, "%s must use the ND layout (a packed row-major view)", role);
        return;
    }
    if (t->has_stride) {
        perr(x, "%s must be a packed row-major view without explicit strides", role);
        return;
    }
    for (int d = 0; t->valid && d < t->rank; d++)
        if (dim_same(&t->valid[d], &t->shape[d]) == 0) {
            perr(x, "%s valid_shape must cover the whole shape (dimension %d is narrower)", role, d);
            return;
        }
}

static const pld_type_t *chk_a2av(pc_t *x)
{
    const int rail = x->ck->ctx, P = x->ck->dom_ranks;
    const pld_type_t *it = NULL, *tt = NULL, *st = NULL;
    int same = same_expr(arg(x, 0), arg(x, 1)), cn_static;
    int64_t nr = -1, rows = -1, v, w, cn;
    pld_buf_t b1, b2;

    if (same)
        perr(x, "input and target must be different buffers, but the same expression was passed for both");
    if (want_tensorlike(x, 0, "input") > 0)
        it = ty(x, 0);
    if (want_dt(x, 1, "target") > 0)
        tt = ty(x, 1);
    if (want_signal(x, 2, "signal") > 0)
        st = ty(x, 2);
    if (it && it->rank != 2) {
        perr(x, "input must be 2-D [NR*MAX_RECV, SIZE], found %s", pld_ck_tystr(x->ck, it));
        it = NULL;
    }
    if (tt && tt->rank != 2) {
        perr(x, "target must be 2-D [NR*MAX_RECV, SIZE], found %s", pld_ck_tystr(x->ck, tt));
        tt = NULL;
    }
    if (tt && !dimc(tt, 0, &rows)) {
        perr(x, "target dim 0 (NR*MAX_RECV) must be a compile-time constant, found %s", pld_ck_tystr(x->ck, tt));
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
            perr(x, "target dtype (%s) must match input dtype (%s)", pld_dtype_name(tt->dtype),
                 pld_dtype_name(it->dtype));
        else if (rows >= 0 && dimc(it, 0, &v) && v != rows)
            perr(x, "target first dimension (%lld) must equal input first dimension (%lld)", (long long)rows,
                 (long long)v);
        else if (dim_same(&it->shape[1], &tt->shape[1]) == 0)
            perr(x, "target SIZE (%s) must equal input SIZE (%s)", dim_text(&tt->shape[1], &b1),
                 dim_text(&it->shape[1], &b2));
        pld_buf_fini(&b1);
        pld_buf_fini(&b2);
    }
    if (st) {
        if (st->rank != 2) {
            perr(x, "signal must be 2-D [NR, 1], found %s", pld_ck_tystr(x->ck, st));
            st = NULL;
        } else if (!dimc(st, 0, &nr) || nr <= 0) {
            perr(x, "signal dim 0 (NR) must be a positive compile-time constant, found %s", pld_ck_tystr(x->ck, st));
            st = NULL;
            nr = -1;
        } else if (rows >= 0 && rows % nr != 0) {
            perr(x, "signal dim 0 (%lld) must divide target dim 0 (%lld)", (long long)nr, (long long)rows);
            nr = -1; /* the counts are not compared against a wrong NR */
        }
    }
    a2av_counts(x, 3, "send_counts", 0, nr);
    a2av_counts(x, 4, "recv_counts", 1, nr);
    /* the CHIP rail's core_num, dtype and capacity rules are
     * LowerL2TensorCollectives' (src/parser/pld_lower.c), which runs next */
    cn = core_num_arg(x, 5, rail == PLD_CTX_KERNEL, &cn_static);
    if (rail != PLD_CTX_CHIP && cn_static && cn > I32_MAX) {
        perr(x, "core_num must be in [1, INT32_MAX], found %lld", (long long)cn);
        cn = 1;
    }

    if (rail == PLD_CTX_KERNEL) {
        if (st)
            incore_mesh_signal(x, st);
        if (cn != 1)
            perr(x, "core_num must be 1 on the InCore rail, found %lld; multi-block all_to_all_v runs on the CHIP "
                    "rail (write the call in a CHIP orchestration body)",
                 (long long)cn);
        return result_of(x, 1);
    }
    if (rail == PLD_CTX_CHIP) {
        if (st && P > 0 && nr != P)
            perr(x, "signal dim 0 (%lld) must equal the rank count (%d) on the CHIP rail", (long long)nr, P);
        return result_of(x, 1);
    }
    if (tt && tt->dtype != PLD_DT_FP32 && tt->dtype != PLD_DT_INT8)
        perr(x, "supports only FP32 or INT8 on the %s rail, found %s", rail_name(rail), pld_dtype_name(tt->dtype));

    /* HOST builtin rail (a builtin dispatch sits in the lowering's per-device
     * loop: the loop rule was applied to the source collective) */
    if (x->ck->loop_depth > 0 && !x->builtin)
        perr(x, "is not supported inside a for/while loop in a HOST orchestrator; call it once, outside the loop");
    if (st) {
        if (P > 0 && nr < P)
            perr(x, "signal shape[0] (%lld) must be at least the participating device count (%d)", (long long)nr, P);
        if (P > 0 && cn_static) {
            int64_t b = a2av_blocks(P, cn);
            if (dimc(st, 1, &w) && w < b)
                perr(x, "signal shape[1] (%lld) must be at least the admitted block count %lld (core_num %lld "
                        "folded over %d ranks)",
                     (long long)w, (long long)b, (long long)cn, P);
            else if (b > aiv_cores(x->ck))
                perr(x, "admitted block count %lld exceeds the AIV core count (%d)", (long long)b, aiv_cores(x->ck));
        }
    }
    {
        static const operand_t ops[] = {
            {0, "input"}, {1, "target"}, {2, "signal"}, {3, "send_counts"}, {4, "recv_counts"}};
        host_windows(x, ops, 5, same ? 0 : -1, same ? 1 : -1);
    }
    return result_of(x, 1);
}

static const pld_type_t *chk_collective(pc_t *x, pld_op_id_t id)
{
    if (id == PLD_OPID_PLD_INDEXED_ALL_TO_ALL_V) {
        perr(x, "is not supported by this simulator (its row-selection contract is not specified)");
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

/* ------------------------------------------------------------------- entry */

const pld_type_t *pld_ck_pld_call(pld_ck_t *ck, ck_call_t *c)
{
    pc_t x = {ck, c, c->info->name, 0, 0};
    pld_op_id_t id = c->info->id;

    switch (id) {
    case PLD_OPID_PLD_WORLD_SIZE:
        return pld_type_scalar(ck->p, PLD_DT_INT64);
    case PLD_OPID_PLD_GET_COMM_CTX:
        return chk_get_comm_ctx(&x);
    case PLD_OPID_PLD_RANK:
    case PLD_OPID_PLD_NRANKS:
        return chk_rank(&x);
    case PLD_OPID_PLD_ALLOC_WINDOW_BUFFER:
        return chk_alloc(&x);
    case PLD_OPID_PLD_WINDOW:
        return chk_window(&x);
    case PLD_OPID_PLD_REMOTE_LOAD:
        return chk_remote_load(&x);
    case PLD_OPID_PLD_TILE_REMOTE_STORE:
        return chk_remote_store(&x, 1);
    case PLD_OPID_PLD_TENSOR_REMOTE_STORE:
        return chk_remote_store(&x, 0);
    case PLD_OPID_PLD_PUT:
    case PLD_OPID_PLD_TILE_PUT:
        return chk_put_get(&x, 1, id == PLD_OPID_PLD_TILE_PUT);
    case PLD_OPID_PLD_GET:
    case PLD_OPID_PLD_TILE_GET:
        return chk_put_get(&x, 0, id == PLD_OPID_PLD_TILE_GET);
    case PLD_OPID_PLD_NOTIFY:
        return chk_notify(&x);
    case PLD_OPID_PLD_WAIT:
        return chk_wait(&x, 0);
    case PLD_OPID_PLD_DEFER_WAIT:
        return chk_wait(&x, 1);
    case PLD_OPID_PLD_ALLREDUCE:
    case PLD_OPID_PLD_BARRIER:
    case PLD_OPID_PLD_BROADCAST:
    case PLD_OPID_PLD_REDUCE_SCATTER:
    case PLD_OPID_PLD_ALLGATHER:
    case PLD_OPID_PLD_ALL_TO_ALL:
    case PLD_OPID_PLD_ALL_TO_ALL_V:
    case PLD_OPID_PLD_INDEXED_ALL_TO_ALL_V:
        return chk_collective(&x, id);
    case PLD_OPID_BUILTIN_ALLREDUCE:
    case PLD_OPID_BUILTIN_ALLREDUCE_RING:
    case PLD_OPID_BUILTIN_BARRIER:
    case PLD_OPID_BUILTIN_BROADCAST:
    case PLD_OPID_BUILTIN_REDUCE_SCATTER:
    case PLD_OPID_BUILTIN_ALLGATHER:
    case PLD_OPID_BUILTIN_ALL_TO_ALL:
    case PLD_OPID_BUILTIN_ALL_TO_ALL_V:
        x.builtin = 1;
        return chk_collective(&x, (pld_op_id_t)pld_op_coll_kind(id));
    default:
        return &pld_type_unknown;
    }
}

/* ------------------------------------------------------------- provenance */

int pld_ck_window_slice_of(pld_ck_t *ck, const pld_expr_t *e)
{
    if (!e)
        return -1;
    if (e->kind == PLD_EX_SUBSCRIPT)
        return pld_ck_window_of(ck, e->u.sub.obj);
    if (e->kind == PLD_EX_CALL && e->op == PLD_OPID_TENSOR_SLICE && e->u.call.nargs > 0 && !e->u.call.args[0].kw)
        return pld_ck_window_of(ck, e->u.call.args[0].value);
    if (e->kind == PLD_EX_NAME) {
        int s = pld_ck_find_slot(ck, e->u.name);
        return s >= 0 ? ck->slots[s].slice_of : -1;
    }
    return -1;
}

/* Argument `idx` (by position, or by the parameter's keyword) of a call. */
static const pld_expr_t *call_arg(const pld_expr_t *call, const pld_op_info_t *info, int idx)
{
    int pos = 0;
    for (int i = 0; i < call->u.call.nargs; i++) {
        const pld_arg_t *a = &call->u.call.args[i];
        if (!a->kw) {
            if (pos++ == idx)
                return a->value;
        } else if (idx < info->nparams && strcmp(a->kw, info->params[idx].name) == 0) {
            return a->value;
        }
    }
    return NULL;
}

int pld_ck_window_of(pld_ck_t *ck, const pld_expr_t *e)
{
    for (int depth = 0; e && depth < 64; depth++) {
        if (e->kind == PLD_EX_NAME) {
            int s = pld_ck_find_slot(ck, e->u.name);
            return s >= 0 ? ck->slots[s].winbuf : -1;
        }
        if (e->kind != PLD_EX_CALL)
            return -1;
        {
            int id = e->op;
            int idx;
            if (id < 0) {
                char name[128];
                if (!pld_ast_dotted(e->u.call.fn, name, sizeof name))
                    return -1;
                id = pld_op_lookup(name);
                if (id < 0)
                    return -1;
            }
            switch (id) {
            case PLD_OPID_PLD_WINDOW:
            case PLD_OPID_PLD_ALLREDUCE:
                idx = 0;
                break;
            case PLD_OPID_PLD_ALLGATHER:
            case PLD_OPID_PLD_ALL_TO_ALL:
            case PLD_OPID_PLD_ALL_TO_ALL_V:
                idx = 1;
                break;
            default:
                return -1;
            }
            e = call_arg(e, pld_op_info((pld_op_id_t)id), idx);
        }
    }
    return -1;
}
