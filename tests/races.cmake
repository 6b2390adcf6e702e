# tests/races.cmake - `pldrun --check-races` (docs/races.md), label `races` (and `mpi`).
# Included at the end of tests/CMakeLists.txt.
#
#   races_racy_<name>, races_clean_<name>
#                           tests/races/run_races.py: the race corpus (tests/races/README.md).
#                           Every racy program gets a report naming both conflicting lines;
#                           its fixed twin gets none.
#   races_programs_p2       tests/mpi/run_coll.py --check-races: every positive collective case
#                           (programs/ and tests/mpi/programs) at P = 2 over shm: golden results,
#                           no report, no other warning
#   races_programs_p4       the same at P = 4 for the programs of programs/ (the sanitizer tree
#                           runs races_programs_p2 over programs/ only, and no P = 4 run)
#   races_finding_collectives_keep3
#                           a real finding: programs/tutorial/collectives_handrolled.pld run with
#                           persistent windows that are not reset (--dispatches 3) waits on
#                           credits left by the previous dispatch (docs/races.md, "Findings");
#                           which of its pairs a run reports, and from which rank, depends on
#                           the timing, so the test asks for a report on one of its windows
#                           (tests/expect_run.py: exit status 0, the report, the closing count)
#   findings_gate           tests/races/run_findings.py (issue 42): --check-races=error and
#                           --poison=error exit 1 on a finding, 0 without one, plain --check-races
#                           keeps 0; --findings FILE.json is a SARIF 2.1.0 log naming both sides of
#                           a race (rank, block, op, line:col, window, bytes) and each poisoned read,
#                           byte for byte the same on a replay with the same --schedule-seed (an
#                           in-rank race between two blocks, decided by the seeded scheduler)
#   races_beyond_slots      tests/races/beyond/grid_70.pld: a grid of 70 blocks, more kernel threads
#                           than the 63 clock slots of a rank: the run must end with the warning
#                           that threads shared a slot (docs/races.md, "Beyond 63"), exit 0
#   races_rma_refused, races_backend_refused
#                           --check-races over the rma transport (exit 70) and with a compiled
#                           backend (exit 64): refused with the reason
#
# Every test judges the exit status too: the single commands run under tests/expect_run.py
# (status and patterns), never a PASS_REGULAR_EXPRESSION alone, which ignores the status. The
# lists come from the runners (run_races.py --list, run_coll.py --list): a failing --list stops
# the configuration (tests/runner_list.cmake).
#
# The whole suite takes about a minute and a half.

find_program(PLD_PYTHON3_RACES NAMES python3)
if(NOT PLD_PYTHON3_RACES OR NOT MPIEXEC_EXECUTABLE)
  message(STATUS "pldrun tests: python3 or mpiexec not found; the --check-races tests are not registered")
  return()
endif()

set(_pld_races_dir "${CMAKE_CURRENT_SOURCE_DIR}/races")
set(_pld_expect "${CMAKE_CURRENT_SOURCE_DIR}/expect_run.py")
include(${CMAKE_CURRENT_LIST_DIR}/runner_list.cmake)
pld_runner_list(_pld_races_cases tests/races/run_races.py
                "${PLD_PYTHON3_RACES}" "${_pld_races_dir}/run_races.py" --pldrun pldrun --list)
file(GLOB _pld_races_programs CONFIGURE_DEPENDS "${_pld_races_dir}/racy/*.pld" "${_pld_races_dir}/clean/*.pld")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_pld_races_dir}/run_races.py"
                                                               "${CMAKE_CURRENT_SOURCE_DIR}/mpi/run_coll.py")

foreach(_case IN LISTS _pld_races_cases)
  string(REPLACE "/" "_" _name "${_case}")
  add_test(NAME races_${_name}
           COMMAND "${PLD_PYTHON3_RACES}" "${_pld_races_dir}/run_races.py"
                   --pldrun $<TARGET_FILE:pldrun> --mpiexec "${MPIEXEC_EXECUTABLE}"
                   "--numproc-flag=${PLD_MPI_NP_FLAG}" --case ${_case}
                   --workdir "${CMAKE_CURRENT_BINARY_DIR}/race_runs")
  set_tests_properties(races_${_name} PROPERTIES LABELS "races;mpi" TIMEOUT 120 PROCESSORS 2
                                                 ENVIRONMENT "${PLD_MPI_TEST_ENV}")
endforeach()

# the collective corpus: no report. The keep3 run of collectives_handrolled is the finding below.
pld_runner_list(_pld_races_coll tests/mpi/run_coll.py
                "${PLD_PYTHON3_RACES}" "${CMAKE_CURRENT_SOURCE_DIR}/mpi/run_coll.py" --pldrun pldrun --list)
# (each case that has a run at that P over shm: run_coll.py refuses a --case it has nothing to run for)
set(_pld_races_all "")
set(_pld_races_prog "")
set(_pld_races_prog4 "")
foreach(_line IN LISTS _pld_races_coll)
  string(REPLACE " " ";" _f "${_line}")
  list(GET _f 0 _c)
  list(GET _f 1 _p)
  list(GET _f 2 _tr)
  if(_c MATCHES "^neg_" OR _c MATCHES "_specials$" OR _c STREQUAL "tutorial_collectives_handrolled_keep3"
     OR NOT _tr STREQUAL "shm")
    continue()
  endif()
  if(_p EQUAL 2)
    list(APPEND _pld_races_all --case ${_c})
    if(_c MATCHES "^(corpus|tutorial)_")
      list(APPEND _pld_races_prog --case ${_c})
    endif()
  elseif(_p EQUAL 4 AND _c MATCHES "^(corpus|tutorial)_")
    list(APPEND _pld_races_prog4 --case ${_c})
  endif()
endforeach()
# the sanitizer tree (suite time) runs the programs of programs/ at P = 2 only
if(PLD_SANITIZE)
  set(_pld_races_all ${_pld_races_prog})
endif()
# P = 2: every positive case; P = 4: the programs of programs/, not in the sanitizer tree
set(_pld_races_runs 2)
if(NOT PLD_SANITIZE)
  list(APPEND _pld_races_runs 4)
endif()
foreach(_p IN LISTS _pld_races_runs)
  if(_p EQUAL 2)
    set(_cases ${_pld_races_all})
  else()
    set(_cases ${_pld_races_prog4})
  endif()
  add_test(NAME races_programs_p${_p}
           COMMAND "${PLD_PYTHON3_RACES}" "${CMAKE_CURRENT_SOURCE_DIR}/mpi/run_coll.py"
                   --pldrun $<TARGET_FILE:pldrun> --mpiexec "${MPIEXEC_EXECUTABLE}"
                   "--numproc-flag=${PLD_MPI_NP_FLAG}" --check-races --ranks ${_p} --transport shm ${_cases}
                   --workdir "${CMAKE_CURRENT_BINARY_DIR}/race_runs/programs_p${_p}")
  set_tests_properties(races_programs_p${_p} PROPERTIES LABELS "races;mpi" TIMEOUT 600 PROCESSORS 2
                                                      ENVIRONMENT "${PLD_MPI_TEST_ENV}")
endforeach()

# The finding: a race warning does not change pldrun's exit status (docs/races.md), so the run
# must exit 0, report a race on one of the windows and print its closing count.
add_test(NAME races_finding_collectives_keep3
         COMMAND "${PLD_PYTHON3_RACES}" "${_pld_expect}" --exit 0
                 "--match=collectives_handrolled\\.pld:[0-9]+:[0-9]+: warning: data race on window '[bgra]win_buf' of rank [01], "
                 "--match=^pldrun: --check-races: [1-9][0-9]* data races? reported$"
                 "--no-match=: error: "
                 -- "${MPIEXEC_EXECUTABLE}" "${PLD_MPI_NP_FLAG}" 2 $<TARGET_FILE:pldrun>
                 "${PROJECT_SOURCE_DIR}/programs/tutorial/collectives_handrolled.pld"
                 --in xs=arange --in chunks=arange --in parts=arange --dispatches 3 --persistent-windows
                 --reset-persistent-windows no --check-races)
set_tests_properties(races_finding_collectives_keep3 PROPERTIES LABELS "races;mpi" TIMEOUT 120 PROCESSORS 2
                     ENVIRONMENT "${PLD_MPI_TEST_ENV}")

add_test(NAME findings_gate
         COMMAND "${PLD_PYTHON3_RACES}" "${_pld_races_dir}/run_findings.py"
                 --pldrun $<TARGET_FILE:pldrun> --mpiexec "${MPIEXEC_EXECUTABLE}"
                 "--numproc-flag=${PLD_MPI_NP_FLAG}" --workdir "${CMAKE_CURRENT_BINARY_DIR}/race_runs/findings")
set_tests_properties(findings_gate PROPERTIES LABELS "races;poison;mpi" TIMEOUT 120 PROCESSORS 2
                     ENVIRONMENT "${PLD_MPI_TEST_ENV}")

# More kernel threads than slots: not silent (issue 43). Which pairs are missed depends on the
# slots shared, so only the warning and the exit status are judged.
add_test(NAME races_beyond_slots
         COMMAND "${PLD_PYTHON3_RACES}" "${_pld_expect}" --exit 0
                 "--match=warning: --check-races: [0-9]+ kernel threads had to share a clock slot \\(more than 63 threads"
                 "--no-match=: error: "
                 -- "${MPIEXEC_EXECUTABLE}" "${PLD_MPI_NP_FLAG}" 2 $<TARGET_FILE:pldrun>
                 "${_pld_races_dir}/beyond/grid_70.pld" --in xs=arange --out ys=/dev/null --check-races)
set_tests_properties(races_beyond_slots PROPERTIES LABELS "races;mpi" TIMEOUT 60 PROCESSORS 2
                     ENVIRONMENT "${PLD_MPI_TEST_ENV}")

add_test(NAME races_rma_refused
         COMMAND "${PLD_PYTHON3_RACES}" "${_pld_expect}" --exit 70
                 "--match=--check-races needs every member of a comm domain to map the others' windows.*uses rma"
                 -- "${MPIEXEC_EXECUTABLE}" "${PLD_MPI_NP_FLAG}" 2 $<TARGET_FILE:pldrun> --check-races
                 --window-transport rma "${_pld_races_dir}/clean/put_vs_load.pld" --in xs=arange --out ys=/dev/null)
set_tests_properties(races_rma_refused PROPERTIES LABELS "races;mpi" TIMEOUT 60 PROCESSORS 2
                     ENVIRONMENT "${PLD_MPI_TEST_ENV}")
add_test(NAME races_backend_refused
         COMMAND "${PLD_PYTHON3_RACES}" "${_pld_expect}" --exit 64
                 "--match=^pldrun: --check-races needs --backend sim: with backend 'native'"
                 -- $<TARGET_FILE:pldrun> --check-races --backend native "${_pld_races_dir}/clean/put_vs_load.pld"
                 --in xs=arange)
set_tests_properties(races_backend_refused PROPERTIES LABELS races TIMEOUT 30 ENVIRONMENT "${PLD_MPI_TEST_ENV}")
