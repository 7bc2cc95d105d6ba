// Small valid zcoll streams of both dtypes, with outliers, NaN/Inf, raw chunks,
// shapes and count 0: the seed corpus of the fuzzers and the starting points of
// the replay test's mutations.
#pragma once
#include <zcoll.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "codec_ids.h"

namespace zcoll_fuzz {

struct SeedStream {
  std::string name;
  std::vector<uint8_t> bytes;
};

template <class T>
inline bool seed_compress(std::vector<SeedStream>* out, const std::string& name, const std::vector<T>& in,
                          double eb, int mode, size_t chunk_len, int ndims = 0, size_t d0 = 0, size_t d1 = 0,
                          size_t d2 = 0, int codec = ZCOLL_CODEC_FZL) {
  const zcoll_dtype dt = sizeof(T) == 4 ? ZCOLL_FLOAT32 : ZCOLL_FLOAT64;
  zcoll_codec_params p;
  zcoll_codec_params_init(&p);
  p.codec = codec;
  p.eb = eb;
  p.eb_mode = mode;
  p.chunk_len = chunk_len;
  p.threads = 1;
  p.ndims = ndims;
  p.dims[0] = d0;
  p.dims[1] = d1;
  p.dims[2] = d2;
  std::vector<uint8_t> buf(zcoll_codec_bound(in.size(), dt));
  size_t size = 0;
  if (zcoll_compress(&p, dt, in.empty() ? nullptr : in.data(), in.size(), buf.data(), buf.size(), &size, nullptr) !=
      ZCOLL_SUCCESS)
    return false;
  buf.resize(size);
  out->push_back({name, std::move(buf)});
  return true;
}

// Returns false if any seed could not be made (the codec failed).
inline bool make_seed_streams(std::vector<SeedStream>* out) {
  bool ok = true;
  std::mt19937_64 g(2024);
  std::normal_distribution<double> nd(0, 1);
  auto normal = [&](size_t n, double m, double s) {
    std::vector<double> v(n);
    for (auto& x : v) x = m + s * nd(g);
    return v;
  };
  const float fnan = std::numeric_limits<float>::quiet_NaN(), finf = std::numeric_limits<float>::infinity();
  uint32_t snan32 = 0x7fa00001u;
  uint64_t snan64 = 0x7ff4000000000001ull;
  float fsnan;
  double dsnan;
  std::memcpy(&fsnan, &snan32, 4);
  std::memcpy(&dsnan, &snan64, 8);

  std::vector<float> f32_mixed;  // quiet and signalling NaN, a huge value, +-Inf
  {
    auto d = normal(100, 10, 2);
    f32_mixed.assign(d.begin(), d.end());
    f32_mixed[3] = fnan;
    f32_mixed[17] = fsnan;
    f32_mixed[40] = 1e30f;
    f32_mixed[41] = -finf;
    f32_mixed[99] = finf;
  }
  ok &= seed_compress(out, "f32_100_mixed_c32", f32_mixed, 1e-3, ZCOLL_EB_ABS, 32);
  {
    auto v = normal(100, -5, 1);
    v[7] = dsnan;
    v[64] = 1e300;
    v[65] = -0.0;
    v[66] = 5e-324;
    ok &= seed_compress(out, "f64_100_mixed_rel_c32", v, 1e-4, ZCOLL_EB_REL, 32);
  }
  {
    auto d = normal(4 * 5 * 6, 0, 1);
    std::vector<float> v(d.begin(), d.end());
    v[50] = fnan;
    ok &= seed_compress(out, "f32_3d_4x5x6_c32", v, 1e-2, ZCOLL_EB_ABS, 32, 3, 4, 5, 6);
  }
  {
    std::vector<double> v(10 * 20);
    for (size_t i = 0; i < 10; ++i)
      for (size_t j = 0; j < 20; ++j) v[i * 20 + j] = std::sin(0.3 * i) * std::cos(0.2 * j) * 50;
    v[33] = 1e200;
    ok &= seed_compress(out, "f64_2d_10x20_c64", v, 1e-3, ZCOLL_EB_REL, 64, 2, 10, 20);
  }
  {
    std::vector<float> v(70);
    for (auto& x : v) {
      do {
        uint32_t b = static_cast<uint32_t>(g());
        std::memcpy(&x, &b, 4);
      } while (!std::isfinite(x));
    }
    ok &= seed_compress(out, "f32_raw_bits_c32", v, 1e-30, ZCOLL_EB_ABS, 32);
  }
  ok &= seed_compress(out, "f32_count0", std::vector<float>{}, 1e-3, ZCOLL_EB_ABS, 0);
  ok &= seed_compress(out, "f64_count0", std::vector<double>{}, 1e-3, ZCOLL_EB_REL, 0);
  ok &= seed_compress(out, "f32_one", std::vector<float>{3.25f}, 1e-3, ZCOLL_EB_ABS, 0);
  ok &= seed_compress(out, "f64_const65_c32", std::vector<double>(65, 2.5), 1e-3, ZCOLL_EB_ABS, 32);
  {
    auto d = normal(3 * 64 + 17, 0, 1000);
    std::vector<float> v(d.begin(), d.end());
    ok &= seed_compress(out, "f32_209_wide_c64", v, 1e-6, ZCOLL_EB_ABS, 64);
  }
  {
    // quantized integers near the limit, checkerboard in 3-D: widest residuals
    const double eb = 0.5, lim = 1073741823.0 * 2 * eb * 0.999;
    std::vector<double> v(4 * 6 * 8);
    for (size_t i = 0; i < 4; ++i)
      for (size_t j = 0; j < 6; ++j)
        for (size_t k = 0; k < 8; ++k) v[(i * 6 + j) * 8 + k] = ((i + j + k) % 2 ? -lim : lim);
    ok &= seed_compress(out, "f64_3d_limit_c32", v, eb, ZCOLL_EB_ABS, 32, 3, 4, 6, 8);
  }
  {
    std::vector<float> v(2000);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(std::sin(0.01 * i) * 100 + 0.01 * nd(g));
    for (size_t i = 0; i < v.size(); i += 101) v[i] = fnan;
    ok &= seed_compress(out, "f32_2000_sine_default", v, 1e-3, ZCOLL_EB_REL, 0);
  }
  {
    auto v = normal(500, 1, 1e-3);
    ok &= seed_compress(out, "f64_500_smooth_c96", v, 1e-7, ZCOLL_EB_ABS, 96, 2, 20, 25);
  }
  // The linear-predictor codecs: misses, NaN/Inf, lpbyte's stored values, lpbit's escapes
  // and wide exponent codes, one chunk of four lanes (2048 values and more).
  // szx: constant, truncated and raw blocks.
  for (int codec : codec_ids_other_than_fzl()) {
    const std::string c = zcoll_codec_name(codec);
    ok &= seed_compress(out, c + "_f32_100_mixed_c32", f32_mixed, 1e-3, ZCOLL_EB_ABS, 32, 0, 0, 0, 0, codec);
    {
      std::vector<double> v(300);
      for (size_t i = 0; i < v.size(); ++i) v[i] = 100 * std::sin(0.05 * i) + 0.01 * nd(g);
      v[7] = dsnan;
      v[150] = 1e300;
      v[151] = -0.0;
      ok &= seed_compress(out, c + "_f64_300_sine_rel_c64", v, 1e-4, ZCOLL_EB_REL, 64, 0, 0, 0, 0, codec);
    }
    {
      std::vector<float> v(2100);
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(std::cos(0.02 * i) * 50 + 0.1 * nd(g));
      ok &= seed_compress(out, c + "_f32_2100_lanes", v, 1e-2, ZCOLL_EB_ABS, 0, 0, 0, 0, 0, codec);
    }
  }
  // Every codec: streams of many chunks, encoded, raw (random bits) and constant ones
  // mixed, so that mutations reach the index and the chunks after the first.
  for (int codec : codec_ids()) {
    const std::string c = zcoll_codec_name(codec);
    std::vector<float> f(640);
    for (size_t i = 0; i < f.size(); ++i) f[i] = static_cast<float>(std::sin(0.03 * i) * 20 + 0.05 * nd(g));
    for (size_t i = 128; i < 192; ++i) {
      uint32_t b = static_cast<uint32_t>(g()) & 0xbf7fffffu;  // finite: never the top exponent
      std::memcpy(&f[i], &b, 4);
    }
    for (size_t i = 320; i < 384; ++i) f[i] = 1.5f;
    f[500] = fnan;
    ok &= seed_compress(out, c + "_f32_640_multichunk_c64", f, 1e-3, ZCOLL_EB_ABS, 64, 0, 0, 0, 0, codec);
    auto d = normal(24 * 40, 3, 0.5);
    for (size_t i = 96; i < 128; ++i) d[i] = d[i] * 1e12;
    d[700] = -std::numeric_limits<double>::infinity();
    ok &= seed_compress(out, c + "_f64_960_multichunk_2d_c96", d, 1e-4, ZCOLL_EB_REL, 96, 2, 24, 40, 0, codec);
  }
  return ok;
}

// Inputs for the round-trip fuzzer: a 6-byte parameter prefix (see
// fuzz_roundtrip_logic.h) followed by raw values.
inline void make_roundtrip_seeds(std::vector<SeedStream>* out) {
  std::mt19937_64 g(7);
  std::normal_distribution<double> nd(0, 1);
  auto add = [&](const std::string& name, std::vector<uint8_t> head, bool f64, size_t n, int kind) {
    std::vector<uint8_t> b = std::move(head);
    for (size_t i = 0; i < n; ++i) {
      double x = kind == 0 ? 100 * std::sin(0.05 * i) + nd(g) : kind == 1 ? nd(g) * 1e6 : (i % 5 ? nd(g) : 1e30);
      if (kind == 2 && i % 7 == 0) x = std::numeric_limits<double>::quiet_NaN();
      if (kind == 2 && i % 11 == 0) x = -std::numeric_limits<double>::infinity();
      uint8_t tmp[8];
      if (f64) {
        std::memcpy(tmp, &x, 8);
        b.insert(b.end(), tmp, tmp + 8);
      } else {
        float f = static_cast<float>(x);
        std::memcpy(tmp, &f, 4);
        b.insert(b.end(), tmp, tmp + 4);
      }
    }
    out->push_back({name, std::move(b)});
  };
  // byte0: dtype | REL<<1 | ndims<<2 | (threads-1)<<4; byte1 chunk; byte2-3 eb; byte4-5 shape
  add("rt_f32_abs_1d", {0x00, 0, 27, 0, 0, 0}, false, 300, 0);     // eb 1e-3
  add("rt_f64_rel_2d", {0x0b, 1, 26, 0, 9, 0}, true, 300, 0);      // REL 1e-4, 2-D 30x10
  add("rt_f32_abs_3d", {0x0c, 2, 30, 128, 3, 3}, false, 320, 1);   // eb 3, 3-D 20x4x4
  add("rt_f64_abs_nan", {0x11, 3, 24, 0, 0, 0}, true, 257, 2);     // eb 1e-6, 2 threads
  add("rt_f32_rel_nan_3d", {0x3e, 0, 28, 0, 1, 2}, false, 300, 2); // REL 1e-2, 3-D 50x2x3, 4 threads
  add("rt_f32_lpbyte", {0x40, 0, 27, 0, 0, 0}, false, 300, 2);     // lpbyte, eb 1e-3
  add("rt_f64_lpbit_rel", {0x83, 3, 26, 0, 0, 0}, true, 300, 0);   // lpbit, REL 1e-4
  add("rt_f32_szx_nan", {0xc0, 0, 27, 0, 0, 0}, false, 300, 2);    // szx, eb 1e-3
  add("rt_f64_szx_rel", {0xc3, 3, 26, 0, 0, 0}, true, 300, 0);     // szx, REL 1e-4
}

}  // namespace zcoll_fuzz
