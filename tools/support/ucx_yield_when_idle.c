/* Preloaded (LD_PRELOAD) into the ranks of MPICH runs that put more ranks than cores on this
 * machine: the MPI tests of an MPICH build (cmake/mpi_tests.cmake) and the netem benchmarks of
 * 2 namespaces x 2 ranks (bench/netem/run.sh --yield-when-idle). Never part of libzcoll.
 *
 * MPICH's ch4:ucx device (Debian's MPICH) waits by polling ucp_worker_progress() without ever
 * giving up the core. With more ranks than cores, a rank that waits spins out its whole time
 * slice while the rank it waits for is not running, and every message costs a scheduler slice:
 * mpi_accuracy_np5 took 28.8 s with MPICH against 0.54 s with Open MPI, which yields when
 * oversubscribed, and a 1 MiB plain MPI_Allreduce of 2 namespaces x 2 ranks at 10 Gbit/s took
 * 50 ms instead of 3.6 ms. This wrapper does what Open MPI does: after 64 polls in a row that
 * found nothing to do, it yields the core. MPICH's semantics are unchanged; only who runs while
 * a rank waits. On a cluster, with a core per rank, spinning costs nobody and it is not needed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>

typedef unsigned (*zcoll_progress_fn)(void *);

unsigned ucp_worker_progress(void *worker) {
  enum { kIdlePollsBeforeYield = 64 };
  static zcoll_progress_fn next;        /* UCX's own, found on the first call */
  static __thread unsigned idle_polls;  /* per thread: tests call MPI from several threads */
  zcoll_progress_fn f = __atomic_load_n(&next, __ATOMIC_ACQUIRE);
  if (!f) {
    f = (zcoll_progress_fn)dlsym(RTLD_NEXT, "ucp_worker_progress");
    if (!f) return 0; /* cannot happen: only libucp's users call this, and they load it */
    __atomic_store_n(&next, f, __ATOMIC_RELEASE);
  }
  unsigned events = f(worker);
  if (events != 0) {
    idle_polls = 0;
  } else if (++idle_polls >= kIdlePollsBeforeYield) {
    idle_polls = 0;
    sched_yield();
  }
  return events;
}
