#!/bin/bash
# AUTO's rules of two builds replayed on the sets of sets.sh, each play ROUNDS times a study's
# length (zcoll_auto_study_replay --rounds). Writes
# DIR/{before,after}-{c8efc36,held-out,ab,short}-rounds<R>.txt (held-out, short: .txt.xz).
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
    for set in c8efc36 held-out ab short; do
      out=$OUT/$which-$set-rounds$rounds.txt
      skip=5; [ "$set" = short ] && skip=3  # 16-call columns keep 13
      mpiexec.mpich -n 1 "$build/tests/mpi/zcoll_auto_study_replay" "$TMP/$set.txt" --skip $skip --rounds "$rounds" \
        > "$out"
      echo "$which $set rounds $rounds: $(tail -1 "$out")"
      case $set in held-out|short) xz -9 -f "$out" ;; esac
    done
  done
done
