/* spmd_rows.c - the grid scope `spmd_rows` of tests/ascend/spmd_rows.pld
 * (a pl.spmd of 4 blocks). Captures in ABI order:
 *   args: 0 x [FP32 4x16], 1 z [FP32 4x16, out], 2 k [FP32], 3 rank [INT32]
 * Block b (LocalContext.block_idx, checked against the hardware index and
 * LocalContext.block_num against the launch) writes row b of z:
 *   z[b, :] = k * x[b, :] + b + rank
 * A mismatch of the block index or count is a device fault. */
#include "fake_kernel.h"

static void kernel_main(int64_t *args)
{
    const pld_abi_tensor_t *x = fk_tensor(args, 0), *z = fk_tensor(args, 1);
    const float k = fk_f32_scalar(args[2]);
    const int32_t rank = (int32_t)args[3];
    const pld_abi_local_t *lc = fk_local(args);
    if (lc->block_idx != fk_hw_block_idx() || lc->block_num != fk_hw_block_num())
        fk_fault("spmd_rows: LocalContext block index/count differ from the launch's");
    const uint32_t b = (uint32_t)lc->block_idx;
    if (b >= x->shapes[0])
        fk_fault("spmd_rows: block index beyond the rows of x");
    for (uint32_t j = 0; j < x->shapes[1]; j++)
        *(float *)fk_at2(z, b, j) = k * *(const float *)fk_at2(x, b, j) + (float)b + (float)rank;
}
