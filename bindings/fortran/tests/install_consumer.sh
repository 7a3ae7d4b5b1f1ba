#!/usr/bin/env bash
# Installs the C library and the Fortran binding (their install rules alone,
# so that the rest of the tree need not be built) into a scratch prefix and
# builds Fortran programs against what they installed, as an application would: the dtrun test program
# with the installed modules and libdtrain_fortran.a (run as a world of one),
# and, when mpif90 is given, the MPI example with the installed dtrain_mpi.f90
# (run under mpirun on one rank).
#
#   install_consumer.sh BUILD_DIR SOURCE_DIR FORTRAN_COMPILER [MPIF90 MPIRUN]
#
# LINK_FLAGS, when set, are added to the link: the build's own, such as the
# sanitizer runtime that an instrumented libdtrain needs first.
set -euo pipefail
build_dir=$(cd "$1" && pwd)
source_dir=$(cd "$2" && pwd)
fc=$3
mpif90=${4:-}
mpirun=${5:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for dir in capi bindings/fortran; do
  cmake -DCMAKE_INSTALL_PREFIX="$work/prefix" -P "$build_dir/$dir/cmake_install.cmake" >>"$work/install.log"
done
archive=$(find "$work/prefix" -name libdtrain_fortran.a | head -n 1)
module=$(find "$work/prefix" -name dtrain.mod | head -n 1)
mpi_source=$(find "$work/prefix" -name dtrain_mpi.f90 | head -n 1)
for what in archive module mpi_source; do
  [ -n "${!what}" ] || { echo "the install lacks the Fortran binding's $what"; exit 1; }
done
libdir=$(dirname "$archive")
moddir=$(dirname "$module")
read -r -a extra <<<"${LINK_FLAGS:-}"
link=(-L"$libdir" -ldtrain_fortran -ldtrain -Wl,-rpath,"$libdir" "${extra[@]}")
examples="$source_dir/bindings/fortran/examples"

cd "$work"
unset LD_LIBRARY_PATH
"$fc" -I"$moddir" "$examples/linear_model.f90" "$source_dir/bindings/fortran/tests/dtrun_test.f90" \
      "${link[@]}" -o dtrun_test
./dtrun_test
echo "installed modules and library: a Fortran program builds and runs"

if [ -n "$mpif90" ]; then
  mkdir mpi && cd mpi
  "$mpif90" -I"$moddir" "$mpi_source" "$examples/linear_model.f90" "$examples/train_mpi.f90" \
            "${link[@]}" -o train_mpi
  # OpenMPI keeps what MPI_Init allocates to the end, which LeakSanitizer
  # (with a sanitizer build's LINK_FLAGS) would report as the program's.
  ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" \
    "$mpirun" --allow-run-as-root --oversubscribe -np 1 ./train_mpi
  echo "installed dtrain_mpi.f90: the MPI example builds and runs"
fi
