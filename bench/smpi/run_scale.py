#!/usr/bin/env python3
"""Scale study of zcoll's collectives on a SIMULATED 100 Gbit/s cluster (SimGrid SMPI).

For every node count and op, one `smpirun` launch of `zcoll-bench coll` (built with smpicc,
see build.sh) runs every size x algorithm of that op on a cluster written by make_platform.py:
N hosts, one rank each, 100 Gbit/s full-duplex links, ~1 us, one non-blocking switch (seed
000's Omni-Path testbed). Each result is zcoll-bench's JSON line plus the keys added here
(nodes, simulated, platform, host_speed, smpi_cfg, launch_wall_s), appended to
OUT/scale.jsonl. Then OUT/scale.png (speedup over plain MPI against node count, one panel per
op, one line per algorithm and size, like seed 000's figure 13), OUT/breakdown.png (time split
at the largest node count) and OUT/scale_table.md are written. `--plot-only` redraws them.

Compute is charged at this machine's speed: SMPI times every stretch of the program between
two MPI calls with the thread's CPU clock and charges it as flops = seconds x smpi/host-speed
on a host whose speed is the platform's; both are --speed (default 1Gf), so a compute stretch
costs the simulated host exactly the CPU time it took here. Only one core is ever used (all
ranks run one after the other in this one process), so compression is single-threaded
(--threads 1, OMP_NUM_THREADS=1).

Sizes (--plan): OP=SIZE[@MAXNODES],...;OP=... A size with @MAXNODES runs only up to that many
nodes: all ranks live in this one process (memory), and the reductions' exact reference costs
p^2 x count element visits in total (each rank reduces every rank's input in double).

  .venv/bin/python bench/smpi/run_scale.py --build build-smpi --out bench/smpi/results
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from results_io import append_results  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
OPS = ["allreduce", "bcast", "scatter", "allgather", "alltoall"]
DEFAULT_PLAN = "allreduce=4M,16M;bcast=4M,16M;scatter=4M,16M@32;allgather=1M,4M@16"


def default_input():
    shared = os.path.join(ROOT, "..", "shared", "datasets", "nyx_phigrav_128x128x128.f64")
    return os.path.abspath(shared) if os.path.exists(shared) else os.path.join(ROOT, "data", "turb_wmag_91x91x91.f32")


def parse_size(s):
    m = re.fullmatch(r"(\d+)([KMG]?)", s.strip().upper())
    if not m:
        sys.exit(f"run_scale: bad size {s!r}")
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]


def parse_plan(text):
    """{op: [(size_text, bytes, max_nodes or None)]}"""
    plan = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        op, _, sizes = part.partition("=")
        items = []
        for item in filter(None, sizes.split(",")):
            size, _, cap = item.partition("@")
            items.append((size.strip(), parse_size(size), int(cap) if cap else None))
        plan[op.strip()] = items
    return plan


def mem_estimate_gib(op, p, n):
    """Rough resident size of one launch (all ranks): per rank the field (<= 16 MiB) and the
    binary, plus the op's buffers (zcoll-bench's input/reference/result, zcoll's staging)."""
    base = 24 << 20
    per_rank = {"allreduce": 4 * n, "bcast": 3 * n, "scatter": 3 * n + 2 * n, "allgather": 3 * p * n,
                "alltoall": 3 * p * n}[op]  # alltoall: 4 MiB on 64 ranks passed 23 GiB
    return p * (base + per_rank) / 2**30


def run_study(args, out_jsonl, log_dir):
    bench = os.path.join(os.path.abspath(args.build), "bench", "zcoll-bench")
    if not os.path.isfile(bench):
        sys.exit(f"run_scale: {bench} not built (bash bench/smpi/build.sh)")
    smpirun = shutil.which("smpirun")
    if not smpirun:
        sys.exit("run_scale: smpirun not found (Debian: apt-get install libsimgrid-dev)")
    plan = parse_plan(args.plan)
    ops = [op for op in args.ops.split(",") if op]
    plat_dir = os.path.join(log_dir, "platforms")
    os.makedirs(plat_dir, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    smpi_cfg = [f"--cfg=smpi/host-speed:{args.speed}", "--cfg=smpi/coll-selector:ompi",
                "--cfg=smpi/display-timing:yes", f"--cfg=smpi/test:{args.test_cost}"]
    if args.net_factors == "ideal":
        smpi_cfg += ["--cfg=smpi/bw-factor:0:1", "--cfg=smpi/lat-factor:0:1"]
    quiet = ["--log=smpi_colls.thres:warning", "--log=smpi_coll.thres:warning", "--log=xbt_cfg.thres:warning"]
    t_start = time.time()
    failures = 0
    for nodes in (int(x) for x in args.nodes.split(",")):
        platform = os.path.join(plat_dir, f"cluster_{nodes}.xml")
        hostfile = os.path.join(plat_dir, f"hosts_{nodes}.txt")
        subprocess.run([sys.executable, os.path.join(HERE, "make_platform.py"), "--nodes", str(nodes), "--bw", args.bw,
                        "--lat", args.lat, "--speed", args.speed, "--out", platform, "--hostfile", hostfile], check=True)
        for op in ops:
            sizes = []
            for text, nbytes, cap in plan.get(op, []):
                if cap is not None and nodes > cap:
                    print(f"run_scale: {nodes} nodes {op} {text}: skipped (plan: up to {cap} nodes)", file=sys.stderr)
                    continue
                gib = mem_estimate_gib(op, nodes, nbytes)
                if gib > args.mem_gib:
                    print(f"run_scale: {nodes} nodes {op} {text}: skipped (about {gib:.1f} GiB > --mem-gib "
                          f"{args.mem_gib})", file=sys.stderr)
                    continue
                sizes.append(text)
            if not sizes:
                continue
            elapsed = time.time() - t_start
            if elapsed > args.budget_s:
                print(f"run_scale: {nodes} nodes {op} {','.join(sizes)}: not run, wall-time budget of "
                      f"{args.budget_s} s spent ({elapsed:.0f} s)", file=sys.stderr)
                failures += 1
                continue
            cmd = ["timeout", str(args.timeout), smpirun, "-np", str(nodes), "-platform", platform, "-hostfile",
                   hostfile, *smpi_cfg, *quiet, bench, "coll", "--op", op, "--input", args.input, "--eb-mode",
                   "rel", "--eb", str(args.eb), "--bytes", ",".join(sizes), "--algo", args.algos, "--threads", "1",
                   "--iters", str(args.iters), "--warmup", str(args.warmup), "--json"]
            print(f"run_scale: {nodes} nodes {op} {','.join(sizes)}: {' '.join(cmd)}", file=sys.stderr, flush=True)
            log_path = os.path.join(log_dir, f"n{nodes}_{op}_{'_'.join(sizes)}.log")
            t0 = time.time()
            with open(log_path, "w") as log:
                proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=log, text=True, env=env)
            wall = time.time() - t0
            log_text = open(log_path).read()
            sim = re.search(r"Simulated time: ([0-9.e+-]+) seconds", log_text)
            took = re.search(r"The simulation took ([0-9.e+-]+) seconds", log_text)
            comp = re.search(r"([0-9.e+-]+) seconds were actual computation", log_text)
            got = append_results(proc.stdout, out_jsonl, nodes=nodes, simulated=True,
                                 platform=f"{nodes} hosts, {args.bw} links, {args.lat} per link, non-blocking switch",
                                 net_factors=args.net_factors, host_speed=args.speed,
                                 charged="smpi/host-speed = host speed: simulated compute = this machine's CPU time",
                                 smpi_cfg=" ".join(smpi_cfg), launch_wall_s=round(wall, 1))
            print(f"run_scale: {nodes} nodes {op}: {got} results, exit {proc.returncode}, wall {wall:.0f} s "
                  f"(simulated {sim.group(1) if sim else '?'} s; application compute "
                  f"{comp.group(1) if comp else '?'} s of {took.group(1) if took else '?'} s); total "
                  f"{time.time() - t_start:.0f} s; log {log_path}", file=sys.stderr, flush=True)
            failures += proc.returncode != 0
    return failures


def load(out_jsonl):
    recs = [json.loads(line) for line in open(out_jsonl) if line.strip()]
    # A configuration measured twice (a rerun): keep the latest.
    latest = {}
    for r in recs:
        latest[(r["op"], r["nodes"], r["bytes_per_rank"], r["algo"])] = r
    return list(latest.values())


def size_label(nbytes):
    return f"{nbytes / 2**20:g} MiB" if nbytes >= 2**20 else f"{nbytes / 2**10:g} KiB"


TITLE = ("SIMULATED with SimGrid SMPI 3.32: {bw} links, ~1 us, non-blocking switch, one rank per node; "
         "single-thread compression,\ncompute charged at this machine's measured CPU time "
         "(smpi/host-speed = host speed = {speed}); field {field}, REL {eb:g}")


def plot(out_dir, recs):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    ops = [op for op in OPS if any(r["op"] == op for r in recs)]
    if not ops:
        return written
    first = recs[0]
    title = TITLE.format(bw=first["platform"].split(", ")[1].replace(" links", ""), speed=first["host_speed"],
                         field=os.path.basename(first["input"]), eb=first["eb"])
    sizes = sorted({r["bytes_per_rank"] for r in recs})
    colors = {s: plt.cm.viridis(i / max(1, len(sizes) - 1) * 0.85) for i, s in enumerate(sizes)}
    styles = {"zcoll": ("-", "o"), "cprp2p": ("--", "s")}
    cols = 2 if len(ops) > 2 else len(ops)
    rows = (len(ops) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 4.2 * rows), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[len(ops):]:
        ax.set_visible(False)
    for ax, op in zip(flat, ops):
        lines = {}
        for r in recs:
            if r["op"] == op and r["algo"] != "mpi":
                lines.setdefault((r["algo"], r["bytes_per_rank"]), []).append((r["nodes"], r["speedup_vs_mpi"]))
        for (algo, nbytes), pts in sorted(lines.items(), key=lambda kv: (kv[0][0] != "zcoll", kv[0][1])):
            pts.sort()
            ls, mk = styles.get(algo, (":", "^"))
            ax.plot([p[0] for p in pts], [p[1] for p in pts], ls=ls, marker=mk, color=colors[nbytes],
                    label=f"{algo}, {size_label(nbytes)}/rank")
        ax.axhline(1.0, color="grey", lw=0.8, ls="--")
        ax.set_xscale("log", base=2)
        nodes = sorted({r["nodes"] for r in recs if r["op"] == op})
        ax.set_xticks(nodes)
        ax.set_xticklabels([str(n) for n in nodes])
        ax.set_title(f"{op} (simulated)")
        ax.set_xlabel("nodes (simulated)")
        ax.set_ylim(0, max(1.1, 1.1 * max((p[1] for pts in lines.values() for p in pts), default=1)))
        ax.set_ylabel("speedup over plain MPI (simulated)")
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=8)
    fig.tight_layout()
    path = os.path.join(out_dir, "scale.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    written.append(path)

    # Where the time goes at the largest node count each op reached, largest size there.
    parts = [("t_compress_s", "compression"), ("t_comm_s", "communication"), ("t_reduce_s", "reduction"),
             ("t_decompress_s", "decompression")]
    fig, axes = plt.subplots(1, len(ops), figsize=(3.4 * len(ops), 3.8), squeeze=False)
    for ax, op in zip(axes[0], ops):
        sel = [r for r in recs if r["op"] == op]
        top = max(r["nodes"] for r in sel)
        sel = [r for r in sel if r["nodes"] == top]
        big = max(r["bytes_per_rank"] for r in sel)
        sel = sorted((r for r in sel if r["bytes_per_rank"] == big), key=lambda r: ["mpi", "zcoll"].index(r["algo"])
                     if r["algo"] in ("mpi", "zcoll") else 2)
        names = [r["algo"] for r in sel]
        bottom = [0.0] * len(sel)
        for key, name in parts:
            vals = [1e3 * (r.get(key, 0.0) if r["algo"] != "mpi" else (r["time_s"] if key == "t_comm_s" else 0.0))
                    for r in sel]
            ax.bar(names, vals, bottom=bottom, label=name)
            bottom = [b + v for b, v in zip(bottom, vals)]
        other = [max(0.0, 1e3 * r["time_s"] - b) for r, b in zip(sel, bottom)]
        ax.bar(names, other, bottom=bottom, label="other")
        ax.set_title(f"{op}, {top} nodes, {size_label(big)}/rank", fontsize=9)
    axes[0][0].set_ylabel("simulated ms (parts: slowest rank each)")
    axes[0][-1].legend(fontsize=7)
    fig.suptitle("SIMULATED time split (SimGrid SMPI; compute = this machine's CPU time, single thread)", fontsize=9)
    fig.tight_layout()
    path = os.path.join(out_dir, "breakdown.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    written.append(path)
    return written


def table(recs):
    head = ("| op | MiB/rank | nodes | algo (ran) | MPI s | algo s | speedup | ratio | compress s | reduce s "
            "| decompress s | max_err/eb (bound) |")
    rows = [head, "|" + "---|" * 12]
    order = {op: i for i, op in enumerate(OPS)}
    algo_order = {"mpi": 0, "zcoll": 1, "cprp2p": 2}
    for r in sorted(recs, key=lambda r: (order.get(r["op"], 99), r["bytes_per_rank"], r["nodes"],
                                         algo_order.get(r["algo"], 9))):
        rows.append(f"| {r['op']} | {r['bytes_per_rank'] / 2**20:g} | {r['nodes']} | {r['algo']} ({r['algo_ran']}) "
                    f"| {r['time_mpi_s']:.5f} | {r['time_s']:.5f} | {r['speedup_vs_mpi']:.3f} | {r['ratio']:.2f} "
                    f"| {r['t_compress_s']:.5f} | {r['t_reduce_s']:.5f} | {r['t_decompress_s']:.5f} "
                    f"| {r['max_err_over_eb']:.3f} ({r['bound_over_eb']:.0f}) |")
    return "\n".join(rows) + "\n"


def pivot(recs):
    """Speedup over plain MPI per (op, size, algorithm) and node count, and plain MPI's time."""
    nodes = sorted({r["nodes"] for r in recs})
    order = {op: i for i, op in enumerate(OPS)}
    algo_order = {"mpi": 0, "zcoll": 1, "cprp2p": 2}
    cells = {}
    for r in recs:
        key = (order.get(r["op"], 99), r["op"], r["bytes_per_rank"], algo_order.get(r["algo"], 9), r["algo"])
        cells.setdefault(key, {})[r["nodes"]] = (
            f"{1e3 * r['time_s']:.2f} ms" if r["algo"] == "mpi" else f"{r['speedup_vs_mpi']:.3f}x")
    rows = ["| op | MiB/rank | algo | " + " | ".join(f"{n} nodes" for n in nodes) + " |",
            "|" + "---|" * (3 + len(nodes))]
    for key in sorted(cells):
        _, op, nbytes, _, algo = key
        what = "plain MPI time" if algo == "mpi" else f"{algo} speedup"
        rows.append(f"| {op} | {nbytes / 2**20:g} | {what} | " +
                    " | ".join(cells[key].get(n, "-") for n in nodes) + " |")
    return "\n".join(rows) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build-smpi"), help="smpicc build dir (bench/smpi/build.sh)")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--nodes", default="8,16,32,64")
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--algos", default="mpi,zcoll,cprp2p")
    ap.add_argument("--plan", default=DEFAULT_PLAN, help=f"sizes per op (default {DEFAULT_PLAN})")
    ap.add_argument("--test-cost", default="1e-6",
                    help="simulated seconds charged for each MPI_Test/Testall (smpi/test; default 1e-6; SMPI's "
                         "own default 1e-4 makes every poll between two pieces cost 100 us)")
    ap.add_argument("--input", default=default_input())
    ap.add_argument("--eb", type=float, default=1e-4, help="REL error bound (default 1e-4)")
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--bw", default="100Gbps")
    ap.add_argument("--lat", default="0.5us", help="per host link; a route crosses two (default 0.5us)")
    ap.add_argument("--speed", default="1Gf", help="host speed = smpi/host-speed (default 1Gf)")
    ap.add_argument("--net-factors", choices=["ideal", "smpi-default"], default="ideal",
                    help="ideal: smpi/bw-factor and lat-factor 1 (links deliver exactly --bw and --lat); "
                         "smpi-default: SMPI's calibrated piecewise factors (default ideal)")
    ap.add_argument("--mem-gib", type=float, default=18.0, help="skip launches estimated above this (default 18)")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per launch (default 1800)")
    ap.add_argument("--budget-s", type=int, default=2400, help="start no launch after this much wall time")
    ap.add_argument("--plot-only", action="store_true")
    ap.add_argument("--fresh", action="store_true", help="start a new scale.jsonl instead of appending")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    out_jsonl = os.path.join(args.out, "scale.jsonl")
    failures = 0
    if not args.plot_only:
        if args.fresh and os.path.exists(out_jsonl):
            os.remove(out_jsonl)
        failures = run_study(args, out_jsonl, os.path.join(args.out, "logs"))
    recs = load(out_jsonl)
    for p in plot(args.out, recs):
        print(f"run_scale: wrote {p}", file=sys.stderr)
    with open(os.path.join(args.out, "scale_table.md"), "w") as f:
        f.write("SIMULATED (SimGrid SMPI 3.32); compute charged at this machine's measured CPU time.\n\n")
        f.write(pivot(recs) + "\n")
        f.write(table(recs))
    print(pivot(recs))
    print(table(recs))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
