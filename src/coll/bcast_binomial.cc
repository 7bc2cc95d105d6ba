// Binomial-tree broadcast: a rank receives once from its parent and sends to its
// children, largest subtree first; ceil(log2 p) rounds, the root's link carries the data
// log2(p) times. Each piece goes on to the children as soon as it arrives.
#include "coll/algorithms.h"
#include "coll/schedule.h"

namespace zcoll::coll {

void binomial_bcast(Transport& T, int root) {
  using namespace schedule;
  const int p = T.c.size, v = mod(T.c.rank - root, p);
  const BlockRange all{0, static_cast<int>(T.nblocks())};
  Transfers from, to;
  if (v) from.add(mod(binomial_parent(v) + root, p), all);
  for_each_binomial_child(v, p, [&](int kid) { to.add(mod(kid + root, p), all); });
  T.exchange(from, to);
}

}  // namespace zcoll::coll
