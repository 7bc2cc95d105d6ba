// AVX2 build of the chunk kernels (this file alone is compiled with -mavx2).
#include "codec/fzl_kernels.h"

#if defined(__x86_64__) && defined(__AVX2__)
#define ZCOLL_KERNELS_ISA avx2_isa
#include "codec/kernels/table.h"

namespace zcoll::fzl {
const Kernels* avx2_kernels() {
  static constexpr Kernels k = avx2_isa::kernel_table("avx2");
  return &k;
}
}  // namespace zcoll::fzl
#else
namespace zcoll::fzl {
const Kernels* avx2_kernels() { return nullptr; }
}  // namespace zcoll::fzl
#endif
