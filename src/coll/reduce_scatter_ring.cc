// Ring reduce-scatter in p - 1 steps (schedule::ring_reduce_*): in step k a rank sends
// the partial result of block r - k - 1 to its right and receives that of block
// r - k - 2 from its left; after the last step it holds block r reduced over all ranks.
// Each step moves 1/p of the data, piece by piece: the receives of a step are posted
// before its work starts, and piece i goes out as soon as it is made, while the rank
// works on piece i + 1 (double-buffered receive and send sets, so a step can start
// before the previous one's sends finish).
//   homomorphic: this rank's input piece is quantized and combined with the received
//                partial as integers (zcoll_combine_values), so each input value is
//                quantized once;
//   DOC:         the received partial is decompressed, the op applied with this rank's
//                input, and the result compressed again.
#include "coll/algorithms.h"
#include "coll/schedule.h"

namespace zcoll::coll {
namespace {
// Piece i's partial, the j-th receive of `received`, with this rank's values, into piece
// (nullptr: the values stay in place, unstored); its length there.
// A reduce-scatter's last step (no piece to send on) decompresses the partial and applies
// the op with this rank's values as they are, on both paths: they need not be quantized, so
// the result carries p - 1 quantizations, not p.
size_t combine_partial(Transport& T, Requests& received, size_t j, size_t i, uint8_t* piece) {
  const size_t got = T.wait_recv(received, j);
  const uint8_t* partial = received.buf[j];
  return T.homomorphic && piece ? T.fold(partial, got, i, piece) : T.doc_step(partial, got, i, piece);
}
}  // namespace

// p >= 2: a reduction on one rank runs plain MPI (wants_compression), and a rail spans two
// nodes or more.
void ring_reduce_scatter(Transport& T, bool want_stream) {
  using namespace schedule;
  const int p = T.c.size, r = T.c.rank, right = ring_right(r, p), left = ring_left(r, p);
  Requests *rq = T.request_sets(), *sq = rq + 2;
  for (int k = 0; k < p; ++k) {
    const bool last = k == p - 1;  // no send: combine into the final result
    const int cur = k % 2, prev = (k + 1) % 2;
    const int bs = ring_reduce_sent(r, p, k);
    if (!last) {
      const int br = ring_reduce_received(r, p, k);
      rq[cur].clear();
      for (size_t i = T.first_piece[br]; i < T.first_piece[br + 1]; ++i)
        T.irecv(T.recv[cur] + T.block_slot(i), T.piece_cap(i), left, rq[cur]);
      T.wait_all(sq[cur]);  // step k - 2's sends used these slots
    }
    for (size_t i = T.first_piece[bs]; i < T.first_piece[bs + 1]; ++i) {
      if (last) {
        T.stored_len[i] = combine_partial(T, rq[prev], i - T.first_piece[bs], i, want_stream ? T.stored_slot(i) : nullptr);
        continue;
      }
      uint8_t* piece = T.send[cur] + T.block_slot(i);
      const size_t len = k == 0 ? T.compress_src(i, piece) : combine_partial(T, rq[prev], i - T.first_piece[bs], i, piece);
      T.send_stream(piece, len, i, right, sq[cur]);
      T.poll(sq[cur]);
    }
  }
  T.wait_all(sq[0]);
  T.wait_all(sq[1]);
}

}  // namespace zcoll::coll
