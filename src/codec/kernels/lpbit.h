// The lpbit encoder, a stage of the chunk kernels (kernels/common.h), and what its
// (scalar) decoder in lpbit.cc shares with it; lpbit.cc describes the format.
#pragma once
#include "codec/kernels/lp.h"

namespace zcoll::fzl::ZCOLL_KERNELS_ISA::lpbit {

constexpr unsigned kMaxWidth = 6;
constexpr uint64_t kMantMask = (uint64_t{1} << 52) - 1;

// The decision for one value (pass 1 of the encoder), one word each:
//   bits 62-63  kind: hit, miss or escape
//   hit:  bits 0-1 the prediction order
//   miss: bit 61 the sign, bits 52-57 the exponent code c, bits 0-51 the m kept bits
enum : uint64_t { kHit = uint64_t{0} << 62, kResidual = uint64_t{1} << 62, kEscape = uint64_t{2} << 62 };
constexpr uint64_t kKindMask = uint64_t{3} << 62;

// The most mantissa bits a residual may keep: a miss is never larger than an escape.
template <class T>
constexpr unsigned max_kept() {
  return 8 * sizeof(T) - 2 < 52 ? 8 * sizeof(T) - 2 : 52;
}

inline unsigned kept_bits(unsigned c) { return c ? c - 1 : 0; }

// r' from its fields (the encoder builds it the same way before checking it).
inline double residual(uint64_t sign, int e, uint64_t t, unsigned m) {
  uint64_t b = (sign << 63) | (static_cast<uint64_t>(e + 1023) << 52);
  if (m < 52) b |= (t << (52 - m)) | (uint64_t{1} << (51 - m));
  else b |= t;
  return load<double>(&b);
}

// LSB-first bit writer for fields of up to 56 bits. Branch free (entries of 3 and of
// 10-odd bits alternate at random): every put stores the next 8 bytes and advances by the
// whole bytes it completed, so fewer than 8 bits are pending between puts, and it writes
// up to 8 bytes past the bits (worst() leaves room for them).
struct BitWriter {
  static constexpr unsigned kMaxField = 56;
  uint8_t* p;
  uint64_t acc = 0;
  unsigned nbits = 0;
  void put(uint64_t v, unsigned k) {
    acc |= v << nbits;
    nbits += k;
    store_u64(p, acc);
    p += nbits >> 3;
    acc >>= nbits & ~7u;
    nbits &= 7;
  }
  void put_wide(uint64_t v, unsigned k) {  // k <= 64
    if (k > kMaxField) {
      put(v & 0xffffffffu, 32);
      put(v >> 32, k - 32);
    } else {
      put(v, k);
    }
  }
  uint8_t* finish() {
    if (nbits) *p++ = static_cast<uint8_t>(acc);
    return p;
  }
};

// Pass 1 of the encoder for one value: its decision word (above), and the
// reconstruction pushed into the lane's history. Branch free: hit, miss or escape is
// data-dependent.
template <class T>
inline uint64_t decide(T xi, lp::History& h, double eb, int E) {
  double p[4];
  h.predict(p);
  lp::Choice<T> ch(eb);
  lp::offer_predictions(ch, xi, p);
  // The residual from p1, cut to m = c - 1 mantissa bits (computed for every value).
  const double r = static_cast<double>(xi) - p[1];
  const uint64_t rb = bits_of(r), field = (rb >> 52) & 0x7ff;
  const int c = static_cast<int>(field) - 1023 - E;
  const int m = c > 1 ? c - 1 : 0;
  const unsigned mc = m < 52 ? static_cast<unsigned>(m) : 52u;  // safe shifts when m is out of range
  const uint64_t t = (rb & kMantMask) >> (52 - mc);
  const T cand = static_cast<T>(p[1] + residual(rb >> 63, static_cast<int>(field) - 1023, t, mc));
  const bool close = within(xi, cand, eb);  // evaluated for every value, as the rest: no branch
  const bool usable = (field != 0) & (field != 0x7ff) & (c >= 0) & (m <= static_cast<int>(max_kept<T>())) & close;
  const uint64_t hit = uint64_t{0} - static_cast<uint64_t>(ch.hit());
  const uint64_t miss = ~hit & (uint64_t{0} - static_cast<uint64_t>(usable));
  const uint64_t esc = ~hit & ~miss;
  const Bits<T> yb =
      static_cast<Bits<T>>((ch.y & hit) | (bits_of(cand) & miss) | (bits_of(xi) & esc));
  h.push(load<T>(&yb));
  return ((kHit | static_cast<uint64_t>(ch.code & 3)) & hit) |
         ((kResidual | ((rb >> 63) << 61) | (static_cast<uint64_t>(c & 63) << 52) | t) & miss) | (kEscape & esc);
}

#if defined(__AVX2__)
// decide() for the four lanes at once, over the steps in which all of them have a value;
// returns the steps done (the caller finishes the chunk with decide()).
template <class T>
size_t decide_avx2(const T* x, const lp::Lanes& lanes, double eb, int E, lp::History h[4], uint64_t* rec) {
  using namespace lp::avx2;
  const __m256d ebv = _mm256_set1_pd(eb);
  const __m256i bias = _mm256_set1_epi64x(1023 + E), mant = _mm256_set1_epi64x(static_cast<int64_t>(kMantMask));
  const __m256i one = _mm256_set1_epi64x(1), k51 = _mm256_set1_epi64x(51), k52 = _mm256_set1_epi64x(52);
  const __m256i kmax = _mm256_set1_epi64x(max_kept<T>()), fmax = _mm256_set1_epi64x(0x7ff), zero = _mm256_setzero_si256();
  return encode_steps(x, lanes, eb, h, [&](const size_t idx[4], __m256d xv, const __m256d p[4], Candidate* cands) {
    const Choice4 ch = choose(cands, 4);
    const __m256i rb = _mm256_castpd_si256(_mm256_sub_pd(xv, p[1]));
    const __m256i field = _mm256_and_si256(_mm256_srli_epi64(rb, 52), fmax);
    const __m256i c = _mm256_sub_epi64(field, bias);
    const __m256i m = _mm256_and_si256(_mm256_sub_epi64(c, one), _mm256_cmpgt_epi64(c, one));
    const __m256i mc = _mm256_blendv_epi8(m, k52, _mm256_cmpgt_epi64(m, k52));
    const __m256i t = _mm256_srlv_epi64(_mm256_and_si256(rb, mant), _mm256_sub_epi64(k52, mc));
    // residual(): sign and exponent of r, the kept bits, and the midpoint bit below them
    // (a shift by 51 - 52 = -1, i.e. 2^64 - 1, gives 0, as residual() adds none at m = 52).
    const __m256i res = _mm256_or_si256(_mm256_or_si256(_mm256_andnot_si256(mant, rb),
                                                        _mm256_sllv_epi64(t, _mm256_sub_epi64(k52, mc))),
                                        _mm256_sllv_epi64(one, _mm256_sub_epi64(k51, mc)));
    const __m256d cand = round_to<T>(_mm256_add_pd(p[1], _mm256_castsi256_pd(res)));
    const __m256i bad_field = _mm256_or_si256(_mm256_cmpeq_epi64(field, zero), _mm256_cmpeq_epi64(field, fmax));
    const __m256i bad_code = _mm256_or_si256(_mm256_cmpgt_epi64(zero, c), _mm256_cmpgt_epi64(m, kmax));
    const __m256i usable = _mm256_andnot_si256(_mm256_or_si256(bad_field, bad_code),
                                               _mm256_castpd_si256(within(xv, cand, ebv)));
    const __m256i hit = ch.hit;
    const __m256i miss = _mm256_andnot_si256(hit, usable);
    const __m256i esc = _mm256_andnot_si256(_mm256_or_si256(hit, usable), _mm256_set1_epi64x(-1));
    const __m256i hit_word = _mm256_or_si256(_mm256_set1_epi64x(static_cast<int64_t>(kHit)),
                                             _mm256_and_si256(ch.code, _mm256_set1_epi64x(3)));
    const __m256i miss_word = _mm256_or_si256(
        _mm256_or_si256(_mm256_set1_epi64x(static_cast<int64_t>(kResidual)), _mm256_slli_epi64(_mm256_srli_epi64(rb, 63), 61)),
        _mm256_or_si256(_mm256_slli_epi64(_mm256_and_si256(c, _mm256_set1_epi64x(63)), 52), t));
    const __m256i word = _mm256_or_si256(
        _mm256_or_si256(_mm256_and_si256(hit_word, hit), _mm256_and_si256(miss_word, miss)),
        _mm256_and_si256(_mm256_set1_epi64x(static_cast<int64_t>(kEscape)), esc));
    alignas(32) uint64_t w[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(w), word);
    for (int l = 0; l < 4; ++l) rec[idx[l]] = w[l];
    const __m256d y = _mm256_blendv_pd(xv, cand, _mm256_castsi256_pd(miss));
    return _mm256_blendv_pd(y, ch.y, _mm256_castsi256_pd(hit));
  });
}

// Pass 2 of the encoder over the steps in which all four lanes have a value: each entry's
// bits and length computed for the four lanes at once, as write(i) would, then written in
// lane order. A step with an escape, a long exponent code or a field over
// BitWriter::kMaxField bits is written by write(i) instead. Returns the steps done.
template <class Write>
size_t write_steps_avx2(const uint64_t* rec, const lp::Lanes& lanes, unsigned w, BitWriter& bw, Write&& write) {
  const __m256i kind_mask = _mm256_set1_epi64x(static_cast<int64_t>(kKindMask)), one = _mm256_set1_epi64x(1);
  const __m256i hit_kind = _mm256_set1_epi64x(static_cast<int64_t>(kHit));
  const __m256i c_max = _mm256_set1_epi64x(static_cast<int64_t>((uint64_t{1} << w) - 2));  // codes below escape
  const __m256i len_max = _mm256_set1_epi64x(BitWriter::kMaxField), mant = _mm256_set1_epi64x(static_cast<int64_t>(kMantMask));
  const __m128i w1 = _mm_cvtsi32_si128(static_cast<int>(1 + w)), w2 = _mm_cvtsi32_si128(static_cast<int>(2 + w));
  const size_t steps = lanes.full_steps();
  for (size_t j = 0; j < steps; ++j) {
    const size_t idx[4] = {lanes.begin[0] + j, lanes.begin[1] + j, lanes.begin[2] + j, lanes.begin[3] + j};
    const __m256i r = _mm256_setr_epi64x(static_cast<int64_t>(rec[idx[0]]), static_cast<int64_t>(rec[idx[1]]),
                                         static_cast<int64_t>(rec[idx[2]]), static_cast<int64_t>(rec[idx[3]]));
    const __m256i kind = _mm256_and_si256(r, kind_mask);
    const __m256i hit = _mm256_cmpeq_epi64(kind, hit_kind);
    const __m256i c = _mm256_and_si256(_mm256_srli_epi64(r, 52), _mm256_set1_epi64x(63));  // 0 for hits
    const __m256i m = _mm256_and_si256(_mm256_sub_epi64(c, one), _mm256_cmpgt_epi64(c, one));
    // A miss: 0, c (w bits), the sign, the m kept bits.
    const __m256i miss_bits = _mm256_or_si256(
        _mm256_or_si256(_mm256_slli_epi64(c, 1), _mm256_sll_epi64(_mm256_and_si256(_mm256_srli_epi64(r, 61), one), w1)),
        _mm256_sll_epi64(_mm256_and_si256(r, mant), w2));
    const __m256i miss_len = _mm256_add_epi64(m, _mm256_set1_epi64x(2 + w));
    // A hit: 1, the order (2 bits).
    const __m256i hit_bits = _mm256_or_si256(one, _mm256_slli_epi64(_mm256_and_si256(r, _mm256_set1_epi64x(3)), 1));
    const __m256i bits = _mm256_blendv_epi8(miss_bits, hit_bits, hit);
    const __m256i len = _mm256_blendv_epi8(miss_len, _mm256_set1_epi64x(3), hit);
    // Misses that are not escapes, with a code under escape and a field that fits.
    const __m256i plain = _mm256_or_si256(
        hit, _mm256_andnot_si256(_mm256_or_si256(_mm256_cmpgt_epi64(c, c_max), _mm256_cmpgt_epi64(len, len_max)),
                                 _mm256_cmpeq_epi64(kind, _mm256_set1_epi64x(static_cast<int64_t>(kResidual)))));
    if (_mm256_movemask_pd(_mm256_castsi256_pd(plain)) != 0xf) {
      for (int l = 0; l < 4; ++l) write(idx[l]);
      continue;
    }
    alignas(32) uint64_t b[4], n[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(b), bits);
    _mm256_store_si256(reinterpret_cast<__m256i*>(n), len);
    for (int l = 0; l < 4; ++l) bw.put(b[l], static_cast<unsigned>(n[l]));
  }
  return steps;
}
#endif

template <class T>
size_t encode(const T* x, size_t n, size_t /*begin*/, const ChunkGeometry& g, ChunkScratch& s, uint8_t* out) {
  const double eb = g.eb;
  const int E = lp::floor_log2(eb);
  uint64_t* rec = s.words;
  lp::History h[lp::Lanes::kLanes];
  const lp::Lanes lanes(n);
  // Pass 1: decide every value (the reconstruction feeds the next predictions).
  size_t first = 0;
#if defined(__AVX2__)
  if (lanes.count == lp::Lanes::kLanes) first = decide_avx2(x, lanes, eb, E, h, rec);
#endif
  lanes.run([&](int l, size_t i) { rec[i] = decide(load<T>(x + i), h[l], eb, E); }, first);
  size_t count[64] = {};  // misses by exponent code (codes above 53 never occur)
  size_t escapes = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t kind = rec[i] & kKindMask;
    count[(rec[i] >> 52) & 63] += kind == kResidual;
    escapes += kind == kEscape;
  }
  // Pass 2: the bits, in the same order, with the exponent-code width that makes them
  // fewest: codes from 2^w - 1 on go through the escape code (6 more bits each).
  unsigned w = 0;
  size_t best = SIZE_MAX;
  for (unsigned v = 0; v <= kMaxWidth; ++v) {
    size_t bits = escapes * (2 + v + 8 * sizeof(T));
    for (unsigned c = 0; c < 64; ++c) bits += count[c] * ((c + 1 < (1u << v) ? 2 : 9) + v + kept_bits(c));
    if (bits < best) {
      best = bits;
      w = v;
    }
  }
  const uint64_t escape = (uint64_t{1} << w) - 1;
  out[0] = static_cast<uint8_t>(w);
  BitWriter bw{out + 1};
  auto write = [&](size_t i) {
    const uint64_t r = rec[i];
    const uint64_t kind = r & kKindMask;
    const unsigned c = static_cast<unsigned>((r >> 52) & 63);  // 0 for hits
    if ((kind == kEscape) | ((kind == kResidual) & (c >= escape))) {  // rare
      if (kind == kEscape) {
        bw.put(escape << 1, 2 + w);
        bw.put_wide(bits_of(load<T>(x + i)), 8 * sizeof(T));
      } else {
        bw.put(escape << 1 | uint64_t{1} << (1 + w), 2 + w);
        bw.put(c | ((r >> 61) & 1) << 6, 7);
        bw.put_wide(r & kMantMask, kept_bits(c));
      }
      return;
    }
    // A hit or a miss with a short code, without a branch on which (a hit word's
    // mantissa field is its prediction order, so it is masked off).
    const uint64_t hit = uint64_t{0} - static_cast<uint64_t>(kind == kHit);
    const uint64_t head = (hit & (1 | (r & 3) << 1)) | (~hit & (uint64_t{c} << 1 | ((r >> 61) & 1) << (1 + w)));
    const unsigned head_bits = static_cast<unsigned>((hit & 3) | (~hit & (2 + w))), m = kept_bits(c);
    const uint64_t t = r & kMantMask & ~hit;
    if (head_bits + m <= BitWriter::kMaxField) {
      bw.put(head | t << head_bits, head_bits + m);
    } else {
      bw.put(head, head_bits);
      bw.put_wide(t, m);
    }
  };
  size_t written = 0;
#if defined(__AVX2__)
  if (lanes.count == lp::Lanes::kLanes) written = write_steps_avx2(rec, lanes, w, bw, write);
#endif
  lanes.run([&](int, size_t i) { write(i); }, written);
  return static_cast<size_t>(bw.finish() - out);
}

}  // namespace zcoll::fzl::ZCOLL_KERNELS_ISA::lpbit
