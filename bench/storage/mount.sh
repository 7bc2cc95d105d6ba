#!/usr/bin/env bash
# bench/storage/mount.sh: mount throttlefs (a bandwidth-limited FUSE pass-through file
# system, see README.md) and check its write rate with dd.
#
#   bench/storage/mount.sh [--rate-mbps R] [--capacity-bytes C] [--backing DIR] [options] MOUNTPOINT
#   bench/storage/mount.sh --unmount MOUNTPOINT
#   bench/storage/mount.sh --check-only [--rate-mbps R] MOUNTPOINT
#   bench/storage/mount.sh --build-only
#
# Builds throttlefs into $ZCOLL_STORAGE_BUILD (default: <repo>/build-storage) when it is
# missing or older than throttlefs.c, mounts it in the background (its log in the build
# folder), waits for the mount, then measures the backing directory's own rate and the
# mount's rate with the same dd (conv=fsync) and fails if the mount is off the requested
# rate by more than 10%. Needs /dev/fuse and fusermount3 (root, or a user allowed to mount).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${ZCOLL_STORAGE_BUILD:-$ROOT/build-storage}
BIN=$BUILD/throttlefs
SRC=$HERE/throttlefs.c
BACKING=/var/tmp/zcoll-storage-backing
RATE="" READ_RATE="" CAPACITY="" BURST="" CHECK=1 TOL=10 CHECK_MIB="" MODE=mount
EXTRA=()

usage() {
  cat >&2 <<EOF
usage: $0 [options] MOUNTPOINT          mount, then check the rate
       $0 --unmount MOUNTPOINT          unmount (fusermount3 -u, else umount -l)
       $0 --check-only [--rate-mbps R] MOUNTPOINT
                                        only the dd check of a mounted throttlefs
       $0 --build-only                  build throttlefs, print its path
options:
  --rate-mbps R        write rate in MB/s (1e6 bytes/s), shared by all writers; required
                       for a mount (0: unthrottled, no check)
  --read-rate-mbps R2  read rate (default: reads unthrottled)
  --capacity-bytes C   report ENOSPC beyond C bytes of files (K/M/G suffixes: 1024-based)
  --burst-bytes B      bucket depth (default: 1 MiB)
  --backing DIR        backing directory on a real disk (default $BACKING)
  --check-mib N        MiB written by the check (default: max(2 s at R, 64 MiB))
  --tolerance PCT      allowed deviation of the measured rate, percent (default $TOL)
  --no-check           mount without the dd check
  -o OPT               passed to throttlefs as a FUSE option (repeatable)
Exit status: 0 ok; 2 usage; 3 rate check failed (the mount is removed); 4 setup failure.
EOF
  exit 2
}
say() { echo "throttlefs: $*"; }
die() { echo "throttlefs: $*" >&2; exit 4; }

while [ $# -gt 0 ]; do
  case "$1" in
    --rate-mbps) RATE=${2:?}; shift 2 ;;
    --read-rate-mbps) READ_RATE=${2:?}; shift 2 ;;
    --capacity-bytes) CAPACITY=${2:?}; shift 2 ;;
    --burst-bytes) BURST=${2:?}; shift 2 ;;
    --backing) BACKING=${2:?}; shift 2 ;;
    --check-mib) CHECK_MIB=${2:?}; shift 2 ;;
    --tolerance) TOL=${2:?}; shift 2 ;;
    --no-check) CHECK=0; shift ;;
    -o) EXTRA+=(-o "${2:?}"); shift 2 ;;
    --unmount) MODE=unmount; shift ;;
    --check-only) MODE=check; shift ;;
    --build-only) MODE=build; shift ;;
    -h|--help) usage ;;
    -*) echo "throttlefs: unknown option $1" >&2; usage ;;
    *) break ;;
  esac
done
num_re='^[0-9]+([.][0-9]+)?$'
for v in "$RATE" "$READ_RATE" "$TOL"; do
  [ -z "$v" ] || [[ "$v" =~ $num_re ]] || { echo "throttlefs: not a number: $v" >&2; usage; }
done
[ -z "$CHECK_MIB" ] || [[ "$CHECK_MIB" =~ ^[1-9][0-9]*$ ]] || usage

build() {
  if [ -x "$BIN" ] && [ "$BIN" -nt "$SRC" ]; then return 0; fi
  if ! command -v pkg-config >/dev/null || ! pkg-config --exists fuse3; then
    die "libfuse3 development files not found (Debian: apt-get install libfuse3-dev fuse3)"
  fi
  mkdir -p "$BUILD"
  # shellcheck disable=SC2046
  ${CC:-cc} -O2 -Wall -Wextra $(pkg-config --cflags fuse3) "$SRC" $(pkg-config --libs fuse3) \
    -lpthread -o "$BIN.tmp.$$" || die "building $BIN failed"
  mv -f "$BIN.tmp.$$" "$BIN"
}

if [ "$MODE" = build ]; then
  [ $# -eq 0 ] || usage
  build
  echo "$BIN"
  exit 0
fi
[ $# -eq 1 ] || usage
MNT=$(readlink -m "$1")
# state of a mount made here: RATE, BACKING, PID, LOG (for --check-only and --unmount)
STATE=$BUILD/mounts/$(printf '%s' "$MNT" | tr -c 'A-Za-z0-9._-' '_').env
LOG=${STATE%.env}.log

is_throttlefs() { findmnt -n -M "$1" -o FSTYPE 2>/dev/null | grep -q '^fuse.throttlefs$'; }

unmount() {
  local pid=""
  [ -f "$STATE" ] && pid=$(sed -n 's/^PID=//p' "$STATE")
  if findmnt -n -M "$MNT" >/dev/null; then
    fusermount3 -u "$MNT" 2>/dev/null || umount "$MNT" 2>/dev/null || umount -l "$MNT" ||
      { echo "throttlefs: cannot unmount $MNT" >&2; return 4; }
  fi
  if [ -n "$pid" ]; then
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q throttlefs; then
      kill "$pid" 2>/dev/null || true
    fi
  fi
  if [ -f "$LOG" ]; then grep 'unmounted after' "$LOG" | tail -1 || true; fi
  rm -f "$STATE"
  return 0
}

# dd_rate FILE MIB: write MIB MiB of zeros with conv=fsync, print "MB/s seconds"
dd_rate() {
  local out secs
  out=$(LC_ALL=C dd if=/dev/zero of="$1" bs=1M count="$2" conv=fsync 2>&1) ||
    { rm -f "$1"; echo "throttlefs: dd to $1 failed: $out" >&2; return 1; }
  rm -f "$1"
  secs=$(printf '%s\n' "$out" | sed -n 's/.* copied, \([0-9.e+-]*\) s,.*/\1/p' | tail -1)
  [ -n "$secs" ] || { echo "throttlefs: cannot parse dd output: $out" >&2; return 1; }
  awk -v b=$(($2 << 20)) -v s="$secs" 'BEGIN { printf "%.1f %.3f\n", b / s / 1e6, s }'
}

check() {
  local rate=$1 backing=$2 mib rb mb
  if [ -n "$CHECK_MIB" ]; then
    mib=$CHECK_MIB
  else
    mib=$(awk -v r="$rate" 'BEGIN { m = int(2 * r * 1e6 / 1048576 + 0.999); print (m < 64 ? 64 : m) }')
  fi
  if [ -n "$backing" ] && [ -d "$backing" ]; then
    rb=$(dd_rate "$backing/.ratecheck-backing" "$mib") || return 4
    say "backing $backing: ${rb%% *} MB/s unthrottled (dd ${mib} MiB, fsync)"
    if awk -v b="${rb%% *}" -v r="$rate" 'BEGIN { exit !(r > 0 && b < 1.5 * r) }'; then
      echo "throttlefs: WARNING: the backing store (${rb%% *} MB/s) is not well above the requested" \
        "$rate MB/s: the check below measures the disk as much as the throttle" >&2
    fi
  fi
  mb=$(dd_rate "$MNT/.ratecheck" "$mib") || return 4
  say "$MNT rate $rate MB/s requested, ${mb%% *} MB/s measured (dd ${mib} MiB in ${mb##* } s, fsync)"
  if [ "$(awk -v r="$rate" 'BEGIN { print (r > 0) }')" = 0 ]; then return 0; fi
  if awk -v m="${mb%% *}" -v r="$rate" -v t="$TOL" 'BEGIN { exit !(m < r * (1 - t / 100) || m > r * (1 + t / 100)) }'; then
    echo "throttlefs: FAILED: measured ${mb%% *} MB/s is more than $TOL% off the requested $rate MB/s" >&2
    return 3
  fi
  return 0
}

case "$MODE" in
  unmount)
    unmount
    exit $?
    ;;
  check)
    is_throttlefs "$MNT" || die "$MNT is not a throttlefs mount"
    backing=""
    if [ -f "$STATE" ]; then
      [ -n "$RATE" ] || RATE=$(sed -n 's/^RATE=//p' "$STATE")
      backing=$(sed -n 's/^BACKING=//p' "$STATE")
    fi
    [ -n "$RATE" ] || die "--check-only: give --rate-mbps (no record of how $MNT was mounted)"
    check "$RATE" "$backing"
    exit $?
    ;;
esac

[ -n "$RATE" ] || { echo "throttlefs: --rate-mbps is required" >&2; usage; }
[ -e /dev/fuse ] || die "/dev/fuse is missing (no FUSE in this kernel or container)"
command -v fusermount3 >/dev/null || die "fusermount3 not found (Debian: apt-get install fuse3)"
if findmnt -n -M "$MNT" >/dev/null; then
  die "$MNT is already a mount point$(is_throttlefs "$MNT" && echo ' (throttlefs)'); $0 --unmount $MNT first"
fi
build
mkdir -p "$BACKING" "$MNT" "$BUILD/mounts"
BACKING=$(cd "$BACKING" && pwd -P)
case "$MNT/" in "$BACKING"/*) die "the mount point $MNT must not lie inside the backing directory $BACKING" ;; esac
case "$BACKING/" in "$MNT"/*) die "the backing directory $BACKING must not lie inside the mount point $MNT" ;; esac
fstype=$(stat -f -c %T "$BACKING")
case "$fstype" in
  tmpfs|ramfs) echo "throttlefs: WARNING: the backing directory $BACKING is on $fstype (memory), not a disk" >&2 ;;
esac

args=(--rate-mbps "$RATE")
[ -z "$READ_RATE" ] || args+=(--read-rate-mbps "$READ_RATE")
[ -z "$CAPACITY" ] || args+=(--capacity-bytes "$CAPACITY")
[ -z "$BURST" ] || args+=(--burst-bytes "$BURST")
setsid nohup "$BIN" "${args[@]}" "$BACKING" "$MNT" -f ${EXTRA[@]+"${EXTRA[@]}"} </dev/null >"$LOG" 2>&1 &
PID=$!
printf 'RATE=%s\nBACKING=%s\nPID=%s\nLOG=%s\n' "$RATE" "$BACKING" "$PID" "$LOG" >"$STATE"
for _ in $(seq 100); do
  is_throttlefs "$MNT" && break
  kill -0 "$PID" 2>/dev/null || break
  sleep 0.1
done
if ! is_throttlefs "$MNT"; then
  cat "$LOG" >&2
  kill "$PID" 2>/dev/null || true
  rm -f "$STATE"
  die "mounting $MNT failed (log above)"
fi
say "mounted $BACKING on $MNT (pid $PID, log $LOG): $(head -1 "$LOG" | sed 's/^throttlefs: .* on [^ ]*, //')"
if [ "$CHECK" = 1 ]; then
  rc=0
  check "$RATE" "$BACKING" || rc=$?
  if [ "$rc" != 0 ]; then
    unmount >/dev/null || true
    echo "throttlefs: unmounted $MNT" >&2
    exit "$rc"
  fi
fi
