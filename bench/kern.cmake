# bench/kern.cmake - bench_tile_add: pld_k_binary(ADD) on [128, 128] FP32
# tiles vs memcpy (docs/benchmarks-kernels.md). To be included from
# bench/CMakeLists.txt:  include(${CMAKE_CURRENT_SOURCE_DIR}/kern.cmake)
# It links only pld_kern (and pld_base), so it needs neither MPI nor the rest
# of pld_interp. Build with -DCMAKE_BUILD_TYPE=Release.
add_executable(bench_tile_add ${CMAKE_CURRENT_LIST_DIR}/bench_tile_add.c)
target_link_libraries(bench_tile_add PRIVATE pld_kern m)

# bench_kern_matmul: pld_k_matmul alone, [256, 256] x [256, 256] FP32 and
# FP16 -> FP32 by default (issue 44; numbers in docs/benchmarks-native.md).
add_executable(bench_kern_matmul ${CMAKE_CURRENT_LIST_DIR}/bench_kern_matmul.c)
target_link_libraries(bench_kern_matmul PRIVATE pld_kern m)
