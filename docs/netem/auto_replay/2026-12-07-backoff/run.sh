#!/bin/bash
# A path's re-check count starts over when it is chosen, not at every change of the chosen
# path (cost_model.cc, recheck()), replayed on the measured columns of the three sets of
# ../sets.sh, once and eight times round (100 and 760 calls a play).
#   BEFORE=<build of 78dde39> AFTER=<build of the change> bash run.sh
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bash "$HERE/../replay_before_after.sh" "$HERE" 1 8
