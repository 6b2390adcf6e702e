#!/bin/sh
# run_bench_win.sh - the window layer against plain MPI (docs/benchmarks-window.md).
#
#   bench/run_bench_win.sh [RUNS] [BATCHES]      (from any directory)
#
# Builds pld_win in a Release build directory (BUILD, default build-h8r:
# -DCMAKE_BUILD_TYPE=Release -DPLD_SANITIZE=OFF), compiles bench/bench_win.c
# against it with mpicc, then runs `mpirun -n 2 bench_win TRANSPORT BATCHES`
# RUNS times (default 5) for TRANSPORT rma and shm, and prints the median over
# the runs of every metric (each run reports the median op time over its
# batches; round trips also the mean) plus the ratios layer / plain MPI.
#
# MPI environment: the variables of shared/docs/platform.md section 2 that a
# 2-rank run on 2 cores needs (root, btl self,vader, pml ob1, osc sm,rdma,
# loopback), without mpi_yield_when_idle and with Open MPI's default binding,
# as platform.md section 7.2 recommends for np <= 2 numbers. PLD_BENCH_CI_ENV=1
# switches to the full CI environment (yield_when_idle=1, --bind-to none,
# oversubscribe).
set -eu
RUNS=${1:-5}
BATCHES=${2:-11}
BUILD=${BUILD:-build-h8r}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DPLD_SANITIZE=OFF >/dev/null
cmake --build "$BUILD" --target pld_win pld_base >/dev/null
mpicc -std=c11 -O2 -DNDEBUG -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Wshadow -Wundef -Wwrite-strings \
      -Wstrict-prototypes -Wmissing-prototypes -Wvla -Werror \
      -Isrc/sim_window -Isrc/base -Isrc/parser bench/bench_win.c \
      "$BUILD/libpld_win.a" "$BUILD/libpld_base.a" -lm -o "$BUILD/bench_win"

. "$ROOT/bench/bench_env.sh"

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
for tr in rma shm; do
    i=1
    while [ "$i" -le "$RUNS" ]; do
        mpirun -n 2 "$BUILD/bench_win" "$tr" "$BATCHES" </dev/null >"$OUT/$tr.$i"
        i=$((i + 1))
    done
    echo "== transport $tr: median over $RUNS runs of each run's median op time [min..max over runs]"
    for m in rt_pld_us rt_mpi_us rt_mpimin_us put1m_pld_us put1m_mpi_us get1m_pld_us get1m_mpi_us \
             rt_pld_us_mean rt_mpi_us_mean rt_mpimin_us_mean; do
        cat "$OUT"/"$tr".* | awk -v m="$m" '$1 == m { print $2 }' | sort -g |
            awk -v m="$m" '{ v[NR] = $1 } END {
                med = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
                printf "%-14s %10.3f   [%.3f..%.3f]\n", m, med, v[1], v[NR] }'
    done | tee "$OUT/$tr.med"
    awk '{ x[$1] = $2 } END {
        printf "ratio rt   pld/mpi    %.2f   (pld/mpimin %.2f; means: %.2f, %.2f)\n", x["rt_pld_us"] / x["rt_mpi_us"], x["rt_pld_us"] / x["rt_mpimin_us"], x["rt_pld_us_mean"] / x["rt_mpi_us_mean"], x["rt_pld_us_mean"] / x["rt_mpimin_us_mean"]
        printf "ratio put1m pld/mpi   %.2f\n", x["put1m_pld_us"] / x["put1m_mpi_us"]
        printf "ratio get1m pld/mpi   %.2f\n", x["get1m_pld_us"] / x["get1m_mpi_us"]
        printf "bandwidth put1m pld %.1f GB/s, mpi %.1f GB/s; get1m pld %.1f GB/s, mpi %.1f GB/s\n",
               1.048576e6 / x["put1m_pld_us"] / 1e3, 1.048576e6 / x["put1m_mpi_us"] / 1e3,
               1.048576e6 / x["get1m_pld_us"] / 1e3, 1.048576e6 / x["get1m_mpi_us"] / 1e3 }' "$OUT/$tr.med"
done
