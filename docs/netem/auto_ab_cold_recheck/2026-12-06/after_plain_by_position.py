"""A compressed call of AUTO right after a plain one, against one right after the same
schedule (same cell, same schedule), split by the call's position in the cell, with a null:
python3 after_plain_by_position.py [DIR]. summarize.py's 1.072 compared any schedule after a
plain call with any schedule after itself, from the cell's first call on. The bench interleaves
every path's calls, so the call before an AUTO call on the host was another column's; "after
a plain call" here means AUTO's own previous call ran plain MPI. The null: as many calls drawn
at random from the same cell's after-itself calls (200 draws, seed 1), the same statistic."""
import glob, json, lzma, os, random, statistics as st, sys

base = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
random.seed(1)

def cells(first):
    out = []
    for d in sorted(glob.glob(os.path.join(base, "*-*-[1-4]"))):
        with lzma.open(os.path.join(d, "results.jsonl.xz"), "rt") as f:
            for line in f:
                a = json.loads(line)
                if a["algo"] != "auto":
                    continue
                P, T = a["call_paths"], a["call_times_s"]
                for p in set(P) - {"mpi"}:
                    span = range(max(first, 1), len(P))
                    cold = [T[i] for i in span if P[i] == p and P[i - 1] == "mpi"]
                    warm = [T[i] for i in span if P[i] == p and P[i - 1] == p]
                    if len(cold) >= 2 and len(warm) >= 3:
                        out.append((cold, warm, a["bytes_per_rank"]))
    return out

for first in (1, 5, 20):  # 0-based index of the first call counted
    cs = cells(first)
    obs = st.median(st.median(c) / st.median(w) for c, w, _ in cs)
    null = sorted(st.median(st.median(random.sample(w, min(len(c), len(w)))) / st.median(w) for c, w, _ in cs)
                  for _ in range(200))
    print(f"calls {first + 1}-100: {len(cs)} cells (schedule, >= 2 calls after plain, >= 3 after "
          f"itself); after plain / after itself, median over cells {obs:.3f}; null median {st.median(null):.3f}, "
          f"97.5th percentile {null[194]:.3f}; null draws >= observed: {sum(x >= obs for x in null)} of 200")

# By size, from call 6 on: a fixed cost shows as a ratio that falls with the size.
cs = cells(5)
for size in sorted({b for _, _, b in cs}):
    sel = [(c, w) for c, w, b in cs if b == size]
    print(f"calls 6-100, {size >> 20} MiB: {len(sel)} cells, after plain / after itself "
          f"{st.median(st.median(c) / st.median(w) for c, w in sel):.3f}, difference of the medians "
          f"{st.median((st.median(c) - st.median(w)) * 1e6 for c, w in sel):.0f} us (median over cells)")
