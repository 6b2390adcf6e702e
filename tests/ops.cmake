# tests/ops.cmake - golden tests of the reduction and broadcast ops (issue 11,
# ops_reduce) and of the element-wise ops (ops_elem, tests/ops/run_elem.py):
# tests/ops/run_ops.py generates programs with one kernel per case (op x form x
# dtype x valid shape), runs them through pldrun at one rank without mpirun
# (Open MPI's singleton mode) and compares with pure-Python goldens. Included
# by tests/CMakeLists.txt after PLD_MPI_TEST_ENV is set.
find_program(PLD_PYTHON3_OPS NAMES python3)
if(PLD_PYTHON3_OPS)
  add_test(NAME ops_reduce
           COMMAND "${PLD_PYTHON3_OPS}" "${CMAKE_CURRENT_SOURCE_DIR}/ops/run_ops.py"
                   --pldrun $<TARGET_FILE:pldrun> --workdir "${CMAKE_CURRENT_BINARY_DIR}/ops_reduce")
  set_tests_properties(ops_reduce PROPERTIES TIMEOUT 120 LABELS "unit;ops"
                       ENVIRONMENT "${PLD_MPI_TEST_ENV}")
  # the memory/layout/matmul ops: fillpad family, set_validshape, matmul_acc (init_cond), matmul_bias
  add_test(NAME ops_mem
           COMMAND "${PLD_PYTHON3_OPS}" "${CMAKE_CURRENT_SOURCE_DIR}/ops/run_ops_mem.py"
                   --pldrun $<TARGET_FILE:pldrun> --workdir "${CMAKE_CURRENT_BINARY_DIR}/ops_mem")
  set_tests_properties(ops_mem PROPERTIES TIMEOUT 120 LABELS "unit;ops"
                       ENVIRONMENT "${PLD_MPI_TEST_ENV}")
  # the element-wise ops of issue 11 (tests/ops/run_elem.py, which uses run_ops.py's helpers)
  add_test(NAME ops_elem
           COMMAND "${PLD_PYTHON3_OPS}" "${CMAKE_CURRENT_SOURCE_DIR}/ops/run_elem.py"
                   --pldrun $<TARGET_FILE:pldrun> --workdir "${CMAKE_CURRENT_BINARY_DIR}/ops_elem")
  set_tests_properties(ops_elem PROPERTIES TIMEOUT 180 LABELS "unit;ops"
                       ENVIRONMENT "${PLD_MPI_TEST_ENV}")
  # layout, gather/scatter, sort, gemv/batch_matmul, gather_row (and out-of-range indices)
  add_test(NAME ops_layout
           COMMAND "${PLD_PYTHON3_OPS}" "${CMAKE_CURRENT_SOURCE_DIR}/ops/run_ops_layout.py"
                   --pldrun $<TARGET_FILE:pldrun> --workdir "${CMAKE_CURRENT_BINARY_DIR}/ops_layout")
  set_tests_properties(ops_layout PROPERTIES TIMEOUT 120 LABELS "unit;ops"
                       ENVIRONMENT "${PLD_MPI_TEST_ENV}")
  # mixed AIC+AIV kernels: the cross-core pipe, events, syncall, lane ids (tests/cluster/run_cluster.py)
  add_test(NAME cluster
           COMMAND "${PLD_PYTHON3_OPS}" "${CMAKE_CURRENT_SOURCE_DIR}/cluster/run_cluster.py"
                   --pldrun $<TARGET_FILE:pldrun> --workdir "${CMAKE_CURRENT_BINARY_DIR}/cluster_work")
  set_tests_properties(cluster PROPERTIES TIMEOUT 120 LABELS "unit;ops"
                       ENVIRONMENT "${PLD_MPI_TEST_ENV}")
  # random (pto-isa TRANDOM Philox4x32 goldens) and the prefetch ops (tests/ops/run_ops_misc.py)
  add_test(NAME ops_misc
           COMMAND "${PLD_PYTHON3_OPS}" "${CMAKE_CURRENT_SOURCE_DIR}/ops/run_ops_misc.py"
                   --pldrun $<TARGET_FILE:pldrun> --workdir "${CMAKE_CURRENT_BINARY_DIR}/ops_misc")
  set_tests_properties(ops_misc PROPERTIES TIMEOUT 120 LABELS "unit;ops"
                       ENVIRONMENT "${PLD_MPI_TEST_ENV}")
  # the MX block-scaled matmul: FP8E4M3FN data, FP8E8M0 scales in PyPTO's packed MX_A_ZZ / MX_B_NN
  # layouts, pure-Python decoders and goldens (tests/ops/run_ops_mx.py)
  add_test(NAME ops_mx
           COMMAND "${PLD_PYTHON3_OPS}" "${CMAKE_CURRENT_SOURCE_DIR}/ops/run_ops_mx.py"
                   --pldrun $<TARGET_FILE:pldrun> --workdir "${CMAKE_CURRENT_BINARY_DIR}/ops_mx")
  set_tests_properties(ops_mx PROPERTIES TIMEOUT 120 LABELS "unit;ops"
                       ENVIRONMENT "${PLD_MPI_TEST_ENV}")
else()
  message(STATUS "pldrun tests: python3 not found; the ops_* tests are not registered")
endif()
