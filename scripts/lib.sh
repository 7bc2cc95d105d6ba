# Shared helpers for scripts/*.sh. Source it; do not run it.
# shellcheck disable=SC2034  # arrays below are used by the scripts that source this file
# shellcheck shell=bash

ZCOLL_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

zlog() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
zdie() { zlog "ERROR: $*"; exit 1; }

znproc() { nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2; }

# Debian packages, by purpose. libomp-dev: clang's OpenMP (the fuzz build uses clang).
# gfortran: the drop-in layer's Fortran test (tests/pmpi).
ZCOLL_APT_BUILD=(build-essential cmake pkg-config libmpich-dev mpich libopenmpi-dev openmpi-bin libgtest-dev gfortran)
ZCOLL_APT_FUZZ=(clang libclang-rt-14-dev libomp-dev)
# python3-dev: mpi4py is built from source against each MPI (scripts/test.sh, stage python).
ZCOLL_APT_PYTHON=(python3 python3-venv python3-pip python3-dev)
# The HDF5 component (src/hdf5, ZCOLL_WITH_HDF5): serial HDF5 1.10 for the filter plugin,
# h5dump, and Debian's h5py on the system python3 (the same libhdf5_serial the plugin links),
# with numpy and pytest there; the parallel HDF5 of each MPI, which libzcoll_h5 links so that
# zcoll-bench h5write's raw and filter baselines can use MPI-IO (Debian 12 installs both
# beside libhdf5-dev, headers under /usr/include/hdf5/{serial,mpich,openmpi}; FindHDF5 is
# asked for serial, HDF5_PREFER_PARALLEL OFF); and FUSE 3 for bench/storage/throttlefs, the
# throttled storage target of the write benchmark, and its test.
ZCOLL_APT_HDF5=(libhdf5-dev hdf5-tools python3-h5py python3-numpy python3-pytest
                libhdf5-mpich-dev libhdf5-openmpi-dev fuse3 libfuse3-dev)
# The emulated network of bench/netem and the main job's demo: ip and tc.
ZCOLL_APT_NETEM=(iproute2)

# zpkg_missing PKG...: prints the packages that are not installed (Debian/dpkg only).
zpkg_missing() {
  local p
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed'; then
      printf '%s\n' "$p"
    fi
  done
}

# zapt_ensure PKG...: installs what is missing. As root: apt-get (update first only when
# something is missing). Not root: prints the command and fails.
zapt_ensure() {
  if ! command -v dpkg-query >/dev/null 2>&1; then
    zlog "not a Debian-like system (no dpkg-query): make sure the equivalents of these are installed: $*"
    return 0
  fi
  local missing
  mapfile -t missing < <(zpkg_missing "$@")
  if [ "${#missing[@]}" -eq 0 ]; then
    zlog "apt: all ${#} packages present"
    return 0
  fi
  local cmd="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    zlog "missing Debian packages: ${missing[*]}"
    zlog "install them as root, then run this again:"
    printf '  sudo sh -c "%s"\n' "$cmd" >&2
    return 1
  fi
  zlog "apt: installing ${missing[*]}"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
  mapfile -t missing < <(zpkg_missing "$@")
  [ "${#missing[@]}" -eq 0 ] || { zlog "apt: still missing after install: ${missing[*]}"; return 1; }
}

# Environment that lets both MPIs run in CI containers: Open MPI refuses root and
# more ranks than cores unless told; MPICH ignores these variables.
zmpi_env() {
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_rmaps_base_oversubscribe=1
  # Open MPI 4: no InfiniBand probing noise on machines without it, and no CMA
  # single-copy (it needs ptrace rights that containers often withhold).
  export OMPI_MCA_btl="${OMPI_MCA_btl:-^openib}"
  export OMPI_MCA_btl_vader_single_copy_mechanism="${OMPI_MCA_btl_vader_single_copy_mechanism:-none}"
}

# zmpi_cmake_args MPI: prints (one per line) the CMake arguments that select MPI
# (mpich or openmpi) by its Debian wrapper names.
zmpi_cmake_args() {
  local mpi="$1" cc exe
  cc="$(command -v "mpicc.$mpi" || true)"
  exe="$(command -v "mpiexec.$mpi" || true)"
  if [ -z "$cc" ] || [ -z "$exe" ]; then zlog "mpicc.$mpi / mpiexec.$mpi not found"; return 1; fi
  printf '%s\n' "-DMPI_C_COMPILER=$cc" "-DMPIEXEC_EXECUTABLE=$exe"
  # Every language's wrapper of the same MPI: FindMPI otherwise takes the system's default
  # (Debian's alternatives) for C++ and Fortran, which may be the other MPI.
  local w
  for w in CXX:mpicxx Fortran:mpifort; do
    if command -v "${w#*:}.$mpi" >/dev/null; then printf '%s\n' "-DMPI_${w%%:*}_COMPILER=$(command -v "${w#*:}.$mpi")"; fi
  done
  if [ "$mpi" = openmpi ]; then
    # So that plain `ctest` in build-openmpi also works as root and with more ranks than cores.
    local pre="--oversubscribe"
    [ "$(id -u)" -eq 0 ] && pre="$pre;--allow-run-as-root"
    printf '%s\n' "-DMPIEXEC_PREFLAGS=$pre"
  fi
}

# zbuild MPI BUILD_TYPE [extra cmake args...]: configure and build build-MPI.
zbuild() {
  local mpi="$1" type="$2"; shift 2
  local dir="$ZCOLL_ROOT/build-$mpi" args
  mapfile -t args < <(zmpi_cmake_args "$mpi") || return 1
  [ "${#args[@]}" -gt 0 ] || return 1
  zlog "configure $dir ($mpi, $type)"
  cmake -S "$ZCOLL_ROOT" -B "$dir" -DCMAKE_BUILD_TYPE="$type" "${args[@]}" "$@" || return 1
  zlog "build $dir"
  cmake --build "$dir" -j"$(znproc)" || return 1
}

# ---- the Python package (python/, docs/python.md)
# One venv per MPI under .cache/python (ignored by git, kept between runs), with mpi4py
# built from source against that MPI: MPICH and Open MPI are not ABI compatible, and
# zcoll's package must talk to the same MPI as mpi4py. Built mpi4py wheels are cached
# outside the checkout (ZCOLL_WHEEL_CACHE, default ~/.cache/zcoll/wheels), keyed by the
# Python version and the MPI compiler's command line, so only the first run on a machine
# compiles mpi4py, a fresh clone included.
ZCOLL_PY_CACHE="$ZCOLL_ROOT/.cache/python"
ZCOLL_MPI4PY_VERSION="${ZCOLL_MPI4PY_VERSION:-4.1.2}"
ZCOLL_WHEEL_CACHE="${ZCOLL_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/zcoll/wheels}"

# zpy_wheel_dir MPI: where the mpi4py wheel for MPI and this Python is cached.
zpy_wheel_dir() {
  local mpi="$1" py="${PYTHON:-python3}" pytag key
  pytag="$("$py" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')" || return 1
  key="$("mpicc.$mpi" -show 2>/dev/null | sha256sum | cut -c1-12)"
  echo "$ZCOLL_WHEEL_CACHE/mpi4py-$ZCOLL_MPI4PY_VERSION/$pytag/$mpi-$key"
}

# zpy_mpi4py_wheel MPI: builds (once) the mpi4py wheel for MPI into the cache. -O0: the
# tests need mpi4py to work, not to be fast (its compiled module is one large C file, and
# optimising it takes most of this stage's time on two cores); the data moves in libmpi.
zpy_mpi4py_wheel() {
  local mpi="$1" dir
  dir="$(zpy_wheel_dir "$mpi")" || return 1
  if compgen -G "$dir/mpi4py-$ZCOLL_MPI4PY_VERSION-*.whl" >/dev/null; then
    zlog "mpi4py $ZCOLL_MPI4PY_VERSION for $mpi: cached"
    return 0
  fi
  zlog "building mpi4py $ZCOLL_MPI4PY_VERSION against $mpi (mpicc.$mpi)"
  zpy_venv "$mpi" || return 1
  MPICC="mpicc.$mpi" CFLAGS="${ZCOLL_MPI4PY_CFLAGS:--O0}" \
    "$ZCOLL_PY_CACHE/venv-$mpi/bin/python" -m pip wheel -q --disable-pip-version-check --no-deps \
    --no-cache-dir --no-binary mpi4py -w "$dir" "mpi4py==$ZCOLL_MPI4PY_VERSION"
  # --no-cache-dir: pip's wheel cache is keyed by the sdist alone, so it would hand the
  # wheel built for one MPI to the other (zpy_install checks which MPI it got).
}

# zpy_venv MPI: creates .cache/python/venv-MPI with python/requirements-test.txt.
zpy_venv() {
  local mpi="$1" venv="$ZCOLL_PY_CACHE/venv-$1" py="${PYTHON:-python3}"
  local req="$ZCOLL_ROOT/python/requirements-test.txt" want
  if [ ! -x "$venv/bin/python" ]; then
    zlog "creating $venv with $($py --version 2>&1)"
    "$py" -m venv "$venv" || { zlog "python venv failed (Debian: apt-get install python3-venv)"; return 1; }
  fi
  want="$(sha256sum "$req" | cut -d' ' -f1)"
  if [ "$(cat "$venv/.zcoll-requirements.sha256" 2>/dev/null)" != "$want" ]; then
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req" || return 1
    echo "$want" > "$venv/.zcoll-requirements.sha256"
  fi
}

# zpy_install MPI: mpi4py (cached wheel) and zcoll (pip install . against mpicc.MPI, CMake
# build tree kept in build-py-MPI) into the venv of MPI.
zpy_install() {
  local mpi="$1" venv="$ZCOLL_PY_CACHE/venv-$1"
  zpy_venv "$mpi" && zpy_mpi4py_wheel "$mpi" || return 1
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-index --force-reinstall \
    --no-deps "$(zpy_wheel_dir "$mpi")/mpi4py-$ZCOLL_MPI4PY_VERSION"-*.whl || return 1
  local want=MPICH lib
  [ "$mpi" = openmpi ] && want="Open MPI"
  lib="$("$venv/bin/python" -c 'from mpi4py import MPI; print(MPI.Get_library_version().replace(chr(0), "").splitlines()[0])')"
  case "$lib" in
    *"$want"*) zlog "mpi4py in venv-$mpi: $lib" ;;
    *) zlog "mpi4py in venv-$mpi runs '$lib', not $want: remove $(zpy_wheel_dir "$mpi")"; return 1 ;;
  esac
  MPICC="mpicc.$mpi" "$venv/bin/python" -m pip install -q --disable-pip-version-check \
    --no-build-isolation --no-deps -C build-dir="$ZCOLL_ROOT/build-py-$mpi" \
    -C build.tool-args=-j"$(znproc)" -C cmake.define.ZCOLL_PYTHON_REQUIRE_MPI=ON "$ZCOLL_ROOT"
}
