"""zcoll.compress against the C codec on the same 64 MiB float32 array, in one run.

The array is the first map of data/cesm_TS_10x192x288.f32 tiled by reflection to
4096x4096 (the image-stacking case's data). Three timings, best of --repeat each, the
first two back to back in each repetition so that a busy machine slows both alike:
  C        zcoll_compress called directly (ctypes, one foreign call) into a preallocated,
           already-touched output buffer: the codec alone;
  Python   zcoll.compress(a, eb, threads=N): argument checks, a fresh output buffer, the
           call, trimming it to bytes - what a user gets;
  bench    zcoll-bench codec on the same array written to a file (with --zcoll-bench PATH).
Prints GB/s (uncompressed bytes per second) and Python / C.
"""
import argparse
import ctypes
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import zcoll
from zcoll import _lib
from zcoll.codec import _params

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def field(side=4096):
    f = np.fromfile(os.path.join(ROOT, "data", "cesm_TS_10x192x288.f32"), dtype=np.float32)
    m = f[:192 * 288].reshape(192, 288)
    return np.ascontiguousarray(np.pad(m, ((0, side - 192), (0, side - 288)), mode="symmetric"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--eb", type=float, default=1e-4)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=21)
    ap.add_argument("--zcoll-bench", help="path of zcoll-bench, to time `zcoll-bench codec` too")
    args = ap.parse_args()

    a = field()
    p = _params(args.eb, "rel", "fzl", args.threads)
    cap = _lib.codec.zcoll_codec_bound(a.size, _lib.FLOAT32)
    out = np.ones(cap, dtype=np.uint8)  # touched, so no page faults inside the timing
    size = ctypes.c_size_t()

    def c_call():
        rc = _lib.codec.zcoll_compress(ctypes.byref(p), _lib.FLOAT32, a.ctypes.data, a.size,
                                       out.ctypes.data, cap, ctypes.byref(size), None)
        _lib.check(rc, "zcoll_compress")

    def py_call():
        return zcoll.compress(a, args.eb, "rel", threads=args.threads)

    c_call(), py_call()  # warm-up: OpenMP threads, scratch buffers
    pairs = []
    for _ in range(args.repeat):
        t = time.perf_counter(); c_call(); t1 = time.perf_counter(); buf = py_call()
        pairs.append((t1 - t, time.perf_counter() - t1))
    tc, tp = min(p[0] for p in pairs), min(p[1] for p in pairs)
    # On a shared machine the best times can come from different moments; the ratio of
    # back-to-back calls, median over the pairs, is the steadier figure.
    pair_ratio = float(np.median([c / py for c, py in pairs]))
    if bytes(buf)[-size.value:] != out[:size.value].tobytes():
        raise SystemExit("Python and C wrote different streams for the same array")
    gb = a.nbytes / 1e9
    print(f"array: {a.dtype} {a.shape[0]}x{a.shape[1]} ({a.nbytes / 2**20:.0f} MiB), REL {args.eb:g}, "
          f"threads {args.threads}, ratio {a.nbytes / len(buf):.2f}, best of {args.repeat}")
    print(f"  C zcoll_compress (direct)  {tc * 1e3:8.2f} ms  {gb / tc:6.2f} GB/s")
    print(f"  Python zcoll.compress      {tp * 1e3:8.2f} ms  {gb / tp:6.2f} GB/s   Python/C speed: "
          f"best {tc / tp:.3f}, median of back-to-back pairs {pair_ratio:.3f}")
    if args.zcoll_bench:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "cesm_TS_tiled.f32")
            a.tofile(path)
            r = subprocess.run([args.zcoll_bench, "codec", "--input", path, "--dtype", "f32",
                                "--eb-mode", "rel", "--eb", str(args.eb), "--threads", str(args.threads),
                                "--repeat", str(args.repeat), "--json"],
                               check=True, capture_output=True, text=True)
            j = json.loads(r.stdout.strip().splitlines()[-1])
            print(f"  zcoll-bench codec          {gb / j['comp_gbps'] * 1e3:8.2f} ms  "
                  f"{j['comp_gbps']:6.2f} GB/s   Python/zcoll-bench speed {gb / tp / j['comp_gbps']:.3f}"
                  f"  (its ratio {j['ratio']:.2f})")


if __name__ == "__main__":
    sys.exit(main())
