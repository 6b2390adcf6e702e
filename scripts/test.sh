#!/usr/bin/env bash
# scripts/test.sh - the test command (README, and what .ci/run runs).
#
#   scripts/test.sh           the default tier: every test without the CTest
#                             label `long` (what CI runs; at most 20 minutes
#                             from a fresh clone on 2 cores)
#   scripts/test.sh --full    the full matrix: every registered test, `long`
#                             included (before resolving an issue that touches
#                             the runtime, windows, backends, the tool or the
#                             runners; tests/README.md, "Tiers")
#   --tree asan|release       only that tree (repeatable; default both)
#
# Configures, builds and tests two trees:
#   build-asan/  Debug + AddressSanitizer/UndefinedBehaviorSanitizer at -O1
#                (PLD_SANITIZE=ON)
#   build/       Release
# and runs `ctest --output-on-failure` in each (ctest prints its summary line,
# "N% tests passed, M tests failed out of T"). Per tree it also
#   - writes the JUnit report DIR/ctest-<tier>.xml (ctest --output-junit);
#   - seeds CTest's cost data from tests/cost/<tree>.txt when the tree has
#     none yet (a fresh clone), so that the slowest tests start first; CTest
#     updates DIR/Testing/Temporary/CTestCostData.txt after every run
#     (copy it back to tests/cost/ after a change of the suite's shape);
#   - stops ctest at an overall cap (PLD_TEST_CAP seconds per tree, default
#     1500; --full 5400) with a message naming the tests still running,
#     instead of letting a hanging tree run every test into its timeout;
#   - compares the set of skipped tests with tests/expected_skips.txt: a test
#     that skipped and is not listed for this tree, or is listed and did not
#     skip, fails the run (tests/check_skips.py).
# Both trees are always tested; the exit status is non-zero when either build
# or any test failed.
#
# Environment: JOBS (default: nproc) for make and ctest; PLD_SHARED_DIR when
# shared/ is not beside the repository (only for examples_in_sync, which
# compares tests/examples with shared/examples); extra cmake flags in
# PLD_CMAKE_FLAGS (e.g. -DPLD_TEST_KNOWN_BUGS=ON); PLD_TEST_CAP (seconds).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

tier=default
trees=()
while [ $# -gt 0 ]; do
    case $1 in
        --full) tier=full ;;
        --tree)
            [ $# -ge 2 ] || { echo "scripts/test.sh: --tree needs asan or release" >&2; exit 64; }
            case $2 in asan|release) trees+=("$2") ;;
                *) echo "scripts/test.sh: unknown tree '$2' (asan, release)" >&2; exit 64 ;;
            esac
            shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "scripts/test.sh: unknown option '$1' (see --help)" >&2; exit 64 ;;
    esac
    shift
done
[ ${#trees[@]} -gt 0 ] || trees=(asan release)

# shellcheck source=scripts/mpi_env.sh
. "$root/scripts/mpi_env.sh"
# this run's own Open MPI shared-memory and session directory (reused under
# .ci/run), removed at exit; other jobs' segments are never touched
# shellcheck source=scripts/mpi_rundir.sh
. "$root/scripts/mpi_rundir.sh"

jobs=${JOBS:-$(nproc)}
if [ "$tier" = full ]; then
    cap=${PLD_TEST_CAP:-5400}
    select=()
else
    cap=${PLD_TEST_CAP:-1500}
    select=(-LE long)
fi
extra=()
if [ -n "${PLD_SHARED_DIR:-}" ]; then
    extra+=("-DPLD_SHARED_DIR=$PLD_SHARED_DIR")
fi
if [ -n "${PLD_CMAKE_FLAGS:-}" ]; then
    read -r -a more <<<"$PLD_CMAKE_FLAGS"
    extra+=("${more[@]}")
fi

status=0
summary=()
run_tree() {   # run_tree NAME DIR BUILD_TYPE [cmake flags...]
    local name=$1 dir=$2 type=$3
    shift 3
    local bdir="$root/$dir" t0 t1 rc
    t0=$(date +%s)
    echo "==== $dir ($type $*; tier $tier) ===="
    if ! cmake -S "$root" -B "$bdir" -DCMAKE_BUILD_TYPE="$type" "$@" "${extra[@]}"; then
        echo "scripts/test.sh: configuring $dir failed" >&2
        status=1; summary+=("$dir: configure FAILED"); return
    fi
    if ! cmake --build "$bdir" -j "$jobs"; then
        echo "scripts/test.sh: building $dir failed" >&2
        status=1; summary+=("$dir: build FAILED"); return
    fi
    t1=$(date +%s)
    local cost="$bdir/Testing/Temporary/CTestCostData.txt"
    if [ ! -s "$cost" ] && [ -s "$root/tests/cost/$name.txt" ]; then
        mkdir -p "$(dirname "$cost")"
        cp "$root/tests/cost/$name.txt" "$cost"
    fi
    pld_mpi_rundir_empty   # files that killed jobs of this run left (never another job's)
    local junit="$bdir/ctest-$tier.xml"
    rm -f "$junit"
    # the cap: ctest stops starting tests and cuts the running ones at the
    # stop time; `timeout` is the backstop should ctest itself not return
    # (CTest reads the stop time as a local time of day, the next day's when
    # it has passed today)
    local stop log="$bdir/ctest-$tier.log"
    stop=$(date -d "+$cap seconds" '+%H:%M:%S')
    rc=0
    (cd "$bdir" && timeout -k 30 $((cap + 120)) \
        ctest --output-on-failure -j "$jobs" "${select[@]}" --stop-time "$stop" --output-junit "$junit") \
        2>&1 | tee "$log" || rc=${PIPESTATUS[0]}
    local t2
    t2=$(date +%s)
    if grep -q '^The stop time has been passed' "$log" || [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        echo "scripts/test.sh: $dir: the tests reached the overall cap of $cap s (PLD_TEST_CAP) and were" \
             "stopped; the tests that had not finished are listed above as failed or not run" >&2
        status=1; summary+=("$dir: STOPPED at the cap of $cap s"); return
    fi
    if [ "$rc" -ne 0 ]; then
        echo "scripts/test.sh: tests failed in $dir" >&2
        status=1
    fi
    if [ -s "$junit" ]; then
        if ! python3 "$root/tests/check_skips.py" --junit "$junit" --tree "$name" --tier "$tier" \
                --list "$root/tests/expected_skips.txt"; then
            status=1; rc=1
        fi
    else
        echo "scripts/test.sh: $dir: ctest wrote no JUnit report ($junit)" >&2
        status=1; rc=1
    fi
    summary+=("$dir: $([ "$rc" -eq 0 ] && echo passed || echo FAILED), build $((t1 - t0)) s, tests $((t2 - t1)) s")
}

for t in "${trees[@]}"; do
    case $t in
        asan) run_tree asan build-asan Debug -DPLD_SANITIZE=ON ;;
        release) run_tree release build Release -DPLD_SANITIZE=OFF ;;
    esac
done

for line in "${summary[@]}"; do
    echo "scripts/test.sh: $line"
done
if [ "$status" -eq 0 ]; then
    echo "scripts/test.sh: all builds and tests passed (tier $tier: ${trees[*]})"
else
    echo "scripts/test.sh: FAILED (see above)" >&2
fi
exit "$status"
