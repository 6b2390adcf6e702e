/* pldrun - command-line tool: arguments, MPI_Init/Finalize, rendering of
 * diagnostics and exit codes. Library code never prints; this file does.
 *
 * Exit codes: 0 ok, 1 a run that went well but has a finding under
 * --check-races=error or --poison=error (findings.h), or a --schedule-seeds
 * sweep that found a seed whose outputs differ or that reports a race
 * (sweep.h), 64 usage, 65 program error (parse/check), 69 backend or feature
 * unavailable, 70 runtime error, 74 I/O error. */
#include "pld_check.h"
#include "pld_interp.h"
#include "pld_kern.h"
#include "pld_mem.h"
#include "pld_npy.h"
#include "pld_parse.h"
#include "pld_win.h"
#include "batchlist.h"
#include "hang_opts.h"
#include "dispatch_io.h"
#include "dump.h"
#include "observe.h"
#include "findings.h"
#include "pysub.h"
#include "report.h"
#include "signature.h"
#include "sweep.h"
#include "winstate.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { EX_OK = 0, EX_USAGE = 64, EX_DATAERR = 65, EX_UNAVAILABLE = 69, EX_SOFTWARE = 70, EX_IOERR = 74 };

#define MAX_BINDINGS 64

typedef struct opts {
    const char *path;
    binding_t in[MAX_BINDINGS];
    int nin;
    binding_t out[MAX_BINDINGS];
    int nout;
    int check;
    int ranks;
    int print;          /* 1 --print (as read), 2 --print-lowered (after the lowering passes), 3 --signature */
    const pld_npu_profile_t *platform;
    const char *backend;
    const char *backend_options;
    const char *devices; /* --devices: the device id of each rank of a host, "0,1,2,3" */
    const char *entry;
    int timeout;
    double wait_timeout; /* --wait-timeout (hang_opts.c); 0: none */
    pld_win_transport_t transport;
    int dispatches, dispatches_given;
    int persistent;
    int reset; /* -1 default (reset iff persistent), 0 no, 1 yes */
    const char *trace;   /* --trace FILE.json */
    int verbose;         /* -v */
    const char *log_dir; /* --log-dir DIR */
    const char *dump_dir; /* --dump DIR */
    int poison;
    int check_races;     /* --check-races */
    findings_opts_t findings; /* --findings, --check-races=error, --poison=error (findings.h) */
    int chunk_steps;     /* --collective-steps chunk */
    int schedule;        /* 1 --schedule-seed N, 2 --schedule random (rank 0 draws the seed) */
    uint64_t seed;
    sweep_t sweep;       /* --schedule-seeds A-B (sweep.c) */
    pysub_t pysub;       /* --subworkers, --subworker-tensors (pysub.c) */
    winstate_t winstate; /* --save-windows, --load-windows (winstate.c) */
} opts_t;

static void usage(FILE *f)
{
    fprintf(f, "usage: pldrun [options] PROGRAM.pld\n"
          "       mpirun -n N pldrun [options] PROGRAM.pld\n"
          "       mpirun -n N pldrun --batch LIST\n"
          "\n"
          "options:\n"
          "  --check             parse and check the program only (no MPI needed)\n"
          "  --ranks P           rank count for --check (enables the rules that need P)\n"
          "  --print             print the parsed program back (normalised text)\n"
          "  --print-lowered     print the program after the lowering passes (builtin collective\n"
          "                      kernels and dispatches; docs/lowering.md); it reads back with --check\n"
          "  --signature         print the entry's parameters as one line of JSON (name, kind, dtype,\n"
          "                      shape, dir) and run nothing (the Python API uses it)\n"
          "  --entry NAME        function to run (default: the HOST orchestrator)\n"
          "  --in NAME=FILE.npy  bind an entry parameter (repeatable); F0.npy,F1.npy,... or DIR/: a file per dispatch\n"
          "  --out NAME=FILE.npy write a parameter's final contents (repeatable); O0,O1,... or DIR/: per dispatch\n"
          "  --platform a2a3|a5  hardware profile to emulate (default a2a3)\n"
          "  --backend NAME|PATH.so\n"
          "                      kernel backend: a built-in one (default sim) or a plugin\n"
          "                      shared object built against src/hw_backend/pld_backend.h;\n"
          "                      without it, $PLDRUN_BACKEND when set (sim, native, ...)\n"
          "  --backend-options S options text handed to the backend's open\n"
          "  --devices LIST      device ids for the ranks of each host, by local rank (\"0,1,2,3\");\n"
          "                      default: the backend chooses (ascend: local rank)\n"
          "  --timeout SECONDS   hang watchdog: no rank making progress this long stops the run (default 30)\n"
          HANG_OPTS_USAGE
          "  --window-transport auto|shm|hybrid|rma\n"
          "                      how ranks reach each other's windows (default auto: shm on one node,\n"
          "                      hybrid across nodes: shm within a node, RMA and messages between nodes)\n"
          "  --collective-steps merged|chunk\n"
          "                      merged (default): the mesh and InCore ring allreduces pass the\n"
          "                      barriers of consecutive chunks at once (up to 8 MiB, ring 128 KiB);\n"
          "                      chunk: a barrier per chunk, as the semantics document lists them\n"
          "                      (slower; the same results)\n"
          "  --dispatches N      run the entry N times, like a worker serving N calls (default 1);\n"
          "                      --out files hold the last dispatch's results\n"
          "  --persistent-windows\n"
          "                      window buffers outlive a dispatch (prepare(persistent=True));\n"
          "                      without it every dispatch starts with fresh zeroed windows\n"
          "  --reset-persistent-windows yes|no\n"
          "                      zero persistent windows before each reuse (default yes)\n"
          WINSTATE_USAGE
          "  --trace FILE.json   write a timeline of every rank (Chrome/Perfetto trace format: open it in\n"
          "                      ui.perfetto.dev or chrome://tracing), also when the run hangs or fails\n"
          "  -v, --verbose       log every rank's steps (ops, peers, cells, values) to stderr\n"
          "  --log-dir DIR       write the same log per rank to DIR/rank<R>.log\n"
          "  --dump DIR          write each pl.dump_tag hit (and launch dumps=) as DIR/*.npy, one line each\n"
          "                      in DIR/index.tsv (docs/debugging.md)\n"
          "  --poison            never-written window bytes and created tiles read as NaN / 0xA5 bytes;\n"
          "                      each read of them is a warning, once per site (sim backend only)\n"
          "  --check-races       report every pair of unordered conflicting window accesses, both\n"
          "                      sides with rank, block, op and line:col (docs/races.md; sim backend)\n"
          "  --check-races=error, --poison=error\n"
          "                      the same, and a run with a finding exits with status 1\n"
          "  --findings FILE.json  write every race and poison finding as one SARIF 2.1.0 log\n"
          "  --schedule-seed N   a seeded schedule: blocks run in a random order, preempted at remote\n"
          "                      ops, puts become visible late (within the memory model); the same N\n"
          "                      replays the same decisions\n"
          "  --schedule random   the same with a seed drawn now and printed\n"
          "  --schedule-seeds A-B\n"
          "                      run under each seed A..B in one job; stop at a seed whose outputs differ\n"
          "                      from A's (exit 1) or that hangs or reports a race, with its replay command\n"
          "%s  --batch LIST        run each line of LIST (CWD<TAB>OUT<TAB>ERR<TAB>ARGS) as its own run, in one MPI job\n"
          "  -h, --help          show this help\n"
          "  --version           show the version\n"
          "\n"
          "exit status: 0 ok, 1 findings (--check-races=error, --poison=error) or a --schedule-seeds seed differs,\n"
          "             64 usage, 65 program error, 69 unavailable, 70 runtime error, 74 I/O error\n",
          pysub_usage());
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

/* Which of two words option a's value is (0: first, 1: second); anything
 * else is a usage message and -1. */
static int choice(const char *a, const char *val, const char *first, const char *second)
{
    if (val && (strcmp(val, first) == 0 || strcmp(val, second) == 0))
        return strcmp(val, second) == 0;
    fprintf(stderr, "pldrun: %s must be %s or %s\n", a, first, second);
    return -1;
}

/* Returns -1 to continue, or an exit code. in_batch: the arguments of a
 * --batch entry, which may not take the options that run no program
 * (--check, --print, --help, --version) nor --batch. */
static int parse_args(int argc, char **argv, opts_t *o, int in_batch)
{
    memset(o, 0, sizeof *o);
    o->platform = pld_npu_profile_default();
    const char *env_backend = getenv("PLDRUN_BACKEND"); /* the default; --backend overrides it */
    o->backend = env_backend && *env_backend ? env_backend : "sim";
    o->timeout = 30;
    o->dispatches = 1;
    o->reset = -1;
    for (int i = 1, k; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (in_batch && (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0 || strcmp(a, "--version") == 0 ||
                         strcmp(a, "--check") == 0 || strcmp(a, "--print") == 0 ||
                         strcmp(a, "--print-lowered") == 0 || strcmp(a, "--signature") == 0 ||
                         strcmp(a, "--batch") == 0)) {
            fprintf(stderr, "pldrun: %s is not available in a --batch entry\n", a);
            return EX_USAGE;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return EX_OK;
        } else if (strcmp(a, "--version") == 0) {
            printf("pldrun %s (FP32 kernels: %s)\n", PLD_VERSION, pld_kern_simd());
            return EX_OK;
        } else if (strcmp(a, "--batch") == 0) {
            fprintf(stderr, "pldrun: --batch LIST takes no other options (pldrun --batch LIST)\n");
            return EX_USAGE;
        } else if (strcmp(a, "--check") == 0) {
            o->check = 1;
        } else if (strcmp(a, "--print") == 0) {
            o->print = 1;
        } else if (strcmp(a, "--print-lowered") == 0) {
            o->print = 2;
        } else if (strcmp(a, "--signature") == 0) {
            o->print = 3;
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
        } else if (hang_option(a, val, &o->wait_timeout, &i)) {
            if (o->wait_timeout < 0)
                return EX_USAGE;
        } else if ((k = winstate_option(a, val, &o->winstate, &i)) != 0) {
            if (k < 0)
                return EX_USAGE;
        } else if (strcmp(a, "--dispatches") == 0) {
            if (!val || !parse_int(val, &o->dispatches) || o->dispatches < 1) {
                fprintf(stderr, "pldrun: --dispatches needs a positive integer\n");
                return EX_USAGE;
            }
            o->dispatches_given = 1;
            i++;
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            o->verbose = 1;
        } else if (strcmp(a, "--trace") == 0 || strcmp(a, "--log-dir") == 0 || strcmp(a, "--dump") == 0) {
            if (!val || !val[0]) {
                fprintf(stderr, "pldrun: %s needs a %s\n", a, strcmp(a, "--trace") == 0 ? "file name" : "directory");
                return EX_USAGE;
            }
            *(strcmp(a, "--trace") == 0 ? &o->trace : strcmp(a, "--log-dir") == 0 ? &o->log_dir : &o->dump_dir) = val;
            i++;
        } else if (strcmp(a, "--persistent-windows") == 0) {
            o->persistent = 1;
        } else if ((k = findings_option(a, val, &o->check_races, &o->poison, &o->findings)) != 0) {
            if (k < 0)
                return EX_USAGE;
            i += k - 1;
        } else if (strcmp(a, "--schedule-seed") == 0 || strcmp(a, "--schedule") == 0) {
            char *end = NULL;
            unsigned long long v = val && val[0] != '-' ? strtoull(val, &end, 10) : 0;
            if (strcmp(a, "--schedule") == 0 && val && strcmp(val, "random") == 0) {
                o->schedule = 2;
            } else if (strcmp(a, "--schedule-seed") == 0 && val && val[0] && end && !*end) {
                o->schedule = 1;
                o->seed = (uint64_t)v;
            } else {
                fprintf(stderr, "pldrun: %s\n", strcmp(a, "--schedule") == 0 ? "--schedule must be random"
                                                                            : "--schedule-seed needs a non-negative integer");
                return EX_USAGE;
            }
            i++;
        } else if ((k = sweep_option(argc, argv, &i, &o->sweep)) != 0 ||
                   (k = pysub_option(argc, argv, &i, &o->pysub)) != 0) {
            if (k < 0)
                return EX_USAGE;
        } else if (strcmp(a, "--reset-persistent-windows") == 0 || strcmp(a, "--collective-steps") == 0) {
            const int reset = strcmp(a, "--reset-persistent-windows") == 0;
            const int v = choice(a, val, reset ? "yes" : "merged", reset ? "no" : "chunk");
            if (v < 0)
                return EX_USAGE;
            if (reset)
                o->reset = !v;
            else
                o->chunk_steps = v;
            i++;
        } else if (strcmp(a, "--window-transport") == 0) {
            pld_win_transport_t tr;
            if (!val || pld_win_transport_from_name(val, &tr) != 0 || tr == PLD_WIN_LOCAL) {
                fprintf(stderr, "pldrun: --window-transport must be auto, shm, hybrid or rma\n");
                return EX_USAGE;
            }
            o->transport = tr;
            i++;
        } else if (strcmp(a, "--platform") == 0) {
            o->platform = val ? pld_npu_profile(val) : NULL;
            if (!o->platform) {
                fprintf(stderr, "pldrun: --platform must be one of %s\n", pld_npu_profile_names());
                return EX_USAGE;
            }
            i++;
        } else if (strcmp(a, "--backend") == 0 || strcmp(a, "--entry") == 0 || strcmp(a, "--backend-options") == 0 ||
                   strcmp(a, "--devices") == 0) {
            if (!val) {
                fprintf(stderr, "pldrun: %s needs a value\n", a);
                return EX_USAGE;
            }
            if (strcmp(a, "--backend") == 0)
                o->backend = val;
            else if (strcmp(a, "--backend-options") == 0)
                o->backend_options = val;
            else if (strcmp(a, "--devices") == 0)
                o->devices = val;
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
    if (sweep_conflict(&o->sweep, o->schedule))
        return EX_USAGE;
    int k = o->check || o->print ? 0 : winstate_check(&o->winstate, o->persistent, o->reset, o->poison, o->sweep.on);
    if (k)
        return k;
    /* --in x=a.npy,b.npy / DIR/: one file per dispatch (dispatch_io.c prints what is wrong) */
    return o->check || o->print || dispatch_io_resolve(o->in, o->nin, o->out, o->nout, &o->dispatches,
                                                       o->dispatches_given) == 0 ? -1 : EX_USAGE;
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

/* Parses and checks the program with the rank count P (0 = unknown).
 * Appends the diagnostics (and the --print text when print_to is set) to msg.
 * Returns an exit code; *out receives the program when the check passed and
 * out != NULL. */
static int front_end(const opts_t *o, int ranks, pld_buf_t *msg, pld_buf_t *print_to, pld_program_t **out)
{
    size_t len = 0;
    errno = 0;
    char *src = pldrun_read_file(o->path, &len);
    if (!src) {
        pld_buf_printf(msg, "pldrun: cannot read '%s': %s\n", o->path, errno ? strerror(errno) : "out of memory");
        return errno ? EX_IOERR : EX_SOFTWARE;
    }
    pld_check_opts_t co;
    memset(&co, 0, sizeof co);
    co.ranks = ranks;
    co.platform = o->platform;
    co.subworkers = pysub_enabled();
    pld_status_t st;
    pld_program_t *p = pld_check_text(o->path, src, len, &co, &st);
    pld_mem_free(src);
    if (!p) {
        pld_buf_printf(msg, "pldrun: out of memory reading '%s'\n", o->path);
        return EX_SOFTWARE;
    }
    if (print_to && p->parsed_ok && o->print == 1)
        pld_ast_print(p, print_to);
    /* the lowering passes (pld_lower.c): the run executes the lowered program */
    if (st == PLD_OK)
        st = pld_lower_program(p, &co, NULL);
    pld_diag_render(&p->diags, "", msg);
    if (print_to && st == PLD_OK && o->print == 2)
        pld_ast_print(p, print_to);
    const int sig_rc = print_to && st == PLD_OK && o->print == 3 ? signature_write(p, o->entry, print_to, msg) : EX_OK;
    int rc = st == PLD_OK ? sig_rc : st == PLD_E_NOMEM ? EX_SOFTWARE : EX_DATAERR;
    if (rc == EX_DATAERR) {
        int n = p->diags.n_errors;
        pld_buf_printf(msg, "%d error%s generated\n", n, n == 1 ? "" : "s");
    }
    if (rc == EX_SOFTWARE && !p->diags.n_errors)
        pld_buf_printf(msg, "pldrun: out of memory checking '%s'\n", o->path);
    if (rc == EX_OK && out)
        *out = p;
    else
        pld_program_destroy(p);
    return rc;
}

/* --check / --print: no MPI; rank 0 of a launcher prints. */
static int check_only(const opts_t *o)
{
    pld_buf_t msg, text;
    pld_buf_init(&msg);
    pld_buf_init(&text);
    int rc = front_end(o, o->ranks, &msg, o->print ? &text : NULL, NULL);
    if (env_rank() == 0) {
        fputs(pld_buf_str(&msg), stderr);
        fputs(pld_buf_str(&text), stdout);
    }
    pld_buf_fini(&msg);
    pld_buf_fini(&text);
    return rc;
}

static void print_ordered(const pld_buf_t *b, int rank, int size);

/* Prints msg, each line with the rank prefix when `prefix`; `ordered`: the
 * collective print_ordered (every rank calls it), else straight to stderr. */
static void print_msg(const pld_buf_t *msg, int prefix, int ordered, int rank, int size)
{
    pld_buf_t b;
    pld_buf_init(&b);
    if (prefix) {
        char pre[64];
        snprintf(pre, sizeof pre, "[rank %d/%d] ", rank, size);
        for (const char *l = msg->p; l < msg->p + msg->len;) {
            const char *nl = memchr(l, '\n', (size_t)(msg->p + msg->len - l));
            size_t n = nl ? (size_t)(nl - l) + 1 : (size_t)(msg->p + msg->len - l);
            pld_buf_printf(&b, "%s%.*s%s", pre, (int)n, l, nl ? "" : "\n");
            l += n;
        }
    } else if (msg->len) {
        pld_buf_putn(&b, msg->p, msg->len);
    }
    if (b.oom || !ordered) {
        /* out of memory in b: the message without prefixes beats none */
        const pld_buf_t *out = b.oom ? msg : &b;
        if (out->len)
            fwrite(out->p, 1, out->len, stderr);
        fflush(stderr);
        pld_buf_reset(&b);
    }
    if (ordered)
        print_ordered(&b, rank, size);
    pld_buf_fini(&b);
}

static uint64_t fnv1a(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h;
}

/* PLD_OPS_SEEN=FILE: appends one line with the names of the ops this rank
 * ran (tools/ops_tested.py: which supported ops the test suite runs). */
static void record_ops_seen(const pld_interp_t *it)
{
    const char *path = getenv("PLD_OPS_SEEN");
    if (!path || !*path)
        return;
    char line[16384];
    size_t k = pld_interp_ops_seen_line(it, line, sizeof line);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0)
        return; /* a debugging aid: the run's own result does not depend on it */
    ssize_t w = write(fd, line, k); /* one write: lines of concurrent runs do not interleave */
    (void)w;
    close(fd);
}

/* A step every rank takes between two parts of the run that might fail on
 * one rank only (a file that one host lacks, memory): each rank brings its
 * verdict (an exit code) and what it has to say (msg, may be empty). What
 * every rank said alike is printed once, by rank 0 (the static diagnostics of
 * one program); otherwise each rank prints its own message with its prefix.
 * Every rank returns the worst verdict. No allocation, one collective: it
 * works on a rank that is out of memory. When MPI cannot carry it, the rank
 * prints its own message and ends the job: nobody is left waiting.
 * `waiting` (static) is what a state line says while this rank waits. */
static int agree(int rc, pld_buf_t *msg, int rank, int size, const char *waiting)
{
    report_phase(waiting);
    int oom = msg->oom;
    if (rc != EX_OK && !msg->len && !oom)
        pld_buf_printf(msg, "pldrun: failed (exit status %d)\n", rc);
    if (oom) /* the message is cut short: say why, without the heap */
        fprintf(stderr, "[rank %d/%d] pldrun: out of memory (what this rank has to say may be incomplete)\n", rank,
                size);
    uint64_t h = fnv1a(msg->p ? msg->p : "", msg->len);
    /* max of rc, of h and of ~h: every hash equal iff max(h) == ~max(~h) */
    uint64_t mine[3] = {(uint64_t)rc, h, ~h}, all[3];
    if (MPI_Allreduce(mine, all, 3, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS) {
        print_msg(msg, 1, 0, rank, size);
        fprintf(stderr, "[rank %d/%d] pldrun: the ranks could not agree (MPI failed); ending the job\n", rank, size);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, rc != EX_OK ? rc : EX_SOFTWARE);
        pld_buf_reset(msg); /* MPI_Abort returned: MPI is gone; leave with an error */
        return rc != EX_OK ? rc : EX_SOFTWARE;
    }
    int same = all[1] == ~all[2];
    if (same) {
        if (rank == 0)
            print_msg(msg, 0, 0, rank, size);
    } else {
        print_msg(msg, size > 1, size > 1, rank, size); /* in rank order, through rank 0 */
    }
    pld_buf_reset(msg);
    return (int)all[0];
}

/* ---- MPI control plane for the interpreter ---- */

/* Collective: rank 0 receives every rank's `bytes` bytes, rank-major, in
 * recv. In chunks of at most 1 GiB (MPI counts are int), each received
 * straight into place: chunk k of rank r lands at r * bytes + k * 1 GiB
 * through a receive type whose extent is one rank's row. Nothing is
 * allocated, so no rank can fail alone between two chunks. */
static pld_status_t mpi_gather(void *ctx, const void *send, size_t bytes, void *recv)
{
    (void)ctx;
    const size_t chunk = (size_t)1 << 30;
    for (size_t done = 0; done < bytes; done += chunk) {
        size_t n = bytes - done < chunk ? bytes - done : chunk;
        MPI_Datatype piece = MPI_DATATYPE_NULL, row = MPI_DATATYPE_NULL;
        if (recv) {
            if (MPI_Type_contiguous((int)n, MPI_BYTE, &piece) != MPI_SUCCESS ||
                MPI_Type_create_resized(piece, 0, (MPI_Aint)bytes, &row) != MPI_SUCCESS ||
                MPI_Type_commit(&row) != MPI_SUCCESS) {
                /* the others are already in the gather: nobody may be left waiting */
                fprintf(stderr, "pldrun: MPI could not build the receive type of the output gather; ending the job\n");
                MPI_Abort(MPI_COMM_WORLD, EX_SOFTWARE);
                return PLD_E_MPI; /* MPI_Abort returned: MPI is gone */
            }
        }
        int rc = MPI_Gather((const char *)send + done, (int)n, MPI_BYTE, recv ? (char *)recv + done : NULL, 1, row, 0,
                            MPI_COMM_WORLD);
        if (row != MPI_DATATYPE_NULL && MPI_Type_free(&row) != MPI_SUCCESS)
            rc = MPI_ERR_OTHER;
        if (piece != MPI_DATATYPE_NULL && MPI_Type_free(&piece) != MPI_SUCCESS)
            rc = MPI_ERR_OTHER;
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

/* ---- the collective steps a backend plugin may take (pld_be_coll_t) ---- */
static int be_allgather(void *ctx, const void *send, void *recv, size_t bytes)
{
    (void)ctx;
    if (bytes > (size_t)INT32_MAX)
        return 1;
    return MPI_Allgather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, MPI_COMM_WORLD) != MPI_SUCCESS;
}

static int be_bcast(void *ctx, void *buf, size_t bytes, int root)
{
    (void)ctx;
    if (bytes > (size_t)INT32_MAX)
        return 1;
    return MPI_Bcast(buf, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD) != MPI_SUCCESS;
}

static int be_barrier(void *ctx)
{
    (void)ctx;
    return MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS;
}

/* Opens the kernel backend of o on this rank: a built-in one by name, or a
 * plugin file (every rank loads it; a rank that cannot, fails them all). */
/* The device of local rank `local` in a --devices list; -1 with a message
 * when the list is malformed or too short. */
static int device_of(const char *list, int local, char *err, size_t errn)
{
    const char *p = list;
    for (int i = 0;; i++) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v > INT32_MAX || (*end && *end != ',')) {
            snprintf(err, errn, "--devices '%s': expected device ids separated by commas (\"0,1,2,3\")", list);
            return -1;
        }
        if (i == local)
            return (int)v;
        if (!*end) {
            snprintf(err, errn, "--devices '%s' names %d device%s, but this host runs local rank %d", list, i + 1,
                     i ? "s" : "", local);
            return -1;
        }
        p = end + 1;
    }
}

static pld_status_t open_backend(const opts_t *o, int rank, int size, pld_hw_t **hw, char *err, size_t errn)
{
    const int native = strcmp(o->backend, "native") == 0, ascend = strcmp(o->backend, "ascend") == 0;
    if (!native && !ascend && !pld_hw_is_plugin_path(o->backend)) {
        pld_hw_registry_t reg;
        pld_hw_registry_init(&reg);
        pld_hw_register(&reg, pld_interp_sim_backend());
        if (strcmp(o->backend, "sim") != 0) { /* native and ascend are opened below, not from the registry */
            snprintf(err, errn, "unknown kernel backend '%s' (available: sim, native, ascend, or a plugin PATH.so)%s",
                     o->backend, getenv("PLDRUN_BACKEND") && !strcmp(getenv("PLDRUN_BACKEND"), o->backend)
                                     ? " (named by $PLDRUN_BACKEND)" : "");
            return PLD_E_HW;
        }
        return pld_hw_open(&reg, o->backend, o->backend_options, rank, size, hw, err, errn);
    }
    pld_be_init_t init;
    memset(&init, 0, sizeof init);
    init.abi = PLD_BE_ABI;
    init.struct_size = sizeof init;
    init.rank = rank;
    init.nranks = size;
    init.local_rank = rank;
    init.local_size = size;
    MPI_Comm node;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        if (MPI_Comm_rank(node, &init.local_rank) != MPI_SUCCESS || MPI_Comm_size(node, &init.local_size) != MPI_SUCCESS)
            init.local_rank = rank, init.local_size = size;
        if (MPI_Comm_free(&node) != MPI_SUCCESS) {
            snprintf(err, errn, "MPI could not free the node communicator");
            return PLD_E_MPI;
        }
    }
    init.device_id = -1;
    if (o->devices) {
        /* every rank learns whether every rank has its device before anyone opens the backend */
        int bad = (init.device_id = device_of(o->devices, init.local_rank, err, errn)) < 0, any = bad;
        if (MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
            any = 1;
        if (any) {
            if (!bad)
                snprintf(err, errn, "--devices '%s' does not name a device for every rank (see the other ranks)",
                         o->devices);
            return PLD_E_USAGE;
        }
    }
    init.options = o->backend_options ? o->backend_options : "";
    init.coll.allgather = be_allgather;
    init.coll.bcast = be_bcast;
    init.coll.barrier = be_barrier;
    init.host = pld_interp_be_host();
    if (native)
        return pld_hw_open_table(pld_native_backend(), &init, hw, err, errn);
    if (ascend) {
        char path[4096];
        if (pld_hw_ascend_path(path, sizeof path) != 0) {
            snprintf(err, errn, "backend 'ascend': cannot find pldrun's own directory (set PLD_ASCEND_PLUGIN to "
                                "the path of pld_backend_ascend.so)");
            return PLD_E_HW;
        }
        return pld_hw_open_plugin(path, &init, hw, err, errn);
    }
    return pld_hw_open_plugin(o->backend, &init, hw, err, errn);
}

static int is_generator(const char *v)
{
    return strcmp(v, "arange") == 0 || strcmp(v, "zeros") == 0 || strcmp(v, "ones") == 0 || strncmp(v, "random:", 7) == 0;
}

/* Rank 0 prints every rank's text (b, may be empty) in rank order. The
 * ranks' stderr reaches the terminal through mpirun, which forwards each
 * rank's pipe in chunks of its own size: two ranks writing at once can glue
 * one rank's line onto the middle of another's. Collective; when MPI fails,
 * each rank prints its own text (interleaved beats lost). */
static void print_ordered(const pld_buf_t *b, int rank, int size)
{
    enum { PIECE = 65536 }; /* sent and received in pieces: no allocation on rank 0 per rank */
    unsigned long long len = b->len, *lens = NULL;
    int ok = rank != 0 || (lens = calloc((size_t)size, sizeof *lens)) != NULL;
    if (MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS || !ok ||
        MPI_Gather(&len, 1, MPI_UNSIGNED_LONG_LONG, lens, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD) != MPI_SUCCESS) {
        free(lens); /* rank 0 out of memory, or MPI failed: everyone prints their own */
        if (b->len)
            fwrite(b->p, 1, b->len, stderr);
        fflush(stderr);
        return;
    }
    if (rank != 0) {
        for (size_t done = 0; done < b->len; done += PIECE) {
            size_t n = b->len - done < PIECE ? b->len - done : PIECE;
            if (MPI_Send(b->p + done, (int)n, MPI_CHAR, 0, 7, MPI_COMM_WORLD) != MPI_SUCCESS) {
                fwrite(b->p + done, 1, b->len - done, stderr); /* what rank 0 did not get */
                break;
            }
        }
        fflush(stderr);
        return;
    }
    if (b->len)
        fwrite(b->p, 1, b->len, stderr);
    static char piece[PIECE];
    for (int r = 1; r < size; r++)
        for (unsigned long long done = 0; done < lens[r];) {
            int n = (int)(lens[r] - done < PIECE ? lens[r] - done : PIECE);
            if (MPI_Recv(piece, n, MPI_CHAR, r, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
                fprintf(stderr, "pldrun: MPI failed while collecting rank %d's diagnostics\n", r);
                break;
            }
            fwrite(piece, 1, (size_t)n, stderr);
            done += (unsigned long long)n;
        }
    fflush(stderr);
    free(lens);
}

/* Renders the run's diagnostics with the rank prefix into out: those after
 * `checked` (the last static diagnostic, NULL = none), because static
 * diagnostics were printed once, by rank 0, in front_end. Out of memory: the
 * bare messages go straight to stderr. */
static void render_rank_diags(const pld_program_t *p, const pld_diag_t *checked, int rank, int size, pld_buf_t *b)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "[rank %d/%d] ", rank, size);
    for (const pld_diag_t *d = checked ? checked->next : p->diags.head; d; d = d->next)
        pld_diag_render_one(&p->diags, d, prefix, b);
    if (p->diags.oom)
        pld_buf_printf(b, "%serror: out of memory while recording diagnostics\n", prefix);
    if (b->oom) {
        /* no memory to render: the bare messages, straight to stderr */
        for (const pld_diag_t *d = checked ? checked->next : p->diags.head; d; d = d->next)
            fprintf(stderr, "%s%s:%d:%d: %s: %s\n", prefix, p->diags.file ? p->diags.file : "", (int)d->span.line,
                    (int)d->span.col, d->sev == PLD_SEV_ERROR ? "error" : d->sev == PLD_SEV_WARNING ? "warning" : "note",
                    d->msg ? d->msg : "");
        fprintf(stderr, "%serror: out of memory while %s diagnostics\n", prefix,
                p->diags.oom ? "recording" : "rendering");
        fflush(stderr);
        pld_buf_reset(b);
    }
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

/* Binds the entry's inputs and zeroes its outputs; checks the --out names
 * and (rank 0, which writes them) that the files can be written. Messages go
 * to msg. Returns an exit code. */
static int bind_inputs(const opts_t *o, pld_interp_t *it, int rank, pld_buf_t *msg)
{
    char err[1024] = "";
    int rc = EX_OK;
    for (int k = 0; k < o->nin && rc == EX_OK; k++) {
        int i = pld_interp_param_index(it, o->in[k].name);
        if (i < 0) {
            pld_buf_printf(msg, "pldrun: the entry function has no parameter '%s' (parameters:", o->in[k].name);
            for (int j = 0; j < pld_interp_nparams(it); j++)
                pld_buf_printf(msg, " %s", pld_interp_param(it, j)->name);
            pld_buf_printf(msg, ")\n");
            return EX_USAGE;
        }
        pld_status_t st;
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
            pld_buf_printf(msg, "pldrun: --in %s: %s\n", o->in[k].name, err[0] ? err : pld_status_name(st));
            if (rc == EX_OK)
                rc = st == PLD_E_NOMEM ? EX_SOFTWARE : EX_USAGE;
        }
    }
    /* Out parameters start zeroed; a missing input is a usage error */
    for (int i = 0; rc == EX_OK && i < pld_interp_nparams(it); i++) {
        if (pld_interp_is_bound(it, i))
            continue;
        const pld_param_t *pp = pld_interp_param(it, i);
        if (pp->type && pp->type->dir == PLD_DIR_OUT) {
            pld_status_t st = pld_interp_bind_generated(it, i, "zeros", err, sizeof err);
            if (st != PLD_OK) {
                pld_buf_printf(msg, "pldrun: output '%s': %s\n", pp->name, err[0] ? err : pld_status_name(st));
                rc = st == PLD_E_NOMEM ? EX_SOFTWARE : EX_USAGE;
            }
            continue;
        }
        char desc[256];
        pld_interp_param_desc(it, i, desc, sizeof desc);
        pld_buf_printf(msg, "pldrun: missing input for parameter '%s' (expected %s): pass --in %s=FILE.npy or "
                            "--in %s=arange|zeros|ones|random:SEED\n",
                       pp->name, desc, pp->name, pp->name);
        rc = EX_USAGE;
    }
    for (int k = 0; rc == EX_OK && k < o->nout; k++)
        if (pld_interp_param_index(it, o->out[k].name) < 0) {
            pld_buf_printf(msg, "pldrun: --out %s: the entry function has no such parameter\n", o->out[k].name);
            rc = EX_USAGE;
        } else { /* a pl.Tensor (In) parameter: the program may write it, as on the device */
            pld_interp_want_output(it, pld_interp_param_index(it, o->out[k].name));
        }
    /* Rank 0 writes the outputs: it checks now that it can, so that a long run
     * does not end with "cannot open for writing" */
    for (int k = 0; rc == EX_OK && rank == 0 && k < o->nout; k++)
        if (pld_npy_check_writable(o->out[k].value, err, sizeof err) != PLD_OK) {
            pld_buf_printf(msg, "pldrun: --out %s: %s\n", o->out[k].name, err);
            rc = EX_IOERR;
        }
    return rc;
}

/* Rank 0, after a successful run: writes the --out files, or prints a summary
 * of every output when there are none. */
static int write_outputs(const opts_t *o, pld_interp_t *it)
{
    char err[1024];
    int rc = EX_OK;
    int want_summary = o->nout == 0;
    for (int i = 0; i < pld_interp_nparams(it); i++) {
        const pld_param_t *pp = pld_interp_param(it, i);
        if (!pld_interp_is_output(it, i))
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
        if (want_summary && pp->type->dir != PLD_DIR_IN)
            summarize(pp->name, dt, r, shape, data);
    }
    return rc;
}

static int run(opts_t *o, pld_win_sys_t *win, observe_t *obs, int rank, int size)
{
    double t0 = MPI_Wtime();
    pld_buf_t msg;
    pld_buf_init(&msg);
    pld_program_t *p = NULL;
    pld_hw_t *hw = NULL;
    pld_interp_t *it = NULL;
    dump_t *dump = NULL;
    char err[1024] = "";

    /* 1. the program, the backend, the interpreter: rank-local */
    report_phase("reading and checking the program");
    int rc = front_end(o, size, &msg, NULL, &p);
    if (rc == EX_OK && dump_open(o->dump_dir, rank, &dump, &msg) != 0)
        rc = EX_IOERR;
    /* the kernel backend: built in, or a plugin (loaded by every rank
     * together: its loading takes collective steps) */
    if (pld_hw_is_plugin_path(o->backend))
        rc = agree(rc, &msg, rank, size, "waiting for every rank to read and check the program");
    if (rc == EX_OK) {
        pld_status_t st = open_backend(o, rank, size, &hw, err, sizeof err);
        if (st != PLD_OK) {
            pld_buf_printf(&msg, "pldrun: %s\n", err);
            rc = st == PLD_E_NOMEM ? EX_SOFTWARE : st == PLD_E_USAGE ? EX_USAGE : EX_UNAVAILABLE;
        }
    }
    if (rc == EX_OK) {
        pld_comm_t comm = {NULL, rank, size, mpi_gather, mpi_max};
        pld_interp_opts_t io;
        memset(&io, 0, sizeof io);
        io.entry = o->entry;
        io.win = win;
        io.timeout_s = o->timeout;
        io.wait_timeout_s = o->wait_timeout;
        io.platform = o->platform;
        io.dispatches = o->dispatches;
        io.persistent_windows = o->persistent;
        io.reset_windows = o->reset;
        io.load_windows = o->winstate.load;
        io.save_windows = o->winstate.save;
        io.chunk_steps = o->chunk_steps;
        io.poison = o->poison;
        io.check_races = o->check_races;
        io.schedule = o->schedule != 0;
        io.schedule_seed = o->seed;
        io.finding = findings_record;
        io.finding_ctx = (void *)o->path;
        io.hw = hw;
        io.trace = observe_recorder(obs);
        io.dump = dump_hook(dump);
        io.dispatch_io = dispatch_io_hook();
        io.subworkers = pysub_hooks(&o->pysub);
        pld_status_t st = pld_interp_create(p, &io, &comm, &it, err, sizeof err);
        if (st != PLD_OK) {
            pld_buf_printf(&msg, "pldrun: %s\n", err[0] ? err : pld_status_name(st));
            rc = st == PLD_E_USAGE ? EX_USAGE : st == PLD_E_HW ? EX_UNAVAILABLE : EX_SOFTWARE;
        }
    }
    const pld_diag_t *checked = p ? p->diags.tail : NULL; /* printed by agree */
    rc = agree(rc, &msg, rank, size, "waiting for every rank to read and check the program");

    /* 2. the inputs: a file may be missing on one host only */
    if (rc == EX_OK) {
        report_phase("reading the inputs");
        rc = agree(bind_inputs(o, it, rank, &msg), &msg, rank, size, "waiting for every rank to read its inputs");
    }

    /* 3. the run: runtime errors are reported by the rank they happen on */
    if (rc == EX_OK) {
        report_phase("running");
        report_where(pld_interp_where(it));
        pld_status_t st = pld_interp_run(it);
        sweep_capture(&o->sweep, it, win, st == PLD_OK, rank);
        report_where(NULL);
        report_phase("after the run");
        /* a rank that did not stop (hang 2) takes no part in a collective:
         * then each rank prints its own, and the job is ended below */
        int stuck = pld_interp_hang(it) == 2;
        pld_buf_t diags;
        pld_buf_init(&diags);
        render_rank_diags(p, checked, rank, size, &diags);
        if (st != PLD_OK && st != PLD_E_PEER && !p->diags.oom && (checked ? !checked->next : !p->diags.head))
            pld_buf_printf(&diags, "[rank %d/%d] pldrun: the run failed: %s\n", rank, size, pld_status_name(st));
        if (stuck || size == 1) {
            if (diags.len)
                fwrite(diags.p, 1, diags.len, stderr);
            fflush(stderr);
        } else {
            print_ordered(&diags, rank, size);
        }
        pld_buf_fini(&diags);
        rc = st == PLD_OK ? EX_OK : st == PLD_E_USAGE ? EX_USAGE : st == PLD_E_IO ? EX_IOERR : EX_SOFTWARE;
        /* the timeline, also of a run that hung or failed; a rank that did
         * not stop (hang 2) is waited for a short while only */
        int trace_rc = EX_OK;
        if (observe_write_trace(obs, stuck ? 2.0 : 30.0, err, sizeof err) != 0) {
            fprintf(stderr, "[rank %d/%d] pldrun: %s\n", rank, size, err);
            trace_rc = EX_IOERR;
        }
        record_ops_seen(it);
        pld_interp_stats_t stats;
        pld_interp_stats(it, &stats);
        uint64_t mine[8] = {stats.tasks, stats.bytes_moved, stats.dispatches, stats.ops, stats.puts_held,
                            stats.preemptions, stats.races, stats.kernel_ops},
                 tot[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        unsigned transports = 0;
        if (!stuck && (MPI_Reduce(mine, tot, 8, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD) != MPI_SUCCESS ||
                       MPI_Reduce(&stats.transports, &transports, 1, MPI_UNSIGNED, MPI_BOR, 0, MPI_COMM_WORLD) !=
                           MPI_SUCCESS)) {
            fprintf(stderr, "[rank %d/%d] pldrun: MPI failed while gathering the run's statistics\n", rank, size);
            if (rc == EX_OK)
                rc = EX_SOFTWARE;
        }
        if (st == PLD_OK && rank == 0 && !sweep_quiet(&o->sweep)) {
            report_phase("writing the outputs");
            rc = write_outputs(o, it);
            char wins[64] = "";
            for (int t = PLD_WIN_RMA; t <= PLD_WIN_HYBRID; t++)
                if (transports & (1u << t))
                    snprintf(wins + strlen(wins), sizeof wins - strlen(wins), "%s%s", wins[0] ? "+" : ", windows over ",
                             pld_win_transport_name((pld_win_transport_t)t));
            /* a backend that compiles kernels: the ops evaluated inside them apart (0 once all is compiled) */
            char kops[64] = "";
            if (hw && (pld_hw_caps(hw) & PLD_BE_CAP_C_KERNELS))
                snprintf(kops, sizeof kops, " (%llu in compiled kernels)", (unsigned long long)tot[7]);
            printf("pldrun: %d rank%s, %llu dispatch%s, %llu kernel task%s, %llu bytes moved, %llu interpreted ops%s%s, "
                   "%.3f s\n",
                   size, size == 1 ? "" : "s", (unsigned long long)tot[2], tot[2] == 1 ? "" : "es",
                   (unsigned long long)tot[0], tot[0] == 1 ? "" : "s", (unsigned long long)tot[1],
                   (unsigned long long)tot[3], kops, wins, MPI_Wtime() - t0);
            if (o->schedule)
                printf("pldrun: schedule seed %llu: %llu put%s held back, %llu preemption%s\n",
                       (unsigned long long)o->seed, (unsigned long long)tot[4], tot[4] == 1 ? "" : "s",
                       (unsigned long long)tot[5], tot[5] == 1 ? "" : "s");
        }
        if (rc == EX_OK)
            rc = trace_rc;
        if (o->check_races && st == PLD_OK && rank == 0 && !sweep_quiet(&o->sweep))
            fprintf(stderr, "pldrun: --check-races: %llu data race%s reported\n", (unsigned long long)tot[6],
                    tot[6] == 1 ? "" : "s");
        rc = stuck ? (findings_drop(), rc) : findings_finish(&o->findings, rc, rank, size);
        if (stuck) {
            /* a rank neither finished nor stopped: nothing else will end the job */
            fflush(stdout);
            fflush(stderr);
            if (rank == 0)
                fprintf(stderr, "pldrun: a rank did not stop after the run was aborted; killing the job\n");
            sweep_abort_note(&o->sweep, rank, size);
            MPI_Abort(MPI_COMM_WORLD, EX_SOFTWARE);
        }
    }
    report_phase("finishing");
    pld_interp_destroy(it);
    pld_hw_close(hw);
    pld_program_destroy(p);
    pld_buf_fini(&msg);
    dump_close(dump);
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
           "leak:__vasprintf_internal\n" /* SubWorkers' Python (pysub.c), numpy, torch: up until exit */
           "leak:libpython3\n" "leak:/usr/lib/python3/\n" "leak:/usr/lib/python3.\n" "leak:libtorch\n" "leak:libc10\n";
}
#else
#define PLD_LEAK_CHECK() ((void)0)
#define PLD_LEAK_IGNORE_BEGIN() ((void)0)
#define PLD_LEAK_IGNORE_END() ((void)0)
#endif

#ifdef PLD_TESTING
/* pldrun_testing (tests/): PLD_TEST_FAIL_ALLOC=N makes the (N+1)th heap
 * allocation after MPI_Init and every later one fail, on the ranks whose
 * environment has it (mpirun's MPMD form sets it on one rank only);
 * PLD_TEST_CLOCK_SKEW_NS=N moves the trace clock of those ranks. */
static void testing_hooks(void)
{
    const char *n = getenv("PLD_TEST_FAIL_ALLOC");
    if (n && *n)
        pld_mem_fail_after(atol(n));
    /* PLD_TEST_CLOCK_SKEW_NS=N: this rank's clock runs N ns ahead (--trace
     * must still put every rank on one clock) */
    const char *skew = getenv("PLD_TEST_CLOCK_SKEW_NS");
    if (skew && *skew)
        pld_trace_test_skew(atoll(skew));
}

/* PLD_TEST_SPLIT_HOSTS=K: the window layer treats world rank r as running on
 * host r % K (pld_win_test_split_hosts); Kb: on host r / ceil(P / K), the
 * hosts filled in order as mpirun fills them. So one node exercises the
 * transport between hosts (hybrid's messages and RMA) and the collectives'
 * schedules for either placement. Every rank must have the same value. */
static void testing_win_hooks(pld_win_sys_t *win)
{
    const char *k = getenv("PLD_TEST_SPLIT_HOSTS");
    if (k && *k)
        pld_win_test_split_hosts(win, atoi(k), strchr(k, 'b') != NULL);
}
#else
static void testing_hooks(void) {}
static void testing_win_hooks(pld_win_sys_t *win) { (void)win; }
#endif

/* One run of o's program on MPI_COMM_WORLD, after MPI_Init: the window
 * system, the recorders and their clocks, the --schedule random seed, the
 * run, the teardown. Every piece of state it makes is made here and freed
 * here, so a --batch entry starts as fresh as a process. Returns this rank's
 * exit code; *worst receives the worst over the ranks (every rank takes part
 * in the one MPI_Allreduce and gets the same value). leak_check: check for
 * leaks before that step (a single run; a batch checks once, at its end).
 * The errors that leave ranks inside a collective (the window layer's init,
 * the clock exchange, a rank that did not stop) end the job. */
static int run_job(opts_t *o, int rank, int size, int leak_check, int *worst)
{
    if (o->sweep.on && !o->sweep.running) { /* --schedule-seeds: run_job once per seed (sweep.c) */
        int rc = sweep_run(&o->sweep, &o->schedule, &o->seed, o->check_races, run_job, o, rank, size, worst);
        return leak_check ? (pld_mem_fail_after(-1), PLD_LEAK_CHECK(), rc) : rc; /* after every seed's run */
    }
    report_phase("setting up the windows");
    pld_win_sys_t *win = NULL;
    char err[512];
    if (pld_win_sys_init(o->transport, &win, err, sizeof err) != PLD_OK) {
        /* collective and partly done: the others may be waiting inside it */
        fprintf(stderr, "[rank %d/%d] pldrun: window layer: %s; ending the job\n", rank, size, err);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, EX_UNAVAILABLE);
        *worst = EX_UNAVAILABLE;
        return EX_UNAVAILABLE;
    }
    testing_win_hooks(win);
    /* --trace, -v, --log-dir: every rank's recorder, then one clock */
    observe_t *obs = NULL;
    int bad = observe_open(o->trace, o->verbose, o->log_dir, o->path, rank, size, &obs, err, sizeof err) != 0,
        anybad = bad;
    if (bad)
        fprintf(stderr, "[rank %d/%d] pldrun: %s\n", rank, size, err);
    if (MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        anybad = 1;
    if (!anybad && observe_sync_clocks(obs) != 0) {
        /* the others may be inside the exchange */
        fprintf(stderr, "[rank %d/%d] pldrun: the ranks could not compare their clocks for --trace; ending the job\n",
                rank, size);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, EX_SOFTWARE);
    }
    if (o->schedule == 2) {
        /* --schedule random: rank 0 draws the seed, every rank uses it */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t seed = ((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid()) % 1000000000u;
        if (MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
            anybad = 1;
        o->seed = seed;
        if (rank == 0)
            fprintf(stderr, "pldrun: schedule seed %llu (replay with --schedule-seed %llu)\n",
                    (unsigned long long)seed, (unsigned long long)seed);
    }
    int rc = anybad ? EX_IOERR : run(o, win, obs, rank, size); /* a rank that cannot log or trace: nobody runs */
    observe_close(obs);
    report_phase("finishing");
    if (pld_win_sys_fini_checked(win, err, sizeof err) != PLD_OK) {
        /* an MPI failure during the run (recorded, not yet reported) or in teardown */
        fprintf(stderr, "[rank %d/%d] pldrun: window layer: %s\n", rank, size, err);
        if (rc == EX_OK)
            rc = EX_SOFTWARE;
    }
    if (leak_check) {
        pld_mem_fail_after(-1); /* what MPI needs to finish is not under test */
        PLD_LEAK_CHECK();
    }
    /* every rank leaves with the worst exit code */
    *worst = rc;
    if (MPI_Allreduce(&rc, worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS) {
        fprintf(stderr, "[rank %d/%d] pldrun: MPI failed while the ranks agreed on the exit status\n", rank, size);
        *worst = rc ? rc : EX_SOFTWARE;
    }
    if (o->schedule && *worst != EX_OK && rank == 0)
        fprintf(stderr, "pldrun: this run used schedule seed %llu: replay it with --schedule-seed %llu\n",
                (unsigned long long)o->seed, (unsigned long long)o->seed);
    return rc;
}

/* ---- --batch LIST: many runs in one MPI job ----
 *
 * LIST: one entry a line; empty lines and lines that start with '#' are
 * skipped. An entry is TAB-separated: CWD, STDOUT_FILE, STDERR_FILE, then the
 * arguments of one pldrun command line (options and program, in any order).
 * Every rank reads LIST. For each entry in turn every rank enters CWD, sends
 * its fd 1 and fd 2 to the two files (opened for appending, never truncated:
 * the caller creates them; all ranks append, as mpirun merges their lines),
 * parses the arguments and runs them as run_job does for one process, with
 * fresh windows, recorders and interpreter; then the fds and the directory
 * are restored and rank 0 appends "INDEX EXIT\n" (INDEX from 0) to
 * LIST.status, which it truncated before the first entry: a caller whose job
 * died can tell which entries finished, and reruns the others alone. The
 * batch exits with the worst entry's status; what ends a single run's job
 * (MPI_Abort) ends the batch. The leak check runs once, after the last
 * entry. */

/* The whole --batch job (after MPI_Init and the handlers). Returns the
 * process's exit code. */
static int batch(const char *list, int rank, int size)
{
    report_phase("reading the --batch list");
    pld_buf_t msg;
    pld_buf_init(&msg);
    batch_list_t l;
    int rc = batch_list_read(list, &l, &msg);
    /* the originals of fd 1 and 2, the start directory, LIST.status (rank 0) */
    int saved_out = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3), saved_err = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
    int start_dir = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), status = -1;
    if (rc == EX_OK && (saved_out < 0 || saved_err < 0 || start_dir < 0)) {
        pld_buf_printf(&msg, "pldrun: --batch: cannot keep the standard output, error or directory: %s\n",
                       strerror(errno));
        rc = EX_IOERR;
    }
    char spath[4096];
    if (rc == EX_OK && rank == 0) {
        if (snprintf(spath, sizeof spath, "%s.status", list) >= (int)sizeof spath)
            errno = ENAMETOOLONG;
        else
            status = open(spath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (status < 0) {
            pld_buf_printf(&msg, "pldrun: --batch: cannot write '%s.status': %s\n", list, strerror(errno));
            rc = EX_IOERR;
        }
    }
    rc = agree(rc, &msg, rank, size, "waiting for every rank to read the --batch list");
    int batch_rc = rc;
    for (int i = 0; rc == EX_OK && i < l.n; i++) {
        const batch_entry_t *e = &l.entries[i];
        report_phase("starting a --batch entry");
        char err[4096 + 256] = "";
        int setup = EX_OK;
        fflush(stdout);
        fflush(stderr);
        if (chdir(e->field[0]) != 0) {
            snprintf(err, sizeof err, "cannot enter the directory '%s': %s", e->field[0], strerror(errno));
            setup = EX_IOERR;
        } else if (batch_redirect(e, err, sizeof err) != 0) {
            setup = EX_IOERR;
        }
        if (setup != EX_OK) /* on the batch's own stderr */
            fprintf(stderr, "[rank %d/%d] pldrun: %s:%d: %s\n", rank, size, list, e->line, err);
        /* the entry's arguments, as on a command line: argv[0] is never read */
        opts_t o;
        char *argv[MAX_BINDINGS * 4 + 64];
        const int argc = e->nfield - 2;
        if (setup == EX_OK && argc > (int)(sizeof argv / sizeof argv[0])) {
            fprintf(stderr, "pldrun: too many arguments (limit %d)\n", (int)(sizeof argv / sizeof argv[0]) - 1);
            setup = EX_USAGE;
        }
        if (setup == EX_OK) {
            static char argv0[] = "pldrun";
            argv[0] = argv0;
            for (int k = 1; k < argc; k++)
                argv[k] = e->field[2 + k];
            int prc = parse_args(argc, argv, &o, 1);
            if (prc >= 0)
                setup = prc;
        }
        /* a directory or file missing on one host: nobody runs the entry */
        int anysetup = setup;
        if (MPI_Allreduce(&setup, &anysetup, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS) {
            fprintf(stderr, "[rank %d/%d] pldrun: the ranks could not agree (MPI failed); ending the job\n", rank,
                    size);
            fflush(stderr);
            MPI_Abort(MPI_COMM_WORLD, EX_SOFTWARE);
        }
        int erc = anysetup;
        if (anysetup != EX_OK) {
            if (setup == EX_OK)
                fprintf(stderr, "[rank %d/%d] pldrun: another rank could not start this --batch entry (see its "
                                "message)\n",
                        rank, size);
        } else {
            run_job(&o, rank, size, 0, &erc);
        }
        report_phase("between --batch entries");
        dispatch_io_reset(); /* also when the entry did not run */
        fflush(stdout);
        fflush(stderr);
        if (dup2(saved_out, STDOUT_FILENO) < 0 || dup2(saved_err, STDERR_FILENO) < 0) {
            dprintf(saved_err, "[rank %d/%d] pldrun: %s:%d: cannot restore the output: %s; ending the job\n", rank,
                    size, list, e->line, strerror(errno));
            MPI_Abort(MPI_COMM_WORLD, EX_IOERR);
        }
        clearerr(stdout); /* an entry's write error is its own */
        clearerr(stderr);
        if (fchdir(start_dir) != 0) {
            fprintf(stderr, "[rank %d/%d] pldrun: %s:%d: cannot return to the start directory: %s; ending the job\n",
                    rank, size, list, e->line, strerror(errno));
            fflush(stderr);
            MPI_Abort(MPI_COMM_WORLD, EX_IOERR);
        }
        if (status >= 0) {
            char st[64];
            int n = snprintf(st, sizeof st, "%d %d\n", i, erc);
            if (write(status, st, (size_t)n) != n) /* one write: whole lines only */
                fprintf(stderr, "pldrun: --batch: cannot write '%s': %s\n", spath, strerror(errno));
        }
        if (erc > batch_rc)
            batch_rc = erc;
    }
    if (status >= 0)
        close(status);
    if (saved_out >= 0)
        close(saved_out);
    if (saved_err >= 0)
        close(saved_err);
    if (start_dir >= 0)
        close(start_dir);
    batch_list_fini(&l);
    pld_buf_fini(&msg);
    report_phase("finishing");
    return batch_rc;
}

int main(int argc, char **argv)
{
    opts_t o;
    const char *batch_list = NULL;
    int rc;
    if (argc >= 2 && strcmp(argv[1], "--batch") == 0) {
        /* pldrun --batch LIST: nothing else on the command line */
        if (argc != 3 || !argv[2][0]) {
            fputs(argc < 3 || !argv[2][0] ? "pldrun: --batch needs a LIST file\n"
                                          : "pldrun: --batch LIST takes no other options (pldrun --batch LIST)\n",
                  stderr);
            return EX_USAGE;
        }
        batch_list = argv[2];
    } else {
        rc = parse_args(argc, argv, &o, 0);
        if (rc >= 0)
            return rc;
        if (o.check || o.print)
            return check_only(&o);
    }
    /* Open MPI loads and unloads plugins in MPI_Init; what those lose has no
     * stack to suppress by, so this thread's allocations in there are not leaks */
    PLD_LEAK_IGNORE_BEGIN();
    int mpi_ok = MPI_Init(&argc, &argv) == MPI_SUCCESS;
    PLD_LEAK_IGNORE_END();
    if (!mpi_ok) {
        fprintf(stderr, "[rank %d] pldrun: MPI_Init failed\n", env_rank());
        return EX_UNAVAILABLE;
    }
    int rank = env_rank(), size = 1;
    if (MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN) != MPI_SUCCESS ||
        MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS || MPI_Comm_size(MPI_COMM_WORLD, &size) != MPI_SUCCESS) {
        fprintf(stderr, "[rank %d] pldrun: MPI does not answer (rank and size of MPI_COMM_WORLD); ending the job\n",
                rank);
        MPI_Abort(MPI_COMM_WORLD, EX_UNAVAILABLE);
        return EX_UNAVAILABLE;
    }
    report_install(rank, size);
    testing_hooks();
    int worst;
    if (batch_list) {
        /* every entry agreed on its status: the batch's is the same on every rank */
        rc = worst = batch(batch_list, rank, size);
        pld_mem_fail_after(-1);
        PLD_LEAK_CHECK(); /* once, after every entry: a leak in any entry fails the batch */
    } else {
        rc = run_job(&o, rank, size, 1, &worst);
    }
    if (MPI_Finalize() != MPI_SUCCESS) {
        fprintf(stderr, "[rank %d/%d] pldrun: MPI_Finalize failed\n", rank, size);
        if (!worst)
            worst = EX_SOFTWARE;
    }
    return rc ? rc : worst;
}
