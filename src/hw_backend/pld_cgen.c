/* pld_cgen.c - C code generation for one kernel function (pld_cgen.h): the
 * driver. The op table, the emitter core, the scan that gives every local its
 * C kind, runtime calls, one compiled unit and the entry points; statements,
 * scalars, memory and layout, compute and distributed ops are in the files
 * pld_cgen_int.h lists.
 *
 * Values in generated code: an integer scalar is an int64_t holding the value
 * wrapped to its dtype, a float scalar a double rounded to its dtype (as the
 * interpreter's values), a tensor a pc_tensor, a tile a pc_tile over storage
 * allocated once per block for its slot (the largest tile the slot holds), a
 * comm context an int64_t handle of the runtime. Every expression is
 * evaluated into a fresh C local in source order, so evaluation order and
 * error sites match the interpreter; the C compiler folds the locals away. */
#include "pld_cgen_int.h"
#include "pld_crt.h"
#include "pld_hw.h"
#include "pld_mem.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- op table */

static const struct {
    pld_cgen_class_t cls;
    const char *note;
} op_table[PLD_OPID__COUNT] = {
#define CG(id, cls, note) [PLD_OPID_##id] = {PLD_CGEN_##cls, note},
#include "pld_cgen_ops.def"
#undef CG
};

pld_cgen_class_t pld_cgen_op_class(int op, const char **note)
{
    if (op < 0 || op >= PLD_OPID__COUNT) {
        if (note)
            *note = "not an op";
        return PLD_CGEN_UNCLASSIFIED;
    }
    /* a test hook (tests/native/run_native.py): the op named by PLD_TEST_NATIVE_REFUSE is refused, so that the
     * refusal path stays tested although every kernel op compiles */
    const char *refuse = getenv("PLD_TEST_NATIVE_REFUSE");
    if (refuse && strcmp(refuse, pld_op_info((pld_op_id_t)op)->name) == 0) {
        if (note)
            *note = "refused by PLD_TEST_NATIVE_REFUSE, a test hook";
        return PLD_CGEN_UNSUPPORTED;
    }
    if (note)
        *note = op_table[op].note ? op_table[op].note : "missing from src/hw_backend/pld_cgen_ops.def";
    return op_table[op].cls;
}

const char *pld_cgen_class_name(pld_cgen_class_t c)
{
    switch (c) {
    case PLD_CGEN_INLINE: return "inline";
    case PLD_CGEN_LIBRARY: return "library";
    case PLD_CGEN_RUNTIME: return "runtime";
    case PLD_CGEN_NO_CODE: return "no code";
    case PLD_CGEN_NOT_KERNEL: return "not a kernel op";
    case PLD_CGEN_UNSUPPORTED: return "unsupported";
    default: return "UNCLASSIFIED";
    }
}

/* ---------------------------------------------------------------- emitter core */

int pld_cg_fail(cg_t *g, pld_span_t sp, const char *fmt, ...)
{
    if (g->failed)
        return -1;
    g->failed = 1;
    char msg[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(g->err, g->errn, "%s:%d:%d: %s", g->p->file, (int)sp.line, (int)sp.col, msg);
    return -1;
}

void pld_cg_emit(cg_t *g, const char *fmt, ...)
{
    for (int i = 0; i < g->ind; i++)
        pld_buf_puts(&g->out, "    ");
    va_list ap;
    va_start(ap, fmt);
    pld_buf_vprintf(&g->out, fmt, ap);
    va_end(ap);
    pld_buf_putc(&g->out, '\n');
}

int pld_cg_site(cg_t *g, const pld_expr_t *e)
{
    for (int i = g->nsites - 1; i >= 0 && i >= g->nsites - 4; i--)
        if (g->sites[i] == e)
            return i;
    if (g->nsites == g->capsites) {
        int cap = g->capsites ? 2 * g->capsites : 64;
        const pld_expr_t **s = pld_mem_realloc((void *)g->sites, (size_t)cap * sizeof *s);
        if (!s) {
            pld_cg_fail(g, e->span, "out of memory");
            return 0;
        }
        g->sites = s;
        g->capsites = cap;
    }
    g->sites[g->nsites] = e;
    return g->nsites++;
}

static int kind_of(const pld_type_t *t, pld_dtype_t *dt)
{
    if (!t)
        return -1;
    *dt = t->dtype;
    switch (t->kind) {
    case PLD_TY_SCALAR: return is_float_dt(t->dtype) ? SK_FLT : SK_INT;
    case PLD_TY_TENSOR:
    case PLD_TY_DTENSOR: return SK_TENSOR;
    case PLD_TY_TILE: return SK_TILE;
    case PLD_TY_COMMCTX: return SK_CTX;
    case PLD_TY_NONE: return SK_NONE;
    case PLD_TY_ARRAY: return SK_ARRAY;
    case PLD_TY_PTR: case PLD_TY_PREFETCH_CTX: case PLD_TY_ASYNC_EVENT: case PLD_TY_ASYNC_SESSION: return SK_TOKEN;
    default: return -1;
    }
}

/* ---------------------------------------------------------------- slot kinds */

static int note_slot(cg_t *g, const pld_expr_t *name, const pld_type_t *t)
{
    if (name->kind != PLD_EX_NAME || name->slot < 0)
        return pld_cg_fail(g, name->span, "the native backend compiles assignments to plain names only");
    if (!t)
        return pld_cg_fail(g, name->span, "'%s' has no static type: the native backend needs one", name->u.name);
    pld_dtype_t dt;
    int k = kind_of(t, &dt);
    if (k < 0)
        return pld_cg_fail(g, name->span, "'%s' is a value the native backend does not compile (a tuple, an array or a "
                                          "handle)", name->u.name);
    cslot_t *s = &g->slots[name->slot];
    if (s->kind != SK_NONE && k != SK_NONE && s->kind != k)
        return pld_cg_fail(g, name->span, "'%s' holds values of different kinds; the native backend needs one kind per name",
                           name->u.name);
    if (s->kind == SK_NONE)
        s->kind = k;
    if ((k == SK_INT || k == SK_FLT) && s->dt == PLD_DT_NONE)
        s->dt = dt;
    if (k == SK_ARRAY) { /* pld_cgen_sys.c: one dtype, the longest constant extent */
        if (s->dt != PLD_DT_NONE && s->dt != dt)
            return pld_cg_fail(g, name->span, "array '%s' holds arrays of different dtypes", name->u.name);
        s->dt = dt;
        if (t->array_len <= 0)
            return pld_cg_fail(g, name->span, "array '%s' needs a constant extent for the native backend", name->u.name);
        if ((size_t)(t->array_len * pld_dtype_storage_bytes(dt)) > s->bytes)
            s->bytes = (size_t)(t->array_len * pld_dtype_storage_bytes(dt));
    }
    if (k == SK_TILE) {
        if (s->dt == PLD_DT_NONE)
            s->dt = dt;
        else if (s->dt != dt)
            return pld_cg_fail(g, name->span, "tile '%s' holds tiles of different dtypes: the native backend needs one dtype "
                                              "per name", name->u.name);
        if (s->mem == PLD_MEM_NONE)
            s->mem = t->mem;
        int64_t b = tile_bytes(t);
        if (b < 0)
            return pld_cg_fail(g, name->span, "tile '%s' has a shape that is not constant: the native backend needs static "
                                              "tile shapes", name->u.name);
        if ((size_t)b > s->bytes)
            s->bytes = (size_t)b;
    }
    return 0;
}

static int scan_targets(cg_t *g, const pld_expr_t *target, const pld_expr_t *v)
{
    if (is_yield(v)) {
        int n = v->u.call.nargs;
        if (target->kind == PLD_EX_NAME)
            return n == 1 ? note_slot(g, target, v->u.call.args[0].value->type) : pld_cg_fail(g, v->span, "pl.yield_ of %d "
                                                                                              "values assigned to one name", n);
        if (target->kind != PLD_EX_TUPLE || target->u.seq.n != n)
            return pld_cg_fail(g, v->span, "pl.yield_ of %d values: the targets do not match", n);
        for (int i = 0; i < n; i++)
            if (note_slot(g, target->u.seq.items[i], v->u.call.args[i].value->type))
                return -1;
        return 0;
    }
    if (target->kind == PLD_EX_NAME)
        return note_slot(g, target, v->type);
    if (target->kind == PLD_EX_TUPLE && v->type && v->type->kind == PLD_TY_TUPLE &&
        v->type->nelems == target->u.seq.n) {
        for (int i = 0; i < target->u.seq.n; i++)
            if (note_slot(g, target->u.seq.items[i], v->type->elems[i]))
                return -1;
        return 0;
    }
    return pld_cg_fail(g, target->span, "the native backend compiles assignments to plain names only");
}

static int scan_block(cg_t *g, const pld_block_t *b);

/* every op call under e: an op the table refuses stops the kernel at load,
 * named with its line (docs/native-ops.md: unsupported) */
static int refuse_ops(cg_t *g, const pld_expr_t *e)
{
    if (!e)
        return 0;
    switch (e->kind) {
    case PLD_EX_CALL: {
        const char *note;
        const pld_cgen_class_t c = e->op >= 0 ? pld_cgen_op_class(e->op, &note) : PLD_CGEN_INLINE;
        if (c == PLD_CGEN_UNSUPPORTED || c == PLD_CGEN_NOT_KERNEL)
            return pld_cg_fail(g, e->span, "%s is not compiled by the native backend (%s)", opname(e), note);
        for (int i = 0; i < e->u.call.nargs; i++)
            if (refuse_ops(g, e->u.call.args[i].value))
                return -1;
        return 0;
    }
    case PLD_EX_UNARY: return refuse_ops(g, e->u.un.a);
    case PLD_EX_BINARY: return refuse_ops(g, e->u.bin.a) || refuse_ops(g, e->u.bin.b) ? -1 : 0;
    case PLD_EX_SUBSCRIPT:
        for (int i = 0; i < e->u.sub.n; i++)
            if (refuse_ops(g, e->u.sub.items[i]))
                return -1;
        return refuse_ops(g, e->u.sub.obj);
    case PLD_EX_LIST: case PLD_EX_TUPLE:
        for (int i = 0; i < e->u.seq.n; i++)
            if (refuse_ops(g, e->u.seq.items[i]))
                return -1;
        return 0;
    default:
        return 0;
    }
}

static int refuse_stmt(cg_t *g, const pld_stmt_t *s)
{
    switch (s->kind) {
    case PLD_ST_EXPR: return refuse_ops(g, s->u.expr);
    case PLD_ST_ASSIGN: return refuse_ops(g, s->u.assign.target) || refuse_ops(g, s->u.assign.value) ? -1 : 0;
    case PLD_ST_RETURN:
        for (int i = 0; i < s->u.ret.n; i++)
            if (refuse_ops(g, s->u.ret.vals[i]))
                return -1;
        return 0;
    case PLD_ST_IF: return refuse_ops(g, s->u.if_.cond);
    case PLD_ST_WHILE: return refuse_ops(g, s->u.while_.cond);
    case PLD_ST_FOR: return refuse_ops(g, s->u.for_.iter);
    case PLD_ST_WITH: return refuse_ops(g, s->u.with.item);
    default: return 0;
    }
}

static int scan_stmt(cg_t *g, const pld_stmt_t *s)
{
    if (refuse_stmt(g, s))
        return -1;
    switch (s->kind) {
    case PLD_ST_ASSIGN:
        if (s->u.assign.target->kind == PLD_EX_SUBSCRIPT)
            return 0; /* tensor[a:b, ...] = v: compiled (pld_cg_slice_assign, pld_cg_elem_assign) */
        {
            const pld_expr_t *v = s->u.assign.value, *t = s->u.assign.target, *src;
            if (v && v->kind == PLD_EX_CALL && v->op == PLD_OPID_TILE_SLICE && t->kind == PLD_EX_NAME && t->slot >= 0 &&
                (src = pld_op_bound(v, 0)) && src->type && src->type->kind == PLD_TY_TILE && src->type->mem == PLD_MEM_ACC)
                g->slots[t->slot].accwin = 1;
        }
        return scan_targets(g, s->u.assign.target, s->u.assign.value);
    case PLD_ST_IF:
        return scan_block(g, &s->u.if_.then) || scan_block(g, &s->u.if_.els) ? -1 : 0;
    case PLD_ST_WHILE:
        return scan_block(g, &s->u.while_.body);
    case PLD_ST_FOR: {
        const pld_expr_t *it = s->u.for_.iter, *t = s->u.for_.target;
        if (it->kind != PLD_EX_CALL || (it->op != PLD_OPID_PL_RANGE && it->op != PLD_OPID_PL_PARALLEL &&
                                        it->op != PLD_OPID_PL_UNROLL && it->op != PLD_OPID_PL_PIPELINE &&
                                        it->op != PLD_OPID_PL_WHILE_ && it->op != PLD_OPID_PL_SPLIT_AIV &&
                                        it->op != PLD_OPID_PL_SPMD))
            return pld_cg_fail(g, it->span, "%s loops are not compiled by the native backend yet",
                               it->kind == PLD_EX_CALL && it->op >= 0 ? pld_op_info((pld_op_id_t)it->op)->name : "these");
        const pld_expr_t *lv = t, *carried = NULL;
        if (it->op == PLD_OPID_PL_WHILE_) {
            /* pl.while_: the target is the carried names; pl.cond(test) comes first */
            const pld_block_t *wb = &s->u.for_.body;
            const pld_stmt_t *c0 = wb->n ? wb->stmts[0] : NULL;
            if (!c0 || c0->kind != PLD_ST_EXPR || c0->u.expr->kind != PLD_EX_CALL || c0->u.expr->op != PLD_OPID_PL_COND ||
                c0->u.expr->u.call.nargs != 1)
                return pld_cg_fail(g, it->span, "a pl.while_ body must begin with pl.cond(test)");
            lv = NULL;
            carried = t;
        } else if (t->kind == PLD_EX_TUPLE && t->u.seq.n == 2) {
            lv = t->u.seq.items[0];
            carried = t->u.seq.items[1];
        }
        if (lv && (lv->kind != PLD_EX_NAME || lv->slot < 0))
            return pld_cg_fail(g, t->span, "the native backend needs a plain loop variable");
        if (lv) {
            g->slots[lv->slot].kind = SK_INT;
            g->slots[lv->slot].dt = PLD_DT_INDEX;
        }
        if (carried) {
            const pld_expr_t *iv = NULL;
            for (int i = 0; i < it->u.call.nargs; i++)
                if (it->u.call.args[i].kw && strcmp(it->u.call.args[i].kw, "init_values") == 0)
                    iv = it->u.call.args[i].value;
            int nc = carried->kind == PLD_EX_TUPLE ? carried->u.seq.n : 1;
            if (!iv || (iv->kind != PLD_EX_LIST && iv->kind != PLD_EX_TUPLE) || iv->u.seq.n != nc)
                return pld_cg_fail(g, t->span, "loop-carried names without matching init_values");
            for (int i = 0; i < nc; i++)
                if (note_slot(g, carried->kind == PLD_EX_TUPLE ? carried->u.seq.items[i] : carried,
                              iv->u.seq.items[i]->type))
                    return -1;
        }
        return scan_block(g, &s->u.for_.body);
    }
    case PLD_ST_WITH:
        pld_cg_sys_scan_with(g, s);
        return scan_block(g, &s->u.with.body);
    default:
        return 0;
    }
}

static int scan_block(cg_t *g, const pld_block_t *b)
{
    for (int i = 0; i < b->n; i++)
        if (scan_stmt(g, b->stmts[i]))
            return -1;
    return 0;
}

/* ---------------------------------------------------------------- runtime exec */

/* the result of a runtime op (pc_out tO) as kind `want`: a scalar in a fresh
 * C local (int64_t for SK_INT / SK_CTX, double for SK_FLT), else o itself */
int pld_cg_out_as(cg_t *g, int o, int want)
{
    if (want == SK_INT || want == SK_CTX) {
        int t = tmp(g);
        pld_cg_emit(g, "int64_t t%d = t%d.kind == PC_OUT_FLOAT ? (int64_t)t%d.f : t%d.i;", t, o, o, o);
        return t;
    }
    if (want == SK_FLT) {
        int t = tmp(g);
        pld_cg_emit(g, "double t%d = t%d.kind == PC_OUT_FLOAT ? t%d.f : (double)t%d.i;", t, o, o, o);
        return t;
    }
    return o;
}

/* Runs pld.* op call e in the runtime with its operands evaluated here
 * (pld_cgen_rtop.c); the result as kind `want` (SK_NONE: ignored; SK_TILE /
 * SK_TENSOR: in pc_out tN). Nothing else reaches the runtime's interpreter:
 * any other expression here is a generator error. */
int pld_cg_exec(cg_t *g, const pld_expr_t *e, int want)
{
    if (e->kind == PLD_EX_CALL && pld_cg_is_rtop(e->op))
        return pld_cg_rtop(g, e, want);
    return pld_cg_fail(g, e->span, "%s is not compiled by the native backend",
                       e->kind == PLD_EX_CALL && e->op >= 0 ? pld_op_info((pld_op_id_t)e->op)->name : "this expression");
}

/* ---------------------------------------------------------------- entry */

static const char *ctype(int kind)
{
    switch (kind) {
    case SK_INT: case SK_CTX: return "int64_t";
    case SK_FLT: return "double";
    case SK_TENSOR: return "pc_tensor";
    case SK_TILE: return "pc_tile";
    default: return NULL;
    }
}

/* the static type a slot of fn gets where it is defined (a parameter, an
 * assignment, a loop variable or carried name), NULL when none is found */
static const pld_type_t *def_type_in(const pld_block_t *b, int slot);

static const pld_type_t *target_type(const pld_expr_t *t, const pld_expr_t *v, int slot)
{
    if (t->kind == PLD_EX_NAME)
        return t->slot == slot ? (is_yield(v) ? (v->u.call.nargs == 1 ? v->u.call.args[0].value->type : NULL) : v->type)
                               : NULL;
    if (t->kind != PLD_EX_TUPLE)
        return NULL;
    for (int i = 0; i < t->u.seq.n; i++)
        if (t->u.seq.items[i]->kind == PLD_EX_NAME && t->u.seq.items[i]->slot == slot) {
            if (is_yield(v))
                return i < v->u.call.nargs ? v->u.call.args[i].value->type : NULL;
            return v->type && v->type->kind == PLD_TY_TUPLE && i < v->type->nelems ? v->type->elems[i] : NULL;
        }
    return NULL;
}

const pld_type_t *pld_cg_def_type_stmt(const pld_stmt_t *s, int slot)
{
    static const pld_type_t index_type = {.kind = PLD_TY_SCALAR, .dtype = PLD_DT_INDEX};
    const pld_type_t *t = NULL;
    switch (s->kind) {
    case PLD_ST_ASSIGN: return target_type(s->u.assign.target, s->u.assign.value, slot);
    case PLD_ST_IF:
        return (t = def_type_in(&s->u.if_.then, slot)) ? t : def_type_in(&s->u.if_.els, slot);
    case PLD_ST_WHILE: return def_type_in(&s->u.while_.body, slot);
    case PLD_ST_WITH: return def_type_in(&s->u.with.body, slot);
    case PLD_ST_FOR: {
        const pld_expr_t *tg = s->u.for_.target, *lv = tg, *it = s->u.for_.iter;
        const int is_while = it->kind == PLD_EX_CALL && it->op == PLD_OPID_PL_WHILE_; /* target: the carried names */
        if (is_while || (tg->kind == PLD_EX_TUPLE && tg->u.seq.n == 2)) {
            lv = is_while ? NULL : tg->u.seq.items[0];
            const pld_expr_t *c = is_while ? tg : tg->u.seq.items[1], *iv = NULL;
            for (int i = 0; it->kind == PLD_EX_CALL && i < it->u.call.nargs; i++)
                if (it->u.call.args[i].kw && strcmp(it->u.call.args[i].kw, "init_values") == 0)
                    iv = it->u.call.args[i].value;
            int nc = c->kind == PLD_EX_TUPLE ? c->u.seq.n : 1;
            for (int i = 0; iv && (iv->kind == PLD_EX_LIST || iv->kind == PLD_EX_TUPLE) && i < nc && i < iv->u.seq.n; i++) {
                const pld_expr_t *ci = c->kind == PLD_EX_TUPLE ? c->u.seq.items[i] : c;
                if (ci->kind == PLD_EX_NAME && ci->slot == slot)
                    return iv->u.seq.items[i]->type;
            }
        }
        if (lv && lv->kind == PLD_EX_NAME && lv->slot == slot)
            return &index_type;
        return def_type_in(&s->u.for_.body, slot);
    }
    default: return NULL;
    }
}

static const pld_type_t *def_type_in(const pld_block_t *b, int slot)
{
    for (int i = 0; i < b->n; i++) {
        const pld_type_t *t = pld_cg_def_type_stmt(b->stmts[i], slot);
        if (t)
            return t;
    }
    return NULL;
}

static int32_t max_seq(const pld_block_t *b)
{
    int32_t m = -1;
    for (int i = 0; i < b->n; i++) {
        const pld_stmt_t *s = b->stmts[i];
        int32_t v = s->seq;
        if ((s->kind == PLD_ST_FOR || s->kind == PLD_ST_WHILE) && s->seq_end > v)
            v = s->seq_end;
        int32_t w = s->kind == PLD_ST_IF ? (max_seq(&s->u.if_.then) > max_seq(&s->u.if_.els) ? max_seq(&s->u.if_.then)
                                                                                               : max_seq(&s->u.if_.els))
                    : s->kind == PLD_ST_WITH ? max_seq(&s->u.with.body) : -1;
        if (w > v)
            v = w;
        if (v > m)
            m = v;
    }
    return m;
}

/* 1 when slot is assigned somewhere in block b */
static int assigns(const pld_block_t *b, int slot)
{
    return def_type_in(b, slot) != NULL;
}

/* One compiled unit: `body` of function fn, its parameters the slots
 * params[0..np) (types ptypes), for a pl.spmd grid its loop variable; for a
 * pl.at scope (writeback), the slots it assigns that are read after it are
 * handed back to the runtime (the caller's frame) at the end. */
static int gen_static(const pld_program_t *p, int fidx, pld_cgen_t *out, int *cal, int *ncal);

static int gen_unit(const pld_program_t *p, const pld_func_t *fn, const pld_block_t *body, const int32_t *params,
                    const pld_type_t *const *ptypes, int np, const pld_expr_t *loopvar, int writeback,
                    const char *what, const char *crt_text, pld_cgen_t *out, const char *fname, int *cal, int *ncal)
{
    cg_t g;
    memset(&g, 0, sizeof g);
    g.p = p;
    g.fn = fn;
    g.err = out->err;
    g.errn = sizeof out->err;
    pld_buf_init(&g.out);
    pld_buf_init(&g.tmpdecl);
    pld_buf_init(&g.fns);
    pld_buf_init(&g.protos);
    g.slots = pld_mem_calloc((size_t)(fn->nslots > 0 ? fn->nslots : 1), sizeof *g.slots);
    if (!g.slots) {
        snprintf(out->err, sizeof out->err, "out of memory");
        return -1;
    }
    g.uparams = params;
    g.unp = np;
    for (int i = 0; i < np && !g.failed; i++) {
        pld_expr_t nm;
        memset(&nm, 0, sizeof nm);
        nm.kind = PLD_EX_NAME;
        nm.span = fn->name_span;
        nm.u.name = fn->slot_names[params[i]];
        nm.slot = params[i];
        note_slot(&g, &nm, ptypes[i]);
    }
    if (loopvar && !g.failed) {
        if (loopvar->kind != PLD_EX_NAME || loopvar->slot < 0)
            pld_cg_fail(&g, loopvar->span, "the native backend needs a plain loop variable");
        else
            g.slots[loopvar->slot].kind = SK_INT, g.slots[loopvar->slot].dt = PLD_DT_INDEX;
    }
    if (!g.failed)
        scan_block(&g, body);
    /* tensor parameters of static shape the unit never assigns: their shape
     * is a constant of the element accesses (issue 44; checked at entry) */
    for (int i = 0; i < np && !g.failed; i++) {
        const pld_type_t *pt = ptypes[i];
        int ok = g.slots[params[i]].kind == SK_TENSOR && pt && pt->kind == PLD_TY_TENSOR && pt->rank >= 1 &&
                 pt->rank <= PC_MAX_RANK && !assigns(body, params[i]);
        for (int d = 0; ok && d < pt->rank; d++)
            ok = pt->shape[d].kind == PLD_DIM_CONST && pt->shape[d].v >= 0;
        if (ok)
            g.slots[params[i]].fixed = pt;
    }
    /* a scope's results: what it assigns and a later statement reads */
    int32_t wb[64];
    int nwb = 0;
    if (writeback && !g.failed && fn->last_use) {
        const int32_t end = max_seq(body);
        for (int sl = 0; sl < fn->nslots && !g.failed; sl++) {
            if (!assigns(body, sl) || fn->last_use[sl] <= end)
                continue;
            /* a tile never flows out: only another kernel scope could read it,
             * as a captured tile, which no backend launch carries */
            if (g.slots[sl].kind == SK_TILE || g.slots[sl].kind == SK_NONE)
                continue;
            if (nwb == 64)
                pld_cg_fail(&g, body->n ? body->stmts[0]->span : fn->name_span,
                            "more than 64 values assigned in the scope are read after it");
            else
                wb[nwb++] = sl;
        }
    }
    if (!g.failed)
        pld_cg_fuse_plan(&g, body);
    g.ind = 1;
    if (loopvar && !g.failed)
        pld_cg_emit(&g, "s%d = pc_block_idx(args);", loopvar->slot);
    if (!g.failed)
        pld_cg_block(&g, body, NULL);
    int rc = -1;
    /* the kernel functions it calls: static functions of this source (pc_fN),
     * generated as their own units are (the same sites) */
    pld_buf_t defs;
    pld_buf_init(&defs);
    if (fname && cal) {
        for (int i = 0; i < g.ncallees && *ncal < 32; i++) {
            int seen = 0;
            for (int k = 0; k < *ncal; k++)
                seen |= cal[k] == g.callees[i];
            if (!seen)
                cal[(*ncal)++] = g.callees[i];
        }
    } else if (!g.failed) {
        int todo[32], nt = 0;
        for (int i = 0; i < g.ncallees; i++)
            todo[nt++] = g.callees[i];
        for (int i = 0; i < nt && !g.failed; i++) {
            pld_cgen_t sub;
            memset(&sub, 0, sizeof sub);
            if (gen_static(p, todo[i], &sub, todo, &nt) != 0) {
                g.failed = 1;
                snprintf(out->err, sizeof out->err, "%s", sub.err);
            } else {
                pld_buf_puts(&defs, sub.source);
            }
            pld_cgen_free(&sub);
        }
        g.ncallees = nt;
        for (int i = 0; i < nt && i < 32; i++)
            g.callees[i] = todo[i];
    }
    if (!g.failed) {
        pld_buf_t src;
        pld_buf_init(&src);
        if (!fname) {
            pld_buf_puts(&src, crt_text);
            /* the file's base name only: copies of a program elsewhere share the cache */
            const char *base = strrchr(p->file, '/') ? strrchr(p->file, '/') + 1 : p->file;
            pld_buf_printf(&src, "\n/* %s of %s (generated by pldrun; do not edit) */\n", what, base);
            for (int i = 0; i < g.ncallees; i++)
                pld_buf_printf(&src, "static int pc_f%d(const pc_rt *rt, void *bk, int64_t *args);\n", g.callees[i]);
            pld_buf_puts(&src, pld_buf_str(&g.protos));
            pld_buf_puts(&src, "int pld_ckernel(const pc_rt *rt, void *bk, int64_t *args);\n");
            pld_buf_puts(&src, "int pld_ckernel(const pc_rt *rt, void *bk, int64_t *args)\n{\n");
        } else {
            pld_buf_puts(&src, pld_buf_str(&g.protos));
            pld_buf_printf(&src, "\n/* %s */\nstatic int %s(const pc_rt *rt, void *bk, int64_t *args)\n{\n", what, fname);
        }
        pld_buf_puts(&src, "    if (rt->version != PC_VERSION || rt->size < sizeof(pc_rt))\n"
                           "        return pc_cold(), rt->fail(bk, -1, \"the kernel was compiled for another runtime version\");\n");
        for (int i = 0; i < fn->nslots; i++) {
            const char *ct = ctype(g.slots[i].kind);
            pld_cg_sys_decl(&g, i, &src);
            if (!ct)
                continue;
            pld_buf_printf(&src, "    %s s%d; memset(&s%d, 0, sizeof s%d); /* %s */\n", ct, i, i, i, fn->slot_names[i]);
            if (g.slots[i].kind == SK_TILE && g.slots[i].nodata)
                pld_buf_puts(&src, "    /* only fused chains define and read it: no storage */\n");
            else if (g.slots[i].kind == SK_TILE)
                pld_buf_printf(&src, "    if (!(s%d.data = rt->alloc(bk, -1, %zu))) return pc_cold(), 1;\n", i,
                               g.slots[i].bytes ? g.slots[i].bytes : 1);
        }
        pld_buf_puts(&src, pld_buf_str(&g.tmpdecl));
        /* the capacity check only where the tiles could exceed a memory space */
        int64_t tot[16] = {0};
        for (int i = 0; i < fn->nslots; i++)
            for (int m = 0; m < 16; m++)
                if (g.slots[i].kind == SK_TILE && (g.slots[i].mems >> m & 1u))
                    tot[m] += (int64_t)g.slots[i].bytes;
        /* no more than the tiles live at one check (issue 44: a loop's
         * checks cost more than its rotation in bench rope) */
        for (int m = 0; m < 16; m++)
            if (g.ub_live >= 0 && tot[m] > g.ub_live)
                tot[m] = g.ub_live;
        pld_buf_puts(&src, "    static const int64_t ub_tot[16] = {");
        for (int m = 0; m < 16; m++)
            pld_buf_printf(&src, "%s%lld", m ? ", " : "", (long long)tot[m]);
        pld_buf_puts(&src, "};\n    const int ubc = rt->ub_needed(bk, ub_tot, 16);\n    (void)ubc;\n");
        /* parameters: tensors first, then scalars (pld_abi_build) */
        int nt = 0;
        for (int i = 0; i < np; i++)
            if (g.slots[params[i]].kind == SK_TENSOR)
                nt++;
        for (int i = 0, ti = 0, si = nt; i < np; i++) {
            const int sl = params[i];
            const pld_dtype_t dt = ptypes[i] ? ptypes[i]->dtype : PLD_DT_NONE;
            switch (g.slots[sl].kind) {
            case SK_TENSOR:
                /* the ChipTensor's dtype must be the one the kernel was compiled for */
                if (pld_abi_dtype_code(dt) >= 0)
                    pld_buf_printf(&src, "    if (pc_arg_dtype(args, %d) != %d) { char m_[256]; snprintf(m_, sizeof m_, "
                                         "\"%s: tensor argument '%s' has ABI dtype code %%d, the kernel was compiled for %s "
                                         "(code %d)\", pc_arg_dtype(args, %d)); return pc_cold(), rt->fail(bk, -1, m_); }\n",
                                   ti, pld_abi_dtype_code(dt), what, fn->slot_names[sl], pld_dtype_name(dt),
                                   pld_abi_dtype_code(dt), ti);
                pld_buf_printf(&src, "    pc_tensor_arg(&s%d, args[%d], %d, %d);\n", sl, ti++, (int)dt,
                               pld_dtype_storage_bytes(dt));
                if (g.slots[sl].fixed) {
                    const pld_type_t *ft = g.slots[sl].fixed;
                    pld_buf_printf(&src, "    if (s%d.rank != %d", sl, ft->rank);
                    for (int d = 0; d < ft->rank; d++)
                        pld_buf_printf(&src, " || s%d.shape[%d] != %lld", sl, d, (long long)ft->shape[d].v);
                    pld_buf_printf(&src, ") return pc_cold(), rt->fail(bk, -1, \"%s: tensor argument '%s' does not have the "
                                         "shape the kernel was compiled for\");\n", what, fn->slot_names[sl]);
                }
                continue;
            case SK_INT: pld_buf_printf(&src, "    s%d = (int64_t)args[%d];\n", sl, si); break;
            case SK_FLT:
                if (dt == PLD_DT_FP32)
                    pld_buf_printf(&src, "    s%d = (double)pc_f32_bits((uint64_t)args[%d]);\n", sl, si);
                else
                    pld_buf_printf(&src, "    s%d = rt->from_bits(%d, (uint64_t)args[%d]);\n", sl, (int)dt, si);
                break;
            case SK_CTX: pld_buf_printf(&src, "    s%d = (int64_t)args[%d]; /* the CommContext */\n", sl, si); break;
            default: break;
            }
            si++;
        }
        pld_buf_puts(&src, pld_buf_str(&g.out));
        for (int i = 0; i < nwb; i++) {
            const int sl = wb[i];
            switch (g.slots[sl].kind) {
            case SK_INT: pld_buf_printf(&src, "    if (rt->set_int(bk, %d, %d, s%d)) return pc_cold(), 1;\n", sl, (int)g.slots[sl].dt, sl); break;
            case SK_FLT: pld_buf_printf(&src, "    if (rt->set_float(bk, %d, %d, s%d)) return pc_cold(), 1;\n", sl, (int)g.slots[sl].dt, sl); break;
            case SK_TENSOR: pld_buf_printf(&src, "    if (rt->set_tensor(bk, -1, %d, &s%d)) return pc_cold(), 1;\n", sl, sl); break;
            case SK_CTX: pld_buf_printf(&src, "    if (rt->set_ctx(bk, %d, s%d)) return pc_cold(), 1;\n", sl, sl); break;
            default: break;
            }
        }
        pld_buf_puts(&src, "    return 0;\n}\n");
        pld_buf_puts(&src, pld_buf_str(&g.fns));
        pld_buf_puts(&src, pld_buf_str(&defs));
        out->source = pld_mem_strdup(pld_buf_str(&src));
        pld_buf_fini(&src);
        if (out->source) {
            rc = 0;
            out->sites = g.sites;
            out->nsites = g.nsites;
            g.sites = NULL;
        } else {
            snprintf(out->err, sizeof out->err, "out of memory");
        }
    }
    pld_mem_free((void *)g.sites);
    pld_mem_free(g.slots);
    pld_mem_free(g.fuse_total);
    pld_buf_fini(&g.out);
    pld_buf_fini(&g.tmpdecl);
    pld_buf_fini(&defs);
    pld_buf_fini(&g.fns);
    pld_buf_fini(&g.protos);
    return rc;
}

int pld_cgen_kernel(const pld_program_t *p, const pld_func_t *fn, const char *crt_text, pld_cgen_t *out)
{
    memset(out, 0, sizeof *out);
    int32_t *params = pld_mem_calloc((size_t)(fn->nparams > 0 ? fn->nparams : 1), sizeof *params);
    const pld_type_t **types = pld_mem_calloc((size_t)(fn->nparams > 0 ? fn->nparams : 1), sizeof *types);
    if (!params || !types) {
        pld_mem_free(params);
        pld_mem_free((void *)types);
        snprintf(out->err, sizeof out->err, "out of memory");
        return -1;
    }
    for (int i = 0; i < fn->nparams; i++) {
        params[i] = fn->params[i].slot;
        types[i] = fn->params[i].type;
    }
    char what[160];
    snprintf(what, sizeof what, "kernel %s", fn->name);
    int rc = gen_unit(p, fn, &fn->body, params, types, fn->nparams, NULL, 0, what, crt_text, out, NULL, NULL, NULL);
    pld_mem_free(params);
    pld_mem_free((void *)types);
    return rc;
}

/* kernel function fidx as `static int pc_f<fidx>(...)` (no header): the
 * code a caller's unit calls; the functions it calls are added to cal */
static int gen_static(const pld_program_t *p, int fidx, pld_cgen_t *out, int *cal, int *ncal)
{
    memset(out, 0, sizeof *out);
    const pld_func_t *fn = p->funcs[fidx];
    int32_t params[64];
    const pld_type_t *types[64];
    if (fn->nparams > 64) {
        snprintf(out->err, sizeof out->err, "%s: more than 64 parameters", fn->name);
        return -1;
    }
    for (int i = 0; i < fn->nparams; i++) {
        params[i] = fn->params[i].slot;
        types[i] = fn->params[i].type;
    }
    char what[160], name[32];
    snprintf(what, sizeof what, "kernel %s, called", fn->name);
    snprintf(name, sizeof name, "pc_f%d", fidx);
    return gen_unit(p, fn, &fn->body, params, types, fn->nparams, NULL, 0, what, NULL, out, name, cal, ncal);
}

int pld_cgen_scope(const pld_program_t *p, const pld_func_t *fn, const pld_stmt_t *s, const char *crt_text,
                   pld_cgen_t *out)
{
    memset(out, 0, sizeof *out);
    const pld_block_t *body;
    const pld_expr_t *loopvar = NULL;
    if (s->kind == PLD_ST_WITH) {
        body = &s->u.with.body;
    } else if (s->kind == PLD_ST_FOR && s->u.for_.iter->kind == PLD_EX_CALL && s->u.for_.iter->op == PLD_OPID_PL_SPMD) {
        body = &s->u.for_.body;
        loopvar = s->u.for_.target;
    } else {
        snprintf(out->err, sizeof out->err, "%s:%d:%d: this scope is not compiled by the native backend", p->file,
                 (int)s->span.line, (int)s->span.col);
        return -1;
    }
    const int np = s->captures ? s->ncaptures : 0;
    const pld_type_t **types = pld_mem_calloc((size_t)(np > 0 ? np : 1), sizeof *types);
    if (!types) {
        snprintf(out->err, sizeof out->err, "out of memory");
        return -1;
    }
    for (int i = 0; i < np; i++) {
        const int sl = s->captures[i];
        for (int k = 0; k < fn->nparams && !types[i]; k++)
            if (fn->params[k].slot == sl)
                types[i] = fn->params[k].type;
        if (!types[i])
            types[i] = def_type_in(&fn->body, sl);
    }
    char what[160];
    snprintf(what, sizeof what, "scope at line %d of %s", (int)s->span.line, fn->name);
    int rc = gen_unit(p, fn, body, s->captures, types, np, loopvar, s->kind == PLD_ST_WITH, what, crt_text, out, NULL, NULL,
                      NULL);
    pld_mem_free((void *)types);
    return rc;
}

void pld_cgen_free(pld_cgen_t *g)
{
    if (!g)
        return;
    pld_mem_free(g->source);
    pld_mem_free((void *)g->sites);
    g->source = NULL;
    g->sites = NULL;
    g->nsites = 0;
}
