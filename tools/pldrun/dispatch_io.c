/* dispatch_io.c - inputs and outputs per dispatch (dispatch_io.h). */
#include "dispatch_io.h"

#include "pld_mem.h"
#include "pld_npy.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_SEQS 128

typedef struct seq {
    const char *name;
    int is_in;
    const char *dir;   /* --out y=DIR/: the paths are made once the count is known */
    int n;             /* files (-1: an output directory) */
    char **files;      /* owned array; the strings are owned when owned_items */
    int owned_items;
} seq_t;

static struct {
    seq_t seq[MAX_SEQS];
    int nseq;
    pld_interp_dispatch_hook_t hook;
} g;

static int is_dir(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int is_file(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && !S_ISDIR(sb.st_mode);
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && strcmp(s + n - k, tail) == 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir), k = strlen(name);
    int slash = n && dir[n - 1] != '/';
    char *p = pld_mem_alloc(n + (size_t)slash + k + 1);
    if (p) {
        memcpy(p, dir, n);
        if (slash)
            p[n] = '/';
        memcpy(p + n + (size_t)slash, name, k + 1);
    }
    return p;
}

/* --in x=DIR/: DIR's *.npy files sorted by name. */
static int list_dir(seq_t *s, const char *opt, char *err, size_t errn)
{
    DIR *dp = opendir(s->dir);
    if (!dp) {
        snprintf(err, errn, "%s %s: cannot read the directory %s: %s", opt, s->name, s->dir, strerror(errno));
        return -1;
    }
    int cap = 0;
    struct dirent *de;
    s->owned_items = 1;
    while ((de = readdir(dp)) != NULL) {
        if (de->d_name[0] == '.' || !ends_with(de->d_name, ".npy"))
            continue;
        if (s->n == cap) {
            cap = cap ? 2 * cap : 16;
            char **f = pld_mem_realloc(s->files, (size_t)cap * sizeof *f);
            if (!f)
                break;
            s->files = f;
        }
        if ((s->files[s->n] = join(s->dir, de->d_name)) == NULL)
            break;
        s->n++;
    }
    int oom = de != NULL;
    closedir(dp);
    if (oom) {
        snprintf(err, errn, "out of memory");
        return -1;
    }
    if (s->n == 0) {
        snprintf(err, errn, "%s %s=%s: the directory has no .npy file (one per dispatch)", opt, s->name, s->dir);
        return -1;
    }
    qsort(s->files, (size_t)s->n, sizeof *s->files, cmp_str);
    return 0;
}

/* --in x=a.npy,b.npy: split in place (argv's string). */
static int split_list(seq_t *s, char *v, const char *opt, char *err, size_t errn)
{
    int n = 1;
    for (const char *p = v; *p; p++)
        n += *p == ',';
    if ((s->files = pld_mem_calloc((size_t)n, sizeof *s->files)) == NULL) {
        snprintf(err, errn, "out of memory");
        return -1;
    }
    for (char *p = v;; p++) {
        char *c = strchr(p, ',');
        if (c)
            *c = '\0';
        if (!*p) {
            snprintf(err, errn, "%s %s: an empty file name in the list (one file per dispatch, separated by ',')", opt,
                     s->name);
            return -1;
        }
        s->files[s->n++] = p;
        if (!c)
            break;
        p = c;
    }
    return 0;
}

/* --out y=DIR/: DIR/y.D.npy, D padded to the width of the last one. */
static int out_paths(seq_t *s, int n, char *err, size_t errn)
{
    char made[PATH_MAX];
    snprintf(made, sizeof made, "%s", s->dir);
    for (char *p = made + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (made[0] && mkdir(made, 0777) != 0 && errno != EEXIST) {
                snprintf(err, errn, "--out %s=%s: cannot create %s: %s", s->name, s->dir, made, strerror(errno));
                return -1;
            }
            *p = c;
            if (!c)
                break;
        }
    }
    int width = snprintf(NULL, 0, "%d", n - 1);
    if ((s->files = pld_mem_calloc((size_t)n, sizeof *s->files)) == NULL) {
        snprintf(err, errn, "out of memory");
        return -1;
    }
    s->owned_items = 1;
    for (int d = 0; d < n; d++) {
        char name[256];
        snprintf(name, sizeof name, "%s.%0*d.npy", s->name, width, d);
        if ((s->files[d] = join(s->dir, name)) == NULL) {
            snprintf(err, errn, "out of memory");
            return -1;
        }
        s->n = d + 1;
    }
    return 0;
}

void dispatch_io_reset(void)
{
    for (int k = 0; k < g.nseq; k++) {
        seq_t *s = &g.seq[k];
        for (int i = 0; s->owned_items && i < s->n; i++)
            pld_mem_free(s->files[i]);
        pld_mem_free(s->files);
    }
    memset(&g, 0, sizeof g);
}

static int is_generator(const char *v)
{
    return strcmp(v, "arange") == 0 || strcmp(v, "zeros") == 0 || strcmp(v, "ones") == 0 || strncmp(v, "random:", 7) == 0;
}

/* Parameter i's new contents from generator spec (pld_npy_generate). */
static pld_status_t generate(pld_interp_t *it, int i, const char *spec, char *err, size_t errn)
{
    pld_dtype_t dt;
    int rank;
    const int64_t *shape;
    const void *cur;
    if (pld_interp_result(it, i, &dt, &rank, &shape, &cur) != PLD_OK) {
        snprintf(err, errn, "a generator gives tensors only");
        return PLD_E_USAGE;
    }
    int64_t count = 1;
    for (int d = 0; d < rank; d++)
        count *= shape[d];
    void *buf = pld_mem_alloc(count > 0 ? (size_t)count * (size_t)pld_dtype_bytes(dt) : 1);
    if (!buf) {
        snprintf(err, errn, "out of memory");
        return PLD_E_NOMEM;
    }
    pld_status_t st = pld_npy_generate(spec, dt, buf, count, err, errn);
    if (st == PLD_OK)
        st = pld_interp_refill(it, i, dt, rank, shape, buf, err, errn);
    pld_mem_free(buf);
    return st;
}

static pld_status_t on_inputs(void *ctx, pld_interp_t *it, int next, char *err, size_t errn)
{
    (void)ctx;
    char why[768];
    for (int k = 0; k < g.nseq; k++) {
        const seq_t *s = &g.seq[k];
        if (!s->is_in)
            continue;
        int i = pld_interp_param_index(it, s->name);
        const char *f = s->files[next];
        if (is_generator(f)) { /* arange|zeros|ones|random:SEED, of the bound tensor's shape */
            pld_status_t st = generate(it, i, f, why, sizeof why);
            if (st != PLD_OK) {
                snprintf(err, errn, "--in %s: %s: %s", s->name, f, why);
                return st;
            }
            continue;
        }
        pld_npy_t npy;
        int read_ok = 0;
        pld_status_t st = pld_npy_read(s->files[next], &npy, why, sizeof why);
        if (st == PLD_OK) {
            read_ok = 1;
            st = pld_interp_refill(it, i, npy.dt, npy.rank, npy.shape, npy.data, why, sizeof why);
        }
        pld_npy_fini(&npy);
        if (st != PLD_OK) {
            /* a read error names its file; a refill error does not */
            snprintf(err, errn, "--in %s: %s%s%s", s->name, read_ok ? s->files[next] : "", read_ok ? ": " : "", why);
            return st;
        }
    }
    return PLD_OK;
}

static pld_status_t on_outputs(void *ctx, int done, int i, const char *name, pld_dtype_t dt, int rank,
                               const int64_t *shape, const void *data, char *err, size_t errn)
{
    (void)ctx;
    (void)i;
    for (int k = 0; k < g.nseq; k++) {
        const seq_t *s = &g.seq[k];
        if (s->is_in || strcmp(s->name, name) != 0)
            continue;
        char why[768];
        if (pld_npy_write(s->files[done], dt, rank, shape, data, why, sizeof why) != PLD_OK) {
            snprintf(err, errn, "--out %s: %s", name, why);
            return PLD_E_IO;
        }
    }
    return PLD_OK;
}

static int resolve(binding_t *in, int nin, binding_t *out, int nout, int *dispatches, int dispatches_given, char *err,
                   size_t errn)
{
    dispatch_io_reset();
    int count = 0;
    const seq_t *first = NULL;
    for (int side = 0; side < 2; side++) {
        binding_t *b = side == 0 ? in : out;
        const char *opt = side == 0 ? "--in" : "--out";
        for (int k = 0; k < (side == 0 ? nin : nout); k++) {
            const char *v = b[k].value;
            int dir = ends_with(v, "/") || is_dir(v);
            if (!dir && !(strchr(v, ',') && !is_file(v)))
                continue; /* one file (or a generator): as always */
            if (g.nseq == MAX_SEQS) {
                snprintf(err, errn, "too many per-dispatch sequences (limit %d)", MAX_SEQS);
                return -1;
            }
            seq_t *s = &g.seq[g.nseq++];
            s->name = b[k].name;
            s->is_in = side == 0;
            if (dir) {
                s->dir = v;
                if (side == 1) {
                    s->n = -1; /* made below */
                    continue;
                }
                if (list_dir(s, opt, err, errn) != 0)
                    return -1;
            } else if (split_list(s, (char *)v, opt, err, errn) != 0) {
                return -1;
            }
            if (dispatches_given && s->n != *dispatches) {
                snprintf(err, errn, "%s %s: %d file%s for --dispatches %d (one file per dispatch)", opt, s->name, s->n,
                         s->n == 1 ? "" : "s", *dispatches);
                return -1;
            }
            if (first && s->n != count) {
                snprintf(err, errn, "%s %s: %d file%s, but %s %s has %d (one file per dispatch)", opt, s->name, s->n,
                         s->n == 1 ? "" : "s", first->is_in ? "--in" : "--out", first->name, count);
                return -1;
            }
            first = s;
            count = s->n;
        }
    }
    if (!dispatches_given && first)
        *dispatches = count;
    int any_in = 0, any_out = 0;
    for (int k = 0; k < g.nseq; k++) {
        seq_t *s = &g.seq[k];
        if (s->n < 0 && out_paths(s, *dispatches, err, errn) != 0)
            return -1;
        any_in |= s->is_in;
        any_out |= !s->is_in;
    }
    /* the one-file code binds the first input and writes the last outputs */
    for (int k = 0, ki = 0, ko = 0; k < g.nseq; k++) {
        seq_t *s = &g.seq[k];
        if (s->is_in) {
            while (in[ki].name != s->name)
                ki++;
            in[ki].value = s->files[0];
        } else {
            while (out[ko].name != s->name)
                ko++;
            out[ko].value = s->files[s->n - 1];
        }
    }
    g.hook.ctx = NULL;
    g.hook.inputs = any_in && *dispatches > 1 ? on_inputs : NULL;
    g.hook.outputs = any_out && *dispatches > 1 ? on_outputs : NULL;
    return 0;
}

int dispatch_io_resolve(binding_t *in, int nin, binding_t *out, int nout, int *dispatches, int dispatches_given)
{
    char err[2 * PATH_MAX + 512];
    if (resolve(in, nin, out, nout, dispatches, dispatches_given, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, "pldrun: %s\n", err);
    dispatch_io_reset();
    return -1;
}

const pld_interp_dispatch_hook_t *dispatch_io_hook(void)
{
    return g.hook.inputs || g.hook.outputs ? &g.hook : NULL;
}
