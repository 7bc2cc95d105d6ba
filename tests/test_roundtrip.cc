// The guarantee, property style: for every case, compress into exactly
// zcoll_codec_bound bytes, decompress, and check every element
// (|x - x'| <= eb_abs in double, NaN/Inf bit for bit).
#include "test_util.h"

using namespace zt;

namespace {

template <class T> class RoundTrip : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
struct TypeNames {
  template <class T> static std::string GetName(int) { return Dt<T>::name(); }
};
TYPED_TEST_SUITE(RoundTrip, Types, TypeNames);

const size_t kChunks[] = {0, 32, 64, 1024};

}  // namespace

TYPED_TEST(RoundTrip, RandomData) {
  using T = TypeParam;
  const size_t n = 20000;
  for (uint64_t seed : {1u, 2u, 3u}) {
    for (int kind = 0; kind < 2; ++kind) {
      auto d = kind == 0 ? random_uniform(n, seed, -10, 10) : random_normal(n, seed, 5, 3);
      auto in = cast<T>(d);
      SCOPED_TRACE(std::string(kind == 0 ? "uniform" : "normal") + " seed " + std::to_string(seed));
      for (size_t cl : {size_t(0), size_t(64)}) {
        for (double eb : {1e-1, 1e-3, 1e-6}) check_roundtrip(in, params(eb, ZCOLL_EB_ABS, cl));
        for (double eb : {1e-2, 1e-4}) check_roundtrip(in, params(eb, ZCOLL_EB_REL, cl));
      }
    }
  }
}

TYPED_TEST(RoundTrip, Adversarial) {
  using T = TypeParam;
  for (auto& c : adversarial_cases<T>(3 * 64 + 17)) {
    SCOPED_TRACE(c.first);
    for (size_t cl : {size_t(0), size_t(32), size_t(64)}) {
      for (double eb : {1e-6, 1e-3, 1.0, 1e3}) check_roundtrip(c.second, params(eb, ZCOLL_EB_ABS, cl));
      for (double eb : {1e-1, 1e-3, 1e-7}) check_roundtrip(c.second, params(eb, ZCOLL_EB_REL, cl));
    }
  }
}

TYPED_TEST(RoundTrip, AdversarialShaped) {
  using T = TypeParam;
  const size_t d0 = 7, d1 = 9, d2 = 13;  // 819 values, not a multiple of 32
  for (auto& c : adversarial_cases<T>(d0 * d1 * d2)) {
    SCOPED_TRACE(c.first);
    for (int nd : {2, 3}) {
      for (size_t cl : {size_t(0), size_t(32), size_t(96)}) {
        for (double eb : {1e-6, 1e-2, 1e3}) {
          auto p = params(eb, ZCOLL_EB_ABS, cl);
          p.ndims = nd;
          if (nd == 2) {
            p.dims[0] = d0 * d1;
            p.dims[1] = d2;
          } else {
            p.dims[0] = d0;
            p.dims[1] = d1;
            p.dims[2] = d2;
          }
          check_roundtrip(c.second, p);
        }
        auto p = params(1e-4, ZCOLL_EB_REL, cl);
        p.ndims = nd;
        p.dims[0] = nd == 2 ? d0 * d1 : d0;
        p.dims[1] = nd == 2 ? d2 : d1;
        p.dims[2] = nd == 2 ? 0 : d2;
        check_roundtrip(c.second, p);
      }
    }
  }
}

// Quantized integers near the limit, in every dimension: Lorenzo predictions
// over 2-D/3-D neighbourhoods sum up to 7 terms, so residuals can exceed the
// integer range of the quantized values themselves.
TYPED_TEST(RoundTrip, LorenzoResidualExtremes) {
  using T = TypeParam;
  const size_t d0 = 6, d1 = 10, d2 = 34;
  const size_t n = d0 * d1 * d2;
  for (double eb : {1e-3, 0.5}) {
    const double lim = 1073741823.0 * 2 * eb;  // 2^30 - 1 bins
    std::vector<std::vector<T>> inputs;
    {  // checkerboard of +-lim
      std::vector<T> v(n);
      for (size_t i = 0; i < d0; ++i)
        for (size_t j = 0; j < d1; ++j)
          for (size_t k = 0; k < d2; ++k)
            v[(i * d1 + j) * d2 + k] = static_cast<T>(((i + j + k) % 2 ? -1.0 : 1.0) * lim * 0.999);
      inputs.push_back(v);
    }
    {  // random near +-lim
      auto r = random_uniform(n, 5, -lim, lim);
      inputs.push_back(cast<T>(r));
    }
    {  // random around a half of the limit with a few points over it
      auto r = random_uniform(n, 6, -lim * 0.6, lim * 0.6);
      for (size_t i = 0; i < n; i += 17) r[i] = lim * 1.5;
      inputs.push_back(cast<T>(r));
    }
    for (size_t t = 0; t < inputs.size(); ++t) {
      SCOPED_TRACE("input " + std::to_string(t) + " eb " + std::to_string(eb));
      for (int nd : {1, 2, 3}) {
        for (size_t cl : {size_t(0), size_t(32), size_t(1024)}) {
          auto p = params(eb, ZCOLL_EB_ABS, cl);
          p.ndims = nd;
          if (nd == 2) {
            p.dims[0] = d0 * d1;
            p.dims[1] = d2;
          } else if (nd == 3) {
            p.dims[0] = d0;
            p.dims[1] = d1;
            p.dims[2] = d2;
          }
          check_roundtrip(inputs[t], p);
        }
      }
    }
  }
}

TYPED_TEST(RoundTrip, EbSweepAbs) {
  using T = TypeParam;
  const size_t n = 2048;
  // a mixture of scales: normal at 1, 1e10, 1e-10, log-uniform magnitudes, a ramp
  std::vector<double> d;
  auto a = random_normal(n / 4, 21);
  auto b = random_normal(n / 4, 22, 0, 1e10);
  auto c = random_normal(n / 4, 23, 0, 1e-10);
  d.insert(d.end(), a.begin(), a.end());
  d.insert(d.end(), b.begin(), b.end());
  d.insert(d.end(), c.begin(), c.end());
  std::mt19937_64 g(24);
  std::uniform_real_distribution<double> e(-37, 37);
  for (size_t i = 0; i < n / 8; ++i) d.push_back((i % 2 ? -1 : 1) * std::pow(10.0, e(g)));
  for (size_t i = 0; d.size() < n; ++i) d.push_back(1e3 + 0.25 * i);
  auto in = cast<T>(d);
  for (int k = -30; k <= 30; ++k) {
    double eb = std::pow(10.0, k);
    for (size_t cl : {size_t(0), size_t(64)}) check_roundtrip(in, params(eb, ZCOLL_EB_ABS, cl));
  }
}

// Extreme but valid bounds (denormal to DBL_MAX), on ordinary and extreme data, with
// every codec.
TYPED_TEST(RoundTrip, EbExtremeAbs) {
  using T = TypeParam;
  auto in = cast<T>(random_normal(2048, 25, 0, 1e3));
  in[5] = std::numeric_limits<T>::denorm_min();
  in[6] = huge_value<T>();
  const double edges[] = {std::numeric_limits<double>::denorm_min(), 1e-310, std::numeric_limits<double>::min(),
                          1e-300, 3.4e38, std::numeric_limits<float>::max(), 1e300, 1e308,
                          std::numeric_limits<double>::max()};
  for (int codec : codec_ids()) {
    SCOPED_TRACE(zcoll_codec_name(codec));
    auto abs = [&](double eb, size_t cl) {
      auto p = params(eb, ZCOLL_EB_ABS, cl);
      p.codec = codec;
      return p;
    };
    for (double eb : edges) check_roundtrip(in, abs(eb, 64));
    // and the same on data of extreme magnitude
    for (auto& cs : adversarial_cases<T>(256)) {
      SCOPED_TRACE(cs.first);
      for (double eb : edges) check_roundtrip(cs.second, abs(eb, 32));
    }
  }
}

TYPED_TEST(RoundTrip, EbSweepRel) {
  using T = TypeParam;
  auto in = cast<T>(random_normal(4096, 31, 100, 20));
  for (double eb : {10.0, 1.0, 0.5, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-10, 1e-12, 1e-15, 1e-30}) {
    for (size_t cl : {size_t(0), size_t(64)}) check_roundtrip(in, params(eb, ZCOLL_EB_REL, cl));
  }
}

TYPED_TEST(RoundTrip, RelIgnoresNonFinite) {
  using T = TypeParam;
  auto d = random_normal(1000, 41, 0, 10);
  auto in = cast<T>(d);
  const auto nans = nan_patterns<T>();
  for (size_t i = 0; i < in.size(); i += 11) in[i] = nans[i % nans.size()];
  for (size_t i = 5; i < in.size(); i += 13) in[i] = (i % 2) ? std::numeric_limits<T>::infinity()
                                                              : -std::numeric_limits<T>::infinity();
  double eb_abs = 0;
  check_roundtrip(in, params(1e-3, ZCOLL_EB_REL, 64), nullptr, nullptr, &eb_abs);
  double range = finite_range(in.data(), in.size());
  EXPECT_TRUE(std::isfinite(eb_abs));
  EXPECT_NEAR(eb_abs, 1e-3 * range, 1e-12 * range);
}

TYPED_TEST(RoundTrip, RelConstantData) {
  using T = TypeParam;
  // no range: eb_abs = eb x max|x| over the finite values, or eb when that is 0
  for (T c : {T(0), T(-0.0), T(1.5), T(-7e20), std::numeric_limits<T>::max()}) {
    SCOPED_TRACE("constant " + std::to_string(static_cast<double>(c)));
    std::vector<T> in(300, c);
    const double mag = std::fabs(static_cast<double>(c));
    const double expect = std::min(mag > 0 ? 1e-3 * mag : 1e-3, std::numeric_limits<double>::max() / 4);
    double eb_abs = -1;
    check_roundtrip(in, params(1e-3, ZCOLL_EB_REL, 64), nullptr, nullptr, &eb_abs);
    EXPECT_DOUBLE_EQ(eb_abs, expect);
    EXPECT_EQ(eb_abs, expected_eb_abs(in.data(), in.size(), params(1e-3, ZCOLL_EB_REL)));
    // NaN/Inf around the constant do not count
    in[3] = std::numeric_limits<T>::quiet_NaN();
    in[100] = -std::numeric_limits<T>::infinity();
    check_roundtrip(in, params(1e-3, ZCOLL_EB_REL, 64), nullptr, nullptr, &eb_abs);
    EXPECT_DOUBLE_EQ(eb_abs, expect);
  }
}

TYPED_TEST(RoundTrip, RelNoFiniteValues) {
  using T = TypeParam;
  // no finite value at all: eb_abs = eb; NaN/Inf come back bit for bit
  for (auto& c : adversarial_cases<T>(200)) {
    if (c.first != "all_qnan" && c.first != "nan_patterns_only") continue;
    SCOPED_TRACE(c.first);
    auto p = params(1e-3, ZCOLL_EB_REL, 32);
    Compressed r = compress(p, c.second);
    ASSERT_EQ(r.rc, ZCOLL_SUCCESS) << zcoll_strerror(r.rc);
    EXPECT_EQ(r.eb_abs, 1e-3);
    std::vector<T> out;
    bool guards = false;
    ASSERT_EQ(decompress(r.stream, c.second.size(), &out, 1, &guards), ZCOLL_SUCCESS);
    EXPECT_TRUE(guards);
    EXPECT_TRUE(same_bits(out, c.second));
  }
}

TYPED_TEST(RoundTrip, RelHugeRange) {
  using T = TypeParam;
  // +-huge values: for double, max - min overflows double, but eb x (max - min)
  // does not; the guarantee must hold and eb_abs is that product.
  std::vector<T> in = cast<T>(random_normal(500, 51));
  in[0] = huge_value<T>();
  in[1] = -huge_value<T>();
  for (double eb : {1e-3, 1e-10, 0.1}) {
    double eb_abs = 0;
    auto p = params(eb, ZCOLL_EB_REL, 64);
    check_roundtrip(in, p, nullptr, nullptr, &eb_abs);
    double expect = expected_eb_abs(in.data(), in.size(), p);
    EXPECT_TRUE(std::fabs(eb_abs - expect) <= 1e-12 * expect) << "eb_abs " << eb_abs << " expected " << expect;
  }
  in[77] = std::numeric_limits<T>::max();
  in[78] = std::numeric_limits<T>::lowest();
  for (double eb : {1e-3, 0.5}) {
    double eb_abs = 0;
    auto p = params(eb, ZCOLL_EB_REL, 64);
    check_roundtrip(in, p, nullptr, nullptr, &eb_abs);
    double expect = expected_eb_abs(in.data(), in.size(), p);
    EXPECT_TRUE(std::fabs(eb_abs - expect) <= 1e-12 * expect) << "eb_abs " << eb_abs << " expected " << expect;
  }
}

TYPED_TEST(RoundTrip, QuantizerEdges) {
  using T = TypeParam;
  for (double eb : {1e-3, 0.1, 1.0, 3.7e-5, 0.75}) {
    auto in = quantizer_edges<T>(eb, 3000);
    for (size_t cl : {size_t(0), size_t(32)}) check_roundtrip(in, params(eb, ZCOLL_EB_ABS, cl));
  }
}

TYPED_TEST(RoundTrip, CountsAndChunkTails) {
  using T = TypeParam;
  const auto all = with_outliers<T>(3 * 16384 + 100);
  std::vector<std::pair<size_t, size_t>> cases;  // (count, chunk_len)
  for (size_t cl : kChunks) {
    for (size_t n : {1ul, 2ul, 31ul, 32ul, 33ul, 63ul, 64ul, 65ul, 127ul, 128ul, 129ul, 1000ul}) cases.push_back({n, cl});
    size_t c = cl ? cl : ZCOLL_DEFAULT_CHUNK_LEN;
    for (size_t n : {c - 1, c, c + 1, 2 * c - 1, 2 * c + 1, 3 * c + 17, 3 * c + 31, 3 * c + 33}) cases.push_back({n, cl});
  }
  for (auto [n, cl] : cases) {
    if (n > all.size()) continue;
    std::vector<T> in(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n));
    SCOPED_TRACE("count=" + std::to_string(n) + " chunk_len=" + std::to_string(cl));
    check_roundtrip(in, params(1e-3, ZCOLL_EB_ABS, cl));
    check_roundtrip(in, params(1e-2, ZCOLL_EB_REL, cl));
  }
}

TYPED_TEST(RoundTrip, LargeChunkLen) {
  using T = TypeParam;
  auto in = cast<T>(random_normal(70000, 71));
  for (size_t cl : {size_t(65536), size_t(ZCOLL_MAX_CHUNK_LEN)}) check_roundtrip(in, params(1e-3, ZCOLL_EB_ABS, cl));
}

// zcoll_codec_bound holds for incompressible input, any parameters.
TYPED_TEST(RoundTrip, BoundIncompressible) {
  using T = TypeParam;
  std::vector<std::pair<std::string, std::vector<T>>> inputs;
  const size_t n = 40000;
  inputs.push_back({"random_finite_bits", random_finite_bits<T>(n, 81)});
  {
    // random integers of full quantizer range: maximal residual widths
    std::mt19937_64 g(82);
    std::vector<T> v(n);
    for (auto& x : v) x = static_cast<T>(static_cast<double>(static_cast<int32_t>(g() % 2147483646u) - 1073741823) * 2e-3);
    inputs.push_back({"full_range_ints", v});
  }
  {
    // exact values and quantized values interleaved
    auto r = random_uniform(n, 83, -1e6, 1e6);
    for (size_t i = 0; i < n; i += 2) r[i] = 1e30 * (i % 4 ? 1 : -1);
    inputs.push_back({"alternating_exact", cast<T>(r)});
  }
  {
    auto v = random_finite_bits<T>(n, 84);
    const auto nans = nan_patterns<T>();
    for (size_t i = 0; i < n; i += 3) v[i] = nans[i % nans.size()];
    inputs.push_back({"bits_and_nans", v});
  }
  for (auto& [name, v] : inputs) {
    SCOPED_TRACE(name);
    for (size_t cnt : {size_t(1), size_t(31), size_t(33), size_t(16385), n}) {
      std::vector<T> in(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(cnt));
      for (size_t cl : {size_t(0), size_t(32), size_t(96)}) {
        for (double eb : {1e-30, 1e-3, 1.0}) check_roundtrip(in, params(eb, ZCOLL_EB_ABS, cl));
        check_roundtrip(in, params(1e-9, ZCOLL_EB_REL, cl));
      }
      if (cnt == n) {  // shaped: 40000 = 16 x 50 x 50
        for (int nd : {2, 3}) {
          auto p = params(1e-3, ZCOLL_EB_ABS, 32);
          p.ndims = nd;
          p.dims[0] = nd == 2 ? 800 : 16;
          p.dims[1] = 50;
          p.dims[2] = nd == 2 ? 0 : 50;
          check_roundtrip(in, p);
        }
      }
    }
  }
}
