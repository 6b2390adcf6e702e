/* findings.h - the tool's side of --findings FILE.json, --check-races=error
 * and --poison=error: the findings of the race detector and of --poison as
 * records (pld_debug.h's pld_debug_finding_t), gathered at rank 0 and
 * written as one SARIF 2.1.0 log, and the exit status a run with findings
 * takes (docs/debugging.md, "Findings that fail a run").
 *
 * The records: one SARIF result per finding, in runs[0].results, sorted
 * (rule, then the text of the record) and with duplicates dropped, so that
 * the same findings give the same file byte for byte: no time, no address,
 * no rank that happened to see it first. A race's two sides are put in a
 * fixed order (rank, block, line, column, access, op) whatever side found
 * it: locations[0] is the first, relatedLocations[0] the second. */
#ifndef PLDRUN_FINDINGS_H
#define PLDRUN_FINDINGS_H

/* The exit status of a run whose findings fail it (--check-races=error,
 * --poison=error). */
enum { FINDINGS_EXIT = 1 };

typedef struct findings_opts {
    const char *path;   /* --findings FILE.json, or NULL */
    int races_error;    /* --check-races=error */
    int poison_error;   /* --poison=error */
} findings_opts_t;

struct pld_debug_finding;

/* Option a (val: the next argument or NULL): 0 when it is none of
 * --check-races[=error], --poison[=error], --findings FILE; else how many
 * arguments it took (1 or 2), with *check_races / *poison set; -1 after a
 * usage message on stderr. */
int findings_option(const char *a, const char *val, int *check_races, int *poison, findings_opts_t *f);
/* The sink of pld_interp_opts_t.finding (ctx: the program's path, as the
 * records name it): keeps a copy of the record (rank-local). */
void findings_record(void *ctx, const struct pld_debug_finding *f);
/* At the end of a run, on every rank that stopped (collective): rank 0
 * gathers every rank's records and writes f->path; every rank learns the
 * totals. Returns rc, or FINDINGS_EXIT when rc is 0 and a finding fails the
 * run, or 74 when the file could not be written (the same on every rank).
 * Forgets the records. */
int findings_finish(const findings_opts_t *f, int rc, int rank, int size);
/* Forgets the records without a collective (a rank that did not stop). */
void findings_drop(void);

#endif
