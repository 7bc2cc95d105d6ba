"""The zcoll command: compress, decompress, info, bench.

Errors are one line on stderr ("zcoll: error: ..."), with exit status 1 (2 for usage).
"""
import argparse
import glob
import json
import os
import re
import sys
import time

import numpy as np

from . import _lib
from .codec import compress, decompress, inspect

_DT = {"f32": np.float32, "float32": np.float32, "f64": np.float64, "float64": np.float64}


class _Usage(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _Usage(message)


def _shape_arg(text):
    try:
        shape = tuple(int(x) for x in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"shape must look like 10x192x288, not {text!r}") from None
    if not shape or min(shape) < 0:
        raise argparse.ArgumentTypeError(f"shape must look like 10x192x288, not {text!r}")
    return shape


def guess_layout(path, dtype=None, shape=None):
    """dtype and shape of a raw file: from the flags, else from names like
    cesm_TS_10x192x288.f32 (the layout of data/); 1-D when the name gives no shape."""
    base = os.path.basename(path)
    if dtype is None:
        ext = os.path.splitext(base)[1].lstrip(".").lower()
        if ext not in _DT:
            raise ValueError(f"{path}: cannot tell the element type; pass --dtype f32 or f64")
        dtype = ext
    dt = np.dtype(_DT[dtype])
    nbytes = os.path.getsize(path)
    if nbytes % dt.itemsize:
        raise ValueError(f"{path}: {nbytes} bytes are not a whole number of {dt} values")
    n = nbytes // dt.itemsize
    if shape is None:
        m = re.search(r"_(\d+(?:x\d+)+)\.", base)
        shape = _shape_arg(m.group(1)) if m else (n,)
        if int(np.prod(shape)) != n:
            shape = (n,)
    if int(np.prod(shape)) != n:
        raise ValueError(f"{path}: --shape {'x'.join(map(str, shape))} is {int(np.prod(shape))} "
                         f"values, the file holds {n}")
    return dt, shape


def load(path, dtype=None, shape=None):
    if path.endswith(".npy"):
        a = np.load(path, mmap_mode="r", allow_pickle=False)
        if dtype is not None and np.dtype(_DT[dtype]) != a.dtype:
            raise ValueError(f"{path} holds {a.dtype}, not {dtype}")
        if shape is not None and tuple(shape) != a.shape:
            raise ValueError(f"{path} has shape {a.shape}, not {shape}")
        return a
    dt, shape = guess_layout(path, dtype, shape)
    return np.fromfile(path, dtype=dt).reshape(shape)


def _cmd_compress(args):
    a = load(args.input, args.dtype, args.shape)
    buf = compress(np.ascontiguousarray(a), args.eb, args.mode, args.codec, args.threads)
    with open(args.output, "wb") as f:
        f.write(buf)
    info = inspect(buf)
    print(f"{args.input} -> {args.output}: {a.dtype} {'x'.join(map(str, a.shape))}, "
          f"{a.nbytes} -> {len(buf)} bytes (ratio {info['ratio']:.2f}), eb_abs {info['eb_abs']:.6g}")


def _cmd_decompress(args):
    with open(args.input, "rb") as f:
        a = decompress(f.read(), args.threads)
    if args.output.endswith(".npy"):
        np.save(args.output, a)
    else:
        a.tofile(args.output)
    print(f"{args.input} -> {args.output}: {a.dtype} {'x'.join(map(str, a.shape))}")


def _cmd_info(args):
    with open(args.input, "rb") as f:
        info = inspect(f.read())
    if args.json:
        print(json.dumps(info))
    else:
        for k, v in info.items():
            print(f"{k:14s} {v}")


class _Progress:
    """A one-line bar on stderr, shown only on a terminal and once a run takes over a second."""

    def __init__(self, total):
        self.total, self.done, self.t0 = total, 0, time.monotonic()
        self.on = sys.stderr.isatty()

    def step(self, label):
        self.done += 1
        if self.on and time.monotonic() - self.t0 > 1.0:
            w = 30
            k = w * self.done // self.total
            sys.stderr.write(f"\r[{'#' * k}{'.' * (w - k)}] {self.done}/{self.total} {label[:40]:40s}")
            sys.stderr.flush()

    def close(self):
        if self.on and time.monotonic() - self.t0 > 1.0:
            sys.stderr.write("\r" + " " * 80 + "\r")


def _best(fn, repeat):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def bench_rows(files, ebs, mode, codec, threads, repeat, progress=None):
    """Yields one dict per (file, eb): ratio, GB/s (uncompressed bytes, best of repeat) both
    ways, and max |error| / eb_abs, checked here in numpy."""
    for path in files:
        a = np.ascontiguousarray(load(path))
        for eb in ebs:
            tc, buf = _best(lambda: compress(a, eb, mode, codec, threads), repeat)
            td, b = _best(lambda: decompress(buf, threads), repeat)
            eb_abs = inspect(buf)["eb_abs"]
            fin = np.isfinite(a)
            err = float(np.max(np.abs(a[fin].astype(np.float64) - b[fin]), initial=0.0))
            row = {"file": os.path.basename(path), "dtype": str(a.dtype), "eb": eb,
                   "ratio": a.nbytes / len(buf), "comp_gbps": a.nbytes / tc / 1e9,
                   "decomp_gbps": a.nbytes / td / 1e9, "max_err_over_eb": err / eb_abs}
            if progress:
                progress.step(f"{row['file']} {eb:g}")
            yield row


def _cmd_bench(args):
    files = args.files
    if not files:
        files = sorted(f for d in ("data", os.path.join("..", "shared", "datasets"))
                       for f in glob.glob(os.path.join(d, "*")) if f.endswith((".f32", ".f64")))
        if not files:
            raise ValueError("no fields found in data/ or ../shared/datasets; pass FILES")
    progress = _Progress(len(files) * len(args.eb))
    if not args.json:
        print(f"{'field':40s} {'eb':>7s} {'ratio':>7s} {'comp GB/s':>10s} {'decomp GB/s':>11s} {'err/eb':>7s}")
    worst = 0.0
    for row in bench_rows(files, args.eb, args.mode, args.codec, args.threads, args.repeat, progress):
        worst = max(worst, row["max_err_over_eb"])
        if args.json:
            print(json.dumps(row))
        else:
            print(f"{row['file']:40s} {row['eb']:7.0e} {row['ratio']:7.2f} {row['comp_gbps']:10.2f} "
                  f"{row['decomp_gbps']:11.2f} {row['max_err_over_eb']:7.4f}", flush=True)
    progress.close()
    if worst > 1.0:
        raise RuntimeError(f"an error exceeded the bound: max |error| / eb_abs = {worst}")


def _parser():
    p = _Parser(prog="zcoll", description="Error-bounded lossy compression of float arrays.")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
    c = sub.add_parser("compress", help="compress a raw .f32/.f64 file or a .npy file")
    c.add_argument("input")
    c.add_argument("output")
    c.add_argument("--eb", type=float, required=True, help="error bound")
    c.add_argument("--mode", choices=["rel", "abs"], default="rel")
    c.add_argument("--dtype", choices=sorted(_DT), help="raw files: element type (default: from the extension)")
    c.add_argument("--shape", type=_shape_arg, help="raw files: e.g. 10x192x288, slowest first")
    c.add_argument("--codec", default="fzl", help=f"one of {', '.join(_lib.codec_names())}")
    c.add_argument("--threads", type=int, default=0)
    d = sub.add_parser("decompress", help="decompress to .npy (by the name) or raw")
    d.add_argument("input")
    d.add_argument("output")
    d.add_argument("--threads", type=int, default=0)
    i = sub.add_parser("info", help="what a compressed file holds")
    i.add_argument("input")
    i.add_argument("--json", action="store_true")
    b = sub.add_parser("bench", help="the codec table: ratio, speed and error per field and bound")
    b.add_argument("files", nargs="*", help="raw fields (default: data/ and ../shared/datasets)")
    b.add_argument("--eb", type=float, nargs="+", default=[1e-2, 1e-3, 1e-4, 1e-5])
    b.add_argument("--mode", choices=["rel", "abs"], default="rel")
    b.add_argument("--codec", default="fzl")
    b.add_argument("--threads", type=int, default=1)
    b.add_argument("--repeat", type=int, default=3)
    b.add_argument("--json", action="store_true")
    return p


def main(argv=None):
    cmds = {"compress": _cmd_compress, "decompress": _cmd_decompress, "info": _cmd_info,
            "bench": _cmd_bench}
    try:
        args = _parser().parse_args(argv)
    except _Usage as e:
        print(f"zcoll: usage error: {e} (see zcoll --help)", file=sys.stderr)
        return 2
    try:
        cmds[args.cmd](args)
    except KeyboardInterrupt:
        print("zcoll: interrupted", file=sys.stderr)
        return 130
    except (OSError, ValueError, TypeError, RuntimeError, _lib.ZcollError) as e:
        msg = str(e).replace("\n", " ")
        print(f"zcoll: error: {msg}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
