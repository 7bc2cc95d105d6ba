#!/bin/bash
# The last session's rules (AFTER: a build of 97923ec) against the rules it started from
# (BEFORE: a build of 1533a94), replayed on columns no rule was tuned on: this morning's
# 100-call studies of 97923ec, two ranks and 2 x 2, both fields (160 cells). 1533a94's replay
# has no --rounds; AFTER is also read round 8 times.
#   BEFORE=<build> AFTER=<build> bash run.sh
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
N=$HERE/../..
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
python3 "$N/../../bench/netem/replay_cells.py" "$TMP/fresh.txt" "$N"/auto_2rank/97923ec-100calls \
  "$N"/auto_2rank_cesm/97923ec-100calls "$N"/auto_2x2/97923ec-100calls-{nyx,cesm}
replay() { mpiexec.mpich -n 1 "$1/tests/mpi/zcoll_auto_study_replay" "$TMP/fresh.txt" --skip 5 "${@:3}" > "$HERE/$2"; }
replay "${BEFORE:?}" before-fresh-rounds1.txt
replay "${AFTER:?}" after-fresh-rounds1.txt
replay "$AFTER" after-fresh-rounds8.txt --rounds 8
tail -n 1 "$HERE"/*-fresh-rounds*.txt
