// Bit-packing stage and the block format: a tag (code length b, exact flag, predictor
// order), the residuals' sign word, their magnitudes in fixed-length fields (value i at
// bits [i*b, i*b+b)), then the exact values' mask and bytes.
#pragma once
#include "codec/kernels/common.h"

namespace zcoll::fzl::ZCOLL_KERNELS_ISA {

// Branch-free: stores a word every value and advances only when it is full. Writes up to
// 4 bytes past the packed bits, which the block's worst-case size leaves room for.
inline uint8_t* pack_bits(const uint32_t* m, unsigned n, unsigned b, uint8_t* p) {
  uint64_t acc = 0;
  unsigned nbits = 0;
  for (unsigned i = 0; i < n; ++i) {
    acc |= static_cast<uint64_t>(m[i]) << nbits;
    nbits += b;
    store_u32(p, static_cast<uint32_t>(acc));
    const unsigned full = nbits >> 5;  // 0 or 1
    p += 4 * full;
    acc >>= 32 * full;
    nbits -= 32 * full;
  }
  store_u32(p, static_cast<uint32_t>(acc));
  return p + (nbits + 7) / 8;
}

// Needs 8 readable bytes past the last byte that holds a value.
inline void unpack_bits(const uint8_t* p, unsigned n, unsigned b, uint32_t signs, int32_t* r) {
  const uint64_t mask = (uint64_t{1} << b) - 1;
  for (unsigned i = 0; i < n; ++i) {
    const size_t bit = static_cast<size_t>(i) * b;
    const uint32_t m = static_cast<uint32_t>((load_u64(p + (bit >> 3)) >> (bit & 7)) & mask);
    const uint32_t neg = 0u - ((signs >> i) & 1u);
    r[i] = static_cast<int32_t>((m ^ neg) - neg);
  }
}

// Full blocks with a compile-time code length: every shift and word index is a
// constant, so the 32 values pack into B words without a loop-carried bit counter.
template <unsigned B>
void pack32(const uint32_t* m, uint8_t* p) {
  uint32_t w[B] = {};
#pragma GCC unroll 32
  for (unsigned i = 0; i < 32; ++i) {
    const unsigned bit = i * B, word = bit / 32, sh = bit % 32;
    w[word] |= m[i] << sh;
    if (sh + B > 32) w[word + 1] |= m[i] >> (32 - sh);
  }
  std::memcpy(p, w, 4 * B);
}

template <unsigned B>
void unpack32(const uint8_t* p, uint32_t signs, int32_t* r) {
  uint32_t w[B + 1];
  std::memcpy(w, p, 4 * B);
  w[B] = 0;
  constexpr uint32_t mask = B == 32 ? 0xffffffffu : (1u << B) - 1;
#pragma GCC unroll 32
  for (unsigned i = 0; i < 32; ++i) {
    const unsigned bit = i * B, word = bit / 32, sh = bit % 32;
    uint32_t v = w[word] >> sh;
    if (sh + B > 32) v |= w[word + 1] << (32 - sh);
    v &= mask;
    const uint32_t neg = 0u - ((signs >> i) & 1u);
    r[i] = static_cast<int32_t>((v ^ neg) - neg);
  }
}

using Pack32Fn = void (*)(const uint32_t*, uint8_t*);
using Unpack32Fn = void (*)(const uint8_t*, uint32_t, int32_t*);

template <unsigned... Bs>
struct BlockCoders {
  static constexpr Pack32Fn pack[] = {nullptr, &pack32<Bs>...};
  static constexpr Unpack32Fn unpack[] = {nullptr, &unpack32<Bs>...};
};
using Coders = BlockCoders<1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
                           24, 25, 26, 27, 28, 29, 30, 31, 32>;

#if defined(__AVX2__)
// Unpacks 8 values of b <= 25 bits: they occupy exactly b bytes starting at p.
// Built at compile time, so the hot loop reads them without a static-init guard.
struct Unpack8Tables {
  alignas(32) uint8_t shuffle[26][32] = {};
  alignas(32) uint32_t shift[26][8] = {};
  constexpr Unpack8Tables() {
    for (unsigned b = 1; b <= 25; ++b) {
      for (unsigned j = 0; j < 8; ++j) {
        const unsigned half = j / 4;
        const unsigned base = half ? (4 * b) / 8 : 0;  // byte where the upper half's load starts
        const unsigned bit = j * b - base * 8;
        shift[b][j] = bit & 7;
        for (unsigned k = 0; k < 4; ++k) {
          const unsigned byte = bit / 8 + k;
          shuffle[b][half * 16 + (j % 4) * 4 + k] = static_cast<uint8_t>(byte < 16 ? byte : 0x80);
        }
      }
    }
  }
};
inline constexpr Unpack8Tables kUnpack8Tables{};
inline constexpr unsigned kMaxUnpackAvx2Bits = 25;

// A full block of b <= 25 bits into four vectors of signed residuals. Reads up to 16
// bytes past the 4b packed bytes. Always inlined: r's vectors stay in registers.
[[gnu::always_inline]] inline void unpack32_avx2(const uint8_t* p, unsigned b, uint32_t signs, __m256i r[4]) {
  const Unpack8Tables& t = kUnpack8Tables;
  const __m256i shuf = _mm256_load_si256(reinterpret_cast<const __m256i*>(t.shuffle[b]));
  const __m256i sh = _mm256_load_si256(reinterpret_cast<const __m256i*>(t.shift[b]));
  const __m256i mask = _mm256_set1_epi32(static_cast<int>((1u << b) - 1));
  // Sign bit 8g + j moved to bit 31 of lane j, and never zero, for _mm256_sign_epi32.
  const __m256i all_signs = _mm256_set1_epi32(static_cast<int>(signs)), one = _mm256_set1_epi32(1);
  __m256i to_top = _mm256_setr_epi32(31, 30, 29, 28, 27, 26, 25, 24);
  const unsigned upper = (4 * b) / 8;
  for (unsigned g = 0; g < 4; ++g, p += b) {
    __m256i raw = _mm256_setr_m128i(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)),
                                    _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + upper)));
    __m256i v = _mm256_and_si256(_mm256_srlv_epi32(_mm256_shuffle_epi8(raw, shuf), sh), mask);
    v = _mm256_sign_epi32(v, _mm256_or_si256(_mm256_sllv_epi32(all_signs, to_top), one));
    to_top = _mm256_sub_epi32(to_top, _mm256_set1_epi32(8));
    r[g] = v;
  }
}

// Packs 32 magnitudes of b <= 16 bits, held in four vectors, into pack32<b>'s layout.
// Neighbouring fields merge pairwise, doubling their width each step, so there is no
// per-value shift. Writes up to 8 bytes past the 4b bytes, which a block's worst-case
// size leaves room for. Always inlined, so m's vectors need not go through memory.
[[gnu::always_inline]] inline void pack32_avx2(const __m256i m[4], unsigned b, uint8_t* p) {
  // Merges each pair of w-bit fields (w = lane bits / 2) holding `bits` bits apiece.
  auto merge16 = [](__m256i v, unsigned bits) {
    const __m256i lo = _mm256_set1_epi16(0x00ff);
    return _mm256_or_si256(_mm256_and_si256(v, lo),
                           _mm256_srl_epi16(_mm256_andnot_si256(lo, v), _mm_cvtsi32_si128(static_cast<int>(8 - bits))));
  };
  auto merge32 = [](__m256i v, unsigned bits) {
    const __m256i lo = _mm256_set1_epi32(0xffff);
    return _mm256_or_si256(_mm256_and_si256(v, lo),
                           _mm256_srl_epi32(_mm256_andnot_si256(lo, v), _mm_cvtsi32_si128(static_cast<int>(16 - bits))));
  };
  auto merge64 = [](__m256i v, unsigned bits) {
    const __m256i lo = _mm256_set1_epi64x(0xffffffffll);
    return _mm256_or_si256(_mm256_and_si256(v, lo),
                           _mm256_srl_epi64(_mm256_andnot_si256(lo, v), _mm_cvtsi32_si128(static_cast<int>(32 - bits))));
  };
  // Values 0-15 and 16-31 as u16, in order (packus interleaves the 128-bit lanes).
  const __m256i h0 = _mm256_permute4x64_epi64(_mm256_packus_epi32(m[0], m[1]), 0xd8);
  const __m256i h1 = _mm256_permute4x64_epi64(_mm256_packus_epi32(m[2], m[3]), 0xd8);
  if (b <= 8) {
    __m256i v = _mm256_permute4x64_epi64(_mm256_packus_epi16(h0, h1), 0xd8);  // 32 bytes in order
    v = merge64(merge32(merge16(v, b), 2 * b), 4 * b);                        // each u64: 8 values, 8b bits
    const __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
    store_u64(p, static_cast<uint64_t>(_mm_cvtsi128_si64(lo)));
    store_u64(p + b, static_cast<uint64_t>(_mm_extract_epi64(lo, 1)));
    store_u64(p + 2 * b, static_cast<uint64_t>(_mm_cvtsi128_si64(hi)));
    store_u64(p + 3 * b, static_cast<uint64_t>(_mm_extract_epi64(hi, 1)));
    return;
  }
  // Each u64: 4 values, 4b bits; then each 128-bit lane: 8 values, 8b bits = b bytes.
  const __m128i up = _mm_cvtsi32_si128(static_cast<int>(4 * b)), down = _mm_cvtsi32_si128(static_cast<int>(64 - 4 * b));
  auto merge128 = [&](__m256i v) {
    const __m256i raised = _mm256_sll_epi64(_mm256_shuffle_epi32(v, 0x4e), up);  // upper u64 << 4b, in the lower
    return _mm256_blend_epi32(_mm256_or_si256(v, raised), _mm256_srl_epi64(v, down), 0xcc);
  };
  const __m256i v0 = merge128(merge64(merge32(h0, b), 2 * b)), v1 = merge128(merge64(merge32(h1, b), 2 * b));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(v0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p + b), _mm256_extracti128_si256(v0, 1));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p + 2 * b), _mm256_castsi256_si128(v1));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p + 3 * b), _mm256_extracti128_si256(v1, 1));
}

#endif

// A full block of b bits; needs 16 readable bytes past the 4b packed bytes.
inline void unpack_full_block(const uint8_t* p, unsigned b, uint32_t signs, int32_t* r) {
#if defined(__AVX2__)
  if (b > kMaxUnpackAvx2Bits) return Coders::unpack[b](p, signs, r);
  __m256i v[4];
  unpack32_avx2(p, b, signs, v);
  for (unsigned g = 0; g < 4; ++g) store_q8(r + 8 * g, v[g]);
#else
  Coders::unpack[b](p, signs, r);
#endif
}

// ------------------------------------------------------------------ writing

inline uint8_t* emit_tag(unsigned b, uint32_t exact_mask, bool alt, uint8_t* p) {
  *p = static_cast<uint8_t>(b | (exact_mask ? kTagExact : 0u) | (alt ? kTagAltPredictor : 0u));
  return p + 1;
}

template <class T>
uint8_t* emit_exact(uint32_t exact_mask, const T* x, uint8_t* p) {
  if (exact_mask) {
    store_u32(p, exact_mask);
    p += 4;
    for (uint32_t m = exact_mask; m; m &= m - 1) {
      std::memcpy(p, x + __builtin_ctz(m), sizeof(T));
      p += sizeof(T);
    }
  }
  return p;
}

// Writes one block given its residual magnitudes, sign bits and code length.
template <class T>
uint8_t* emit_block(const uint32_t* mags, uint32_t signs, unsigned b, unsigned n, uint32_t exact_mask, const T* x,
                    bool alt, uint8_t* p) {
  p = emit_tag(b, exact_mask, alt, p);
  if (b) {
    store_u32(p, signs);
    if (n == kBlock) {
      Coders::pack[b](mags, p + 4);
      p += 4 + 4 * b;
    } else {
      p = pack_bits(mags, n, b, p + 4);
    }
  }
  return emit_exact(exact_mask, x, p);
}

// ------------------------------------------------------------------ reading

// One block's header and residuals; advances p. False if the block is malformed.
struct ParsedBlock {
  bool alt = false;
  unsigned b = 0;
  uint32_t exact = 0;
  const uint8_t* exact_src = nullptr;
};

template <class T>
inline bool parse_block(const uint8_t*& p, const uint8_t* end, const uint8_t* buffer_end, unsigned len, int32_t* rb,
                        ParsedBlock& out) {
  const uint32_t valid = len == 32 ? 0xffffffffu : ((1u << len) - 1);
  if (p >= end) return false;
  const unsigned tag = *p++;
  const unsigned b = tag & kTagBitsMask;
  if (b > 32) return false;
  out.alt = (tag & kTagAltPredictor) != 0;
  out.b = b;
  if (b) {
    const size_t payload = (static_cast<size_t>(len) * b + 7) / 8;
    if (static_cast<size_t>(end - p) < 4 + payload) return false;
    const uint32_t signs = load_u32(p);
    if (signs & ~valid) return false;
    p += 4;
    if (static_cast<size_t>(buffer_end - p) >= payload + 16) {
      if (len == kBlock) unpack_full_block(p, b, signs, rb);
      else unpack_bits(p, len, b, signs, rb);
    } else {
      uint8_t pad[kBlock * 4 + 16] = {};
      std::memcpy(pad, p, payload);
      unpack_bits(pad, len, b, signs, rb);
    }
    // Bits past the last value must be zero, so one stream has one meaning.
    if ((static_cast<size_t>(len) * b) % 8) {
      const unsigned used = static_cast<unsigned>((static_cast<size_t>(len) * b) % 8);
      if (p[payload - 1] >> used) return false;
    }
    p += payload;
  } else {
    for (unsigned k = 0; k < len; ++k) rb[k] = 0;
  }
  out.exact = 0;
  out.exact_src = nullptr;
  if (tag & kTagExact) {
    if (end - p < 4) return false;
    const uint32_t mask = load_u32(p);
    p += 4;
    if (mask == 0 || (mask & ~valid)) return false;
    const size_t cnt = static_cast<size_t>(__builtin_popcount(mask));
    if (static_cast<size_t>(end - p) < cnt * sizeof(T)) return false;
    out.exact = mask;
    out.exact_src = p;
    p += cnt * sizeof(T);
  }
  return true;
}

// A block's exact values (mask, and where they are stored) at their positions in v.
template <class T>
inline void copy_exact(uint32_t mask, const uint8_t* src, T* v) {
  for (uint32_t e = mask; e; e &= e - 1, src += sizeof(T)) std::memcpy(v + __builtin_ctz(e), src, sizeof(T));
}

#if defined(__AVX2__)
// emit_block for a full block whose magnitudes are in four vectors.
template <class T>
uint8_t* emit_block_avx2(const __m256i m[4], uint32_t signs, unsigned b, uint32_t exact_mask, const T* x, bool alt,
                         uint8_t* p) {
  p = emit_tag(b, exact_mask, alt, p);
  if (b) {
    store_u32(p, signs);
    if (b <= 16) {
      pack32_avx2(m, b, p + 4);
    } else {
      alignas(32) uint32_t mags[kBlock];
      for (unsigned j = 0; j < 4; ++j) _mm256_store_si256(reinterpret_cast<__m256i*>(mags + 8 * j), m[j]);
      Coders::pack[b](mags, p + 4);
    }
    p += 4 + 4 * b;
  }
  return emit_exact(exact_mask, x, p);
}

// A full block without exact values, read straight from the stream into registers.
struct RegBlock {
  __m256i r[4];
  bool alt = false;
  unsigned b = 0;                 // code length
  const uint8_t* next = nullptr;  // the following block
};

// The block at p if it is full-width-decodable here (b <= 25, no exact values, inside
// [p, end) and with room for unpack32_avx2's wide loads before buffer_end); otherwise
// false, and the caller takes parse_block. Does not advance p. Always inlined: out's
// four vectors then stay in registers (a call spills them, 10% of decoding speed).
[[gnu::always_inline]] inline bool peek_block_avx2(const uint8_t* p, const uint8_t* end, const uint8_t* buffer_end, RegBlock& out) {
  if (p >= end) return false;
  const unsigned tag = *p, b = tag & kTagBitsMask;
  const size_t payload = b ? 4 + 4 * static_cast<size_t>(b) : 0;
  if (b > kMaxUnpackAvx2Bits || (tag & kTagExact) || static_cast<size_t>(end - p) <= payload ||
      static_cast<size_t>(buffer_end - p) < payload + 17)
    return false;
  if (b) {
    unpack32_avx2(p + 5, b, load_u32(p + 1), out.r);
  } else {
    out.r[0] = out.r[1] = out.r[2] = out.r[3] = _mm256_setzero_si256();
  }
  out.alt = (tag & kTagAltPredictor) != 0;
  out.b = b;
  out.next = p + 1 + payload;
  return true;
}
#endif

// A block from its signed residuals. (The shape-aware predictor's blocks come here: a full
// block takes the vector path, as the 1-D encoder's do, for the same bytes.)
template <class T>
uint8_t* encode_block(const int32_t* r, unsigned n, uint32_t exact_mask, const T* x, bool alt, uint8_t* p) {
#if defined(__AVX2__)
  if (n == kBlock) {
    __m256i m[4];
    __m256i any = _mm256_setzero_si256();
    uint32_t signs = 0;
    for (unsigned g = 0; g < 4; ++g) {
      const __m256i v = load_q8(r + 8 * g);
      m[g] = _mm256_abs_epi32(v);  // |INT32_MIN| stays 2^31 unsigned, as magnitude() has it
      any = _mm256_or_si256(any, m[g]);
      signs |= static_cast<uint32_t>(_mm256_movemask_ps(_mm256_castsi256_ps(v))) << (8 * g);
    }
    return emit_block_avx2(m, signs, bit_length(hreduce_or(any)), exact_mask, x, alt, p);
  }
#endif
  uint32_t mags[kBlock];
  uint32_t any = 0, signs = 0;
  for (unsigned i = 0; i < n; ++i) {
    const uint32_t u = static_cast<uint32_t>(r[i]);
    mags[i] = magnitude(u);
    any |= mags[i];
    signs |= (u >> 31) << i;
  }
  return emit_block(mags, signs, bit_length(any), n, exact_mask, x, alt, p);
}

}  // namespace zcoll::fzl::ZCOLL_KERNELS_ISA
