#!/bin/bash
# The re-checks past the widest band (cost_model.cc, recheck(): a path predicted r >= 3x the
# chosen path's time runs again 128 x (r - 1) calls after its last run, 512 at least, backing
# off 2x), replayed on the measured columns of the three sets of ../sets.sh. Once round
# (100-call plays: the rule cannot act, the output must equal the build before) and eight
# times round (760-call plays: what the rule costs, the host's spells coming round again).
#   BEFORE=<build of f0c901c> AFTER=<build of 78dde39> bash run.sh
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bash "$HERE/../replay_before_after.sh" "$HERE" 1 8
