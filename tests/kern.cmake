# tests/kern.cmake - the numeric-kernel suite (tests/unit/test_kern.c), included
# at the end of tests/CMakeLists.txt. It compiles src/interp/pld_kern.c itself
# (so it does not depend on the rest of pld_interp building) and links only
# pld_base_testing and libm; the parser headers are needed for pld_types.h.
add_executable(test_kern unit/test_kern.c ${PROJECT_SOURCE_DIR}/src/interp/pld_kern.c)
target_include_directories(test_kern PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}/unit"
                           "${PROJECT_SOURCE_DIR}/src/interp" "${PROJECT_SOURCE_DIR}/src/parser"
                           ${CUNIT_INCLUDE_DIRS})
target_compile_definitions(test_kern PRIVATE PLD_TESTING=1)
target_link_libraries(test_kern PRIVATE pld_base_testing ${CUNIT_LINK_LIBRARIES} m)
add_test(NAME kern COMMAND test_kern)
set_tests_properties(kern PROPERTIES TIMEOUT 300 LABELS unit)
