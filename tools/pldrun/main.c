/* pldrun - command-line tool: arguments, MPI_Init/Finalize, rendering of
 * diagnostics and exit codes. Library code never prints; this file does.
 *
 * Exit codes: 0 ok, 64 usage, 65 program error (parse/check), 69 backend or
 * feature unavailable, 70 runtime error, 74 I/O error. */
#include "pld_check.h"
#include "pld_interp.h"
#include "pld_kern.h"
#include "pld_mem.h"
#include "pld_npy.h"
#include "pld_parse.h"
#include "pld_win.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { EX_OK = 0, EX_USAGE = 64, EX_DATAERR = 65, EX_UNAVAILABLE = 69, EX_SOFTWARE = 70, EX_IOERR = 74 };

#define MAX_BINDINGS 64

typedef struct binding {
    const char *name;   /* points into argv (NUL written over '=') */
    const char *value;
} binding_t;

typedef struct opts {
    const char *path;
    binding_t in[MAX_BINDINGS];
    int nin;
    binding_t out[MAX_BINDINGS];
    int nout;
    int check;
    int ranks;
    int print;
    const pld_npu_profile_t *platform;
    const char *backend;
    const char *entry;
    int timeout;
    pld_win_transport_t transport;
    int dispatches;
    int persistent;
    int reset; /* -1 default (reset iff persistent), 0 no, 1 yes */
} opts_t;

static void usage(FILE *f)
{
    fputs("usage: pldrun [options] PROGRAM.pld\n"
          "       mpirun -n N pldrun [options] PROGRAM.pld\n"
          "\n"
          "options:\n"
          "  --check             parse and check the program only (no MPI needed)\n"
          "  --ranks P           rank count for --check (enables the rules that need P)\n"
          "  --print             print the parsed program back (normalised text)\n"
          "  --entry NAME        function to run (default: the HOST orchestrator)\n"
          "  --in NAME=FILE.npy  bind an entry parameter (repeatable)\n"
          "  --out NAME=FILE.npy write a parameter's final contents (repeatable)\n"
          "  --platform a2a3|a5  hardware profile to emulate (default a2a3)\n"
          "  --backend NAME      kernel backend (default sim)\n"
          "  --timeout SECONDS   hang watchdog: a wait unsatisfied this long stops the run (default 30)\n"
          "  --window-transport rma|shm|auto\n"
          "                      how ranks reach each other's windows (default auto: shm on one node)\n"
          "  --dispatches N      run the entry N times, like a worker serving N calls (default 1);\n"
          "                      --out files hold the last dispatch's results\n"
          "  --persistent-windows\n"
          "                      window buffers outlive a dispatch (prepare(persistent=True));\n"
          "                      without it every dispatch starts with fresh zeroed windows\n"
          "  --reset-persistent-windows yes|no\n"
          "                      zero persistent windows before each reuse (default yes)\n"
          "  -h, --help          show this help\n"
          "  --version           show the version\n"
          "\n"
          "exit status: 0 ok, 64 usage, 65 program error, 69 unavailable, 70 runtime error, 74 I/O error\n",
          f);
}

static int parse_int(const char *s, int *out)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (!s[0] || *end || v < 0 || v > 1000000)
        return 0;
    *out = (int)v;
    return 1;
}

/* Returns -1 to continue, or an exit code. */
static int parse_args(int argc, char **argv, opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->platform = pld_npu_profile_default();
    o->backend = "sim";
    o->timeout = 30;
    o->dispatches = 1;
    o->reset = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return EX_OK;
        } else if (strcmp(a, "--version") == 0) {
            printf("pldrun %s\n", PLD_VERSION);
            return EX_OK;
        } else if (strcmp(a, "--check") == 0) {
            o->check = 1;
        } else if (strcmp(a, "--print") == 0) {
            o->print = 1;
        } else if (strcmp(a, "--ranks") == 0 || strcmp(a, "--timeout") == 0) {
            int v;
            if (!val || !parse_int(val, &v) || (strcmp(a, "--ranks") == 0 && (v < 1 || v > 4096))) {
                fprintf(stderr, "pldrun: %s needs a positive integer\n", a);
                return EX_USAGE;
            }
            if (strcmp(a, "--ranks") == 0)
                o->ranks = v;
            else
                o->timeout = v;
            i++;
        } else if (strcmp(a, "--dispatches") == 0) {
            if (!val || !parse_int(val, &o->dispatches) || o->dispatches < 1) {
                fprintf(stderr, "pldrun: --dispatches needs a positive integer\n");
                return EX_USAGE;
            }
            i++;
        } else if (strcmp(a, "--persistent-windows") == 0) {
            o->persistent = 1;
        } else if (strcmp(a, "--reset-persistent-windows") == 0) {
            if (!val || (strcmp(val, "yes") != 0 && strcmp(val, "no") != 0)) {
                fprintf(stderr, "pldrun: --reset-persistent-windows must be yes or no\n");
                return EX_USAGE;
            }
            o->reset = strcmp(val, "yes") == 0;
            i++;
        } else if (strcmp(a, "--window-transport") == 0) {
            if (!val || (strcmp(val, "rma") != 0 && strcmp(val, "shm") != 0 && strcmp(val, "auto") != 0)) {
                fprintf(stderr, "pldrun: --window-transport must be rma, shm or auto\n");
                return EX_USAGE;
            }
            o->transport = strcmp(val, "rma") == 0 ? PLD_WIN_RMA : strcmp(val, "shm") == 0 ? PLD_WIN_SHM : PLD_WIN_AUTO;
            i++;
        } else if (strcmp(a, "--platform") == 0) {
            o->platform = val ? pld_npu_profile(val) : NULL;
            if (!o->platform) {
                fprintf(stderr, "pldrun: --platform must be one of %s\n", pld_npu_profile_names());
                return EX_USAGE;
            }
            i++;
        } else if (strcmp(a, "--backend") == 0 || strcmp(a, "--entry") == 0) {
            if (!val) {
                fprintf(stderr, "pldrun: %s needs a value\n", a);
                return EX_USAGE;
            }
            if (strcmp(a, "--backend") == 0)
                o->backend = val;
            else
                o->entry = val;
            i++;
        } else if (strcmp(a, "--in") == 0 || strcmp(a, "--out") == 0) {
            char *eq = val ? strchr(argv[i + 1], '=') : NULL;
            int is_in = strcmp(a, "--in") == 0;
            if (!eq || eq == argv[i + 1] || !eq[1]) {
                fprintf(stderr, "pldrun: %s needs NAME=%s\n", a, is_in ? "FILE.npy|arange|zeros|ones|random:SEED" : "FILE.npy");
                return EX_USAGE;
            }
            if ((is_in ? o->nin : o->nout) >= MAX_BINDINGS) {
                fprintf(stderr, "pldrun: too many %s options (limit %d)\n", a, MAX_BINDINGS);
                return EX_USAGE;
            }
            *eq = '\0';
            binding_t *bd = is_in ? &o->in[o->nin++] : &o->out[o->nout++];
            bd->name = argv[i + 1];
            bd->value = eq + 1;
            i++;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "pldrun: unknown option '%s'\n", a);
            usage(stderr);
            return EX_USAGE;
        } else if (o->path) {
            fprintf(stderr, "pldrun: only one program may be given ('%s' and '%s')\n", o->path, a);
            return EX_USAGE;
        } else {
            o->path = a;
        }
    }
    if (!o->path) {
        fprintf(stderr, "pldrun: no program given\n");
        usage(stderr);
        return EX_USAGE;
    }
    if (o->reset == 1 && !o->persistent) {
        /* PyPTO: reset_persistent_windows=True requires persistent=True */
        fprintf(stderr, "pldrun: --reset-persistent-windows yes requires --persistent-windows\n");
        return EX_USAGE;
    }
    return -1;
}

static char *read_file(const char *path, size_t *len)
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

/* Rank of this process from the launcher's environment (no MPI_Init needed). */
static int env_rank(void)
{
    const char *vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v)
            return atoi(v);
    }
    return 0;
}

/* Parses and checks the program with the rank count P (0 = unknown). Prints
 * diagnostics when print_diags. Returns an exit code; *out receives the
 * program when the check passed and out != NULL. */
static int front_end(const opts_t *o, int ranks, int print_diags, pld_program_t **out)
{
    size_t len = 0;
    char *src = read_file(o->path, &len);
    if (!src) {
        if (print_diags)
            fprintf(stderr, "pldrun: cannot read '%s'\n", o->path);
        return EX_IOERR;
    }
    pld_check_opts_t co;
    memset(&co, 0, sizeof co);
    co.ranks = ranks;
    co.platform = o->platform;
    pld_status_t st;
    pld_program_t *p = pld_check_text(o->path, src, len, &co, &st);
    pld_mem_free(src);
    if (!p) {
        fprintf(stderr, "pldrun: out of memory\n");
        return EX_SOFTWARE;
    }
    pld_buf_t b;
    pld_buf_init(&b);
    if (print_diags) {
        pld_diag_render(&p->diags, "", &b);
        fputs(pld_buf_str(&b), stderr);
        if (o->print && p->parsed_ok) {
            pld_buf_reset(&b);
            pld_ast_print(p, &b);
            fputs(pld_buf_str(&b), stdout);
        }
    }
    pld_buf_fini(&b);
    int rc = st == PLD_OK ? EX_OK : st == PLD_E_NOMEM ? EX_SOFTWARE : EX_DATAERR;
    if (print_diags && rc == EX_DATAERR) {
        int n = p->diags.n_errors;
        fprintf(stderr, "%d error%s generated\n", n, n == 1 ? "" : "s");
    }
    if (rc == EX_OK && out)
        *out = p;
    else
        pld_program_destroy(p);
    return rc;
}

/* ---- MPI control plane for the interpreter ---- */

static pld_status_t mpi_gather(void *ctx, const void *send, size_t bytes, void *recv)
{
    (void)ctx;
    /* chunked so counts stay within int */
    const size_t chunk = (size_t)1 << 30;
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (size_t done = 0; done < bytes || (bytes == 0 && done == 0); done += chunk) {
        size_t n = bytes - done < chunk ? bytes - done : chunk;
        if (bytes == 0)
            break;
        if (!recv) {
            if (MPI_Gather((const char *)send + done, (int)n, MPI_BYTE, NULL, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD) !=
                MPI_SUCCESS)
                return PLD_E_MPI;
            continue;
        }
        char *tmp = pld_mem_alloc(n * (size_t)size);
        if (!tmp)
            return PLD_E_NOMEM;
        int rc = MPI_Gather((const char *)send + done, (int)n, MPI_BYTE, tmp, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
        for (int r = 0; rc == MPI_SUCCESS && r < size; r++)
            memcpy((char *)recv + (size_t)r * bytes + done, tmp + (size_t)r * n, n);
        pld_mem_free(tmp);
        if (rc != MPI_SUCCESS)
            return PLD_E_MPI;
    }
    return PLD_OK;
}

static pld_status_t mpi_max(void *ctx, int64_t in, int64_t *out)
{
    (void)ctx;
    return MPI_Allreduce(&in, out, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD) == MPI_SUCCESS ? PLD_OK : PLD_E_MPI;
}

static int is_generator(const char *v)
{
    return strcmp(v, "arange") == 0 || strcmp(v, "zeros") == 0 || strcmp(v, "ones") == 0 || strncmp(v, "random:", 7) == 0;
}

/* Prints the run's diagnostics with the rank prefix, in one write: those
 * after `checked` (the last static diagnostic, NULL = none), because static
 * diagnostics were printed once, by rank 0, in front_end. */
static void print_rank_diags(const pld_program_t *p, const pld_diag_t *checked, int rank, int size)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "[rank %d/%d] ", rank, size);
    pld_buf_t b;
    pld_buf_init(&b);
    for (const pld_diag_t *d = checked ? checked->next : p->diags.head; d; d = d->next)
        pld_diag_render_one(&p->diags, d, prefix, &b);
    if (p->diags.oom)
        pld_buf_printf(&b, "%serror: out of memory while recording diagnostics\n", prefix);
    if (b.len)
        fwrite(b.p, 1, b.len, stderr);
    fflush(stderr);
    pld_buf_fini(&b);
}

static void summarize(const char *name, pld_dtype_t dt, int rank, const int64_t *shape, const void *data)
{
    int64_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= shape[d];
    printf("%s: [", name);
    for (int d = 0; d < rank; d++)
        printf("%s%lld", d ? ", " : "", (long long)shape[d]);
    printf("] %s =", pld_dtype_name(dt));
    double sum = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = pld_dtype_is_float(dt) ? pld_elem_get_f(data, dt, i) : (double)pld_elem_get_i(data, dt, i);
        sum += v;
        if (i < 8)
            printf(" %.6g", v);
    }
    printf("%s  (sum %.9g)\n", n > 8 ? " ..." : "", sum);
}

static int run(const opts_t *o, pld_win_sys_t *win)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double t0 = MPI_Wtime();
    pld_program_t *p = NULL;
    int rc = front_end(o, size, rank == 0, &p);
    if (rc != EX_OK)
        return rc;
    const pld_diag_t *checked = p->diags.tail; /* printed by rank 0 already */
    pld_comm_t comm = {NULL, rank, size, mpi_gather, mpi_max};
    pld_interp_opts_t io;
    memset(&io, 0, sizeof io);
    io.entry = o->entry;
    io.win = win;
    io.timeout_s = o->timeout;
    io.platform = o->platform;
    io.dispatches = o->dispatches;
    io.persistent_windows = o->persistent;
    io.reset_windows = o->reset;
    char err[1024] = "";
    pld_interp_t *it = NULL;
    pld_status_t st;
    /* the kernel backend: the registry of this build, opened by name */
    pld_hw_registry_t reg;
    pld_hw_registry_init(&reg);
    pld_hw_register(&reg, pld_interp_sim_backend());
    pld_hw_t *hw = NULL;
    st = pld_hw_open(&reg, o->backend, NULL, rank, size, &hw, err, sizeof err);
    if (st != PLD_OK) {
        if (rank == 0)
            fprintf(stderr, "pldrun: %s\n", err);
        pld_program_destroy(p);
        return st == PLD_E_NOMEM ? EX_SOFTWARE : EX_UNAVAILABLE;
    }
    io.hw = hw;
    st = pld_interp_create(p, &io, &comm, &it, err, sizeof err);
    if (st != PLD_OK) {
        if (rank == 0)
            fprintf(stderr, "pldrun: %s\n", err[0] ? err : pld_status_name(st));
        pld_hw_close(hw);
        pld_program_destroy(p);
        return st == PLD_E_USAGE ? EX_USAGE : EX_SOFTWARE;
    }
    /* bind inputs */
    rc = EX_OK;
    for (int k = 0; k < o->nin && rc == EX_OK; k++) {
        int i = pld_interp_param_index(it, o->in[k].name);
        if (i < 0) {
            if (rank == 0) {
                fprintf(stderr, "pldrun: the entry function has no parameter '%s' (parameters:", o->in[k].name);
                for (int j = 0; j < pld_interp_nparams(it); j++)
                    fprintf(stderr, " %s", pld_interp_param(it, j)->name);
                fprintf(stderr, ")\n");
            }
            rc = EX_USAGE;
            break;
        }
        if (is_generator(o->in[k].value)) {
            st = pld_interp_bind_generated(it, i, o->in[k].value, err, sizeof err);
        } else {
            pld_npy_t npy;
            st = pld_npy_read(o->in[k].value, &npy, err, sizeof err);
            if (st == PLD_OK) {
                /* the tensor takes the file's buffer: no second copy of the input */
                st = pld_interp_bind_adopt(it, i, npy.dt, npy.rank, npy.shape, npy.data, err, sizeof err);
                npy.data = NULL;
                pld_npy_fini(&npy);
            } else if (st == PLD_E_IO) {
                rc = EX_IOERR;
            }
        }
        if (st != PLD_OK) {
            if (rank == 0)
                fprintf(stderr, "pldrun: --in %s: %s\n", o->in[k].name, err);
            if (rc == EX_OK)
                rc = EX_USAGE;
        }
    }
    /* Out parameters start zeroed; a missing input is a usage error */
    for (int i = 0; rc == EX_OK && i < pld_interp_nparams(it); i++) {
        if (pld_interp_is_bound(it, i))
            continue;
        const pld_param_t *pp = pld_interp_param(it, i);
        if (pp->type && pp->type->dir == PLD_DIR_OUT) {
            if (pld_interp_bind_generated(it, i, "zeros", err, sizeof err) != PLD_OK) {
                if (rank == 0)
                    fprintf(stderr, "pldrun: output '%s': %s\n", pp->name, err);
                rc = EX_USAGE;
            }
            continue;
        }
        char desc[256];
        pld_interp_param_desc(it, i, desc, sizeof desc);
        if (rank == 0)
            fprintf(stderr, "pldrun: missing input for parameter '%s' (expected %s): pass --in %s=FILE.npy or "
                            "--in %s=arange|zeros|ones|random:SEED\n",
                    pp->name, desc, pp->name, pp->name);
        rc = EX_USAGE;
    }
    for (int k = 0; rc == EX_OK && k < o->nout; k++)
        if (pld_interp_param_index(it, o->out[k].name) < 0) {
            if (rank == 0)
                fprintf(stderr, "pldrun: --out %s: the entry function has no such parameter\n", o->out[k].name);
            rc = EX_USAGE;
        }
    /* Rank 0 writes the outputs: it checks now that it can, so that a long run
     * does not end with "cannot open for writing"; every rank learns the verdict. */
    for (int k = 0; rc == EX_OK && rank == 0 && k < o->nout; k++)
        if (pld_npy_check_writable(o->out[k].value, err, sizeof err) != PLD_OK) {
            fprintf(stderr, "pldrun: --out %s: %s\n", o->out[k].name, err);
            rc = EX_IOERR;
        }
    {
        int worst = rc;
        if (MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS && rc == EX_OK)
            worst = EX_SOFTWARE;
        rc = worst;
    }
    if (rc != EX_OK) {
        pld_interp_destroy(it);
        pld_hw_close(hw);
        pld_program_destroy(p);
        return rc;
    }
    st = pld_interp_run(it);
    if (st != PLD_OK) {
        print_rank_diags(p, checked, rank, size);
        rc = st == PLD_E_USAGE ? EX_USAGE : st == PLD_E_NOMEM ? EX_SOFTWARE : EX_SOFTWARE;
    } else {
        print_rank_diags(p, checked, rank, size); /* warnings */
    }
    pld_interp_stats_t stats;
    pld_interp_stats(it, &stats);
    uint64_t mine[4] = {stats.tasks, stats.bytes_moved, stats.dispatches, stats.ops}, tot[4];
    MPI_Reduce(mine, tot, 4, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    unsigned transports = 0;
    MPI_Reduce(&stats.transports, &transports, 1, MPI_UNSIGNED, MPI_BOR, 0, MPI_COMM_WORLD);
    if (st == PLD_OK && rank == 0) {
        int want_summary = o->nout == 0;
        for (int i = 0; i < pld_interp_nparams(it); i++) {
            const pld_param_t *pp = pld_interp_param(it, i);
            if (!pp->type || (pp->type->dir != PLD_DIR_OUT && pp->type->dir != PLD_DIR_INOUT))
                continue;
            pld_dtype_t dt;
            int r;
            const int64_t *shape;
            const void *data;
            if (pld_interp_result(it, i, &dt, &r, &shape, &data) != PLD_OK)
                continue;
            for (int k = 0; k < o->nout; k++)
                if (strcmp(o->out[k].name, pp->name) == 0 &&
                    pld_npy_write(o->out[k].value, dt, r, shape, data, err, sizeof err) != PLD_OK) {
                    fprintf(stderr, "pldrun: --out %s: %s\n", pp->name, err);
                    rc = EX_IOERR;
                }
            if (want_summary)
                summarize(pp->name, dt, r, shape, data);
        }
        char wins[64] = "";
        for (int t = PLD_WIN_RMA; t <= PLD_WIN_LOCAL; t++)
            if (transports & (1u << t))
                snprintf(wins + strlen(wins), sizeof wins - strlen(wins), "%s%s", wins[0] ? "+" : ", windows over ",
                         pld_win_transport_name((pld_win_transport_t)t));
        printf("pldrun: %d rank%s, %llu dispatch%s, %llu kernel task%s, %llu bytes moved, %llu interpreted ops%s, "
               "%.3f s\n",
               size, size == 1 ? "" : "s", (unsigned long long)tot[2], tot[2] == 1 ? "" : "es",
               (unsigned long long)tot[0], tot[0] == 1 ? "" : "s", (unsigned long long)tot[1],
               (unsigned long long)tot[3], wins, MPI_Wtime() - t0);
    }
    if (st != PLD_OK)
        rc = EX_SOFTWARE;
    if (pld_interp_hang(it) == 2) {
        /* a rank neither finished nor stopped: nothing else will end the job */
        fflush(stdout);
        fflush(stderr);
        if (rank == 0)
            fprintf(stderr, "pldrun: a rank did not stop after the run was aborted; killing the job\n");
        MPI_Abort(MPI_COMM_WORLD, EX_SOFTWARE);
    }
    pld_interp_destroy(it);
    pld_hw_close(hw);
    pld_program_destroy(p);
    return rc;
}

/* In sanitizer builds, check for leaks while Open MPI is still initialised:
 * everything pldrun allocated is freed by then, and Open MPI's own memory is
 * still reachable, so the report is pldrun's alone. The check runs once; the
 * exit-time check (which would list Open MPI's finalize-time leftovers) is
 * then skipped. ASAN_OPTIONS=detect_leaks=0 turns it off as usual. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PLD_HAVE_LSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(PLD_HAVE_LSAN)
#define PLD_HAVE_LSAN 1
#endif
#ifdef PLD_HAVE_LSAN
#include <sanitizer/lsan_interface.h>
#define PLD_LEAK_CHECK() __lsan_do_leak_check()
#define PLD_LEAK_IGNORE_BEGIN() __lsan_disable()
#define PLD_LEAK_IGNORE_END() __lsan_enable()
/* What Open MPI, PMIx and hwloc lose during MPI_Init is theirs, not ours
 * (pldrun never calls (v)asprintf: those frames are Open MPI's, whose stacks
 * the fast unwinder cannot follow through its plugins). */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libmpi.so\n"
           "leak:libopen-pal.so\n"
           "leak:libopen-rte.so\n"
           "leak:libpmix.so\n"
           "leak:libhwloc.so\n"
           "leak:libevent\n"
           "leak:/openmpi/\n"
           "leak:__vasprintf_internal\n";
}
#else
#define PLD_LEAK_CHECK() ((void)0)
#define PLD_LEAK_IGNORE_BEGIN() ((void)0)
#define PLD_LEAK_IGNORE_END() ((void)0)
#endif

int main(int argc, char **argv)
{
    opts_t o;
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0)
        return rc;
    if (o.check || o.print)
        return front_end(&o, o.ranks, env_rank() == 0, NULL);
    /* Open MPI loads and unloads plugins in MPI_Init; what those lose has no
     * stack to suppress by, so this thread's allocations in there are not leaks */
    PLD_LEAK_IGNORE_BEGIN();
    int mpi_ok = MPI_Init(&argc, &argv) == MPI_SUCCESS;
    PLD_LEAK_IGNORE_END();
    if (!mpi_ok) {
        fprintf(stderr, "pldrun: MPI_Init failed\n");
        return EX_UNAVAILABLE;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    pld_win_sys_t *win = NULL;
    char err[512];
    if (pld_win_sys_init(o.transport, &win, err, sizeof err) != PLD_OK) {
        fprintf(stderr, "pldrun: window layer: %s\n", err);
        MPI_Abort(MPI_COMM_WORLD, EX_UNAVAILABLE);
        return EX_UNAVAILABLE;
    }
    rc = run(&o, win);
    pld_win_sys_fini(win);
    PLD_LEAK_CHECK();
    /* every rank leaves with the worst exit code */
    int worst = rc;
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return rc ? rc : worst;
}
