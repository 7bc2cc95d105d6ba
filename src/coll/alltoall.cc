// Alltoall: pairwise exchange. The compressed path runs on the piece engine: each
// outgoing block is compressed piece by piece as its step sends it, and each incoming
// piece is decompressed as it arrives (pairwise_alltoall.cc). CPRP2P, the baseline,
// sends whole blocks over a Link.
#include "coll/pieces.h"

namespace zcoll::coll {
namespace {

int alltoall_engine(zcoll_comm_s& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    int recvcount, MPI_Datatype recvtype, zcoll_dtype dt) {
  const int p = c.size, r = c.rank;
  const size_t count = static_cast<size_t>(recvcount);
  const size_t es = codec::element_size(dt), block = count * es;
  Run run(c, dt, choose(c, {ZCOLL_ALGO_PAIRWISE}, ZCOLL_ALGO_PAIRWISE));
  const bool in_place = sendbuf == MPI_IN_PLACE;
  // A send datatype other than the receive one is converted to plain floats first (the
  // receive arguments decide). In place, the outgoing blocks live in recvbuf, which the
  // exchange overwrites: the pieces path compresses them all before the first step; the
  // baseline compresses at send time, so it works from a copy.
  std::vector<char> copy;
  if (in_place && run.algorithm == ZCOLL_ALGO_CPRP2P) {
    copy.assign(static_cast<const char*>(recvbuf), static_cast<const char*>(recvbuf) + block * p);
    sendbuf = copy.data();
  } else if (in_place) {
    sendbuf = recvbuf;
  } else if (sendtype != recvtype || sendcount != recvcount) {
    MPI_Aint lb = 0, extent = 0;
    if (MPI_Type_get_extent(sendtype, &lb, &extent) != MPI_SUCCESS) return ZCOLL_ERR_MPI;
    copy.resize(block * p);
    for (int d = 0; d < p; ++d) {
      const int rc = local_copy(static_cast<const char*>(sendbuf) + static_cast<MPI_Aint>(d) * sendcount * extent,
                                sendcount, sendtype, copy.data() + block * d, recvcount, recvtype, c.comm);
      if (rc) return rc;
    }
    sendbuf = copy.data();
  }
  double eb = 0;
  int rc = run.resolve_eb(sendbuf, count * p, true, 0, &eb);
  if (rc) return rc;
  const size_t own = static_cast<size_t>(r) * count;
  if (!in_place) std::memcpy(at(recvbuf, own, es), at(sendbuf, own, es), block);

  if (run.algorithm == ZCOLL_ALGO_CPRP2P) {
    run.segs.resize(2 * static_cast<size_t>(p));
    for (int i = 0; i < p; ++i) {
      run.segs[i].count = run.segs[p + i].count = count;
      run.segs[i].src = at(sendbuf, static_cast<size_t>(i) * count, es);
      run.segs[p + i].dst = i == r ? nullptr : at(recvbuf, static_cast<size_t>(i) * count, es);
    }
    run.make_link(eb, 0);
    pairwise_alltoall(*run.link, r, p);
    return run.finish();
  }

  Pieces R(c, dt);
  R.set_bound(eb);
  R.in = static_cast<const uint8_t*>(sendbuf);
  const std::vector<size_t> counts(p, count);
  rc = R.plan(counts.data(), in_place ? Pieces::Layout::kResultAndBlocks : Pieces::Layout::kBlockSets);
  if (rc) return rc;
  for (int d = 0; in_place && d < p; ++d) {
    if (d == r) continue;  // own block: stays in place
    for (size_t i = R.first_piece[d]; i < R.first_piece[d + 1]; ++i)
      R.result_len[i] = R.compress_input(i, R.result + R.slot[i]);
  }
  pairwise_alltoall_pieces(R, in_place, recvbuf);
  return R.finish(run.algorithm, eb, run.t0);
}

}  // namespace
}  // namespace zcoll::coll

using namespace zcoll::coll;

extern "C" int zcoll_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                              MPI_Datatype recvtype, zcoll_comm comm) {
  if (!comm) return ZCOLL_ERR_ARG;
  zcoll_comm_s& c = *comm;
  if (bad_buffers(sendbuf, sendcount, recvbuf, recvcount)) return ZCOLL_ERR_ARG;
  zcoll_dtype dt;
  if (use_compression(c, recvtype, type_bytes(recvtype, static_cast<size_t>(recvcount)), &dt))
    return guarded([&] { return alltoall_engine(c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, dt); });
  plain(c);
  return mpi_rc(MPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, c.comm));
}
