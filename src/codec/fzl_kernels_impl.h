// Chunk kernels of the fzl codec, written once and compiled per ISA: each
// fzl_kernels_<isa>.cc includes this file inside its own namespace. Integer
// arithmetic on residuals wraps (uint32), which keeps prediction invertible for any
// |q| < 2^31 and stays linear in q. No standard headers here: the including file
// provides them.

// ------------------------------------------------------------------ helpers

// Callers may pass buffers at any byte offset, so scalar element access goes through
// memcpy (one plain load or store once compiled).
template <class T>
inline T load_elem(const T* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T>
inline void store_elem(T* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

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

// Bound on |q| over a full 1-D block that follows the state (q1 = last integer, d1 = last
// first difference) and whose residuals have at most b bits: first order
// |q1| + 32 m, second order |q1| + 32 |d1| + (1 + 2 + ... + 32) m, m = 2^b - 1.
inline uint64_t integer_reach(uint32_t q1, uint32_t d1, bool alt, unsigned b) {
  const uint64_t m = (uint64_t{1} << b) - 1;
  return alt ? abs_i32(q1) + kBlock * abs_i32(d1) + 528 * m : abs_i32(q1) + kBlock * m;
}

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
inline constexpr float kFloatExactInt = 16777216.0f;  // 2^24

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

// The block's integers stay in registers (qv), so the encoder can predict from them
// without reloading what it has just stored.
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
      if (g.twoeb_f32 > 0) {  // single precision first (see quantize_value)
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

// Quantizes one block of up to 32 values; returns the mask of values that must be
// stored exactly (their q is left 0 here; see fill_block_placeholders).
template <class T>
inline uint32_t quantize_block(const T* x, unsigned len, const ChunkGeometry& g, int32_t* q) {
#if defined(__AVX2__)
  if (len == kBlock) {
    __m256i qv[4];
    const uint32_t mask = quantize_block_avx2(x, g, qv);
    for (unsigned j = 0; j < 4; ++j) _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + 8 * j), qv[j]);
    return mask;
  }
#endif
  uint32_t mask = 0;
  for (unsigned k = 0; k < len; ++k) {
    int32_t qk = 0;
    if (!quantize_value(load_elem(x + k), g, qk)) mask |= 1u << k;
    q[k] = qk;
  }
  return mask;
}

// Values stored exactly get the placeholder q[i] = q[i-1] (0 at the chunk start),
// which keeps the prediction chain linear in q.
inline void fill_block_placeholders(int32_t* q, size_t i, uint32_t mask) {
  for (uint32_t m = mask; m; m &= m - 1) {
    const size_t k = i + static_cast<size_t>(__builtin_ctz(m));
    q[k] = k ? q[k - 1] : 0;
  }
}

// -------------------------------------------------- shape-aware prediction
//
// Lorenzo over the dimensions in which the neighbours exist: a dimension counts
// when the coordinate is > 0 and the whole Lorenzo cube lies inside the chunk;
// otherwise the slowest dimension is dropped first. So a chunk never looks outside
// itself, and the first rows or planes of a chunk fall back to lower-order Lorenzo.

struct LorenzoTerms {
  size_t count = 0;
  size_t off[7];
  int sign[7];
};

struct NdPredictor {
  int nd;                 // number of dims, fastest first in s[] and e[]
  size_t s[3], e[3];      // strides and extents, fastest first
  size_t c[3];            // coordinates of the current element
  size_t reach[8];        // sum of strides of each subset
  LorenzoTerms terms[8];

  NdPredictor(const ChunkGeometry& g, size_t begin) {
    nd = g.ndims;
    for (int d = 0; d < nd; ++d) {
      e[d] = g.extent[nd - 1 - d];
      s[d] = d == 0 ? 1 : s[d - 1] * e[d - 1];
    }
    size_t rest = begin;
    for (int d = 0; d < nd; ++d) { c[d] = rest % e[d]; rest /= e[d]; }
    for (unsigned m = 0; m < (1u << nd); ++m) {
      reach[m] = 0;
      for (int d = 0; d < nd; ++d) if (m & (1u << d)) reach[m] += s[d];
      LorenzoTerms& t = terms[m];
      for (unsigned sub = m; sub; sub = (sub - 1) & m) {
        t.off[t.count] = reach[sub];
        t.sign[t.count] = (__builtin_popcount(sub) & 1) ? 1 : -1;
        ++t.count;
      }
    }
  }
  // Prediction for chunk-relative element i; advances the coordinates.
  uint32_t next(const int32_t* q, size_t i) {
    unsigned m = 0;
    for (int d = 0; d < nd; ++d) if (c[d] > 0) m |= 1u << d;
    while (m && reach[m] > i) m &= ~(1u << (31 - __builtin_clz(m)));
    const LorenzoTerms& t = terms[m];
    uint32_t p = 0;
    for (size_t k = 0; k < t.count; ++k)
      p += static_cast<uint32_t>(t.sign[k]) * static_cast<uint32_t>(q[i - t.off[k]]);
    for (int d = 0; d < nd; ++d) {
      if (++c[d] < e[d]) break;
      c[d] = 0;
    }
    return p;
  }
};

// ------------------------------------------------------------- bit packing

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

inline void unpack32_avx2(const uint8_t* p, unsigned b, uint32_t signs, __m256i r[4]) {
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
  if (b > 25 || (tag & kTagExact) || static_cast<size_t>(end - p) <= payload ||
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

// ------------------------------------------------------------------ encode

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

#if defined(__AVX2__)
// Packs 32 magnitudes of b <= 16 bits, held in four vectors, into pack32<b>'s layout
// (value i at bits [i*b, i*b+b)). Neighbouring fields merge pairwise, doubling their
// width each step, so there is no per-value shift. Writes up to 8 bytes past the 4b
// bytes, which a block's worst-case size leaves room for.
inline void pack32_avx2(const __m256i m[4], unsigned b, uint8_t* p) {
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
#endif

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

#if defined(__AVX2__)
inline uint32_t hreduce_add(__m256i v) {
  __m128i t = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0x4e));
  t = _mm_add_epi32(t, _mm_shuffle_epi32(t, 0xb1));
  return static_cast<uint32_t>(_mm_cvtsi128_si32(t));
}
inline uint32_t hreduce_or(__m256i v) {
  __m128i t = _mm_or_si128(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  t = _mm_or_si128(t, _mm_shuffle_epi32(t, 0x4e));
  t = _mm_or_si128(t, _mm_shuffle_epi32(t, 0xb1));
  return static_cast<uint32_t>(_mm_cvtsi128_si32(t));
}

// The 8 lanes of cur moved up by one (two) lanes, the last lane(s) of prev shifted in.
inline __m256i lag1(__m256i cur, __m256i prev) {
  return _mm256_alignr_epi8(cur, _mm256_permute2x128_si256(prev, cur, 0x21), 12);
}
inline __m256i lag2(__m256i cur, __m256i prev) {
  return _mm256_alignr_epi8(cur, _mm256_permute2x128_si256(prev, cur, 0x21), 8);
}

// A full 1-D block of integers qv (prev: the 8 integers before it): first and second
// differences, their magnitudes and signs in one pass, all in registers; emits
// whichever order needs fewer bits.
template <class T>
uint8_t* encode_block_1d_avx2(const __m256i qv[4], __m256i prev, uint32_t exact_mask, const T* x, uint8_t* p) {
  __m256i m1[4], m2[4];
  uint32_t s1 = 0, s2 = 0;
  __m256i o1 = _mm256_setzero_si256(), o2 = _mm256_setzero_si256();
  for (unsigned g = 0; g < 4; ++g) {
    const __m256i a = qv[g];
    const __m256i b = lag1(a, prev), c = lag2(a, prev);  // q[i-1], q[i-2]
    prev = a;
    const __m256i d1 = _mm256_sub_epi32(a, b);
    const __m256i d2 = _mm256_sub_epi32(d1, _mm256_sub_epi32(b, c));
    m1[g] = _mm256_abs_epi32(d1);  // |INT32_MIN| stays 2^31 unsigned
    m2[g] = _mm256_abs_epi32(d2);
    o1 = _mm256_or_si256(o1, m1[g]);
    o2 = _mm256_or_si256(o2, m2[g]);
    s1 |= static_cast<uint32_t>(_mm256_movemask_ps(_mm256_castsi256_ps(d1))) << (8 * g);
    s2 |= static_cast<uint32_t>(_mm256_movemask_ps(_mm256_castsi256_ps(d2))) << (8 * g);
  }
  const unsigned b1 = bit_length(hreduce_or(o1)), b2 = bit_length(hreduce_or(o2));
  return b2 < b1 ? emit_block_avx2(m2, s2, b2, exact_mask, x, true, p)
                 : emit_block_avx2(m1, s1, b1, exact_mask, x, false, p);
}

inline __m256i load_q8(const int32_t* q) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q)); }
#endif

// One 1-D block of quantized integers (q[-1], q[-2] readable): first- or second-order
// differences, whichever needs fewer bits. x supplies the values at exact positions.
template <class T>
inline uint8_t* encode_block_1d(const int32_t* q, unsigned len, uint32_t mask, const T* x, uint8_t* p) {
#if defined(__AVX2__)
  if (len == kBlock) {
    const __m256i qv[4] = {load_q8(q), load_q8(q + 8), load_q8(q + 16), load_q8(q + 24)};
    return encode_block_1d_avx2(qv, _mm256_setr_epi32(0, 0, 0, 0, 0, 0, q[-2], q[-1]), mask, x, p);
  }
#endif
  int32_t r1[kBlock], r2[kBlock];
  const uint32_t* qu = reinterpret_cast<const uint32_t*>(q);
  uint32_t any1 = 0, any2 = 0;
  for (unsigned k = 0; k < len; ++k) {
    const uint32_t a = qu[k] - qu[static_cast<ptrdiff_t>(k) - 1];
    const uint32_t c = a - (qu[static_cast<ptrdiff_t>(k) - 1] - qu[static_cast<ptrdiff_t>(k) - 2]);
    r1[k] = static_cast<int32_t>(a);
    r2[k] = static_cast<int32_t>(c);
    any1 |= magnitude(a);
    any2 |= magnitude(c);
  }
  const bool alt = bit_length(any2) < bit_length(any1);
  return encode_block(alt ? r2 : r1, len, mask, x, alt, p);
}

// Shape-aware residuals of a whole chunk of integers (placeholders already in q), then
// the blocks. masks[b]: exact positions of block b; x: values there.
template <class T>
size_t encode_nd_from_q(const int32_t* q, const uint32_t* masks, const T* x, size_t n, size_t begin,
                        const ChunkGeometry& g, ChunkScratch& s, uint8_t* out) {
  int32_t* r = s.r;
  uint8_t* p = out;
  NdPredictor pred(g, begin);
  for (size_t i = 0; i < n; ++i) r[i] = static_cast<int32_t>(static_cast<uint32_t>(q[i]) - pred.next(q, i));
  for (size_t i = 0; i < n; i += kBlock) {
    const unsigned len = static_cast<unsigned>(n - i < kBlock ? n - i : kBlock);
    p = encode_block(r + i, len, masks[i / kBlock], x + i, false, p);
  }
  return static_cast<size_t>(p - out);
}

template <class T>
size_t encode_chunk(const T* x, size_t n, size_t begin, const ChunkGeometry& g, ChunkScratch& s,
                    uint8_t* out) {
  int32_t* q = s.q;
  if (g.ndims > 1) {
    for (size_t i = 0; i < n; i += kBlock) {
      const unsigned len = static_cast<unsigned>(n - i < kBlock ? n - i : kBlock);
      s.exact[i / kBlock] = quantize_block(x + i, len, g, q + i);
      fill_block_placeholders(q, i, s.exact[i / kBlock]);
    }
    return encode_nd_from_q(q, s.exact, x, n, begin, g, s, out);
  }
  // 1-D, one block at a time while it is in L1. q[-1] and q[-2] read as 0 (padding).
  uint8_t* p = out;
  size_t i = 0;
#if defined(__AVX2__)
  // Full blocks without exact values never touch q in memory except to leave it for
  // the blocks that do (their placeholders read q[i-1]).
  __m256i prev = _mm256_setzero_si256();
  for (; i + kBlock <= n; i += kBlock) {
    __m256i qv[4];
    const uint32_t mask = quantize_block_avx2(x + i, g, qv);
    for (unsigned j = 0; j < 4; ++j) _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + i + 8 * j), qv[j]);
    if (mask) {
      fill_block_placeholders(q, i, mask);
      for (unsigned j = 0; j < 4; ++j) qv[j] = load_q8(q + i + 8 * j);
    }
    p = encode_block_1d_avx2(qv, prev, mask, x + i, p);
    prev = qv[3];
  }
#endif
  for (; i < n; i += kBlock) {
    const unsigned len = static_cast<unsigned>(n - i < kBlock ? n - i : kBlock);
    const uint32_t mask = quantize_block(x + i, len, g, q + i);
    if (mask) fill_block_placeholders(q, i, mask);
    p = encode_block_1d(q + i, len, mask, x + i, p);
  }
  return static_cast<size_t>(p - out);
}

// ------------------------------------------------------------------ decode

// Rebuilds one 1-D block from its residuals and writes the values. q1 and d1 carry
// q[i-1] and q[i-1] - q[i-2] from block to block.
// With Out = int32_t the integers themselves are written (for homomorphic combination).
#if defined(__AVX2__)
// A full block whose residuals are in four vectors.
template <class Out>
inline void rebuild_block_avx2(const __m256i rv[4], bool alt, unsigned b, uint32_t& q1, uint32_t& d1,
                               const ChunkGeometry& geo, Out* out) {
  constexpr bool kToQ = std::is_same<Out, int32_t>::value;
  // When every |q| of the block is at most 2^24 (bounded from the state and the code
  // length b, see integer_reach), float(q) is exact and one float multiplication gives
  // the grid value.
  const bool f32_grid = sizeof(Out) == 4 && !kToQ && geo.twoeb_f32 > 0 &&
                        integer_reach(q1, d1, alt, b) <= static_cast<uint64_t>(kFloatExactInt);
  auto prefix8 = [](__m256i v) {
    v = _mm256_add_epi32(v, _mm256_slli_si256(v, 4));
    v = _mm256_add_epi32(v, _mm256_slli_si256(v, 8));
    __m256i t = _mm256_shuffle_epi32(v, 0xff);
    return _mm256_add_epi32(v, _mm256_permute2x128_si256(t, t, 0x08));
  };
  const __m256i last = _mm256_set1_epi32(7);
  const __m256d scale = _mm256_set1_pd(geo.twoeb);
  __m256i qc = _mm256_set1_epi32(static_cast<int>(q1)), dc = _mm256_set1_epi32(static_cast<int>(d1));
  for (unsigned g = 0; g < 4; ++g) {
    __m256i v = rv[g];
    if (alt) {
      v = _mm256_add_epi32(prefix8(v), dc);
      dc = _mm256_permutevar8x32_epi32(v, last);
    }
    const __m256i q = _mm256_add_epi32(prefix8(v), qc);
    qc = _mm256_permutevar8x32_epi32(q, last);
    if constexpr (kToQ) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8 * g), q);
      continue;
    }
    if constexpr (sizeof(Out) == 4) {
      if (f32_grid) {
        _mm256_storeu_ps(reinterpret_cast<float*>(out) + 8 * g,
                         _mm256_mul_ps(_mm256_cvtepi32_ps(q), _mm256_set1_ps(geo.twoeb_f32)));
        continue;
      }
    }
    const __m256d lo = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(q)), scale);
    const __m256d hi = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(q, 1)), scale);
    if constexpr (sizeof(Out) == 4) {
      _mm256_storeu_ps(reinterpret_cast<float*>(out) + 8 * g,
                       _mm256_setr_m128(_mm256_cvtpd_ps(lo), _mm256_cvtpd_ps(hi)));
    } else {
      _mm256_storeu_pd(reinterpret_cast<double*>(out) + 8 * g, lo);
      _mm256_storeu_pd(reinterpret_cast<double*>(out) + 8 * g + 4, hi);
    }
  }
  q1 = static_cast<uint32_t>(_mm256_cvtsi256_si32(qc));
  d1 = alt ? static_cast<uint32_t>(_mm256_cvtsi256_si32(dc)) : static_cast<uint32_t>(_mm256_extract_epi32(rv[3], 7));
}
#endif

template <class Out>
inline void rebuild_block(const int32_t* rb, unsigned len, bool alt, unsigned b, uint32_t& q1, uint32_t& d1,
                          const ChunkGeometry& geo, Out* out) {
  constexpr bool kToQ = std::is_same<Out, int32_t>::value;
  (void)b;
#if defined(__AVX2__)
  if (len == kBlock) {
    const __m256i rv[4] = {load_q8(rb), load_q8(rb + 8), load_q8(rb + 16), load_q8(rb + 24)};
    rebuild_block_avx2(rv, alt, b, q1, d1, geo, out);
    return;
  }
#endif
  for (unsigned k = 0; k < len; ++k) {
    if (alt) {
      d1 += static_cast<uint32_t>(rb[k]);
    } else {
      d1 = static_cast<uint32_t>(rb[k]);
    }
    q1 += d1;
    if constexpr (kToQ) out[k] = static_cast<int32_t>(q1);
    else store_elem(out + k, dequantize_value<Out>(static_cast<int32_t>(q1), geo.twoeb));
  }
}

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
      if (len == kBlock) {
#if defined(__AVX2__)
        if (b <= 25) {
          __m256i v[4];
          unpack32_avx2(p, b, signs, v);
          for (unsigned g = 0; g < 4; ++g) _mm256_storeu_si256(reinterpret_cast<__m256i*>(rb + 8 * g), v[g]);
        } else
#endif
        Coders::unpack[b](p, signs, rb);
      } else {
        unpack_bits(p, len, b, signs, rb);
      }
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

// Decodes a chunk into values (qout == nullptr) or into integers: then qout receives q
// (placeholders at exact positions), out only the exactly stored values, and
// s.exact[] the exact masks.
template <class T>
bool decode_chunk(const uint8_t* in, size_t bytes, const uint8_t* buffer_end, size_t n, size_t begin,
                  const ChunkGeometry& g, ChunkScratch& s, T* out, int32_t* qout = nullptr) {
  const uint8_t* p = in;
  const uint8_t* const end = in + bytes;
  int32_t* r = s.r;
  const size_t nblocks = (n + kBlock - 1) / kBlock;
  uint32_t q1 = 0, d1 = 0;
  int32_t* q = qout ? qout : s.q;
  for (size_t blk = 0; blk < nblocks; ++blk) {
    const size_t i = blk * kBlock;
#if defined(__AVX2__)
    // The common 1-D block (full, no exact values, b <= 25, room for the wide loads)
    // goes from the stream to values in registers; any other takes parse_block.
    RegBlock rbk;
    if (g.ndims == 1 && !qout && n - i >= kBlock && peek_block_avx2(p, end, buffer_end, rbk)) {
      rebuild_block_avx2(rbk.r, rbk.alt, rbk.b, q1, d1, g, out + i);
      p = rbk.next;
      s.exact[blk] = 0;
      continue;
    }
#endif
    const unsigned len = static_cast<unsigned>(n - i < kBlock ? n - i : kBlock);
    ParsedBlock pb;
    if (!parse_block<T>(p, end, buffer_end, len, r + i, pb)) return false;
    if (pb.alt && g.ndims > 1) return false;
    s.exact[blk] = pb.exact;
    s.exact_src[blk] = pb.exact_src;
    const bool is_alt = pb.alt;
    int32_t* rb = r + i;
    if (g.ndims == 1) {
      if (qout) rebuild_block(rb, len, is_alt, pb.b, q1, d1, g, qout + i);
      else rebuild_block(rb, len, is_alt, pb.b, q1, d1, g, out + i);
    }
  }
  if (p != end) return false;
  if (g.ndims > 1) {
    NdPredictor pred(g, begin);
    for (size_t i = 0; i < n; ++i)
      q[i] = static_cast<int32_t>(static_cast<uint32_t>(r[i]) + pred.next(q, i));
    const double twoeb = g.twoeb;
    if (!qout)
      for (size_t i = 0; i < n; ++i) store_elem(out + i, dequantize_value<T>(q[i], twoeb));
  }
  for (size_t blk = 0; blk < nblocks; ++blk) {
    const uint8_t* src = s.exact_src[blk];
    for (uint32_t m = s.exact[blk]; m; m &= m - 1) {
      std::memcpy(out + blk * kBlock + __builtin_ctz(m), src, sizeof(T));
      src += sizeof(T);
    }
  }
  return true;
}

// ------------------------------------------------- homomorphic combination
//
// Both chunks are decoded to integers (no dequantization), combined position by
// position, and the result is encoded like a fresh chunk. A position becomes exact
// (stored as a value) when it cannot stay on the integer grid: an exact value on
// either side for SUM, or a sum outside the quantizer's range, checked before it is
// stored. For MIN/MAX a position stays an integer whenever the winning side is one.

// Chunk a or b: its integers into q (padded like ChunkScratch::q), exact masks into
// masks[], exact values into vals. A raw chunk is all exact.
template <class T>
bool decode_operand(const ChunkRef& c, size_t n, size_t begin, const ChunkGeometry& g, ChunkScratch& s,
                    int32_t* q, uint32_t* masks, T* vals) {
  const size_t nblocks = (n + kBlock - 1) / kBlock;
  if (c.raw) {
    std::memcpy(vals, c.p, n * sizeof(T));
    for (size_t b = 0; b < nblocks; ++b) {
      const size_t len = n - b * kBlock < kBlock ? n - b * kBlock : kBlock;
      masks[b] = len == kBlock ? 0xffffffffu : ((1u << len) - 1);
    }
    std::memset(q, 0, n * sizeof(int32_t));
    return true;
  }
  if (!decode_chunk<T>(c.p, c.bytes, c.end, n, begin, g, s, vals, q)) return false;
  if (masks != s.exact) std::memcpy(masks, s.exact, nblocks * sizeof(uint32_t));
  return true;
}

// Sum of the integers of one block into qa; returns the positions whose sum left the
// quantizer's range (|qa|, |qb| <= 2^30 - 1, so the int32 sum itself cannot overflow).
inline uint32_t add_block(int32_t* qa, const int32_t* qb, unsigned len) {
  uint32_t over = 0;
#if defined(__AVX2__)
  if (len == kBlock) {
    const __m256i lim = _mm256_set1_epi32(static_cast<int>(kQuantLimit));
    for (unsigned j = 0; j < kBlock; j += 8) {
      const __m256i v = _mm256_add_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qa + j)),
                                         _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qb + j)));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(qa + j), v);
      const __m256i big = _mm256_cmpgt_epi32(_mm256_abs_epi32(v), lim);
      over |= static_cast<uint32_t>(_mm256_movemask_ps(_mm256_castsi256_ps(big))) << j;
    }
    return over;
  }
#endif
  for (unsigned k = 0; k < len; ++k) {
    const int32_t v = qa[k] + qb[k];
    qa[k] = v;
    if (v > static_cast<int32_t>(kQuantLimit) || v < -static_cast<int32_t>(kQuantLimit)) over |= 1u << k;
  }
  return over;
}

template <bool kMax>
inline void minmax_block(int32_t* qa, const int32_t* qb, unsigned len) {
#if defined(__AVX2__)
  if (len == kBlock) {
    for (unsigned j = 0; j < kBlock; j += 8) {
      const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qa + j));
      const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qb + j));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(qa + j), kMax ? _mm256_max_epi32(a, b) : _mm256_min_epi32(a, b));
    }
    return;
  }
#endif
  for (unsigned k = 0; k < len; ++k) qa[k] = kMax ? (qb[k] > qa[k] ? qb[k] : qa[k]) : (qb[k] < qa[k] ? qb[k] : qa[k]);
}

// One block: qa/va/ma become the result (integers, exact values, exact mask).
template <class T>
inline uint32_t combine_block(int op, int32_t* qa, const int32_t* qb, uint32_t ma, uint32_t mb, T* va, const T* vb,
                              unsigned len, double twoeb) {
  uint32_t m = ma | mb;
  if (op == kCombineSum) {
    // Values at exact positions first, while qa still holds a's integers.
    for (uint32_t e = m; e; e &= e - 1) {
      const unsigned k = static_cast<unsigned>(__builtin_ctz(e));
      const T a = (ma >> k) & 1u ? load_elem(va + k) : dequantize_value<T>(qa[k], twoeb);
      const T b = (mb >> k) & 1u ? load_elem(vb + k) : dequantize_value<T>(qb[k], twoeb);
      store_elem(va + k, static_cast<T>(a + b));
    }
    const uint32_t over = add_block(qa, qb, len) & ~m;
    for (uint32_t e = over; e; e &= e - 1) {
      const unsigned k = static_cast<unsigned>(__builtin_ctz(e));
      store_elem(va + k, dequantize_value<T>(qa[k], twoeb));  // the exact int32 sum, rounded once
    }
    return m | over;
  }
  const bool is_max = op == kCombineMax;
  // Mixed positions: the winner's value; it stays an integer if the winner is one (on a
  // tie the integer side wins, so the result does not depend on the operand order).
  uint32_t keep_exact = 0;
  int32_t qwin[kBlock];
  for (uint32_t e = m; e; e &= e - 1) {
    const unsigned k = static_cast<unsigned>(__builtin_ctz(e));
    const bool ea = (ma >> k) & 1u, eb = (mb >> k) & 1u;
    const T a = ea ? load_elem(va + k) : dequantize_value<T>(qa[k], twoeb);
    const T b = eb ? load_elem(vb + k) : dequantize_value<T>(qb[k], twoeb);
    bool take_b;
    if (a != a || b != b) take_b = a == a;  // NaN wins
    else if (a == b) take_b = ea && !eb;
    else take_b = is_max ? b > a : b < a;
    const bool win_exact = take_b ? eb : ea;
    if (win_exact) {
      keep_exact |= 1u << k;
      store_elem(va + k, take_b ? b : a);
    } else {
      qwin[k] = take_b ? qb[k] : qa[k];
    }
  }
  if (is_max) minmax_block<true>(qa, qb, len);
  else minmax_block<false>(qa, qb, len);
  for (uint32_t e = m & ~keep_exact; e; e &= e - 1) {
    const unsigned k = static_cast<unsigned>(__builtin_ctz(e));
    qa[k] = qwin[k];
  }
  return keep_exact;
}

#if defined(__AVX2__)
// The state update of advance_state for a full block: sum = r_0 + ... + r_31 and
// weighted = 32 r_0 + 31 r_1 + ... + 1 r_31.
inline void advance_by_sums(uint32_t sum, uint32_t weighted, uint32_t last, bool alt, uint32_t& q1, uint32_t& d1) {
  if (alt) {  // d_k = d1 + r_0 + ... + r_k;  q_end = q1 + sum of d_k
    q1 += kBlock * d1 + weighted;
    d1 += sum;
  } else {
    q1 += sum;
    d1 = last;
  }
}

// (weighted only for second-order blocks, the only ones that use it)
inline void block_sums_avx2(const __m256i r[4], bool alt, uint32_t& sum, uint32_t& weighted) {
  __m256i vs = _mm256_add_epi32(_mm256_add_epi32(r[0], r[1]), _mm256_add_epi32(r[2], r[3]));
  sum = hreduce_add(vs);
  weighted = 0;
  if (alt) {
    __m256i vw = _mm256_setzero_si256();
    __m256i w = _mm256_setr_epi32(32, 31, 30, 29, 28, 27, 26, 25);
    for (unsigned g = 0; g < 4; ++g) {
      vw = _mm256_add_epi32(vw, _mm256_mullo_epi32(r[g], w));
      w = _mm256_sub_epi32(w, _mm256_set1_epi32(8));
    }
    weighted = hreduce_add(vw);
  }
}

// SUM of two full blocks on the linear path (see combine_chunk_1d): the result's
// residuals are the operands' residuals added. Mixed predictors: second-order
// residuals are differences of first-order ones (the first against the state's last
// difference), so the first-order side converts and the sum is second order. Emits the
// block and advances the three states; false (nothing written) when the result's
// integers could leave the quantizer's range.
template <class T>
bool sum_blocks_avx2(const RegBlock& A, const RegBlock& B, uint32_t& q1, uint32_t& d1, uint32_t& qa1, uint32_t& da1,
                     uint32_t& qb1, uint32_t& db1, uint8_t*& p) {
  const bool alt = A.alt || B.alt;
  __m256i conv[4];
  const __m256i* xa = A.r;
  const __m256i* xb = B.r;
  if (A.alt != B.alt) {
    const __m256i* first = A.alt ? B.r : A.r;
    __m256i prev = _mm256_set1_epi32(static_cast<int>(A.alt ? db1 : da1));
    for (unsigned g = 0; g < 4; ++g) {
      conv[g] = _mm256_sub_epi32(first[g], lag1(first[g], prev));
      prev = first[g];
    }
    (A.alt ? xb : xa) = conv;
  }
  __m256i u[4], mags[4];
  __m256i o = _mm256_setzero_si256();
  uint32_t signs = 0;
  for (unsigned g = 0; g < 4; ++g) {
    u[g] = _mm256_add_epi32(xa[g], xb[g]);
    mags[g] = _mm256_abs_epi32(u[g]);
    o = _mm256_or_si256(o, mags[g]);
    signs |= static_cast<uint32_t>(_mm256_movemask_ps(_mm256_castsi256_ps(u[g]))) << (8 * g);
  }
  const unsigned bits = bit_length(hreduce_or(o));
  if (integer_reach(q1, d1, alt, bits) > static_cast<uint64_t>(kQuantLimit)) return false;
  p = emit_block_avx2(mags, signs, bits, 0u, static_cast<const T*>(nullptr), alt, p);
  uint32_t sum, weighted;
  block_sums_avx2(u, alt, sum, weighted);
  advance_by_sums(sum, weighted, static_cast<uint32_t>(_mm256_extract_epi32(u[3], 7)), alt, q1, d1);
  // The result's integers are a's plus b's here, so b's state follows from the other two.
  block_sums_avx2(A.r, A.alt, sum, weighted);
  advance_by_sums(sum, weighted, static_cast<uint32_t>(_mm256_extract_epi32(A.r[3], 7)), A.alt, qa1, da1);
  qb1 = q1 - qa1;
  db1 = d1 - da1;
  return true;
}
#endif

// The 1-D state after a block: q1 = last integer, d1 = last first difference.
inline void advance_state(const int32_t* r, unsigned len, bool alt, uint32_t& q1, uint32_t& d1) {
  uint32_t sum = 0, weighted = 0;
  for (unsigned k = 0; k < len; ++k) {
    sum += static_cast<uint32_t>(r[k]);
    weighted += static_cast<uint32_t>(len - k) * static_cast<uint32_t>(r[k]);
  }
  if (alt) {  // d_k = d1 + r_0 + ... + r_k;  q_end = q1 + sum of d_k
    q1 += len * d1 + weighted;
    d1 += sum;
  } else {
    q1 += sum;
    d1 = static_cast<uint32_t>(r[len - 1]);
  }
}

// 1-D chunks, block by block without materialising the chunk's integers. Where both
// blocks of a SUM use the same predictor and hold no exact values, prediction is linear,
// so the result's residuals are the sum of the operands' residuals: no prefix sums and
// no re-prediction. The integers' range is bounded from the state and the residual
// magnitudes; only when that bound could pass the quantizer's limit, or a block has
// exact values or mixed predictors, is the block rebuilt and combined value by value.
// Returns 0 for a malformed chunk and SIZE_MAX when the result would not be smaller
// than raw (the caller then takes the general path, which writes raw values).
template <class T>
size_t combine_chunk_1d(int op, const ChunkRef& a, const ChunkRef& b, size_t n, const ChunkGeometry& g,
                        uint8_t* out) {
  const uint8_t *pa = a.p, *pb = b.p;
  const uint8_t *ea = a.p + a.bytes, *eb = b.p + b.bytes;
  uint32_t qa1 = 0, da1 = 0, qb1 = 0, db1 = 0;  // operands' states
  uint32_t q1 = 0, d1 = 0;                      // the result's
  uint8_t* p = out;
  const size_t raw_bytes = n * sizeof(T);
  alignas(32) int32_t ra[kBlock], rb[kBlock];
  alignas(32) int32_t qa[kBlock], qb[kBlock + 2];
  int32_t res[kBlock + 2];
  T va[kBlock], vb[kBlock];
  for (size_t i = 0; i < n; i += kBlock) {
    const unsigned len = static_cast<unsigned>(n - i < kBlock ? n - i : kBlock);
    const bool linear = q1 == qa1 + qb1 && d1 == da1 + db1;
    bool sum_tried = false;  // the linear sum was tried and its range check failed
#if defined(__AVX2__)
    if (op == kCombineSum && len == kBlock && linear) {  // from the streams to the sum in registers
      RegBlock fa, fb;
      if (peek_block_avx2(pa, ea, a.end, fa) && peek_block_avx2(pb, eb, b.end, fb)) {
        if (sum_blocks_avx2<T>(fa, fb, q1, d1, qa1, da1, qb1, db1, p)) {
          pa = fa.next;
          pb = fb.next;
          if (static_cast<size_t>(p - out) >= raw_bytes) return SIZE_MAX;
          continue;
        }
        sum_tried = true;
      }
    }
#endif
    ParsedBlock ba, bb;
    if (!parse_block<T>(pa, ea, a.end, len, ra, ba) || !parse_block<T>(pb, eb, b.end, len, rb, bb)) return 0;
    if (op == kCombineSum && len == kBlock && !(ba.exact | bb.exact) && linear && !sum_tried) {
#if defined(__AVX2__)
      RegBlock fa, fb;
      fa.alt = ba.alt;
      fb.alt = bb.alt;
      for (unsigned j = 0; j < 4; ++j) {
        fa.r[j] = load_q8(ra + 8 * j);
        fb.r[j] = load_q8(rb + 8 * j);
      }
      if (sum_blocks_avx2<T>(fa, fb, q1, d1, qa1, da1, qb1, db1, p)) {
        if (static_cast<size_t>(p - out) >= raw_bytes) return SIZE_MAX;
        continue;
      }
#else
      // Mixed predictors: second-order residuals are differences of first-order ones
      // (the first against the state's last difference), so the first-order side
      // converts cheaply and the sum is second order.
      const bool alt = ba.alt || bb.alt;
      int32_t conv[kBlock];
      const int32_t* xa = ra;
      const int32_t* xb = rb;
      if (ba.alt != bb.alt) {
        int32_t shifted[kBlock + 1];  // the first-order residuals, after the state's difference
        shifted[0] = static_cast<int32_t>(ba.alt ? db1 : da1);
        std::memcpy(shifted + 1, ba.alt ? rb : ra, sizeof(int32_t) * kBlock);
        for (unsigned k = 0; k < kBlock; ++k)
          conv[k] = static_cast<int32_t>(static_cast<uint32_t>(shifted[k + 1]) - static_cast<uint32_t>(shifted[k]));
        (ba.alt ? xb : xa) = conv;
      }
      // The summed residuals' magnitudes and signs, and the sums that advance the
      // result's state (see advance_state), in one pass.
      uint32_t any = 0, signs = 0, sum = 0, weighted = 0;
      uint32_t mags[kBlock];
      for (unsigned k = 0; k < kBlock; ++k) {
        const uint32_t u = static_cast<uint32_t>(xa[k]) + static_cast<uint32_t>(xb[k]);
        mags[k] = magnitude(u);
        any |= mags[k];
        signs |= (u >> 31) << k;
        sum += u;
        weighted += (kBlock - k) * u;
      }
      const uint32_t last = (signs >> 31) ? 0u - mags[kBlock - 1] : mags[kBlock - 1];
      const unsigned bits = bit_length(any);
      if (integer_reach(q1, d1, alt, bits) <= static_cast<uint64_t>(kQuantLimit)) {
        p = emit_block(mags, signs, bits, kBlock, 0u, static_cast<const T*>(nullptr), alt, p);
        if (alt) {
          q1 += kBlock * d1 + weighted;
          d1 += sum;
        } else {
          q1 += sum;
          d1 = last;
        }
        // The result's integers are a's plus b's here, so b's state follows from the other two.
        advance_state(ra, kBlock, ba.alt, qa1, da1);
        qb1 = q1 - qa1;
        db1 = d1 - da1;
        if (static_cast<size_t>(p - out) >= raw_bytes) return SIZE_MAX;
        continue;
      }
#endif
    }
    // Value by value: rebuild both blocks' integers, combine, re-predict.
    rebuild_block(ra, len, ba.alt, ba.b, qa1, da1, g, qa);
    rebuild_block(rb, len, bb.alt, bb.b, qb1, db1, g, qb);
    for (uint32_t e = ba.exact, j = 0; e; e &= e - 1, ++j)
      std::memcpy(va + __builtin_ctz(e), ba.exact_src + j * sizeof(T), sizeof(T));
    for (uint32_t e = bb.exact, j = 0; e; e &= e - 1, ++j)
      std::memcpy(vb + __builtin_ctz(e), bb.exact_src + j * sizeof(T), sizeof(T));
    const uint32_t mask = combine_block(op, qa, qb, ba.exact, bb.exact, va, vb, len, g.twoeb);
    res[0] = static_cast<int32_t>(q1 - d1);
    res[1] = static_cast<int32_t>(q1);
    std::memcpy(res + 2, qa, len * sizeof(int32_t));
    for (uint32_t e = mask; e; e &= e - 1) {
      const unsigned k = static_cast<unsigned>(__builtin_ctz(e));
      res[2 + k] = (i == 0 && k == 0) ? 0 : res[1 + k];
    }
    p = encode_block_1d(res + 2, len, mask, va, p);
    q1 = static_cast<uint32_t>(res[1 + len]);
    d1 = q1 - static_cast<uint32_t>(res[len]);
    if (static_cast<size_t>(p - out) >= raw_bytes) return SIZE_MAX;
  }
  if (pa != ea || pb != eb) return 0;
  return static_cast<size_t>(p - out);
}

// Both operands decoded: s.q and s.exact hold a's integers and exact masks, s.qb and
// s.exact_b b's, va and vb the values at exact positions. Combines block by block and
// encodes the result; raw values when encoding would not be smaller (*raw set).
template <class T>
size_t combine_decoded(int op, size_t n, size_t begin, const ChunkGeometry& g, ChunkScratch& s, T* va, const T* vb,
                       uint8_t* out, bool* raw) {
  int32_t* q = s.q;
  uint8_t* p = out;
  for (size_t i = 0; i < n; i += kBlock) {
    const unsigned len = static_cast<unsigned>(n - i < kBlock ? n - i : kBlock);
    const size_t blk = i / kBlock;
    const uint32_t m = combine_block(op, q + i, s.qb + i, s.exact[blk], s.exact_b[blk], va + i, vb + i, len, g.twoeb);
    s.exact[blk] = m;
    if (m) fill_block_placeholders(q, i, m);
    if (g.ndims == 1) p = encode_block_1d(q + i, len, m, va + i, p);
  }
  size_t bytes = g.ndims == 1 ? static_cast<size_t>(p - out) : encode_nd_from_q(q, s.exact, va, n, begin, g, s, out);
  *raw = bytes >= n * sizeof(T);
  if (*raw) {
    for (size_t i = 0; i < n; ++i) {
      const bool ex = (s.exact[i / kBlock] >> (i % kBlock)) & 1u;
      store_elem(reinterpret_cast<T*>(out) + i, ex ? load_elem(va + i) : dequantize_value<T>(q[i], g.twoeb));
    }
    bytes = n * sizeof(T);
  }
  return bytes;
}

// Returns the result's length in out (room for encoded_chunk_worst(n, sizeof(T))), raw
// values when encoding would not be smaller (*raw set), or 0 if a chunk is malformed.
template <class T>
size_t combine_chunk(int op, const ChunkRef& a, const ChunkRef& b, size_t n, size_t begin, const ChunkGeometry& g,
                     ChunkScratch& s, uint8_t* out, bool* raw) {
  // MIN/MAX have no linear shortcut; the whole-chunk path below is faster for them.
  if (op == kCombineSum && g.ndims == 1 && !a.raw && !b.raw) {
    const size_t bytes = combine_chunk_1d<T>(op, a, b, n, g, out);
    if (bytes != SIZE_MAX) {
      *raw = false;
      return bytes;
    }
  }
  T* va = reinterpret_cast<T*>(s.vals_a);
  T* vb = reinterpret_cast<T*>(s.vals_b);
  if (!decode_operand(b, n, begin, g, s, s.qb, s.exact_b, vb)) return 0;
  if (!decode_operand(a, n, begin, g, s, s.q, s.exact, va)) return 0;
  return combine_decoded(op, n, begin, g, s, va, vb, out, raw);
}

// ------------------------------------- combination with uncompressed values
//
// op(Q(x), b) for values x and a chunk b: x is quantized exactly as the encoder would
// (quantize_block) and combined with b's integers by combine_block, so the result holds
// the same integers and exact values as compressing x and combining the two chunks,
// without encoding x and parsing it back. Only a block's predictor order can differ: it
// is chosen here for the result's own integers.

// 1-D chunks, block by block; x's integers go to s.q (the encoder's reads of q[-1],
// q[-2] and the placeholders need them). Returns 0 for a malformed chunk and SIZE_MAX
// when the result would not be smaller than raw (the caller then takes the general path).
template <class T>
size_t fold_chunk_1d(int op, const T* x, const ChunkRef& b, size_t n, const ChunkGeometry& g, ChunkScratch& s,
                     uint8_t* out) {
  const uint8_t* pb = b.p;
  const uint8_t* const end = b.p + b.bytes;
  uint32_t qb1 = 0, db1 = 0;  // b's state
  int32_t* q = s.q;
  uint8_t* p = out;
  const size_t raw_bytes = n * sizeof(T);
  alignas(32) int32_t rb[kBlock], qb[kBlock];
  T va[kBlock], vb[kBlock];
#if defined(__AVX2__)
  __m256i prev = _mm256_setzero_si256();  // the 8 integers of the result before block i
#endif
  for (size_t i = 0; i < n; i += kBlock) {
    const unsigned len = static_cast<unsigned>(n - i < kBlock ? n - i : kBlock);
#if defined(__AVX2__)
    // The common SUM block: x quantizes without exact values and b's block goes straight
    // to registers; the sum stays in registers through prediction and packing.
    if (op == kCombineSum && len == kBlock) {
      __m256i qv[4];
      RegBlock fb;
      if (!quantize_block_avx2(x + i, g, qv) && peek_block_avx2(pb, end, b.end, fb)) {
        uint32_t q1 = qb1, d1 = db1;
        rebuild_block_avx2(fb.r, fb.alt, fb.b, q1, d1, g, qb);
        const __m256i lim = _mm256_set1_epi32(static_cast<int>(kQuantLimit));
        __m256i over = _mm256_setzero_si256();
        for (unsigned j = 0; j < 4; ++j) {
          qv[j] = _mm256_add_epi32(qv[j], load_q8(qb + 8 * j));  // |q_x|, |q_b| < 2^30: no overflow
          over = _mm256_or_si256(over, _mm256_cmpgt_epi32(_mm256_abs_epi32(qv[j]), lim));
        }
        if (_mm256_testz_si256(over, over)) {
          for (unsigned j = 0; j < 4; ++j) _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + i + 8 * j), qv[j]);
          p = encode_block_1d_avx2(qv, prev, 0u, x + i, p);
          prev = qv[3];
          qb1 = q1;
          db1 = d1;
          pb = fb.next;
          if (static_cast<size_t>(p - out) >= raw_bytes) return SIZE_MAX;
          continue;
        }
      }
    }
#endif
    ParsedBlock bb;
    if (!parse_block<T>(pb, end, b.end, len, rb, bb)) return 0;
    rebuild_block(rb, len, bb.alt, bb.b, qb1, db1, g, qb);
    for (uint32_t e = bb.exact, j = 0; e; e &= e - 1, ++j)
      std::memcpy(vb + __builtin_ctz(e), bb.exact_src + j * sizeof(T), sizeof(T));
    const uint32_t ma = quantize_block(x + i, len, g, q + i);
    for (uint32_t e = ma; e; e &= e - 1) va[__builtin_ctz(e)] = load_elem(x + i + __builtin_ctz(e));
    const uint32_t m = combine_block(op, q + i, qb, ma, bb.exact, va, vb, len, g.twoeb);
    if (m) fill_block_placeholders(q, i, m);
    p = encode_block_1d(q + i, len, m, va, p);
#if defined(__AVX2__)
    if (len == kBlock) prev = load_q8(q + i + 24);
#endif
    if (static_cast<size_t>(p - out) >= raw_bytes) return SIZE_MAX;
  }
  if (pb != end) return 0;
  return static_cast<size_t>(p - out);
}

// Like combine_chunk, with a = x's values.
template <class T>
size_t fold_chunk(int op, const T* x, const ChunkRef& b, size_t n, size_t begin, const ChunkGeometry& g,
                  ChunkScratch& s, uint8_t* out, bool* raw) {
  if (g.ndims == 1 && !b.raw) {
    const size_t bytes = fold_chunk_1d<T>(op, x, b, n, g, s, out);
    if (bytes != SIZE_MAX) {
      *raw = false;
      return bytes;
    }
  }
  T* va = reinterpret_cast<T*>(s.vals_a);
  T* vb = reinterpret_cast<T*>(s.vals_b);
  // b first: decoding uses s.exact, which then receives x's masks.
  if (!decode_operand(b, n, begin, g, s, s.qb, s.exact_b, vb)) return 0;
  std::memcpy(va, x, n * sizeof(T));
  for (size_t i = 0; i < n; i += kBlock) {
    const unsigned len = static_cast<unsigned>(n - i < kBlock ? n - i : kBlock);
    s.exact[i / kBlock] = quantize_block(x + i, len, g, s.q + i);
  }
  return combine_decoded(op, n, begin, g, s, va, vb, out, raw);
}

// ------------------------------------------------------------ value range

#if defined(__AVX2__)
// The few 256-bit operations finite_range needs, for float and double alike.
template <class T> struct RangeVec;
template <> struct RangeVec<float> {
  using V = __m256;
  static constexpr unsigned kLanes = 8;
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static V set1(float x) { return _mm256_set1_ps(x); }
  static V min(V a, V b) { return _mm256_min_ps(a, b); }
  static V max(V a, V b) { return _mm256_max_ps(a, b); }
  static V finite(V v) {
    const V absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    return _mm256_cmp_ps(_mm256_and_ps(v, absm), set1(std::numeric_limits<float>::infinity()), _CMP_LT_OQ);
  }
  static V blend(V a, V b, V m) { return _mm256_blendv_ps(a, b, m); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
};
template <> struct RangeVec<double> {
  using V = __m256d;
  static constexpr unsigned kLanes = 4;
  static V load(const double* p) { return _mm256_loadu_pd(p); }
  static V set1(double x) { return _mm256_set1_pd(x); }
  static V min(V a, V b) { return _mm256_min_pd(a, b); }
  static V max(V a, V b) { return _mm256_max_pd(a, b); }
  static V finite(V v) {
    const V absm = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffll));
    return _mm256_cmp_pd(_mm256_and_pd(v, absm), set1(std::numeric_limits<double>::infinity()), _CMP_LT_OQ);
  }
  static V blend(V a, V b, V m) { return _mm256_blendv_pd(a, b, m); }
  static void store(double* p, V v) { _mm256_storeu_pd(p, v); }
};

template <class T, class V>
void fold_lanes(V vmn, V vmx, T& mn, T& mx) {
  using R = RangeVec<T>;
  T a[R::kLanes], b[R::kLanes];
  R::store(a, vmn);
  R::store(b, vmx);
  for (unsigned j = 0; j < R::kLanes; ++j) {
    mn = a[j] < mn ? a[j] : mn;
    mx = b[j] > mx ? b[j] : mx;
  }
}
#endif

// min and max over the finite values (lo > hi when there are none).
template <class T>
void finite_range(const T* x, size_t n, double* lo, double* hi) {
  T mn = std::numeric_limits<T>::infinity(), mx = -mn;
  size_t i = 0;
#if defined(__AVX2__)
  using R = RangeVec<T>;
  constexpr size_t kStep = 2 * R::kLanes;
  // First a plain min/max: min(v, m) returns m when v is NaN (the second operand wins
  // an unordered compare), so NaNs drop out for free; only an infinity in the result
  // sends the array to the careful pass below.
  {
    typename R::V a0 = R::set1(mn), a1 = a0, b0 = R::set1(mx), b1 = b0;
    size_t k = 0;
    for (; k + kStep <= n; k += kStep) {
      const typename R::V v0 = R::load(x + k), v1 = R::load(x + k + R::kLanes);
      a0 = R::min(v0, a0);
      a1 = R::min(v1, a1);
      b0 = R::max(v0, b0);
      b1 = R::max(v1, b1);
    }
    T fmn = mn, fmx = mx;
    fold_lanes(R::min(a0, a1), R::max(b0, b1), fmn, fmx);
    if (std::isfinite(fmn) && std::isfinite(fmx)) {
      mn = fmn;
      mx = fmx;
      i = k;
    }
  }
  // Careful pass: infinities masked out lane by lane.
  typename R::V vmn = R::set1(mn), vmx = R::set1(mx);
  for (; i + R::kLanes <= n; i += R::kLanes) {
    const typename R::V v = R::load(x + i), fin = R::finite(v);
    vmn = R::blend(vmn, R::min(vmn, v), fin);
    vmx = R::blend(vmx, R::max(vmx, v), fin);
  }
  fold_lanes(vmn, vmx, mn, mx);
#endif
  for (; i < n; ++i) {
    const T v = load_elem(x + i);
    if (std::isfinite(v)) {
      mn = v < mn ? v : mn;
      mx = v > mx ? v : mx;
    }
  }
  *lo = mn;
  *hi = mx;
}

// ------------------------------------------------------------ the table

inline size_t combine_f32(int op, const ChunkRef& a, const ChunkRef& b, size_t n, size_t begin,
                          const ChunkGeometry& g, ChunkScratch& s, uint8_t* out, bool* raw) {
  return combine_chunk<float>(op, a, b, n, begin, g, s, out, raw);
}
inline size_t combine_f64(int op, const ChunkRef& a, const ChunkRef& b, size_t n, size_t begin,
                          const ChunkGeometry& g, ChunkScratch& s, uint8_t* out, bool* raw) {
  return combine_chunk<double>(op, a, b, n, begin, g, s, out, raw);
}

inline size_t fold_f32(int op, const float* x, const ChunkRef& b, size_t n, size_t begin, const ChunkGeometry& g,
                       ChunkScratch& s, uint8_t* out, bool* raw) {
  return fold_chunk<float>(op, x, b, n, begin, g, s, out, raw);
}
inline size_t fold_f64(int op, const double* x, const ChunkRef& b, size_t n, size_t begin, const ChunkGeometry& g,
                       ChunkScratch& s, uint8_t* out, bool* raw) {
  return fold_chunk<double>(op, x, b, n, begin, g, s, out, raw);
}

inline void range_f32(const float* x, size_t n, double* lo, double* hi) { finite_range(x, n, lo, hi); }
inline void range_f64(const double* x, size_t n, double* lo, double* hi) { finite_range(x, n, lo, hi); }
inline size_t encode_f32(const float* x, size_t n, size_t begin, const ChunkGeometry& g,
                         ChunkScratch& s, uint8_t* out) {
  return encode_chunk<float>(x, n, begin, g, s, out);
}
inline size_t encode_f64(const double* x, size_t n, size_t begin, const ChunkGeometry& g,
                         ChunkScratch& s, uint8_t* out) {
  return encode_chunk<double>(x, n, begin, g, s, out);
}
inline bool decode_f32(const uint8_t* in, size_t bytes, const uint8_t* end, size_t n, size_t begin,
                       const ChunkGeometry& g, ChunkScratch& s, float* out) {
  return decode_chunk<float>(in, bytes, end, n, begin, g, s, out);
}
inline bool decode_f64(const uint8_t* in, size_t bytes, const uint8_t* end, size_t n, size_t begin,
                       const ChunkGeometry& g, ChunkScratch& s, double* out) {
  return decode_chunk<double>(in, bytes, end, n, begin, g, s, out);
}
