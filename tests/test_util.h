// Shared helpers for the zcoll codec tests: data sets (real fields, random,
// adversarial), guarded buffers, and the element-wise guarantee check.
#pragma once

#include <gtest/gtest.h>
#include <zcoll.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "codec_ids.h"

namespace zt {

using zcoll_fuzz::codec_ids;
using zcoll_fuzz::codec_ids_other_than_fzl;

static_assert(sizeof(float) == 4 && sizeof(double) == 8, "IEEE types expected");

// ------------------------------------------------------------------ types

template <class T> struct Dt;
template <> struct Dt<float> {
  static constexpr zcoll_dtype value = ZCOLL_FLOAT32;
  using Bits = uint32_t;
  static const char* name() { return "f32"; }
};
template <> struct Dt<double> {
  static constexpr zcoll_dtype value = ZCOLL_FLOAT64;
  using Bits = uint64_t;
  static const char* name() { return "f64"; }
};

template <class T> typename Dt<T>::Bits bits_of(T v) {
  typename Dt<T>::Bits b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}
template <class T> T from_bits(typename Dt<T>::Bits b) {
  T v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

inline size_t esize(zcoll_dtype d) { return d == ZCOLL_FLOAT64 ? 8 : 4; }

// ------------------------------------------------------------ parameters

inline zcoll_codec_params params(double eb, int mode = ZCOLL_EB_ABS, size_t chunk_len = 0,
                                 int threads = 1) {
  zcoll_codec_params p;
  zcoll_codec_params_init(&p);
  p.eb = eb;
  p.eb_mode = mode;
  p.chunk_len = chunk_len;
  p.threads = threads;
  return p;
}

inline std::string describe(const zcoll_codec_params& p) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "codec=%d eb=%.17g mode=%s chunk_len=%zu threads=%d ndims=%d dims=[%zu,%zu,%zu]",
                p.codec, p.eb, p.eb_mode == ZCOLL_EB_REL ? "REL" : "ABS", p.chunk_len, p.threads, p.ndims,
                p.dims[0], p.dims[1], p.dims[2]);
  return buf;
}

// --------------------------------------------------------- guarded memory

// A byte buffer with guard regions filled with a pattern before and after the
// usable area; check() tells whether anything outside [data, data+size) changed.
class Guarded {
 public:
  static constexpr size_t kGuard = 256;
  static constexpr unsigned char kPattern = 0xA5;
  explicit Guarded(size_t size, size_t misalign = 0)
      : size_(size), misalign_(misalign), buf_(size + 2 * kGuard + 16, kPattern) {}
  unsigned char* data() { return buf_.data() + kGuard + misalign_; }
  const unsigned char* data() const { return buf_.data() + kGuard + misalign_; }
  size_t size() const { return size_; }
  // Fill the usable area (e.g. with a distinctive pattern before a decode).
  void fill(unsigned char v) { std::memset(data(), v, size_); }
  bool intact() const {
    const unsigned char* b = buf_.data();
    size_t lo = kGuard + misalign_, hi = lo + size_;
    for (size_t i = 0; i < lo; ++i)
      if (b[i] != kPattern) return false;
    for (size_t i = hi; i < buf_.size(); ++i)
      if (b[i] != kPattern) return false;
    return true;
  }

 private:
  size_t size_, misalign_;
  std::vector<unsigned char> buf_;
};

// --------------------------------------------------------- the guarantee

template <class T> double finite_range(const T* x, size_t n, double* mn_out = nullptr,
                                       double* mx_out = nullptr) {
  double mn = std::numeric_limits<double>::infinity(), mx = -mn;
  for (size_t i = 0; i < n; ++i) {
    double v = static_cast<double>(x[i]);
    if (!std::isfinite(v)) continue;
    mn = std::min(mn, v);
    mx = std::max(mx, v);
  }
  if (mn_out) *mn_out = mn;
  if (mx_out) *mx_out = mx;
  return mx >= mn ? mx - mn : 0.0;
}

// Every finite x: |x - x'| <= eb_abs in double, no tolerance. NaN and +-Inf:
// bit for bit.
template <class T>
::testing::AssertionResult within_bound(const T* in, const T* out, size_t n, double eb_abs) {
  size_t bad = 0;
  std::string msg;
  for (size_t i = 0; i < n; ++i) {
    T x = in[i], y = out[i];
    bool ok;
    if (std::isfinite(x)) {
      ok = std::fabs(static_cast<double>(x) - static_cast<double>(y)) <= eb_abs;
    } else {
      ok = bits_of(x) == bits_of(y);
    }
    if (!ok) {
      if (bad < 8) {
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "\n  [%zu] in=%.17g (0x%llx) out=%.17g (0x%llx) |err|=%.17g eb_abs=%.17g", i,
                      static_cast<double>(x), static_cast<unsigned long long>(bits_of(x)),
                      static_cast<double>(y), static_cast<unsigned long long>(bits_of(y)),
                      std::fabs(static_cast<double>(x) - static_cast<double>(y)), eb_abs);
        msg += buf;
      }
      ++bad;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << n << " elements violate the bound" << msg;
}

// The bound zcoll.h says is used:
//  ABS: eb; REL: eb x (max - min) of the finite values, or, without a range,
//  eb x max|x| of the finite values, or eb when that is 0 too; either way
//  lowered to DBL_MAX / 4 when above it. *regular is false in the special
//  cases (no range, or max - min overflowing double).
template <class T>
double expected_eb_abs(const T* x, size_t n, const zcoll_codec_params& p, bool* regular = nullptr) {
  const double cap = std::numeric_limits<double>::max() / 4;
  if (regular) *regular = true;
  if (p.eb_mode == ZCOLL_EB_ABS) return std::min(p.eb, cap);
  double mn, mx;
  double range = finite_range(x, n, &mn, &mx);
  double e;
  if (mx >= mn && mx > mn) {
    if (std::isfinite(range)) {
      e = p.eb * range;
    } else {  // max - min overflows: the exact product, computed without overflow
      e = p.eb * mx - p.eb * mn;
      if (regular) *regular = false;
    }
  } else {
    if (regular) *regular = false;
    double mag = mx >= mn ? std::max(std::fabs(mn), std::fabs(mx)) : 0.0;
    e = mag > 0 ? p.eb * mag : p.eb;
  }
  return std::min(e, cap);
}

// --------------------------------------------------------- round trips

struct Compressed {
  int rc = -1;
  std::vector<unsigned char> stream;
  double eb_abs = std::numeric_limits<double>::quiet_NaN();
};

inline Compressed compress_raw(const zcoll_codec_params& p, zcoll_dtype dt, const void* in,
                               size_t count) {
  Compressed c;
  size_t cap = zcoll_codec_bound(count, dt);
  c.stream.assign(cap, 0);
  size_t out_size = 0;
  c.rc = zcoll_compress(&p, dt, in, count, c.stream.data(), cap, &out_size, &c.eb_abs);
  if (c.rc == ZCOLL_SUCCESS) c.stream.resize(out_size);
  return c;
}

template <class T> Compressed compress(const zcoll_codec_params& p, const std::vector<T>& in) {
  return compress_raw(p, Dt<T>::value, in.data(), in.size());
}

// Writer API, chunk by chunk, into a buffer of zcoll_codec_bound bytes.
inline ::testing::AssertionResult writer_compress(const zcoll_codec_params& p, zcoll_dtype dt,
                                                  const void* in, size_t count,
                                                  std::vector<unsigned char>* stream) {
  size_t cap = zcoll_codec_bound(count, dt);
  stream->assign(cap, 0);
  zcoll_writer* w = nullptr;
  int rc = zcoll_writer_begin(&p, dt, in, count, stream->data(), cap, &w);
  if (rc != ZCOLL_SUCCESS)
    return ::testing::AssertionFailure() << "zcoll_writer_begin: " << zcoll_strerror(rc);
  if (!w) return ::testing::AssertionFailure() << "zcoll_writer_begin gave a NULL writer";
  size_t nchunks = zcoll_writer_nchunks(w);
  for (size_t k = 0; k < nchunks; ++k) {
    int done = -1;
    rc = zcoll_writer_next(w, &done);
    if (rc != ZCOLL_SUCCESS) {
      zcoll_writer_abort(&w);
      return ::testing::AssertionFailure() << "zcoll_writer_next(" << k << "): " << zcoll_strerror(rc);
    }
    if (done != (k + 1 == nchunks ? 1 : 0)) {
      zcoll_writer_abort(&w);
      return ::testing::AssertionFailure()
             << "zcoll_writer_next: done=" << done << " after chunk " << k << " of " << nchunks;
    }
  }
  size_t out_size = 0;
  rc = zcoll_writer_finish(&w, &out_size);
  if (w != nullptr) return ::testing::AssertionFailure() << "zcoll_writer_finish left *writer set";
  if (rc != ZCOLL_SUCCESS)
    return ::testing::AssertionFailure() << "zcoll_writer_finish: " << zcoll_strerror(rc);
  if (out_size > cap) return ::testing::AssertionFailure() << "writer out_size > cap";
  stream->resize(out_size);
  return ::testing::AssertionSuccess();
}

// Decompress into a guarded buffer; returns rc, fills out (on success) and
// reports guard damage through *guards_ok.
template <class T>
int decompress(const std::vector<unsigned char>& stream, size_t count, std::vector<T>* out,
               int threads = 1, bool* guards_ok = nullptr) {
  Guarded g(count * sizeof(T));
  g.fill(0x5A);
  int rc = zcoll_decompress(stream.data(), stream.size(), Dt<T>::value, g.data(), count, threads);
  if (guards_ok) *guards_ok = g.intact();
  out->assign(count, T(0));
  if (count) std::memcpy(out->data(), g.data(), count * sizeof(T));
  return rc;
}

// Reader API, chunks in the given order (all of them), into a guarded buffer.
template <class T>
::testing::AssertionResult reader_decompress(const std::vector<unsigned char>& stream, size_t count,
                                             const std::vector<size_t>& order, std::vector<T>* out) {
  zcoll_reader* r = nullptr;
  int rc = zcoll_reader_open(stream.data(), stream.size(), &r);
  if (rc != ZCOLL_SUCCESS)
    return ::testing::AssertionFailure() << "zcoll_reader_open: " << zcoll_strerror(rc);
  const zcoll_stream_info* info = zcoll_reader_info(r);
  if (!info) {
    zcoll_reader_close(&r);
    return ::testing::AssertionFailure() << "zcoll_reader_info gave NULL";
  }
  if (info->count != count || info->dtype != Dt<T>::value) {
    zcoll_reader_close(&r);
    return ::testing::AssertionFailure() << "reader info count/dtype differ";
  }
  Guarded g(count * sizeof(T));
  g.fill(0x5A);
  for (size_t k : order) {
    rc = zcoll_reader_chunk(r, k, g.data());
    if (rc != ZCOLL_SUCCESS) {
      zcoll_reader_close(&r);
      return ::testing::AssertionFailure() << "zcoll_reader_chunk(" << k << "): " << zcoll_strerror(rc);
    }
  }
  zcoll_reader_close(&r);
  if (r != nullptr) return ::testing::AssertionFailure() << "zcoll_reader_close left *reader set";
  if (!g.intact()) return ::testing::AssertionFailure() << "reader wrote outside the output array";
  out->assign(count, T(0));
  if (count) std::memcpy(out->data(), g.data(), count * sizeof(T));
  return ::testing::AssertionSuccess();
}

template <class T> bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// The full property check for one input and one parameter set:
//  * compression into exactly zcoll_codec_bound bytes succeeds, stream <= bound,
//    nothing written past the buffer;
//  * eb_abs_out is eb (ABS) or eb*(max-min) of the finite inputs (REL);
//  * zcoll_stream_inspect agrees with the call;
//  * zcoll_decompress reproduces within the bound, NaN/Inf bit for bit, inside its buffer.
// Returns the stream and the output for further checks.
template <class X> struct NonDeduced { using type = X; };

template <class T>
void check_roundtrip(const std::vector<T>& in, const zcoll_codec_params& p,
                     std::vector<unsigned char>* stream_out = nullptr,
                     typename NonDeduced<std::vector<T>>::type* out_out = nullptr, double* eb_abs_ret = nullptr) {
  SCOPED_TRACE(describe(p) + " dtype=" + Dt<T>::name() + " count=" + std::to_string(in.size()));
  const zcoll_dtype dt = Dt<T>::value;
  const size_t n = in.size();
  const size_t bound = zcoll_codec_bound(n, dt);
  ASSERT_GT(bound, 0u);
  Guarded sbuf(bound);
  size_t out_size = 0;
  double eb_abs = std::numeric_limits<double>::quiet_NaN();
  int rc = zcoll_compress(&p, dt, in.data(), n, sbuf.data(), bound, &out_size, &eb_abs);
  ASSERT_EQ(rc, ZCOLL_SUCCESS) << zcoll_strerror(rc);
  ASSERT_TRUE(sbuf.intact()) << "compress wrote outside [out, out+cap)";
  ASSERT_GT(out_size, 0u);
  ASSERT_LE(out_size, bound);

  {
    bool exact_formula = true;
    double expect = expected_eb_abs(in.data(), n, p, &exact_formula);
    // Zero range (constant data, or no finite value) and max - min overflowing
    // double are checked on their own (RoundTrip.RelConstantData, RelHugeRange).
    if (exact_formula) {
      if (p.eb_mode == ZCOLL_EB_ABS) {
        EXPECT_EQ(eb_abs, expect) << "ABS mode: eb_abs = eb (lowered to DBL_MAX/4 only above it)";
      } else {
        EXPECT_TRUE(eb_abs == expect || std::fabs(eb_abs - expect) <= 1e-12 * std::fabs(expect))
            << "REL eb_abs_out=" << eb_abs << " expected eb*(max-min)=" << expect;
      }
    }
  }

  std::vector<unsigned char> stream(sbuf.data(), sbuf.data() + out_size);

  zcoll_stream_info info;
  std::memset(&info, 0xCD, sizeof info);
  rc = zcoll_stream_inspect(stream.data(), stream.size(), &info);
  ASSERT_EQ(rc, ZCOLL_SUCCESS) << zcoll_strerror(rc);
  EXPECT_EQ(info.codec, p.codec);
  EXPECT_EQ(info.dtype, dt);
  EXPECT_EQ(info.count, n);
  EXPECT_EQ(info.eb_abs, eb_abs);
  size_t cl = p.chunk_len ? p.chunk_len : ZCOLL_DEFAULT_CHUNK_LEN;
  EXPECT_EQ(info.chunk_len, cl);
  EXPECT_EQ(info.nchunks, (n + cl - 1) / cl);
  EXPECT_EQ(info.stream_bytes, out_size);
  if (p.ndims >= 2) {
    EXPECT_EQ(info.ndims, p.ndims);
    for (int d = 0; d < p.ndims; ++d) EXPECT_EQ(info.dims[d], p.dims[d]) << "dim " << d;
  }

  Guarded obuf(n * sizeof(T));
  obuf.fill(0x5A);
  rc = zcoll_decompress(stream.data(), stream.size(), dt, obuf.data(), n, p.threads);
  ASSERT_EQ(rc, ZCOLL_SUCCESS) << zcoll_strerror(rc);
  ASSERT_TRUE(obuf.intact()) << "decompress wrote outside the output array";
  std::vector<T> out(n);
  if (n) std::memcpy(out.data(), obuf.data(), n * sizeof(T));
  EXPECT_TRUE(within_bound(in.data(), out.data(), n, eb_abs));

  if (stream_out) *stream_out = std::move(stream);
  if (out_out) *out_out = std::move(out);
  if (eb_abs_ret) *eb_abs_ret = eb_abs;
}

// ------------------------------------------------------------ data

inline std::vector<double> random_uniform(size_t n, uint64_t seed, double lo = -1, double hi = 1) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> v(n);
  for (auto& x : v) x = d(g);
  return v;
}
inline std::vector<double> random_normal(size_t n, uint64_t seed, double mean = 0, double sd = 1) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> d(mean, sd);
  std::vector<double> v(n);
  for (auto& x : v) x = d(g);
  return v;
}
template <class T> std::vector<T> cast(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}
// Random bit patterns that are finite (incompressible input).
template <class T> std::vector<T> random_finite_bits(size_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<T> v(n);
  for (auto& x : v) {
    do {
      typename Dt<T>::Bits b = static_cast<typename Dt<T>::Bits>(g());
      x = from_bits<T>(b);
    } while (!std::isfinite(x));
  }
  return v;
}

// NaN patterns: quiet, signalling, negative, with payloads.
template <class T> std::vector<T> nan_patterns();
template <> inline std::vector<float> nan_patterns<float>() {
  return {from_bits<float>(0x7fc00000u), from_bits<float>(0xffc00000u), from_bits<float>(0x7f800001u),
          from_bits<float>(0x7fa00000u), from_bits<float>(0xff800001u), from_bits<float>(0x7fc12345u),
          from_bits<float>(0x7fbfffffu), from_bits<float>(0xffffffffu)};
}
template <> inline std::vector<double> nan_patterns<double>() {
  return {from_bits<double>(0x7ff8000000000000ull), from_bits<double>(0xfff8000000000000ull),
          from_bits<double>(0x7ff0000000000001ull), from_bits<double>(0x7ff4000000000000ull),
          from_bits<double>(0xfff0000000000001ull), from_bits<double>(0x7ff8dead0000beefull),
          from_bits<double>(0x7ff7ffffffffffffull), from_bits<double>(0xffffffffffffffffull)};
}

template <class T> T huge_value() {
  return std::is_same<T, float>::value ? static_cast<T>(3e38f) : static_cast<T>(1e308);
}

// Adversarial arrays, by name. n is a size hint (>= 64).
template <class T> std::vector<std::pair<std::string, std::vector<T>>> adversarial_cases(size_t n) {
  using L = std::numeric_limits<T>;
  std::vector<std::pair<std::string, std::vector<T>>> cs;
  std::mt19937_64 g(12345);
  auto normal = cast<T>(random_normal(n, 77));
  const auto nans = nan_patterns<T>();
  const T inf = L::infinity();
  const T H = huge_value<T>();

  {  // all quiet NaN
    cs.push_back({"all_qnan", std::vector<T>(n, L::quiet_NaN())});
  }
  {  // every NaN pattern sprinkled in normal data, incl. chunk/block boundaries
    auto v = normal;
    for (size_t i = 0; i < n; i += 7) v[i] = nans[(i / 7) % nans.size()];
    for (size_t i : {size_t(0), size_t(31), size_t(32), size_t(63), size_t(64), n - 1}) v[i] = nans[i % nans.size()];
    cs.push_back({"nan_mix", v});
  }
  {  // only NaN patterns
    std::vector<T> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = nans[i % nans.size()];
    cs.push_back({"nan_patterns_only", v});
  }
  {  // +-Inf among values
    auto v = normal;
    for (size_t i = 0; i < n; i += 5) v[i] = (i / 5) % 2 ? inf : -inf;
    cs.push_back({"inf_mix", v});
  }
  {  // everything non-finite but a single value
    std::vector<T> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = i % 3 == 0 ? inf : (i % 3 == 1 ? -inf : nans[i % nans.size()]);
    v[n / 2] = static_cast<T>(1.25);
    cs.push_back({"nonfinite_but_one", v});
  }
  {  // signed zeros
    std::vector<T> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = (i % 3 == 0) ? static_cast<T>(-0.0) : static_cast<T>(0.0);
    cs.push_back({"signed_zeros", v});
  }
  {  // denormals
    std::vector<T> v(n);
    const T dmin = L::denorm_min(), nmin = L::min();
    for (size_t i = 0; i < n; ++i) {
      switch (i % 6) {
        case 0: v[i] = dmin; break;
        case 1: v[i] = -dmin; break;
        case 2: v[i] = nmin - dmin; break;  // largest subnormal
        case 3: v[i] = -(nmin - dmin); break;
        case 4: v[i] = dmin * static_cast<T>(g() % 1000); break;
        default: v[i] = nmin; break;
      }
    }
    cs.push_back({"denormals", v});
  }
  {  // huge magnitudes
    std::vector<T> v(n);
    for (size_t i = 0; i < n; ++i) {
      switch (i % 5) {
        case 0: v[i] = H; break;
        case 1: v[i] = -H; break;
        case 2: v[i] = L::max(); break;
        case 3: v[i] = L::lowest(); break;
        default: v[i] = H * static_cast<T>(normal[i] / 8); break;
      }
    }
    cs.push_back({"huge", v});
  }
  {  // huge and tiny mixed
    std::vector<T> v(n);
    for (size_t i = 0; i < n; ++i) {
      switch (i % 4) {
        case 0: v[i] = H; break;
        case 1: v[i] = static_cast<T>(1e-30); break;
        case 2: v[i] = -H; break;
        default: v[i] = static_cast<T>(-1e-30); break;
      }
    }
    cs.push_back({"huge_tiny_alternating", v});
  }
  {  // random magnitudes: exponent uniform over the whole finite range
    std::vector<T> v(n);
    const int emax = std::is_same<T, float>::value ? 38 : 307;
    std::uniform_real_distribution<double> e(-emax, emax);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<T>((g() & 1 ? 1.0 : -1.0) * std::pow(10.0, e(g)));
    cs.push_back({"log_uniform_magnitudes", v});
  }
  cs.push_back({"all_zero", std::vector<T>(n, static_cast<T>(0))});
  cs.push_back({"all_neg_zero", std::vector<T>(n, static_cast<T>(-0.0))});
  cs.push_back({"const_1_5", std::vector<T>(n, static_cast<T>(1.5))});
  cs.push_back({"const_neg_7e20", std::vector<T>(n, static_cast<T>(-7e20))});
  cs.push_back({"const_max", std::vector<T>(n, L::max())});
  {
    std::vector<T> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<T>((i % 2 ? -1.0 : 1.0) * (1.0 + i * 1e-3));
    cs.push_back({"alternating_signs", v});
  }
  {
    std::vector<T> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<T>((i % 2 ? -1.0 : 1.0) * 1e9);
    cs.push_back({"alternating_signs_large", v});
  }
  {
    std::vector<T> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<T>(-3.0 + 0.001 * static_cast<double>(i));
    cs.push_back({"linear_ramp", v});
  }
  {  // step: Lorenzo residual spikes
    std::vector<T> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<T>(i < n / 2 ? 0.0 : 1e6);
    cs.push_back({"step", v});
  }
  {
    cs.push_back({"random_finite_bits", random_finite_bits<T>(n, 99)});
  }
  return cs;
}

// Normal values (mean 1, sd 2) with outliers (1e30, every 97th) and NaN (every 101st from
// the 13th): values stored exactly that fall across chunk and block boundaries.
template <class T> std::vector<T> with_outliers(size_t n) {
  auto v = random_normal(n, 61, 1, 2);
  for (size_t i = 0; i < v.size(); i += 97) v[i] = 1e30;
  for (size_t i = 13; i < v.size(); i += 101) v[i] = std::numeric_limits<double>::quiet_NaN();
  return cast<T>(v);
}

// Values around the quantizer's integer limit and on bin edges, for a given eb.
template <class T> std::vector<T> quantizer_edges(double eb, size_t n) {
  std::vector<T> v;
  v.reserve(n);
  const double twoeb = 2 * eb;
  std::mt19937_64 g(4242);
  // 2^24 +- 1: where float32 leaves the single-precision grid (fzl_format.h).
  const double ks[] = {0, 1, 2, 3, 1e3, 1e6, 16777215.0, 16777216.0, 16777217.0, 1073741822.0, 1073741823.0, 1073741824.0, 1073741825.0,
                       2147483647.0, 2147483648.0, 4294967296.0, 9.2e18, 1e30};
  while (v.size() < n) {
    for (double k : ks) {
      for (double off : {0.0, 0.5, -0.5, 0.49999999, 0.50000001, 1.0}) {
        double x = (k + off) * twoeb;
        for (double s : {1.0, -1.0}) {
          T t = static_cast<T>(s * x);
          if (std::isfinite(t)) v.push_back(t);
          // neighbours in the element type
          v.push_back(std::nextafter(t, std::numeric_limits<T>::infinity()));
          v.push_back(std::nextafter(t, -std::numeric_limits<T>::infinity()));
        }
      }
    }
    (void)g;
  }
  v.resize(n);
  for (auto& x : v)
    if (!std::isfinite(x)) x = 0;
  return v;
}

// ----------------------------------------------------------- real fields

struct FieldSpec {
  std::string name;     // test-name friendly
  std::string file;     // file name
  bool shared;          // lives in ../shared/datasets (else data/)
  zcoll_dtype file_dtype;
  zcoll_dtype dtype;    // as tested (f32 files are also tested converted to f64)
  int ndims;
  size_t dims[3];
};

inline void PrintTo(const FieldSpec& s, std::ostream* os) { *os << s.name; }

std::string data_dir();
std::string shared_dir();  // "" if missing
const std::vector<FieldSpec>& available_fields();

// A field, sliced to whole planes/rows so that count <= max_values, in the
// tested dtype. Dims describe the slice.
struct Field {
  FieldSpec spec;
  size_t count = 0;
  size_t dims[3] = {0, 0, 0};
  std::vector<float> f32;
  std::vector<double> f64;
};
const Field& load_field(const FieldSpec& s, size_t max_values = 200000);

}  // namespace zt

namespace zt {

// The stream-level promises for one input and parameter set:
//  * the stream is identical for threads = 1, 2, 3, 4 and 0 (OpenMP default);
//  * the writer API makes the identical stream;
//  * zcoll_decompress gives identical output for threads = 1..4;
//  * the reader API, chunks in reverse and in a shuffled order, gives exactly
//    the zcoll_decompress output.
template <class T> void check_stream_apis(const std::vector<T>& in, zcoll_codec_params p) {
  SCOPED_TRACE("stream APIs: " + describe(p) + " dtype=" + Dt<T>::name() + " count=" + std::to_string(in.size()));
  p.threads = 1;
  Compressed ref = compress(p, in);
  ASSERT_EQ(ref.rc, ZCOLL_SUCCESS) << zcoll_strerror(ref.rc);
  for (int t : {2, 3, 4, 0}) {
    auto q = p;
    q.threads = t;
    Compressed c = compress(q, in);
    ASSERT_EQ(c.rc, ZCOLL_SUCCESS);
    EXPECT_EQ(c.eb_abs, ref.eb_abs) << "threads=" << t;
    EXPECT_TRUE(c.stream == ref.stream) << "stream differs with threads=" << t << " (" << c.stream.size()
                                        << " vs " << ref.stream.size() << " bytes)";
  }
  for (int t : {1, 3}) {
    auto q = p;
    q.threads = t;
    std::vector<unsigned char> ws;
    ASSERT_TRUE(writer_compress(q, Dt<T>::value, in.data(), in.size(), &ws)) << "threads=" << t;
    EXPECT_TRUE(ws == ref.stream) << "writer stream differs from zcoll_compress (" << ws.size() << " vs "
                                  << ref.stream.size() << " bytes), threads=" << t;
  }
  std::vector<T> out1;
  bool guards = false;
  ASSERT_EQ(decompress(ref.stream, in.size(), &out1, 1, &guards), ZCOLL_SUCCESS);
  EXPECT_TRUE(guards);
  EXPECT_TRUE(within_bound(in.data(), out1.data(), in.size(), ref.eb_abs));
  for (int t : {2, 3, 4, 0}) {
    std::vector<T> o;
    ASSERT_EQ(decompress(ref.stream, in.size(), &o, t, &guards), ZCOLL_SUCCESS) << "threads=" << t;
    EXPECT_TRUE(guards);
    EXPECT_TRUE(same_bits(o, out1)) << "decompress output differs with threads=" << t;
  }
  zcoll_stream_info info;
  ASSERT_EQ(zcoll_stream_inspect(ref.stream.data(), ref.stream.size(), &info), ZCOLL_SUCCESS);
  std::vector<size_t> order(info.nchunks);
  for (size_t k = 0; k < order.size(); ++k) order[k] = order.size() - 1 - k;
  std::vector<T> ro;
  ASSERT_TRUE(reader_decompress(ref.stream, in.size(), order, &ro));
  EXPECT_TRUE(same_bits(ro, out1)) << "reader (reverse order) output differs from zcoll_decompress";
  std::mt19937_64 g(info.nchunks * 7 + 1);
  std::shuffle(order.begin(), order.end(), g);
  ASSERT_TRUE(reader_decompress(ref.stream, in.size(), order, &ro));
  EXPECT_TRUE(same_bits(ro, out1)) << "reader (shuffled order) output differs from zcoll_decompress";
}

}  // namespace zt
