# tests/dump.cmake - pldrun --dump (pl.dump_tag hits as .npy with an index) and inputs / outputs
# per dispatch (--in x=a.npy,b.npy / DIR/, --out y=... / DIR/): tests/dump/run_dump.py, label
# `dump`, one test per case (described there). Issue 42: values are checked with numpy against
# goldens computed from the inputs, so Debian's python3 (python3-numpy) is preferred, as for
# python_api; without numpy the cases fail and say what to install (never a skip). The cases
# come from `run_dump.py --list` (tests/runner_list.cmake).
find_program(PLD_PYTHON3_DUMP NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT PLD_PYTHON3_DUMP)
  find_program(PLD_PYTHON3_DUMP NAMES python3)
endif()
if(PLD_PYTHON3_DUMP AND MPIEXEC_EXECUTABLE)
  include(${CMAKE_CURRENT_LIST_DIR}/runner_list.cmake)
  pld_runner_list(_pld_dump_cases tests/dump/run_dump.py
                  "${PLD_PYTHON3_DUMP}" "${CMAKE_CURRENT_SOURCE_DIR}/dump/run_dump.py" --list)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/dump/run_dump.py")
  foreach(_case IN LISTS _pld_dump_cases)
    add_test(NAME dump_${_case}
             COMMAND "${PLD_PYTHON3_DUMP}" "${CMAKE_CURRENT_SOURCE_DIR}/dump/run_dump.py"
                     --pldrun $<TARGET_FILE:pldrun> --mpiexec "${MPIEXEC_EXECUTABLE}"
                     "--numproc-flag=${PLD_MPI_NP_FLAG}" --case ${_case}
                     --workdir "${CMAKE_CURRENT_BINARY_DIR}/dump_${_case}")
    set_tests_properties(dump_${_case} PROPERTIES LABELS "dump;mpi" TIMEOUT 120 PROCESSORS 2
                                                  ENVIRONMENT "${PLD_MPI_TEST_ENV}")
  endforeach()
endif()
