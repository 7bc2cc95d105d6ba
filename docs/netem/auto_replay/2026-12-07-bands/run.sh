#!/bin/bash
# The 32-call re-check band at 1.75x, not 2x, and a slowed path's wait of 12 calls, not 16
# (cost_model.cc, kSpellCalls and recheck()), replayed on the four sets of ../sets.sh, once
# and eight times round.
#   BEFORE=<build of 016346d> AFTER=<build of the change> bash run.sh
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bash "$HERE/../replay_before_after.sh" "$HERE" 1 8
