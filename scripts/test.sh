#!/usr/bin/env bash
# scripts/test.sh - the test command (README, and what .ci/run runs).
#
# Configures, builds and tests two trees:
#   build-asan/  Debug + AddressSanitizer/UndefinedBehaviorSanitizer (PLD_SANITIZE=ON)
#   build/       Release
# and runs `ctest --output-on-failure` in both (ctest prints its summary line,
# "N% tests passed, M tests failed out of T"). Both trees are always tested;
# the exit status is non-zero when either build or any test failed.
#
# Environment: JOBS (default: nproc) for make and ctest; PLD_SHARED_DIR when
# shared/ is not beside the repository (only for examples_in_sync, which
# compares tests/examples with shared/examples); extra cmake flags in
# PLD_CMAKE_FLAGS (e.g. -DPLD_TEST_KNOWN_BUGS=ON).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# shellcheck source=scripts/mpi_env.sh
. "$root/scripts/mpi_env.sh"

jobs=${JOBS:-$(nproc)}
extra=()
if [ -n "${PLD_SHARED_DIR:-}" ]; then
    extra+=("-DPLD_SHARED_DIR=$PLD_SHARED_DIR")
fi
if [ -n "${PLD_CMAKE_FLAGS:-}" ]; then
    read -r -a more <<<"$PLD_CMAKE_FLAGS"
    extra+=("${more[@]}")
fi

status=0
run_tree() {   # run_tree DIR BUILD_TYPE [cmake flags...]
    local dir=$1 type=$2
    shift 2
    echo "==== $dir ($type $*) ===="
    if ! cmake -S "$root" -B "$root/$dir" -DCMAKE_BUILD_TYPE="$type" "$@" "${extra[@]}"; then
        echo "scripts/test.sh: configuring $dir failed" >&2
        status=1
        return
    fi
    if ! cmake --build "$root/$dir" -j "$jobs"; then
        echo "scripts/test.sh: building $dir failed" >&2
        status=1
        return
    fi
    # Open MPI leaves shared-memory segments behind when a job is killed
    rm -f /dev/shm/vader_segment.* 2>/dev/null || true
    if ! (cd "$root/$dir" && ctest --output-on-failure -j "$jobs"); then
        echo "scripts/test.sh: tests failed in $dir" >&2
        status=1
    fi
    rm -f /dev/shm/vader_segment.* 2>/dev/null || true
}

run_tree build-asan Debug -DPLD_SANITIZE=ON
run_tree build Release -DPLD_SANITIZE=OFF

if [ "$status" -eq 0 ]; then
    echo "scripts/test.sh: all builds and tests passed (build-asan/, build/)"
else
    echo "scripts/test.sh: FAILED (see above)" >&2
fi
exit "$status"
