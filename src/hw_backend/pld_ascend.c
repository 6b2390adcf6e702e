/* pld_ascend.c - the `ascend` backend: a program's kernels run as AIV
 * kernels on Ascend NPUs through CANN's ACL runtime. A plugin built against
 * pld_backend.h alone (pld_backend_ascend.so, opened by `--backend ascend`);
 * it dlopens the CANN runtime at run time, so pldrun builds and runs without
 * CANN, and says so when CANN is missing.
 *
 * What it does (../shared/docs/hw_backend.md §1.4, §4; docs/ascend.md;
 * issue 40: the real runtime's rules):
 *   open     dlopen libacl_rt.so, else libascendcl.so, from $PLD_ASCEND_LIBDIR
 *            or $ASCEND_HOME_PATH/lib64; every function of pld_acl.h resolved
 *            (a missing one is named); the CANN version checked (8.2 or
 *            later, else exit 69 with both versions); aclInit, the rank's
 *            device (--devices, else local rank % device count: a user id;
 *            its driver id through ASCEND_RT_VISIBLE_DEVICES), a stream, the
 *            device's AIV core count.
 *   windows  per comm domain: a local window from the VMM API (physical
 *            memory by user id, reserved address, map, access by driver id),
 *            exported as a Fabric V2 handle when the runtime has one, else a
 *            legacy VMM handle with peer access (never fatal: a failure shows
 *            at the import, reported with rank, peer and code); handles
 *            exchanged with the core's collective callbacks over the domain's
 *            members (MPI, no files, no HCCL); every peer's window imported
 *            and mapped here.
 *   kernels  <kernel dir>/<name>.elf (a scope: <name>@<line>.elf first),
 *            built by PyPTO's toolchain plus the entry shim of docs/ascend.md;
 *            loaded with aclrtBinaryLoadFromData (vector core magic); the
 *            shim's pld_entry_0_mix_aiv is looked up as pld_entry_0.
 *   launch   one device block holds every block's 512-byte payload (args[50],
 *            LocalContext @400, GlobalContext @448) and its ChipTensors
 *            (@512), all addresses device addresses; hostArgs = {payloads,
 *            stride}; batch scheduling (every block resident); one
 *            synchronisation with the run's timeout (on a waiter thread while
 *            pldrun's should_stop is asked here). A device error is reported
 *            with the runtime's first message; the device is force-reset,
 *            never synchronised again, its handles abandoned (a free after a
 *            fault can block), the card probed (up to 3 resets).
 *   close    binaries, memory, windows (imports first), stream, device,
 *            aclFinalize: every device resource is freed before aclFinalize;
 *            the runtime stays loaded (a dlclose after aclFinalize can crash
 *            at exit).
 * Refused, naming the construct: deferred completion (pld.system.defer_wait),
 * SDMA-async ops, MIX kernels, more blocks than the device's AIV cores. */
#include "pld_acl.h"
#include "pld_backend.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The shim's symbol is pld_entry_0_mix_aiv; the runtime registers each
 * kernel function without its _mix_aic / _mix_aiv suffix (CANN runtime
 * src/runtime/core/src/kernel/program.cc:1542 AdjustKernelName, :1824
 * RegisterAllKernelCommon) and aclrtBinaryGetFunction looks the name up
 * exactly: the entry is found as pld_entry_0. (Not by entry address: PyPTO's
 * kernel_entry is a second registered function of the same binary.) */
#define ENTRY_SYMBOL "pld_entry_0_mix_aiv"
#define ENTRY_NAME "pld_entry_0"
/* The oldest CANN the plugin runs on: aclrtGetDeviceInfo, the host-args
 * launch and the V2 Fabric handles are documented from 8.2; on 8.0 the VMM
 * export flags are reserved (PID validation cannot be turned off). */
#define CANN_FLOOR_MAJOR 8
#define CANN_FLOOR_MINOR 2
#define MAX_VISIBLE 64
#define MAX_MEMBERS (PLD_ABI_CTX_WINDOWS_OUT - PLD_ABI_CTX_WINDOWS_IN) / 8 /* windowsIn[64] */
#define PAYLOAD_BYTES 512                  /* args[50] (400) + LocalContext (48) + GlobalContext (24), padded */
#define PAYLOAD_LOCAL 400
#define PAYLOAD_GLOBAL 448
#define PATH_MAX_ 4096

_Static_assert(PLD_ABI_ARGS * 8 == PAYLOAD_LOCAL, "args[] ends where the LocalContext starts");
_Static_assert(PAYLOAD_LOCAL + sizeof(pld_abi_local_t) == PAYLOAD_GLOBAL, "LocalContext is 48 bytes");
_Static_assert(PAYLOAD_GLOBAL + sizeof(pld_abi_global_t) <= PAYLOAD_BYTES, "the payload holds the GlobalContext");

/* the resolved CANN functions */
typedef struct acl {
#define ACL_PTR(name, ret, params) ret(*name) params;
    PLD_ACL_FUNCS(ACL_PTR, ACL_PTR)
#undef ACL_PTR
} acl_t;

struct pld_be_kernel {
    char *name;
    void *image;                            /* the binary's bytes, kept while it is loaded */
    pld_acl_handle_t bin, fn;
    struct pld_be_kernel *next;
};

/* one mapping of a window: this rank's own, or an imported peer's */
typedef struct mapping {
    pld_acl_handle_t phys;
    void *va;
} mapping_t;

struct pld_be_window {
    int n, me;
    size_t size;                            /* mapped bytes per member */
    mapping_t *maps;                        /* n: member i's window as mapped here */
    struct pld_be_window *next;
};

typedef struct alloc {
    void *p;
    struct alloc *next;
} alloc_t;

enum { PATH_IPC = 1, PATH_FABRIC = 2 };

/* what each member publishes about its window */
typedef struct announce {
    int32_t ok;                             /* 0: this member failed (everyone unwinds) */
    int32_t path;                           /* PATH_* */
    int32_t dev;
    int32_t pid;
    int32_t drv;                            /* the device's driver id (ASCEND_RT_VISIBLE_DEVICES) */
    int32_t rank;                           /* world rank */
    uint64_t size;
    uint64_t handle;                        /* legacy VMM shareable handle */
    uint8_t fabric[PLD_ACL_FABRIC_HANDLE_BYTES];
} announce_t;

struct pld_be {
    void *lib;
    char libpath[PATH_MAX_];
    acl_t f;
    int rank, local_rank;
    const pld_be_host_t *host;              /* pldrun's services: should_stop while a launch runs */
    void *launch_ctx;                       /* the running launch's host_ctx */
    int32_t dev;                            /* the user (logical) id: aclrtSetDevice, physical memory, imports */
    int32_t drv_dev;                        /* its driver id: aclrtMemSetAccess (ASCEND_RT_VISIBLE_DEVICES) */
    int nvisible;                           /* ASCEND_RT_VISIBLE_DEVICES: user id i is visible[i]; -1: unset */
    int32_t visible[MAX_VISIBLE];
    int inited, dev_set;
    pld_acl_handle_t stream;
    int64_t aiv_cores;
    char kdir[PATH_MAX_];
    int fabric;                             /* 1: try Fabric V2 handles (default when the runtime has them) */
    struct pld_be_kernel *kernels;
    struct pld_be_window *windows;
    alloc_t *allocs;                        /* live aclrtMalloc blocks (freed at close if the core did not) */
    void *payload;                          /* the launch in flight: its payload block */
    char running[160];                      /* ... and its kernel, for reports */
    announce_t members[MAX_MEMBERS];        /* window_alloc: every member's record */
    /* legacy path: what peer access answered, per member of the window being
     * set up (reported when an import fails) and in words for the last window
     * (reported when a kernel fails: the first access) */
    int32_t pa_enable[MAX_MEMBERS], pa_status[MAX_MEMBERS];
    char peer_note[512];
    /* the waiter thread (sync with pldrun's should_stop): one synchronisation
     * with the run's timeout, while this thread asks should_stop */
    pthread_t waiter;
    pthread_mutex_t wmu;
    pthread_cond_t wcv;
    int waiter_up, wquit, wbusy, wdone, wdev_set;
    int32_t wtimeout;
    pld_acl_err_t wresult;
    char wmsg[600];                         /* aclGetRecentErrMsg() on the waiter's thread, right after its sync */
    int broken;                             /* a device error happened: the device was force-reset, nothing
                                               more runs or is copied (its resources are still freed) */
    char err[2048];
};

static char open_err[2048];

static const char *asc_last_error(pld_be_t *be)
{
    return be ? be->err : open_err;
}

static int seterr(pld_be_t *be, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int seterr(pld_be_t *be, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(be ? be->err : open_err, be ? sizeof be->err : sizeof open_err, fmt, ap);
    va_end(ap);
    return rc;
}

/* The runtime's own words for the last failure (never NULL). */
static const char *acl_msg(const pld_be_t *be)
{
    const char *m = be->f.aclGetRecentErrMsg ? be->f.aclGetRecentErrMsg() : NULL;
    return m && *m ? m : "no message from the runtime";
}

/* A failed ACL call: the call, its code and the runtime's message. */
static int aclfail(pld_be_t *be, int rc, const char *call, pld_acl_err_t code)
{
    return seterr(be, rc, "ascend: %s failed with error %d: %s", call, code, acl_msg(be));
}

#define ACL_TRY(be, rc, call, args)                                                                            \
    do {                                                                                                       \
        pld_acl_err_t e_ = (be)->f.call args;                                                                  \
        if (e_ != PLD_ACL_OK)                                                                                  \
            return aclfail((be), (rc), #call, e_);                                                             \
    } while (0)

/* ---- options: kernels=DIR, fabric=0|1 ---- */

static int parse_options(pld_be_t *be, const char *opts)
{
    const char *p = opts ? opts : "";
    while (*p) {
        size_t n = strcspn(p, ",");
        if (n > 8 && strncmp(p, "kernels=", 8) == 0) {
            if (n - 8 >= sizeof be->kdir)
                return seterr(be, PLD_BE_E_INVAL, "ascend: the kernel directory path is too long");
            memcpy(be->kdir, p + 8, n - 8);
            be->kdir[n - 8] = '\0';
        } else if (n == 8 && (strncmp(p, "fabric=0", 8) == 0 || strncmp(p, "fabric=1", 8) == 0)) {
            be->fabric = p[7] == '1';
        } else if (n) {
            return seterr(be, PLD_BE_E_INVAL, "ascend: unknown option '%.*s' (known: kernels=DIR, fabric=0|1)",
                          (int)n, p);
        }
        p += n;
        if (*p == ',')
            p++;
    }
    return PLD_BE_OK;
}

/* ---- the CANN runtime library ---- */

static int load_runtime(pld_be_t *be)
{
    const char *libdir = getenv("PLD_ASCEND_LIBDIR"), *home = getenv("ASCEND_HOME_PATH");
    char dir[PATH_MAX_];
    if (libdir && *libdir)
        snprintf(dir, sizeof dir, "%s", libdir);
    else if (home && *home)
        snprintf(dir, sizeof dir, "%s/lib64", home);
    else
        return seterr(be, PLD_BE_E_UNSUPPORTED,
                      "ascend: the CANN runtime (libacl_rt.so) was not found: ASCEND_HOME_PATH is not set. Source "
                      "CANN's set_env.sh (it sets ASCEND_HOME_PATH and LD_LIBRARY_PATH), or set PLD_ASCEND_LIBDIR to "
                      "the directory of libacl_rt.so");
    static const char *const names[] = {"libacl_rt.so", "libascendcl.so"};
    char why[2][700];
    for (int i = 0; i < 2; i++) {
        if (snprintf(be->libpath, sizeof be->libpath, "%s/%s", dir, names[i]) >= (int)sizeof be->libpath)
            return seterr(be, PLD_BE_E_INVAL, "ascend: the CANN library path is too long");
        dlerror();
        be->lib = dlopen(be->libpath, RTLD_NOW | RTLD_LOCAL);
        if (be->lib)
            break;
        const char *e = dlerror();
        snprintf(why[i], sizeof why[i], "%s", e ? e : "dlopen failed");
    }
    if (!be->lib)
        return seterr(be, PLD_BE_E_UNSUPPORTED,
                      "ascend: cannot load the CANN runtime from %s (%s=%s): %s; %s. Check the CANN installation "
                      "(the driver's lib64 must be on LD_LIBRARY_PATH)",
                      dir, libdir && *libdir ? "PLD_ASCEND_LIBDIR" : "ASCEND_HOME_PATH",
                      libdir && *libdir ? libdir : home, why[0], why[1]);
    void *sym;
#define ACL_REQ(name, ret, params)                                                                             \
    sym = dlsym(be->lib, #name);                                                                               \
    if (!sym)                                                                                                  \
        return seterr(be, PLD_BE_E_UNSUPPORTED, "ascend: the CANN runtime %s has no function %s (this CANN is too " \
                      "old or not a runtime library)", be->libpath, #name);                                    \
    memcpy(&be->f.name, &sym, sizeof sym);
#define ACL_OPT(name, ret, params)                                                                             \
    sym = dlsym(be->lib, #name);                                                                               \
    if (sym)                                                                                                   \
        memcpy(&be->f.name, &sym, sizeof sym);
    PLD_ACL_FUNCS(ACL_REQ, ACL_OPT)
#undef ACL_REQ
#undef ACL_OPT
    return PLD_BE_OK;
}

/* ---- open / close ---- */

static void free_window_maps(pld_be_t *be, struct pld_be_window *w);

static void waiter_stop(pld_be_t *be);

static void teardown(pld_be_t *be)
{
    waiter_stop(be);
    /* every device resource goes before aclFinalize (hw_backend.md §4.4);
     * after a device fault they are abandoned instead (be->broken: the reset
     * took them; a free after a fault can block) */
    for (struct pld_be_kernel *k = be->kernels, *next; k; k = next) {
        next = k->next;
        if (!be->broken)
            be->f.aclrtBinaryUnLoad(k->bin);
        free(k->image);
        free(k->name);
        free(k);
    }
    be->kernels = NULL;
    for (struct pld_be_window *w = be->windows, *next; w; w = next) {
        next = w->next;
        free_window_maps(be, w);
    }
    be->windows = NULL;
    for (alloc_t *a = be->allocs, *next; a; a = next) {
        next = a->next;
        if (!be->broken)
            be->f.aclrtFree(a->p);
        free(a);
    }
    be->allocs = NULL;
    if (be->payload && !be->broken)
        be->f.aclrtFree(be->payload);
    be->payload = NULL;
    if (be->stream)
        be->f.aclrtDestroyStream(be->stream);
    be->stream = NULL;
    if (be->dev_set)
        be->f.aclrtResetDevice(be->dev);
    be->dev_set = 0;
    /* After aclInit the runtime stays loaded: a dlclose after aclFinalize can
     * crash at exit (the runtime's own atexit handlers and threads). */
    const int keep = be->inited;
    if (be->inited)
        be->f.aclFinalize();
    be->inited = 0;
    if (be->lib && !keep)
        dlclose(be->lib);
    be->lib = NULL;
}

static void asc_close(pld_be_t *be)
{
    if (!be)
        return;
    teardown(be);
    free(be);
}

/* ASCEND_RT_VISIBLE_DEVICES as the runtime reads it (CANN runtime
 * src/runtime/core/src/runtime.cc:4951 GetVisibleDevices): comma-separated
 * driver ids, ascending, the list ending at the first token that is not a
 * number; user (logical) id i is the i-th (runtime.cc:4799
 * ChgUserDevIdToDeviceId). Unset: the ids are the same. */
static void read_visible(pld_be_t *be)
{
    const char *v = getenv("ASCEND_RT_VISIBLE_DEVICES");
    be->nvisible = -1;
    if (!v)
        return;
    be->nvisible = 0;
    for (const char *p = v; *p && be->nvisible < MAX_VISIBLE;) {
        char *end;
        long d = strtol(p, &end, 10);
        if (end == p || d < 0 || (*end && *end != ','))
            break;
        be->visible[be->nvisible++] = (int32_t)d;
        p = *end ? end + 1 : end;
    }
}

/* The user id of driver id drv here, -1 when it is not visible. */
static int32_t user_of_drv(const pld_be_t *be, int32_t drv)
{
    if (be->nvisible < 0)
        return drv;
    for (int i = 0; i < be->nvisible; i++)
        if (be->visible[i] == drv)
            return i;
    return -1;
}

/* The version floor, with the runtime's version call (its package
 * "runtime"). A runtime without the call is older than the floor. */
static int check_version(pld_be_t *be)
{
    char found[900] = "unknown (the runtime has no aclsysGetCANNVersion)";
    int major = -1, minor = -1;
    if (be->f.aclsysGetCANNVersion) {
        pld_acl_cann_version_t v;
        memset(&v, 0, sizeof v);
        pld_acl_err_t e = be->f.aclsysGetCANNVersion(PLD_ACL_PKG_RUNTIME, &v);
        v.version[sizeof v.version - 1] = '\0';
        if (e != PLD_ACL_OK) /* it reads $ASCEND_HOME_PATH/share/info */
            snprintf(found, sizeof found, "unknown (aclsysGetCANNVersion failed with error %d%s: %.600s)", e,
                     getenv("ASCEND_HOME_PATH") ? "" : "; it needs ASCEND_HOME_PATH: source CANN's set_env.sh",
                     acl_msg(be));
        else if (sscanf(v.version, "%d.%d", &major, &minor) != 2)
            snprintf(found, sizeof found, "'%s' (not MAJOR.MINOR...)", v.version);
        else
            snprintf(found, sizeof found, "%s", v.version);
    }
    if (major > CANN_FLOOR_MAJOR || (major == CANN_FLOOR_MAJOR && minor >= CANN_FLOOR_MINOR))
        return PLD_BE_OK;
    return seterr(be, PLD_BE_E_UNSUPPORTED, "ascend: the CANN runtime %s is version %s; the ascend backend needs "
                  "CANN %d.%d or later (aclrtGetDeviceInfo, aclrtLaunchKernelWithHostArgs and the V2 Fabric "
                  "handles; before 8.2 a window cannot be shared with PID validation off)", be->libpath, found,
                  CANN_FLOOR_MAJOR, CANN_FLOOR_MINOR);
}

static int device_setup(pld_be_t *be, const pld_be_init_t *init)
{
    int vrc = check_version(be);
    if (vrc != PLD_BE_OK)
        return vrc;
    read_visible(be);
    pld_acl_err_t e = be->f.aclInit(NULL);
    if (e != PLD_ACL_OK && e != PLD_ACL_REPEAT_INITIALIZE)
        return aclfail(be, PLD_BE_E_DEVICE, "aclInit", e);
    be->inited = 1;
    uint32_t count = 0;
    ACL_TRY(be, PLD_BE_E_DEVICE, aclrtGetDeviceCount, (&count));
    if (count == 0)
        return seterr(be, PLD_BE_E_UNSUPPORTED, "ascend: the CANN runtime sees no device on this host");
    if (init->device_id >= 0 && (uint32_t)init->device_id >= count)
        return seterr(be, PLD_BE_E_INVAL, "ascend: rank %d was given device %d (--devices), but this host has %u",
                      init->rank, init->device_id, count);
    be->dev = init->device_id >= 0 ? init->device_id : (int32_t)((uint32_t)init->local_rank % count);
    be->drv_dev = be->nvisible < 0 ? be->dev : be->dev < be->nvisible ? be->visible[be->dev] : -1;
    if (be->drv_dev < 0)
        return seterr(be, PLD_BE_E_INVAL, "ascend: device %d is not in ASCEND_RT_VISIBLE_DEVICES=%s", be->dev,
                      getenv("ASCEND_RT_VISIBLE_DEVICES"));
    ACL_TRY(be, PLD_BE_E_DEVICE, aclrtSetDevice, (be->dev));
    be->dev_set = 1;
    ACL_TRY(be, PLD_BE_E_DEVICE, aclrtCreateStream, (&be->stream));
    ACL_TRY(be, PLD_BE_E_DEVICE, aclrtGetDeviceInfo, ((uint32_t)be->dev, PLD_ACL_DEV_ATTR_VECTOR_CORE_NUM,
                                                      &be->aiv_cores));
    if (be->aiv_cores <= 0)
        return seterr(be, PLD_BE_E_DEVICE, "ascend: device %d reports %lld AIV cores", be->dev,
                      (long long)be->aiv_cores);
    return PLD_BE_OK;
}

static int asc_open(const pld_be_init_t *init, pld_be_t **out)
{
    *out = NULL;
    pld_be_t *be = calloc(1, sizeof *be);
    if (!be)
        return seterr(NULL, PLD_BE_E_NOMEM, "ascend: out of memory");
    be->rank = init->rank;
    be->local_rank = init->local_rank;
    if (init->struct_size >= offsetof(pld_be_init_t, host) + sizeof init->host && init->host &&
        init->host->struct_size >= offsetof(pld_be_host_t, should_stop) + sizeof init->host->should_stop)
        be->host = init->host;
    be->dev = -1;
    be->fabric = 1;
    const char *kenv = getenv("PLD_ASCEND_KERNELS"); /* the default kernel directory (conformance runs) */
    if (kenv && strlen(kenv) < sizeof be->kdir)
        memcpy(be->kdir, kenv, strlen(kenv) + 1);
    int rc = parse_options(be, init->options);
    if (rc == PLD_BE_OK)
        rc = load_runtime(be);
    if (rc == PLD_BE_OK)
        rc = device_setup(be, init);
    if (rc != PLD_BE_OK) {
        snprintf(open_err, sizeof open_err, "%s", be->err);
        asc_close(be);
        return rc;
    }
    *out = be;
    return PLD_BE_OK;
}

/* ---- kernels ---- */

/* A construct this backend cannot run, in words; NULL when it can. */
static const char *refusal(const pld_be_kernel_desc_t *d, char *buf, size_t n)
{
    if (d->core_type == PLD_BE_CORE_MIX) {
        snprintf(buf, n, "kernel %s is a MIX (AIC+AIV) kernel; the ascend backend launches AIV kernels only", d->name);
        return buf;
    }
    if (d->core_type == PLD_BE_CORE_AIC) {
        snprintf(buf, n, "kernel %s is an AIC (cube) kernel; the ascend backend launches AIV kernels only", d->name);
        return buf;
    }
    if (d->struct_size >= offsetof(pld_be_kernel_desc_t, feature_at) + sizeof d->feature_at && d->features) {
        const char *at = d->feature_at ? d->feature_at : "?";
        if (d->features & PLD_BE_F_DEFER_WAIT)
            snprintf(buf, n, "%s: kernel %s uses deferred completion, which needs PyPTO's device-side scheduler; "
                     "the ascend backend launches each kernel from the host (use pld.system.wait)", at, d->name);
        else
            snprintf(buf, n, "%s: kernel %s uses an SDMA-async op, which needs an SDMA workspace the ascend "
                     "backend does not provision", at, d->name);
        return buf;
    }
    return NULL;
}

/* The binary file of kernel d in the kernel directory, into path. */
static int kernel_file(pld_be_t *be, const pld_be_kernel_desc_t *d, char *path, size_t n)
{
    struct stat st;
    if (!be->kdir[0])
        return seterr(be, PLD_BE_E_LOAD, "ascend: kernel %s: no kernel directory (--backend-options kernels=DIR "
                      "or PLD_ASCEND_KERNELS; docs/ascend.md says how to build it)", d->name);
    if (snprintf(path, n, "%s/%s@%d.elf", be->kdir, d->name, d->line) < (int)n && stat(path, &st) == 0)
        return PLD_BE_OK;
    if (snprintf(path, n, "%s/%s.elf", be->kdir, d->name) >= (int)n)
        return seterr(be, PLD_BE_E_LOAD, "ascend: kernel %s: the path of its binary is too long", d->name);
    if (stat(path, &st) == 0)
        return PLD_BE_OK;
    return seterr(be, PLD_BE_E_LOAD, "ascend: kernel %s (%s:%d) has no binary: %s does not exist", d->name,
                  d->program ? d->program : "?", d->line, path);
}

static int asc_program_load(pld_be_t *be, const char *path, uint32_t n, const pld_be_kernel_desc_t *ks)
{
    (void)path;
    char why[512], file[PATH_MAX_];
    /* what can never run first (a MIX kernel before the AIV/AIC kernels of
     * its group), then what is missing */
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t i = 0; i < n; i++)
            if ((pass == 1 || ks[i].core_type == PLD_BE_CORE_MIX) && refusal(&ks[i], why, sizeof why))
                return seterr(be, PLD_BE_E_UNSUPPORTED, "ascend: %s", why);
    for (uint32_t i = 0; i < n; i++) {
        int rc = kernel_file(be, &ks[i], file, sizeof file);
        if (rc != PLD_BE_OK)
            return rc;
    }
    return PLD_BE_OK;
}

static void *read_file(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    void *buf = NULL;
    long sz;
    if (fseek(fp, 0, SEEK_END) == 0 && (sz = ftell(fp)) > 0 && fseek(fp, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)sz)) != NULL && fread(buf, 1, (size_t)sz, fp) != (size_t)sz) {
        free(buf);
        buf = NULL;
    }
    fclose(fp);
    *len = buf ? (size_t)sz : 0;
    return buf;
}

static int asc_kernel_load(pld_be_t *be, const pld_be_kernel_desc_t *d, pld_be_kernel_t **out,
                           pld_be_kernel_info_t *info)
{
    char why[512], path[PATH_MAX_];
    if (refusal(d, why, sizeof why))
        return seterr(be, PLD_BE_E_UNSUPPORTED, "ascend: %s", why);
    if (be->broken)
        return seterr(be, PLD_BE_E_DEVICE, "ascend: device %d was reset after an error; nothing more runs on it",
                      be->dev);
    int rc = kernel_file(be, d, path, sizeof path);
    if (rc != PLD_BE_OK)
        return rc;
    struct pld_be_kernel *k = calloc(1, sizeof *k);
    if (!k || !(k->name = strdup(d->name))) {
        free(k);
        return seterr(be, PLD_BE_E_NOMEM, "ascend: out of memory");
    }
    size_t len = 0;
    k->image = read_file(path, &len);
    if (!k->image) {
        free(k->name);
        free(k);
        return seterr(be, PLD_BE_E_LOAD, "ascend: cannot read %s: %s", path, strerror(errno ? errno : EIO));
    }
    pld_acl_load_option_t opt;
    memset(&opt, 0, sizeof opt);
    opt.type = PLD_ACL_BINARY_LOAD_OPT_MAGIC;
    opt.value.magic = PLD_ACL_MAGIC_ELF_VECTOR_CORE;
    pld_acl_load_options_t opts = {&opt, 1};
    pld_acl_err_t e = be->f.aclrtBinaryLoadFromData(k->image, len, &opts, &k->bin);
    if (e == PLD_ACL_OK) {
        e = be->f.aclrtBinaryGetFunction(k->bin, ENTRY_NAME, &k->fn);
        if (e != PLD_ACL_OK) {
            seterr(be, PLD_BE_E_LOAD, "ascend: %s has no kernel %s (symbol %s; error %d: %s); build it with the "
                   "entry shim of docs/ascend.md", path, ENTRY_NAME, ENTRY_SYMBOL, e, acl_msg(be));
            be->f.aclrtBinaryUnLoad(k->bin);
        }
    } else {
        seterr(be, PLD_BE_E_LOAD, "ascend: aclrtBinaryLoadFromData(%s) failed with error %d: %s", path, e,
               acl_msg(be));
    }
    if (e != PLD_ACL_OK) {
        free(k->image);
        free(k->name);
        free(k);
        return PLD_BE_E_LOAD;
    }
    k->next = be->kernels;
    be->kernels = k;
    *out = k;
    info->conv = PLD_BE_CALL_ARGS;
    info->fn = NULL;
    return PLD_BE_OK;
}

static void asc_kernel_unload(pld_be_t *be, pld_be_kernel_t *k)
{
    for (struct pld_be_kernel **pp = &be->kernels; *pp; pp = &(*pp)->next)
        if (*pp == k) {
            *pp = k->next;
            if (!be->broken)
                be->f.aclrtBinaryUnLoad(k->bin);
            free(k->image);
            free(k->name);
            free(k);
            return;
        }
}

/* ---- device memory ---- */

static int asc_mem_alloc(pld_be_t *be, size_t bytes, size_t align, pld_be_devptr_t *out)
{
    (void)align; /* device allocations are at least 64-byte aligned */
    alloc_t *a = calloc(1, sizeof *a);
    if (!a)
        return seterr(be, PLD_BE_E_NOMEM, "ascend: out of memory");
    pld_acl_err_t e = be->f.aclrtMalloc(&a->p, bytes ? bytes : 1, PLD_ACL_MALLOC_HUGE_FIRST);
    if (e != PLD_ACL_OK) {
        free(a);
        return aclfail(be, PLD_BE_E_NOMEM, "aclrtMalloc", e);
    }
    a->next = be->allocs;
    be->allocs = a;
    *out = (pld_be_devptr_t)(uintptr_t)a->p;
    return PLD_BE_OK;
}

static int asc_mem_free(pld_be_t *be, pld_be_devptr_t p)
{
    for (alloc_t **pp = &be->allocs; *pp; pp = &(*pp)->next)
        if ((uintptr_t)(*pp)->p == p) {
            alloc_t *a = *pp;
            *pp = a->next;
            pld_acl_err_t e = be->broken ? PLD_ACL_OK : be->f.aclrtFree(a->p); /* after a fault: abandoned */
            free(a);
            return e == PLD_ACL_OK ? PLD_BE_OK : aclfail(be, PLD_BE_E_DEVICE, "aclrtFree", e);
        }
    return seterr(be, PLD_BE_E_INVAL, "ascend: free of 0x%llx, which this backend did not allocate",
                  (unsigned long long)p);
}

static int asc_upload(pld_be_t *be, pld_be_devptr_t dst, const void *src, size_t bytes)
{
    if (be->broken)
        return seterr(be, PLD_BE_E_DEVICE, "ascend: device %d was reset after an error", be->dev);
    ACL_TRY(be, PLD_BE_E_DEVICE, aclrtMemcpy, ((void *)(uintptr_t)dst, bytes, src, bytes, PLD_ACL_MEMCPY_H2D));
    return PLD_BE_OK;
}

static int asc_download(pld_be_t *be, void *dst, pld_be_devptr_t src, size_t bytes)
{
    if (be->broken)
        return seterr(be, PLD_BE_E_DEVICE, "ascend: device %d was reset after an error", be->dev);
    ACL_TRY(be, PLD_BE_E_DEVICE, aclrtMemcpy, (dst, bytes, (const void *)(uintptr_t)src, bytes, PLD_ACL_MEMCPY_D2H));
    return PLD_BE_OK;
}

/* ---- launch and sync ---- */

static uint64_t round_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

static int asc_launch(pld_be_t *be, pld_be_kernel_t *k, const pld_be_launch_t *l)
{
    if (be->broken)
        return seterr(be, PLD_BE_E_DEVICE, "ascend: device %d was reset after an error; kernel %s does not run",
                      be->dev, k->name);
    if (be->payload)
        return seterr(be, PLD_BE_E_INVAL, "ascend: kernel %s launched while %s is still running", k->name,
                      be->running);
    if (!be->stream)
        return seterr(be, PLD_BE_E_DEVICE, "ascend: device %d has no stream", be->dev);
    const uint32_t n = l->block_num;
    if (n == 0 || (int64_t)n > be->aiv_cores)
        return seterr(be, PLD_BE_E_UNSUPPORTED, "ascend: kernel %s launches %u blocks, but device %d has %lld AIV "
                      "cores; every block of a launch must be resident at once (batch scheduling, hw_backend.md "
                      "§6.1)", k->name, n, be->dev, (long long)be->aiv_cores);
    const int T = l->frames[0].ntensors;
    const uint64_t stride = round_up(PAYLOAD_BYTES + (uint64_t)T * sizeof(pld_abi_tensor_t), 64);
    const uint64_t total = stride * n;
    unsigned char *img = calloc(1, (size_t)total);
    if (!img)
        return seterr(be, PLD_BE_E_NOMEM, "ascend: out of memory");
    void *dev = NULL;
    pld_acl_err_t e = be->f.aclrtMalloc(&dev, (size_t)total, PLD_ACL_MALLOC_HUGE_FIRST);
    if (e != PLD_ACL_OK) {
        free(img);
        return aclfail(be, PLD_BE_E_NOMEM, "aclrtMalloc (launch payload)", e);
    }
    /* every block's payload, its pointers relocated to the device block */
    for (uint32_t b = 0; b < n; b++) {
        const pld_abi_frame_t *fr = &l->frames[b];
        unsigned char *pb = img + (uint64_t)b * stride;
        const uint64_t db = (uint64_t)(uintptr_t)dev + (uint64_t)b * stride;
        int64_t args[PLD_ABI_ARGS];
        memcpy(args, fr->args, sizeof args);
        for (int i = 0; i < fr->ntensors; i++) {
            args[i] = (int64_t)(db + PAYLOAD_BYTES + (uint64_t)i * sizeof(pld_abi_tensor_t));
            memcpy(pb + PAYLOAD_BYTES + (size_t)i * sizeof(pld_abi_tensor_t), &fr->tensors[i],
                   sizeof(pld_abi_tensor_t));
        }
        args[PLD_ABI_LOCAL_SLOT] = (int64_t)(db + PAYLOAD_LOCAL);
        args[PLD_ABI_GLOBAL_SLOT] = (int64_t)(db + PAYLOAD_GLOBAL);
        memcpy(pb, args, sizeof args);
        memcpy(pb + PAYLOAD_LOCAL, &fr->local, sizeof fr->local);
        memcpy(pb + PAYLOAD_GLOBAL, &fr->global, sizeof fr->global);
    }
    e = be->f.aclrtMemcpy(dev, (size_t)total, img, (size_t)total, PLD_ACL_MEMCPY_H2D);
    free(img);
    if (e != PLD_ACL_OK) {
        be->f.aclrtFree(dev);
        return aclfail(be, PLD_BE_E_LAUNCH, "aclrtMemcpy (launch payload)", e);
    }
    pld_acl_launch_attr_t attrs[2];
    memset(attrs, 0, sizeof attrs);
    attrs[0].id = PLD_ACL_LAUNCH_ATTR_SCHEM_MODE;
    attrs[0].value.schem_mode = 1; /* batch: start only when every block has a core */
    size_t nattrs = 1;
    if (l->timeout_ms) {
        const uint32_t s = (l->timeout_ms + 999) / 1000;
        attrs[1].id = PLD_ACL_LAUNCH_ATTR_TIMEOUT;
        attrs[1].value.timeout_s = (uint16_t)(s > 65535 ? 65535 : s);
        nattrs = 2;
    }
    pld_acl_launch_cfg_t cfg = {attrs, nattrs};
    uint64_t host_args[2] = {(uint64_t)(uintptr_t)dev, stride};
    e = be->f.aclrtLaunchKernelWithHostArgs(k->fn, n, be->stream, &cfg, host_args, sizeof host_args, NULL, 0);
    if (e != PLD_ACL_OK) {
        int rc = seterr(be, PLD_BE_E_LAUNCH, "ascend: launching kernel %s (%u blocks) on device %d failed with "
                        "error %d: %s", k->name, n, be->dev, e, acl_msg(be));
        be->f.aclrtFree(dev);
        return rc;
    }
    be->payload = dev;
    be->launch_ctx = l->host_ctx;
    snprintf(be->running, sizeof be->running, "kernel %s (%u block%s)", k->name, n, n == 1 ? "" : "s");
    return PLD_BE_OK;
}

/* ---- waiting (issue 40 item 6) ----
 * One aclrtSynchronizeStreamWithTimeout with the run's timeout: waiting in
 * slices makes the runtime log an ERROR (and may take a stream snapshot) for
 * every slice that times out, which buries the real error. When pldrun offers
 * should_stop (another rank failed, a hang was declared), that one call runs
 * on the waiter thread while this thread asks should_stop every 100 ms (it
 * must be asked here: it touches MPI); a stop force-resets the device, which
 * ends the kernel and the waiter's synchronisation. */

static void *waiter_main(void *arg)
{
    pld_be_t *be = arg;
    pthread_mutex_lock(&be->wmu);
    for (;;) {
        while (!be->wquit && !be->wbusy)
            pthread_cond_wait(&be->wcv, &be->wmu);
        if (be->wquit)
            break;
        const int32_t t = be->wtimeout;
        pld_acl_handle_t stream = be->stream;
        const int need_dev = !be->wdev_set;
        pthread_mutex_unlock(&be->wmu);
        pld_acl_err_t e = PLD_ACL_OK;
        if (need_dev) /* the runtime's current device is per thread */
            e = be->f.aclrtSetDevice(be->dev);
        if (e == PLD_ACL_OK)
            e = be->f.aclrtSynchronizeStreamWithTimeout(stream, t);
        const char *m = e != PLD_ACL_OK && be->f.aclGetRecentErrMsg ? be->f.aclGetRecentErrMsg() : NULL;
        pthread_mutex_lock(&be->wmu);
        be->wdev_set |= need_dev;
        be->wresult = e;
        snprintf(be->wmsg, sizeof be->wmsg, "%s", m && *m ? m : "no message from the runtime");
        be->wbusy = 0;
        be->wdone = 1;
        pthread_cond_broadcast(&be->wcv);
    }
    pthread_mutex_unlock(&be->wmu);
    return NULL;
}

static int waiter_start(pld_be_t *be)
{
    if (be->waiter_up)
        return 1;
    if (pthread_mutex_init(&be->wmu, NULL) != 0)
        return 0;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    const int cv = pthread_cond_init(&be->wcv, &ca) == 0;
    pthread_condattr_destroy(&ca);
    if (!cv || pthread_create(&be->waiter, NULL, waiter_main, be) != 0) {
        if (cv)
            pthread_cond_destroy(&be->wcv);
        pthread_mutex_destroy(&be->wmu);
        return 0;
    }
    be->waiter_up = 1;
    return 1;
}

static void waiter_stop(pld_be_t *be)
{
    if (!be->waiter_up)
        return;
    pthread_mutex_lock(&be->wmu);
    be->wquit = 1;
    pthread_cond_broadcast(&be->wcv);
    const int busy = be->wbusy;
    pthread_mutex_unlock(&be->wmu);
    if (busy) { /* a synchronisation that never returned: left behind */
        pthread_detach(be->waiter);
        be->waiter_up = 0;
        return;
    }
    pthread_join(be->waiter, NULL);
    pthread_cond_destroy(&be->wcv);
    pthread_mutex_destroy(&be->wmu);
    be->waiter_up = 0;
}

/* The one synchronisation: on the waiter (asking should_stop meanwhile) or
 * here. *stopped: should_stop said so and the device was force-reset. *msg:
 * the runtime's message, read right after the failing call. */
static pld_acl_err_t wait_stream(pld_be_t *be, int32_t t, int *stopped, char *msg, size_t msgn)
{
    *stopped = 0;
    if (!(be->host && be->host->should_stop) || !waiter_start(be)) {
        pld_acl_err_t e = be->f.aclrtSynchronizeStreamWithTimeout(be->stream, t);
        snprintf(msg, msgn, "%s", e != PLD_ACL_OK ? acl_msg(be) : "");
        return e;
    }
    pthread_mutex_lock(&be->wmu);
    be->wtimeout = t;
    be->wdone = 0;
    be->wbusy = 1;
    pthread_cond_broadcast(&be->wcv);
    int reset_at = 0;
    struct timespec now, deadline;
    while (!be->wdone) {
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_nsec += 100000000L;
        if (deadline.tv_nsec >= 1000000000L) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&be->wcv, &be->wmu, &deadline);
        if (be->wdone)
            break;
        if (!*stopped) {
            pthread_mutex_unlock(&be->wmu);
            const int stop = be->host->should_stop(be->launch_ctx);
            if (stop) {
                *stopped = 1;
                be->f.aclrtResetDeviceForce(be->dev); /* ends the kernel and the waiter's wait */
                clock_gettime(CLOCK_MONOTONIC, &now);
                reset_at = (int)now.tv_sec;
            }
            pthread_mutex_lock(&be->wmu);
        } else {
            clock_gettime(CLOCK_MONOTONIC, &now);
            if ((int)now.tv_sec - reset_at > 5) /* the reset did not end it: leave it */
                break;
        }
    }
    pld_acl_err_t e = be->wdone ? be->wresult : PLD_ACL_STREAM_SYNC_TIMEOUT;
    snprintf(msg, msgn, "%s", be->wdone ? be->wmsg : "the synchronisation did not return after the reset");
    pthread_mutex_unlock(&be->wmu);
    return e;
}

/* ---- fault recovery (issue 40 item 5; docs/ascend.md "Errors") ----
 * After a device error or a stuck kernel the error-state stream is never
 * synchronised again (the failed synchronisation was the drain, bounded by
 * the run's timeout). The device is force-reset, which ends what runs there;
 * every device handle (binaries, allocations, windows, the payload, the
 * stream) is then abandoned, not freed one by one: a free after a fault can
 * block. The card is probed (set the device, allocate and free 64 bytes) and
 * the reset retried, at most 3 times. Returns the number of resets made and
 * appends to the error what failed. */
static void recover(pld_be_t *be, int already_reset)
{
    be->broken = 1;
    be->stream = NULL;
    be->payload = NULL;
    pld_acl_err_t r = PLD_ACL_OK;
    const char *what = "";
    for (int attempt = 0; attempt < 3; attempt++) {
        if (attempt > 0 || !already_reset) {
            r = be->f.aclrtResetDeviceForce(be->dev);
            what = "aclrtResetDeviceForce";
        }
        if (r == PLD_ACL_OK) {
            r = be->f.aclrtSetDevice(be->dev);
            what = "aclrtSetDevice";
        }
        void *probe = NULL;
        if (r == PLD_ACL_OK) {
            r = be->f.aclrtMalloc(&probe, 64, PLD_ACL_MALLOC_HUGE_FIRST);
            what = "aclrtMalloc (probe)";
        }
        if (r == PLD_ACL_OK) {
            r = be->f.aclrtFree(probe);
            what = "aclrtFree (probe)";
        }
        if (r == PLD_ACL_OK)
            return;
    }
    size_t len = strlen(be->err);
    snprintf(be->err + len, sizeof be->err - len, " (and the device did not recover: %s failed with error %d after 3 "
             "resets: %s)", what, r, acl_msg(be));
    be->dev_set = 0;
}

static int asc_sync(pld_be_t *be, uint32_t timeout_ms)
{
    if (be->broken)
        return seterr(be, PLD_BE_E_DEVICE, "ascend: device %d was reset after an error and is not synchronised "
                      "again", be->dev);
    if (!be->payload)
        return PLD_BE_OK;
    /* the run's timeout, in one call; 0 (none) is -1 (a zero timeout is refused:
     * CANN runtime src/runtime/api/impl/api_error.cc:1442) */
    const int32_t t = timeout_ms == 0 || timeout_ms > (uint32_t)INT32_MAX ? -1 : (int32_t)timeout_ms;
    int stopped = 0;
    char msg[600];
    pld_acl_err_t e = wait_stream(be, t, &stopped, msg, sizeof msg);
    if (e == PLD_ACL_OK && !stopped) {
        e = be->f.aclrtFree(be->payload);
        be->payload = NULL;
        return e == PLD_ACL_OK ? PLD_BE_OK : aclfail(be, PLD_BE_E_DEVICE, "aclrtFree (launch payload)", e);
    }
    char peers[600] = "";
    if (be->peer_note[0])
        snprintf(peers, sizeof peers, " (peer access was not confirmed at window set-up: %s)", be->peer_note);
    int rc = stopped ? seterr(be, PLD_BE_E_TIMEOUT, "ascend: the run was stopped (another rank failed, or a hang "
                              "was declared) while %s ran on device %d; the device was reset", be->running, be->dev)
             : e == PLD_ACL_STREAM_SYNC_TIMEOUT
                 ? seterr(be, PLD_BE_E_TIMEOUT, "ascend: %s did not finish on device %d within %u ms (error %d: %s); "
                          "the device was reset%s", be->running, be->dev, timeout_ms, e, msg, peers)
                 : seterr(be, PLD_BE_E_DEVICE, "ascend: %s failed on device %d with error %d: %s; the device was "
                          "reset%s", be->running, be->dev, e, msg, peers);
    recover(be, stopped);
    return rc;
}

/* ---- windows (hw_backend.md §1.4, with MPI in place of files and HCCL) ---- */

/* 1 when every member's ok is set; a failed exchange counts as not ok. */
static int all_ok(const pld_be_coll_t *g, int n, int ok)
{
    int32_t mine = ok, all[MAX_MEMBERS]; /* n <= MAX_MEMBERS (window_alloc) */
    int r = g->allgather(g->ctx, &mine, all, sizeof mine) == 0;
    for (int i = 0; r && i < n; i++)
        r = all[i] != 0;
    return r;
}

static void unmap_one(pld_be_t *be, mapping_t *m)
{
    if (m->va) {
        be->f.aclrtUnmapMem(m->va);
        be->f.aclrtReleaseMemAddress(m->va);
    }
    if (m->phys)
        be->f.aclrtFreePhysical(m->phys);
    m->va = NULL;
    m->phys = NULL;
}

/* Imports first, then the own window (docs/ascend.md); nothing after a
 * device fault (abandoned: teardown). */
static void free_window_maps(pld_be_t *be, struct pld_be_window *w)
{
    for (int i = 0; i < w->n && !be->broken; i++)
        if (i != w->me)
            unmap_one(be, &w->maps[i]);
    if (!be->broken && w->me >= 0 && w->me < w->n)
        unmap_one(be, &w->maps[w->me]);
    free(w->maps);
    free(w);
}

/* Reserves an address range for physical memory m->phys of `size` bytes,
 * maps it and opens it to this device. */
static int map_here(pld_be_t *be, mapping_t *m, size_t size, uint64_t page)
{
    ACL_TRY(be, PLD_BE_E_DEVICE, aclrtReserveMemAddress, (&m->va, size, 0, NULL, page));
    pld_acl_err_t e = be->f.aclrtMapMem(m->va, size, 0, m->phys, 0);
    if (e != PLD_ACL_OK) {
        int rc = aclfail(be, PLD_BE_E_DEVICE, "aclrtMapMem", e);
        be->f.aclrtReleaseMemAddress(m->va);
        m->va = NULL;
        return rc;
    }
    pld_acl_access_desc_t acc;
    memset(&acc, 0, sizeof acc);
    acc.flags = PLD_ACL_ACCESS_READWRITE;
    /* the driver-visible id: the descriptor reaches the driver untranslated
     * (CANN runtime src/runtime/api/impl/api_error.cc:6391), unlike the
     * physical memory's location (api_error.cc:6340, a user id); under
     * ASCEND_RT_VISIBLE_DEVICES the user id names another card (507899) */
    acc.location.id = (uint32_t)be->drv_dev;
    acc.location.type = PLD_ACL_MEM_LOCATION_DEVICE;
    e = be->f.aclrtMemSetAccess(m->va, size, &acc, 1);
    if (e != PLD_ACL_OK) {
        int rc = aclfail(be, PLD_BE_E_DEVICE, "aclrtMemSetAccess", e);
        be->f.aclrtUnmapMem(m->va);
        be->f.aclrtReleaseMemAddress(m->va);
        m->va = NULL;
        return rc;
    }
    return PLD_BE_OK;
}

/* This member's window: physical memory, mapped and zeroed, exported. */
static int make_local(pld_be_t *be, size_t bytes, int fabric, mapping_t *m, announce_t *a)
{
    pld_acl_phys_prop_t prop;
    memset(&prop, 0, sizeof prop);
    prop.handle_type = PLD_ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocation_type = PLD_ACL_MEM_ALLOCATION_PINNED;
    prop.mem_attr = fabric ? PLD_ACL_HBM_MEM_HUGE : PLD_ACL_HBM_MEM_NORMAL;
    prop.location.id = (uint32_t)be->dev;
    prop.location.type = PLD_ACL_MEM_LOCATION_DEVICE;
    size_t gran = 0;
    ACL_TRY(be, PLD_BE_E_DEVICE, aclrtMemGetAllocationGranularity, (&prop, PLD_ACL_GRANULARITY_MINIMUM, &gran));
    const size_t size = gran ? (size_t)round_up(bytes, gran) : bytes;
    ACL_TRY(be, PLD_BE_E_NOMEM, aclrtMallocPhysical, (&m->phys, size, &prop, 0));
    int rc = map_here(be, m, size, fabric ? PLD_ACL_PAGE_HUGE : PLD_ACL_PAGE_NORMAL);
    if (rc != PLD_BE_OK)
        return rc;
    ACL_TRY(be, PLD_BE_E_DEVICE, aclrtMemset, (m->va, size, 0, size));
    a->size = size;
    a->dev = be->dev;
    a->drv = be->drv_dev;
    a->rank = be->rank;
    a->pid = (int32_t)getpid();
    if (fabric) {
        pld_acl_err_t e = be->f.aclrtMemExportToShareableHandleV2(m->phys, PLD_ACL_EXPORT_DISABLE_PID_VALIDATION,
                                                                   PLD_ACL_SHARE_HANDLE_FABRIC, a->fabric);
        if (e == PLD_ACL_FEATURE_NOT_SUPPORT)
            return PLD_BE_E_UNSUPPORTED; /* the caller falls back to the legacy path */
        if (e != PLD_ACL_OK)
            return aclfail(be, PLD_BE_E_DEVICE, "aclrtMemExportToShareableHandleV2", e);
        a->path = PATH_FABRIC;
    } else {
        ACL_TRY(be, PLD_BE_E_DEVICE, aclrtMemExportToShareableHandle,
                (m->phys, PLD_ACL_MEM_HANDLE_TYPE_NONE, PLD_ACL_EXPORT_DISABLE_PID_VALIDATION, &a->handle));
        a->path = PATH_IPC;
    }
    return PLD_BE_OK;
}

/* Legacy path: peer access to every other member's device, by its user id
 * here (the peer's driver id translated). Never fatal: with one process per
 * device the status query can report 0 forever after a successful enable,
 * and an enable of a pair already enabled (one per comm domain) answers a
 * non-success (hw-native-sys/simpler src/a5/platform/onboard/host/
 * comm_hccl.cpp:550-568 warns and goes on). What they answered is kept for
 * the report of a failed import, or of a failed kernel (the first access). */
static void enable_peers(pld_be_t *be, const announce_t *all, int n)
{
    be->peer_note[0] = '\0';
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        be->pa_enable[i] = be->pa_status[i] = 0;
        const int32_t peer_drv = all[i].drv;
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= all[j].drv == peer_drv;
        if (peer_drv == be->drv_dev || seen) {
            be->pa_status[i] = 1;
            continue;
        }
        const int32_t peer = user_of_drv(be, peer_drv);
        int32_t status = -1;
        if (peer < 0) {
            be->pa_enable[i] = -1;
        } else {
            be->pa_enable[i] = be->f.aclrtDeviceEnablePeerAccess(peer, 0);
            if (be->f.aclrtDevicePeerAccessStatus(be->dev, peer, &status) != PLD_ACL_OK)
                status = -1;
        }
        be->pa_status[i] = status;
        if ((be->pa_enable[i] != PLD_ACL_OK || status != 1) && len + 160 < sizeof be->peer_note)
            len += (size_t)snprintf(be->peer_note + len, sizeof be->peer_note - len,
                                    "%sdevice %d (driver id %d): %s%d, status %d", len ? "; " : "", peer, peer_drv,
                                    peer < 0 ? "not visible here (ASCEND_RT_VISIBLE_DEVICES), enable " : "enable ",
                                    be->pa_enable[i], status);
    }
}

static int import_peer(pld_be_t *be, const announce_t *a, mapping_t *m)
{
    pld_acl_err_t e = a->path == PATH_FABRIC
                          ? be->f.aclrtMemImportFromShareableHandleV2((void *)a->fabric, PLD_ACL_SHARE_HANDLE_FABRIC,
                                                                      0, &m->phys)
                          : be->f.aclrtMemImportFromShareableHandle(a->handle, be->dev, &m->phys);
    if (e != PLD_ACL_OK)
        return seterr(be, PLD_BE_E_DEVICE, "ascend: rank %d: importing the window of rank %d (device %d, driver id "
                      "%d) failed with error %d: %s%s", be->rank, a->rank, a->dev, a->drv, e, acl_msg(be),
                      a->path == PATH_FABRIC ? " (Fabric handle)" : "");
    return map_here(be, m, (size_t)a->size, a->path == PATH_FABRIC ? PLD_ACL_PAGE_HUGE : PLD_ACL_PAGE_NORMAL);
}

static int asc_window_alloc(pld_be_t *be, const pld_be_coll_t *g, const int *ranks, int n, int me, size_t bytes,
                           pld_be_window_t **out, pld_be_devptr_t *bases, size_t *mapped)
{
    (void)ranks;
    *out = NULL;
    if (n < 1 || n > MAX_MEMBERS || me < 0 || me >= n) /* the same on every member: no collective step is missed */
        return seterr(be, PLD_BE_E_INVAL, "ascend: a comm domain of %d members (at most %d)", n, MAX_MEMBERS);
    announce_t *all = be->members;
    struct pld_be_window *w = calloc(1, sizeof *w);
    if (w) {
        w->maps = calloc((size_t)n, sizeof *w->maps);
        w->n = n;
        w->me = me;
    }
    announce_t mine;
    memset(&mine, 0, sizeof mine);
    int rc = !w || !w->maps ? seterr(be, PLD_BE_E_NOMEM, "ascend: out of memory")
             : be->broken ? seterr(be, PLD_BE_E_DEVICE, "ascend: device %d was reset after an error", be->dev)
                          : PLD_BE_OK;
    /* the local window: Fabric V2 first when the runtime has it (A3), else
     * (or when the card says it cannot) legacy VMM handles */
    int fabric = be->fabric && be->f.aclrtMemExportToShareableHandleV2 && be->f.aclrtMemImportFromShareableHandleV2;
    if (rc == PLD_BE_OK) {
        rc = make_local(be, bytes, fabric, &w->maps[me], &mine);
        if (rc == PLD_BE_E_UNSUPPORTED && fabric) {
            unmap_one(be, &w->maps[me]);
            memset(&mine, 0, sizeof mine);
            fabric = 0;
            rc = make_local(be, bytes, 0, &w->maps[me], &mine);
        }
    }
    mine.ok = rc == PLD_BE_OK;
    /* the handle exchange (replaces simpler's announce files) */
    if (g->allgather(g->ctx, &mine, all, sizeof mine) != 0) {
        rc = rc != PLD_BE_OK ? rc : seterr(be, PLD_BE_E_COMM, "ascend: the window handle exchange failed");
        mine.ok = 0;
    }
    for (int i = 0; rc == PLD_BE_OK && i < n; i++) {
        if (!all[i].ok)
            rc = seterr(be, PLD_BE_E_COMM, "ascend: member %d of the comm domain could not create its window (see "
                        "its message)", i);
        else if (all[i].size != mine.size || all[i].path != mine.path)
            rc = seterr(be, PLD_BE_E_COMM, "ascend: the members' windows differ (member %d: %llu bytes over %s, "
                        "member %d: %llu bytes over %s); every member needs the same size and handle type", i,
                        (unsigned long long)all[i].size, all[i].path == PATH_FABRIC ? "fabric" : "ipc", me,
                        (unsigned long long)mine.size, mine.path == PATH_FABRIC ? "fabric" : "ipc");
    }
    if (rc == PLD_BE_OK && mine.path == PATH_IPC)
        enable_peers(be, all, n);
    if (!all_ok(g, n, rc == PLD_BE_OK) && rc == PLD_BE_OK)
        rc = seterr(be, PLD_BE_E_COMM, "ascend: another member of the comm domain failed to set up its window "
                    "(see its message)");
    for (int i = 0; rc == PLD_BE_OK && i < n; i++)
        if (i != me) {
            rc = import_peer(be, &all[i], &w->maps[i]);
            if (rc != PLD_BE_OK && mine.path == PATH_IPC) {
                size_t len = strlen(be->err);
                snprintf(be->err + len, sizeof be->err - len, "; peer access from device %d to device %d: enable "
                         "answered %d, status %d", be->dev, all[i].dev, be->pa_enable[i], be->pa_status[i]);
            }
        }
    if (!all_ok(g, n, rc == PLD_BE_OK) && rc == PLD_BE_OK)
        rc = seterr(be, PLD_BE_E_COMM, "ascend: another member of the comm domain failed to map the windows (see "
                    "its message)");
    if (rc != PLD_BE_OK) {
        if (w && w->maps)
            free_window_maps(be, w);
        else
            free(w);
        return rc;
    }
    w->size = (size_t)mine.size;
    *mapped = w->size;
    for (int i = 0; i < n; i++)
        bases[i] = (pld_be_devptr_t)(uintptr_t)w->maps[i].va;
    w->next = be->windows;
    be->windows = w;
    *out = w;
    return PLD_BE_OK;
}

static int asc_window_free(pld_be_t *be, pld_be_window_t *w, const pld_be_coll_t *g)
{
    /* no member may still read or write a window being unmapped */
    int rc = g->barrier(g->ctx) == 0 ? PLD_BE_OK
                                     : seterr(be, PLD_BE_E_COMM, "ascend: the barrier before freeing a window failed");
    for (struct pld_be_window **pp = &be->windows; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            free_window_maps(be, w);
            return rc;
        }
    return seterr(be, PLD_BE_E_INVAL, "ascend: free of a window this backend did not map");
}

static const pld_be_ops_t ascend_ops = {
    .abi = PLD_BE_ABI,
    .struct_size = sizeof(pld_be_ops_t),
    .name = "ascend",
    .description = "AIV kernels on Ascend NPUs through CANN (ACL runtime loaded at run time)",
    .caps = PLD_BE_CAP_WINDOWS | PLD_BE_CAP_GANG,
    .open = asc_open,
    .close = asc_close,
    .last_error = asc_last_error,
    .kernel_load = asc_kernel_load,
    .launch = asc_launch,
    .sync = asc_sync,
    .program_load = asc_program_load,
    .kernel_unload = asc_kernel_unload,
    .mem_alloc = asc_mem_alloc,
    .mem_free = asc_mem_free,
    .upload = asc_upload,
    .download = asc_download,
    .window_alloc = asc_window_alloc,
    .window_free = asc_window_free,
};

__attribute__((visibility("default"))) const pld_be_ops_t *pld_backend_entry(uint32_t requested_abi);
const pld_be_ops_t *pld_backend_entry(uint32_t requested_abi)
{
    return requested_abi == PLD_BE_ABI ? &ascend_ops : NULL;
}
