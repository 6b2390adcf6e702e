# tests/ascend.cmake - the fake ACL runtime the `ascend` plugin is tested on
# (tests/ascend/, label `ascend`). Included at the end of tests/CMakeLists.txt.
#
#   acl_rt               tests/ascend/acl_fake*.c: the fake runtime, built as
#                        tests/ascend/cann/lib64/libacl_rt.so, so a run with
#                        ASCEND_HOME_PATH=<build>/tests/ascend/cann finds it
#   ascend_kernel_<k>    tests/ascend/kernels/<k>.c: a "kernel binary" for the
#                        fake (a host shared object exporting the entry shim),
#                        built as tests/ascend/kernels/<k>.elf
#   ascend_fake          tests/ascend/test_acl_fake.c: the fake on its own (no
#                        plugin, no MPI; forked processes for the IPC part)
#   ascend_programs_check  the programs of tests/ascend/ pass `pldrun --check`
#   ascend_<case>        tests/ascend/run_ascend.py: pldrun --backend ascend on
#                        the fake (unavailable, run_P2, run_P4, abi, errors,
#                        refusals, conformance: the conformance table's
#                        programs at P = 1, 2, 4)
find_package(Threads REQUIRED)
set(PLD_ASCEND_CANN_DIR "${CMAKE_BINARY_DIR}/tests/ascend/cann")
set(PLD_ASCEND_KERNEL_DIR "${CMAKE_BINARY_DIR}/tests/ascend/kernels")

add_library(acl_rt SHARED "${CMAKE_CURRENT_SOURCE_DIR}/ascend/acl_fake.c" "${CMAKE_CURRENT_SOURCE_DIR}/ascend/acl_fake_mem.c"
                          "${CMAKE_CURRENT_SOURCE_DIR}/ascend/acl_fake_kernel.c")
set_target_properties(acl_rt PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${PLD_ASCEND_CANN_DIR}/lib64"
                                        C_VISIBILITY_PRESET hidden)
target_link_libraries(acl_rt PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
find_library(PLD_LIBRT rt)
if(PLD_LIBRT)
  target_link_libraries(acl_rt PRIVATE ${PLD_LIBRT})
endif()

# A runtime without aclrtMapMem (the plugin must name it): tests/ascend/partial/lib64/libacl_rt.so
add_library(acl_rt_partial SHARED "${CMAKE_CURRENT_SOURCE_DIR}/ascend/acl_partial.c")
set_target_properties(acl_rt_partial PROPERTIES OUTPUT_NAME acl_rt C_VISIBILITY_PRESET hidden
                      LIBRARY_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/tests/ascend/partial/lib64")

# The kernels: <name>.elf for kernel function <name> (a scope: its name_hint).
set(PLD_ASCEND_KERNELS stamp ring spmd_rows probe hang fault)
set(PLD_ASCEND_KERNEL_TARGETS "")
foreach(_k IN LISTS PLD_ASCEND_KERNELS)
  add_library(ascend_kernel_${_k} MODULE "${CMAKE_CURRENT_SOURCE_DIR}/ascend/kernels/${_k}.c")
  target_include_directories(ascend_kernel_${_k} PRIVATE "${PROJECT_SOURCE_DIR}/src/hw_backend"
                                                         "${CMAKE_CURRENT_SOURCE_DIR}/ascend/kernels")
  set_target_properties(ascend_kernel_${_k} PROPERTIES OUTPUT_NAME ${_k} PREFIX "" SUFFIX ".elf"
                        LIBRARY_OUTPUT_DIRECTORY "${PLD_ASCEND_KERNEL_DIR}" C_VISIBILITY_PRESET hidden)
  # Device code is never built with AddressSanitizer (a real kernel runs on the
  # NPU): the fake device ends a faulting or killed kernel's thread inside the
  # kernel (pthread_exit, asynchronous cancellation), which leaves an
  # instrumented kernel frame's redzones poisoned on that thread's stack, and
  # GCC 12's libasan then reports its own sigaltstack call in the unwinding as a
  # stack-buffer-underflow (ascend_errors at -O1). UBSan stays on.
  if(PLD_SANITIZE)
    target_compile_options(ascend_kernel_${_k} PRIVATE -fno-sanitize=address)
  endif()
  list(APPEND PLD_ASCEND_KERNEL_TARGETS ascend_kernel_${_k})
endforeach()

add_executable(test_acl_fake "${CMAKE_CURRENT_SOURCE_DIR}/ascend/test_acl_fake.c")
target_link_libraries(test_acl_fake PRIVATE acl_rt)
target_include_directories(test_acl_fake PRIVATE "${PROJECT_SOURCE_DIR}/src/hw_backend")
add_dependencies(test_acl_fake ${PLD_ASCEND_KERNEL_TARGETS})
add_test(NAME ascend_fake COMMAND test_acl_fake "${PLD_ASCEND_KERNEL_DIR}")
set_tests_properties(ascend_fake PROPERTIES LABELS ascend TIMEOUT 120)

# ascend_programs_check: the programs of tests/ascend/ pass `pldrun --check`
# for each P of their `# ranks:` (tests/run_programs.sh).
find_program(PLD_BASH_ASCEND bash)
if(PLD_BASH_ASCEND)
  add_test(NAME ascend_programs_check
           COMMAND ${PLD_BASH_ASCEND} ${CMAKE_CURRENT_SOURCE_DIR}/run_programs.sh $<TARGET_FILE:pldrun>
                   ${CMAKE_CURRENT_SOURCE_DIR}/ascend)
  set_tests_properties(ascend_programs_check PROPERTIES TIMEOUT 120 LABELS "ascend;check")
endif()

# pldrun --backend ascend on the fake runtime (tests/ascend/run_ascend.py)
find_program(PLD_PYTHON3_ASCEND NAMES python3)
if(PLD_PYTHON3_ASCEND AND MPIEXEC_EXECUTABLE)
  foreach(_case unavailable run_P2 run_P4 abi errors refusals conformance)
    add_test(NAME ascend_${_case}
             COMMAND "${PLD_PYTHON3_ASCEND}" "${CMAKE_CURRENT_SOURCE_DIR}/ascend/run_ascend.py"
                     --pldrun $<TARGET_FILE:pldrun> --mpiexec "${MPIEXEC_EXECUTABLE}"
                     "--numproc-flag=${PLD_MPI_NP_FLAG}" --case ${_case}
                     --cann "${PLD_ASCEND_CANN_DIR}" --partial "${CMAKE_BINARY_DIR}/tests/ascend/partial"
                     --kernels "${PLD_ASCEND_KERNEL_DIR}" --workdir "${CMAKE_CURRENT_BINARY_DIR}/ascend_${_case}")
    set_tests_properties(ascend_${_case} PROPERTIES LABELS "ascend;mpi" TIMEOUT 240 PROCESSORS 2
                                                    ENVIRONMENT "${PLD_MPI_TEST_ENV}")
    if(_case STREQUAL "conformance")
      set_tests_properties(ascend_${_case} PROPERTIES LABELS "ascend;mpi;conformance" TIMEOUT 900)
    endif()
  endforeach()
endif()
