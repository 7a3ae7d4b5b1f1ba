# The examples' command lines: a bad option exits 2 and names what is wrong.
#   cmake -DTRAIN_MLP=<train_mlp> [-DTRAIN_GPT=<train_gpt>] -P usage_test.cmake
cmake_minimum_required(VERSION 3.25)
include("${CMAKE_CURRENT_LIST_DIR}/../cmake/ExpectExit.cmake")

# train_mlp (C, getopt_long)
expect_exit("${TRAIN_MLP}" 2 "train_mlp: unknown option '--bogus'" --steps 5 --bogus)
expect_exit("${TRAIN_MLP}" 2 "train_mlp: no value for '--steps'" --steps)
expect_exit("${TRAIN_MLP}" 2 "train_mlp: --zero: '4' is not an integer in \\[0, 3\\]" --zero 4)
expect_exit("${TRAIN_MLP}" 2 "train_mlp: unexpected argument 'extra'" --steps 5 extra)
# train_gpt (C++, CLI11)
if(TRAIN_GPT)
  expect_exit("${TRAIN_GPT}" 2 "train_gpt: [^\n]*--bogus" --bogus)
  expect_exit("${TRAIN_GPT}" 2 "train_gpt: --schedule: [^\n]*zigzag" --schedule zigzag)
  expect_exit("${TRAIN_GPT}" 2 "train_gpt: --chunks: only the interleaved schedule" --chunks 3)
endif()
message(STATUS "bad options are named")
