/* acl_fake_kernel.c - the fake ACL runtime (acl_fake.c): streams and kernels
 * (binaries loaded as host shared objects, launches run as gangs of block
 * threads on a per-stream worker, device faults, cancellation, sync timeouts). */
#include "acl_fake_int.h"

#include <elf.h>

/* ============================================================ streams and kernels */

void stream_fault(stream_t *s, int code, const char *msg)
{
    if (s->error)
        return;
    if (drv_id(s->dev) >= 0)
        dev_faults[drv_id(s->dev)]++;
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

void drop_queued(stream_t *s)
{
    while (s->head) {
        task_t *t = s->head;
        s->head = t->next;
        s->done++;
        task_free(t);
    }
    s->tail = NULL;
}

void cancel_running(stream_t *s)
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
    /* -1: no limit; 0 and below -1 are refused (api_error.cc:1442-1444,
     * stream.cpp:141-149) */
    if (!rc && (timeout < -1 || timeout == 0))
        rc = fail(&c, E_RT_PARAM, "timeout %d ms (-1: wait forever, else > 0)", timeout);
    if (!rc && s->error && s->error_reported)
        rc = fail(&c, E_AICPU, "the stream is in error state after error %d (%s)", s->error, s->errmsg);
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
        s->waiters++;
        while (!s->error && !s->reset && s->done < s->launched && !timed_out)
            timed_out = (timeout < 0 ? pthread_cond_wait(&s->cv, &mu) : pthread_cond_timedwait(&s->cv, &mu, &dl)) ==
                        ETIMEDOUT;
        s->waiters--;
        pthread_cond_broadcast(&s->cv);
        if (s->reset) {
            /* aclrtResetDeviceForce from another thread ended the wait; the
             * stream is gone once this returns (acl_fake.c reset_device) */
            rc = fail(&c, E_DRV, "the device was reset while the stream was synchronised");
        } else if (s->error) {
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

/* The name a kernel symbol is registered under: without its _mix_aic /
 * _mix_aiv suffix, the last occurrence removed, _mix_aic looked for first
 * (program.cc:1542-1562, ElfProgram::AdjustKernelName). */
static void registered_name(const char *sym, char *out, size_t n)
{
    snprintf(out, n, "%s", sym);
    static const char *const suffixes[] = {"_mix_aic", "_mix_aiv"};
    for (int i = 0; i < 2; i++) {
        char *hit = NULL;
        for (char *q = strstr(out, suffixes[i]); q; q = strstr(q + 1, suffixes[i]))
            hit = q;
        if (hit) {
            memmove(hit, hit + 8, strlen(hit + 8) + 1);
            return;
        }
    }
}

/* Registers every function the binary exports under its registered name
 * (program.cc:1817-1835, RegisterAllKernelCommon: each kernel of the ELF, its
 * name stripped; a second symbol with the same stripped name is merged into
 * the first). aclrtBinaryGetFunction is then an exact lookup of that name
 * (runtime.cc BinaryGetFunction / GetKernelByName). Here the exports are read
 * from the image's .dynsym (the image is a host shared object). Caller holds
 * mu. Returns the number registered, -1 when the image is not a 64-bit ELF
 * with a dynamic symbol table. */
static int register_functions(bin_t *b, const unsigned char *data, size_t len)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)(const void *)data;
    if (len < sizeof *eh || data[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
        eh->e_shoff > len || (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > len - eh->e_shoff)
        return -1;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(const void *)(data + eh->e_shoff);
    int n = 0;
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum)
            continue;
        const Elf64_Shdr *st = &sh[sh[i].sh_link];
        if (sh[i].sh_offset > len || sh[i].sh_size > len - sh[i].sh_offset || st->sh_offset > len ||
            st->sh_size > len - st->sh_offset)
            return -1;
        const Elf64_Sym *sym = (const Elf64_Sym *)(const void *)(data + sh[i].sh_offset);
        const char *strs = (const char *)data + st->sh_offset;
        for (size_t k = 0; k < sh[i].sh_size / sizeof *sym; k++) {
            if (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC || sym[k].st_shndx == SHN_UNDEF ||
                ELF64_ST_BIND(sym[k].st_info) == STB_LOCAL || sym[k].st_name >= st->sh_size)
                continue;
            const char *name = strs + sym[k].st_name;
            char reg[128];
            registered_name(name, reg, sizeof reg);
            int dup = 0;
            for (func_t *f = b->funcs; f && !dup; f = f->next)
                dup = strcmp(f->name, reg) == 0;
            void *addr = dup ? NULL : dlsym(b->dl, name);
            func_t *f = addr ? calloc(1, sizeof *f) : NULL;
            if (!f)
                continue;
            f->bin = b;
            f->sym = addr;
            snprintf(f->name, sizeof f->name, "%s", reg);
            f->next = b->funcs;
            b->funcs = f;
            n++;
        }
    }
    return n;
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
            const int nf = register_functions(b, data, length);
            ja_i(&c, "functions", nf);
            if (nf < 0) {
                rc = fail(&c, E_PARAM, "the image has no dynamic symbol table the fake can read");
                for (func_t *f = b->funcs, *n; f; f = n) {
                    n = f->next;
                    free(f);
                }
                free(b);
                b = NULL;
            }
        }
        if (!rc) {
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
    func_t *f = NULL;
    for (func_t *x = rc ? NULL : b->funcs; x && !f; x = x->next)
        if (strcmp(x->name, kernelName) == 0)
            f = x;
    if (!rc && !f) {
        char reg[128];
        registered_name(kernelName, reg, sizeof reg);
        rc = fail(&c, E_KERNEL_LOOKUP, "the binary has no kernel function '%s'%s%s%s", kernelName,
                  strcmp(reg, kernelName) ? " (functions are registered without their _mix_aic / _mix_aiv suffix: '"
                                          : "",
                  strcmp(reg, kernelName) ? reg : "", strcmp(reg, kernelName) ? "')" : "");
    }
    if (!rc)
        *funcHandle = f;
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
    if (!rc)
        rc = need_version(&c, 8, 2);
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
        rc = fail(&c, E_AICPU, "the stream is in error state after error %d (%s)", s->error, s->errmsg);
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
