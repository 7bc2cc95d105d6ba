/* Link check for bench/netem/run.sh: rank 0 ping-pongs a message with every other rank in
 * turn, timing each round trip, and prints one line per pair with the one-way bandwidth
 * (2 x BYTES per round trip) of the median and of the fastest round trip, in Mbit/s:
 *   pingpong 0 1 bytes 16777216 reps 6 median_mbit_s 921.3 best_mbit_s 934.0
 * Usage: pingpong [BYTES [REPS]]   (defaults 16 MiB, 6 round trips after one warm-up) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long bytes = argc > 1 ? atol(argv[1]) : 16L << 20;
  int reps = argc > 2 ? atoi(argv[2]) : 6;
  if (bytes < 1 || bytes > (1L << 30) || reps < 1 || reps > 1000) {
    if (rank == 0) fprintf(stderr, "pingpong: bad arguments\n");
    MPI_Finalize();
    return 2;
  }
  char* buf = malloc((size_t)bytes);
  double* t = malloc(sizeof(double) * (size_t)reps);
  if (!buf || !t) MPI_Abort(MPI_COMM_WORLD, 1);
  memset(buf, rank + 1, (size_t)bytes);
  for (int peer = 1; peer < size; ++peer) {
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = -1; i < reps; ++i) { /* i == -1: warm-up (connection set-up) */
      const double t0 = MPI_Wtime();
      if (rank == 0) {
        MPI_Send(buf, (int)bytes, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
        MPI_Recv(buf, (int)bytes, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == peer) {
        MPI_Recv(buf, (int)bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, (int)bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
      }
      if (i >= 0) t[i] = MPI_Wtime() - t0;
    }
    if (rank == 0) {
      qsort(t, (size_t)reps, sizeof(double), cmp);
      const double med = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
      const double bits = 2.0 * (double)bytes * 8;
      printf("pingpong 0 %d bytes %ld reps %d median_mbit_s %.1f best_mbit_s %.1f\n", peer, bytes, reps,
             bits / med / 1e6, bits / t[0] / 1e6);
    }
  }
  free(buf);
  free(t);
  /* Into MPI_Finalize together, after the exit line run.sh watches for (--exit-line there). */
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("pingpong: exit status 0\n");
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
