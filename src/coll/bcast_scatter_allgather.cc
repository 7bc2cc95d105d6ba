// Bcast of large buffers (van de Geijn): the buffer is cut into p blocks, scattered down
// a binomial tree and then gathered by all in a ring. Each byte leaves any rank about
// twice, where the binomial tree sends it log2(p) times from the root.
#include "coll/algorithms.h"
#include "coll/schedule.h"

namespace zcoll::coll {

void scatter_allgather_bcast(Transport& T, int root) {
  const int p = T.c.size;
  binomial_scatter(T, root);
  std::vector<int> block_of_rank(p);  // after the scatter rank x holds block (x - root) mod p
  for (int x = 0; x < p; ++x) block_of_rank[x] = schedule::mod(x - root, p);
  ring_allgather(T, block_of_rank);
}

}  // namespace zcoll::coll
