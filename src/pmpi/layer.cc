// Bookkeeping of the drop-in layer: configuration and agreement at MPI_Init (the check
// for the other MPI's programs runs earlier, before main: other_mpi.cc), which
// communicators opted in (and their zcoll communicators), MPI_Info hints, and the report
// at MPI_Finalize. The wrappers of the collectives are in collectives.cc.
#include <mpi.h>

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <new>
#include <string>

#include "pmpi/layer.h"
#include "pmpi/settings.h"

namespace zcoll_pmpi {

HotState g_hot;
thread_local bool t_inside_zcoll = false;
std::atomic<bool> g_idup_pending{false};

namespace {


struct Opted {
  zcoll_comm zc = nullptr;
  uint64_t seq = 0;  // creation order: MPI_Finalize frees in it, the same on every rank
  zcoll_config cfg{};
};

// A std::map: a registration's node can be allocated before the collective that decides
// it, and inserting it then allocates nothing.
using OptedMap = std::map<MPI_Comm, Opted>;

struct Layer {
  Settings settings;
  bool usable = false;  // the configuration was valid and agreed: hints and opt-ins work
  std::mutex mu;
  OptedMap opted;
  // The configurations communicators opted in with, never changed or freed, a handful per
  // run: a communicator's attribute points to one, so that MPI copies it to a duplicate
  // without the layer allocating on that rank (copy_cfg).
  std::deque<zcoll_config> configs;
  uint64_t next_seq = 0;
  int created = 0, started_warm = 0;  // zcoll communicators made, and those AUTO's warm start began
  // What the first zcoll communicator found (zcoll_comm_get_info), for the report; its ranks.
  zcoll_comm_info first_info{};
  int first_ranks = 0;
  MPI_Datatype aliases[4][2] = {};  // {Fortran type, C float type of the same size}
  // An opted-in communicator carries its configuration as this attribute, which MPI copies
  // to its duplicates (MPI_Comm_dup, _dup_with_info, _idup): how the result of a
  // nonblocking MPI_Comm_idup, not usable before the request completes, is found later.
  int keyval = MPI_KEYVAL_INVALID;
};
Layer& layer() {
  static Layer* l = new Layer;  // never destroyed: wrappers may run during exit
  return *l;
}

int world_rank() {
  int r = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// The layer's one kind of message: on rank 0 of comm, to stderr (printf-style, so that
// saying it allocates nothing).
void say(MPI_Comm comm, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void say(MPI_Comm comm, const char* fmt, ...) {
  int r = 0;
  PMPI_Comm_rank(comm, &r);
  if (r != 0) return;
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "zcoll-mpi: %s\n", line);
}

// Whether every rank of comm could take what it needed (ok on this rank): one small
// allreduce, so that a rank out of memory makes them all take the same branch.
bool all_ok(MPI_Comm comm, bool ok) {
  int failed = !ok;
  if (PMPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS) return false;
  return failed == 0;
}

// Whether a and b hold the same settings. Member by member: zcoll_codec_params has
// padding, which a copy need not carry; compared as bytes, equal settings could read as
// different and keep one more copy per communicator.
bool same_config(const zcoll_config& a, const zcoll_config& b) {
  const zcoll_codec_params &x = a.codec, &y = b.codec;
  const auto same = [](double u, double v) { return std::memcmp(&u, &v, sizeof u) == 0; };
  return x.codec == y.codec && x.eb_mode == y.eb_mode && same(x.eb, y.eb) && x.threads == y.threads &&
         x.chunk_len == y.chunk_len && x.ndims == y.ndims && std::equal(x.dims, x.dims + 3, y.dims) &&
         a.min_bytes == b.min_bytes && a.algorithm == b.algorithm && a.reduction == b.reduction &&
         a.bound_target == b.bound_target &&
         std::equal(a.algorithms, a.algorithms + ZCOLL_NUM_COLLECTIVES, b.algorithms) &&
         a.decision == b.decision && same(a.link_gbps, b.link_gbps) && same(a.link_latency_us, b.link_latency_us);
}

// The kept copy of cfg (Layer::configs); throws std::bad_alloc. Caller holds l.mu.
const zcoll_config* kept_config(Layer& l, const zcoll_config& cfg) {
  for (const zcoll_config& c : l.configs)
    if (same_config(c, cfg)) return &c;
  return &l.configs.emplace_back(cfg);
}

void refresh_hot() {
  Layer& l = layer();
  g_hot.any_opted_in.store(!l.opted.empty() || (l.usable && !l.settings.report.empty()), std::memory_order_relaxed);
}

// The attribute's callbacks. zcoll's own duplicates (zcoll_comm_create) do not get it.
int copy_cfg(MPI_Comm, int, void*, void* in, void* out, int* flag) {
  *flag = 0;
  if (t_inside_zcoll || !in) return MPI_SUCCESS;
  *static_cast<void**>(out) = in;  // a kept configuration (Layer::configs)
  *flag = 1;
  return MPI_SUCCESS;
}
void drop_attr(MPI_Comm comm) {
  Layer& l = layer();
  void* v = nullptr;
  int found = 0;
  if (l.keyval != MPI_KEYVAL_INVALID && comm != MPI_COMM_NULL &&
      PMPI_Comm_get_attr(comm, l.keyval, &v, &found) == MPI_SUCCESS && found)
    PMPI_Comm_delete_attr(comm, l.keyval);
}

// Creates comm's zcoll communicator (collective over comm). Intercommunicators stay plain.
void opt_in(MPI_Comm comm, const zcoll_config& cfg) {
  if (comm == MPI_COMM_NULL) return;
  drop_attr(comm);  // a copy from the parent: this decision replaces it
  int inter = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return;
  // What registering it takes, before any rank creates anything: if one rank cannot have
  // it, they all stay plain, rather than that rank alone (its collectives would then not
  // match the others').
  Layer& l = layer();
  OptedMap::node_type entry;
  const zcoll_config* kept = nullptr;
  try {
    std::lock_guard<std::mutex> lock(l.mu);
    kept = kept_config(l, cfg);
    OptedMap one;
    entry = one.extract(one.emplace(comm, Opted{}).first);
  } catch (const std::bad_alloc&) {
    kept = nullptr;
  }
  if (!all_ok(comm, kept && entry))
    return say(comm, "cannot compress on a communicator (it stays plain MPI): a rank is out of memory");
  zcoll_comm zc = nullptr;
  t_inside_zcoll = true;
  const int rc = zcoll_comm_create(comm, &cfg, &zc);
  t_inside_zcoll = false;
  if (rc != ZCOLL_SUCCESS)
    return say(comm, "cannot compress on a communicator (it stays plain MPI): %s %s", zcoll_strerror(rc),
               zcoll_error_detail());
  if (l.keyval != MPI_KEYVAL_INVALID) PMPI_Comm_set_attr(comm, l.keyval, const_cast<zcoll_config*>(kept));
  int warm = 0;
  zcoll_comm_warm_start(zc, &warm);
  std::lock_guard<std::mutex> lock(l.mu);
  if (l.created == 0) {  // only the first communicator's goes in the report
    zcoll_comm_get_info(zc, &l.first_info);
    PMPI_Comm_size(comm, &l.first_ranks);
  }
  ++l.created;
  l.started_warm += warm;
  entry.mapped() = Opted{zc, l.next_seq++, cfg};
  auto placed = l.opted.insert(std::move(entry));
  if (!placed.inserted) placed.position->second = placed.node.mapped();
  refresh_hot();
}

void opt_out(MPI_Comm comm) {
  Layer& l = layer();
  zcoll_comm zc = nullptr;
  {
    std::lock_guard<std::mutex> lock(l.mu);
    auto it = l.opted.find(comm);
    if (it == l.opted.end()) return;
    zc = it->second.zc;
    l.opted.erase(it);
    refresh_hot();
  }
  t_inside_zcoll = true;
  zcoll_comm_free(&zc);
  t_inside_zcoll = false;
}

// The configuration a communicator derived from `parent` opts in with, or false.
bool inherited_config(MPI_Comm parent, bool is_dup, zcoll_config* cfg) {
  Layer& l = layer();
  if (!l.usable) return false;
  {
    std::lock_guard<std::mutex> lock(l.mu);
    auto it = l.opted.find(parent);
    // MPI_Comm_dup copies the parent's hints, and so its opt-in and its bound.
    if (is_dup && it != l.opted.end()) {
      *cfg = it->second.cfg;
      return true;
    }
  }
  *cfg = l.settings.cfg;
  return l.settings.compress && l.settings.comms == CommScope::kAll;
}

// --------------------------------------------------------------------------- report

struct Counters {
  double calls = 0, compressed = 0, bytes = 0, sent_raw = 0, sent_wire = 0, seconds = 0, max_eb = 0;
  // The calls zcoll's cost model decided: their time, and its prediction of plain MPI's.
  double modelled = 0, modelled_seconds = 0, predicted_plain = 0;
};
std::mutex g_count_mu;
Counters g_counts[kNumFns];

const char* const kFnNames[kNumFns] = {"Allreduce", "Reduce", "Reduce_scatter", "Reduce_scatter_block",
                                       "Allgather", "Allgatherv", "Bcast", "Scatter", "Gather", "Alltoall"};

void print_report(const std::string& where) {
  constexpr int kSum = 9;
  double local[kNumFns][kSum], sum[kNumFns][kSum] = {}, local_max[kNumFns][2], max[kNumFns][2] = {};
  {
    std::lock_guard<std::mutex> lock(g_count_mu);
    for (int f = 0; f < kNumFns; ++f) {
      const Counters& c = g_counts[f];
      const double v[kSum] = {c.calls,     c.compressed, c.bytes,    c.sent_raw,       c.sent_wire,
                              c.seconds,   c.modelled,   c.modelled_seconds, c.predicted_plain};
      std::copy(v, v + kSum, local[f]);
      local_max[f][0] = c.seconds;
      local_max[f][1] = c.max_eb;
    }
  }
  PMPI_Reduce(local, sum, kNumFns * kSum, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  PMPI_Reduce(local_max, max, kNumFns * 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (world_rank() != 0) return;
  FILE* out = where == "stdout" ? stdout : std::fopen(where.c_str(), "w");
  if (!out) {
    std::fprintf(stderr, "zcoll-mpi: cannot write the report to %s\n", where.c_str());
    return;
  }
  int ranks = 1;
  PMPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const Settings& s = layer().settings;
  std::fprintf(out, "zcoll-mpi report: %d ranks; eb %s %g; min_bytes %zu; codec %s\n", ranks,
               s.cfg.codec.eb_mode == ZCOLL_EB_REL ? "REL" : "ABS", s.compress ? s.cfg.codec.eb : 0.0,
               s.cfg.min_bytes, zcoll_codec_name(s.cfg.codec.codec));
  std::fprintf(out, "%-21s %10s %10s %12s %12s %12s %7s %10s %10s %11s %9s %13s %13s\n", "op", "calls",
               "compressed", "MiB", "sent_MiB", "wire_MiB", "ratio", "time_s", "max_time_s", "max_eb_abs", "modelled",
               "modelled_s", "pred_plain_s");
  const double mib = 1.0 / (1 << 20);
  for (int f = 0; f < kNumFns; ++f) {
    const double* v = sum[f];
    if (v[0] == 0) continue;
    std::fprintf(out, "%-21s %10.0f %10.0f %12.2f %12.2f %12.2f %7.2f %10.4f %10.4f %11.4g %9.0f %13.4f %13.4f\n",
                 kFnNames[f], v[0], v[1], v[2] * mib, v[3] * mib, v[4] * mib, v[4] > 0 ? v[3] / v[4] : 1.0, v[5],
                 max[f][0], max[f][1], v[6], v[7], v[8]);
  }
  std::fprintf(out,
               "calls, MiB (message bytes per rank) and time_s: summed over ranks; max_time_s: the slowest rank.\n"
               "sent/wire MiB: what the compressed calls sent, before and after compression (zcoll_last_stats).\n"
               "modelled: calls zcoll's cost model decided (AUTO, ZCOLL_DECIDE=model, at or above min_bytes);\n"
               "modelled_s: their time; pred_plain_s: the model's prediction of plain MPI's time for them\n"
               "(summed over ranks, like time_s).\n");
  {
    // Rank 0's view of the first communicator zcoll served (usually MPI_COMM_WORLD): whether
    // the nodes are the ones the job was placed on, and the links AUTO's model started from.
    Layer& l = layer();
    std::lock_guard<std::mutex> lock(l.mu);
    const zcoll_comm_info& i = l.first_info;
    auto gbps = [](double bytes_per_s) { return bytes_per_s * 8 / 1e9; };
    if (l.created > 0)
      std::fprintf(out,
                   "first zcoll communicator: %d ranks on %d node(s) (the largest of %d ranks; %d rails); links: "
                   "inside a node %.3g Gbit/s, %.3g us, between nodes %.3g Gbit/s, %.3g us (0: not measured); "
                   "codec threads %d (the model's %d)\n",
                   l.first_ranks, i.nodes, i.max_node_size, i.rails, gbps(i.intra_bytes_per_s),
                   i.intra_latency_s * 1e6, gbps(i.inter_bytes_per_s), i.inter_latency_s * 1e6, i.codec_threads,
                   i.model_threads);
  }
  if (const char* file = std::getenv("ZCOLL_TUNING_FILE"); file && *file) {
    Layer& l = layer();
    std::lock_guard<std::mutex> lock(l.mu);
    std::fprintf(out, "warm start: %d of rank 0's %d zcoll communicators began from a record of %s\n",
                 l.started_warm, l.created, file);
  }
  if (out != stdout) std::fclose(out);
}

// ------------------------------------------------------------------------ start, stop

void start() {
  Layer& l = layer();
  std::string problem;
  bool no_memory = false;
  try {
    problem = read_settings(&l.settings);
  } catch (const std::bad_alloc&) {
    no_memory = true;
  }
  // Every rank must take the same decision, whatever its environment says: agree on a
  // digest of the settings and on whether any rank found a problem.
  const uint64_t digest = settings_digest(l.settings);
  long long mine[3] = {!problem.empty() || no_memory, static_cast<long long>(digest >> 1),
                       -static_cast<long long>(digest >> 1)}, all[3];
  PMPI_Allreduce(mine, all, 3, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  if (!problem.empty())
    return say(MPI_COMM_WORLD, "%s; the layer stays off, the program runs unchanged", problem.c_str());
  if (all[0]) return say(MPI_COMM_WORLD, "a rank's configuration is malformed or out of memory; the layer stays off");
  if (all[1] != -all[2])
    return say(MPI_COMM_WORLD, "the ZCOLL_ settings differ across ranks; the layer stays off");
  const MPI_Datatype fortran[4][2] = {{MPI_REAL, MPI_FLOAT}, {MPI_REAL4, MPI_FLOAT},
                                      {MPI_DOUBLE_PRECISION, MPI_DOUBLE}, {MPI_REAL8, MPI_DOUBLE}};
  for (int i = 0; i < 4; ++i) {
    int fsize = 0, csize = 0;
    const bool same = fortran[i][0] != MPI_DATATYPE_NULL && PMPI_Type_size(fortran[i][0], &fsize) == MPI_SUCCESS &&
                      PMPI_Type_size(fortran[i][1], &csize) == MPI_SUCCESS && fsize == csize;
    l.aliases[i][0] = same ? fortran[i][0] : MPI_DATATYPE_NULL;
    l.aliases[i][1] = fortran[i][1];
  }
  if (PMPI_Comm_create_keyval(copy_cfg, MPI_COMM_NULL_DELETE_FN, &l.keyval, nullptr) != MPI_SUCCESS)
    l.keyval = MPI_KEYVAL_INVALID;
  l.usable = true;
  g_hot.ops = l.settings.ops;
  g_hot.min_bytes = l.settings.cfg.min_bytes;
  g_hot.report = !l.settings.report.empty();
  if (l.settings.compress && l.settings.comms != CommScope::kHinted) opt_in(MPI_COMM_WORLD, l.settings.cfg);
  refresh_hot();
}

// Before PMPI_Finalize: the report, then zcoll's communicators freed (MPI_Comm_free is
// local in both MPIs, and every rank frees the same ones in the same order), then one
// barrier over MPI_COMM_WORLD, so that every rank enters PMPI_Finalize together. Without
// it the report's reductions let rank 1 enter PMPI_Finalize while rank 0 still reduces and
// writes, and MPICH 4.0 (ch4:ucx) then hangs: each rank closes its UCX endpoints, waits
// for the closes to complete and then blocks in the PMI barrier without progressing UCX,
// so a rank that arrives late waits forever for a close that needs the early rank's
// progress (docs/pmpi.md, "MPI_Finalize hangs over netem"). The barrier is legal: every
// process calls MPI_Finalize, and MPI requires all its communication complete before. Only
// when the layer is configured (some ZCOLL_ setting) and agreed, which every rank then
// is alike; an unconfigured run stays as it is.
void stop() {
  Layer& l = layer();
  const bool barrier = l.usable && l.settings.configured;
  if (l.usable && !l.settings.report.empty()) print_report(l.settings.report);
  // In creation order, the same on every rank; found one at a time, allocating nothing.
  for (;;) {
    MPI_Comm first = MPI_COMM_NULL;
    {
      std::lock_guard<std::mutex> lock(l.mu);
      uint64_t seq = UINT64_MAX;
      for (const auto& [comm, o] : l.opted)
        if (o.seq < seq) {
          seq = o.seq;
          first = comm;
        }
    }
    if (first == MPI_COMM_NULL) break;
    opt_out(first);
  }
  l.usable = false;
  g_hot.report = false;
  refresh_hot();
  if (barrier) PMPI_Barrier(MPI_COMM_WORLD);
}

// The hints zcoll_enable (true/false), zcoll_eb and zcoll_eb_mode of info applied to a
// communicator whose configuration is *cfg and whose opt-in is *on. Returns "" (and
// whether info had any of them in *any) or what is malformed, leaving *cfg and *on as
// they were.
std::string read_hints(MPI_Info info, zcoll_config* cfg, bool* on, bool* any) {
  Layer& l = layer();
  *any = false;
  if (info == MPI_INFO_NULL) return "";
  auto get = [&](const char* key, std::string* v) {
    char buf[MPI_MAX_INFO_VAL + 1] = {};
    int found = 0;
    PMPI_Info_get(info, key, MPI_MAX_INFO_VAL, buf, &found);
    *v = buf;
    return found != 0;
  };
  std::string enable, eb, mode;
  const bool has_enable = get("zcoll_enable", &enable), has_eb = get("zcoll_eb", &eb),
             has_mode = get("zcoll_eb_mode", &mode);
  if (!has_enable && !has_eb && !has_mode) return "";
  zcoll_config c = *cfg;
  bool enabled = true;
  if (has_enable) {
    if (enable == "true" || enable == "1") enabled = true;
    else if (enable == "false" || enable == "0") enabled = false;
    else return "zcoll_enable=" + enable + ": expected true or false";
  }
  if (has_eb && !parse_eb(eb, &c.codec.eb)) return "zcoll_eb=" + eb + ": expected a positive number";
  if (has_mode && !parse_eb_mode(mode, &c.codec.eb_mode)) return "zcoll_eb_mode=" + mode + ": expected abs or rel";
  if (enabled && !has_eb && !l.settings.compress && !*on)
    return "zcoll_enable=true needs zcoll_eb (or ZCOLL_EB in the environment)";
  *cfg = c;
  *on = enabled;
  *any = true;
  return "";
}

// Whether info has any of the zcoll_* hints (allocates nothing).
bool has_hints(MPI_Info info) {
  if (info == MPI_INFO_NULL) return false;
  for (const char* key : {"zcoll_enable", "zcoll_eb", "zcoll_eb_mode"}) {
    int len = 0, found = 0;
    if (PMPI_Info_get_valuelen(info, key, &len, &found) == MPI_SUCCESS && found) return true;
  }
  return false;
}

using Problem = char[512];

// read_hints in a collective call over comm, so that every rank takes the same decision:
// returns whether info has zcoll hints (if not, nothing is communicated). *cfg and *on
// change only where problem comes back "": else it says what is malformed, or that a rank
// ran out of memory reading the hints (then on every rank, through one allreduce).
bool hints_of(MPI_Comm comm, MPI_Info info, zcoll_config* cfg, bool* on, Problem& problem) {
  problem[0] = '\0';
  if (!has_hints(info)) return false;
  zcoll_config c = *cfg;
  bool o = *on, any = false, ok = true;
  try {
    std::snprintf(problem, sizeof problem, "%s", read_hints(info, &c, &o, &any).c_str());
  } catch (const std::bad_alloc&) {
    ok = false;
  }
  if (!all_ok(comm, ok)) std::snprintf(problem, sizeof problem, "a rank is out of memory reading the zcoll hints");
  if (!problem[0]) {
    *cfg = c;
    *on = o;
  }
  return true;
}

// MPI_Comm_set_info's hints applied; problem as hints_of's.
void apply_hints(MPI_Comm comm, MPI_Info info, Problem& problem) {
  Layer& l = layer();
  zcoll_config cfg = l.settings.cfg;
  bool on = false;
  {
    std::lock_guard<std::mutex> lock(l.mu);
    if (auto it = l.opted.find(comm); it != l.opted.end()) {
      cfg = it->second.cfg;
      on = true;
    }
  }
  if (!hints_of(comm, info, &cfg, &on, problem) || problem[0]) return;
  opt_out(comm);
  if (on) opt_in(comm, cfg);
  else drop_attr(comm);  // its duplicates do not inherit an opt-in it no longer has
}

// A communicator made from `parent` by a blocking constructor other than a duplicate
// (MPI_Comm_split and the others ZCOLL_COMMS=all covers): opted in when the scope is
// `all`. Collective over *newcomm; ranks that got MPI_COMM_NULL skip it.
// Open MPI 4.1 also copies the parent's attributes to the result of
// MPI_Comm_create_group, which MPI reserves for duplicates: the copy is dropped, or that
// communicator would opt in later as if it were an MPI_Comm_idup's.
int derived(int rc, MPI_Comm parent, const MPI_Comm* newcomm) {
  if (rc != MPI_SUCCESS || !newcomm || *newcomm == MPI_COMM_NULL || t_inside_zcoll) return rc;
  zcoll_config cfg;
  if (inherited_config(parent, false, &cfg)) opt_in(*newcomm, cfg);
  else drop_attr(*newcomm);
  return rc;
}

}  // namespace

zcoll_comm adopt_pending(MPI_Comm comm) {
  Layer& l = layer();
  if (t_inside_zcoll || !l.usable || l.keyval == MPI_KEYVAL_INVALID) return nullptr;
  void* v = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, l.keyval, &v, &found) != MPI_SUCCESS || !found || !v) return nullptr;
  const zcoll_config cfg = *static_cast<const zcoll_config*>(v);
  opt_in(comm, cfg);  // drops the attribute first: a failed opt-in is not retried
  return find_opted(comm);
}

zcoll_comm find_opted(MPI_Comm comm) {
  Layer& l = layer();
  std::lock_guard<std::mutex> lock(l.mu);
  auto it = l.opted.find(comm);
  return it == l.opted.end() ? nullptr : it->second.zc;
}

MPI_Datatype float_alias(MPI_Datatype t) {
  for (const auto& a : layer().aliases)
    if (t == a[0] && t != MPI_DATATYPE_NULL) return a[1];
  return t;
}

int collective_of(Fn fn) {
  static const int of[kNumFns] = {ZCOLL_COLL_ALLREDUCE, ZCOLL_COLL_REDUCE,    ZCOLL_COLL_REDUCE_SCATTER,
                                  ZCOLL_COLL_REDUCE_SCATTER, ZCOLL_COLL_ALLGATHER, ZCOLL_COLL_ALLGATHER,
                                  ZCOLL_COLL_BCAST,     ZCOLL_COLL_SCATTER,   ZCOLL_COLL_GATHER,
                                  ZCOLL_COLL_ALLTOALL};
  return of[fn];
}

double now_if_reporting() { return g_hot.report ? PMPI_Wtime() : 0.0; }

void record_call(Fn fn, size_t bytes, double seconds, const zcoll_stats* st) {
  if (!g_hot.report) return;
  std::lock_guard<std::mutex> lock(g_count_mu);
  Counters& c = g_counts[fn];
  c.calls += 1;
  c.bytes += static_cast<double>(bytes);
  c.seconds += seconds;
  if (st && st->t_predicted_plain > 0) {
    c.modelled += 1;
    c.modelled_seconds += seconds;
    c.predicted_plain += st->t_predicted_plain;
  }
  if (st && st->compressed) {
    c.compressed += 1;
    c.sent_raw += static_cast<double>(st->raw_bytes);
    c.sent_wire += static_cast<double>(st->wire_bytes);
    c.max_eb = std::max(c.max_eb, st->eb_abs);
  }
}

int mpi_error_of(int zcoll_rc) {
  switch (zcoll_rc) {
    case ZCOLL_ERR_ARG: return MPI_ERR_ARG;
    case ZCOLL_ERR_DTYPE: return MPI_ERR_TYPE;
    case ZCOLL_ERR_NO_MEMORY: return MPI_ERR_NO_MEM;
    case ZCOLL_ERR_TRUNCATE: return MPI_ERR_TRUNCATE;
    default: return MPI_ERR_OTHER;
  }
}

}  // namespace zcoll_pmpi

using namespace zcoll_pmpi;

// The MPI_* definitions are the library's interface: exported whatever the preset.
#pragma GCC visibility push(default)
extern "C" {

int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) start();
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) start();
  return rc;
}

int MPI_Finalize(void) {
  stop();
  return PMPI_Finalize();
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  const int rc = PMPI_Comm_dup(comm, newcomm);
  zcoll_config cfg;
  if (rc == MPI_SUCCESS && !t_inside_zcoll && inherited_config(comm, true, &cfg)) opt_in(*newcomm, cfg);
  return rc;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  return derived(PMPI_Comm_split(comm, color, key, newcomm), comm, newcomm);
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  return derived(PMPI_Comm_split_type(comm, split_type, key, info, newcomm), comm, newcomm);
}

// MPI_Comm_dup_with_info: a duplicate, opted in as MPI_Comm_dup's would be, then the
// zcoll_* hints of info applied as MPI_Comm_set_info applies them.
int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  const int rc = PMPI_Comm_dup_with_info(comm, info, newcomm);
  if (rc != MPI_SUCCESS || t_inside_zcoll || !layer().usable) return rc;
  zcoll_config cfg;
  bool on = inherited_config(comm, true, &cfg);
  if (layer().settings.configured) {
    Problem problem;
    hints_of(comm, info, &cfg, &on, problem);
    if (problem[0]) say(comm, "MPI_Comm_dup_with_info: %s; the hints are ignored", problem);
  }
  if (on) opt_in(*newcomm, cfg);
  else drop_attr(*newcomm);
  return rc;
}

// MPI_Comm_idup: *newcomm may be used only once the request completes, and the layer does
// not see completions. MPI copies the parent's attribute to it (copy_cfg), and the first
// collective on it that reaches the routing opts it in there (adopt_pending): every rank
// makes that call at the same point, as MPI orders collectives on a communicator.
int MPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  const int rc = PMPI_Comm_idup(comm, newcomm, request);
  if (rc == MPI_SUCCESS && !t_inside_zcoll && find_opted(comm)) g_idup_pending.store(true);
  return rc;
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  return derived(PMPI_Comm_create(comm, group, newcomm), comm, newcomm);
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  return derived(PMPI_Comm_create_group(comm, group, tag, newcomm), comm, newcomm);
}

int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                    MPI_Comm* comm_cart) {
  return derived(PMPI_Cart_create(comm_old, ndims, dims, periods, reorder, comm_cart), comm_old, comm_cart);
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  return derived(PMPI_Cart_sub(comm, remain_dims, newcomm), comm, newcomm);
}

int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
                     MPI_Comm* comm_graph) {
  return derived(PMPI_Graph_create(comm_old, nnodes, index, edges, reorder, comm_graph), comm_old, comm_graph);
}

int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                          const int destinations[], const int weights[], MPI_Info info, int reorder,
                          MPI_Comm* comm_dist_graph) {
  return derived(PMPI_Dist_graph_create(comm_old, n, sources, degrees, destinations, weights, info, reorder,
                                        comm_dist_graph),
                 comm_old, comm_dist_graph);
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[],
                                   int outdegree, const int destinations[], const int destweights[], MPI_Info info,
                                   int reorder, MPI_Comm* comm_dist_graph) {
  return derived(PMPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights, outdegree, destinations,
                                                 destweights, info, reorder, comm_dist_graph),
                 comm_old, comm_dist_graph);
}

// The intra-communicator merged from an intercommunicator (which itself stays plain).
int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  return derived(PMPI_Intercomm_merge(intercomm, high, newintracomm), intercomm, newintracomm);
}

int MPI_Comm_free(MPI_Comm* comm) {
  if (comm && !t_inside_zcoll) opt_out(*comm);
  return PMPI_Comm_free(comm);
}

int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
  const int rc = PMPI_Comm_set_info(comm, info);
  if (rc != MPI_SUCCESS || t_inside_zcoll || !layer().usable || !layer().settings.configured) return rc;
  Problem problem;
  apply_hints(comm, info, problem);
  if (problem[0]) say(comm, "MPI_Comm_set_info: %s; the communicator is unchanged", problem);
  return rc;
}

}  // extern "C"
#pragma GCC visibility pop
