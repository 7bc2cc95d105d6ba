// Codec threads per rank (host_cores.h).
#include "common/host_cores.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#ifdef __linux__
#include <sched.h>
#endif
#include <unistd.h>

#include "zcoll.h"

namespace zcoll {

int host_core_share(MPI_Comm host, int* share) {
  // How many ranks of the host may run on each CPU: a sum over the host of every rank's
  // mask, in fixed memory whatever the rank count (nothing to allocate, nothing to fail).
  constexpr int kCpus = 1024;
  int mine[kCpus] = {}, ranks_on[kCpus];
  bool known = false;
#ifdef __linux__
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int cpu = 0; cpu < kCpus && cpu < CPU_SETSIZE; ++cpu) mine[cpu] = CPU_ISSET(cpu, &set) ? 1 : 0;
    known = true;
  }
#endif
  if (!known) {  // every online CPU
    const long online = std::clamp(sysconf(_SC_NPROCESSORS_ONLN), 1L, static_cast<long>(kCpus));
    for (long cpu = 0; cpu < online; ++cpu) mine[cpu] = 1;
  }
  if (MPI_Allreduce(mine, ranks_on, kCpus, MPI_INT, MPI_SUM, host) != MPI_SUCCESS) return ZCOLL_ERR_MPI;
  double cores = 0;
  for (int cpu = 0; cpu < kCpus; ++cpu)
    if (mine[cpu]) cores += 1.0 / ranks_on[cpu];
  *share = std::max(1, static_cast<int>(std::floor(cores + 1e-9)));
  return ZCOLL_SUCCESS;
}

int host_core_share_of(MPI_Comm comm, int* share) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm host = MPI_COMM_NULL;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host) != MPI_SUCCESS) return ZCOLL_ERR_MPI;
  const int rc = host_core_share(host, share);
  MPI_Comm_free(&host);
  return rc;
}

int automatic_threads(int threads, int share) {
  if (threads > 0) return threads;
  const char* omp = std::getenv("OMP_NUM_THREADS");
  return omp && *omp ? 0 : share;
}

}  // namespace zcoll
