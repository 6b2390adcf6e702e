# check_ops_doc.cmake - CTest ops_doc_up_to_date: regenerates the op reference
# into OUT and compares it with REF (docs/ops.md).
# cmake -DGEN=gen_ops_doc -DOUT=build/tools/ops.md -DREF=docs/ops.md -DBUILD_DIR=build -P check_ops_doc.cmake
# (also CTest native_coverage: -DWHAT=native-ops.md -DTARGET=native_ops_doc -DSRC=...)
if(NOT WHAT)
  set(WHAT ops.md)
  set(TARGET ops_doc)
  set(SRC src/parser/pld_ops.def)
endif()
execute_process(COMMAND ${GEN} ${OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${GEN} failed (exit ${rc}): an op has no entry (see above)")
endif()
if(NOT EXISTS "${REF}")
  message(FATAL_ERROR "${REF} does not exist; generate it with: cmake --build ${BUILD_DIR} --target ${TARGET}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${OUT}" "${REF}" RESULT_VARIABLE differ)
if(differ)
  find_program(DIFF diff)
  if(DIFF)
    execute_process(COMMAND ${DIFF} -u "${REF}" "${OUT}")
  endif()
  message(FATAL_ERROR "docs/${WHAT} is out of date with ${SRC}; regenerate it with:\n"
                      "  cmake --build ${BUILD_DIR} --target ${TARGET}\n"
                      "(or: ${GEN} ${REF}) and commit the result")
endif()
message(STATUS "docs/${WHAT} is up to date")
