# Runs a short sweep on a world of one and checks that its JSON parses and has
# rows for every operation. Correctness only: the numbers are not judged.
#   cmake -DDTBENCH=<dtbench> -DJSON=<output> -P smoke_test.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE "${JSON}")
execute_process(
  COMMAND "${DTBENCH}" collectives --max-bytes 64K --iters 2 --json "${JSON}"
  RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "dtbench collectives exited with ${status}")
endif()

file(READ "${JSON}" text)
string(JSON benchmark ERROR_VARIABLE error GET "${text}" benchmark)
if(error OR NOT benchmark STREQUAL "collectives")
  message(FATAL_ERROR "${JSON}: not a collectives results file: ${error}")
endif()
string(JSON rows ERROR_VARIABLE error LENGTH "${text}" results)
if(error OR rows EQUAL 0)
  message(FATAL_ERROR "${JSON}: no results: ${error}")
endif()

math(EXPR last "${rows} - 1")
set(seen "")
foreach(i RANGE ${last})
  string(JSON op GET "${text}" results ${i} op)
  string(JSON time GET "${text}" results ${i} time_us)
  if(NOT time GREATER 0)
    message(FATAL_ERROR "${JSON}: ${op} row ${i} has time_us ${time}")
  endif()
  list(APPEND seen "${op}")
endforeach()
foreach(op allreduce allgather reduce_scatter alltoall broadcast)
  if(NOT op IN_LIST seen)
    message(FATAL_ERROR "${JSON}: no rows for ${op}")
  endif()
endforeach()
message(STATUS "${rows} rows, every operation present")
