// Runs the fuzz targets' logic (fuzz/*_logic.h) over random mutations of valid
// streams with the regular compiler, so that the robustness checks run where
// clang/libFuzzer is absent. A failing input is written to the working
// directory (zcoll-replay-failure-*.bin) for replay with the fuzzer binary.
#include <cinttypes>
#include <fstream>

#include "fuzz_decompress_logic.h"
#include "fuzz_roundtrip_logic.h"
#include "reseal_stream.h"
#include "seed_streams.h"
#include "test_util.h"

using zt::Guarded;

namespace {

using Bytes = std::vector<uint8_t>;

const std::vector<zcoll_fuzz::SeedStream>& seeds() {
  static const std::vector<zcoll_fuzz::SeedStream> s = [] {
    std::vector<zcoll_fuzz::SeedStream> v;
    if (!zcoll_fuzz::make_seed_streams(&v)) v.clear();
    return v;
  }();
  return s;
}

std::string save_failure(const std::string& tag, const Bytes& b) {
  std::string path = "zcoll-replay-failure-" + tag + ".bin";
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  return path;
}

// One random mutation; returns a short description.
std::string mutate(Bytes* b, std::mt19937_64& g, const Bytes& other) {
  auto r = [&](size_t n) { return n ? static_cast<size_t>(g() % n) : 0; };
  char d[160];
  switch (g() % 10) {
    case 0:
    case 1: {  // flip 1..3 bits
      size_t k = 1 + r(3);
      std::string s = "flip";
      for (size_t i = 0; i < k && !b->empty(); ++i) {
        size_t bit = r(b->size() * 8);
        (*b)[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
        s += " " + std::to_string(bit);
      }
      return s;
    }
    case 2: {  // truncate
      size_t len = r(b->size() + 1);
      b->resize(len);
      std::snprintf(d, sizeof d, "truncate to %zu", len);
      return d;
    }
    case 3: {  // random bytes replaced
      size_t k = 1 + r(8);
      for (size_t i = 0; i < k && !b->empty(); ++i) (*b)[r(b->size())] = static_cast<uint8_t>(g());
      return "replace " + std::to_string(k) + " bytes";
    }
    case 4: {  // insert bytes
      size_t pos = r(b->size() + 1), k = 1 + r(16);
      Bytes ins(k);
      for (auto& x : ins) x = static_cast<uint8_t>(g());
      b->insert(b->begin() + static_cast<std::ptrdiff_t>(pos), ins.begin(), ins.end());
      std::snprintf(d, sizeof d, "insert %zu at %zu", k, pos);
      return d;
    }
    case 5: {  // erase bytes
      if (b->empty()) return "erase nothing";
      size_t pos = r(b->size()), k = 1 + r(std::min<size_t>(16, b->size() - pos));
      b->erase(b->begin() + static_cast<std::ptrdiff_t>(pos), b->begin() + static_cast<std::ptrdiff_t>(pos + k));
      std::snprintf(d, sizeof d, "erase %zu at %zu", k, pos);
      return d;
    }
    case 6: {  // append garbage
      size_t k = 1 + r(64);
      for (size_t i = 0; i < k; ++i) b->push_back(static_cast<uint8_t>(g()));
      return "append " + std::to_string(k);
    }
    case 7: {  // splice with another stream
      size_t cut = r(b->size() + 1), from = r(other.size() + 1);
      b->resize(cut);
      b->insert(b->end(), other.begin() + static_cast<std::ptrdiff_t>(from), other.end());
      std::snprintf(d, sizeof d, "splice at %zu from %zu", cut, from);
      return d;
    }
    case 8: {  // interesting values into a header/index word
      static const uint32_t vals[] = {0, 1, 31, 32, 33, 0x7fffffffu, 0x80000000u, 0xffffffffu, 0x80000001u,
                                      64, 1u << 24, (1u << 24) + 32};
      if (b->size() < 4) return "nothing";
      size_t lim = std::min<size_t>(b->size() - 3, 64 + 8 * 64);
      size_t pos = r(lim) & ~size_t(3);
      uint32_t v = vals[r(sizeof vals / sizeof vals[0])];
      std::memcpy(b->data() + pos, &v, 4);
      std::snprintf(d, sizeof d, "u32 %" PRIu32 " at %zu", v, pos);
      return d;
    }
    default: {  // whole random input
      size_t len = r(300);
      b->assign(len, 0);
      for (auto& x : *b) x = static_cast<uint8_t>(g());
      if (len >= 4 && (g() & 1)) std::memcpy(b->data(), "ZCFL", 4);
      return "random " + std::to_string(len) + " bytes";
    }
  }
}

}  // namespace

TEST(FuzzReplay, SeedsAreValid) {
  ASSERT_FALSE(seeds().empty()) << "the codec failed to make the seed streams";
  for (const auto& s : seeds()) {
    SCOPED_TRACE(s.name);
    EXPECT_EQ(zcoll_fuzz::check_decompress(s.bytes.data(), s.bytes.size()), nullptr);
    zcoll_stream_info info;
    EXPECT_EQ(zcoll_stream_inspect(s.bytes.data(), s.bytes.size(), &info), ZCOLL_SUCCESS);
  }
}

// reseal_stream must reproduce the checksums of valid streams exactly; otherwise it
// has gone stale with respect to the stream format and the fuzzers' re-sealed
// mutations no longer reach the chunk decoders.
TEST(FuzzReplay, ResealIsIdentityOnValidStreams) {
  ASSERT_FALSE(seeds().empty());
  for (const auto& s : seeds()) {
    Bytes b = s.bytes;
    ASSERT_TRUE(zcoll_fuzz::reseal_stream(b.data(), b.size())) << s.name;
    EXPECT_TRUE(b == s.bytes) << s.name << ": fuzz/reseal_stream.h is out of date with the stream format";
  }
  // and it repairs a corrupted checksum
  Bytes b = seeds().front().bytes;
  b[zcoll::codec::header_offset::kChecksum] ^= 1;
  b[b.size() - 1] ^= 0x10;
  zcoll_fuzz::reseal_stream(b.data(), b.size());
  zcoll_stream_info info;
  EXPECT_EQ(zcoll_stream_inspect(b.data(), b.size(), &info), ZCOLL_SUCCESS);
}

TEST(FuzzReplay, DecompressMutations) {
  ASSERT_FALSE(seeds().empty());
  const int iterations = 50000;
  std::mt19937_64 g(20240601);
  int failures = 0, resealed_ok = 0, accepted = 0;
  for (int it = 0; it < iterations && failures < 5; ++it) {
    const auto& s = seeds()[g() % seeds().size()];
    const auto& o = seeds()[g() % seeds().size()];
    Bytes b = s.bytes;
    std::string what;
    int nmut = 1 + static_cast<int>(g() % 3);
    for (int m = 0; m < nmut; ++m) what += (m ? "; " : "") + mutate(&b, g, o.bytes);
    // two times in three, re-seal the checksums so the damage reaches the decoders
    bool resealed = g() % 3 != 0 && zcoll_fuzz::reseal_stream(b.data(), b.size());
    if (resealed) {
      zcoll_stream_info info;
      if (zcoll_stream_inspect(b.data(), b.size(), &info) == ZCOLL_SUCCESS) ++resealed_ok;
    }
    if (const char* err = zcoll_fuzz::check_decompress(b.data(), b.size())) {
      ++failures;
      std::string path = save_failure("decompress-" + std::to_string(it), b);
      ADD_FAILURE() << err << "\n  seed " << s.name << ", mutations: " << what << (resealed ? ", re-sealed" : "")
                    << "\n  input saved to " << path;
    }
    zcoll_stream_info info;
    if (zcoll_stream_inspect(b.data(), b.size(), &info) == ZCOLL_SUCCESS) ++accepted;
  }
  std::printf("[ replay   ] %d mutated streams, %d re-sealed ones passed inspect, %d accepted by inspect\n",
              iterations, resealed_ok, accepted);
  // the re-sealing must actually let a good share through to the decoders
  EXPECT_GT(resealed_ok, iterations / 20);
}

TEST(FuzzReplay, RoundtripInputs) {
  std::vector<zcoll_fuzz::SeedStream> rt;
  zcoll_fuzz::make_roundtrip_seeds(&rt);
  ASSERT_FALSE(rt.empty());
  std::mt19937_64 g(77);
  const int iterations = 1500;
  int failures = 0;
  for (int it = 0; it < iterations && failures < 5; ++it) {
    Bytes b = rt[g() % rt.size()].bytes;
    std::string what;
    if (it >= static_cast<int>(rt.size())) {
      // random parameters, then damage the data part: bit flips make NaN,
      // Inf, denormals and huge values
      for (int i = 0; i < 6; ++i) b[i] = static_cast<uint8_t>(g());
      size_t k = g() % 40;
      for (size_t i = 0; i < k && b.size() > 6; ++i) {
        size_t pos = 6 + g() % (b.size() - 6);
        b[pos] = (g() & 1) ? static_cast<uint8_t>(g()) : static_cast<uint8_t>(b[pos] ^ (1u << (g() % 8)));
      }
      if (g() % 4 == 0) b.resize(6 + g() % (b.size() - 5));
    }
    if (const char* err = zcoll_fuzz::check_roundtrip(b.data(), b.size())) {
      ++failures;
      std::string path = save_failure("roundtrip-" + std::to_string(it), b);
      char head[64];
      std::snprintf(head, sizeof head, "%02x %02x %02x %02x %02x %02x", b[0], b[1], b[2], b[3], b[4], b[5]);
      ADD_FAILURE() << err << "\n  parameter bytes " << head << ", " << b.size() << " bytes, saved to " << path;
    }
  }
}
