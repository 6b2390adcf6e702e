/* pld_exec.c - the op dispatcher: every call bound to the op table goes to
 * the file of its family (pld_exec_mem.c, pld_exec_compute.c, pld_exec_elem.c,
 * pld_exec_dist.c, pld_exec_coll.c); scalar ops, TaskId helpers and the UB check are here. */
#include "pld_interp_int.h"
#include "pld_mem.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ dispatch */

pld_status_t pld_exec_op(pld_interp_t *it, frame_t *f, const pld_expr_t *e, pld_value_t *out)
{
    pld_value_t a, b;
    pld_status_t st;
    switch (e->op) {
    case PLD_OPID_PL_CONST:
        if ((st = it->walk->eval(it, f, e->u.call.args[0].value, &a)) != PLD_OK)
            return st;
        *out = pld_v_convert(&a, pld_expr_dtype(it, e->u.call.args[1].value));
        return PLD_OK;
    case PLD_OPID_PL_CAST_SCALAR: {
        if ((st = it->walk->eval(it, f, e->u.call.args[0].value, &a)) != PLD_OK)
            return st;
        if (!pld_v_is_scalar(&a)) {
            pld_vkind_t k = a.kind;
            pld_value_release(&a);
            return pld_rt_error(it, f, e->span, "pl.cast of a %s: expected a scalar", pld_vkind_name(k));
        }
        pld_dtype_t dt = e->type && e->type->kind == PLD_TY_SCALAR ? e->type->dtype : PLD_DT_NONE;
        *out = pld_v_convert(&a, dt != PLD_DT_NONE ? dt : a.dt);
        return PLD_OK;
    }
    case PLD_OPID_PL_MIN:
    case PLD_OPID_PL_MAX: {
        if ((st = it->walk->eval(it, f, e->u.call.args[0].value, &a)) != PLD_OK)
            return st;
        if ((st = it->walk->eval(it, f, e->u.call.args[1].value, &b)) != PLD_OK)
            return st;
        pld_dtype_t dt = e->type && e->type->kind == PLD_TY_SCALAR ? e->type->dtype : a.dt;
        int fl = a.kind == PLD_V_FLOAT || b.kind == PLD_V_FLOAT;
        int take_a = fl ? (e->op == PLD_OPID_PL_MIN ? pld_v_as_f(&a) <= pld_v_as_f(&b) : pld_v_as_f(&a) >= pld_v_as_f(&b))
                        : (e->op == PLD_OPID_PL_MIN ? a.u.i <= b.u.i : a.u.i >= b.u.i);
        *out = pld_v_convert(take_a ? &a : &b, dt);
        return PLD_OK;
    }
    case PLD_OPID_PL_DUMP_TAG: /* returns its tensor; with --dump, writes it too */
        if (e->u.call.nargs != 1 || e->u.call.args[0].kw)
            return pld_rt_error(it, f, e->span, "%s has no result here", pld_op_name(e));
        if ((st = it->walk->eval(it, f, e->u.call.args[0].value, out)) != PLD_OK || !it->opts.dump)
            return st;
        if ((st = pld_dump_tag(it, f, e, out)) != PLD_OK)
            pld_value_release(out);
        return st;
    case PLD_OPID_SYS_TASK_INVALID:
        *out = pld_v_int(PLD_DT_TASK_ID, -1);
        return PLD_OK;
    case PLD_OPID_SYS_TASK_DUMMY: {
        int64_t deps[PLD_MAX_DEPS], tid;
        int n;
        if ((st = pld_eval_deps(it, f, pld_op_arg(e, 0), deps, &n)) != PLD_OK ||
            (st = pld_task_dummy(it, f, e->span, deps, n, &tid)) != PLD_OK)
            return st;
        *out = pld_v_int(PLD_DT_TASK_ID, tid);
        return PLD_OK;
    }
    case PLD_OPID_TILE_GET_BLOCK_IDX:
        *out = pld_v_int(PLD_DT_INDEX, f->block_idx);
        return PLD_OK;
    case PLD_OPID_TILE_GET_BLOCK_NUM:
        *out = pld_v_int(PLD_DT_INDEX, f->block_num);
        return PLD_OK;
    case PLD_OPID_TILE_GET_SUBBLOCK_IDX: case PLD_OPID_TILE_AIV_SHARD: case PLD_OPID_TILE_AIC_GATHER:
    case PLD_OPID_SYS_AVAILABLE_CLUSTER_COUNT:
    case PLD_OPID_SYS_AVAILABLE_AIV_COUNT: case PLD_OPID_SYS_RESERVE_BUFFER: case PLD_OPID_SYS_IMPORT_PEER_BUFFER:
    case PLD_OPID_SYS_AIC_INITIALIZE_PIPE: case PLD_OPID_SYS_AIV_INITIALIZE_PIPE: case PLD_OPID_SYS_TPUSH_TO_AIV:
    case PLD_OPID_SYS_TPUSH_TO_AIC: case PLD_OPID_SYS_TPOP_FROM_AIC: case PLD_OPID_SYS_TPOP_FROM_AIV:
    case PLD_OPID_SYS_TFREE_TO_AIC: case PLD_OPID_SYS_TFREE_TO_AIV: case PLD_OPID_SYS_SYNC_SET:
    case PLD_OPID_SYS_SYNC_WAIT: case PLD_OPID_SYS_SET_FFTS: case PLD_OPID_SYS_SYNCALL: case PLD_OPID_SYS_CACHEINVALID:
    case PLD_OPID_SYS_FENCE: case PLD_OPID_SYS_BAR_V: case PLD_OPID_SYS_BAR_M: case PLD_OPID_SYS_BAR_ALL:
    case PLD_OPID_SYS_SYNC_SRC: case PLD_OPID_SYS_SYNC_DST:
        return pld_exec_xcore(it, f, e, out);
    case PLD_OPID_TILE_LOAD:
        return pld_exec_load(it, f, e, out, 0);
    case PLD_OPID_TILE_STORE:
        return pld_exec_store(it, f, e, out);
    case PLD_OPID_TILE_CREATE:
        return pld_exec_create(it, f, e, out, 1, 0, 0);
    case PLD_OPID_TILE_FULL:
        return pld_exec_create(it, f, e, out, 1, 1, 2);
    case PLD_OPID_TENSOR_CREATE: {
        st = pld_exec_create(it, f, e, out, 0, 0, 0);
        if (st == PLD_OK && pld_op_arg(e, 4)) {
            if ((st = pld_op_eval(it, f, e, 4, &a)) != PLD_OK)
                return st;
            pld_view_t v;
            pld_tensor_kview(pld_v_tensor(out), &v);
            pld_k_fill_f(&v, pld_v_as_f(&a));
        }
        return st;
    }
    case PLD_OPID_TENSOR_CREATE_L1:
        return pld_exec_create(it, f, e, out, 0, 0, 0);
    case PLD_OPID_TENSOR_FULL:
        return pld_exec_create(it, f, e, out, 0, 1, 2);
    case PLD_OPID_TILE_MOVE:
        return pld_exec_move(it, f, e, out);
    case PLD_OPID_TILE_READ:
    case PLD_OPID_TENSOR_READ:
        return pld_exec_read_write(it, f, e, out, 0);
    case PLD_OPID_TILE_WRITE:
    case PLD_OPID_TENSOR_WRITE:
        return pld_exec_read_write(it, f, e, out, 1);
    case PLD_OPID_TILE_SLICE:
    case PLD_OPID_TENSOR_SLICE:
        return pld_exec_slice(it, f, e, out);
    case PLD_OPID_TILE_RESHAPE:
    case PLD_OPID_TENSOR_RESHAPE:
        return pld_exec_reshape(it, f, e, out);
    case PLD_OPID_TENSOR_DIM: {
        int64_t axis;
        if ((st = pld_op_need(it, f, e, 0, &a, PLD_V_TENSOR)) != PLD_OK)
            return st;
        if ((st = pld_op_iarg(it, f, e, 1, 0, &axis)) == PLD_OK) {
            pld_tensor_t *t = pld_v_tensor(&a);
            if (axis < 0)
                axis += t->rank;
            if (axis < 0 || axis >= t->rank)
                st = pld_rt_error(it, f, e->span, "pl.tensor.dim: axis out of range for rank %d", t->rank);
            else
                *out = pld_v_int(PLD_DT_INDEX, t->shape[axis]);
        }
        pld_value_release(&a);
        return st;
    }
    case PLD_OPID_TENSOR_ASSEMBLE:
    case PLD_OPID_TILE_ASSEMBLE:
        return pld_exec_assemble_op(it, f, e, out);
    case PLD_OPID_TILE_CAST:
    case PLD_OPID_TENSOR_CAST:
        return pld_exec_cast(it, f, e, out);
    case PLD_OPID_TILE_MATMUL:
    case PLD_OPID_TENSOR_MATMUL:
        return pld_exec_matmul(it, f, e, out, 0);
    case PLD_OPID_TILE_MATMUL_ACC:
    case PLD_OPID_TILE_GEMV_ACC:
        return pld_exec_matmul(it, f, e, out, 1);
    case PLD_OPID_TILE_GEMV:
        return pld_exec_matmul(it, f, e, out, 0);
    case PLD_OPID_TILE_GEMV_BIAS:
        return pld_exec_matmul(it, f, e, out, 2);
    case PLD_OPID_TILE_BATCH_MATMUL:
    case PLD_OPID_TILE_BATCH_MATMUL_ACC:
        return pld_exec_batch_matmul(it, f, e, out);
    case PLD_OPID_TENSOR_MATMUL_ACC:
        return pld_exec_tensor_matmul_acc(it, f, e, out);
    case PLD_OPID_TILE_MATMUL_MX:
    case PLD_OPID_TILE_MATMUL_MX_ACC:
    case PLD_OPID_TILE_MATMUL_MX_BIAS:
        return pld_exec_matmul_mx(it, f, e, out);
    case PLD_OPID_TILE_TRANSPOSE: case PLD_OPID_TENSOR_TRANSPOSE: case PLD_OPID_TILE_EXTRACT:
    case PLD_OPID_TILE_CONCAT: case PLD_OPID_TENSOR_CONCAT: case PLD_OPID_TILE_GATHER: case PLD_OPID_TENSOR_GATHER:
    case PLD_OPID_TILE_TRANSPOSE_VIEW: case PLD_OPID_TILE_REINTERPRET_VIEW: case PLD_OPID_TENSOR_REINTERPRET_VIEW:
    case PLD_OPID_TENSOR_VIEW: case PLD_OPID_TILE_SCATTER: case PLD_OPID_TENSOR_SCATTER:
    case PLD_OPID_TILE_SORT32: case PLD_OPID_TENSOR_SORT32: case PLD_OPID_TILE_MRGSORT: case PLD_OPID_TENSOR_MRGSORT:
    case PLD_OPID_TILE_GATHER_ROW: case PLD_OPID_TENSOR_GATHER_ROW: case PLD_OPID_TILE_GATHER_MASK:
    case PLD_OPID_TILE_SCATTER_MASK:
        return pld_exec_layout(it, f, e, out);
    case PLD_OPID_TILE_MGATHER: case PLD_OPID_TILE_MSCATTER: case PLD_OPID_TILE_GATHERB: case PLD_OPID_TILE_GATHER_COMPARE:
    case PLD_OPID_TILE_SCATTER_UPDATE: case PLD_OPID_TENSOR_SCATTER_UPDATE: case PLD_OPID_TENSOR_PAGED_GATHER:
        return pld_exec_gather(it, f, e, out);
    case PLD_OPID_TENSOR_NO_DEP:
        return pld_op_need(it, f, e, 0, out, PLD_V_TENSOR);
    case PLD_OPID_TILE_MATMUL_BIAS:
        return pld_exec_matmul(it, f, e, out, 2);
    case PLD_OPID_TILE_FILLPAD: case PLD_OPID_TILE_FILLPAD_INPLACE: case PLD_OPID_TILE_FILLPAD_EXPAND:
    case PLD_OPID_TENSOR_FILLPAD: case PLD_OPID_TENSOR_FILLPAD_EXPAND:
    case PLD_OPID_TILE_SET_VALIDSHAPE: case PLD_OPID_TENSOR_SET_VALIDSHAPE:
        return pld_exec_valid(it, f, e, out);
    case PLD_OPID_TENSOR_MAXIMUM: case PLD_OPID_TENSOR_MINIMUM: {
        /* PyPTO's tensor.maximum/minimum take a tensor or a scalar rhs (checked type) */
        const pld_expr_t *r = pld_op_arg(e, 1);
        return pld_exec_elementwise(it, f, e, out, 2, r && r->type && r->type->kind == PLD_TY_SCALAR);
    }
    case PLD_OPID_TILE_ADD: case PLD_OPID_TILE_SUB: case PLD_OPID_TILE_MUL: case PLD_OPID_TILE_DIV:
    case PLD_OPID_TILE_MAXIMUM: case PLD_OPID_TILE_MINIMUM:
    case PLD_OPID_TENSOR_ADD: case PLD_OPID_TENSOR_SUB: case PLD_OPID_TENSOR_MUL: case PLD_OPID_TENSOR_DIV:
        return pld_exec_elementwise(it, f, e, out, 2, 0);
    case PLD_OPID_TILE_ADDS: case PLD_OPID_TILE_SUBS: case PLD_OPID_TILE_MULS: case PLD_OPID_TILE_DIVS:
    case PLD_OPID_TILE_MAXIMUMS: case PLD_OPID_TILE_MINIMUMS:
    case PLD_OPID_TENSOR_ADDS: case PLD_OPID_TENSOR_SUBS: case PLD_OPID_TENSOR_MULS: case PLD_OPID_TENSOR_DIVS:
        return pld_exec_elementwise(it, f, e, out, 2, 1);
    case PLD_OPID_TILE_EXP: case PLD_OPID_TILE_LOG: case PLD_OPID_TILE_SQRT: case PLD_OPID_TILE_RSQRT:
    case PLD_OPID_TILE_ABS: case PLD_OPID_TILE_NEG: case PLD_OPID_TILE_RECIP: case PLD_OPID_TILE_RELU:
    case PLD_OPID_TENSOR_EXP: case PLD_OPID_TENSOR_LOG: case PLD_OPID_TENSOR_SQRT: case PLD_OPID_TENSOR_ABS:
    case PLD_OPID_TENSOR_NEG: case PLD_OPID_TENSOR_RECIP: case PLD_OPID_TENSOR_RSQRT:
        return pld_exec_elementwise(it, f, e, out, 1, 0);
    case PLD_OPID_TILE_SIN: case PLD_OPID_TILE_COS: case PLD_OPID_TILE_NOT: case PLD_OPID_TILE_CMP:
    case PLD_OPID_TILE_CMPS: case PLD_OPID_TILE_SEL: case PLD_OPID_TILE_SELS: case PLD_OPID_TILE_FMOD:
    case PLD_OPID_TILE_FMODS: case PLD_OPID_TILE_REM: case PLD_OPID_TILE_REMS: case PLD_OPID_TILE_AND:
    case PLD_OPID_TILE_ANDS: case PLD_OPID_TILE_OR: case PLD_OPID_TILE_ORS: case PLD_OPID_TILE_XOR:
    case PLD_OPID_TILE_XORS: case PLD_OPID_TILE_SHL: case PLD_OPID_TILE_SHLS: case PLD_OPID_TILE_SHR:
    case PLD_OPID_TILE_SHRS: case PLD_OPID_TILE_LRELU: case PLD_OPID_TILE_PRELU: case PLD_OPID_TILE_PART_ADD:
    case PLD_OPID_TILE_PART_MUL: case PLD_OPID_TILE_PART_MAX: case PLD_OPID_TILE_PART_MIN: case PLD_OPID_TILE_ADDC:
    case PLD_OPID_TILE_SUBC: case PLD_OPID_TILE_ADDSC: case PLD_OPID_TILE_SUBSC: case PLD_OPID_TILE_CI:
    case PLD_OPID_TILE_TRI:
    case PLD_OPID_TENSOR_SIN: case PLD_OPID_TENSOR_COS: case PLD_OPID_TENSOR_NOT: case PLD_OPID_TENSOR_CMP:
    case PLD_OPID_TENSOR_FMOD: case PLD_OPID_TENSOR_FMODS: case PLD_OPID_TENSOR_AND: case PLD_OPID_TENSOR_ANDS:
    case PLD_OPID_TENSOR_OR: case PLD_OPID_TENSOR_ORS: case PLD_OPID_TENSOR_XOR: case PLD_OPID_TENSOR_XORS:
    case PLD_OPID_TENSOR_SHL: case PLD_OPID_TENSOR_SHLS: case PLD_OPID_TENSOR_SHR: case PLD_OPID_TENSOR_SHRS:
    case PLD_OPID_TENSOR_PART_ADD: case PLD_OPID_TENSOR_PART_MUL: case PLD_OPID_TENSOR_PART_MAX:
    case PLD_OPID_TENSOR_PART_MIN: case PLD_OPID_TENSOR_CI: case PLD_OPID_TILE_RANDOM: case PLD_OPID_TENSOR_RANDOM:
        return pld_exec_elem(it, f, e, out);
    case PLD_OPID_TILE_ROW_SUM: case PLD_OPID_TENSOR_ROW_SUM: return pld_exec_reduce(it, f, e, out, PLD_K_RSUM, PLD_K_RED_ROW);
    case PLD_OPID_TILE_ROW_MAX: case PLD_OPID_TENSOR_ROW_MAX: return pld_exec_reduce(it, f, e, out, PLD_K_RMAX, PLD_K_RED_ROW);
    case PLD_OPID_TILE_ROW_MIN: case PLD_OPID_TENSOR_ROW_MIN: return pld_exec_reduce(it, f, e, out, PLD_K_RMIN, PLD_K_RED_ROW);
    case PLD_OPID_TILE_ROW_PROD: case PLD_OPID_TENSOR_ROW_PROD: return pld_exec_reduce(it, f, e, out, PLD_K_RPROD, PLD_K_RED_ROW);
    case PLD_OPID_TILE_COL_SUM: case PLD_OPID_TENSOR_COL_SUM: return pld_exec_reduce(it, f, e, out, PLD_K_RSUM, 0);
    case PLD_OPID_TILE_COL_MAX: case PLD_OPID_TENSOR_COL_MAX: return pld_exec_reduce(it, f, e, out, PLD_K_RMAX, 0);
    case PLD_OPID_TILE_COL_MIN: case PLD_OPID_TENSOR_COL_MIN: return pld_exec_reduce(it, f, e, out, PLD_K_RMIN, 0);
    case PLD_OPID_TILE_COL_PROD: case PLD_OPID_TENSOR_COL_PROD: return pld_exec_reduce(it, f, e, out, PLD_K_RPROD, 0);
    case PLD_OPID_TILE_ROW_ARGMAX: case PLD_OPID_TENSOR_ROW_ARGMAX: return pld_exec_reduce(it, f, e, out, PLD_K_RARGMAX, PLD_K_RED_ROW);
    case PLD_OPID_TILE_ROW_ARGMIN: case PLD_OPID_TENSOR_ROW_ARGMIN: return pld_exec_reduce(it, f, e, out, PLD_K_RARGMIN, PLD_K_RED_ROW);
    case PLD_OPID_TILE_COL_ARGMAX: case PLD_OPID_TENSOR_COL_ARGMAX: return pld_exec_reduce(it, f, e, out, PLD_K_RARGMAX, 0);
    case PLD_OPID_TILE_COL_ARGMIN: case PLD_OPID_TENSOR_COL_ARGMIN: return pld_exec_reduce(it, f, e, out, PLD_K_RARGMIN, 0);
    case PLD_OPID_TILE_ROW_EXPAND: case PLD_OPID_TILE_ROW_EXPAND_ADD: case PLD_OPID_TILE_ROW_EXPAND_SUB:
    case PLD_OPID_TILE_ROW_EXPAND_MUL: case PLD_OPID_TILE_ROW_EXPAND_DIV: case PLD_OPID_TILE_ROW_EXPAND_MAX:
    case PLD_OPID_TILE_ROW_EXPAND_MIN: case PLD_OPID_TILE_ROW_EXPAND_EXPDIF: case PLD_OPID_TILE_COL_EXPAND:
    case PLD_OPID_TILE_COL_EXPAND_ADD: case PLD_OPID_TILE_COL_EXPAND_SUB: case PLD_OPID_TILE_COL_EXPAND_MUL:
    case PLD_OPID_TILE_COL_EXPAND_DIV: case PLD_OPID_TILE_COL_EXPAND_MAX: case PLD_OPID_TILE_COL_EXPAND_MIN:
    case PLD_OPID_TILE_COL_EXPAND_EXPDIF: case PLD_OPID_TENSOR_ROW_EXPAND: case PLD_OPID_TENSOR_ROW_EXPAND_ADD:
    case PLD_OPID_TENSOR_ROW_EXPAND_SUB: case PLD_OPID_TENSOR_ROW_EXPAND_MUL: case PLD_OPID_TENSOR_ROW_EXPAND_DIV:
    case PLD_OPID_TENSOR_ROW_EXPAND_MAX: case PLD_OPID_TENSOR_ROW_EXPAND_MIN: case PLD_OPID_TENSOR_ROW_EXPAND_EXPDIF:
    case PLD_OPID_TENSOR_COL_EXPAND: case PLD_OPID_TENSOR_COL_EXPAND_ADD: case PLD_OPID_TENSOR_COL_EXPAND_SUB:
    case PLD_OPID_TENSOR_COL_EXPAND_MUL: case PLD_OPID_TENSOR_COL_EXPAND_DIV: case PLD_OPID_TENSOR_COL_EXPAND_MAX:
    case PLD_OPID_TENSOR_COL_EXPAND_MIN: case PLD_OPID_TENSOR_COL_EXPAND_EXPDIF:
        return pld_exec_elementwise(it, f, e, out, 2, 0);
    case PLD_OPID_TILE_EXPANDS: case PLD_OPID_TENSOR_EXPANDS:
        return pld_exec_elementwise(it, f, e, out, 2, 2);
    case PLD_OPID_TENSOR_EXPAND_CLONE:
        return pld_exec_expand_clone(it, f, e, out);
    case PLD_OPID_ARRAY_CREATE:
        return pld_exec_array_create(it, f, e, out);
    case PLD_OPID_ARRAY_GET:
    case PLD_OPID_ARRAY_UPDATE:
        return pld_exec_array_elem(it, f, e, out);
    case PLD_OPID_PREFETCH_MAKE_CONTEXT: case PLD_OPID_PREFETCH_ASYNC: case PLD_OPID_PREFETCH_SESSION:
    case PLD_OPID_PREFETCH_WAIT: case PLD_OPID_TILE_ALLOC: case PLD_OPID_TENSOR_ALLOC:
        return pld_exec_token(it, f, e, out);
    case PLD_OPID_PLD_WORLD_SIZE: case PLD_OPID_PLD_GET_COMM_CTX: case PLD_OPID_PLD_RANK: case PLD_OPID_PLD_NRANKS:
    case PLD_OPID_PLD_ALLOC_WINDOW_BUFFER: case PLD_OPID_PLD_WINDOW:
    case PLD_OPID_PLD_REMOTE_LOAD: case PLD_OPID_PLD_TILE_REMOTE_STORE: case PLD_OPID_PLD_TENSOR_REMOTE_STORE:
    case PLD_OPID_PLD_PUT: case PLD_OPID_PLD_GET: case PLD_OPID_PLD_TILE_PUT: case PLD_OPID_PLD_TILE_GET:
    case PLD_OPID_PLD_NOTIFY: case PLD_OPID_PLD_WAIT: case PLD_OPID_PLD_DEFER_WAIT:
        return pld_exec_dist(it, f, e, out);
    case PLD_OPID_PLD_ALLREDUCE: case PLD_OPID_PLD_BARRIER: case PLD_OPID_PLD_BROADCAST:
    case PLD_OPID_PLD_REDUCE_SCATTER: case PLD_OPID_PLD_ALLGATHER: case PLD_OPID_PLD_ALL_TO_ALL:
    case PLD_OPID_PLD_ALL_TO_ALL_V: case PLD_OPID_PLD_INDEXED_ALL_TO_ALL_V:
        return pld_exec_coll(it, f, e, out);
    default:
        return pld_rt_error(it, f, e->span, "%s cannot be executed here", pld_op_name(e));
    }
}

/* On-chip memory of a memory space: its name and this platform's capacity
 * (0 = not checked: global memory, or a space the platform lacks). The
 * spaces and their capacities: pld_npu_profile.h, in PLD_MEM_VEC's order. */
_Static_assert(PLD_MEM_RIGHTSCALE - PLD_MEM_VEC + 1 == PLD_NPU_SPACES && PLD_MEM_ACC - PLD_MEM_VEC == PLD_NPU_SPACE_ACC,
               "pld_npu_space_t follows pld_mem_t from Vec");
static long mem_capacity(const pld_npu_profile_t *pf, pld_mem_t m, const char **name)
{
    if (m == PLD_MEM_NONE)
        m = PLD_MEM_VEC;
    if (m < PLD_MEM_VEC || m > PLD_MEM_RIGHTSCALE) {
        *name = "global memory";
        return 0;
    }
    const pld_npu_space_t s = (pld_npu_space_t)(m - PLD_MEM_VEC);
    *name = pld_npu_space_name(s);
    return pld_npu_space_bytes(pf, s);
}

static int64_t tile_bytes(const pld_tile_t *t)
{
    int64_t n = pld_dtype_bytes(t->dt);
    for (int d = 0; d < t->rank; d++)
        n *= t->shape[d];
    return n;
}

/* The memory space slot i's tile counts in: its own (Vec when none), or Mat
 * for the cast result of a matmul AutoTileMatmulL0 keeps in a Mat scratch
 * (the cast is folded into the sub-tiles' writeback into that scratch). */
static pld_mem_t eff_mem(const pld_func_t *fn, const pld_ub_slot_t *u, int i)
{
    if (fn && fn->autol0 && fn->autol0[i].kind == PLD_AUTOL0_SCRATCH_TILE)
        return PLD_MEM_MAT;
    return u[i].mem == PLD_MEM_NONE ? PLD_MEM_VEC : u[i].mem;
}

/* The Acc bytes slot i's tile takes: its size, or, for an oversized result
 * of a matmul PyPTO's AutoTileMatmulL0 computes one sub-tile at a time
 * (pld_autol0_t), the largest sub-tile that pass may choose: the largest
 * AlignUp(m, align_m) x n x element bytes within the L0C capacity, m and n
 * multiples of 16 up to the result's (rounded up) dims. A Mat scratch above
 * the Mat capacity: the pass leaves the matmul whole (the full size). */
/* The widest N sub-window of a matmul_bias's bias row (0: the pass leaves
 * the matmul whole): the Bias table holds bias_bytes / element bytes; a Mat
 * bias of a dtype the platform cannot move into the accumulator dtype's
 * Bias table (Ascend910BHandler / Backend950Handler SupportsMatToBiasMove
 * at e2d0f78) stops the pass. INT64_MAX for a plain matmul. */
static int64_t bias_max_n(const pld_npu_profile_t *pf, const pld_autol0_t *a)
{
    if (a->bias == PLD_AUTOL0_BIAS_NONE)
        return INT64_MAX;
    const int bd = a->bias_dt, cd = a->acc_dt;
    if (a->bias != PLD_AUTOL0_BIAS_BIAS &&
        !(bd == PLD_DT_INT32 && cd == PLD_DT_INT32) &&
        !(cd == PLD_DT_FP32 && (bd == PLD_DT_FP32 || bd == PLD_DT_FP16 || (bd == PLD_DT_BF16 && pf->bf16_mat_bias))))
        return 0;
    const int64_t w = a->cbytes > 0 ? pld_npu_space_bytes(pf, PLD_NPU_SPACE_BIAS) / a->cbytes : 0;
    return w >= 16 ? w : 0;
}

static int64_t acc_charge(const pld_npu_profile_t *pf, const pld_func_t *fn, const pld_ub_slot_t *u, int i,
                          int64_t acc_cap)
{
    const pld_autol0_t *a = fn && fn->autol0 ? &fn->autol0[i] : NULL;
    if (!a || u[i].mem != PLD_MEM_ACC || u[i].bytes <= acc_cap ||
        (a->kind != PLD_AUTOL0_STORE && a->kind != PLD_AUTOL0_SCRATCH) ||
        (a->kind == PLD_AUTOL0_SCRATCH && a->scratch > pld_npu_space_bytes(pf, PLD_NPU_SPACE_MAT)))
        return u[i].bytes;
    /* a bias row that is not a loaded Mat tile keeps the whole N (no Bias
     * sub-window, no N window to reload) */
    const int64_t wmax = bias_max_n(pf, a), n0 = a->bias == PLD_AUTOL0_BIAS_NONE || a->bias == PLD_AUTOL0_BIAS_MAT_LOAD ? 16 : a->n;
    if (wmax < n0)
        return u[i].bytes;
    int64_t best = 0;
    for (int64_t m = 16; m < a->m + 16; m += 16) {
        const int64_t rows = (m + a->align_m - 1) / a->align_m * a->align_m;
        for (int64_t n = n0; n < a->n + 16 && n <= wmax; n += 16) {
            const int64_t b = rows * n * a->cbytes;
            if (b <= acc_cap && b > best)
                best = b;
        }
    }
    return best > 0 ? best : u[i].bytes;
}

/* Why the matmul of slot i, if it is one, keeps its whole Acc result (the
 * end of the capacity message), or "". */
static const char *kept_why(const pld_npu_profile_t *pf, const pld_func_t *fn, int i)
{
    const pld_autol0_t *a = fn && fn->autol0 ? &fn->autol0[i] : NULL;
    if (!a || a->kind == PLD_AUTOL0_NONE)
        return "";
    if ((a->kind == PLD_AUTOL0_STORE || a->kind == PLD_AUTOL0_SCRATCH) && a->bias != PLD_AUTOL0_BIAS_NONE) {
        const int64_t w = bias_max_n(pf, a);
        if (w == 0)
            return "; PyPTO's AutoTileMatmulL0 does not sub-tile this matmul_bias: the platform does not move a Mat "
                   "bias of this dtype into the Bias table (docs/interpreter.md)";
        if (a->bias != PLD_AUTOL0_BIAS_MAT_LOAD && w < a->n)
            return "; PyPTO's AutoTileMatmulL0 does not sub-tile this matmul_bias: its sub-tiles keep the whole N "
                   "(a Bias-resident bias, or a Mat bias not defined by one pl.tile.load), wider than the Bias "
                   "table (docs/interpreter.md)";
    }
    if (a->kind == PLD_AUTOL0_STORE)
        return "";
    if (a->kind == PLD_AUTOL0_SCRATCH)
        return a->scratch > pld_npu_space_bytes(pf, PLD_NPU_SPACE_MAT)
                   ? "; PyPTO's AutoTileMatmulL0 does not sub-tile this matmul: its BF16/FP16 scratch does not fit "
                     "Mat (L1) (docs/interpreter.md)"
                   : "";
    switch (a->why) {
    case PLD_AUTOL0_WHY_USE:
        return "; PyPTO's AutoTileMatmulL0 does not sub-tile this matmul: its result is read by something other "
               "than one store or, through one cast to BF16/FP16 with mode='rint', matmuls only (docs/interpreter.md)";
    case PLD_AUTOL0_WHY_CAST:
        return "; PyPTO's AutoTileMatmulL0 does not sub-tile this matmul: its cast is not FP32 to BF16/FP16 with "
               "mode='rint' (docs/interpreter.md)";
    case PLD_AUTOL0_WHY_MEM:
        return "; PyPTO's AutoTileMatmulL0 does not sub-tile this matmul: an operand is not in Mat (L1) "
               "(docs/interpreter.md)";
    case PLD_AUTOL0_WHY_K:
        return "; PyPTO's AutoTileMatmulL0 does not sub-tile this matmul: K is not a multiple of 16 "
               "(docs/interpreter.md)";
    case PLD_AUTOL0_WHY_BIAS:
        return "; PyPTO's AutoTileMatmulL0 does not sub-tile this matmul_bias: its bias is not a [1, N] tile in "
               "Mat or Bias (docs/interpreter.md)";
    case PLD_AUTOL0_WHY_BOX:
        return "; PyPTO's AutoTileMatmulL0 does not sub-tile this matmul_bias: M is not a multiple of 16, or N or "
               "K not of 32 bytes of the operand and 16 (docs/interpreter.md)";
    default:
        return "";
    }
}

/* 1 when slot i holds a tile that counts in memory space m after statement
 * cur: the tile just assigned (`just`), or one a later statement reads
 * (liveness from the checker; without it, every tile). */
static int counts(const pld_func_t *fn, const pld_ub_slot_t *u, int i, int just, int32_t cur, pld_mem_t m)
{
    if (u[i].bytes <= 0)
        return 0;
    pld_mem_t tm = eff_mem(fn, u, i);
    if (tm != m)
        return 0;
    const int32_t *lu = fn ? fn->last_use : NULL, *fd = fn ? fn->first_def : NULL;
    return i == just || !lu || !fd || (fd[i] <= cur && lu[i] > cur);
}

/* The memory check after a tile is bound to slot `just` in a kernel: in the
 * tile's memory space, the tiles still needed after this statement (and the
 * new one) must fit the platform's capacity, as PyPTO's memory planning
 * requires (a buffer lives from its definition to its last use; a dead tile
 * takes no room once its statement is done). u: the tile (bytes, space) each
 * slot holds; the interpreter's frame and compiled kernels (pld_crt.c) fill it. */
pld_status_t pld_ub_check(pld_interp_t *it, frame_t *f, const pld_func_t *fn, int32_t cur, int just,
                          const pld_ub_slot_t *u, int nslots, pld_span_t sp)
{
    if (just < 0 || just >= nslots || u[just].bytes <= 0)
        return PLD_OK;
    const pld_npu_profile_t *pf = pld_npu_profile_or_default(it->opts.platform);
    pld_mem_t m = eff_mem(fn, u, just);
    const char *space;
    int64_t limit = mem_capacity(pf, m, &space);
    if (limit <= 0)
        return PLD_OK;
    int64_t live = 0;
    for (int i = 0; i < nslots; i++)
        if (counts(fn, u, i, just, cur, m))
            live += m == PLD_MEM_ACC ? acc_charge(pf, fn, u, i, limit) : u[i].bytes;
    if (live <= limit)
        return PLD_OK;
    /* name the largest tiles */
    char list[512] = "";
    const char *why = "";
    int shown = 0, chosen[3] = {-1, -1, -1};
    for (int pass = 0; pass < 3 && shown < 3; pass++) {
        int64_t best = -1;
        int bi = -1;
        for (int i = 0; i < nslots; i++)
            if (counts(fn, u, i, just, cur, m) && i != chosen[0] && i != chosen[1] && i != chosen[2]) {
                const int64_t b = m == PLD_MEM_ACC ? acc_charge(pf, fn, u, i, limit) : u[i].bytes;
                if (b > best)
                    best = b, bi = i;
            }
        if (bi < 0)
            break;
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s'%s' (%lld bytes%s)", shown ? ", " : "",
                 fn->slot_names[bi], (long long)best,
                 best < u[bi].bytes ? ": its largest AutoTileMatmulL0 sub-tile" : "");
        if (!why[0])
            why = kept_why(pf, fn, bi);
        chosen[shown++] = bi;
    }
    return pld_rt_error(it, f, sp,
                        "kernel %s needs %lld bytes of %s tiles at once (the tiles a later statement still reads), "
                        "above the %lld bytes of %s on platform %s; largest: %s%s",
                        fn ? fn->name : "?", (long long)live, space, (long long)limit, space, pf->name, list, why);
}

int pld_ub_may_overflow(pld_interp_t *it, const int64_t *bytes, int n)
{
    const pld_npu_profile_t *pf = pld_npu_profile_or_default(it->opts.platform);
    for (int m = 0; m < n; m++) {
        const char *space;
        const long cap = bytes[m] > 0 ? mem_capacity(pf, (pld_mem_t)m, &space) : 0;
        if (cap > 0 && bytes[m] > cap)
            return 1;
    }
    return 0;
}

pld_status_t pld_exec_check_ub(pld_interp_t *it, frame_t *f, int just, pld_span_t sp)
{
    if (just < 0 || just >= f->nslots || f->slots[just].kind != PLD_V_TILE || !f->fn)
        return PLD_OK;
    enum { SMALL = 64 };
    pld_ub_slot_t small[SMALL], *u = f->nslots <= SMALL ? small : pld_mem_calloc((size_t)f->nslots, sizeof *u);
    if (!u)
        return pld_rt_error(it, f, sp, "out of memory");
    for (int i = 0; i < f->nslots; i++) {
        const int tile = f->slots[i].kind == PLD_V_TILE;
        u[i].bytes = tile ? tile_bytes(pld_v_tile(&f->slots[i])) : 0;
        u[i].mem = tile ? pld_v_tile(&f->slots[i])->mem : PLD_MEM_NONE;
    }
    pld_status_t st = pld_ub_check(it, f, f->fn, f->cur_seq, just, u, f->nslots, sp);
    if (u != small)
        pld_mem_free(u);
    return st;
}

pld_status_t pld_dump_value(pld_interp_t *it, frame_t *f, const pld_expr_t *tag, pld_span_t at, const char *stage,
                            const pld_value_t *v)
{
    const pld_interp_dump_hook_t *hk = it->opts.dump;
    pld_view_t from, to;
    int64_t shape[PLD_MAX_RANK];
    if (v->kind == PLD_V_TENSOR) {
        pld_tensor_kview(pld_v_tensor(v), &from);
    } else if (v->kind == PLD_V_TILE) {
        pld_tile_kview(pld_v_tile(v), &from, 1); /* its valid region */
    } else {
        return pld_rt_error(it, f, tag->span, "--dump of a %s: expected a tensor or a tile", pld_vkind_name(v->kind));
    }
    memcpy(shape, from.shape, sizeof shape);
    int64_t bytes = pld_value_bytes(from.dt, from.rank, shape);
    void *buf = bytes < 0 ? NULL : pld_mem_alloc(bytes ? (size_t)bytes : 1);
    if (!buf)
        return pld_rt_error(it, f, at, "out of memory (--dump)");
    char err[512] = "";
    pld_view_packed(&to, buf, from.dt, from.rank, shape);
    pld_status_t st = pld_k_copy(&to, &from, err, sizeof err);
    if (st == PLD_OK) {
        const pld_interp_dump_rec_t rec = {it->p->src + tag->span.off, tag->span.len, f->fn ? f->fn->name : "",
                                           at.line, at.col, at.off, it->dispatch,
                                           f->block_num > 1 ? f->block_idx : -1, stage, from.dt, from.rank, shape,
                                           buf};
        st = hk->tensor(hk->ctx, &rec, err, sizeof err);
    }
    pld_mem_free(buf);
    return st == PLD_OK ? PLD_OK : pld_rt_error(it, f, at, "--dump: %s", err[0] ? err : pld_status_name(st));
}

pld_status_t pld_dump_tag(pld_interp_t *it, frame_t *f, const pld_expr_t *e, const pld_value_t *v)
{
    return pld_dump_value(it, f, e->u.call.args[0].value, e->span, "marker", v);
}

