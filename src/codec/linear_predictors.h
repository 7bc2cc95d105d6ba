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
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace zcoll::fzl::lp {

// Callers may pass buffers at any byte offset: element access through memcpy.
template <class T>
inline T load(const void* p) { T v; std::memcpy(&v, p, sizeof v); return v; }
template <class T>
inline void store(void* p, T v) { std::memcpy(p, &v, sizeof v); }

template <class T>
using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;

template <class T>
inline Bits<T> bits_of(T v) {
  return load<Bits<T>>(&v);
}

// The guarantee, evaluated exactly as stated: |x - y| <= eb in double, y already in the
// element type. False for NaN, and for any non-finite y when x is finite.
template <class T>
inline bool within(T x, T y, double eb) {
  return std::fabs(static_cast<double>(x) - static_cast<double>(y)) <= eb;
}

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
  // f(lane, i) for every value i of the chunk, in the order above.
  template <class F>
  void run(F&& f) const {
    if (count == kLanes) step<kLanes>(f);
    else step<1>(f);
  }

 private:
  template <int L, class F>
  void step(F& f) const {
    size_t steps = 0;  // the longest segment (lengths differ by at most one)
    for (int l = 0; l < L; ++l) steps = begin[l + 1] - begin[l] > steps ? begin[l + 1] - begin[l] : steps;
    for (size_t j = 0; j < steps; ++j) {
#pragma GCC unroll 4
      for (int l = 0; l < L; ++l) {
        const size_t i = begin[l] + j;
        if (i < begin[l + 1]) f(l, i);
      }
    }
  }
};

}  // namespace zcoll::fzl::lp
