/* test_acl_fake.c - the fake ACL runtime on its own (CTest ascend_fake): no
 * plugin, no MPI. Every case runs in a forked process of its own (the fake
 * reads its environment once per process); the IPC case forks once more, a
 * child exporting a window the parent imports and reads.
 *
 * usage: test_acl_fake KERNEL_DIR [CASE...]   (KERNEL_DIR holds spmd_rows.elf,
 * hang.elf, fault.elf; no CASE: all) */
#define _DEFAULT_SOURCE
#include "acl_fake.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pld_backend.h"

static const char *kernel_dir;
static char log_path[512];

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "%s:%d: check failed: %s (recent error: %s)\n", __FILE__, __LINE__, #cond,                 \
                    aclGetRecentErrMsg());                                                                             \
            return 1;                                                                                                  \
        }                                                                                                              \
    } while (0)
#define OK(call) CHECK((call) == 0)

static int has(const char *hay, const char *needle)
{
    return hay && strstr(hay, needle) != NULL;
}

/* the whole of file path, NUL-terminated (NULL: unreadable) */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b) {
        b[n] = '\0';
        *len = (size_t)n;
    }
    return b;
}

static int setup(int dev)
{
    OK(aclInit(NULL));
    OK(aclrtSetDevice(dev));
    return 0;
}

/* ---------------------------------------------------------------- cases */

static int case_state(void)
{
    void *p = NULL;
    CHECK(aclrtMalloc(&p, 64, 0) == E_UNINIT);
    CHECK(has(aclGetRecentErrMsg(), "aclInit"));
    OK(aclInit(NULL));
    CHECK(aclInit(NULL) == E_REPEAT_INIT);
    CHECK(aclrtMalloc(&p, 64, 0) == E_NO_CONTEXT);
    CHECK(has(aclGetRecentErrMsg(), "aclrtSetDevice"));
    aclrtStream s;
    CHECK(aclrtCreateStream(&s) == E_NO_CONTEXT);
    uint32_t n = 0;
    OK(aclrtGetDeviceCount(&n));
    CHECK(n == 3); /* ACL_FAKE_DEVICES=3 */
    CHECK(aclrtSetDevice(3) == E_DEVICE_ID);
    OK(aclrtSetDevice(2));
    int32_t d = -1;
    OK(aclrtGetDevice(&d));
    CHECK(d == 2);
    int64_t cores = 0;
    OK(aclrtGetDeviceInfo(0, DEV_ATTR_AIV_CORES, &cores));
    CHECK(cores == 48);
    CHECK(aclrtGetDeviceInfo(0, 1, &cores) != 0);
    OK(aclrtMalloc(&p, 64, 0));
    OK(aclrtFree(p));
    OK(aclrtResetDevice(2));
    OK(aclFinalize());
    CHECK(aclrtGetDeviceCount(&n) == E_UNINIT);
    CHECK(has(aclGetRecentErrMsg(), "aclFinalize"));
    CHECK(aclFinalize() == E_UNINIT);
    return 0;
}

static int case_memory(void)
{
    if (setup(0))
        return 1;
    unsigned char *a = NULL, *b = NULL, host[256], back[256];
    for (int i = 0; i < 256; i++)
        host[i] = (unsigned char)i;
    OK(aclrtMalloc((void **)&a, 100, 0));
    OK(aclrtMalloc((void **)&b, 100, 0));
    CHECK(((uintptr_t)a & 63) == 0);
    OK(aclrtMemcpy(a, 100, host, 100, KIND_H2D));
    CHECK(aclrtMemcpy(a, 100, host, 101, KIND_H2D) == E_PARAM);     /* count > destMax */
    CHECK(has(aclGetRecentErrMsg(), "destMax"));
    CHECK(aclrtMemcpy(a, 200, host, 101, KIND_H2D) == E_PARAM);     /* past the allocation */
    CHECK(has(aclGetRecentErrMsg(), "not inside"));
    CHECK(aclrtMemcpy(a + 50, 50, host, 50, KIND_H2D) == 0);        /* an inner range */
    CHECK(aclrtMemcpy(back, 100, host, 100, KIND_H2D) == E_PARAM);  /* a host pointer as the device side */
    CHECK(aclrtMemcpy(a, 100, b, 100, KIND_H2D) == E_PARAM);        /* a device pointer as the host side */
    CHECK(aclrtMemcpy(a, 100, host, 100, 7) == E_PARAM);
    OK(aclrtMemcpy(b, 100, a, 100, KIND_D2D));
    OK(aclrtMemcpy(back, 256, b, 100, KIND_D2H));
    CHECK(memcmp(back, host, 50) == 0 && memcmp(back + 50, host, 50) == 0);
    OK(aclrtMemset(b, 100, 7, 100));
    CHECK(aclrtMemset(b, 100, 7, 101) == E_PARAM);
    CHECK(aclrtMemset(b + 1, 100, 7, 100) == E_PARAM);
    OK(aclrtMemcpy(back, 256, b, 100, KIND_D2H));
    CHECK(back[0] == 7 && back[99] == 7);
    a[100] = 0; /* the canary after 100 bytes */
    CHECK(aclrtFree(a) == E_FREE);
    CHECK(has(aclGetRecentErrMsg(), "canary"));
    CHECK(aclrtFree(a) == E_FREE); /* gone */
    CHECK(aclrtFree(host) == E_FREE);
    OK(aclrtFree(b));
    OK(aclFinalize());
    return 0;
}

static int case_inject(void)
{
    if (setup(0))
        return 1;
    void *p[3];
    OK(aclrtMalloc(&p[0], 64, 0));
    CHECK(aclrtMalloc(&p[1], 64, 0) == E_PARAM); /* ACL_FAKE_FAIL=aclrtMalloc:2,aclrtFree:1 */
    CHECK(strcmp(aclGetRecentErrMsg(), "fake ACL: injected failure of aclrtMalloc (call 2)") == 0);
    OK(aclrtMalloc(&p[2], 64, 0));
    CHECK(aclrtFree(p[0]) == E_PARAM);
    CHECK(has(aclGetRecentErrMsg(), "aclrtFree (call 1)"));
    OK(aclrtFree(p[0]));
    OK(aclrtFree(p[2]));
    OK(aclFinalize());
    return 0;
}

/* A window: physical memory of `size` on the current device, reserved, mapped
 * and made accessible. */
static int window(size_t size, aclrtDrvMemHandle *h, void **va, int32_t dev)
{
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    prop.memAttr = MEM_NORMAL;
    prop.location.type = LOC_DEVICE;
    prop.location.id = (uint32_t)dev;
    size_t gran = 0;
    OK(aclrtMemGetAllocationGranularity(&prop, 0, &gran));
    CHECK(gran == 65536); /* ACL_FAKE_GRANULARITY */
    CHECK(aclrtMallocPhysical(h, size + 1, &prop, 0) == E_PARAM);
    OK(aclrtMallocPhysical(h, size, &prop, 0));
    OK(aclrtReserveMemAddress(va, size, 0, NULL, 0));
    OK(aclrtMapMem(*va, size, 0, *h, 0));
    aclrtMemAccessDesc acc;
    memset(&acc, 0, sizeof acc);
    acc.flags = ACCESS_RW;
    acc.location.type = LOC_DEVICE;
    acc.location.id = (uint32_t)dev;
    OK(aclrtMemSetAccess(*va, size, &acc, 1));
    return 0;
}

static int map_import(aclrtDrvMemHandle h, size_t size, void **va, int32_t dev, int check_access)
{
    OK(aclrtReserveMemAddress(va, size, 0, NULL, 0));
    OK(aclrtMapMem(*va, size, 0, h, 0));
    unsigned char x;
    if (check_access)
        CHECK(aclrtMemcpy(&x, 1, *va, 1, KIND_D2H) == E_PARAM); /* no access set yet */
    aclrtMemAccessDesc acc;
    memset(&acc, 0, sizeof acc);
    acc.flags = ACCESS_RW;
    acc.location.type = LOC_DEVICE;
    acc.location.id = (uint32_t)dev;
    OK(aclrtMemSetAccess(*va, size, &acc, 1));
    return 0;
}

struct exported {
    uint64_t open, pid_checked, whitelisted;
    unsigned char fabric[FABRIC_BYTES];
};

#define WIN (65536 * 2)

static int ipc_child(int to_parent, int from_parent)
{
    if (setup(1))
        return 1;
    aclrtDrvMemHandle h;
    void *va;
    if (window(WIN, &h, &va, 1))
        return 1;
    unsigned char pat[WIN];
    for (size_t i = 0; i < WIN; i++)
        pat[i] = (unsigned char)(i * 7 + 3);
    OK(aclrtMemcpy(va, WIN, pat, WIN, KIND_H2D));
    struct exported e;
    OK(aclrtMemExportToShareableHandle(h, 0, NO_PID_CHECK, &e.open));
    OK(aclrtMemExportToShareableHandle(h, 0, 0, &e.pid_checked));
    /* a second allocation, shared through the PID whitelist */
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    prop.memAttr = MEM_NORMAL;
    prop.location.type = LOC_DEVICE;
    prop.location.id = 1;
    aclrtDrvMemHandle h2;
    OK(aclrtMallocPhysical(&h2, WIN, &prop, 0));
    OK(aclrtMemExportToShareableHandle(h2, 0, 0, &e.whitelisted));
    int32_t parent = (int32_t)getppid();
    OK(aclrtMemSetPidToShareableHandle(e.whitelisted, &parent, 1));
    OK(aclrtMemExportToShareableHandleV2(h, NO_PID_CHECK, SHARE_FABRIC, e.fabric));
    CHECK(write(to_parent, &e, sizeof e) == (ssize_t)sizeof e);
    char done;
    CHECK(read(from_parent, &done, 1) == 1); /* the parent has read the window */
    CHECK(aclrtFreePhysical(h) == E_FREE);   /* still mapped */
    OK(aclrtUnmapMem(va));
    OK(aclrtReleaseMemAddress(va));
    OK(aclrtFreePhysical(h));
    OK(aclrtFreePhysical(h2));
    OK(aclrtResetDevice(1));
    OK(aclFinalize());
    return 0;
}

static int check_pattern(void *va)
{
    static unsigned char got[WIN];
    OK(aclrtMemcpy(got, WIN, va, WIN, KIND_D2H));
    for (size_t i = 0; i < WIN; i++)
        CHECK(got[i] == (unsigned char)(i * 7 + 3));
    return 0;
}

static int case_ipc(void)
{
    int up[2], down[2];
    if (pipe(up) || pipe(down))
        return 1;
    pid_t pid = fork();
    if (pid == 0)
        _exit(ipc_child(up[1], down[0]));
    struct exported e;
    int rc = 1;
    if (read(up[0], &e, sizeof e) != (ssize_t)sizeof e) {
        fprintf(stderr, "ipc: the child exported nothing\n");
    } else {
        rc = 0;
        if (setup(0))
            rc = 1;
        aclrtDrvMemHandle hf = NULL, hl = NULL;
        void *vf = NULL, *vl = NULL;
        /* fabric: no peer access needed */
        if (!rc && (aclrtMemImportFromShareableHandleV2(e.fabric, SHARE_FABRIC, 0, &hf) != 0 ||
                    map_import(hf, WIN, &vf, 0, 1) || check_pattern(vf)))
            rc = 1;
        /* legacy: peer access first, and the pid rule */
        int32_t st = -1;
        if (!rc && (aclrtMemImportFromShareableHandle(e.open, 0, &hl) != E_IPC ||
                    !has(aclGetRecentErrMsg(), "peer access to device 1 not enabled")))
            rc = 1, fprintf(stderr, "ipc: import without peer access: %s\n", aclGetRecentErrMsg());
        /* one process per device: the status stays 0 after a successful
         * enable, and a second enable answers a non-success */
        if (!rc && (aclrtDevicePeerAccessStatus(0, 1, &st) != 0 || st != 0 || aclrtDeviceEnablePeerAccess(1, 0) != 0 ||
                    aclrtDevicePeerAccessStatus(0, 1, &st) != 0 || st != 0 || aclrtDeviceEnablePeerAccess(1, 0) == 0))
            rc = 1, fprintf(stderr, "ipc: peer access status\n");
        if (!rc && (aclrtMemImportFromShareableHandle(e.pid_checked, 0, &hl) != E_IPC ||
                    !has(aclGetRecentErrMsg(), "DISABLE_PID_VALIDATION")))
            rc = 1, fprintf(stderr, "ipc: pid validation: %s\n", aclGetRecentErrMsg());
        aclrtDrvMemHandle hw = NULL;
        if (!rc && (aclrtMemImportFromShareableHandle(e.whitelisted, 0, &hw) != 0 || aclrtFreePhysical(hw) != 0))
            rc = 1, fprintf(stderr, "ipc: whitelisted import: %s\n", aclGetRecentErrMsg());
        if (!rc && (aclrtMemImportFromShareableHandle(e.open, 0, &hl) != 0 || map_import(hl, WIN, &vl, 0, 0) ||
                    check_pattern(vl)))
            rc = 1, fprintf(stderr, "ipc: legacy import: %s\n", aclGetRecentErrMsg());
        /* teardown order: unmap before release / free */
        if (!rc && (aclrtReleaseMemAddress(vl) == 0 || aclrtFreePhysical(hl) == 0))
            rc = 1, fprintf(stderr, "ipc: release / free of a mapped range succeeded\n");
        if (!rc && (aclrtUnmapMem(vl) || aclrtFreePhysical(hl) || aclrtReleaseMemAddress(vl) || aclrtUnmapMem(vf) ||
                    aclrtReleaseMemAddress(vf) || aclrtFreePhysical(hf) || aclFinalize()))
            rc = 1, fprintf(stderr, "ipc: teardown: %s\n", aclGetRecentErrMsg());
    }
    char done = 1;
    if (write(down[1], &done, 1) != 1)
        rc = 1;
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "ipc: the exporting child failed\n");
        rc = 1;
    }
    return rc;
}

static int case_no_fabric(void)
{
    if (setup(0))
        return 1;
    aclrtDrvMemHandle h;
    void *va;
    if (window(65536, &h, &va, 0))
        return 1;
    unsigned char fh[FABRIC_BYTES];
    CHECK(aclrtMemExportToShareableHandleV2(h, NO_PID_CHECK, SHARE_FABRIC, fh) == E_NOT_SUPPORTED);
    uint64_t u = 0;
    OK(aclrtMemExportToShareableHandle(h, 0, NO_PID_CHECK, &u));
    OK(aclrtUnmapMem(va));
    OK(aclrtFreePhysical(h)); /* free before release: accepted */
    OK(aclrtReleaseMemAddress(va));
    OK(aclFinalize());
    return 0;
}

/* ---- kernels ---- */

typedef struct kernel {
    aclrtBinHandle bin;
    aclrtFuncHandle fn;
} kernel_t;

static int load(const char *name, kernel_t *k)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s.elf", kernel_dir, name);
    size_t len = 0;
    char *data = slurp(path, &len);
    CHECK(data != NULL);
    aclrtBinaryLoadOption opt;
    memset(&opt, 0, sizeof opt);
    opt.type = OPT_MAGIC;
    opt.value.magic = MAGIC_VECTOR_CORE;
    aclrtBinaryLoadOptions opts = {&opt, 1};
    aclError rc = aclrtBinaryLoadFromData(data, len, &opts, &k->bin);
    free(data);
    OK(rc);
    /* registered without the _mix_aiv suffix of its symbol (program.cc:1542) */
    OK(aclrtBinaryGetFunction(k->bin, "pld_entry_0", &k->fn));
    return 0;
}

static int launch(const kernel_t *k, uint32_t nblocks, aclrtStream s, uint64_t payloads, uint64_t stride)
{
    aclrtLaunchKernelAttr attr;
    memset(&attr, 0, sizeof attr);
    attr.id = ATTR_SCHEM_MODE;
    attr.value.schemMode = 1;
    aclrtLaunchKernelCfg cfg = {&attr, 1};
    uint64_t host[2] = {payloads, stride};
    return aclrtLaunchKernelWithHostArgs(k->fn, nblocks, s, &cfg, host, sizeof host, NULL, 0);
}

/* One launch's payloads (hw_backend.md layout): `n` blocks of stride bytes,
 * T tensors each. Fills args/contexts/ChipTensors of every block in host
 * memory, relative to device base `dev`. */
static void payload_fill(unsigned char *h, uint64_t dev, uint64_t stride, uint32_t n, int T,
                         const pld_abi_tensor_t *tensors, const int64_t *scalars, int S)
{
    memset(h, 0, stride * n);
    for (uint32_t b = 0; b < n; b++) {
        unsigned char *p = h + b * stride;
        const uint64_t pd = dev + b * stride;
        int64_t args[PLD_ABI_ARGS] = {0};
        for (int i = 0; i < T; i++) {
            args[i] = (int64_t)(pd + 512 + 128 * (uint64_t)i);
            memcpy(p + 512 + 128 * i, &tensors[i], 128);
        }
        for (int i = 0; i < S; i++)
            args[T + i] = scalars[i];
        args[PLD_ABI_LOCAL_SLOT] = (int64_t)(pd + 400);
        args[PLD_ABI_GLOBAL_SLOT] = (int64_t)(pd + 448);
        memcpy(p, args, sizeof args);
        pld_abi_local_t lc = {.block_idx = (int32_t)b, .block_num = (int32_t)n, .task_token = UINT64_MAX};
        memcpy(p + 400, &lc, sizeof lc);
    }
}

static pld_abi_tensor_t tensor2(void *addr, uint32_t rows, uint32_t cols, uint8_t dtype, size_t esize)
{
    pld_abi_tensor_t t;
    memset(&t, 0, sizeof t);
    t.addr = (uint64_t)(uintptr_t)addr;
    t.size = rows * cols * esize;
    t.owner_task_id = UINT64_MAX;
    t.ndims = 2;
    t.dtype = dtype;
    t.is_contiguous = 1;
    t.address_space = 1;
    t.shapes[0] = rows;
    t.shapes[1] = cols;
    t.strides[0] = cols;
    t.strides[1] = 1;
    t.extent_elem = (uint64_t)rows * cols;
    return t;
}

static int case_launch(void)
{
    if (setup(0))
        return 1;
    kernel_t k;
    if (load("spmd_rows", &k))
        return 1;
    aclrtFuncHandle none;
    CHECK(aclrtBinaryGetFunction(k.bin, "no_such_entry", &none) == E_KERNEL_LOOKUP);
    CHECK(has(aclGetRecentErrMsg(), "no_such_entry"));
    /* the symbol's own name is not registered: an exact lookup of the stripped name */
    CHECK(aclrtBinaryGetFunction(k.bin, "pld_entry_0_mix_aiv", &none) == E_KERNEL_LOOKUP);
    CHECK(has(aclGetRecentErrMsg(), "without their _mix_aic / _mix_aiv suffix: 'pld_entry_0'"));
    aclrtStream s;
    OK(aclrtCreateStream(&s));
    float x[4 * 16], z[4 * 16];
    for (int i = 0; i < 64; i++)
        x[i] = (float)i;
    void *dx, *dz, *dp;
    OK(aclrtMalloc(&dx, sizeof x, 0));
    OK(aclrtMalloc(&dz, sizeof z, 0));
    OK(aclrtMemcpy(dx, sizeof x, x, sizeof x, KIND_H2D));
    const uint64_t stride = 512 + 128 * 2;
    OK(aclrtMalloc(&dp, stride * 4, 0));
    pld_abi_tensor_t t[2] = {tensor2(dx, 4, 16, 0, 4), tensor2(dz, 4, 16, 0, 4)};
    const float kf = 2.0f;
    uint32_t kb;
    memcpy(&kb, &kf, 4);
    const int64_t sc[2] = {(int64_t)kb, 7};
    static unsigned char host[4 * 768];
    payload_fill(host, (uint64_t)(uintptr_t)dp, stride, 4, 2, t, sc, 2);
    OK(aclrtMemcpy(dp, stride * 4, host, stride * 4, KIND_H2D));
    const uint64_t pd = (uint64_t)(uintptr_t)dp;
    CHECK(launch(&k, 49, s, pd, stride) == E_PARAM); /* more blocks than AIV cores */
    CHECK(has(aclGetRecentErrMsg(), "1..48"));
    CHECK(launch(&k, 0, s, pd, stride) == E_PARAM);
    uint64_t three[3] = {pd, stride, 0};
    CHECK(aclrtLaunchKernelWithHostArgs(k.fn, 4, s, NULL, three, 12, NULL, 0) == E_PARAM);
    OK(launch(&k, 4, s, pd, stride));
    OK(aclrtSynchronizeStreamWithTimeout(s, 5000));
    OK(aclrtMemcpy(z, sizeof z, dz, sizeof z, KIND_D2H));
    for (int b = 0; b < 4; b++)
        for (int j = 0; j < 16; j++)
            CHECK(z[b * 16 + j] == 2.0f * x[b * 16 + j] + (float)b + 7.0f);
    /* two queued launches, one sync */
    OK(aclrtMemset(dz, sizeof z, 0, sizeof z));
    OK(launch(&k, 4, s, pd, stride));
    OK(launch(&k, 4, s, pd, stride));
    OK(aclrtSynchronizeStreamWithTimeout(s, -1));
    OK(aclrtMemcpy(z, sizeof z, dz, sizeof z, KIND_D2H));
    CHECK(z[63] == 2.0f * 63 + 3 + 7);
    OK(aclrtFree(dp));
    OK(aclrtFree(dx));
    OK(aclrtFree(dz));
    OK(aclrtDestroyStream(s));
    OK(aclrtBinaryUnLoad(k.bin));
    CHECK(aclrtBinaryUnLoad(k.bin) == E_HANDLE);
    OK(aclrtResetDevice(0));
    OK(aclFinalize());
    return 0;
}

static int case_load_errors(void)
{
    if (setup(0))
        return 1;
    char path[600];
    snprintf(path, sizeof path, "%s/fault.elf", kernel_dir);
    size_t len = 0;
    char *data = slurp(path, &len);
    CHECK(data != NULL);
    aclrtBinaryLoadOption opt;
    memset(&opt, 0, sizeof opt);
    opt.type = OPT_MAGIC;
    opt.value.magic = 0x41494343u; /* not the vector-core magic */
    aclrtBinaryLoadOptions opts = {&opt, 1};
    aclrtBinHandle bin;
    CHECK(aclrtBinaryLoadFromData(data, len, &opts, &bin) == E_PARAM);
    CHECK(aclrtBinaryLoadFromData(data, len, NULL, &bin) == E_PARAM);
    opt.value.magic = MAGIC_VECTOR_CORE;
    CHECK(aclrtBinaryLoadFromData("not an elf", 10, &opts, &bin) == E_PARAM);
    CHECK(has(aclGetRecentErrMsg(), "ELF"));
    free(data);
    OK(aclFinalize());
    return 0;
}

/* A two-block launch of kernel `name` with two zeroed device tensors of 64
 * bytes (a FP32 [1, 8], b of dtype code bdt [1, 1 or 8]): device 0, a stream,
 * the payloads uploaded. */
typedef struct two {
    kernel_t k;
    aclrtStream s;
    void *a, *b, *dp;
} two_t;

static int two_setup(const char *name, uint8_t bdt, uint32_t bcols, two_t *w)
{
    if (setup(0) || load(name, &w->k))
        return 1;
    OK(aclrtCreateStream(&w->s));
    OK(aclrtMalloc(&w->a, 64, 0));
    OK(aclrtMalloc(&w->b, 64, 0));
    OK(aclrtMemset(w->a, 64, 0, 64));
    OK(aclrtMemset(w->b, 64, 0, 64));
    OK(aclrtMalloc(&w->dp, 768 * 2, 0));
    pld_abi_tensor_t t[2] = {tensor2(w->a, 1, 8, 0, 4), tensor2(w->b, 1, bcols, bdt, 4)};
    static unsigned char host[768 * 2];
    payload_fill(host, (uint64_t)(uintptr_t)w->dp, 768, 2, 2, t, NULL, 0);
    OK(aclrtMemcpy(w->dp, sizeof host, host, sizeof host, KIND_H2D));
    return 0;
}

static int two_teardown(two_t *w)
{
    OK(aclrtFree(w->dp));
    OK(aclrtFree(w->a));
    OK(aclrtFree(w->b));
    OK(aclFinalize());
    return 0;
}

/* hang: the sync times out, the blocks keep running until the cell is set,
 * a device reset kills a second hung launch */
static int case_timeout(void)
{
    two_t w;
    if (two_setup("hang", 2, 1, &w))
        return 1;
    OK(launch(&w.k, 2, w.s, (uint64_t)(uintptr_t)w.dp, 768));
    CHECK(aclrtSynchronizeStreamWithTimeout(w.s, 200) == E_SYNC_TIMEOUT);
    CHECK(has(aclGetRecentErrMsg(), "stream sync timeout after 200 ms (2 of 2 blocks still running)"));
    CHECK(aclrtDestroyStream(w.s) == E_NOT_COMPLETE);
    const int32_t one = 1;
    OK(aclrtMemcpy(w.b, 4, &one, 4, KIND_H2D)); /* the notify nobody sent */
    OK(aclrtSynchronizeStreamWithTimeout(w.s, 5000));
    float y = 0;
    OK(aclrtMemcpy(&y, 4, w.a, 4, KIND_D2H));
    CHECK(y == 1.0f);
    OK(aclrtMemset(w.b, 64, 0, 64));
    OK(launch(&w.k, 2, w.s, (uint64_t)(uintptr_t)w.dp, 768));
    CHECK(aclrtSynchronizeStreamWithTimeout(w.s, 100) == E_SYNC_TIMEOUT);
    OK(aclrtBinaryUnLoad(w.k.bin)); /* deferred: the blocks still run its code */
    CHECK(aclrtResetDevice(0) == E_NOT_COMPLETE);
    OK(aclrtResetDeviceForce(0)); /* kills the blocks, releases the stream */
    OK(aclrtSetDevice(0));
    return two_teardown(&w);
}

/* fault: a block faults, the sync reports it, the stream stays in error
 * state until a forced reset; ACL_FAKE_DEVICE_ERROR=2 faults the second launch */
static int case_fault(void)
{
    two_t w;
    if (two_setup("fault", 0, 8, &w))
        return 1;
    OK(launch(&w.k, 2, w.s, (uint64_t)(uintptr_t)w.dp, 768));
    CHECK(aclrtSynchronizeStreamWithTimeout(w.s, 5000) == E_AICORE);
    CHECK(has(aclGetRecentErrMsg(), "deliberate AICore fault in block 0"));
    CHECK(aclrtSynchronizeStreamWithTimeout(w.s, 5000) == E_AICPU);
    CHECK(launch(&w.k, 1, w.s, (uint64_t)(uintptr_t)w.dp, 768) == E_AICPU);
    CHECK(aclrtResetDevice(0) == E_NOT_COMPLETE);
    OK(aclrtResetDeviceForce(0));
    OK(aclrtSetDevice(0));
    OK(aclrtCreateStream(&w.s));
    /* the second accepted launch (a refused one does not count): injected */
    OK(launch(&w.k, 1, w.s, (uint64_t)(uintptr_t)w.dp + 768, 768)); /* block 0 of the second payload: idx 1, no fault */
    CHECK(aclrtSynchronizeStreamWithTimeout(w.s, 5000) == E_AICORE);
    CHECK(has(aclGetRecentErrMsg(), "injected"));
    OK(aclrtResetDeviceForce(0));
    OK(aclrtSetDevice(0));
    OK(aclrtCreateStream(&w.s));
    OK(launch(&w.k, 1, w.s, (uint64_t)(uintptr_t)w.dp + 768, 768));
    OK(aclrtSynchronizeStreamWithTimeout(w.s, 5000));
    float y[8];
    OK(aclrtMemcpy(y, sizeof y, w.b, sizeof y, KIND_D2H));
    OK(aclrtDestroyStream(w.s));
    CHECK(y[0] == 0.0f); /* x was zeroed: block 0 of the second payload copied it */
    OK(aclrtBinaryUnLoad(w.k.bin));
    /* memory allocated before the faults: its free blocks, then fails */
    CHECK(aclrtFree(w.dp) == E_DRV);
    OK(aclFinalize());
    return 0;
}

/* the call log and the leak line */
static int case_log(void)
{
    if (setup(0))
        return 1;
    void *p, *q;
    OK(aclrtMalloc(&p, 100, 0));
    OK(aclrtMalloc(&q, 64, 0));
    OK(aclrtFree(q));
    CHECK(aclrtFree(q) != 0);
    aclrtStream s;
    OK(aclrtCreateStream(&s));
    OK(aclFinalize());
    size_t len;
    char *log = slurp(log_path, &len);
    CHECK(log != NULL);
    CHECK(has(log, "{\"seq\":1,\"call\":\"aclInit\","));
    CHECK(has(log, "\"call\":\"aclrtMalloc\",\"args\":{\"size\":100,\"policy\":0,\"ptr\":\"0x"));
    CHECK(has(log, "\"call\":\"aclrtFree\"") && has(log, "\"ret\":207002,\"error\":\"fake ACL: aclrtFree: "));
    CHECK(has(log, "{\"call\":\"leaks\",\"allocations\":1,\"physical\":0,\"reserved\":0,\"mapped\":0,\"binaries\":0,"
                   "\"streams\":1,\"running_blocks\":0}"));
    free(log);
    return 0;
}

/* ASCEND_RT_VISIBLE_DEVICES=2,5: user ids 0, 1 are driver ids 2, 5. Physical
 * memory takes the user id, the access descriptor the driver id. */
static int case_visible(void)
{
    OK(aclInit(NULL));
    uint32_t n = 0;
    OK(aclrtGetDeviceCount(&n));
    CHECK(n == 2);
    CHECK(aclrtSetDevice(2) == E_DEVICE_ID);
    OK(aclrtSetDevice(1));
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    prop.memAttr = MEM_NORMAL;
    prop.location.type = LOC_DEVICE;
    prop.location.id = 5; /* the driver id: wrong here */
    aclrtDrvMemHandle h;
    CHECK(aclrtMallocPhysical(&h, 65536, &prop, 0) == E_DEVICE_ID);
    prop.location.id = 1;
    OK(aclrtMallocPhysical(&h, 65536, &prop, 0));
    void *va;
    OK(aclrtReserveMemAddress(&va, 65536, 0, NULL, 0));
    OK(aclrtMapMem(va, 65536, 0, h, 0));
    aclrtMemAccessDesc acc;
    memset(&acc, 0, sizeof acc);
    acc.flags = ACCESS_RW;
    acc.location.type = LOC_DEVICE;
    acc.location.id = 1; /* the user id: another card for the driver */
    CHECK(aclrtMemSetAccess(va, 65536, &acc, 1) == E_DRV);
    CHECK(has(aclGetRecentErrMsg(), "driver id 5"));
    acc.location.id = 5;
    OK(aclrtMemSetAccess(va, 65536, &acc, 1));
    OK(aclrtMemset(va, 65536, 0, 65536));
    CHECK(aclrtDeviceEnablePeerAccess(2, 0) == E_DEVICE_ID); /* user ids: 0 and 1 only */
    OK(aclrtDeviceEnablePeerAccess(0, 0));
    OK(aclrtUnmapMem(va));
    OK(aclrtReleaseMemAddress(va));
    OK(aclrtFreePhysical(h));
    OK(aclrtResetDevice(1));
    OK(aclFinalize());
    return 0;
}

/* ACL_FAKE_CANN_VERSION=8.0.0: the version is reported; what is new in 8.2
 * fails; export flags are reserved (the whitelist is the way to share) */
static int case_old_cann(void)
{
    aclCANNPackageVersion v;
    OK(aclsysGetCANNVersion(PKG_RUNTIME, &v));
    CHECK(strcmp(v.version, "8.0.0") == 0 && strcmp(v.majorVersion, "8") == 0 && strcmp(v.minorVersion, "0") == 0);
    if (setup(0))
        return 1;
    int64_t cores = 0;
    CHECK(aclrtGetDeviceInfo(0, DEV_ATTR_AIV_CORES, &cores) == E_NOT_SUPPORTED);
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    prop.memAttr = MEM_NORMAL;
    prop.location.type = LOC_DEVICE;
    aclrtDrvMemHandle h;
    OK(aclrtMallocPhysical(&h, 65536, &prop, 0));
    uint64_t sh;
    CHECK(aclrtMemExportToShareableHandle(h, 0, NO_PID_CHECK, &sh) == E_PARAM);
    CHECK(has(aclGetRecentErrMsg(), "reserved"));
    OK(aclrtMemExportToShareableHandle(h, 0, 0, &sh));
    int32_t me = 0;
    OK(aclrtDeviceGetBareTgid(&me));
    OK(aclrtMemSetPidToShareableHandle(sh, &me, 1));
    OK(aclrtFreePhysical(h));
    OK(aclFinalize());
    return 0;
}

/* the rules of waiting and of freeing after a fault */
static int case_fault_rules(void)
{
    two_t w;
    if (two_setup("fault", 0, 8, &w))
        return 1;
    CHECK(aclrtSynchronizeStreamWithTimeout(w.s, 0) == E_RT_PARAM); /* api_error.cc:1442 */
    OK(aclrtSynchronizeStreamWithTimeout(w.s, 100));
    OK(launch(&w.k, 1, w.s, (uint64_t)(uintptr_t)w.dp, 768));
    CHECK(aclrtSynchronizeStreamWithTimeout(w.s, 5000) == E_AICORE);
    /* a free after the fault blocks (ACL_FAKE_FREE_BLOCK_MS=200), then fails,
     * before the reset and after it: what a fault leaves is abandoned */
    CHECK(aclrtFree(w.a) == E_DRV);
    CHECK(has(aclGetRecentErrMsg(), "blocked"));
    OK(aclrtResetDeviceForce(0));
    OK(aclrtSetDevice(0));
    CHECK(aclrtFree(w.a) == E_DRV);
    void *p;
    OK(aclrtMalloc(&p, 64, 0)); /* the card works again */
    OK(aclrtFree(p));
    OK(aclFinalize());
    return 0;
}

/* ---------------------------------------------------------------- driver */

typedef struct test_case {
    const char *name;
    int (*fn)(void);
    const char *env; /* "K=V;K=V" */
} test_case_t;

static const test_case_t cases[] = {
    {"state", case_state, "ACL_FAKE_DEVICES=3"},
    {"memory", case_memory, ""},
    {"inject", case_inject, "ACL_FAKE_FAIL=aclrtMalloc:2,aclrtFree:1"},
    {"ipc", case_ipc, "ACL_FAKE_GRANULARITY=65536"},
    {"no_fabric", case_no_fabric, "ACL_FAKE_GRANULARITY=65536;ACL_FAKE_NO_FABRIC=1"},
    {"launch", case_launch, ""},
    {"load_errors", case_load_errors, ""},
    {"timeout", case_timeout, ""},
    {"fault", case_fault, "ACL_FAKE_DEVICE_ERROR=2;ACL_FAKE_FREE_BLOCK_MS=50"},
    {"log", case_log, "ACL_FAKE_LOG=@"},
    {"visible", case_visible, "ASCEND_RT_VISIBLE_DEVICES=2,5;ACL_FAKE_GRANULARITY=65536"},
    {"old_cann", case_old_cann, "ACL_FAKE_CANN_VERSION=8.0.0;ACL_FAKE_GRANULARITY=65536;ASCEND_HOME_PATH=/opt/cann"},
    {"fault_rules", case_fault_rules, "ACL_FAKE_FREE_BLOCK_MS=200"},
};

static int run_case(const test_case_t *c)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        char env[256];
        snprintf(env, sizeof env, "%s", c->env);
        for (char *kv = strtok(env, ";"); kv; kv = strtok(NULL, ";")) {
            char *eq = strchr(kv, '=');
            *eq = '\0';
            setenv(kv, strcmp(eq + 1, "@") == 0 ? log_path : eq + 1, 1);
        }
        alarm(60);
        _exit(c->fn());
    }
    int status = 0;
    waitpid(pid, &status, 0);
    const int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (WIFSIGNALED(status))
        printf("case %s: killed by signal %d\n", c->name, WTERMSIG(status));
    printf("case %s: %s\n", c->name, ok ? "ok" : "FAILED");
    return ok;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_acl_fake KERNEL_DIR [CASE...]\n");
        return 2;
    }
    kernel_dir = argv[1];
    snprintf(log_path, sizeof log_path, "/tmp/acl_fake_test_%ld.log", (long)getpid());
    int failed = 0, ran = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int want = argc == 2;
        for (int a = 2; a < argc; a++)
            want |= strcmp(argv[a], cases[i].name) == 0;
        if (!want)
            continue;
        ran++;
        failed += !run_case(&cases[i]);
    }
    unlink(log_path);
    printf("%d of %d cases passed\n", ran - failed, ran);
    return failed || !ran ? 1 : 0;
}
