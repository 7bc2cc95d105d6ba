#!/usr/bin/env bash
# The new build: 1-D against the shape hint, alternated, ROUNDS rounds.
B=$1 ROUNDS=${2:-5}
S=/work/shared/datasets
specs="$S/cesm_TS_10x192x288.f32:10x192x288 $S/echam5_T_17x96x192.f32:17x96x192 $S/turb_wmag_91x91x91.f32:91x91x91
$S/isabel_velmag_t48_25x125x125.f64:25x125x125 $S/nyx_phigrav_128x128x128.f64:128x128x128"
for r in $(seq $ROUNDS); do
  for spec in $specs; do
    f=${spec%%:*} d=${spec##*:}
    for dims in none $d; do
      extra=(); [ $dims = none ] || extra=(--dims $dims)
      $B/bench/zcoll-bench codec --input $f --dtype ${f##*.} --eb-mode rel --eb 1e-4 --threads 1 --repeat 7 "${extra[@]}" --json |
        python3 -c "import json,sys; d=json.load(sys.stdin); print(json.dumps(dict(dims='$dims', round=$r, file='$(basename $f)', comp=d['comp_gbps'], decomp=d['decomp_gbps'], ratio=d['ratio'])))"
    done
  done
done
