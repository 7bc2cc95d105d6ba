// Ring allgather: p-1 steps; in step k each rank passes on the block it received in
// step k-1 (its own in step 0). Every link carries (p-1)/p of the data, the
// bandwidth-optimal pattern for large messages. Two transports: whole blocks over a Link
// (the CPRP2P baseline of allgather, and the bcast's scatter-allgather), and pieces on the
// piece engine (allgather(v), and allreduce's second half), where each piece is passed on
// as soon as it arrives, while the next ones are on the wire.
#include "coll/pieces.h"

namespace zcoll::coll {

void ring_allgather(Link& link, int rank, int p, const std::vector<int>& seg_of_rank) {
  const int right = (rank + 1) % p, left = (rank - 1 + p) % p;
  for (int k = 0; k < p - 1; ++k) {
    const int out = seg_of_rank[(rank - k + p) % p];
    const int in = seg_of_rank[(rank - k - 1 + 2 * p) % p];
    link.send(&out, 1, right);
    link.recv(&in, 1, left);
    link.wait_sends();
  }
}

// Step k forwards block (rank - k) mod p (its own first) and receives block
// (rank - k - 1); every piece is decompressed right after it is passed on. The baseline
// (CPRP2P) decompresses and recompresses at every hop instead of forwarding bytes.
void ring_allgather_pieces(Pieces& R, void* out, const int* displs) {
  const int p = R.c.size, r = R.c.rank, right = (r + 1) % p, left = (r - 1 + p) % p;
  // Where piece i of block b goes: at(dst, piece_begin[i] - base).
  auto target = [&](int b, size_t* base) -> void* {
    *base = displs ? R.block_begin[b] : 0;
    return displs ? at(out, static_cast<size_t>(displs[b]), R.es) : out;
  };
  std::vector<MPI_Request> rq[2], sq[2];
  for (int k = 0; k < p; ++k) {
    const int cur = k % 2, prev = (k + 1) % 2;
    const int b = (r - k + p) % p;
    const bool forward = k < p - 1;
    const bool own_raw = displs && k == 0;  // this rank's allgather block: raw values in out
    if (own_raw && !forward) continue;
    if (forward) {
      const int br = (r - k - 1 + p) % p;
      rq[cur].clear();
      for (size_t i = R.first_piece[br]; i < R.first_piece[br + 1]; ++i)
        R.irecv(R.result + R.slot[i], R.piece_cap(i), left, rq[cur]);
      R.wait_all(sq[cur]);
    }
    auto pass_on = [&](const uint8_t* s, size_t len, size_t i) {
      R.raw += R.piece_count[i] * R.es;
      R.isend(s, len, right, sq[cur]);
      R.poll(sq[cur]);
    };
    size_t base = 0;
    void* dst = target(b, &base);
    for (size_t i = R.first_piece[b]; i < R.first_piece[b + 1]; ++i) {
      uint8_t* s = R.result + R.slot[i];
      void* values = at(dst, R.piece_begin[i] - base, R.es);
      if (own_raw) {  // compressed as it first goes out; it stays exact here
        pass_on(s, R.result_len[i] = R.compress_values(values, i, s), i);
        continue;
      }
      if (k > 0) R.result_len[i] = R.wait_recv(rq[prev], i - R.first_piece[b]);
      const bool recompress = R.cprp2p && k > 0;
      // Forwarded bytes go out before this rank decompresses them, so the next rank does
      // not wait for that work.
      if (forward && !recompress) pass_on(s, R.result_len[i], i);
      R.decompress(s, R.result_len[i], i, dst, base);
      if (forward && recompress) {
        uint8_t* again = R.send[cur] + R.block_slot(i, b);
        pass_on(again, R.compress_values(values, i, again), i);
      }
    }
  }
  R.wait_all(sq[0]);
  R.wait_all(sq[1]);
}

}  // namespace zcoll::coll
