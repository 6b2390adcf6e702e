/* pld_ops.c - the op table (a `const` table, no mutable state), aliases,
 * unified names, suggestions. The signatures of pld_ops.def are parsed at
 * build time by tools/gen_ops_table.c into pld_ops_sig.inc (PLD_OPS_SIG_<ID>:
 * variadic, nparams, params), in the build tree. */
#include "pld_ast.h"
#include "pld_ops_sig.inc"

#include <string.h>

#define H PLD_OPL_H
#define C PLD_OPL_C
#define K PLD_OPL_K
#define S PLD_OPL_S
#define HK (H | K)
#define CK (C | K)
#define HCK (H | C | K)

static const pld_op_info_t table[PLD_OPID__COUNT] = {
#define PLD_OP(id, name, lv, sig, doc) {PLD_OPID_##id, name, lv, PLD_OPS_SIG_##id, doc, sig},
#include "pld_ops.def"
#undef PLD_OP
};

#undef H
#undef C
#undef K
#undef S

/* Plain aliases: DSL spellings that always mean one op. */
static const struct {
    const char *alias;
    pld_op_id_t id;
} aliases[] = {
    {"pl.load", PLD_OPID_TILE_LOAD},
    {"pl.store", PLD_OPID_TILE_STORE},
    {"pl.create_tile", PLD_OPID_TILE_CREATE},
    {"pl.tile.create_tile", PLD_OPID_TILE_CREATE},
    {"pl.create_tensor", PLD_OPID_TENSOR_CREATE},
    {"pl.tensor.create_tensor", PLD_OPID_TENSOR_CREATE},
    {"pl.full", PLD_OPID_TENSOR_FULL},
    {"pl.random", PLD_OPID_TENSOR_RANDOM},
    {"pl.move", PLD_OPID_TILE_MOVE},
    {"pl.fillpad_inplace", PLD_OPID_TILE_FILLPAD_INPLACE},
    {"pl.gather", PLD_OPID_TENSOR_GATHER},
    {"pl.scatter", PLD_OPID_TENSOR_SCATTER},
    {"pl.tile.max", PLD_OPID_PL_MAX},
    {"pl.tile.min", PLD_OPID_PL_MIN},
    {"pl.no_dep", PLD_OPID_TENSOR_NO_DEP},
    {"pl.tensor.dump_tag", PLD_OPID_PL_DUMP_TAG},
    {"pl.paged_gather", PLD_OPID_TENSOR_PAGED_GATHER},
    {"pl.create_l1", PLD_OPID_TENSOR_CREATE_L1},
    {"pl.mgather", PLD_OPID_TILE_MGATHER},
    {"pl.matmul_bias", PLD_OPID_TILE_MATMUL_BIAS},
    {"pl.gemv", PLD_OPID_TILE_GEMV},
    {"pl.gemv_acc", PLD_OPID_TILE_GEMV_ACC},
    {"pl.gemv_bias", PLD_OPID_TILE_GEMV_BIAS},
    {"pl.batch_matmul", PLD_OPID_TILE_BATCH_MATMUL},
    {"pl.matmul_mx", PLD_OPID_TILE_MATMUL_MX},
    {"pl.matmul_mx_acc", PLD_OPID_TILE_MATMUL_MX_ACC},
    {"pl.matmul_mx_bias", PLD_OPID_TILE_MATMUL_MX_BIAS},
    {"pl.get_block_idx", PLD_OPID_TILE_GET_BLOCK_IDX},
    {"pl.get_block_num", PLD_OPID_TILE_GET_BLOCK_NUM},
    {"pl.get_subblock_idx", PLD_OPID_TILE_GET_SUBBLOCK_IDX},
    {"pl.aiv_shard", PLD_OPID_TILE_AIV_SHARD},
    {"pl.aic_gather", PLD_OPID_TILE_AIC_GATHER},
    {"pl.tensor.get_block_idx", PLD_OPID_TILE_GET_BLOCK_IDX},
    {"pl.tensor.get_block_num", PLD_OPID_TILE_GET_BLOCK_NUM},
    {"pl.tensor.get_subblock_idx", PLD_OPID_TILE_GET_SUBBLOCK_IDX},
    {"pl.reserve_buffer", PLD_OPID_SYS_RESERVE_BUFFER},
    {"pl.import_peer_buffer", PLD_OPID_SYS_IMPORT_PEER_BUFFER},
    {"pl.aic_initialize_pipe", PLD_OPID_SYS_AIC_INITIALIZE_PIPE},
    {"pl.aiv_initialize_pipe", PLD_OPID_SYS_AIV_INITIALIZE_PIPE},
    {"pl.tpush_to_aiv", PLD_OPID_SYS_TPUSH_TO_AIV},
    {"pl.tpush_to_aic", PLD_OPID_SYS_TPUSH_TO_AIC},
    {"pl.tpop_from_aic", PLD_OPID_SYS_TPOP_FROM_AIC},
    {"pl.tpop_from_aiv", PLD_OPID_SYS_TPOP_FROM_AIV},
    {"pl.tfree_to_aic", PLD_OPID_SYS_TFREE_TO_AIC},
    {"pl.tfree_to_aiv", PLD_OPID_SYS_TFREE_TO_AIV},
    {"pl.tensor.dim", PLD_OPID_TENSOR_DIM},
    {"pl.dim", PLD_OPID_TENSOR_DIM},
    {"pld.world_size", PLD_OPID_PLD_WORLD_SIZE},
    {"pld.get_comm_ctx", PLD_OPID_PLD_GET_COMM_CTX},
    {"pld.rank", PLD_OPID_PLD_RANK},
    {"pld.nranks", PLD_OPID_PLD_NRANKS},
    {"pld.alloc_window_buffer", PLD_OPID_PLD_ALLOC_WINDOW_BUFFER},
    {"pld.window", PLD_OPID_PLD_WINDOW},
    {"pld.remote_load", PLD_OPID_PLD_REMOTE_LOAD},
    {"pld.notify", PLD_OPID_PLD_NOTIFY},
    {"pld.wait", PLD_OPID_PLD_WAIT},
    {"pld.put", PLD_OPID_PLD_PUT},
    {"pld.get", PLD_OPID_PLD_GET},
    {"pld.allreduce", PLD_OPID_PLD_ALLREDUCE},
    {"pld.barrier", PLD_OPID_PLD_BARRIER},
    {"pld.broadcast", PLD_OPID_PLD_BROADCAST},
    {"pld.reduce_scatter", PLD_OPID_PLD_REDUCE_SCATTER},
    {"pld.allgather", PLD_OPID_PLD_ALLGATHER},
    {"pld.all_to_all", PLD_OPID_PLD_ALL_TO_ALL},
    {"pld.all_to_all_v", PLD_OPID_PLD_ALL_TO_ALL_V},
    {"pl.task_invalid", PLD_OPID_SYS_TASK_INVALID},
    /* pldrun's names before PyPTO's maximums/minimums (PyPTO defines no maxs/mins) */
    {"pl.tile.maxs", PLD_OPID_TILE_MAXIMUMS},
    {"pl.tile.mins", PLD_OPID_TILE_MINIMUMS},
    {"pl.tile.arange", PLD_OPID_TILE_CI},
};

#define N_ -1
static const pld_unified_t unified[] = {
    /* name, tile-tile, tile-scalar, tensor-tensor, tensor-scalar, scalar */
    {"pl.add", PLD_OPID_TILE_ADD, PLD_OPID_TILE_ADDS, PLD_OPID_TENSOR_ADD, PLD_OPID_TENSOR_ADDS, N_},
    {"pl.sub", PLD_OPID_TILE_SUB, PLD_OPID_TILE_SUBS, PLD_OPID_TENSOR_SUB, PLD_OPID_TENSOR_SUBS, N_},
    {"pl.mul", PLD_OPID_TILE_MUL, PLD_OPID_TILE_MULS, PLD_OPID_TENSOR_MUL, PLD_OPID_TENSOR_MULS, N_},
    {"pl.div", PLD_OPID_TILE_DIV, PLD_OPID_TILE_DIVS, PLD_OPID_TENSOR_DIV, PLD_OPID_TENSOR_DIVS, N_},
    {"pl.maximum", PLD_OPID_TILE_MAXIMUM, PLD_OPID_TILE_MAXIMUMS, PLD_OPID_TENSOR_MAXIMUM, PLD_OPID_TENSOR_MAXIMUM, N_},
    {"pl.minimum", PLD_OPID_TILE_MINIMUM, PLD_OPID_TILE_MINIMUMS, PLD_OPID_TENSOR_MINIMUM, PLD_OPID_TENSOR_MINIMUM, N_},
    {"pl.exp", PLD_OPID_TILE_EXP, N_, PLD_OPID_TENSOR_EXP, N_, N_},
    {"pl.log", PLD_OPID_TILE_LOG, N_, PLD_OPID_TENSOR_LOG, N_, N_},
    {"pl.sqrt", PLD_OPID_TILE_SQRT, N_, PLD_OPID_TENSOR_SQRT, N_, N_},
    {"pl.rsqrt", PLD_OPID_TILE_RSQRT, N_, PLD_OPID_TENSOR_RSQRT, N_, N_},
    {"pl.abs", PLD_OPID_TILE_ABS, N_, PLD_OPID_TENSOR_ABS, N_, N_},
    {"pl.neg", PLD_OPID_TILE_NEG, N_, PLD_OPID_TENSOR_NEG, N_, N_},
    {"pl.recip", PLD_OPID_TILE_RECIP, N_, PLD_OPID_TENSOR_RECIP, N_, N_},
    {"pl.sin", PLD_OPID_TILE_SIN, N_, PLD_OPID_TENSOR_SIN, N_, N_},
    {"pl.cos", PLD_OPID_TILE_COS, N_, PLD_OPID_TENSOR_COS, N_, N_},
    {"pl.not_", PLD_OPID_TILE_NOT, N_, PLD_OPID_TENSOR_NOT, N_, N_},
    {"pl.cmp", PLD_OPID_TILE_CMP, PLD_OPID_TILE_CMPS, PLD_OPID_TENSOR_CMP, PLD_OPID_TENSOR_CMP, N_},
    {"pl.fmod", PLD_OPID_TILE_FMOD, PLD_OPID_TILE_FMODS, PLD_OPID_TENSOR_FMOD, PLD_OPID_TENSOR_FMODS, N_},
    {"pl.fmods", N_, PLD_OPID_TILE_FMODS, N_, PLD_OPID_TENSOR_FMODS, N_},
    {"pl.and_", PLD_OPID_TILE_AND, PLD_OPID_TILE_ANDS, PLD_OPID_TENSOR_AND, PLD_OPID_TENSOR_ANDS, N_},
    {"pl.ands", N_, PLD_OPID_TILE_ANDS, N_, PLD_OPID_TENSOR_ANDS, N_},
    {"pl.or_", PLD_OPID_TILE_OR, PLD_OPID_TILE_ORS, PLD_OPID_TENSOR_OR, PLD_OPID_TENSOR_ORS, N_},
    {"pl.ors", N_, PLD_OPID_TILE_ORS, N_, PLD_OPID_TENSOR_ORS, N_},
    {"pl.xor", PLD_OPID_TILE_XOR, PLD_OPID_TILE_XORS, PLD_OPID_TENSOR_XOR, PLD_OPID_TENSOR_XORS, N_},
    {"pl.xors", N_, PLD_OPID_TILE_XORS, N_, PLD_OPID_TENSOR_XORS, N_},
    {"pl.shl", PLD_OPID_TILE_SHL, PLD_OPID_TILE_SHLS, PLD_OPID_TENSOR_SHL, PLD_OPID_TENSOR_SHLS, N_},
    {"pl.shls", N_, PLD_OPID_TILE_SHLS, N_, PLD_OPID_TENSOR_SHLS, N_},
    {"pl.shr", PLD_OPID_TILE_SHR, PLD_OPID_TILE_SHRS, PLD_OPID_TENSOR_SHR, PLD_OPID_TENSOR_SHRS, N_},
    {"pl.shrs", N_, PLD_OPID_TILE_SHRS, N_, PLD_OPID_TENSOR_SHRS, N_},
    /* PyPTO's pl.tile.X / pl.tensor.X front ends that take a tile/tensor or a
     * scalar rhs and canonicalize the scalar form to X`s` (tile_ops.py add..div,
     * tensor_ops.py add..div, fmod, and_, or_, xor, shl, shr) */
    {"pl.tile.add", PLD_OPID_TILE_ADD, PLD_OPID_TILE_ADDS, N_, N_, N_},
    {"pl.tile.sub", PLD_OPID_TILE_SUB, PLD_OPID_TILE_SUBS, N_, N_, N_},
    {"pl.tile.mul", PLD_OPID_TILE_MUL, PLD_OPID_TILE_MULS, N_, N_, N_},
    {"pl.tile.div", PLD_OPID_TILE_DIV, PLD_OPID_TILE_DIVS, N_, N_, N_},
    {"pl.tensor.add", N_, N_, PLD_OPID_TENSOR_ADD, PLD_OPID_TENSOR_ADDS, N_},
    {"pl.tensor.sub", N_, N_, PLD_OPID_TENSOR_SUB, PLD_OPID_TENSOR_SUBS, N_},
    {"pl.tensor.mul", N_, N_, PLD_OPID_TENSOR_MUL, PLD_OPID_TENSOR_MULS, N_},
    {"pl.tensor.div", N_, N_, PLD_OPID_TENSOR_DIV, PLD_OPID_TENSOR_DIVS, N_},
    {"pl.part_add", PLD_OPID_TILE_PART_ADD, N_, PLD_OPID_TENSOR_PART_ADD, N_, N_},
    {"pl.part_mul", PLD_OPID_TILE_PART_MUL, N_, PLD_OPID_TENSOR_PART_MUL, N_, N_},
    {"pl.part_max", PLD_OPID_TILE_PART_MAX, N_, PLD_OPID_TENSOR_PART_MAX, N_, N_},
    {"pl.part_min", PLD_OPID_TILE_PART_MIN, N_, PLD_OPID_TENSOR_PART_MIN, N_, N_},
    {"pl.relu", PLD_OPID_TILE_RELU, N_, N_, N_, N_},
    {"pl.matmul", PLD_OPID_TILE_MATMUL, N_, PLD_OPID_TENSOR_MATMUL, N_, N_},
    {"pl.cast", PLD_OPID_TILE_CAST, N_, PLD_OPID_TENSOR_CAST, N_, PLD_OPID_PL_CAST_SCALAR},
    {"pl.read", PLD_OPID_TILE_READ, N_, PLD_OPID_TENSOR_READ, N_, N_},
    {"pl.write", PLD_OPID_TILE_WRITE, N_, PLD_OPID_TENSOR_WRITE, N_, N_},
    {"pl.slice", PLD_OPID_TILE_SLICE, N_, PLD_OPID_TENSOR_SLICE, N_, N_},
    {"pl.reshape", PLD_OPID_TILE_RESHAPE, N_, PLD_OPID_TENSOR_RESHAPE, N_, N_},
    {"pl.assemble", PLD_OPID_TILE_ASSEMBLE, N_, PLD_OPID_TENSOR_ASSEMBLE, N_, N_},
    {"pld.remote_store", PLD_OPID_PLD_TILE_REMOTE_STORE, N_, PLD_OPID_PLD_TENSOR_REMOTE_STORE, N_, N_},
    {"pl.row_sum", PLD_OPID_TILE_ROW_SUM, N_, PLD_OPID_TENSOR_ROW_SUM, N_, N_},
    {"pl.row_max", PLD_OPID_TILE_ROW_MAX, N_, PLD_OPID_TENSOR_ROW_MAX, N_, N_},
    {"pl.row_min", PLD_OPID_TILE_ROW_MIN, N_, PLD_OPID_TENSOR_ROW_MIN, N_, N_},
    {"pl.row_prod", PLD_OPID_TILE_ROW_PROD, N_, PLD_OPID_TENSOR_ROW_PROD, N_, N_},
    {"pl.col_sum", PLD_OPID_TILE_COL_SUM, N_, PLD_OPID_TENSOR_COL_SUM, N_, N_},
    {"pl.col_max", PLD_OPID_TILE_COL_MAX, N_, PLD_OPID_TENSOR_COL_MAX, N_, N_},
    {"pl.col_min", PLD_OPID_TILE_COL_MIN, N_, PLD_OPID_TENSOR_COL_MIN, N_, N_},
    {"pl.col_prod", PLD_OPID_TILE_COL_PROD, N_, PLD_OPID_TENSOR_COL_PROD, N_, N_},
    {"pl.row_argmax", PLD_OPID_TILE_ROW_ARGMAX, N_, PLD_OPID_TENSOR_ROW_ARGMAX, N_, N_},
    {"pl.row_argmin", PLD_OPID_TILE_ROW_ARGMIN, N_, PLD_OPID_TENSOR_ROW_ARGMIN, N_, N_},
    {"pl.col_argmax", PLD_OPID_TILE_COL_ARGMAX, N_, PLD_OPID_TENSOR_COL_ARGMAX, N_, N_},
    {"pl.col_argmin", PLD_OPID_TILE_COL_ARGMIN, N_, PLD_OPID_TENSOR_COL_ARGMIN, N_, N_},
    {"pl.row_expand", PLD_OPID_TILE_ROW_EXPAND, N_, PLD_OPID_TENSOR_ROW_EXPAND, N_, N_},
    {"pl.row_expand_add", PLD_OPID_TILE_ROW_EXPAND_ADD, N_, PLD_OPID_TENSOR_ROW_EXPAND_ADD, N_, N_},
    {"pl.row_expand_sub", PLD_OPID_TILE_ROW_EXPAND_SUB, N_, PLD_OPID_TENSOR_ROW_EXPAND_SUB, N_, N_},
    {"pl.row_expand_mul", PLD_OPID_TILE_ROW_EXPAND_MUL, N_, PLD_OPID_TENSOR_ROW_EXPAND_MUL, N_, N_},
    {"pl.row_expand_div", PLD_OPID_TILE_ROW_EXPAND_DIV, N_, PLD_OPID_TENSOR_ROW_EXPAND_DIV, N_, N_},
    {"pl.row_expand_max", PLD_OPID_TILE_ROW_EXPAND_MAX, N_, PLD_OPID_TENSOR_ROW_EXPAND_MAX, N_, N_},
    {"pl.row_expand_min", PLD_OPID_TILE_ROW_EXPAND_MIN, N_, PLD_OPID_TENSOR_ROW_EXPAND_MIN, N_, N_},
    {"pl.row_expand_expdif", PLD_OPID_TILE_ROW_EXPAND_EXPDIF, N_, PLD_OPID_TENSOR_ROW_EXPAND_EXPDIF, N_, N_},
    {"pl.col_expand", PLD_OPID_TILE_COL_EXPAND, N_, PLD_OPID_TENSOR_COL_EXPAND, N_, N_},
    {"pl.col_expand_add", PLD_OPID_TILE_COL_EXPAND_ADD, N_, PLD_OPID_TENSOR_COL_EXPAND_ADD, N_, N_},
    {"pl.col_expand_sub", PLD_OPID_TILE_COL_EXPAND_SUB, N_, PLD_OPID_TENSOR_COL_EXPAND_SUB, N_, N_},
    {"pl.col_expand_mul", PLD_OPID_TILE_COL_EXPAND_MUL, N_, PLD_OPID_TENSOR_COL_EXPAND_MUL, N_, N_},
    {"pl.col_expand_div", PLD_OPID_TILE_COL_EXPAND_DIV, N_, PLD_OPID_TENSOR_COL_EXPAND_DIV, N_, N_},
    {"pl.col_expand_max", PLD_OPID_TILE_COL_EXPAND_MAX, N_, PLD_OPID_TENSOR_COL_EXPAND_MAX, N_, N_},
    {"pl.col_expand_min", PLD_OPID_TILE_COL_EXPAND_MIN, N_, PLD_OPID_TENSOR_COL_EXPAND_MIN, N_, N_},
    {"pl.col_expand_expdif", PLD_OPID_TILE_COL_EXPAND_EXPDIF, N_, PLD_OPID_TENSOR_COL_EXPAND_EXPDIF, N_, N_},
    {"pl.fillpad", PLD_OPID_TILE_FILLPAD, N_, PLD_OPID_TENSOR_FILLPAD, N_, N_},
    {"pl.fillpad_expand", PLD_OPID_TILE_FILLPAD_EXPAND, N_, PLD_OPID_TENSOR_FILLPAD_EXPAND, N_, N_},
    {"pl.set_validshape", PLD_OPID_TILE_SET_VALIDSHAPE, PLD_OPID_TILE_SET_VALIDSHAPE, PLD_OPID_TENSOR_SET_VALIDSHAPE, PLD_OPID_TENSOR_SET_VALIDSHAPE, N_},
    {"pl.transpose", PLD_OPID_TILE_TRANSPOSE, N_, PLD_OPID_TENSOR_TRANSPOSE, N_, N_},
    {"pl.reinterpret_view", PLD_OPID_TILE_REINTERPRET_VIEW, N_, PLD_OPID_TENSOR_REINTERPRET_VIEW, N_, N_},
    {"pl.sort32", PLD_OPID_TILE_SORT32, N_, PLD_OPID_TENSOR_SORT32, N_, N_},
    {"pl.mrgsort", PLD_OPID_TILE_MRGSORT, N_, PLD_OPID_TENSOR_MRGSORT, N_, N_},
    {"pl.gather_row", PLD_OPID_TILE_GATHER_ROW, N_, PLD_OPID_TENSOR_GATHER_ROW, N_, N_},
    {"pl.scatter_update", PLD_OPID_TILE_SCATTER_UPDATE, N_, PLD_OPID_TENSOR_SCATTER_UPDATE, N_, N_},
    {"pl.matmul_acc", PLD_OPID_TILE_MATMUL_ACC, N_, PLD_OPID_TENSOR_MATMUL_ACC, N_, N_},
    {"pl.concat", PLD_OPID_TILE_CONCAT, N_, PLD_OPID_TENSOR_CONCAT, N_, N_},
    {"pl.expands", PLD_OPID_TILE_EXPANDS, PLD_OPID_TILE_EXPANDS, PLD_OPID_TENSOR_EXPANDS, PLD_OPID_TENSOR_EXPANDS, N_},
};
#undef N_

/* PyPTO's keyword names of a unified op's leading parameters where they differ
 * from the resolved op's (python/pypto/language/op/unified_ops.py), in
 * position order: the unified op forwards them by position, so the i-th name
 * binds the resolved op's i-th parameter (pl.row_sum(input=t, tmp_tile=w) ->
 * pl.tile.row_sum(tile=t, tmp_tile=w)). Parameters the unified op forwards
 * by keyword or drops (rsqrt's high_precision, xor's tmp on tensors) are not
 * listed. */
static const struct {
    const char *name, *kws;
} unified_kws[] = {
    {"pl.exp", "input"}, {"pl.log", "input"}, {"pl.sqrt", "input"}, {"pl.rsqrt", "input"}, {"pl.abs", "input"},
    {"pl.neg", "input"}, {"pl.recip", "input"}, {"pl.sin", "input"}, {"pl.cos", "input"}, {"pl.not_", "input"},
    {"pl.cast", "input"}, {"pl.slice", "input"}, {"pl.reshape", "input"}, {"pl.set_validshape", "input"},
    {"pl.transpose", "input"}, {"pl.row_sum", "input"}, {"pl.row_max", "input"}, {"pl.row_min", "input"},
    {"pl.row_prod", "input"}, {"pl.col_sum", "input"}, {"pl.col_max", "input"}, {"pl.col_min", "input"},
    {"pl.col_prod", "input"}, {"pl.row_argmax", "input"}, {"pl.row_argmin", "input"}, {"pl.col_argmax", "input"},
    {"pl.col_argmin", "input"}, {"pl.fillpad", "value"}, {"pl.fillpad_expand", "value"}, {"pl.gather_row", "dst"},
    {"pl.read", "src,offset"}, {"pl.write", "dst,offset"}, {"pl.part_add", "lhs,rhs"}, {"pl.part_mul", "lhs,rhs"},
    {"pl.part_max", "lhs,rhs"}, {"pl.part_min", "lhs,rhs"}, {"pl.row_expand", "lhs,rhs"},
    {"pl.row_expand_add", "lhs,rhs"}, {"pl.row_expand_sub", "lhs,rhs"}, {"pl.row_expand_mul", "lhs,rhs"},
    {"pl.row_expand_div", "lhs,rhs"}, {"pl.row_expand_max", "lhs,rhs"}, {"pl.row_expand_min", "lhs,rhs"},
    {"pl.row_expand_expdif", "lhs,rhs"}, {"pl.col_expand", "lhs,rhs"}, {"pl.col_expand_add", "lhs,rhs"},
    {"pl.col_expand_sub", "lhs,rhs"}, {"pl.col_expand_mul", "lhs,rhs"}, {"pl.col_expand_div", "lhs,rhs"},
    {"pl.col_expand_max", "lhs,rhs"}, {"pl.col_expand_min", "lhs,rhs"}, {"pl.col_expand_expdif", "lhs,rhs"},
};

int pld_op_unified_kw(const pld_unified_t *u, const char *kw)
{
    for (size_t i = 0; u && kw && i < sizeof unified_kws / sizeof unified_kws[0]; i++) {
        if (strcmp(unified_kws[i].name, u->name) != 0)
            continue;
        const char *p = unified_kws[i].kws;
        size_t n = strlen(kw);
        for (int pos = 0; *p; pos++) {
            const char *end = strchr(p, ',');
            size_t len = end ? (size_t)(end - p) : strlen(p);
            if (len == n && strncmp(p, kw, n) == 0)
                return pos;
            p += len + (end != NULL);
        }
        return -1;
    }
    return -1;
}

const pld_op_info_t *pld_op_info(pld_op_id_t id)
{
    return &table[id];
}

/* PyPTO's printed forms: the names of its IR ops that its printer writes and
 * its parser reads back (python/pypto/ir/op), where they differ from the DSL
 * names. `kw`: the form applies only when this keyword is given (NULL: always);
 * `pos`: the parameters the positional arguments bind, space-separated, a
 * leading '|' on the last name: the last positional binds it (NULL: as the op's
 * own signature). pl.tensor.gather(x, idx, dim=-1) is the IR op tensor.gather
 * (args input, index; attribute dim), the DSL's gather(input, dim, index). */
static const pld_printed_t printed[] = {
    {"pl.tensor.gather", PLD_OPID_TENSOR_GATHER, "dim", "input index"},
    {"pl.tensor.scatter", PLD_OPID_TENSOR_SCATTER, "dim", "input index src"},
    {"pl.tensor.gather_mask", PLD_OPID_TENSOR_GATHER, NULL, "input"},
    {"pl.tensor.gather_compare", PLD_OPID_TENSOR_GATHER, NULL, "input kvalue"},
    {"pl.tensor.scatter_mask", PLD_OPID_TENSOR_SCATTER, NULL, "input dst"},
    {"pl.tensor.mrgsort_format1", PLD_OPID_TENSOR_MRGSORT, NULL, "src0 block_len"},
    {"pl.tensor.mrgsort_format2", PLD_OPID_TENSOR_MRGSORT, NULL, NULL},
    {"pl.tile.mrgsort_format1", PLD_OPID_TILE_MRGSORT, NULL, "src0 block_len"},
    {"pl.tile.mrgsort_format2", PLD_OPID_TILE_MRGSORT, NULL, "src0 src1 src2 src3 |tmp"},
    {"pl.tile.tpush_to_aiv", PLD_OPID_SYS_TPUSH_TO_AIV, NULL, NULL},
    {"pl.tile.tpush_to_aic", PLD_OPID_SYS_TPUSH_TO_AIC, NULL, NULL},
    {"pl.tile.tpop_from_aic", PLD_OPID_SYS_TPOP_FROM_AIC, NULL, NULL},
    {"pl.tile.tpop_from_aiv", PLD_OPID_SYS_TPOP_FROM_AIV, NULL, NULL},
};

const pld_printed_t *pld_op_printed(const char *name, int i)
{
    int n = (int)(sizeof printed / sizeof printed[0]);
    if (!name)
        return i >= 0 && i < n ? &printed[i] : NULL;
    for (int k = 0; k < n; k++)
        if (strcmp(printed[k].name, name) == 0)
            return &printed[k];
    return NULL;
}

int pld_op_lookup(const char *name)
{
    for (int i = 0; i < PLD_OPID__COUNT; i++)
        if (strcmp(table[i].name, name) == 0)
            return i;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(aliases[i].alias, name) == 0)
            return (int)aliases[i].id;
    const pld_printed_t *pf = pld_op_printed(name, 0);
    return pf ? (int)pf->id : -1;
}

int pld_op_coll_kind(int id)
{
    if (id >= PLD_OPID_PLD_ALLREDUCE && id <= PLD_OPID_PLD_ALL_TO_ALL_V)
        return id;
    if (id >= PLD_OPID_BUILTIN_ALLREDUCE && id <= PLD_OPID_BUILTIN_ALL_TO_ALL_V)
        return PLD_OPID_PLD_ALLREDUCE + (id - PLD_OPID_BUILTIN_ALLREDUCE);
    return id == PLD_OPID_BUILTIN_ALLREDUCE_RING ? PLD_OPID_PLD_ALLREDUCE : -1;
}

int pld_op_is_builtin_coll(int id)
{
    return (id >= PLD_OPID_BUILTIN_ALLREDUCE && id <= PLD_OPID_BUILTIN_ALL_TO_ALL_V) ||
           id == PLD_OPID_BUILTIN_ALLREDUCE_RING;
}

int pld_op_builtin_of(int kind, int ring)
{
    if (kind == PLD_OPID_PLD_ALLREDUCE && ring)
        return PLD_OPID_BUILTIN_ALLREDUCE_RING;
    if (kind >= PLD_OPID_PLD_ALLREDUCE && kind <= PLD_OPID_PLD_ALL_TO_ALL_V)
        return PLD_OPID_BUILTIN_ALLREDUCE + (kind - PLD_OPID_PLD_ALLREDUCE);
    return -1;
}

int pld_op_expand_axis(int id)
{
    if (id < 0 || id >= PLD_OPID__COUNT)
        return 0;
    const char *dot = strrchr(table[id].name, '.');
    const char *base = dot ? dot + 1 : table[id].name;
    return strncmp(base, "row_expand", 10) == 0 ? 'r' : strncmp(base, "col_expand", 10) == 0 ? 'c' : 0;
}

const pld_unified_t *pld_op_unified(const char *name)
{
    for (size_t i = 0; i < sizeof unified / sizeof unified[0]; i++)
        if (strcmp(unified[i].name, name) == 0)
            return &unified[i];
    return NULL;
}

int pld_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 99;
    int d[64][64];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < c)
                c = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < c)
                c = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < c)
                c = d[i - 2][j - 2] + 1;
            d[i][j] = c;
        }
    return d[la][lb];
}

static void consider(const char *name, const char *cand, const char **best, int *bestd)
{
    int d = pld_edit_distance(name, cand);
    if (d < *bestd) {
        *bestd = d;
        *best = cand;
    }
}

const char *pld_op_suggest(const char *name)
{
    const char *best = NULL;
    int bestd = 99;
    for (int i = 0; i < PLD_OPID__COUNT; i++)
        consider(name, table[i].name, &best, &bestd);
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        consider(name, aliases[i].alias, &best, &bestd);
    for (size_t i = 0; i < sizeof unified / sizeof unified[0]; i++)
        consider(name, unified[i].name, &best, &bestd);
    /* also match on the last segment: pl.tile.rowsum -> pl.tile.row_sum */
    size_t len = strlen(name);
    int limit = len < 12 ? 2 : 3;
    return bestd <= limit ? best : NULL;
}

const char *pld_op_suggest_param(const pld_op_info_t *info, const char *kw)
{
    const char *best = NULL;
    int bestd = 99;
    for (int i = 0; i < info->nparams; i++)
        consider(kw, info->params[i].name, &best, &bestd);
    return bestd <= 3 ? best : NULL;
}

int pld_op_param_index(const pld_op_info_t *info, const char *kw)
{
    for (int i = 0; i < info->nparams; i++)
        if (strcmp(info->params[i].name, kw) == 0)
            return i;
    return -1;
}
