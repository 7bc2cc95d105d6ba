#!/bin/bash
# Where AUTO's compressed calls right after its plain ones lose time: two ranks at 10 Gbit/s,
# 1 MiB of cesm_TS, the five collectives, AUTO and the fixed table's path (zcoll) interleaved,
# 100 calls each; zcoll-bench writes each call's parts (call_parts_s). LAUNCHES launches
# (default 3) into OUT (default this folder): launch-K.jsonl (kept here xz-compressed). parts.py
# summarizes.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../../.." && pwd)
OUT=${OUT:-$HERE}
BUILD=${BUILD:-$ROOT/build-mpich}
CESM=${CESM:-$ROOT/../shared/datasets/cesm_TS_10x192x288.f32}
[ -f "$CESM" ] || CESM=$ROOT/data/cesm_TS_10x192x288.f32
for k in $(seq "${LAUNCHES:-3}"); do
  bash "$ROOT/bench/netem/run.sh" --rate 10gbit --ranks 2 --mpi mpich -- "$BUILD/bench/zcoll-bench" coll \
    --op allreduce,allgather,bcast,reduce_scatter,alltoall --input "$CESM" --bytes 1M --algo auto,zcoll \
    --interleave --iters 100 --warmup 0 --json > "$OUT/launch-$k.jsonl"
done
