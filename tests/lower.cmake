# tests/lower.cmake - the lowering passes (src/parser/pld_lower.c,
# docs/lowering.md), label `lower`:
#
#   lower            tests/unit/test_lower.c: LowerL2TensorCollectives (lowered
#                    shape, synthesized signature and directions, template attrs,
#                    variant sharing, InCore pass-through, launch spec and the
#                    block-count fold of RFC #2521's examples, capacity check,
#                    runtime core_num, INT8 variant, postcondition) and
#                    LowerHostTensorCollectives (world loop, device list, ring,
#                    barrier); the printed lowered program reads back and lowers
#                    to itself
#   lower_roundtrip  tests/lower_roundtrip.sh: every program of programs/ and
#                    tests/mpi/programs/ with a CHIP or HOST collective: its
#                    --print-lowered text has no pld.tensor.* collective left in a
#                    CHIP/HOST body, passes --check, and prints back unchanged
# (the CHIP rail's rejections: tests/bad/321-*.pld and the older bad programs
# whose rules moved into the pass, run by `bad`)

if(PLD_HAVE_CHECK)
  pld_add_suite(lower)
  set_property(TEST lower APPEND PROPERTY LABELS lower)
endif()

if(PLD_BASH)
  add_test(NAME lower_roundtrip
           COMMAND ${PLD_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/lower_roundtrip.sh $<TARGET_FILE:pldrun>
                   ${PROJECT_SOURCE_DIR}/programs ${CMAKE_CURRENT_SOURCE_DIR}/mpi/programs
                   ${CMAKE_CURRENT_SOURCE_DIR}/examples)
  set_tests_properties(lower_roundtrip PROPERTIES TIMEOUT 300 LABELS "lower;check")
  if(PLD_SANITIZE)
    # about 400 short runs, where the exit-time leak scan is 40% of each
    # (suite time); the lowering passes' leaks are caught by the coll_*_lowered
    # runs, which keep it
    set_tests_properties(lower_roundtrip PROPERTIES ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")
  endif()
endif()
