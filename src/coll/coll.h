// The compressed-collectives layer. A collective is (1) a front end that checks MPI
// arguments, decides between plain MPI and compression, and lays the data out as
// segments (the blocks of the collective); (2) a schedule (ring, Bruck, binomial tree,
// pairwise) that says which segments go to which peer, written once; and (3) a Link that
// says how segments travel: compressed once by their owner and forwarded as bytes
// (CompressedLink), or compressed before every send and decompressed after every receive
// (CprP2pLink, the baseline).
#pragma once
#include "zcoll.h"  // brings <mpi.h> without the MPI C++ bindings

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "zcoll.h"

namespace zcoll {
// Envelope and payload of one point-to-point float message (src/p2p).
struct StagingBuffer {
  std::unique_ptr<uint8_t[]> data;
  size_t cap = 0;
};
}  // namespace zcoll

struct zcoll_comm_s {
  MPI_Comm comm = MPI_COMM_NULL;  // our duplicate, errors returned rather than fatal
  // A second duplicate for zcoll_send/zcoll_recv: a receive with MPI_ANY_TAG pending
  // across a collective must not match the collective's internal messages.
  MPI_Comm p2p = MPI_COMM_NULL;
  // Staging buffers of completed point-to-point requests, kept for the next ones.
  std::vector<zcoll::StagingBuffer> p2p_pool;
  int rank = 0, size = 1;
  zcoll_config cfg;
  zcoll_stats last{};
  // Compressed bytes of the current call (reused; grows, never shrinks).
  std::unique_ptr<uint8_t[]> arena;
  size_t arena_cap = 0;
};

namespace zcoll::coll {

inline constexpr int kTag = 7301;

// One block of a collective, as seen by this rank.
struct Segment {
  const void* src = nullptr;  // its values here, if this rank has them from the start
  void* dst = nullptr;        // where its values must end up here (nullptr: only forwarded)
  size_t count = 0;           // elements
  // compressed form, in the arena (CompressedLink)
  size_t off = 0, size = 0;
  bool have = false;
};

class Link {
 public:
  virtual ~Link() = default;
  // Sends segments ids[0..n) to peer as one message; completes in wait_sends().
  virtual void send(const int* ids, int n, int peer) = 0;
  // Receives segments ids[0..n) from peer (one message); returns when they are stored.
  virtual void recv(const int* ids, int n, int peer) = 0;
  virtual void wait_sends() = 0;
  // ZCOLL_SUCCESS, or the first error seen here or reported by a peer. After an error
  // the link keeps matching messages (sending error notices instead of data), so every
  // schedule runs to its end on every rank and nobody is left waiting.
  virtual int status() const = 0;
};

// ---- schedules (src/coll/<name>.cc)
void ring_allgather(Link& link, int rank, int p, const std::vector<int>& seg_of_rank);
void bruck_allgather(Link& link, int rank, int p, const std::vector<int>& seg_of_rank);
void binomial_bcast(Link& link, int rank, int p, int root, const std::vector<int>& segs);
// Segment of relative rank v is seg_of_vrank[v]; relative rank = (rank - root) mod p.
void binomial_scatter(Link& link, int rank, int p, int root, const std::vector<int>& seg_of_vrank);
void binomial_gather(Link& link, int rank, int p, int root, const std::vector<int>& seg_of_vrank);
// Segments [0, p): this rank's block for destination d; [p, 2p): the block from source s.
void pairwise_alltoall(Link& link, int rank, int p);

// ---- links (src/coll/links.cc)
struct LinkSetup {
  zcoll_comm_s* comm;
  std::vector<Segment>* segs;
  zcoll_dtype dtype;
  zcoll_codec_params params;  // ABS with the resolved bound
};
std::unique_ptr<Link> make_compressed_link(const LinkSetup& s, size_t arena_bytes);
std::unique_ptr<Link> make_cprp2p_link(const LinkSetup& s);
// Compresses the listed segments once (their src) into the arena of a compressed link.
int compress_owned(Link& link, const std::vector<int>& ids);
// Like compress_owned, but each listed segment is compressed when a send first includes
// it, so compression overlaps the sends already in flight (CPRP2P: nothing to do).
int compress_at_first_send(Link& link, const std::vector<int>& ids);
// Decompresses every received segment that has a dst (compressed link), or does nothing
// (CPRP2P: values are already in place).
int decompress_received(Link& link);
size_t wire_bytes(const Link& link);  // bytes this rank sent
size_t raw_bytes(const Link& link);   // uncompressed bytes of the segments it sent
// The bound recorded in the streams this rank received (0 if it received none).
double received_eb(const Link& link);
// Seconds spent compressing in sends (CPRP2P at every hop; a compressed link, the segments
// of compress_at_first_send) and decompressing in receives (CPRP2P).
double hop_compress_seconds(const Link& link);
double hop_decompress_seconds(const Link& link);

}  // namespace zcoll::coll
