// Reduce_scatter(_block), allreduce and reduce: argument checks, the choice between
// plain MPI and compression, the per-input bound, and the gather of reduced pieces to a
// root. The schedules run on the piece engine (pieces.h).
#include <cstring>
#include <numeric>

#include "coll/pieces.h"

namespace zcoll::coll {

// Everybody's reduced pieces travel, still compressed, straight to the root, which
// decompresses its own while the others arrive.
void gather_pieces(Pieces& R, int root, void* out) {
  const int p = R.c.size, r = R.c.rank;
  std::vector<MPI_Request> rq, sq;
  if (r != root) {
    for (size_t i = R.first_piece[r]; i < R.first_piece[r + 1]; ++i) {
      R.raw += R.piece_count[i] * R.es;
      R.isend(R.result + R.slot[i], R.result_len[i], root, sq);
    }
    R.wait_all(sq);
    return;
  }
  std::vector<size_t> piece_of;
  for (int b = 0; b < p; ++b) {
    if (b == root) continue;
    for (size_t i = R.first_piece[b]; i < R.first_piece[b + 1]; ++i) {
      R.irecv(R.result + R.slot[i], R.piece_cap(i), b, rq);
      piece_of.push_back(i);
    }
  }
  for (size_t i = R.first_piece[r]; i < R.first_piece[r + 1]; ++i)
    R.decompress(R.result + R.slot[i], R.result_len[i], i, out);
  for (size_t j = 0; j < rq.size(); ++j) {
    const size_t i = piece_of[j];
    R.result_len[i] = R.wait_recv(rq, j);
    R.decompress(R.result + R.slot[i], R.result_len[i], i, out);
  }
}

// ------------------------------------------------------------------ front ends

namespace {

bool combine_op(MPI_Op op, int* out) {
  if (op == MPI_SUM) *out = codec::kCombineSum;
  else if (op == MPI_MIN) *out = codec::kCombineMin;
  else if (op == MPI_MAX) *out = codec::kCombineMax;
  else return false;
  return true;
}

enum class Kind { kReduceScatter, kAllreduce, kReduce };

// Worst-case error of the result in units of the per-input bound (see zcoll.h).
double error_factor(const Pieces& R, Kind kind, int p) {
  // Homomorphic MIN/MAX never add error. Otherwise one eps per quantization the result
  // passed through: p, but p - 1 for a reduce-scatter, whose last step applies the op to
  // this rank's own values unquantized on both paths (ring_reduce_scatter.cc).
  if (R.homomorphic && R.op != codec::kCombineSum) return 1;
  if (R.cprp2p && kind == Kind::kAllreduce) return 2.0 * p - 2;
  return kind == Kind::kReduceScatter ? p - 1 : p;
}

// One compressed reduction. counts: the p block sizes; sendbuf the input (recvbuf
// with MPI_IN_PLACE); out: where this rank's result goes (its block for
// reduce_scatter, the whole vector otherwise).
int reduction_engine(zcoll_comm_s& c, Kind kind, const void* sendbuf, void* out, const size_t* counts, zcoll_dtype dt,
                     int op, int root) {
  const void* input = sendbuf == MPI_IN_PLACE ? out : sendbuf;
  const int p = c.size;
  const double t0 = now();
  Pieces R(c, dt, op);
  const zcoll_config& cfg = c.cfg;
  R.cprp2p = cfg.algorithm == ZCOLL_ALGO_CPRP2P;
  // AUTO is DOC with a codec that does not combine (zcoll_comm_create refuses HOMOMORPHIC).
  R.homomorphic = !R.cprp2p && cfg.reduction != ZCOLL_REDUCTION_DOC && cfg.codec.codec == ZCOLL_CODEC_FZL;
  size_t total = 0;
  for (int b = 0; b < p; ++b) total += counts[b];
  int algorithm = ZCOLL_ALGO_RING;
  if (kind == Kind::kAllreduce && R.homomorphic) {
    const bool small = total * R.es < (size_t{512} << 10) && p >= 4;
    algorithm = choose(c, {ZCOLL_ALGO_RING, ZCOLL_ALGO_RECURSIVE_DOUBLING},
                       small ? ZCOLL_ALGO_RECURSIVE_DOUBLING : ZCOLL_ALGO_RING);
    if (algorithm != ZCOLL_ALGO_RECURSIVE_DOUBLING) algorithm = ZCOLL_ALGO_RING;
  }
  if (R.cprp2p) algorithm = ZCOLL_ALGO_CPRP2P;
  // The bound: every rank the same, from the global range for REL.
  double eb = std::min(cfg.codec.eb, DBL_MAX / 4);
  if (cfg.codec.eb_mode == ZCOLL_EB_REL) {
    double lo = INFINITY, hi = -INFINITY;
    codec::value_range(dt, input, total, codec::thread_count(cfg.codec.threads, total / 65536 + 1), &lo, &hi);
    double ext[2] = {-lo, hi};
    if (MPI_Allreduce(MPI_IN_PLACE, ext, 2, MPI_DOUBLE, MPI_MAX, c.comm) != MPI_SUCCESS) return ZCOLL_ERR_MPI;
    eb = codec::rel_to_abs(cfg.codec.eb, -ext[0], ext[1]);
  }
  if (cfg.bound_target == ZCOLL_BOUND_RESULT) eb /= error_factor(R, kind, p);
  R.set_bound(eb);
  R.in = static_cast<const uint8_t*>(input);
  int rc = R.plan(counts, algorithm == ZCOLL_ALGO_RECURSIVE_DOUBLING ? Pieces::Layout::kWholeVector
                                                                   : Pieces::Layout::kResultAndBlocks);
  if (rc) return rc;

  if (algorithm == ZCOLL_ALGO_RECURSIVE_DOUBLING) {
    recursive_doubling_allreduce(R, out);
  } else if (kind == Kind::kReduceScatter) {
    ring_reduce_scatter(R, false, out);
  } else {
    ring_reduce_scatter(R, true, nullptr);
    if (kind == Kind::kAllreduce) ring_allgather_pieces(R, out);
    else gather_pieces(R, root, out);
  }
  return R.finish(algorithm, eb, t0);
}

// count elements in p blocks whose sizes differ by at most one.
std::vector<size_t> even_blocks(size_t count, int p) {
  std::vector<size_t> counts(p);
  for (int b = 0; b < p; ++b) counts[b] = count * (b + 1) / p - count * b / p;
  return counts;
}

bool supported(zcoll_comm_s& c, MPI_Datatype type, MPI_Op op, size_t count, zcoll_dtype* dt, int* cop) {
  return c.size > 1 && combine_op(op, cop) && use_compression(c, type, type_bytes(type, count), dt);
}

}  // namespace
}  // namespace zcoll::coll

using namespace zcoll::coll;

extern "C" {

int zcoll_allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, zcoll_comm comm) {
  if (!comm || count < 0 || (count > 0 && (!recvbuf || !sendbuf))) return ZCOLL_ERR_ARG;
  zcoll_comm_s& c = *comm;
  zcoll_dtype dt;
  int cop;
  if (supported(c, datatype, op, static_cast<size_t>(count), &dt, &cop))
    return guarded([&] {
      const std::vector<size_t> counts = even_blocks(static_cast<size_t>(count), c.size);
      return reduction_engine(c, Kind::kAllreduce, sendbuf, recvbuf, counts.data(), dt, cop, 0);
    });
  plain(c);
  return mpi_rc(MPI_Allreduce(sendbuf, recvbuf, count, datatype, op, c.comm));
}

int zcoll_reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                 zcoll_comm comm) {
  if (!comm) return ZCOLL_ERR_ARG;
  zcoll_comm_s& c = *comm;
  const bool is_root = c.rank == root;
  if (count < 0 || root < 0 || root >= c.size || (count > 0 && (!sendbuf || (is_root && !recvbuf))) ||
      (sendbuf == MPI_IN_PLACE && !is_root))
    return ZCOLL_ERR_ARG;
  zcoll_dtype dt;
  int cop;
  if (supported(c, datatype, op, static_cast<size_t>(count), &dt, &cop))
    return guarded([&] {
      const std::vector<size_t> counts = even_blocks(static_cast<size_t>(count), c.size);
      return reduction_engine(c, Kind::kReduce, sendbuf, recvbuf, counts.data(), dt, cop, root);
    });
  plain(c);
  return mpi_rc(MPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, c.comm));
}

int zcoll_reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                         zcoll_comm comm) {
  if (!comm || !recvcounts) return ZCOLL_ERR_ARG;
  zcoll_comm_s& c = *comm;
  size_t total = 0;
  for (int b = 0; b < c.size; ++b) {
    if (recvcounts[b] < 0) return ZCOLL_ERR_ARG;
    total += static_cast<size_t>(recvcounts[b]);
  }
  if ((recvcounts[c.rank] > 0 && !recvbuf) || (total > 0 && !sendbuf)) return ZCOLL_ERR_ARG;
  zcoll_dtype dt;
  int cop;
  if (supported(c, datatype, op, total, &dt, &cop))
    return guarded([&] {
      std::vector<size_t> counts(recvcounts, recvcounts + c.size);
      return reduction_engine(c, Kind::kReduceScatter, sendbuf, recvbuf, counts.data(), dt, cop, 0);
    });
  plain(c);
  return mpi_rc(MPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, c.comm));
}

int zcoll_reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                               zcoll_comm comm) {
  if (!comm || recvcount < 0 || (recvcount > 0 && (!recvbuf || !sendbuf))) return ZCOLL_ERR_ARG;
  zcoll_comm_s& c = *comm;
  zcoll_dtype dt;
  int cop;
  const size_t total = static_cast<size_t>(recvcount) * c.size;
  if (supported(c, datatype, op, total, &dt, &cop))
    return guarded([&] {
      std::vector<size_t> counts(c.size, static_cast<size_t>(recvcount));
      return reduction_engine(c, Kind::kReduceScatter, sendbuf, recvbuf, counts.data(), dt, cop, 0);
    });
  plain(c);
  return mpi_rc(MPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, c.comm));
}

}  // extern "C"
