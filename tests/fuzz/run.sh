#!/usr/bin/env bash
# tests/fuzz/run.sh SECONDS [extra libFuzzer flags...]
#
# Builds the libFuzzer harness with clang (-fsanitize=fuzzer,address,undefined)
# in build-fuzz/, builds a seed corpus from tests/examples, programs/,
# tests/bad/ and tests/fuzz/regress/, and fuzzes the parser (and the checker once it links)
# for SECONDS seconds. New corpus entries go to build-fuzz/corpus/, crashes to
# build-fuzz/artifacts/ (crash-*, leak-*, timeout-*, oom-*).
#
#   tests/fuzz/run.sh 1800 > build-fuzz/fuzz.log 2>&1    # a 30-minute run
#   PLD_FUZZ_OOM=0 tests/fuzz/run.sh 600                 # without the OOM-injection mode
#   build-fuzz/tests/fuzz/fuzz_parse -minimize_crash=1 -runs=20000 CRASHFILE
set -euo pipefail

secs=${1:-60}
shift || true
root=$(cd "$(dirname "$0")/../.." && pwd)
bdir="$root/build-fuzz"
examples="$root/tests/examples"

cmake -S "$root" -B "$bdir" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DPLD_FUZZ=ON -DPLD_SANITIZE=ON >/dev/null
cmake --build "$bdir" --target fuzz_parse -j "$(nproc)" >/dev/null

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

# UBSan: halt on the first report so the fuzzer saves the input.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
echo "fuzz_parse: fuzzing for ${secs}s; corpus $bdir/corpus, crashes in $bdir/artifacts"
# -fork=1 -ignore_crashes=1: keep fuzzing after a crash and save every one.
exec "$bdir/tests/fuzz/fuzz_parse" "$bdir/corpus" "$bdir/seeds" \
     -max_total_time="$secs" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
     -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
     -artifact_prefix="$bdir/artifacts/" -print_final_stats=1 "$@"
