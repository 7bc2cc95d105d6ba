#!/usr/bin/env bash
# AUTO's warm start (ZCOLL_TUNING_FILE), real runs over emulated links: three launches of
# the same sweep per set-up, in turn:
#   cold   no tuning file (zcoll as before: every communicator learns from nothing);
#   train  a fresh tuning file, written by each AUTO communicator as it is freed (so later
#          cells of this launch already start from the earlier cells' record);
#   warm   the file the training launch left: every AUTO communicator starts from it.
# Usage: docs/netem/tuning_file/run.sh [BUILD] [OUT] [RANKS] [RATES] [SIZES] [ITERS]
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
BUILD=${1:-$ROOT/build-mpich}
OUT=${2:-$HERE/results}
RANKS=${3:-2}
RATES=${4:-10gbit,1gbit}
SIZES=${5:-1M,16M}
ITERS=${6:-16}
INPUT=${ZCOLL_STUDY_INPUT:-$ROOT/../shared/datasets/nyx_phigrav_128x128x128.f64}
PY=${PYTHON:-$ROOT/.venv/bin/python}
[ -x "$PY" ] || PY=python3
FILE=$OUT/tuning.bin
sweep() {
  "$PY" "$ROOT/bench/netem/sweep.py" --build "$BUILD" --out "$OUT/$1" --input "$INPUT" --sizes "$SIZES" \
    --ops allreduce,bcast,allgather,reduce_scatter,alltoall --algos all --iters "$ITERS" --warmup 0 \
    --timeout 900 --interleave --rates "$RATES" --ranks "$RANKS"
  "$PY" "$ROOT/bench/netem/sweep.py" --out "$OUT/$1" --auto-table
}
mkdir -p "$OUT"
rm -f "$FILE"
(unset ZCOLL_TUNING_FILE; sweep cold)
ZCOLL_TUNING_FILE=$FILE sweep train
cp "$FILE" "$OUT/tuning-after-train.bin"
ZCOLL_TUNING_FILE=$FILE sweep warm
