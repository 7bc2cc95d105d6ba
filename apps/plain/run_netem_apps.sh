#!/usr/bin/env bash
# The drop-in layer on two more unmodified programs over an emulated link (root; bench/netem):
#
#   apps/plain/run_netem_apps.sh BUILD_DIR [RATE] [EB]        (defaults: 1gbit, REL 1e-4)
#
# For fft2d-plain (MPI_Alltoall of MPI_DOUBLE; N = $ZCOLL_DEMO_FFT_N, default 2048, 5 timed
# transforms after 1 warm-up) and himeno-plain (point-to-point halos and an 8-byte
# MPI_Allreduce; size $ZCOLL_DEMO_HIMENO_SIZE, default M, 100 sweeps), ZCOLL_DEMO_ROUNDS
# (default 3) rounds of two runs on 2 ranks, one per network namespace, each its own
# bench/netem/run.sh:
#   plain   the program as it is;
#   layer   the same binary under tools/zcoll-run --eb EB --eb-mode rel --threads 1 --report
#           ($ZCOLL_DEMO_EB_MODE=abs for an absolute bound).
# $ZCOLL_DEMO_APPS (default "fft2d himeno") chooses the programs.
# Each run writes its result (--out); the layer's is compared with the plain run's of the same
# round (compare_results.py: max abs error, NRMSE, PSNR; for the FFT also against the bound of
# apps/fft2d.cc with the report's max_eb_abs, which it prints to 4 digits). Prints each run's
# output, then per program the medians over the rounds (plain MPI's time varies from run to
# run on a shared machine), the speedup and the error. fft2d-plain's time_s is the median time
# of one transform (2 alltoalls), himeno-plain's the total of its sweeps. Only one netem run at
# a time may use the machine: run.sh refuses otherwise.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# A run takes seconds; MPICH's MPI_Finalize hang across namespaces (bench/netem/README.md) then
# costs 30 s, and run.sh keeps what the run printed.
netem_timeout=30
source "$here/netem_common.sh"
fft_n=${ZCOLL_DEMO_FFT_N:-2048}
require_built "$build/apps/plain/fft2d-plain" "$build/apps/plain/himeno-plain" "$lib"
eb_mode=${ZCOLL_DEMO_EB_MODE:-rel}
layer=("$root/tools/zcoll-run" --lib "$lib" --eb "$eb" --eb-mode "$eb_mode" --threads 1 --report --)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

summary=()

# measure APP DTYPE ARGS...: the rounds for build/apps/plain/APP-plain; adds its summary line.
measure() {
  local app=$1 dtype=$2 prog="$build/apps/plain/$1-plain" round compare err=""
  shift 2
  local plain_t=() layer_t=()
  for round in $(seq 1 "$rounds"); do
    echo "== $app round $round: plain MPI"
    "${netem[@]}" "$prog" "$@" --out "$out/plain.$dtype" | tee "$out/plain.txt"
    echo "== $app round $round: the same binary under zcoll-run --eb $eb --eb-mode $eb_mode"
    "${netem[@]}" "${layer[@]}" "$prog" "$@" --out "$out/layer.$dtype" | tee "$out/layer.txt"
    plain_t+=("$(time_of "$out/plain.txt")")
    layer_t+=("$(time_of "$out/layer.txt")")
    compare=()
    if [ "$app" = fft2d ]; then
      local eb_abs
      eb_abs=$(awk '$1 == "Alltoall" { print $NF }' "$out/layer.txt")
      compare=(--bound "$(python3 -c "print(($fft_n * 2 ** 0.5 + 1) * ${eb_abs:-0})")"
               --rounding-per-norm "$(python3 -c "import math; print(16 * math.log2($fft_n ** 2) * 2 ** -53)")")
    fi
    err=$(python3 "$here/compare_results.py" "$out/plain.$dtype" "$out/layer.$dtype" "$dtype" "${compare[@]}" || true)
    echo "layer against plain: $err"
  done
  local p l
  p=$(median "${plain_t[@]}") l=$(median "${layer_t[@]}")
  summary+=("$(awk -v app="$app" -v p="$p" -v l="$l" -v rate="$rate" -v rounds="$rounds" -v eb="$eb" -v mode="$eb_mode" 'BEGIN {
    printf "%s over %s, %s %s, medians of %d rounds: plain MPI %.4f s, under zcoll-run %.4f s: speedup %.2fx", app, rate, toupper(mode), eb, rounds, p, l, p / l
  }')" "  rounds: plain ${plain_t[*]}; zcoll-run ${layer_t[*]}" "  last round's error: $err")
}

for app in ${ZCOLL_DEMO_APPS:-fft2d himeno}; do
  case $app in
    fft2d) measure fft2d f64 --n "$fft_n" --iters 5 --warmup 1 ;;
    himeno) measure himeno f32 --size "${ZCOLL_DEMO_HIMENO_SIZE:-M}" --iters 100 ;;
    *) echo "run_netem_apps.sh: ZCOLL_DEMO_APPS: unknown program $app (fft2d, himeno)" >&2; exit 2 ;;
  esac
done
echo
printf '%s\n' "${summary[@]}"
