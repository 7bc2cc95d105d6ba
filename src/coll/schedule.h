// How a block is cut into pieces, and who talks to whom, and which blocks move, at each
// step of each schedule: pure functions of (rank, p, step), shared by the transport and the
// algorithm files and tested without MPI (tests/test_schedule.cc simulates every rank of
// each schedule).
#pragma once
#include <algorithm>
#include <cstddef>

namespace zcoll::coll::schedule {

// A piece is about kPieceValues values, in whole codec chunks: 4 chunks of the default
// length. Its chunks are what the codec threads share, so a smaller codec.chunk_len gives
// a piece more chunks and lets more threads work on it (1024 values: up to 64). The
// layout depends on the block's length and chunk_len only (agreed at zcoll_comm_create),
// never on the thread count.
inline constexpr size_t kPieceValues = 65536;
inline size_t chunks_per_piece(size_t chunk_len) { return std::max<size_t>(1, kPieceValues / chunk_len); }
// The length of a block's pieces: a piece's worth, or less where that leaves the block fewer
// than min_pieces pieces (whole chunks, one at least: a block of fewer chunks than
// min_pieces has a piece per chunk). The reductions' ring of 8 ranks or more asks for two
// (reductions.cc): each step folds what it receives before sending it on, and with one piece per block the fold
// waits for the whole block and the next send for the whole fold (SIMULATED, 64 nodes at
// 100 Gbit/s, a 16 MiB f64 Allreduce: 0.78 ms with one piece per block, 0.63 ms with two;
// bench/smpi/README.md, "Two pieces per block"). Data movement forwards pieces as bytes,
// where a second piece only adds a message (a 16 MiB Bcast there: 0.36 ms, 0.47 ms).
inline size_t piece_values(size_t block, size_t chunk_len, size_t min_pieces = 1) {
  const size_t cap = chunks_per_piece(chunk_len) * chunk_len;
  if (min_pieces <= 1) return cap;
  const size_t block_chunks = (block + chunk_len - 1) / chunk_len;
  return std::min(cap, std::max<size_t>(1, block_chunks / min_pieces) * chunk_len);
}

inline int mod(int a, int p) { return ((a % p) + p) % p; }

// Ring: in step k (0 .. p-2) rank r sends the block that started on rank r - k to
// r + 1 and receives the one that started on r - k - 1 from r - 1.
inline int ring_right(int r, int p) { return mod(r + 1, p); }
inline int ring_left(int r, int p) { return mod(r - 1, p); }
inline int ring_allgather_sent(int r, int p, int k) { return mod(r - k, p); }
inline int ring_allgather_received(int r, int p, int k) { return mod(r - k - 1, p); }
// Ring reduce-scatter: in step k (0 .. p-2) rank r sends its partial of block r - k - 1
// and receives the partial of block r - k - 2; after p - 1 steps it holds block r.
inline int ring_reduce_sent(int r, int p, int k) { return mod(r - k - 1, p); }
inline int ring_reduce_received(int r, int p, int k) { return mod(r - k - 2, p); }

// Pairwise exchange: in step k (1 .. p-1) rank r sends to r + k and receives from r - k.
inline int pairwise_to(int r, int p, int k) { return mod(r + k, p); }
inline int pairwise_from(int r, int p, int k) { return mod(r - k, p); }

// Consecutive blocks first, first + 1, ... (count of them, modulo the block count m): what
// one message set of a tree or Bruck step carries. A range, not a list, so that a schedule
// allocates nothing (workspace.h).
struct BlockRange {
  int first = 0, count = 0;
  int at(int i, int m) const { return mod(first + i, m); }
  bool has(int b, int m) const { return mod(b - first, m) < count; }
  bool operator==(const BlockRange& o) const { return first == o.first && count == o.count; }
};

// Bruck: in the step of distance d (1, 2, 4, ... < p) rank r holds blocks r .. r + d - 1
// (mod p) and sends the first min(d, p - d) of them to r - d, receiving those of
// r + d .. from r + d.
struct BruckStep {
  int to, from;
  BlockRange sent, received;  // block (= original owner) ids, modulo p
};
inline BruckStep bruck_step(int r, int p, int d) {
  const int n = std::min(d, p - d);
  return {mod(r - d, p), mod(r + d, p), {r, n}, {mod(r + d, p), n}};
}

// Binomial tree over relative ranks v = (rank - root) mod p: v's parent differs in v's
// lowest set bit; its subtree is v .. v + subtree(v) - 1; its children, largest subtree
// first, are v + 2^j for 2^j below that bit.
inline int binomial_subtree(int v, int p) { return v ? std::min(v & -v, p - v) : p; }
inline BlockRange binomial_subtree_ids(int v, int p) { return {v, binomial_subtree(v, p)}; }
inline int binomial_parent(int v) { return v ? v - (v & -v) : -1; }
// Calls f(child) for each child of v, largest subtree first.
template <class F>
void for_each_binomial_child(int v, int p, F&& f) {
  int limit = v ? (v & -v) : 1;
  if (!v)
    while (limit < p) limit <<= 1;
  for (int m = limit >> 1; m > 0; m >>= 1)
    if (v + m < p) f(v + m);
}

// Recursive doubling for any p: the first 2 x rem ranks (rem = p - largest power of two
// <= p) pair up; the even one hands its data to the odd one and sits out. The others
// take part as new rank newrank and exchange with newrank ^ mask.
struct Doubling {
  int pof2, rem, newrank;  // newrank -1: sits out
};
inline Doubling doubling(int r, int p) {
  int pof2 = 1;
  while (pof2 * 2 <= p) pof2 *= 2;
  const int rem = p - pof2;
  return {pof2, rem, r < 2 * rem ? (r % 2 ? r / 2 : -1) : r - rem};
}
inline int doubling_peer(const Doubling& d, int mask) {
  const int np = d.newrank ^ mask;
  return np < d.rem ? np * 2 + 1 : np + d.rem;
}

}  // namespace zcoll::coll::schedule
