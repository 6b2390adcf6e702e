/* acl_fake_mem.c - the fake ACL runtime (acl_fake.c): device memory (aclrtMalloc,
 * copies and memsets checked against the live allocations) and VMM windows
 * (physical allocations as POSIX shared-memory objects, reserved and mapped
 * ranges, export and import of shareable handles). */
#include "acl_fake_int.h"

/* ============================================================ device memory */

FAKE_API aclError aclrtMalloc(void **devPtr, size_t size, int policy)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtMalloc, NEED_DEVICE);
    ja_u(&c, "size", size);
    ja_i(&c, "policy", policy);
    if (!rc && (!devPtr || size == 0))
        rc = fail(&c, E_PARAM, "%s", !devPtr ? "devPtr is NULL" : "size is 0");
    if (!rc && (policy < 0 || policy > 2))
        rc = fail(&c, E_PARAM, "unknown malloc policy %d", policy);
    void *p = NULL;
    alloc_t *a = NULL;
    if (!rc) {
        const size_t body = (size + 63) & ~(size_t)63;
        a = malloc(sizeof *a);
        if (!a || posix_memalign(&p, 64, body + CANARY) != 0) {
            free(a);
            rc = fail(&c, E_ALLOC, "out of host memory for %zu bytes", size);
        }
    }
    if (!rc) {
        memset(p, 0xA5, size); /* device memory is not zeroed */
        memset((unsigned char *)p + size, CANARY_BYTE, ((size + 63) & ~(size_t)63) - size + CANARY);
        a->ptr = p;
        a->size = size;
        a->dev = drv_id(cur_dev);
        a->gen = dev_faults[a->dev];
        a->next = allocs;
        allocs = a;
        *devPtr = p;
    }
    if (!rc)
        ja_p(&c, "ptr", p);
    return call_end(&c, rc);
}

FAKE_API aclError aclrtFree(void *devPtr)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtFree, NEED_DEVICE);
    ja_p(&c, "ptr", devPtr);
    alloc_t **pp = &allocs;
    while (!rc && *pp && (*pp)->ptr != devPtr)
        pp = &(*pp)->next;
    if (!rc && !*pp)
        rc = fail(&c, E_FREE, "%p is not a live device allocation", devPtr);
    if (!rc)
        rc = block_if_faulted(&c, (*pp)->dev, (*pp)->gen);
    if (!rc) {
        alloc_t *a = *pp;
        *pp = a->next;
        const size_t end = ((a->size + 63) & ~(size_t)63) + CANARY;
        for (size_t i = a->size; i < end; i++)
            if (a->ptr[i] != CANARY_BYTE) {
                rc = fail(&c, E_FREE, "the canary after allocation %p (%zu bytes) is overwritten at byte %zu",
                          (void *)a->ptr, a->size, i);
                break;
            }
        free(a->ptr);
        free(a);
    }
    return call_end(&c, rc);
}

static const char *kind_name(int kind)
{
    static const char *const names[] = {"H2H", "H2D", "D2H", "D2D"};
    return kind >= 0 && kind <= 3 ? names[kind] : "?";
}

/* The device / host side checks of one side of a copy. */
static aclError check_side(call_t *c, const char *what, const void *p, size_t n, int want_device)
{
    if (want_device && !is_device(p, n))
        return fail(c, E_PARAM, "%s %p (%zu bytes) is not inside one device allocation or mapped window", what, p, n);
    if (!want_device && touches_device(p, n))
        return fail(c, E_PARAM, "%s %p (%zu bytes) is device memory, but the copy kind says host", what, p, n);
    return 0;
}

FAKE_API aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, int kind)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtMemcpy, NEED_DEVICE);
    ja_p(&c, "dst", dst);
    ja_u(&c, "destMax", destMax);
    ja_p(&c, "src", src);
    ja_u(&c, "count", count);
    ja_i(&c, "kind", kind);
    if (!rc && (!dst || !src))
        rc = fail(&c, E_PARAM, "%s is NULL", dst ? "src" : "dst");
    if (!rc && count > destMax)
        rc = fail(&c, E_PARAM, "count %zu exceeds destMax %zu", count, destMax);
    if (!rc && (kind < KIND_H2H || kind > KIND_D2D))
        rc = fail(&c, E_PARAM, "unknown copy kind %d", kind);
    if (!rc && count > 0) {
        rc = check_side(&c, kind == KIND_H2D || kind == KIND_D2D ? "device destination" : "host destination", dst,
                        count, kind == KIND_H2D || kind == KIND_D2D);
        if (!rc)
            rc = check_side(&c, kind == KIND_D2H || kind == KIND_D2D ? "device source" : "host source", src, count,
                            kind == KIND_D2H || kind == KIND_D2D);
        if (rc)
            snprintf(c.err + strlen(c.err), sizeof c.err - strlen(c.err), " (kind %s)", kind_name(kind));
        if (rc)
            snprintf(recent_err, sizeof recent_err, "%s", c.err);
    }
    if (!rc && count > 0)
        memmove(dst, src, count);
    return call_end(&c, rc);
}

FAKE_API aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtMemset, NEED_DEVICE);
    ja_p(&c, "ptr", devPtr);
    ja_u(&c, "maxCount", maxCount);
    ja_i(&c, "value", value);
    ja_u(&c, "count", count);
    if (!rc && count > maxCount)
        rc = fail(&c, E_PARAM, "count %zu exceeds maxCount %zu", count, maxCount);
    if (!rc && count > 0)
        rc = check_side(&c, "destination", devPtr, count, 1);
    if (!rc && count > 0)
        memset(devPtr, value, count);
    return call_end(&c, rc);
}

/* ============================================================ VMM windows */

FAKE_API aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp *prop, int option, size_t *granularity)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtMemGetAllocationGranularity, NEED_INIT);
    ja_i(&c, "option", option);
    if (prop) {
        ja_i(&c, "memAttr", prop->memAttr);
        ja_i(&c, "locationType", prop->location.type);
        ja_u(&c, "locationId", prop->location.id);
    }
    if (!rc && (!prop || !granularity))
        rc = fail(&c, E_PARAM, "%s is NULL", prop ? "granularity" : "prop");
    if (!rc && (option < 0 || option > 1))
        rc = fail(&c, E_PARAM, "unknown granularity option %d", option);
    if (!rc && prop->location.type != LOC_DEVICE)
        rc = fail(&c, E_PARAM, "location type %d is not device (%d)", prop->location.type, LOC_DEVICE);
    /* a user id, translated (api_error.cc:6498-6510, GetAllocationGranularity) */
    if (!rc && prop->location.id >= (uint32_t)cfg.nvisible)
        rc = fail(&c, E_DEVICE_ID, "location id %u is not a visible device (%d)", prop->location.id, cfg.nvisible);
    if (!rc)
        *granularity = cfg.granularity;
    if (!rc)
        ja_u(&c, "granularity", cfg.granularity);
    return call_end(&c, rc);
}

static void unlink_at_exit(void)
{
    pthread_mutex_lock(&mu);
    unlink_owned();
    pthread_mutex_unlock(&mu);
}

FAKE_API aclError aclrtMallocPhysical(aclrtDrvMemHandle *handle, size_t size, const aclrtPhysicalMemProp *prop,
                                      uint64_t flags)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtMallocPhysical, NEED_DEVICE);
    ja_u(&c, "size", size);
    ja_u(&c, "flags", flags);
    if (prop) {
        ja_i(&c, "handleType", prop->handleType);
        ja_i(&c, "allocationType", prop->allocationType);
        ja_i(&c, "memAttr", prop->memAttr);
        ja_i(&c, "locationType", prop->location.type);
        ja_u(&c, "locationId", prop->location.id);
    }
    if (!rc && (!handle || !prop))
        rc = fail(&c, E_PARAM, "%s is NULL", handle ? "prop" : "handle");
    if (!rc && (size == 0 || size % cfg.granularity))
        rc = fail(&c, E_PARAM, "size %zu is not a positive multiple of the granularity %zu", size, cfg.granularity);
    if (!rc && prop->allocationType != 0)
        rc = fail(&c, E_PARAM, "allocation type %d is not pinned (0)", prop->allocationType);
    if (!rc && prop->memAttr != MEM_HUGE && prop->memAttr != MEM_NORMAL)
        rc = fail(&c, E_PARAM, "memAttr %d is not HBM huge (%d) or normal (%d)", prop->memAttr, MEM_HUGE, MEM_NORMAL);
    /* location.id is a user (logical) id: the runtime translates it to the
     * driver's (api_error.cc:6340-6344, ChgUserDevIdToDeviceId) */
    if (!rc && (prop->location.type != LOC_DEVICE || (int)prop->location.id != cur_dev))
        rc = fail(&c, prop->location.type == LOC_DEVICE && (int)prop->location.id >= cfg.nvisible ? E_DEVICE_ID
                                                                                                    : E_PARAM,
                  "location {id %u, type %d} is not the current device %d (a user id)", prop->location.id,
                  prop->location.type, cur_dev);
    if (!rc && flags != 0)
        rc = fail(&c, E_PARAM, "flags must be 0 (got %llu)", (unsigned long long)flags);
    phys_t *p = NULL;
    if (!rc) {
        p = calloc(1, sizeof *p);
        if (!p)
            rc = fail(&c, E_ALLOC, "out of host memory");
    }
    if (!rc) {
        p->counter = ++phys_counter;
        snprintf(p->name, sizeof p->name, "/acl_fake_%ld_%u", (long)getpid(), p->counter);
        p->fd = shm_open(p->name, O_RDWR | O_CREAT | O_EXCL, 0600);
        void *m = MAP_FAILED;
        if (p->fd >= 0 && ftruncate(p->fd, (off_t)size) == 0)
            m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, 0);
        if (m == MAP_FAILED) {
            rc = fail(&c, E_ALLOC, "shared memory object %s of %zu bytes: %s", p->name, size, strerror(errno));
            if (p->fd >= 0) {
                close(p->fd);
                shm_unlink_all(p->name);
            }
            free(p);
        } else {
            memset(m, 0xA5, size); /* device memory is not zeroed */
            munmap(m, size);
            p->size = size;
            p->dev = drv_id(cur_dev);
            p->gen = dev_faults[p->dev];
            p->owner = 1;
            p->next = physs;
            physs = p;
            *handle = p;
            if (!atexit_done)
                atexit_done = atexit(unlink_at_exit) == 0;
        }
    }
    if (!rc)
        ja_p(&c, "handle", p);
    return call_end(&c, rc);
}

FAKE_API aclError aclrtFreePhysical(aclrtDrvMemHandle handle)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtFreePhysical, NEED_DEVICE);
    ja_p(&c, "handle", handle);
    phys_t **pp = &physs;
    while (!rc && *pp && (void *)*pp != handle)
        pp = &(*pp)->next;
    if (!rc && !*pp)
        rc = fail(&c, E_HANDLE, "%p is not a live physical allocation", handle);
    if (!rc && (*pp)->nmaps)
        rc = fail(&c, E_FREE, "physical allocation %p is still mapped %d time(s) (aclrtUnmapMem first)", handle,
                  (*pp)->nmaps);
    if (!rc)
        rc = block_if_faulted(&c, (*pp)->dev, (*pp)->gen);
    if (!rc) {
        phys_t *p = *pp;
        *pp = p->next;
        close(p->fd);
        if (p->owner && p->name[0])
            shm_unlink_all(p->name);
        free(p);
    }
    return call_end(&c, rc);
}

FAKE_API aclError aclrtReserveMemAddress(void **virPtr, size_t size, size_t alignment, void *expectPtr, uint64_t flags)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtReserveMemAddress, NEED_DEVICE);
    ja_u(&c, "size", size);
    ja_u(&c, "align", alignment);
    ja_p(&c, "expect", expectPtr);
    ja_u(&c, "flags", flags);
    if (!rc && !virPtr)
        rc = fail(&c, E_PARAM, "virPtr is NULL");
    if (!rc && (size == 0 || size % cfg.granularity))
        rc = fail(&c, E_PARAM, "size %zu is not a positive multiple of the granularity %zu", size, cfg.granularity);
    if (!rc && alignment & (alignment - 1))
        rc = fail(&c, E_PARAM, "alignment %zu is not a power of 2", alignment);
    if (!rc && flags > 1)
        rc = fail(&c, E_PARAM, "page type %llu is not normal (0) or huge (1)", (unsigned long long)flags);
    resv_t *r = NULL;
    void *va = MAP_FAILED;
    if (!rc) {
        r = calloc(1, sizeof *r);
        va = r ? mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0) : MAP_FAILED;
        if (va == MAP_FAILED) {
            free(r);
            rc = fail(&c, E_ALLOC, "cannot reserve %zu bytes of address space", size);
        }
    }
    if (!rc) {
        r->va = va;
        r->size = size;
        r->dev = drv_id(cur_dev);
        r->next = resvs;
        resvs = r;
        *virPtr = va;
    }
    if (!rc)
        ja_p(&c, "va", va);
    return call_end(&c, rc);
}

FAKE_API aclError aclrtReleaseMemAddress(void *virPtr)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtReleaseMemAddress, NEED_DEVICE);
    ja_p(&c, "va", virPtr);
    resv_t **pp = &resvs;
    while (!rc && *pp && (*pp)->va != virPtr)
        pp = &(*pp)->next;
    if (!rc && !*pp)
        rc = fail(&c, E_PARAM, "%p is not a reserved address range", virPtr);
    if (!rc && (*pp)->mapped)
        rc = fail(&c, E_PARAM, "address range %p is still mapped (aclrtUnmapMem first)", virPtr);
    if (!rc) {
        resv_t *r = *pp;
        *pp = r->next;
        munmap(r->va, r->size);
        free(r);
    }
    return call_end(&c, rc);
}

FAKE_API aclError aclrtMapMem(void *virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle, uint64_t flags)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtMapMem, NEED_DEVICE);
    ja_p(&c, "va", virPtr);
    ja_u(&c, "size", size);
    ja_u(&c, "offset", offset);
    ja_p(&c, "handle", handle);
    ja_u(&c, "flags", flags);
    resv_t *r = rc ? NULL : find_resv(virPtr);
    phys_t *p = rc ? NULL : find_phys(handle);
    if (!rc && !r)
        rc = fail(&c, E_PARAM, "%p is not the start of a reserved address range", virPtr);
    if (!rc && !p)
        rc = fail(&c, E_HANDLE, "%p is not a live physical allocation", handle);
    if (!rc && r->mapped)
        rc = fail(&c, E_PARAM, "address range %p is already mapped", virPtr);
    if (!rc && (size != r->size || size != p->size || offset != 0))
        rc = fail(&c, E_PARAM,
                  "the fake maps whole ranges only: size %zu, offset %zu (reserved %zu, physical %zu bytes)", size,
                  offset, r->size, p->size);
    if (!rc && flags != 0)
        rc = fail(&c, E_PARAM, "flags must be 0 (got %llu)", (unsigned long long)flags);
    if (!rc && mmap(virPtr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, p->fd, 0) == MAP_FAILED)
        rc = fail(&c, E_ALLOC, "mmap of %s: %s", p->name, strerror(errno));
    if (!rc) {
        r->mapped = p;
        r->access = 0;
        p->nmaps++;
    }
    return call_end(&c, rc);
}

FAKE_API aclError aclrtUnmapMem(void *virPtr)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtUnmapMem, NEED_DEVICE);
    ja_p(&c, "va", virPtr);
    resv_t *r = rc ? NULL : find_resv(virPtr);
    if (!rc && (!r || !r->mapped))
        rc = fail(&c, E_PARAM, "%p is not a mapped address range", virPtr);
    if (!rc && mmap(virPtr, r->size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) ==
                   MAP_FAILED)
        rc = fail(&c, E_FREE, "unmap: %s", strerror(errno));
    if (!rc) {
        r->mapped->nmaps--;
        r->mapped = NULL;
        r->access = 0;
    }
    return call_end(&c, rc);
}

FAKE_API aclError aclrtMemSetAccess(void *virPtr, size_t size, aclrtMemAccessDesc *desc, size_t count)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtMemSetAccess, NEED_DEVICE);
    ja_p(&c, "va", virPtr);
    ja_u(&c, "size", size);
    ja_u(&c, "count", count);
    if (desc && count) {
        ja_i(&c, "flags", desc->flags);
        ja_i(&c, "locationType", desc->location.type);
        ja_u(&c, "locationId", desc->location.id);
    }
    resv_t *r = rc ? NULL : find_resv(virPtr);
    if (!rc && (!r || !r->mapped))
        rc = fail(&c, E_PARAM, "%p is not the start of a mapped address range", virPtr);
    if (!rc && size != r->size)
        rc = fail(&c, E_PARAM, "size %zu differs from the mapped range's %zu", size, r->size);
    if (!rc && (!desc || count != 1))
        rc = fail(&c, E_PARAM, "expected one access descriptor (got %zu)", desc ? count : 0);
    if (!rc && desc->flags != ACCESS_RW)
        rc = fail(&c, E_PARAM, "access flags %d are not read-write (%d)", desc->flags, ACCESS_RW);
    /* location.id is the driver-visible id: the descriptor goes to the driver
     * untranslated (api_error.cc:6391-6396); a user id under
     * ASCEND_RT_VISIBLE_DEVICES names another card, which the driver refuses
     * with 507899 (simpler, src/a2a3/platform/onboard/host/comm_hccl.cpp:273-276) */
    if (!rc && desc->location.type != LOC_DEVICE)
        rc = fail(&c, E_PARAM, "location type %d is not device (%d)", desc->location.type, LOC_DEVICE);
    if (!rc && (int)desc->location.id != drv_id(cur_dev))
        rc = fail(&c, E_DRV, "drv internal error: location id %u is not the driver id %d of the current device %d "
                  "(ASCEND_RT_VISIBLE_DEVICES: user ids are not driver ids)", desc->location.id, drv_id(cur_dev),
                  cur_dev);
    if (!rc)
        r->access = 1;
    return call_end(&c, rc);
}

/* Sharing. A legacy handle is 64 bits: pid (32) | counter (16) | device (8)
 * | flags (4) | tag 0xA (4). A fabric handle is 128 bytes: "ACLFAKE-FABRIC",
 * then pid, counter, device, flags as 32-bit words at bytes 16.. . */
#define LEGACY_TAG 0xAull
#define FABRIC_TAG "ACLFAKE-FABRIC"

typedef struct share {
    long pid;
    unsigned counter;
    int dev, flags;
} share_t;

static uint64_t legacy_encode(const share_t *s)
{
    return (uint64_t)(uint32_t)s->pid | (uint64_t)(s->counter & 0xFFFFu) << 32 | (uint64_t)(s->dev & 0xFF) << 48 |
           (uint64_t)(s->flags & 0xF) << 56 | LEGACY_TAG << 60;
}

static int legacy_decode(uint64_t h, share_t *s)
{
    s->pid = (long)(uint32_t)h;
    s->counter = (unsigned)(h >> 32 & 0xFFFF);
    s->dev = (int)(h >> 48 & 0xFF);
    s->flags = (int)(h >> 56 & 0xF);
    return h >> 60 == LEGACY_TAG;
}

static aclError do_export(call_t *c, void *handle, uint64_t flags, share_t *s)
{
    aclError rc = 0;
    phys_t *p = find_phys(handle);
    if (!rc && !p)
        rc = fail(c, E_HANDLE, "%p is not a live physical allocation", handle);
    if (!rc && !p->owner)
        rc = fail(c, E_PARAM, "%p was imported: only the owner exports it", handle);
    if (!rc && flags > NO_PID_CHECK)
        rc = fail(c, E_PARAM, "unknown export flags %llu", (unsigned long long)flags);
    /* CANN 8.0: the export flags are reserved (issue 40 item 4: PID validation
     * cannot be turned off; share with aclrtMemSetPidToShareableHandle) */
    if (!rc && flags && (cfg.ver_major < 8 || (cfg.ver_major == 8 && cfg.ver_minor < 2)))
        rc = fail(c, E_PARAM, "export flags are reserved in CANN %s (must be 0)", cfg.version);
    if (!rc && p->counter > 0xFFFF)
        rc = fail(c, E_NOT_SUPPORTED, "the fake exports at most 65535 allocations per process");
    if (!rc) {
        s->pid = (long)getpid();
        s->counter = p->counter;
        s->dev = p->dev;
        s->flags = (int)flags;
    }
    return rc;
}

/* The PID whitelist of an exported allocation: a shm object next to it
 * ("<name>_pids", written by aclrtMemSetPidToShareableHandle), so that the
 * importing process can read it. 1 when this process is on it. */
static int pid_granted(const share_t *s)
{
    char name[80];
    snprintf(name, sizeof name, "/acl_fake_%ld_%u_pids", s->pid, s->counter);
    int fd = shm_open(name, O_RDONLY, 0);
    if (fd < 0)
        return 0;
    int32_t pids[8] = {0};
    ssize_t n = read(fd, pids, sizeof pids);
    close(fd);
    for (ssize_t i = 0; i < n / 4; i++)
        if (pids[i] == (int32_t)getpid())
            return 1;
    return 0;
}

/* Opens the object s names as a new handle of this process. */
static aclError do_import(call_t *c, const share_t *s, int fabric, void **out)
{
    aclError rc;
    if (!out)
        return fail(c, E_PARAM, "handle is NULL");
    if (s->dev < 0 || s->dev >= cfg.devices)
        return fail(c, E_IPC, "the handle names device %d, out of range", s->dev);
    if (s->pid != (long)getpid() && !(s->flags & NO_PID_CHECK) && !pid_granted(s))
        return fail(c, E_IPC,
                    "process %ld exported the handle without DISABLE_PID_VALIDATION, and no pid was granted to "
                    "process %ld (aclrtMemSetPidToShareableHandle)",
                    s->pid, (long)getpid());
    const int here = drv_id(cur_dev);
    if (!fabric && s->dev != here && !peer_ok[here][s->dev])
        return fail(c, E_IPC, "peer access to device %d not enabled on device %d (aclrtDeviceEnablePeerAccess)",
                    s->dev, here);
    phys_t *p = calloc(1, sizeof *p);
    if (!p)
        return fail(c, E_ALLOC, "out of host memory");
    snprintf(p->name, sizeof p->name, "/acl_fake_%ld_%u", s->pid, s->counter);
    p->fd = shm_open(p->name, O_RDWR, 0);
    struct stat st;
    if (p->fd < 0 || fstat(p->fd, &st) != 0) {
        rc = fail(c, E_IPC, "no exported memory %s (freed, or the exporter exited): %s", p->name, strerror(errno));
        if (p->fd >= 0)
            close(p->fd);
        free(p);
        return rc;
    }
    p->size = (size_t)st.st_size;
    p->dev = drv_id(cur_dev);
    p->gen = dev_faults[p->dev];
    p->counter = s->counter;
    p->next = physs;
    physs = p;
    *out = p;
    ja_p(c, "out", p);
    ja_u(c, "size", p->size);
    return 0;
}

FAKE_API aclError aclrtMemExportToShareableHandle(aclrtDrvMemHandle handle, int handleType, uint64_t flags,
                                                  uint64_t *shareableHandle)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtMemExportToShareableHandle, NEED_DEVICE);
    ja_p(&c, "handle", handle);
    ja_i(&c, "handleType", handleType);
    ja_u(&c, "flags", flags);
    share_t s;
    if (!rc)
        rc = shareableHandle ? do_export(&c, handle, flags, &s) : fail(&c, E_PARAM, "shareableHandle is NULL");
    if (!rc && handleType != 0)
        rc = fail(&c, E_PARAM, "handle type %d is not ACL_MEM_HANDLE_TYPE_NONE (0)", handleType);
    if (!rc)
        *shareableHandle = legacy_encode(&s);
    if (!rc)
        ja_raw(&c, "shareable", "\"0x%016llx\"", (unsigned long long)*shareableHandle);
    return call_end(&c, rc);
}

FAKE_API aclError aclrtMemImportFromShareableHandle(uint64_t shareableHandle, int32_t deviceId,
                                                    aclrtDrvMemHandle *handle)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtMemImportFromShareableHandle, NEED_DEVICE);
    ja_raw(&c, "shareable", "\"0x%016llx\"", (unsigned long long)shareableHandle);
    ja_i(&c, "device", deviceId);
    share_t s;
    if (!rc && !legacy_decode(shareableHandle, &s))
        rc = fail(&c, E_IPC, "0x%016llx is not a handle the fake exported", (unsigned long long)shareableHandle);
    if (!rc && deviceId != cur_dev)
        rc = fail(&c, E_PARAM, "device %d is not the current device %d", deviceId, cur_dev);
    if (!rc)
        rc = do_import(&c, &s, 0, handle);
    return call_end(&c, rc);
}

FAKE_API aclError aclrtMemExportToShareableHandleV2(aclrtDrvMemHandle handle, uint64_t flags, int shareType,
                                                    void *shareableHandle)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtMemExportToShareableHandleV2, NEED_DEVICE);
    ja_p(&c, "handle", handle);
    ja_u(&c, "flags", flags);
    ja_i(&c, "type", shareType);
    share_t s;
    if (!rc)
        rc = need_version(&c, 8, 2);
    if (!rc && cfg.no_fabric)
        rc = fail(&c, E_NOT_SUPPORTED, "fabric handles are not supported on this device (ACL_FAKE_NO_FABRIC)");
    if (!rc && shareType != SHARE_FABRIC)
        rc = fail(&c, E_PARAM, "share type %d is not fabric (%d)", shareType, SHARE_FABRIC);
    if (!rc && !shareableHandle)
        rc = fail(&c, E_PARAM, "shareableHandle is NULL");
    if (!rc)
        rc = do_export(&c, handle, flags, &s);
    if (!rc) {
        unsigned char *out = shareableHandle;
        uint32_t w[4] = {(uint32_t)s.pid, s.counter, (uint32_t)s.dev, (uint32_t)s.flags};
        memset(out, 0, FABRIC_BYTES);
        memcpy(out, FABRIC_TAG, sizeof FABRIC_TAG);
        memcpy(out + 16, w, sizeof w);
    }
    return call_end(&c, rc);
}

FAKE_API aclError aclrtMemImportFromShareableHandleV2(void *shareableHandle, int shareType, uint64_t flags,
                                                      aclrtDrvMemHandle *handle)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtMemImportFromShareableHandleV2, NEED_DEVICE);
    ja_i(&c, "type", shareType);
    ja_u(&c, "flags", flags);
    if (!rc && shareType != SHARE_FABRIC)
        rc = fail(&c, E_PARAM, "share type %d is not fabric (%d)", shareType, SHARE_FABRIC);
    if (!rc && (!shareableHandle || memcmp(shareableHandle, FABRIC_TAG, sizeof FABRIC_TAG) != 0))
        rc = fail(&c, E_IPC, "not a fabric handle the fake exported");
    if (!rc) {
        uint32_t w[4];
        memcpy(w, (unsigned char *)shareableHandle + 16, sizeof w);
        share_t s = {.pid = (long)w[0], .counter = w[1], .dev = (int)w[2], .flags = (int)w[3]};
        ja_i(&c, "exporter_pid", s.pid);
        ja_i(&c, "exporter_device", s.dev);
        rc = do_import(&c, &s, 1, handle);
    }
    return call_end(&c, rc);
}

/* The whitelist of a legacy handle (acl_rt.h:3390): the processes (as
 * aclrtDeviceGetBareTgid names them) that may import it when it was exported
 * with PID validation on. */
FAKE_API aclError aclrtMemSetPidToShareableHandle(uint64_t shareableHandle, int32_t *pid, size_t pidNum)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtMemSetPidToShareableHandle, NEED_DEVICE);
    ja_raw(&c, "shareable", "\"0x%016llx\"", (unsigned long long)shareableHandle);
    ja_u(&c, "pidNum", pidNum);
    share_t s;
    if (!rc && !legacy_decode(shareableHandle, &s))
        rc = fail(&c, E_PARAM, "0x%016llx is not a handle the fake exported", (unsigned long long)shareableHandle);
    if (!rc && s.pid != (long)getpid())
        rc = fail(&c, E_PARAM, "only the exporting process sets the whitelist");
    if (!rc && (!pid || pidNum == 0 || pidNum > 8))
        rc = fail(&c, E_PARAM, "pidNum %zu (1..8 in the fake)", pidNum);
    if (!rc) {
        char name[80];
        snprintf(name, sizeof name, "/acl_fake_%ld_%u_pids", s.pid, s.counter);
        int fd = shm_open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || write(fd, pid, pidNum * 4) != (ssize_t)(pidNum * 4))
            rc = fail(&c, E_ALLOC, "whitelist %s: %s", name, strerror(errno));
        if (fd >= 0)
            close(fd);
    }
    return call_end(&c, rc);
}
