#!/usr/bin/env python3
"""Compare zcoll's fzl codec with ZFP and SZ3 on the same fields and error bounds, in one run.

Fields: data/*.f32|*.f64 and ../shared/datasets/* when present (a file name found in both is
run once, from data/). The dtype comes from the suffix (.f32/.f64) and the shape from the
"_AxBxC" part of the name (slowest axis first, C order).

Bounds: each relative bound REL (default 1e-2 1e-3 1e-4 1e-5) is turned into an absolute one,
eb_abs = REL * (max - min) computed with numpy in float64, and all three codecs then run in
absolute mode with that same eb_abs, so they are compared on equal terms:
  fzl  `zcoll-bench codec --input F --dtype D --eb-mode abs --eb E --json --repeat K`
       (1-D unless --fzl-dims, which passes the field's shape with --dims)
  zfp  zfpy fixed-accuracy mode, tolerance = eb_abs, the field's shape
  sz3  pysz, ABS mode, absErrorBound = eb_abs, the field's shape
For each: ratio (original bytes / compressed bytes), compression and decompression
throughput (GB/s = 1e9 B/s of uncompressed data, best of K runs, one thread), the maximum
absolute error and max_err/eb, computed in float64.

Setup: scripts/bootstrap.sh --python, then
  .venv/bin/python bench/compare_codecs.py [--fields turb,echam5] [--rel 1e-3,1e-4] [--json]
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

try:
    import numpy as np
except ImportError:
    sys.exit("compare_codecs: needs numpy, zfpy and pysz: scripts/bootstrap.sh --python, then run it with "
             ".venv/bin/python (or pip install -r bench/requirements.txt)")

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_REL = "1e-2,1e-3,1e-4,1e-5"
CODECS = ("fzl", "zfp", "sz3")
SUFFIX_DTYPE = {".f32": ("f32", np.dtype("<f4")), ".f64": ("f64", np.dtype("<f8"))}
SHAPE_RE = re.compile(r"_(\d+(?:x\d+)*)$")


def log(msg):
    print(f"compare_codecs: {msg}", file=sys.stderr, flush=True)


def shape_from_name(path):
    m = SHAPE_RE.search(Path(path).stem)
    return tuple(int(x) for x in m.group(1).split("x")) if m else None


def discover(dirs, filters):
    """[(path, dtype name, numpy dtype)] of the fields in dirs, first occurrence of a name wins."""
    seen, out = set(), []
    for d in dirs:
        if not d.is_dir():
            continue
        for p in sorted(d.iterdir()):
            if p.suffix not in SUFFIX_DTYPE or not p.is_file() or p.name in seen:
                continue
            if filters and not any(f in p.name for f in filters):
                continue
            seen.add(p.name)
            out.append((p, *SUFFIX_DTYPE[p.suffix]))
    return out


def load(path, np_dtype):
    a = np.fromfile(path, dtype=np_dtype)
    shape = shape_from_name(path)
    if shape is None or math.prod(shape) != a.size:
        log(f"{path.name}: no usable _AxBxC shape in the name ({shape}, {a.size} values); using 1-D")
        shape = (a.size,)
    # Native byte order for the codecs (a no-op on little-endian machines).
    return np.ascontiguousarray(a.reshape(shape).astype(np_dtype.newbyteorder("="), copy=False))


def best_of(k, fn):
    best, out = math.inf, None
    for _ in range(k):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def quality(x, y, eb_abs, value_range):
    """Error statistics in float64 over the finite input values."""
    x64 = x.astype(np.float64).ravel()
    y64 = np.asarray(y).astype(np.float64).ravel()
    if y64.size != x64.size:
        raise RuntimeError(f"decompressed {y64.size} values, expected {x64.size}")
    fin = np.isfinite(x64)
    diff = y64[fin] - x64[fin]  # signed, as zcoll-bench's mean_err
    err = np.abs(diff)
    max_err = float(err.max()) if err.size else 0.0
    if err.size and not np.all(np.isfinite(err)):
        max_err = math.inf
    rmse = float(np.sqrt(np.mean(err * err))) if err.size else 0.0
    return {
        "max_abs_err": max_err,
        "max_err_over_eb": max_err / eb_abs,
        "mean_err": float(diff.mean()) if err.size else 0.0,
        "rmse": rmse,
        "psnr_db": 20 * math.log10(value_range / rmse) if rmse > 0 and value_range > 0 else math.inf,
        "nrmse": rmse / value_range if value_range > 0 else 0.0,
    }


def run_zfp(a, eb_abs, k):
    import zfpy

    tc, comp = best_of(k, lambda: zfpy.compress_numpy(a, tolerance=eb_abs))
    td, dec = best_of(k, lambda: zfpy.decompress_numpy(comp))
    if dec.shape != a.shape or dec.dtype != a.dtype:
        raise RuntimeError(f"zfp returned {dec.dtype}{dec.shape}, expected {a.dtype}{a.shape}")
    return len(comp), tc, td, dec


def run_sz3(a, eb_abs, k):
    from pysz import sz, szConfig, szErrorBoundMode

    def compress():
        conf = szConfig(a.shape)
        conf.errorBoundMode = szErrorBoundMode.ABS
        conf.absErrorBound = eb_abs
        conf.openmp = False
        return sz.compress(a, conf)[0]

    tc, comp = best_of(k, compress)
    td, (dec, _) = best_of(k, lambda: sz.decompress(comp, a.dtype, a.shape))
    return int(comp.nbytes), tc, td, dec


def run_python_codec(name, a, eb_abs, k, value_range):
    fn = run_zfp if name == "zfp" else run_sz3
    nbytes, tc, td, dec = fn(a, eb_abs, k)
    r = {
        "ratio": a.nbytes / nbytes,
        "compressed_bytes": nbytes,
        "comp_gbps": a.nbytes / tc / 1e9,
        "decomp_gbps": a.nbytes / td / 1e9,
    }
    r.update(quality(a, dec, eb_abs, value_range))
    return r


def run_fzl(bench, path, dtype_name, shape, eb_abs, k, fzl_dims):
    cmd = [str(bench), "codec", "--input", str(path), "--dtype", dtype_name, "--eb-mode", "abs",
           "--eb", repr(float(eb_abs)), "--json", "--repeat", str(k)]
    if fzl_dims and len(shape) > 1:
        cmd += ["--dims", "x".join(str(s) for s in shape)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()}")
    rows = []
    for line in p.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            # printf writes inf/nan (e.g. psnr_db of a lossless run), which JSON lacks
            line = re.sub(r'(:\s*)-?(?:inf|nan)\b', r'\1null', line, flags=re.IGNORECASE)
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    rows = [r for r in rows if r.get("codec", "fzl") == "fzl"]
    if not rows:
        raise RuntimeError(f"no JSON line from {' '.join(cmd)}:\n{p.stdout}{p.stderr}")
    return rows[-1]


def json_safe(row):
    """inf/nan are not JSON: write them as null."""
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in row.items()}


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--bench", default=str(ROOT / "build-mpich" / "bench" / "zcoll-bench"),
                    help="zcoll-bench binary (default: build-mpich/bench/zcoll-bench)")
    ap.add_argument("--repeat", "-k", type=int, default=3, help="runs per measurement; the best counts (default 3)")
    ap.add_argument("--rel", default=DEFAULT_REL, help=f"relative bounds, comma-separated (default {DEFAULT_REL})")
    ap.add_argument("--fields", default="", help="comma-separated substrings; only fields whose name has one")
    ap.add_argument("--codecs", default=",".join(CODECS), help="comma-separated subset of fzl,zfp,sz3")
    ap.add_argument("--data", action="append", default=None,
                    help="field directory (repeatable; default: data/ and ../shared/datasets)")
    ap.add_argument("--fzl-dims", action="store_true", help="give fzl the field's shape (--dims) instead of 1-D")
    ap.add_argument("--json", action="store_true",
                    help="JSON lines on stdout (one per field, bound and codec); the table goes to stderr")
    ap.add_argument("--strict", action="store_true", help="exit 1 if any codec exceeds its bound")
    args = ap.parse_args()

    try:
        rels = [float(x) for x in args.rel.split(",") if x.strip()]
    except ValueError:
        ap.error(f"--rel: not a list of numbers: {args.rel}")
    if not rels or any(not (r > 0) for r in rels):
        ap.error("--rel: bounds must be > 0")
    codecs = [c.strip() for c in args.codecs.split(",") if c.strip()]
    bad = [c for c in codecs if c not in CODECS]
    if bad or not codecs:
        ap.error(f"--codecs: unknown {bad}; choose from {','.join(CODECS)}")
    if args.repeat < 1:
        ap.error("--repeat must be >= 1")

    for name, mod in (("zfp", "zfpy"), ("sz3", "pysz")):
        if name in codecs:
            try:
                __import__(mod)
            except ImportError as e:
                sys.exit(f"compare_codecs: {name} needs the Python module {mod} ({e}).\n"
                         f"  Install: scripts/bootstrap.sh --python  (then use .venv/bin/python), or\n"
                         f"           pip install -r bench/requirements.txt")
    bench = Path(args.bench)
    if "fzl" in codecs and not (bench.is_file() and os.access(bench, os.X_OK)):
        log(f"fzl skipped: {bench} does not exist or is not executable "
            f"(build it with scripts/bootstrap.sh, or pass --bench PATH)")
        codecs.remove("fzl")
        if not codecs:
            sys.exit(1)

    dirs = [Path(d) for d in args.data] if args.data else [ROOT / "data", ROOT.parent / "shared" / "datasets"]
    filters = [f.strip() for f in args.fields.split(",") if f.strip()]
    fields = discover(dirs, filters)
    if not fields:
        sys.exit(f"compare_codecs: no fields found in {', '.join(map(str, dirs))}"
                 + (f" matching {filters}" if filters else ""))

    table_out = sys.stderr if args.json else sys.stdout
    cols = [c for c in CODECS if c in codecs]
    head1 = f"{'field':<34} {'rel eb':>7} {'eb_abs':>10}"
    head2 = " " * len(head1)
    for c in cols:
        head1 += f" | {c:^33}"
        head2 += f" | {'ratio':>7} {'comp':>7} {'decomp':>7} {'err/eb':>8}"
    print(f"# fzl vs ZFP (zfpy, fixed accuracy) vs SZ3 (pysz, ABS), the same eb_abs = rel x (max - min) "
          f"for all; GB/s of uncompressed data, best of {args.repeat}, 1 thread", file=table_out)
    print("# zfp/sz3 use the field's shape; fzl " + ("uses it too (--fzl-dims)" if args.fzl_dims
                                                        else "1-D unless --fzl-dims"), file=table_out)
    print(head1, file=table_out)
    print(head2, file=table_out)

    violations, failures = [], []
    for path, dtype_name, np_dtype in fields:
        a = load(path, np_dtype)
        fin = a[np.isfinite(a)]
        lo, hi = (float(fin.min()), float(fin.max())) if fin.size else (0.0, 0.0)
        value_range = hi - lo
        for rel in rels:
            eb_abs = rel * value_range
            if not (eb_abs > 0):
                log(f"{path.name}: constant field, skipped")
                break
            line = f"{path.name:<34} {rel:>7.0e} {eb_abs:>10.4g}"
            for c in cols:
                try:
                    if c == "fzl":
                        r = run_fzl(bench, path, dtype_name, a.shape, eb_abs, args.repeat, args.fzl_dims)
                    else:
                        r = run_python_codec(c, a, eb_abs, args.repeat, value_range)
                except Exception as e:  # report and go on with the other codecs
                    failures.append(f"{c} on {path.name} rel {rel:g}: {e}")
                    line += f" | {'FAILED':>33}"
                    continue
                over = r["max_err_over_eb"]
                flag = "!" if not (over <= 1.0) else " "
                if flag == "!":
                    violations.append(f"{c} on {path.name} rel {rel:g}: max_err/eb = {over:.4f}")
                line += (f" | {fmt(r.get('ratio'), '7.2f')} {fmt(r.get('comp_gbps'), '7.3f')}"
                         f" {fmt(r.get('decomp_gbps'), '7.3f')} {over:>7.4f}{flag}")
                if args.json:
                    row = {"file": path.name, "dtype": dtype_name, "n": int(a.size), "shape": list(a.shape),
                           "codec": c, "eb_mode": "abs", "rel_eb": rel, "eb": eb_abs, "eb_abs": eb_abs,
                           "threads": 1, "repeat": args.repeat}
                    if c == "fzl":
                        row.update({k: v for k, v in r.items() if k not in ("file", "eb_mode", "eb", "eb_abs", "codec")})
                        row["fzl_dims"] = bool(args.fzl_dims)
                    else:
                        row.update(r)
                    print(json.dumps(json_safe(row)), flush=True)
            print(line, file=table_out, flush=True)

    if violations:
        print("! = max_err/eb > 1 (bound exceeded):", file=table_out)
        for v in violations:
            print(f"  {v}", file=table_out)
    for f in failures:
        log(f"FAILED: {f}")
    if failures or (args.strict and violations):
        sys.exit(1)


if __name__ == "__main__":
    main()
