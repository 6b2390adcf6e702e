# tests/check.cmake - tests of the static checker, included at the end of
# tests/CMakeLists.txt (it reuses pld_add_suite and pld_check_testing):
#
#   bad              tests/unit/test_bad.c: every tests/bad/*.pld reports its
#                    `# expect-error: LINE:COL: gist` as the first error (for
#                    each P of `# ranks:`, on the profile of `# platform:`)
#   check            tests/unit/test_check.c: the checker API (sema fields,
#                    opts, re-checking, rendering, OOM loop)
#   programs_check   tests/run_programs.sh: every programs/**/*.pld passes
#                    `pldrun --check` for each P of its `# ranks:` and for P unknown
#   ops_doc_up_to_date  docs/ops.md matches tools/gen_ops_doc (tools/CMakeLists.txt)

if(PLD_HAVE_CHECK)
  pld_add_suite(bad)
  target_compile_definitions(test_bad PRIVATE PLD_BAD_DIR="${CMAKE_CURRENT_SOURCE_DIR}/bad")
  set_property(TEST bad APPEND PROPERTY LABELS check)

  pld_add_suite(check)
  set_property(TEST check APPEND PROPERTY LABELS check)
endif()

find_program(PLD_BASH bash)
if(PLD_BASH)
  add_test(NAME programs_check
           COMMAND ${PLD_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/run_programs.sh $<TARGET_FILE:pldrun>
                   ${PROJECT_SOURCE_DIR}/programs)
  set_tests_properties(programs_check PROPERTIES TIMEOUT 300 LABELS check)
  if(PLD_SANITIZE)
    # about 180 short pldrun runs: the exit-time leak scan of each was half
    # the test's time (35 s); the checker's memory is leak-checked by the
    # `bad` and `check` suites in-process
    set_tests_properties(programs_check PROPERTIES ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")
  endif()
endif()

if(NOT TARGET gen_ops_doc)
  add_subdirectory(${PROJECT_SOURCE_DIR}/tools ${CMAKE_BINARY_DIR}/tools)
endif()
