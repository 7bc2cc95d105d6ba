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

Multi-thread codec, modelled (--effective-threads E): the compressed algorithms run in their
own launch on hosts E times faster than smpi/host-speed, so every compute stretch of that
launch costs 1/E of the CPU time it took here: codec work on E threads with perfect scaling
(E = min(threads, memory-bandwidth cap); README.md says how E was derived). The baselines
(mpi, plainring, plain-hierarchical) run in another launch at factor 1: a real MPI reduces on
one thread. plain-hierarchical (allreduce, bcast, allgather, reduce_scatter, reduce) is zcoll's node-aware schedule
without compression (ZCOLL_ALGO_PLAIN_HIERARCHICAL).
plainring (allreduce only) is zcoll-bench's uncompressed ring allreduce with its reduction
loop executed and therefore charged; SMPI's own MPI_Allreduce charges no reduction.
--ranks-per-node R puts R ranks on each host (R cores, loopback between them); the
effective thread count is then per rank. --bench-ranks N times the collectives on the first
N ranks only (zcoll-bench coll --ranks N), so that the last host has fewer: nodes of
different sizes.
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
from results_io import append_results, save_figure  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
OPS = ["allreduce", "reduce_scatter", "bcast", "scatter", "allgather", "alltoall"]
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


BASELINES = ("mpi", "plainring", "plain-hierarchical")
# The ops each baseline other than plain MPI has.
BASELINE_OPS = {"plainring": ("allreduce",), "plain-hierarchical": ("allreduce", "bcast", "allgather", "reduce_scatter", "reduce")}


def mem_estimate_gib(op, p, n):
    """Rough resident size of one launch (all ranks): per rank the field (<= 16 MiB) and the
    binary, plus the op's buffers (zcoll-bench's input/reference/result, zcoll's staging)."""
    base = 24 << 20
    per_rank = {"allreduce": 4 * n, "reduce_scatter": 4 * n, "bcast": 3 * n, "scatter": 3 * n + 2 * n,
                "allgather": 3 * p * n, "alltoall": 3 * p * n}[op]  # alltoall: 4 MiB on 64 ranks passed 23 GiB
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
    if args.ranks_per_node < 1 or args.effective_threads < 1:
        sys.exit("run_scale: --ranks-per-node and --effective-threads must be at least 1")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    smpi_cfg = [f"--cfg=smpi/host-speed:{args.speed}", "--cfg=smpi/coll-selector:ompi",
                "--cfg=smpi/display-timing:yes", f"--cfg=smpi/test:{args.test_cost}"]
    for item in filter(None, args.smpi_coll.split(",")):
        coll, _, algo = item.partition("=")
        smpi_cfg.append(f"--cfg=smpi/{coll.strip()}:{algo.strip()}")
    if args.net_factors == "ideal":
        smpi_cfg += ["--cfg=smpi/bw-factor:0:1", "--cfg=smpi/lat-factor:0:1"]
    quiet = ["--log=smpi_colls.thres:warning", "--log=smpi_coll.thres:warning", "--log=xbt_cfg.thres:warning"]
    t_start = time.time()
    failures = 0
    rpn = args.ranks_per_node
    algos = [a for a in args.algos.split(",") if a]
    speed_val, speed_unit = re.fullmatch(r"([0-9.]+)(\D*)", args.speed).groups()
    for nodes in (int(x) for x in args.nodes.split(",")):
        ranks = nodes * rpn
        for op in ops:
            sizes = []
            for text, nbytes, cap in plan.get(op, []):
                if cap is not None and nodes > cap:
                    print(f"run_scale: {nodes} nodes {op} {text}: skipped (plan: up to {cap} nodes)", file=sys.stderr)
                    continue
                gib = mem_estimate_gib(op, ranks, nbytes)
                if gib > args.mem_gib:
                    print(f"run_scale: {nodes} nodes {op} {text}: skipped (about {gib:.1f} GiB > --mem-gib "
                          f"{args.mem_gib})", file=sys.stderr)
                    continue
                sizes.append(text)
            if not sizes:
                continue
            # Launches: the baselines at host speed factor 1 (each only where it applies; plain
            # MPI alone only if no compressed algorithm runs, since every launch times it first
            # anyway), the compressed algorithms at factor E.
            base = [a for a in algos if a in BASELINES and op in BASELINE_OPS.get(a, (op,))]
            comp = [a for a in algos if a not in BASELINES]
            launches = []
            if any(a != "mpi" for a in base) or not comp:
                launches.append((base, 1))
            if comp:
                launches.append((comp, args.effective_threads))
            for launch_algos, factor in launches:
                elapsed = time.time() - t_start
                if elapsed > args.budget_s:
                    print(f"run_scale: {nodes} nodes {op} {','.join(sizes)}: not run, wall-time budget of "
                          f"{args.budget_s} s spent ({elapsed:.0f} s)", file=sys.stderr)
                    failures += 1
                    continue
                host_speed = f"{float(speed_val) * factor:g}{speed_unit}"
                tag = f"n{nodes}{f'x{rpn}' if rpn > 1 else ''}_E{factor}"
                platform = os.path.join(plat_dir, f"cluster_{tag}.xml")
                hostfile = os.path.join(plat_dir, f"hosts_{tag}.txt")
                subprocess.run([sys.executable, os.path.join(HERE, "make_platform.py"), "--nodes", str(nodes),
                                "--ranks-per-node", str(rpn), "--loopback-bw", args.loopback_bw, "--loopback-lat",
                                args.loopback_lat, "--bw", args.bw, "--lat", args.lat, "--speed", host_speed, "--out",
                                platform, "--hostfile", hostfile], check=True)
                cmd = ["timeout", str(args.timeout), smpirun, "-np", str(ranks), "-platform", platform, "-hostfile",
                       hostfile, *smpi_cfg, *quiet, bench, "coll", "--op", op, "--input", args.input, "--eb-mode",
                       "rel", "--eb", str(args.eb), "--bytes", ",".join(sizes), "--algo", ",".join(launch_algos),
                       "--threads", "1", "--iters", str(args.iters), "--warmup", str(args.warmup),
                       "--check-stride", str(args.check_stride), "--chunk", str(args.chunk_len), "--json"]
                if args.bench_ranks:
                    cmd += ["--ranks", str(args.bench_ranks)]
                print(f"run_scale: {nodes} nodes x {rpn} {op} {','.join(sizes)} E={factor}: {' '.join(cmd)}",
                      file=sys.stderr, flush=True)
                log_path = os.path.join(log_dir, f"{tag}_{op}_{'_'.join(sizes)}.log")
                t0 = time.time()
                with open(log_path, "w") as log:
                    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=log, text=True, env=env)
                wall = time.time() - t0
                log_text = open(log_path).read()
                sim = re.search(r"Simulated time: ([0-9.e+-]+) seconds", log_text)
                took = re.search(r"The simulation took ([0-9.e+-]+) seconds", log_text)
                cpu = re.search(r"([0-9.e+-]+) seconds were actual computation", log_text)
                charged = ("smpi/host-speed = host speed: simulated compute = this machine's CPU time" if factor == 1
                           else f"host speed = {factor} x smpi/host-speed: simulated compute = this machine's "
                                f"single-thread CPU time / {factor} (effective threads, modelled)")
                got = append_results(proc.stdout, out_jsonl, nodes=nodes, ranks_per_node=rpn, simulated=True,
                                     bench_ranks=args.bench_ranks or ranks,
                                     platform=f"{nodes} hosts, {args.bw} links, {args.lat} per link, non-blocking "
                                              f"switch, {rpn} rank(s) per host"
                                              + (f" (loopback {args.loopback_bw}, {args.loopback_lat})" if rpn > 1
                                                 else ""),
                                     net_factors=args.net_factors, host_speed=host_speed, smpi_host_speed=args.speed,
                                     effective_threads=factor, charged=charged, smpi_cfg=" ".join(smpi_cfg),
                                     launch_wall_s=round(wall, 1), load1=os.getloadavg()[0])
                print(f"run_scale: {nodes} nodes x {rpn} {op} E={factor}: {got} results, exit {proc.returncode}, "
                      f"wall {wall:.0f} s (simulated {sim.group(1) if sim else '?'} s; application compute "
                      f"{cpu.group(1) if cpu else '?'} s of {took.group(1) if took else '?'} s); total "
                      f"{time.time() - t_start:.0f} s; log {log_path}", file=sys.stderr, flush=True)
                failures += proc.returncode != 0
    return failures


def load(out_jsonl):
    recs = [json.loads(line) for line in open(out_jsonl) if line.strip()]
    # A configuration measured twice (a rerun): keep the latest.
    latest = {}
    for r in recs:
        latest[(r["op"], r["nodes"], r.get("ranks_per_node", 1), r["bytes_per_rank"], r["algo"],
                r.get("effective_threads", 1))] = r
    recs = list(latest.values())
    # Speedup over the second baselines (same op, nodes, ranks per node, size) where they ran.
    for base in ("plainring", "plain-hierarchical"):
        key = base.replace("-", "_")
        times = {(r["op"], r["nodes"], r.get("ranks_per_node", 1), r["bytes_per_rank"]): r["time_s"] for r in recs
                 if r["algo"] == base}
        for r in recs:
            t = times.get((r["op"], r["nodes"], r.get("ranks_per_node", 1), r["bytes_per_rank"]))
            r[f"time_{key}_s"] = t
            r[f"speedup_vs_{key}"] = t / r["time_s"] if t and r["time_s"] > 0 else None
    return recs


def size_label(nbytes):
    return f"{nbytes / 2**20:g} MiB" if nbytes >= 2**20 else f"{nbytes / 2**10:g} KiB"


TITLE = ("SIMULATED with SimGrid SMPI 3.32: {bw} links, ~1 us, non-blocking switch; compressed algorithms' compute "
         "charged at this machine's\nsingle-thread CPU time / E (E = modelled effective codec threads); baselines at "
         "factor 1; field {field}, REL {eb:g}")


def plot(out_dir, recs):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    ops = [op for op in OPS if any(r["op"] == op for r in recs)]
    if not ops:
        return written
    first = recs[0]
    title = TITLE.format(bw=first["platform"].split(", ")[1].replace(" links", ""),
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
    max_e = max(r.get("effective_threads", 1) for r in recs)
    for ax, op in zip(flat, ops):
        lines = {}
        for r in recs:
            if r["op"] == op and r["algo"] not in BASELINES:
                rpn = r.get("ranks_per_node", 1)
                tag = f"{r['algo']} E={r.get('effective_threads', 1)}" + (f", {rpn}/node" if rpn > 1 else "")
                lines.setdefault((tag, r["bytes_per_rank"]), []).append((r["nodes"], r["speedup_vs_mpi"]))
                if r.get("speedup_vs_plainring"):
                    lines.setdefault((tag + " vs plainring", r["bytes_per_rank"]), []).append(
                        (r["nodes"], r["speedup_vs_plainring"]))
        for (algo, nbytes), pts in sorted(lines.items(), key=lambda kv: (not kv[0][0].startswith("zcoll"), kv[0][1])):
            pts.sort()
            ls, mk = (":", "^") if "vs plainring" in algo else styles.get(algo.split(" ")[0], ("-.", "v"))
            e_tag = re.search(r"E=(\d+)", algo)
            if e_tag and int(e_tag.group(1)) != max_e:  # a second effective thread count: hollow markers
                mk = "s" if "vs plainring" not in algo else "v"
                ls = "--" if "vs plainring" not in algo else ":"
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
        ax.set_ylabel("speedup (simulated; dotted: over plainring)")
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=8)
    fig.tight_layout()
    path = os.path.join(out_dir, "scale.png")
    save_figure(fig, path, dpi=120)
    plt.close(fig)
    written.append(path)

    # Where the time goes at the largest node count each op reached, largest size there.
    parts = [("t_setup_s", "range pass, agreement"), ("t_compress_s", "compression"),
             ("t_comm_s", "communication"), ("t_reduce_s", "reduction"), ("t_decompress_s", "decompression")]
    fig, axes = plt.subplots(1, len(ops), figsize=(3.4 * len(ops), 3.8), squeeze=False)
    for ax, op in zip(axes[0], ops):
        sel = [r for r in recs if r["op"] == op and r.get("ranks_per_node", 1) == 1] or \
            [r for r in recs if r["op"] == op]
        top = max(r["nodes"] for r in sel)
        sel = [r for r in sel if r["nodes"] == top]
        big = max(r["bytes_per_rank"] for r in sel)
        sel = sorted((r for r in sel if r["bytes_per_rank"] == big),
                     key=lambda r: (["mpi", "plainring", "zcoll"].index(r["algo"])
                                    if r["algo"] in ("mpi", "plainring", "zcoll") else 3, -r.get("effective_threads", 1)))
        names = [r["algo"] if r["algo"] in BASELINES else f"{r['algo']} E={r.get('effective_threads', 1)}" for r in sel]
        bottom = [0.0] * len(sel)
        for key, name in parts:
            vals = [1e3 * (r.get(key, 0.0) if r["algo"] not in BASELINES else (r["time_s"] if key == "t_comm_s" else 0.0))
                    for r in sel]
            ax.bar(names, vals, bottom=bottom, label=name)
            bottom = [b + v for b, v in zip(bottom, vals)]
        other = [max(0.0, 1e3 * r["time_s"] - b) for r, b in zip(sel, bottom)]
        ax.bar(names, other, bottom=bottom, label="other")
        ax.set_title(f"{op}, {top} nodes, {size_label(big)}/rank", fontsize=9)
        ax.tick_params(axis="x", labelsize=7)
    axes[0][0].set_ylabel("simulated ms (parts: slowest rank each)")
    axes[0][-1].legend(fontsize=7)
    fig.suptitle("SIMULATED time split (SimGrid SMPI; compute = this machine's single-thread CPU time / E; "
                 "baselines: all of it as communication)", fontsize=8)
    fig.tight_layout()
    path = os.path.join(out_dir, "breakdown.png")
    save_figure(fig, path, dpi=110)
    plt.close(fig)
    written.append(path)
    return written


def table(recs):
    head = ("| op | MiB/rank | nodes | ranks/node | algo (ran) | E | MPI s | plainring s | algo s | vs MPI | vs plainring "
            "| ratio | compress s | reduce s | decompress s | max_err/eb (bound) |")
    rows = [head, "|" + "---|" * 16]
    order = {op: i for i, op in enumerate(OPS)}
    algo_order = {"mpi": 0, "plainring": 1, "zcoll": 2, "cprp2p": 3}
    for r in sorted(recs, key=lambda r: (order.get(r["op"], 99), r["bytes_per_rank"], r.get("ranks_per_node", 1),
                                         r["nodes"], algo_order.get(r["algo"], 9))):
        ring = r.get("time_plainring_s")
        vs_ring = r.get("speedup_vs_plainring")
        rows.append(f"| {r['op']} | {r['bytes_per_rank'] / 2**20:g} | {r['nodes']} | {r.get('ranks_per_node', 1)} "
                    f"| {r['algo']} ({r['algo_ran']}) | {r.get('effective_threads', 1)} | {r['time_mpi_s']:.5f} "
                    f"| {f'{ring:.5f}' if ring else '-'} | {r['time_s']:.5f} | {r['speedup_vs_mpi']:.3f} "
                    f"| {f'{vs_ring:.3f}' if vs_ring else '-'} | {r['ratio']:.2f} "
                    f"| {r['t_compress_s']:.5f} | {r['t_reduce_s']:.5f} | {r['t_decompress_s']:.5f} "
                    f"| {r['max_err_over_eb']:.3f} ({r['bound_over_eb']:.0f}) |")
    return "\n".join(rows) + "\n"


def pivot(recs):
    """Per (op, size, ranks per node, algorithm) and node count: plain MPI's and plainring's
    times, the compressed algorithms' speedups over plain MPI (and over plainring)."""
    nodes = sorted({r["nodes"] for r in recs})
    order = {op: i for i, op in enumerate(OPS)}
    algo_order = {"mpi": 0, "plainring": 1, "zcoll": 2, "cprp2p": 3}
    cells = {}
    for r in recs:
        rpn = r.get("ranks_per_node", 1)
        key = (order.get(r["op"], 99), r["op"], r["bytes_per_rank"], rpn, algo_order.get(r["algo"], 9), r["algo"],
               r.get("effective_threads", 1))
        if r["algo"] not in BASELINES:  # plain MPI's time from this launch, unless a baseline launch has it
            mkey = (order.get(r["op"], 99), r["op"], r["bytes_per_rank"], rpn, 0, "mpi", 1)
            cells.setdefault(mkey, {}).setdefault(r["nodes"], f"{1e3 * r['time_mpi_s']:.2f} ms")
        if r["algo"] in ("mpi", "plainring"):
            text = f"{1e3 * r['time_s']:.2f} ms"
        else:
            vs = r.get("speedup_vs_plainring")
            vs_ph = r.get("speedup_vs_plain_hierarchical") if r["algo"] != "plain-hierarchical" else None
            text = (f"{r['speedup_vs_mpi']:.2f}x" + (f" / {vs:.2f}x" if vs else "") +
                    (f" ({vs_ph:.2f}x vs plain-hierarchical)" if vs_ph else ""))
        cells.setdefault(key, {})[r["nodes"]] = text
    rows = ["| op | MiB/rank | ranks/node | what | " + " | ".join(f"{n} nodes" for n in nodes) + " |",
            "|" + "---|" * (4 + len(nodes))]
    for key in sorted(cells):
        _, op, nbytes, rpn, _, algo, e = key
        what = {"mpi": "plain MPI time (SMPI's" + (", reduction not charged)" if op == "allreduce" else ")"),
                "plainring": "plainring time (reduction charged, 1 thread)"}.get(
            algo, f"{algo} E={e} speedup vs plain MPI" + (" / vs plainring" if op == "allreduce" else ""))
        rows.append(f"| {op} | {nbytes / 2**20:g} | {rpn} | {what} | " +
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
    ap.add_argument("--effective-threads", type=int, default=1,
                    help="E: the compressed algorithms' launch runs on hosts E x smpi/host-speed, so their compute "
                         "costs 1/E of this machine's single-thread CPU time (modelled multi-thread codec; default 1)")
    ap.add_argument("--chunk-len", type=int, default=0,
                    help="codec chunk length (0: the library's); a piece's chunks bound the threads that share it")
    ap.add_argument("--ranks-per-node", type=int, default=1, help="ranks (and cores) per simulated host (default 1)")
    ap.add_argument("--bench-ranks", type=int, default=0,
                    help="time the collectives on the first N ranks only (nodes of different sizes; default all)")
    ap.add_argument("--loopback-bw", default="12GBps", help="between ranks of one host (default 12GBps)")
    ap.add_argument("--loopback-lat", default="0.3us", help="between ranks of one host (default 0.3us)")
    ap.add_argument("--smpi-coll", default="",
                    help="plain MPI's algorithm per collective instead of the ompi selector's, e.g. "
                         "bcast=scatter_LR_allgather (MPICH's long-message bcast; the ompi selector's choice for "
                         "16 MiB takes minutes of simulation at 8 and 32 nodes)")
    ap.add_argument("--check-stride", type=int, default=1,
                    help="reductions: zcoll-bench checks every S-th element only (default 1)")
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
        f.write("SIMULATED (SimGrid SMPI 3.32); compute charged at this machine's measured single-thread CPU time, "
                "divided by E (effective codec threads, modelled) for the compressed algorithms; plain MPI and "
                "plainring at factor 1.\n\n")
        f.write(pivot(recs) + "\n")
        f.write(table(recs))
    print(pivot(recs))
    print(table(recs))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
