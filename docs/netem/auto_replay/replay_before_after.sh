#!/bin/bash
# AUTO's rules of two builds replayed on the three sets of sets.sh, each play ROUNDS times a
# study's length (zcoll_auto_study_replay --rounds). Writes
# DIR/{before,after}-{c8efc36,held-out,ab}-rounds<R>.txt (held-out: .txt.xz).
#   BEFORE=<build> AFTER=<build> bash replay_before_after.sh DIR ROUNDS...
set -euo pipefail
OUT=${1:?usage: replay_before_after.sh DIR ROUNDS...}
shift
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
bash "$(dirname "${BASH_SOURCE[0]}")/sets.sh" "$TMP"
for which in before after; do
  build=${BEFORE:?}; [ "$which" = after ] && build=${AFTER:?}
  for rounds in "$@"; do
    for set in c8efc36 held-out ab; do
      out=$OUT/$which-$set-rounds$rounds.txt
      mpiexec.mpich -n 1 "$build/tests/mpi/zcoll_auto_study_replay" "$TMP/$set.txt" --rounds "$rounds" > "$out"
      echo "$which $set rounds $rounds: $(tail -1 "$out")"
      if [ "$set" = held-out ]; then xz -9 -f "$out"; fi
    done
  done
done
