#!/usr/bin/env bash
# Sets up a Debian 12 machine for zcoll and builds it. Idempotent: run it as often as you like.
#
#   scripts/bootstrap.sh [options] [-- extra cmake args]
#     --mpi mpich|openmpi|all   which build(s) to make: build-<mpi>/ (default: mpich)
#     --build-type T            CMAKE_BUILD_TYPE (default: Release)
#     --python                  also create .venv/ and pip-install bench/requirements.txt
#     --no-build                only install packages (and the venv with --python)
#     --no-apt                  do not check Debian packages
#
# Packages (scripts/lib.sh): ZCOLL_APT_BUILD, ZCOLL_APT_FUZZ and ZCOLL_APT_HDF5 (serial and
# parallel HDF5, h5dump, python3-h5py, FUSE 3: the HDF5 component, its tests and benchmark). Missing ones are installed
# with apt-get when run as root; otherwise the exact apt-get command is printed and the
# script exits 1.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

mpis=(mpich)
build_type=Release
want_python=0
do_build=1
do_apt=1
cmake_extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --mpi)
      [ $# -ge 2 ] || zdie "--mpi needs a value"
      case "$2" in
        mpich|openmpi) mpis=("$2") ;;
        all) mpis=(mpich openmpi) ;;
        *) zdie "--mpi: mpich, openmpi or all, not '$2'" ;;
      esac
      shift 2 ;;
    --build-type) [ $# -ge 2 ] || zdie "--build-type needs a value"; build_type="$2"; shift 2 ;;
    --python) want_python=1; shift ;;
    --no-build) do_build=0; shift ;;
    --no-apt) do_apt=0; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    --) shift; cmake_extra=("$@"); break ;;
    *) zdie "unknown option '$1' (see --help)" ;;
  esac
done

cd "$ZCOLL_ROOT"

if [ "$do_apt" -eq 1 ]; then
  # HDF5: the optional filter plugin (src/hdf5) and its tests; without it they are skipped.
  pkgs=("${ZCOLL_APT_BUILD[@]}" "${ZCOLL_APT_FUZZ[@]}" "${ZCOLL_APT_HDF5[@]}")
  [ "$want_python" -eq 1 ] && pkgs+=("${ZCOLL_APT_PYTHON[@]}")
  zapt_ensure "${pkgs[@]}"
fi

if [ "$want_python" -eq 1 ]; then
  py="${PYTHON:-python3}"
  command -v "$py" >/dev/null || zdie "$py not found"
  if [ ! -x .venv/bin/python ]; then
    zlog "creating .venv with $($py --version 2>&1)"
    "$py" -m venv .venv || zdie "python venv failed (Debian: apt-get install python3-venv)"
  fi
  req="bench/requirements.txt"
  stamp=".venv/.zcoll-requirements.sha256"
  want="$(sha256sum "$req" | cut -d' ' -f1)"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    zlog "pip install -r $req"
    .venv/bin/python -m pip install -q --disable-pip-version-check -r "$req"
    echo "$want" > "$stamp"
  else
    zlog ".venv is up to date with $req"
  fi
  .venv/bin/python -c 'import numpy, zfpy, pysz' || zdie ".venv cannot import numpy/zfpy/pysz"
fi

if [ "$do_build" -eq 1 ]; then
  zmpi_env
  for mpi in "${mpis[@]}"; do
    zbuild "$mpi" "$build_type" "${cmake_extra[@]}" || zdie "build-$mpi failed"
  done
fi
zlog "bootstrap done"
