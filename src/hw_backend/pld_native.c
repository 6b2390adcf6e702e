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
 * and every flag of the command line; the kernel's entry point in it is
 * pld_ckernel_<key>. The kernels a program misses are compiled in units (one
 * translation unit of several kernels, one cc run), as many units at once as
 * CPUs online (or jobs=N); each kernel's k-<key>.so is a hard link to its
 * unit's object. dir is --backend-options cache=DIR, else
 * $XDG_CACHE_HOME/pldrun, else $HOME/.cache/pldrun, else /tmp/pldrun-cache-UID,
 * and must be owned by the user and writable by nobody else (a writer of the
 * cache could run code in pldrun). A unit is compiled to temporary files
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
    unsigned compiled, cached, units; /* kernels compiled, loaded from the cache; cc runs */
    int jobs;                        /* jobs=N: at most N units (cc runs) at once; 0: the CPUs online */
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
        if (strncmp(kv, "jobs=", 5) == 0) {
            char *e;
            long j = strtol(kv + 5, &e, 10);
            if (e == kv + 5 || *e || j < 1 || j > 256)
                return seterr(be, PLD_BE_E_INVAL, "native: jobs=N needs a number from 1 to 256, not '%s'", kv + 5);
            be->jobs = (int)j;
        } else if (dst) {
            if (n - skip >= cap)
                return seterr(be, PLD_BE_E_INVAL, "native: the value of option '%.10s' is too long", kv);
            memcpy(dst, kv + skip, n - skip + 1);
        } else if (n)
            return seterr(be, PLD_BE_E_INVAL, "native: unknown option '%s' (known: cache=DIR, cc=COMPILER, dump=DIR, jobs=N)", kv);
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
static int run(char *const argv[], const char *log);

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

/* one kernel of the program being loaded: its key's cache entries */
typedef struct kjob {
    const pld_be_kernel_desc_t *d;
    char sym[64];                    /* pld_ckernel_<key>: its entry point in the unit's object */
    char so[1200], c[1200], tc[1300];
    int group;
} kjob_t;

/* a unit: one translation unit of some kernels, one cc run */
typedef struct kunit {
    char u[1300], so[1300], log[1300];
    pid_t pid;
    int st;
    size_t weight;
} kunit_t;

static void kjob_init(pld_be_t *be, kjob_t *j, const pld_be_kernel_desc_t *d)
{
    /* the key: the source, the compiler's identity and every flag of the command
     * line, and the layout (the kernel's symbol is pld_ckernel_<key>) */
    uint64_t h = fnv(fnv(fnv(fnv(fnv(1469598103934665603ull, d->c_source), "\x01"), be->ccid), "\x01"), be->flags);
    h = fnv(h, "\x01-o * * -lm\x01unit pld_ckernel_KEY");
    j->d = d;
    snprintf(j->sym, sizeof j->sym, "pld_ckernel_%016llx", (unsigned long long)h);
    snprintf(j->so, sizeof j->so, "%s/k-%016llx.so", be->cache, (unsigned long long)h);
    snprintf(j->c, sizeof j->c, "%s/k-%016llx.c", be->cache, (unsigned long long)h);
    snprintf(j->tc, sizeof j->tc, "%s.%ld.%d.tmp.c", j->c, (long)getpid(), be->rank);
}

/* Starts argv with stdout+stderr into file `log`; returns its pid (-1: not started). */
static pid_t spawn(char *const argv[], const char *log)
{
    pid_t pid = fork();
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
    return pid;
}

/* the exit status of child pid (-1: none, 128: killed) */
static int reap(pid_t pid)
{
    int st;
    if (pid < 0)
        return -1;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int run(char *const argv[], const char *log)
{
    return reap(spawn(argv, log));
}

/* the part of a generated source after pld_crt.h: its first line is the
 * generator's comment, ending "(generated by pldrun; do not edit)" */
static const char *kernel_part(const char *src)
{
    const char *m = strstr(src, " (generated by pldrun; do not edit) */\n");
    if (!m)
        return NULL;
    while (m > src && m[-1] != '\n')
        m--;
    return m;
}

/* Appends to b (cap bytes, used *len) "#define NAME NAME_<key>" (def) or
 * "#undef NAME" (!def) for each name the kernel part of j's source defines at
 * file scope: its `static` functions (a line starting "static", the name
 * before the first '(') and pld_ckernel. Kernels of one unit so keep their
 * own names. -1: a file-scope definition it cannot read or no room (the kernel
 * is then compiled in a unit of its own). */
static int unit_names(const kjob_t *j, char *b, size_t cap, size_t *len, int def)
{
    const char *p = kernel_part(j->d->c_source);
    if (!p)
        return -1;
    const char *key = j->sym + strlen("pld_ckernel_");
    int w = def ? snprintf(b + *len, cap - *len, "#define pld_ckernel %s\n", j->sym)
                : snprintf(b + *len, cap - *len, "#undef pld_ckernel\n");
    if (w < 0 || (size_t)w >= cap - *len)
        return -1;
    *len += (size_t)w;
    for (; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (strncmp(p, "static ", 7) != 0)
            continue;
        const char *e = p;
        while (*e && *e != '(' && *e != '\n')
            e++;
        if (*e != '(')
            return -1;                 /* a static object at file scope: not generated today */
        while (e > p && e[-1] == ' ')
            e--;
        const char *n0 = e;
        while (n0 > p && (isalnum((unsigned char)n0[-1]) || n0[-1] == '_'))
            n0--;
        if (n0 == e || isdigit((unsigned char)*n0))
            return -1;
        char line[256];
        if (def)
            w = snprintf(line, sizeof line, "#define %.*s %.*s_%s\n", (int)(e - n0), n0, (int)(e - n0), n0, key);
        else
            w = snprintf(line, sizeof line, "#undef %.*s\n", (int)(e - n0), n0);
        if (w < 0 || (size_t)w >= sizeof line)
            return -1;
        /* a prototype and its definition: the name once */
        char probe[260];
        snprintf(probe, sizeof probe, "\n%s", line);
        b[*len] = '\0';
        if (strstr(b, probe) || strncmp(b, line, strlen(line)) == 0)
            continue;
        if ((size_t)w >= cap - *len)
            return -1;
        memcpy(b + *len, line, (size_t)w + 1);
        *len += (size_t)w;
    }
    return 0;
}

/* Writes unit g's source (the kernels of js[] in group g, each included with
 * its file-scope names renamed) and starts cc on it. */
static int unit_start(pld_be_t *be, kjob_t *js, int nj, int g, kunit_t *un)
{
    un->pid = -1;
    un->st = -1;
    snprintf(un->u, sizeof un->u, "%s/u-%ld.%d.%d.tmp.c", be->cache, (long)getpid(), be->rank, g);
    snprintf(un->so, sizeof un->so, "%s/u-%ld.%d.%d.tmp.so", be->cache, (long)getpid(), be->rank, g);
    snprintf(un->log, sizeof un->log, "%s/u-%ld.%d.%d.log", be->cache, (long)getpid(), be->rank, g);
    FILE *f = fopen(un->u, "w");
    if (!f)
        return -1;
    int ok = 1, first = 1;
    char names[16384];
    for (int i = 0; i < nj && ok; i++) {
        if (js[i].group != g)
            continue;
        const char *kp = kernel_part(js[i].d->c_source);
        if (first && kp) /* pld_crt.h once, ahead of every renaming */
            ok &= fwrite(js[i].d->c_source, 1, (size_t)(kp - js[i].d->c_source), f) == (size_t)(kp - js[i].d->c_source);
        first = 0;
        size_t len = 0;
        names[0] = '\0';
        if (unit_names(&js[i], names, sizeof names, &len, 1) != 0) /* alone in its unit (build) */
            snprintf(names, sizeof names, "#define pld_ckernel %s\n", js[i].sym);
        /* by its name: found next to the unit (a cache path may hold any character) */
        const char *base = strrchr(js[i].tc, '/') ? strrchr(js[i].tc, '/') + 1 : js[i].tc;
        ok &= fprintf(f, "%s#include \"%s\"\n", names, base) > 0;
        len = 0;
        names[0] = '\0';
        if (unit_names(&js[i], names, sizeof names, &len, 0) != 0)
            snprintf(names, sizeof names, "#undef pld_ckernel\n");
        ok &= fputs(names, f) >= 0;
    }
    ok &= fclose(f) == 0;
    if (!ok)
        return -1;
    char *argv[40];
    int n = 0;
    char flags[sizeof be->flags], dash_o[] = "-o", libm[] = "-lm";
    snprintf(flags, sizeof flags, "%s", be->flags);
    argv[n++] = be->cc;
    for (char *t = strtok(flags, " "); t && n < 34; t = strtok(NULL, " "))
        argv[n++] = t;
    argv[n++] = dash_o;
    argv[n++] = un->so;
    argv[n++] = un->u;
    argv[n++] = libm;
    argv[n] = NULL;
    un->pid = spawn(argv, un->log);
    return un->pid < 0 ? -1 : 0;
}

static void unit_clean(kunit_t *un)
{
    unlink(un->u);
    unlink(un->so);
    unlink(un->log);
}

/* places kernel j of a compiled unit in the cache: a hard link to the unit's
 * object (a copy where links fail) renamed to k-<key>.so, its source to k-<key>.c */
static int place(pld_be_t *be, kjob_t *j, const char *uso)
{
    char t[1400];
    snprintf(t, sizeof t, "%s.%ld.%d.tmp", j->so, (long)getpid(), be->rank);
    unlink(t);
    int ok = link(uso, t) == 0;
    if (!ok) {
        FILE *in = fopen(uso, "rb"), *out = in ? fopen(t, "wb") : NULL;
        char buf[65536];
        size_t r;
        ok = in && out;
        while (ok && (r = fread(buf, 1, sizeof buf, in)) > 0)
            ok = fwrite(buf, 1, r, out) == r;
        if (in)
            fclose(in);
        if (out)
            ok &= fclose(out) == 0;
        ok = ok && chmod(t, 0755) == 0;
    }
    if (!ok || rename(j->tc, j->c) != 0 || rename(t, j->so) != 0) {
        int e = errno;
        unlink(t);
        return seterr(be, PLD_BE_E_LOAD, "kernel %s: cannot place %s in the cache: %s", j->d->name, j->so,
                      strerror(e));
    }
    return PLD_BE_OK;
}

/* the compiler failed on unit un of kernels js[] (group g): names a kernel and
 * shows the compiler's message; a unit of several is compiled again one kernel
 * at a time to find the one the compiler refuses */
static int unit_failed(pld_be_t *be, kjob_t *js, int nj, int g, kunit_t *un)
{
    int cnt = 0, who = -1;
    for (int i = 0; i < nj; i++)
        if (js[i].group == g && cnt++ == 0)
            who = i;
    kunit_t one;
    memset(&one, 0, sizeof one);
    const kunit_t *shown = un;
    for (int i = 0; cnt > 1 && i < nj; i++) {
        if (js[i].group != g)
            continue;
        js[i].group = -2;
        int st = unit_start(be, js, nj, -2, &one) == 0 ? reap(one.pid) : -1;
        js[i].group = g;
        if (st != 0) {
            one.st = st;
            who = i, shown = &one;
            break;
        }
        unit_clean(&one);
    }
    char out[1200];
    slurp(shown->log, out, sizeof out);
    const pld_be_kernel_desc_t *d = js[who].d;
    seterr(be, PLD_BE_E_LOAD, "kernel %s (%s:%d): the C compiler '%s' failed (exit %d) on its generated C "
           "(--backend-options dump=DIR keeps it): %s", d->name, d->program, d->line, be->cc, shown->st,
           out[0] ? out : "no output");
    if (shown == &one)
        unit_clean(&one);
    return PLD_BE_E_LOAD;
}

/* Compiles kernels js[0..nj) into the cache: in as many units as jobs (the
 * option jobs=N, else the CPUs online), each one translation unit and one cc
 * run, all run at the same time; the kernels spread over the units by the size
 * of their code. A failure leaves nothing in the cache. */
static int build(pld_be_t *be, kjob_t *js, int nj)
{
    if (nj == 0)
        return PLD_BE_OK;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int nu = be->jobs > 0 ? be->jobs : cpus > 0 ? (int)(cpus > 256 ? 256 : cpus) : 1;
    nu = nu > nj ? nj : nu;
    kunit_t *un = pld_mem_calloc((size_t)nj * 2, sizeof *un);
    if (!un)
        return seterr(be, PLD_BE_E_NOMEM, "out of memory");
    /* a kernel whose names cannot be read gets a unit of its own; the others,
     * the largest first, go to the lightest of the nu units */
    int ng = nu;
    for (int i = 0; i < nj; i++) {
        char scratch[16384];
        size_t len = 0;
        js[i].group = nj > 1 && ng < 512 && unit_names(&js[i], scratch, sizeof scratch, &len, 1) != 0 ? ng++ : -1;
    }
    for (;;) {
        int big = -1;
        size_t bw = 0;
        for (int i = 0; i < nj; i++) {
            size_t w = strlen(js[i].d->c_source);
            if (js[i].group < 0 && (big < 0 || w > bw))
                big = i, bw = w;
        }
        if (big < 0)
            break;
        int light = 0;
        for (int g = 1; g < nu; g++)
            if (un[g].weight < un[light].weight)
                light = g;
        js[big].group = light;
        un[light].weight += bw;
    }
    /* the units numbered 0..ng-1 without empty ones */
    int map[512], used = 0;
    for (int g = 0; g < ng && g < 512; g++) {
        map[g] = -1;
        for (int i = 0; i < nj && map[g] < 0; i++)
            if (js[i].group == g)
                map[g] = used++;
    }
    for (int i = 0; i < nj; i++)
        js[i].group = map[js[i].group];
    ng = used;
    int rc = PLD_BE_OK, started = 0;
    for (int i = 0; i < nj && rc == PLD_BE_OK; i++)
        if (write_file(js[i].tc, js[i].d->c_source) != 0)
            rc = seterr(be, PLD_BE_E_LOAD, "kernel %s (%s:%d): cannot write %s: %s", js[i].d->name, js[i].d->program,
                        js[i].d->line, js[i].tc, strerror(errno));
    for (int g = 0; g < ng && rc == PLD_BE_OK; g++, started++)
        if (unit_start(be, js, nj, g, &un[g]) != 0)
            rc = seterr(be, PLD_BE_E_LOAD, "native: cannot start the C compiler on %s: %s", un[g].u, strerror(errno));
    for (int g = 0; g < started; g++)
        un[g].st = reap(un[g].pid);
    for (int g = 0; g < started && rc == PLD_BE_OK; g++)
        if (un[g].st != 0)
            rc = unit_failed(be, js, nj, g, &un[g]);
    for (int i = 0; i < nj && rc == PLD_BE_OK; i++)
        rc = place(be, &js[i], un[js[i].group].so);
    for (int g = 0; g < started; g++)
        unit_clean(&un[g]);
    for (int i = 0; i < nj; i++)
        unlink(js[i].tc);
    if (rc == PLD_BE_OK)
        be->compiled += (unsigned)nj, be->units += (unsigned)started;
    pld_mem_free(un);
    return rc;
}

/* loads kernel j from the cache into k: 0, 1 when it is not there or does
 * not load, -1 when it is refused (be->err says why) */
static int load_cached(pld_be_t *be, const kjob_t *j, struct pld_be_kernel *k)
{
    const pld_be_kernel_desc_t *d = j->d;
    if (access(j->so, R_OK) != 0)
        return seterr(be, 1, "kernel %s (%s:%d): %s is not in the cache", d->name, d->program, d->line, j->so);
    struct stat sb;
    if (stat(j->so, &sb) != 0 || sb.st_uid != geteuid() || (sb.st_mode & (S_IWGRP | S_IWOTH)))
        return seterr(be, -1,
                      "kernel %s (%s:%d): refusing the cached %s: not owned by this user or writable by others",
                      d->name, d->program, d->line, j->so);
    dlerror();
    k->dl = dlopen(j->so, RTLD_NOW | RTLD_LOCAL);
    if (k->dl) {
        void *sym = dlsym(k->dl, j->sym);
        if (sym) {
            memcpy(&k->fn, &sym, sizeof k->fn);
            return 0;
        }
        dlclose(k->dl);
        k->dl = NULL;
    }
    const char *why = dlerror();
    return seterr(be, 1, "kernel %s (%s:%d): the compiled kernel %s does not load: %s", d->name, d->program,
                  d->line, j->so, why ? why : "no such symbol");
}

/* dump=DIR: writes kernel ks[i]'s generated C to DIR/<name>.c (rank 0 only; a
 * second kernel of the same name, e.g. scopes sharing a name hint, gets
 * <name>-L<line>.c); written to a temporary file and renamed */
static int dump_kernel(pld_be_t *be, const pld_be_kernel_desc_t *ks, uint32_t i)
{
    const pld_be_kernel_desc_t *d = &ks[i];
    if (!be->dump[0] || be->rank != 0)
        return PLD_BE_OK;
    char name[200];
    size_t n = 0;
    for (const char *p = d->name; *p && n < sizeof name - 1; p++, n++)
        name[n] = (isalnum((unsigned char)*p) || *p == '_' || *p == '-' || *p == '.') && !(n == 0 && *p == '.')
                      ? *p : '_';
    name[n] = '\0';
    int clash = 0;
    for (uint32_t j = 0; j < i; j++)
        if (strcmp(ks[j].name, d->name) == 0 && ks[j].line != d->line)
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

/* the kernels of js[0..n) not in the cache, compiled */
static int build_missing(pld_be_t *be, kjob_t *js, uint32_t n)
{
    kjob_t *miss = pld_mem_calloc(n ? n : 1, sizeof *miss);
    if (!miss)
        return seterr(be, PLD_BE_E_NOMEM, "out of memory");
    int nm = 0;
    for (uint32_t i = 0; i < n; i++) {
        int dup = 0; /* two kernels of one source: compiled once */
        for (int m = 0; m < nm && !dup; m++)
            dup = strcmp(miss[m].so, js[i].so) == 0;
        if (!dup && access(js[i].so, R_OK) != 0)
            miss[nm++] = js[i];
    }
    int rc = build(be, miss, nm);
    pld_mem_free(miss);
    return rc;
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
    kjob_t *js = NULL;
    for (uint32_t i = 0; i < n && rc == PLD_BE_OK; i++)
        rc = dump_kernel(be, ks, i);
    if (n && rc == PLD_BE_OK) {
        rc = compiler_version(be);
        if (rc != PLD_BE_OK) {
            char why[sizeof be->err];
            snprintf(why, sizeof why, "%s", be->err);
            seterr(be, rc, "kernel %s (%s:%d): %s", ks[0].name, ks[0].program, ks[0].line, why);
        }
    }
    if (n) {
        js = pld_mem_calloc(n, sizeof *js);
        if (!js)
            return seterr(be, PLD_BE_E_NOMEM, "out of memory");
        for (uint32_t i = 0; i < n; i++)
            kjob_init(be, &js[i], &ks[i]);
    }
    if (first && rc == PLD_BE_OK)
        rc = build_missing(be, js, n);
    if (be->coll.barrier && be->coll.barrier(be->coll.ctx) != 0) {
        pld_mem_free(js);
        return seterr(be, PLD_BE_E_COMM, "native: the barrier after compiling the kernels failed");
    }
    if (!first && rc == PLD_BE_OK)
        rc = build_missing(be, js, n);
    for (uint32_t i = 0; i < n && rc == PLD_BE_OK; i++) {
        struct pld_be_kernel *k = pld_mem_calloc(1, sizeof *k);
        if (!k || !(k->name = pld_mem_strdup(ks[i].name))) {
            pld_mem_free(k);
            rc = seterr(be, PLD_BE_E_NOMEM, "out of memory");
            break;
        }
        int lr = load_cached(be, &js[i], k);
        if (lr == 0)
            be->cached++;
        else if (lr > 0) /* not there, or it does not load: compiled (again) */
            lr = build(be, &js[i], 1) == PLD_BE_OK ? load_cached(be, &js[i], k) : -1;
        if (lr != 0) {
            rc = PLD_BE_E_LOAD;
            pld_mem_free(k->name);
            pld_mem_free(k);
            break;
        }
        k->line = ks[i].line;
        k->next = be->loaded;
        be->loaded = k;
    }
    pld_mem_free(js);
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
