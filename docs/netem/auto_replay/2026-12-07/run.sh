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
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
bash "$HERE/../sets.sh" "$TMP"
for which in before after; do
  build=${BEFORE:?}; [ "$which" = after ] && build=${AFTER:?}
  for set in c8efc36 held-out ab; do
    out=$HERE/$which-$set.txt
    mpiexec.mpich -n 1 "$build/tests/mpi/zcoll_auto_study_replay" "$TMP/$set.txt" > "$out"
    echo "$which $set: $(tail -1 "$out")"
    if [ "$set" = held-out ]; then xz -9 -f "$out"; fi
  done
done
