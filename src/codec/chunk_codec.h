// Chunk codecs: what fills one chunk of a zcoll stream. The stream container
// (container.h: header, index, checksums, raw-chunk fallback, independent chunks) and the
// engine around it (stream.h) do not depend on how a chunk is encoded; the header's codec
// byte (a zcoll_codec_id) selects one of kCodecs below for every chunk of the stream.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "zcoll.h"

namespace zcoll::fzl {
struct Kernels;  // fzl_kernels.h
}

namespace zcoll::codec {

// Per-thread working memory for one chunk, reused across chunks and calls: mostly fzl's;
// the other codecs use its `words`.
struct ChunkScratch {
  int32_t* q = nullptr;    // quantized integers, chunk_len; q[-2] and q[-1] exist and are 0
  int32_t* r = nullptr;    // residuals, chunk_len
  uint32_t* exact = nullptr;  // per-block masks of values stored exactly
  const uint8_t** exact_src = nullptr;  // decode: where each block's exact values are
  // Homomorphic combination only (null until first used): the second operand's
  // integers (padded like q) and exact masks, and both operands' exact values.
  int32_t* qb = nullptr;
  uint32_t* exact_b = nullptr;
  uint8_t* vals_a = nullptr;
  uint8_t* vals_b = nullptr;
  // Chunk codecs that ask for it (ChunkCodec::scratch_words): that many words per value.
  uint64_t* words = nullptr;
};

// The homomorphic combination's operators (ChunkCodec::homomorphic): zcoll_op's values.
enum CombineOp { kCombineSum = 1, kCombineMin = 2, kCombineMax = 3 };

// A SUM of two values stored exactly. NaN + NaN gives one operand's payload, and which one
// depends on the operand order the compiler chose (it may commute an add): the generic and
// AVX2 kernels of one clang build (-fsanitize=thread) disagreed. Always a's, quieted, so
// the result is the same for every ISA, thread count and compiler. One NaN alone
// propagates whatever the order.
template <class T> inline T exact_sum(T a, T b) { return a != a ? a + a : a + b; }

// Everything an encoder or decoder of one chunk needs to know.
struct ChunkGeometry {
  double eb = 0;                       // the stream's bound
  double twoeb = 0, inv = 0;           // the grid step s (fzl_format.h) and 1 / s
  float eb_f32 = 0;                    // largest float <= eb (the float32 acceptance test)
  // float32 streams whose step is a finite float: s and 1 / s in single precision;
  // 0 when the single-precision path does not apply.
  float twoeb_f32 = 0, inv_f32 = 0;
  int ndims = 1;                       // 1, 2 or 3
  size_t extent[3] = {0, 0, 0};        // dims, slowest first
  // The ISA's kernels (fzl::select_kernels()), picked once per stream operation: picking
  // them reads the environment, and per chunk that halved the codec's speed at 1024-value
  // chunks in an environment of 190 variables (docs/results.md).
  const fzl::Kernels* kernels = nullptr;
};

// The guarantee of the codecs that check it per value (lpbyte, lpbit, szx), evaluated
// exactly as stated: |x - y| <= eb in double, y already in the element type. False for
// NaN, and for any non-finite y when x is finite.
template <class T>
inline bool within(T x, T y, double eb) {
  return std::fabs(static_cast<double>(x) - static_cast<double>(y)) <= eb;
}

// Encode n values (global offset `begin` in the array) into out, which has room for the
// codec's worst(n, sizeof(T)) bytes. Returns the bytes written; the engine stores the chunk
// raw instead when that is not less than the raw size (an encoder may return any value
// >= n * sizeof(T) to ask for that).
template <class T>
using EncodeFn = size_t (*)(const T* x, size_t n, size_t begin, const ChunkGeometry& g, ChunkScratch& s, uint8_t* out);
// Decode an encoded chunk of exactly `bytes` bytes into n values. Reads stay inside
// [in, buffer_end) and writes inside out[0, n). Returns false if the chunk is malformed
// (out may then hold partial results).
template <class T>
using DecodeFn = bool (*)(const uint8_t* in, size_t bytes, const uint8_t* buffer_end, size_t n, size_t begin,
                          const ChunkGeometry& g, ChunkScratch& s, T* out);

struct ChunkCodec {
  bool homomorphic;  // zcoll_combine can combine its streams (fzl only)
  // uint64_t scratch words per chunk value the codec needs in ChunkScratch::words.
  size_t scratch_words;
  // Largest encoded chunk of n values of esize bytes: the room encode needs at out.
  size_t (*worst)(size_t n, size_t esize);
  EncodeFn<float> encode_f32;
  EncodeFn<double> encode_f64;
  DecodeFn<float> decode_f32;
  DecodeFn<double> decode_f64;
};

extern const ChunkCodec kFzlChunkCodec;     // fzl.cc: the ISA-dispatched fzl kernels
extern const ChunkCodec kLpbyteChunkCodec;  // lpbyte.cc
extern const ChunkCodec kLpbitChunkCodec;   // lpbit.cc
extern const ChunkCodec kSzxChunkCodec;     // szx.cc

struct RegisteredCodec {
  uint8_t id;        // zcoll_codec_id, the header's codec byte
  const char* name;  // zcoll_codec_name, lower case
  const ChunkCodec* chunk;
};

// Every codec: the one list that the engine, zcoll_codec_name and zcoll_codec_from_name
// read (and through them the tests and the fuzzers). A new codec needs its id in
// zcoll.h, its ChunkCodec, and one row here.
inline constexpr RegisteredCodec kCodecs[] = {
    {ZCOLL_CODEC_FZL, "fzl", &kFzlChunkCodec},
    {ZCOLL_CODEC_LPBYTE, "lpbyte", &kLpbyteChunkCodec},
    {ZCOLL_CODEC_LPBIT, "lpbit", &kLpbitChunkCodec},
    {ZCOLL_CODEC_SZX, "szx", &kSzxChunkCodec},
};

// The codec with this zcoll_codec_id, or nullptr.
inline const RegisteredCodec* find_codec(int id) {
  for (const RegisteredCodec& c : kCodecs)
    if (c.id == id) return &c;
  return nullptr;
}
inline const ChunkCodec* chunk_codec(int id) {
  const RegisteredCodec* c = find_codec(id);
  return c ? c->chunk : nullptr;
}

}  // namespace zcoll::codec
