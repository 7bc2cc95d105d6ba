/* A rank that is really out of memory, not a test hook: the last rank lowers its address
 * space limit (setrlimit RLIMIT_AS) to 32 MiB above what it uses, then every rank calls a
 * compressed collective whose work buffers need several times that. Every rank must return
 * ZCOLL_ERR_NO_MEMORY, none may wait for the others, zcoll_error_detail() must name the rank,
 * and once the limit is lifted the same communicator must give results within the bound.
 * Each call runs under alarm(): a hang ends the program with a message.
 *
 *   zcoll_mpi_out_of_memory_tests   (2 or more ranks; cesm_TS f32 tiled to 64 MiB per rank)
 *
 * Not under AddressSanitizer: its shadow memory and allocator do not live with RLIMIT_AS. */
#define _POSIX_C_SOURCE 200809L /* alarm, write, sysconf, setrlimit under -std=c99 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zcoll.h>

#include "c_test.h"

#define N ((size_t)16 << 20) /* floats per rank */
#define CALL_SECONDS 30

static void on_alarm(int sig) {
  static const char msg[] = "FAIL: test_out_of_memory: a call did not return in time (deadlock?)\n";
  (void)sig;
  if (write(2, msg, sizeof msg - 1) < 0) _exit(3);
  _exit(2);
}

static long vm_bytes(void) {
  long pages = -1;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    if (fscanf(f, "%ld", &pages) != 1) pages = -1;
    fclose(f);
  }
  return pages < 0 ? -1 : pages * sysconf(_SC_PAGESIZE);
}

/* The field, repeated to n values, scaled per rank so that the ranks' data differ. */
static float *tiled_field(size_t n, int rank) {
  size_t len = 0, i;
  float *field = load_field(&len), *v = NULL;
  if (len > 0) v = (float *)malloc(n * sizeof(float));
  for (i = 0; v && i < n; ++i) v[i] = field[i % len] * (float)(1 + rank % 3);
  free(field);
  return v;
}

static int limit_address_space(rlim_t bytes) {
  struct rlimit r;
  if (getrlimit(RLIMIT_AS, &r)) return -1;
  r.rlim_cur = bytes;
  return setrlimit(RLIMIT_AS, &r);
}

/* algorithm: ZCOLL_ALGO_RING or ZCOLL_ALGO_RECURSIVE_DOUBLING for the allreduce. */
static void run(int algorithm, int size, const float *in, float *out) {
  zcoll_config cfg;
  zcoll_comm zc = NULL;
  zcoll_stats st;
  int rc, lo, hi;
  const int limited = g_rank == size - 1;
  char who[32];
  size_t i, bad = 0;
  double worst = 0, bound;
  zcoll_config_init(&cfg);
  cfg.codec.eb_mode = ZCOLL_EB_REL;
  cfg.codec.eb = 1e-4;
  cfg.algorithm = algorithm;
  cfg.decision = ZCOLL_DECIDE_COMPRESS;
  cfg.codec.threads = 1; /* no OpenMP thread stacks to map under the limit */
  CHECK(zcoll_comm_create(MPI_COMM_WORLD, &cfg, &zc) == ZCOLL_SUCCESS);
  if (!zc) return;
  MPI_Barrier(MPI_COMM_WORLD);
  if (limited) CHECK(limit_address_space((rlim_t)vm_bytes() + ((rlim_t)32 << 20)) == 0);
  alarm(CALL_SECONDS);
  rc = zcoll_allreduce(in, out, (int)N, MPI_FLOAT, MPI_SUM, zc);
  alarm(0);
  CHECK(rc == ZCOLL_ERR_NO_MEMORY);
  snprintf(who, sizeof who, "rank %d ", size - 1);
  CHECK(strstr(zcoll_error_detail(), who) != NULL);
  if (g_rank == 0) printf("algorithm %s, limited: %s; detail: %s\n", zcoll_algorithm_name(algorithm),
                          zcoll_strerror(rc), zcoll_error_detail());
  lo = hi = rc;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  CHECK(lo == hi);
  if (limited) CHECK(limit_address_space(RLIM_INFINITY) == 0);
  alarm(CALL_SECONDS);
  rc = zcoll_allreduce(in, out, (int)N, MPI_FLOAT, MPI_SUM, zc);
  alarm(0);
  CHECK(rc == ZCOLL_SUCCESS);
  CHECK(zcoll_last_stats(zc, &st) == ZCOLL_SUCCESS && st.compressed == 1);
  /* The ranks' inputs are the field times 1, 2 or 3: the exact sum is the field times their
   * total. SUM is within p x eb_abs (plus float rounding), zcoll.h. */
  {
    double scale = 0;
    int r;
    for (r = 0; r < size; ++r) scale += 1 + r % 3;
    bound = size * st.eb_abs * (1 + 1e-5);
    for (i = 0; i < N; ++i) {
      const double exact = (double)in[i] / (1 + g_rank % 3) * scale;
      const double err = fabs((double)out[i] - exact);
      if (err > worst) worst = err;
      if (!(err <= bound + 1e-6 * fabs(exact))) ++bad;
    }
  }
  CHECK(bad == 0);
  if (g_rank == 0) printf("algorithm %s, limit lifted: %s, max error %.3g (bound %.3g)\n",
                          zcoll_algorithm_name(algorithm), zcoll_strerror(rc), worst, bound);
  CHECK(zcoll_comm_free(&zc) == ZCOLL_SUCCESS);
}

int main(int argc, char **argv) {
  int size, total;
  float *in, *out;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
#if defined(__SANITIZE_ADDRESS__)
  if (g_rank == 0) printf("SKIPPED: built with AddressSanitizer, which does not run under RLIMIT_AS\n");
  MPI_Finalize();
  return 0;
#endif
  signal(SIGALRM, on_alarm);
  in = tiled_field(N, g_rank);
  out = (float *)malloc(N * sizeof(float));
  CHECK(in != NULL && out != NULL && vm_bytes() > 0);
  if (in && out && vm_bytes() > 0) {
    run(ZCOLL_ALGO_RING, size, in, out);
    run(ZCOLL_ALGO_RECURSIVE_DOUBLING, size, in, out);
  }
  free(in);
  free(out);
  MPI_Allreduce(&g_fail, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0) printf("%s: %d failed checks on %d ranks\n", total ? "FAILED" : "PASSED", total, size);
  MPI_Finalize();
  return total ? 1 : 0;
}
