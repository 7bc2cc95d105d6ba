// Pairwise-exchange alltoall: in step k rank r sends its block for r + k and receives
// the block from r - k, so each step is a permutation and no link carries two messages
// at once. Each step compresses its outgoing block piece by piece, sends each piece as
// soon as it is made, and decompresses the incoming pieces as they arrive, so
// compression, transfer and decompression of one step overlap.
#include "coll/algorithms.h"
#include "coll/schedule.h"

namespace zcoll::coll {

void pairwise_alltoall(Transport& T, bool precompressed) {
  using namespace schedule;
  const int p = T.c.size, r = T.c.rank;
  Requests *sets = T.request_sets(), &rq = sets[0], *sq = sets + 2;
  for (int k = 1; k < p; ++k) {
    const int cur = k % 2, dst = pairwise_to(r, p, k), src = pairwise_from(r, p, k);
    const size_t s_end = T.first_piece[dst + 1], r_first = T.first_piece[src], r_end = T.first_piece[src + 1];
    // Every receive of a step completes within it, so one receive set serves all steps.
    rq.clear();
    for (size_t i = r_first; i < r_end; ++i) T.irecv(T.recv[0] + T.block_slot(i), T.piece_cap(i), src, rq);
    T.wait_all(sq[cur]);  // step k - 2's sends used these slots
    size_t next_send = T.first_piece[dst], next_recv = r_first;
    while (next_send < s_end || next_recv < r_end) {
      if (next_send < s_end) {
        const size_t i = next_send++;
        const uint8_t* s = precompressed ? T.stored_slot(i) : T.send[cur] + T.block_slot(i);
        const size_t len = precompressed ? T.stored_len[i] : T.compress_src(i, T.send[cur] + T.block_slot(i));
        T.send_stream(s, len, i, dst, sq[cur]);
        T.poll(sq[cur]);
      }
      // Decompress what has arrived; once every piece is out, wait for the rest.
      while (next_recv < r_end) {
        const size_t i = next_recv;
        size_t len = 0;
        if (next_send == s_end) len = T.wait_recv(rq, i - r_first);
        else if (!T.test_recv(rq, i - r_first, &len)) break;
        ++next_recv;
        T.decompress(T.recv[0] + T.block_slot(i), len, i);
      }
    }
  }
  T.wait_all(sq[0]);
  T.wait_all(sq[1]);
}

}  // namespace zcoll::coll
