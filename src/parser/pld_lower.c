/* pld_lower.c - the lowering passes run between the checker and the run
 * (pld_check.h, docs/lowering.md): IR -> IR rewrites of a checked program's
 * AST, knowing no MPI.
 *
 * LowerL2TensorCollectives (seed 000): a pld.tensor.all_to_all_v written in a
 * CHIP orchestration body becomes a call of a synthesized FunctionType.AIV
 * builtin kernel __builtin_all_to_all_v__fp32 / __int8 (one per variant,
 * shared by every call site) whose body is `return target`; the folded block
 * count B rides the call as core_num=B, sync_start=True when B > 1. The pass
 * owns the CHIP rail's rejections (runtime core_num, core_num range, dtype,
 * signal capacity S < B) and its postcondition (no collective left in a CHIP
 * orchestration body).
 *
 * LowerHostTensorCollectives (pld_semantics.md §2.14.3-§2.20, §3 item 5): a
 * collective statement of a HOST orchestrator becomes one builtin.tensor.*
 * dispatch per participating device (straight-line for an explicit device
 * list, a `for` over pld.system.world_size() otherwise), followed by the
 * rebind `<result> = <target>`.
 *
 * InCore bodies (kernels, pl.at(CORE_GROUP) and pl.spmd scopes) pass
 * through: the composite rail is executed as written.
 *
 * New nodes live in the program's arena and carry the span of the call they
 * replace, so every later diagnostic points at the source line. */
#include "pld_check.h"
#include "pld_mem.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct lower {
    pld_program_t *p;
    pld_span_t sp;             /* span of the nodes being made */
    int oom;
    int errors;
    int ndev_loops;            /* names __dev_<n> of the HOST dispatch loops */
    int variant_fn[2];         /* index in p->funcs of the fp32 / int8 kernel, -1 before it exists */
    pld_lower_stats_t stats;
} lower_t;

/* ------------------------------------------------------------ node makers */

static pld_expr_t *mk(lower_t *w, pld_expr_kind_t k)
{
    pld_expr_t *e = pld_ast_expr(w->p, k, w->sp);
    if (!e)
        w->oom = 1;
    else
        e->height = 1;
    return e;
}

static void grow(pld_expr_t *e, const pld_expr_t *child)
{
    if (e && child && child->height + 1 > e->height)
        e->height = child->height + 1;
}

static const char *intern(lower_t *w, const char *s)
{
    const char *r = pld_ast_intern_cstr(w->p, s);
    if (!r)
        w->oom = 1;
    return r;
}

static pld_expr_t *mk_name(lower_t *w, const char *s)
{
    pld_expr_t *e = mk(w, PLD_EX_NAME);
    if (e)
        e->u.name = intern(w, s);
    return e;
}

/* "a.b.c" as a NAME/ATTR chain. */
static pld_expr_t *mk_dotted(lower_t *w, const char *s)
{
    const char *dot = strchr(s, '.');
    char head[64];
    size_t n = dot ? (size_t)(dot - s) : strlen(s);
    if (n >= sizeof head)
        n = sizeof head - 1;
    memcpy(head, s, n);
    head[n] = '\0';
    pld_expr_t *e = mk_name(w, head);
    while (e && dot) {
        const char *next = strchr(dot + 1, '.');
        n = next ? (size_t)(next - dot - 1) : strlen(dot + 1);
        if (n >= sizeof head)
            n = sizeof head - 1;
        memcpy(head, dot + 1, n);
        head[n] = '\0';
        pld_expr_t *a = mk(w, PLD_EX_ATTR);
        if (!a)
            return NULL;
        a->u.attr.obj = e;
        a->u.attr.attr = intern(w, head);
        a->u.attr.attr_span = w->sp;
        grow(a, e);
        e = a;
        dot = next;
    }
    return e;
}

static pld_expr_t *mk_int(lower_t *w, int64_t v)
{
    pld_expr_t *e = mk(w, PLD_EX_INT);
    if (e)
        e->u.ival = v;
    return e;
}

static pld_expr_t *mk_bool(lower_t *w, int v)
{
    pld_expr_t *e = mk(w, PLD_EX_BOOL);
    if (e)
        e->u.bval = v;
    return e;
}

static pld_expr_t *mk_str(lower_t *w, const char *s)
{
    pld_expr_t *e = mk(w, PLD_EX_STR);
    if (e) {
        e->u.str.s = intern(w, s);
        e->u.str.len = strlen(s);
    }
    return e;
}

static pld_expr_t **mk_vec(lower_t *w, int n)
{
    pld_expr_t **v = pld_arena_alloc(&w->p->arena, sizeof *v * (size_t)(n > 0 ? n : 1));
    if (!v)
        w->oom = 1;
    return v;
}

static pld_expr_t *mk_seq(lower_t *w, pld_expr_kind_t k, pld_expr_t **items, int n)
{
    pld_expr_t *e = mk(w, k);
    if (!e)
        return NULL;
    e->u.seq.items = items;
    e->u.seq.n = n;
    for (int i = 0; i < n; i++)
        grow(e, items[i]);
    return e;
}

/* obj[items...] */
static pld_expr_t *mk_sub(lower_t *w, pld_expr_t *obj, pld_expr_t **items, int n)
{
    pld_expr_t *e = mk(w, PLD_EX_SUBSCRIPT);
    if (!e)
        return NULL;
    e->u.sub.obj = obj;
    e->u.sub.items = items;
    e->u.sub.n = n;
    grow(e, obj);
    for (int i = 0; i < n; i++)
        grow(e, items[i]);
    return e;
}

/* fn(args): nargs slots, the caller fills them (kw NULL = positional). */
static pld_expr_t *mk_call(lower_t *w, pld_expr_t *fn, int nargs)
{
    pld_expr_t *e = mk(w, PLD_EX_CALL);
    pld_arg_t *a = pld_arena_alloc(&w->p->arena, sizeof *a * (size_t)(nargs > 0 ? nargs : 1));
    if (!e || !a) {
        w->oom = 1;
        return NULL;
    }
    memset(a, 0, sizeof *a * (size_t)(nargs > 0 ? nargs : 1));
    e->u.call.fn = fn;
    e->u.call.args = a;
    e->u.call.nargs = nargs;
    grow(e, fn);
    return e;
}

static void set_arg(pld_expr_t *call, int i, const char *kw, pld_expr_t *v, lower_t *w)
{
    if (!call)
        return;
    call->u.call.args[i].kw = kw ? intern(w, kw) : NULL;
    call->u.call.args[i].kw_span = w->sp;
    call->u.call.args[i].value = v;
    grow(call, v);
}

static pld_stmt_t *mk_stmt(lower_t *w, pld_stmt_kind_t k)
{
    pld_stmt_t *s = pld_ast_stmt(w->p, k, w->sp);
    if (!s)
        w->oom = 1;
    return s;
}

/* ------------------------------------------------------------ helpers */

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void lerr(lower_t *w, pld_span_t sp, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pld_diag_add(&w->p->diags, PLD_SEV_ERROR, sp, "%s", msg);
    w->errors++;
}

/* The integer a compile-time expression folds to: literals, module
 * constants (the checker's folded values) and + - * // % of those. */
static int fold_int(const pld_program_t *p, const pld_expr_t *e, int64_t *v, int depth)
{
    int64_t a, b;
    if (!e || depth > 32)
        return 0;
    switch (e->kind) {
    case PLD_EX_INT: *v = e->u.ival; return 1;
    case PLD_EX_NAME:
        for (int i = 0; i < p->nconsts; i++)
            if (p->consts[i].name == e->u.name)
                return fold_int(p, pld_const_value(&p->consts[i]), v, depth + 1);
        return 0;
    case PLD_EX_UNARY:
        if (e->u.un.op != PLD_UOP_NEG || !fold_int(p, e->u.un.a, &a, depth + 1) || a == INT64_MIN)
            return 0;
        *v = -a;
        return 1;
    case PLD_EX_BINARY:
        if (!fold_int(p, e->u.bin.a, &a, depth + 1) || !fold_int(p, e->u.bin.b, &b, depth + 1))
            return 0;
        switch (e->u.bin.op) {
        case PLD_OP_ADD: return !__builtin_add_overflow(a, b, v);
        case PLD_OP_SUB: return !__builtin_sub_overflow(a, b, v);
        case PLD_OP_MUL: return !__builtin_mul_overflow(a, b, v);
        case PLD_OP_FLOORDIV:
        case PLD_OP_MOD: {
            if (b == 0 || (a == INT64_MIN && b == -1))
                return 0;
            int64_t q = a / b, r = a % b;
            if (r != 0 && ((r < 0) != (b < 0))) {
                q--;
                r += b;
            }
            *v = e->u.bin.op == PLD_OP_MOD ? r : q;
            return 1;
        }
        default: return 0;
        }
    default: return 0;
    }
}

/* A pl.at(<kernel level>) or pl.spmd scope: InCore code inside a CHIP body. */
static int kernel_scope(const pld_stmt_t *s)
{
    const pld_expr_t *it = s->u.with.item;
    if (s->kind != PLD_ST_WITH || !it || it->kind != PLD_EX_CALL)
        return 0;
    if (it->op == PLD_OPID_PL_SPMD)
        return 1;
    if (it->op != PLD_OPID_PL_AT)
        return 0;
    for (int i = 0; i < it->u.call.nargs; i++) {
        const pld_arg_t *a = &it->u.call.args[i];
        char b[128];
        if ((a->kw && strcmp(a->kw, "level") != 0) || (!a->kw && i > 0))
            continue;
        if (pld_ast_dotted(a->value, b, sizeof b) &&
            (strstr(b, "CORE_GROUP") || strstr(b, "AIV") || strstr(b, "AIC") || strstr(b, "CHIP_DIE")))
            return 1;
    }
    return 0;
}

static int is_collective(const pld_expr_t *e)
{
    return e && e->kind == PLD_EX_CALL && e->op >= PLD_OPID_PLD_ALLREDUCE && e->op <= PLD_OPID_PLD_ALL_TO_ALL_V;
}

static const pld_expr_t *bound(const pld_expr_t *e, int i)
{
    return e->bound ? e->bound[i] : NULL;
}

/* ------------------------------------------------------------ LowerL2TensorCollectives */

/* L while L < P, else the largest multiple of P not above L (RFC #2521). */
int64_t pld_lower_a2av_blocks(int64_t p, int64_t l)
{
    return l < p ? l : (l / p) * p;
}

static const char *const variant_name[2] = {"__builtin_all_to_all_v__fp32", "__builtin_all_to_all_v__int8"};
static const char *const variant_dtype[2] = {"pl.FP32", "pl.INT8"};
static const char *const variant_cpp[2] = {"dtype_cpp=float", "dtype_cpp=int8_t"};

/* The canonical dims of the builtin kernel's signature: module-level
 * pl.dynamic names (added once). */
static const char *const dyn_dims[4] = {"__a2av_rows", "__a2av_size", "__a2av_nr", "__a2av_lanes"};

static int add_dyn_dims(lower_t *w)
{
    pld_program_t *p = w->p;
    for (int i = 0; i < p->nconsts; i++)
        if (strcmp(p->consts[i].name, dyn_dims[0]) == 0)
            return 1;
    pld_const_decl_t *c = pld_arena_alloc(&p->arena, sizeof *c * (size_t)(p->nconsts + 4));
    if (!c) {
        w->oom = 1;
        return 0;
    }
    if (p->nconsts)
        memcpy(c, p->consts, sizeof *c * (size_t)p->nconsts);
    for (int k = 0; k < 4; k++) {
        pld_const_decl_t *d = &c[p->nconsts + k];
        memset(d, 0, sizeof *d);
        d->name = intern(w, dyn_dims[k]);
        d->span = w->sp;
        pld_expr_t *call = mk_call(w, mk_dotted(w, "pl.dynamic"), 1);
        set_arg(call, 0, NULL, mk_str(w, dyn_dims[k]), w);
        d->value = call;
    }
    p->consts = c;
    p->nconsts += 4;
    return !w->oom;
}

/* `[pl.InOut[]]<pl|pld>.<Kind>[[d0, d1], <dtype>]` */
static pld_expr_t *mk_tensor_ann(lower_t *w, const char *kind, int d0, int d1, const char *dtype, int inout)
{
    pld_expr_t **dims = mk_vec(w, 2), **items = mk_vec(w, 2);
    if (!dims || !items)
        return NULL;
    dims[0] = mk_name(w, dyn_dims[d0]);
    dims[1] = d1 < 0 ? mk_int(w, 1) : mk_name(w, dyn_dims[d1]);
    items[0] = mk_seq(w, PLD_EX_LIST, dims, 2);
    items[1] = mk_dotted(w, dtype);
    pld_expr_t *t = mk_sub(w, mk_dotted(w, kind), items, 2);
    if (!inout)
        return t;
    pld_expr_t **one = mk_vec(w, 1);
    if (!one)
        return NULL;
    one[0] = t;
    return mk_sub(w, mk_dotted(w, "pl.InOut"), one, 1);
}

/* Adds __builtin_all_to_all_v__<variant> to the program (once). */
static int variant_kernel(lower_t *w, int v)
{
    if (w->variant_fn[v] >= 0)
        return w->variant_fn[v];
    pld_program_t *p = w->p;
    for (int i = 0; i < p->nfuncs; i++)
        if (strcmp(p->funcs[i]->name, variant_name[v]) == 0) {
            if (pld_check_builtin_kernel(p->funcs[i]) == PLD_OPID_PLD_ALL_TO_ALL_V)
                return w->variant_fn[v] = i; /* a lowered program read back */
            lerr(w, p->funcs[i]->name_span, "the function name '%s' is reserved for the CHIP rail's builtin kernel",
                 variant_name[v]);
            return -1;
        }
    if (!add_dyn_dims(w))
        return -1;
    pld_func_t *f = pld_arena_alloc(&p->arena, sizeof *f);
    pld_param_t *pp = pld_arena_alloc(&p->arena, sizeof *pp * 5);
    pld_func_t **funcs = pld_arena_alloc(&p->arena, sizeof *funcs * (size_t)(p->nfuncs + 1));
    if (!f || !pp || !funcs) {
        w->oom = 1;
        return -1;
    }
    memset(f, 0, sizeof *f);
    memset(pp, 0, sizeof *pp * 5);
    f->name = intern(w, variant_name[v]);
    f->name_span = f->deco_span = w->sp;
    f->has_self = 1;
    /* @pl.function(type=pl.FunctionType.AIV, attrs={...}) */
    pld_expr_t **keys = mk_vec(w, 3), **vals = mk_vec(w, 3);
    pld_expr_t *attrs = mk(w, PLD_EX_DICT);
    pld_expr_t *deco = mk_call(w, mk_dotted(w, "pl.function"), 2);
    if (!keys || !vals || !attrs || !deco)
        return -1;
    char dir[128];
    snprintf(dir, sizeof dir, "%sall_to_all_v", PLD_BUILTIN_TEMPLATE_PKG);
    keys[0] = mk_str(w, "builtin_template_dir");
    vals[0] = mk_str(w, dir);
    keys[1] = mk_str(w, "builtin_template_vars");
    vals[1] = mk_str(w, variant_cpp[v]);
    keys[2] = mk_str(w, "require_contiguous_operands");
    vals[2] = mk_bool(w, 1);
    attrs->u.dict.keys = keys;
    attrs->u.dict.vals = vals;
    attrs->u.dict.n = 3;
    for (int i = 0; i < 3; i++)
        grow(attrs, vals[i]);
    set_arg(deco, 0, "type", mk_dotted(w, "pl.FunctionType.AIV"), w);
    set_arg(deco, 1, "attrs", attrs, w);
    f->deco = deco;
    /* input, target, signal, send_counts, recv_counts: In, InOut, InOut, In, InOut */
    static const char *const names[5] = {"input", "target", "signal", "send_counts", "recv_counts"};
    const char *dt = variant_dtype[v];
    pp[0].ann = mk_tensor_ann(w, "pl.Tensor", 0, 1, dt, 0);
    pp[1].ann = mk_tensor_ann(w, "pld.DistributedTensor", 0, 1, dt, 1);
    pp[2].ann = mk_tensor_ann(w, "pld.DistributedTensor", 2, 3, "pl.INT32", 1);
    pp[3].ann = mk_tensor_ann(w, "pl.Tensor", 2, -1, "pl.INT32", 0);
    pp[4].ann = mk_tensor_ann(w, "pld.DistributedTensor", 2, -1, "pl.INT32", 1);
    for (int i = 0; i < 5; i++) {
        pp[i].name = intern(w, names[i]);
        pp[i].span = w->sp;
        pp[i].slot = -1;
    }
    f->params = pp;
    f->nparams = 5;
    f->ret_ann = mk_tensor_ann(w, "pld.DistributedTensor", 0, 1, dt, 0);
    /* body: return target */
    pld_stmt_t *ret = mk_stmt(w, PLD_ST_RETURN);
    pld_stmt_t **body = pld_arena_alloc(&p->arena, sizeof *body);
    pld_expr_t **rv = mk_vec(w, 1);
    if (!ret || !body || !rv || w->oom)
        return -1;
    rv[0] = mk_name(w, "target");
    ret->u.ret.vals = rv;
    ret->u.ret.n = 1;
    body[0] = ret;
    f->body.stmts = body;
    f->body.n = 1;
    /* callee first: before the first function (PyPTO prints in callee-first order) */
    funcs[0] = f;
    memcpy(funcs + 1, p->funcs, sizeof *funcs * (size_t)p->nfuncs);
    p->funcs = funcs;
    p->nfuncs++;
    for (int k = 0; k < 2; k++)
        if (w->variant_fn[k] >= 0)
            w->variant_fn[k]++;
    w->stats.kernels++;
    return w->variant_fn[v] = 0;
}

/* One CHIP-rail all_to_all_v call: the seed's rejections, then the rewrite. */
static void lower_chip_a2av(lower_t *w, pld_expr_t *e)
{
    const char *op = pld_op_info(PLD_OPID_PLD_ALL_TO_ALL_V)->name;
    const pld_expr_t *cn = bound(e, 5), *tgt = bound(e, 1), *sig = bound(e, 2), *sc = bound(e, 3);
    int64_t L = 1, P, S;
    if (cn && !fold_int(w->p, cn, &L, 0)) {
        lerr(w, e->span, "%s core_num must be a positive compile-time int: a runtime core_num is not supported on the "
                         "CHIP rail yet (LowerL2TensorCollectives)", op);
        return;
    }
    if (L < 1 || L > INT32_MAX) {
        lerr(w, e->span, "%s core_num must be in [1, INT32_MAX], found %lld", op, (long long)L);
        return;
    }
    const pld_type_t *tt = tgt ? tgt->type : NULL, *st = sig ? sig->type : NULL, *ct = sc ? sc->type : NULL;
    if (!tt || !st || !pld_type_is_tensorlike(tt) || st->rank != 2 || st->shape[0].kind != PLD_DIM_CONST) {
        lerr(w, e->span, "%s: the CHIP rail needs static operand types (a [NR, S] signal with a constant NR)", op);
        return;
    }
    if (tt->dtype != PLD_DT_FP32 && tt->dtype != PLD_DT_INT8) {
        lerr(w, e->span, "%s supports only FP32 or INT8 on the CHIP rail, found %s", op, pld_dtype_name(tt->dtype));
        return;
    }
    P = st->shape[0].v;
    if (st->shape[1].kind != PLD_DIM_CONST) {
        lerr(w, sig->span, "%s signal shape[1] must be a compile-time constant on the CHIP rail", op);
        return;
    }
    S = st->shape[1].v;
    int64_t B = pld_lower_a2av_blocks(P, L);
    if (S < B) {
        lerr(w, e->span,
             "%s signal shape[1] (%lld) must be at least the admitted block count %lld (core_num %lld folded over "
             "%lld ranks)",
             op, (long long)S, (long long)B, (long long)L, (long long)P);
        return;
    }
    if (ct && ct->rank != 2) {
        lerr(w, sc->span, "%s: the CHIP rail's builtin kernel declares send_counts [NR, 1]; pass a 2-D [NR, 1] tensor",
             op);
        return;
    }
    w->sp = e->span;
    int fi = variant_kernel(w, tt->dtype == PLD_DT_INT8);
    if (fi < 0 || w->oom)
        return;
    /* self.__builtin_all_to_all_v__<v>(input, target, signal, send_counts, recv_counts[, core_num=B, sync_start=True]) */
    pld_expr_t *args[5];
    for (int i = 0; i < 5; i++)
        args[i] = (pld_expr_t *)bound(e, i);
    pld_expr_t *self = mk_name(w, "self"), *fn = mk(w, PLD_EX_ATTR);
    pld_arg_t *a = pld_arena_alloc(&w->p->arena, sizeof *a * 7);
    if (!self || !fn || !a) {
        w->oom = 1;
        return;
    }
    memset(a, 0, sizeof *a * 7);
    fn->u.attr.obj = self;
    fn->u.attr.attr = w->p->funcs[fi]->name;
    fn->u.attr.attr_span = e->u.call.fn->span;
    grow(fn, self);
    int n = 0;
    for (int i = 0; i < 5; i++)
        a[n++].value = args[i];
    if (B > 1) {
        a[n].kw = intern(w, "core_num");
        a[n].kw_span = e->span;
        a[n++].value = mk_int(w, B);
        a[n].kw = intern(w, "sync_start");
        a[n].kw_span = e->span;
        a[n++].value = mk_bool(w, 1);
    }
    e->u.call.fn = fn;
    e->u.call.args = a;
    e->u.call.nargs = n;
    e->op = -1;
    e->bound = NULL;
    w->stats.chip_calls++;
}

/* Calls fn on every node of e's subtree, children first. */
typedef void (*visit_fn)(lower_t *w, pld_expr_t *e, void *arg);
static void visit(lower_t *w, pld_expr_t *e, visit_fn fn, void *arg)
{
    if (!e || w->oom)
        return;
    switch (e->kind) {
    case PLD_EX_UNARY: visit(w, e->u.un.a, fn, arg); break;
    case PLD_EX_BINARY:
        visit(w, e->u.bin.a, fn, arg);
        visit(w, e->u.bin.b, fn, arg);
        break;
    case PLD_EX_CALL:
        for (int i = 0; i < e->u.call.nargs; i++)
            visit(w, e->u.call.args[i].value, fn, arg);
        break;
    case PLD_EX_SUBSCRIPT:
        visit(w, e->u.sub.obj, fn, arg);
        for (int i = 0; i < e->u.sub.n; i++)
            visit(w, e->u.sub.items[i], fn, arg);
        break;
    case PLD_EX_LIST:
    case PLD_EX_TUPLE:
        for (int i = 0; i < e->u.seq.n; i++)
            visit(w, e->u.seq.items[i], fn, arg);
        break;
    default: break;
    }
    fn(w, e, arg);
}

/* *arg == 0: rewrite every all_to_all_v; 1: the postcondition. */
static void chip_node(lower_t *w, pld_expr_t *e, void *arg)
{
    const int post = *(const int *)arg;
    if (!is_collective(e))
        return;
    if (!post && e->op == PLD_OPID_PLD_ALL_TO_ALL_V)
        lower_chip_a2av(w, e);
    else if (post)
        lerr(w, e->span,
             "collective '%s' cannot stay in a CHIP orchestration body; call it from the HOST orchestrator or inside "
             "an InCore kernel (only all_to_all_v has a CHIP rail: LowerL2TensorCollectives)",
             pld_op_info((pld_op_id_t)e->op)->name);
}

static void chip_expr(lower_t *w, pld_expr_t *e, int post)
{
    visit(w, e, chip_node, &post);
}

static void chip_block(lower_t *w, pld_block_t *b, int post)
{
    for (int i = 0; i < b->n && !w->oom; i++) {
        pld_stmt_t *s = b->stmts[i];
        switch (s->kind) {
        case PLD_ST_EXPR: chip_expr(w, s->u.expr, post); break;
        case PLD_ST_ASSIGN: chip_expr(w, s->u.assign.value, post); break;
        case PLD_ST_RETURN:
            for (int k = 0; k < s->u.ret.n; k++)
                chip_expr(w, s->u.ret.vals[k], post);
            break;
        case PLD_ST_IF:
            chip_expr(w, s->u.if_.cond, post);
            chip_block(w, &s->u.if_.then, post);
            chip_block(w, &s->u.if_.els, post);
            break;
        case PLD_ST_WHILE:
            chip_expr(w, s->u.while_.cond, post);
            chip_block(w, &s->u.while_.body, post);
            break;
        case PLD_ST_FOR: chip_block(w, &s->u.for_.body, post); break;
        case PLD_ST_WITH:
            if (!kernel_scope(s)) /* InCore code passes through */
                chip_block(w, &s->u.with.body, post);
            break;
        default: break;
        }
    }
}

/* ------------------------------------------------------------ LowerHostTensorCollectives */

/* The builtin dispatch of collective call e on device `dev`:
 * builtin.tensor.<name>(<positional operands>, <keywords present>, device=dev) */
static pld_expr_t *host_dispatch(lower_t *w, const pld_expr_t *e, int builtin, pld_expr_t *dev)
{
    const pld_op_info_t *src = pld_op_info((pld_op_id_t)e->op), *bi = pld_op_info((pld_op_id_t)builtin);
    int n = 1;
    for (int i = 0; i < src->nparams; i++)
        n += bound(e, i) != NULL;
    pld_expr_t *c = mk_call(w, mk_dotted(w, bi->name), n);
    if (!c)
        return NULL;
    int k = 0, keyword = 0;
    for (int i = 0; i < src->nparams; i++) {
        pld_expr_t *v = (pld_expr_t *)bound(e, i);
        if (!v) {
            keyword = 1; /* positional operands after an absent one go by keyword */
            continue;
        }
        keyword |= src->params[i].kwonly;
        set_arg(c, k++, keyword ? src->params[i].name : NULL, v, w);
    }
    set_arg(c, k, "device", dev, w);
    return c;
}

/* The statements replacing HOST collective statement s (value e). */
static int host_lower_stmt(lower_t *w, pld_stmt_t *s, pld_expr_t *e, pld_stmt_t ***out)
{
    const int kind = e->op;
    const pld_expr_t *m = kind == PLD_OPID_PLD_ALLREDUCE ? bound(e, 3) : NULL;
    const int ring = m && m->kind == PLD_EX_STR && strcmp(m->u.str.s, "ring") == 0;
    const int builtin = pld_op_builtin_of(kind, ring);
    const int ti = kind == PLD_OPID_PLD_BARRIER ? 0 : (kind == PLD_OPID_PLD_ALLGATHER || kind == PLD_OPID_PLD_ALL_TO_ALL ||
                                                       kind == PLD_OPID_PLD_ALL_TO_ALL_V) ? 1 : 0;
    /* devices: the checker's comm-domain coverage (bit d = device d), or -1
     * when the domain is every device or not listed statically */
    /* (a synthesized signal is one hidden buffer per dispatch call: every
     * device must run the same call, so that form always loops) */
    const int32_t mask = kind == PLD_OPID_PLD_ALLREDUCE && !bound(e, 1) ? -1 : e->aux;
    int ndev = 0;
    for (int d = 0; mask > 0 && d < 31; d++)
        ndev += (mask >> d) & 1;
    const int tail = s->kind != PLD_ST_EXPR;
    const int n = (mask > 0 ? ndev : 1) + tail;
    pld_stmt_t **v = pld_arena_alloc(&w->p->arena, sizeof *v * (size_t)n);
    if (!v) {
        w->oom = 1;
        return 0;
    }
    w->sp = e->span;
    int k = 0;
    if (mask > 0) {
        for (int d = 0; d < 31; d++) {
            if (!((mask >> d) & 1))
                continue;
            pld_stmt_t *x = mk_stmt(w, PLD_ST_EXPR);
            if (!x)
                return 0;
            x->u.expr = host_dispatch(w, e, builtin, mk_int(w, d));
            v[k++] = x;
        }
    } else {
        /* for __dev_<n> in pl.range(pld.system.world_size()): builtin(..., device=__dev_<n>) */
        char nm[32];
        snprintf(nm, sizeof nm, "__dev_%d", w->ndev_loops++);
        pld_stmt_t *loop = mk_stmt(w, PLD_ST_FOR), *x = mk_stmt(w, PLD_ST_EXPR);
        pld_stmt_t **body = pld_arena_alloc(&w->p->arena, sizeof *body);
        pld_expr_t *range = mk_call(w, mk_dotted(w, "pl.range"), 1);
        if (!loop || !x || !body || !range) {
            w->oom = 1;
            return 0;
        }
        set_arg(range, 0, NULL, mk_call(w, mk_dotted(w, "pld.system.world_size"), 0), w);
        x->u.expr = host_dispatch(w, e, builtin, mk_name(w, nm));
        body[0] = x;
        loop->u.for_.target = mk_name(w, nm);
        loop->u.for_.iter = range;
        loop->u.for_.body.stmts = body;
        loop->u.for_.body.n = 1;
        v[k++] = loop;
    }
    if (tail) {
        /* the rebind idiom: <result> = <target> (return <target>) */
        pld_stmt_t *x = mk_stmt(w, s->kind);
        if (!x)
            return 0;
        if (s->kind == PLD_ST_ASSIGN) {
            x->u.assign = s->u.assign;
            x->u.assign.value = (pld_expr_t *)bound(e, ti);
        } else {
            pld_expr_t **rv = mk_vec(w, 1);
            if (!rv)
                return 0;
            rv[0] = (pld_expr_t *)bound(e, ti);
            x->u.ret.vals = rv;
            x->u.ret.n = 1;
        }
        v[k++] = x;
    }
    if (w->oom)
        return 0;
    v[0]->comments = s->comments;
    *out = v;
    w->stats.host_calls++;
    return k;
}

/* The first collective of a subtree other than the statement's value (arg:
 * {value, found}). */
static void find_nested(lower_t *w, pld_expr_t *e, void *arg)
{
    (void)w;
    const pld_expr_t **vf = arg;
    if (!vf[1] && e != vf[0] && is_collective(e))
        vf[1] = e;
}

static void host_block(lower_t *w, pld_block_t *b)
{
    for (int i = 0; i < b->n && !w->oom; i++) {
        pld_stmt_t *s = b->stmts[i];
        pld_expr_t *value = NULL;
        const pld_expr_t *deep = NULL;
        switch (s->kind) {
        case PLD_ST_EXPR: value = s->u.expr; break;
        case PLD_ST_ASSIGN: value = s->u.assign.value; break;
        case PLD_ST_RETURN: value = s->u.ret.n == 1 ? s->u.ret.vals[0] : NULL; break;
        case PLD_ST_IF: host_block(w, &s->u.if_.then); host_block(w, &s->u.if_.els); continue;
        case PLD_ST_WHILE: host_block(w, &s->u.while_.body); continue;
        case PLD_ST_FOR: host_block(w, &s->u.for_.body); continue;
        case PLD_ST_WITH: host_block(w, &s->u.with.body); continue;
        default: continue;
        }
        const pld_expr_t *vf[2] = {s->kind == PLD_ST_RETURN && s->u.ret.n > 1 ? NULL : value, NULL};
        if (s->kind == PLD_ST_RETURN)
            for (int k = 0; k < s->u.ret.n; k++)
                visit(w, s->u.ret.vals[k], find_nested, vf);
        else
            visit(w, value, find_nested, vf);
        deep = vf[1];
        if (deep) {
            lerr(w, deep->span,
                 "%s nested in an expression cannot be lowered to its builtin dispatches "
                 "(LowerHostTensorCollectives); assign its result to a name first",
                 pld_op_info((pld_op_id_t)deep->op)->name);
            continue;
        }
        if (!is_collective(value))
            continue;
        pld_stmt_t **repl = NULL;
        int k = host_lower_stmt(w, s, value, &repl);
        if (k <= 0)
            return;
        pld_stmt_t **nv = pld_arena_alloc(&w->p->arena, sizeof *nv * (size_t)(b->n - 1 + k));
        if (!nv) {
            w->oom = 1;
            return;
        }
        memcpy(nv, b->stmts, sizeof *nv * (size_t)i);
        memcpy(nv + i, repl, sizeof *nv * (size_t)k);
        memcpy(nv + i + k, b->stmts + i + 1, sizeof *nv * (size_t)(b->n - i - 1));
        b->stmts = nv;
        b->n += k - 1;
        i += k - 1;
    }
}

/* ------------------------------------------------------------ driver */

/* Checks the lowered program again (its sema fields become those of the
 * lowered AST). Diagnostics of the re-check go to a scratch list: the first
 * check's warnings are not repeated; an error there is a lowering bug, and it
 * is reported as one. */
static pld_status_t recheck(pld_program_t *p, const pld_check_opts_t *opts)
{
    pld_diag_list_t saved = p->diags;
    pld_diag_list_init(&p->diags, saved.file, saved.src, saved.src_len);
    pld_status_t st = pld_check_program(p, opts);
    pld_diag_list_t fresh = p->diags;
    p->diags = saved;
    for (const pld_diag_t *d = fresh.head; d && st != PLD_OK; d = d->next)
        if (d->sev == PLD_SEV_ERROR)
            pld_diag_add(&p->diags, PLD_SEV_ERROR, d->span, "internal error: the lowered program does not check: %s",
                         d->msg);
    pld_diag_list_fini(&fresh);
    return st == PLD_OK ? PLD_OK : st == PLD_E_NOMEM ? PLD_E_NOMEM : PLD_E_TYPE;
}

pld_status_t pld_lower_program(pld_program_t *p, const pld_check_opts_t *opts, pld_lower_stats_t *stats)
{
    lower_t w;
    memset(&w, 0, sizeof w);
    w.p = p;
    w.variant_fn[0] = w.variant_fn[1] = -1;
    int nfuncs = p->nfuncs; /* the kernels added below need no lowering */
    pld_func_t **funcs = p->funcs;
    for (int post = 0; post < 2 && !w.oom && !w.errors; post++)
        for (int i = 0; i < nfuncs && !w.oom; i++)
            if (pld_check_func_ctx(funcs[i]) == PLD_CTX_CHIP)
                chip_block(&w, &funcs[i]->body, post);
    for (int i = 0; i < nfuncs && !w.oom && !w.errors; i++)
        if (pld_check_func_ctx(funcs[i]) == PLD_CTX_HOST)
            host_block(&w, &funcs[i]->body);
    if (stats)
        *stats = w.stats;
    if (w.oom || p->diags.oom)
        return PLD_E_NOMEM;
    if (w.errors)
        return PLD_E_TYPE;
    if (!w.stats.chip_calls && !w.stats.host_calls && !w.stats.kernels)
        return PLD_OK; /* nothing changed */
    return recheck(p, opts);
}
