// The codec's shape hint for an N-dimensional block (a filter's chunk, a writer rank's
// hyperslab): extents of 1 are dropped (they change nothing), and a rank above 3 is folded
// to 3 by merging the slowest dimensions into one, which keeps the product (the element
// count) and the two fastest dimensions' neighbours for the Lorenzo predictor.
#pragma once
#include <cstdint>

namespace zcoll::h5 {

// Writes 1-3 extents to out and returns how many. ext holds n >= 0 extents, slowest first.
template <class Extent>
int fold_shape(const Extent* ext, int n, uint64_t out[3]) {
  uint64_t kept[64];
  int r = 0;
  for (int i = 0; i < n && r < 64; ++i)
    if (ext[i] != 1) kept[r++] = static_cast<uint64_t>(ext[i]);
  if (r == 0) kept[r++] = 1;
  if (r <= 3) {
    for (int i = 0; i < r; ++i) out[i] = kept[i];
    return r;
  }
  uint64_t slow = 1;
  for (int i = 0; i < r - 2; ++i) slow *= kept[i];
  out[0] = slow;
  out[1] = kept[r - 2];
  out[2] = kept[r - 1];
  return 3;
}

}  // namespace zcoll::h5
