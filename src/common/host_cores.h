// How many codec threads a rank may run without taking cores from the other ranks of its
// host: what codec.threads 0 (zcoll_config) and zcoll_h5_options.threads 0 resolve to.
// OpenMP's own default gives every rank every core, and a fork-join then waits for a core
// that another rank holds (with MPI polling on it): with two ranks on two cores, a call
// through the agreement took 4-7 ms instead of 16-50 us.
#pragma once
#include <mpi.h>

namespace zcoll {

// This rank's share of its host's cores, over the host's ranks (`host`: a communicator of
// the ranks of one host, as MPI_COMM_TYPE_SHARED splits): each CPU its affinity mask allows
// counts 1/k, where k ranks of `host` may run on it; rounded down, at least 1. Two unbound
// ranks on two cores get one each; four on sixteen, four; a rank bound to one core, one.
// Collective over `host`; a zcoll code.
int host_core_share(MPI_Comm host, int* share);
// The same from any communicator: collective over comm (splits it by host, then frees that).
int host_core_share_of(MPI_Comm comm, int* share);
// `threads` where it is > 0; 0 (OpenMP's default) where the rank's environment sets
// OMP_NUM_THREADS: the user chose; else `share`.
int automatic_threads(int threads, int share);

}  // namespace zcoll
