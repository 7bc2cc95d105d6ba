/* The layer's cost on a call it passes through: an 8-byte MPI_Allreduce (one double, SUM)
 * on MPI_COMM_WORLD, 100000 calls timed, best of 5 rounds. Prints ns per call on rank 0.
 * bench_overhead.sh runs it without the layer and with it, and subtracts. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  enum { kCalls = 100000, kRounds = 5 };
  double x = 1, y = 0, best = 1e30;
  for (int i = 0; i < 1000; ++i) MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  for (int r = 0; r < kRounds; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < kCalls; ++i) MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    const double t = (MPI_Wtime() - t0) / kCalls;
    if (t < best) best = t;
  }
  if (rank == 0) printf("ns_per_call %.1f\n", best * 1e9);
  MPI_Finalize();
  return y == 0;
}
