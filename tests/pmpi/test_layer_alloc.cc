// The drop-in layer with one rank out of memory (linked in ahead of MPI, as
// zcoll_pmpi_check_static is; the environment opts every communicator in: ZCOLL_EB (ABS),
// ZCOLL_COMMS=all). One rank's k-th allocation fails inside MPI_Comm_dup of an opted-in
// communicator, then inside MPI_Comm_set_info with a zcoll_eb hint, for every k the call
// makes (rank 0, then the last). The ranks must still agree on whether the communicator
// compresses: a float MPI_Bcast on it must return on every rank (a watchdog ends a hang)
// with every value within the bound of the moment, and nothing may abort.
#include <mpi.h>

#include <cmath>
#include <vector>

#include "failing_new.h"
#include "mpi_check.h"

namespace {

constexpr int kN = 1 << 15;  // floats: above ZCOLL_MIN_BYTES
constexpr double kEb = 1e-3, kHintEb = 1e-2;

float value(int i) { return 100.0f * std::sin(0.001f * static_cast<float>(i)); }

// A bcast of floats from rank 0 on comm: every value within eb of rank 0's.
void check_bcast(MPI_Comm comm, double eb) {
  std::vector<float> v(kN, NAN);
  if (g_rank == 0)
    for (int i = 0; i < kN; ++i) v[i] = value(i);
  {
    Watchdog w("a float MPI_Bcast on the new communicator", 20);
    EXPECT(MPI_Bcast(v.data(), kN, MPI_FLOAT, 0, comm) == MPI_SUCCESS, "MPI_Bcast failed");
  }
  long outside = 0;
  for (int i = 0; i < kN; ++i) outside += !(std::fabs(double(v[i]) - double(value(i))) <= eb);
  EXPECT(outside == 0, "%ld values outside the bound %g", outside, eb);
}

// Runs call() on every rank, with `failing`'s k-th allocation failing there; returns
// whether it failed one.
template <class Call>
bool failing_call(int failing, long k, const char* what, Call&& call) {
  int thrown = 0;
  Watchdog w(what, 20);
  if (g_rank == failing) {
    FailingCall fail(k);
    EXPECT(call() == MPI_SUCCESS, "%s failed", what);
    thrown = g_thrown;
  } else {
    EXPECT(call() == MPI_SUCCESS, "%s failed", what);
  }
  MPI_Allreduce(MPI_IN_PLACE, &thrown, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return thrown != 0;
}

void section_alloc() {
  MPI_Info hint;
  MPI_Info_create(&hint);
  MPI_Info_set(hint, "zcoll_eb", "1e-2");
  long failed[2] = {0, 0};
  for (int failing : {0, g_size - 1}) {
    for (long k = 1;; ++k) {
      Ctx c("MPI_Comm_dup with rank %d's allocation %ld failing", failing, k);
      MPI_Comm d = MPI_COMM_NULL;
      const bool thrown = failing_call(failing, k, "MPI_Comm_dup", [&] { return MPI_Comm_dup(MPI_COMM_WORLD, &d); });
      check_bcast(d, kEb);
      MPI_Comm_free(&d);
      if (!thrown) break;
      ++failed[0];
    }
    for (long k = 1;; ++k) {
      Ctx c("MPI_Comm_set_info with rank %d's allocation %ld failing", failing, k);
      MPI_Comm d = MPI_COMM_NULL;
      MPI_Comm_dup(MPI_COMM_WORLD, &d);
      const bool thrown = failing_call(failing, k, "MPI_Comm_set_info", [&] { return MPI_Comm_set_info(d, hint); });
      check_bcast(d, kHintEb);
      MPI_Comm_free(&d);
      if (!thrown) break;
      ++failed[1];
    }
  }
  MPI_Info_free(&hint);
  EXPECT(failed[0] >= 2 && failed[1] >= 2, "allocations not reached: %ld in MPI_Comm_dup, %ld in MPI_Comm_set_info",
         failed[0], failed[1]);
  if (g_rank == 0)
    std::printf("alloc: %ld MPI_Comm_dup and %ld MPI_Comm_set_info calls with an allocation failed\n", failed[0],
                failed[1]);
}

const Section kSections[] = {{"alloc", section_alloc}};

}  // namespace

int main(int argc, char** argv) { return sections_main(argc, argv, kSections); }
