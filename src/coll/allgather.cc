// Allgather and allgatherv: one engine for both. Each rank compresses its block once and
// the compressed blocks travel around a ring, piece by piece (large messages), or through
// Bruck's log2(p) exchanges (short ones, many ranks). A rank's own block is copied, exact.
#include <cstring>
#include <vector>

#include "coll/algorithms.h"
#include "coll/call.h"
#include "coll/engines.h"
#include "coll/hierarchical.h"

namespace zcoll::coll {

int allgather_engine(zcoll_comm_s& c, zcoll_dtype dt, double eb, const Choice& ch, void* recvbuf, const int* counts,
                     const size_t* displs) {
  const int p = c.size, r = c.rank;
  Transport T(c, dt, ch);
  std::vector<size_t>& sizes = c.workspace.counts;
  sizes.assign(counts, counts + p);
  if (!T.plan(eb, sizes.data(), p, Transport::kStored)) return T.finish();
  for (int b = 0; b < p; ++b) {
    void* dst = at(recvbuf, displs[b], T.es);
    T.place(b, b == r ? dst : nullptr, dst);
  }
  if (ch.schedule == ZCOLL_ALGO_BRUCK) bruck_allgather(T);
  else ring_allgather(T);
  return T.finish();
}

namespace {

// The receive blocks in elements: MPI_Allgatherv's counts and displs, or MPI_Allgather's
// one count (arrays made only when the call compresses: a call that runs plain MPI does no
// O(p) work).
struct Blocks {
  const int* counts = nullptr;  // null: `uniform` elements for every rank, in rank order
  const int* displs = nullptr;
  int uniform = 0;
  int count(int b) const { return counts ? counts[b] : uniform; }
  size_t displ(int b) const { return displs ? static_cast<size_t>(displs[b]) : static_cast<size_t>(b) * uniform; }
  size_t total(int p) const {
    if (!counts) return static_cast<size_t>(uniform) * static_cast<size_t>(p);
    size_t t = 0;
    for (int i = 0; i < p; ++i) t += static_cast<size_t>(counts[i]);
    return t;
  }
};

// The decision to compress rests on the receive arguments, which every rank shares; a
// rank's own data comes into its receive block first, whatever its send datatype.
int allgather_call(zcoll_comm_s& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   const Blocks& blocks, MPI_Datatype recvtype) {
  const int p = c.size, r = c.rank;
  const size_t per_rank = type_bytes(recvtype, blocks.total(p)) / static_cast<size_t>(p);
  const int mine = blocks.count(r);
  auto own = [&](zcoll_dtype dt) { return at(recvbuf, blocks.displ(r), codec::element_size(dt)); };
  bool direct = false;
  return run_collective(
      c, ZCOLL_COLL_ALLGATHER, recvtype, per_rank, -1, -1,
      [&](zcoll_dtype dt, Agreement& a) {
        if (blocks.counts) a.set_counts(blocks.counts, p);
        else a.count = blocks.uniform;
        // The same layout on both sides: the values are read where they are, and copied
        // only if the call compresses (plain MPI copies them itself).
        direct = sendbuf != MPI_IN_PLACE && sendtype == recvtype && sendcount == mine;
        if (sendbuf != MPI_IN_PLACE && !direct)
          a.rc = local_copy(sendbuf, sendcount, sendtype, own(dt), mine, recvtype, c.comm);
        a.add_values(dt, direct ? sendbuf : own(dt), static_cast<size_t>(mine), c.cfg.codec.threads);
      },
      [&](zcoll_dtype dt, double eb, const Choice& ch) {
        if (direct && mine > 0) std::memcpy(own(dt), sendbuf, static_cast<size_t>(mine) * codec::element_size(dt));
        std::vector<int>& counts = c.workspace.int_counts;
        if (!blocks.counts) counts.assign(p, blocks.uniform);
        std::vector<size_t>& displs = c.workspace.displs;
        displs.resize(p);
        for (int i = 0; i < p; ++i) displs[i] = blocks.displ(i);
        const int* cs = blocks.counts ? blocks.counts : counts.data();
        if (node_aware(ch.schedule)) return hierarchical_allgather(c, ch.schedule, dt, eb, recvbuf, cs, displs.data());
        return allgather_engine(c, dt, eb, ch, recvbuf, cs, displs.data());
      },
      [&] {
        return blocks.counts ? MPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, blocks.counts, blocks.displs,
                                              recvtype, c.comm)
                             : MPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, blocks.uniform, recvtype, c.comm);
      });
}

}  // namespace
}  // namespace zcoll::coll

using namespace zcoll::coll;

extern "C" {

int zcoll_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                     const int displs[], MPI_Datatype recvtype, zcoll_comm comm) {
  if (!comm || !recvcounts || !displs) return ZCOLL_ERR_ARG;
  long long total = 0;
  for (int i = 0; i < comm->size; ++i) {
    if (recvcounts[i] < 0 || displs[i] < 0) return ZCOLL_ERR_ARG;
    total += recvcounts[i];
  }
  if (bad_buffers(sendbuf, sendcount, recvbuf, total)) return ZCOLL_ERR_ARG;
  Blocks blocks;
  blocks.counts = recvcounts;
  blocks.displs = displs;
  return allgather_call(*comm, sendbuf, sendcount, sendtype, recvbuf, blocks, recvtype);
}

int zcoll_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                    MPI_Datatype recvtype, zcoll_comm comm) {
  if (!comm || bad_buffers(sendbuf, sendcount, recvbuf, recvcount)) return ZCOLL_ERR_ARG;
  Blocks blocks;
  blocks.uniform = recvcount;
  return allgather_call(*comm, sendbuf, sendcount, sendtype, recvbuf, blocks, recvtype);
}

}  // extern "C"
