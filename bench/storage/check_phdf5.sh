#!/usr/bin/env bash
# bench/storage/check_phdf5.sh: does parallel HDF5 get the throttled rate? (README.md,
# "Measured here").
#
#   bash bench/storage/check_phdf5.sh [--rate-mbps R] [--ranks N] [--mib M] [--reps K]
#
# Mounts throttlefs at R MB/s (default 100) on a new folder under /var/tmp, builds
# phdf5_rate.c with MPICH's parallel HDF5 (h5pcc.mpich, Debian's libhdf5-mpich-dev), and
# runs it on N ranks (default 4), each writing M MiB (default 32), K times (default 2)
# with independent and with collective transfer, alternated. Each run prints its rate
# and whether the file read back; the mount is removed on exit. Needs FUSE (root).
# MPICH's waiting ranks spin; with more ranks than cores they would take the cores of
# throttlefs and of the writing ranks, so its yield shim is preloaded (--yield-lib LIB,
# default build-mpich/libzcoll_ucx_yield.so; --busy-wait for none), as in the write study.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
RATE=100 RANKS=4 MIB=32 REPS=2 YIELD_LIB=$ROOT/build-mpich/libzcoll_ucx_yield.so
while [ $# -gt 0 ]; do
  case "$1" in
    --rate-mbps) RATE=$2; shift 2 ;;
    --ranks) RANKS=$2; shift 2 ;;
    --mib) MIB=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --yield-lib) YIELD_LIB=$2; shift 2 ;;
    --busy-wait) YIELD_LIB=""; shift ;;
    *) echo "usage: $0 [--rate-mbps R] [--ranks N] [--mib M] [--reps K] [--yield-lib LIB | --busy-wait]" >&2; exit 2 ;;
  esac
done
command -v h5pcc.mpich >/dev/null || { echo "check_phdf5: h5pcc.mpich not found (Debian: libhdf5-mpich-dev)" >&2; exit 77; }

YIELD=()
if [ -n "$YIELD_LIB" ]; then
  [ -f "$YIELD_LIB" ] || { echo "check_phdf5: $YIELD_LIB not built (scripts/bootstrap.sh builds it): pass --yield-lib or --busy-wait" >&2; exit 2; }
  YIELD=(-genv LD_PRELOAD "$YIELD_LIB")
fi
waiting="spin"; [ -z "$YIELD_LIB" ] || waiting="yield ($YIELD_LIB)"
echo "check_phdf5: $RANKS ranks x $MIB MiB at $RATE MB/s, waiting ranks $waiting"

T=$(mktemp -d /var/tmp/zcoll-phdf5.XXXXXX)
MNT=$T/mnt
cleanup() {
  bash "$HERE/mount.sh" --unmount "$MNT" >/dev/null 2>&1 || true
  rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$MNT" "$T/backing"
# h5pcc compiles in the working directory and leaves its .o there
(cd "$T" && h5pcc.mpich -O2 -o phdf5_rate "$HERE/phdf5_rate.c")
bash "$HERE/mount.sh" --rate-mbps "$RATE" --backing "$T/backing" "$MNT"
fails=0
for rep in $(seq "$REPS"); do
  for mode in independent collective; do
    rm -f "$MNT/rate.h5"
    echo -n "rep $rep: "
    mpiexec.mpich "${YIELD[@]}" -n "$RANKS" "$T/phdf5_rate" "$MNT/rate.h5" "$MIB" "$mode" || fails=$((fails + 1))
  done
done
[ "$fails" -eq 0 ]
