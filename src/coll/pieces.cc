// The piece engine (pieces.h): layout of blocks and pieces, the operations on one
// piece, and the messages that carry them.
#include <cstring>

#include "coll/pieces.h"

namespace zcoll::coll {

// ------------------------------------------------------------------ layout

int Pieces::plan(const size_t* counts, Layout layout) {
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
  const bool whole = layout == Layout::kWholeVector;
  const size_t set_bytes = layout == Layout::kResult ? 0 : whole ? region_bytes : max_block_bytes;
  const size_t own_bytes = whole ? region_bytes : 0;
  const size_t result_bytes = layout == Layout::kBlockSets ? 0 : region_bytes;
  const size_t need = own_bytes + result_bytes + 4 * set_bytes;
  if (c.arena_cap < need) {
    c.arena.reset();
    c.arena.reset(new uint8_t[need]);
    c.arena_cap = need;
  }
  uint8_t* a = c.arena.get();
  own = whole ? a : nullptr;
  result = result_bytes ? a + own_bytes : nullptr;
  for (int k = 0; k < 2; ++k) {
    recv[k] = set_bytes ? a + own_bytes + result_bytes + k * set_bytes : nullptr;
    send[k] = set_bytes ? a + own_bytes + result_bytes + (2 + k) * set_bytes : nullptr;
  }
  return ZCOLL_SUCCESS;
}

int Pieces::finish(int algorithm, double eb, double t0) {
  int worst = err;
  if (MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_INT, MPI_MAX, c.comm) != MPI_SUCCESS) worst = ZCOLL_ERR_MPI;
  c.last = zcoll_stats{};
  c.last.compressed = 1;
  c.last.algorithm = algorithm;
  c.last.eb_abs = eb;
  c.last.raw_bytes = raw;
  c.last.wire_bytes = wire;
  c.last.t_compress = t_codec;
  c.last.t_decompress = t_decomp;
  c.last.t_reduce = t_reduce;
  c.last.t_comm = now() - t0 - t_codec - t_decomp - t_reduce;
  return worst;
}

// ------------------------------------------------------------ piece operations

size_t Pieces::compress_values(const void* values_of_piece, size_t i, uint8_t* dst) {
  if (err) return 0;
  const double t = now();
  size_t len = 0;
  const int rc = codec::compress(&params, dtype, values_of_piece, piece_count[i], dst, piece_cap(i), &len, nullptr);
  t_codec += now() - t;
  if (rc) fail(rc);
  return rc ? 0 : len;
}

size_t Pieces::combine(const uint8_t* a, size_t alen, const uint8_t* b, size_t blen, size_t i, uint8_t* out) {
  if (err) return 0;
  const double t = now();
  size_t len = 0;
  const int rc = codec::combine(op, a, alen, b, blen, out, piece_cap(i), &len, params.threads);
  t_reduce += now() - t;
  if (rc) fail(rc);
  return rc ? 0 : len;
}

size_t Pieces::fold(const uint8_t* partial, size_t len, size_t i, uint8_t* out) {
  if (err) return 0;
  const double t = now();
  size_t olen = 0;
  const int rc = codec::combine_values(op, input(i), piece_count[i], dtype, partial, len, out, piece_cap(i), &olen,
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
    if (op == codec::kCombineSum) a = a + v;
    else if (a != a || v != v) a = a != a ? a : v;  // NaN wins, as on the homomorphic path
    else if (op == codec::kCombineMax) a = v > a ? v : a;
    else a = v < a ? v : a;
  }
}
}  // namespace

size_t Pieces::doc_step(const uint8_t* partial, size_t len, size_t i, uint8_t* out, void* dst) {
  if (err) return 0;
  const double t = now();
  const size_t n = piece_count[i];
  // Always through the scratch: with MPI_IN_PLACE, dst can be this very input piece.
  if (values.size() < n * es) values.resize(n * es);
  void* acc = values.data();
  int rc = codec::decompress(partial, len, dtype, acc, n, params.threads);
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
  if (!rc && out) rc = codec::compress(&params, dtype, acc, n, out, piece_cap(i), &olen, nullptr);
  if (!rc && !out) std::memcpy(dst, acc, n * es);
  t_codec += now() - t_applied;
  if (rc) fail(rc);
  return rc ? 0 : (out ? olen : 1);
}

void Pieces::decompress(const uint8_t* s, size_t len, size_t i, void* dst, size_t base) {
  if (err) return;
  const double t = now();
  const int rc = codec::decompress(s, len, dtype, at(dst, piece_begin[i] - base, es), piece_count[i], params.threads);
  t_decomp += now() - t;
  if (rc) fail(rc);
}

// ------------------------------------------------------------------ messages

void Pieces::isend(const uint8_t* p, size_t len, int peer, std::vector<MPI_Request>& reqs) {
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

void Pieces::irecv(uint8_t* p, size_t cap, int peer, std::vector<MPI_Request>& reqs) {
  MPI_Request r = MPI_REQUEST_NULL;
  if (MPI_Irecv(p, static_cast<int>(cap), MPI_BYTE, peer, kReduceTag, c.comm, &r) != MPI_SUCCESS) fail(ZCOLL_ERR_MPI);
  reqs.push_back(r);
}

// The length of a completed receive, 0 after an error notice.
size_t Pieces::received(const MPI_Status& st) {
  int count = 0;
  if (MPI_Get_count(&st, MPI_BYTE, &count) != MPI_SUCCESS || count < 0) {
    fail(ZCOLL_ERR_MPI);
    return 0;
  }
  if (count == sizeof(int32_t)) {  // a peer failed; no stream is this short
    fail(ZCOLL_ERR_INTERNAL);
    return 0;
  }
  return static_cast<size_t>(count);
}

size_t Pieces::wait_recv(std::vector<MPI_Request>& reqs, size_t j) {
  MPI_Status st;
  if (reqs[j] == MPI_REQUEST_NULL) return 0;  // its post failed (recorded)
  if (MPI_Wait(&reqs[j], &st) != MPI_SUCCESS) {
    fail(ZCOLL_ERR_MPI);
    return 0;
  }
  return received(st);
}

bool Pieces::test_recv(std::vector<MPI_Request>& reqs, size_t j, size_t* len) {
  MPI_Status st;
  int done = 0;
  *len = 0;
  if (reqs[j] == MPI_REQUEST_NULL) return true;  // its post failed, or it completed
  if (MPI_Test(&reqs[j], &done, &st) != MPI_SUCCESS) {
    fail(ZCOLL_ERR_MPI);
    return true;
  }
  if (done) *len = received(st);
  return done != 0;
}

void Pieces::wait_all(std::vector<MPI_Request>& reqs) {
  if (!reqs.empty() && MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE) != MPI_SUCCESS)
    fail(ZCOLL_ERR_MPI);
  reqs.clear();
}

void Pieces::poll(std::vector<MPI_Request>& sends) {
  int done = 0;
  if (!sends.empty()) MPI_Testall(static_cast<int>(sends.size()), sends.data(), &done, MPI_STATUSES_IGNORE);
}

}  // namespace zcoll::coll
