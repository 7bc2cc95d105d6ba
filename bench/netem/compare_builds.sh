#!/usr/bin/env bash
# bench/netem/compare_builds.sh: the same benchmarks with two builds of zcoll-bench, to see
# what a change did to speed, ratio and error.
#
#   bench/netem/compare_builds.sh [--bytes 64M] [--out DIR] [--mpi mpich|openmpi] OLD_BUILD_DIR NEW_BUILD_DIR [ROUNDS]
#
# Every round runs, for OLD and then NEW (alternated, so that a drift of the host's speed
# or the link's hits both alike):
#   - `zcoll-bench coll` over the emulated 1 Gbit/s link of run.sh (2 ranks, one launch per
#     build and round, its link check included): allreduce, bcast, allgather and alltoall at
#     --bytes per rank (default 64M), --algo zcoll, on sweep.py's default input;
#   - `zcoll-bench codec` on every field in data/ at REL 1e-4, --threads 1, best of 5.
# It then prints one table: the median over the rounds for OLD and NEW and NEW/OLD, with
# PSNR and max_err/eb of each beside it. ROUNDS defaults to 3 (estimated at 6 minutes at 64M
# on a 2-core host: per round two launches of about 45 s and the codec runs). Needs root
# (run.sh: network namespaces). The JSON lines, each with its build and round, stay in
# DIR/results.jsonl (default: a new directory under /tmp).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BYTES=64M OUT="" MPI=mpich

usage() {
  sed -n '5p' "$0" | sed 's/^# */usage: /' >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case "$1" in
    --bytes) BYTES=${2:?}; shift 2 ;;
    --out) OUT=${2:?}; shift 2 ;;
    --mpi) MPI=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "compare_builds: unknown option $1" >&2; usage ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] && [ $# -le 3 ] || usage
ROUNDS=${3:-3}
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "compare_builds: ROUNDS must be a positive number" >&2; exit 2; }
declare -A BENCH
for side in old new; do
  dir=$([ "$side" = old ] && echo "$1" || echo "$2")
  BENCH[$side]=$(cd "$dir" && pwd)/bench/zcoll-bench
  [ -x "${BENCH[$side]}" ] || { echo "compare_builds: ${BENCH[$side]} not built" >&2; exit 2; }
done
[ -n "$OUT" ] || OUT=$(mktemp -d /tmp/zc-compare.XXXXXX)
mkdir -p "$OUT"
RESULTS=$OUT/results.jsonl
: >"$RESULTS"
INPUT=$(cd "$HERE" && python3 -c 'import sweep; print(sweep.default_input())')
FIELDS=("$ROOT"/data/*.f32 "$ROOT"/data/*.f64)

# record SIDE ROUND < zcoll-bench's stdout: its JSON lines into RESULTS, tagged.
record() {
  python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); from results_io import append_results
append_results(sys.stdin.read(), sys.argv[2], build=sys.argv[3], round=int(sys.argv[4]))' \
    "$ROOT/bench" "$RESULTS" "$1" "$2"
}

for ((round = 1; round <= ROUNDS; round++)); do
  for side in old new; do
    echo "compare_builds: round $round/$ROUNDS, $side: coll over the 1 Gbit/s link" >&2
    # A launch at 64M takes about a minute; the limit only bounds an MPI_Finalize hang.
    # A failed launch (a link check below 0.7x, a broken bound) leaves its rows out, not the rest.
    bash "$HERE/run.sh" --rate 1gbit --ranks 2 --mpi "$MPI" --timeout 300 -- "${BENCH[$side]}" coll \
      --op allreduce,bcast,allgather,alltoall --input "$INPUT" --bytes "$BYTES" --algo zcoll \
      --eb-mode rel --eb 1e-4 --threads 1 --json | record "$side" "$round" ||
      echo "compare_builds: round $round, $side: the coll launch failed; see above" >&2
  done
  for side in old new; do
    echo "compare_builds: round $round/$ROUNDS, $side: codec on data/" >&2
    for f in "${FIELDS[@]}"; do
      [ -e "$f" ] || continue
      "${BENCH[$side]}" codec --input "$f" --eb-mode rel --eb 1e-4 --threads 1 --repeat 5 --json ||
        echo "compare_builds: round $round, $side: codec $f failed" >&2
    done | record "$side" "$round"
  done
done

python3 - "$RESULTS" "$1" "$2" <<'EOF'
import json, statistics, sys

recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]


def med(rows, key):
    vals = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def num(v, fmt):
    return "-" if v is None else format(v, fmt)


def pair(o, n, fmt):
    return f"{num(o, fmt)} / {num(n, fmt)}"


print(f"old = {sys.argv[2]}\nnew = {sys.argv[3]}")
print(f"medians over {max(r['round'] for r in recs)} round(s), old and new alternated\n")
head = f"{'case':<44} {'metric':<12} {'old':>10} {'new':>10} {'new/old':>8}   {'PSNR dB old / new':>19}   {'max_err/eb old / new':>21}"
print(head)
print("-" * len(head))


def rows(case, metrics, sel, quality=True):
    side = {b: [r for r in recs if sel(r) and r["build"] == b] for b in ("old", "new")}
    if not side["old"] and not side["new"]:
        return
    for i, (label, key, fmt) in enumerate(metrics):
        o, n = med(side["old"], key), med(side["new"], key)
        ratio = n / o if o and n is not None else None
        extra = ""
        if i == 0 and quality:
            extra = (f"   {pair(med(side['old'], 'psnr_db'), med(side['new'], 'psnr_db'), '.2f'):>19}"
                     f"   {pair(med(side['old'], 'max_err_over_eb'), med(side['new'], 'max_err_over_eb'), '.4f'):>21}")
        print(f"{case if i == 0 else '':<44} {label:<12} {num(o, fmt):>10} {num(n, fmt):>10} {num(ratio, '.3f'):>8}{extra}")


coll = [r for r in recs if "op" in r]
for op in dict.fromkeys(r["op"] for r in coll):
    mib = coll[0]["bytes_per_rank"] / 2**20
    sel = lambda r, op=op: r.get("op") == op
    rows(f"{op} {mib:g} MiB/rank, 2 ranks, 1 Gbit/s", [("zcoll s", "time_s", ".4f"), ("plain MPI s", "time_mpi_s", ".4f"),
                                                        ("speedup", "speedup_vs_mpi", ".2f"), ("ratio", "ratio", ".2f")], sel)
for f in dict.fromkeys(r["file"] for r in recs if "file" in r):
    sel = lambda r, f=f: r.get("file") == f
    rows(f"codec {f}", [("comp GB/s", "comp_gbps", ".3f"), ("decomp GB/s", "decomp_gbps", ".3f"), ("ratio", "ratio", ".3f")],
         sel)
print(f"\nnew/old: above 1 is slower for seconds, faster for GB/s and speedup. Results: {sys.argv[1]}")
EOF
