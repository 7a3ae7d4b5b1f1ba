# For test scripts (cmake -P) that check a program's command line:
#   expect_exit(PROGRAM STATUS PATTERN ARGS...)
# runs PROGRAM ARGS... and fails unless it exits with STATUS and its stderr
# matches PATTERN.
function(expect_exit program status pattern)
  execute_process(COMMAND "${program}" ${ARGN} RESULT_VARIABLE got OUTPUT_QUIET ERROR_VARIABLE errors)
  if(NOT got EQUAL status OR NOT errors MATCHES "${pattern}")
    get_filename_component(name "${program}" NAME)
    message(FATAL_ERROR "${name} ${ARGN}: exited ${got}, not ${status} with \"${pattern}\":\n${errors}")
  endif()
endfunction()
