#!/usr/bin/env bash
# What two clock reads around plain MPI cost a call under SMPI (clock_cost.c), on the platform
# of the 16-ranks-per-node study: plain MPI_Allreduce bare, with the two MPI_Wtime reads
# zcoll's front end makes, and on a duplicated communicator (env MODES, default "bare clocked
# dup"), each with SMPI charging the CPU time between MPI calls (its default,
# as in run_scale.py) and without (smpi/simulate-computation:no). JSON lines on stdout, each
# with the configuration in "smpi". SIMULATED.
#
#   bash bench/smpi/clock_cost.sh [NODES] [RANKS_PER_NODE] [BYTES_PER_RANK] [ITERS] [REPEATS]
#   (default 8 16 4194304 32 2)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
nodes=${1:-8} rpn=${2:-16} bytes=${3:-4194304} iters=${4:-32} repeats=${5:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
smpicc -O2 -std=c11 "$here/clock_cost.c" -o "$work/clock_cost"
# The platform and configuration of run_scale.py at factor 1 (plain MPI's launch).
python3 "$here/make_platform.py" --nodes "$nodes" --ranks-per-node "$rpn" --loopback-bw 12GBps \
  --loopback-lat 0.3us --speed 1Gf --out "$work/cluster.xml" --hostfile "$work/hosts.txt"
cfg=(--cfg=smpi/host-speed:1Gf --cfg=smpi/coll-selector:ompi --cfg=smpi/test:1e-6
     --cfg=smpi/bw-factor:0:1 --cfg=smpi/lat-factor:0:1)
for sim in yes no; do
  for ((r = 0; r < repeats; ++r)); do
    for mode in ${MODES:-bare clocked dup}; do
      line=$(smpirun -np $((nodes * rpn)) -platform "$work/cluster.xml" -hostfile "$work/hosts.txt" "${cfg[@]}" \
               --cfg=smpi/simulate-computation:$sim --log=xbt_cfg.thres:warning --log=smpi_config.thres:error \
               "$work/clock_cost" $((bytes / 8)) "$iters" "$mode" 2>/dev/null)
      echo "${line%\}},\"nodes\":$nodes,\"ranks_per_node\":$rpn,\"smpi\":\"simulate-computation:$sim ${cfg[*]}\"}"
    done
  done
done
