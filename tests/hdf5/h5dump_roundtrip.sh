#!/usr/bin/env bash
# h5dump reads datasets written with the zcoll filter, loading libH5Zzcoll.so through
# HDF5_PLUGIN_PATH, and prints values within the bound of the uncompressed copy.
#
#   h5dump_roundtrip.sh H5DUMP SAMPLE_WRITER DATA_DIR WORK_DIR PLUGIN_DIR
#
# The sample file (tests/hdf5/h5_sample_writer.c) holds each filtered dataset, its
# uncompressed copy <name>_ref, and the bound as the attribute eb_abs. Also checked: without
# the plugin h5dump prints no values, and the comparison itself catches a bound 1000x tighter.
set -euo pipefail
[ $# -eq 5 ] || { echo "usage: $0 H5DUMP SAMPLE_WRITER DATA_DIR WORK_DIR PLUGIN_DIR" >&2; exit 2; }
h5dump="$1" writer="$2" data="$3" work="$4" plugin="$5"
f="$work/h5dump_sample.h5"
"$writer" "$data" "$f"

# values DATASET FORMAT [PLUGIN_PATH]: the dataset's values as h5dump prints them, one per line.
values() {
  local out="$work/h5dump_${1//\//_}.txt"
  HDF5_PLUGIN_PATH="${3:-$plugin}" "$h5dump" -d "$1" -y -w 0 -m "$2" "$f" > "$out" 2>&1 || return 1
  awk '/^ *DATA *\{/ {on = 1; next} on && /^ *\}/ {exit} on {gsub(/[ ,]/, ""); if ($0 != "") print}' "$out"
}
# attr DATASET: the eb_abs attribute.
attr() {
  HDF5_PLUGIN_PATH="$plugin" "$h5dump" -a "$1/eb_abs" -m '%.17g' "$f" |
    awk '/^ *DATA *\{/ {on = 1; next} on {gsub(/[ ,]/, ""); if ($0 ~ /^\(0\):/) sub(/^\(0\):/, ""); if ($0 != "") {print; exit}}'
}
# compare GOT REF EB N: every value within EB, N of them. Prints a summary; fails otherwise.
compare() {
  paste "$1" "$2" | awk -v eb="$3" -v n="$4" '
    { e = $1 - $2; if (e < 0) e = -e; if (e > worst) worst = e; if (!(e <= eb)) bad++; count++ }
    END { printf "  %d values (want %d), max |err| %.6g, max err/eb %.4f, %d beyond eb\n", count, n, worst, worst / eb, bad
          exit !(count == n && bad == 0) }'
}

fail=0
for spec in "/f32_2d %.9g 4200" "/f64_3d %.17g 6000"; do
  read -r ds fmt n <<< "$spec"
  eb="$(attr "$ds")"
  echo "$ds: eb_abs $eb"
  values "$ds" "$fmt" > "$work/got.txt" || { echo "h5dump -d $ds failed"; cat "$work/h5dump_${ds//\//_}.txt"; fail=1; continue; }
  values "${ds}_ref" "$fmt" > "$work/ref.txt"
  compare "$work/got.txt" "$work/ref.txt" "$eb" "$n" || { echo "FAIL: $ds not within the bound"; fail=1; }
  # The comparison can fail: with a bound 1000x tighter it must.
  if compare "$work/got.txt" "$work/ref.txt" "$(awk -v e="$eb" 'BEGIN{print e / 1000}')" "$n" > /dev/null; then
    echo "FAIL: $ds: the comparison accepted a bound 1000x tighter"; fail=1
  fi
done

# Without the plugin, h5dump cannot decode the data.
empty="$work/no_plugin"
mkdir -p "$empty"
if got="$(values /f32_2d %.9g "$empty")" && [ -n "$got" ]; then
  echo "FAIL: h5dump printed values without the plugin"; fail=1
else
  echo "without the plugin: h5dump prints no values ($(grep -m1 -o 'unable to print data' "$work/h5dump__f32_2d.txt" || echo 'failed'))"
fi
[ "$fail" -eq 0 ] && echo "h5dump round trip: OK"
exit "$fail"
