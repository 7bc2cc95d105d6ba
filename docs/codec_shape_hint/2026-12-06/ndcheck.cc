// Random shapes, chunk lengths, bounds and fields (smooth, noisy, large, with specials):
// prints one digest line per case of the stream and the decompressed output.
#include <zcoll.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>
static uint64_t fnv(const void* p, size_t n, uint64_t h = 1469598103934665603ull) {
  const unsigned char* c = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) { h ^= c[i]; h *= 1099511628211ull; }
  return h;
}
template <class T> void one(std::mt19937_64& rng, int id) {
  std::uniform_int_distribution<int> nd(2, 3), ext(1, 70);
  size_t d[3] = {1, 1, 1};
  const int ndims = nd(rng);
  size_t n = 1;
  for (int k = 0; k < ndims; ++k) { d[k] = ext(rng); if (rng() % 4 == 0) d[k] = 1 + rng() % 3; n *= d[k]; }
  std::vector<T> x(n);
  std::normal_distribution<double> g(0, 1);
  const int kind = static_cast<int>(rng() % 4);
  const double scale = std::pow(10.0, static_cast<double>(rng() % 12) - 2);
  for (size_t i = 0; i < n; ++i) {
    double v = std::sin(0.03 * i) * scale + 0.01 * scale * g(rng);
    if (kind == 1) v = g(rng) * scale;
    if (kind == 2) v = (i % 7 == 0 ? 1e9 : 1.0) * std::cos(0.1 * i) * scale;
    x[i] = static_cast<T>(v);
    if (kind == 3 && rng() % 50 == 0) x[i] = (rng() % 2) ? NAN : INFINITY;
  }
  zcoll_codec_params p;
  zcoll_codec_params_init(&p);
  p.eb = std::pow(10.0, -static_cast<double>(rng() % 8)) * (kind == 2 ? 1.0 : scale);
  p.eb_mode = ZCOLL_EB_ABS;
  const size_t cls[] = {0, 32, 64, 96, 160, 1024, 4096};
  p.chunk_len = cls[rng() % 7];
  p.threads = 1;
  p.ndims = ndims;
  for (int k = 0; k < ndims; ++k) p.dims[k] = d[k];
  const zcoll_dtype dt = sizeof(T) == 4 ? ZCOLL_FLOAT32 : ZCOLL_FLOAT64;
  std::vector<unsigned char> s(zcoll_codec_bound(n, dt));
  size_t sz = 0;
  int rc = zcoll_compress(&p, dt, x.data(), n, s.data(), s.size(), &sz, nullptr);
  std::vector<T> y(n);
  int rc2 = rc ? -1 : zcoll_decompress(s.data(), sz, dt, y.data(), n, 1);
  std::printf("%d %zu %d %d %zu %016llx %016llx\n", id, sizeof(T), rc, rc2, sz, (unsigned long long)fnv(s.data(), sz),
              (unsigned long long)fnv(y.data(), n * sizeof(T)));
}
int main(int argc, char** argv) {
  const int cases = argc > 1 ? std::atoi(argv[1]) : 3000;
  std::mt19937_64 rng(12345);
  for (int i = 0; i < cases; ++i) { if (i % 2) one<float>(rng, i); else one<double>(rng, i); }
}
