#!/usr/bin/env bash
# AUTO's warm start at 16 ranks per node (SIMULATED, SimGrid SMPI): for each cell, a training
# launch (the model starts cold and writes ZCOLL_TUNING_FILE at zcoll_comm_free) and then a
# warm launch (it starts from that file), each timing AUTO and plain MPI in the same launch.
# Needs build-smpi (bench/smpi/build.sh). Writes OUT/<cell>-{train,warm}/ (run_scale.py's
# output; its plots need matplotlib, the results do not) and OUT/<cell>.tuning.
# The cells named after OUT run, in that order; without any, the first four below.
#
#   bash bench/smpi/run_warm_start.sh OUT [CELL...]
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:?usage: run_warm_start.sh OUT [CELL...]}"
shift
mkdir -p "$out"
py="$root/.venv/bin/python"
[ -x "$py" ] || py="$(command -v python3)"
common=(--build "$root/build-smpi" --ranks-per-node 16 --effective-threads 2 --warmup 0 --check-stride 64
        --iters 16 --algos auto --fresh)
cell() {  # NAME NODES OP SIZE [run_scale.py options...]
  local name=$1 nodes=$2 op=$3 size=$4
  shift 4
  for phase in train warm; do
    echo "== $name $phase $(date +%T)"
    ZCOLL_TUNING_FILE="$out/$name.tuning" "$py" "$here/run_scale.py" --out "$out/$name-$phase" "${common[@]}" \
      --nodes "$nodes" --ops "$op" --plan "$op=$size" "$@" > "$out/$name-$phase.log" 2>&1
    echo "rc=$? $(date +%T)"
  done
}
# Per-rank sizes: the largest that fit this machine's memory at each scale (an allgather holds
# p blocks on each of its p ranks).
run_cell() {
  case "$1" in
    n8_allreduce_16M) cell n8_allreduce_16M 8 allreduce 16M ;;
    n16_allreduce_4M) cell n16_allreduce_4M 16 allreduce 4M ;;
    n8_bcast_16M) cell n8_bcast_16M 8 bcast 16M --smpi-coll bcast=scatter_LR_allgather ;;
    n16_bcast_4M) cell n16_bcast_4M 16 bcast 4M --smpi-coll bcast=scatter_LR_allgather ;;
    n8_allgather_128K) cell n8_allgather_128K 8 allgather 128K ;;
    n16_allgather_64K) cell n16_allgather_64K 16 allgather 64K ;;
    n8_reduce_scatter_16M) cell n8_reduce_scatter_16M 8 reduce_scatter 16M ;;
    *) echo "run_warm_start.sh: unknown cell $1" >&2; return 2 ;;
  esac
}
[ $# -gt 0 ] || set -- n8_allreduce_16M n16_allreduce_4M n8_bcast_16M n16_bcast_4M
for name in "$@"; do run_cell "$name" || exit 2; done
