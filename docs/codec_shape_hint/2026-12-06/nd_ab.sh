#!/usr/bin/env bash
# A/B of the shape hint's codec speed: OLD and NEW zcoll-bench alternated, ROUNDS rounds.
OLD=$1 NEW=$2 ROUNDS=${3:-3}
T=/tmp/zcoll_codec_scaling S=/work/shared/datasets
specs="$S/cesm_TS_10x192x288.f32:10x192x288 $S/echam5_T_17x96x192.f32:17x96x192 $S/turb_wmag_91x91x91.f32:91x91x91
$S/isabel_velmag_t48_25x125x125.f64:25x125x125 $S/nyx_phigrav_128x128x128.f64:128x128x128
$T/cesm_TS_10x192x288_tiled8.f32:80x192x288 $T/echam5_T_17x96x192_tiled14.f32:238x96x192"
for r in $(seq $ROUNDS); do
  for spec in $specs; do
    f=${spec%%:*} d=${spec##*:}
    for b in $OLD $NEW; do
      $b/bench/zcoll-bench codec --input $f --dtype ${f##*.} --eb-mode rel --eb ${EB:-1e-4} --threads 1 --repeat 7 --dims $d --json |
        python3 -c "import json,sys; d=json.load(sys.stdin); print(json.dumps(dict(build='$b', round=$r, file='$(basename $f)', comp=d['comp_gbps'], decomp=d['decomp_gbps'], ratio=d['ratio'], bytes=d['compressed_bytes'], maxerr=d['max_err_over_eb'])))"
    done
  done
done
