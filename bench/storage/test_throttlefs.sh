#!/usr/bin/env bash
# bench/storage/test_throttlefs.sh: correctness test of throttlefs (see README.md).
#
#   bash bench/storage/test_throttlefs.sh
#
# Builds throttlefs (through mount.sh --build-only) and mounts it three times on folders
# under a new directory in ${ZCOLL_STORAGE_TEST_DIR:-/var/tmp}:
#   1. at 2000 MB/s: 4 dd processes write disjoint, unaligned ranges of one file at once
#      (conv=notrunc); 4 threads pwrite interleaved blocks of another through one
#      descriptor (after ftruncate, then fsync); both must read back identical to the data
#      assembled locally, through the mount and in the backing directory; then truncate
#      (shrink, extend), rename (also over an existing file), unlink, mkdir/rmdir, statfs;
#   2. at 25 MB/s: 4 concurrent dd writers of 8 MiB each must share the one bucket (the
#      total takes about 32 MiB / 25 MB/s, and every writer about as long as the total);
#   3. with --capacity-bytes 4194304: an 8 MiB dd fails with "No space left on device",
#      truncate -s 8M too, df reports 4 MiB, and after removing the file the mount works.
# Exit status: 0 pass, 1 fail, 77 skip (FUSE cannot be mounted here; the reason is printed).
# Every mount is removed and every file deleted on exit, whatever the outcome.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FAILS=0
PIDS=()
MOUNTS=()
T=""

log() { echo "test_throttlefs: $*"; }
fail() { echo "test_throttlefs: FAIL: $*" >&2; FAILS=$((FAILS + 1)); }
skip() { echo "test_throttlefs: SKIP: $*"; cleanup; exit 77; }
ok() { echo "test_throttlefs: ok: $*"; }

cleanup() {
  local m p
  for m in ${MOUNTS[@]+"${MOUNTS[@]}"}; do
    if findmnt -n -M "$m" >/dev/null 2>&1; then
      fusermount3 -u "$m" 2>/dev/null || umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
    fi
  done
  for p in ${PIDS[@]+"${PIDS[@]}"}; do
    for _ in $(seq 30); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill "$p" 2>/dev/null
  done
  MOUNTS=()
  PIDS=()
  [ -n "$T" ] && rm -rf "$T"
  T=""
}
trap cleanup EXIT
trap 'exit 1' INT TERM

[ -e /dev/fuse ] || skip "no /dev/fuse (no FUSE in this kernel or container)"
command -v fusermount3 >/dev/null || skip "fusermount3 not found (Debian package fuse3)"
if ! command -v pkg-config >/dev/null || ! pkg-config --exists fuse3; then
  skip "libfuse3 development files not found (Debian package libfuse3-dev)"
fi
BIN=$(bash "$HERE/mount.sh" --build-only | tail -1) || { fail "building throttlefs"; exit 1; }
[ -x "$BIN" ] || { fail "no binary at $BIN"; exit 1; }

BASE=${ZCOLL_STORAGE_TEST_DIR:-/var/tmp}
T=$(mktemp -d "$BASE/zcoll-throttlefs-test.XXXXXX") || { fail "mktemp in $BASE"; exit 1; }
B=$T/backing M=$T/mnt
mkdir -p "$B" "$M" "$T/local"

# tfs_mount ARGS...: mount throttlefs ARGS on $M from $B (both emptied first)
tfs_mount() {
  rm -rf "${B:?}"/* "${B:?}"/.[!.]* 2>/dev/null
  "$BIN" "$@" "$B" "$M" -f >"$T/log" 2>&1 </dev/null &
  PIDS+=($!)
  MOUNTS+=("$M")
  for _ in $(seq 100); do
    findmnt -n -M "$M" -o FSTYPE 2>/dev/null | grep -q '^fuse.throttlefs$' && return 0
    kill -0 "${PIDS[-1]}" 2>/dev/null || break
    sleep 0.1
  done
  cat "$T/log" >&2
  return 1
}

tfs_umount() {
  fusermount3 -u "$M" 2>/dev/null || umount "$M" 2>/dev/null || umount -l "$M" ||
    { fail "unmounting $M"; return 1; }
  local p=${PIDS[-1]}
  for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$p" 2>/dev/null && { fail "throttlefs (pid $p) still running after unmount"; kill "$p"; }
  grep 'unmounted after' "$T/log" | sed 's/^/  /'
}

now() { date +%s.%N; }

# ---------------------------------------------------------------- 1: data integrity
if ! tfs_mount --rate-mbps 2000; then
  if grep -qiE 'permission denied|operation not permitted|fuse: device not found|fusermount3?: ' "$T/log"; then
    skip "cannot mount FUSE here: $(grep -iE 'permission|permitted|device not found|fusermount' "$T/log" | head -1)"
  fi
  fail "mounting throttlefs"
  exit 1
fi
log "mounted at 2000 MB/s: $M"

# 4 processes, disjoint unaligned ranges of one file, 100000-byte writes, at once
SIZE=$((32 * 1048576 + 12345))
head -c "$SIZE" /dev/urandom >"$T/local/ref"
bounds=(0 7000001 15999999 24123457 "$SIZE")
dpids=()
for i in 0 1 2 3; do
  off=${bounds[$i]} len=$((bounds[i + 1] - bounds[i]))
  dd if="$T/local/ref" of="$M/shared" bs=100000 iflag=skip_bytes,count_bytes oflag=seek_bytes \
    skip="$off" seek="$off" count="$len" conv=notrunc status=none &
  dpids+=($!)
done
for p in "${dpids[@]}"; do wait "$p" || fail "dd writer $p exited $?"; done
if cmp -s "$T/local/ref" "$M/shared" && cmp -s "$T/local/ref" "$B/shared"; then
  ok "4 concurrent dd writers of disjoint ranges: identical through the mount and in backing"
else
  fail "4 concurrent dd writers: content differs ($(cmp "$T/local/ref" "$M/shared" 2>&1 | head -1))"
fi

# 4 threads, one descriptor, interleaved blocks: ftruncate first, pwrite, fsync
if command -v python3 >/dev/null; then
  if python3 - "$M/threads" "$T/local/ref" <<'EOF'
import os, sys, threading
path, ref = sys.argv[1], sys.argv[2]
data = open(ref, "rb").read()
blk, nthr = 65536 + 17, 4
fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
os.ftruncate(fd, len(data))
def work(t):
    for k, off in enumerate(range(0, len(data), blk)):
        if k % nthr == t:
            chunk = data[off:off + blk]
            assert os.pwrite(fd, chunk, off) == len(chunk)
ts = [threading.Thread(target=work, args=(t,)) for t in range(nthr)]
for t in ts: t.start()
for t in ts: t.join()
os.fsync(fd)
back = os.pread(fd, len(data) + 10, 0)
os.close(fd)
sys.exit(0 if back == data else 1)
EOF
  then
    if cmp -s "$T/local/ref" "$M/threads" && cmp -s "$T/local/ref" "$B/threads"; then
      ok "4 threads pwriting interleaved blocks through one fd (ftruncate, fsync): identical"
    else
      fail "threaded pwrite: content differs after reopening"
    fi
  else
    fail "threaded pwrite: read back differs or python failed"
  fi
else
  log "no python3: threaded pwrite test left out"
fi

# truncate: shrink, then extend with zeros
truncate -s 1000 "$M/shared"
head -c 1000 "$T/local/ref" >"$T/local/ref1000"
if [ "$(stat -c %s "$M/shared")" = 1000 ] && [ "$(stat -c %s "$B/shared")" = 1000 ] &&
  cmp -s "$T/local/ref1000" "$M/shared"; then
  ok "truncate to 1000 bytes"
else
  fail "truncate to 1000 bytes: size $(stat -c %s "$M/shared")"
fi
truncate -s 5000 "$M/shared"
{ cat "$T/local/ref1000"; head -c 4000 /dev/zero; } >"$T/local/ref5000"
if cmp -s "$T/local/ref5000" "$M/shared" && cmp -s "$T/local/ref5000" "$B/shared"; then
  ok "truncate extends with zeros"
else
  fail "truncate extend to 5000 bytes"
fi

# rename, rename over an existing file, unlink, mkdir/rmdir, statfs
mv "$M/shared" "$M/renamed"
if [ ! -e "$M/shared" ] && [ ! -e "$B/shared" ] && cmp -s "$T/local/ref5000" "$M/renamed"; then
  ok "rename"
else
  fail "rename"
fi
mv -f "$M/renamed" "$M/threads"
if [ ! -e "$M/renamed" ] && cmp -s "$T/local/ref5000" "$M/threads" && cmp -s "$T/local/ref5000" "$B/threads"; then
  ok "rename over an existing file"
else
  fail "rename over an existing file"
fi
if mkdir "$M/dir" && echo hello >"$M/dir/f" && [ "$(cat "$M/dir/f")" = hello ] &&
  [ "$(cd "$M/dir" && echo *)" = f ] && rm "$M/dir/f" && rmdir "$M/dir" && [ ! -e "$B/dir" ]; then
  ok "mkdir, create, readdir, unlink, rmdir"
else
  fail "mkdir/create/readdir/unlink/rmdir"
fi
rm "$M/threads"
left=$(find "$M" -mindepth 1 -printf '%P ')
if [ ! -e "$M/threads" ] && [ ! -e "$B/threads" ] && [ -z "$left" ]; then
  ok "unlink"
else
  fail "unlink: left $left"
fi
if df -B1 "$M" >/dev/null; then ok "statfs"; else fail "statfs (df)"; fi
tfs_umount

# ---------------------------------------------------------------- 2: one shared bucket
RATE=25
if tfs_mount --rate-mbps "$RATE"; then
  t0=$(now)
  dpids=()
  for i in 0 1 2 3; do
    ( s=$(now); dd if=/dev/zero of="$M/w$i" bs=1M count=8 conv=fsync status=none || exit 1
      e=$(now); echo "$s $e" >"$T/local/time$i" ) &
    dpids+=($!)
  done
  for p in "${dpids[@]}"; do wait "$p" || fail "throttled dd writer exited $?"; done
  t1=$(now)
  # expected: 4 x 8 MiB at RATE, less the burst (1 MiB)
  verdict=$(cat "$T/local/time"{0,1,2,3} | awk -v t0="$t0" -v t1="$t1" -v r="$RATE" '
    { d = $2 - $1; if (min == "" || d < min) min = d }
    END {
      burst = 1048576
      want = (4 * 8 * 1048576 - burst) / (r * 1e6); tot = t1 - t0
      ok = tot >= 0.9 * want && tot <= 1.6 * want && min >= 0.75 * tot
      printf "%d total %.2f s for 4 x 8 MiB at %g MB/s (expected %.2f s), shortest writer %.2f s\n",
        ok, tot, r, want, min }')
  if [ "${verdict%% *}" = 1 ]; then
    ok "shared bucket: ${verdict#* }"
  else
    fail "shared bucket: ${verdict#* } (want total within 0.9x-1.6x, every writer >= 0.75x total)"
  fi
  rm -f "$M"/w*
  tfs_umount
else
  fail "mounting at $RATE MB/s"
fi

# ---------------------------------------------------------------- 3: capacity
CAP=4194304
if tfs_mount --rate-mbps 2000 --capacity-bytes "$CAP"; then
  out=$(LC_ALL=C dd if=/dev/zero of="$M/big" bs=1M count=8 2>&1)
  rc=$?
  size=$(stat -c %s "$M/big" 2>/dev/null || echo missing)
  if [ "$rc" != 0 ] && grep -q 'No space left on device' <<<"$out" && [ "$size" != missing ] &&
    [ "$size" -le "$CAP" ]; then
    ok "8 MiB write into a 4 MiB file system: ENOSPC after $size bytes"
  else
    fail "8 MiB write with capacity $CAP: dd rc=$rc, size $size, output: $out"
  fi
  total=$(df -B1 --output=size "$M" | tail -1 | tr -d ' ')
  avail=$(df -B1 --output=avail "$M" | tail -1 | tr -d ' ')
  if [ "$total" = "$CAP" ] && [ "$avail" -le $((CAP - size)) ]; then
    ok "statfs: size $total, available $avail"
  else
    fail "statfs with capacity: size $total (want $CAP), available $avail"
  fi
  if out=$(LC_ALL=C truncate -s 8M "$M/sparse" 2>&1); then
    fail "truncate -s 8M succeeded"
  elif grep -q 'No space left on device' <<<"$out"; then
    ok "truncate beyond capacity: ENOSPC"
  else
    fail "truncate -s 8M: $out"
  fi
  rm -f "$M/big" "$M/sparse"
  head -c 3000000 /dev/urandom >"$T/local/small"
  if cp "$T/local/small" "$M/small" && cmp -s "$T/local/small" "$M/small" &&
    avail=$(df -B1 --output=avail "$M" | tail -1 | tr -d ' ') && [ "$avail" -le $((CAP - 3000000)) ] &&
    [ "$avail" -ge $((CAP - 3000000 - 4096)) ]; then
    ok "after rm the mount works again: 3 MB written and read back, $avail bytes available"
  else
    fail "writing 3 MB after freeing the space"
  fi
  rm -f "$M/small"
  tfs_umount
else
  fail "mounting with --capacity-bytes $CAP"
fi

cleanup
if [ "$FAILS" = 0 ]; then
  log "PASS"
  exit 0
fi
log "$FAILS check(s) failed"
exit 1
