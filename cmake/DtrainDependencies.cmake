# Finds what libdtrain builds on, through CMake's own packages and pkg-config.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

# UCX: Debian's libucx-dev ships ucx.pc.
pkg_check_modules(UCX REQUIRED IMPORTED_TARGET ucx)

# DLPack: Debian's libdlpack-dev ships a CMake package.
find_package(dlpack REQUIRED CONFIG)

find_package(CUDAToolkit QUIET)
dtrain_resolve_auto(DTRAIN_WITH_CUDA "${CUDAToolkit_FOUND}" "the CUDA toolkit")

set(_nccl_found FALSE)
if(DTRAIN_WITH_CUDA)
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
  if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    set(_nccl_found TRUE)
  endif()
endif()
dtrain_resolve_auto(DTRAIN_WITH_NCCL "${_nccl_found}" "NCCL (with CUDA)")

find_package(MPI QUIET COMPONENTS C)
dtrain_resolve_auto(DTRAIN_WITH_MPI "${MPI_C_FOUND}" "MPI")
