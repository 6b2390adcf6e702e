#!/usr/bin/env bash
# bench/run_bench_interp.sh [BUILD_DIR] - interpreter benchmarks (not a test):
#   1. scalar loop speed: interpreted expression evaluations per second of a
#      scalar loop in a kernel (bench/scalar_loop.pld), from two loop lengths so
#      that start-up cost cancels out;
#   2. peak memory: max RSS of bench/memory.pld for growing tensors, against
#      the bytes of the tensors themselves (input + output).
# Use a Release build (scripts/test.sh builds one in build/). Results: docs/benchmarks-interp.md.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
pldrun=$build/pldrun
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=../scripts/mpi_env.sh
. "$root/scripts/mpi_env.sh"

npy_i64() { # npy_i64 FILE VALUE : a 0-d int64 .npy
    python3 - "$1" "$2" <<'PY'
import struct, sys
hdr = "{'descr': '<i8', 'fortran_order': False, 'shape': (), }"
hdr += ' ' * (64 - 10 - len(hdr) - 1) + '\n'
open(sys.argv[1], 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode() + struct.pack('<q', int(sys.argv[2])))
PY
}

run_loop() { # prints "ops seconds" of the best of 5 runs
    npy_i64 "$tmp/n.npy" "$1"
    best=""
    for _ in 1 2 3 4 5; do
        line=$("$pldrun" --in n="$tmp/n.npy" "$root/bench/scalar_loop.pld" | tail -1)
        ops=$(echo "$line" | sed -E 's/.* ([0-9]+) interpreted ops.*/\1/')
        sec=$(echo "$line" | sed -E 's/.*, ([0-9.]+) s$/\1/')
        if [ -z "$best" ] || awk "BEGIN{exit !($sec < ${best#* })}"; then best="$ops $sec"; fi
    done
    echo "$best"
}

echo "== scalar loop (bench/scalar_loop.pld)"
read -r o1 s1 <<<"$(run_loop 1000000)"
read -r o2 s2 <<<"$(run_loop 11000000)"
awk -v o1="$o1" -v s1="$s1" -v o2="$o2" -v s2="$s2" 'BEGIN {
    printf "  1M iterations: %d ops in %.3f s; 11M iterations: %d ops in %.3f s\n", o1, s1, o2, s2;
    printf "  interpreted ops per second (difference of the two runs): %.1f million\n", (o2 - o1) / (s2 - s1) / 1e6 }'

echo "== peak memory (bench/memory.pld, one rank, FP32 [ROWS, 1024] in and out)"
for rows in 1024 4096 16384 65536; do
    python3 - "$tmp/x.npy" "$rows" <<'PY'
import struct, sys
rows = int(sys.argv[2])
hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, %d, 1024), }" % rows
hdr += ' ' * (64 - 10 - len(hdr) % 64 - 1) + '\n'
with open(sys.argv[1], 'wb') as f:
    f.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode())
    f.write(b'\0' * (rows * 1024 * 4))
PY
    rss=$(/usr/bin/time -f '%M' "$pldrun" --in xs="$tmp/x.npy" --out ys="$tmp/y.npy" "$root/bench/memory.pld" 2>&1 >/dev/null | tail -1)
    tensors=$((2 * rows * 1024 * 4 / 1024))
    echo "  rows=$rows: tensors ${tensors} KiB, max RSS ${rss} KiB, RSS - tensors = $((rss - tensors)) KiB"
done
