// The zcoll stream container, the same for every codec: a header, an index of the
// chunks, then the chunks. The header's codec byte says how the encoded chunks are laid
// out (chunk_codec.h: kCodecs); fzl's layout is in fzl_format.h, the others' at the top
// of lpbyte.cc, lpbit.cc and szx.cc.
//
//   header (64 bytes, little-endian; header_offset below)
//     0  magic "ZCFL"            4  u8 version   5 u8 codec (zcoll_codec_id)
//                                6  u8 dtype     7 u8 ndims
//     8  u64 count              16  f64 eb (absolute)
//    24  u32 chunk_len          28  u32 nchunks
//    32  u64 dims[3]            (dims[ndims..2] are 0)
//    56  u32 checksum of header (this field read as 0) + index
//    60  u32 reserved, 0
//   index: nchunks x { u32 size | kRawChunkFlag, u32 checksum of the chunk's bytes }
//   chunks, back to back, in order.
//
// A chunk holds chunk_len values (the last one the remainder) and is independent: every
// codec's predictor restarts at its first value, so a stream is the same for any thread
// count and any chunk can be decoded on its own. A raw chunk is the values verbatim,
// used when encoding would not make the chunk smaller, so the worst case is bounded by
// the input size plus header and index, for every codec. dims (with ndims) describe the
// array; fzl predicts over them, the other codecs work in array order and only record
// them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "zcoll.h"

namespace zcoll::codec {

inline constexpr uint8_t kMagic[4] = {'Z', 'C', 'F', 'L'};
inline constexpr uint8_t kFormatVersion = 2;
inline constexpr size_t kHeaderBytes = 64;
inline constexpr size_t kIndexEntryBytes = 8;
inline constexpr uint32_t kRawChunkFlag = 0x80000000u;
// chunk_len is a multiple of this (fzl's block length), and at least this.
inline constexpr size_t kChunkLenStep = 32;

// One chunk of a stream (an operand of a combination): its bytes as stored, and whether
// they are raw.
struct ChunkRef {
  const uint8_t* p;
  size_t bytes;
  bool raw;
  const uint8_t* end;  // end of the readable buffer (slack for wide loads)
};

// Where each header field starts.
namespace header_offset {
inline constexpr size_t kMagic = 0, kVersion = 4, kCodec = 5, kDtype = 6, kNdims = 7, kCount = 8, kEb = 16,
                        kChunkLen = 24, kNchunks = 28, kDims = 32, kChecksum = 56, kReserved = 60;
}  // namespace header_offset

// Values at any byte offset (callers pass their buffers as they are), through memcpy: one
// plain load or store once compiled. bits_of(v) is v's bits; load<T>(&bits) the value.
template <class T>
inline T load(const void* p) { T v; std::memcpy(&v, p, sizeof v); return v; }
template <class T>
inline void store(void* p, T v) { std::memcpy(p, &v, sizeof v); }
template <class T>
using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
template <class T>
inline Bits<T> bits_of(T v) { return load<Bits<T>>(&v); }

inline void store_u32(uint8_t* p, uint32_t v) { store(p, v); }
inline void store_u64(uint8_t* p, uint64_t v) { store(p, v); }
inline uint32_t load_u32(const uint8_t* p) { return load<uint32_t>(p); }
inline uint64_t load_u64(const uint8_t* p) { return load<uint64_t>(p); }

// A 32-bit checksum that sums an invertible mix of each 8-byte word and its position.
// Every single-bit flip changes the 64-bit sum, and the sum splits into independent
// partial sums, so a GPU can compute it with a plain parallel reduction (and AVX2 four
// words at a time: the kernel table's `checksum`, which the chunks' entries use).
namespace checksum_parts {
inline constexpr uint64_t kPos = 0x9E3779B97F4A7C15ull, kMul = 0xD6E8FEB86659FD93ull;
inline uint64_t mix(uint64_t w, uint64_t i) {
  const uint64_t m = (w ^ (i * kPos)) * kMul;
  return m ^ (m >> 29);
}
// The checksum of the n bytes at p, given `sum`, the mixes of its first `words` words
// added up: the words after them, the bytes after the last whole word, the fold.
inline uint32_t finish(const uint8_t* p, size_t n, uint64_t seed, size_t words, uint64_t sum) {
  uint64_t h = sum + (seed ^ (n * kMul));
  size_t i = words;
  for (; i < n / 8; ++i) h += mix(load_u64(p + 8 * i), i);
  if (n % 8) {
    uint64_t w = 0;
    std::memcpy(&w, p + 8 * i, n % 8);
    h += mix(w, i);
  }
  return static_cast<uint32_t>(h ^ (h >> 32));
}
}  // namespace checksum_parts

inline uint32_t checksum(const uint8_t* p, size_t n, uint64_t seed = 0) {
  using checksum_parts::mix;
  uint64_t h0 = 0, h1 = 0, h2 = 0, h3 = 0;
  size_t i = 0;
  for (; i + 4 <= n / 8; i += 4) {
    h0 += mix(load_u64(p + 8 * i), i);
    h1 += mix(load_u64(p + 8 * i + 8), i + 1);
    h2 += mix(load_u64(p + 8 * i + 16), i + 2);
    h3 += mix(load_u64(p + 8 * i + 24), i + 3);
  }
  return checksum_parts::finish(p, n, seed, i, h0 + h1 + h2 + h3);
}

// The header's checksum: the header fields before it, and the whole index.
inline uint32_t header_checksum(const uint8_t* in, size_t nchunks) {
  return checksum(in, header_offset::kChecksum, 0x5a43464cull) ^
         checksum(in + kHeaderBytes, nchunks * kIndexEntryBytes, 0x494e4458ull);
}

}  // namespace zcoll::codec
