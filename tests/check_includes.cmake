# tests/check_includes.cmake - the simulated device and the window layer know
# no syntax and no interpreter: no file under the given directories includes
# an interpreter or parser header (pld_interp*.h, pld_value*.h, pld_ast.h,
# pld_check*.h, pld_parse*.h, pld_lex.h, pld_lower.h, pld_ops*.h).
#
#   cmake -DROOT=<source dir> "-DDIRS=src/sim_window|src/sim_npu" -P tests/check_includes.cmake
cmake_minimum_required(VERSION 3.25)

if(NOT ROOT OR NOT DIRS)
  message(FATAL_ERROR "usage: cmake -DROOT=<source dir> -DDIRS=\"src/a|src/b\" -P check_includes.cmake")
endif()

string(REPLACE "|" ";" dirs "${DIRS}")
set(bad 0)
set(n 0)
foreach(dir IN LISTS dirs)
  file(GLOB files "${ROOT}/${dir}/*.c" "${ROOT}/${dir}/*.h" "${ROOT}/${dir}/*.inc")
  foreach(f IN LISTS files)
    math(EXPR n "${n} + 1")
    file(STRINGS "${f}" lines REGEX "^[ \t]*#[ \t]*include")
    foreach(line IN LISTS lines)
      if(line MATCHES "[\"<](pld_interp[a-z_]*|pld_value[a-z_]*|pld_ast|pld_check[a-z_]*|pld_parse[a-z_]*|pld_lex|pld_lower|pld_ops[a-z_]*)\\.h[\">]")
        file(RELATIVE_PATH rel "${ROOT}" "${f}")
        message(SEND_ERROR "${rel} includes ${CMAKE_MATCH_1}.h: ${dir} knows no syntax and no interpreter values")
        math(EXPR bad "${bad} + 1")
      endif()
    endforeach()
  endforeach()
endforeach()
if(bad GREATER 0)
  message(FATAL_ERROR "${bad} interpreter or parser include(s) in ${DIRS}")
endif()
message(STATUS "${n} files in ${DIRS}: no interpreter or parser header included")
