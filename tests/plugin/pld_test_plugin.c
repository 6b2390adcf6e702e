/* pld_test_plugin.c - a kernel backend plugin for the tests, built against
 * src/hw_backend/pld_backend.h alone (it never sees pldrun's other headers).
 *
 * It records every call in a log (one line per call, option log=PATH; the
 * string "%r" in PATH becomes the rank), checks the ABI bytes of every launch
 * against the kernel's description (ChipTensor dims and strides, dtype codes,
 * LocalContext block index and count, the CommContext of window arguments)
 * and runs a few kernels of its own as host C code:
 *
 *   stamp(x, y, ids, rank)         args[] form: y = x + rank, ids[0,0] = rank
 *                                  (programs/tutorial/hello_rank.pld)
 *   axpy(x, y, a)                  typed form (libffi): y = a * x
 *   at_add(x, y2, k, ...)          args[] form, a pl.at scope named "at_add":
 *                                  y2 = x + k (captured values as arguments)
 *   grid_rows(z, ...)              args[] form, a pl.spmd grid named
 *                                  "grid_rows": block b writes row b = b
 *   ctx_probe(win, out, ctx)       args[] form: out[0, 0..3] = rankNum,
 *                                  rankId, ranks mapped here (windowsIn[r]
 *                                  != 0), whether win lies in this rank's
 *                                  own window
 *
 * Options (--backend-options, comma-separated): log=PATH; fail=open |
 * load | launch (that call fails with a message). The environment variable
 * PLD_TEST_PLUGIN_ENTRY selects the table the entry returns: "device" (the
 * plugin keeps its own memory: no PLD_BE_CAP_HOST_MEMORY, so pldrun copies
 * tensors in and out with mem_alloc/upload/download/free), or an unusable
 * one for the loader's refusals: abi, size, null, noopen. */
#include "pld_backend.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_KERNELS 16
#define MAX_ALLOCS 256

struct pld_be_kernel {
    char name[64];
    pld_be_kernel_desc_t desc;       /* borrowed params: copied below */
    pld_be_param_t params[64];
};

struct pld_be {
    int rank, nranks;
    FILE *log;
    int device;                      /* own memory */
    char fail[16];
    char err[512];
    struct pld_be_kernel kernels[MAX_KERNELS];
    int nkernels;
    void *allocs[MAX_ALLOCS];        /* device=1: live device blocks */
    size_t alloc_bytes[MAX_ALLOCS];
    pld_be_coll_t coll;
};

static char open_err[256];

static void logf_(struct pld_be *be, const char *fmt, ...)
{
    if (!be->log)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(be->log, "rank %d: ", be->rank);
    vfprintf(be->log, fmt, ap);
    fputc('\n', be->log);
    fflush(be->log);
    va_end(ap);
}

static int fail(struct pld_be *be, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(be->err, sizeof be->err, fmt, ap);
    va_end(ap);
    logf_(be, "error %s", be->err);
    return rc;
}

/* option `key` of "k=v,k=v" into out ("" when absent) */
static void option(const char *opts, const char *key, char *out, size_t n)
{
    out[0] = '\0';
    size_t kl = strlen(key);
    for (const char *p = opts; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > kl && strncmp(p, key, kl) == 0 && p[kl] == '=') {
            size_t vl = len - kl - 1 < n - 1 ? len - kl - 1 : n - 1;
            memcpy(out, p + kl + 1, vl);
            out[vl] = '\0';
        }
        p = end ? end + 1 : NULL;
    }
}

static int t_open(const pld_be_init_t *init, pld_be_t **out)
{
    *out = NULL;
    if (init->abi != PLD_BE_ABI || init->struct_size < sizeof(pld_be_init_t)) {
        snprintf(open_err, sizeof open_err, "init block of ABI %u, %u bytes", init->abi, init->struct_size);
        return PLD_BE_E_INVAL;
    }
    struct pld_be *be = calloc(1, sizeof *be);
    if (!be)
        return PLD_BE_E_NOMEM;
    be->rank = init->rank;
    be->nranks = init->nranks;
    be->coll = init->coll;
    char v[256], path[300];
    option(init->options, "log", v, sizeof v);
    if (v[0]) {
        char *r = strstr(v, "%r");
        if (r) {
            *r = '\0';
            snprintf(path, sizeof path, "%s%d%s", v, init->rank, r + 2);
        } else {
            snprintf(path, sizeof path, "%s", v);
        }
        be->log = fopen(path, "w");
    }
    const char *e = getenv("PLD_TEST_PLUGIN_ENTRY");
    be->device = e && strcmp(e, "device") == 0;
    option(init->options, "fail", be->fail, sizeof be->fail);
    logf_(be, "open nranks=%d local=%d/%d device=%d", init->nranks, init->local_rank, init->local_size, be->device);
    /* a collective step through pldrun's callbacks: every rank's id */
    if (init->coll.allgather && init->nranks > 1) {
        int32_t mine = init->rank, all[64];
        if (init->nranks > 64 || init->coll.allgather(init->coll.ctx, &mine, all, sizeof mine) != 0) {
            snprintf(open_err, sizeof open_err, "the allgather callback failed");
            free(be);
            return PLD_BE_E_COMM;
        }
        for (int r = 0; r < init->nranks; r++)
            if (all[r] != r) {
                snprintf(open_err, sizeof open_err, "allgather slot %d holds %d", r, all[r]);
                free(be);
                return PLD_BE_E_COMM;
            }
        logf_(be, "allgather ok");
    }
    if (strcmp(be->fail, "open") == 0) {
        snprintf(open_err, sizeof open_err, "told to fail open (fail=open)");
        if (be->log)
            fclose(be->log);
        free(be);
        return PLD_BE_E_DEVICE;
    }
    *out = be;
    return PLD_BE_OK;
}

static void t_close(pld_be_t *be)
{
    int leaked = 0;
    for (int i = 0; i < MAX_ALLOCS; i++)
        if (be->allocs[i]) {
            leaked++;
            free(be->allocs[i]);
        }
    logf_(be, "close leaked=%d", leaked);
    if (be->log)
        fclose(be->log);
    free(be);
}

static const char *t_last_error(pld_be_t *be)
{
    return be ? be->err : open_err;
}

static int t_program_load(pld_be_t *be, const char *path, uint32_t n, const pld_be_kernel_desc_t *ks)
{
    logf_(be, "program_load %s kernels=%u", path ? path : "?", n);
    for (uint32_t i = 0; i < n; i++) {
        char line[512];
        int o = snprintf(line, sizeof line, "kernel %s line=%d core=%u params=", ks[i].name, ks[i].line, ks[i].core_type);
        for (uint32_t j = 0; j < ks[i].nparams && o < (int)sizeof line - 40; j++)
            o += snprintf(line + o, sizeof line - (size_t)o, "%s%s:%u:%u:%u%s", j ? "," : "", ks[i].params[j].name,
                          ks[i].params[j].kind, ks[i].params[j].dtype, ks[i].params[j].dir,
                          ks[i].params[j].window ? ":w" : "");
        logf_(be, "%s", line);
    }
    return PLD_BE_OK;
}

/* ---- the kernels (host C) ---- */

typedef struct abi_view {
    const int64_t *args;
    int nt;                           /* tensor parameters */
} abi_view_t;

static const pld_abi_tensor_t *tensor_at(const int64_t *args, int i)
{
    return (const pld_abi_tensor_t *)(uintptr_t)args[i];
}

static float *f32(const pld_abi_tensor_t *t)
{
    return (float *)(uintptr_t)t->addr + t->start_offset;
}

static const pld_abi_local_t *local_of(const int64_t *args)
{
    return (const pld_abi_local_t *)(uintptr_t)args[PLD_ABI_LOCAL_SLOT];
}

static void k_stamp(const int64_t *args)
{
    const pld_abi_tensor_t *x = tensor_at(args, 0), *y = tensor_at(args, 1), *ids = tensor_at(args, 2);
    const int32_t rank = (int32_t)args[3];
    const uint32_t rows = x->shapes[0], cols = x->shapes[1];
    for (uint32_t i = 0; i < rows; i++)
        for (uint32_t j = 0; j < cols; j++)
            f32(y)[i * y->strides[0] + j * y->strides[1]] = f32(x)[i * x->strides[0] + j * x->strides[1]] + (float)rank;
    ((int32_t *)(uintptr_t)ids->addr)[ids->start_offset] = rank;
}

static void k_at_add(const int64_t *args, const struct pld_be_kernel *k)
{
    /* captured: x, y2 (tensors) then k (a scalar), in the order pldrun chose:
     * find them by name */
    const pld_abi_tensor_t *x = NULL, *y = NULL;
    float kk = 0;
    int ti = 0, si = 0, nt = 0;
    for (uint32_t i = 0; i < k->desc.nparams; i++)
        nt += k->params[i].kind == PLD_BE_P_TENSOR;
    for (uint32_t i = 0; i < k->desc.nparams; i++) {
        const pld_be_param_t *p = &k->params[i];
        if (p->kind == PLD_BE_P_TENSOR) {
            if (strcmp(p->name, "x") == 0)
                x = tensor_at(args, ti);
            if (strcmp(p->name, "y2") == 0)
                y = tensor_at(args, ti);
            ti++;
        } else {
            if (strcmp(p->name, "k") == 0) {
                int64_t w = args[nt + si];
                kk = p->dtype == 0 ? (float)0 : (float)w;
                if (p->dtype == 0) {
                    uint32_t u = (uint32_t)w;
                    memcpy(&kk, &u, 4);
                }
            }
            si++;
        }
    }
    if (!x || !y)
        return;
    for (uint32_t i = 0; i < x->shapes[0]; i++)
        for (uint32_t j = 0; j < x->shapes[1]; j++)
            f32(y)[i * y->strides[0] + j * y->strides[1]] = f32(x)[i * x->strides[0] + j * x->strides[1]] + kk;
}

static void k_grid_rows(const int64_t *args)
{
    const pld_abi_tensor_t *z = tensor_at(args, 0);
    const int32_t b = local_of(args)->block_idx;
    for (uint32_t j = 0; j < z->shapes[1]; j++)
        f32(z)[(uint32_t)b * z->strides[0] + j * z->strides[1]] = (float)b;
}

/* the typed kernel: called by pldrun through libffi */
static void k_axpy(float *x, float *y, float a, int32_t block_idx, int32_t block_num)
{
    (void)block_num;
    for (int i = 0; i < 64; i++) /* [4, 16] */
        if (block_idx == 0)
            y[i] = a * x[i];
}

/* ctx_probe(win, out, ctx): what the CommContext says, written into out[0, 0..3]:
 * rankNum, rankId, the number of ranks whose window is mapped here, and 1 when
 * the window argument lies in this rank's own window (windowsIn[rankId]). */
static void k_ctx_probe(const int64_t *args)
{
    const pld_abi_tensor_t *win = tensor_at(args, 0), *out = tensor_at(args, 1);
    const unsigned char *ctx = (const unsigned char *)(uintptr_t)args[2];
    uint32_t rank_id, rank_num;
    uint64_t win_size, base[64];
    memcpy(&rank_id, ctx + PLD_ABI_CTX_RANK_ID, 4);
    memcpy(&rank_num, ctx + PLD_ABI_CTX_RANK_NUM, 4);
    memcpy(&win_size, ctx + PLD_ABI_CTX_WIN_SIZE, 8);
    memcpy(base, ctx + PLD_ABI_CTX_WINDOWS_IN, sizeof base);
    int mapped = 0;
    for (uint32_t r = 0; r < rank_num && r < 64; r++)
        mapped += base[r] != 0;
    const uint64_t a = win->addr + win->start_offset * 4;
    f32(out)[0] = (float)rank_num;
    f32(out)[1] = (float)rank_id;
    f32(out)[2] = (float)mapped;
    f32(out)[3] = a >= base[rank_id] && a < base[rank_id] + win_size ? 1.0f : 0.0f;
}

/* ---- load, launch ---- */

static int t_kernel_load(pld_be_t *be, const pld_be_kernel_desc_t *d, pld_be_kernel_t **out,
                         pld_be_kernel_info_t *info)
{
    logf_(be, "kernel_load %s params=%u line=%d", d->name, d->nparams, d->line);
    if (strcmp(be->fail, "load") == 0)
        return fail(be, PLD_BE_E_LOAD, "told to fail kernel_load (fail=load)");
    static const char *const known[] = {"stamp", "axpy", "at_add", "grid_rows", "ctx_probe"};
    int found = 0;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        found |= strcmp(d->name, known[i]) == 0;
    if (!found)
        return fail(be, PLD_BE_E_UNSUPPORTED, "the test plugin has no kernel '%s'", d->name);
    if (be->nkernels == MAX_KERNELS || d->nparams > 64)
        return fail(be, PLD_BE_E_NOMEM, "too many kernels");
    struct pld_be_kernel *k = &be->kernels[be->nkernels++];
    snprintf(k->name, sizeof k->name, "%s", d->name);
    k->desc = *d;
    memcpy(k->params, d->params, d->nparams * sizeof *d->params);
    k->desc.params = k->params;
    info->conv = strcmp(d->name, "axpy") == 0 ? PLD_BE_CALL_TYPED : PLD_BE_CALL_ARGS;
    info->fn = NULL;
    if (info->conv == PLD_BE_CALL_TYPED) {
        void (*fn)(float *, float *, float, int32_t, int32_t) = k_axpy;
        memcpy(&info->fn, &fn, sizeof fn);
    }
    *out = k;
    return PLD_BE_OK;
}

/* 1 when device address a (bytes long) lies in one of this plugin's blocks */
static int is_device(const struct pld_be *be, uint64_t a, uint64_t bytes)
{
    for (int i = 0; i < MAX_ALLOCS; i++)
        if (be->allocs[i] && a >= (uint64_t)(uintptr_t)be->allocs[i] &&
            a + bytes <= (uint64_t)(uintptr_t)be->allocs[i] + be->alloc_bytes[i])
            return 1;
    return 0;
}

/* Checks the frame of block b against the kernel's description. */
static int check_frame(struct pld_be *be, const struct pld_be_kernel *k, const pld_abi_frame_t *fr, uint32_t b,
                       uint32_t n)
{
    int nt = 0, ns = 0;
    for (uint32_t i = 0; i < k->desc.nparams; i++)
        k->params[i].kind == PLD_BE_P_TENSOR ? nt++ : ns++;
    const pld_abi_local_t *lc = local_of(fr->args);
    if (!lc || lc->block_idx != (int32_t)b || lc->block_num != (int32_t)n || lc->task_token != UINT64_MAX)
        return fail(be, PLD_BE_E_INVAL, "%s: LocalContext of block %u is wrong", k->name, b);
    if (!fr->args[PLD_ABI_GLOBAL_SLOT])
        return fail(be, PLD_BE_E_INVAL, "%s: no GlobalContext", k->name);
    int ti = 0;
    for (uint32_t i = 0; i < k->desc.nparams; i++) {
        const pld_be_param_t *p = &k->params[i];
        if (p->kind != PLD_BE_P_TENSOR)
            continue;
        const pld_abi_tensor_t *t = tensor_at(fr->args, ti++);
        if (!t || t->ndims != (p->rank ? p->rank : 1) || t->dtype != p->dtype || t->owner_task_id != UINT64_MAX)
            return fail(be, PLD_BE_E_INVAL, "%s: ChipTensor of '%s' does not match its parameter (ndims %u, dtype %u)",
                        k->name, p->name, t ? t->ndims : 0, t ? t->dtype : 0);
        uint64_t ext = 1;
        for (uint32_t d = 0; d < t->ndims; d++)
            ext += (uint64_t)(t->shapes[d] - 1) * t->strides[d];
        if (be->device && !p->window && !is_device(be, t->addr, ext))
            return fail(be, PLD_BE_E_INVAL, "%s: tensor '%s' is not in device memory", k->name, p->name);
    }
    (void)ns;
    return PLD_BE_OK;
}

static int t_launch(pld_be_t *be, pld_be_kernel_t *k, const pld_be_launch_t *l)
{
    logf_(be, "launch %s blocks=%u flags=%u", k->name, l->block_num, l->flags);
    if (strcmp(be->fail, "launch") == 0)
        return fail(be, PLD_BE_E_LAUNCH, "told to fail launch (fail=launch)");
    for (uint32_t b = 0; b < l->block_num; b++) {
        const pld_abi_frame_t *fr = &l->frames[b];
        int rc = check_frame(be, k, fr, b, l->block_num);
        if (rc != PLD_BE_OK)
            return rc;
        if (strcmp(k->name, "stamp") == 0)
            k_stamp(fr->args);
        else if (strcmp(k->name, "at_add") == 0)
            k_at_add(fr->args, k);
        else if (strcmp(k->name, "grid_rows") == 0)
            k_grid_rows(fr->args);
        else if (strcmp(k->name, "ctx_probe") == 0)
            k_ctx_probe(fr->args);
    }
    return PLD_BE_OK;
}

static int t_sync(pld_be_t *be, uint32_t timeout_ms)
{
    (void)be;
    (void)timeout_ms;
    return PLD_BE_OK;
}

/* ---- device memory (device=1) ---- */

static int t_mem_alloc(pld_be_t *be, size_t bytes, size_t align, pld_be_devptr_t *out)
{
    (void)align;
    for (int i = 0; i < MAX_ALLOCS; i++)
        if (!be->allocs[i]) {
            be->allocs[i] = calloc(1, bytes);
            if (!be->allocs[i])
                return fail(be, PLD_BE_E_NOMEM, "out of device memory");
            be->alloc_bytes[i] = bytes;
            *out = (pld_be_devptr_t)(uintptr_t)be->allocs[i];
            logf_(be, "mem_alloc %zu", bytes);
            return PLD_BE_OK;
        }
    return fail(be, PLD_BE_E_NOMEM, "too many device blocks");
}

static int t_mem_free(pld_be_t *be, pld_be_devptr_t p)
{
    for (int i = 0; i < MAX_ALLOCS; i++)
        if (be->allocs[i] && (pld_be_devptr_t)(uintptr_t)be->allocs[i] == p) {
            free(be->allocs[i]);
            be->allocs[i] = NULL;
            logf_(be, "mem_free");
            return PLD_BE_OK;
        }
    return fail(be, PLD_BE_E_INVAL, "mem_free of an unknown block");
}

static int t_upload(pld_be_t *be, pld_be_devptr_t dst, const void *src, size_t n)
{
    if (!is_device(be, dst, n))
        return fail(be, PLD_BE_E_INVAL, "upload outside device memory");
    memcpy((void *)(uintptr_t)dst, src, n);
    logf_(be, "upload %zu", n);
    return PLD_BE_OK;
}

static int t_download(pld_be_t *be, void *dst, pld_be_devptr_t src, size_t n)
{
    if (!is_device(be, src, n))
        return fail(be, PLD_BE_E_INVAL, "download outside device memory");
    memcpy(dst, (const void *)(uintptr_t)src, n);
    logf_(be, "download %zu", n);
    return PLD_BE_OK;
}

static const pld_be_ops_t host_ops = {
    PLD_BE_ABI, sizeof(pld_be_ops_t), "test", "the test plugin (tests/plugin)", PLD_BE_CAP_HOST_MEMORY,
    t_open, t_close, t_last_error, t_kernel_load, t_launch, t_sync, t_program_load, NULL,
    t_mem_alloc, t_mem_free, t_upload, t_download, NULL, NULL,
};

static pld_be_ops_t bad_ops;

#ifndef PLD_BE_EXPORT
#define PLD_BE_EXPORT
#endif
PLD_BE_EXPORT const pld_be_ops_t *pld_backend_entry(uint32_t requested_abi);
PLD_BE_EXPORT const pld_be_ops_t *pld_backend_entry(uint32_t requested_abi)
{
    if (requested_abi != PLD_BE_ABI)
        return NULL;
    const char *e = getenv("PLD_TEST_PLUGIN_ENTRY");
    if (!e || !*e)
        return &host_ops;
    bad_ops = host_ops;
    if (strcmp(e, "null") == 0)
        return NULL;
    if (strcmp(e, "abi") == 0)
        bad_ops.abi = PLD_BE_ABI + 1;
    else if (strcmp(e, "size") == 0)
        bad_ops.struct_size = 16;
    else if (strcmp(e, "noopen") == 0)
        bad_ops.open = NULL;
    else if (strcmp(e, "device") == 0)
        bad_ops.caps = 0;
    return &bad_ops;
}
