# What run_netem_demo.sh and run_netem_apps.sh share; sourced with their arguments,
# BUILD_DIR [RATE] [EB]. Sets root (the source tree), build, rate (default 1gbit), eb
# (default 1e-4), rounds ($ZCOLL_DEMO_ROUNDS, default 3), lib (the layer in BUILD_DIR) and
# netem (bench/netem/run.sh on 2 ranks with $ZCOLL_DEMO_MPI, mpich by default or openmpi:
# the MPI BUILD_DIR was built with; a timeout of $netem_timeout seconds, default 60), and
# defines require_built, time_of and median.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:?usage: $(basename "$0") BUILD_DIR [RATE] [EB]}" && pwd)
rate=${2:-1gbit}
eb=${3:-1e-4}
rounds=${ZCOLL_DEMO_ROUNDS:-3}
lib="$build/src/pmpi/libzcoll_mpi.so"
mpi=${ZCOLL_DEMO_MPI:-mpich}
netem=(bash "$root/bench/netem/run.sh" --rate "$rate" --ranks 2 --mpi "$mpi" --timeout "${netem_timeout:-60}" --)

# require_built FILE...: exits 1 naming the first that does not exist.
require_built() {
  local f
  for f in "$@"; do [ -e "$f" ] || { echo "$(basename "$0"): $f not built" >&2; exit 1; }; done
}
# time_s of a program's output file
time_of() { awk '$1 == "time_s" { print $2 }' "$1"; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
