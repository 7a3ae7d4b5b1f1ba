# Runs dtplan on a small model with --json and --svg and checks the outputs:
# the JSON parses and holds the ranked configurations (fastest first) and
# the rejections; the SVG is one drawing with a bar per configuration.
#
#   cmake -DDTPLAN=<dtplan> -DOUT=<dir> -P dtplan_outputs.cmake
cmake_minimum_required(VERSION 3.25)

set(json "${OUT}/dtplan_outputs.json")
set(svg "${OUT}/dtplan_outputs.svg")
file(REMOVE "${json}" "${svg}")
execute_process(
  COMMAND "${DTPLAN}" --layers 24 --hidden 1536 --heads 12 --vocab 32000 --seq 2048 --cluster a100 --nodes 2
          --batch 256 --top 5 --json "${json}" --svg "${svg}" --compare tp=16,pp=1,dp=1
  RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE errors)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "dtplan failed (${status}):\n${output}\n${errors}")
endif()
foreach(expected "configurations evaluated in" "rejected:" "heads / tp" "why it is slower|rejected \\(")
  if(NOT output MATCHES "${expected}")
    message(FATAL_ERROR "dtplan's output lacks \"${expected}\":\n${output}")
  endif()
endforeach()

file(READ "${json}" text)
string(JSON count LENGTH "${text}" configurations)
if(NOT count EQUAL 5)
  message(FATAL_ERROR "the JSON holds ${count} configurations, not 5")
endif()
set(previous 0)
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
  string(JSON step GET "${text}" configurations ${i} time step)
  string(JSON total GET "${text}" configurations ${i} memory total)
  if(step LESS previous)
    message(FATAL_ERROR "configuration ${i} (${step} s) is faster than the one ranked before it (${previous} s)")
  endif()
  if(total GREATER 72000000000)
    message(FATAL_ERROR "configuration ${i} needs ${total} bytes, more than 90 % of an A100's 80 GB")
  endif()
  set(previous ${step})
endforeach()
string(JSON rejected LENGTH "${text}" rejected)
if(rejected LESS 1)
  message(FATAL_ERROR "the JSON lists no rejections")
endif()

file(READ "${svg}" drawing)
string(REGEX MATCHALL "<svg " svgs "${drawing}")
list(LENGTH svgs svg_count)
if(NOT svg_count EQUAL 1 OR NOT drawing MATCHES "</svg>\n$")
  message(FATAL_ERROR "${svg} is not one SVG drawing")
endif()
string(REGEX MATCHALL "<title>parameters</title>" bars "${drawing}")
list(LENGTH bars bar_count)
if(NOT bar_count EQUAL 5)
  message(FATAL_ERROR "the SVG draws ${bar_count} memory bars, not 5")
endif()
message(STATUS "dtplan wrote a plan of ${count} configurations and ${rejected} kinds of rejection")
