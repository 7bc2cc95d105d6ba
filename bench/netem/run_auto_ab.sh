#!/bin/bash
# Two builds' AUTO alternated: 2 x 2 ranks at 10 Gbit/s, 1 and 16 MiB, 100 calls per cell,
# cesm_TS then Nyx, ROUNDS rounds each (default 2), old before new in every round. OLD and NEW:
# MPICH builds (zcoll-bench, and libzcoll_ucx_yield.so beside it). Writes
# OUT/FIELD-{old,new}{1,2,...}/ (run_auto_study.sh's results and table).
#   OLD=<build> NEW=<build> bash bench/netem/run_auto_ab.sh OUT [ROUNDS]
set -euo pipefail
OUT=${1:?usage: OLD=<build> NEW=<build> run_auto_ab.sh OUT [ROUNDS]}
ROUNDS=${2:-2}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DATA=${DATA:-$ROOT/../shared/datasets}
for field in cesm nyx; do
  input=$DATA/cesm_TS_10x192x288.f32
  [ "$field" = nyx ] && input=$DATA/nyx_phigrav_128x128x128.f64
  for round in $(seq 1 "$ROUNDS"); do
    for b in old new; do
      build=${OLD:?}; [ "$b" = new ] && build=${NEW:?}
      echo "$(date +%T) $field $b$round"
      ZCOLL_STUDY_ITERS=100 ZCOLL_STUDY_RATES_2="" ZCOLL_STUDY_RATES_4="10gbit" \
        bash "$ROOT/bench/netem/run_auto_study.sh" "$build" "$OUT/$field-$b$round" "$input" 1M,16M
    done
  done
done
