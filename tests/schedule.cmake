# tests/schedule.cmake - `pldrun --schedule-seed N` / `--schedule random` (docs/debugging.md,
# "Schedules"; docs/races.md, "Schedules"), label `schedule` (and `mpi` for P > 1).
# Included at the end of tests/CMakeLists.txt.
#
#   schedule_<case>_p<P>       tests/schedule/run_schedule.py: an ordering bug the default schedule
#                              hides and a seed in 0..15 (block_order: block vs block in one rank)
#                              or 0..7 (flag_put: a put announced by an atomic add instead of a
#                              notify, across ranks: the hang report, the seed and the replay
#                              option) exposes; replays are bit-identical; a correct 4-block grid
#                              that puts, notifies and waits in every block keeps its golden
#                              result under seeds that hold puts and preempt blocks (spmd_ring);
#                              a held put lands when its issuer fails (put_then_error) and when it
#                              only spins on plain reads (stale_put)
#   schedule_programs_p2/_p4   tests/mpi/run_coll.py --schedule-seed ... --rotate-seeds: the corpus
#                              of programs/ keeps its golden results under seeded schedules (each
#                              program once, seeds 1..3 at P = 2 and 4..6 at P = 4, shm)
#
# The whole suite takes about 90 s (block_order 10 s, flag_put 20 s, spmd_ring 3 s, put_then_error 3 s, stale_put 3 s,
# programs 15 s at P = 2 and 30 s at P = 4); about 60 s with ctest -j2.

find_program(PLD_PYTHON3_SCHEDULE NAMES python3)
if(NOT PLD_PYTHON3_SCHEDULE OR NOT MPIEXEC_EXECUTABLE)
  message(STATUS "pldrun tests: python3 or mpiexec not found; the --schedule-seed tests are not registered")
  return()
endif()

set(_pld_sched_dir "${CMAKE_CURRENT_SOURCE_DIR}/schedule")
set(_pld_sched_env ${PLD_MPI_TEST_ENV})

# the list comes from the runner; a failing --list stops the configuration (tests/runner_list.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/runner_list.cmake)
pld_runner_list(_pld_sched_tests tests/schedule/run_schedule.py
                "${PLD_PYTHON3_SCHEDULE}" "${_pld_sched_dir}/run_schedule.py" --pldrun pldrun --list)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_pld_sched_dir}/run_schedule.py")

foreach(_line IN LISTS _pld_sched_tests)
  string(REPLACE " " ";" _f "${_line}")
  list(GET _f 0 _case)
  list(GET _f 1 _p)
  set(_name schedule_${_case}_p${_p})
  add_test(NAME ${_name}
           COMMAND "${PLD_PYTHON3_SCHEDULE}" "${_pld_sched_dir}/run_schedule.py"
                   --pldrun $<TARGET_FILE:pldrun> --mpiexec "${MPIEXEC_EXECUTABLE}"
                   "--numproc-flag=${PLD_MPI_NP_FLAG}" --case ${_case}
                   --workdir "${CMAKE_CURRENT_BINARY_DIR}/schedule_runs")
  if(_p EQUAL 1)
    set(_labels schedule)
  else()
    set(_labels "schedule;mpi")
  endif()
  set_tests_properties(${_name} PROPERTIES LABELS "${_labels}" TIMEOUT 120 PROCESSORS ${_p}
                                           ENVIRONMENT "${_pld_sched_env}")
endforeach()

# the corpus under seeded schedules: golden results (each program once per P, the seeds in turn)
set(_pld_sched_corpus
    corpus_chip_all_to_all_v_fp32 corpus_chip_all_to_all_v_int8 corpus_host_all_to_all corpus_host_all_to_all_v
    corpus_host_allgather corpus_host_allreduce_mesh corpus_host_allreduce_multicore corpus_host_allreduce_ring
    corpus_host_allreduce_synth corpus_host_barrier corpus_host_broadcast corpus_host_reduce_scatter
    corpus_incore_all_to_all corpus_incore_all_to_all_v corpus_incore_allgather corpus_incore_allreduce_mesh
    corpus_incore_allreduce_ring corpus_incore_barrier corpus_incore_broadcast corpus_incore_reduce_scatter
    tutorial_allreduce_mesh_handrolled tutorial_allreduce_ring_handrolled tutorial_barrier_handrolled
    tutorial_collectives_handrolled tutorial_deferred_completion tutorial_deferred_completion_keep3
    tutorial_dynamic_rank_count tutorial_hello_rank tutorial_multi_group tutorial_push_variants tutorial_put_get
    tutorial_remote_load_store tutorial_remote_store_raw_bf16 tutorial_window_buffer tutorial_window_slices)
set(_pld_sched_args "")
foreach(_c IN LISTS _pld_sched_corpus)
  list(APPEND _pld_sched_args --case ${_c})
endforeach()
# the sanitizer tree (suite time): P = 2 only
set(_pld_sched_ranks 2 4)
if(PLD_SANITIZE)
  set(_pld_sched_ranks 2)
endif()
foreach(_p IN LISTS _pld_sched_ranks)
  if(_p EQUAL 2)
    set(_seeds --schedule-seed 1 --schedule-seed 2 --schedule-seed 3)
  else()
    set(_seeds --schedule-seed 4 --schedule-seed 5 --schedule-seed 6)
  endif()
  add_test(NAME schedule_programs_p${_p}
           COMMAND "${PLD_PYTHON3_SCHEDULE}" "${CMAKE_CURRENT_SOURCE_DIR}/mpi/run_coll.py"
                   --pldrun $<TARGET_FILE:pldrun> --mpiexec "${MPIEXEC_EXECUTABLE}"
                   "--numproc-flag=${PLD_MPI_NP_FLAG}" ${_seeds} --rotate-seeds --ranks ${_p} --transport shm
                   ${_pld_sched_args} --workdir "${CMAKE_CURRENT_BINARY_DIR}/schedule_runs/programs_p${_p}")
  set_tests_properties(schedule_programs_p${_p} PROPERTIES LABELS "schedule;mpi" TIMEOUT 240 PROCESSORS ${_p}
                                                        ENVIRONMENT "${_pld_sched_env}")
endforeach()

# issue 42: --schedule-seeds A-B, the schedule sweep (tools/pldrun/sweep.c; docs/debugging.md, "Schedule sweeps")
#   schedule_sweep_<case>_p<P>  tests/schedule/run_sweep.py: a schedule-dependent result (block_order) stops the
#                               sweep at a seed with exit 1 and a replay command that, run as printed, reproduces
#                               the reported difference; a seed that deadlocks (flag_put) stops it with the hang
#                               report and exit 70; a correct program (spmd_ring) runs every seed, exit 0; a
#                               race under --check-races (tests/races/racy/put_vs_store.pld) stops it with exit 1,
#                               the fixed program runs every seed; bad ranges and conflicting options exit 64.
#                               About 10 s in all.
pld_runner_list(_pld_sweep_tests tests/schedule/run_sweep.py
                "${PLD_PYTHON3_SCHEDULE}" "${_pld_sched_dir}/run_sweep.py" --pldrun pldrun --list)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_pld_sched_dir}/run_sweep.py")
foreach(_line IN LISTS _pld_sweep_tests)
  string(REPLACE " " ";" _f "${_line}")
  list(GET _f 0 _case)
  list(GET _f 1 _p)
  set(_name schedule_sweep_${_case}_p${_p})
  add_test(NAME ${_name}
           COMMAND "${PLD_PYTHON3_SCHEDULE}" "${_pld_sched_dir}/run_sweep.py"
                   --pldrun $<TARGET_FILE:pldrun> --mpiexec "${MPIEXEC_EXECUTABLE}"
                   "--numproc-flag=${PLD_MPI_NP_FLAG}" --case ${_case}
                   --workdir "${CMAKE_CURRENT_BINARY_DIR}/schedule_runs/sweep")
  if(_p EQUAL 1)
    set(_labels schedule)
  else()
    set(_labels "schedule;mpi")
  endif()
  set_tests_properties(${_name} PROPERTIES LABELS "${_labels}" TIMEOUT 60 PROCESSORS ${_p}
                                           ENVIRONMENT "${_pld_sched_env}")
endforeach()
