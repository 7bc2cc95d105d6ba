// The intercepted collectives. Each wrapper passes its call to PMPI unchanged unless its
// communicator opted in, and then hands it to the zcoll collective of the same name,
// which makes the decision itself: float/double with SUM/MIN/MAX (reductions) and at
// least min_bytes per rank are compressed; anything else runs as the same MPI call on
// zcoll's duplicate of the communicator, bit-exact (zcoll.h).
//
// Routing must be the same on every rank of a call, or ranks would wait on different
// communicators. So it rests only on what MPI requires to agree across ranks: the
// communicator, counts and roots. Where a wrapper filters by size itself (allreduce,
// reduce, bcast: count x type size, identical on every rank), it uses zcoll's own rule.
// Erroneous arguments (negative counts, roots out of range, MPI_COMM_NULL, an invalid
// datatype) and NULL buffers with data (MPI_BOTTOM with absolute addresses) go to PMPI,
// so MPI reports them with the error class it always would.
#include <mpi.h>

#include "pmpi/layer.h"

using namespace zcoll_pmpi;

namespace {

constexpr size_t kInvalid = static_cast<size_t>(-1);

// count elements of t in bytes; kInvalid for a negative count or an invalid type.
size_t bytes_of(long long count, MPI_Datatype t) {
  int size = 0;
  if (count < 0 || t == MPI_DATATYPE_NULL || PMPI_Type_size(t, &size) != MPI_SUCCESS || size < 0) return kInvalid;
  return static_cast<size_t>(count) * static_cast<size_t>(size);
}

bool has_data(const void* buf, long long count) { return count == 0 || buf != nullptr; }

int comm_size(MPI_Comm comm) {
  int p = 0;
  PMPI_Comm_size(comm, &p);
  return p;
}

// The one routing decision. `bytes`: the call's bytes per rank for the report, or
// kInvalid where an argument is erroneous. `small`: below min_bytes by zcoll's own rule.
// `sane(zc)`: the arguments that need the communicator's size are valid.
template <class Sane, class Zcoll, class Plain>
int dispatch(Fn fn, MPI_Comm comm, size_t bytes, bool small, Sane&& sane, Zcoll&& zcoll, Plain&& plain) {
  if (bytes != kInvalid && !small && comm != MPI_COMM_NULL) {
    zcoll_comm zc = find_opted(comm);
    if (!zc && g_idup_pending.load(std::memory_order_relaxed)) zc = adopt_pending(comm);
    if (zc && sane(comm_size(comm)))
      return run_zcoll(fn, comm, zc, bytes, [&] { return zcoll(zc); });
  }
  return g_hot.report ? run_plain_counted(fn, bytes == kInvalid ? 0 : bytes, plain) : plain();
}

bool below_min(size_t bytes) { return bytes != kInvalid && bytes < g_hot.min_bytes; }
auto any_size = [](int) { return true; };
bool in_range(int root, int p) { return root >= 0 && root < p; }

template <class T>
bool all_nonnegative(const T* counts, int p) {
  if (!counts) return false;
  for (int i = 0; i < p; ++i)
    if (counts[i] < 0) return false;
  return true;
}

// Allgather and alltoall have the same arguments, significant on every rank.
using EveryRankMpi = int (*)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, MPI_Comm);
using EveryRankZcoll = int (*)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, zcoll_comm);

int every_rank_sends(Fn fn, EveryRankMpi pmpi, EveryRankZcoll zcoll, const void* sendbuf, int sendcount,
                     MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  auto plain = [&] { return pmpi(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm); };
  if (!layer_wants(fn)) return plain();
  const bool send_ok = sendbuf == MPI_IN_PLACE || (sendcount >= 0 && has_data(sendbuf, sendcount));
  const size_t bytes = send_ok && has_data(recvbuf, recvcount) ? bytes_of(recvcount, recvtype) : kInvalid;
  return dispatch(fn, comm, bytes, false, any_size, [&](zcoll_comm zc) {
    return zcoll(sendbuf, sendcount, float_alias(sendtype), recvbuf, recvcount, float_alias(recvtype), zc);
  }, plain);
}

}  // namespace

// The MPI_* definitions are the library's interface: exported whatever the preset.
#pragma GCC visibility push(default)
extern "C" {

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  auto plain = [&] { return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm); };
  if (!layer_wants(kAllreduce)) return plain();
  const size_t bytes = has_data(recvbuf, count) ? bytes_of(count, datatype) : kInvalid;
  return dispatch(kAllreduce, comm, bytes, below_min(bytes), any_size, [&](zcoll_comm zc) {
    return zcoll_allreduce(sendbuf, recvbuf, count, float_alias(datatype), op, zc);
  }, plain);
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
               MPI_Comm comm) {
  auto plain = [&] { return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm); };
  if (!layer_wants(kReduce)) return plain();
  const size_t bytes = bytes_of(count, datatype);
  return dispatch(kReduce, comm, bytes, below_min(bytes), [&](int p) { return in_range(root, p); },
                  [&](zcoll_comm zc) {
                    return zcoll_reduce(sendbuf, recvbuf, count, float_alias(datatype), op, root, zc);
                  }, plain);
}

int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm) {
  auto plain = [&] { return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm); };
  if (!layer_wants(kReduceScatter)) return plain();
  return dispatch(kReduceScatter, comm, bytes_of(recvcounts ? 0 : -1, datatype), false,
                  [&](int p) { return all_nonnegative(recvcounts, p); },
                  [&](zcoll_comm zc) {
                    return zcoll_reduce_scatter(sendbuf, recvbuf, recvcounts, float_alias(datatype), op, zc);
                  }, plain);
}

int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                             MPI_Comm comm) {
  auto plain = [&] { return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm); };
  if (!layer_wants(kReduceScatterBlock)) return plain();
  return dispatch(kReduceScatterBlock, comm, bytes_of(recvcount, datatype), false, any_size,
                  [&](zcoll_comm zc) {
                    return zcoll_reduce_scatter_block(sendbuf, recvbuf, recvcount, float_alias(datatype), op, zc);
                  }, plain);
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
  return every_rank_sends(kAllgather, PMPI_Allgather, zcoll_allgather, sendbuf, sendcount, sendtype, recvbuf,
                          recvcount, recvtype, comm);
}

int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  auto plain = [&] {
    return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  };
  if (!layer_wants(kAllgatherv)) return plain();
  const bool send_ok = sendbuf == MPI_IN_PLACE || (sendcount >= 0 && has_data(sendbuf, sendcount));
  const size_t bytes = send_ok && recvbuf && displs ? bytes_of(sendbuf == MPI_IN_PLACE ? 0 : sendcount, sendtype)
                                                    : kInvalid;
  return dispatch(kAllgatherv, comm, bytes, false, [&](int p) { return all_nonnegative(recvcounts, p); },
                  [&](zcoll_comm zc) {
                    return zcoll_allgatherv(sendbuf, sendcount, float_alias(sendtype), recvbuf, recvcounts, displs,
                                            float_alias(recvtype), zc);
                  }, plain);
}

int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  auto plain = [&] { return PMPI_Bcast(buffer, count, datatype, root, comm); };
  if (!layer_wants(kBcast)) return plain();
  const size_t bytes = has_data(buffer, count) ? bytes_of(count, datatype) : kInvalid;
  return dispatch(kBcast, comm, bytes, below_min(bytes), [&](int p) { return in_range(root, p); },
                  [&](zcoll_comm zc) { return zcoll_bcast(buffer, count, float_alias(datatype), root, zc); }, plain);
}

}  // extern "C"
#pragma GCC visibility pop

namespace {

// Scatter and gather have the same arguments. The root's side holds p blocks and counts at
// the root only; the other side counts everywhere except at a root that passes
// MPI_IN_PLACE for it. root_sends: the root's side is the send side (scatter).
using RootedMpi = int (*)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, int, MPI_Comm);
using RootedZcoll = int (*)(const void*, int, MPI_Datatype, void*, int, MPI_Datatype, int, zcoll_comm);

int rooted(Fn fn, RootedMpi pmpi, RootedZcoll zcoll, bool root_sends, const void* sendbuf, int sendcount,
           MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  auto plain = [&] { return pmpi(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm); };
  if (!layer_wants(fn)) return plain();
  const void* root_buf = root_sends ? sendbuf : recvbuf;
  const void* other_buf = root_sends ? recvbuf : sendbuf;
  const int root_count = root_sends ? sendcount : recvcount, other_count = root_sends ? recvcount : sendcount;
  // The block of one rank, from the side that is significant everywhere.
  const bool other_in_place = other_buf == MPI_IN_PLACE;
  const size_t bytes = (root_sends != other_in_place) ? bytes_of(recvcount, recvtype) : bytes_of(sendcount, sendtype);
  auto sane = [&](int p) {
    if (!in_range(root, p)) return false;
    int me = 0;
    PMPI_Comm_rank(comm, &me);
    const bool in_place = me == root && other_in_place;
    return (me != root || (root_count >= 0 && has_data(root_buf, root_count))) &&
           (in_place || (other_count >= 0 && has_data(other_buf, other_count)));
  };
  return dispatch(fn, comm, bytes, false, sane, [&](zcoll_comm zc) {
    return zcoll(sendbuf, sendcount, float_alias(sendtype), recvbuf, recvcount, float_alias(recvtype), root, zc);
  }, plain);
}

}  // namespace

// The MPI_* definitions are the library's interface: exported whatever the preset.
#pragma GCC visibility push(default)
extern "C" {

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return rooted(kScatter, PMPI_Scatter, zcoll_scatter, true, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                recvtype, root, comm);
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return rooted(kGather, PMPI_Gather, zcoll_gather, false, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                recvtype, root, comm);
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
  return every_rank_sends(kAlltoall, PMPI_Alltoall, zcoll_alltoall, sendbuf, sendcount, sendtype, recvbuf,
                          recvcount, recvtype, comm);
}

}  // extern "C"
#pragma GCC visibility pop
