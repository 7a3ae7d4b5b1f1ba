# dtrain_add_launched_test(NAME <name> RANKS <n> [DTRUN_TIMEOUT <s>] [TIMEOUT <s>]
#                          [LABELS <label>...] COMMAND <program> [args...])
#
# A test that runs <program> on <n> ranks under dtrun (`dtrun -n <n>
# --timeout <DTRUN_TIMEOUT>`), labelled "multiproc" plus LABELS and holding
# <n> of CTest's processors. Where dtrun is not built the test is still
# registered and reports itself skipped (exit 77), so that a missing launcher
# never passes for a passing test.
function(dtrain_add_launched_test)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;RANKS;DTRUN_TIMEOUT;TIMEOUT" "LABELS;COMMAND")
  if(NOT arg_DTRUN_TIMEOUT)
    set(arg_DTRUN_TIMEOUT 60)
  endif()
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 120)
  endif()
  if(TARGET dtrun)
    add_test(NAME ${arg_NAME}
      COMMAND "$<TARGET_FILE:dtrun>" -n ${arg_RANKS} --timeout ${arg_DTRUN_TIMEOUT} ${arg_COMMAND})
  else()
    add_test(NAME ${arg_NAME} COMMAND sh -c "echo 'dtrun is not built'; exit 77")
  endif()
  set(labels multiproc ${arg_LABELS})
  set_tests_properties(${arg_NAME} PROPERTIES
    LABELS "${labels}" TIMEOUT ${arg_TIMEOUT} PROCESSORS ${arg_RANKS} SKIP_RETURN_CODE 77)
endfunction()
