// The lpbyte encoder, a stage of the chunk kernels (kernels/common.h); the format and the
// choice of codes are described in lpbyte.cc, which holds the (scalar) decoder.
#pragma once
#include "codec/kernels/lp.h"

namespace zcoll::fzl::ZCOLL_KERNELS_ISA::lpbyte {

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
  const uint64_t in_range = static_cast<uint64_t>(bits_of(std::fabs(v)) < bits_of(126.0));
  const uint64_t vb = bits_of(v) & (uint64_t{0} - in_range);
  v = load<double>(&vb);
  const double k = round_small(v);
  const int ki = static_cast<int>(k);
  const uint64_t allowed =
      static_cast<uint64_t>((ki != 0) & (static_cast<unsigned>(ki + kMaxCorrection) <= 2u * kMaxCorrection));
  ch.offer(xi, corrected<T>(p[1], k, twoeb), static_cast<int>(correction_code(ki)), allowed);
  // A miss (code -1, stored as 0xFF): the value goes to the values section. Stored
  // always, kept only on a miss (the worst-case room covers it), without a branch.
  const uint64_t miss = ch.miss_mask();
  store(vals, xi);
  vals += sizeof(T) & miss;
  *code = static_cast<uint8_t>(ch.code);
  const Bits<T> yb = static_cast<Bits<T>>(ch.y | (bits_of(xi) & miss));
  h.push(load<T>(&yb));
}

#if defined(__AVX2__)
// encode_value() for the four lanes at once, over the steps in which all of them have a
// value; returns the steps done.
template <class T>
size_t encode_avx2(const T* x, const lp::Lanes& lanes, double eb, double twoeb, double inv, lp::History h[4],
                   uint8_t* codes, uint8_t*& vals) {
  using namespace lp::avx2;
  const __m256d ebv = _mm256_set1_pd(eb), twoebv = _mm256_set1_pd(twoeb), invv = _mm256_set1_pd(inv);
  const __m256d magic = _mm256_set1_pd(6755399441055744.0), zero = _mm256_setzero_pd();
  return encode_steps(x, lanes, eb, h, [&](const size_t idx[4], __m256d xv, const __m256d p[4], Candidate* c) {
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
      store(vals, load<T>(x + idx[l]));
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
#if defined(__AVX2__)
  if (lanes.count == lp::Lanes::kLanes) first = encode_avx2(x, lanes, g.eb, g.twoeb, g.inv, h, out, vals);
#endif
  lanes.run([&](int l, size_t i) { encode_value(load<T>(x + i), h[l], g.eb, g.twoeb, g.inv, out + i, vals); },
            first);
  return static_cast<size_t>(vals - out);
}

}  // namespace zcoll::fzl::ZCOLL_KERNELS_ISA::lpbyte
