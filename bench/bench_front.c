/* bench_front.c - times the front end over a large program.
 *
 * usage: bench_front [FILE [RUNS]]
 *   FILE defaults to the 10,000-line program that bench/gen_program writes at
 *   build time (PLD_BENCH_PROGRAM); RUNS defaults to 10.
 *
 * Reports the median, min and max wall time (clock_gettime(CLOCK_MONOTONIC))
 * of RUNS repetitions of:
 *   parse   pld_parse_text + pld_program_destroy (lexing, parsing, arena)
 *   check   pld_check_program on a freshly parsed program (when the checker
 *           is linked: PLD_HAVE_CHECK), the parse itself not included
 * Not run by CTest: `make -C build bench` (Release) runs it. */
#include "pld_parse.h"
#ifdef PLD_HAVE_CHECK
#include "pld_check.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef PLD_BENCH_PROGRAM
#define PLD_BENCH_PROGRAM "big_10k.pld"
#endif

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(const char *what, double *t, int runs, size_t bytes, long lines)
{
    qsort(t, (size_t)runs, sizeof *t, cmp_double);
    double med = runs % 2 ? t[runs / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2;
    printf("%-6s median %8.3f ms  (min %.3f, max %.3f; %d runs)  %.0f lines/s  %.1f MB/s\n", what, med * 1e3,
           t[0] * 1e3, t[runs - 1] * 1e3, runs, (double)lines / med, (double)bytes / med / 1e6);
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0, got;
    char *s = malloc(cap);
    while (s && (got = fread(s + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *ns = realloc(s, cap *= 2);
            if (!ns) {
                free(s);
                s = NULL;
            }
            s = ns;
        }
    }
    fclose(f);
    *len = n;
    return s;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : PLD_BENCH_PROGRAM;
    int runs = argc > 2 ? atoi(argv[2]) : 10;
    if (runs < 1 || runs > 10000) {
        fprintf(stderr, "usage: bench_front [FILE [RUNS]]\n");
        return 64;
    }
    size_t len;
    char *src = read_file(path, &len);
    if (!src) {
        fprintf(stderr, "bench_front: cannot read %s\n", path);
        return 74;
    }
    long lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += src[i] == '\n';

    /* warm-up, and make sure the program is valid */
    pld_program_t *p = pld_parse_text(path, src, len);
    if (!p || !p->parsed_ok) {
        fprintf(stderr, "bench_front: %s does not parse\n", path);
        pld_program_destroy(p);
        free(src);
        return 65;
    }
    pld_program_destroy(p);
    printf("bench_front: %s: %ld lines, %zu bytes\n", path, lines, len);

    double *t = malloc((size_t)runs * sizeof *t);
    for (int r = 0; r < runs; r++) {
        double t0 = now_s();
        p = pld_parse_text(path, src, len);
        pld_program_destroy(p);
        t[r] = now_s() - t0;
    }
    report("parse", t, runs, len, lines);

#ifdef PLD_HAVE_CHECK
    pld_check_opts_t opts;
    memset(&opts, 0, sizeof opts);
    opts.ranks = 4;
    int bad = 0;
    for (int r = 0; r < runs; r++) {
        p = pld_parse_text(path, src, len);
        double t0 = now_s();
        pld_status_t st = pld_check_program(p, &opts);
        t[r] = now_s() - t0;
        bad |= st != PLD_OK;
        pld_program_destroy(p);
    }
    if (bad)
        fprintf(stderr, "bench_front: warning: the program does not pass the checker\n");
    report("check", t, runs, len, lines);
#else
    printf("check  (checker not linked yet)\n");
#endif
    free(t);
    free(src);
    return 0;
}
