// Bcast, scatter and gather: the root's data (or every rank's block, for gather) is
// compressed once by its owner (the root's, block by block as the schedule first sends
// them) and travels compressed down (or up) a binomial tree; large
// broadcasts split the buffer into p pieces, scatter them and allgather them in a ring.
// The root never decompresses its own data.
#include <numeric>

#include "coll/frontend.h"

namespace zcoll::coll {
namespace {

// Relative ranks in the binomial subtree rooted at vr: vr .. vr + subtree(vr) - 1.
int subtree(int vr, int p) { return vr ? std::min(vr & -vr, p - vr) : p; }

std::vector<int> range(int first, int n) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

int bcast_engine(zcoll_comm_s& c, void* buf, size_t count, zcoll_dtype dt, int root) {
  const int p = c.size, r = c.rank;
  const size_t es = codec::element_size(dt);
  // Scatter + allgather sends each byte about twice from any rank, where the tree sends it
  // log2(p) times from the root: better once the buffer is large and the tree deep.
  const bool large = p > 3 && count * es >= (size_t{512} << 10);
  Run run(c, dt, choose(c, {ZCOLL_ALGO_BINOMIAL, ZCOLL_ALGO_SCATTER_ALLGATHER},
                        large ? ZCOLL_ALGO_SCATTER_ALLGATHER : ZCOLL_ALGO_BINOMIAL));
  const bool pieces = run.algorithm == ZCOLL_ALGO_SCATTER_ALLGATHER ||
                      (run.algorithm == ZCOLL_ALGO_CPRP2P && large);
  const int nseg = pieces ? p : 1;
  run.segs.resize(nseg);
  for (int i = 0; i < nseg; ++i) {
    const size_t b = count * i / nseg, e = count * (i + 1) / nseg;
    Segment& s = run.segs[i];
    s.count = e - b;
    if (r == root) s.src = at(buf, b, es);
    else s.dst = at(buf, b, es);
  }
  double eb = 0;
  int rc = run.resolve_eb(buf, count, false, root, &eb);
  if (rc) return rc;
  const std::vector<int> all = range(0, nseg);
  // With pieces, a rank keeps what the scatter brought (or, at the root, all it
  // compressed) and then receives the ring's p-1 pieces after it: room for both.
  run.make_link(eb, run.bound(all) * (pieces ? 2 : 1));
  if (r == root) compress_at_first_send(*run.link, all);
  if (pieces) {
    binomial_scatter(*run.link, r, p, root, all);
    std::vector<int> seg_of_rank(p);
    for (int i = 0; i < p; ++i) seg_of_rank[i] = (i - root + p) % p;
    ring_allgather(*run.link, r, p, seg_of_rank);
  } else {
    binomial_bcast(*run.link, r, p, root, all);
  }
  rc = run.finish();
  return rc;
}

// Segment v belongs to relative rank v, i.e. to rank (v + root) mod p.
int scatter_engine(zcoll_comm_s& c, const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                   size_t count, zcoll_dtype dt, int root) {
  const int p = c.size, r = c.rank, vr = (r - root + p) % p;
  const size_t es = codec::element_size(dt);
  Run run(c, dt, choose(c, {ZCOLL_ALGO_BINOMIAL}, ZCOLL_ALGO_BINOMIAL));
  run.segs.resize(p);
  for (int v = 0; v < p; ++v) {
    run.segs[v].count = count;
    if (r == root) run.segs[v].src = at(sendbuf, static_cast<size_t>((v + root) % p) * count, es);
  }
  const bool in_place = r == root && recvbuf == MPI_IN_PLACE;
  int rc = ZCOLL_SUCCESS;
  if (r != root) run.segs[vr].dst = recvbuf;
  else if (!in_place)
    rc = local_copy(run.segs[0].src, static_cast<int>(count), dt == ZCOLL_FLOAT32 ? MPI_FLOAT : MPI_DOUBLE, recvbuf,
                    recvcount, recvtype, c.comm);
  if (rc) return rc;
  double eb = 0;
  rc = run.resolve_eb(sendbuf, r == root ? count * p : 0, false, root, &eb);
  if (rc) return rc;
  run.make_link(eb, run.bound(range(vr, subtree(vr, p))));  // a rank holds its subtree's blocks
  if (r == root) compress_at_first_send(*run.link, range(1, p - 1));  // each child's blocks in its turn
  binomial_scatter(*run.link, r, p, root, range(0, p));
  return run.finish();
}

int gather_engine(zcoll_comm_s& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  size_t count, zcoll_dtype dt, int root) {
  const int p = c.size, r = c.rank, vr = (r - root + p) % p;
  const size_t es = codec::element_size(dt);
  Run run(c, dt, choose(c, {ZCOLL_ALGO_BINOMIAL}, ZCOLL_ALGO_BINOMIAL));
  const bool in_place = r == root && sendbuf == MPI_IN_PLACE;
  const void* own = in_place ? at(recvbuf, static_cast<size_t>(root) * count, es) : sendbuf;
  run.segs.resize(p);
  for (int v = 0; v < p; ++v) {
    run.segs[v].count = count;
    if (r == root) run.segs[v].dst = at(recvbuf, static_cast<size_t>((v + root) % p) * count, es);
  }
  run.segs[vr].src = own;
  int rc = ZCOLL_SUCCESS;
  if (r == root && !in_place) {
    rc = local_copy(own, sendcount, sendtype, run.segs[0].dst, static_cast<int>(count),
                    dt == ZCOLL_FLOAT32 ? MPI_FLOAT : MPI_DOUBLE, c.comm);
    run.segs[0].src = own = run.segs[0].dst;
  }
  if (rc) return rc;
  double eb = 0;
  rc = run.resolve_eb(own, count, true, root, &eb);
  if (rc) return rc;
  run.make_link(eb, run.bound(range(vr, subtree(vr, p))));
  if (r != root) run.compress({vr});
  binomial_gather(*run.link, r, p, root, range(0, p));
  return run.finish();
}

}  // namespace
}  // namespace zcoll::coll

using namespace zcoll::coll;

extern "C" {

int zcoll_bcast(void* buffer, int count, MPI_Datatype datatype, int root, zcoll_comm comm) {
  if (!comm) return ZCOLL_ERR_ARG;
  zcoll_comm_s& c = *comm;
  if (count < 0 || root < 0 || root >= c.size || (count > 0 && !buffer)) return ZCOLL_ERR_ARG;
  zcoll_dtype dt;
  if (use_compression(c, datatype, type_bytes(datatype, static_cast<size_t>(count)), &dt))
    return guarded([&] { return bcast_engine(c, buffer, static_cast<size_t>(count), dt, root); });
  plain(c);
  return mpi_rc(MPI_Bcast(buffer, count, datatype, root, c.comm));
}

int zcoll_scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, int root, zcoll_comm comm) {
  if (!comm) return ZCOLL_ERR_ARG;
  zcoll_comm_s& c = *comm;
  if (root < 0 || root >= c.size) return ZCOLL_ERR_ARG;
  const bool is_root = c.rank == root, in_place = is_root && recvbuf == MPI_IN_PLACE;
  // The arguments significant on this rank decide; MPI requires the root's send
  // signature to match every receive signature, which makes the decision agree.
  if ((is_root && sendcount < 0) || (!in_place && recvcount < 0)) return ZCOLL_ERR_ARG;
  if ((is_root && sendcount > 0 && !sendbuf) || (!in_place && recvcount > 0 && !recvbuf)) return ZCOLL_ERR_ARG;
  zcoll_dtype dt;
  const int count = is_root ? sendcount : recvcount;
  const MPI_Datatype type = is_root ? sendtype : recvtype;
  if (use_compression(c, type, type_bytes(type, static_cast<size_t>(count)), &dt))
    return guarded(
        [&] { return scatter_engine(c, sendbuf, recvbuf, recvcount, recvtype, static_cast<size_t>(count), dt, root); });
  plain(c);
  return mpi_rc(MPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, c.comm));
}

int zcoll_gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, zcoll_comm comm) {
  if (!comm) return ZCOLL_ERR_ARG;
  zcoll_comm_s& c = *comm;
  if (root < 0 || root >= c.size) return ZCOLL_ERR_ARG;
  const bool is_root = c.rank == root, in_place = is_root && sendbuf == MPI_IN_PLACE;
  if ((is_root && recvcount < 0) || (!in_place && sendcount < 0)) return ZCOLL_ERR_ARG;
  if ((is_root && recvcount > 0 && !recvbuf) || (!in_place && sendcount > 0 && !sendbuf)) return ZCOLL_ERR_ARG;
  zcoll_dtype dt;
  const int count = is_root ? recvcount : sendcount;
  const MPI_Datatype type = is_root ? recvtype : sendtype;
  if (use_compression(c, type, type_bytes(type, static_cast<size_t>(count)), &dt))
    return guarded(
        [&] { return gather_engine(c, sendbuf, sendcount, sendtype, recvbuf, static_cast<size_t>(count), dt, root); });
  plain(c);
  return mpi_rc(MPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, c.comm));
}

}  // extern "C"
