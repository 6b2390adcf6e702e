/* observe.c - recorder, log sinks, clocks and the merged trace (observe.h). */
#include "observe.h"

#include "flow.h"

#include "pld_buf.h"
#include "pld_mem.h"

#include <errno.h>
#include <time.h>
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TAG_TRACE 7301
#define SYNC_ROUNDS 8

struct observe {
    pld_trace_t *tr;
    const char *trace_path;
    int verbose;
    FILE *log;
    int rank, size;
    int64_t start;     /* this rank's clock when the recorder was made (log times) */
    int64_t offset;    /* this rank's clock minus rank 0's */
    int64_t origin;    /* rank 0's clock at the end of the exchange: the trace's zero */
    pld_buf_t line;
};

/* One event line: "[rank r/P] line" on stderr at -v, "  12.345 ms  line" in
 * the log file. Each is written in one call so ranks do not interleave. */
static void sink(void *ctx, const char *line, size_t len)
{
    observe_t *o = ctx;
    if (o->verbose) {
        pld_buf_reset(&o->line);
        pld_buf_printf(&o->line, "[rank %d/%d] ", o->rank, o->size);
        pld_buf_putn(&o->line, line, len);
        pld_buf_putc(&o->line, '\n');
        if (!o->line.oom)
            fwrite(o->line.p, 1, o->line.len, stderr);
    }
    if (o->log)
        fprintf(o->log, "%10.3f ms  %.*s\n", (double)(pld_trace_now() - o->start) / 1e6, (int)len, line);
}

static int make_dir(const char *dir, char *err, size_t errn)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        snprintf(err, errn, "--log-dir %s: the path is too long", dir);
        return -1;
    }
    for (char *p = path + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(path, 0777) != 0 && errno != EEXIST) {
                snprintf(err, errn, "--log-dir %s: cannot create %s: %s", dir, path, strerror(errno));
                return -1;
            }
            *p = c;
            if (!c)
                break;
        }
    }
    return 0;
}

int observe_open(const char *trace_path, int verbose, const char *log_dir, const char *file, int rank, int size,
                 observe_t **out, char *err, size_t errn)
{
    *out = NULL;
    if (!trace_path && !verbose && !log_dir)
        return 0;
    observe_t *o = pld_mem_calloc(1, sizeof *o);
    if (!o) {
        snprintf(err, errn, "out of memory");
        return -1;
    }
    o->trace_path = trace_path;
    o->verbose = verbose;
    o->rank = rank;
    o->size = size;
    o->start = pld_trace_now();
    pld_buf_init(&o->line);
    if (log_dir) {
        char path[PATH_MAX];
        if (make_dir(log_dir, err, errn) != 0) {
            observe_close(o);
            return -1;
        }
        snprintf(path, sizeof path, "%s/rank%d.log", log_dir, rank);
        o->log = fopen(path, "w");
        if (!o->log) {
            snprintf(err, errn, "--log-dir: cannot open %s for writing: %s", path, strerror(errno));
            observe_close(o);
            return -1;
        }
        setvbuf(o->log, NULL, _IOLBF, 0); /* line by line: a killed rank's log is whole */
        fprintf(o->log, "# pldrun log of rank %d of %d: %s (times since the rank started)\n", rank, size,
                file ? file : "");
    }
    if (trace_path && rank == 0) {
        /* rank 0 writes it: find out now, not after a long run */
        char tmp[PATH_MAX];
        snprintf(tmp, sizeof tmp, "%s.tmp", trace_path);
        FILE *f = fopen(tmp, "w");
        if (!f) {
            snprintf(err, errn, "--trace %s: cannot write the file: %s", trace_path, strerror(errno));
            observe_close(o);
            return -1;
        }
        fclose(f);
        remove(tmp);
    }
    o->tr = pld_trace_create(trace_path != NULL, 0, verbose || log_dir ? sink : NULL, o, file);
    if (!o->tr) {
        snprintf(err, errn, "out of memory");
        observe_close(o);
        return -1;
    }
    *out = o;
    return 0;
}

void observe_close(observe_t *o)
{
    if (!o)
        return;
    if (o->log)
        fclose(o->log);
    pld_trace_destroy(o->tr);
    pld_buf_fini(&o->line);
    pld_mem_free(o);
}

pld_trace_t *observe_recorder(const observe_t *o)
{
    return o ? o->tr : NULL;
}

int observe_sync_clocks(observe_t *o)
{
    if (!o || !o->trace_path || o->size == 1) {
        if (o)
            o->origin = pld_trace_now();
        return 0;
    }
    int64_t *offsets = NULL;
    if (o->rank == 0) {
        offsets = pld_mem_calloc((size_t)o->size, sizeof *offsets);
        if (!offsets)
            return -1; /* the others block in the exchange: the caller aborts the job */
        for (int r = 1; r < o->size; r++) {
            int64_t best_rtt = INT64_MAX;
            for (int k = 0; k < SYNC_ROUNDS; k++) {
                int64_t t0 = pld_trace_now(), tr = 0;
                if (MPI_Send(&t0, 1, MPI_INT64_T, r, TAG_TRACE, MPI_COMM_WORLD) != MPI_SUCCESS ||
                    MPI_Recv(&tr, 1, MPI_INT64_T, r, TAG_TRACE, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
                    pld_mem_free(offsets);
                    return -1;
                }
                int64_t t1 = pld_trace_now();
                if (t1 - t0 < best_rtt) {
                    best_rtt = t1 - t0;
                    offsets[r] = tr - (t0 + (t1 - t0) / 2);
                }
            }
        }
    } else {
        for (int k = 0; k < SYNC_ROUNDS; k++) {
            int64_t t0;
            if (MPI_Recv(&t0, 1, MPI_INT64_T, 0, TAG_TRACE, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                return -1;
            int64_t tr = pld_trace_now();
            if (MPI_Send(&tr, 1, MPI_INT64_T, 0, TAG_TRACE, MPI_COMM_WORLD) != MPI_SUCCESS)
                return -1;
        }
    }
    int64_t origin = o->rank == 0 ? pld_trace_now() : 0;
    int rc = MPI_Scatter(offsets, 1, MPI_INT64_T, &o->offset, 1, MPI_INT64_T, 0, MPI_COMM_WORLD) == MPI_SUCCESS &&
                     MPI_Bcast(&origin, 1, MPI_INT64_T, 0, MPI_COMM_WORLD) == MPI_SUCCESS
                 ? 0
                 : -1;
    o->origin = origin;
    pld_mem_free(offsets);
    return rc;
}

/* Rank 0: receives rank r's fragment and writes it to f (after ",\n"),
 * waiting until `deadline` (MPI_Wtime). The fragment's JSON text may be
 * followed by a NUL and the rank's flow records (flow.h), which are appended
 * to flows. 1 written, 0 not received, -1 the file could not be written.
 * buf/cap: a reusable receive buffer. */
static int recv_fragment(int r, double deadline, FILE *f, char **buf, size_t *cap, pld_buf_t *flows)
{
    int flag = 0;
    MPI_Status st;
    while (!flag) {
        if (MPI_Iprobe(r, TAG_TRACE, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS)
            return 0;
        if (!flag) {
            if (MPI_Wtime() > deadline)
                return 0;
            nanosleep(&(struct timespec){0, 1000000}, NULL);
        }
    }
    int n = 0;
    if (MPI_Get_count(&st, MPI_CHAR, &n) != MPI_SUCCESS || n < 0)
        return 0;
    if ((size_t)n + 1 > *cap) {
        char *nb = pld_mem_realloc(*buf, (size_t)n + 1);
        if (!nb) {
            /* no memory for it: the message is matched and dropped (a truncation
             * error, expected) and the rank is named as missing */
            char one;
            (void)(MPI_Recv(&one, n > 0 ? 1 : 0, MPI_CHAR, r, TAG_TRACE, MPI_COMM_WORLD, MPI_STATUS_IGNORE) ==
                   MPI_SUCCESS);
            return 0;
        }
        *buf = nb;
        *cap = (size_t)n + 1;
    }
    if (MPI_Recv(*buf, n, MPI_CHAR, r, TAG_TRACE, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return 0;
    const char *nul = memchr(*buf, '\0', (size_t)n);
    if (nul) {
        pld_buf_putn(flows, nul + 1, (size_t)(*buf + n - (nul + 1)));
        n = (int)(nul - *buf);
    }
    if (f && n > 0 && (fputs(",\n", f) == EOF || fwrite(*buf, 1, (size_t)n, f) != (size_t)n))
        return -1;
    return 1;
}

int observe_write_trace(observe_t *o, double wait_s, char *err, size_t errn)
{
    if (!o || !o->trace_path)
        return 0;
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    pld_buf_t mine;
    pld_buf_init(&mine);
    pld_trace_json(o->tr, o->rank, o->size, host, o->offset, o->origin, &mine);
    /* the arrows' records: after a NUL (other ranks), in flows (rank 0) */
    const size_t text_len = mine.len;
    const int text_oom = mine.oom;
    pld_buf_t flows;
    pld_buf_init(&flows);
    if (o->rank != 0)
        pld_buf_putc(&mine, '\0');
    flow_records(o->tr, o->rank, o->origin + o->offset, o->rank != 0 ? &mine : &flows);
    if (o->rank != 0) {
        /* a fragment too large for one message, or out of memory: a note instead */
        char note[160];
        const char *p = mine.p ? mine.p : "";
        size_t n = mine.len;
        if (!text_oom && (mine.oom || n > INT_MAX))
            n = text_len; /* no room for the arrows' records: the events without them */
        if (text_oom || n > INT_MAX) {
            snprintf(note, sizeof note, "{\"name\":\"trace lost\",\"ph\":\"i\",\"s\":\"p\",\"ts\":0,\"pid\":%d,\"tid\":0,"
                                        "\"args\":{\"why\":\"%s\"}}",
                     o->rank, text_oom ? "out of memory" : "the rank's events exceed 2 GiB");
            p = note;
            n = strlen(note);
        }
        int rc = MPI_Send(p, (int)n, MPI_CHAR, 0, TAG_TRACE, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
        pld_buf_fini(&mine);
        pld_buf_fini(&flows);
        if (rc)
            snprintf(err, errn, "MPI failed while sending the trace to rank 0");
        return rc;
    }
    /* rank 0 streams the file: its own events, then every rank's as they come */
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s.tmp", o->trace_path);
    FILE *f = fopen(tmp, "w");
    int ok = f != NULL && !text_oom;
    if (ok)
        ok = fputs("{\"traceEvents\":[\n", f) != EOF && fwrite(mine.p ? mine.p : "", 1, text_len, f) == text_len;
    pld_buf_fini(&mine);
    double deadline = MPI_Wtime() + wait_s;
    pld_buf_t missing;
    pld_buf_init(&missing);
    char *buf = NULL;
    size_t cap = 0;
    for (int r = 1; r < o->size; r++) {
        /* receive even when the file failed: the ranks are sending */
        int got = recv_fragment(r, deadline, ok ? f : NULL, &buf, &cap, &flows);
        if (got < 0)
            ok = 0;
        else if (got == 0)
            pld_buf_printf(&missing, "%s%d", missing.len ? ", " : "", r);
    }
    pld_mem_free(buf);
    if (ok && !flows.oom && flow_write(f, flows.p, flows.len) < 0)
        ok = 0;
    pld_buf_fini(&flows);
    if (ok) {
        fprintf(f, "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"tool\":\"pldrun\",\"ranks\":%d,"
                   "\"clock\":\"rank 0's CLOCK_MONOTONIC, zero after the clock exchange\"",
                o->size);
        if (missing.len)
            fprintf(f, ",\"ranks_missing\":\"%s (did not stop)\"", missing.p);
        ok = fputs("}}\n", f) != EOF;
    }
    pld_buf_fini(&missing);
    int rc = 0;
    if (f && fclose(f) != 0)
        ok = 0;
    if (!ok || rename(tmp, o->trace_path) != 0) {
        snprintf(err, errn, "--trace %s: cannot write the file: %s", o->trace_path,
                 errno ? strerror(errno) : "out of memory");
        remove(tmp);
        rc = -1;
    }
    return rc;
}
