/* pld_native.c - the `native` backend: every kernel compiled to C by pldrun
 * (pld_cgen.c), built with the system C compiler into a shared object,
 * cached, loaded with dlopen and launched through the plugin boundary
 * (pld_backend.h) with the NPU kernel ABI's args[] frames. It is an ordinary
 * plugin table that pldrun opens without dlopen (pld_hw_open_table).
 *
 * Blocks of a launch run as coroutines of this rank (pld_be_host_t
 * run_blocks), so a kernel's wait lets its sibling blocks run and MPI stays
 * on one thread. Builtin collective kernels run pldrun's compiled
 * collective code (run_builtin).
 *
 * Cache: <dir>/k-<key>.so with key = FNV-1a 64 of the source (pld_crt.h
 * included), the compiler's --version line and the flags; dir is
 * --backend-options cache=DIR, else $XDG_CACHE_HOME/pldrun, else
 * $HOME/.cache/pldrun. A kernel is compiled to a temporary file and renamed
 * into place, so ranks of one node share the cache safely. */
#include "pld_backend.h"
#include "pld_crt.h"
#include "pld_hw.h"
#include "pld_mem.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* -ffp-contract=off and no fast-math: every operation rounds as the source
 * states (docs/native.md). Vectorising element-wise loops and dropping errno
 * from sqrt change no result. */
#define NATIVE_FLAGS "-std=c11 -O2 -fPIC -shared -ffp-contract=off -fno-fast-math -fvect-cost-model=dynamic " \
                     "-fno-math-errno -w"

typedef int (*ckernel_fn)(const pc_rt *rt, void *bk, int64_t *args);

struct pld_be_kernel {
    char *name;
    int line;                        /* name and line identify a kernel (scopes may share a name_hint) */
    int builtin;
    void *dl;
    ckernel_fn fn;
    struct pld_be_kernel *next;
};

struct pld_be {
    const pld_be_host_t *host;
    char cache[1024];
    char cc[256];
    char ccver[256];
    int have_ver;
    int rank, local_rank;
    pld_be_coll_t coll;               /* the ranks' barrier: one compile per node */
    struct pld_be_kernel *loaded;    /* compiled at program load, by name */
    unsigned compiled, cached;
    char err[2048];
};

static char open_err[512];

static const char *native_last_error(pld_be_t *be)
{
    return be ? be->err : open_err;
}

static int seterr(pld_be_t *be, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int seterr(pld_be_t *be, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(be->err, sizeof be->err, fmt, ap);
    va_end(ap);
    return rc;
}

/* mkdir -p with mode 0700 for the parts it creates */
static int mkdirs(const char *path)
{
    char b[1024];
    snprintf(b, sizeof b, "%s", path);
    for (char *p = b + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(b, 0700) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(b, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

static int parse_options(pld_be_t *be, const char *opts)
{
    const char *p = opts ? opts : "";
    while (*p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char kv[1100];
        if (n >= sizeof kv)
            return seterr(be, PLD_BE_E_INVAL, "native: option too long: %.40s...", p);
        memcpy(kv, p, n);
        kv[n] = '\0';
        char *dst = NULL;
        size_t cap = 0, skip = 0;
        if (strncmp(kv, "cache=", 6) == 0 && kv[6])
            dst = be->cache, cap = sizeof be->cache, skip = 6;
        else if (strncmp(kv, "cc=", 3) == 0 && kv[3])
            dst = be->cc, cap = sizeof be->cc, skip = 3;
        if (dst) {
            if (n - skip >= cap)
                return seterr(be, PLD_BE_E_INVAL, "native: the value of option '%.10s' is too long", kv);
            memcpy(dst, kv + skip, n - skip + 1);
        } else if (n)
            return seterr(be, PLD_BE_E_INVAL, "native: unknown option '%s' (known: cache=DIR, cc=COMPILER)", kv);
        p += n;
        if (*p == ',')
            p++;
    }
    return PLD_BE_OK;
}

static int native_open(const pld_be_init_t *init, pld_be_t **out)
{
    *out = NULL;
    if (!init->host || init->host->struct_size < sizeof(pld_be_host_t) || !init->host->c_runtime ||
        !init->host->run_blocks) {
        snprintf(open_err, sizeof open_err, "native: pldrun offers no runtime for compiled kernels");
        return PLD_BE_E_UNSUPPORTED;
    }
    const pc_rt *rt = init->host->c_runtime;
    if (rt->version != PC_VERSION || rt->size < sizeof(pc_rt)) {
        snprintf(open_err, sizeof open_err, "native: runtime version %u, this backend needs %u", rt->version,
                 PC_VERSION);
        return PLD_BE_E_UNSUPPORTED;
    }
    pld_be_t *be = pld_mem_calloc(1, sizeof *be);
    if (!be) {
        snprintf(open_err, sizeof open_err, "out of memory");
        return PLD_BE_E_NOMEM;
    }
    *out = be;
    be->host = init->host;
    be->rank = init->rank;
    be->local_rank = init->local_rank;
    be->coll = init->coll;
    const char *cc = getenv("CC");
    snprintf(be->cc, sizeof be->cc, "%s", cc && *cc ? cc : "cc");
    int rc = parse_options(be, init->options);
    if (rc != PLD_BE_OK)
        return rc;
    if (!be->cache[0]) {
        const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
        if (x && *x == '/')
            snprintf(be->cache, sizeof be->cache, "%s/pldrun", x);
        else if (h && *h)
            snprintf(be->cache, sizeof be->cache, "%s/.cache/pldrun", h);
        else
            snprintf(be->cache, sizeof be->cache, "/tmp/pldrun-cache-%ld", (long)getuid());
    }
    if (mkdirs(be->cache) != 0)
        return seterr(be, PLD_BE_E_INVAL, "native: cannot create the kernel cache directory %s: %s", be->cache,
                      strerror(errno));
    return PLD_BE_OK;
}

static void native_close(pld_be_t *be)
{
    if (!be)
        return;
    for (struct pld_be_kernel *k = be->loaded, *n; k; k = n) {
        n = k->next;
        if (k->dl)
            dlclose(k->dl);
        pld_mem_free(k->name);
        pld_mem_free(k);
    }
    pld_mem_free(be);
}

/* Runs argv with stdout+stderr into file `log`; returns the exit status (-1: not run). */
static int run(char *const argv[], const char *log)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        execvp(argv[0], argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* the first `max` bytes of file path (trailing newlines cut) */
static void slurp(const char *path, char *buf, size_t max)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    size_t n = fread(buf, 1, max - 1, f);
    fclose(f);
    buf[n] = '\0';
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        buf[--n] = '\0';
}

static int compiler_version(pld_be_t *be)
{
    if (be->have_ver)
        return PLD_BE_OK;
    char log[1200];
    snprintf(log, sizeof log, "%s/cc-version.%ld.%d.log", be->cache, (long)getpid(), be->rank);
    char ver[] = "--version";
    char *argv[] = {be->cc, ver, NULL};
    int st = run(argv, log);
    char out[512];
    slurp(log, out, sizeof out);
    unlink(log);
    if (st != 0)
        return seterr(be, PLD_BE_E_LOAD, "the C compiler '%s' is not usable (%s --version exited with %d): %s%s",
                      be->cc, be->cc, st, out[0] ? out : "no output",
                      st == 127 ? "; install a C compiler (apt-get install gcc) or name one with --backend-options "
                                  "cc=PATH" : "");
    char *nl = strchr(out, '\n');
    if (nl)
        *nl = '\0';
    snprintf(be->ccver, sizeof be->ccver, "%.*s", (int)sizeof be->ccver - 1, out);
    be->have_ver = 1;
    return PLD_BE_OK;
}

static uint64_t fnv(uint64_t h, const char *s)
{
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    size_t n = strlen(text);
    int ok = fwrite(text, 1, n, f) == n;
    ok &= fclose(f) == 0;
    return ok ? 0 : -1;
}

/* compiles (or finds in the cache) and loads kernel d */
static int compile_kernel(pld_be_t *be, const pld_be_kernel_desc_t *d, struct pld_be_kernel *k)
{
    int rc = compiler_version(be);
    if (rc != PLD_BE_OK)
    {
        char why[sizeof be->err];
        snprintf(why, sizeof why, "%s", be->err);
        return seterr(be, rc, "kernel %s (%s:%d): %s", d->name, d->program, d->line, why);
    }
    uint64_t h = fnv(fnv(fnv(1469598103934665603ull, d->c_source), be->ccver), NATIVE_FLAGS);
    char so[1200], c[1200], tso[1300], tc[1300], log[1300];
    snprintf(so, sizeof so, "%s/k-%016llx.so", be->cache, (unsigned long long)h);
    snprintf(c, sizeof c, "%s/k-%016llx.c", be->cache, (unsigned long long)h);
    for (int attempt = 0; attempt < 2; attempt++) {
        if (access(so, R_OK) == 0) {
            dlerror();
            k->dl = dlopen(so, RTLD_NOW | RTLD_LOCAL);
            if (k->dl) {
                void *sym = dlsym(k->dl, "pld_ckernel");
                if (sym) {
                    memcpy(&k->fn, &sym, sizeof k->fn);
                    if (attempt == 0)
                        be->cached++;
                    return PLD_BE_OK;
                }
                dlclose(k->dl);
                k->dl = NULL;
            }
            if (attempt == 1)
                return seterr(be, PLD_BE_E_LOAD, "kernel %s (%s:%d): the compiled kernel %s does not load: %s",
                              d->name, d->program, d->line, so, dlerror());
        }
        if (attempt == 1)
            break;
        /* compile into temporary files, then rename into place */
        snprintf(tc, sizeof tc, "%s.%ld.%d.tmp.c", c, (long)getpid(), be->rank);
        snprintf(tso, sizeof tso, "%s.%ld.%d.tmp", so, (long)getpid(), be->rank);
        snprintf(log, sizeof log, "%s.%ld.%d.log", so, (long)getpid(), be->rank);
        if (write_file(tc, d->c_source) != 0)
            return seterr(be, PLD_BE_E_LOAD, "kernel %s (%s:%d): cannot write %s: %s", d->name, d->program, d->line,
                          tc, strerror(errno));
        char *argv[24];
        int n = 0;
        char flags[] = NATIVE_FLAGS, dash_o[] = "-o", libm[] = "-lm";
        argv[n++] = be->cc;
        for (char *t = strtok(flags, " "); t && n < 18; t = strtok(NULL, " "))
            argv[n++] = t;
        argv[n++] = dash_o;
        argv[n++] = tso;
        argv[n++] = tc;
        argv[n++] = libm;
        argv[n] = NULL;
        int st = run(argv, log);
        if (st != 0) {
            char out[1200];
            slurp(log, out, sizeof out);
            unlink(log);
            unlink(tso);
            seterr(be, PLD_BE_E_LOAD, "kernel %s (%s:%d): the C compiler '%s' failed (exit %d) on %s: %s", d->name,
                   d->program, d->line, be->cc, st, tc, out[0] ? out : "no output");
            return PLD_BE_E_LOAD;
        }
        unlink(log);
        if (rename(tc, c) != 0 || rename(tso, so) != 0) {
            unlink(tso);
            return seterr(be, PLD_BE_E_LOAD, "kernel %s: cannot place %s in the cache: %s", d->name, so,
                          strerror(errno));
        }
        be->compiled++;
    }
    return seterr(be, PLD_BE_E_LOAD, "kernel %s: could not be loaded", d->name);
}

/* compiles and loads kernel d as a new entry of be->loaded (*out) */
static int load_new(pld_be_t *be, const pld_be_kernel_desc_t *d, struct pld_be_kernel **out)
{
    struct pld_be_kernel *k = pld_mem_calloc(1, sizeof *k);
    if (!k || !(k->name = pld_mem_strdup(d->name))) {
        pld_mem_free(k);
        return seterr(be, PLD_BE_E_NOMEM, "out of memory");
    }
    int rc = compile_kernel(be, d, k);
    if (rc != PLD_BE_OK) {
        pld_mem_free(k->name);
        pld_mem_free(k);
        return rc;
    }
    k->line = d->line;
    k->next = be->loaded;
    be->loaded = k;
    *out = k;
    return PLD_BE_OK;
}

static int native_program_load(pld_be_t *be, const char *path, uint32_t n, const pld_be_kernel_desc_t *ks)
{
    (void)path;
    for (uint32_t i = 0; i < n; i++)
        if (!ks[i].c_source)
            return seterr(be, PLD_BE_E_UNSUPPORTED, "kernel %s (%s:%d) cannot be compiled: %s", ks[i].name,
                          ks[i].program, ks[i].line,
                          ks[i].c_unsupported ? ks[i].c_unsupported : "pldrun generated no C code for it");
    /* one compile per node: the node's first rank fills the cache while the
     * others wait at a barrier, then every rank loads from it (a rank that
     * still misses a kernel, e.g. on a node with its own cache, compiles it) */
    const int first = be->local_rank == 0;
    int rc = PLD_BE_OK;
    struct pld_be_kernel *k;
    for (uint32_t i = 0; first && i < n && rc == PLD_BE_OK; i++)
        rc = load_new(be, &ks[i], &k);
    if (be->coll.barrier && be->coll.barrier(be->coll.ctx) != 0)
        return seterr(be, PLD_BE_E_COMM, "native: the barrier after compiling the kernels failed");
    for (uint32_t i = 0; !first && i < n && rc == PLD_BE_OK; i++)
        rc = load_new(be, &ks[i], &k);
    return rc;
}

static char builtin_name[] = "builtin";
static struct pld_be_kernel builtin_kernel = {builtin_name, 0, 1, NULL, NULL, NULL};

static int native_kernel_load(pld_be_t *be, const pld_be_kernel_desc_t *d, pld_be_kernel_t **out,
                              pld_be_kernel_info_t *info)
{
    info->conv = PLD_BE_CALL_ARGS;
    info->fn = NULL;
    if (d->builtin) {
        if (!be->host->run_builtin)
            return seterr(be, PLD_BE_E_UNSUPPORTED, "pldrun offers no builtin collective code");
        *out = &builtin_kernel;
        return PLD_BE_OK;
    }
    for (struct pld_be_kernel *k = be->loaded; k; k = k->next)
        if (strcmp(k->name, d->name) == 0 && k->line == d->line && d->c_source) {
            *out = k;
            return PLD_BE_OK;
        }
    if (!d->c_source)
        return seterr(be, PLD_BE_E_UNSUPPORTED, "it cannot be compiled: %s",
                      d->c_unsupported ? d->c_unsupported : "pldrun generated no C code for it");
    /* a kernel the program's load did not list: compile it now */
    return load_new(be, d, out);
}

typedef struct launch_ctx {
    pld_be_t *be;
    pld_be_kernel_t *k;
    const pld_be_launch_t *l;
} launch_ctx_t;

static int run_block(void *arg, int b, int n)
{
    launch_ctx_t *c = arg;
    const pld_be_host_t *h = c->be->host;
    void *bk = h->c_block_open(c->l->host_ctx, b, n);
    if (!bk)
        return 1;
    int rc = c->k->fn(h->c_runtime, bk, (int64_t *)c->l->frames[b].args);
    return h->c_block_close(bk, rc);
}

static int native_launch(pld_be_t *be, pld_be_kernel_t *k, const pld_be_launch_t *l)
{
    if (!l->host_ctx)
        return seterr(be, PLD_BE_E_INVAL, "native: a launch without pldrun's state");
    if (k->builtin)
        return be->host->run_builtin(l->host_ctx) == 0 ? PLD_BE_OK
                                                       : seterr(be, PLD_BE_E_LAUNCH, "the builtin collective failed");
    launch_ctx_t c = {be, k, l};
    if (be->host->run_blocks(l->host_ctx, l->block_num, run_block, &c) != 0)
        return seterr(be, PLD_BE_E_LAUNCH, "kernel %s failed", k->name);
    return PLD_BE_OK;
}

static int native_sync(pld_be_t *be, uint32_t timeout_ms)
{
    (void)be;
    (void)timeout_ms;
    return PLD_BE_OK; /* launches run to completion */
}

static const pld_be_ops_t native_ops = {
    .abi = PLD_BE_ABI,
    .struct_size = sizeof(pld_be_ops_t),
    .name = "native",
    .description = "kernels compiled to C by pldrun and run as native code (cc + dlopen)",
    .caps = PLD_BE_CAP_HOST_MEMORY | PLD_BE_CAP_GANG | PLD_BE_CAP_C_KERNELS,
    .open = native_open,
    .close = native_close,
    .last_error = native_last_error,
    .kernel_load = native_kernel_load,
    .launch = native_launch,
    .sync = native_sync,
    .program_load = native_program_load,
};

const pld_be_ops_t *pld_native_backend(void)
{
    return &native_ops;
}
