/* pld_win.c - window layer: the process-wide system (world communicator,
 * node map, status board), comm domains and their windows, the CommContext
 * bytes, progress (pld_win_poll) and errors. Data movement is in
 * pld_win_ops.c. Design and measurements: shared/docs/platform.md §3, §7. */
#include "pld_win_int.h"

#include "pld_mem.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* Tag of MPI_Comm_create_group; creations are ordered, so one tag suffices. */
#define DOM_TAG 0x504c

/* The status board window holds this rank's record at disp 0 and, on world
 * rank 0 only, the window creation lock word after it (see create_lock). */
#define CREATE_LOCK_DISP ((sizeof(pld_win_status_t) + 7) / 8 * 8)
#define STATUS_WIN_BYTES (CREATE_LOCK_DISP + 8)

/* ---- errors ------------------------------------------------------------------ */

static void put_err(pld_win_sys_t *sys, char *err, size_t errn, const char *msg)
{
    if (err && errn > 0)
        snprintf(err, errn, "%s", msg);
    if (sys)
        snprintf(sys->last_err, sizeof sys->last_err, "%s", msg);
}

pld_status_t pld_win_fail(pld_win_sys_t *sys, pld_status_t st, char *err, size_t errn, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    put_err(sys, err, errn, msg);
    return st;
}

pld_status_t pld_win_mpi_fail(pld_win_sys_t *sys, const char *call, int rc, char *err, size_t errn)
{
    char text[MPI_MAX_ERROR_STRING + 1];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error %d", rc);
    else
        text[len] = '\0';
    size_t n = strcspn(call, "( ");
    if (n > 64)
        n = 64;
    pld_status_t st = pld_win_fail(sys, PLD_E_MPI, err, errn, "%.*s failed on rank %d: %s", (int)n, call,
                                   sys ? sys->rank : -1, text);
    if (sys)
        pld_win_stick(sys, PLD_E_MPI);
    return st;
}

void pld_win_stick(pld_win_sys_t *sys, pld_status_t st)
{
    if (sys->sticky != PLD_OK)
        return;
    sys->sticky = st;
    snprintf(sys->sticky_msg, sizeof sys->sticky_msg, "%s", sys->last_err);
}

pld_status_t pld_win_sys_error(const pld_win_sys_t *sys, char *err, size_t errn)
{
    if (!sys || sys->sticky == PLD_OK)
        return PLD_OK;
    if (err && errn > 0)
        snprintf(err, errn, "%s", sys->sticky_msg);
    return sys->sticky;
}

void pld_win_test_fail_mpi(pld_win_sys_t *sys, const char *name, long after)
{
#ifdef PLD_TESTING
    sys->fail_after = name ? after : -1;
    snprintf(sys->fail_name, sizeof sys->fail_name, "%s", name ? name : "");
#else
    (void)sys;
    (void)name;
    (void)after;
#endif
}

#ifdef PLD_TESTING
int pld_win_test_rc(pld_win_sys_t *sys, const char *call, int rc)
{
    const size_t n = strlen(sys->fail_name);
    if (sys->fail_after < 0 || n == 0 || strncmp(call, sys->fail_name, n) != 0 || (call[n] != '(' && call[n] != ' '))
        return rc;
    if (sys->fail_after-- > 0)
        return rc;
    return MPI_ERR_OTHER;
}
#endif

/* ---- process-wide ------------------------------------------------------------ */

const char *pld_win_transport_name(pld_win_transport_t tr)
{
    switch (tr) {
    case PLD_WIN_AUTO: return "auto";
    case PLD_WIN_RMA: return "rma";
    case PLD_WIN_SHM: return "shm";
    case PLD_WIN_LOCAL: return "local";
    case PLD_WIN_HYBRID: return "hybrid";
    }
    return "?";
}

int pld_win_transport_from_name(const char *name, pld_win_transport_t *out)
{
    static const pld_win_transport_t all[] = {PLD_WIN_AUTO, PLD_WIN_RMA, PLD_WIN_SHM, PLD_WIN_LOCAL, PLD_WIN_HYBRID};
    for (size_t i = 0; name && i < sizeof all / sizeof all[0]; i++) {
        if (strcmp(name, pld_win_transport_name(all[i])) == 0) {
            *out = all[i];
            return 0;
        }
    }
    return -1;
}

/* Finds the node of every world rank: the lowest world rank of its shared
 * memory communicator. */
static pld_status_t map_nodes(pld_win_sys_t *sys, char *err, size_t errn)
{
    MPI_Comm node = MPI_COMM_NULL;
    PLD_MPI_CHECK(MPI_Comm_split_type(sys->world, MPI_COMM_TYPE_SHARED, sys->rank, MPI_INFO_NULL, &node));
    int leader = sys->rank, nsize = 0;
    const char *what = "MPI_Comm_set_errhandler";
    int rc = MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS) {
        what = "MPI_Allreduce";
        rc = MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node);
    }
    if (rc == MPI_SUCCESS) {
        what = "MPI_Comm_size";
        rc = MPI_Comm_size(node, &nsize);
    }
    const int frc = MPI_Comm_free(&node); /* freed whatever happened before */
    if (rc == MPI_SUCCESS && frc != MPI_SUCCESS) {
        what = "MPI_Comm_free";
        rc = frc;
    }
    sys->counters.mpi_calls += 4;
    if (rc != MPI_SUCCESS)
        return pld_win_mpi_fail(sys, what, rc, err, errn);
    PLD_MPI_CHECK(MPI_Allgather(&leader, 1, MPI_INT, sys->node_of, 1, MPI_INT, sys->world));
    sys->single_node = nsize == sys->size;
    return PLD_OK;
}

static pld_status_t status_board_create(pld_win_sys_t *sys, char *err, size_t errn)
{
    void *base = NULL;
    PLD_MPI_CHECK(MPI_Win_allocate((MPI_Aint)STATUS_WIN_BYTES, 1, MPI_INFO_NULL, sys->world, &base,
                                   &sys->status_win));
    PLD_MPI_CHECK(MPI_Win_set_errhandler(sys->status_win, MPI_ERRORS_RETURN));
    if ((uintptr_t)base % 8 != 0)
        return pld_win_fail(sys, PLD_E_MPI, err, errn, "status board base %p is not 8-byte aligned", base);
    sys->status = base;
    memset(base, 0, STATUS_WIN_BYTES);
    PLD_MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, sys->status_win));
    PLD_MPI_CHECK(MPI_Win_sync(sys->status_win));
    PLD_MPI_CHECK(MPI_Barrier(sys->world));
    return PLD_OK;
}

static void sys_release_mpi(pld_win_sys_t *sys)
{
    if (sys->status_win != MPI_WIN_NULL) {
        PLD_MPI_NOTE(MPI_Win_unlock_all(sys->status_win));
        PLD_MPI_NOTE(MPI_Win_free(&sys->status_win));
    }
    if (sys->world != MPI_COMM_NULL)
        PLD_MPI_NOTE(MPI_Comm_free(&sys->world));
}

pld_status_t pld_win_sys_init(pld_win_transport_t tr, pld_win_sys_t **out, char *err, size_t errn)
{
    *out = NULL;
    if (tr != PLD_WIN_AUTO && tr != PLD_WIN_RMA && tr != PLD_WIN_SHM && tr != PLD_WIN_LOCAL && tr != PLD_WIN_HYBRID)
        return pld_win_fail(NULL, PLD_E_USAGE, err, errn, "unknown window transport %d", (int)tr);
    pld_win_sys_t *sys = pld_mem_calloc(1, sizeof *sys);
    if (!sys)
        return pld_win_fail(NULL, PLD_E_NOMEM, err, errn, "out of memory creating the window system");
    sys->tr = tr;
    sys->chunk_bytes = (size_t)1 << 30;
    sys->fail_after = -1;
    sys->world = MPI_COMM_NULL;
    sys->status_win = MPI_WIN_NULL;
    sys->status = &sys->local_status;
    for (int i = 0; i < PLD_WIN_SENDQ; i++)
        sys->sreq[i] = MPI_REQUEST_NULL;
    sys->size = 1;
    sys->single_node = 1;
    if (tr == PLD_WIN_LOCAL) {
        *out = sys;
        return PLD_OK;
    }
    int inited = 0, finalized = 0;
    if (MPI_Initialized(&inited) != MPI_SUCCESS || MPI_Finalized(&finalized) != MPI_SUCCESS)
        inited = 0; /* (both may be called at any time; a failure means MPI is unusable) */
    if (!inited || finalized) {
        pld_mem_free(sys);
        return pld_win_fail(NULL, PLD_E_USAGE, err, errn, "window transport '%s' needs MPI to be initialised",
                            pld_win_transport_name(tr));
    }
    sys->mpi = 1;
    pld_status_t st = PLD_OK;
    const char *what = "MPI_Comm_dup";
    int rc = MPI_Comm_dup(MPI_COMM_WORLD, &sys->world);
    if (rc == MPI_SUCCESS) {
        what = "MPI_Comm_set_errhandler";
        rc = MPI_Comm_set_errhandler(sys->world, MPI_ERRORS_RETURN);
    }
    if (rc == MPI_SUCCESS) {
        what = "MPI_Comm_rank";
        rc = MPI_Comm_rank(sys->world, &sys->rank);
    }
    if (rc == MPI_SUCCESS) {
        what = "MPI_Comm_size";
        rc = MPI_Comm_size(sys->world, &sys->size);
    }
    if (rc != MPI_SUCCESS)
        st = pld_win_mpi_fail(sys, what, rc, err, errn);
    if (st == PLD_OK) {
        sys->node_of = pld_mem_calloc((size_t)sys->size, sizeof *sys->node_of);
        if (!sys->node_of)
            st = pld_win_fail(sys, PLD_E_NOMEM, err, errn, "out of memory creating the window system");
    }
    if (st == PLD_OK)
        st = map_nodes(sys, err, errn);
    if (st == PLD_OK)
        st = status_board_create(sys, err, errn);
    if (st != PLD_OK) {
        sys_release_mpi(sys);
        pld_mem_free(sys->xcache);
    pld_mem_free(sys->node_of);
        pld_mem_free(sys);
        return st;
    }
    *out = sys;
    return PLD_OK;
}

pld_status_t pld_win_sys_fini_checked(pld_win_sys_t *sys, char *err, size_t errn)
{
    if (!sys)
        return PLD_OK;
    while (sys->doms)
        pld_win_dom_destroy(sys->doms);
    if (sys->mpi) {
        PLD_MPI_NOTE(MPI_Barrier(sys->world)); /* nobody reads a record any more */
        sys_release_mpi(sys);
    }
    pld_status_t st = pld_win_sys_error(sys, err, errn);
    pld_mem_free(sys->xcache);
    pld_mem_free(sys->node_of);
    pld_mem_free(sys);
    return st;
}

void pld_win_sys_fini(pld_win_sys_t *sys)
{
    (void)pld_win_sys_fini_checked(sys, NULL, 0);
}

int pld_win_world_rank(const pld_win_sys_t *sys) { return sys->rank; }
int pld_win_world_size(const pld_win_sys_t *sys) { return sys->size; }
int pld_win_single_node(const pld_win_sys_t *sys) { return sys->single_node; }

void pld_win_counters(const pld_win_sys_t *sys, pld_win_counters_t *out) { *out = sys->counters; }
const char *pld_win_last_error(const pld_win_sys_t *sys) { return sys->last_err; }

/* ---- domains ---------------------------------------------------------------- */

static size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

static void build_ctx(pld_win_dom_t *d)
{
    unsigned char *c = d->ctx;
    memset(c, 0, sizeof d->ctx);
    uint32_t rank_id = (uint32_t)d->rank, rank_num = (uint32_t)d->size;
    uint64_t win_size = (uint64_t)d->bytes;
    memcpy(c + 16, &rank_id, 4);
    memcpy(c + 20, &rank_num, 4);
    memcpy(c + 24, &win_size, 8);
    for (int r = 0; r < d->size; r++) {
        uint64_t a = (uint64_t)(uintptr_t)pld_win_dom_peer_addr(d, r);
        memcpy(c + 32 + 8 * (size_t)r, &a, 8);
    }
}

void *pld_win_dom_peer_addr(const pld_win_dom_t *d, int r)
{
    if (r < 0 || r >= d->size)
        return NULL;
    if (r == d->rank)
        return d->base;
    return d->tr == PLD_WIN_RMA ? NULL : d->peer[r];
}

/* Checks the arguments of dom_create; the same on every member, so every
 * member fails alike and nobody enters a collective alone. */
static pld_status_t check_members(pld_win_sys_t *sys, const int *members, int n, size_t bytes, int *my_rank,
                                  char *err, size_t errn)
{
    if (!members || n < 1 || n > PLD_WIN_MAX_RANKS)
        return pld_win_fail(sys, PLD_E_USAGE, err, errn, "a comm domain needs 1 to %d members, got %d",
                            PLD_WIN_MAX_RANKS, n);
    *my_rank = -1;
    for (int i = 0; i < n; i++) {
        if (members[i] < 0 || members[i] >= sys->size)
            return pld_win_fail(sys, PLD_E_USAGE, err, errn, "domain member %d is not a rank of a world of %d",
                                members[i], sys->size);
        if (i > 0 && members[i] <= members[i - 1])
            return pld_win_fail(sys, PLD_E_USAGE, err, errn,
                                "domain members must be sorted and distinct (%d after %d)", members[i],
                                members[i - 1]);
        if (members[i] == sys->rank)
            *my_rank = i;
    }
    if (*my_rank < 0)
        return pld_win_fail(sys, PLD_E_USAGE, err, errn, "rank %d creates a domain it is not a member of",
                            sys->rank);
    if (bytes > ((size_t)1 << 46))
        return pld_win_fail(sys, PLD_E_USAGE, err, errn, "window of %zu bytes is too large", bytes);
    return PLD_OK;
}

/* auto: shm when every member is on one host, else hybrid. hybrid: the same
 * (within one host hybrid has nothing to add to shm). */
static pld_win_transport_t resolve(const pld_win_sys_t *sys, const int *members, int n)
{
    if (sys->tr != PLD_WIN_AUTO && sys->tr != PLD_WIN_HYBRID)
        return sys->tr;
    for (int i = 1; i < n; i++)
        if (pld_win_host_of(sys, members[i]) != pld_win_host_of(sys, members[0]))
            return PLD_WIN_HYBRID;
    return PLD_WIN_SHM;
}

void pld_win_test_split_hosts(pld_win_sys_t *sys, int k, int blocked)
{
    sys->split_hosts = k > 0 ? k : 0;
    sys->split_blocked = k > 0 && blocked;
}

/* The window creation lock (a word on world rank 0, taken with
 * MPI_Compare_and_swap). Open MPI 4.1's osc rdma names the shared-memory file
 * behind an MPI_Win_allocate window after the communicator's context id, and
 * disjoint communicators get the same id (open-mpi/ompi#7393, #9492): two
 * subset domains created at the same time on one node then open, truncate and
 * unlink the same file; the window creation fails or, worse, the windows
 * alias. osc sm (MPI_Win_allocate_shared) adds the creator's vpid to the
 * name and is not affected. So domain rank 0 holds this job-wide lock across
 * MPI_Win_allocate, after a barrier of the domain: every member is then inside
 * this creation, so the holder never waits for a member that waits for the
 * lock. take: spin (with pld_win_poll) until the word is 0, set it to our
 * world rank + 1; !take: reset it. */
static pld_status_t create_lock(pld_win_sys_t *sys, int take, char *err, size_t errn)
{
    const int32_t mine = sys->rank + 1, zero = 0;
    for (unsigned long n = 1;; n++) {
        int32_t old = -1;
        PLD_MPI_CHECK(MPI_Compare_and_swap(take ? &mine : &zero, take ? &zero : &mine, &old, MPI_INT32_T, 0,
                                           (MPI_Aint)CREATE_LOCK_DISP, sys->status_win));
        PLD_MPI_CHECK(MPI_Win_flush(0, sys->status_win));
        sys->counters.flushes++;
        if (!take)
            return old == mine ? PLD_OK
                               : pld_win_fail(sys, PLD_E_RUNTIME, err, errn,
                                              "window creation lock was %d, not rank %d's", (int)old - 1, sys->rank);
        if (old == 0)
            return PLD_OK;
        sys->counters.lock_spins++;
        pld_win_poll(sys);
        if (n % 1024 == 0 && pld_win_status_aborted(sys))
            return pld_win_fail(sys, PLD_E_RUNTIME, err, errn,
                                "aborted while waiting for the window creation lock (held by rank %d)", (int)old - 1);
    }
}

/* 1 when some node hosts two or more members (osc rdma then backs the window
 * with a shared-memory file). */
static int shares_a_node(const pld_win_sys_t *sys, const pld_win_dom_t *d)
{
    for (int i = 0; i < d->size; i++)
        for (int j = i + 1; j < d->size; j++)
            if (sys->node_of[d->members[i]] == sys->node_of[d->members[j]])
                return 1;
    return 0;
}

/* The MPI window of an rma domain (MPI_Win_allocate; *raw = its memory) or of
 * a hybrid one (MPI_Win_create over the shared segment *raw), under the
 * creation lock when two members share a node. */
static pld_status_t allocate_rma(pld_win_sys_t *sys, pld_win_dom_t *d, void **raw, char *err, size_t errn)
{
    const int locked = shares_a_node(sys, d);
    if (locked) {
        PLD_MPI_CHECK(MPI_Barrier(d->comm));
        if (d->rank == 0) {
            pld_status_t st = create_lock(sys, 1, err, errn);
            if (st != PLD_OK)
                return st; /* the other members fail in MPI_Win_allocate only if rank 0 is gone */
        }
    }
    int rc;
    if (d->tr == PLD_WIN_HYBRID)
        rc = MPI_Win_create(*raw, (MPI_Aint)d->alloc, 1, MPI_INFO_NULL, d->comm, &d->win);
    else
        rc = MPI_Win_allocate((MPI_Aint)d->alloc, 1, MPI_INFO_NULL, d->comm, raw, &d->win);
    sys->counters.mpi_calls++;
    pld_status_t st = rc == MPI_SUCCESS ? PLD_OK
                                        : pld_win_mpi_fail(sys, d->tr == PLD_WIN_HYBRID ? "MPI_Win_create" : "MPI_Win_allocate",
                                                           rc, err, errn);
    if (locked && d->rank == 0) {
        char uerr[256];
        pld_status_t ust = create_lock(sys, 0, uerr, sizeof uerr);
        if (st == PLD_OK && ust != PLD_OK)
            st = pld_win_fail(sys, ust, err, errn, "%s", uerr);
    }
    return st;
}

/* MPI part of dom_create: communicator, window, epoch, offsets, peers. */
static pld_status_t dom_open_mpi(pld_win_sys_t *sys, pld_win_dom_t *d, char *err, size_t errn)
{
    MPI_Group wg = MPI_GROUP_NULL, g = MPI_GROUP_NULL;
    PLD_MPI_CHECK(MPI_Comm_group(sys->world, &wg));
    int rc = MPI_Group_incl(wg, d->size, d->members, &g);
    int frc = MPI_Group_free(&wg);
    sys->counters.mpi_calls += 2;
    if (rc != MPI_SUCCESS)
        return pld_win_mpi_fail(sys, "MPI_Group_incl", rc, err, errn);
    if (frc != MPI_SUCCESS) {
        PLD_MPI_NOTE(MPI_Group_free(&g));
        return pld_win_mpi_fail(sys, "MPI_Group_free", frc, err, errn);
    }
    rc = MPI_Comm_create_group(sys->world, g, DOM_TAG, &d->comm);
    frc = MPI_Group_free(&g);
    sys->counters.mpi_calls += 2;
    if (rc != MPI_SUCCESS)
        return pld_win_mpi_fail(sys, "MPI_Comm_create_group", rc, err, errn);
    if (frc != MPI_SUCCESS)
        return pld_win_mpi_fail(sys, "MPI_Group_free", frc, err, errn);
    PLD_MPI_CHECK(MPI_Comm_set_errhandler(d->comm, MPI_ERRORS_RETURN));

    void *raw = NULL;
    if (d->tr == PLD_WIN_SHM)
        PLD_MPI_CHECK(MPI_Win_allocate_shared((MPI_Aint)d->alloc, 1, MPI_INFO_NULL, d->comm, &raw, &d->win));
    if (d->tr == PLD_WIN_HYBRID) {
        /* the members on this node share one segment; everyone reaches it
         * through MPI_Win_create too */
        PLD_MPI_CHECK(MPI_Comm_split_type(d->comm, MPI_COMM_TYPE_SHARED, d->rank, MPI_INFO_NULL, &d->node));
        PLD_MPI_CHECK(MPI_Comm_set_errhandler(d->node, MPI_ERRORS_RETURN));
        PLD_MPI_CHECK(MPI_Win_allocate_shared((MPI_Aint)d->alloc, 1, MPI_INFO_NULL, d->node, &raw, &d->shwin));
        PLD_MPI_CHECK(MPI_Win_set_errhandler(d->shwin, MPI_ERRORS_RETURN));
        PLD_MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, d->shwin));
    }
    if (d->tr != PLD_WIN_SHM) {
        pld_status_t st = allocate_rma(sys, d, &raw, err, errn);
        if (st != PLD_OK)
            return st;
    }
    PLD_MPI_CHECK(MPI_Win_set_errhandler(d->win, MPI_ERRORS_RETURN));
    PLD_MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, d->win));

    MPI_Aint my_off = (MPI_Aint)(align_up((uintptr_t)raw, PLD_WIN_BASE_ALIGN) - (uintptr_t)raw);
    PLD_MPI_CHECK(MPI_Allgather(&my_off, 1, MPI_AINT, d->off, 1, MPI_AINT, d->comm));
    d->base = (char *)raw + my_off;
    if (d->tr == PLD_WIN_SHM) {
        for (int p = 0; p < d->size; p++) {
            MPI_Aint sz = 0;
            int du = 0;
            void *pb = NULL;
            PLD_MPI_CHECK(MPI_Win_shared_query(d->win, p, &sz, &du, &pb));
            d->peer[p] = (char *)pb + d->off[p];
        }
    }
    if (d->tr == PLD_WIN_HYBRID) {
        /* peer[p]: the members on this node (and on this host, which the
         * test hook may make smaller); NULL for the rest */
        MPI_Group dg = MPI_GROUP_NULL, ng = MPI_GROUP_NULL;
        int all[PLD_WIN_MAX_RANKS], in_node[PLD_WIN_MAX_RANKS];
        for (int p = 0; p < d->size; p++)
            all[p] = p;
        PLD_MPI_CHECK(MPI_Comm_group(d->comm, &dg));
        PLD_MPI_CHECK(MPI_Comm_group(d->node, &ng));
        rc = MPI_Group_translate_ranks(dg, d->size, all, ng, in_node);
        PLD_MPI_NOTE(MPI_Group_free(&dg));
        PLD_MPI_NOTE(MPI_Group_free(&ng));
        sys->counters.mpi_calls++;
        if (rc != MPI_SUCCESS)
            return pld_win_mpi_fail(sys, "MPI_Group_translate_ranks", rc, err, errn);
        const int myhost = pld_win_host_of(sys, d->members[d->rank]);
        for (int p = 0; p < d->size; p++) {
            d->peer[p] = NULL;
            if (in_node[p] == MPI_UNDEFINED || pld_win_host_of(sys, d->members[p]) != myhost)
                continue;
            MPI_Aint sz = 0;
            int du = 0;
            void *pb = NULL;
            PLD_MPI_CHECK(MPI_Win_shared_query(d->shwin, in_node[p], &sz, &du, &pb));
            d->peer[p] = (char *)pb + d->off[p];
        }
        pld_status_t st = pld_win_msg_open(d, err, errn);
        if (st != PLD_OK)
            return st;
    }
    memset(raw, 0, d->alloc);
    PLD_MPI_CHECK(MPI_Win_sync(d->win));
    PLD_MPI_CHECK(MPI_Barrier(d->comm)); /* everyone is zeroed before anyone writes */
    return PLD_OK;
}

static void dom_close_mpi(pld_win_dom_t *d)
{
    pld_win_sys_t *sys = d->sys;
    if (d->tr == PLD_WIN_HYBRID)
        pld_win_msg_close(d);
    if (d->win != MPI_WIN_NULL) {
        PLD_MPI_NOTE(MPI_Win_unlock_all(d->win));
        PLD_MPI_NOTE(MPI_Win_free(&d->win));
    }
    if (d->shwin != MPI_WIN_NULL) {
        PLD_MPI_NOTE(MPI_Win_unlock_all(d->shwin));
        PLD_MPI_NOTE(MPI_Win_free(&d->shwin));
    }
    if (d->node != MPI_COMM_NULL)
        PLD_MPI_NOTE(MPI_Comm_free(&d->node));
    if (d->comm != MPI_COMM_NULL)
        PLD_MPI_NOTE(MPI_Comm_free(&d->comm));
}

pld_status_t pld_win_dom_create(pld_win_sys_t *sys, const int *members, int n, size_t bytes, pld_win_dom_t **out,
                                char *err, size_t errn)
{
    *out = NULL;
    int me = -1;
    pld_status_t st = check_members(sys, members, n, bytes, &me, err, errn);
    if (st != PLD_OK)
        return st;
    pld_win_transport_t tr = resolve(sys, members, n);
    if (tr == PLD_WIN_SHM && sys->mpi) {
        for (int i = 1; i < n; i++)
            if (pld_win_host_of(sys, members[i]) != pld_win_host_of(sys, members[0]))
                return pld_win_fail(sys, PLD_E_USAGE, err, errn,
                                    "window transport 'shm' needs every domain member on one node "
                                    "(ranks %d and %d are on different nodes); use 'auto', 'hybrid' or 'rma'",
                                    members[0], members[i]);
    }
    pld_win_dom_t *d = pld_mem_calloc(1, sizeof *d);
    if (!d)
        return pld_win_fail(sys, PLD_E_NOMEM, err, errn, "out of memory creating a comm domain");
    d->sys = sys;
    d->tr = tr;
    d->rank = me;
    d->size = n;
    memcpy(d->members, members, (size_t)n * sizeof *members);
    d->bytes = bytes;
    d->extent = bytes + PLD_WIN_SLACK;
    d->ctl = align_up(d->extent, PLD_WIN_ALIGN);
    d->alloc = PLD_WIN_BASE_ALIGN + d->ctl + PLD_WIN_CTL;
    d->comm = d->node = d->sig = MPI_COMM_NULL;
    d->win = d->shwin = MPI_WIN_NULL;
    d->rreq = MPI_REQUEST_NULL;
    if (tr == PLD_WIN_LOCAL) {
        d->raw = pld_mem_calloc(1, d->alloc);
        if (!d->raw) {
            pld_mem_free(d);
            return pld_win_fail(sys, PLD_E_NOMEM, err, errn, "out of memory allocating a window of %zu bytes",
                                bytes);
        }
        d->base = (char *)d->raw + (align_up((uintptr_t)d->raw, PLD_WIN_BASE_ALIGN) - (uintptr_t)d->raw);
        d->off[0] = d->base - (char *)d->raw;
        d->peer[0] = d->base;
    } else {
        st = dom_open_mpi(sys, d, err, errn);
        if (st != PLD_OK) {
            dom_close_mpi(d);
            pld_mem_free(d);
            return st;
        }
    }
    build_ctx(d);
    d->next = sys->doms;
    sys->doms = d;
    *out = d;
    return PLD_OK;
}

void pld_win_dom_destroy(pld_win_dom_t *d)
{
    if (!d)
        return;
    pld_win_sys_t *sys = d->sys;
    /* hybrid: still linked, so that the barrier serves d's messages too (a
     * member may still wait for our ack) */
    if (d->tr == PLD_WIN_HYBRID)
        (void)pld_win_msg_barrier(d, NULL, 0);
    for (pld_win_dom_t **pp = &sys->doms; *pp; pp = &(*pp)->next) {
        if (*pp == d) {
            *pp = d->next;
            break;
        }
    }
    if (d->tr == PLD_WIN_LOCAL) {
        pld_mem_free(d->raw);
    } else if (d->tr == PLD_WIN_HYBRID) {
        dom_close_mpi(d);
    } else {
        PLD_MPI_NOTE(MPI_Barrier(d->comm)); /* no member still reads or writes our memory */
        dom_close_mpi(d);
    }
    pld_mem_free(d);
}

int pld_win_dom_rank(const pld_win_dom_t *d) { return d->rank; }
int pld_win_dom_size(const pld_win_dom_t *d) { return d->size; }

int pld_win_dom_world_rank(const pld_win_dom_t *d, int domain_rank)
{
    return domain_rank >= 0 && domain_rank < d->size ? d->members[domain_rank] : -1;
}

size_t pld_win_dom_bytes(const pld_win_dom_t *d) { return d->bytes; }
size_t pld_win_dom_extent(const pld_win_dom_t *d) { return d->extent; }
void *pld_win_dom_base(const pld_win_dom_t *d) { return d->base; }
pld_win_transport_t pld_win_dom_transport(const pld_win_dom_t *d) { return d->tr; }

int pld_win_dom_host(const pld_win_dom_t *d, int domain_rank)
{
    if (!d->sys->mpi || domain_rank < 0 || domain_rank >= d->size)
        return 0;
    return pld_win_host_of(d->sys, d->members[domain_rank]);
}

void pld_win_dom_clear(pld_win_dom_t *d)
{
    pld_win_sys_t *sys = d->sys;
    memset(d->base, 0, d->extent);
    if (d->tr != PLD_WIN_LOCAL)
        PLD_MPI_NOTE(MPI_Win_sync(d->win));
}
const void *pld_win_dom_ctx(const pld_win_dom_t *d) { return d->ctx; }

/* ---- collective steps over a domain's members (a backend's window exchange) ---- */

pld_status_t pld_win_dom_allgather(pld_win_dom_t *d, const void *send, void *recv, size_t bytes)
{
    pld_win_sys_t *sys = d->sys;
    char *err = NULL;
    const size_t errn = 0;
    if (bytes > (size_t)INT32_MAX)
        return PLD_E_USAGE;
    if (d->tr == PLD_WIN_LOCAL) {
        memmove(recv, send, bytes);
        return PLD_OK;
    }
    PLD_MPI_CHECK(MPI_Allgather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, d->comm));
    return PLD_OK;
}

pld_status_t pld_win_dom_bcast(pld_win_dom_t *d, void *buf, size_t bytes, int root)
{
    pld_win_sys_t *sys = d->sys;
    char *err = NULL;
    const size_t errn = 0;
    if (bytes > (size_t)INT32_MAX || root < 0 || root >= d->size)
        return PLD_E_USAGE;
    if (d->tr == PLD_WIN_LOCAL)
        return PLD_OK;
    PLD_MPI_CHECK(MPI_Bcast(buf, (int)bytes, MPI_BYTE, root, d->comm));
    return PLD_OK;
}

pld_status_t pld_win_dom_barrier(pld_win_dom_t *d)
{
    pld_win_sys_t *sys = d->sys;
    char *err = NULL;
    const size_t errn = 0;
    if (d->tr == PLD_WIN_LOCAL)
        return PLD_OK;
    if (d->tr == PLD_WIN_HYBRID)
        return pld_win_msg_barrier(d, err, errn);
    PLD_MPI_CHECK(MPI_Barrier(d->comm));
    return PLD_OK;
}

MPI_Comm pld_win_dom_mpi_comm(const pld_win_dom_t *d) { return d->comm; }
MPI_Win pld_win_dom_mpi_win(const pld_win_dom_t *d) { return d->win; }
MPI_Aint pld_win_dom_mpi_disp(const pld_win_dom_t *d, int p, size_t disp) { return d->off[p] + (MPI_Aint)disp; }

/* ---- progress --------------------------------------------------------------- */

pld_status_t pld_win_poll(pld_win_sys_t *sys)
{
    sys->counters.polls++;
    /* hybrid: apply the signals that have arrived (enters MPI progress),
     * unless read_cell just did: one MPI entry per wait-loop iteration (each
     * is a poll() of the TCP sockets) */
    if (sys->nhybrid > 0 && !sys->entered)
        pld_win_msg_serve_all(sys);
    /* Spin, then yield: the count restarts with every put/get/add/notify, so
     * a wait that is answered within PLD_WIN_YIELD_EVERY polls never gives up
     * its time slice (on a loaded machine a yield can cost milliseconds). */
    const uint64_t n = ++sys->spin;
    if (sys->mpi && !sys->entered && (!sys->single_node || n % PLD_WIN_ENTER_EVERY == 0)) {
        /* Enters MPI unless the loop already did since the previous poll
         * (read_cell's MPI_Win_sync on an rma window; on shm that is a bare
         * memory barrier in osc sm): pt2pt (across nodes) progresses only
         * inside MPI, and its MPI_Win_sync runs opal_progress (multinode.md
         * §2). One entry per iteration, not two: with mpi_yield_when_idle
         * every idle entry into progress is a sched_yield. On one node every
         * transport moves data without the target's help (osc sm, osc rdma
         * over vader): entering every PLD_WIN_ENTER_EVERY polls keeps MPI
         * alive at a fraction of the cost. */
        PLD_MPI_NOTE(MPI_Win_sync(sys->status_win));
    }
    if (n % PLD_WIN_YIELD_EVERY == 0) {
        if (sys->mpi) { /* osc ucx progresses only in iprobe (platform.md §3.4) */
            int flag = 0;
            PLD_MPI_NOTE(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, sys->world, &flag, MPI_STATUS_IGNORE));
        }
        sched_yield();
        sys->counters.yields++;
    }
    sys->entered = 0;
    return sys->sticky;
}

/* ---- status board ------------------------------------------------------------ */

/* Before this rank says it finished, or passes a phase between dispatches,
 * every signal it sent by message has been applied (pld_win_msg.c): no
 * signal of a dispatch lands after the windows were cleared, or after its
 * target finished. (A rank that says it is blocked does not wait: the
 * deadlock detector compares the message counts of the records instead.) */
static void settle(pld_win_sys_t *sys, int state)
{
    if ((sys->pending > 0 || sys->flushing > 0) && state == PLD_WS_FINISHED)
        (void)pld_win_msg_drain(sys, NULL, 0); /* fails only on abort or the sticky error */
}

void pld_win_status_set(pld_win_sys_t *sys, const pld_win_status_t *st)
{
    pld_win_status_t *me = sys->status;
    settle(sys, st->state);
    me->state = st->state;
    me->line = st->line;
    me->col = st->col;
    me->cmp = st->cmp;
    me->expected = st->expected;
    me->found = st->found;
    me->dom_rank = st->dom_rank;
    size_t n = strnlen(st->what, sizeof st->what - 1);
    memcpy(me->what, st->what, n);
    memset(me->what + n, 0, sizeof me->what - n);
    me->seq++;
    if (sys->mpi)
        PLD_MPI_NOTE(MPI_Win_sync(sys->status_win));
}

pld_win_progress_t *pld_win_progress_slot(pld_win_sys_t *sys) { return &sys->status->progress; }

void pld_win_status_phase(pld_win_sys_t *sys, int64_t phase)
{
    settle(sys, PLD_WS_FINISHED);
    sys->status->phase = phase;
    if (sys->mpi)
        PLD_MPI_NOTE(MPI_Win_sync(sys->status_win));
}

pld_status_t pld_win_status_get(pld_win_sys_t *sys, int r, pld_win_status_t *st)
{
    char *err = NULL;
    size_t errn = 0;
    if (r < 0 || r >= sys->size)
        return pld_win_fail(sys, PLD_E_USAGE, err, errn, "status of rank %d requested in a world of %d", r,
                            sys->size);
    pld_status_t st0 = pld_win_sticky(sys, err, errn);
    if (st0 != PLD_OK)
        return st0;
    if (!sys->mpi || r == sys->rank) {
        if (sys->mpi)
            PLD_MPI_CHECK(MPI_Win_sync(sys->status_win));
        memcpy(st, sys->status, sizeof *st);
        return PLD_OK;
    }
    PLD_MPI_CHECK(MPI_Get(st, (int)sizeof *st, MPI_BYTE, r, 0, (int)sizeof *st, MPI_BYTE, sys->status_win));
    PLD_MPI_CHECK(MPI_Win_flush(r, sys->status_win));
    sys->counters.flushes++;
    return PLD_OK;
}

static pld_status_t abort_one(pld_win_sys_t *sys, int r, int32_t reason)
{
    char *err = NULL;
    size_t errn = 0;
    const int32_t one = reason;
    PLD_MPI_CHECK(MPI_Accumulate(&one, 1, MPI_INT32_T, r, (MPI_Aint)offsetof(pld_win_status_t, abort), 1,
                                 MPI_INT32_T, MPI_REPLACE, sys->status_win));
    PLD_MPI_CHECK(MPI_Win_flush(r, sys->status_win));
    sys->counters.flushes++;
    return PLD_OK;
}

void pld_win_status_abort_all(pld_win_sys_t *sys, int reason)
{
    if (reason <= 0)
        reason = PLD_WA_FAILED;
    /* the first reason wins: a later abort does not overwrite it */
    int cur = pld_win_status_aborted(sys);
    if (cur)
        reason = cur;
    if (!sys->mpi) {
        atomic_store_explicit((_Atomic int32_t *)(void *)&sys->status->abort, reason, memory_order_release);
        return;
    }
    /* Self first, then everyone else: one unreachable rank must not keep the
     * others from hearing about it. */
    abort_one(sys, sys->rank, reason);
    for (int k = 1; k < sys->size; k++)
        abort_one(sys, (sys->rank + k) % sys->size, reason);
}

int pld_win_status_aborted(pld_win_sys_t *sys)
{
    if (sys->mpi)
        PLD_MPI_NOTE(MPI_Win_sync(sys->status_win));
    return atomic_load_explicit((_Atomic int32_t *)(void *)&sys->status->abort, memory_order_acquire);
}
