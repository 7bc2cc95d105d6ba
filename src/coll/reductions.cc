// Reduce_scatter(_block), allreduce and reduce: argument checks, the choice between
// plain MPI and compression, the per-input bound, and the piece operations and
// messages the schedules share.
#include <cstring>
#include <numeric>

#include "coll/reduction.h"

namespace zcoll::coll {

// ------------------------------------------------------------------ layout

int Reduction::plan(const size_t* counts, bool whole_vector_regions) {
  const int p = c.size;
  const size_t chunk = params.chunk_len ? params.chunk_len : ZCOLL_DEFAULT_CHUNK_LEN;
  block_begin.assign(p + 1, 0);
  first_piece.assign(p + 1, 0);
  piece_begin.clear();
  piece_count.clear();
  slot.clear();
  size_t off = 0;
  for (int b = 0; b < p; ++b) {
    block_begin[b + 1] = block_begin[b] + counts[b];
    first_piece[b] = piece_begin.size();
    // The baseline sends whole blocks; the pipelined paths, pieces of a few chunks.
    const size_t len = cprp2p ? (counts[b] ? counts[b] : 1) : kChunksPerPiece * chunk;
    const size_t block_off = off;
    for (size_t e = 0; e < counts[b]; e += len) {
      piece_begin.push_back(block_begin[b] + e);
      piece_count.push_back(std::min(len, counts[b] - e));
      slot.push_back(off);
      off += piece_cap(piece_count.size() - 1);
    }
    max_block_bytes = std::max(max_block_bytes, off - block_off);
  }
  first_piece[p] = piece_begin.size();
  region_bytes = off;
  result_len.assign(piece_begin.size(), 0);
  // The ring folds this rank's input straight into the partials it receives, so only
  // recursive doubling keeps a compressed copy of it (own).
  const size_t set_bytes = whole_vector_regions ? region_bytes : max_block_bytes;
  const size_t own_bytes = whole_vector_regions ? region_bytes : 0;
  const size_t need = own_bytes + region_bytes + 4 * set_bytes;
  if (c.arena_cap < need) {
    c.arena.reset();
    c.arena.reset(new uint8_t[need]);
    c.arena_cap = need;
  }
  uint8_t* a = c.arena.get();
  own = whole_vector_regions ? a : nullptr;
  result = a + own_bytes;
  for (int k = 0; k < 2; ++k) {
    recv[k] = a + own_bytes + region_bytes + k * set_bytes;
    send[k] = a + own_bytes + region_bytes + (2 + k) * set_bytes;
  }
  return ZCOLL_SUCCESS;
}

// ------------------------------------------------------------ piece operations

size_t Reduction::compress_values(const void* values_of_piece, size_t i, uint8_t* dst) {
  if (err) return 0;
  const double t = now();
  size_t len = 0;
  const int rc = fzl::compress(&params, dtype, values_of_piece, piece_count[i], dst, piece_cap(i), &len, nullptr);
  t_codec += now() - t;
  if (rc) fail(rc);
  return rc ? 0 : len;
}

size_t Reduction::combine(const uint8_t* a, size_t alen, const uint8_t* b, size_t blen, size_t i, uint8_t* out) {
  if (err) return 0;
  const double t = now();
  size_t len = 0;
  const int rc = fzl::combine(op, a, alen, b, blen, out, piece_cap(i), &len, params.threads);
  t_reduce += now() - t;
  if (rc) fail(rc);
  return rc ? 0 : len;
}

size_t Reduction::fold(const uint8_t* partial, size_t len, size_t i, uint8_t* out) {
  if (err) return 0;
  const double t = now();
  size_t olen = 0;
  const int rc = fzl::combine_values(op, input(i), piece_count[i], dtype, partial, len, out, piece_cap(i), &olen,
                                     params.threads);
  t_reduce += now() - t;
  if (rc) fail(rc);
  return rc ? 0 : olen;
}

namespace {
template <class T>
void apply(int op, T* acc, const uint8_t* x, size_t n) {
  for (size_t k = 0; k < n; ++k) {
    T v;
    std::memcpy(&v, x + k * sizeof(T), sizeof(T));
    T& a = acc[k];
    if (op == fzl::kCombineSum) a = a + v;
    else if (a != a || v != v) a = a != a ? a : v;  // NaN wins, as on the homomorphic path
    else if (op == fzl::kCombineMax) a = v > a ? v : a;
    else a = v < a ? v : a;
  }
}
}  // namespace

size_t Reduction::doc_step(const uint8_t* partial, size_t len, size_t i, uint8_t* out, void* dst) {
  if (err) return 0;
  const double t = now();
  const size_t n = piece_count[i];
  // Always through the scratch: with MPI_IN_PLACE, dst can be this very input piece.
  if (values.size() < n * es) values.resize(n * es);
  void* acc = values.data();
  int rc = fzl::decompress(partial, len, dtype, acc, n, params.threads);
  const double t_dec = now() - t;
  t_decomp += t_dec;
  const double t_op = now();
  if (!rc) {
    if (dtype == ZCOLL_FLOAT32) apply(op, static_cast<float*>(acc), input(i), n);
    else apply(op, static_cast<double*>(acc), input(i), n);
  }
  const double t_applied = now();
  t_reduce += t_applied - t_op;
  size_t olen = 0;
  if (!rc && out) rc = fzl::compress(&params, dtype, acc, n, out, piece_cap(i), &olen, nullptr);
  if (!rc && !out) std::memcpy(dst, acc, n * es);
  t_codec += now() - t_applied;
  if (rc) fail(rc);
  return rc ? 0 : (out ? olen : 1);
}

void Reduction::decompress(const uint8_t* s, size_t len, size_t i, void* dst, size_t base) {
  if (err) return;
  const double t = now();
  const int rc = fzl::decompress(s, len, dtype, at(dst, piece_begin[i] - base, es), piece_count[i], params.threads);
  t_decomp += now() - t;
  if (rc) fail(rc);
}

// ------------------------------------------------------------------ messages

void Reduction::isend(const uint8_t* p, size_t len, int peer, std::vector<MPI_Request>& reqs) {
  static const int32_t kNotice[1] = {ZCOLL_ERR_INTERNAL};
  MPI_Request r;
  int rc;
  if (err || len == 0) {
    // The code itself does not matter: each rank reports its own or agrees on the worst.
    rc = MPI_Isend(kNotice, sizeof(int32_t), MPI_BYTE, peer, kReduceTag, c.comm, &r);
  } else {
    wire += len;
    rc = MPI_Isend(p, static_cast<int>(len), MPI_BYTE, peer, kReduceTag, c.comm, &r);
  }
  if (rc != MPI_SUCCESS) {
    fail(ZCOLL_ERR_MPI);
    return;
  }
  reqs.push_back(r);
}

void Reduction::irecv(uint8_t* p, size_t cap, int peer, std::vector<MPI_Request>& reqs) {
  MPI_Request r = MPI_REQUEST_NULL;
  if (MPI_Irecv(p, static_cast<int>(cap), MPI_BYTE, peer, kReduceTag, c.comm, &r) != MPI_SUCCESS) fail(ZCOLL_ERR_MPI);
  reqs.push_back(r);
}

size_t Reduction::wait_recv(std::vector<MPI_Request>& reqs, size_t j) {
  MPI_Status st;
  int count = 0;
  if (reqs[j] == MPI_REQUEST_NULL) return 0;  // its post failed (recorded)
  if (MPI_Wait(&reqs[j], &st) != MPI_SUCCESS || MPI_Get_count(&st, MPI_BYTE, &count) != MPI_SUCCESS) {
    fail(ZCOLL_ERR_MPI);
    return 0;
  }
  if (count == sizeof(int32_t)) {  // a peer failed; no stream is this short
    fail(ZCOLL_ERR_INTERNAL);
    return 0;
  }
  return static_cast<size_t>(count);
}

void Reduction::wait_all(std::vector<MPI_Request>& reqs) {
  if (!reqs.empty() && MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE) != MPI_SUCCESS)
    fail(ZCOLL_ERR_MPI);
  reqs.clear();
}

void Reduction::poll(std::vector<MPI_Request>& sends) {
  int done = 0;
  if (!sends.empty()) MPI_Testall(static_cast<int>(sends.size()), sends.data(), &done, MPI_STATUSES_IGNORE);
}

// Everybody's reduced pieces travel, still compressed, straight to the root, which
// decompresses its own while the others arrive.
void gather_pieces(Reduction& R, int root, void* out) {
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
  if (op == MPI_SUM) *out = fzl::kCombineSum;
  else if (op == MPI_MIN) *out = fzl::kCombineMin;
  else if (op == MPI_MAX) *out = fzl::kCombineMax;
  else return false;
  return true;
}

enum class Kind { kReduceScatter, kAllreduce, kReduce };

// Worst-case error of the result in units of the per-input bound (see zcoll.h).
double error_factor(const Reduction& R, Kind kind, int p) {
  // Homomorphic MIN/MAX never add error. Otherwise one eps per quantization the result
  // passed through: p, but p - 1 for a reduce-scatter, whose last step applies the op to
  // this rank's own values unquantized on both paths (ring_reduce_scatter.cc).
  if (R.homomorphic && R.op != fzl::kCombineSum) return 1;
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
  Reduction R(c, dt, op);
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
  R.params = cfg.codec;
  double eb = std::min(cfg.codec.eb, DBL_MAX / 4);
  if (cfg.codec.eb_mode == ZCOLL_EB_REL) {
    double lo = INFINITY, hi = -INFINITY;
    fzl::value_range(dt, input, total, fzl::thread_count(cfg.codec.threads, total / 65536 + 1), &lo, &hi);
    double ext[2] = {-lo, hi};
    if (MPI_Allreduce(MPI_IN_PLACE, ext, 2, MPI_DOUBLE, MPI_MAX, c.comm) != MPI_SUCCESS) return ZCOLL_ERR_MPI;
    eb = fzl::rel_to_abs(cfg.codec.eb, -ext[0], ext[1]);
  }
  if (cfg.bound_target == ZCOLL_BOUND_RESULT) eb /= error_factor(R, kind, p);
  R.params.eb_mode = ZCOLL_EB_ABS;
  R.params.eb = eb;
  R.params.ndims = 0;
  R.in = static_cast<const uint8_t*>(input);
  int rc = R.plan(counts, algorithm == ZCOLL_ALGO_RECURSIVE_DOUBLING);
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
  // Every rank returns the same outcome.
  int worst = R.err;
  if (MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_INT, MPI_MAX, c.comm) != MPI_SUCCESS) worst = ZCOLL_ERR_MPI;
  c.last = zcoll_stats{};
  c.last.compressed = 1;
  c.last.algorithm = algorithm;
  c.last.eb_abs = eb;
  c.last.raw_bytes = R.raw;
  c.last.wire_bytes = R.wire;
  c.last.t_compress = R.t_codec;
  c.last.t_decompress = R.t_decomp;
  c.last.t_reduce = R.t_reduce;
  c.last.t_comm = now() - t0 - R.t_codec - R.t_decomp - R.t_reduce;
  return worst;
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
