"""run.sh's lines: per codec and ISA, each field's median over the rounds, then the range
over the fields (ratio, compression and decompression GB/s)."""
import json, statistics, sys
from collections import defaultdict
cells = defaultdict(list)
for line in open(sys.argv[1]):
    d = json.loads(line)
    cells[(d["codec"], d["isa"], d["file"])].append(d)
runs = defaultdict(dict)
for (codec, isa, f), ds in cells.items():
    runs[(codec, isa)][f] = {k: statistics.median(d[k] for d in ds) for k in ("ratio", "comp", "decomp")}
print("| codec | kernels | fields | ratio | compress GB/s | decompress GB/s |")
print("|---|---|---|---|---|---|")
for (codec, isa), fs in runs.items():
    rng = lambda k: "%.2f-%.2f" % (min(v[k] for v in fs.values()), max(v[k] for v in fs.values()))
    print(f"| {codec} | {isa} | {len(fs)} | {rng('ratio')} | {rng('comp')} | {rng('decomp')} |")
