// AUTO's decision rules replayed on a study's measured columns (a benchmark, not a test).
//
// A real AUTO study (bench/netem/run_auto_study.sh) gives one verdict per cell from 100 calls
// of a noisy host, 15-25 minutes per field, and a rule's effect on that verdict is lost in
// the noise between launches. The study timed every fixed path beside AUTO, call i of each
// next to call i of the others. Here the same rules (src/coll/cost_model.cc, through
// cost_model_sim.h) play each cell again and again: AUTO's call i, on whichever path it
// chooses, takes what that path's own column took at call i (from a different starting call
// in each play, the columns read round). So the replay meets the host's spells and each path's
// own spread as the study did. What it leaves out: AUTO's own per-call cost (the agreement, the
// sample), the cold state of a path just switched to, and how AUTO's column sits apart from
// the fixed ones (two columns of one path differ by 1.011x, median, in the c8efc36 studies:
// docs/results.md, the twins), which --offset charges.
//
//   python3 bench/netem/replay_cells.py FILE STUDY...
//   zcoll_auto_study_replay FILE [--skip N] [--rounds K] [--offset F] [--trace]
// --skip N: leave out each column's first N calls (default 5: the communicator's cold first
// calls, which a shifted play would put mid-way). Every starting call is played once.
// --rounds K: each play makes K times as many calls, the columns read round K times (default
// 1): what rules that act past a study's length do, at the cost of the host's spells coming
// round again at the same distance.
// Prints, per cell: in how many plays AUTO's median call was over 1.05x the fastest column's
// median (as the study's table counts a miss), the geometric means of that ratio and of the
// all-calls ratio (learning included), and AUTO's calls off the fastest path.
#include <zcoll.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#define ZCOLL_SIM_CHECK(cond, what, path)                                      \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "zcoll_auto_study_replay: %s: %d\n", what, (path)); \
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
  std::vector<std::pair<int, std::vector<double>>> columns;  // path (0: plain MPI), its calls
  // The fastest column (by its median): its path, median and all its calls' sum.
  int best_path = 0;
  double best_median = INFINITY, best_sum = 0;
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

bool fail(const char* file, int line_no, const char* what) {
  std::fprintf(stderr, "zcoll_auto_study_replay: %s:%d: %s\n", file, line_no, what);
  return false;
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// Reads the cells, each column cut to its calls from `skip` on and all columns of a cell to
// the same length.
bool read_file(const char* file, size_t skip, std::vector<Cell>* cells) {
  std::ifstream in(file);
  if (!in) return fail(file, 0, "cannot read it");
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    std::istringstream ss(line);
    std::string kind;
    if (!(ss >> kind) || kind[0] == '#') continue;
    if (kind == "path") {
      std::string name;
      int path = -1;
      if (cells->empty() || !(ss >> name) || (path = path_of(name)) < 0)
        return fail(file, line_no, "a path line names a known path, after a cell line");
      std::vector<double> v;
      for (double x; ss >> x;) v.push_back(x);
      if (v.size() <= skip + 1) return fail(file, line_no, "a column needs more calls than --skip");
      v.erase(v.begin(), v.begin() + static_cast<long>(skip));
      cells->back().columns.push_back({path, v});
      continue;
    }
    Cell c;
    std::string op, ranks;
    if (kind != "cell" || !(ss >> c.name >> op >> ranks >> c.gbps >> c.bytes) ||
        (c.collective = collective_of(op)) < 0)
      return fail(file, line_no, "not a cell or path line");
    int n = 0, k = 0;
    if (std::sscanf(ranks.c_str(), "%dx%d", &n, &k) == 2) c.ranks = n * k, c.node_ranks = k;
    else c.ranks = std::atoi(ranks.c_str());
    if (c.ranks < 2) return fail(file, line_no, "a cell needs 2 or more ranks");
    cells->push_back(c);
  }
  if (cells->empty()) return fail(file, line_no, "no cells");
  for (Cell& c : *cells) {
    if (c.columns.empty()) return fail(file, line_no, "a cell without columns");
    size_t n = c.columns.front().second.size();
    for (const auto& col : c.columns) n = std::min(n, col.second.size());
    for (auto& col : c.columns) {
      col.second.resize(n);
      const double m = median(col.second);
      if (m < c.best_median) c.best_median = m, c.best_path = col.first;
    }
    for (const auto& col : c.columns)
      if (col.first == c.best_path)
        for (double t : col.second) c.best_sum += t;
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

// One play of a cell: `rounds` times as many calls as its columns have, the columns read from
// `start` round.
Tally play(const Cell& cell, size_t start, size_t rounds, double offset, bool trace) {
  Sim s(cell.ranks, cell.gbps);
  if (cell.node_ranks > 1) s.nodes_of(cell.node_ranks, 40.0);
  s.homomorphic = true;  // the default reduction's choice for SUM
  const size_t column = cell.columns.front().second.size(), calls = rounds * column;
  for (const auto& [path, times] : cell.columns) {
    std::vector<double>& v = s.timeline[path];
    for (size_t i = 0; i < calls; ++i) v.push_back(times[(start + i) % column]);
  }
  for (size_t i = 0; i < calls; ++i) s.call(cell.collective, cell.bytes);
  double sum = 0;
  for (double& t : s.took) sum += t *= offset;
  Tally r;
  r.plays = 1;
  r.off_best = static_cast<double>(calls) - s.runs_of(cell.best_path);
  const double ratio = median(s.took) / cell.best_median;
  r.over = ratio > 1.05;
  r.log_median = std::log(ratio);
  r.log_all = std::log(sum / (static_cast<double>(rounds) * cell.best_sum));
  if (trace && r.over) std::printf("  %.3f (from call %zu): %s\n", ratio, start, s.trace().c_str());
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "usage: zcoll_auto_study_replay FILE [--skip N] [--rounds K] [--offset F] [--trace]\n";
  if (argc < 2 || argv[1][0] == '-') {
    std::fprintf(stderr, "%s", usage);
    return 2;
  }
  long skip = 5, rounds = 1;
  double offset = 1;
  bool trace = false;
  for (int i = 2; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--skip") && has_value) skip = std::atol(argv[++i]);
    else if (!std::strcmp(argv[i], "--rounds") && has_value) rounds = std::atol(argv[++i]);
    else if (!std::strcmp(argv[i], "--offset") && has_value) offset = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--trace")) trace = true;
    else {
      std::fprintf(stderr, "zcoll_auto_study_replay: unknown argument %s\n%s", argv[i], usage);
      return 2;
    }
  }
  if (skip < 0 || rounds < 1 || !(offset > 0)) {
    std::fprintf(stderr, "zcoll_auto_study_replay: --skip must be at least 0, --rounds at least 1, --offset above 0\n");
    return 2;
  }
  std::vector<Cell> cells;
  if (!read_file(argv[1], static_cast<size_t>(skip), &cells)) return 2;
  MPI_Init(&argc, &argv);  // the probes' allreduce, on MPI_COMM_SELF
  std::printf("%zu cells, every starting call played once, columns from call %ld, read %ld time(s) round, "
              "AUTO's calls at %.3fx\n",
              cells.size(), skip + 1, rounds, offset);
  std::printf("%-56s %-11s %7s %9s %9s %8s\n", "cell", "over 1.05x", "", "median", "all calls", "off best");
  Tally all;
  for (const Cell& cell : cells) {
    Tally t;
    for (size_t start = 0; start < cell.columns.front().second.size(); ++start)
      t.add(play(cell, start, static_cast<size_t>(rounds), offset, trace));
    t.print(cell.name.c_str());
    all.add(t);
  }
  all.print("all cells");
  MPI_Finalize();
  return 0;
}
