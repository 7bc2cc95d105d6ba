// The transport's tables and request lists, kept by the communicator and reused across
// calls (zcoll_comm_s::workspace). They are reserved in the same agreed step as the arena
// (zcoll_comm_s::shared_arena): a call that fits what every rank is known to hold makes no
// allocation of its own between the call's agreement and its end, so no rank can fail
// half-way through a schedule and leave the others waiting for its messages. What a codec
// operation allocates inside a piece's work is reported through the transport's error
// notices instead (transport.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include <mpi.h>

namespace zcoll::coll {

// Requests of one set of messages; for receives, where each one lands (a notice's code
// is read there).
struct Requests {
  std::vector<MPI_Request> req;
  std::vector<uint8_t*> buf;
  void clear() {
    req.clear();
    buf.clear();
  }
  void reserve(size_t n) {
    req.reserve(n);
    buf.reserve(n);
  }
};

struct Workspace {
  // Blocks and pieces (Transport's tables; see there).
  std::vector<size_t> block_begin, first_piece, piece_begin, piece_count, slot, stored_len;
  std::vector<int> piece_block;
  std::vector<const void*> block_src;
  std::vector<void*> block_dst;
  std::vector<uint8_t> unpacked;
  // Per piece, for one schedule at a time: the block exchange's receives and which pieces
  // it has sent; recursive doubling's stream lengths.
  std::vector<MPI_Request> pending;
  std::vector<uint8_t> sent;
  std::vector<size_t> lens[2];
  // DOC's piece of values (Transport::doc_step): grows on first use, a failure there being
  // the transport's error like a codec's.
  std::vector<uint8_t> values;
  // sets[0..3]: a schedule's receive and send sets, one request per piece at most each;
  // sets[4]: the block exchange's sends, a piece to each of up to `fanout` peers.
  static constexpr int kSets = 5;
  Requests sets[kSets];
  // Per rank, for the engines: block counts and displacements. Reserved before the call's
  // agreement (run_collective), which carries a failure to every rank.
  std::vector<size_t> counts, displs;
  std::vector<int> int_counts;
  // The node-aware collectives' arrays (hierarchical.h), p + 1 entries at most (2p requests),
  // reserved with the per-rank arrays where the communicator has nodes.
  std::vector<int> node_ints[3];
  std::vector<size_t> node_sizes[2];
  std::vector<MPI_Aint> node_bytes;
  std::vector<MPI_Datatype> node_types;
  std::vector<MPI_Request> node_reqs;

  void reserve_ranks(size_t p, bool nodes) {
    counts.reserve(p);
    displs.reserve(p);
    int_counts.reserve(p);
    if (!nodes) return;
    for (auto& v : node_ints) v.reserve(p + 1);
    for (auto& v : node_sizes) v.reserve(p + 1);
    node_bytes.reserve(p);
    node_types.reserve(p);
    node_reqs.reserve(2 * p);
  }
  // p blocks of n elements each (in counts).
  const std::vector<size_t>& uniform_counts(size_t p, size_t n) {
    counts.assign(p, n);
    return counts;
  }

  // Room for nblocks blocks and npieces pieces, each sent to up to `fanout` peers at once;
  // throws std::bad_alloc (the caller brings the failure to every rank).
  void reserve(size_t nblocks, size_t npieces, size_t fanout) {
    for (auto* v : {&block_begin, &first_piece}) v->reserve(nblocks + 1);
    block_src.reserve(nblocks);
    block_dst.reserve(nblocks);
    for (auto* v : {&piece_begin, &piece_count, &slot, &stored_len, &lens[0], &lens[1]}) v->reserve(npieces);
    piece_block.reserve(npieces);
    unpacked.reserve(npieces);
    pending.reserve(npieces);
    sent.reserve(npieces);
    for (int k = 0; k + 1 < kSets; ++k) sets[k].reserve(npieces);
    sets[kSets - 1].reserve(npieces * fanout);
  }
};

}  // namespace zcoll::coll
