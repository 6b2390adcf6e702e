/* pld_npu.h - the in-rank block scheduler (platform profiles: pld_npu_profile.h).
 *
 * Several blocks of one rank (an SPMD grid: pl.spmd(n), pl.spmd_submit with
 * core_num) run as coroutines on one OS thread with a deterministic schedule:
 * block 0 runs until it finishes or waits on something that is not ready,
 * then the next ready block runs, round-robin (or, seeded, in an order drawn
 * from a PRNG: pld_npu_sched_seed). A wait that is not yet
 * satisfied yields (pld_npu_yield) instead of spinning, so one block can wait
 * for another block of the same rank. No threads: MPI is only ever called
 * from the one thread (MPI_THREAD_MULTIPLE is never needed). */
#ifndef PLD_NPU_H
#define PLD_NPU_H

#include "pld_npu_profile.h"
#include "pld_status.h"

#include <stddef.h>
#include <stdint.h>

/* ---- the scheduler ---- */
/* One scheduler per interpreter: it owns the grids that are running. A grid
 * started from inside a block of another grid (a nested grid: pl.spmd blocks
 * that each launch a mixed AIC+AIV group) runs its scheduling loop on that
 * block's stack; after each round of its own blocks it yields the hosting
 * block, so the blocks of every running grid progress together. */
typedef struct pld_npu_sched pld_npu_sched_t;

/* Creates an idle scheduler. *out is owned (pld_npu_sched_destroy).
 * Errors: PLD_E_NOMEM. */
pld_status_t pld_npu_sched_create(pld_npu_sched_t **out);
/* Destroys an idle scheduler (not from inside one of its blocks). Accepts NULL. */
void pld_npu_sched_destroy(pld_npu_sched_t *s);

/* ---- seeded schedules (pldrun --schedule-seed) ----
 * Unseeded (the default), blocks run round-robin as above and
 * pld_npu_preempt is a no-op. After pld_npu_sched_seed, every choice of the
 * scheduler comes from a PRNG (splitmix64) seeded with `seed`: each pick of
 * the next block to run is drawn among the blocks of the grid that have not
 * returned (a round is as many picks as there are such blocks; a nested grid
 * yields its host after each round), and pld_npu_preempt yields to the other
 * blocks with probability 1/2. Nothing else feeds the PRNG, so the same seed
 * and the same program (and the same values seen at waits) repeat the same
 * block order. Seed it before the first grid runs. */
void pld_npu_sched_seed(pld_npu_sched_t *s, uint64_t seed);
/* 1 when s was seeded. */
int pld_npu_sched_seeded(const pld_npu_sched_t *s);
/* A preemption point (a remote op of the running block): seeded and inside a
 * grid, yields to the other blocks with probability 1/2 and returns when this
 * block is picked again (1); otherwise returns at once (0). */
int pld_npu_preempt(pld_npu_sched_t *s);

/* ---- blocks ---- */
/* Body of one block: returns PLD_OK or an error status. */
typedef pld_status_t (*pld_npu_block_fn)(void *arg, int block_idx, int block_num);

/* Runs blocks 0..n-1 of an SPMD grid on scheduler s as coroutines until every
 * one returned (from inside a block of s: a nested grid, see above). With
 * n == 1 the block runs on the caller's stack. The first
 * error stops the grid: blocks still waiting see pld_npu_cancelled() and
 * return. Returns the first error (or PLD_OK; PLD_E_NOMEM when the block
 * stacks cannot be mapped). stack_bytes: per-block stack, rounded up to whole
 * pages (0 = PLD_NPU_STACK_DEFAULT). Each block stack is an mmap with a
 * PROT_NONE guard page below it: an overflow faults (SIGSEGV) at once instead
 * of overwriting memory; callers that recurse check the room left with
 * pld_npu_stack_lo. Borrows s and arg. */
pld_status_t pld_npu_run_blocks(pld_npu_sched_t *s, int n, size_t stack_bytes, pld_npu_block_fn fn, void *arg);
/* The default block stack: 1 MiB, 4 MiB under AddressSanitizer (its frames
 * carry redzones and are several times larger). Untouched pages cost no
 * memory. */
#if defined(__SANITIZE_ADDRESS__)
#define PLD_NPU_STACK_DEFAULT ((size_t)4 << 20)
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PLD_NPU_STACK_DEFAULT ((size_t)4 << 20)
#endif
#endif
#ifndef PLD_NPU_STACK_DEFAULT
#define PLD_NPU_STACK_DEFAULT ((size_t)1 << 20)
#endif

/* 1 when the caller runs inside a grid of s (there may be other blocks to yield to). */
int pld_npu_can_yield(const pld_npu_sched_t *s);
/* 1 when other blocks may run between the caller's statements: it runs in a
 * grid of more than one block, or in a grid nested in one. The same on every
 * rank that runs the same launch. */
int pld_npu_concurrent(const pld_npu_sched_t *s);
/* Lets the other blocks of the running grid of s run; returns when this block
 * is scheduled again. A no-op outside a grid. */
void pld_npu_yield(pld_npu_sched_t *s);
/* 1 when the running grid of s, or a grid enclosing it, was cancelled (a block
 * failed): stop waiting. */
int pld_npu_cancelled(const pld_npu_sched_t *s);

/* A barrier of the blocks of a running grid of s (syncall): the innermost
 * (up = 0) or the one `up` levels above it (the pl.spmd grid of a group's
 * cores: up = 1, called by one core of each group). Returns 0 when every
 * block arrived (at once outside a grid), 1 when the grid was cancelled, 2
 * when it can never complete because the blocks that did not arrive have
 * returned (*arrived of *blocks arrived). */
int pld_npu_barrier(pld_npu_sched_t *s, int up, int *arrived, int *blocks);

/* ---- stacks ---- */
/* The stack the caller runs on: the coroutine stack of the running block of
 * s, or, outside a grid, the stack of the thread that created s (a nested
 * grid's blocks run on the stack of the block that started them). */
typedef struct pld_npu_stack {
    uintptr_t lo, hi;   /* usable range [lo, hi); the stack grows down towards lo. 0, 0: unknown
                           (another thread, or the thread's stack could not be read) */
    int block;          /* the block (of the running grid) whose stack it is; -1: the thread's stack */
} pld_npu_stack_t;
void pld_npu_stack_current(const pld_npu_sched_t *s, pld_npu_stack_t *out);
/* pld_npu_stack_current's lo alone: the room left is
 * (uintptr_t)__builtin_frame_address(0) - lo. 0: unknown. */
uintptr_t pld_npu_stack_lo(const pld_npu_sched_t *s);
/* The same for a check at every call or expression, without a call: the
 * address of a word of s that always holds the lo of the stack the thread
 * that created s runs on (s updates it at every switch between blocks).
 * Another thread reading it gets that thread's lo, not its own: confirm a
 * low reading with pld_npu_stack_current. Valid until s is destroyed. */
const uintptr_t *pld_npu_stack_lo_ref(const pld_npu_sched_t *s);

#endif
