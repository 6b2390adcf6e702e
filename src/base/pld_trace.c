/* pld_trace.c - the event recorder (pld_trace.h). */
#include "pld_trace.h"

#include "pld_arena.h"
#include "pld_mem.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct pld_trace {
    int keep;
    size_t limit;
    pld_ev_t *ev;
    size_t n, cap, dropped;
    size_t ring;       /* once full: the next slot of the ring over [limit/2, limit) */
    pld_trace_sink_fn sink;
    void *sink_ctx;
    const char *file;
    /* interned strings: open addressing over mask + 1 slots, copies in arena */
    pld_arena_t arena;
    const char **strs;
    unsigned mask, nstrs;
    int oom;
    pld_buf_t line;    /* the log line being formatted */
};

static const char *const kind_names[PLD_EV__COUNT] = {
    "run", "dispatch", "task", "block", "collective", "phase", "window", "barrier",
    "put", "get", "add", "notify", "wait", "error",
};

const char *pld_trace_kind_name(pld_ev_kind_t k)
{
    return k >= 0 && k < PLD_EV__COUNT ? kind_names[k] : "event";
}

pld_trace_t *pld_trace_create(int keep, size_t limit, pld_trace_sink_fn sink, void *sink_ctx, const char *file)
{
    pld_trace_t *tr = pld_mem_calloc(1, sizeof *tr);
    if (!tr)
        return NULL;
    tr->keep = keep;
    tr->limit = limit ? limit : PLD_TRACE_DEFAULT_LIMIT;
    tr->sink = sink;
    tr->sink_ctx = sink_ctx;
    tr->file = file ? file : "";
    pld_arena_init(&tr->arena);
    pld_buf_init(&tr->line);
    tr->mask = 255;
    tr->strs = pld_mem_calloc(tr->mask + 1, sizeof *tr->strs);
    if (!tr->strs) {
        pld_trace_destroy(tr);
        return NULL;
    }
    return tr;
}

void pld_trace_destroy(pld_trace_t *tr)
{
    if (!tr)
        return;
    pld_mem_free(tr->ev);
    pld_mem_free(tr->strs);
    pld_arena_fini(&tr->arena);
    pld_buf_fini(&tr->line);
    pld_mem_free(tr);
}

#ifdef PLD_TESTING
static int64_t test_skew;
void pld_trace_test_skew(int64_t ns)
{
    test_skew = ns;
}
#else
enum { test_skew = 0 };
void pld_trace_test_skew(int64_t ns)
{
    (void)ns;
}
#endif

int64_t pld_trace_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + test_skew;
}

void pld_trace_ev_init(pld_ev_t *ev, pld_ev_kind_t k)
{
    memset(ev, 0, sizeof *ev);
    ev->kind = k;
    ev->peer = ev->peer_world = ev->dom = -1;
    ev->bytes = ev->offset = -1;
    ev->t0 = pld_trace_now();
}

int32_t pld_trace_track(int64_t block, int64_t lane)
{
    if (block < 0)
        return lane >= 0 ? (int32_t)(PLD_TRACE_LANE_STRIDE * (1 + lane)) : 0;
    return (int32_t)(1 + block + (lane >= 0 ? PLD_TRACE_LANE_STRIDE * (1 + lane) : 0));
}

/* ------------------------------------------------------------ strings */

static unsigned str_hash(const char *s)
{
    unsigned h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static int strs_grow(pld_trace_t *tr)
{
    unsigned nm = tr->mask * 2 + 1;
    const char **ns = pld_mem_calloc(nm + 1, sizeof *ns);
    if (!ns)
        return 0;
    for (unsigned i = 0; i <= tr->mask; i++) {
        if (!tr->strs[i])
            continue;
        unsigned j = str_hash(tr->strs[i]) & nm;
        while (ns[j])
            j = (j + 1) & nm;
        ns[j] = tr->strs[i];
    }
    pld_mem_free(tr->strs);
    tr->strs = ns;
    tr->mask = nm;
    return 1;
}

/* The recorder's copy of s (NULL stays NULL; "?" when out of memory). */
static const char *intern(pld_trace_t *tr, const char *s)
{
    if (!s)
        return NULL;
    if (2 * (tr->nstrs + 1) > tr->mask + 1 && !strs_grow(tr)) {
        tr->oom = 1;
        return "?";
    }
    unsigned j = str_hash(s) & tr->mask;
    for (; tr->strs[j]; j = (j + 1) & tr->mask)
        if (strcmp(tr->strs[j], s) == 0)
            return tr->strs[j];
    const char *c = pld_arena_strndup(&tr->arena, s, strlen(s));
    if (!c) {
        tr->oom = 1;
        return "?";
    }
    tr->strs[j] = c;
    tr->nstrs++;
    return c;
}

/* ------------------------------------------------------------ recording */

static void emit_line(pld_trace_t *tr, const pld_ev_t *ev, int begin)
{
    pld_buf_reset(&tr->line);
    pld_trace_format(tr, ev, begin, &tr->line);
    if (!tr->line.oom)
        tr->sink(tr->sink_ctx, pld_buf_str(&tr->line), tr->line.len);
}

void pld_trace_begin(pld_trace_t *tr, const pld_ev_t *ev)
{
    if (tr && tr->sink)
        emit_line(tr, ev, 1);
}

/* Copies ev into slot c with the recorder's own copies of its strings. */
static void store(pld_trace_t *tr, pld_ev_t *c, const pld_ev_t *ev)
{
    *c = *ev;
    c->name = intern(tr, ev->name);
    c->func = intern(tr, ev->func);
    c->obj = intern(tr, ev->obj);
}

void pld_trace_end(pld_trace_t *tr, pld_ev_t *ev)
{
    if (!tr)
        return;
    ev->t1 = ev->kind == PLD_EV_ERROR ? ev->t0 : pld_trace_now();
    if (tr->sink)
        emit_line(tr, ev, 0);
    if (!tr->keep)
        return;
    if (tr->n >= tr->limit) {
        /* full: the first half stays, the second half is a ring of the
         * latest events (the end of a run, where it stuck, is kept) */
        size_t half = tr->limit / 2, span = tr->limit - half;
        store(tr, &tr->ev[half + tr->ring], ev);
        tr->ring = (tr->ring + 1) % span;
        tr->dropped++;
        return;
    }
    if (tr->n == tr->cap) {
        size_t nc = tr->cap ? tr->cap * 2 : 1024;
        if (nc > tr->limit)
            nc = tr->limit;
        pld_ev_t *ne = pld_mem_realloc(tr->ev, nc * sizeof *ne);
        if (!ne) {
            tr->oom = 1;
            tr->dropped++;
            return;
        }
        tr->ev = ne;
        tr->cap = nc;
    }
    store(tr, &tr->ev[tr->n++], ev);
}

size_t pld_trace_count(const pld_trace_t *tr)
{
    return tr ? tr->n : 0;
}

size_t pld_trace_dropped(const pld_trace_t *tr)
{
    return tr ? tr->dropped : 0;
}

const pld_ev_t *pld_trace_event(const pld_trace_t *tr, size_t i)
{
    if (!tr || i >= tr->n)
        return NULL;
    size_t half = tr->limit / 2, span = tr->limit - half;
    if (!tr->dropped || i < half)
        return &tr->ev[i];
    return &tr->ev[half + (tr->ring + (i - half)) % span]; /* the ring, oldest first */
}

/* ------------------------------------------------------------ output */

static const char *cmp_text(int cmp)
{
    return cmp == 0 ? "==" : cmp == 1 ? ">=" : ">= (unsigned)";
}

static int is_rma(int k)
{
    return k == PLD_EV_PUT || k == PLD_EV_GET || k == PLD_EV_ADD;
}

void pld_trace_format(const pld_trace_t *tr, const pld_ev_t *ev, int begin, pld_buf_t *b)
{
    int k = ev->kind;
    if (ev->track == 0)
        pld_buf_puts(b, "host");
    else if (ev->track < PLD_TRACE_LANE_STRIDE)
        pld_buf_printf(b, "block %d", (int)ev->track - 1);
    else
        pld_buf_printf(b, "block %d lane %d", (int)(ev->track % PLD_TRACE_LANE_STRIDE) - 1,
                       (int)(ev->track / PLD_TRACE_LANE_STRIDE) - 1);
    pld_buf_printf(b, ": %s%s", begin ? "begin " : "", pld_trace_kind_name(k));
    if (is_rma(k) || k == PLD_EV_NOTIFY) {
        /* put pld.tensor.put to rank 1 (world 1): buf, 256 bytes at window offset 0 */
        pld_buf_printf(b, " %s %s rank %d (world %d): %s", ev->name ? ev->name : "", k == PLD_EV_GET ? "from" : "to",
                       (int)ev->peer, (int)ev->peer_world, ev->obj ? ev->obj : "window");
        if (k == PLD_EV_NOTIFY)
            pld_buf_printf(b, " %s %d (cell at window offset %" PRId64 ")", ev->cmp ? "=" : "+=", (int)ev->value,
                           ev->offset);
        else
            pld_buf_printf(b, ", %" PRId64 " bytes at window offset %" PRId64, ev->bytes, ev->offset);
    } else if (k == PLD_EV_WAIT || k == PLD_EV_BARRIER) {
        pld_buf_printf(b, ": %s", ev->obj ? ev->obj : ev->name ? ev->name : "");
        if (!begin)
            pld_buf_printf(b, ": found %d, expected %s %d, %s after %.3f ms", (int)ev->value, cmp_text(ev->cmp),
                           (int)ev->expected, ev->failed ? "stopped" : "satisfied", (double)(ev->t1 - ev->t0) / 1e6);
    } else if (k == PLD_EV_ERROR) {
        pld_buf_printf(b, ": %s", ev->obj ? ev->obj : "");
    } else {
        if (ev->name)
            pld_buf_printf(b, " %s", ev->name);
        if (k == PLD_EV_WINDOW)
            pld_buf_printf(b, " (%s): %" PRId64 " bytes per rank, %d members", ev->obj ? ev->obj : "", ev->bytes,
                           (int)ev->count);
        else if (ev->obj)
            pld_buf_printf(b, k == PLD_EV_RUN ? " (%s)" : " on %s", ev->obj);
        if (k == PLD_EV_TASK && ev->count > 1)
            pld_buf_printf(b, " (%d blocks)", (int)ev->count);
    }
    if (ev->line > 0)
        pld_buf_printf(b, " at %s:%d:%d", tr && tr->file ? tr->file : "", (int)ev->line, (int)ev->col);
    if (ev->func && k != PLD_EV_DISPATCH && k != PLD_EV_RUN && k != PLD_EV_WAIT && k != PLD_EV_BLOCK)
        pld_buf_printf(b, " in %s", ev->func);
    if (!begin && k <= PLD_EV_WINDOW)
        pld_buf_printf(b, " (%.3f ms%s)", (double)(ev->t1 - ev->t0) / 1e6, ev->failed ? ", failed" : "");
    else if (!begin && ev->failed && k != PLD_EV_WAIT && k != PLD_EV_BARRIER && k != PLD_EV_ERROR)
        pld_buf_puts(b, " (failed)");
}

/* A JSON string literal of s. */
static void json_str(pld_buf_t *b, const char *s)
{
    pld_buf_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            pld_buf_printf(b, "\\%c", *p);
        else if (*p < 0x20)
            pld_buf_printf(b, "\\u%04x", *p);
        else
            pld_buf_putc(b, (char)*p);
    }
    pld_buf_putc(b, '"');
}

static void json_meta(pld_buf_t *b, int *first, const char *what, int pid, int tid, const char *key, const char *name,
                      long sort)
{
    pld_buf_printf(b, "%s{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"%s\":", *first ? "" : ",\n",
                   what, pid, tid, key);
    if (name)
        json_str(b, name);
    else
        pld_buf_printf(b, "%ld", sort);
    pld_buf_puts(b, "}}");
    *first = 0;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The sorted distinct tracks of tr's events (owned), *n of them. */
static int32_t *tracks_of(const pld_trace_t *tr, size_t *n)
{
    *n = 0;
    int32_t *t = pld_mem_alloc((tr->n + 1) * sizeof *t);
    if (!t)
        return NULL;
    t[0] = 0; /* the orchestration track is always named */
    size_t m = 1;
    for (size_t i = 0; i < tr->n; i++)
        t[m++] = tr->ev[i].track;
    qsort(t, m, sizeof *t, cmp_i32);
    size_t k = 0;
    for (size_t i = 0; i < m; i++)
        if (k == 0 || t[k - 1] != t[i])
            t[k++] = t[i];
    *n = k;
    return t;
}

static void json_event(pld_buf_t *b, const pld_ev_t *ev, int pid, int64_t zero, const char *file)
{
    int k = ev->kind;
    double ts = (double)(ev->t0 - zero) / 1000.0, dur = (double)(ev->t1 - ev->t0) / 1000.0;
    /* leaves are named by what they do ("put", "wait"), the op in args;
     * containers by the program's names (kernel, function, collective) */
    const int leaf = k >= PLD_EV_PUT || !ev->name;
    pld_buf_puts(b, ",\n{\"name\":");
    json_str(b, leaf ? pld_trace_kind_name(k) : ev->name);
    pld_buf_printf(b, ",\"cat\":\"%s\",\"ph\":\"%s\",\"ts\":%.3f,", pld_trace_kind_name(k), k == PLD_EV_ERROR ? "i" : "X", ts);
    if (k == PLD_EV_ERROR)
        pld_buf_puts(b, "\"s\":\"p\",");
    else
        pld_buf_printf(b, "\"dur\":%.3f,", dur < 0 ? 0.0 : dur);
    pld_buf_printf(b, "\"pid\":%d,\"tid\":%d,\"args\":{", pid, (int)ev->track);
    int first = 1;
#define SEP() (first ? (first = 0, "") : ",")
    if (leaf && ev->name) {
        pld_buf_printf(b, "%s\"op\":", SEP());
        json_str(b, ev->name);
    }
    if (ev->line > 0) {
        char at[PATH_MAX + 32];
        snprintf(at, sizeof at, "%s:%d:%d", file ? file : "", (int)ev->line, (int)ev->col);
        pld_buf_printf(b, "%s\"at\":", SEP());
        json_str(b, at);
    }
    if (ev->func) {
        pld_buf_printf(b, "%s\"function\":", SEP());
        json_str(b, ev->func);
    }
    if (ev->obj) {
        pld_buf_printf(b, "%s\"%s\":", SEP(),
                       k == PLD_EV_ERROR ? "message" : k == PLD_EV_WAIT ? "wait" : k == PLD_EV_NOTIFY ? "cell"
                       : is_rma(k) || k == PLD_EV_COLL ? "window" : k == PLD_EV_WINDOW ? "transport" : "what");
        json_str(b, ev->obj);
    }
    if (ev->peer >= 0)
        pld_buf_printf(b, "%s\"peer\":%d,\"peer_world_rank\":%d", SEP(), (int)ev->peer, (int)ev->peer_world);
    if (ev->dom >= 0)
        pld_buf_printf(b, "%s\"domain\":%d", SEP(), (int)ev->dom);
    if (ev->bytes >= 0)
        pld_buf_printf(b, "%s\"bytes\":%" PRId64, SEP(), ev->bytes);
    if (ev->offset >= 0)
        pld_buf_printf(b, "%s\"%s\":%" PRId64, SEP(), k == PLD_EV_WAIT || k == PLD_EV_NOTIFY ? "cell_offset" : "offset",
                       ev->offset);
    if (k == PLD_EV_NOTIFY)
        pld_buf_printf(b, "%s\"update\":\"%s\",\"value\":%d", SEP(), ev->cmp ? "set" : "add", (int)ev->value);
    if (k == PLD_EV_WAIT)
        pld_buf_printf(b, "%s\"found\":%d,\"expected\":\"%s %d\",\"blocked_us\":%.3f,\"result\":\"%s\"", SEP(),
                       (int)ev->value, cmp_text(ev->cmp), (int)ev->expected, dur, ev->failed ? "stopped" : "satisfied");
    if (ev->count > 0)
        pld_buf_printf(b, "%s\"%s\":%" PRId64, SEP(), k == PLD_EV_WINDOW ? "members" : "blocks", ev->count);
    if (ev->failed && k != PLD_EV_WAIT)
        pld_buf_printf(b, "%s\"failed\":true", SEP());
#undef SEP
    pld_buf_puts(b, "}}");
}

pld_status_t pld_trace_json(const pld_trace_t *tr, int rank, int nranks, const char *host, int64_t offset_ns,
                            int64_t origin_ns, pld_buf_t *b)
{
    int first = 1;
    char pname[160];
    snprintf(pname, sizeof pname, "rank %d of %d%s%s", rank, nranks, host && host[0] ? " on " : "", host ? host : "");
    json_meta(b, &first, "process_name", rank, 0, "name", pname, 0);
    json_meta(b, &first, "process_sort_index", rank, 0, "sort_index", NULL, rank);
    size_t nt;
    int32_t *tracks = tracks_of(tr, &nt);
    if (!tracks)
        return PLD_E_NOMEM;
    for (size_t i = 0; i < nt; i++) {
        char tname[64];
        int32_t t = tracks[i];
        if (t == 0)
            snprintf(tname, sizeof tname, "orchestration");
        else if (t < PLD_TRACE_LANE_STRIDE)
            snprintf(tname, sizeof tname, "block %d", (int)t - 1);
        else
            snprintf(tname, sizeof tname, "block %d lane %d", (int)(t % PLD_TRACE_LANE_STRIDE) - 1,
                     (int)(t / PLD_TRACE_LANE_STRIDE) - 1);
        json_meta(b, &first, "thread_name", rank, t, "name", tname, 0);
        json_meta(b, &first, "thread_sort_index", rank, t, "sort_index", NULL, (long)t);
    }
    pld_mem_free(tracks);
    const int64_t zero = origin_ns + offset_ns; /* this rank's clock reading at the reference zero */
    for (size_t i = 0; i < tr->n; i++)
        json_event(b, pld_trace_event(tr, i), rank, zero, tr->file);
    if (tr->dropped || tr->oom) {
        /* at the first kept event after the gap */
        const pld_ev_t *after = tr->dropped ? pld_trace_event(tr, tr->limit / 2) : NULL;
        pld_buf_printf(b, ",\n{\"name\":\"events dropped\",\"cat\":\"trace\",\"ph\":\"i\",\"s\":\"p\",\"ts\":%.3f,"
                          "\"pid\":%d,\"tid\":0,\"args\":{\"dropped\":%zu,\"limit\":%zu,\"kept\":\"the first and the "
                          "last half of the limit\"}}",
                       after ? (double)(after->t0 - zero) / 1000.0 : 0.0, rank, tr->dropped, tr->limit);
    }
    return b->oom ? PLD_E_NOMEM : PLD_OK;
}
