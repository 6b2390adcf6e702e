#!/usr/bin/env bash
# lower_roundtrip.sh - the printed lowered program reads back (CTest: lower_roundtrip).
#
# usage: tests/lower_roundtrip.sh PLDRUN DIR...
#
# For every DIR/**/*.pld (sorted) that calls a pld.tensor.* collective: it must
# pass `PLDRUN --check` (unless it is a negative program with an
# `# expect-error:` directive, which must exit 65 and is passed over; any other
# failure, a crash included, fails the test); `PLDRUN --print-lowered FILE` must exit 0, its text
# must pass `PLDRUN --check` with an empty stderr, and `--print-lowered` of that
# text must reproduce it byte for byte (nothing is left to lower: a fixed
# point). At least one HOST builtin dispatch and one CHIP builtin kernel must
# have been seen, so the test cannot pass by lowering nothing.
# Exit status: 0 when nothing failed, 1 otherwise.
set -u

pldrun=${1:?usage: lower_roundtrip.sh PLDRUN DIR...}
shift
if [ ! -x "$pldrun" ]; then
    echo "lower_roundtrip.sh: '$pldrun' is not an executable" >&2
    exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
host=0
chip=0

fail() {
    echo "FAIL $1: $2"
    [ -s "$tmp/err" ] && sed 's/^/    /' "$tmp/err"
    failed=$((failed + 1))
}

for dir in "$@"; do
    while IFS= read -r file; do
        grep -Eq 'pld\.tensor\.(allreduce|barrier|broadcast|reduce_scatter|allgather|all_to_all)' "$file" || continue
        "$pldrun" --check "$file" >/dev/null 2>"$tmp/err"
        rc=$?
        if [ "$rc" -eq 65 ] && grep -q '^# expect-error' "$file"; then
            continue # a negative program (its `# expect-error:`): not this test's business
        elif [ "$rc" -ne 0 ]; then
            # a program that should check but does not (or a crash): never skipped
            fail "$file" "--check exited $rc (only a program with \`# expect-error:\` may fail it)"
            continue
        fi
        if ! "$pldrun" --print-lowered "$file" >"$tmp/low.pld" 2>"$tmp/err"; then
            fail "$file" "--print-lowered failed"
            continue
        fi
        if ! "$pldrun" --check "$tmp/low.pld" >/dev/null 2>"$tmp/err" || [ -s "$tmp/err" ]; then
            fail "$file" "the lowered text does not pass --check"
            continue
        fi
        if ! "$pldrun" --print-lowered "$tmp/low.pld" >"$tmp/again.pld" 2>"$tmp/err" ||
            ! cmp -s "$tmp/low.pld" "$tmp/again.pld"; then
            diff "$tmp/low.pld" "$tmp/again.pld" >"$tmp/err" 2>&1
            fail "$file" "the lowered text is not a fixed point of --print-lowered"
            continue
        fi
        grep -q 'builtin\.tensor\.' "$tmp/low.pld" && host=$((host + 1))
        grep -q 'def __builtin_all_to_all_v__' "$tmp/low.pld" && chip=$((chip + 1))
        passed=$((passed + 1))
    done < <(find "$dir" -name '*.pld' | sort)
done

echo "$passed passed, $failed failed ($host with HOST builtin dispatches, $chip with a CHIP builtin kernel)"
if [ "$host" -eq 0 ] || [ "$chip" -eq 0 ]; then
    echo "lower_roundtrip.sh: no HOST dispatch or no CHIP kernel was lowered"
    exit 1
fi
[ "$failed" -eq 0 ]
