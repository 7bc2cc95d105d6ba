"""Paired summary of ab.sh's output: per field, best GB/s before -> after and the median
over rounds of after / before (each round runs both builds back to back)."""
import json, statistics, sys
from collections import defaultdict
rows = [json.loads(l) for l in open(sys.argv[1])]
by = defaultdict(dict)
for r in rows:
    by[(r["file"], r["round"])][r["build"]] = r
print("| field | ratio | compress GB/s, best | paired | decompress GB/s, best | paired |")
print("|---|---|---|---|---|---|")
for f in dict.fromkeys(r["file"] for r in rows):
    pairs = [v for (ff, _), v in sorted(by.items()) if ff == f and len(v) == 2]
    out = [f, "%.2f" % pairs[0]["after"]["ratio"]]
    for k in ("comp_gbps", "decomp_gbps"):
        best = {b: max(p[b][k] for p in pairs) for b in ("before", "after")}
        med = statistics.median(p["after"][k] / p["before"][k] for p in pairs)
        out += ["%.2f -> %.2f" % (best["before"], best["after"]), "%.3fx" % med]
    print("| " + " | ".join(out) + " |")
print("rounds:", len({k[1] for k in by}))
