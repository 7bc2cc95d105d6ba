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
// Each rank sends the blocks its rail collected to the other ranks of its node, and receives
// theirs, in place in recvbuf: node rank jj's blocks are rail_counts and rail_displs' row jj.
int node_exchange(zcoll_comm_s& c, MPI_Datatype type, size_t es, void* recvbuf, const std::vector<int>& rail_counts,
                  const std::vector<size_t>& rail_displs) {
  const Topology& t = c.topo;
  const int m = t.nodes, k = t.node_size, j = t.node_rank;
  Workspace& w = c.workspace;
  // Byte displacements (MPI_Aint): a node's blocks may lie beyond INT_MAX elements.
  std::vector<MPI_Datatype>& types = w.node_types;
  std::vector<MPI_Aint>& bytes = w.node_bytes;
  std::vector<MPI_Request>& reqs = w.node_reqs;
  types.assign(static_cast<size_t>(k), MPI_DATATYPE_NULL);
  bytes.resize(static_cast<size_t>(m));
  reqs.clear();
  int rc = ZCOLL_SUCCESS;
  for (int jj = 0; jj < k; ++jj) {
    const size_t row = static_cast<size_t>(jj) * m;
    for (int i = 0; i < m; ++i) bytes[i] = static_cast<MPI_Aint>(rail_displs[row + i] * es);
    if (MPI_Type_create_hindexed(m, rail_counts.data() + row, bytes.data(), type, &types[jj]) != MPI_SUCCESS ||
        MPI_Type_commit(&types[jj]) != MPI_SUCCESS)
      rc = ZCOLL_ERR_MPI;
  }
  for (int jj = 0; jj < k && !rc; ++jj) {
    if (jj == j) continue;
    reqs.push_back(MPI_REQUEST_NULL);
    if (MPI_Irecv(recvbuf, 1, types[jj], jj, kTag, t.node_comm, &reqs.back()) != MPI_SUCCESS) rc = ZCOLL_ERR_MPI;
    reqs.push_back(MPI_REQUEST_NULL);
    if (MPI_Isend(recvbuf, 1, types[j], jj, kTag, t.node_comm, &reqs.back()) != MPI_SUCCESS) rc = ZCOLL_ERR_MPI;
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
  const int m = t.nodes, j = t.node_rank;
  const size_t p = t.node_of.size();  // m x k
  Workspace& w = c.workspace;
  // rail_counts[jj * m + i], rail_displs[jj * m + i]: the block of the rank at (node i, node
  // rank jj); rail_counts + jj * m: node rank jj's rail's blocks.
  std::vector<int>& rail_counts = w.node_ints[0];
  std::vector<size_t>& rail_displs = w.node_sizes[0];
  std::vector<int>& seen = w.node_ints[1];  // node_comm orders a node's ranks by rank
  rail_counts.assign(p, 0);
  rail_displs.assign(p, 0);
  seen.assign(static_cast<size_t>(m), 0);
  long long total = 0;
  for (size_t r = 0; r < p; ++r) {
    const int i = t.node_of[r], jj = seen[i]++;
    rail_counts[static_cast<size_t>(jj) * m + i] = counts[r];
    rail_displs[static_cast<size_t>(jj) * m + i] = displs[r];
    total += counts[r];
  }
  const int* my_counts = rail_counts.data() + static_cast<size_t>(j) * m;
  const size_t* my_displs = rail_displs.data() + static_cast<size_t>(j) * m;
  rail->call_start = now();
  size_t rail_total = 0;
  for (int i = 0; i < m; ++i) rail_total += static_cast<size_t>(my_counts[i]);
  const MPI_Datatype type = mpi_type(dt);
  const size_t es = codec::element_size(dt);
  if (schedule == ZCOLL_ALGO_PLAIN_HIERARCHICAL) {
    rc = plain_rail_allgatherv(*rail, recvbuf, my_counts, my_displs, type, es, &w.node_ints[2]);
    rail->record_plain();
  } else {
    const Choice ch = table_choice(*rail, ZCOLL_COLL_ALLGATHER, rail_total * es / static_cast<size_t>(m));
    rc = allgather_engine(*rail, dt, eb, ch, recvbuf, my_counts, my_displs);
  }
  // total is the same everywhere: nothing to move, and recvbuf may be NULL
  if (total > 0) {
    const int trc = node_exchange(c, type, es, recvbuf, rail_counts, rail_displs);
    if (!rc) rc = trc;
  }
  return finish_hierarchical(c, schedule, *rail, rc);
}

}  // namespace zcoll::coll
