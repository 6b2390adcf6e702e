/* pld_assert.h - internal-error aborts: for cases no program can reach (an op
 * id a switch does not know, a dtype class that cannot occur). A program that
 * can reach a case gets a located diagnostic instead; these report the
 * pldrun source file and line, say it is a bug of pldrun, and abort.
 *
 * PLD_UNREACHABLE(msg)  always active.
 * PLD_ASSERT(cond, msg) active in Debug builds (no NDEBUG) and under
 *                       PLD_TESTING; otherwise compiled out.
 *
 * Header-only: the one place in the libraries that writes to stderr, since the
 * process is about to abort and there is no diagnostics sink to return to. */
#ifndef PLD_ASSERT_H
#define PLD_ASSERT_H

#include <stdio.h>
#include <stdlib.h>

static inline _Noreturn void pld_internal_error(const char *file, int line, const char *what, const char *msg)
{
    fprintf(stderr, "pldrun: internal error at %s:%d: %s%s%s (this is a bug of pldrun, please report it)\n", file,
            line, what ? what : "", what && msg ? ": " : "", msg ? msg : "");
    fflush(stderr);
    abort();
}

#define PLD_UNREACHABLE(msg) pld_internal_error(__FILE__, __LINE__, "unreachable", (msg))

#if !defined(NDEBUG) || defined(PLD_TESTING)
#define PLD_ASSERT(cond, msg) ((cond) ? (void)0 : pld_internal_error(__FILE__, __LINE__, "assertion '" #cond "' failed", (msg)))
#else
#define PLD_ASSERT(cond, msg) ((void)0)
#endif

#endif
