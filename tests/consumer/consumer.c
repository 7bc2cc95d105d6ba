/* A user of an installed zcoll, in C99: compress and decompress small arrays through the
 * codec API and check the error bound. Built by tests/consumer/CMakeLists.txt (against
 * zcoll::codec, zcoll::codec_static, and with ZCOLL_CONSUMER_MPI against zcoll::zcoll)
 * and by scripts/check_install.sh with pkg-config. With ZCOLL_CONSUMER_MPI it also runs a
 * compressed zcoll_allgather. Exit status 0 = all checks passed. */
#include <zcoll.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef ZCOLL_CONSUMER_MPI
#include <mpi.h>
#endif

#define N 10037 /* not a multiple of the 32-value block */

static int g_rank = 0; /* MPI rank (0 without MPI): only rank 0 prints */

static int fail(const char *what, int err) {
  fprintf(stderr, "consumer.c: %s: %s (%d)\n", what, zcoll_strerror(err), err);
  return 1;
}

static int roundtrip(zcoll_dtype dtype, int eb_mode, double eb, double offset) {
  const size_t esize = dtype == ZCOLL_FLOAT64 ? sizeof(double) : sizeof(float);
  const size_t cap = zcoll_codec_bound(N, dtype);
  unsigned char *in = malloc(N * esize), *out = malloc(N * esize), *stream = malloc(cap);
  double lo = INFINITY, hi = -INFINITY, max_err = 0.0, eb_abs = 0.0, want_eb_abs;
  size_t stream_size = 0, i;
  zcoll_codec_params params;
  zcoll_stream_info info;
  int err, bad = 0;

  if (!in || !out || !stream || cap == 0) { bad = fail("allocation or zcoll_codec_bound", 0); goto done; }
  for (i = 0; i < N; i++) {
    double v = offset + 100.0 * sin(0.01 * (double)i) + 3.0 * cos(0.37 * (double)i);
    if (dtype == ZCOLL_FLOAT64) ((double *)in)[i] = v; else ((float *)in)[i] = (float)v;
    v = dtype == ZCOLL_FLOAT64 ? ((double *)in)[i] : (double)((float *)in)[i];
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  zcoll_codec_params_init(&params);
  params.eb_mode = eb_mode;
  params.eb = eb;
  params.threads = 2;
  err = zcoll_compress(&params, dtype, in, N, stream, cap, &stream_size, &eb_abs);
  if (err) { bad = fail("zcoll_compress", err); goto done; }
  want_eb_abs = eb_mode == ZCOLL_EB_REL ? eb * (hi - lo) : eb;
  if (!(fabs(eb_abs - want_eb_abs) <= 1e-6 * want_eb_abs)) {
    fprintf(stderr, "consumer.c: eb_abs %.17g, expected %.17g\n", eb_abs, want_eb_abs);
    bad = 1;
    goto done;
  }
  err = zcoll_stream_inspect(stream, stream_size, &info);
  if (err) { bad = fail("zcoll_stream_inspect", err); goto done; }
  if (info.count != N || info.dtype != dtype || info.stream_bytes != stream_size) {
    fprintf(stderr, "consumer.c: stream info disagrees (count %zu, dtype %d, bytes %zu of %zu)\n",
            info.count, (int)info.dtype, info.stream_bytes, stream_size);
    bad = 1;
    goto done;
  }
  memset(out, 0xff, N * esize);
  err = zcoll_decompress(stream, stream_size, dtype, out, N, 0);
  if (err) { bad = fail("zcoll_decompress", err); goto done; }
  for (i = 0; i < N; i++) {
    double a = dtype == ZCOLL_FLOAT64 ? ((double *)in)[i] : (double)((float *)in)[i];
    double b = dtype == ZCOLL_FLOAT64 ? ((double *)out)[i] : (double)((float *)out)[i];
    double e = fabs(a - b);
    if (!(e <= max_err)) max_err = e; /* also catches NaN */
  }
  if (g_rank == 0)
    printf("%s %s eb=%g: eb_abs=%.6g ratio=%.2f max_err/eb=%.3f\n",
           dtype == ZCOLL_FLOAT64 ? "float64" : "float32", eb_mode == ZCOLL_EB_REL ? "rel" : "abs",
           eb, eb_abs, (double)(N * esize) / (double)stream_size, max_err / eb_abs);
  if (!(max_err <= eb_abs)) {
    fprintf(stderr, "consumer.c: error bound violated: max_err %.17g > eb_abs %.17g\n", max_err, eb_abs);
    bad = 1;
  }
done:
  free(in);
  free(out);
  free(stream);
  return bad;
}

#ifdef ZCOLL_CONSUMER_MPI
/* zcoll_allgather of 20000 floats per rank (above the default min_bytes, so compressed):
 * every element from every rank must be within eb of what that rank sent. */
static float field_value(int r, int i) { return (float)(r + 10.0 * sin(0.001 * i) + 0.1 * cos(0.3 * i)); }

static int allgather_check(int rank, int size) {
  const int n = 20000;
  const double eb = 1e-3;
  float *mine = malloc(sizeof(float) * (size_t)n), *all = malloc(sizeof(float) * (size_t)n * (size_t)size);
  zcoll_config cfg;
  zcoll_comm zc = NULL;
  zcoll_stats st;
  double max_err = 0.0;
  int err, i, r, bad = 0;

  if (!mine || !all) { free(mine); free(all); return fail("allocation", 0); }
  for (i = 0; i < n; i++) mine[i] = field_value(rank, i);
  zcoll_config_init(&cfg);
  cfg.codec.eb_mode = ZCOLL_EB_ABS;
  cfg.codec.eb = eb;
  err = zcoll_comm_create(MPI_COMM_WORLD, &cfg, &zc);
  if (err) { free(mine); free(all); return fail("zcoll_comm_create", err); }
  err = zcoll_allgather(mine, n, MPI_FLOAT, all, n, MPI_FLOAT, zc);
  if (err) {
    bad = fail("zcoll_allgather", err);
  } else {
    for (r = 0; r < size; r++)
      for (i = 0; i < n; i++) {
        double e = fabs((double)all[(size_t)r * n + i] - (double)field_value(r, i));
        if (!(e <= max_err)) max_err = e;
      }
    memset(&st, 0, sizeof st);
    err = zcoll_last_stats(zc, &st);
    if (err) bad = fail("zcoll_last_stats", err);
    if (rank == 0)
      printf("zcoll_allgather %d ranks x %d floats: compressed=%d wire/raw=%.3f max_err/eb=%.3f\n", size, n,
             st.compressed, st.raw_bytes ? (double)st.wire_bytes / (double)st.raw_bytes : 0.0, max_err / eb);
    if (!(max_err <= eb)) {
      fprintf(stderr, "consumer.c: zcoll_allgather error bound violated: %.17g > %g\n", max_err, eb);
      bad = 1;
    }
  }
  err = zcoll_comm_free(&zc);
  if (err) bad |= fail("zcoll_comm_free", err);
  free(mine);
  free(all);
  return bad;
}
#endif

int main(int argc, char **argv) {
  char want[32];
  int bad = 0, rank = 0;
#ifdef ZCOLL_CONSUMER_MPI
  int any_bad = 0, size = 1;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  g_rank = rank;
#else
  (void)argc;
  (void)argv;
#endif
  snprintf(want, sizeof want, "%d.%d.%d", ZCOLL_VERSION_MAJOR, ZCOLL_VERSION_MINOR, ZCOLL_VERSION_PATCH);
  if (strcmp(zcoll_version_string(), want) != 0) {
    fprintf(stderr, "consumer.c: library version %s, header %s\n", zcoll_version_string(), want);
    bad = 1;
  }
  bad |= roundtrip(ZCOLL_FLOAT32, ZCOLL_EB_ABS, 1e-2, 300.0 + rank);
  bad |= roundtrip(ZCOLL_FLOAT32, ZCOLL_EB_REL, 1e-4, rank);
  bad |= roundtrip(ZCOLL_FLOAT64, ZCOLL_EB_ABS, 1e-6, -rank);
  bad |= roundtrip(ZCOLL_FLOAT64, ZCOLL_EB_REL, 1e-3, 1e3);
#ifdef ZCOLL_CONSUMER_MPI
  bad |= allgather_check(rank, size);
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  bad = any_bad;
  MPI_Finalize();
#endif
  if (rank == 0) printf("consumer.c: %s\n", bad ? "FAILED" : "OK");
  return bad ? 1 : 0;
}
