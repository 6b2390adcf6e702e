#!/bin/sh
# run_bench_pldrun.sh - notify->wait round trip and 1 MiB put/get through the
# pldrun binary, against the same MPI calls in a plain C program
# (docs/benchmarks-pldrun.md). A benchmark, not a test.
#
#   bench/run_bench_pldrun.sh [RUNS]          (from any directory)
#
# Builds pldrun in a Release build directory (BUILD, default build-h8r:
# -DCMAKE_BUILD_TYPE=Release -DPLD_SANITIZE=OFF) and bench/bench_plain_mpi.c
# with mpicc -O2. Then, for TRANSPORT rma and shm, RUNS times (default 5):
#   - `mpirun -n 2 pldrun --window-transport TRANSPORT bench/P.pld --in n=N.npy`
#     for P = pingpong, put_1mib, get_1mib, each at a small and a large count;
#     one op costs (t(large) - t(small)) / (large - small), where t is the run
#     time pldrun prints (rank 0, from before the parse to the end of the run),
#     so start-up (parse, check, window allocation, output) cancels out;
#   - `mpirun -n 2 bench_plain_mpi TRANSPORT (large-small) (large-small)`: the
#     same MPI calls from C, the mean over a loop of the same number of ops.
# It prints the median over the runs of every metric [min..max] and the ratios
# pldrun / plain MPI (targets: round trip <= 2, 1 MiB transfers <= 1.25).
#
# Counts: RT_SMALL/RT_LARGE (default 100000/1000000 round trips),
# XFER_SMALL/XFER_LARGE (default 200/4000 transfers).
#
# PLD_BENCH_REV=COMMIT builds pldrun from that commit instead of the working
# tree (git archive into a temporary directory, built there; BUILD is then
# ignored), so that uncommitted edits under src/ do not leak into the numbers.
# The .pld programs and bench_plain_mpi.c always come from this checkout.
#
# MPI environment: as bench/run_bench_win.sh: platform.md section 2 without
# mpi_yield_when_idle/oversubscribe/binding (Open MPI's default binding, 2 ranks
# on cores 0 and 1); PLD_BENCH_CI_ENV=1 switches to the full CI environment.
set -eu
RUNS=${1:-5}
RT_SMALL=${RT_SMALL:-100000}
RT_LARGE=${RT_LARGE:-1000000}
XFER_SMALL=${XFER_SMALL:-200}
XFER_LARGE=${XFER_LARGE:-4000}
BUILD=${BUILD:-build-h8r}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
if [ -n "${PLD_BENCH_REV:-}" ]; then
    mkdir "$OUT/src"
    git archive "$PLD_BENCH_REV" | tar -x -C "$OUT/src"
    echo "pldrun built from commit $(git rev-parse "$PLD_BENCH_REV")"
    cmake -S "$OUT/src" -B "$OUT/build" -DCMAKE_BUILD_TYPE=Release -DPLD_SANITIZE=OFF >/dev/null
    cmake --build "$OUT/build" --target pldrun -j2 >/dev/null
    PLDRUN=$OUT/build/pldrun
else
    echo "pldrun built from the working tree (HEAD $(git rev-parse --short HEAD)$(git status --porcelain -- src tools | grep -q . && echo ', with uncommitted changes under src/ or tools/'))"
    cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DPLD_SANITIZE=OFF >/dev/null
    cmake --build "$BUILD" --target pldrun >/dev/null
    PLDRUN=$BUILD/pldrun
fi
mpicc -std=c11 -O2 -DNDEBUG -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Wshadow -Wundef -Wwrite-strings \
      -Wstrict-prototypes -Wmissing-prototypes -Wvla -Werror bench/bench_plain_mpi.c -o "$OUT/bench_plain_mpi"
for p in pingpong put_1mib get_1mib; do
    "$PLDRUN" --check --ranks 2 "bench/$p.pld"
done

. "$ROOT/bench/bench_env.sh"
echo "counts: round trips $RT_SMALL and $RT_LARGE, transfers $XFER_SMALL and $XFER_LARGE; $RUNS runs per transport"

npy_i64() { # npy_i64 FILE VALUE : a 0-d int64 .npy
    python3 - "$1" "$2" <<'PY'
import struct, sys
hdr = "{'descr': '<i8', 'fortran_order': False, 'shape': (), }"
hdr += ' ' * (64 - 10 - len(hdr) - 1) + '\n'
open(sys.argv[1], 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode() + struct.pack('<q', int(sys.argv[2])))
PY
}
for n in "$RT_SMALL" "$RT_LARGE" "$XFER_SMALL" "$XFER_LARGE"; do
    npy_i64 "$OUT/n$n.npy" "$n"
done

# pldrun_time TRANSPORT PROG N EXPECT: runs PROG with n=N, checks that the
# output contains EXPECT (the program's result), prints the run time in s.
pldrun_time() {
    xs=""
    [ "$2" = pingpong ] || xs="--in xs=arange"
    # shellcheck disable=SC2086
    mpirun -n 2 "$PLDRUN" --window-transport "$1" "bench/$2.pld" $xs --in n="$OUT/n$3.npy" \
        </dev/null >"$OUT/last.txt" 2>&1 || { cat "$OUT/last.txt" >&2; exit 1; }
    grep -q -- "$4" "$OUT/last.txt" || { echo "unexpected result of $2 n=$3:" >&2; cat "$OUT/last.txt" >&2; exit 1; }
    grep -q "windows over $1" "$OUT/last.txt" || { echo "$2 did not run over $1" >&2; exit 1; }
    tail -1 "$OUT/last.txt" | sed -E 's/.*, ([0-9.]+) s$/\1/'
}

# per_op TRANSPORT PROG SMALL LARGE EXPECT_SMALL EXPECT_LARGE: us per op
per_op() {
    ts=$(pldrun_time "$1" "$2" "$3" "$5")
    tl=$(pldrun_time "$1" "$2" "$4" "$6")
    awk -v ts="$ts" -v tl="$tl" -v s="$3" -v l="$4" 'BEGIN { printf "%.4f\n", (tl - ts) / (l - s) * 1e6 }'
}

RT_N=$((RT_LARGE - RT_SMALL))
XFER_N=$((XFER_LARGE - XFER_SMALL))
for tr in rma shm; do
    i=1
    while [ "$i" -le "$RUNS" ]; do
        f=$OUT/$tr.$i
        # pingpong: both cells end at n; put: rank 1 holds rank 0's last element
        # (262143); get: rank 0 holds rank 1's x (sum of 262144..524287).
        # Assignments, so that a failed run stops the script (set -e).
        rt=$(per_op "$tr" pingpong "$RT_SMALL" "$RT_LARGE" "sum $((2 * RT_SMALL)))" "sum $((2 * RT_LARGE)))")
        put=$(per_op "$tr" put_1mib "$XFER_SMALL" "$XFER_LARGE" "sum 262143)" "sum 262143)")
        get=$(per_op "$tr" get_1mib "$XFER_SMALL" "$XFER_LARGE" "sum 1.03079084e+11)" "sum 1.03079084e+11)")
        printf 'rt_pld_us %s\nput1m_pld_us %s\nget1m_pld_us %s\n' "$rt" "$put" "$get" >"$f"
        mpirun -n 2 "$OUT/bench_plain_mpi" "$tr" "$RT_N" "$XFER_N" </dev/null |
            sed -e 's/^rt_us/rt_mpi_us/' -e 's/^rtmin_us/rt_mpimin_us/' -e 's/^put1m_us/put1m_mpi_us/' \
                -e 's/^get1m_us/get1m_mpi_us/' >>"$f"
        i=$((i + 1))
    done
    echo "== transport $tr: median over $RUNS runs, us per op [min..max over runs]"
    for m in rt_pld_us rt_mpi_us rt_mpimin_us put1m_pld_us put1m_mpi_us get1m_pld_us get1m_mpi_us; do
        cat "$OUT"/"$tr".[0-9]* | awk -v m="$m" '$1 == m { print $2 }' | sort -g |
            awk -v m="$m" '{ v[NR] = $1 } END {
                med = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
                printf "%-14s %10.3f   [%.3f..%.3f]\n", m, med, v[1], v[NR] }'
    done | tee "$OUT/$tr.med"
    # ratios of the medians, and of the minimums over the runs (the least
    # disturbed run of each: the machine is shared, noise only adds time)
    awk '{ x[$1] = $2; v = $3; gsub(/[][]/, "", v); split(v, mm, /\.\./); lo[$1] = mm[1] } END {
        printf "ratio rt    pldrun/mpi  %.2f  (pldrun/mpimin %.2f; of minimums %.2f)   target <= 2\n", x["rt_pld_us"] / x["rt_mpi_us"], x["rt_pld_us"] / x["rt_mpimin_us"], lo["rt_pld_us"] / lo["rt_mpi_us"]
        printf "ratio put1m pldrun/mpi  %.2f  (of minimums %.2f)   target <= 1.25\n", x["put1m_pld_us"] / x["put1m_mpi_us"], lo["put1m_pld_us"] / lo["put1m_mpi_us"]
        printf "ratio get1m pldrun/mpi  %.2f  (of minimums %.2f)   target <= 1.25\n", x["get1m_pld_us"] / x["get1m_mpi_us"], lo["get1m_pld_us"] / lo["get1m_mpi_us"]
        printf "bandwidth put1m pldrun %.1f GB/s, mpi %.1f GB/s; get1m pldrun %.1f GB/s, mpi %.1f GB/s\n",
               1.048576e6 / x["put1m_pld_us"] / 1e3, 1.048576e6 / x["put1m_mpi_us"] / 1e3,
               1.048576e6 / x["get1m_pld_us"] / 1e3, 1.048576e6 / x["get1m_mpi_us"] / 1e3 }' "$OUT/$tr.med"
done
