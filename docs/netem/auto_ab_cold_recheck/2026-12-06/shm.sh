#!/bin/bash
cd /work/main
for field in cesm nyx; do
  in=/work/shared/datasets/cesm_TS_10x192x288.f32; [ $field = nyx ] && in=/work/shared/datasets/nyx_phigrav_128x128x128.f64
  echo "$(date +%T) start $field shm"
  ZCOLL_STUDY_ITERS=100 ZCOLL_STUDY_RATES_4="" ZCOLL_STUDY_RATES_2="shm" bash bench/netem/run_auto_study.sh /work/main/build-mpich ${OUT:-/tmp/ab}/shm-$field-final $in > ${OUT:-/tmp/ab}/shm-$field-final.log 2>&1
  echo "$(date +%T) done rc=$?"
done
