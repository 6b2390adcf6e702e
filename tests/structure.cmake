# tests/structure.cmake - checks of the code's structure (issue 8), included at
# the end of tests/CMakeLists.txt.
#
#   symbols_prefixed  every exported symbol of every libpld_*.a starts with
#                     pld_ / PLD_ (tests/check_symbols.sh, nm)
add_test(NAME symbols_prefixed
         COMMAND "${CMAKE_CURRENT_SOURCE_DIR}/check_symbols.sh" "${PROJECT_BINARY_DIR}")
set_tests_properties(symbols_prefixed PROPERTIES TIMEOUT 60 LABELS unit)
