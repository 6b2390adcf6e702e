# tests/structure.cmake - checks of the code's structure (issue 8), included at
# the end of tests/CMakeLists.txt.
#
#   symbols_prefixed  every exported symbol of every pld_* static library of
#                     this build (the _testing mirrors included) starts with
#                     pld_ / PLD_ (tests/check_symbols.sh, nm). The libraries
#                     are the CMake targets themselves, so a stale archive left
#                     in the build tree by an older layout is not read.
set(_pld_static_libs "")
foreach(_dir "${PROJECT_SOURCE_DIR}" "${CMAKE_CURRENT_SOURCE_DIR}")
  get_property(_targets DIRECTORY "${_dir}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(_t IN LISTS _targets)
    get_target_property(_type ${_t} TYPE)
    if(_type STREQUAL "STATIC_LIBRARY" AND _t MATCHES "^pld_")
      list(APPEND _pld_static_libs "$<TARGET_FILE:${_t}>")
    endif()
  endforeach()
endforeach()
add_test(NAME symbols_prefixed
         COMMAND "${CMAKE_CURRENT_SOURCE_DIR}/check_symbols.sh" ${_pld_static_libs})
set_tests_properties(symbols_prefixed PROPERTIES TIMEOUT 60 LABELS unit)

#   mpi_calls_checked every MPI call in src/ has its result checked: inside
#                     PLD_MPI_CHECK / PLD_MPI_NOTE, assigned to an rc, compared
#                     with MPI_SUCCESS, or a justified exception listed in
#                     tests/check_mpi_calls.py; mpi_calls_checked_tool does
#                     the same for tools/ (pldrun's main.c)
find_program(PLD_PYTHON3_STRUCT NAMES python3)
if(PLD_PYTHON3_STRUCT)
  add_test(NAME mpi_calls_checked
           COMMAND "${PLD_PYTHON3_STRUCT}" "${CMAKE_CURRENT_SOURCE_DIR}/check_mpi_calls.py" "${PROJECT_SOURCE_DIR}/src")
  set_tests_properties(mpi_calls_checked PROPERTIES TIMEOUT 60 LABELS "unit;check")
  add_test(NAME mpi_calls_checked_tool
           COMMAND "${PLD_PYTHON3_STRUCT}" "${CMAKE_CURRENT_SOURCE_DIR}/check_mpi_calls.py" "${PROJECT_SOURCE_DIR}/tools")
  set_tests_properties(mpi_calls_checked_tool PROPERTIES TIMEOUT 60 LABELS "unit;check")
endif()

#   sim_includes      nothing in src/sim_window (nor src/sim_npu) includes an
#                     interpreter or parser header (tests/check_includes.cmake)
add_test(NAME sim_includes
         COMMAND ${CMAKE_COMMAND} "-DROOT=${PROJECT_SOURCE_DIR}" "-DDIRS=src/sim_window|src/sim_npu"
                 -P "${CMAKE_CURRENT_SOURCE_DIR}/check_includes.cmake")
set_tests_properties(sim_includes PROPERTIES TIMEOUT 60 LABELS "unit;check")
