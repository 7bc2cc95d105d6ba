#!/usr/bin/env bash
# The drop-in layer's tests (ctest label pmpi): runs a plain MPI program without the layer
# and under tools/zcoll-run in several configurations, and compares.
#
#   run_check.sh c|comms|fortran|fortran_info|other|static LIB ZCOLL_RUN PROGRAM NP MPIEXEC [PREFLAGS...]
#
# c:       pmpi_check (every intercepted call and argument variant). Its "exact" digests
#          (integer, derived, user-op, MAXLOC, small, opted-out and erroneous calls) must
#          match the plain run in every configuration, and the "float" digests too wherever
#          nothing is compressed: layer preloaded and unconfigured; everything routed
#          through zcoll with min_bytes above every message; a malformed setting (one
#          message, layer off). Compressed (ABS 1e-3, every communicator), every float
#          result must be within its allowance (the program's exit status) and the report
#          must show every intercepted collective compressed. Then twice with AUTO deciding
#          and --tuning-file: the file written at MPI_Finalize, no communicator of the first
#          run and some of the second started warm (the report says), both within the bound;
#          the report gives the first communicator's nodes and the link figures given.
# fortran: fortran_allreduce, plain and compressed: within the bound, and the report shows
#          MPI_ALLREDUCE, MPI_REDUCE, MPI_BCAST, MPI_REDUCE_SCATTER_BLOCK, MPI_ALLGATHER and
#          MPI_ALLTOALL compressed.
# fortran_info: fortran_set_info (`use mpi`, MPI_COMM_SET_INFO with zcoll_enable, zcoll_eb,
#          zcoll_eb_mode on a duplicate of MPI_COMM_WORLD): plain, its MPI_ALLREDUCE on the
#          duplicate equals the one on MPI_COMM_WORLD; under zcoll-run --comms hinted (no
#          --eb: the hints alone opt it in), it differs on every rank, within the bound, and
#          the report shows Allreduce compressed.
# static:  pmpi_check linked with libzcoll_mpi.a ahead of MPI (no preload), configured
#          through the environment: compressed within the bound, all ten functions in the
#          report, the exact parts equal to the preloaded runs'.
# comms:   pmpi_comms (one large MPI_Allreduce on a communicator from each constructor):
#          unconfigured and routed (min_bytes 1g), every result equals the plain run's;
#          compressed with --comms all, every communicator but the one opted out by its
#          MPI_Comm_dup_with_info hint is compressed (some element differs) within the bound;
#          with --comms world, only MPI_COMM_WORLD and its duplicates (idup, dup_with_info)
#          are compressed and every other result equals the plain run's.
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
    # AUTO's warm start through the layer: the cost model decides (not ZCOLL_DECIDE=compress),
    # MPI_Finalize's zcoll_comm_free writes the tuning file, and a second run starts from it;
    # both within the bound, the exact parts as plain MPI's. The link figures are given: a
    # ping-pong between oversubscribed ranks can measure 2x apart from one run to the next,
    # and a record of another network is not taken.
    for pass in 1 2; do
      ZCOLL_DECIDE=model ZCOLL_LINK_GBPS=1 ZCOLL_NODE_LINK_GBPS=20 run "tuned$pass" layer --eb 1e-3 --eb-mode abs --comms all --min-bytes 1k \
        --tuning-file "$tmp/tuning.bin" --report="$tmp/tuned$pass.report"
      same "tuned$pass" "exact|error"
      [ "$(head -c 8 "$tmp/tuning.bin" 2>/dev/null)" = zcollTUN ] || fail "tuned$pass: no tuning file written"
      grep "^warm start:" "$tmp/tuned$pass.report" || fail "tuned$pass: the report has no warm-start line"
      # The first communicator's links, as given (one host: one node).
      grep -E "^first zcoll communicator: $np ranks on 1 node\(s\).* inside a node 20 Gbit/s.* between nodes 1 Gbit/s" \
        "$tmp/tuned$pass.report" || fail "tuned$pass: the report does not give the first communicator's nodes and links"
    done
    grep -q "^warm start: 0 of" "$tmp/tuned1.report" || fail "tuned1: a communicator started warm without a file"
    grep -qE "^warm start: [1-9][0-9]* of" "$tmp/tuned2.report" || fail "tuned2: no communicator started warm"
    ;;
  fortran)
    args=()
    run plain plain
    args=(1e-3)
    run compressed layer --eb 1e-3 --eb-mode abs --report="$tmp/compressed.report"
    compressed_rows "$tmp/compressed.report" Allreduce Reduce Bcast Reduce_scatter_block Allgather Alltoall
    ;;
  fortran_info)
    args=(2e-3)
    run plain plain
    awk '$1 == "set_info" && $5 != 0 { bad = 1 } END { exit bad || NR == 0 }' "$tmp/plain.out" ||
      fail "plain: the hinted communicator's result differs from MPI_COMM_WORLD's"
    run hinted layer --comms hinted --report="$tmp/hinted.report"
    [ "$(awk '$1 == "set_info" && $5 > 0' "$tmp/hinted.out" | wc -l)" -eq "$np" ] ||
      fail "hinted: the hinted communicator was not compressed on every rank"
    compressed_rows "$tmp/hinted.report" Allreduce
    ;;
  comms)
    # comm_state NAME RUN: "rank digest lossy" of communicator NAME in RUN, one line per rank.
    comm_state() { awk -v c="$1" '$1 == "comm" && $2 == c { print $4, $6, $8 }' "$tmp/$2.out"; }
    all_comms="world idup dup_with_info dup_with_info_off create create_part create_group cart cart_sub graph
               dist_graph_adjacent dist_graph intercomm_merge split_idup"
    # expect RUN COMPRESSED...: the named communicators compressed on every rank that has
    # them, every other one exact (its digests those of the plain run).
    expect() {
      local run=$1 c
      shift
      for c in $all_comms; do
        [ -n "$(comm_state "$c" plain)" ] || fail "plain: no result for communicator $c"
        if [[ " $* " == *" $c "* ]]; then
          # compressed: some element differs from the exact sum, and the result from plain MPI's
          paste -d' ' <(comm_state "$c" "$run") <(comm_state "$c" plain) |
            awk '$3 == 0 || $2 == $5 { bad = 1 } END { exit bad || NR == 0 }' ||
            fail "$run: communicator $c not compressed on every rank"
        elif [ "$(comm_state "$c" "$run" | cut -d' ' -f1,2)" != "$(comm_state "$c" plain | cut -d' ' -f1,2)" ]; then
          fail "$run: communicator $c differs from the plain run (compressed?)"
        fi
      done
    }
    args=()
    run plain plain
    run unconfigured layer
    expect unconfigured
    run routed layer --eb 1e-3 --eb-mode abs --comms all --min-bytes 1g
    expect routed
    args=(1e-3)
    run compressed_all layer --eb 1e-3 --eb-mode abs --comms all --min-bytes 1k
    expect compressed_all world idup dup_with_info create create_part create_group cart cart_sub graph \
      dist_graph_adjacent dist_graph intercomm_merge split_idup
    run compressed_world layer --eb 1e-3 --eb-mode abs --comms world --min-bytes 1k
    expect compressed_world world idup dup_with_info
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
