// Recursive doubling on whole compressed vectors, homomorphic: every rank compresses its
// input once; in step k it swaps its current stream with the rank 2^k away and combines
// the two as integers. log2(p) steps, each moving the whole (compressed) vector: the
// short-message algorithm. For p not a power of two, the first 2 x rem ranks fold in
// pairs first (the even one hands its stream to the odd one and sits out) and get the
// result back at the end, as in MPICH. The lower-ranked side's stream is always the first
// operand, so every rank ends with the same bytes.
#include <utility>

#include "coll/pieces.h"

namespace zcoll::coll {

void recursive_doubling_allreduce(Pieces& R, void* out) {
  const int p = R.c.size, r = R.c.rank;
  const size_t n = R.piece_begin.size();
  uint8_t *cur = R.own, *spare = R.result, *inbox = R.recv[0];
  std::vector<size_t> cur_len(n), next_len(n);
  std::vector<MPI_Request> rq, sq;
  for (size_t i = 0; i < n; ++i) cur_len[i] = R.compress_input(i, cur + R.slot[i]);

  auto send_all = [&](int peer) {
    for (size_t i = 0; i < n; ++i) {
      R.raw += R.piece_count[i] * R.es;
      R.isend(cur + R.slot[i], cur_len[i], peer, sq);
    }
  };
  auto recv_all = [&](int peer) {
    rq.clear();
    for (size_t i = 0; i < n; ++i) R.irecv(inbox + R.slot[i], R.piece_cap(i), peer, rq);
  };
  // Combines each arriving piece with ours; `mine_first`: ours is the lower side's.
  auto fold = [&](bool mine_first) {
    for (size_t i = 0; i < n; ++i) {
      const size_t got = R.wait_recv(rq, i);
      const uint8_t *a = cur + R.slot[i], *b = inbox + R.slot[i];
      size_t alen = cur_len[i], blen = got;
      if (!mine_first) {
        std::swap(a, b);
        std::swap(alen, blen);
      }
      next_len[i] = R.combine(a, alen, b, blen, i, spare + R.slot[i]);
      R.poll(sq);
    }
    R.wait_all(sq);
    std::swap(cur, spare);
    std::swap(cur_len, next_len);
  };

  int pof2 = 1;
  while (pof2 * 2 <= p) pof2 *= 2;
  const int rem = p - pof2;
  int newrank;
  if (r < 2 * rem) {
    if (r % 2 == 0) {
      send_all(r + 1);
      R.wait_all(sq);
      newrank = -1;
    } else {
      recv_all(r - 1);
      fold(false);
      newrank = r / 2;
    }
  } else {
    newrank = r - rem;
  }
  if (newrank >= 0) {
    for (int mask = 1; mask < pof2; mask <<= 1) {
      const int np = newrank ^ mask;
      const int peer = np < rem ? np * 2 + 1 : np + rem;
      recv_all(peer);
      send_all(peer);
      fold(newrank < np);
    }
  }
  if (r < 2 * rem) {
    if (r % 2) {
      send_all(r - 1);
      R.wait_all(sq);
    } else {
      recv_all(r + 1);
      for (size_t i = 0; i < n; ++i) cur_len[i] = R.wait_recv(rq, i);
      cur = inbox;
    }
  }
  for (size_t i = 0; i < n; ++i) R.decompress(cur + R.slot[i], cur_len[i], i, out);
}

}  // namespace zcoll::coll
