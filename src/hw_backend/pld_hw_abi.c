/* pld_hw_abi.c - the NPU kernel ABI: args[], ChipTensor, LocalContext and
 * GlobalContext of a launch (the layouts: pld_hw.h; facts from
 * docs/hw_backend.md §2). The builder lives in the core so that every
 * compiled backend (native, ascend) passes kernels the same bytes. */
#include "pld_hw.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* the layouts are the ABI: any drift is a build error */
_Static_assert(sizeof(pld_abi_tensor_t) == 128, "ChipTensor is 128 bytes");
_Static_assert(offsetof(pld_abi_tensor_t, start_offset) == 24, "ChipTensor.start_offset @24");
_Static_assert(offsetof(pld_abi_tensor_t, version) == 32, "ChipTensor.version @32");
_Static_assert(offsetof(pld_abi_tensor_t, ndims) == 36, "ChipTensor.ndims @36");
_Static_assert(offsetof(pld_abi_tensor_t, dtype) == 40, "ChipTensor.dtype @40");
_Static_assert(offsetof(pld_abi_tensor_t, address_space) == 43, "ChipTensor.address_space @43");
_Static_assert(offsetof(pld_abi_tensor_t, shapes) == 44, "ChipTensor.shapes @44");
_Static_assert(offsetof(pld_abi_tensor_t, extent_elem) == 64, "ChipTensor.extent_elem_cache @64");
_Static_assert(offsetof(pld_abi_tensor_t, strides) == 72, "ChipTensor.strides @72");
_Static_assert(offsetof(pld_abi_tensor_t, reserved) == 92, "ChipTensor reserved @92");
_Static_assert(sizeof(pld_abi_local_t) == 48, "LocalContext is 48 bytes");
_Static_assert(offsetof(pld_abi_local_t, completion_capacity) == 32, "AsyncCtx.completion_capacity @32");
_Static_assert(offsetof(pld_abi_local_t, task_token) == 40, "AsyncCtx.task_token @40");
_Static_assert(sizeof(pld_abi_global_t) == 24, "GlobalContext is 24 bytes");
_Static_assert(offsetof(pld_abi_global_t, dma_workspace) == 8, "GlobalContext.dma_workspace @8");
_Static_assert(PLD_ABI_MAX_TENSORS + PLD_ABI_MAX_SCALARS == PLD_ABI_LOCAL_SLOT, "tensors and scalars fill 0..47");

int pld_abi_dtype_code(pld_dtype_t dt)
{
    switch (dt) {
    case PLD_DT_FP32: return 0;
    case PLD_DT_FP16: return 1;
    case PLD_DT_INT32: return 2;
    case PLD_DT_INT16: return 3;
    case PLD_DT_INT8: return 4;
    case PLD_DT_UINT8: return 5;
    case PLD_DT_BF16: return 6;
    case PLD_DT_INT64: case PLD_DT_INDEX: return 7;
    case PLD_DT_UINT64: return 8;
    case PLD_DT_UINT16: return 9;
    case PLD_DT_UINT32: return 10;
    case PLD_DT_BOOL: return 11;
    case PLD_DT_FP8E4M3FN: return 12;
    case PLD_DT_FP8E8M0: return 13;
    case PLD_DT_FP4: return 14;
    default: return -1;
    }
}

pld_status_t pld_abi_tensor(pld_abi_tensor_t *out, const pld_hw_tensor_t *t, char *err, size_t errn)
{
    memset(out, 0, sizeof *out);
    const int code = pld_abi_dtype_code(t->dt);
    if (code < 0) {
        snprintf(err, errn, "a %s tensor has no dtype code in the kernel ABI", pld_dtype_name(t->dt));
        return PLD_E_HW;
    }
    if (t->rank > PLD_ABI_MAX_DIMS) {
        snprintf(err, errn, "a rank-%d tensor: the kernel ABI carries at most %d dims", t->rank, PLD_ABI_MAX_DIMS);
        return PLD_E_HW;
    }
    const int nd = t->rank > 0 ? t->rank : 1; /* a 0-d tensor is one element */
    uint64_t extent = 1, numel = 1, row = 1;
    int contiguous = 1;
    for (int d = nd - 1; d >= 0; d--) {
        const int64_t dim = t->rank > 0 ? t->shape[d] : 1, st = t->rank > 0 ? t->strides[d] : 1;
        if (dim < 1 || dim > (int64_t)UINT32_MAX || st < 1 || st > (int64_t)UINT32_MAX) {
            snprintf(err, errn,
                     "dim %d of a tensor has extent %lld and stride %lld: the kernel ABI needs both in 1..%lu (no "
                     "empty, broadcast or reversed views)",
                     d, (long long)dim, (long long)st, (unsigned long)UINT32_MAX);
            return PLD_E_HW;
        }
        out->shapes[d] = (uint32_t)dim;
        out->strides[d] = (uint32_t)st;
        extent += (uint64_t)(dim - 1) * (uint64_t)st;
        numel *= (uint64_t)dim;
        contiguous = contiguous && (uint64_t)st == row;
        row *= (uint64_t)dim;
    }
    const int esize = pld_dtype_bytes(t->dt);
    out->addr = (uint64_t)(uintptr_t)t->data;
    out->size = extent * (uint64_t)esize;
    out->owner_task_id = UINT64_MAX;
    out->start_offset = 0;
    out->version = 0;
    out->ndims = (uint32_t)nd;
    out->dtype = (uint8_t)code;
    out->is_contiguous = (uint8_t)contiguous;
    out->address_space = 0;
    out->extent_elem = contiguous ? numel : extent;
    return PLD_OK;
}

/* A scalar argument as its 64-bit word (pld_hw_arg_t keeps floats as double
 * bits and integers sign-extended). */
static uint64_t scalar_word(const pld_hw_arg_t *a)
{
    double d;
    memcpy(&d, &a->bits, sizeof d);
    switch (a->dt) {
    case PLD_DT_FP32: {
        float f = (float)d;
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        return u;
    }
    case PLD_DT_FP16: return pld_f32_to_f16((float)d);
    case PLD_DT_BF16: return pld_f32_to_bf16((float)d);
    default: return a->bits; /* FP64 whole, integers and addresses as they are */
    }
}

pld_status_t pld_abi_build(pld_abi_frame_t *fr, const pld_hw_launch_t *l, int block_idx, int sub_block_id, char *err,
                           size_t errn)
{
    memset(fr, 0, sizeof *fr);
    int nt = 0, ns = 0;
    for (int i = 0; i < l->nargs; i++)
        l->args[i].is_tensor ? nt++ : ns++;
    if (nt > PLD_ABI_MAX_TENSORS || ns > PLD_ABI_MAX_SCALARS) {
        snprintf(err, errn, "kernel %s has %d tensor and %d scalar arguments: the kernel ABI carries at most %d and %d",
                 l->kernel ? l->kernel : "?", nt, ns, PLD_ABI_MAX_TENSORS, PLD_ABI_MAX_SCALARS);
        return PLD_E_HW;
    }
    for (int i = 0; i < l->nargs; i++) {
        const pld_hw_arg_t *a = &l->args[i];
        if (!a->is_tensor) {
            fr->args[nt + fr->nscalars++] = (int64_t)scalar_word(a);
            continue;
        }
        char why[200];
        if (pld_abi_tensor(&fr->tensors[fr->ntensors], &a->tensor, why, sizeof why) != PLD_OK) {
            snprintf(err, errn, "argument %d of kernel %s: %s", i + 1, l->kernel ? l->kernel : "?", why);
            return PLD_E_HW;
        }
        fr->args[fr->ntensors] = (int64_t)(uintptr_t)&fr->tensors[fr->ntensors];
        fr->ntensors++;
    }
    fr->local.block_idx = block_idx;
    fr->local.block_num = l->block_num > 0 ? l->block_num : 1;
    fr->local.task_token = UINT64_MAX; /* no deferred completion: the "invalid" encoding */
    fr->global.sub_block_id = sub_block_id;
    fr->args[PLD_ABI_LOCAL_SLOT] = (int64_t)(uintptr_t)&fr->local;
    fr->args[PLD_ABI_GLOBAL_SLOT] = (int64_t)(uintptr_t)&fr->global;
    return PLD_OK;
}
