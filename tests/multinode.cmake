# tests/multinode.cmake - pldrun across emulated hosts, label `multinode`
# (tests/mpi/run_multinode.py). Included at the end of tests/CMakeLists.txt.
#
# Every run: 2 emulated hosts x 2 slots through scripts/mpx-ci.sh, mpirun
# --map-by node (rank r on host r mod 2: P = 2, 3, 4 is 1+1, 2+1, 2+2 ranks,
# neighbours cross hosts; the job map is checked).
#
#   multinode_<program>_<transport>   programs/tutorial/{barrier_handrolled,
#                                     remote_load_store, put_get,
#                                     allreduce_mesh_handrolled,
#                                     allreduce_ring_handrolled,
#                                     collectives_handrolled, multi_group,
#                                     push_variants,
#                                     dynamic_rank_count, window_buffer,
#                                     deferred_completion,
#                                     remote_store_raw_bf16} at P = 4 with
#                                     --window-transport rma and auto; outputs
#                                     compared exactly with Python goldens
#   multinode_barrier_handrolled_shm_refused
#                                     shm across hosts must stop with exit 70
#                                     ("needs every domain member on one node")
#   multinode_coll_<case>_auto        (Release tree only) one run_coll.py case
#                                     at P = 2, 3 and 4 in one test: every
#                                     collective program of programs/{host,
#                                     incore,chip} (corpus_*, and the _keep3
#                                     variants: 3 dispatches over kept windows)
#                                     and of tests/mpi/programs (coll_*,
#                                     deferred_*), through run_coll.run_case
#                                     (same inputs, bit-exact goldens and
#                                     checks as on one host; the
#                                     *_allreduce_specials cases also bit for
#                                     bit against a run over shm on this
#                                     host), auto must say
#                                     "windows over hybrid" (run_multinode.py's
#                                     WINDOWS_OVER; shm beside it for a domain
#                                     within one host)
#   multinode_mpx_probe               scripts/mpx-ci.sh's probe removes the
#                                     namespaces of killed probes and avoids a
#                                     taken name (tests/mpi/test_mpx_probe.sh)
#   runner_stderr_filter              (no MPI, no namespaces) the stderr check of
#                                     the runners' positive runs
#                                     (pld_mpitest.unexpected_lines): Open MPI's
#                                     launcher notices, e.g. the rsh launcher's
#                                     "plm:rsh: Warning: setpgid(...) failed in
#                                     parent", pass; pldrun's error and warning
#                                     lines, also dressed as such a notice, are
#                                     reported by their text
#                                     (tests/mpi/test_launcher_lines.py)
#   multinode_coll_neg_{mismatch,divergent_wait,a2av_skip}_auto
#                                     (Release tree only) P = 2, 3: the hang is
#                                     reported (exit 70, the blocked wait named)
#                                     within run_coll.py's NEG limit
#
# The emulation (network namespaces on a private bridge, own UTS and mount
# namespace per host; shared/docs/multinode.md, docs/multinode-ci.md) needs
# root and iproute2 (scripts/install_deps.sh installs it): as another user, or
# without `ip netns` / veth / bridge support, every test exits 77 and CTest
# reports it as skipped, with the reason in its output. In CI (environment
# CI=true; .ci/run sets it when unset) the same tests fail instead (exit 1,
# "FAIL: ... (CI=true: ...)"), multinode_mpx_probe too: a green CI run means
# the cross-host path ran. mpx-ci.sh sets the cross-host Open MPI environment
# itself (btl tcp, osc ^ucx so that pt2pt is available, shared-memory backing
# files on each host's private /dev/shm, ...), overriding scripts/mpi_env.sh
# and scripts/mpi_rundir.sh.
#
# The collective tests are registered only when PLD_SANITIZE is OFF: the
# sanitizer tree keeps the tutorial tests, so that the suite time of the two
# trees grows only by their 3.5-5 minutes in Release (docs/multinode-ci.md).
#
# RESOURCE_LOCK pld_mpx (the namespace names are fixed: one multinode test at
# a time, while the other CTest slot runs the rest of the suite; most of a
# multinode run is set-up and start-up latency, not CPU), TIMEOUT 120 per run
# of the test (each run stops itself after 108 s;
# mpx-ci.sh waits at most 30 s for a concurrent run's lock and limits the job
# to 60 s; pldrun's hang watchdog is 20 s for the tutorial cases, 30 s for
# run_coll.py's positive and 5 s for its negative ones). Run them alone with
# `ctest -L multinode` (71 tests in the Release tree, 5.5-6.5 minutes on the
# shared 2-core machine; 27 tests, about 20 s, in the sanitizer tree).

find_program(PLD_PYTHON3_MN NAMES python3)
set(_pld_mn_script "${PROJECT_SOURCE_DIR}/scripts/mpx-ci.sh")

# The runners' stderr check, without MPI: registered wherever python3 is.
if(PLD_PYTHON3_MN)
  add_test(NAME runner_stderr_filter
           COMMAND "${PLD_PYTHON3_MN}" "${CMAKE_CURRENT_SOURCE_DIR}/mpi/test_launcher_lines.py")
  set_tests_properties(runner_stderr_filter PROPERTIES LABELS multinode TIMEOUT 60)
endif()
if(NOT PLD_PYTHON3_MN OR NOT MPIEXEC_EXECUTABLE OR NOT EXISTS "${_pld_mn_script}")
  message(STATUS "pldrun tests: python3, mpiexec or scripts/mpx-ci.sh not found; "
                 "the multinode tests are not registered")
  return()
endif()

set(_pld_mn_dir "${CMAKE_CURRENT_SOURCE_DIR}/mpi")

# The test list comes from the runner itself: lines "KIND CASE TRANSPORT RUNS".
# A failing --list stops the configuration (tests/runner_list.cmake).
include(${CMAKE_CURRENT_LIST_DIR}/runner_list.cmake)
pld_runner_list(_pld_mn_tests tests/mpi/run_multinode.py
                "${PLD_PYTHON3_MN}" "${_pld_mn_dir}/run_multinode.py" --pldrun pldrun --list)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_pld_mn_dir}/run_multinode.py"
                                                               "${_pld_mn_dir}/run_coll.py")

foreach(_line IN LISTS _pld_mn_tests)
  string(REPLACE " " ";" _f "${_line}")
  list(GET _f 0 _kind)
  list(GET _f 1 _case)
  list(GET _f 2 _tr)
  list(GET _f 3 _runs)
  if(_kind STREQUAL "tutorial")
    set(_name multinode_${_case}_${_tr})
    if(_tr STREQUAL "shm")
      set(_name multinode_${_case}_shm_refused)
    endif()
  elseif(PLD_SANITIZE)
    continue()
  else()
    set(_name multinode_coll_${_case}_${_tr})
  endif()
  math(EXPR _timeout "120 * ${_runs}")
  add_test(NAME ${_name}
           COMMAND "${PLD_PYTHON3_MN}" "${_pld_mn_dir}/run_multinode.py"
                   --pldrun $<TARGET_FILE:pldrun> --mpx "${_pld_mn_script}"
                   --mpiexec "${MPIEXEC_EXECUTABLE}" --case ${_case} --transport ${_tr}
                   --workdir "${CMAKE_CURRENT_BINARY_DIR}/multinode_runs")
  set_tests_properties(${_name} PROPERTIES LABELS multinode TIMEOUT ${_timeout} RESOURCE_LOCK pld_mpx
                                           SKIP_RETURN_CODE 77
                                           ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0;OMPI_MCA_odls_base_sigkill_timeout=0")
endforeach()

# The emulation's own probe (scripts/mpx-ci.sh --check and before every run):
# a probe namespace left by a killed run must neither block later runs nor
# survive them (tests/mpi/test_mpx_probe.sh, its own prefix mpxtp).
find_program(PLD_BASH_MN NAMES bash)
if(PLD_BASH_MN)
  add_test(NAME multinode_mpx_probe
           COMMAND "${PLD_BASH_MN}" "${_pld_mn_dir}/test_mpx_probe.sh" "${_pld_mn_script}")
  set_tests_properties(multinode_mpx_probe PROPERTIES LABELS multinode TIMEOUT 60
                                                    RESOURCE_LOCK pld_mpx SKIP_RETURN_CODE 77)
endif()
