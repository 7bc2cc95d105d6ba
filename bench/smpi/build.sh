#!/usr/bin/env bash
# Configure and build zcoll and zcoll-bench for SimGrid SMPI: SimGrid's compiler wrappers
# (smpicc, smpicxx; Debian libsimgrid-dev) as CMake's compilers and as FindMPI's MPI_C_COMPILER,
# so that the library, the bench and FindMPI all see SMPI's <mpi.h> and link libsimgrid. No
# source change and no SMPI-specific code: the same CMakeLists as for MPICH and Open MPI.
#
#   bash bench/smpi/build.sh [BUILD_DIR]      (default: build-smpi in the repository root)
#
# The binaries only run under smpirun (smpicc links them as shared objects that smpirun's
# loader opens once per simulated rank). Tests and apps are off: they need a real mpiexec.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
dir="${1:-$ZCOLL_ROOT/build-smpi}"
if ! command -v smpicc >/dev/null || ! command -v smpicxx >/dev/null; then
  zdie "smpicc/smpicxx not found: install SimGrid (Debian: apt-get install libsimgrid-dev)"
fi
zlog "configure $dir (SimGrid $(smpicc --version 2>/dev/null | head -n1 | sed 's/SimGrid version //'))"
cmake -S "$ZCOLL_ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_C_COMPILER=smpicc -DCMAKE_CXX_COMPILER=smpicxx -DMPI_C_COMPILER=smpicc \
      -DZCOLL_BUILD_TESTS=OFF -DZCOLL_BUILD_APPS=OFF -DZCOLL_BUILD_FUZZ=OFF -DZCOLL_BUILD_BENCH=ON \
      -DZCOLL_WITH_HDF5=OFF
zlog "build $dir: zcoll, zcoll_static, zcoll-bench"
cmake --build "$dir" -j"$(znproc)" --target zcoll zcoll_static zcoll-bench
