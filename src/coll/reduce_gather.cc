// The second half of a reduce: every rank's reduced block travels, still compressed,
// straight to the root, which decompresses its own while the others arrive.
#include "coll/algorithms.h"

namespace zcoll::coll {

void gather_reduced_blocks(Transport& T, int root) {
  const int p = T.c.size, r = T.c.rank;
  Requests *sets = T.request_sets(), &rq = sets[0], &sq = sets[1];
  if (r != root) {
    for (size_t i = T.first_piece[r]; i < T.first_piece[r + 1]; ++i)
      T.send_stream(T.stored_slot(i), T.stored_len[i], i, root, sq);
    T.wait_all(sq);
    return;
  }
  for (int b = 0; b < p; ++b)
    for (size_t i = T.first_piece[b]; b != root && i < T.first_piece[b + 1]; ++i)
      T.irecv(T.stored_slot(i), T.piece_cap(i), b, rq);
  for (size_t i = T.first_piece[r]; i < T.first_piece[r + 1]; ++i) T.decompress(T.stored_slot(i), T.stored_len[i], i);
  size_t j = 0;  // rq holds the receives in the order of this loop
  for (int b = 0; b < p; ++b)
    for (size_t i = T.first_piece[b]; b != root && i < T.first_piece[b + 1]; ++i) {
      T.stored_len[i] = T.wait_recv(rq, j++);
      T.decompress(T.stored_slot(i), T.stored_len[i], i);
    }
}

}  // namespace zcoll::coll
