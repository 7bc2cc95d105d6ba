// The schedules, one file each (<collective>_<algorithm>.cc), all on the one transport.
// Which one a call runs is decided in select.cc.
#pragma once
#include "coll/transport.h"

namespace zcoll::coll {

// Ring allgather: rank x holds block (x - shift) mod p at the start (its own, block x, with
// shift 0; block x - root after a scatter from root); every rank ends with every block.
void ring_allgather(Transport& T, int shift = 0);
// Bruck allgather: block b starts on rank b.
void bruck_allgather(Transport& T);
// Binomial trees; blocks are indexed by relative rank (rank - root) mod p, except for
// bcast, whose blocks all travel the whole tree.
void binomial_bcast(Transport& T, int root);
void binomial_scatter(Transport& T, int root);
// The scatter tree's transfers on this rank: its own subtree's blocks from (scatter) or
// to (gather) its parent, and each child's subtree's blocks.
void binomial_subtrees(const Transport& T, int root, Transfers* parent, Transfers* children);
void binomial_gather(Transport& T, int root);
// Bcast of large buffers: a binomial scatter of p blocks, then a ring allgather of them.
void scatter_allgather_bcast(Transport& T, int root);
// Pairwise-exchange alltoall: block b of the send side goes to rank b, block b of the
// receive side comes from rank b (same block ids). precompressed: every outgoing piece
// is already stored (MPI_IN_PLACE, where the exchange overwrites the send side).
void pairwise_alltoall(Transport& T, bool precompressed);
// Ring reduce-scatter: leaves block `rank` reduced, stored compressed (want_stream) or
// as values at its dst.
void ring_reduce_scatter(Transport& T, bool want_stream);
// Every rank's stored reduced block to root, unpacked there.
void gather_reduced_blocks(Transport& T, int root);
// Recursive doubling on whole compressed vectors (homomorphic), unpacked at the dsts.
void recursive_doubling_allreduce(Transport& T);

}  // namespace zcoll::coll
