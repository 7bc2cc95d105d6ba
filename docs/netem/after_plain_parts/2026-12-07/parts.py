"""python3 parts.py [FILES...]: AUTO's compressed calls from the 6th on, split by what AUTO's
previous call ran (plain MPI, or the same schedule), each part's median (rank 0's
zcoll_stats: t_setup, t_compress, t_comm, t_decompress, t_reduce) and the call's (the slowest
rank's), in microseconds, pooled over the launches given (default launch-*.jsonl[.xz] here)."""
import glob, json, lzma, os, statistics as st, sys, collections

here = os.path.dirname(os.path.abspath(__file__))
files = sys.argv[1:] or sorted(glob.glob(os.path.join(here, "launch-*.jsonl*")))
names = ("setup", "compress", "comm", "decompress", "reduce")
groups = collections.defaultdict(lambda: {"after plain": [], "after itself": []})
for f in files:
    for line in (lzma.open(f, "rt") if f.endswith(".xz") else open(f)):
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        if r["algo"] != "auto":
            continue
        P, T, parts = r["call_paths"], r["call_times_s"], r["call_parts_s"]
        for i in range(5, len(P)):
            if P[i] == "mpi":
                continue
            key = "after plain" if P[i - 1] == "mpi" else "after itself" if P[i - 1] == P[i] else None
            if key:
                groups[(r["op"], P[i])][key].append([T[i]] + parts[i])
print(f"{len(files)} launches; per (collective, schedule): calls, then the medians in us: call | "
      + " ".join(names))
for (op, path), g in sorted(groups.items()):
    for key, rows in g.items():
        if len(rows) < 2:
            continue
        med = [st.median(x[j] for x in rows) * 1e6 for j in range(6)]
        print(f"{op:15s} {path:18s} {key:13s} n={len(rows):3d}  call {med[0]:7.0f} | "
              + " ".join(f"{n} {m:6.0f}" for n, m in zip(names, med[1:])))
