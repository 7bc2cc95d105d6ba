// Thread-count independence, writer == zcoll_compress, reader == zcoll_decompress,
// single chunks on their own, misaligned pointers.
#include "test_util.h"

#include "codec/container.h"

using namespace zt;

namespace {

template <class T> class Stream : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
struct TypeNames {
  template <class T> static std::string GetName(int) { return Dt<T>::name(); }
};
TYPED_TEST_SUITE(Stream, Types, TypeNames);

}  // namespace

TYPED_TEST(Stream, RandomData) {
  using T = TypeParam;
  for (uint64_t seed : {1u, 2u}) {
    auto in = cast<T>(random_normal(50000, seed, 0, 5));
    for (size_t cl : {size_t(0), size_t(32), size_t(1024)}) {
      check_stream_apis(in, params(1e-3, ZCOLL_EB_ABS, cl));
      check_stream_apis(in, params(1e-4, ZCOLL_EB_REL, cl));
    }
  }
}

// The shares of a multi-thread stream slide down into place after compression (stream.cc,
// assemble): in steps that the whole team copies, one share after another where the ranges
// before it barely compressed, or both in one call. Rough (incompressible) and smooth
// stretches in several orders make each of these happen at 2-16 threads, in slides of several
// steps (the smallest 16 KiB); the stream must be that of one thread.
TYPED_TEST(Stream, SlideOfSharesAnyMix) {
  using T = TypeParam;
  const size_t n = size_t{1} << 19;
  const auto noise = cast<T>(random_normal(n, 5, 0, 1));
  for (int layout = 0; layout < 4; ++layout) {
    std::vector<T> in(n);
    for (size_t i = 0; i < n; ++i) {
      const size_t eighth = i * 8 / n;
      const bool rough = layout == 0 ? eighth < 2 : layout == 1 ? eighth >= 6 : layout == 2 ? eighth % 2 == 1 : eighth == 3;
      in[i] = rough ? noise[i] : static_cast<T>(std::sin(static_cast<double>(i) * 1e-4));
    }
    SCOPED_TRACE("layout " + std::to_string(layout));
    const auto p = params(1e-6, ZCOLL_EB_ABS, 1024);
    const Compressed ref = compress(p, in);
    ASSERT_EQ(ref.rc, ZCOLL_SUCCESS) << zcoll_strerror(ref.rc);
    for (int t : {2, 3, 5, 8, 16}) {
      auto q = p;
      q.threads = t;
      const Compressed c = compress(q, in);
      ASSERT_EQ(c.rc, ZCOLL_SUCCESS) << zcoll_strerror(c.rc);
      EXPECT_TRUE(c.stream == ref.stream) << "stream differs with threads=" << t << " (" << c.stream.size() << " vs "
                                          << ref.stream.size() << " bytes)";
    }
    std::vector<T> out;
    ASSERT_EQ(decompress(ref.stream, n, &out, 4), ZCOLL_SUCCESS);
    EXPECT_TRUE(within_bound(in.data(), out.data(), n, ref.eb_abs));
  }
}

TYPED_TEST(Stream, Adversarial) {
  using T = TypeParam;
  for (auto& c : adversarial_cases<T>(3 * 64 + 17)) {
    SCOPED_TRACE(c.first);
    check_stream_apis(c.second, params(1e-3, ZCOLL_EB_ABS, 64));
    check_stream_apis(c.second, params(1e-3, ZCOLL_EB_REL, 32));
  }
}

TYPED_TEST(Stream, OddCounts) {
  using T = TypeParam;
  auto all = cast<T>(random_normal(5000, 9));
  for (size_t n : {1ul, 31ul, 32ul, 33ul, 63ul, 64ul, 65ul, 3 * 64 + 17ul, 4999ul}) {
    std::vector<T> in(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n));
    check_stream_apis(in, params(1e-2, ZCOLL_EB_ABS, 64));
  }
}

TYPED_TEST(Stream, Shaped) {
  using T = TypeParam;
  auto in = cast<T>(random_normal(12 * 20 * 30, 4, 3, 1));
  for (int nd : {2, 3}) {
    for (size_t cl : {size_t(0), size_t(32), size_t(640)}) {
      auto p = params(1e-3, ZCOLL_EB_ABS, cl);
      p.ndims = nd;
      p.dims[0] = nd == 2 ? 240 : 12;
      p.dims[1] = nd == 2 ? 30 : 20;
      p.dims[2] = nd == 2 ? 0 : 30;
      check_stream_apis(in, p);
    }
  }
}

// A reader decompresses chunk k into exactly its own range of the output.
TYPED_TEST(Stream, ReaderSingleChunk) {
  using T = TypeParam;
  auto in = cast<T>(random_normal(3 * 64 + 17, 12));
  in[70] = std::numeric_limits<T>::quiet_NaN();
  in[200] = 1e30f;
  for (int nd : {1, 3}) {
    auto p = params(1e-3, ZCOLL_EB_ABS, 64);
    if (nd == 3) {  // 209 = 11 x 19 x 1
      p.ndims = 3;
      p.dims[0] = 11;
      p.dims[1] = 19;
      p.dims[2] = 1;
    }
    std::vector<unsigned char> s;
    std::vector<T> full;
    check_roundtrip(in, p, &s, &full);
    zcoll_reader* r = nullptr;
    ASSERT_EQ(zcoll_reader_open(s.data(), s.size(), &r), ZCOLL_SUCCESS);
    const size_t nch = zcoll_reader_info(r)->nchunks;
    ASSERT_EQ(nch, 4u);
    for (size_t k = 0; k < nch; ++k) {
      Guarded g(in.size() * sizeof(T));
      g.fill(0x5A);
      ASSERT_EQ(zcoll_reader_chunk(r, k, g.data()), ZCOLL_SUCCESS) << k;
      EXPECT_TRUE(g.intact());
      const size_t lo = k * 64, hi = std::min(in.size(), lo + 64);
      const unsigned char* b = g.data();
      for (size_t i = 0; i < in.size() * sizeof(T); ++i) {
        size_t e = i / sizeof(T);
        if (e >= lo && e < hi) continue;
        ASSERT_EQ(b[i], 0x5A) << "chunk " << k << " wrote element " << e;
      }
      EXPECT_EQ(std::memcmp(b + lo * sizeof(T), full.data() + lo, (hi - lo) * sizeof(T)), 0) << "chunk " << k;
      // decoding the same chunk twice gives the same values
      ASSERT_EQ(zcoll_reader_chunk(r, k, g.data()), ZCOLL_SUCCESS) << k;
      EXPECT_EQ(std::memcmp(b + lo * sizeof(T), full.data() + lo, (hi - lo) * sizeof(T)), 0) << "chunk " << k;
    }
    zcoll_reader_close(&r);
  }
}

// Two readers over the same stream, and a reader used after the source of
// another stream was compressed: readers hold no shared state.
TYPED_TEST(Stream, IndependentReaders) {
  using T = TypeParam;
  auto a = cast<T>(random_normal(1000, 1));
  auto b = cast<T>(random_normal(1000, 2, 50, 1));
  auto p = params(1e-3, ZCOLL_EB_ABS, 64);
  Compressed ca = compress(p, a), cb = compress(p, b);
  ASSERT_EQ(ca.rc, 0);
  ASSERT_EQ(cb.rc, 0);
  std::vector<T> da, db;
  ASSERT_EQ(decompress(ca.stream, a.size(), &da), 0);
  ASSERT_EQ(decompress(cb.stream, b.size(), &db), 0);
  zcoll_reader *ra = nullptr, *rb = nullptr;
  ASSERT_EQ(zcoll_reader_open(ca.stream.data(), ca.stream.size(), &ra), 0);
  ASSERT_EQ(zcoll_reader_open(cb.stream.data(), cb.stream.size(), &rb), 0);
  std::vector<T> oa(a.size()), ob(b.size());
  const size_t nch = zcoll_reader_info(ra)->nchunks;
  for (size_t k = 0; k < nch; ++k) {
    ASSERT_EQ(zcoll_reader_chunk(ra, nch - 1 - k, oa.data()), 0);
    ASSERT_EQ(zcoll_reader_chunk(rb, k, ob.data()), 0);
  }
  zcoll_reader_close(&ra);
  zcoll_reader_close(&rb);
  EXPECT_TRUE(same_bits(oa, da));
  EXPECT_TRUE(same_bits(ob, db));
}

// Two writers interleaved make the same streams as zcoll_compress.
TYPED_TEST(Stream, InterleavedWriters) {
  using T = TypeParam;
  auto a = cast<T>(random_normal(1000, 3));
  auto b = cast<T>(random_normal(777, 4, 9, 2));
  auto p = params(1e-3, ZCOLL_EB_REL, 64);
  Compressed ca = compress(p, a), cb = compress(p, b);
  ASSERT_EQ(ca.rc, 0);
  ASSERT_EQ(cb.rc, 0);
  std::vector<unsigned char> sa(zcoll_codec_bound(a.size(), Dt<T>::value)), sb(zcoll_codec_bound(b.size(), Dt<T>::value));
  zcoll_writer *wa = nullptr, *wb = nullptr;
  ASSERT_EQ(zcoll_writer_begin(&p, Dt<T>::value, a.data(), a.size(), sa.data(), sa.size(), &wa), 0);
  ASSERT_EQ(zcoll_writer_begin(&p, Dt<T>::value, b.data(), b.size(), sb.data(), sb.size(), &wb), 0);
  int da = 0, db = 0;
  while (!da || !db) {
    if (!da) {
      ASSERT_EQ(zcoll_writer_next(wa, &da), 0);
    }
    if (!db) {
      ASSERT_EQ(zcoll_writer_next(wb, &db), 0);
    }
  }
  size_t za = 0, zb = 0;
  ASSERT_EQ(zcoll_writer_finish(&wa, &za), 0);
  ASSERT_EQ(zcoll_writer_finish(&wb, &zb), 0);
  sa.resize(za);
  sb.resize(zb);
  EXPECT_TRUE(sa == ca.stream);
  EXPECT_TRUE(sb == cb.stream);
}

// Input and output pointers offset by 1..7 bytes, for every codec (a UBSan build reports
// a plain misaligned load or store).
TYPED_TEST(Stream, MisalignedPointers) {
  using T = TypeParam;
  const size_t n = 3 * 64 + 17;
  auto in = cast<T>(random_normal(n, 14, 2, 3));
  in[5] = std::numeric_limits<T>::quiet_NaN();
  in[99] = static_cast<T>(1e30);
  for (size_t i = 128; i < 192; ++i) in[i] = static_cast<T>(7);  // the third chunk: szx's constant block
  for (int codec : codec_ids()) {
    for (int nd : {1, 2}) {
      SCOPED_TRACE(zcoll_codec_name(codec));
      auto p = params(1e-3, ZCOLL_EB_ABS, 64);
      p.codec = codec;
      if (nd == 2) {
        p.ndims = 2;
        p.dims[0] = 11;
        p.dims[1] = 19;
      }
      Compressed ref = compress(p, in);
      ASSERT_EQ(ref.rc, 0);
      std::vector<T> ref_out;
      ASSERT_EQ(decompress(ref.stream, n, &ref_out), 0);
      const size_t bound = zcoll_codec_bound(n, Dt<T>::value);
      for (size_t off = 0; off < 8; ++off) {
        SCOPED_TRACE("offset " + std::to_string(off) + " ndims " + std::to_string(nd));
        // misaligned input
        std::vector<unsigned char> ibuf(n * sizeof(T) + 16);
        std::memcpy(ibuf.data() + off, in.data(), n * sizeof(T));
        // misaligned output of the compressor
        Guarded sbuf(bound, off);
        size_t sz = 0;
        double eb_abs = 0;
        ASSERT_EQ(zcoll_compress(&p, Dt<T>::value, ibuf.data() + off, n, sbuf.data(), bound, &sz, &eb_abs), 0);
        EXPECT_TRUE(sbuf.intact());
        ASSERT_EQ(sz, ref.stream.size());
        EXPECT_EQ(std::memcmp(sbuf.data(), ref.stream.data(), sz), 0);
        // writer with misaligned pointers
        {
          Guarded wbuf(bound, (off + 3) % 8);
          zcoll_writer* w = nullptr;
          ASSERT_EQ(zcoll_writer_begin(&p, Dt<T>::value, ibuf.data() + off, n, wbuf.data(), bound, &w), 0);
          int done = 0;
          while (!done) ASSERT_EQ(zcoll_writer_next(w, &done), 0);
          size_t wsz = 0;
          ASSERT_EQ(zcoll_writer_finish(&w, &wsz), 0);
          ASSERT_EQ(wsz, sz);
          EXPECT_EQ(std::memcmp(wbuf.data(), ref.stream.data(), sz), 0);
          EXPECT_TRUE(wbuf.intact());
        }
        // misaligned stream in, misaligned output of the decompressor (another offset)
        for (size_t ooff : {off, (off + 5) % 8}) {
          Guarded obuf(n * sizeof(T), ooff);
          zcoll_stream_info info;
          ASSERT_EQ(zcoll_stream_inspect(sbuf.data(), sz, &info), 0);
          EXPECT_EQ(info.count, n);
          ASSERT_EQ(zcoll_decompress(sbuf.data(), sz, Dt<T>::value, obuf.data(), n, 2), 0);
          EXPECT_TRUE(obuf.intact());
          EXPECT_EQ(std::memcmp(obuf.data(), ref_out.data(), n * sizeof(T)), 0);
          Guarded rbuf(n * sizeof(T), ooff);
          zcoll_reader* r = nullptr;
          ASSERT_EQ(zcoll_reader_open(sbuf.data(), sz, &r), 0);
          for (size_t k = 0; k < info.nchunks; ++k) ASSERT_EQ(zcoll_reader_chunk(r, info.nchunks - 1 - k, rbuf.data()), 0);
          zcoll_reader_close(&r);
          EXPECT_TRUE(rbuf.intact());
          EXPECT_EQ(std::memcmp(rbuf.data(), ref_out.data(), n * sizeof(T)), 0);
        }
      }
    }
  }
}

// Repeated calls are deterministic (no state leaks between calls).
TYPED_TEST(Stream, RepeatedCallsDeterministic) {
  using T = TypeParam;
  auto a = cast<T>(random_normal(20000, 15));
  auto b = random_finite_bits<T>(20000, 16);
  auto p = params(1e-4, ZCOLL_EB_ABS, 1024);
  Compressed a1 = compress(p, a);
  Compressed b1 = compress(p, b);
  Compressed a2 = compress(p, a);
  ASSERT_EQ(a1.rc, 0);
  ASSERT_EQ(b1.rc, 0);
  ASSERT_EQ(a2.rc, 0);
  EXPECT_TRUE(a1.stream == a2.stream);
}

// Every chunk's index entry holds the container's checksum of its bytes (codec::checksum,
// the scalar reference), whichever kernels wrote it (AVX2 where the CPU has it, four
// words at a time): encoded and raw chunks, with every count of bytes past the last whole
// word (0-7) and of words past the last group of four (0-3) among them.
TYPED_TEST(Stream, ChunkChecksumsAreTheContainers) {
  using T = TypeParam;
  namespace zc = zcoll::codec;
  size_t chunks = 0;
  unsigned bytes_past_word = 0, words_past_group = 0;  // bit masks of what was covered
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    for (size_t n : {size_t(1), size_t(2), size_t(3), size_t(31), size_t(97), size_t(20000)}) {
      const std::vector<T> ins[] = {cast<T>(random_normal(n, seed, 0, 1 + 3 * static_cast<double>(seed))),
                                    random_finite_bits<T>(n, seed)};
      for (const auto& in : ins) for (double eb : {1e-1, 1e-3, 1e-6}) {
        Compressed c = compress(params(eb, ZCOLL_EB_ABS, 32), in);
        ASSERT_EQ(c.rc, 0);
        const uint8_t* p = c.stream.data();
        const size_t nchunks = zc::load_u32(p + zc::header_offset::kNchunks);
        size_t pos = zc::kHeaderBytes + nchunks * zc::kIndexEntryBytes;
        for (size_t k = 0; k < nchunks; ++k) {
          const uint8_t* entry = p + zc::kHeaderBytes + k * zc::kIndexEntryBytes;
          const size_t len = zc::load_u32(entry) & ~zc::kRawChunkFlag;
          ASSERT_LE(pos + len, c.stream.size());
          ASSERT_EQ(zc::load_u32(entry + 4), zc::checksum(p + pos, len)) << "n " << n << " chunk " << k << " of " << len << " bytes";
          bytes_past_word |= 1u << (len % 8);
          words_past_group |= 1u << (len / 8 % 4);
          pos += len;
          ++chunks;
        }
      }
    }
  }
  EXPECT_GT(chunks, 10000u);
  EXPECT_EQ(bytes_past_word, 0xffu);
  EXPECT_EQ(words_past_group, 0xfu);
}
