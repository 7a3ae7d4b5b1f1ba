# Runs a short sweep of every operation on a world of one, then a shorter one
# on two ranks under dtrun (with sizes at which an uneven piece is empty), and
# checks that each JSON parses and has rows for every operation. Each result
# is verified by dtbench itself, which exits 1 on a wrong one. Correctness
# only: the numbers are not judged.
#   cmake -DDTBENCH=<dtbench> -DDTRUN=<dtrun> -DJSON=<output> -P smoke_test.cmake
cmake_minimum_required(VERSION 3.25)

set(every_op allreduce allgather reduce_scatter alltoall broadcast alltoallv reduce gather scatter allgatherv
             reduce_scatterv)

# Runs COMMAND... (which writes ${JSON}) and checks what it wrote.
function(sweep name)
  file(REMOVE "${JSON}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${name}: dtbench collectives exited with ${status}")
  endif()

  file(READ "${JSON}" text)
  string(JSON benchmark ERROR_VARIABLE error GET "${text}" benchmark)
  if(error OR NOT benchmark STREQUAL "collectives")
    message(FATAL_ERROR "${name}: ${JSON}: not a collectives results file: ${error}")
  endif()
  string(JSON rows ERROR_VARIABLE error LENGTH "${text}" results)
  if(error OR rows EQUAL 0)
    message(FATAL_ERROR "${name}: ${JSON}: no results: ${error}")
  endif()

  math(EXPR last "${rows} - 1")
  set(seen "")
  foreach(i RANGE ${last})
    string(JSON op GET "${text}" results ${i} op)
    string(JSON time GET "${text}" results ${i} time_us)
    if(NOT time GREATER 0)
      message(FATAL_ERROR "${name}: ${JSON}: ${op} row ${i} has time_us ${time}")
    endif()
    list(APPEND seen "${op}")
  endforeach()
  foreach(op IN LISTS every_op)
    if(NOT op IN_LIST seen)
      message(FATAL_ERROR "${name}: ${JSON}: no rows for ${op}")
    endif()
  endforeach()
  message(STATUS "${name}: ${rows} rows, every operation present")
endfunction()

sweep("one rank" "${DTBENCH}" collectives --ops all --max-bytes 64K --iters 2 --json "${JSON}")
# 8 B of float32 over two ranks gives rank 0 an empty piece of the uneven
# operations.
sweep("two ranks" "${DTRUN}" -n 2 --timeout 60 "${DTBENCH}" collectives --ops all --min-bytes 8 --max-bytes 1K
      --iters 3 --warmup 1 --json "${JSON}")
# Each call timed alone after evicting the caches (what calibrate.py fits).
sweep("two ranks, evicted" "${DTRUN}" -n 2 --timeout 60 "${DTBENCH}" collectives --ops all --min-bytes 8
      --max-bytes 1K --iters 3 --warmup 1 --evict 1M --json "${JSON}")
file(READ "${JSON}" results)
string(JSON evicted GET "${results}" evict_bytes)
if(NOT evicted EQUAL 1048576)
  message(FATAL_ERROR "two ranks, evicted: evict_bytes is ${evicted}, not 1048576")
endif()
