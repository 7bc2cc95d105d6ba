/* Checks how SMPI charges compute: one simulated rank compresses and decompresses a field
 * with zcoll's codec (one thread), K times, and each call is timed three ways:
 *   sim_s   MPI_Wtime() before and after: the SIMULATED time SMPI charged for the call
 *   cpu_s   the thread's CPU clock (what SMPI measures; not slowed by other processes)
 *   wall_s  the monotonic clock (slowed when other processes share the cores)
 * With smpi/host-speed equal to the host's speed in the platform, sim_s should equal cpu_s.
 * Built and run by calibrate.sh (smpicc, against the smpicc build's libzcoll.a).
 *   smpirun -np 1 ... calibrate FILE [--eb REL] [--repeat K]        prints one JSON line */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "zcoll.h"

/* smpicc's smpi_helpers.h turns clock_gettime(a, b) into the simulated clock; the
 * parenthesised name calls the real one. */
static double clock_s(clockid_t id) {
  struct timespec ts;
  (clock_gettime)(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const char *path = NULL;
  double eb = 1e-4;
  int repeat = 7;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--eb") && i + 1 < argc) eb = atof(argv[++i]);
    else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atoi(argv[++i]);
    else path = argv[i];
  }
  if (!path || repeat < 1 || repeat > 100) {
    fprintf(stderr, "usage: calibrate FILE.f32|FILE.f64 [--eb REL] [--repeat K]\n");
    MPI_Finalize();
    return 2;
  }
  const size_t plen = strlen(path);
  const int f64 = plen > 4 && !strcmp(path + plen - 4, ".f64");
  const zcoll_dtype dt = f64 ? ZCOLL_FLOAT64 : ZCOLL_FLOAT32;
  const size_t es = f64 ? 8 : 4;
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "calibrate: cannot open %s\n", path);
    MPI_Finalize();
    return 1;
  }
  fseek(f, 0, SEEK_END);
  const size_t bytes = (size_t)ftell(f), n = bytes / es;
  fseek(f, 0, SEEK_SET);
  void *x = malloc(bytes), *y = malloc(bytes);
  const size_t cap = zcoll_codec_bound(n, dt);
  unsigned char *buf = malloc(cap);
  if (!x || !y || !buf || fread(x, es, n, f) != n) {
    fprintf(stderr, "calibrate: cannot read %s\n", path);
    MPI_Finalize();
    return 1;
  }
  fclose(f);
  memset(y, 0, bytes);
  memset(buf, 0, cap); /* pages touched before timing */
  zcoll_codec_params p;
  zcoll_codec_params_init(&p);
  p.eb_mode = ZCOLL_EB_REL;
  p.eb = eb;
  p.threads = 1;
  double sim[2][100], cpu[2][100], wall[2][100];
  size_t size = 0;
  for (int k = 0; k <= repeat; ++k) { /* k = 0: warm-up, not kept */
    for (int what = 0; what < 2; ++what) {
      const double s0 = MPI_Wtime(), c0 = clock_s(CLOCK_THREAD_CPUTIME_ID), w0 = clock_s(CLOCK_MONOTONIC);
      const int rc = what == 0 ? zcoll_compress(&p, dt, x, n, buf, cap, &size, NULL)
                               : zcoll_decompress(buf, size, dt, y, n, 1);
      const double c1 = clock_s(CLOCK_THREAD_CPUTIME_ID), w1 = clock_s(CLOCK_MONOTONIC), s1 = MPI_Wtime();
      if (rc != ZCOLL_SUCCESS) {
        fprintf(stderr, "calibrate: %s\n", zcoll_strerror(rc));
        MPI_Finalize();
        return 1;
      }
      if (k > 0) {
        sim[what][k - 1] = s1 - s0;
        cpu[what][k - 1] = c1 - c0;
        wall[what][k - 1] = w1 - w0;
      }
    }
  }
  const double gb = (double)bytes / 1e9;
  printf("{\"input\":\"%s\",\"bytes\":%zu,\"eb\":%g,\"ratio\":%.3f,\"repeat\":%d", path, bytes, eb,
         (double)bytes / (double)size, repeat);
  const char *names[2] = {"compress", "decompress"};
  for (int what = 0; what < 2; ++what) {
    const double s = median(sim[what], repeat), c = median(cpu[what], repeat), w = median(wall[what], repeat);
    printf(",\"%s\":{\"sim_s\":%.6f,\"cpu_s\":%.6f,\"wall_s\":%.6f,\"sim_over_cpu\":%.4f,\"sim_GBps\":%.3f,"
           "\"cpu_GBps\":%.3f,\"wall_GBps\":%.3f}",
           names[what], s, c, w, s / c, gb / s, gb / c, gb / w);
  }
  printf("}\n");
  free(x);
  free(y);
  free(buf);
  MPI_Finalize();
  return 0;
}
