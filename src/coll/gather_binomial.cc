// Binomial-tree gather, the scatter tree run backwards: a rank collects its children's
// subtrees and sends its whole subtree to its parent, each piece as soon as it has it.
#include "coll/algorithms.h"

namespace zcoll::coll {

void binomial_gather(Transport& T, int root) {
  Transfers parent, children;
  binomial_subtrees(T, root, &parent, &children);
  T.exchange(children, parent);
}

}  // namespace zcoll::coll
