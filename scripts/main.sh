#!/usr/bin/env bash
# The main job (README): set the machine up, build with MPICH in build-mpich/, then run the
# codec benchmark over the shipped fields (data/) and ../shared/datasets when present.
#
#   scripts/main.sh [zcoll-bench codec arguments...]
# e.g. scripts/main.sh --json     (arguments go to `zcoll-bench codec` unchanged)
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ZCOLL_ROOT"

bash scripts/bootstrap.sh --mpi mpich
bench="build-mpich/bench/zcoll-bench"
[ -x "$bench" ] || zdie "$bench was not built"
zlog "$bench codec $*"
exec "$bench" codec "$@"
