/* sweep.c - --schedule-seeds A-B (sweep.h; docs/debugging.md, "Schedule
 * sweeps"). */
#include "sweep.h"

#include "pld_buf.h"
#include "pld_kern.h"
#include "pld_mem.h"

#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sweep_out {
    const char *name; /* the parameter's name (the program outlives no run: copied) */
    char nbuf[64];
    pld_dtype_t dt;
    int rank;
    int64_t shape[8];
    size_t bytes;
    void *data;
};

static int parse_seed(const char *s, const char *end, uint64_t *out)
{
    if (s == end || end - s > 20)
        return 0;
    uint64_t v = 0;
    for (const char *p = s; p < end; p++) {
        if (*p < '0' || *p > '9')
            return 0;
        uint64_t d = (uint64_t)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    *out = v;
    return 1;
}

int sweep_option(int argc, char **argv, int *i, sweep_t *s)
{
    if (strcmp(argv[*i], "--schedule-seeds") != 0)
        return 0;
    const char *val = *i + 1 < argc ? argv[*i + 1] : NULL;
    const char *dash = val ? strchr(val, '-') : NULL;
    uint64_t a = 0, b = 0;
    if (!dash || !parse_seed(val, dash, &a) || !parse_seed(dash + 1, dash + strlen(dash), &b) || a > b) {
        fprintf(stderr, "pldrun: --schedule-seeds needs a range A-B of seeds with A <= B (e.g. 0-99)%s%s%s\n",
                val ? ", not '" : "", val ? val : "", val ? "'" : "");
        return -1;
    }
    s->on = 1;
    s->first = a;
    s->last = b;
    s->argc = argc;
    s->argv = argv;
    (*i)++;
    return 1;
}

int sweep_conflict(const sweep_t *s, int schedule)
{
    if (!s->on || !schedule)
        return 0;
    fprintf(stderr, "pldrun: --schedule-seeds runs its own seeds: it takes no --schedule-seed or --schedule random\n");
    return 1;
}

int sweep_quiet(const sweep_t *s)
{
    return s->on && s->index > 0;
}

/* One argument, quoted for a POSIX shell when it needs it. */
static void put_arg(pld_buf_t *b, const char *a)
{
    int plain = a[0] != '\0';
    for (const char *p = a; *p && plain; p++)
        plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=:,+@%-", *p) != NULL;
    if (plain) {
        pld_buf_printf(b, " %s", a);
        return;
    }
    pld_buf_puts(b, " '");
    for (const char *p = a; *p; p++) {
        if (*p == '\'')
            pld_buf_puts(b, "'\\''");
        else
            pld_buf_putn(b, p, 1);
    }
    pld_buf_puts(b, "'");
}

/* The replay command: mpirun -n P, then the command line as given, with
 * --schedule-seed S instead of --schedule-seeds A-B. parse_args wrote a NUL
 * over the '=' of each --in / --out value (NAME=FILE): the value follows that
 * NUL, and is put back together here. */
static void replay_line(const sweep_t *s, int size, uint64_t seed, pld_buf_t *b)
{
    pld_buf_printf(b, "mpirun -n %d", size);
    for (int k = 0; k < s->argc; k++) {
        if (k > 0 && strcmp(s->argv[k], "--schedule-seeds") == 0) {
            k++; /* and its value (each of them, when it was given twice) */
            continue;
        }
        const char *a = k == 0 ? (s->argv[0] && s->argv[0][0] ? s->argv[0] : "pldrun") : s->argv[k];
        if (k >= 2 && (strcmp(s->argv[k - 1], "--in") == 0 || strcmp(s->argv[k - 1], "--out") == 0) &&
            !strchr(a, '=')) {
            char whole[4096];
            snprintf(whole, sizeof whole, "%s=%s", a, a + strlen(a) + 1);
            put_arg(b, whole);
        } else {
            put_arg(b, a);
        }
    }
    pld_buf_printf(b, " --schedule-seed %llu", (unsigned long long)seed);
}

static void print_replay(const sweep_t *s, int size, uint64_t seed)
{
    pld_buf_t b;
    pld_buf_init(&b);
    replay_line(s, size, seed, &b);
    fprintf(stderr, "pldrun: replay: %s\n", b.oom ? "(out of memory)" : pld_buf_str(&b));
    fflush(stderr);
    pld_buf_fini(&b);
}

void sweep_abort_note(const sweep_t *s, int rank, int size)
{
    if (s->on && rank == 0) {
        fprintf(stderr, "pldrun: --schedule-seeds %llu-%llu: seed %llu did not end (a rank did not stop)\n",
                (unsigned long long)s->first, (unsigned long long)s->last, (unsigned long long)(s->first + s->index));
        print_replay(s, size, s->first + s->index);
    }
}

static void free_outs(sweep_t *s)
{
    for (int k = 0; k < s->nout; k++)
        pld_mem_free(s->outs[k].data);
    pld_mem_free(s->outs);
    s->outs = NULL;
    s->nout = 0;
}

static int is_output(const pld_param_t *pp)
{
    return pp->type && (pp->type->dir == PLD_DIR_OUT || pp->type->dir == PLD_DIR_INOUT);
}

/* A value of element e as text. */
static void elem_text(const void *data, pld_dtype_t dt, int64_t e, char *buf, size_t n)
{
    if (pld_dtype_is_float(dt))
        snprintf(buf, n, "%.9g", pld_elem_get_f(data, dt, e));
    else
        snprintf(buf, n, "%lld", (long long)pld_elem_get_i(data, dt, e));
}

/* Rank 0: the first run's outputs, copied. 0, or -1 out of memory. */
static int keep_outputs(sweep_t *s, const pld_interp_t *it)
{
    const int n = pld_interp_nparams(it);
    s->outs = pld_mem_calloc(n > 0 ? (size_t)n : 1, sizeof *s->outs);
    if (!s->outs)
        return -1;
    for (int i = 0; i < n; i++) {
        const pld_param_t *pp = pld_interp_param(it, i);
        sweep_out_t *o = &s->outs[s->nout];
        const int64_t *shape;
        const void *data;
        if (!is_output(pp) || pld_interp_result(it, i, &o->dt, &o->rank, &shape, &data) != PLD_OK || o->rank > 8)
            continue;
        snprintf(o->nbuf, sizeof o->nbuf, "%s", pp->name);
        o->name = o->nbuf;
        size_t elems = 1;
        for (int d = 0; d < o->rank; d++)
            elems *= (size_t)(o->shape[d] = shape[d]);
        o->bytes = elems * (size_t)pld_dtype_bytes(o->dt);
        o->data = pld_mem_alloc(o->bytes ? o->bytes : 1);
        if (!o->data)
            return -1;
        memcpy(o->data, data, o->bytes);
        s->nout++;
    }
    return 0;
}

/* Rank 0: 1 (and s->what) when an output differs from the first run's. */
static int compare_outputs(sweep_t *s, const pld_interp_t *it)
{
    int k = 0;
    for (int i = 0; i < pld_interp_nparams(it); i++) {
        const pld_param_t *pp = pld_interp_param(it, i);
        pld_dtype_t dt;
        int rank;
        const int64_t *shape;
        const void *data;
        if (!is_output(pp) || pld_interp_result(it, i, &dt, &rank, &shape, &data) != PLD_OK || rank > 8)
            continue;
        const sweep_out_t *o = k < s->nout ? &s->outs[k++] : NULL;
        int same = o && strcmp(o->name, pp->name) == 0 && o->dt == dt && o->rank == rank;
        for (int d = 0; same && d < rank; d++)
            same = shape[d] == o->shape[d];
        if (!same) {
            snprintf(s->what, sizeof s->what, "output '%s' has another shape or dtype", pp->name);
            return 1;
        }
        if (memcmp(o->data, data, o->bytes) == 0)
            continue;
        const size_t esz = (size_t)pld_dtype_bytes(dt);
        size_t e = 0, ndiff = 0, first = 0;
        for (; e * esz < o->bytes; e++)
            if (memcmp((const char *)o->data + e * esz, (const char *)data + e * esz, esz) != 0 && !ndiff++)
                first = e;
        char now[64], then[64];
        elem_text(data, dt, (int64_t)first, now, sizeof now);
        elem_text(o->data, dt, (int64_t)first, then, sizeof then);
        snprintf(s->what, sizeof s->what, "output '%s': %zu element%s differ%s, the first at flat index %zu: %s (was %s)",
                 pp->name, ndiff, ndiff == 1 ? "" : "s", ndiff == 1 ? "s" : "", first, now, then);
        return 1;
    }
    return 0;
}

void sweep_capture(sweep_t *s, const pld_interp_t *it, pld_win_sys_t *win, int ok, int rank)
{
    if (!s->on)
        return;
    pld_interp_stats_t st;
    pld_interp_stats(it, &st);
    s->captured = 1;
    /* why the run was stopped (the status board every rank sees): a hang, or a rank's error */
    const int why = win ? pld_win_status_aborted(win) : 0;
    s->hang = why == PLD_WA_DEADLOCK || why == PLD_WA_TIMEOUT || (!why && pld_interp_hang(it) != 0);
    s->error = !ok && !s->hang;
    s->races = st.races;
    if (!ok || rank != 0)
        return;
    if (s->index == 0) {
        if (keep_outputs(s, it) != 0) {
            snprintf(s->what, sizeof s->what, "out of memory keeping the first run's outputs");
            s->differs = 1;
        }
    } else {
        s->differs = compare_outputs(s, it);
    }
}

int sweep_run(sweep_t *s, int *schedule, uint64_t *seed, int check_races, sweep_job_fn job, struct opts *o, int rank,
              int size, int *worst)
{
    s->running = 1;
    s->index = 0;
    int rc = 0;
    const unsigned long long A = s->first, B = s->last;
    for (;;) {
        const uint64_t sd = s->first + s->index;
        *schedule = 1;
        *seed = sd;
        s->captured = s->differs = s->hang = s->error = 0;
        s->races = 0;
        s->what[0] = '\0';
        int w = 0;
        job(o, rank, size, 0, &w);
        /* every rank's verdict: the run's status, outputs, races, hang, whether the run got that far, an error */
        int64_t mine[6] = {w, s->differs, s->races > 0, s->hang, !s->captured, s->error}, all[6];
        if (MPI_Allreduce(mine, all, 6, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS) {
            fprintf(stderr, "[rank %d/%d] pldrun: MPI failed while the ranks compared seed %llu's run\n", rank, size,
                    (unsigned long long)sd);
            rc = 70;
            break;
        }
        const char *why = NULL;
        char buf[320];
        if (all[0] != 0) {
            rc = (int)all[0];
            snprintf(buf, sizeof buf, "%s (exit status %d)",
                     all[3] ? "hangs" : all[4] && !all[5] ? "does not run" : "fails", rc);
            why = buf;
        } else if (all[1]) {
            rc = SWEEP_EX_DIVERGED;
            snprintf(buf, sizeof buf, "gives other outputs than seed %llu: %s", A, s->what[0] ? s->what : "see rank 0");
            why = buf;
        } else if (all[2] && check_races) {
            rc = SWEEP_EX_DIVERGED;
            why = "reports a data race (--check-races)";
        }
        if (why) {
            if (rank == 0) {
                fprintf(stderr, "pldrun: --schedule-seeds %llu-%llu: seed %llu %s\n", A, B, (unsigned long long)sd,
                        why);
                print_replay(s, size, sd);
            }
            break;
        }
        if (sd == s->last) {
            if (rank == 0) {
                printf("pldrun: --schedule-seeds %llu-%llu: %llu seed%s run, every output equal to seed %llu's%s\n", A,
                       B, B - A + 1, B == A ? "" : "s", A, check_races ? ", no data race" : "");
                fflush(stdout);
            }
            break;
        }
        s->index++;
    }
    free_outs(s);
    s->running = 0;
    *worst = rc;
    return rc;
}
