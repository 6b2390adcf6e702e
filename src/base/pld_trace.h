/* pld_trace.h - what a rank did, as events: the recorder behind --trace
 * (a Chrome/Perfetto JSON timeline), -v and --log-dir (one text line per
 * event).
 *
 * One recorder per rank (no MPI here: the tool gathers the ranks' JSON
 * fragments and measures the clock offsets). The interpreter fills a
 * pld_ev_t at each traced site and hands it over when the step is done
 * (pld_trace_end); container steps (a dispatch, a kernel task, a block, a
 * collective, a phase) are announced first (pld_trace_begin) so that the
 * text log shows them opening. With no recorder the interpreter skips every
 * site on one pointer test.
 *
 * Strings an event names (its name, function, object) are copied into the
 * recorder, so they may live on the caller's stack. Events are kept in
 * completion order up to `limit`; then the first half stays and the second
 * half becomes a ring of the latest events, so the end of a run (where it
 * stuck) is kept; the events in between are counted as dropped (the JSON
 * says how many) but still logged. Not thread-safe: one rank's blocks are
 * coroutines of one thread. */
#ifndef PLD_TRACE_H
#define PLD_TRACE_H

#include "pld_buf.h"
#include "pld_status.h"

#include <stddef.h>
#include <stdint.h>

typedef enum pld_ev_kind {
    PLD_EV_RUN = 0,  /* one run of the entry function (--dispatches: one per run) */
    PLD_EV_DISPATCH, /* a CHIP function dispatched to this rank (device=) */
    PLD_EV_TASK,     /* a kernel task: one launch through the kernel backend */
    PLD_EV_BLOCK,    /* one block of a multi-block launch or SPMD grid */
    PLD_EV_COLL,     /* a collective (pld.tensor.allreduce, ...) */
    PLD_EV_PHASE,    /* a step of a collective's protocol (barrier, epilogue) */
    PLD_EV_WINDOW,   /* a comm domain's window created */
    PLD_EV_BARRIER,  /* the barrier between two dispatches of the entry */
    PLD_EV_PUT,      /* window data written on a peer (put, remote_store) */
    PLD_EV_GET,      /* window data read from a peer (get, remote_load) */
    PLD_EV_ADD,      /* element-wise atomic add into a peer's window */
    PLD_EV_NOTIFY,   /* a signal cell set or incremented */
    PLD_EV_WAIT,     /* a wait on a signal cell (blocked time, value seen) */
    PLD_EV_ERROR,    /* a runtime error (instant) */
    PLD_EV__COUNT
} pld_ev_kind_t;

/* One event. Unused numeric fields are -1 (peer, dom, bytes, offset) or 0. */
typedef struct pld_ev {
    int64_t t0, t1;          /* pld_trace_now() at the start and the end (instants: t1 = t0) */
    int32_t kind;            /* pld_ev_kind_t */
    int32_t track;           /* 0 = the rank's orchestration; 1 + b = block b; lanes above (pld_trace_track) */
    const char *name;        /* op, kernel, function or collective name */
    const char *func;        /* function of the site, or NULL */
    const char *obj;         /* window buffer, cell or signal text, or a message; or NULL */
    int32_t line, col;       /* source location, 0 when none */
    int32_t peer, peer_world;/* domain rank and world rank of the other side, -1 none */
    int32_t dom;             /* comm domain index, -1 none */
    int64_t bytes, offset;   /* bytes moved and window byte offset (cells: the cell's offset) */
    int32_t value, expected; /* notify: the value; wait: found and expected */
    int32_t cmp;             /* wait: 0 ==, 1 >=, 2 >= unsigned; notify: 1 set, 0 add */
    int32_t failed;          /* the step stopped with an error (waits: hang, deadlock, abort) */
    int64_t count;           /* blocks of a task, members of a window, 0 otherwise */
} pld_ev_t;

typedef struct pld_trace pld_trace_t;

/* A text line (no newline) for the log, when the recorder has a sink. */
typedef void (*pld_trace_sink_fn)(void *ctx, const char *line, size_t len);

/* Creates a recorder. keep: record events for the JSON timeline (--trace);
 * sink: called with one line per event (-v, --log-dir), or NULL; limit: how
 * many events are kept (0 = PLD_TRACE_DEFAULT_LIMIT). file names locations in
 * log lines (borrowed). NULL on out of memory. */
#define PLD_TRACE_DEFAULT_LIMIT 500000
pld_trace_t *pld_trace_create(int keep, size_t limit, pld_trace_sink_fn sink, void *sink_ctx, const char *file);
void pld_trace_destroy(pld_trace_t *tr);

/* Monotonic clock in nanoseconds (CLOCK_MONOTONIC). */
int64_t pld_trace_now(void);
/* Testing hook, active only in a build with PLD_TESTING (else a no-op): adds
 * ns to every later pld_trace_now() of this process, as if its clock were
 * another host's (tests of the clock exchange). */
void pld_trace_test_skew(int64_t ns);
/* A fresh event of kind k: every numeric field unused, t0 = now. */
void pld_trace_ev_init(pld_ev_t *ev, pld_ev_kind_t k);
/* Announces container event ev (logs "begin ..."); ev->t0 stays. */
void pld_trace_begin(pld_trace_t *tr, const pld_ev_t *ev);
/* Records ev with t1 = now (instants: t1 = t0) and logs it. */
void pld_trace_end(pld_trace_t *tr, pld_ev_t *ev);

/* The track of a block and lane: 0 for the orchestration (block < 0), else
 * 1 + block, with AIV lanes / cluster cores (lane >= 0) on their own tracks
 * 1 + block + PLD_TRACE_LANE_STRIDE * (1 + lane). */
#define PLD_TRACE_LANE_STRIDE 100000
int32_t pld_trace_track(int64_t block, int64_t lane);

/* Number of events kept and dropped (above the limit). */
size_t pld_trace_count(const pld_trace_t *tr);
size_t pld_trace_dropped(const pld_trace_t *tr);
/* Event i (i < count) in completion order, borrowed. */
const pld_ev_t *pld_trace_event(const pld_trace_t *tr, size_t i);

/* Appends this rank's part of a Chrome trace (the "traceEvents" array's
 * elements, comma-separated, no brackets): metadata naming the process
 * (pid = rank, "rank R of P" + host) and every track used, then every event
 * with ts = (t - origin_ns - offset_ns) / 1000 microseconds: offset_ns is
 * this rank's clock minus the reference clock, origin_ns the reference
 * clock's zero. Returns PLD_E_NOMEM when b ran out of memory. */
pld_status_t pld_trace_json(const pld_trace_t *tr, int rank, int nranks, const char *host, int64_t offset_ns,
                            int64_t origin_ns, pld_buf_t *b);
/* The log line of ev (what pld_trace_end hands the sink), into b. */
void pld_trace_format(const pld_trace_t *tr, const pld_ev_t *ev, int begin, pld_buf_t *b);
/* A kind's name as the JSON "cat" and the log say it ("rma", "wait", ...). */
const char *pld_trace_kind_name(pld_ev_kind_t k);

#endif
