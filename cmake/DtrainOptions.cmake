# Build options. AUTO options are resolved to ON or OFF in DtrainDependencies
# according to what this machine has.
set(DTRAIN_WITH_CUDA AUTO CACHE STRING "CUDA device support (AUTO: when the toolkit is found)")
set(DTRAIN_WITH_NCCL AUTO CACHE STRING "NCCL backend (AUTO: when CUDA and NCCL are found)")
set(DTRAIN_WITH_MPI AUTO CACHE STRING "MPI examples and tests (AUTO: when MPI is found)")
set(DTRAIN_BUILD_PYTHON AUTO CACHE STRING "Python binding (AUTO: when SWIG and Python are found)")
set(DTRAIN_BUILD_RUST AUTO CACHE STRING "Rust binding tests (AUTO: when cargo is found)")
set(DTRAIN_BUILD_JULIA AUTO CACHE STRING "Julia binding tests (AUTO: when julia is found)")
set(DTRAIN_BUILD_FORTRAN AUTO CACHE STRING "Fortran binding (AUTO: when a Fortran compiler is found)")
option(DTRAIN_BUILD_TESTS "Build the test suite" ON)
option(DTRAIN_WARNINGS_AS_ERRORS "Treat compiler warnings as errors" OFF)

foreach(_opt DTRAIN_WITH_CUDA DTRAIN_WITH_NCCL DTRAIN_WITH_MPI DTRAIN_BUILD_PYTHON DTRAIN_BUILD_RUST
             DTRAIN_BUILD_JULIA DTRAIN_BUILD_FORTRAN)
  set_property(CACHE ${_opt} PROPERTY STRINGS AUTO ON OFF)
  string(TOUPPER "${${_opt}}" _value)
  if(NOT _value MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "${_opt}=${${_opt}}: use AUTO, ON or OFF")
  endif()
endforeach()

# dtrain_resolve_auto(<option> <found>): AUTO becomes ON when <found>; ON
# without <found> is an error naming what is missing.
function(dtrain_resolve_auto option found what)
  string(TOUPPER "${${option}}" _value)
  if(_value STREQUAL "AUTO")
    if(found)
      set(${option} ON PARENT_SCOPE)
    else()
      set(${option} OFF PARENT_SCOPE)
    endif()
  elseif(_value STREQUAL "ON" AND NOT found)
    message(FATAL_ERROR "${option}=ON but ${what} was not found")
  else()
    set(${option} ${_value} PARENT_SCOPE)
  endif()
endfunction()
