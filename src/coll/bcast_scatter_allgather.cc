// Bcast of large buffers (van de Geijn): the buffer is cut into p blocks, scattered down
// a binomial tree and then gathered by all in a ring. Each byte leaves any rank about
// twice, where the binomial tree sends it log2(p) times from the root.
#include "coll/algorithms.h"
#include "coll/schedule.h"

namespace zcoll::coll {

void scatter_allgather_bcast(Transport& T, int root) {
  binomial_scatter(T, root);
  ring_allgather(T, root);  // after the scatter rank x holds block (x - root) mod p
}

}  // namespace zcoll::coll
