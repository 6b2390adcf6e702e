# tests/inventory.cmake - test_inventory (label `check`, no MPI): tests cannot vanish.
# Included last from tests/CMakeLists.txt.
#
# tests/check_inventory.py counts the tests registered in this build tree per CTest
# label (`ctest -N --show-only=json-v1`) and compares the counts with the committed
# table of this kind of tree, tests/inventory/<asan|release>.txt. A runner that
# lists fewer cases, a registration that is dropped or an include that returns early
# changes a count, and the test fails with the labels that differ and the command
# that updates the table.
#
# What is registered depends on the configuration, which is written below into
# <build>/tests/inventory_config.txt: the tree kind (PLD_SANITIZE), whether configure
# ran as root (the multinode tests), PLD_CONFORMANCE_BACKENDS and whether CANN was
# found (tests/conformance.cmake's PLD_TEST_CANN_FOUND: the runtime library that
# registers the ascend conformance cells). A table records the one it was
# made for (CI's: root, the default backends, no CANN); in a tree configured
# otherwise the check refuses (fails, saying why) instead of comparing counts that
# cannot agree. One table per tree kind rather than one per configuration: the other
# configurations are nobody's reference, and a table nobody regenerates would rot.
#
# After adding or removing tests on purpose:
#   python3 tests/check_inventory.py --build build --update
#   python3 tests/check_inventory.py --build build-asan --update
find_program(PLD_PYTHON3_INV NAMES python3)
if(NOT PLD_PYTHON3_INV)
  message(STATUS "pldrun tests: python3 not found; test_inventory is not registered")
  return()
endif()

if(PLD_SANITIZE)
  set(_pld_inv_kind asan)
else()
  set(_pld_inv_kind release)
endif()
execute_process(COMMAND id -u OUTPUT_VARIABLE _pld_inv_uid OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE _pld_inv_rc)
if(NOT _pld_inv_rc EQUAL 0)
  message(FATAL_ERROR "pldrun tests: `id -u` failed; test_inventory needs to know whether configure runs as root")
endif()
if(_pld_inv_uid STREQUAL "0")
  set(_pld_inv_root yes)
else()
  set(_pld_inv_root no)
endif()
if(PLD_TEST_CANN_FOUND)  # tests/conformance.cmake: CANN's runtime library found, ascend cells registered
  set(_pld_inv_cann yes)
else()
  set(_pld_inv_cann no)
endif()
string(REPLACE ";" "," _pld_inv_backends "${PLD_CONFORMANCE_BACKENDS}")
set(_pld_inv_config "tree=${_pld_inv_kind} root=${_pld_inv_root} backends=${_pld_inv_backends} cann=${_pld_inv_cann}")
file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/inventory_config.txt"
     "kind=${_pld_inv_kind}\n"
     "config=${_pld_inv_config}\n"
     "table=${CMAKE_CURRENT_SOURCE_DIR}/inventory/${_pld_inv_kind}.txt\n"
     "ctest=${CMAKE_CTEST_COMMAND}\n")

add_test(NAME test_inventory
         COMMAND "${PLD_PYTHON3_INV}" "${CMAKE_CURRENT_SOURCE_DIR}/check_inventory.py" --build "${CMAKE_BINARY_DIR}")
set_tests_properties(test_inventory PROPERTIES LABELS check TIMEOUT 60)
