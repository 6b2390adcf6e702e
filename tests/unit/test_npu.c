/* test_npu.c - src/sim_npu/pld_npu.c: the block scheduler's coroutines, the
 * stack bounds it reports (pld_npu_stack_current / pld_npu_stack_lo) and the
 * guard page below every block stack. The guard page is tested in a fork()ed
 * child: a block that recurses without end must die of SIGSEGV at the page
 * just below its stack (a handler on an alternate signal stack checks the
 * faulting address), not write over the memory below. */
#define _GNU_SOURCE 1
#include "pld_npu.h"
#include "pld_test.h"

#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- blocks run round-robin and yield ---- */

typedef struct order {
    pld_npu_sched_t *s;
    int log[32];
    int n;
} order_t;

static pld_status_t yield_twice(void *arg, int b, int n)
{
    order_t *o = arg;
    CU_ASSERT_EQUAL(n, 3);
    for (int k = 0; k < 3; k++) {
        if (o->n < 32)
            o->log[o->n++] = b;
        if (k < 2) {
            CU_ASSERT(pld_npu_can_yield(o->s));
            pld_npu_yield(o->s);
        }
    }
    return PLD_OK;
}

static void test_npu_round_robin(void)
{
    order_t o;
    memset(&o, 0, sizeof o);
    CU_ASSERT_EQUAL_FATAL(pld_npu_sched_create(&o.s), PLD_OK);
    CU_ASSERT_EQUAL(pld_npu_run_blocks(o.s, 3, 0, yield_twice, &o), PLD_OK);
    const int want[9] = {0, 1, 2, 0, 1, 2, 0, 1, 2};
    CU_ASSERT_EQUAL(o.n, 9);
    for (int i = 0; i < 9 && i < o.n; i++)
        CU_ASSERT_EQUAL(o.log[i], want[i]);
    CU_ASSERT(!pld_npu_can_yield(o.s));
    pld_npu_sched_destroy(o.s);
}

/* ---- seeded schedules: the order comes from the seed, and only from it ---- */

typedef struct seeded {
    pld_npu_sched_t *s;
    int log[64];
    int n;
    int preempted;
} seeded_t;

/* 4 blocks, each logs itself at 4 steps; between steps a preemption point. */
static pld_status_t preempt_steps(void *arg, int b, int n)
{
    seeded_t *o = arg;
    CU_ASSERT_EQUAL(n, 4);
    for (int k = 0; k < 4; k++) {
        if (o->n < 64)
            o->log[o->n++] = b;
        o->preempted += pld_npu_preempt(o->s);
    }
    return PLD_OK;
}

static void run_seeded(int seeded, uint64_t seed, seeded_t *o)
{
    memset(o, 0, sizeof *o);
    CU_ASSERT_EQUAL_FATAL(pld_npu_sched_create(&o->s), PLD_OK);
    if (seeded)
        pld_npu_sched_seed(o->s, seed);
    CU_ASSERT_EQUAL(pld_npu_sched_seeded(o->s), seeded);
    CU_ASSERT_EQUAL(pld_npu_run_blocks(o->s, 4, 0, preempt_steps, o), PLD_OK);
    CU_ASSERT_EQUAL(o->n, 16);
    CU_ASSERT_EQUAL(pld_npu_preempt(o->s), 0); /* outside a grid: never */
    pld_npu_sched_destroy(o->s);
}

static void test_npu_seeded(void)
{
    seeded_t a, b;
    /* unseeded: preemption points do nothing, blocks run one after the other */
    run_seeded(0, 0, &a);
    CU_ASSERT_EQUAL(a.preempted, 0);
    for (int i = 0; i < 16; i++)
        CU_ASSERT_EQUAL(a.log[i], i / 4);
    /* seeded: the same seed replays the same order; some seeds start with
     * another block than 0, interleave, and preempt */
    int differs = 0, not_first = 0, interleaved = 0, preempted = 0;
    for (uint64_t seed = 0; seed < 16; seed++) {
        run_seeded(1, seed, &a);
        run_seeded(1, seed, &b);
        CU_ASSERT_EQUAL(a.preempted, b.preempted);
        CU_ASSERT(memcmp(a.log, b.log, sizeof a.log) == 0);
        int count[4] = {0, 0, 0, 0};
        for (int i = 0; i < 16; i++)
            count[a.log[i]]++;
        for (int k = 0; k < 4; k++)
            CU_ASSERT_EQUAL(count[k], 4); /* every block ran to its end */
        int in_order = 1;
        for (int i = 0; i < 16; i++)
            in_order &= a.log[i] == i / 4;
        differs += !in_order;
        not_first += a.log[0] != 0;
        for (int i = 1; i < 16; i++)
            if (a.log[i] != a.log[i - 1]) {
                int seen_again = 0;
                for (int j = i + 1; j < 16; j++)
                    seen_again |= a.log[j] == a.log[i - 1];
                interleaved += seen_again;
            }
        preempted += a.preempted > 0;
    }
    CU_ASSERT(differs >= 8);
    CU_ASSERT(not_first >= 4);
    CU_ASSERT(interleaved >= 4);
    CU_ASSERT(preempted >= 8);
}

/* ---- stack bounds ---- */

typedef struct bounds {
    pld_npu_sched_t *s;
    size_t want;
    int ok[4];
} bounds_t;

static pld_status_t check_bounds(void *arg, int b, int n)
{
    (void)n;
    bounds_t *bd = arg;
    pld_npu_stack_t st;
    pld_npu_stack_current(bd->s, &st);
    const uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    bd->ok[b] = st.block == b && st.lo != 0 && st.lo < here && here < st.hi && st.hi - st.lo == bd->want &&
                pld_npu_stack_lo(bd->s) == st.lo && st.lo % 4096 == 0;
    pld_npu_yield(bd->s); /* the bounds follow the block that runs */
    pld_npu_stack_t again;
    pld_npu_stack_current(bd->s, &again);
    bd->ok[b] = bd->ok[b] && again.lo == st.lo && again.block == b;
    return PLD_OK;
}

static void test_npu_stack_bounds(void)
{
    bounds_t bd;
    memset(&bd, 0, sizeof bd);
    CU_ASSERT_EQUAL_FATAL(pld_npu_sched_create(&bd.s), PLD_OK);
    /* outside a grid: the thread's own stack */
    pld_npu_stack_t st;
    pld_npu_stack_current(bd.s, &st);
    const uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    CU_ASSERT_EQUAL(st.block, -1);
    CU_ASSERT(st.lo != 0 && st.lo < here && here < st.hi);
    CU_ASSERT_EQUAL(pld_npu_stack_lo(bd.s), st.lo);
    /* in a grid: each block's own mapping, rounded up to whole pages */
    bd.want = 96 * 1024;
    CU_ASSERT_EQUAL(pld_npu_run_blocks(bd.s, 4, 96 * 1024 - 100, check_bounds, &bd), PLD_OK);
    for (int b = 0; b < 4; b++)
        CU_ASSERT(bd.ok[b]);
    bd.want = PLD_NPU_STACK_DEFAULT;
    memset(bd.ok, 0, sizeof bd.ok);
    CU_ASSERT_EQUAL(pld_npu_run_blocks(bd.s, 2, 0, check_bounds, &bd), PLD_OK);
    CU_ASSERT(bd.ok[0] && bd.ok[1]);
    pld_npu_sched_destroy(bd.s);
}

/* ---- the guard page (in a child process) ---- */

static volatile uintptr_t g_guard_lo, g_guard_hi; /* the page below block 0's stack */
static volatile int g_stop;                         /* never set: the recursion has no end */

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    const uintptr_t a = (uintptr_t)si->si_addr;
    _exit(a >= g_guard_lo && a < g_guard_hi ? 42 : 43);
}

/* Recurses without end, touching 1 KiB of stack per level (less than a page,
 * so the first access below the stack lands in the guard page). */
static int __attribute__((noinline)) dive(int d)
{
    volatile char pad[1024];
    if (g_stop)
        return 0;
    pad[0] = (char)d;
    pad[sizeof pad - 1] = (char)d;
    return dive(d + 1) + pad[0] + pad[sizeof pad - 1];
}

typedef struct overflow {
    pld_npu_sched_t *s;
} overflow_t;

static pld_status_t overflow_block(void *arg, int b, int n)
{
    (void)n;
    overflow_t *o = arg;
    if (b == 0) {
        pld_npu_stack_t st;
        pld_npu_stack_current(o->s, &st);
        const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
        g_guard_lo = st.lo - page;
        g_guard_hi = st.lo;
        return dive(0) == 0 ? PLD_OK : PLD_E_RUNTIME;
    }
    return PLD_OK;
}

static void test_npu_guard_page(void)
{
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        /* the handler runs on its own stack: the block's is exhausted */
        static char alt[64 * 1024];
        stack_t ss;
        memset(&ss, 0, sizeof ss);
        ss.ss_sp = alt;
        ss.ss_size = sizeof alt;
        if (sigaltstack(&ss, NULL) != 0)
            _exit(44);
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_segv;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGSEGV, &sa, NULL) != 0)
            _exit(44);
        pld_npu_sched_t *s = NULL;
        if (pld_npu_sched_create(&s) != PLD_OK)
            _exit(44);
        overflow_t o = {s};
        pld_npu_run_blocks(s, 2, 64 * 1024, overflow_block, &o);
        _exit(45); /* the recursion returned: impossible */
    }
    int status = 0;
    CU_ASSERT_EQUAL_FATAL(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 42)
        fprintf(stderr, "\nchild: %s %d (42: SIGSEGV in the guard page; 43: elsewhere)\n",
                WIFEXITED(status) ? "exit" : "signal", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 42);
}

/* ---- on-chip memory spaces: names and capacities per profile ---- */

static void test_npu_spaces(void)
{
    const pld_npu_profile_t *a5 = pld_npu_profile("a5");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a5);
    CU_ASSERT_STRING_EQUAL(pld_npu_space_name(PLD_NPU_SPACE_VEC), "Vec (UB)");
    CU_ASSERT_STRING_EQUAL(pld_npu_space_name(PLD_NPU_SPACE_ACC), "Acc (L0C)");
    CU_ASSERT_STRING_EQUAL(pld_npu_space_name(PLD_NPU_SPACE_RIGHTSCALE), "RightScale");
    CU_ASSERT_EQUAL(pld_npu_space_bytes(NULL, PLD_NPU_SPACE_VEC), 192L * 1024); /* the default: a2a3 */
    CU_ASSERT_EQUAL(pld_npu_space_bytes(a5, PLD_NPU_SPACE_VEC), 248L * 1024);
    CU_ASSERT_EQUAL(pld_npu_space_bytes(a5, PLD_NPU_SPACE_ACC), 256L * 1024);
    CU_ASSERT_EQUAL(pld_npu_space_bytes(a5, PLD_NPU_SPACE_LEFTSCALE), 4L * 1024);
    CU_ASSERT_EQUAL(pld_npu_space_bytes(NULL, PLD_NPU_SPACE_LEFTSCALE), 0); /* a2a3 has no MX scale buffers */
}

static CU_TestInfo npu_tests[] = {
    {"test_npu_round_robin", test_npu_round_robin},
    {"test_npu_seeded", test_npu_seeded},
    {"test_npu_stack_bounds", test_npu_stack_bounds},
    {"test_npu_guard_page", test_npu_guard_page},
    {"test_npu_spaces", test_npu_spaces},
    CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
    {"npu", NULL, NULL, NULL, NULL, npu_tests},
    CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv)
{
    return pld_test_main(argc, argv, suites);
}
