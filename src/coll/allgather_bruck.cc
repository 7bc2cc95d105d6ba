// Bruck allgather: ceil(log2 p) steps for any p (schedule::bruck_step). Fewer messages
// than the ring, so it wins when latency dominates (small messages, many ranks); it
// moves the same bytes per rank.
#include "coll/algorithms.h"
#include "coll/schedule.h"

namespace zcoll::coll {

void bruck_allgather(Transport& T) {
  const int p = T.c.size, r = T.c.rank;
  for (int d = 1; d < p; d *= 2) {
    const schedule::BruckStep s = schedule::bruck_step(r, p, d);
    Transfers from, to;
    from.add(s.from, s.received);
    to.add(s.to, s.sent);
    T.exchange(from, to);
  }
}

}  // namespace zcoll::coll
