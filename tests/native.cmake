# tests/native.cmake - the `native` backend beyond the conformance table
# (tests/native/run_native.py): numerics (byte-identical to sim), errors
# (unsupported op, missing / failing compiler, a located error in compiled
# code), load (scope kernels compiled at load: a refused scope stops the run
# before the first kernel), control flow (every form vs sim; a spinning kernel stopped by
# --wait-timeout), the system family (system.pld vs sim), the kernel cache and its safety (cachedir, cachekey), clang
# (native_clang), the runtime boundary (boundary: distributed programs byte-identical to sim with no op
# evaluated by the tree walker inside a kernel). Labels `native`, `mpi`. Included after conformance.cmake.
# The op coverage table is test native_coverage (tools/CMakeLists.txt).
if(NOT PLD_PYTHON3_CONF OR NOT MPIEXEC_EXECUTABLE)
  return()
endif()
# the runner's parts (run_native.py --list) and run_coll.py's negative cases: a
# failing --list stops the configuration (tests/runner_list.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/runner_list.cmake)
pld_runner_list(_pld_native_parts tests/native/run_native.py
                "${PLD_PYTHON3_CONF}" "${CMAKE_CURRENT_SOURCE_DIR}/native/run_native.py" --list)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/native/run_native.py")
foreach(_what IN LISTS _pld_native_parts)
  add_test(NAME native_${_what}
           COMMAND "${PLD_PYTHON3_CONF}" "${CMAKE_CURRENT_SOURCE_DIR}/native/run_native.py"
                   --pldrun $<TARGET_FILE:pldrun> --mpiexec "${MPIEXEC_EXECUTABLE}" ${_what})
  set_tests_properties(native_${_what} PROPERTIES LABELS "mpi;native" TIMEOUT 300 PROCESSORS 2
                                                  ENVIRONMENT "${PLD_MPI_TEST_ENV}")
endforeach()
# native_clang: without clang it exits 77 (skipped, the reason in its output); with CI=true it fails
if("clang" IN_LIST _pld_native_parts)
  set_tests_properties(native_clang PROPERTIES SKIP_RETURN_CODE 77)
endif()

# native_negative: run_coll.py's negative cases (hangs, mismatched collectives,
# out-of-bounds accesses, bad peers, a wait nobody answers) on --backend native:
# the same exit status and located messages as on sim, on rma and shm. Release
# tree only (CI time; the sanitizer tree runs the cases on sim).
pld_runner_list(_pld_native_neg_list tests/mpi/run_coll.py
                "${PLD_PYTHON3_CONF}" "${CMAKE_CURRENT_SOURCE_DIR}/mpi/run_coll.py" --pldrun x --list)
set(_pld_native_neg_names "")
foreach(_line IN LISTS _pld_native_neg_list)
  if(_line MATCHES "^(neg_[a-z0-9_]+) ")
    list(APPEND _pld_native_neg_names ${CMAKE_MATCH_1})
  endif()
endforeach()
list(REMOVE_DUPLICATES _pld_native_neg_names)
if(NOT _pld_native_neg_names)
  message(FATAL_ERROR "pldrun tests: tests/mpi/run_coll.py --list has no negative case (neg_*) for native_negative")
endif()
set(_pld_native_neg_cases "")
foreach(_c IN LISTS _pld_native_neg_names)
  list(APPEND _pld_native_neg_cases --case ${_c})
endforeach()
if(NOT PLD_SANITIZE)
  add_test(NAME native_negative
           COMMAND "${PLD_PYTHON3_CONF}" "${CMAKE_CURRENT_SOURCE_DIR}/mpi/run_coll.py"
                   --pldrun $<TARGET_FILE:pldrun> --mpiexec "${MPIEXEC_EXECUTABLE}" "--numproc-flag=${PLD_MPI_NP_FLAG}"
                   --backend native --workdir "${CMAKE_CURRENT_BINARY_DIR}/native_negative" ${_pld_native_neg_cases})
  set(_pld_native_env "XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/kernel_cache" ${PLD_MPI_TEST_ENV})
  set_tests_properties(native_negative PROPERTIES LABELS "mpi;native" TIMEOUT 900 PROCESSORS 4
                       ENVIRONMENT "${_pld_native_env}")
endif()

# PLDRUN_BACKEND: the backend when --backend is not given (how the ops_native_* runners run on native).
# _bogus: an unknown name is refused naming the variable; _native: it selects native (a compiler that
# does not exist fails native's load); _override: --backend sim wins over it (sim, which takes no options, is the one refusing them).
set(_pld_env_prog "${CMAKE_CURRENT_SOURCE_DIR}/native/numerics_small.pld")
add_test(NAME native_backend_env_bogus
         COMMAND "${PLD_PYTHON3_CONF}" "${CMAKE_CURRENT_SOURCE_DIR}/expect_run.py" --exit 69
                 "--match=^pldrun: unknown kernel backend 'bogus' .*named by \\$PLDRUN_BACKEND"
                 -- $<TARGET_FILE:pldrun> "${_pld_env_prog}" --in x=arange)
add_test(NAME native_backend_env_native
         COMMAND "${PLD_PYTHON3_CONF}" "${CMAKE_CURRENT_SOURCE_DIR}/expect_run.py" --exit 69
                 "--match=^pldrun: backend 'native' cannot load program .*the C compiler '/nonexistent/cc' is not usable"
                 -- $<TARGET_FILE:pldrun> "${_pld_env_prog}" --in x=arange --backend-options cc=/nonexistent/cc)
add_test(NAME native_backend_env_override
         COMMAND "${PLD_PYTHON3_CONF}" "${CMAKE_CURRENT_SOURCE_DIR}/expect_run.py" --exit 69
                 "--match=^pldrun: the sim backend takes no options"
                 -- $<TARGET_FILE:pldrun> "${_pld_env_prog}" --in x=arange --backend sim --backend-options cc=/nonexistent/cc)
set_tests_properties(native_backend_env_bogus PROPERTIES LABELS "native" TIMEOUT 60
                     ENVIRONMENT "PLDRUN_BACKEND=bogus;${PLD_MPI_TEST_ENV}")
set_tests_properties(native_backend_env_native native_backend_env_override PROPERTIES LABELS "native" TIMEOUT 60
                     ENVIRONMENT "PLDRUN_BACKEND=native;XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/kernel_cache;${PLD_MPI_TEST_ENV}")

# native_vectorised (issue 44): the C native generates for tests/native/numerics.pld,
# compiled again with native's flags and the vectoriser's report
# (bench/native_vec_report.sh): every element-wise loop without a libm call
# vectorises (a long kernel's error checks once made GCC think its later loops
# cold: 0 of 38 vectorised), and no error exit of it is left hot (return without
# pc_cold). Exits 77 (skipped) when cc is neither GCC nor clang.
find_program(PLD_BASH bash)
if(PLD_BASH)
  add_test(NAME native_vectorised
           COMMAND "${PLD_BASH}" "${CMAKE_CURRENT_SOURCE_DIR}/../bench/native_vec_report.sh" "${CMAKE_BINARY_DIR}")
  set_tests_properties(native_vectorised PROPERTIES LABELS "native" TIMEOUT 120 SKIP_RETURN_CODE 77
                       ENVIRONMENT "PLD_VEC_REQUIRE=1")
endif()
