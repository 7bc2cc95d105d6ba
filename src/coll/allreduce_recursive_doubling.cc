// Recursive doubling on whole compressed vectors, homomorphic: every rank compresses its
// input once; in step k it swaps its current stream with the rank 2^k away and combines
// the two as integers. log2(p) steps, each moving the whole (compressed) vector: the
// short-message algorithm. For p not a power of two, the first 2 x rem ranks fold in
// pairs first (schedule::doubling) and get the result back at the end, as in MPICH. The
// lower-ranked side's stream is always the first operand, so every rank ends with the
// same bytes.
#include <utility>

#include "coll/algorithms.h"
#include "coll/schedule.h"

namespace zcoll::coll {

void recursive_doubling_allreduce(Transport& T) {
  const int p = T.c.size, r = T.c.rank;
  const size_t n = T.piece_begin.size();
  uint8_t *cur = T.own, *spare = T.stored, *inbox = T.recv[0];
  std::vector<size_t>&cur_len = T.w.lens[0], &next_len = T.w.lens[1];
  cur_len.assign(n, 0);
  next_len.assign(n, 0);
  Requests *sets = T.request_sets(), &rq = sets[0], &sq = sets[1];
  for (size_t i = 0; i < n; ++i) cur_len[i] = T.compress_src(i, cur + T.slot[i]);

  auto send_all = [&](int peer) {
    for (size_t i = 0; i < n; ++i) T.send_stream(cur + T.slot[i], cur_len[i], i, peer, sq);
  };
  auto recv_all = [&](int peer) {
    rq.clear();
    for (size_t i = 0; i < n; ++i) T.irecv(inbox + T.slot[i], T.piece_cap(i), peer, rq);
  };
  // Combines each arriving piece with ours; `mine_first`: ours is the lower side's.
  auto fold = [&](bool mine_first) {
    for (size_t i = 0; i < n; ++i) {
      const size_t got = T.wait_recv(rq, i);
      const uint8_t *mine = cur + T.slot[i], *theirs = inbox + T.slot[i];
      uint8_t* out = spare + T.slot[i];
      next_len[i] = mine_first ? T.combine(mine, cur_len[i], theirs, got, i, out) : T.combine(theirs, got, mine, cur_len[i], i, out);
      T.poll(sq);
    }
    T.wait_all(sq);
    std::swap(cur, spare);
    std::swap(cur_len, next_len);
  };

  const schedule::Doubling d = schedule::doubling(r, p);
  if (r < 2 * d.rem) {
    if (r % 2 == 0) {
      send_all(r + 1);
      T.wait_all(sq);
    } else {
      recv_all(r - 1);
      fold(false);
    }
  }
  if (d.newrank >= 0) {
    for (int mask = 1; mask < d.pof2; mask <<= 1) {
      const int peer = schedule::doubling_peer(d, mask);
      recv_all(peer);
      send_all(peer);
      fold(d.newrank < (d.newrank ^ mask));
    }
  }
  if (r < 2 * d.rem) {
    if (r % 2) {
      send_all(r - 1);
      T.wait_all(sq);
    } else {
      recv_all(r + 1);
      for (size_t i = 0; i < n; ++i) cur_len[i] = T.wait_recv(rq, i);
      cur = inbox;
    }
  }
  for (size_t i = 0; i < n; ++i) T.decompress(cur + T.slot[i], cur_len[i], i);
}

}  // namespace zcoll::coll
