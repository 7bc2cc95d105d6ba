// Binomial-tree broadcast: a rank receives once from the rank that differs in its lowest
// set bit (relative to the root) and then sends to the ranks below it, largest subtree
// first. ceil(log2 p) rounds; the root's link carries the data log2(p) times.
#include "coll/coll.h"

namespace zcoll::coll {

void binomial_bcast(Link& link, int rank, int p, int root, const std::vector<int>& segs) {
  const int vr = (rank - root + p) % p, n = static_cast<int>(segs.size());
  int mask = 1;
  while (mask < p) {
    if (vr & mask) {
      link.recv(segs.data(), n, (vr - mask + root) % p);
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (vr + mask < p) link.send(segs.data(), n, (vr + mask + root) % p);
  link.wait_sends();
}

}  // namespace zcoll::coll
