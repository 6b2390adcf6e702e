/* ring.c - kernel `ring` of tests/ascend/ring.pld:
 *   ring(x, y, slot [window], sig [window, INT32 [1, 1]], ctx [CommCtx], k [FP32])
 *   args: 0 x, 1 y, 2 slot, 3 sig, 4 ctx, 5 k
 * Puts x into the next rank's slot, adds 1 (seq_cst atomic) to the next
 * rank's sig cell, waits until its own cell >= 1, writes y = slot + k and
 * clears its cell. Peers are reached only through the CommContext:
 * windowsIn[peer] - windowsIn[rankId] added to this rank's own address. */
#include "fake_kernel.h"

static void kernel_main(int64_t *args)
{
    const pld_abi_tensor_t *x = fk_tensor(args, 0), *y = fk_tensor(args, 1), *slot = fk_tensor(args, 2),
                           *sig = fk_tensor(args, 3);
    const uint8_t *ctx = fk_ctx(args, 4);
    const float k = fk_f32_scalar(args[5]);
    if (fk_local(args)->block_idx != 0)
        return;
    const uint32_t me = fk_ctx_rank(ctx), next = (me + 1) % fk_ctx_nranks(ctx);
    const uint32_t rows = x->shapes[0], cols = x->shapes[1];
    for (uint32_t i = 0; i < rows; i++)
        for (uint32_t j = 0; j < cols; j++)
            *(float *)fk_remote(ctx, fk_at2(slot, i, j), next) = *(const float *)fk_at2(x, i, j);
    _Atomic int32_t *their = fk_remote(ctx, fk_at2(sig, 0, 0), next);
    atomic_fetch_add_explicit(their, 1, memory_order_seq_cst);
    _Atomic int32_t *mine = fk_at2(sig, 0, 0);
    while (atomic_load_explicit(mine, memory_order_seq_cst) < 1)
        sched_yield();
    for (uint32_t i = 0; i < rows; i++)
        for (uint32_t j = 0; j < cols; j++)
            *(float *)fk_at2(y, i, j) = *(const float *)fk_at2(slot, i, j) + k;
    atomic_store_explicit(mine, 0, memory_order_seq_cst);
}
