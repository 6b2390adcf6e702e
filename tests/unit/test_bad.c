/* test_bad.c - CUnit suite running every tests/bad/NNN_*.pld through the checker.
 *
 * Each file is a small complete program with exactly one fault. Its first
 * comment lines carry the directives:
 *
 *   # expect-error: LINE:COL: gist     (required)
 *   # ranks: P [P ...]                 (optional; the check runs once per P)
 *   # platform: NAME                   (optional; a2a3 or a5, default a2a3)
 *
 * For every file (in sorted order) and every P (or P unknown when there is no
 * `# ranks:` line) pld_check_text runs with opts.ranks = P, then the
 * lowering passes (pld_lower_program, like pldrun --check), and the test
 * asserts: the status is an error (PLD_E_SYNTAX or PLD_E_TYPE), the FIRST
 * error diagnostic is at exactly LINE:COL, and its message contains the gist
 * (case-insensitive substring). Failures print the file, expected and actual.
 * The directory comes from the compile definition PLD_BAD_DIR. */
#include "pld_check.h"
#include "pld_npu_profile.h"
#include "pld_test.h"

#include <ctype.h>
#include <dirent.h>

#ifndef PLD_BAD_DIR
#error "PLD_BAD_DIR must name the tests/bad directory"
#endif

#define MAX_RANKS 8

typedef struct bad_file {
    char *name;           /* file name (no directory) */
    char *text;           /* whole file, NUL-terminated */
    size_t len;
} bad_file_t;

typedef struct directives {
    int have_expect;
    unsigned line, col;
    char gist[512];
    int ranks[MAX_RANKS];
    int nranks;
    const pld_npu_profile_t *platform; /* NULL = default */
    char problem[256];    /* non-empty when the directives are malformed */
} directives_t;

static bad_file_t *files;
static int nfiles;

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (n + 1 >= cap) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        if (got == 0)
            break;
        n += got;
    }
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const bad_file_t *)a)->name, ((const bad_file_t *)b)->name);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t ls = strlen(s), lx = strlen(suffix);
    return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

/* Suite setup: reads every *.pld of PLD_BAD_DIR, sorted by name. */
static int load_files(void)
{
    DIR *d = opendir(PLD_BAD_DIR);
    if (!d) {
        fprintf(stderr, "test_bad: cannot open %s\n", PLD_BAD_DIR);
        return 1;
    }
    int cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!ends_with(de->d_name, ".pld"))
            continue;
        if (nfiles == cap) {
            cap = cap ? cap * 2 : 64;
            files = realloc(files, (size_t)cap * sizeof *files);
        }
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", PLD_BAD_DIR, de->d_name);
        bad_file_t *bf = &files[nfiles];
        bf->text = read_all(path, &bf->len);
        if (!bf->text) {
            fprintf(stderr, "test_bad: cannot read %s\n", path);
            continue;
        }
        size_t nl = strlen(de->d_name) + 1;
        bf->name = malloc(nl);
        memcpy(bf->name, de->d_name, nl);
        nfiles++;
    }
    closedir(d);
    if (nfiles > 1)
        qsort(files, (size_t)nfiles, sizeof *files, by_name);
    return 0;
}

static int free_files(void)
{
    for (int i = 0; i < nfiles; i++) {
        free(files[i].name);
        free(files[i].text);
    }
    free(files);
    files = NULL;
    nfiles = 0;
    return 0;
}

/* Case-insensitive substring test. */
static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    if (n == 0)
        return 1;
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] &&
               tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

/* Reads the leading comment lines of a file. */
static void read_directives(const char *text, directives_t *dv)
{
    memset(dv, 0, sizeof *dv);
    const char *s = text;
    while (*s == '#') {
        const char *eol = strchr(s, '\n');
        size_t n = eol ? (size_t)(eol - s) : strlen(s);
        char line[1024];
        if (n >= sizeof line)
            n = sizeof line - 1;
        memcpy(line, s, n);
        line[n] = '\0';
        while (n > 0 && isspace((unsigned char)line[n - 1]))
            line[--n] = '\0';
        if (strncmp(line, "# expect-error:", 15) == 0) {
            unsigned l = 0, c = 0;
            int used = 0;
            if (sscanf(line + 15, " %u:%u:%n", &l, &c, &used) < 2 || used == 0) {
                snprintf(dv->problem, sizeof dv->problem, "malformed directive '%.150s' (want '# expect-error: LINE:COL: gist')",
                         line);
            } else {
                const char *g = line + 15 + used;
                while (*g == ' ')
                    g++;
                dv->have_expect = 1;
                dv->line = l;
                dv->col = c;
                snprintf(dv->gist, sizeof dv->gist, "%s", g);
                if (!dv->gist[0])
                    snprintf(dv->problem, sizeof dv->problem, "empty gist in '%.150s'", line);
            }
        } else if (strncmp(line, "# platform:", 11) == 0) {
            const char *nm = line + 11;
            while (*nm == ' ')
                nm++;
            dv->platform = pld_npu_profile(nm);
            if (!dv->platform)
                snprintf(dv->problem, sizeof dv->problem, "unknown platform in '%.150s' (want one of %s)", line,
                         pld_npu_profile_names());
        } else if (strncmp(line, "# ranks:", 8) == 0) {
            const char *p = line + 8;
            char *end;
            long v;
            while ((v = strtol(p, &end, 10)), end != p) {
                if (v < 1 || dv->nranks == MAX_RANKS) {
                    snprintf(dv->problem, sizeof dv->problem, "bad '# ranks:' directive '%.150s'", line);
                    break;
                }
                dv->ranks[dv->nranks++] = (int)v;
                p = end;
            }
            if (dv->nranks == 0 && !dv->problem[0])
                snprintf(dv->problem, sizeof dv->problem, "empty '# ranks:' directive");
        }
        if (!eol)
            break;
        s = eol + 1;
    }
    if (!dv->have_expect && !dv->problem[0])
        snprintf(dv->problem, sizeof dv->problem, "no '# expect-error: LINE:COL: gist' directive on the first lines");
}

/* Records one assertion with a message naming the file (shown by CUnit). */
static void report(int ok, const char *what)
{
    CU_assertImplementation(ok ? CU_TRUE : CU_FALSE, __LINE__, what, __FILE__, "", CU_FALSE);
}

/* Checks one file with one rank count; returns 1 on success. */
static int check_one(const bad_file_t *bf, const directives_t *dv, int ranks)
{
    pld_check_opts_t opts;
    memset(&opts, 0, sizeof opts);
    opts.ranks = ranks;
    opts.platform = dv->platform;
    char path[4096];
    snprintf(path, sizeof path, "tests/bad/%s", bf->name);
    pld_status_t st = PLD_OK;
    pld_program_t *p = pld_check_text(path, bf->text, bf->len, &opts, &st);
    if (p && st == PLD_OK) /* the lowering passes own the CHIP rail's rejections (pld_lower.c) */
        st = pld_lower_program(p, &opts, NULL);
    const pld_diag_t *first = NULL;
    for (const pld_diag_t *d = p ? p->diags.head : NULL; d; d = d->next)
        if (d->sev == PLD_SEV_ERROR) {
            first = d;
            break;
        }
    int ok_status = st == PLD_E_SYNTAX || st == PLD_E_TYPE;
    int ok_loc = first && first->span.line == dv->line && first->span.col == dv->col;
    int ok_msg = first && contains_ci(first->msg, dv->gist);
    int ok = ok_status && ok_loc && ok_msg;
    /* the renderer must print the error as file:LINE:COL: error: ... */
    if (ok) {
        pld_buf_t b;
        pld_buf_init(&b);
        pld_diag_render(&p->diags, NULL, &b);
        char head[4200];
        snprintf(head, sizeof head, "%s:%u:%u: error: ", path, dv->line, dv->col);
        ok = strncmp(pld_buf_str(&b), head, strlen(head)) == 0 || first != p->diags.head;
        if (!ok)
            fprintf(stderr, "\n%s: rendered diagnostics do not start with '%s':\n%s", bf->name, head, pld_buf_str(&b));
        pld_buf_fini(&b);
    }
    if (!ok) {
        char rk[32] = "unknown";
        if (ranks > 0)
            snprintf(rk, sizeof rk, "%d", ranks);
        fprintf(stderr, "\nFAIL %s (ranks %s)\n  expected: %u:%u: %s\n", bf->name, rk, dv->line, dv->col, dv->gist);
        if (first)
            fprintf(stderr, "  actual:   %u:%u: %s (status: %s)\n", first->span.line, first->span.col, first->msg,
                    pld_status_name(st));
        else
            fprintf(stderr, "  actual:   no error diagnostic (status: %s)\n", pld_status_name(st));
    }
    char what[600];
    snprintf(what, sizeof what, "%s: first error at %u:%u containing \"%.400s\"", bf->name, dv->line, dv->col,
             dv->gist);
    report(ok, what);
    pld_program_destroy(p);
    return ok;
}

static void test_bad_directory_is_populated(void)
{
    CU_ASSERT(nfiles >= 100);
    /* NNN_ prefixes are unique, so new files cannot silently shadow old ones */
    for (int i = 1; i < nfiles; i++) {
        int dup = strncmp(files[i - 1].name, files[i].name, 4) == 0 && files[i].name[3] == '_';
        if (dup)
            fprintf(stderr, "\n%s and %s share a number\n", files[i - 1].name, files[i].name);
        CU_ASSERT(!dup);
    }
}

static void test_bad_programs_report_expected_error(void)
{
    int passed = 0, failed = 0;
    for (int i = 0; i < nfiles; i++) {
        directives_t dv;
        read_directives(files[i].text, &dv);
        if (dv.problem[0]) {
            fprintf(stderr, "\nFAIL %s: %s\n", files[i].name, dv.problem);
            char what[600];
            snprintf(what, sizeof what, "%s: %.500s", files[i].name, dv.problem);
            report(0, what);
            failed++;
            continue;
        }
        for (int r = 0; r < (dv.nranks ? dv.nranks : 1); r++) {
            if (check_one(&files[i], &dv, dv.nranks ? dv.ranks[r] : 0))
                passed++;
            else
                failed++;
        }
    }
    fprintf(stderr, "\n  tests/bad: %d checks passed, %d failed (%d files)\n", passed, failed, nfiles);
}

static CU_TestInfo bad_tests[] = {
    {"test_bad_directory_is_populated", test_bad_directory_is_populated},
    {"test_bad_programs_report_expected_error", test_bad_programs_report_expected_error},
    CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
    {"bad", load_files, free_files, NULL, NULL, bad_tests},
    CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv)
{
    return pld_test_main(argc, argv, suites);
}
