// Scatter: the root compresses each child's blocks just before sending them (so its later
// compressions overlap the sends in flight), and they travel compressed down a binomial
// tree; each rank decompresses only its own block.
#include <vector>

#include "coll/algorithms.h"
#include "coll/call.h"

using namespace zcoll::coll;

extern "C" int zcoll_scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, int root, zcoll_comm comm) {
  if (!comm || root < 0 || root >= comm->size) return ZCOLL_ERR_ARG;
  zcoll_comm_s& c = *comm;
  const bool is_root = c.rank == root, in_place = is_root && recvbuf == MPI_IN_PLACE;
  if (bad_rooted_buffers(is_root, sendbuf, sendcount, recvbuf, recvcount)) return ZCOLL_ERR_ARG;
  // The arguments significant on this rank decide; MPI requires the root's send
  // signature to match every receive signature, which makes the decision agree.
  const int count = is_root ? sendcount : recvcount;
  const MPI_Datatype type = is_root ? sendtype : recvtype;
  const size_t n = static_cast<size_t>(count);
  const int p = c.size;
  return run_collective(
      c, ZCOLL_COLL_SCATTER, type, zcoll::type_bytes(type, n), root, -1,
      [&](zcoll_dtype dt, Agreement& a) {
        a.count = count;
        if (!is_root) return;
        a.add_values(dt, sendbuf, n * p, c.cfg.codec.threads);
        const void* own = zcoll::at(sendbuf, static_cast<size_t>(root) * n, zcoll::codec::element_size(dt));
        if (!in_place) a.rc = local_copy(own, count, zcoll::mpi_type(dt), recvbuf, recvcount, recvtype, c.comm);
      },
      [&](zcoll_dtype dt, double eb, const Choice& ch) {
        Transport T(c, dt, ch);
        const std::vector<size_t>& counts = c.workspace.uniform_counts(p, n);
        if (!T.plan(eb, counts.data(), p, Transport::kStored)) return T.finish();
        // Blocks by relative rank: block v belongs to rank (v + root) mod p.
        for (int v = 0; v < p && is_root; ++v) T.place(v, zcoll::at(sendbuf, static_cast<size_t>((v + root) % p) * n, T.es), nullptr);
        if (!is_root) T.place((c.rank - root + p) % p, nullptr, recvbuf);
        binomial_scatter(T, root);
        return T.finish();
      },
      [&] { return MPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, c.comm); });
}
