# Checks `dtbench collectives --vs-mpi --rounds`. Without JSON: a bad round
# count is a usage error (exit 2). With JSON (the MPI peer is built): a tiny
# two-round comparison of every operation runs (each side verifies its
# results), its merged JSON says "rounds": 2 and has both sides and the
# per-round ratios on every row, and each run's results are kept in
# --results-dir. Correctness only: the numbers are not judged.
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
get_filename_component(runs "${JSON}" DIRECTORY)
set(runs "${runs}/collectives_vs_mpi_runs")
file(REMOVE_RECURSE "${runs}")
execute_process(
  COMMAND "${DTBENCH}" collectives --vs-mpi -n 2 --rounds 2 --min-bytes 8 --max-bytes 64 --iters 5 --ops all
          --results-dir "${runs}" --json "${JSON}"
  RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "dtbench collectives --vs-mpi exited with ${status}")
endif()
foreach(run dtrain-n2-r1 mpi-n2-r1 dtrain-n2-r2 mpi-n2-r2)
  if(NOT EXISTS "${runs}/${run}.json")
    message(FATAL_ERROR "--results-dir ${runs} lacks ${run}.json")
  endif()
endforeach()

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
set(seen "")
foreach(i RANGE ${last})
  string(JSON op GET "${text}" results ${i} op)
  list(APPEND seen "${op}")
  foreach(side dtrain mpi)
    string(JSON time ERROR_VARIABLE error GET "${text}" results ${i} ${side} time_us)
    if(error OR NOT time GREATER 0)
      message(FATAL_ERROR "${JSON}: row ${i} has ${side} time_us '${time}': ${error}")
    endif()
  endforeach()
  foreach(field round_ratio_median round_ratio_min round_ratio_max)
    string(JSON ratio ERROR_VARIABLE error GET "${text}" results ${i} ${field})
    if(error OR NOT ratio GREATER 0)
      message(FATAL_ERROR "${JSON}: row ${i} has ${field} '${ratio}': ${error}")
    endif()
  endforeach()
endforeach()
foreach(op allreduce allgather reduce_scatter alltoall broadcast alltoallv reduce gather scatter allgatherv
           reduce_scatterv)
  if(NOT op IN_LIST seen)
    message(FATAL_ERROR "${JSON}: no rows for ${op}")
  endif()
endforeach()
message(STATUS "${rows} rows of every operation, best of 2 rounds, both sides and the per-round ratios present")
