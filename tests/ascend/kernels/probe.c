/* probe.c - kernel `probe` of tests/ascend/probe.pld: writes the raw bytes
 * of what it received into its output, for a byte-by-byte check of the
 * launch ABI (tests/ascend/).
 *   probe(x [FP32 2x8], win [window FP32 1x8], out [INT64 1x256, out],
 *         ctx [CommCtx], a [INT32], f [FP32])
 *   args: 0 x, 1 win, 2 out, 3 ctx, 4 a, 5 f
 *
 * The output (2048 bytes, little-endian, the element (0, 0) of out first):
 *   @0     400 B  args[0..49] as the kernel saw them (device addresses)
 *   @400   128 B  the ChipTensor args[0] points to (x)
 *   @528   128 B  the ChipTensor args[1] points to (win)
 *   @656   128 B  the ChipTensor args[2] points to (out), as read before
 *                 anything is written
 *   @784    48 B  the LocalContext args[48] points to
 *   @832    24 B  the GlobalContext args[49] points to
 *   @856  1056 B  the CommContext args[3] (the ctx scalar) points to
 *   @1912   8 B   stride, the entry's second argument
 *   @1920   8 B   payloads, the entry's first argument
 *   @1928   4 B   the hardware block index (hooks->block_idx())
 *   @1932   4 B   the hardware block count (hooks->block_num())
 *   @1936   8 B   args, the address of this block's payload
 *   @1944 104 B   zero
 * Only block 0 writes (the launch has one block). */
#include "fake_kernel.h"

#define PROBE_BYTES 2048

static void kernel_main(int64_t *args)
{
    if (fk_local(args)->block_idx != 0)
        return;
    uint8_t buf[PROBE_BYTES];
    memset(buf, 0, sizeof buf);
    memcpy(buf, args, 400);
    for (int i = 0; i < 3; i++)
        memcpy(buf + 400 + 128 * i, fk_tensor(args, i), 128);
    memcpy(buf + 784, fk_local(args), 48);
    memcpy(buf + 832, fk_global(args), 24);
    memcpy(buf + 856, fk_ctx(args, 3), PLD_ABI_CTX_BYTES);
    const uint64_t payloads = (uint64_t)(uintptr_t)fk_payloads, self = (uint64_t)(uintptr_t)args;
    const int32_t hw_idx = fk_hw_block_idx(), hw_num = fk_hw_block_num();
    memcpy(buf + 1912, &fk_stride, 8);
    memcpy(buf + 1920, &payloads, 8);
    memcpy(buf + 1928, &hw_idx, 4);
    memcpy(buf + 1932, &hw_num, 4);
    memcpy(buf + 1936, &self, 8);
    const pld_abi_tensor_t *out = fk_tensor(args, 2);
    if (out->size < PROBE_BYTES || out->dtype != 7)
        fk_fault("probe: the output is not an INT64 tensor of 2048 bytes");
    memcpy(fk_at2(out, 0, 0), buf, PROBE_BYTES);
}
