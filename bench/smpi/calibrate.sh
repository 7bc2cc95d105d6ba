#!/usr/bin/env bash
# How SMPI charges compute, checked: builds calibrate.c with smpicc against the smpicc build's
# libzcoll.a and runs it on one simulated host (smpi/host-speed = the host's speed). It prints
# one JSON line: per codec call (compress, decompress; single thread) the simulated time, the
# thread's CPU time and the wall time, medians over --repeat calls. sim_over_cpu = 1 means a
# compute stretch costs the simulated host exactly the CPU time it took on this machine.
#
#   bash bench/smpi/calibrate.sh [BUILD_DIR] [FIELD] [--speed 1Gf]   (default build-smpi, nyx or turb_wmag)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
dir="${1:-$root/build-smpi}"
field="${2:-$root/../shared/datasets/nyx_phigrav_128x128x128.f64}"
[ -f "$field" ] || field="$root/data/turb_wmag_91x91x91.f32"
speed="${SPEED:-1Gf}"
lib="$dir/src/libzcoll.a"
[ -f "$lib" ] || { echo "calibrate.sh: $lib missing (bash bench/smpi/build.sh $dir)" >&2; exit 1; }
work="$dir/smpi-calibrate"
mkdir -p "$work"
smpicc -O2 -std=c11 -I"$root/include" "$here/calibrate.c" -o "$work/calibrate" "$lib" -fopenmp -lstdc++ -lm
python3 "$here/make_platform.py" --nodes 1 --speed "$speed" --out "$work/cluster_1.xml" --hostfile "$work/hosts_1.txt"
OMP_NUM_THREADS=1 smpirun -np 1 -platform "$work/cluster_1.xml" -hostfile "$work/hosts_1.txt" \
  --cfg=smpi/host-speed:"$speed" --log=xbt_cfg.thres:warning "$work/calibrate" "$field" --repeat 7
