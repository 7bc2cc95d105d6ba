#!/usr/bin/env bash
# AUTO's warm start (ZCOLL_TUNING_FILE), real runs over emulated links: three launches of
# the same sweep per set-up, in turn:
#   cold   no tuning file (zcoll as before: every communicator learns from nothing);
#   train  a fresh tuning file, written by each AUTO communicator as it is freed (so later
#          cells of this launch already start from the earlier cells' record);
#   warm   the file the training launch left: every AUTO communicator starts from it.
# Usage: docs/netem/tuning_file/run.sh [BUILD] [OUT] [RANKS] [RATES] [SIZES] [ITERS]
# With RANKS 2x2 under MPICH run kill_lingering.sh beside it (MPI_Finalize can hang across
# namespaces). records.py lists what a tuning file holds. The studies of docs/results.md
# ("AUTO's warm start"):
#   run.sh build-mpich docs/netem/tuning_file/e45040d-2rank            (and -repeat)
#   run.sh build-mpich docs/netem/tuning_file/13956b6-2x2 2x2 10gbit,1gbit 1M,16M 16
#   for r in 10 1; do ZCOLL_LINK_GBPS=$r ZCOLL_NODE_LINK_GBPS=40 run.sh build-mpich \
#     docs/netem/tuning_file/13956b6-2x2-given-links/${r}gbit 2x2 ${r}gbit 1M,16M 16; done
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
# A launch whose ranks were killed after printing every result (kill_lingering.sh) counts
# as failed in sweep.py's exit status; its results are kept. A phase whose table exists is
# not run again (a study stopped halfway resumes).
sweep() {
  [ ! -e "$OUT/$1/auto_vs_best.md" ] || return 0
  "$PY" "$ROOT/bench/netem/sweep.py" --build "$BUILD" --out "$OUT/$1" --input "$INPUT" --sizes "$SIZES" \
    --ops allreduce,bcast,allgather,reduce_scatter,alltoall --algos all --iters "$ITERS" --warmup 0 \
    --timeout 900 --interleave --rates "$RATES" --ranks "$RANKS" || echo "run.sh: a launch of $1 failed" >&2
  "$PY" "$ROOT/bench/netem/sweep.py" --out "$OUT/$1" --auto-table
}
mkdir -p "$OUT"
[ -e "$OUT/train/auto_vs_best.md" ] || rm -f "$FILE"
(unset ZCOLL_TUNING_FILE; sweep cold)
ZCOLL_TUNING_FILE=$FILE sweep train
cp "$FILE" "$OUT/tuning-after-train.bin"
ZCOLL_TUNING_FILE=$FILE sweep warm
