# bench/native.cmake - bench_native_handc: the tile-bound kernels of
# bench/native_*.pld hand-written in plain C, the baseline of
# bench/run_bench_native.sh (docs/benchmarks-native.md). Not a test.
# Built with -O2 -ffp-contract=off whatever the build type (the flags the
# native backend compiles kernels with); it links no pldrun library.
add_executable(bench_native_handc ${CMAKE_CURRENT_LIST_DIR}/bench_native_handc.c)
target_compile_options(bench_native_handc PRIVATE -O2 -ffp-contract=off)
target_link_libraries(bench_native_handc PRIVATE m)
