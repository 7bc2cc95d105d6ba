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
// tuning_file  AUTO's warm start (coll/tuning_file.h): a communicator freed with
// ZCOLL_TUNING_FILE set writes its model's record; the next one of the same key starts from
// it on every rank, with the previous call in flight forgotten; a different key, a different
// network (link figures more than 2x apart), a damaged or foreign file, or no file leave it
// cold without an error; records of other keys are kept; an unwritable path is ignored.
// deferred_range  a REL call the model expects to run plain MPI defers its range pass
// (call.h); where it then compresses, every rank's share reaches the bound by one more
// allreduce: eb_abs is eb x the range of every rank's input, as when no rank deferred, and
// every element of the SUM is within the bound. Played with the deferring rank holding the
// widest values, on that rank alone and on every rank; the model's state is set by hand.
#include <zcoll.h>

#include <sched.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <cstring>
#include <string>
#include <vector>

#include "coll/cost_model.h"
#include "coll/hierarchical.h"
#include "coll/tuning_file.h"
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
    std::vector<int> int_displs;
    EXPECT_RC(zcoll::coll::plain_rail_allgatherv(*comm, got.data(), counts.data(), displs.data(), type, sizeof(T),
                                                 &int_displs, limit),
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

namespace zc = zcoll::coll;

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::vector<uint8_t> b;
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    uint8_t buf[65536];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) b.insert(b.end(), buf, buf + n);
    std::fclose(f);
  }
  return b;
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& b) {
  FILE* f = std::fopen(path.c_str(), "wb");
  EXPECT(f != nullptr, "cannot write %s", path.c_str());
  if (!f) return;
  if (!b.empty()) std::fwrite(b.data(), 1, b.size(), f);
  std::fclose(f);
}

// Member by member: a whole-struct memcmp would also compare padding, whose bytes a copy need
// not keep (it failed under the sanitizers' build, where the Release build happened to pass).
// When ModelState changes, list the new member here and bump tuning_file.cc's kFormat.
static_assert(sizeof(zc::ModelState) == 181520, "ModelState changed: update same_state and kFormat");
bool same_state(const zc::ModelState& a, const zc::ModelState& b) {
  bool ok = true;
#define ZCOLL_SAME(m) ok = ok && std::memcmp(&a.m, &b.m, sizeof a.m) == 0
  ZCOLL_SAME(intra);
  ZCOLL_SAME(inter);
  ZCOLL_SAME(reduce_cost);
  ZCOLL_SAME(codec_threads);
  ZCOLL_SAME(best_compress);
  ZCOLL_SAME(best_decompress);
  ZCOLL_SAME(rho);
  ZCOLL_SAME(recent_compress);
  ZCOLL_SAME(recent_decompress);
  ZCOLL_SAME(recent_n);
  ZCOLL_SAME(learned);
  ZCOLL_SAME(runs);
  ZCOLL_SAME(seen);  // Run: three doubles, no padding
  ZCOLL_SAME(best_run);
  ZCOLL_SAME(best_ratio);
  ZCOLL_SAME(decided);
  ZCOLL_SAME(skipped);
  ZCOLL_SAME(confirm);
  ZCOLL_SAME(judge_again);
  ZCOLL_SAME(recheck_bar);
  ZCOLL_SAME(recheck_cold);
  ZCOLL_SAME(last_ran);
  ZCOLL_SAME(rechecks);
  ZCOLL_SAME(chosen);
  ZCOLL_SAME(fast_calls);
  ZCOLL_SAME(last_collective);
  ZCOLL_SAME(last_size);
  ZCOLL_SAME(last_path);
  ZCOLL_SAME(last_model);
  ZCOLL_SAME(last_rho);
  ZCOLL_SAME(last_bytes);
  ZCOLL_SAME(last_comp);
  ZCOLL_SAME(last_decomp);
  ZCOLL_SAME(last_homomorphic);
  ZCOLL_SAME(last_time);
  ZCOLL_SAME(last_overhead);
  ZCOLL_SAME(last_deferred);
  ZCOLL_SAME(fast_seen);
  ZCOLL_SAME(fast_seen_n);
  ZCOLL_SAME(fast_collective);
  ZCOLL_SAME(fast_size);
  ZCOLL_SAME(fast_model);
  ZCOLL_SAME(stretch_after);
  ZCOLL_SAME(fastest_run);
  ZCOLL_SAME(fastest_warm);
  ZCOLL_SAME(last_warm);
  ZCOLL_SAME(overhead);
  ZCOLL_SAME(overhead_runs);
  ZCOLL_SAME(own_range);
  ZCOLL_SAME(epoch);
#undef ZCOLL_SAME
  for (int k = 0; k < ZCOLL_NUM_COLLECTIVES; ++k) {
    const zc::ModelState::Verdict &x = a.verdict[k], &y = b.verdict[k];
    ok = ok && x.epoch == y.epoch && x.bytes == y.bytes && x.plain == y.plain && x.t_plain == y.t_plain &&
         x.t_model == y.t_model;
  }
  return ok;
}

// A communicator of MPI_COMM_WORLD deciding by the model, with this bound.
zcoll_comm model_comm(zcoll_eb_mode mode, double eb) {
  zcoll_config cfg;
  zcoll_config_init(&cfg);
  cfg.codec.eb_mode = mode;
  cfg.codec.eb = eb;
  cfg.decision = ZCOLL_DECIDE_MODEL;
  zcoll_comm comm = nullptr;
  EXPECT_RC(zcoll_comm_create(MPI_COMM_WORLD, &cfg, &comm), ZCOLL_SUCCESS);
  return comm;
}

// A communicator deciding by the model (eb is part of the key), and whether it began warm:
// that must be the same on every rank.
zcoll_comm warm_or_cold(double eb, bool* warm) {
  zcoll_comm comm = model_comm(ZCOLL_EB_ABS, eb);
  int api = -1;
  if (comm) EXPECT_RC(zcoll_comm_warm_start(comm, &api), ZCOLL_SUCCESS);
  EXPECT(!comm || api == (comm->tuning_loaded ? 1 : 0), "zcoll_comm_warm_start says %d", api);
  int w[2] = {comm && comm->tuning_loaded, comm && comm->tuning_loaded};
  w[0] = -w[0];
  MPI_Allreduce(MPI_IN_PLACE, w, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  EXPECT(-w[0] == w[1], "warm on some ranks only");
  *warm = w[1] != 0;
  return comm;
}

// Calls the model decides: allreduces of a smooth 1 MiB vector (the values do not matter
// here, only that the model learns), every result within the bound of the SUM.
void run_calls(zcoll_comm comm, double eb, int calls) {
  const int n = 1 << 18;
  std::vector<float> in(n), out(n);
  for (int i = 0; i < n; ++i) in[i] = static_cast<float>(std::sin(0.001 * i + g_rank));
  for (int k = 0; k < calls; ++k) {
    EXPECT_RC(zcoll_allreduce(in.data(), out.data(), n, MPI_FLOAT, MPI_SUM, comm), ZCOLL_SUCCESS);
    double worst = 0;
    for (int i = 0; i < n; i += 97) {
      double sum = 0;
      for (int r = 0; r < g_size; ++r) sum += static_cast<float>(std::sin(0.001 * i + r));
      worst = std::max(worst, std::fabs(out[i] - sum));
    }
    EXPECT(worst <= g_size * eb * 1.0001 + 1e-6 * g_size, "call %d: error %g over %d x eb %g", k, worst, g_size, eb);
  }
}

// A communicator of bound eb that must start warm or cold (`wrong`: the failure's message),
// making `calls` calls before it is freed (its record written where the model learned).
void expect_start(double eb, bool want_warm, const char* wrong, int calls = 0) {
  bool warm = !want_warm;
  zcoll_comm comm = warm_or_cold(eb, &warm);
  EXPECT(warm == want_warm, "%s", wrong);
  if (!comm) return;
  run_calls(comm, eb, calls);
  EXPECT_RC(zcoll_comm_free(&comm), ZCOLL_SUCCESS);
}

void tuning_file() {
  const char* decide = std::getenv("ZCOLL_DECIDE");
  const std::string keep_decide = decide ? decide : "";
  unsetenv("ZCOLL_DECIDE");  // the model must decide here
  // Fixed link figures: the measured ones would differ between this test's communicators only
  // by noise, which the network check must not see.
  setenv("ZCOLL_LINK_GBPS", "1", 1);
  setenv("ZCOLL_NODE_LINK_GBPS", "20", 1);
  long id = static_cast<long>(getpid());
  MPI_Bcast(&id, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  const std::string path = "/tmp/zcoll-tuning-test-" + std::to_string(id) + ".bin";
  std::remove(path.c_str());
  const double eb = 1e-3, eb2 = 2e-3;
  const auto saved = std::make_unique<zc::ModelState>();
  uint64_t key = 0;
  {
    Ctx c("no ZCOLL_TUNING_FILE: nothing written");
    unsetenv("ZCOLL_TUNING_FILE");
    expect_start(eb, false, "warm without a file", 3);
    EXPECT(file_bytes(path).empty(), "%s written", path.c_str());
  }
  setenv("ZCOLL_TUNING_FILE", path.c_str(), 1);
  {
    Ctx c("a cold communicator writes its record at zcoll_comm_free");
    bool warm = true;
    zcoll_comm comm = warm_or_cold(eb, &warm);
    EXPECT(!warm, "warm before any record");
    if (comm) {
      run_calls(comm, eb, 6);
      key = zc::tuning_key(*comm);
      *saved = *comm->model;
      EXPECT_RC(zcoll_comm_free(&comm), ZCOLL_SUCCESS);
    }
    MPI_Bcast(static_cast<void*>(saved.get()), sizeof(zc::ModelState), MPI_BYTE, 0, MPI_COMM_WORLD);
    MPI_Bcast(&key, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (g_rank == 0) {
      const std::vector<zc::TuningRecord> records = zc::parse_tuning(file_bytes(path));
      EXPECT(records.size() == 1, "%zu records", records.size());
      if (!records.empty()) {
        EXPECT(records[0].key == key, "the record's key is another");
        const auto written = std::make_unique<zc::ModelState>();
        if (records[0].state.size() == sizeof(zc::ModelState))
          std::memcpy(static_cast<void*>(written.get()), records[0].state.data(), sizeof(zc::ModelState));
        EXPECT(records[0].state.size() == sizeof(zc::ModelState) && same_state(*written, *saved),
               "the record is not the model's state");
      }
    }
  }
  int learned = 0;
  for (const auto& per_collective : saved->runs)
    for (const auto& per_size : per_collective)
      for (int n : per_size) learned += n;
  EXPECT(learned > 0, "the model learned no path: nothing to carry over");
  auto expected = std::make_unique<zc::ModelState>(*saved);
  zc::forget_calls_in_flight(*expected);
  {
    Ctx c("the same key starts warm, from rank 0's record, on every rank");
    bool warm = false;
    zcoll_comm comm = warm_or_cold(eb, &warm);
    EXPECT(warm, "cold");
    if (comm) {
      EXPECT(comm->model && same_state(*comm->model, *expected), "the model is not the record less its call in flight");
      EXPECT(comm->model->last_collective == -1, "the previous process's call would be learned");
      run_calls(comm, eb, 2);
      EXPECT_RC(zcoll_comm_free(&comm), ZCOLL_SUCCESS);
    }
  }
  {
    Ctx c("another key (eb) starts cold, and its record joins the file");
    bool warm = true;
    zcoll_comm comm = warm_or_cold(eb2, &warm);
    EXPECT(!warm, "warm from another key's record");
    if (comm) {
      const auto fresh = std::make_unique<zc::ModelState>();
      EXPECT(comm->model && std::memcmp(comm->model->runs, fresh->runs, sizeof fresh->runs) == 0,
             "a cold model has runs");
      run_calls(comm, eb2, 3);
      EXPECT_RC(zcoll_comm_free(&comm), ZCOLL_SUCCESS);
    }
    if (g_rank == 0) EXPECT(zc::parse_tuning(file_bytes(path)).size() == 2, "not two records");
    expect_start(eb, true, "the first key's record was lost");
  }
  {
    Ctx c("another network: links more than 2x apart start cold, within 2x warm; one record per network");
    setenv("ZCOLL_LINK_GBPS", "2.5", 1);
    expect_start(eb, false, "warm on a network 2.5x faster", 3);
    if (g_rank == 0) EXPECT(zc::parse_tuning(file_bytes(path)).size() == 3, "not three records (eb2, eb twice)");
    expect_start(eb, true, "cold on the 2.5x network, which has its record now");
    // 1.8 Gbit/s is within 2x of both: the nearer record is taken (the file holds the other first).
    setenv("ZCOLL_LINK_GBPS", "1.8", 1);
    bool warm = false;
    zcoll_comm comm = warm_or_cold(eb, &warm);
    EXPECT(warm, "cold on a network 1.8x faster");
    if (comm) {
      EXPECT(comm->model && comm->model->inter.beta == 8.0 / 2.5e9, "not the 2.5 Gbit/s record: beta %g",
             comm->model ? comm->model->inter.beta : 0.0);
      EXPECT_RC(zcoll_comm_free(&comm), ZCOLL_SUCCESS);
    }
    setenv("ZCOLL_LINK_GBPS", "1", 1);
    if (g_rank == 0) EXPECT(zc::parse_tuning(file_bytes(path)).size() == 3, "not three records");
  }
  {
    Ctx c("a damaged or foreign file starts cold, without an error");
    std::vector<uint8_t> good;
    if (g_rank == 0) good = file_bytes(path);
    // Damage to the file's first record stops the parse there (a length after damage cannot
    // be trusted), so eb's records behind it are not taken either.
    const std::vector<std::pair<const char*, size_t>> damages = {
        {"a byte of the state flipped", 100}, {"the key flipped", 8}, {"the length flipped", 16}};
    for (const auto& [what, at] : damages) {
      Ctx d("%s", what);
      if (g_rank == 0) {
        std::vector<uint8_t> bad = good;
        bad[at] ^= 0x5a;
        write_bytes(path, bad);
        EXPECT(zc::parse_tuning(bad).empty(), "a damaged first record parsed");
      }
      expect_start(eb, false, "warm from a damaged record");
    }
    for (size_t cut : {size_t{0}, size_t{7}, size_t{40}, sizeof(zc::ModelState)}) {
      Ctx d("cut to %zu bytes", cut);
      if (g_rank == 0) write_bytes(path, std::vector<uint8_t>(good.begin(), good.begin() + std::min(cut, good.size())));
      expect_start(eb, false, "warm from a cut file");
    }
    {
      Ctx d("not a tuning file");
      if (g_rank == 0) {
        std::vector<uint8_t> text(300000);
        for (size_t i = 0; i < text.size(); ++i) text[i] = static_cast<uint8_t>("zcollTUN records\n"[i % 17]);
        write_bytes(path, text);
      }
      expect_start(eb, false, "warm from a foreign file", 1);
      // The foreign bytes are not records: the file now holds this communicator's alone.
      if (g_rank == 0) EXPECT(zc::parse_tuning(file_bytes(path)).size() == 1, "not one record");
    }
  }
  {
    Ctx c("a full file drops its least recently written records");
    constexpr size_t kFull = 64, kForeign = kFull + 6;
    if (g_rank == 0) {
      std::vector<zc::TuningRecord> foreign(kForeign);
      for (size_t i = 0; i < kForeign; ++i) {
        foreign[i].key = key + 1 + i;  // no communicator here has these keys
        foreign[i].state.assign(sizeof(zc::ModelState), static_cast<uint8_t>(i));
      }
      write_bytes(path, zc::format_tuning(foreign));
    }
    expect_start(eb, false, "warm from foreign records", 2);
    if (g_rank == 0) {
      const std::vector<zc::TuningRecord> kept = zc::parse_tuning(file_bytes(path));
      EXPECT(kept.size() == kFull, "%zu records, not %zu", kept.size(), kFull);
      if (kept.size() == kFull)
        EXPECT(kept.front().key == key + 1 + (kForeign + 1 - kFull) && kept.back().key == key,
               "not the newest %zu: first key +%llu, last %s", kFull,
               static_cast<unsigned long long>(kept.front().key - key), kept.back().key == key ? "ours" : "another");
    }
  }
  {
    Ctx c("an unwritable path: zcoll_comm_free succeeds, nothing written");
    const std::string nowhere = "/nonexistent-zcoll-dir/tuning.bin";
    setenv("ZCOLL_TUNING_FILE", nowhere.c_str(), 1);
    expect_start(eb, false, "warm from nothing", 2);
  }
  std::remove(path.c_str());
  unsetenv("ZCOLL_TUNING_FILE");
  unsetenv("ZCOLL_LINK_GBPS");
  unsetenv("ZCOLL_NODE_LINK_GBPS");
  if (decide) setenv("ZCOLL_DECIDE", keep_decide.c_str(), 1);
}

// Allreduces of REL bound `rel` on a 10 Mbit/s link (so the model compresses), with rank 0's
// values ten times as wide as the others': the bound comes from rank 0's share. `everyone`:
// every rank's model expects plain MPI here (else rank 0's alone), so that it defers its range pass.
void check_deferred_range(bool everyone) {
  const double rel = 1e-3;
  const int n = 1 << 18;  // 1 MiB of floats
  auto value = [](int rank, int i) {
    return static_cast<float>((rank == 0 ? 10.0 : 1.0) * std::sin(0.001 * i + rank) + rank);
  };
  std::vector<float> in(n), out(n);
  for (int i = 0; i < n; ++i) in[i] = value(g_rank, i);
  double lo = INFINITY, hi = -INFINITY;  // of every rank's input
  for (int r = 0; r < g_size; ++r)
    for (int i = 0; i < n; ++i) {
      lo = std::min(lo, static_cast<double>(value(r, i)));
      hi = std::max(hi, static_cast<double>(value(r, i)));
    }
  const double want_eb = rel * (hi - lo);
  zcoll_comm comm = model_comm(ZCOLL_EB_REL, rel);
  if (!comm) return;
  // The last call through the agreement ran plain MPI, in every size class: expects_plain()
  // holds. The others say a schedule ran, which the decision does not read: it stays the
  // same on every rank.
  const bool defers = everyone || g_rank == 0;
  zc::ModelState& s = *comm->model;
  for (int k = 0; k < zc::ModelState::kSizeClasses; ++k) {
    s.runs[ZCOLL_COLL_ALLREDUCE][k][0] = 1;
    s.stretch_after[ZCOLL_COLL_ALLREDUCE][k] = defers ? 0 : ZCOLL_ALGO_RING;
  }
  const size_t bytes = n * sizeof(float);
  EXPECT(zc::expects_plain(*comm, ZCOLL_COLL_ALLREDUCE, bytes) == defers, "expects_plain() is %d on rank %d",
         !defers, g_rank);
  EXPECT_RC(zcoll_allreduce(in.data(), out.data(), n, MPI_FLOAT, MPI_SUM, comm), ZCOLL_SUCCESS);
  zcoll_stats st{};
  EXPECT_RC(zcoll_last_stats(comm, &st), ZCOLL_SUCCESS);
  EXPECT(st.compressed == 1, "ran plain MPI on a 10 Mbit/s link (predicted %g s, plain %g s, ratio %g)", st.t_predicted, st.t_predicted_plain, st.ratio_predicted);
  EXPECT(st.compressed != 1 || std::fabs(st.eb_abs - want_eb) <= 1e-12 * want_eb,
         "eb_abs %.9g, want eb x the range of every rank's input, %.9g", st.eb_abs, want_eb);
  double worst = 0;
  for (int i = 0; i < n; ++i) {
    double sum = 0;
    for (int r = 0; r < g_size; ++r) sum += value(r, i);
    worst = std::max(worst, std::fabs(out[i] - sum));
  }
  // The homomorphic SUM's bound (zcoll.h), with float rounding of a sum of about 10 + p.
  const double bound = g_size * want_eb + 4e-6 * (10 + g_size);
  EXPECT(worst <= bound, "error %g over the bound %g", worst, bound);
  EXPECT_RC(zcoll_comm_free(&comm), ZCOLL_SUCCESS);
}

void deferred_range() {
  const char* decide = std::getenv("ZCOLL_DECIDE");
  const std::string keep_decide = decide ? decide : "";
  unsetenv("ZCOLL_DECIDE");  // the model must decide here
  setenv("ZCOLL_LINK_GBPS", "0.01", 1);  // between nodes and, for ranks of one host, within one
  setenv("ZCOLL_NODE_LINK_GBPS", "0.01", 1);
  {
    Ctx c("rank 0 alone defers its range pass, and holds the widest values");
    check_deferred_range(false);
  }
  {
    Ctx c("every rank defers its range pass");
    check_deferred_range(true);
  }
  unsetenv("ZCOLL_LINK_GBPS");
  unsetenv("ZCOLL_NODE_LINK_GBPS");
  if (decide) setenv("ZCOLL_DECIDE", keep_decide.c_str(), 1);
}

const Section kSections[] = {{"plain_rail", plain_rail},
                             {"core_share", core_share},
                             {"tuning_file", tuning_file},
                             {"deferred_range", deferred_range}};

}  // namespace

int main(int argc, char** argv) { return sections_main(argc, argv, kSections); }
