/* hang_opts.h - pldrun's options of the hang watchdog beyond --timeout (the
 * no-progress budget, parsed in main.c): --wait-timeout SECONDS, the
 * per-wait limit (docs/debugging.md, "Hangs and slow producers"). */
#ifndef PLDRUN_HANG_OPTS_H
#define PLDRUN_HANG_OPTS_H

/* The usage lines of the options parsed here (main.c's usage text). */
#define HANG_OPTS_USAGE                                                                                      \
    "  --wait-timeout SECONDS\n"                                                                             \
    "                      also stop the run when one wait (or one compiled kernel's loop) lasts this\n"  \
    "                      long, even while other ranks progress (the per-wait limit; default none)\n"

/* When a (with value val, argv[*i + 1]) is an option of this file: parses
 * it, advances *i past the value and returns 1; *wait_timeout is the
 * seconds, or -1 after a usage message on stderr. Returns 0 for any other
 * option. */
int hang_option(const char *a, const char *val, double *wait_timeout, int *i);

#endif
