/* bench_plain_mpi.c - the plain MPI baseline for the pldrun benchmark
 * (docs/benchmarks-pldrun.md; run by bench/run_bench_pldrun.sh).
 *
 *   mpirun -n 2 bench_plain_mpi rma|shm ROUND_TRIPS TRANSFERS
 *
 * The same MPI calls that pldrun's window layer makes for
 * bench/pingpong.pld, bench/put_1mib.pld and bench/get_1mib.pld, made directly
 * from C on one window over both ranks, with no interpreter in between:
 *
 *   rt_us      notify -> wait round trip, a ping-pong of one INT32 cell per rank.
 *              notify: MPI_Win_sync + MPI_Accumulate(+1, MPI_INT32_T, MPI_SUM)
 *                      + MPI_Win_flush(peer)  (pld_win_notify on rma)
 *              wait:   loop { MPI_Win_sync; C11 acquire load; sched_yield()
 *                      every 64 polls }  (pld_win_read_cell + pld_win_poll)
 *   rtmin_us   the same without the release MPI_Win_sync before the accumulate
 *   put1m_us   1 MiB MPI_Put(MPI_BYTE) + MPI_Win_flush(1) from a local buffer,
 *              rank 0 -> rank 1, while rank 1 waits on a cell (as in put_1mib.pld)
 *   get1m_us   1 MiB MPI_Get(MPI_BYTE) + MPI_Win_flush(1) into a local buffer,
 *              rank 0 <- rank 1, while rank 1 waits on a cell (as in get_1mib.pld)
 *
 * rma: MPI_Win_allocate (osc rdma), shm: MPI_Win_allocate_shared (osc sm), both
 * with MPI_Win_lock_all(MPI_MODE_NOCHECK) held for the run, as pld_win does.
 * Each value is the mean over one timed loop of that many operations (rank 0's
 * MPI_Wtime around the loop), the quantity that the difference of two pldrun
 * run times gives. Output: "name value" lines on rank 0. */
#include <mpi.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1024 * 1024)
#define CELL 0  /* round-trip cell */
#define DONE 64 /* "transfers finished" cell */
#define PAGE 4096

/* The 1 MiB data region starts at the first page boundary at or after
 * displacement PAGE of each rank's window, and the local buffer is
 * page-aligned too: source and destination then have the same offset within
 * a page. glibc's memmove (rep movsb), which osc rdma and osc sm use for these
 * copies, runs up to 10x slower on this CPU when the destination sits a few
 * bytes past the source modulo 4 KiB (see docs/benchmarks-pldrun.md). */
static MPI_Aint g_data[2]; /* the data displacement on each rank */

static int g_rank;
static MPI_Win g_win;
static char *g_base;

static void notify(int peer, MPI_Aint disp, int release)
{
    const int32_t one = 1;
    if (release)
        MPI_Win_sync(g_win);
    MPI_Accumulate(&one, 1, MPI_INT32_T, peer, disp, 1, MPI_INT32_T, MPI_SUM, g_win);
    MPI_Win_flush(peer, g_win);
}

static void wait_cell(MPI_Aint disp, int32_t v)
{
    _Atomic int32_t *cell = (_Atomic int32_t *)(void *)(g_base + disp);
    for (unsigned long n = 1;; n++) {
        MPI_Win_sync(g_win);
        if (atomic_load_explicit(cell, memory_order_acquire) >= v)
            return;
        if (n % 64 == 0)
            sched_yield();
    }
}

/* n round trips; returns rank 0's mean in us. */
static double round_trips(long n, int release, int32_t *seen)
{
    const int peer = 1 - g_rank;
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (long i = 0; i < n; i++) {
        if (g_rank == 0) {
            notify(peer, CELL, release);
            wait_cell(CELL, ++*seen);
        } else {
            wait_cell(CELL, ++*seen);
            notify(peer, CELL, release);
        }
    }
    const double t = MPI_Wtime() - t0;
    return t / (double)n * 1e6;
}

/* n 1 MiB transfers by rank 0 (put or get) while rank 1 waits on DONE; returns
 * rank 0's mean in us. */
static double transfers(long n, int is_put, char *buf, int32_t *done)
{
    double t = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0) {
        const double t0 = MPI_Wtime();
        for (long i = 0; i < n; i++) {
            if (is_put)
                MPI_Put(buf, MIB, MPI_BYTE, 1, g_data[1], MIB, MPI_BYTE, g_win);
            else
                MPI_Get(buf, MIB, MPI_BYTE, 1, g_data[1], MIB, MPI_BYTE, g_win);
            MPI_Win_flush(1, g_win);
        }
        t = MPI_Wtime() - t0;
        notify(1, DONE, 1);
    } else {
        wait_cell(DONE, ++*done);
    }
    return t / (double)n * 1e6;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 4 || size != 2 || (strcmp(argv[1], "rma") != 0 && strcmp(argv[1], "shm") != 0)) {
        if (g_rank == 0)
            fprintf(stderr, "usage: mpirun -n 2 bench_plain_mpi rma|shm ROUND_TRIPS TRANSFERS\n");
        MPI_Finalize();
        return 2;
    }
    const int shm = strcmp(argv[1], "shm") == 0;
    const long nrt = atol(argv[2]), nxfer = atol(argv[3]);
    const MPI_Aint bytes = 2 * PAGE + MIB;
    if (shm)
        MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &g_base, &g_win);
    else
        MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &g_base, &g_win);
    memset(g_base, 0, (size_t)bytes);
    const MPI_Aint mine = PAGE + (MPI_Aint)((PAGE - (uintptr_t)g_base % PAGE) % PAGE);
    MPI_Allgather(&mine, 1, MPI_AINT, g_data, 1, MPI_AINT, MPI_COMM_WORLD);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, g_win);
    MPI_Barrier(MPI_COMM_WORLD);

    void *mem = NULL;
    if (posix_memalign(&mem, PAGE, MIB) != 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    char *buf = mem;
    memset(buf, 1, MIB);
    int32_t seen = 0, done = 0;
    /* one untimed warm-up of each, then the timed loops */
    round_trips(nrt / 10 + 1, 1, &seen);
    const double rt = round_trips(nrt, 1, &seen);
    const double rtmin = round_trips(nrt, 0, &seen);
    transfers(nxfer / 10 + 1, 1, buf, &done);
    const double put = transfers(nxfer, 1, buf, &done);
    transfers(nxfer / 10 + 1, 0, buf, &done);
    const double get = transfers(nxfer, 0, buf, &done);
    if (g_rank == 0)
        printf("rt_us %.4f\nrtmin_us %.4f\nput1m_us %.4f\nget1m_us %.4f\n", rt, rtmin, put, get);
    free(buf);
    MPI_Win_unlock_all(g_win);
    MPI_Win_free(&g_win);
    MPI_Finalize();
    return 0;
}
