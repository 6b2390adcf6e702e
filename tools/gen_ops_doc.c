/* gen_ops_doc.c - prints docs/ops.md, the op reference, from the op table
 * (src/parser/pld_ops.def through pld_ast.h).
 *
 * usage: gen_ops_doc [OUT.md]     (stdout when OUT is absent)
 *
 * One table per namespace (pl, pl.system, pl.tile, pl.tensor, pl.array,
 * pld.system, pld.tensor, pld.tile), in table order: op, where it may be called,
 * signature (defaults, keyword-only marker), summary. Then the DSL spellings
 * that pld_ast.h can reveal: plain aliases (pld_op_lookup) and unified names
 * (pld_op_unified). pld_ast.h has no iterator over them, so both are found by
 * probing spellings derived from every canonical name A.B.C: A.C, A.C_B,
 * A.B.C_B (pl.tile.load -> pl.load, pl.tile.create -> pl.create_tile, ...) and
 * A.B.C itself (pl.tile.add also dispatches a scalar rhs to pl.tile.adds).
 * CTest `ops_doc_up_to_date` fails when docs/ops.md differs from the output.
 * Exit codes: 0 ok, 64 usage, 74 I/O. */
#include "pld_ast.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NS 32
#define MAX_NAMES 512
#define NAME_LEN 96

typedef struct spelling {
    char name[NAME_LEN];
    int id;                    /* alias target (plain aliases) */
    const pld_unified_t *u;    /* unified names */
} spelling_t;

static void ns_of(const char *name, char *out, size_t n)
{
    const char *dot = strrchr(name, '.');
    size_t len = dot ? (size_t)(dot - name) : strlen(name);
    if (len >= n)
        len = n - 1;
    memcpy(out, name, len);
    out[len] = '\0';
}

static const char *where_text(int levels)
{
    static char buf[64];
    if (levels & PLD_OPL_S)
        return "special form";
    buf[0] = '\0';
    const char *sep = "";
    if (levels & PLD_OPL_H) {
        strcat(buf, "HOST");
        sep = ", ";
    }
    if (levels & PLD_OPL_C) {
        strcat(buf, sep);
        strcat(buf, "CHIP");
        sep = ", ";
    }
    if (levels & PLD_OPL_K) {
        strcat(buf, sep);
        strcat(buf, "kernel");
    }
    return buf;
}

/* Markdown table cell text: escapes '|'. */
static void put_cell(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputc('\\', f);
        fputc(*s, f);
    }
}

static void put_signature(FILE *f, const pld_op_info_t *info)
{
    fprintf(f, "`%s(", info->name);
    if (info->variadic) {
        fputs("...)`", f);
        return;
    }
    int kwonly_started = 0;
    for (int i = 0; i < info->nparams; i++) {
        const pld_op_param_t *pp = &info->params[i];
        if (i > 0)
            fputs(", ", f);
        if (pp->kwonly && !kwonly_started) {
            fputs("*, ", f);
            kwonly_started = 1;
        }
        fprintf(f, "%s: %s", pp->name, pp->kind);
        if (pp->deflt)
            fprintf(f, " = %s", pp->deflt);
    }
    fputs(")`", f);
}

static int by_spelling(const void *a, const void *b)
{
    return strcmp(((const spelling_t *)a)->name, ((const spelling_t *)b)->name);
}

static int is_canonical(const char *name)
{
    for (int i = 0; i < PLD_OPID__COUNT; i++)
        if (strcmp(pld_op_info((pld_op_id_t)i)->name, name) == 0)
            return 1;
    return 0;
}

static int have(const spelling_t *v, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0)
            return 1;
    return 0;
}

/* Probes the spellings derived from every canonical name. */
static void probe(spelling_t *aliases, int *na, spelling_t *unified, int *nu)
{
    for (int i = 0; i < PLD_OPID__COUNT; i++) {
        const char *name = pld_op_info((pld_op_id_t)i)->name;
        const char *d1 = strchr(name, '.');
        const char *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
        if (!d1 || !d2 || strchr(d2 + 1, '.'))
            continue; /* only A.B.C */
        char a[NAME_LEN], b[NAME_LEN], c[NAME_LEN];
        snprintf(a, sizeof a, "%.*s", (int)(d1 - name), name);
        snprintf(b, sizeof b, "%.*s", (int)(d2 - d1 - 1), d1 + 1);
        snprintf(c, sizeof c, "%s", d2 + 1);
        char cand[5][NAME_LEN * 4];
        snprintf(cand[0], sizeof cand[0], "%s.%s", a, c);
        snprintf(cand[1], sizeof cand[1], "%s.%s_%s", a, c, b);
        snprintf(cand[2], sizeof cand[2], "%s.%s.%s_%s", a, b, c, b);
        snprintf(cand[3], sizeof cand[3], "%s.%s", a, b);
        snprintf(cand[4], sizeof cand[4], "%s", name); /* pl.tile.add: tile or scalar rhs */
        for (int k = 0; k < 5; k++) {
            if (strlen(cand[k]) >= NAME_LEN)
                continue;
            const pld_unified_t *u = pld_op_unified(cand[k]);
            if (u && !have(unified, *nu, cand[k]) && *nu < MAX_NAMES) {
                snprintf(unified[*nu].name, NAME_LEN, "%.*s", NAME_LEN - 1, cand[k]);
                unified[(*nu)++].u = u;
            }
            int id = pld_op_lookup(cand[k]);
            if (id >= 0 && !is_canonical(cand[k]) && !have(aliases, *na, cand[k]) && *na < MAX_NAMES) {
                snprintf(aliases[*na].name, NAME_LEN, "%.*s", NAME_LEN - 1, cand[k]);
                aliases[(*na)++].id = id;
            }
        }
    }
    qsort(aliases, (size_t)*na, sizeof *aliases, by_spelling);
    qsort(unified, (size_t)*nu, sizeof *unified, by_spelling);
}

static void put_target(FILE *f, int id)
{
    if (id < 0)
        fputs("—", f);
    else
        fprintf(f, "`%s`", pld_op_info((pld_op_id_t)id)->name);
}

static void generate(FILE *f)
{
    fputs("# Op reference\n\n"
          "<!-- Generated by tools/gen_ops_doc from src/parser/pld_ops.def; do not edit by hand.\n"
          "     Regenerate with: cmake --build BUILD --target ops_doc -->\n\n"
          "Every op pldrun knows, one table per namespace, in the order of the op table\n"
          "(`src/parser/pld_ops.def`).\n\n"
          "* **where**: the functions that may call the op. **HOST** = the HOST orchestrator,\n"
          "  **CHIP** = a CHIP Orchestration function, **kernel** = an InCore / AIV / AIC kernel\n"
          "  or a `pl.at(level=pl.Level.CORE_GROUP)` scope. A **special form** (loops, scopes,\n"
          "  constants, dispatch) is handled by the checker itself.\n"
          "* **signature**: `name: kind = default`. Parameters after `*` are keyword-only; a\n"
          "  parameter without a default is required; `...` takes any arguments. A default of\n"
          "  `None` means the argument may be absent. Kinds: `tensor` (a Tensor or a\n"
          "  DistributedTensor), `dtensor` (a window-bound DistributedTensor), `tile`, `scalar`,\n"
          "  `list` (a shape / offset list), `dtype`, `mem` (a memory space), `int` (a compile-time\n"
          "  integer), `bool`, `num`, `str`, `enum`, `ctx` (a CommCtx), `ptr` (a window buffer\n"
          "  handle), `pctx`, `event`, `session` (the prefetch handles PrefetchAsyncContext,\n"
          "  AsyncEvent, AsyncSession), `value`, `func`, `any`.\n",
          f);

    char seen[MAX_NS][NAME_LEN];
    int nns = 0;
    for (int i = 0; i < PLD_OPID__COUNT; i++) {
        char ns[NAME_LEN];
        ns_of(pld_op_info((pld_op_id_t)i)->name, ns, sizeof ns);
        int found = 0;
        for (int j = 0; j < nns; j++)
            found |= strcmp(seen[j], ns) == 0;
        if (!found && nns < MAX_NS)
            snprintf(seen[nns++], NAME_LEN, "%s", ns);
    }
    for (int j = 0; j < nns; j++) {
        fprintf(f, "\n## `%s`\n\n", seen[j]);
        fputs("| op | where | signature | summary |\n|---|---|---|---|\n", f);
        for (int i = 0; i < PLD_OPID__COUNT; i++) {
            const pld_op_info_t *info = pld_op_info((pld_op_id_t)i);
            char ns[NAME_LEN];
            ns_of(info->name, ns, sizeof ns);
            if (strcmp(ns, seen[j]) != 0)
                continue;
            fprintf(f, "| `%s` | %s | ", info->name, where_text(info->levels));
            put_signature(f, info);
            fputs(" | ", f);
            put_cell(f, info->doc);
            fputs(" |\n", f);
        }
    }

    static spelling_t aliases[MAX_NAMES], unified[MAX_NAMES];
    int na = 0, nu = 0;
    probe(aliases, &na, unified, &nu);
    fputs("\n## Aliases\n\n"
          "DSL spellings that always mean one op (the printer writes the canonical name).\n\n"
          "| spelling | op |\n|---|---|\n",
          f);
    for (int i = 0; i < na; i++) {
        fprintf(f, "| `%s` | ", aliases[i].name);
        put_target(f, aliases[i].id);
        fputs(" |\n", f);
    }
    fputs("\n## PyPTO's printed forms\n\n"
          "The IR op names and argument orders PyPTO's printer writes (and its parser reads back),\n"
          "where they differ from the DSL's: the op each is a form of, the keyword that selects the\n"
          "form (— : always) and the parameters its positional arguments bind (| : the last\n"
          "positional binds that one; — : the op's own order).\n\n"
          "| spelling | op | when | positionals |\n|---|---|---|---|\n",
          f);
    for (int i = 0; pld_op_printed(NULL, i); i++) {
        const pld_printed_t *pf = pld_op_printed(NULL, i);
        fprintf(f, "| `%s` | ", pf->name);
        put_target(f, (int)pf->id);
        if (pf->kw)
            fprintf(f, " | `%s=` given | ", pf->kw);
        else
            fputs(" | — | ", f);
        if (!pf->pos)
            fputs("— |\n", f);
        for (const char *q = pf->pos; q && *q; q++)
            fprintf(f, "%s%s%c%s", q == pf->pos ? "`" : "", *q == '|' ? "\\" : "", *q, q[1] ? "" : "` |\n");
    }
    fputs("\n## Unified names\n\n"
          "DSL names that pick an op from the kinds of their operands. The column is chosen by\n"
          "the first operand (a tile, a Tensor / DistributedTensor, or a scalar) and, for binary\n"
          "ops, by whether the second positional operand is a scalar. — = not available.\n\n"
          "| name | tile | tile, scalar | tensor | tensor, scalar | scalar |\n"
          "|---|---|---|---|---|---|\n",
          f);
    for (int i = 0; i < nu; i++) {
        const pld_unified_t *u = unified[i].u;
        fprintf(f, "| `%s` | ", unified[i].name);
        put_target(f, u->tile_tile);
        fputs(" | ", f);
        put_target(f, u->tile_scalar);
        fputs(" | ", f);
        put_target(f, u->tensor_tensor);
        fputs(" | ", f);
        put_target(f, u->tensor_scalar);
        fputs(" | ", f);
        put_target(f, u->scalar);
        fputs(" |\n", f);
    }
}

int main(int argc, char **argv)
{
    if (argc > 2 || (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0))) {
        fprintf(stderr, "usage: gen_ops_doc [OUT.md]\n");
        return argc > 2 ? 64 : 0;
    }
    FILE *f = stdout;
    if (argc == 2) {
        f = fopen(argv[1], "w");
        if (!f) {
            fprintf(stderr, "gen_ops_doc: cannot write '%s'\n", argv[1]);
            return 74;
        }
    }
    generate(f);
    int bad = ferror(f);
    if (f != stdout)
        bad |= fclose(f) != 0;
    else
        bad |= fflush(f) != 0;
    if (bad) {
        fprintf(stderr, "gen_ops_doc: write error\n");
        return 74;
    }
    return 0;
}
