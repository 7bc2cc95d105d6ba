// AUTO's decision rules replayed through a host's recorded noise (a benchmark, not a test).
//
// A real AUTO study (bench/netem/run_auto_study.sh) gives one verdict per cell from 100 calls
// of a noisy host, 15-17 minutes per field, and a rule's effect on that verdict is lost in
// the noise between launches. Here the same rules (src/coll/cost_model.cc, through
// cost_model_sim.h) play each cell many times: every path takes its median time from the
// study, times the noise the host put on the call in that position (one measured column's
// calls over their median, a random row and starting call per play). What is left out is
// what the rules cannot see either: how one path's calls differ from another's at the same
// moment, and the columns' own differences (docs/results.md, the twins).
//
//   python3 bench/netem/host_noise.py FILE STUDY...
//   zcoll_auto_noise_replay FILE [--plays N] [--calls N] [--seed S] [--offset F] [--trace]
// --offset F: AUTO's calls take F x their path's time, as where AUTO's column of a study
// sits slower than the fixed path's own (the twins of the same path differ by 1.011x, median).
// Prints, per cell: in how many plays AUTO's median call was over 1.05x the fastest path's
// (as the study's table counts a miss), the geometric mean of that ratio, of the all-calls
// ratio (learning included), and AUTO's calls off the fastest path.
#include <zcoll.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#define ZCOLL_SIM_CHECK(cond, what, path)                                      \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "zcoll_auto_noise_replay: %s: %d\n", what, (path)); \
      std::exit(2);                                                            \
    }                                                                          \
  } while (0)
#include "cost_model_sim.h"

namespace {

using zcoll_sim::Sim;

struct Cell {
  std::string name;
  int collective = -1;
  int ranks = 2, node_ranks = 0;  // node_ranks: ranks per "node" (2x2: 2), 0 for one per node
  double gbps = 0;
  size_t bytes = 0;
  std::vector<std::pair<int, double>> paths;  // path (0: plain MPI) and its median seconds
};

int collective_of(const std::string& op) {
  static const std::pair<const char*, int> ops[] = {
      {"allgather", ZCOLL_COLL_ALLGATHER}, {"bcast", ZCOLL_COLL_BCAST},
      {"alltoall", ZCOLL_COLL_ALLTOALL},   {"reduce_scatter", ZCOLL_COLL_REDUCE_SCATTER},
      {"allreduce", ZCOLL_COLL_ALLREDUCE}, {"reduce", ZCOLL_COLL_REDUCE}};
  for (const auto& [name, id] : ops)
    if (op == name) return id;
  return -1;
}

int path_of(const std::string& name) {
  if (name == "mpi") return 0;
  for (int id = ZCOLL_ALGO_MPI + 1; id <= ZCOLL_ALGO_PLAIN_HIERARCHICAL; ++id)
    if (zcoll_algorithm_name(id) && name == zcoll_algorithm_name(id)) return id;
  return -1;
}

bool read_file(const char* file, std::vector<Cell>* cells, std::vector<std::vector<double>>* noise) {
  std::ifstream in(file);
  if (!in) {
    std::fprintf(stderr, "zcoll_auto_noise_replay: cannot read %s\n", file);
    return false;
  }
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    std::istringstream ss(line);
    std::string kind;
    if (!(ss >> kind) || kind[0] == '#') continue;
    if (kind == "noise") {
      std::vector<double> v;
      for (double x; ss >> x;) v.push_back(x);
      if (!v.empty()) noise->push_back(v);
      continue;
    }
    Cell c;
    std::string op, ranks;
    if (kind != "cell" || !(ss >> c.name >> op >> ranks >> c.gbps >> c.bytes) ||
        (c.collective = collective_of(op)) < 0) {
      std::fprintf(stderr, "zcoll_auto_noise_replay: %s:%d: not a cell or noise line\n", file, line_no);
      return false;
    }
    int n = 0, k = 0;
    if (std::sscanf(ranks.c_str(), "%dx%d", &n, &k) == 2) c.ranks = n * k, c.node_ranks = k;
    else c.ranks = std::atoi(ranks.c_str());
    for (std::string item; ss >> item;) {
      const size_t eq = item.find('=');
      const int path = eq == std::string::npos ? -1 : path_of(item.substr(0, eq));
      if (path < 0) {
        std::fprintf(stderr, "zcoll_auto_noise_replay: %s:%d: unknown path %s\n", file, line_no, item.c_str());
        return false;
      }
      c.paths.push_back({path, std::atof(item.c_str() + eq + 1)});
    }
    if (c.ranks < 2 || c.paths.empty()) {
      std::fprintf(stderr, "zcoll_auto_noise_replay: %s:%d: a cell needs 2 or more ranks and a path\n", file, line_no);
      return false;
    }
    cells->push_back(c);
  }
  if (cells->empty() || noise->empty()) {
    std::fprintf(stderr, "zcoll_auto_noise_replay: %s has no cells or no noise rows\n", file);
    return false;
  }
  return true;
}

struct Tally {
  int plays = 0, over = 0;
  double log_median = 0, log_all = 0, off_best = 0;
  void add(const Tally& t) {
    plays += t.plays, over += t.over, log_median += t.log_median, log_all += t.log_all, off_best += t.off_best;
  }
  void print(const char* name) const {
    std::printf("%-56s %5d/%-5d %6.1f%% %9.4f %9.4f %8.2f\n", name, over, plays, 100.0 * over / plays,
                std::exp(log_median / plays), std::exp(log_all / plays), off_best / plays);
  }
};

// One play of a cell: `calls` calls through the model, the host's noise from `row` at `start`.
Tally play(const Cell& cell, const std::vector<double>& row, size_t start, int calls, double offset, bool trace) {
  Sim s(cell.ranks, cell.gbps);
  if (cell.node_ranks > 1) s.nodes_of(cell.node_ranks, 40.0);
  s.homomorphic = true;  // the default reduction's choice for SUM
  int best_path = 0;
  double best = INFINITY;
  for (const auto& [path, seconds] : cell.paths) {
    s.warm[path] = seconds;
    if (seconds < best) best = seconds, best_path = path;
  }
  for (int i = 0; i < calls; ++i) s.host.push_back(row[(start + static_cast<size_t>(i)) % row.size()]);
  std::vector<double> t;
  double sum = 0;
  for (int i = 0; i < calls; ++i) {
    const int path = s.call(cell.collective, cell.bytes);
    t.push_back(s.warm[path] * s.host[static_cast<size_t>(i)] * offset);
    sum += t.back();
  }
  Tally r;
  r.plays = 1;
  r.off_best = calls - s.runs_of(best_path);
  std::nth_element(t.begin(), t.begin() + calls / 2, t.end());
  const double ratio = t[static_cast<size_t>(calls / 2)] / best;
  r.over = ratio > 1.05;
  r.log_median = std::log(ratio);
  r.log_all = std::log(sum / (calls * best));
  if (trace && r.over) std::printf("  %.3f: %s\n", ratio, s.trace().c_str());
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') {
    std::fprintf(stderr, "usage: zcoll_auto_noise_replay FILE [--plays N] [--calls N] [--seed S] [--offset F] [--trace]\n");
    return 2;
  }
  int plays = 200, calls = 100;
  unsigned seed = 1;
  double offset = 1;
  bool trace = false;
  for (int i = 2; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--plays") && has_value) plays = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--calls") && has_value) calls = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--seed") && has_value) seed = static_cast<unsigned>(std::atol(argv[++i]));
    else if (!std::strcmp(argv[i], "--offset") && has_value) offset = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--trace")) trace = true;
    else {
      std::fprintf(stderr, "zcoll_auto_noise_replay: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  if (plays < 1 || calls < 1 || !(offset > 0)) {
    std::fprintf(stderr, "zcoll_auto_noise_replay: --plays and --calls must be at least 1, --offset above 0\n");
    return 2;
  }
  std::vector<Cell> cells;
  std::vector<std::vector<double>> noise;
  if (!read_file(argv[1], &cells, &noise)) return 2;
  MPI_Init(&argc, &argv);  // the probes' allreduce, on MPI_COMM_SELF
  std::mt19937 rng(seed);
  std::printf("%zu cells, %zu noise rows, %d plays of %d calls each, AUTO's calls at %.3fx\n", cells.size(),
              noise.size(), plays, calls, offset);
  std::printf("%-56s %-11s %7s %9s %9s %8s\n", "cell", "over 1.05x", "", "median", "all calls", "off best");
  Tally all;
  for (const Cell& cell : cells) {
    Tally t;
    for (int k = 0; k < plays; ++k) {
      const std::vector<double>& row = noise[rng() % noise.size()];
      t.add(play(cell, row, rng() % row.size(), calls, offset, trace));
    }
    t.print(cell.name.c_str());
    all.add(t);
  }
  all.print("all cells");
  MPI_Finalize();
  return 0;
}
