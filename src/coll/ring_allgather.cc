// Ring allgather: p-1 steps; in step k each rank passes on the block it received in
// step k-1 (its own in step 0). Every link carries (p-1)/p of the data, the
// bandwidth-optimal pattern for large messages.
#include "coll/coll.h"

namespace zcoll::coll {

void ring_allgather(Link& link, int rank, int p, const std::vector<int>& seg_of_rank) {
  const int right = (rank + 1) % p, left = (rank - 1 + p) % p;
  for (int k = 0; k < p - 1; ++k) {
    const int out = seg_of_rank[(rank - k + p) % p];
    const int in = seg_of_rank[(rank - k - 1 + 2 * p) % p];
    link.send(&out, 1, right);
    link.recv(&in, 1, left);
    link.wait_sends();
  }
}

}  // namespace zcoll::coll
