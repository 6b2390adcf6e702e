/* acl_fake.h - the ACL runtime API as the fake (acl_fake.c) and its test
 * (test_acl_fake.c) see it: types, constants and signatures transcribed
 * from the documented CANN interface (acl_rt.h), independently of the
 * plugin's own pld_acl.h. Also the fake's kernel hooks and result codes. */
#ifndef ACL_FAKE_H
#define ACL_FAKE_H

#include <stddef.h>
#include <stdint.h>

/* ============================================================ the ACL API, as documented */

typedef int aclError;
typedef void *aclrtStream;
typedef void *aclrtBinHandle;
typedef void *aclrtFuncHandle;
typedef void *aclrtDrvMemHandle;

typedef struct {
    uint32_t id;
    int type;                         /* 1: device */
} aclrtMemLocation;

typedef struct {
    int handleType;
    int allocationType;               /* 0: pinned */
    int memAttr;                      /* 4: HBM huge pages, 5: HBM normal pages */
    aclrtMemLocation location;
    uint64_t reserve;
} aclrtPhysicalMemProp;

typedef struct {
    int flags;                        /* 3: read-write */
    aclrtMemLocation location;
    uint8_t rsv[12];
} aclrtMemAccessDesc;

typedef struct {
    int type;                         /* 2: magic */
    union {
        uint32_t magic;
        uint32_t rsv[4];
    } value;
} aclrtBinaryLoadOption;

typedef struct {
    aclrtBinaryLoadOption *options;
    size_t numOpt;
} aclrtBinaryLoadOptions;

typedef struct {
    int id;                           /* 1: scheduling mode, 7: timeout (s) */
    union {
        uint8_t schemMode;
        uint16_t timeout;
        uint32_t rsv[4];
    } value;
} aclrtLaunchKernelAttr;

typedef struct {
    aclrtLaunchKernelAttr *attrs;
    size_t numAttrs;
} aclrtLaunchKernelCfg;

_Static_assert(sizeof(aclrtPhysicalMemProp) == 32, "aclrtPhysicalMemProp is 32 bytes");
_Static_assert(sizeof(aclrtMemAccessDesc) == 24, "aclrtMemAccessDesc is 24 bytes");
_Static_assert(sizeof(aclrtBinaryLoadOption) == 20, "aclrtBinaryLoadOption is 20 bytes");
_Static_assert(sizeof(aclrtLaunchKernelAttr) == 20, "aclrtLaunchKernelAttr is 20 bytes");

enum {
    KIND_H2H = 0, KIND_H2D = 1, KIND_D2H = 2, KIND_D2D = 3,
    LOC_DEVICE = 1, ACCESS_RW = 3, MEM_HUGE = 4, MEM_NORMAL = 5,
    SHARE_FABRIC = 2, NO_PID_CHECK = 1,
    OPT_MAGIC = 2, ATTR_SCHEM_MODE = 1, ATTR_TIMEOUT = 7, DEV_ATTR_AIV_CORES = 201,
    FABRIC_BYTES = 128
};
#define MAGIC_VECTOR_CORE 0x41415246u

/* result codes (ACL's numbers) */
enum {
    E_PARAM = 100000,                 /* ACL_ERROR_INVALID_PARAM (also injected failures) */
    E_UNINIT = 100001,                /* ACL_ERROR_UNINITIALIZE */
    E_REPEAT_INIT = 100002,           /* ACL_ERROR_REPEAT_INITIALIZE */
    E_INVALID_FILE = 100003,          /* ACL_ERROR_INVALID_FILE (acl_base_rt.h:70) */
    E_DEVICE_ID = 107001,             /* ACL_ERROR_RT_INVALID_DEVICEID */
    E_NO_CONTEXT = 107002,            /* ACL_ERROR_RT_CONTEXT_NULL: no aclrtSetDevice */
    E_HANDLE = 107017,                /* ACL_ERROR_RT_INVALID_HANDLE */
    E_NOT_SUPPORTED = 207000,         /* ACL_ERROR_RT_FEATURE_NOT_SUPPORT */
    E_ALLOC = 207001,                 /* ACL_ERROR_RT_MEMORY_ALLOCATION */
    E_FREE = 207002,                  /* ACL_ERROR_RT_MEMORY_FREE */
    E_NOT_COMPLETE = 507004,          /* ACL_ERROR_RT_STREAM_NOT_COMPLETE */
    E_AICORE = 507015,                /* AICore exception */
    E_AICPU = 507018,                 /* ACL_ERROR_RT_AICPU_EXCEPTION (rt_error_codes.h:110): what a card
                                         answers for work on a stream after an AICore error (hw_backend.md
                                         §6.1 item 7); the fake gives it for a sync or launch on such a stream */
    E_IPC = 507022,                   /* ACL_ERROR_RT_IPC_ERROR */
    E_KERNEL_LOOKUP = 507027,         /* ACL_ERROR_RT_KERNEL_LOOKUP */
    E_SYNC_TIMEOUT = 507046,          /* ACL_ERROR_RT_STREAM_SYNC_TIMEOUT */
    E_RT_PARAM = 107000,              /* ACL_ERROR_RT_PARAM_INVALID */
    E_DRV = 507899                    /* ACL_ERROR_RT_DRV_INTERNAL_ERROR (rt_error_codes.h:150) */
};

struct acl_fake_hooks {
    int (*block_idx)(void);
    int (*block_num)(void);
    void (*fault)(const char *msg);   /* never returns */
};

#define FAKE_API __attribute__((visibility("default")))
#define FAKE_CALLS(X)                                                                                                  \
    X(aclInit) X(aclFinalize) X(aclrtGetDeviceCount) X(aclrtSetDevice) X(aclrtGetDevice) X(aclrtResetDevice)           \
    X(aclrtResetDeviceForce) X(aclrtGetDeviceInfo) X(aclrtCreateStream) X(aclrtDestroyStream)                          \
    X(aclrtSynchronizeStreamWithTimeout) X(aclGetRecentErrMsg) X(aclrtMalloc) X(aclrtFree) X(aclrtMemcpy)              \
    X(aclrtMemset) X(aclrtBinaryLoadFromData) X(aclrtBinaryGetFunction) X(aclrtBinaryUnLoad)                           \
    X(aclrtLaunchKernelWithHostArgs) X(aclrtMemGetAllocationGranularity) X(aclrtMallocPhysical) X(aclrtFreePhysical)   \
    X(aclrtReserveMemAddress) X(aclrtReleaseMemAddress) X(aclrtMapMem) X(aclrtUnmapMem) X(aclrtMemSetAccess)           \
    X(aclrtMemExportToShareableHandle) X(aclrtMemImportFromShareableHandle) X(aclrtMemExportToShareableHandleV2)       \
    X(aclrtMemImportFromShareableHandleV2) X(aclrtDeviceEnablePeerAccess) X(aclrtDevicePeerAccessStatus)               \
    X(aclsysGetCANNVersion) X(aclrtMemSetPidToShareableHandle) X(aclrtDeviceGetBareTgid)

FAKE_API aclError aclInit(const char *configPath);
FAKE_API aclError aclFinalize(void);
FAKE_API aclError aclrtGetDeviceCount(uint32_t *count);
FAKE_API aclError aclrtSetDevice(int32_t deviceId);
FAKE_API aclError aclrtGetDevice(int32_t *deviceId);
FAKE_API aclError aclrtResetDevice(int32_t deviceId);
FAKE_API aclError aclrtResetDeviceForce(int32_t deviceId);
FAKE_API aclError aclrtGetDeviceInfo(uint32_t deviceId, int attr, int64_t *value);
FAKE_API aclError aclrtCreateStream(aclrtStream *stream);
FAKE_API aclError aclrtDestroyStream(aclrtStream stream);
FAKE_API aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout);
FAKE_API const char *aclGetRecentErrMsg(void);
FAKE_API aclError aclrtMalloc(void **devPtr, size_t size, int policy);
FAKE_API aclError aclrtFree(void *devPtr);
FAKE_API aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, int kind);
FAKE_API aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count);
FAKE_API aclError aclrtBinaryLoadFromData(const void *data, size_t length, const aclrtBinaryLoadOptions *options,
                                          aclrtBinHandle *binHandle);
FAKE_API aclError aclrtBinaryGetFunction(aclrtBinHandle binHandle, const char *kernelName, aclrtFuncHandle *funcHandle);
FAKE_API aclError aclrtBinaryUnLoad(aclrtBinHandle binHandle);
FAKE_API aclError aclrtLaunchKernelWithHostArgs(aclrtFuncHandle funcHandle, uint32_t numBlocks, aclrtStream stream,
                                                aclrtLaunchKernelCfg *cfg, void *hostArgs, size_t argsSize,
                                                void *placeHolderArray, size_t placeHolderNum);
FAKE_API aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *prop, int option, size_t *granularity);
FAKE_API aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size, const aclrtPhysicalMemProp *prop,
                                      uint64_t flags);
FAKE_API aclError aclrtFreePhysical(aclrtDrvMemHandle handle);
FAKE_API aclError aclrtReserveMemAddress(void **virPtr, size_t size, size_t alignment, void *expectPtr, uint64_t flags);
FAKE_API aclError aclrtReleaseMemAddress(void *virPtr);
FAKE_API aclError aclrtMapMem(void *virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle, uint64_t flags);
FAKE_API aclError aclrtUnmapMem(void *virPtr);
FAKE_API aclError aclrtMemSetAccess(void *virPtr, size_t size, aclrtMemAccessDesc *desc, size_t count);
FAKE_API aclError aclrtMemExportToShareableHandle(aclrtDrvMemHandle handle, int handleType, uint64_t flags,
                                                  uint64_t *shareableHandle);
FAKE_API aclError aclrtMemImportFromShareableHandle(uint64_t shareableHandle, int32_t deviceId,
                                                    aclrtDrvMemHandle *handle);
FAKE_API aclError aclrtMemExportToShareableHandleV2(aclrtDrvMemHandle handle, uint64_t flags, int shareType,
                                                    void *shareableHandle);
FAKE_API aclError aclrtMemImportFromShareableHandleV2(void *shareableHandle, int shareType, uint64_t flags,
                                                      aclrtDrvMemHandle *handle);
FAKE_API aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags);
FAKE_API aclError aclrtDevicePeerAccessStatus(int32_t deviceId, int32_t peerDeviceId, int32_t *status);

/* the version query (acl_rt.h: aclCANNPackageName, aclCANNPackageVersion) */
enum { PKG_CANN = 0, PKG_RUNTIME = 1 };
typedef struct {
    char version[128];
    char majorVersion[64];
    char minorVersion[64];
    char releaseVersion[64];
    char patchVersion[64];
    char reserved[128];
} aclCANNPackageVersion;
_Static_assert(sizeof(aclCANNPackageVersion) == 512, "aclCANNPackageVersion is 512 bytes");
FAKE_API aclError aclsysGetCANNVersion(int name, aclCANNPackageVersion *version);
/* the PID whitelist of a legacy VMM handle (CANN 8.0: the only way to share) */
FAKE_API aclError aclrtMemSetPidToShareableHandle(uint64_t shareableHandle, int32_t *pid, size_t pidNum);
FAKE_API aclError aclrtDeviceGetBareTgid(int32_t *pid);

#endif
