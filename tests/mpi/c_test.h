/* Shared by the C99 MPI test programs: CHECK(cond) counts and reports a failure on this
 * rank and goes on (main sums g_fail over the ranks at the end); load_field reads the
 * cesm_TS field of data/. */
#ifndef ZCOLL_TESTS_C_TEST_H
#define ZCOLL_TESTS_C_TEST_H
#include <stdio.h>
#include <stdlib.h>

static int g_rank = 0, g_fail = 0;

static void check(int ok, const char *file, int line, const char *what) {
  if (!ok) {
    ++g_fail;
    fprintf(stderr, "[rank %d] FAIL %s:%d %s\n", g_rank, file, line, what);
    fflush(stderr);
  }
}
#define CHECK(cond) check((cond) != 0, __FILE__, __LINE__, #cond)

/* The whole field (malloc'd; *len values), or NULL. */
static float *load_field(size_t *len) {
  const char *path = ZCOLL_TEST_DATA_DIR "/cesm_TS_10x192x288.f32";
  FILE *f = fopen(path, "rb");
  float *v = NULL;
  long bytes;
  *len = 0;
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  bytes = ftell(f);
  fseek(f, 0, SEEK_SET);
  if (bytes > 0) v = (float *)malloc((size_t)bytes);
  if (v) *len = fread(v, sizeof(float), (size_t)bytes / sizeof(float), f);
  fclose(f);
  return v;
}

#endif
