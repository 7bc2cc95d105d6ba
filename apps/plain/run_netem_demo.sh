#!/usr/bin/env bash
# The drop-in layer on an unmodified program over an emulated link (root; bench/netem):
#
#   apps/plain/run_netem_demo.sh BUILD_DIR [RATE] [EB]        (defaults: 1gbit, REL 1e-4)
#   ZCOLL_DEMO_MPI=openmpi apps/plain/run_netem_demo.sh build-openmpi   (an Open MPI build)
#
# ZCOLL_DEMO_ROUNDS (default 3) rounds of three runs on 2 ranks, one per network namespace,
# each its own bench/netem/run.sh:
#   plain   image-stacking-plain as it is (MPI_Allreduce);
#   layer   the same binary under tools/zcoll-run --eb EB (the layer compresses its
#           MPI_Allreduce; zcoll-run wraps each rank, so any launcher works);
#   native  zcoll-image-stacking, which calls zcoll_allreduce (and MPI_Allreduce) itself.
# Prints each program's output, then, from the medians over the rounds (plain MPI's time
# varies from run to run on this shared machine), the layer's speedup over plain MPI, the
# native app's speedup over its own MPI_Allreduce, and their ratio. One OpenMP thread per rank (2 ranks
# on 2 cores). Only one netem run at a time may use the machine: run.sh refuses otherwise.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/netem_common.sh"
plain="$build/apps/plain/image-stacking-plain"
native="$build/apps/image_stacking/zcoll-image-stacking"
require_built "$plain" "$native" "$lib"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

plain_t=() layer_t=() native_mpi=() native_zcoll=()
for round in $(seq 1 "$rounds"); do
  echo "== round $round: plain MPI: image-stacking-plain"
  "${netem[@]}" "$plain" --check-rel-eb "$eb" | tee "$out/plain"
  echo "== round $round: the same binary under zcoll-run --eb $eb (REL)"
  "${netem[@]}" "$root/tools/zcoll-run" --lib "$lib" --eb "$eb" --eb-mode rel --threads 1 --report -- \
    "$plain" --check-rel-eb "$eb" | tee "$out/layer"
  echo "== round $round: zcoll-image-stacking (zcoll_allreduce in the source)"
  "${netem[@]}" env OMP_NUM_THREADS=1 "$native" --eb "$eb" --eb-mode rel --threads 1 --out "$out/png" \
    --link "emulated $rate (netem)" | tee "$out/native"
  plain_t+=("$(time_of "$out/plain")")
  layer_t+=("$(time_of "$out/layer")")
  native_mpi+=("$(awk '$1 == "MPI_Allreduce" { print $2 }' "$out/native")")
  native_zcoll+=("$(awk '$1 == "zcoll_allreduce" { print $2 }' "$out/native")")
done

p=$(median "${plain_t[@]}") l=$(median "${layer_t[@]}") nm=$(median "${native_mpi[@]}") nz=$(median "${native_zcoll[@]}")
echo
echo "rounds: plain ${plain_t[*]}; zcoll-run ${layer_t[*]}; native MPI_Allreduce ${native_mpi[*]}; native zcoll_allreduce ${native_zcoll[*]}"
# Both programs time the same MPI_Allreduce of the same data; pooled, their plain-MPI times
# give one reference for the layer and the native app alike.
pooled=$(median "${plain_t[@]}" "${native_mpi[@]}")
awk -v p="$p" -v l="$l" -v nm="$nm" -v nz="$nz" -v pool="$pooled" -v rate="$rate" -v rounds="$rounds" 'BEGIN {
  s = p / l; n = nm / nz
  printf "summary over %s, medians of %d rounds: plain MPI %.4f s, under zcoll-run %.4f s: speedup %.2fx; zcoll-image-stacking: MPI %.4f s, zcoll %.4f s: speedup %.2fx; layer/native speedup %.3f\n", rate, rounds, p, l, s, nm, nz, n, s / n
  printf "against the pooled plain-MPI median %.4f s (both programs, %d runs): zcoll-run %.2fx, zcoll-image-stacking %.2fx; layer/native %.3f\n", pool, 2 * rounds, pool / l, pool / nz, nz / l
}'
