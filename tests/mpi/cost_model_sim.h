// A simulated communicator for AUTO's decision rules (src/coll/cost_model.cc): one process
// plays p ranks whose paths (plain MPI, each schedule) take given times, and calls the model
// as call.cc does, call after call. Used by the rules' tests (test_cost_model.cc) and by the
// replay of a study's measured columns (auto_study_replay.cc). MPI must be initialised: a probe's
// time is agreed by an allreduce (here on MPI_COMM_SELF).
// The includer defines ZCOLL_SIM_CHECK(cond, what, path) for a call that ran a path it was
// given no time for.
#pragma once
#include <zcoll.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "coll/call.h"
#include "coll/cost_model.h"
#include "common/comm.h"

namespace zcoll_sim {

namespace zc = zcoll::coll;

// A communicator of `p` ranks, one per node, on a link of `gbps`, whose data compresses 4x
// at 1 GB/s per thread (and decompresses at 2 GB/s): what the agreement would carry.
struct Sim {
  zcoll_comm_s c;
  std::map<int, double> warm;  // path -> seconds of each run after its first
  // path -> the seconds of its runs in turn (measured ones, replayed), in place of `warm`
  std::map<int, std::vector<double>> series;
  double cold = 1;             // the communicator's first call takes cold x warm (connections)
  // A spell: path slow_path (kEveryPath: all of them, the host) takes slow x warm in calls
  // slow_from to slow_until - 1 (slow < 1: a fast start).
  static constexpr int kEveryPath = -2;
  int slow_path = -1;
  double slow = 1;
  size_t slow_from = 0, slow_until = 0;
  double comp = 1e-9, decomp = 0.5e-9;  // the sample's s per byte
  double cold_sample = 1;      // the sample's figures are this much slower after a plain call
  double cold_after_plain = 1;  // a schedule's run right after a plain MPI call takes this x its time
  std::vector<double> warming;  // the first calls' samples are warming[i] x slower (cold caches)
  std::vector<int> ran;        // what each call ran
  std::vector<double> took;    // and the seconds it took
  // path -> its time at each call, by the call's position (a study's column, replayed), in
  // place of `warm` and `series`
  std::map<int, std::vector<double>> timeline;
  bool homomorphic = false;    // a reduction that combines compressed data (the default's)
  double agreement = 0;        // what a call through the agreement pays before its path runs
  bool forget_verdicts = false;  // work out the fast path's verdict anew at every call
  int fast_taken = 0;          // calls that took the fast path

  Sim(int p, double gbps) {
    zcoll_config_init(&c.cfg);
    c.cfg.codec.threads = 1;
    c.comm = MPI_COMM_SELF;  // only the probes' allreduce uses it
    c.size = p;
    c.topo.nodes = p;
    for (int r = 0; r < p; ++r) c.topo.node_of.push_back(r);
    c.model.reset(new zc::ModelState);
    c.model->intra = c.model->inter = {2e-6, 8.0 / (gbps * 1e9)};
    c.model->reduce_cost = 1.0 / 4e9;
  }
  // Nodes of `k` consecutive ranks, the last one smaller where k does not divide the size:
  // the node-aware schedules become candidates, with a faster link inside the nodes.
  void nodes_of(int k, double node_gbps) {
    const int last = c.size % k ? c.size % k : k;
    c.topo.nodes = (c.size + k - 1) / k;
    c.topo.node_size = c.topo.max_node_size = k;
    c.topo.rails = last;
    c.topo.regular = last == k;
    for (int r = 0; r < c.size; ++r) c.topo.node_of[r] = r / k;
    c.model->intra = {0.5e-6, 8.0 / (node_gbps * 1e9)};
  }
  void codec(double compress, double decompress) {
    comp = compress;
    decomp = decompress;
  }
  void spell(int path, double factor, size_t from, size_t until) {
    slow_path = path;
    slow = factor;
    slow_from = from;
    slow_until = until;
  }
  ~Sim() {
    if (getenv("ZCOLL_SIM_TRACE")) printf("trace: %s\n", trace().c_str());  // for a rule's author
    c.comm = MPI_COMM_NULL;
  }

  // One call as call.cc makes it: the fast path, else the agreement's figures and decide(),
  // then the path's time learned (a probe at once, the others through the next agreement).
  int call(int collective, size_t bytes) {
    zc::Decision d;
    int path = 0;
    if (forget_verdicts) ++c.model->epoch;
    const bool fast = zc::surely_plain(c, collective, bytes, &d);
    // As call.h: a REL call the model expects to run plain MPI defers its range pass; if it
    // runs plain MPI, its overhead is learned apart from a compressed call's.
    const bool deferred = !fast && zc::expects_plain(c, collective, bytes);
    fast_taken += fast;
    if (!fast) {
      zc::Agreement a;
      // The sample's figures, on the calls that take one (below 4 MiB a collective's first
      // few; none on the others, as sample() gives none there).
      if (zc::samples_codec(*c.model, collective, ZCOLL_FLOAT64, bytes)) {
        a.rho = 0.25;
        const double cold = (!ran.empty() && ran.back() == 0 ? cold_sample : 1) *
                            (ran.size() < warming.size() ? warming[ran.size()] : 1);
        a.compress_cost = comp * cold;
        a.decompress_cost = decomp * cold;
      }
      zc::carry_measurements(c, collective, bytes, a);
      d = zc::decide(c, collective, bytes, ZCOLL_FLOAT64, homomorphic, a);
      path = d.plain ? 0 : d.choice.schedule;
    }
    const bool first = ran.empty();
    ZCOLL_SIM_CHECK(warm.count(path) || series.count(path) || timeline.count(path),
                    "ran a path which the caller gave no time", path);
    const bool spell = (path == slow_path || slow_path == kEveryPath) && ran.size() >= slow_from &&
                       ran.size() < slow_until;
    double t = warm[path] * (first ? cold : 1) * (spell ? slow : 1);
    if (series.count(path)) {
      const std::vector<double>& v = series[path];
      t = v[static_cast<size_t>(runs_of(path)) % v.size()];
    }
    if (timeline.count(path)) {
      const std::vector<double>& v = timeline[path];
      t = v[ran.size() % v.size()];
    }
    if (path && !ran.empty() && ran.back() == 0) t *= cold_after_plain;
    ran.push_back(path);
    took.push_back(t);
    const double overhead = fast ? 0 : agreement;
    d.range_deferred = deferred && path == 0;
    if (d.probe) zc::learn_probe(c, t, overhead, d.range_deferred);
    else zc::record_time(c, d, t, overhead);
    return path;
  }

  int runs_of(int path, size_t from = 0) const {
    return static_cast<int>(std::count(ran.begin() + static_cast<long>(from), ran.end(), path));
  }
  std::string trace() const {
    std::string s;
    for (int p : ran) s += std::string(s.empty() ? "" : " ") + (p ? zcoll_algorithm_name(p) : "mpi");
    return s;
  }
};

constexpr size_t kMiB = size_t{1} << 20;

}  // namespace zcoll_sim
