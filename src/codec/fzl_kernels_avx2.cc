// AVX2 build of the chunk kernels (this file alone is compiled with -mavx2).
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "codec/fzl_kernels.h"

#if defined(__x86_64__) && defined(__AVX2__)
#include <immintrin.h>

namespace zcoll::fzl {
namespace avx2_isa {
#include "codec/fzl_kernels_impl.h"
}  // namespace avx2_isa

const Kernels* avx2_kernels() {
  static const Kernels k{"avx2", avx2_isa::range_f32, avx2_isa::range_f64, avx2_isa::encode_f32, avx2_isa::encode_f64, avx2_isa::decode_f32,
                         avx2_isa::decode_f64, avx2_isa::combine_f32, avx2_isa::combine_f64, avx2_isa::fold_f32, avx2_isa::fold_f64};
  return &k;
}
}  // namespace zcoll::fzl
#else
namespace zcoll::fzl {
const Kernels* avx2_kernels() { return nullptr; }
}  // namespace zcoll::fzl
#endif
