/* pld_check.c - the checker's driver: module constants and imports, function
 * headers (decorators, levels, parameter types), name slots, statements,
 * control flow, dispatch (self.f(...)) and the window-buffer assignment form. */
#include "pld_check_int.h"
#include "pld_parse.h"
#include "pld_mem.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ diagnostics */

static pld_diag_t *vdiag(pld_ck_t *ck, pld_severity_t sev, pld_span_t sp, const char *fmt, va_list ap)
{
    pld_buf_t b;
    pld_buf_init(&b);
    pld_buf_vprintf(&b, fmt, ap);
    pld_diag_t *d = pld_diag_add(&ck->p->diags, sev, sp, "%s", pld_buf_str(&b));
    pld_buf_fini(&b);
    return d;
}

pld_diag_t *ck_error(pld_ck_t *ck, pld_span_t sp, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pld_diag_t *d = vdiag(ck, PLD_SEV_ERROR, sp, fmt, ap);
    va_end(ap);
    return d;
}

pld_diag_t *ck_warn(pld_ck_t *ck, pld_span_t sp, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pld_diag_t *d = vdiag(ck, PLD_SEV_WARNING, sp, fmt, ap);
    va_end(ap);
    return d;
}

void ck_note_fn(pld_ck_t *ck, pld_diag_t *d)
{
    if (d && ck->fn)
        pld_diag_note(&ck->p->diags, d, ck->fn->name_span, "in function '%s'", ck->fn->name);
}

const char *ck_tystr(const pld_type_t *t)
{
    static char ring[4][256];
    static int k;
    char *out = ring[k++ & 3];
    pld_buf_t b;
    pld_buf_init(&b);
    pld_type_print(t, &b);
    snprintf(out, 256, "%s", pld_buf_str(&b));
    pld_buf_fini(&b);
    return out;
}

/* ------------------------------------------------------------ names */

const ck_const_t *ck_find_const(pld_ck_t *ck, const char *name)
{
    for (int i = ck->nconsts - 1; i >= 0; i--)
        if (ck->consts[i].name == name || strcmp(ck->consts[i].name, name) == 0)
            return &ck->consts[i];
    return NULL;
}

int ck_find_slot(pld_ck_t *ck, const char *name)
{
    for (int i = 0; i < ck->nslots; i++)
        if (ck->slots[i].name == name)
            return i;
    return -1;
}

static int add_slot(pld_ck_t *ck, const char *name)
{
    int s = ck_find_slot(ck, name);
    if (s >= 0)
        return s;
    if (ck->nslots == ck->capslots) {
        int cap = ck->capslots ? ck->capslots * 2 : 32;
        ck_slot_t *ns = pld_mem_realloc(ck->slots, (size_t)cap * sizeof *ns);
        if (!ns) {
            ck->oom = 1;
            return -1;
        }
        ck->slots = ns;
        ck->capslots = cap;
    }
    ck_slot_t *sl = &ck->slots[ck->nslots];
    memset(sl, 0, sizeof *sl);
    sl->name = name;
    sl->winbuf = -1;
    return ck->nslots++;
}

/* Collects every name a statement list assigns (Python: function-wide locals). */
static void collect_target(pld_ck_t *ck, const pld_expr_t *t)
{
    if (t->kind == PLD_EX_NAME)
        add_slot(ck, t->u.name);
    else if (t->kind == PLD_EX_TUPLE || t->kind == PLD_EX_LIST)
        for (int i = 0; i < t->u.seq.n; i++)
            collect_target(ck, t->u.seq.items[i]);
}

static void collect_block(pld_ck_t *ck, const pld_block_t *b)
{
    for (int i = 0; i < b->n; i++) {
        const pld_stmt_t *s = b->stmts[i];
        switch (s->kind) {
        case PLD_ST_ASSIGN:
            collect_target(ck, s->u.assign.target);
            break;
        case PLD_ST_IF:
            collect_block(ck, &s->u.if_.then);
            collect_block(ck, &s->u.if_.els);
            break;
        case PLD_ST_WHILE:
            collect_block(ck, &s->u.while_.body);
            break;
        case PLD_ST_FOR:
            collect_target(ck, s->u.for_.target);
            collect_block(ck, &s->u.for_.body);
            break;
        case PLD_ST_WITH:
            if (s->u.with.as_name)
                add_slot(ck, s->u.with.as_name);
            collect_block(ck, &s->u.with.body);
            break;
        default:
            break;
        }
    }
}

/* ------------------------------------------------------------ module level */

static int is_call_to(pld_ck_t *ck, const pld_expr_t *e, const char *name)
{
    char b[256];
    if (!e || e->kind != PLD_EX_CALL || !pld_ast_dotted(e->u.call.fn, b, sizeof b))
        return 0;
    const char *dot = strchr(b, '.');
    if (!dot)
        return strcmp(b, name) == 0;
    /* normalise the module alias */
    const char *mod = (ck->alias_pl && strncmp(b, ck->alias_pl, (size_t)(dot - b)) == 0 &&
                       strlen(ck->alias_pl) == (size_t)(dot - b)) ? "pl"
                      : (ck->alias_pld && strncmp(b, ck->alias_pld, (size_t)(dot - b)) == 0 &&
                         strlen(ck->alias_pld) == (size_t)(dot - b)) ? "pld" : NULL;
    char full[300];
    snprintf(full, sizeof full, "%s%s", mod ? mod : "", mod ? dot : b);
    return strcmp(full, name) == 0;
}

static void check_imports(pld_ck_t *ck)
{
    pld_program_t *p = ck->p;
    ck->alias_pl = pld_ast_intern_cstr(p, "pl");
    ck->alias_pld = pld_ast_intern_cstr(p, "pld");
    for (int i = 0; i < p->nimports; i++) {
        const pld_import_t *im = &p->imports[i];
        if (!im->from_name && strcmp(im->module, "pypto.language") == 0) {
            ck->alias_pl = im->alias ? im->alias : im->module;
        } else if (!im->from_name && strcmp(im->module, "pypto.language.distributed") == 0) {
            ck->alias_pld = im->alias ? im->alias : im->module;
        } else if (im->from_name && strcmp(im->module, "pypto") == 0 && strcmp(im->from_name, "language") == 0) {
            ck->alias_pl = im->alias;
        } else if (im->from_name && strcmp(im->module, "pypto.language") == 0 && strcmp(im->from_name, "distributed") == 0) {
            ck->alias_pld = im->alias;
        } else if (strncmp(im->module, "pypto", 5) == 0 || strcmp(im->module, "__future__") == 0) {
            /* other pypto imports (e.g. DataType) are harmless */
        } else {
            ck_warn(ck, im->span, "import of '%s' is ignored (pldrun reads only pypto.language and "
                                  "pypto.language.distributed)", im->module);
        }
    }
}

static void check_consts(pld_ck_t *ck)
{
    pld_program_t *p = ck->p;
    ck->consts = pld_arena_alloc(&p->arena, sizeof(ck_const_t) * (size_t)(p->nconsts + 1));
    if (!ck->consts) {
        ck->oom = 1;
        return;
    }
    ck->nconsts = 0;
    for (int i = 0; i < p->nconsts; i++) {
        const pld_const_decl_t *cd = &p->consts[i];
        ck_const_t c;
        memset(&c, 0, sizeof c);
        c.name = cd->name;
        c.span = cd->span;
        c.expr = cd->value;
        const pld_expr_t *v = cd->value;
        int64_t iv;
        ck->fold_overflow = 0;
        if (is_call_to(ck, v, "pl.dynamic")) {
            c.kind = CK_C_DYN;
            if (v->u.call.nargs != 1 || v->u.call.args[0].value->kind != PLD_EX_STR)
                ck_error(ck, v->span, "pl.dynamic takes one string: %s = pl.dynamic(\"%s\")", cd->name, cd->name);
            else if (strcmp(v->u.call.args[0].value->u.str.s, cd->name) != 0)
                ck_warn(ck, v->span, "dynamic dimension '%s' is bound to the name '%s'; the IR names it by its string",
                        v->u.call.args[0].value->u.str.s, cd->name);
        } else if (ck_const_int(ck, v, &iv)) {
            c.kind = v->kind == PLD_EX_BOOL ? CK_C_BOOL : CK_C_INT;
            c.i = iv;
        } else if (ck->fold_overflow) {
            c.kind = CK_C_BAD;
            ck_error(ck, v->span, "module constant '%s' overflows int64 (PyPTO integers are 64-bit)", cd->name);
        } else if (v->kind == PLD_EX_FLOAT || (v->kind == PLD_EX_UNARY && v->u.un.a->kind == PLD_EX_FLOAT)) {
            c.kind = CK_C_FLOAT;
            c.f = v->kind == PLD_EX_FLOAT ? v->u.fval : -v->u.un.a->u.fval;
        } else if (v->kind == PLD_EX_STR) {
            c.kind = CK_C_STR;
        } else if (v->kind == PLD_EX_LIST || v->kind == PLD_EX_TUPLE) {
            c.kind = CK_C_EXPR;
        } else {
            char b[128];
            pld_dtype_t dt = PLD_DT_NONE;
            if (pld_ast_dotted(v, b, sizeof b) && strchr(b, '.'))
                dt = pld_dtype_from_name(strrchr(b, '.') + 1);
            if (dt != PLD_DT_NONE) {
                c.kind = CK_C_DTYPE;
                c.dt = dt;
            } else if (v->kind == PLD_EX_BINARY || v->kind == PLD_EX_UNARY) {
                /* float arithmetic over constants: keep as an expression */
                c.kind = CK_C_EXPR;
            } else {
                c.kind = CK_C_BAD;
                ck_error(ck, v->span, "module constant '%s' must be a literal, pl.dynamic(...), or arithmetic over "
                                      "earlier constants", cd->name);
            }
        }
        ck->consts[ck->nconsts++] = c;
    }
}

/* ------------------------------------------------------------ annotations */

static const pld_type_t *ann_type(pld_ck_t *ck, const pld_expr_t *a, pld_dir_t *dir, int top);

static const char *ann_head(pld_ck_t *ck, const pld_expr_t *e, char *buf, size_t n)
{
    if (!pld_ast_dotted(e, buf, n))
        return NULL;
    const char *dot = strchr(buf, '.');
    if (!dot)
        return buf;
    size_t f = (size_t)(dot - buf);
    if ((ck->alias_pl && strlen(ck->alias_pl) == f && strncmp(buf, ck->alias_pl, f) == 0)) {
        memmove(buf + 2, dot, strlen(dot) + 1);
        buf[0] = 'p';
        buf[1] = 'l';
    } else if (ck->alias_pld && strlen(ck->alias_pld) == f && strncmp(buf, ck->alias_pld, f) == 0) {
        memmove(buf + 3, dot, strlen(dot) + 1);
        memcpy(buf, "pld", 3);
    }
    return buf;
}

/* A shape dimension in an annotation: constants, dynamic dims (declared or
 * implicit, as pl.parse's _AutoDynVar does), scalar parameters, expressions. */
static void ann_dim(pld_ck_t *ck, pld_expr_t *e, pld_dim_t *d)
{
    int64_t v;
    memset(d, 0, sizeof *d);
    if (ck_const_int(ck, e, &v)) {
        d->kind = PLD_DIM_CONST;
        d->v = v;
        if (v <= 0)
            ck_error(ck, e->span, "shape dimension must be positive, found %lld", (long long)v);
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
    /* check the expression's names exist (calls like pld.system.world_size() are fine) */
}

static int ann_dims(pld_ck_t *ck, pld_expr_t *list, pld_dim_t **out)
{
    if (list->kind == PLD_EX_NAME) {
        const ck_const_t *c = ck_find_const(ck, list->u.name);
        if (c && c->kind == CK_C_EXPR)
            list = (pld_expr_t *)c->expr;
    }
    if (list->kind != PLD_EX_LIST && list->kind != PLD_EX_TUPLE) {
        ck_error(ck, list->span, "expected a shape list such as [4, 64]");
        return -1;
    }
    int r = list->u.seq.n;
    if (r > PLD_CK_MAX_RANK) {
        ck_error(ck, list->span, "rank %d is above the supported maximum of %d", r, PLD_CK_MAX_RANK);
        return -1;
    }
    pld_dim_t *d = pld_dims_new(ck->p, r);
    if (!d) {
        ck->oom = 1;
        return -1;
    }
    for (int i = 0; i < r; i++)
        ann_dim(ck, list->u.seq.items[i], &d[i]);
    *out = d;
    return r;
}

static pld_dtype_t ann_dtype(pld_ck_t *ck, const pld_expr_t *e)
{
    char b[128];
    if (e->kind == PLD_EX_NAME) {
        const ck_const_t *c = ck_find_const(ck, e->u.name);
        if (c && c->kind == CK_C_DTYPE)
            return c->dt;
        return pld_dtype_from_name(e->u.name);
    }
    const char *h = ann_head(ck, e, b, sizeof b);
    if (h && strncmp(h, "pl.", 3) == 0 && !strchr(h + 3, '.'))
        return pld_dtype_from_name(h + 3);
    return PLD_DT_NONE;
}

static const pld_type_t *ann_shaped(pld_ck_t *ck, const pld_expr_t *a, pld_type_kind_t kind, pld_expr_t **items, int n)
{
    if (n < 2) {
        ck_error(ck, a->span, "incomplete type annotation: expected [shape, dtype, ...]");
        return &pld_type_unknown;
    }
    pld_dim_t *dims = NULL;
    int r = ann_dims(ck, items[0], &dims);
    if (r < 0)
        return &pld_type_unknown;
    pld_dtype_t dt = ann_dtype(ck, items[1]);
    if (dt == PLD_DT_NONE) {
        ck_error(ck, items[1]->span, "expected a dtype such as pl.FP32 in the type annotation");
        return &pld_type_unknown;
    }
    pld_type_t *t = pld_type_new(ck->p, kind);
    if (!t) {
        ck->oom = 1;
        return &pld_type_unknown;
    }
    t->dtype = dt;
    t->rank = r;
    t->shape = dims;
    for (int i = 2; i < n; i++) {
        pld_expr_t *x = items[i];
        char b[128];
        const char *h = NULL;
        if (x->kind == PLD_EX_CALL)
            h = ann_head(ck, x->u.call.fn, b, sizeof b);
        else
            h = ann_head(ck, x, b, sizeof b);
        if (x->kind == PLD_EX_STR)
            continue; /* "window_buffer=<name>" marker */
        if (h && (strncmp(h, "pl.Mem.", 7) == 0 || strncmp(h, "pl.MemorySpace.", 15) == 0)) {
            int m = pld_mem_from_name(strrchr(h, '.') + 1);
            if (m < 0)
                ck_error(ck, x->span, "unknown memory space '%s'", strrchr(h, '.') + 1);
            else
                t->mem = (pld_mem_t)m;
            continue;
        }
        if (h && (strcmp(h, "pl.TileView") == 0 || strcmp(h, "pl.TensorView") == 0) && x->kind == PLD_EX_CALL) {
            for (int j = 0; j < x->u.call.nargs; j++) {
                pld_arg_t *ar = &x->u.call.args[j];
                if (ar->kw && strcmp(ar->kw, "valid_shape") == 0) {
                    pld_dim_t *vd = NULL;
                    int vr = ann_dims(ck, ar->value, &vd);
                    if (vr >= 0 && vr != r)
                        ck_error(ck, ar->value->span, "valid_shape has %d entries but the shape has rank %d", vr, r);
                    else if (vr >= 0)
                        t->valid = vd;
                } else if (ar->kw && strcmp(ar->kw, "stride") == 0) {
                    t->has_stride = ar->value->kind == PLD_EX_LIST && ar->value->u.seq.n > 0;
                } else if (ar->kw && strcmp(ar->kw, "layout") == 0) {
                    char lb[128];
                    const char *lh = ann_head(ck, ar->value, lb, sizeof lb);
                    if (lh && strstr(lh, ".DN"))
                        t->layout = 1;
                    else if (lh && strstr(lh, ".NZ"))
                        t->layout = 2;
                }
            }
            continue;
        }
        if (h && (strncmp(h, "pl.TensorLayout.", 16) == 0 || strcmp(h, "pl.NZ") == 0 || strcmp(h, "pl.DN") == 0 ||
                  strcmp(h, "pl.ND") == 0)) {
            t->layout = strstr(h, "DN") ? 1 : strstr(h, "NZ") ? 2 : 0;
            continue;
        }
        /* MemRefs and other layout details are accepted and ignored */
    }
    return t;
}

/* Resolves a type annotation. `dir` receives pl.Out / pl.InOut (top level only). */
static const pld_type_t *ann_type(pld_ck_t *ck, const pld_expr_t *a, pld_dir_t *dir, int top)
{
    char b[256];
    if (a->kind == PLD_EX_SUBSCRIPT) {
        const char *h = ann_head(ck, a->u.sub.obj, b, sizeof b);
        pld_expr_t **items = a->u.sub.items;
        int n = a->u.sub.n;
        if (n == 1 && (items[0]->kind == PLD_EX_TUPLE) && h && (strcmp(h, "pl.Tuple") != 0 && strcmp(h, "tuple") != 0)) {
            items = items[0]->u.seq.items;
            n = items ? a->u.sub.items[0]->u.seq.n : 0;
        }
        if (!h) {
            ck_error(ck, a->span, "unsupported type annotation");
            return &pld_type_unknown;
        }
        if (strcmp(h, "pl.Out") == 0 || strcmp(h, "pl.InOut") == 0) {
            if (!top || n != 1) {
                ck_error(ck, a->span, "%s[...] wraps exactly one parameter type", h);
                return &pld_type_unknown;
            }
            const pld_type_t *inner = ann_type(ck, items[0], NULL, 0);
            if (inner->kind == PLD_TY_SCALAR) {
                ck_error(ck, a->span, "%s cannot wrap pl.Scalar: scalars are passed by value", h);
                return inner;
            }
            if (dir)
                *dir = strcmp(h, "pl.Out") == 0 ? PLD_DIR_OUT : PLD_DIR_INOUT;
            return inner;
        }
        if (strcmp(h, "pl.Tensor") == 0)
            return ann_shaped(ck, a, PLD_TY_TENSOR, items, n);
        if (strcmp(h, "pld.DistributedTensor") == 0)
            return ann_shaped(ck, a, PLD_TY_DTENSOR, items, n);
        if (strcmp(h, "pl.Tile") == 0)
            return ann_shaped(ck, a, PLD_TY_TILE, items, n);
        if (strcmp(h, "pl.Scalar") == 0) {
            pld_dtype_t dt = n == 1 ? ann_dtype(ck, items[0]) : PLD_DT_NONE;
            if (dt == PLD_DT_NONE) {
                ck_error(ck, a->span, "pl.Scalar[...] needs one dtype, e.g. pl.Scalar[pl.INT32]");
                return &pld_type_unknown;
            }
            return pld_type_scalar(ck->p, dt);
        }
        if (strcmp(h, "pl.Tuple") == 0 || strcmp(h, "tuple") == 0) {
            pld_type_t *t = pld_type_new(ck->p, PLD_TY_TUPLE);
            int cnt = n;
            pld_expr_t **its = items;
            if (n == 1 && items[0]->kind == PLD_EX_TUPLE) {
                cnt = items[0]->u.seq.n;
                its = items[0]->u.seq.items;
            }
            const pld_type_t **el = pld_arena_alloc(&ck->p->arena, sizeof *el * (size_t)(cnt + 1));
            if (!t || !el) {
                ck->oom = 1;
                return &pld_type_unknown;
            }
            for (int i = 0; i < cnt; i++)
                el[i] = ann_type(ck, its[i], NULL, 0);
            t->nelems = cnt;
            t->elems = el;
            return t;
        }
        if (strcmp(h, "pl.Array") == 0) {
            pld_type_t *t = pld_type_new(ck->p, PLD_TY_ARRAY);
            int64_t len = 0;
            if (!t || n != 2 || !ck_const_int(ck, items[0], &len)) {
                ck_error(ck, a->span, "pl.Array[...] needs a constant length and a dtype");
                return &pld_type_unknown;
            }
            t->array_len = len;
            t->dtype = ann_dtype(ck, items[1]);
            return t;
        }
        ck_error(ck, a->span, "unknown type '%s'", h);
        return &pld_type_unknown;
    }
    if (a->kind == PLD_EX_CALL) { /* legacy pl.Tensor((shape), dtype) */
        const char *h = ann_head(ck, a->u.call.fn, b, sizeof b);
        pld_expr_t *items[8];
        int n = a->u.call.nargs < 8 ? a->u.call.nargs : 8;
        for (int i = 0; i < n; i++)
            items[i] = a->u.call.args[i].value;
        if (h && strcmp(h, "pl.Tensor") == 0)
            return ann_shaped(ck, a, PLD_TY_TENSOR, items, n);
        if (h && strcmp(h, "pl.Tile") == 0)
            return ann_shaped(ck, a, PLD_TY_TILE, items, n);
        if (h && strcmp(h, "pl.Scalar") == 0 && n == 1)
            return pld_type_scalar(ck->p, ann_dtype(ck, items[0]));
        ck_error(ck, a->span, "unsupported type annotation");
        return &pld_type_unknown;
    }
    const char *h = ann_head(ck, a, b, sizeof b);
    if (h) {
        if (strcmp(h, "pl.Ptr") == 0 || strcmp(h, "pld.WindowBufferType") == 0)
            return &pld_type_ptr;
        if (strcmp(h, "pld.CommCtxType") == 0 || strcmp(h, "pld.CommCtx") == 0)
            return &pld_type_commctx;
        if (strcmp(h, "pl.MemRefType") == 0 || strcmp(h, "pl.UnknownType") == 0 || strcmp(h, "pl.PrefetchAsyncContext") == 0 ||
            strcmp(h, "pl.AsyncEvent") == 0 || strcmp(h, "pl.AsyncSession") == 0)
            return &pld_type_unknown;
        pld_dtype_t dt = ann_dtype(ck, a);
        if (dt != PLD_DT_NONE) /* bare dtype annotation (older docs) */
            return pld_type_scalar(ck->p, dt);
        if (strcmp(h, "pl.Tensor") == 0 || strcmp(h, "pl.Tile") == 0 || strcmp(h, "pld.DistributedTensor") == 0 ||
            strcmp(h, "pl.Scalar") == 0) {
            ck_error(ck, a->span, "incomplete type annotation '%s': add [shape, dtype]", h);
            return &pld_type_unknown;
        }
    }
    ck_error(ck, a->span, "unsupported type annotation");
    return &pld_type_unknown;
}

/* ------------------------------------------------------------ functions */

static int fn_ctx_of(const pld_func_t *f);

typedef struct fn_info {
    pld_func_t *f;
    int bad_header;            /* the decorator was wrong: the body is not checked */
    const pld_type_t **ptypes;
    const pld_type_t *ret;     /* tuple for several returns, none when absent */
    int ctx;                   /* PLD_CTX_* of its body; 0 for raw SubWorkers */
} fn_info_t;

typedef struct ck_prog {
    fn_info_t *fns;
    int nfns;
} ck_prog_t;

static ck_prog_t *prog(pld_ck_t *ck)
{
    return (ck_prog_t *)ck->p->sema;
}

static void prog_free(void *v)
{
    ck_prog_t *pr = v;
    if (!pr)
        return;
    pld_mem_free(pr->fns);
    pld_mem_free(pr);
}

static const char *enum_tail(pld_ck_t *ck, const pld_expr_t *e, const char *enum_name, pld_diag_t **d)
{
    char b[128];
    (void)d;
    const char *h = ann_head(ck, e, b, sizeof b);
    if (!h)
        return NULL;
    const char *last = strrchr(h, '.');
    if (!last)
        return NULL;
    /* require ...<enum_name>.<member> */
    size_t el = strlen(enum_name);
    if ((size_t)(last - h) < el || strncmp(last - el, enum_name, el) != 0)
        return NULL;
    return pld_ast_intern_cstr(ck->p, last + 1);
}

static void check_decorator(pld_ck_t *ck, pld_func_t *f)
{
    char b[128];
    const pld_expr_t *d = f->deco;
    const pld_expr_t *head = d->kind == PLD_EX_CALL ? d->u.call.fn : d;
    const char *h = ann_head(ck, head, b, sizeof b);
    int ftype = PLD_FT_OPAQUE;
    pld_level_t level = PLD_LV_NONE;
    pld_role_t role = PLD_ROLE_NONE;
    int have_level = 0, have_role = 0;
    if (!h || (strcmp(h, "pl.function") != 0 && strcmp(h, "function") != 0 && strcmp(h, "pl.inline") != 0 &&
               strcmp(h, "pl.jit") != 0)) {
        ck_error(ck, f->deco_span, "expected @pl.function(...) on '%s'", f->name);
    }
    if (f->is_inline) {
        ck_error(ck, f->deco_span, "@pl.inline helpers are not supported yet; write the code in the calling function");
        return;
    }
    if (d->kind == PLD_EX_CALL) {
        for (int i = 0; i < d->u.call.nargs; i++) {
            const pld_arg_t *a = &d->u.call.args[i];
            if (!a->kw) {
                ck_error(ck, a->value->span, "@pl.function takes keyword arguments only");
                continue;
            }
            if (strcmp(a->kw, "type") == 0) {
                const char *t = enum_tail(ck, a->value, "FunctionType", NULL);
                int ft = t ? pld_ftype_from_name(t) : -1;
                if (ft < 0)
                    ck_error(ck, a->value->span, "type= must be pl.FunctionType.<Opaque|Orchestration|InCore|AIC|AIV|Group|Spmd|Inline|Graph>");
                else
                    ftype = ft;
            } else if (strcmp(a->kw, "level") == 0) {
                if (a->value->kind == PLD_EX_NONE)
                    continue;
                const char *t = enum_tail(ck, a->value, "Level", NULL);
                level = t ? pld_level_from_name(t) : PLD_LV_NONE;
                if (level == PLD_LV_NONE)
                    ck_error(ck, a->value->span, "level= must be pl.Level.<AIV|AIC|CORE_GROUP|CHIP_DIE|CHIP|HOST|...>");
                have_level = 1;
            } else if (strcmp(a->kw, "role") == 0) {
                if (a->value->kind == PLD_EX_NONE)
                    continue;
                const char *t = enum_tail(ck, a->value, "Role", NULL);
                if (t && strcmp(t, "Orchestrator") == 0)
                    role = PLD_ROLE_ORCHESTRATOR;
                else if (t && strcmp(t, "SubWorker") == 0)
                    role = PLD_ROLE_SUBWORKER;
                else
                    ck_error(ck, a->value->span, "role= must be pl.Role.Orchestrator or pl.Role.SubWorker");
                have_role = 1;
            } else if (strcmp(a->kw, "auto_scope") == 0 || strcmp(a->kw, "external_source") == 0 ||
                       strcmp(a->kw, "strict_ssa") == 0 || strcmp(a->kw, "attrs") == 0) {
                /* accepted */
            } else {
                static const char *const kws[] = {"type", "level", "role", "auto_scope", "external_source", "strict_ssa", "attrs"};
                pld_diag_t *dd = ck_error(ck, a->kw_span, "@pl.function got an unexpected keyword argument '%s'", a->kw);
                for (size_t k = 0; k < sizeof kws / sizeof kws[0]; k++)
                    if (pld_edit_distance(a->kw, kws[k]) <= 2) {
                        pld_diag_note(&ck->p->diags, dd, a->kw_span, "did you mean '%s'?", kws[k]);
                        break;
                    }
            }
        }
    }
    /* derived level/role (the IR Function constructor's rule) */
    pld_level_t dl = PLD_LV_NONE;
    pld_role_t dr = PLD_ROLE_NONE;
    switch (ftype) {
    case PLD_FT_INCORE: dl = PLD_LV_CHIP_DIE; dr = PLD_ROLE_SUBWORKER; break;
    case PLD_FT_AIC: dl = PLD_LV_AIC; dr = PLD_ROLE_SUBWORKER; break;
    case PLD_FT_AIV: dl = PLD_LV_AIV; dr = PLD_ROLE_SUBWORKER; break;
    case PLD_FT_GROUP: dl = PLD_LV_CORE_GROUP; dr = PLD_ROLE_SUBWORKER; break;
    case PLD_FT_ORCHESTRATION: case PLD_FT_GRAPH: dl = PLD_LV_CHIP; dr = PLD_ROLE_ORCHESTRATOR; break;
    default: break;
    }
    if (dl != PLD_LV_NONE) {
        if ((have_level && level != dl) || (have_role && role != dr))
            ck_error(ck, f->deco_span, "%s %s function has level %s and role %s; the decorator says otherwise",
                     ftype == PLD_FT_INCORE || ftype == PLD_FT_AIC || ftype == PLD_FT_AIV || ftype == PLD_FT_ORCHESTRATION ? "an" : "a",
                     pld_ftype_name((pld_ftype_t)ftype), pld_level_name(dl),
                     dr == PLD_ROLE_ORCHESTRATOR ? "Orchestrator" : "SubWorker");
        level = dl;
        role = dr;
    }
    f->ftype = ftype;
    f->level = level;
    f->role = role;
}

int pld_check_func_ctx(const pld_func_t *f)
{
    return fn_ctx_of(f);
}

static int fn_ctx_of(const pld_func_t *f)
{
    if (f->is_raw)
        return 0;
    if (f->level >= PLD_LV_HOST)
        return f->role == PLD_ROLE_SUBWORKER ? 0 : PLD_CTX_HOST;
    if (f->ftype == PLD_FT_ORCHESTRATION || f->ftype == PLD_FT_GRAPH || f->level == PLD_LV_CHIP)
        return PLD_CTX_CHIP;
    if (f->ftype == PLD_FT_OPAQUE && f->level == PLD_LV_NONE)
        return PLD_CTX_CHIP;
    return PLD_CTX_KERNEL;
}

/* "a HOST orchestrator", "an InCore kernel", ... */
static const char *fn_kind_word(const fn_info_t *fi)
{
    switch (fi->ctx) {
    case PLD_CTX_HOST: return "a HOST orchestrator";
    case PLD_CTX_CHIP: return "a CHIP orchestration function";
    case PLD_CTX_KERNEL: return "an InCore kernel";
    default: return "a SubWorker";
    }
}

static void check_header(pld_ck_t *ck, fn_info_t *fi)
{
    pld_func_t *f = fi->f;
    int before = ck->p->diags.n_errors;
    if (f->deco)
        check_decorator(ck, f);
    fi->bad_header = ck->p->diags.n_errors > before;
    fi->ctx = fn_ctx_of(f);
    fi->ptypes = pld_arena_alloc(&ck->p->arena, sizeof *fi->ptypes * (size_t)(f->nparams + 1));
    if (!fi->ptypes) {
        ck->oom = 1;
        return;
    }
    int seen_scalar = -1;
    for (int i = 0; i < f->nparams; i++) {
        pld_param_t *pp = &f->params[i];
        pld_dir_t dir = PLD_DIR_IN;
        const pld_type_t *t = ann_type(ck, pp->ann, &dir, 1);
        if (dir != PLD_DIR_IN && t->kind != PLD_TY_UNKNOWN) {
            pld_type_t *c = pld_type_new(ck->p, t->kind);
            if (c) {
                *c = *t;
                c->dir = dir;
                t = c;
            }
        }
        fi->ptypes[i] = t;
        pp->type = t;
        if (t->kind == PLD_TY_SCALAR && seen_scalar < 0)
            seen_scalar = i;
        else if ((pld_type_is_tensorlike(t)) && seen_scalar >= 0 && fi->ctx != PLD_CTX_HOST && fi->ctx != 0) {
            pld_diag_t *d = ck_error(ck, pp->span, "tensor parameter '%s' follows scalar parameter '%s'; scalars must "
                                                   "come after every tensor in a kernel or orchestration signature",
                                     pp->name, f->params[seen_scalar].name);
            (void)d;
            seen_scalar = -2; /* report once */
        }
    }
    if (f->ret_ann)
        fi->ret = ann_type(ck, f->ret_ann, NULL, 0);
    else
        fi->ret = &pld_type_none;
}

static fn_info_t *find_fn(pld_ck_t *ck, const char *name)
{
    ck_prog_t *pr = prog(ck);
    for (int i = 0; i < pr->nfns; i++)
        if (pr->fns[i].f->name == name)
            return &pr->fns[i];
    return NULL;
}

/* deps=[t0, t1, ...] of a task launch: TaskIds (pl.at/pl.spmd `as` names,
 * the last result of pl.submit), checked in the issuing function's context. */
static void check_deps(pld_ck_t *ck, pld_expr_t *d, int ctx)
{
    int saved = ck->ctx;
    ck->ctx = ctx;
    if (d->kind != PLD_EX_LIST && d->kind != PLD_EX_TUPLE) {
        ck_error(ck, d->span, "deps must be a list of TaskIds, e.g. deps=[wait_tid]");
    } else {
        for (int i = 0; i < d->u.seq.n; i++) {
            const pld_type_t *t = ck_expr(ck, d->u.seq.items[i]);
            if (t && t->kind != PLD_TY_UNKNOWN && !(t->kind == PLD_TY_SCALAR && t->dtype == PLD_DT_TASK_ID))
                ck_error(ck, d->u.seq.items[i]->span, "deps item %d must be a TaskId (a pl.at(...) as name, or the "
                                                      "last result of pl.submit), found %s",
                         i, ck_tystr(t));
        }
    }
    ck->ctx = saved;
}

/* Checks the positional arguments of a call of fi (from index `first`). */
static void check_call_args(pld_ck_t *ck, pld_expr_t *e, fn_info_t *fi, const pld_type_t **argt, int first)
{
    const char *name = fi->f->name;
    int k = 0;
    for (int i = first; i < e->u.call.nargs; i++) {
        const pld_arg_t *a = &e->u.call.args[i];
        if (a->kw)
            continue;
        const pld_type_t *want = fi->ptypes[k], *got = argt[i];
        const pld_param_t *pp = &fi->f->params[k];
        k++;
        if (got->kind == PLD_TY_UNKNOWN || want->kind == PLD_TY_UNKNOWN)
            continue;
        int ok = want->kind == got->kind || (want->kind == PLD_TY_TENSOR && got->kind == PLD_TY_DTENSOR) ||
                 (want->kind == PLD_TY_SCALAR && got->kind == PLD_TY_SCALAR);
        if (!ok) {
            pld_diag_t *d = ck_error(ck, a->value->span, "argument '%s' of self.%s expects %s, got %s", pp->name, name,
                                     ck_tystr(want), ck_tystr(got));
            pld_diag_note(&ck->p->diags, d, pp->span, "parameter declared here");
            continue;
        }
        if (pld_type_is_tensorlike(want) && want->dtype != got->dtype) {
            ck_error(ck, a->value->span, "argument '%s' of self.%s expects dtype %s, got %s", pp->name, name,
                     pld_dtype_name(want->dtype), pld_dtype_name(got->dtype));
            continue;
        }
        if (pld_type_is_tensorlike(want) && want->rank == got->rank) {
            for (int j = 0; j < want->rank; j++)
                if (pld_dim_eq(&want->shape[j], &got->shape[j]) == 0) {
                    ck_error(ck, a->value->span, "argument '%s' of self.%s expects %s, got %s", pp->name, name,
                             ck_tystr(want), ck_tystr(got));
                    break;
                }
        } else if (pld_type_is_tensorlike(want) && got->rank != want->rank) {
            /* a window view of another rank is the same bytes seen with the
             * parameter's shape (catalog §4.2.3), when the sizes agree */
            int64_t nw = pld_type_static_numel(want), ng = pld_type_static_numel(got);
            if (got->kind != PLD_TY_DTENSOR)
                ck_error(ck, a->value->span, "argument '%s' of self.%s expects rank %d (%s), got rank %d (%s)",
                         pp->name, name, want->rank, ck_tystr(want), got->rank, ck_tystr(got));
            else if (nw >= 0 && ng >= 0 && nw != ng)
                ck_error(ck, a->value->span,
                         "argument '%s' of self.%s expects %lld elements (%s), got a window view of %lld (%s)",
                         pp->name, name, (long long)nw, ck_tystr(want), (long long)ng, ck_tystr(got));
        }
    }
}

/* self.f(args..., [device=r], [attrs={...}]) */
const pld_type_t *ck_dispatch_call(pld_ck_t *ck, pld_expr_t *e, const pld_type_t **argt)
{
    const char *name = e->u.call.fn->u.attr.attr;
    fn_info_t *fi = find_fn(ck, name);
    if (!fi) {
        pld_diag_t *d = ck_error(ck, e->span, "the program has no function '%s'", name);
        ck_prog_t *pr = prog(ck);
        for (int i = 0; i < pr->nfns; i++)
            if (pld_edit_distance(name, pr->fns[i].f->name) <= 2) {
                pld_diag_note(&ck->p->diags, d, e->u.call.fn->span, "did you mean 'self.%s'?", pr->fns[i].f->name);
                break;
            }
        return &pld_type_unknown;
    }
    e->aux = (int32_t)(fi - prog(ck)->fns); /* == index in p->funcs */
    const pld_expr_t *device = NULL;
    int npos = 0;
    for (int i = 0; i < e->u.call.nargs; i++) {
        const pld_arg_t *a = &e->u.call.args[i];
        if (!a->kw) {
            npos++;
            continue;
        }
        if (strcmp(a->kw, "device") == 0)
            device = a->value;
        else if (strcmp(a->kw, "attrs") != 0) {
            ck_error(ck, a->kw_span, "a call to self.%s accepts only device= and attrs= keywords, not '%s'", name, a->kw);
            return &pld_type_unknown;
        }
    }
    /* level rules of the call graph */
    int callee = fi->ctx;
    if (callee == 0) {
        ck_error(ck, e->span, "'%s' is a SubWorker (host Python code) and cannot be run by pldrun", name);
        return &pld_type_unknown;
    }
    if (device && ck->ctx != PLD_CTX_HOST) {
        ck_error(ck, device->span, "device= is only allowed on a dispatch from the HOST orchestrator");
        return &pld_type_unknown;
    }
    if (device && callee != PLD_CTX_CHIP) {
        ck_error(ck, device->span, "device= dispatch needs a CHIP orchestration function, but '%s' is %s", name,
                 fn_kind_word(fi));
        return &pld_type_unknown;
    }
    if (ck->ctx == PLD_CTX_HOST && callee == PLD_CTX_KERNEL) {
        pld_diag_t *d = ck_error(ck, e->span, "the HOST orchestrator cannot call the InCore kernel '%s' directly; "
                                              "dispatch a CHIP orchestration function with device=r", name);
        (void)d;
        return &pld_type_unknown;
    }
    if (ck->ctx == PLD_CTX_KERNEL && callee != PLD_CTX_KERNEL) {
        ck_error(ck, e->span, "a kernel cannot call '%s', which is %s", name, fn_kind_word(fi));
        return &pld_type_unknown;
    }
    if (ck->ctx == PLD_CTX_CHIP && callee == PLD_CTX_HOST) {
        ck_error(ck, e->span, "a CHIP orchestration function cannot call the HOST orchestrator '%s'", name);
        return &pld_type_unknown;
    }
    if (device) {
        int64_t dv;
        if (ck_const_int(ck, device, &dv) && (dv < 0 || (ck->opts.ranks > 0 && dv >= ck->opts.ranks)))
            ck_error(ck, device->span, "device=%lld is outside the rank range [0, %d)", (long long)dv,
                     ck->opts.ranks > 0 ? ck->opts.ranks : 1);
    }
    if (npos != fi->f->nparams) {
        pld_diag_t *d = ck_error(ck, e->span, "self.%s takes %d argument%s but %d %s given", name, fi->f->nparams,
                                 fi->f->nparams == 1 ? "" : "s", npos, npos == 1 ? "was" : "were");
        pld_diag_note(&ck->p->diags, d, fi->f->name_span, "'%s' is defined here", name);
        return fi->ret;
    }
    check_call_args(ck, e, fi, argt, 0);
    return fi->ret;
}

const pld_type_t *ck_submit_call(pld_ck_t *ck, pld_expr_t *e, const pld_type_t **argt)
{
    const char *what = e->op == PLD_OPID_PL_SPMD_SUBMIT ? "pl.spmd_submit" : "pl.submit";
    int n = e->u.call.nargs;
    const pld_expr_t *k = n > 0 && !e->u.call.args[0].kw ? e->u.call.args[0].value : NULL;
    if (!k || k->kind != PLD_EX_ATTR || k->u.attr.obj->kind != PLD_EX_NAME || strcmp(k->u.attr.obj->u.name, "self") != 0) {
        ck_error(ck, e->span, "%s needs the kernel as its first argument: %s(self.kernel, ...)", what, what);
        return &pld_type_unknown;
    }
    fn_info_t *fi = find_fn(ck, k->u.attr.attr);
    if (!fi) {
        ck_error(ck, k->span, "the program has no function '%s'", k->u.attr.attr);
        return &pld_type_unknown;
    }
    if (fi->ctx != PLD_CTX_KERNEL) {
        ck_error(ck, k->span, "%s submits a kernel, but '%s' is %s", what, fi->f->name, fn_kind_word(fi));
        return &pld_type_unknown;
    }
    if (ck->ctx == PLD_CTX_KERNEL) {
        ck_error(ck, e->span, "%s can only be used in an orchestration function", what);
        return &pld_type_unknown;
    }
    static const char *const kws[] = {"deps", "dumps", "allow_early_resolve", "predicate", "attrs", "core_num", "sync_start"};
    int npos = 0, have_core = 0;
    for (int i = 1; i < n; i++) {
        const pld_arg_t *a = &e->u.call.args[i];
        if (!a->kw) {
            npos++;
            continue;
        }
        int known = 0;
        for (size_t j = 0; j < sizeof kws / sizeof kws[0]; j++)
            known |= strcmp(a->kw, kws[j]) == 0;
        if (!known || ((strcmp(a->kw, "core_num") == 0 || strcmp(a->kw, "sync_start") == 0) && e->op != PLD_OPID_PL_SPMD_SUBMIT)) {
            ck_error(ck, a->kw_span, "%s got an unexpected keyword argument '%s'", what, a->kw);
            return &pld_type_unknown;
        }
        have_core |= strcmp(a->kw, "core_num") == 0;
        if (strcmp(a->kw, "deps") == 0)
            check_deps(ck, a->value, ck->ctx);
    }
    if (e->op == PLD_OPID_PL_SPMD_SUBMIT && !have_core)
        ck_error(ck, e->span, "pl.spmd_submit needs core_num=...");
    e->aux = (int32_t)(fi - prog(ck)->fns); /* == index in p->funcs */
    if (npos != fi->f->nparams) {
        pld_diag_t *d = ck_error(ck, e->span, "%s of '%s' passes %d argument%s but the kernel takes %d", what,
                                 fi->f->name, npos, npos == 1 ? "" : "s", fi->f->nparams);
        pld_diag_note(&ck->p->diags, d, fi->f->name_span, "'%s' is defined here", fi->f->name);
        return &pld_type_unknown;
    }
    check_call_args(ck, e, fi, argt, 1);
    int nr = fi->ret->kind == PLD_TY_TUPLE ? fi->ret->nelems : fi->ret->kind == PLD_TY_NONE ? 0 : 1;
    pld_type_t *t = pld_type_new(ck->p, PLD_TY_TUPLE);
    const pld_type_t **el = pld_arena_alloc(&ck->p->arena, sizeof *el * (size_t)(nr + 2));
    if (!t || !el)
        return &pld_type_unknown;
    for (int i = 0; i < nr; i++)
        el[i] = fi->ret->kind == PLD_TY_TUPLE ? fi->ret->elems[i] : fi->ret;
    el[nr] = pld_type_scalar(ck->p, PLD_DT_TASK_ID);
    t->nelems = nr + 1;
    t->elems = el;
    return t;
}

/* ------------------------------------------------------------ statements */

static void check_block(pld_ck_t *ck, pld_block_t *b);

static int is_op_call(pld_ck_t *ck, const pld_expr_t *e, int id)
{
    char buf[256];
    if (!e || e->kind != PLD_EX_CALL || !pld_ast_dotted(e->u.call.fn, buf, sizeof buf))
        return 0;
    const char *h = ann_head(ck, e->u.call.fn, buf, sizeof buf);
    return h && pld_op_lookup(h) == id;
}

static void assign_name(pld_ck_t *ck, pld_expr_t *target, const pld_type_t *t)
{
    int s = ck_find_slot(ck, target->u.name);
    if (s < 0)
        return;
    target->slot = s;
    target->type = t;
    ck_slot_t *sl = &ck->slots[s];
    if (sl->type && t && sl->type->kind != PLD_TY_UNKNOWN && t->kind != PLD_TY_UNKNOWN && t->kind != PLD_TY_NONE) {
        int a = sl->type->kind, b = t->kind;
        int tens_a = a == PLD_TY_TENSOR || a == PLD_TY_DTENSOR, tens_b = b == PLD_TY_TENSOR || b == PLD_TY_DTENSOR;
        if (a != b && !(tens_a && tens_b)) {
            ck_error(ck, target->span, "cannot reassign '%s' (%s) with a value of a different kind (%s)",
                     target->u.name, ck_tystr(sl->type), ck_tystr(t));
        }
    }
    if (t && t->kind == PLD_TY_NONE) {
        ck_error(ck, target->span, "the value assigned to '%s' has no result (the op only has side effects)", target->u.name);
        t = &pld_type_unknown;
    }
    if (!sl->type || sl->type->kind == PLD_TY_UNKNOWN)
        sl->type = t;
    sl->defined = 1;
}

static void assign_targets(pld_ck_t *ck, pld_expr_t *target, const pld_type_t *t, pld_span_t value_span)
{
    if (target->kind == PLD_EX_NAME) {
        assign_name(ck, target, t);
        return;
    }
    if (target->kind == PLD_EX_TUPLE || target->kind == PLD_EX_LIST) {
        int n = target->u.seq.n;
        if (t->kind == PLD_TY_TUPLE && t->nelems != n) {
            ck_error(ck, value_span, "cannot unpack %d value%s into %d name%s", t->nelems, t->nelems == 1 ? "" : "s",
                     n, n == 1 ? "" : "s");
            t = &pld_type_unknown;
        } else if (t->kind != PLD_TY_TUPLE && t->kind != PLD_TY_UNKNOWN) {
            ck_error(ck, value_span, "cannot unpack %s into %d names", ck_tystr(t), n);
            t = &pld_type_unknown;
        }
        for (int i = 0; i < n; i++)
            assign_targets(ck, target->u.seq.items[i], t->kind == PLD_TY_TUPLE ? t->elems[i] : &pld_type_unknown, value_span);
        return;
    }
    if (target->kind == PLD_EX_SUBSCRIPT) {
        /* t[...] = v : tensor/tile window write or array element write */
        const pld_type_t *ot = ck_expr(ck, target->u.sub.obj);
        for (int i = 0; i < target->u.sub.n; i++) {
            pld_expr_t *it = target->u.sub.items[i];
            if (it->kind == PLD_EX_SLICE) {
                if (it->u.slice.lo)
                    ck_expr(ck, it->u.slice.lo);
                if (it->u.slice.hi)
                    ck_expr(ck, it->u.slice.hi);
            } else {
                ck_expr(ck, it);
            }
        }
        if (ot->kind != PLD_TY_UNKNOWN && ot->kind != PLD_TY_TENSOR && ot->kind != PLD_TY_DTENSOR &&
            ot->kind != PLD_TY_TILE && ot->kind != PLD_TY_ARRAY)
            ck_error(ck, target->span, "cannot assign into %s", ck_tystr(ot));
        else if (pld_type_is_tensorlike(ot) && t->kind == PLD_TY_TENSOR && t->dtype != ot->dtype)
            ck_error(ck, value_span, "cannot assemble a %s tensor into a %s tensor", pld_dtype_name(t->dtype),
                     pld_dtype_name(ot->dtype));
        if (target->u.sub.obj->kind == PLD_EX_NAME && ck_find_slot(ck, target->u.sub.obj->u.name) < 0 &&
            ot->kind != PLD_TY_UNKNOWN)
            ck_error(ck, target->span, "cannot assign into '%s'", target->u.sub.obj->u.name);
        return;
    }
    ck_error(ck, target->span, "cannot assign to this expression");
}

/* `buf = pld.alloc_window_buffer(...)`: HOST only, single name, unique program-wide. */
static void window_alloc(pld_ck_t *ck, pld_stmt_t *s)
{
    pld_expr_t *v = s->u.assign.value;
    for (int i = 0; i < v->u.call.nargs; i++)
        if (v->u.call.args[i].kw && strcmp(v->u.call.args[i].kw, "name") == 0) {
            ck_error(ck, v->u.call.args[i].kw_span, "the 'name' argument of pld.alloc_window_buffer cannot be passed "
                                                    "explicitly: the assigned variable names the buffer");
            return;
        }
    const pld_type_t *t = ck_expr(ck, v);
    if (t->kind == PLD_TY_UNKNOWN && ck->ctx != PLD_CTX_HOST)
        return; /* level error already reported */
    if (s->u.assign.target->kind != PLD_EX_NAME) {
        ck_error(ck, v->span, "pld.alloc_window_buffer must be assigned to a single variable name");
        return;
    }
    const char *name = s->u.assign.target->u.name;
    for (int i = 0; i < ck->nwinbufs; i++)
        if (ck->winbufs[i].name == name) {
            pld_diag_t *d = ck_error(ck, s->u.assign.target->span, "window buffer name '%s' is already declared in this program", name);
            pld_diag_note(&ck->p->diags, d, ck->winbufs[i].span, "first declared here");
            assign_name(ck, s->u.assign.target, &pld_type_ptr);
            ck->slots[s->u.assign.target->slot].winbuf = i;
            return;
        }
    if (ck->nwinbufs == ck->capwinbufs) {
        int cap = ck->capwinbufs ? ck->capwinbufs * 2 : 16;
        ck_winbuf_t *nw = pld_mem_realloc(ck->winbufs, (size_t)cap * sizeof *nw);
        if (!nw) {
            ck->oom = 1;
            return;
        }
        ck->winbufs = nw;
        ck->capwinbufs = cap;
    }
    ck_winbuf_t *w = &ck->winbufs[ck->nwinbufs];
    memset(w, 0, sizeof *w);
    w->name = name;
    w->span = s->u.assign.target->span;
    w->in_loop = ck->loop_depth > 0;
    w->bytes = -1;
    /* static byte size: bytes form or shape + dtype form */
    if (v->u.call.nargs >= 1 && !v->u.call.args[0].kw) {
        const pld_expr_t *a0 = v->u.call.args[0].value;
        int64_t n;
        if (a0->kind == PLD_EX_LIST || a0->kind == PLD_EX_TUPLE) {
            int64_t prod = 1;
            int ok = 1;
            for (int i = 0; i < a0->u.seq.n && ok; i++)
                ok = ck_const_int(ck, a0->u.seq.items[i], &n) && (prod *= n, 1);
            const pld_expr_t *dt = NULL;
            for (int i = 0; i < v->u.call.nargs; i++)
                if (v->u.call.args[i].kw && strcmp(v->u.call.args[i].kw, "dtype") == 0)
                    dt = v->u.call.args[i].value;
            pld_dtype_t d = dt ? ann_dtype(ck, dt) : PLD_DT_NONE;
            if (ok && d != PLD_DT_NONE)
                w->bytes = prod * pld_dtype_bytes(d);
        } else if (ck_const_int(ck, a0, &n)) {
            w->bytes = n;
            if (n <= 0)
                ck_error(ck, a0->span, "window buffer size must be positive, found %lld bytes", (long long)n);
        }
    }
    assign_name(ck, s->u.assign.target, &pld_type_ptr);
    ck->slots[s->u.assign.target->slot].winbuf = ck->nwinbufs;
    ck->nwinbufs++;
}

static int iter_kind(pld_ck_t *ck, const pld_expr_t *it)
{
    static const int kinds[] = {PLD_OPID_PL_RANGE, PLD_OPID_PL_PARALLEL, PLD_OPID_PL_UNROLL, PLD_OPID_PL_PIPELINE,
                                PLD_OPID_PL_WHILE_, PLD_OPID_PL_SPMD, PLD_OPID_PL_SPLIT_AIV};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (is_op_call(ck, it, kinds[i]))
            return kinds[i];
    return -1;
}

static const pld_expr_t *kwarg(const pld_expr_t *call, const char *kw)
{
    for (int i = 0; i < call->u.call.nargs; i++)
        if (call->u.call.args[i].kw && strcmp(call->u.call.args[i].kw, kw) == 0)
            return call->u.call.args[i].value;
    return NULL;
}

static int last_is_yield(pld_ck_t *ck, const pld_block_t *b)
{
    if (b->n == 0)
        return 0;
    const pld_stmt_t *s = b->stmts[b->n - 1];
    const pld_expr_t *v = s->kind == PLD_ST_ASSIGN ? s->u.assign.value : s->kind == PLD_ST_EXPR ? s->u.expr : NULL;
    return is_op_call(ck, v, PLD_OPID_PL_YIELD_);
}

static void check_for(pld_ck_t *ck, pld_stmt_t *s)
{
    pld_expr_t *it = s->u.for_.iter, *target = s->u.for_.target;
    int kind = iter_kind(ck, it);
    if (kind < 0) {
        char b[128];
        if (it->kind == PLD_EX_CALL && pld_ast_dotted(it->u.call.fn, b, sizeof b) && strcmp(b, "range") == 0)
            ck_error(ck, it->span, "use pl.range(...) instead of Python's range(...)");
        else
            ck_error(ck, it->span, "a for loop must iterate over pl.range, pl.parallel, pl.unroll, pl.pipeline, "
                                   "pl.while_, pl.spmd or pl.split_aiv");
        /* bind the targets anyway so the body does not report them as unassigned */
        if (target->kind == PLD_EX_NAME)
            assign_name(ck, target, pld_type_scalar(ck->p, PLD_DT_INDEX));
        else if (target->kind == PLD_EX_TUPLE)
            for (int i = 0; i < target->u.seq.n; i++)
                if (target->u.seq.items[i]->kind == PLD_EX_NAME)
                    assign_name(ck, target->u.seq.items[i], &pld_type_unknown);
        ck->loop_depth++;
        check_block(ck, &s->u.for_.body);
        ck->loop_depth--;
        return;
    }
    it->op = kind;
    const pld_op_info_t *info = pld_op_info((pld_op_id_t)kind);
    /* bind and check the iterator arguments */
    int npos = 0;
    for (int i = 0; i < it->u.call.nargs; i++) {
        pld_arg_t *a = &it->u.call.args[i];
        if (a->kw) {
            int idx = pld_op_param_index(info, a->kw);
            if (idx < 0) {
                pld_diag_t *d = ck_error(ck, a->kw_span, "%s got an unexpected keyword argument '%s'", info->name, a->kw);
                const char *sg = pld_op_suggest_param(info, a->kw);
                if (sg)
                    pld_diag_note(&ck->p->diags, d, a->kw_span, "did you mean '%s'?", sg);
            }
            if (strcmp(a->kw, "init_values") == 0) {
                if (a->value->kind != PLD_EX_LIST && a->value->kind != PLD_EX_TUPLE)
                    ck_error(ck, a->value->span, "init_values must be a tuple or list of values");
                else
                    for (int j = 0; j < a->value->u.seq.n; j++)
                        ck_expr(ck, a->value->u.seq.items[j]);
            } else if (strcmp(a->kw, "attrs") != 0 && strcmp(a->kw, "optimizations") != 0 && strcmp(a->kw, "deps") != 0 &&
                       strcmp(a->kw, "mode") != 0) {
                ck_expr(ck, a->value);
            }
            continue;
        }
        npos++;
        const pld_type_t *t = ck_expr(ck, a->value);
        if (t->kind != PLD_TY_SCALAR && t->kind != PLD_TY_UNKNOWN)
            ck_error(ck, a->value->span, "%s bounds must be scalars, found %s", info->name, ck_tystr(t));
        else if (t->kind == PLD_TY_SCALAR && pld_dtype_is_float(t->dtype))
            ck_error(ck, a->value->span, "%s bounds must be integers, found %s", info->name, pld_dtype_name(t->dtype));
    }
    int maxpos = kind == PLD_OPID_PL_WHILE_ ? 0 : kind == PLD_OPID_PL_SPMD || kind == PLD_OPID_PL_SPLIT_AIV ? 1 : 3;
    if (npos > maxpos || (npos == 0 && kind != PLD_OPID_PL_WHILE_))
        ck_error(ck, it->span, "%s takes %s", info->name,
                 kind == PLD_OPID_PL_WHILE_ ? "no positional arguments (only init_values=...)"
                 : maxpos == 1 ? "one positional argument" : "1 to 3 bounds: (stop), (start, stop) or (start, stop, step)");
    if (kind == PLD_OPID_PL_UNROLL) {
        for (int i = 0; i < it->u.call.nargs; i++) {
            int64_t v;
            if (!it->u.call.args[i].kw && !ck_const_int(ck, it->u.call.args[i].value, &v))
                ck_error(ck, it->u.call.args[i].value->span, "pl.unroll bounds must be compile-time integers");
        }
    }
    if (!it->u.call.nargs && kind != PLD_OPID_PL_WHILE_)
        (void)0;
    /* step must not be zero */
    if (npos == 3 && kind != PLD_OPID_PL_WHILE_) {
        int64_t st;
        if (ck_const_int(ck, it->u.call.args[2].value, &st) && st == 0)
            ck_error(ck, it->u.call.args[2].value->span, "%s step must not be zero", info->name);
    }
    const pld_expr_t *iv = kwarg(it, "init_values");
    int niv = iv && (iv->kind == PLD_EX_LIST || iv->kind == PLD_EX_TUPLE) ? iv->u.seq.n : 0;
    if (kind == PLD_OPID_PL_WHILE_ && niv == 0)
        ck_error(ck, it->span, "pl.while_ needs init_values=(...) with at least one value");
    if (kind == PLD_OPID_PL_UNROLL && iv)
        ck_error(ck, iv->span, "pl.unroll cannot carry init_values");
    /* targets: loop variable and iter-args */
    pld_expr_t *loopvar = NULL, *carried = NULL;
    if (kind == PLD_OPID_PL_WHILE_) {
        carried = target;
    } else if (target->kind == PLD_EX_NAME) {
        loopvar = target;
    } else if (target->kind == PLD_EX_TUPLE && target->u.seq.n == 2 && target->u.seq.items[0]->kind == PLD_EX_NAME &&
               target->u.seq.items[1]->kind == PLD_EX_TUPLE) {
        loopvar = target->u.seq.items[0];
        carried = target->u.seq.items[1];
    } else {
        ck_error(ck, target->span, "loop target must be a name, or 'i, (a, b)' with init_values");
    }
    if (carried && !iv && kind != PLD_OPID_PL_WHILE_)
        ck_error(ck, carried->span, "loop-carried names need init_values=(...) on %s", info->name);
    if (iv && !carried && kind != PLD_OPID_PL_WHILE_)
        ck_error(ck, target->span, "%s has init_values but the loop target names no carried values: write 'for i, (x,) in ...'",
                 info->name);
    if (loopvar) {
        assign_name(ck, loopvar, pld_type_scalar(ck->p, PLD_DT_INDEX));
        int ls = ck_find_slot(ck, loopvar->u.name);
        if (ls >= 0) {
            ck->slots[ls].has_cval = 0;
            ck->slots[ls].is_loopvar_world = npos == 1 && is_op_call(ck, it->u.call.args[0].value, PLD_OPID_PLD_WORLD_SIZE);
        }
    }
    if (carried) {
        int nc = carried->kind == PLD_EX_TUPLE ? carried->u.seq.n : 1;
        if (iv && nc != niv)
            ck_error(ck, carried->span, "%d loop-carried name%s but init_values has %d value%s", nc, nc == 1 ? "" : "s",
                     niv, niv == 1 ? "" : "s");
        for (int i = 0; i < nc; i++) {
            pld_expr_t *nm = carried->kind == PLD_EX_TUPLE ? carried->u.seq.items[i] : carried;
            const pld_type_t *t = iv && i < niv && iv->u.seq.items[i]->type ? iv->u.seq.items[i]->type : &pld_type_unknown;
            if (nm->kind == PLD_EX_NAME)
                assign_name(ck, nm, t);
            else
                ck_error(ck, nm->span, "loop-carried targets must be names");
        }
    }
    int saved_ctx = ck->ctx;
    if (kind == PLD_OPID_PL_SPMD || kind == PLD_OPID_PL_SPLIT_AIV) {
        ck->ctx = PLD_CTX_KERNEL;
        ck->spmd_depth++;
    }
    ck->loop_depth++;
    pld_block_t *body = &s->u.for_.body;
    int start = 0;
    if (kind == PLD_OPID_PL_WHILE_) {
        const pld_stmt_t *first = body->n ? body->stmts[0] : NULL;
        if (!first || first->kind != PLD_ST_EXPR || !is_op_call(ck, first->u.expr, PLD_OPID_PL_COND))
            ck_error(ck, first ? first->span : s->span, "the first statement of a pl.while_ body must be pl.cond(<condition>)");
        else {
            pld_expr_t *ce = first->u.expr;
            ce->op = PLD_OPID_PL_COND;
            if (ce->u.call.nargs != 1)
                ck_error(ck, ce->span, "pl.cond takes one condition");
            else
                ck_expr(ck, ce->u.call.args[0].value);
            start = 1;
        }
    }
    if (iv && !last_is_yield(ck, body) && body->n > 0 && kind != PLD_OPID_PL_WHILE_)
        (void)0; /* pre-SSA form: the carried names' last values flow on */
    pld_block_t rest = {body->stmts + start, body->n - start};
    check_block(ck, &rest);
    ck->loop_depth--;
    if (kind == PLD_OPID_PL_SPMD || kind == PLD_OPID_PL_SPLIT_AIV) {
        ck->ctx = saved_ctx;
        ck->spmd_depth--;
    }
}

static void check_with(pld_ck_t *ck, pld_stmt_t *s)
{
    pld_expr_t *it = s->u.with.item;
    int saved = ck->ctx;
    int is_spmd = 0;
    if (is_op_call(ck, it, PLD_OPID_PL_AT)) {
        it->op = PLD_OPID_PL_AT;
        const pld_expr_t *lv = kwarg(it, "level");
        if (!lv && it->u.call.nargs > 0 && !it->u.call.args[0].kw)
            lv = it->u.call.args[0].value;
        const char *t = lv ? enum_tail(ck, lv, "Level", NULL) : NULL;
        pld_level_t level = t ? pld_level_from_name(t) : PLD_LV_NONE;
        if (!lv || level == PLD_LV_NONE)
            ck_error(ck, it->span, "pl.at needs level=pl.Level.<CORE_GROUP|CHIP|HOST|...>");
        else if (level <= PLD_LV_CHIP_DIE)
            ck->ctx = PLD_CTX_KERNEL;
        else if (level == PLD_LV_CHIP)
            ck->ctx = PLD_CTX_CHIP;
        for (int i = 0; i < it->u.call.nargs; i++) {
            const pld_arg_t *a = &it->u.call.args[i];
            if (a->kw && strcmp(a->kw, "deps") == 0)
                check_deps(ck, a->value, saved);
            if (a->kw && pld_op_param_index(pld_op_info(PLD_OPID_PL_AT), a->kw) < 0) {
                pld_diag_t *d = ck_error(ck, a->kw_span, "pl.at got an unexpected keyword argument '%s'", a->kw);
                const char *sg = pld_op_suggest_param(pld_op_info(PLD_OPID_PL_AT), a->kw);
                if (sg)
                    pld_diag_note(&ck->p->diags, d, a->kw_span, "did you mean '%s'?", sg);
            }
        }
    } else if (is_op_call(ck, it, PLD_OPID_PL_SPMD)) {
        it->op = PLD_OPID_PL_SPMD;
        is_spmd = 1;
        if (it->u.call.nargs < 1 || it->u.call.args[0].kw)
            ck_error(ck, it->span, "pl.spmd needs the block count: pl.spmd(4)");
        else
            ck_expr(ck, it->u.call.args[0].value);
        const pld_expr_t *dk = kwarg(it, "deps");
        if (dk)
            check_deps(ck, (pld_expr_t *)dk, saved);
        ck->ctx = PLD_CTX_KERNEL;
    } else if (is_op_call(ck, it, PLD_OPID_PL_SCOPE) || is_op_call(ck, it, PLD_OPID_PL_MANUAL_SCOPE) ||
               is_op_call(ck, it, PLD_OPID_PL_CLUSTER)) {
        it->op = is_op_call(ck, it, PLD_OPID_PL_SCOPE) ? PLD_OPID_PL_SCOPE
                 : is_op_call(ck, it, PLD_OPID_PL_MANUAL_SCOPE) ? PLD_OPID_PL_MANUAL_SCOPE : PLD_OPID_PL_CLUSTER;
    } else {
        ck_error(ck, it->span, "unsupported 'with' item: expected pl.at(...), pl.spmd(...), pl.scope(...), "
                               "pl.manual_scope() or pl.cluster()");
    }
    if (s->u.with.as_name) {
        int sl = ck_find_slot(ck, s->u.with.as_name);
        if (sl >= 0) {
            ck->slots[sl].type = pld_type_scalar(ck->p, PLD_DT_TASK_ID);
            ck->slots[sl].defined = 1;
        }
    }
    if (is_spmd)
        ck->spmd_depth++;
    const pld_expr_t *saved_at = ck->at_scope, *saved_def = ck->deferred;
    if (it->op == PLD_OPID_PL_AT && ck->ctx == PLD_CTX_KERNEL && saved != PLD_CTX_KERNEL) {
        ck->at_scope = it;
        ck->deferred = NULL;
    }
    check_block(ck, &s->u.with.body);
    ck->at_scope = saved_at;
    ck->deferred = saved_def;
    if (is_spmd)
        ck->spmd_depth--;
    ck->ctx = saved;
}

static void check_yield_assign(pld_ck_t *ck, pld_stmt_t *s)
{
    pld_expr_t *v = s->u.assign.value;
    v->op = PLD_OPID_PL_YIELD_;
    if (ck->loop_depth == 0 && ck->if_depth == 0)
        ck_error(ck, v->span, "pl.yield_ outside a loop or if body; use a plain assignment here");
    int n = v->u.call.nargs;
    pld_type_t *tt = pld_type_new(ck->p, PLD_TY_TUPLE);
    const pld_type_t **el = pld_arena_alloc(&ck->p->arena, sizeof *el * (size_t)(n + 1));
    if (!tt || !el) {
        ck->oom = 1;
        return;
    }
    for (int i = 0; i < n; i++) {
        if (v->u.call.args[i].kw) {
            ck_error(ck, v->u.call.args[i].kw_span, "pl.yield_ takes positional values only");
            return;
        }
        el[i] = ck_expr(ck, v->u.call.args[i].value);
    }
    tt->nelems = n;
    tt->elems = el;
    v->type = tt;
    pld_expr_t *target = s->u.assign.target;
    if (target->kind == PLD_EX_NAME) {
        if (n != 1) {
            ck_error(ck, v->span, "pl.yield_ yields %d values but is assigned to one name", n);
            return;
        }
        assign_name(ck, target, el[0]);
        return;
    }
    assign_targets(ck, target, tt, v->span);
}

static void check_stmt(pld_ck_t *ck, pld_stmt_t *s)
{
    switch (s->kind) {
    case PLD_ST_EXPR: {
        pld_expr_t *e = s->u.expr;
        if (is_op_call(ck, e, PLD_OPID_PL_YIELD_)) {
            e->op = PLD_OPID_PL_YIELD_;
            if (ck->loop_depth == 0 && ck->if_depth == 0)
                ck_error(ck, e->span, "pl.yield_ outside a loop or if body; use return to leave a function");
            for (int i = 0; i < e->u.call.nargs; i++)
                ck_expr(ck, e->u.call.args[i].value);
            return;
        }
        if (is_op_call(ck, e, PLD_OPID_PL_COND)) {
            ck_error(ck, e->span, "pl.cond must be the first statement of a pl.while_ loop body");
            return;
        }
        if (is_op_call(ck, e, PLD_OPID_PLD_ALLOC_WINDOW_BUFFER)) {
            ck_error(ck, e->span, "pld.alloc_window_buffer must appear as the right-hand side of a simple assignment");
            return;
        }
        ck_expr(ck, e);
        return;
    }
    case PLD_ST_ASSIGN: {
        pld_expr_t *v = s->u.assign.value;
        if (is_op_call(ck, v, PLD_OPID_PL_YIELD_)) {
            check_yield_assign(ck, s);
            return;
        }
        if (is_op_call(ck, v, PLD_OPID_PLD_ALLOC_WINDOW_BUFFER)) {
            window_alloc(ck, s);
            return;
        }
        const pld_type_t *t = ck_expr(ck, v);
        if (s->u.assign.ann) {
            const pld_type_t *at = ann_type(ck, s->u.assign.ann, NULL, 0);
            int a = at->kind, b = t->kind;
            int tens_a = a == PLD_TY_TENSOR || a == PLD_TY_DTENSOR, tens_b = b == PLD_TY_TENSOR || b == PLD_TY_DTENSOR;
            if (a != PLD_TY_UNKNOWN && b != PLD_TY_UNKNOWN && b != PLD_TY_NONE && a != b && !(tens_a && tens_b))
                ck_error(ck, s->u.assign.ann->span, "annotation %s does not match the value's type %s", ck_tystr(at), ck_tystr(t));
            else if (a == b && (a == PLD_TY_TILE || tens_a) && at->dtype != t->dtype && t->dtype != PLD_DT_NONE)
                ck_error(ck, s->u.assign.ann->span, "annotation dtype %s does not match the value's dtype %s",
                         pld_dtype_name(at->dtype), pld_dtype_name(t->dtype));
            if (t->kind == PLD_TY_UNKNOWN)
                t = at;
        }
        assign_targets(ck, s->u.assign.target, t, v->span);
        /* constant tracking and HOST window provenance */
        if (s->u.assign.target->kind == PLD_EX_NAME && s->u.assign.target->slot >= 0) {
            ck_slot_t *sl = &ck->slots[s->u.assign.target->slot];
            int64_t cv;
            sl->has_cval = ck->loop_depth == 0 && ck_const_int(ck, v, &cv);
            sl->cval = sl->has_cval ? cv : 0;
            if (ck->ctx == PLD_CTX_HOST) {
                int w = ck_window_of(ck, v);
                if (w >= 0)
                    sl->winbuf = w;
            }
        }
        return;
    }
    case PLD_ST_RETURN: {
        const pld_type_t *ret = NULL;
        for (int i = 0; i < s->u.ret.n; i++)
            ck_expr(ck, s->u.ret.vals[i]);
        ck_prog_t *pr = prog(ck);
        for (int i = 0; i < pr->nfns; i++)
            if (pr->fns[i].f == ck->fn)
                ret = pr->fns[i].ret;
        if (ret && ck->fn->ret_ann && ck->ctx == ck->fn_ctx) {
            int want = ret->kind == PLD_TY_TUPLE ? ret->nelems : 1;
            if (s->u.ret.n != want && !(s->u.ret.n == 1 && ret->kind == PLD_TY_TUPLE))
                ck_error(ck, s->span, "'%s' returns %d value%s but its annotation declares %d", ck->fn->name, s->u.ret.n,
                         s->u.ret.n == 1 ? "" : "s", want);
        }
        return;
    }
    case PLD_ST_PASS:
        return;
    case PLD_ST_BREAK:
    case PLD_ST_CONTINUE:
        if (ck->loop_depth == 0)
            ck_error(ck, s->span, "'%s' outside a loop", s->kind == PLD_ST_BREAK ? "break" : "continue");
        return;
    case PLD_ST_IF: {
        const pld_type_t *t = ck_expr(ck, s->u.if_.cond);
        if (t->kind != PLD_TY_SCALAR && t->kind != PLD_TY_UNKNOWN)
            ck_error(ck, s->u.if_.cond->span, "an if condition must be a scalar, found %s", ck_tystr(t));
        ck->if_depth++;
        check_block(ck, &s->u.if_.then);
        check_block(ck, &s->u.if_.els);
        ck->if_depth--;
        return;
    }
    case PLD_ST_WHILE: {
        const pld_type_t *t = ck_expr(ck, s->u.while_.cond);
        if (t->kind != PLD_TY_SCALAR && t->kind != PLD_TY_UNKNOWN)
            ck_error(ck, s->u.while_.cond->span, "a while condition must be a scalar, found %s", ck_tystr(t));
        ck->loop_depth++;
        check_block(ck, &s->u.while_.body);
        ck->loop_depth--;
        return;
    }
    case PLD_ST_FOR:
        check_for(ck, s);
        return;
    case PLD_ST_WITH:
        check_with(ck, s);
        return;
    }
}

static void check_block(pld_ck_t *ck, pld_block_t *b)
{
    for (int i = 0; i < b->n && !ck->oom; i++) {
        pld_stmt_t *s = b->stmts[i];
        /* pl.func_attr({...}) only as the first statement(s) of a function body */
        if (s->kind == PLD_ST_EXPR && is_op_call(ck, s->u.expr, PLD_OPID_PL_FUNC_ATTR)) {
            s->u.expr->op = PLD_OPID_PL_FUNC_ATTR;
            if (b != &ck->fn->body || i > 0)
                ck_error(ck, s->span, "pl.func_attr may only appear at the start of a function body");
            continue;
        }
        check_stmt(ck, s);
    }
}

static void check_function(pld_ck_t *ck, fn_info_t *fi)
{
    pld_func_t *f = fi->f;
    ck->fn = f;
    ck->nslots = 0;
    ck->loop_depth = 0;
    ck->spmd_depth = 0;
    ck->at_scope = NULL;
    ck->deferred = NULL;
    ck->ctx = ck->fn_ctx = fi->ctx;
    ck->if_depth = 0;
    if (fi->ctx == 0 || fi->bad_header)
        return; /* SubWorker (raw Python), or a function whose kind is unknown */
    for (int i = 0; i < f->nparams; i++) {
        int s = add_slot(ck, f->params[i].name);
        if (s < 0)
            return;
        f->params[i].slot = s;
        ck->slots[s].type = fi->ptypes[i];
        ck->slots[s].defined = 1;
        ck->slots[s].is_param = 1;
    }
    collect_block(ck, &f->body);
    check_block(ck, &f->body);
    f->nslots = ck->nslots;
    f->slot_names = pld_arena_alloc(&ck->p->arena, sizeof *f->slot_names * (size_t)(ck->nslots + 1));
    for (int i = 0; f->slot_names && i < ck->nslots; i++)
        f->slot_names[i] = ck->slots[i].name;
    ck->fn = NULL;
}

/* 1 when a HOST body dispatches with a device= that is not the loop variable
 * of `for r in pl.range(pld.world_size())`: comm domains may then be subsets
 * of the world, so rules that compare shapes with P do not apply statically.
 * `world_vars` holds the names of the enclosing world loops. */
static int subset_dispatch_expr(const pld_expr_t *e, const char *const *world_vars, int nw)
{
    if (!e || e->kind != PLD_EX_CALL)
        return 0;
    for (int i = 0; i < e->u.call.nargs; i++) {
        const pld_arg_t *a = &e->u.call.args[i];
        if (a->kw && strcmp(a->kw, "device") == 0) {
            int world = 0;
            for (int k = 0; k < nw; k++)
                world |= a->value->kind == PLD_EX_NAME && a->value->u.name == world_vars[k];
            if (!world)
                return 1;
        }
        if (subset_dispatch_expr(a->value, world_vars, nw))
            return 1;
    }
    return 0;
}

static int subset_dispatch(const pld_block_t *b, const char **world_vars, int nw)
{
    const char *vars[32];
    for (int k = 0; k < nw && k < 32; k++)
        vars[k] = world_vars[k];
    for (int i = 0; i < b->n; i++) {
        const pld_stmt_t *s = b->stmts[i];
        switch (s->kind) {
        case PLD_ST_EXPR:
            if (subset_dispatch_expr(s->u.expr, vars, nw))
                return 1;
            break;
        case PLD_ST_ASSIGN:
            if (subset_dispatch_expr(s->u.assign.value, vars, nw))
                return 1;
            break;
        case PLD_ST_RETURN:
            for (int k = 0; k < s->u.ret.n; k++)
                if (subset_dispatch_expr(s->u.ret.vals[k], vars, nw))
                    return 1;
            break;
        case PLD_ST_IF:
            if (subset_dispatch(&s->u.if_.then, vars, nw) || subset_dispatch(&s->u.if_.els, vars, nw))
                return 1;
            break;
        case PLD_ST_WHILE:
            if (subset_dispatch(&s->u.while_.body, vars, nw))
                return 1;
            break;
        case PLD_ST_WITH:
            if (subset_dispatch(&s->u.with.body, vars, nw))
                return 1;
            break;
        case PLD_ST_FOR: {
            const pld_expr_t *it = s->u.for_.iter, *tg = s->u.for_.target;
            int n = nw;
            int npos = 0;
            const pld_expr_t *p0 = NULL;
            for (int k = 0; it && it->kind == PLD_EX_CALL && k < it->u.call.nargs; k++)
                if (!it->u.call.args[k].kw && npos++ == 0)
                    p0 = it->u.call.args[k].value;
            char b2[128];
            if (npos == 1 && tg && tg->kind == PLD_EX_NAME && p0 && p0->kind == PLD_EX_CALL &&
                pld_ast_dotted(p0->u.call.fn, b2, sizeof b2) && strstr(b2, "world_size") && n < 32)
                vars[n++] = tg->u.name;
            if (subset_dispatch(&s->u.for_.body, vars, n))
                return 1;
            break;
        }
        default:
            break;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ driver */

pld_status_t pld_check_program(pld_program_t *p, const pld_check_opts_t *opts)
{
    if (!p->parsed_ok)
        return pld_diag_has_errors(&p->diags) ? PLD_E_SYNTAX : PLD_E_NOMEM;
    int errors_before = p->diags.n_errors;
    pld_ck_t ck;
    memset(&ck, 0, sizeof ck);
    ck.p = p;
    if (opts)
        ck.opts = *opts;
    if (p->sema && p->sema_free)
        p->sema_free(p->sema);
    ck_prog_t *pr = pld_mem_calloc(1, sizeof *pr);
    if (!pr)
        return PLD_E_NOMEM;
    p->sema = pr;
    p->sema_free = prog_free;
    pr->fns = pld_mem_calloc((size_t)(p->nfuncs + 1), sizeof *pr->fns);
    if (!pr->fns)
        return PLD_E_NOMEM;
    pr->nfns = p->nfuncs;
    check_imports(&ck);
    check_consts(&ck);
    if (p->nfuncs == 0) {
        pld_span_t sp = p->class_name ? p->class_span : (pld_span_t){0, 0, 1, 1};
        ck_error(&ck, sp, p->class_name ? "the program class has no @pl.function methods"
                                        : "no @pl.program class or @pl.function found");
    }
    if (!p->class_name && p->nfuncs > 1)
        ck_error(&ck, p->funcs[1]->name_span, "a program text holds one @pl.program class or one top-level "
                                              "@pl.function, not several functions");
    for (int i = 0; i < p->nfuncs; i++) {
        pr->fns[i].f = p->funcs[i];
        for (int j = 0; j < i; j++)
            if (p->funcs[j]->name == p->funcs[i]->name) {
                pld_diag_t *d = ck_error(&ck, p->funcs[i]->name_span, "function '%s' is defined twice", p->funcs[i]->name);
                pld_diag_note(&p->diags, d, p->funcs[j]->name_span, "first defined here");
            }
    }
    for (int i = 0; i < pr->nfns && !ck.oom; i++)
        check_header(&ck, &pr->fns[i]);
    ck.dom_ranks = ck.opts.ranks;
    for (int i = 0; i < pr->nfns && ck.dom_ranks > 0; i++)
        if (pr->fns[i].ctx == PLD_CTX_HOST && subset_dispatch(&pr->fns[i].f->body, NULL, 0))
            ck.dom_ranks = 0;
    for (int i = 0; i < pr->nfns && !ck.oom; i++)
        check_function(&ck, &pr->fns[i]);
    pld_mem_free(ck.slots);
    pld_mem_free(ck.winbufs);
    if (ck.oom || p->diags.oom)
        return PLD_E_NOMEM;
    return p->diags.n_errors > errors_before || p->diags.truncated ? PLD_E_TYPE : PLD_OK;
}

pld_program_t *pld_check_text(const char *file, const char *src, size_t len, const pld_check_opts_t *opts,
                              pld_status_t *st)
{
    pld_program_t *p = pld_program_create(file, src, len);
    if (!p) {
        if (st)
            *st = PLD_E_NOMEM;
        return NULL;
    }
    pld_status_t s = pld_parse_program(p);
    if (s == PLD_OK)
        s = pld_check_program(p, opts);
    if (st)
        *st = s;
    return p;
}
