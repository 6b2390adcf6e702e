#!/usr/bin/env bash
# tests/fuzz/run.sh [--target parse|run] SECONDS [extra libFuzzer flags...]
#
# Builds a libFuzzer harness with clang (-fsanitize=fuzzer,address,undefined)
# in build-fuzz/ and fuzzes for SECONDS seconds on one core.
#
#   --target parse (default) tests/fuzz/fuzz_parse.c: the parser and the
#       checker. Seeds from tests/examples, programs/, tests/bad/ and
#       tests/fuzz/regress/. Corpus build-fuzz/corpus/, crashes in
#       build-fuzz/artifacts/ (crash-*, leak-*, timeout-*, oom-*).
#   --target run   tests/fuzz/fuzz_run.c: parse, check at P = 1 and run on one
#       rank with local windows under an op budget and a memory cap. Seeds: the
#       programs of programs/ and tests/examples/*.pld (each also with a few
#       "# fuzz-run:" headers: other input generators, 2 dispatches),
#       tests/fuzz/run_seeds/, tests/fuzz/regress_run/, tests/mpi/programs/
#       and tests/bad/. Corpus
#       build-fuzz/corpus-run/, crashes in build-fuzz/artifacts-run/.
#
#   tests/fuzz/run.sh 1800 > build-fuzz/fuzz.log 2>&1               # a 30-minute parser run
#   tests/fuzz/run.sh --target run 1800 > build-fuzz/fuzz-run.log 2>&1
#   PLD_FUZZ_OOM=0 tests/fuzz/run.sh 600                 # parser without the OOM-injection mode
#   build-fuzz/tests/fuzz/fuzz_parse -minimize_crash=1 -runs=20000 CRASHFILE
#   PLD_FUZZ_VERBOSE=1 build-fuzz/tests/fuzz/fuzz_run CRASHFILE   # what the runtime did
set -euo pipefail

target=parse
if [ "${1:-}" = "--target" ]; then
    target=${2:?--target parse|run}
    shift 2
fi
case "$target" in parse|run) ;; *) echo "run.sh: unknown target '$target' (parse|run)" >&2; exit 64 ;; esac
secs=${1:-60}
shift || true
root=$(cd "$(dirname "$0")/../.." && pwd)
bdir="$root/build-fuzz"
examples="$root/tests/examples"

cmake -S "$root" -B "$bdir" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DPLD_FUZZ=ON -DPLD_SANITIZE=ON >/dev/null
cmake --build "$bdir" --target "fuzz_$target" -j "${PLD_FUZZ_BUILD_JOBS:-2}" >/dev/null

# UBSan: halt on the first report so the fuzzer saves the input.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}

if [ "$target" = run ]; then
    mkdir -p "$bdir/corpus-run" "$bdir/seeds-run" "$bdir/artifacts-run"
    rm -f "$bdir/seeds-run"/*
    for f in "$root"/programs/*/*.pld "$examples"/*.pld; do
        [ -f "$f" ] || continue
        b="$(basename "$(dirname "$f")")_$(basename "$f" .pld)"
        cp "$f" "$bdir/seeds-run/$b.pld"
        # the same program with other inputs and two dispatches
        { echo "# fuzz-run: inputs=arange dispatches=2"; cat "$f"; } > "$bdir/seeds-run/$b.arange2.pld"
        { echo "# fuzz-run: inputs=random:9 persistent=1 dispatches=2"; cat "$f"; } > "$bdir/seeds-run/$b.persist.pld"
    done
    for f in "$root"/tests/fuzz/run_seeds/* "$root"/tests/fuzz/regress_run/* \
             "$root"/tests/mpi/programs/*.pld "$root"/tests/bad/*.pld; do
        [ -f "$f" ] || continue
        case "$f" in */README*) continue ;; esac
        if grep -qxF "$(basename "$f")" "$root/tests/fuzz/known_open.txt" 2>/dev/null; then
            continue
        fi
        cp "$f" "$bdir/seeds-run/$(basename "$(dirname "$f")")_$(basename "$f")"
    done
    echo "fuzz_run: fuzzing for ${secs}s; corpus $bdir/corpus-run, crashes in $bdir/artifacts-run"
    # one process (no -fork/-jobs): the machine is shared. -timeout: the op
    # budget and the 0.5 s watchdog end every run far sooner.
    exec "$bdir/tests/fuzz/fuzz_run" "$bdir/corpus-run" "$bdir/seeds-run" \
         -max_total_time="$secs" -max_len=16384 -timeout=20 -rss_limit_mb=2048 \
         -artifact_prefix="$bdir/artifacts-run/" -print_final_stats=1 "$@"
fi

mkdir -p "$bdir/corpus" "$bdir/seeds" "$bdir/artifacts"
for f in "$examples"/*.pld "$examples"/*.dsl.py "$examples"/errors/*.py \
         "$root"/programs/*/*.pld "$root"/tests/bad/*.pld "$root"/tests/fuzz/regress/*; do
    [ -f "$f" ] || continue
    case "$f" in */README*) continue ;; esac
    # known, unfixed crashers would only crash the fuzzer at start-up
    if grep -qxF "$(basename "$f")" "$root/tests/fuzz/known_open.txt" 2>/dev/null; then
        continue
    fi
    cp "$f" "$bdir/seeds/$(basename "$(dirname "$f")")_$(basename "$f")"
done

echo "fuzz_parse: fuzzing for ${secs}s; corpus $bdir/corpus, crashes in $bdir/artifacts"
# -fork=1 -ignore_crashes=1: keep fuzzing after a crash and save every one.
exec "$bdir/tests/fuzz/fuzz_parse" "$bdir/corpus" "$bdir/seeds" \
     -max_total_time="$secs" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
     -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
     -artifact_prefix="$bdir/artifacts/" -print_final_stats=1 "$@"
