// Quantizer stage: values to integers q on the grid 2 eb q, and back.
#pragma once
#include "codec/kernels/common.h"

namespace zcoll::fzl::ZCOLL_KERNELS_ISA {

// The acceptance test is |x - x'| < eb evaluated in the element type, against eb
// rounded down to that type (eb_t). Rounding is monotonic, so a true |x - x'| > eb can
// never pass; the test is sound in double precision and costs no conversions back to
// double. (Errors of exactly eb are sent exactly; that is rare and only costs bytes.)
//
// float32 first tries single precision (fzl_format.h): r = round(x * (1/s)) in float,
// accepted when |r| <= 2^24 and the float product r * s, which is then the decoder's
// value bit for bit, passes the test. Otherwise (r off by one after the float product's
// rounding, |r| beyond 2^24, NaN, Inf) the double-precision step decides. Every ISA
// applies the same two steps, so the stream does not depend on which one ran.
template <class T>
inline bool quantize_value(T x, const ChunkGeometry& g, int32_t& q) {
  if constexpr (sizeof(T) == 4) {
    if (g.twoeb_f32 > 0) {
      const float r = std::nearbyint(x * g.inv_f32);
      if (std::fabs(r) <= kFloatExactInt && std::fabs(x - r * g.twoeb_f32) < g.eb_f32) {
        q = static_cast<int32_t>(r);
        return true;
      }
    }
  }
  // The limit applies to the rounded value (as the AVX2 kernel checks it on integers).
  const double rq = std::nearbyint(static_cast<double>(x) * g.inv);
  if (!(std::fabs(rq) <= kQuantLimit)) return false;  // also NaN and Inf
  const T rec = static_cast<T>(rq * g.twoeb);
  const T err = std::fabs(x - rec);
  if constexpr (sizeof(T) == 4) {
    if (!(err < g.eb_f32)) return false;
  } else {
    if (!(err < g.eb)) return false;
  }
  q = static_cast<int32_t>(rq);
  return true;
}

template <class T>
inline T dequantize_value(int32_t q, double twoeb) {
  return static_cast<T>(static_cast<double>(q) * twoeb);
}

// dequantize_value over q[0, n) into out (the compiler vectorizes it; a float-product
// path for float32 integers within 2^24, as the 1-D decoder has, measured no faster here).
template <class T>
inline void dequantize_run(const int32_t* q, size_t n, const ChunkGeometry& g, T* out) {
  for (size_t i = 0; i < n; ++i) store(out + i, dequantize_value<T>(q[i], g.twoeb));
}

// Values stored exactly get the placeholder q[i] = q[i-1] (0 at the chunk start),
// which keeps the prediction chain linear in q.
inline void fill_block_placeholders(int32_t* q, size_t i, uint32_t mask) {
  for (uint32_t m = mask; m; m &= m - 1) {
    const size_t k = i + static_cast<size_t>(__builtin_ctz(m));
    q[k] = k ? q[k - 1] : 0;
  }
}

// Quantizes one block of up to 32 values; returns the mask of values that must be
// stored exactly (their q is left 0 here; see fill_block_placeholders).
template <class T>
inline uint32_t quantize_block_scalar(const T* x, unsigned len, const ChunkGeometry& g, int32_t* q) {
  uint32_t mask = 0;
  for (unsigned k = 0; k < len; ++k) {
    int32_t qk = 0;
    if (!quantize_value(load<T>(x + k), g, qk)) mask |= 1u << k;
    q[k] = qk;
  }
  return mask;
}

#if defined(__AVX2__)
// Eight values (two halves of four doubles) scaled and rounded half-even, as int32.
// cvtpd_epi32 turns NaN, Inf and overflow into INT32_MIN, which as an unsigned
// magnitude exceeds the limit, so one unsigned compare on the integers finds every
// value out of range. ra/rb keep the rounded doubles for the rebuild check.
inline __m256i quantize8(__m256d xa, __m256d xb, const ChunkGeometry& g, __m256d& ra, __m256d& rb, __m256i& ok) {
  const __m256d inv = _mm256_set1_pd(g.inv);
  ra = _mm256_round_pd(_mm256_mul_pd(xa, inv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  rb = _mm256_round_pd(_mm256_mul_pd(xb, inv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256i q = _mm256_set_m128i(_mm256_cvtpd_epi32(rb), _mm256_cvtpd_epi32(ra));
  const __m256i lim = _mm256_set1_epi32(static_cast<int>(kQuantLimit));
  ok = _mm256_cmpeq_epi32(_mm256_max_epu32(_mm256_abs_epi32(q), lim), lim);
  return q;
}

// A full block, the same two steps as quantize_value. Its integers stay in registers
// (qv), so the encoder can predict from them without reloading what it has just stored.
// Returns the mask of values that must be stored exactly (their q is 0).
template <class T>
inline uint32_t quantize_block_avx2(const T* x, const ChunkGeometry& g, __m256i qv[4]) {
  const __m256d twoeb = _mm256_set1_pd(g.twoeb);
  uint32_t mask = 0;
  for (unsigned j = 0; j < kBlock; j += 8) {
    __m256d ra, rb;
    __m256i ok, qi;
    if constexpr (sizeof(T) == 4) {
      const __m256 xf = _mm256_loadu_ps(reinterpret_cast<const float*>(x) + j);
      __m256 okf = _mm256_setzero_ps();
      __m256i qf = _mm256_setzero_si256();
      if (g.twoeb_f32 > 0) {
        const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
        const __m256 r = _mm256_round_ps(_mm256_mul_ps(xf, _mm256_set1_ps(g.inv_f32)),
                                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        const __m256 err = _mm256_and_ps(_mm256_sub_ps(xf, _mm256_mul_ps(r, _mm256_set1_ps(g.twoeb_f32))), absm);
        okf = _mm256_and_ps(_mm256_cmp_ps(err, _mm256_set1_ps(g.eb_f32), _CMP_LT_OQ),
                            _mm256_cmp_ps(_mm256_and_ps(r, absm), _mm256_set1_ps(kFloatExactInt), _CMP_LE_OQ));
        qf = _mm256_and_si256(_mm256_cvtps_epi32(r), _mm256_castps_si256(okf));
        const unsigned okbits = static_cast<unsigned>(_mm256_movemask_ps(okf));
        if (okbits == 0xffu) {
          qv[j / 8] = qf;
          continue;
        }
      }
      qi = quantize8(_mm256_cvtps_pd(_mm256_castps256_ps128(xf)), _mm256_cvtps_pd(_mm256_extractf128_ps(xf, 1)), g, ra,
                     rb, ok);
      const __m256 rec = _mm256_setr_m128(_mm256_cvtpd_ps(_mm256_mul_pd(ra, twoeb)),
                                          _mm256_cvtpd_ps(_mm256_mul_pd(rb, twoeb)));
      const __m256 err = _mm256_and_ps(_mm256_sub_ps(xf, rec), _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)));
      ok = _mm256_and_si256(ok, _mm256_castps_si256(_mm256_cmp_ps(err, _mm256_set1_ps(g.eb_f32), _CMP_LT_OQ)));
      // Lanes the single-precision step accepted keep its integer.
      qi = _mm256_blendv_epi8(_mm256_and_si256(qi, ok), qf, _mm256_castps_si256(okf));
      ok = _mm256_or_si256(ok, _mm256_castps_si256(okf));
    } else {
      const double* xd = reinterpret_cast<const double*>(x) + j;
      const __m256d xa = _mm256_loadu_pd(xd), xb = _mm256_loadu_pd(xd + 4);
      qi = quantize8(xa, xb, g, ra, rb, ok);
      const __m256d absm = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffll)), eb = _mm256_set1_pd(g.eb);
      const __m256d ea = _mm256_cmp_pd(_mm256_and_pd(_mm256_sub_pd(xa, _mm256_mul_pd(ra, twoeb)), absm), eb, _CMP_LT_OQ);
      const __m256d eb2 = _mm256_cmp_pd(_mm256_and_pd(_mm256_sub_pd(xb, _mm256_mul_pd(rb, twoeb)), absm), eb, _CMP_LT_OQ);
      // 4 x 64-bit lane masks -> 8 x 32-bit: take the low half of each 64-bit mask.
      const __m256i pick = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
      const __m128i la = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(ea), pick));
      const __m128i lb = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(eb2), pick));
      ok = _mm256_and_si256(ok, _mm256_set_m128i(lb, la));
    }
    qv[j / 8] = _mm256_and_si256(qi, ok);
    mask |= (~static_cast<uint32_t>(_mm256_movemask_ps(_mm256_castsi256_ps(ok))) & 0xffu) << j;
  }
  return mask;
}

#endif

template <class T>
inline uint32_t quantize_block(const T* x, unsigned len, const ChunkGeometry& g, int32_t* q) {
#if defined(__AVX2__)
  if (len != kBlock) return quantize_block_scalar(x, len, g, q);
  __m256i qv[4];
  const uint32_t mask = quantize_block_avx2(x, g, qv);
  for (unsigned j = 0; j < 4; ++j) store_q8(q + 8 * j, qv[j]);
  return mask;
#else
  return quantize_block_scalar(x, len, g, q);
#endif
}

}  // namespace zcoll::fzl::ZCOLL_KERNELS_ISA
