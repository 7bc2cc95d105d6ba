#!/usr/bin/env bash
# The drop-in layer's tests (ctest label pmpi): runs a plain MPI program without the layer
# and under tools/zcoll-run in several configurations, and compares.
#
#   run_check.sh c|fortran|other|static LIB ZCOLL_RUN PROGRAM NP MPIEXEC [PREFLAGS...]
#
# c:       pmpi_check (every intercepted call and argument variant). Its "exact" digests
#          (integer, derived, user-op, MAXLOC, small, opted-out and erroneous calls) must
#          match the plain run in every configuration, and the "float" digests too wherever
#          nothing is compressed: layer preloaded and unconfigured; everything routed
#          through zcoll with min_bytes above every message; a malformed setting (one
#          message, layer off). Compressed (ABS 1e-3, every communicator), every float
#          result must be within its allowance (the program's exit status) and the report
#          must show every intercepted collective compressed.
# fortran: fortran_allreduce, plain and compressed: within the bound, and the report shows
#          MPI_ALLREDUCE, MPI_REDUCE, MPI_BCAST, MPI_REDUCE_SCATTER_BLOCK, MPI_ALLGATHER and
#          MPI_ALLTOALL compressed.
# static:  pmpi_check linked with libzcoll_mpi.a ahead of MPI (no preload), configured
#          through the environment: compressed within the bound, all ten functions in the
#          report, the exact parts equal to the preloaded runs'.
# other:   PROGRAM is the other MPI's mpicc and MPIEXEC its launcher: a program built with it,
#          with the layer preloaded (LD_PRELOAD, past zcoll-run's check), must say once that
#          the layer is built for another MPI and then run correctly without it.
set -uo pipefail
mode=$1 lib=$2 zrun=$3 prog=$4 np=$5 mpiexec=$6
shift 6
launch=("$mpiexec" -n "$np" "$@")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# run NAME plain|layer [zcoll-run options]: the program's sorted stdout in $tmp/NAME.out,
# its stderr in $tmp/NAME.err.
run() {
  local name=$1 how=$2 rc
  shift 2
  if [ "$how" = layer ]; then
    "$zrun" --lib "$lib" "$@" -- "${launch[@]}" "$prog" "${args[@]}" >"$tmp/$name.raw" 2>"$tmp/$name.err"
  else
    "${launch[@]}" "$prog" "${args[@]}" >"$tmp/$name.raw" 2>"$tmp/$name.err"
  fi
  rc=$?
  sort "$tmp/$name.raw" >"$tmp/$name.out"
  echo "--- $name (exit $rc)"
  cat "$tmp/$name.out" "$tmp/$name.err"
  [ "$rc" -eq 0 ] || fail "$name: exit status $rc"
}

same() {  # same NAME PATTERN: NAME's lines matching PATTERN equal the plain run's
  if ! diff <(grep -E "$2" "$tmp/plain.out") <(grep -E "$2" "$tmp/$1.out") >/dev/null; then
    fail "$1: lines /$2/ differ from the plain run"
    diff <(grep -E "$2" "$tmp/plain.out") <(grep -E "$2" "$tmp/$1.out")
  fi
}

# compressed_rows REPORT OP...: each OP's row has compressed calls > 0.
compressed_rows() {
  local report=$1 op
  shift
  [ -s "$report" ] || { fail "no report in $report"; return; }
  cat "$report"
  for op in "$@"; do
    awk -v op="$op" '$1 == op && $3 > 0 { found = 1 } END { exit !found }' "$report" || fail "report: $op not compressed"
  done
}

messages() { grep -c "^zcoll-mpi:" "$tmp/$1.err"; }
case "$mode" in
  c)
    args=()
    run plain plain
    run unconfigured layer
    same unconfigured "exact|float|error"
    [ "$(messages unconfigured)" -eq 0 ] || fail "unconfigured: the layer printed something"
    run routed layer --eb 1e-3 --eb-mode abs --comms all --min-bytes 1g --report="$tmp/routed.report"
    same routed "exact|float|error"
    [ -s "$tmp/routed.report" ] && awk 'NR > 2 && $3 != "" && $3 ~ /^[0-9]+$/ && $3 > 0 { bad = 1 } END { exit bad }' \
      "$tmp/routed.report" || fail "routed: something was compressed or no report"
    run malformed layer --eb 1e-3 --eb-mode relative
    same malformed "exact|float|error"
    [ "$(messages malformed)" -eq 1 ] || fail "malformed: expected one message from the layer"
    grep -q "ZCOLL_EB_MODE=relative" "$tmp/malformed.err" || fail "malformed: the message does not name the setting"
    args=(1e-3)
    run compressed layer --eb 1e-3 --eb-mode abs --comms all --min-bytes 1k --report="$tmp/compressed.report"
    same compressed "exact|error"
    grep -q "float" "$tmp/compressed.out" && ! diff -q <(grep float "$tmp/plain.out") <(grep float "$tmp/compressed.out") \
      >/dev/null || fail "compressed: the float results are those of plain MPI (nothing compressed?)"
    compressed_rows "$tmp/compressed.report" Allreduce Reduce Reduce_scatter Reduce_scatter_block Allgather \
      Allgatherv Bcast Scatter Gather Alltoall
    ;;
  fortran)
    args=()
    run plain plain
    args=(1e-3)
    run compressed layer --eb 1e-3 --eb-mode abs --report="$tmp/compressed.report"
    compressed_rows "$tmp/compressed.report" Allreduce Reduce Bcast Reduce_scatter_block Allgather Alltoall
    ;;
  other)
    printf '#include <mpi.h>\n#include <stdio.h>\nint main(int c, char **v) { double x = 1, y = 0; int n;\n'\
'  MPI_Init(&c, &v); MPI_Comm_size(MPI_COMM_WORLD, &n);\n'\
'  MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);\n'\
'  if (y == n) printf("sum ok\\n"); MPI_Finalize(); return y != n; }\n' >"$tmp/other.c"
    "$prog" -o "$tmp/other" "$tmp/other.c" || { echo "cannot build with $prog"; exit 1; }
    prog=$tmp/other args=()
    LD_PRELOAD=$lib ZCOLL_EB=1e-3 run preloaded plain
    [ "$(grep -o "sum ok" "$tmp/preloaded.out" | wc -l)" -eq "$np" ] || fail "preloaded: the program did not run correctly"
    [ "$(messages preloaded)" -eq 1 ] || fail "preloaded: expected one message from the layer"
    grep -q "is built for" "$tmp/preloaded.err" || fail "preloaded: the message does not say which MPI"
    ;;
  static)
    args=()
    run plain plain
    args=(1e-3)
    ZCOLL_EB=1e-3 ZCOLL_EB_MODE=abs ZCOLL_COMMS=all ZCOLL_MIN_BYTES=1k ZCOLL_REPORT="$tmp/static.report" \
      run static plain
    same static "exact|error"
    compressed_rows "$tmp/static.report" Allreduce Reduce Reduce_scatter Reduce_scatter_block Allgather \
      Allgatherv Bcast Scatter Gather Alltoall
    ;;
  *) echo "run_check.sh: unknown mode $mode" >&2; exit 2 ;;
esac
echo "run_check.sh: $failures failure(s)"
exit $(( failures > 0 ))
