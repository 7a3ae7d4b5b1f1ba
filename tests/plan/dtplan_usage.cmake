# dtplan's command line: a bad argument exits 2 and names what is wrong; a
# cluster file that cannot be read exits 1 and names it.
#   cmake -DDTPLAN=<dtplan> -DOUT=<dir> -P dtplan_usage.cmake
cmake_minimum_required(VERSION 3.25)

include("${CMAKE_CURRENT_LIST_DIR}/../../cmake/ExpectExit.cmake")
function(expect status pattern)
  expect_exit("${DTPLAN}" ${status} "${pattern}" ${ARGN})
endfunction()

set(model --layers 4 --hidden 256 --heads 4 --vocab 1000 --seq 128)
expect(2 "dtplan: [^\n]*--bogus" ${model} --batch 8 --bogus)
expect(2 "dtplan: --batch is required" ${model})
expect(2 "dtplan: --dims: [^\n]*xx" ${model} --batch 8 --dims tp,xx)
expect(2 "dtplan: --zero: [^\n]*4" ${model} --batch 8 --zero 1,4)
expect(2 "dtplan: --compare: tp: \"x\" is not a whole number" ${model} --batch 8 --compare tp=x)
expect(2 "dtplan: --compare: unknown \"schedule=zigzag\"" ${model} --batch 8 --compare schedule=zigzag)
expect(2 "dtplan: --model: [^\n]*gpt-2" --model gpt-2 --batch 8)
expect(2 "dtplan: [^\n]*--layers[^\n]*four" --layers four --batch 8)
expect(2 "usage: dtplan" --bogus)
expect(1 "dtplan: --cluster-file: [^\n]*${OUT}/no-such-cluster" ${model} --batch 8
       --cluster-file "${OUT}/no-such-cluster")
# A malformed line is named by file and line.
file(WRITE "${OUT}/bad-cluster.txt" "preset = h100\nnodes two\n")
expect(1 "dtplan: --cluster-file: [^\n]*bad-cluster.txt:2: expected \"key = value\"" ${model} --batch 8
       --cluster-file "${OUT}/bad-cluster.txt")

# --help exits 0 and lists every option group.
execute_process(COMMAND "${DTPLAN}" --help RESULT_VARIABLE got OUTPUT_VARIABLE help)
foreach(expected "usage: dtplan" "--cluster-file" "--memory-fraction" "--compare" "--no-sp")
  if(NOT got EQUAL 0 OR NOT help MATCHES "${expected}")
    message(FATAL_ERROR "dtplan --help (exit ${got}) lacks \"${expected}\":\n${help}")
  endif()
endforeach()
message(STATUS "bad arguments are usage errors that name them")
