// Prints one line per case: a digest of the stream and of the decompressed output,
// for every codec of the registry (codec_ids), and for fzl the streams that
// zcoll_combine and zcoll_combine_values produce.
//
// Two tests read it: compare_digests.cmake runs it with the dispatched (AVX2) kernels and
// with ZCOLL_ISA=generic and requires identical output; with --golden it covers only
// the fields of data/ (never ../shared, which not every machine has), and
// compare_digests.cmake requires the output to equal tests/golden/stream_digests.txt,
// so a restructure of the codec that changes one stream bit fails.
//
// Every stream is also compressed (and combined) with one thread and required to equal
// the two-thread stream that is printed: streams do not depend on the thread count.
#include <cinttypes>
#include <cstring>

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

// c compressed with p and one thread must be the two-thread stream `two`.
template <class T>
bool same_with_one_thread(const std::string& name, const std::vector<T>& in, zcoll_codec_params p,
                          const std::vector<unsigned char>& two) {
  p.threads = 1;
  Compressed one = compress(p, in);
  if (one.rc == ZCOLL_SUCCESS && one.stream == two) return true;
  std::printf("%s %s differs-with-one-thread\n", name.c_str(), describe(p).c_str());
  ++failures;
  return false;
}

template <class T> Compressed run(const std::string& name, const std::vector<T>& in, const zcoll_codec_params& p) {
  Compressed c = compress(p, in);
  if (c.rc != ZCOLL_SUCCESS) {
    std::printf("%s %s compress-error %d\n", name.c_str(), describe(p).c_str(), c.rc);
    ++failures;
    return c;
  }
  same_with_one_thread(name, in, p, c.stream);
  std::vector<T> out;
  int rc = decompress(c.stream, in.size(), &out, 2);
  if (rc != ZCOLL_SUCCESS) {
    std::printf("%s %s decompress-error %d\n", name.c_str(), describe(p).c_str(), rc);
    ++failures;
    c.rc = rc;
    return c;
  }
  if (!within_bound(in.data(), out.data(), in.size(), c.eb_abs)) {
    std::fprintf(stderr, "%s: bound violated\n", name.c_str());
    ++failures;
  }
  std::printf("%s %s %s n=%zu bytes=%zu stream=%016" PRIx64 " out=%016" PRIx64 "\n", name.c_str(), Dt<T>::name(),
              describe(p).c_str(), in.size(), c.stream.size(), fnv1a(c.stream.data(), c.stream.size()),
              fnv1a(out.data(), out.size() * sizeof(T)));
  return c;
}

// zcoll_combine(op, a, b) and zcoll_combine_values(op, x, b) for every op, with two
// threads and with one; prints one digest of the six two-thread results.
template <class T>
void run_combine(const std::string& name, const std::vector<T>& x, const std::vector<unsigned char>& a,
                 const std::vector<unsigned char>& b, const zcoll_codec_params& p) {
  const zcoll_dtype dt = Dt<T>::value;
  const size_t cap = zcoll_codec_bound(x.size(), dt);
  uint64_t digest = fnv1a(nullptr, 0);
  size_t total = 0;
  for (zcoll_op op : {ZCOLL_OP_SUM, ZCOLL_OP_MIN, ZCOLL_OP_MAX}) {
    for (bool values : {false, true}) {
      std::vector<unsigned char> out[2];
      int rc[2];
      for (int threads : {2, 1}) {
        std::vector<unsigned char>& o = out[threads - 1];
        o.assign(cap, 0);
        size_t size = 0;
        rc[threads - 1] = values
            ? zcoll_combine_values(op, x.data(), x.size(), dt, b.data(), b.size(), o.data(), cap, &size, threads)
            : zcoll_combine(op, a.data(), a.size(), b.data(), b.size(), o.data(), cap, &size, threads);
        o.resize(size);
      }
      if (rc[0] != ZCOLL_SUCCESS || rc[1] != ZCOLL_SUCCESS || out[0] != out[1]) {
        std::printf("%s %s op=%d %s error %d/%d or differs-with-one-thread\n", name.c_str(), describe(p).c_str(),
                    static_cast<int>(op), values ? "combine_values" : "combine", rc[1], rc[0]);
        ++failures;
      }
      digest = fnv1a(out[1].data(), out[1].size(), digest);
      total += out[1].size();
    }
  }
  std::printf("%s %s %s combined bytes=%zu streams=%016" PRIx64 "\n", name.c_str(), Dt<T>::name(),
              describe(p).c_str(), total, digest);
}

// Every codec, chunk lengths, ABS and REL bounds, and (fzl, the only codec that predicts
// across dimensions) the shape hint; for fzl with ABS bounds also the combinations of
// the stream with that of the input rotated by a third.
template <class T> void run_set(const std::string& name, const std::vector<T>& in, int ndims, const size_t* dims) {
  std::vector<T> rotated(in);
  std::rotate(rotated.begin(), rotated.begin() + rotated.size() / 3, rotated.end());
  for (int codec : codec_ids()) {
    for (size_t cl : {size_t(0), size_t(32), size_t(4096)}) {
      for (int mode : {ZCOLL_EB_ABS, ZCOLL_EB_REL}) {
        for (double eb : {1e-2, 1e-4, 1e-6}) {
          double e =
              mode == ZCOLL_EB_ABS ? eb * std::min(1e300, std::max(1.0, finite_range(in.data(), in.size()))) : eb;
          for (int nd : {1, ndims}) {
            auto p = params(e, mode, cl, 2);
            p.codec = codec;
            if (nd >= 2) {
              p.ndims = nd;
              for (int d = 0; d < nd; ++d) p.dims[d] = dims[d];
            }
            Compressed a = run(name, in, p);
            if (codec == ZCOLL_CODEC_FZL && mode == ZCOLL_EB_ABS && a.rc == ZCOLL_SUCCESS) {
              Compressed b = compress(p, rotated);
              if (b.rc == ZCOLL_SUCCESS) run_combine(name, rotated, a.stream, b.stream, p);
            }
            if (ndims < 2 || codec != ZCOLL_CODEC_FZL) break;
          }
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

// Shape hints whose runs of one Lorenzo term set end everywhere (lorenzo.h, NdRuns): rows
// shorter and longer than a chunk, extents of 1 and 2, planes longer than the short chunks
// (where the 3-D cube never fits), chunks that start mid-row. A smooth field with a little noise, so
// that residuals are small but not zero.
template <class T> void nd_shapes() {
  const size_t shapes[][3] = {{2, 3, 0},   {1, 500, 0},  {500, 1, 0}, {2, 2, 2},    {3, 1, 200},
                              {7, 2, 150}, {40, 41, 0},  {1, 1, 777}, {9, 130, 17}, {3, 70, 90}};
  for (const auto& d : shapes) {
    const int nd = d[2] ? 3 : 2;
    const size_t n = d[0] * d[1] * (nd == 3 ? d[2] : 1);
    std::vector<double> v = random_normal(n, 5 + n, 0, 0.01);
    for (size_t i = 0; i < n; ++i) v[i] += std::sin(0.05 * static_cast<double>(i % 97)) + 1e-3 * static_cast<double>(i);
    const std::vector<T> in = cast<T>(v);
    const std::string shape = std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
    auto hinted = [&](double eb, size_t chunk_len) {
      auto p = params(eb, ZCOLL_EB_ABS, chunk_len, 2);
      p.ndims = nd;
      for (int k = 0; k < nd; ++k) p.dims[k] = d[k];
      return p;
    };
    for (size_t cl : {size_t(0), size_t(32), size_t(96), size_t(1024)}) run("nd_shape_" + shape, in, hinted(1e-3, cl));
    // Wide integers (|q| up to 1e8, beyond float's exact 2^24), values stored exactly
    // (spikes beyond the quantizer's range, float rounding, NaN and Inf) amid the runs.
    std::vector<T> wide(n);
    for (size_t i = 0; i < n; ++i) {
      double x = 2e4 * std::cos(0.1 * static_cast<double>(i)) + v[i];
      if (i % 13 == 0) x = 1e9;
      wide[i] = static_cast<T>(x);
      if (i % 101 == 5) wide[i] = i % 2 ? std::numeric_limits<T>::quiet_NaN() : std::numeric_limits<T>::infinity();
    }
    for (size_t cl : {size_t(0), size_t(96)}) run("nd_wide_" + shape, wide, hinted(1e-4, cl));
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
  nd_shapes<T>();
}

}  // namespace

int main(int argc, char** argv) {
  const bool golden = argc > 1 && std::strcmp(argv[1], "--golden") == 0;
  for (const auto& s : available_fields()) {
    if (golden && s.shared) continue;
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
