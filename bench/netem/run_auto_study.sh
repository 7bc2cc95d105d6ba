#!/usr/bin/env bash
# AUTO's cost model against plain MPI and every fixed zcoll choice (issue 17), over the
# links of this machine: 2 ranks on shared memory and over 1, 2.5 and 10 Gbit/s, and 4 ranks
# as 2 namespaces ("nodes") x 2 ranks at 1 and 10 Gbit/s; allreduce, bcast, allgather,
# reduce_scatter and alltoall; REL 1e-4. Results, plots and the AUTO table in OUT.
#
#   bash bench/netem/run_auto_study.sh [BUILD] [OUT] [INPUT] [SIZES]
# Needs root (network namespaces). One netem run at a time may use the machine.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${1:-$ROOT/build-mpich}
OUT=${2:-$ROOT/docs/netem/auto}
INPUT=${3:-$ROOT/../shared/datasets/nyx_phigrav_128x128x128.f64}
SIZES=${4:-1M,16M,64M}
PY=${PYTHON:-$ROOT/.venv/bin/python}
[ -x "$PY" ] || PY=python3
OPS=${ZCOLL_STUDY_OPS:-allreduce,bcast,allgather,reduce_scatter,alltoall}
# No untimed calls by default: AUTO's first calls on a communicator (what it spends
# learning) are among the timed ones. With 30 calls the median is the steady state; the
# table's "all calls" column sums every call, learning included, and "second half" compares
# the second halves. (docs/results.md: 10 calls left the 1.05x count at the host's noise; at
# 30 the twin paths still differ by more than 5% in 2-9 of 60 two-rank cells, at 100 in 1-3:
# ZCOLL_STUDY_ITERS=100 for the 1.05x verdict, about 15 minutes per field for 2 ranks.)
ITERS=${ZCOLL_STUDY_ITERS:-30}
WARMUP=${ZCOLL_STUDY_WARMUP:-0}
# A launch's time limit. MPICH's MPI_Finalize can hang across namespaces after every result is
# out: sweep.py then stops the launch 30 s after its last result, keeping the output.
TIMEOUT=${ZCOLL_STUDY_TIMEOUT:-600}
# AUTO and the paths it is weighed against, call by call in turn (zcoll-bench coll
# --interleave): a slow spell of the host, which lasts seconds to minutes here, then meets
# them all, where in blocks it fell on whichever path ran then. ZCOLL_STUDY_INTERLEAVE=0: blocks.
INTERLEAVE=()
[ "${ZCOLL_STUDY_INTERLEAVE:-1}" = 0 ] || INTERLEAVE=(--interleave)
run() { "$PY" "$HERE/sweep.py" --build "$BUILD" --out "$OUT" --input "$INPUT" --sizes "$SIZES" --ops "$OPS" \
        --algos all --iters "$ITERS" --warmup "$WARMUP" --timeout "$TIMEOUT" "${INTERLEAVE[@]}" "$@" ||
        echo "run_auto_study: a launch failed ($*)" >&2; }
# ZCOLL_STUDY_RATES_2 / _4 set to "" skip that part.
R2=${ZCOLL_STUDY_RATES_2-1gbit,10gbit,shm,2.5gbit}
R4=${ZCOLL_STUDY_RATES_4-1gbit,10gbit}
[ -z "$R2" ] || run --rates "$R2" --ranks 2
[ -z "$R4" ] || run --rates "$R4" --ranks 2x2
"$PY" "$HERE/sweep.py" --out "$OUT" --auto-table
