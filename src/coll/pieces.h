// The piece engine of the pipelined collectives (the reductions, alltoall, and the ring
// allgather(v)). The vector is split into p blocks (block b ends up reduced on rank b, or
// goes to rank b, or comes from rank b) and each block into pieces of a few codec
// chunks. Every piece is its own stream and its own message, so that compression,
// combination and decompression of one piece overlap with the transfers of the others: a
// rank works on piece i while pieces i-1, i-2, ... are on the wire, and polls MPI between
// pieces. A receive is posted into a slot of the piece's worst-case size, so no rank needs
// to learn a compressed size first.
//
// Buffers live in the communicator's arena, each a region with one slot per piece at
// the piece's worst-case compressed size (only written bytes are touched):
//   own     this rank's input, compressed once (recursive doubling);
//   result  the reduced pieces (and, after an allgather or gather, everybody's), or an
//           in-place alltoall's outgoing pieces;
//   recv[2] and send[2]: one block of pieces in flight each (ring, alltoall), or a
//           whole-vector region for the partner's streams (recursive doubling).
#pragma once
#include "coll/frontend.h"

namespace zcoll::coll {

inline constexpr int kReduceTag = kTag + 20;
inline constexpr size_t kChunksPerPiece = 4;

struct Pieces {
  zcoll_comm_s& c;
  zcoll_dtype dtype;
  size_t es;
  int op;             // codec::CombineOp
  bool homomorphic = false;  // else decompress-operate-compress
  bool cprp2p = false;       // baseline: whole blocks, recompress at every allgather hop
  zcoll_codec_params params;  // ABS, the per-input bound
  const uint8_t* in = nullptr;  // this rank's input (all blocks)

  // blocks and pieces, in elements of the input vector
  std::vector<size_t> block_begin;  // p + 1
  std::vector<size_t> first_piece;  // p + 1: pieces of block b are [first_piece[b], first_piece[b+1])
  std::vector<size_t> piece_begin, piece_count, slot;  // slot: offset of the piece in a region
  size_t region_bytes = 0, max_block_bytes = 0;

  uint8_t *own = nullptr, *result = nullptr, *recv[2] = {nullptr, nullptr}, *send[2] = {nullptr, nullptr};
  std::vector<size_t> result_len;
  std::vector<uint8_t> values;  // doc_step's piece of decompressed values

  int err = ZCOLL_SUCCESS;  // first error on this rank (data keeps moving; see isend())
  double t_codec = 0, t_decomp = 0, t_reduce = 0;  // t_reduce: combining, homomorphic or on values
  size_t wire = 0, raw = 0;

  // combine_op: the reductions' op; the data-movement collectives combine nothing.
  Pieces(zcoll_comm_s& comm, zcoll_dtype dt, int combine_op = codec::kCombineSum)
      : c(comm), dtype(dt), es(codec::element_size(dt)), op(combine_op) {}

  // Which regions plan() carves (see above).
  enum class Layout {
    kResult,           // result only
    kBlockSets,        // recv[2], send[2]
    kResultAndBlocks,  // result, recv[2], send[2]
    kWholeVector,      // own, result, and recv[2], send[2] spanning every piece
  };
  // Lays out blocks (counts[b] elements each) and pieces, and carves the arena.
  int plan(const size_t* counts, Layout layout);

  // The communicator's codec settings with the absolute bound eb, as every piece uses them.
  void set_bound(double eb) {
    params = c.cfg.codec;
    params.eb_mode = ZCOLL_EB_ABS;
    params.eb = eb;
    params.ndims = 0;
  }
  // After the schedule: every rank returns the same outcome (the worst error anywhere),
  // and the call's statistics go to the communicator (t0: when the call began).
  int finish(int algorithm, double eb, double t0);

  size_t piece_cap(size_t i) const { return zcoll_codec_bound(piece_count[i], dtype); }
  // Byte offset of piece i inside a one-block region (recv/send sets of the ring).
  size_t block_slot(size_t i, int b) const { return slot[i] - slot[first_piece[b]]; }
  const uint8_t* input(size_t i) const { return in + piece_begin[i] * es; }

  // ---- piece operations (errors recorded in err)
  // Compresses piece i's values (this rank's input by default) to dst; returns the
  // length (0 on error).
  size_t compress_values(const void* values_of_piece, size_t i, uint8_t* dst);
  size_t compress_input(size_t i, uint8_t* dst) { return compress_values(input(i), i, dst); }
  // Homomorphic: out = op(a, b); returns the length.
  size_t combine(const uint8_t* a, size_t alen, const uint8_t* b, size_t blen, size_t i, uint8_t* out);
  // Homomorphic: out = op(this rank's input piece i, partial), the input quantized on the
  // way (zcoll_combine_values) instead of compressed first; returns the length.
  size_t fold(const uint8_t* partial, size_t len, size_t i, uint8_t* out);
  // DOC: decompress a partial result, apply op with this rank's input piece i, and
  // either compress it to out (returns its length) or, with out == nullptr, store the
  // values at dst.
  size_t doc_step(const uint8_t* partial, size_t len, size_t i, uint8_t* out, void* dst);
  // Piece i's values to dst, which holds the vector from element `base` on.
  void decompress(const uint8_t* s, size_t len, size_t i, void* dst, size_t base = 0);

  // ---- messages: one per piece; a 4-byte message is an error notice instead
  void isend(const uint8_t* p, size_t len, int peer, std::vector<MPI_Request>& reqs);
  void irecv(uint8_t* p, size_t cap, int peer, std::vector<MPI_Request>& reqs);
  // Waits for receive j of reqs; returns its length, or 0 after a notice or MPI error.
  size_t wait_recv(std::vector<MPI_Request>& reqs, size_t j);
  // Completes receive j of reqs if it has arrived: true, and its length in *len (0 as
  // for wait_recv); false while it is in flight.
  bool test_recv(std::vector<MPI_Request>& reqs, size_t j, size_t* len);
  size_t received(const MPI_Status& st);  // a completed receive's length (see wait_recv)
  void wait_all(std::vector<MPI_Request>& reqs);
  // Lets MPI progress the listed sends between pieces of work.
  void poll(std::vector<MPI_Request>& sends);
  void fail(int code) {
    if (!err) err = code;
  }
};

// ---- schedules (one file each)
// Ring reduce-scatter: leaves block `rank`'s reduced pieces in result (want_stream) or
// its values at out (the rank's block of the result).
void ring_reduce_scatter(Pieces& R, bool want_stream, void* out);
// Ring allgather of pieces, decompressing each as it passes (ring_allgather.cc).
// Without displs (allreduce): result holds this rank's reduced pieces, and the blocks
// lie in order in out, the whole vector. With displs (allgather(v)): block b goes to out +
// displs[b] elements, and this rank's own block is there already, raw: its pieces are
// compressed as they first go out, and it is left exact.
void ring_allgather_pieces(Pieces& R, void* out, const int* displs = nullptr);
// Everybody's reduced pieces to root, decompressed there into out.
void gather_pieces(Pieces& R, int root, void* out);
// Recursive doubling on whole compressed vectors (homomorphic), decompressed into out.
void recursive_doubling_allreduce(Pieces& R, void* out);
// Pairwise-exchange alltoall of the input's blocks into out (recvbuf), piece by piece.
// precompressed: every outgoing piece is already in result (MPI_IN_PLACE: out is the
// input, and the exchange overwrites blocks before they are sent).
void pairwise_alltoall_pieces(Pieces& R, bool precompressed, void* out);

}  // namespace zcoll::coll
