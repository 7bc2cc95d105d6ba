// MPI tests of the node-aware collectives (ZCOLL_ALGO_HIERARCHICAL; "Node-aware
// collectives" in include/zcoll.h): allreduce, reduce, bcast, allgather, allgatherv,
// reduce_scatter and reduce_scatter_block; and of
// the uncompressed baseline ZCOLL_ALGO_PLAIN_HIERARCHICAL on the same layouts, whose
// results must be plain MPI's: bcast and allgather(v) bit for bit, allreduce within
// floating-point rounding, stats.compressed 0 (plain MPI on a flat topology).
//
//   zcoll_mpi_hierarchical_tests [section ...]      (no section: all of them)
//
// Each section sets ZCOLL_NODE_KEY in this process before zcoll_comm_create, so that
// ranks with the same key form one "node":
//   block        key rank / k: nodes of consecutive ranks (and "lone last": the last
//                rank a node alone, the others one node, on one rail: p - 2 ranks on none)
//   interleaved  key rank % k: a node's ranks are not contiguous
//   fallback     one node, or one rank per node: the flat algorithm runs instead
// On 5 ranks the block and interleaved layouts are irregular too (nodes of 2, 2, 1 or 3,
// 2): every collective is node-aware there (one rail and two: the smallest node's rank
// count), with ranks on no rail.
// Inputs are slices of the shipped real fields; every element is checked against a
// reference computed in long double from every rank's input, within the header's bound:
//   allreduce and reduce SUM (and DOC MIN/MAX): nodes x eps + rounding (flat: p x eps +
//   rounding), reduce_scatter the same with nodes - 1 (flat: p - 1),
//   homomorphic MIN/MAX: eps; bcast and allgather(v): eps of the sender's value, bit for
//   bit on the root's node (bcast) and for the blocks of a rank's own node (allgather).
// eps = stats.eb_abs, itself checked against ABS, REL x (global or root's) range, or
// RESULT's eb / factor. Allreduce results must be bit-identical on every rank; guard
// elements (and allgatherv's gaps) must come back untouched. A failure on one rank
// (ZCOLL_DEBUG_FAIL) must reach every rank as the same code.
#include <zcoll.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "fields.h"
#include "mpi_check.h"

namespace {

constexpr size_t kGuard = 11;
constexpr int kHier = ZCOLL_ALGO_HIERARCHICAL;

template <class T>
struct Ty {
  static constexpr bool f32 = std::is_same_v<T, float>;
  static constexpr double u = f32 ? 0x1p-24 : 0x1p-53;  // unit roundoff
  static MPI_Datatype mpi() { return f32 ? MPI_FLOAT : MPI_DOUBLE; }
  static const char* name() { return f32 ? "f32" : "f64"; }
};

template <class T>
void set_sentinel(T* p, size_t n) {
  std::memset(static_cast<void*>(p), 0xA5, n * sizeof(T));  // a NaN pattern no path produces
}

// ------------------------------------------------------------------ inputs

uint64_t g_salt = 1;

// n elements of what `owner` contributes to the call with this salt: a slice of a field
// (doubles get a smooth term, so that they are not float values).
template <class T>
std::vector<T> gen(int owner, uint64_t salt, size_t n) {
  const std::vector<float>& f = g_f32[salt % g_f32.size()];
  const size_t len = f.size();
  const size_t start = static_cast<size_t>((static_cast<uint64_t>(owner) * (len / 7 + 1009) + salt * 104729u) % len);
  std::vector<T> v(std::max<size_t>(n, 1));
  for (size_t i = 0; i < n; ++i) {
    const size_t k = (start + i) % len;
    double x = f[k];
    if (!Ty<T>::f32) x += 0.25 * std::sin(0.0123 * static_cast<double>(k));
    v[i] = static_cast<T>(x);
  }
  return v;
}

template <class T>
void range_of(const std::vector<T>& v, size_t n, double& lo, double& hi) {
  for (size_t i = 0; i < n; ++i) {
    lo = std::min(lo, static_cast<double>(v[i]));
    hi = std::max(hi, static_cast<double>(v[i]));
  }
}

// ------------------------------------------------------------------ layouts, configs

struct Layout {
  std::string name;
  std::vector<std::string> key;  // ZCOLL_NODE_KEY per rank ("" : unset, shared memory)
  int nodes = 1, node_size = 1;
  bool node_aware = false;       // several nodes, some of several ranks
  std::vector<int> node_of;
};

Layout make_layout(const std::string& name, std::string (*key)(int r, int k), int k) {
  Layout L;
  L.name = name;
  std::map<std::string, int> size;
  for (int r = 0; r < g_size; ++r) {
    L.key.push_back(key(r, k));
    ++size[L.key.back()];
  }
  std::map<std::string, int> index;
  for (int r = 0; r < g_size; ++r)  // nodes numbered by their lowest rank, as zcoll does
    if (!index.count(L.key[r])) index[L.key[r]] = static_cast<int>(index.size());
  for (int r = 0; r < g_size; ++r) L.node_of.push_back(index[L.key[r]]);
  L.nodes = static_cast<int>(size.size());
  L.node_size = size.begin()->second;
  int largest = 0;
  for (const auto& s : size) largest = std::max(largest, s.second);
  L.node_aware = L.nodes > 1 && largest > 1;
  return L;
}

std::string block_key(int r, int k) { return "block" + std::to_string(r / k); }
std::string inter_key(int r, int k) { return "inter" + std::to_string(r % k); }
std::string one_key(int, int) { return "all"; }
std::string own_key(int r, int) { return "own" + std::to_string(r); }
std::string lone_last_key(int r, int) { return r == g_size - 1 ? "last" : "rest"; }

const char* const kAlgorithmEnv[] = {"ZCOLL_ALLREDUCE_ALGORITHM", "ZCOLL_BCAST_ALGORITHM", "ZCOLL_ALLGATHER_ALGORITHM",
                                     "ZCOLL_REDUCE_SCATTER_ALGORITHM", "ZCOLL_REDUCE_ALGORITHM"};

struct Cfg {
  int mode = ZCOLL_EB_ABS, red = ZCOLL_REDUCTION_AUTO, target = ZCOLL_BOUND_INPUT;
  double eb = 1e-2;
  bool env = false;  // select through ZCOLL_<COLLECTIVE>_ALGORITHM rather than config.algorithm
  bool plain = false;  // PLAIN_HIERARCHICAL rather than HIERARCHICAL
  const char* debug_fail = nullptr;  // ZCOLL_DEBUG_FAIL
};

zcoll_comm make_comm(const Layout& L, const Cfg& c) {
  const std::string& key = L.key[static_cast<size_t>(g_rank)];
  if (key.empty()) unsetenv("ZCOLL_NODE_KEY");
  else setenv("ZCOLL_NODE_KEY", key.c_str(), 1);
  zcoll_config cfg;
  zcoll_config_init(&cfg);
  cfg.codec.eb_mode = c.mode;
  cfg.codec.eb = c.eb;
  cfg.codec.chunk_len = 1024;  // pieces of 4096 values: several per slice
  cfg.codec.threads = 1;
  cfg.min_bytes = 0;
  cfg.reduction = c.red;
  cfg.bound_target = c.target;
  if (c.env)
    for (const char* v : kAlgorithmEnv)
      setenv(v, c.plain ? "Plain_Hierarchical" : "Hierarchical", 1);
  else
    cfg.algorithm = c.plain ? ZCOLL_ALGO_PLAIN_HIERARCHICAL : kHier;
  if (c.debug_fail) setenv("ZCOLL_DEBUG_FAIL", c.debug_fail, 1);
  zcoll_comm zc = nullptr;
  const int rc = zcoll_comm_create(MPI_COMM_WORLD, &cfg, &zc);
  EXPECT_RC(rc, ZCOLL_SUCCESS);
  unsetenv("ZCOLL_NODE_KEY");
  unsetenv("ZCOLL_DEBUG_FAIL");
  for (const char* v : kAlgorithmEnv) unsetenv(v);
  return rc == ZCOLL_SUCCESS ? zc : nullptr;
}

// Results every rank must share (allreduce hashes), compared once per communicator.
std::vector<uint64_t> g_agree;

void agree_flush() {
  long n = static_cast<long>(g_agree.size()), lo = 0, hi = 0;
  MPI_Allreduce(&n, &lo, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&n, &hi, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  EXPECT(lo == hi, "ranks pushed %ld to %ld results", lo, hi);
  if (lo == hi && n > 0) {
    std::vector<uint64_t> all(static_cast<size_t>(n) * static_cast<size_t>(g_size));
    MPI_Allgather(g_agree.data(), static_cast<int>(n), MPI_UINT64_T, all.data(), static_cast<int>(n), MPI_UINT64_T,
                  MPI_COMM_WORLD);
    for (size_t i = 0; i < static_cast<size_t>(n); ++i)
      for (int s = 0; s < g_size; ++s)
        EXPECT(all[static_cast<size_t>(s) * static_cast<size_t>(n) + i] == g_agree[i],
               "allreduce result %zu: rank %d's bytes differ from this rank's", i, s);
  }
  g_agree.clear();
}

// The nodes zcoll_comm_get_info reports: the layout's.
void check_info(zcoll_comm zc, const Layout& L) {
  zcoll_comm_info in{};
  EXPECT_RC(zcoll_comm_get_info(zc, &in), ZCOLL_SUCCESS);
  const int me = L.node_of[static_cast<size_t>(g_rank)];
  std::vector<int> size(static_cast<size_t>(L.nodes), 0);
  int node_rank = 0;
  for (int r = 0; r < g_size; ++r) {
    ++size[static_cast<size_t>(L.node_of[static_cast<size_t>(r)])];
    node_rank += r < g_rank && L.node_of[static_cast<size_t>(r)] == me;
  }
  const int largest = *std::max_element(size.begin(), size.end());
  const int rails = L.node_aware ? *std::min_element(size.begin(), size.end()) : 0;
  EXPECT(in.codec_threads >= 1 && in.model_threads >= 1, "zcoll_comm_get_info: codec threads %d, the model's %d",
         in.codec_threads, in.model_threads);
  EXPECT(in.nodes == L.nodes && in.node == me && in.node_rank == node_rank &&
             in.node_size == size[static_cast<size_t>(me)] && in.max_node_size == largest && in.rails == rails,
         "zcoll_comm_get_info: nodes %d, node %d, node rank %d, node size %d, largest %d, rails %d; the layout's: "
         "%d, %d, %d, %d, %d, %d",
         in.nodes, in.node, in.node_rank, in.node_size, in.max_node_size, in.rails, L.nodes, me, node_rank,
         size[static_cast<size_t>(me)], largest, rails);
}

// What ran and the bound it reports. flat: the algorithms the flat fallback may run.
// The plain baseline: nothing compressed, its own name on the node-aware path; 0.
double check_stats(zcoll_comm zc, const Layout& L, const Cfg& c, std::initializer_list<int> flat,
                   double want_eps) {
  zcoll_stats st;
  std::memset(&st, 0xff, sizeof st);
  EXPECT_RC(zcoll_last_stats(zc, &st), ZCOLL_SUCCESS);
  const bool aware = L.node_aware;
  if (c.plain) {
    const int want = aware ? ZCOLL_ALGO_PLAIN_HIERARCHICAL : ZCOLL_ALGO_MPI;
    EXPECT(st.compressed == 0, "plain baseline: stats.compressed %d", st.compressed);
    EXPECT(st.algorithm == want, "plain baseline ran algorithm %d (%s), expected %s", st.algorithm,
           zcoll_algorithm_name(st.algorithm), zcoll_algorithm_name(want));
    return 0;
  }
  EXPECT(st.compressed == 1, "stats.compressed %d", st.compressed);
  if (aware) {
    EXPECT(st.algorithm == kHier, "ran algorithm %d (%s), expected hierarchical", st.algorithm,
           zcoll_algorithm_name(st.algorithm));
  } else {
    EXPECT(std::find(flat.begin(), flat.end(), st.algorithm) != flat.end(),
           "flat topology ran algorithm %d (%s), expected a flat one", st.algorithm,
           zcoll_algorithm_name(st.algorithm));
  }
  EXPECT(st.eb_abs > 0 && std::fabs(st.eb_abs - want_eps) <= 1e-12 * want_eps, "stats.eb_abs %.17g, expected %.17g",
         st.eb_abs, want_eps);
  EXPECT(std::isfinite(st.t_comm) && st.t_compress >= 0 && st.t_decompress >= 0 && st.t_comm >= -1e-9,
         "stats times: t_compress %g t_comm %g t_decompress %g", st.t_compress, st.t_comm, st.t_decompress);
  return st.eb_abs;
}

double abs_bound(const Cfg& c, double lo, double hi) {
  if (c.mode == ZCOLL_EB_ABS) return c.eb;
  const double range = hi - lo;
  return range > 0 ? c.eb * range : c.eb;
}

template <class T>
size_t bad_guards(const std::vector<T>& buf, size_t from, size_t to) {
  std::vector<T> s(buf.size());
  set_sentinel(s.data(), s.size());
  size_t bad = 0;
  for (size_t i = 0; i < buf.size(); ++i)
    bad += (i < from || i >= to) && std::memcmp(&buf[i], &s[i], sizeof(T)) != 0;
  return bad;
}

// ------------------------------------------------------------------ allreduce

const char* op_name(MPI_Op op) { return op == MPI_SUM ? "SUM" : op == MPI_MIN ? "MIN" : "MAX"; }

// Every rank's n inputs of a new call (each rank makes all of them, for the reference), and
// their range.
template <class T>
std::vector<std::vector<T>> inputs(size_t n, double& lo, double& hi) {
  const uint64_t salt = g_salt++;
  std::vector<std::vector<T>> in;
  for (int s = 0; s < g_size; ++s) {
    in.push_back(gen<T>(s, salt, n));
    range_of(in.back(), n, lo, hi);
  }
  return in;
}

// got[i] against the op over every rank's in[s][off + i], in long double: within `allowed`
// (plus the element type's rounding of a sum; MIN/MAX on the homomorphic path exactly).
template <class T>
void check_reduced(const std::vector<std::vector<T>>& in, size_t off, const T* got, size_t n, MPI_Op op,
                   bool homo_minmax, double allowed, double eps) {
  const int p = g_size;
  size_t bad = 0;
  double worst = 0;
  for (size_t i = 0; i < n; ++i) {
    long double ref = op == MPI_SUM ? 0 : op == MPI_MIN ? INFINITY : -INFINITY, asum = 0;
    for (int s = 0; s < p; ++s) {
      const long double x = in[static_cast<size_t>(s)][off + i];
      asum += std::fabs(x);
      ref = op == MPI_SUM ? ref + x : op == MPI_MIN ? std::min(ref, x) : std::max(ref, x);
    }
    const long double err = std::fabs(static_cast<long double>(got[i]) - ref);
    long double lim = allowed * (homo_minmax ? 1.0 : 1.0 + 1e-12);
    if (op == MPI_SUM) lim += p * Ty<T>::u * asum + Ty<T>::u * std::fabs(ref);
    worst = std::max(worst, static_cast<double>(err / eps));
    if (!(err <= lim) && bad++ < 3)
      std::fprintf(stderr, "[rank %d/%d]   %s: element %zu: got %.17g, reference %.21Lg, |err| %.4Lg > %.4Lg\n",
                   g_rank, p, ctx().c_str(), i, static_cast<double>(got[i]), ref, err, lim);
  }
  EXPECT(bad == 0, "%zu of %zu elements outside the bound (worst %.3g eps, allowed %.3g eps)", bad, n, worst,
         allowed / eps);
}

template <class T>
void run_allreduce(zcoll_comm zc, const Layout& L, const Cfg& c, MPI_Op op, size_t n, bool in_place) {
  const int p = g_size;
  Ctx cx("allreduce %s %s count=%zu%s", Ty<T>::name(), op_name(op), n, in_place ? " IN_PLACE" : "");
  double lo = INFINITY, hi = -INFINITY;
  const std::vector<std::vector<T>> in = inputs<T>(n, lo, hi);
  std::vector<T> recv(n + 2 * kGuard), send = in[static_cast<size_t>(g_rank)];
  set_sentinel(recv.data(), recv.size());
  T* rb = recv.data() + kGuard;
  if (in_place && n) std::memcpy(static_cast<void*>(rb), send.data(), n * sizeof(T));
  {
    Watchdog w("allreduce");
    EXPECT_RC(zcoll_allreduce(in_place ? MPI_IN_PLACE : send.data(), rb, static_cast<int>(n), Ty<T>::mpi(), op, zc),
              ZCOLL_SUCCESS);
  }
  const bool homo_minmax = c.red != ZCOLL_REDUCTION_DOC && op != MPI_SUM;
  // Quantizations on the way: one per node (one per rank on the flat path).
  const double factor = homo_minmax ? 1 : L.node_aware ? L.nodes : p;
  const double base = abs_bound(c, lo, hi);
  const bool result = c.target == ZCOLL_BOUND_RESULT;
  const double eps = c.plain ? 1 : check_stats(zc, L, c, {ZCOLL_ALGO_RING, ZCOLL_ALGO_RECURSIVE_DOUBLING},
                                               result ? base / factor : base);
  if (c.plain) check_stats(zc, L, c, {}, 0);
  const double allowed = c.plain ? 0 : result ? base : factor * eps;
  g_agree.push_back(fnv(rb, n * sizeof(T)));
  EXPECT(bad_guards(recv, kGuard, kGuard + n) == 0, "guard elements overwritten");
  EXPECT(in_place || std::memcmp(send.data(), in[static_cast<size_t>(g_rank)].data(), n * sizeof(T)) == 0,
         "sendbuf modified");
  check_reduced(in, 0, rb, n, op, homo_minmax, allowed, eps);
}

// ------------------------------------------------------------------ reduce

// Ranks other than the root pass no receive buffer (MPI allows it); the root's in place or not.
template <class T>
void run_reduce(zcoll_comm zc, const Layout& L, const Cfg& c, MPI_Op op, int root, size_t n, bool in_place) {
  const int p = g_size;
  const bool is_root = g_rank == root;
  Ctx cx("reduce %s %s root=%d count=%zu%s", Ty<T>::name(), op_name(op), root, n, in_place ? " IN_PLACE" : "");
  double lo = INFINITY, hi = -INFINITY;
  const std::vector<std::vector<T>> in = inputs<T>(n, lo, hi);
  std::vector<T> recv(n + 2 * kGuard), send = in[static_cast<size_t>(g_rank)];
  set_sentinel(recv.data(), recv.size());
  T* rb = recv.data() + kGuard;
  // Not where the call is plain MPI's own (the plain baseline on a flat topology): MPICH 4.0.2
  // crashes in MPI_Reduce with MPI_IN_PLACE at a root other than 0 (pmodels/mpich#6540).
  const bool ip = in_place && is_root && !(c.plain && !L.node_aware);
  if (ip && n) std::memcpy(static_cast<void*>(rb), send.data(), n * sizeof(T));
  {
    Watchdog w("reduce");
    EXPECT_RC(zcoll_reduce(ip ? MPI_IN_PLACE : send.data(), is_root ? rb : nullptr, static_cast<int>(n), Ty<T>::mpi(),
                           op, root, zc),
              ZCOLL_SUCCESS);
  }
  const bool homo_minmax = c.red != ZCOLL_REDUCTION_DOC && op != MPI_SUM;
  const double factor = homo_minmax ? 1 : L.node_aware ? L.nodes : p;
  const double base = abs_bound(c, lo, hi);
  const bool result = c.target == ZCOLL_BOUND_RESULT;
  const double eps = c.plain ? 1 : check_stats(zc, L, c, {ZCOLL_ALGO_RING}, result ? base / factor : base);
  if (c.plain) check_stats(zc, L, c, {}, 0);
  EXPECT(ip || std::memcmp(send.data(), in[static_cast<size_t>(g_rank)].data(), n * sizeof(T)) == 0,
         "sendbuf modified");
  EXPECT(bad_guards(recv, is_root ? kGuard : 0, is_root ? kGuard + n : 0) == 0,
         is_root ? "guard elements overwritten" : "a rank other than the root had its buffer written");
  if (is_root) check_reduced(in, 0, rb, n, op, homo_minmax, c.plain ? 0 : result ? base : factor * eps, eps);
}

// ------------------------------------------------------------------ reduce_scatter

// Block counts: equal (reduce_scatter_block), or different by rank with some ranks at 0
// (reduce_scatter). In place, recvbuf holds the whole vector and the result lands at its
// start; only the guards around it must stay untouched.
template <class T>
void run_reduce_scatter(zcoll_comm zc, const Layout& L, const Cfg& c, MPI_Op op, size_t base, bool varied,
                        bool in_place) {
  const int p = g_size;
  Ctx cx("reduce_scatter%s %s %s count=%zu%s", varied ? "" : "_block", Ty<T>::name(), op_name(op), base,
         in_place ? " IN_PLACE" : "");
  std::vector<int> counts(p);
  std::vector<size_t> begin(p + 1, 0);
  for (int s = 0; s < p; ++s) {
    counts[s] = static_cast<int>(varied ? (s % 3 == 1 ? 0 : base + static_cast<size_t>(s) * 377) : base);
    begin[s + 1] = begin[s] + static_cast<size_t>(counts[s]);
  }
  const size_t total = begin[p], mine = static_cast<size_t>(counts[g_rank]), off = begin[g_rank];
  double lo = INFINITY, hi = -INFINITY;
  const std::vector<std::vector<T>> in = inputs<T>(total, lo, hi);
  const std::vector<T>& send = in[static_cast<size_t>(g_rank)];
  std::vector<T> recv((in_place ? total : mine) + 2 * kGuard);
  set_sentinel(recv.data(), recv.size());
  T* rb = recv.data() + kGuard;
  if (in_place && total) std::memcpy(static_cast<void*>(rb), send.data(), total * sizeof(T));
  {
    Watchdog w("reduce_scatter");
    const void* sb = in_place ? MPI_IN_PLACE : send.data();
    EXPECT_RC(varied ? zcoll_reduce_scatter(sb, rb, counts.data(), Ty<T>::mpi(), op, zc)
                     : zcoll_reduce_scatter_block(sb, rb, static_cast<int>(base), Ty<T>::mpi(), op, zc),
              ZCOLL_SUCCESS);
  }
  const bool homo_minmax = c.red != ZCOLL_REDUCTION_DOC && op != MPI_SUM;
  // Quantizations on the way: one per other node (one per other rank on the flat path).
  const double factor = homo_minmax ? 1 : L.node_aware ? L.nodes - 1 : p - 1;
  const double base_eb = abs_bound(c, lo, hi);
  const bool result = c.target == ZCOLL_BOUND_RESULT;
  const double eps = c.plain ? 1 : check_stats(zc, L, c, {ZCOLL_ALGO_RING}, result ? base_eb / factor : base_eb);
  if (c.plain) check_stats(zc, L, c, {}, 0);
  const double allowed = c.plain ? 0 : result ? base_eb : factor * eps;
  EXPECT(bad_guards(recv, kGuard, recv.size() - kGuard) == 0, "guard elements overwritten");
  check_reduced(in, off, rb, mine, op, homo_minmax, allowed, eps);
}

// ------------------------------------------------------------------ bcast

template <class T>
void run_bcast(zcoll_comm zc, const Layout& L, const Cfg& c, int root, size_t n) {
  Ctx cx("bcast %s root=%d count=%zu", Ty<T>::name(), root, n);
  const std::vector<T> want = gen<T>(root, g_salt++, n);
  double lo = INFINITY, hi = -INFINITY;
  range_of(want, n, lo, hi);
  std::vector<T> buf(n + 2 * kGuard);
  set_sentinel(buf.data(), buf.size());
  T* b = buf.data() + kGuard;
  if (g_rank == root && n) std::memcpy(static_cast<void*>(b), want.data(), n * sizeof(T));
  {
    Watchdog w("bcast");
    EXPECT_RC(zcoll_bcast(b, static_cast<int>(n), Ty<T>::mpi(), root, zc), ZCOLL_SUCCESS);
  }
  const double eps = check_stats(zc, L, c, {ZCOLL_ALGO_BINOMIAL, ZCOLL_ALGO_SCATTER_ALLGATHER}, abs_bound(c, lo, hi));
  EXPECT(bad_guards(buf, kGuard, kGuard + n) == 0, "guard elements overwritten");
  // The root keeps its values; on the hierarchical path so does the root's node.
  const bool exact = c.plain || g_rank == root ||
                     (L.node_aware && L.node_of[static_cast<size_t>(g_rank)] == L.node_of[static_cast<size_t>(root)]);
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    const bool ok = exact ? std::memcmp(&b[i], &want[i], sizeof(T)) == 0
                          : std::fabs(static_cast<double>(b[i]) - static_cast<double>(want[i])) <= eps;
    if (!ok && bad++ < 3)
      std::fprintf(stderr, "[rank %d/%d]   %s: element %zu: got %.17g, root's %.17g (%s, eps %.4g)\n", g_rank, g_size,
                   ctx().c_str(), i, static_cast<double>(b[i]), static_cast<double>(want[i]),
                   exact ? "bit-exact" : "within eps", eps);
  }
  EXPECT(bad == 0, "%zu of %zu elements wrong", bad, n);
}

// ------------------------------------------------------------------ allgather(v)

// v: allgatherv with counts that differ by rank and blocks placed in reverse rank order
// with gaps of 3 elements (that must stay untouched).
template <class T>
void run_allgather(zcoll_comm zc, const Layout& L, const Cfg& c, size_t base, bool v, bool in_place) {
  const int p = g_size;
  Ctx cx("allgather%s %s count=%zu%s", v ? "v" : "", Ty<T>::name(), base, in_place ? " IN_PLACE" : "");
  const uint64_t salt = g_salt++;
  std::vector<int> counts(p), displs(p);
  size_t end = 0;
  for (int s = p - 1; s >= 0; --s) {
    counts[s] = static_cast<int>(v ? (s % 3 == 1 ? 0 : base + static_cast<size_t>(s) * 377) : base);
    displs[s] = v ? static_cast<int>(end) : s * static_cast<int>(base);
    end += static_cast<size_t>(counts[s]) + (v ? 3 : 0);
  }
  if (!v) end = base * static_cast<size_t>(p);
  std::vector<std::vector<T>> blocks;
  double lo = INFINITY, hi = -INFINITY;
  for (int s = 0; s < p; ++s) {
    blocks.push_back(gen<T>(s, salt, static_cast<size_t>(counts[s])));
    range_of(blocks.back(), static_cast<size_t>(counts[s]), lo, hi);
  }
  std::vector<T> recv(end + 2 * kGuard);
  set_sentinel(recv.data(), recv.size());
  T* rb = recv.data() + kGuard;
  const std::vector<T>& mine = blocks[static_cast<size_t>(g_rank)];
  const int mc = counts[g_rank];
  if (in_place && mc) std::memcpy(static_cast<void*>(rb + displs[g_rank]), mine.data(), mc * sizeof(T));
  const void* sb = in_place ? MPI_IN_PLACE : mine.data();
  {
    Watchdog w("allgather");
    const MPI_Datatype t = Ty<T>::mpi();
    EXPECT_RC(v ? zcoll_allgatherv(sb, mc, t, rb, counts.data(), displs.data(), t, zc)
                : zcoll_allgather(sb, mc, t, rb, static_cast<int>(base), t, zc),
              ZCOLL_SUCCESS);
  }
  const double eps = check_stats(zc, L, c, {ZCOLL_ALGO_RING, ZCOLL_ALGO_BRUCK}, abs_bound(c, lo, hi));
  size_t bad = 0, touched = 0;
  std::vector<bool> covered(recv.size(), false);
  for (int s = 0; s < p; ++s)
    for (int i = 0; i < counts[s]; ++i) {
      const size_t at = static_cast<size_t>(displs[s] + i);
      covered[kGuard + at] = true;
      const T g = rb[at], w = blocks[static_cast<size_t>(s)][static_cast<size_t>(i)];
      // Node-aware: a rank's node's blocks come inside the node, exact (zcoll.h).
      const bool same_node = L.node_aware && L.node_of[static_cast<size_t>(s)] == L.node_of[static_cast<size_t>(g_rank)];
      const bool ok = s == g_rank || same_node || c.plain
                          ? std::memcmp(&g, &w, sizeof(T)) == 0
                          : std::fabs(static_cast<double>(g) - static_cast<double>(w)) <= eps;
      if (!ok && bad++ < 3)
        std::fprintf(stderr, "[rank %d/%d]   %s: block %d element %d: got %.17g, want %.17g (eps %.4g)\n", g_rank, p,
                     ctx().c_str(), s, i, static_cast<double>(g), static_cast<double>(w), eps);
    }
  std::vector<T> sentinel(1);
  set_sentinel(sentinel.data(), 1);
  for (size_t i = 0; i < recv.size(); ++i)
    touched += !covered[i] && std::memcmp(&recv[i], &sentinel[0], sizeof(T)) != 0;
  EXPECT(bad == 0, "%zu elements wrong", bad);
  EXPECT(touched == 0, "%zu guard or gap elements overwritten", touched);
}

// ------------------------------------------------------------------ sections

// Everything on one layout: the full set with ABS (float and double, every op, counts
// that do not divide evenly, 0 and 1, in place or not), a lighter one with REL, DOC and
// RESULT; the flat fallbacks, and a section's second layout (6 ranks), get the light set
// with ABS and REL only (an oversubscribed, busy-polling MPI takes milliseconds per
// synchronisation). Every layout then runs the light set on the plain baseline (named
// in the environment where the layout is not the thorough one).
void run_layout(const Layout& L, bool thorough) {
  Ctx cl("layout %s (%d nodes, the first of %d%s)", L.name.c_str(), L.nodes, L.node_size,
         L.node_aware ? "" : ", flat fallback");
  const int p = g_size;
  const std::vector<int> roots = {0, p - 1, 1};
  const int variants = L.node_aware && thorough ? 4 : 2;
  for (int variant = 0; variant <= variants; ++variant) {
    Cfg c;
    if (variant == 1) c.mode = ZCOLL_EB_REL, c.eb = 1e-3;
    if (variant == 2 && variant < variants) c.red = ZCOLL_REDUCTION_DOC, c.env = true;
    if (variant == 3 && variant < variants) c.target = ZCOLL_BOUND_RESULT, c.mode = ZCOLL_EB_REL, c.eb = 1e-4;
    if (variant == variants) c.plain = true, c.env = !thorough;
    Ctx cv("mode=%s eb=%g reduction=%s target=%s%s%s", c.mode == ZCOLL_EB_REL ? "REL" : "ABS", c.eb,
           c.red == ZCOLL_REDUCTION_DOC ? "DOC" : "AUTO", c.target == ZCOLL_BOUND_RESULT ? "RESULT" : "INPUT",
           c.plain ? " PLAIN_HIERARCHICAL" : "", c.env ? " (environment)" : "");
    zcoll_comm zc = make_comm(L, c);
    if (!zc) return;
    if (variant == 0) check_info(zc, L);
    const bool full = variant == 0 && L.node_aware && thorough;
    const std::vector<size_t> counts = full ? std::vector<size_t>{0, 1, 4099, 20011} : std::vector<size_t>{9001};
    for (size_t k = 0; k < counts.size(); ++k)
      for (MPI_Op op : {MPI_SUM, MPI_MIN, MPI_MAX}) {
        if (!full && variant != 2 && op == MPI_MIN) continue;
        run_allreduce<float>(zc, L, c, op, counts[k], (k + (op == MPI_MAX)) % 2 == 1);
        if (full ? k % 2 == 1 : op == MPI_SUM)
          run_allreduce<double>(zc, L, c, op, counts[k], (k + (op == MPI_MIN)) % 2 == 0);
      }
    for (int root : roots)
      for (MPI_Op op : {MPI_SUM, MPI_MIN, MPI_MAX}) {
        if (!full && variant != 2 && op != MPI_SUM) continue;
        const size_t n = full ? (root == 1 ? 0 : 5003) : 3001;
        run_reduce<float>(zc, L, c, op, root, n, root != 0);
        if (full || root == 0) run_reduce<double>(zc, L, c, op, root, n + 1, root == 0);
      }
    for (size_t n : full ? std::vector<size_t>{0, 1, 2003} : std::vector<size_t>{1501})
      for (MPI_Op op : {MPI_SUM, MPI_MIN, MPI_MAX}) {
        if (!full && variant != 2 && op != MPI_SUM) continue;
        run_reduce_scatter<float>(zc, L, c, op, n, true, n != 1);
        if (full || op == MPI_SUM) run_reduce_scatter<double>(zc, L, c, op, n, false, n == 1);
      }
    if (variant != 3) {
      for (int root : roots)
        for (size_t n : full ? std::vector<size_t>{1, 30011} : std::vector<size_t>{12001}) {
          run_bcast<float>(zc, L, c, root, n);
          if (full ? n > 1 : root == 0) run_bcast<double>(zc, L, c, root, n);
        }
      for (size_t n : full ? std::vector<size_t>{0, 1, 3001} : std::vector<size_t>{2001}) {
        run_allgather<float>(zc, L, c, n, false, n == 1);
        run_allgather<double>(zc, L, c, n, true, n != 1);
        if (full) run_allgather<double>(zc, L, c, n, false, n == 0);
      }
    }
    agree_flush();
    EXPECT_RC(zcoll_comm_free(&zc), ZCOLL_SUCCESS);
  }
}

// A failure on one rank (ZCOLL_DEBUG_FAIL: its rail stage fails) reaches every rank,
// on the other rails too, as the same code.
// hook: ZCOLL_DEBUG_FAIL's <what> on the last rank, a code (its first codec operation fails)
// or "arena" (its work buffers cannot grow: ZCOLL_ERR_NO_MEMORY); want: the code every rank
// must return.
void run_debug_fail(const Layout& L, const std::string& what, int want) {
  Ctx cl("layout %s, rank %d fails (%s)", L.name.c_str(), g_size - 1, what.c_str());
  Cfg c;
  const std::string fail = std::to_string(g_size - 1) + ":" + what;
  c.debug_fail = fail.c_str();
  zcoll_comm zc = make_comm(L, c);
  if (!zc) return;
  const size_t n = 5000;
  std::vector<float> a = gen<float>(g_rank, g_salt++, n), b(n * static_cast<size_t>(g_size));
  Watchdog w("a failing call");
  EXPECT_RC(zcoll_allreduce(a.data(), b.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, zc), want);
  EXPECT_RC(zcoll_bcast(a.data(), static_cast<int>(n), MPI_FLOAT, 0, zc), want);
  EXPECT_RC(zcoll_allgather(a.data(), static_cast<int>(n), MPI_FLOAT, b.data(), static_cast<int>(n), MPI_FLOAT, zc),
            want);
  // The reduce-scatter and reduce stages: the failing rank's rail is one of several, and
  // the other rails' ranks learn of it only through the agreement over the whole
  // communicator. The input is p blocks of n / p (and uneven blocks, one empty).
  std::vector<int> even(static_cast<size_t>(g_size), static_cast<int>(n) / g_size), uneven(even);
  uneven[0] = 0;
  uneven[static_cast<size_t>(g_size) - 1] += static_cast<int>(n) / g_size;
  EXPECT_RC(zcoll_reduce_scatter_block(a.data(), b.data(), even[0], MPI_FLOAT, MPI_SUM, zc), want);
  EXPECT_RC(zcoll_reduce_scatter(a.data(), b.data(), uneven.data(), MPI_FLOAT, MPI_SUM, zc), want);
  for (int root : {0, g_size - 1})
    EXPECT_RC(zcoll_reduce(a.data(), g_rank == root ? b.data() : nullptr, static_cast<int>(n), MPI_FLOAT, MPI_SUM,
                           root, zc),
              want);
  EXPECT_RC(zcoll_comm_free(&zc), ZCOLL_SUCCESS);
}

// PLAIN_HIERARCHICAL with the last rank passing a derived datatype of floats (a matching
// signature, as MPI allows): every rank must take plain MPI together (the agreement sees a
// type zcoll does not handle), with plain MPI's exact results and no hang.
void run_plain_mixed_types(const Layout& L) {
  Ctx cl("layout %s, PLAIN_HIERARCHICAL, rank %d passes a derived type", L.name.c_str(), g_size - 1);
  Cfg c;
  c.plain = true;
  zcoll_comm zc = make_comm(L, c);
  if (!zc) return;
  MPI_Datatype one_float;
  MPI_Type_contiguous(1, MPI_FLOAT, &one_float);
  MPI_Type_commit(&one_float);
  const MPI_Datatype mine = g_rank == g_size - 1 ? one_float : MPI_FLOAT;
  const size_t n = 3001;
  const std::vector<float> want = gen<float>(0, g_salt, n);
  std::vector<float> buf = g_rank == 0 ? want : std::vector<float>(n, -1.0f);
  {
    Watchdog w("bcast, mixed types");
    EXPECT_RC(zcoll_bcast(buf.data(), static_cast<int>(n), mine, 0, zc), ZCOLL_SUCCESS);
  }
  zcoll_stats st{};
  zcoll_last_stats(zc, &st);
  EXPECT(st.algorithm == ZCOLL_ALGO_MPI && st.compressed == 0, "bcast ran algorithm %d (%s), compressed %d",
         st.algorithm, zcoll_algorithm_name(st.algorithm), st.compressed);
  EXPECT(std::memcmp(buf.data(), want.data(), n * sizeof(float)) == 0, "bcast: not the root's values");
  std::vector<float> all(n * static_cast<size_t>(g_size)), ref(all.size());
  const std::vector<float> block = gen<float>(g_rank, g_salt, n);
  {
    Watchdog w("allgather, mixed types");
    EXPECT_RC(zcoll_allgather(block.data(), static_cast<int>(n), mine, all.data(), static_cast<int>(n), mine, zc),
              ZCOLL_SUCCESS);
  }
  MPI_Allgather(block.data(), static_cast<int>(n), MPI_FLOAT, ref.data(), static_cast<int>(n), MPI_FLOAT,
                MPI_COMM_WORLD);
  EXPECT(std::memcmp(all.data(), ref.data(), all.size() * sizeof(float)) == 0, "allgather: not MPI's result");
  ++g_salt;
  MPI_Type_free(&one_float);
  EXPECT_RC(zcoll_comm_free(&zc), ZCOLL_SUCCESS);
}

// Node sizes k that give whole nodes here (and 2 where nothing does: irregular nodes).
std::vector<int> node_sizes() {
  std::vector<int> ks;
  for (int k = 2; k < g_size; ++k)
    if (g_size % k == 0) ks.push_back(k);
  if (ks.empty()) ks.push_back(2);
  return ks;
}

void section_block() {
  for (int k : node_sizes()) run_layout(make_layout("rank/" + std::to_string(k), block_key, k), k == node_sizes()[0]);
  run_layout(make_layout("lone last", lone_last_key, 0), false);
  run_debug_fail(make_layout("rank/2", block_key, 2), std::to_string(ZCOLL_ERR_CORRUPT), ZCOLL_ERR_CORRUPT);
  run_debug_fail(make_layout("rank/2", block_key, 2), "arena", ZCOLL_ERR_NO_MEMORY);
  run_plain_mixed_types(make_layout("rank/2", block_key, 2));
}

void section_interleaved() {
  for (int k : node_sizes())
    run_layout(make_layout("rank%" + std::to_string(g_size / k), inter_key, g_size / k), k == node_sizes().back());
}

void section_fallback() {
  run_layout(make_layout("one node", one_key, 0), false);
  run_layout(make_layout("a node per rank", own_key, 0), false);
}

const Section kSections[] = {
    {"block", section_block}, {"interleaved", section_interleaved}, {"fallback", section_fallback}};

}  // namespace

int main(int argc, char** argv) { return sections_main(argc, argv, kSections, load_fields); }
