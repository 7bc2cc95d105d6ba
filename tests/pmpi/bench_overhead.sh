#!/usr/bin/env bash
# The pass-through overhead of the layer (issue 19's target: <= 0.2 us per call):
#   bench_overhead.sh LIB ZCOLL_RUN PROGRAM MPIEXEC [PREFLAGS...]
# Runs pmpi_overhead on 1 rank without the layer, then under zcoll-run with compression
# configured (MPI_COMM_WORLD opted in, so each call takes the layer's full routing up to
# its size check), alternating 3 times; prints each and the difference of the medians.
# Fails if a run fails or the overhead is above 1 us (a shared CI machine is noisy; the
# figure itself is what to read).
set -uo pipefail
lib=$1 zrun=$2 prog=$3 mpiexec=$4
shift 4
launch=("$mpiexec" -n 1 "$@")
plain=() layer=()
for round in 1 2 3; do
  p=$("${launch[@]}" "$prog" | awk '/ns_per_call/ { print $2 }') || exit 1
  l=$("$zrun" --lib "$lib" --eb 1e-4 -- "${launch[@]}" "$prog" | awk '/ns_per_call/ { print $2 }') || exit 1
  [ -n "$p" ] && [ -n "$l" ] || { echo "bench_overhead.sh: a run printed no figure"; exit 1; }
  echo "round $round: without the layer $p ns, with it $l ns"
  plain+=("$p")
  layer+=("$l")
done
median() { printf '%s\n' "$@" | sort -g | sed -n 2p; }
mp=$(median "${plain[@]}") ml=$(median "${layer[@]}")
awk -v p="$mp" -v l="$ml" 'BEGIN {
  d = l - p
  printf "8-byte MPI_Allreduce, 1 rank, median of 3 (best of 5 x 100000 calls each): without %.1f ns, with the layer %.1f ns, overhead %.1f ns per call (target <= 200 ns: %s)\n", p, l, d, d <= 200 ? "met" : "NOT met"
  exit d > 1000
}'
