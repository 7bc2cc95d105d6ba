// MPI tests of ranks that disagree (issue 21): zcoll must turn settings or call
// arguments that differ across ranks into an error on every rank, never a hang, a crash
// or a silently wrong result.
//
//   zcoll_mpi_agree_tests [section ...]      (no section: all of them)
//
// settings  zcoll_comm_create with one setting different on rank 0 or on the last rank:
//           ZCOLL_ERR_MISMATCH everywhere, a NULL handle, and zcoll_error_detail() naming
//           the setting; codec.threads may differ; an invalid setting on one rank is an
//           error everywhere (ZCOLL_ERR_ARG on that rank); so is
//           ZCOLL_ALLREDUCE_ALGORITHM set on one rank only.
// args_reduce, args_move  one rank calls a reduction (or, args_move, one of the other
//           collectives) with another count, counts array, root, op or datatype (the same
//           byte count) than the others, every message above min_bytes, ABS and REL:
//           ZCOLL_ERR_MISMATCH everywhere; then the same communicator runs the correct
//           call, whose result is checked.
// codes_corrupt, codes_nomem  ZCOLL_DEBUG_FAIL=<rank>:<code> makes one rank's first codec
//           operation fail with <code> (5, 8): every rank returns exactly <code>; a
//           communicator made without the hook then succeeds.
// codes_arena  ZCOLL_DEBUG_FAIL=<rank>:arena: one rank's work buffer cannot grow (out of
//           memory before any data moves): ZCOLL_ERR_NO_MEMORY everywhere, no hang.
// codes_alloc  this program's operator new throws std::bad_alloc at the k-th allocation of
//           one rank within one call, for every k the call makes, in a communicator's first
//           call (the schedule's buffers are reserved) and in a later one of the same size
//           (steady state): ZCOLL_ERR_NO_MEMORY on every rank, no hang, and the same
//           communicator works afterwards.
// codes_alloc_nodes  the same for the node-aware collectives, compressed and plain, on nodes
//           of two ranks (ZCOLL_NODE_KEY; an even number of ranks).
// create_alloc  the same for zcoll_comm_create: the same code on every rank, no hang.
// The cases are one table (kCases: collective, algorithms, ways to make it disagree).
// Every zcoll call runs under a Watchdog: a hang ends the program with a message.
#include <zcoll.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <numeric>
#include <string>
#include <vector>

#include "failing_new.h"
#include "mpi_check.h"

static long g_failed_calls[2];  // codes_alloc's calls with no allocation failed, with one

// Implemented with issue 21; weak so that this program links (and fails its checks)
// against a library that does not have it yet.
extern "C" const char* zcoll_error_detail(void) __attribute__((weak));

namespace {

constexpr unsigned kCallSeconds = 10;  // a correct call takes milliseconds even oversubscribed
constexpr int kN = 4096;               // elements per rank and block: 16 KiB of floats
constexpr size_t kMinBytes = 1024;     // so every message in this file is compressed
constexpr int kExtra = 512;            // what a disagreeing rank adds to a count

enum Coll { kAllreduce, kReduce, kReduceScatterBlock, kReduceScatter, kAllgather, kAllgatherv, kAlltoall, kBcast,
            kScatter, kGather };
const char* const kCollName[] = {"allreduce", "reduce",   "reduce_scatter_block", "reduce_scatter", "allgather",
                                 "allgatherv", "alltoall", "bcast",                "scatter",        "gather"};
bool rooted(Coll c) { return c == kReduce || c == kBcast || c == kScatter || c == kGather; }

// How one rank's call differs from the others'.
enum How { kCount, kCounts, kRoot, kOp, kType, kInPlace };
const char* const kHowName[] = {"count", "counts array", "root", "op", "MPI_DOUBLE for MPI_FLOAT", "MPI_IN_PLACE"};

struct Case {
  Coll coll;
  std::vector<int> algos;  // cfg.algorithm values to run it under
  std::vector<How> hows;
};
const std::vector<Case> kCases = {
    {kAllreduce, {ZCOLL_ALGO_AUTO, ZCOLL_ALGO_RING, ZCOLL_ALGO_RECURSIVE_DOUBLING, ZCOLL_ALGO_CPRP2P},
     {kCount, kOp, kType}},
    {kReduce, {ZCOLL_ALGO_AUTO, ZCOLL_ALGO_CPRP2P}, {kCount, kRoot, kOp, kType}},
    {kReduceScatterBlock, {ZCOLL_ALGO_AUTO, ZCOLL_ALGO_CPRP2P}, {kCount}},
    {kReduceScatter, {ZCOLL_ALGO_AUTO, ZCOLL_ALGO_CPRP2P}, {kCounts}},
    {kAllgather, {ZCOLL_ALGO_AUTO, ZCOLL_ALGO_RING, ZCOLL_ALGO_BRUCK, ZCOLL_ALGO_CPRP2P}, {kCount}},
    {kAllgatherv, {ZCOLL_ALGO_AUTO, ZCOLL_ALGO_RING, ZCOLL_ALGO_BRUCK, ZCOLL_ALGO_CPRP2P}, {kCounts}},
    {kAlltoall, {ZCOLL_ALGO_AUTO, ZCOLL_ALGO_PAIRWISE, ZCOLL_ALGO_CPRP2P}, {kCount, kInPlace}},
    {kBcast, {ZCOLL_ALGO_AUTO, ZCOLL_ALGO_BINOMIAL, ZCOLL_ALGO_SCATTER_ALLGATHER, ZCOLL_ALGO_CPRP2P},
     {kCount, kRoot, kType}},
    {kScatter, {ZCOLL_ALGO_AUTO, ZCOLL_ALGO_BINOMIAL, ZCOLL_ALGO_CPRP2P}, {kCount, kRoot}},
    {kGather, {ZCOLL_ALGO_AUTO, ZCOLL_ALGO_BINOMIAL, ZCOLL_ALGO_CPRP2P}, {kCount, kRoot}},
};

const char* detail() { return zcoll_error_detail ? zcoll_error_detail() : nullptr; }

// ------------------------------------------------------------------ communicators

zcoll_config base_config(int algo = ZCOLL_ALGO_AUTO, int mode = ZCOLL_EB_ABS) {
  zcoll_config c;
  zcoll_config_init(&c);
  c.codec.eb_mode = mode;
  c.codec.eb = mode == ZCOLL_EB_ABS ? 1e-2 : 1e-4;
  c.codec.chunk_len = 1024;
  c.min_bytes = kMinBytes;
  c.algorithm = algo;
  return c;
}

int create(const zcoll_config& c, zcoll_comm* zc, const char* what) {
  Watchdog w(what, kCallSeconds);
  *zc = nullptr;
  return zcoll_comm_create(MPI_COMM_WORLD, &c, zc);
}

zcoll_comm make(const zcoll_config& c) {
  zcoll_comm zc;
  EXPECT_RC(create(c, &zc, "zcoll_comm_create"), ZCOLL_SUCCESS);
  return zc;
}

void release(zcoll_comm& zc) {
  if (!zc) return;
  Watchdog w("zcoll_comm_free", kCallSeconds);
  EXPECT_RC(zcoll_comm_free(&zc), ZCOLL_SUCCESS);
}

// ------------------------------------------------------------------ settings

// One rank's config differs from the others' in `name`, set by `change`.
struct Setting {
  const char* name;
  void (*change)(zcoll_config&);
};
const Setting kSettings[] = {
    {"codec", [](zcoll_config& c) { c.codec.codec = ZCOLL_CODEC_SZX; }},
    {"eb_mode", [](zcoll_config& c) { c.codec.eb_mode = ZCOLL_EB_REL; }},
    {"eb", [](zcoll_config& c) { c.codec.eb = 2e-2; }},
    {"chunk_len", [](zcoll_config& c) { c.codec.chunk_len = 2048; }},
    {"min_bytes", [](zcoll_config& c) { c.min_bytes = 2 * kMinBytes; }},
    {"algorithm", [](zcoll_config& c) { c.algorithm = ZCOLL_ALGO_CPRP2P; }},
    {"reduction", [](zcoll_config& c) { c.reduction = ZCOLL_REDUCTION_DOC; }},
    {"bound_target", [](zcoll_config& c) { c.bound_target = ZCOLL_BOUND_RESULT; }},
};

// zcoll_comm_create where rank `odd` has config `mine`: `want` on rank odd and, if it is
// ZCOLL_ERR_MISMATCH, on every rank (else some error); never a handle; with
// ZCOLL_ERR_MISMATCH a detail that names one of `names` ('|'-separated).
void expect_create_fails(const zcoll_config& mine, int odd, int want, const char* names) {
  zcoll_comm zc;
  const int rc = create(mine, &zc, ctx().c_str());
  if (g_rank == odd || want == ZCOLL_ERR_MISMATCH)
    EXPECT_RC(rc, want);
  else
    EXPECT(rc != ZCOLL_SUCCESS, "returned %d (%s): every rank must fail", rc, zcoll_strerror(rc));
  EXPECT(zc == nullptr, "a failed zcoll_comm_create left a handle");
  release(zc);
  if (rc != ZCOLL_ERR_MISMATCH) return;
  const char* d = detail();
  EXPECT(d != nullptr, "zcoll_error_detail() is not there (issue 21)");
  if (!d) return;
  bool named = false;
  for (std::string rest = names; !rest.empty() && !named;) {
    const size_t bar = rest.find('|');
    named = std::strstr(d, rest.substr(0, bar).c_str()) != nullptr;
    rest = bar == std::string::npos ? "" : rest.substr(bar + 1);
  }
  EXPECT(named, "zcoll_error_detail() = \"%s\" names none of %s", d, names);
}

void section_settings() {
  const int p = g_size;
  for (int odd : {0, p - 1}) {
    const bool me = g_rank == odd;
    for (const Setting& s : kSettings) {
      Ctx cx("%s differs on rank %d", s.name, odd);
      zcoll_config c = base_config();
      if (me) s.change(c);
      expect_create_fails(c, odd, ZCOLL_ERR_MISMATCH, s.name);
    }
    for (int i = 0; i < ZCOLL_NUM_COLLECTIVES; ++i) {
      static const char* const coll[] = {"allgather",      "bcast",     "scatter", "gather",
                                         "alltoall", "reduce_scatter", "allreduce", "reduce"};
      Ctx cx("algorithms[%d] (%s) differs on rank %d", i, coll[i], odd);
      zcoll_config c = base_config();
      if (me) c.algorithms[i] = ZCOLL_ALGO_MPI;
      expect_create_fails(c, odd, ZCOLL_ERR_MISMATCH, (std::string("algorithms|") + coll[i]).c_str());
    }
    {
      Ctx cx("ZCOLL_ALLREDUCE_ALGORITHM=ring on rank %d only", odd);
      if (me) setenv("ZCOLL_ALLREDUCE_ALGORITHM", "ring", 1);
      expect_create_fails(base_config(), odd, ZCOLL_ERR_MISMATCH, "algorithm|allreduce");
      if (me) unsetenv("ZCOLL_ALLREDUCE_ALGORITHM");
    }
    // Invalid on one rank: the others cannot know why, but must not wait for it.
    for (int k = 0; k < 3; ++k) {
      static const char* const what[] = {"eb -1", "chunk_len 33", "algorithm 99"};
      Ctx cx("%s on rank %d only", what[k], odd);
      zcoll_config c = base_config();
      if (me && k == 0) c.codec.eb = -1;
      if (me && k == 1) c.codec.chunk_len = 33;
      if (me && k == 2) c.algorithm = 99;
      expect_create_fails(c, odd, ZCOLL_ERR_ARG, "");
    }
    {
      Ctx cx("codec.threads differs on rank %d (allowed)", odd);
      zcoll_config c = base_config();
      if (me) c.codec.threads = 2;
      zcoll_comm zc = make(c);
      release(zc);
    }
  }
  Ctx cx("agreeing ranks after all of the above");
  zcoll_comm zc = make(base_config());
  release(zc);
}

// ------------------------------------------------------------------ calls

// One rank's view of a call. count: elements per rank or block (bcast: the buffer);
// counts: allgatherv's and reduce_scatter's arrays.
struct Shape {
  int count = kN;
  std::vector<int> counts;
  int root = 0;
  MPI_Op op = MPI_SUM;
  MPI_Datatype type = MPI_FLOAT;
  bool in_place = false;  // alltoall: the send blocks in the receive buffer, MPI_IN_PLACE
};

Shape agreed(Coll c) {
  Shape s;
  for (int i = 0; i < g_size; ++i) s.counts.push_back(kN - 300 * (i % 3));
  if (rooted(c)) s.root = g_size - 1;
  return s;
}

// This rank's view when rank `odd` disagrees in `how`.
Shape disagreeing(Coll c, How how, int odd) {
  Shape s = agreed(c);
  if (g_rank != odd) return s;
  switch (how) {
    case kCount: s.count += kExtra; break;
    case kCounts: s.counts[static_cast<size_t>((odd + 1) % g_size)] += kExtra; break;  // not its own entry
    case kRoot: s.root = (s.root + 1) % g_size; break;
    case kOp: s.op = MPI_MAX; break;
    case kType: s.type = MPI_DOUBLE, s.count /= 2; break;  // the same bytes
    case kInPlace: s.in_place = true; break;
  }
  return s;
}

// What rank r sends as element i (of its whole send buffer).
double value(int r, size_t i) { return 100.0 * std::sin(0.001 * static_cast<double>(i) + 0.7 * r) + r; }

struct Buffers {
  std::vector<double> send, recv;  // room for any shape above, as floats or doubles
  Buffers() : send(static_cast<size_t>(g_size) * (kN + kExtra)), recv(send.size()) {}
};

// The sum of the first k entries of v (all of them by default).
int total(const std::vector<int>& v, size_t k = SIZE_MAX) {
  return std::accumulate(v.begin(), v.begin() + static_cast<long>(std::min(k, v.size())), 0);
}

// Calls the collective as this rank sees it.
int call(Coll c, const Shape& s, Buffers& b, zcoll_comm zc) {
  const int p = g_size, r = g_rank;
  size_t sendlen = static_cast<size_t>(s.count);
  if (c == kAlltoall || c == kReduceScatterBlock || (c == kScatter && r == s.root)) sendlen *= static_cast<size_t>(p);
  if (c == kReduceScatter) sendlen = static_cast<size_t>(total(s.counts));
  if (c == kAllgatherv) sendlen = static_cast<size_t>(s.counts[static_cast<size_t>(r)]);
  for (size_t i = 0; i < sendlen; ++i) {
    if (s.type == MPI_FLOAT)
      reinterpret_cast<float*>(b.send.data())[i] = static_cast<float>(value(r, i));
    else
      b.send[i] = value(r, i);
  }
  std::fill(b.recv.begin(), b.recv.end(), NAN);  // so that a result left from an earlier call cannot pass
  std::vector<int> displs(static_cast<size_t>(p));
  for (size_t i = 1; i < displs.size(); ++i) displs[i] = displs[i - 1] + s.counts[i - 1];
  void *in = b.send.data(), *out = b.recv.data();
  const std::string what = ctx();
  Watchdog w(what.c_str(), kCallSeconds);
  struct InCall {
    InCall() { g_in_call = true; }
    ~InCall() { g_in_call = false; }
  } in_call;
  switch (c) {
    case kAllreduce: return zcoll_allreduce(in, out, s.count, s.type, s.op, zc);
    case kReduce: return zcoll_reduce(in, out, s.count, s.type, s.op, s.root, zc);
    case kReduceScatterBlock: return zcoll_reduce_scatter_block(in, out, s.count, s.type, s.op, zc);
    case kReduceScatter: return zcoll_reduce_scatter(in, out, s.counts.data(), s.type, s.op, zc);
    case kAllgather: return zcoll_allgather(in, s.count, s.type, out, s.count, s.type, zc);
    case kAllgatherv:
      return zcoll_allgatherv(in, s.counts[r], s.type, out, s.counts.data(), displs.data(), s.type, zc);
    case kAlltoall:
      if (s.in_place) {
        std::memcpy(out, in, sendlen * (s.type == MPI_FLOAT ? sizeof(float) : sizeof(double)));
        return zcoll_alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, s.count, s.type, zc);
      }
      return zcoll_alltoall(in, s.count, s.type, out, s.count, s.type, zc);
    case kBcast: return zcoll_bcast(r == s.root ? in : out, s.count, s.type, s.root, zc);
    case kScatter: return zcoll_scatter(in, s.count, s.type, out, s.count, s.type, s.root, zc);
    case kGather: return zcoll_gather(in, s.count, s.type, out, s.count, s.type, s.root, zc);
  }
  return -1;
}

// The result of the agreed call of c (floats) on this rank, against the exact one: the
// tolerance, 2p bounds, is above every path's guarantee and far below what a wrong block,
// stale data or a wrong op gives.
void check_result(Coll c, const Shape& s, const Buffers& b, const zcoll_config& cfg) {
  const int p = g_size, r = g_rank;
  const double eb = cfg.codec.eb_mode == ZCOLL_EB_ABS ? cfg.codec.eb : cfg.codec.eb * (200.0 + p);
  const double tol = 2.0 * p * eb;
  auto reduced = [&](size_t i) {  // the agreed op is MPI_SUM
    double sum = 0;
    for (int q = 0; q < p; ++q) sum += static_cast<float>(value(q, i));
    return sum;
  };
  std::vector<double> want;  // what this rank's recvbuf must hold
  const size_t n = static_cast<size_t>(s.count);
  switch (c) {
    case kAllreduce:
    case kReduce:
      if (c == kAllreduce || r == s.root)
        for (size_t i = 0; i < n; ++i) want.push_back(reduced(i));
      break;
    case kReduceScatterBlock:
    case kReduceScatter: {
      const size_t first = c == kReduceScatter ? static_cast<size_t>(total(s.counts, static_cast<size_t>(r)))
                                               : static_cast<size_t>(r) * n;
      const size_t len = c == kReduceScatter ? static_cast<size_t>(s.counts[r]) : n;
      for (size_t i = 0; i < len; ++i) want.push_back(reduced(first + i));
      break;
    }
    case kAllgather:
    case kAllgatherv:
    case kAlltoall:
    case kGather:
      if (c != kGather || r == s.root)
        for (int q = 0; q < p; ++q) {
          const size_t len = c == kAllgatherv ? static_cast<size_t>(s.counts[q]) : n;
          const size_t from = c == kAlltoall ? static_cast<size_t>(r) * n : 0;
          for (size_t i = 0; i < len; ++i) want.push_back(value(q, from + i));
        }
      break;
    case kBcast:
      for (size_t i = 0; i < n; ++i) want.push_back(value(s.root, i));
      break;
    case kScatter:
      for (size_t i = 0; i < n; ++i) want.push_back(value(s.root, static_cast<size_t>(r) * n + i));
      break;
  }
  const float* got = reinterpret_cast<const float*>(c == kBcast && r == s.root ? b.send.data() : b.recv.data());
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double w = static_cast<float>(want[i]);
    if (!(std::fabs(got[i] - w) <= tol + 1e-6 * std::fabs(w))) first = bad++ ? first : i;
  }
  EXPECT(bad == 0, "%zu of %zu elements off by more than %g (first: element %zu, got %.9g want %.9g)", bad,
         want.size(), tol, first, bad ? static_cast<double>(got[first]) : 0.0, bad ? want[first] : 0.0);
}

// The agreed call of c on zc succeeds with the right result.
void expect_usable(Coll c, zcoll_comm zc, const zcoll_config& cfg, Buffers& b, const char* when) {
  Ctx cx("the agreed %s %s", kCollName[c], when);
  const Shape s = agreed(c);
  const int rc = call(c, s, b, zc);
  EXPECT_RC(rc, ZCOLL_SUCCESS);
  if (rc == ZCOLL_SUCCESS) check_result(c, s, b, cfg);
}

const int kAlgos[] = {ZCOLL_ALGO_AUTO,     ZCOLL_ALGO_CPRP2P,   ZCOLL_ALGO_RING,
                      ZCOLL_ALGO_BRUCK,    ZCOLL_ALGO_BINOMIAL, ZCOLL_ALGO_SCATTER_ALLGATHER,
                      ZCOLL_ALGO_PAIRWISE, ZCOLL_ALGO_RECURSIVE_DOUBLING};
bool runs_under(const Case& cs, int algo) {
  return std::find(cs.algos.begin(), cs.algos.end(), algo) != cs.algos.end();
}

// Every case (the reductions, or the others), algorithm and way to disagree; the calls
// take turns between an ABS and a REL bound, and between the last rank and rank 0 as the
// one that disagrees.
void args(bool reductions) {
  Buffers b;
  int k = 0;
  for (int algo : kAlgos) {
    const zcoll_config cfg[2] = {base_config(algo, ZCOLL_EB_ABS), base_config(algo, ZCOLL_EB_REL)};
    Ctx cx("algorithm %d", algo);
    zcoll_comm zc[2] = {make(cfg[0]), make(cfg[1])};
    for (const Case& cs : kCases) {
      if (!zc[0] || !zc[1] || (cs.coll <= kReduceScatter) != reductions || !runs_under(cs, algo)) continue;
      for (How how : cs.hows) {
        const int mode = k % 2, odd = (k / 2) % 2 ? 0 : g_size - 1;
        ++k;
        Ctx c1("%s %s: rank %d's %s differs", mode ? "REL" : "ABS", kCollName[cs.coll], odd, kHowName[how]);
        EXPECT_RC(call(cs.coll, disagreeing(cs.coll, how, odd), b, zc[mode]), ZCOLL_ERR_MISMATCH);
        expect_usable(cs.coll, zc[mode], cfg[mode], b, "afterwards on the same communicator");
      }
    }
    release(zc[0]);
    release(zc[1]);
  }
}

void section_args_reduce() { args(true); }
void section_args_move() { args(false); }

// ------------------------------------------------------------------ error codes

// After a failure that happens before any data moves: zcoll_error_detail() names the rank.
void expect_names_rank(int failing) {
  const char* d = detail();
  const std::string who = "rank " + std::to_string(failing) + " ";
  EXPECT(d && std::strstr(d, who.c_str()), "zcoll_error_detail() = \"%s\" does not name %s", d ? d : "(none)",
         who.c_str());
}

// Each collective under each of its algorithms, with the hook on rank 0 or the last rank
// in turn; ZCOLL_ERR_CORRUPT under an ABS bound, ZCOLL_ERR_NO_MEMORY under a REL one.
// arena: the failing rank's arena cannot grow (ZCOLL_DEBUG_FAIL=<rank>:arena), ABS and REL
// in turn; AUTO meets it in its sample, the fixed algorithms in their schedule's regions.
void codes(int code, bool arena = false) {
  Buffers b;
  for (int algo : kAlgos) {
    const bool abs_bound = arena ? algo % 2 == 0 : code == ZCOLL_ERR_CORRUPT;
    const int mode = abs_bound ? ZCOLL_EB_ABS : ZCOLL_EB_REL;
    const zcoll_config cfg = base_config(algo, mode);
    const int failing = algo % 2 ? 0 : g_size - 1;
    const std::string hook = std::to_string(failing) + ":" + (arena ? std::string("arena") : std::to_string(code));
    Ctx cx("ZCOLL_DEBUG_FAIL=%s, algorithm %d", hook.c_str(), algo);
    setenv("ZCOLL_DEBUG_FAIL", hook.c_str(), 1);
    zcoll_comm hooked = make(cfg);
    unsetenv("ZCOLL_DEBUG_FAIL");
    zcoll_comm clean = make(cfg);
    for (const Case& cs : kCases) {
      if (!hooked || !clean || !runs_under(cs, algo)) continue;
      Ctx c1("%s", kCollName[cs.coll]);
      EXPECT_RC(call(cs.coll, agreed(cs.coll), b, hooked), code);
      if (arena) expect_names_rank(failing);
      expect_usable(cs.coll, clean, cfg, b, "on a communicator made without the hook");
    }
    release(hooked);
    release(clean);
  }
}

void section_codes_corrupt() { codes(ZCOLL_ERR_CORRUPT); }
void section_codes_nomem() { codes(ZCOLL_ERR_NO_MEMORY); }
// AUTO decided by its cost model (the tests' ZCOLL_DECIDE=compress lifted): the first call
// of a fresh communicator samples the data in the arena. A rank that cannot have it must
// not leave the others in the agreement. Where every rank samples (the allreduce) the call
// fails with ZCOLL_ERR_NO_MEMORY; elsewhere the model may also choose plain MPI, which needs
// no arena: then it succeeds, on every rank alike.
void arena_under_the_model() {
  Buffers b;
  const char* decide = std::getenv("ZCOLL_DECIDE");
  const std::string saved = decide ? decide : "";
  setenv("ZCOLL_DECIDE", "model", 1);
  for (const Case& cs : kCases) {
    const int failing = cs.coll % 2 ? 0 : g_size - 1;
    const std::string hook = std::to_string(failing) + ":arena";
    Ctx cx("ZCOLL_DEBUG_FAIL=%s, AUTO decided by its model, %s", hook.c_str(), kCollName[cs.coll]);
    setenv("ZCOLL_DEBUG_FAIL", hook.c_str(), 1);
    zcoll_comm hooked = make(base_config(ZCOLL_ALGO_AUTO, cs.coll % 2 ? ZCOLL_EB_REL : ZCOLL_EB_ABS));
    unsetenv("ZCOLL_DEBUG_FAIL");
    if (!hooked) continue;
    const int rc = call(cs.coll, agreed(cs.coll), b, hooked);
    int lo = rc, hi = rc;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    EXPECT(lo == hi, "the ranks returned different codes, %d to %d", lo, hi);
    if (cs.coll == kAllreduce) EXPECT_RC(rc, ZCOLL_ERR_NO_MEMORY);
    else EXPECT(rc == ZCOLL_SUCCESS || rc == ZCOLL_ERR_NO_MEMORY, "returned %d (%s)", rc, zcoll_strerror(rc));
    if (rc) expect_names_rank(failing);
    release(hooked);
  }
  if (decide) setenv("ZCOLL_DECIDE", saved.c_str(), 1);
  else unsetenv("ZCOLL_DECIDE");
}

void section_codes_arena() {
  codes(ZCOLL_ERR_NO_MEMORY, true);
  arena_under_the_model();
}

// A communicator whose AUTO decides by its cost model, over a given 1 Gbit/s link.
zcoll_comm make_model_decided(const zcoll_config& cfg) {
  const char* decide = std::getenv("ZCOLL_DECIDE");
  const std::string saved = decide ? decide : "";
  setenv("ZCOLL_DECIDE", "model", 1);
  setenv("ZCOLL_LINK_GBPS", "1", 1);
  zcoll_comm zc = make(cfg);
  unsetenv("ZCOLL_LINK_GBPS");
  if (decide) setenv("ZCOLL_DECIDE", saved.c_str(), 1);
  else unsetenv("ZCOLL_DECIDE");
  return zc;
}

// One call of c in which rank `failing`'s k-th allocation throws (k = 0: none does; then
// returns how many the call made there). Every rank must return ZCOLL_ERR_NO_MEMORY if the
// allocation was reached, ZCOLL_SUCCESS if not.
long call_failing(const Case& cs, int failing, long k, Buffers& b, zcoll_comm zc) {
  const bool armed = g_rank == failing;
  g_thrown = false;
  if (armed) {
    g_fail_at = k;
    g_allocs = 0;
  }
  const int rc = call(cs.coll, agreed(cs.coll), b, zc);
  long made = g_allocs;
  g_fail_at = 0;
  int thrown = armed && g_thrown, lo = rc, hi = rc;
  MPI_Allreduce(MPI_IN_PLACE, &thrown, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Bcast(&made, 1, MPI_LONG, failing, MPI_COMM_WORLD);
  EXPECT(lo == hi, "the ranks returned different codes, %d to %d", lo, hi);
  EXPECT_RC(rc, thrown ? ZCOLL_ERR_NO_MEMORY : ZCOLL_SUCCESS);
  ++g_failed_calls[thrown];
  return made;
}

// Every collective and algorithm (nodes: the node-aware ones, compressed and plain, on nodes
// of two ranks by ZCOLL_NODE_KEY); the failing rank and the bound (ABS, REL) take turns.
// AUTO runs with its cost model deciding (the tests' ZCOLL_DECIDE=compress lifted, a 1 Gbit/s
// link given), so its sample, decision and probes are among the allocations.
// First calls on a fresh communicator each (its buffers are reserved there), then calls
// after one of the same size (nothing left to reserve); after each, the same communicator
// must give the right result.
void codes_alloc(bool nodes) {
  Buffers b;
  int turn = 0;
  if (nodes) setenv("ZCOLL_NODE_KEY", std::to_string(g_rank / 2).c_str(), 1);
  for (const Case& cs : kCases) {
    if (nodes && (cs.coll == kAlltoall || cs.coll == kScatter || cs.coll == kGather)) continue;  // none node-aware
    const std::vector<int> algos =
        nodes ? std::vector<int>{ZCOLL_ALGO_HIERARCHICAL, ZCOLL_ALGO_PLAIN_HIERARCHICAL} : cs.algos;
    for (int algo : algos) {
      const zcoll_config cfg = base_config(algo, turn % 2 ? ZCOLL_EB_REL : ZCOLL_EB_ABS);
      const int failing = turn++ % 2 ? 0 : g_size - 1;
      Ctx cx("%s, algorithm %d, rank %d's allocations", kCollName[cs.coll], algo, failing);
      auto fresh = [&] { return algo == ZCOLL_ALGO_AUTO ? make_model_decided(cfg) : make(cfg); };
      for (const bool first : {true, false}) {
        zcoll_comm zc = fresh();
        if (!first) expect_usable(cs.coll, zc, cfg, b, "before");
        const long made = call_failing(cs, failing, 0, b, zc);
        zcoll_stats st{};
        zcoll_last_stats(zc, &st);
        EXPECT(!nodes || st.algorithm == algo, "ran algorithm %d, not the node-aware %d", st.algorithm, algo);
        release(zc);
        if (g_rank == 0)
          std::printf("codes_alloc: %s, algorithm %s, rank %d: %ld allocations in a %s call\n", kCollName[cs.coll],
                      zcoll_algorithm_name(algo), failing, made, first ? "first" : "later");
        for (long k = 1; k <= made; ++k) {
          Ctx c1("%s call, allocation %ld of %ld fails", first ? "a first" : "a later", k, made);
          zc = fresh();
          if (!first) expect_usable(cs.coll, zc, cfg, b, "before");
          call_failing(cs, failing, k, b, zc);
          expect_usable(cs.coll, zc, cfg, b, "afterwards on the same communicator");
          release(zc);
        }
      }
    }
  }
  if (nodes) unsetenv("ZCOLL_NODE_KEY");
  if (g_rank == 0)
    std::printf("codes_alloc: %ld calls with an allocation failed on one rank, %ld with none\n", g_failed_calls[1],
                g_failed_calls[0]);
}

void section_codes_alloc() { codes_alloc(false); }
void section_codes_alloc_nodes() {
  EXPECT(g_size % 2 == 0, "codes_alloc_nodes needs an even number of ranks (nodes of two), not %d", g_size);
  if (g_size % 2 == 0) codes_alloc(true);
}

// create_alloc: one rank's k-th allocation in zcoll_comm_create fails, for every k it
// makes (rank 0, a rank of the link probe, and the last in turn). Run in a process of its
// own, so that the probe and the process's timings, cached by the first communicator
// made, are among them. Every rank must return the same code: ZCOLL_ERR_NO_MEMORY, or
// ZCOLL_SUCCESS where zcoll_comm_create does without what it could not have; nothing may
// hang, and a communicator made then works.
void section_create_alloc() {
  const zcoll_config cfg = base_config();
  Buffers b;
  long failed = 0;
  for (int failing : {0, g_size - 1})
    for (long k = 1;; ++k) {
      Ctx c("rank %d's allocation %ld in zcoll_comm_create fails", failing, k);
      zcoll_comm zc = nullptr;
      int rc = ZCOLL_SUCCESS, thrown = 0;
      {
        Watchdog w("zcoll_comm_create with one rank out of memory", kCallSeconds);
        if (g_rank == failing) {
          FailingCall fail(k);
          rc = zcoll_comm_create(MPI_COMM_WORLD, &cfg, &zc);
          thrown = g_thrown;
        } else {
          rc = zcoll_comm_create(MPI_COMM_WORLD, &cfg, &zc);
        }
      }
      int lo = rc, hi = rc;
      MPI_Allreduce(MPI_IN_PLACE, &thrown, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
      MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      EXPECT(lo == hi, "the ranks returned different codes, %d to %d", lo, hi);
      EXPECT(rc == ZCOLL_SUCCESS || (thrown && rc == ZCOLL_ERR_NO_MEMORY), "returned %d (%s)", rc,
             zcoll_strerror(rc));
      EXPECT((rc == ZCOLL_SUCCESS) == (zc != nullptr), "code %d with handle %p", rc, static_cast<void*>(zc));
      if (zc) {
        expect_usable(kAllreduce, zc, cfg, b, "on a communicator made then");
        release(zc);
      }
      if (!thrown) break;
      failed += rc == ZCOLL_ERR_NO_MEMORY;
    }
  EXPECT(failed >= 2, "only %ld creations failed: the allocations were not reached", failed);
  if (g_rank == 0) std::printf("create_alloc: %ld creations returned ZCOLL_ERR_NO_MEMORY on every rank\n", failed);
}

const Section kSections[] = {
    {"settings", section_settings},
    {"args_reduce", section_args_reduce},
    {"args_move", section_args_move},
    {"codes_corrupt", section_codes_corrupt},
    {"codes_nomem", section_codes_nomem},
    {"codes_arena", section_codes_arena},
    {"codes_alloc", section_codes_alloc},
    {"codes_alloc_nodes", section_codes_alloc_nodes},
    {"create_alloc", section_create_alloc},
};

}  // namespace

int main(int argc, char** argv) { return sections_main(argc, argv, kSections); }
