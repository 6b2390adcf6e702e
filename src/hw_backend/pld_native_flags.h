/* pld_native_flags.h - the C compiler flags of the `native` backend, the one
 * list: pld_native.c compiles every kernel with them, and bench/native.cmake
 * reads this file (file(STRINGS)) to build the hand-written C baseline of
 * bench/run_bench_native.sh with exactly the same flags
 * (docs/benchmarks-native.md). Keep each definition on one line.
 *
 * PLD_NATIVE_BASE_FLAGS: every C11 compiler must take them. -ffp-contract=off
 * and no fast-math: every operation rounds as the source states
 * (docs/native.md); dropping errno from sqrt changes no result.
 * PLD_NATIVE_LINK_FLAGS: the shared-object flags (-fPIC changes code too).
 * PLD_NATIVE_OPT_FLAGS: string literals separated by commas (an array
 * initialiser), each used only when the compiler accepts it (probed by a
 * compile with -Werror of a small file). */
#ifndef PLD_NATIVE_FLAGS_H
#define PLD_NATIVE_FLAGS_H

#define PLD_NATIVE_BASE_FLAGS "-std=c11 -O2 -ffp-contract=off -fno-fast-math -fno-math-errno"
#define PLD_NATIVE_LINK_FLAGS "-fPIC -shared -w"
#define PLD_NATIVE_OPT_FLAGS "-fvect-cost-model=dynamic"

#endif
