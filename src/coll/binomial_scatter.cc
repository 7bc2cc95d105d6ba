// Binomial-tree scatter: the root holds every block; each rank receives the blocks of its
// whole subtree (relative ranks vr .. vr+s-1) from its parent, keeps its own and passes
// each child the blocks of that child's subtree.
#include <algorithm>

#include "coll/coll.h"

namespace zcoll::coll {

void binomial_scatter(Link& link, int rank, int p, int root, const std::vector<int>& seg_of_vrank) {
  const int vr = (rank - root + p) % p;
  int mask = 1;
  while (mask < p) {
    if (vr & mask) {
      link.recv(seg_of_vrank.data() + vr, std::min(mask, p - vr), (vr - mask + root) % p);
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    const int child = vr + mask;
    if (child < p) link.send(seg_of_vrank.data() + child, std::min(mask, p - child), (child + root) % p);
  }
  link.wait_sends();
}

}  // namespace zcoll::coll
