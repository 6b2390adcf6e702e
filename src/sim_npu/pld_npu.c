/* pld_npu.c - block coroutines (ucontext). */
#define _GNU_SOURCE 1
#include "pld_npu.h"
#include "pld_mem.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

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
    void *map;         /* the mapping: one PROT_NONE guard page, then the stack */
    size_t map_size;
    void *stack;       /* usable range [stack, stack + stack_size), above the guard page */
    size_t stack_size;
    int done;
    pld_status_t st;
} block_t;

typedef struct grid {
    struct grid *parent; /* the grid whose block started this one (nested grids), or NULL */
    int host;            /* the block of `parent` whose stack runs this grid's loop */
    block_t *blocks;
    int n;
    int cur;
    int cancelled;
    int arrived;         /* blocks waiting in pld_npu_barrier */
    unsigned gen;        /* barrier generation: bumped when every block arrived */
    ucontext_t main;
    pld_npu_block_fn fn;
    void *arg;
#ifdef PLD_ASAN_FIBERS
    const void *main_bottom;
    size_t main_size;
#endif
} grid_t;

struct pld_npu_sched {
    grid_t *active; /* the innermost running grid: a block of a grid may start a grid of its own,
                       whose loop runs on that block's stack (grids form a tree) */
    /* the stack of the thread that created the scheduler (lo = 0: unknown) */
    pthread_t owner;
    uintptr_t thread_lo, thread_hi;
    uintptr_t cur_lo; /* lo of the stack the owner thread runs on now (pld_npu_stack_lo_ref) */
    int seeded;       /* pld_npu_sched_seed: picks and preemptions drawn from rng */
    uint64_t rng;     /* splitmix64 state */
};

/* splitmix64 (Steele, Lea, Flood 2014): one 64-bit state, full period. */
static uint64_t draw(pld_npu_sched_t *s)
{
    uint64_t z = (s->rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void pld_npu_sched_seed(pld_npu_sched_t *s, uint64_t seed)
{
    s->seeded = 1;
    s->rng = seed;
}

int pld_npu_sched_seeded(const pld_npu_sched_t *s)
{
    return s->seeded;
}

/* The usable range of the calling thread's stack (0, 0 when unknown). For the
 * main thread glibc derives it from RLIMIT_STACK and /proc/self/maps. */
static void thread_stack(uintptr_t *lo, uintptr_t *hi)
{
    *lo = *hi = 0;
    pthread_attr_t a;
    if (pthread_getattr_np(pthread_self(), &a) != 0)
        return;
    void *addr = NULL;
    size_t size = 0;
    if (pthread_attr_getstack(&a, &addr, &size) == 0 && addr && size > 0) {
        size_t guard = 0;
        if (pthread_attr_getguardsize(&a, &guard) != 0 || guard >= size)
            guard = 0;
        *lo = (uintptr_t)addr + guard;
        *hi = (uintptr_t)addr + size;
    }
    pthread_attr_destroy(&a);
}

pld_status_t pld_npu_sched_create(pld_npu_sched_t **out)
{
    *out = pld_mem_calloc(1, sizeof **out);
    if (!*out)
        return PLD_E_NOMEM;
    (*out)->owner = pthread_self();
    thread_stack(&(*out)->thread_lo, &(*out)->thread_hi);
    (*out)->cur_lo = (*out)->thread_lo;
    return PLD_OK;
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

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

/* Maps a block's stack: `bytes` (a multiple of the page size) of read-write
 * memory above one PROT_NONE guard page, so that an overflow (stacks grow
 * down) faults at once instead of writing over whatever lies below. Stacks
 * are mappings, not pld_mem allocations: the guard page needs page-granular
 * protection, and untouched stack pages cost no memory. */
static pld_status_t stack_map(block_t *bl, size_t page, size_t bytes)
{
    void *m = mmap(NULL, page + bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (m == MAP_FAILED)
        return PLD_E_NOMEM;
    if (mprotect(m, page, PROT_NONE) != 0) {
        munmap(m, page + bytes);
        return PLD_E_NOMEM;
    }
    bl->map = m;
    bl->map_size = page + bytes;
    bl->stack = (char *)m + page;
    bl->stack_size = bytes;
    return PLD_OK;
}

static void stack_unmap(block_t *bl)
{
    if (bl->map)
        munmap(bl->map, bl->map_size);
    bl->map = bl->stack = NULL;
}

pld_status_t pld_npu_run_blocks(pld_npu_sched_t *s, int n, size_t stack_bytes_in, pld_npu_block_fn fn, void *arg)
{
    /* no variable set after getcontext/swapcontext may live in a register that
     * the switch clobbers: the grid state lives in `g`, reached through a
     * volatile pointer */
    const size_t page = page_size();
    const size_t stack_bytes =
        ((stack_bytes_in ? stack_bytes_in : (size_t)PLD_NPU_STACK_DEFAULT) + page - 1) / page * page;
    if (n <= 1) {
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
    g.parent = s->active;
    g.host = s->active ? s->active->cur : -1;
    g.n = n;
    g.fn = fn;
    g.arg = arg;
    volatile pld_status_t result = PLD_OK;
    for (int b = 0; b < n; b++) {
        block_t *bl = &g.blocks[b];
        if (stack_map(bl, page, stack_bytes) != PLD_OK || getcontext(&bl->ctx) != 0) {
            result = PLD_E_NOMEM;
            break;
        }
        bl->ctx.uc_stack.ss_sp = bl->stack;
        bl->ctx.uc_stack.ss_size = stack_bytes;
        bl->ctx.uc_link = NULL;
        const uint64_t gp = (uint64_t)(uintptr_t)&g;
        makecontext(&bl->ctx, (void (*)(void))trampoline, 2, (unsigned)(gp >> 32), (unsigned)(gp & 0xffffffffu));
    }
    volatile uintptr_t saved_lo = s->cur_lo; /* the caller's stack: the thread's, or the hosting block's */
    if (result == PLD_OK) {
        s->active = &g;
        volatile int remaining = n;
        while (remaining > 0) {
            /* a round: every live block once, in index order; seeded, as many
             * picks as there are live blocks, each drawn among them */
            volatile int picks = s->seeded ? remaining : n;
            for (volatile int k = 0; k < picks && remaining > 0; k++) {
                volatile int b = k;
                if (s->seeded) {
                    int j = (int)(draw(s) % (uint64_t)remaining);
                    for (b = 0; b < n; b++)
                        if (!g.blocks[b].done && j-- == 0)
                            break;
                }
                if (g.blocks[b].done)
                    continue;
                g.cur = b;
                s->cur_lo = (uintptr_t)g.blocks[b].stack;
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
            if (remaining > 0 && g.parent) {
                /* a nested grid: a round made, let the blocks of the enclosing grid
                 * run too (what this grid waits for may come from them) */
                s->active = g.parent;
                s->cur_lo = saved_lo;
                switch_to_main(g.parent);
                s->active = &g;
            }
        }
        s->active = g.parent;
        s->cur_lo = saved_lo;
        for (int b = 0; b < n; b++)
            if (g.blocks[b].st != PLD_OK && result == PLD_OK)
                result = g.blocks[b].st;
    }
    for (int b = 0; b < n; b++)
        stack_unmap(&g.blocks[b]);
    pld_mem_free(g.blocks);
    return result;
}

int pld_npu_can_yield(const pld_npu_sched_t *s)
{
    return s->active != NULL;
}

int pld_npu_concurrent(const pld_npu_sched_t *s)
{
    for (const grid_t *g = s->active; g; g = g->parent)
        if (g->n > 1)
            return 1;
    return 0;
}

void pld_npu_yield(pld_npu_sched_t *s)
{
    if (!s->active)
        return;
    switch_to_main(s->active);
}

int pld_npu_preempt(pld_npu_sched_t *s)
{
    if (!s->seeded || !s->active || !(draw(s) >> 63))
        return 0;
    switch_to_main(s->active);
    return 1;
}

int pld_npu_cancelled(const pld_npu_sched_t *s)
{
    for (const grid_t *g = s->active; g; g = g->parent)
        if (g->cancelled)
            return 1;
    return 0;
}

void pld_npu_stack_current(const pld_npu_sched_t *s, pld_npu_stack_t *out)
{
    const grid_t *g = s->active;
    out->block = -1;
    out->lo = out->hi = 0;
    if (g) {
        const block_t *bl = &g->blocks[g->cur];
        out->block = g->cur;
        out->lo = (uintptr_t)bl->stack;
        out->hi = (uintptr_t)bl->stack + bl->stack_size;
    } else if (pthread_equal(s->owner, pthread_self())) {
        out->lo = s->thread_lo;
        out->hi = s->thread_hi;
    }
}

const uintptr_t *pld_npu_stack_lo_ref(const pld_npu_sched_t *s)
{
    return &s->cur_lo;
}

uintptr_t pld_npu_stack_lo(const pld_npu_sched_t *s)
{
    if (s->active)
        return (uintptr_t)s->active->blocks[s->active->cur].stack;
    return pthread_equal(s->owner, pthread_self()) ? s->thread_lo : 0;
}

int pld_npu_barrier(pld_npu_sched_t *s, int up, int *arrived, int *blocks)
{
    grid_t *g = s->active;
    for (int k = 0; k < up && g; k++)
        g = g->parent;
    if (!g) {
        *arrived = *blocks = 1;
        return 0;
    }
    unsigned gen = g->gen;
    if (++g->arrived == g->n) {
        g->arrived = 0;
        g->gen++;
        return 0;
    }
    for (;;) {
        /* let everything else run: the blocks of g, and (up > 0) the blocks of
         * the grids between the caller's and g */
        switch_to_main(s->active);
        if (g->gen != gen)
            return 0;
        if (pld_npu_cancelled(s))
            return 1;
        int done = 0;
        for (int b = 0; b < g->n; b++)
            done += g->blocks[b].done;
        if (g->arrived + done == g->n) {
            /* the blocks that are not here have returned: nobody else will come */
            *arrived = g->arrived;
            *blocks = g->n;
            g->arrived--;
            return 2;
        }
    }
}
