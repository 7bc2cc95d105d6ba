"""Tables and plots of bench/h5write/run_study.sh's results (one JSON object per line).

    .venv/bin/python bench/h5write/plot_study.py docs/h5write/results.jsonl --out docs/h5write

Writes summary.md (medians over repetitions: time, speedups, ratio, storage overhead,
prediction error, overflow, max error / eb), breakdown_<rate>.png (the time of each mode in
parts, like seed 004's figure 16) and sweep.png (time against the number of fields).
"""
import argparse
import json
import os
import statistics
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from results_io import save_figure  # noqa: E402


def label(d):
    if d["mode"] == "predictive" and d.get("reorder") is False:
        return "predictive (no reorder)"
    return d["mode"]


ORDER = ["raw", "filter", "pipelined", "predictive (no reorder)", "predictive"]


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def group(rows, key):
    g = defaultdict(list)
    for d in rows:
        g[key(d)].append(d)
    return g


def med(rows, k):
    vals = [d[k] for d in rows if d.get(k) is not None]
    return statistics.median(vals) if vals else None


def parts(d):
    """The time of one run in parts that add up to time_s."""
    t = d["time_s"]
    if d["mode"] in ("raw", "filter"):
        name = "write" if d["mode"] == "raw" else "compress + write (filter, collective)"
        w = min(d["t_write"], t)
        return {name: w, "other (open, create, close, waits)": max(t - w, 0)}
    p = {"predict": d["t_predict"], "compress": d["t_compress"],
         "write not hidden": d["t_write_exposed"], "agreements + metadata": d["t_sync"]}
    scale = min(1.0, t / max(sum(p.values()), 1e-12))  # slowest-rank parts may exceed the total
    p = {k: v * scale for k, v in p.items()}
    p["other (create, close, range pass)"] = max(t - sum(p.values()), 0)
    return p


def summary(rows):
    out = ["| rate (MB/s, measured) | eb | mode | time (s) | vs raw | vs filter | vs raw at the rate | "
           "raw MB/s achieved | ratio | storage / ideal | pred. err (median) | overflow ranks | max err / eb | runs |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    main = [d for d in rows if d["study"] == "main"]
    for (rate, eb), rs in sorted(group(main, lambda d: (d["rate_mbps"], d["eb"])).items(), key=lambda x: (-x[0][0], -x[0][1])):
        by = group(rs, label)
        t_raw = med(by.get("raw", []), "time_s")
        t_filter = med(by.get("filter", []), "time_s")
        for mode in ORDER:
            r = by.get(mode)
            if not r:
                continue
            t = med(r, "time_s")
            ideal_raw = r[0]["raw_bytes"] / (rate * 1e6)
            raw_mbs = r[0]["raw_bytes"] / 1e6 / t_raw if t_raw else None
            err = med(r, "predicted_ratio_err")
            out.append(
                f"| {rate:.0f} ({r[0]['rate_measured_mbps']:.0f}) | {eb:g} | {mode} | {t:.3f} | "
                f"{t_raw / t:.2f}x | {t_filter / t:.2f}x | {ideal_raw / t:.2f}x | "
                f"{raw_mbs:.0f} | {r[0]['raw_bytes'] / med(r, 'file_bytes'):.2f} | "
                f"{med(r, 'storage_overhead'):.3f} | {'' if err is None else f'{100 * err:.2f}%'} | "
                f"{max(d['overflow_ranks'] for d in r)} | {max(d['max_err_over_eb'] for d in r):.4f} | {len(r)} |")
    return "\n".join(out)


def sweep_table(rows):
    sw = [d for d in rows if d["study"] == "sweep"]
    if not sw:
        return ""
    out = ["| fields | " + " | ".join(ORDER) + " | predictive vs pipelined | predictive vs raw | predictive vs filter |",
           "|---|" + "---|" * (len(ORDER) + 3)]
    for k, rs in sorted(group(sw, lambda d: d["fields"]).items()):
        by = group(rs, label)
        t = {m: med(by[m], "time_s") for m in ORDER if m in by}
        cells = [f"{t[m]:.3f}" if m in t else "" for m in ORDER]
        p = t.get("predictive")
        out.append(f"| {k} | " + " | ".join(cells) + f" | {t['pipelined'] / p:.2f}x | {t['raw'] / p:.2f}x | "
                   f"{t['filter'] / p:.2f}x |")
    return "\n".join(out)


def extra_table(rows):
    ex = [d for d in rows if d["study"] == "extra"]
    if not ex:
        return ""
    out = ["| extra space | time (s) | storage / ideal | overflow bytes | overflow ranks |", "|---|---|---|---|---|"]
    for d in sorted(ex, key=lambda d: d["extra_space"]):
        out.append(f"| {d['extra_space']:.2f} | {d['time_s']:.3f} | {d['storage_overhead']:.3f} | "
                   f"{d['overflow_bytes']} | {d['overflow_ranks']} |")
    return "\n".join(out)


def plot_breakdown(rows, out):
    main = [d for d in rows if d["study"] == "main"]
    for rate, rs in group(main, lambda d: d["rate_mbps"]).items():
        ebs = sorted({d["eb"] for d in rs}, reverse=True)
        fig, axes = plt.subplots(1, len(ebs), figsize=(6 * len(ebs), 4.5), sharey=True)
        axes = axes if len(ebs) > 1 else [axes]
        for ax, eb in zip(axes, ebs):
            by = group([d for d in rs if d["eb"] == eb], label)
            modes = [m for m in ORDER if m in by]
            # The median run of each mode, in parts.
            reps = {m: sorted(by[m], key=lambda d: d["time_s"])[len(by[m]) // 2] for m in modes}
            names = []
            for m in modes:
                for n in parts(reps[m]):
                    if n not in names:
                        names.append(n)
            bottom = [0.0] * len(modes)
            for n in names:
                vals = [parts(reps[m]).get(n, 0) for m in modes]
                ax.bar(range(len(modes)), vals, bottom=bottom, label=n)
                bottom = [b + v for b, v in zip(bottom, vals)]
            ax.set_xticks(range(len(modes)))
            ax.set_xticklabels([m.replace(" (", "\n(") for m in modes], fontsize=8)
            ax.set_title(f"REL {eb:g}")
            ax.set_ylabel("seconds (slowest rank's parts)")
        axes[-1].legend(fontsize=7)
        n = rs[0]
        fig.suptitle(f"4 ranks, {n['fields']} fields, {n['raw_bytes'] / 2**20:.0f} MiB, throttlefs "
                     f"{rate:.0f} MB/s ({n['rate_measured_mbps']:.0f} measured)")
        fig.tight_layout()
        save_figure(fig, os.path.join(out, f"breakdown_{rate:.0f}.png"), dpi=110)
        plt.close(fig)


def plot_sweep(rows, out):
    sw = [d for d in rows if d["study"] == "sweep"]
    if not sw:
        return
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for m, rs in sorted(group(sw, label).items(), key=lambda x: ORDER.index(x[0])):
        pts = sorted((d["fields"], d["time_s"]) for d in rs)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=m)
    ax.set_xlabel("fields (32 MiB per rank each)")
    ax.set_ylabel("seconds")
    ax.set_title("4 ranks, throttlefs 400 MB/s, REL 1e-4")
    ax.legend()
    fig.tight_layout()
    save_figure(fig, os.path.join(out, "sweep.png"), dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--out", default=".")
    a = ap.parse_args()
    rows = load(a.results)
    os.makedirs(a.out, exist_ok=True)
    text = ["# zcoll-bench h5write: results", "",
            f"From {os.path.basename(a.results)} ({len(rows)} runs; medians over repetitions). "
            "Written by bench/h5write/plot_study.py.", "", "## Main", "", summary(rows), ""]
    s = sweep_table(rows)
    if s:
        text += ["## Field-count sweep (seconds)", "", s, ""]
    e = extra_table(rows)
    if e:
        text += ["## Extra space (predictive, REL 1e-4, 400 MB/s)", "", e, ""]
    with open(os.path.join(a.out, "summary.md"), "w") as f:
        f.write("\n".join(text))
    plot_breakdown(rows, a.out)
    plot_sweep(rows, a.out)
    print("\n".join(text))


if __name__ == "__main__":
    main()
