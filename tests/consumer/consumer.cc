// A user of an installed zcoll, in C++17 with MPI: each rank compresses its own array
// with the chunk-at-a-time writer, checks that the stream equals zcoll_compress's,
// decompresses it chunk by chunk with the reader and checks the error bound; the ranks
// agree on the outcome with MPI_Allreduce. Then a compressed zcoll_bcast. Built against zcoll::zcoll and zcoll::zcoll_static.
#include <zcoll.h>
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace {

bool ok(int err, const char *what) {
  if (err != ZCOLL_SUCCESS) std::fprintf(stderr, "consumer.cc: %s: %s (%d)\n", what, zcoll_strerror(err), err);
  return err == ZCOLL_SUCCESS;
}

template <class T>
bool roundtrip(int rank, double eb) {
  constexpr zcoll_dtype dtype = std::is_same_v<T, double> ? ZCOLL_FLOAT64 : ZCOLL_FLOAT32;
  const size_t n = 3 * 1024 + 5;
  std::vector<T> in(n), out(n);
  for (size_t i = 0; i < n; i++)
    in[i] = static_cast<T>(rank + 50.0 * std::sin(0.02 * double(i)) + 0.5 * std::cos(1.3 * double(i)));

  zcoll_codec_params p;
  zcoll_codec_params_init(&p);
  p.eb_mode = ZCOLL_EB_ABS;
  p.eb = eb;
  p.chunk_len = 1024;  // several chunks
  p.threads = 1;

  std::vector<unsigned char> whole(zcoll_codec_bound(n, dtype)), chunked(whole.size());
  size_t whole_size = 0, chunked_size = 0;
  double eb_abs = 0;
  if (!ok(zcoll_compress(&p, dtype, in.data(), n, whole.data(), whole.size(), &whole_size, &eb_abs),
          "zcoll_compress"))
    return false;

  zcoll_writer *w = nullptr;
  if (!ok(zcoll_writer_begin(&p, dtype, in.data(), n, chunked.data(), chunked.size(), &w), "zcoll_writer_begin"))
    return false;
  for (int done = 0; !done;) {
    if (!ok(zcoll_writer_next(w, &done), "zcoll_writer_next")) {
      zcoll_writer_abort(&w);
      return false;
    }
  }
  if (!ok(zcoll_writer_finish(&w, &chunked_size), "zcoll_writer_finish")) return false;
  if (chunked_size != whole_size || std::memcmp(whole.data(), chunked.data(), whole_size) != 0) {
    std::fprintf(stderr, "consumer.cc: writer stream (%zu B) differs from zcoll_compress (%zu B)\n",
                 chunked_size, whole_size);
    return false;
  }

  zcoll_reader *r = nullptr;
  if (!ok(zcoll_reader_open(whole.data(), whole_size, &r), "zcoll_reader_open")) return false;
  const zcoll_stream_info *info = zcoll_reader_info(r);
  bool good = info && info->count == n && info->dtype == dtype;
  for (size_t k = 0; good && k < info->nchunks; k++) good = ok(zcoll_reader_chunk(r, k, out.data()), "zcoll_reader_chunk");
  zcoll_reader_close(&r);
  if (!good) return false;

  double max_err = 0;
  for (size_t i = 0; i < n; i++) {
    const double e = std::fabs(double(in[i]) - double(out[i]));
    if (!(e <= max_err)) max_err = e;
  }
  if (rank == 0)
    std::printf("%s eb=%g: ratio=%.2f max_err/eb=%.3f\n", dtype == ZCOLL_FLOAT64 ? "float64" : "float32", eb,
                double(n * sizeof(T)) / double(whole_size), max_err / eb_abs);
  if (!(max_err <= eb_abs)) {
    std::fprintf(stderr, "consumer.cc: error bound violated: %.17g > %.17g\n", max_err, eb_abs);
    return false;
  }
  return true;
}

// zcoll_bcast of a double array from rank 0, big enough to be compressed.
bool bcast_check(int rank) {
  const int n = 50000;
  const double eb = 1e-6;
  auto value = [](int i) { return 1e3 * std::sin(1e-4 * i) + 1e-3 * std::cos(0.7 * i); };
  std::vector<double> buf(n, -1.0);
  if (rank == 0)
    for (int i = 0; i < n; i++) buf[i] = value(i);
  zcoll_config cfg;
  zcoll_config_init(&cfg);
  cfg.codec.eb_mode = ZCOLL_EB_ABS;
  cfg.codec.eb = eb;
  zcoll_comm zc = nullptr;
  if (!ok(zcoll_comm_create(MPI_COMM_WORLD, &cfg, &zc), "zcoll_comm_create")) return false;
  bool good = ok(zcoll_bcast(buf.data(), n, MPI_DOUBLE, 0, zc), "zcoll_bcast");
  double max_err = 0;
  for (int i = 0; good && i < n; i++) {
    const double e = std::fabs(buf[i] - value(i));
    if (!(e <= max_err)) max_err = e;
  }
  zcoll_stats st{};
  good = good && ok(zcoll_last_stats(zc, &st), "zcoll_last_stats");
  good = ok(zcoll_comm_free(&zc), "zcoll_comm_free") && good;
  if (rank == 1 || rank == 0)
    std::printf("rank %d: zcoll_bcast %d doubles: compressed=%d max_err/eb=%.3f\n", rank, n, st.compressed,
                max_err / eb);
  if (!(max_err <= eb)) {
    std::fprintf(stderr, "consumer.cc: zcoll_bcast error bound violated on rank %d: %.17g > %g\n", rank, max_err, eb);
    return false;
  }
  return good;
}

}  // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int bad = std::string(zcoll_version_string()) != std::to_string(ZCOLL_VERSION_MAJOR) + "." +
                                                      std::to_string(ZCOLL_VERSION_MINOR) + "." +
                                                      std::to_string(ZCOLL_VERSION_PATCH);
  if (bad) std::fprintf(stderr, "consumer.cc: library version %s differs from the header\n", zcoll_version_string());
  bad |= !roundtrip<float>(rank, 1e-3);
  bad |= !roundtrip<double>(rank, 1e-7);
  bad |= !bcast_check(rank);
  int any_bad = 0;
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) std::printf("consumer.cc (%d ranks): %s\n", size, any_bad ? "FAILED" : "OK");
  MPI_Finalize();
  return any_bad ? 1 : 0;
}
