/* dump.c - --dump DIR: pl.dump_tag hits as .npy files and an index (dump.h). */
#include "dump.h"

#include "pld_buf.h"
#include "pld_mem.h"
#include "pld_npy.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define INDEX_NAME "index.tsv"

typedef struct site_hits {
    uint32_t site;
    const char *stage; /* the interpreter's static strings */
    int64_t hits;
} site_hits_t;

struct dump {
    pld_interp_dump_hook_t hook;
    const char *dir;
    int rank;
    int index_fd;          /* DIR/index.tsv, opened for appending at the first hit (ranks > 0) */
    int dispatch;          /* the hit counters below are this dispatch's */
    site_hits_t *sites;
    int nsites, cap;
    pld_buf_t line;
};

static int make_dir(const char *dir, char *err, size_t errn)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        snprintf(err, errn, "--dump %s: the path is too long", dir);
        return -1;
    }
    for (char *p = path + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(path, 0777) != 0 && errno != EEXIST) {
                snprintf(err, errn, "--dump %s: cannot create %s: %s", dir, path, strerror(errno));
                return -1;
            }
            *p = c;
            if (!c)
                break;
        }
    }
    return 0;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int open_index(dump_t *d, int truncate, char *err, size_t errn)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", d->dir, INDEX_NAME);
    d->index_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | (truncate ? O_TRUNC : 0), 0666);
    if (d->index_fd < 0) {
        snprintf(err, errn, "--dump: cannot open %s for writing: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* The n-th hit (0-based) of a marker in this dispatch on this rank. */
static int64_t next_hit(dump_t *d, int dispatch, uint32_t site, const char *stage)
{
    if (dispatch != d->dispatch) {
        d->dispatch = dispatch;
        d->nsites = 0;
    }
    for (int i = 0; i < d->nsites; i++)
        if (d->sites[i].site == site && strcmp(d->sites[i].stage, stage) == 0)
            return ++d->sites[i].hits;
    if (d->nsites == d->cap) {
        int cap = d->cap ? 2 * d->cap : 16;
        site_hits_t *s = pld_mem_realloc(d->sites, (size_t)cap * sizeof *s);
        if (!s)
            return -1;
        d->sites = s;
        d->cap = cap;
    }
    d->sites[d->nsites].site = site;
    d->sites[d->nsites].stage = stage;
    d->sites[d->nsites].hits = 0;
    d->nsites++;
    return 0;
}

static pld_status_t on_tensor(void *ctx, const pld_interp_dump_rec_t *r, char *err, size_t errn)
{
    dump_t *d = ctx;
    int64_t hit = next_hit(d, r->dispatch, r->site, r->stage);
    if (hit < 0) {
        snprintf(err, errn, "out of memory");
        return PLD_E_NOMEM;
    }
    /* the file name: the tag with anything but [A-Za-z0-9_.] as '_' */
    char tag[64];
    size_t n = r->tag_len < sizeof tag - 1 ? r->tag_len : sizeof tag - 1;
    for (size_t i = 0; i < n; i++) {
        char c = r->tag[i];
        tag[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.'
                     ? c
                     : '_';
    }
    tag[n] = '\0';
    char name[128], path[PATH_MAX];
    const char *sfx = strcmp(r->stage, "before_dispatch") == 0    ? "-before"
                      : strcmp(r->stage, "after_completion") == 0 ? "-after"
                                                                  : "";
    snprintf(name, sizeof name, "%s-l%u-r%d-d%d-h%lld%s.npy", tag, r->line, d->rank, r->dispatch, (long long)hit, sfx);
    if (snprintf(path, sizeof path, "%s/%s", d->dir, name) >= (int)sizeof path) {
        snprintf(err, errn, "%s/%s: the path is too long", d->dir, name);
        return PLD_E_IO;
    }
    pld_status_t st = pld_npy_write(path, r->dt, r->rank, r->shape, r->data, err, errn);
    if (st != PLD_OK)
        return st;
    if (d->index_fd < 0 && open_index(d, 0, err, errn) != 0)
        return PLD_E_IO;
    /* one write per line: the ranks append to one file */
    pld_buf_reset(&d->line);
    pld_buf_printf(&d->line, "%.*s\t%d\t%d\t%lld\t%s\t%s\t%u\t%u\t%lld\t%s\t[", (int)r->tag_len, r->tag, d->rank,
                   r->dispatch, (long long)hit, r->stage, r->func, r->line, r->col, (long long)r->block,
                   pld_dtype_name(r->dt));
    for (int k = 0; k < r->rank; k++)
        pld_buf_printf(&d->line, "%s%lld", k ? ", " : "", (long long)r->shape[k]);
    pld_buf_printf(&d->line, "]\t%s\n", name);
    if (d->line.oom) {
        snprintf(err, errn, "out of memory");
        return PLD_E_NOMEM;
    }
    if (write_all(d->index_fd, d->line.p, d->line.len) != 0) {
        snprintf(err, errn, "%s/%s: %s", d->dir, INDEX_NAME, strerror(errno));
        return PLD_E_IO;
    }
    return PLD_OK;
}

static int open_dump(const char *dir, int rank, dump_t **out, char *err, size_t errn)
{
    *out = NULL;
    if (!dir)
        return 0;
    dump_t *d = pld_mem_calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, errn, "out of memory");
        return -1;
    }
    d->hook.ctx = d;
    d->hook.tensor = on_tensor;
    d->dir = dir;
    d->rank = rank;
    d->index_fd = -1;
    d->dispatch = -1;
    pld_buf_init(&d->line);
    if (make_dir(dir, err, errn) != 0) {
        dump_close(d);
        return -1;
    }
    if (rank == 0) {
        static const char header[] = "tag\trank\tdispatch\thit\tstage\tfunction\tline\tcol\tblock\tdtype\tshape\tfile\n";
        if (open_index(d, 1, err, errn) != 0) {
            dump_close(d);
            return -1;
        }
        if (write_all(d->index_fd, header, sizeof header - 1) != 0) {
            snprintf(err, errn, "--dump: cannot write %s/%s: %s", dir, INDEX_NAME, strerror(errno));
            dump_close(d);
            return -1;
        }
    }
    *out = d;
    return 0;
}

int dump_open(const char *dir, int rank, dump_t **out, pld_buf_t *msg)
{
    char err[PATH_MAX + 256] = "";
    if (open_dump(dir, rank, out, err, sizeof err) == 0)
        return 0;
    pld_buf_printf(msg, "pldrun: %s\n", err);
    return -1;
}

void dump_close(dump_t *d)
{
    if (!d)
        return;
    if (d->index_fd >= 0)
        close(d->index_fd);
    pld_mem_free(d->sites);
    pld_buf_fini(&d->line);
    pld_mem_free(d);
}

const pld_interp_dump_hook_t *dump_hook(const dump_t *d)
{
    return d ? &d->hook : NULL;
}
