// Allgather and allgatherv: one engine for both. Each rank compresses its block once and
// the compressed blocks travel around a ring, piece by piece on the piece engine (large
// messages), or whole through Bruck's log2(p) exchanges after the ranks agree on sizes
// and errors (short ones).
#include <numeric>

#include "coll/pieces.h"

namespace zcoll::coll {
namespace {

// counts and displs in elements, as MPI_Allgatherv takes them.
// The decision to compress rests on the receive arguments, which every rank shares; a
// rank's own data comes into its receive block first, whatever its send datatype.
int allgather_engine(zcoll_comm_s& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, zcoll_dtype dt,
                     MPI_Datatype recvtype, void* recvbuf, const int* counts, const int* displs) {
  const int p = c.size, r = c.rank;
  const size_t es = codec::element_size(dt);
  size_t total = 0;
  for (int i = 0; i < p; ++i) total += static_cast<size_t>(counts[i]);
  const size_t per_rank = total * es / p;
  // Bruck's log2(p) rounds beat the ring's p-1 when latency dominates (as in MPICH's
  // defaults for short messages); the ring moves the same bytes in balanced steps.
  const int fallback = (p >= 8 && per_rank < (size_t{256} << 10)) ? ZCOLL_ALGO_BRUCK : ZCOLL_ALGO_RING;
  Run run(c, dt, choose(c, {ZCOLL_ALGO_RING, ZCOLL_ALGO_BRUCK}, fallback));
  run.segs.resize(p);
  for (int i = 0; i < p; ++i) {
    run.segs[i].count = static_cast<size_t>(counts[i]);
    run.segs[i].dst = at(recvbuf, displs[i], es);
  }
  const void* own = run.segs[r].dst;
  run.segs[r].src = own;
  int rc = sendbuf == MPI_IN_PLACE
               ? ZCOLL_SUCCESS
               : local_copy(sendbuf, sendcount, sendtype, run.segs[r].dst, counts[r], recvtype, c.comm);
  if (rc) return rc;
  double eb = 0;
  rc = run.resolve_eb(own, run.segs[r].count, true, 0, &eb);
  if (rc) return rc;
  if (run.algorithm == ZCOLL_ALGO_RING) {
    Pieces R(c, dt);
    R.set_bound(eb);
    const std::vector<size_t> sizes(counts, counts + p);
    rc = R.plan(sizes.data(), Pieces::Layout::kResult);
    if (rc) return rc;
    ring_allgather_pieces(R, recvbuf, displs);
    return R.finish(run.algorithm, eb, run.t0);
  }
  std::vector<int> all(p);
  std::iota(all.begin(), all.end(), 0);
  run.make_link(eb, run.bound(all));
  if (run.algorithm != ZCOLL_ALGO_CPRP2P) {
    // Compress once, then agree (sizes and errors) before any data moves.
    long long mine = run.compress({r}) ? -1 : static_cast<long long>(run.segs[r].size);
    std::vector<long long> sizes(p);
    if (MPI_Allgather(&mine, 1, MPI_LONG_LONG, sizes.data(), 1, MPI_LONG_LONG, c.comm) != MPI_SUCCESS)
      return ZCOLL_ERR_MPI;
    for (long long s : sizes)
      if (s < 0) return run.link->status() ? run.link->status() : ZCOLL_ERR_INTERNAL;
  }
  std::vector<int> seg_of_rank(all);
  if (run.algorithm == ZCOLL_ALGO_BRUCK) bruck_allgather(*run.link, r, p, seg_of_rank);
  else ring_allgather(*run.link, r, p, seg_of_rank);  // CPRP2P
  return run.finish();
}

bool bad_counts(const int* counts, const int* displs, int p) {
  if (!counts || !displs) return true;
  for (int i = 0; i < p; ++i)
    if (counts[i] < 0 || displs[i] < 0) return true;
  return false;
}

}  // namespace
}  // namespace zcoll::coll

using namespace zcoll::coll;

extern "C" {

int zcoll_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                     const int displs[], MPI_Datatype recvtype, zcoll_comm comm) {
  if (!comm) return ZCOLL_ERR_ARG;
  zcoll_comm_s& c = *comm;
  if (bad_counts(recvcounts, displs, c.size)) return ZCOLL_ERR_ARG;
  long long total = 0;
  for (int i = 0; i < c.size; ++i) total += recvcounts[i];
  if (bad_buffers(sendbuf, sendcount, recvbuf, total)) return ZCOLL_ERR_ARG;
  zcoll_dtype dt;
  if (use_compression(c, recvtype, type_bytes(recvtype, static_cast<size_t>(total)) / c.size, &dt))
    return guarded([&] {
      return allgather_engine(c, sendbuf, sendcount, sendtype, dt, recvtype, recvbuf, recvcounts, displs);
    });
  plain(c);
  return mpi_rc(MPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, c.comm));
}

int zcoll_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                    MPI_Datatype recvtype, zcoll_comm comm) {
  if (!comm) return ZCOLL_ERR_ARG;
  zcoll_comm_s& c = *comm;
  if (bad_buffers(sendbuf, sendcount, recvbuf, recvcount)) return ZCOLL_ERR_ARG;
  zcoll_dtype dt;
  if (use_compression(c, recvtype, type_bytes(recvtype, static_cast<size_t>(recvcount)), &dt))
    return guarded([&] {
      std::vector<int> counts(c.size, recvcount), displs(c.size);
      for (int i = 0; i < c.size; ++i) displs[i] = i * recvcount;
      return allgather_engine(c, sendbuf, sendcount, sendtype, dt, recvtype, recvbuf, counts.data(), displs.data());
    });
  plain(c);
  return mpi_rc(MPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, c.comm));
}

}  // extern "C"
