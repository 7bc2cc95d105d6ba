#!/bin/bash
# Nodes of different sizes over an emulated link (issue 17): 2 namespaces x 2 ranks, of which
# zcoll-bench coll uses the first 3 (--ranks 3): a node of 2 ranks and a node of 1. Plain MPI,
# the node-aware schedules (compressed and plain), the flat ones and AUTO, call by call in
# turn, at 1 and 10 Gbit/s, 1 and 16 MiB per rank, Nyx f64 at REL 1e-4: allreduce, bcast,
# reduce, allgather and reduce_scatter (OPS="..." for some of them).
#   bash run.sh BUILD OUT [ITERS]
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
BUILD=$(cd "${1:?usage: run.sh BUILD OUT [ITERS]}" && pwd)
OUT=${2:?usage: run.sh BUILD OUT [ITERS]}
ITERS=${3:-40}
INPUT=${INPUT:-$ROOT/../shared/datasets/nyx_phigrav_128x128x128.f64}
[ -f "$INPUT" ] || INPUT=$ROOT/data/cesm_TS_10x192x288.f32
mkdir -p "$OUT"
for rate in 1gbit 10gbit; do
  for op in ${OPS:-allreduce bcast reduce allgather reduce_scatter}; do
    case $op in
      allreduce) algos=hierarchical,plain-hierarchical,ring,recursive-doubling,auto ;;
      bcast) algos=hierarchical,plain-hierarchical,binomial,scatter-allgather,auto ;;
      reduce) algos=hierarchical,plain-hierarchical,zcoll,auto ;;
      allgather) algos=hierarchical,plain-hierarchical,ring,bruck,auto ;;
      reduce_scatter) algos=hierarchical,plain-hierarchical,ring,auto ;;
    esac
    echo "== $rate $op $(date +%T)" >&2
    bash "$ROOT/bench/netem/run.sh" --rate "$rate" --ranks 2 --ranks-per-node 2 --mpi mpich --timeout 900 \
      --exit-line "zcoll-bench coll: exit status" \
      --yield-when-idle "$BUILD/libzcoll_ucx_yield.so" -- \
      "$BUILD/bench/zcoll-bench" coll --op "$op" --input "$INPUT" --eb-mode rel --eb 1e-4 --bytes 1M,16M \
      --algo "$algos" --threads 1 --iters "$ITERS" --warmup 0 --ranks 3 --interleave --json |
      { grep '^{' || true; } |  # not mpiexec's lines about a launch stopped after its exit line
      sed "s/}\$/, \"rate\": \"$rate\", \"link_ranks\": \"2+1\", \"mpi\": \"mpich\", \"waiting_ranks_yield\": true}/" >> "$OUT/results.jsonl"
  done
done
PY="$ROOT/.venv/bin/python"
[ -x "$PY" ] || PY=python3
"$PY" "$ROOT/bench/netem/sweep.py" --out "$OUT" --auto-table
