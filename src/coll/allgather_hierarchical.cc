// Node-aware allgather(v): the rail of node rank j runs the compressed allgather of its
// ranks' blocks (one per node), straight into their places in recvbuf; then each rank
// sends the blocks it collected to the other ranks of its node, plain. A node's ranks
// need not be contiguous (ZCOLL_NODE_KEY can interleave them), so those blocks are
// described by an hindexed datatype per node rank (byte displacements: an allgather's
// p x count may pass INT_MAX), sent from and received into recvbuf without packing.
// Every block is compressed once by its owner: within eps.
#include "coll/call.h"
#include "coll/engines.h"
#include "coll/hierarchical.h"
#include "coll/transport.h"

namespace zcoll::coll {

int plain_rail_allgatherv(const zcoll_comm_s& rail, void* recvbuf, const std::vector<int>& counts,
                          const std::vector<size_t>& displs, MPI_Datatype type, size_t es, size_t int_limit) {
  const int m = static_cast<int>(counts.size());
  bool fits = true;
  for (size_t d : displs) fits = fits && d <= int_limit;
  if (fits) {
    const std::vector<int> ds(displs.begin(), displs.end());
    return mpi_rc(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recvbuf, counts.data(), ds.data(), type,
                                 rail.comm));
  }
  int rc = MPI_SUCCESS;
  for (int i = 0; i < m && rc == MPI_SUCCESS; ++i)
    rc = MPI_Bcast(at(recvbuf, displs[i], es), counts[i], type, i, rail.comm);
  return mpi_rc(rc);
}

int hierarchical_allgather(zcoll_comm_s& c, int schedule, zcoll_dtype dt, double eb, void* recvbuf, const int* counts,
                           const size_t* displs) {
  int rc = ZCOLL_SUCCESS;
  zcoll_comm_s* rail = rail_of(c, &rc);
  if (!rail) return rc;
  const Topology& t = c.topo;
  const int m = t.nodes, k = t.node_size, j = t.node_rank;
  // rail_counts[jj][i], rail_displs[jj][i]: the block of the rank at (node i, node rank jj).
  std::vector<std::vector<int>> rail_counts(k, std::vector<int>(m));
  std::vector<std::vector<size_t>> rail_displs(k, std::vector<size_t>(m));
  std::vector<int> seen(m, 0);  // node_comm orders a node's ranks by rank
  long long total = 0;
  for (size_t r = 0; r < t.node_of.size(); ++r) {
    const int i = t.node_of[r], jj = seen[i]++;
    rail_counts[jj][i] = counts[r];
    rail_displs[jj][i] = displs[r];
    total += counts[r];
  }
  rail->call_start = now();
  size_t rail_total = 0;
  for (int i = 0; i < m; ++i) rail_total += static_cast<size_t>(rail_counts[j][i]);
  const MPI_Datatype type = mpi_type(dt);
  const size_t es = codec::element_size(dt);
  if (schedule == ZCOLL_ALGO_PLAIN_HIERARCHICAL) {
    rc = plain_rail_allgatherv(*rail, recvbuf, rail_counts[j], rail_displs[j], type, es);
    rail->record_plain();
  } else {
    const Choice ch = table_choice(*rail, ZCOLL_COLL_ALLGATHER, rail_total * es / static_cast<size_t>(m));
    rc = allgather_engine(*rail, dt, eb, ch, recvbuf, rail_counts[j].data(), rail_displs[j].data());
  }
  if (total > 0) {  // total is the same everywhere: nothing to move, and recvbuf may be NULL
    // Byte displacements (MPI_Aint): a node's blocks may lie beyond INT_MAX elements.
    std::vector<MPI_Datatype> types(k, MPI_DATATYPE_NULL);
    std::vector<MPI_Aint> bytes(m);
    int trc = ZCOLL_SUCCESS;
    for (int jj = 0; jj < k; ++jj) {
      for (int i = 0; i < m; ++i) bytes[i] = static_cast<MPI_Aint>(rail_displs[jj][i] * es);
      if (MPI_Type_create_hindexed(m, rail_counts[jj].data(), bytes.data(), type, &types[jj]) != MPI_SUCCESS ||
          MPI_Type_commit(&types[jj]) != MPI_SUCCESS)
        trc = ZCOLL_ERR_MPI;
    }
    std::vector<MPI_Request> reqs;
    for (int jj = 0; jj < k && !trc; ++jj) {
      if (jj == j) continue;
      reqs.push_back(MPI_REQUEST_NULL);
      if (MPI_Irecv(recvbuf, 1, types[jj], jj, kTag, t.node_comm, &reqs.back()) != MPI_SUCCESS) trc = ZCOLL_ERR_MPI;
      reqs.push_back(MPI_REQUEST_NULL);
      if (MPI_Isend(recvbuf, 1, types[j], jj, kTag, t.node_comm, &reqs.back()) != MPI_SUCCESS) trc = ZCOLL_ERR_MPI;
    }
    if (!reqs.empty() && MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE) != MPI_SUCCESS)
      trc = ZCOLL_ERR_MPI;
    for (MPI_Datatype& ty : types)
      if (ty != MPI_DATATYPE_NULL) MPI_Type_free(&ty);
    if (!rc) rc = trc;
  }
  return finish_hierarchical(c, schedule, *rail, rc);
}

}  // namespace zcoll::coll
