// Prints one line per case: a digest of the stream and of the decompressed
// output. compare_isa.cmake runs it with the dispatched (AVX2) kernels and with
// ZCOLL_ISA=generic and requires identical output.
#include <cinttypes>

#include "test_util.h"

using namespace zt;

namespace {

uint64_t fnv1a(const void* p, size_t n, uint64_t h = 1469598103934665603ull) {
  const unsigned char* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) {
    h ^= b[i];
    h *= 1099511628211ull;
  }
  return h;
}

int failures = 0;

template <class T> void run(const std::string& name, const std::vector<T>& in, const zcoll_codec_params& p) {
  Compressed c = compress(p, in);
  if (c.rc != ZCOLL_SUCCESS) {
    std::printf("%s %s compress-error %d\n", name.c_str(), describe(p).c_str(), c.rc);
    ++failures;
    return;
  }
  std::vector<T> out;
  int rc = decompress(c.stream, in.size(), &out, 2);
  if (rc != ZCOLL_SUCCESS) {
    std::printf("%s %s decompress-error %d\n", name.c_str(), describe(p).c_str(), rc);
    ++failures;
    return;
  }
  if (!within_bound(in.data(), out.data(), in.size(), c.eb_abs)) {
    std::fprintf(stderr, "%s: bound violated\n", name.c_str());
    ++failures;
  }
  std::printf("%s %s %s n=%zu bytes=%zu stream=%016" PRIx64 " out=%016" PRIx64 "\n", name.c_str(), Dt<T>::name(),
              describe(p).c_str(), in.size(), c.stream.size(), fnv1a(c.stream.data(), c.stream.size()),
              fnv1a(out.data(), out.size() * sizeof(T)));
}

template <class T> void run_set(const std::string& name, const std::vector<T>& in, int ndims, const size_t* dims) {
  for (size_t cl : {size_t(0), size_t(32), size_t(4096)}) {
    for (int mode : {ZCOLL_EB_ABS, ZCOLL_EB_REL}) {
      for (double eb : {1e-2, 1e-4, 1e-6}) {
        double e = mode == ZCOLL_EB_ABS ? eb * std::min(1e300, std::max(1.0, finite_range(in.data(), in.size()))) : eb;
        for (int nd : {1, ndims}) {
          auto p = params(e, mode, cl, 2);
          if (nd >= 2) {
            p.ndims = nd;
            for (int d = 0; d < nd; ++d) p.dims[d] = dims[d];
          }
          run(name, in, p);
          if (ndims < 2) break;
        }
      }
    }
  }
}

// The linear-predictor codecs step four lanes together in AVX2 on chunks of 2048 values
// or more: chunks of 2048, of 3008 and of the default length (the synthetic sets have
// 9002 values, so some chunks have lanes of unequal length), at bounds where hits,
// misses and escapes each dominate.
template <class T> void run_lp(const std::string& name, const std::vector<T>& in) {
  const double range = std::min(1e300, std::max(1.0, finite_range(in.data(), in.size())));
  for (int codec : {ZCOLL_CODEC_LPBYTE, ZCOLL_CODEC_LPBIT}) {
    for (size_t cl : {size_t(0), size_t(2048), size_t(3008)}) {
      for (double rel : {1e-1, 1e-4, 1e-7, 1e-30}) {
        auto p = params(rel * range, ZCOLL_EB_ABS, cl, 2);
        p.codec = codec;
        run(name, in, p);
      }
    }
  }
}

template <class T> void synthetic() {
  const size_t dims3[3] = {8, 25, 30};
  run_set("normal", cast<T>(random_normal(6000, 1, 3, 2)), 3, dims3);
  run_set("uniform", cast<T>(random_uniform(6000, 2, -1e3, 1e3)), 3, dims3);
  const size_t dims2[2] = {13, 17};
  for (auto& c : adversarial_cases<T>(13 * 17)) run_set(c.first, c.second, 2, dims2);
  for (double eb : {1e-3, 0.75}) run("quantizer_edges", quantizer_edges<T>(eb, 3000), params(eb, ZCOLL_EB_ABS, 64, 2));
  run_lp("normal", cast<T>(random_normal(9002, 1, 3, 2)));
  for (auto& c : adversarial_cases<T>(9002)) run_lp(c.first, c.second);
}

}  // namespace

int main() {
  for (const auto& s : available_fields()) {
    const Field& f = load_field(s, 100000);
    if (s.dtype == ZCOLL_FLOAT32) {
      run_set(s.name, f.f32, s.ndims, f.dims);
      run_lp(s.name, f.f32);
    } else {
      run_set(s.name, f.f64, s.ndims, f.dims);
      run_lp(s.name, f.f64);
    }
  }
  synthetic<float>();
  synthetic<double>();
  return failures ? 1 : 0;
}
