/* pld_win_state.c - one member's window memory kept in a file between runs
 * (pldrun --save-windows / --load-windows: persistent windows across
 * dispatches that are separate runs, docs/pypto.md). The file: the 8 bytes
 * "PLDWIN1\n", the caller's tag (its length as a u64, then its bytes), the
 * extent (u64) and the window's extent bytes (the user window and its
 * slack; not the layer's control words), all in host byte order. The tag is
 * the caller's description of the window (its buffers, the members): a file
 * whose tag differs is another window, and is refused before a byte of the
 * window changes. */
#include "pld_win_int.h"
#include "pld_mem.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char magic[8] = {'P', 'L', 'D', 'W', 'I', 'N', '1', '\n'};

pld_status_t pld_win_dom_save(pld_win_dom_t *d, const char *path, const char *tag, char *err, size_t errn)
{
    pld_win_sys_t *sys = d->sys;
    if (d->tr != PLD_WIN_LOCAL)
        PLD_MPI_CHECK(MPI_Win_sync(d->win)); /* every update applied to this rank's memory is seen */
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid()) >= (int)sizeof tmp) {
        snprintf(err, errn, "%s: path too long", path);
        return PLD_E_IO;
    }
    FILE *fp = fopen(tmp, "wb");
    if (!fp) {
        snprintf(err, errn, "cannot write %s: %s", tmp, strerror(errno));
        return PLD_E_IO;
    }
    uint64_t tlen = strlen(tag), ext = d->extent;
    int ok = fwrite(magic, 1, sizeof magic, fp) == sizeof magic && fwrite(&tlen, sizeof tlen, 1, fp) == 1 &&
             fwrite(tag, 1, tlen, fp) == tlen && fwrite(&ext, sizeof ext, 1, fp) == 1 &&
             fwrite(d->base, 1, d->extent, fp) == d->extent;
    int e = errno;
    if (fclose(fp) != 0 && ok) {
        ok = 0;
        e = errno;
    }
    if (!ok || rename(tmp, path) != 0) {
        if (ok)
            e = errno;
        snprintf(err, errn, "cannot write %s: %s", ok ? path : tmp, strerror(e));
        remove(tmp);
        return PLD_E_IO;
    }
    return PLD_OK;
}

pld_status_t pld_win_dom_load(pld_win_dom_t *d, const char *path, const char *tag, char *got, size_t gotn, char *err,
                              size_t errn)
{
    pld_win_sys_t *sys = d->sys;
    if (got && gotn)
        got[0] = '\0';
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        snprintf(err, errn, "cannot read %s: %s", path, strerror(errno));
        return PLD_E_IO;
    }
    char m[sizeof magic];
    uint64_t tlen = 0, ext = 0;
    pld_status_t st = PLD_OK;
    if (fread(m, 1, sizeof m, fp) != sizeof m || memcmp(m, magic, sizeof m) != 0 ||
        fread(&tlen, sizeof tlen, 1, fp) != 1 || tlen > (1u << 20)) {
        snprintf(err, errn, "%s is not a window state file of pldrun", path);
        st = PLD_E_IO;
    }
    char *t = NULL;
    if (st == PLD_OK && !(t = pld_mem_calloc((size_t)tlen + 1, 1)))
        st = PLD_E_NOMEM;
    if (st == PLD_OK && (fread(t, 1, (size_t)tlen, fp) != tlen || fread(&ext, sizeof ext, 1, fp) != 1)) {
        snprintf(err, errn, "%s is truncated", path);
        st = PLD_E_IO;
    }
    if (st == PLD_OK) {
        t[tlen] = '\0';
        if (strcmp(t, tag) != 0 || ext != d->extent) {
            if (got && gotn)
                snprintf(got, gotn, "%s", t);
            snprintf(err, errn, "%s holds another window (%llu bytes; this one has %zu)", path,
                     (unsigned long long)ext, d->extent);
            st = PLD_E_USAGE;
        }
    }
    pld_mem_free(t);
    /* read into the window only once the file is known to be this window's */
    if (st == PLD_OK && (fread(d->base, 1, d->extent, fp) != d->extent || fgetc(fp) != EOF)) {
        snprintf(err, errn, "%s is truncated or too long", path);
        memset(d->base, 0, d->extent);
        st = PLD_E_IO;
    }
    fclose(fp);
    if (d->tr != PLD_WIN_LOCAL)
        PLD_MPI_CHECK(MPI_Win_sync(d->win)); /* published as pld_win_dom_clear publishes */
    return st;
}
