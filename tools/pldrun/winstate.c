/* winstate.c - pldrun's --save-windows / --load-windows (winstate.h). */
#include "winstate.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int winstate_option(const char *a, const char *val, winstate_t *w, int *i)
{
    const int load = strcmp(a, "--load-windows") == 0;
    if (!load && strcmp(a, "--save-windows") != 0)
        return 0;
    if (!val || !val[0]) {
        fprintf(stderr, "pldrun: %s needs a directory\n", a);
        return -1;
    }
    *(load ? &w->load : &w->save) = val;
    (*i)++;
    return 1;
}

int winstate_check(const winstate_t *w, int persistent, int reset, int poison, int sweep)
{
    if (!w->load && !w->save)
        return 0;
    const char *opt = w->load ? "--load-windows" : "--save-windows";
    if (w->load && (!persistent || reset != 0)) {
        fprintf(stderr, "pldrun: --load-windows keeps the windows of another run: it needs --persistent-windows "
                        "--reset-persistent-windows no (windows that are zeroed before reuse keep nothing)\n");
        return 64;
    }
    if (poison || sweep) {
        fprintf(stderr, "pldrun: %s cannot be combined with %s\n", opt, poison ? "--poison (its record of "
                        "never-written bytes is not kept)" : "--schedule-seeds (every run of the sweep starts afresh)");
        return 64;
    }
    if (w->save && mkdir(w->save, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "pldrun: --save-windows: cannot create %s: %s\n", w->save, strerror(errno));
        return 74;
    }
    return 0;
}
