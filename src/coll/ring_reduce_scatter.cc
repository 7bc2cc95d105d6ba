// Ring reduce-scatter in p - 1 steps (its reduced pieces then go around the ring of
// ring_allgather.cc, for an allreduce).
// In step k a rank sends the partial result of block (rank - k - 1) mod p to its right
// and receives that of block (rank - k - 2) from its left; after the last step it holds
// block `rank` reduced over all ranks. Each step moves 1/p of the data, piece by
// piece: the receives of a step are posted before its work starts, and piece i goes out
// as soon as it is made, while the rank works on piece i + 1 (double-buffered sets of
// receive and send slots, so a step can start before the previous one's sends finish).
//   homomorphic: this rank's input piece is quantized and combined with the received
//                partial as integers (zcoll_combine_values), so each input value is
//                quantized once;
//   DOC:         the received partial is decompressed, the op applied with this rank's
//                input, and the result compressed again.
#include "coll/pieces.h"

namespace zcoll::coll {

void ring_reduce_scatter(Pieces& R, bool want_stream, void* out) {
  const int p = R.c.size, r = R.c.rank, right = (r + 1) % p, left = (r - 1 + p) % p;
  std::vector<MPI_Request> rq[2], sq[2];
  for (int k = 0; k < p; ++k) {
    const bool last = k == p - 1;  // no send: combine into the final result
    const int cur = k % 2, prev = (k + 1) % 2;
    const int bs = (r - k - 1 + 2 * p) % p;
    if (!last) {
      const int br = (r - k - 2 + 2 * p) % p;
      rq[cur].clear();
      for (size_t i = R.first_piece[br]; i < R.first_piece[br + 1]; ++i)
        R.irecv(R.recv[cur] + R.block_slot(i, br), R.piece_cap(i), left, rq[cur]);
      R.wait_all(sq[cur]);  // step k - 2's sends used these slots
    }
    for (size_t i = R.first_piece[bs]; i < R.first_piece[bs + 1]; ++i) {
      uint8_t* piece;
      size_t len;
      if (k == 0) {
        piece = R.send[cur] + R.block_slot(i, bs);
        len = R.compress_input(i, piece);
      } else {
        const size_t got = R.wait_recv(rq[prev], i - R.first_piece[bs]);
        const uint8_t* partial = R.recv[prev] + R.block_slot(i, bs);
        piece = last ? (want_stream ? R.result + R.slot[i] : nullptr) : R.send[cur] + R.block_slot(i, bs);
        // A reduce-scatter's last step (no piece to send on) decompresses the partial and
        // applies the op with this rank's values as they are, on both paths: they need not
        // be quantized, so the result carries p - 1 quantizations, not p.
        void* values = piece ? nullptr : at(out, R.piece_begin[i] - R.block_begin[r], R.es);
        len = R.homomorphic && piece ? R.fold(partial, got, i, piece) : R.doc_step(partial, got, i, piece, values);
        if (last) {
          R.result_len[i] = len;
          continue;
        }
      }
      R.raw += R.piece_count[i] * R.es;
      R.isend(piece, len, right, sq[cur]);
      R.poll(sq[cur]);
    }
  }
  R.wait_all(sq[0]);
  R.wait_all(sq[1]);
}

}  // namespace zcoll::coll
