// Reduce_scatter(_block), allreduce and reduce: one engine. A ring reduce-scatter leaves
// each block reduced on its rank; allreduce then runs a ring allgather of the
// still-compressed reduced blocks (or recursive doubling for short vectors), and reduce
// gathers them to the root.
#include <vector>

#include "coll/algorithms.h"
#include "coll/call.h"
#include "coll/engines.h"
#include "coll/hierarchical.h"

namespace zcoll::coll {
namespace {

int combine_op(MPI_Op op) {
  if (op == MPI_SUM) return codec::kCombineSum;
  if (op == MPI_MIN) return codec::kCombineMin;
  if (op == MPI_MAX) return codec::kCombineMax;
  return kUnsupportedOp;
}

// Worst-case error of the result in units of the per-input bound (see zcoll.h).
double error_factor(bool homomorphic, int op, bool cprp2p, int collective, int p) {
  // Homomorphic MIN/MAX never add error. Otherwise one eps per quantization the result
  // passed through: p, but p - 1 for a reduce-scatter, whose last step applies the op to
  // this rank's own values unquantized on both paths (reduce_scatter_ring.cc).
  if (homomorphic && op != codec::kCombineSum) return 1;
  if (cprp2p && collective == ZCOLL_COLL_ALLREDUCE) return 2.0 * p - 2;
  return collective == ZCOLL_COLL_REDUCE_SCATTER ? p - 1 : p;
}

}  // namespace

double input_bound(const zcoll_config& cfg, int collective, int op, bool cprp2p, int p, double eb) {
  if (cfg.bound_target != ZCOLL_BOUND_RESULT) return eb;
  return eb / error_factor(homomorphic_path(cfg, collective), op, cprp2p, collective, p);
}

int reduction_engine(zcoll_comm_s& c, int collective, zcoll_dtype dt, double eb, const Choice& ch, const void* input,
                     void* out, const std::vector<size_t>& counts, int op, int root) {
  const zcoll_config& cfg = c.cfg;
  const int p = c.size, r = c.rank;
  Transport T(c, dt, ch, op);
  T.homomorphic = homomorphic_path(cfg, collective);
  const bool doubling = ch.schedule == ZCOLL_ALGO_RECURSIVE_DOUBLING;
  eb = input_bound(cfg, collective, op, T.cprp2p, p, eb);
  // A ring of many ranks folds each piece between its receive and its send: two pieces per
  // block at least, so that the two overlap and a piece moves on while the next arrives
  // (schedule::piece_values). Measured at 64 ranks (SIMULATED, 100 Gbit/s): 1.2-1.9x faster.
  // At 2 ranks, one step each way, there is nothing to pipeline and the second message
  // costs: a 1 MiB f64 ring allreduce at 10 Gbit/s took 0.55 ms against 0.46 ms (over the
  // emulated link's old 1.25 MB bucket, deeper than both messages). Between 2
  // and 64 nothing was measured; from 8 ranks the ring has 7 steps or more each way.
  constexpr int kTwoPiecesFromRanks = 8;
  if (!T.plan(eb, counts.data(), p, doubling ? Transport::kWholeVector : Transport::kRing,
              !doubling && p >= kTwoPiecesFromRanks ? 2 : 1))
    return T.finish();
  const bool whole_out = collective == ZCOLL_COLL_ALLREDUCE || (collective == ZCOLL_COLL_REDUCE && r == root);
  for (int b = 0; b < p; ++b)
    T.place(b, at(input, T.block_begin[b], T.es),
            whole_out ? at(out, T.block_begin[b], T.es)
                      : (collective == ZCOLL_COLL_REDUCE_SCATTER && b == r ? out : nullptr));
  if (doubling) {
    recursive_doubling_allreduce(T);
  } else if (collective == ZCOLL_COLL_REDUCE_SCATTER) {
    ring_reduce_scatter(T, false);
  } else {
    ring_reduce_scatter(T, true);
    // The input is consumed: from here on every block is a result that arrives.
    for (int b = 0; b < p; ++b) T.block_src[b] = nullptr;
    if (collective == ZCOLL_COLL_ALLREDUCE) ring_allgather(T);
    else gather_reduced_blocks(T, root);
  }
  return T.finish();
}

namespace {

// total: the elements of the whole vector; blocks(): its p block sizes, made only when the
// call compresses (a call that runs plain MPI does no O(p) work). The input is sendbuf
// (recvbuf with MPI_IN_PLACE); out: this rank's block for reduce_scatter, the whole vector
// otherwise (the root's, for reduce).
template <class Blocks, class Plain>
int reduction_call(zcoll_comm_s& c, int collective, const void* sendbuf, void* out, size_t total, Blocks&& blocks,
                   MPI_Datatype type, MPI_Op mpi_op, int root, const int* hashed_counts, int plain_count,
                   Plain&& plain) {
  const void* input = sendbuf == MPI_IN_PLACE ? out : sendbuf;
  const int p = c.size, op = combine_op(mpi_op);
  return run_collective(
      c, collective, type, type_bytes(type, total), root, op,
      [&](zcoll_dtype dt, Agreement& a) {
        if (hashed_counts) a.set_counts(hashed_counts, p);
        else a.count = plain_count;
        a.add_values(dt, input, total, c.cfg.codec.threads);
      },
      [&](zcoll_dtype dt, double eb, const Choice& ch) {
        if (node_aware(ch.schedule)) {
          if (collective == ZCOLL_COLL_REDUCE_SCATTER)
            return hierarchical_reduce_scatter(c, ch.schedule, dt, eb, input, out, blocks(), mpi_op, op);
          return hierarchical_allreduce(c, ch.schedule, dt, eb, input, out, total, mpi_op, op,
                                        collective == ZCOLL_COLL_REDUCE ? root : -1);
        }
        return reduction_engine(c, collective, dt, eb, ch, input, out, blocks(), op, root);
      },
      plain);
}

}  // namespace
}  // namespace zcoll::coll

using namespace zcoll::coll;

extern "C" {

int zcoll_allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, zcoll_comm comm) {
  if (!comm || count < 0 || (count > 0 && (!recvbuf || !sendbuf))) return ZCOLL_ERR_ARG;
  const size_t n = static_cast<size_t>(count);
  return reduction_call(
      *comm, ZCOLL_COLL_ALLREDUCE, sendbuf, recvbuf, n, [&]() -> auto& { return even_blocks(n, comm->size, &comm->workspace.counts); }, datatype, op, -1,
      nullptr, count, [&] { return MPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm->comm); });
}

int zcoll_reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                 zcoll_comm comm) {
  if (!comm) return ZCOLL_ERR_ARG;
  const bool is_root = comm->rank == root;
  if (count < 0 || root < 0 || root >= comm->size || (count > 0 && (!sendbuf || (is_root && !recvbuf))) ||
      (sendbuf == MPI_IN_PLACE && !is_root))
    return ZCOLL_ERR_ARG;
  const size_t n = static_cast<size_t>(count);
  return reduction_call(
      *comm, ZCOLL_COLL_REDUCE, sendbuf, recvbuf, n, [&]() -> auto& { return even_blocks(n, comm->size, &comm->workspace.counts); }, datatype, op, root,
      nullptr, count, [&] { return MPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm->comm); });
}

int zcoll_reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                         zcoll_comm comm) {
  if (!comm || !recvcounts) return ZCOLL_ERR_ARG;
  size_t total = 0;
  for (int b = 0; b < comm->size; ++b) {
    if (recvcounts[b] < 0) return ZCOLL_ERR_ARG;
    total += static_cast<size_t>(recvcounts[b]);
  }
  if ((recvcounts[comm->rank] > 0 && !recvbuf) || (total > 0 && !sendbuf)) return ZCOLL_ERR_ARG;
  return reduction_call(
      *comm, ZCOLL_COLL_REDUCE_SCATTER, sendbuf, recvbuf, total,
      [&]() -> auto& {
        std::vector<size_t>& counts = comm->workspace.counts;
        counts.assign(recvcounts, recvcounts + comm->size);
        return counts;
      },
      datatype, op, -1, recvcounts, 0,
      [&] { return MPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm->comm); });
}

int zcoll_reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                               zcoll_comm comm) {
  if (!comm || recvcount < 0 || (recvcount > 0 && (!recvbuf || !sendbuf))) return ZCOLL_ERR_ARG;
  const size_t block = static_cast<size_t>(recvcount);
  return reduction_call(
      *comm, ZCOLL_COLL_REDUCE_SCATTER, sendbuf, recvbuf, block * static_cast<size_t>(comm->size),
      [&]() -> auto& { return comm->workspace.uniform_counts(comm->size, block); }, datatype, op, -1, nullptr, recvcount,
      [&] { return MPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm->comm); });
}

}  // extern "C"
