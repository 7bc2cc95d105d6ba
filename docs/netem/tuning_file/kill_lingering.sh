#!/usr/bin/env bash
# MPICH's MPI_Finalize can hang across network namespaces after a launch has printed all of
# its results (docs/results.md). This watcher kills a launch's zcoll-bench ranks once its
# output (bench/netem/run.sh's prog.out) holds every result the command line asks for
# (sizes x algorithms x thread counts) and 20 s have passed since. It runs until killed.
#   docs/netem/tuning_file/kill_lingering.sh >> killed.log &
while sleep 5; do
  pid=$(pgrep -o -x zcoll-bench || true)
  [ -n "$pid" ] || continue
  cmd=$(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null) || continue
  arg() { sed -E "s/.* --$1 ([^ ]+).*/\1/" <<<"$cmd"; }
  n=$(( $(arg bytes | tr ',' '\n' | wc -l) * $(arg algo | tr ',' '\n' | wc -l) * $(arg threads | tr ',' '\n' | wc -l) ))
  out=$(ls -t /tmp/zc-netem.*/prog.out 2>/dev/null | head -1)
  [ -n "$out" ] || continue
  got=$(grep -c '^{' "$out" || true)
  if [ "$got" -ge "$n" ]; then
    age=$(( $(date +%s) - $(stat -c %Y "$out") ))
    if [ "$age" -ge 20 ]; then
      echo "$(date +%T) killing lingering ranks after $got/$n results ($out)"
      pkill -9 -x zcoll-bench  # the ranks only: run.sh must live to remove its namespaces
    fi
  fi
done
