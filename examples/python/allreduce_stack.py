"""Image stacking with zcoll: each rank stacks its share of the 10 monthly temperature maps
of data/cesm_TS, and the ranks' stacks are summed with zcoll's Allreduce and with MPI's.
    mpiexec -n 2 python examples/python/allreduce_stack.py [--side 4096] [--eb 1e-4]
On shared memory the times mean little; bench/netem/run.sh runs it over a 1 Gbit/s link.
"""
import argparse, os, time
import numpy as np
from mpi4py import MPI
import zcoll

ap = argparse.ArgumentParser()
ap.add_argument("--side", type=int, default=4096, help="each map tiled by reflection to side x side")
ap.add_argument("--eb", type=float, default=1e-4, help="REL error bound")
args = ap.parse_args()
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()

maps = np.fromfile(os.path.join(os.path.dirname(__file__), "..", "..", "data", "cesm_TS_10x192x288.f32"),
                   np.float32).reshape(10, 192, 288)
pad = ((0, args.side - 192), (0, args.side - 288))
stack = sum(np.pad(maps[i], pad, mode="symmetric") for i in range(rank, 10, size)).astype(np.float32)

with zcoll.Comm(comm, eb=args.eb, mode="rel", bound_target="result") as zc:
    times = {}
    for name, call in (("MPI", lambda out: comm.Allreduce(stack, out, op=MPI.SUM)),
                       ("zcoll", lambda out: zc.Allreduce(stack, out, op=MPI.SUM))):
        out = np.empty_like(stack)
        call(out)  # warm-up: buffers, threads, connections
        runs = []
        for _ in range(3):
            comm.Barrier(); t = time.perf_counter(); call(out)
            runs.append(comm.allreduce(time.perf_counter() - t, op=MPI.MAX))
        times[name] = min(runs)
        times[name + "_out"] = out
    st = zc.last_stats

exact, approx = times["MPI_out"].astype(np.float64), times["zcoll_out"]
err = np.abs(approx - exact)
bound = args.eb * (float(comm.allreduce(stack.max(), MPI.MAX)) - float(comm.allreduce(stack.min(), MPI.MIN)))
psnr = 20 * np.log10((exact.max() - exact.min()) / np.sqrt(np.mean(err ** 2)))
if rank == 0:
    print(f"{size} ranks, {stack.nbytes / 2**20:.0f} MiB per rank, REL {args.eb:g} on the result, best of 3")
    print(f"MPI_Allreduce   {times['MPI']:.4f} s")
    print(f"zcoll Allreduce {times['zcoll']:.4f} s  speedup {times['MPI'] / times['zcoll']:.2f}  "
          f"ratio {st['ratio']:.2f}  algorithm {st['algorithm']}")
    print(f"max error {err.max():.4g} (bound {bound:.4g}, err/bound {err.max() / bound:.3f}), PSNR {psnr:.1f} dB")
    assert err.max() <= bound * (1 + 1e-6) + 4 * np.spacing(np.float32(np.abs(exact).max())), "bound exceeded"
