# tests/coll.cmake - collectives under mpirun (tests/mpi/run_coll.py), label `mpi`.
# Included at the end of tests/CMakeLists.txt.
#
#   coll_<case>_p<P>_<transport>   (P = 1 and 17 here; P = 2, 3, 4 run as the
#                                  conformance tests, tests/conformance.cmake)
#                                  every collective on every rail (InCore
#                                  composite, HOST builtin, CHIP builtin) from
#                                  tests/mpi/programs/coll_*.pld and the corpus
#                                  programs/{host,incore,chip,tutorial}, at each
#                                  P of the program's `# ranks:` (or of
#                                  run_coll.py's REWRITE_RANKS) with --window-transport
#                                  rma and shm; outputs compared bit-exactly with
#                                  Python goldens (documented fold orders) and
#                                  every dumped signal must be all zero
#                                  (`*_fresh3`/`_reset3`/`_keep3`: three
#                                  dispatches over fresh, reset and kept windows)
#   coll_<case>_lowered_p<P>_shm  the text `pldrun --print-lowered` prints for
#                                  the HOST and CHIP cases, run against the same
#                                  goldens (labels `mpi` and `lower`)
#   coll_neg_<case>_p<P>_<transport>  hangs (mismatched / differently shaped
#                                  calls, a rank-divergent wait, a missing CHIP
#                                  call, a deferred waiter nobody notifies)
#                                  stopped by the watchdog with exit 70 within
#                                  seconds, and located runtime errors (exit 70:
#                                  out-of-bounds put, peer outside the domain, ...)
#
# Each test has PROCESSORS P, a 120 s TIMEOUT and the launch environment of
# tests/mpi.cmake. Run them alone with `ctest -R "^coll_" -j2`.

find_program(PLD_PYTHON3_COLL NAMES python3)
if(NOT PLD_PYTHON3_COLL OR NOT MPIEXEC_EXECUTABLE)
  message(STATUS "pldrun tests: python3 or mpiexec not found; the collective tests are not registered")
  return()
endif()

set(_pld_coll_dir "${CMAKE_CURRENT_SOURCE_DIR}/mpi")
set(_pld_coll_flag "${PLD_MPI_NP_FLAG}")
set(_pld_coll_env ${PLD_MPI_TEST_ENV})

# The test list comes from the runner itself: lines "CASE P TRANSPORT". A failing
# --list (a missing program, a broken runner) stops the configuration
# (tests/runner_list.cmake).
include(${CMAKE_CURRENT_LIST_DIR}/runner_list.cmake)
pld_runner_list(_pld_coll_tests tests/mpi/run_coll.py
                "${PLD_PYTHON3_COLL}" "${_pld_coll_dir}/run_coll.py" --pldrun pldrun --list --outside-conformance)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_pld_coll_dir}/run_coll.py"
                                                               "${_pld_coll_dir}/pld_mpitest.py")

# The sanitizer tree runs each negative case (a hang the watchdog stops, a
# located runtime error) over one transport, rma and shm taking turns down
# the list (suite time: each waits for the watchdog); the Release tree both.
set(_pld_coll_neg_turn 0)
foreach(_line IN LISTS _pld_coll_tests)
  string(REPLACE " " ";" _f "${_line}")
  list(GET _f 0 _case)
  list(GET _f 1 _p)
  list(GET _f 2 _tr)
  if(PLD_SANITIZE AND _case MATCHES "^neg_")
    if(_tr STREQUAL "rma")  # each case and P lists rma, then shm
      math(EXPR _pld_coll_neg_turn "(${_pld_coll_neg_turn} + 1) % 2")
    endif()
    if(_pld_coll_neg_turn EQUAL 1)
      set(_pld_coll_neg_want rma)
    else()
      set(_pld_coll_neg_want shm)
    endif()
    if(NOT _tr STREQUAL _pld_coll_neg_want)
      continue()
    endif()
  endif()
  # the sanitizer tree runs the *_specials cases (each run twice: the
  # reference transport too) at P = 4 only, for suite time (3 and 4 here)
  if(PLD_SANITIZE AND _case MATCHES "_specials$" AND NOT _p EQUAL 4)
    continue()
  endif()
  set(_name coll_${_case}_p${_p}_${_tr})
  add_test(NAME ${_name}
           COMMAND "${PLD_PYTHON3_COLL}" "${_pld_coll_dir}/run_coll.py"
                   --pldrun $<TARGET_FILE:pldrun> --mpiexec "${MPIEXEC_EXECUTABLE}"
                   "--numproc-flag=${_pld_coll_flag}" --case ${_case} --ranks ${_p} --transport ${_tr}
                   --workdir "${CMAKE_CURRENT_BINARY_DIR}/coll_runs")
  set_tests_properties(${_name} PROPERTIES LABELS mpi TIMEOUT 120 PROCESSORS ${_p}
                                           ENVIRONMENT "${_pld_coll_env}")
  if(_case MATCHES "_lowered$")
    set_property(TEST ${_name} APPEND PROPERTY LABELS lower)
  endif()
endforeach()

# coll_hybrid_split_p<P>: every case above (negative ones included, lowered
# ones not) at P over the hybrid transport on one node, with
# PLD_TEST_SPLIT_HOSTS=2 (pldrun_testing): ranks 0, 2 on "host" 0 and 1, 3 on
# "host" 1, so every domain mixes members reached through shared memory with
# members reached through MPI RMA and signal messages, as across real hosts
# (docs/transport.md). P = 3 and 4 (about 30 s each in Release): at P = 2 the
# split puts one rank on each host, a domain with no shared-memory member,
# which the multinode tests' 1 + 1 runs cover with every collective program
# and the negative cases (tests/multinode.cmake). The sanitizer tree runs the
# window layer's own hybrid tests (win_hybrid_split_*) only, for suite time.
if(TARGET pldrun_testing AND NOT PLD_SANITIZE)
  foreach(_p 3 4)
    add_test(NAME coll_hybrid_split_p${_p}
             COMMAND "${PLD_PYTHON3_COLL}" "${_pld_coll_dir}/run_coll.py"
                     --pldrun $<TARGET_FILE:pldrun_testing> --mpiexec "${MPIEXEC_EXECUTABLE}"
                     "--numproc-flag=${_pld_coll_flag}" --ranks ${_p} --transport hybrid --split-hosts 2
                     --workdir "${CMAKE_CURRENT_BINARY_DIR}/coll_runs_hybrid")
    set_tests_properties(coll_hybrid_split_p${_p} PROPERTIES LABELS "mpi;hybrid" TIMEOUT 600 PROCESSORS ${_p}
                                                              ENVIRONMENT "${_pld_coll_env}")
  endforeach()
  # coll_hybrid_block_p4: the mesh allreduce cases at P = 4 with
  # PLD_TEST_SPLIT_HOSTS=2b: ranks 0, 1 on "host" 0 and 2, 3 on "host" 1, as
  # mpirun fills 2 hosts of 2 slots. There the merged steps go HUB with rep
  # and twin (docs/transport.md): the ranks of host 1 fold for everyone,
  # rank 0 copies its result to rank 1, the blocks where rank 1's differs
  # (the *_specials cases' NaN payloads) follow after the barrier; the
  # outputs are compared bit for bit with shm's. The same over rma (a user's
  # choice across hosts: the plan is the same, rank 0's copy an MPI put).
  # (Split 2 gives HUB without twin at P = 3 and SPREAD at P = 4.)
  # (the *_specials cases run the programs of incore_allreduce and
  # host_allreduce, with their goldens)
  set(_pld_block_cases incore_allreduce_specials host_allreduce_specials corpus_host_allreduce_multicore
      corpus_host_allreduce_synth corpus_incore_allreduce_mesh_keep3 neg_shape_p4)
  list(TRANSFORM _pld_block_cases PREPEND "--case=")
  add_test(NAME coll_hybrid_block_p4
           COMMAND "${PLD_PYTHON3_COLL}" "${_pld_coll_dir}/run_coll.py"
                   --pldrun $<TARGET_FILE:pldrun_testing> --mpiexec "${MPIEXEC_EXECUTABLE}"
                   "--numproc-flag=${_pld_coll_flag}" --ranks 4 --transport hybrid --transport rma --split-hosts 2b
                   ${_pld_block_cases} --workdir "${CMAKE_CURRENT_BINARY_DIR}/coll_runs_block")
  set_tests_properties(coll_hybrid_block_p4 PROPERTIES LABELS "mpi;hybrid" TIMEOUT 300 PROCESSORS 4
                                                         ENVIRONMENT "${_pld_coll_env}")
endif()
