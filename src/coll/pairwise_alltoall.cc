// Pairwise-exchange alltoall: in step k rank r sends its block for r+k and receives the
// block from r-k, so each step is a permutation and no link carries two messages at once.
#include "coll/coll.h"

namespace zcoll::coll {

void pairwise_alltoall(Link& link, int rank, int p) {
  for (int k = 1; k < p; ++k) {
    const int dst = (rank + k) % p, src = (rank - k + p) % p;
    const int out = dst, in = p + src;
    link.send(&out, 1, dst);
    link.recv(&in, 1, src);
    link.wait_sends();
  }
}

}  // namespace zcoll::coll
