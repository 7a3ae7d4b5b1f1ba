# Checks DESIGN.md's one-way data flow inside core/ (capi -> plan ->
# parallel -> comm/optim -> device -> base; bootstrap under comm): a file of one folder
# may include headers of its own folder and of the folders listed for it,
# plus the public C headers (dtrain/...). Inside parallel/, a strategy's
# folder may include only its own headers, parallel/common/ (what the
# strategies share) and parallel/mesh/ (the device mesh that gives them their
# communicators), so that strategies stay independent of one another. And
# only base/ (which validates them) names DLPack's tensors: the C API parses
# every DLTensor into a checked view, and the core above base/ works on views.
# And comm/schedules/ (the collectives' algorithms, written against the
# schedule::Messages interface) includes no backend's header and no
# transport's (UCX, NCCL, CUDA), so any transport can run them.
# Fails naming every include that reaches up or across, every file above
# base/ that names a DLTensor or includes dlpack.h, and every schedule that
# names a transport.
#
#   cmake -DCORE=<source>/core -P layering.cmake
cmake_minimum_required(VERSION 3.25)

if(NOT CORE)
  message(FATAL_ERROR "usage: cmake -DCORE=<source>/core -P layering.cmake")
endif()

set(_allowed_base "")
set(_allowed_device "base")
set(_allowed_bootstrap "base")
set(_allowed_comm "base;device;bootstrap")
set(_allowed_optim "base;device;comm")
set(_allowed_parallel "base;device;bootstrap;comm;optim")
set(_allowed_plan "base;optim;parallel")
set(_layers base device bootstrap comm optim parallel plan)

set(_violations "")
set(_checked 0)
foreach(_layer IN LISTS _layers)
  file(GLOB_RECURSE _files "${CORE}/${_layer}/*.hpp" "${CORE}/${_layer}/*.cpp" "${CORE}/${_layer}/*.cu"
       "${CORE}/${_layer}/*.cuh")
  foreach(_file IN LISTS _files)
    math(EXPR _checked "${_checked} + 1")
    file(RELATIVE_PATH _name "${CORE}" "${_file}")
    if(NOT _layer STREQUAL "base")
      file(STRINGS "${_file}" _dlpack REGEX "DLTensor|#include <dlpack/")
      if(_dlpack)
        list(GET _dlpack 0 _first)
        string(STRIP "${_first}" _first)
        string(APPEND _violations "\n  core/${_name}: ${_first} (only base/ and capi/ read DLTensors)")
      endif()
    endif()
    if(_name MATCHES "^comm/schedules/")
      file(STRINGS "${_file}" _transport REGEX "^#include [<\"](comm/backends/|ucp/|ucs/|uct/|nccl|cuda)")
      foreach(_line IN LISTS _transport)
        string(APPEND _violations "\n  core/${_name}: ${_line} (schedules name no backend or transport)")
      endforeach()
    endif()
    file(STRINGS "${_file}" _includes REGEX "^#include \"[a-z_]+/")
    foreach(_line IN LISTS _includes)
      string(REGEX REPLACE "^#include \"([a-z_]+)/.*" "\\1" _target "${_line}")
      if(_target STREQUAL "parallel" AND _layer STREQUAL "parallel")
        string(REGEX REPLACE "^parallel/([a-z_]+)/.*" "\\1" _own "${_name}")
        string(REGEX REPLACE "^#include \"parallel/([a-z_]+)/.*" "\\1" _used "${_line}")
        if(NOT _used STREQUAL _own AND NOT _used STREQUAL "common" AND NOT _used STREQUAL "mesh")
          string(APPEND _violations
                 "\n  core/${_name}: ${_line} (parallel/${_own} may use only itself, parallel/common and parallel/mesh)")
        endif()
        continue()
      endif()
      if(_target STREQUAL _layer OR _target STREQUAL "dtrain")
        continue()
      endif()
      if(NOT _target IN_LIST _layers OR NOT _target IN_LIST _allowed_${_layer})
        set(_may "${_allowed_${_layer}}")
        if(NOT _may)
          set(_may "no other layer")
        endif()
        string(APPEND _violations "\n  core/${_name}: ${_line} (${_layer} may use: ${_may})")
      endif()
    endforeach()
  endforeach()
endforeach()

if(_checked EQUAL 0)
  message(FATAL_ERROR "no source files under ${CORE}")
endif()
if(_violations)
  message(FATAL_ERROR "includes against the layering:${_violations}")
endif()
message(STATUS "layering: ${_checked} files of core/ include only their own and lower layers, "
               "no strategy another's, no schedule a transport, and none above base/ a DLTensor")
