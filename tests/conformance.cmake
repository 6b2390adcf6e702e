# tests/conformance.cmake - the conformance table (tests/conformance/run_conformance.py):
# every program with golden results (tests/mpi/run_golden.py's tier-0 programs,
# run_coll.py's programs of tests/mpi/programs, programs/{host,incore,chip} and
# programs/tutorial) on each backend of PLD_CONFORMANCE_BACKENDS at P = 2, 3, 4 (sim in the
# Release tree; the other cells at P = 2 and 4),
# the run_coll.py programs with --window-transport rma and shm.
#
#   conformance_<backend>_<group>_p<P>   labels `mpi`, `conformance`, `backend_<backend>`;
#                                        group: tier0, coll, corpus, tutorial
#
# One test per backend x group x P, so that CTest spreads them over the cores.
# The runs at P = 2, 3, 4 that these tests make are left out of mpi_golden_* and
# coll_* (`--list --outside-conformance`): those keep P = 1, the P = 17 guard
# and the negative cases. A backend that pldrun reports unavailable (exit 69)
# makes the test skipped (exit 77), not failed. Each test writes its cells to
# conformance_runs/<backend>_<group>_p<P>.json; `run_conformance.py --merge` makes
# docs/conformance.md of them (tests/README.md). Included after coll.cmake.
# native (kernels compiled to C) and ascend (CANN) join sim in the Release tree;
# the sanitizer tree runs sim only (CI time), native's runtime is covered there
# by tests/native.cmake. ascend runs where CANN and a kernel directory exist;
# elsewhere pldrun reports it unavailable (exit 69) and its cells are skipped
# with that message (the plugin itself is tested on a fake runtime: tests/ascend.cmake).
if(PLD_SANITIZE)
  set(_pld_conf_default "sim")
else()
  set(_pld_conf_default "sim,native,ascend")
endif()
set(PLD_CONFORMANCE_BACKENDS "${_pld_conf_default}" CACHE STRING
    "Backends of the conformance tests (comma-separated names or plugin paths; sim is always one)")

find_program(PLD_PYTHON3_CONF NAMES python3)
if(NOT PLD_PYTHON3_CONF OR NOT MPIEXEC_EXECUTABLE)
  message(STATUS "pldrun tests: python3 or mpiexec not found; the conformance tests are not registered")
  return()
endif()

string(REPLACE "," ";" _pld_conf_backends "${PLD_CONFORMANCE_BACKENDS}")
if(NOT "sim" IN_LIST _pld_conf_backends)
  list(INSERT _pld_conf_backends 0 sim)  # mpi_golden_* and coll_* rely on it for P = 2, 3, 4
endif()
set(_pld_conf_script "${CMAKE_CURRENT_SOURCE_DIR}/conformance/run_conformance.py")
# The sanitizer tree runs one window transport per cell (--alternate-transports:
# rma and shm take turns along each program's P and down each P's programs), the
# Release tree both for sim and one per cell for the other backends: under ASan
# every run costs 2-4 s, and these runs are most of the suite's time.
set(_pld_conf_alt "")
if(PLD_SANITIZE)
  set(_pld_conf_alt --alternate-transports)
endif()
# native's kernel cache: in the build tree, shared by every test (never $HOME)
set(_pld_conf_env "PLD_EXAMPLES_DIR=${PLD_EXAMPLES_DIR_ABS}" "XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/kernel_cache"
    ${PLD_MPI_TEST_ENV})

foreach(_b IN LISTS _pld_conf_backends)
  get_filename_component(_bname "${_b}" NAME_WE)
  # sim (the reference) runs both transports in the Release tree; other backends
  # alternate them there too (their windows and signals are the same runtime code
  # as sim's; this keeps the suite within its time budget on 2 cores)
  set(_alt "${_pld_conf_alt}")
  if(NOT _bname STREQUAL "sim")
    set(_alt --alternate-transports)
  endif()
  # sim runs P = 2, 3, 4 in the Release tree; the other backends there, and
  # every backend in the sanitizer tree (where a run costs 2-4 s), run P = 2
  # and 4 (suite time: a backend's kernels are the same code at any P, and
  # sim covers P = 3 for every program)
  set(_pld_conf_ps 2 4)
  if(_bname STREQUAL "sim" AND NOT PLD_SANITIZE)
    set(_pld_conf_ps 2 3 4)
  endif()
  foreach(_group tier0 coll corpus tutorial)
    foreach(_p IN LISTS _pld_conf_ps)
      set(_name conformance_${_bname}_${_group}_p${_p})
      # the sanitizer tree checks leaks at P = 2; at P = 4 the same programs
      # run without the exit-time leak check, which was about half of each
      # run's time there (LeakSanitizer symbolizes the stack of the one leak
      # Open MPI's PMIx thread makes, suppressed, in every process)
      set(_env "${_pld_conf_env}")
      if(PLD_SANITIZE AND _p GREATER 2)
        list(APPEND _env "ASAN_OPTIONS=detect_leaks=0")
      endif()
      add_test(NAME ${_name}
               COMMAND "${PLD_PYTHON3_CONF}" "${_pld_conf_script}"
                       --pldrun $<TARGET_FILE:pldrun> --mpiexec "${MPIEXEC_EXECUTABLE}"
                       "--numproc-flag=${PLD_MPI_NP_FLAG}" --backends "${_b}" --ranks ${_p} --groups ${_group} ${_alt}
                       --workdir "${CMAKE_CURRENT_BINARY_DIR}/conformance_runs/${_group}_p${_p}"
                       --results-json "${CMAKE_CURRENT_BINARY_DIR}/conformance_runs/${_bname}_${_group}_p${_p}.json")
      set_tests_properties(${_name} PROPERTIES LABELS "mpi;conformance;backend_${_bname}" TIMEOUT 1200
                                               PROCESSORS ${_p} SKIP_RETURN_CODE 77
                                               ENVIRONMENT "${_env}")
    endforeach()
  endforeach()
endforeach()
