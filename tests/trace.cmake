# tests/trace.cmake - pldrun --trace, -v and --log-dir (tests/trace/run_trace.py,
# label `trace`; the cases are described there). Included from tests/CMakeLists.txt.
find_program(PLD_PYTHON3_TRACE NAMES python3)
if(PLD_PYTHON3_TRACE AND MPIEXEC_EXECUTABLE)
  foreach(_case collective clock blocks plans hang error logs errors)
    add_test(NAME trace_${_case}
             COMMAND "${PLD_PYTHON3_TRACE}" "${CMAKE_CURRENT_SOURCE_DIR}/trace/run_trace.py"
                     --pldrun $<TARGET_FILE:pldrun> --mpiexec "${MPIEXEC_EXECUTABLE}"
                     "--numproc-flag=${PLD_MPI_NP_FLAG}" --case ${_case}
                     --workdir "${CMAKE_CURRENT_BINARY_DIR}/trace_${_case}"
                     "--pldrun-testing=${_pld_testing_tool}")
    set_tests_properties(trace_${_case} PROPERTIES LABELS "trace;mpi" TIMEOUT 240 PROCESSORS 2
                                                   ENVIRONMENT "${PLD_MPI_TEST_ENV}")
  endforeach()
endif()
