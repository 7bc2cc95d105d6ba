// himeno-plain: the Himeno benchmark of zcoll-himeno (apps/himeno.cc, 1-D decomposition)
// written as an ordinary MPI program, no zcoll call: the grid split along i, the two halo
// i-planes exchanged with MPI_Irecv/MPI_Isend of MPI_FLOAT after every sweep, and gosa summed
// with MPI_Allreduce of one MPI_DOUBLE.
//
//   mpiexec -n P himeno-plain [--size XS|S|M|L|IxJxK] [--iters K] [--out FILE]
//
// Under tools/zcoll-run the layer changes nothing here: it does not intercept point-to-point,
// and an 8-byte MPI_Allreduce is far below ZCOLL_MIN_BYTES, so it goes to PMPI as it is. The
// result must be bit-identical to a plain run's, and the time the same (the layer's cost on a
// passed-through call is nanoseconds; docs/pmpi.md). Rank 0 prints time_s, the total of the K
// sweeps (halos and gosa included) on the slowest rank, and gosa. --out FILE writes the
// pressure's interior points, (I-2) x (J-2) x (K-2) float32 in i, j, k order, raw little-endian.
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "himeno.h"
#include "plain_support.h"
#include "tool_support.h"

namespace {

const char* const kUsage =
    "usage: mpiexec -n P himeno-plain [--size XS|S|M|L|IxJxK] [--iters K] [--out FILE]\n"
    "  --size    grid points i x j x k (default M = 256x128x128), split along i\n"
    "  --iters   Jacobi sweeps (default 100)\n"
    "  --out     the pressure's interior points as float32\n";

int run(int argc, char** argv, int rank, int ranks) {
  himeno::Grid g{};
  std::string size = "M", out;
  long iters = 100;
  for_each_option(argc, argv, [&](const std::string& name, const std::string& v) {
    if (name == "--size") size = v;
    else if (name == "--iters") iters = zsupport::parse_long(name, v, 1, 1 << 24);
    else if (name == "--out") out = v;
    else throw zsupport::UsageError{"unknown option " + name};
  });
  if (!himeno::parse_size(size, &g)) throw zsupport::UsageError{"--size must be XS, S, M, L or IxJxK, each >= 3"};
  if (g.imax - 2 < ranks) throw zsupport::UsageError{"more ranks than interior i-planes"};
  long li = 0, i0 = 0;
  himeno::split(g.imax, ranks, rank, &li, &i0);
  const himeno::Block blk(g, li, g.jmax - 2, i0);
  const int down = rank > 0 ? rank - 1 : MPI_PROC_NULL, up = rank + 1 < ranks ? rank + 1 : MPI_PROC_NULL;
  const int plane = static_cast<int>(blk.plane);

  std::vector<float> p = blk.initial_pressure(), wrk2(blk.cells(), 0.f);
  double gosa = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (long it = 0; it < iters; ++it) {
    const double mine = blk.sweep(p, wrk2);
    MPI_Request req[4];
    MPI_Irecv(&p[blk.at(0, 0, 0)], plane, MPI_FLOAT, down, 1, MPI_COMM_WORLD, &req[0]);
    MPI_Irecv(&p[blk.at(li + 1, 0, 0)], plane, MPI_FLOAT, up, 0, MPI_COMM_WORLD, &req[1]);
    MPI_Isend(&p[blk.at(1, 0, 0)], plane, MPI_FLOAT, down, 0, MPI_COMM_WORLD, &req[2]);
    MPI_Isend(&p[blk.at(li, 0, 0)], plane, MPI_FLOAT, up, 1, MPI_COMM_WORLD, &req[3]);
    MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
    MPI_Allreduce(&mine, &gosa, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  const double mine_s = MPI_Wtime() - t0;
  double time_s = 0;
  MPI_Allreduce(&mine_s, &time_s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("himeno-plain: %d ranks, %ldx%ldx%ld float32 split along i, halo planes of %d floats\n"
                "  time_s %.4f (total of %ld sweeps, slowest rank)  gosa %.9g\n",
                ranks, g.imax, g.jmax, g.kmax, plane, time_s, iters, gosa);
  std::string err;
  const std::vector<float> inner = blk.interior(p);
  if (!out.empty() && !write_in_rank_order(out, inner.data(), inner.size() * sizeof(float), &err)) {
    if (rank == 0) std::fprintf(stderr, "himeno-plain: %s\n", err.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return plain_main(argc, argv, "himeno-plain", kUsage, run); }
