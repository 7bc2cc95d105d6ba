// Best decompression time of one field, for comparing two builds' libzcoll_codec.a (docs/results.md,
// the restructure of issue 16). f64 input; the f32 variant swaps double/float and ZCOLL_FLOAT64/32.
//   gcc -O2 decompress_best.c -Iinclude -DZCOLL_CODEC_ONLY BUILD/src/libzcoll_codec.a -fopenmp -lstdc++ -lm
//   ./a.out FIELD.f64 REPS
#include <stdio.h>
#include <stdlib.h>
#include <zcoll.h>
#include <time.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
int main(int argc, char** argv) {
  FILE* f = fopen(argv[1], "rb"); fseek(f, 0, SEEK_END); long sz = ftell(f); fseek(f, 0, SEEK_SET);
  double* x = malloc(sz); fread(x, 1, sz, f); fclose(f);
  size_t n = sz / 8;
  zcoll_codec_params p; zcoll_codec_params_init(&p); p.eb_mode = ZCOLL_EB_REL; p.eb = 1e-4; p.threads = 1;
  size_t cap = zcoll_codec_bound(n, ZCOLL_FLOAT64), len = 0; void* c = malloc(cap);
  if (zcoll_compress(&p, ZCOLL_FLOAT64, x, n, c, cap, &len, NULL)) return 1;
  double* y = malloc(sz);
  int reps = atoi(argv[2]);
  double best = 1e9;
  for (int r = 0; r < reps; ++r) { double t0 = now(); if (zcoll_decompress(c, len, ZCOLL_FLOAT64, y, n, 1)) return 2; double t = now() - t0; if (t < best) best = t; }
  printf("%.3f GB/s\n", sz / best / 1e9);
  return 0;
}
