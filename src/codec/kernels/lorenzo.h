// Prediction stage: Lorenzo residuals of the quantized integers. 1-D chunks choose per
// block between first-order (q[i] - q[i-1]) and second-order differences; 2-D and 3-D
// chunks use shape-aware Lorenzo, run by run (NdRuns).
#pragma once
#include <algorithm>
#include <type_traits>

#include "codec/kernels/bitpack.h"
#include "codec/kernels/quantize.h"

namespace zcoll::fzl::ZCOLL_KERNELS_ISA {

// -------------------------------------------------- shape-aware prediction
//
// Lorenzo over the dimensions in which the neighbours exist: a dimension counts
// when the coordinate is > 0 and the whole Lorenzo cube lies inside the chunk;
// otherwise the slowest dimension is dropped first. So a chunk never looks outside
// itself, and the first rows or planes of a chunk fall back to lower-order Lorenzo.
//
// Which dimensions count depends only on which coordinates are 0 and on how far the
// element lies into the chunk, so a chunk splits into runs, each inside one row, whose
// elements share one set of neighbour offsets: a row's first element alone, then the rest
// of the row, cut where the chunk's offset reaches a dropped cube's reach. Each run is one
// loop over fixed offsets, which the compiler vectorizes (element by element, with the
// terms looked up per element, a 3-D chunk compressed at a fifth of a 1-D one's speed).

// The Lorenzo terms of one set of dimensions: prediction = sum of q[i - plus[k]] - sum of
// q[i - minus[k]]. When the fastest dimension counts, plus[0] is its offset, 1.
struct LorenzoTerms {
  int nplus = 0, nminus = 0;
  size_t plus[4], minus[3];
};

class NdRuns {
 public:
  NdRuns(const ChunkGeometry& g, size_t begin) : nd_(g.ndims) {
    size_t s[3];
    for (int d = 0; d < nd_; ++d) {
      e_[d] = g.extent[nd_ - 1 - d];
      s[d] = d == 0 ? 1 : s[d - 1] * e_[d - 1];
    }
    size_t rest = begin;
    for (int d = 0; d < nd_; ++d) {
      c_[d] = rest % e_[d];
      rest /= e_[d];
    }
    for (unsigned m = 0; m < (1u << nd_); ++m) {
      reach_[m] = 0;
      for (int d = 0; d < nd_; ++d)
        if (m & (1u << d)) reach_[m] += s[d];
      LorenzoTerms& t = terms_[m];
      // Ascending subsets: {fastest} first, so plus[0] is offset 1 wherever it counts.
      for (unsigned sub = 1; sub < (1u << nd_); ++sub) {
        if ((sub & m) != sub) continue;
        size_t off = 0;
        for (int d = 0; d < nd_; ++d)
          if (sub & (1u << d)) off += s[d];
        if (__builtin_popcount(sub) & 1) t.plus[t.nplus++] = off;
        else t.minus[t.nminus++] = off;
      }
    }
  }

  // The run that starts at chunk-relative element i (< n): its length, and its terms in *t.
  size_t next(size_t i, size_t n, const LorenzoTerms** t) {
    unsigned m = 0;
    for (int d = 0; d < nd_; ++d)
      if (c_[d] > 0) m |= 1u << d;
    size_t end = std::min(n, i + (c_[0] == 0 ? 1 : e_[0] - c_[0]));
    while (m && reach_[m] > i) {
      end = std::min(end, reach_[m]);
      m &= ~(1u << (31 - __builtin_clz(m)));
    }
    *t = &terms_[m];
    const size_t len = end - i;
    c_[0] += len;  // never past the row's end
    for (int d = 0; d < nd_ && c_[d] == e_[d]; ++d) {
      c_[d] = 0;
      if (d + 1 < nd_) ++c_[d + 1];
    }
    return len;
  }

 private:
  int nd_;
  size_t e_[3] = {}, c_[3] = {};  // extents and the next element's coordinates, fastest first
  size_t reach_[8] = {};          // the sum of the strides of each set of dimensions
  LorenzoTerms terms_[8];
};

// q[i - offsets[0]] + ... over K offsets, with K known to the compiler.
template <int K>
inline uint32_t sum_at(const uint32_t* q, size_t i, const size_t* off) {
  uint32_t v = 0;
  for (int k = 0; k < K; ++k) v += q[i - off[k]];
  return v;
}

template <int P, int M>
inline void residual_run(const uint32_t* q, size_t i0, size_t len, const LorenzoTerms& t, uint32_t* r) {
  for (size_t i = i0; i < i0 + len; ++i) r[i] = q[i] - sum_at<P>(q, i, t.plus) + sum_at<M>(q, i, t.minus);
}

// Integers from residuals over a run whose fastest dimension counts (plus[0] = 1): the
// other offsets are at least a row, so they reach only before the run and their terms are
// final; what remains is a running sum along the row, eight lanes at a time where AVX2 is
// (the scalar running sum, one element per cycle, was a quarter of a 3-D chunk's decoding).
template <int P, int M>
inline void rebuild_run(const uint32_t* r, size_t i0, size_t len, const LorenzoTerms& t, uint32_t* q) {
  const size_t end = i0 + len;
  size_t i = i0;
  uint32_t acc = q[i0 - 1];
#if defined(__AVX2__)
  auto at = [&](const uint32_t* a, size_t j) { return load_q8(reinterpret_cast<const int32_t*>(a + j)); };
  __m256i carry = _mm256_set1_epi32(static_cast<int>(acc));
  for (; i + 8 <= end; i += 8) {
    __m256i v = at(r, i);
    for (int k = 1; k < P; ++k) v = _mm256_add_epi32(v, at(q, i - t.plus[k]));
    for (int k = 0; k < M; ++k) v = _mm256_sub_epi32(v, at(q, i - t.minus[k]));
    v = _mm256_add_epi32(prefix8(v), carry);
    store_q8(reinterpret_cast<int32_t*>(q + i), v);
    carry = last_lane(v);
  }
  acc = static_cast<uint32_t>(_mm256_cvtsi256_si32(carry));
#endif
  for (; i < end; ++i) {
    acc += r[i] + sum_at<P - 1>(q, i, t.plus + 1) - sum_at<M>(q, i, t.minus);
    q[i] = acc;
  }
}

// f(P, M) with a run's term counts as integral constants: 0 and 0 (no dimension counts),
// 1 and 0, 2 and 1, 4 and 3 (one, two or three dimensions).
template <class F>
inline void with_term_counts(const LorenzoTerms& t, F&& f) {
  using std::integral_constant;
  switch (t.nplus) {
    case 0: f(integral_constant<int, 0>{}, integral_constant<int, 0>{}); break;
    case 1: f(integral_constant<int, 1>{}, integral_constant<int, 0>{}); break;
    case 2: f(integral_constant<int, 2>{}, integral_constant<int, 1>{}); break;
    default: f(integral_constant<int, 4>{}, integral_constant<int, 3>{}); break;
  }
}

// f(i, len, terms) for each run of a chunk of n elements that starts at `begin`.
template <class F>
inline void for_each_run(const ChunkGeometry& g, size_t begin, size_t n, F&& f) {
  NdRuns runs(g, begin);
  const LorenzoTerms* t = nullptr;
  for (size_t i = 0, len; i < n; i += len) {
    len = runs.next(i, n, &t);
    f(i, len, *t);
  }
}

// Residuals of a whole chunk of integers (placeholders already in q) into r.
inline void nd_residuals(const int32_t* qs, size_t n, size_t begin, const ChunkGeometry& g, int32_t* rs) {
  const uint32_t* q = reinterpret_cast<const uint32_t*>(qs);
  uint32_t* r = reinterpret_cast<uint32_t*>(rs);
  for_each_run(g, begin, n, [&](size_t i, size_t len, const LorenzoTerms& t) {
    with_term_counts(t, [&](auto p, auto m) { residual_run<decltype(p)::value, decltype(m)::value>(q, i, len, t, r); });
  });
}

// The inverse: integers from residuals; then done(i, len) for each run, while its
// integers are in cache.
template <class Done>
inline void nd_rebuild(const int32_t* rs, size_t n, size_t begin, const ChunkGeometry& g, int32_t* qs, Done&& done) {
  const uint32_t* r = reinterpret_cast<const uint32_t*>(rs);
  uint32_t* q = reinterpret_cast<uint32_t*>(qs);
  for_each_run(g, begin, n, [&](size_t i, size_t len, const LorenzoTerms& t) {
    if (t.nplus == 0) {
      std::copy(r + i, r + i + len, q + i);
    } else if (len == 1) {  // a row's first element (or a run cut short): term by term
      q[i] = r[i];
      for (int k = 0; k < t.nplus; ++k) q[i] += q[i - t.plus[k]];
      for (int k = 0; k < t.nminus; ++k) q[i] -= q[i - t.minus[k]];
    } else {
      with_term_counts(t, [&](auto p, auto m) {
        if constexpr (decltype(p)::value > 0) rebuild_run<decltype(p)::value, decltype(m)::value>(r, i, len, t, q);
      });
    }
    done(i, len);
  });
}

// ----------------------------------------------------------- 1-D state
//
// A 1-D block continues from q1 = the last integer and d1 = the last first difference.

// Bound on |q| over a full block that follows the state and whose residuals have at
// most b bits: first order |q1| + 32 m, second order |q1| + 32 |d1| + (1 + 2 + ... + 32)
// m, m = 2^b - 1.
inline uint64_t integer_reach(uint32_t q1, uint32_t d1, bool alt, unsigned b) {
  const uint64_t m = (uint64_t{1} << b) - 1;
  return alt ? abs_i32(q1) + kBlock * abs_i32(d1) + 528 * m : abs_i32(q1) + kBlock * m;
}

// The state after len residuals r with sum = r_0 + ... + r_{len-1}, weighted = len r_0 +
// (len-1) r_1 + ... + 1 r_{len-1}, last = r_{len-1}.
inline void advance_by_sums(uint32_t sum, uint32_t weighted, uint32_t last, unsigned len, bool alt, uint32_t& q1,
                            uint32_t& d1) {
  if (alt) {  // d_k = d1 + r_0 + ... + r_k;  q_end = q1 + sum of d_k
    q1 += len * d1 + weighted;
    d1 += sum;
  } else {
    q1 += sum;
    d1 = last;
  }
}

inline void advance_state(const int32_t* r, unsigned len, bool alt, uint32_t& q1, uint32_t& d1) {
  uint32_t sum = 0, weighted = 0;
  for (unsigned k = 0; k < len; ++k) {
    sum += static_cast<uint32_t>(r[k]);
    weighted += static_cast<uint32_t>(len - k) * static_cast<uint32_t>(r[k]);
  }
  advance_by_sums(sum, weighted, static_cast<uint32_t>(r[len - 1]), len, alt, q1, d1);
}

// ------------------------------------------------------------ 1-D blocks

// One 1-D block of quantized integers (q[-1], q[-2] readable): first- or second-order
// differences, whichever needs fewer bits. x supplies the values at exact positions.
// (encode_block_1d below: the AVX2 kernels take full blocks in registers.)
template <class T>
inline uint8_t* encode_block_1d_scalar(const int32_t* q, unsigned len, uint32_t mask, const T* x, uint8_t* p) {
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

// Rebuilds one 1-D block from its residuals and writes the values (or, with Out =
// int32_t, the integers, for homomorphic combination); advances the state.
// (rebuild_block below: b, the code length, lets the AVX2 kernel bound the integers.)
template <class Out>
inline void rebuild_block_scalar(const int32_t* rb, unsigned len, bool alt, uint32_t& q1, uint32_t& d1,
                                 const ChunkGeometry& geo, Out* out) {
  for (unsigned k = 0; k < len; ++k) {
    if (alt) {
      d1 += static_cast<uint32_t>(rb[k]);
    } else {
      d1 = static_cast<uint32_t>(rb[k]);
    }
    q1 += d1;
    if constexpr (std::is_same<Out, int32_t>::value) out[k] = static_cast<int32_t>(q1);
    else store(out + k, dequantize_value<Out>(static_cast<int32_t>(q1), geo.twoeb));
  }
}

#if defined(__AVX2__)
// The 8 lanes of cur moved up by one (two) lanes, the last lane(s) of prev shifted in.
inline __m256i lag1(__m256i cur, __m256i prev) {
  return _mm256_alignr_epi8(cur, _mm256_permute2x128_si256(prev, cur, 0x21), 12);
}
inline __m256i lag2(__m256i cur, __m256i prev) {
  return _mm256_alignr_epi8(cur, _mm256_permute2x128_si256(prev, cur, 0x21), 8);
}

// A full 1-D block of integers qv (prev: the 8 integers before it; lanes 6 and 7 are
// read): first and second differences, their magnitudes and signs in one pass, all in
// registers; emits whichever order needs fewer bits.
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

// The integers before q[0] as encode_block_1d_avx2's prev.
inline __m256i prev_of(const int32_t* q) { return _mm256_setr_epi32(0, 0, 0, 0, 0, 0, q[-2], q[-1]); }

// A full block whose residuals are in four vectors: prefix sums in registers.
template <class Out>
inline void rebuild_block_avx2(const __m256i rv[4], bool alt, unsigned b, uint32_t& q1, uint32_t& d1,
                               const ChunkGeometry& geo, Out* out) {
  constexpr bool kToQ = std::is_same<Out, int32_t>::value;
  // When every |q| of the block is at most 2^24 (bounded from the state and the code
  // length b, see integer_reach), float(q) is exact and one float multiplication gives
  // the grid value.
  const bool f32_grid = sizeof(Out) == 4 && !kToQ && geo.twoeb_f32 > 0 &&
                        integer_reach(q1, d1, alt, b) <= static_cast<uint64_t>(kFloatExactInt);
  const __m256d scale = _mm256_set1_pd(geo.twoeb);
  __m256i qc = _mm256_set1_epi32(static_cast<int>(q1)), dc = _mm256_set1_epi32(static_cast<int>(d1));
  for (unsigned g = 0; g < 4; ++g) {
    __m256i v = rv[g];
    if (alt) {
      v = _mm256_add_epi32(prefix8(v), dc);
      dc = last_lane(v);
    }
    const __m256i q = _mm256_add_epi32(prefix8(v), qc);
    qc = last_lane(q);
    if constexpr (kToQ) {
      store_q8(out + 8 * g, q);
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

// sum and weighted of advance_by_sums for a full block (weighted only for second-order
// blocks, the only ones that use it).
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

inline void advance_state_avx2(const __m256i r[4], bool alt, uint32_t& q1, uint32_t& d1) {
  uint32_t sum, weighted;
  block_sums_avx2(r, alt, sum, weighted);
  advance_by_sums(sum, weighted, static_cast<uint32_t>(_mm256_extract_epi32(r[3], 7)), kBlock, alt, q1, d1);
}

#endif

template <class T>
inline uint8_t* encode_block_1d(const int32_t* q, unsigned len, uint32_t mask, const T* x, uint8_t* p) {
#if defined(__AVX2__)
  if (len != kBlock) return encode_block_1d_scalar(q, len, mask, x, p);
  const __m256i qv[4] = {load_q8(q), load_q8(q + 8), load_q8(q + 16), load_q8(q + 24)};
  return encode_block_1d_avx2(qv, prev_of(q), mask, x, p);
#else
  return encode_block_1d_scalar(q, len, mask, x, p);
#endif
}

template <class Out>
inline void rebuild_block(const int32_t* rb, unsigned len, bool alt, [[maybe_unused]] unsigned b, uint32_t& q1,
                          uint32_t& d1, const ChunkGeometry& geo, Out* out) {
#if defined(__AVX2__)
  if (len != kBlock) return rebuild_block_scalar(rb, len, alt, q1, d1, geo, out);
  const __m256i rv[4] = {load_q8(rb), load_q8(rb + 8), load_q8(rb + 16), load_q8(rb + 24)};
  rebuild_block_avx2(rv, alt, b, q1, d1, geo, out);
#else
  rebuild_block_scalar(rb, len, alt, q1, d1, geo, out);
#endif
}

}  // namespace zcoll::fzl::ZCOLL_KERNELS_ISA
