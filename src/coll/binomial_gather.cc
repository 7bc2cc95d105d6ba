// Binomial-tree gather, the scatter tree run backwards: a rank collects its children's
// subtrees in order of increasing size (so they line up after its own block) and sends
// the whole run to its parent.
#include <algorithm>

#include "coll/coll.h"

namespace zcoll::coll {

void binomial_gather(Link& link, int rank, int p, int root, const std::vector<int>& seg_of_vrank) {
  const int vr = (rank - root + p) % p;
  for (int mask = 1; mask < p; mask <<= 1) {
    if (vr & mask) {
      link.send(seg_of_vrank.data() + vr, std::min(mask, p - vr), (vr - mask + root) % p);
      link.wait_sends();
      return;
    }
    const int child = vr + mask;
    if (child < p) link.recv(seg_of_vrank.data() + child, std::min(mask, p - child), (child + root) % p);
  }
}

}  // namespace zcoll::coll
