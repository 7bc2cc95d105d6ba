// Node-aware bcast: the root's node scatters the buffer in slices, one per rail (plain); node
// rank j of the root's node broadcasts slice j, compressed, over its rail; a plain
// allgatherv inside each node puts the slices together. Every element is compressed
// once, so every rank is within eps of the root's values (the root's node: exact).
#include "codec/stream.h"
#include "coll/call.h"
#include "coll/engines.h"
#include "coll/hierarchical.h"

namespace zcoll::coll {

int hierarchical_bcast(zcoll_comm_s& c, int schedule, zcoll_dtype dt, double eb, void* buffer, size_t count, int root) {
  int rc = ZCOLL_SUCCESS;
  zcoll_comm_s* rail = rail_of(c, &rc);
  if (!rail) return rc;
  const Topology& t = c.topo;
  const MPI_Datatype type = mpi_type(dt);
  node_slices(count, t, c.workspace);
  const std::vector<int>&counts = c.workspace.node_ints[0], &displs = c.workspace.node_ints[1];
  const int j = t.node_rank, root_node = t.node_of[static_cast<size_t>(root)];
  void* slice = at(buffer, static_cast<size_t>(displs[j]), codec::element_size(dt));
  if (t.node == root_node) {
    const int root_nr = node_rank_of(t, root);
    rc = mpi_rc(MPI_Scatterv(buffer, counts.data(), displs.data(), type, j == root_nr ? MPI_IN_PLACE : slice,
                             counts[j], type, root_nr, t.node_comm));
  }
  // Rail ranks are node indices.
  rail->call_start = now();
  const size_t n = static_cast<size_t>(counts[j]);
  int rail_rc = ZCOLL_SUCCESS;
  if (!t.on_rail()) {
    off_rail(*rail, schedule != ZCOLL_ALGO_PLAIN_HIERARCHICAL, eb);
  } else if (schedule == ZCOLL_ALGO_PLAIN_HIERARCHICAL) {
    rail_rc = mpi_rc(MPI_Bcast(slice, counts[j], type, root_node, rail->comm));
    rail->record_plain();
  } else {
    rail_rc = bcast_engine(*rail, dt, eb, table_choice(*rail, ZCOLL_COLL_BCAST, n * codec::element_size(dt)), slice, n,
                           root_node);
  }
  return node_allgather_and_finish(c, schedule, *rail, rc ? rc : rail_rc, dt, buffer, counts, displs);
}

}  // namespace zcoll::coll
