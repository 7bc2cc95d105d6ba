/* One field, 1-D, REL 1e-4, one thread: best-of-REPS compression and decompression speed
 * (GB/s of raw values, warm buffers), as one JSON line. Linked against whichever
 * libzcoll_codec.so.0 LD_LIBRARY_PATH names, so that two builds can be alternated. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zcoll.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc != 3) return fprintf(stderr, "usage: %s FILE.f32|FILE.f64 REPS\n", argv[0]), 2;
  const int f64 = strstr(argv[1], ".f64") != NULL, reps = atoi(argv[2]);
  FILE* fp = fopen(argv[1], "rb");
  if (!fp) return perror(argv[1]), 1;
  fseek(fp, 0, SEEK_END);
  const size_t bytes = (size_t)ftell(fp);
  fseek(fp, 0, SEEK_SET);
  void* in = malloc(bytes);
  if (fread(in, 1, bytes, fp) != bytes) return 1;
  fclose(fp);
  const zcoll_dtype dt = f64 ? ZCOLL_FLOAT64 : ZCOLL_FLOAT32;
  const size_t n = bytes / (f64 ? 8 : 4), cap = zcoll_codec_bound(n, dt);
  zcoll_codec_params p;
  zcoll_codec_params_init(&p);
  p.eb_mode = ZCOLL_EB_REL;
  p.eb = 1e-4;
  p.threads = 1;
  void *s = malloc(cap), *out = malloc(bytes);
  size_t sz = 0;
  double bc = 1e30, bd = 1e30;
  for (int r = 0; r < reps; ++r) {
    double t = now();
    if (zcoll_compress(&p, dt, in, n, s, cap, &sz, NULL)) return 1;
    t = now() - t;
    bc = t < bc ? t : bc;
    t = now();
    if (zcoll_decompress(s, sz, dt, out, n, 1)) return 1;
    t = now() - t;
    bd = t < bd ? t : bd;
  }
  const char* name = strrchr(argv[1], '/');
  printf("{\"file\": \"%s\", \"ratio\": %.3f, \"comp_gbps\": %.3f, \"decomp_gbps\": %.3f}\n", name ? name + 1 : argv[1],
         (double)bytes / sz, bytes / bc / 1e9, bytes / bd / 1e9);
  return 0;
}
