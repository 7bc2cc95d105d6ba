#!/usr/bin/env bash
# The image stacking demo over a network, when this machine can make one:
#
#   apps/image_stacking/run_demo.sh BUILD_DIR [zcoll-image-stacking options...]
#
# As root, with ip and tc (iproute2) and network namespaces available, it runs 2 ranks over
# an emulated 1 Gbit/s link (bench/netem/run.sh: namespaces, veth, tc tbf, with a ping-pong
# check of the rate first). Otherwise it runs 2 ranks on shared memory and the program says
# that the speedup there means nothing. The PNGs go to image_stacking_out/ unless --out.
# ZCOLL_DEMO_RATE (default 1gbit) changes the emulated rate.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:?usage: run_demo.sh BUILD_DIR [options]}
shift
bin="$(cd "$build" && pwd)/apps/image_stacking/zcoll-image-stacking"
[ -x "$bin" ] || { echo "run_demo.sh: $bin not built" >&2; exit 1; }
rate=${ZCOLL_DEMO_RATE:-1gbit}
# Two ranks share the cores; more OpenMP threads than cores would only slow both down.
cores=$(nproc 2>/dev/null || echo 2)
threads=$(( cores / 2 > 0 ? cores / 2 : 1 ))
args=(--threads "$threads" --out "$PWD/image_stacking_out" "$@")

can_netem() {
  [ "$(id -u)" = 0 ] && command -v ip >/dev/null && command -v tc >/dev/null || return 1
  # Namespaces can be forbidden even to root (unprivileged containers): try one.
  ip netns add zc-probe 2>/dev/null || return 1
  ip netns del zc-probe
}

if can_netem; then
  echo "run_demo.sh: 2 ranks over an emulated $rate link (network namespaces + tc tbf)" >&2
  set +e
  bash "$root/bench/netem/run.sh" --rate "$rate" --ranks 2 --mpi mpich \
    --exit-line "zcoll-image-stacking: exit status" -- \
    "$bin" --link "emulated $rate per direction (2 network namespaces, tc tbf), MPICH over TCP" "${args[@]}"
  rc=$?
  set -e
  # 4: the emulated network could not be set up; 3: it did not deliver the rate. Then the
  # demo still runs, on shared memory, and says so.
  [ "$rc" -ne 3 ] && [ "$rc" -ne 4 ] && exit "$rc"
  echo "run_demo.sh: the emulated link is not usable here (netem exit $rc); running on shared memory" >&2
else
  echo "run_demo.sh: cannot create network namespaces (needs root, ip and tc); running on shared memory" >&2
fi
exec mpiexec.mpich -n 2 "$bin" --link "shared memory (no network)" "${args[@]}"
