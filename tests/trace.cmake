# tests/trace.cmake - pldrun --trace, -v and --log-dir (tests/trace/run_trace.py,
# label `trace`; the cases are described there). Included from tests/CMakeLists.txt.
# The cases come from `run_trace.py --list`; a failing --list (a missing program, a
# broken runner) stops the configuration (tests/runner_list.cmake).
find_program(PLD_PYTHON3_TRACE NAMES python3)
if(PLD_PYTHON3_TRACE AND MPIEXEC_EXECUTABLE)
  include(${CMAKE_CURRENT_LIST_DIR}/runner_list.cmake)
  pld_runner_list(_pld_trace_cases tests/trace/run_trace.py
                  "${PLD_PYTHON3_TRACE}" "${CMAKE_CURRENT_SOURCE_DIR}/trace/run_trace.py" --list)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/trace/run_trace.py")
  foreach(_case IN LISTS _pld_trace_cases)
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
