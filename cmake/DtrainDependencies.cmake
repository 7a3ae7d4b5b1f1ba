# Finds what libdtrain builds on, through CMake's own packages and pkg-config.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

# UCX: Debian's libucx-dev ships ucx.pc.
pkg_check_modules(UCX REQUIRED IMPORTED_TARGET ucx)

# DLPack: Debian's libdlpack-dev ships a CMake package.
find_package(dlpack REQUIRED CONFIG)

# JSON and command lines of the tools, benchmarks and examples: header-only
# nlohmann-json and CLI11 for C++ (CMake packages in nlohmann-json3-dev and
# libcli11-dev), cJSON for C (libcjson-dev's libcjson.pc).
find_package(nlohmann_json 3 REQUIRED CONFIG)
find_package(CLI11 2 REQUIRED CONFIG)
pkg_check_modules(CJSON REQUIRED IMPORTED_TARGET libcjson)

# CUDA: the toolkit (cudart, cuBLAS headers) through CMake's CUDAToolkit
# package, and nvcc for the kernels (.cu files compiled into the library).
# OFF builds a CPU-only library even where the toolkit is installed.
set(_cuda_found FALSE)
string(TOUPPER "${DTRAIN_WITH_CUDA}" _cuda_wanted)
if(NOT _cuda_wanted STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    include(CheckLanguage)
    check_language(CUDA)
    if(CMAKE_CUDA_COMPILER)
      set(_cuda_found TRUE)
    endif()
  endif()
endif()
dtrain_resolve_auto(DTRAIN_WITH_CUDA "${_cuda_found}" "the CUDA toolkit (nvcc and cudart)")

if(DTRAIN_WITH_CUDA)
  # H100/H200 by default; any list CMake accepts (-DCMAKE_CUDA_ARCHITECTURES=80;90
  # or "native") overrides it. Set before the language is enabled, or CMake
  # would pick nvcc's own default.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
    set(CMAKE_CUDA_ARCHITECTURES 90 CACHE STRING "CUDA architectures to compile the kernels for")
  endif()
  # The static runtime: libdtrain.so needs no libcudart at run time, and
  # loads the driver itself (no driver: CPU only).
  set(CMAKE_CUDA_RUNTIME_LIBRARY Static)
  enable_language(CUDA)
  # C++17 for the .cu files: CMake 3.25 knows no C++20 flag for nvcc. Kernel
  # sources include only headers that are C++17-clean.
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  set(CMAKE_CUDA_EXTENSIONS OFF)
  # Packages that export /usr/include (dlpack's does) must not reach nvcc as
  # -isystem: the host compiler's #include_next <math.h> then breaks. CMake
  # drops the host compiler's own directories for C++; do the same for CUDA.
  list(APPEND CMAKE_CUDA_IMPLICIT_INCLUDE_DIRECTORIES ${CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES})
endif()

# NCCL: only its header is used at build time. The library is loaded at run
# time (dlopen of libnccl.so.2), so libdtrain runs where NCCL is absent.
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
