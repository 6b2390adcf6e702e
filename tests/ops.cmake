# tests/ops.cmake - golden tests of the reduction and broadcast ops (issue 11,
# ops_reduce) and of the element-wise ops (ops_elem, tests/ops/run_elem.py):
# tests/ops/run_ops.py generates programs with one kernel per case (op x form x
# dtype x valid shape), runs them through pldrun at one rank without mpirun
# (Open MPI's singleton mode) and compares with pure-Python goldens. Included
# by tests/CMakeLists.txt after PLD_MPI_TEST_ENV is set.
find_program(PLD_PYTHON3_OPS NAMES python3)
# pld_ops_test(NAME SCRIPT WORKDIR TIMEOUT): SCRIPT (under tests/) run with --pldrun and --workdir
function(pld_ops_test name script workdir timeout)
  add_test(NAME ${name}
           COMMAND "${PLD_PYTHON3_OPS}" "${CMAKE_CURRENT_SOURCE_DIR}/${script}"
                   --pldrun $<TARGET_FILE:pldrun> --workdir "${CMAKE_CURRENT_BINARY_DIR}/${workdir}")
  set_tests_properties(${name} PROPERTIES TIMEOUT ${timeout} LABELS "unit;ops"
                       ENVIRONMENT "${PLD_MPI_TEST_ENV}")
endfunction()
if(PLD_PYTHON3_OPS)
  pld_ops_test(ops_reduce ops/run_ops.py ops_reduce 120)
  # the memory/layout/matmul ops: fillpad family, set_validshape, matmul_acc (init_cond), matmul_bias
  pld_ops_test(ops_mem ops/run_ops_mem.py ops_mem 120)
  # the element-wise ops of issue 11 (tests/ops/run_elem.py, which uses run_ops.py's helpers)
  pld_ops_test(ops_elem ops/run_elem.py ops_elem 180)
  # layout, gather/scatter, sort, gemv/batch_matmul, gather_row (and out-of-range indices)
  pld_ops_test(ops_layout ops/run_ops_layout.py ops_layout 120)
  # mixed AIC+AIV kernels: the cross-core pipe, events, syncall, lane ids (tests/cluster/run_cluster.py)
  pld_ops_test(cluster cluster/run_cluster.py cluster_work 120)
  # random (pto-isa TRANDOM Philox4x32 goldens) and the prefetch ops (tests/ops/run_ops_misc.py)
  pld_ops_test(ops_misc ops/run_ops_misc.py ops_misc 120)
  # the MX block-scaled matmul: FP8E4M3FN data, FP8E8M0 scales in PyPTO's packed MX_A_ZZ / MX_B_NN
  # layouts, pure-Python decoders and goldens (tests/ops/run_ops_mx.py)
  pld_ops_test(ops_mx ops/run_ops_mx.py ops_mx 120)
  # the GM gather/scatter family (tests/ops/run_ops_gather.py)
  pld_ops_test(ops_gather ops/run_ops_gather.py ops_gather 120)
  # tile read/write/slice/reshape/assemble, tensor full/reshape, arrays, get_block_num in pl.spmd, the TaskId
  # ops with pl.submit deps=, set_ffts/cacheinvalid (tests/ops/run_ops_basic.py)
  pld_ops_test(ops_basic ops/run_ops_basic.py ops_basic 120)
else()
  message(STATUS "pldrun tests: python3 not found; the ops_* tests are not registered")
endif()
