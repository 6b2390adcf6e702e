# bench/native.cmake - bench_native_handc: the tile-bound kernels of
# bench/native_*.pld hand-written in plain C, the baseline of
# bench/run_bench_native.sh (docs/benchmarks-native.md). Not a test.
#
# Built with exactly the flags the native backend compiles kernels with,
# whatever the build type: PLD_NATIVE_HANDC_FLAGS, read from
# src/hw_backend/pld_native_flags.h (the list pld_native.c uses): the base
# flags, -fPIC (native builds shared objects; -shared and -w change no code),
# and each optional flag the compiler accepts (native probes the same way).
# The binary prints them (`bench_native_handc --flags`) and the script checks
# them against the flags native cached for its compiler. It links no pldrun
# library.
include(CheckCCompilerFlag)
file(READ "${PROJECT_SOURCE_DIR}/src/hw_backend/pld_native_flags.h" _pld_nf)
string(REGEX MATCH "#define PLD_NATIVE_BASE_FLAGS \"([^\"]*)\"" _m "${_pld_nf}")
set(_pld_base "${CMAKE_MATCH_1}")
string(REGEX MATCH "#define PLD_NATIVE_OPT_FLAGS ([^\n]*)" _m "${_pld_nf}")
string(REGEX MATCHALL "\"[^\"]*\"" _pld_opt "${CMAKE_MATCH_1}")
set(PLD_NATIVE_HANDC_FLAGS "${_pld_base} -fPIC")
foreach(_f IN LISTS _pld_opt)
  string(REPLACE "\"" "" _f "${_f}")
  string(MAKE_C_IDENTIFIER "PLD_NATIVE_HAS${_f}" _v)
  check_c_compiler_flag("${_f}" ${_v})
  if(${_v})
    string(APPEND PLD_NATIVE_HANDC_FLAGS " ${_f}")
  endif()
endforeach()
set(PLD_NATIVE_HANDC_FLAGS "${PLD_NATIVE_HANDC_FLAGS}" CACHE INTERNAL "the hand-C benchmark's flags = native's")
separate_arguments(_pld_hf UNIX_COMMAND "${PLD_NATIVE_HANDC_FLAGS}")
add_executable(bench_native_handc ${CMAKE_CURRENT_LIST_DIR}/bench_native_handc.c)
# the build type's flags (-O3 -DNDEBUG in Release) must not mix in: the
# kernels' flags replace them (they come last on the command line, and
# -std=c11 / -O2 override the earlier ones)
target_compile_options(bench_native_handc PRIVATE ${_pld_hf})
target_compile_definitions(bench_native_handc PRIVATE "PLD_HANDC_FLAGS=\"${PLD_NATIVE_HANDC_FLAGS}\"")
target_link_libraries(bench_native_handc PRIVATE m)
set_target_properties(bench_native_handc PROPERTIES C_EXTENSIONS OFF)
