/* pld_hw_plugin.c - a backend plugin (pld_backend.h) behind the core's
 * backend boundary (pld_hw.h): dlopen, the entry symbol and its checks, the
 * per-launch work (kernel load on first use, device copies of the tensor
 * arguments when the backend has its own memory, the ABI frames of every
 * block, the launch or the typed call through libffi, the copies back).
 * The only file of pldrun that links libdl and libffi. */
#include "pld_hw.h"
#include "pld_mem.h"

#include <dlfcn.h>
#include <ffi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* a kernel as loaded: by name (a program's kernels have unique names) */
typedef struct plug_kernel {
    char *name;
    int line;                         /* with the name: scopes may share a name_hint */
    pld_be_kernel_t *k;
    pld_be_kernel_info_t info;
    /* PLD_BE_CALL_TYPED: the C call, built at load from the kernel's parameters */
    ffi_cif cif;
    ffi_type **types;
    uint32_t nparams;
} plug_kernel_t;

/* a comm domain's window placed by the backend (PLD_BE_CAP_WINDOWS) */
typedef struct plug_window {
    const void *host_ctx;             /* the domain's host CommContext: how launches name it */
    const char *host_base;            /* this rank's host window (offsets of tensors in it) */
    size_t bytes;
    int n, me;
    pld_be_window_t *w;
    pld_be_devptr_t bases[PLD_ABI_CTX_WINDOWS_OUT / 8];
    pld_be_devptr_t dev_ctx;          /* the CommContext on the device */
} plug_window_t;

typedef struct plug {
    void *dl;
    char *path;
    const pld_be_ops_t *ops;
    pld_be_t *be;
    plug_kernel_t *kernels;
    int nkernels, cap;
    plug_window_t *wins;
    int nwins;
} plug_t;

/* the plugin's last error text, or `fallback` */
static const char *be_error(const plug_t *p, const char *fallback)
{
    const char *m = p->ops->last_error ? p->ops->last_error(p->be) : NULL;
    return m && *m ? m : fallback;
}

static const char *be_status_name(int rc)
{
    switch (rc) {
    case PLD_BE_E_UNSUPPORTED: return "not supported";
    case PLD_BE_E_INVAL: return "invalid argument";
    case PLD_BE_E_NOMEM: return "out of memory";
    case PLD_BE_E_LOAD: return "load failed";
    case PLD_BE_E_LAUNCH: return "launch failed";
    case PLD_BE_E_DEVICE: return "device error";
    case PLD_BE_E_TIMEOUT: return "timed out";
    case PLD_BE_E_COMM: return "a collective step failed";
    default: return "failed";
    }
}

/* The libffi type of kernel parameter p in the typed calling convention. */
static ffi_type *typed_param(const pld_be_param_t *p)
{
    if (p->kind != PLD_BE_P_SCALAR)
        return &ffi_type_pointer; /* a tensor (element 0) or a CommContext */
    switch (p->dtype) {
    case 0: return &ffi_type_float;                       /* FP32 */
    case 1: case 6: case 9: return &ffi_type_uint16;      /* FP16, BF16 (their bits), UINT16 */
    case 2: return &ffi_type_sint32;
    case 3: return &ffi_type_sint16;
    case 4: return &ffi_type_sint8;
    case 5: case 11: return &ffi_type_uint8;              /* UINT8, BOOL */
    case 7: return &ffi_type_sint64;
    case 8: return &ffi_type_uint64;
    case 10: return &ffi_type_uint32;
    default: return NULL;
    }
}

/* Builds the ffi_cif of a typed kernel: its parameters, then block index and count. */
static pld_status_t typed_prepare(plug_kernel_t *pk, const pld_be_kernel_desc_t *d, char *err, size_t errn)
{
    pk->nparams = d->nparams;
    pk->types = pld_mem_calloc((size_t)d->nparams + 2, sizeof *pk->types);
    if (!pk->types) {
        snprintf(err, errn, "out of memory");
        return PLD_E_NOMEM;
    }
    for (uint32_t i = 0; i < d->nparams; i++) {
        pk->types[i] = typed_param(&d->params[i]);
        if (!pk->types[i]) {
            snprintf(err, errn, "kernel %s: parameter '%s' has no C type in the typed calling convention", d->name,
                     d->params[i].name ? d->params[i].name : "?");
            return PLD_E_HW;
        }
    }
    pk->types[d->nparams] = &ffi_type_sint32;
    pk->types[d->nparams + 1] = &ffi_type_sint32;
    if (ffi_prep_cif(&pk->cif, FFI_DEFAULT_ABI, d->nparams + 2, &ffi_type_void, pk->types) != FFI_OK) {
        snprintf(err, errn, "kernel %s: libffi cannot describe its typed call", d->name);
        return PLD_E_HW;
    }
    return PLD_OK;
}

static plug_kernel_t *find_kernel(plug_t *p, const char *name, int line)
{
    for (int i = 0; i < p->nkernels; i++)
        if (strcmp(p->kernels[i].name, name) == 0 && p->kernels[i].line == line)
            return &p->kernels[i];
    return NULL;
}

/* The loaded kernel of launch l, loading it on first use. */
static pld_status_t get_kernel(plug_t *p, const pld_hw_launch_t *l, plug_kernel_t **out)
{
    const pld_be_kernel_desc_t *d = l->desc;
    if (!d) {
        snprintf(l->err, l->errn, "kernel %s has no description for a plugin", l->kernel);
        return PLD_E_HW;
    }
    if ((*out = find_kernel(p, d->name, d->line)) != NULL)
        return PLD_OK;
    if (p->nkernels == p->cap) {
        int cap = p->cap ? 2 * p->cap : 8;
        plug_kernel_t *k = pld_mem_realloc(p->kernels, (size_t)cap * sizeof *k);
        if (!k) {
            snprintf(l->err, l->errn, "out of memory");
            return PLD_E_NOMEM;
        }
        p->kernels = k;
        p->cap = cap;
    }
    plug_kernel_t *pk = &p->kernels[p->nkernels];
    memset(pk, 0, sizeof *pk);
    int rc = p->ops->kernel_load(p->be, d, &pk->k, &pk->info);
    if (rc != PLD_BE_OK) {
        snprintf(l->err, l->errn, "backend '%s' cannot load kernel %s (%s:%d): %s", p->ops->name, d->name,
                 d->program ? d->program : "?", d->line, be_error(p, be_status_name(rc)));
        return PLD_E_HW;
    }
    pk->name = pld_mem_strdup(d->name);
    pk->line = d->line;
    pld_status_t st = pk->name ? PLD_OK : PLD_E_NOMEM;
    if (st == PLD_OK && pk->info.conv == PLD_BE_CALL_TYPED)
        st = pk->info.fn ? typed_prepare(pk, d, l->err, l->errn) : PLD_E_HW;
    else if (st == PLD_OK && pk->info.conv != PLD_BE_CALL_ARGS)
        st = PLD_E_HW;
    if (st != PLD_OK) {
        if (!l->err[0])
            snprintf(l->err, l->errn, "backend '%s' loaded kernel %s with an unknown calling convention %u",
                     p->ops->name, d->name, pk->info.conv);
        if (p->ops->kernel_unload)
            p->ops->kernel_unload(p->be, pk->k);
        pld_mem_free(pk->types);
        pld_mem_free(pk->name);
        return st;
    }
    p->nkernels++;
    *out = pk;
    return PLD_OK;
}

/* bytes spanned by tensor t (0 for an empty one) */
static size_t tensor_bytes(const pld_hw_tensor_t *t)
{
    size_t ext = 1;
    for (int d = 0; d < t->rank; d++) {
        if (t->shape[d] <= 0)
            return 0;
        ext += (size_t)(t->shape[d] - 1) * (size_t)(t->strides[d] > 0 ? t->strides[d] : 0);
    }
    return ext * (size_t)pld_dtype_bytes(t->dt);
}

/* One block of a typed kernel: a C call through libffi. */
static void typed_call(const plug_kernel_t *pk, const pld_hw_arg_t *args, const pld_be_kernel_desc_t *d, int b,
                       int n)
{
    void *vals[PLD_ABI_ARGS + 2];
    union {
        void *p;
        float f;
        uint16_t u16;
        int32_t i32;
        int16_t i16;
        int8_t i8;
        uint8_t u8;
        int64_t i64;
        uint64_t u64;
        uint32_t u32;
    } store[PLD_ABI_ARGS + 2];
    for (uint32_t i = 0; i < pk->nparams; i++) {
        const pld_hw_arg_t *a = &args[i];
        double dv;
        memcpy(&dv, &a->bits, sizeof dv);
        if (a->is_tensor)
            store[i].p = a->tensor.data;
        else if (d->params[i].kind == PLD_BE_P_COMM_CTX)
            store[i].p = (void *)(uintptr_t)a->bits;
        else if (pk->types[i] == &ffi_type_float)
            store[i].f = (float)dv;
        else if (pk->types[i] == &ffi_type_uint16)
            store[i].u16 = a->dt == PLD_DT_FP16   ? pld_f32_to_f16((float)dv)
                           : a->dt == PLD_DT_BF16 ? pld_f32_to_bf16((float)dv)
                                                  : (uint16_t)a->bits;
        else
            store[i].u64 = a->bits; /* little-endian: the low bytes are the narrower integer */
        vals[i] = &store[i];
    }
    store[pk->nparams].i32 = b;
    store[pk->nparams + 1].i32 = n;
    vals[pk->nparams] = &store[pk->nparams];
    vals[pk->nparams + 1] = &store[pk->nparams + 1];
    ffi_call((ffi_cif *)&pk->cif, pk->info.fn, NULL, vals);
}

static const plug_window_t *find_window(const plug_t *p, const void *host_ctx)
{
    for (int i = 0; host_ctx && i < p->nwins; i++)
        if (p->wins[i].host_ctx == host_ctx)
            return &p->wins[i];
    return NULL;
}

/* The host copy of this rank's window w, refreshed from the device. */
static int fetch_window(plug_t *p, const plug_window_t *w)
{
    if (!w->bytes)
        return PLD_BE_OK;
    return p->ops->download ? p->ops->download(p->be, (void *)w->host_base, w->bases[w->me], w->bytes)
                            : PLD_BE_E_UNSUPPORTED;
}

static int is_ctx_scalar(const pld_hw_launch_t *l, int i)
{
    return !l->args[i].is_tensor && l->desc->params[i].kind == PLD_BE_P_COMM_CTX;
}

/* The backend-placed window argument i of l names (a window tensor or a
 * CommCtx scalar), or NULL. */
static const plug_window_t *arg_window(const plug_t *p, const pld_hw_launch_t *l, int i)
{
    return find_window(p, is_ctx_scalar(l, i) ? (const void *)(uintptr_t)l->args[i].bits
                          : l->args[i].is_tensor ? l->args[i].tensor.comm_ctx : NULL);
}

/* The device side of the tensor arguments: in place on a host-memory
 * backend, else a device copy of each (uploaded now, downloaded and freed
 * by finish_args). dev[i] receives argument i with device addresses. */
static pld_status_t device_args(plug_t *p, const pld_hw_launch_t *l, pld_hw_arg_t *dev)
{
    const int host = (p->ops->caps & PLD_BE_CAP_HOST_MEMORY) != 0;
    for (int i = 0; i < l->nargs; i++) {
        dev[i] = l->args[i];
        const pld_hw_arg_t *a = &l->args[i];
        const int ctx_scalar = is_ctx_scalar(l, i);
        if (host || (!a->is_tensor && !ctx_scalar))
            continue;
        const plug_window_t *w = arg_window(p, l, i);
        if (w && ctx_scalar) {
            dev[i].bits = w->dev_ctx;
            continue;
        }
        if (w) {
            const char *at = a->tensor.data;
            const size_t span = tensor_bytes(&a->tensor);
            if (at < w->host_base || (size_t)(at - w->host_base) + span > w->bytes) {
                snprintf(l->err, l->errn, "argument %d of kernel %s lies outside its window (%zu bytes)", i + 1,
                         l->kernel, w->bytes);
                return PLD_E_HW;
            }
            dev[i].tensor.data = (void *)(uintptr_t)(w->bases[w->me] + (pld_be_devptr_t)(at - w->host_base));
            continue;
        }
        if (ctx_scalar || a->tensor.comm_ctx) {
            snprintf(l->err, l->errn,
                     "argument %d of kernel %s is a window: backend '%s' keeps its own memory, and pldrun does "
                     "not yet place windows in a backend's memory",
                     i + 1, l->kernel, p->ops->name);
            return PLD_E_HW;
        }
        const size_t bytes = tensor_bytes(&a->tensor);
        pld_be_devptr_t d = 0;
        int rc = !p->ops->mem_alloc || !p->ops->upload ? PLD_BE_E_UNSUPPORTED
                                                       : p->ops->mem_alloc(p->be, bytes ? bytes : 1, 64, &d);
        if (rc == PLD_BE_OK && bytes)
            rc = p->ops->upload(p->be, d, a->tensor.data, bytes);
        if (rc != PLD_BE_OK) {
            if (d && p->ops->mem_free)
                p->ops->mem_free(p->be, d);
            snprintf(l->err, l->errn, "backend '%s' could not place argument %d of kernel %s (%zu bytes): %s",
                     p->ops->name, i + 1, l->kernel, bytes, be_error(p, be_status_name(rc)));
            for (int j = 0; j < i; j++)
                if (dev[j].is_tensor && dev[j].tensor.data != l->args[j].tensor.data && !arg_window(p, l, j))
                    p->ops->mem_free(p->be, (pld_be_devptr_t)(uintptr_t)dev[j].tensor.data);
            return PLD_E_HW;
        }
        dev[i].tensor.data = (void *)(uintptr_t)d;
    }
    return PLD_OK;
}

/* Copies the device tensors back (all but inputs) and frees them; refreshes
 * the host copy of every window the launch took. */
static pld_status_t finish_args(plug_t *p, const pld_hw_launch_t *l, const pld_hw_arg_t *dev, pld_status_t st)
{
    for (int i = 0; i < l->nargs && st == PLD_OK; i++) {
        const plug_window_t *w = arg_window(p, l, i);
        int seen = 0;
        for (int j = 0; w && j < i; j++)
            seen |= arg_window(p, l, j) == w;
        int rc = w && !seen ? fetch_window(p, w) : PLD_BE_OK;
        if (rc != PLD_BE_OK) {
            snprintf(l->err, l->errn, "backend '%s' could not copy back the window of argument %d of kernel %s: %s",
                     p->ops->name, i + 1, l->kernel, be_error(p, be_status_name(rc)));
            st = PLD_E_HW;
        }
    }
    for (int i = 0; i < l->nargs; i++) {
        if (!dev[i].is_tensor || dev[i].tensor.data == l->args[i].tensor.data || arg_window(p, l, i))
            continue;
        const pld_be_devptr_t d = (pld_be_devptr_t)(uintptr_t)dev[i].tensor.data;
        const size_t bytes = tensor_bytes(&l->args[i].tensor);
        if (st == PLD_OK && l->desc->params[i].dir != PLD_BE_DIR_IN && bytes) {
            int rc = p->ops->download ? p->ops->download(p->be, l->args[i].tensor.data, d, bytes)
                                      : PLD_BE_E_UNSUPPORTED;
            if (rc != PLD_BE_OK) {
                snprintf(l->err, l->errn, "backend '%s' could not copy back argument %d of kernel %s: %s",
                         p->ops->name, i + 1, l->kernel, be_error(p, be_status_name(rc)));
                st = PLD_E_HW;
            }
        }
        if (p->ops->mem_free)
            p->ops->mem_free(p->be, d);
    }
    return st;
}

static pld_status_t plug_launch(void *state, pld_hw_launch_t *l)
{
    plug_t *p = state;
    if (l->desc && (uint32_t)l->nargs != l->desc->nparams) {
        snprintf(l->err, l->errn, "kernel %s: %d arguments for %u parameters", l->kernel, l->nargs,
                 l->desc->nparams);
        return PLD_E_HW;
    }
    if (l->sync_start && !(p->ops->caps & PLD_BE_CAP_GANG)) {
        snprintf(l->err, l->errn, "kernel %s is a sync-start launch of %d blocks; backend '%s' cannot keep blocks "
                 "resident together", l->kernel, l->block_num, p->ops->name);
        return PLD_E_HW;
    }
    plug_kernel_t *pk;
    pld_status_t st = get_kernel(p, l, &pk);
    if (st != PLD_OK)
        return st;
    const int n = l->block_num > 0 ? l->block_num : 1;
    pld_hw_arg_t *dev = pld_mem_calloc((size_t)(l->nargs > 0 ? l->nargs : 1), sizeof *dev);
    pld_abi_frame_t *frames = NULL;
    if (!dev) {
        snprintf(l->err, l->errn, "out of memory");
        return PLD_E_NOMEM;
    }
    if ((st = device_args(p, l, dev)) != PLD_OK) {
        pld_mem_free(dev);
        return st;
    }
    pld_hw_launch_t dl = *l;
    dl.args = dev;
    if (pk->info.conv == PLD_BE_CALL_TYPED) {
        if (l->nargs > PLD_ABI_ARGS) {
            snprintf(l->err, l->errn, "kernel %s has %d parameters: a typed call carries at most %d", l->kernel,
                     l->nargs, PLD_ABI_ARGS);
            st = PLD_E_HW;
        }
        for (int b = 0; b < n && st == PLD_OK; b++)
            typed_call(pk, dev, l->desc, b, n);
    } else {
        frames = pld_mem_alloc((size_t)n * sizeof *frames);
        if (!frames) {
            snprintf(l->err, l->errn, "out of memory");
            st = PLD_E_NOMEM;
        }
        for (int b = 0; b < n && st == PLD_OK; b++)
            st = pld_abi_build(&frames[b], &dl, b, 0, l->err, l->errn);
        if (st == PLD_OK) {
            pld_be_launch_t bl = {sizeof bl, (uint32_t)n, l->sync_start ? PLD_BE_LAUNCH_GANG : 0u, l->timeout_ms,
                                  frames, l->host_state};
            int rc = p->ops->launch(p->be, pk->k, &bl);
            if (rc == PLD_BE_OK)
                rc = p->ops->sync(p->be, l->timeout_ms);
            if (rc != PLD_BE_OK) {
                snprintf(l->err, l->errn, "%s", be_error(p, be_status_name(rc)));
                st = PLD_E_HW;
            }
        }
    }
    st = finish_args(p, l, dev, st);
    pld_mem_free(frames);
    pld_mem_free(dev);
    return st;
}

static pld_status_t plug_load(void *state, const pld_hw_program_t *prog, char *err, size_t errn)
{
    plug_t *p = state;
    if (!p->ops->program_load)
        return PLD_OK;
    int rc = p->ops->program_load(p->be, prog->path, (uint32_t)prog->nkernels, prog->kernels);
    if (rc != PLD_BE_OK) {
        snprintf(err, errn, "backend '%s' cannot load program %s: %s", p->ops->name, prog->path,
                 be_error(p, be_status_name(rc)));
        return PLD_E_HW;
    }
    return PLD_OK;
}

static pld_status_t plug_sync(void *state, char *err, size_t errn)
{
    plug_t *p = state;
    int rc = p->ops->sync(p->be, 0);
    if (rc != PLD_BE_OK) {
        snprintf(err, errn, "%s", be_error(p, be_status_name(rc)));
        return PLD_E_HW;
    }
    return PLD_OK;
}

static void plug_close(void *state)
{
    plug_t *p = state;
    if (!p)
        return;
    for (int i = 0; i < p->nkernels; i++) {
        if (p->ops->kernel_unload)
            p->ops->kernel_unload(p->be, p->kernels[i].k);
        pld_mem_free(p->kernels[i].types);
        pld_mem_free(p->kernels[i].name);
    }
    pld_mem_free(p->kernels);
    pld_mem_free(p->wins); /* a window not freed collectively goes with the backend's close */
    if (p->be)
        p->ops->close(p->be);
    if (p->dl)
        dlclose(p->dl);
    pld_mem_free(p->path);
    pld_mem_free(p);
}

/* ---- windows placed by the backend ---- */

static pld_status_t plug_window_alloc(void *state, const pld_hw_window_req_t *req, char *err, size_t errn)
{
    plug_t *p = state;
    if (!(p->ops->caps & PLD_BE_CAP_WINDOWS) || !p->ops->window_alloc || !p->ops->window_free) {
        snprintf(err, errn, "backend '%s' does not place windows", p->ops->name);
        return PLD_E_USAGE;
    }
    if (req->n < 1 || req->n > (int)(sizeof p->wins->bases / sizeof p->wins->bases[0]) || req->me < 0 ||
        req->me >= req->n) {
        snprintf(err, errn, "a comm domain of %d ranks cannot be described in a CommContext", req->n);
        return PLD_E_HW;
    }
    plug_window_t *ws = pld_mem_realloc(p->wins, (size_t)(p->nwins + 1) * sizeof *ws);
    if (!ws) {
        snprintf(err, errn, "out of memory");
        return PLD_E_NOMEM;
    }
    p->wins = ws;
    plug_window_t *w = &ws[p->nwins];
    memset(w, 0, sizeof *w);
    w->host_ctx = req->host_ctx;
    w->host_base = req->host_base;
    w->bytes = req->bytes;
    w->n = req->n;
    w->me = req->me;
    size_t mapped = req->bytes;
    int rc = p->ops->window_alloc(p->be, req->group, req->ranks, req->n, req->me, req->bytes, &w->w, w->bases,
                                  &mapped);
    if (rc != PLD_BE_OK) {
        snprintf(err, errn, "backend '%s' could not map a window of %zu bytes on %d ranks: %s", p->ops->name,
                 req->bytes, req->n, be_error(p, be_status_name(rc)));
        return PLD_E_HW;
    }
    /* the CommContext of the domain, with the members' device addresses */
    unsigned char ctx[PLD_ABI_CTX_BYTES];
    memset(ctx, 0, sizeof ctx);
    const uint32_t rank_id = (uint32_t)req->me, rank_num = (uint32_t)req->n;
    const uint64_t win_size = mapped >= req->bytes ? mapped : req->bytes;
    memcpy(ctx + PLD_ABI_CTX_RANK_ID, &rank_id, 4);
    memcpy(ctx + PLD_ABI_CTX_RANK_NUM, &rank_num, 4);
    memcpy(ctx + PLD_ABI_CTX_WIN_SIZE, &win_size, 8);
    memcpy(ctx + PLD_ABI_CTX_WINDOWS_IN, w->bases, (size_t)req->n * 8);
    rc = p->ops->mem_alloc && p->ops->upload ? p->ops->mem_alloc(p->be, sizeof ctx, 64, &w->dev_ctx)
                                             : PLD_BE_E_UNSUPPORTED;
    if (rc == PLD_BE_OK)
        rc = p->ops->upload(p->be, w->dev_ctx, ctx, sizeof ctx);
    if (rc != PLD_BE_OK) {
        snprintf(err, errn, "backend '%s' could not place the CommContext of a window: %s", p->ops->name,
                 be_error(p, be_status_name(rc)));
        if (w->dev_ctx && p->ops->mem_free)
            p->ops->mem_free(p->be, w->dev_ctx);
        /* not window_free: it is collective, and the other members did not
         * fail; the backend releases the window when it closes */
        return PLD_E_HW;
    }
    p->nwins++;
    return PLD_OK;
}

static pld_status_t plug_window_free(void *state, const void *host_ctx, const pld_be_coll_t *group, char *err,
                                     size_t errn)
{
    plug_t *p = state;
    plug_window_t *w = (plug_window_t *)find_window(p, host_ctx);
    if (!w)
        return PLD_OK;
    if (w->dev_ctx && p->ops->mem_free)
        p->ops->mem_free(p->be, w->dev_ctx);
    int rc = p->ops->window_free(p->be, w->w, group);
    *w = p->wins[--p->nwins];
    if (rc != PLD_BE_OK) {
        snprintf(err, errn, "backend '%s' could not release a window: %s", p->ops->name,
                 be_error(p, be_status_name(rc)));
        return PLD_E_HW;
    }
    return PLD_OK;
}

static pld_status_t plug_window_fetch(void *state, const void *host_ctx, char *err, size_t errn)
{
    plug_t *p = state;
    const plug_window_t *w = find_window(p, host_ctx);
    int rc = w ? fetch_window(p, w) : PLD_BE_OK;
    if (rc != PLD_BE_OK) {
        snprintf(err, errn, "backend '%s' could not copy a window back: %s", p->ops->name,
                 be_error(p, be_status_name(rc)));
        return PLD_E_HW;
    }
    return PLD_OK;
}

static pld_status_t plug_window_clear(void *state, const void *host_ctx, char *err, size_t errn)
{
    plug_t *p = state;
    const plug_window_t *w = find_window(p, host_ctx);
    if (!w || !w->bytes)
        return PLD_OK;
    void *zero = pld_mem_calloc(1, w->bytes);
    int rc = !zero ? PLD_BE_E_NOMEM : p->ops->upload(p->be, w->bases[w->me], zero, w->bytes);
    pld_mem_free(zero);
    if (rc != PLD_BE_OK) {
        snprintf(err, errn, "backend '%s' could not clear a window: %s", p->ops->name,
                 be_error(p, be_status_name(rc)));
        return PLD_E_HW;
    }
    return PLD_OK;
}

static uint64_t plug_caps(void *state)
{
    return ((const plug_t *)state)->ops->caps;
}

static const pld_hw_ops_t plug_ops = {
    PLD_HW_ABI, sizeof(pld_hw_ops_t), "plugin", "a kernel backend loaded from a shared object",
    NULL, plug_load, plug_launch, plug_sync, plug_close, plug_caps, plug_window_alloc, plug_window_free,
    plug_window_clear, plug_window_fetch,
};

/* Checks the table a plugin's entry returned; a message in err when unusable. */
static int ops_usable(const pld_be_ops_t *o, const char *path, char *err, size_t errn)
{
    if (!o) {
        snprintf(err, errn, "backend plugin '%s': %s() returned no backend for ABI version %u", path, PLD_BE_ENTRY,
                 PLD_BE_ABI);
        return 0;
    }
    if (o->abi != PLD_BE_ABI || o->struct_size < sizeof(pld_be_ops_t)) {
        snprintf(err, errn,
                 "backend plugin '%s' was built for plugin ABI version %u (table of %u bytes); this pldrun needs "
                 "version %u (%zu bytes): rebuild it against this pldrun's pld_backend.h",
                 path, o->abi, o->struct_size, PLD_BE_ABI, sizeof(pld_be_ops_t));
        return 0;
    }
    const char *missing = !o->name ? "name" : !o->open ? "open" : !o->close ? "close" : !o->last_error ? "last_error"
                          : !o->kernel_load ? "kernel_load" : !o->launch ? "launch" : !o->sync ? "sync" : NULL;
    if (missing) {
        snprintf(err, errn, "backend plugin '%s' has no '%s' entry point", path, missing);
        return 0;
    }
    return 1;
}

/* Every rank's verdict on a step every rank takes: 1 when all succeeded. A
 * rank that fails alone must not leave the others in the plugin's
 * collectives. Without an allgather callback (one rank), the own verdict. */
static int all_ok(const pld_be_init_t *init, int ok, int *bad_rank)
{
    enum { MAX_AGREE = 1024 }; /* on the stack: no rank may skip the step for want of memory */
    *bad_rank = ok ? -1 : init->rank;
    if (!init->coll.allgather || init->nranks <= 1)
        return ok;
    if (init->nranks > MAX_AGREE) {
        *bad_rank = init->rank; /* the same verdict on every rank */
        return 0;
    }
    int32_t mine = ok, all[MAX_AGREE];
    if (init->coll.allgather(init->coll.ctx, &mine, all, sizeof mine) != 0)
        return 0;
    for (int r = 0; r < init->nranks; r++)
        if (!all[r]) {
            *bad_rank = r;
            return 0;
        }
    return 1;
}

static pld_status_t open_fail(plug_t *p, const pld_be_init_t *init, const char *what, int bad, char *err,
                              size_t errn)
{
    if (bad != init->rank && !err[0]) /* a rank that failed itself keeps its own message */
        snprintf(err, errn, "backend plugin '%s' could not be %s on rank %d", p->path, what, bad);
    else if (!err[0])
        snprintf(err, errn, "backend plugin '%s' could not be %s: pldrun takes plugins to at most 1024 ranks",
                 p->path, what);
    plug_close(p);
    return PLD_E_HW;
}

static pld_status_t open_instance(plug_t *p, const pld_be_init_t *init, pld_hw_t **out, char *err, size_t errn);

pld_status_t pld_hw_open_plugin(const char *path, const pld_be_init_t *init, pld_hw_t **out, char *err, size_t errn)
{
    *out = NULL;
    err[0] = '\0';
    plug_t *p = pld_mem_calloc(1, sizeof *p);
    if (!p || !(p->path = pld_mem_strdup(path))) {
        pld_mem_free(p);
        snprintf(err, errn, "out of memory");
        return PLD_E_NOMEM;
    }
    int ok = 0, bad;
    dlerror();
    p->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!p->dl) {
        const char *why = dlerror();
        snprintf(err, errn, "cannot load backend plugin '%s': %s", path, why ? why : "dlopen failed");
    } else {
        dlerror();
        void *sym = dlsym(p->dl, PLD_BE_ENTRY);
        const char *why = dlerror();
        if (!sym || why) {
            snprintf(err, errn, "backend plugin '%s' has no entry symbol %s: %s", path, PLD_BE_ENTRY,
                     why ? why : "the symbol is NULL");
        } else {
            pld_be_entry_fn entry;
            memcpy(&entry, &sym, sizeof entry); /* ISO C has no object-to-function pointer cast */
            p->ops = entry(PLD_BE_ABI);
            ok = ops_usable(p->ops, path, err, errn);
            if (!ok)
                p->ops = NULL;
        }
    }
    if (!all_ok(init, ok, &bad))
        return open_fail(p, init, "loaded", bad, err, errn);
    return open_instance(p, init, out, err, errn);
}

pld_status_t pld_hw_open_table(const pld_be_ops_t *ops, const pld_be_init_t *init, pld_hw_t **out, char *err,
                               size_t errn)
{
    *out = NULL;
    err[0] = '\0';
    plug_t *p = pld_mem_calloc(1, sizeof *p);
    if (!p || !(p->path = pld_mem_strdup(ops && ops->name ? ops->name : "?"))) {
        pld_mem_free(p);
        snprintf(err, errn, "out of memory");
        return PLD_E_NOMEM;
    }
    int bad;
    p->ops = ops;
    int ok = ops_usable(ops, p->path, err, errn);
    if (!ok)
        p->ops = NULL;
    if (!all_ok(init, ok, &bad))
        return open_fail(p, init, "loaded", bad, err, errn);
    return open_instance(p, init, out, err, errn);
}

/* The collective open of a resolved table, the ranks' agreement, the wrap. */
static pld_status_t open_instance(plug_t *p, const pld_be_init_t *init, pld_hw_t **out, char *err, size_t errn)
{
    const char *path = p->path;
    int bad;
    int rc = p->ops->open(init, &p->be);
    if (rc != PLD_BE_OK) {
        const char *m = p->ops->last_error(p->be);
        snprintf(err, errn, "backend '%s' (%s) did not open on rank %d: %s", p->ops->name, path, init->rank,
                 m && *m ? m : be_status_name(rc));
        if (p->be)
            p->ops->close(p->be);
        p->be = NULL;
    } else {
        err[0] = '\0';
    }
    if (!all_ok(init, rc == PLD_BE_OK, &bad))
        return open_fail(p, init, "opened", bad, err, errn);
    pld_status_t st = pld_hw_wrap(&plug_ops, p, p->ops->name, out, err, errn);
    if (st != PLD_OK)
        plug_close(p);
    return st;
}

int pld_hw_is_plugin_path(const char *name)
{
    size_t n = strlen(name);
    return strchr(name, '/') != NULL || (n > 3 && strcmp(name + n - 3, ".so") == 0);
}

int pld_hw_ascend_path(char *buf, size_t n)
{
    const char *env = getenv("PLD_ASCEND_PLUGIN");
    if (env && *env)
        return snprintf(buf, n, "%s", env) < (int)n ? 0 : -1;
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return -1;
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    return snprintf(buf, n, "%s/pld_backend_ascend.so", exe) < (int)n ? 0 : -1;
}
