#!/usr/bin/env bash
# The README's codec figures: every codec on the six fields at REL 1e-4, one thread, best
# of 7, ROUNDS rounds (codecs and ISAs alternated within a round), as JSON lines.
#   bash run.sh BUILD ROUNDS > codecs.jsonl; python3 summarize.py codecs.jsonl
set -euo pipefail
B=${1:-build-mpich} ROUNDS=${2:-3}
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
S=${ZCOLL_SHARED:-$ROOT/../shared/datasets}
fields=("$ROOT"/data/*.f32 "$S"/isabel_velmag_t48_25x125x125.f64 "$S"/nyx_phigrav_128x128x128.f64
        "$S"/seismic_mobilavo_crg_60x1000.f32)
for r in $(seq "$ROUNDS"); do
  for f in "${fields[@]}"; do
    for run in fzl:avx2 lpbyte:avx2 lpbit:avx2 lpbyte:generic lpbit:generic; do
      codec=${run%%:*} isa=${run##*:} env=()
      [ "$isa" = generic ] && env=(ZCOLL_ISA=generic)
      line=$(env "${env[@]}" "$ROOT/$B/bench/zcoll-bench" codec --input "$f" --dtype "${f##*.}" --codec "$codec" \
             --eb-mode rel --eb 1e-4 --threads 1 --repeat 7 --json)
      python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(json.dumps(dict(round=$r, codec='$codec', isa='$isa', file='$(basename "$f")', ratio=d['ratio'], comp=d['comp_gbps'], decomp=d['decomp_gbps'])))" "$line"
    done
  done
done
