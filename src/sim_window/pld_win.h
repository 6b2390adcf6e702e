/* pld_win.h - symmetric window memory over MPI one-sided RMA: comm domains,
 * remote put/get/atomic-add, 32-bit signal cells, progress, and a small
 * per-rank status board that the hang watchdog reads.
 *
 * Design (docs/platform.md §3, §7): one MPI_Win_allocate window per comm
 * domain, with a passive-target epoch held open (MPI_Win_lock_all) for the
 * domain's lifetime. Every remote operation completes before it returns
 * (MPI_Win_flush), so a notify issued after a put is ordered after it. With
 * the `shm` transport (all members on one node) the window is an
 * MPI_Win_allocate_shared segment and peers are reached with plain loads,
 * stores and C11 atomics; `rma` always uses MPI calls (what works across
 * nodes); `hybrid` (docs/transport.md) reaches the members on this node like
 * shm and the others with MPI_Put/Get/Accumulate on an MPI_Win_create window
 * over the same memory, and carries their signals as two-sided messages that
 * the cell's owner applies (pld_win_msg.c); `auto` picks shm when every member
 * shares the node, else hybrid. The `local` transport needs no MPI at all
 * (one rank; in-process tests).
 *
 * This header does not expose MPI types: the interpreter uses it without
 * including mpi.h. Errors: PLD_E_MPI with the failing call, MPI's error text
 * and the rank in err. Collective functions say so. */
#ifndef PLD_WIN_H
#define PLD_WIN_H

#include "pld_status.h"
#include "pld_dtype.h"

#include <stddef.h>
#include <stdint.h>

typedef enum pld_win_transport {
    PLD_WIN_AUTO = 0,  /* shm when every domain member shares the node, else hybrid */
    PLD_WIN_RMA,       /* MPI_Win_allocate + MPI_Put/Get/Accumulate */
    PLD_WIN_SHM,       /* MPI_Win_allocate_shared + direct access (one node only) */
    PLD_WIN_LOCAL,     /* no MPI: a single rank, plain memory */
    PLD_WIN_HYBRID     /* shared memory among the members of a node, MPI RMA (data) and
                          messages (signals) between nodes: what auto picks across nodes */
} pld_win_transport_t;

typedef struct pld_win_sys pld_win_sys_t;  /* per process */
typedef struct pld_win_dom pld_win_dom_t;  /* one comm domain and its window */

/* ---- process-wide ---- */

/* Initialises the window layer. With PLD_WIN_LOCAL, MPI is not used (rank 0
 * of 1). Otherwise MPI must be initialised (PLD_E_USAGE if not); collective
 * over MPI_COMM_WORLD (dups it with MPI_ERRORS_RETURN, finds the node of
 * every rank, creates the status board). Errors: PLD_E_MPI, PLD_E_NOMEM.
 * Returns owned *out. */
pld_status_t pld_win_sys_init(pld_win_transport_t tr, pld_win_sys_t **out, char *err, size_t errn);
/* Frees every remaining domain (newest first, so every rank frees them in the
 * same order) and the status board; does not finalize MPI. Collective over
 * world. Takes sys; NULL is a no-op. Returns the sticky error (below): the
 * first failed MPI call of the run or of this teardown, PLD_OK when none
 * failed; err gets its message ("MPI_Win_free failed on rank 2: ...").
 * Everything is freed either way. */
pld_status_t pld_win_sys_fini_checked(pld_win_sys_t *sys, char *err, size_t errn);
/* pld_win_sys_fini_checked without the report. */
void pld_win_sys_fini(pld_win_sys_t *sys);
/* The sticky error: the first MPI call of this rank that failed, counting the
 * calls made by functions that return no status (pld_win_poll,
 * pld_win_read_cell, pld_win_status_set/phase/aborted/abort_all,
 * pld_win_dom_clear, pld_win_dom_destroy). PLD_OK while none failed; then
 * PLD_E_MPI with "<MPI call> failed on rank R: <MPI_Error_string>" in err
 * (err may be NULL). It stays set: from then on pld_win_put/get/add/notify and
 * pld_win_status_get return it at once without calling MPI, and pld_win_poll
 * returns it, so that a wait loop stops with it (the interpreter reports it
 * as a runtime error at the wait). The collective calls (dom_create) do not
 * return early on it: every member must still enter them. Not collective. */
pld_status_t pld_win_sys_error(const pld_win_sys_t *sys, char *err, size_t errn);
/* Testing hook, active only in a build with PLD_TESTING (else a no-op): the
 * call number after + 1 from now of the MPI function `name` (for example
 * "MPI_Win_sync"), among the calls the layer checks with PLD_MPI_CHECK /
 * PLD_MPI_NOTE, reports MPI_ERR_OTHER (the call itself still runs). A NULL
 * name or after < 0 turns it off. Not collective. */
void pld_win_test_fail_mpi(pld_win_sys_t *sys, const char *name, long after);
/* Testing hook: from now on the transports treat world rank r as running on
 * host r % k (k >= 1; blocked: host r / ceil(world size / k), as mpirun
 * fills hosts), whatever node it is on, so that one node exercises the paths
 * between hosts (hybrid's messages and RMA; auto's choice). The memory of the
 * members of one real node is still shared. Call it before creating any
 * domain. Not collective, but every rank must make the same call. k <= 0
 * restores the real nodes. */
void pld_win_test_split_hosts(pld_win_sys_t *sys, int k, int blocked);
int pld_win_world_rank(const pld_win_sys_t *sys);  /* MPI_COMM_WORLD rank (0 for local) */
int pld_win_world_size(const pld_win_sys_t *sys);  /* MPI_COMM_WORLD size (1 for local) */
/* 1 when every world rank runs on this node (MPI_COMM_TYPE_SHARED). */
int pld_win_single_node(const pld_win_sys_t *sys);
const char *pld_win_transport_name(pld_win_transport_t tr);  /* "auto", "rma", "shm", "local", "hybrid" */
/* Parses a transport name; returns 0 on success, -1 for an unknown name. */
int pld_win_transport_from_name(const char *name, pld_win_transport_t *out);

/* ---- domains ---- */

/* Creates a domain over the world ranks members[0..n) (sorted, distinct,
 * 1 <= n <= PLD_WIN_MAX_RANKS; domain rank i = members[i]) with `bytes` window
 * bytes per member, zero filled, 64-byte aligned base (the PyPTO contract is
 * 32), plus PLD_WIN_SLACK extra bytes that are never part of a view but may be
 * read and written (FP16 tail reads round up to 32 bytes; semantics §1.5).
 * The transport is the system's, with AUTO resolved here: SHM when every
 * member is on this node, else RMA. Collective over the members only; ranks
 * not in members must not call it. Domains must be created (and destroyed) in
 * the same order on every member. With rma, when two members share a node,
 * creation starts with a barrier of the members and domain rank 0 holds a
 * job-wide creation lock across MPI_Win_allocate (Open MPI 4.1's osc rdma
 * gives concurrently created windows of disjoint groups the same shared-memory
 * file; see pld_win.c). Errors: PLD_E_USAGE (bad member list, this
 * rank not a member, SHM over several nodes; detected before any MPI call),
 * PLD_E_MPI, PLD_E_NOMEM. Returns owned *out. */
pld_status_t pld_win_dom_create(pld_win_sys_t *sys, const int *members, int n, size_t bytes, pld_win_dom_t **out,
                                char *err, size_t errn);
/* Frees the window and the communicator. Collective over the members (starts
 * with a barrier, so no member still accesses the memory). Takes d; NULL is a
 * no-op. A failed MPI call sets the sticky error (pld_win_sys_error). */
void pld_win_dom_destroy(pld_win_dom_t *d);
int pld_win_dom_rank(const pld_win_dom_t *d);          /* this rank's domain rank */
int pld_win_dom_size(const pld_win_dom_t *d);
int pld_win_dom_world_rank(const pld_win_dom_t *d, int domain_rank); /* -1 if out of range */
size_t pld_win_dom_bytes(const pld_win_dom_t *d);      /* `bytes` as created */
size_t pld_win_dom_extent(const pld_win_dom_t *d);     /* bytes + PLD_WIN_SLACK: the reachable range */
/* Local window memory (borrowed; valid until destroy). Plain loads and stores
 * of it are allowed; they are published by the next notify and made current
 * by read_cell (release/acquire, semantics §1.6). */
void *pld_win_dom_base(const pld_win_dom_t *d);
pld_win_transport_t pld_win_dom_transport(const pld_win_dom_t *d); /* RMA, SHM, HYBRID or LOCAL (never AUTO) */
/* The host of member `domain_rank` as the transports see it (its node, or
 * the test split's host): equal for two members iff they share a host, the
 * same value on every member; 0 for local and out of range. */
int pld_win_dom_host(const pld_win_dom_t *d, int domain_rank);
/* Zeroes this rank's window memory (bytes and slack; not the layer's control
 * words) and publishes it. Not collective: callers agree on when (nobody may
 * access this rank's window meanwhile). */
void pld_win_dom_clear(pld_win_dom_t *d);
/* Window state kept between runs (pld_win_state.c): this rank's window
 * memory of d (pld_win_dom_extent bytes: the window and its slack), with the
 * caller's tag (text naming what the window holds), written to path through
 * a temporary file renamed into place; load reads such a file back into the
 * window and publishes it (as pld_win_dom_clear does). Load refuses a file
 * whose tag or size differ (PLD_E_USAGE; the file's tag in got, when given)
 * before any byte of the window changes; an unreadable, foreign or
 * truncated file is PLD_E_IO (a truncated body leaves the window zeroed).
 * Not collective: callers agree afterwards, before anybody reaches the
 * window. Errors: PLD_E_IO, PLD_E_USAGE, PLD_E_NOMEM, PLD_E_MPI (the text in
 * err). */
pld_status_t pld_win_dom_save(pld_win_dom_t *d, const char *path, const char *tag, char *err, size_t errn);
pld_status_t pld_win_dom_load(pld_win_dom_t *d, const char *path, const char *tag, char *got, size_t gotn, char *err,
                              size_t errn);
/* The CommContext of this domain on this rank, in the PyPTO byte layout
 * (host byte order): workSpace@0 = 0, workSpaceSize@8 = 0, rankId@16 (u32),
 * rankNum@20 (u32), winSize@24 (u64, = bytes), windowsIn[64]@32,
 * windowsOut[64]@544 (all 0), 1056 bytes, 8-byte aligned, built at creation.
 * windowsIn[r] for r < rankNum is pld_win_dom_peer_addr(d, r): rank r's
 * base as mapped in this process, or 0 when rank r's window is not mapped
 * here (rma: every peer but this rank), so a compiled kernel reaches it
 * through the runtime instead; windowsIn[r] = 0 for r >= rankNum. Borrowed. */
const void *pld_win_dom_ctx(const pld_win_dom_t *d);
/* Domain rank r's window as mapped in this process (element 0 of its
 * window), or NULL when it is not mapped here (the rma transport maps only
 * this rank's own window) or r is out of range. */
void *pld_win_dom_peer_addr(const pld_win_dom_t *d, int r);
/* Collective steps over the members of d (MPI on the domain's communicator;
 * with `local`, the one member: copies). allgather: `bytes` from each member
 * into recv in domain-rank order; bcast: from domain rank `root`. For a
 * kernel backend that places the domain's window itself (pld_be_coll_t).
 * Errors: PLD_E_MPI (and the sticky error), PLD_E_USAGE for sizes above
 * INT32_MAX or a bad root. */
pld_status_t pld_win_dom_allgather(pld_win_dom_t *d, const void *send, void *recv, size_t bytes);
pld_status_t pld_win_dom_bcast(pld_win_dom_t *d, void *buf, size_t bytes, int root);
pld_status_t pld_win_dom_barrier(pld_win_dom_t *d);
#define PLD_WIN_CTX_BYTES 1056
#define PLD_WIN_MAX_RANKS 64
#define PLD_WIN_SLACK 32
#define PLD_WIN_ALIGN 64
/* The local base of every window is page-aligned, so large transfers between
 * a page-aligned tensor and slot 0 copy at full speed (glibc's memmove on this
 * machine slows down when source and destination differ by a few bytes modulo
 * 4 KiB: docs/benchmarks-pldrun.md). */
#define PLD_WIN_BASE_ALIGN 4096

/* ---- data movement (all complete before returning) ----
 * peer is a domain rank (self included); disp is a byte offset from the start
 * of the peer's window. Bounds are the caller's job (the interpreter reports
 * them with the program location); these functions return PLD_E_RUNTIME for a
 * peer out of range or an access beyond pld_win_dom_extent as a last line.
 * rma: MPI_Put/MPI_Get + MPI_Win_flush(peer) (in chunks of 1 GiB); shm and
 * local: memmove. put (like add and notify, unlike get) counts one in this
 * rank's status epoch. Not collective. */
pld_status_t pld_win_put(pld_win_dom_t *d, int peer, size_t disp, const void *src, size_t bytes, char *err, size_t errn);
pld_status_t pld_win_get(pld_win_dom_t *d, int peer, size_t disp, void *dst, size_t bytes, char *err, size_t errn);
/* Batches: between pld_win_batch_begin and pld_win_batch_end, puts and gets
 * to members reached through MPI (rma; hybrid: other hosts) are issued
 * without waiting for each to complete; batch_end completes them all (one
 * MPI_Win_flush_all per domain touched). A get's destination holds its data
 * only after batch_end. For transfers nothing can observe separately: the
 * runs of one strided region, the reads of one collective step
 * (docs/transport.md). Adds and notifies complete as usual; a notify inside a
 * batch is a usage error (PLD_E_USAGE: its puts would not be complete).
 * Batches nest (only the outermost end flushes). batch_end returns the first
 * error of the flushes. Not collective. */
void pld_win_batch_begin(pld_win_sys_t *sys);
pld_status_t pld_win_batch_end(pld_win_sys_t *sys, char *err, size_t errn);

/* ---- two-sided transfers (hybrid: members on other hosts) ----
 * A set of sends and receives between this rank and members on other hosts
 * of a hybrid domain, carried as two-sided messages on the domain's signal
 * communicator (tags of their own), so that the bytes land in the
 * receiver's memory without the target-side round trips of an osc pt2pt put
 * and its flush (for an exchange whose receivers know their sources: the
 * row exchanges and the HUB steps of the allreduces; docs/transport.md).
 * Messages of one sender to one receiver match in the order they were sent.
 * A receive whose capacity the sender knows (PLD_XSET_SIZED on both ends)
 * is posted at once and takes only a message sent for that capacity (the
 * capacity is in the tag), which is never larger: a message sent for
 * another capacity is never received, and the exchange hangs and is
 * reported. Any other receive is matched when its message arrives, by a
 * probe that reads the size first: a message larger than the receive is the
 * receiver's error (a receive posted before could not refuse it: Open MPI
 * 4's single-copy path between the processes of one node writes the whole
 * message, past the receive). The status record counts a send as a message
 * sent when it is posted and as one applied when it completes here (the
 * deadlock detector's "nothing in flight"): a large send completes only once
 * its receive took it, so a transfer under way is never taken for a
 * deadlock; a small one completes at once, and one whose receiver never
 * takes it (a mismatched exchange) no longer counts, so that hang is a
 * deadlock; a large one stays in flight, and the hang watchdog's timeout
 * reports it. Not collective; every member of the exchange must open a set.
 * pld_win_xset_two_sided: 1 when the data between this rank and domain rank
 * peer can go this way (a hybrid domain, peer on another host); both ends
 * compute the same answer. */
typedef struct pld_win_xset pld_win_xset_t;
int pld_win_xset_two_sided(const pld_win_dom_t *d, int peer);
/* A set of at most n transfers on d, whose copied sends take at most
 * send_bytes in all. PLD_E_NOMEM, PLD_E_USAGE (not hybrid). */
pld_status_t pld_win_xset_open(pld_win_dom_t *d, int n, size_t send_bytes, pld_win_xset_t **out, char *err,
                               size_t errn);
enum {
    PLD_XSET_SIZED = 1,  /* recv and send: the sender knows the receive's capacity */
    PLD_XSET_INPLACE = 2 /* send: src is not copied (see pld_win_xset_send) */
};
/* Posts a receive of at most cap bytes (< 2 GiB) from peer into dst (this
 * rank's memory, normally its window; nothing may touch it until the
 * receive completes). Receives come before the set's sends. */
pld_status_t pld_win_xset_recv(pld_win_xset_t *x, int peer, void *dst, size_t cap, int flags, char *err,
                               size_t errn);
/* Sends bytes bytes (< 2 GiB, 0 allowed) of src to peer; with
 * PLD_XSET_SIZED, to a receive of cap bytes (>= bytes; else cap is not
 * used). src is copied into the set's buffer first (the caller may reuse it
 * at once), or with PLD_XSET_INPLACE sent from where it is: then src must be
 * in the set's buffer (pld_win_xset_buf; a close with the send pending keeps
 * it from reuse) or in memory that stays until the window system ends (a
 * window), and nothing may write it until the send is complete. */
pld_status_t pld_win_xset_send(pld_win_xset_t *x, int peer, const void *src, size_t bytes, size_t cap, int flags,
                               char *err, size_t errn);
/* The set's buffer, send_bytes long (open), for data sent in place. */
void *pld_win_xset_buf(const pld_win_xset_t *x);
/* One step of a wait for the set: tests the transfers (one MPI entry; a
 * wait loop calls pld_win_poll between the steps, which serves the signal
 * messages). Returns 1 when every one is
 * complete, 0 when not yet (*done: how many are), -1 on an error: a message
 * larger than its receive (a mismatched exchange), an MPI failure; the text
 * is in err. */
int pld_win_xset_test(pld_win_xset_t *x, int *done, char *err, size_t errn);
/* How many transfers x holds. */
int pld_win_xset_size(const pld_win_xset_t *x);
/* The bytes receive i (in post order among the receives) got; -1 before it completed. */
int64_t pld_win_xset_got(const pld_win_xset_t *x, int i);
/* Frees x. Receives still pending are cancelled. Sends still pending (a
 * failed run) keep the set's buffer until the process ends: MPI may read it
 * in its teardown. */
void pld_win_xset_close(pld_win_xset_t *x);

/* Element-wise atomic add of count elements of dtype dt into the peer's
 * window (INT8/16/32/64, UINT8/16/32/64, INDEX, FP32, FP64 through
 * MPI_Accumulate(MPI_SUM) + flush; FP16 and BF16 through a lock word per
 * target window (get, add in float rounded to nearest even, put) so that
 * every add stays atomic against every other add). disp must be a multiple of
 * the element size. Other dtypes: PLD_E_RUNTIME. While waiting for the FP16
 * lock the call polls and gives up with PLD_E_RUNTIME once the status board's
 * abort flag is set. Use it on data, not on signal cells: with shm, notify
 * updates cells with C11 atomics, which MPI_Accumulate is not atomic with. */
pld_status_t pld_win_add(pld_win_dom_t *d, int peer, size_t disp, const void *src, pld_dtype_t dt, size_t count,
                         char *err, size_t errn);

/* ---- signals: int32 cells ---- */
/* peer.cell = v (set) or peer.cell += v (atomic add); ordered after every
 * earlier put/add and local window store of this rank (release: MPI_Win_sync,
 * then rma MPI_Accumulate(MPI_REPLACE / MPI_SUM) on one MPI_INT32_T + flush,
 * shm a C11 release store / fetch_add). Set and add stay atomic with respect
 * to each other. disp must be 4-byte aligned: PLD_E_RUNTIME otherwise. */
pld_status_t pld_win_notify(pld_win_dom_t *d, int peer, size_t disp, int32_t v, int set, char *err, size_t errn);
/* Reads this rank's own cell (MPI_Win_sync + acquire load: later reads see
 * every write released before the notify that set it). disp must be a
 * 4-aligned offset below the extent (the caller checks); otherwise returns 0. */
int32_t pld_win_read_cell(pld_win_dom_t *d, size_t disp);
/* hybrid: *v = the cell as it is now, without entering MPI (an acquire
 * load; the signals already applied are in it, those in flight are not),
 * and returns 1. A wait whose condition *v meets can stop there: a later read
 * would only see later updates; one that does not must call
 * pld_win_read_cell (which serves). Other transports: returns 0 and leaves
 * *v alone (read_cell is no dearer there). */
int pld_win_peek_cell(pld_win_dom_t *d, size_t disp, int32_t *v);

/* ---- progress ----
 * One poll step for a wait loop: makes sure the loop enters MPI progress once
 * per iteration (MPI_Win_sync on the status board, skipped when an rma op or
 * read_cell on an rma window did since the previous poll), so progress happens
 * across nodes (on a single node only every PLD_WIN_ENTER_EVERY polls: no
 * transport needs the target's help there), and after every PLD_WIN_YIELD_EVERY consecutive polls calls
 * MPI_Iprobe on world (osc ucx progresses only there) and sched_yield (4 ranks
 * share 2 cores; platform.md §3.4 'hybrid'). Every put/get/add/notify of this
 * rank restarts the count, so a wait answered quickly never yields. A wait
 * loop is
 *     while (!pred(pld_win_read_cell(d, cell))) pld_win_poll(sys);
 * with a deadline checked every few thousand polls. */
#define PLD_WIN_YIELD_EVERY 64
#define PLD_WIN_ENTER_EVERY 16
/* Returns the sticky error (pld_win_sys_error; PLD_OK normally): a wait loop
 * that polls stops on an MPI failure of any call of this rank, the ones with
 * no status to return (read_cell's MPI_Win_sync, this poll's) included. */
pld_status_t pld_win_poll(pld_win_sys_t *sys);

/* ---- counters (cheap, always on; tests assert how work was done) ---- */
typedef struct pld_win_counters {
    uint64_t puts, gets, adds, notifies; /* API calls */
    uint64_t mpi_calls;                  /* MPI calls made by the layer */
    uint64_t flushes;                    /* MPI_Win_flush calls */
    uint64_t polls, yields;              /* pld_win_poll calls, sched_yield calls */
    uint64_t lock_spins;                 /* failed FP16/BF16 and window-creation lock attempts */
    uint64_t msgs, msgs_applied;         /* hybrid: signal messages sent, and applied here */
    uint64_t xsends, xrecvs;             /* hybrid: two-sided transfers sent, and received here */
} pld_win_counters_t;
void pld_win_counters(const pld_win_sys_t *sys, pld_win_counters_t *out); /* copies this rank's counters */
/* Text of the last error the layer reported on this rank ("" if none), for
 * the calls without an err buffer (status_get). Borrowed. */
const char *pld_win_last_error(const pld_win_sys_t *sys);

/* ---- status board (hang watchdog) ----
 * Each rank publishes a fixed-size record; any rank can read all of them. */
typedef enum pld_win_state { PLD_WS_RUNNING = 0, PLD_WS_BLOCKED, PLD_WS_FINISHED, PLD_WS_FAILED } pld_win_state_t;

/* What a rank did last, as its caller counts it (an interpreter: its
 * operations and the location of the last one). The caller stores into its
 * own record directly, with relaxed atomic stores and no MPI call (one or two
 * plain stores per operation): readers (pld_win_status_get) may see it torn
 * or late, which the hang watchdog tolerates; it only asks whether it changed. */
typedef struct pld_win_progress {
    int64_t count;          /* operations so far (changes while the rank progresses) */
    uint64_t at;            /* source location of the last one: line | col << 32 (0: none) */
} pld_win_progress_t;

typedef struct pld_win_status {
    int32_t state;          /* pld_win_state_t */
    int32_t abort;          /* set by any rank to stop everyone (deadlock, failure, timeout) */
    int64_t epoch;          /* incremented by every put/add/notify this rank issues (kept by the layer) */
    int64_t seq;            /* incremented by every pld_win_status_set (kept by the layer) */
    int64_t phase;          /* progress between dispatches (pld_win_status_phase) */
    int32_t line, col;      /* source location of the blocking wait */
    int32_t cmp;            /* 0 Eq, 1 Ge */
    int32_t expected, found;
    int32_t dom_rank;       /* domain rank of the waiter */
    char what[96];          /* e.g. "wait on sig[1, 0] in stuck_step" */
    int64_t msgs_sent;      /* hybrid: signal messages and two-sided transfers this rank sent (kept by
                               the layer) */
    int64_t msgs_applied;   /* hybrid: signal messages applied to this rank's cells, and transfers
                               of this rank completed (kept by the layer); sums over all ranks
                               equal when nothing is in flight */
    pld_win_progress_t progress; /* the caller's progress (pld_win_progress_slot) */
} pld_win_status_t;

/* Publishes this rank's record (local write + MPI_Win_sync, visible to
 * readers). The abort, epoch and seq fields of *st are ignored: abort is only
 * set by abort_all, epoch and seq only by the layer (seq counts the calls, so
 * a reader can tell that a rank has published again since it last looked).
 * `what` is copied NUL-terminated. */
void pld_win_status_set(pld_win_sys_t *sys, const pld_win_status_t *st);
/* This rank's progress record in its own status record, for the caller to
 * store into (pld_win_progress_t); valid until pld_win_sys_fini. Not
 * collective, no MPI call. */
pld_win_progress_t *pld_win_progress_slot(pld_win_sys_t *sys);
/* Sets this rank's phase (monotonic; readers wait for every rank to reach a
 * phase between two runs of a program) and publishes it. */
void pld_win_status_phase(pld_win_sys_t *sys, int64_t phase);
/* Reads rank r's record (world rank; MPI_Get + flush for r != self; a record
 * being rewritten may read torn, which a watchdog tolerates). Errors:
 * PLD_E_USAGE for r out of range, PLD_E_MPI; the text is in
 * pld_win_last_error. Not collective. */
pld_status_t pld_win_status_get(pld_win_sys_t *sys, int r, pld_win_status_t *st);
/* Sets the abort flag on every rank's record (MPI_Accumulate(MPI_REPLACE) +
 * flush per rank, self included). Best effort: failures are recorded in
 * pld_win_last_error and the sticky error. Not collective. */
void pld_win_status_abort_all(pld_win_sys_t *sys, int reason);
/* Abort reasons (the value stored in every record's abort field). */
enum { PLD_WA_NONE = 0, PLD_WA_FAILED = 1, PLD_WA_DEADLOCK = 2, PLD_WA_TIMEOUT = 3, PLD_WA_WAIT_TIMEOUT = 4 };
/* PLD_WA_TIMEOUT: no rank made progress for the timeout (pld_wait.h);
 * PLD_WA_WAIT_TIMEOUT: one wait passed the explicit per-wait limit. */
/* 1 when this rank's abort flag is set (MPI_Win_sync + atomic load). */
int pld_win_status_aborted(pld_win_sys_t *sys); /* returns the reason, 0 when not aborted */

/* ---- regions: a strided box of a tensor in the window ----
 * A tensor inside a domain's window, as every member sees it: the byte
 * offset of its element (0, ..., 0) in the window and its element strides
 * (the same offsets address every member's copy). */
typedef struct pld_win_view {
    int rank;                /* dims, at most 8 (rank 0: one element at disp0) */
    pld_dtype_t dt;
    const int64_t *shape;    /* elements */
    const int64_t *strides;  /* elements */
    size_t disp0;            /* bytes from the window's base */
} pld_win_view_t;

/* What the caller adds to each transfer of a region (all optional). */
typedef struct pld_win_region_hooks {
    void *ctx;
    /* moves one run instead of pld_win_get / put / add (dir 0 / 1 / 2;
     * count elements, bytes = count * element size) */
    pld_status_t (*xfer)(void *ctx, int peer, size_t disp, void *buf, size_t bytes, size_t count, int dir, char *err,
                         size_t errn);
    /* after a run moved (the checking modes read their records here) */
    pld_status_t (*moved)(void *ctx, int peer, size_t disp, size_t bytes, int dir, char *err, size_t errn);
} pld_win_region_hooks_t;

/* Why pld_win_region failed (*why): the transfer (err is the transport's
 * text), the box is outside a dimension of the tensor, or a run is outside
 * the window ("out of the window's bounds (...)"). */
enum { PLD_WR_XFER = 0, PLD_WR_DIM = 1, PLD_WR_BOUNDS = 2 };

/* Moves the box [off, off + ext) of view v between this rank's packed
 * buffer (row-major, the box's elements) and member peer's window: dir 0
 * gets into packed, 1 puts from it, 2 adds it element-wise (pld_win_add).
 * The box goes as its contiguous runs (trailing full, packed dims merged;
 * a strided innermost dim element by element). An empty box moves
 * nothing. *moved: the bytes moved. On failure err holds the reason and
 * *why its kind (PLD_WR_*). */
pld_status_t pld_win_region(pld_win_dom_t *d, int peer, const pld_win_view_t *v, const int64_t *off,
                            const int64_t *ext, void *packed, int dir, const pld_win_region_hooks_t *h,
                            uint64_t *moved, int *why, char *err, size_t errn);

#endif
