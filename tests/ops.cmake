# tests/ops.cmake - golden tests of the reduction and broadcast ops (issue 11,
# ops_reduce) and of the element-wise ops (ops_elem, tests/ops/run_elem.py):
# tests/ops/run_ops.py generates programs with one kernel per case (op x form x
# dtype x valid shape), runs them through pldrun at one rank without mpirun
# (Open MPI's singleton mode) and compares with pure-Python goldens. Included
# by tests/CMakeLists.txt after PLD_MPI_TEST_ENV is set.
#
# The sanitizer tree (PLD_SANITIZE=ON, build-asan/) runs a deterministic subset of
# the table-driven runners (`--sample N`, run_ops.py's sample(): the first case
# of every op and every N-th case, N = PLD_OPS_SAMPLE); the Release tree runs
# every case. The runners marked SAMPLE below take the flag; the others (fixed
# programs, a few cases each) run in full in both trees.
find_program(PLD_PYTHON3_OPS NAMES python3)
set(PLD_OPS_SAMPLE 4 CACHE STRING "--sample N of the ops_* runners in a PLD_SANITIZE build (1: every case)")
# pld_ops_test(NAME SCRIPT WORKDIR TIMEOUT [SAMPLE]): SCRIPT (under tests/) run with --pldrun and
# --workdir; SAMPLE: it takes --sample, which a PLD_SANITIZE build passes
function(pld_ops_test name script workdir timeout)
  set(_sample "")
  if(PLD_SANITIZE AND "SAMPLE" IN_LIST ARGN AND PLD_OPS_SAMPLE GREATER 1)
    set(_sample --sample ${PLD_OPS_SAMPLE})
  endif()
  add_test(NAME ${name}
           COMMAND "${PLD_PYTHON3_OPS}" "${CMAKE_CURRENT_SOURCE_DIR}/${script}"
                   --pldrun $<TARGET_FILE:pldrun> --workdir "${CMAKE_CURRENT_BINARY_DIR}/${workdir}" ${_sample})
  set_tests_properties(${name} PROPERTIES TIMEOUT ${timeout} LABELS "unit;ops"
                       ENVIRONMENT "${PLD_MPI_TEST_ENV}")
endfunction()
# pld_numpy_ops_pair(NAME): tests/ops/run_NAME.py (numpy) as ops_NAME, and in the Release tree as
# ops_native_NAME on --backend native (PLDRUN_BACKEND; the ops_native_* tests are Release-only)
function(pld_numpy_ops_pair name)
  add_test(NAME ops_${name}
           COMMAND "${PLD_PYTHON3_NUMPY}" "${CMAKE_CURRENT_SOURCE_DIR}/ops/run_${name}.py"
                   --pldrun $<TARGET_FILE:pldrun> --workdir "${CMAKE_CURRENT_BINARY_DIR}/ops_${name}")
  set_tests_properties(ops_${name} PROPERTIES TIMEOUT 60 LABELS "unit;ops" ENVIRONMENT "${PLD_MPI_TEST_ENV}")
  if(NOT PLD_SANITIZE)
    add_test(NAME ops_native_${name}
             COMMAND "${PLD_PYTHON3_NUMPY}" "${CMAKE_CURRENT_SOURCE_DIR}/ops/run_${name}.py"
                     --pldrun $<TARGET_FILE:pldrun> --workdir "${CMAKE_CURRENT_BINARY_DIR}/ops_native_${name}")
    set_tests_properties(ops_native_${name} PROPERTIES TIMEOUT 300 LABELS "unit;ops;native"
                         ENVIRONMENT "PLDRUN_BACKEND=native;XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/kernel_cache;${PLD_MPI_TEST_ENV}")
  endif()
endfunction()
# ops_autol0 (issue 42): an oversized plain matmul that PyPTO's AutoTileMatmulL0 computes one L0
# sub-tile at a time: the chained (a @ b) @ e of PyPTO's test_chained_matmul_mat_scratch (256x256x256
# BF16) and a [256, 256] FP32 result stored once run and match numpy goldens; an intermediate whose
# BF16 Mat scratch does not fit L1, and a cast that cannot fold into the sub-tiles' writeback, are
# still rejected with the reason; issue 41: the same for pl.tile.matmul_bias in the printed form of
# PyPTO's test_auto_tile_matmul.py (a Mat bias stored, a Bias-resident bias, a Mat scratch; an N off
# the INT8 box stays rejected) (tests/ops/run_autol0.py; numpy: Debian's python3 is preferred, as
# in tests/python.cmake; without numpy the test fails and says what to install)
find_program(PLD_PYTHON3_NUMPY NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT PLD_PYTHON3_NUMPY)
  find_program(PLD_PYTHON3_NUMPY NAMES python3)
endif()
if(PLD_PYTHON3_NUMPY)
  add_test(NAME ops_autol0
           COMMAND "${PLD_PYTHON3_NUMPY}" "${CMAKE_CURRENT_SOURCE_DIR}/ops/run_autol0.py"
                   --pldrun $<TARGET_FILE:pldrun> --workdir "${CMAKE_CURRENT_BINARY_DIR}/ops_autol0")
  set_tests_properties(ops_autol0 PROPERTIES TIMEOUT 60 LABELS "unit;ops" ENVIRONMENT "${PLD_MPI_TEST_ENV}")
  # ops_narrow (issue 41): a matmul's FP32 accumulator stored into BF16 / FP16, plainly and with
  # atomic=Add (the cube's FIXPIPE narrowing, pld_k_store_narrow): the printed form of PyPTO's
  # test_atomic_add.py split-K cases and an Acc tile's tile.store, bit-exact against a numpy model of
  # docs/ops-numerics.md; an FP32 vector-unit result is still refused (tests/ops/run_narrow.py).
  # ops_native_narrow: the same on --backend native (the generated code stores through the same
  # library call), Release tree only as the other ops_native_* tests.
  pld_numpy_ops_pair(narrow)
  # ops_pypto_rt (issue 41): wrong results and a refusal PyPTO's tests/st/runtime found, in the printed
  # forms the tests ran: pl.tensor.expand_clone writes its target (an Out parameter), an element-wise
  # tensor result keeps its operands' valid shape (PyPTO's type deduction) so assembling it writes and
  # fits its valid region, lrelu is pto-isa's TLRELU (x > 0 ? x : x * slope); numpy goldens
  # (tests/ops/run_pypto_rt.py). ops_native_pypto_rt: the same on --backend native, Release tree only.
  pld_numpy_ops_pair(pypto_rt)
  # ops_ragged (issue 41): a pl.tensor.slice window overhanging its tensor with a valid_shape of the
  # rows that exist (PyPTO's kClampedWindow: only offset + valid extent must fit), one program at four
  # dynamic batch sizes in the printed form of PyPTO's test_jit.py; a window starting past the end and
  # one reading past it are still errors; pl.tensor.assemble writes its source's valid region only
  # (tests/ops/run_ragged.py). ops_native_ragged: on native (pc_tensor_slice, rt->assemble), Release
  # tree only.
  pld_numpy_ops_pair(ragged)
  # ops_dispatch (issue 41): what PyPTO's tests/st/runtime found pldrun running wrongly around a dispatch,
  # in the printed forms they ran: predicate= of pl.spmd_submit / pl.submit / pl.spmd (with and for forms)
  # skips the task when false (its TaskId still settles the consumer's deps), an unsigned predicate operand
  # is a check error; --out of a plain pl.Tensor entry parameter the program assembles into writes it; a
  # call of an external_source= kernel is refused at check (tests/ops/run_dispatch.py). ops_native_dispatch:
  # on native, Release tree only.
  pld_numpy_ops_pair(dispatch)
endif()
if(PLD_PYTHON3_OPS)
  pld_ops_test(ops_reduce ops/run_ops.py ops_reduce 120 SAMPLE)
  # the memory/layout/matmul ops: fillpad family, set_validshape, matmul_acc (init_cond), matmul_bias
  pld_ops_test(ops_mem ops/run_ops_mem.py ops_mem 120 SAMPLE)
  # the element-wise ops of issue 11 (tests/ops/run_elem.py, which uses run_ops.py's helpers)
  pld_ops_test(ops_elem ops/run_elem.py ops_elem 180 SAMPLE)
  # layout, gather/scatter, sort, gemv/batch_matmul, gather_row (and out-of-range indices)
  pld_ops_test(ops_layout ops/run_ops_layout.py ops_layout 120 SAMPLE)
  # mixed AIC+AIV kernels: the cross-core pipe, events, syncall, lane ids (tests/cluster/run_cluster.py)
  pld_ops_test(cluster cluster/run_cluster.py cluster_work 120)
  # random (pto-isa TRANDOM Philox4x32 goldens) and the prefetch ops (tests/ops/run_ops_misc.py)
  pld_ops_test(ops_misc ops/run_ops_misc.py ops_misc 120)
  # the MX block-scaled matmul: FP8E4M3FN data, FP8E8M0 scales in PyPTO's packed MX_A_ZZ / MX_B_NN
  # layouts, pure-Python decoders and goldens (tests/ops/run_ops_mx.py)
  pld_ops_test(ops_mx ops/run_ops_mx.py ops_mx 120)
  # the GM gather/scatter family (tests/ops/run_ops_gather.py)
  pld_ops_test(ops_gather ops/run_ops_gather.py ops_gather 120 SAMPLE)
  # PyPTO's printed forms (issue 41, wave 2): pl.tensor.gather/scatter(x, idx[, src], dim=), gather_mask,
  # scatter_mask, mrgsort_format1/2, pl.tile.tpop_from_aiv / tpush_to_aic, as PyPTO's printer wrote them
  pld_ops_test(ops_printed_forms ops/run_printed_forms.py ops_printed_forms 60)
  # tile read/write/slice/reshape/assemble, tensor full/reshape, arrays, get_block_num in pl.spmd, the TaskId
  # ops with pl.submit deps=, set_ffts/cacheinvalid (tests/ops/run_ops_basic.py)
  pld_ops_test(ops_basic ops/run_ops_basic.py ops_basic 120 SAMPLE)
  # The same runners on `--backend native` (pldrun reads PLDRUN_BACKEND when --backend is not given;
  # native_backend_env checks that it does): every kernel compiled to C with the same goldens.
  # Release tree only (a compile per generated program): the runners that take --sample run a
  # sample (PLD_OPS_NATIVE_SAMPLE) in the default tier and every case in the long tier
  # (ops_native_*_all, label `long`); the fixed ones run in full in the default tier.
  set(PLD_OPS_NATIVE_SAMPLE 6 CACHE STRING "--sample N of the ops_native_* runners in the default tier")
  set(_pld_native_ops_env "PLDRUN_BACKEND=native" "XDG_CACHE_HOME=${CMAKE_BINARY_DIR}/kernel_cache" ${PLD_MPI_TEST_ENV})
  function(pld_ops_native_test name script workdir timeout)
    set(_runs "${name}|--sample,${PLD_OPS_NATIVE_SAMPLE}|")
    if("SAMPLE" IN_LIST ARGN)
      list(APPEND _runs "${name}_all||long")
    else()
      set(_runs "${name}||")
    endif()
    foreach(_r IN LISTS _runs)
      string(REPLACE "|" ";" _r "${_r}")
      list(GET _r 0 _n)
      list(GET _r 1 _flags)
      list(GET _r 2 _label)
      string(REPLACE "," ";" _flags "${_flags}")
      add_test(NAME ${_n}
               COMMAND "${PLD_PYTHON3_OPS}" "${CMAKE_CURRENT_SOURCE_DIR}/${script}"
                       --pldrun $<TARGET_FILE:pldrun> --workdir "${CMAKE_CURRENT_BINARY_DIR}/${workdir}_${_n}" ${_flags})
      set_tests_properties(${_n} PROPERTIES TIMEOUT ${timeout} LABELS "unit;ops;native;${_label}"
                           ENVIRONMENT "${_pld_native_ops_env}")
    endforeach()
  endfunction()
  if(NOT PLD_SANITIZE)
    pld_ops_native_test(ops_native_reduce ops/run_ops.py ops_reduce 600 SAMPLE)
    pld_ops_native_test(ops_native_mem ops/run_ops_mem.py ops_mem 600 SAMPLE)
    pld_ops_native_test(ops_native_elem ops/run_elem.py ops_elem 900 SAMPLE)
    pld_ops_native_test(ops_native_layout ops/run_ops_layout.py ops_layout 600 SAMPLE)
    pld_ops_native_test(ops_native_gather ops/run_ops_gather.py ops_gather 600 SAMPLE)
    pld_ops_native_test(ops_native_printed_forms ops/run_printed_forms.py ops_printed_forms 300)
    pld_ops_native_test(ops_native_basic ops/run_ops_basic.py ops_basic 600 SAMPLE)
    pld_ops_native_test(ops_native_misc ops/run_ops_misc.py ops_misc 600)
    pld_ops_native_test(ops_native_mx ops/run_ops_mx.py ops_mx 600)
    pld_ops_native_test(cluster_native cluster/run_cluster.py cluster_work 600)
  endif()
else()
  message(STATUS "pldrun tests: python3 not found; the ops_* tests are not registered")
endif()
