// Node-aware allreduce: a plain reduce-scatter inside each node leaves node rank j with
// slice j of its node's partial result; the rail of node rank j runs the compressed
// allreduce on that slice; a plain allgatherv inside each node puts the slices together.
// Each node's partial is quantized once on the rail, so SUM is within nodes x eps of the
// exact sum (<= p x eps, the flat bound; plus MPI's floating-point rounding of the node
// partial), MIN/MAX within eps (homomorphic) or nodes x eps (DOC). Every rank of a rail
// decompresses the same streams and the node stages copy bits, so all ranks get
// bit-identical results.
#include <cstring>

#include "codec/stream.h"
#include "coll/call.h"
#include "coll/engines.h"
#include "coll/hierarchical.h"

namespace zcoll::coll {

int hierarchical_allreduce(zcoll_comm_s& c, int schedule, zcoll_dtype dt, double eb, const void* input, void* out,
                           size_t count, MPI_Op mpi_op, int op) {
  int rc = ZCOLL_SUCCESS;
  zcoll_comm_s* rail = rail_of(c, &rc);
  if (!rail) return rc;
  const Topology& t = c.topo;
  const MPI_Datatype type = mpi_type(dt);
  const size_t es = codec::element_size(dt);
  std::vector<int> counts, displs;
  node_slices(count, t.node_size, &counts, &displs);
  const int j = t.node_rank;
  const size_t n = static_cast<size_t>(counts[j]);
  void* slice = at(out, static_cast<size_t>(displs[j]), es);
  if (input == out) {
    rc = mpi_rc(MPI_Reduce_scatter(MPI_IN_PLACE, out, counts.data(), type, mpi_op, t.node_comm));
    if (n && displs[j]) std::memmove(slice, out, n * es);  // MPI leaves the result at the start
  } else {
    rc = mpi_rc(MPI_Reduce_scatter(input, slice, counts.data(), type, mpi_op, t.node_comm));
  }
  rail->call_start = now();
  int rail_rc;
  if (schedule == ZCOLL_ALGO_PLAIN_HIERARCHICAL) {
    rail_rc = mpi_rc(MPI_Allreduce(MPI_IN_PLACE, slice, counts[j], type, mpi_op, rail->comm));
    rail->record_plain();
  } else {
    rail_rc = reduction_engine(*rail, ZCOLL_COLL_ALLREDUCE, dt, eb, table_choice(*rail, ZCOLL_COLL_ALLREDUCE, n * es),
                               slice, slice, even_blocks(n, static_cast<size_t>(rail->size)), op, -1);
  }
  return node_allgather_and_finish(c, schedule, *rail, rc ? rc : rail_rc, dt, out, counts, displs);
}

}  // namespace zcoll::coll
