/* pld_types.c - enum tables of the IR and type helpers. */
#include "pld_ast.h"
#include "pld_size.h"

#include <string.h>

static const char *const level_names[] = {
    [PLD_LV_NONE] = "None", [PLD_LV_AIV] = "AIV", [PLD_LV_AIC] = "AIC", [PLD_LV_CORE_GROUP] = "CORE_GROUP",
    [PLD_LV_CHIP_DIE] = "CHIP_DIE", [PLD_LV_CHIP] = "CHIP", [PLD_LV_HOST] = "HOST",
    [PLD_LV_CLUSTER_0] = "CLUSTER_0", [PLD_LV_CLUSTER_1] = "CLUSTER_1", [PLD_LV_CLUSTER_2] = "CLUSTER_2",
    [PLD_LV_GLOBAL] = "GLOBAL",
};

const char *pld_level_name(pld_level_t l)
{
    return (unsigned)l <= PLD_LV_GLOBAL ? level_names[l] : "?";
}

pld_level_t pld_level_from_name(const char *name)
{
    for (int i = 1; i <= PLD_LV_GLOBAL; i++)
        if (strcmp(level_names[i], name) == 0)
            return (pld_level_t)i;
    static const struct {
        const char *alias;
        pld_level_t l;
    } aliases[] = {{"L2CACHE", PLD_LV_CHIP_DIE}, {"PROCESSOR", PLD_LV_CHIP}, {"UMA", PLD_LV_CHIP},
                   {"NODE", PLD_LV_HOST},         {"POD", PLD_LV_CLUSTER_0}, {"CLOS1", PLD_LV_CLUSTER_1},
                   {"CLOS2", PLD_LV_CLUSTER_2}};
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(aliases[i].alias, name) == 0)
            return aliases[i].l;
    return PLD_LV_NONE;
}

static const char *const ftype_names[] = {
    [PLD_FT_OPAQUE] = "Opaque", [PLD_FT_ORCHESTRATION] = "Orchestration", [PLD_FT_INCORE] = "InCore",
    [PLD_FT_AIC] = "AIC", [PLD_FT_AIV] = "AIV", [PLD_FT_GROUP] = "Group", [PLD_FT_SPMD] = "Spmd",
    [PLD_FT_INLINE] = "Inline", [PLD_FT_GRAPH] = "Graph",
};

const char *pld_ftype_name(pld_ftype_t f)
{
    return (unsigned)f <= PLD_FT_GRAPH ? ftype_names[f] : "?";
}

int pld_ftype_from_name(const char *name)
{
    for (int i = 0; i <= PLD_FT_GRAPH; i++)
        if (strcmp(ftype_names[i], name) == 0)
            return i;
    return -1;
}

static const char *const mem_names[] = {
    [PLD_MEM_NONE] = "None", [PLD_MEM_DDR] = "DDR", [PLD_MEM_VEC] = "Vec", [PLD_MEM_MAT] = "Mat",
    [PLD_MEM_LEFT] = "Left", [PLD_MEM_RIGHT] = "Right", [PLD_MEM_ACC] = "Acc", [PLD_MEM_BIAS] = "Bias",
    [PLD_MEM_LEFTSCALE] = "LeftScale", [PLD_MEM_RIGHTSCALE] = "RightScale",
};

const char *pld_mem_name(pld_mem_t m)
{
    return (unsigned)m <= PLD_MEM_RIGHTSCALE ? mem_names[m] : "?";
}

int pld_mem_from_name(const char *name)
{
    for (int i = 1; i <= PLD_MEM_RIGHTSCALE; i++)
        if (strcmp(mem_names[i], name) == 0)
            return i;
    return -1;
}

const pld_type_t pld_type_unknown = {.kind = PLD_TY_UNKNOWN};
const pld_type_t pld_type_none = {.kind = PLD_TY_NONE};
const pld_type_t pld_type_ptr = {.kind = PLD_TY_PTR};
const pld_type_t pld_type_commctx = {.kind = PLD_TY_COMMCTX};
const pld_type_t pld_type_prefetch_ctx = {.kind = PLD_TY_PREFETCH_CTX};
const pld_type_t pld_type_async_event = {.kind = PLD_TY_ASYNC_EVENT};
const pld_type_t pld_type_async_session = {.kind = PLD_TY_ASYNC_SESSION};

pld_type_t *pld_type_new(pld_program_t *p, pld_type_kind_t k)
{
    pld_type_t *t = pld_arena_alloc(&p->arena, sizeof *t);
    if (t)
        t->kind = k;
    return t;
}

const pld_type_t *pld_type_scalar(pld_program_t *p, pld_dtype_t d)
{
    pld_type_t *t = pld_type_new(p, PLD_TY_SCALAR);
    if (t)
        t->dtype = d;
    return t ? t : &pld_type_unknown;
}

pld_dim_t *pld_dims_new(pld_program_t *p, int rank)
{
    return pld_arena_alloc(&p->arena, (size_t)(rank > 0 ? rank : 1) * sizeof(pld_dim_t));
}

void pld_dim_print(const pld_dim_t *d, pld_buf_t *out)
{
    switch (d->kind) {
    case PLD_DIM_CONST:
        pld_buf_printf(out, "%lld", (long long)d->v);
        break;
    case PLD_DIM_SYM:
        pld_buf_puts(out, d->sym);
        break;
    case PLD_DIM_EXPR:
        if (d->expr)
            pld_ast_print_expr(d->expr, out);
        else
            pld_buf_puts(out, "?");
        break;
    }
}

static void print_dims(const pld_dim_t *dims, int rank, pld_buf_t *out)
{
    pld_buf_putc(out, '[');
    for (int i = 0; i < rank; i++) {
        if (i)
            pld_buf_puts(out, ", ");
        pld_dim_print(&dims[i], out);
    }
    pld_buf_putc(out, ']');
}

void pld_type_print(const pld_type_t *t, pld_buf_t *out)
{
    switch (t->kind) {
    case PLD_TY_UNKNOWN: pld_buf_puts(out, "<unknown>"); return;
    case PLD_TY_NONE: pld_buf_puts(out, "<no value>"); return;
    case PLD_TY_SCALAR: pld_buf_printf(out, "pl.Scalar[pl.%s]", pld_dtype_name(t->dtype)); return;
    case PLD_TY_PTR: pld_buf_puts(out, "pl.Ptr"); return;
    case PLD_TY_COMMCTX: pld_buf_puts(out, "pld.CommCtxType"); return;
    case PLD_TY_PREFETCH_CTX: pld_buf_puts(out, "pl.PrefetchAsyncContext"); return;
    case PLD_TY_ASYNC_EVENT: pld_buf_puts(out, "pl.AsyncEvent"); return;
    case PLD_TY_ASYNC_SESSION: pld_buf_puts(out, "pl.AsyncSession"); return;
    case PLD_TY_MARKER: pld_buf_puts(out, "<marker>"); return;
    case PLD_TY_ARRAY: pld_buf_printf(out, "pl.Array[%lld, pl.%s]", (long long)t->array_len, pld_dtype_name(t->dtype)); return;
    case PLD_TY_TUPLE:
        pld_buf_puts(out, "pl.Tuple[");
        for (int i = 0; i < t->nelems; i++) {
            if (i)
                pld_buf_puts(out, ", ");
            pld_type_print(t->elems[i], out);
        }
        pld_buf_putc(out, ']');
        return;
    case PLD_TY_TENSOR:
    case PLD_TY_DTENSOR:
    case PLD_TY_TILE:
        pld_buf_puts(out, t->kind == PLD_TY_TENSOR ? "pl.Tensor[" : t->kind == PLD_TY_DTENSOR ? "pld.DistributedTensor[" : "pl.Tile[");
        print_dims(t->shape, t->rank, out);
        pld_buf_printf(out, ", pl.%s", pld_dtype_name(t->dtype));
        if (t->kind == PLD_TY_TILE && t->mem != PLD_MEM_NONE)
            pld_buf_printf(out, ", pl.Mem.%s", pld_mem_name(t->mem));
        if (t->valid) {
            pld_buf_puts(out, t->kind == PLD_TY_TILE ? ", pl.TileView(valid_shape=" : ", pl.TensorView(valid_shape=");
            print_dims(t->valid, t->rank, out);
            pld_buf_putc(out, ')');
        }
        pld_buf_putc(out, ']');
        return;
    }
}

int pld_dim_eq(const pld_dim_t *a, const pld_dim_t *b)
{
    if (a->kind == PLD_DIM_CONST && b->kind == PLD_DIM_CONST)
        return a->v == b->v;
    if (a->kind == PLD_DIM_SYM && b->kind == PLD_DIM_SYM && a->sym == b->sym)
        return 1;
    return -1;
}

int pld_type_is_tensorlike(const pld_type_t *t)
{
    return t->kind == PLD_TY_TENSOR || t->kind == PLD_TY_DTENSOR;
}

int64_t pld_type_static_numel(const pld_type_t *t)
{
    int64_t n = 1, d;
    int zero = 0;
    for (int i = 0; i < t->rank; i++)
        if (t->shape[i].kind != PLD_DIM_CONST)
            return -1;
    /* as pld_size_numel: a zero dim gives 0, the other dims must still fit */
    for (int i = 0; i < t->rank; i++) {
        d = t->shape[i].v;
        if (d < 0 || (d > 0 && pld_size_mul(n, d, &n)))
            return -2;
        zero |= d == 0;
    }
    return zero ? 0 : n;
}
