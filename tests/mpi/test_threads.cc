// MPI test: the compressed collectives give the same bytes for any codec thread count
// (issue 17). Every collective runs on a slice of a real field (data/turb_wmag, rank r's
// slice rotated by r) with config.codec.threads = 1, 2 and 3; every output element must be
// bit-identical to the 1-thread run's, and so must zcoll_last_stats' wire_bytes, raw_bytes
// and eb_abs (and the compressed path must have run). Covered: allreduce SUM and MAX on the
// ring (homomorphic fold), on recursive doubling (homomorphic combine) and with DOC
// (decompress-operate-compress), reduce_scatter_block, reduce, bcast (binomial and
// scatter-allgather), allgather (ring and Bruck), allgatherv, alltoall, scatter and gather,
// each for float and double, REL 1e-4 (so the value-range pass runs with threads too).
// Counts are large enough that every thread count splits the chunks of a piece (4 chunks of
// 16384 values; 32 of 2048 in the section shortchunks) and the range pass (65536 values per
// thread) differently.
//
// Section concurrent: several zcoll communicators in use at once, one per thread of the
// rank (MPI_THREAD_MULTIPLE), each thread's calls on 2 codec threads of its own; every
// output must be bit-identical to the same calls made afterwards by the main thread alone.
//
// Section p2p: point-to-point from several threads at once (MPI_THREAD_MULTIPLE), each
// thread on a zcoll communicator of its own, then all of them on one communicator (tags
// apart), compressed, raw and non-float messages; what each thread received must be what
// the same messages bring to the main thread alone, and MPI_COMM_WORLD's error handler must
// be the one it had.
//
//   zcoll_mpi_threads_tests [section ...]
//     sections: reductions movement shortchunks concurrent p2p
//
// ctest runs it on 2 and 3 ranks with OMP_NUM_THREADS=3 and ZCOLL_DECIDE=compress.
#include <zcoll.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "mpi_check.h"

#ifndef ZCOLL_TEST_DATA_DIR
#error "ZCOLL_TEST_DATA_DIR must be defined"
#endif

namespace {

std::vector<float> g_field;

void load_field() {
  const std::string path = std::string(ZCOLL_TEST_DATA_DIR) + "/turb_wmag_91x91x91.f32";
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    std::fseek(f, 0, SEEK_END);
    g_field.resize(static_cast<size_t>(std::ftell(f)) / sizeof(float));
    std::fseek(f, 0, SEEK_SET);
    g_field.resize(std::fread(g_field.data(), sizeof(float), g_field.size(), f));
    std::fclose(f);
  }
  EXPECT(!g_field.empty(), "cannot read %s", path.c_str());
  if (g_field.empty()) g_field.assign(1000, 1.0f);
}

// n values of the field from owner's offset (doubles: the float values plus a smooth term,
// so that they are not float values).
template <class T>
std::vector<T> slice(int owner, size_t n) {
  const size_t len = g_field.size(), start = static_cast<size_t>(owner) * (len / 5 + 977) % len;
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) {
    const size_t k = (start + i) % len;
    double x = g_field[k];
    if (sizeof(T) == 8) x += 0.25 * std::sin(0.0123 * static_cast<double>(k));
    v[i] = static_cast<T>(x);
  }
  return v;
}

template <class T>
MPI_Datatype mpi_type() {
  return sizeof(T) == 4 ? MPI_FLOAT : MPI_DOUBLE;
}

const int kThreads[] = {1, 2, 3};
// codec.chunk_len of every communicator (0: the default). The section "shortchunks" sets
// 2048, so that a piece holds 32 chunks and every thread count splits it differently again.
size_t g_chunk_len = 0;

struct Outcome {
  std::vector<unsigned char> out;  // the output buffer's bytes
  zcoll_stats st{};
  int rc = ZCOLL_SUCCESS;
};

// Every communicator's settings: REL 1e-4 on t codec threads, chunks of g_chunk_len.
zcoll_config config(int t) {
  zcoll_config cfg;
  zcoll_config_init(&cfg);
  cfg.codec.eb_mode = ZCOLL_EB_REL;
  cfg.codec.eb = 1e-4;
  cfg.codec.threads = t;
  cfg.codec.chunk_len = g_chunk_len;
  return cfg;
}

// Runs call(zc) -> rc on a new communicator with codec.threads = t (algorithm and reduction
// as given, for collective coll), and returns the bytes of the output it wrote.
Outcome run(int t, int coll, int algorithm, int reduction, const std::function<int(zcoll_comm)>& call,
            const std::function<std::vector<unsigned char>()>& output) {
  Outcome o;
  zcoll_config cfg = config(t);
  cfg.reduction = reduction;
  if (algorithm != ZCOLL_ALGO_AUTO) cfg.algorithms[coll] = algorithm;
  zcoll_comm zc = nullptr;
  o.rc = zcoll_comm_create(MPI_COMM_WORLD, &cfg, &zc);
  EXPECT_RC(o.rc, ZCOLL_SUCCESS);
  if (o.rc) return o;
  {
    Watchdog w("a collective of test_threads", 60);
    o.rc = call(zc);
  }
  EXPECT_RC(o.rc, ZCOLL_SUCCESS);
  zcoll_last_stats(zc, &o.st);
  zcoll_comm_free(&zc);
  o.out = output();
  return o;
}

// The same collective with 1, 2 and 3 threads: outputs and stats identical to 1 thread's.
void same_for_every_thread_count(const char* what, int coll, int algorithm, int reduction,
                                 const std::function<int(zcoll_comm)>& call,
                                 const std::function<void()>& clear_output,
                                 const std::function<std::vector<unsigned char>()>& output) {
  Ctx c("%s", what);
  Outcome first;
  for (int t : kThreads) {
    Ctx ct("codec.threads %d", t);
    clear_output();
    Outcome o = run(t, coll, algorithm, reduction, call, output);
    EXPECT(o.st.compressed == 1, "the compressed path did not run (compressed = %d)", o.st.compressed);
    unsigned long long wire = o.st.wire_bytes;  // ranks that only receive send nothing
    MPI_Allreduce(MPI_IN_PLACE, &wire, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    EXPECT(wire > 0, "no wire bytes on any rank");
    if (t == kThreads[0]) {
      first = std::move(o);
      continue;
    }
    EXPECT(o.out.size() == first.out.size(), "output of %zu bytes, 1 thread: %zu", o.out.size(), first.out.size());
    if (o.out.size() == first.out.size()) {
      size_t diff = 0, at = 0;
      for (size_t i = 0; i < o.out.size(); ++i)
        if (o.out[i] != first.out[i] && diff++ == 0) at = i;
      EXPECT(diff == 0, "%zu output bytes differ from the 1-thread run, the first at byte %zu", diff, at);
    }
    EXPECT(o.st.wire_bytes == first.st.wire_bytes, "wire_bytes %zu, 1 thread: %zu", o.st.wire_bytes,
           first.st.wire_bytes);
    EXPECT(o.st.raw_bytes == first.st.raw_bytes, "raw_bytes %zu, 1 thread: %zu", o.st.raw_bytes, first.st.raw_bytes);
    EXPECT(std::memcmp(&o.st.eb_abs, &first.st.eb_abs, sizeof(double)) == 0, "eb_abs %.17g, 1 thread: %.17g",
           o.st.eb_abs, first.st.eb_abs);
    EXPECT(o.st.algorithm == first.st.algorithm, "algorithm %d, 1 thread: %d", o.st.algorithm, first.st.algorithm);
  }
}

template <class T>
std::vector<unsigned char> bytes_of(const std::vector<T>& v) {
  std::vector<unsigned char> b(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

template <class T>
void fill_sentinel(std::vector<T>& v) {
  std::memset(static_cast<void*>(v.data()), 0xA5, v.size() * sizeof(T));
}

// 300001 values per rank: 18.3 chunks, so 5 pieces of up to 4 chunks, the last one short;
// the range pass splits it 5 ways.
constexpr size_t kCount = 300001;

template <class T>
void reductions() {
  Ctx c("%s", sizeof(T) == 4 ? "f32" : "f64");
  const int p = g_size;
  const MPI_Datatype mt = mpi_type<T>();
  const size_t n = kCount - kCount % static_cast<size_t>(p);  // reduce_scatter_block: p blocks
  const std::vector<T> in = slice<T>(g_rank, n);
  std::vector<T> out(n);
  auto clear = [&] { fill_sentinel(out); };
  auto result = [&] { return bytes_of(out); };
  const int cnt = static_cast<int>(n);
  struct Case {
    const char* name;
    MPI_Op op;
    int algorithm, reduction;
  } cases[] = {{"allreduce SUM ring homomorphic", MPI_SUM, ZCOLL_ALGO_AUTO, ZCOLL_REDUCTION_HOMOMORPHIC},
               {"allreduce MAX ring homomorphic", MPI_MAX, ZCOLL_ALGO_AUTO, ZCOLL_REDUCTION_HOMOMORPHIC},
               {"allreduce SUM ring DOC", MPI_SUM, ZCOLL_ALGO_AUTO, ZCOLL_REDUCTION_DOC},
               {"allreduce MAX ring DOC", MPI_MAX, ZCOLL_ALGO_AUTO, ZCOLL_REDUCTION_DOC},
               {"allreduce SUM recursive doubling", MPI_SUM, ZCOLL_ALGO_RECURSIVE_DOUBLING, ZCOLL_REDUCTION_AUTO},
               {"allreduce MAX recursive doubling", MPI_MAX, ZCOLL_ALGO_RECURSIVE_DOUBLING, ZCOLL_REDUCTION_AUTO},
               {"allreduce SUM cprp2p", MPI_SUM, ZCOLL_ALGO_CPRP2P, ZCOLL_REDUCTION_AUTO}};
  for (const Case& k : cases)
    same_for_every_thread_count(
        k.name, ZCOLL_COLL_ALLREDUCE, k.algorithm, k.reduction,
        [&](zcoll_comm zc) { return zcoll_allreduce(in.data(), out.data(), cnt, mt, k.op, zc); }, clear, result);
  const int block = cnt / p;
  for (int red : {ZCOLL_REDUCTION_HOMOMORPHIC, ZCOLL_REDUCTION_DOC}) {
    const bool h = red == ZCOLL_REDUCTION_HOMOMORPHIC;
    same_for_every_thread_count(
        h ? "reduce_scatter_block SUM homomorphic" : "reduce_scatter_block SUM DOC", ZCOLL_COLL_REDUCE_SCATTER,
        ZCOLL_ALGO_AUTO, red,
        [&](zcoll_comm zc) { return zcoll_reduce_scatter_block(in.data(), out.data(), block, mt, MPI_SUM, zc); },
        clear, [&] { return bytes_of(std::vector<T>(out.begin(), out.begin() + block)); });
    const int root = p - 1;
    same_for_every_thread_count(
        h ? "reduce SUM homomorphic (root p-1)" : "reduce SUM DOC (root p-1)", ZCOLL_COLL_REDUCE, ZCOLL_ALGO_AUTO, red,
        [&](zcoll_comm zc) { return zcoll_reduce(in.data(), out.data(), cnt, mt, MPI_SUM, root, zc); }, clear,
        [&] { return g_rank == root ? bytes_of(out) : std::vector<unsigned char>(); });
  }
}

template <class T>
void movement() {
  Ctx c("%s", sizeof(T) == 4 ? "f32" : "f64");
  const int p = g_size;
  const MPI_Datatype mt = mpi_type<T>();
  const size_t n = kCount;
  const int cnt = static_cast<int>(n);
  std::vector<T> out(n * p);
  auto clear = [&] { fill_sentinel(out); };
  auto result = [&] { return bytes_of(out); };

  // bcast from the last rank: binomial and scatter-allgather.
  const int root = p - 1;
  const std::vector<T> root_data = slice<T>(root, n);
  for (int algo : {ZCOLL_ALGO_BINOMIAL, ZCOLL_ALGO_SCATTER_ALLGATHER}) {
    std::vector<T> buf(n);
    same_for_every_thread_count(
        algo == ZCOLL_ALGO_BINOMIAL ? "bcast binomial" : "bcast scatter_allgather", ZCOLL_COLL_BCAST, algo,
        ZCOLL_REDUCTION_AUTO, [&](zcoll_comm zc) { return zcoll_bcast(buf.data(), cnt, mt, root, zc); },
        [&] {
          if (g_rank == root) buf = root_data;
          else fill_sentinel(buf);
        },
        [&] { return bytes_of(buf); });
  }

  // allgather: ring and Bruck.
  const std::vector<T> mine = slice<T>(g_rank, n);
  for (int algo : {ZCOLL_ALGO_RING, ZCOLL_ALGO_BRUCK})
    same_for_every_thread_count(
        algo == ZCOLL_ALGO_RING ? "allgather ring" : "allgather bruck", ZCOLL_COLL_ALLGATHER, algo,
        ZCOLL_REDUCTION_AUTO,
        [&](zcoll_comm zc) { return zcoll_allgather(mine.data(), cnt, mt, out.data(), cnt, mt, zc); }, clear,
        result);

  // allgatherv: rank q sends n - 1000 q values, placed with a gap of 7 between blocks.
  {
    std::vector<int> counts(p), displs(p);
    int pos = 0;
    for (int q = 0; q < p; ++q) {
      counts[q] = cnt - 1000 * q;
      displs[q] = pos;
      pos += counts[q] + 7;
    }
    std::vector<T> outv(static_cast<size_t>(pos));
    same_for_every_thread_count(
        "allgatherv", ZCOLL_COLL_ALLGATHER, ZCOLL_ALGO_AUTO, ZCOLL_REDUCTION_AUTO,
        [&](zcoll_comm zc) {
          return zcoll_allgatherv(mine.data(), counts[g_rank], mt, outv.data(), counts.data(), displs.data(), mt, zc);
        },
        [&] { fill_sentinel(outv); }, [&] { return bytes_of(outv); });
  }

  // alltoall: every rank sends p blocks of n values.
  {
    const std::vector<T> all = slice<T>(g_rank + 17, n * p);
    same_for_every_thread_count(
        "alltoall", ZCOLL_COLL_ALLTOALL, ZCOLL_ALGO_AUTO, ZCOLL_REDUCTION_AUTO,
        [&](zcoll_comm zc) { return zcoll_alltoall(all.data(), cnt, mt, out.data(), cnt, mt, zc); }, clear, result);
  }

  // scatter from the last rank, gather to rank 0.
  {
    const std::vector<T> all = slice<T>(root + 31, n * p);
    std::vector<T> part(n);
    same_for_every_thread_count(
        "scatter (root p-1)", ZCOLL_COLL_SCATTER, ZCOLL_ALGO_AUTO, ZCOLL_REDUCTION_AUTO,
        [&](zcoll_comm zc) { return zcoll_scatter(all.data(), cnt, mt, part.data(), cnt, mt, root, zc); },
        [&] { fill_sentinel(part); }, [&] { return bytes_of(part); });
    same_for_every_thread_count(
        "gather (root 0)", ZCOLL_COLL_GATHER, ZCOLL_ALGO_AUTO, ZCOLL_REDUCTION_AUTO,
        [&](zcoll_comm zc) { return zcoll_gather(mine.data(), cnt, mt, out.data(), cnt, mt, 0, zc); }, clear,
        [&] { return g_rank == 0 ? bytes_of(out) : std::vector<unsigned char>(); });
  }
}

void section_reductions() {
  reductions<float>();
  reductions<double>();
}

void section_movement() {
  movement<float>();
  movement<double>();
}

// Chunks of 2048 values: pieces of 32 chunks (65536 values), so up to 32 threads may share one.
void section_shortchunks() {
  g_chunk_len = 2048;
  Ctx c("chunk_len 2048");
  reductions<float>();
  movement<double>();
  g_chunk_len = 0;
}

// One thread's calls on its own communicator: what they returned and wrote.
struct Job {
  std::vector<int> rcs;
  std::vector<std::vector<unsigned char>> outs;
  int compressed = 0;  // calls that took the compressed path
};

// Job j's calls, on a zcoll communicator made from comm. Checks nothing itself (the checks'
// counters belong to the main thread): the caller compares. The jobs differ in collectives
// and data, so that the threads' calls interleave unlike ones.
Job run_job(int j, MPI_Comm comm) {
  Job r;
  const zcoll_config cfg = config(2);
  zcoll_comm zc = nullptr;
  r.rcs.push_back(zcoll_comm_create(comm, &cfg, &zc));
  if (r.rcs.back()) return r;
  const int p = g_size, root = p - 1;
  const size_t n = kCount - kCount % static_cast<size_t>(p);
  const int cnt = static_cast<int>(n);
  auto done = [&](int rc, std::vector<unsigned char>&& out) {
    zcoll_stats st;
    zcoll_last_stats(zc, &st);
    r.rcs.push_back(rc);
    r.outs.push_back(std::move(out));
    r.compressed += st.compressed == 1;
  };
  for (int rep = 0; rep < 3; ++rep) {
    const int seed = 11 * j + rep;
    if (j % 2 == 0) {
      const std::vector<float> in = slice<float>(g_rank + seed, n);
      std::vector<float> sum(n);
      const int rc = zcoll_allreduce(in.data(), sum.data(), cnt, MPI_FLOAT, MPI_SUM, zc);
      done(rc, bytes_of(sum));
      const std::vector<double> mine = slice<double>(g_rank + seed, n);
      std::vector<double> all(n * p);
      const int rc2 = zcoll_allgather(mine.data(), cnt, MPI_DOUBLE, all.data(), cnt, MPI_DOUBLE, zc);
      done(rc2, bytes_of(all));
    } else {
      std::vector<double> buf = slice<double>(root + seed, n);
      if (g_rank != root) fill_sentinel(buf);
      const int rc = zcoll_bcast(buf.data(), cnt, MPI_DOUBLE, root, zc);
      done(rc, bytes_of(buf));
      const std::vector<float> in = slice<float>(g_rank + seed, n);
      std::vector<float> part(n / p);
      const int rc2 = zcoll_reduce_scatter_block(in.data(), part.data(), cnt / p, MPI_FLOAT, MPI_MAX, zc);
      done(rc2, bytes_of(part));
    }
  }
  zcoll_comm_free(&zc);
  return r;
}

void section_concurrent() {
  if (!thread_multiple("concurrent")) return;
  constexpr int kJobs = 3;
  MPI_Comm comms[kJobs];
  for (MPI_Comm& c : comms) MPI_Comm_dup(MPI_COMM_WORLD, &c);
  std::vector<Job> got(kJobs);
  in_threads(kJobs, "the concurrent section's threads", 240, [&](int j) { got[j] = run_job(j, comms[j]); });
  for (int j = 0; j < kJobs; ++j) {
    Ctx c("job %d", j);
    Job alone;
    {
      Watchdog w("a job of the concurrent section, alone", 120);
      alone = run_job(j, comms[j]);
    }
    EXPECT(got[j].rcs.size() == alone.rcs.size(), "%zu calls returned in its thread, %zu alone", got[j].rcs.size(),
           alone.rcs.size());
    for (size_t i = 0; i < got[j].rcs.size(); ++i) EXPECT_RC(got[j].rcs[i], ZCOLL_SUCCESS);
    for (size_t i = 0; i < alone.rcs.size(); ++i) EXPECT_RC(alone.rcs[i], ZCOLL_SUCCESS);
    EXPECT(got[j].compressed == 6, "%d of 6 calls compressed in its thread", got[j].compressed);
    EXPECT(got[j].outs.size() == alone.outs.size(), "%zu outputs, %zu alone", got[j].outs.size(), alone.outs.size());
    for (size_t i = 0; i < got[j].outs.size() && i < alone.outs.size(); ++i)
      EXPECT(got[j].outs[i] == alone.outs[i], "call %zu: the output differs from the same call made alone", i);
  }
  for (MPI_Comm& c : comms) MPI_Comm_free(&c);
}

// One thread's messages: what its receives brought (bytes and element counts) and returned.
struct P2pJob {
  std::vector<int> rcs;
  std::vector<std::vector<unsigned char>> outs;
  std::vector<int> counts;
};

// Job j's exchanges around the ring of ranks on zc, with tags from tag_base: each round
// sends a compressed float message, a compressed double one, a float one below min_bytes
// (raw) and an int one (MPI's own) to the right, receives the same from the left, waits for
// the sends all at once and tests the receives until they complete.
P2pJob run_p2p_job(int j, zcoll_comm zc, int tag_base) {
  P2pJob r;
  const int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
  constexpr int kMessages = 4;
  for (int round = 0; round < 4; ++round) {
    const int seed = 7 * j + round, tag = tag_base + kMessages * round;
    const std::vector<float> f_out = slice<float>(g_rank + seed, 40000 + 1000 * j);
    const std::vector<double> d_out = slice<double>(g_rank + seed + 1, 30000 + 1000 * j);
    const std::vector<float> small_out = slice<float>(g_rank + seed + 2, 100);
    std::vector<int> i_out(500);
    for (size_t i = 0; i < i_out.size(); ++i) i_out[i] = static_cast<int>(i) * (g_rank + 1) + seed;
    std::vector<float> f_in(f_out.size() + 10), small_in(200);
    std::vector<double> d_in(d_out.size());
    std::vector<int> i_in(i_out.size());
    fill_sentinel(f_in);
    fill_sentinel(small_in);
    fill_sentinel(d_in);
    zcoll_request recv[kMessages], send[kMessages];
    r.rcs.push_back(zcoll_irecv(f_in.data(), static_cast<int>(f_in.size()), MPI_FLOAT, left, tag, zc, &recv[0]));
    r.rcs.push_back(zcoll_irecv(d_in.data(), static_cast<int>(d_in.size()), MPI_DOUBLE, left, tag + 1, zc, &recv[1]));
    r.rcs.push_back(zcoll_irecv(small_in.data(), 200, MPI_FLOAT, left, tag + 2, zc, &recv[2]));
    r.rcs.push_back(zcoll_irecv(i_in.data(), static_cast<int>(i_in.size()), MPI_INT, left, tag + 3, zc, &recv[3]));
    r.rcs.push_back(zcoll_isend(f_out.data(), static_cast<int>(f_out.size()), MPI_FLOAT, right, tag, zc, &send[0]));
    r.rcs.push_back(
        zcoll_isend(d_out.data(), static_cast<int>(d_out.size()), MPI_DOUBLE, right, tag + 1, zc, &send[1]));
    r.rcs.push_back(zcoll_isend(small_out.data(), 100, MPI_FLOAT, right, tag + 2, zc, &send[2]));
    r.rcs.push_back(zcoll_isend(i_out.data(), static_cast<int>(i_out.size()), MPI_INT, right, tag + 3, zc, &send[3]));
    zcoll_stats st;
    r.rcs.push_back(zcoll_last_stats(zc, &st));  // read while other threads' sends write it
    r.rcs.push_back(zcoll_waitall(kMessages, send, MPI_STATUSES_IGNORE));
    MPI_Status status[kMessages];
    const MPI_Datatype types[kMessages] = {MPI_FLOAT, MPI_DOUBLE, MPI_FLOAT, MPI_INT};
    for (int m = 0; m < kMessages; ++m) {
      int flag = 0, rc = ZCOLL_SUCCESS;
      while (!flag && !rc) {
        rc = zcoll_test(&recv[m], &flag, &status[m]);
        if (!flag) std::this_thread::yield();
      }
      r.rcs.push_back(rc);
      int n = -1;
      MPI_Get_count(&status[m], types[m], &n);
      r.counts.push_back(n);
    }
    r.outs.push_back(bytes_of(f_in));
    r.outs.push_back(bytes_of(d_in));
    r.outs.push_back(bytes_of(small_in));
    r.outs.push_back(bytes_of(i_in));
  }
  return r;
}

// Job j in a thread against the same job by the main thread alone.
void expect_same_p2p(const P2pJob& threaded, const P2pJob& alone) {
  for (int rc : threaded.rcs) EXPECT_RC(rc, ZCOLL_SUCCESS);
  for (int rc : alone.rcs) EXPECT_RC(rc, ZCOLL_SUCCESS);
  EXPECT(threaded.counts == alone.counts, "the received element counts differ from those of the same messages alone");
  EXPECT(threaded.outs.size() == alone.outs.size(), "%zu receives, %zu alone", threaded.outs.size(), alone.outs.size());
  for (size_t i = 0; i < threaded.outs.size() && i < alone.outs.size(); ++i)
    EXPECT(threaded.outs[i] == alone.outs[i], "receive %zu: what arrived differs from the same message alone", i);
}

void section_p2p() {
  if (!thread_multiple("p2p")) return;
  constexpr int kJobs = 3;
  MPI_Errhandler before = MPI_ERRHANDLER_NULL, after = MPI_ERRHANDLER_NULL;
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &before);
  const zcoll_config cfg = config(2);
  {
    Ctx c("a communicator per thread");
    MPI_Comm comms[kJobs];
    for (MPI_Comm& comm : comms) MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    std::vector<P2pJob> got(kJobs);
    in_threads(kJobs, "the p2p section's threads, a communicator each", 240, [&](int j) {
      zcoll_comm zc = nullptr;
      got[j].rcs.push_back(zcoll_comm_create(comms[j], &cfg, &zc));
      if (got[j].rcs.back()) return;
      P2pJob r = run_p2p_job(j, zc, 0);
      got[j].rcs.insert(got[j].rcs.end(), r.rcs.begin(), r.rcs.end());
      got[j].outs = std::move(r.outs);
      got[j].counts = std::move(r.counts);
      got[j].rcs.push_back(zcoll_comm_free(&zc));
    });
    for (int j = 0; j < kJobs; ++j) {
      Ctx cj("job %d", j);
      zcoll_comm zc = nullptr;
      EXPECT_RC(zcoll_comm_create(comms[j], &cfg, &zc), ZCOLL_SUCCESS);
      Watchdog w("a job of the p2p section, alone", 120);
      expect_same_p2p(got[j], run_p2p_job(j, zc, 0));
      zcoll_comm_free(&zc);
    }
    for (MPI_Comm& comm : comms) MPI_Comm_free(&comm);
  }
  {
    Ctx c("one communicator for every thread");
    zcoll_comm zc = nullptr;
    EXPECT_RC(zcoll_comm_create(MPI_COMM_WORLD, &cfg, &zc), ZCOLL_SUCCESS);
    std::vector<P2pJob> got(kJobs);
    in_threads(kJobs, "the p2p section's threads, one communicator", 240,
               [&](int j) { got[j] = run_p2p_job(j, zc, 1000 * j); });
    for (int j = 0; j < kJobs; ++j) {
      Ctx cj("job %d", j);
      Watchdog w("a job of the p2p section, alone", 120);
      expect_same_p2p(got[j], run_p2p_job(j, zc, 1000 * j));
    }
    zcoll_comm_free(&zc);
  }
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &after);
  EXPECT(before == after, "MPI_COMM_WORLD's error handler changed while the threads waited");
  for (MPI_Errhandler* h : {&before, &after})
    if (*h != MPI_ERRHANDLER_NULL) MPI_Errhandler_free(h);
}

const Section kSections[] = {{"reductions", section_reductions},
                             {"movement", section_movement},
                             {"shortchunks", section_shortchunks},
                             {"concurrent", section_concurrent},
                             {"p2p", section_p2p}};

}  // namespace

int main(int argc, char** argv) {
  // zcoll needs no more than MPI_THREAD_FUNNELED where one thread calls it, and only this
  // thread calls MPI. The sections concurrent and p2p ask for MPI_THREAD_MULTIPLE: their
  // threads call zcoll at once.
  bool multiple = argc == 1;  // no section named: all of them
  for (int i = 1; i < argc; ++i)
    multiple = multiple || std::strcmp(argv[i], "concurrent") == 0 || std::strcmp(argv[i], "p2p") == 0;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  load_field();
  const int status = run_sections(argc, argv, kSections);
  MPI_Finalize();
  return status;
}
