# tests/interp_layers.cmake - the call direction of the interpreter's files
# (the layers of src/interp/pld_interp_int.h), checked on the object files:
#
#   cmake -DNM=nm "-DOBJECTS=a.o|b.o|..." -P tests/interp_layers.cmake
#
# Every object file of pld_interp belongs to one layer, top to bottom:
#
#   walker    pld_interp pld_eval pld_call pld_group pld_sim pld_builtin pld_crt pld_crt_sys pld_subw
#   dispatch  pld_exec
#   ops       pld_exec_mem pld_exec_compute pld_exec_elem pld_exec_layout pld_exec_gather pld_exec_dist pld_exec_coll pld_xcore
#   tasks     pld_task
#   dist      pld_dist
#   base      pld_rt pld_value pld_poison pld_debug_hooks
#
# A file may reference (nm -u) symbols defined in its own layer or below,
# never one defined above it: a lower layer calls back up only through the
# walker's callback table (it->walk). An object file in no layer fails the
# test too, so that a new file gets a place.
cmake_minimum_required(VERSION 3.25)

if(NOT NM OR NOT OBJECTS)
  message(FATAL_ERROR "usage: cmake -DNM=nm -DOBJECTS=\"a.o|b.o\" -P interp_layers.cmake")
endif()

set(layers walker dispatch ops tasks dist base)
set(layer_walker pld_interp pld_eval pld_call pld_group pld_sim pld_builtin pld_crt pld_crt_sys pld_subw)
set(layer_dispatch pld_exec)
set(layer_ops pld_exec_mem pld_exec_compute pld_exec_elem pld_exec_layout pld_exec_gather pld_exec_dist pld_exec_coll pld_xcore)
set(layer_tasks pld_task)
set(layer_dist pld_dist)
set(layer_base pld_rt pld_value pld_poison pld_debug_hooks)

string(REPLACE "|" ";" objects "${OBJECTS}")

# layer index of every object (0 = walker, top)
set(files "")
foreach(obj IN LISTS objects)
  get_filename_component(name "${obj}" NAME)
  string(REGEX REPLACE "\\.c\\.o(bj)?$|\\.o(bj)?$" "" stem "${name}")
  set(idx -1)
  set(i 0)
  foreach(l IN LISTS layers)
    if(stem IN_LIST layer_${l})
      set(idx ${i})
    endif()
    math(EXPR i "${i} + 1")
  endforeach()
  if(idx EQUAL -1)
    message(FATAL_ERROR "${name} is in no layer: add it to tests/interp_layers.cmake and to the layer list at the "
                        "top of src/interp/pld_interp_int.h")
  endif()
  set(layer_of_${stem} ${idx})
  set(obj_of_${stem} "${obj}")
  list(APPEND files ${stem})
endforeach()

# where every global symbol is defined
foreach(stem IN LISTS files)
  execute_process(COMMAND "${NM}" --defined-only -g "${obj_of_${stem}}" OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} failed on ${obj_of_${stem}}")
  endif()
  string(REGEX MATCHALL "[^\n]+" lines "${out}")
  foreach(line IN LISTS lines)
    if(line MATCHES "^[0-9a-fA-F]* *[A-Za-z] ([A-Za-z_][A-Za-z0-9_]*)$")
      set(def_${CMAKE_MATCH_1} ${stem})
    endif()
  endforeach()
endforeach()

# every reference must point to the same layer or below
set(bad 0)
foreach(stem IN LISTS files)
  execute_process(COMMAND "${NM}" -u "${obj_of_${stem}}" OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} -u failed on ${obj_of_${stem}}")
  endif()
  string(REGEX MATCHALL "[^\n]+" lines "${out}")
  foreach(line IN LISTS lines)
    if(line MATCHES "U ([A-Za-z_][A-Za-z0-9_]*)$")
      set(sym ${CMAKE_MATCH_1})
      if(DEFINED def_${sym})
        set(home ${def_${sym}})
        if(layer_of_${home} LESS layer_of_${stem})
          list(GET layers ${layer_of_${stem}} from)
          list(GET layers ${layer_of_${home}} to)
          message(SEND_ERROR "${stem}.c (${from}) references ${sym}, defined in ${home}.c (${to}, a higher layer): "
                             "call down only; a lower layer reaches the walker through it->walk")
          math(EXPR bad "${bad} + 1")
        endif()
      endif()
    endif()
  endforeach()
endforeach()
list(LENGTH files n)
if(bad GREATER 0)
  message(FATAL_ERROR "${bad} upward reference(s) between the interpreter's layers")
endif()
message(STATUS "interpreter layers: ${n} object files, every reference goes down (or stays in its layer)")
