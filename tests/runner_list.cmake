# tests/runner_list.cmake - the test lists that come from the runners themselves,
# included by the tests/*.cmake files that register one CTest test per listed line
# (coll, mpi, races, poison, schedule, native, trace, plugin).
#
# A runner's `--list` that fails would leave its tests unregistered, and a green
# ctest run would hide that they never ran. So every failure is fatal here: the
# configuration stops with the runner's exit status and its stderr (a syntax
# error in the runner, a case whose program file is missing: the runners'
# --list checks every program, tests/mpi/pld_mpitest.py require_programs).
#
#   pld_runner_list(VAR WHAT COMMAND...)
#       runs COMMAND (the runner's --list) at configure time; VAR gets its stdout
#       lines as a CMake list. Fatal when it exits non-zero or lists nothing.
#       WHAT names the runner in the message. The runner's file should be in
#       CMAKE_CONFIGURE_DEPENDS so that an edit lists again.
#   pld_runner_cases_registered(WHAT LISTED REGISTERED)
#       for the cmake files that keep their own list of a runner's cases (a
#       group's timeout or environment): fatal unless the two lists hold the
#       same names, so that a case added to the runner cannot stay unregistered.
include_guard(GLOBAL)

function(pld_runner_list var what)
  execute_process(COMMAND ${ARGN}
                  OUTPUT_VARIABLE _out
                  ERROR_VARIABLE _err
                  RESULT_VARIABLE _rc
                  OUTPUT_STRIP_TRAILING_WHITESPACE
                  ERROR_STRIP_TRAILING_WHITESPACE)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "pldrun tests: ${what} --list failed (exit status ${_rc}); its tests cannot be "
                        "registered. Its stderr:\n${_err}")
  endif()
  if(_out STREQUAL "")
    message(FATAL_ERROR "pldrun tests: ${what} --list listed no test. Its stderr:\n${_err}")
  endif()
  if(NOT _err STREQUAL "")
    message(WARNING "pldrun tests: ${what} --list wrote to stderr:\n${_err}")
  endif()
  string(REPLACE "\n" ";" _out "${_out}")
  set(${var} "${_out}" PARENT_SCOPE)
endfunction()

function(pld_runner_cases_registered what listed registered)
  set(_missing ${listed})
  set(_extra ${registered})
  if(registered)
    list(REMOVE_ITEM _missing ${registered})
  endif()
  if(listed)
    list(REMOVE_ITEM _extra ${listed})
  endif()
  if(_missing OR _extra)
    message(FATAL_ERROR "pldrun tests: the cases of ${what} and the ones registered differ: "
                        "not registered: ${_missing}; registered but not in the runner: ${_extra}")
  endif()
endfunction()
