"""Every element of a zcoll-bench h5write file read back by the other two readers.

    PYTHONPATH=<build>/tests/hdf5/python python3 bench/h5write/verify_readers.py FILE.h5 \
        --zcoll-h5 <build>/src/hdf5/zcoll-h5 --data ../shared/datasets

zcoll-bench h5write itself checks every element with the C reader (zcoll_h5_read_field).
This script rebuilds each field's original values (its input tiled along the slowest axis,
as the benchmark tiles it) and checks them with the command-line tool (`zcoll-h5 verify`)
and with the Python reader (`zcoll.h5`). Prints one line per field and reader; exit 1 if any
element is outside the field's eb_abs.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

import zcoll.h5


def original(name, data_dir, dims):
    """The benchmark's field fKK_<stem>: the input <stem>_AxBxC.f32|f64 tiled along axis 0."""
    stem = re.sub(r"^f\d+_", "", name)
    paths = glob.glob(os.path.join(data_dir, stem + "_*.f32")) + glob.glob(os.path.join(data_dir, stem + "_*.f64"))
    if len(paths) != 1:
        raise SystemExit(f"{name}: no single input for {stem} in {data_dir}")
    path = paths[0]
    shape = [int(x) for x in re.search(r"_(\d+(?:x\d+)*)\.f(?:32|64)$", path).group(1).split("x")]
    a = np.fromfile(path, dtype="<f4" if path.endswith(".f32") else "<f8").reshape(shape)
    reps = dims[0] // shape[0]
    if reps * shape[0] != dims[0] or list(dims[1:]) != shape[1:]:
        raise SystemExit(f"{name}: dims {dims} are not {shape} tiled")
    return np.tile(a, [reps] + [1] * (len(shape) - 1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--zcoll-h5", required=True)
    ap.add_argument("--data", required=True)
    a = ap.parse_args()
    bad = 0
    with zcoll.h5.open(a.file) as f, tempfile.TemporaryDirectory(dir="/dev/shm") as tmp:
        for name in f.fields:
            info = f.info(name)
            ref = original(name, a.data, list(info.dims))
            back = f[name]
            err = np.abs(back.astype(np.float64) - ref.astype(np.float64))
            worst = float(err.max()) / info.eb_abs
            out = int(np.count_nonzero(err > info.eb_abs))
            bad += out
            print(f"{name}: python zcoll.h5: {ref.size} values, max_err/eb_abs {worst:.6f}, outside {out}")
            raw = os.path.join(tmp, name + ".raw")
            ref.tofile(raw)
            r = subprocess.run([a.zcoll_h5, "verify", a.file, name, raw], capture_output=True, text=True)
            print(f"{name}: zcoll-h5 verify: {r.stdout.strip()}")
            if r.returncode != 0:
                bad += 1
                print(r.stderr, file=sys.stderr)
            os.remove(raw)
    print("all elements within eb_abs" if bad == 0 else f"FAILED: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
