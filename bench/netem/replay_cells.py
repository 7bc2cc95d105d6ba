#!/usr/bin/env python3
"""A study's cells for the replay of AUTO's rules (tests/mpi/auto_study_replay.cc).

Reads the results of AUTO studies (run_auto_study.sh's results.jsonl, plain or .xz) and
writes, for tests/mpi/zcoll_auto_study_replay, each cell and its fixed columns:
  cell NAME OP RANKS GBPS BYTES
  path PATH T1 T2 ...      one fixed column's calls (s), in call order (plain MPI: mpi)
The columns were timed interleaved, call i of each path next to call i of the others, so
call i of every column met the same moment of the host: its slow spells, and each path's
own spread (a Bruck allgather at 1 Gbit/s whose calls take 1x or 2x). AUTO's own column and
the `zcoll` twin of a fixed path are left out.

  python3 bench/netem/replay_cells.py [--complete] OUT STUDY_DIR_OR_FILE...

--complete leaves out the cells with fewer columns than another cell of the same collective
and ranks: those of studies made before a path existed (a 2 x 2 reduce_scatter before the
node-aware one), which AUTO would now run and the replay has no times for.
"""
import json
import lzma
import os
import sys
from collections import defaultdict

SHM_GBPS = 100.0  # what the replay's link model takes shared memory for


def rows(path):
    if os.path.isdir(path):
        xz = os.path.join(path, "results.jsonl.xz")
        path = xz if os.path.exists(xz) else os.path.join(path, "results.jsonl")
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as f:
        for line in f:
            if line.startswith("{"):
                yield json.loads(line)


def gbps(rate):
    if rate == "shm":
        return SHM_GBPS
    if not rate.endswith("gbit"):
        raise SystemExit(f"replay_cells.py: rate {rate!r}: expected shm or NNgbit")
    return float(rate[:-4])


def main(argv):
    complete = len(argv) > 1 and argv[1] == "--complete"
    if complete:
        argv = argv[:1] + argv[2:]
    if len(argv) < 3:
        raise SystemExit(__doc__)
    # A cell is named by its study's folder. Where two studies would name a cell alike (a
    # field's two-rank studies of one build: auto_2rank/X and auto_2rank_cesm/X), both are
    # named by their parent folder too, or one's cells would take the other's columns.
    found = []  # per study: its folder, and per column (cell name without the folder, key, algo, times)
    for src in argv[2:]:
        got = []
        for r in rows(src):
            times = r.get("call_times_s") or []
            if r["algo"] in ("auto", "zcoll") or len(times) < 10:
                continue
            ranks = r.get("link_ranks") or str(r["ranks"])
            cell = f"{r['rate']}/{ranks}/{r['op']}/{r['bytes_per_rank'] >> 20}MiB"
            got.append((cell, (r["op"], ranks, gbps(r["rate"]), r["bytes_per_rank"]), r["algo"], times))
        found.append((os.path.normpath(src), got))
    owners = defaultdict(set)
    for src, got in found:
        for cell, *_ in got:
            owners[(os.path.basename(src), cell)].add(src)
    cells = defaultdict(dict)
    for src, got in found:
        shared = any(len(owners[(os.path.basename(src), cell)]) > 1 for cell, *_ in got)
        study = os.path.join(os.path.basename(os.path.dirname(src)), os.path.basename(src)) if shared else \
            os.path.basename(src)
        for cell, key, algo, times in got:
            cells[(f"{study}/{cell}",) + key][algo.replace("-", "_")] = times
    if complete:
        most = defaultdict(set)
        for (_, op, ranks, _, _), paths in cells.items():
            most[(op, ranks)] |= set(paths)
        cells = {k: v for k, v in cells.items() if set(v) == most[(k[1], k[2])]}
    with open(argv[1], "w") as out:
        out.write(f"# {len(cells)} cells from {' '.join(argv[2:])}\n")
        for (name, op, ranks, g, nbytes), paths in sorted(cells.items()):
            out.write(f"cell {name} {op} {ranks} {g:g} {nbytes}\n")
            for p, times in sorted(paths.items()):
                out.write(f"path {p} " + " ".join(f"{t:.6g}" for t in times) + "\n")
    print(f"replay_cells.py: {len(cells)} cells -> {argv[1]}")


if __name__ == "__main__":
    main(sys.argv)
