"""The A/B of docs/netem/auto_ab_cold_recheck: python3 summarize.py [DIR]. Per field and build:
AUTO over the best fixed path (median of the timed calls, and all calls), pooled over the four
rounds; AUTO's plain calls in cells where the best compressed path beat plain MPI by over 5%;
and a compressed call's time right after a plain call over one right after its own path."""
import json, lzma, math, os, statistics as st, sys, collections

base = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))

def table(d):
    rows = {}
    for l in open(os.path.join(d, "auto_vs_best.md")):
        if l.startswith("| 10gbit"):
            c = [x.strip() for x in l.strip().strip("|").split("|")]
            rows[(c[2], c[4])] = (float(c[10]), float(c[11]))
    return rows

def records(d):
    with lzma.open(os.path.join(d, "results.jsonl.xz"), "rt") as f:
        return [json.loads(l) for l in f]

cold_warm = []
for field in ("cesm", "nyx"):
    for v in ("new", "old"):
        dirs = [os.path.join(base, f"{field}-{v}-{r}") for r in (1, 2, 3, 4)]
        for i, name in ((0, "median of calls"), (1, "all calls")):
            vals = [row[i] for d in dirs for row in table(d).values()]
            print(f"{field} {v} {name}: {sum(x <= 1.05 for x in vals)} of {len(vals)} within 1.05x, "
                  f"geomean {math.exp(sum(map(math.log, vals)) / len(vals)):.3f}, worst {max(vals):.3f}")
        cells = plain = 0
        for d in dirs:
            by = collections.defaultdict(dict)
            for r in records(d):
                by[(r["op"], r["bytes_per_rank"])][r["algo"]] = r
            for c in by.values():
                mpi = st.median(c["mpi"]["call_times_s"])
                best = min(st.median(r["call_times_s"]) for a, r in c.items() if a not in ("auto", "mpi"))
                a = c["auto"]
                P, T = a["call_paths"], a["call_times_s"]
                cold = [T[i] for i in range(1, len(P)) if P[i] != "mpi" and P[i - 1] == "mpi"]
                warm = [T[i] for i in range(1, len(P)) if P[i] != "mpi" and P[i - 1] == P[i]]
                if len(cold) >= 3 and len(warm) >= 3:
                    cold_warm.append(st.median(cold) / st.median(warm))
                if best < 0.95 * mpi:
                    cells += 1
                    plain += sum(p == "mpi" for p in P)
        print(f"{field} {v}: {plain} plain calls of AUTO in the {cells} cells where compression beat plain MPI by >5%")
cold_warm.sort()
n = len(cold_warm)
print(f"after a plain call / after its own path (cells with >= 3 of each, both builds): {n} cells, median "
      f"{st.median(cold_warm):.3f}, quartiles {cold_warm[n // 4]:.3f}-{cold_warm[3 * n // 4]:.3f}, "
      f"range {cold_warm[0]:.2f}-{cold_warm[-1]:.2f}")
