#!/bin/bash
# A/B: kernels picked per chunk (ddc7919) vs once per stream operation (this change), cesm_TS, --chunk 1024,
# with the shell's environment and with 150 more variables; alternated rounds.
IN=/work/shared/datasets/cesm_TS_10x192x288.f32
# OLD: ddc7919 built in a worktree (cmake ... -DZCOLL_BUILD_TESTS=OFF; make zcoll-bench); NEW: this tree.
OLD=${OLD:-/tmp/oldtree/build/bench/zcoll-bench}; NEW=${NEW:-build-mpich/bench/zcoll-bench}
extra=(); for i in $(seq 1 150); do extra+=("ZCOLL_PAD_VAR_$i=some_value_of_a_batch_system_$i"); done
for r in $(seq 1 ${ROUNDS:-5}); do
  for envk in base padded; do
    for v in old new; do
      b=$OLD; [ $v = new ] && b=$NEW
      if [ $envk = padded ]; then pre=(env "${extra[@]}"); else pre=(); fi
      out=$("${pre[@]}" $b codec --input $IN --dtype f32 --eb-mode rel --eb 1e-4 --threads 1 --repeat 7 --chunk ${CHUNK:-1024} --json 2>/dev/null)
      echo "$r $envk $v $(echo "$out" | python3 -c 'import sys,json; d=json.load(sys.stdin); print(d["comp_gbps"], d["decomp_gbps"], d["compressed_bytes"])')"
    done
  done
done
