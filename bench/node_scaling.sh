#!/usr/bin/env bash
# One many-core node, for real (issue 17, "use every core"): what a node of C cores gives zcoll,
# measured on the node itself rather than modelled (bench/smpi/README.md, "Multi-thread codec,
# modelled", assumes E effective threads and a memory-bandwidth cap; this checks both).
#
#   bash bench/node_scaling.sh BUILD_DIR OUT_DIR [RANKS] > OUT_DIR/log
#
# 1. OUT_DIR/membw.jsonl: copy bandwidth at 1 .. C threads (bench/smpi/membw.c, 256 MiB).
# 2. OUT_DIR/codec_scaling.jsonl: zcoll-bench codec at the same thread counts, fields of >= 16
#    MiB (bench/codec_scaling.sh, $ROUNDS rounds, best of $REPEAT each).
# 3. OUT_DIR/results.jsonl, auto_vs_best.md: the collectives on shared memory, plain MPI, AUTO
#    and the fixed zcoll paths timed call by call in turn (bench/netem/sweep.py --rates shm
#    --interleave --algos all), for each rank count of RANKS (a comma list, default C). Where a
#    rank count leaves cores over, sweep.py also runs each path with C / ranks codec threads.
#    There is no network here: plain MPI should win, and AUTO must pick it ("never lose time").
#
# Environment: MPI (mpich | openmpi, default mpich: sweep.py launches mpiexec.$MPI), INPUT (a
# raw field, default data/cesm_TS_10x192x288.f32), SIZES (default 1M,16M), OPS (default
# allreduce,bcast,allgather,reduce_scatter,alltoall), ITERS (default 20), ROUNDS (default 2),
# REPEAT (default 5), PYTHON (one with matplotlib, default python3).
set -uo pipefail
build="$(cd "${1:?usage: node_scaling.sh BUILD_DIR OUT_DIR [RANKS]}" && pwd)"
out="${2:?usage: node_scaling.sh BUILD_DIR OUT_DIR [RANKS]}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cores="$(nproc)"
ranks="${3:-$cores}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
threads=""
for ((t = 1; t < cores; t *= 2)); do threads+="$t "; done
threads+="$cores"
status=0

echo "node_scaling: $cores cores, threads: $threads; $(grep -m1 'model name' /proc/cpuinfo)"
if cc -O2 -fopenmp "$here/smpi/membw.c" -o "$out/membw.bin"; then
  "$out/membw.bin" 256 "$cores" > "$out/membw.jsonl" || status=1
  rm -f "$out/membw.bin"
else
  echo "node_scaling: membw.c did not build" >&2
  status=1
fi

THREADS="$threads" bash "$here/codec_scaling.sh" "$build" "${ROUNDS:-2}" "${REPEAT:-5}" \
  > "$out/codec_scaling.jsonl" || status=1

"${PYTHON:-python3}" "$here/netem/sweep.py" --build "$build" --out "$out" --rates shm --ranks "$ranks" \
  --mpi "${MPI:-mpich}" --input "${INPUT:-$here/../data/cesm_TS_10x192x288.f32}" \
  --ops "${OPS:-allreduce,bcast,allgather,reduce_scatter,alltoall}" --sizes "${SIZES:-1M,16M}" \
  --algos all --interleave --iters "${ITERS:-20}" || status=1
"${PYTHON:-python3}" "$here/netem/sweep.py" --out "$out" --auto-table || status=1
exit "$status"
