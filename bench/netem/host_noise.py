#!/usr/bin/env python3
"""Cells and host noise for the replay of AUTO's rules (tests/mpi/auto_noise_replay.cc).

Reads the results of AUTO studies (run_auto_study.sh's results.jsonl, plain or .xz) and
writes, for tests/mpi/zcoll_auto_noise_replay:
  cell NAME OP RANKS GBPS BYTES PATH=SECONDS ...   each fixed path's median call (plain MPI: mpi)
  noise V1 V2 ...                                  one fixed column's calls over its median
The noise rows are the host's as the study met it, in call order: its slow spells and its
single slow calls. The cells give each path its median time; the replay then times every
call as that median times the noise of the call's position (one row per simulated cell).

  python3 bench/netem/host_noise.py OUT STUDY_DIR_OR_FILE...
"""
import json
import lzma
import os
import statistics
import sys
from collections import defaultdict

SHM_GBPS = 100.0  # what the replay's link model takes shared memory for


def rows(path):
    if os.path.isdir(path):
        path = os.path.join(path, "results.jsonl.xz" if os.path.exists(os.path.join(path, "results.jsonl.xz"))
                            else "results.jsonl")
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as f:
        for line in f:
            if line.startswith("{"):
                yield json.loads(line)


def gbps(rate):
    if rate == "shm":
        return SHM_GBPS
    if not rate.endswith("gbit"):
        raise SystemExit(f"host_noise.py: rate {rate!r}: expected shm or NNgbit")
    return float(rate[:-4])


def main(argv):
    if len(argv) < 3:
        raise SystemExit(__doc__)
    cells = defaultdict(dict)
    noise = []
    for src in argv[2:]:
        field = os.path.basename(os.path.normpath(src))
        for r in rows(src):
            times = r.get("call_times_s") or []
            # AUTO's own column is what the replay plays; `zcoll` is a twin of a fixed path.
            if r["algo"] in ("auto", "zcoll") or len(times) < 10:
                continue
            ranks = r.get("link_ranks") or str(r["ranks"])
            name = f"{field}/{r['rate']}/{ranks}/{r['op']}/{r['bytes_per_rank'] >> 20}MiB"
            key = (name, r["op"], ranks, gbps(r["rate"]), r["bytes_per_rank"])
            med = statistics.median(times)
            cells[key][r["algo"].replace("-", "_")] = med
            noise.append([t / med for t in times])
    with open(argv[1], "w") as out:
        out.write(f"# {len(cells)} cells, {len(noise)} noise rows, from {' '.join(argv[2:])}\n")
        for (name, op, ranks, g, nbytes), paths in sorted(cells.items()):
            out.write(f"cell {name} {op} {ranks} {g:g} {nbytes} " +
                      " ".join(f"{p}={s:.6g}" for p, s in sorted(paths.items())) + "\n")
        for v in noise:
            out.write("noise " + " ".join(f"{x:.4f}" for x in v) + "\n")
    print(f"host_noise.py: {len(cells)} cells, {len(noise)} noise rows -> {argv[1]}")


if __name__ == "__main__":
    main(sys.argv)
