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
