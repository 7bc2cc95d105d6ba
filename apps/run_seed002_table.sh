#!/usr/bin/env bash
# apps/run_seed002_table.sh: seed 002's four applications (ping-pong at 8,192 floats and at
# 4 MiB, Himeno, K-means, 2-D FFT) at eb 1e-2 .. 1e-6, absolute and relative, with every codec
# and both modes, one launch per application (each launch runs plain MPI first, then every
# zcoll configuration, each right after a plain-MPI run that is its speedup reference), the
# JSON lines collected in one file, then a table next to seed 002's bit-wise figures at eb 1e-4.
#
#   apps/run_seed002_table.sh [--build DIR] [--out FILE] [--eb-mode abs,rel] [--quick] [-- LAUNCHER...]
#
# Seed 002's bounds are absolute (its Table 2: absErrorBound), so the abs rows are the ones to
# set next to its figures; the rel rows are zcoll's usual mode. --eb-mode abs halves the run.
# LAUNCHER is the command prefix that starts 2 ranks (default: mpiexec.mpich -n 2, shared
# memory). Over the emulated 1 Gbit/s link, as root:
#   apps/run_seed002_table.sh --build build-mpich -- bench/netem/run.sh --rate 1gbit --ranks 2 --mpi mpich --
# --quick shrinks every problem so that the whole table takes seconds (a check that it works;
# its timings mean nothing). Exit status 1 if a launch failed or reported a failed check.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
BUILD=$ROOT/build-mpich OUT="" EB_MODE=abs,rel QUICK=0
LAUNCHER=(mpiexec.mpich -n 2)
usage() { sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --build) BUILD=$(cd "${2:?}" && pwd) || exit 2; shift 2 ;;
    --out) OUT=${2:?}; shift 2 ;;
    --eb-mode) EB_MODE=${2:?}; shift 2 ;;
    --quick) QUICK=1; shift ;;
    --) shift; [ $# -gt 0 ] && LAUNCHER=("$@"); break ;;
    -h|--help) usage ;;
    *) echo "run_seed002_table.sh: unknown option $1" >&2; usage ;;
  esac
done
OUT=${OUT:-$BUILD/seed002_table.jsonl}
for app in pingpong himeno kmeans fft2d; do
  [ -x "$BUILD/apps/zcoll-$app" ] || { echo "run_seed002_table.sh: $BUILD/apps/zcoll-$app not built" >&2; exit 2; }
done

# shellcheck disable=SC2054  # the commas are inside flag values
COMMON=(--mode mpi,zcoll --codec fzl,lpbyte,lpbit --eb 1e-2,1e-3,1e-4,1e-5,1e-6 --eb-mode "$EB_MODE" --json)
if [ "$QUICK" = 1 ]; then
  RUNS=("pingpong --sizes 8192 --iters 50" "pingpong --sizes 1048576 --iters 2" "himeno --size XS --iters 10"
        "kmeans --k 16 --points 50000 --iters 10" "fft2d --n 256 --iters 2")
else
  # Seed 002: ping-pong 8,192 floats (10,000 bounces), Himeno "m" 256x128x128, K-means 100
  # clusters (1,000 iterations, datasets we do not have), FFT about 1024 x 1024 doubles.
  RUNS=("pingpong --sizes 8192 --iters 1000" "pingpong --sizes 1048576 --iters 20" "himeno --size M --iters 40"
        "kmeans --k 32 --iters 30" "fft2d --n 1024 --iters 10")
fi

: > "$OUT"
status=0
for run in "${RUNS[@]}"; do
  read -r app args <<< "$run"
  echo "== ${LAUNCHER[*]} zcoll-$app $args" >&2
  start=$SECONDS
  # shellcheck disable=SC2086  # args is a list of flags
  "${LAUNCHER[@]}" "$BUILD/apps/zcoll-$app" ${args} "${COMMON[@]}" > "$OUT.part" || status=1
  echo "   $((SECONDS - start)) s" >&2
  grep '^{' "$OUT.part" >> "$OUT"
  grep -q '"ok":false' "$OUT.part" && status=1
  rm -f "$OUT.part"
done
echo "JSON lines: $OUT" >&2

python3 - "$OUT" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
# Seed 002, two nodes over GbE, bit-wise codec at (absolute) eb 1e-4: ratio, speedup.
seed = {"pingpong": (2.4, 2.1), "himeno": (6.6, 1.7), "kmeans": (4.3, 2.0), "fft2d": (2.7, 2.4)}
quality = {"pingpong": ("psnr_db", "PSNR dB"), "himeno": ("p_rel_diff", "p rel diff"),
           "kmeans": ("agreement", "agreement"), "fft2d": ("rel_err", "rel err")}
def name(r):
    return r["app"] + (" %d floats" % r["floats"] if r["app"] == "pingpong" else "")
def g(x, f="%.3g"):
    return "-" if x is None else f % x
apps = []
for r in rows:
    if name(r) not in apps: apps.append(name(r))
print("\nAll configurations (ratio = raw/wire bytes of the compressed messages; speedup = plain-MPI time / time):")
for a in apps:
    key, label = quality[a.split()[0]]
    ref = [r for r in rows if name(r) == a and r["mode"] == "mpi"][:1] or [{"time_s": None, "mpi_library": ""}]
    print("\n%s: plain MPI %s s, %s" % (a, g(ref[0]["time_s"], "%.4f"), ref[0]["mpi_library"]))
    print("  %-9s %-7s %8s %8s %10s %10s  %s" % ("eb", "codec", "ratio", "speedup", "time s", "comm s", label))
    for r in rows:
        if name(r) == a and r["mode"] == "zcoll":
            print("  %-9s %-7s %8.2f %8.2f %10.4f %10.4f  %s%s" % (
                r["eb_mode"] + " " + g(r["eb"], "%.0e"), r["codec"], r["ratio"], r["speedup"], r["time_s"],
                r["comm_s"], g(r.get(key)), "" if r["ok"] else "  CHECK FAILED"))
print("\nAt eb 1e-4 next to seed 002's bit-wise codec (its bounds are absolute: compare the abs rows):")
print("  %-24s %11s %13s %-9s %-7s %8s %8s  %s" % ("application", "seed ratio", "seed speedup", "eb", "codec", "ratio",
      "speedup", "quality"))
for a in apps:
    s = seed[a.split()[0]]
    key, label = quality[a.split()[0]]
    for r in rows:
        if name(r) == a and r["mode"] == "zcoll" and r["eb"] is not None and abs(r["eb"] - 1e-4) < 1e-12:
            print("  %-24s %11.1f %13.1f %-9s %-7s %8.2f %8.2f  %s" % (
                a, s[0], s[1], r["eb_mode"] + " 1e-04", r["codec"], r["ratio"], r["speedup"],
                label + " " + g(r.get(key))))
PY
exit $status
