#!/usr/bin/env bash
# bench/netem/run.sh: run an MPI program across N network namespaces joined by a
# bandwidth-limited emulated link (veth + bridge + tc tbf), on one machine.
#
#   bench/netem/run.sh [--rate 1gbit] [--ranks 2] [--ranks-per-node 1] [--mpi mpich|openmpi] [options]
#                      -- PROGRAM ARGS...
#
# See bench/netem/README.md. Needs root, iproute2 (ip, tc) and the MPI's mpicc/mpiexec.
# Creates only namespaces named zc-* (zc-ns0.., zc-brns) and the devices inside them
# (zc0 in each node, zcp<i> and the bridge zcbr0 in zc-brns); addresses are 10.213.0.0/24,
# inside those namespaces only. Everything is removed on exit, whatever the outcome.
set -euo pipefail

RATE=1gbit RANKS=2 PPN=1 MPI=mpich TIMEOUT=600 BURST="" LATENCY=20ms CHECK=1 YIELD_LIB=""
EXIT_LINE="" EXIT_GRACE=20
PP_BYTES=$((16 << 20)) PP_REPS=6 LO=0.7 HI=1.1
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NET=10.213.0 BRNS=zc-brns BR=zcbr0 DEV=zc0

usage() {
  cat >&2 <<EOF
usage: $0 [--rate RATE] [--ranks N] [--ranks-per-node K] [--mpi mpich|openmpi] [--timeout S]
          [--burst BYTES] [--latency T] [--no-check] [--yield-when-idle LIB]
          [--exit-line PREFIX] [--cleanup] -- PROGRAM [ARGS...]
  --rate RATE    tbf rate of every node's link, each direction (tc units: 1gbit, 500mbit,
                 10gbit, 125mbps = bytes/s); default 1gbit
  --ranks N      namespaces ("nodes"), N >= 2; default 2
  --ranks-per-node K
                 MPI ranks in each namespace (N x K in all, consecutive ranks together);
                 they talk over shared memory inside it, over the link across; default 1.
                 Every rank gets ZCOLL_NODE_KEY=<its namespace>, so zcoll sees the nodes.
  --mpi IMPL     mpich (hydra + UCX over TCP) or openmpi (ob1 + TCP BTL); default mpich
  --timeout S    limit for the MPI run (timeout(1)); default 600
  --burst BYTES  tbf burst; default 1 ms at RATE, at least 16000, at most 131072 (128 KiB)
  --latency T    tbf latency (queue bound); default 20ms
  --no-check     skip the ping-pong link check (not recommended)
  --yield-when-idle LIB
                 a rank that waits yields its core, for launches with more ranks than the
                 machine has cores: MPICH gets LIB (libzcoll_ucx_yield.so of a zcoll build,
                 tools/support/ucx_yield_when_idle.c) preloaded into every rank, Open MPI
                 mpi_yield_when_idle=1. Without it MPICH's ranks spin while they wait.
  --exit-line PREFIX
                 the program prints a line "PREFIX N" (stdout or stderr), N its exit
                 status, as its last act before MPI_Finalize; a launch still running
                 ${EXIT_GRACE} s after that line is stopped and returns N
  --cleanup      remove namespaces zc-ns*/zc-brns left by a killed run, then exit
Exit status: the program's; 3 if the measured link is outside ${LO}x-${HI}x of RATE;
4 on a setup failure; 2 on a usage error. MPICH over namespaces sometimes hangs in
MPI_Finalize after the results are out: with --exit-line such a run costs ${EXIT_GRACE} s
and keeps the program's status; without it, a run that timed out after printing output is
reported on stderr and counted as a success.
EOF
  exit 2
}
die() { echo "netem: $*" >&2; exit 4; }

CLEANUP_ONLY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --rate) RATE=${2:?}; shift 2 ;;
    --ranks) RANKS=${2:?}; shift 2 ;;
    --ranks-per-node) PPN=${2:?}; shift 2 ;;
    --mpi) MPI=${2:?}; shift 2 ;;
    --timeout) TIMEOUT=${2:?}; shift 2 ;;
    --burst) BURST=${2:?}; shift 2 ;;
    --latency) LATENCY=${2:?}; shift 2 ;;
    --no-check) CHECK=0; shift ;;
    --yield-when-idle) YIELD_LIB=${2:?}; shift 2 ;;
    --exit-line) EXIT_LINE=${2:?}; shift 2 ;;
    --cleanup) CLEANUP_ONLY=1; shift ;;
    --) shift; break ;;
    -h|--help) usage ;;
    *) echo "netem: unknown option $1" >&2; usage ;;
  esac
done

[ "$(id -u)" = 0 ] || { echo "netem: needs root (network namespaces, veth, tc); run it as root" >&2; exit 4; }
for c in ip tc timeout; do command -v "$c" >/dev/null || die "'$c' not found (ip and tc come with iproute2)"; done

list_ours() { ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^zc-(ns[0-9]+|brns)$' || true; }
kill_in_ns() {  # processes still running inside one of our namespaces (started by this harness)
  local ns=$1 pids
  pids=$(ip netns pids "$ns" 2>/dev/null || true)
  [ -n "$pids" ] || return 0
  kill -TERM $pids 2>/dev/null || true
  sleep 1
  pids=$(ip netns pids "$ns" 2>/dev/null || true)
  [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
}
if [ "$CLEANUP_ONLY" = 1 ]; then
  for ns in $(list_ours); do kill_in_ns "$ns"; ip netns del "$ns" && echo "netem: removed $ns" >&2; done
  exit 0
fi

[ $# -ge 1 ] || { echo "netem: no program given after --" >&2; usage; }
[[ "$RANKS" =~ ^[0-9]+$ ]] && [ "$RANKS" -ge 2 ] && [ "$RANKS" -le 200 ] || { echo "netem: --ranks must be 2..200" >&2; exit 2; }
[[ "$PPN" =~ ^[0-9]+$ ]] && [ "$PPN" -ge 1 ] && [ "$PPN" -le 64 ] || { echo "netem: --ranks-per-node must be 1..64" >&2; exit 2; }
[[ "$TIMEOUT" =~ ^[0-9]+$ ]] || { echo "netem: --timeout must be whole seconds" >&2; exit 2; }
case "$MPI" in
  mpich|openmpi) ;;
  *) echo "netem: --mpi must be mpich or openmpi" >&2; exit 2 ;;
esac
MPIEXEC=mpiexec.$MPI MPICC=mpicc.$MPI
if [ -n "$YIELD_LIB" ]; then
  [ -f "$YIELD_LIB" ] || die "--yield-when-idle: $YIELD_LIB not found"
  YIELD_LIB=$(cd "$(dirname "$YIELD_LIB")" && pwd)/$(basename "$YIELD_LIB")
fi
command -v "$MPIEXEC" >/dev/null || die "$MPIEXEC not found"

# RATE in bit/s, with tc's meaning of the units (SI prefixes; bps = bytes per second).
rate_bits() {
  local r=${1,,} num unit mul
  [[ "$r" =~ ^([0-9]+(\.[0-9]+)?)([a-z]*)$ ]] || return 1
  num=${BASH_REMATCH[1]} unit=${BASH_REMATCH[3]}
  case "$unit" in
    bit|"") mul=1 ;; kbit) mul=1e3 ;; mbit) mul=1e6 ;; gbit) mul=1e9 ;; tbit) mul=1e12 ;;
    bps) mul=8 ;; kbps) mul=8e3 ;; mbps) mul=8e6 ;; gbps) mul=8e9 ;; tbps) mul=8e12 ;;
    *) return 1 ;;
  esac
  awk -v n="$num" -v m="$mul" 'BEGIN { printf "%.0f\n", n * m }'
}
RATE_BITS=$(rate_bits "$RATE") || { echo "netem: cannot parse --rate $RATE (use e.g. 1gbit, 500mbit)" >&2; exit 2; }
[ "$RATE_BITS" -gt 0 ] || { echo "netem: --rate must be positive" >&2; exit 2; }
# The burst is what the link passes above RATE after an idle spell; a real NIC passes
# nothing above its line rate. At 10 Gbit/s a bucket of 1 ms (1.25 MB) let a 1 MiB plain
# MPI_Bcast of 2 ranks through in 0.38-0.40 ms, 2.2x faster than the wire allows (0.84 ms);
# with 128 KiB it took 0.85 ms. A bucket under one of veth's 64 KiB segments makes tbf split
# every segment, at a CPU cost: 62500 bytes held a 10 Gbit/s link to 4.2 Gbit/s; 128 KiB (two
# segments) held 9.3.
# Up to 1 Gbit/s the default is unchanged (1 ms at RATE, at least 16000).
[ -n "$BURST" ] || BURST=$(awk -v b="$RATE_BITS" 'BEGIN { x = b / 8 / 1000; if (x < 16000) x = 16000; if (x > 131072) x = 131072; printf "%.0f\n", x }')

# The program: an absolute path if it names a file, so every namespace finds it.
PROG=("$@")
if [[ "${PROG[0]}" == */* ]]; then
  [ -x "${PROG[0]}" ] || die "${PROG[0]} is not an executable file"
  PROG[0]=$(cd "$(dirname "${PROG[0]}")" && pwd)/$(basename "${PROG[0]}")
fi
if command -v ldd >/dev/null && [ -x "$(command -v "${PROG[0]}" || true)" ]; then
  libs=$(ldd "$(command -v "${PROG[0]}")" 2>/dev/null || true)
  if [ "$MPI" = openmpi ] && grep -q libmpich <<<"$libs"; then
    echo "netem: warning: ${PROG[0]} is linked against MPICH but --mpi openmpi" >&2
  elif [ "$MPI" = mpich ] && grep -q 'libmpi\.so' <<<"$libs"; then
    echo "netem: warning: ${PROG[0]} is linked against Open MPI but --mpi mpich" >&2
  fi
fi

existing=$(list_ours)
[ -z "$existing" ] || die "namespaces from another run exist ($(echo $existing)); if none is running, remove them with: $0 --cleanup"

TMP=$(mktemp -d /tmp/zc-netem.XXXXXX)
CREATED=() MPI_PID=""
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  set +e
  for ns in "${CREATED[@]}"; do kill_in_ns "$ns"; done
  [ -z "$MPI_PID" ] || { kill "$MPI_PID" 2>/dev/null; wait "$MPI_PID" 2>/dev/null; }
  for ns in "${CREATED[@]}"; do ip netns del "$ns" 2>/dev/null; done
  rm -rf "$TMP"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- the network: one bridge in its own namespace, one veth per node, tbf on both ends
nsx() { local ns=$1; shift; ip netns exec "$ns" "$@"; }
TBF=(tbf rate "$RATE" burst "$BURST" latency "$LATENCY")
ip netns add "$BRNS" || die "cannot create network namespace $BRNS"
CREATED+=("$BRNS")
ip -n "$BRNS" link set lo up
ip -n "$BRNS" link add "$BR" type bridge
ip -n "$BRNS" link set "$BR" up
for ((i = 0; i < RANKS; i++)); do
  ns=zc-ns$i
  ip netns add "$ns" || die "cannot create network namespace $ns"
  CREATED+=("$ns")
  ip link add "$DEV" netns "$ns" type veth peer name "zcp$i" netns "$BRNS"
  ip -n "$ns" link set lo up
  ip -n "$ns" addr add "$NET.$((i + 1))/24" dev "$DEV"
  ip -n "$ns" link set "$DEV" up
  ip -n "$BRNS" link set "zcp$i" master "$BR"
  ip -n "$BRNS" link set "zcp$i" up
  nsx "$ns" tc qdisc add dev "$DEV" root "${TBF[@]}" || die "tc tbf failed in $ns (no sch_tbf?)"
  nsx "$BRNS" tc qdisc add dev "zcp$i" root "${TBF[@]}" || die "tc tbf failed in $BRNS"
done
for ((i = 1; i < RANKS; i++)); do  # wait for the bridge to forward
  ok=0
  for _ in $(seq 50); do
    # no ping here: a refused TCP connection to the discard port proves the path works
    probe=$(nsx zc-ns0 timeout 2 bash -c "exec 3<>/dev/tcp/$NET.$((i + 1))/9" 2>&1 || true)
    if [[ "$probe" == *refused* ]]; then ok=1; break; fi
    sleep 0.2
  done
  [ "$ok" = 1 ] || die "zc-ns0 cannot reach $NET.$((i + 1)) over the bridge"
done
echo "netem: $RANKS namespaces x $PPN rank(s), tbf rate $RATE burst $BURST latency $LATENCY on both ends of every link ($MPI${YIELD_LIB:+, waiting ranks yield})" >&2

# ---- launcher: ranks start through "ip netns exec" in place of ssh
# Open MPI tells nodes apart by host name (shared-memory files, locality), which is the
# same in every namespace: with K > 1 each namespace gets a UTS namespace named after it.
UTS_PRE="" HOST_PRE="" WRAP0=()
if [ "$MPI" = openmpi ] && [ "$PPN" -gt 1 ]; then
  UTS_PRE="unshare --uts " HOST_PRE='hostname zc-ns$i; '
  WRAP0=(unshare --uts /bin/sh -c 'hostname zc-ns0 && exec "$@"' sh)
fi
cat >"$TMP/launch" <<EOF
#!/bin/sh
# ssh-like: launch [options] HOST COMMAND...; HOST is $NET.<i+1>, the command runs in zc-ns<i>.
while [ \$# -gt 0 ]; do case "\$1" in -*) shift ;; *) break ;; esac; done
host=\$1; shift
case "\$host" in
  $NET.*) i=\$((\${host##*.} - 1)) ;;
  *) echo "zc launcher: unknown host \$host" >&2; exit 255 ;;
esac
[ -n "\${ZC_NETEM_DEBUG:-}" ] && echo "zc launcher: zc-ns\$i: \$*" >&2
exec ip netns exec "zc-ns\$i" $UTS_PRE/bin/sh -c "$HOST_PRE\$*"
EOF
chmod +x "$TMP/launch"
# Each rank learns its namespace itself (the MPIs pass mpiexec's environment to every rank).
# With several ranks per namespace, each is pinned to core (local rank + namespace index)
# mod cores: left to the scheduler, the two ranks of one "node" can share a core while the
# other node's ranks busy-poll on the other, and every shared-memory hand-off between them
# then waits for a time slice (a 16 MiB node-aware bcast took 5.3 s instead of 0.19 s in
# some launches). The namespace index shifts each node's cores, so that the ranks of equal
# local rank on two nodes (a node-aware schedule's inter-node pairs) do not share a core
# either: pinned by local rank alone, they did, and a plain node-aware allgather of 16 MiB,
# whose inter-node stage is one large message each way between them, took 10.4 s.
# Where the machine has a core for every rank, each rank gets cores of its own instead, an
# equal share (its codec threads run there): on 16 cores the scheme above put two ranks of a
# 2 x 2 launch on one core, and every rank's codec threads on its one core.
cat >"$TMP/node-key" <<'EOF'
#!/bin/sh
ns=$(ip netns identify $$ 2>/dev/null)
[ -z "$ns" ] || export ZCOLL_NODE_KEY="$ns"
ppn=@PPN@ nodes=@NODES@
local_rank=${MPI_LOCALRANKID:-${OMPI_COMM_WORLD_LOCAL_RANK:-}}
node=$(printf '%s' "$ns" | tr -dc 0-9)
if [ "$ppn" -gt 1 ] && [ -n "$local_rank" ] && command -v taskset >/dev/null; then
  cores=$(nproc)
  per=$((cores / (nodes * ppn)))
  if [ "$per" -ge 1 ]; then
    first=$(((${node:-0} * ppn + local_rank) * per))
    exec taskset -c "$first-$((first + per - 1))" "$@"
  fi
  exec taskset -c $(((local_rank + ${node:-0}) % cores)) "$@"
fi
exec "$@"
EOF
sed -i "s/@PPN@/$PPN/; s/@NODES@/$RANKS/" "$TMP/node-key"
chmod +x "$TMP/node-key"
: >"$TMP/hosts"
for ((i = 0; i < RANKS; i++)); do
  if [ "$MPI" = mpich ]; then echo "$NET.$((i + 1)):$PPN" >>"$TMP/hosts"; else echo "$NET.$((i + 1)) slots=$PPN" >>"$TMP/hosts"; fi
done

# mpirun/mpiexec itself runs inside zc-ns0, so its control connections stay on the link.
# Shared memory joins only the ranks of one namespace: MPICH's is per launched host, Open
# MPI's vader (added for K > 1) per daemon.
mpi_cmd() {  # mpi_cmd PPN PROGRAM ARGS... -> the full launch command in MPIRUN
  local ppn=$1 btl=tcp,self map=node
  shift
  [ "$ppn" = 1 ] || { btl=tcp,self,vader; map=slot; }
  local yield=()
  if [ "$MPI" = mpich ]; then
    [ -z "$YIELD_LIB" ] || yield=(-genv LD_PRELOAD "$YIELD_LIB")
    MPIRUN=("$MPIEXEC" -launcher rsh -launcher-exec "$TMP/launch" -f "$TMP/hosts" -n $((RANKS * ppn)) -ppn "$ppn"
            -iface "$DEV" -genv UCX_TLS tcp,self -genv UCX_NET_DEVICES "$DEV" "${yield[@]}" "$@")
  else
    [ -z "$YIELD_LIB" ] || yield=(--mca mpi_yield_when_idle 1)
    MPIRUN=("$MPIEXEC" --allow-run-as-root --oversubscribe --hostfile "$TMP/hosts" -np $((RANKS * ppn)) --map-by "$map"
            --mca plm_rsh_agent "$TMP/launch" --mca plm_rsh_no_tree_spawn 1
            --mca pml ob1 --mca btl "$btl" --mca btl_tcp_if_include "$DEV"
            --mca oob_tcp_if_include "$DEV" "${yield[@]}" "$@")
  fi
}
export UCX_TLS=tcp,self UCX_NET_DEVICES=$DEV
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# reported_status PREFIX FILE...: the status N of the first line "PREFIX N" in the files, or nothing.
reported_status() {
  local prefix=$1
  shift
  awk -v p="$prefix" 'index($0, p) == 1 && substr($0, length(p) + 1) ~ /^ *-?[0-9]+ *$/ {
    print substr($0, length(p) + 1) + 0; exit }' "$@" 2>/dev/null
}

# run_mpi LIMIT OUTFILE EXIT_LINE PPN PROGRAM ARGS...: stdout passed through and kept in
# OUTFILE, stderr passed through and kept in OUTFILE.err. Returns the program's status: the
# one it reported on its exit line (EXIT_LINE, may be empty) where the launch had to be
# stopped after it; 0 for a timeout after output was printed.
run_mpi() {
  local limit=$1 out=$2 exit_line=$3 rc status="" since=0 stopped=0
  shift 3
  mpi_cmd "$@"
  set +e
  # In the background, so that INT/TERM reach the trap at once (bash runs traps only
  # between foreground commands, but does interrupt `wait`).
  (nsx zc-ns0 "${WRAP0[@]}" timeout -k 10 "$limit" "${MPIRUN[@]}" 2> >(tee "$out.err" >&2) | tee "$out"
   exit "${PIPESTATUS[0]}") &
  MPI_PID=$!
  # The program's work is done once it printed its exit line; what may follow is MPICH's
  # MPI_Finalize hang (bench/netem/README.md), which would cost the whole LIMIT.
  while [ -n "$exit_line" ] && kill -0 "$MPI_PID" 2>/dev/null; do
    if [ -z "$status" ]; then
      status=$(reported_status "$exit_line" "$out" "$out.err")
      since=$SECONDS
    elif (( SECONDS - since >= EXIT_GRACE )); then
      echo "netem: the program reported exit status $status but its launch was still running ${EXIT_GRACE}s later (known MPI_Finalize hang across namespaces); stopped, its status kept" >&2
      for ((i = 0; i < RANKS; i++)); do kill_in_ns "zc-ns$i"; done
      stopped=1
      break
    fi
    sleep 1
  done
  wait "$MPI_PID"
  rc=$?
  MPI_PID=""
  set -e
  if [ "$stopped" = 1 ]; then
    rc=$status
  elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    if [ -s "$out" ]; then
      echo "netem: the MPI run timed out after ${limit}s but had printed its output (known MPI_Finalize hang across namespaces); keeping it" >&2
      rc=0
    else
      echo "netem: the MPI run timed out after ${limit}s without output" >&2
    fi
    for ((i = 0; i < RANKS; i++)); do kill_in_ns "zc-ns$i"; done
  fi
  return "$rc"
}

# ---- link check, one rank per namespace: median one-way ping-pong bandwidth of every pair
# (rank 0 <-> k) within LO..HI of RATE. Above HI means traffic bypasses the limit (e.g. shared memory): refuse at
# once. Below LO is retried twice, since a busy machine (the ranks, the launcher and the
# kernel's TCP work share the cores) can slow a single measurement.
if [ "$CHECK" = 1 ]; then
  command -v "$MPICC" >/dev/null || die "$MPICC not found (needed for the ping-pong check; or pass --no-check)"
  "$MPICC" -O2 -o "$TMP/pingpong" "$HERE/pingpong.c" || die "cannot compile pingpong.c with $MPICC"
  # Limit: 20 s plus three times the transfer time at RATE (1.7 s per pair at 1 Gbit/s). An
  # MPI_Finalize hang costs less: the launch is stopped 20 s after pingpong's exit line.
  PP_LIMIT=$(awk -v n=$((RANKS - 1)) -v r="$PP_REPS" -v b="$PP_BYTES" -v rate="$RATE_BITS" \
             'BEGIN { printf "%d\n", 20 + 3 * n * (r + 1) * 2 * b * 8 / rate }')
  for attempt in 1 2 3; do
    set +e
    run_mpi "$PP_LIMIT" "$TMP/pp.out" "pingpong: exit status" 1 "$TMP/pingpong" "$PP_BYTES" "$PP_REPS" >&2
    rc=$?
    set -e
    [ "$rc" = 0 ] || die "ping-pong failed (status $rc)"
    verdict=$(awk -v rate="$RATE_BITS" -v lo="$LO" -v hi="$HI" -v n=$((RANKS - 1)) '
      /^pingpong / { for (j = 1; j < NF; j++) if ($j == "median_mbit_s") f = $(j + 1) * 1e6 / rate
                     k++; if (f > hi) high++; if (f < lo) low++
                     if (k == 1 || f < mn) mn = f; if (k == 1 || f > mx) mx = f }
      END { if (k < n) print "missing"; else printf "%s %.3f %.3f\n", high ? "high" : low ? "low" : "ok", mn, mx }' "$TMP/pp.out")
    read -r what mn mx <<<"$verdict"
    case "$what" in
      ok) echo "netem: link check ok: median ping-pong bandwidth ${mn}x-${mx}x of $RATE" >&2; break ;;
      low) echo "netem: link check attempt $attempt: median ping-pong bandwidth ${mn}x-${mx}x of $RATE, below ${LO}x" >&2
           [ "$attempt" -lt 3 ] || { echo "netem: link check FAILED; not running the program" >&2; exit 3; } ;;
      high) echo "netem: link check FAILED: median ping-pong bandwidth ${mn}x-${mx}x of $RATE, above ${HI}x (traffic bypasses the link?); not running the program" >&2; exit 3 ;;
      *) echo "netem: link check FAILED: no ping-pong result for every pair; not running the program" >&2; exit 3 ;;
    esac
  done
fi

# ---- the program
set +e
run_mpi "$TIMEOUT" "$TMP/prog.out" "$EXIT_LINE" "$PPN" "$TMP/node-key" "${PROG[@]}"
rc=$?
set -e
exit "$rc"
