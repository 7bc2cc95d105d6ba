#!/usr/bin/env python3
"""Sweep the compressed collectives over emulated networks, then plot the results.

For every rate and rank count asked for, and every op, one launch of bench/netem/run.sh runs
`zcoll-bench coll` across network namespaces with every size x algorithm x thread count of
that op (zcoll-bench takes lists, so the link is set up and checked once per launch);
`--interleave` times them call by call in turn instead of in blocks. Each
result is one JSON line (zcoll-bench's keys plus rate, link_ranks and launch) appended to
OUT/results.jsonl. `--plot-only` redraws the plots from an existing results.jsonl (or
results.jsonl.xz, as the studies under docs/ are kept).

Plots (OUT/*.png), in the style of seed 000's figures 12-15:
  speedup_<rate>_np<N>.png     speedup over plain MPI against message size, one panel per op,
                               one line per algorithm
  breakdown_<rate>_np<N>.png   the largest size's time per algorithm, split into compression,
                               communication, reduction, decompression and other (the call's
                               median time less the parts, which are the last call's, slowest
                               rank per part, so the split is approximate)

Needs root (network namespaces). Example (the defaults):
  sudo .venv/bin/python bench/netem/sweep.py --build build-mpich --out docs/netem \\
      --rates 1gbit,10gbit --ranks 2 --sizes 4M,16M,64M,256M
The --ranks list may pair a rank count with its own rate: `--extra 4@500mbit`.
`--env KEY=VALUE` (repeatable) sets a variable for the launches and records it in every
result's "env" key; for example Open MPI's ring allreduce as the plain-MPI baseline:
  --mpi openmpi --env OMPI_MCA_coll_tuned_use_dynamic_rules=1 \\
      --env OMPI_MCA_coll_tuned_allreduce_algorithm=4
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from statistics import median

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from results_io import append_results, read_results, save_figure  # noqa: E402
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
OPS = ["allgather", "bcast", "scatter", "allreduce", "reduce_scatter", "reduce"]


def default_input():
    shared = os.path.join(ROOT, "..", "shared", "datasets", "nyx_phigrav_128x128x128.f64")
    return shared if os.path.exists(shared) else os.path.join(ROOT, "data", "turb_wmag_91x91x91.f32")


# The fixed zcoll choices of each op (zcoll-bench --algo names), weighed against "auto" (the
# cost model) and plain MPI by `--algos all`. "zcoll" is the fixed table's choice.
FIXED = {"allreduce": ["ring", "recursive-doubling"], "bcast": ["binomial", "scatter-allgather"],
         "allgather": ["ring", "bruck"], "reduce_scatter": ["ring"], "alltoall": ["pairwise"],
         "scatter": ["binomial"], "gather": ["binomial"], "reduce": ["ring"]}


# Node-aware, where a launch has nodes of several ranks: the compressed schedule, and the
# uncompressed one (a plain baseline that AUTO does not choose, but must beat).
NODE_AWARE = {"allreduce", "bcast", "allgather", "reduce_scatter", "reduce"}


def algos_for(args, op, per_node=1):
    if args.algos != "all":
        return args.algos
    fixed = FIXED.get(op, []) + (["hierarchical", "plain-hierarchical"] if per_node > 1 and op in NODE_AWARE else [])
    return ",".join(["mpi", "auto", "zcoll"] + fixed + args.extra_algos.split(",") * bool(args.extra_algos))


def launches(args):
    """(rate, ranks) pairs: every rate with every --ranks, plus the --extra pairs. A rank
    count NxK is N namespaces ("nodes") of K ranks each; rate "shm" runs on shared memory,
    without namespaces."""
    pairs = [(r, n) for r in args.rates.split(",") for n in args.ranks.split(",")]
    for item in filter(None, args.extra.split(",")):
        n, r = item.split("@")
        pairs.append((r, n))
    return pairs


def launch(cmd, env, expected, grace=30):
    """Runs one launch and returns (its stdout, its exit status, whether it was stopped).
    MPICH's MPI_Finalize can hang across namespaces after every result is out; run.sh would
    then wait out its --timeout. Once `expected` JSON lines (an upper bound: sizes x
    algorithms x thread counts) are out and the launch has been quiet for `grace` seconds,
    it is stopped (TERM: run.sh's trap ends the ranks and removes the namespaces), and its
    exit status counts as 0."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    lines, last = [], [time.time()]

    def read():
        for line in proc.stdout:
            lines.append(line)
            last[0] = time.time()
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    stopped = False
    while proc.poll() is None:
        time.sleep(1)
        done = sum(line.startswith("{") for line in lines) >= expected
        if done and time.time() - last[0] > grace:
            proc.terminate()
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            stopped = True
    reader.join(timeout=10)
    return "".join(lines), 0 if stopped else proc.returncode, stopped


def layout(ranks):
    """(total ranks, namespaces, ranks per namespace) of a --ranks entry."""
    if "x" in str(ranks):
        nodes, per = (int(x) for x in str(ranks).split("x"))
        return nodes * per, nodes, per
    return int(ranks), int(ranks), 1


def run_sweep(args, out_jsonl):
    bench = os.path.join(os.path.abspath(args.build), "bench", "zcoll-bench")
    if not os.access(bench, os.X_OK):
        sys.exit(f"sweep: {bench} not built")
    cores = os.cpu_count() or 1
    yield_lib = os.path.join(os.path.abspath(args.build), "libzcoll_ucx_yield.so")
    failures = 0
    for rate, spec in launches(args):
        ranks, nodes, per_node = layout(spec)
        # More ranks than cores: a waiting rank must yield its core (Open MPI does by itself on
        # shared memory; MPICH's ranks spin, and a plain 1 MiB allreduce of 2 x 2 ranks at
        # 10 Gbit/s took 50 ms instead of 3.6). A cluster gives each rank a core instead.
        yields = ranks > cores and not args.busy_wait
        if yields and args.mpi == "mpich" and not os.path.isfile(yield_lib):
            sys.exit(f"sweep: {yield_lib} not built (a build with tests or apps has it), or pass --busy-wait")
        env = {**os.environ, **args.env}
        # Multi-thread compression only where each rank has cores of its own to spare.
        threads = sorted({1, max(1, cores // ranks)})
        for op in args.ops.split(","):
            if rate == "shm":
                launcher = [f"mpiexec.{args.mpi}", "-n", str(ranks)] + (
                    ["--oversubscribe"] if args.mpi == "openmpi" else [])
                if yields and args.mpi == "mpich":
                    env["LD_PRELOAD"] = yield_lib
            else:
                launcher = ["bash", os.path.join(HERE, "run.sh"), "--rate", rate, "--ranks", str(nodes),
                            "--mpi", args.mpi, "--timeout", str(args.timeout)]
                if per_node > 1:
                    launcher += ["--ranks-per-node", str(per_node)]
                if yields:
                    launcher += ["--yield-when-idle", yield_lib]
                launcher.append("--")
            algos = algos_for(args, op, per_node)
            cmd = launcher + [bench, "coll", "--op", op, "--input", args.input,
                              "--eb-mode", "rel", "--eb", str(args.eb), "--bytes", args.sizes,
                              "--algo", algos,
                              "--threads", ",".join(map(str, threads)), "--iters", str(args.iters), "--warmup",
                              str(args.warmup), "--json"] + (["--interleave"] if args.interleave else [])
            print(f"sweep: {rate} np{ranks} {op}: {' '.join(cmd)}", file=sys.stderr, flush=True)
            t0 = time.time()
            expected = len(algos.split(",")) * len(args.sizes.split(",")) * len(threads)
            stdout, rc, stopped = launch(cmd, env, expected)
            got = append_results(stdout, out_jsonl, rate=rate, link_ranks=spec, mpi=args.mpi,
                                 waiting_ranks_yield=yields, **({"env": args.env} if args.env else {}))
            print(f"sweep: {rate} np{ranks} {op}: {got} results, exit {rc}, {time.time() - t0:.0f} s"
                  + (" (stopped after its last result: MPI_Finalize hung)" if stopped else ""),
                  file=sys.stderr, flush=True)
            failures += rc != 0
    return failures


def label(rec):
    return rec["algo"] + (f" ({rec['threads']} thr)" if rec.get("threads", 1) != 1 else "")


def plot(out_dir, out_jsonl):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def finish(fig, axes, ylabel, title, path):
        axes[0][0].set_ylabel(ylabel)
        axes[0][-1].legend(fontsize=7)
        fig.suptitle(title)
        fig.tight_layout()
        save_figure(fig, path, dpi=110)
        plt.close(fig)
        return path

    recs = read_results(out_jsonl)
    groups = {}
    for r in recs:
        groups.setdefault((r["rate"], r["link_ranks"]), []).append(r)
    written = []
    for (rate, ranks), rs in sorted(groups.items()):
        ops = [op for op in OPS if any(r["op"] == op for r in rs)]
        fig, axes = plt.subplots(1, len(ops), figsize=(3.2 * len(ops), 3.2), squeeze=False)
        for ax, op in zip(axes[0], ops):
            lines = {}
            for r in rs:
                if r["op"] == op and r["algo"] != "mpi":
                    lines.setdefault(label(r), []).append((r["bytes_per_rank"] / 2**20, r["speedup_vs_mpi"]))
            for name, pts in sorted(lines.items()):
                pts.sort()
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
            ax.axhline(1.0, color="grey", lw=0.8, ls="--")
            ax.set_xscale("log", base=2)
            ax.set_title(op)
            ax.set_xlabel("MiB per rank")
        written.append(finish(fig, axes, "speedup over plain MPI", f"{ranks} ranks, {rate} emulated link, REL 1e-4",
                              os.path.join(out_dir, f"speedup_{rate}_np{ranks}.png")))

        fig, axes = plt.subplots(1, len(ops), figsize=(3.2 * len(ops), 3.4), squeeze=False)
        parts = [("t_setup_s", "range pass, agreement"), ("t_compress_s", "compression"),
                 ("t_comm_s", "communication"), ("t_reduce_s", "reduction"), ("t_decompress_s", "decompression")]
        for ax, op in zip(axes[0], ops):
            sel = [r for r in rs if r["op"] == op]
            big = max(r["bytes_per_rank"] for r in sel)
            sel = sorted((r for r in sel if r["bytes_per_rank"] == big), key=label)
            names = [label(r) for r in sel]
            bottom = [0.0] * len(sel)
            for key, name in parts:
                vals = [r.get(key, 0.0) if r["algo"] != "mpi" else (r["time_s"] if key == "t_comm_s" else 0.0)
                        for r in sel]
                ax.bar(names, vals, bottom=bottom, label=name)
                bottom = [b + v for b, v in zip(bottom, vals)]
            other = [max(0.0, r["time_s"] - b) for r, b in zip(sel, bottom)]
            ax.bar(names, other, bottom=bottom, label="other")
            ax.set_title(f"{op}, {big / 2**20:.0f} MiB")
            ax.tick_params(axis="x", rotation=60, labelsize=7)
        written.append(finish(fig, axes, "seconds", f"time breakdown, {ranks} ranks, {rate}",
                              os.path.join(out_dir, f"breakdown_{rate}_np{ranks}.png")))
    return written


def abbreviate(paths):
    """Runs of one path as name x count: mpi, ring x9."""
    out = []
    for p in paths:
        if out and out[-1][0] == p:
            out[-1][1] += 1
        else:
            out.append([p, 1])
    return [p if n == 1 else f"{p} x{n}" for p, n in out]


def plain_split(cell, calls):
    """AUTO's calls that ran plain MPI, split by how they were decided: "fast n at x" (the cost
    model's fast path, no agreement) and "agreed n at x", x their median over plain MPI's.
    The timed calls are the last len(call_times_s) of call_paths/call_agreed (warm-up first)."""
    times, paths, agreed = calls.get("auto", []), cell.get("auto_paths", []), cell.get("auto_agreed", [])
    if not times or "mpi" not in calls or len(agreed) != len(paths) or len(paths) < len(times):
        return "-"
    skip = len(paths) - len(times)
    mpi = median(calls["mpi"])
    parts = []
    for label, want in (("fast", 0), ("agreed", 1)):
        ts = [t for t, p, a in zip(times, paths[skip:], agreed[skip:]) if p == "mpi" and a == want]
        parts.append(f"{label} {len(ts)}" + (f" at {median(ts) / mpi:.2f}" if ts else ""))
    return ", ".join(parts)


def own_path_paired(cell, calls):
    """AUTO's own cost, apart from its choices: over AUTO's timed calls from the 6th on that
    ran the path it ran most and followed a call of that path, the median of AUTO's call i over
    that path's own column's call i (interleaved, call i of both ran at about the same time).
    "path r (n)", or "-" where the path has no column here or fewer than 10 such calls."""
    times, paths = calls.get("auto", []), cell.get("auto_paths", [])
    if not times or len(paths) < len(times):
        return "-"
    mine = paths[len(paths) - len(times):]
    ran = [p for p in mine if p != "mpi"]
    if not ran:
        return "-"
    path = max(set(ran), key=ran.count)
    column = calls.get(path, [])
    idx = [i for i in range(5, min(len(mine), len(column))) if mine[i] == path and mine[i - 1] == path]
    if len(idx) < 10:
        return "-"
    return f"{path} {median([times[i] / column[i] for i in idx]):.3f} ({len(idx)})"


def auto_table(out_dir, out_jsonl):
    """AUTO (the cost model) against the fastest of plain MPI and the fixed zcoll choices, per
    link, op, input and size: a markdown table and a plot of auto / best."""
    recs = read_results(out_jsonl)
    cells = {}
    by_name = {}  # key -> {algo: its record} (threads 1)
    for r in recs:
        # AUTO runs on the codec threads it is given (config.codec.threads), like the fixed
        # paths beside it: each thread count is a cell of its own, plain MPI in all of them.
        # A rank count with threads over is shown as "4, 4 thr".
        threads = r.get("threads", 1)
        ranks = str(r["link_ranks"]) + (f", {threads} thr" if threads != 1 else "")
        key = (r["rate"], ranks, r["op"], os.path.basename(r.get("input", "")), r["bytes_per_rank"])
        if threads == 1:
            by_name.setdefault(key, {})[r["algo"]] = r
        cell = cells.setdefault(key, {})
        calls = cell.setdefault("calls", {})  # name -> its timed calls (call_times_s)
        cell["mpi"] = min(cell.get("mpi", 1e30), r["time_mpi_s"])
        name = r["algo"]
        if r.get("call_times_s") and (name == "mpi" or r["time_s"] <= cell.get(name, 1e30)):
            calls[name] = r["call_times_s"]
        if name != "mpi":
            cell[name] = min(cell.get(name, 1e30), r["time_s"])
            if name == "auto":
                cell["auto_ran"] = r["algo_ran"]
                cell["auto_paths"] = r.get("call_paths", [])
                cell["auto_agreed"] = r.get("call_agreed", [])
    rows = ["| link | ranks | op | input | MiB/rank | MPI s | best fixed | best s | AUTO ran | AUTO s | AUTO/best "
            "| all calls | second half | AUTO on its path, paired | AUTO vs MPI | AUTO's plain calls | AUTO's calls |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    points = {}
    for key in sorted(cells, key=lambda k: (k[0], k[1], k[2], k[3], k[4])):
        c = cells[key]
        if "auto" not in c:
            continue
        fixed = {k: v for k, v in c.items() if k not in ("auto", "auto_ran", "auto_paths", "auto_agreed", "calls")}
        best = min(fixed, key=fixed.get)
        ratio = c["auto"] / fixed[best]
        points.setdefault((key[0], key[1]), []).append((key[2], key[4] / 2**20, ratio))
        # Every timed call, AUTO's learning included, against the same calls of the best choice.
        calls = c["calls"]
        both = "auto" in calls and best in calls
        whole = f"{sum(calls['auto']) / sum(calls[best]):.3f}" if both else "-"
        # The second half of the timed calls, AUTO's and the best choice's: where AUTO has
        # learned the size (what a long-running code sees), apart from what learning cost.
        def second_half(v):
            return median(v[len(v) // 2:])
        late = (f"{second_half(calls['auto']) / second_half(calls[best]):.3f}"
                if both and len(calls["auto"]) >= 2 and len(calls[best]) >= 2 else "-")
        paths = ",".join(abbreviate(c.get("auto_paths", [])))
        rows.append(f"| {key[0]} | {key[1]} | {key[2]} | {key[3][:16]} | {key[4] / 2**20:.0f} | {c['mpi']:.4f} | "
                    f"{best} | {fixed[best]:.4f} | {c.get('auto_ran', '?')} | {c['auto']:.4f} | {ratio:.3f} | "
                    f"{whole} | {late} | {own_path_paired(c, calls)} | {c['mpi'] / c['auto']:.2f}x | "
                    f"{plain_split(c, calls)} | {paths} |")
    # The measurement's own noise: `zcoll` (the fixed table's choice) runs the same path as one
    # fixed algorithm of the cell, timed separately; how far apart are the two?
    twins = []
    for key, r in sorted(by_name.items()):
        z = r.get("zcoll")
        twin = r.get(z["algo_ran"]) if z and z["algo_ran"] != "zcoll" else None
        if twin and z["time_s"] > 0 and twin["time_s"] > 0:
            twins.append(max(z["time_s"], twin["time_s"]) / min(z["time_s"], twin["time_s"]))
    twins.sort()
    noise = (f"Noise floor: in {len(twins)} cells `zcoll` ran the same path as a fixed algorithm timed beside "
             f"it; the slower of the two took {twins[len(twins) // 2]:.3f}x the faster (median), more than "
             f"1.05x in {sum(t > 1.05 for t in twins)}, at most {twins[-1]:.3f}x.\n\n") if twins else ""
    path = os.path.join(out_dir, "auto_vs_best.md")
    with open(path, "w") as f:
        f.write("AUTO's time over the fastest of plain MPI and the fixed zcoll choices (each the best of its "
                "timed calls' medians); target <= 1.05. 'all calls': the sum of AUTO's timed calls (its "
                "learning included) over the sum of the best choice's; 'second half': the median of the "
                "second half of AUTO's timed calls over that of the best choice's (AUTO's choice once "
                "learned); 'AUTO on its path, paired': the path AUTO ran most, the median of AUTO's call "
                "i over that path's own column's call i, over AUTO's calls from the 6th on that followed "
                "a call of that path (how many in brackets): AUTO's own per-call cost, apart from its "
                "choices; 'AUTO's plain calls': those that ran plain MPI, taken by the cost model's fast "
                "path (no agreement) or through the agreement, each group's median over plain MPI's; "
                "'AUTO's calls': what each call ran, in order. "
                + ("Every path's calls interleaved with the others' (zcoll-bench coll --interleave)."
                   if recs and all(r.get("interleaved") for r in recs) else
                   "Each path's calls in a block (not interleaved), plain MPI timed before each.")
                + (" Launches with more ranks than cores: waiting ranks yield their core "
                   "(sweep.py; MPICH with BUILD/libzcoll_ucx_yield.so preloaded)."
                   if any(r.get("waiting_ranks_yield") for r in recs) else "")
                + "\n\n" + noise + "\n".join(rows) + "\n")
    written = [path]
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, max(1, len(points)), figsize=(3.4 * max(1, len(points)), 3.2), squeeze=False)
    for ax, ((rate, ranks), pts) in zip(axes[0], sorted(points.items())):
        for op in sorted({p[0] for p in pts}):
            sel = sorted((p[1], p[2]) for p in pts if p[0] == op)
            ax.plot([p[0] for p in sel], [p[1] for p in sel], marker="o", label=op)
        ax.axhline(1.05, color="red", lw=0.8, ls="--")
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_title(f"{rate}, {ranks} ranks")
        ax.set_xlabel("MiB per rank")
    axes[0][0].set_ylabel("AUTO time / best fixed choice")
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    png = os.path.join(out_dir, "auto_vs_best.png")
    save_figure(fig, png, dpi=110)
    plt.close(fig)
    written.append(png)
    return written


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build-mpich"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "netem"))
    ap.add_argument("--rates", default="1gbit,10gbit")
    ap.add_argument("--ranks", default="2")
    ap.add_argument("--extra", default="", help="more rank@rate launches, e.g. 4@500mbit")
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--algos", default="mpi,cprp2p,zcoll",
                    help="zcoll-bench --algo list, or 'all': mpi, auto, zcoll and each op's fixed algorithms")
    ap.add_argument("--extra-algos", default="", help="with --algos all: more algorithms for every op")
    ap.add_argument("--auto-table", action="store_true",
                    help="only write OUT/auto_vs_best.md (AUTO against the fastest fixed choice) and its plot")
    ap.add_argument("--sizes", default="4M,16M,64M,256M")
    ap.add_argument("--input", default=default_input())
    ap.add_argument("--eb", type=float, default=1e-4)
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--mpi", default="mpich", choices=["mpich", "openmpi"])
    ap.add_argument("--timeout", type=int, default=600,
                    help="seconds per launch; MPICH sometimes hangs in MPI_Finalize across namespaces "
                         "(often with 4 ranks): a launch that printed every result it was expected to is "
                         "stopped 30 s after its last one, its results kept")
    ap.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                    help="environment for the launches, recorded in the results (repeatable)")
    ap.add_argument("--interleave", action="store_true",
                    help="time plain MPI and every algorithm of an op and size call by call in turn "
                         "(zcoll-bench coll --interleave), so that host drift meets them alike")
    ap.add_argument("--busy-wait", action="store_true",
                    help="where a launch has more ranks than the machine has cores, leave MPICH's waiting "
                         "ranks spinning (as every run before 2026-11-29 did) instead of preloading "
                         "BUILD/libzcoll_ucx_yield.so (run.sh --yield-when-idle)")
    ap.add_argument("--plot-only", action="store_true")
    args = ap.parse_args()
    args.env = dict(item.split("=", 1) for item in args.env)
    os.makedirs(args.out, exist_ok=True)
    out_jsonl = os.path.join(args.out, "results.jsonl")
    failures = 0
    if args.auto_table:
        for p in auto_table(args.out, out_jsonl):
            print(f"sweep: wrote {p}", file=sys.stderr)
        return
    if not args.plot_only:
        failures = run_sweep(args, out_jsonl)
    for p in plot(args.out, out_jsonl):
        print(f"sweep: wrote {p}", file=sys.stderr)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
