# tests/interp.cmake - the interpreter suite (tests/unit/test_interp*.c: one
# executable, split by subject; helpers in test_interp_util.c).
# Included at the end of tests/CMakeLists.txt (it reuses pld_add_suite and
# pld_check_testing).
#
# pld_interp_testing compiles the sources of pld_interp and pld_hw against
# pld_check_testing (hence pld_base_testing: PLD_TESTING asserts and the
# fail-the-Nth-allocation hook) instead of linking pld_interp, which would bring
# the non-testing pld_base into the executable (see the note at the top of
# tests/CMakeLists.txt). The window layer is compiled in (it links MPI) but the
# suite never initialises MPI: it runs the interpreter in-process with
# pld_comm_self() and fake pld_comm_t's of its own, windows on the local transport.

if(TARGET pld_interp AND PLD_HAVE_CHECK)
  set(_pld_interp_testing_sources "")
  foreach(_lib pld_interp pld_debug pld_hw pld_cgen pld_coll pld_wait pld_win pld_cluster pld_npu pld_npu_profile pld_kern pld_npy)
    get_target_property(_srcs ${_lib} SOURCES)
    foreach(_s IN LISTS _srcs)
      if(IS_ABSOLUTE "${_s}")
        list(APPEND _pld_interp_testing_sources "${_s}")
      else()
        list(APPEND _pld_interp_testing_sources "${PROJECT_SOURCE_DIR}/${_s}")
      endif()
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES _pld_interp_testing_sources)

  add_library(pld_interp_testing STATIC ${_pld_interp_testing_sources})
  target_include_directories(pld_interp_testing PUBLIC "${PROJECT_SOURCE_DIR}/src/interp"
                                                       "${PROJECT_SOURCE_DIR}/src/hw_backend"
                                                       "${PROJECT_SOURCE_DIR}/src/sim_window"
                                                       "${PROJECT_SOURCE_DIR}/src/debug"
                                                       "${PROJECT_SOURCE_DIR}/src/sim_npu"
                                                       "${PROJECT_SOURCE_DIR}/src/pybridge")
  target_include_directories(pld_interp_testing PRIVATE ${FFI_INCLUDE_DIRS})
  target_link_libraries(pld_interp_testing PUBLIC pld_check_testing MPI::MPI_C m ${FFI_LINK_LIBRARIES} ${CMAKE_DL_LIBS})

  pld_add_suite(interp)
  target_sources(test_interp PRIVATE unit/test_interp_util.c unit/test_interp_ops.c unit/test_interp_errors.c
                                     unit/test_interp_hw.c)
  target_link_libraries(test_interp PRIVATE pld_interp_testing)
  set_property(TEST interp APPEND PROPERTY LABELS interp)

  # The call direction of the interpreter's files (layers of pld_interp_int.h):
  # no object file references a symbol of a higher layer.
  add_test(NAME interp_layers
           COMMAND ${CMAKE_COMMAND} "-DNM=${CMAKE_NM}" "-DOBJECTS=$<JOIN:$<TARGET_OBJECTS:pld_interp>,|>"
                   -P "${CMAKE_CURRENT_SOURCE_DIR}/interp_layers.cmake")
  set_tests_properties(interp_layers PROPERTIES LABELS "interp;check")
else()
  message(STATUS "pldrun tests: interpreter suite not registered (pld_interp or the checker is missing)")
endif()
