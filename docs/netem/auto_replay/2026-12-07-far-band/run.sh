#!/bin/bash
# The re-checks past the widest band (cost_model.cc, recheck(): a path predicted r >= 3x the
# chosen path's time runs again 128 x (r - 1) calls after its last run, 512 at least, backing
# off 2x), replayed on the measured columns of the same three sets as ../2026-12-07/run.sh:
# the c8efc36 2 x 2 studies, the 32 held-out studies, the e782d56 A/B launches. Once round
# (100-call plays: the rule cannot act, the output must equal the build before) and eight
# times round (760-call plays: what the rule costs, the host's spells coming round again).
# Writes {before,after}-{c8efc36,held-out,ab}-rounds{1,8}.txt (held-out: .txt.xz).
#   BEFORE=<build of the commit that gave the replay --rounds> AFTER=<build of the rule> bash run.sh
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
bash "$HERE/../sets.sh" "$TMP"
for which in before after; do
  build=${BEFORE:?}; [ "$which" = after ] && build=${AFTER:?}
  for rounds in 1 8; do
    for set in c8efc36 held-out ab; do
      out=$HERE/$which-$set-rounds$rounds.txt
      mpiexec.mpich -n 1 "$build/tests/mpi/zcoll_auto_study_replay" "$TMP/$set.txt" --rounds "$rounds" > "$out"
      echo "$which $set rounds $rounds: $(tail -1 "$out")"
      if [ "$set" = held-out ]; then xz -9 -f "$out"; fi
    done
  done
done
