# tests/npy.cmake - the .npy I/O suite (tests/unit/test_npy.c) and its
# pure-Python cross-check (tests/data/npy_check.py). Included at the end of
# tests/CMakeLists.txt.
#
# pld_npy_testing compiles src/base/pld_npy.c against pld_check_testing
# (hence pld_base_testing and its pld_mem_fail_after hook) instead of linking
# pld_npy, which would bring the non-testing pld_base into the executable.

add_library(pld_npy_testing STATIC "${PROJECT_SOURCE_DIR}/src/base/pld_npy.c")
target_include_directories(pld_npy_testing PUBLIC "${PROJECT_SOURCE_DIR}/src/base")
target_link_libraries(pld_npy_testing PUBLIC pld_check_testing m)

pld_add_suite(npy)
target_link_libraries(test_npy PRIVATE pld_npy_testing)

# npy_python_check: files written by pldrun must load in an independent
# pure-Python reader (and Python-written files in pldrun); needs python3 only.
find_program(PLD_PYTHON3 NAMES python3)
if(PLD_PYTHON3)
  add_test(NAME npy_python_check
           COMMAND "${PLD_PYTHON3}" "${CMAKE_CURRENT_SOURCE_DIR}/data/npy_check.py"
                   $<TARGET_FILE:test_npy> "${CMAKE_CURRENT_BINARY_DIR}/npy_check")
  set_tests_properties(npy_python_check PROPERTIES TIMEOUT 300 LABELS unit)
else()
  message(STATUS "pldrun tests: python3 not found; npy_python_check is not registered")
endif()
