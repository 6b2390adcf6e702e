#!/usr/bin/env bash
# run_programs.sh - static check of every golden program (CTest: programs_check).
#
# usage: tests/run_programs.sh PLDRUN [PROGRAMS_DIR]
#
# For every PROGRAMS_DIR/**/*.pld (sorted), for every P of its `# ranks:`
# directive, runs `PLDRUN --check --ranks P FILE`, then `PLDRUN --check FILE`
# (P unknown). Each run must exit 0 with an empty stderr. Prints every failure
# with its output and ends with a summary line "N passed, M failed".
# Exit status: 0 when nothing failed (and at least one run happened), 1 otherwise.
set -u

pldrun=${1:?usage: run_programs.sh PLDRUN [PROGRAMS_DIR]}
dir=${2:-$(dirname "$0")/../programs}

if [ ! -x "$pldrun" ]; then
    echo "run_programs.sh: '$pldrun' is not an executable" >&2
    exit 1
fi
if [ ! -d "$dir" ]; then
    echo "run_programs.sh: '$dir' is not a directory" >&2
    exit 1
fi

passed=0
failed=0
errfile=$(mktemp)
trap 'rm -f "$errfile"' EXIT

# run FILE [P]: one check; P empty = rank count unknown
run() {
    local file=$1 p=${2:-}
    local what="--check${p:+ --ranks $p} $file"
    local rc
    if [ -n "$p" ]; then
        "$pldrun" --check --ranks "$p" "$file" >/dev/null 2>"$errfile"
    else
        "$pldrun" --check "$file" >/dev/null 2>"$errfile"
    fi
    rc=$?
    if [ $rc -eq 0 ] && [ ! -s "$errfile" ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL: pldrun $what (exit $rc)"
        sed 's/^/    /' "$errfile"
    fi
}

while IFS= read -r -d '' file; do
    # the `# ranks:` directive is one of the leading comment lines
    ranks=$(awk '!/^#/ { exit } /^# ranks:/ { sub(/^# ranks:/, ""); print; exit }' "$file")
    if [ -z "$ranks" ]; then
        echo "note: $file has no '# ranks:' directive; checked with P unknown only"
    fi
    for p in $ranks; do
        case $p in
        '' | *[!0-9]*)
            failed=$((failed + 1))
            echo "FAIL: $file: bad rank count '$p' in '# ranks:'"
            continue
            ;;
        esac
        run "$file" "$p"
    done
    run "$file"
done < <(find "$dir" -name '*.pld' -type f -print0 | LC_ALL=C sort -z)

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
