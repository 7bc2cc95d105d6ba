// Which ranks of a communicator share a node. Nodes come from
// MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), unless a rank's environment sets
// ZCOLL_NODE_KEY: ranks with the same key are one node. The key lets test set-ups
// (network namespaces on one host, each with its own throttled link) count as separate
// nodes; MPI would see one host.
#pragma once
#include "zcoll.h"

#include <vector>

namespace zcoll {

struct Topology {
  int nodes = 1;                  // nodes, numbered by their lowest rank
  int node = 0;                   // this rank's node
  int node_rank = 0, node_size = 1;
  bool regular = true;            // every node has node_size ranks, in the same rank order
  int max_node_size = 1;          // the largest node's ranks (node_size differs per node where not regular)
  std::vector<int> node_of;       // per rank of the communicator
  MPI_Comm node_comm = MPI_COMM_NULL;  // this node's ranks, ordered by rank
  // The node-aware collectives' rails: where there are several nodes and some node has
  // several ranks, the smallest node's rank count, else 0. Rail j is the ranks of node
  // rank j, one per node, ordered by node (rail_comm); where nodes differ in size, the
  // ranks of node rank rails and above are on none (rail_comm MPI_COMM_NULL).
  int rails = 0;
  MPI_Comm rail_comm = MPI_COMM_NULL;
  // This rank's share of its host's cores (host_cores.h; the host from
  // MPI_COMM_TYPE_SHARED, whatever ZCOLL_NODE_KEY says).
  int core_share = 1;

  bool multi_node() const { return nodes > 1; }
  // Several nodes, some of several ranks: what the node-aware collectives need.
  bool hierarchical() const { return rails > 0; }
  bool on_rail() const { return node_rank < rails; }
};

// Collective over comm. Returns a zcoll code (ZCOLL_ERR_MPI when a split fails).
// Also sets core_share. Allocates nothing, so that it cannot fail on one rank between two
// collectives: t->node_of must hold comm's size already, and scratch 4 ints per rank.
int build_topology(MPI_Comm comm, Topology* t, int* scratch);
void free_topology(Topology* t);

}  // namespace zcoll
