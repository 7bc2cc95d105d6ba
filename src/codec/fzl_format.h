// fzl's chunk layout, inside the stream container of container.h (codec byte
// ZCOLL_CODEC_FZL). The kernels (codec/kernels/) write and read it.
//
// An encoded fzl chunk is a sequence of blocks of 32 values (the last one shorter):
//   u8 tag: bits 0-5 code length b (0..32), bit 6 block has exact values,
//           bit 7 alternative predictor (1-D: second-order differences)
//   if b > 0:   u32 sign bits (bit i = residual i negative),
//               then n*b bits of residual magnitudes, value i at bits [i*b, i*b+b), LSB first,
//               padded to a whole byte (32 values x b bits = 4b bytes: whole words)
//   if bit 6:   u32 mask of exact positions, then the exact values (T) in position order
// All-zero blocks cost 1 byte. The residuals come from quantized integers q with
// |q| < 2^30 on the grid x' = q * s, rounded once to the element type, so the integers
// of two streams with the same eb can be added without decompressing; exact positions
// carry the placeholder q[i] = q[i-1] so the prediction chain stays linear in q.
// The grid step s is 2 eb for float64. For float32 it is 2 eb32, eb32 the largest float
// <= eb (the bound the float32 acceptance test applies anyway), so that s is a float and
// q * s, for |q| <= 2^24, is one float multiplication: the encoder and decoder then work
// in single precision and reach the same bits as double arithmetic (version 2; version 1
// used s = 2 eb for both).
#pragma once
#include <cstddef>
#include <cstdint>

#include "codec/chunk_codec.h"
#include "codec/container.h"

namespace zcoll::fzl {

// The kernels are compiled inside this namespace and use these by their short names.
using codec::ChunkGeometry, codec::ChunkRef, codec::ChunkScratch;
using codec::kCombineMax, codec::kCombineMin, codec::kCombineSum;
using codec::Bits, codec::bits_of, codec::load, codec::store, codec::within;
using codec::load_u32, codec::load_u64, codec::store_u32, codec::store_u64;

inline constexpr unsigned kBlock = 32;
inline constexpr unsigned kTagBitsMask = 0x3f;
inline constexpr unsigned kTagExact = 0x40;
inline constexpr unsigned kTagAltPredictor = 0x80;
// |round(x / (2 eb))| must not exceed this for x to be quantized; larger values are
// stored exactly. 2^30 leaves one bit of headroom for adding two streams' integers.
inline constexpr double kQuantLimit = 1073741823.0;  // 2^30 - 1

// Largest encoded block: tag + signs + 32 x 32 bits + exact mask; exact values counted apart.
inline constexpr size_t kMaxBlockOverhead = 1 + 4 + 128 + 4;

inline size_t encoded_chunk_worst(size_t n, size_t esize) {
  return ((n + kBlock - 1) / kBlock) * kMaxBlockOverhead + n * esize;
}

static_assert(kBlock == codec::kChunkLenStep, "a chunk is whole blocks");

}  // namespace zcoll::fzl
