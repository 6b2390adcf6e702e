# tests/check_includes.cmake - a directory of src/ includes no header of the
# rooms above it (issue 38: the simulated device knows dtypes and views, not
# syntax and not the interpreter's values):
#
#   cmake -DDIR=src/sim_npu "-DFORBIDDEN=pld_interp|pld_value|..." -P tests/check_includes.cmake
#
# Every #include "NAME.h" of every .c / .h / .inc / .def file in DIR whose NAME
# starts with one of the FORBIDDEN prefixes (|-separated) fails the test.
cmake_minimum_required(VERSION 3.25)

if(NOT DIR OR NOT FORBIDDEN)
  message(FATAL_ERROR "usage: cmake -DDIR=dir \"-DFORBIDDEN=a|b\" -P check_includes.cmake")
endif()

string(REPLACE "|" ";" prefixes "${FORBIDDEN}")
file(GLOB files "${DIR}/*.c" "${DIR}/*.h" "${DIR}/*.inc" "${DIR}/*.def")
set(bad 0)
foreach(f IN LISTS files)
  file(STRINGS "${f}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]")
  foreach(line IN LISTS lines)
    if(line MATCHES "include[ \t]*[\"<]([^\">]+)[\">]")
      get_filename_component(name "${CMAKE_MATCH_1}" NAME)
      foreach(p IN LISTS prefixes)
        string(LENGTH "${p}" n)
        string(SUBSTRING "${name}" 0 ${n} head)
        if(head STREQUAL p)
          get_filename_component(fn "${f}" NAME)
          message(SEND_ERROR "${DIR}/${fn} includes ${name}: this directory may not include a ${p}* header")
          math(EXPR bad "${bad} + 1")
        endif()
      endforeach()
    endif()
  endforeach()
endforeach()
list(LENGTH files nfiles)
if(bad GREATER 0)
  message(FATAL_ERROR "${bad} forbidden include(s) in ${DIR}")
endif()
message(STATUS "${DIR}: ${nfiles} files, no forbidden include")
