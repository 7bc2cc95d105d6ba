// A chunk through all stages: quantize, predict, pack (encode_chunk) and back
// (decode_chunk).
#pragma once
#include "codec/kernels/lorenzo.h"

namespace zcoll::fzl::ZCOLL_KERNELS_ISA {

// Shape-aware residuals of a whole chunk of integers (placeholders already in q), then
// the blocks. masks[b]: exact positions of block b; x: values there.
template <class T>
size_t encode_nd_from_q(const int32_t* q, const uint32_t* masks, const T* x, size_t n, size_t begin,
                        const ChunkGeometry& g, ChunkScratch& s, uint8_t* out) {
  uint8_t* p = out;
  nd_residuals(q, n, begin, g, s.r);
  for (size_t i = 0; i < n; i += kBlock) p = encode_block(s.r + i, block_len(n, i), masks[i / kBlock], x + i, false, p);
  return static_cast<size_t>(p - out);
}

template <class T>
size_t encode_chunk(const T* x, size_t n, size_t begin, const ChunkGeometry& g, ChunkScratch& s, uint8_t* out) {
  int32_t* q = s.q;
  if (g.ndims > 1) {
    for (size_t i = 0; i < n; i += kBlock) {
      s.exact[i / kBlock] = quantize_block(x + i, block_len(n, i), g, q + i);
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
    for (unsigned j = 0; j < 4; ++j) store_q8(q + i + 8 * j, qv[j]);
    if (mask) {
      fill_block_placeholders(q, i, mask);
      for (unsigned j = 0; j < 4; ++j) qv[j] = load_q8(q + i + 8 * j);
    }
    p = encode_block_1d_avx2(qv, prev, mask, x + i, p);
    prev = qv[3];
  }
#endif
  for (; i < n; i += kBlock) {
    const unsigned len = block_len(n, i);
    const uint32_t mask = quantize_block(x + i, len, g, q + i);
    if (mask) fill_block_placeholders(q, i, mask);
    p = encode_block_1d(q + i, len, mask, x + i, p);
  }
  return static_cast<size_t>(p - out);
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
    const unsigned len = block_len(n, i);
    ParsedBlock pb;
    if (!parse_block<T>(p, end, buffer_end, len, r + i, pb)) return false;
    if (pb.alt && g.ndims > 1) return false;
    s.exact[blk] = pb.exact;
    s.exact_src[blk] = pb.exact_src;
    if (g.ndims == 1) {
      if (qout) rebuild_block(r + i, len, pb.alt, pb.b, q1, d1, g, qout + i);
      else rebuild_block(r + i, len, pb.alt, pb.b, q1, d1, g, out + i);
    }
  }
  if (p != end) return false;
  if (g.ndims > 1) {
    int32_t* q = qout ? qout : s.q;
    nd_rebuild(r, n, begin, g, q, [&](size_t i, size_t len) {
      if (!qout) dequantize_run(q + i, len, g, out + i);
    });
  }
  for (size_t blk = 0; blk < nblocks; ++blk) copy_exact(s.exact[blk], s.exact_src[blk], out + blk * kBlock);
  return true;
}

}  // namespace zcoll::fzl::ZCOLL_KERNELS_ISA
