// Node-aware reduce-scatter(_block): a plain reduce-scatter inside each node leaves node
// rank j with its node's partial of the blocks that end on node rank j of every node;
// the rail of node rank j then runs the compressed reduce-scatter of those blocks, one per
// node, so each rank ends with its own block. The flat ring compresses on every step,
// inside a node too; here a rank compresses about 1/node_size of what it would there, and
// only for the network.
// Each node's partial is quantized once on its way over the rail, and the last step adds
// the rank's own node partial unquantized: SUM within (nodes - 1) x eps of the exact sum of
// the node partials (<= (p - 1) x eps, the flat bound; plus MPI's floating-point rounding
// of those partials), homomorphic MIN/MAX within eps, DOC within (nodes - 1) x eps.
// The blocks of one node rank lie apart in the input (block r of rank r, in rank order),
// so the input is first packed, node rank by node rank, into the communicator's arena,
// followed by room for the node partial: the whole vector plus the largest node rank's
// slice (a size the same on every rank, so the arena's agreement is needed only to grow).
#include <algorithm>
#include <climits>
#include <cstring>

#include "codec/stream.h"
#include "coll/call.h"
#include "coll/engines.h"
#include "coll/hierarchical.h"

namespace zcoll::coll {

int hierarchical_reduce_scatter(zcoll_comm_s& c, int schedule, zcoll_dtype dt, double eb, const void* input, void* out,
                                const std::vector<size_t>& counts, MPI_Op mpi_op, int op) {
  const Topology& t = c.topo;
  const int p = c.size, m = t.nodes, k = t.node_size, j = t.node_rank;
  const size_t es = codec::element_size(dt);
  Workspace& w = c.workspace;
  // rank_at[i * k + jj]: the rank at node i, node rank jj (node_comm orders by rank).
  std::vector<int>&rank_at = w.node_ints[0], &seen = w.node_ints[1];
  std::vector<size_t>& begin = w.node_sizes[0];
  rank_at.assign(static_cast<size_t>(p), 0);
  seen.assign(static_cast<size_t>(m), 0);
  begin.assign(static_cast<size_t>(p) + 1, 0);
  for (int r = 0; r < p; ++r) {
    const int i = t.node_of[static_cast<size_t>(r)];
    rank_at[static_cast<size_t>(i) * k + seen[static_cast<size_t>(i)]++] = r;
    begin[static_cast<size_t>(r) + 1] = begin[static_cast<size_t>(r)] + counts[static_cast<size_t>(r)];
  }
  // What node rank jj receives from the node stage: its blocks of every node.
  auto count_at = [&](int i, int jj) { return counts[static_cast<size_t>(rank_at[static_cast<size_t>(i) * k + jj])]; };
  std::vector<size_t>& slice_len = w.node_sizes[1];
  slice_len.assign(static_cast<size_t>(k), 0);
  for (int jj = 0; jj < k; ++jj)
    for (int i = 0; i < m; ++i) slice_len[static_cast<size_t>(jj)] += count_at(i, jj);
  // MPI_Reduce_scatter's counts are ints; the same on every rank (the counts are agreed).
  bool fits = true;
  for (size_t s : slice_len) fits = fits && s <= static_cast<size_t>(INT_MAX);
  if (!fits) {
    if (schedule == ZCOLL_ALGO_PLAIN_HIERARCHICAL) {
      std::vector<int>& ic = w.node_ints[2];
      ic.assign(counts.begin(), counts.end());
      const int rc = mpi_rc(MPI_Reduce_scatter(input == out ? MPI_IN_PLACE : input, out, ic.data(), mpi_type(dt),
                                               mpi_op, c.comm));
      c.record_plain();
      return rc;
    }
    return reduction_engine(c, ZCOLL_COLL_REDUCE_SCATTER, dt, eb,
                            table_choice(c, ZCOLL_COLL_REDUCE_SCATTER, begin.back() * es), input, out, counts, op, -1);
  }
  int rc = ZCOLL_SUCCESS;
  zcoll_comm_s* rail = rail_of(c, &rc);
  if (!rail) return rc;
  const size_t total = begin.back(), mine = slice_len[static_cast<size_t>(j)];
  // The packed input, then the node partial (room for the largest, the same on every rank).
  const size_t most = *std::max_element(slice_len.begin(), slice_len.end());
  uint8_t* packed = c.shared_arena((total + most) * es, &rc);
  if (rc) return rc;
  uint8_t* slice = packed + total * es;
  size_t off = 0;
  for (int jj = 0; jj < k; ++jj)
    for (int i = 0; i < m; ++i) {
      const size_t r = static_cast<size_t>(rank_at[static_cast<size_t>(i) * k + jj]);
      if (counts[r]) std::memcpy(packed + off * es, at(input, begin[r], es), counts[r] * es);
      off += counts[r];
    }
  std::vector<int>& node_counts = w.node_ints[2];
  node_counts.assign(slice_len.begin(), slice_len.end());
  const MPI_Datatype type = mpi_type(dt);
  rc = mpi_rc(MPI_Reduce_scatter(packed, slice, node_counts.data(), type, mpi_op, t.node_comm));
  // The rail's blocks: one per node, rail rank i being node i.
  std::vector<size_t>& rail_counts = rail->workspace.counts;
  rail_counts.resize(static_cast<size_t>(m));
  for (int i = 0; i < m; ++i) rail_counts[static_cast<size_t>(i)] = count_at(i, j);
  rail->call_start = now();
  int rail_rc;
  if (schedule == ZCOLL_ALGO_PLAIN_HIERARCHICAL) {
    std::vector<int>& ic = w.node_ints[2];  // node_counts are spent
    ic.assign(rail_counts.begin(), rail_counts.end());
    rail_rc = mpi_rc(MPI_Reduce_scatter(slice, out, ic.data(), type, mpi_op, rail->comm));
    rail->record_plain();
  } else {
    rail_rc = reduction_engine(*rail, ZCOLL_COLL_REDUCE_SCATTER, dt, eb,
                               table_choice(*rail, ZCOLL_COLL_REDUCE_SCATTER, mine * es), slice, out, rail_counts,
                               op, -1);
  }
  return finish_hierarchical(c, schedule, *rail, rc ? rc : rail_rc);
}

}  // namespace zcoll::coll
