// The drop-in layer's state, shared by the MPI_* wrappers (collectives.cc, fortran.cc) and
// the bookkeeping (layer.cc: MPI_Init/Finalize, communicators, hints, the report).
//
// zcoll itself calls MPI_* (its agreement, its sends and receives, MPI_Comm_dup in
// zcoll_comm_create). While this thread is inside a zcoll call, every wrapper goes
// straight to PMPI_*, so zcoll's own traffic is neither compressed again nor counted.
#pragma once
#include <atomic>
#include <cstddef>

#include "zcoll.h"

namespace zcoll_pmpi {

// The MPI functions the layer may compress, one report row each.
enum Fn {
  kAllreduce, kReduce, kReduceScatter, kReduceScatterBlock, kAllgather, kAllgatherv,
  kBcast, kScatter, kGather, kAlltoall, kNumFns
};

// Read on every intercepted call. any_opted_in changes when a communicator opts in or out,
// which another thread may do meanwhile (MPI_THREAD_MULTIPLE); the others are written only
// in MPI_Init and MPI_Finalize, when no other MPI call may run.
struct HotState {
  std::atomic<bool> any_opted_in{false};  // some communicator compresses, or the report is on
  unsigned ops = 0;           // bit per zcoll_collective
  size_t min_bytes = 0;
  bool report = false;        // count and time every call
};
extern HotState g_hot;
extern thread_local bool t_inside_zcoll;

// The zcoll collective behind each Fn.
int collective_of(Fn fn);

// Whether this call should look further than PMPI at all: cheap, inline.
inline bool layer_wants(Fn fn) {
  return g_hot.any_opted_in.load(std::memory_order_relaxed) && !t_inside_zcoll && (g_hot.ops >> collective_of(fn) & 1u);
}

// The zcoll communicator of an opted-in user communicator, or NULL.
zcoll_comm find_opted(MPI_Comm comm);

// Set once an MPI_Comm_idup of an opted-in communicator was started: its result opts in
// at the first collective that reaches zcoll's routing on it (adopt_pending).
extern std::atomic<bool> g_idup_pending;
// If comm is the result of such an MPI_Comm_idup (it carries the layer's attribute, copied
// by MPI from its parent), opts it in now (collective over comm: every rank is in the same
// call) and returns its zcoll communicator; NULL otherwise.
zcoll_comm adopt_pending(MPI_Comm comm);

// MPI_REAL, MPI_REAL4, MPI_DOUBLE_PRECISION, MPI_REAL8 as the C type of the same size, so
// that zcoll compresses them; every other type unchanged.
MPI_Datatype float_alias(MPI_Datatype t);

// Counts one call in the report (only when g_hot.report). st: zcoll's statistics of the
// call, when zcoll ran it (compressed, or plain by zcoll's decision).
void record_call(Fn fn, size_t bytes, double seconds, const zcoll_stats* st);

// Runs `call` (a zcoll collective) with the re-entrancy flag set, records it, and turns a
// zcoll error into an MPI error class raised on comm's error handler, as MPI would.
template <class Call>
int run_zcoll(Fn fn, MPI_Comm comm, zcoll_comm zc, size_t bytes, Call&& call);

int mpi_error_of(int zcoll_rc);
double now_if_reporting();

template <class Call>
int run_zcoll(Fn fn, MPI_Comm comm, zcoll_comm zc, size_t bytes, Call&& call) {
  const double t0 = now_if_reporting();
  t_inside_zcoll = true;
  const int rc = call();
  t_inside_zcoll = false;
  if (g_hot.report) {
    zcoll_stats st{};
    zcoll_last_stats(zc, &st);
    record_call(fn, bytes, now_if_reporting() - t0, &st);
  }
  if (rc == ZCOLL_SUCCESS) return MPI_SUCCESS;
  int code = mpi_error_of(rc);
  PMPI_Comm_call_errhandler(comm, code);
  return code;
}

// Times and counts a call passed to PMPI (only reached when g_hot.report).
template <class Plain>
int run_plain_counted(Fn fn, size_t bytes, Plain&& plain) {
  const double t0 = now_if_reporting();
  const int rc = plain();
  record_call(fn, bytes, now_if_reporting() - t0, nullptr);
  return rc;
}

}  // namespace zcoll_pmpi
