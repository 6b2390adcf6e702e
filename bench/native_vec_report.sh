#!/usr/bin/env bash
# bench/native_vec_report.sh [BUILD_DIR] [PROGRAM.pld PLDRUN_ARGS...] - how many
# element-wise loops of the C the native backend generates for a program the
# compiler vectorises (issue 44; not a test). Default program:
# tests/native/numerics.pld with the inputs test native_numerics gives it.
#
# Runs the program once on native with --backend-options dump=DIR (a fresh
# cache), then compiles each dumped kernel again with the flags native used
# (the cc-*.flags file of that cache) plus the compiler's vectoriser report:
# GCC -fopt-info-vec-optimized, clang -Rpass=loop-vectorize (CC, default cc,
# as native). An element-wise loop is a generated line
# `for (int64_t i = 0; i < N; i++) { ... O[i] = ... }` (the inline loops of
# pld_cgen_elem / _compute); a loop counts as vectorised when the compiler
# reports a vectorised loop on its line. Prints, per kernel and in all:
# "vectorised V of E element-wise loops (L loops vectorised in all)".
# With PLD_VEC_EXTRA="flags" the recompile adds them (for comparisons, e.g.
# -fno-guess-branch-probability). With PLD_VEC_REQUIRE=1 (test
# native_vectorised) every element-wise loop but those calling exp or log (a
# libm call per element) or a cast's rounding function of pld_kern_fn.h (a
# loop over the bits, or floor / fmod) must vectorise: the others are listed and the exit status
# is 1, and so is an error exit of the generated code (after the copied
# headers) that is not cold (`return 1;` or `return rt->fail(` without
# `pc_cold(), `: docs/native.md; the loops' periodic tick exit is left
# ordinary on purpose); a compiler that is neither GCC nor clang
# exits 77 (skipped).
# Exit 0, or 1 when a step fails.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
shift || true
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc=${CC:-cc}
if [ $# -eq 0 ]; then
    python3 - "$tmp/steps.npy" <<'PY'
import struct, sys
hdr = "{'descr': '<i8', 'fortran_order': False, 'shape': (), }"
hdr += ' ' * (64 - 10 - len(hdr) - 1) + '\n'
open(sys.argv[1], 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode() + struct.pack('<q', 5))
PY
    set -- "$root/tests/native/numerics.pld" --in x=random:3 --in h=random:4 --in bh=random:5 --in iv=random:6 \
        --in w=random:7 --in "steps=$tmp/steps.npy"
fi
prog=$1
shift
mkdir -p "$tmp/dump"
if ! XDG_CACHE_HOME=$tmp/xdg "$build/pldrun" --backend native --backend-options "dump=$tmp/dump" "$@" "$prog" \
        >"$tmp/run.log" 2>&1; then
    echo "native_vec_report.sh: the native run failed:" >&2
    cat "$tmp/run.log" >&2
    exit 1
fi
flags=$(cat "$tmp"/xdg/pldrun/cc-*.flags)
if "$cc" --version 2>/dev/null | grep -qi clang; then
    rep=-Rpass=loop-vectorize
elif "$cc" --version 2>/dev/null | grep -qiE '^(gcc|cc) |free software foundation'; then
    rep=-fopt-info-vec-optimized
else
    echo "native_vec_report.sh: $cc is neither GCC nor clang: no vectoriser report to read" >&2
    exit 77
fi
echo "program: $prog"
echo "compiler: $("$cc" --version | head -1); native's flags: $flags; report: $rep ${PLD_VEC_EXTRA:-}"
te=0 tv=0 tl=0
for c in "$tmp"/dump/*.c; do
    # shellcheck disable=SC2086  # flag lists
    "$cc" $flags ${PLD_VEC_EXTRA:-} $rep -o "$tmp/k.so" "$c" -lm >"$tmp/vec.log" 2>&1 || {
        echo "native_vec_report.sh: $cc failed on $c" >&2
        cat "$tmp/vec.log" >&2
        exit 1
    }
    b=$(basename "$c")
    grep -nE 'for \(int64_t i = 0; i < [^;]+; i\+\+\) \{.*O\[i\] =' "$c" | cut -d: -f1 | sort -u >"$tmp/elem"
    grep -E "$b:[0-9]+:[0-9]+: (optimized|remark): (loop vectorized|vectorized loop)" "$tmp/vec.log" |
        sed -E "s/.*$b:([0-9]+):.*/\1/" | sort -u >"$tmp/vec"
    e=$(wc -l <"$tmp/elem") v=$(comm -12 "$tmp/elem" "$tmp/vec" | wc -l) l=$(wc -l <"$tmp/vec")
    echo "  ${b%.c}: vectorised $v of $e element-wise loops ($l loops vectorised in all)"
    te=$((te + e)) tv=$((tv + v)) tl=$((tl + l))
    hot=$(awk '/^#endif/ {last = FNR} {l[FNR] = $0} END {for (i = last + 1; i <= FNR; i++)
              if (l[i] ~ /return (1;|rt->(k)?fail\()/ && l[i] !~ /tick_n\(bk, [0-9-]+, PC_TICK_EVERY\)/)
                  print i ": " substr(l[i], 1, 140)}' "$c")
    if [ -n "$hot" ]; then
        echo "    error exits that are not cold (return without pc_cold):"
        echo "$hot" | sed 's/^/      /'
        missed=$((${missed:-0} + $(echo "$hot" | wc -l)))
    fi
    for n in $(comm -23 "$tmp/elem" "$tmp/vec"); do
        line=$(sed -n "${n}p" "$c")
        case $line in
        *"exp("*|*"pld_kfn_log("*|*"round_bits("*|*"pld_kfn_f2i32("*)
            echo "    not vectorised (calls exp, log or a cast's rounding function), line $n: $(echo "$line" | sed 's/^ *//' | cut -c1-110)" ;;
        *) echo "    NOT VECTORISED, line $n: $(echo "$line" | sed 's/^ *//' | cut -c1-110)"; missed=$((${missed:-0} + 1)) ;;
        esac
    done
done
echo "in all: vectorised $tv of $te element-wise loops ($tl loops vectorised in all)"
if [ "${PLD_VEC_REQUIRE:-0}" = 1 ] && [ "${missed:-0}" -gt 0 ]; then
    echo "FAIL: ${missed} element-wise loop(s) without a libm call not vectorised, or error exits not cold"
    exit 1
fi
