#!/bin/bash
# Six columns of the same path (the ring Reduce_scatter, 16 MiB of Nyx f64, 2 ranks on shared
# memory), interleaved, 40 calls each, LAUNCHES launches (default 3): each column's median
# call and compress time from the 6th call on (zcoll-bench's call_parts_s, rank 0's).
# Writes launch-K.jsonl beside it; prints one line per launch.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
BUILD=${BUILD:-$ROOT/build-mpich}
NYX=${NYX:-$ROOT/../shared/datasets/nyx_phigrav_128x128x128.f64}
for k in $(seq "${LAUNCHES:-3}"); do
  mpiexec.mpich -n 2 "$BUILD/bench/zcoll-bench" coll --op reduce_scatter --input "$NYX" --bytes 16M \
    --algo ring,ring,ring,ring,ring,ring --interleave --iters 40 --warmup 0 --json > "$HERE/launch-$k.jsonl"
  python3 - "$HERE/launch-$k.jsonl" <<'PY'
import json, statistics as st, sys
cols = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
cols = [r for r in cols if r["algo"] != "mpi"]
call = " ".join(f"{1e3 * st.median(r['call_times_s'][5:]):.2f}" for r in cols)
comp = " ".join(f"{1e3 * st.median(x[1] for x in r['call_parts_s'][5:]):.3f}" for r in cols)
print(f"{sys.argv[1].rsplit('/', 1)[-1]}: call ms {call} | compress ms {comp}")
PY
done
