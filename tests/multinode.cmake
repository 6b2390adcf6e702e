# tests/multinode.cmake - tier-1/2 programs across emulated hosts, label
# `multinode` (tests/mpi/run_multinode.py). Included at the end of
# tests/CMakeLists.txt.
#
#   multinode_<program>_<transport>   programs/tutorial/{barrier_handrolled,
#                                     remote_load_store, put_get,
#                                     allreduce_mesh_handrolled,
#                                     allreduce_ring_handrolled,
#                                     collectives_handrolled, multi_group,
#                                     push_variants,
#                                     dynamic_rank_count, window_buffer,
#                                     deferred_completion,
#                                     remote_store_raw_bf16} on
#                                     2 emulated hosts x 2 ranks (--map-by node:
#                                     neighbours cross hosts) through
#                                     scripts/mpx-ci.sh, with
#                                     --window-transport rma and auto; outputs
#                                     compared exactly with Python goldens
#   multinode_barrier_handrolled_shm_refused
#                                     shm across hosts must stop with exit 70
#                                     ("needs every domain member on one node")
#
# The emulation (network namespaces on a private bridge, own UTS and mount
# namespace per host; shared/docs/multinode.md, docs/multinode-ci.md) needs
# root: as another user, or without `ip netns` / veth / bridge support, every
# test exits 77 and CTest reports it as skipped, with the reason in its
# output. mpx-ci.sh sets the cross-host Open MPI environment itself (btl tcp,
# osc ^ucx so that pt2pt is available, ...), overriding scripts/mpi_env.sh.
#
# RUN_SERIAL (the namespace names are fixed, and timings matter on 2 cores),
# TIMEOUT 120 (the runner stops itself after 108 s; mpx-ci.sh waits at most
# 30 s for a concurrent run's lock and limits the job to 60 s; pldrun's hang
# watchdog is 20 s). Run them alone with `ctest -L multinode`
# (25 tests, about 20 s).

find_program(PLD_PYTHON3_MN NAMES python3)
set(_pld_mn_script "${PROJECT_SOURCE_DIR}/scripts/mpx-ci.sh")
if(NOT PLD_PYTHON3_MN OR NOT MPIEXEC_EXECUTABLE OR NOT EXISTS "${_pld_mn_script}")
  message(STATUS "pldrun tests: python3, mpiexec or scripts/mpx-ci.sh not found; "
                 "the multinode tests are not registered")
  return()
endif()

set(_pld_mn_dir "${CMAKE_CURRENT_SOURCE_DIR}/mpi")

# The test list comes from the runner itself: lines "PROGRAM TRANSPORT".
execute_process(
  COMMAND "${PLD_PYTHON3_MN}" "${_pld_mn_dir}/run_multinode.py" --pldrun pldrun --list
  OUTPUT_VARIABLE _pld_mn_tests
  RESULT_VARIABLE _pld_mn_rc
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _pld_mn_rc EQUAL 0)
  message(WARNING "pldrun tests: tests/mpi/run_multinode.py --list failed; no multinode tests")
  set(_pld_mn_tests "")
endif()
string(REPLACE "\n" ";" _pld_mn_tests "${_pld_mn_tests}")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_pld_mn_dir}/run_multinode.py")

foreach(_line IN LISTS _pld_mn_tests)
  string(REPLACE " " ";" _f "${_line}")
  list(GET _f 0 _case)
  list(GET _f 1 _tr)
  set(_name multinode_${_case}_${_tr})
  if(_tr STREQUAL "shm")
    set(_name multinode_${_case}_shm_refused)
  endif()
  add_test(NAME ${_name}
           COMMAND "${PLD_PYTHON3_MN}" "${_pld_mn_dir}/run_multinode.py"
                   --pldrun $<TARGET_FILE:pldrun> --mpx "${_pld_mn_script}"
                   --mpiexec "${MPIEXEC_EXECUTABLE}" --case ${_case} --transport ${_tr}
                   --workdir "${CMAKE_CURRENT_BINARY_DIR}/multinode_runs")
  set_tests_properties(${_name} PROPERTIES LABELS multinode TIMEOUT 120 RUN_SERIAL TRUE
                                           SKIP_RETURN_CODE 77
                                           ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")
endforeach()
