#!/usr/bin/env bash
# ctest (label pmpi): a plain program of this directory on 2 ranks, run as it is and under
# tools/zcoll-run, each writing its result with --out; the two results compared.
#
#   check_under_layer.sh fft2d|himeno LIB ZCOLL_RUN PROGRAM MPIEXEC [PREFLAGS...]
#
# fft2d:  N = 64, the layer at ABS 1e-3 with min_bytes 1k, so that the 16 KiB alltoall
#         blocks are compressed: the report must show Alltoall calls compressed, and the
#         transform must be within apps/fft2d.cc's bound, (sqrt(2) N + 1) x 1e-3 plus the
#         float64 rounding allowance 16 log2(N^2) 2^-53 ||F||.
# himeno: 34x18x18, 20 sweeps, the layer at REL 1e-4 with its defaults: the halos are
#         point-to-point and the 8-byte gosa MPI_Allreduce is below min_bytes, so the report
#         must show Allreduce calls none of them compressed, and the pressure and gosa must be
#         bit-identical to the plain run's.
set -uo pipefail
app=$1 lib=$2 zrun=$3 prog=$4 mpiexec=$5
shift 5
launch=("$mpiexec" -n 2 "$@")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

case $app in
  fft2d)
    n=64 eb=1e-3
    args=(--n "$n" --iters 2) dtype=f64 op=Alltoall
    layer=(--eb "$eb" --eb-mode abs --min-bytes 1k)
    compare=(--bound "$(python3 -c "print(($n * 2 ** 0.5 + 1) * $eb)")"
             --rounding-per-norm "$(python3 -c "import math; print(16 * math.log2($n * $n) * 2 ** -53)")") ;;
  himeno)
    args=(--size 34x18x18 --iters 20) dtype=f32 op=Allreduce
    layer=(--eb 1e-4 --eb-mode rel)
    compare=(--identical) ;;
  *) echo "usage: check_under_layer.sh fft2d|himeno LIB ZCOLL_RUN PROGRAM MPIEXEC [PREFLAGS...]" >&2; exit 2 ;;
esac

echo "--- plain"
"${launch[@]}" "$prog" "${args[@]}" --out "$tmp/plain.$dtype" | tee "$tmp/plain.txt"
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || fail "plain run: exit status $rc"
echo "--- under zcoll-run ${layer[*]}"
"$zrun" --lib "$lib" "${layer[@]}" --threads 1 --report="$tmp/report" -- \
  "${launch[@]}" "$prog" "${args[@]}" --out "$tmp/layer.$dtype" | tee "$tmp/layer.txt"
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || fail "run under the layer: exit status $rc"
cat "$tmp/report" 2>/dev/null || fail "no report"

# The report's row for op: calls and calls compressed.
read -r calls compressed < <(awk -v op="$op" '$1 == op { print $2, $3 }' "$tmp/report" 2>/dev/null)
if [ -z "${calls:-}" ] || [ "$calls" -eq 0 ]; then
  fail "the report has no $op calls: the layer did not see them"
elif [ "$app" = fft2d ] && [ "$compressed" -eq 0 ]; then
  fail "no $op call was compressed"
elif [ "$app" = himeno ] && [ "$compressed" -ne 0 ]; then
  fail "$compressed $op calls were compressed; none should be"
fi
if [ "$app" = himeno ] && ! diff <(grep -o 'gosa .*' "$tmp/plain.txt") <(grep -o 'gosa .*' "$tmp/layer.txt"); then
  fail "gosa differs from the plain run's"
fi
echo "--- layer against plain"
python3 "$here/compare_results.py" "$tmp/plain.$dtype" "$tmp/layer.$dtype" "$dtype" "${compare[@]}" ||
  fail "the results differ beyond what is allowed"
[ "$failures" -eq 0 ] && echo "PASSED" || echo "$failures failure(s)"
[ "$failures" -eq 0 ]
