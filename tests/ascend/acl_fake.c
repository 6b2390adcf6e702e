/* acl_fake.c - a fake ACL runtime for testing the `ascend` backend plugin
 * without a card: a shared object (libacl_rt.so) exporting the ACL entry
 * points the plugin resolves, written from the documented signatures only
 * (it does not include the plugin's pld_acl.h: two independent
 * transcriptions of the API catch each other's mistakes).
 *
 * What it emulates (one process = one rank; ranks share a host):
 *   - device memory: host memory the fake tracks (aclrtMalloc: 64-byte
 *     aligned, filled with 0xA5, a 64-byte canary after the end); copies
 *     and memsets are checked against the live allocations and the mapped
 *     VMM ranges, so a host pointer passed as a device pointer fails;
 *   - VMM windows: a physical allocation is a POSIX shared-memory object
 *     ("/acl_fake_<pid>_<n>"), exported as a 64-bit handle (legacy IPC) or a
 *     128-byte fabric handle (V2) that another process imports and maps;
 *   - kernels: a "binary" is a host shared object (written to a temp file and
 *     dlopen'ed); a launch runs numBlocks threads (a gang: all started before
 *     any runs) calling the function with the host args as 64-bit words, on a
 *     per-stream worker thread (launches are asynchronous and queue);
 *   - errors: device faults (a kernel calling hooks->fault, or
 *     ACL_FAKE_DEVICE_ERROR), sync timeouts, the error state of a stream,
 *     injected failures of any call.
 *
 * Environment:
 *   ACL_FAKE_DEVICES=N        devices (default 8)
 *   ACL_FAKE_AIV_CORES=N      AIV cores per device (default 48): the largest numBlocks
 *   ACL_FAKE_GRANULARITY=B    VMM granularity in bytes (default 2 MiB)
 *   ACL_FAKE_NO_FABRIC=1      aclrtMemExportToShareableHandleV2 fails with 207000
 *   ACL_FAKE_DEVICE_ERROR=N   the Nth launch of the process faults (507015) without running
 *   ACL_FAKE_FAIL=name:N,...  the Nth call of function `name` fails (100000); name:N@R only in the
 *                             process of MPI rank R (OMPI_COMM_WORLD_RANK)
 *   ACL_FAKE_LOG=PATH         one JSON line per call ("%r" in PATH: OMPI_COMM_WORLD_RANK, else the pid),
 *                             and a "leaks" line at aclFinalize
 *
 * A kernel binary may export `void acl_fake_register_hooks(const struct
 * acl_fake_hooks *)`: it is called at load with the block index / count of
 * the calling block thread and a fault function that never returns. */
#define _DEFAULT_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "acl_fake.h"

/* ============================================================ configuration, call log, errors */

#define CALL_ID(name) F_##name,
enum { FAKE_CALLS(CALL_ID) F_COUNT };
#define CALL_NAME(name) #name,
static const char *const call_names[] = {FAKE_CALLS(CALL_NAME)};

#define MAX_DEVICES 64
#define MAX_FAILS 16

static struct {
    int devices, aiv_cores, no_fabric;
    size_t granularity;
    long device_error;                /* the launch that faults, 0: none */
    struct { int call; long nth; } fails[MAX_FAILS];
    int nfails;
    FILE *log;
} cfg;

static pthread_once_t cfg_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;      /* all state below */
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_long call_counts[F_COUNT];
static long log_seq;
static char recent_err[1024];
static _Thread_local char recent_copy[1024];

static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    char *end;
    long x = strtol(v, &end, 0);
    return *end ? dflt : x;
}

static void read_config(void)
{
    cfg.devices = (int)env_long("ACL_FAKE_DEVICES", 8);
    if (cfg.devices < 1 || cfg.devices > MAX_DEVICES)
        cfg.devices = 8;
    cfg.aiv_cores = (int)env_long("ACL_FAKE_AIV_CORES", 48);
    if (cfg.aiv_cores < 1)
        cfg.aiv_cores = 48;
    long g = env_long("ACL_FAKE_GRANULARITY", 2L << 20);
    cfg.granularity = g > 0 && (g & (g - 1)) == 0 && g >= 4096 ? (size_t)g : (size_t)2 << 20;
    cfg.no_fabric = env_long("ACL_FAKE_NO_FABRIC", 0) != 0;
    cfg.device_error = env_long("ACL_FAKE_DEVICE_ERROR", 0);
    const char *f = getenv("ACL_FAKE_FAIL"), *me = getenv("OMPI_COMM_WORLD_RANK");
    while (f && *f && cfg.nfails < MAX_FAILS) {
        const char *colon = strchr(f, ':'), *comma = strchr(f, ',');
        if (!colon || (comma && comma < colon))
            break;
        char *end;
        long nth = strtol(colon + 1, &end, 10);
        /* name:N@R: only in the process of MPI rank R */
        int here = *end != '@' || (me && strtol(end + 1, NULL, 10) == strtol(me, NULL, 10));
        for (int i = 0; here && i < F_COUNT; i++)
            if (strlen(call_names[i]) == (size_t)(colon - f) && strncmp(call_names[i], f, (size_t)(colon - f)) == 0) {
                cfg.fails[cfg.nfails].call = i;
                cfg.fails[cfg.nfails++].nth = nth;
            }
        f = comma ? comma + 1 : NULL;
    }
    const char *lp = getenv("ACL_FAKE_LOG");
    if (lp && *lp) {
        char path[1024], who[32];
        const char *rank = getenv("OMPI_COMM_WORLD_RANK");
        snprintf(who, sizeof who, "%s", rank && *rank ? rank : "");
        if (!who[0])
            snprintf(who, sizeof who, "%ld", (long)getpid());
        size_t o = 0;
        for (const char *p = lp; *p && o + 40 < sizeof path; p++) {
            if (p[0] == '%' && p[1] == 'r') {
                o += (size_t)snprintf(path + o, sizeof path - o, "%s", who);
                p++;
            } else {
                path[o++] = *p;
            }
        }
        path[o] = '\0';
        cfg.log = fopen(path, "w");
    }
}

/* One call being made: its log line is built as it goes. */
typedef struct call {
    int id;
    char args[1536];
    size_t n;
    char err[512];
    int locked;                       /* holds mu */
} call_t;

static void ja_raw(call_t *c, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void ja_raw(call_t *c, const char *key, const char *fmt, ...)
{
    if (!cfg.log || c->n + 64 >= sizeof c->args)
        return;
    c->n += (size_t)snprintf(c->args + c->n, sizeof c->args - c->n, "%s\"%s\":", c->n ? "," : "", key);
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(c->args + c->n, sizeof c->args - c->n, fmt, ap);
    va_end(ap);
    c->n = k < 0 ? c->n : c->n + (size_t)k < sizeof c->args ? c->n + (size_t)k : sizeof c->args - 1;
}

static void ja_i(call_t *c, const char *key, long long v) { ja_raw(c, key, "%lld", v); }
static void ja_u(call_t *c, const char *key, unsigned long long v) { ja_raw(c, key, "%llu", v); }
static void ja_p(call_t *c, const char *key, const void *p) { ja_raw(c, key, "\"%p\"", p); }

/* s as a JSON string into out */
static void json_str(char *out, size_t n, const char *s)
{
    size_t o = 0;
    out[o++] = '"';
    for (; s && *s && o + 8 < n; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') {
            out[o++] = '\\';
            out[o++] = (char)ch;
        } else if (ch < 0x20) {
            o += (size_t)snprintf(out + o, n - o, "\\u%04x", ch);
        } else {
            out[o++] = (char)ch;
        }
    }
    out[o++] = '"';
    out[o] = '\0';
}

static void ja_s(call_t *c, const char *key, const char *s)
{
    if (!cfg.log)
        return;
    char buf[600];
    json_str(buf, sizeof buf, s);
    ja_raw(c, key, "%s", buf);
}

enum { NEED_NONE, NEED_INIT, NEED_DEVICE };
static aclError need_init(call_t *c);
static aclError need_device(call_t *c);

/* Starts a call: counts it and takes the fake's lock (call_end releases it).
 * Returns the injected failure's code, else the state check's (need: after
 * aclInit, with a device set on this thread), else 0. */
static aclError call_begin(call_t *c, int id, int need)
{
    pthread_once(&cfg_once, read_config);
    c->id = id;
    c->n = 0;
    c->args[0] = c->err[0] = '\0';
    const long nth = atomic_fetch_add(&call_counts[id], 1) + 1;
    pthread_mutex_lock(&mu);
    c->locked = 1;
    for (int i = 0; i < cfg.nfails; i++)
        if (cfg.fails[i].call == id && cfg.fails[i].nth == nth) {
            snprintf(c->err, sizeof c->err, "fake ACL: injected failure of %s (call %ld)", call_names[id], nth);
            snprintf(recent_err, sizeof recent_err, "%s", c->err);
            ja_i(c, "injected", nth);
            return E_PARAM;
        }
    return need == NEED_DEVICE ? need_device(c) : need == NEED_INIT ? need_init(c) : 0;
}

static void log_line(const char *call, const char *args, int rc, const char *err)
{
    if (!cfg.log)
        return;
    char e[600] = "";
    if (err && *err) {
        char q[560];
        json_str(q, sizeof q, err);
        snprintf(e, sizeof e, ",\"error\":%s", q);
    }
    pthread_mutex_lock(&log_mu);
    fprintf(cfg.log, "{\"seq\":%ld,\"call\":\"%s\",\"args\":{%s},\"ret\":%d%s}\n", ++log_seq, call, args, rc, e);
    fflush(cfg.log);
    pthread_mutex_unlock(&log_mu);
}

static aclError call_end(call_t *c, aclError rc)
{
    if (c->locked)
        pthread_mutex_unlock(&mu);
    c->locked = 0;
    log_line(call_names[c->id], c->args, rc, rc ? c->err : NULL);
    return rc;
}

/* Records error text (the caller holds mu) and returns code. */
static aclError fail(call_t *c, aclError code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static aclError fail(call_t *c, aclError code, const char *fmt, ...)
{
    int o = snprintf(c->err, sizeof c->err, "fake ACL: %s: ", call_names[c->id]);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err + o, sizeof c->err - (size_t)o, fmt, ap);
    va_end(ap);
    snprintf(recent_err, sizeof recent_err, "%s", c->err);
    return code;
}

/* ============================================================ state */

typedef struct alloc {
    unsigned char *ptr;               /* what aclrtMalloc returned */
    size_t size;
    struct alloc *next;
} alloc_t;

#define CANARY 64
#define CANARY_BYTE 0xCD

typedef struct phys {
    char name[64];                    /* the shm object */
    int fd;
    size_t size;
    int dev;                          /* the device it lives on */
    int owner;                        /* created here (unlinked when freed) */
    int nmaps;
    unsigned counter;
    struct phys *next;
} phys_t;

typedef struct resv {
    unsigned char *va;
    size_t size;
    phys_t *mapped;                   /* NULL: reserved only */
    int access;                       /* aclrtMemSetAccess done */
    struct resv *next;
} resv_t;

typedef struct func {
    struct bin *bin;
    void *sym;
    char name[128];
    struct func *next;
} func_t;

typedef struct bin {
    void *dl;
    int tasks;                        /* launches queued or running */
    int unloaded;                     /* aclrtBinaryUnLoad done: dlclose when tasks is 0 */
    func_t *funcs;
    struct bin *next;
} bin_t;

typedef struct task {
    struct stream *s;
    func_t *fn;
    bin_t *bin;
    uint32_t nblocks;
    int nargs;
    uint64_t args[4];
    int inject;                       /* ACL_FAKE_DEVICE_ERROR */
    pthread_t *th;
    unsigned char *exited;            /* per block: the thread has ended */
    uint32_t created, arrived, finished;
    int go, abort, faulted, cancelled;
    char fault_msg[400];
    struct task *next;
} task_t;

typedef struct stream {
    int dev;
    pthread_t worker;
    pthread_cond_t cv;
    task_t *head, *tail, *cur;
    long launched, done;
    int error, error_reported, quit;
    char errmsg[512];
    struct stream *next;
} stream_t;

static int state;                     /* 0 before aclInit, 1 initialised, 2 after aclFinalize */
static _Thread_local int cur_dev = -1;
static unsigned char peer_ok[MAX_DEVICES][MAX_DEVICES];
static alloc_t *allocs;
static phys_t *physs;
static resv_t *resvs;
static bin_t *bins;
static stream_t *streams;
static unsigned phys_counter;
static long launches;
static int atexit_done;

static _Thread_local task_t *cur_task;
static _Thread_local int cur_block = -1;

/* The state checks of every call after aclInit (caller holds mu). */
static aclError need_init(call_t *c)
{
    if (state == 0)
        return fail(c, E_UNINIT, "aclInit has not been called");
    if (state == 2)
        return fail(c, E_UNINIT, "called after aclFinalize");
    return 0;
}

static aclError need_device(call_t *c)
{
    aclError rc = need_init(c);
    if (rc)
        return rc;
    if (cur_dev < 0)
        return fail(c, E_NO_CONTEXT, "no device set on this thread (aclrtSetDevice first)");
    return 0;
}

static phys_t *find_phys(const void *h)
{
    for (phys_t *p = physs; p; p = p->next)
        if ((const void *)p == h)
            return p;
    return NULL;
}

static resv_t *find_resv(const void *va)
{
    for (resv_t *r = resvs; r; r = r->next)
        if (r->va == va)
            return r;
    return NULL;
}

static bin_t *find_bin(const void *h)
{
    for (bin_t *b = bins; b; b = b->next)
        if ((const void *)b == h && !b->unloaded)
            return b;
    return NULL;
}

static func_t *find_func(const void *h)
{
    for (bin_t *b = bins; b; b = b->next)
        for (func_t *f = b->funcs; f && !b->unloaded; f = f->next)
            if ((const void *)f == h)
                return f;
    return NULL;
}

static stream_t *find_stream(const void *h)
{
    for (stream_t *s = streams; s; s = s->next)
        if ((const void *)s == h)
            return s;
    return NULL;
}

/* 1 when [p, p + n) lies inside one live device allocation or one mapped
 * VMM range whose access was set. */
static int is_device(const void *p, size_t n)
{
    const uintptr_t a = (uintptr_t)p;
    for (alloc_t *x = allocs; x; x = x->next)
        if (a >= (uintptr_t)x->ptr && a - (uintptr_t)x->ptr <= x->size && n <= x->size - (a - (uintptr_t)x->ptr))
            return 1;
    for (resv_t *r = resvs; r; r = r->next)
        if (r->mapped && r->access && a >= (uintptr_t)r->va && a - (uintptr_t)r->va <= r->size &&
            n <= r->size - (a - (uintptr_t)r->va))
            return 1;
    return 0;
}

/* 1 when [p, p + n) overlaps device memory at all */
static int touches_device(const void *p, size_t n)
{
    const uintptr_t a = (uintptr_t)p, e = a + n;
    for (alloc_t *x = allocs; x; x = x->next)
        if (a < (uintptr_t)x->ptr + x->size + CANARY && e > (uintptr_t)x->ptr)
            return 1;
    for (resv_t *r = resvs; r; r = r->next)
        if (a < (uintptr_t)r->va + r->size && e > (uintptr_t)r->va)
            return 1;
    return 0;
}

/* ============================================================ lifecycle, devices */

FAKE_API aclError aclInit(const char *configPath)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclInit, NEED_NONE);
    ja_s(&c, "config", configPath ? configPath : "");
    if (!rc && state == 1)
        rc = fail(&c, E_REPEAT_INIT, "aclInit called twice");
    if (!rc)
        state = 1;
    return call_end(&c, rc);
}

static void cancel_running(stream_t *s);
static void drop_queued(stream_t *s);

static void stream_stop(stream_t *s)
{
    drop_queued(s);
    cancel_running(s);
    while (s->cur)
        pthread_cond_wait(&s->cv, &mu);
    s->quit = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&mu);
    pthread_join(s->worker, NULL);
    pthread_mutex_lock(&mu);
}

/* Removes the shm objects this process created (caller holds mu). */
static void unlink_owned(void)
{
    for (phys_t *p = physs; p; p = p->next)
        if (p->owner && p->name[0]) {
            shm_unlink(p->name);
            p->name[0] = '\0';
        }
}

FAKE_API aclError aclFinalize(void)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclFinalize, NEED_INIT);
    int n[7] = {0};
    if (!rc) {
        for (alloc_t *a = allocs; a; a = a->next)
            n[0]++;
        for (phys_t *p = physs; p; p = p->next)
            n[1]++;
        for (resv_t *r = resvs; r; r = r->next) {
            n[2]++;
            n[3] += r->mapped != NULL;
        }
        for (bin_t *b = bins; b; b = b->next)
            n[4] += !b->unloaded;
        for (stream_t *s = streams; s; s = s->next) {
            n[5]++;
            if (s->cur)
                n[6] += (int)(s->cur->nblocks - s->cur->finished);
            stream_stop(s); /* no thread of ours outlives aclFinalize */
        }
        state = 2;
        unlink_owned();
    }
    if (!rc) {
        char line[256];
        snprintf(line, sizeof line,
                 "\"allocations\":%d,\"physical\":%d,\"reserved\":%d,\"mapped\":%d,\"binaries\":%d,\"streams\":%d,"
                 "\"running_blocks\":%d",
                 n[0], n[1], n[2], n[3], n[4], n[5], n[6]);
        call_end(&c, rc);
        if (cfg.log) {
            pthread_mutex_lock(&log_mu);
            fprintf(cfg.log, "{\"call\":\"leaks\",%s}\n", line);
            fflush(cfg.log);
            pthread_mutex_unlock(&log_mu);
        }
        return rc;
    }
    return call_end(&c, rc);
}

FAKE_API aclError aclrtGetDeviceCount(uint32_t *count)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtGetDeviceCount, NEED_INIT);
    if (!rc && !count)
        rc = fail(&c, E_PARAM, "count is NULL");
    if (!rc)
        *count = (uint32_t)cfg.devices;
    if (!rc)
        ja_i(&c, "count", cfg.devices);
    return call_end(&c, rc);
}

static aclError check_dev_id(call_t *c, long dev)
{
    if (dev < 0 || dev >= cfg.devices)
        return fail(c, E_DEVICE_ID, "device %ld out of range (the fake has %d devices)", dev, cfg.devices);
    return 0;
}

FAKE_API aclError aclrtSetDevice(int32_t deviceId)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtSetDevice, NEED_INIT);
    ja_i(&c, "device", deviceId);
    if (!rc)
        rc = check_dev_id(&c, deviceId);
    if (!rc)
        cur_dev = deviceId;
    return call_end(&c, rc);
}

FAKE_API aclError aclrtGetDevice(int32_t *deviceId)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtGetDevice, NEED_DEVICE);
    if (!rc && !deviceId)
        rc = fail(&c, E_PARAM, "deviceId is NULL");
    if (!rc)
        *deviceId = cur_dev;
    if (!rc)
        ja_i(&c, "device", cur_dev);
    return call_end(&c, rc);
}

/* Device reset: the device's streams are released (their running blocks
 * cancelled: the device kills them); the plain reset refuses a device with a
 * stream in error state or still running. */
static aclError reset_device(int id, int32_t dev, int force)
{
    call_t c0, *c = &c0;
    aclError rc = call_begin(c, id, NEED_INIT);
    ja_i(c, "device", dev);
    if (!rc)
        rc = check_dev_id(c, dev);
    for (stream_t *s = streams; s && !rc && !force; s = s->next)
        if (s->dev == dev && (s->error || s->cur))
            rc = fail(c, E_NOT_COMPLETE, "device %d has a stream %s: use aclrtResetDeviceForce", dev,
                      s->error ? "in error state" : "with running blocks");
    int released = 0, cancelled = 0;
    if (!rc) {
        stream_t **pp = &streams;
        while (*pp) {
            stream_t *s = *pp;
            if (s->dev != dev) {
                pp = &s->next;
                continue;
            }
            if (s->cur)
                cancelled += (int)(s->cur->nblocks - s->cur->finished);
            stream_stop(s);
            *pp = s->next;
            pthread_cond_destroy(&s->cv);
            free(s);
            released++;
        }
        if (cur_dev == dev)
            cur_dev = -1;
    }
    ja_i(c, "streams_released", released);
    ja_i(c, "blocks_cancelled", cancelled);
    return call_end(c, rc);
}

FAKE_API aclError aclrtResetDevice(int32_t deviceId)
{
    return reset_device(F_aclrtResetDevice, deviceId, 0);
}

FAKE_API aclError aclrtResetDeviceForce(int32_t deviceId)
{
    return reset_device(F_aclrtResetDeviceForce, deviceId, 1);
}

FAKE_API aclError aclrtGetDeviceInfo(uint32_t deviceId, int attr, int64_t *value)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtGetDeviceInfo, NEED_INIT);
    ja_u(&c, "device", deviceId);
    ja_i(&c, "attr", attr);
    if (!rc)
        rc = check_dev_id(&c, (long)deviceId);
    if (!rc && !value)
        rc = fail(&c, E_PARAM, "value is NULL");
    if (!rc && attr != DEV_ATTR_AIV_CORES)
        rc = fail(&c, E_PARAM, "attribute %d is not supported by the fake (only %d, vector core count)", attr,
                  DEV_ATTR_AIV_CORES);
    if (!rc)
        *value = cfg.aiv_cores;
    if (!rc)
        ja_i(&c, "value", cfg.aiv_cores);
    return call_end(&c, rc);
}

FAKE_API const char *aclGetRecentErrMsg(void)
{
    call_t c;
    call_begin(&c, F_aclGetRecentErrMsg, NEED_NONE); /* an injected failure changes nothing here */
    snprintf(recent_copy, sizeof recent_copy, "%s", recent_err);
    ja_s(&c, "msg", recent_copy);
    call_end(&c, 0);
    return recent_copy;
}

FAKE_API aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtDeviceEnablePeerAccess, NEED_DEVICE);
    ja_i(&c, "peer", peerDeviceId);
    ja_u(&c, "flags", flags);
    if (!rc)
        rc = check_dev_id(&c, peerDeviceId);
    if (!rc && flags != 0)
        rc = fail(&c, E_PARAM, "flags must be 0 (got %u)", flags);
    if (!rc && peerDeviceId == cur_dev)
        rc = fail(&c, E_PARAM, "peer device %d is the current device", peerDeviceId);
    if (!rc)
        peer_ok[cur_dev][peerDeviceId] = 1;
    return call_end(&c, rc);
}

FAKE_API aclError aclrtDevicePeerAccessStatus(int32_t deviceId, int32_t peerDeviceId, int32_t *status)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtDevicePeerAccessStatus, NEED_INIT);
    ja_i(&c, "device", deviceId);
    ja_i(&c, "peer", peerDeviceId);
    if (!rc)
        rc = check_dev_id(&c, deviceId);
    if (!rc)
        rc = check_dev_id(&c, peerDeviceId);
    if (!rc && !status)
        rc = fail(&c, E_PARAM, "status is NULL");
    if (!rc)
        *status = peer_ok[deviceId][peerDeviceId];
    if (!rc)
        ja_i(&c, "status", *status);
    return call_end(&c, rc);
}

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
    if (!rc && (prop->location.type != LOC_DEVICE || (int)prop->location.id != cur_dev))
        rc = fail(&c, E_PARAM, "location {id %u, type %d} is not the current device %d", prop->location.id,
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
                shm_unlink(p->name);
            }
            free(p);
        } else {
            memset(m, 0xA5, size); /* device memory is not zeroed */
            munmap(m, size);
            p->size = size;
            p->dev = cur_dev;
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
    if (!rc) {
        phys_t *p = *pp;
        *pp = p->next;
        close(p->fd);
        if (p->owner && p->name[0])
            shm_unlink(p->name);
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
    if (!rc && (desc->location.type != LOC_DEVICE || (int)desc->location.id != cur_dev))
        rc = fail(&c, E_PARAM, "location {id %u, type %d} is not the current device %d", desc->location.id,
                  desc->location.type, cur_dev);
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

/* Opens the object s names as a new handle of this process. */
static aclError do_import(call_t *c, const share_t *s, int fabric, void **out)
{
    aclError rc;
    if (!out)
        return fail(c, E_PARAM, "handle is NULL");
    if (s->dev < 0 || s->dev >= cfg.devices)
        return fail(c, E_IPC, "the handle names device %d, out of range", s->dev);
    if (s->pid != (long)getpid() && !(s->flags & NO_PID_CHECK))
        return fail(c, E_IPC,
                    "process %ld exported the handle without DISABLE_PID_VALIDATION, and no pid was granted to "
                    "process %ld",
                    s->pid, (long)getpid());
    if (!fabric && s->dev != cur_dev && !peer_ok[cur_dev][s->dev])
        return fail(c, E_IPC, "peer access to device %d not enabled on device %d (aclrtDeviceEnablePeerAccess)",
                    s->dev, cur_dev);
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
    p->dev = cur_dev;
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

/* ============================================================ streams and kernels */

static void stream_fault(stream_t *s, int code, const char *msg)
{
    if (s->error)
        return;
    s->error = code;
    s->error_reported = 0;
    snprintf(s->errmsg, sizeof s->errmsg, "%s", msg);
}

static int hook_block_idx(void) { return cur_block < 0 ? 0 : cur_block; }
static int hook_block_num(void) { return cur_task ? (int)cur_task->nblocks : 1; }

/* A block reports a device fault: the kernel ends (every block of it). */
static void hook_fault(const char *msg)
{
    int old;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    task_t *t = cur_task;
    if (t) {
        pthread_mutex_lock(&mu);
        if (!t->faulted) {
            t->faulted = 1;
            snprintf(t->fault_msg, sizeof t->fault_msg, "block %d of %u: %s", cur_block, t->nblocks,
                     msg ? msg : "(no message)");
        }
        for (uint32_t i = 0; i < t->created; i++)
            if (!t->exited[i] && (int)i != cur_block)
                pthread_cancel(t->th[i]);
        pthread_mutex_unlock(&mu);
    }
    pthread_exit(NULL);
}

static const struct acl_fake_hooks fake_hooks = {hook_block_idx, hook_block_num, hook_fault};

typedef struct block_arg {
    task_t *t;
    uint32_t idx;
} block_arg_t;

static void block_exit(void *arg)
{
    block_arg_t *b = arg;
    pthread_mutex_lock(&mu);
    b->t->exited[b->idx] = 1;
    b->t->finished++;
    pthread_cond_broadcast(&b->t->s->cv);
    pthread_mutex_unlock(&mu);
}

static void call_kernel(const task_t *t)
{
    void *sym = t->fn->sym;
    const uint64_t *a = t->args;
    switch (t->nargs) {
    case 0: ((void (*)(void))sym)(); break;
    case 1: ((void (*)(uint64_t))sym)(a[0]); break;
    case 2: ((void (*)(uint64_t, uint64_t))sym)(a[0], a[1]); break;
    case 3: ((void (*)(uint64_t, uint64_t, uint64_t))sym)(a[0], a[1], a[2]); break;
    default: ((void (*)(uint64_t, uint64_t, uint64_t, uint64_t))sym)(a[0], a[1], a[2], a[3]); break;
    }
}

static void *block_main(void *arg)
{
    block_arg_t *b = arg;
    task_t *t = b->t;
    int old;
    cur_task = t;
    cur_block = (int)b->idx;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    pthread_cleanup_push(block_exit, b);
    pthread_mutex_lock(&mu);
    t->arrived++;
    pthread_cond_broadcast(&t->s->cv);
    while (!t->go && !t->abort)
        pthread_cond_wait(&t->s->cv, &mu);
    const int run = t->go && !t->abort;
    pthread_mutex_unlock(&mu);
    if (run) {
        /* the device may kill a kernel anywhere (a fault of another block, a reset) */
        pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old);
        pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
        call_kernel(t);
        pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
        pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &old);
    }
    pthread_cleanup_pop(1);
    return NULL;
}

/* Runs task t (caller holds mu; released while the blocks run). */
static void run_task(stream_t *s, task_t *t)
{
    block_arg_t *ba = calloc(t->nblocks, sizeof *ba);
    t->th = calloc(t->nblocks, sizeof *t->th);
    t->exited = calloc(t->nblocks, 1);
    if (!ba || !t->th || !t->exited) {
        stream_fault(s, E_AICORE, "fake ACL: out of host memory for the blocks of a launch");
        goto out;
    }
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, (size_t)1 << 20);
    for (uint32_t i = 0; i < t->nblocks; i++) {
        ba[i].t = t;
        ba[i].idx = i;
        if (pthread_create(&t->th[i], &at, block_main, &ba[i]) != 0) {
            t->abort = 1;
            break;
        }
        t->created++;
    }
    pthread_attr_destroy(&at);
    while (!t->abort && t->arrived < t->nblocks) /* the gang: every block resident before any runs */
        pthread_cond_wait(&s->cv, &mu);
    if (!t->abort)
        t->go = 1;
    pthread_cond_broadcast(&s->cv);
    const uint32_t created = t->created;
    pthread_mutex_unlock(&mu);
    for (uint32_t i = 0; i < created; i++)
        pthread_join(t->th[i], NULL);
    pthread_mutex_lock(&mu);
    if (t->cancelled) {
        /* a device reset killed it: no error of its own */
    } else if (t->abort) {
        stream_fault(s, E_AICORE, "fake ACL: could not start the blocks of a launch (threads)");
    } else if (t->faulted) {
        char m[512];
        snprintf(m, sizeof m, "AICore exception: %s", t->fault_msg);
        stream_fault(s, E_AICORE, m);
    }
out:
    free(ba);
}

static void task_free(task_t *t)
{
    bin_t *b = t->bin;
    if (b && --b->tasks == 0 && b->unloaded) {
        dlclose(b->dl);
        bin_t **pp = &bins;
        while (*pp && *pp != b)
            pp = &(*pp)->next;
        if (*pp)
            *pp = b->next;
        for (func_t *f = b->funcs, *n; f; f = n) {
            n = f->next;
            free(f);
        }
        free(b);
    }
    free(t->th);
    free(t->exited);
    free(t);
}

static void *worker_main(void *arg)
{
    stream_t *s = arg;
    pthread_mutex_lock(&mu);
    for (;;) {
        while (!s->head && !s->quit)
            pthread_cond_wait(&s->cv, &mu);
        if (!s->head)
            break;
        task_t *t = s->head;
        s->head = t->next;
        if (!s->head)
            s->tail = NULL;
        if (!s->error && t->inject) {
            stream_fault(s, E_AICORE, "AICore exception (injected: ACL_FAKE_DEVICE_ERROR)");
        } else if (!s->error) {
            s->cur = t;
            run_task(s, t);
            s->cur = NULL;
        }
        s->done++;
        task_free(t);
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&mu);
    return NULL;
}

static void drop_queued(stream_t *s)
{
    while (s->head) {
        task_t *t = s->head;
        s->head = t->next;
        s->done++;
        task_free(t);
    }
    s->tail = NULL;
}

static void cancel_running(stream_t *s)
{
    task_t *t = s->cur;
    if (!t)
        return;
    t->abort = t->cancelled = 1;
    for (uint32_t i = 0; i < t->created; i++)
        if (!t->exited[i])
            pthread_cancel(t->th[i]);
    pthread_cond_broadcast(&s->cv);
}

FAKE_API aclError aclrtCreateStream(aclrtStream *stream)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtCreateStream, NEED_DEVICE);
    if (!rc && !stream)
        rc = fail(&c, E_PARAM, "stream is NULL");
    stream_t *s = NULL;
    if (!rc) {
        s = calloc(1, sizeof *s);
        if (!s)
            rc = fail(&c, E_ALLOC, "out of host memory");
    }
    if (!rc) {
        s->dev = cur_dev;
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&s->cv, &ca);
        pthread_condattr_destroy(&ca);
        if (pthread_create(&s->worker, NULL, worker_main, s) != 0) {
            pthread_cond_destroy(&s->cv);
            free(s);
            rc = fail(&c, E_ALLOC, "cannot start the stream's thread");
        } else {
            s->next = streams;
            streams = s;
            *stream = s;
        }
    }
    if (!rc)
        ja_p(&c, "stream", s);
    return call_end(&c, rc);
}

FAKE_API aclError aclrtDestroyStream(aclrtStream stream)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtDestroyStream, NEED_INIT);
    ja_p(&c, "stream", stream);
    stream_t *s = rc ? NULL : find_stream(stream);
    if (!rc && !s)
        rc = fail(&c, E_HANDLE, "%p is not a live stream", stream);
    if (!rc && (s->cur || s->head))
        rc = fail(&c, E_NOT_COMPLETE, "stream %p still has %u running block(s) and %ld queued launch(es) "
                  "(synchronize it, or aclrtResetDeviceForce)", stream,
                  s->cur ? s->cur->nblocks - s->cur->finished : 0, s->launched - s->done - (s->cur ? 1 : 0));
    if (!rc) {
        stream_stop(s);
        stream_t **pp = &streams;
        while (*pp != s)
            pp = &(*pp)->next;
        *pp = s->next;
        pthread_cond_destroy(&s->cv);
        free(s);
    }
    return call_end(&c, rc);
}

FAKE_API aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtSynchronizeStreamWithTimeout, NEED_DEVICE);
    ja_p(&c, "stream", stream);
    ja_i(&c, "timeout", timeout);
    stream_t *s = rc ? NULL : find_stream(stream);
    if (!rc && !s)
        rc = fail(&c, E_HANDLE, "%p is not a live stream", stream);
    if (!rc && timeout < -1)
        rc = fail(&c, E_PARAM, "timeout %d ms (-1: wait forever, else >= 0)", timeout);
    if (!rc && s->error && s->error_reported)
        rc = fail(&c, E_STREAM_STATE, "the stream is in error state after error %d (%s)", s->error, s->errmsg);
    if (!rc) {
        struct timespec dl;
        clock_gettime(CLOCK_MONOTONIC, &dl);
        dl.tv_sec += timeout / 1000;
        dl.tv_nsec += (long)(timeout % 1000) * 1000000L;
        if (dl.tv_nsec >= 1000000000L) {
            dl.tv_sec++;
            dl.tv_nsec -= 1000000000L;
        }
        int timed_out = 0;
        while (!s->error && s->done < s->launched && !timed_out)
            timed_out = (timeout < 0 ? pthread_cond_wait(&s->cv, &mu) : pthread_cond_timedwait(&s->cv, &mu, &dl)) ==
                        ETIMEDOUT;
        if (s->error) {
            s->error_reported = 1;
            rc = fail(&c, s->error, "%s", s->errmsg);
        } else if (s->done < s->launched) {
            const uint32_t nb = s->cur ? s->cur->nblocks : 0, left = s->cur ? nb - s->cur->finished : 0;
            rc = fail(&c, E_SYNC_TIMEOUT, "stream sync timeout after %d ms (%u of %u blocks still running)", timeout,
                      left, nb);
        }
    }
    return call_end(&c, rc);
}

FAKE_API aclError aclrtBinaryLoadFromData(const void *data, size_t length, const aclrtBinaryLoadOptions *options,
                                          aclrtBinHandle *binHandle)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtBinaryLoadFromData, NEED_DEVICE);
    ja_u(&c, "length", length);
    if (options) {
        ja_u(&c, "numOpt", options->numOpt);
        if (options->options && options->numOpt)
            ja_raw(&c, "opt0", "[%d,\"0x%08x\"]", options->options[0].type, options->options[0].value.magic);
    }
    if (!rc && (!data || !binHandle || length < 4))
        rc = fail(&c, E_PARAM, "%s", !data ? "data is NULL" : !binHandle ? "binHandle is NULL" : "length < 4");
    int magic_ok = 0;
    for (size_t i = 0; !rc && options && options->options && i < options->numOpt; i++)
        if (options->options[i].type == OPT_MAGIC)
            magic_ok = options->options[i].value.magic == MAGIC_VECTOR_CORE ? 1 : -1;
    if (!rc && magic_ok != 1)
        rc = fail(&c, E_PARAM, "the load options must carry the magic option (%d) ELF_VECTOR_CORE 0x%08x", OPT_MAGIC,
                  MAGIC_VECTOR_CORE);
    if (!rc && memcmp(data, "\x7f" "ELF", 4) != 0)
        rc = fail(&c, E_PARAM, "the data is not an ELF image");
    bin_t *b = NULL;
    if (!rc) { /* the file and the loader work without the lock */
        pthread_mutex_unlock(&mu);
        const char *tmp = getenv("TMPDIR");
        char path[512];
        snprintf(path, sizeof path, "%s/acl_fake_bin_XXXXXX", tmp && *tmp ? tmp : "/tmp");
        int fd = mkstemp(path);
        size_t off = 0;
        while (fd >= 0 && off < length) {
            ssize_t k = write(fd, (const char *)data + off, length - off);
            if (k <= 0)
                break;
            off += (size_t)k;
        }
        if (fd >= 0)
            close(fd);
        void *dl = fd >= 0 && off == length ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
        char why[400];
        snprintf(why, sizeof why, "%s", fd < 0 ? strerror(errno) : off < length ? "short write" : dl ? "" : dlerror());
        if (fd >= 0)
            unlink(path);
        pthread_mutex_lock(&mu);
        b = dl ? calloc(1, sizeof *b) : NULL;
        if (!dl)
            rc = fail(&c, E_PARAM, "cannot load the binary as a host shared object: %s", why);
        else if (!b)
            rc = fail(&c, E_ALLOC, "out of host memory");
        if (!rc) {
            b->dl = dl;
            b->next = bins;
            bins = b;
            *binHandle = b;
        } else if (dl) {
            dlclose(dl);
        }
        if (!rc) {
            void (*reg)(const struct acl_fake_hooks *);
            void *sym = dlsym(dl, "acl_fake_register_hooks");
            memcpy(&reg, &sym, sizeof reg);
            if (reg)
                reg(&fake_hooks);
            ja_i(&c, "hooks", reg != NULL);
        }
    }
    if (!rc)
        ja_p(&c, "bin", b);
    return call_end(&c, rc);
}

FAKE_API aclError aclrtBinaryGetFunction(aclrtBinHandle binHandle, const char *kernelName, aclrtFuncHandle *funcHandle)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtBinaryGetFunction, NEED_DEVICE);
    ja_p(&c, "bin", binHandle);
    ja_s(&c, "name", kernelName ? kernelName : "(null)");
    bin_t *b = rc ? NULL : find_bin(binHandle);
    if (!rc && !b)
        rc = fail(&c, E_HANDLE, "%p is not a loaded binary", binHandle);
    if (!rc && (!kernelName || !funcHandle))
        rc = fail(&c, E_PARAM, "%s is NULL", kernelName ? "funcHandle" : "kernelName");
    void *sym = rc ? NULL : dlsym(b->dl, kernelName);
    if (!rc && !sym)
        rc = fail(&c, E_KERNEL_LOOKUP, "the binary has no kernel function '%s'", kernelName);
    func_t *f = NULL;
    if (!rc) {
        f = calloc(1, sizeof *f);
        if (!f)
            rc = fail(&c, E_ALLOC, "out of host memory");
    }
    if (!rc) {
        f->bin = b;
        f->sym = sym;
        snprintf(f->name, sizeof f->name, "%s", kernelName);
        f->next = b->funcs;
        b->funcs = f;
        *funcHandle = f;
    }
    if (!rc)
        ja_p(&c, "fn", f);
    return call_end(&c, rc);
}

FAKE_API aclError aclrtBinaryUnLoad(aclrtBinHandle binHandle)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtBinaryUnLoad, NEED_DEVICE);
    ja_p(&c, "bin", binHandle);
    bin_t *b = rc ? NULL : find_bin(binHandle);
    if (!rc && !b)
        rc = fail(&c, E_HANDLE, "%p is not a loaded binary", binHandle);
    if (!rc) {
        b->unloaded = 1;
        ja_i(&c, "deferred", b->tasks > 0); /* launches still hold it: closed when they end */
        if (b->tasks == 0) {
            bin_t **pp = &bins;
            while (*pp != b)
                pp = &(*pp)->next;
            *pp = b->next;
            dlclose(b->dl);
            for (func_t *f = b->funcs, *n; f; f = n) {
                n = f->next;
                free(f);
            }
            free(b);
        }
    }
    return call_end(&c, rc);
}

FAKE_API aclError aclrtLaunchKernelWithHostArgs(aclrtFuncHandle funcHandle, uint32_t numBlocks, aclrtStream stream,
                                                aclrtLaunchKernelCfg *cfgp, void *hostArgs, size_t argsSize,
                                                void *placeHolderArray, size_t placeHolderNum)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtLaunchKernelWithHostArgs, NEED_DEVICE);
    ja_p(&c, "fn", funcHandle);
    ja_u(&c, "numBlocks", numBlocks);
    ja_p(&c, "stream", stream);
    ja_u(&c, "argsSize", argsSize);
    if (cfg.log && hostArgs && argsSize <= 64) {
        char hex[140];
        for (size_t i = 0; i < argsSize; i++)
            snprintf(hex + 2 * i, 3, "%02x", ((const unsigned char *)hostArgs)[i]);
        hex[2 * argsSize] = '\0';
        ja_raw(&c, "hostArgs", "\"%s\"", hex);
    }
    if (cfg.log && cfgp) {
        char a[300];
        size_t o = 0;
        a[o++] = '[';
        for (size_t i = 0; cfgp->attrs && i < cfgp->numAttrs && i < 8; i++) {
            const aclrtLaunchKernelAttr *at = &cfgp->attrs[i];
            const unsigned v = at->id == ATTR_SCHEM_MODE ? at->value.schemMode
                               : at->id == ATTR_TIMEOUT  ? at->value.timeout
                                                         : at->value.rsv[0];
            o += (size_t)snprintf(a + o, sizeof a - o, "%s[%d,%u]", i ? "," : "", at->id, v);
        }
        snprintf(a + o, sizeof a - o, "]");
        ja_raw(&c, "cfg", "%s", a);
    }
    ja_u(&c, "phNum", placeHolderNum);
    func_t *f = rc ? NULL : find_func(funcHandle);
    stream_t *s = rc ? NULL : find_stream(stream);
    if (!rc && !f)
        rc = fail(&c, E_HANDLE, "%p is not a function of a loaded binary", funcHandle);
    if (!rc && !s)
        rc = fail(&c, E_HANDLE, "%p is not a live stream", stream);
    if (!rc && s->dev != cur_dev)
        rc = fail(&c, E_PARAM, "the stream belongs to device %d, the current device is %d", s->dev, cur_dev);
    if (!rc && s->error)
        rc = fail(&c, E_STREAM_STATE, "the stream is in error state after error %d (%s)", s->error, s->errmsg);
    if (!rc && (numBlocks < 1 || numBlocks > (uint32_t)cfg.aiv_cores))
        rc = fail(&c, E_PARAM, "numBlocks %u is outside 1..%d (the device's AIV cores)", numBlocks, cfg.aiv_cores);
    if (!rc && (argsSize % 8 || argsSize > 64 || (argsSize && !hostArgs)))
        rc = fail(&c, E_PARAM, "argsSize %zu must be a multiple of 8, at most 64, with hostArgs", argsSize);
    if (!rc && argsSize > 32)
        rc = fail(&c, E_NOT_SUPPORTED, "the fake calls kernels with at most 4 arguments (argsSize %zu)", argsSize);
    if (!rc && (placeHolderNum || placeHolderArray))
        rc = fail(&c, E_NOT_SUPPORTED, "the fake does not take placeholders");
    for (size_t i = 0; !rc && cfgp && cfgp->attrs && i < cfgp->numAttrs; i++)
        if (cfgp->attrs[i].id == ATTR_SCHEM_MODE && cfgp->attrs[i].value.schemMode > 2)
            rc = fail(&c, E_PARAM, "scheduling mode %u is unknown", cfgp->attrs[i].value.schemMode);
    if (!rc && cfgp && cfgp->numAttrs && !cfgp->attrs)
        rc = fail(&c, E_PARAM, "cfg has %zu attributes and no array", cfgp->numAttrs);
    task_t *t = NULL;
    if (!rc) {
        t = calloc(1, sizeof *t);
        if (!t)
            rc = fail(&c, E_ALLOC, "out of host memory");
    }
    if (!rc) {
        t->s = s;
        t->fn = f;
        t->bin = f->bin;
        t->bin->tasks++;
        t->nblocks = numBlocks;
        t->nargs = (int)(argsSize / 8);
        memcpy(t->args, hostArgs, argsSize);
        t->inject = ++launches == cfg.device_error;
        if (s->tail)
            s->tail->next = t;
        else
            s->head = t;
        s->tail = t;
        s->launched++;
        pthread_cond_broadcast(&s->cv);
        ja_i(&c, "launch", launches);
        ja_s(&c, "name", f->name);
    }
    return call_end(&c, rc);
}
