// Bcast: the root compresses its buffer once, block by block as the schedule first sends
// each block, and the compressed bytes travel down a binomial tree (one block) or are
// scattered and allgathered (p blocks, large buffers). The root never decompresses.
#include <vector>

#include "coll/algorithms.h"
#include "coll/call.h"
#include "coll/engines.h"
#include "coll/hierarchical.h"

namespace zcoll::coll {

int bcast_engine(zcoll_comm_s& c, zcoll_dtype dt, double eb, const Choice& ch, void* buffer, size_t n, int root) {
  const int p = c.size;
  const size_t nb = ch.schedule == ZCOLL_ALGO_SCATTER_ALLGATHER ? static_cast<size_t>(p) : 1;
  Transport T(c, dt, ch);
  if (!T.plan(eb, even_blocks(n, nb, &c.workspace.counts).data(), nb, Transport::kStored)) return T.finish();
  for (size_t b = 0; b < nb; ++b) {
    void* at_b = at(buffer, T.block_begin[b], T.es);
    T.place(static_cast<int>(b), c.rank == root ? at_b : nullptr, c.rank == root ? nullptr : at_b);
  }
  if (nb > 1) scatter_allgather_bcast(T, root);
  else binomial_bcast(T, root);
  return T.finish();
}

}  // namespace zcoll::coll

using namespace zcoll::coll;

extern "C" int zcoll_bcast(void* buffer, int count, MPI_Datatype datatype, int root, zcoll_comm comm) {
  if (!comm || count < 0 || root < 0 || root >= comm->size || (count > 0 && !buffer)) return ZCOLL_ERR_ARG;
  zcoll_comm_s& c = *comm;
  const size_t n = static_cast<size_t>(count), bytes = zcoll::type_bytes(datatype, n);
  return run_collective(
      c, ZCOLL_COLL_BCAST, datatype, bytes, root, -1,
      [&](zcoll_dtype dt, Agreement& a) {
        a.count = count;
        if (c.rank == root) a.add_values(dt, buffer, n, c.cfg.codec.threads);
      },
      [&](zcoll_dtype dt, double eb, const Choice& ch) {
        if (node_aware(ch.schedule)) return hierarchical_bcast(c, ch.schedule, dt, eb, buffer, n, root);
        return bcast_engine(c, dt, eb, ch, buffer, n, root);
      },
      [&] { return MPI_Bcast(buffer, count, datatype, root, c.comm); });
}
