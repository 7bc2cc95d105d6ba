// A zcoll communicator: duplicates of the user's communicator (so zcoll's messages
// never match the application's), the settings every rank agreed on at creation, and
// the buffers reused across calls.
#pragma once
#include "zcoll.h"  // brings <mpi.h> without the MPI C++ bindings

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include "coll/workspace.h"
#include "common/topology.h"
#include "p2p/staging_pool.h"

namespace zcoll::coll {
struct ModelState;  // coll/cost_model.h
}

struct zcoll_comm_s {
  MPI_Comm comm = MPI_COMM_NULL;  // the collectives' duplicate, errors returned rather than fatal
  // A second duplicate for zcoll_send/zcoll_recv: a receive with MPI_ANY_TAG pending
  // across a collective must not match the collective's internal messages.
  MPI_Comm p2p = MPI_COMM_NULL;
  zcoll::p2p::StagingPool p2p_pool;
  int rank = 0, size = 1;
  zcoll::Topology topo;  // which ranks share a node (ZCOLL_NODE_KEY or shared memory)
  // The node-aware collectives' rail (coll/hierarchical.h): a zcoll communicator over
  // topo.rail_comm (which the topology owns), these settings with flat algorithms, its own
  // arena.
  // Made by the first such call, freed by zcoll_comm_free.
  std::unique_ptr<zcoll_comm_s> rail;
  zcoll_config cfg;  // identical on every rank (checked at creation), environment applied
  // The current collective's statistics as it fills them in (one collective at a time).
  zcoll_stats last{};
  std::unique_ptr<zcoll::coll::ModelState> model;  // AUTO's cost model (coll/cost_model.h)
  // AUTO's warm start (coll/tuning_file.h): rank 0's ZCOLL_TUNING_FILE at creation (written
  // at zcoll_comm_free), and whether the model began from its record.
  std::string tuning_file;
  bool tuning_loaded = false;
  double call_start = 0;  // MPI_Wtime() when the current collective began (for its stats)
  // Test hook (ZCOLL_DEBUG_FAIL=<rank>:<code>): this rank's compressed collectives fail
  // their first codec operation with this code, so tests can check that a failure on
  // one rank reaches every rank intact.
  int debug_fail = ZCOLL_SUCCESS;
  // Test hook (ZCOLL_DEBUG_FAIL=<rank>:arena): this rank's arena cannot grow, as when its
  // node is out of memory (reserve_arena throws std::bad_alloc).
  bool debug_no_arena = false;
  // Compressed bytes of the current call (reused; grows, never shrinks).
  std::unique_ptr<uint8_t[]> arena;
  size_t arena_cap = 0;
  // What every rank's arena is known to hold: shared_arena() grew it to this on every rank
  // in one call and agreed on it, so a call that needs no more has nothing to agree on. The
  // agreements that can carry a failed reservation (shared_arena's, the call's) set it to 0
  // on every rank when they report a failure: that rank has no arena left (reserve_arena).
  size_t arena_agreed = 0;
  // The transport's tables and request lists (coll/workspace.h), reused across calls, and
  // the pieces every rank's workspace is known to hold room for (agreed with the arena).
  zcoll::coll::Workspace workspace;
  size_t pieces_agreed = 0;

  zcoll_comm_s();
  ~zcoll_comm_s();
  // This rank's arena of at least `bytes`; throws std::bad_alloc. The caller must bring a
  // failure to every rank through an agreement before any data moves (the ranks that did
  // not fail would otherwise wait for this one): shared_arena(), or the call's agreement
  // (coll::agree).
  uint8_t* reserve_arena(size_t bytes) {
    if (arena_cap < bytes) {
      if (debug_no_arena) throw std::bad_alloc();
      arena.reset();
      arena_cap = 0;  // so that a failed new leaves no capacity behind
      arena.reset(new uint8_t[bytes]);
      arena_cap = bytes;
    }
    return arena.get();
  }
  // `bytes` of the arena on every rank, or nullptr and *rc (the worst outcome) on every
  // rank, before any data moves; with pieces > 0, also room in the workspace for a
  // schedule of that many pieces (the transport's). bytes and pieces must be the same on
  // every rank: the ranks agree (one MPI_Allreduce over comm) only when one of them passes
  // what was agreed before, in a communicator's first call of a size and when a larger one
  // comes.
  uint8_t* shared_arena(size_t bytes, int* rc, size_t pieces = 0);
  void record_plain() { last = plain_stats(); }
  static zcoll_stats plain_stats() {
    zcoll_stats s{};
    s.algorithm = ZCOLL_ALGO_MPI;
    return s;
  }
  // What zcoll_last_stats gives: a collective's `last` once it ends, or a send's own record.
  // Sends may come from several threads at once, and beside a collective
  // (MPI_THREAD_MULTIPLE): each record is published whole, under the lock.
  void publish(const zcoll_stats& s) {
    std::lock_guard<std::mutex> lock(stats_mutex_);
    published_ = s;
  }
  zcoll_stats published() {
    std::lock_guard<std::mutex> lock(stats_mutex_);
    return published_;
  }

 private:
  std::mutex stats_mutex_;
  zcoll_stats published_{};
};
