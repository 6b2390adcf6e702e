/* bench_win.c - the window layer against plain MPI on the same window
 * (docs/benchmarks-window.md; run by bench/run_bench_win.sh).
 *
 *   mpirun -n 2 bench_win [rma|shm] [batches]
 *
 * One domain over both ranks (transport rma or shm), one window. Metrics, each
 * measured in `batches` batches that alternate layer and plain MPI so that
 * drift hits both alike. Every single op is timed (rank 0's clock) and the
 * value printed is the median over all ops of all batches: on a shared 2-core
 * machine a batch mean mostly measures whether a scheduler time slice hit the
 * batch. rt_*_mean is the mean, for comparison.
 *
 *   rt_*      notify -> wait round trip (ping-pong of signal cells), us
 *             pld:     pld_win_notify(+1) / loop { pld_win_read_cell; pld_win_poll }
 *             mpi:     MPI_Win_sync + MPI_Accumulate(MPI_SUM, MPI_INT32_T) +
 *                      MPI_Win_flush / loop { MPI_Win_sync; atomic acquire
 *                      load; sched_yield every 64 polls } (platform.md §7.1,
 *                      the release MPI_Win_sync included, as in the layer)
 *             mpimin:  the same without the release MPI_Win_sync
 *   put1m_*   1 MiB put, rank 0 -> rank 1, us per op
 *             pld:     pld_win_put;  mpi: MPI_Put(MPI_BYTE) + MPI_Win_flush
 *   get1m_*   1 MiB get, rank 0 <- rank 1, us per op
 *             pld:     pld_win_get;  mpi: MPI_Get(MPI_BYTE) + MPI_Win_flush
 *
 * Output: "name value" lines on rank 0. */
#include "pld_win_int.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1024 * 1024)
#define DATA 4096 /* data offset in the window; cells below */
#define RT_PER_BATCH 2000
#define XFER_PER_BATCH 100

static int g_rank;
static pld_win_sys_t *g_sys;
static pld_win_dom_t *g_d;
static char E[256];

static void die(const char *what)
{
    fprintf(stderr, "[rank %d] bench_win: %s: %s\n", g_rank, what, E);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- round trips --------------------------------------------------------------- */

static int32_t g_pld_seen, g_mpi_seen; /* cell values reached so far */

static void pld_wait(size_t cell, int32_t v)
{
    while (pld_win_read_cell(g_d, cell) < v)
        pld_win_poll(g_sys);
}

/* Each round trip's time in us goes to t[0..n). */
static void rt_pld(int n, double *t)
{
    const int peer = 1 - g_rank;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < n; i++) {
        const double t0 = MPI_Wtime();
        if (g_rank == 0) {
            if (pld_win_notify(g_d, peer, 0, 1, 0, E, sizeof E) != PLD_OK)
                die("notify");
            pld_wait(0, ++g_pld_seen);
        } else {
            pld_wait(0, ++g_pld_seen);
            if (pld_win_notify(g_d, peer, 0, 1, 0, E, sizeof E) != PLD_OK)
                die("notify");
        }
        t[i] = (MPI_Wtime() - t0) * 1e6;
    }
}

static void mpi_notify(MPI_Win win, int peer, MPI_Aint disp, int release)
{
    const int32_t one = 1;
    if (release)
        MPI_Win_sync(win);
    MPI_Accumulate(&one, 1, MPI_INT32_T, peer, disp, 1, MPI_INT32_T, MPI_SUM, win);
    MPI_Win_flush(peer, win);
}

static void mpi_wait(MPI_Win win, _Atomic int32_t *cell, int32_t v)
{
    for (unsigned long n = 1;; n++) {
        MPI_Win_sync(win);
        if (atomic_load_explicit(cell, memory_order_acquire) >= v)
            return;
        if (n % 64 == 0)
            sched_yield();
    }
}

static void rt_mpi(int n, int release, double *t)
{
    const int peer = 1 - g_rank;
    MPI_Win win = pld_win_dom_mpi_win(g_d);
    const MPI_Aint disp = pld_win_dom_mpi_disp(g_d, peer, 64);
    _Atomic int32_t *cell = (_Atomic int32_t *)(void *)((char *)pld_win_dom_base(g_d) + 64);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < n; i++) {
        const double t0 = MPI_Wtime();
        if (g_rank == 0) {
            mpi_notify(win, peer, disp, release);
            mpi_wait(win, cell, ++g_mpi_seen);
        } else {
            mpi_wait(win, cell, ++g_mpi_seen);
            mpi_notify(win, peer, disp, release);
        }
        t[i] = (MPI_Wtime() - t0) * 1e6;
    }
}

static double mean(const double *v, int n)
{
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += v[i];
    return sum / n;
}

/* ---- 1 MiB transfers (rank 0 active, rank 1 waits in a barrier) ---------------- */

enum xfer { PUT_PLD, PUT_MPI, GET_PLD, GET_MPI };

/* XFER_PER_BATCH single-op times in us (rank 0's) to t. */
static void xfer(enum xfer kind, char *buf, double *t)
{
    MPI_Win win = pld_win_dom_mpi_win(g_d);
    const MPI_Aint disp = pld_win_dom_mpi_disp(g_d, 1, DATA);
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0) {
        for (int i = 0; i < XFER_PER_BATCH; i++) {
            const double t0 = MPI_Wtime();
            switch (kind) {
            case PUT_PLD:
                if (pld_win_put(g_d, 1, DATA, buf, MIB, E, sizeof E) != PLD_OK)
                    die("put");
                break;
            case PUT_MPI:
                MPI_Put(buf, MIB, MPI_BYTE, 1, disp, MIB, MPI_BYTE, win);
                MPI_Win_flush(1, win);
                break;
            case GET_PLD:
                if (pld_win_get(g_d, 1, DATA, buf, MIB, E, sizeof E) != PLD_OK)
                    die("get");
                break;
            case GET_MPI:
                MPI_Get(buf, MIB, MPI_BYTE, 1, disp, MIB, MPI_BYTE, win);
                MPI_Win_flush(1, win);
                break;
            }
            t[i] = (MPI_Wtime() - t0) * 1e6;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    int np = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    pld_win_transport_t tr = PLD_WIN_RMA;
    if (np != 2 || (argc > 1 && (pld_win_transport_from_name(argv[1], &tr) != 0 || tr == PLD_WIN_LOCAL))) {
        if (g_rank == 0)
            fprintf(stderr, "usage: mpirun -n 2 bench_win [rma|shm|auto] [batches]\n");
        MPI_Finalize();
        return 64;
    }
    int batches = argc > 2 ? atoi(argv[2]) : 11;
    if (batches < 1 || batches > 1000)
        batches = 11;
    if (pld_win_sys_init(tr, &g_sys, E, sizeof E) != PLD_OK)
        die("sys_init");
    const int members[2] = {0, 1};
    if (pld_win_dom_create(g_sys, members, 2, DATA + MIB, &g_d, E, sizeof E) != PLD_OK)
        die("dom_create");
    char *buf = malloc(MIB);
    for (size_t i = 0; i < MIB; i++)
        buf[i] = (char)(i * 7 + 1);
    /* v[k]: every op time of metric k (rt: RT_PER_BATCH per batch, xfer:
     * XFER_PER_BATCH per batch) */
    double *v[7];
    int nv[7];
    for (int k = 0; k < 7; k++) {
        nv[k] = batches * (k < 3 ? RT_PER_BATCH : XFER_PER_BATCH);
        v[k] = calloc((size_t)nv[k], sizeof(double));
    }
    /* warm-up */
    rt_pld(500, v[0]);
    rt_mpi(500, 1, v[1]);
    for (int k = 0; k < 4; k++)
        xfer((enum xfer)k, buf, v[3 + k]);
    for (int b = 0; b < batches; b++) {
        double *r0 = v[0] + (size_t)b * RT_PER_BATCH, *r1 = v[1] + (size_t)b * RT_PER_BATCH;
        /* alternate the order of each pair between batches */
        if (b % 2) {
            rt_mpi(RT_PER_BATCH, 1, r1);
            rt_pld(RT_PER_BATCH, r0);
        } else {
            rt_pld(RT_PER_BATCH, r0);
            rt_mpi(RT_PER_BATCH, 1, r1);
        }
        rt_mpi(RT_PER_BATCH, 0, v[2] + (size_t)b * RT_PER_BATCH);
        for (int k = 0; k < 4; k++) {
            const int kk = b % 2 ? k ^ 1 : k; /* pld/mpi order alternates */
            xfer((enum xfer)kk, buf, v[3 + kk] + (size_t)b * XFER_PER_BATCH);
        }
    }
    /* the data really moved */
    if (g_rank == 1) {
        const char *w = (const char *)pld_win_dom_base(g_d) + DATA;
        pld_win_read_cell(g_d, 0);
        for (size_t i = 0; i < MIB; i += 4093)
            if (w[i] != (char)(i * 7 + 1)) {
                fprintf(stderr, "bench_win: data mismatch at %zu\n", i);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
    }
    if (g_rank == 0) {
        static const char *names[7] = {"rt_pld_us", "rt_mpi_us", "rt_mpimin_us", "put1m_pld_us",
                                       "put1m_mpi_us", "get1m_pld_us", "get1m_mpi_us"};
        printf("transport %s\n", pld_win_transport_name(pld_win_dom_transport(g_d)));
        for (int k = 0; k < 3; k++)
            printf("%s_mean %.4f\n", names[k], mean(v[k], nv[k]));
        for (int k = 0; k < 7; k++)
            printf("%s %.4f\n", names[k], median(v[k], nv[k]));
        fflush(stdout);
    }
    for (int k = 0; k < 7; k++)
        free(v[k]);
    free(buf);
    pld_win_sys_fini(g_sys);
    MPI_Finalize();
    return 0;
}
