/* pld_check_sys.c - checker rules of the ops between the cores of a cluster
 * (pl.system.*): the cross-core pipe of mixed AIC+AIV kernels
 * (aic/aiv_initialize_pipe, reserve_buffer, import_peer_buffer,
 * tpush_to_aiv/aic, tpop_from_aic/aiv, tfree_to_aic/aiv), cross-core events
 * (sync_set, sync_wait), barriers (syncall, set_ffts, cacheinvalid, fence,
 * bar_*, sync_src/dst), lane and core counts (get_subblock_idx,
 * available_cluster_count, available_aiv_count). The constraints are
 * PyPTO's (snapshot e2d0f78ae6d7: python/pypto/language/op/system_ops.py,
 * python/pypto/ir/op/system_ops.py, docs/en/reference/pto-isa/01-tpush_tpop.md).
 * pld_ck_sys_call() returns NULL for every other op. */
#include "pld_check.h"
#include "pld_check_int.h"

#include <stdio.h>
#include <string.h>

/* The direction an op is bound to: 'c' = AIC only, 'v' = AIV only, 0 = either. */
static int side_of(pld_op_id_t id)
{
    switch (id) {
    case PLD_OPID_SYS_TPUSH_TO_AIV: case PLD_OPID_SYS_TPOP_FROM_AIV: case PLD_OPID_SYS_TFREE_TO_AIV:
    case PLD_OPID_SYS_AIC_INITIALIZE_PIPE: case PLD_OPID_SYS_RESERVE_BUFFER:
        return 'c';
    case PLD_OPID_SYS_TPUSH_TO_AIC: case PLD_OPID_SYS_TPOP_FROM_AIC: case PLD_OPID_SYS_TFREE_TO_AIC:
    case PLD_OPID_SYS_AIV_INITIALIZE_PIPE: case PLD_OPID_SYS_IMPORT_PEER_BUFFER:
        return 'v';
    default:
        return 0;
    }
}

/* An int keyword that must be constant and within [lo, hi] when present. */
static void int_in(pld_ck_t *ck, const ck_call_t *c, int i, const char *what, int64_t lo, int64_t hi)
{
    int64_t v;
    if (!c->args[i])
        return;
    if (!pld_ck_const_int(ck, c->args[i], &v))
        pld_ck_error(ck, c->args[i]->span, "%s %s must be a compile-time integer", c->info->name, what);
    else if (v < lo || v > hi)
        pld_ck_error(ck, c->args[i]->span, "%s %s must be in [%lld, %lld], found %lld", c->info->name, what,
                     (long long)lo, (long long)hi, (long long)v);
}

static void str_in(pld_ck_t *ck, const ck_call_t *c, int i, const char *what, const char *const *ok, int n)
{
    const char *s = c->args[i] ? pld_ck_const_str(c->args[i]) : NULL;
    if (!c->args[i])
        return;
    for (int k = 0; s && k < n; k++)
        if (strcmp(s, ok[k]) == 0)
            return;
    char list[128] = "";
    for (int k = 0; k < n; k++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s'%s'", k ? ", " : "", ok[k]);
    pld_ck_error(ck, c->args[i]->span, "%s %s must be one of %s", c->info->name, what, list);
}

static const pld_type_t *scalar_of(pld_ck_t *ck, pld_dtype_t dt)
{
    static const pld_dim_t none[1];
    return pld_ck_shaped(ck, PLD_TY_SCALAR, dt, none, 0, NULL, PLD_MEM_NONE);
}

/* tpop_from_aic/aiv: a tile of shape= / dtype= in the consumer's memory
 * (Vec on the AIV, Mat on the AIC); unknown without them (the annotation of
 * the assignment then gives the type). */
static const pld_type_t *tpop_type(pld_ck_t *ck, const ck_call_t *c, pld_mem_t mem)
{
    pld_dim_t dims[PLD_CK_MAX_RANK];
    if (!c->args[0] || !c->args[1])
        return &pld_type_unknown;
    int r = pld_ck_dims_of_list(ck, c->args[0], dims);
    pld_dtype_t dt = pld_ck_dtype_arg(ck, c->args[1]);
    if (r <= 0 || dt == PLD_DT_NONE)
        return &pld_type_unknown;
    return pld_ck_shaped(ck, PLD_TY_TILE, dt, dims, r, NULL, mem);
}

/* aiv_shard / aic_gather: the split axis (split=, else the enclosing
 * pl.split_aiv mode) halved (ceil) or doubled, the valid extent likewise;
 * NONE keeps the shape. */
static const pld_type_t *shard_type(pld_ck_t *ck, const ck_call_t *c, int shard)
{
    const pld_type_t *t = c->types[0];
    int64_t split = ck->split_mode;
    if (!t || t->kind != PLD_TY_TILE || (c->args[2] && !pld_ck_const_int(ck, c->args[2], &split)))
        return &pld_type_unknown;
    pld_dim_t dims[PLD_CK_MAX_RANK], valid[PLD_CK_MAX_RANK];
    if (t->rank > PLD_CK_MAX_RANK)
        return &pld_type_unknown;
    for (int d = 0; d < t->rank; d++) {
        dims[d] = t->shape[d];
        valid[d] = t->valid ? t->valid[d] : t->shape[d];
    }
    if (split) {
        if (t->rank != 2) {
            pld_ck_error(ck, c->call->span, "%s requires a 2D tile, but got rank %d", c->info->name, t->rank);
            return &pld_type_unknown;
        }
        int ax = split == 1 ? 0 : 1;
        if (dims[ax].kind != PLD_DIM_CONST)
            return &pld_type_unknown;
        dims[ax].v = shard ? (dims[ax].v + 1) / 2 : dims[ax].v * 2;
        if (valid[ax].kind == PLD_DIM_CONST)
            valid[ax].v = shard ? (valid[ax].v + 1) / 2 : valid[ax].v * 2;
        else
            valid[ax] = dims[ax];
    }
    return pld_ck_shaped(ck, PLD_TY_TILE, t->dtype, dims, t->rank, t->valid || split ? valid : NULL,
                         shard ? PLD_MEM_VEC : PLD_MEM_MAT);
}

static void syncall_rules(pld_ck_t *ck, const ck_call_t *c)
{
    const char *mode = c->args[1] ? pld_ck_const_str(c->args[1]) : "hard";
    static const char *const modes[] = {"hard", "soft"};
    static const char *const types[] = {"aiv_only", "aic_only", "mix"};
    str_in(ck, c, 1, "mode", modes, 2);
    str_in(ck, c, 0, "core_type", types, 3);
    if (mode && strcmp(mode, "hard") == 0 && (c->args[2] || c->args[3]))
        pld_ck_error(ck, c->call->span, "syncall(mode='hard') takes no gm_workspace/used_cores; pass mode='soft' to "
                                        "use the GM-polling barrier");
    if (mode && strcmp(mode, "soft") == 0) {
        if (!c->args[2])
            pld_ck_error(ck, c->call->span, "soft syncall requires gm_workspace (a shared, zero-initialized GM INT32 tensor)");
        else if (c->types[2] && c->types[2]->kind == PLD_TY_TENSOR && c->types[2]->dtype != PLD_DT_INT32)
            pld_ck_error(ck, c->args[2]->span, "soft syncall gm_workspace must be an INT32 tensor, found %s",
                         pld_dtype_name(c->types[2]->dtype));
        if (!c->args[3])
            pld_ck_error(ck, c->call->span, "soft syncall requires explicit used_cores; pass 0 only when the device "
                                            "launch configuration matches the runtime's logical grid");
    }
}

static void set_ffts_rules(pld_ck_t *ck, const ck_call_t *c)
{
    const pld_type_t *t = c->types[0];
    if (!t || t->kind == PLD_TY_UNKNOWN)
        return;
    if (t->dtype != PLD_DT_INT64)
        pld_ck_error(ck, c->args[0]->span, "system.set_ffts workspace must have INT64 dtype, got %s", pld_dtype_name(t->dtype));
    else if (t->rank != 1)
        pld_ck_error(ck, c->args[0]->span, "system.set_ffts workspace must be 1-D, got rank %d", t->rank);
    else if (t->shape[0].kind != PLD_DIM_CONST || t->shape[0].v < 256)
        pld_ck_error(ck, c->args[0]->span, "system.set_ffts workspace must have a static length of at least 256 INT64 "
                                           "elements");
}

const pld_type_t *pld_ck_sys_call(pld_ck_t *ck, ck_call_t *c)
{
    const pld_op_id_t id = c->info->id;
    int side = side_of(id);
    if (side && ck->fn && (ck->fn->ftype == PLD_FT_AIC || ck->fn->ftype == PLD_FT_AIV) &&
        ck->fn->ftype != (side == 'c' ? PLD_FT_AIC : PLD_FT_AIV))
        pld_ck_error(ck, c->call->span, "%s runs on the %s, but '%s' is an %s function", c->info->name,
                     side == 'c' ? "AIC (cube)" : "AIV (vector)", ck->fn->name,
                     ck->fn->ftype == PLD_FT_AIC ? "AIC" : "AIV");
    switch (id) {
    case PLD_OPID_TILE_GET_SUBBLOCK_IDX:
        return scalar_of(ck, PLD_DT_INDEX);
    case PLD_OPID_TILE_AIV_SHARD: case PLD_OPID_TILE_AIC_GATHER:
        int_in(ck, c, 2, "split", 0, 2);
        return shard_type(ck, c, id == PLD_OPID_TILE_AIV_SHARD);
    case PLD_OPID_SYS_AVAILABLE_CLUSTER_COUNT: case PLD_OPID_SYS_AVAILABLE_AIV_COUNT:
    case PLD_OPID_SYS_RESERVE_BUFFER: case PLD_OPID_SYS_IMPORT_PEER_BUFFER:
        if (id == PLD_OPID_SYS_RESERVE_BUFFER)
            int_in(ck, c, 1, "size", 1, (int64_t)1 << 40);
        return scalar_of(ck, PLD_DT_INT32);
    case PLD_OPID_SYS_AIC_INITIALIZE_PIPE: case PLD_OPID_SYS_AIV_INITIALIZE_PIPE:
        int_in(ck, c, 2, "dir_mask", 1, 3);
        int_in(ck, c, 3, "slot_size", 1, (int64_t)1 << 40);
        int_in(ck, c, 4, "slot_num", 1, 64);
        int_in(ck, c, 5, "local_slot_num", 1, 64);
        int_in(ck, c, 6, "id", 0, 15);
        return &pld_type_none;
    case PLD_OPID_SYS_TPUSH_TO_AIV: case PLD_OPID_SYS_TPUSH_TO_AIC:
        int_in(ck, c, 1, "split", 0, 4);
        int_in(ck, c, id == PLD_OPID_SYS_TPUSH_TO_AIV ? 3 : 2, "id", 0, 15);
        return &pld_type_none;
    case PLD_OPID_SYS_TPOP_FROM_AIC: case PLD_OPID_SYS_TPOP_FROM_AIV:
        int_in(ck, c, 2, "split", 0, 4);
        int_in(ck, c, id == PLD_OPID_SYS_TPOP_FROM_AIC ? 4 : 3, "id", 0, 15);
        return tpop_type(ck, c, id == PLD_OPID_SYS_TPOP_FROM_AIC ? PLD_MEM_VEC : PLD_MEM_MAT);
    case PLD_OPID_SYS_TFREE_TO_AIC: case PLD_OPID_SYS_TFREE_TO_AIV:
        int_in(ck, c, 2, "split", 0, 4);
        int_in(ck, c, 3, "id", 0, 15);
        return &pld_type_none;
    case PLD_OPID_SYS_SYNC_SET: case PLD_OPID_SYS_SYNC_WAIT: {
        static const char *const cores[] = {"aic", "aiv"};
        if (!c->args[0])
            pld_ck_error(ck, c->call->span, "%s needs an event_id", c->info->name);
        else if (c->args[0]->kind == PLD_EX_INT)
            int_in(ck, c, 0, "event_id (user events are 0-13; 14 and 15 are reserved)", 0, 13);
        if (id == PLD_OPID_SYS_SYNC_SET) {
            int_in(ck, c, 2, "ffts_mode", 0, 2);
            str_in(ck, c, 3, "core_type", cores, 2);
        } else {
            str_in(ck, c, 2, "core_type", cores, 2);
        }
        return &pld_type_none;
    }
    case PLD_OPID_SYS_SYNCALL:
        syncall_rules(ck, c);
        return &pld_type_none;
    case PLD_OPID_SYS_SET_FFTS:
        set_ffts_rules(ck, c);
        return &pld_type_none;
    case PLD_OPID_SYS_CACHEINVALID:
        if (c->args[0] && (!c->args[1] || !c->args[2]))
            pld_ck_error(ck, c->call->span, "system.cacheinvalid region form requires both shapes and offsets (or pass "
                                            "no arguments for the whole-GM form)");
        else if (!c->args[0] && (c->args[1] || c->args[2]))
            pld_ck_error(ck, c->call->span, "system.cacheinvalid whole-GM form takes no shapes/offsets; pass (tensor, "
                                            "shapes, offsets) for the region form");
        return &pld_type_none;
    case PLD_OPID_SYS_FENCE: case PLD_OPID_SYS_BAR_V: case PLD_OPID_SYS_BAR_M: case PLD_OPID_SYS_BAR_ALL:
    case PLD_OPID_SYS_SYNC_SRC: case PLD_OPID_SYS_SYNC_DST:
        return &pld_type_none;
    default:
        return NULL;
    }
}
