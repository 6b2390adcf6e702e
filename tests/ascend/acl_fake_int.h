/* acl_fake_int.h - what the files of the fake ACL runtime share (acl_fake.c,
 * acl_fake_mem.c, acl_fake_kernel.c; one shared object, libacl_rt.so, built
 * with hidden visibility: only the FAKE_API entry points are exported). The
 * configuration, the call log and the error text, the fake's state (all of it
 * under `mu`) and its lookups. */
#ifndef ACL_FAKE_INT_H
#define ACL_FAKE_INT_H

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
extern const char *const call_names[];

#define MAX_DEVICES 64
#define MAX_FAILS 16

typedef struct fake_cfg {
    int devices, aiv_cores, no_fabric;
    /* ASCEND_RT_VISIBLE_DEVICES: the user (logical) ids the runtime hands out
     * and the driver id of each (runtime.cc:4951 GetVisibleDevices) */
    int nvisible, visible[MAX_DEVICES];
    char version[64];                 /* ACL_FAKE_CANN_VERSION */
    int ver_major, ver_minor;
    long free_block_ms;               /* ACL_FAKE_FREE_BLOCK_MS: how long a free after a fault blocks */
    size_t granularity;
    long device_error;                /* the launch that faults, 0: none */
    struct { int call; long nth; } fails[MAX_FAILS];
    int nfails;
    FILE *log;
} fake_cfg_t;

extern fake_cfg_t cfg;
extern pthread_mutex_t mu;            /* all state below */
extern char recent_err[1024];

/* One call being made: its log line is built as it goes. */
typedef struct call {
    int id;
    char args[1536];
    size_t n;
    char err[512];
    int locked;                       /* holds mu */
} call_t;

void ja_raw(call_t *c, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void ja_i(call_t *c, const char *key, long long v);
void ja_u(call_t *c, const char *key, unsigned long long v);
void ja_p(call_t *c, const char *key, const void *p);
void ja_s(call_t *c, const char *key, const char *s);

enum { NEED_NONE, NEED_INIT, NEED_DEVICE };
aclError call_begin(call_t *c, int id, int need);
aclError call_end(call_t *c, aclError rc);
aclError fail(call_t *c, aclError code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ============================================================ state */

typedef struct alloc {
    unsigned char *ptr;               /* what aclrtMalloc returned */
    size_t size;
    int dev;                          /* driver id */
    unsigned gen;                     /* dev_faults[dev] when allocated */
    struct alloc *next;
} alloc_t;

#define CANARY 64
#define CANARY_BYTE 0xCD

typedef struct phys {
    char name[64];                    /* the shm object */
    int pids[8], npids;               /* aclrtMemSetPidToShareableHandle's whitelist */
    int fd;
    size_t size;
    int dev;                          /* the device it lives on (driver id) */
    unsigned gen;                     /* dev_faults[dev] when allocated */
    int owner;                        /* created here (unlinked when freed) */
    int nmaps;
    unsigned counter;
    struct phys *next;
} phys_t;

typedef struct resv {
    unsigned char *va;
    size_t size;
    int dev;                          /* the driver id of the device it was reserved on */
    phys_t *mapped;                   /* NULL: reserved only */
    int access;                       /* aclrtMemSetAccess done */
    struct resv *next;
} resv_t;

typedef struct func {
    struct bin *bin;
    void *sym;
    char name[128];                   /* the registered name: the symbol without _mix_aic / _mix_aiv */
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
    int waiters;                      /* threads inside aclrtSynchronizeStreamWithTimeout */
    int reset;                        /* the device was reset under a waiting sync */
    char errmsg[512];
    struct stream *next;
} stream_t;

extern int state;                     /* 0 before aclInit, 1 initialised, 2 after aclFinalize */
extern _Thread_local int cur_dev;     /* the user (logical) id aclrtSetDevice was given, -1: none */
extern unsigned char peer_ok[MAX_DEVICES][MAX_DEVICES]; /* [driver id][driver id] */
extern unsigned char dev_set_here[MAX_DEVICES];         /* driver id: aclrtSetDevice'd in this process */
extern unsigned dev_faults[MAX_DEVICES];                /* driver id: device faults so far */
int drv_id(int user_dev);                               /* ASCEND_RT_VISIBLE_DEVICES translation */
aclError block_if_faulted(call_t *c, int drv, unsigned gen); /* a free after a fault blocks */
aclError need_version(call_t *c, int major, int minor);  /* CANN >= major.minor, else 207000 */
extern alloc_t *allocs;
extern phys_t *physs;
extern resv_t *resvs;
extern bin_t *bins;
extern stream_t *streams;
extern unsigned phys_counter;
extern long launches;
extern int atexit_done;
extern _Thread_local task_t *cur_task;
extern _Thread_local int cur_block;

phys_t *find_phys(const void *h);
resv_t *find_resv(const void *va);
bin_t *find_bin(const void *h);
func_t *find_func(const void *h);
stream_t *find_stream(const void *h);
int is_device(const void *p, size_t n);
int touches_device(const void *p, size_t n);
void unlink_owned(void);
void shm_unlink_all(const char *name);   /* the object and its PID whitelist */

/* streams (acl_fake_kernel.c; the caller holds mu) */
void cancel_running(stream_t *s);
void drop_queued(stream_t *s);
void stream_stop(stream_t *s);        /* acl_fake.c */
void stream_fault(stream_t *s, int code, const char *msg);

#endif
