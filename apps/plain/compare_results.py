#!/usr/bin/env python3
"""Compares two --out files of the plain programs: a run under the drop-in layer against a
plain-MPI run of the same program (raw little-endian float32 or float64, same length).

  compare_results.py PLAIN LAYER f32|f64 [--identical] [--bound B] [--rounding-per-norm R]

Prints one line: max_abs_err, NRMSE and PSNR_dB (rmse against the plain result's range),
rel_L2 (||LAYER - PLAIN|| / ||PLAIN||), and whether the files are bit-identical. Exit status 1 when the lengths differ, when --identical
is given and the bytes differ, or when max_abs_err exceeds the bound B + R x ||PLAIN||_2 (R:
an allowance for floating-point rounding that grows with the result's norm); with a bound it
also prints err/bound. Only the standard library (numpy is not assumed).
"""
import argparse
import array
import math
import sys


def read(path, typecode):
    values = array.array(typecode)
    with open(path, "rb") as f:
        values.frombytes(f.read())
    if sys.byteorder != "little":
        values.byteswap()
    return values


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("plain")
    ap.add_argument("layer")
    ap.add_argument("dtype", choices=["f32", "f64"])
    ap.add_argument("--identical", action="store_true", help="require the same bytes")
    ap.add_argument("--bound", type=float, help="absolute bound on max_abs_err")
    ap.add_argument("--rounding-per-norm", type=float, default=0.0,
                    help="adds this x ||PLAIN||_2 to --bound")
    a = ap.parse_args()
    typecode = "f" if a.dtype == "f32" else "d"
    ref, got = read(a.plain, typecode), read(a.layer, typecode)
    if len(ref) != len(got) or not ref:
        print(f"compare_results: {a.plain} has {len(ref)} values, {a.layer} {len(got)}")
        return 1
    identical = ref.tobytes() == got.tobytes()
    max_err = sq_err = sq_ref = 0.0
    lo, hi = math.inf, -math.inf
    for r, g in zip(ref, got):
        d = abs(g - r)
        if d > max_err or d != d:  # a NaN is the worst error
            max_err = math.inf if d != d else d
        sq_err += d * d
        sq_ref += r * r
        lo, hi = min(lo, r), max(hi, r)
    rmse, value_range = math.sqrt(sq_err / len(ref)), hi - lo
    nrmse = rmse / value_range if value_range > 0 else 0.0
    psnr = 20 * math.log10(value_range / rmse) if rmse > 0 and value_range > 0 else math.inf
    rel_l2 = math.sqrt(sq_err / sq_ref) if sq_ref > 0 else 0.0
    line = (f"max_abs_err {max_err:.4g}  NRMSE {nrmse:.3g}  PSNR_dB {psnr:.2f}  rel_L2 {rel_l2:.3g}  "
            f"identical {'yes' if identical else 'no'}  ({len(ref)} values)")
    status = 0
    if a.bound is not None:
        bound = a.bound + a.rounding_per_norm * math.sqrt(sq_ref)
        ratio = max_err / bound if bound > 0 else (0.0 if max_err == 0 else math.inf)
        line += f"  bound {bound:.4g}  err/bound {ratio:.4f}"
        status |= ratio > 1
    if a.identical and not identical:
        status = 1
    print(line)
    if status:
        print("compare_results: FAILED: " + ("not bit-identical" if a.identical and not identical
                                             else "max_abs_err is over the bound"))
    return status


if __name__ == "__main__":
    sys.exit(main())
