/* test_hw_abi.c - src/hw_backend/pld_hw_abi.c: the kernel ABI builder
 * against byte images written by hand from the layout tables of
 * docs/hw_backend.md §2.3-2.4 (ChipTensor 128 bytes, LocalContext 48,
 * GlobalContext 24; args[] tensors first, then scalars, 48 and 49 the
 * contexts), and its refusals (too many arguments, rank > 5, zero, negative
 * and broadcast strides, a dtype without a code). */
#include "pld_hw.h"
#include "pld_test.h"

#include <stdio.h>
#include <string.h>

/* little-endian helpers to write the expected images */
static void put(uint8_t *b, int off, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        b[off + i] = (uint8_t)(v >> (8 * i));
}

static void expect_bytes(const void *got, const uint8_t *want, size_t n, const char *what)
{
    const uint8_t *g = got;
    for (size_t i = 0; i < n; i++)
        if (g[i] != want[i]) {
            fprintf(stderr, "\n%s: byte %zu is 0x%02x, expected 0x%02x\n", what, i, g[i], want[i]);
            CU_FAIL("byte image differs");
            return;
        }
    CU_PASS("image equal");
}

static pld_hw_tensor_t tensor(uintptr_t addr, pld_dtype_t dt, int rank, const int64_t *shape, const int64_t *strides)
{
    pld_hw_tensor_t t;
    memset(&t, 0, sizeof t);
    t.data = (void *)addr;
    t.dt = dt;
    t.rank = rank;
    for (int d = 0; d < rank; d++) {
        t.shape[d] = shape[d];
        t.strides[d] = strides[d];
    }
    return t;
}

static void test_abi_tensor_packed(void)
{
    /* [2, 3] FP16, row-major, data at 0x10000 */
    const int64_t sh[] = {2, 3}, st[] = {3, 1};
    pld_hw_tensor_t t = tensor(0x10000, PLD_DT_FP16, 2, sh, st);
    pld_abi_tensor_t c;
    char err[256];
    CU_ASSERT_EQUAL_FATAL(pld_abi_tensor(&c, &t, err, sizeof err), PLD_OK);
    uint8_t want[128] = {0};
    put(want, 0, 0x10000, 8);           /* buffer.addr */
    put(want, 8, 12, 8);                /* buffer.size: 6 FP16 */
    put(want, 16, UINT64_MAX, 8);       /* owner_task_id: external */
    put(want, 24, 0, 8);                /* start_offset */
    put(want, 32, 0, 4);                /* version */
    put(want, 36, 2, 4);                /* ndims */
    want[40] = 1;                       /* FLOAT16 */
    want[42] = 1;                       /* is_contiguous */
    put(want, 44, 2, 4);                /* shapes */
    put(want, 48, 3, 4);
    put(want, 64, 6, 8);                /* extent_elem_cache */
    put(want, 72, 3, 4);                /* strides */
    put(want, 76, 1, 4);
    expect_bytes(&c, want, sizeof want, "[2, 3] FP16 ChipTensor");
}

static void test_abi_tensor_strided(void)
{
    /* a [2, 2] FP32 window of a [*, 4] tensor at 0x2000: extent 1 + 1*4 + 1*1 = 6 */
    const int64_t sh[] = {2, 2}, st[] = {4, 1};
    pld_hw_tensor_t t = tensor(0x2000, PLD_DT_FP32, 2, sh, st);
    pld_abi_tensor_t c;
    char err[256];
    CU_ASSERT_EQUAL_FATAL(pld_abi_tensor(&c, &t, err, sizeof err), PLD_OK);
    uint8_t want[128] = {0};
    put(want, 0, 0x2000, 8);
    put(want, 8, 24, 8);
    put(want, 16, UINT64_MAX, 8);
    put(want, 36, 2, 4);
    want[40] = 0;                       /* FLOAT32 */
    want[42] = 0;                       /* not contiguous */
    put(want, 44, 2, 4);
    put(want, 48, 2, 4);
    put(want, 64, 6, 8);
    put(want, 72, 4, 4);
    put(want, 76, 1, 4);
    expect_bytes(&c, want, sizeof want, "strided [2, 2] FP32 ChipTensor");
    /* a 0-d INT32: one element, ndims 1 */
    pld_hw_tensor_t z = tensor(0x40, PLD_DT_INT32, 0, NULL, NULL);
    CU_ASSERT_EQUAL_FATAL(pld_abi_tensor(&c, &z, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(c.ndims, 1);
    CU_ASSERT_EQUAL(c.shapes[0], 1);
    CU_ASSERT_EQUAL(c.strides[0], 1);
    CU_ASSERT_EQUAL(c.dtype, 2);
    CU_ASSERT_EQUAL(c.size, 4);
}

static void test_abi_tensor_refused(void)
{
    char err[256];
    pld_abi_tensor_t c;
    const int64_t sh6[] = {1, 1, 1, 1, 1, 2}, st6[] = {2, 2, 2, 2, 2, 1};
    pld_hw_tensor_t t6 = tensor(0x100, PLD_DT_FP32, 6, sh6, st6);
    CU_ASSERT_EQUAL(pld_abi_tensor(&c, &t6, err, sizeof err), PLD_E_HW);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "at most 5 dims"));
    const int64_t sh[] = {4, 8}, bcast[] = {0, 1}, rev[] = {8, -1};
    pld_hw_tensor_t tb = tensor(0x100, PLD_DT_FP32, 2, sh, bcast);
    CU_ASSERT_EQUAL(pld_abi_tensor(&c, &tb, err, sizeof err), PLD_E_HW);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "dim 0"));
    pld_hw_tensor_t tr = tensor(0x100, PLD_DT_FP32, 2, sh, rev);
    CU_ASSERT_EQUAL(pld_abi_tensor(&c, &tr, err, sizeof err), PLD_E_HW);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "stride -1"));
    const int64_t st[] = {8, 1};
    pld_hw_tensor_t tf = tensor(0x100, PLD_DT_FP64, 2, sh, st);
    CU_ASSERT_EQUAL(pld_abi_tensor(&c, &tf, err, sizeof err), PLD_E_HW);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "no dtype code"));
}

static pld_hw_arg_t scalar(pld_dtype_t dt, double f, int64_t i, int is_float)
{
    pld_hw_arg_t a;
    memset(&a, 0, sizeof a);
    a.dt = dt;
    if (is_float)
        memcpy(&a.bits, &f, sizeof f);
    else
        a.bits = (uint64_t)i;
    return a;
}

static void test_abi_frame(void)
{
    const int64_t sh[] = {4}, st[] = {1};
    pld_hw_arg_t args[6];
    args[0].is_tensor = 1;
    args[0].tensor = tensor(0x1000, PLD_DT_FP32, 1, sh, st);
    args[1] = scalar(PLD_DT_FP32, 1.5, 0, 1);
    args[2].is_tensor = 1;
    args[2].tensor = tensor(0x2000, PLD_DT_INT8, 1, sh, st);
    args[3] = scalar(PLD_DT_INT32, 0, -2, 0);
    args[4] = scalar(PLD_DT_FP16, 0.5, 0, 1);
    args[5] = scalar(PLD_DT_FP64, -2.0, 0, 1);
    pld_hw_launch_t l;
    memset(&l, 0, sizeof l);
    l.kernel = "k";
    l.nargs = 6;
    l.args = args;
    l.block_num = 4;
    static pld_abi_frame_t fr;
    char err[256];
    CU_ASSERT_EQUAL_FATAL(pld_abi_build(&fr, &l, 3, 1, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(fr.ntensors, 2);
    CU_ASSERT_EQUAL(fr.nscalars, 4);
    /* tensors first, in order, as descriptor addresses */
    CU_ASSERT_EQUAL((uintptr_t)fr.args[0], (uintptr_t)&fr.tensors[0]);
    CU_ASSERT_EQUAL((uintptr_t)fr.args[1], (uintptr_t)&fr.tensors[1]);
    CU_ASSERT_EQUAL(fr.tensors[1].addr, 0x2000);
    CU_ASSERT_EQUAL(fr.tensors[1].dtype, 4); /* INT8 */
    /* then the scalars: FP32 bits low, INT32 sign-extended, FP16 bits, FP64 whole */
    CU_ASSERT_EQUAL((uint64_t)fr.args[2], 0x3fc00000u);
    CU_ASSERT_EQUAL((uint64_t)fr.args[3], 0xfffffffffffffffeull);
    CU_ASSERT_EQUAL((uint64_t)fr.args[4], 0x3800u);
    CU_ASSERT_EQUAL((uint64_t)fr.args[5], 0xc000000000000000ull);
    for (int i = 6; i < PLD_ABI_LOCAL_SLOT; i++)
        CU_ASSERT_EQUAL(fr.args[i], 0);
    CU_ASSERT_EQUAL((uintptr_t)fr.args[48], (uintptr_t)&fr.local);
    CU_ASSERT_EQUAL((uintptr_t)fr.args[49], (uintptr_t)&fr.global);
    uint8_t local[48] = {0}, global[24] = {0};
    put(local, 0, 3, 4);                /* block_idx */
    put(local, 4, 4, 4);                /* block_num */
    put(local, 40, UINT64_MAX, 8);      /* task_token: invalid (no deferred completion) */
    expect_bytes(&fr.local, local, sizeof local, "LocalContext");
    put(global, 0, 1, 4);               /* sub_block_id */
    expect_bytes(&fr.global, global, sizeof global, "GlobalContext");
}

static void test_abi_too_many(void)
{
    static pld_hw_arg_t args[40];
    static pld_abi_frame_t fr;
    const int64_t sh[] = {4}, st[] = {1};
    char err[256];
    pld_hw_launch_t l;
    memset(&l, 0, sizeof l);
    l.kernel = "wide";
    l.args = args;
    for (int i = 0; i < 33; i++) {
        args[i].is_tensor = 1;
        args[i].tensor = tensor(0x1000, PLD_DT_FP32, 1, sh, st);
    }
    l.nargs = 33;
    CU_ASSERT_EQUAL(pld_abi_build(&fr, &l, 0, 0, err, sizeof err), PLD_E_HW);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "kernel wide has 33 tensor and 0 scalar arguments"));
    for (int i = 0; i < 17; i++)
        args[i] = scalar(PLD_DT_INT32, 0, i, 0);
    l.nargs = 17;
    CU_ASSERT_EQUAL(pld_abi_build(&fr, &l, 0, 0, err, sizeof err), PLD_E_HW);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "0 tensor and 17 scalar"));
    l.nargs = 16; /* exactly the limit */
    CU_ASSERT_EQUAL(pld_abi_build(&fr, &l, 0, 0, err, sizeof err), PLD_OK);
    CU_ASSERT_EQUAL(fr.args[15], 15);
    /* a refused tensor names its argument */
    const int64_t z[] = {0};
    args[2].is_tensor = 1;
    args[2].tensor = tensor(0x1000, PLD_DT_FP32, 1, z, st);
    l.nargs = 3;
    CU_ASSERT_EQUAL(pld_abi_build(&fr, &l, 0, 0, err, sizeof err), PLD_E_HW);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "argument 3 of kernel wide"));
}

static CU_TestInfo abi_tests[] = {
    {"test_abi_tensor_packed", test_abi_tensor_packed},
    {"test_abi_tensor_strided", test_abi_tensor_strided},
    {"test_abi_tensor_refused", test_abi_tensor_refused},
    {"test_abi_frame", test_abi_frame},
    {"test_abi_too_many", test_abi_too_many},
    CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
    {"hw_abi", NULL, NULL, NULL, NULL, abi_tests},
    CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv)
{
    return pld_test_main(argc, argv, suites);
}
