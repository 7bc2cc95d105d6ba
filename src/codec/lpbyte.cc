// lpbyte: the byte-wise linear-predictive codec of Hu & Koibuchi, as a chunk codec of the
// zcoll stream (chunk_codec.h).
//
// Chunk layout (n values of T = float or double; eb the stream's absolute bound):
//   codes:  n bytes, one per value, in array order
//   values: the values whose code is 0xFF, verbatim (T, little-endian), in the order the
//           predictors visit them (lp::Lanes in linear_predictors.h: in array order for
//           chunks under 2048 values, else four segments in lockstep)
// The code byte itself says "miss, the value follows in the values section", so there is
// no separate index of miss positions (the paper sends one 4-byte index per predicted
// value); a miss costs 1 + sizeof(T) bytes, a hit 1 byte. The decoder checks that the
// chunk is exactly n + misses x sizeof(T) bytes.
//
// Codes, with p0..p3 the 0th- to 3rd-order predictions from the previous reconstructed
// values (linear_predictors.h) and y the value the decoder writes:
//   0x00..0x03  y = T(p_c)                                 the paper's four codes
//   0x04..0xFD  y = T(p1 + k x 2 eb), k in [-125, -1] u [1, 125]:  code 4 + (k + 125) for
//               k < 0, code 128 + k for k > 0
//   0xFE        invalid (rejected)
//   0xFF        miss: y is the next value of the values section
// The encoder takes, among the codes whose y is within eb of x (|x - y| <= eb in double,
// y rounded to T), the one with the smallest error (ties: the lower code); a miss when
// there is none, and for NaN and +-Inf, which are therefore reproduced bit for bit.
//
// Why the corrections: the paper uses 4 of the 256 code values. With only them a value is
// a hit when some prediction is within eb of it, which on the real fields of data/ and
// ../shared/datasets is rare enough at REL 1e-4 that the stream is about as large as the
// input (0.8-1.2x; it would be stored raw). The spare codes extend the linear predictor p1
// by up to +-125 bins of width 2 eb, so a value is a hit when it is within about 251 eb of
// p1: at REL 1e-4 the ratio is 2.4-8.0x on the same fields (and at most 4x for float, 8x
// for double, one byte per value). Other splits of the code space measured (four
// predictors x +-31 bins, p0 and p1 x +-63, p1 and p2 x +-63, p1 alone x +-127) were lower
// or, for p1 alone, within 1% of this and without the paper's codes.
#include <algorithm>
#include <cmath>

#include "codec/chunk_codec.h"
#include "codec/container.h"
#include "codec/linear_predictors.h"

namespace zcoll::codec {
namespace {

constexpr unsigned kMiss = 0xFF, kInvalid = 0xFE, kFirstCorrection = 4;
constexpr int kMaxCorrection = 125;

// The correction k of a code 0x04..0xFD, and the code of a correction k != 0.
inline int code_correction(unsigned c) { return c <= 128 ? static_cast<int>(c) - 129 : static_cast<int>(c) - 128; }
inline unsigned correction_code(int k) { return static_cast<unsigned>(128 + k + (k < 0)); }

// The value of a correction code (k != 0), the same expression on both sides.
template <class T>
inline T corrected(double p1, double k, double twoeb) {
  return static_cast<T>(p1 + k * twoeb);
}

// Round half to even for |v| < 2^51 (here |v| < 126), without a libm call on baseline x86-64.
inline double round_small(double v) {
  constexpr double kMagic = 6755399441055744.0;  // 1.5 x 2^52
  return (v + kMagic) - kMagic;
}

// The encoder's step for one value: its code (miss: -1), the value appended to the values
// section on a miss, and the reconstruction pushed into the lane's history.
template <class T>
inline void encode_value(T xi, lp::History& h, double eb, double twoeb, double inv, uint8_t* code, uint8_t*& vals) {
  double p[4];
  h.predict(p);
  lp::Choice<T> ch(eb);
  lp::offer_predictions(ch, xi, p);
  // p1 with the correction k that rounds x to the nearest bin around it (k = 0 is p1's
  // own code). |v| >= 126 and NaN are out of range: those take v = 0, which is refused.
  double v = (static_cast<double>(xi) - p[1]) * inv;
  const uint64_t in_range = static_cast<uint64_t>(lp::bits_of(std::fabs(v)) < lp::bits_of(126.0));
  const uint64_t vb = lp::bits_of(v) & (uint64_t{0} - in_range);
  v = lp::load<double>(&vb);
  const double k = round_small(v);
  const int ki = static_cast<int>(k);
  const uint64_t allowed =
      static_cast<uint64_t>((ki != 0) & (static_cast<unsigned>(ki + kMaxCorrection) <= 2u * kMaxCorrection));
  ch.offer(xi, corrected<T>(p[1], k, twoeb), static_cast<int>(correction_code(ki)), allowed);
  // A miss (code -1, stored as 0xFF): the value goes to the values section. Stored
  // always, kept only on a miss (the worst-case room covers it), without a branch.
  const uint64_t miss = ch.miss_mask();
  lp::store(vals, xi);
  vals += sizeof(T) & miss;
  *code = static_cast<uint8_t>(ch.code);
  const lp::Bits<T> yb = static_cast<lp::Bits<T>>(ch.y | (lp::bits_of(xi) & miss));
  h.push(lp::load<T>(&yb));
}

#if defined(ZCOLL_LP_AVX2)
// encode_value() for the four lanes at once, over the steps in which all of them have a
// value; returns the steps done.
template <class T>
__attribute__((target("avx2"))) size_t encode_avx2(const T* x, const lp::Lanes& lanes, double eb, double twoeb,
                                                   double inv, lp::History h[4], uint8_t* codes, uint8_t*& vals) {
  using namespace lp::avx2;
  const __m256d ebv = _mm256_set1_pd(eb), twoebv = _mm256_set1_pd(twoeb), invv = _mm256_set1_pd(inv);
  const __m256d magic = _mm256_set1_pd(6755399441055744.0), zero = _mm256_setzero_pd();
  return encode_steps(x, lanes, eb, h, [&](const size_t idx[4], __m256d xv, const __m256d p[4], Candidate* c)
                                           __attribute__((target("avx2"))) {
    __m256d v = _mm256_mul_pd(_mm256_sub_pd(xv, p[1]), invv);
    v = _mm256_and_pd(v, _mm256_cmp_pd(abs_pd(v), _mm256_set1_pd(126.0), _CMP_LT_OQ));
    const __m256d k = _mm256_sub_pd(_mm256_add_pd(v, magic), magic);  // round_small
    const __m256d allowed = _mm256_and_pd(_mm256_cmp_pd(k, zero, _CMP_NEQ_OQ),
                                          _mm256_cmp_pd(abs_pd(k), _mm256_set1_pd(kMaxCorrection), _CMP_LE_OQ));
    // correction_code(k) = 128 + k + (k < 0)
    const __m256i ki = _mm256_cvtepi32_epi64(_mm256_cvtpd_epi32(k));
    const __m256i code = _mm256_sub_epi64(_mm256_add_epi64(ki, _mm256_set1_epi64x(128)),
                                          _mm256_cmpgt_epi64(_mm256_setzero_si256(), ki));
    c[4] = candidate(xv, round_to<T>(_mm256_add_pd(p[1], _mm256_mul_pd(k, twoebv))), code, ebv, allowed);
    const Choice4 ch = choose(c, 5);
    alignas(32) int64_t cl[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(cl), ch.code);
    for (int l = 0; l < 4; ++l) {  // misses append in lane order, as the scalar steps do
      codes[idx[l]] = static_cast<uint8_t>(cl[l]);
      lp::store(vals, lp::load<T>(x + idx[l]));
      vals += cl[l] < 0 ? sizeof(T) : 0;
    }
    return _mm256_blendv_pd(xv, ch.y, _mm256_castsi256_pd(ch.hit));
  });
}
#endif

template <class T>
size_t encode(const T* x, size_t n, size_t /*begin*/, const ChunkGeometry& g, ChunkScratch& /*s*/, uint8_t* out) {
  uint8_t* vals = out + n;
  lp::History h[lp::Lanes::kLanes];
  const lp::Lanes lanes(n);
  size_t first = 0;
#if defined(ZCOLL_LP_AVX2)
  if (lanes.count == lp::Lanes::kLanes && lp::avx2_enabled())
    first = encode_avx2(x, lanes, g.eb, g.twoeb, g.inv, h, out, vals);
#endif
  lanes.run([&](int l, size_t i) { encode_value(lp::load<T>(x + i), h[l], g.eb, g.twoeb, g.inv, out + i, vals); },
            first);
  return static_cast<size_t>(vals - out);
}

template <class T>
bool decode(const uint8_t* in, size_t bytes, const uint8_t* /*buffer_end*/, size_t n, size_t /*begin*/,
            const ChunkGeometry& g, ChunkScratch& /*s*/, T* out) {
  if (bytes < n || (bytes - n) % sizeof(T)) return false;
  const double twoeb = g.twoeb;
  const uint8_t* vals = in + n;
  const uint8_t* const vals_end = in + bytes;
  const T zero = T(0);
  bool bad = false;
  lp::History h[lp::Lanes::kLanes];
  lp::Lanes(n).run([&](int l, size_t i) {
    const unsigned c = in[i];
    double p[4];
    h[l].predict(p);
    // Branch-free: the prediction the code names, and the next stored value if there is one.
    const double pred = p[c < kFirstCorrection ? c : 1];
    const double k = c < kFirstCorrection || c >= kInvalid ? 0.0 : code_correction(c);
    const T yc = k == 0 ? static_cast<T>(pred) : corrected<T>(pred, k, twoeb);
    const bool miss = c == kMiss, avail = vals < vals_end;
    const T yv = lp::load<T>(avail ? static_cast<const void*>(vals) : static_cast<const void*>(&zero));
    bad |= c == kInvalid || (miss && !avail);
    vals += miss && avail ? sizeof(T) : 0;
    const T y = miss ? yv : yc;
    lp::store(out + i, y);
    h[l].push(y);
  });
  return !bad && vals == vals_end;
}

size_t worst(size_t n, size_t esize) { return n * (1 + esize); }

}  // namespace

const ChunkCodec kLpbyteChunkCodec{false, 0, worst, encode<float>, encode<double>, decode<float>, decode<double>};

}  // namespace zcoll::codec
