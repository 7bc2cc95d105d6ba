#!/bin/bash
# The narrowest re-check band at 1.1x, not 1.25x (cost_model.cc, recheck()), replayed on the
# measured columns of the four sets of ../sets.sh (the fourth, 980 cells of the 16-40-call
# studies, used to choose no rule), once and eight times round.
#   BEFORE=<build of 59431eb> AFTER=<build of the change> bash run.sh
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bash "$HERE/../replay_before_after.sh" "$HERE" 1 8
