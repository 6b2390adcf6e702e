/* fault.c - kernel `fault` of tests/ascend/fault.pld:
 *   fault(x [FP32 1x8], y [FP32 1x8, out])   args: 0 x, 1 y
 * Block 0 reports a device fault (hooks->fault) before writing anything; any
 * other block copies x to y. */
#include "fake_kernel.h"

static void kernel_main(int64_t *args)
{
    const pld_abi_tensor_t *x = fk_tensor(args, 0), *y = fk_tensor(args, 1);
    if (fk_local(args)->block_idx == 0)
        fk_fault("fault kernel: deliberate AICore fault in block 0");
    for (uint32_t j = 0; j < x->shapes[1]; j++)
        *(float *)fk_at2(y, 0, j) = *(const float *)fk_at2(x, 0, j);
}
