# tests/mpi.cmake - MPI integration tests of pldrun (tests/mpi/), label `mpi`.
# Included at the end of tests/CMakeLists.txt.
#
#   mpi_golden_<case>_p<P>   tests/mpi/run_golden.py: a tier-0 program run as
#                            `mpirun -n P pldrun ... --in/--out` and its outputs
#                            compared with goldens computed in Python
#                            (`run_golden.py --list --outside-conformance`:
#                            one "CASE P" line per test; P from the program's
#                            `# ranks:`, 1 2 4 for the shared examples, less
#                            P = 2, 3, 4, which tests/conformance.cmake runs)
#   mpi_negative_<case>      tests/mpi/run_negative.py: usage errors (exit 64/74),
#                            an unknown kernel backend (exit 69), an --out path
#                            that cannot be written (exit 74, before the run)
#                            and runtime errors (exit 70) with rank-prefixed,
#                            located diagnostics, at P = 2
#
# Each test launches `${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} P pldrun`,
# has PROCESSORS P and a 60 s TIMEOUT. The launch environment is the one of
# shared/docs/platform.md section 2 (scripts/mpi_env.sh when the repository has
# it). Leak checking stays on in ASan builds: pldrun checks for its own leaks
# before MPI_Finalize and ignores Open MPI's (tools/pldrun/main.c).
# Run them alone with `ctest -R "^mpi_"`; `ctest -L mpi` also runs the collective
# tests of tests/coll.cmake and the conformance tests of tests/conformance.cmake.

find_program(PLD_PYTHON3_MPI NAMES python3)
if(NOT PLD_PYTHON3_MPI OR NOT MPIEXEC_EXECUTABLE)
  message(STATUS "pldrun tests: python3 or mpiexec not found; the MPI tests are not registered")
  return()
endif()

set(_pld_mpi_dir "${CMAKE_CURRENT_SOURCE_DIR}/mpi")
set(_pld_mpi_flag "${PLD_MPI_NP_FLAG}")
set(_pld_mpi_env "PLD_EXAMPLES_DIR=${PLD_EXAMPLES_DIR_ABS}" ${PLD_MPI_TEST_ENV})
set(_pld_mpi_env_sigterm "PLD_EXAMPLES_DIR=${PLD_EXAMPLES_DIR_ABS}" ${PLD_MPI_TEST_ENV_SIGTERM})

# The test list comes from the runner itself (one source of truth): lines "CASE P".
# A failing --list (a missing program, a broken runner) stops the configuration
# (tests/runner_list.cmake).
include(${CMAKE_CURRENT_LIST_DIR}/runner_list.cmake)
pld_runner_list(_pld_golden_cases tests/mpi/run_golden.py
                ${CMAKE_COMMAND} -E env "PLD_EXAMPLES_DIR=${PLD_EXAMPLES_DIR_ABS}"
                "${PLD_PYTHON3_MPI}" "${_pld_mpi_dir}/run_golden.py" --pldrun pldrun --list --outside-conformance)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_pld_mpi_dir}/run_golden.py"
                                                               "${_pld_mpi_dir}/run_negative.py"
                                                               "${_pld_mpi_dir}/pld_mpitest.py")

foreach(_line IN LISTS _pld_golden_cases)
  string(REPLACE " " ";" _f "${_line}")
  list(GET _f 0 _case)
  list(GET _f 1 _p)
  set(_name mpi_golden_${_case}_p${_p})
  add_test(NAME ${_name}
           COMMAND "${PLD_PYTHON3_MPI}" "${_pld_mpi_dir}/run_golden.py"
                   --pldrun $<TARGET_FILE:pldrun> --mpiexec "${MPIEXEC_EXECUTABLE}"
                   "--numproc-flag=${_pld_mpi_flag}" --case ${_case} --ranks ${_p}
                   --workdir "${CMAKE_CURRENT_BINARY_DIR}/mpi_golden")
  set_tests_properties(${_name} PROPERTIES LABELS mpi TIMEOUT 60 PROCESSORS ${_p}
                                           ENVIRONMENT "${_pld_mpi_env}")
endforeach()

# run_negative.py's cases, in two groups (the second: one rank fails, is killed
# or crashes; longer timeouts); every case of the runner must be in one of them
set(_pld_neg_cases bad_shape bad_dtype missing_input unknown_param unreadable_file rank1_oob device5 unknown_backend
                   out_unwritable warning_once stack_block)
set(_pld_neg_rank_cases rank1_missing_input rank1_missing_program rank1_bad_program rank1_oom killed_running
                        killed_waiting crash_report state_usr1 stuck_peer)
pld_runner_list(_pld_neg_listed tests/mpi/run_negative.py
                "${PLD_PYTHON3_MPI}" "${_pld_mpi_dir}/run_negative.py" --pldrun pldrun --list)
pld_runner_cases_registered(tests/mpi/run_negative.py "${_pld_neg_listed}" "${_pld_neg_cases};${_pld_neg_rank_cases}")

foreach(_case IN LISTS _pld_neg_cases)
  set(_name mpi_negative_${_case})
  add_test(NAME ${_name}
           COMMAND "${PLD_PYTHON3_MPI}" "${_pld_mpi_dir}/run_negative.py"
                   --pldrun $<TARGET_FILE:pldrun> --mpiexec "${MPIEXEC_EXECUTABLE}"
                   "--numproc-flag=${_pld_mpi_flag}" --case ${_case}
                   --workdir "${CMAKE_CURRENT_BINARY_DIR}/mpi_negative")
  set_tests_properties(${_name} PROPERTIES LABELS mpi TIMEOUT 60 PROCESSORS 2 ENVIRONMENT "${_pld_mpi_env}")
endforeach()

# pldrun_testing: the tool linked against the testing mirrors (PLD_TESTING:
# asserts on, and the fail-the-Nth-allocation hook, set per rank with
# PLD_TEST_FAIL_ALLOC=N). The one-rank failure cases of run_negative.py use it.
if(TARGET pld_interp_testing)
  add_executable(pldrun_testing "${PROJECT_SOURCE_DIR}/tools/pldrun/main.c" "${PROJECT_SOURCE_DIR}/tools/pldrun/report.c" "${PROJECT_SOURCE_DIR}/tools/pldrun/signature.c"
    "${PROJECT_SOURCE_DIR}/tools/pldrun/observe.c" "${PROJECT_SOURCE_DIR}/tools/pldrun/sweep.c"
    "${PROJECT_SOURCE_DIR}/tools/pldrun/flow.c" "${PROJECT_SOURCE_DIR}/tools/pldrun/findings.c"
    "${PROJECT_SOURCE_DIR}/tools/pldrun/batchlist.c"
    "${PROJECT_SOURCE_DIR}/tools/pldrun/hang_opts.c"
    "${PROJECT_SOURCE_DIR}/tools/pldrun/dispatch_io.c" "${PROJECT_SOURCE_DIR}/tools/pldrun/dump.c"
    "${PROJECT_SOURCE_DIR}/tools/pldrun/pysub.c" "${PROJECT_SOURCE_DIR}/tools/pldrun/winstate.c")
  target_include_directories(pldrun_testing PRIVATE "${PROJECT_SOURCE_DIR}/tools/pldrun" "${PROJECT_SOURCE_DIR}/src/pybridge")
  target_link_libraries(pldrun_testing PRIVATE pld_interp_testing MPI::MPI_C)
  if(PLD_HAVE_PYBRIDGE)
    target_link_libraries(pldrun_testing PRIVATE pld_pybridge)
    target_compile_definitions(pldrun_testing PRIVATE PLD_HAVE_PYBRIDGE=1)
  endif()
  set(_pld_testing_tool $<TARGET_FILE:pldrun_testing>)
else()
  set(_pld_testing_tool "")
endif()

# One rank fails, is killed or crashes: the others neither hang nor stay silent.
foreach(_case IN LISTS _pld_neg_rank_cases)
  set(_name mpi_negative_${_case})
  add_test(NAME ${_name}
           COMMAND "${PLD_PYTHON3_MPI}" "${_pld_mpi_dir}/run_negative.py"
                   --pldrun $<TARGET_FILE:pldrun> --pldrun-testing "${_pld_testing_tool}"
                   --mpiexec "${MPIEXEC_EXECUTABLE}"
                   "--numproc-flag=${_pld_mpi_flag}" --case ${_case}
                   --workdir "${CMAKE_CURRENT_BINARY_DIR}/mpi_negative")
  # killed_*, crash_report, state_usr1 check what the other ranks say on
  # mpirun's SIGTERM: they keep its 1 s before the SIGKILL
  if(_case MATCHES "^rank1_")
    set(_env "${_pld_mpi_env}")
  else()
    set(_env "${_pld_mpi_env_sigterm}")
  endif()
  set_tests_properties(${_name} PROPERTIES LABELS mpi TIMEOUT 200 PROCESSORS 2 ENVIRONMENT "${_env}")
endforeach()

# mpi_batch: tests/mpi/test_batch.py - `pldrun --batch LIST` (many programs in
# one MPI job, tools/pldrun/main.c) against separate runs of the same entries at
# P = 2: each entry's status line, .npy outputs (byte-identical), stderr and
# stdout; failing entries (exit 70, 64, 74) between passing ones, both window
# transports; a malformed LIST (64, LIST:LINE); a singleton batch. In the ASan
# tree the batch's one leak check (after its last entry) is on.
add_test(NAME mpi_batch
         COMMAND "${PLD_PYTHON3_MPI}" "${_pld_mpi_dir}/test_batch.py"
                 --pldrun $<TARGET_FILE:pldrun> --mpiexec "${MPIEXEC_EXECUTABLE}"
                 "--numproc-flag=${_pld_mpi_flag}" --ranks 2
                 --workdir "${CMAKE_CURRENT_BINARY_DIR}/mpi_batch")
set_tests_properties(mpi_batch PROPERTIES LABELS mpi TIMEOUT 300 PROCESSORS 2 ENVIRONMENT "${_pld_mpi_env}")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_pld_mpi_dir}/test_batch.py")

# hang_<case>: tests/hang/run_hang.py - the hang watchdog tells a slow producer
# from a stuck run (docs/debugging.md, "Hangs and slow producers"): rank 1
# computes for about 3x `--timeout 1` before it notifies rank 0 and the run
# ends with exit 0 (progress, not a hang); the same run with `--wait-timeout 1`
# (the per-wait limit) is stopped as a hang; a true hang is stopped within the
# timeout with every rank's last progress and the budget; true_hang_timeout: a
# hang the deadlock detector cannot prove (parts in flight between two emulated
# hosts, pldrun_testing, P = 4) stopped after `--timeout 3` without progress.
# Each case on sim and (`_native`) on the native backend, whose compiled loops
# publish progress at their back edges; the native cases run in the Release
# tree only (CI time).
pld_runner_list(_pld_hang_cases tests/hang/run_hang.py
                "${PLD_PYTHON3_MPI}" "${CMAKE_CURRENT_SOURCE_DIR}/hang/run_hang.py" --pldrun pldrun --list)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/hang/run_hang.py")
foreach(_case IN LISTS _pld_hang_cases)
  if((PLD_SANITIZE AND _case MATCHES "_native$") OR (_case STREQUAL "true_hang_timeout" AND NOT _pld_testing_tool))
    continue()
  endif()
  set(_p 2)
  if(_case STREQUAL "true_hang_timeout")
    set(_p 4)
  endif()
  add_test(NAME hang_${_case}
           COMMAND "${PLD_PYTHON3_MPI}" "${CMAKE_CURRENT_SOURCE_DIR}/hang/run_hang.py"
                   --pldrun $<TARGET_FILE:pldrun> --pldrun-testing "${_pld_testing_tool}"
                   --mpiexec "${MPIEXEC_EXECUTABLE}" "--numproc-flag=${_pld_mpi_flag}" --case ${_case}
                   --workdir "${CMAKE_CURRENT_BINARY_DIR}/hang")
  set_tests_properties(hang_${_case} PROPERTIES LABELS mpi TIMEOUT 60 PROCESSORS ${_p}
                                                ENVIRONMENT "XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/kernel_cache;${_pld_mpi_env}")
endforeach()

# mpi_winstate_<case>: tests/mpi/run_winstate.py - persistent windows across
# runs: `--save-windows DIR` keeps every rank's window memory (signal cells
# included) at the end of a run and `--load-windows DIR` starts the next run
# with it (how pldrun.pypto runs the dispatches of a worker prepared with
# persistent=True, reset_persistent_windows=False; docs/pypto.md). Three runs
# of tests/mpi/programs/window_state.pld at P = 2 and 4 (and on native at
# P = 2, Release tree only) see the previous run's payload and signal values;
# `errors`: another layout (a located error, 64), another rank count (64), no
# saved state (74), the options' conflicts (64), the state unchanged by them.
pld_runner_list(_pld_winstate_cases tests/mpi/run_winstate.py
                "${PLD_PYTHON3_MPI}" "${_pld_mpi_dir}/run_winstate.py" --pldrun pldrun --list)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_pld_mpi_dir}/run_winstate.py")
foreach(_line IN LISTS _pld_winstate_cases)
  string(REPLACE " " ";" _f "${_line}")
  list(GET _f 0 _case)
  list(GET _f 1 _p)
  if(PLD_SANITIZE AND _case MATCHES "native")
    continue()
  endif()
  add_test(NAME mpi_winstate_${_case}
           COMMAND "${PLD_PYTHON3_MPI}" "${_pld_mpi_dir}/run_winstate.py"
                   --pldrun $<TARGET_FILE:pldrun> --mpiexec "${MPIEXEC_EXECUTABLE}"
                   "--numproc-flag=${_pld_mpi_flag}" --case ${_case}
                   --workdir "${CMAKE_CURRENT_BINARY_DIR}/mpi_winstate")
  set_tests_properties(mpi_winstate_${_case} PROPERTIES LABELS mpi TIMEOUT 60 PROCESSORS ${_p}
                                                        ENVIRONMENT "XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/kernel_cache;${_pld_mpi_env}")
endforeach()
