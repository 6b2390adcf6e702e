# tests/win.cmake - MPI tests of the window layer (src/sim_window), label `mpi`.
# Included at the end of tests/CMakeLists.txt.
#
#   win_<transport>_p<P>   tests/mpi/test_win.c under `mpirun -n P`, for
#                          transport rma and shm at P = 2, 3, 4, auto at
#                          P = 2 and 4, local at P = 1
#   win_rma_pt2pt_p3       rma with osc pt2pt forced: the component used
#                          across nodes, where only loops that enter MPI make
#                          progress (shared/docs/multinode.md)
#
# PROCESSORS P, 60 s TIMEOUT, the launch environment of shared/docs/platform.md
# section 2 (as tests/mpi.cmake), ASAN_OPTIONS=detect_leaks=0 because Open MPI
# leaks under ASan. Run them alone with `ctest -R '^win_'`.

if(NOT MPIEXEC_EXECUTABLE)
  message(STATUS "pldrun tests: mpiexec not found; the window tests are not registered")
  return()
endif()

# test_win links the window layer built with PLD_TESTING (asserts, and the
# hook pld_win_test_fail_mpi that makes a chosen MPI call report failure).
get_target_property(_pld_win_srcs pld_win SOURCES)
set(_pld_win_testing_srcs "")
foreach(_s IN LISTS _pld_win_srcs)
  list(APPEND _pld_win_testing_srcs "${PROJECT_SOURCE_DIR}/${_s}")
endforeach()
add_library(pld_win_testing STATIC ${_pld_win_testing_srcs})
target_include_directories(pld_win_testing PUBLIC "${PROJECT_SOURCE_DIR}/src/sim_window")
target_link_libraries(pld_win_testing PUBLIC MPI::MPI_C pld_base_testing m)
target_compile_definitions(pld_win_testing PUBLIC PLD_TESTING=1)

add_executable(test_win ${CMAKE_CURRENT_SOURCE_DIR}/mpi/test_win.c)
target_link_libraries(test_win PRIVATE pld_win_testing MPI::MPI_C m)

set(_pld_win_flag "${PLD_MPI_NP_FLAG}")
set(_pld_win_env "ASAN_OPTIONS=detect_leaks=0" ${PLD_MPI_TEST_ENV})

# pld_add_win_test(NAME TRANSPORT P [ENV...])
function(pld_add_win_test name transport np)
  add_test(NAME ${name}
           COMMAND ${MPIEXEC_EXECUTABLE} ${_pld_win_flag} ${np} ${MPIEXEC_PREFLAGS}
                   $<TARGET_FILE:test_win> ${transport} ${MPIEXEC_POSTFLAGS})
  set(_env ${_pld_win_env})
  if(ARGN)
    list(FILTER _env EXCLUDE REGEX "^OMPI_MCA_osc=")
    list(APPEND _env ${ARGN})
  endif()
  set_tests_properties(${name} PROPERTIES LABELS mpi TIMEOUT 60 PROCESSORS ${np}
                                          ENVIRONMENT "${_env}")
endfunction()

foreach(_tr rma shm)
  foreach(_p 2 3 4)
    pld_add_win_test(win_${_tr}_p${_p} ${_tr} ${_p})
  endforeach()
endforeach()
pld_add_win_test(win_auto_p2 auto 2)
pld_add_win_test(win_auto_p4 auto 4)
pld_add_win_test(win_local_p1 local 1)
pld_add_win_test(win_rma_pt2pt_p3 rma 3 "OMPI_MCA_osc=pt2pt")
# hybrid on one node: PLD_TEST_SPLIT_HOSTS=2 puts rank r on host r % 2 (at
# P = 3, 2b: on host r / 2, the hosts filled in order), so a domain has
# members on this host (shared memory) and on the other (MPI RMA, signal
# messages): at P = 3, rank 0's ring neighbours are one of each (a signal
# message racing the RMA put before it: test_win_ordering)
foreach(_p 2 3 4)
  pld_add_win_test(win_hybrid_split_p${_p} hybrid ${_p})
  set(_split 2)
  if(_p EQUAL 3)
    set(_split 2b)
  endif()
  set_property(TEST win_hybrid_split_p${_p} APPEND PROPERTY ENVIRONMENT "PLD_TEST_SPLIT_HOSTS=${_split}")
endforeach()
