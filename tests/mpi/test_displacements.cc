// Displacements beyond INT_MAX elements. An allgather of p blocks of `count` elements has
// its last block at (p - 1) x count, which passes INT_MAX on large jobs (64 ranks of 32 Mi
// floats) though every argument is an int. zcoll keeps those displacements as size_t; the
// one MPI call that takes them as ints, the plain rail stage of a PLAIN_HIERARCHICAL
// allgather (MPI_Allgatherv), has a second way, one MPI_Bcast per block, taken when any
// displacement passes int_limit. A real call that needs it needs over 8 GiB per rank, so
// this test lowers int_limit instead and checks that every way puts the same bytes where
// MPI_Allgatherv puts them, and leaves the gaps between blocks alone.
//
//   zcoll_mpi_displacements_tests [section ...]      (no section: all of them)
//
// Against the library's internals (the static library), like zcoll_cost_model_tests.
#include <zcoll.h>

#include <cstring>
#include <vector>

#include "coll/hierarchical.h"
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

const Section kSections[] = {{"plain_rail", plain_rail}};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const int status = run_sections(argc, argv, kSections);
  MPI_Finalize();
  return status;
}
