#!/usr/bin/env bash
# How often does a run hang in MPI_Finalize over bench/netem (MPICH, 2 namespaces)? Root.
#
#   apps/plain/count_finalize_hangs.sh BUILD_DIR RUNS VARIANT... [-- PROGRAM ARGS...]
#
# VARIANT: plain (the program as it is), layer (under zcoll-run --eb 1e-4 --threads 1
# --report, as run_netem_apps.sh runs it), layer-noreport (the same without --report);
# layer=LIB and layer-noreport=LIB use the layer LIB instead of BUILD_DIR's (to compare
# two builds of it in one alternation).
# The variants alternate, RUNS times each, so that the host's load falls on all alike.
# The program defaults to himeno-plain --size S --iters 20 (short: the run is mostly start
# and finish). A run counts as hung when bench/netem/run.sh says it timed out after its
# output was out (ZCOLL_HANG_TIMEOUT seconds, default 20). Prints one line per run and a
# count per variant.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:?usage: $0 BUILD_DIR RUNS VARIANT... [-- PROGRAM ARGS...]}" && pwd)
runs=${2:?RUNS}
shift 2
variants=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do variants+=("$1"); shift; done
[ $# -gt 0 ] && shift
prog=("$@")
[ ${#prog[@]} -gt 0 ] || prog=("$build/apps/plain/himeno-plain" --size S --iters 20)
lib="$build/src/pmpi/libzcoll_mpi.so"
netem=(bash "$root/bench/netem/run.sh" --rate 1gbit --ranks 2 --mpi mpich --no-check
       --timeout "${ZCOLL_HANG_TIMEOUT:-20}" --)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
declare -A hung total
for v in "${variants[@]}"; do hung[$v]=0 total[$v]=0; done
for i in $(seq 1 "$runs"); do
  for v in "${variants[@]}"; do
    vlib=$lib
    [[ $v == *=* ]] && vlib=${v#*=}
    case ${v%%=*} in
      plain) cmd=("${prog[@]}") ;;
      layer) cmd=("$root/tools/zcoll-run" --lib "$vlib" --eb 1e-4 --threads 1 --report -- "${prog[@]}") ;;
      layer-noreport) cmd=("$root/tools/zcoll-run" --lib "$vlib" --eb 1e-4 --threads 1 -- "${prog[@]}") ;;
      *) echo "unknown variant $v" >&2; exit 2 ;;
    esac
    for _ in $(seq 60); do  # one netem run on the machine at a time
      [ -z "$(ip netns list 2>/dev/null | grep -E '^zc-')" ] && break
      sleep 5
    done
    t0=$(date +%s.%N)
    ZCOLL_DECIDE=compress "${netem[@]}" "${cmd[@]}" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    state=ok
    grep -q "timed out after" "$tmp/err" && state=HUNG
    [ "$rc" = 0 ] || state="$state(rc=$rc)"
    total[$v]=$((total[$v] + 1))
    [[ $state == HUNG* ]] && hung[$v]=$((hung[$v] + 1))
    echo "run $i $v: $state ${t}s"
    [[ $state == ok ]] || tail -3 "$tmp/err" | sed 's/^/    /'
  done
done
for v in "${variants[@]}"; do echo "$v: ${hung[$v]} of ${total[$v]} runs hung in MPI_Finalize"; done
