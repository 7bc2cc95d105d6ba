"""Shared by the benchmark drivers (bench/netem/sweep.py, bench/smpi/run_scale.py,
bench/h5write/plot_study.py)."""

import json
import lzma
import os
import time


def append_results(stdout, out_jsonl, **extra):
    """Appends the JSON lines of a zcoll-bench run's stdout to out_jsonl, each with the
    extra keys and the time of the launch; returns how many there were."""
    got = 0
    with open(out_jsonl, "a") as f:
        for line in stdout.splitlines():
            if not line.startswith("{"):
                continue
            rec = json.loads(line)
            rec.update(extra, launch=time.strftime("%Y-%m-%dT%H:%M:%S"))
            f.write(json.dumps(rec) + "\n")
            got += 1
    return got


def read_results(jsonl):
    """The records of a results file: jsonl itself, or, where only that exists, jsonl + ".xz"
    (the committed studies under docs/ are kept compressed)."""
    if not os.path.exists(jsonl) and os.path.exists(jsonl + ".xz"):
        with lzma.open(jsonl + ".xz", "rt") as f:
            return [json.loads(l) for l in f if l.strip()]
    with open(jsonl) as f:
        return [json.loads(l) for l in f if l.strip()]


def save_figure(fig, path, dpi):
    """Saves a matplotlib figure as a PNG of at most 256 colours: a plot's lines, text and
    markers look the same, and the file is about a third of matplotlib's RGBA one (the committed
    studies' plots are most of the tracked tree, which a lent GPU machine takes at most 64 MiB
    of)."""
    fig.savefig(path, dpi=dpi)
    palette_png(path)


def palette_png(path):
    """Rewrites the PNG at path with a 256-colour palette (Pillow, which matplotlib needs)."""
    from PIL import Image
    with Image.open(path) as im:
        q = im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT,
                                       dither=Image.Dither.NONE)
    q.save(path, optimize=True)
