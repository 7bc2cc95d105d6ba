// The compressed collectives after the agreement: on any zcoll communicator, with the
// bound (ABS) every rank of it already agreed on. The entry points run them on their
// communicator; the node-aware collectives (hierarchical.h) on a rail.
#pragma once
#include <cstddef>
#include <vector>

#include "coll/select.h"
#include "common/comm.h"

namespace zcoll::coll {

// The table's choice for a collective of `bytes` on c (select.cc): what the node-aware
// collectives run on a rail.
inline Choice table_choice(const zcoll_comm_s& c, int collective, size_t bytes) {
  return select_algorithm(c.cfg, collective, c.size, bytes, homomorphic_path(c.cfg, collective));
}

// Allreduce, reduce or reduce_scatter of counts (the p block sizes) under combine op `op`
// (codec::CombineOp); input may be out (MPI_IN_PLACE). out: this rank's block for
// reduce_scatter, the whole vector otherwise (the root's, for reduce).
int reduction_engine(zcoll_comm_s& c, int collective, zcoll_dtype dt, double eb, const Choice& ch, const void* input,
                     void* out, const std::vector<size_t>& counts, int op, int root);
// The per-input bound reduction_engine uses on p ranks for the call's bound eb: eb itself,
// or under ZCOLL_BOUND_RESULT eb over the result's worst-case error in per-input bounds.
double input_bound(const zcoll_config& cfg, int collective, int op, bool cprp2p, int p, double eb);
// Bcast of n elements from root.
int bcast_engine(zcoll_comm_s& c, zcoll_dtype dt, double eb, const Choice& ch, void* buffer, size_t n, int root);
// Allgatherv in elements; this rank's block is already in recvbuf at displs[rank]. The
// displacements are size_t: an allgather's p * count can pass INT_MAX where no count does.
int allgather_engine(zcoll_comm_s& c, zcoll_dtype dt, double eb, const Choice& ch, void* recvbuf, const int* counts,
                     const size_t* displs);

}  // namespace zcoll::coll
