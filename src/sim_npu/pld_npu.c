/* pld_npu.c - block coroutines (ucontext). */
#define _GNU_SOURCE 1
#include "pld_npu.h"
#include "pld_mem.h"

#include <stdint.h>
#include <string.h>
#include <ucontext.h>

/* getcontext/swapcontext return twice like setjmp; GCC's -Wclobbered then
 * warns about every local and argument of the function that switches. The
 * scheduler keeps its state in the grid (memory) and in volatile locals, so the
 * warning does not apply here. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wclobbered"
#endif

#if defined(__SANITIZE_ADDRESS__)
#define PLD_ASAN_FIBERS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PLD_ASAN_FIBERS 1
#endif
#endif

#ifdef PLD_ASAN_FIBERS
/* AddressSanitizer must be told about stack switches */
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old, size_t *size_old);
#endif

typedef struct block {
    ucontext_t ctx;
    void *stack;
    size_t stack_size;
    int done;
    pld_status_t st;
} block_t;

typedef struct grid {
    block_t *blocks;
    int n;
    int cur;
    int cancelled;
    ucontext_t main;
    pld_npu_block_fn fn;
    void *arg;
#ifdef PLD_ASAN_FIBERS
    const void *main_bottom;
    size_t main_size;
#endif
} grid_t;

struct pld_npu_sched {
    grid_t *active; /* the running grid (one at a time; nested grids run sequentially) */
};

pld_status_t pld_npu_sched_create(pld_npu_sched_t **out)
{
    *out = pld_mem_calloc(1, sizeof **out);
    return *out ? PLD_OK : PLD_E_NOMEM;
}

void pld_npu_sched_destroy(pld_npu_sched_t *s)
{
    pld_mem_free(s);
}

static void switch_to_main(grid_t *g)
{
#ifdef PLD_ASAN_FIBERS
    void *fake = NULL;
    __sanitizer_start_switch_fiber(&fake, g->main_bottom, g->main_size);
    swapcontext(&g->blocks[g->cur].ctx, &g->main);
    __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#else
    swapcontext(&g->blocks[g->cur].ctx, &g->main);
#endif
}

/* The first function of every block; makecontext passes only int arguments,
 * so the grid comes as two 32-bit halves of its address. */
static void trampoline(unsigned hi, unsigned lo)
{
    grid_t *g = (grid_t *)(uintptr_t)(((uint64_t)hi << 32) | (uint64_t)lo);
#ifdef PLD_ASAN_FIBERS
    __sanitizer_finish_switch_fiber(NULL, &g->main_bottom, &g->main_size);
#endif
    int b = g->cur;
    g->blocks[b].st = g->fn(g->arg, b, g->n);
    g->blocks[b].done = 1;
    if (g->blocks[b].st != PLD_OK)
        g->cancelled = 1;
#ifdef PLD_ASAN_FIBERS
    __sanitizer_start_switch_fiber(NULL, g->main_bottom, g->main_size);
#endif
    setcontext(&g->main);
}

pld_status_t pld_npu_run_blocks(pld_npu_sched_t *s, int n, size_t stack_bytes_in, pld_npu_block_fn fn, void *arg)
{
    /* no variable set after getcontext/swapcontext may live in a register that
     * the switch clobbers: the grid state lives in `g`, reached through a
     * volatile pointer */
    const size_t stack_bytes = stack_bytes_in ? stack_bytes_in : (size_t)1 << 20;
    if (n <= 1 || s->active) {
        pld_status_t first = PLD_OK;
        for (int b = 0; b < n && first == PLD_OK; b++)
            first = fn(arg, b, n);
        return first;
    }
    grid_t g;
    memset(&g, 0, sizeof g);
    g.blocks = pld_mem_calloc((size_t)n, sizeof *g.blocks);
    if (!g.blocks)
        return PLD_E_NOMEM;
    g.n = n;
    g.fn = fn;
    g.arg = arg;
    volatile pld_status_t result = PLD_OK;
    for (int b = 0; b < n; b++) {
        block_t *bl = &g.blocks[b];
        bl->stack = pld_mem_alloc(stack_bytes);
        if (!bl->stack || getcontext(&bl->ctx) != 0) {
            result = PLD_E_NOMEM;
            break;
        }
        bl->stack_size = stack_bytes;
        bl->ctx.uc_stack.ss_sp = bl->stack;
        bl->ctx.uc_stack.ss_size = stack_bytes;
        bl->ctx.uc_link = NULL;
        const uint64_t gp = (uint64_t)(uintptr_t)&g;
        makecontext(&bl->ctx, (void (*)(void))trampoline, 2, (unsigned)(gp >> 32), (unsigned)(gp & 0xffffffffu));
    }
    if (result == PLD_OK) {
        s->active = &g;
        volatile int remaining = n;
        while (remaining > 0) {
            for (volatile int b = 0; b < n; b++) {
                if (g.blocks[b].done)
                    continue;
                g.cur = b;
#ifdef PLD_ASAN_FIBERS
                void *fake = NULL;
                __sanitizer_start_switch_fiber(&fake, g.blocks[b].stack, g.blocks[b].stack_size);
                swapcontext(&g.main, &g.blocks[b].ctx);
                __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#else
                swapcontext(&g.main, &g.blocks[b].ctx);
#endif
                if (g.blocks[b].done)
                    remaining--;
            }
        }
        s->active = NULL;
        for (int b = 0; b < n; b++)
            if (g.blocks[b].st != PLD_OK && result == PLD_OK)
                result = g.blocks[b].st;
    }
    for (int b = 0; b < n; b++)
        pld_mem_free(g.blocks[b].stack);
    pld_mem_free(g.blocks);
    return result;
}

int pld_npu_can_yield(const pld_npu_sched_t *s)
{
    return s->active != NULL && s->active->n > 1;
}

void pld_npu_yield(pld_npu_sched_t *s)
{
    if (!s->active)
        return;
    switch_to_main(s->active);
}

int pld_npu_cancelled(const pld_npu_sched_t *s)
{
    return s->active && s->active->cancelled;
}
