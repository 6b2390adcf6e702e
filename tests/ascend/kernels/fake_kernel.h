/* fake_kernel.h - what every "kernel binary" of the fake ACL runtime shares
 * (tests/ascend/acl_fake.c): the entry shim the ascend plugin launches and
 * accessors of the kernel ABI (src/hw_backend/pld_backend.h).
 *
 * A kernel file defines `static void kernel_main(int64_t *args)` and
 * includes this header once. The shim
 *
 *     void pld_entry_0_mix_aiv(uint8_t *payloads, uint64_t stride)
 *
 * runs kernel_main(payloads + block_idx * stride), block_idx being the
 * hardware block index the fake gives each block thread (hooks->block_idx()).
 * The logical block index / count a kernel must use are in its own payload's
 * LocalContext (fk_local(args)), as on a card. */
#ifndef FAKE_KERNEL_H
#define FAKE_KERNEL_H

#include "pld_backend.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define FK_EXPORT __attribute__((visibility("default")))

/* The fake's hooks (acl_fake.c declares the same struct). */
struct acl_fake_hooks {
    int (*block_idx)(void);
    int (*block_num)(void);
    void (*fault)(const char *msg);   /* never returns */
};

static const struct acl_fake_hooks *fk_hooks;
static uint8_t *fk_payloads;          /* the entry's arguments, for the probe kernel */
static uint64_t fk_stride;

FK_EXPORT void acl_fake_register_hooks(const struct acl_fake_hooks *h);
FK_EXPORT void pld_entry_0_mix_aiv(uint8_t *payloads, uint64_t stride);
static void kernel_main(int64_t *args);

FK_EXPORT void acl_fake_register_hooks(const struct acl_fake_hooks *h)
{
    fk_hooks = h;
}

static inline int fk_hw_block_idx(void) { return fk_hooks ? fk_hooks->block_idx() : 0; }
static inline int fk_hw_block_num(void) { return fk_hooks ? fk_hooks->block_num() : 1; }

/* A device fault: the kernel ends. */
static inline void fk_fault(const char *msg)
{
    if (fk_hooks)
        fk_hooks->fault(msg);
    for (;;) /* no hooks: hang, so that a missing registration shows as a timeout */
        sched_yield();
}

FK_EXPORT void pld_entry_0_mix_aiv(uint8_t *payloads, uint64_t stride)
{
    fk_payloads = payloads;
    fk_stride = stride;
    kernel_main((int64_t *)(payloads + (uint64_t)fk_hw_block_idx() * stride));
}

/* ---- ABI accessors ---- */

static inline const pld_abi_tensor_t *fk_tensor(const int64_t *args, int i)
{
    return (const pld_abi_tensor_t *)(uintptr_t)args[i];
}

static inline const pld_abi_local_t *fk_local(const int64_t *args)
{
    return (const pld_abi_local_t *)(uintptr_t)args[PLD_ABI_LOCAL_SLOT];
}

static inline const pld_abi_global_t *fk_global(const int64_t *args)
{
    return (const pld_abi_global_t *)(uintptr_t)args[PLD_ABI_GLOBAL_SLOT];
}

/* bytes of one element of ABI dtype code c (0: unknown) */
static inline size_t fk_elem_bytes(uint8_t c)
{
    static const uint8_t bytes[] = {4, 2, 4, 2, 1, 1, 2, 8, 8, 2, 4, 1, 1, 1};
    return c < sizeof bytes ? bytes[c] : 0;
}

/* the address of element (i, j) of a 2-D tensor (j ignored for 1-D) */
static inline void *fk_at2(const pld_abi_tensor_t *t, uint32_t i, uint32_t j)
{
    uint64_t e = t->start_offset + (uint64_t)i * t->strides[0];
    if (t->ndims > 1)
        e += (uint64_t)j * t->strides[1];
    return (void *)(uintptr_t)(t->addr + e * fk_elem_bytes(t->dtype));
}

static inline float fk_f32_scalar(int64_t w)
{
    uint32_t u = (uint32_t)w;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* ---- CommContext (a CommCtx scalar is its address) ---- */

static inline const uint8_t *fk_ctx(const int64_t *args, int slot)
{
    return (const uint8_t *)(uintptr_t)args[slot];
}

static inline uint32_t fk_ctx_rank(const uint8_t *ctx)
{
    uint32_t v;
    memcpy(&v, ctx + PLD_ABI_CTX_RANK_ID, 4);
    return v;
}

static inline uint32_t fk_ctx_nranks(const uint8_t *ctx)
{
    uint32_t v;
    memcpy(&v, ctx + PLD_ABI_CTX_RANK_NUM, 4);
    return v;
}

static inline uint64_t fk_ctx_window(const uint8_t *ctx, uint32_t r)
{
    uint64_t v;
    memcpy(&v, ctx + PLD_ABI_CTX_WINDOWS_IN + 8 * r, 8);
    return v;
}

/* Rank peer's copy of local window address p: the delta addressing of
 * generated code, windowsIn[peer] - windowsIn[rankId] (hw_backend.md §2.5). */
static inline void *fk_remote(const uint8_t *ctx, void *p, uint32_t peer)
{
    const uint64_t delta = fk_ctx_window(ctx, peer) - fk_ctx_window(ctx, fk_ctx_rank(ctx));
    return (void *)((uintptr_t)p + (uintptr_t)delta);
}

#endif
