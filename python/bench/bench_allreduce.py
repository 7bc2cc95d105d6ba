"""zc.Allreduce against the C zcoll_allreduce and plain MPI, same buffers, one run.

    bench/netem/run.sh --rate 1gbit --ranks 2 -- .cache/python/venv-mpich/bin/python \
        python/bench/bench_allreduce.py --input data/cesm_TS_10x192x288.f32 --bytes 64M

Data as zcoll-bench coll makes it: rank r holds the field rotated by r*n/N elements and
tiled to --bytes. Three paths, interleaved in every iteration after one warm-up each:
  python  zc.Allreduce(x, out, op=MPI.SUM): the package's method, argument handling included;
  C       zcoll_allreduce on the same zcoll_comm, called directly (one ctypes call with
          prepared arguments; ctypes releases the GIL, so this is the C library's time);
  MPI     mpi4py's comm.Allreduce on the same buffers.
Each call is timed between barriers; reported: the median over --iters of the slowest
rank's time, as zcoll-bench coll does.
"""
import argparse
import time

import numpy as np
from mpi4py import MPI

import zcoll
from zcoll.cli import load


def size_arg(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1].upper() in units else int(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--input", required=True)
    ap.add_argument("--bytes", type=size_arg, default=64 << 20, help="each rank's input (default 64M)")
    ap.add_argument("--eb", type=float, default=1e-4, help="REL bound of each input")
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()

    f = np.ascontiguousarray(load(args.input)).ravel()
    count = args.bytes // f.itemsize
    x = np.resize(np.roll(f, -(rank * f.size // size)), count)
    out = np.empty_like(x)
    zc = zcoll.Comm(comm, eb=args.eb, mode="rel", threads=args.threads)
    lib = zc._lib
    mpi_type = MPI._typedict[x.dtype.char]

    def c_call():
        zcoll._lib.check(lib.zcollpy_allreduce(x.ctypes.data, out.ctypes.data, count,
                                               MPI._addressof(mpi_type), MPI._addressof(MPI.SUM),
                                               zc._zc), "zcoll_allreduce", zc._zl)

    paths = {"python": lambda: zc.Allreduce(x, out, op=MPI.SUM), "C": c_call,
             "MPI": lambda: comm.Allreduce(x, out, op=MPI.SUM)}
    times = {k: [] for k in paths}
    stats = {}
    for it in range(args.iters + 1):
        for name, call in paths.items():
            comm.Barrier()
            t = time.perf_counter()
            call()
            dt = comm.allreduce(time.perf_counter() - t, op=MPI.MAX)
            if it > 0:
                times[name].append(dt)
            if name != "MPI":
                stats[name] = zc.last_stats
    zc.Free()
    if rank == 0:
        med = {k: float(np.median(v)) for k, v in times.items()}
        print(f"allreduce SUM, {size} ranks, {x.dtype} {count} values ({x.nbytes / 2**20:.0f} MiB per rank), "
              f"REL {args.eb:g}, threads {args.threads}, median of {args.iters}, {MPI.Get_library_version().splitlines()[0]}")
        for k in paths:
            extra = (f"  ratio {stats[k]['ratio']:.2f} algorithm {stats[k]['algorithm']}" if k in stats else "")
            print(f"  {k:7s} {med[k]:.4f} s  (min {min(times[k]):.4f}, max {max(times[k]):.4f}){extra}")
        print(f"  python / C = {med['python'] / med['C']:.3f};  MPI / python = {med['MPI'] / med['python']:.2f}")


if __name__ == "__main__":
    main()
