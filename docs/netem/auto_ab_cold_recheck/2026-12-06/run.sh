#!/bin/bash
# Alternated A/B of the cost model at 10 Gbit/s, two ranks, 100 calls per cell: new = cda9501 (build-mpich),
# old = ddc7919 built in a git worktree at /tmp/oldtree (cmake with zmpi_cmake_args mpich; make zcoll-bench).
# Rounds 1-4 are kept here (OUT=/tmp/ab/FIELD-VARIANT-ROUND; copied with results.jsonl xz-compressed).
cd /work/main
CESM=/work/shared/datasets/cesm_TS_10x192x288.f32
NYX=/work/shared/datasets/nyx_phigrav_128x128x128.f64
for round in ${ROUNDS:-1 2}; do
  for field in cesm nyx; do
    in=$CESM; [ $field = nyx ] && in=$NYX
    for v in new old; do
      b=/work/main/build-mpich; [ $v = old ] && b=/tmp/oldtree/build
      echo "$(date +%T) start $round $field $v"
      ZCOLL_STUDY_ITERS=100 ZCOLL_STUDY_RATES_4="" ZCOLL_STUDY_RATES_2="10gbit" \
        bash bench/netem/run_auto_study.sh $b /tmp/ab/$field-$v-$round $in > /tmp/ab/$field-$v-$round.log 2>&1
      echo "$(date +%T) done rc=$?"
    done
  done
done
