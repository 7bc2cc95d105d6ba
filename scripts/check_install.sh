#!/usr/bin/env bash
# Checks that an installed zcoll is usable by other projects:
#   1. cmake --install BUILD_DIR (components runtime and dev) into a temporary prefix;
#   2. tests/consumer (find_package(zcoll 0.1 REQUIRED)): configure with CMAKE_PREFIX_PATH,
#      build, ctest (C and C++ programs; shared and static; codec and MPI library);
#   3. tests/consumer/c_only: a C-only project using COMPONENTS codec;
#   4. pkg-config with PKG_CONFIG_PATH: the C program with plain cc against zcoll_codec
#      (shared, then static), and against zcoll with the MPI wrapper zcoll was built with.
#
#   scripts/check_install.sh BUILD_DIR      (exits non-zero on any failure)
# Set ZCOLL_KEEP_TMP=1 to keep the temporary directory.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ $# -eq 1 ] || zdie "usage: $0 BUILD_DIR"
build="$(cd "$1" && pwd)" || zdie "no such directory: $1"
cache="$build/CMakeCache.txt"
[ -f "$cache" ] || zdie "$build is not a configured CMake build directory"

cache_get() { sed -n "s/^$1:[A-Z]*=//p" "$cache" | head -n1; }
mpicc="$(cache_get MPI_C_COMPILER)"
mpiexec="$(cache_get MPIEXEC_EXECUTABLE)"
cc_="$(cache_get CMAKE_C_COMPILER)"
cxx_="$(cache_get CMAKE_CXX_COMPILER)"
libdir_rel="$(cache_get CMAKE_INSTALL_LIBDIR)"
[ -n "$libdir_rel" ] || libdir_rel=lib

tmp="$(mktemp -d "${TMPDIR:-/tmp}/zcoll-install.XXXXXX")"
cleanup() {
  { set +x; } 2>/dev/null
  if [ "${ZCOLL_KEEP_TMP:-0}" = 1 ]; then zlog "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
prefix="$tmp/prefix"
zmpi_env

# Only the package's components (libraries, header, CMake and pkg-config files): the check
# is about the library package, and must not depend on the tests or zcoll-bench building.
zlog "install $build -> $prefix (components runtime, dev)"
for comp in runtime dev; do
  cmake --install "$build" --prefix "$prefix" --component "$comp" >> "$tmp/install.log" 2>&1 \
    || { cat "$tmp/install.log"; zdie "cmake --install --component $comp failed"; }
done
for f in include/zcoll.h "$libdir_rel/cmake/zcoll/zcollConfig.cmake" \
         "$libdir_rel/cmake/zcoll/zcollConfigVersion.cmake" \
         "$libdir_rel/pkgconfig/zcoll.pc" "$libdir_rel/pkgconfig/zcoll_codec.pc" \
         "$libdir_rel/libzcoll.so" "$libdir_rel/libzcoll.a" \
         "$libdir_rel/libzcoll_codec.so" "$libdir_rel/libzcoll_codec.a"; do
  [ -e "$prefix/$f" ] || zdie "not installed: $f"
done

# The consumer does not pass MPI_C_COMPILER / MPIEXEC_EXECUTABLE: zcollConfig.cmake
# defaults them to the ones zcoll was built with. Same C/C++ compilers as the build.
src="$ZCOLL_ROOT/tests/consumer"
zlog "consumer (CMake): configure, build, ctest"
cmake -S "$src" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_C_COMPILER="$cc_" -DCMAKE_CXX_COMPILER="$cxx_" -DCMAKE_BUILD_TYPE=Release \
      > "$tmp/consumer-configure.log" 2>&1 \
  || { cat "$tmp/consumer-configure.log"; zdie "consumer: configure failed"; }
if grep -q "zcoll was built with" "$tmp/consumer-configure.log"; then
  cat "$tmp/consumer-configure.log"; zdie "consumer: MPI mismatch warning"
fi
found_mpicc="$(sed -n 's/^MPI_C_COMPILER:[A-Z]*=//p' "$tmp/consumer/CMakeCache.txt")"
found_mpiexec="$(sed -n 's/^MPIEXEC_EXECUTABLE:[A-Z]*=//p' "$tmp/consumer/CMakeCache.txt")"
[ "$(readlink -f "$found_mpicc")" = "$(readlink -f "$(command -v "$mpicc" || echo "$mpicc")")" ] \
  || zdie "consumer picked MPI_C_COMPILER=$found_mpicc, zcoll was built with $mpicc"
[ "$(readlink -f "$found_mpiexec")" = "$(readlink -f "$mpiexec")" ] \
  || zdie "consumer picked MPIEXEC_EXECUTABLE=$found_mpiexec, zcoll was built with $mpiexec"
cmake --build "$tmp/consumer" -j"$(znproc)" || zdie "consumer: build failed"
ctest --test-dir "$tmp/consumer" --output-on-failure --no-tests=error --timeout 120 || zdie "consumer: tests failed"

zlog "consumer (CMake, C only, COMPONENTS codec)"
cmake -S "$src/c_only" -B "$tmp/c_only" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_C_COMPILER="$cc_" -DCMAKE_BUILD_TYPE=Release > "$tmp/c_only.log" 2>&1 \
  || { cat "$tmp/c_only.log"; zdie "c_only: configure failed"; }
cmake --build "$tmp/c_only" || zdie "c_only: build failed"
ctest --test-dir "$tmp/c_only" --output-on-failure --no-tests=error --timeout 120 || zdie "c_only: tests failed"

zlog "consumer (pkg-config)"
export PKG_CONFIG_PATH="$prefix/$libdir_rel/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
libdir="$(pkg-config --variable=libdir zcoll_codec)"
[ "$(pkg-config --modversion zcoll_codec)" = "$(pkg-config --modversion zcoll)" ] || zdie "pkg-config versions differ"
cc="${CC:-cc}"
set -x
# shellcheck disable=SC2046
"$cc" -std=c99 -Wall -Werror "$src/consumer.c" -o "$tmp/pc_shared" \
  $(pkg-config --cflags --libs zcoll_codec) -lm -Wl,-rpath,"$libdir"
"$tmp/pc_shared"
# Static: the same flags with libzcoll_codec.a picked and Libs.private added.
# shellcheck disable=SC2046
"$cc" -std=c99 -Wall -Werror "$src/consumer.c" -o "$tmp/pc_static" \
  $(pkg-config --cflags zcoll_codec) \
  $(pkg-config --static --libs zcoll_codec | sed 's/-lzcoll_codec\b/-l:libzcoll_codec.a/') -lm
"$tmp/pc_static"
{ set +x; } 2>/dev/null
if ldd "$tmp/pc_static" | grep -q zcoll; then zdie "pc_static is linked dynamically against zcoll"; fi
set -x
# zcoll.pc with the MPI wrapper zcoll was built with; two ranks.
# shellcheck disable=SC2046
"$mpicc" -std=c99 -Wall -Werror -DZCOLL_CONSUMER_MPI "$src/consumer.c" -o "$tmp/pc_mpi" \
  $(pkg-config --cflags --libs zcoll) -lm -Wl,-rpath,"$libdir"
"$mpiexec" -n 2 "$tmp/pc_mpi"
{ set +x; } 2>/dev/null
# zcoll.pc with the plain compiler: MPI include flags come through Requires.private, the
# MPI library from the module zcoll.pc names.
mpi_module="$(pkg-config --variable=mpi_module zcoll)"
if [ -n "$mpi_module" ] && pkg-config --exists "$mpi_module"; then
  set -x
  # shellcheck disable=SC2046
  "$cc" -std=c99 -Wall -Werror -DZCOLL_CONSUMER_MPI "$src/consumer.c" -o "$tmp/pc_mpi_cc" \
    $(pkg-config --cflags --libs zcoll) $(pkg-config --libs "$mpi_module") -lm -Wl,-rpath,"$libdir"
  "$mpiexec" -n 2 "$tmp/pc_mpi_cc"
  { set +x; } 2>/dev/null
else
  zlog "zcoll.pc names no MPI pkg-config module ('$mpi_module'): plain-cc check skipped"
fi
# The HDF5 filter plugin (component hdf5), when this build has it: installed where
# ZCOLL_HDF5_PLUGIN_INSTALL_DIR says, loadable with nothing but HDF5_PLUGIN_PATH.
plugin_dir_rel="$(cache_get ZCOLL_HDF5_PLUGIN_INSTALL_DIR)"
if [ -n "$plugin_dir_rel" ] && [ -f "$build/hdf5-plugin/libH5Zzcoll.so" ]; then
  zlog "HDF5 plugin: install component hdf5"
  cmake --install "$build" --prefix "$prefix" --component hdf5 >> "$tmp/install.log" 2>&1 \
    || { cat "$tmp/install.log"; zdie "cmake --install --component hdf5 failed"; }
  plugin="$prefix/$plugin_dir_rel/libH5Zzcoll.so"
  for f in "$plugin" "$prefix/include/zcoll_h5.h"; do [ -e "$f" ] || zdie "not installed: $f"; done
  if ldd "$plugin" | grep -Eq 'not found|libzcoll'; then ldd "$plugin"; zdie "the installed plugin needs other libraries"; fi
  if [ -x "$build/tests/hdf5/h5_sample_writer" ] && command -v h5dump >/dev/null; then
    "$build/tests/hdf5/h5_sample_writer" "$ZCOLL_ROOT/data" "$tmp/plugin_sample.h5" >/dev/null
    out="$(HDF5_PLUGIN_PATH="$prefix/$plugin_dir_rel" h5dump -d /f32_2d -y -w 0 -m '%.9g' "$tmp/plugin_sample.h5" 2>&1 || true)"
    n="$(printf '%s\n' "$out" | awk '/^ *DATA *\{/ {on = 1; next} on && /^ *\}/ {exit} on && /[0-9]/ {n++} END {print n + 0}')"
    [ "$n" -eq 4200 ] || zdie "h5dump with the installed plugin printed $n values, not 4200"
    zlog "HDF5 plugin: h5dump read 4200 values through the installed $plugin_dir_rel/libH5Zzcoll.so"
  fi
else
  zlog "HDF5 plugin not built in $build: its install check skipped"
fi
zlog "check_install: OK ($build)"
