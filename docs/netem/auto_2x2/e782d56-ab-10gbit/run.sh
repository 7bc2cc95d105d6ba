#!/bin/bash
# AUTO's rules before (ae1ca78) and after (e782d56: the second lowest of seven runs; the spell
# re-check's best run ever and its plain-stretch turn), alternated: 2 x 2 ranks at 10 Gbit/s,
# 1 and 16 MiB, 100 calls per cell, cesm_TS then Nyx, two rounds each (docs/results.md,
# 2026-12-07). OLD and NEW: MPICH builds of the two commits (zcoll-bench, and
# libzcoll_ucx_yield.so beside it). Writes FIELD-{old,new}{1,2}/ here
# (bench/netem/run_auto_ab.sh).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bash "$HERE/../../../../bench/netem/run_auto_ab.sh" "$HERE" 2
