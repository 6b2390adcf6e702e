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
 *   - the rules of the real runtime the plugin relies on (issue 40), each
 *     with the CANN runtime's file:line (github hicann/runtime) where it is
 *     enforced: kernels registered without their _mix_aic / _mix_aiv suffix
 *     and looked up exactly (acl_fake_kernel.c); ASCEND_RT_VISIBLE_DEVICES
 *     user vs driver ids (here and acl_fake_mem.c); the peer-access status
 *     and a second enable; a zero sync timeout refused; a blocking free after
 *     a fault; the version query and the 8.0 rules (reserved export flags,
 *     the PID whitelist).
 *
 * Environment:
 *   ACL_FAKE_DEVICES=N        devices (default 8)
 *   ACL_FAKE_AIV_CORES=N      AIV cores per device (default 48): the largest numBlocks
 *   ACL_FAKE_GRANULARITY=B    VMM granularity in bytes (default 2 MiB)
 *   ACL_FAKE_NO_FABRIC=1      aclrtMemExportToShareableHandleV2 fails with 207000
 *   ACL_FAKE_DEVICE_ERROR=N   the Nth launch of the process faults (507015) without running
 *   ACL_FAKE_FAIL=name:N,...  the Nth call of function `name` fails (100000); name:N@R only in the
 *                             process of MPI rank R (OMPI_COMM_WORLD_RANK)
 *   ASCEND_RT_VISIBLE_DEVICES=2,3  the runtime's renumbering: user ids 0, 1 are driver ids 2, 3
 *   ACL_FAKE_CANN_VERSION=V   what aclsysGetCANNVersion reports (default 8.5.0); below 8.2 the
 *                             functions new in 8.2 fail with 207000, and export flags are reserved
 *   ACL_FAKE_FREE_BLOCK_MS=N  a free of a faulted device's memory blocks this long (default 5000)
 *   ACL_FAKE_LOG=PATH         one JSON line per call ("%r" in PATH: OMPI_COMM_WORLD_RANK, else the pid),
 *                             and a "leaks" line at aclFinalize
 *
 * A kernel binary may export `void acl_fake_register_hooks(const struct
 * acl_fake_hooks *)`: it is called at load with the block index / count of
 * the calling block thread and a fault function that never returns.
 *
 * The fake is split by subject: this file (configuration, the call log and
 * errors, the state, lifecycle and devices), acl_fake_mem.c (device memory,
 * VMM windows and their sharing between processes), acl_fake_kernel.c
 * (streams and kernels); acl_fake_int.h declares what they share. */
#include "acl_fake_int.h"

/* ============================================================ configuration, call log, errors */

#define CALL_NAME(name) #name,
const char *const call_names[] = {FAKE_CALLS(CALL_NAME)};

fake_cfg_t cfg;
static pthread_once_t cfg_once = PTHREAD_ONCE_INIT;
pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER; /* all state below */
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_long call_counts[F_COUNT];
static long log_seq;
char recent_err[1024];
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
    cfg.free_block_ms = env_long("ACL_FAKE_FREE_BLOCK_MS", 5000);
    const char *ver = getenv("ACL_FAKE_CANN_VERSION");
    snprintf(cfg.version, sizeof cfg.version, "%s", ver && *ver ? ver : "8.5.0");
    if (sscanf(cfg.version, "%d.%d", &cfg.ver_major, &cfg.ver_minor) != 2)
        cfg.ver_major = cfg.ver_minor = 0;
    /* ASCEND_RT_VISIBLE_DEVICES, read as runtime.cc:4951-5067 (GetVisibleDevices) reads it:
     * comma-separated driver ids; the first token that is not a number or is beyond the
     * device count ends the list; the ids must ascend without duplicates (else no device
     * is usable: RT_ALL_ORDER_ERROR / RT_ALL_DUPLICATED_ERROR); user id i is the i-th. */
    const char *vis = getenv("ASCEND_RT_VISIBLE_DEVICES");
    cfg.nvisible = 0;
    if (!vis) {
        for (int i = 0; i < cfg.devices; i++)
            cfg.visible[cfg.nvisible++] = i;
    } else {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", vis);
        int bad = 0;
        for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok && cfg.nvisible < cfg.devices;
             tok = strtok_r(NULL, ",", &save)) {
            char *end;
            long d = strtol(tok, &end, 10);
            if (!*tok || *end || d < 0 || d >= cfg.devices)
                break;
            if (cfg.nvisible > 0 && d <= cfg.visible[cfg.nvisible - 1])
                bad = 1;
            cfg.visible[cfg.nvisible++] = (int)d;
        }
        if (bad)
            cfg.nvisible = 0;
    }
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

void ja_raw(call_t *c, const char *key, const char *fmt, ...)
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

void ja_i(call_t *c, const char *key, long long v) { ja_raw(c, key, "%lld", v); }
void ja_u(call_t *c, const char *key, unsigned long long v) { ja_raw(c, key, "%llu", v); }
void ja_p(call_t *c, const char *key, const void *p) { ja_raw(c, key, "\"%p\"", p); }

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

void ja_s(call_t *c, const char *key, const char *s)
{
    if (!cfg.log)
        return;
    char buf[600];
    json_str(buf, sizeof buf, s);
    ja_raw(c, key, "%s", buf);
}

static aclError need_init(call_t *c);
static aclError need_device(call_t *c);

/* Starts a call: counts it and takes the fake's lock (call_end releases it).
 * Returns the injected failure's code, else the state check's (need: after
 * aclInit, with a device set on this thread), else 0. */
aclError call_begin(call_t *c, int id, int need)
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

aclError call_end(call_t *c, aclError rc)
{
    if (c->locked)
        pthread_mutex_unlock(&mu);
    c->locked = 0;
    log_line(call_names[c->id], c->args, rc, rc ? c->err : NULL);
    return rc;
}

/* Records error text (the caller holds mu) and returns code. */
aclError fail(call_t *c, aclError code, const char *fmt, ...)
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

int state;                            /* 0 before aclInit, 1 initialised, 2 after aclFinalize */
_Thread_local int cur_dev = -1;
unsigned char peer_ok[MAX_DEVICES][MAX_DEVICES];
unsigned char dev_set_here[MAX_DEVICES];
unsigned dev_faults[MAX_DEVICES];
alloc_t *allocs;
phys_t *physs;
resv_t *resvs;
bin_t *bins;
stream_t *streams;
unsigned phys_counter;
long launches;
int atexit_done;

_Thread_local task_t *cur_task;
_Thread_local int cur_block = -1;

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

phys_t *find_phys(const void *h)
{
    for (phys_t *p = physs; p; p = p->next)
        if ((const void *)p == h)
            return p;
    return NULL;
}

resv_t *find_resv(const void *va)
{
    for (resv_t *r = resvs; r; r = r->next)
        if (r->va == va)
            return r;
    return NULL;
}

bin_t *find_bin(const void *h)
{
    for (bin_t *b = bins; b; b = b->next)
        if ((const void *)b == h && !b->unloaded)
            return b;
    return NULL;
}

func_t *find_func(const void *h)
{
    for (bin_t *b = bins; b; b = b->next)
        for (func_t *f = b->funcs; f && !b->unloaded; f = f->next)
            if ((const void *)f == h)
                return f;
    return NULL;
}

stream_t *find_stream(const void *h)
{
    for (stream_t *s = streams; s; s = s->next)
        if ((const void *)s == h)
            return s;
    return NULL;
}

/* 1 when [p, p + n) lies inside one live device allocation or one mapped
 * VMM range whose access was set. */
int is_device(const void *p, size_t n)
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
int touches_device(const void *p, size_t n)
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

void stream_stop(stream_t *s)
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

void shm_unlink_all(const char *name)
{
    char w[96];
    snprintf(w, sizeof w, "%s_pids", name);
    shm_unlink(name);
    shm_unlink(w);
}

/* Removes the shm objects this process created (caller holds mu). */
void unlink_owned(void)
{
    for (phys_t *p = physs; p; p = p->next)
        if (p->owner && p->name[0]) {
            shm_unlink_all(p->name);
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
    if (!rc && cfg.nvisible == 0)
        rc = fail(&c, E_DEVICE_ID, "ASCEND_RT_VISIBLE_DEVICES names no usable device (ids must ascend, without "
                  "duplicates, below %d)", cfg.devices);
    if (!rc)
        *count = (uint32_t)cfg.nvisible; /* the user device count (runtime.cc:5056 userDeviceCnt) */
    if (!rc)
        ja_i(&c, "count", cfg.nvisible);
    return call_end(&c, rc);
}

/* A user (logical) device id: below the visible count (runtime.cc:4799-4821
 * ChgUserDevIdToDeviceId, RT_ERROR_DEVICE_ID otherwise). */
static aclError check_dev_id(call_t *c, long dev)
{
    if (dev < 0 || dev >= cfg.nvisible)
        return fail(c, E_DEVICE_ID, "device %ld out of range (%d visible device(s)%s)", dev, cfg.nvisible,
                    getenv("ASCEND_RT_VISIBLE_DEVICES") ? ", ASCEND_RT_VISIBLE_DEVICES" : "");
    return 0;
}

/* A free of device memory allocated before a device fault (gen: the
 * device's fault count when it was allocated): on cards such a free can
 * block (issue 40 item 5; hw_backend.md §6.1), before or after the reset;
 * here it blocks for ACL_FAKE_FREE_BLOCK_MS, then fails with 507899. What a
 * fault leaves is abandoned, not freed. Caller holds mu (released meanwhile). */
aclError block_if_faulted(call_t *c, int drv, unsigned gen)
{
    if (drv < 0 || dev_faults[drv] == gen)
        return 0;
    ja_i(c, "blocked_after_fault", 1);
    pthread_mutex_unlock(&mu);
    struct timespec ts = {cfg.free_block_ms / 1000, (cfg.free_block_ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    pthread_mutex_lock(&mu);
    return fail(c, E_DRV, "a free on device %d of memory allocated before a device fault blocked for %ld ms "
                "(abandon what a fault leaves; do not free it one by one)", drv, cfg.free_block_ms);
}

/* CANN below 8.2 lacks what a function needs (issue 40 item 4: the host-args
 * launch, aclrtGetDeviceInfo and the V2 handles are documented from 8.2). */
aclError need_version(call_t *c, int major, int minor)
{
    if (cfg.ver_major > major || (cfg.ver_major == major && cfg.ver_minor >= minor))
        return 0;
    return fail(c, E_NOT_SUPPORTED, "not in CANN %s (needs %d.%d)", cfg.version, major, minor);
}

/* The driver id of user device d (runtime.cc:4818: deviceInfo[userDevId]). */
int drv_id(int user_dev)
{
    return user_dev >= 0 && user_dev < cfg.nvisible ? cfg.visible[user_dev] : -1;
}

FAKE_API aclError aclrtSetDevice(int32_t deviceId)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtSetDevice, NEED_INIT);
    ja_i(&c, "device", deviceId);
    if (!rc)
        rc = check_dev_id(&c, deviceId);
    if (!rc) {
        cur_dev = deviceId;
        dev_set_here[drv_id(deviceId)] = 1;
    }
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
 * cancelled: the device kills them; a sync waiting on one returns); memory
 * stays (a free of memory allocated before a fault still blocks:
 * block_if_faulted); the plain reset refuses a device with a stream in error
 * state or still running. */
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
            s->reset = 1; /* a sync waiting on it returns (acl_fake_kernel.c) before it goes */
            pthread_cond_broadcast(&s->cv);
            while (s->waiters)
                pthread_cond_wait(&s->cv, &mu);
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
        rc = need_version(&c, 8, 2);
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

/* Peer access takes user ids and resolves the peer to its driver id
 * (memory.cpp:906-931: rtGetDevicePhyIdByIndex, then rtEnableP2P). The
 * runtime has no "already enabled" code: a second enable of a pair answers a
 * non-success (simpler, src/a5/platform/onboard/host/comm_hccl.cpp:550-557,
 * "may be a benign re-enable"); the fake answers 507899. */
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
    if (!rc && peer_ok[drv_id(cur_dev)][drv_id(peerDeviceId)])
        rc = fail(&c, E_DRV, "peer access from device %d to device %d is already enabled", cur_dev, peerDeviceId);
    if (!rc)
        peer_ok[drv_id(cur_dev)][drv_id(peerDeviceId)] = 1;
    return call_end(&c, rc);
}

/* The status of a pair. With one process per device it can report 0 forever
 * after a successful enable: the query cannot resolve a peer this process
 * never set (simpler, src/a5/platform/onboard/host/comm_hccl.cpp:559-568).
 * The fake reports 1 only when both devices were set in this process. */
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
    if (!rc) {
        const int d = drv_id(deviceId), p = drv_id(peerDeviceId);
        *status = peer_ok[d][p] && dev_set_here[d] && dev_set_here[p];
    }
    if (!rc)
        ja_i(&c, "status", *status);
    return call_end(&c, rc);
}

/* The version of a CANN package (acl.cpp:816 aclsysGetCANNVersionImpl reads
 * the package's version file under $ASCEND_HOME_PATH/share/info, acl.cpp:842):
 * ACL_FAKE_CANN_VERSION. */
FAKE_API aclError aclsysGetCANNVersion(int name, aclCANNPackageVersion *version)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclsysGetCANNVersion, NEED_NONE);
    ja_i(&c, "name", name);
    if (!rc && !version)
        rc = fail(&c, E_PARAM, "version is NULL");
    if (!rc && (name < 0 || name > 7))
        rc = fail(&c, E_PARAM, "unknown package %d", name);
    /* the packages' version files are found through ASCEND_HOME_PATH
     * (acl.cpp:833-839: unset, ACL_ERROR_INVALID_FILE) */
    if (!rc && name != 7 && !getenv("ASCEND_HOME_PATH"))
        rc = fail(&c, E_INVALID_FILE, "cannot get env ASCEND_HOME_PATH (the version files are under "
                  "$ASCEND_HOME_PATH/share/info)");
    if (!rc) {
        memset(version, 0, sizeof *version);
        snprintf(version->version, sizeof version->version, "%s", cfg.version);
        snprintf(version->majorVersion, sizeof version->majorVersion, "%d", cfg.ver_major);
        snprintf(version->minorVersion, sizeof version->minorVersion, "%d", cfg.ver_minor);
        ja_s(&c, "version", cfg.version);
    }
    return call_end(&c, rc);
}

/* The process id the driver knows this process by (acl_rt.h:3427); the fake
 * has no container, so it is getpid(). */
FAKE_API aclError aclrtDeviceGetBareTgid(int32_t *pid)
{
    call_t c;
    aclError rc = call_begin(&c, F_aclrtDeviceGetBareTgid, NEED_NONE);
    if (!rc && !pid)
        rc = fail(&c, E_PARAM, "pid is NULL");
    if (!rc)
        *pid = (int32_t)getpid();
    return call_end(&c, rc);
}
