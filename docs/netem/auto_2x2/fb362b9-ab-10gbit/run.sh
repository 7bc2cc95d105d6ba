#!/bin/bash
# AUTO's rules before (1533a94) and after (fb362b9: the re-check bands at 1.1x and 1.75x, a
# 12-call spell wait, backoff kept across changes of the choice, the far band), alternated:
# 2 x 2 ranks at 10 Gbit/s, 1 and 16 MiB, 100 calls per cell, cesm_TS then Nyx, two rounds
# each (docs/results.md, 2026-12-07, night). OLD and NEW: MPICH builds of the two commits
# (zcoll-bench, and libzcoll_ucx_yield.so beside it). Writes FIELD-{old,new}{1,2}/ here
# (bench/netem/run_auto_ab.sh).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bash "$HERE/../../../../bench/netem/run_auto_ab.sh" "$HERE" 2
