/* pld_check_pld.c - the static rules of the pld.* ops (docs/pld_semantics.md
 * §2 (e) tables; seed 000) and HOST window provenance; the collectives' rules
 * are in pld_check_coll.c.
 *
 * The checker core binds every call of a PLD_OPID_PLD_* op (arity, keywords,
 * level masks), checks each argument and then hands the call to
 * pld_ck_pld_call(), which applies every rule that can be decided from the text:
 * operand kinds, dtypes, ranks, provable offsets and extents, enum ranges, the
 * per-rail rules of the collectives (pld_check_coll.c: InCore composite, CHIP
 * builtin, HOST builtin) and the HOST-rail window rules. Anything that
 * depends on the rank count P is checked only when P is known and every comm
 * domain spans the world (ck->dom_ranks > 0; a program dispatching to device
 * subsets has smaller domains, whose sizes the checker does not infer).
 *
 * Every diagnostic points at the call and starts with the op's name. */
#include "pld_check_int.h"

#include <stdarg.h>
#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------------------ helpers */

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void pld_ck_perr(ck_pc_t *x, const char *fmt, ...)
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

/* Static value of item k of the list argument i; 1 when known. */
static int item_const(const ck_pc_t *x, int i, int k, int64_t *v)
{
    const pld_expr_t *e = ck_arg(x, i) ? pld_ck_list_item(x->ck, ck_arg(x, i), k) : NULL;
    return e && pld_ck_const_int(x->ck, e, v);
}

const char *pld_ck_dim_text(const pld_dim_t *d, pld_buf_t *b)
{
    pld_buf_reset(b);
    pld_dim_print(d, b);
    return pld_buf_str(b);
}

/* 1 when both dims are structurally equal, 0 when provably or structurally
 * different (two constants, or two different named dims), -1 unknown. */
int pld_ck_dim_same(const pld_dim_t *a, const pld_dim_t *b)
{
    if (a->kind == PLD_DIM_CONST && b->kind == PLD_DIM_CONST)
        return a->v == b->v;
    if (a->kind == PLD_DIM_SYM && b->kind == PLD_DIM_SYM)
        return a->sym == b->sym || (a->sym && b->sym && strcmp(a->sym, b->sym) == 0);
    return -1;
}

/* 1 when two argument expressions are written identically. */
int pld_ck_same_expr(const pld_expr_t *a, const pld_expr_t *b)
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

const char *pld_ck_enum_value_name(const char *enum_name, int64_t v)
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
static const pld_dim_t *dims_dup(ck_pc_t *x, const pld_dim_t *d, int n)
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

/* ---- operand kinds: each returns 1 when the operand has the wanted kind, 0
 * when it is absent or its type is unknown (skip dependent checks), -1 when an
 * error was reported. */

int pld_ck_want_dt(ck_pc_t *x, int i, const char *role)
{
    const pld_type_t *t = ck_ty(x, i);
    if (!ck_known(t))
        return 0;
    if (t->kind == PLD_TY_DTENSOR)
        return 1;
    pld_ck_perr(x, "expects a DistributedTensor %s (window-bound); got %s", role, pld_ck_tystr(x->ck, t));
    return -1;
}

int pld_ck_want_tensorlike(ck_pc_t *x, int i, const char *role)
{
    const pld_type_t *t = ck_ty(x, i);
    if (!ck_known(t))
        return 0;
    if (pld_type_is_tensorlike(t))
        return 1;
    pld_ck_perr(x, "%s must be a Tensor or DistributedTensor; got %s", role, pld_ck_tystr(x->ck, t));
    return -1;
}

static int want_scalar(ck_pc_t *x, int i, const char *role, const char *what)
{
    const pld_type_t *t = ck_ty(x, i);
    if (!ck_known(t))
        return 0;
    if (t->kind == PLD_TY_SCALAR)
        return 1;
    pld_ck_perr(x, "%s must be a scalar%s; got %s", role, what, pld_ck_tystr(x->ck, t));
    return -1;
}

static int want_int_scalar(ck_pc_t *x, int i, const char *role)
{
    const pld_type_t *t = ck_ty(x, i);
    int r = want_scalar(x, i, role, "");
    if (r > 0 && t->dtype != PLD_DT_NONE && !pld_dtype_is_int(t->dtype)) {
        pld_ck_perr(x, "%s must be an integer or index scalar, found %s", role, pld_dtype_name(t->dtype));
        return -1;
    }
    return r;
}

/* A signal window: DistributedTensor of INT32. */
int pld_ck_want_signal(ck_pc_t *x, int i, const char *role)
{
    int r = pld_ck_want_dt(x, i, role);
    if (r > 0 && ck_ty(x, i)->dtype != PLD_DT_INT32) {
        pld_ck_perr(x, "%s must be INT32, found %s", role, pld_dtype_name(ck_ty(x, i)->dtype));
        return -1;
    }
    return r;
}

/* A list argument of `want` items (want < 0: any length). Returns its length,
 * or -1 when absent, not a list (reported) or of the wrong length (reported). */
static int want_list(ck_pc_t *x, int i, const char *role, int want, const char *against)
{
    const pld_expr_t *e = ck_arg(x, i);
    int n;

    if (!e)
        return -1;
    n = pld_ck_list_len(x->ck, e);
    if (n < 0) {
        if (ck_known(ck_ty(x, i)))
            pld_ck_perr(x, "%s must be a list of scalars; got %s", role, pld_ck_tystr(x->ck, ck_ty(x, i)));
        return -1;
    }
    if (want >= 0 && n != want) {
        pld_ck_perr(x, "%s rank (%d) must match %s rank (%d)", role, n, against, want);
        return -1;
    }
    return n;
}

/* Enum argument i; returns 1 and *v when known. Reports values outside
 * [0, n). `required` reports a missing argument. */
int pld_ck_enum_arg(ck_pc_t *x, int i, const char *enum_name, int n, const char *allowed, int required,
                       int64_t *v)
{
    const pld_expr_t *e = ck_arg(x, i);
    const char *kw = x->c->info->params[i].name;

    if (!e) {
        if (required)
            pld_ck_perr(x, "requires %s= (%s)", kw, allowed);
        return 0;
    }
    if (!pld_ck_enum_int(x->ck, e, enum_name, v))
        return 0;
    if (*v < 0 || *v >= n) {
        pld_ck_perr(x, "%s must be %s, found %lld", kw, allowed, (long long)*v);
        return 0;
    }
    return 1;
}

/* A compile-time int argument (core_num, chunk sizes, root): 1 and *v when
 * constant, 0 when absent, -1 when not a compile-time int (not reported). */
int pld_ck_int_arg(ck_pc_t *x, int i, int64_t *v)
{
    const pld_expr_t *e = ck_arg(x, i);
    if (!e)
        return 0;
    if (e->kind == PLD_EX_BOOL)
        return -1;
    return pld_ck_const_int(x->ck, e, v) ? 1 : -1;
}

/* pl.tensor.slice with a provably non-zero origin, passed directly as the
 * operand of a remote op (§2.3): the op would address byte 0 of the window. */
static void no_offset_alias(ck_pc_t *x, int i, const char *role)
{
    const pld_expr_t *e = ck_arg(x, i);
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
                    pld_ck_perr(x, "%s must not be a slice with a non-zero origin (the remote address starts at the "
                                   "window base); pass the offsets to the op instead", role);
                    return;
                }
            }
        }
    }
}

/* ------------------------------------------------------ system ops / windows */

static const pld_type_t *chk_get_comm_ctx(ck_pc_t *x)
{
    const pld_type_t *t = ck_ty(x, 0);
    if (ck_known(t) && t->kind != PLD_TY_DTENSOR)
        pld_ck_perr(x, "expects a DistributedTensor (window-bound); got %s", pld_ck_tystr(x->ck, t));
    return &pld_type_commctx;
}

static const pld_type_t *chk_rank(ck_pc_t *x)
{
    const pld_type_t *t = ck_ty(x, 0);
    if (ck_known(t) && t->kind != PLD_TY_COMMCTX)
        pld_ck_perr(x, "expects a CommCtx (output of pld.system.get_comm_ctx); got %s", pld_ck_tystr(x->ck, t));
    return pld_type_scalar(x->ck->p, PLD_DT_INT32);
}

static const pld_type_t *chk_alloc(ck_pc_t *x)
{
    const pld_expr_t *size = ck_arg(x, 0);
    const pld_expr_t *dt = ck_arg(x, 1);
    pld_dim_t dims[PLD_CK_MAX_RANK];
    int64_t v;

    if (!size)
        return &pld_type_ptr;
    if (pld_ck_list_len(x->ck, size) >= 0) {
        int r = pld_ck_dims_of_list(x->ck, size, dims);
        if (!dt)
            pld_ck_perr(x, "requires dtype= when the first argument is a shape");
        if (r == 0)
            pld_ck_perr(x, "shape must be non-empty");
        for (int i = 0; i < r; i++)
            if (dims[i].kind == PLD_DIM_CONST && dims[i].v <= 0) {
                pld_ck_perr(x, "shape dimensions must all be positive, found dimension %d = %lld", i,
                            (long long)dims[i].v);
                return &pld_type_ptr;
            }
        pld_dtype_t d = dt ? dtype_of(x->ck, dt) : PLD_DT_NONE;
        pld_ck_shape_size(x->ck, x->c->call->span, "pld.alloc_window_buffer", dims, r, d, NULL);
        return &pld_type_ptr;
    }
    if (dt)
        pld_ck_perr(x, "dtype= is only valid when the first argument is a shape; found a byte count with dtype=");
    else if (ck_known(ck_ty(x, 0)) && ck_ty(x, 0)->kind != PLD_TY_SCALAR)
        pld_ck_perr(x, "size must be a byte count or a shape list; got %s", pld_ck_tystr(x->ck, ck_ty(x, 0)));
    else if (pld_ck_const_int(x->ck, size, &v) && v < 0)
        pld_ck_perr(x, "size must be non-negative, found %lld bytes", (long long)v);
    else if ((x->ck->fold_overflow = 0, !pld_ck_const_int(x->ck, size, &v)) && x->ck->fold_overflow)
        pld_ck_perr(x, "size overflows int64 (PyPTO integers are 64-bit)");
    return &pld_type_ptr;
}

static const pld_type_t *chk_window(ck_pc_t *x)
{
    const pld_type_t *bt = ck_ty(x, 0);
    pld_dim_t dims[PLD_CK_MAX_RANK];
    pld_dtype_t dt = dtype_of(x->ck, ck_arg(x, 2));
    int r = -1;
    pld_type_t *t;

    if (ck_known(bt) && bt->kind != PLD_TY_PTR)
        pld_ck_perr(x, "expects a Ptr handle (output of pld.tensor.alloc_window_buffer); got %s", pld_ck_tystr(x->ck, bt));
    if (ck_arg(x, 1)) {
        r = pld_ck_dims_of_list(x->ck, ck_arg(x, 1), dims);
        if (r < 0)
            pld_ck_perr(x, "second argument must be a shape list");
    }
    for (int i = 0; i < r; i++)
        if (dims[i].kind == PLD_DIM_CONST && dims[i].v < 0) {
            pld_ck_perr(x, "shape dimension %d must be non-negative, found %lld", i, (long long)dims[i].v);
            r = -1;
            break;
        }
    if (r < 0 || dt == PLD_DT_NONE)
        return &pld_type_unknown;

    /* the view must fit in the slot when both sizes are static */
    if (ck_arg(x, 0)) {
        int w = pld_ck_window_of(x->ck, ck_arg(x, 0));
        int64_t n = 0, need = -1;
        if (!pld_ck_shape_size(x->ck, x->c->call->span, "pld.window view", dims, r, dt, &need))
            return &pld_type_unknown;
        pld_ck_shape_size(x->ck, x->c->call->span, "pld.window view", dims, r, PLD_DT_NONE, &n);
        if (need >= 0 && w >= 0 && w < x->ck->nwinbufs && x->ck->winbufs[w].bytes >= 0) {
            if (need > x->ck->winbufs[w].bytes)
                pld_ck_perr(x, "view of %lld %s elements needs %lld bytes but window buffer '%s' holds %lld bytes",
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

static const pld_type_t *chk_remote_load(ck_pc_t *x)
{
    const pld_type_t *tt = pld_ck_want_dt(x, 0, "target") > 0 ? ck_ty(x, 0) : NULL;
    int rank = tt ? tt->rank : -1;
    pld_dim_t shp[PLD_CK_MAX_RANK], vld[PLD_CK_MAX_RANK];
    int ns, nv = -1, no;
    pld_type_t *res;

    if (tt && rank == 0) {
        pld_ck_perr(x, "requires at least one dimension on target");
        rank = -1;
    }
    if (tt && pld_dtype_bits(tt->dtype) < 8)
        pld_ck_perr(x, "supports only byte-sized element types; target is %s", pld_dtype_name(tt->dtype));
    if (tt && (tt->layout == PLD_LAYOUT_MX_A || tt->layout == PLD_LAYOUT_MX_B)) /* as PyPTO's remote_load */
        pld_ck_perr(x, "does not support MX-layout (MX_A_ZZ / MX_B_NN) targets");
    no_offset_alias(x, 0, "target");
    want_scalar(x, 1, "peer", " (rank index)");
    no = want_list(x, 2, "offsets", rank, "target tensor");
    ns = want_list(x, 3, "shape", rank, "target tensor");
    if (ck_arg(x, 4))
        nv = want_list(x, 4, "valid_shape", rank, "target tensor");
    if (ns >= 0)
        ns = pld_ck_dims_of_list(x->ck, ck_arg(x, 3), shp);
    if (nv >= 0)
        nv = pld_ck_dims_of_list(x->ck, ck_arg(x, 4), vld);

    for (int d = 0; d < ns && d < PLD_CK_MAX_RANK; d++) {
        int64_t off = 0, ext = 0, dim = 0, s = 0, vv = 0;
        int has_off = no > d && item_const(x, 2, d, &off);
        int has_s = shp[d].kind == PLD_DIM_CONST;
        int has_v = nv > d && vld[d].kind == PLD_DIM_CONST;
        const pld_expr_t *vi = nv > d ? pld_ck_list_item(x->ck, ck_arg(x, 4), d) : NULL;

        s = has_s ? shp[d].v : 0;
        vv = has_v ? vld[d].v : 0;
        if (has_s && s <= 0) {
            pld_ck_perr(x, "shape %d must be positive, found %lld", d, (long long)s);
            break;
        }
        if (has_off && off < 0) {
            pld_ck_perr(x, "offset %d is provably negative (%lld)", d, (long long)off);
            break;
        }
        if (vi && vi->type && vi->type->kind == PLD_TY_SCALAR && pld_dtype_is_float(vi->type->dtype)) {
            pld_ck_perr(x, "valid_shape %d must be an integer scalar, found %s", d, pld_dtype_name(vi->type->dtype));
            break;
        }
        if (has_v && vv < 0) {
            pld_ck_perr(x, "valid_shape %d is provably negative (%lld)", d, (long long)vv);
            break;
        }
        if (has_v && has_s && vv > s) {
            pld_ck_perr(x, "valid_shape %d (%lld) exceeds the window extent %lld", d, (long long)vv, (long long)s);
            break;
        }
        ext = has_v ? vv : s;
        if (has_off && (has_v || has_s) && ck_dimc(tt, d, &dim) && pld_ck_past_end(off, ext, dim)) {
            pld_ck_perr(x, "reads past the end of dimension %d: offset %lld + extent %lld > %lld; pass a smaller "
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
static void chk_atomic(ck_pc_t *x, int i, pld_dtype_t dt)
{
    int64_t v;
    if (!pld_ck_enum_arg(x, i, "AtomicType", 2, "AtomicType.None_ or AtomicType.Add", 0, &v) || v != 1 ||
        dt == PLD_DT_NONE)
        return;
    if (!atomic_add_dtype_ok(dt))
        pld_ck_perr(x, "atomic=AtomicType.Add requires an FP32, BF16, FP16, INT32, INT16 or INT8 destination, found %s",
                    pld_dtype_name(dt));
    else if (dt == PLD_DT_BF16 && !pld_npu_profile_or_default(x->ck->opts.platform)->bf16_atomic_add)
        pld_ck_perr(x, "atomic=AtomicType.Add on BF16 requires the a2a3 platform profile");
}

static const pld_type_t *chk_remote_store(ck_pc_t *x, int tile_form)
{
    const pld_type_t *st = ck_ty(x, 0);
    const pld_type_t *tt = pld_ck_want_dt(x, 1, "target") > 0 ? ck_ty(x, 1) : NULL;
    int src_ok = 0;
    int no;

    if (ck_known(st)) {
        if (tile_form && st->kind != PLD_TY_TILE)
            pld_ck_perr(x, "src_tile must be a Tile; got %s (in a tensor-level kernel call pld.tensor.remote_store instead)",
                        pld_ck_tystr(x->ck, st));
        else if (!tile_form && st->kind == PLD_TY_TILE)
            pld_ck_perr(x, "src must be a Tensor; got %s (push a tile with pld.tile.remote_store)", pld_ck_tystr(x->ck, st));
        else if (!tile_form && st->kind != PLD_TY_TENSOR)
            pld_ck_perr(x, "src must be a plain Tensor; got %s (to push one window buffer into another, use pld.tensor.put)",
                        pld_ck_tystr(x->ck, st));
        else
            src_ok = 1;
    }
    no_offset_alias(x, 1, "target");
    if (tt && tt->rank < 2) {
        pld_ck_perr(x, "target rank must be >= 2 to hold a 2-D push, found rank %d", tt->rank);
        tt = NULL;
    }
    want_scalar(x, 2, "peer", " (rank index)");
    no = want_list(x, 3, "offsets", tt ? tt->rank : -1, "target tensor");

    if (src_ok && tt && st->dtype != tt->dtype)
        pld_ck_perr(x, "src dtype (%s) must match target dtype (%s)", pld_dtype_name(st->dtype), pld_dtype_name(tt->dtype));
    if (src_ok && st->rank < 2) {
        pld_ck_perr(x, "src must be at least 2-D (it is pushed as a 2-D region), found rank %d", st->rank);
        src_ok = 0;
    }
    if (src_ok) {
        for (int d = 0; d + 2 < st->rank; d++) {
            int64_t v;
            if (ck_dimc(st, d, &v) && v != 1) {
                pld_ck_perr(x, "src leading dimension %d must be 1, found %lld", d, (long long)v);
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
                pld_ck_perr(x, "offsets dimension %d must be non-negative, found %lld", d, (long long)off);
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
            if (has_ext && ck_dimc(tt, d, &dim) && pld_ck_past_end(off, ext, dim)) {
                pld_ck_perr(x, "push exceeds the peer's target region in dimension %d: offset %lld + extent %lld > %lld", d,
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
static void unshift_region(ck_pc_t *x)
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
        pld_ck_perr(x, "stage2 must be a tile; got a list with all three region arguments also given");
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
static void chk_stage(ck_pc_t *x, pld_dtype_t dtype, const pld_dim_t *xfer, int rank)
{
    const pld_type_t *st[2] = {ck_ty(x, 3), ck_arg(x, 4) ? ck_ty(x, 4) : NULL};
    const char *nm[2] = {"stage", "stage2"};
    for (int s = 0; s < 2; s++) {
        const pld_type_t *t = st[s];
        if (!ck_known(t))
            continue;
        if (t->kind != PLD_TY_TILE) {
            pld_ck_perr(x, "%s must be a TileType, got %s", nm[s], pld_ck_tystr(x->ck, t));
            return;
        }
        if (dtype != PLD_DT_NONE && t->dtype != dtype) {
            pld_ck_perr(x, "%s dtype must match dst dtype, got stage=%s dst=%s", nm[s], pld_dtype_name(t->dtype),
                        pld_dtype_name(dtype));
            return;
        }
        if (t->rank != 2) {
            pld_ck_perr(x, "%s must be a 2D VEC staging tile, got rank %d", nm[s], t->rank);
            return;
        }
    }
    if (ck_known(st[1]) && ck_known(st[0]) && (pld_ck_dim_same(&st[0]->shape[0], &st[1]->shape[0]) == 0 ||
                                                      pld_ck_dim_same(&st[0]->shape[1], &st[1]->shape[1]) == 0)) {
        pld_ck_perr(x, "ping/pong staging tiles must have identical shape");
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
        if (!ck_known(st[s]))
            continue;
        if (rows_static && ck_dimc(st[s], 0, &v) && v > rows) {
            pld_ck_perr(x, "stage rows %lld must fit within flattened transfer rows %lld (pto-isa auto-chunks a smaller stage)",
                        (long long)v, (long long)rows);
            return;
        }
        if (cols_static && ck_dimc(st[s], 1, &v) && v > cols) {
            pld_ck_perr(x, "stage cols %lld must fit within transfer cols %lld (pto-isa auto-chunks a smaller stage)",
                        (long long)v, (long long)cols);
            return;
        }
    }
}

/* pld.tensor.put/get (tile = 0) and pld.tile.put/get (tile = 1: stage,
 * stage2 before the region, no chunk keywords). */
static const pld_type_t *chk_put_get(ck_pc_t *x, int is_put, int tile)
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
        if (pld_ck_want_dt(x, DST, "dst") > 0)
            dt = ck_ty(x, DST);
        if (ck_known(ck_ty(x, SRC)) && ck_ty(x, SRC)->kind == PLD_TY_TILE)
            pld_ck_perr(x, "src must be a GM tensor; got %s (push a computed value with pld.tensor.remote_store)",
                        pld_ck_tystr(x->ck, ck_ty(x, SRC)));
        else if (pld_ck_want_tensorlike(x, SRC, "src") > 0)
            sr = ck_ty(x, SRC);
        no_offset_alias(x, DST, "dst");
    } else {
        if (pld_ck_want_tensorlike(x, DST, "dst") > 0)
            dt = ck_ty(x, DST);
        if (pld_ck_want_dt(x, SRC, "src") > 0)
            sr = ck_ty(x, SRC);
        no_offset_alias(x, SRC, "src");
    }
    want_scalar(x, PEER, "peer", " (rank index)");

    if (dt && sr) {
        if (dt->dtype != sr->dtype) {
            pld_ck_perr(x, "dst and src must have the same element type, found %s and %s", pld_dtype_name(dt->dtype),
                        pld_dtype_name(sr->dtype));
            ok = 0;
        }
        if (dt->rank == 0 || sr->rank == 0) {
            pld_ck_perr(x, "requires at least one dimension on %s", dt->rank == 0 ? "dst" : "src");
            ok = 0;
        } else if (dt->rank != sr->rank) {
            pld_ck_perr(x, "dst rank (%d) must match src rank (%d)", dt->rank, sr->rank);
            ok = 0;
        }
        rank = dt->rank;
    }
    for (int w = 0; w < 2 && ok; w++) {
        const pld_type_t *t = w ? sr : dt;
        for (int d = 0; t && d < t->rank; d++) {
            int64_t v;
            if (ck_dimc(t, d, &v) && v <= 0) {
                pld_ck_perr(x, "%s shape dimension %d must be positive, found %lld", w ? "src" : "dst", d, (long long)v);
                ok = 0;
                break;
            }
        }
    }

    /* chunking (the tile forms chunk by their stage tile) */
    if (tile)
        crows = ccols = 1;
    else if (ck_arg(x, CROWS) && (pld_ck_int_arg(x, CROWS, &crows) < 0 || crows < 0)) {
        pld_ck_perr(x, "chunk_rows must be a non-negative static int (0 = full)");
        ok = 0;
    }
    if (!tile && ck_arg(x, CCOLS) && (pld_ck_int_arg(x, CCOLS, &ccols) < 0 || ccols < 0)) {
        pld_ck_perr(x, "chunk_cols must be a non-negative static int (0 = full)");
        ok = 0;
    }
    if (!tile && ck_arg(x, PIPE) && ck_arg(x, PIPE)->kind == PLD_EX_BOOL && ck_arg(x, PIPE)->u.bval && ok &&
        (crows <= 0 || ccols <= 0)) {
        pld_ck_perr(x, "pipeline=True requires both chunk_rows > 0 and chunk_cols > 0");
        ok = 0;
    }

    nreg = !!ck_arg(x, DOFS) + !!ck_arg(x, SOFS) + !!ck_arg(x, SHAPE);
    if (nreg != 0 && nreg != 3) {
        pld_ck_perr(x, "dst_offsets, src_offsets and shape must be given together");
        return &pld_type_none;
    }
    if (!ok || rank < 0)
        goto atomic;

    pld_buf_init(&b1);
    pld_buf_init(&b2);
    if (nreg == 0) {
        /* full slice: equal shapes */
        for (int d = 0; d < rank; d++) {
            int s = pld_ck_dim_same(&dt->shape[d], &sr->shape[d]);
            if (s == 0) {
                pld_ck_perr(x, "full-slice dst and src must have the same shape; dimension %d differs (%s vs %s)", d,
                            pld_ck_dim_text(&dt->shape[d], &b1), pld_ck_dim_text(&sr->shape[d], &b2));
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
                pld_ck_perr(x, "a dynamic leading transfer dimension needs a static chunk_rows to bound the staging tile");
            else if (dt->shape[rank - 1].kind != PLD_DIM_CONST && ccols == 0)
                pld_ck_perr(x, "a dynamic innermost transfer dimension needs a static chunk_cols to bound the staging tile");
        }
    } else {
        int nd = want_list(x, DOFS, "dst_offsets", rank, "dst");
        int ns = want_list(x, SOFS, "src_offsets", rank, "src");
        int nt = want_list(x, SHAPE, "shape", rank, "tensor");
        if (nt == rank && nt > 0 && pld_ck_dims_of_list(x->ck, ck_arg(x, SHAPE), shp) == rank) {
            int dyn_lead = 0, bad = 0;
            xfer = shp;
            for (int d = 0; d < rank && !bad; d++) {
                int64_t e = 0, off, dim;
                int has_e = shp[d].kind == PLD_DIM_CONST;
                e = has_e ? shp[d].v : 0;
                if (d + 1 < rank)
                    dyn_lead |= !has_e;
                if (has_e && e <= 0) {
                    pld_ck_perr(x, "shape dimension %d must be positive, found %lld", d, (long long)e);
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
                        pld_ck_perr(x, "%s_offsets dimension %d must be non-negative, found %lld", nm, d, (long long)off);
                        bad = 1;
                    } else if (has_e && ck_dimc(t, d, &dim) && pld_ck_past_end(off, e, dim)) {
                        pld_ck_perr(x, "%s subregion dimension %d exceeds %s shape: offset %lld + extent %lld > %lld", nm, d,
                                    nm, (long long)off, (long long)e, (long long)dim);
                        bad = 1;
                    }
                }
            }
            if (!bad && dyn_lead && crows == 0)
                pld_ck_perr(x, "a dynamic leading transfer dimension needs a static chunk_rows to bound the staging tile");
            else if (!bad && shp[rank - 1].kind != PLD_DIM_CONST && ccols == 0)
                pld_ck_perr(x, "a dynamic innermost transfer dimension needs a static chunk_cols to bound the staging tile");
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
static void chk_cell(ck_pc_t *x, int li, const pld_type_t *sig)
{
    int n = want_list(x, li, "offsets", sig ? sig->rank : -1, sig ? "signal tensor" : "");
    for (int d = 0; sig && d < n; d++) {
        int64_t off, dim;
        const pld_expr_t *it = pld_ck_list_item(x->ck, ck_arg(x, li), d);
        if (it && it->type && it->type->kind == PLD_TY_SCALAR && pld_dtype_is_float(it->type->dtype)) {
            pld_ck_perr(x, "offset %d must be an integer or index scalar, found %s", d, pld_dtype_name(it->type->dtype));
            return;
        }
        if (!item_const(x, li, d, &off))
            continue;
        if (off < 0 || (ck_dimc(sig, d, &dim) && off >= dim)) {
            if (ck_dimc(sig, d, &dim))
                pld_ck_perr(x, "cell offset %d (%lld) is outside dimension %d of the signal (size %lld)", d, (long long)off,
                            d, (long long)dim);
            else
                pld_ck_perr(x, "cell offset %d is provably negative (%lld)", d, (long long)off);
            return;
        }
    }
}

static const pld_type_t *chk_notify(ck_pc_t *x)
{
    const pld_type_t *t = pld_ck_want_dt(x, 0, "target") > 0 ? ck_ty(x, 0) : NULL;
    int64_t v;

    /* pldrun's own rule (PyPTO accepts any dtype): signal cells are INT32 */
    if (t && t->dtype != PLD_DT_INT32)
        pld_ck_perr(x, "signal must be INT32, found %s", pld_dtype_name(t->dtype));
    no_offset_alias(x, 0, "target");
    want_scalar(x, 1, "peer", " (rank index)");
    chk_cell(x, 2, t);
    want_scalar(x, 3, "value", "");
    pld_ck_enum_arg(x, 4, "NotifyOp", 2, "NotifyOp.AtomicAdd or NotifyOp.Set", 1, &v);
    return &pld_type_none;
}

static const pld_type_t *chk_wait(ck_pc_t *x, int deferred)
{
    const pld_type_t *t = pld_ck_want_signal(x, 0, "signal") > 0 ? ck_ty(x, 0) : NULL;
    int64_t v;

    if (t && t->rank == 0) {
        pld_ck_perr(x, "signal rank must be at least 1, found 0");
        t = NULL;
    }
    no_offset_alias(x, 0, "signal");
    chk_cell(x, 1, t);
    if (!deferred) {
        want_scalar(x, 2, "expected", "");
        pld_ck_enum_arg(x, 3, "WaitCmp", 2, "WaitCmp.Eq or WaitCmp.Ge", 1, &v);
        return &pld_type_none;
    }
    /* defer_wait: only in a dedicated single-block waiter (a pl.at(CORE_GROUP)
     * scope, or the InCore function outlined from one) that is not
     * early-resolvable and has no predicate */
    if (x->ck->spmd_depth > 0)
        pld_ck_perr(x, "cannot run inside pl.spmd: a waiter must be single-block");
    if (!x->ck->deferred)
        x->ck->deferred = x->c->call;
    if (x->ck->at_scope) {
        const pld_expr_t *at = x->ck->at_scope;
        for (int i = 0; i < at->u.call.nargs; i++) {
            const pld_arg_t *a = &at->u.call.args[i];
            if (a->kw && strcmp(a->kw, "predicate") == 0)
                pld_ck_perr(x, "cannot run in a waiter scope with predicate=");
            else if (a->kw && strcmp(a->kw, "allow_early_resolve") == 0 && a->value->kind == PLD_EX_BOOL &&
                     a->value->u.bval)
                pld_ck_perr(x, "cannot run in an early-resolvable waiter scope (allow_early_resolve=True)");
        }
    }
    /* defer_wait: direct parameter, integer threshold in [0, INT32_MAX], Ge only */
    if (ck_arg(x, 0)) {
        const pld_expr_t *e = ck_arg(x, 0);
        int slot = e->kind == PLD_EX_NAME ? pld_ck_find_slot(x->ck, e->u.name) : -1;
        if (ck_known(ck_ty(x, 0)) && (e->kind != PLD_EX_NAME || (slot >= 0 && !x->ck->slots[slot].is_param)))
            pld_ck_perr(x, "signal must be a direct DistributedTensor function parameter (slices, views and aliases do "
                           "not carry their base offset)");
    }
    if (want_int_scalar(x, 2, "expected") >= 0 && ck_arg(x, 2) && pld_ck_const_int(x->ck, ck_arg(x, 2), &v) &&
        (v < 0 || v > PLD_CK_I32_MAX))
        pld_ck_perr(x, "constant expected must be in [0, INT32_MAX], found %lld", (long long)v);
    if (pld_ck_enum_arg(x, 3, "WaitCmp", 2, "WaitCmp.Eq or WaitCmp.Ge", 1, &v) && v != 1)
        pld_ck_perr(x, "only supports cmp=WaitCmp.Ge, found WaitCmp.%s", pld_ck_enum_value_name("WaitCmp", v));
    return &pld_type_none;
}

/* ------------------------------------------------------------------- entry */

const pld_type_t *pld_ck_pld_call(pld_ck_t *ck, ck_call_t *c)
{
    ck_pc_t x = {ck, c, c->info->name, 0, 0};
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
        return pld_ck_coll_call(&x, id);
    case PLD_OPID_BUILTIN_ALLREDUCE:
    case PLD_OPID_BUILTIN_ALLREDUCE_RING:
    case PLD_OPID_BUILTIN_BARRIER:
    case PLD_OPID_BUILTIN_BROADCAST:
    case PLD_OPID_BUILTIN_REDUCE_SCATTER:
    case PLD_OPID_BUILTIN_ALLGATHER:
    case PLD_OPID_BUILTIN_ALL_TO_ALL:
    case PLD_OPID_BUILTIN_ALL_TO_ALL_V:
        x.builtin = 1;
        return pld_ck_coll_call(&x, (pld_op_id_t)pld_op_coll_kind(id));
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
