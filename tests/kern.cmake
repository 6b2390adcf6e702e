# tests/kern.cmake - the numeric-kernel suite (tests/unit/test_kern*.c: one
# executable, split by subject; helpers in test_kern_util.c), included
# at the end of tests/CMakeLists.txt. It compiles the sources of pld_kern
# itself (PLD_KERN_SOURCES) and links only pld_base_testing and libm.
add_executable(test_kern unit/test_kern.c unit/test_kern_util.c unit/test_kern_binary.c unit/test_kern_reduce.c
                         unit/test_kern_cast.c unit/test_kern_layout.c unit/test_kern_mm.c ${PLD_KERN_SOURCES})
target_include_directories(test_kern PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}/unit"
                           "${PROJECT_SOURCE_DIR}/src/sim_npu" "${PROJECT_SOURCE_DIR}/src/parser"
                           ${CUNIT_INCLUDE_DIRS}) # src/parser: pld_test.h
target_compile_definitions(test_kern PRIVATE PLD_TESTING=1)
target_link_libraries(test_kern PRIVATE pld_base_testing ${CUNIT_LINK_LIBRARIES} m)
add_test(NAME kern COMMAND test_kern)
set_tests_properties(kern PROPERTIES TIMEOUT 300 LABELS unit)
