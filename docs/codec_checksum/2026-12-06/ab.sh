#!/usr/bin/env bash
# Two codec libraries alternated, ROUNDS rounds, five fields: speed.c against each.
#   bash ab.sh BEFORE_LIBDIR AFTER_LIBDIR ROUNDS > ab.jsonl
# A LIBDIR holds libzcoll_codec.so.0 (a copy of build-*/src/libzcoll_codec.so.0).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
BEFORE=$1 AFTER=$2 ROUNDS=${3:-9}
S=${ZCOLL_SHARED:-$ROOT/../shared/datasets}
BIN=$(mktemp -d)/speed
gcc -O2 -DZCOLL_CODEC_ONLY -I"$ROOT/include" "$HERE/speed.c" -L"$AFTER" -l:libzcoll_codec.so.0 -o "$BIN"
for r in $(seq "$ROUNDS"); do
  for f in "$ROOT"/data/*.f32 "$S"/isabel_velmag_t48_25x125x125.f64 "$S"/nyx_phigrav_128x128x128.f64; do
    for which in before after; do
      lib=$BEFORE; [ "$which" = after ] && lib=$AFTER
      echo "{\"round\": $r, \"build\": \"$which\", $(LD_LIBRARY_PATH=$lib "$BIN" "$f" 15 | cut -c2-)"
    done
  done
done
