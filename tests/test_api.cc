// API contract: error codes, argument checking, defaults, zcoll_codec_bound,
// count 0, chunk length and shape validation, inspect, mismatch.
#include "test_util.h"

#include <cctype>
#include <climits>
#include <set>

using namespace zt;

namespace {

std::vector<float> small_f32(size_t n = 100) { return cast<float>(random_normal(n, 1)); }

int compress_rc(const zcoll_codec_params& p, zcoll_dtype dt = ZCOLL_FLOAT32, size_t n = 100) {
  std::vector<double> in = random_normal(n, 5);
  std::vector<float> in32 = cast<float>(in);
  const void* src = dt == ZCOLL_FLOAT64 ? static_cast<const void*>(in.data()) : in32.data();
  size_t cap = zcoll_codec_bound(n, ZCOLL_FLOAT64) + 1024;
  std::vector<unsigned char> out(cap);
  size_t out_size = 0;
  return zcoll_compress(&p, dt, src, n, out.data(), cap, &out_size, nullptr);
}

int writer_begin_rc(const zcoll_codec_params& p, zcoll_dtype dt = ZCOLL_FLOAT32, size_t n = 100) {
  std::vector<double> in = random_normal(n, 5);
  size_t cap = zcoll_codec_bound(n, ZCOLL_FLOAT64) + 1024;
  std::vector<unsigned char> out(cap);
  zcoll_writer* w = nullptr;
  int rc = zcoll_writer_begin(&p, dt, in.data(), n, out.data(), cap, &w);
  if (rc == ZCOLL_SUCCESS) {
    EXPECT_NE(w, nullptr);
  } else {
    EXPECT_EQ(w, nullptr) << "a failed zcoll_writer_begin should leave *writer NULL";
  }
  zcoll_writer_abort(&w);
  return rc;
}

}  // namespace

TEST(Api, VersionString) {
  ASSERT_NE(zcoll_version_string(), nullptr);
  char expect[32];
  std::snprintf(expect, sizeof expect, "%d.%d.%d", ZCOLL_VERSION_MAJOR, ZCOLL_VERSION_MINOR, ZCOLL_VERSION_PATCH);
  EXPECT_STREQ(zcoll_version_string(), expect);
}

TEST(Api, StrerrorEveryCode) {
  std::set<std::string> seen;
  for (int c = ZCOLL_SUCCESS; c <= ZCOLL_ERR_IO; ++c) {
    const char* m = zcoll_strerror(c);
    ASSERT_NE(m, nullptr) << c;
    EXPECT_GT(std::strlen(m), 0u) << c;
    seen.insert(m);
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(ZCOLL_ERR_IO + 1)) << "messages should be distinct";
  for (int c : {-1, 12, 13, 100, 1000, INT_MAX, INT_MIN}) {
    const char* m = zcoll_strerror(c);
    ASSERT_NE(m, nullptr) << c;
    EXPECT_GT(std::strlen(m), 0u) << c;
  }
}

TEST(Api, ParamsInitDefaults) {
  zcoll_codec_params p;
  std::memset(&p, 0x7f, sizeof p);
  zcoll_codec_params_init(&p);
  EXPECT_EQ(p.codec, ZCOLL_CODEC_FZL);
  EXPECT_EQ(p.eb_mode, ZCOLL_EB_ABS);
  EXPECT_EQ(p.threads, 0);
  EXPECT_EQ(p.chunk_len, 0u);
  EXPECT_TRUE(p.ndims == 0 || p.ndims == 1);
}

TEST(Api, BoundBasics) {
  for (zcoll_dtype dt : {ZCOLL_FLOAT32, ZCOLL_FLOAT64}) {
    EXPECT_GT(zcoll_codec_bound(0, dt), 0u) << "a count-0 stream has a header, so the bound is > 0";
    for (size_t n : {1ul, 31ul, 32ul, 33ul, 1000ul, 16384ul, 16385ul, 1000000ul}) {
      size_t b = zcoll_codec_bound(n, dt);
      EXPECT_GE(b, n * esize(dt)) << n;
      EXPECT_GE(b, zcoll_codec_bound(n - 1, dt)) << "bound should not decrease with count, n=" << n;
    }
  }
  EXPECT_EQ(zcoll_codec_bound(100, static_cast<zcoll_dtype>(0)), 0u);
  EXPECT_EQ(zcoll_codec_bound(100, static_cast<zcoll_dtype>(3)), 0u);
  // overflow: the true bound exceeds count * element size > SIZE_MAX
  EXPECT_EQ(zcoll_codec_bound(SIZE_MAX, ZCOLL_FLOAT32), 0u);
  EXPECT_EQ(zcoll_codec_bound(SIZE_MAX, ZCOLL_FLOAT64), 0u);
  EXPECT_EQ(zcoll_codec_bound(SIZE_MAX / 4, ZCOLL_FLOAT64), 0u);
  EXPECT_EQ(zcoll_codec_bound(SIZE_MAX / 2, ZCOLL_FLOAT32), 0u);
  EXPECT_EQ(zcoll_codec_bound(SIZE_MAX / 4 + 1, ZCOLL_FLOAT32), 0u);
}

TEST(Api, BadEb) {
  const double bad[] = {0.0, -0.0, -1.0, -1e-30, std::numeric_limits<double>::quiet_NaN(),
                        -std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                        -std::numeric_limits<double>::infinity()};
  for (int mode : {ZCOLL_EB_ABS, ZCOLL_EB_REL}) {
    for (double eb : bad) {
      auto p = params(eb, mode);
      EXPECT_EQ(compress_rc(p), ZCOLL_ERR_ARG) << "eb=" << eb << " mode=" << mode;
      EXPECT_EQ(compress_rc(p, ZCOLL_FLOAT64), ZCOLL_ERR_ARG) << "eb=" << eb << " mode=" << mode;
      EXPECT_EQ(writer_begin_rc(p), ZCOLL_ERR_ARG) << "eb=" << eb << " mode=" << mode;
    }
  }
  // the default params (no eb set) must not be usable as is unless eb > 0
  zcoll_codec_params p;
  zcoll_codec_params_init(&p);
  if (!(p.eb > 0)) {
    EXPECT_EQ(compress_rc(p), ZCOLL_ERR_ARG);
  }
}

TEST(Api, BadEbMode) {
  for (int mode : {-1, 2, 7, 1000}) {
    auto p = params(1e-3);
    p.eb_mode = mode;
    EXPECT_EQ(compress_rc(p), ZCOLL_ERR_ARG) << mode;
    EXPECT_EQ(writer_begin_rc(p), ZCOLL_ERR_ARG) << mode;
  }
}

TEST(Api, NullPointers) {
  auto in = small_f32();
  auto p = params(1e-3);
  std::vector<unsigned char> out(zcoll_codec_bound(in.size(), ZCOLL_FLOAT32));
  size_t out_size = 0;
  EXPECT_EQ(zcoll_compress(nullptr, ZCOLL_FLOAT32, in.data(), in.size(), out.data(), out.size(), &out_size, nullptr),
            ZCOLL_ERR_ARG);
  EXPECT_EQ(zcoll_compress(&p, ZCOLL_FLOAT32, nullptr, in.size(), out.data(), out.size(), &out_size, nullptr),
            ZCOLL_ERR_ARG);
  EXPECT_EQ(zcoll_compress(&p, ZCOLL_FLOAT32, in.data(), in.size(), nullptr, out.size(), &out_size, nullptr),
            ZCOLL_ERR_ARG);
  EXPECT_EQ(zcoll_compress(&p, ZCOLL_FLOAT32, in.data(), in.size(), out.data(), out.size(), nullptr, nullptr),
            ZCOLL_ERR_ARG);

  // a valid stream to decompress / inspect / read
  ASSERT_EQ(zcoll_compress(&p, ZCOLL_FLOAT32, in.data(), in.size(), out.data(), out.size(), &out_size, nullptr),
            ZCOLL_SUCCESS);
  std::vector<float> dec(in.size());
  EXPECT_EQ(zcoll_decompress(nullptr, out_size, ZCOLL_FLOAT32, dec.data(), dec.size(), 1), ZCOLL_ERR_ARG);
  EXPECT_EQ(zcoll_decompress(out.data(), out_size, ZCOLL_FLOAT32, nullptr, dec.size(), 1), ZCOLL_ERR_ARG);
  zcoll_stream_info info;
  EXPECT_EQ(zcoll_stream_inspect(out.data(), out_size, nullptr), ZCOLL_ERR_ARG);
  EXPECT_EQ(zcoll_stream_inspect(nullptr, out_size, &info), ZCOLL_ERR_ARG);

  zcoll_reader* r = nullptr;
  EXPECT_EQ(zcoll_reader_open(nullptr, out_size, &r), ZCOLL_ERR_ARG);
  EXPECT_EQ(r, nullptr);
  EXPECT_EQ(zcoll_reader_open(out.data(), out_size, nullptr), ZCOLL_ERR_ARG);
  ASSERT_EQ(zcoll_reader_open(out.data(), out_size, &r), ZCOLL_SUCCESS);
  EXPECT_EQ(zcoll_reader_chunk(r, 0, nullptr), ZCOLL_ERR_ARG);
  zcoll_reader_close(&r);
  EXPECT_EQ(r, nullptr);
  zcoll_reader_close(&r);  // closing a NULL reader is harmless

  zcoll_writer* w = nullptr;
  EXPECT_EQ(zcoll_writer_begin(nullptr, ZCOLL_FLOAT32, in.data(), in.size(), out.data(), out.size(), &w),
            ZCOLL_ERR_ARG);
  EXPECT_EQ(zcoll_writer_begin(&p, ZCOLL_FLOAT32, nullptr, in.size(), out.data(), out.size(), &w), ZCOLL_ERR_ARG);
  EXPECT_EQ(zcoll_writer_begin(&p, ZCOLL_FLOAT32, in.data(), in.size(), nullptr, out.size(), &w), ZCOLL_ERR_ARG);
  EXPECT_EQ(zcoll_writer_begin(&p, ZCOLL_FLOAT32, in.data(), in.size(), out.data(), out.size(), nullptr),
            ZCOLL_ERR_ARG);
  EXPECT_EQ(w, nullptr);
  // writer_abort is safe with NULL (both the pointer and what it points to)
  zcoll_writer_abort(&w);
  zcoll_writer_abort(nullptr);
  // zcoll_writer_finish with a NULL out_size
  ASSERT_EQ(zcoll_writer_begin(&p, ZCOLL_FLOAT32, in.data(), in.size(), out.data(), out.size(), &w), ZCOLL_SUCCESS);
  int done = 0;
  ASSERT_EQ(zcoll_writer_next(w, &done), ZCOLL_SUCCESS);
  EXPECT_EQ(done, 1);
  EXPECT_EQ(zcoll_writer_finish(&w, nullptr), ZCOLL_ERR_ARG);
  EXPECT_EQ(w, nullptr) << "zcoll_writer_finish frees the writer whatever the outcome";
}

TEST(Api, UnknownDtype) {
  auto p = params(1e-3);
  // Only values inside the enum's range (0..3): converting others to zcoll_dtype is
  // undefined in C++ (C callers can pass any int; see the report).
  for (int d : {0, 3}) {
    EXPECT_EQ(compress_rc(p, static_cast<zcoll_dtype>(d)), ZCOLL_ERR_DTYPE) << d;
    EXPECT_EQ(writer_begin_rc(p, static_cast<zcoll_dtype>(d)), ZCOLL_ERR_DTYPE) << d;
  }
  auto in = small_f32();
  Compressed c = compress(p, in);
  ASSERT_EQ(c.rc, ZCOLL_SUCCESS);
  std::vector<double> out(in.size());
  for (int d : {0, 3}) {
    EXPECT_EQ(zcoll_decompress(c.stream.data(), c.stream.size(), static_cast<zcoll_dtype>(d), out.data(), in.size(), 1),
              ZCOLL_ERR_DTYPE)
        << d;
  }
}

TEST(Api, UnknownCodec) {
  for (int codec : {0, -1, 99, 256}) {
    auto p = params(1e-3);
    p.codec = codec;
    EXPECT_EQ(compress_rc(p), ZCOLL_ERR_CODEC) << codec;
    EXPECT_EQ(writer_begin_rc(p), ZCOLL_ERR_CODEC) << codec;
  }
}

TEST(Api, ChunkLenValidation) {
  for (size_t cl : {size_t(0), size_t(32), size_t(64), size_t(96), size_t(4096), size_t(ZCOLL_DEFAULT_CHUNK_LEN),
                    size_t(ZCOLL_MAX_CHUNK_LEN), size_t(ZCOLL_MAX_CHUNK_LEN - 32)}) {
    auto p = params(1e-3, ZCOLL_EB_ABS, cl);
    EXPECT_EQ(compress_rc(p), ZCOLL_SUCCESS) << cl;
    EXPECT_EQ(writer_begin_rc(p), ZCOLL_SUCCESS) << cl;
  }
  for (size_t cl : {size_t(1), size_t(16), size_t(31), size_t(33), size_t(48), size_t(100),
                    size_t(ZCOLL_MAX_CHUNK_LEN) + 32, size_t(ZCOLL_MAX_CHUNK_LEN) * 2, size_t(1) << 32,
                    (size_t(1) << 32) + 32, SIZE_MAX, SIZE_MAX - 31}) {
    auto p = params(1e-3, ZCOLL_EB_ABS, cl);
    EXPECT_EQ(compress_rc(p), ZCOLL_ERR_ARG) << cl;
    EXPECT_EQ(writer_begin_rc(p), ZCOLL_ERR_ARG) << cl;
  }
}

TEST(Api, ShapeValidation) {
  const size_t n = 6 * 7 * 8;
  auto ok = [&](int nd, size_t a, size_t b, size_t c) {
    auto p = params(1e-3);
    p.ndims = nd;
    p.dims[0] = a;
    p.dims[1] = b;
    p.dims[2] = c;
    return p;
  };
  EXPECT_EQ(compress_rc(ok(0, 0, 0, 0), ZCOLL_FLOAT32, n), ZCOLL_SUCCESS);
  EXPECT_EQ(compress_rc(ok(1, n, 0, 0), ZCOLL_FLOAT32, n), ZCOLL_SUCCESS);
  EXPECT_EQ(compress_rc(ok(2, 42, 8, 0), ZCOLL_FLOAT32, n), ZCOLL_SUCCESS);
  EXPECT_EQ(compress_rc(ok(2, 1, n, 0), ZCOLL_FLOAT32, n), ZCOLL_SUCCESS);
  EXPECT_EQ(compress_rc(ok(3, 6, 7, 8), ZCOLL_FLOAT64, n), ZCOLL_SUCCESS);
  EXPECT_EQ(compress_rc(ok(3, 1, 1, n), ZCOLL_FLOAT64, n), ZCOLL_SUCCESS);
  // product mismatch
  EXPECT_EQ(compress_rc(ok(2, 42, 9, 0), ZCOLL_FLOAT32, n), ZCOLL_ERR_ARG);
  EXPECT_EQ(compress_rc(ok(2, 41, 8, 0), ZCOLL_FLOAT32, n), ZCOLL_ERR_ARG);
  EXPECT_EQ(compress_rc(ok(3, 6, 7, 9), ZCOLL_FLOAT32, n), ZCOLL_ERR_ARG);
  EXPECT_EQ(compress_rc(ok(3, 6, 7, 0), ZCOLL_FLOAT32, n), ZCOLL_ERR_ARG);
  EXPECT_EQ(compress_rc(ok(3, 0, 0, 0), ZCOLL_FLOAT32, n), ZCOLL_ERR_ARG);
  EXPECT_EQ(writer_begin_rc(ok(3, 6, 7, 9), ZCOLL_FLOAT32, n), ZCOLL_ERR_ARG);
  // product overflows size_t but wraps around to n: must still be rejected
  {
    size_t big = (size_t(1) << 63) + 1;  // big * 2 * (n/2) == n (mod 2^64)
    EXPECT_EQ(compress_rc(ok(3, big, 2, n / 2), ZCOLL_FLOAT32, n), ZCOLL_ERR_ARG);
    EXPECT_EQ(compress_rc(ok(2, big, 2 * (n / 2), 0), ZCOLL_FLOAT32, n), ZCOLL_ERR_ARG);
  }
  // invalid ndims
  EXPECT_EQ(compress_rc(ok(4, 6, 7, 8), ZCOLL_FLOAT32, n), ZCOLL_ERR_ARG);
  EXPECT_EQ(compress_rc(ok(-1, 6, 7, 8), ZCOLL_FLOAT32, n), ZCOLL_ERR_ARG);
  EXPECT_EQ(writer_begin_rc(ok(4, 6, 7, 8), ZCOLL_FLOAT32, n), ZCOLL_ERR_ARG);
}

TEST(Api, CountZero) {
  for (zcoll_dtype dt : {ZCOLL_FLOAT32, ZCOLL_FLOAT64}) {
    for (int mode : {ZCOLL_EB_ABS, ZCOLL_EB_REL}) {
      SCOPED_TRACE(std::string(dt == ZCOLL_FLOAT32 ? "f32" : "f64") + (mode ? " REL" : " ABS"));
      auto p = params(1e-3, mode);
      double dummy = 1.0;
      size_t cap = zcoll_codec_bound(0, dt);
      ASSERT_GT(cap, 0u);
      Guarded out(cap);
      size_t out_size = 0;
      int rc = zcoll_compress(&p, dt, &dummy, 0, out.data(), cap, &out_size, nullptr);
      ASSERT_EQ(rc, ZCOLL_SUCCESS) << zcoll_strerror(rc);
      EXPECT_TRUE(out.intact());
      EXPECT_GT(out_size, 0u);
      EXPECT_LE(out_size, cap);
      std::vector<unsigned char> s(out.data(), out.data() + out_size);

      // null input with count 0 is fine (only count > 0 requires data)
      {
        std::vector<unsigned char> s2(cap);
        size_t sz2 = 0;
        EXPECT_EQ(zcoll_compress(&p, dt, nullptr, 0, s2.data(), cap, &sz2, nullptr), ZCOLL_SUCCESS);
        s2.resize(sz2);
        EXPECT_EQ(s2, s);
      }

      zcoll_stream_info info;
      ASSERT_EQ(zcoll_stream_inspect(s.data(), s.size(), &info), ZCOLL_SUCCESS);
      EXPECT_EQ(info.count, 0u);
      EXPECT_EQ(info.nchunks, 0u);
      EXPECT_EQ(info.dtype, dt);
      EXPECT_EQ(info.stream_bytes, s.size());

      double sink = 42.0;
      EXPECT_EQ(zcoll_decompress(s.data(), s.size(), dt, &sink, 0, 1), ZCOLL_SUCCESS);
      EXPECT_EQ(sink, 42.0);
      EXPECT_EQ(zcoll_decompress(s.data(), s.size(), dt, nullptr, 0, 1), ZCOLL_SUCCESS);
      EXPECT_EQ(zcoll_decompress(s.data(), s.size(), dt, &sink, 1, 1), ZCOLL_ERR_MISMATCH);

      std::vector<unsigned char> ws;
      EXPECT_TRUE(writer_compress(p, dt, &dummy, 0, &ws));
      EXPECT_EQ(ws, s);

      zcoll_reader* r = nullptr;
      ASSERT_EQ(zcoll_reader_open(s.data(), s.size(), &r), ZCOLL_SUCCESS);
      EXPECT_EQ(zcoll_reader_info(r)->count, 0u);
      EXPECT_NE(zcoll_reader_chunk(r, 0, &sink), ZCOLL_SUCCESS);
      zcoll_reader_close(&r);
    }
  }
}

TEST(Api, MismatchDtypeCount) {
  auto in = small_f32(1000);
  auto p = params(1e-3, ZCOLL_EB_ABS, 64);
  Compressed c = compress(p, in);
  ASSERT_EQ(c.rc, ZCOLL_SUCCESS);
  std::vector<double> out(in.size() + 1);
  EXPECT_EQ(zcoll_decompress(c.stream.data(), c.stream.size(), ZCOLL_FLOAT64, out.data(), in.size(), 1),
            ZCOLL_ERR_MISMATCH);
  EXPECT_EQ(zcoll_decompress(c.stream.data(), c.stream.size(), ZCOLL_FLOAT32, out.data(), in.size() + 1, 1),
            ZCOLL_ERR_MISMATCH);
  EXPECT_EQ(zcoll_decompress(c.stream.data(), c.stream.size(), ZCOLL_FLOAT32, out.data(), in.size() - 1, 1),
            ZCOLL_ERR_MISMATCH);
  EXPECT_EQ(zcoll_decompress(c.stream.data(), c.stream.size(), ZCOLL_FLOAT32, out.data(), 0, 1), ZCOLL_ERR_MISMATCH);

  auto in64 = cast<double>(random_normal(500, 3));
  Compressed c64 = compress(p, in64);
  ASSERT_EQ(c64.rc, ZCOLL_SUCCESS);
  EXPECT_EQ(zcoll_decompress(c64.stream.data(), c64.stream.size(), ZCOLL_FLOAT32, out.data(), in64.size(), 1),
            ZCOLL_ERR_MISMATCH);
  EXPECT_EQ(zcoll_decompress(c64.stream.data(), c64.stream.size(), ZCOLL_FLOAT64, out.data(), in64.size(), 1),
            ZCOLL_SUCCESS);
}

TEST(Api, InspectReportsParameters) {
  auto in = cast<double>(random_normal(3 * 64 + 17, 8));
  for (int mode : {ZCOLL_EB_ABS, ZCOLL_EB_REL}) {
    auto p = params(mode == ZCOLL_EB_ABS ? 0.01 : 1e-3, mode, 64);
    double eb_abs = 0;
    std::vector<unsigned char> s;
    check_roundtrip(in, p, &s, nullptr, &eb_abs);
    zcoll_stream_info info;
    ASSERT_EQ(zcoll_stream_inspect(s.data(), s.size(), &info), ZCOLL_SUCCESS);
    EXPECT_EQ(info.codec, ZCOLL_CODEC_FZL);
    EXPECT_GT(info.format_version, 0);
    EXPECT_EQ(info.dtype, ZCOLL_FLOAT64);
    EXPECT_EQ(info.count, in.size());
    EXPECT_EQ(info.eb_abs, eb_abs);
    EXPECT_EQ(info.chunk_len, 64u);
    EXPECT_EQ(info.nchunks, 4u);
    EXPECT_EQ(info.stream_bytes, s.size());
    EXPECT_TRUE(info.ndims == 0 || info.ndims == 1) << info.ndims;

    // the reader reports the same
    zcoll_reader* r = nullptr;
    ASSERT_EQ(zcoll_reader_open(s.data(), s.size(), &r), ZCOLL_SUCCESS);
    const zcoll_stream_info* ri = zcoll_reader_info(r);
    ASSERT_NE(ri, nullptr);
    EXPECT_EQ(ri->codec, info.codec);
    EXPECT_EQ(ri->format_version, info.format_version);
    EXPECT_EQ(ri->dtype, info.dtype);
    EXPECT_EQ(ri->count, info.count);
    EXPECT_EQ(ri->eb_abs, info.eb_abs);
    EXPECT_EQ(ri->chunk_len, info.chunk_len);
    EXPECT_EQ(ri->nchunks, info.nchunks);
    EXPECT_EQ(ri->ndims, info.ndims);
    EXPECT_EQ(ri->stream_bytes, info.stream_bytes);
    // a chunk index past the end is an error and writes nothing
    Guarded g(in.size() * sizeof(double));
    EXPECT_NE(zcoll_reader_chunk(r, info.nchunks, g.data()), ZCOLL_SUCCESS);
    EXPECT_NE(zcoll_reader_chunk(r, SIZE_MAX, g.data()), ZCOLL_SUCCESS);
    EXPECT_TRUE(g.intact());
    zcoll_reader_close(&r);
  }
  // default chunk length reported when chunk_len = 0
  auto p = params(0.01);
  std::vector<unsigned char> s;
  check_roundtrip(in, p, &s);
  zcoll_stream_info info;
  ASSERT_EQ(zcoll_stream_inspect(s.data(), s.size(), &info), ZCOLL_SUCCESS);
  EXPECT_EQ(info.chunk_len, ZCOLL_DEFAULT_CHUNK_LEN);
  EXPECT_EQ(info.nchunks, 1u);
}

TEST(Api, InspectShape) {
  auto in = cast<float>(random_normal(5 * 6 * 7, 2));
  auto p = params(1e-2, ZCOLL_EB_ABS, 32);
  p.ndims = 3;
  p.dims[0] = 5;
  p.dims[1] = 6;
  p.dims[2] = 7;
  std::vector<unsigned char> s;
  check_roundtrip(in, p, &s);
  zcoll_stream_info info;
  ASSERT_EQ(zcoll_stream_inspect(s.data(), s.size(), &info), ZCOLL_SUCCESS);
  EXPECT_EQ(info.ndims, 3);
  EXPECT_EQ(info.dims[0], 5u);
  EXPECT_EQ(info.dims[1], 6u);
  EXPECT_EQ(info.dims[2], 7u);
}

TEST(Api, BufferTooSmall) {
  for (zcoll_dtype dt : {ZCOLL_FLOAT32, ZCOLL_FLOAT64}) {
    SCOPED_TRACE(dt == ZCOLL_FLOAT32 ? "f32" : "f64");
    const size_t n = 5000;
    auto d = random_normal(n, 11);
    auto f = cast<float>(d);
    const void* in = dt == ZCOLL_FLOAT32 ? static_cast<const void*>(f.data()) : d.data();
    for (size_t cl : {size_t(0), size_t(64)}) {
      auto p = params(1e-4, ZCOLL_EB_ABS, cl);
      Compressed full = compress_raw(p, dt, in, n);
      ASSERT_EQ(full.rc, ZCOLL_SUCCESS);
      const size_t sz = full.stream.size();
      // exactly the stream size works and gives the same stream
      {
        Guarded g(sz);
        size_t out_size = 0;
        ASSERT_EQ(zcoll_compress(&p, dt, in, n, g.data(), sz, &out_size, nullptr), ZCOLL_SUCCESS);
        EXPECT_TRUE(g.intact());
        ASSERT_EQ(out_size, sz);
        EXPECT_EQ(std::memcmp(g.data(), full.stream.data(), sz), 0);
      }
      std::vector<size_t> caps = {0, 1, 8, 63, 64, 65, 100, sz / 3, sz / 2, sz - 64, sz - 9, sz - 8, sz - 2, sz - 1};
      for (size_t cap : caps) {
        if (cap >= sz) continue;
        SCOPED_TRACE("cap=" + std::to_string(cap) + " of " + std::to_string(sz));
        Guarded g(cap);
        size_t out_size = 12345;
        int rc = zcoll_compress(&p, dt, in, n, g.data(), cap, &out_size, nullptr);
        EXPECT_EQ(rc, ZCOLL_ERR_BUFFER_TOO_SMALL) << zcoll_strerror(rc);
        EXPECT_TRUE(g.intact()) << "compress wrote past out_cap";

        // the writer too: some step fails with BUFFER_TOO_SMALL, nothing written past cap
        Guarded gw(cap);
        zcoll_writer* w = nullptr;
        rc = zcoll_writer_begin(&p, dt, in, n, gw.data(), cap, &w);
        if (rc == ZCOLL_SUCCESS) {
          int done = 0;
          while (rc == ZCOLL_SUCCESS && !done) rc = zcoll_writer_next(w, &done);
          if (rc == ZCOLL_SUCCESS) {
            size_t osz = 0;
            rc = zcoll_writer_finish(&w, &osz);
          } else {
            zcoll_writer_abort(&w);
          }
        }
        EXPECT_EQ(w, nullptr);
        EXPECT_EQ(rc, ZCOLL_ERR_BUFFER_TOO_SMALL) << zcoll_strerror(rc);
        EXPECT_TRUE(gw.intact()) << "writer wrote past out_cap";
      }
    }
  }
}

TEST(Api, WriterAbortMidway) {
  auto in = cast<float>(random_normal(1000, 3));
  auto p = params(1e-3, ZCOLL_EB_ABS, 64);
  std::vector<unsigned char> out(zcoll_codec_bound(in.size(), ZCOLL_FLOAT32));
  zcoll_writer* w = nullptr;
  ASSERT_EQ(zcoll_writer_begin(&p, ZCOLL_FLOAT32, in.data(), in.size(), out.data(), out.size(), &w), ZCOLL_SUCCESS);
  EXPECT_EQ(zcoll_writer_nchunks(w), (in.size() + 63) / 64);
  int done = 0;
  ASSERT_EQ(zcoll_writer_next(w, &done), ZCOLL_SUCCESS);
  EXPECT_EQ(done, 0);
  zcoll_writer_abort(&w);
  EXPECT_EQ(w, nullptr);
}

// The registry as the C API shows it: the four codecs of zcoll.h, each name maps back to
// its id (in any case), and nothing else has a name.
TEST(Api, CodecRegistryNames) {
  EXPECT_EQ(codec_ids(), (std::vector<int>{ZCOLL_CODEC_FZL, ZCOLL_CODEC_LPBYTE, ZCOLL_CODEC_LPBIT, ZCOLL_CODEC_SZX}));
  for (int id : codec_ids()) {
    const char* name = zcoll_codec_name(id);
    ASSERT_NE(name, nullptr);
    int back = -1;
    EXPECT_EQ(zcoll_codec_from_name(name, &back), ZCOLL_SUCCESS);
    EXPECT_EQ(back, id);
    std::string upper(name);
    for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    back = -1;
    EXPECT_EQ(zcoll_codec_from_name(upper.c_str(), &back), ZCOLL_SUCCESS);
    EXPECT_EQ(back, id);
  }
  EXPECT_STREQ(zcoll_codec_name(ZCOLL_CODEC_SZX), "szx");
  EXPECT_EQ(zcoll_codec_name(0), nullptr);
  EXPECT_EQ(zcoll_codec_name(-1), nullptr);
  int id = 77;
  EXPECT_EQ(zcoll_codec_from_name("fz", &id), ZCOLL_ERR_CODEC);
  EXPECT_EQ(zcoll_codec_from_name("fzlx", &id), ZCOLL_ERR_CODEC);
  EXPECT_EQ(zcoll_codec_from_name("", &id), ZCOLL_ERR_CODEC);
  EXPECT_EQ(id, 77);
  EXPECT_EQ(zcoll_codec_from_name(nullptr, &id), ZCOLL_ERR_ARG);
  EXPECT_EQ(zcoll_codec_from_name("fzl", nullptr), ZCOLL_ERR_ARG);
}
