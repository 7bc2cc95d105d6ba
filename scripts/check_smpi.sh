#!/usr/bin/env bash
# SimGrid SMPI check (CI): zcoll and zcoll-bench build with smpicc/smpicxx, and one tiny
# SIMULATED collective runs and is right. Steps:
#   1. libsimgrid-dev (smpicc, smpicxx, smpirun) installed if missing (as root; else the
#      apt-get line is printed and the check fails)
#   2. bench/smpi/build.sh BUILD_DIR       (default build-smpi-check; env ZCOLL_SMPI_BUILD)
#   3. smpirun on 4 simulated hosts (bench/smpi/make_platform.py: 100 Gbit/s, ~1 us):
#      zcoll-bench coll --op allreduce --algo mpi,zcoll --bytes 1M --iters 1 on data/turb_wmag
#      must exit 0 (zcoll-bench checks every element against the error bound) and print two
#      JSON lines: plain MPI, and zcoll having compressed, both reporting SMPI as the MPI.
# Exit status 0 when all of that holds; otherwise 1 with the reason on stderr.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ZCOLL_ROOT"

fail() { zlog "check_smpi: FAIL: $*"; exit 1; }

zapt_ensure libsimgrid-dev build-essential cmake python3 || fail "packages missing (see above)"
dir="${ZCOLL_SMPI_BUILD:-$ZCOLL_ROOT/build-smpi-check}"
bash bench/smpi/build.sh "$dir" || fail "configure/build with smpicc failed ($dir)"
bench="$dir/bench/zcoll-bench"
[ -f "$bench" ] || fail "$bench was not built"

work="$dir/smpi-check"
mkdir -p "$work"
python3 bench/smpi/make_platform.py --nodes 4 --out "$work/cluster_4.xml" --hostfile "$work/hosts_4.txt" ||
  fail "make_platform.py failed"
zlog "simulate: 4 hosts, allreduce 1 MiB per rank, mpi and zcoll"
set +e
OMP_NUM_THREADS=1 timeout 300 smpirun -np 4 -platform "$work/cluster_4.xml" -hostfile "$work/hosts_4.txt" \
  --cfg=smpi/host-speed:1Gf --cfg=smpi/coll-selector:ompi \
  --log=smpi_colls.thres:warning --log=smpi_coll.thres:warning --log=xbt_cfg.thres:warning \
  "$bench" coll --op allreduce --algo mpi,zcoll --bytes 1M --iters 1 --warmup 0 --threads 1 \
  --input data/turb_wmag_91x91x91.f32 --json >"$work/out.jsonl" 2>"$work/smpi.log"
rc=$?
set -e
cat "$work/out.jsonl"
if [ "$rc" -ne 0 ]; then
  tail -n 30 "$work/smpi.log" >&2
  fail "smpirun exited with $rc (124: timed out after 300 s; log $work/smpi.log)"
fi
[ "$(grep -c '^{' "$work/out.jsonl")" -eq 2 ] || fail "expected 2 JSON result lines, got: $(cat "$work/out.jsonl")"
grep -q '"algo":"mpi".*"mpi_library":"SMPI' "$work/out.jsonl" || fail "no plain-MPI result from SMPI"
grep -q '"algo":"zcoll","algo_ran":"[a-z-]*","compressed":1,.*"mpi_library":"SMPI' "$work/out.jsonl" ||
  fail "zcoll did not compress under SMPI"
zlog "check_smpi: PASS (simulated allreduce on 4 hosts; zcoll within its bound)"
