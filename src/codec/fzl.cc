// fzl as a chunk codec (its block format is fzl_format.h): the kernels of the ISA that
// select_kernels picks at the time of each call.
#include <cstdlib>
#include <cstring>

#include "codec/chunk_codec.h"
#include "codec/fzl_kernels.h"

namespace zcoll::fzl {

const Kernels& select_kernels() {
  static const Kernels* best = [] {
    const Kernels* avx2 = avx2_kernels();
#if defined(__x86_64__)
    if (avx2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2")) return avx2;
#endif
    (void)avx2;
    return &generic_kernels();
  }();
  // Read on every call (cheap next to a chunk) so tests can compare ISAs in one process.
  const char* isa = std::getenv("ZCOLL_ISA");
  if (isa && std::strcmp(isa, "generic") == 0) return generic_kernels();
  return *best;
}

namespace {
size_t fzl_encode_f32(const float* x, size_t n, size_t begin, const ChunkGeometry& g, ChunkScratch& s, uint8_t* out) {
  return select_kernels().encode_f32(x, n, begin, g, s, out);
}
size_t fzl_encode_f64(const double* x, size_t n, size_t begin, const ChunkGeometry& g, ChunkScratch& s,
                      uint8_t* out) {
  return select_kernels().encode_f64(x, n, begin, g, s, out);
}
bool fzl_decode_f32(const uint8_t* in, size_t bytes, const uint8_t* end, size_t n, size_t begin,
                    const ChunkGeometry& g, ChunkScratch& s, float* out) {
  return select_kernels().decode_f32(in, bytes, end, n, begin, g, s, out);
}
bool fzl_decode_f64(const uint8_t* in, size_t bytes, const uint8_t* end, size_t n, size_t begin,
                    const ChunkGeometry& g, ChunkScratch& s, double* out) {
  return select_kernels().decode_f64(in, bytes, end, n, begin, g, s, out);
}
}  // namespace
}  // namespace zcoll::fzl

namespace zcoll::codec {
const ChunkCodec kFzlChunkCodec{true, 0, fzl::encoded_chunk_worst, fzl::fzl_encode_f32, fzl::fzl_encode_f64,
                                fzl::fzl_decode_f32, fzl::fzl_decode_f64};
}  // namespace zcoll::codec
