/* acl_partial.c - a "CANN runtime" that stops short: the functions of the
 * ACL runtime the ascend plugin resolves before aclrtMapMem, and not
 * aclrtMapMem itself (like a runtime without the VMM API). Built as
 * tests/ascend/partial/lib64/libacl_rt.so; the plugin must refuse it at once,
 * naming the missing function, without calling anything (every stub fails). */
#define STUB(name)                                                                                             \
    __attribute__((visibility("default"))) int name(void);                                                    \
    int name(void) { return 500000; }

STUB(aclInit)
STUB(aclFinalize)
STUB(aclGetRecentErrMsg)
STUB(aclrtGetDeviceCount)
STUB(aclrtSetDevice)
STUB(aclrtResetDevice)
STUB(aclrtResetDeviceForce)
STUB(aclrtGetDeviceInfo)
STUB(aclrtCreateStream)
STUB(aclrtDestroyStream)
STUB(aclrtSynchronizeStreamWithTimeout)
STUB(aclrtMalloc)
STUB(aclrtFree)
STUB(aclrtMemcpy)
STUB(aclrtMemset)
STUB(aclrtBinaryLoadFromData)
STUB(aclrtBinaryGetFunction)
STUB(aclrtBinaryUnLoad)
STUB(aclrtLaunchKernelWithHostArgs)
STUB(aclrtMemGetAllocationGranularity)
STUB(aclrtMallocPhysical)
STUB(aclrtFreePhysical)
STUB(aclrtReserveMemAddress)
STUB(aclrtReleaseMemAddress)
