/* What two clock reads around a collective cost a call under SMPI, checked without zcoll.
 * zcoll's front end reads MPI_Wtime at a call's start and end (zcoll_stats' measured time,
 * and what AUTO learns plain MPI's speed from), so where AUTO runs plain MPI its call is
 * plain MPI plus those two reads. On real hardware a read costs tens of nanoseconds. Under
 * SMPI every MPI call ends a compute stretch that SMPI times on the thread's CPU clock and
 * charges as simulated compute (smpi/simulate-computation, on by default); with a rank
 * resuming after the 100-odd others ran in between, even an empty stretch costs
 * microseconds there. This program times MPI_Allreduce (SUM of doubles) per call, the
 * slowest rank's time, in one of two modes:
 *   bare     MPI_Allreduce alone between the timing reads
 *   clocked  the same with two more MPI_Wtime reads around it, as zcoll's front end has
 *   dup      MPI_Allreduce alone, on a duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN,
 *            as a zcoll communicator makes its calls
 * and prints one JSON line. Run by clock_cost.sh.
 *   smpirun -np P ... clock_cost COUNT ITERS bare|clocked|dup */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 4 || atoi(argv[1]) < 1 || atoi(argv[2]) < 1 ||
      (strcmp(argv[3], "bare") != 0 && strcmp(argv[3], "clocked") != 0 && strcmp(argv[3], "dup") != 0)) {
    if (rank == 0) fprintf(stderr, "usage: clock_cost COUNT ITERS bare|clocked|dup\n");
    MPI_Finalize();
    return 2;
  }
  const int count = atoi(argv[1]), iters = atoi(argv[2]), clocked = strcmp(argv[3], "clocked") == 0;
  MPI_Comm comm = MPI_COMM_WORLD;
  if (strcmp(argv[3], "dup") == 0) {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  }
  double *in = malloc((size_t)count * sizeof *in), *out = malloc((size_t)count * sizeof *out);
  double *times = malloc((size_t)iters * sizeof *times);
  if (!in || !out || !times) MPI_Abort(MPI_COMM_WORLD, 1);
  for (int i = 0; i < count; ++i) in[i] = 1e-3 * i + rank;
  double reads = 0; /* keeps the clocked reads from being optimised away */
  for (int it = 0; it < iters; ++it) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    if (clocked) reads += MPI_Wtime();
    MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, comm);
    if (clocked) reads -= MPI_Wtime();
    double t = MPI_Wtime() - t0, slowest = 0;
    MPI_Reduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    times[it] = slowest;
  }
  if (rank == 0) {
    double sum = 0;
    for (int it = 0; it < iters; ++it) sum += times[it];
    qsort(times, (size_t)iters, sizeof *times, cmp);
    printf("{\"mode\":\"%s\",\"ranks\":%d,\"bytes_per_rank\":%zu,\"iters\":%d,\"mean_s\":%.9f,"
           "\"median_s\":%.9f,\"min_s\":%.9f,\"reads_nonzero\":%d}\n",
           argv[3], size, (size_t)count * sizeof(double), iters, sum / iters, times[iters / 2], times[0],
           reads != 0);
  }
  if (comm != MPI_COMM_WORLD) MPI_Comm_free(&comm);
  free(in);
  free(out);
  free(times);
  MPI_Finalize();
  return 0;
}
