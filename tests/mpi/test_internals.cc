// MPI tests of library internals, against the static library (like zcoll_cost_model_tests):
//
//   zcoll_mpi_internals_tests [section ...]      (no section: all of them)
//
// plain_rail  displacements beyond INT_MAX elements. An allgather of p blocks of `count` elements has
// its last block at (p - 1) x count, which passes INT_MAX on large jobs (64 ranks of 32 Mi
// floats) though every argument is an int. zcoll keeps those displacements as size_t; the
// one MPI call that takes them as ints, the plain rail stage of a PLAIN_HIERARCHICAL
// allgather (MPI_Allgatherv), has a second way, one MPI_Bcast per block, taken when any
// displacement passes int_limit. A real call that needs it needs over 8 GiB per rank, so
// this test lowers int_limit instead and checks that every way puts the same bytes where
// MPI_Allgatherv puts them, and leaves the gaps between blocks alone.
// core_share  codec.threads 0 resolves at zcoll_comm_create to OMP_NUM_THREADS where that
// is set (left 0: OpenMP's default), else to this rank's share of its host's cores
// (Topology::core_share): at least 1; where every rank of the host has the same CPU mask of
// m CPUs, max(1, m / ranks on the host); the host's ranks together never use more threads
// than the CPUs their masks cover (or one each); a count the user gave is kept.
#include <zcoll.h>

#include <sched.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "coll/hierarchical.h"
#include "common/comm.h"
#include "mpi_check.h"

namespace {

// Block b: counts[b] values at displs[b], in a buffer with gaps before, between and after
// the blocks, blocks out of rank order, and one empty block.
template <class T>
void check_plain_rail() {
  const bool f32 = sizeof(T) == 4;
  Ctx c("%s", f32 ? "f32" : "f64");
  const MPI_Datatype type = f32 ? MPI_FLOAT : MPI_DOUBLE;
  std::vector<int> counts(g_size);
  std::vector<size_t> displs(g_size);
  size_t end = 3;
  for (int b = g_size - 1; b >= 0; --b) {  // the last rank's block first
    counts[b] = b == 1 ? 0 : 5 + 2 * b;
    displs[b] = end;
    end += static_cast<size_t>(counts[b]) + 4;
  }
  auto value = [](int b, int k) { return static_cast<T>(b * 1000 + k) + static_cast<T>(0.25); };
  auto fresh = [&] {
    std::vector<T> v(end + 3, static_cast<T>(-7));
    for (int k = 0; k < counts[g_rank]; ++k) v[displs[g_rank] + k] = value(g_rank, k);
    return v;
  };
  std::vector<T> want = fresh();
  {
    const std::vector<int> ds(displs.begin(), displs.end());
    EXPECT(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, want.data(), counts.data(), ds.data(), type,
                          MPI_COMM_WORLD) == MPI_SUCCESS,
           "plain MPI_Allgatherv");
  }
  zcoll_config cfg;
  zcoll_config_init(&cfg);
  cfg.codec.eb = 1e-3;  // unused: the rail stage is plain
  zcoll_comm comm = nullptr;
  EXPECT_RC(zcoll_comm_create(MPI_COMM_WORLD, &cfg, &comm), ZCOLL_SUCCESS);
  if (!comm) return;
  // INT_MAX: MPI_Allgatherv; 0: a bcast per block; the middle: a bcast per block as soon
  // as one displacement passes it.
  for (size_t limit : {static_cast<size_t>(INT_MAX), static_cast<size_t>(0), displs[0]}) {
    Ctx l("int_limit %zu", limit);
    std::vector<T> got = fresh();
    EXPECT_RC(zcoll::coll::plain_rail_allgatherv(*comm, got.data(), counts, displs, type, sizeof(T), limit),
              ZCOLL_SUCCESS);
    EXPECT(std::memcmp(got.data(), want.data(), got.size() * sizeof(T)) == 0, "not MPI_Allgatherv's bytes");
    for (int b = 0; b < g_size; ++b)
      for (int k = 0; k < counts[b]; ++k)
        EXPECT(got[displs[b] + k] == value(b, k), "block %d value %d", b, k);
  }
  zcoll_comm_free(&comm);
}

void plain_rail() {
  check_plain_rail<float>();
  check_plain_rail<double>();
}

// The codec thread count a communicator made with `threads` (and OMP_NUM_THREADS = omp,
// nullptr: unset) resolved to.
int resolved_threads(int threads, const char* omp) {
  if (omp) setenv("OMP_NUM_THREADS", omp, 1);
  else unsetenv("OMP_NUM_THREADS");
  zcoll_config cfg;
  zcoll_config_init(&cfg);
  cfg.codec.eb = 1e-3;
  cfg.codec.threads = threads;
  zcoll_comm comm = nullptr;
  EXPECT_RC(zcoll_comm_create(MPI_COMM_WORLD, &cfg, &comm), ZCOLL_SUCCESS);
  const int t = comm ? comm->cfg.codec.threads : -1;
  if (comm) zcoll_comm_free(&comm);
  return t;
}

void core_share() {
  const char* saved = std::getenv("OMP_NUM_THREADS");
  const std::string keep = saved ? saved : "";
  // This host's ranks and their masks, gathered here independently of the library.
  MPI_Comm host;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &host);
  int k = 1;
  MPI_Comm_size(host, &k);
  cpu_set_t mine;
  CPU_ZERO(&mine);
  EXPECT(sched_getaffinity(0, sizeof mine, &mine) == 0, "sched_getaffinity");
  std::vector<cpu_set_t> all(static_cast<size_t>(k));
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, host);
  bool same = true;
  cpu_set_t covered;
  CPU_ZERO(&covered);
  for (const cpu_set_t& s : all) {
    same = same && CPU_EQUAL(&s, &mine);
    CPU_OR(&covered, &covered, &s);
  }
  const int m = CPU_COUNT(&mine);
  {
    Ctx c("OMP_NUM_THREADS unset, threads 0 (%d ranks on the host, %d CPUs in this mask, masks %s)", k, m,
          same ? "alike" : "differ");
    const int t = resolved_threads(0, nullptr);
    EXPECT(t >= 1, "resolved to %d", t);
    if (same) EXPECT(t == std::max(1, m / k), "resolved to %d, not max(1, %d / %d)", t, m, k);
    int sum = 0;
    MPI_Allreduce(&t, &sum, 1, MPI_INT, MPI_SUM, host);
    EXPECT(sum <= std::max(CPU_COUNT(&covered), k), "the host's ranks take %d threads on %d CPUs", sum,
           CPU_COUNT(&covered));
  }
  {
    Ctx c("OMP_NUM_THREADS=3, threads 0");
    const int t = resolved_threads(0, "3");
    EXPECT(t == 0, "resolved to %d: OpenMP's default (OMP_NUM_THREADS) should hold", t);
  }
  {
    Ctx c("threads 2 given");
    const int t = resolved_threads(2, nullptr);
    EXPECT(t == 2, "resolved to %d", t);
  }
  MPI_Comm_free(&host);
  if (saved) setenv("OMP_NUM_THREADS", keep.c_str(), 1);
  else unsetenv("OMP_NUM_THREADS");
}

const Section kSections[] = {{"plain_rail", plain_rail}, {"core_share", core_share}};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const int status = run_sections(argc, argv, kSections);
  MPI_Finalize();
  return status;
}
