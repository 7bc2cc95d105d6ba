/* The public header compiles as C99 (-pedantic -Werror) and the codec works from C. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zcoll.h>

#define N 1000

/* C may pass any int where the header says zcoll_dtype or zcoll_op; the library (C++)
 * must reject these without using them as its enums first (a UBSan build reports that).
 * Returns 0 when every call is rejected with the right code. */
static int rejects_out_of_range_enums(const float *in, const unsigned char *stream, size_t size) {
  static const int dtypes[] = {0, 3, 9, 77, -1}, ops[] = {0, 4, 77, -1};
  unsigned char out[2 * N * sizeof(float) + 4096];
  float values[N];
  zcoll_codec_params p;
  zcoll_writer *w = NULL;
  size_t k, len = 0;
  zcoll_codec_params_init(&p);
  p.eb = 1e-3;
  for (k = 0; k < sizeof dtypes / sizeof dtypes[0]; ++k) {
    const zcoll_dtype d = (zcoll_dtype)dtypes[k];
    if (zcoll_codec_bound(N, d) != 0 ||
        zcoll_compress(&p, d, in, N, out, sizeof out, &len, NULL) != ZCOLL_ERR_DTYPE ||
        zcoll_writer_begin(&p, d, in, N, out, sizeof out, &w) != ZCOLL_ERR_DTYPE || w != NULL ||
        zcoll_decompress(stream, size, d, values, N, 1) != ZCOLL_ERR_DTYPE ||
        zcoll_combine_values(ZCOLL_OP_SUM, in, N, d, stream, size, out, sizeof out, &len, 1) != ZCOLL_ERR_DTYPE) {
      fprintf(stderr, "dtype %d was not rejected\n", dtypes[k]);
      return 1;
    }
  }
  for (k = 0; k < sizeof ops / sizeof ops[0]; ++k) {
    const zcoll_op op = (zcoll_op)ops[k];
    if (zcoll_combine(op, stream, size, stream, size, out, sizeof out, &len, 1) != ZCOLL_ERR_ARG ||
        zcoll_combine_values(op, in, N, ZCOLL_FLOAT32, stream, size, out, sizeof out, &len, 1) != ZCOLL_ERR_ARG) {
      fprintf(stderr, "op %d was not rejected\n", ops[k]);
      return 1;
    }
  }
  return 0;
}

int main(void) {
  float in[N], out[N];
  size_t i, cap, size = 0;
  double eb_abs = 0;
  unsigned char *stream;
  zcoll_codec_params p;
  zcoll_stream_info info;
  zcoll_writer *w = NULL;
  zcoll_reader *r = NULL;
  int rc, done = 0;

  for (i = 0; i < N; ++i) in[i] = (float)(sin(0.01 * (double)i) * 100.0);
  zcoll_codec_params_init(&p);
  p.eb = 1e-3;
  p.eb_mode = ZCOLL_EB_REL;
  p.chunk_len = 256;
  cap = zcoll_codec_bound(N, ZCOLL_FLOAT32);
  stream = (unsigned char *)malloc(cap);
  if (!stream) return 1;
  rc = zcoll_compress(&p, ZCOLL_FLOAT32, in, N, stream, cap, &size, &eb_abs);
  if (rc != ZCOLL_SUCCESS) { fprintf(stderr, "compress: %s\n", zcoll_strerror(rc)); return 1; }
  rc = zcoll_stream_inspect(stream, size, &info);
  if (rc != ZCOLL_SUCCESS || info.count != N || info.dtype != ZCOLL_FLOAT32 || info.nchunks != 4 ||
      info.stream_bytes != size) {
    fprintf(stderr, "inspect: %s\n", zcoll_strerror(rc));
    return 1;
  }
  rc = zcoll_decompress(stream, size, ZCOLL_FLOAT32, out, N, 0);
  if (rc != ZCOLL_SUCCESS) { fprintf(stderr, "decompress: %s\n", zcoll_strerror(rc)); return 1; }
  for (i = 0; i < N; ++i) {
    if (fabs((double)in[i] - (double)out[i]) > eb_abs) { fprintf(stderr, "bound violated at %zu\n", i); return 1; }
  }
  /* writer and reader */
  rc = zcoll_writer_begin(&p, ZCOLL_FLOAT32, in, N, stream, cap, &w);
  if (rc != ZCOLL_SUCCESS) return 1;
  while (!done) {
    rc = zcoll_writer_next(w, &done);
    if (rc != ZCOLL_SUCCESS) { zcoll_writer_abort(&w); return 1; }
  }
  rc = zcoll_writer_finish(&w, &size);
  if (rc != ZCOLL_SUCCESS || w != NULL) return 1;
  memset(out, 0, sizeof out);
  rc = zcoll_reader_open(stream, size, &r);
  if (rc != ZCOLL_SUCCESS) return 1;
  for (i = zcoll_reader_info(r)->nchunks; i-- > 0;) {
    rc = zcoll_reader_chunk(r, i, out);
    if (rc != ZCOLL_SUCCESS) { zcoll_reader_close(&r); return 1; }
  }
  zcoll_reader_close(&r);
  for (i = 0; i < N; ++i) {
    if (fabs((double)in[i] - (double)out[i]) > eb_abs) return 1;
  }
  if (strlen(zcoll_strerror(ZCOLL_ERR_CORRUPT)) == 0) return 1;
  if (rejects_out_of_range_enums(in, stream, size)) return 1;
  free(stream);
  printf("c_api_smoke: ok (%s)\n", zcoll_version_string());
  return 0;
}
