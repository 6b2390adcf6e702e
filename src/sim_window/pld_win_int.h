/* pld_win_int.h - internals shared by pld_win.c (system, domains, progress,
 * status board) and pld_win_ops.c (put/get/add/notify). Also used by
 * tests/mpi/test_win.c and bench/bench_win.c, which need the MPI handles of a
 * domain to compare against plain MPI on the same window. Includes mpi.h. */
#ifndef PLD_WIN_INT_H
#define PLD_WIN_INT_H

#include "pld_win.h"

#include <mpi.h>
#include <stdarg.h>

/* A batch's end restarts the serve gap's clock only while the last real
 * serve is at most this old (pld_win_ops.c, batch_served). */
#define PLD_WIN_SERVE_STALE_NS 2000000

/* Window layout on every member (offsets from the aligned base):
 *   [0, bytes)                  user window (the slots of the domain)
 *   [bytes, bytes + SLACK)      slack: reachable, never part of a view
 *   [ctl, ctl + PLD_WIN_CTL)    control words, not reachable by the API
 *                               (ctl = align_up(bytes + SLACK, 64); int32 FP16/BF16 lock at ctl)
 * The MPI window starts up to PLD_WIN_BASE_ALIGN - 1 bytes before the aligned base;
 * that offset differs per member and is exchanged at creation (off[]). */
#define PLD_WIN_CTL 64
#define PLD_WIN_LOCK_OFF 0 /* lock word, relative to ctl */

/* A signal carried by a message (hybrid transport, pld_win_msg.c). */
typedef struct pld_win_msg {
    int64_t disp;  /* byte offset of the cell in the target's window */
    int32_t v;     /* value to set or add */
    int32_t kind;  /* PLD_WIN_MSG_ADD, _SET; _FLUSH (answer when everything before it is
                      applied), _FLUSHED (the answer) */
} pld_win_msg_t;
enum { PLD_WIN_MSG_ADD = 0, PLD_WIN_MSG_SET = 1, PLD_WIN_MSG_FLUSH = 2, PLD_WIN_MSG_FLUSHED = 3 };
/* Messages in flight from one rank (sends not yet completed locally). */
#define PLD_WIN_SENDQ 64

struct pld_win_dom {
    pld_win_sys_t *sys;
    pld_win_dom_t *next;    /* sys's list of live domains (newest first) */
    pld_win_transport_t tr; /* resolved: RMA, SHM or LOCAL */
    int rank, size;
    int members[PLD_WIN_MAX_RANKS];
    size_t bytes;  /* as created */
    size_t extent; /* bytes + PLD_WIN_SLACK */
    size_t ctl;    /* offset of the control words */
    size_t alloc;  /* bytes allocated per member (MPI or malloc) */
    char *base;    /* aligned local base */
    char *peer[PLD_WIN_MAX_RANKS];     /* shm, local: aligned base of each member as mapped here */
    MPI_Aint off[PLD_WIN_MAX_RANKS];   /* aligned base - window start, per member */
    void *raw;                         /* local: the malloc'd block */
    MPI_Comm comm;                     /* MPI_COMM_NULL for local */
    MPI_Win win;                       /* MPI_WIN_NULL for local; hybrid: MPI_Win_create over the
                                          shared segment, for the members on other nodes */
    /* hybrid only (pld_win_msg.c): the members on this node share one
     * MPI_Win_allocate_shared segment (node, shwin; peer[p] != NULL for them);
     * signal cells of members on other nodes are updated by messages on sig,
     * applied by the cell's owner (rbuf/rreq: the posted receive) */
    MPI_Comm node, sig;
    MPI_Win shwin;
    MPI_Request rreq;
    pld_win_msg_t rbuf;
    int pend[PLD_WIN_MAX_RANKS]; /* signal messages sent to each member since its last flush */
    int batched;                 /* puts/gets issued in the current batch, not yet flushed */
    _Alignas(8) unsigned char ctx[PLD_WIN_CTX_BYTES];
};

struct pld_win_sys {
    pld_win_transport_t tr; /* as requested (AUTO resolves per domain) */
    int mpi;                /* 0 for LOCAL: no MPI call at all */
    int rank, size;
    int single_node;
    int *node_of;           /* world rank -> node id (lowest world rank on that node) */
    MPI_Comm world;         /* dup of MPI_COMM_WORLD, MPI_ERRORS_RETURN */
    MPI_Win status_win;     /* the status board */
    pld_win_status_t *status; /* own record (in status_win, or &local_status) */
    pld_win_status_t local_status;
    pld_win_dom_t *doms;    /* live domains, newest first */
    int nhybrid;            /* live hybrid domains (pld_win_poll serves their messages) */
    int64_t pending;        /* signal messages sent and not yet flushed (all domains) */
    int64_t flushing;       /* flush requests not yet answered */
    MPI_Request sreq[PLD_WIN_SENDQ]; /* sends in flight and their buffers */
    pld_win_msg_t sbuf[PLD_WIN_SENDQ];
    int nsend;                       /* how many sreq are not MPI_REQUEST_NULL */
    int64_t served_ns;               /* the serve gap's clock (pld_win_ops.c): the last serve, or
                                        the end of a batch's flush that stood in for one */
    int64_t applied_ns;              /* pld_trace_now() at the last pld_win_msg_serve_all */
    char *xcache;                    /* the send buffer of two-sided transfer sets, kept between
                                        them (pld_win_msg.c) */
    size_t xcache_bytes;
    int xcache_busy;                 /* a set holds it */
    int batch;              /* pld_win_batch_begin depth */
    int split_hosts;        /* pld_win_test_split_hosts: k > 0 puts world rank r on host r % k */
    int split_blocked;      /* ... or on host r / ceil(size / k) */
    pld_win_counters_t counters;
    uint64_t spin;          /* polls since this rank last put/got/added/notified (a new wait) */
    int entered;            /* an rma op or read_cell entered MPI progress since the last poll */
    size_t chunk_bytes;     /* largest single MPI transfer (1 GiB: MPI counts are int); tests
                               lower it to exercise the chunking */
    char last_err[256];
    /* The sticky error (pld_win_sys_error): the first MPI call of this rank
     * that failed, checked or not; PLD_OK while none did. */
    pld_status_t sticky;
    char sticky_msg[256];
    /* pld_win_test_fail_mpi (PLD_TESTING builds): the MPI function whose call
     * number fail_after + 1 from now reports MPI_ERR_OTHER (fail_after < 0: off) */
    char fail_name[48];
    long fail_after;
};

/* Records and returns PLD_E_MPI for a failed MPI call: "<name> failed on rank
 * R: <MPI_Error_string>"; `call` is the call text (the name is cut at '('). */
pld_status_t pld_win_mpi_fail(pld_win_sys_t *sys, const char *call, int rc, char *err, size_t errn);
/* Formats a message into err (and sys->last_err) and returns st. */
pld_status_t pld_win_fail(pld_win_sys_t *sys, pld_status_t st, char *err, size_t errn, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Makes st, with sys->last_err as its message, the sticky error unless one
 * is set already (a failure where no status can be returned). */
void pld_win_stick(pld_win_sys_t *sys, pld_status_t st);

/* Every MPI call of the layer is checked (tests/check_mpi_calls.py):
 *   PLD_MPI_CHECK(call)  in a function that returns a status: a failure
 *                        returns PLD_E_MPI from it (and sets the sticky error);
 *   PLD_MPI_NOTE(call)   in a function that returns none (progress, the status
 *                        board, teardown): a failure sets the sticky error,
 *                        which the next put/get/add/notify/status_get and
 *                        pld_win_poll return;
 *   rc = MPI_...(...)    when several calls share one error path (the rc is
 *                        checked, and reported with pld_win_mpi_fail).
 * Both macros expect `sys` in scope (CHECK also `err`, `errn`). */
#ifdef PLD_TESTING
/* rc, or MPI_ERR_OTHER when the test hook (pld_win_test_fail_mpi) picks this call */
int pld_win_test_rc(pld_win_sys_t *sys, const char *call, int rc);
#define PLD_MPI_RC(call) pld_win_test_rc(sys, #call, (call))
#else
#define PLD_MPI_RC(call) (call)
#endif

/* Turns a failing MPI call into PLD_E_MPI; expects `sys`, `err` and `errn` in
 * scope and returns from the enclosing function. */
#define PLD_MPI_CHECK(call)                                                                                    \
    do {                                                                                                       \
        int pld_rc_ = PLD_MPI_RC(call);                                                                        \
        sys->counters.mpi_calls++;                                                                             \
        if (pld_rc_ != MPI_SUCCESS)                                                                            \
            return pld_win_mpi_fail(sys, #call, pld_rc_, err, errn);                                           \
    } while (0)

/* Records a failing MPI call as the sticky error (first failure wins) and
 * goes on; expects `sys` in scope. */
#define PLD_MPI_NOTE(call)                                                                                     \
    do {                                                                                                       \
        int pld_rc_ = PLD_MPI_RC(call);                                                                        \
        sys->counters.mpi_calls++;                                                                             \
        if (pld_rc_ != MPI_SUCCESS)                                                                            \
            pld_win_mpi_fail(sys, #call, pld_rc_, NULL, 0);                                                    \
    } while (0)

/* The sticky error, when there is one: copies its message into err (and
 * last_err) and returns it; PLD_OK otherwise. For the entry of the
 * non-collective operations. */
static inline pld_status_t pld_win_sticky(pld_win_sys_t *sys, char *err, size_t errn)
{
    return sys->sticky == PLD_OK ? PLD_OK : pld_win_fail(sys, sys->sticky, err, errn, "%s", sys->sticky_msg);
}


/* The host of world rank r as the transports see it: its node, or the
 * test split's host (pld_win_test_split_hosts). */
static inline int pld_win_host_of(const pld_win_sys_t *sys, int r)
{
    if (sys->split_hosts <= 0)
        return sys->node_of[r];
    if (!sys->split_blocked)
        return r % sys->split_hosts;
    return r / ((sys->size + sys->split_hosts - 1) / sys->split_hosts);
}

/* ---- hybrid transport: signals by message (pld_win_msg.c) ----
 * A notify to a member on another node is a message {disp, v, kind} on the
 * domain's `sig` communicator; the owner of the cell applies it with a C11
 * atomic (so every update of a cell goes through one mechanism: CPU atomics
 * on the owner's memory). pld_win_msg_drain makes sure every message this
 * rank sent has been applied: a flush request to each member it sent to,
 * answered once everything before it is applied (messages of one issuer to
 * one target stay in order). The status record counts the messages sent and
 * applied (msgs_sent, msgs_applied) for the deadlock detector. */
pld_status_t pld_win_msg_open(pld_win_dom_t *d, char *err, size_t errn);
void pld_win_msg_close(pld_win_dom_t *d);
pld_status_t pld_win_msg_notify(pld_win_dom_t *d, int peer, size_t disp, int32_t v, int set, char *err, size_t errn);
/* Applies the signal messages that have arrived for every hybrid domain
 * (answering flush requests), completes finished sends. Enters MPI progress. */
void pld_win_msg_serve_all(pld_win_sys_t *sys);
/* Waits until every signal message of this rank was applied by its target,
 * serving incoming ones meanwhile (a round trip to each member it sent to
 * since the last drain; nothing when there is none). Gives up (PLD_E_RUNTIME) when the status
 * board's abort flag is set or on the sticky error. */
pld_status_t pld_win_msg_drain(pld_win_sys_t *sys, char *err, size_t errn);
/* A barrier of d's members that serves messages while it waits (a member may
 * still wait for our ack). */
pld_status_t pld_win_msg_barrier(pld_win_dom_t *d, char *err, size_t errn);

/* The MPI handles of a domain (MPI_COMM_NULL / MPI_WIN_NULL for local), and
 * the displacement in the MPI window of byte `disp` of member p's window. */
MPI_Comm pld_win_dom_mpi_comm(const pld_win_dom_t *d);
MPI_Win pld_win_dom_mpi_win(const pld_win_dom_t *d);
MPI_Aint pld_win_dom_mpi_disp(const pld_win_dom_t *d, int p, size_t disp);

#endif
