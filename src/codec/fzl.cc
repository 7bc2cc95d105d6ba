// fzl as a chunk codec (its block format is fzl_format.h): the kernels of the ISA that
// select_kernels picked for the stream operation (ChunkGeometry::kernels).
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
  // Read at every call, once per stream operation (stream.cc, geometry()), so that tests can
  // compare ISAs in one process.
  const char* isa = std::getenv("ZCOLL_ISA");
  if (isa && std::strcmp(isa, "generic") == 0) return generic_kernels();
  return *best;
}

}  // namespace zcoll::fzl

namespace zcoll::codec {
using fzl::Kernels, fzl::Selected;
const ChunkCodec kFzlChunkCodec{true, 0, fzl::encoded_chunk_worst, Selected<&Kernels::encode_f32>::call,
                                Selected<&Kernels::encode_f64>::call, Selected<&Kernels::decode_f32>::call,
                                Selected<&Kernels::decode_f64>::call};
}  // namespace zcoll::codec
