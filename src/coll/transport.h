// The one transport of the compressed collectives. A collective's vector is split into
// blocks (block b goes to, comes from, or is reduced on one rank, or is one part of a
// broadcast), and each block into pieces of a few codec chunks. Every piece is its own
// stream and its own MPI message, so compressing, combining or decompressing one piece
// overlaps with the transfers of the others, and a receive is posted into a slot of the
// piece's worst-case size, so no rank needs to learn a compressed size first.
//
// Two policies:
//   compress once   a block is compressed by the rank that owns it (at its first send)
//                   and forwarded as bytes; each rank that keeps it decompresses it once;
//   CPRP2P          the published baseline: whole blocks, decompressed on arrival and
//                   compressed again before every send.
//
// Errors: after a failure a rank keeps the schedule going, sending an error notice (a
// 4-byte message carrying its zcoll code; no stream is that short) instead of each
// piece, so every rank runs to the end and nobody waits forever; finish() then gives
// every rank the same code. The tables of blocks and pieces and the request lists live in
// the communicator's workspace (workspace.h), reserved with the arena, so a schedule
// allocates none of them once the ranks agreed; what it does allocate (a codec's tables,
// DOC's and CPRP2P's buffers of values) fails into such a notice.
//
// Buffers live in the communicator's arena, each a region with one slot per piece at
// the piece's worst-case compressed size (only written bytes are touched):
//   own      this rank's input, compressed once (recursive doubling);
//   stored   pieces a rank holds compressed: received, compressed for sending, reduced;
//   recv[2], send[2]  one block of pieces in flight each (ring reduce-scatter, alltoall;
//            CPRP2P's ring allgather recompresses into send[2]), or, recv[0] only, a
//            whole-vector region for the partner's streams (recursive doubling).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#include "codec/stream.h"
#include "coll/schedule.h"
#include "coll/select.h"
#include "coll/workspace.h"
#include "common/comm.h"
#include "common/mpi_util.h"

namespace zcoll::coll {

inline constexpr int kTag = 7301;
// The blocks to receive from, or send to, one peer (tree and Bruck schedules): a range of
// blocks (schedule::BlockRange), so that a schedule allocates nothing.
struct Transfer {
  int peer;
  schedule::BlockRange blocks;
};
// A rank's transfers of one exchange: a parent, or its children in a binomial tree (at most
// ceil(log2 p) < 32 of them), or one Bruck peer.
struct Transfers {
  Transfer item[32];
  int n = 0;
  void add(int peer, schedule::BlockRange blocks) { item[n++] = {peer, blocks}; }
  const Transfer* begin() const { return item; }
  const Transfer* end() const { return item + n; }
};

struct Transport {
  zcoll_comm_s& c;
  zcoll_dtype dtype;
  size_t es;
  int op;                    // codec::CombineOp (reductions)
  bool homomorphic = false;  // reductions: combine compressed pieces, else decompress-operate-compress
  bool cprp2p = false;       // the baseline policy (see above)
  zcoll_codec_params params; // ABS, the per-input bound

  // The tables below live in the communicator's workspace (workspace.h), reused across calls.
  Workspace& w;
  // Blocks and pieces, in elements of the collective's vector.
  std::vector<size_t>& block_begin = w.block_begin;  // nblocks + 1
  std::vector<size_t>& first_piece = w.first_piece;  // nblocks + 1: block b's pieces are [first_piece[b], first_piece[b+1])
  std::vector<size_t>& piece_begin = w.piece_begin;
  std::vector<size_t>& piece_count = w.piece_count;
  std::vector<size_t>& slot = w.slot;  // the piece's offset in a region
  std::vector<int>& piece_block = w.piece_block;
  // Where block b's values are on this rank (src: it has them from the start; dst: they
  // must end up there). Unset when the rank only forwards the block.
  std::vector<const void*>& block_src = w.block_src;
  std::vector<void*>& block_dst = w.block_dst;
  size_t region_bytes = 0, max_block_bytes = 0;

  uint8_t *own = nullptr, *stored = nullptr, *recv[2] = {nullptr, nullptr}, *send[2] = {nullptr, nullptr};
  std::vector<size_t>& stored_len = w.stored_len;  // 0: the piece is not in stored (yet)
  std::vector<uint8_t>& unpacked = w.unpacked;     // the piece's values are at its dst (or, CPRP2P, in relay)

  int err = ZCOLL_SUCCESS;  // first error on this rank (data keeps moving; see above)
  int32_t notice = 0;       // what error notices carry: err, kept here while sends are in flight
  double t_codec = 0, t_decomp = 0, t_reduce = 0;  // t_reduce: combining, homomorphic or on values
  size_t wire = 0, raw = 0;

  // Runs the chosen schedule: the choice sets the policy and what the statistics report.
  Transport(zcoll_comm_s& comm, zcoll_dtype dt, const Choice& choice, int combine_op = codec::kCombineSum)
      : c(comm), dtype(dt), es(codec::element_size(dt)), op(combine_op), cprp2p(choice.cprp2p),
        w(comm.workspace), algorithm_(choice.reported()) {
    if (c.debug_fail) fail(c.debug_fail);
  }

  // Which regions plan() carves (see above): only those the schedule touches, since the
  // arena is reserved whole (under strict overcommit, or a limit on the address space, an
  // unused region still counts).
  struct Layout {
    bool own, stored;
    int recv_sets, send_sets;  // recv[0..recv_sets), send[0..send_sets)
    bool whole_sets;           // the sets span every piece rather than one block
  };
  static constexpr Layout kStored{false, true, 0, 0, false};            // trees, Bruck, the ring allgather
  static constexpr Layout kPairwise{false, false, 1, 2, false};         // alltoall
  static constexpr Layout kPairwiseInPlace{false, true, 1, 0, false};   // alltoall, compressed up front
  static constexpr Layout kRing{false, true, 2, 2, false};              // ring reduce-scatter (+ allgather)
  static constexpr Layout kWholeVector{true, true, 1, 0, true};         // recursive doubling
  // Once per transport: the communicator's codec settings with the absolute bound eb;
  // blocks (counts[b] elements each, nblocks of them) and pieces; the arena's regions.
  // min_pieces: cut each block into that many pieces at least (schedule::piece_values).
  // False on every rank where some rank has no room for its regions (err is then
  // ZCOLL_ERR_NO_MEMORY): the schedule must not run; finish() still gives the outcome.
  [[nodiscard]] bool plan(double eb, const size_t* counts, size_t nblocks, Layout layout, size_t min_pieces = 1);
  // Sets block_src / block_dst of block b (nullptr for none).
  void place(int b, const void* src, void* dst) {
    block_src[b] = src;
    block_dst[b] = dst;
  }
  // After the schedule: every rank returns the same outcome (the worst error anywhere),
  // and the call's statistics go to the communicator.
  int finish();

  size_t nblocks() const { return block_begin.size() - 1; }
  size_t piece_cap(size_t i) const { return zcoll_codec_bound(piece_count[i], dtype); }
  // Byte offset of piece i inside a one-block region (recv/send sets).
  size_t block_slot(size_t i) const { return slot[i] - slot[first_piece[piece_block[i]]]; }
  uint8_t* stored_slot(size_t i) const { return stored + slot[i]; }
  const void* piece_src(size_t i) const {
    const void* s = block_src[piece_block[i]];
    return s ? at(s, piece_begin[i] - block_begin[piece_block[i]], es) : nullptr;
  }
  void* piece_dst(size_t i) const {
    void* d = block_dst[piece_block[i]];
    return d ? at(d, piece_begin[i] - block_begin[piece_block[i]], es) : nullptr;
  }
  // Where piece i's values are on this rank (CPRP2P compresses them again to send them).
  const void* values_of(size_t i) const {
    if (const void* s = piece_src(i)) return s;
    if (void* d = piece_dst(i)) return d;
    return i < relay_.size() ? relay_[i].data() : nullptr;
  }
  // The block's values arrive here and are not this rank's own.
  bool kept(size_t i) const { return block_dst[piece_block[i]] && !block_src[piece_block[i]]; }

  // ---- piece operations (errors recorded in err; lengths 0 after one)
  // Compresses values (piece i's src by default) to dst; returns the length.
  size_t compress_values(const void* values, size_t i, uint8_t* dst);
  size_t compress_src(size_t i, uint8_t* dst) { return compress_values(piece_src(i), i, dst); }
  // Homomorphic: out = op(a, b); returns the length.
  size_t combine(const uint8_t* a, size_t alen, const uint8_t* b, size_t blen, size_t i, uint8_t* out);
  // Homomorphic: out = op(piece i's src, partial), the values quantized on the way
  // (zcoll_combine_values) instead of compressed first; returns the length.
  size_t fold(const uint8_t* partial, size_t len, size_t i, uint8_t* out);
  // DOC: decompress a partial result, apply op with piece i's src, and either compress
  // it to out (returns its length) or, with out == nullptr, store the values at piece_dst.
  size_t doc_step(const uint8_t* partial, size_t len, size_t i, uint8_t* out);
  // Piece i's stream s to its dst (or to `to`).
  void decompress(const uint8_t* s, size_t len, size_t i, void* to = nullptr);
  // Decompresses stored piece i to its dst once, if this rank keeps it.
  void unpack(size_t i);

  // ---- messages: one per piece (a 4-byte message is an error notice instead)
  void isend(const uint8_t* p, size_t len, int peer, Requests& reqs);
  // isend of piece i's stream s, counted as the piece's raw data sent.
  void send_stream(const uint8_t* s, size_t len, size_t i, int peer, Requests& sends) {
    raw += piece_count[i] * es;
    isend(s, len, peer, sends);
  }
  void irecv(uint8_t* p, size_t cap, int peer, Requests& reqs);
  // Waits for receive j; returns its length, or 0 after a notice or MPI error.
  size_t wait_recv(Requests& reqs, size_t j);
  // Completes receive j if it has arrived: true, and its length in *len (0 as for
  // wait_recv); false while it is in flight.
  bool test_recv(Requests& reqs, size_t j, size_t* len);
  void wait_all(Requests& reqs);
  // Lets MPI progress the listed sends between pieces of work.
  void poll(Requests& sends);
  // Sends stored piece i to peer (counted as raw data sent). CPRP2P compresses the
  // piece's values again for each send.
  void send_piece(size_t i, int peer, Requests& sends);
  // Block-level exchange (trees, Bruck): posts the receives, sends every listed block
  // piece by piece in the order given (compressing this rank's own blocks at their
  // first send, forwarding received pieces as soon as they arrive, and unpacking each
  // kept piece right after its sends), then completes the remaining receives.
  void exchange(const Transfers& recvs, const Transfers& sends);
  // The workspace's four request sets (a schedule's receive and send sets), emptied.
  Requests* request_sets() {
    for (int k = 0; k + 1 < Workspace::kSets; ++k) w.sets[k].clear();
    return w.sets;
  }

  void fail(int code) {
    if (!err) err = notice = code;
  }

 private:
  // f() -> zcoll code, with a failed allocation inside (the codec's per-call tables) as
  // ZCOLL_ERR_NO_MEMORY: it must reach the other ranks as a notice, not as an exception
  // that leaves them waiting.
  template <class F>
  static int no_throw(F&& f) {
    try {
      return f();
    } catch (const std::bad_alloc&) {
      return ZCOLL_ERR_NO_MEMORY;
    }
  }
  // Runs a codec operation f() -> zcoll code, its time added to `clock`; the error, if
  // any, becomes this rank's. Returns the code.
  template <class F>
  int timed(double& clock, F&& f) {
    const double t = now();
    const int rc = no_throw(f);
    clock += now() - t;
    if (rc) fail(rc);
    return rc;
  }
  size_t received(const MPI_Status& st, const uint8_t* buf);
  size_t wait_one(MPI_Request& r, const uint8_t* buf);  // wait_recv of one request
  // Makes stored piece i available: waits for its receive, or compresses this rank's
  // own values (the first time).
  void ready(size_t i);
  // plan()'s last step: the regions in the arena a (own, stored, then the receive and send sets).
  void place_regions(uint8_t* a, const Layout& layout, size_t own_bytes, size_t stored_bytes, size_t set_bytes);
  // exchange()'s steps: every listed block's receives, into the pieces' slots; then every
  // piece of the blocks sent, to each peer that wants it.
  void post_block_receives(const Transfers& recvs);
  void send_blocks(const Transfers& sends, Requests& out);
  // Buffers of a piece's values or stream, allocated as the schedule goes: a failure is
  // this rank's error (ZCOLL_ERR_NO_MEMORY), carried by its notices like a codec's.
  std::vector<std::vector<uint8_t>> relay_;        // CPRP2P: values of pieces only passed on
  // CPRP2P: streams of sends in flight (a stream's bytes stay put when the list grows: moving
  // a vector keeps its buffer). Not a deque, whose constructor allocates.
  std::vector<std::vector<uint8_t>> outgoing_;
  // v with n bytes at least, or false after this rank's ZCOLL_ERR_NO_MEMORY.
  bool grow(std::vector<uint8_t>& v, size_t n);
  int algorithm_;                                  // what zcoll_stats reports
};

}  // namespace zcoll::coll
