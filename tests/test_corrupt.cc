// Corrupt input: truncations, single-bit flips, trailing garbage. Every one must
// be rejected, and no call may write outside the output buffer. Every test runs for
// each codec (fzl, lpbyte, lpbit, szx).
#include "test_util.h"

#include <map>

using namespace zt;

namespace {

struct Sample {
  std::string name;
  zcoll_dtype dtype;
  size_t count;
  std::vector<unsigned char> stream;
};

template <class T> Sample make(const std::string& name, const std::vector<T>& in, zcoll_codec_params p, int codec) {
  p.codec = codec;
  Compressed c = compress(p, in);
  EXPECT_EQ(c.rc, ZCOLL_SUCCESS) << name;
  return {name, Dt<T>::value, in.size(), c.stream};
}

std::vector<Sample> small_samples(int codec) {
  std::vector<Sample> v;
  {
    auto in = cast<float>(random_normal(100, 1, 10, 2));
    in[3] = std::numeric_limits<float>::quiet_NaN();
    in[40] = 1e30f;
    in[41] = -std::numeric_limits<float>::infinity();
    v.push_back(make("f32_100_chunk32", in, params(1e-3, ZCOLL_EB_ABS, 32), codec));
  }
  {
    auto in = cast<double>(random_normal(100, 2, -5, 1));
    in[7] = from_bits<double>(0x7ff0000000000001ull);
    in[64] = 1e300;
    v.push_back(make("f64_100_chunk32", in, params(1e-4, ZCOLL_EB_REL, 32), codec));
  }
  {
    auto in = cast<double>(random_normal(4 * 5 * 6, 3));
    auto p = params(1e-2, ZCOLL_EB_ABS, 32);
    p.ndims = 3;
    p.dims[0] = 4;
    p.dims[1] = 5;
    p.dims[2] = 6;
    v.push_back(make("f64_3d_4x5x6", in, p, codec));
  }
  {  // incompressible: stored raw
    v.push_back(make("f32_raw_bits", random_finite_bits<float>(70, 4), params(1e-30, ZCOLL_EB_ABS, 32), codec));
  }
  v.push_back(make("f32_one_value", std::vector<float>{3.25f}, params(1e-3), codec));
  v.push_back(make("f32_count0", std::vector<float>{}, params(1e-3), codec));
  v.push_back(make("f64_count0", std::vector<double>{}, params(1e-3, ZCOLL_EB_REL), codec));
  v.push_back(make("f64_const", std::vector<double>(65, 2.5), params(1e-3, ZCOLL_EB_ABS, 32), codec));
  return v;
}

Sample big_sample(int codec) {
  const auto& fields = available_fields();
  const Field& fl = load_field(fields.at(0), 50000);
  auto in = fl.spec.dtype == ZCOLL_FLOAT32 ? fl.f32 : cast<float>(fl.f64);
  return make("field_" + fl.spec.name + "_50k", in, params(1e-4, ZCOLL_EB_REL, 4096), codec);
}

bool in_set(int rc, std::initializer_list<int> s) {
  for (int c : s)
    if (rc == c) return true;
  return false;
}

// Feeds bytes to decompress, inspect and the reader; checks that decompress
// rejects them with one of `allowed`, and that nothing is written outside the
// output buffers. Returns the decompress code.
int expect_rejected(const Sample& s, const std::vector<unsigned char>& bytes, std::initializer_list<int> allowed,
                    const std::string& what) {
  SCOPED_TRACE(s.name + ": " + what);
  const size_t es = esize(s.dtype);
  // the corrupt bytes live in an exactly-sized heap block (so that a sanitizer
  // build catches over-reads) copied from the vector
  std::vector<unsigned char> buf(bytes);
  static const unsigned char empty_byte = 0;
  const unsigned char* in = buf.empty() ? &empty_byte : buf.data();
  const size_t in_size = buf.size();
  Guarded out(s.count * es);
  int rc = zcoll_decompress(in, in_size, s.dtype, out.data(), s.count, 1);
  EXPECT_TRUE(in_set(rc, allowed)) << "zcoll_decompress returned " << rc << " (" << zcoll_strerror(rc) << ")";
  EXPECT_TRUE(out.intact()) << "zcoll_decompress wrote outside the output buffer";

  // threads > 1 takes the same decision
  if (s.count > 0) {
    Guarded out2(s.count * es);
    int rc2 = zcoll_decompress(in, in_size, s.dtype, out2.data(), s.count, 3);
    EXPECT_EQ(rc2 == ZCOLL_SUCCESS, rc == ZCOLL_SUCCESS);
    EXPECT_TRUE(out2.intact());
  }

  zcoll_stream_info info;
  int irc = zcoll_stream_inspect(in, in_size, &info);
  (void)irc;

  zcoll_reader* r = nullptr;
  int orc = zcoll_reader_open(in, in_size, &r);
  if (orc == ZCOLL_SUCCESS && r) {
    const zcoll_stream_info* ri = zcoll_reader_info(r);
    bool all_ok = true;
    if (ri->count == s.count && ri->dtype == s.dtype) {
      Guarded rout(s.count * es);
      for (size_t k = ri->nchunks; k-- > 0;) {
        int crc = zcoll_reader_chunk(r, k, rout.data());
        if (crc != ZCOLL_SUCCESS) all_ok = false;
      }
      EXPECT_TRUE(rout.intact()) << "zcoll_reader_chunk wrote outside the output buffer";
      if (s.count > 0) {
        EXPECT_FALSE(all_ok) << "the reader accepted every chunk of a corrupt stream";
      }
    }
    zcoll_reader_close(&r);
  }
  return rc;
}

void truncations(const Sample& s, const std::vector<size_t>& lengths) {
  std::map<int, size_t> codes;
  for (size_t len : lengths) {
    if (len >= s.stream.size()) continue;
    std::vector<unsigned char> t(s.stream.begin(), s.stream.begin() + static_cast<std::ptrdiff_t>(len));
    codes[expect_rejected(s, t, {ZCOLL_ERR_CORRUPT, ZCOLL_ERR_VERSION}, "truncated to " + std::to_string(len))]++;
    if (::testing::Test::HasFailure()) return;
  }
}

void bit_flips(const Sample& s, const std::vector<size_t>& bits) {
  for (size_t b : bits) {
    if (b >= s.stream.size() * 8) continue;
    std::vector<unsigned char> t = s.stream;
    t[b / 8] ^= static_cast<unsigned char>(1u << (b % 8));
    expect_rejected(s, t,
                    {ZCOLL_ERR_CORRUPT, ZCOLL_ERR_VERSION, ZCOLL_ERR_MISMATCH, ZCOLL_ERR_DTYPE, ZCOLL_ERR_CODEC},
                    "bit " + std::to_string(b) + " (byte " + std::to_string(b / 8) + ") flipped of " +
                        std::to_string(s.stream.size()) + " bytes");
    if (::testing::Test::HasFailure()) return;
  }
}

class Corrupt : public ::testing::TestWithParam<int> {};

std::string codec_name(const ::testing::TestParamInfo<int>& i) { return zcoll_codec_name(i.param); }

}  // namespace

INSTANTIATE_TEST_SUITE_P(Codecs, Corrupt, ::testing::ValuesIn(codec_ids()),
                         codec_name);

TEST_P(Corrupt, SamplesAreValid) {
  for (const auto& s : small_samples(GetParam())) {
    SCOPED_TRACE(s.name);
    Guarded out(s.count * esize(s.dtype));
    EXPECT_EQ(zcoll_decompress(s.stream.data(), s.stream.size(), s.dtype, out.data(), s.count, 1), ZCOLL_SUCCESS);
    EXPECT_TRUE(out.intact());
  }
}

TEST_P(Corrupt, EveryTruncationSmall) {
  for (const auto& s : small_samples(GetParam())) {
    std::vector<size_t> lens(s.stream.size());
    for (size_t i = 0; i < lens.size(); ++i) lens[i] = i;
    truncations(s, lens);
  }
}

TEST_P(Corrupt, EveryBitFlipSmall) {
  for (const auto& s : small_samples(GetParam())) {
    std::vector<size_t> bits(s.stream.size() * 8);
    for (size_t i = 0; i < bits.size(); ++i) bits[i] = i;
    bit_flips(s, bits);
  }
}

TEST_P(Corrupt, TruncationsBig) {
  Sample s = big_sample(GetParam());
  const size_t n = s.stream.size();
  std::vector<size_t> lens;
  for (size_t i = 0; i < 512 && i < n; ++i) lens.push_back(i);
  for (size_t i = 512; i < n; i += 997) lens.push_back(i);
  for (size_t i = 1; i <= 64 && i <= n; ++i) lens.push_back(n - i);
  std::mt19937_64 g(5);
  for (int i = 0; i < 200; ++i) lens.push_back(g() % n);
  truncations(s, lens);
}

TEST_P(Corrupt, BitFlipsBig) {
  Sample s = big_sample(GetParam());
  const size_t nbits = s.stream.size() * 8;
  std::vector<size_t> bits;
  for (size_t i = 0; i < 320 * 8 && i < nbits; ++i) bits.push_back(i);  // header and index
  for (size_t i = 1; i <= 16 * 8; ++i) bits.push_back(nbits - i);         // the end
  std::mt19937_64 g(6);
  for (int i = 0; i < 2500; ++i) bits.push_back(g() % nbits);           // all over the payload
  bit_flips(s, bits);
}

TEST_P(Corrupt, TrailingGarbage) {
  std::vector<Sample> all = small_samples(GetParam());
  all.push_back(big_sample(GetParam()));
  std::mt19937_64 g(7);
  for (const auto& s : all) {
    for (size_t extra : {1, 3, 7, 8, 9, 64, 1000}) {
      for (int kind = 0; kind < 3; ++kind) {
        std::vector<unsigned char> t = s.stream;
        for (size_t i = 0; i < extra; ++i)
          t.push_back(kind == 0 ? 0 : kind == 1 ? 0xff : static_cast<unsigned char>(g()));
        expect_rejected(s, t, {ZCOLL_ERR_CORRUPT},
                        std::to_string(extra) + " trailing bytes, kind " + std::to_string(kind));
        if (HasFailure()) return;
      }
    }
  }
}

// Random whole-byte damage and garbage that starts with a plausible header.
TEST_P(Corrupt, ByteDamage) {
  std::mt19937_64 g(8);
  std::vector<Sample> all = small_samples(GetParam());
  for (const auto& s : all) {
    for (int it = 0; it < 300; ++it) {
      std::vector<unsigned char> t = s.stream;
      size_t nb = 1 + g() % 4;
      for (size_t j = 0; j < nb; ++j) {
        size_t pos = g() % t.size();
        unsigned char v = static_cast<unsigned char>(g());
        if (v == t[pos]) v ^= 0x80;
        t[pos] = v;
      }
      expect_rejected(s, t,
                      {ZCOLL_ERR_CORRUPT, ZCOLL_ERR_VERSION, ZCOLL_ERR_MISMATCH, ZCOLL_ERR_DTYPE, ZCOLL_ERR_CODEC},
                      "random bytes replaced, iteration " + std::to_string(it));
      if (HasFailure()) return;
    }
  }
  // pure garbage of many lengths
  Sample fake{"garbage", ZCOLL_FLOAT32, 100, {}};
  for (size_t len = 1; len < 600; len += 7) {
    std::vector<unsigned char> t(len);
    for (auto& b : t) b = static_cast<unsigned char>(g());
    Guarded out(100 * 4);
    int rc = zcoll_decompress(t.data(), t.size(), ZCOLL_FLOAT32, out.data(), 100, 1);
    EXPECT_NE(rc, ZCOLL_SUCCESS);
    EXPECT_TRUE(out.intact());
    zcoll_stream_info info;
    (void)zcoll_stream_inspect(t.data(), t.size(), &info);
  }
}

// A valid stream with the wrong count/dtype never writes past the buffer.
TEST_P(Corrupt, MismatchWritesNothingOutside) {
  for (const auto& s : small_samples(GetParam())) {
    SCOPED_TRACE(s.name);
    for (size_t c : {s.count + 1, s.count + 100, s.count ? s.count - 1 : 0}) {
      if (c == s.count) continue;
      Guarded out(c * esize(s.dtype));
      EXPECT_EQ(zcoll_decompress(s.stream.data(), s.stream.size(), s.dtype, out.data(), c, 1), ZCOLL_ERR_MISMATCH);
      EXPECT_TRUE(out.intact());
    }
    zcoll_dtype other = s.dtype == ZCOLL_FLOAT32 ? ZCOLL_FLOAT64 : ZCOLL_FLOAT32;
    Guarded out(s.count * 8);
    EXPECT_EQ(zcoll_decompress(s.stream.data(), s.stream.size(), other, out.data(), s.count, 1), ZCOLL_ERR_MISMATCH);
    EXPECT_TRUE(out.intact());
  }
}
