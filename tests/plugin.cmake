# tests/plugin.cmake - the backend plugin boundary (tests/plugin/), labels
# `plugin` and `mpi`. Included at the end of tests/CMakeLists.txt.
#
#   pld_test_plugin      a backend plugin built against src/hw_backend/pld_backend.h
#                        alone: records every call, checks the ABI bytes of every
#                        launch, runs a few kernels as host C (args[] and typed forms)
#   plugin_<case>        tests/plugin/run_plugin.py: pldrun --backend the plugin at
#                        P = 1..3, results against goldens computed in Python, the
#                        plugin's call log, every loader refusal (exit 69) and the
#                        plugin's failures (open, load, launch) as located errors
#                        (the cases come from `run_plugin.py --list`; a failing --list
#                        stops the configuration: tests/runner_list.cmake)

add_library(pld_test_plugin MODULE "${CMAKE_CURRENT_SOURCE_DIR}/plugin/pld_test_plugin.c")
target_include_directories(pld_test_plugin PRIVATE "${PROJECT_SOURCE_DIR}/src/hw_backend")
set_target_properties(pld_test_plugin PROPERTIES PREFIX "" C_VISIBILITY_PRESET hidden)
target_compile_definitions(pld_test_plugin PRIVATE "PLD_BE_EXPORT=__attribute__((visibility(\"default\")))")

find_program(PLD_PYTHON3_PLUGIN NAMES python3)
if(NOT PLD_PYTHON3_PLUGIN OR NOT MPIEXEC_EXECUTABLE)
  message(STATUS "pldrun tests: python3 or mpiexec not found; the plugin tests are not registered")
  return()
endif()
include(${CMAKE_CURRENT_LIST_DIR}/runner_list.cmake)
pld_runner_list(_pld_plugin_cases tests/plugin/run_plugin.py
                "${PLD_PYTHON3_PLUGIN}" "${CMAKE_CURRENT_SOURCE_DIR}/plugin/run_plugin.py" --list)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/plugin/run_plugin.py")
foreach(_case IN LISTS _pld_plugin_cases)
  add_test(NAME plugin_${_case}
           COMMAND "${PLD_PYTHON3_PLUGIN}" "${CMAKE_CURRENT_SOURCE_DIR}/plugin/run_plugin.py"
                   --pldrun $<TARGET_FILE:pldrun> --plugin $<TARGET_FILE:pld_test_plugin>
                   --mpiexec "${MPIEXEC_EXECUTABLE}" "--numproc-flag=${PLD_MPI_NP_FLAG}" --case ${_case}
                   --workdir "${CMAKE_CURRENT_BINARY_DIR}/plugin_${_case}")
  set_tests_properties(plugin_${_case} PROPERTIES LABELS "plugin;mpi" TIMEOUT 120 PROCESSORS 2
                                                  ENVIRONMENT "${PLD_MPI_TEST_ENV}")
endforeach()
