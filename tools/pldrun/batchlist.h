/* batchlist.h - the --batch LIST file of pldrun (tools/pldrun/main.c's
 * batch(), which documents the format): its entries read and split, and an
 * entry's output files opened in place of fd 1 and fd 2; and a whole file
 * read (the program text too). */
#ifndef PLDRUN_BATCHLIST_H
#define PLDRUN_BATCHLIST_H

#include "pld_buf.h"

#include <stddef.h>

typedef struct batch_entry {
    int line;    /* in LIST, from 1 */
    int nfield;  /* CWD, STDOUT_FILE, STDERR_FILE, args... (at least 4) */
    char **field;
} batch_entry_t;

typedef struct batch_list {
    char *text; /* LIST's bytes, NUL-terminated; the fields point into it */
    char **fields;
    batch_entry_t *entries;
    int n;
} batch_list_t;

/* The whole file at path in a pld_mem buffer with at least one byte of room
 * after its last (for a terminator), its length in *len; NULL when it cannot
 * be read or memory runs out. */
char *pldrun_read_file(const char *path, size_t *len);
/* frees what batch_list_read made; l is zeroed */
void batch_list_fini(batch_list_t *l);
/* Reads and splits LIST; messages (with LIST:LINE) go to msg. Returns an exit
 * code: 0, 64 for a list that cannot be read or a malformed line, 70 out of
 * memory. */
int batch_list_read(const char *path, batch_list_t *l, pld_buf_t *msg);
/* fd 1 and fd 2 to the entry's files (opened for appending); 0, or -1 with
 * a message in err. */
int batch_redirect(const batch_entry_t *e, char *err, size_t errn);

#endif
