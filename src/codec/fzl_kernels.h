// Chunk kernels of the fzl codec. The same stages (codec/kernels/) are compiled once
// for baseline x86-64 and once for AVX2 into one table each; select_kernels picks a
// table at run time. Both produce bit-identical streams and outputs: all arithmetic
// is integer or single IEEE operations in double, with contraction disabled.
#pragma once
#include <cstddef>
#include <cstdint>

#include "codec/fzl_format.h"

namespace zcoll::fzl {

struct Kernels {
  const char* name;
  // min and max over the finite values of x (lo > hi when there are none)
  void (*range_f32)(const float* x, size_t n, double* lo, double* hi);
  void (*range_f64)(const double* x, size_t n, double* lo, double* hi);
  // fzl's encoder and decoder (chunk_codec.h); worst(n, esize) is encoded_chunk_worst.
  codec::EncodeFn<float> encode_f32;
  codec::EncodeFn<double> encode_f64;
  codec::DecodeFn<float> decode_f32;
  codec::DecodeFn<double> decode_f64;
  // Combines two chunks of n values (see codec/kernels/combine.h). Needs the combination
  // fields of s. Returns the bytes written to out (room for encoded_chunk_worst), with
  // *raw set when they are the raw values, or 0 if either chunk is malformed.
  size_t (*combine_f32)(int op, const ChunkRef& a, const ChunkRef& b, size_t n, size_t begin,
                        const ChunkGeometry& g, ChunkScratch& s, uint8_t* out, bool* raw);
  size_t (*combine_f64)(int op, const ChunkRef& a, const ChunkRef& b, size_t n, size_t begin,
                        const ChunkGeometry& g, ChunkScratch& s, uint8_t* out, bool* raw);
  // op(values x, chunk b) as combine, x quantized as the encoder would (zcoll_combine_values).
  size_t (*fold_f32)(int op, const float* x, const ChunkRef& b, size_t n, size_t begin, const ChunkGeometry& g,
                     ChunkScratch& s, uint8_t* out, bool* raw);
  size_t (*fold_f64)(int op, const double* x, const ChunkRef& b, size_t n, size_t begin, const ChunkGeometry& g,
                     ChunkScratch& s, uint8_t* out, bool* raw);
  // The encoders of the lpbyte and lpbit chunk codecs; their decoders are scalar and not
  // in the table.
  codec::EncodeFn<float> lpbyte_encode_f32;
  codec::EncodeFn<double> lpbyte_encode_f64;
  codec::EncodeFn<float> lpbit_encode_f32;
  codec::EncodeFn<double> lpbit_encode_f64;
  // codec::checksum (container.h), the same value; what a chunk's index entry holds.
  uint32_t (*checksum)(const uint8_t* p, size_t n, uint64_t seed);
};

const Kernels& generic_kernels();
const Kernels* avx2_kernels();  // nullptr when not compiled in
// AVX2 when the CPU has it, unless the environment says ZCOLL_ISA=generic.
const Kernels& select_kernels();

// Selected<&Kernels::f>::call: entry f of the table that the stream operation picked, which
// its chunk geometry carries (the chunk codecs' encoders and decoders, whose arguments
// include it).
template <auto F>
struct Selected;
template <class R, class... A, R (*Kernels::*F)(A...)>
struct Selected<F> {
  static R call(A... a) {
    const codec::ChunkGeometry* g = nullptr;
    ((g = g ? g : geometry_in(a)), ...);
    return ((g && g->kernels ? *g->kernels : select_kernels()).*F)(a...);
  }

 private:
  static const codec::ChunkGeometry* geometry_in(const codec::ChunkGeometry& g) { return &g; }
  template <class X>
  static const codec::ChunkGeometry* geometry_in(const X&) { return nullptr; }
};

}  // namespace zcoll::fzl
