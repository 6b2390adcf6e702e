/* winstate.h - pldrun's --save-windows DIR and --load-windows DIR: the
 * windows' state (every rank's window memory, signal cells included) kept in
 * a directory from one run to the next, so that the dispatches of a
 * persistent worker that are separate runs keep their windows without reset
 * (PyPTO's prepare(persistent=True, reset_persistent_windows=False);
 * docs/pypto.md, "Persistent windows"). The state itself is written and
 * checked by the interpreter (pld_dist.c) through the window layer
 * (src/sim_window/pld_win_state.c). */
#ifndef PLDRUN_WINSTATE_H
#define PLDRUN_WINSTATE_H

typedef struct winstate {
    const char *load; /* --load-windows DIR, or NULL */
    const char *save; /* --save-windows DIR, or NULL */
} winstate_t;

/* The usage lines of the options parsed here (main.c's usage text). */
#define WINSTATE_USAGE                                                                                       \
    "  --save-windows DIR  a run that succeeds writes its windows' state (every rank's window\n"             \
    "                      memory, signal cells included) to DIR (created if missing)\n"                    \
    "  --load-windows DIR  the windows start with the state a run saved in DIR (same program\n"              \
    "                      windows and rank count, checked), not zeros; needs --persistent-windows\n"       \
    "                      --reset-persistent-windows no (one dispatch per run, windows kept)\n"

/* When a (with value val, argv[*i + 1]) is an option of this file: parses
 * it, advances *i past the value and returns 1, or -1 after a usage message
 * on stderr. Returns 0 for any other option. */
int winstate_option(const char *a, const char *val, winstate_t *w, int *i);

/* After parsing: the combinations that cannot keep a window's state
 * (--load-windows without persistent windows kept without reset, --poison,
 * a --schedule-seeds sweep) are usage errors, with a message on stderr; a
 * --save-windows directory is created when missing. Returns 0 or the exit
 * code (64 usage, 74 the directory cannot be created). */
int winstate_check(const winstate_t *w, int persistent, int reset, int poison, int sweep);

#endif
