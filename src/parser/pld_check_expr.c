/* pld_check_expr.c - expressions: names, constants, operators, calls bound to
 * the op table (their static shape / dtype inference: pld_check_infer.c). */
#include "pld_check_int.h"

#include <stdio.h>
#include <string.h>

static const pld_type_t *set_type(pld_expr_t *e, const pld_type_t *t)
{
    e->type = t ? t : &pld_type_unknown;
    return e->type;
}

static const pld_type_t *scalar(pld_ck_t *ck, pld_dtype_t d)
{
    return pld_type_scalar(ck->p, d);
}

/* ------------------------------------------------------------ constant folding */

static const char *dotted(pld_ck_t *ck, const pld_expr_t *e, char *buf, size_t n);

/* dtype named by e (pl.FP32, FP32, or a module constant holding a dtype); NONE if not. */
static pld_dtype_t dtype_of_expr(pld_ck_t *ck, const pld_expr_t *e)
{
    char b[128];
    if (!e)
        return PLD_DT_NONE;
    if (e->kind == PLD_EX_NAME) {
        const ck_const_t *c = pld_ck_find_const(ck, e->u.name);
        if (c && c->kind == CK_C_DTYPE)
            return c->dt;
        if (pld_ck_find_slot(ck, e->u.name) >= 0)
            return PLD_DT_NONE;
        return pld_dtype_from_name(e->u.name);
    }
    const char *d = dotted(ck, e, b, sizeof b);
    if (d && strncmp(d, "pl.", 3) == 0 && !strchr(d + 3, '.'))
        return pld_dtype_from_name(d + 3);
    return PLD_DT_NONE;
}

int pld_ck_const_int(pld_ck_t *ck, const pld_expr_t *e, int64_t *out)
{
    int64_t a, b;
    if (!e)
        return 0;
    switch (e->kind) {
    case PLD_EX_INT:
        *out = e->u.ival;
        return 1;
    case PLD_EX_BOOL:
        *out = e->u.bval;
        return 1;
    case PLD_EX_NAME: {
        int s = pld_ck_find_slot(ck, e->u.name);
        if (s >= 0) {
            if (ck->slots[s].has_cval) {
                *out = ck->slots[s].cval;
                return 1;
            }
            return 0;
        }
        const ck_const_t *c = pld_ck_find_const(ck, e->u.name);
        if (c && (c->kind == CK_C_INT || c->kind == CK_C_BOOL)) {
            *out = c->i;
            return 1;
        }
        return 0;
    }
    case PLD_EX_UNARY:
        if (!pld_ck_const_int(ck, e->u.un.a, &a))
            return 0;
        if (e->u.un.op == PLD_UOP_NEG) {
            if (a == INT64_MIN)
                return ck->fold_overflow = 1, 0; /* overflows int64: not a foldable constant */
            *out = -a;
        }
        else if (e->u.un.op == PLD_UOP_POS)
            *out = a;
        else if (e->u.un.op == PLD_UOP_INVERT)
            *out = ~a;
        else
            *out = !a;
        return 1;
    case PLD_EX_BINARY:
        if (!pld_ck_const_int(ck, e->u.bin.a, &a) || !pld_ck_const_int(ck, e->u.bin.b, &b))
            return 0;
        switch (e->u.bin.op) {
        /* Folding is exact or declines: a result outside int64 is not a
         * constant (Python would produce a big integer PyPTO cannot hold). */
        case PLD_OP_ADD:
            if (__builtin_add_overflow(a, b, out))
                return ck->fold_overflow = 1, 0;
            return 1;
        case PLD_OP_SUB:
            if (__builtin_sub_overflow(a, b, out))
                return ck->fold_overflow = 1, 0;
            return 1;
        case PLD_OP_MUL:
            if (__builtin_mul_overflow(a, b, out))
                return ck->fold_overflow = 1, 0;
            return 1;
        case PLD_OP_FLOORDIV:
            if (b == 0)
                return 0;
            if (a == INT64_MIN && b == -1)
                return ck->fold_overflow = 1, 0;
            *out = a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
            return 1;
        case PLD_OP_MOD:
            if (b == 0)
                return 0;
            if (b == -1) {
                *out = 0;
                return 1;
            }
            *out = a % b;
            if (*out != 0 && ((*out < 0) != (b < 0)))
                *out += b;
            return 1;
        case PLD_OP_LSHIFT:
            if (b < 0 || b > 62)
                return 0;
            if (a > (INT64_MAX >> b) || a < (INT64_MIN >> b))
                return ck->fold_overflow = 1, 0;
            *out = (int64_t)((uint64_t)a << b);
            return 1;
        case PLD_OP_RSHIFT: if (b < 0 || b > 63) return 0; *out = a >> b; return 1;
        case PLD_OP_BITAND: *out = a & b; return 1;
        case PLD_OP_BITOR: *out = a | b; return 1;
        case PLD_OP_BITXOR: *out = a ^ b; return 1;
        case PLD_OP_POW: {
            if (b < 0 || b > 62)
                return 0;
            int64_t r = 1;
            for (int64_t i = 0; i < b; i++)
                if (__builtin_mul_overflow(r, a, &r))
                    return ck->fold_overflow = 1, 0;
            *out = r;
            return 1;
        }
        case PLD_OP_EQ: *out = a == b; return 1;
        case PLD_OP_NE: *out = a != b; return 1;
        case PLD_OP_LT: *out = a < b; return 1;
        case PLD_OP_LE: *out = a <= b; return 1;
        case PLD_OP_GT: *out = a > b; return 1;
        case PLD_OP_GE: *out = a >= b; return 1;
        default: return 0;
        }
    case PLD_EX_COND: /* Python: only the chosen branch is evaluated */
        if (!pld_ck_const_int(ck, e->u.cond.cond, &a))
            return 0;
        return pld_ck_const_int(ck, a ? e->u.cond.a : e->u.cond.b, out);
    case PLD_EX_CALL: {
        char buf[128];
        const char *d = dotted(ck, e->u.call.fn, buf, sizeof buf);
        if (!d)
            return 0;
        if ((strcmp(d, "min") == 0 || strcmp(d, "max") == 0) && e->u.call.nargs >= 2) {
            /* Python's builtins over two or more int arguments (module constants) */
            const int is_min = d[1] == 'i';
            for (int i = 0; i < e->u.call.nargs; i++) {
                if (e->u.call.args[i].kw || !pld_ck_const_int(ck, e->u.call.args[i].value, &b))
                    return 0;
                if (i == 0 || (is_min ? b < a : b > a))
                    a = b;
            }
            *out = a;
            return 1;
        }
        if (strcmp(d, "pl.const") == 0 && e->u.call.nargs >= 1)
            return pld_ck_const_int(ck, e->u.call.args[0].value, out);
        size_t n = strlen(d);
        if (n > 9 && strcmp(d + n - 9, ".get_byte") == 0 && e->u.call.nargs == 0) {
            pld_dtype_t dt = dtype_of_expr(ck, e->u.call.fn->u.attr.obj);
            if (dt == PLD_DT_NONE)
                return 0;
            *out = pld_dtype_bytes(dt);
            return 1;
        }
        if ((strcmp(d, "pld.system.world_size") == 0 || strcmp(d, "pld.world_size") == 0) && ck->opts.ranks > 0) {
            *out = ck->opts.ranks;
            return 1;
        }
        if (strcmp(d, "pl.cast") == 0 && e->u.call.nargs >= 1)
            return pld_ck_const_int(ck, e->u.call.args[0].value, out);
        return 0;
    }
    default:
        return 0;
    }
}

const char *pld_ck_const_str(const pld_expr_t *e)
{
    return e && e->kind == PLD_EX_STR ? e->u.str.s : NULL;
}

static const struct {
    const char *enum_name, *member;
    int64_t v;
} enum_values[] = {
    {"NotifyOp", "AtomicAdd", 0}, {"NotifyOp", "Set", 1}, {"WaitCmp", "Eq", 0}, {"WaitCmp", "Ge", 1},
    {"AtomicType", "None_", 0},   {"AtomicType", "Add", 1}, {"ReduceOp", "Sum", 0}, {"ReduceOp", "Max", 1},
    {"ReduceOp", "Min", 2},       {"ReduceOp", "Prod", 3},
};

const char *pld_ck_enum_member(const pld_expr_t *e, int64_t *out)
{
    if (!e || e->kind != PLD_EX_ATTR || e->u.attr.obj->kind != PLD_EX_ATTR)
        return NULL;
    const char *en = e->u.attr.obj->u.attr.attr, *known = NULL;
    for (size_t i = 0; i < sizeof enum_values / sizeof enum_values[0]; i++)
        if (strcmp(enum_values[i].enum_name, en) == 0) {
            known = enum_values[i].enum_name;
            if (strcmp(enum_values[i].member, e->u.attr.attr) == 0) {
                *out = enum_values[i].v;
                return known;
            }
        }
    *out = -1;
    return known;
}

int pld_ck_enum_int(pld_ck_t *ck, const pld_expr_t *e, const char *enum_name, int64_t *out)
{
    if (!e)
        return 0;
    if (e->kind == PLD_EX_NAME && pld_ck_find_slot(ck, e->u.name) < 0) {
        /* a module constant holding a member: REDUCE_OP = pld.ReduceOp.Prod */
        const ck_const_t *c = pld_ck_find_const(ck, e->u.name);
        if (c && c->kind == CK_C_ENUM) {
            if (strcmp(c->enum_name, enum_name) != 0)
                return 0;
            *out = c->i;
            return 1;
        }
    }
    if (e->kind == PLD_EX_ATTR && e->u.attr.obj->kind == PLD_EX_ATTR) {
        const char *en = e->u.attr.obj->u.attr.attr;
        if (strcmp(en, enum_name) != 0)
            return 0;
        for (size_t i = 0; i < sizeof enum_values / sizeof enum_values[0]; i++)
            if (strcmp(enum_values[i].enum_name, enum_name) == 0 && strcmp(enum_values[i].member, e->u.attr.attr) == 0) {
                *out = enum_values[i].v;
                return 1;
            }
        *out = -1; /* a member that does not exist */
        return 1;
    }
    return pld_ck_const_int(ck, e, out);
}

/* ------------------------------------------------------------ lists and dims */

static const pld_expr_t *list_expr(pld_ck_t *ck, const pld_expr_t *e)
{
    if (!e)
        return NULL;
    if (e->kind == PLD_EX_LIST || e->kind == PLD_EX_TUPLE)
        return e;
    if (e->kind == PLD_EX_NAME && pld_ck_find_slot(ck, e->u.name) < 0) {
        const ck_const_t *c = pld_ck_find_const(ck, e->u.name);
        if (c && c->kind == CK_C_EXPR && c->expr && (c->expr->kind == PLD_EX_LIST || c->expr->kind == PLD_EX_TUPLE))
            return c->expr;
    }
    return NULL;
}

int pld_ck_list_len(pld_ck_t *ck, const pld_expr_t *e)
{
    const pld_expr_t *l = list_expr(ck, e);
    return l ? l->u.seq.n : -1;
}

const pld_expr_t *pld_ck_list_item(pld_ck_t *ck, const pld_expr_t *e, int i)
{
    const pld_expr_t *l = list_expr(ck, e);
    return l && i >= 0 && i < l->u.seq.n ? l->u.seq.items[i] : NULL;
}

static void dim_of(pld_ck_t *ck, const pld_expr_t *e, pld_dim_t *d)
{
    int64_t v;
    memset(d, 0, sizeof *d);
    if (pld_ck_const_int(ck, e, &v)) {
        d->kind = PLD_DIM_CONST;
        d->v = v;
        return;
    }
    if (e->kind == PLD_EX_NAME) {
        d->kind = PLD_DIM_SYM;
        d->sym = e->u.name;
        d->expr = e;
        return;
    }
    d->kind = PLD_DIM_EXPR;
    d->expr = e;
}

int pld_ck_dims_of_list(pld_ck_t *ck, const pld_expr_t *e, pld_dim_t *dims)
{
    const pld_expr_t *l = list_expr(ck, e);
    if (!l)
        return -1;
    int n = l->u.seq.n < PLD_CK_MAX_RANK ? l->u.seq.n : PLD_CK_MAX_RANK;
    for (int i = 0; i < n; i++)
        dim_of(ck, l->u.seq.items[i], &dims[i]);
    return n;
}

int pld_ck_shape_size(pld_ck_t *ck, pld_span_t sp, const char *what, const pld_dim_t *dims, int rank, pld_dtype_t dt,
                      int64_t *bytes)
{
    int64_t c[PLD_CK_MAX_RANK], b = 0;
    int n = 0, all = 1, rc;
    const int bits = dt == PLD_DT_NONE ? 8 : pld_dtype_bits(dt);
    for (int i = 0; i < rank; i++) {
        if (dims[i].kind != PLD_DIM_CONST)
            all = 0;
        else if (n < PLD_CK_MAX_RANK)
            c[n++] = dims[i].v;
    }
    /* sub-byte dtypes: count bits, then round up to bytes */
    rc = pld_size_bytes(n, c, bits % 8 == 0 ? bits / 8 : bits, INT64_MAX, &b);
    if (rc == PLD_SIZE_OK && bits % 8 != 0)
        b = b / 8 + (b % 8 != 0);
    if (bytes)
        *bytes = all ? b : -1;
    if (rc == PLD_SIZE_OK)
        return 1;
    pld_buf_t t;
    pld_buf_init(&t);
    pld_buf_putc(&t, '[');
    for (int i = 0; i < rank; i++) {
        if (i)
            pld_buf_puts(&t, ", ");
        pld_dim_print(&dims[i], &t);
    }
    pld_buf_putc(&t, ']');
    if (t.oom)
        ck->oom = 1;
    if (rc == PLD_SIZE_NEGATIVE)
        pld_ck_error(ck, sp, "%s shape %s has a negative dimension", what, pld_buf_str(&t));
    else if (dt == PLD_DT_NONE)
        pld_ck_error(ck, sp, "%s shape %s overflows int64: its element count does not fit in 64 bits", what,
                     pld_buf_str(&t));
    else
        pld_ck_error(ck, sp, "%s shape %s of %s overflows int64: its size in bytes does not fit in 64 bits", what,
                     pld_buf_str(&t), pld_dtype_name(dt));
    pld_buf_fini(&t);
    return 0;
}

static const pld_type_t *shaped(pld_ck_t *ck, pld_type_kind_t k, pld_dtype_t dt, const pld_dim_t *dims, int rank,
                                const pld_dim_t *valid, pld_mem_t mem)
{
    pld_type_t *t = pld_type_new(ck->p, k);
    pld_dim_t *d = pld_dims_new(ck->p, rank);
    if (!t || !d) {
        ck->oom = 1;
        return &pld_type_unknown;
    }
    memcpy(d, dims, (size_t)rank * sizeof *d);
    t->dtype = dt;
    t->rank = rank;
    t->shape = d;
    t->mem = mem;
    if (valid) {
        pld_dim_t *v = pld_dims_new(ck->p, rank);
        if (v) {
            memcpy(v, valid, (size_t)rank * sizeof *v);
            t->valid = v;
        }
    }
    return t;
}

const pld_type_t *pld_ck_shaped(pld_ck_t *ck, pld_type_kind_t k, pld_dtype_t dt, const pld_dim_t *dims, int rank,
                                const pld_dim_t *valid, pld_mem_t mem)
{
    return shaped(ck, k, dt, dims, rank, valid, mem);
}

/* ------------------------------------------------------------------ helpers */

/* Dotted name with the module aliases normalised to "pl" / "pld". */
static const char *dotted(pld_ck_t *ck, const pld_expr_t *e, char *buf, size_t n)
{
    if (!pld_ast_dotted(e, buf, n))
        return NULL;
    const char *dot = strchr(buf, '.');
    size_t first = dot ? (size_t)(dot - buf) : strlen(buf);
    const char *rep = NULL;
    if (ck->alias_pl && strlen(ck->alias_pl) == first && strncmp(buf, ck->alias_pl, first) == 0)
        rep = "pl";
    else if (ck->alias_pld && strlen(ck->alias_pld) == first && strncmp(buf, ck->alias_pld, first) == 0)
        rep = "pld";
    if (rep && (strlen(rep) != first || strncmp(buf, rep, first) != 0)) {
        size_t rl = strlen(rep), tail = strlen(buf + first);
        if (rl + tail + 1 > n)
            return NULL;
        memmove(buf + rl, buf + first, tail + 1);
        memcpy(buf, rep, rl);
    }
    return buf;
}

static const char *kind_word(const pld_type_t *t)
{
    switch (t->kind) {
    case PLD_TY_SCALAR: return "a scalar";
    case PLD_TY_TENSOR: return "a tensor";
    case PLD_TY_DTENSOR: return "a DistributedTensor";
    case PLD_TY_TILE: return "a tile";
    case PLD_TY_TUPLE: return "a tuple";
    case PLD_TY_ARRAY: return "an array";
    case PLD_TY_PTR: return "a window buffer (Ptr)";
    case PLD_TY_COMMCTX: return "a CommCtx";
    case PLD_TY_PREFETCH_CTX: return "a PrefetchAsyncContext";
    case PLD_TY_ASYNC_EVENT: return "an AsyncEvent";
    case PLD_TY_ASYNC_SESSION: return "an AsyncSession";
    case PLD_TY_NONE: return "no value";
    default: return "a value";
    }
}

static const char *ctx_word(int ctx)
{
    return ctx == PLD_CTX_HOST ? "a HOST orchestrator" : ctx == PLD_CTX_CHIP ? "a CHIP orchestration function" : "a kernel";
}

static int is_scalarish(const pld_type_t *t)
{
    return t->kind == PLD_TY_SCALAR || t->kind == PLD_TY_UNKNOWN;
}

/* For pld_check_infer.c (pld_check_int.h). */
const char *pld_ck_dotted(pld_ck_t *ck, const pld_expr_t *e, char *buf, size_t n)
{
    return dotted(ck, e, buf, n);
}

/* ------------------------------------------------------------ call binding */

static int check_arg_kind(pld_ck_t *ck, ck_call_t *c, int i)
{
    const pld_op_param_t *pp = &c->info->params[i];
    const pld_type_t *t = c->types[i];
    const pld_expr_t *a = c->args[i];
    const char *k = pp->kind;
    if (!t || t->kind == PLD_TY_UNKNOWN)
        t = &pld_type_unknown;
    if (a && a->kind == PLD_EX_NONE && pp->deflt && strcmp(pp->deflt, "None") == 0)
        return 1; /* an explicit None: the parameter is absent */
    int ok = 1;
    if (strcmp(k, "tensor") == 0)
        ok = t->kind == PLD_TY_UNKNOWN || pld_type_is_tensorlike(t);
    else if (strcmp(k, "dtensor") == 0)
        ok = t->kind == PLD_TY_UNKNOWN || t->kind == PLD_TY_DTENSOR;
    else if (strcmp(k, "tile") == 0)
        ok = t->kind == PLD_TY_UNKNOWN || t->kind == PLD_TY_TILE;
    else if (strcmp(k, "scalar") == 0)
        ok = is_scalarish(t);
    else if (strcmp(k, "ctx") == 0)
        ok = t->kind == PLD_TY_UNKNOWN || t->kind == PLD_TY_COMMCTX;
    else if (strcmp(k, "ptr") == 0)
        ok = t->kind == PLD_TY_UNKNOWN || t->kind == PLD_TY_PTR;
    else if (strcmp(k, "pctx") == 0)
        ok = t->kind == PLD_TY_UNKNOWN || t->kind == PLD_TY_PREFETCH_CTX;
    else if (strcmp(k, "event") == 0)
        ok = t->kind == PLD_TY_UNKNOWN || t->kind == PLD_TY_ASYNC_EVENT;
    else if (strcmp(k, "session") == 0)
        ok = t->kind == PLD_TY_UNKNOWN || t->kind == PLD_TY_ASYNC_SESSION;
    else if (strcmp(k, "list") == 0 || strcmp(k, "idx") == 0)
        ok = list_expr(ck, a) != NULL || t->kind == PLD_TY_TUPLE || t->kind == PLD_TY_UNKNOWN ||
             (k[0] == 'i' && t->kind == PLD_TY_SCALAR && pld_dtype_is_int(t->dtype));
    else if (strcmp(k, "dtype") == 0)
        ok = dtype_of_expr(ck, a) != PLD_DT_NONE;
    else if (strcmp(k, "int") == 0) {
        int64_t v;
        if (!pld_ck_const_int(ck, a, &v)) {
            pld_ck_error(ck, a->span, "%s argument '%s' must be a compile-time integer", c->info->name, pp->name);
            return 0;
        }
        return 1;
    }
    if (ok)
        return 1;
    if (strcmp(k, "dtensor") == 0 && t->kind == PLD_TY_TENSOR) {
        pld_ck_error(ck, c->call->span, "%s expects a DistributedTensor (window-bound) for '%s'; got %s", c->info->name,
                 pp->name, pld_ck_tystr(ck, t));
        return 0;
    }
    if (strcmp(k, "dtype") == 0) {
        pld_ck_error(ck, a->span, "%s argument '%s' must be a dtype such as pl.FP32", c->info->name, pp->name);
        return 0;
    }
    if (strcmp(k, "list") == 0 || strcmp(k, "idx") == 0) {
        pld_ck_error(ck, a->span, "%s argument '%s' must be a list such as [0, 0]%s", c->info->name, pp->name,
                     k[0] == 'i' ? " or one integer (a flat index)" : "");
        return 0;
    }
    static const struct {
        const char *k, *w;
    } words[] = {{"tensor", "a tensor"}, {"dtensor", "a DistributedTensor"}, {"tile", "a tile"},
                 {"scalar", "a scalar"}, {"ctx", "a CommCtx (output of pld.system.get_comm_ctx)"},
                 {"ptr", "a Ptr handle (output of pld.tensor.alloc_window_buffer)"},
                 {"pctx", "a PrefetchAsyncContext (output of pl.prefetch.make_context)"},
                 {"event", "an AsyncEvent (output of pl.prefetch.async_prefetch)"},
                 {"session", "an AsyncSession (output of pl.prefetch.session)"}};
    const char *want = k;
    for (size_t j = 0; j < sizeof words / sizeof words[0]; j++)
        if (strcmp(words[j].k, k) == 0)
            want = words[j].w;
    pld_ck_error(ck, c->call->span, "%s expects %s for '%s'; got %s", c->info->name, want, pp->name,
             t->kind == PLD_TY_UNKNOWN ? "a value of unknown type" : pld_ck_tystr(ck, t));
    return 0;
}

/* PyPTO's printed form spelled `name` (pld_op_printed), when it applies: its
 * positional arguments become keywords of the parameters they bind. More
 * positionals than the form has are left to the op's own signature. */
static void printed_form(pld_ck_t *ck, pld_expr_t *e, const char *name)
{
    const pld_printed_t *pf = pld_op_printed(name, 0);
    if (!pf || !pf->pos)
        return;
    int n = e->u.call.nargs, npos = 0, given = !pf->kw;
    for (int i = 0; i < n; i++) {
        const char *kw = e->u.call.args[i].kw;
        npos += !kw;
        given |= kw && pf->kw && strcmp(kw, pf->kw) == 0;
    }
    char names[PLD_OP_MAX_PARAMS][48];
    int nn = 0, tail = 0;
    for (const char *q = pf->pos; *q && nn < PLD_OP_MAX_PARAMS;) {
        while (*q == ' ')
            q++;
        if (*q == '|') {
            tail = 1;
            q++;
        }
        size_t l = strcspn(q, " ");
        if (l == 0)
            break;
        snprintf(names[nn++], sizeof names[0], "%.*s", (int)l, q);
        q += l;
    }
    if (!given || npos > nn)
        return;
    for (int i = 0, k = 0; i < n; i++) {
        pld_arg_t *a = &e->u.call.args[i];
        if (a->kw)
            continue;
        int slot = tail && k == npos - 1 ? nn - 1 : k;
        k++;
        a->kw = pld_ast_intern_cstr(ck->p, names[slot]);
        a->kw_span = a->value->span;
    }
}

/* Binds call arguments to the op's parameters; reports arity/keyword errors. */
static int bind_call(pld_ck_t *ck, pld_expr_t *e, const pld_op_info_t *info, ck_call_t *c, const pld_type_t **argt)
{
    memset(c, 0, sizeof *c);
    c->call = e;
    c->info = info;
    int npos = 0;
    int maxpos = 0;
    for (int i = 0; i < info->nparams; i++)
        if (!info->params[i].kwonly)
            maxpos++;
    for (int i = 0; i < e->u.call.nargs; i++) {
        pld_arg_t *a = &e->u.call.args[i];
        int idx;
        if (!a->kw) {
            if (npos >= maxpos) {
                int given = 0;
                for (int j = 0; j < e->u.call.nargs; j++)
                    given += !e->u.call.args[j].kw;
                pld_ck_error(ck, a->value->span, "%s takes %d positional argument%s but %d %s given", info->name, maxpos,
                         maxpos == 1 ? "" : "s", given, given == 1 ? "was" : "were");
                return 0;
            }
            idx = npos++;
        } else {
            idx = pld_op_param_index(info, a->kw);
            if (idx < 0) {
                pld_diag_t *d = pld_ck_error(ck, e->span, "%s got an unexpected keyword argument '%s'", info->name, a->kw);
                const char *s = pld_op_suggest_param(info, a->kw);
                if (s)
                    pld_diag_note(&ck->p->diags, d, a->kw_span, "did you mean '%s'?", s);
                return 0;
            }
            if (c->args[idx]) {
                pld_ck_error(ck, a->kw_span, "%s got multiple values for argument '%s'", info->name, a->kw);
                return 0;
            }
        }
        c->args[idx] = a->value;
        c->types[idx] = argt[i];
    }
    for (int i = 0; i < info->nparams; i++) {
        if (!c->args[i] && !info->params[i].deflt) {
            pld_ck_error(ck, e->span, "%s is missing required argument '%s'", info->name, info->params[i].name);
            return 0;
        }
    }
    int ok = 1;
    for (int i = 0; i < info->nparams && ok; i++)
        if (c->args[i])
            ok = check_arg_kind(ck, c, i);
    if (ok && info->nparams > 0) {
        e->bound = pld_arena_alloc(&ck->p->arena, sizeof *e->bound * (size_t)info->nparams);
        if (!e->bound)
            ck->oom = 1;
        else
            memcpy(e->bound, c->args, sizeof *e->bound * (size_t)info->nparams);
    }
    return ok;
}

/* For pld_check_elem.c (pld_check_int.h). */
pld_dtype_t pld_ck_dtype_arg(pld_ck_t *ck, const pld_expr_t *e)
{
    return dtype_of_expr(ck, e);
}

/* ------------------------------------------------------------ special forms */

static const pld_type_t *check_special(pld_ck_t *ck, pld_expr_t *e, int id, const pld_type_t **argt)
{
    int n = e->u.call.nargs;
    pld_arg_t *args = e->u.call.args;
    switch (id) {
    case PLD_OPID_PL_CONST: {
        if (n != 2 || args[0].kw || args[1].kw) {
            pld_ck_error(ck, e->span, "pl.const takes a value and a dtype: pl.const(1, pl.INT32)");
            return &pld_type_unknown;
        }
        pld_dtype_t dt = dtype_of_expr(ck, args[1].value);
        if (dt == PLD_DT_NONE) {
            pld_ck_error(ck, args[1].value->span, "pl.const needs a dtype such as pl.INT32");
            return &pld_type_unknown;
        }
        return scalar(ck, dt);
    }
    case PLD_OPID_PL_CAST_SCALAR: {
        pld_dtype_t dt = n >= 2 ? dtype_of_expr(ck, args[1].value) : PLD_DT_NONE;
        for (int i = 0; i < n; i++)
            if (args[i].kw && strcmp(args[i].kw, "target_type") == 0)
                dt = dtype_of_expr(ck, args[i].value);
        if (dt == PLD_DT_NONE) {
            pld_ck_error(ck, e->span, "pl.cast needs a target dtype: pl.cast(x, pl.INDEX)");
            return &pld_type_unknown;
        }
        return scalar(ck, dt);
    }
    case PLD_OPID_PL_MIN:
    case PLD_OPID_PL_MAX:
        if (n != 2) {
            pld_ck_error(ck, e->span, "%s takes exactly two scalars", id == PLD_OPID_PL_MIN ? "pl.min" : "pl.max");
            return &pld_type_unknown;
        }
        for (int i = 0; i < 2; i++)
            if (!is_scalarish(argt[i])) {
                pld_ck_error(ck, args[i].value->span, "%s works on scalars; for tiles use pl.minimum / pl.maximum",
                         id == PLD_OPID_PL_MIN ? "pl.min" : "pl.max");
                return &pld_type_unknown;
            }
        return scalar(ck, pld_dtype_promote(argt[0]->dtype, argt[1]->dtype));
    case PLD_OPID_PL_FUNC_ATTR:
    case PLD_OPID_PL_STATIC_PRINT:
    case PLD_OPID_PL_STATIC_ASSERT:
        return &pld_type_none;
    case PLD_OPID_PL_DUMP_TAG: /* pl.tensor.dump_tag(t) returns t (--dump writes it: pld_exec.c) */
        return n == 1 && !args[0].kw && argt[0] && pld_type_is_tensorlike(argt[0]) ? argt[0] : &pld_type_none;
    case PLD_OPID_PL_YIELD_:
        pld_ck_error(ck, e->span, "pl.yield_ must be a statement or the value of an assignment at the end of a loop or if body");
        return &pld_type_unknown;
    case PLD_OPID_PL_COND:
        pld_ck_error(ck, e->span, "pl.cond must be the first statement of a pl.while_ loop body");
        return &pld_type_unknown;
    case PLD_OPID_PL_DYNAMIC:
        pld_ck_error(ck, e->span, "pl.dynamic declares a module-level dimension; use it at module level (NR = pl.dynamic(\"NR\"))");
        return &pld_type_unknown;
    case PLD_OPID_PL_SUBMIT:
    case PLD_OPID_PL_SPMD_SUBMIT:
        return pld_ck_submit_call(ck, e, argt);
    default: {
        const pld_op_info_t *info = pld_op_info((pld_op_id_t)id);
        const char *what = id == PLD_OPID_PL_AT || id == PLD_OPID_PL_SCOPE || id == PLD_OPID_PL_MANUAL_SCOPE ||
                                   id == PLD_OPID_PL_CLUSTER
                               ? "a 'with' statement"
                               : "the iterator of a for loop";
        pld_ck_error(ck, e->span, "%s can only be used as %s", info->name, what);
        return &pld_type_unknown;
    }
    }
}

/* ------------------------------------------------------------ calls */

static int level_ok(int levels, int ctx)
{
    if (ctx == PLD_CTX_HOST)
        return levels & PLD_OPL_H;
    if (ctx == PLD_CTX_CHIP)
        return levels & PLD_OPL_C;
    return levels & PLD_OPL_K;
}

static const char *levels_word(int levels)
{
    switch (levels & (PLD_OPL_H | PLD_OPL_C | PLD_OPL_K)) {
    case PLD_OPL_H: return "a HOST orchestrator";
    case PLD_OPL_K: return "an InCore kernel";
    case PLD_OPL_C: return "a CHIP orchestration function";
    case PLD_OPL_H | PLD_OPL_K: return "a HOST orchestrator or an InCore kernel";
    case PLD_OPL_C | PLD_OPL_K: return "a CHIP orchestration function or a kernel";
    default: return "this context";
    }
}

/* Type of one call argument. Dtype names, list constants and `self.kernel`
 * (pl.submit) are read by the op's parameter kind, not evaluated as values. */
static const pld_type_t *arg_type(pld_ck_t *ck, pld_expr_t *a)
{
    if (a->kind == PLD_EX_ATTR && a->u.attr.obj->kind == PLD_EX_NAME && strcmp(a->u.attr.obj->u.name, "self") == 0)
        return set_type(a, &pld_type_unknown);
    if (a->kind == PLD_EX_NAME && pld_ck_find_slot(ck, a->u.name) < 0) {
        const ck_const_t *c = pld_ck_find_const(ck, a->u.name);
        if ((c && (c->kind == CK_C_EXPR || c->kind == CK_C_DTYPE)) || (!c && dtype_of_expr(ck, a) != PLD_DT_NONE))
            return set_type(a, &pld_type_unknown);
    }
    if (a->kind == PLD_EX_LIST || a->kind == PLD_EX_TUPLE) {
        for (int j = 0; j < a->u.seq.n; j++)
            pld_ck_expr(ck, a->u.seq.items[j]);
        return set_type(a, &pld_type_unknown);
    }
    return pld_ck_expr(ck, a);
}

/* The argument index of operand pos (0 or 1) of a unified call: the pos-th
 * positional argument, or the keyword PyPTO's unified op (pld_op_unified_kw)
 * or the tile-tile / tensor-tensor op names at that position; -1 if none. */
static int unified_operand(const pld_expr_t *e, const pld_unified_t *u, int pos)
{
    const int ids[2] = {u->tile_tile, u->tensor_tensor};
    for (int i = 0, k = 0; i < e->u.call.nargs; i++) {
        const char *kw = e->u.call.args[i].kw;
        if (!kw) {
            if (k++ == pos)
                return i;
            continue;
        }
        if (pld_op_unified_kw(u, kw) == pos)
            return i;
        for (int j = 0; j < 2; j++) {
            const pld_op_info_t *in = ids[j] >= 0 ? pld_op_info((pld_op_id_t)ids[j]) : NULL;
            if (in && pos < in->nparams && strcmp(in->params[pos].name, kw) == 0)
                return i;
        }
    }
    return -1;
}

static const pld_type_t *check_call(pld_ck_t *ck, pld_expr_t *e)
{
    int n = e->u.call.nargs;
    const pld_type_t *argt_buf[64];
    const pld_type_t **argt = argt_buf;
    pld_expr_t *fn = e->u.call.fn;
    if (n > 64) {
        pld_ck_error(ck, e->span, "too many call arguments (limit 64)");
        return &pld_type_unknown;
    }
    /* self.f(...) dispatch */
    if (fn->kind == PLD_EX_ATTR && fn->u.attr.obj->kind == PLD_EX_NAME && strcmp(fn->u.attr.obj->u.name, "self") == 0) {
        for (int i = 0; i < n; i++)
            argt[i] = pld_ck_expr(ck, e->u.call.args[i].value);
        return pld_ck_dispatch_call(ck, e, argt);
    }
    char buf[256];
    const char *name = dotted(ck, fn, buf, sizeof buf);
    /* pl.FP32.get_byte() */
    if (name) {
        size_t ln = strlen(name);
        if (ln > 9 && strcmp(name + ln - 9, ".get_byte") == 0 && fn->kind == PLD_EX_ATTR) {
            if (dtype_of_expr(ck, fn->u.attr.obj) == PLD_DT_NONE) {
                pld_ck_error(ck, e->span, "get_byte() must be called on a dtype such as pl.FP32");
                return &pld_type_unknown;
            }
            return scalar(ck, PLD_DT_INDEX);
        }
    }
    const pld_unified_t *uni = name ? pld_op_unified(name) : NULL;
    int id = name && !uni ? pld_op_lookup(name) : -1;
    for (int i = 0; i < n; i++)
        argt[i] = arg_type(ck, e->u.call.args[i].value);
    if (!name) {
        pld_ck_error(ck, e->span, "unsupported call: only pl.*, pld.* ops and self.<function>(...) can be called");
        return &pld_type_unknown;
    }
    if (id < 0) {
        const pld_unified_t *u = uni;
        if (u) {
            int i0 = unified_operand(e, u, 0), i1 = unified_operand(e, u, 1);
            const pld_type_t *a0 = i0 >= 0 ? argt[i0] : &pld_type_unknown;
            const pld_type_t *a1 = i1 >= 0 ? argt[i1] : &pld_type_unknown;
            int second_scalar = a1->kind == PLD_TY_SCALAR;
            if (a0->kind == PLD_TY_TILE)
                id = second_scalar && u->tile_scalar >= 0 ? u->tile_scalar : u->tile_tile;
            else if (pld_type_is_tensorlike(a0))
                id = second_scalar && u->tensor_scalar >= 0 ? u->tensor_scalar : u->tensor_tensor;
            else if (a0->kind == PLD_TY_SCALAR)
                id = u->scalar;
            else if (a0->kind == PLD_TY_UNKNOWN) {
                e->type = &pld_type_unknown;
                return &pld_type_unknown;
            }
            if (id < 0) {
                pld_ck_error(ck, e->span, "%s does not accept %s as its first operand", name, kind_word(a0));
                return &pld_type_unknown;
            }
        }
    }
    if (id < 0) {
        if (strncmp(name, "pl.", 3) == 0 || strncmp(name, "pld.", 4) == 0) {
            pld_diag_t *d = pld_ck_error(ck, e->span, "unknown op '%s'", name);
            const char *s = pld_op_suggest(name);
            if (s)
                pld_diag_note(&ck->p->diags, d, e->span, "did you mean '%s'?", s);
        } else {
            pld_ck_error(ck, e->span, "unsupported call to '%s': only pl.*, pld.* ops and self.<function>(...) can be called", name);
        }
        return &pld_type_unknown;
    }
    e->op = id;
    const pld_op_info_t *info = pld_op_info((pld_op_id_t)id);
    /* PyPTO's unified keyword names (pl.row_sum(input=t)) bind the resolved op's parameter of their position */
    for (int i = 0; uni && i < n; i++) {
        const char *kw = e->u.call.args[i].kw;
        int p = pld_op_param_index(info, kw ? kw : "") < 0 ? pld_op_unified_kw(uni, kw) : -1;
        if (p >= 0 && p < info->nparams)
            e->u.call.args[i].kw = pld_ast_intern_cstr(ck->p, info->params[p].name);
    }
    printed_form(ck, e, name);
    if (ck->deferred && id != PLD_OPID_PLD_DEFER_WAIT && id != PLD_OPID_PL_RANGE && id != PLD_OPID_PL_PARALLEL &&
        id != PLD_OPID_PL_UNROLL) {
        pld_diag_t *d = pld_ck_error(ck, e->span, "%s after pld.system.defer_wait: once a waiter scope registers a "
                                              "condition it may only register more (no tensor reads, payload or "
                                              "other communication)",
                                 info->name);
        pld_diag_note(&ck->p->diags, d, ck->deferred->span, "registration began here");
    }
    if (info->levels & PLD_OPL_S)
        return check_special(ck, e, id, argt);
    if (!level_ok(info->levels, ck->ctx)) {
        pld_diag_t *d = pld_ck_error(ck, e->span, "%s can only be called in %s, not in %s", info->name,
                                 levels_word(info->levels), ctx_word(ck->ctx));
        pld_ck_note_fn(ck, d);
        return &pld_type_unknown;
    }
    ck_call_t c;
    if (!bind_call(ck, e, info, &c, argt))
        return &pld_type_unknown;
    if (strncmp(info->name, "pld.", 4) == 0 || pld_op_is_builtin_coll(id))
        return pld_ck_pld_call(ck, &c);
    const pld_type_t *xt = pld_ck_sys_call(ck, &c); /* pl.system.* of pld_check_sys.c */
    if (xt)
        return xt;
    const pld_type_t *mt = pld_ck_mem_call(ck, &c);
    return mt ? mt : pld_ck_infer_op(ck, &c);
}

/* ------------------------------------------------------------ expressions */

static const pld_type_t *check_subscript(pld_ck_t *ck, pld_expr_t *e)
{
    const pld_type_t *t = pld_ck_expr(ck, e->u.sub.obj);
    int n = e->u.sub.n, slices = 0;
    for (int i = 0; i < n; i++) {
        pld_expr_t *it = e->u.sub.items[i];
        if (it->kind == PLD_EX_SLICE) {
            slices++;
            if (it->u.slice.step) {
                pld_ck_error(ck, it->u.slice.step->span, "slice steps are not supported");
                return &pld_type_unknown;
            }
            if (it->u.slice.lo)
                pld_ck_expr(ck, it->u.slice.lo);
            if (it->u.slice.hi)
                pld_ck_expr(ck, it->u.slice.hi);
        } else {
            const pld_type_t *it_t = pld_ck_expr(ck, it);
            if (!is_scalarish(it_t) && t->kind != PLD_TY_UNKNOWN) {
                pld_ck_error(ck, it->span, "subscript index must be a scalar, found %s", kind_word(it_t));
                return &pld_type_unknown;
            }
        }
    }
    switch (t->kind) {
    case PLD_TY_TUPLE: {
        int64_t k;
        if (n != 1 || !pld_ck_const_int(ck, e->u.sub.items[0], &k)) {
            pld_ck_error(ck, e->span, "a tuple can only be indexed with a constant");
            return &pld_type_unknown;
        }
        if (k < 0 || k >= t->nelems) {
            pld_ck_error(ck, e->span, "tuple index %lld out of range (the tuple has %d elements)", (long long)k, t->nelems);
            return &pld_type_unknown;
        }
        return t->elems[k];
    }
    case PLD_TY_ARRAY:
        return scalar(ck, t->dtype);
    case PLD_TY_TENSOR:
    case PLD_TY_DTENSOR:
    case PLD_TY_TILE: {
        if (n > t->rank) {
            pld_ck_error(ck, e->span, "too many indices: %d for %s of rank %d", n, kind_word(t), t->rank);
            return &pld_type_unknown;
        }
        if (slices == 0 && n == t->rank)
            return scalar(ck, t->dtype);
        if (t->kind == PLD_TY_TILE) { /* no backend makes a view of a tile (pld_exec_subscript) */
            pld_ck_error(ck, e->span, "slicing a tile with [...] is not supported; use pl.tile.slice");
            return &pld_type_unknown;
        }
        pld_dim_t d[PLD_CK_MAX_RANK];
        int k = 0;
        for (int i = 0; i < t->rank && k < PLD_CK_MAX_RANK; i++) {
            if (i < n && e->u.sub.items[i]->kind != PLD_EX_SLICE)
                continue; /* integer index: dimension dropped */
            if (i < n) {
                const pld_expr_t *sl = e->u.sub.items[i];
                int64_t lo = 0, hi;
                if ((!sl->u.slice.lo || pld_ck_const_int(ck, sl->u.slice.lo, &lo)) && sl->u.slice.hi &&
                    pld_ck_const_int(ck, sl->u.slice.hi, &hi)) {
                    pld_dim_t dd = {PLD_DIM_CONST, hi - lo, NULL, NULL};
                    d[k++] = dd;
                    continue;
                }
                if (!sl->u.slice.lo && !sl->u.slice.hi) {
                    d[k++] = t->shape[i];
                    continue;
                }
                pld_dim_t dd = {PLD_DIM_EXPR, 0, NULL, sl};
                d[k++] = dd;
                continue;
            }
            d[k++] = t->shape[i];
        }
        return shaped(ck, t->kind, t->dtype, d, k, NULL, t->mem);
    }
    case PLD_TY_UNKNOWN:
        return &pld_type_unknown;
    default:
        pld_ck_error(ck, e->span, "%s cannot be subscripted", kind_word(t));
        return &pld_type_unknown;
    }
}

static const pld_type_t *check_name(pld_ck_t *ck, pld_expr_t *e)
{
    const char *nm = e->u.name;
    int s = pld_ck_find_slot(ck, nm);
    if (s >= 0) {
        e->slot = s;
        if (!ck->slots[s].defined) {
            pld_ck_error(ck, e->span, "local variable '%s' is used before it is assigned", nm);
            ck->slots[s].defined = 1; /* report once */
            return &pld_type_unknown;
        }
        return ck->slots[s].type ? ck->slots[s].type : &pld_type_unknown;
    }
    const ck_const_t *c = pld_ck_find_const(ck, nm);
    if (c) {
        switch (c->kind) {
        case CK_C_INT: return scalar(ck, PLD_DT_INDEX);
        case CK_C_FLOAT: return scalar(ck, PLD_DT_FP32);
        case CK_C_BOOL: return scalar(ck, PLD_DT_BOOL);
        case CK_C_DYN: return scalar(ck, PLD_DT_INDEX);
        default: return &pld_type_unknown;
        }
    }
    if ((ck->alias_pl && strcmp(nm, ck->alias_pl) == 0) || (ck->alias_pld && strcmp(nm, ck->alias_pld) == 0) ||
        strcmp(nm, "pl") == 0 || strcmp(nm, "pld") == 0) {
        pld_ck_error(ck, e->span, "module '%s' cannot be used as a value", nm);
        return &pld_type_unknown;
    }
    if (strcmp(nm, "inf") == 0 || strcmp(nm, "nan") == 0)
        return scalar(ck, PLD_DT_FP32);
    pld_diag_t *d = pld_ck_error(ck, e->span, "name '%s' is not defined", nm);
    /* did you mean: locals, then constants */
    const char *best = NULL;
    size_t nl = strlen(nm);
    int bestd = nl <= 2 ? 1 : nl <= 5 ? 2 : 3; /* a suggestion must share most of the name */
    for (int i = 0; i < ck->nslots; i++) {
        int dd = pld_edit_distance(nm, ck->slots[i].name);
        if (dd < bestd) {
            bestd = dd;
            best = ck->slots[i].name;
        }
    }
    for (int i = 0; i < ck->nconsts; i++) {
        int dd = pld_edit_distance(nm, ck->consts[i].name);
        if (dd < bestd) {
            bestd = dd;
            best = ck->consts[i].name;
        }
    }
    if (best)
        pld_diag_note(&ck->p->diags, d, e->span, "did you mean '%s'?", best);
    return &pld_type_unknown;
}

static const pld_type_t *check_binary(pld_ck_t *ck, pld_expr_t *e)
{
    const pld_type_t *a = pld_ck_expr(ck, e->u.bin.a);
    const pld_type_t *b = pld_ck_expr(ck, e->u.bin.b);
    pld_binop_t op = e->u.bin.op;
    for (int i = 0; i < 2; i++) {
        const pld_type_t *t = i ? b : a;
        if (t->kind == PLD_TY_TILE || pld_type_is_tensorlike(t)) {
            static const char *const names[] = {[PLD_OP_ADD] = "pl.add", [PLD_OP_SUB] = "pl.sub",
                                                [PLD_OP_MUL] = "pl.mul", [PLD_OP_DIV] = "pl.div"};
            const char *hint = op <= PLD_OP_DIV ? names[op] : NULL;
            if (hint)
                pld_ck_error(ck, e->span, "operators do not apply to %s; use %s(...)", kind_word(t) + 2, hint);
            else
                pld_ck_error(ck, e->span, "operators do not apply to %s", kind_word(t) + 2);
            return &pld_type_unknown;
        }
    }
    if (op >= PLD_OP_EQ)
        return scalar(ck, PLD_DT_BOOL);
    if (a->kind != PLD_TY_SCALAR || b->kind != PLD_TY_SCALAR)
        return a->kind == PLD_TY_SCALAR ? a : b->kind == PLD_TY_SCALAR ? b : &pld_type_unknown;
    pld_dtype_t dt = pld_dtype_promote(a->dtype, b->dtype);
    if (op == PLD_OP_DIV && !pld_dtype_is_float(dt))
        dt = PLD_DT_FP32;
    if (e->u.bin.a->kind == PLD_EX_INT && e->u.bin.b->kind != PLD_EX_INT)
        dt = b->dtype == PLD_DT_NONE ? dt : pld_dtype_promote(PLD_DT_INDEX, b->dtype);
    return scalar(ck, dt);
}

const pld_type_t *pld_ck_expr(pld_ck_t *ck, pld_expr_t *e)
{
    switch (e->kind) {
    case PLD_EX_INT: return set_type(e, scalar(ck, PLD_DT_INDEX));
    case PLD_EX_FLOAT: return set_type(e, scalar(ck, PLD_DT_FP32));
    case PLD_EX_BOOL: return set_type(e, scalar(ck, PLD_DT_BOOL));
    case PLD_EX_NONE: return set_type(e, scalar(ck, PLD_DT_TASK_ID));
    case PLD_EX_STR:
    case PLD_EX_ELLIPSIS:
        return set_type(e, &pld_type_unknown);
    case PLD_EX_NAME: return set_type(e, check_name(ck, e));
    case PLD_EX_UNARY: {
        const pld_type_t *t = pld_ck_expr(ck, e->u.un.a);
        if (t->kind == PLD_TY_TILE || pld_type_is_tensorlike(t)) {
            pld_ck_error(ck, e->span, "operators do not apply to %s; use pl.neg(...)", kind_word(t) + 2);
            return set_type(e, &pld_type_unknown);
        }
        return set_type(e, e->u.un.op == PLD_UOP_NOT ? scalar(ck, PLD_DT_BOOL) : t);
    }
    case PLD_EX_BINARY: return set_type(e, check_binary(ck, e));
    case PLD_EX_CALL: return set_type(e, check_call(ck, e));
    case PLD_EX_ATTR: {
        /* enum members, dtypes, memory spaces: values the ops read by kind */
        char b[256];
        const char *d = dotted(ck, e, b, sizeof b);
        if (d && (strncmp(d, "pl.", 3) == 0 || strncmp(d, "pld.", 4) == 0))
            return set_type(e, &pld_type_unknown);
        if (d && strcmp(d, "math.inf") == 0) /* fillpad's pad_value sugar */
            return set_type(e, scalar(ck, PLD_DT_FP32));
        const pld_type_t *t = pld_ck_expr(ck, e->u.attr.obj);
        if (t->kind != PLD_TY_UNKNOWN)
            pld_ck_error(ck, e->span, "attribute '%s' of %s is not supported", e->u.attr.attr, kind_word(t));
        return set_type(e, &pld_type_unknown);
    }
    case PLD_EX_SUBSCRIPT: return set_type(e, check_subscript(ck, e));
    case PLD_EX_SLICE:
        pld_ck_error(ck, e->span, "a slice is only valid inside a subscript");
        return set_type(e, &pld_type_unknown);
    case PLD_EX_LIST:
    case PLD_EX_TUPLE: {
        pld_type_t *t = pld_type_new(ck->p, PLD_TY_TUPLE);
        const pld_type_t **el = pld_arena_alloc(&ck->p->arena, sizeof *el * (size_t)(e->u.seq.n + 1));
        if (!t || !el)
            return set_type(e, &pld_type_unknown);
        for (int i = 0; i < e->u.seq.n; i++)
            el[i] = pld_ck_expr(ck, e->u.seq.items[i]);
        t->nelems = e->u.seq.n;
        t->elems = el;
        return set_type(e, t);
    }
    case PLD_EX_DICT:
        for (int i = 0; i < e->u.dict.n; i++)
            pld_ck_expr(ck, e->u.dict.vals[i]);
        return set_type(e, &pld_type_unknown);
    case PLD_EX_COND: /* the parser reads it in module constants only */
        pld_ck_error(ck, e->u.cond.if_span, "conditional expressions (a if c else b) are not supported; use an if "
                                           "statement");
        return set_type(e, &pld_type_unknown);
    }
    return set_type(e, &pld_type_unknown);
}
