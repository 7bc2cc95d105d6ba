// Node-aware reduce-scatter(_block): a plain reduce-scatter inside each node leaves node
// rank j with its node's partial of the blocks that travel on rail j, those of every node;
// the rail then runs the compressed reduce-scatter of them, one rail block per node, so
// each rank on the rail ends with its node's sum of those blocks. The flat ring compresses
// on every step, inside a node too; here a rank compresses about 1/rails of what it would
// there, and only for the network.
// Rail j carries the blocks of the node ranks equal to j mod rails (hierarchical.h): where
// nodes differ in size, a rank on no rail gets its block from the rank on the rail of its
// node rank mod rails, plain, inside the node.
// Each node's partial is quantized once on its way over the rail, and the last step adds
// the rank's own node partial unquantized: SUM within (nodes - 1) x eps of the exact sum of
// the node partials (<= (p - 1) x eps, the flat bound; plus MPI's floating-point rounding
// of those partials), homomorphic MIN/MAX within eps, DOC within (nodes - 1) x eps.
// A rail's blocks lie apart in the input (block r of rank r, in rank order), so the input
// is first packed, rail by rail and node by node, into the communicator's arena, followed by
// room for the node partial and for a rail rank's blocks: sizes the same on every rank, so
// that the arena's agreement is needed only to grow.
#include <algorithm>
#include <climits>
#include <cstring>

#include "codec/stream.h"
#include "coll/call.h"
#include "coll/engines.h"
#include "coll/hierarchical.h"
#include "coll/transport.h"

namespace zcoll::coll {

namespace {
// The last stage where nodes differ in size: a rank on a rail keeps the first of its node's
// blocks that its rail carried (its own) and sends the others to their ranks; a rank on no
// rail receives its block. Runs whatever failed before (a rank left out would wait).
int hand_from_rail(zcoll_comm_s& c, MPI_Datatype type, size_t es, const uint8_t* carried, void* out,
                   const std::vector<size_t>& counts, const std::vector<int>& nr) {
  const Topology& t = c.topo;
  const int k = t.rails;
  std::vector<MPI_Request>& reqs = c.workspace.node_reqs;
  reqs.clear();
  int rc = MPI_SUCCESS;
  const size_t me = static_cast<size_t>(c.rank);
  if (t.on_rail()) {
    size_t off = counts[me];
    for (size_t r = me + 1; r < nr.size() && rc == MPI_SUCCESS; ++r) {
      if (t.node_of[r] != t.node || nr[r] % k != t.node_rank) continue;
      if (counts[r]) {
        reqs.push_back(MPI_REQUEST_NULL);
        rc = MPI_Isend(carried + off * es, static_cast<int>(counts[r]), type, nr[r], kTag, t.node_comm, &reqs.back());
      }
      off += counts[r];
    }
  } else if (counts[me]) {
    reqs.push_back(MPI_REQUEST_NULL);
    rc = MPI_Irecv(out, static_cast<int>(counts[me]), type, t.node_rank % k, kTag, t.node_comm, &reqs.back());
  }
  if (!reqs.empty() && MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE) != MPI_SUCCESS)
    rc = MPI_ERR_OTHER;
  return mpi_rc(rc);
}
}  // namespace

int hierarchical_reduce_scatter(zcoll_comm_s& c, int schedule, zcoll_dtype dt, double eb, const void* input, void* out,
                                const std::vector<size_t>& counts, MPI_Op mpi_op, int op) {
  const Topology& t = c.topo;
  const int p = c.size, m = t.nodes, k = t.rails, j = t.node_rank;
  const size_t es = codec::element_size(dt);
  Workspace& w = c.workspace;
  std::vector<int>& nr = w.node_ints[1];
  node_ranks(t, &nr, &w.node_sizes[1]);
  // order: the ranks by rail (node rank mod rails), then node, then node rank: the packed
  // input's block order. A counting sort on (rail, node), stable: rank order is node rank
  // order within a node (rails x nodes <= p buckets).
  std::vector<int>&order = w.node_ints[0], &bucket = w.node_ints[2];
  auto key = [&](size_t r) {
    return static_cast<size_t>(nr[r] % k) * static_cast<size_t>(m) + static_cast<size_t>(t.node_of[r]);
  };
  bucket.assign(static_cast<size_t>(k) * static_cast<size_t>(m) + 1, 0);
  for (size_t r = 0; r < static_cast<size_t>(p); ++r) ++bucket[key(r) + 1];
  for (size_t b = 1; b < bucket.size(); ++b) bucket[b] += bucket[b - 1];
  order.resize(static_cast<size_t>(p));
  for (size_t r = 0; r < static_cast<size_t>(p); ++r)
    order[static_cast<size_t>(bucket[key(r)]++)] = static_cast<int>(r);
  std::vector<size_t>& begin = w.node_sizes[0];
  begin.assign(static_cast<size_t>(p) + 1, 0);
  for (int r = 0; r < p; ++r)
    begin[static_cast<size_t>(r) + 1] = begin[static_cast<size_t>(r)] + counts[static_cast<size_t>(r)];
  // What each rail carries (slice_len, the node stage's share of node rank j < rails), and
  // the largest of a rail's blocks (one node's blocks on one rail).
  std::vector<size_t>& slice_len = w.node_sizes[1];  // node_ranks' scratch is spent
  slice_len.assign(static_cast<size_t>(k), 0);
  size_t most_carried = 0, carried = 0;
  for (size_t q = 0; q < order.size(); ++q) {
    const size_t r = static_cast<size_t>(order[q]);
    slice_len[static_cast<size_t>(nr[r] % k)] += counts[r];
    carried += counts[r];
    if (q + 1 == order.size() || key(static_cast<size_t>(order[q + 1])) != key(r)) {
      most_carried = std::max(most_carried, carried);
      carried = 0;
    }
  }
  if (t.regular) most_carried = 0;  // a rank's rail carries its own block alone, straight to out
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
  const size_t total = begin.back();
  // The packed input, the node partial (room for the largest), and a rail rank's blocks
  // (room for the most a rail carries for one node).
  const size_t most = *std::max_element(slice_len.begin(), slice_len.end());
  uint8_t* packed = c.shared_arena((total + most + most_carried) * es, &rc);
  if (rc) return rc;
  uint8_t* slice = packed + total * es;
  uint8_t* blocks = slice + most * es;
  size_t off = 0;
  for (int r : order) {
    const size_t u = static_cast<size_t>(r);
    if (counts[u]) std::memcpy(packed + off * es, at(input, begin[u], es), counts[u] * es);
    off += counts[u];
  }
  std::vector<int>& node_counts = w.node_ints[2];
  node_counts.assign(static_cast<size_t>(t.node_size), 0);
  for (int jj = 0; jj < k; ++jj)
    node_counts[static_cast<size_t>(jj)] = static_cast<int>(slice_len[static_cast<size_t>(jj)]);
  const MPI_Datatype type = mpi_type(dt);
  rc = mpi_rc(MPI_Reduce_scatter(packed, slice, node_counts.data(), type, mpi_op, t.node_comm));
  // The rail's blocks: one per node (rail rank i is node i), that node's blocks on this rail.
  // Where this rank's is its own block alone, the rail's result goes straight to out.
  std::vector<size_t>& rail_counts = rail->workspace.counts;
  rail_counts.assign(static_cast<size_t>(m), 0);
  for (int r = 0; r < p; ++r)
    if (nr[static_cast<size_t>(r)] % k == j % k)
      rail_counts[static_cast<size_t>(t.node_of[static_cast<size_t>(r)])] += counts[static_cast<size_t>(r)];
  const size_t mine = counts[static_cast<size_t>(c.rank)];
  const bool alone = j + k >= t.node_size;
  void* result = alone ? out : blocks;
  rail->call_start = now();
  int rail_rc = ZCOLL_SUCCESS;
  if (!t.on_rail()) {  // the rail runs a zcoll schedule, never the CPRP2P baseline
    off_rail(*rail, schedule != ZCOLL_ALGO_PLAIN_HIERARCHICAL,
             input_bound(c.cfg, ZCOLL_COLL_REDUCE_SCATTER, op, false, m, eb));
  } else if (schedule == ZCOLL_ALGO_PLAIN_HIERARCHICAL) {
    std::vector<int>& ic = w.node_ints[2];  // node_counts are spent
    ic.assign(rail_counts.begin(), rail_counts.end());
    rail_rc = mpi_rc(MPI_Reduce_scatter(slice, result, ic.data(), type, mpi_op, rail->comm));
    rail->record_plain();
  } else {
    rail_rc = reduction_engine(*rail, ZCOLL_COLL_REDUCE_SCATTER, dt, eb,
                               table_choice(*rail, ZCOLL_COLL_REDUCE_SCATTER, slice_len[static_cast<size_t>(j)] * es),
                               slice, result, rail_counts, op, -1);
  }
  if (!rc) rc = rail_rc;
  if (!t.regular) {
    if (t.on_rail() && !alone && mine) std::memcpy(out, blocks, mine * es);
    const int hrc = hand_from_rail(c, type, es, blocks, out, counts, nr);
    if (!rc) rc = hrc;
  }
  return finish_hierarchical(c, schedule, *rail, rc);
}

}  // namespace zcoll::coll
