// The zcoll stream format, shared by the CPU encoder/decoder and (later) the GPU kernels.
// The container (header, index, raw chunks) is the same for every codec; the header's
// codec byte says how the encoded chunks are laid out: fzl below, lpbyte in lpbyte.cc,
// lpbit in lpbit.cc, szx in szx.cc (see chunk_codec.h).
//
//   header (64 bytes, little-endian)
//     0  magic "ZCFL"            4  u8 version   5 u8 codec (zcoll_codec_id, kCodecs)
//                                6  u8 dtype     7 u8 ndims
//     8  u64 count              16  f64 eb (absolute)
//    24  u32 chunk_len          28  u32 nchunks
//    32  u64 dims[3]            (dims[ndims..2] are 0)
//    56  u32 checksum of header (this field read as 0) + index
//    60  u32 reserved, 0
//   index: nchunks x { u32 size | kRawChunkFlag, u32 checksum of the chunk's bytes }
//   chunks, back to back, in order.
//
// A chunk holds chunk_len values (the last one the remainder) and is independent:
// the predictor restarts at its first value. A raw chunk is the values verbatim,
// used when encoding would not make the chunk smaller, so the worst case is bounded
// by the input size plus header and index, for every codec. dims (with ndims) describe
// the array; fzl predicts over them, lpbyte, lpbit and szx work in array order and only
// record them.
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
#include <cstring>

namespace zcoll::fzl {

inline constexpr uint8_t kMagic[4] = {'Z', 'C', 'F', 'L'};
inline constexpr uint8_t kFormatVersion = 2;
inline constexpr size_t kHeaderBytes = 64;
inline constexpr size_t kIndexEntryBytes = 8;
inline constexpr uint32_t kRawChunkFlag = 0x80000000u;
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

inline void store_u32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
inline void store_u64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }
inline uint32_t load_u32(const uint8_t* p) { uint32_t v; std::memcpy(&v, p, 4); return v; }
inline uint64_t load_u64(const uint8_t* p) { uint64_t v; std::memcpy(&v, p, 8); return v; }

// A 32-bit checksum that sums an invertible mix of each 8-byte word and its position.
// Every single-bit flip changes the 64-bit sum, and the sum splits into independent
// partial sums, so a GPU can compute it with a plain parallel reduction.
inline uint32_t checksum(const uint8_t* p, size_t n, uint64_t seed = 0) {
  constexpr uint64_t kPos = 0x9E3779B97F4A7C15ull, kMul = 0xD6E8FEB86659FD93ull;
  auto mix = [&](uint64_t w, uint64_t i) {
    uint64_t m = (w ^ (i * kPos)) * kMul;
    return m ^ (m >> 29);
  };
  uint64_t h0 = seed ^ (n * kMul), h1 = 0, h2 = 0, h3 = 0;
  size_t words = n / 8, i = 0;
  for (; i + 4 <= words; i += 4) {
    h0 += mix(load_u64(p + 8 * i), i);
    h1 += mix(load_u64(p + 8 * i + 8), i + 1);
    h2 += mix(load_u64(p + 8 * i + 16), i + 2);
    h3 += mix(load_u64(p + 8 * i + 24), i + 3);
  }
  for (; i < words; ++i) h0 += mix(load_u64(p + 8 * i), i);
  if (n % 8) {
    uint64_t w = 0;
    std::memcpy(&w, p + 8 * words, n % 8);
    h0 += mix(w, words);
  }
  uint64_t h = h0 + h1 + h2 + h3;
  return static_cast<uint32_t>(h ^ (h >> 32));
}

// The header's checksum: the header fields before it, and the whole index.
inline uint32_t header_checksum(const uint8_t* in, size_t nchunks) {
  return checksum(in, 56, 0x5a43464cull) ^ checksum(in + kHeaderBytes, nchunks * kIndexEntryBytes, 0x494e4458ull);
}

// Everything an encoder or decoder of one chunk needs to know.
struct ChunkGeometry {
  double eb = 0;                       // the stream's bound
  double twoeb = 0, inv = 0;           // the grid step s (see above) and 1 / s
  float eb_f32 = 0;                    // largest float <= eb (the float32 acceptance test)
  // float32 streams whose step is a finite float: s and 1 / s in single precision;
  // 0 when the single-precision path does not apply.
  float twoeb_f32 = 0, inv_f32 = 0;
  int ndims = 1;                       // 1, 2 or 3
  size_t stride[3] = {0, 0, 0};        // element strides of the slow dims (ndims > 1)
  size_t extent[3] = {0, 0, 0};        // dims, slowest first
};

}  // namespace zcoll::fzl
