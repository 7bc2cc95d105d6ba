#!/usr/bin/env bash
# The main job (README): set the machine up, build with MPICH in build-mpich/, then run the
# image stacking demo (apps/image_stacking): 2 ranks sum real images with zcoll_allreduce and
# MPI_Allreduce, over an emulated 1 Gbit/s link when run as root (network namespaces + tc),
# on shared memory otherwise; it prints time, speedup, ratio, PSNR, NRMSE and max error and
# writes PNGs into image_stacking_out/.
#
#   scripts/main.sh [zcoll-image-stacking options...]   e.g. --size 2048x2048 --eb 1e-3 --json
#   scripts/main.sh codec [zcoll-bench codec options...] the codec table over the real fields
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ZCOLL_ROOT"

bash scripts/bootstrap.sh --mpi mpich
if [ "${1:-}" = codec ]; then
  shift
  bench="build-mpich/bench/zcoll-bench"
  [ -x "$bench" ] || zdie "$bench was not built"
  zlog "$bench codec $*"
  exec "$bench" codec "$@"
fi
# The emulated network needs ip and tc; without them (or without root) the demo runs on
# shared memory and says so.
if [ "$(id -u)" -eq 0 ]; then zapt_ensure "${ZCOLL_APT_NETEM[@]}" || zlog "no iproute2: the demo will use shared memory"; fi
exec bash apps/image_stacking/run_demo.sh build-mpich "$@"
