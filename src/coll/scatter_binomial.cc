// Binomial-tree scatter: the root holds every block; each rank receives the blocks of its
// whole subtree (relative ranks v .. v + subtree - 1) from its parent, keeps its own and
// passes each child the blocks of that child's subtree, each piece as soon as it has it.
#include "coll/algorithms.h"
#include "coll/schedule.h"

namespace zcoll::coll {

void binomial_subtrees(const Transport& T, int root, Transfers* parent, Transfers* children) {
  using namespace schedule;
  const int p = T.c.size, v = mod(T.c.rank - root, p);
  if (v) parent->add(mod(binomial_parent(v) + root, p), binomial_subtree_ids(v, p));
  for_each_binomial_child(v, p, [&](int kid) { children->add(mod(kid + root, p), binomial_subtree_ids(kid, p)); });
}

void binomial_scatter(Transport& T, int root) {
  Transfers parent, children;
  binomial_subtrees(T, root, &parent, &children);
  T.exchange(parent, children);
}

}  // namespace zcoll::coll
