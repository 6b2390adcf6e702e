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

#   file_sizes        no C source or header, Python or CMake file in src/,
#                     tools/ or tests/ is over 1,500 lines
#                     (tests/check_file_sizes.py; issue 38): split by subject
if(PLD_PYTHON3_STRUCT)
  add_test(NAME file_sizes
           COMMAND "${PLD_PYTHON3_STRUCT}" "${CMAKE_CURRENT_SOURCE_DIR}/check_file_sizes.py" --root "${PROJECT_SOURCE_DIR}")
  set_tests_properties(file_sizes PROPERTIES TIMEOUT 60 LABELS check)
endif()

#   rooms             the rooms of src/ (src/README.md) depend only downwards:
#                     tests/check_rooms.py checks every #include "..." of
#                     src/ against the room table, and every symbol the
#                     project's static libraries leave undefined against the
#                     room that defines it (nothing in sim_npu/, sim_window/ or
#                     debug/ uses the interpreter or the parser; no MPI in
#                     sim_npu/ or debug/)
if(PLD_PYTHON3_STRUCT)
  add_test(NAME rooms
           COMMAND "${PLD_PYTHON3_STRUCT}" "${CMAKE_CURRENT_SOURCE_DIR}/check_rooms.py"
                   --src "${PROJECT_SOURCE_DIR}/src" --nm "${CMAKE_NM}" ${_pld_static_libs})
  set_tests_properties(rooms PROPERTIES TIMEOUT 60 LABELS "unit;check")
endif()
