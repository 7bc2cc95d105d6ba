// The drop-in layer under MPI_THREAD_MULTIPLE (linked in ahead of MPI, as the allocation
// test is; the environment opts every communicator in: ZCOLL_EB (ABS), ZCOLL_COMMS=all,
// ZCOLL_DECIDE=compress). Three threads per rank each duplicate a communicator of their own
// (the layer opts it in from that thread) and make float MPI_Allreduce and double MPI_Bcast
// calls on it, all at once. Every result must be within the bound, must have been
// compressed (it differs from PMPI's somewhere), and must equal, byte for byte, the same
// calls made afterwards by the main thread alone on the same communicators.
#include <mpi.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "mpi_check.h"

namespace {

constexpr int kN = 1 << 16, kJobs = 3, kReps = 2;
constexpr double kEb = 1e-3;  // ZCOLL_EB in the test's environment

double value(int owner, int seed, int i) { return 100.0 * std::sin(0.001 * i + 0.37 * owner + 0.11 * seed); }

struct Job {
  MPI_Comm comm = MPI_COMM_NULL;
  int rc = MPI_SUCCESS;                 // the first failure of an MPI call, if any
  std::vector<std::vector<float>> sums;  // per rep
  std::vector<std::vector<double>> bcasts;
};

// Job j's calls on its communicator; checks nothing itself (the checks' counters belong to
// the main thread).
void run_job(int j, Job& r) {
  r.sums.assign(kReps, std::vector<float>(kN));
  r.bcasts.assign(kReps, std::vector<double>(kN));
  for (int rep = 0; rep < kReps; ++rep) {
    const int seed = 7 * j + rep;
    std::vector<float> in(kN);
    for (int i = 0; i < kN; ++i) in[i] = static_cast<float>(value(g_rank, seed, i));
    int rc = MPI_Allreduce(in.data(), r.sums[rep].data(), kN, MPI_FLOAT, MPI_SUM, r.comm);
    std::vector<double>& b = r.bcasts[rep];
    for (int i = 0; i < kN; ++i) b[i] = g_rank == 0 ? value(0, seed, i) : NAN;
    if (!rc) rc = MPI_Bcast(b.data(), kN, MPI_DOUBLE, 0, r.comm);
    if (rc && !r.rc) r.rc = rc;
  }
}

void section_threads() {
  if (!thread_multiple("threads")) return;
  // Each thread duplicates a communicator of its own (distinct parents, so the duplicates
  // need no order between threads) and runs its calls.
  MPI_Comm parents[kJobs];
  for (MPI_Comm& c : parents) PMPI_Comm_dup(MPI_COMM_WORLD, &c);
  std::vector<Job> got(kJobs);
  in_threads(kJobs, "the threads' calls", 120, [&](int j) {
    Job& r = got[j];
    r.rc = MPI_Comm_dup(parents[j], &r.comm);
    if (!r.rc) run_job(j, r);
  });
  for (int j = 0; j < kJobs; ++j) {
    Ctx c("job %d", j);
    EXPECT(got[j].rc == MPI_SUCCESS, "an MPI call failed in its thread (%d)", got[j].rc);
    if (got[j].rc) continue;
    Job alone;
    alone.comm = got[j].comm;
    {
      Watchdog w("a job alone", 60);
      run_job(j, alone);
    }
    EXPECT(alone.rc == MPI_SUCCESS, "an MPI call failed alone (%d)", alone.rc);
    for (int rep = 0; rep < kReps; ++rep) {
      const int seed = 7 * j + rep;
      const std::vector<float>& s = got[j].sums[rep];
      const std::vector<double>& b = got[j].bcasts[rep];
      // The bounds: a SUM over p ranks within p x eb of the exact sum of the float inputs
      // (plus the float rounding of the sum), a bcast within eb.
      // Compressed: a bcast's values differ from the root's somewhere; so does a sum from
      // the float rounding of the exact one (plain MPI's, at 2 ranks).
      long outside = 0, sum_lossy = 0, bcast_lossy = 0;
      for (int i = 0; i < kN; ++i) {
        double exact = 0;
        for (int q = 0; q < g_size; ++q) exact += static_cast<float>(value(q, seed, i));
        const double err = std::fabs(static_cast<double>(s[i]) - exact);
        outside += !(err <= g_size * kEb + 1e-5 * std::fabs(exact));
        sum_lossy += static_cast<double>(s[i]) != static_cast<double>(static_cast<float>(exact));
        outside += !(std::fabs(b[i] - value(0, seed, i)) <= kEb);
        bcast_lossy += b[i] != value(0, seed, i);
      }
      EXPECT(outside == 0, "rep %d: %ld values outside their bound", rep, outside);
      EXPECT(g_size == 1 || sum_lossy > 0, "rep %d: every sum is exact: not compressed?", rep);
      EXPECT(g_rank == 0 || bcast_lossy > 0, "rep %d: every bcast value is the root's: not compressed?", rep);
      EXPECT(std::memcmp(s.data(), alone.sums[rep].data(), kN * sizeof(float)) == 0,
             "rep %d: the allreduce differs from the same call made alone", rep);
      EXPECT(std::memcmp(b.data(), alone.bcasts[rep].data(), kN * sizeof(double)) == 0,
             "rep %d: the bcast differs from the same call made alone", rep);
    }
    MPI_Comm_free(&got[j].comm);
  }
  for (MPI_Comm& c : parents) PMPI_Comm_free(&c);
}

const Section kSections[] = {{"threads", section_threads}};

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const int status = run_sections(argc, argv, kSections);
  MPI_Finalize();
  return status;
}
