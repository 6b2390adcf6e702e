/* pldrun - command-line tool: arguments, MPI_Init/Finalize, rendering of
 * diagnostics and exit codes. Library code never prints; this file does.
 *
 * Exit codes: 0 ok, 64 usage, 65 program error (parse/check), 69 backend or
 * feature unavailable, 70 runtime error, 74 I/O error. */
#include "pld_check.h"
#include "pld_mem.h"
#include "pld_parse.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EX_OK = 0, EX_USAGE = 64, EX_DATAERR = 65, EX_UNAVAILABLE = 69, EX_SOFTWARE = 70, EX_IOERR = 74 };

typedef struct opts {
    const char *path;
    int check;
    int ranks;
    int print;
    const char *platform;
    const char *backend;
    const char *entry;
    int timeout;
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
          "  --timeout SECONDS   hang watchdog (default 30)\n"
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
    o->platform = "a2a3";
    o->backend = "sim";
    o->timeout = 30;
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
        } else if (strcmp(a, "--platform") == 0) {
            if (!val || (strcmp(val, "a2a3") != 0 && strcmp(val, "a5") != 0)) {
                fprintf(stderr, "pldrun: --platform must be a2a3 or a5\n");
                return EX_USAGE;
            }
            o->platform = val;
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
            if (!val || !strchr(val, '=')) {
                fprintf(stderr, "pldrun: %s needs NAME=FILE\n", a);
                return EX_USAGE;
            }
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

static int front_end(const opts_t *o, int ranks, int print_diags)
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
    co.a5 = strcmp(o->platform, "a5") == 0;
    co.aiv_cores = co.a5 ? 36 : 48;
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
    pld_program_destroy(p);
    return rc;
}

int main(int argc, char **argv)
{
    opts_t o;
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0)
        return rc;
    if (o.check || o.print)
        return front_end(&o, o.ranks, env_rank() == 0);
    /* Running: the real rank count comes from MPI. */
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "pldrun: MPI_Init failed\n");
        return EX_UNAVAILABLE;
    }
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rc = front_end(&o, size, rank == 0);
    if (rc == EX_OK) {
        if (rank == 0)
            fprintf(stderr, "pldrun: %s checks clean for %d rank%s, but executing programs is not implemented in this "
                            "version (only --check is); nothing was run\n",
                    o.path, size, size == 1 ? "" : "s");
        rc = EX_UNAVAILABLE;
    }
    MPI_Finalize();
    return rc;
}
