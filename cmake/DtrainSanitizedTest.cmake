# dtrain_add_compute_sanitizer_tests(TARGET <gtest executable> PREFIX <name prefix>
#                                    TOOLS <memcheck|racecheck|initcheck|synccheck>...
#                                    [ARGS <program arguments>...])
#
# One test per tool, named <prefix>sanitizer_<tool>, that runs the GPU test
# executable under compute-sanitizer (--error-exitcode 1), labelled "gpu" and
# "sanitizer". Registered only where the CUDA toolkit has compute-sanitizer;
# without a device the executable's tests skip, and so does the test.
function(dtrain_add_compute_sanitizer_tests)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "TARGET;PREFIX" "TOOLS;ARGS")
  find_program(DTRAIN_COMPUTE_SANITIZER compute-sanitizer
    HINTS "${CUDAToolkit_BIN_DIR}" "${CUDAToolkit_BIN_DIR}/../compute-sanitizer")
  if(NOT DTRAIN_COMPUTE_SANITIZER)
    return()
  endif()
  foreach(tool IN LISTS arg_TOOLS)
    add_test(NAME ${arg_PREFIX}sanitizer_${tool}
      COMMAND "${DTRAIN_COMPUTE_SANITIZER}" --tool ${tool} --error-exitcode 1
              "$<TARGET_FILE:${arg_TARGET}>" ${arg_ARGS})
    set_tests_properties(${arg_PREFIX}sanitizer_${tool} PROPERTIES LABELS "gpu;sanitizer" TIMEOUT 1800
      SKIP_REGULAR_EXPRESSION "\\[  SKIPPED \\]")
  endforeach()
endfunction()
