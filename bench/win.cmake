# bench/win.cmake - bench_win: the window layer against plain MPI on the same
# window (docs/benchmarks-window.md). To be included from bench/CMakeLists.txt:
#   include(${CMAKE_CURRENT_SOURCE_DIR}/win.cmake)
# Not a test: run it with bench/run_bench_win.sh (which builds it with mpicc
# against a Release pld_win, so it also works without this file).
add_executable(bench_win ${CMAKE_CURRENT_LIST_DIR}/bench_win.c)
target_link_libraries(bench_win PRIVATE pld_win MPI::MPI_C)
