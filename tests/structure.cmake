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
