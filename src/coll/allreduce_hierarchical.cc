// Node-aware allreduce and reduce: a plain reduce-scatter inside each node leaves node rank j
// with slice j of its node's partial result (one slice per rail: a larger node's ranks past
// the rails get none); the rail of node rank j runs the compressed allreduce on that slice
// (reduce: reduces it to the root's node); a plain allgatherv inside each node puts the
// slices together (reduce: a gatherv at the root, inside its node).
// Each node's partial is quantized once on the rail, so SUM is within nodes x eps of the
// exact sum (<= p x eps, the flat bound; plus MPI's floating-point rounding of the node
// partial), MIN/MAX within eps (homomorphic) or nodes x eps (DOC). Every rank of a rail
// decompresses the same streams and the node stages copy bits, so all ranks of an
// allreduce get bit-identical results.
#include <algorithm>
#include <cstring>

#include "codec/stream.h"
#include "coll/call.h"
#include "coll/engines.h"
#include "coll/hierarchical.h"

namespace zcoll::coll {

namespace {
// The node stage: the node's values reduced into this rank's slice (node_slices' counts and
// displacements), which *slice then points to; *result is where the rail stage's result goes;
// *rc, MPI's outcome. false where the arena could not be had (*rc says why): the call ends
// there, as on every rank (the arena is agreed).
bool node_reduce_scatter(zcoll_comm_s& c, const void* input, void* out, MPI_Datatype type, size_t es, MPI_Op mpi_op,
                         int root, bool plain, void** slice, void** result, int* rc) {
  const Topology& t = c.topo;
  const std::vector<int>&counts = c.workspace.node_ints[0], &displs = c.workspace.node_ints[1];
  const int j = t.node_rank;
  const size_t n = static_cast<size_t>(counts[j]);
  if (root < 0) {  // allreduce: the slice's place in out
    *slice = *result = at(out, static_cast<size_t>(displs[j]), es);
    if (input != out) {
      *rc = mpi_rc(MPI_Reduce_scatter(input, *slice, counts.data(), type, mpi_op, t.node_comm));
      return true;
    }
    *rc = mpi_rc(MPI_Reduce_scatter(MPI_IN_PLACE, out, counts.data(), type, mpi_op, t.node_comm));
    if (n && displs[j]) std::memmove(*slice, out, n * es);  // MPI leaves the result at the start
    return true;
  }
  // Reduce: out is the root's alone, so the slice is in the arena. Plain MPI's rail stage
  // writes a second buffer: MPI_Reduce with MPI_IN_PLACE at a root other than 0 crashes
  // MPICH 4.0.2 (pmodels/mpich#6540, Debian 12's MPICH).
  // Room for the largest slice: the same size on every rank.
  const size_t most = static_cast<size_t>(*std::max_element(counts.begin(), counts.end()));
  uint8_t* w = c.shared_arena((plain ? 2 : 1) * most * es, rc);
  if (*rc) return false;
  *slice = w;
  *result = plain ? w + most * es : w;
  *rc = mpi_rc(MPI_Reduce_scatter(input, *slice, counts.data(), type, mpi_op, t.node_comm));
  return true;
}
}  // namespace

int hierarchical_allreduce(zcoll_comm_s& c, int schedule, zcoll_dtype dt, double eb, const void* input, void* out,
                           size_t count, MPI_Op mpi_op, int op, int root) {
  int rc = ZCOLL_SUCCESS;
  zcoll_comm_s* rail = rail_of(c, &rc);
  if (!rail) return rc;
  const Topology& t = c.topo;
  const MPI_Datatype type = mpi_type(dt);
  const size_t es = codec::element_size(dt);
  node_slices(count, t, c.workspace);
  const std::vector<int>&counts = c.workspace.node_ints[0], &displs = c.workspace.node_ints[1];
  const int j = t.node_rank;
  const size_t n = static_cast<size_t>(counts[j]);
  const bool plain = schedule == ZCOLL_ALGO_PLAIN_HIERARCHICAL;
  void* slice = nullptr;
  void* result = nullptr;  // the rail stage's
  if (!node_reduce_scatter(c, input, out, type, es, mpi_op, root, plain, &slice, &result, &rc)) return rc;
  rail->call_start = now();
  const int collective = root < 0 ? ZCOLL_COLL_ALLREDUCE : ZCOLL_COLL_REDUCE;
  const int root_node = root < 0 ? -1 : t.node_of[static_cast<size_t>(root)];
  int rail_rc = ZCOLL_SUCCESS;
  if (!t.on_rail()) {  // the rail runs a zcoll schedule, never the CPRP2P baseline
    off_rail(*rail, !plain, input_bound(c.cfg, collective, op, false, t.nodes, eb));
  } else if (plain) {
    rail_rc = root < 0 ? mpi_rc(MPI_Allreduce(MPI_IN_PLACE, slice, counts[j], type, mpi_op, rail->comm))
                       : mpi_rc(MPI_Reduce(slice, result, counts[j], type, mpi_op, root_node, rail->comm));
    rail->record_plain();
  } else {
    rail_rc = reduction_engine(*rail, collective, dt, eb, table_choice(*rail, collective, n * es), slice, slice,
                               even_blocks(n, static_cast<size_t>(rail->size), &rail->workspace.counts), op, root_node);
  }
  if (!rc) rc = rail_rc;
  if (root < 0) return node_allgather_and_finish(c, schedule, *rail, rc, dt, out, counts, displs);
  int grc = ZCOLL_SUCCESS;
  if (t.node == root_node)
    grc = mpi_rc(MPI_Gatherv(result, counts[j], type, out, counts.data(), displs.data(), type, node_rank_of(t, root),
                             t.node_comm));
  return finish_hierarchical(c, schedule, *rail, rc ? rc : grc);
}

}  // namespace zcoll::coll
