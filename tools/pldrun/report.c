/* report.c - the state line of a killed, interrupted or crashed rank (report.h).
 * Everything reachable from a handler is async-signal-safe: fixed storage,
 * no stdio, no allocation, write(2) only. */
#define _GNU_SOURCE /* SA_ONSTACK, sigaltstack, SI_USER under -std=c11 */
#include "report.h"

#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

static volatile int g_rank, g_size;
static const char *volatile g_phase = "starting";
static const pld_interp_where_t *volatile g_where;

void report_phase(const char *phase)
{
    g_phase = phase;
}

void report_where(const pld_interp_where_t *where)
{
    g_where = where;
}

/* ---- a line in fixed storage ---- */

typedef struct line {
    char b[640];
    size_t n;
} line_t;

static void put_s(line_t *l, const char *s)
{
    while (s && *s && l->n < sizeof l->b - 1)
        l->b[l->n++] = *s++;
}

static void put_sn(line_t *l, const char *s, size_t max)
{
    for (size_t i = 0; s && i < max && s[i] && l->n < sizeof l->b - 1; i++)
        l->b[l->n++] = s[i];
}

static void put_i(line_t *l, long long v)
{
    char t[24];
    int k = 0;
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    do {
        t[k++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        t[k++] = '-';
    while (k > 0 && l->n < sizeof l->b - 1)
        l->b[l->n++] = t[--k];
}

static const char *sig_name(int sig)
{
    switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGUSR1: return "SIGUSR1";
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    }
    return "a signal";
}

/* "[rank r/P] <verb><sep><state>", e.g. "terminated" + " while " + "running f at p.pld:3:5" */
static void state_line(line_t *l, const char *verb, const char *sep)
{
    put_s(l, "[rank ");
    put_i(l, g_rank);
    put_s(l, "/");
    put_i(l, g_size);
    put_s(l, "] ");
    put_s(l, verb);
    const pld_interp_where_t *w = g_where;
    if (!w) {
        put_s(l, sep);
        put_s(l, g_phase);
        return;
    }
    if (w->waiting) {
        const char *what = w->what;
        if (strncmp(what, "wait on ", 8) == 0) {
            put_s(l, sep);
            put_s(l, "waiting on ");
            put_sn(l, what + 8, sizeof w->what - 8);
        } else {
            put_s(l, sep);
            put_s(l, "blocked in ");
            put_sn(l, what, sizeof w->what);
        }
    } else if (w->doing) {
        put_s(l, sep);
        put_s(l, w->doing);
        return;
    } else if (w->func) {
        put_s(l, sep);
        put_s(l, "running ");
        put_s(l, w->func);
    } else {
        put_s(l, sep);
        put_s(l, g_phase);
        return;
    }
    if (w->block >= 0) {
        put_s(l, " (block ");
        put_i(l, (long long)w->block);
        put_s(l, ")");
    }
    if (w->line > 0) {
        put_s(l, " at ");
        put_s(l, w->file);
        put_s(l, ":");
        put_i(l, w->line);
        put_s(l, ":");
        put_i(l, w->col);
    }
    if (w->waiting) {
        put_s(l, "; found ");
        put_i(l, w->found);
    }
}

static void emit(line_t *l)
{
    l->b[l->n++] = '\n';
    const char *p = l->b;
    size_t left = l->n;
    while (left > 0) {
        ssize_t k = write(STDERR_FILENO, p, left);
        if (k <= 0)
            break;
        p += k;
        left -= (size_t)k;
    }
}

/* ---- handlers ---- */

static const int g_fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
static const int g_ending[] = {SIGTERM, SIGINT};
static struct sigaction g_old[65];
static volatile sig_atomic_t g_reported;

static void on_ending(int sig)
{
    if (!g_reported) {
        g_reported = 1;
        line_t l = {.n = 0};
        state_line(&l, sig == SIGINT ? "interrupted" : "terminated", " while ");
        emit(&l);
    }
    sigaction(sig, &g_old[sig], NULL);
    raise(sig);
}

static void on_usr1(int sig)
{
    (void)sig;
    line_t l = {.n = 0};
    state_line(&l, "state:", " ");
    emit(&l);
}

static void on_fatal(int sig, siginfo_t *info, void *uc)
{
    (void)uc;
    if (!g_reported) {
        g_reported = 1;
        line_t v = {.n = 0}, l = {.n = 0};
        put_s(&v, "crashed (");
        put_s(&v, sig_name(sig));
        put_s(&v, ")");
        v.b[v.n] = '\0';
        state_line(&l, v.b, " while ");
        put_s(&l, "; this is a bug in pldrun: please report it with the program and its inputs");
        emit(&l);
    }
    /* hand a fault on: the previous handler (Open MPI's stack trace) runs
     * when the fault repeats (returning re-executes the faulting
     * instruction). A signal that was sent, not raised by a fault, ends the
     * process with the default action: Open MPI's handler is not
     * async-signal-safe (its stack trace may allocate), and a kill that lands
     * inside malloc then hung the rank instead of ending it (seen as a
     * 60-second timeout of mpi_negative_crash_report under load). */
    if (info->si_code <= 0) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    sigaction(sig, &g_old[sig], NULL);
    if (sig == SIGABRT)
        raise(sig);
}

void report_install(int rank, int size)
{
    g_rank = rank;
    g_size = size;
    /* an alternate stack, so a stack overflow still reports */
    static char altstack[256 * 1024];
    stack_t ss;
    memset(&ss, 0, sizeof ss);
    ss.ss_sp = altstack;
    ss.ss_size = sizeof altstack;
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_ONSTACK | SA_SIGINFO;
    sa.sa_sigaction = on_fatal;
    for (size_t i = 0; i < sizeof g_fatal / sizeof g_fatal[0]; i++)
        sigaction(g_fatal[i], &sa, &g_old[g_fatal[i]]);
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_ONSTACK;
    sa.sa_handler = on_ending;
    for (size_t i = 0; i < sizeof g_ending / sizeof g_ending[0]; i++) {
        sigaction(g_ending[i], NULL, &g_old[g_ending[i]]);
        if (g_old[g_ending[i]].sa_handler == SIG_IGN)
            continue; /* started with the signal ignored (nohup, background job): keep it so */
        sigaction(g_ending[i], &sa, NULL);
    }
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_ONSTACK | SA_RESTART;
    sigaction(SIGUSR1, &sa, &g_old[SIGUSR1]);
}
