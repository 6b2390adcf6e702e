# tests/poison.cmake - `pldrun --poison` (docs/debugging.md, "--poison"), label `poison`.
# Included at the end of tests/CMakeLists.txt.
#
#   poison_<case>_p<P>      tests/poison/run_poison.py: a program that reads never-written
#                           window bytes or tile elements (a get of a peer's unwritten rows,
#                           a local load of a window tail, a partially assembled tile, the
#                           capacity tail of all_to_all_v, rows all_to_all_v pushes from
#                           its never-staged input (shm and rma), a read before the write across
#                           fresh / reset / kept dispatches, a real finding of the corpus)
#                           and its fixed twin: exact warnings (rank, line:col, window or
#                           tile, byte range), outputs bit-exact (the NaN pattern where
#                           never-written). P = 1 runs without mpirun (label `poison`); P > 1
#                           under mpirun (labels `poison` and `mpi`).
#   poison_programs_p2      tests/mpi/run_coll.py --poison: corpus programs at P = 2 (shm)
#                           under --poison keep their golden results and print no warning
#                           (signals, atomic-add targets and epoch cells stay zero)
#   poison_backend_refused  --poison with --backend native: exit 64 and the reason (tests/expect_run.py
#                           checks both)
#
# The whole suite takes about 15 s.

find_program(PLD_PYTHON3_POISON NAMES python3)
if(NOT PLD_PYTHON3_POISON OR NOT MPIEXEC_EXECUTABLE)
  message(STATUS "pldrun tests: python3 or mpiexec not found; the --poison tests are not registered")
  return()
endif()

set(_pld_poison_dir "${CMAKE_CURRENT_SOURCE_DIR}/poison")
set(_pld_poison_env ${PLD_MPI_TEST_ENV})

# the list comes from the runner; a failing --list stops the configuration (tests/runner_list.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/runner_list.cmake)
pld_runner_list(_pld_poison_tests tests/poison/run_poison.py
                "${PLD_PYTHON3_POISON}" "${_pld_poison_dir}/run_poison.py" --pldrun pldrun --list)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_pld_poison_dir}/run_poison.py")

foreach(_line IN LISTS _pld_poison_tests)
  string(REPLACE " " ";" _f "${_line}")
  list(GET _f 0 _case)
  list(GET _f 1 _p)
  set(_name poison_${_case}_p${_p})
  add_test(NAME ${_name}
           COMMAND "${PLD_PYTHON3_POISON}" "${_pld_poison_dir}/run_poison.py"
                   --pldrun $<TARGET_FILE:pldrun> --mpiexec "${MPIEXEC_EXECUTABLE}"
                   "--numproc-flag=${PLD_MPI_NP_FLAG}" --case ${_case} --ranks ${_p} --direct
                   --workdir "${CMAKE_CURRENT_BINARY_DIR}/poison_runs")
  if(_p EQUAL 1)
    set(_labels poison)
  else()
    set(_labels "poison;mpi")
  endif()
  set_tests_properties(${_name} PROPERTIES LABELS "${_labels}" TIMEOUT 60 PROCESSORS ${_p}
                                           ENVIRONMENT "${_pld_poison_env}")
endforeach()

# corpus programs under --poison: golden results, no warning
set(_pld_poison_corpus tutorial_put_get tutorial_push_variants tutorial_deferred_completion_keep3
    tutorial_collectives_handrolled tutorial_remote_load_store tutorial_window_slices tile_put_get
    corpus_host_all_to_all_v corpus_incore_all_to_all_v corpus_chip_all_to_all_v_fp32
    corpus_host_allreduce_synth corpus_incore_allreduce_mesh corpus_host_broadcast)
set(_pld_poison_args "")
foreach(_c IN LISTS _pld_poison_corpus)
  list(APPEND _pld_poison_args --case ${_c})
endforeach()
add_test(NAME poison_programs_p2
         COMMAND "${PLD_PYTHON3_POISON}" "${CMAKE_CURRENT_SOURCE_DIR}/mpi/run_coll.py"
                 --pldrun $<TARGET_FILE:pldrun> --mpiexec "${MPIEXEC_EXECUTABLE}"
                 "--numproc-flag=${PLD_MPI_NP_FLAG}" --poison --ranks 2 --transport shm ${_pld_poison_args}
                 --workdir "${CMAKE_CURRENT_BINARY_DIR}/poison_runs/programs")
set_tests_properties(poison_programs_p2 PROPERTIES LABELS "poison;mpi" TIMEOUT 120 PROCESSORS 2
                                                   ENVIRONMENT "${_pld_poison_env}")

# exit status and message (tests/expect_run.py; never a PASS_REGULAR_EXPRESSION alone)
add_test(NAME poison_backend_refused
         COMMAND "${PLD_PYTHON3_POISON}" "${CMAKE_CURRENT_SOURCE_DIR}/expect_run.py" --exit 64
                 "--match=^pldrun: --poison needs --backend sim: with backend 'native'"
                 -- $<TARGET_FILE:pldrun> --poison --backend native "${_pld_poison_dir}/load_tail.pld" --in xs=arange)
set_tests_properties(poison_backend_refused PROPERTIES LABELS poison TIMEOUT 30
                     ENVIRONMENT "${_pld_poison_env}")
