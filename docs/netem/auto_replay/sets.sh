#!/bin/bash
# The replays' sets of cells (bench/netem/README.md, "AUTO's rules replayed"), written to DIR
# as c8efc36.txt (the c8efc36 2 x 2 studies), held-out.txt (32 other 100-call studies: 26
# two-rank, 6 of 2 x 2), ab.txt (the eight launches of docs/netem/auto_2x2/e782d56-ab-10gbit)
# and short.txt (the 16-40-call studies, two-rank and 2 x 2, whose cells time every path
# AUTO has now: 980 cells; replayed with --skip 3).
#   bash sets.sh DIR
set -euo pipefail
OUT=${1:?usage: sets.sh DIR}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
N=$ROOT/docs/netem
python3 "$ROOT/bench/netem/replay_cells.py" "$OUT/c8efc36.txt" "$N"/auto_2x2/c8efc36-100calls-{cesm,nyx}
held=()
for d in 04957ef-1M-100calls 076b78f-100calls 0de021e-1M-100calls 148ee55-100calls 373c769-fastpath-rechecks \
         392033b-burst128k 3e5be9c-100calls 461c773-1gbit-shm 4a4d782-1M-100calls 5107a4d-1M-100calls \
         69b32c8-100calls 6a3da04-100calls a58b70e-1gbit-shm a80e1e8-100calls ae30dd6-10gbit-cesm \
         ae30dd6-10gbit-nyx b3d707d-10gbit-16M64M b771686-100calls c725bb8-100calls c81dda3-100calls \
         cf51ab0-100calls d1c5975-100calls e0b9503-1M-100calls f28d8e8-100calls fbb7442-100calls \
         fbfd534-1M-100calls; do held+=("$N/auto_2rank/$d"); done
for d in 076b78f-100calls 392033b-burst128k 461c773-1gbit 78ee123-100calls c81dda3-100calls d1c5975-100calls; do
  held+=("$N/auto_2x2/$d")
done
python3 "$ROOT/bench/netem/replay_cells.py" "$OUT/held-out.txt" "${held[@]}"
python3 "$ROOT/bench/netem/replay_cells.py" "$OUT/ab.txt" "$N"/auto_2x2/e782d56-ab-10gbit/*/
short=()
for d in "$N"/auto_2rank/*-30calls "$N"/auto_2x2/*-40calls "$N"/auto_2rank/*interleaved* "$N"/auto_2x2/*interleaved*; do
  short+=("$d")
done
python3 "$ROOT/bench/netem/replay_cells.py" --complete "$OUT/short.txt" "${short[@]}"
