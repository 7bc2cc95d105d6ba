#!/usr/bin/env bash
# bench/h5write/run_study.sh: issue 18's write study. zcoll-bench h5write on 4 ranks over
# the throttled storage target (bench/storage/throttlefs, rate checked with dd before each
# rate's runs), the six fields of ../shared/datasets as the six fields of a snapshot, each
# TILED along its slowest axis to --mib-per-rank MiB per rank. Appends one JSON object per
# run (the benchmark's, plus rate_mbps, rate_measured_mbps, study, rep, waiting_ranks_yield,
# build) to OUT.
#
#   bash bench/h5write/run_study.sh [--build build-mpich] [--out docs/h5write/results.jsonl]
#        [--reps 3] [--rates "400 100"] [--only main|sweep|extra] [--burst-bytes B] [--busy-wait]
#        [--modes "raw filter pipelined predictive predictive-noreorder"] [--ebs "1e-3 1e-4"]
#        [--yield-lib LIB]
#
# main:  raw, filter, predictive (reorder on/off), pipelined; REL 1e-3 and 1e-4; each rate
#        (--modes and --ebs pick some of them).
# sweep: 1-12 fields (the six inputs cyclically), 400 MB/s, REL 1e-4, 32 MiB per rank.
# extra: predictive with extra space 1.0, 1.1, 1.25, 1.5; 400 MB/s, REL 1e-4.
# Two builds compared: call it once per build and round with --reps 1 and the same --out,
# alternating the builds; each line records its build ("build", the directory). A build of
# zcoll-bench alone has no yield shim: --yield-lib names another build's.
# With more ranks than cores a rank that waits yields its core, as in the netem studies
# (bench/netem/README.md): MPICH gets BUILD/libzcoll_ucx_yield.so (or --yield-lib) preloaded, Open MPI
# mpi_yield_when_idle. Spinning there, the ranks that wait take the cores of those that
# compress. --busy-wait leaves it out (every run before 2026-12-06 spun).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=$ROOT/build-mpich OUT=$ROOT/docs/h5write/results.jsonl REPS=3 RATES="400 100" ONLY="" BURST=() BUSY=0
MODES="raw filter pipelined predictive predictive-noreorder" EBS="1e-3 1e-4" YIELD_LIB=""
MNT=/var/tmp/zcoll-storage NP=4 MIB=64
# The bucket must be the only limit: behind it, memory (3.3 GB/s through throttlefs by dd
# here, against 0.9-1.7 GB/s and dips under sustained writes for this machine's disk).
BACKING=/dev/shm/zcoll-storage-backing
while [ $# -gt 0 ]; do
  case $1 in
    --build) BUILD=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --rates) RATES=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --burst-bytes) BURST=(--burst-bytes "$2"); shift 2 ;;
    --busy-wait) BUSY=1; shift ;;
    --modes) MODES=$2; shift 2 ;;
    --ebs) EBS=$2; shift 2 ;;
    --yield-lib) YIELD_LIB=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
DATA=$ROOT/../shared/datasets
[ -d "$DATA" ] || { echo "needs ../shared/datasets (the six fields)" >&2; exit 2; }
BENCH=$BUILD/bench/zcoll-bench
MPIEXEC=$(grep -m1 '^MPIEXEC_EXECUTABLE' "$BUILD/CMakeCache.txt" | cut -d= -f2)
INPUTS=()
for f in "$DATA"/*.f32 "$DATA"/*.f64; do INPUTS+=(--input "$f"); done
mkdir -p "$(dirname "$OUT")"
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive
YIELD=() YIELDS=false
if [ "$BUSY" = 0 ] && [ "$NP" -gt "$(nproc)" ]; then
  YIELDS=true
  if grep -qi '^MPI_C_COMPILER:.*mpich' "$BUILD/CMakeCache.txt"; then
    YIELD_LIB=${YIELD_LIB:-$BUILD/libzcoll_ucx_yield.so}
    [ -f "$YIELD_LIB" ] || { echo "$YIELD_LIB not built (a build with tests or apps has it): pass --yield-lib or --busy-wait" >&2; exit 2; }
    YIELD=(-genv LD_PRELOAD "$YIELD_LIB")
  else
    YIELD=(--mca mpi_yield_when_idle 1)
  fi
fi

mount_rate() {  # mount_rate R: (re)mount at R MB/s; prints the dd-measured rate
  bash "$ROOT/bench/storage/mount.sh" --unmount "$MNT" >/dev/null 2>&1 || true
  bash "$ROOT/bench/storage/mount.sh" --rate-mbps "$1" "${BURST[@]}" --backing "$BACKING" "$MNT" | tee /dev/stderr |
    sed -n 's/.* requested, \([0-9.]*\) MB\/s measured.*/\1/p' | tail -1
}

run() {  # run STUDY REP RATE MEASURED ARGS...: one benchmark run, its JSON appended to OUT
  local study=$1 rep=$2 rate=$3 measured=$4
  shift 4
  local line
  line=$(timeout 600 "$MPIEXEC" "${YIELD[@]}" -n $NP "$BENCH" h5write "$@" --out "$MNT/study.h5" --threads 1 --json) || {
    echo "run failed: $*" >&2; return 1; }
  python3 - "$study" "$rep" "$rate" "$measured" "$YIELDS" "$BUILD" "$line" >> "$OUT" <<'PY'
import json, sys
study, rep, rate, measured, yields, build, line = sys.argv[1:]
d = json.loads(line)
d.update(study=study, rep=int(rep), rate_mbps=float(rate), rate_measured_mbps=float(measured),
         waiting_ranks_yield=yields == "true", build=build)
print(json.dumps(d))
PY
  python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(f\"{d['mode']:>10} fields {d['fields']:>2} {d['eb_mode']} {d['eb']:g} time {d['time_s']:.3f} s ratio {d['ratio']:.2f} max_err/eb {d['max_err_over_eb']:.4f}\")" "$line" >&2
}

if [ -z "$ONLY" ] || [ "$ONLY" = main ]; then
  for rate in $RATES; do
    measured=$(mount_rate "$rate")
    for rep in $(seq 1 "$REPS"); do
      for eb in $EBS; do
        for mode in $MODES; do
          case $mode in
            predictive-noreorder) args=(--mode predictive --reorder off) ;;
            *) args=(--mode "$mode") ;;
          esac
          run main "$rep" "$rate" "$measured" "${INPUTS[@]}" "${args[@]}" --eb-mode rel --eb $eb --mib-per-rank $MIB
        done
      done
    done
  done
fi
if [ -z "$ONLY" ] || [ "$ONLY" = sweep ]; then
  measured=$(mount_rate 400)
  for k in $(seq 1 12); do
    for mode in raw filter pipelined predictive; do
      run sweep 1 400 "$measured" "${INPUTS[@]}" --fields "$k" --mode $mode --eb-mode rel --eb 1e-4 --mib-per-rank 32
    done
    run sweep 1 400 "$measured" "${INPUTS[@]}" --fields "$k" --mode predictive --reorder off --eb-mode rel --eb 1e-4 --mib-per-rank 32
  done
fi
if [ -z "$ONLY" ] || [ "$ONLY" = extra ]; then
  measured=$(mount_rate 400)
  for x in 1.0 1.1 1.25 1.5; do
    run extra 1 400 "$measured" "${INPUTS[@]}" --mode predictive --extra-space $x --eb-mode rel --eb 1e-4 --mib-per-rank $MIB
  done
fi
bash "$ROOT/bench/storage/mount.sh" --unmount "$MNT" >/dev/null 2>&1 || true
echo "results: $OUT" >&2
