#!/usr/bin/env bash
# h5io_diskfull.sh MOUNT_DIR COMMAND...: mounts a 1 MiB tmpfs at MOUNT_DIR, runs COMMAND
# with @DIR@ replaced by it (a zcoll_h5 write that cannot fit), and unmounts. Exit 77
# (ctest: skipped) with the reason when this machine does not let us mount.
set -u
dir=$1
shift
mkdir -p "$dir"
if ! mount -t tmpfs -o size=1m zcoll-diskfull "$dir" 2>/tmp/zcoll-diskfull-mount.$$; then
  echo "SKIP: cannot mount a tmpfs at $dir ($(cat /tmp/zcoll-diskfull-mount.$$)); the disk-full test needs root or CAP_SYS_ADMIN"
  rm -f /tmp/zcoll-diskfull-mount.$$
  exit 77
fi
rm -f /tmp/zcoll-diskfull-mount.$$
trap 'umount "$dir" 2>/dev/null || umount -l "$dir"' EXIT
args=()
for a in "$@"; do args+=("${a//@DIR@/$dir}"); done
"${args[@]}"
