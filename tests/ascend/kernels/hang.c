/* hang.c - kernel `hang` of tests/ascend/hang.pld:
 *   hang(y [FP32 1x8, out], sig [window, INT32 1x1])   args: 0 y, 1 sig
 * Waits for its own signal cell to reach 1, which nobody ever notifies: only
 * the stream sync timeout (and a device reset) ends it. */
#include "fake_kernel.h"

static void kernel_main(int64_t *args)
{
    _Atomic int32_t *cell = fk_at2(fk_tensor(args, 1), 0, 0);
    while (atomic_load_explicit(cell, memory_order_seq_cst) < 1)
        sched_yield();
    *(float *)fk_at2(fk_tensor(args, 0), 0, 0) = 1.0f;
}
