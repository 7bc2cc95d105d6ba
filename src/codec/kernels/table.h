// The kernel table of one ISA: what an ISA's translation unit hands to select_kernels.
#pragma once
#include "codec/kernels/checksum.h"
#include "codec/kernels/combine.h"
#include "codec/kernels/lpbit.h"
#include "codec/kernels/lpbyte.h"
#include "codec/kernels/range.h"

namespace zcoll::fzl::ZCOLL_KERNELS_ISA {

// decode_chunk without its integer output, for the table's signature.
template <class T>
bool decode_values(const uint8_t* in, size_t bytes, const uint8_t* end, size_t n, size_t begin,
                   const ChunkGeometry& g, ChunkScratch& s, T* out) {
  return decode_chunk<T>(in, bytes, end, n, begin, g, s, out);
}

inline constexpr Kernels kernel_table(const char* name) {
  return {name,
          finite_range<float>,  finite_range<double>,
          encode_chunk<float>,  encode_chunk<double>,
          decode_values<float>, decode_values<double>,
          combine_chunk<float>, combine_chunk<double>,
          fold_chunk<float>,    fold_chunk<double>,
          lpbyte::encode<float>, lpbyte::encode<double>,
          lpbit::encode<float>,  lpbit::encode<double>,
          chunk_checksum};
}

}  // namespace zcoll::fzl::ZCOLL_KERNELS_ISA
