// What the node-aware collectives share (hierarchical.h): the rail communicator, the
// node slices, and the end of a call.
#include "coll/hierarchical.h"

#include <algorithm>
#include <new>

#include "coll/call.h"

namespace zcoll::coll {

bool runs_hierarchical(const zcoll_comm_s& c, int collective) {
  return configured_algorithm(c.cfg, collective) == ZCOLL_ALGO_HIERARCHICAL && c.topo.hierarchical();
}

bool runs_plain_hierarchical(const zcoll_comm_s& c, int collective) {
  return configured_algorithm(c.cfg, collective) == ZCOLL_ALGO_PLAIN_HIERARCHICAL &&
         c.topo.hierarchical();
}

zcoll_comm_s* rail_of(zcoll_comm_s& c, int* rc) {
  *rc = ZCOLL_SUCCESS;
  if (c.rail) return c.rail.get();
  // The rail runs on the topology's rail communicator itself, which nothing else uses (and
  // the topology frees). A duplicate of it cost a communicator, and an MPI_Comm_dup inside a
  // timed call whose time the model learns: 25 ms of the first node-aware call's 29 at 16 x 16
  // ranks under SMPI (SIMULATED; 1.4 ms a call after). One agreement gives every rank the
  // same outcome of the allocations.
  int local = ZCOLL_SUCCESS;
  std::unique_ptr<zcoll_comm_s> r;
  int size = 0;
  if (c.topo.rail_comm != MPI_COMM_NULL) MPI_Comm_size(c.topo.rail_comm, &size);
  try {
    r.reset(new zcoll_comm_s);
    if (size) r->workspace.reserve_ranks(static_cast<size_t>(size), false);  // the rail's engines' arrays
  } catch (const std::bad_alloc&) {
    local = ZCOLL_ERR_NO_MEMORY;
  }
  int worst = local;
  if (MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_INT, MPI_MAX, c.comm) != MPI_SUCCESS) worst = ZCOLL_ERR_MPI;
  if (worst) {
    *rc = worst;
    return nullptr;
  }
  r->comm = c.topo.rail_comm;
  if (r->comm != MPI_COMM_NULL) {
    MPI_Comm_set_errhandler(r->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(r->comm, &r->rank);
  }
  r->size = size;
  // The rail runs the flat schedules (its own topology is one node of one rank).
  r->cfg = c.cfg;
  if (node_aware(r->cfg.algorithm)) r->cfg.algorithm = ZCOLL_ALGO_AUTO;
  for (int& a : r->cfg.algorithms)
    if (node_aware(a)) a = ZCOLL_ALGO_AUTO;
  r->debug_fail = c.debug_fail;
  r->debug_no_arena = c.debug_no_arena;
  c.rail = std::move(r);
  return c.rail.get();
}

void off_rail(zcoll_comm_s& rail, bool compressed, double eb) {
  rail.last = zcoll_stats{};
  rail.last.compressed = compressed;
  rail.last.eb_abs = compressed ? eb : 0;
}

int finish_hierarchical(zcoll_comm_s& c, int schedule, const zcoll_comm_s& rail, int rc) {
  // The rail agreed on its own outcome; a failure on another rail or in a node stage
  // must reach every rank too.
  int worst = rc;
  if (MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_INT, MPI_MAX, c.comm) != MPI_SUCCESS) worst = ZCOLL_ERR_MPI;
  // Bytes: what crossed the network, compressed (the node stages are plain MPI inside
  // a node); times: the whole call, the node stages in t_comm.
  zcoll_stats& s = c.last;
  s = rail.last;
  s.algorithm = schedule;
  s.t_comm = now() - c.call_start - s.t_compress - s.t_decompress - s.t_reduce;
  return worst;
}

int node_allgather_and_finish(zcoll_comm_s& c, int schedule, const zcoll_comm_s& rail, int rc, zcoll_dtype dt,
                              void* buf, const std::vector<int>& counts, const std::vector<int>& displs) {
  const int grc = mpi_rc(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, counts.data(), displs.data(),
                                        mpi_type(dt), c.topo.node_comm));
  return finish_hierarchical(c, schedule, rail, rc ? rc : grc);
}

void node_slices(size_t count, const Topology& t, Workspace& w) {
  const std::vector<size_t>& sizes = even_blocks(count, static_cast<size_t>(t.rails), &w.node_sizes[0]);
  std::vector<int>&counts = w.node_ints[0], &displs = w.node_ints[1];
  counts.assign(static_cast<size_t>(t.node_size), 0);
  std::copy(sizes.begin(), sizes.end(), counts.begin());
  displs.assign(counts.size(), 0);
  for (size_t j = 1; j < counts.size(); ++j) displs[j] = displs[j - 1] + counts[j - 1];
}

void node_ranks(const Topology& t, std::vector<int>* nr, std::vector<size_t>* seen) {
  const size_t p = t.node_of.size();
  seen->assign(static_cast<size_t>(t.nodes), 0);
  nr->resize(p);
  for (size_t r = 0; r < p; ++r) (*nr)[r] = static_cast<int>((*seen)[static_cast<size_t>(t.node_of[r])]++);
}

int node_rank_of(const Topology& t, int rank) {
  int k = 0;  // node_comm orders a node's ranks by rank
  for (int r = 0; r < rank; ++r) k += t.node_of[r] == t.node_of[rank];
  return k;
}

}  // namespace zcoll::coll
