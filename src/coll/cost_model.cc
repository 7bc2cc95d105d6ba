// The cost model (cost_model.h): link measurement, the sample, the predictions, and what
// the model learns from measured calls.
#include "coll/cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <new>
#include <vector>

#include <sched.h>

#include "codec/container.h"
#include "codec/stream.h"
#include "coll/call.h"
#include "coll/hierarchical.h"
#include "coll/transport.h"
#include "common/comm.h"

namespace zcoll::coll {

ModelState::ModelState() {
  for (auto& per_collective : learned)
    for (auto& per_size : per_collective)
      for (double& f : per_size) f = 1.0;
  for (auto& per_collective : own_range)
    for (auto& r : per_collective) {
      r[0] = INFINITY;
      r[1] = -INFINITY;
    }
}

namespace {

constexpr int kProbeTag = 7303;  // the transport uses 7301, local copies 7302
// A path never run at a size is tried once where it is predicted within this factor of the
// path chosen: the model's errors before it has learned are of this order (a link figure
// measured 7x too low on an oversubscribed host; a 1 MiB sample's codec speed 2-3x too low),
// and a path's factor is learned only from its own runs. One rule for every path, and the
// same margin keeps the fast path (surely_plain) from skipping such a path for good.
constexpr double kExplore = 3.0;
// A path that slowed (recheck()): re-checked early from this many calls after its last run,
// where its best run (of its last kSeen, or ever) beat the chosen path's prediction by this
// factor.
constexpr int kSpellCalls = 12;
constexpr double kSpellMargin = 1.1;
// A path predicted r >= kExplore times the chosen path's time runs again kFarCalls x (r - 1)
// calls after its last run, at least kFarFirst, then 2, 4, 8... times as late (recheck()).
constexpr double kFarCalls = 128, kFarFirst = 512;
// A schedule run right after plain MPI's calls runs slower than after its own: in its first
// runs on a communicator most (two ranks at 10 Gbit/s, 214 cells: 1.066x from the 2nd call,
// 1.018x from the 6th), and after them by about one small allreduce more: the range pass
// waited for the decision (expects_plain()) and then agrees apart (1 MiB: setup 80-111 us
// against 44-92; docs/netem/after_plain_parts/2026-12-07).
// A re-check amid a plain stretch that misses the bar by less than this may run once more
// (learn()).
constexpr double kColdRecheck = 1.5;
// What the fast path's periodic agreements may add to a stretch of plain calls (surely_plain()).
constexpr double kFastCheckShare = 0.01;

// ------------------------------------------------------------------ links

// Figures measured once per process, per class of pairs (0 intra, 1 inter): later
// communicators reuse them. Links do not change while a job runs.
struct LinkCache {
  std::mutex m;
  bool have[2] = {false, false};
  Link link[2];
  double reduce_cost = 0;
  // Seconds a codec call costs whatever its size (plan, header, checksums): the sample's
  // slices are small, so it is taken off their time (else small inputs look slow).
  double call_overhead[2] = {-1, -1};  // compress, decompress; -1: not measured yet
};
LinkCache& cache() {
  static LinkCache c;
  return c;
}

double env_number(const char* name, double fallback) {
  const char* s = std::getenv(name);
  if (!s || !*s) return fallback;
  char* end = nullptr;
  const double v = std::strtod(s, &end);
  return end && *end == '\0' && std::isfinite(v) && v > 0 ? v : fallback;
}

// The configured figures of a class, if any: beta from Gbit/s, alpha from microseconds.
bool configured(int cls, const zcoll_config& cfg, Link* l) {
  const double gbps = cls ? env_number("ZCOLL_LINK_GBPS", cfg.link_gbps) : env_number("ZCOLL_NODE_LINK_GBPS", 0);
  if (!(gbps > 0)) return false;
  const double us = cls ? env_number("ZCOLL_LINK_LATENCY_US", cfg.link_latency_us > 0 ? cfg.link_latency_us : 2.0)
                        : env_number("ZCOLL_NODE_LINK_LATENCY_US", 0.5);
  l->beta = 8.0 / (gbps * 1e9);
  l->alpha = us * 1e-6;
  return true;
}

// Ping-pong between ranks a and b. Latency: the best of 8 round trips of 8 bytes, halved.
// Bandwidth: the difference between transfers of s and 4s bytes (each answered by 8
// bytes), which cancels latency and the burst of a token-bucket link; s is sized from a
// first transfer so that 4s takes about 8 ms, between 64 KiB and 2 MiB.
constexpr size_t kProbeBytes = size_t{8} << 20;  // the ping-pong's largest transfer (4 x 2 MiB)

// buf: kProbeBytes on ranks a and b.
Link pingpong(MPI_Comm comm, int me, int a, int b, char* buf) {
  Link l;
  if (me != a && me != b) return l;
  const int peer = me == a ? b : a;
  const bool lead = me == a;
  char small[8] = {0};
  auto round = [&](size_t bytes) {  // one transfer a -> b and the 8-byte answer; a's time
    const double t = MPI_Wtime();
    if (lead) {
      MPI_Send(buf, static_cast<int>(bytes), MPI_BYTE, peer, kProbeTag, comm);
      MPI_Recv(small, 8, MPI_BYTE, peer, kProbeTag, comm, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf, static_cast<int>(bytes), MPI_BYTE, peer, kProbeTag, comm, MPI_STATUS_IGNORE);
      MPI_Send(small, 8, MPI_BYTE, peer, kProbeTag, comm);
    }
    return MPI_Wtime() - t;
  };
  double rtt = 1e30;
  round(8);
  for (int i = 0; i < 8; ++i) rtt = std::min(rtt, round(8));
  // The sizes must be the same on both sides: a decides and tells b.
  double first = round(size_t{64} << 10);
  double s_bytes = 0;
  if (lead) {
    const double rate = (64 << 10) / std::max(first - rtt, 1e-7);
    s_bytes = std::clamp(rate * 2e-3, double{64 << 10}, double{2 << 20});
    MPI_Send(&s_bytes, 1, MPI_DOUBLE, peer, kProbeTag, comm);
  } else {
    MPI_Recv(&s_bytes, 1, MPI_DOUBLE, peer, kProbeTag, comm, MPI_STATUS_IGNORE);
  }
  const size_t s = static_cast<size_t>(s_bytes);
  double t1 = 1e30, t4 = 1e30;
  for (int i = 0; i < 2; ++i) {
    t1 = std::min(t1, round(s));
    t4 = std::min(t4, round(4 * s));
  }
  if (lead) {
    l.alpha = rtt / 2;
    // The difference cancels latency and a token bucket's burst, but two noisy times can
    // make it tiny (a link thought free would make every call plain MPI): it must come
    // within 2x of the single transfer's rate, or that rate is used.
    const double direct = std::max(t4 - rtt, 1e-9) / (4.0 * static_cast<double>(s));
    const double diff = (t4 - t1) / (3.0 * static_cast<double>(s));
    l.beta = diff >= 0.5 * direct ? diff : direct;
  }
  return l;
}

// A barrier whose waiting ranks give their core away: while two ranks ping-pong, the others
// wait here rather than busy-poll in a blocking collective, which on a host with more ranks
// than cores (nodes emulated by namespaces) took the measuring pair's time slices and made
// the network look 27x slower than it was.
int yielding_barrier(MPI_Comm comm) {
  MPI_Request r;
  if (MPI_Ibarrier(comm, &r) != MPI_SUCCESS) return ZCOLL_ERR_MPI;
  for (int done = 0; !done;) {
    if (MPI_Test(&r, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return ZCOLL_ERR_MPI;
    if (!done) sched_yield();
  }
  return ZCOLL_SUCCESS;
}

// The core this process runs on, or -1 where the platform does not tell.
int current_cpu() {
#if defined(__linux__)
  return sched_getcpu();
#else
  return -1;
#endif
}

// Seconds of CPU time this thread has used, or a negative value where the platform does not
// tell.
double thread_cpu_seconds() {
#if defined(CLOCK_THREAD_CPUTIME_ID)
  timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
#endif
  return -1;
}

// The time of one codec call in the sample: the wall clock's, or the thread's CPU time where
// that is less. A slice of a 1 MiB call is 4096 values, some 10 us of work, and a rank
// descheduled in it (more ranks than cores: CI runs 4 on 2) measures the codec many times
// slower than it is; the agreement keeps the slowest rank's figure. With the wall clock, 4
// ranks on 2 cores agreed on up to 10.8 ns per byte (median 0.71), and 4 of 420 launches of
// the auto test ran a first-round call plain at 0.1 Gbit/s, where compression is predicted 4x
// faster; with this timer, up to 6.0 (a communicator's first call: its page faults are CPU
// time too; median 0.74), and none of 450, 150 of them beside a busy loop. Under SMPI the
// wall clock is the charged CPU time divided by the modelled thread count, the smaller, and
// stays in use.
class CodecTimer {
 public:
  CodecTimer() : wall_(now()), cpu_(thread_cpu_seconds()) {}
  double seconds() const {
    const double wall = now() - wall_;
    const double cpu = cpu_ >= 0 ? thread_cpu_seconds() - cpu_ : -1;
    return cpu >= 0 ? std::min(wall, cpu) : wall;
  }

 private:
  double wall_, cpu_;
};

// Seconds per byte of a plain SUM of two float vectors on this core (MPI's own
// reduction is of this kind; the model learns how far the MPI library is from it).
double measure_reduce_cost() {
  constexpr size_t n = 1 << 18;
  std::vector<float> x(n, 1.0f), y(n, 2.0f);
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    const double t = MPI_Wtime();
    for (size_t i = 0; i < n; ++i) y[i] += x[i];
    best = std::min(best, MPI_Wtime() - t);
  }
  volatile float sink = y[n / 2];
  (void)sink;
  return best / (n * sizeof(float));
}

// The fixed cost of a compress and a decompress call: the best of 5 on 64 values, after
// one to set up the thread's scratch.
void measure_call_overhead(double out[2]) {
  float x[64], y[64];
  for (int i = 0; i < 64; ++i) x[i] = 0.25f * static_cast<float>(i);
  zcoll_codec_params p;
  zcoll_codec_params_init(&p);
  p.threads = 1;
  p.eb = 1e-3;
  uint8_t buf[1024];
  out[0] = out[1] = 1e30;
  for (int rep = 0; rep < 6; ++rep) {
    size_t size = 0;
    const double t0 = MPI_Wtime();
    const int rc = codec::compress(&p, ZCOLL_FLOAT32, x, 64, buf, sizeof buf, &size, nullptr);
    const double t1 = MPI_Wtime();
    if (rc || codec::decompress(buf, size, ZCOLL_FLOAT32, y, 64, 1)) {
      out[0] = out[1] = 0;
      return;
    }
    if (rep) {
      out[0] = std::min(out[0], t1 - t0);
      out[1] = std::min(out[1], MPI_Wtime() - t1);
    }
  }
}

// ------------------------------------------------------------ predictions

int ceil_log2(int p) {
  int l = 0;
  while ((1 << l) < p) ++l;
  return l;
}

// Per-call quantities the formulas share (all times in seconds, sizes in bytes).
struct Inputs {
  int p = 1;
  double alpha = 0, beta = 0;   // the communicator's slowest link class
  double share = 1;             // flows that share one node's link in the all-pairs patterns
  double rho = 1;               // compressed / raw
  double comp = 0, decomp = 0;  // s per raw byte on the threads a piece gets
  double reduce = 0;            // s per byte of MPI's reduction
};

// Pipelined pieces overlap the codec with the wire, but not perfectly: the slower of the
// two plus a third of the other (checked against the 1 and 10 Gbit/s runs of
// docs/results.md; what remains is learned per collective, size and schedule).
double overlap(double wire, double cpu) { return std::max(wire, cpu) + 0.3 * std::min(wire, cpu); }

// Plain MPI, as MPICH and Open MPI run large messages. The reductions take the optimistic
// case across nodes, a ring's traffic (one flow per node link), not MPICH's recursive halving
// (every rank of a node crossing the network at once): the libraries differ, and a plain MPI
// modelled too slow is never measured, where one modelled too fast is measured and learned. At
// 16 nodes x 16 ranks (SIMULATED, SMPI's `ompi` selection) the pessimistic case put a 4 MiB
// allreduce at 8x the 1.37 ms it took, and AUTO ran a node-aware schedule at 2.0 ms for good.
double plain_time(int collective, const Inputs& m, double bytes) {
  const double p = m.p, L = ceil_log2(m.p), a = m.alpha, b = m.beta;
  switch (collective) {
    case ZCOLL_COLL_ALLGATHER: return (p - 1) * (a + bytes * b);
    case ZCOLL_COLL_ALLTOALL: return (p - 1) * (a + bytes * b * m.share);
    case ZCOLL_COLL_SCATTER:
    case ZCOLL_COLL_GATHER: return L * a + (p - 1) * bytes * b;
    case ZCOLL_COLL_BCAST:
      return m.p <= 3 || bytes < 512 * 1024 ? L * (a + bytes * b) : (L + p - 1) * a + 2 * (p - 1) / p * bytes * b;
    case ZCOLL_COLL_REDUCE_SCATTER: return (p - 1) * a + (p - 1) / p * bytes * (b + m.reduce);
    case ZCOLL_COLL_ALLREDUCE:
    case ZCOLL_COLL_REDUCE: return 2 * L * a + (p - 1) / p * bytes * (2 * b + m.reduce);
    default: return 0;
  }
}

// A compressed schedule (see the algorithm files); homomorphic combining costs about what
// compressing does (zcoll_combine_values quantizes the values it folds in).
double zcoll_time(int collective, int schedule, bool homomorphic, const Inputs& m, double bytes) {
  const double p = m.p, L = ceil_log2(m.p), a = m.alpha, b = m.beta, r = m.rho, C = m.comp, D = m.decomp;
  const double blk = bytes / p;  // the reductions' and bcast's blocks
  const double fold = homomorphic ? C : C + D + m.reduce;  // one ring step's codec work per byte
  switch (collective) {
    case ZCOLL_COLL_ALLGATHER:
      // Bruck stores and forwards whole rounds: little overlap.
      if (schedule == ZCOLL_ALGO_BRUCK) return L * a + (p - 1) * r * bytes * b + bytes * C + (p - 1) * bytes * D;
      return overlap((p - 1) * (a + r * bytes * b), bytes * C + (p - 1) * bytes * D);
    case ZCOLL_COLL_ALLTOALL: return overlap((p - 1) * (a + r * bytes * b * m.share), (p - 1) * bytes * (C + D));
    case ZCOLL_COLL_SCATTER: return overlap(L * a + (p - 1) * r * bytes * b, (p - 1) * bytes * C + bytes * D);
    case ZCOLL_COLL_GATHER: return overlap(L * a + (p - 1) * r * bytes * b, bytes * C + (p - 1) * bytes * D);
    case ZCOLL_COLL_BCAST:
      if (schedule == ZCOLL_ALGO_SCATTER_ALLGATHER)
        return overlap((L + p - 1) * a + 2 * (p - 1) / p * r * bytes * b, bytes * (C + D));
      return overlap(L * (a + r * bytes * b), bytes * (C + D));
    case ZCOLL_COLL_REDUCE_SCATTER: return overlap((p - 1) * (a + r * blk * b), (p - 1) * blk * fold + blk * D);
    case ZCOLL_COLL_ALLREDUCE:
      if (schedule == ZCOLL_ALGO_RECURSIVE_DOUBLING) return L * (a + r * bytes * b) + bytes * (C + L * C + D);
      return overlap(2 * (p - 1) * (a + r * blk * b), (p - 1) * blk * fold + (homomorphic ? 0 : blk * C) + bytes * D);
    case ZCOLL_COLL_REDUCE:
      return overlap((p - 1) * (a + r * blk * b) + L * a + (p - 1) * r * blk * b, (p - 1) * blk * fold + bytes * D);
    default: return 0;
  }
}

// Node-aware (hierarchical.h): plain stages inside a node on the intra-node link (the
// largest node's), the compressed stage (plain MPI for PLAIN_HIERARCHICAL) on the rails, whose
// k flows share each node's network link, each carrying a k-th of the vector.
double hierarchical_time(const zcoll_comm_s& c, int collective, int schedule, bool homomorphic, const Inputs& m,
                         double bytes) {
  const ModelState& s = *c.model;
  const int k = c.topo.rails, nodes = c.topo.nodes;
  Inputs node = m, rail = m;
  node.p = c.topo.max_node_size;
  node.alpha = s.intra.alpha;
  node.beta = s.intra.beta;
  node.share = 1;
  rail.p = nodes;
  rail.alpha = s.inter.alpha;
  rail.beta = s.inter.beta * k;
  rail.share = 1;
  const double slice = bytes / k;
  const bool plain = schedule == ZCOLL_ALGO_PLAIN_HIERARCHICAL;
  // The rail stage: the table's flat schedule, compressed, or plain MPI.
  auto on_rail = [&](int rail_collective, int rail_schedule, bool homo, double rail_bytes) {
    return plain ? plain_time(rail_collective, rail, rail_bytes)
                 : zcoll_time(rail_collective, rail_schedule, homo, rail, rail_bytes);
  };
  switch (collective) {
    case ZCOLL_COLL_ALLREDUCE:
      return plain_time(ZCOLL_COLL_REDUCE_SCATTER, node, bytes) +
             on_rail(ZCOLL_COLL_ALLREDUCE, ZCOLL_ALGO_RING, homomorphic, slice) +
             plain_time(ZCOLL_COLL_ALLGATHER, node, slice);
    case ZCOLL_COLL_BCAST:
      return plain_time(ZCOLL_COLL_SCATTER, node, slice) +
             on_rail(ZCOLL_COLL_BCAST, nodes > 3 ? ZCOLL_ALGO_SCATTER_ALLGATHER : ZCOLL_ALGO_BINOMIAL, false, slice) +
             plain_time(ZCOLL_COLL_ALLGATHER, node, slice);
    case ZCOLL_COLL_ALLGATHER:  // a round per `k` node ranks of the largest node
      return (c.topo.max_node_size + k - 1) / k * on_rail(ZCOLL_COLL_ALLGATHER, ZCOLL_ALGO_RING, false, bytes) +
             plain_time(ZCOLL_COLL_ALLGATHER, node, nodes * bytes);
    case ZCOLL_COLL_REDUCE:
      return plain_time(ZCOLL_COLL_REDUCE_SCATTER, node, bytes) +
             on_rail(ZCOLL_COLL_REDUCE, ZCOLL_ALGO_RING, homomorphic, slice) +
             plain_time(ZCOLL_COLL_GATHER, node, slice);
    case ZCOLL_COLL_REDUCE_SCATTER: {
      // The input packed (a copy at about the node link's rate) first. A rail carries, per
      // node, the blocks of up to `rows` node ranks (1 on equal nodes), and a rank on a rail
      // hands all but its own on inside its node.
      const double rows = (c.topo.max_node_size + k - 1) / k, block = bytes / m.p;
      return bytes * node.beta + plain_time(ZCOLL_COLL_REDUCE_SCATTER, node, bytes) +
             on_rail(ZCOLL_COLL_REDUCE_SCATTER, ZCOLL_ALGO_RING, homomorphic, rows > 1 ? nodes * rows * block : slice) +
             (rows > 1 ? node.alpha + (rows - 1) * block * node.beta : 0);
    }
    default: return 1e300;
  }
}

Inputs inputs(const zcoll_comm_s& c, double rho, double comp, double decomp) {
  const ModelState& s = *c.model;
  Inputs m;
  m.p = c.size;
  const Link& l = c.topo.multi_node() ? s.inter : s.intra;
  m.alpha = l.alpha;
  m.beta = l.beta;
  // The all-pairs pattern (alltoall) sends from every rank of a node across the network at
  // once.
  // Agreed figures only: on nodes of different sizes the largest, on ranks with different
  // codec thread counts the fewest (each rank's own would let the ranks decide apart).
  m.share = c.topo.multi_node() ? c.topo.max_node_size : 1;
  m.rho = rho;
  m.comp = comp / s.codec_threads;
  m.decomp = decomp / s.codec_threads;
  m.reduce = s.reduce_cost;
  return m;
}

// The schedules AUTO weighs for a collective besides plain MPI (CPRP2P is a baseline, never
// chosen; the node-aware ones, compressed or not, only where there are nodes of several ranks).
// The schedules a decision weighs; a fixed array, as a decision is made after the call's
// agreement, where an allocation that failed on one rank would leave the others waiting.
struct Paths {
  int path[ModelState::kPaths];
  int n = 0;
  const int* begin() const { return path; }
  const int* end() const { return path + n; }
};
Paths candidates(const zcoll_comm_s& c, int collective, bool homomorphic) {
  Paths out;
  for (int a = ZCOLL_ALGO_RING; a < ModelState::kPaths; ++a)
    if (algorithm_applies(collective, a) && (a != ZCOLL_ALGO_RECURSIVE_DOUBLING || homomorphic) &&
        (!node_aware(a) || c.topo.hierarchical()))
      out.path[out.n++] = a;
  return out;
}

double schedule_time(const zcoll_comm_s& c, int collective, int schedule, bool homomorphic, const Inputs& m,
                     double bytes) {
  return node_aware(schedule) ? hierarchical_time(c, collective, schedule, homomorphic, m, bytes)
                              : zcoll_time(collective, schedule, homomorphic, m, bytes);
}

int dtype_slot(int dtype) { return dtype == ZCOLL_FLOAT64 ? 1 : 0; }

int size_class(size_t bytes) {
  int k = 0;
  for (size_t b = size_t{256} << 10; b <= bytes && k + 1 < ModelState::kSizeClasses; b <<= 2) ++k;
  return k;
}

// The factor of a schedule not run yet at this size: the worst of those that have run in
// its group (they share the codec work and the links, where most of the model's error
// lies), but no more than plain MPI's once that has run here. Plain MPI's factor is what the
// links and the host cost beyond the model; a schedule's own also carries what the model
// misjudges in that schedule alone, which another need not share. (On 2 namespaces x 2 ranks,
// 4 ranks on 2 cores, a 1 MiB allreduce's ring, six steps each waiting on the scheduler, took
// 95-152 ms where plain MPI took 42 and recursive doubling, two steps, 32.5. Recursive
// doubling, inheriting the ring's factor, was predicted beyond 3x plain MPI's time: in 16
// calls at each rate it ran in none at ac1c089 and 27e037d, in 4 of 64 before.)
// The node-aware schedules (compressed or plain) are a group of their own: their plain
// stages inside a node go wrong in other ways, and the flat schedules inheriting that error
// would never be tried. Before any of its group has run: the other group's best factor where
// that is below `none`, as the error the groups share (a link figure measured too low) shows
// there first. (On 2x2 at 1 Gbit/s the node-aware bcast ran 8 times at 2.2x the flat
// binomial, which its bare model put just beyond the explore margin.)
double untried_factor(const ModelState& s, int collective, int size, int schedule, double none) {
  double worst = 0, other = none;
  for (int a = 1; a < ModelState::kPaths; ++a) {
    if (s.runs[collective][size][a] <= 0) continue;
    const double f = s.learned[collective][size][a];
    if (node_aware(a) == node_aware(schedule)) worst = std::max(worst, f);
    else other = std::min(other, f);
  }
  if (!(worst > 0)) return other;
  return s.runs[collective][size][0] > 0 ? std::min(worst, s.learned[collective][size][0]) : worst;
}

}  // namespace

// ------------------------------------------------------------------ API

namespace {
// The ranks that ping-pong for each class of pairs (-1: none on this communicator): the two
// lowest ranks of the first node with two ranks; rank 0 and a rank of another node.
// cpu: scratch of c.size ints.
int probe_pairs(const zcoll_comm_s& c, int* cpu, int pair[2][2]) {
  const Topology& t = c.topo;
  for (int r = 0; r < c.size && pair[0][1] < 0; ++r)
    for (int q = r + 1; q < c.size; ++q)
      if (t.node_of[q] == t.node_of[r]) {
        pair[0][0] = r;
        pair[0][1] = q;
        break;
      }
  // The inter-node peer: a rank of another node, preferably one on another core than rank 0
  // (where the platform tells). Where nodes are emulated on one host with more ranks than
  // cores, two ranks bound to one core ping-pong at the scheduler's pace, and the network
  // looked 27x slower than it was; which rank that is depends on how the launcher binds.
  std::fill(cpu, cpu + c.size, -1);
  if (c.size > 2 && t.nodes > 1) {
    int mine = current_cpu();
    if (MPI_Allgather(&mine, 1, MPI_INT, cpu, 1, MPI_INT, c.comm) != MPI_SUCCESS) return ZCOLL_ERR_MPI;
  }
  for (int q = 1; q < c.size; ++q) {
    if (t.node_of[q] == t.node_of[0]) continue;
    if (pair[1][1] < 0) pair[1][1] = q;
    if (cpu[0] < 0 || cpu[q] != cpu[0]) {
      pair[1][1] = q;
      break;
    }
  }
  if (pair[1][1] >= 0) pair[1][0] = 0;
  return ZCOLL_SUCCESS;
}

constexpr int kFigures = 7;  // local_figures()

// What measure_links probes.
struct ProbePlan {
  int pair[2][2] = {{-1, -1}, {-1, -1}};  // per class (0 intra, 1 inter), probe_pairs()
  Link given[2];                           // the configuration's figures, where is_given
  bool is_given[2] = {false, false};
  double need[3] = {0, 0, 0};  // agreed: per class, whether some rank has no figure; whether a probe rank is out of memory
  std::unique_ptr<char[]> buffer;  // the probe's, on its ranks
};

// Which classes of pairs need a probe, agreed. The probe's buffer is taken on its ranks
// before the agreement (another rank's cache or configuration may differ): a rank that
// cannot have it fails that agreement, not the probe. Never written unless the probe runs.
int plan_probe(const zcoll_comm_s& c, int* rank_scratch, ProbePlan* p) {
  if (probe_pairs(c, rank_scratch, p->pair)) return ZCOLL_ERR_MPI;
  {
    LinkCache& k = cache();
    std::lock_guard<std::mutex> lock(k.m);
    for (int cls = 0; cls < 2; ++cls) {
      p->is_given[cls] = configured(cls, c.cfg, &p->given[cls]);
      p->need[cls] = p->pair[cls][0] >= 0 && !p->is_given[cls] && !k.have[cls];
      const bool probes = c.rank == p->pair[cls][0] || c.rank == p->pair[cls][1];
      if (probes && !p->buffer) {
        p->buffer.reset(new (std::nothrow) char[kProbeBytes]);
        if (!p->buffer) p->need[2] = 1;
      }
    }
  }
  if (c.size > 1 && MPI_Allreduce(MPI_IN_PLACE, p->need, 3, MPI_DOUBLE, MPI_MAX, c.comm) != MPI_SUCCESS)
    return ZCOLL_ERR_MPI;
  if (p->need[2] > 0) {
    zcoll::set_error_detail("out of memory for the link probe's %zu bytes on one of its ranks", kProbeBytes);
    return ZCOLL_ERR_NO_MEMORY;
  }
  return ZCOLL_SUCCESS;
}

// This rank's figures to agree on (under MAX): v[0..3] each class's alpha and beta
// (configured, measured, or cached), v[4] the reduction's cost, v[5] 1 where timing it ran
// out of memory, v[6] minus the threads a piece gets here (at most a piece's chunks).
// The process's own figures are measured here once.
void local_figures(const zcoll_comm_s& c, const ProbePlan& p, const Link measured[2], double v[kFigures]) {
  const size_t chunk = c.cfg.codec.chunk_len ? c.cfg.codec.chunk_len : ZCOLL_DEFAULT_CHUNK_LEN;
  v[6] = -codec::thread_count(c.cfg.codec.threads, schedule::chunks_per_piece(chunk));
  LinkCache& k = cache();
  std::lock_guard<std::mutex> lock(k.m);
  v[5] = 0;
  try {
    if (!(k.reduce_cost > 0)) k.reduce_cost = measure_reduce_cost();
  } catch (const std::bad_alloc&) {
    v[5] = 1;
  }
  if (k.call_overhead[0] < 0) measure_call_overhead(k.call_overhead);
  for (int cls = 0; cls < 2; ++cls) {
    const Link l = p.is_given[cls] ? p.given[cls] : p.need[cls] > 0 ? measured[cls] : k.link[cls];
    v[2 * cls] = l.alpha;
    v[2 * cls + 1] = l.beta;
  }
  v[4] = k.reduce_cost;
}
}  // namespace

int measure_links(zcoll_comm_s& c, int* rank_scratch) {
  ProbePlan p;
  if (const int rc = plan_probe(c, rank_scratch, &p)) return rc;
  Link measured[2];
  for (int cls = 0; cls < 2; ++cls)
    if (p.need[cls] > 0) {
      measured[cls] = pingpong(c.comm, c.rank, p.pair[cls][0], p.pair[cls][1], p.buffer.get());
      if (c.size > 2 && yielding_barrier(c.comm)) return ZCOLL_ERR_MPI;
    }
  p.buffer.reset();
  // Agreed: the worst of every rank's figures, and whether a rank ran out of memory.
  double v[kFigures];
  local_figures(c, p, measured, v);
  if (c.size > 1 && MPI_Allreduce(MPI_IN_PLACE, v, kFigures, MPI_DOUBLE, MPI_MAX, c.comm) != MPI_SUCCESS)
    return ZCOLL_ERR_MPI;
  if (v[5] > 0) {
    zcoll::set_error_detail("out of memory timing the reduction on one rank");
    return ZCOLL_ERR_NO_MEMORY;
  }
  ModelState& s = *c.model;
  s.intra = {v[0], v[1]};
  s.inter = {v[2], v[3]};
  s.reduce_cost = v[4];
  s.codec_threads = static_cast<int>(-v[6]);
  ++s.epoch;
  LinkCache& k = cache();
  std::lock_guard<std::mutex> lock(k.m);
  for (int cls = 0; cls < 2; ++cls)
    if (p.need[cls] > 0) {
      k.link[cls] = cls ? s.inter : s.intra;
      k.have[cls] = true;
    }
  return ZCOLL_SUCCESS;
}

bool uses_model(const zcoll_comm_s& c, int collective) {
  return c.cfg.decision == ZCOLL_DECIDE_MODEL && configured_algorithm(c.cfg, collective) == ZCOLL_ALGO_AUTO &&
         c.model;
}

namespace {
// What a call through the agreement pays before its path runs (agreement, range pass,
// sample), learned once seen twice: a compressed call pays it every time, plain MPI's
// fast-path calls do not. `deferred`: what one pays that defers its range pass and runs
// plain MPI (the fast path's periodic agreements), where learned, else a compressed call's.
double agreement_cost(const ModelState& s, int collective, int size, bool deferred = false) {
  const int k = deferred && s.overhead_runs[collective][size][1] >= 2 ? 1 : 0;
  return s.overhead_runs[collective][size][k] >= 2 ? s.overhead[collective][size][k] : 0.0;
}

// The fastest of a collective's last kRecent codec samples (s per byte), of either dtype (as
// plain_wins() takes the cheaper dtype's figures), or `fallback` before any.
double recent_cost(const double (&recent)[2][ModelState::kRecent], const int (&n)[2], double fallback) {
  double best = 1e300;
  for (int k = 0; k < 2; ++k)
    for (int i = 0; i < std::min(n[k], ModelState::kRecent); ++i) best = std::min(best, recent[k][i]);
  return best < 1e300 ? best : fallback;
}

// Whether plain MPI wins a call of `bytes` whatever its data (see surely_plain()), from the
// agreed state alone; sets v's times.
bool plain_wins(const zcoll_comm_s& c, int collective, size_t bytes, ModelState::Verdict* v) {
  const ModelState& s = *c.model;
  // The cheaper dtype's figures: a rank may pass a derived datatype of floats where
  // another passes MPI_FLOAT, and both must reach the same answer here.
  const double comp = std::min(s.best_compress[0] > 0 ? s.best_compress[0] : 1e300,
                               s.best_compress[1] > 0 ? s.best_compress[1] : 1e300);
  const double decomp = std::min(s.best_decompress[0] > 0 ? s.best_decompress[0] : 1e300,
                                 s.best_decompress[1] > 0 ? s.best_decompress[1] : 1e300);
  if (!(comp < 1e300)) return false;  // no agreed codec figures yet: sample first
  const Inputs m = inputs(c, 0.0, comp, decomp);
  const int size = size_class(bytes);
  // Only once plain MPI's own time has been measured here twice (its factor learned, the
  // first run's set-up costs left out): a model that underrates plain MPI would otherwise
  // skip, for good, the calls that measure it.
  if (s.runs[collective][size][0] < 2) return false;
  const double* f = s.learned[collective][size];
  v->t_model = plain_time(collective, m, bytes);
  const double plain = v->t_plain = v->t_model * f[0];
  // A compressed call also pays the agreement, range pass and sample that this one skips. A
  // schedule never run here counts as up to kExplore faster than modelled (as in decide()).
  const double agreement = agreement_cost(s, collective, size);
  double best = 1e300;
  for (int a : candidates(c, collective, true))
    best = std::min(best, schedule_time(c, collective, a, true, m, bytes) *
                              (s.runs[collective][size][a] > 0 ? std::min(f[a], 1.0) : 1 / kExplore) +
                              agreement);
  if (!(plain < best)) {
    // Not certain, but likely: with the worst agreed ratio of this collective and what was
    // learned, plain MPI wins (a close call is not worth agreeing on each time).
    const double rho = std::max(s.rho[collective][0], s.rho[collective][1]);
    if (!(rho > 0)) return false;
    // With the codec speed decide() takes (the fastest of the collective's recent samples),
    // not the fastest ever, which only bounds the sure case above: a sample far faster than
    // the ones since made every call of a near tie go through the agreement only for
    // decide() to run plain MPI, 1.24x a fast-path call (10 calls in a row of a 64 MiB
    // alltoall at 10 Gbit/s).
    const Inputs mr = inputs(c, rho, recent_cost(s.recent_compress[collective], s.recent_n[collective], comp),
                             recent_cost(s.recent_decompress[collective], s.recent_n[collective], decomp));
    // A schedule not run yet at this size takes the worst factor of its group, as in
    // decide(); before any has run, it counts as up to kExplore faster than modelled (decide()
    // tries the best one once within that margin), so that this shortcut cannot keep
    // compression untried.
    // A schedule run only once counts at most at its bare model: its one run may have been
    // an outlier, which decide() runs again (see there).
    double likely = 1e300;
    for (int a : candidates(c, collective, true)) {
      const int runs = s.runs[collective][size][a];
      const double factor = runs > 1    ? f[a]
                            : runs == 1 ? std::min(f[a], 1.0)
                                        : untried_factor(s, collective, size, a, 1 / kExplore);
      likely = std::min(likely, schedule_time(c, collective, a, true, mr, bytes) * factor + agreement);
    }
    if (!(plain < likely)) return false;
  }
  return true;
}
}  // namespace

bool surely_plain(zcoll_comm_s& c, int collective, size_t bytes, Decision* d) {
  if (!uses_model(c, collective)) return false;
  ModelState& s = *c.model;
  ModelState::Verdict& v = s.verdict[collective];
  if (v.epoch != s.epoch || v.bytes != bytes) {
    v = ModelState::Verdict{};
    v.plain = plain_wins(c, collective, bytes, &v);
    v.epoch = s.epoch;
    v.bytes = bytes;
  }
  if (!v.plain) return false;
  const int size = size_class(bytes);
  // A re-check that beat the chosen path runs again at once (decide()), not at the stretch's
  // next periodic agreement, up to 256 calls away.
  if (s.confirm[collective][size] > 0) return false;
  // The 4th, 8th and 16th call here, then every 16th, go to the agreement all the same. They carry plain
  // MPI's times on this path (decide() learns their low order statistic), sees the data's ratio again,
  // and lets decide() re-check the other paths. Without it plain MPI's factor, learned from
  // its first two runs, would hold for good: on cesm_TS a 1 MiB bcast at 10 Gbit/s, learned
  // at 0.44 ms from those, took 0.85 ms after, and ran plain MPI in 28 of 30 calls where the
  // binomial took 0.42-0.54 ms. (The emulated link's bucket was 1.25 MB then, and a full one
  // let the first calls cross above the line rate; first runs that are not the later ones'
  // speed come from a real network too: connections set up, pages first touched.) Not more
  // often: the agreement's range pass and sample, which the fast path saves, cost about 40%
  // of a plain call on shared memory (with every 4th call, 4 of 30 calls paid it).
  // The 4th call of a stretch that follows a schedule's goes too (fast_calls restarts
  // there, in decide()): plain MPI took over when the schedule's factor rose, and where that
  // was a slow spell of the host, plain MPI's factor, learned before it, hides the same
  // spell. A 64 MiB reduce_scatter at 10 Gbit/s ran plain MPI for 9 calls at 1.2-1.5x the
  // ring's time, until the 8th. Not after a re-check while plain MPI held the choice: then
  // plain MPI's factor is as current as before, and the two extra agreements, whose turns
  // re-checked again, sent 27 of 100 calls of a 1 MiB reduce_scatter on 2 x 2 ranks at
  // 10 Gbit/s through the agreement, at 1.5x a fast-path call.
  // Past the 16th call the agreements thin out where each costs much against a plain call:
  // every 16th call, or every 32nd ... 256th, so that they add at most kFastCheckShare to
  // the stretch. A 256 KiB bcast on shared memory took 9.4 us plain and 16-50 us through the
  // agreement: every 16th call added 6% (zcoll-bench calls).
  const int n = ++s.fast_calls[collective][size];
  int every = 16;
  const double agreement = agreement_cost(s, collective, size, true);
  while (every < 256 && agreement > kFastCheckShare * every * v.t_plain) every *= 2;
  if (n == 4 || n == 8 || n == 16 || n % every == 0) return false;
  s.fast_collective = collective;
  s.fast_size = size;
  s.fast_model = v.t_model;
  ++s.skipped[collective][size];
  d->plain = d->fast = true;
  d->t_predicted = d->t_predicted_plain = v.t_plain;
  return true;
}

bool expects_plain(const zcoll_comm_s& c, int collective, size_t bytes) {
  if (!uses_model(c, collective)) return false;
  const ModelState& s = *c.model;
  const ModelState::Verdict& v = s.verdict[collective];
  if (v.epoch == s.epoch && v.bytes == bytes && v.plain) return true;
  const int size = size_class(bytes);
  return s.runs[collective][size][0] > 0 && s.stretch_after[collective][size] == 0;
}

namespace {
// Runs work(round) until the timer has moved, at most 16 times, and gives the seconds per
// run; false where work failed. A short chunk's slice (1024 values, 8 KB) compresses in
// about a microsecond: at the resolution of some timers, and under SimGrid's
// smpi/cpu-threshold (1 us of CPU time), below which SMPI charges nothing. Timed one by
// one, the slices measured 0 there, and a codec cost of 0 is the one way decide() keeps
// plain MPI without a probe: a 32 MiB f64 allreduce on 64 nodes (SIMULATED, chunk_len 1024)
// ran plain MPI in 8 calls of 8, 5.6 ms, where the ring took 1.1-1.3 ms.
template <class Work>
bool seconds_per_run(double* seconds, Work&& work) {
  constexpr int kMaxRounds = 16;
  int rounds = 0;
  double t = 0;
  const CodecTimer timer;
  do {
    if (!work(rounds)) return false;
    ++rounds;
    t = timer.seconds();
  } while (!(t > 0) && rounds < kMaxRounds);
  *seconds = t / rounds;
  return true;
}

// Below 4 MiB, the agreed calls of a collective (per dtype) sample until kFirstSamples of
// them have given the codec's speed; the speed is the fastest of those (call_figures()).
// One sample alone can be cold: the first call's touches its arena's pages and a codec
// nobody ran yet, and with several ranks to a core any rank's may be descheduled (the
// agreement keeps the slowest rank's). On 2 namespaces x 2 ranks at 10 Gbit/s a 1 MiB
// allgather's only sample rated compression 7x and decompression 15x slower than a warm one:
// every flat schedule was modelled at 25 ms, beyond 3x plain MPI's 5.7 ms, none was tried,
// and AUTO ran plain MPI in 38 of 40 calls where Bruck took 2.8 ms. The extra samples are
// 1.5% of the compression of a call each, on two more calls.
constexpr int kFirstSamples = 3;
constexpr size_t kEverySampleBytes = size_t{4} << 20;  // from here every call samples
}  // namespace

bool samples_codec(const ModelState& s, int collective, int dtype, size_t bytes) {
  const int k = dtype_slot(dtype);
  return bytes >= kEverySampleBytes || !(s.rho[collective][k] > 0) || s.recent_n[collective][k] < kFirstSamples;
}

void sample(zcoll_comm_s& c, int dtype, Agreement& a) {
  const size_t n = a.data_count, es = codec::element_size(dtype);
  if (!a.data || n == 0 || !es) return;
  zcoll_codec_params p = c.cfg.codec;
  p.threads = 1;
  p.ndims = 0;
  p.eb_mode = ZCOLL_EB_ABS;
  const size_t chunk = p.chunk_len ? p.chunk_len : ZCOLL_DEFAULT_CHUNK_LEN;
  // From 4 MiB, where every call samples: about 0.4% of the values (1/256), in up to 8
  // slices spread over them, each of 4096 values or more, at most a chunk. Some
  // collectives compress only (p - 1)/p of a rank's values (a reduce_scatter, an alltoall;
  // the ring allreduce at p = 2 half of them), so that is what keeps the sample within 3%
  // of the call's compression time. Below 4 MiB only a collective's first few calls sample
  // (samples_codec(); after them, this rank gives none: the others' ratio or the last agreed
  // one is used, decide()), so each takes more, about 1.5%: a slice of a few thousand values,
  // whose fixed costs weigh on its speed, would make compression look slower than it is.
  constexpr size_t kMinSlice = 4096;  // values, from 4 MiB
  const bool large = n * es >= kEverySampleBytes;
  double(&own)[2] = c.model->own_range[a.collective][size_class(n * es)];
  if (a.want_range && a.lo <= a.hi) {
    own[0] = a.lo;
    own[1] = a.hi;
  }
  if (!samples_codec(*c.model, a.collective, dtype, n * es)) return;
  const size_t target = large ? std::max(kMinSlice, n / 256) : std::max<size_t>(1024, n / 64);
  const size_t slices = std::clamp<size_t>(target / std::min(chunk, kMinSlice), 1, 8);
  size_t len = std::min(chunk, target / slices);
  len -= len % codec::kChunkLenStep;
  len = std::min(len, n);
  p.chunk_len = std::max(len, codec::kChunkLenStep);
  auto slice = [&](size_t i) {
    return static_cast<const uint8_t*>(a.data) + (n - len) * (2 * i + 1) / (2 * slices) * es;
  };
  if (c.cfg.codec.eb_mode == ZCOLL_EB_REL) {
    // The global range is known only after the agreement; this rank's share of it gives
    // a bound no larger than the call's, so the predicted ratio errs low. A call that
    // deferred its range pass (expects_plain()) takes the share its last pass here found,
    // widened to the slices': the same bound as the calls before it on the same data, for a
    // ratio comparable with theirs (the slices' range alone, about 0.4% of the values,
    // rated Nyx's ratio lower than the whole share does).
    double lo = a.lo, hi = a.hi;
    if (!a.want_range) {
      lo = own[0];
      hi = own[1];
      for (size_t i = 0; i < slices; ++i) {
        double l = INFINITY, h = -INFINITY;
        codec::value_range(static_cast<zcoll_dtype>(dtype), slice(i), len, 1, &l, &h);
        lo = std::min(lo, l);
        hi = std::max(hi, h);
      }
    }
    if (!(hi > lo)) return;
    p.eb = codec::rel_to_abs(c.cfg.codec.eb, lo, hi);
  }
  // The call's arena (about to hold its compressed bytes anyway) is the scratch: a fresh
  // buffer would cost its page faults at every call, a sizeable part of the 3% the sample
  // may take.
  const size_t bound = (zcoll_codec_bound(len, static_cast<zcoll_dtype>(dtype)) + 63) / 64 * 64;  // back aligned
  uint8_t* out = nullptr;
  try {
    out = c.reserve_arena(bound + len * es);
  } catch (const std::bad_alloc&) {
    // This rank has no arena now: the agreement tells every rank.
    a.rc = ZCOLL_ERR_NO_MEMORY;
    set_error_detail("rank %d could not allocate %zu bytes to sample the data (out of memory)", c.rank,
                     bound + len * es);
    return;
  }
  uint8_t* back = out + bound;
  // One timer over all the slices, not one per slice (see seconds_per_run).
  double raw = 0, packed = 0, t_comp = 0, t_decomp = 0;
  size_t size = 0;
  const bool compressed = seconds_per_run(&t_comp, [&](int round) {
    for (size_t i = 0; i < slices; ++i) {
      if (codec::compress(&p, dtype, slice(i), len, out, bound, &size, nullptr)) return false;
      if (round == 0) {
        raw += static_cast<double>(len * es);
        packed += static_cast<double>(size - codec::kHeaderBytes);
      }
    }
    return true;
  });
  // Decompression's speed follows the ratio closely: one slice (the last, still in out)
  // tells it, for a fraction of what decompressing every slice would cost.
  if (!compressed || !seconds_per_run(&t_decomp, [&](int) { return !codec::decompress(out, size, dtype, back, len, 1); }))
    return;
  double overhead[2];
  {
    LinkCache& k = cache();
    std::lock_guard<std::mutex> lock(k.m);
    overhead[0] = std::max(k.call_overhead[0], 0.0);
    overhead[1] = std::max(k.call_overhead[1], 0.0);
  }
  // The collective compresses pieces of several chunks: the fixed cost matters little there.
  t_comp = std::max(t_comp - static_cast<double>(slices) * overhead[0], 0.3 * t_comp);
  t_decomp = std::max(t_decomp - overhead[1], 0.3 * t_decomp);
  a.rho = std::min(1.0, packed / raw);
  a.compress_cost = t_comp / raw;
  a.decompress_cost = t_decomp / static_cast<double>(len * es);
}

namespace {

// How far a learned factor may stray from the model: only a guard against a nonsense time.
// It must not bind on a real host: with 4 ranks on 2 cores a 1 MiB call took 30-210 ms in
// the scheduler's steps against models of 1.3-2.3 ms, and with the limit at 16 every path
// sat at it, the choice followed the bare models, and the node-aware bcast (modelled
// fastest, 33-208 ms) held the calls where plain MPI took 44-59 ms.
constexpr double kFactorLimit = 1024;

// The low order statistic a path's factor is learned as, of n >= 1 times (reordered): the
// lowest of one or two, the second lowest of three to five, about the 0.3 quantile beyond
// (the 5th lowest of 16). One rule for a path's runs and plain MPI's fast-path calls: a
// median for one against a low quantile for the other would hand a close call to whichever
// path's times spread more.
double low_order(double* v, int n) {
  const int q = n < 3 ? 0 : std::max(1, (n - 1) * 3 / 10);
  std::nth_element(v, v + q, v + n);
  return v[q];
}

// Whether a path's last run here took over 1.25x its fastest: it met a slow spell of the
// host, or it has slowed. Its fastest ever, not of its last kSeen runs: a spell can outlast
// those seven.
bool slowed(const ModelState& s, int collective, int size, int path) {
  const int runs = s.runs[collective][size][path];
  if (runs == 0) return false;
  const double last = s.seen[collective][size][path][(runs - 1) % ModelState::kSeen].seconds;
  return last > 1.25 * s.fastest_run[collective][size][path];
}

// Whether the last call here through the agreement ran a schedule that had slowed: a plain
// stretch after it may have met the same slow spell (without this, the stretch is anchored
// at plain MPI's factor from before the spell; test HostSlowSpellDoesNotHandPlainMpiTheCalls
// fails).
bool after_slowed_schedule(const ModelState& s, int collective, int size) {
  const int path = s.stretch_after[collective][size];
  return path != 0 && slowed(s, collective, size, path);
}

// A path's factor: the low order statistic of its last runs' measured/predicted ratios, each
// predicted for that run's ratio and bytes with the codec speed given (the model's now). The
// factor corrects what the model gets wrong about a path, not what the sample got wrong about
// the codec, which the model's input now carries: a factor learned against an earlier model
// mixes the two. (At 8 nodes x 16 ranks, SIMULATED, the first samples rated the codec 7x
// slower than the later ones; the ring, probed while its model said 8.4 ms, ran in 6.5 ms;
// its factor of 0.77 then scaled the model's later 4 ms to 3.5 ms, below the node-aware
// schedule's 3.6 ms, and AUTO ran the ring, 6.2 ms a call.) `lowest`: the lowest ratio of
// those runs and of the path's best run ever (the spell re-checks' prediction).
double factor_of(const zcoll_comm_s& c, int collective, int size, int path, bool homomorphic, double comp,
                 double decomp, bool lowest = false) {
  const ModelState& s = *c.model;
  const int n = std::min(s.runs[collective][size][path], ModelState::kSeen);
  double ratio[ModelState::kSeen + 1];
  int k = 0;
  Inputs m = inputs(c, 0.0, comp, decomp);  // only the ratio differs between runs
  for (int i = 0; i < n + (lowest && n > 0); ++i) {
    const ModelState::Run& r = i < n ? s.seen[collective][size][path][i] : s.best_run[collective][size][path];
    m.rho = r.rho;
    const double model = path ? schedule_time(c, collective, path, homomorphic, m, r.bytes)
                              : plain_time(collective, m, r.bytes);
    if (model > 0) ratio[k++] = r.seconds / model;
  }
  if (k && lowest) return std::clamp(*std::min_element(ratio, ratio + k), 1 / kFactorLimit, kFactorLimit);
  return k ? std::clamp(low_order(ratio, k), 1 / kFactorLimit, kFactorLimit) : s.learned[collective][size][path];
}

// Learns the last decided call's time (the slowest rank's, its path only) into its path's
// factor, and what its agreement cost into the overhead of its collective and size.
void learn(zcoll_comm_s& c, double seconds, double overhead, bool range_deferred) {
  ModelState& s = *c.model;
  ++s.epoch;
  if (s.last_collective >= 0 && seconds > 0 && s.last_model > 0) {
    int& runs = s.runs[s.last_collective][s.last_size][s.last_path];
    // The factor follows what was measured, robustly: one run sets it outright (a model
    // off by 4x must not take several calls to notice); after two runs it is the faster
    // (the first also paid for first-touch pages and connection set-up, and a plain MPI
    // measured too slow only sends the next calls to compression, which goes on learning);
    // after more, the second fastest of the last kSeen (seven). The noise of a shared host only
    // ever adds time, and a path's times are skewed: at 1 Gbit/s a cesm_TS 64 MiB ring
    // allreduce took 162-333 ms (median 187) where recursive doubling took 201-243 (median
    // 209). A median of the last three put the ring past recursive doubling
    // whenever two of three ring calls were slow, and AUTO ran recursive doubling in 38 of
    // 100 calls (1.10x the ring's median). A low order statistic of several runs sees through
    // that tail, and a path re-checked only now and then (every 8th-64th call) is seen faster
    // again after two fast runs; one fast run alone does not move it. A path that has
    // really slowed is seen slower after six slow runs of seven; no tight limit: a schedule
    // the model misjudges by 5x (the node-aware ones on an oversubscribed host) must still
    // come to be seen as slow. Seven, not five: where one call in six or seven is slow on
    // its own (this 2-core host), four slow runs of five come by chance and hand the calls
    // to a runner-up for a band's length. Replayed on 32 studies' measured columns (1146
    // cells, zcoll_auto_study_replay), the second lowest of seven missed 1.05x in 3.0% of
    // the plays against 3.4% with five (docs/results.md).
    s.seen[s.last_collective][s.last_size][s.last_path][runs % ModelState::kSeen] = {seconds, s.last_rho, s.last_bytes};
    double& fastest = s.fastest_run[s.last_collective][s.last_size][s.last_path];
    double& fastest_warm = s.fastest_warm[s.last_collective][s.last_size][s.last_path];
    const double fastest_before = fastest, warm_before = fastest_warm;
    fastest = fastest > 0 ? std::min(fastest, seconds) : seconds;
    double& best_ratio = s.best_ratio[s.last_collective][s.last_size][s.last_path];
    if (!(best_ratio > 0) || seconds < best_ratio * s.last_model) {
      best_ratio = seconds / s.last_model;
      s.best_run[s.last_collective][s.last_size][s.last_path] = {seconds, s.last_rho, s.last_bytes};
    }
    if (s.last_warm) fastest_warm = fastest_warm > 0 ? std::min(fastest_warm, seconds) : seconds;
    ++runs;
    s.learned[s.last_collective][s.last_size][s.last_path] =
        factor_of(c, s.last_collective, s.last_size, s.last_path, s.last_homomorphic, s.last_comp, s.last_decomp);
    // A re-check amid a plain stretch (recheck_cold) that missed the bar by less than
    // kColdRecheck runs once more at the next call, warm, and that run is judged by the bar
    // again (decide()). In the two-rank cesm_TS study at 10 Gbit/s a 1 MiB allgather's Bruck
    // ran 1.23-1.26 ms in its re-checks, each after plain calls, plain MPI about 1.0 ms, and
    // 0.73 ms once it ran call after call (from the 70th): plain MPI held 67 of 100 calls.
    // Only where the schedule's warm speed is unknown here or beat the bar, and within
    // kColdRecheck of its fastest run: a schedule known slower when warm loses nothing by a
    // cold re-check (test CompressedCallsPayTheirAgreement), and a slow spell of the host
    // would meet the second run as well (HostSlowSpellDoesNotHandPlainMpiTheCalls: a ring at
    // 1.8x its fastest).
    const bool cold = s.recheck_cold && seconds < kColdRecheck * s.recheck_bar &&
                      seconds < kColdRecheck * fastest_before && !(warm_before >= s.recheck_bar);
    if (s.recheck_bar > 0 && (seconds < s.recheck_bar || cold)) {
      s.confirm[s.last_collective][s.last_size] = s.last_path + 1;
      s.judge_again[s.last_collective][s.last_size] = !(seconds < s.recheck_bar);
    }
    // A fixed cost: noise only adds to it, so the least seen. The first call's (cold caches,
    // the first sample) is not used on its own: surely_plain() waits for a second.
    // A plain call whose range pass waited for the decision paid less than a compressed one
    // does: learned apart.
    const int k = range_deferred ? 1 : 0;
    double& o = s.overhead[s.last_collective][s.last_size][k];
    o = s.overhead_runs[s.last_collective][s.last_size][k]++ ? std::min(o, overhead) : overhead;
  }
  s.last_collective = -1;
  s.recheck_bar = 0;
  s.recheck_cold = false;
}

// The codec figures of this call (the ratio, s per byte compressing and decompressing): the
// agreed ones, or (no rank sampled) the last ones of this collective.
struct CallFigures {
  double rho = 0, comp = 0, decomp = 0;
};
CallFigures call_figures(ModelState& s, int collective, int k, const Agreement& a) {
  CallFigures g{a.rho, a.compress_cost, a.decompress_cost};
  if (g.rho > 0) s.rho[collective][k] = g.rho;
  else g.rho = s.rho[collective][k] > 0 ? s.rho[collective][k] : 0.5;
  if (!(g.comp > 0)) return {g.rho, s.best_compress[k], s.best_decompress[k]};
  s.best_compress[k] = s.best_compress[k] > 0 ? std::min(s.best_compress[k], g.comp) : g.comp;
  s.best_decompress[k] = s.best_decompress[k] > 0 ? std::min(s.best_decompress[k], g.decomp) : g.decomp;
  // The codec's speed is the fastest of this collective's last kRecent samples, not this
  // call's alone: a sample taken right after a plain MPI call runs cold, up to 2x slower
  // than after a compressed one (a 16 MiB allreduce at 10 Gbit/s: the ring modelled at
  // 6.0-7.0 ms after ring calls, 10.6-12.7 ms after plain ones), so compression, looking
  // slower, kept losing to plain MPI once it had run (the last 14 of 30 calls, at 1.3x
  // the ring's time). The ratio is this call's: it is the data's.
  const int slot = s.recent_n[collective][k]++ % ModelState::kRecent;
  s.recent_compress[collective][k][slot] = g.comp;
  s.recent_decompress[collective][k][slot] = g.decomp;
  const int n = std::min(s.recent_n[collective][k], ModelState::kRecent);
  g.comp = *std::min_element(s.recent_compress[collective][k], s.recent_compress[collective][k] + n);
  g.decomp = *std::min_element(s.recent_decompress[collective][k], s.recent_decompress[collective][k] + n);
  return g;
}

// Each path's prediction for one call (path 0 is plain MPI; 0 for a path not weighed).
struct Predictions {
  double model[ModelState::kPaths] = {};  // the bare model
  double pred[ModelState::kPaths] = {};   // model x factor, and a schedule's agreement
  bool ran[ModelState::kPaths] = {};      // run here before
  double agreement = 0;
  // A path that slowed (slowed()): its prediction at the best of its last runs and of its best
  // run ever (0: none).
  double before_spell[ModelState::kPaths] = {};
  int best = -1;       // the schedule predicted fastest
  double model_best = 1e300;  // the lowest bare model of a schedule
  int untried = -1;    // the untried schedule predicted fastest (see decide())
};

// A schedule's prediction also counts the agreement its every call pays, which plain MPI's
// fast path skips: on shared memory a 64 MiB bcast's binomial tree ran at plain MPI's speed,
// about 11.3 ms, and its calls took a median of 13.8 ms with the agreement and the range
// pass, against plain MPI's 11.0.
Predictions predict_paths(const zcoll_comm_s& c, int collective, int size, bool homomorphic, const Inputs& m,
                          size_t bytes, double plain_model) {
  const ModelState& s = *c.model;
  const int* runs = s.runs[collective][size];
  const double* f = s.learned[collective][size];
  Predictions p;
  p.model[0] = plain_model;
  p.pred[0] = plain_model * f[0];
  p.ran[0] = runs[0] > 0;
  p.agreement = agreement_cost(s, collective, size);
  double best = 1e300;
  for (int alg : candidates(c, collective, homomorphic)) {
    p.model[alg] = schedule_time(c, collective, alg, homomorphic, m, bytes);
    p.model_best = std::min(p.model_best, p.model[alg]);
    p.ran[alg] = runs[alg] > 0;
    p.pred[alg] = p.model[alg] * (p.ran[alg] ? f[alg] : untried_factor(s, collective, size, alg, 1.0)) + p.agreement;
    if (p.pred[alg] < best) {
      best = p.pred[alg];
      p.best = alg;
    }
    if (!p.ran[alg] && (p.untried < 0 || p.pred[alg] < p.pred[p.untried])) p.untried = alg;
  }
  return p;
}

void run_path(Decision* d, int path) {
  d->plain = path == 0;
  if (path) d->choice.schedule = path;
  d->probe = true;
}

// The choice from the predictions, and the first runs that measure it (d->probe).
void first_choice(const ModelState& s, int collective, int size, const Predictions& p, bool have_codec,
                  Decision* d) {
  const int* runs = s.runs[collective][size];
  const double best = p.best >= 0 ? p.pred[p.best] : 1e300;
  if (p.best >= 0) d->choice.schedule = p.best;
  d->plain = !(best < d->t_predicted_plain) || !have_codec;
  // Plain MPI not yet measured here, and compression predicted to win by less than 2x:
  // measure plain MPI once first. The model's error is of that order before it has learned
  // anything, and a wrong first guess for compression would never be corrected (plain MPI's
  // factor is learned only from plain calls).
  // The unscaled models count too: a schedule's learned factor can make it look 10x faster
  // than modelled where the model's common inputs (a link figure) were off, and plain MPI,
  // sharing that error, would then never be measured.
  if (!d->plain && !p.ran[0] && (best > 0.5 * d->t_predicted_plain || p.model_best > 0.5 * p.model[0]))
    d->plain = d->probe = true;
  // The converse: plain MPI measured here, no compressed schedule tried yet, and the best one
  // predicted within kExplore of plain MPI: run it once. Otherwise a model that overrates the
  // compressed path's cost (a fixed cost per call, a reduction plain MPI does slowly, a cold
  // sample) would never be corrected, as a schedule's factor is learned only from its own
  // runs. One call per collective and size class.
  if (d->plain && have_codec && p.ran[0] && best < kExplore * d->t_predicted_plain &&
      std::none_of(p.ran + 1, p.ran + ModelState::kPaths, [](bool r) { return r; })) {
    d->plain = false;
    d->probe = true;
  }
  // Plain MPI's first two runs are learned at once (the fast path waits for the second),
  // and no other probe takes their place.
  if (d->plain && runs[0] < 2) d->probe = true;
}

// Every 8th call here, of the other paths already run here (plain MPI or a
// schedule) and predicted within 1.1x of the chosen one, the one run least recently runs
// instead; every 16th call within 1.5x, every 32nd within 1.75x, every 64th within kExplore.
// A factor learned from a few noisy calls can hold a wrong choice, and nothing else would
// run the other path again: at 1 Gbit/s a ring allreduce ran at 1.7x its usual time for a
// dozen calls, and recursive doubling, 1.3x the usual ring, then held every later call; on
// shared memory six slow plain calls of twelve set plain MPI's factor to 1.8x the
// schedules', and Bruck and the ring, each the other's runner-up, held 69 calls at 1.9x
// plain MPI's time. Each band costs at most about 3% of the calls' time (10% on one call
// in 8, 50% on one in 16, 75% on one in 32, 200% on one in 64). The narrowest was 1.25x:
// the studies' replays missed 1.05x in 394 of 3800 plays (c8efc36 2 x 2), 3189 of 108870
// (held out), 589 of 7600 (the A/B launches) and 4596 of 25628 (980 cells of the 16-40-call
// studies, none used to choose), against 382, 3142, 552 and 4488 at 1.1x (1.15x: 382, 3171,
// 572, 4511; 1.05x: 384, 3171, 543, 4472). A path 1.1-1.25x slower than the chosen one is
// re-checked every 16th call instead, and one that close costs little while it waits. The
// 32-call band was 2x and a slowed path's wait 16 calls (kSpellCalls): at 1.75x and 12 the
// replays missed in 375, 3078, 519 and 4446 plays (and in fewer or as many on each set read
// round eight times, 760-call plays).
// A path re-checked k times takes one in 2^k of its turns (k at most 3): recursive doubling
// at 1.12x the ring, then within every band, ran at every 8th call of a 64 MiB allreduce and
// cost 1.5% of the calls' time, re-checks that confirmed the ring each time. Paths not re-checked
// yet keep every turn, and a path's count starts over when it is chosen, so the path that
// just lost the choice (a spell met it) comes back as soon as before. The others' counts go
// on across changes of the choice: where every change restarted every count, a choice that
// went back and forth (a spell, a near tie) brought each runner-up back at every turn, and
// the studies' replays missed 1.05x in 416 of 3800 plays (c8efc36 2 x 2), 3207 of 108870
// (held out) and 625 of 7600 (the A/B launches), against 394, 3189 and 589 now (test
// ChoiceGoingBackAndForthDoesNotRestartEveryBackoff).
// A path that slowed (its last run over 1.25x its fastest, slowed()) and whose best run, of
// its last kSeen or its best ever (a spell can fill all seven), beat the chosen path's
// prediction by kSpellMargin takes the narrowest band's turns, whatever its factor says,
// from kSpellCalls calls after its last run; such a re-check that beats the chosen path is
// run once more. A spell of the host that outlasts a few runs of the chosen path lifts that
// path's factor alone (nothing else ran in it), and the path chosen next, its factor learned
// in a quiet spell, would hold until the band of the lifted factor came round. On 2
// namespaces x 2 ranks at 1 Gbit/s, four ring runs of a 1 MiB allreduce at 7.8-15.6 ms
// (3.0-3.5 ms before and after) handed the node-aware schedule, 1.3x slower, the next 75
// calls: the ring, 2.4x the node-aware schedule by its lifted factor, came up in the 64-call
// band only. The wait lets the spell pass (a re-check in it confirms nothing and backs the
// path off: a plain MPI whose own spell covered calls 9-24 came back 16 calls later); the
// margin leaves alone a path that is slower now than in its first runs and was never much
// faster than the chosen one (a 1 MiB bcast's plain MPI, 0.53 ms in its first five calls,
// 0.85 ms after, against the binomial tree's 0.54 ms).
// Where plain MPI holds the choice, such a path is re-checked at the stretch's next
// agreement instead, turn or no turn, from 4 calls after its last run (8, 16, 32 after 1-3
// such re-checks): a schedule pushed out as a spell ended leaves plain MPI a stretch whose
// calls, past the spell, beat the schedule's lifted factor, and the stretch's agreements
// come at its 4th, 8th and 16th call only. A 64 MiB reduce_scatter at 10 Gbit/s, a spell of
// 5-12 calls at 1.8x on every path: plain MPI, 1.45x the ring's time, held 6-15 calls after
// spells of some lengths without it (test HostSlowSpellDoesNotHandPlainMpiTheCalls).
// Past the widest band, a path predicted r times the chosen path's time runs again 128 x
// (r - 1) calls after its last run, 512 at least, 2^k times as late after k re-checks of it
// (kFarCalls, kFarFirst; the count the bands back off by): each such run costs at most
// about 0.8% of the calls' time, and less each time. Nothing else runs such a path again,
// and a spell of the host where the communicator begins can put it there for good: every
// path is learned inside the spell, none slows after it (slowed(): its fastest run is in the
// spell too), and one the spell met harder stays past 3x. On 2 namespaces x 2 ranks at 1
// Gbit/s a 1 MiB allreduce's ring took 13-31 ms in a 27-call spell, recursive doubling 5-11
// ms, against 2.4 and 2.9 ms outside it (c8efc36); played from the spell's start,
// recursive doubling held every later call at 1.2x the ring's time (test
// PathLearnedInsideASpellComesBack). Not sooner: at 32 x (r - 1) from 128 calls the studies'
// replays, read round four times (380 calls a play), took more time over all calls in 382 of
// 1266 cells, up to 3.0%, and less in 11, by 0.2% at most; at these figures, over 760 calls,
// at most 0.9% more, 0.1% on the geometric mean, no median moved past 0.4%, and 5 cells
// gained 0.01-0.09% (docs/results.md).
// The bands count calls, the fast path's included: counted in agreements alone (every 16th
// call of a plain stretch) a runner-up within 1.25x came up every 128th call. cesm_TS's 1 MiB
// allreduce at 10 Gbit/s ran plain MPI in 91 of 100 calls where the ring, slow in its two
// early runs, was 1.058x faster. So a turn is the last multiple of 8 calls passed since the
// last agreement; with the fast path's stride of 16 it falls on the 1.5x band or wider.
// `counts`: whether this call advances the clock (it has not been decided by a probe).
void recheck(ModelState& s, int collective, int size, int chosen, const Predictions& p, bool counts, Decision* d) {
  int* last_ran = s.last_ran[collective][size];
  int* rechecks = s.rechecks[collective][size];
  if (s.chosen[collective][size] != chosen + 1) rechecks[chosen] = 0;
  s.chosen[collective][size] = chosen + 1;
  if (!counts) return;
  int& clock = s.decided[collective][size];
  const int before = clock;
  clock += 1 + s.skipped[collective][size];
  s.skipped[collective][size] = 0;
  const int n = clock - clock % 8;  // this call's turn, if it has one
  const bool turn = n > before;
  if (!turn && chosen != 0) return;  // between turns, only a plain stretch's spell re-check
  const double margin = !turn ? 0.0 : n % 64 == 0 ? kExplore : n % 32 == 0 ? 1.75 : n % 16 == 0 ? 1.5 : 1.1;
  int alt = -1;
  auto backoff = [&](int path) { return std::min(rechecks[path], ModelState::kMaxRecheckBackoff); };
  auto back_from_spell = [&](int path) {
    return p.before_spell[path] > 0 && kSpellMargin * p.before_spell[path] < p.pred[chosen] &&
           clock - last_ran[path] >= (chosen == 0 ? 4 << backoff(path) : kSpellCalls);
  };
  auto far_turn = [&](int path) {
    const double r = p.pred[path] / p.pred[chosen];
    return turn && r >= kExplore &&
           clock - last_ran[path] >=
               std::max(kFarFirst, kFarCalls * (r - 1)) * static_cast<double>(1 << std::min(rechecks[path], 16));
  };
  for (int path = 0; path < ModelState::kPaths; ++path)
    if (path != chosen && p.ran[path] && p.model[path] > 0 &&
        (((p.pred[path] < margin * p.pred[chosen] || back_from_spell(path)) &&
          (!turn || (n / 8) % (1 << backoff(path)) == 0)) ||
         far_turn(path)) &&
        (alt < 0 || last_ran[path] < last_ran[alt] || (last_ran[path] == last_ran[alt] && p.pred[path] < p.pred[alt])))
      alt = path;
  if (alt < 0) return;
  const bool far_alt = far_turn(alt);
  run_path(d, alt);
  ++rechecks[alt];
  // From the wide bands only: there the next re-check is 32-64 calls away, where in the
  // narrow ones it comes within 8-16, and a host spell just over leaves the chosen
  // path's factor high for a call or two (a re-check confirmed on that handed a 64 MiB
  // reduce_scatter to plain MPI, 1.45x slower, for 11 calls).
  // And from any band where a schedule had run only twice: its factor is then the faster of
  // two runs, which can both be cold (its first runs, on a communicator just made), and one
  // fast third run does not move a second-lowest. On 2 namespaces x 2 ranks at 1 Gbit/s a
  // 1 MiB reduce_scatter's ring took 3.46 and 3.15 ms in the communicator's first two calls,
  // 1.6-2.2 ms after; the node-aware schedule, 1.9-3.0 ms, held 28 of the next 29 calls
  // though the 16th call's re-check ran the ring in 1.99 ms, until the 2x band's re-check
  // (the 32nd call) was confirmed.
  // And wherever plain MPI holds the choice: its stretch goes through the agreement every
  // 16th-256th call only, so the next band comes as late as a wide one does. On 2 x 2 ranks
  // at 10 Gbit/s a 1 MiB allreduce's ring, its first two runs cold (4.4 ms), was re-checked
  // at plain MPI's predicted time (2.9 ms) and ran next 48 calls later (AUTO 1.11x the ring).
  if (margin > 1.5 || far_alt || chosen == 0 || (alt > 0 && s.runs[collective][size][alt] == 2) || back_from_spell(alt))
    s.recheck_bar = p.pred[chosen] - (alt ? p.agreement : 0.0);  // for its own time
  s.recheck_cold = chosen == 0 && alt > 0;
}

// A path run only once here and predicted close to the path chosen (plain MPI within 2x, a
// schedule within 1.25x, or a path that would beat the chosen one at its bare model, a
// schedule also at the chosen schedule's factor where that is below 1) runs once more, plain
// MPI first. Its one run may have been cold: the communicator's first call (first-touch pages,
// a TCP connection idle since set-up) or the schedule's first (its buffers), and a factor
// learned from it alone can be 2x too high, or 19x (a 1 MiB bcast's first call at 1 Gbit/s:
// 14.7 ms against 0.78 ms after), with nothing to run the path again before the next
// re-check (on shared memory, a 1 MiB allgather ran Bruck five times at 2.2x plain MPI's
// time; at 1 Gbit/s that bcast then ran plain MPI nine times, 11x). The chosen schedule's
// factor counts because it carries what the model misjudges for every schedule alike (a
// link figure; plain MPI's factor does not: it has no codec): a 16 MiB bcast at 2.5 Gbit/s
// had the binomial tree modelled at 9.7 ms and scatter-allgather at 11.1 ms; the tree's one
// run, the communicator's first, took 13.8 ms, scatter-allgather then 6.1-6.4 ms (factor
// 0.55), and the tree, 5.0 ms once warm, never ran again in 29 calls.
// The second run is learned at once, and the factor becomes the faster of the two.
// Plain MPI counts as run once until its third run: its first two come together (the
// communicator's first call and the next, learned at once above), and both can be cold. On
// a 16-core node a 16 MiB bcast's plain MPI took 9.1 and 7.7 ms in them, 3.8 ms after; the
// binomial tree, 3.9-4.4 ms, then held every call. Under load on shared memory a 2-rank
// allreduce's plain MPI took 4-6 ms in the communicator's first call and 0.6-1.0 ms after,
// the ring 1.1-1.4 ms, and the ring held every later call (7 of 40 runs of test
// mpi_image_stacking_auto_np2 with one core kept busy; plain MPI's bare model, a fraction of
// the ring's time, now runs it again). A third run faster than the chosen path
// is predicted to run is confirmed as a re-check's is: one fast run of three does not move
// the factor (the faster of the cold two), a second does.
void run_again(ModelState& s, int collective, int size, int chosen, const Predictions& p, Decision* d) {
  const int* runs = s.runs[collective][size];
  const double* f = s.learned[collective][size];
  int again = -1;
  for (int path = 0; path < ModelState::kPaths && again != 0; ++path)
    if (path != chosen && p.model[path] > 0 && runs[path] >= 1 && runs[path] <= (path ? 1 : 2) &&
        (p.pred[path] < (path ? 1.25 : 2.0) * p.pred[chosen] ||
         (path && p.model[path] * (chosen ? std::min(f[chosen], 1.0) : 1.0) + p.agreement < p.pred[chosen]) ||
         (!path && p.model[0] < p.pred[chosen])) &&
        (again < 0 || p.pred[path] < p.pred[again]))
      again = path;
  if (again >= 0) run_path(d, again);
  if (again == 0 && runs[0] == 2) s.recheck_bar = p.pred[chosen];
}

}  // namespace

Decision decide(zcoll_comm_s& c, int collective, size_t bytes, int dtype, bool homomorphic, const Agreement& a) {
  Decision d;
  ModelState& s = *c.model;
  ++s.epoch;
  // Learning: the previous decided call's time, the slowest rank's.
  learn(c, a.prev_time, a.prev_overhead, s.last_deferred);
  const int size = size_class(bytes);
  // This call follows a run of its path here (no fast-path call between): see fastest_warm.
  const int path_before = s.stretch_after[collective][size];
  const bool after_fast = s.skipped[collective][size] > 0;
  const CallFigures g = call_figures(s, collective, dtype_slot(dtype), a);
  const Inputs m = inputs(c, g.rho, g.comp, g.decomp);
  const double plain_model = plain_time(collective, m, bytes);
  int* runs = s.runs[collective][size];
  // Then plain MPI's fast-path calls here since the last agreement (the slowest rank's
  // order statistic of them, carry_measurements()): from up to 16 steady calls, it outweighs the runs plain MPI's factor
  // came from, and becomes that factor and its history.
  if (a.fast_plain > 0) {
    const double f = std::clamp(a.fast_plain, 1 / kFactorLimit, kFactorLimit);
    s.learned[collective][size][0] = f;
    std::fill_n(s.seen[collective][size][0], ModelState::kSeen, ModelState::Run{f * plain_model, g.rho, static_cast<double>(bytes)});
    ++runs[0];
  }
  // The schedules' factors against the codec speed of this call's model (factor_of()).
  for (int path = 1; path < ModelState::kPaths; ++path)
    if (runs[path] > 0)
      s.learned[collective][size][path] = factor_of(c, collective, size, path, homomorphic, g.comp, g.decomp);
  Predictions p = predict_paths(c, collective, size, homomorphic, m, bytes, plain_model);
  for (int path = 0; path < ModelState::kPaths; ++path)
    if (p.ran[path] && p.model[path] > 0 && slowed(s, collective, size, path))
      p.before_spell[path] = p.model[path] * factor_of(c, collective, size, path, homomorphic, g.comp, g.decomp, true) +
                             (path ? p.agreement : 0.0);
  d.rho = g.rho;
  d.t_predicted_plain = p.pred[0];
  const bool have_codec = g.comp > 0;
  first_choice(s, collective, size, p, have_codec, &d);
  const int chosen = d.plain ? 0 : d.choice.schedule;
  // The last re-check of a wide band (recheck()) ran faster than the chosen path was
  // predicted to: it runs again, and two fast runs move its factor (learn()).
  int& confirm = s.confirm[collective][size];
  if (!d.probe && have_codec && confirm > 0 && confirm - 1 != chosen) {
    run_path(&d, confirm - 1);
    // A cold re-check's second run, warm, is judged as the re-check was: if it beats the
    // bar, one more run confirms it (two fast runs move the factor).
    if (s.judge_again[collective][size]) s.recheck_bar = p.pred[chosen] - (confirm > 1 ? p.agreement : 0.0);
  }
  confirm = 0;
  s.judge_again[collective][size] = false;
  recheck(s, collective, size, chosen, p, !d.probe && have_codec, &d);
  if (!d.probe && have_codec) run_again(s, collective, size, chosen, p, &d);
  // A schedule not run yet at this size, predicted within 3x of the path chosen: run it once
  // (the one predicted fastest first). Its prediction carries the model's errors (a link
  // figure measured 7x too low on an oversubscribed host makes every flat schedule look slow;
  // there, too, a ring's six synchronised steps cost 3x recursive doubling's two, where the
  // model has them within 2.3x), and a schedule is learned only from its own runs: without
  // this, a schedule that had absorbed such an error into its factor would hold the choice,
  // and one 3x faster would never run. Each schedule once per size class, at under 3x.
  if (!d.probe && have_codec && p.untried >= 0 && p.untried != chosen && p.pred[p.untried] < kExplore * p.pred[chosen])
    run_path(&d, p.untried);
  const int path = d.plain ? 0 : d.choice.schedule;
  s.last_warm = path == path_before && !after_fast && s.runs[collective][size][path] > 0;
  s.stretch_after[collective][size] = path;
  s.last_ran[collective][size][path] = s.decided[collective][size];
  if (chosen) s.fast_calls[collective][size] = 0;  // a schedule's stretch: see surely_plain()
  d.t_predicted = p.pred[path];
  s.last_collective = collective;
  s.last_size = size;
  s.last_path = path;
  s.last_model = p.model[path];
  s.last_rho = g.rho;
  s.last_bytes = static_cast<double>(bytes);
  s.last_comp = g.comp;
  s.last_decomp = g.decomp;
  s.last_homomorphic = homomorphic;
  return d;
}

void carry_measurements(zcoll_comm_s& c, int collective, size_t bytes, Agreement& a) {
  ModelState& s = *c.model;
  a.prev_time = s.last_time;
  a.prev_overhead = s.last_overhead;
  const int size = size_class(bytes);
  int& n = s.fast_seen_n[collective][size];
  // Of three or more (one alone may be a page fault, a noisy neighbour), what learn() takes
  // of a path's runs. The statistic replaces plain MPI's runs before (decide()); of three or
  // four calls, plain MPI's factor before them counts as one more of them, unless they
  // followed a schedule that had slowed. Taken alone, the second fastest of a short stretch
  // stood for plain MPI's time where a slow spell of the host took two of its three calls: a
  // 1 MiB alltoall on 2 x 2 ranks at 10 Gbit/s (cesm_TS) took 15.3 and 12.0 ms in them and
  // 6.0-7.3 ms before and after, and the pairwise exchange, 7.8 ms a call, held the next 28
  // calls. (Their fastest alone would favour plain MPI in a close call: a schedule's factor
  // is the second fastest of its runs.) After a schedule that had slowed (a spell of the host
  // that its last runs also measured), the stretch is compared with those runs, spell with
  // spell: its own statistic, which a spell moves as it moved the schedule's.
  constexpr int kShortStretch = 4;
  if (n >= 3) {
    const int k = std::min(n, ModelState::kFastSeen);
    double* v = s.fast_seen[collective][size];
    double short_stretch[kShortStretch + 1];
    if (k <= kShortStretch && s.runs[collective][size][0] > 0 && !after_slowed_schedule(s, collective, size)) {
      std::copy(v, v + k, short_stretch);
      short_stretch[k] = s.learned[collective][size][0];
      a.fast_plain = low_order(short_stretch, k + 1);
    } else {
      a.fast_plain = low_order(v, k);
    }
  }
  n = 0;
}

void record_time(zcoll_comm_s& c, const Decision& d, double seconds, double overhead) {
  if (!c.model) return;
  ModelState& s = *c.model;
  if (d.fast) {
    if (s.fast_collective < 0 || !(s.fast_model > 0)) return;
    int& n = s.fast_seen_n[s.fast_collective][s.fast_size];
    s.fast_seen[s.fast_collective][s.fast_size][n++ % ModelState::kFastSeen] = seconds / s.fast_model;
    s.fast_collective = -1;
    return;
  }
  s.last_time = seconds;
  s.last_overhead = overhead;
  s.last_deferred = d.range_deferred;
}

void learn_probe(zcoll_comm_s& c, double seconds, double overhead, bool range_deferred) {
  if (!c.model) return;
  double v[2] = {seconds, overhead};
  // Every rank ran the same probe (the decision is agreed), so every rank is here.
  if (MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_MAX, c.comm) != MPI_SUCCESS) return;
  learn(c, v[0], v[1], range_deferred);
}

}  // namespace zcoll::coll
