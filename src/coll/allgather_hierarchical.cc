// Node-aware allgather(v): the rail of node rank j runs the compressed allgather of its
// ranks' blocks (one per node), straight into their places in recvbuf; then each rank
// sends the blocks it collected to the other ranks of its node, plain. A node's ranks
// need not be contiguous (ZCOLL_NODE_KEY can interleave them), so those blocks are
// described by an hindexed datatype per rail (byte displacements: an allgather's
// p x count may pass INT_MAX), sent from and received into recvbuf without packing.
// Where nodes differ in size, a rank on no rail (node rank rails or above) first hands its
// block to node rank (its node rank mod rails), whose rail carries it in a later round (one
// compressed allgather per round, rails node ranks at a time).
// Every block is compressed once, by its owner or by the rank it was handed to: within eps.
#include "coll/call.h"
#include "coll/engines.h"
#include "coll/hierarchical.h"
#include "coll/transport.h"

namespace zcoll::coll {

int plain_rail_allgatherv(const zcoll_comm_s& rail, void* recvbuf, const int* counts, const size_t* displs,
                          MPI_Datatype type, size_t es, std::vector<int>* int_displs, size_t int_limit) {
  const int m = rail.size;
  bool fits = true;
  for (int i = 0; i < m; ++i) fits = fits && displs[i] <= int_limit;
  if (fits) {
    int_displs->assign(displs, displs + m);
    return mpi_rc(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recvbuf, counts, int_displs->data(), type,
                                 rail.comm));
  }
  int rc = MPI_SUCCESS;
  for (int i = 0; i < m && rc == MPI_SUCCESS; ++i)
    rc = MPI_Bcast(at(recvbuf, displs[i], es), counts[i], type, i, rail.comm);
  return mpi_rc(rc);
}

namespace {
// Nodes of different sizes: a rank on no rail hands its block to node rank (its node rank
// mod rails), which carries it over that rail.
int hand_to_rail(zcoll_comm_s& c, MPI_Datatype type, size_t es, void* recvbuf, const int* counts, const size_t* displs,
                 const std::vector<int>& nr) {
  const Topology& t = c.topo;
  std::vector<MPI_Request>& reqs = c.workspace.node_reqs;
  reqs.clear();
  int rc = MPI_SUCCESS;
  for (size_t r = 0; r < nr.size() && rc == MPI_SUCCESS; ++r) {
    if (t.node_of[r] != t.node || nr[r] < t.rails || counts[r] == 0) continue;
    void* block = at(recvbuf, displs[r], es);
    if (r == static_cast<size_t>(c.rank)) {
      reqs.push_back(MPI_REQUEST_NULL);
      rc = MPI_Isend(block, counts[r], type, nr[r] % t.rails, kTag, t.node_comm, &reqs.back());
    } else if (nr[r] % t.rails == t.node_rank) {
      reqs.push_back(MPI_REQUEST_NULL);
      rc = MPI_Irecv(block, counts[r], type, nr[r], kTag, t.node_comm, &reqs.back());
    }
  }
  if (!reqs.empty() && MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE) != MPI_SUCCESS)
    rc = MPI_ERR_OTHER;
  return mpi_rc(rc);
}

// Each rank on a rail sends the blocks its rail carried (those of the node ranks equal to its
// own mod rails, of every node) to the other ranks of its node, and every rank receives
// the other rails', in place in recvbuf. One hindexed datatype per rail (byte displacements:
// an allgather's p x count may pass INT_MAX elements).
int node_exchange(zcoll_comm_s& c, MPI_Datatype type, size_t es, void* recvbuf, const int* counts,
                  const size_t* displs, const std::vector<int>& nr) {
  const Topology& t = c.topo;
  const int k = t.rails, j = t.node_rank;
  Workspace& w = c.workspace;
  std::vector<MPI_Datatype>& types = w.node_types;
  std::vector<int>& lens = w.node_ints[0];
  std::vector<MPI_Aint>& bytes = w.node_bytes;
  std::vector<MPI_Request>& reqs = w.node_reqs;
  types.assign(static_cast<size_t>(k), MPI_DATATYPE_NULL);
  reqs.clear();
  int rc = ZCOLL_SUCCESS;
  for (int rail = 0; rail < k && !rc; ++rail) {
    lens.clear();
    bytes.clear();
    for (size_t r = 0; r < nr.size(); ++r)
      if (nr[r] % k == rail) {
        lens.push_back(counts[r]);
        bytes.push_back(static_cast<MPI_Aint>(displs[r] * es));
      }
    if (MPI_Type_create_hindexed(static_cast<int>(lens.size()), lens.data(), bytes.data(), type, &types[rail]) !=
            MPI_SUCCESS ||
        MPI_Type_commit(&types[rail]) != MPI_SUCCESS)
      rc = ZCOLL_ERR_MPI;
  }
  for (int jj = 0; jj < t.node_size && !rc; ++jj) {
    if (jj == j) continue;
    if (jj < k) {
      reqs.push_back(MPI_REQUEST_NULL);
      if (MPI_Irecv(recvbuf, 1, types[jj], jj, kTag, t.node_comm, &reqs.back()) != MPI_SUCCESS) rc = ZCOLL_ERR_MPI;
    }
    if (t.on_rail()) {
      reqs.push_back(MPI_REQUEST_NULL);
      if (MPI_Isend(recvbuf, 1, types[j], jj, kTag, t.node_comm, &reqs.back()) != MPI_SUCCESS) rc = ZCOLL_ERR_MPI;
    }
  }
  if (!reqs.empty() && MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE) != MPI_SUCCESS)
    rc = ZCOLL_ERR_MPI;
  for (MPI_Datatype& ty : types)
    if (ty != MPI_DATATYPE_NULL) MPI_Type_free(&ty);
  return rc;
}
}  // namespace

int hierarchical_allgather(zcoll_comm_s& c, int schedule, zcoll_dtype dt, double eb, void* recvbuf, const int* counts,
                           const size_t* displs) {
  int rc = ZCOLL_SUCCESS;
  zcoll_comm_s* rail = rail_of(c, &rc);
  if (!rail) return rc;
  const Topology& t = c.topo;
  const int m = t.nodes, k = t.rails, j = t.node_rank;
  const size_t p = t.node_of.size();
  Workspace& w = c.workspace;
  std::vector<int>& nr = w.node_ints[1];
  node_ranks(t, &nr, &w.node_sizes[1]);
  long long total = 0;
  for (size_t r = 0; r < p; ++r) total += counts[r];
  const MPI_Datatype type = mpi_type(dt);
  const size_t es = codec::element_size(dt);
  // total is the same everywhere: where it is 0 nothing moves, and recvbuf may be NULL.
  if (total > 0 && !t.regular) rc = hand_to_rail(c, type, es, recvbuf, counts, displs, nr);
  // The rail's blocks, one per node (rail rank i is node i): in round q, those of node rank
  // j + q x rails (0 elements where a node has no such rank).
  std::vector<int>& row_counts = w.node_ints[0];
  std::vector<size_t>& row_displs = w.node_sizes[0];
  rail->call_start = now();
  zcoll_stats sum{};
  // Every round runs whatever failed before it (a rank that stopped would leave its rail
  // waiting); the first failure is the call's.
  for (int row = j; t.on_rail() && row < t.max_node_size; row += k) {
    row_counts.assign(static_cast<size_t>(m), 0);
    row_displs.assign(static_cast<size_t>(m), 0);
    size_t row_total = 0;
    for (size_t r = 0; r < p; ++r)
      if (nr[r] == row) {
        row_counts[static_cast<size_t>(t.node_of[r])] = counts[r];
        row_displs[static_cast<size_t>(t.node_of[r])] = displs[r];
        row_total += static_cast<size_t>(counts[r]);
      }
    int row_rc;
    if (schedule == ZCOLL_ALGO_PLAIN_HIERARCHICAL) {
      row_rc = plain_rail_allgatherv(*rail, recvbuf, row_counts.data(), row_displs.data(), type, es, &w.node_ints[2]);
      rail->record_plain();
    } else {
      const Choice ch = table_choice(*rail, ZCOLL_COLL_ALLGATHER, row_total * es / static_cast<size_t>(m));
      row_rc = allgather_engine(*rail, dt, eb, ch, recvbuf, row_counts.data(), row_displs.data());
    }
    if (!rc) rc = row_rc;
    // Several rounds (nodes of different sizes): the bytes and codec times of all.
    sum.raw_bytes += rail->last.raw_bytes;
    sum.wire_bytes += rail->last.wire_bytes;
    sum.t_compress += rail->last.t_compress;
    sum.t_decompress += rail->last.t_decompress;
  }
  if (!t.on_rail()) {
    off_rail(*rail, schedule != ZCOLL_ALGO_PLAIN_HIERARCHICAL, eb);
  } else {
    rail->last.raw_bytes = sum.raw_bytes;
    rail->last.wire_bytes = sum.wire_bytes;
    rail->last.t_compress = sum.t_compress;
    rail->last.t_decompress = sum.t_decompress;
  }
  if (total > 0) {
    const int xrc = node_exchange(c, type, es, recvbuf, counts, displs, nr);
    if (!rc) rc = xrc;
  }
  return finish_hierarchical(c, schedule, *rail, rc);
}

}  // namespace zcoll::coll
