#!/usr/bin/env bash
# tests/check_symbols.sh LIB.a... - the house rule "every exported symbol
# starts with pld_ or PLD_" (shared/docs/style.md), checked with nm on the
# static libraries given (tests/structure.cmake passes every pld_* library of
# the build). Prints each offending symbol with its library and object file;
# exit 1 when there is one, 2 when no library was given or one is missing (the
# check would prove nothing).
set -euo pipefail
libs=("$@")
if [ "${#libs[@]}" -eq 0 ]; then
    echo "usage: check_symbols.sh LIB.a..." >&2
    exit 2
fi
for lib in "${libs[@]}"; do
    if [ ! -f "$lib" ]; then
        echo "check_symbols: $lib does not exist" >&2
        exit 2
    fi
done
bad=0
for lib in "${libs[@]}"; do
    # nm -A: "lib.a:obj.o:ADDR T name"; defined globals only
    while read -r where _ sym; do
        case "$sym" in
        pld_* | PLD_*) ;;
        __odr_asan.pld_* | __odr_asan.PLD_*) ;; # ASan's ODR indicator of a pld_ global (PLD_SANITIZE builds)
        *)
            echo "check_symbols: ${where%:*} exports '$sym' (rename it pld_..., or make it static)"
            bad=1
            ;;
        esac
    done < <(nm -A -g --defined-only "$lib" 2>/dev/null | awk 'NF == 3')
done
echo "check_symbols: ${#libs[@]} libraries checked"
exit "$bad"
