// Alltoall: pairwise exchange, piece by piece (alltoall_pairwise.cc). A send datatype
// other than the receive one is converted to plain floats first (the receive arguments
// decide). In place, the outgoing blocks live in recvbuf, which the exchange overwrites,
// so they are all compressed before the first step.
#include <cstring>
#include <vector>

#include "coll/algorithms.h"
#include "coll/call.h"

using namespace zcoll::coll;

namespace {
// The p blocks of sendbuf as recvcount values of recvtype each, `block` bytes apart in out
// (sized first: the call goes on with out's values whatever the outcome); a zcoll code.
int convert_blocks(const zcoll_comm_s& c, const void* sendbuf, int sendcount, MPI_Datatype sendtype, int recvcount,
                   MPI_Datatype recvtype, size_t block, std::vector<char>* out) {
  out->resize(block * c.size);
  MPI_Aint lb = 0, extent = 0;
  if (MPI_Type_get_extent(sendtype, &lb, &extent) != MPI_SUCCESS) return ZCOLL_ERR_MPI;
  int rc = ZCOLL_SUCCESS;
  for (int d = 0; d < c.size && !rc; ++d)
    rc = local_copy(static_cast<const char*>(sendbuf) + static_cast<MPI_Aint>(d) * sendcount * extent, sendcount,
                    sendtype, out->data() + block * d, recvcount, recvtype, c.comm);
  return rc;
}

// In place, every block this rank sends, compressed before the exchange overwrites it.
void compress_outgoing(Transport& T, int p, int r) {
  for (int d = 0; d < p; ++d) {
    if (d == r) continue;  // own block: stays in place
    for (size_t i = T.first_piece[d]; i < T.first_piece[d + 1]; ++i) T.stored_len[i] = T.compress_src(i, T.stored_slot(i));
  }
}
}  // namespace

extern "C" int zcoll_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                              MPI_Datatype recvtype, zcoll_comm comm) {
  if (!comm || bad_buffers(sendbuf, sendcount, recvbuf, recvcount)) return ZCOLL_ERR_ARG;
  zcoll_comm_s& c = *comm;
  const int p = c.size, r = c.rank;
  const size_t n = static_cast<size_t>(recvcount);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  const void* send = in_place ? recvbuf : sendbuf;  // plain floats, p blocks of n
  std::vector<char> converted;
  return run_collective(
      c, ZCOLL_COLL_ALLTOALL, recvtype, zcoll::type_bytes(recvtype, n), -1, -1,
      [&](zcoll_dtype dt, Agreement& a) {
        a.count = recvcount;
        a.in_place = in_place;  // the schedule's buffers depend on it
        const size_t block = n * zcoll::codec::element_size(dt);
        if (!in_place && (sendtype != recvtype || sendcount != recvcount)) {
          a.rc = convert_blocks(c, sendbuf, sendcount, sendtype, recvcount, recvtype, block, &converted);
          send = converted.data();
        }
        a.add_values(dt, send, n * p, c.cfg.codec.threads);
      },
      [&](zcoll_dtype dt, double eb, const Choice& ch) {
        Transport T(c, dt, ch);
        const std::vector<size_t>& counts = c.workspace.uniform_counts(p, n);
        const auto layout = in_place ? Transport::kPairwiseInPlace : Transport::kPairwise;
        if (!T.plan(eb, counts.data(), p, layout)) return T.finish();
        for (int b = 0; b < p; ++b)
          T.place(b, zcoll::at(send, static_cast<size_t>(b) * n, T.es),
                  b == r ? nullptr : zcoll::at(recvbuf, static_cast<size_t>(b) * n, T.es));
        if (!in_place && n) std::memcpy(zcoll::at(recvbuf, r * n, T.es), zcoll::at(send, r * n, T.es), n * T.es);
        if (in_place) compress_outgoing(T, p, r);
        pairwise_alltoall(T, in_place);
        return T.finish();
      },
      [&] { return MPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, c.comm); });
}
