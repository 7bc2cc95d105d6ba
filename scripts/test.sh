#!/usr/bin/env bash
# The full test run (README; CI runs it through .ci/run). From a fresh Debian 12 machine:
#   1. scripts/bootstrap.sh --no-build          missing apt packages (as root)
#   2. for MPI in mpich openmpi:
#        configure + build (Release) in build-<MPI>, ctest        stage "ctest-<MPI>"
#        (every label, the HDF5 filter plugin's "hdf5" tests included when HDF5 is found;
#        the MPI-free "codec" and "schedule" labels in the first MPI's build only)
#        scripts/check_install.sh build-<MPI>                     stage "install-<MPI>"
#      bench/netem/run.sh (the main command's harness) and the demo over an emulated
#        link, tests/netem/check_run_sh.sh; as root, with MPICH        stage "netem"
#   3. the fuzz targets (clang, ZCOLL_BUILD_FUZZ=ON) in build-fuzz, ctest  stage "fuzz"
#   4. scripts/check_smpi.sh: build with SimGrid's smpicc, one simulated allreduce  stage "smpi"
#   5. ASan + UBSan build (ZCOLL_SANITIZE=ON, MPICH, RelWithDebInfo) in build-asan: the
#      codec tests (less the two stream-digest comparisons) and every MPI test of the build,
#      any finding fatal                                               stage "sanitize"
#   6. ThreadSanitizer build (ZCOLL_TSAN=ON, clang, MPICH, RelWithDebInfo) in build-tsan:
#      the codec tests (less the corrupt-stream cases) on 2-3 threads, the golden stream
#      digests (a second compiler's streams), the collectives on 1-3 codec threads and
#      from 3 threads at once (also through the drop-in layer), and the HDF5 writer's
#      helper thread                                                   stage "tsan"
#   7. the Python package (python/): for each MPI, a venv in .cache/python with mpi4py built
#      against it, pip install ., pytest, and the collectives' tests under mpiexec -n 2 and
#      -n 3; plus a codec-only build (no MPI)                          stage "python"
# Every stage runs even when an earlier one failed (except after a failed bootstrap); the
# last line is "test.sh: N passed, M failed" (", K skipped" where a stage could not run here
# and said why) and the exit status is non-zero if M > 0.
#
# Environment: ZCOLL_TEST_MPIS (default "mpich openmpi"), ZCOLL_CTEST_JOBS (default nproc),
# ZCOLL_CTEST_TIMEOUT (seconds per test without its own TIMEOUT; default 300).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ZCOLL_ROOT"

read -r -a mpis <<< "${ZCOLL_TEST_MPIS:-mpich openmpi}"
jobs="${ZCOLL_CTEST_JOBS:-$(znproc)}"
timeout="${ZCOLL_CTEST_TIMEOUT:-300}"
ctest_args=(--output-on-failure --no-tests=error --timeout "$timeout" -j "$jobs")

names=() results=() times=() notes=()
t_all=$SECONDS

# record NAME RESULT SECONDS NOTE
record() { names+=("$1"); results+=("$2"); times+=("$3"); notes+=("${4:-}"); }

# stage NAME CMD...: runs CMD in a subshell with errexit on and records PASS/FAIL (SKIP for
# exit status 77: CMD printed why it cannot run here); sets stage_rc. It always returns 0
# and must not be called from a condition (if, ||, &&): bash would then ignore errexit
# inside CMD as well.
stage_rc=0
stage() {
  local name="$1" t0=$SECONDS dt; shift
  printf '\n=============== %s: %s\n' "$name" "$*"
  set +e
  ( set -euo pipefail; "$@" )
  stage_rc=$?
  set -e
  dt=$((SECONDS - t0))
  if [ "$stage_rc" -eq 0 ]; then
    record "$name" PASS "$dt"
    printf '=============== %s: PASS (%ss)\n' "$name" "$dt"
  elif [ "$stage_rc" -eq 77 ]; then
    record "$name" SKIP "$dt" "cannot run here (its output says why)"
    printf '=============== %s: SKIP (%ss)\n' "$name" "$dt"
  else
    record "$name" FAIL "$dt" "exit status $stage_rc"
    printf '=============== %s: FAIL (exit status %s, %ss)\n' "$name" "$stage_rc" "$dt"
  fi
  return 0
}

summary() {
  local i passed=0 failed=0 skipped=0
  printf '\n=============== summary\n'
  for i in "${!names[@]}"; do
    printf '  %-16s %-7s %5ss  %s\n' "${names[$i]}" "${results[$i]}" "${times[$i]}" "${notes[$i]}"
    case "${results[$i]}" in
      PASS) passed=$((passed + 1)) ;;
      FAIL) failed=$((failed + 1)) ;;
      SKIP) skipped=$((skipped + 1)) ;;
    esac
  done
  printf '  total time %ss\n' "$((SECONDS - t_all))"
  local skips=""
  [ "$skipped" -eq 0 ] || skips=", $skipped skipped"
  echo "test.sh: $passed passed, $failed failed$skips"
  [ "$failed" -eq 0 ]
}

zmpi_env

# ---- 1. packages
stage bootstrap bash scripts/bootstrap.sh --no-build
if [ "$stage_rc" -ne 0 ]; then
  for mpi in "${mpis[@]}"; do
    record "ctest-$mpi" FAIL 0 "not run: bootstrap failed"
    record "install-$mpi" FAIL 0 "not run: bootstrap failed"
  done
  record netem FAIL 0 "not run: bootstrap failed"
  record fuzz FAIL 0 "not run: bootstrap failed"
  record smpi FAIL 0 "not run: bootstrap failed"
  record sanitize FAIL 0 "not run: bootstrap failed"
  record tsan FAIL 0 "not run: bootstrap failed"
  record python FAIL 0 "not run: bootstrap failed"
  summary
  exit 1
fi
# bootstrap is a prerequisite, not one of the counted stages
unset 'names[0]' 'results[0]' 'times[0]' 'notes[0]'
names=("${names[@]}") results=("${results[@]}") times=("${times[@]}") notes=("${notes[@]}")

# ---- 2. each MPI: build + ctest, install check
ctest_mpi() {
  local mpi="$1" codec_tests=ON
  # The codec and schedule suites test nothing that depends on the MPI (the codec library
  # links none; zcoll-bench homomorphic makes no collective call), and the same compiler and
  # flags would build them alike in every build-<MPI>: they are built and run in the first
  # one only (about 60 s of compilation less in the second).
  [ "$mpi" = "${mpis[0]}" ] || codec_tests=OFF
  # Tests and bench ON explicitly: a build dir configured otherwise (e.g. by hand) is reset.
  zbuild "$mpi" Release -DZCOLL_BUILD_TESTS=ON -DZCOLL_BUILD_CODEC_TESTS="$codec_tests" \
         -DZCOLL_BUILD_BENCH=ON -DZCOLL_BUILD_FUZZ=OFF
  ctest --test-dir "build-$mpi" "${ctest_args[@]}"
  # Say whether the HDF5 plugin's tests were part of it (they are not added without HDF5).
  zlog "build-$mpi: HDF5 filter plugin tests (label hdf5): $(ctest --test-dir "build-$mpi" -N -L hdf5 | sed -n 's/^Total Tests: //p')"
}
for mpi in "${mpis[@]}"; do
  stage "ctest-$mpi" ctest_mpi "$mpi"
  # The install check needs the four libraries (not the tests): run it whenever they build.
  if [ -f "build-$mpi/CMakeCache.txt" ] && cmake --build "build-$mpi" -j"$(znproc)" \
       --target zcoll zcoll_static zcoll_codec zcoll_codec_static >/dev/null 2>&1; then
    stage "install-$mpi" bash scripts/check_install.sh "build-$mpi"
  else
    record "install-$mpi" FAIL 0 "not run: build-$mpi did not build"
    echo "=============== install-$mpi: FAIL (not run: build-$mpi did not build)"
  fi
done

# ---- the emulated network the main command runs on (root only; MPICH's build)
netem() {
  [ "$(id -u)" -ne 0 ] || zapt_ensure "${ZCOLL_APT_NETEM[@]}"
  bash tests/netem/check_run_sh.sh build-mpich
}
if [[ " ${mpis[*]} " == *" mpich "* ]]; then stage netem netem; fi

# The sanitizer and fuzz builds: RelWithDebInfo with line tables only (-g1). Their reports
# keep every frame's function, file and line; the compiler has no variables' locations to
# track, which took about 15% of the ASan build's CPU time.
san_build_type=(-DCMAKE_BUILD_TYPE=RelWithDebInfo
                -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG")

# ---- 3. fuzz target (clang + libFuzzer)
fuzz() {
  local args
  mapfile -t args < <(zmpi_cmake_args mpich)
  cmake -S . -B build-fuzz "${san_build_type[@]}" \
        -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
        -DZCOLL_BUILD_FUZZ=ON -DZCOLL_BUILD_TESTS=OFF -DZCOLL_BUILD_BENCH=OFF "${args[@]}"
  # Only what the fuzz tests run (the library, the layer and the apps built with clang
  # would take as long again; the tsan stage builds the library and the layer with clang).
  cmake --build build-fuzz -j"$(znproc)" --target zcoll_fuzz_all
  ctest --test-dir build-fuzz "${ctest_args[@]}"
}
if [ -f fuzz/CMakeLists.txt ]; then
  stage fuzz fuzz
else
  echo
  echo "=============== fuzz: SKIPPED: fuzz/CMakeLists.txt does not exist (yet), so there is no fuzz target to build"
fi

# ---- 4. SimGrid SMPI: zcoll and zcoll-bench build with smpicc, one simulated allreduce checked
stage smpi bash scripts/check_smpi.sh

# ---- 5. AddressSanitizer + UndefinedBehaviorSanitizer: every codec test and every MPI test of
# the build (the MPI tests' ASAN_OPTIONS are in cmake/mpi_tests.cmake; the drop-in layer's tests
# are not built: a sanitized layer cannot be preloaded).
# detect_leaks=0: the MPI libraries leak by design at MPI_Finalize.
sanitize() {
  local args rc=0
  mapfile -t args < <(zmpi_cmake_args mpich)
  cmake -S . -B build-asan "${san_build_type[@]}" -DZCOLL_SANITIZE=ON \
        -DZCOLL_BUILD_TESTS=ON -DZCOLL_BUILD_BENCH=OFF -DZCOLL_BUILD_APPS=OFF -DZCOLL_BUILD_FUZZ=OFF "${args[@]}"
  cmake --build build-asan -j"$(znproc)"
  export ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  # Both runs, whatever the first gives.
  # Less the two digest comparisons (68 s under ASan): the Release builds check the streams
  # bit for bit, the codec suites run the same kernels under the sanitizers, and the fuzz
  # stage's sanitized runs cover the generic kernels.
  ctest --test-dir build-asan "${ctest_args[@]}" -LE mpi -E '^(codec_isa_identical|codec_streams_golden)$' || rc=1
  ctest --test-dir build-asan "${ctest_args[@]}" -L mpi || rc=1
  return "$rc"
}
stage sanitize sanitize

# ---- 6. ThreadSanitizer on the codec's thread teams: clang, with LLVM's OpenMP and its Archer
# tool, which tells TSan what orders a team's accesses (libomp itself is not instrumented).
# The codec suite runs on 2 threads, its determinism checks on 2, 3 and OpenMP's default,
# less Codecs/Corrupt (one thread, 184 s under TSan) and the ISA digest comparison (71 s;
# the suite's own checks compare the generic kernels with the AVX2 ones); the golden
# digests compare a second compiler's streams with those recorded from GCC's; the
# collectives run with codec.threads 1-3 on 2 ranks, and on 3 for the pieces shorter than
# a team, and from three threads at once (section concurrent), as does the drop-in layer
# (pmpi_threads); and the parallel HDF5 writer, whose helper thread writes while the caller
# compresses, on 2 and 3 ranks. The test binaries that replace operator new (allocation
# failures) cannot link with TSan's runtime, so only these targets are built.
tsan() {
  local args archer rc=0
  local targets=(zcoll_codec_tests zcoll_c_api_smoke zcoll_stream_digest zcoll_mpi_threads_tests zcoll_pmpi_threads_tests
                 zcoll_ucx_yield)
  mapfile -t args < <(zmpi_cmake_args mpich)
  cmake -S . -B build-tsan "${san_build_type[@]}" -DZCOLL_TSAN=ON \
        -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DZCOLL_BUILD_TESTS=ON -DZCOLL_BUILD_BENCH=OFF \
        -DZCOLL_BUILD_APPS=OFF -DZCOLL_BUILD_PMPI=ON -DZCOLL_BUILD_FUZZ=OFF "${args[@]}"
  [ -d build-tsan/tests/hdf5 ] && targets+=(test_h5io)  # only where HDF5 was found
  cmake --build build-tsan -j"$(znproc)" --target "${targets[@]}"
  # libomp loads Archer by itself only where the TSan runtime is in the executable.
  archer="$(dirname "$(sed -n 's/^OpenMP_omp_LIBRARY:FILEPATH=//p' build-tsan/CMakeCache.txt)")/libarcher.so"
  [ -f "$archer" ] || { zlog "tsan: $archer not found (Debian: libomp-dev)"; return 1; }
  export OMP_TOOL_LIBRARIES="$archer" TSAN_OPTIONS="halt_on_error=1 suppressions=$ZCOLL_ROOT/tests/tsan.supp"
  ctest --test-dir build-tsan "${ctest_args[@]}" -L codec -E '^(Codecs/Corrupt\..*|codec_isa_identical)$' || rc=1
  ctest --test-dir build-tsan "${ctest_args[@]}" -R '^(mpi_threads_(.*_np2|shortchunks_np3)|pmpi_threads_np2|h5io_np[23])$' || rc=1
  return "$rc"
}
stage tsan tsan

# ---- 7. the Python package. The mpi4py builds (one C file each, the bulk of a cold run)
# go in parallel; everything under .cache/python and build-py-* is reused by later runs.
python_pkg() {
  local mpi n pids=() rc=0 venv
  zapt_ensure "${ZCOLL_APT_PYTHON[@]}"
  for mpi in "${mpis[@]}"; do zpy_mpi4py_wheel "$mpi" & pids+=($!); done
  for n in "${pids[@]}"; do wait "$n" || rc=1; done
  [ "$rc" -eq 0 ] || { zlog "building mpi4py failed"; return 1; }
  for mpi in "${mpis[@]}"; do
    venv="$ZCOLL_PY_CACHE/venv-$mpi"
    zlog "python: $mpi"
    zpy_install "$mpi" || { rc=1; continue; }
    # Not from the repository root, so that the installed package is the one tested.
    (cd python/tests && "$venv/bin/python" -m pytest -q -p no:cacheprovider \
       test_codec.py test_numcodecs.py test_cli.py) || rc=1
    # ZCOLL_DECIDE=compress: the tests check the compressed paths, which the cost model would
    # (rightly) skip on shared memory. Open MPI's shared-memory transport named, as in ctest
    # (cmake/mpi_tests.cmake): its TCP and UCX start-up took 1.3 of a 2-rank launch's 1.4 s.
    local -a launch=(env ZCOLL_DECIDE=compress)
    if [ "$mpi" = openmpi ]; then launch+=(OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader); fi
    for n in 2 3; do
      zlog "python: $mpi, test_mpi.py on $n ranks"
      (cd python/tests && "${launch[@]}" timeout 300 "mpiexec.$mpi" -n "$n" "$venv/bin/python" mpirun_pytest.py \
         -q test_mpi.py) || rc=1
    done
    # The README's example stays runnable (it checks the bound itself).
    "${launch[@]}" timeout 120 "mpiexec.$mpi" -n 2 "$venv/bin/python" examples/python/allreduce_stack.py --side 512 || rc=1
  done
  # A codec-only wheel (no MPI found) still compresses, and zcoll.Comm says why it cannot.
  venv="$ZCOLL_PY_CACHE/venv-${mpis[0]}"
  local tmp; tmp="$(mktemp -d)"
  env -u MPICC "$venv/bin/python" -m pip wheel -q --disable-pip-version-check --no-build-isolation \
    --no-deps -w "$tmp" -C build-dir="$ZCOLL_ROOT/build-py-nompi" -C build.tool-args=-j"$(znproc)" \
    -C cmake.define.CMAKE_DISABLE_FIND_PACKAGE_MPI=ON . || rc=1
  (cd "$tmp" && "$venv/bin/python" -m zipfile -e zcoll-*.whl site && cd site && "$venv/bin/python" - <<'PY') || rc=1
import numpy as np, zcoll
assert zcoll.__file__.startswith(__import__("os").getcwd()), zcoll.__file__
assert not zcoll.HAVE_MPI
a = np.linspace(0, 1, 100000, dtype=np.float32)
assert np.abs(zcoll.decompress(zcoll.compress(a, 1e-3)) - a).max() <= 1e-3
try:
    zcoll.Comm
except ImportError as e:
    assert "without MPI" in str(e)
    print("codec-only wheel: codec works; zcoll.Comm:", e)
else:
    raise SystemExit("zcoll.Comm should be unavailable in a codec-only build")
PY
  rm -rf "$tmp"
  return "$rc"
}
stage python python_pkg

summary
