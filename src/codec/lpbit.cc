// lpbit: the bit-wise linear-predictive codec of Hu & Koibuchi, as a chunk codec of the
// zcoll stream (chunk_codec.h).
//
// Chunk layout (n values of T = float or double, B = 8 sizeof(T) bits; eb the stream's
// absolute bound, E = floor(log2 eb)):
//   u8 w          width of the exponent codes, 0..6
//   bit stream    one entry per value, in the order the predictors visit the values
//                 (lp::Lanes in kernels/lp.h); bits are read LSB first from the
//                 bytes in order, each field's lowest bit first; zero bits pad the last byte
//     1, k (2 bits)                    hit: y = T(p_k), the k-th order prediction (3 bits)
//     0, c (w bits) < 2^w - 1, s, t    miss with exponent code c: sign s (1 bit), then
//                                      m = max(0, c - 1) bits t (see below)
//     0, 2^w - 1 (w bits), 1, c (6 bits), s, t
//                                      miss with a code c too large for w bits
//     0, 2^w - 1 (w bits), 0, v (B bits)
//                                      escape: y = v, the value's bits verbatim
// p0..p3 are the predictions from the previous reconstructed values (kernels/lp.h).
// A miss reconstructs the residual r' = (-1)^s (1.t + 2^-(m+1)) x 2^(E + c) (the m leading
// mantissa bits t, the dropped ones replaced by their midpoint; t alone when m = 52) and
// y = T(p1 + r').
//
// Hits: among T(p0)..T(p3) the one closest to x, if within eb (ties: the lowest order).
// Misses, "the value with the low mantissa bits cut to what eb allows": the value that is
// cut is the residual r = x - p1 (see below). Sign and exponent are kept, the exponent as
// the code c = e - E (e = floor(log2 |r|)), and the number of kept mantissa bits follows
// from the exponent and eb: dropping the bits below 2^(e-m) and reconstructing at the
// midpoint errs by at most 2^(e-m-1) = 2^E <= eb (m = c - 1; 2^(E-1) when c = 0). Every
// reconstruction y is then checked, |x - y| <= eb in double after rounding to T; a value
// that fails, NaN and +-Inf, and a residual that is subnormal, below 2^E or would need
// more than min(52, B - 2) mantissa bits is escaped (stored exactly).
// The encoder decides every value first (the decisions do not depend on w), then picks
// the w that makes the chunk smallest given the codes it saw, and writes the bits. A
// fixed w sized for the largest code would spend a bit or more on every miss because of
// the few large residuals where each lane's predictor starts.
//
// Difference preprocessing. The paper turns the values non-negative before cutting bits
// (so that small values need few bits). What is cut here is instead the difference from
// the linear prediction p1, which the decoder knows: it is much smaller than the value
// (or than the value minus the chunk's minimum), so it needs far fewer exponent and
// mantissa bits. In a bit count on the fields of data/ and ../shared/datasets at REL
// 1e-2..1e-5, the residual from p1 gave 1.2-2.6x the ratio of cutting the values
// themselves (the paper's scheme) and 1.0-1.9x that of cutting value minus chunk
// minimum; the residual from p0 was up to 23% lower (nyx) and never more than 0.3%
// higher, from p2 within -7%..+5%.
#include <cstring>

#include "codec/chunk_codec.h"
#include "codec/container.h"
// The scalar decoder shares the encoder stage's format, from its generic (no ISA flags) copy.
#define ZCOLL_KERNELS_ISA generic_isa
#include "codec/kernels/lpbit.h"

namespace zcoll::codec {
namespace {

namespace lp = fzl::generic_isa::lp;
using namespace fzl::generic_isa::lpbit;

// LSB-first bit reader that never reads outside [p, p + bytes); reading past the end
// yields zeros and sets `over`.
struct BitReader {
  const uint8_t* p;
  size_t bytes;
  size_t pos = 0;  // bits consumed
  bool over = false;
  uint64_t window() const {  // the next up to 57 bits (zeros past the end)
    const size_t byte = pos >> 3;
    uint64_t w = 0;
    if (byte + 8 <= bytes) w = load_u64(p + byte);
    else if (byte < bytes) std::memcpy(&w, p + byte, bytes - byte);
    return w >> (pos & 7);
  }
  uint64_t get(unsigned k) {  // k <= 32
    if (pos + k > 8 * bytes) {
      over = true;
      pos = 8 * bytes;
      return 0;
    }
    const uint64_t v = window() & ((uint64_t{1} << k) - 1);
    pos += k;
    return v;
  }
  uint64_t get_wide(unsigned k) {  // k <= 64
    if (k <= 32) return get(k);
    const uint64_t lo = get(32);
    return lo | (get(k - 32) << 32);
  }
};

// An entry off the fast path, after its head and code: a raw value (an escape, then 0), or a
// residual whose code is c or, after an escape, the next 6 bits. false: a code no encoder
// writes.
template <class T>
bool read_slow(BitReader& br, bool escaped, unsigned c, int E, double pred, T* y) {
  if (escaped && br.get(1) == 0) {
    const Bits<T> b = static_cast<Bits<T>>(br.get_wide(8 * sizeof(T)));
    *y = load<T>(&b);
    return true;
  }
  const unsigned c6 = escaped ? static_cast<unsigned>(br.get(6)) : c;
  const unsigned m6 = kept_bits(c6);
  const int f6 = E + static_cast<int>(c6) + 1023;
  if (m6 > max_kept<T>() || f6 < 1 || f6 > 2046) return false;
  const uint64_t sign = br.get(1);
  *y = static_cast<T>(pred + residual(sign, f6 - 1023, br.get_wide(m6), m6));
  return true;
}

template <class T>
bool decode(const uint8_t* in, size_t bytes, const uint8_t* /*buffer_end*/, size_t n, size_t /*begin*/,
            const ChunkGeometry& g, ChunkScratch& /*s*/, T* out) {
  if (bytes < 1 || in[0] > kMaxWidth) return false;
  const unsigned w = in[0];
  const uint64_t escape = (uint64_t{1} << w) - 1;
  const int E = lp::floor_log2(g.eb);
  BitReader br{in + 1, bytes - 1};
  const size_t total = 8 * br.bytes;
  bool bad = false;
  lp::History h[lp::Lanes::kLanes];
  lp::Lanes(n).run([&](int l, size_t i) {
    if (bad) return;
    double p[4];
    h[l].predict(p);
    // Both readings of the next entry from one window of 57 bits, chosen without a
    // branch; escapes, residuals wider than the window and invalid codes take the slow
    // path (rare).
    const uint64_t win = br.window();
    const uint64_t head = win & 1;
    const uint64_t c = (win >> 1) & escape;
    const unsigned m = kept_bits(static_cast<unsigned>(c));
    const int field = E + static_cast<int>(c) + 1023;
    T y;
    if ((head == 0) & ((c == escape) | (m > max_kept<T>()) | (2 + w + m > 57) | (field < 1) | (field > 2046))) {
      br.pos += 1 + w;
      if (!read_slow(br, c == escape, static_cast<unsigned>(c), E, p[1], &y)) {
        bad = true;
        return;
      }
    } else {
      const unsigned mc = m < 52 ? m : 52;  // (m is only meaningful on a miss)
      const uint64_t sign = (win >> (1 + w)) & 1, t = (win >> (2 + w)) & ((uint64_t{1} << mc) - 1);
      const T yh = static_cast<T>(p[(win >> 1) & 3]);
      const T ym = static_cast<T>(p[1] + residual(sign, field - 1023, t, mc));
      const uint64_t hm = uint64_t{0} - head;
      const Bits<T> yb = static_cast<Bits<T>>((bits_of(yh) & hm) | (bits_of(ym) & ~hm));
      y = load<T>(&yb);
      br.pos += head ? 3 : 2 + w + m;
    }
    if (br.pos > total || br.over) {
      bad = true;
      return;
    }
    store(out + i, y);
    h[l].push(y);
  });
  if (bad) return false;
  // Exactly the bytes the entries need, and zero padding.
  if ((br.pos + 7) / 8 != br.bytes) return false;
  return (br.pos & 7) == 0 || (in[bytes - 1] >> (br.pos & 7)) == 0;
}

size_t worst(size_t n, size_t esize) {
  // The header byte, and per value at most an escape (2 + w + B bits) or a miss with a
  // 6-bit code (2 + w + 7 + m bits, m < B): under 9 + kMaxWidth + B bits; and the 8 bytes
  // BitWriter may store past the last bits.
  return 1 + (n * (9 + kMaxWidth + 8 * esize) + 7) / 8 + 8;
}

}  // namespace

const ChunkCodec kLpbitChunkCodec{false, 1, worst, fzl::Selected<&fzl::Kernels::lpbit_encode_f32>::call,
                                  fzl::Selected<&fzl::Kernels::lpbit_encode_f64>::call, decode<float>, decode<double>};

}  // namespace zcoll::codec
