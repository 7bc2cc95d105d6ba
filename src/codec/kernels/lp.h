// The linear predictors of Hu & Koibuchi ("The case for error-bounded lossy floating-point
// data compression on interconnection networks"), shared by the lpbyte and lpbit chunk
// codecs: the 0th- to 3rd-order polynomial extrapolations from the last four values the
// DECODER will see (the reconstructed ones, so errors never accumulate), and the exact
// acceptance test of the guarantee.
//
// Encoder and decoder run the same scalar double operations in the same order (the
// codec is compiled with -ffp-contract=off -fno-fast-math), so both compute bit-identical
// predictions and reconstructions, on any x86-64 and for any thread count.
#pragma once
#include "codec/kernels/common.h"

namespace zcoll::fzl::ZCOLL_KERNELS_ISA::lp {

// floor(log2(v)) for a positive finite v (subnormals included).
inline int floor_log2(double v) {
  int e;
  std::frexp(v, &e);
  return e - 1;
}

// The last four finite reconstructed values of the chunk, newest first; zeros at the
// chunk's first value. A value that is not finite (NaN and +-Inf, always reproduced
// exactly) is not pushed: prediction continues from the finite values before it, instead
// of every following prediction becoming NaN.
struct History {
  double h0 = 0, h1 = 0, h2 = 0, h3 = 0;

  template <class T>
  void push(T v) {
    if (!std::isfinite(v)) return;
    h3 = h2;
    h2 = h1;
    h1 = h0;
    h0 = static_cast<double>(v);
  }
  // p[k]: the k-th order polynomial through the last k + 1 values, one step ahead.
  void predict(double p[4]) const {
    p[0] = h0;
    p[1] = 2 * h0 - h1;
    p[2] = 3 * h0 - 3 * h1 + h2;
    p[3] = 4 * h0 - 6 * h1 + 4 * h2 - h3;
  }
};

// The candidate reconstruction closest to x among those within eb (ties: the first one
// offered), chosen without branches: which candidate wins is data-dependent, and a
// mispredicted branch would stall the serial prediction chain. Errors are compared
// through their bit patterns, which order non-negative doubles as their values (and put
// NaN above +Inf, above every finite error, so a NaN error is never within eb).
template <class T>
struct Choice {
  uint64_t eb_bits;
  uint64_t key = ~uint64_t{0};  // the error of the choice, ~0 while there is none
  Bits<T> y = 0;                // the choice, as T's bits
  int code = -1;                // the code the caller gave it; -1: none within eb

  explicit Choice(double eb) : eb_bits(bits_of(eb)) {}
  // Offers cand (under `code`) for x; allowed = 0 (else 1) makes it never chosen.
  // (Masks rather than ?: because the compiler turns these selects into branches.)
  void offer(T x, T cand, int c, uint64_t allowed = 1) {
    uint64_t e = bits_of(std::fabs(static_cast<double>(x) - static_cast<double>(cand)));
    e |= (uint64_t{0} - static_cast<uint64_t>(e > eb_bits)) | (allowed - 1);
    const uint64_t take = uint64_t{0} - static_cast<uint64_t>(e < key);
    key = (e & take) | (key & ~take);
    y = static_cast<Bits<T>>((bits_of(cand) & take) | (y & ~take));
    code = static_cast<int>((static_cast<uint64_t>(static_cast<int64_t>(c)) & take) |
                            (static_cast<uint64_t>(static_cast<int64_t>(code)) & ~take));
  }
  bool hit() const { return code >= 0; }
  // All ones when there is no choice (a miss), else 0.
  uint64_t miss_mask() const { return uint64_t{0} - static_cast<uint64_t>(code < 0); }
};

// Offers the four predictions rounded to T, T(p[k]) under code k, lowest order first.
template <class T>
inline void offer_predictions(Choice<T>& ch, T x, const double p[4]) {
  for (int k = 0; k < 4; ++k) ch.offer(x, static_cast<T>(p[k]), k);
}

// The order in which a chunk's values are predicted. A prediction chain is serial (each
// value needs the reconstruction of the one before), so a chunk of 2048 values or more is
// split into kLanes segments of (almost) equal length, each with its own predictor that
// restarts at the segment's first value, and the segments are stepped in lockstep: value j
// of segment 0, value j of segment 1, ..., then value j + 1. The independent chains keep
// the core busier: on cesm_TS at REL 1e-4 (CPU time, one thread) lpbyte compresses in
// 30 instead of 35 ns per value and lpbit decompresses in 16 instead of 23-26; a restart
// costs a few values every 512 or more (0.1% of the ratio there). Encoders and decoders
// visit the values in this order, and the codecs' streams (lpbyte's values section,
// lpbit's bit stream) follow it.
struct Lanes {
  static constexpr int kLanes = 4;
  static constexpr size_t kMinChunk = 2048;
  int count;
  size_t begin[kLanes + 1];

  explicit Lanes(size_t n) : count(n >= kMinChunk ? kLanes : 1) {
    for (int l = 0; l <= count; ++l) begin[l] = n * static_cast<size_t>(l) / static_cast<size_t>(count);
  }
  // f(lane, i) for every value i of the chunk, in the order above, from step `first` on.
  template <class F>
  void run(F&& f, size_t first = 0) const {
    if (count == kLanes) step<kLanes>(f, first);
    else step<1>(f, first);
  }
  // The steps in which every lane has a value (segment lengths differ by at most one).
  size_t full_steps() const {
    size_t s = begin[1] - begin[0];
    for (int l = 1; l < count; ++l) s = begin[l + 1] - begin[l] < s ? begin[l + 1] - begin[l] : s;
    return s;
  }

 private:
  template <int L, class F>
  void step(F& f, size_t first) const {
    size_t steps = 0;  // the longest segment
    for (int l = 0; l < L; ++l) steps = begin[l + 1] - begin[l] > steps ? begin[l + 1] - begin[l] : steps;
    for (size_t j = first; j < steps; ++j) {
#pragma GCC unroll 4
      for (int l = 0; l < L; ++l) {
        const size_t i = begin[l] + j;
        if (i < begin[l + 1]) f(l, i);
      }
    }
  }
};

#if defined(__AVX2__)
// The four lanes of a chunk stepped together, lane l in element l of each register. Every
// operation is the IEEE double operation of History and Choice above, in the same order
// (no contraction), so the AVX2 and scalar encoders make the same decisions and write the
// same streams, bit for bit (tests/compare_digests.cmake checks it). The decoders are scalar.
namespace avx2 {

struct History4 {
  __m256d h0, h1, h2, h3;
};

inline History4 gather(const History h[4]) {
  return {_mm256_setr_pd(h[0].h0, h[1].h0, h[2].h0, h[3].h0), _mm256_setr_pd(h[0].h1, h[1].h1, h[2].h1, h[3].h1),
          _mm256_setr_pd(h[0].h2, h[1].h2, h[2].h2, h[3].h2), _mm256_setr_pd(h[0].h3, h[1].h3, h[2].h3, h[3].h3)};
}

inline void scatter(const History4& v, History h[4]) {
  alignas(32) double a[4][4];
  _mm256_store_pd(a[0], v.h0);
  _mm256_store_pd(a[1], v.h1);
  _mm256_store_pd(a[2], v.h2);
  _mm256_store_pd(a[3], v.h3);
  for (int l = 0; l < 4; ++l) h[l] = History{a[0][l], a[1][l], a[2][l], a[3][l]};
}

inline void predict(const History4& v, __m256d p[4]) {
  const __m256d two = _mm256_set1_pd(2), three = _mm256_set1_pd(3), four = _mm256_set1_pd(4),
                six = _mm256_set1_pd(6);
  p[0] = v.h0;
  p[1] = _mm256_sub_pd(_mm256_mul_pd(two, v.h0), v.h1);
  p[2] = _mm256_add_pd(_mm256_sub_pd(_mm256_mul_pd(three, v.h0), _mm256_mul_pd(three, v.h1)), v.h2);
  p[3] = _mm256_sub_pd(
      _mm256_add_pd(_mm256_sub_pd(_mm256_mul_pd(four, v.h0), _mm256_mul_pd(six, v.h1)), _mm256_mul_pd(four, v.h2)),
      v.h3);
}

inline __m256d abs_pd(__m256d v) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), v); }

// y holds values of T (as doubles); the lanes where y is not finite keep their history.
inline void push(History4& v, __m256d y) {
  const __m256d fin = _mm256_cmp_pd(abs_pd(y), _mm256_set1_pd(HUGE_VAL), _CMP_LT_OQ);
  v.h3 = _mm256_blendv_pd(v.h3, v.h2, fin);
  v.h2 = _mm256_blendv_pd(v.h2, v.h1, fin);
  v.h1 = _mm256_blendv_pd(v.h1, v.h0, fin);
  v.h0 = _mm256_blendv_pd(v.h0, y, fin);
}

// T(v) as a double: static_cast<T> rounds to nearest, as cvtpd_ps does.
template <class T>
inline __m256d round_to(__m256d v) {
  if constexpr (sizeof(T) == 4) return _mm256_cvtps_pd(_mm256_cvtpd_ps(v));
  else return v;
}

template <class T>
inline __m256d load4(const T* x, const size_t i[4]) {
  if constexpr (sizeof(T) == 4)
    return _mm256_cvtps_pd(_mm_setr_ps(load<float>(x + i[0]), load<float>(x + i[1]), load<float>(x + i[2]),
                                       load<float>(x + i[3])));
  else
    return _mm256_setr_pd(load<double>(x + i[0]), load<double>(x + i[1]), load<double>(x + i[2]),
                          load<double>(x + i[3]));
}

// Choice for four lanes. The candidates' errors are computed side by side and the best
// found by a tournament (on equal errors the earlier offer wins, as in Choice), which
// keeps the serial prediction chain short; errors compare as doubles instead of bit
// patterns, which orders them the same (non-negative, and NaN is never <= eb), with +inf
// for "not within eb".
struct Candidate {
  __m256d e, y;
  __m256i code;
};

// allowed: all ones where cand may be chosen.
inline Candidate candidate(__m256d x, __m256d cand, __m256i code, __m256d eb, __m256d allowed) {
  const __m256d e = abs_pd(_mm256_sub_pd(x, cand));
  const __m256d ok = _mm256_and_pd(_mm256_cmp_pd(e, eb, _CMP_LE_OQ), allowed);
  return {_mm256_blendv_pd(_mm256_set1_pd(HUGE_VAL), e, ok), cand, code};
}

inline Candidate better(const Candidate& a, const Candidate& b) {
  const __m256d take_b = _mm256_cmp_pd(b.e, a.e, _CMP_LT_OQ);
  return {_mm256_blendv_pd(a.e, b.e, take_b), _mm256_blendv_pd(a.y, b.y, take_b),
          _mm256_castpd_si256(_mm256_blendv_pd(_mm256_castsi256_pd(a.code), _mm256_castsi256_pd(b.code), take_b))};
}

// The four predictions as candidates 0..3 (codes 0..3).
template <class T>
inline void prediction_candidates(__m256d x, const __m256d p[4], __m256d eb, Candidate c[4]) {
  const __m256d all = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
  for (int k = 0; k < 4; ++k) c[k] = candidate(x, round_to<T>(p[k]), _mm256_set1_epi64x(k), eb, all);
}

struct Choice4 {
  __m256d y;     // the choice, 0 where there is none
  __m256i code;  // its code, -1 where there is none
  __m256i hit;   // all ones where there is a choice
};

// The best of c[0..n), n = 4 or 5.
inline Choice4 choose(const Candidate* c, int n) {
  Candidate b = better(better(c[0], c[1]), better(c[2], c[3]));
  if (n == 5) b = better(b, c[4]);
  const __m256d hit = _mm256_cmp_pd(b.e, _mm256_set1_pd(HUGE_VAL), _CMP_LT_OQ);
  return {_mm256_and_pd(b.y, hit),
          _mm256_castpd_si256(_mm256_blendv_pd(_mm256_castsi256_pd(_mm256_set1_epi64x(-1)),
                                               _mm256_castsi256_pd(b.code), hit)),
          _mm256_castpd_si256(hit)};
}

// The engine of the AVX2 encoders: for every step in which all four lanes have a value,
// y = step(idx, x, p, c) with the lanes' positions idx, values x, predictions p and the
// predictions as candidates c[0..3] (c has room for a fifth); y, the reconstructions,
// feeds the lanes' histories. Returns the steps done; h holds the histories after them.
template <class T, class Step>
inline size_t encode_steps(const T* x, const Lanes& lanes, double eb, History h[4], Step&& step) {
  const __m256d ebv = _mm256_set1_pd(eb);
  History4 hv = gather(h);
  const size_t steps = lanes.full_steps();
  for (size_t j = 0; j < steps; ++j) {
    const size_t idx[4] = {lanes.begin[0] + j, lanes.begin[1] + j, lanes.begin[2] + j, lanes.begin[3] + j};
    const __m256d xv = load4(x, idx);
    __m256d p[4];
    predict(hv, p);
    Candidate c[5];
    prediction_candidates<T>(xv, p, ebv, c);
    push(hv, step(idx, xv, p, c));
  }
  scatter(hv, h);
  return steps;
}

inline __m256d within(__m256d x, __m256d y, __m256d eb) {
  return _mm256_cmp_pd(abs_pd(_mm256_sub_pd(x, y)), eb, _CMP_LE_OQ);
}

}  // namespace avx2
#endif

}  // namespace zcoll::fzl::ZCOLL_KERNELS_ISA::lp
