// szx: an SZx-class codec (constant blocks, truncated IEEE residuals, XOR leading bytes), the
// codec of the C-Coll baseline, as a chunk codec of the zcoll stream (chunk_codec.h). It is
// written for zcoll from the published description, under fzl's rules: every finite value
// is reconstructed within eb (checked in double after rounding to T), NaN and +-Inf bit for
// bit, and the decoder rejects malformed input without reading or writing out of bounds.
//
// Chunk layout: blocks of 128 values (the last one shorter), each starting with a tag byte.
//   0  constant:  T mu.  Every value of the block is mu.
//   1  truncated: T mu, u8 k, then one lead code per value (2 bits for float, 3 for
//      double, LSB first, padded to a byte), then per value the bytes of its k-bit word
//      that differ from the previous value's word, after the `lead` equal leading bytes.
//   2  raw:       the block's values verbatim.
// mu = T((min + max) / 2) over the block. A block is constant when every value is within eb
// of mu. Otherwise each value's residual d = T(x - mu) keeps its top k bits (sign,
// exponent, mantissa; the rest are cut to 0), k = 1 + exponent bits + m, where m is the
// mantissa bits that the block's largest residual needs for a cut below eb, plus one more
// each time a value of the block still lands outside eb after rounding (up to the full
// width). A word is stored as its bytes after the leading ones it shares with the previous
// word of the block (the first one is compared with 0); lead is at most the k-bit word's
// byte count. Blocks with NaN or Inf, blocks the cut cannot bring within eb, and blocks
// where truncation is not smaller than raw are stored raw.
//
// The decoder rebuilds y = T(mu + d') with the same expression, so encoder and decoder agree
// bit for bit on every platform with IEEE double (contraction is off for the codec).
#include <cmath>
#include <cstring>
#include <limits>

#include "codec/chunk_codec.h"
#include "codec/container.h"

namespace zcoll::codec {
namespace {

constexpr size_t kSzxBlock = 128;
enum : uint8_t { kConstant = 0, kTruncated = 1, kRaw = 2 };

// What the blocks need of T's IEEE layout (float: 8 exponent and 23 mantissa bits,
// double: 11 and 52); a lead code counts up to 3 (float) or 7 (double) equal bytes.
template <class T>
struct Layout {
  using U = Bits<T>;
  static constexpr unsigned kWidth = 8 * sizeof(T), kMantissa = std::numeric_limits<T>::digits - 1;
  static constexpr unsigned kExponent = kWidth - 1 - kMantissa, kLeadBits = sizeof(T) == 4 ? 2 : 3;
};

// The top k bits of w (k in 0..width), the rest cut to 0.
template <class U>
U keep_top(U w, unsigned k, unsigned width) {
  return k == 0 ? U{0} : k >= width ? w : w & ~((U{1} << (width - k)) - 1);
}

template <class T>
T rebuild(T mu, T d) {
  return static_cast<T>(static_cast<double>(mu) + static_cast<double>(d));
}

// Mantissa bits that the block's residuals need for a cut below eb: a residual below
// 2^(e+1) cut to m mantissa bits loses less than 2^(e - m), and eb >= 2^ilogb(eb). The
// rounding of mu + d' can still push a value out; the encoder then keeps one more bit.
int mantissa_bits_needed(double radius, double eb, int max_bits) {
  if (!(radius > 0)) return 0;
  const int m = std::ilogb(radius) - std::ilogb(eb);
  return m < 0 ? 0 : m > max_bits ? max_bits : m;
}

// A truncated block at p: its tag, mu, k, the lead codes, then the differing bytes of each of
// the len words w, most significant first. Its end, or nullptr where it would not be shorter
// than the raw block.
template <class T>
uint8_t* write_truncated(T mu, unsigned k, const typename Layout<T>::U* w, size_t len, uint8_t* p) {
  using B = Layout<T>;
  using U = typename B::U;
  const unsigned bytes = (k + 7) / 8;
  uint8_t* q = p;
  *q++ = kTruncated;
  std::memcpy(q, &mu, sizeof(T));
  q += sizeof(T);
  *q++ = static_cast<uint8_t>(k);
  uint8_t* leads = q;
  const size_t lead_bytes = (len * B::kLeadBits + 7) / 8;
  std::memset(leads, 0, lead_bytes);
  q += lead_bytes;
  const uint8_t* const limit = p + 1 + len * sizeof(T);  // truncation must beat raw
  U prev = 0;
  for (size_t i = 0; i < len; ++i) {
    const U diff = w[i] ^ prev;
    unsigned lead = 0;
    while (lead < bytes && lead < (1u << B::kLeadBits) - 1 &&
           ((diff >> (B::kWidth - 8 * (lead + 1))) & 0xFF) == 0)
      ++lead;
    const size_t bit = i * B::kLeadBits;
    leads[bit / 8] |= static_cast<uint8_t>(lead << (bit % 8));
    if (B::kLeadBits == 3 && bit % 8 > 5) leads[bit / 8 + 1] |= static_cast<uint8_t>(lead >> (8 - bit % 8));
    if (q + (bytes - lead) >= limit) return nullptr;
    for (unsigned b = lead; b < bytes; ++b) *q++ = static_cast<uint8_t>(w[i] >> (B::kWidth - 8 * (b + 1)));
    prev = w[i];
  }
  return q;
}

// Encodes one block of len values at p; returns the end. p has room for a raw block.
template <class T>
uint8_t* encode_block(const T* input, size_t len, double eb, uint8_t* p) {
  using B = Layout<T>;
  using U = typename B::U;
  // x may sit at any byte offset (callers pass their buffers as they are).
  T x[kSzxBlock];
  std::memcpy(x, input, len * sizeof(T));
  double lo = INFINITY, hi = -INFINITY;
  bool finite = true;
  for (size_t i = 0; i < len; ++i) {
    const double v = static_cast<double>(x[i]);
    finite &= std::isfinite(v);
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  }
  auto raw = [&] {
    *p = kRaw;
    std::memcpy(p + 1, x, len * sizeof(T));
    return p + 1 + len * sizeof(T);
  };
  if (!finite) return raw();
  const T mu = static_cast<T>(lo * 0.5 + hi * 0.5);  // hi - lo can overflow
  bool constant = true;
  for (size_t i = 0; i < len; ++i) constant &= within(x[i], mu, eb);
  if (constant) {
    *p = kConstant;
    std::memcpy(p + 1, &mu, sizeof(T));
    return p + 1 + sizeof(T);
  }
  // Residuals, and the fewest kept bits that bring every value within eb.
  T d[kSzxBlock];
  double radius = 0;
  for (size_t i = 0; i < len; ++i) {
    d[i] = static_cast<T>(static_cast<double>(x[i]) - static_cast<double>(mu));
    radius = std::fmax(radius, std::fabs(static_cast<double>(d[i])));
  }
  unsigned k = 1 + B::kExponent + static_cast<unsigned>(mantissa_bits_needed(radius, eb, B::kMantissa));
  U w[kSzxBlock];
  for (;; ++k) {
    if (k > B::kWidth) return raw();
    bool ok = true;
    for (size_t i = 0; i < len && ok; ++i) {
      w[i] = keep_top(bits_of(d[i]), k, B::kWidth);
      ok = within(x[i], rebuild(mu, load<T>(&w[i])), eb);
    }
    if (ok) break;
  }
  uint8_t* q = write_truncated<T>(mu, k, w, len, p);
  return q ? q : raw();
}

template <class T>
size_t encode(const T* x, size_t n, size_t /*begin*/, const ChunkGeometry& g, ChunkScratch& /*s*/, uint8_t* out) {
  uint8_t* p = out;
  for (size_t i = 0; i < n; i += kSzxBlock) p = encode_block(x + i, n - i < kSzxBlock ? n - i : kSzxBlock, g.eb, p);
  return static_cast<size_t>(p - out);
}

// One truncated block after its tag and mu: k, the lead codes, then each word's differing
// bytes. The end of the block, or nullptr where the bytes are not a block the encoder writes.
template <class T>
const uint8_t* decode_truncated(const uint8_t* p, const uint8_t* end, size_t len, T mu, T* out) {
  using B = Layout<T>;
  using U = typename B::U;
  const size_t lead_bytes = (len * B::kLeadBits + 7) / 8;
  if (static_cast<size_t>(end - p) < 1 + lead_bytes) return nullptr;
  const unsigned k = *p++;
  if (k < 1 + B::kExponent || k > B::kWidth) return nullptr;
  const unsigned nbytes = (k + 7) / 8;
  const uint8_t* leads = p;
  p += lead_bytes;
  U prev = 0;
  for (size_t j = 0; j < len; ++j) {
    const size_t bit = j * B::kLeadBits;
    unsigned lead = leads[bit / 8] >> (bit % 8);
    if (bit % 8 + B::kLeadBits > 8) lead |= static_cast<unsigned>(leads[bit / 8 + 1]) << (8 - bit % 8);
    lead &= (1u << B::kLeadBits) - 1;
    if (lead > nbytes || static_cast<size_t>(end - p) < nbytes - lead) return nullptr;
    U w = keep_top(prev, 8 * lead, B::kWidth);
    for (unsigned b = lead; b < nbytes; ++b) w |= static_cast<U>(*p++) << (B::kWidth - 8 * (b + 1));
    // Bits past k must be 0, so that one stream has one meaning.
    if (keep_top(w, k, B::kWidth) != w) return nullptr;
    store(out + j, rebuild(mu, load<T>(&w)));
    prev = w;
  }
  // The padding bits after the last lead code must be 0 as well.
  if ((len * B::kLeadBits) % 8 && (leads[lead_bytes - 1] >> ((len * B::kLeadBits) % 8))) return nullptr;
  return p;
}

template <class T>
bool decode(const uint8_t* in, size_t bytes, const uint8_t* /*buffer_end*/, size_t n, size_t /*begin*/,
            const ChunkGeometry& /*g*/, ChunkScratch& /*s*/, T* out) {
  const uint8_t* p = in;
  const uint8_t* const end = in + bytes;
  for (size_t i = 0; i < n; i += kSzxBlock) {
    const size_t len = n - i < kSzxBlock ? n - i : kSzxBlock;
    if (p >= end) return false;
    const uint8_t tag = *p++;
    if (tag == kRaw) {
      if (static_cast<size_t>(end - p) < len * sizeof(T)) return false;
      std::memcpy(out + i, p, len * sizeof(T));
      p += len * sizeof(T);
      continue;
    }
    if (tag > kRaw || static_cast<size_t>(end - p) < sizeof(T)) return false;
    const T mu = load<T>(p);
    p += sizeof(T);
    if (tag == kConstant) {
      for (size_t j = 0; j < len; ++j) store(out + i + j, mu);
      continue;
    }
    p = decode_truncated(p, end, len, mu, out + i);
    if (!p) return false;
  }
  return p == end;
}

size_t worst(size_t n, size_t esize) { return (n + kSzxBlock - 1) / kSzxBlock + n * esize; }

}  // namespace

const ChunkCodec kSzxChunkCodec{false, 0, worst, encode<float>, encode<double>, decode<float>, decode<double>};

}  // namespace zcoll::codec
