# dtrain_warnings(<target>): the project's warning set, as errors when
# DTRAIN_WARNINGS_AS_ERRORS is on (the CI build).
function(dtrain_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:C,CXX>:-Wall -Wextra -Wshadow -Wpedantic>
    $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor>
    $<$<AND:$<COMPILE_LANGUAGE:C,CXX>,$<BOOL:${DTRAIN_WARNINGS_AS_ERRORS}>>:-Werror>
    # Kernels: nvcc's own warnings and the host compiler's on the host side.
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>
    $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<BOOL:${DTRAIN_WARNINGS_AS_ERRORS}>>:-Werror=all-warnings>)
  # GCC 12 reports a false -Wrestrict inside std::string concatenation at -O2
  # and above (GCC bug 105329, fixed in 13).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
  endif()
endfunction()
