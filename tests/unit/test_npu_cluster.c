/* test_npu_cluster.c - src/sim_npu/pld_cluster.c: the cores of a cluster as
 * blocks of the scheduler, without the interpreter: the cross-core pipe's
 * FIFOs and ring depth (a push waits for a freed slot), split pushes and
 * joined pops between two AIV lanes, tfree without a pop, the deadlock
 * report, events with an ffts_mode=2 reduction, syncall's admission rules
 * and its barriers. docs/cluster.md is the model. */
#include "pld_cluster.h"
#include "pld_test.h"

#include <string.h>

/* A 2-D FP32 tile over vals (borrowed). */
static pld_cluster_tile_t f32_tile(float *vals, int64_t rows, int64_t cols)
{
    pld_cluster_tile_t t;
    memset(&t, 0, sizeof t);
    t.dt = PLD_DT_FP32;
    t.rank = 2;
    t.shape[0] = t.valid[0] = rows;
    t.shape[1] = t.valid[1] = cols;
    t.data = vals;
    return t;
}

static const pld_cluster_site_t *site(const char *op)
{
    static pld_cluster_site_t s[8];
    static int k;
    pld_cluster_site_t *r = &s[k++ % 8];
    memset(r, 0, sizeof *r);
    r->op = op;
    r->line = 7;
    return r;
}

typedef struct run {
    pld_npu_sched_t *s;
    pld_cluster_t *c;
    int log[64];
    int n;
    char err[1024];
    pld_status_t st[4];
    float got[4][8];
    pld_cluster_tile_t out[4];
} run_t;

static void note(run_t *r, int v)
{
    if (r->n < 64)
        r->log[r->n++] = v;
}

/* ---- FIFO order and ring depth: the third push waits for a tfree ---- */

static pld_status_t depth_core(void *arg, int b, int n)
{
    (void)n;
    run_t *r = arg;
    if (b == 0) { /* AIC: pushes 1, 2, 3 on C2V id 3 (ring depth 2) */
        for (int i = 1; i <= 3; i++) {
            float v[2] = {(float)i, (float)-i};
            pld_cluster_tile_t t = f32_tile(v, 1, 2);
            r->st[0] = pld_cluster_push(r->c, 0, 0, PLD_CLUSTER_C2V, 3, 0, &t, site("tpush_to_aiv"), r->err, sizeof r->err);
            if (r->st[0] != PLD_OK)
                break;
            note(r, 10 + i);
        }
    } else { /* AIV: pops three, frees each after the scheduler went round once */
        for (int i = 0; i < 3; i++) {
            pld_cluster_tile_t t;
            r->st[1] = pld_cluster_pop(r->c, 1, 0, PLD_CLUSTER_C2V, 3, 0, site("tpop_from_aic"), &t, r->err, sizeof r->err);
            if (r->st[1] != PLD_OK)
                break;
            note(r, 20 + (int)((float *)t.data)[0]);
            pld_cluster_tile_fini(&t);
            pld_npu_yield(r->s);
            CU_ASSERT_EQUAL(pld_cluster_free_slot(r->c, 0, PLD_CLUSTER_C2V, 3, site("tfree_to_aic"), r->err,
                                                  sizeof r->err),
                            PLD_OK);
        }
    }
    pld_cluster_core_done(r->c, b);
    return PLD_OK;
}

static void test_npu_cluster_depth(void)
{
    run_t r;
    memset(&r, 0, sizeof r);
    CU_ASSERT_EQUAL_FATAL(pld_npu_sched_create(&r.s), PLD_OK);
    CU_ASSERT_EQUAL_FATAL(pld_cluster_create(r.s, "grp", 1, &r.c), PLD_OK);
    CU_ASSERT_EQUAL(pld_cluster_add_core(r.c, 1, "cube", 0), 0);
    CU_ASSERT_EQUAL(pld_cluster_add_core(r.c, 0, "vec", 0), 1);
    pld_cluster_init_pipe(r.c, 1, 2, 3);
    CU_ASSERT_EQUAL(pld_npu_run_blocks(r.s, 2, 0, depth_core, &r), PLD_OK);
    CU_ASSERT_EQUAL(r.st[0], PLD_OK);
    CU_ASSERT_EQUAL(r.st[1], PLD_OK);
    /* pushes 1 and 2 fill the ring; 3 waits until the AIV freed tile 1 (after popping it
     * it yields first: the AIC finds the ring still full and the AIV pops tile 2) */
    const int want[6] = {11, 12, 21, 22, 13, 23};
    CU_ASSERT_EQUAL(r.n, 6);
    for (int i = 0; i < 6 && i < r.n; i++)
        CU_ASSERT_EQUAL(r.log[i], want[i]);
    pld_cluster_destroy(r.c);
    pld_npu_sched_destroy(r.s);
}

/* ---- two lanes: a row split C2V, the halves joined V2C ---- */

static pld_status_t split_core(void *arg, int b, int n)
{
    (void)n;
    run_t *r = arg;
    const int lane = pld_cluster_core_lane(r->c, b);
    if (b == 0) {
        float v[8] = {0, 1, 2, 3, 4, 5, 6, 7};
        pld_cluster_tile_t t = f32_tile(v, 4, 2);
        r->st[0] = pld_cluster_push(r->c, 0, 0, PLD_CLUSTER_C2V, 0, 1, &t, site("tpush_to_aiv"), r->err, sizeof r->err);
        r->st[3] = pld_cluster_pop(r->c, 0, 0, PLD_CLUSTER_V2C, 1, 1, site("tpop_from_aiv"), &r->out[0], r->err,
                                   sizeof r->err);
    } else {
        pld_cluster_tile_t h;
        r->st[lane + 1] = pld_cluster_pop(r->c, b, lane, PLD_CLUSTER_C2V, 0, 1, site("tpop_from_aic"), &h, r->err,
                                          sizeof r->err);
        if (r->st[lane + 1] == PLD_OK) {
            memcpy(r->got[lane], h.data, 4 * sizeof(float));
            CU_ASSERT_EQUAL(h.shape[0], 2);
            for (int i = 0; i < 4; i++)
                ((float *)h.data)[i] += 100;
            CU_ASSERT_EQUAL(pld_cluster_push(r->c, b, lane, PLD_CLUSTER_V2C, 1, 1, &h, site("tpush_to_aic"), r->err,
                                             sizeof r->err),
                            PLD_OK);
            pld_cluster_tile_fini(&h);
        }
    }
    pld_cluster_core_done(r->c, b);
    return PLD_OK;
}

static void test_npu_cluster_split(void)
{
    run_t r;
    memset(&r, 0, sizeof r);
    CU_ASSERT_EQUAL_FATAL(pld_npu_sched_create(&r.s), PLD_OK);
    CU_ASSERT_EQUAL_FATAL(pld_cluster_create(r.s, "grp", 2, &r.c), PLD_OK);
    pld_cluster_add_core(r.c, 1, "cube", 0);
    pld_cluster_add_core(r.c, 0, "vec", 0);
    pld_cluster_add_core(r.c, 0, "vec", 1);
    CU_ASSERT_EQUAL(pld_cluster_ncores(r.c), 3);
    CU_ASSERT_EQUAL(pld_cluster_nlanes(r.c), 2);
    CU_ASSERT_EQUAL(pld_npu_run_blocks(r.s, 3, 0, split_core, &r), PLD_OK);
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(r.st[i], PLD_OK);
    for (int i = 0; i < 4; i++) {
        CU_ASSERT_EQUAL(r.got[0][i], (float)i);
        CU_ASSERT_EQUAL(r.got[1][i], (float)(4 + i));
    }
    CU_ASSERT_EQUAL(r.out[0].shape[0], 4);
    CU_ASSERT_EQUAL(r.out[0].valid[0], 4);
    for (int i = 0; i < 8 && r.out[0].data; i++)
        CU_ASSERT_EQUAL(((float *)r.out[0].data)[i], (float)(100 + i));
    pld_cluster_tile_fini(&r.out[0]);
    pld_cluster_destroy(r.c);
    pld_npu_sched_destroy(r.s);
}

/* ---- tiles: an odd split, a join, the split axis ---- */

static void test_npu_cluster_tiles(void)
{
    float v[6] = {0, 1, 2, 3, 4, 5};
    pld_cluster_tile_t t = f32_tile(v, 3, 2), a, b, j;
    /* split 3 of 3 rows: lane 0 takes 2, lane 1 a 2-row tile with 1 valid row */
    CU_ASSERT_EQUAL(pld_cluster_split_axis(3, 2), 0);
    CU_ASSERT_EQUAL(pld_cluster_split_axis(4, 2), 1);
    CU_ASSERT_EQUAL(pld_cluster_split_axis(2, 1), 0);
    CU_ASSERT_EQUAL_FATAL(pld_cluster_tile_part(&t, 0, 0, 2, 2, &a), PLD_OK);
    CU_ASSERT_EQUAL_FATAL(pld_cluster_tile_part(&t, 0, 2, 1, 2, &b), PLD_OK);
    CU_ASSERT_EQUAL(a.valid[0], 2);
    CU_ASSERT_EQUAL(b.shape[0], 2);
    CU_ASSERT_EQUAL(b.valid[0], 1);
    CU_ASSERT_EQUAL(((float *)b.data)[1], 5.0f);
    CU_ASSERT_EQUAL_FATAL(pld_cluster_tile_join(&a, &b, 0, 1, &j), PLD_OK);
    CU_ASSERT_EQUAL(j.shape[0], 3);
    CU_ASSERT_EQUAL(j.valid[0], 3);
    for (int i = 0; i < 6; i++)
        CU_ASSERT_EQUAL(((float *)j.data)[i], (float)i);
    pld_cluster_tile_t i32 = a;
    i32.dt = PLD_DT_INT32;
    pld_cluster_tile_t x;
    CU_ASSERT_EQUAL(pld_cluster_tile_join(&a, &i32, 0, 0, &x), PLD_E_NOMEM); /* dtypes differ */
    CU_ASSERT_PTR_NULL(x.data);
    pld_cluster_tile_fini(&a);
    pld_cluster_tile_fini(&b);
    pld_cluster_tile_fini(&j);
}

/* ---- errors: an even split of an odd extent, tfree without a pop ---- */

static void test_npu_cluster_rules(void)
{
    pld_npu_sched_t *s;
    pld_cluster_t *c;
    char err[1024];
    CU_ASSERT_EQUAL_FATAL(pld_npu_sched_create(&s), PLD_OK);
    CU_ASSERT_EQUAL_FATAL(pld_cluster_create(s, "grp", 2, &c), PLD_OK);
    pld_cluster_add_core(c, 1, "cube", 0);
    float v[6] = {0};
    pld_cluster_tile_t t = f32_tile(v, 3, 2);
    CU_ASSERT_EQUAL(pld_cluster_push(c, 0, 0, PLD_CLUSTER_C2V, 0, 1, &t, site("pl.system.tpush_to_aiv"), err, sizeof err),
                    PLD_E_RUNTIME);
    CU_ASSERT_STRING_EQUAL(err, "pl.system.tpush_to_aiv(split=1) needs an even extent along axis 0, found 3");
    CU_ASSERT_EQUAL(pld_cluster_free_slot(c, 1, PLD_CLUSTER_C2V, 2, site("pl.system.tfree_to_aic"), err, sizeof err),
                    PLD_E_RUNTIME);
    CU_ASSERT_STRING_EQUAL(err, "pl.system.tfree_to_aic(id=2) frees a slot of pipe C2V (AIC -> AIV) id 2, but no tile "
                                "popped from it is waiting to be freed (popped 0, freed 0)");
    pld_cluster_destroy(c);
    pld_npu_sched_destroy(s);
}

/* ---- a cross-core deadlock: both cores pop, nobody pushes ---- */

static pld_status_t stuck_core(void *arg, int b, int n)
{
    (void)n;
    run_t *r = arg;
    pld_cluster_tile_t t;
    r->st[b] = pld_cluster_pop(r->c, b, 0, b == 0 ? PLD_CLUSTER_V2C : PLD_CLUSTER_C2V, 0, 0,
                               site(b == 0 ? "pl.system.tpop_from_aiv" : "pl.system.tpop_from_aic"), &t,
                               b == 0 ? r->err : r->err + 512, 512);
    pld_cluster_core_done(r->c, b);
    return r->st[b];
}

static void test_npu_cluster_deadlock(void)
{
    run_t r;
    memset(&r, 0, sizeof r);
    CU_ASSERT_EQUAL_FATAL(pld_npu_sched_create(&r.s), PLD_OK);
    CU_ASSERT_EQUAL_FATAL(pld_cluster_create(r.s, "grp", 1, &r.c), PLD_OK);
    pld_cluster_add_core(r.c, 1, "cube", 0);
    pld_cluster_add_core(r.c, 0, "vec", 0);
    CU_ASSERT_EQUAL(pld_npu_run_blocks(r.s, 2, 0, stuck_core, &r), PLD_E_RUNTIME);
    /* the second core to wait finds every core waiting and reports; the first is cancelled */
    CU_ASSERT_EQUAL(r.st[1], PLD_E_RUNTIME);
    CU_ASSERT_STRING_EQUAL(r.err + 512,
                           "cross-core deadlock in group 'grp': every core of the cluster is waiting and none can go "
                           "on (on the device this hangs until the AICore timeout):\n"
                           "    AIC cube at line 7: pl.system.tpop_from_aiv waits for a tile on V2C (AIV -> AIC) pipe "
                           "id 0: 0 queued, 0 popped and not freed (pushed 0, popped 0, freed 0; ring depth 8)\n"
                           "    AIV vec at line 7: pl.system.tpop_from_aic waits for a tile on C2V (AIC -> AIV) pipe "
                           "id 0: 0 queued, 0 popped and not freed (pushed 0, popped 0, freed 0; ring depth 8)");
    CU_ASSERT_EQUAL(r.st[0], PLD_E_RUNTIME);
    CU_ASSERT_STRING_EQUAL(r.err, ""); /* cancelled: another core reported */
    pld_cluster_destroy(r.c);
    pld_npu_sched_destroy(r.s);
}

/* ---- events: a mode-2 set from each AIV lane is one set for the AIC ---- */

static pld_status_t event_core(void *arg, int b, int n)
{
    (void)n;
    run_t *r = arg;
    const int lane = pld_cluster_core_lane(r->c, b);
    if (b == 0) {
        pld_npu_yield(r->s); /* lane 0's mode-2 set comes before the wait: it needs both lanes' */
        r->st[0] = pld_cluster_event_wait(r->c, 0, 0, 1, 5, site("sync_wait"), r->err, sizeof r->err);
        note(r, 1);
        pld_cluster_event_set(r->c, 1, 6, 0, site("sync_set"));
    } else {
        for (int k = 0; k < lane * 2; k++)
            pld_npu_yield(r->s); /* lane 1 sets later */
        note(r, 10 + lane);
        pld_cluster_event_set(r->c, 0, 5, 2, site("sync_set"));
        r->st[b] = pld_cluster_event_wait(r->c, b, lane, 0, 6, site("sync_wait"), r->err, sizeof r->err);
        note(r, 20 + lane);
    }
    pld_cluster_core_done(r->c, b);
    return PLD_OK;
}

static void test_npu_cluster_events(void)
{
    run_t r;
    memset(&r, 0, sizeof r);
    CU_ASSERT_EQUAL_FATAL(pld_npu_sched_create(&r.s), PLD_OK);
    CU_ASSERT_EQUAL_FATAL(pld_cluster_create(r.s, "grp", 2, &r.c), PLD_OK);
    pld_cluster_add_core(r.c, 1, "cube", 0);
    pld_cluster_add_core(r.c, 0, "vec", 0);
    pld_cluster_add_core(r.c, 0, "vec", 1);
    CU_ASSERT_EQUAL(pld_npu_run_blocks(r.s, 3, 0, event_core, &r), PLD_OK);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(r.st[i], PLD_OK);
    /* the AIC goes on only after both lanes set; each lane then gets the AIC's set */
    CU_ASSERT_EQUAL_FATAL(r.n, 5);
    CU_ASSERT_EQUAL(r.log[0], 10);
    CU_ASSERT_EQUAL(r.log[1], 11);
    CU_ASSERT_EQUAL(r.log[2], 1);
    pld_cluster_destroy(r.c);
    pld_npu_sched_destroy(r.s);
}

/* ---- syncall: admission and the barriers of a group's cores ---- */

static pld_status_t syncall_core(void *arg, int b, int n)
{
    (void)n;
    run_t *r = arg;
    note(r, b);
    r->st[b] = pld_cluster_syncall(r->s, r->c, b, 1, site("syncall"), r->err, sizeof r->err);
    note(r, 10 + b);
    pld_cluster_core_done(r->c, b);
    return r->st[b];
}

static void test_npu_cluster_syncall(void)
{
    char err[1024];
    const pld_npu_profile_t *a5 = pld_npu_profile("a5");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a5);
    CU_ASSERT_EQUAL(pld_cluster_syncall_check(a5, NULL, "aiv_only", 0, 0, 4, err, sizeof err), PLD_E_RUNTIME);
    CU_ASSERT_STRING_EQUAL(err, "a hard syncall(core_type='aiv_only') waits for all 36 AIV cores of platform a5, but "
                                "this launch has 4 blocks: the others never arrive (on the device: a hang, error "
                                "507018); launch 36 blocks with sync_start=True, or use mode='soft' with used_cores");
    CU_ASSERT_EQUAL(pld_cluster_syncall_check(a5, NULL, "mix", 1, 12, 4, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(pld_cluster_syncall_check(a5, NULL, "mix", 1, 0, 4, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(pld_cluster_syncall_check(a5, NULL, "mix", 1, 13, 4, err, sizeof err), PLD_E_RUNTIME);
    CU_ASSERT_STRING_EQUAL(err, "a soft syncall(core_type='mix') with used_cores=13, but the launch has 12 "
                                "participants (4 blocks x the cores of a cluster): the barrier waits for cores that "
                                "do not exist (a hang)");

    run_t r;
    memset(&r, 0, sizeof r);
    CU_ASSERT_EQUAL_FATAL(pld_npu_sched_create(&r.s), PLD_OK);
    CU_ASSERT_EQUAL_FATAL(pld_cluster_create(r.s, "grp", 2, &r.c), PLD_OK);
    pld_cluster_add_core(r.c, 1, "cube", 0);
    pld_cluster_add_core(r.c, 0, "vec", 0);
    pld_cluster_add_core(r.c, 0, "vec", 1);
    CU_ASSERT_EQUAL(pld_cluster_syncall_check(a5, r.c, "mix", 1, 3, 1, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(pld_npu_run_blocks(r.s, 3, 0, syncall_core, &r), PLD_OK);
    /* every core arrives before any goes on */
    CU_ASSERT_EQUAL_FATAL(r.n, 6);
    for (int i = 0; i < 3; i++)
        CU_ASSERT(r.log[i] < 10);
    for (int i = 3; i < 6; i++)
        CU_ASSERT(r.log[i] >= 10);
    pld_cluster_destroy(r.c);
    pld_npu_sched_destroy(r.s);
}

static CU_TestInfo npu_cluster_tests[] = {
    {"test_npu_cluster_depth", test_npu_cluster_depth},
    {"test_npu_cluster_split", test_npu_cluster_split},
    {"test_npu_cluster_tiles", test_npu_cluster_tiles},
    {"test_npu_cluster_rules", test_npu_cluster_rules},
    {"test_npu_cluster_deadlock", test_npu_cluster_deadlock},
    {"test_npu_cluster_events", test_npu_cluster_events},
    {"test_npu_cluster_syncall", test_npu_cluster_syncall},
    CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
    {"npu_cluster", NULL, NULL, NULL, NULL, npu_cluster_tests},
    CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv)
{
    return pld_test_main(argc, argv, suites);
}
