// Gather: each rank compresses its block once; blocks travel compressed up a binomial
// tree, each piece passed on as soon as it arrives, and only the root decompresses.
#include <vector>

#include "coll/algorithms.h"
#include "coll/call.h"

using namespace zcoll::coll;

extern "C" int zcoll_gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, int root, zcoll_comm comm) {
  if (!comm || root < 0 || root >= comm->size) return ZCOLL_ERR_ARG;
  zcoll_comm_s& c = *comm;
  const bool is_root = c.rank == root, in_place = is_root && sendbuf == MPI_IN_PLACE;
  if (bad_rooted_buffers(is_root, recvbuf, recvcount, sendbuf, sendcount)) return ZCOLL_ERR_ARG;
  const int count = is_root ? recvcount : sendcount;
  const MPI_Datatype type = is_root ? recvtype : sendtype;
  const size_t n = static_cast<size_t>(count);
  const int p = c.size;
  const void* own = sendbuf;  // this rank's block as plain floats (the root's: in recvbuf)
  return run_collective(
      c, ZCOLL_COLL_GATHER, type, zcoll::type_bytes(type, n), root, -1,
      [&](zcoll_dtype dt, Agreement& a) {
        a.count = count;
        if (is_root) {
          void* slot = zcoll::at(recvbuf, static_cast<size_t>(root) * n, zcoll::codec::element_size(dt));
          if (!in_place) a.rc = local_copy(sendbuf, sendcount, sendtype, slot, count, zcoll::mpi_type(dt), c.comm);
          own = slot;
        }
        a.add_values(dt, own, n, c.cfg.codec.threads);
      },
      [&](zcoll_dtype dt, double eb, const Choice& ch) {
        Transport T(c, dt, ch);
        const std::vector<size_t>& counts = c.workspace.uniform_counts(p, n);
        if (!T.plan(eb, counts.data(), p, Transport::kStored)) return T.finish();
        // Blocks by relative rank: block v belongs to rank (v + root) mod p.
        const int vr = (c.rank - root + p) % p;
        T.place(vr, own, nullptr);
        for (int v = 0; v < p && is_root; ++v)
          T.place(v, v ? nullptr : own, zcoll::at(recvbuf, static_cast<size_t>((v + root) % p) * n, T.es));
        binomial_gather(T, root);
        return T.finish();
      },
      [&] { return MPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, c.comm); });
}
