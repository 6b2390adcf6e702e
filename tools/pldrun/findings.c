/* findings.c - --findings FILE.json, --check-races=error, --poison=error
 * (findings.h). Each rank keeps its records as lines of text ("KEY<TAB>JSON",
 * the key sorts them); at the end rank 0 gathers the lines, sorts them, drops
 * duplicates and writes the SARIF log; one reduction gives every rank the
 * totals and the write's outcome, so every rank exits alike. */
#include "findings.h"

#include "pld_buf.h"
#include "pld_debug.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_IO = 74 };

/* this rank's records: lines "KEY\tJSON\n"; counts by kind (before duplicates are dropped) */
static pld_buf_t g_lines;
static long long g_races, g_poison;
static const char *g_file = "";

/* ---------------------------------------------------------------- options */

int findings_option(const char *a, const char *val, int *check_races, int *poison, findings_opts_t *f)
{
    if (strcmp(a, "--check-races") == 0 || strcmp(a, "--poison") == 0) {
        *(a[2] == 'c' ? check_races : poison) = 1;
        return 1;
    }
    if (strcmp(a, "--check-races=error") == 0) {
        *check_races = f->races_error = 1;
        return 1;
    }
    if (strcmp(a, "--poison=error") == 0) {
        *poison = f->poison_error = 1;
        return 1;
    }
    if (strncmp(a, "--check-races=", 14) == 0 || strncmp(a, "--poison=", 9) == 0) {
        fprintf(stderr, "pldrun: %.*s= takes only error (%s: warnings, the exit status unchanged)\n",
                (int)(strchr(a, '=') - a), a, a[2] == 'c' ? "--check-races" : "--poison");
        return -1;
    }
    if (strcmp(a, "--findings") == 0) {
        if (!val || !val[0]) {
            fprintf(stderr, "pldrun: --findings needs a file name\n");
            return -1;
        }
        f->path = val;
        return 2;
    }
    return 0;
}

/* ---------------------------------------------------------------- records */

static void json_str(pld_buf_t *b, const char *s)
{
    pld_buf_putc(b, '"');
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            pld_buf_printf(b, "\\%c", c);
        else if (c < 0x20)
            pld_buf_printf(b, "\\u%04x", c);
        else
            pld_buf_putc(b, (char)c);
    }
    pld_buf_putc(b, '"');
}

static void region(pld_buf_t *b, pld_span_t sp)
{
    pld_buf_puts(b, "{\"physicalLocation\":{\"artifactLocation\":{\"uri\":");
    json_str(b, g_file);
    pld_buf_printf(b, "},\"region\":{\"startLine\":%u,\"startColumn\":%u", (unsigned)(sp.line ? sp.line : 1),
                   (unsigned)(sp.col ? sp.col : 1));
    if (sp.len)
        pld_buf_printf(b, ",\"charLength\":%u", (unsigned)sp.len);
    pld_buf_puts(b, "}}}");
}

static void side_json(pld_buf_t *b, const pld_debug_side_t *s)
{
    pld_buf_printf(b, "{\"rank\":%d,\"block\":", s->rank);
    if (s->block >= 0)
        pld_buf_printf(b, "%lld", (long long)s->block);
    else
        pld_buf_puts(b, "null");
    pld_buf_puts(b, ",\"op\":");
    json_str(b, s->op);
    pld_buf_puts(b, ",\"access\":");
    json_str(b, s->access);
    pld_buf_puts(b, ",\"file\":");
    json_str(b, g_file);
    pld_buf_printf(b, ",\"line\":%u,\"col\":%u}", (unsigned)s->span.line, (unsigned)s->span.col);
}

static void thread_text(char *t, size_t n, const pld_debug_side_t *s)
{
    if (s->block >= 0)
        snprintf(t, n, "rank %d block %lld", s->rank, (long long)s->block);
    else
        snprintf(t, n, "rank %d (orchestration)", s->rank);
}

/* a before b in the fixed order of a race's sides */
static int side_less(const pld_debug_side_t *a, const pld_debug_side_t *b)
{
    if (a->rank != b->rank)
        return a->rank < b->rank;
    if (a->block != b->block)
        return a->block < b->block;
    if (a->span.line != b->span.line)
        return a->span.line < b->span.line;
    if (a->span.col != b->span.col)
        return a->span.col < b->span.col;
    int c = strcmp(a->access, b->access);
    return c ? c < 0 : strcmp(a->op, b->op) < 0;
}

void findings_record(void *ctx, const pld_debug_finding_t *f)
{
    g_file = ctx ? (const char *)ctx : "";
    pld_buf_t b;
    pld_buf_init(&b);
    const pld_debug_side_t *s0 = &f->side[0], *s1 = f->nsides > 1 ? &f->side[1] : NULL;
    if (s1 && side_less(s1, s0)) {
        const pld_debug_side_t *t = s0;
        s0 = s1;
        s1 = t;
    }
    const int race = f->kind == PLD_DEBUG_FINDING_RACE;
    /* the key: rule, then the first side's place, then the byte range */
    pld_buf_printf(&b, "%d %010u %010u %010d %020lld %020zu\t", race ? 0 : 1, (unsigned)s0->span.line,
                   (unsigned)s0->span.col, s0->rank, (long long)s0->block, f->lo);
    pld_buf_puts(&b, "\"message\":{\"text\":");
    char t0[64], t1[64], text[512];
    thread_text(t0, sizeof t0, s0);
    if (race) {
        thread_text(t1, sizeof t1, s1);
        snprintf(text, sizeof text,
                 "data race on %s '%s' of rank %d, bytes [%zu, %zu): %s (%s) by %s and %s (%s) by %s, "
                 "ordered by nothing (docs/races.md)",
                 f->plain ? "tensor" : "window", f->target, f->owner, f->lo, f->hi, s0->op, s0->access, t0, s1->op, s1->access, t1);
        json_str(&b, text);
    } else {
        json_str(&b, f->message);
    }
    pld_buf_puts(&b, "},\"locations\":[");
    region(&b, s0->span);
    pld_buf_puts(&b, "]");
    if (s1 || (f->tile && f->born.line)) {
        pld_buf_puts(&b, ",\"relatedLocations\":[");
        size_t at = b.len;
        region(&b, s1 ? s1->span : f->born);
        /* {"id":1,"message":...,"physicalLocation":...}: the id and message go in front */
        pld_buf_t rel;
        pld_buf_init(&rel);
        if (s1)
            snprintf(text, sizeof text, "the other access: %s (%s) by %s", s1->op, s1->access, t1);
        else
            snprintf(text, sizeof text, "the tile '%s' was created here", f->target);
        pld_buf_puts(&rel, "{\"id\":1,\"message\":{\"text\":");
        json_str(&rel, text);
        pld_buf_puts(&rel, "},");
        pld_buf_puts(&rel, pld_buf_str(&b) + at + 1);
        b.len = at;
        pld_buf_puts(&b, pld_buf_str(&rel));
        pld_buf_fini(&rel);
        pld_buf_puts(&b, "]");
    }
    pld_buf_printf(&b, ",\"properties\":{\"kind\":\"%s\",\"%s\":", race ? "race" : "poison",
                   race || !f->tile ? "window" : "tile");
    json_str(&b, f->target);
    pld_buf_printf(&b, ",\"owner\":%d,\"bytes\":[%zu,%zu]", f->owner, f->lo, f->hi);
    if (!race)
        pld_buf_printf(&b, ",\"never_written\":%zu", f->count);
    pld_buf_puts(&b, ",\"sides\":[");
    side_json(&b, s0);
    if (s1) {
        pld_buf_putc(&b, ',');
        side_json(&b, s1);
    }
    pld_buf_puts(&b, "]}}\n");
    if (!b.oom)
        pld_buf_puts(&g_lines, pld_buf_str(&b));
    pld_buf_fini(&b);
    if (race)
        g_races++;
    else
        g_poison++;
}

void findings_drop(void)
{
    pld_buf_fini(&g_lines);
    pld_buf_init(&g_lines);
    g_races = g_poison = 0;
}

/* ---------------------------------------------------------------- the log */

static int cmp_line(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Writes the SARIF log of the lines in text (modified): 0, or -1 with errno's message printed. */
static int write_log(const char *path, char *text, int races_error, int poison_error)
{
    size_t n = 0, cap = 0;
    char **lines = NULL;
    for (char *p = text, *nl; *p; p = nl + 1) {
        nl = strchr(p, '\n');
        if (!nl)
            break;
        *nl = '\0';
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **nv = realloc(lines, cap * sizeof *nv);
            if (!nv) {
                free(lines);
                fprintf(stderr, "pldrun: out of memory while writing %s\n", path);
                return -1;
            }
            lines = nv;
        }
        lines[n++] = p;
    }
    if (n)
        qsort(lines, n, sizeof *lines, cmp_line);
    FILE *fp = fopen(path, "w");
    if (!fp) {
        perror(path);
        free(lines);
        return -1;
    }
    fprintf(fp, "{\"$schema\":\"https://json.schemastore.org/sarif-2.1.0.json\",\"version\":\"2.1.0\",\"runs\":[{"
                "\"tool\":{\"driver\":{\"name\":\"pldrun\",\"rules\":["
                "{\"id\":\"data-race\",\"shortDescription\":{\"text\":\"unordered conflicting window accesses "
                "(--check-races, docs/races.md)\"},\"defaultConfiguration\":{\"level\":\"%s\"}},"
                "{\"id\":\"poison-read\",\"shortDescription\":{\"text\":\"a read of never-written window bytes or "
                "tile elements (--poison)\"},\"defaultConfiguration\":{\"level\":\"%s\"}}]}},\n\"results\":[",
            races_error ? "error" : "warning", poison_error ? "error" : "warning");
    size_t written = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && strcmp(lines[i], lines[i - 1]) == 0)
            continue; /* the same finding seen twice (a race both of its ranks found) */
        const char *json = strchr(lines[i], '\t') + 1;
        const int race = lines[i][0] == '0';
        fprintf(fp, "%s\n{\"ruleId\":\"%s\",\"level\":\"%s\",%s", written ? "," : "",
                race ? "data-race" : "poison-read", (race ? races_error : poison_error) ? "error" : "warning", json);
        written++;
    }
    fprintf(fp, "]}]}\n");
    free(lines);
    if (ferror(fp) | fclose(fp)) {
        perror(path);
        return -1;
    }
    return 0;
}

int findings_finish(const findings_opts_t *f, int rc, int rank, int size)
{
    long long mine[3] = {g_races, g_poison, 0}, tot[3] = {0, 0, 0};
    int ok = 1;
    if (f->path) {
        int len = g_lines.oom ? 0 : (int)g_lines.len, *lens = NULL, *displs = NULL;
        char *all = NULL;
        if (rank == 0) {
            lens = calloc((size_t)size, sizeof *lens);
            displs = calloc((size_t)size, sizeof *displs);
        }
        ok = MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS;
        size_t totlen = 0;
        if (rank == 0 && ok && lens && displs) {
            for (int r = 0; r < size; r++) {
                displs[r] = (int)totlen;
                totlen += (size_t)lens[r];
            }
            all = malloc(totlen + 1);
        }
        ok = MPI_Gatherv(pld_buf_str(&g_lines), len, MPI_CHAR, all, lens, displs, MPI_CHAR, 0, MPI_COMM_WORLD) ==
                 MPI_SUCCESS && ok;
        if (rank == 0) {
            if (ok && all) {
                all[totlen] = '\0';
                mine[2] = write_log(f->path, all, f->races_error, f->poison_error) != 0;
            } else {
                fprintf(stderr, "pldrun: could not gather the findings for %s\n", f->path);
                mine[2] = 1;
            }
        }
        free(all);
        free(lens);
        free(displs);
    }
    findings_drop();
    if (MPI_Allreduce(mine, tot, 3, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS) {
        fprintf(stderr, "[rank %d/%d] pldrun: MPI failed while counting the findings\n", rank, size);
        return rc ? rc : 70;
    }
    if (tot[2] && rc == 0)
        rc = EXIT_IO;
    const int fail_races = f->races_error && tot[0] > 0, fail_poison = f->poison_error && tot[1] > 0;
    if (rc == 0 && (fail_races || fail_poison)) {
        if (rank == 0)
            fprintf(stderr, "pldrun: %s%s%s: findings fail the run (exit status %d)\n",
                    fail_races ? "--check-races=error" : "", fail_races && fail_poison ? " and " : "",
                    fail_poison ? "--poison=error" : "", FINDINGS_EXIT);
        rc = FINDINGS_EXIT;
    }
    return rc;
}
