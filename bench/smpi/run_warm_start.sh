#!/usr/bin/env bash
# AUTO's warm start at 16 ranks per node (SIMULATED, SimGrid SMPI): for each cell, a training
# launch (the model starts cold and writes ZCOLL_TUNING_FILE at zcoll_comm_free) and then a
# warm launch (it starts from that file), each timing AUTO and plain MPI in the same launch.
# Needs build-smpi (bench/smpi/build.sh). Writes OUT/<cell>-{train,warm}/ (run_scale.py's
# output; its plots need matplotlib, the results do not) and OUT/<cell>.tuning.
#
#   bash bench/smpi/run_warm_start.sh OUT
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:?usage: run_warm_start.sh OUT}"
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
cell n8_allreduce_16M 8 allreduce 16M
cell n16_allreduce_4M 16 allreduce 4M
cell n8_bcast_16M 8 bcast 16M --smpi-coll bcast=scatter_LR_allgather
cell n16_bcast_4M 16 bcast 4M --smpi-coll bcast=scatter_LR_allgather
