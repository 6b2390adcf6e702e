/* pld_acl.h - the part of CANN's ACL runtime API that the `ascend` plugin
 * calls, re-declared in our own words from the documented signatures and
 * constants (../shared/docs/hw_backend.md §4.2; CANN's public acl_rt.h and
 * acl_base_rt.h: facts only). pldrun never includes a CANN header and never
 * links CANN: pld_ascend.c resolves every function below with dlsym from
 * libacl_rt.so (or libascendcl.so) at run time, so the project builds
 * without CANN.
 *
 * Structure layouts are part of the C ABI of those functions; each size is
 * asserted below. */
#ifndef PLD_ACL_H
#define PLD_ACL_H

#include <stddef.h>
#include <stdint.h>

typedef int pld_acl_err_t;                  /* aclError; ACL_SUCCESS = 0 */
typedef void *pld_acl_handle_t;             /* aclrtStream, aclrtBinHandle, aclrtFuncHandle, aclrtDrvMemHandle */

#define PLD_ACL_OK 0
#define PLD_ACL_REPEAT_INITIALIZE 100002    /* aclInit a second time: harmless */
#define PLD_ACL_FEATURE_NOT_SUPPORT 207000  /* e.g. Fabric handles on a card without them */
#define PLD_ACL_STREAM_SYNC_TIMEOUT 507046
#define PLD_ACL_PKG_RUNTIME 1               /* aclCANNPackageName ACL_PKG_NAME_RUNTIME */

enum {
    PLD_ACL_MEMCPY_H2D = 1,
    PLD_ACL_MEMCPY_D2H = 2,
    PLD_ACL_MALLOC_HUGE_FIRST = 0,
    PLD_ACL_DEV_ATTR_VECTOR_CORE_NUM = 201, /* aclrtGetDeviceInfo: AIV cores of the device */
    /* virtual memory (VMM) */
    PLD_ACL_MEM_HANDLE_TYPE_NONE = 0,
    PLD_ACL_MEM_ALLOCATION_PINNED = 0,
    PLD_ACL_MEM_LOCATION_DEVICE = 1,
    PLD_ACL_HBM_MEM_HUGE = 4,
    PLD_ACL_HBM_MEM_NORMAL = 5,
    PLD_ACL_PAGE_NORMAL = 0,
    PLD_ACL_PAGE_HUGE = 1,
    PLD_ACL_GRANULARITY_MINIMUM = 0,
    PLD_ACL_ACCESS_READWRITE = 3,
    PLD_ACL_EXPORT_DISABLE_PID_VALIDATION = 1, /* both the VMM (legacy) and the IPC (V2) export flag */
    PLD_ACL_SHARE_HANDLE_FABRIC = 2,
    PLD_ACL_FABRIC_HANDLE_BYTES = 128,
    /* kernels */
    PLD_ACL_BINARY_LOAD_OPT_MAGIC = 2,
    PLD_ACL_LAUNCH_ATTR_SCHEM_MODE = 1,     /* value.schemMode: 1 = batch (start when every block is resident) */
    PLD_ACL_LAUNCH_ATTR_TIMEOUT = 7         /* value.timeout: seconds */
};
#define PLD_ACL_MAGIC_ELF_VECTOR_CORE 0x41415246u

typedef struct pld_acl_mem_location {
    uint32_t id;
    int32_t type;
} pld_acl_mem_location_t;

typedef struct pld_acl_phys_prop {          /* aclrtPhysicalMemProp */
    int32_t handle_type;
    int32_t allocation_type;
    int32_t mem_attr;
    pld_acl_mem_location_t location;
    uint64_t reserve;
} pld_acl_phys_prop_t;

typedef struct pld_acl_access_desc {        /* aclrtMemAccessDesc */
    int32_t flags;
    pld_acl_mem_location_t location;
    uint8_t rsv[12];
} pld_acl_access_desc_t;

typedef struct pld_acl_load_option {        /* aclrtBinaryLoadOption */
    int32_t type;
    union {
        uint32_t magic;
        uint32_t rsv[4];
    } value;
} pld_acl_load_option_t;

typedef struct pld_acl_load_options {       /* aclrtBinaryLoadOptions */
    pld_acl_load_option_t *options;
    size_t num;
} pld_acl_load_options_t;

typedef struct pld_acl_launch_attr {        /* aclrtLaunchKernelAttr */
    int32_t id;
    union {
        uint8_t schem_mode;
        uint16_t timeout_s;
        uint32_t rsv[4];
    } value;
} pld_acl_launch_attr_t;

typedef struct pld_acl_launch_cfg {         /* aclrtLaunchKernelCfg */
    pld_acl_launch_attr_t *attrs;
    size_t num;
} pld_acl_launch_cfg_t;

typedef struct pld_acl_cann_version {     /* aclCANNPackageVersion */
    char version[128];
    char major[64];
    char minor[64];
    char release[64];
    char patch[64];
    char reserved[128];
} pld_acl_cann_version_t;

_Static_assert(sizeof(pld_acl_cann_version_t) == 512, "aclCANNPackageVersion is 512 bytes");
_Static_assert(sizeof(pld_acl_phys_prop_t) == 32, "aclrtPhysicalMemProp is 32 bytes");
_Static_assert(sizeof(pld_acl_access_desc_t) == 24, "aclrtMemAccessDesc is 24 bytes");
_Static_assert(sizeof(pld_acl_load_option_t) == 20, "aclrtBinaryLoadOption is 20 bytes");
_Static_assert(sizeof(pld_acl_launch_attr_t) == 20, "aclrtLaunchKernelAttr is 20 bytes");

/* The function table: X(name, return type, parameters) for what the plugin
 * needs, O(...) for what it uses when present (Fabric V2 handles, A3; the
 * version query, whose absence open reports as a runtime below the floor). */
#define PLD_ACL_FUNCS(X, O)                                                                                    \
    X(aclInit, pld_acl_err_t, (const char *config))                                                            \
    X(aclFinalize, pld_acl_err_t, (void))                                                                      \
    X(aclGetRecentErrMsg, const char *, (void))                                                                \
    X(aclrtGetDeviceCount, pld_acl_err_t, (uint32_t * count))                                                  \
    X(aclrtSetDevice, pld_acl_err_t, (int32_t dev))                                                            \
    X(aclrtResetDevice, pld_acl_err_t, (int32_t dev))                                                          \
    X(aclrtResetDeviceForce, pld_acl_err_t, (int32_t dev))                                                     \
    X(aclrtGetDeviceInfo, pld_acl_err_t, (uint32_t dev, int32_t attr, int64_t *value))                         \
    X(aclrtCreateStream, pld_acl_err_t, (pld_acl_handle_t * stream))                                           \
    X(aclrtDestroyStream, pld_acl_err_t, (pld_acl_handle_t stream))                                            \
    X(aclrtSynchronizeStreamWithTimeout, pld_acl_err_t, (pld_acl_handle_t stream, int32_t timeout_ms))         \
    X(aclrtMalloc, pld_acl_err_t, (void **dev, size_t size, int32_t policy))                                   \
    X(aclrtFree, pld_acl_err_t, (void *dev))                                                                   \
    X(aclrtMemcpy, pld_acl_err_t, (void *dst, size_t dst_max, const void *src, size_t count, int32_t kind))    \
    X(aclrtMemset, pld_acl_err_t, (void *dev, size_t max, int32_t value, size_t count))                        \
    X(aclrtBinaryLoadFromData, pld_acl_err_t,                                                                  \
      (const void *data, size_t length, const pld_acl_load_options_t *options, pld_acl_handle_t *bin))         \
    X(aclrtBinaryGetFunction, pld_acl_err_t, (pld_acl_handle_t bin, const char *name, pld_acl_handle_t *fn))  \
    X(aclrtBinaryUnLoad, pld_acl_err_t, (pld_acl_handle_t bin))                                                \
    X(aclrtLaunchKernelWithHostArgs, pld_acl_err_t,                                                            \
      (pld_acl_handle_t fn, uint32_t blocks, pld_acl_handle_t stream, pld_acl_launch_cfg_t *cfg, void *args,   \
       size_t args_size, void *placeholders, size_t nplaceholders))                                            \
    X(aclrtMemGetAllocationGranularity, pld_acl_err_t,                                                         \
      (pld_acl_phys_prop_t * prop, int32_t option, size_t *granularity))                                       \
    X(aclrtMallocPhysical, pld_acl_err_t,                                                                      \
      (pld_acl_handle_t * h, size_t size, const pld_acl_phys_prop_t *prop, uint64_t flags))                    \
    X(aclrtFreePhysical, pld_acl_err_t, (pld_acl_handle_t h))                                                  \
    X(aclrtReserveMemAddress, pld_acl_err_t, (void **va, size_t size, size_t align, void *want, uint64_t page)) \
    X(aclrtReleaseMemAddress, pld_acl_err_t, (void *va))                                                       \
    X(aclrtMapMem, pld_acl_err_t, (void *va, size_t size, size_t offset, pld_acl_handle_t h, uint64_t flags))  \
    X(aclrtUnmapMem, pld_acl_err_t, (void *va))                                                                \
    X(aclrtMemSetAccess, pld_acl_err_t, (void *va, size_t size, pld_acl_access_desc_t *desc, size_t count))    \
    X(aclrtMemExportToShareableHandle, pld_acl_err_t,                                                          \
      (pld_acl_handle_t h, int32_t handle_type, uint64_t flags, uint64_t *shareable))                          \
    X(aclrtMemImportFromShareableHandle, pld_acl_err_t, (uint64_t shareable, int32_t dev, pld_acl_handle_t *h)) \
    X(aclrtDeviceEnablePeerAccess, pld_acl_err_t, (int32_t peer, uint32_t flags))                              \
    X(aclrtDevicePeerAccessStatus, pld_acl_err_t, (int32_t dev, int32_t peer, int32_t *status))                \
    O(aclrtMemExportToShareableHandleV2, pld_acl_err_t,                                                        \
      (pld_acl_handle_t h, uint64_t flags, int32_t type, void *shareable))                                     \
    O(aclrtMemImportFromShareableHandleV2, pld_acl_err_t,                                                      \
      (void *shareable, int32_t type, uint64_t flags, pld_acl_handle_t *h))                                    \
    O(aclsysGetCANNVersion, pld_acl_err_t, (int32_t package, pld_acl_cann_version_t *version))

#endif
