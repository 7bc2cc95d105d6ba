// Baseline x86-64 (or any other CPU) build of the chunk kernels.
#define ZCOLL_KERNELS_ISA generic_isa
#include "codec/kernels/table.h"

namespace zcoll::fzl {
const Kernels& generic_kernels() {
  static constexpr Kernels k = generic_isa::kernel_table("generic");
  return k;
}
}  // namespace zcoll::fzl
