# Checks `dtbench collectives --vs-mpi --rounds`. Without JSON: a bad round
# count is a usage error (exit 2). With JSON (the MPI peer is built): a tiny
# two-round comparison runs and its merged JSON says "rounds": 2 and has both
# sides on every row. Correctness only: the numbers are not judged.
#   cmake -DDTBENCH=<dtbench> [-DJSON=<output>] -P vs_mpi_smoke_test.cmake
cmake_minimum_required(VERSION 3.25)
if(NOT DEFINED JSON)
  foreach(rounds 0 x)
    execute_process(
      COMMAND "${DTBENCH}" collectives --vs-mpi --rounds ${rounds}
      RESULT_VARIABLE status ERROR_VARIABLE error)
    if(NOT status EQUAL 2 OR NOT error MATCHES "--rounds: [^\n]*${rounds}")
      message(FATAL_ERROR "--rounds ${rounds}: exited with ${status}, not 2 with a usage error:\n${error}")
    endif()
  endforeach()
  message(STATUS "--rounds 0 and --rounds x are usage errors")
  return()
endif()

file(REMOVE "${JSON}")
execute_process(
  COMMAND "${DTBENCH}" collectives --vs-mpi -n 2 --rounds 2 --max-bytes 64 --ops allreduce --json "${JSON}"
  RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "dtbench collectives --vs-mpi exited with ${status}")
endif()

file(READ "${JSON}" text)
string(JSON rounds ERROR_VARIABLE error GET "${text}" rounds)
if(error OR NOT rounds EQUAL 2)
  message(FATAL_ERROR "${JSON}: \"rounds\" is '${rounds}', not 2: ${error}")
endif()
string(JSON rows ERROR_VARIABLE error LENGTH "${text}" results)
if(error OR rows EQUAL 0)
  message(FATAL_ERROR "${JSON}: no results: ${error}")
endif()
math(EXPR last "${rows} - 1")
foreach(i RANGE ${last})
  foreach(side dtrain mpi)
    string(JSON time ERROR_VARIABLE error GET "${text}" results ${i} ${side} time_us)
    if(error OR NOT time GREATER 0)
      message(FATAL_ERROR "${JSON}: row ${i} has ${side} time_us '${time}': ${error}")
    endif()
  endforeach()
endforeach()
message(STATUS "${rows} rows, best of 2 rounds, both sides present")
