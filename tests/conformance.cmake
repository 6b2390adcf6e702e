# tests/conformance.cmake - the conformance table (tests/conformance/run_conformance.py):
# every program with golden results (tests/mpi/run_golden.py's tier-0 programs,
# run_coll.py's programs of tests/mpi/programs, programs/{host,incore,chip} and
# programs/tutorial) on each backend of PLD_CONFORMANCE_BACKENDS, the run_coll.py
# programs over the window transports rma and shm. Two tiers: the default one
# (`ctest -LE long`, what scripts/test.sh runs) and the long one (label `long`,
# `scripts/test.sh --full`); default + long is the full matrix.
#
#   Release tree (PLD_SANITIZE OFF)
#     conformance_sim_<group>_p<P>          P = 2, 3, 4, one transport per cell
#                                           (--alternate-transports over the sweep
#                                           2,3,4: every program meets both over its P)
#     conformance_sim_<group>_p<P>_other    label `long`: the other transport of each
#                                           cell (groups coll, corpus, tutorial; tier0
#                                           has no transport): with the above, both
#                                           transports in every cell
#     conformance_<backend>_<group>_p<P>    the other backends: every program once
#                                           (--one-cell-per-program over the sweep 2,4)
#     conformance_<backend>_<group>_p<P>_matrix, _other  label `long`: as sim's
#                                           (P = 2, 3, 4, both transports in every cell)
#   sanitizer tree (PLD_SANITIZE ON)
#     conformance_sim_<group>_p<P>          every program once (--one-cell-per-program:
#                                           its P rotating over the sweep 2,3,4, its
#                                           transport alternating), with the leak check
#     conformance_sim_<group>_p<P>_matrix   label `long`: P = 2 (leak check) and 4
#                                           (without), one transport per cell over 2,4
#     (another backend there: the same over the sweep 2,4)
#   conformance_plan                        label `conformance`, no MPI: the plans of
#                                           both trees' tests (run_conformance.py
#                                           --check-plan conformance_plan.txt)
#
# Labels `mpi`, `conformance`, `backend_<backend>` (+ `long`); group: tier0, coll,
# corpus, tutorial. One test per backend x group x P, so that CTest spreads them over
# the cores. The runs at P = 2, 3, 4 are left out of mpi_golden_* and coll_*
# (`--list --outside-conformance`): those keep P = 1, the P = 17 guard and the
# negative cases.
#
# sim, the reference, never skips: its tests have no SKIP_RETURN_CODE and an exit 69
# fails the cell. Another backend is probed once before its table (plugin file, a run
# of hello_rank at P = 2); if the probe finds it unavailable (exit 69) its cells are
# skipped and the test exits 77 (SKIP_RETURN_CODE), after a probe that found it
# available an exit 69 or a kernel it cannot compile fails. The `ascend` tests are
# registered only when CANN's runtime is found at configure time ($PLD_ASCEND_LIBDIR
# or $ASCEND_HOME_PATH/lib64 holds libacl_rt.so or libascendcl.so, as the plugin looks
# for it); the plugin itself is tested on a fake runtime (tests/ascend.cmake).
# Each test writes its cells to conformance_runs/<backend>_<group>_p<P>[_other|_matrix].json;
# `run_conformance.py --merge` makes docs/conformance.md of them (tests/README.md).
# Included after coll.cmake.
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

# ascend: only where CANN's runtime library is (src/hw_backend/pld_ascend.c's
# load_runtime: $PLD_ASCEND_LIBDIR, else $ASCEND_HOME_PATH/lib64); elsewhere its
# cells could only skip, so they are not registered at all (PLD_TEST_CANN_FOUND:
# what tests/inventory.cmake records of the configuration)
set(PLD_TEST_CANN_FOUND OFF)
if("ascend" IN_LIST _pld_conf_backends)
  set(_pld_cann_dir "")
  if(NOT "$ENV{PLD_ASCEND_LIBDIR}" STREQUAL "")
    set(_pld_cann_dir "$ENV{PLD_ASCEND_LIBDIR}")
  elseif(NOT "$ENV{ASCEND_HOME_PATH}" STREQUAL "")
    set(_pld_cann_dir "$ENV{ASCEND_HOME_PATH}/lib64")
  endif()
  if(_pld_cann_dir AND (EXISTS "${_pld_cann_dir}/libacl_rt.so" OR EXISTS "${_pld_cann_dir}/libascendcl.so"))
    message(STATUS "pldrun tests: CANN runtime found in ${_pld_cann_dir}; the ascend conformance tests are registered")
    set(PLD_TEST_CANN_FOUND ON)
  else()
    list(REMOVE_ITEM _pld_conf_backends ascend)
    message(STATUS "pldrun tests: no CANN runtime (libacl_rt.so or libascendcl.so in $PLD_ASCEND_LIBDIR or "
                   "$ASCEND_HOME_PATH/lib64); the ascend conformance tests are not registered")
  endif()
endif()

set(_pld_conf_script "${CMAKE_CURRENT_SOURCE_DIR}/conformance/run_conformance.py")
# native's kernel cache: in the build tree, shared by every test (never $HOME)
set(_pld_conf_env "PLD_EXAMPLES_DIR=${PLD_EXAMPLES_DIR_ABS}" "XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/kernel_cache"
    ${PLD_MPI_TEST_ENV})

# _pld_conf_specs(<sanitize> <backend name> <out>): the conformance tests of one backend
# in one kind of tree, each as "name|tier|P|leak|plan options" (tier default or long;
# leak: keep the exit-time leak check under ASan, else ASAN_OPTIONS=detect_leaks=0).
# Why these plans:
# - Release: sim (the reference) covers the sweep P = 2, 3, 4; one transport per cell
#   in the default tier (each program meets both over its P), the other transport in
#   the long tier. The other backends (native) run every program once in the default
#   tier (its P rotating over 2 and 4, its transport alternating) and sim's whole
#   matrix in the long tier (P = 2, 3, 4, both transports in every cell: issue 39).
# - sanitizer tree: every pldrun start costs 2-4 s, so the default tier runs every
#   program once (one code path each) with the leak check; the long tier is the matrix
#   of before (P = 2 with the leak check, P = 4 without: LeakSanitizer symbolizes the
#   stack of the one leak Open MPI's PMIx thread makes, suppressed, in every process,
#   about half of each run's time there).
# Used for the tests of this tree and, for both trees, for the plan check below.
function(_pld_conf_specs sanitize bname out)
  set(_specs "")
  foreach(_g tier0 coll corpus tutorial)
    set(_n conformance_${bname}_${_g}_p)
    set(_o "--backends=${bname} --groups=${_g}")
    if(sanitize OR NOT bname STREQUAL "sim")
      set(_sweep 2 4)
      if(bname STREQUAL "sim")
        set(_sweep 2 3 4)
      endif()
      string(REPLACE ";" "," _sw "${_sweep}")
      foreach(_p IN LISTS _sweep)
        list(APPEND _specs "${_n}${_p}|default|${_p}|leak|${_o} --ranks=${_p} --sweep=${_sw} --one-cell-per-program")
      endforeach()
      if(sanitize)
        list(APPEND _specs "${_n}2_matrix|long|2|leak|${_o} --ranks=2 --sweep=2,4 --alternate-transports"
                           "${_n}4_matrix|long|4|noleak|${_o} --ranks=4 --sweep=2,4 --alternate-transports")
      else()  # another backend in the Release tree: sim's full matrix in the long tier (issue 39)
        foreach(_p 2 3 4)
          list(APPEND _specs "${_n}${_p}_matrix|long|${_p}|leak|${_o} --ranks=${_p} --sweep=2,3,4 --alternate-transports")
          if(NOT _g STREQUAL "tier0")
            list(APPEND _specs "${_n}${_p}_other|long|${_p}|leak|${_o} --ranks=${_p} --sweep=2,3,4 --other-transports")
          endif()
        endforeach()
      endif()
    else()  # sim in the Release tree
      foreach(_p 2 3 4)
        list(APPEND _specs "${_n}${_p}|default|${_p}|leak|${_o} --ranks=${_p} --sweep=2,3,4 --alternate-transports")
        if(NOT _g STREQUAL "tier0")  # tier0's programs take no transport: nothing to complement
          list(APPEND _specs "${_n}${_p}_other|long|${_p}|leak|${_o} --ranks=${_p} --sweep=2,3,4 --other-transports")
        endif()
      endforeach()
    endif()
  endforeach()
  set(${out} "${_specs}" PARENT_SCOPE)
endfunction()

foreach(_b IN LISTS _pld_conf_backends)
  get_filename_component(_bname "${_b}" NAME_WE)
  _pld_conf_specs("${PLD_SANITIZE}" "${_bname}" _specs)
  foreach(_spec IN LISTS _specs)
    string(REPLACE "|" ";" _f "${_spec}")
    list(GET _f 0 _name)
    list(GET _f 1 _tier)
    list(GET _f 2 _p)
    list(GET _f 3 _leak)
    list(GET _f 4 _opts)
    separate_arguments(_opts UNIX_COMMAND "${_opts}")
    list(FILTER _opts EXCLUDE REGEX "^--backends=")  # the backend as given (a plugin path stays a path)
    string(REGEX REPLACE "^conformance_" "" _stem "${_name}")
    set(_env "${_pld_conf_env}")
    if(PLD_SANITIZE AND _leak STREQUAL "noleak")
      list(APPEND _env "ASAN_OPTIONS=detect_leaks=0")
    endif()
    add_test(NAME ${_name}
             COMMAND "${PLD_PYTHON3_CONF}" "${_pld_conf_script}"
                     --pldrun $<TARGET_FILE:pldrun> --mpiexec "${MPIEXEC_EXECUTABLE}"
                     "--numproc-flag=${PLD_MPI_NP_FLAG}" "--backends=${_b}" ${_opts}
                     --workdir "${CMAKE_CURRENT_BINARY_DIR}/conformance_runs/${_stem}"
                     --results-json "${CMAKE_CURRENT_BINARY_DIR}/conformance_runs/${_stem}.json")
    set(_labels mpi conformance backend_${_bname})
    if(_tier STREQUAL "long")
      list(APPEND _labels long)
    endif()
    set_tests_properties(${_name} PROPERTIES LABELS "${_labels}" TIMEOUT 600 PROCESSORS ${_p}
                                             ENVIRONMENT "${_env}")
    if(NOT _bname STREQUAL "sim")
      # only a backend the probe finds unavailable skips; sim never does
      set_tests_properties(${_name} PROPERTIES SKIP_RETURN_CODE 77)
    endif()
  endforeach()
endforeach()

# The plan check: for both kinds of tree, sim and any other backend (native stands for
# them: their plans do not depend on the name), every test's plan options as
# registered above; run_conformance.py --check-plan checks that every program runs,
# every run_coll.py program meets both transports (in the default tier too, except
# where it runs once), every (P, transport) pair is used, and default + long is the
# full matrix. Cheap: no MPI, no pldrun run.
set(_pld_conf_plan "# written by tests/conformance.cmake: the plans of the conformance tests of both trees\n")
foreach(_san OFF ON)
  set(_tree release)
  if(_san)
    set(_tree sanitize)
  endif()
  foreach(_bname sim native)
    set(_matrix one)
    if(NOT _san)
      set(_matrix both)  # the Release tree: every transport in every cell, P = 2, 3, 4
    endif()
    string(APPEND _pld_conf_plan "config ${_tree}/${_bname} matrix=${_matrix}\n")
    _pld_conf_specs(${_san} ${_bname} _specs)
    foreach(_spec IN LISTS _specs)
      string(REPLACE "|" ";" _f "${_spec}")
      list(GET _f 0 _name)
      list(GET _f 1 _tier)
      list(GET _f 4 _opts)
      string(APPEND _pld_conf_plan "test ${_tree}/${_bname} ${_tier} ${_name} ${_opts}\n")
    endforeach()
  endforeach()
endforeach()
file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/conformance_plan.txt" "${_pld_conf_plan}")
add_test(NAME conformance_plan
         COMMAND "${PLD_PYTHON3_CONF}" "${_pld_conf_script}" --pldrun $<TARGET_FILE:pldrun>
                 --check-plan "${CMAKE_CURRENT_BINARY_DIR}/conformance_plan.txt")
set_tests_properties(conformance_plan PROPERTIES LABELS "conformance" TIMEOUT 60)
