/* hang_opts.c - pldrun's --wait-timeout (hang_opts.h). */
#include "hang_opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hang_option(const char *a, const char *val, double *wait_timeout, int *i)
{
    if (strcmp(a, "--wait-timeout") != 0)
        return 0;
    char *end = NULL;
    const double v = val ? strtod(val, &end) : 0;
    if (!val || !val[0] || *end || !(v > 0) || v > 1e6) {
        fprintf(stderr, "pldrun: --wait-timeout needs a positive number of seconds\n");
        *wait_timeout = -1;
        return 1;
    }
    *wait_timeout = v;
    (*i)++;
    return 1;
}
