// Baseline x86-64 (or any other CPU) build of the chunk kernels.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "codec/fzl_kernels.h"

namespace zcoll::fzl {
namespace generic_isa {
#include "codec/fzl_kernels_impl.h"
}  // namespace generic_isa

const Kernels& generic_kernels() {
  static const Kernels k{"generic", generic_isa::range_f32, generic_isa::range_f64,
                         generic_isa::encode_f32, generic_isa::encode_f64,
                         generic_isa::decode_f32, generic_isa::decode_f64, generic_isa::combine_f32, generic_isa::combine_f64, generic_isa::fold_f32, generic_isa::fold_f64};
  return k;
}
}  // namespace zcoll::fzl
