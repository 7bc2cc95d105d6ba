#!/usr/bin/env bash
# The drop-in layer on an unmodified program over an emulated link (root; bench/netem):
#
#   apps/plain/run_netem_demo.sh BUILD_DIR [RATE] [EB]        (defaults: 1gbit, REL 1e-4)
#
# Three runs on 2 ranks, one per network namespace, each its own bench/netem/run.sh:
#   plain   image-stacking-plain as it is (MPI_Allreduce);
#   layer   the same binary under tools/zcoll-run --eb EB (the layer compresses its
#           MPI_Allreduce; zcoll-run wraps each rank, so any launcher works);
#   native  zcoll-image-stacking, which calls zcoll_allreduce (and MPI_Allreduce) itself.
# Prints each program's output, then the layer's speedup over plain MPI, the native app's
# speedup over its own MPI_Allreduce, and their ratio. One OpenMP thread per rank (2 ranks
# on 2 cores). Only one netem run at a time may use the machine: run.sh refuses otherwise.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:?usage: run_netem_demo.sh BUILD_DIR [RATE] [EB]}" && pwd)
rate=${2:-1gbit}
eb=${3:-1e-4}
plain="$build/apps/plain/image-stacking-plain"
native="$build/apps/image_stacking/zcoll-image-stacking"
lib="$build/src/pmpi/libzcoll_mpi.so"
for f in "$plain" "$native" "$lib"; do [ -e "$f" ] || { echo "run_netem_demo.sh: $f not built" >&2; exit 1; }; done
netem=(bash "$root/bench/netem/run.sh" --rate "$rate" --ranks 2 --mpi mpich --timeout 60 --)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "== plain MPI: image-stacking-plain"
"${netem[@]}" "$plain" --check-rel-eb "$eb" | tee "$out/plain"
echo "== the same binary under zcoll-run --eb $eb (REL)"
"${netem[@]}" "$root/tools/zcoll-run" --lib "$lib" --eb "$eb" --eb-mode rel --threads 1 --report -- \
  "$plain" --check-rel-eb "$eb" | tee "$out/layer"
echo "== zcoll-image-stacking (zcoll_allreduce in the source)"
OMP_NUM_THREADS=1 "${netem[@]}" "$native" --eb "$eb" --eb-mode rel --threads 1 --out "$out/png" \
  --link "emulated $rate (netem)" | tee "$out/native"

t_plain=$(awk '/time_s/ { for (i = 1; i < NF; ++i) if ($i == "time_s") print $(i + 1) }' "$out/plain")
t_layer=$(awk '/time_s/ { for (i = 1; i < NF; ++i) if ($i == "time_s") print $(i + 1) }' "$out/layer")
s_native=$(awk '$1 == "zcoll_allreduce" { print $3 }' "$out/native")
awk -v p="$t_plain" -v l="$t_layer" -v n="$s_native" 'BEGIN {
  s = p / l
  printf "\nsummary over %s: plain MPI %.4f s, under zcoll-run %.4f s: speedup %.2fx; zcoll-image-stacking speedup %.2fx; layer/native %.3f\n", "'"$rate"'", p, l, s, n, s / n
}'
