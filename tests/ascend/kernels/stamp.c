/* stamp.c - kernel `stamp` of programs/tutorial/hello_rank.pld:
 *   stamp(x [FP32 4x16], y [out], ids [out, INT32 1x1], rank [INT32])
 *   args: 0 x, 1 y, 2 ids, 3 rank
 * y = x + rank elementwise, ids[0, 0] = rank. Shapes, strides and start
 * offsets are read from the ChipTensors. */
#include "fake_kernel.h"

static void kernel_main(int64_t *args)
{
    const pld_abi_tensor_t *x = fk_tensor(args, 0), *y = fk_tensor(args, 1), *ids = fk_tensor(args, 2);
    const int32_t rank = (int32_t)args[3];
    if (fk_local(args)->block_idx != 0)
        return;
    for (uint32_t i = 0; i < x->shapes[0]; i++)
        for (uint32_t j = 0; j < x->shapes[1]; j++)
            *(float *)fk_at2(y, i, j) = *(const float *)fk_at2(x, i, j) + (float)rank;
    *(int32_t *)fk_at2(ids, 0, 0) = rank;
}
