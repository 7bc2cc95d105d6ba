/* STREAM-like copy bandwidth of this node, for the effective-thread model of run_scale.py
 * (README.md, "Multi-thread codec, modelled"). Copies a[] to b[] (256 MiB each by default)
 * with 1 .. T OpenMP threads, each thread its own contiguous share, first-touched by that
 * thread; best of 5. Prints one JSON line per thread count: bytes moved per second counted
 * as STREAM counts copy (read + write = 2 x the array), and as memcpy's bytes (the array).
 *
 *   gcc -O2 -fopenmp bench/smpi/membw.c -o /tmp/membw && /tmp/membw [MiB] [max_threads]
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  const size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 256;
  const int tmax = argc > 2 ? atoi(argv[2]) : omp_get_num_procs();
  const size_t n = mib << 20;
  char* a = malloc(n);
  char* b = malloc(n);
  if (!a || !b) return 1;
  for (int t = 1; t <= tmax; ++t) {
#pragma omp parallel num_threads(t)
    {
      const size_t id = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
      const size_t lo = n * id / nt, hi = n * (id + 1) / nt;
      memset(a + lo, (int)id + 1, hi - lo);
      memset(b + lo, 0, hi - lo);
    }
    double best = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
      const double t0 = omp_get_wtime();
#pragma omp parallel num_threads(t)
      {
        const size_t id = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
        const size_t lo = n * id / nt, hi = n * (id + 1) / nt;
        memcpy(b + lo, a + lo, hi - lo);
      }
      const double dt = omp_get_wtime() - t0;
      if (dt < best) best = dt;
    }
    printf("{\"threads\":%d,\"mib\":%zu,\"copy_s\":%.6f,\"stream_copy_GBps\":%.3f,\"memcpy_GBps\":%.3f,\"check\":%d}\n", t,
           mib, best, 2.0 * n / best / 1e9, (double)n / best / 1e9, b[n - 1]);
  }
  free(a);
  free(b);
  return 0;
}
