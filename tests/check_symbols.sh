#!/usr/bin/env bash
# tests/check_symbols.sh BUILD_DIR - the house rule "every exported symbol
# starts with pld_ or PLD_" (shared/docs/style.md), checked with nm on every
# static library of the build (libpld_*.a, the _testing mirrors included).
# Prints each offending symbol with its library and object file; exit 1 when
# there is one, 2 when no library was found (the check would prove nothing).
set -euo pipefail
build=${1:?usage: check_symbols.sh BUILD_DIR}
mapfile -t libs < <(find "$build" -name 'libpld_*.a' | sort)
if [ "${#libs[@]}" -eq 0 ]; then
    echo "check_symbols: no libpld_*.a under $build" >&2
    exit 2
fi
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
