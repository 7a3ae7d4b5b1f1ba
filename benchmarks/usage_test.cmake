# dtbench's command lines: a bad argument exits 2 and names what is wrong;
# a results file that is not JSON, or not a collectives results file, makes
# dtbench compare exit 1 naming the file and the place.
# The MPI peer's (getopt_long) too, where it is built.
#   cmake -DDTBENCH=<dtbench> [-DMPI_PEER=<mpi_peer>] -DOUT=<dir> -P usage_test.cmake
cmake_minimum_required(VERSION 3.25)

include("${CMAKE_CURRENT_LIST_DIR}/../cmake/ExpectExit.cmake")
function(expect status pattern)
  expect_exit("${DTBENCH}" ${status} "${pattern}" ${ARGN})
endfunction()

expect(2 "dtbench tp: [^\n]*--bogus" tp --bogus)
expect(2 "dtbench moe: --tokens" moe --tokens)
expect(2 "dtbench cp: --heads: [^\n]*0" cp --heads 0)
expect(2 "dtbench gemm: --shapes: '2x2' is not MxNxK" gemm --shapes 2x2)
expect(2 "dtbench checks: --bytes: bad value '2'" checks --bytes 2)
expect(2 "dtbench gemm: --clock: [^\n]*bogus" gemm --clock bogus)
expect(2 "dtbench pipeline: --work: [^\n]*bogus" pipeline --work bogus)
expect(2 "dtbench pipeline: --microbatches: '0' is not a count" pipeline --microbatches 2,0)
expect(2 "dtbench predict: --cluster-file is required" predict results.json)
expect(2 "dtbench predict: no RESULTS.json given" predict --cluster-file cluster.txt)
expect(2 "dtbench predict: [^\n]*--bogus" predict --bogus)
expect(2 "dtbench handoff: --min-bytes is above --max-bytes" handoff --min-bytes 2M --max-bytes 1M)
expect(2 "dtbench collectives: --ops: bad value 'allreduce,scan'" collectives --ops allreduce,scan)
expect(2 "dtbench collectives: --rounds is for --vs-mpi" collectives --rounds 2)
expect(2 "dtbench collectives: --results-dir is for --vs-mpi" collectives --results-dir runs)
expect(2 "dtbench compare: [^\n]*B" compare only-one.json)
expect(2 "dtbench: [^\n]*bogus" bogus)
expect(2 "dtbench: a COMMAND is required")

# compare: malformed JSON is named by file, line and column; a document of
# the wrong shape by file and member.
file(WRITE "${OUT}/usage_truncated.json" "{\"benchmark\": \"collectives\",\n \"results\": [1,\n")
file(WRITE "${OUT}/usage_mistyped.json" "{\"benchmark\": \"collectives\", \"implementation\": 3}\n")
expect(1 "dtbench compare: [^\n]*usage_truncated.json: [^\n]*line 3, column 1"
       compare "${OUT}/usage_truncated.json" "${OUT}/usage_mistyped.json")
expect(1 "dtbench compare: [^\n]*usage_mistyped.json: missing or mistyped \"implementation\""
       compare "${OUT}/usage_mistyped.json" "${OUT}/usage_truncated.json")

# predict: a results file that is not JSON is named, with the place.
file(WRITE "${OUT}/usage_cluster.txt"
     "nodes = 1\ngpus_per_node = 2\ngpu_memory = 1e9\npeak_flops = 1e11\ngemm_efficiency = 0.5\n"
     "memory_bandwidth = 1e10\nintra_bandwidth = 1e9\nintra_latency = 1e-5\n"
     "inter_bandwidth = 1e9\ninter_latency = 1e-5\n")
expect(1 "dtbench predict: [^\n]*usage_truncated.json: [^\n]*line 3, column 1"
       predict --cluster-file "${OUT}/usage_cluster.txt" "${OUT}/usage_truncated.json")

if(MPI_PEER)
  expect_exit("${MPI_PEER}" 2 "mpi_peer: unknown option '--bogus'" --bogus)
  expect_exit("${MPI_PEER}" 2 "mpi_peer: --ops needs a value" --ops)
  expect_exit("${MPI_PEER}" 2 "mpi_peer: --ops: bad value 'scan'" --ops scan)
  expect_exit("${MPI_PEER}" 2 "mpi_peer: --min-bytes is larger than --max-bytes" --min-bytes 2K --max-bytes 1K)
endif()

# --help exits 0 and lists the options.
execute_process(COMMAND "${DTBENCH}" zero --help RESULT_VARIABLE got OUTPUT_VARIABLE help)
foreach(expected "usage: dtrun -n N dtbench zero" "--stages" "--prefetch" "--steps" "--json")
  if(NOT got EQUAL 0 OR NOT help MATCHES "${expected}")
    message(FATAL_ERROR "dtbench zero --help (exit ${got}) lacks \"${expected}\":\n${help}")
  endif()
endforeach()
message(STATUS "bad arguments and bad results files are named")
