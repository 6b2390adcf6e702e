/* flow.c - arrows from notifies and puts to the waits they released (flow.h). */
#include "flow.h"

#include "pld_mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { REC_NOTIFY = 1, REC_WAIT = 2, REC_WRITE = 3 };

typedef struct rec {
    int64_t t0, t1;   /* ns on the trace's clock */
    int64_t offset;   /* notify / wait: the cell's byte offset in the domain's window */
    int32_t kind;     /* REC_* */
    int32_t pid, tid; /* the slice: world rank and track */
    int32_t target;   /* notify / write: the peer's world rank; wait: its own rank */
    int32_t dom;
    int32_t pad;
} rec_t;

void flow_records(const pld_trace_t *tr, int rank, int64_t zero, pld_buf_t *b)
{
    for (size_t i = 0; i < pld_trace_count(tr); i++) {
        const pld_ev_t *ev = pld_trace_event(tr, i);
        rec_t r;
        memset(&r, 0, sizeof r);
        if (ev->kind == PLD_EV_NOTIFY && ev->peer_world >= 0 && ev->dom >= 0 && !ev->failed)
            r.kind = REC_NOTIFY, r.target = ev->peer_world;
        else if (ev->kind == PLD_EV_WAIT && ev->dom >= 0 && ev->offset >= 0 && !ev->failed)
            r.kind = REC_WAIT, r.target = rank;
        else if ((ev->kind == PLD_EV_PUT || ev->kind == PLD_EV_ADD) && ev->peer_world >= 0 && !ev->failed)
            r.kind = REC_WRITE, r.target = ev->peer_world;
        else
            continue;
        r.t0 = ev->t0 - zero;
        r.t1 = ev->t1 - zero;
        r.offset = ev->offset;
        r.pid = rank;
        r.tid = ev->track;
        r.dom = ev->dom;
        pld_buf_putn(b, (const char *)&r, sizeof r);
    }
}

/* notifies ordered by (target, dom, offset, t0): the candidates of a wait */
static int by_cell(const void *a, const void *b)
{
    const rec_t *x = *(const rec_t *const *)a, *y = *(const rec_t *const *)b;
    if (x->target != y->target)
        return x->target < y->target ? -1 : 1;
    if (x->dom != y->dom)
        return x->dom < y->dom ? -1 : 1;
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    return (x->t0 > y->t0) - (x->t0 < y->t0);
}

/* notifies ordered by (pid, tid, target, t0): the notify that publishes a write */
static int by_issuer(const void *a, const void *b)
{
    const rec_t *x = *(const rec_t *const *)a, *y = *(const rec_t *const *)b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->target != y->target)
        return x->target < y->target ? -1 : 1;
    return (x->t0 > y->t0) - (x->t0 < y->t0);
}

/* The first notify (in is, by_issuer order) of rank pid's track tid to
 * target that started at or after t, or NULL. */
static const rec_t *first_notify(const rec_t *const *is, size_t nn, int32_t pid, int32_t tid, int32_t target, int64_t t)
{
    rec_t key;
    memset(&key, 0, sizeof key);
    key.pid = pid;
    key.tid = tid;
    key.target = target;
    key.t0 = t;
    const rec_t *kp = &key;
    size_t lo = 0, hi = nn;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (by_issuer(&is[mid], &kp) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < nn && is[lo]->pid == pid && is[lo]->tid == tid && is[lo]->target == target ? is[lo] : NULL;
}

/* One arrow: "s" inside the producer's slice (its middle, or earlier so as
 * not to end after the wait), "f" inside the wait's slice, at its end (when
 * it was released), never before "s". */
/* the error of the merged clock between ranks that a notify -> wait match
 * tolerates (a notify seen starting up to this long after the wait ended) */
#define FLOW_SKEW_NS 2000000

static int same_cell(const rec_t *n, const rec_t *w)
{
    return n->target == w->target && n->dom == w->dom && n->offset == w->offset;
}

static int arrow(FILE *f, const char *name, long id, const rec_t *from, const rec_t *to)
{
    int64_t ft = to->t1 - 1 > to->t0 ? to->t1 - 1 : to->t0;
    int64_t fs = from->t0 + (from->t1 - from->t0) / 2;
    if (fs > ft)
        fs = ft;
    if (fs < from->t0)
        fs = from->t0;
    if (ft < fs)
        ft = fs < to->t1 ? fs : to->t1;
    return fprintf(f, ",\n{\"name\":\"%s\",\"cat\":\"flow\",\"ph\":\"s\",\"id\":%ld,\"ts\":%.3f,\"pid\":%d,\"tid\":%d}"
                      ",\n{\"name\":\"%s\",\"cat\":\"flow\",\"ph\":\"f\",\"bp\":\"e\",\"id\":%ld,\"ts\":%.3f,\"pid\":%d,"
                      "\"tid\":%d}",
                   name, id, (double)fs / 1000.0, (int)from->pid, (int)from->tid, name, id, (double)ft / 1000.0,
                   (int)to->pid, (int)to->tid) < 0
               ? -1
               : 0;
}

/* a released wait: the notify (index in the by_cell order) and the wait (index in the records) */
typedef struct release {
    long notify, wait;
} release_t;

static int by_notify(const void *a, const void *b)
{
    const release_t *x = a, *y = b;
    return (x->notify > y->notify) - (x->notify < y->notify);
}

long flow_write(FILE *f, const char *recs, size_t bytes)
{
    const size_t n = bytes / sizeof(rec_t);
    rec_t *r = pld_mem_alloc((n ? n : 1) * sizeof *r);
    const rec_t **nt = pld_mem_alloc((n ? n : 1) * sizeof *nt), **is = pld_mem_alloc((n ? n : 1) * sizeof *is);
    long *released_by = pld_mem_alloc((n ? n : 1) * sizeof *released_by); /* wait i: index in nt, or -1 */
    release_t *wt = pld_mem_alloc((n ? n : 1) * sizeof *wt);
    long *pos = pld_mem_alloc((n ? n : 1) * sizeof *pos);
    long arrows = 0;
    if (!r || !nt || !is || !released_by || !wt || !pos)
        goto done;
    if (n)
        memcpy(r, recs, n * sizeof *r); /* the bytes came unaligned (none: recs may be NULL) */
    size_t nn = 0;
    for (size_t i = 0; i < n; i++)
        if (r[i].kind == REC_NOTIFY)
            nt[nn] = is[nn] = &r[i], nn++;
    qsort(nt, nn, sizeof *nt, by_cell);
    qsort(is, nn, sizeof *is, by_issuer);
    /* notify -> wait: the last notify to the wait's cell that started before the wait ended */
    for (size_t i = 0; i < n; i++) {
        released_by[i] = -1;
        if (r[i].kind != REC_WAIT)
            continue;
        size_t lo = 0, hi = nn; /* the first notify after (cell, t1) */
        rec_t key = r[i];
        key.t0 = r[i].t1;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            const rec_t *kp = &key;
            if (by_cell(&nt[mid], &kp) <= 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        /* none before it on the merged clock: the first one after it, within
         * the clock's error between ranks (FLOW_SKEW_NS) */
        size_t k = lo;
        if (lo > 0 && same_cell(nt[lo - 1], &r[i]))
            k = lo - 1;
        else if (!(lo < nn && same_cell(nt[lo], &r[i]) && nt[lo]->t0 - r[i].t1 <= FLOW_SKEW_NS))
            continue;
        const rec_t *c = nt[k];
        released_by[i] = (long)k;
        if (arrow(f, "notify -> wait", ++arrows, c, &r[i]) < 0)
            goto fail;
    }
    /* the waits that a notify released, by notify; nt's index of each notify */
    size_t nw = 0;
    for (size_t i = 0; i < n; i++)
        if (released_by[i] >= 0)
            wt[nw++] = (release_t){released_by[i], (long)i};
    qsort(wt, nw, sizeof *wt, by_notify);
    for (size_t k = 0; k < nn; k++)
        pos[nt[k] - r] = (long)k;
    /* put -> wait: the first notify to the same target after the write, from the writer's track (program
     * order), else from its rank's orchestration track (after the kernel that wrote); and its waits */
    for (size_t i = 0; i < n; i++) {
        if (r[i].kind != REC_WRITE)
            continue;
        const rec_t *pub = first_notify(is, nn, r[i].pid, r[i].tid, r[i].target, r[i].t1);
        if (!pub && r[i].tid != 0)
            pub = first_notify(is, nn, r[i].pid, 0, r[i].target, r[i].t1);
        if (!pub)
            continue;
        const long p = pos[pub - r];
        size_t a = 0, z = nw; /* the released waits of notify p */
        while (a < z) {
            size_t mid = (a + z) / 2;
            if (wt[mid].notify < p)
                a = mid + 1;
            else
                z = mid;
        }
        for (; a < nw && wt[a].notify == p; a++)
            if (arrow(f, "put -> wait", ++arrows, &r[i], &r[wt[a].wait]) < 0)
                goto fail;
    }
    goto done;
fail:
    arrows = -1;
done:
    pld_mem_free(r);
    pld_mem_free(nt);
    pld_mem_free(is);
    pld_mem_free(released_by);
    pld_mem_free(wt);
    pld_mem_free(pos);
    return arrows;
}
