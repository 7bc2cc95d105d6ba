#!/bin/bash
# AUTO's rules before (1533a94) and after (fb362b9: the re-check bands at 1.1x and 1.75x, a
# 12-call spell wait, backoff kept across changes of the choice, the far band), alternated:
# 2 x 2 ranks at 10 Gbit/s, 1 and 16 MiB, 100 calls per cell, cesm_TS then Nyx, two rounds
# each (docs/results.md, 2026-12-07, night). OLD and NEW: MPICH builds of the two commits (zcoll-bench, and
# libzcoll_ucx_yield.so beside it). Writes FIELD-{old,new}{1,2}/ here.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../../.." && pwd)
DATA=${DATA:-$ROOT/../shared/datasets}
for field in cesm nyx; do
  input=$DATA/cesm_TS_10x192x288.f32
  [ "$field" = nyx ] && input=$DATA/nyx_phigrav_128x128x128.f64
  for round in 1 2; do
    for b in old new; do
      build=${OLD:?}; [ "$b" = new ] && build=${NEW:?}
      echo "$(date +%T) $field $b$round"
      ZCOLL_STUDY_ITERS=100 ZCOLL_STUDY_RATES_2="" ZCOLL_STUDY_RATES_4="10gbit" \
        bash "$ROOT/bench/netem/run_auto_study.sh" "$build" "$HERE/$field-$b$round" "$input" 1M,16M
    done
  done
done
