// Ring allgather: p - 1 steps; in step k each rank passes on the block it received in
// step k - 1 (its own in step 0). Every link carries (p-1)/p of the data, the
// bandwidth-optimal pattern for large messages. Piece by piece: each received piece is
// passed on as soon as it arrives, before this rank decompresses it, so the next rank
// does not wait for that work. The baseline (CPRP2P) decompresses and recompresses at
// every hop instead of forwarding bytes.
#include "coll/algorithms.h"
#include "coll/schedule.h"

namespace zcoll::coll {

void ring_allgather(Transport& T, int shift) {
  using namespace schedule;
  const int p = T.c.size, r = T.c.rank, right = ring_right(r, p), left = ring_left(r, p);
  auto block = [&](int x) { return mod(x - shift, p); };
  Requests *rq = T.request_sets(), *sq = rq + 2;
  for (int k = 0; k < p; ++k) {
    const int cur = k % 2, prev = (k + 1) % 2;
    const int b = block(ring_allgather_sent(r, p, k));
    const bool forward = k < p - 1;  // the last step only unpacks what step p - 2 brought
    if (forward) {
      const int br = block(ring_allgather_received(r, p, k));
      rq[cur].clear();
      for (size_t i = T.first_piece[br]; i < T.first_piece[br + 1]; ++i)
        T.irecv(T.stored_slot(i), T.piece_cap(i), left, rq[cur]);
      T.wait_all(sq[cur]);  // step k - 2's sends used these slots
    }
    auto pass_on = [&](const uint8_t* s, size_t len, size_t i) {
      T.send_stream(s, len, i, right, sq[cur]);
      T.poll(sq[cur]);
    };
    for (size_t i = T.first_piece[b]; i < T.first_piece[b + 1]; ++i) {
      if (k > 0) T.stored_len[i] = T.wait_recv(rq[prev], i - T.first_piece[b]);
      else if (!T.stored_len[i] && forward) T.stored_len[i] = T.compress_src(i, T.stored_slot(i));  // own, raw
      const bool recompress = T.cprp2p && k > 0;
      if (forward && !recompress) pass_on(T.stored_slot(i), T.stored_len[i], i);
      T.unpack(i);
      if (forward && recompress) {
        uint8_t* again = T.send[cur] + T.block_slot(i);
        pass_on(again, T.compress_values(T.values_of(i), i, again), i);
      }
    }
  }
  T.wait_all(sq[0]);
  T.wait_all(sq[1]);
}

}  // namespace zcoll::coll
