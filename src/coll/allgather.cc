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
                     const int* displs) {
  const int p = c.size, r = c.rank;
  Transport T(c, dt, ch);
  const std::vector<size_t> sizes(counts, counts + p);
  T.plan(eb, sizes.data(), p, Transport::Layout::kStored);
  for (int b = 0; b < p; ++b) {
    void* dst = at(recvbuf, static_cast<size_t>(displs[b]), T.es);
    T.place(b, b == r ? dst : nullptr, dst);
  }
  if (ch.schedule == ZCOLL_ALGO_BRUCK) bruck_allgather(T);
  else ring_allgather(T);
  return T.finish();
}

namespace {

// counts and displs in elements, as MPI_Allgatherv takes them. The decision to compress
// rests on the receive arguments, which every rank shares; a rank's own data comes into
// its receive block first, whatever its send datatype.
int allgather_call(zcoll_comm_s& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   const int* counts, const int* displs, MPI_Datatype recvtype, bool uniform) {
  const int p = c.size, r = c.rank;
  size_t total = 0;
  for (int i = 0; i < p; ++i) total += static_cast<size_t>(counts[i]);
  const size_t per_rank = type_bytes(recvtype, total) / static_cast<size_t>(p);
  auto own = [&](zcoll_dtype dt) { return at(recvbuf, static_cast<size_t>(displs[r]), codec::element_size(dt)); };
  bool direct = false;
  return run_collective(
      c, ZCOLL_COLL_ALLGATHER, recvtype, per_rank, -1, -1,
      [&](zcoll_dtype dt, Agreement& a) {
        if (uniform) a.count = counts[0];
        else a.set_counts(counts, p);
        // The same layout on both sides: the values are read where they are, and copied
        // only if the call compresses (plain MPI copies them itself).
        direct = sendbuf != MPI_IN_PLACE && sendtype == recvtype && sendcount == counts[r];
        if (sendbuf != MPI_IN_PLACE && !direct)
          a.rc = local_copy(sendbuf, sendcount, sendtype, own(dt), counts[r], recvtype, c.comm);
        a.add_values(dt, direct ? sendbuf : own(dt), static_cast<size_t>(counts[r]), c.cfg.codec.threads);
      },
      [&](zcoll_dtype dt, double eb, const Choice& ch) {
        if (direct && counts[r] > 0)
          std::memcpy(own(dt), sendbuf, static_cast<size_t>(counts[r]) * codec::element_size(dt));
        if (node_aware(ch.schedule))
          return hierarchical_allgather(c, ch.schedule, dt, eb, recvbuf, counts, displs);
        return allgather_engine(c, dt, eb, ch, recvbuf, counts, displs);
      },
      [&] {
        return uniform ? MPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, counts[0], recvtype, c.comm)
                       : MPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, counts, displs, recvtype, c.comm);
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
  return allgather_call(*comm, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, false);
}

int zcoll_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                    MPI_Datatype recvtype, zcoll_comm comm) {
  if (!comm || bad_buffers(sendbuf, sendcount, recvbuf, recvcount)) return ZCOLL_ERR_ARG;
  return zcoll::guarded([&] {
    std::vector<int> counts(comm->size, recvcount), displs(comm->size);
    for (int i = 0; i < comm->size; ++i) displs[i] = i * recvcount;
    return allgather_call(*comm, sendbuf, sendcount, sendtype, recvbuf, counts.data(), displs.data(), recvtype, true);
  });
}

}  // extern "C"
