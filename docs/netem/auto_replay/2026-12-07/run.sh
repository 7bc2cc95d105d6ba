#!/bin/bash
# AUTO's rules before and after e782d56 (a factor from the second lowest of seven runs, not
# five; the spell re-check's best run ever and its plain-stretch turn), replayed on the
# measured columns of the committed 100-call studies (bench/netem/README.md, "AUTO's rules
# replayed"). Three sets: the c8efc36 2 x 2 studies the change was tried on; 32 other
# studies (26 two-rank, 6 of 2 x 2), held out; and the eight launches of the A/B that
# followed (docs/netem/auto_2x2/e782d56-ab-10gbit), new data. Writes
# {before,after}-{c8efc36,held-out,ab}.txt (held-out: .txt.xz).
#   BEFORE=<build of cc82e6b> AFTER=<build of e782d56 or later> bash run.sh
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../../.." && pwd)
N=$ROOT/docs/netem
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
python3 "$ROOT/bench/netem/replay_cells.py" "$TMP/c8efc36.txt" "$N"/auto_2x2/c8efc36-100calls-{cesm,nyx}
held=()
for d in 04957ef-1M-100calls 076b78f-100calls 0de021e-1M-100calls 148ee55-100calls 373c769-fastpath-rechecks \
         392033b-burst128k 3e5be9c-100calls 461c773-1gbit-shm 4a4d782-1M-100calls 5107a4d-1M-100calls \
         69b32c8-100calls 6a3da04-100calls a58b70e-1gbit-shm a80e1e8-100calls ae30dd6-10gbit-cesm \
         ae30dd6-10gbit-nyx b3d707d-10gbit-16M64M b771686-100calls c725bb8-100calls c81dda3-100calls \
         cf51ab0-100calls d1c5975-100calls e0b9503-1M-100calls f28d8e8-100calls fbb7442-100calls \
         fbfd534-1M-100calls; do held+=("$N/auto_2rank/$d"); done
for d in 076b78f-100calls 392033b-burst128k 461c773-1gbit 78ee123-100calls c81dda3-100calls d1c5975-100calls; do
  held+=("$N/auto_2x2/$d")
done
python3 "$ROOT/bench/netem/replay_cells.py" "$TMP/held-out.txt" "${held[@]}"
python3 "$ROOT/bench/netem/replay_cells.py" "$TMP/ab.txt" "$N"/auto_2x2/e782d56-ab-10gbit/*/
for which in before after; do
  build=${BEFORE:?}; [ "$which" = after ] && build=${AFTER:?}
  for set in c8efc36 held-out ab; do
    out=$HERE/$which-$set.txt
    mpiexec.mpich -n 1 "$build/tests/mpi/zcoll_auto_study_replay" "$TMP/$set.txt" > "$out"
    echo "$which $set: $(tail -1 "$out")"
    if [ "$set" = held-out ]; then xz -9 -f "$out"; fi
  done
done
