// Node layout of a communicator (topology.h).
#include "common/topology.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "common/host_cores.h"
#include "common/mpi_util.h"

namespace zcoll {
namespace {

// Colours: a hashed key in [2^30, 2^31), or the lowest rank of a shared-memory node
// (below 2^30), so the two never collide.
int key_colour(const char* key) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (const char* s = key; *s; ++s) {
    h ^= static_cast<unsigned char>(*s);
    h *= 16777619u;
  }
  return static_cast<int>((h & 0x3fffffffu) | 0x40000000u);
}

}  // namespace

int build_topology(MPI_Comm comm, Topology* t, int* scratch) {
  std::vector<int> node_of = std::move(t->node_of);  // reserved by the caller
  *t = Topology{};
  t->node_of = std::move(node_of);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  MPI_Comm shared = MPI_COMM_NULL;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared) != MPI_SUCCESS) return ZCOLL_ERR_MPI;
  int lowest = rank;
  int rc = MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, shared) == MPI_SUCCESS ? ZCOLL_SUCCESS
                                                                                            : ZCOLL_ERR_MPI;
  if (!rc) rc = host_core_share(shared, &t->core_share);
  MPI_Comm_free(&shared);
  if (rc) return rc;
  const char* key = std::getenv("ZCOLL_NODE_KEY");
  const int colour = key && *key ? key_colour(key) : lowest;
  if (MPI_Comm_split(comm, colour, rank, &t->node_comm) != MPI_SUCCESS) return ZCOLL_ERR_MPI;
  MPI_Comm_rank(t->node_comm, &t->node_rank);
  MPI_Comm_size(t->node_comm, &t->node_size);
  // Every rank learns every rank's node leader (the node's lowest rank) and node size.
  int leader = rank;
  if (MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, t->node_comm) != MPI_SUCCESS) return ZCOLL_ERR_MPI;
  int mine[3] = {leader, t->node_rank, t->node_size};
  int* all = scratch;  // 3 per rank
  if (MPI_Allgather(mine, 3, MPI_INT, all, 3, MPI_INT, comm) != MPI_SUCCESS) return ZCOLL_ERR_MPI;
  int* leaders = scratch + 3 * static_cast<size_t>(size);
  for (int r = 0; r < size; ++r) leaders[r] = all[3 * r];
  std::sort(leaders, leaders + size);
  int* const leaders_end = std::unique(leaders, leaders + size);
  t->nodes = static_cast<int>(leaders_end - leaders);
  int min_node_size = size;
  for (int r = 0; r < size; ++r) {
    t->node_of[r] = static_cast<int>(std::lower_bound(leaders, leaders_end, all[3 * r]) - leaders);
    // Regular: every node has as many ranks as this one (then node_size agrees too).
    if (all[3 * r + 2] != t->node_size) t->regular = false;
    t->max_node_size = std::max(t->max_node_size, all[3 * r + 2]);
    min_node_size = std::min(min_node_size, all[3 * r + 2]);
  }
  t->node = t->node_of[rank];
  if (t->nodes > 1 && t->max_node_size > 1) {
    t->rails = min_node_size;
    if (MPI_Comm_split(comm, t->on_rail() ? t->node_rank : MPI_UNDEFINED, t->node, &t->rail_comm) != MPI_SUCCESS)
      return ZCOLL_ERR_MPI;
  }
  return ZCOLL_SUCCESS;
}

void free_topology(Topology* t) {
  if (t->rail_comm != MPI_COMM_NULL) MPI_Comm_free(&t->rail_comm);
  if (t->node_comm != MPI_COMM_NULL) MPI_Comm_free(&t->node_comm);
}

}  // namespace zcoll
