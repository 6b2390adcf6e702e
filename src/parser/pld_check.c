/* pld_check.c - the checker's declarations and driver: diagnostics, module
 * constants and imports, type annotations (parameters, returns), function
 * headers (decorators, levels), calls of the program's own functions
 * (self.f(...), pl.submit) and pld_check_program. Statements and function
 * bodies are in pld_check_stmt.c, expressions in pld_check_expr.c (their
 * types: pld_check_infer.c), the pld.* rules in pld_check_pld.c and the
 * collectives' in pld_check_coll.c (see pld_check_int.h). */
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

pld_diag_t *pld_ck_error(pld_ck_t *ck, pld_span_t sp, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pld_diag_t *d = vdiag(ck, PLD_SEV_ERROR, sp, fmt, ap);
    va_end(ap);
    return d;
}

static pld_diag_t *ck_warn(pld_ck_t *ck, pld_span_t sp, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pld_diag_t *d = vdiag(ck, PLD_SEV_WARNING, sp, fmt, ap);
    va_end(ap);
    return d;
}

void pld_ck_note_fn(pld_ck_t *ck, pld_diag_t *d)
{
    if (d && ck->fn)
        pld_diag_note(&ck->p->diags, d, ck->fn->name_span, "in function '%s'", ck->fn->name);
}

const char *pld_ck_tystr(pld_ck_t *ck, const pld_type_t *t)
{
    char *out = ck->tyring[ck->tyring_next++ & 3];
    pld_buf_t b;
    pld_buf_init(&b);
    pld_type_print(t, &b);
    snprintf(out, sizeof ck->tyring[0], "%s", pld_buf_str(&b));
    pld_buf_fini(&b);
    return out;
}

/* ------------------------------------------------------------ names */

const ck_const_t *pld_ck_find_const(pld_ck_t *ck, const char *name)
{
    for (int i = ck->nconsts - 1; i >= 0; i--)
        if (ck->consts[i].name == name || strcmp(ck->consts[i].name, name) == 0)
            return &ck->consts[i];
    return NULL;
}

int pld_ck_find_slot(pld_ck_t *ck, const char *name)
{
    for (int i = 0; i < ck->nslots; i++)
        if (ck->slots[i].name == name)
            return i;
    return -1;
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

/* Records the integer a module constant folds to as a literal node the
 * interpreter evaluates (min/max, enum members, conditionals are folded here,
 * never at run time); a BOOL literal stays a BOOL. Returns 0 on OOM. */
static int fold_literal(pld_ck_t *ck, pld_const_decl_t *cd, const pld_expr_t *v, int64_t iv)
{
    pld_expr_t *lit = pld_ast_expr(ck->p, v->kind == PLD_EX_BOOL ? PLD_EX_BOOL : PLD_EX_INT, v->span);
    if (!lit) {
        ck->oom = 1;
        return 0;
    }
    lit->height = 1;
    if (lit->kind == PLD_EX_BOOL)
        lit->u.bval = iv != 0;
    else
        lit->u.ival = iv;
    cd->folded = lit;
    return 1;
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
        pld_const_decl_t *cd = &p->consts[i];
        ck_const_t c;
        memset(&c, 0, sizeof c);
        c.name = cd->name;
        c.span = cd->span;
        const pld_expr_t *v = cd->value;
        int64_t iv;
        const char *en;
        cd->folded = NULL;
        /* A if C else B: Python evaluates it before IR construction; C must
         * be a constant, and the constant is the chosen branch */
        while (v->kind == PLD_EX_COND && pld_ck_const_int(ck, v->u.cond.cond, &iv))
            v = iv ? v->u.cond.a : v->u.cond.b;
        if (v != cd->value)
            cd->folded = (pld_expr_t *)v;
        c.expr = v;
        ck->fold_overflow = 0;
        if (v->kind == PLD_EX_COND) {
            c.kind = CK_C_BAD;
            pld_ck_error(ck, v->u.cond.cond->span, "the condition of module constant '%s' must be a constant "
                                               "(literals and arithmetic over earlier constants)", cd->name);
        } else if ((en = pld_ck_enum_member(v, &iv)) != NULL) {
            c.kind = CK_C_ENUM;
            c.enum_name = en;
            c.i = iv;
            if (iv < 0)
                pld_ck_error(ck, v->span, "'%s' is not a member of %s", v->u.attr.attr, en);
            else if (!fold_literal(ck, cd, v, iv))
                return;
        } else if (is_call_to(ck, v, "pl.dynamic")) {
            c.kind = CK_C_DYN;
            if (v->u.call.nargs != 1 || v->u.call.args[0].value->kind != PLD_EX_STR)
                pld_ck_error(ck, v->span, "pl.dynamic takes one string: %s = pl.dynamic(\"%s\")", cd->name, cd->name);
            else if (strcmp(v->u.call.args[0].value->u.str.s, cd->name) != 0)
                ck_warn(ck, v->span, "dynamic dimension '%s' is bound to the name '%s'; the IR names it by its string",
                        v->u.call.args[0].value->u.str.s, cd->name);
        } else if (pld_ck_const_int(ck, v, &iv)) {
            c.kind = v->kind == PLD_EX_BOOL ? CK_C_BOOL : CK_C_INT;
            c.i = iv;
            if (v->kind != PLD_EX_INT && v->kind != PLD_EX_BOOL && !fold_literal(ck, cd, v, iv))
                return;
        } else if (ck->fold_overflow) {
            c.kind = CK_C_BAD;
            pld_ck_error(ck, v->span, "module constant '%s' overflows int64 (PyPTO integers are 64-bit)", cd->name);
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
                pld_ck_error(ck, v->span, "module constant '%s' must be a literal, pl.dynamic(...), or arithmetic over "
                                      "earlier constants", cd->name);
            }
        }
        ck->consts[ck->nconsts++] = c;
    }
}

/* ------------------------------------------------------------ annotations */

const char *pld_ck_ann_head(pld_ck_t *ck, const pld_expr_t *e, char *buf, size_t n)
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

/* The pl.const(v, dtype) calls of a dimension expression (PyPTO's printer
 * writes `NR * pl.const(64, pl.INDEX)`) resolved to their op, so that the
 * run evaluates them where the expression is needed (binding the entry's
 * parameters, sizes before the HOST orchestrator starts). */
static void ann_resolve_consts(pld_ck_t *ck, pld_expr_t *e)
{
    char b[128];
    if (!e)
        return;
    switch (e->kind) {
    case PLD_EX_BINARY:
        ann_resolve_consts(ck, e->u.bin.a);
        ann_resolve_consts(ck, e->u.bin.b);
        break;
    case PLD_EX_UNARY:
        ann_resolve_consts(ck, e->u.un.a);
        break;
    case PLD_EX_CALL: {
        const char *h = pld_ck_ann_head(ck, e->u.call.fn, b, sizeof b);
        if (h && strcmp(h, "pl.const") == 0 && e->u.call.nargs == 2 && !e->u.call.args[0].kw)
            e->op = PLD_OPID_PL_CONST;
        for (int i = 0; i < e->u.call.nargs; i++)
            ann_resolve_consts(ck, e->u.call.args[i].value);
        break;
    }
    default:
        break;
    }
}

/* A shape dimension in an annotation: constants, dynamic dims (declared or
 * implicit, as pl.parse's _AutoDynVar does), scalar parameters, expressions. */
static void ann_dim(pld_ck_t *ck, pld_expr_t *e, pld_dim_t *d)
{
    int64_t v;
    memset(d, 0, sizeof *d);
    if (pld_ck_const_int(ck, e, &v)) {
        d->kind = PLD_DIM_CONST;
        d->v = v;
        if (v <= 0)
            pld_ck_error(ck, e->span, "shape dimension must be positive, found %lld", (long long)v);
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
    ann_resolve_consts(ck, e);
    /* check the expression's names exist (calls like pld.system.world_size() are fine) */
}

static int ann_dims(pld_ck_t *ck, pld_expr_t *list, pld_dim_t **out)
{
    if (list->kind == PLD_EX_NAME) {
        const ck_const_t *c = pld_ck_find_const(ck, list->u.name);
        if (c && c->kind == CK_C_EXPR)
            list = (pld_expr_t *)c->expr;
    }
    if (list->kind != PLD_EX_LIST && list->kind != PLD_EX_TUPLE) {
        pld_ck_error(ck, list->span, "expected a shape list such as [4, 64]");
        return -1;
    }
    int r = list->u.seq.n;
    if (r > PLD_CK_MAX_RANK) {
        pld_ck_error(ck, list->span, "rank %d is above the supported maximum of %d", r, PLD_CK_MAX_RANK);
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

pld_dtype_t pld_ck_ann_dtype(pld_ck_t *ck, const pld_expr_t *e)
{
    char b[128];
    if (e->kind == PLD_EX_NAME) {
        const ck_const_t *c = pld_ck_find_const(ck, e->u.name);
        if (c && c->kind == CK_C_DTYPE)
            return c->dt;
        return pld_dtype_from_name(e->u.name);
    }
    const char *h = pld_ck_ann_head(ck, e, b, sizeof b);
    if (h && strncmp(h, "pl.", 3) == 0 && !strchr(h + 3, '.'))
        return pld_dtype_from_name(h + 3);
    return PLD_DT_NONE;
}

/* The layout code (pld_type.layout) of a layout name: pl.ND / pl.DN / pl.NZ /
 * pl.MX_A_ZZ / pl.MX_B_NN, also spelled pl.TensorLayout.X (another
 * pl.TensorLayout.X reads as ND); -1 when h is none. */
static int layout_code(const char *h)
{
    static const char *const names[] = {"ND", "DN", "NZ", "MX_A_ZZ", "MX_B_NN"};
    int qualified = h && strncmp(h, "pl.TensorLayout.", 16) == 0;
    if (!h || (!qualified && strncmp(h, "pl.", 3) != 0))
        return -1;
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
        if (strcmp(h + (qualified ? 16 : 3), names[i]) == 0)
            return i;
    return qualified ? 0 : -1;
}

static const pld_type_t *ann_shaped(pld_ck_t *ck, const pld_expr_t *a, pld_type_kind_t kind, pld_expr_t **items, int n)
{
    if (n < 2) {
        pld_ck_error(ck, a->span, "incomplete type annotation: expected [shape, dtype, ...]");
        return &pld_type_unknown;
    }
    pld_dim_t *dims = NULL;
    int r = ann_dims(ck, items[0], &dims);
    if (r < 0)
        return &pld_type_unknown;
    pld_dtype_t dt = pld_ck_ann_dtype(ck, items[1]);
    if (dt == PLD_DT_NONE) {
        pld_ck_error(ck, items[1]->span, "expected a dtype such as pl.FP32 in the type annotation");
        return &pld_type_unknown;
    }
    if (!pld_ck_shape_size(ck, items[0]->span, "type annotation", dims, r, dt, NULL))
        return &pld_type_unknown;
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
            h = pld_ck_ann_head(ck, x->u.call.fn, b, sizeof b);
        else
            h = pld_ck_ann_head(ck, x, b, sizeof b);
        if (x->kind == PLD_EX_STR)
            continue; /* "window_buffer=<name>" marker */
        if (h && (strncmp(h, "pl.Mem.", 7) == 0 || strncmp(h, "pl.MemorySpace.", 15) == 0)) {
            int m = pld_mem_from_name(strrchr(h, '.') + 1);
            if (m < 0)
                pld_ck_error(ck, x->span, "unknown memory space '%s'", strrchr(h, '.') + 1);
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
                        pld_ck_error(ck, ar->value->span, "valid_shape has %d entries but the shape has rank %d", vr, r);
                    else if (vr >= 0)
                        t->valid = vd;
                } else if (ar->kw && strcmp(ar->kw, "stride") == 0) {
                    t->has_stride = ar->value->kind == PLD_EX_LIST && ar->value->u.seq.n > 0;
                } else if (ar->kw && strcmp(ar->kw, "layout") == 0) {
                    char lb[128];
                    int lay = layout_code(pld_ck_ann_head(ck, ar->value, lb, sizeof lb));
                    if (lay > 0)
                        t->layout = lay;
                }
            }
            continue;
        }
        if (layout_code(h) >= 0) {
            t->layout = layout_code(h);
            continue;
        }
        /* MemRefs and other layout details are accepted and ignored */
    }
    return t;
}

/* Resolves a type annotation. `dir` receives pl.Out / pl.InOut (top level only). */
const pld_type_t *pld_ck_ann_type(pld_ck_t *ck, const pld_expr_t *a, pld_dir_t *dir, int top)
{
    char b[256];
    if (a->kind == PLD_EX_SUBSCRIPT) {
        const char *h = pld_ck_ann_head(ck, a->u.sub.obj, b, sizeof b);
        pld_expr_t **items = a->u.sub.items;
        int n = a->u.sub.n;
        if (n == 1 && (items[0]->kind == PLD_EX_TUPLE) && h && (strcmp(h, "pl.Tuple") != 0 && strcmp(h, "tuple") != 0)) {
            items = items[0]->u.seq.items;
            n = items ? a->u.sub.items[0]->u.seq.n : 0;
        }
        if (!h) {
            pld_ck_error(ck, a->span, "unsupported type annotation");
            return &pld_type_unknown;
        }
        if (strcmp(h, "pl.Out") == 0 || strcmp(h, "pl.InOut") == 0) {
            if (!top || n != 1) {
                pld_ck_error(ck, a->span, "%s[...] wraps exactly one parameter type", h);
                return &pld_type_unknown;
            }
            const pld_type_t *inner = pld_ck_ann_type(ck, items[0], NULL, 0);
            if (inner->kind == PLD_TY_SCALAR) {
                pld_ck_error(ck, a->span, "%s cannot wrap pl.Scalar: scalars are passed by value", h);
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
            pld_dtype_t dt = n == 1 ? pld_ck_ann_dtype(ck, items[0]) : PLD_DT_NONE;
            if (dt == PLD_DT_NONE) {
                pld_ck_error(ck, a->span, "pl.Scalar[...] needs one dtype, e.g. pl.Scalar[pl.INT32]");
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
                el[i] = pld_ck_ann_type(ck, its[i], NULL, 0);
            t->nelems = cnt;
            t->elems = el;
            return t;
        }
        if (strcmp(h, "pl.Array") == 0) {
            pld_type_t *t = pld_type_new(ck->p, PLD_TY_ARRAY);
            int64_t len = 0;
            if (!t || n != 2 || !pld_ck_const_int(ck, items[0], &len)) {
                pld_ck_error(ck, a->span, "pl.Array[...] needs a constant length and a dtype");
                return &pld_type_unknown;
            }
            t->array_len = len;
            t->dtype = pld_ck_ann_dtype(ck, items[1]);
            return t;
        }
        pld_ck_error(ck, a->span, "unknown type '%s'", h);
        return &pld_type_unknown;
    }
    if (a->kind == PLD_EX_CALL) { /* legacy pl.Tensor((shape), dtype) */
        const char *h = pld_ck_ann_head(ck, a->u.call.fn, b, sizeof b);
        pld_expr_t *items[8];
        int n = a->u.call.nargs < 8 ? a->u.call.nargs : 8;
        for (int i = 0; i < n; i++)
            items[i] = a->u.call.args[i].value;
        if (h && strcmp(h, "pl.Tensor") == 0)
            return ann_shaped(ck, a, PLD_TY_TENSOR, items, n);
        if (h && strcmp(h, "pl.Tile") == 0)
            return ann_shaped(ck, a, PLD_TY_TILE, items, n);
        if (h && strcmp(h, "pl.Scalar") == 0 && n == 1)
            return pld_type_scalar(ck->p, pld_ck_ann_dtype(ck, items[0]));
        pld_ck_error(ck, a->span, "unsupported type annotation");
        return &pld_type_unknown;
    }
    const char *h = pld_ck_ann_head(ck, a, b, sizeof b);
    if (h) {
        if (strcmp(h, "pl.Ptr") == 0 || strcmp(h, "pld.WindowBufferType") == 0)
            return &pld_type_ptr;
        if (strcmp(h, "pld.CommCtxType") == 0 || strcmp(h, "pld.CommCtx") == 0)
            return &pld_type_commctx;
        /* the prefetch handles, by their DSL or IR type name (PyPTO's type_resolver.py) */
        static const struct {
            const char *name;
            const pld_type_t *t;
        } handles[] = {{"pl.PrefetchAsyncContext", &pld_type_prefetch_ctx}, {"pl.PrefetchAsyncContextType", &pld_type_prefetch_ctx},
                       {"pl.AsyncEvent", &pld_type_async_event}, {"pl.AsyncEventType", &pld_type_async_event},
                       {"pl.AsyncSession", &pld_type_async_session}, {"pl.AsyncSessionType", &pld_type_async_session}};
        for (size_t i = 0; i < sizeof handles / sizeof handles[0]; i++)
            if (strcmp(h, handles[i].name) == 0)
                return handles[i].t;
        if (strcmp(h, "pl.MemRefType") == 0 || strcmp(h, "pl.UnknownType") == 0)
            return &pld_type_unknown;
        pld_dtype_t dt = pld_ck_ann_dtype(ck, a);
        if (dt != PLD_DT_NONE) /* bare dtype annotation (older docs) */
            return pld_type_scalar(ck->p, dt);
        if (strcmp(h, "pl.Tensor") == 0 || strcmp(h, "pl.Tile") == 0 || strcmp(h, "pld.DistributedTensor") == 0 ||
            strcmp(h, "pl.Scalar") == 0) {
            pld_ck_error(ck, a->span, "incomplete type annotation '%s': add [shape, dtype]", h);
            return &pld_type_unknown;
        }
    }
    pld_ck_error(ck, a->span, "unsupported type annotation");
    return &pld_type_unknown;
}

/* ------------------------------------------------------------ functions */

static int fn_ctx_of(const pld_func_t *f);

static void prog_free(void *v)
{
    ck_prog_t *pr = v;
    if (!pr)
        return;
    pld_mem_free(pr->fns);
    pld_mem_free(pr);
}

const char *pld_ck_enum_tail(pld_ck_t *ck, const pld_expr_t *e, const char *enum_name, pld_diag_t **d)
{
    char b[128];
    (void)d;
    const char *h = pld_ck_ann_head(ck, e, b, sizeof b);
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
    const char *h = pld_ck_ann_head(ck, head, b, sizeof b);
    int ftype = PLD_FT_OPAQUE;
    pld_level_t level = PLD_LV_NONE;
    pld_role_t role = PLD_ROLE_NONE;
    int have_level = 0, have_role = 0;
    if (!h || (strcmp(h, "pl.function") != 0 && strcmp(h, "function") != 0 && strcmp(h, "pl.inline") != 0 &&
               strcmp(h, "pl.jit") != 0)) {
        pld_ck_error(ck, f->deco_span, "expected @pl.function(...) on '%s'", f->name);
    }
    if (f->is_inline) {
        pld_ck_error(ck, f->deco_span, "@pl.inline helpers are not supported yet; write the code in the calling function");
        return;
    }
    if (d->kind == PLD_EX_CALL) {
        for (int i = 0; i < d->u.call.nargs; i++) {
            const pld_arg_t *a = &d->u.call.args[i];
            if (!a->kw) {
                pld_ck_error(ck, a->value->span, "@pl.function takes keyword arguments only");
                continue;
            }
            if (strcmp(a->kw, "type") == 0) {
                const char *t = pld_ck_enum_tail(ck, a->value, "FunctionType", NULL);
                int ft = t ? pld_ftype_from_name(t) : -1;
                if (ft < 0)
                    pld_ck_error(ck, a->value->span, "type= must be pl.FunctionType.<Opaque|Orchestration|InCore|AIC|AIV|Group|Spmd|Inline|Graph>");
                else
                    ftype = ft;
            } else if (strcmp(a->kw, "level") == 0) {
                if (a->value->kind == PLD_EX_NONE)
                    continue;
                const char *t = pld_ck_enum_tail(ck, a->value, "Level", NULL);
                level = t ? pld_level_from_name(t) : PLD_LV_NONE;
                if (level == PLD_LV_NONE)
                    pld_ck_error(ck, a->value->span, "level= must be pl.Level.<AIV|AIC|CORE_GROUP|CHIP_DIE|CHIP|HOST|...>");
                have_level = 1;
            } else if (strcmp(a->kw, "role") == 0) {
                if (a->value->kind == PLD_EX_NONE)
                    continue;
                const char *t = pld_ck_enum_tail(ck, a->value, "Role", NULL);
                if (t && strcmp(t, "Orchestrator") == 0)
                    role = PLD_ROLE_ORCHESTRATOR;
                else if (t && strcmp(t, "SubWorker") == 0)
                    role = PLD_ROLE_SUBWORKER;
                else
                    pld_ck_error(ck, a->value->span, "role= must be pl.Role.Orchestrator or pl.Role.SubWorker");
                have_role = 1;
            } else if (strcmp(a->kw, "auto_scope") == 0 || strcmp(a->kw, "external_source") == 0 ||
                       strcmp(a->kw, "strict_ssa") == 0 || strcmp(a->kw, "attrs") == 0) {
                /* accepted */
            } else {
                static const char *const kws[] = {"type", "level", "role", "auto_scope", "external_source", "strict_ssa", "attrs"};
                pld_diag_t *dd = pld_ck_error(ck, a->kw_span, "@pl.function got an unexpected keyword argument '%s'", a->kw);
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
            pld_ck_error(ck, f->deco_span, "%s %s function has level %s and role %s; the decorator says otherwise",
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

/* The string value of key `key` of the attrs={...} dict of f's decorator. */
static const char *deco_attr_str(const pld_func_t *f, const char *key)
{
    const pld_expr_t *d = f->deco;
    if (!d || d->kind != PLD_EX_CALL)
        return NULL;
    for (int i = 0; i < d->u.call.nargs; i++) {
        const pld_arg_t *a = &d->u.call.args[i];
        if (!a->kw || strcmp(a->kw, "attrs") != 0 || a->value->kind != PLD_EX_DICT)
            continue;
        for (int k = 0; k < a->value->u.dict.n; k++) {
            const pld_expr_t *key_e = a->value->u.dict.keys[k], *v = a->value->u.dict.vals[k];
            if (key_e->kind == PLD_EX_STR && strcmp(key_e->u.str.s, key) == 0)
                return v->kind == PLD_EX_STR ? v->u.str.s : NULL;
        }
    }
    return NULL;
}

int pld_check_builtin_kernel(const pld_func_t *f)
{
    const char *dir = f->ftype == PLD_FT_AIV ? deco_attr_str(f, "builtin_template_dir") : NULL;
    return dir && strcmp(dir, PLD_BUILTIN_TEMPLATE_PKG "all_to_all_v") == 0 ? PLD_OPID_PLD_ALL_TO_ALL_V : -1;
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
static const char *fn_kind_word(const ck_fn_info_t *fi)
{
    switch (fi->ctx) {
    case PLD_CTX_HOST: return "a HOST orchestrator";
    case PLD_CTX_CHIP: return "a CHIP orchestration function";
    case PLD_CTX_KERNEL: return "an InCore kernel";
    default: return "a SubWorker";
    }
}


/* 1 when a statement of b (or of a block inside it) returns values */
static int returns_values(const pld_block_t *b)
{
    for (int i = 0; i < b->n; i++) {
        const pld_stmt_t *s = b->stmts[i];
        switch (s->kind) {
        case PLD_ST_RETURN:
            if (s->u.ret.n > 0)
                return 1;
            break;
        case PLD_ST_IF:
            if (returns_values(&s->u.if_.then) || returns_values(&s->u.if_.els))
                return 1;
            break;
        case PLD_ST_WHILE:
            if (returns_values(&s->u.while_.body))
                return 1;
            break;
        case PLD_ST_FOR:
            if (returns_values(&s->u.for_.body))
                return 1;
            break;
        case PLD_ST_WITH:
            if (returns_values(&s->u.with.body))
                return 1;
            break;
        default: break;
        }
    }
    return 0;
}

static void check_header(pld_ck_t *ck, ck_fn_info_t *fi)
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
    for (int i = 0; i < f->nparams; i++) {
        pld_param_t *pp = &f->params[i];
        pld_dir_t dir = PLD_DIR_IN;
        const pld_type_t *t = pld_ck_ann_type(ck, pp->ann, &dir, 1);
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
    }
    if (f->ret_ann)
        fi->ret = pld_ck_ann_type(ck, f->ret_ann, NULL, 0);
    else /* unknown until its first `return <values>` is checked (pld_check_stmt.c) */
        fi->ret = returns_values(&f->body) ? &pld_type_unknown : &pld_type_none;
}

/* A CHIP orchestration function the HOST orchestrator dispatches takes its
 * tensors first and its scalars last: the host builds the task's arguments
 * in signature order and PyPTO's runtime refuses a tensor after a scalar
 * ("TaskArgs: cannot add tensor after scalar", docs/en/user/distributed/
 * 06-hello_rank.md). Calls inside a CHIP function need no such order: PyPTO's
 * orchestration codegen puts the tensors first itself. Reported once per
 * function, at the parameter, with the dispatch as a note. */
static void dispatch_param_order(pld_ck_t *ck, ck_fn_info_t *fi, const pld_expr_t *call)
{
    if (fi->order_checked)
        return;
    fi->order_checked = 1;
    const pld_func_t *f = fi->f;
    int seen_scalar = -1;
    for (int i = 0; i < f->nparams; i++) {
        const pld_type_t *t = fi->ptypes ? fi->ptypes[i] : NULL;
        if (!t)
            continue;
        if (t->kind == PLD_TY_SCALAR && seen_scalar < 0) {
            seen_scalar = i;
        } else if (pld_type_is_tensorlike(t) && seen_scalar >= 0) {
            pld_diag_t *d = pld_ck_error(ck, f->params[i].span,
                                         "tensor parameter '%s' follows scalar parameter '%s'; a CHIP orchestration "
                                         "function dispatched from the HOST orchestrator takes every tensor before its "
                                         "scalars (PyPTO fails at run time: TaskArgs: cannot add tensor after scalar)",
                                         f->params[i].name, f->params[seen_scalar].name);
            pld_diag_note(&ck->p->diags, d, call->span, "dispatched from the HOST orchestrator here");
            return;
        }
    }
}

static ck_fn_info_t *find_fn(pld_ck_t *ck, const char *name)
{
    ck_prog_t *pr = ck_prog_of(ck);
    for (int i = 0; i < pr->nfns; i++)
        if (pr->fns[i].f->name == name)
            return &pr->fns[i];
    return NULL;
}

/* deps=[t0, t1, ...] of a task launch: TaskIds (pl.at/pl.spmd `as` names,
 * the last result of pl.submit, pl.system.task_dummy / task_invalid), None
 * (no edge) or a pl.array of TaskIds (each element), checked in the issuing
 * function's context. */
void pld_ck_deps(pld_ck_t *ck, pld_expr_t *d, int ctx)
{
    int saved = ck->ctx;
    ck->ctx = ctx;
    if (d->kind != PLD_EX_LIST && d->kind != PLD_EX_TUPLE) {
        pld_ck_error(ck, d->span, "deps must be a list of TaskIds, e.g. deps=[wait_tid]");
    } else {
        for (int i = 0; i < d->u.seq.n; i++) {
            if (d->u.seq.items[i]->kind == PLD_EX_NONE)
                continue;
            const pld_type_t *t = pld_ck_expr(ck, d->u.seq.items[i]);
            if (t && t->kind != PLD_TY_UNKNOWN && !((t->kind == PLD_TY_SCALAR || t->kind == PLD_TY_ARRAY) &&
                                                     t->dtype == PLD_DT_TASK_ID))
                pld_ck_error(ck, d->u.seq.items[i]->span, "deps item %d must be a TaskId (a pl.at(...) as name, the "
                                                      "last result of pl.submit, a pl.array of TaskIds or None), found %s",
                         i, pld_ck_tystr(ck, t));
        }
    }
    ck->ctx = saved;
}

/* The tensor.read a dispatch predicate's side e is (through pl.cast), or NULL. */
static const pld_expr_t *predicate_read(const pld_expr_t *e)
{
    while (e && e->kind == PLD_EX_CALL && e->op == PLD_OPID_PL_CAST_SCALAR && e->u.call.nargs > 0)
        e = e->bound && e->bound[0] ? e->bound[0] : e->u.call.args[0].value;
    return e && e->kind == PLD_EX_CALL && e->op == PLD_OPID_TENSOR_READ ? e : NULL;
}

static int predicate_literal(const pld_expr_t *e)
{
    return e->kind == PLD_EX_INT ||
           (e->kind == PLD_EX_UNARY && (e->u.un.op == PLD_UOP_NEG || e->u.un.op == PLD_UOP_POS) &&
            e->u.un.a->kind == PLD_EX_INT);
}

void pld_ck_predicate(pld_ck_t *ck, pld_expr_t *pred, const char *what, int ctx)
{
    static const char hint[] = "one comparison of a tensor element with an integer literal, e.g. "
                               "predicate=(t[0, 0] > 0)";
    int saved = ck->ctx;
    ck->ctx = ctx;
    const pld_type_t *t = pred->type ? pred->type : pld_ck_expr(ck, pred);
    ck->ctx = saved;
    if (ctx == PLD_CTX_KERNEL) {
        pld_ck_error(ck, pred->span, "%s inside a kernel cannot take predicate=: a dispatch predicate gates a task "
                                     "an orchestration function dispatches", what);
        return;
    }
    if (t->kind == PLD_TY_UNKNOWN)
        return; /* reported */
    if (pred->kind != PLD_EX_BINARY || pred->u.bin.op < PLD_OP_EQ || pred->u.bin.op > PLD_OP_GE) {
        pld_ck_error(ck, pred->span, "%s predicate must be a single comparison (==, !=, >, <, >=, <=): %s", what,
                     hint);
        return;
    }
    const pld_expr_t *a = pred->u.bin.a, *b = pred->u.bin.b;
    const pld_expr_t *rd = predicate_read(a) && predicate_literal(b) ? predicate_read(a)
                           : predicate_read(b) && predicate_literal(a) ? predicate_read(b)
                                                                        : NULL;
    if (!rd) {
        pld_ck_error(ck, pred->span, "%s predicate must compare one tensor element (pl.tensor.read) with an integer "
                                     "literal: %s", what, hint);
        return;
    }
    const pld_expr_t *ten = rd->bound ? rd->bound[0] : NULL, *idx = rd->bound ? rd->bound[1] : NULL;
    const pld_type_t *tt = ten ? ten->type : NULL;
    if (!tt || !pld_type_is_tensorlike(tt))
        return; /* pl.tensor.read reported it */
    if (tt->dtype != PLD_DT_INT8 && tt->dtype != PLD_DT_INT16 && tt->dtype != PLD_DT_INT32 &&
        tt->dtype != PLD_DT_INT64) {
        pld_ck_error(ck, ten->span, "%s predicate operand must be a signed 8/16/32/64-bit integer tensor, found %s "
                                    "(the runtime sign-extends the element it reads)", what, pld_ck_tystr(ck, tt));
        return;
    }
    const int islist = idx && pld_ck_list_len(ck, idx) >= 0;
    const int n = islist ? pld_ck_list_len(ck, idx) : idx ? 1 : 0;
    if (n != tt->rank) {
        pld_ck_error(ck, idx ? idx->span : rd->span, "%s predicate needs %d index(es) to locate one element of a "
                                                     "rank-%d tensor, found %d", what, tt->rank, tt->rank, n);
        return;
    }
    for (int i = 0; idx && i < n; i++) {
        const pld_expr_t *x = islist ? pld_ck_list_item(ck, idx, i) : idx;
        int64_t v;
        if (x && pld_ck_const_int(ck, x, &v) && v < 0)
            pld_ck_error(ck, x->span, "%s predicate index %d is negative (%lld)", what, i, (long long)v);
    }
}

/* Checks the positional arguments of a call of fi (from index `first`). */
static void check_call_args(pld_ck_t *ck, pld_expr_t *e, ck_fn_info_t *fi, const pld_type_t **argt, int first)
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
            pld_diag_t *d = pld_ck_error(ck, a->value->span, "argument '%s' of self.%s expects %s, got %s", pp->name, name,
                                     pld_ck_tystr(ck, want), pld_ck_tystr(ck, got));
            pld_diag_note(&ck->p->diags, d, pp->span, "parameter declared here");
            continue;
        }
        if (pld_type_is_tensorlike(want) && want->dtype != got->dtype) {
            pld_ck_error(ck, a->value->span, "argument '%s' of self.%s expects dtype %s, got %s", pp->name, name,
                     pld_dtype_name(want->dtype), pld_dtype_name(got->dtype));
            continue;
        }
        if (pld_type_is_tensorlike(want) && want->rank == got->rank) {
            for (int j = 0; j < want->rank; j++)
                if (pld_dim_eq(&want->shape[j], &got->shape[j]) == 0) {
                    pld_ck_error(ck, a->value->span, "argument '%s' of self.%s expects %s, got %s", pp->name, name,
                             pld_ck_tystr(ck, want), pld_ck_tystr(ck, got));
                    break;
                }
        } else if (pld_type_is_tensorlike(want) && got->rank != want->rank) {
            /* a window view of another rank is the same bytes seen with the
             * parameter's shape (catalog §4.2.3), when the sizes agree */
            int64_t nw = pld_type_static_numel(want), ng = pld_type_static_numel(got);
            if (got->kind != PLD_TY_DTENSOR)
                pld_ck_error(ck, a->value->span, "argument '%s' of self.%s expects rank %d (%s), got rank %d (%s)",
                         pp->name, name, want->rank, pld_ck_tystr(ck, want), got->rank, pld_ck_tystr(ck, got));
            else if (nw >= 0 && ng >= 0 && nw != ng)
                pld_ck_error(ck, a->value->span,
                         "argument '%s' of self.%s expects %lld elements (%s), got a window view of %lld (%s)",
                         pp->name, name, (long long)nw, pld_ck_tystr(ck, want), (long long)ng, pld_ck_tystr(ck, got));
        }
    }
}

/* The window views a HOST dispatch passes: they give their buffers a device
 * set (comm-domain coverage), and a slice of one is an error (§2.3: the
 * dispatch passes the owning slot from byte 0, the slice's origin is lost). */
static void host_dispatch_windows(pld_ck_t *ck, const pld_expr_t *e, const char *name, const pld_expr_t *device)
{
    /* the devices this dispatch reaches: a constant, a loop variable over a
     * constant range, or (round-robin) every rank when P is known */
    uint64_t cover = 0;
    int unknown = 0;
    int64_t v;
    if (!device) {
        unknown = !(ck->opts.ranks > 0 && ck->opts.ranks <= 64);
        if (!unknown)
            cover = ck->opts.ranks == 64 ? ~(uint64_t)0 : ((uint64_t)1 << ck->opts.ranks) - 1;
    } else if (pld_ck_const_int(ck, device, &v)) {
        unknown = v < 0 || v >= 64;
        cover = unknown ? 0 : (uint64_t)1 << v;
    } else if (device->kind == PLD_EX_NAME && pld_ck_find_slot(ck, device->u.name) >= 0 &&
               ck->slots[pld_ck_find_slot(ck, device->u.name)].has_range) {
        const ck_slot_t *sl = &ck->slots[pld_ck_find_slot(ck, device->u.name)];
        unknown = sl->lo < 0 || sl->hi > 64;
        for (int64_t r = sl->lo; !unknown && r < sl->hi; r++)
            cover |= (uint64_t)1 << r;
    } else {
        unknown = 1;
    }
    for (int i = 0; i < e->u.call.nargs; i++) {
        const pld_arg_t *a = &e->u.call.args[i];
        if (a->kw)
            continue;
        int w = pld_ck_window_of(ck, a->value);
        if (w >= 0 && w < ck->nwinbufs) {
            ck->winbufs[w].dispatched = 1;
            ck->winbufs[w].cover |= cover;
            ck->winbufs[w].cover_unknown |= unknown;
        }
        w = pld_ck_window_slice_of(ck, a->value);
        if (w >= 0 && w < ck->nwinbufs)
            pld_ck_error(ck, a->value->span,
                         "a HOST-level slice of a view of window buffer '%s' cannot be passed to self.%s: a dispatch "
                         "passes the whole window slot from byte 0, so the slice's origin would be lost; pass a "
                         "pld.window(...) view of the shape the callee declares, and slice inside it",
                         ck->winbufs[w].name, name);
    }
}

/* A call of a synthesized builtin kernel (pld_check_builtin_kernel): from a
 * CHIP orchestration body only, core_num= a compile-time int in
 * [1, INT32_MAX] and sync_start= a bool literal when present. Binds the five
 * operands and core_num to the parameters of the collective `kind` (e->bound)
 * for the interpreter. Returns 0 after an error. */
static int builtin_launch(pld_ck_t *ck, pld_expr_t *e, const char *name, int kind)
{
    if (ck->ctx != PLD_CTX_CHIP) {
        pld_ck_error(ck, e->span, "the builtin kernel '%s' can only be called from a CHIP orchestration function", name);
        return 0;
    }
    const pld_op_info_t *info = pld_op_info((pld_op_id_t)kind);
    pld_expr_t **b = pld_arena_alloc(&ck->p->arena, sizeof *b * (size_t)info->nparams);
    if (!b) {
        ck->oom = 1;
        return 0;
    }
    memset(b, 0, sizeof *b * (size_t)info->nparams);
    int pos = 0, core = pld_op_param_index(info, "core_num");
    for (int i = 0; i < e->u.call.nargs; i++) {
        pld_arg_t *a = &e->u.call.args[i];
        int64_t v;
        if (!a->kw) {
            if (pos < info->nparams && pos != core)
                b[pos] = a->value;
            pos++;
        } else if (strcmp(a->kw, "core_num") == 0) {
            if (!pld_ck_const_int(ck, a->value, &v) || v < 1 || v > INT32_MAX) {
                pld_ck_error(ck, a->value->span, "core_num= of the builtin kernel '%s' must be a compile-time int in "
                                                 "[1, INT32_MAX]", name);
                return 0;
            }
            if (core >= 0)
                b[core] = a->value;
        } else if (strcmp(a->kw, "sync_start") == 0 && a->value->kind != PLD_EX_BOOL) {
            pld_ck_error(ck, a->value->span, "sync_start= must be True or False");
            return 0;
        }
    }
    e->bound = b;
    return 1;
}

/* self.f(args..., [device=r], [attrs={...}]) */
/* A call of f, a hand-written C++ kernel (@pl.function(external_source="...")): PyPTO compiles that file as
 * the kernel and prints the function with its signature only (an empty body), so the printed program does
 * not carry what it runs; pldrun refuses the call (1) rather than run the empty body. */
static int external_kernel(pld_ck_t *ck, const pld_expr_t *call, const pld_func_t *f)
{
    const pld_expr_t *d = f->deco;
    for (int i = 0; d && d->kind == PLD_EX_CALL && i < d->u.call.nargs; i++) {
        const pld_arg_t *a = &d->u.call.args[i];
        if (!a->kw || strcmp(a->kw, "external_source") != 0 || a->value->kind == PLD_EX_NONE)
            continue;
        const char *src = pld_ck_const_str(a->value);
        pld_diag_t *dd = pld_ck_error(ck, call->span, "pldrun cannot run '%s': it is a hand-written C++ kernel "
                                                      "(external_source=\"%s\"), and the printed program has its "
                                                      "signature only (an empty body), not the code it runs",
                                      f->name, src ? src : "...");
        pld_diag_note(&ck->p->diags, dd, a->kw_span, "'%s' is declared here", f->name);
        return 1;
    }
    return 0;
}

const pld_type_t *pld_ck_dispatch_call(pld_ck_t *ck, pld_expr_t *e, const pld_type_t **argt)
{
    const char *name = e->u.call.fn->u.attr.attr;
    ck_fn_info_t *fi = find_fn(ck, name);
    if (!fi) {
        pld_diag_t *d = pld_ck_error(ck, e->span, "the program has no function '%s'", name);
        ck_prog_t *pr = ck_prog_of(ck);
        for (int i = 0; i < pr->nfns; i++)
            if (pld_edit_distance(name, pr->fns[i].f->name) <= 2) {
                pld_diag_note(&ck->p->diags, d, e->u.call.fn->span, "did you mean 'self.%s'?", pr->fns[i].f->name);
                break;
            }
        return &pld_type_unknown;
    }
    e->aux = (int32_t)(fi - ck_prog_of(ck)->fns); /* == index in p->funcs */
    if (external_kernel(ck, e, fi->f))
        return fi->ret;
    const pld_expr_t *device = NULL;
    const int builtin = pld_check_builtin_kernel(fi->f);
    int npos = 0;
    for (int i = 0; i < e->u.call.nargs; i++) {
        const pld_arg_t *a = &e->u.call.args[i];
        if (!a->kw) {
            npos++;
            continue;
        }
        if (strcmp(a->kw, "device") == 0)
            device = a->value;
        else if (builtin >= 0 && (strcmp(a->kw, "core_num") == 0 || strcmp(a->kw, "sync_start") == 0))
            continue; /* the launch spec of a builtin kernel call (pld_lower.c) */
        else if (strcmp(a->kw, "attrs") != 0) {
            pld_ck_error(ck, a->kw_span, "a call to self.%s accepts only device= and attrs= keywords, not '%s'", name, a->kw);
            return &pld_type_unknown;
        }
    }
    /* level rules of the call graph */
    int callee = fi->ctx;
    if (callee == 0 && (ck->ctx != PLD_CTX_HOST || device)) {
        pld_ck_error(ck, device ? device->span : e->span, "the SubWorker '%s' (host Python code) can only be called by "
                     "the HOST orchestrator, without device= (it runs on every rank)", name);
        return &pld_type_unknown;
    }
    if (callee == 0 && !ck->opts.subworkers) {
        pld_ck_error(ck, e->span, "'%s' is a SubWorker (host Python code) and cannot be run by this pldrun: it was built "
                     "without the Python bridge (CMake PLDRUN_PYTHON, libpython3-dev), or PLDRUN_NO_PYTHON is set "
                     "(docs/python.md, \"SubWorkers\")", name);
        return &pld_type_unknown;
    }
    if (device && ck->ctx != PLD_CTX_HOST) {
        pld_ck_error(ck, device->span, "device= is only allowed on a dispatch from the HOST orchestrator");
        return &pld_type_unknown;
    }
    if (device && callee != PLD_CTX_CHIP) {
        pld_ck_error(ck, device->span, "device= dispatch needs a CHIP orchestration function, but '%s' is %s", name,
                 fn_kind_word(fi));
        return &pld_type_unknown;
    }
    if (ck->ctx == PLD_CTX_HOST && callee == PLD_CTX_KERNEL) {
        pld_diag_t *d = pld_ck_error(ck, e->span, "the HOST orchestrator cannot call the InCore kernel '%s' directly; "
                                              "dispatch a CHIP orchestration function with device=r", name);
        (void)d;
        return &pld_type_unknown;
    }
    if (ck->ctx == PLD_CTX_KERNEL && callee != PLD_CTX_KERNEL) {
        pld_ck_error(ck, e->span, "a kernel cannot call '%s', which is %s", name, fn_kind_word(fi));
        return &pld_type_unknown;
    }
    if (ck->ctx == PLD_CTX_CHIP && callee == PLD_CTX_HOST) {
        pld_ck_error(ck, e->span, "a CHIP orchestration function cannot call the HOST orchestrator '%s'", name);
        return &pld_type_unknown;
    }
    if (device) {
        int64_t dv;
        if (pld_ck_const_int(ck, device, &dv) && (dv < 0 || (ck->opts.ranks > 0 && dv >= ck->opts.ranks)))
            pld_ck_error(ck, device->span, "device=%lld is outside the rank range [0, %d)", (long long)dv,
                     ck->opts.ranks > 0 ? ck->opts.ranks : 1);
    }
    if (npos != fi->f->nparams) {
        pld_diag_t *d = pld_ck_error(ck, e->span, "self.%s takes %d argument%s but %d %s given", name, fi->f->nparams,
                                 fi->f->nparams == 1 ? "" : "s", npos, npos == 1 ? "was" : "were");
        pld_diag_note(&ck->p->diags, d, fi->f->name_span, "'%s' is defined here", name);
        return fi->ret;
    }
    if (builtin >= 0 && !builtin_launch(ck, e, name, builtin))
        return fi->ret;
    if (ck->ctx == PLD_CTX_HOST && callee == PLD_CTX_CHIP)
        dispatch_param_order(ck, fi, e);
    if (ck->ctx == PLD_CTX_HOST)
        host_dispatch_windows(ck, e, name, device);
    check_call_args(ck, e, fi, argt, 0);
    return fi->ret;
}

const pld_type_t *pld_ck_submit_call(pld_ck_t *ck, pld_expr_t *e, const pld_type_t **argt)
{
    const char *what = e->op == PLD_OPID_PL_SPMD_SUBMIT ? "pl.spmd_submit" : "pl.submit";
    int n = e->u.call.nargs;
    const pld_expr_t *k = n > 0 && !e->u.call.args[0].kw ? e->u.call.args[0].value : NULL;
    if (!k || k->kind != PLD_EX_ATTR || k->u.attr.obj->kind != PLD_EX_NAME || strcmp(k->u.attr.obj->u.name, "self") != 0) {
        pld_ck_error(ck, e->span, "%s needs the kernel as its first argument: %s(self.kernel, ...)", what, what);
        return &pld_type_unknown;
    }
    ck_fn_info_t *fi = find_fn(ck, k->u.attr.attr);
    if (!fi) {
        pld_ck_error(ck, k->span, "the program has no function '%s'", k->u.attr.attr);
        return &pld_type_unknown;
    }
    if (fi->ctx != PLD_CTX_KERNEL) {
        pld_ck_error(ck, k->span, "%s submits a kernel, but '%s' is %s", what, fi->f->name, fn_kind_word(fi));
        return &pld_type_unknown;
    }
    if (external_kernel(ck, e, fi->f))
        return &pld_type_unknown;
    if (ck->ctx == PLD_CTX_KERNEL) {
        pld_ck_error(ck, e->span, "%s can only be used in an orchestration function", what);
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
            pld_ck_error(ck, a->kw_span, "%s got an unexpected keyword argument '%s'", what, a->kw);
            return &pld_type_unknown;
        }
        have_core |= strcmp(a->kw, "core_num") == 0;
        if (strcmp(a->kw, "deps") == 0)
            pld_ck_deps(ck, a->value, ck->ctx);
        if (strcmp(a->kw, "predicate") == 0)
            pld_ck_predicate(ck, a->value, what, ck->ctx);
    }
    if (e->op == PLD_OPID_PL_SPMD_SUBMIT && !have_core)
        pld_ck_error(ck, e->span, "pl.spmd_submit needs core_num=...");
    e->aux = (int32_t)(fi - ck_prog_of(ck)->fns); /* == index in p->funcs */
    if (npos != fi->f->nparams) {
        pld_diag_t *d = pld_ck_error(ck, e->span, "%s of '%s' passes %d argument%s but the kernel takes %d", what,
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
        pld_ck_error(&ck, sp, p->class_name ? "the program class has no @pl.function methods"
                                        : "no @pl.program class or @pl.function found");
    }
    if (!p->class_name && p->nfuncs > 1)
        pld_ck_error(&ck, p->funcs[1]->name_span, "a program text holds one @pl.program class or one top-level "
                                              "@pl.function, not several functions");
    for (int i = 0; i < p->nfuncs; i++) {
        pr->fns[i].f = p->funcs[i];
        for (int j = 0; j < i; j++)
            if (p->funcs[j]->name == p->funcs[i]->name) {
                pld_diag_t *d = pld_ck_error(&ck, p->funcs[i]->name_span, "function '%s' is defined twice", p->funcs[i]->name);
                pld_diag_note(&p->diags, d, p->funcs[j]->name_span, "first defined here");
            }
    }
    for (int i = 0; i < pr->nfns && !ck.oom; i++)
        check_header(&ck, &pr->fns[i]);
    ck.dom_ranks = ck.opts.ranks;
    for (int i = 0; i < pr->nfns && ck.dom_ranks > 0; i++)
        if (pr->fns[i].ctx == PLD_CTX_HOST && pld_ck_subset_dispatch(&pr->fns[i].f->body, NULL, 0))
            ck.dom_ranks = 0;
    for (int i = 0; i < pr->nfns && !ck.oom; i++)
        pld_ck_function(&ck, &pr->fns[i]);
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

