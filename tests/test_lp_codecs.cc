// The codecs other than fzl: the linear-predictor codecs (ZCOLL_CODEC_LPBYTE,
// ZCOLL_CODEC_LPBIT) and the SZx-class baseline (ZCOLL_CODEC_SZX). The same promises as fzl,
// checked the same way (check_roundtrip: every finite element within eb_abs in
// double, no tolerance; NaN/Inf bit for bit; nothing written outside the buffers; the
// stream within zcoll_codec_bound), on the adversarial set, the real fields, both element
// types, ABS and REL; streams identical for any thread count and through the writer and
// reader APIs; malformed chunks behind valid checksums rejected. (Truncations and bit
// flips of whole streams: test_corrupt.cc runs for every codec.)
#include "reseal_stream.h"
#include "test_util.h"

using namespace zt;

namespace {

const std::vector<int> kOtherCodecs = codec_ids_other_than_fzl();

const char* codec_name(int c) { return zcoll_codec_name(c); }

zcoll_codec_params lp_params(int codec, double eb, int mode = ZCOLL_EB_ABS, size_t chunk_len = 0, int threads = 1) {
  zcoll_codec_params p = params(eb, mode, chunk_len, threads);
  p.codec = codec;
  return p;
}

template <class T> class LpCodecs : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
struct TypeNames {
  template <class T> static std::string GetName(int) { return Dt<T>::name(); }
};
TYPED_TEST_SUITE(LpCodecs, Types, TypeNames);

// Values near the predictors' decisions: a smooth signal with steps of k bins of 2 eb
// added (around lpbyte's correction limit of 125 bins), and isolated outliers.
template <class T> std::vector<T> bin_edges(double eb, size_t n) {
  std::vector<T> v(n);
  double x = 1.0;
  std::mt19937_64 g(99);
  const double ks[] = {0, 0.5, 1, 1.5, 2, 124.4, 124.5, 124.6, 125, 125.5, 126, 200, 1e4, -0.5, -125.5, -126, -1e6};
  for (size_t i = 0; i < n; ++i) {
    const double k = ks[g() % (sizeof ks / sizeof ks[0])];
    x += (g() % 4 == 0 ? k : 0.0) * 2 * eb + 0.1 * eb;
    v[i] = static_cast<T>(x);
  }
  return v;
}

}  // namespace

// ------------------------------------------------------------------ the guarantee

TYPED_TEST(LpCodecs, Adversarial) {
  using T = TypeParam;
  for (size_t n : {size_t(3 * 64 + 17), size_t(5000)}) {  // one predictor chain, and four lanes
    for (auto& c : adversarial_cases<T>(n)) {
      SCOPED_TRACE(c.first + " n=" + std::to_string(n));
      for (int codec : kOtherCodecs) {
        SCOPED_TRACE(codec_name(codec));
        for (size_t cl : {size_t(0), size_t(32), size_t(2048)}) {
          for (double eb : {1e-6, 1e-3, 1.0, 1e3}) check_roundtrip(c.second, lp_params(codec, eb, ZCOLL_EB_ABS, cl));
          for (double eb : {1e-1, 1e-3, 1e-7}) check_roundtrip(c.second, lp_params(codec, eb, ZCOLL_EB_REL, cl));
        }
      }
    }
  }
}

TYPED_TEST(LpCodecs, RandomData) {
  using T = TypeParam;
  for (uint64_t seed : {1u, 2u}) {
    for (int kind = 0; kind < 2; ++kind) {
      auto in = cast<T>(kind == 0 ? random_uniform(20000, seed, -10, 10) : random_normal(20000, seed, 5, 3));
      SCOPED_TRACE(std::string(kind == 0 ? "uniform" : "normal") + " seed " + std::to_string(seed));
      for (int codec : kOtherCodecs) {
        SCOPED_TRACE(codec_name(codec));
        for (double eb : {1e-1, 1e-3, 1e-6}) check_roundtrip(in, lp_params(codec, eb, ZCOLL_EB_ABS, 0));
        for (double eb : {1e-2, 1e-4}) check_roundtrip(in, lp_params(codec, eb, ZCOLL_EB_REL, 64));
      }
    }
  }
}

TYPED_TEST(LpCodecs, BinEdges) {
  using T = TypeParam;
  for (double eb : {1e-3, 0.25, 3.7e-5}) {
    auto in = bin_edges<T>(eb, 6000);
    for (int codec : kOtherCodecs) {
      SCOPED_TRACE(std::string(codec_name(codec)) + " eb " + std::to_string(eb));
      for (size_t cl : {size_t(0), size_t(64)}) check_roundtrip(in, lp_params(codec, eb, ZCOLL_EB_ABS, cl));
    }
  }
  for (double eb : {1e-3, 0.1, 0.75}) {
    auto in = quantizer_edges<T>(eb, 3000);
    for (int codec : kOtherCodecs) check_roundtrip(in, lp_params(codec, eb, ZCOLL_EB_ABS, 0));
  }
}

// Every bound from 1e-30 to 1e30 on data of many scales: every exponent code, every kept
// mantissa width (lpbit) and every correction (lpbyte) comes up somewhere.
TYPED_TEST(LpCodecs, EbSweepAbs) {
  using T = TypeParam;
  std::vector<double> d;
  for (double s : {1.0, 1e10, 1e-10}) {
    auto a = random_normal(512, static_cast<uint64_t>(s * 3 + 21), 0, s);
    d.insert(d.end(), a.begin(), a.end());
  }
  std::mt19937_64 g(24);
  std::uniform_real_distribution<double> e(-37, 37);
  for (size_t i = 0; i < 256; ++i) d.push_back((i % 2 ? -1 : 1) * std::pow(10.0, e(g)));
  for (size_t i = 0; d.size() < 2600; ++i) d.push_back(1e3 + 0.25 * static_cast<double>(i));
  auto in = cast<T>(d);
  for (int codec : kOtherCodecs) {
    SCOPED_TRACE(codec_name(codec));
    for (int k = -30; k <= 30; k += 2) check_roundtrip(in, lp_params(codec, std::pow(10.0, k), ZCOLL_EB_ABS, 0));
  }
}

// (Extreme bounds, denormal to DBL_MAX: RoundTrip.EbExtremeAbs runs them for every codec.)

TYPED_TEST(LpCodecs, RelSpecialRanges) {
  using T = TypeParam;
  for (int codec : kOtherCodecs) {
    SCOPED_TRACE(codec_name(codec));
    // no range: eb_abs = eb x max|x| (or eb), as fzl resolves it
    for (T c : {T(0), T(1.5), T(-7e20), std::numeric_limits<T>::max()}) {
      std::vector<T> in(300, c);
      in[3] = std::numeric_limits<T>::quiet_NaN();
      double eb_abs = -1;
      check_roundtrip(in, lp_params(codec, 1e-3, ZCOLL_EB_REL, 64), nullptr, nullptr, &eb_abs);
      EXPECT_EQ(eb_abs, expected_eb_abs(in.data(), in.size(), params(1e-3, ZCOLL_EB_REL)));
    }
    // max - min overflowing double
    std::vector<T> in = cast<T>(random_normal(500, 51));
    in[0] = huge_value<T>();
    in[1] = -huge_value<T>();
    in[77] = std::numeric_limits<T>::max();
    in[78] = std::numeric_limits<T>::lowest();
    for (double eb : {1e-3, 0.5}) check_roundtrip(in, lp_params(codec, eb, ZCOLL_EB_REL, 64));
  }
}

TYPED_TEST(LpCodecs, CountsAndChunkTails) {
  using T = TypeParam;
  const auto all = with_outliers<T>(3 * 16384 + 100);
  for (int codec : kOtherCodecs) {
    for (size_t cl : {size_t(0), size_t(32), size_t(2048), size_t(4096 + 32)}) {
      const size_t c = cl ? cl : ZCOLL_DEFAULT_CHUNK_LEN;
      // the lane split starts at 2048 values per chunk; chunk tails of every size
      for (size_t n : {size_t(1), size_t(2), size_t(3), size_t(4), size_t(5), size_t(33), size_t(2047), size_t(2048),
                       size_t(2049), size_t(2051), c - 1, c + 1, 2 * c + 2047, 2 * c + 2049}) {
        if (n > all.size()) continue;
        std::vector<T> in(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n));
        SCOPED_TRACE(std::string(codec_name(codec)) + " count=" + std::to_string(n) +
                     " chunk_len=" + std::to_string(cl));
        check_roundtrip(in, lp_params(codec, 1e-3, ZCOLL_EB_ABS, cl));
        check_roundtrip(in, lp_params(codec, 1e-2, ZCOLL_EB_REL, cl));
      }
    }
  }
}

// zcoll_codec_bound holds for incompressible input (chunks fall back to raw).
TYPED_TEST(LpCodecs, BoundIncompressible) {
  using T = TypeParam;
  auto bits = random_finite_bits<T>(20000, 81);
  auto mixed = cast<T>(random_uniform(20000, 83, -1e6, 1e6));
  for (size_t i = 0; i < mixed.size(); i += 2) mixed[i] = static_cast<T>(1e30 * (i % 4 ? 1 : -1));
  for (int codec : kOtherCodecs) {
    SCOPED_TRACE(codec_name(codec));
    for (const auto* in : {&bits, &mixed})
      for (size_t cl : {size_t(0), size_t(32), size_t(2048)})
        for (double eb : {1e-30, 1e-3, 1.0}) check_roundtrip(*in, lp_params(codec, eb, ZCOLL_EB_ABS, cl));
  }
}

// ------------------------------------------------------------------ real fields

namespace {

class LpFields : public ::testing::TestWithParam<FieldSpec> {
 protected:
  const Field& field() { return load_field(GetParam(), 100000); }
};

std::string field_name(const ::testing::TestParamInfo<FieldSpec>& i) { return i.param.name; }

template <class F> void with_values(const Field& fl, F&& f) {
  if (fl.spec.dtype == ZCOLL_FLOAT32) f(fl.f32);
  else f(fl.f64);
}

}  // namespace

TEST_P(LpFields, GuaranteeRelAbs) {
  const Field& fl = field();
  with_values(fl, [&](const auto& in) {
    const double range = finite_range(in.data(), in.size());
    for (int codec : kOtherCodecs) {
      SCOPED_TRACE(codec_name(codec));
      for (double eb : {1e-2, 1e-3, 1e-4, 1e-5, 1e-6}) check_roundtrip(in, lp_params(codec, eb, ZCOLL_EB_REL, 0));
      check_roundtrip(in, lp_params(codec, 1e-3, ZCOLL_EB_REL, 1024));
      for (double f : {1e-1, 1e-4, 3.3e-7}) check_roundtrip(in, lp_params(codec, f * range, ZCOLL_EB_ABS, 0));
    }
  });
}

TEST_P(LpFields, StreamApis) {
  const Field& fl = field();
  with_values(fl, [&](const auto& in) {
    for (int codec : kOtherCodecs) {
      SCOPED_TRACE(codec_name(codec));
      check_stream_apis(in, lp_params(codec, 1e-4, ZCOLL_EB_REL, 0));
      check_stream_apis(in, lp_params(codec, 1e-3, ZCOLL_EB_REL, 4096));
    }
  });
}

// Not a promise of the API: a codec that stored everything exactly would pass the rest.
// At REL 1e-3 lpbyte and lpbit reach about 4x or more on every field here, szx about 2.5x
// or more; require 2x.
TEST_P(LpFields, SanityCompresses) {
  const Field& fl = field();
  with_values(fl, [&](const auto& in) {
    using T = typename std::decay_t<decltype(in)>::value_type;
    for (int codec : kOtherCodecs) {
      Compressed c = compress(lp_params(codec, 1e-3, ZCOLL_EB_REL), in);
      ASSERT_EQ(c.rc, 0);
      const double ratio = static_cast<double>(in.size() * sizeof(T)) / static_cast<double>(c.stream.size());
      std::printf("[ ratio    ] %-18s %s %-6s REL 1e-3: %.2fx\n", fl.spec.name.c_str(), Dt<T>::name(),
                  codec_name(codec), ratio);
      EXPECT_GE(ratio, 2.0) << codec_name(codec);
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Real, LpFields, ::testing::ValuesIn(available_fields()), field_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(LpFields);

// ------------------------------------------------------------------ stream behaviour

TYPED_TEST(LpCodecs, StreamApisAdversarial) {
  using T = TypeParam;
  for (auto& c : adversarial_cases<T>(5000)) {
    SCOPED_TRACE(c.first);
    for (int codec : kOtherCodecs) check_stream_apis(c.second, lp_params(codec, 1e-3, ZCOLL_EB_REL, 2048));
  }
}

// A shape hint is recorded but does not change the chunks or the values.
TEST(LpCodecsApi, ShapeHintRecordedNotUsed) {
  auto in = cast<float>(random_normal(4 * 50 * 60, 5));
  for (int codec : kOtherCodecs) {
    auto flat = lp_params(codec, 1e-3);
    auto shaped = flat;
    shaped.ndims = 3;
    shaped.dims[0] = 4;
    shaped.dims[1] = 50;
    shaped.dims[2] = 60;
    std::vector<unsigned char> s1, s3;
    std::vector<float> o1, o3;
    check_roundtrip(in, flat, &s1, &o1);
    check_roundtrip(in, shaped, &s3, &o3);
    ASSERT_EQ(s1.size(), s3.size());
    EXPECT_TRUE(std::equal(s1.begin() + 64, s1.end(), s3.begin() + 64)) << codec_name(codec);
    EXPECT_TRUE(same_bits(o1, o3));
  }
}

TEST(LpCodecsApi, InspectAndCombine) {
  auto in = cast<double>(random_normal(3000, 8));
  Compressed f = compress(params(1e-3), in);
  ASSERT_EQ(f.rc, ZCOLL_SUCCESS);
  for (int codec : kOtherCodecs) {
    SCOPED_TRACE(codec_name(codec));
    Compressed c = compress(lp_params(codec, 1e-3), in);
    ASSERT_EQ(c.rc, ZCOLL_SUCCESS);
    zcoll_stream_info info;
    ASSERT_EQ(zcoll_stream_inspect(c.stream.data(), c.stream.size(), &info), ZCOLL_SUCCESS);
    EXPECT_EQ(info.codec, codec);
    // zcoll_combine is fzl only
    std::vector<unsigned char> out(zcoll_codec_bound(in.size(), ZCOLL_FLOAT64));
    size_t size = 0;
    EXPECT_EQ(zcoll_combine(ZCOLL_OP_SUM, c.stream.data(), c.stream.size(), c.stream.data(), c.stream.size(),
                            out.data(), out.size(), &size, 1),
              ZCOLL_ERR_CODEC);
    EXPECT_EQ(zcoll_combine(ZCOLL_OP_MAX, f.stream.data(), f.stream.size(), c.stream.data(), c.stream.size(),
                            out.data(), out.size(), &size, 1),
              ZCOLL_ERR_CODEC);
    EXPECT_EQ(zcoll_combine(ZCOLL_OP_MIN, c.stream.data(), c.stream.size(), f.stream.data(), f.stream.size(),
                            out.data(), out.size(), &size, 1),
              ZCOLL_ERR_CODEC);
  }
}

// Compression into a buffer smaller than the raw layout (one pass in order, staging for
// chunks that may not fit) gives the same stream, or BUFFER_TOO_SMALL without writing
// past the buffer.
TEST(LpCodecsApi, SmallOutputBuffers) {
  auto in = cast<float>(random_normal(40000, 9, 3, 1));
  for (int codec : kOtherCodecs) {
    SCOPED_TRACE(codec_name(codec));
    auto p = lp_params(codec, 1e-3, ZCOLL_EB_ABS, 2048, 3);
    Compressed ref = compress(p, in);
    ASSERT_EQ(ref.rc, ZCOLL_SUCCESS);
    for (size_t cap : {ref.stream.size(), ref.stream.size() + 100, ref.stream.size() - 1, size_t(64), size_t(200)}) {
      Guarded g(cap);
      size_t size = 0;
      const int rc = zcoll_compress(&p, ZCOLL_FLOAT32, in.data(), in.size(), g.data(), cap, &size, nullptr);
      EXPECT_TRUE(g.intact()) << "cap " << cap;
      if (cap >= ref.stream.size()) {
        ASSERT_EQ(rc, ZCOLL_SUCCESS) << cap;
        EXPECT_TRUE(std::equal(ref.stream.begin(), ref.stream.end(), g.data())) << cap;
      } else {
        EXPECT_EQ(rc, ZCOLL_ERR_BUFFER_TOO_SMALL) << cap;
      }
    }
  }
}

// ------------------------------------------------------------------ malformed chunks

namespace {

// The first chunk of a one-chunk stream: its bytes, replaced and re-sealed (sizes and
// checksums made valid again), so that the chunk decoder itself must judge them.
std::vector<unsigned char> with_chunk(const std::vector<unsigned char>& stream, const std::vector<unsigned char>& chunk,
                                      bool raw = false) {
  std::vector<unsigned char> s(64 + 8 + chunk.size());
  std::memcpy(s.data(), stream.data(), 64 + 8);
  if (!chunk.empty()) std::memcpy(s.data() + 64 + 8, chunk.data(), chunk.size());
  const uint32_t size = static_cast<uint32_t>(chunk.size()) | (raw ? 0x80000000u : 0u);
  std::memcpy(s.data() + 64, &size, 4);
  zcoll_fuzz::reseal_stream(s.data(), s.size());
  return s;
}

template <class T> int decode_rc(const std::vector<unsigned char>& s, size_t n, bool* guards) {
  std::vector<T> out;
  return decompress(s, n, &out, 1, guards);
}

}  // namespace

TEST(LpCodecsCorrupt, LpbyteMalformed) {
  std::vector<float> in(100);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(std::sin(0.1 * i));
  in[50] = std::numeric_limits<float>::quiet_NaN();  // one miss: its value follows the codes
  Compressed c = compress(lp_params(ZCOLL_CODEC_LPBYTE, 1e-3, ZCOLL_EB_ABS, 128), in);
  ASSERT_EQ(c.rc, ZCOLL_SUCCESS);
  ASSERT_EQ(c.stream.size(), 64 + 8 + 100 + 4u) << "expected 100 codes and one stored value";
  const std::vector<unsigned char> chunk(c.stream.begin() + 72, c.stream.end());
  bool guards = false;
  ASSERT_EQ(decode_rc<float>(with_chunk(c.stream, chunk), 100, &guards), ZCOLL_SUCCESS) << "re-sealing changed nothing";
  auto expect_corrupt = [&](std::vector<unsigned char> ch, const char* what) {
    EXPECT_EQ(decode_rc<float>(with_chunk(c.stream, ch), 100, &guards), ZCOLL_ERR_CORRUPT) << what;
    EXPECT_TRUE(guards) << what;
  };
  {
    auto ch = chunk;
    ch[10] = 0xFE;
    expect_corrupt(ch, "reserved code 0xFE");
  }
  {
    auto ch = chunk;
    ch[10] = 0xFF;  // a second miss without a value
    expect_corrupt(ch, "miss without its value");
  }
  {
    auto ch = chunk;
    ch[50] = 0x01;  // the stored value is left over
    expect_corrupt(ch, "a stored value no code uses");
  }
  {
    auto ch = chunk;
    ch.resize(ch.size() - 1);
    expect_corrupt(ch, "values section not whole values");
  }
  {
    std::vector<unsigned char> ch(chunk.begin(), chunk.begin() + 99);
    expect_corrupt(ch, "fewer bytes than codes");
  }
  // every code byte value at every position decodes safely (some valid, some not)
  for (size_t pos : {size_t(0), size_t(1), size_t(4), size_t(50), size_t(99)}) {
    for (unsigned v = 0; v < 256; ++v) {
      auto ch = chunk;
      ch[pos] = static_cast<unsigned char>(v);
      const int rc = decode_rc<float>(with_chunk(c.stream, ch), 100, &guards);
      EXPECT_TRUE(rc == ZCOLL_SUCCESS || rc == ZCOLL_ERR_CORRUPT) << rc;
      EXPECT_TRUE(guards);
    }
  }
}

TEST(LpCodecsCorrupt, LpbitMalformed) {
  std::vector<double> in(300);
  for (size_t i = 0; i < in.size(); ++i) in[i] = 100 * std::sin(0.05 * i) + (i % 7 == 0 ? 3.0 : 0.0);
  in[100] = std::numeric_limits<double>::infinity();
  in[200] = 1e300;
  Compressed c = compress(lp_params(ZCOLL_CODEC_LPBIT, 1e-4, ZCOLL_EB_ABS, 512), in);
  ASSERT_EQ(c.rc, ZCOLL_SUCCESS);
  const std::vector<unsigned char> chunk(c.stream.begin() + 72, c.stream.end());
  ASSERT_LT(chunk.size(), in.size() * 8) << "the chunk must be encoded, not raw";
  bool guards = false;
  ASSERT_EQ(decode_rc<double>(with_chunk(c.stream, chunk), in.size(), &guards), ZCOLL_SUCCESS);
  auto expect_corrupt = [&](std::vector<unsigned char> ch, const char* what) {
    EXPECT_EQ(decode_rc<double>(with_chunk(c.stream, ch), in.size(), &guards), ZCOLL_ERR_CORRUPT) << what;
    EXPECT_TRUE(guards) << what;
  };
  {
    auto ch = chunk;
    ch[0] = 7;
    expect_corrupt(ch, "exponent-code width 7");
  }
  {
    auto ch = chunk;
    ch.resize(ch.size() - 1);
    expect_corrupt(ch, "one byte short");
  }
  {
    auto ch = chunk;
    ch.push_back(0);
    expect_corrupt(ch, "one byte too many");
  }
  {
    auto ch = chunk;
    ch.back() |= 0x80;  // a padding bit, unless the last entry ends exactly on the byte
    const int rc = decode_rc<double>(with_chunk(c.stream, ch), in.size(), &guards);
    EXPECT_TRUE(rc == ZCOLL_ERR_CORRUPT || rc == ZCOLL_SUCCESS);
    EXPECT_TRUE(guards);
  }
  // every single-bit flip and every width byte decodes safely
  for (size_t bit = 0; bit < 8 * chunk.size(); ++bit) {
    auto ch = chunk;
    ch[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
    const int rc = decode_rc<double>(with_chunk(c.stream, ch), in.size(), &guards);
    ASSERT_TRUE(rc == ZCOLL_SUCCESS || rc == ZCOLL_ERR_CORRUPT) << "bit " << bit << ": " << rc;
    ASSERT_TRUE(guards) << "bit " << bit;
  }
  for (unsigned v = 0; v < 256; ++v) {
    auto ch = chunk;
    ch[0] = static_cast<unsigned char>(v);
    const int rc = decode_rc<double>(with_chunk(c.stream, ch), in.size(), &guards);
    EXPECT_TRUE(rc == ZCOLL_SUCCESS || rc == ZCOLL_ERR_CORRUPT) << v;
    EXPECT_TRUE(guards);
  }
}

// Random damage to the chunks of real-field streams, re-sealed: never outside the buffers.
TEST(LpCodecsCorrupt, ResealedDamage) {
  const Field& fl = load_field(available_fields().at(0), 20000);
  const auto in = fl.spec.dtype == ZCOLL_FLOAT32 ? fl.f32 : cast<float>(fl.f64);
  std::mt19937_64 g(11);
  for (int codec : kOtherCodecs) {
    Compressed c = compress(lp_params(codec, 1e-4, ZCOLL_EB_REL, 4096), in);
    ASSERT_EQ(c.rc, ZCOLL_SUCCESS);
    zcoll_stream_info info;
    ASSERT_EQ(zcoll_stream_inspect(c.stream.data(), c.stream.size(), &info), ZCOLL_SUCCESS);
    const size_t data = 64 + 8 * info.nchunks;
    int corrupt = 0;
    for (int it = 0; it < 400; ++it) {
      auto s = c.stream;
      for (int k = 1 + static_cast<int>(g() % 4); k > 0; --k)
        s[data + g() % (s.size() - data)] ^= static_cast<unsigned char>(1 + g() % 255);
      zcoll_fuzz::reseal_stream(s.data(), s.size());
      bool guards = false;
      std::vector<float> out;
      const int rc = decompress(s, in.size(), &out, 1 + it % 3, &guards);
      ASSERT_TRUE(rc == ZCOLL_SUCCESS || rc == ZCOLL_ERR_CORRUPT)
          << codec_name(codec) << " iteration " << it << ": " << rc;
      ASSERT_TRUE(guards) << codec_name(codec) << " iteration " << it;
      corrupt += rc == ZCOLL_ERR_CORRUPT;
    }
    std::printf("[ damage   ] %s: %d of 400 re-sealed damaged streams rejected\n", codec_name(codec), corrupt);
  }
}
