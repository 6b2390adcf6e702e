/* batchlist.c - the --batch LIST file (batchlist.h). */
#include "batchlist.h"
#include "pld_mem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { EX_OK = 0, EX_USAGE = 64, EX_SOFTWARE = 70 }; /* main.c's exit codes */

char *pldrun_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 65536, n = 0;
    char *buf = pld_mem_alloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        char *nb = pld_mem_realloc(buf, cap * 2);
        if (!nb) {
            pld_mem_free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        pld_mem_free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

void batch_list_fini(batch_list_t *l)
{
    pld_mem_free(l->text);
    pld_mem_free(l->fields);
    pld_mem_free(l->entries);
    memset(l, 0, sizeof *l);
}

/* Reads and splits LIST; messages (with LIST:LINE) go to msg. Returns an exit
 * code: 64 for a list that cannot be read or a malformed line, 70 out of
 * memory. */
int batch_list_read(const char *path, batch_list_t *l, pld_buf_t *msg)
{
    memset(l, 0, sizeof *l);
    size_t len = 0;
    errno = 0;
    l->text = pldrun_read_file(path, &len);
    if (!l->text) {
        pld_buf_printf(msg, "pldrun: --batch: cannot read '%s': %s\n", path, errno ? strerror(errno) : "out of memory");
        return errno ? EX_USAGE : EX_SOFTWARE;
    }
    l->text[len] = '\0'; /* pldrun_read_file leaves room: it stops at a short read */
    /* count: entries and fields */
    size_t nent = 0, nfld = 0;
    for (size_t i = 0; i < len;) {
        const char *nl = memchr(l->text + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - (l->text + i)) : len - i;
        if (n > 0 && l->text[i] != '#') {
            nent++;
            nfld += 1;
            for (size_t k = 0; k < n; k++)
                nfld += l->text[i + k] == '\t';
        }
        i += n + 1;
    }
    l->fields = pld_mem_alloc((nfld + 1) * sizeof *l->fields);
    l->entries = pld_mem_alloc((nent + 1) * sizeof *l->entries);
    if (!l->fields || !l->entries) {
        pld_buf_printf(msg, "pldrun: --batch: out of memory reading '%s'\n", path);
        return EX_SOFTWARE;
    }
    int rc = EX_OK, line = 0;
    size_t f = 0;
    for (size_t i = 0; i < len;) {
        char *s = l->text + i;
        char *nl = memchr(s, '\n', len - i);
        size_t n = nl ? (size_t)(nl - s) : len - i;
        line++;
        i += n + 1;
        if (n == 0 || s[0] == '#')
            continue;
        const int has_nul = memchr(s, '\0', n) != NULL;
        s[n] = '\0';
        batch_entry_t *e = &l->entries[l->n++];
        e->line = line;
        e->field = &l->fields[f];
        e->nfield = 0;
        for (char *p = s;;) {
            char *tab = strchr(p, '\t');
            if (tab)
                *tab = '\0';
            l->fields[f++] = p;
            e->nfield++;
            if (!tab)
                break;
            p = tab + 1;
        }
        const char *why = NULL;
        if (has_nul)
            why = "a NUL byte";
        else if (e->nfield < 4)
            why = "fewer than 4 fields";
        for (int k = 0; !why && k < e->nfield; k++)
            if (!e->field[k][0])
                why = "an empty field";
        if (why) {
            pld_buf_printf(msg, "pldrun: %s:%d: malformed --batch entry (%s): expected CWD<TAB>STDOUT_FILE<TAB>"
                                "STDERR_FILE<TAB>ARG...\n",
                           path, line, why);
            rc = EX_USAGE;
        }
    }
    return rc;
}

/* fd 1 and fd 2 to the entry's files (opened for appending); 0, or -1 with
 * a message in err. */
int batch_redirect(const batch_entry_t *e, char *err, size_t errn)
{
    int fd[2] = {-1, -1};
    for (int k = 0; k < 2; k++) {
        fd[k] = open(e->field[1 + k], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd[k] < 0) {
            snprintf(err, errn, "cannot open '%s' for appending: %s", e->field[1 + k], strerror(errno));
            if (k)
                close(fd[0]);
            return -1;
        }
    }
    fflush(stdout);
    fflush(stderr);
    int ok = dup2(fd[0], STDOUT_FILENO) >= 0 && dup2(fd[1], STDERR_FILENO) >= 0;
    close(fd[0]);
    close(fd[1]);
    if (!ok)
        snprintf(err, errn, "cannot redirect the output: %s", strerror(errno));
    return ok ? 0 : -1;
}

