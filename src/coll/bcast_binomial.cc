// Binomial-tree broadcast: a rank receives once from its parent and sends to its
// children, largest subtree first; ceil(log2 p) rounds, the root's link carries the data
// log2(p) times. Each piece goes on to the children as soon as it arrives.
#include "coll/algorithms.h"
#include "coll/schedule.h"

namespace zcoll::coll {

void binomial_bcast(Transport& T, int root) {
  using namespace schedule;
  const int p = T.c.size, v = mod(T.c.rank - root, p);
  std::vector<int> all(T.nblocks());
  for (size_t b = 0; b < all.size(); ++b) all[b] = static_cast<int>(b);
  std::vector<Transfer> from, to;
  if (v) from.push_back({mod(binomial_parent(v) + root, p), all});
  for (int kid : binomial_children(v, p)) to.push_back({mod(kid + root, p), all});
  T.exchange(from, to);
}

}  // namespace zcoll::coll
