// Bruck allgather: ceil(log2 p) steps for any p. In the step of distance d a rank holds
// the blocks of ranks rank .. rank+d-1 and sends them to rank-d, receiving those of
// rank+d .. from rank+d. Fewer messages than the ring, so it wins when latency dominates
// (small messages, many ranks); it moves the same bytes per rank.
#include <algorithm>

#include "coll/coll.h"

namespace zcoll::coll {

void bruck_allgather(Link& link, int rank, int p, const std::vector<int>& seg_of_rank) {
  std::vector<int> out, in;
  for (int d = 1; d < p; d *= 2) {
    const int cnt = std::min(d, p - d);
    out.clear();
    in.clear();
    for (int i = 0; i < cnt; ++i) {
      out.push_back(seg_of_rank[(rank + i) % p]);
      in.push_back(seg_of_rank[(rank + d + i) % p]);
    }
    link.send(out.data(), cnt, (rank - d + p) % p);
    link.recv(in.data(), cnt, (rank + d) % p);
    link.wait_sends();
  }
}

}  // namespace zcoll::coll
