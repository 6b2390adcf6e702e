/* fuzz_run.c - libFuzzer harness over the runtime: parse, check and run.
 *
 * Input: the text of a program. An optional header line anywhere before the
 * first `import` (it is a comment, so a seed is still a valid program and the
 * spans of the diagnostics stay those of the text) sets the run:
 *
 *     # fuzz-run: inputs=random:7 dispatches=2
 *
 *   inputs=SPEC     generator for every In/InOut entry parameter: arange,
 *                   zeros, ones or random:SEED (default random:1); Out
 *                   parameters are always zeros (as pldrun binds them)
 *   dispatches=N    pld_interp_opts_t.dispatches, 1..3 (default 1)
 *   persistent=0|1  pld_interp_opts_t.persistent_windows (default 0)
 *
 * Every input is checked (pld_check_text) for P = 1 and lowered
 * (pld_lower_program); one that passes runs
 * in-process on one rank (pld_comm_self) with the local window transport
 * (opts.win = NULL: PLD_WIN_LOCAL), under
 *   - an operation budget (opts.op_budget = 200000: endless loops stop with a
 *     runtime error),
 *   - a short hang watchdog (opts.timeout_s = 0.5 s; a wait nobody on this rank
 *     can satisfy is reported as a deadlock after ~0.2 s),
 *   - a memory cap (pld_mem_limit, 64 MiB live: larger tensors, windows or
 *     inputs fail as out of memory, which exercises the OOM paths).
 * The diagnostics are rendered and, after a successful run, every Out/InOut
 * result is read back. Everything is destroyed; ASan reports any leak.
 *
 * Runtime errors, failed binds and failed checks are all fine; crashes,
 * sanitizer reports, leaks and libFuzzer timeouts are bugs.
 *
 * Mutations (libFuzzer build only, PLD_FUZZ_MUTATOR): most byte-level
 * mutations of a program only reach the parser's and checker's error paths, so
 * a custom mutator (LLVMFuzzerCustomMutator) mostly makes changes that keep the
 * program well-formed: it replaces a number literal (a shape, an offset, a
 * loop bound, a rank, a signal value) with a nearby or an edge value, or swaps
 * a word for another of its kind (dtypes, NotifyOp / WaitCmp members, an
 * elementwise op, a comparison, the input generator of the header); one time
 * in four it leaves the input to libFuzzer's own mutations (LLVMFuzzerMutate).
 *
 * PLD_FUZZ_VERBOSE=1 in the environment prints what happened to each input
 * (checked / bound / run status and the diagnostics) on stderr.
 *
 * Built two ways: with -fsanitize=fuzzer (PLD_FUZZ=ON, tests/fuzz/run.sh
 * --target run) and with replay_main.c as an ordinary executable
 * (fuzz_run_replay: CTest fuzz_run_seeds and fuzz_run_regress_*). */
#include "pld_check.h"
#include "pld_interp.h"
#include "pld_mem.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_OP_BUDGET 200000u
#define FUZZ_MEM_LIMIT ((size_t)64 << 20)
#define FUZZ_TIMEOUT_S 0.5

typedef struct run_cfg {
    char inputs[32];
    int dispatches;
    int persistent;
} run_cfg_t;

/* Reads the "# fuzz-run:" header from the lines before the first `import`. */
static void read_header(const char *s, size_t n, run_cfg_t *c)
{
    snprintf(c->inputs, sizeof c->inputs, "random:1");
    c->dispatches = 1;
    c->persistent = 0;
    static const char tag[] = "# fuzz-run:";
    size_t i = 0;
    while (i < n) {
        size_t e = i;
        while (e < n && s[e] != '\n')
            e++;
        size_t len = e - i;
        if (len >= 6 && memcmp(s + i, "import", 6) == 0)
            return;
        if (len > sizeof tag - 1 && memcmp(s + i, tag, sizeof tag - 1) == 0) {
            char line[256];
            size_t k = len - (sizeof tag - 1);
            if (k >= sizeof line)
                k = sizeof line - 1;
            memcpy(line, s + i + sizeof tag - 1, k);
            line[k] = '\0';
            for (char *tok = strtok(line, " \t\r"); tok; tok = strtok(NULL, " \t\r")) {
                if (strncmp(tok, "inputs=", 7) == 0) {
                    const char *v = tok + 7;
                    if (strcmp(v, "arange") == 0 || strcmp(v, "zeros") == 0 || strcmp(v, "ones") == 0 ||
                        strncmp(v, "random:", 7) == 0)
                        snprintf(c->inputs, sizeof c->inputs, "%s", v);
                } else if (strncmp(tok, "dispatches=", 11) == 0) {
                    int d = atoi(tok + 11);
                    c->dispatches = d < 1 ? 1 : d > 3 ? 3 : d;
                } else if (strncmp(tok, "persistent=", 11) == 0) {
                    c->persistent = atoi(tok + 11) != 0;
                }
            }
            return;
        }
        i = e + 1;
    }
}

static int verbose(void)
{
    static int v = -1;
    if (v < 0) {
        const char *e = getenv("PLD_FUZZ_VERBOSE");
        v = e && strcmp(e, "1") == 0;
    }
    return v;
}

static void run_program(pld_program_t *p, const run_cfg_t *c)
{
    pld_interp_opts_t io;
    memset(&io, 0, sizeof io);
    io.op_budget = FUZZ_OP_BUDGET;
    io.timeout_s = FUZZ_TIMEOUT_S;
    io.dispatches = c->dispatches;
    io.persistent_windows = c->persistent;
    io.reset_windows = -1;
    pld_interp_t *it = NULL;
    char err[512];
    if (pld_interp_create(p, &io, pld_comm_self(), &it, err, sizeof err) != PLD_OK) {
        if (verbose())
            fprintf(stderr, "fuzz_run: create: %s\n", err);
        return;
    }
    int ok = 1;
    for (int i = 0; ok && i < pld_interp_nparams(it); i++) {
        const pld_param_t *pp = pld_interp_param(it, i);
        const char *spec = pp->type && pp->type->dir == PLD_DIR_OUT ? "zeros" : c->inputs;
        char desc[256];
        pld_interp_param_desc(it, i, desc, sizeof desc);
        ok = pld_interp_bind_generated(it, i, spec, err, sizeof err) == PLD_OK;
        if (!ok && verbose())
            fprintf(stderr, "fuzz_run: bind %s (%s): %s\n", pp->name, desc, err);
    }
    pld_status_t rs = ok ? pld_interp_run(it) : PLD_E_USAGE;
    if (ok && verbose())
        fprintf(stderr, "fuzz_run: run: %s\n", pld_status_name(rs));
    if (rs == PLD_OK) {
        for (int i = 0; i < pld_interp_nparams(it); i++) {
            const pld_param_t *pp = pld_interp_param(it, i);
            if (!pp->type || (pp->type->dir != PLD_DIR_OUT && pp->type->dir != PLD_DIR_INOUT))
                continue;
            pld_dtype_t dt;
            int rank;
            const int64_t *shape;
            const void *d;
            if (pld_interp_result(it, i, &dt, &rank, &shape, &d) == PLD_OK && rank > 0 && d) {
                volatile unsigned char first = *(const unsigned char *)d;
                (void)first;
            }
        }
        pld_interp_stats_t st;
        pld_interp_stats(it, &st);
    }
    (void)pld_interp_hang(it);
    pld_interp_destroy(it);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    run_cfg_t cfg;
    read_header((const char *)data, size, &cfg);
    pld_mem_limit(FUZZ_MEM_LIMIT);
    pld_check_opts_t co;
    memset(&co, 0, sizeof co);
    co.ranks = 1;
    pld_status_t st = PLD_E_USAGE;
    pld_program_t *p = pld_check_text("fuzz.pld", (const char *)data, size, &co, &st);
    if (p && st == PLD_OK) /* the lowering passes, as pldrun runs them (docs/lowering.md) */
        st = pld_lower_program(p, &co, NULL);
    if (p) {
        if (st == PLD_OK)
            run_program(p, &cfg);
        pld_buf_t out;
        pld_buf_init(&out);
        pld_diag_render(&p->diags, "[rank 0/1] ", &out);
        if (verbose())
            fprintf(stderr, "fuzz_run: check: %s\n%s", pld_status_name(st), pld_buf_str(&out));
        pld_buf_fini(&out);
    }
    pld_program_destroy(p);
    pld_mem_limit(0);
    return 0;
}

#ifdef PLD_FUZZ_MUTATOR
/* ------------------------------------------------------------ mutator */

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

static uint32_t next_rand(uint32_t *s)
{
    uint32_t x = *s ? *s : 0x9e3779b9u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *s = x;
    return x;
}

/* Replaces data[at, at + len) with rep; returns the new size (0 when it does
 * not fit). */
static size_t splice(uint8_t *data, size_t size, size_t max_size, size_t at, size_t len, const char *rep)
{
    size_t rl = strlen(rep);
    if (size - len + rl > max_size)
        return 0;
    memmove(data + at + rl, data + at + len, size - at - len);
    memcpy(data + at, rep, rl);
    return size - len + rl;
}

static int is_word(uint8_t c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* One number literal (a digit run not inside a name) gets another value. */
static size_t mutate_number(uint8_t *data, size_t size, size_t max_size, uint32_t *rs)
{
    size_t n = 0;
    for (size_t i = 0; i < size; i++)
        if (data[i] >= '0' && data[i] <= '9' && (i == 0 || !is_word(data[i - 1])))
            n++;
    if (n == 0)
        return 0;
    size_t pick = next_rand(rs) % n, at = 0;
    for (size_t i = 0; i < size; i++)
        if (data[i] >= '0' && data[i] <= '9' && (i == 0 || !is_word(data[i - 1])) && pick-- == 0) {
            at = i;
            break;
        }
    size_t len = 0;
    long long v = 0;
    while (at + len < size && data[at + len] >= '0' && data[at + len] <= '9' && len < 18)
        v = v * 10 + (data[at + len++] - '0');
    while (at + len < size && is_word(data[at + len]))
        len++;
    static const long long edge[] = {0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 127, 128, 255, 256, 1000,
                                     1023, 1024, 4096, 65535, 65536, 1048576, 2147483647LL, 2147483648LL,
                                     4294967295LL, 4294967296LL, 9223372036854775807LL};
    long long nv;
    switch (next_rand(rs) % 4) {
    case 0: nv = v + 1; break;
    case 1: nv = v > 0 ? v - 1 : 0; break;
    case 2: nv = (next_rand(rs) & 1) ? v * 2 : v / 2; break;
    default: nv = edge[next_rand(rs) % (sizeof edge / sizeof edge[0])]; break;
    }
    char rep[32];
    snprintf(rep, sizeof rep, "%lld", nv < 0 ? 0 : nv);
    return splice(data, size, max_size, at, len, rep);
}

/* One word of a group becomes another word of the same group. */
static size_t mutate_word(uint8_t *data, size_t size, size_t max_size, uint32_t *rs)
{
    static const char *const groups[][8] = {
        {"FP32", "FP16", "BF16", "INT32", "INT8", "INT64", "INDEX", NULL},
        {"AtomicAdd", "Set", NULL},
        {"Ge", "Eq", NULL},
        {"pl.add", "pl.sub", "pl.mul", "pl.maximum", "pl.minimum", NULL},
        {" < ", " > ", " <= ", " >= ", " == ", " != ", NULL},
        {" + ", " - ", " * ", " // ", " % ", NULL},
        {"random:1", "random:7", "arange", "ones", "zeros", NULL},
        {"dispatches=1", "dispatches=2", "dispatches=3", NULL},
    };
    size_t ng = sizeof groups / sizeof groups[0];
    size_t g = next_rand(rs) % ng;
    size_t nw = 0;
    while (nw < 8 && groups[g][nw])
        nw++;
    /* count the occurrences of every word of the group, pick one */
    size_t n = 0;
    for (size_t i = 0; i < size; i++)
        for (size_t w = 0; w < nw; w++) {
            size_t l = strlen(groups[g][w]);
            if (i + l <= size && memcmp(data + i, groups[g][w], l) == 0)
                n++;
        }
    if (n == 0)
        return 0;
    size_t pick = next_rand(rs) % n;
    for (size_t i = 0; i < size; i++)
        for (size_t w = 0; w < nw; w++) {
            size_t l = strlen(groups[g][w]);
            if (i + l <= size && memcmp(data + i, groups[g][w], l) == 0 && pick-- == 0)
                return splice(data, size, max_size, i, l, groups[g][(w + 1 + next_rand(rs) % (nw - 1)) % nw]);
        }
    return 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    uint32_t rs = seed;
    unsigned k = next_rand(&rs) % 8;
    size_t r = 0;
    if (k < 4)
        r = mutate_number(data, size, max_size, &rs);
    else if (k < 6)
        r = mutate_word(data, size, max_size, &rs);
    return r ? r : LLVMFuzzerMutate(data, size, max_size);
}
#endif
