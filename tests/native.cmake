# tests/native.cmake - the `native` backend beyond the conformance table
# (tests/native/run_native.py): numerics (byte-identical to sim), errors
# (unsupported op, missing / failing compiler, a located error in compiled
# code), the kernel cache. Labels `native`, `mpi`. Included after conformance.cmake.
# The op coverage table is test native_coverage (tools/CMakeLists.txt).
if(NOT PLD_PYTHON3_CONF OR NOT MPIEXEC_EXECUTABLE)
  return()
endif()
foreach(_what numerics errors cache)
  add_test(NAME native_${_what}
           COMMAND "${PLD_PYTHON3_CONF}" "${CMAKE_CURRENT_SOURCE_DIR}/native/run_native.py"
                   --pldrun $<TARGET_FILE:pldrun> --mpiexec "${MPIEXEC_EXECUTABLE}" ${_what})
  set_tests_properties(native_${_what} PROPERTIES LABELS "mpi;native" TIMEOUT 300 PROCESSORS 2
                                                  ENVIRONMENT "${PLD_MPI_TEST_ENV}")
endforeach()

# native_negative: run_coll.py's negative cases (hangs, mismatched collectives,
# out-of-bounds accesses, bad peers, a wait nobody answers) on --backend native:
# the same exit status and located messages as on sim, on rma and shm. Release
# tree only (CI time; the sanitizer tree runs the cases on sim).
execute_process(COMMAND "${PLD_PYTHON3_CONF}" "${CMAKE_CURRENT_SOURCE_DIR}/mpi/run_coll.py" --pldrun x --list
                OUTPUT_VARIABLE _pld_native_neg_list RESULT_VARIABLE _pld_native_neg_rc)
set(_pld_native_neg_cases "")
if(_pld_native_neg_rc EQUAL 0)
  string(REGEX MATCHALL "(^|\n)neg_[a-z0-9_]+" _pld_native_neg_found "${_pld_native_neg_list}")
  set(_pld_native_neg_names "")
  foreach(_c IN LISTS _pld_native_neg_found)
    string(STRIP "${_c}" _c)
    list(APPEND _pld_native_neg_names ${_c})
  endforeach()
  list(REMOVE_DUPLICATES _pld_native_neg_names)
  foreach(_c IN LISTS _pld_native_neg_names)
    list(APPEND _pld_native_neg_cases --case ${_c})
  endforeach()
endif()
if(_pld_native_neg_cases AND NOT PLD_SANITIZE)
  add_test(NAME native_negative
           COMMAND "${PLD_PYTHON3_CONF}" "${CMAKE_CURRENT_SOURCE_DIR}/mpi/run_coll.py"
                   --pldrun $<TARGET_FILE:pldrun> --mpiexec "${MPIEXEC_EXECUTABLE}" "--numproc-flag=${PLD_MPI_NP_FLAG}"
                   --backend native --workdir "${CMAKE_CURRENT_BINARY_DIR}/native_negative" ${_pld_native_neg_cases})
  set(_pld_native_env "XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/kernel_cache" ${PLD_MPI_TEST_ENV})
  set_tests_properties(native_negative PROPERTIES LABELS "mpi;native" TIMEOUT 900 PROCESSORS 4
                       ENVIRONMENT "${_pld_native_env}")
endif()
