# tests/tiers.cmake - tests moved to the `long` label (the full tier, `scripts/test.sh --full`) in one
# tree only, because the other tree's default tier runs the same code path. Included after every
# registration, before inventory.cmake. The reason for each list is the CI budget (20 minutes for
# `.ci/run` on 2 cores, tests/README.md "Two tiers"): these are the sanitizer tree's slowest tests
# (fresh-clone CI on 5c21866: 57.6, 23.3, 14.6, 16.5, 15.1 s) whose code is C the Release tree runs in
# its default tier, or Python that the sanitizer does not instrument:
#   ascend_conformance  the conformance table on the fake CANN runtime (ascend_run_P2/P4, _errors,
#                       _refusals, _abi stay in this tree's default tier);
#   python_api, python_pypto  the Python API and the pytest plugin (Python logic; pldrun's runs under
#                       them are the programs/ runs other tests make; python_subworker, which drives
#                       the embedded-Python bridge's C code, stays);
#   native_tdyn, native_boundary  native's dynamic-shape kernels and the runtime boundary: compiled
#                       kernels are not instrumented, the runtime calls they make are run by the
#                       other native parts in this tree.
if(PLD_SANITIZE)
  set(_pld_long_here ascend_conformance python_api python_pypto native_tdyn native_boundary)
else()
  set(_pld_long_here "")
endif()
foreach(_t IN LISTS _pld_long_here)
  if(NOT TEST ${_t})
    continue()  # not registered in this configuration (no python3, no MPI): test_inventory counts labels
  endif()
  get_test_property(${_t} LABELS _l)
  if(NOT "long" IN_LIST _l)
    list(APPEND _l long)
    set_tests_properties(${_t} PROPERTIES LABELS "${_l}")
  endif()
endforeach()
