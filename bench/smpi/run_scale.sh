#!/usr/bin/env bash
# The SMPI scale study in one command: build zcoll-bench with smpicc into build-smpi (build.sh),
# then run run_scale.py (SIMULATED 100 Gbit/s cluster, 8-64 nodes, allreduce, bcast, scatter,
# allgather; mpi vs zcoll vs cprp2p) and write bench/smpi/results/{scale.jsonl,scale.png,
# breakdown.png,scale_table.md,logs/}. Arguments go to run_scale.py (--help for them).
#
#   bash bench/smpi/run_scale.sh [--fresh] [--nodes 8,16,32,64] [--plan ...] [--plot-only]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
py="$root/.venv/bin/python"
[ -x "$py" ] || py="$(command -v python3)"
"$py" -c 'import matplotlib' 2>/dev/null || { echo "run_scale.sh: $py has no matplotlib (make .venv with: scripts/bootstrap.sh --python)" >&2; exit 1; }
case " $* " in
  *" --plot-only "*) ;;
  *) bash "$here/build.sh" "$root/build-smpi" ;;
esac
exec "$py" "$here/run_scale.py" --build "$root/build-smpi" "$@"
