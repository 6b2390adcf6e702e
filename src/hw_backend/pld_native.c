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
 * included), the compiler's identity (real path, size, mtime, --version line)
 * and every flag of the command line; dir is --backend-options cache=DIR, else
 * $XDG_CACHE_HOME/pldrun, else $HOME/.cache/pldrun, else /tmp/pldrun-cache-UID,
 * and must be owned by the user and writable by nobody else (a writer of the
 * cache could run code in pldrun). A kernel is compiled to temporary files
 * (removed on failure) and renamed into place, so ranks of one node share the
 * cache safely. The flags a compiler accepts are probed once per compiler
 * identity and remembered in the cache (cc-<id>.flags). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "pld_backend.h"
#include "pld_crt.h"
#include "pld_hw.h"
#include "pld_native_flags.h"
#include "pld_mem.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The flags (pld_native_flags.h, shared with the benchmark's hand C): every
 * C11 compiler must take the base flags; the optional ones are used only when
 * the compiler accepts them (probed: a compile with -Werror of a small file). */
#define NATIVE_FLAGS PLD_NATIVE_BASE_FLAGS " " PLD_NATIVE_LINK_FLAGS
/* optional: vectorising element-wise loops (GCC; clang's vectoriser has no such knob) */
static const char *const native_opt_flags[] = {PLD_NATIVE_OPT_FLAGS};
#define NATIVE_NOPT (sizeof native_opt_flags / sizeof native_opt_flags[0])

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
    char dump[1024];                 /* dump=DIR: each kernel's generated C, named by kernel */
    char ccver[256];
    char ccid[PATH_MAX + 512];               /* real path, size, mtime and version line of the compiler */
    char flags[512];                 /* the flags used: NATIVE_FLAGS and the optional ones accepted */
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

/* a directory pldrun loads code from: owned by this user, writable by nobody
 * else (whoever can write it can make pldrun run their code) */
static int check_private_dir(pld_be_t *be, const char *dir, const char *what)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return seterr(be, PLD_BE_E_INVAL, "native: %s %s: %s", what, dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return seterr(be, PLD_BE_E_INVAL, "native: %s %s is not a directory", what, dir);
    if (st.st_uid != geteuid())
        return seterr(be, PLD_BE_E_INVAL,
                      "native: refusing %s %s: it is owned by uid %ld, not by this user (uid %ld); "
                      "name a directory of your own with --backend-options cache=DIR",
                      what, dir, (long)st.st_uid, (long)geteuid());
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        return seterr(be, PLD_BE_E_INVAL,
                      "native: refusing %s %s: it is writable by %s (mode %03o), and whoever writes it can run "
                      "code in pldrun; chmod go-w it or name another with --backend-options cache=DIR",
                      what, dir, st.st_mode & S_IWOTH ? "others" : "its group", (unsigned)(st.st_mode & 0777));
    return PLD_BE_OK;
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
        else if (strncmp(kv, "dump=", 5) == 0 && kv[5])
            dst = be->dump, cap = sizeof be->dump, skip = 5;
        if (dst) {
            if (n - skip >= cap)
                return seterr(be, PLD_BE_E_INVAL, "native: the value of option '%.10s' is too long", kv);
            memcpy(dst, kv + skip, n - skip + 1);
        } else if (n)
            return seterr(be, PLD_BE_E_INVAL, "native: unknown option '%s' (known: cache=DIR, cc=COMPILER, dump=DIR)", kv);
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
    rc = check_private_dir(be, be->cache, "the kernel cache directory");
    if (rc != PLD_BE_OK)
        return rc;
    if (be->dump[0] && mkdirs(be->dump) != 0)
        return seterr(be, PLD_BE_E_INVAL, "native: cannot create the dump directory %s: %s", be->dump,
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

static uint64_t fnv(uint64_t h, const char *s)
{
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

static int write_file(const char *path, const char *text);

/* the file execvp would run for cc (PATH searched when it has no '/'), as a real path */
static int resolve_cc(const char *cc, char *out, size_t n)
{
    char cand[PATH_MAX + 256];
    if (strchr(cc, '/'))
        return realpath(cc, out) && strlen(out) < n ? 0 : -1;
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/bin:/bin";
    for (const char *p = path; p; p = strchr(p, ':') ? strchr(p, ':') + 1 : NULL) {
        size_t len = strchr(p, ':') ? (size_t)(strchr(p, ':') - p) : strlen(p);
        if (len == 0)
            snprintf(cand, sizeof cand, "./%s", cc);
        else
            snprintf(cand, sizeof cand, "%.*s/%s", (int)len, p, cc);
        if (access(cand, X_OK) == 0) {
            char rp[PATH_MAX];
            if (realpath(cand, rp) && strlen(rp) < n) {
                snprintf(out, n, "%s", rp);
                return 0;
            }
        }
    }
    return -1;
}

/* 1 when cc compiles a small file with `flag` and -Werror (an ignored flag warns) */
static int probe_flag(pld_be_t *be, const char *flag)
{
    char c[1200], o[1200], log[1200];
    snprintf(c, sizeof c, "%s/cc-probe.%ld.%d.c", be->cache, (long)getpid(), be->rank);
    snprintf(o, sizeof o, "%s/cc-probe.%ld.%d.so", be->cache, (long)getpid(), be->rank);
    snprintf(log, sizeof log, "%s/cc-probe.%ld.%d.log", be->cache, (long)getpid(), be->rank);
    if (write_file(c, "int pld_probe(int x) { return x + 1; }\n") != 0) {
        unlink(c);
        return 0;
    }
    char f[128], werror[] = "-Werror", shared[] = "-shared", fpic[] = "-fPIC", dash_o[] = "-o";
    snprintf(f, sizeof f, "%s", flag);
    char *argv[] = {be->cc, werror, fpic, shared, f, dash_o, o, c, NULL};
    int st = run(argv, log);
    unlink(c);
    unlink(o);
    unlink(log);
    return st == 0;
}

/* the compiler's identity (be->ccid) and the flags it takes (be->flags): probed
 * once per identity, the answer kept in <cache>/cc-<id>.flags */
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
    char real[PATH_MAX];
    struct stat sb;
    if (resolve_cc(be->cc, real, sizeof real) != 0 || stat(real, &sb) != 0)
        return seterr(be, PLD_BE_E_LOAD, "the C compiler '%s' runs but its file cannot be found (PATH)", be->cc);
    snprintf(be->ccid, sizeof be->ccid, "%s|%lld|%lld.%09ld|%s", real, (long long)sb.st_size,
             (long long)sb.st_mtim.tv_sec, (long)sb.st_mtim.tv_nsec, be->ccver);
    /* the flags: remembered per identity, else probed */
    char fl[1200], tmp[1300];
    uint64_t fh = fnv(fnv(1469598103934665603ull, be->ccid), NATIVE_FLAGS);
    for (size_t i = 0; i < NATIVE_NOPT; i++)
        fh = fnv(fnv(fh, "|"), native_opt_flags[i]);
    snprintf(fl, sizeof fl, "%s/cc-%016llx.flags", be->cache, (unsigned long long)fh);
    char known[sizeof be->flags];
    slurp(fl, known, sizeof known);
    if (strncmp(known, NATIVE_FLAGS, strlen(NATIVE_FLAGS)) == 0) {
        snprintf(be->flags, sizeof be->flags, "%s", known);
    } else {
        snprintf(be->flags, sizeof be->flags, "%s", NATIVE_FLAGS);
        for (size_t i = 0; i < NATIVE_NOPT; i++)
            if (probe_flag(be, native_opt_flags[i])) {
                size_t l = strlen(be->flags);
                snprintf(be->flags + l, sizeof be->flags - l, " %s", native_opt_flags[i]);
            }
        snprintf(tmp, sizeof tmp, "%s.%ld.%d.tmp", fl, (long)getpid(), be->rank);
        if (write_file(tmp, be->flags) != 0 || rename(tmp, fl) != 0)
            unlink(tmp); /* only a cache: probed again next time */
    }
    be->have_ver = 1;
    return PLD_BE_OK;
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
    /* the key: the source, the compiler's identity and every flag of the command line */
    uint64_t h = fnv(fnv(fnv(fnv(fnv(1469598103934665603ull, d->c_source), "\x01"), be->ccid), "\x01"), be->flags);
    h = fnv(h, "\x01-o * * -lm");
    char so[1200], c[1200], tso[1300], tc[1300], log[1300];
    snprintf(so, sizeof so, "%s/k-%016llx.so", be->cache, (unsigned long long)h);
    snprintf(c, sizeof c, "%s/k-%016llx.c", be->cache, (unsigned long long)h);
    for (int attempt = 0; attempt < 2; attempt++) {
        if (access(so, R_OK) == 0) {
            struct stat sb;
            if (stat(so, &sb) != 0 || sb.st_uid != geteuid() || (sb.st_mode & (S_IWGRP | S_IWOTH)))
                return seterr(be, PLD_BE_E_LOAD,
                              "kernel %s (%s:%d): refusing the cached %s: not owned by this user or writable by "
                              "others", d->name, d->program, d->line, so);
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
        if (write_file(tc, d->c_source) != 0) {
            int e = errno;
            unlink(tc);
            return seterr(be, PLD_BE_E_LOAD, "kernel %s (%s:%d): cannot write %s: %s", d->name, d->program, d->line,
                          tc, strerror(e));
        }
        char *argv[40];
        int n = 0;
        char flags[sizeof be->flags], dash_o[] = "-o", libm[] = "-lm";
        snprintf(flags, sizeof flags, "%s", be->flags);
        argv[n++] = be->cc;
        for (char *t = strtok(flags, " "); t && n < 34; t = strtok(NULL, " "))
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
            unlink(tc);
            seterr(be, PLD_BE_E_LOAD, "kernel %s (%s:%d): the C compiler '%s' failed (exit %d) on its generated C "
                   "(--backend-options dump=DIR keeps it): %s", d->name,
                   d->program, d->line, be->cc, st, out[0] ? out : "no output");
            return PLD_BE_E_LOAD;
        }
        unlink(log);
        if (rename(tc, c) != 0 || rename(tso, so) != 0) {
            int e = errno;
            unlink(tc);
            unlink(tso);
            errno = e;
            return seterr(be, PLD_BE_E_LOAD, "kernel %s: cannot place %s in the cache: %s", d->name, so,
                          strerror(errno));
        }
        be->compiled++;
    }
    return seterr(be, PLD_BE_E_LOAD, "kernel %s: could not be loaded", d->name);
}

/* dump=DIR: writes kernel d's generated C to DIR/<name>.c (rank 0 only; a
 * second kernel of the same name, e.g. scopes sharing a name hint, gets
 * <name>-L<line>.c); written to a temporary file and renamed */
static int dump_kernel(pld_be_t *be, const pld_be_kernel_desc_t *d)
{
    if (!be->dump[0] || be->rank != 0)
        return PLD_BE_OK;
    char name[200];
    size_t i = 0;
    for (const char *p = d->name; *p && i < sizeof name - 1; p++, i++)
        name[i] = (isalnum((unsigned char)*p) || *p == '_' || *p == '-' || *p == '.') && !(i == 0 && *p == '.')
                      ? *p : '_';
    name[i] = '\0';
    int clash = 0;
    for (struct pld_be_kernel *k = be->loaded; k; k = k->next)
        if (strcmp(k->name, d->name) == 0 && k->line != d->line)
            clash = 1;
    char path[1400], tmp[1500];
    if (clash)
        snprintf(path, sizeof path, "%s/%s-L%d.c", be->dump, name[0] ? name : "kernel", d->line);
    else
        snprintf(path, sizeof path, "%s/%s.c", be->dump, name[0] ? name : "kernel");
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    if (write_file(tmp, d->c_source) != 0 || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return seterr(be, PLD_BE_E_LOAD, "kernel %s (%s:%d): cannot write its C to %s: %s", d->name, d->program,
                      d->line, path, strerror(e));
    }
    return PLD_BE_OK;
}

/* compiles and loads kernel d as a new entry of be->loaded (*out) */
static int load_new(pld_be_t *be, const pld_be_kernel_desc_t *d, struct pld_be_kernel **out)
{
    int drc = dump_kernel(be, d);
    if (drc != PLD_BE_OK)
        return drc;
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
    /* every kernel and scope is compiled by program_load, before anything
     * runs: nothing is compiled mid-run (by every rank at once) */
    return seterr(be, PLD_BE_E_LOAD, "kernel %s (%s:%d) was not compiled when the program loaded", d->name,
                  d->program ? d->program : "?", d->line);
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
