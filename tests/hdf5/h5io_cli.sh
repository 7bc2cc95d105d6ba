#!/usr/bin/env bash
# h5io_cli.sh ZCOLL_H5 H5DUMP DATA_DIR FILE OUT_DIR: the zcoll-h5 tool on a file that
# test_h5io wrote with 3 ranks (fields cesm_TS = data/cesm_TS_10x192x288.f32 whole, and
# turb_1d = data/turb_wmag_91x91x91.f32). Also leaves the file and a JSON sidecar in
# OUT_DIR/c_files for the Python reader's cross-check (ZCOLL_H5IO_FILES).
set -euo pipefail
tool=$1 h5dump=$2 data=$3 file=$4 out=$5
mkdir -p "$out"
fail() { echo "FAIL: $*"; exit 1; }

"$tool" ls "$file" | tee "$out/ls.txt"
grep -q '^cesm_TS .*float32 .*10x192x288' "$out/ls.txt" || fail "ls does not list cesm_TS"
grep -q '^echam5_T .*float64' "$out/ls.txt" || fail "ls does not list echam5_T"

"$tool" verify "$file" cesm_TS "$data/cesm_TS_10x192x288.f32" | tee "$out/verify.txt"
grep -q ': ok$' "$out/verify.txt" || fail "verify cesm_TS"
"$tool" verify "$file" turb_1d "$data/turb_wmag_91x91x91.f32" || fail "verify turb_1d"
# The check can fail: one reference value moved by 1 K.
python3 - "$data/cesm_TS_10x192x288.f32" "$out/cesm_moved.f32" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
v = struct.unpack_from("<f", b, 4000)[0]
struct.pack_into("<f", b, 4000, v + 1.0)
open(sys.argv[2], "wb").write(b)
PY
if "$tool" verify "$file" cesm_TS "$out/cesm_moved.f32" > "$out/verify_bad.txt"; then fail "verify accepted a wrong reference"; fi
grep -q 'outside the bound 1,' "$out/verify_bad.txt" || fail "verify did not count the moved value: $(cat "$out/verify_bad.txt")"

"$tool" cat "$file" cesm_TS "$out/cesm.raw"
[ "$(stat -c %s "$out/cesm.raw")" = 2211840 ] || fail "cat wrote $(stat -c %s "$out/cesm.raw") bytes"

"$tool" export "$file" cesm_TS "$out/plain.h5" TS
"$h5dump" -H "$out/plain.h5" > "$out/plain_header.txt"
grep -q 'DATASPACE  SIMPLE { ( 10, 192, 288 )' "$out/plain_header.txt" || fail "export: h5dump does not see the dataset"
"$h5dump" -d /TS -s 0,0,0 -c 1,1,4 "$out/plain.h5" > "$out/h5dump.txt" || fail "h5dump cannot read the export"
# The layout itself is plain HDF5 that h5dump shows.
"$h5dump" -H "$file" > "$out/layout_header.txt"
grep -q 'zcoll_h5_format_version' "$out/layout_header.txt" || fail "h5dump -H does not show the layout"
grep -q 'DATASET "streams"' "$out/layout_header.txt" || fail "h5dump -H does not show the streams"

# A damaged file: a clear message, exit status 1, no crash.
head -c 4096 "$file" > "$out/cut.zh5"
set +e
"$tool" ls "$out/cut.zh5" 2> "$out/cut.err"
rc=$?
set -e
[ $rc = 1 ] || fail "ls on a truncated file exited $rc"
grep -q 'corrupt\|truncated' "$out/cut.err" || fail "no clear message: $(cat "$out/cut.err")"

mkdir -p "$out/c_files"
cp "$file" "$out/c_files/c_written.zh5"
cat > "$out/c_files/c_written.json" <<JSON
{"fields": [{"name": "cesm_TS", "raw": "$data/cesm_TS_10x192x288.f32", "dtype": "float32", "shape": [10, 192, 288]},
            {"name": "turb_1d", "raw": "$data/turb_wmag_91x91x91.f32", "dtype": "float32", "shape": [753571]}]}
JSON
echo "h5io_cli: ok"
