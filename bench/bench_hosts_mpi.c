/* bench_hosts_mpi.c - the MPI baselines of the across-hosts benchmark
 * (bench/run_bench_hosts.py, docs/benchmarks-hosts.md).
 *
 *   mpirun -n P bench_hosts_mpi OP ITERS
 *
 * OP:
 *   allreduce   MPI_Allreduce(MPI_SUM) of 1 Mi FP32 per rank (4 MiB)
 *   alltoallv   MPI_Alltoallv, 1 MiB per rank: 1 MiB / P to every rank
 *   allgather   MPI_Allgather of 1 MiB per rank
 *   pingpong    MPI_Send / MPI_Recv of one int32, rank 0 <-> rank 1 (the
 *               others only take part in the barriers); one op = one round trip
 * Each op runs 10 times untimed, then ITERS times between two barriers;
 * rank 0 prints "OP us_per_op" (the mean over the timed loop, MPI_Wtime) and
 * "check OP ok" when the results are right (every element is checked). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1024 * 1024)

static int g_rank, g_size;

/* The buffers of one collective and the collective itself. */
typedef struct bufs {
    float *s, *r;
    int *cnt, *dsp; /* alltoallv */
    int n;          /* elements per call (allreduce) or per rank (allgather) */
} bufs_t;

static void op_allreduce(bufs_t *b) { MPI_Allreduce(b->s, b->r, b->n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); }
static void op_alltoallv(bufs_t *b)
{
    MPI_Alltoallv(b->s, b->cnt, b->dsp, MPI_FLOAT, b->r, b->cnt, b->dsp, MPI_FLOAT, MPI_COMM_WORLD);
}
static void op_allgather(bufs_t *b) { MPI_Allgather(b->s, b->n, MPI_FLOAT, b->r, b->n, MPI_FLOAT, MPI_COMM_WORLD); }

/* op 10 times untimed, then iters times between two barriers: us per call */
static double timed(int iters, void (*op)(bufs_t *), bufs_t *b)
{
    for (int k = 0; k < 10; k++)
        op(b);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int k = 0; k < iters; k++)
        op(b);
    MPI_Barrier(MPI_COMM_WORLD);
    return (MPI_Wtime() - t0) / iters * 1e6;
}

static int run_allreduce(int iters, double *us)
{
    const int n = MIB;
    float *x = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n);
    if (!x || !y)
        return 1;
    for (int i = 0; i < n; i++)
        x[i] = (float)((i + g_rank) % 64) * 0.125f;
    bufs_t b = {x, y, NULL, NULL, n};
    *us = timed(iters, op_allreduce, &b);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        float want = 0;
        for (int p = 0; p < g_size; p++)
            want += (float)((i + p) % 64) * 0.125f;
        bad += y[i] != want;
    }
    free(x);
    free(y);
    return bad != 0;
}

static int run_alltoallv(int iters, double *us)
{
    const int per = MIB / 4 / g_size; /* FP32 elements to each rank */
    float *s = malloc((size_t)MIB), *r = malloc((size_t)MIB);
    int *cnt = malloc(sizeof(int) * g_size), *dsp = malloc(sizeof(int) * g_size);
    if (!s || !r || !cnt || !dsp)
        return 1;
    for (int p = 0; p < g_size; p++) {
        cnt[p] = per;
        dsp[p] = p * per;
    }
    for (int i = 0; i < per * g_size; i++)
        s[i] = (float)(g_rank * 1000003 + i);
    bufs_t b = {s, r, cnt, dsp, 0};
    *us = timed(iters, op_alltoallv, &b);
    int bad = 0;
    for (int p = 0; p < g_size; p++)
        for (int i = 0; i < per; i++)
            bad += r[p * per + i] != (float)(p * 1000003 + g_rank * per + i);
    free(s);
    free(r);
    free(cnt);
    free(dsp);
    return bad != 0;
}

static int run_allgather(int iters, double *us)
{
    const int n = MIB / 4;
    float *s = malloc((size_t)MIB), *r = malloc((size_t)MIB * (size_t)g_size);
    if (!s || !r)
        return 1;
    for (int i = 0; i < n; i++)
        s[i] = (float)(g_rank * 1000003 + i);
    bufs_t b = {s, r, NULL, NULL, n};
    *us = timed(iters, op_allgather, &b);
    int bad = 0;
    for (int p = 0; p < g_size; p++)
        for (int i = 0; i < n; i++)
            bad += r[(size_t)p * n + i] != (float)(p * 1000003 + i);
    free(s);
    free(r);
    return bad != 0;
}

static int run_pingpong(int iters, double *us)
{
    int32_t v = 0;
    int bad = 0;
    double t0 = 0;
    for (int k = -10; k < iters; k++) {
        if (k == 0) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        if (g_rank == 0) {
            int32_t out = k;
            MPI_Send(&out, 1, MPI_INT32_T, 1, 7, MPI_COMM_WORLD);
            MPI_Recv(&v, 1, MPI_INT32_T, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            bad += v != k + 1;
        } else if (g_rank == 1) {
            MPI_Recv(&v, 1, MPI_INT32_T, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            v++;
            MPI_Send(&v, 1, MPI_INT32_T, 0, 7, MPI_COMM_WORLD);
        }
    }
    if (g_rank == 0)
        *us = (MPI_Wtime() - t0) / iters * 1e6;
    MPI_Barrier(MPI_COMM_WORLD);
    return bad != 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    if (argc != 3 || atoi(argv[2]) <= 0) {
        if (g_rank == 0)
            fprintf(stderr, "usage: bench_hosts_mpi allreduce|alltoallv|allgather|pingpong ITERS\n");
        MPI_Finalize();
        return 64;
    }
    const char *op = argv[1];
    const int iters = atoi(argv[2]);
    double us = 0;
    int bad;
    if (strcmp(op, "allreduce") == 0)
        bad = run_allreduce(iters, &us);
    else if (strcmp(op, "alltoallv") == 0)
        bad = run_alltoallv(iters, &us);
    else if (strcmp(op, "allgather") == 0)
        bad = run_allgather(iters, &us);
    else if (strcmp(op, "pingpong") == 0 && g_size >= 2)
        bad = run_pingpong(iters, &us);
    else {
        if (g_rank == 0)
            fprintf(stderr, "bench_hosts_mpi: unknown op '%s' (or pingpong with 1 rank)\n", op);
        MPI_Finalize();
        return 64;
    }
    int anybad = 0;
    MPI_Reduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    if (g_rank == 0) {
        printf("%s %.3f\n", op, us);
        printf("check %s %s\n", op, anybad ? "FAILED" : "ok");
    }
    MPI_Finalize();
    return anybad ? 1 : 0;
}
