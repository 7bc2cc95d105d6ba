// The decompressor fuzz logic, shared by the libFuzzer target (fuzz_decompress.cc,
// clang + ASan/UBSan) and the replay test in the gtest suite (plain gcc).
//
// check_decompress(bytes) feeds arbitrary bytes to zcoll_stream_inspect,
// zcoll_decompress and the reader API, with guarded output buffers, and checks
// invariants that hold for any input:
//  * no call writes outside its output buffer;
//  * inspect and reader_open accept exactly the same inputs, and agree;
//  * a stream that inspect rejects is never decompressed successfully;
//  * when zcoll_decompress succeeds: its thread count changes nothing, the
//    reader (chunks in reverse) reproduces it exactly, wrong count or dtype is
//    ZCOLL_ERR_MISMATCH, and stream_bytes is the input size;
//  * no call returns ZCOLL_ERR_INTERNAL or an unknown code.
// It returns nullptr when all hold, else a static description.
#pragma once
#include <zcoll.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ZCOLL_FUZZ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(ZCOLL_FUZZ_ASAN)
#define ZCOLL_FUZZ_ASAN 1
#endif
#ifdef ZCOLL_FUZZ_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace zcoll_fuzz {

inline constexpr size_t kMaxElements = size_t(1) << 20;

// An output buffer with guard zones on both sides: filled with a pattern and,
// under ASan, poisoned so that a stray write is reported where it happens.
class OutBuf {
 public:
  static constexpr size_t kGuard = 64;
  static constexpr uint8_t kPattern = 0xA5;
  explicit OutBuf(size_t bytes) : n_(bytes), v_(new uint8_t[bytes + 2 * kGuard]) {
    std::memset(v_.get(), kPattern, bytes + 2 * kGuard);
    poison(true);
  }
  ~OutBuf() { poison(false); }
  OutBuf(const OutBuf&) = delete;
  OutBuf& operator=(const OutBuf&) = delete;
  uint8_t* data() { return v_.get() + kGuard; }
  const uint8_t* data() const { return v_.get() + kGuard; }
  size_t size() const { return n_; }
  bool intact() {
    poison(false);
    bool ok = true;
    for (size_t i = 0; i < kGuard; ++i)
      if (v_[i] != kPattern || v_[kGuard + n_ + i] != kPattern) ok = false;
    poison(true);
    return ok;
  }

 private:
  void poison(bool on) {
#ifdef ZCOLL_FUZZ_ASAN
    if (on) {
      ASAN_POISON_MEMORY_REGION(v_.get(), kGuard);
      ASAN_POISON_MEMORY_REGION(v_.get() + kGuard + n_, kGuard);
    } else {
      ASAN_UNPOISON_MEMORY_REGION(v_.get(), 2 * kGuard + n_);
    }
#else
    (void)on;
#endif
  }
  size_t n_;
  std::unique_ptr<uint8_t[]> v_;
};

inline bool known_code(int rc) { return rc >= ZCOLL_SUCCESS && rc <= ZCOLL_ERR_INTERNAL && rc != ZCOLL_ERR_INTERNAL; }

inline size_t elem_size(zcoll_dtype d) { return d == ZCOLL_FLOAT64 ? 8 : 4; }

inline bool same_info(const zcoll_stream_info& a, const zcoll_stream_info& b) {
  if (a.codec != b.codec || a.format_version != b.format_version || a.dtype != b.dtype || a.count != b.count ||
      a.chunk_len != b.chunk_len || a.nchunks != b.nchunks || a.ndims != b.ndims ||
      a.stream_bytes != b.stream_bytes)
    return false;
  if (std::memcmp(&a.eb_abs, &b.eb_abs, sizeof a.eb_abs) != 0) return false;
  for (int d = 0; d < 3; ++d)
    if (a.dims[d] != b.dims[d]) return false;
  return true;
}

// Reader over the input: every chunk, in reverse, into a guarded buffer.
// *all_ok tells whether every chunk decoded.
inline const char* read_all_chunks(const uint8_t* in, size_t size, const zcoll_stream_info& info, OutBuf* out,
                                   bool* all_ok) {
  *all_ok = false;
  zcoll_reader* r = nullptr;
  int rc = zcoll_reader_open(in, size, &r);
  if (!known_code(rc)) return "zcoll_reader_open returned an unexpected code";
  if (rc != ZCOLL_SUCCESS) return r ? "zcoll_reader_open failed but set *reader" : nullptr;
  if (!r) return "zcoll_reader_open succeeded with a NULL reader";
  const zcoll_stream_info* ri = zcoll_reader_info(r);
  if (!ri || !same_info(*ri, info)) {
    zcoll_reader_close(&r);
    return "zcoll_reader_info differs from zcoll_stream_inspect";
  }
  bool ok = true;
  for (size_t k = info.nchunks; k-- > 0;) {
    int crc = zcoll_reader_chunk(r, k, out->data());
    if (!known_code(crc)) {
      zcoll_reader_close(&r);
      return "zcoll_reader_chunk returned an unexpected code";
    }
    if (crc != ZCOLL_SUCCESS) ok = false;
  }
  // past the end
  if (zcoll_reader_chunk(r, info.nchunks, out->data()) == ZCOLL_SUCCESS) {
    zcoll_reader_close(&r);
    return "zcoll_reader_chunk accepted a chunk index past the end";
  }
  zcoll_reader_close(&r);
  if (r) return "zcoll_reader_close left *reader set";
  if (!out->intact()) return "zcoll_reader_chunk wrote outside the output buffer";
  *all_ok = ok;
  return nullptr;
}

// zcoll_combine (the stream with itself) and zcoll_combine_values (values into the
// stream) parse it as the decoder does, so they succeed exactly when it decompressed
// (decoded: rc == ZCOLL_SUCCESS), stay inside their output, and refuse a stream of another
// codec with ZCOLL_ERR_CODEC. values: count elements to fold in.
inline const char* check_combinations(const uint8_t* in, size_t size, const zcoll_stream_info& info, bool decoded,
                                      const uint8_t* values) {
  OutBuf out(zcoll_codec_bound(info.count, info.dtype));
  size_t len = 0;
  const int rc_c = zcoll_combine(ZCOLL_OP_MAX, in, size, in, size, out.data(), out.size(), &len, 1);
  const int rc_v = zcoll_combine_values(ZCOLL_OP_SUM, values, info.count, info.dtype, in, size, out.data(),
                                        out.size(), &len, 1);
  if (!known_code(rc_c) || !known_code(rc_v)) return "zcoll_combine(_values) returned an unexpected code";
  if (!out.intact()) return "zcoll_combine(_values) wrote outside the output buffer";
  if (info.codec != ZCOLL_CODEC_FZL) {
    if (rc_c != ZCOLL_ERR_CODEC || rc_v != ZCOLL_ERR_CODEC) return "zcoll_combine(_values) of a non-fzl stream";
    return nullptr;
  }
  if ((rc_c == ZCOLL_SUCCESS) != decoded) return "zcoll_combine and zcoll_decompress disagree on validity";
  if ((rc_v == ZCOLL_SUCCESS) != decoded) return "zcoll_combine_values and zcoll_decompress disagree on validity";
  return nullptr;
}

inline const char* check_decompress(const uint8_t* data, size_t size) {
  // an exactly-sized copy, so that ASan sees any read past the end
  std::unique_ptr<uint8_t[]> copy(new uint8_t[size ? size : 1]);
  if (size) std::memcpy(copy.get(), data, size);
  const uint8_t* in = copy.get();

  zcoll_stream_info info;
  std::memset(&info, 0, sizeof info);
  const int irc = zcoll_stream_inspect(in, size, &info);
  if (!known_code(irc)) return "zcoll_stream_inspect returned an unexpected code";

  // inspect and reader_open validate the same things
  {
    zcoll_reader* r = nullptr;
    int orc = zcoll_reader_open(in, size, &r);
    if (!known_code(orc)) return "zcoll_reader_open returned an unexpected code";
    const bool agree = (orc == ZCOLL_SUCCESS) == (irc == ZCOLL_SUCCESS);
    if (r) zcoll_reader_close(&r);
    if (!agree) return "zcoll_stream_inspect and zcoll_reader_open disagree on validity";
  }

  if (irc != ZCOLL_SUCCESS) {
    // an invalid stream never decompresses, whatever the call says
    static const struct {
      zcoll_dtype dt;
      size_t n;
    } tries[] = {{ZCOLL_FLOAT32, 0}, {ZCOLL_FLOAT32, 1}, {ZCOLL_FLOAT32, 100}, {ZCOLL_FLOAT64, 32},
                 {ZCOLL_FLOAT64, 1000}, {ZCOLL_FLOAT32, 4096}};
    for (const auto& t : tries) {
      OutBuf o(t.n * elem_size(t.dt));
      int rc = zcoll_decompress(in, size, t.dt, o.data(), t.n, 1);
      if (!known_code(rc)) return "zcoll_decompress returned an unexpected code";
      if (rc == ZCOLL_SUCCESS) return "zcoll_decompress accepted a stream that zcoll_stream_inspect rejects";
      if (!o.intact()) return "zcoll_decompress wrote outside the output buffer (invalid stream)";
    }
    return nullptr;
  }

  // inspect accepted: its report must be self-consistent
  if (info.dtype != ZCOLL_FLOAT32 && info.dtype != ZCOLL_FLOAT64) return "inspect: unknown dtype accepted";
  if (info.chunk_len < 32 || info.chunk_len > ZCOLL_MAX_CHUNK_LEN || info.chunk_len % 32)
    return "inspect: invalid chunk_len accepted";
  if (info.nchunks != info.count / info.chunk_len + (info.count % info.chunk_len != 0))
    return "inspect: nchunks inconsistent with count and chunk_len";
  if (!(info.eb_abs >= 0) || info.eb_abs != info.eb_abs) return "inspect: invalid eb_abs accepted";
  if (info.ndims >= 2) {
    size_t prod = 1;
    for (int d = 0; d < info.ndims && d < 3; ++d) prod *= info.dims[d];
    if (info.ndims > 3 || prod != info.count) return "inspect: dims inconsistent with count";
  }
  if (info.stream_bytes > size) return "inspect: stream_bytes larger than the input";

  const size_t es = elem_size(info.dtype);
  if (info.count > kMaxElements) {
    // too big to decode here; a smaller count must be refused
    OutBuf o(100 * es);
    int rc = zcoll_decompress(in, size, info.dtype, o.data(), 100, 1);
    if (!known_code(rc)) return "zcoll_decompress returned an unexpected code";
    if (rc == ZCOLL_SUCCESS) return "zcoll_decompress accepted a count that differs from the stream's";
    if (!o.intact()) return "zcoll_decompress wrote outside the output buffer (count mismatch)";
    return nullptr;
  }

  const size_t bytes = info.count * es;
  OutBuf o1(bytes);
  const int rc = zcoll_decompress(in, size, info.dtype, o1.data(), info.count, 1);
  if (!known_code(rc)) return "zcoll_decompress returned an unexpected code";
  if (!o1.intact()) return "zcoll_decompress wrote outside the output buffer";

  {
    std::vector<uint8_t> zeros(rc == ZCOLL_SUCCESS ? 0 : bytes + 1);
    if (const char* e = check_combinations(in, size, info, rc == ZCOLL_SUCCESS,
                                           rc == ZCOLL_SUCCESS ? o1.data() : zeros.data()))
      return e;
  }
  if (rc != ZCOLL_SUCCESS) {
    if (rc == ZCOLL_ERR_MISMATCH) return "zcoll_decompress: MISMATCH with the dtype and count inspect reported";
    // the reader must stay inside its buffer too
    OutBuf ro(bytes);
    bool all_ok = false;
    if (const char* e = read_all_chunks(in, size, info, &ro, &all_ok)) return e;
    return nullptr;
  }

  if (info.stream_bytes != size) return "zcoll_decompress accepted input with bytes beyond stream_bytes";

  {  // thread count changes nothing
    OutBuf o2(bytes);
    int rc2 = zcoll_decompress(in, size, info.dtype, o2.data(), info.count, 2);
    if (rc2 != ZCOLL_SUCCESS) return "zcoll_decompress: threads=2 fails where threads=1 succeeds";
    if (!o2.intact()) return "zcoll_decompress (threads=2) wrote outside the output buffer";
    if (bytes && std::memcmp(o1.data(), o2.data(), bytes) != 0) return "zcoll_decompress: output depends on threads";
  }
  {  // the reader reproduces it
    OutBuf ro(bytes);
    bool all_ok = false;
    if (const char* e = read_all_chunks(in, size, info, &ro, &all_ok)) return e;
    if (!all_ok) return "the reader rejects a chunk of a stream zcoll_decompress accepts";
    if (bytes && std::memcmp(o1.data(), ro.data(), bytes) != 0) return "reader output differs from zcoll_decompress";
  }
  {  // wrong count / dtype
    OutBuf o3((info.count + 1) * 8);
    if (zcoll_decompress(in, size, info.dtype, o3.data(), info.count + 1, 1) != ZCOLL_ERR_MISMATCH)
      return "zcoll_decompress: count + 1 is not ZCOLL_ERR_MISMATCH";
    zcoll_dtype other = info.dtype == ZCOLL_FLOAT32 ? ZCOLL_FLOAT64 : ZCOLL_FLOAT32;
    if (zcoll_decompress(in, size, other, o3.data(), info.count, 1) != ZCOLL_ERR_MISMATCH)
      return "zcoll_decompress: the other dtype is not ZCOLL_ERR_MISMATCH";
    if (!o3.intact()) return "zcoll_decompress (mismatch) wrote outside the output buffer";
  }
  return nullptr;
}

}  // namespace zcoll_fuzz
