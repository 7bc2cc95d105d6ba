// Homomorphic combination of two chunks (combine_chunk), or of values and a chunk
// (fold_chunk): both are decoded to integers (no dequantization), combined position by
// position, and the result is encoded like a fresh chunk. A position becomes exact
// (stored as a value) when it cannot stay on the integer grid: an exact value on
// either side for SUM, or a sum outside the quantizer's range, checked before it is
// stored. For MIN/MAX a position stays an integer whenever the winning side is one.
#pragma once
#include "codec/kernels/chunk.h"

namespace zcoll::fzl::ZCOLL_KERNELS_ISA {

// ------------------------------------------------------------ one block

// Sum of the integers of one block into qa; returns the positions whose sum left the
// quantizer's range (|qa|, |qb| <= 2^30 - 1, so the int32 sum itself cannot overflow).
inline uint32_t add_block_scalar(int32_t* qa, const int32_t* qb, unsigned len) {
  uint32_t over = 0;
  for (unsigned k = 0; k < len; ++k) {
    const int32_t v = qa[k] + qb[k];
    qa[k] = v;
    if (v > static_cast<int32_t>(kQuantLimit) || v < -static_cast<int32_t>(kQuantLimit)) over |= 1u << k;
  }
  return over;
}

inline uint32_t add_block(int32_t* qa, const int32_t* qb, unsigned len) {
#if defined(__AVX2__)
  if (len != kBlock) return add_block_scalar(qa, qb, len);
  uint32_t over = 0;
  const __m256i lim = _mm256_set1_epi32(static_cast<int>(kQuantLimit));
  for (unsigned j = 0; j < kBlock; j += 8) {
    const __m256i v = _mm256_add_epi32(load_q8(qa + j), load_q8(qb + j));
    store_q8(qa + j, v);
    const __m256i big = _mm256_cmpgt_epi32(_mm256_abs_epi32(v), lim);
    over |= static_cast<uint32_t>(_mm256_movemask_ps(_mm256_castsi256_ps(big))) << j;
  }
  return over;
#else
  return add_block_scalar(qa, qb, len);
#endif
}

template <bool kMax>
inline void minmax_block_scalar(int32_t* qa, const int32_t* qb, unsigned len) {
  for (unsigned k = 0; k < len; ++k) qa[k] = kMax ? (qb[k] > qa[k] ? qb[k] : qa[k]) : (qb[k] < qa[k] ? qb[k] : qa[k]);
}

template <bool kMax>
inline void minmax_block(int32_t* qa, const int32_t* qb, unsigned len) {
#if defined(__AVX2__)
  if (len != kBlock) return minmax_block_scalar<kMax>(qa, qb, len);
  for (unsigned j = 0; j < kBlock; j += 8) {
    const __m256i a = load_q8(qa + j), b = load_q8(qb + j);
    store_q8(qa + j, kMax ? _mm256_max_epi32(a, b) : _mm256_min_epi32(a, b));
  }
#else
  minmax_block_scalar<kMax>(qa, qb, len);
#endif
}

#if defined(__AVX2__)
// sum_blocks below with the residuals in registers.
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
  advance_state_avx2(u, alt, q1, d1);
  advance_state_avx2(A.r, A.alt, qa1, da1);
  qb1 = q1 - qa1;
  db1 = d1 - da1;
  return true;
}
#endif

// SUM of two full 1-D blocks of residuals on the linear path (see combine_chunk_1d):
// the result's residuals are the operands' residuals added. Mixed predictors:
// second-order residuals are differences of first-order ones (the first against the
// state's last difference), so the first-order side converts and the sum is second
// order. Emits the block and advances the three states; false (nothing written) when
// the result's integers could leave the quantizer's range.
template <class T>
bool sum_blocks(const int32_t* ra, bool a_alt, const int32_t* rb, bool b_alt, uint32_t& q1, uint32_t& d1,
                uint32_t& qa1, uint32_t& da1, uint32_t& qb1, uint32_t& db1, uint8_t*& p) {
#if defined(__AVX2__)
  RegBlock fa, fb;
  fa.alt = a_alt;
  fb.alt = b_alt;
  for (unsigned j = 0; j < 4; ++j) {
    fa.r[j] = load_q8(ra + 8 * j);
    fb.r[j] = load_q8(rb + 8 * j);
  }
  return sum_blocks_avx2<T>(fa, fb, q1, d1, qa1, da1, qb1, db1, p);
#else
  const bool alt = a_alt || b_alt;
  int32_t conv[kBlock];
  const int32_t* xa = ra;
  const int32_t* xb = rb;
  if (a_alt != b_alt) {
    int32_t shifted[kBlock + 1];  // the first-order residuals, after the state's difference
    shifted[0] = static_cast<int32_t>(a_alt ? db1 : da1);
    std::memcpy(shifted + 1, a_alt ? rb : ra, sizeof(int32_t) * kBlock);
    for (unsigned k = 0; k < kBlock; ++k)
      conv[k] = static_cast<int32_t>(static_cast<uint32_t>(shifted[k + 1]) - static_cast<uint32_t>(shifted[k]));
    (a_alt ? xb : xa) = conv;
  }
  // The summed residuals' magnitudes and signs, and the sums that advance the result's
  // state, in one pass.
  uint32_t any = 0, signs = 0, sum = 0, weighted = 0, last = 0;
  uint32_t mags[kBlock];
  for (unsigned k = 0; k < kBlock; ++k) {
    const uint32_t u = static_cast<uint32_t>(xa[k]) + static_cast<uint32_t>(xb[k]);
    mags[k] = magnitude(u);
    any |= mags[k];
    signs |= (u >> 31) << k;
    sum += u;
    weighted += (kBlock - k) * u;
    last = u;
  }
  const unsigned bits = bit_length(any);
  if (integer_reach(q1, d1, alt, bits) > static_cast<uint64_t>(kQuantLimit)) return false;
  p = emit_block(mags, signs, bits, kBlock, 0u, static_cast<const T*>(nullptr), alt, p);
  advance_by_sums(sum, weighted, last, kBlock, alt, q1, d1);
  // The result's integers are a's plus b's here, so b's state follows from the other two.
  advance_state(ra, kBlock, a_alt, qa1, da1);
  qb1 = q1 - qa1;
  db1 = d1 - da1;
  return true;
#endif
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
      const T a = (ma >> k) & 1u ? load<T>(va + k) : dequantize_value<T>(qa[k], twoeb);
      const T b = (mb >> k) & 1u ? load<T>(vb + k) : dequantize_value<T>(qb[k], twoeb);
      store(va + k, codec::exact_sum(a, b));
    }
    const uint32_t over = add_block(qa, qb, len) & ~m;
    for (uint32_t e = over; e; e &= e - 1) {
      const unsigned k = static_cast<unsigned>(__builtin_ctz(e));
      store(va + k, dequantize_value<T>(qa[k], twoeb));  // the exact int32 sum, rounded once
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
    const T a = ea ? load<T>(va + k) : dequantize_value<T>(qa[k], twoeb);
    const T b = eb ? load<T>(vb + k) : dequantize_value<T>(qb[k], twoeb);
    bool take_b;
    if (a != a || b != b) take_b = a == a;  // NaN wins
    else if (a == b) take_b = ea && !eb;
    else take_b = is_max ? b > a : b < a;
    const bool win_exact = take_b ? eb : ea;
    if (win_exact) {
      keep_exact |= 1u << k;
      store(va + k, take_b ? b : a);
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

// ------------------------------------------------------------ whole chunks

// Chunk a or b: its integers into q (padded like ChunkScratch::q), exact masks into
// masks[], exact values into vals. A raw chunk is all exact.
template <class T>
bool decode_operand(const ChunkRef& c, size_t n, size_t begin, const ChunkGeometry& g, ChunkScratch& s,
                    int32_t* q, uint32_t* masks, T* vals) {
  const size_t nblocks = (n + kBlock - 1) / kBlock;
  if (c.raw) {
    std::memcpy(vals, c.p, n * sizeof(T));
    for (size_t b = 0; b < nblocks; ++b) {
      const unsigned len = block_len(n, b * kBlock);
      masks[b] = len == kBlock ? 0xffffffffu : ((1u << len) - 1);
    }
    std::memset(q, 0, n * sizeof(int32_t));
    return true;
  }
  if (!decode_chunk<T>(c.p, c.bytes, c.end, n, begin, g, s, vals, q)) return false;
  if (masks != s.exact) std::memcpy(masks, s.exact, nblocks * sizeof(uint32_t));
  return true;
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
    const unsigned len = block_len(n, i);
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
    if (op == kCombineSum && len == kBlock && !(ba.exact | bb.exact) && linear && !sum_tried &&
        sum_blocks<T>(ra, ba.alt, rb, bb.alt, q1, d1, qa1, da1, qb1, db1, p)) {
      if (static_cast<size_t>(p - out) >= raw_bytes) return SIZE_MAX;
      continue;
    }
    // Value by value: rebuild both blocks' integers, combine, re-predict.
    rebuild_block(ra, len, ba.alt, ba.b, qa1, da1, g, qa);
    rebuild_block(rb, len, bb.alt, bb.b, qb1, db1, g, qb);
    copy_exact(ba.exact, ba.exact_src, va);
    copy_exact(bb.exact, bb.exact_src, vb);
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
    const unsigned len = block_len(n, i);
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
      store(reinterpret_cast<T*>(out) + i, ex ? load<T>(va + i) : dequantize_value<T>(q[i], g.twoeb));
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
  for (size_t i = 0; i < n; i += kBlock) {
    const unsigned len = block_len(n, i);
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
          for (unsigned j = 0; j < 4; ++j) store_q8(q + i + 8 * j, qv[j]);
          p = encode_block_1d_avx2(qv, prev_of(q + i), 0u, x + i, p);
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
    copy_exact(bb.exact, bb.exact_src, vb);
    const uint32_t ma = quantize_block(x + i, len, g, q + i);
    for (uint32_t e = ma; e; e &= e - 1) va[__builtin_ctz(e)] = load<T>(x + i + __builtin_ctz(e));
    const uint32_t m = combine_block(op, q + i, qb, ma, bb.exact, va, vb, len, g.twoeb);
    if (m) fill_block_placeholders(q, i, m);
    p = encode_block_1d(q + i, len, m, va, p);
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
  for (size_t i = 0; i < n; i += kBlock) s.exact[i / kBlock] = quantize_block(x + i, block_len(n, i), g, s.q + i);
  return combine_decoded(op, n, begin, g, s, va, vb, out, raw);
}

}  // namespace zcoll::fzl::ZCOLL_KERNELS_ISA
