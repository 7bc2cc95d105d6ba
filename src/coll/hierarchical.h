// Node-aware collectives (ZCOLL_ALGO_HIERARCHICAL), for a communicator of several nodes,
// some of several ranks (Topology::hierarchical()). Data moves inside a node with plain
// MPI on topo.node_comm, exact; only what crosses the network is compressed, by the flat
// engines (engines.h) run on the rails (the ranks of one node rank, one per node), each
// rank on a rail taking its share of the node's data. There are as many rails as the
// smallest node has ranks: where nodes differ in size, allreduce, reduce and bcast cut the
// vector into one slice per rail (a larger node's other ranks take part in the node stages
// only), allgather carries those ranks' blocks on the rails in further rounds, and
// reduce_scatter carries a rank's block on the rail of its node rank mod rails, whose rank
// in its node hands it on. One file each:
// allreduce_hierarchical.cc (and reduce), bcast_hierarchical.cc,
// allgather_hierarchical.cc, reduce_scatter_hierarchical.cc.
#pragma once
#include <climits>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/comm.h"

namespace zcoll::coll {

// Whether this call runs the node-aware algorithm: it is configured for the collective
// and the topology is hierarchical(). Otherwise the flat schedule runs (select_algorithm treats
// HIERARCHICAL as AUTO). The same on every rank.
bool runs_hierarchical(const zcoll_comm_s& c, int collective);
// The same for the uncompressed baseline PLAIN_HIERARCHICAL (otherwise plain MPI runs).
bool runs_plain_hierarchical(const zcoll_comm_s& c, int collective);
inline bool node_aware(int schedule) {
  return schedule == ZCOLL_ALGO_HIERARCHICAL || schedule == ZCOLL_ALGO_PLAIN_HIERARCHICAL;
}

// The engines, after the agreement on c.comm (eb: the agreed bound; schedule: one of the
// two node-aware ones; PLAIN_HIERARCHICAL runs plain MPI on the rail, and eb is unused). Each ends with one MPI_Allreduce of the error
// code over c.comm, so every rank returns the same outcome, and sets c.last from the rail
// stage (algorithm: schedule).
// root < 0: allreduce; else reduce to root (out significant there only; the node slice
// then in c's arena).
int hierarchical_allreduce(zcoll_comm_s& c, int schedule, zcoll_dtype dt, double eb, const void* input, void* out,
                           size_t count, MPI_Op mpi_op, int op, int root);
int hierarchical_bcast(zcoll_comm_s& c, int schedule, zcoll_dtype dt, double eb, void* buffer, size_t count, int root);
int hierarchical_allgather(zcoll_comm_s& c, int schedule, zcoll_dtype dt, double eb, void* recvbuf, const int* counts,
                           const size_t* displs);
// counts: the p blocks (block r ends on rank r); input may be out (MPI_IN_PLACE: the whole
// vector in recvbuf). Holds the packed input and this rank's node partial in c's arena.
int hierarchical_reduce_scatter(zcoll_comm_s& c, int schedule, zcoll_dtype dt, double eb, const void* input, void* out,
                                const std::vector<size_t>& counts, MPI_Op mpi_op, int op);
// PLAIN_HIERARCHICAL's rail stage of allgather(v): block i (counts[i] elements of es bytes
// at displs[i]) from rail rank i to all. MPI_Allgatherv where every displacement is at most
// int_limit (its displacements are ints), else one MPI_Bcast per block. int_limit is
// INT_MAX but in tests of the second way.
// int_displs: room for the rail's size of ints.
int plain_rail_allgatherv(const zcoll_comm_s& rail, void* recvbuf, const int* counts, const size_t* displs,
                          MPI_Datatype type, size_t es, std::vector<int>* int_displs, size_t int_limit = INT_MAX);

// What the three share (hierarchical.cc).
// The zcoll communicator of this rank's rail: made by the first node-aware call
// (collective over c.comm; every rank makes that call), kept until zcoll_comm_free.
// nullptr and *rc set when making it failed on any rank. Its per-rank arrays (Workspace) are
// reserved there. A rank on no rail (Topology::on_rail()) gets one too, whose comm is
// MPI_COMM_NULL: only its statistics are used (off_rail()).
zcoll_comm_s* rail_of(zcoll_comm_s& c, int* rc);
// The statistics of a rank on no rail: the call compressed (or not) with bound eb, but
// this rank sent nothing over the network.
void off_rail(zcoll_comm_s& rail, bool compressed, double eb);
// The rail stage's statistics as the call's (algorithm: schedule), and the call's outcome
// on every rank of c.comm: the worst of rc over all ranks.
int finish_hierarchical(zcoll_comm_s& c, int schedule, const zcoll_comm_s& rail, int rc);
// The last stage of allreduce and bcast: the node's slices to every rank of the node
// (plain MPI_Allgatherv in place on node_comm), then finish_hierarchical.
int node_allgather_and_finish(zcoll_comm_s& c, int schedule, const zcoll_comm_s& rail, int rc, zcoll_dtype dt,
                              void* buf, const std::vector<int>& counts, const std::vector<int>& displs);
// count elements in t.rails slices (even_blocks), one per node rank on a rail (none for the
// node's other ranks), as MPI's int counts and displacements over the node's ranks:
// w.node_ints[0] and [1] (w.node_sizes[0] used on the way).
void node_slices(size_t count, const Topology& t, Workspace& w);
// Every rank's rank inside its node: (*nr)[r] (node_comm orders a node's ranks by rank);
// *seen counts each node's ranks on the way (nodes entries).
void node_ranks(const Topology& t, std::vector<int>* nr, std::vector<size_t>* seen);
// A rank's rank inside its node.
int node_rank_of(const Topology& t, int rank);

}  // namespace zcoll::coll
