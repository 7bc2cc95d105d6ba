"""python3 same_path_parts.py RESULTS.jsonl[.xz]: in each cell of a study (run_auto_study.sh,
zcoll-bench with call_parts_s), AUTO's most frequent schedule against that schedule's own
column, over AUTO's calls from the 6th on that followed a call of the same schedule: the
median of the per-call ratios (AUTO's call i over the column's call i; the bench interleaves
them, so call i of each ran at about the same time), and each part's median in us (rank 0's
zcoll_stats), AUTO's / the column's."""
import collections, json, lzma, statistics as st, sys

f = sys.argv[1]
recs = [json.loads(l) for l in (lzma.open(f, "rt") if f.endswith(".xz") else open(f))]
cells = collections.defaultdict(dict)
for r in recs:
    cells[(r["rate"], r["op"], r["bytes_per_rank"])][r["algo"]] = r
names = ("setup", "compress", "comm", "decompress", "reduce")
for (rate, op, size), c in sorted(cells.items()):
    a = c.get("auto")
    P = a["call_paths"] if a else []
    counts = collections.Counter(p for p in P if p != "mpi")
    if not counts:
        continue
    path = counts.most_common(1)[0][0]
    col = c.get(path)
    idx = [i for i in range(5, len(P)) if P[i] == path and P[i - 1] == path]
    if not col or len(idx) < 10:
        continue
    A, B = a["call_times_s"], col["call_times_s"]
    med = lambda r, j: st.median(r["call_parts_s"][i][j] for i in idx) * 1e6
    print(f"{rate:6s} {op:14s} {size >> 20:3d} MiB {path:18s} n={len(idx):3d} paired "
          f"{st.median(A[i] / B[i] for i in idx):.3f}  "
          + " ".join(f"{n} {med(a, j):.0f}/{med(col, j):.0f}" for j, n in enumerate(names)))
