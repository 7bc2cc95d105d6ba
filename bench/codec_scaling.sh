#!/usr/bin/env bash
# Codec thread scaling (issue 17): zcoll-bench codec at each thread count of $THREADS (default
# "1 2") on fields of at least 16 MiB, REL 1e-4, best of --repeat each, the thread counts
# alternated ROUNDS times (1, 2, 1, 2, ...) so that the other jobs on a shared host weigh on all
# alike. Prints one JSON line per run (zcoll-bench's, plus round and the 1-minute load average
# before it) to stdout.
#
#   [THREADS="1 2 4 8 16"] bash bench/codec_scaling.sh BUILD_DIR [ROUNDS] [REPEAT] > scaling.jsonl
#
# With COMPARE=OTHER_BUILD_DIR each run is followed by the same run of the other build's
# zcoll-bench (a change to the codec measured against its parent, alternated; "build" in the
# JSON says which). EB (default 1e-4) sets the REL bound. OMP_THREAD_LIMIT caps the team
# whatever --threads asks, so THREADS="16" with OMP_THREAD_LIMIT=2 runs 16 ranges of chunks,
# and the slide of 16 shares, on 2 threads.
#
# Fields: the Nyx field (16 MiB, f64) as it is, and the smaller real fields tiled
# (concatenated whole) to >= 16 MiB in $TMPDIR (default /tmp): cesm_TS x8, turb_wmag x6,
# isabel_velmag x6, echam5_T x14. They are read from ../shared/datasets; where that is missing
# (a clone without ../shared), the three fields the repository ships in data/ are used.
set -euo pipefail
build="${1:?usage: codec_scaling.sh BUILD_DIR [ROUNDS] [REPEAT]}"
rounds="${2:-3}"
repeat="${3:-5}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
shared="$here/../../shared/datasets"
[ -d "$shared" ] || shared="$here/../data"
tmp="${TMPDIR:-/tmp}/zcoll_codec_scaling"
mkdir -p "$tmp"
fields=()
[ -f "$shared/nyx_phigrav_128x128x128.f64" ] && fields+=("$shared/nyx_phigrav_128x128x128.f64")
for spec in cesm_TS_10x192x288.f32:8 turb_wmag_91x91x91.f32:6 isabel_velmag_t48_25x125x125.f64:6 \
            echam5_T_17x96x192.f32:14; do
  name="${spec%%:*}"
  times="${spec##*:}"
  [ -f "$shared/$name" ] || continue
  out="$tmp/${name%.*}_tiled${times}.${name##*.}"
  if [ ! -s "$out" ]; then
    : > "$out"
    for _ in $(seq "$times"); do cat "$shared/$name" >> "$out"; done
  fi
  fields+=("$out")
done
for f in "${fields[@]}"; do
  for r in $(seq "$rounds"); do
    for t in ${THREADS:-1 2}; do
      for b in "$build" ${COMPARE:+"$COMPARE"}; do
        load="$(cut -d' ' -f1 /proc/loadavg)"
        line="$("$b/bench/zcoll-bench" codec --input "$f" --eb-mode rel \
                 --eb "${EB:-1e-4}" --threads "$t" --repeat "$repeat" --json)"
        echo "${line%\}},\"round\":$r,\"load1\":$load,\"build\":\"$b\"}"
      done
    done
  done
done
