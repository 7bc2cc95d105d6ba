// MPI tests of AUTO's cost model (issue 17): every rank takes the same decision, under
// conditions built to make ranks see different things, and each decision keeps the
// collective's guarantee (within the bound when compressed, bit-exact when plain).
//
//   zcoll_mpi_auto_tests [section ...]      (no section: all of them)
//
// decides      a slow link (ZCOLL_NODE_LINK_GBPS=0.1 on every rank): the collectives'
//              first calls compress; a fast one (10000): they run plain MPI, bit-exact;
//              both report the predicted times; later calls (which also use what the
//              model measured) agree across ranks.
// adversarial  per-rank differences: the slow link given on one rank only; data whose
//              ratio differs wildly between ranks (one rank's constant); a rank with all-NaN
//              data; a rank with count 0 in allgatherv; a bcast whose root alone has data.
//              The decision (compressed, algorithm) must be the same on every rank.
// perrank      what zcoll_comm_create lets differ per rank and the model must not see
//              apart: codec threads (1 on rank 0, 16 on the others, over node links of
//              0.1-100 Gbit/s); on 3 ranks or more, nodes of different sizes (2, 1, 1...).
//              Every decision agrees and keeps the collective's guarantee, no hang.
// explores     a schedule never run at a size, predicted within 2x of the chosen one, is
//              run once: on 4 ranks over a slow link, allreduce's ring and recursive
//              doubling (1.5x against 2x the vector on the wire) both run within the first
//              three calls; later calls still agree.
// nodes        ranks in "nodes" of 2 (ZCOLL_NODE_KEY, even rank counts): AUTO also weighs
//              the node-aware schedules, compressed or plain; over a slow and a fast
//              network link, every decision agrees and every result keeps its guarantee.
// mixedtypes   once the model has figures, calls that plain MPI surely wins skip the
//              agreement: a rank passing a derived datatype of floats where another passes
//              MPI_FLOAT must still take the same path (no hang, MPI's result).
// Every call runs under a Watchdog: a hang ends the program with a message.
#include <zcoll.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mpi_check.h"

#ifndef ZCOLL_TEST_DATA_DIR
#error "ZCOLL_TEST_DATA_DIR must be defined"
#endif

namespace {

constexpr int kN = 1 << 18;  // 1 MiB of floats per rank
std::vector<float> g_field;

void load_field() {
  const std::string path = std::string(ZCOLL_TEST_DATA_DIR) + "/cesm_TS_10x192x288.f32";
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    g_field.resize(2 * kN);
    g_field.resize(std::fread(g_field.data(), sizeof(float), g_field.size(), f));
    std::fclose(f);
  }
  EXPECT(g_field.size() >= static_cast<size_t>(kN) + 1024, "cannot read %s", path.c_str());
  if (g_field.size() < static_cast<size_t>(kN) + 1024) g_field.assign(2 * kN, 1.0f);
}

// Rank r's slice of the field (shifted, so ranks differ).
std::vector<float> slice(int n, int r) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = g_field[(static_cast<size_t>(i) + 997u * r) % g_field.size()];
  return v;
}

// Creates a zcoll communicator with the node link given on the ranks `who` selects, and
// `threads` codec threads on this rank, in chunks of chunk_len values (0: the library's).
zcoll_comm make_comm(const char* gbps, bool on_this_rank, int threads = 1, size_t chunk_len = 0) {
  if (on_this_rank) setenv("ZCOLL_NODE_LINK_GBPS", gbps, 1);
  zcoll_config cfg;
  zcoll_config_init(&cfg);
  cfg.codec.eb_mode = ZCOLL_EB_REL;
  cfg.codec.eb = 1e-4;
  cfg.codec.threads = threads;
  cfg.codec.chunk_len = chunk_len;
  zcoll_comm zc = nullptr;
  Watchdog w("zcoll_comm_create", 30);
  EXPECT_RC(zcoll_comm_create(MPI_COMM_WORLD, &cfg, &zc), ZCOLL_SUCCESS);
  unsetenv("ZCOLL_NODE_LINK_GBPS");
  return zc;
}

// The same on the ranks of "node" `node` (ZCOLL_NODE_KEY), the network link between the
// nodes given (inside them, measured).
zcoll_comm make_node_comm(int node, const char* gbps) {
  setenv("ZCOLL_NODE_KEY", std::to_string(node).c_str(), 1);
  setenv("ZCOLL_LINK_GBPS", gbps, 1);
  zcoll_comm zc = make_comm(gbps, false);
  unsetenv("ZCOLL_NODE_KEY");
  unsetenv("ZCOLL_LINK_GBPS");
  return zc;
}

// The decision of the last call, the same on every rank. Returns whether it compressed.
bool same_decision(zcoll_comm zc, const char* what) {
  zcoll_stats st{};
  zcoll_last_stats(zc, &st);
  int mine[2] = {st.compressed, st.algorithm}, lo[2], hi[2];
  MPI_Allreduce(mine, lo, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(mine, hi, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  EXPECT(lo[0] == hi[0] && lo[1] == hi[1], "%s: ranks decided differently (compressed %d..%d, algorithm %d..%d)", what,
         lo[0], hi[0], lo[1], hi[1]);
  EXPECT(st.t_total > 0, "%s: no measured time", what);
  return st.compressed != 0;
}

// zcoll_comm_get_info: its agreed fields the same on every rank; returns this rank's.
zcoll_comm_info agreed_info(zcoll_comm zc) {
  zcoll_comm_info in;
  EXPECT_RC(zcoll_comm_get_info(nullptr, &in), ZCOLL_ERR_ARG);
  EXPECT_RC(zcoll_comm_get_info(zc, nullptr), ZCOLL_ERR_ARG);
  std::memset(&in, 0xff, sizeof in);
  EXPECT_RC(zcoll_comm_get_info(zc, &in), ZCOLL_SUCCESS);
  double mine[8] = {double(in.nodes), double(in.max_node_size), double(in.rails), double(in.model_threads),
                    in.intra_latency_s, in.intra_bytes_per_s, in.inter_latency_s, in.inter_bytes_per_s};
  double lo[8], hi[8];
  MPI_Allreduce(mine, lo, 8, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(mine, hi, 8, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  for (int i = 0; i < 8; ++i) EXPECT(lo[i] == hi[i], "zcoll_comm_get_info: agreed field %d differs (%g..%g)", i, lo[i], hi[i]);
  EXPECT(in.intra_bytes_per_s > 0 && in.intra_latency_s >= 0, "zcoll_comm_get_info: intra-node link %g B/s, %g s",
         in.intra_bytes_per_s, in.intra_latency_s);
  return in;
}

double eb_abs(zcoll_comm zc) {
  zcoll_stats st{};
  zcoll_last_stats(zc, &st);
  return st.eb_abs;
}

// Each element within tol of want (NaN matches NaN), or bit-exact when tol is 0.
// nan_wins: a NaN where MPI's MAX kept a number is right too (zcoll.h: on the compressed
// path NaN wins; MPI libraries differ).
void check_close(const std::vector<float>& got, const std::vector<float>& want, double tol, const char* what,
                 bool nan_wins = false) {
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const bool nan = std::isnan(got[i]) && (std::isnan(want[i]) || nan_wins);
    const bool ok = nan || (tol > 0 ? std::fabs(static_cast<double>(got[i]) - want[i]) <= tol
                                    : std::memcmp(&got[i], &want[i], sizeof(float)) == 0);
    if (!ok && !bad++) first = i;
  }
  EXPECT(bad == 0, "%s: %zu of %zu elements off (first at %zu: %.9g, want %.9g, tol %g)", what, bad, got.size(), first,
         bad ? got[first] : 0.0f, bad ? want[first] : 0.0f, tol);
}

// Counts a compressed call; lists a plain one with AUTO's predictions (for a failed count's message).
struct Tally {
  int n = 0;
  std::string plain;
};

void count(zcoll_comm zc, const char* what, bool z, Tally* t) {
  t->n += z;
  if (z) return;
  zcoll_stats st{};
  zcoll_last_stats(zc, &st);
  char line[160];
  std::snprintf(line, sizeof line, " [%s ran plain MPI: predicted %.3g s, ratio %.3g, took %.3g s]", what,
                st.t_predicted_plain, st.ratio_predicted, st.t_total);
  t->plain += line;
}

// One round of the collectives on `in` (this rank's data); each checked against plain MPI.
void round_of_collectives(zcoll_comm zc, const std::vector<float>& in, const char* label, Tally* compressed) {
  const int p = g_size, n = static_cast<int>(in.size());
  Ctx c("%s", label);
  int has_nan = std::any_of(in.begin(), in.end(), [](float x) { return std::isnan(x); });
  MPI_Allreduce(MPI_IN_PLACE, &has_nan, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  {
    std::vector<float> got(n), want(n);
    Watchdog w("allreduce MAX");
    EXPECT_RC(zcoll_allreduce(in.data(), got.data(), n, MPI_FLOAT, MPI_MAX, zc), ZCOLL_SUCCESS);
    const bool z = same_decision(zc, "allreduce MAX");
    MPI_Allreduce(in.data(), want.data(), n, MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD);
    check_close(got, want, z ? eb_abs(zc) : 0, "allreduce MAX", z && has_nan);
    count(zc, "allreduce MAX", z, compressed);
  }
  {
    std::vector<float> got(static_cast<size_t>(n) * p), want(got.size());
    Watchdog w("allgather");
    EXPECT_RC(zcoll_allgather(in.data(), n, MPI_FLOAT, got.data(), n, MPI_FLOAT, zc), ZCOLL_SUCCESS);
    const bool z = same_decision(zc, "allgather");
    MPI_Allgather(in.data(), n, MPI_FLOAT, want.data(), n, MPI_FLOAT, MPI_COMM_WORLD);
    check_close(got, want, z ? eb_abs(zc) : 0, "allgather");
    count(zc, "allgather", z, compressed);
  }
  {
    std::vector<float> got = in, want = in;
    Watchdog w("bcast");
    EXPECT_RC(zcoll_bcast(got.data(), n, MPI_FLOAT, p - 1, zc), ZCOLL_SUCCESS);
    const bool z = same_decision(zc, "bcast");
    MPI_Bcast(want.data(), n, MPI_FLOAT, p - 1, MPI_COMM_WORLD);
    check_close(got, want, z ? eb_abs(zc) : 0, "bcast");
    count(zc, "bcast", z, compressed);
  }
  {
    const int m = n / p;
    std::vector<float> got(static_cast<size_t>(m) * p), want(got.size());
    Watchdog w("alltoall");
    EXPECT_RC(zcoll_alltoall(in.data(), m, MPI_FLOAT, got.data(), m, MPI_FLOAT, zc), ZCOLL_SUCCESS);
    const bool z = same_decision(zc, "alltoall");
    MPI_Alltoall(in.data(), m, MPI_FLOAT, want.data(), m, MPI_FLOAT, MPI_COMM_WORLD);
    check_close(got, want, z ? eb_abs(zc) : 0, "alltoall");
    count(zc, "alltoall", z, compressed);
  }
}

void decides() {
  const std::vector<float> in = slice(kN, g_rank);
  for (const char* gbps : {"0.1", "10000"}) {
    Ctx c("node link %s Gbit/s", gbps);
    zcoll_comm zc = make_comm(gbps, true);
    if (!zc) return;
    // The first round is the model's alone; later rounds also use what it measured (here
    // the "slow" link is really shared memory, so it may learn that plain MPI wins), and
    // only have to agree across ranks.
    Tally compressed, later;
    round_of_collectives(zc, in, "real data, first round", &compressed);
    for (int rep = 0; rep < 2; ++rep) round_of_collectives(zc, in, "real data, later round", &later);
    const bool slow = gbps[0] == '0';
    if (g_size > 1) EXPECT(compressed.n == (slow ? 4 : 0), "%d of the first 4 calls compressed;%s", compressed.n,
                           compressed.plain.c_str());
    // The predictions are reported, and the one that ran is the smaller, or within 2x of it:
    // AUTO tries a path predicted within 2x once (a probe), and every 8th decided call
    // re-checks a runner-up within 1.25x.
    zcoll_stats st{};
    zcoll_last_stats(zc, &st);
    if (g_size > 1) {
      EXPECT(st.t_predicted > 0 && st.t_predicted_plain > 0, "predictions %g, plain %g", st.t_predicted,
             st.t_predicted_plain);
      EXPECT(st.t_predicted <= 2 * st.t_predicted_plain, "ran a prediction over 2x plain MPI's: %g against %g",
             st.t_predicted, st.t_predicted_plain);
    }
    if (slow && g_size > 1) EXPECT(st.ratio_predicted > 1.5, "predicted ratio %g", st.ratio_predicted);
    zcoll_comm_free(&zc);
  }
}

void explores() {
  // Recursive doubling's wire bytes are 4/3 of the ring's on 4 ranks (CMake runs it there).
  if (g_size != 4) {
    if (g_rank == 0) std::printf("section explores: skipped (needs 4 ranks, has %d)\n", g_size);
    return;
  }
  // A given link of 1 Mbit/s: the compressed paths stay predicted to win by far more than 2x
  // after the ring's first real run, however slowly an oversubscribed host runs it. At 0.1
  // Gbit/s a slow first ring (4 ranks on 2 busy cores) made AUTO measure plain MPI (over
  // shared memory: fast) and keep it, so recursive doubling was never tried; the check then
  // failed on b9cadb2 and later builds alike (8 and 7 of 12 runs beside another test).
  zcoll_comm zc = make_comm("0.001", true);
  if (!zc) return;
  const std::vector<float> in = slice(kN, g_rank);
  std::vector<float> got(kN), want(kN);
  MPI_Allreduce(in.data(), want.data(), kN, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  double big = 0;
  for (float x : want) big = std::max(big, std::fabs(static_cast<double>(x)));
  bool ran[2] = {false, false};
  std::string seen;
  for (int call = 0; call < 5; ++call) {
    Watchdog w("allreduce");
    EXPECT_RC(zcoll_allreduce(in.data(), got.data(), kN, MPI_FLOAT, MPI_SUM, zc), ZCOLL_SUCCESS);
    const bool z = same_decision(zc, "allreduce");
    zcoll_stats st{};
    zcoll_last_stats(zc, &st);
    // SUM on the homomorphic path: p quantizations, plus the float rounding of the sums.
    check_close(got, want, z ? (4 * eb_abs(zc) + 8 * 0x1p-24 * big) * (1 + 1e-6) : 0, "allreduce");
    seen += std::string(call ? " " : "") + (z ? zcoll_algorithm_name(st.algorithm) : "mpi");
    if (call < 3) {
      ran[0] = ran[0] || st.algorithm == ZCOLL_ALGO_RING;
      ran[1] = ran[1] || st.algorithm == ZCOLL_ALGO_RECURSIVE_DOUBLING;
    }
  }
  EXPECT(ran[0] && ran[1], "the first three calls did not run both ring and recursive doubling: %s", seen.c_str());
  zcoll_comm_free(&zc);
}

void nodes() {
  if (g_size % 2) {
    if (g_rank == 0) std::printf("section nodes: skipped (needs an even rank count, has %d)\n", g_size);
    return;
  }
  const std::vector<float> in = slice(kN, g_rank);
  for (const char* gbps : {"0.1", "10000"}) {
    Ctx c("nodes of 2 ranks, network link %s Gbit/s", gbps);
    zcoll_comm zc = make_node_comm(g_rank / 2, gbps);
    if (!zc) return;
    Tally compressed;
    for (int rep = 0; rep < 4; ++rep) round_of_collectives(zc, in, "real data", &compressed);
    zcoll_comm_free(&zc);
  }
}

void adversarial() {
  // The slow link on one rank only: the agreed figures are the worst, the same everywhere.
  for (int who = 0; who < g_size; who += std::max(1, g_size - 1)) {
    Ctx c("slow link given on rank %d only", who);
    zcoll_comm zc = make_comm("0.1", g_rank == who);
    if (!zc) return;
    // The worst of every rank's figures: 0.1 Gbit/s on every rank.
    const zcoll_comm_info info = agreed_info(zc);
    EXPECT(std::fabs(info.intra_bytes_per_s - 0.1e9 / 8) <= 1e-6 * 0.1e9 / 8,
           "zcoll_comm_get_info: intra-node link %g B/s, given 0.1 Gbit/s on rank %d", info.intra_bytes_per_s, who);
    Tally compressed;
    // Ratios that differ wildly: one rank's data is constant.
    std::vector<float> in = slice(kN, g_rank);
    if (g_rank == 0) std::fill(in.begin(), in.end(), 3.5f);
    round_of_collectives(zc, in, "rank 0 constant", &compressed);
    // A rank whose data is all NaN (the value range comes from the others).
    in = slice(kN, g_rank);
    if (g_rank == g_size - 1) std::fill(in.begin(), in.end(), std::nanf(""));
    round_of_collectives(zc, in, "last rank all NaN", &compressed);
    // Allgatherv with a rank contributing nothing.
    {
      std::vector<int> counts(g_size, kN / 4), displs(g_size);
      counts[0] = 0;
      for (int i = 1; i < g_size; ++i) displs[i] = displs[i - 1] + counts[i - 1];
      const int total = displs[g_size - 1] + counts[g_size - 1];
      const std::vector<float> mine = slice(counts[g_rank], g_rank);
      std::vector<float> got(total), want(total);
      Watchdog w("allgatherv");
      EXPECT_RC(zcoll_allgatherv(mine.data(), counts[g_rank], MPI_FLOAT, got.data(), counts.data(), displs.data(),
                                 MPI_FLOAT, zc),
                ZCOLL_SUCCESS);
      const bool z = same_decision(zc, "allgatherv, rank 0 count 0");
      MPI_Allgatherv(mine.data(), counts[g_rank], MPI_FLOAT, want.data(), counts.data(), displs.data(), MPI_FLOAT,
                     MPI_COMM_WORLD);
      check_close(got, want, z ? eb_abs(zc) : 0, "allgatherv, rank 0 count 0");
    }
    if (g_size > 1) EXPECT(compressed.n > 0, "the slow link never led to compression (%d calls)", compressed.n);
    zcoll_comm_free(&zc);
  }
}

void perrank() {
  const std::vector<float> in = slice(kN, g_rank);
  // Codec threads that differ per rank (zcoll_comm_create allows it: the automatic count is
  // a host's cores over its ranks, which differs from host to host). Chunks of 1024 values
  // give a piece 64 chunks, so the others' 16 threads could all share one where rank 0 has
  // 1. Each rank's own count in the model made the ranks decide apart: the first such call
  // hung (rank 0 in plain MPI, the others compressing).
  for (const char* gbps : {"0.1", "1", "10", "100"}) {
    Ctx c("codec threads 1 on rank 0, 16 on the others; node link %s Gbit/s", gbps);
    zcoll_comm zc = make_comm(gbps, true, g_rank == 0 ? 1 : 16, 1024);
    if (!zc) return;
    const zcoll_comm_info info = agreed_info(zc);
    EXPECT(info.codec_threads == (g_rank == 0 ? 1 : 16) && info.model_threads == 1,
           "zcoll_comm_get_info: codec threads %d, the model's %d", info.codec_threads, info.model_threads);
    Tally compressed;
    for (int rep = 0; rep < 3; ++rep) round_of_collectives(zc, in, "real data", &compressed);
    zcoll_comm_free(&zc);
  }
  // Nodes of different sizes (ZCOLL_NODE_KEY): the first node has two ranks, the others one
  // each. The model's all-pairs pattern shares a node's link among its ranks: the largest
  // node's count, the same on every rank.
  if (g_size < 3) return;
  for (const char* gbps : {"0.1", "1", "10", "100"}) {
    Ctx c("nodes of 2, 1%s ranks; network link %s Gbit/s", g_size > 3 ? ", 1..." : "", gbps);
    zcoll_comm zc = make_node_comm(std::max(g_rank, 1), gbps);
    if (!zc) return;
    const zcoll_comm_info info = agreed_info(zc);
    EXPECT(info.nodes == g_size - 1 && info.max_node_size == 2 && info.rails == 1 && info.node == std::max(g_rank - 1, 0) &&
               info.node_size == (g_rank < 2 ? 2 : 1) && info.node_rank == (g_rank == 1 ? 1 : 0),
           "zcoll_comm_get_info: nodes %d (largest %d, rails %d), node %d of %d ranks, node rank %d", info.nodes,
           info.max_node_size, info.rails, info.node, info.node_size, info.node_rank);
    EXPECT(std::fabs(info.inter_bytes_per_s - std::atof(gbps) * 1e9 / 8) <= 1e-6 * info.inter_bytes_per_s,
           "zcoll_comm_get_info: network link %g B/s, given %s Gbit/s", info.inter_bytes_per_s, gbps);
    Tally compressed;
    for (int rep = 0; rep < 3; ++rep) round_of_collectives(zc, in, "real data", &compressed);
    zcoll_comm_free(&zc);
  }
}

void mixedtypes() {
  zcoll_comm zc = make_comm("10000", true);
  if (!zc) return;
  MPI_Datatype wrapped;  // a derived datatype of one float: legal against MPI_FLOAT
  MPI_Type_contiguous(1, MPI_FLOAT, &wrapped);
  MPI_Type_commit(&wrapped);
  const std::vector<float> in = slice(kN, g_rank);
  for (int rep = 0; rep < 4; ++rep) {
    Ctx c("call %d (the first agrees; later ones may skip the agreement)", rep);
    const MPI_Datatype mine = g_rank == 0 ? wrapped : MPI_FLOAT;
    const bool root = g_rank == g_size - 1;
    std::vector<float> buf = root ? in : std::vector<float>(kN);
    Watchdog w("bcast with mixed datatypes");
    EXPECT_RC(zcoll_bcast(buf.data(), kN, mine, g_size - 1, zc), ZCOLL_SUCCESS);
    zcoll_stats st{};
    zcoll_last_stats(zc, &st);
    EXPECT(!st.compressed, "compressed although a rank passed a derived datatype");
    check_close(buf, slice(kN, g_size - 1), 0, "bcast with mixed datatypes");
  }
  MPI_Type_free(&wrapped);
  zcoll_comm_free(&zc);
}

const Section kSections[] = {
    {"decides", decides}, {"adversarial", adversarial}, {"explores", explores}, {"nodes", nodes},
    {"perrank", perrank}, {"mixedtypes", mixedtypes}};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  // Decisions must come from the model, whatever the environment says.
  unsetenv("ZCOLL_DECIDE");
  load_field();
  const int rc = run_sections(argc, argv, kSections);
  MPI_Finalize();
  return rc;
}
