// Pairwise-exchange alltoall: in step k rank r sends its block for r+k and receives the
// block from r-k, so each step is a permutation and no link carries two messages at once.
// Two transports: whole blocks over a Link (the CPRP2P baseline), and pieces (the
// compressed path), where each step compresses its outgoing block piece by piece, sends
// each piece as soon as it is made, and decompresses the incoming pieces as they arrive,
// so compression, transfer and decompression of one step overlap.
#include "coll/pieces.h"

namespace zcoll::coll {

void pairwise_alltoall(Link& link, int rank, int p) {
  for (int k = 1; k < p; ++k) {
    const int dst = (rank + k) % p, src = (rank - k + p) % p;
    const int out = dst, in = p + src;
    link.send(&out, 1, dst);
    link.recv(&in, 1, src);
    link.wait_sends();
  }
}

void pairwise_alltoall_pieces(Pieces& R, bool precompressed, void* out) {
  const int p = R.c.size, r = R.c.rank;
  std::vector<MPI_Request> rq, sq[2];
  for (int k = 1; k < p; ++k) {
    const int cur = k % 2, dst = (r + k) % p, src = (r - k + p) % p;
    const size_t s_end = R.first_piece[dst + 1], r_first = R.first_piece[src], r_end = R.first_piece[src + 1];
    // Every receive of a step completes within it, so one receive set serves all steps.
    rq.clear();
    for (size_t i = r_first; i < r_end; ++i) R.irecv(R.recv[0] + R.block_slot(i, src), R.piece_cap(i), src, rq);
    R.wait_all(sq[cur]);  // step k - 2's sends used these slots
    size_t next_send = R.first_piece[dst], next_recv = r_first;
    while (next_send < s_end || next_recv < r_end) {
      if (next_send < s_end) {
        const size_t i = next_send++;
        const uint8_t* s;
        size_t len;
        if (precompressed) {
          s = R.result + R.slot[i];
          len = R.result_len[i];
        } else {
          uint8_t* slot = R.send[cur] + R.block_slot(i, dst);
          len = R.compress_input(i, slot);
          s = slot;
        }
        R.raw += R.piece_count[i] * R.es;
        R.isend(s, len, dst, sq[cur]);
        R.poll(sq[cur]);
      }
      // Decompress what has arrived; once every piece is out, wait for the rest.
      while (next_recv < r_end) {
        const size_t i = next_recv;
        size_t len = 0;
        if (next_send == s_end) len = R.wait_recv(rq, i - r_first);
        else if (!R.test_recv(rq, i - r_first, &len)) break;
        ++next_recv;
        R.decompress(R.recv[0] + R.block_slot(i, src), len, i, out);
      }
    }
  }
  R.wait_all(sq[0]);
  R.wait_all(sq[1]);
}

}  // namespace zcoll::coll
