// What every stage of the fzl chunk kernels shares. The stages are compiled once per
// ISA: a translation unit defines ZCOLL_KERNELS_ISA (the namespace that keeps its
// copies apart from the other ISA's; the inline functions differ in code, so sharing
// one name would break the one-definition rule) and includes kernels/table.h.
// Integer arithmetic on residuals wraps (uint32), which keeps prediction invertible
// for any |q| < 2^31 and stays linear in q.
#pragma once
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "codec/fzl_kernels.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#if !defined(ZCOLL_KERNELS_ISA)
#error "define ZCOLL_KERNELS_ISA (the per-ISA namespace) before including the kernels"
#endif

namespace zcoll::fzl::ZCOLL_KERNELS_ISA {

// Branch-free: residual signs are a coin toss, and a branch here mispredicts half the time.
inline uint32_t magnitude(uint32_t u) {
  const uint32_t s = static_cast<uint32_t>(static_cast<int32_t>(u) >> 31);
  return (u ^ s) - s;
}
inline unsigned bit_length(uint32_t v) { return v ? 32u - static_cast<unsigned>(__builtin_clz(v)) : 0u; }

inline uint64_t abs_i32(uint32_t v) {
  const int64_t x = static_cast<int32_t>(v);
  return static_cast<uint64_t>(x < 0 ? -x : x);
}

inline unsigned block_len(size_t n, size_t i) { return static_cast<unsigned>(n - i < kBlock ? n - i : kBlock); }

// Integers up to 2^24 convert to float exactly.
inline constexpr float kFloatExactInt = 16777216.0f;

#if defined(__AVX2__)
inline __m256i load_q8(const int32_t* q) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q)); }
inline void store_q8(int32_t* q, __m256i v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), v); }

// The eight lanes of v folded with op (an associative 4 x 32-bit operation).
template <class Op>
inline uint32_t hreduce(__m256i v, Op op) {
  __m128i t = op(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  t = op(t, _mm_shuffle_epi32(t, 0x4e));
  return static_cast<uint32_t>(_mm_cvtsi128_si32(op(t, _mm_shuffle_epi32(t, 0xb1))));
}
inline uint32_t hreduce_add(__m256i v) { return hreduce(v, [](__m128i a, __m128i b) { return _mm_add_epi32(a, b); }); }
inline uint32_t hreduce_or(__m256i v) { return hreduce(v, [](__m128i a, __m128i b) { return _mm_or_si128(a, b); }); }

// Inclusive prefix sums of the eight lanes (mod 2^32, as the scalar running sums).
inline __m256i prefix8(__m256i v) {
  v = _mm256_add_epi32(v, _mm256_slli_si256(v, 4));
  v = _mm256_add_epi32(v, _mm256_slli_si256(v, 8));
  const __m256i t = _mm256_shuffle_epi32(v, 0xff);
  return _mm256_add_epi32(v, _mm256_permute2x128_si256(t, t, 0x08));
}
// Lane 7 of v in every lane.
inline __m256i last_lane(__m256i v) { return _mm256_permutevar8x32_epi32(v, _mm256_set1_epi32(7)); }
#endif

}  // namespace zcoll::fzl::ZCOLL_KERNELS_ISA
