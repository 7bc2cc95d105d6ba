// Block format: a tag (code length b, exact flag, predictor order), the residuals'
// sign word and packed magnitudes, then the exact values' mask and bytes.
#pragma once
#include "codec/kernels/bitpack.h"

namespace zcoll::fzl::ZCOLL_KERNELS_ISA {

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

// A block from its signed residuals.
template <class T>
uint8_t* encode_block(const int32_t* r, unsigned n, uint32_t exact_mask, const T* x, bool alt, uint8_t* p) {
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
// false, and the caller takes parse_block. Does not advance p.
inline bool peek_block_avx2(const uint8_t* p, const uint8_t* end, const uint8_t* buffer_end, RegBlock& out) {
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

}  // namespace zcoll::fzl::ZCOLL_KERNELS_ISA
