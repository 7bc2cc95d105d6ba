#include "app_common.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace zapp {

int g_rank = 0, g_size = 1;

std::string common_usage() {
  return "common flags:\n"
    "  --mode LIST      mpi,zcoll (default both): plain MPI and/or zcoll; the plain-MPI run is the\n"
    "                   reference of every quality metric and always runs first, and again\n"
    "                   (unreported) right before each zcoll configuration: the speedup's reference\n"
    "  --codec LIST     " + zsupport::codec_names(",", ",") + " (default fzl)\n"
    "  --eb LIST        error bounds, e.g. 1e-2,1e-3,1e-4 (default 1e-4)\n"
    "  --eb-mode LIST   rel (eb x the value range of each message; default) and/or abs\n"
    "  --iters K        iterations of the application (see above)\n"
    "  --min-bytes B    zcoll compresses float/double messages of at least B bytes (default 0:\n"
    "                   all of them, as seed 002 compressed every floating-point message)\n"
    "  --threads T      codec threads per rank (default 1; 0 = zcoll's automatic count, zcoll.h \"Threads\")\n"
    "  --input FILE     raw .f32/.f64 field, shape from the _AxBxC in its name\n"
    "  --json           one JSON line per configuration instead of the table\n";
}

namespace {

[[noreturn]] void die(const char* what, const std::string& msg) {
  std::fprintf(stderr, "rank %d: %s: %s\n", g_rank, what, msg.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

void check_z(int rc, const char* what) {
  if (rc != ZCOLL_SUCCESS) die(what, zcoll_strerror(rc));
}

void check_m(int rc, const char* what) {
  if (rc != MPI_SUCCESS) die(what, "MPI error " + std::to_string(rc));
}

}  // namespace

// ------------------------------------------------------------------------------- Args

Args::Args(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--", 0) != 0) throw UsageError{"unexpected argument " + a};
    const size_t eq = a.find('=');
    if (eq != std::string::npos)
      kv_[a.substr(0, eq)] = a.substr(eq + 1);
    else if (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0)
      kv_[a] = argv[++i];
    else
      switches_.insert(a);
  }
}

const std::string* Args::find(const std::string& name) {
  known_.insert(name);
  if (switches_.count(name)) throw UsageError{"missing value for " + name};
  const auto it = kv_.find(name);
  return it == kv_.end() ? nullptr : &it->second;
}

bool Args::flag(const std::string& name) {
  known_.insert(name);
  if (kv_.count(name)) throw UsageError{name + " takes no value"};
  return switches_.count(name) > 0;
}

std::string Args::str(const std::string& name, const std::string& def) {
  const std::string* v = find(name);
  return v ? *v : def;
}

long Args::integer(const std::string& name, long def, long lo, long hi) {
  const std::string* v = find(name);
  return v ? zsupport::parse_long(name, *v, lo, hi) : def;
}

std::vector<std::string> Args::list(const std::string& name, const std::string& def) {
  auto out = zsupport::split_list(str(name, def), false);
  if (out.empty()) throw UsageError{"empty list for " + name};
  return out;
}

std::vector<double> Args::reals(const std::string& name, const std::string& def, bool positive) {
  std::vector<double> out;
  for (const auto& s : list(name, def)) {
    char* end = nullptr;
    const double x = std::strtod(s.c_str(), &end);
    if (end == s.c_str() || *end || !std::isfinite(x) || (positive && !(x > 0)))
      throw UsageError{"bad value for " + name + ": " + s};
    out.push_back(x);
  }
  return out;
}

std::vector<long> Args::integers(const std::string& name, const std::string& def, long lo, long hi) {
  std::vector<long> out;
  for (const auto& s : list(name, def)) out.push_back(zsupport::parse_long(name, s, lo, hi));
  return out;
}

void Args::finish() const {
  for (const auto& kv : kv_)
    if (!known_.count(kv.first)) throw UsageError{"unknown option " + kv.first};
  for (const auto& s : switches_)
    if (!known_.count(s)) throw UsageError{"unknown option " + s};
}

Common parse_common(Args& a, int default_iters, const std::string& default_input) {
  Common c;
  c.modes = a.list("--mode", "mpi,zcoll");
  for (const auto& m : c.modes)
    if (m != "mpi" && m != "zcoll") throw UsageError{"--mode takes mpi and/or zcoll, not " + m};
  c.codecs = a.list("--codec", "fzl");
  for (auto& k : c.codecs) {
    const int id = zsupport::codec_id(k);
    if (!id) throw UsageError{"--codec takes " + zsupport::codec_names(", ", " and/or ") + ", not " + k};
    k = zcoll_codec_name(id);  // the registry ignores case; the output keeps one spelling
  }
  c.ebs = a.reals("--eb", "1e-4", true);
  c.eb_modes = a.list("--eb-mode", "rel");
  for (const auto& m : c.eb_modes)
    if (m != "rel" && m != "abs") throw UsageError{"--eb-mode takes rel and/or abs, not " + m};
  c.iters = static_cast<int>(a.integer("--iters", default_iters, 1, INT_MAX));
  c.threads = static_cast<int>(a.integer("--threads", 1, 0, 4096));
  c.min_bytes = static_cast<size_t>(a.integer("--min-bytes", 0, 0, LONG_MAX));
  c.json = a.flag("--json");
  c.input = a.str("--input", default_input);
  return c;
}

// ----------------------------------------------------------------------------- Record

void Record::num(const std::string& key, double v, const char* f, bool table) {
  fields_.push_back({key, std::isfinite(v) ? zsupport::format(f, v) : "null", std::isnan(v) ? "-" : zsupport::format(f, v), table});
}

void Record::str(const std::string& key, const std::string& v, bool table) {
  fields_.push_back({key, zsupport::json_string(v), v, table});
}

void Record::check(const std::string& what, double value, double bound) {
  if (!(value <= bound)) failures.push_back(what + " " + zsupport::format("%.6g", value) + " > " + zsupport::format("%.6g", bound));
}

void Record::within(const std::string& key, double value, double bound) {
  num(key, value, "%.4g");
  num(key + "_bound", bound, "%.4g");
  num(key + "_over_bound", bound > 0 ? value / bound : value > 0 ? INFINITY : 0, "%.4f", true);
  check(key, value, bound);
}

void Record::append(const Record& other) {
  fields_.insert(fields_.end(), other.fields_.begin(), other.fields_.end());
  failures.insert(failures.end(), other.failures.begin(), other.failures.end());
}

std::string Record::json() const {
  std::string o = "{";
  for (const auto& f : fields_) o += (o.size() > 1 ? "," : "") + zsupport::json_string(f.key) + ":" + f.json;
  return o + ",\"ok\":" + (failures.empty() ? "true" : "false") + "}";
}

namespace {
size_t column_width(const std::string& key) { return std::max<size_t>(key.size(), 9) + 2; }
}  // namespace

std::string Record::table_header() const {
  std::string o;
  for (const auto& f : fields_)
    if (f.table) o += f.key + std::string(column_width(f.key) - f.key.size(), ' ');
  return o;
}

std::string Record::table_row() const {
  std::string o;
  for (const auto& f : fields_)
    if (f.table) {
      const size_t w = column_width(f.key);
      o += f.text + std::string(w > f.text.size() ? w - f.text.size() : 1, ' ');
    }
  return o;
}

// -------------------------------------------------------------------------------- Net

Net::Net(const Config& cfg, const Common& c) {
  if (cfg.mode != "zcoll") return;
  zcoll_config zc;
  zcoll_config_init(&zc);
  zc.codec.codec = zsupport::codec_id(cfg.codec);
  zc.codec.eb_mode = cfg.eb_mode == "abs" ? ZCOLL_EB_ABS : ZCOLL_EB_REL;
  zc.codec.eb = cfg.eb;
  zc.codec.threads = c.threads;
  zc.min_bytes = c.min_bytes;
  const int rc = zcoll_comm_create(MPI_COMM_WORLD, &zc, &zc_);
  // zcoll.h: an invalid configuration (an unknown codec) fails on every rank before any
  // communication, so every rank throws and the next configuration can still run.
  if (rc != ZCOLL_SUCCESS) throw UsageError{"zcoll_comm_create (codec " + cfg.codec + "): " + zcoll_strerror(rc)};
}

Net::~Net() {
  if (zc_) zcoll_comm_free(&zc_);
}

void Net::start() {
  MPI_Barrier(MPI_COMM_WORLD);
  t_start_ = MPI_Wtime();
}

void Net::stop() { total_s_ = MPI_Wtime() - t_start_; }

// After every collective and every send: zcoll_last_stats describes that call.
void Net::count_message() {
  calls_ += 1;
  if (!zc_) return;
  zcoll_stats st{};
  check_z(zcoll_last_stats(zc_, &st), "zcoll_last_stats");
  if (!st.compressed) return;
  compressed_ += 1;
  raw_ += static_cast<double>(st.raw_bytes);
  wire_ += static_cast<double>(st.wire_bytes);
  eb_abs_max_ = std::max(eb_abs_max_, st.eb_abs);
}

void Net::timed(const char* name, bool zcoll_code, const std::function<int()>& call) {
  const double t0 = MPI_Wtime();
  const int rc = call();
  comm_s_ += MPI_Wtime() - t0;
  if (zcoll_code)
    check_z(rc, name);
  else
    check_m(rc, name);
}

void Net::either(const char* zname, const char* mname, const std::function<int()>& z, const std::function<int()>& m) {
  if (zc_)
    timed(zname, true, z);
  else
    timed(mname, false, m);
}

void Net::sending(const char* zname, const char* mname, const std::function<int()>& z, const std::function<int()>& m) {
  either(zname, mname, z, m);
  count_message();
}

void Net::send(const void* buf, int n, MPI_Datatype t, int dest, int tag) {
  sending(
      "zcoll_send", "MPI_Send", [&] { return zcoll_send(buf, n, t, dest, tag, zc_); },
      [&] { return MPI_Send(buf, n, t, dest, tag, MPI_COMM_WORLD); });
}

void Net::recv(void* buf, int n, MPI_Datatype t, int src, int tag) {
  either(
      "zcoll_recv", "MPI_Recv", [&] { return zcoll_recv(buf, n, t, src, tag, zc_, MPI_STATUS_IGNORE); },
      [&] { return MPI_Recv(buf, n, t, src, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE); });
}

// zreq_ and mreq_ grow together; only the mode in use fills its entries. MPI_PROC_NULL gets
// none: there is nothing to send or count.
bool Net::new_request(int peer) {
  if (peer == MPI_PROC_NULL) return false;
  zreq_.push_back(ZCOLL_REQUEST_NULL);
  mreq_.push_back(MPI_REQUEST_NULL);
  return true;
}

void Net::isend(const void* buf, int n, MPI_Datatype t, int dest, int tag) {
  if (!new_request(dest)) return;
  sending(
      "zcoll_isend", "MPI_Isend", [&] { return zcoll_isend(buf, n, t, dest, tag, zc_, &zreq_.back()); },
      [&] { return MPI_Isend(buf, n, t, dest, tag, MPI_COMM_WORLD, &mreq_.back()); });
}

void Net::irecv(void* buf, int n, MPI_Datatype t, int src, int tag) {
  if (!new_request(src)) return;
  either(
      "zcoll_irecv", "MPI_Irecv", [&] { return zcoll_irecv(buf, n, t, src, tag, zc_, &zreq_.back()); },
      [&] { return MPI_Irecv(buf, n, t, src, tag, MPI_COMM_WORLD, &mreq_.back()); });
}

void Net::waitall() {
  const int n = static_cast<int>(zreq_.size());
  either(
      "zcoll_waitall", "MPI_Waitall", [&] { return zcoll_waitall(n, zreq_.data(), MPI_STATUSES_IGNORE); },
      [&] { return MPI_Waitall(n, mreq_.data(), MPI_STATUSES_IGNORE); });
  zreq_.clear();
  mreq_.clear();
}

void Net::bcast(void* buf, int n, MPI_Datatype t, int root) {
  sending(
      "zcoll_bcast", "MPI_Bcast", [&] { return zcoll_bcast(buf, n, t, root, zc_); },
      [&] { return MPI_Bcast(buf, n, t, root, MPI_COMM_WORLD); });
}

void Net::scatter(const void* sbuf, void* rbuf, int n, MPI_Datatype t, int root) {
  sending(
      "zcoll_scatter", "MPI_Scatter", [&] { return zcoll_scatter(sbuf, n, t, rbuf, n, t, root, zc_); },
      [&] { return MPI_Scatter(sbuf, n, t, rbuf, n, t, root, MPI_COMM_WORLD); });
}

void Net::alltoall(const void* sbuf, void* rbuf, int n, MPI_Datatype t) {
  sending(
      "zcoll_alltoall", "MPI_Alltoall", [&] { return zcoll_alltoall(sbuf, n, t, rbuf, n, t, zc_); },
      [&] { return MPI_Alltoall(sbuf, n, t, rbuf, n, t, MPI_COMM_WORLD); });
}

void Net::allreduce(void* buf, int n, MPI_Datatype t, MPI_Op op) {
  timed("MPI_Allreduce", false, [&] { return MPI_Allreduce(MPI_IN_PLACE, buf, n, t, op, MPI_COMM_WORLD); });
}

void Net::reduce(void* buf, int n, MPI_Datatype t, MPI_Op op, int root) {
  timed("MPI_Reduce", false,
        [&] { return MPI_Reduce(g_rank == root ? MPI_IN_PLACE : buf, buf, n, t, op, root, MPI_COMM_WORLD); });
}

double Net::eb_abs_max() const {
  double m = eb_abs_max_;
  MPI_Allreduce(MPI_IN_PLACE, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m;
}

Net::Totals Net::totals() const {
  double sum[4] = {raw_, wire_, calls_, compressed_}, mx[3] = {total_s_, comm_s_, eb_abs_max_};
  MPI_Allreduce(MPI_IN_PLACE, sum, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, mx, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  Totals t;
  t.raw_bytes = sum[0];
  t.wire_bytes = sum[1];
  t.calls = sum[2];
  t.compressed = sum[3];
  t.total_s = mx[0];
  t.comm_s = mx[1];
  t.eb_abs_max = mx[2];
  return t;
}

// ------------------------------------------------------------------------ run_configs

namespace {

bool lists(const std::vector<std::string>& v, const char* item) {
  return std::find(v.begin(), v.end(), item) != v.end();
}

struct Step {
  Config cfg;
  bool reported;
};

// The reference runs twice first: the first run only warms up (MPI's connections, page
// faults, caches), which would otherwise all be charged to plain MPI and flatter zcoll's
// speedup. Then plain MPI runs again right before every zcoll configuration (unreported),
// and each speedup is against that neighbour, so that a change in the host's speed during
// the launch does not pass for an effect of compression.
std::vector<Step> config_sequence(const Common& c) {
  const Config mpi{"mpi", "-", "-", 0};
  std::vector<Step> steps{{mpi, false}, {mpi, true}};
  if (lists(c.modes, "zcoll"))
    for (const auto& eb_mode : c.eb_modes)
      for (const auto& codec : c.codecs)
        for (double eb : c.ebs) {
          steps.push_back({mpi, false});
          steps.push_back({{"zcoll", codec, eb_mode, eb}, true});
        }
  return steps;
}

// The fields every application reports, before its own; t_ref: plain MPI's time just before.
Record common_fields(const std::string& app, const Config& cfg, const Common& c, const Net::Totals& tot,
                     double t_ref, const std::string& lib) {
  Record head;
  head.str("app", app);
  head.str("mode", cfg.mode, true);
  head.str("codec", cfg.codec, true);
  head.str("eb_mode", cfg.eb_mode, true);
  head.num("eb", cfg.mode == "mpi" ? NAN : cfg.eb, "%.0e", true);
  head.num("ranks", g_size);
  head.num("iters", c.iters);
  head.num("threads", c.threads);
  head.num("min_bytes", static_cast<double>(c.min_bytes), "%.0f");
  head.num("raw_bytes", tot.raw_bytes, "%.0f");
  head.num("wire_bytes", tot.wire_bytes, "%.0f");
  head.num("ratio", tot.wire_bytes > 0 ? tot.raw_bytes / tot.wire_bytes : 1.0, "%.3f", true);
  head.num("calls", tot.calls, "%.0f");
  head.num("compressed_calls", tot.compressed, "%.0f");
  head.num("eb_abs_max", tot.eb_abs_max, "%.6g");
  head.num("time_s", tot.total_s, "%.6f", true);
  head.num("comm_s", tot.comm_s, "%.6f", true);
  head.num("time_mpi_s", t_ref, "%.6f");
  head.num("speedup", tot.total_s > 0 ? t_ref / tot.total_s : 0, "%.3f", true);
  head.str("input", c.input);
  head.str("mpi_library", lib);
  return head;
}

}  // namespace

int run_configs(const std::string& app, const Common& c, const RunFn& run) {
  const bool print_mpi = lists(c.modes, "mpi");
  const std::string lib = zsupport::mpi_library();
  double t_ref = 0;
  int status = 0;
  bool header = false;
  for (const Step& step : config_sequence(c)) {
    const Config& cfg = step.cfg;
    Record body;
    Net::Totals tot;
    try {
      Net net(cfg, c);
      run(cfg, net, body);
      tot = net.totals();
    } catch (const UsageError& e) {
      if (g_rank == 0) std::fprintf(stderr, "zcoll-%s: skipped: %s\n", app.c_str(), e.msg.c_str());
      status = 1;
      continue;
    }
    // With --min-bytes 0 zcoll must have compressed every float message the run sent.
    if (cfg.mode == "zcoll" && c.min_bytes == 0)
      body.check("sending calls zcoll did not compress:", tot.calls - tot.compressed, 0);
    for (const auto& why : body.failures) {
      if (g_rank == 0)
        std::fprintf(stderr, "zcoll-%s: FAIL %s %s %s eb %g: %s\n", app.c_str(), cfg.mode.c_str(), cfg.codec.c_str(),
                     cfg.eb_mode.c_str(), cfg.eb, why.c_str());
      status = 1;
    }
    if (cfg.mode == "mpi") t_ref = tot.total_s;
    if (!step.reported || (cfg.mode == "mpi" && !print_mpi)) continue;
    Record head = common_fields(app, cfg, c, tot, t_ref, lib);
    head.append(body);
    if (g_rank != 0) continue;
    if (c.json) {
      std::printf("%s\n", head.json().c_str());
    } else {
      if (!header) std::printf("%s\n", head.table_header().c_str());
      header = true;
      std::printf("%s\n", head.table_row().c_str());
    }
    std::fflush(stdout);
  }
  return status;
}

// ----------------------------------------------------------------------- fields, errors

// The values widened to double; a shape that does not match the values is ignored (1-D).
Field load_field(const std::string& path) {
  Field fld;
  fld.path = path;
  std::string err;
  if (!zsupport::read_as_double(path, &fld.v, &err)) throw UsageError{err};
  const size_t n = fld.v.size();
  fld.shape = zsupport::shape_from_name(path);
  size_t prod = 1;
  for (size_t e : fld.shape) prod *= e;
  if (fld.shape.empty() || prod != n) fld.shape = {n};
  return fld;
}

template <class T>
ErrStats compare(const T* ref, const T* got, size_t n) {
  double mx[3] = {0, -INFINITY, -INFINITY}, sum[3] = {0, 0, 0};  // max |d|, -min ref, max ref; Σd², Σref², n
  for (size_t i = 0; i < n; ++i) {
    const double r = ref[i], d = static_cast<double>(got[i]) - r;
    mx[0] = std::isnan(d) ? INFINITY : std::max(mx[0], std::fabs(d));
    mx[1] = std::max(mx[1], -r);
    mx[2] = std::max(mx[2], r);
    sum[0] += d * d;
    sum[1] += r * r;
  }
  sum[2] = static_cast<double>(n);
  MPI_Allreduce(MPI_IN_PLACE, mx, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, sum, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  ErrStats e;
  e.max_abs = mx[0];
  e.range = sum[2] > 0 ? mx[2] + mx[1] : 0;
  e.rmse = sum[2] > 0 ? std::sqrt(sum[0] / sum[2]) : 0;
  e.psnr_db = zsupport::psnr_db(e.range, e.rmse);
  e.nrmse = zsupport::nrmse(e.range, e.rmse);
  e.l2_rel = sum[1] > 0 ? std::sqrt(sum[0] / sum[1]) : 0;
  return e;
}
template ErrStats compare<float>(const float*, const float*, size_t);
template ErrStats compare<double>(const double*, const double*, size_t);

// zcoll.h's rule, including the fallback for a message without a range.
template <class T>
double eb_abs_for(const T* x, size_t n, const std::string& eb_mode, double eb) {
  if (eb_mode == "abs") return eb;
  zsupport::ValueRange range;
  range.add(x, n);
  return range.rel_bound(eb);
}
template double eb_abs_for<float>(const float*, size_t, const std::string&, double);
template double eb_abs_for<double>(const double*, size_t, const std::string&, double);

int app_main(int argc, char** argv, const char* name, const char* usage, const std::function<int(Args&)>& body) {
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    std::fprintf(stderr, "%s: MPI_Init failed\n", name);
    return 1;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  int rc = 0;
  try {
    Args a(argc, argv);
    if (a.flag("--help")) {
      if (g_rank == 0) std::printf("%s%s", usage, common_usage().c_str());
    } else {
      rc = body(a);
    }
  } catch (const UsageError& e) {
    // Every rank parses the same arguments and reads the same files, so all get here.
    if (g_rank == 0) std::fprintf(stderr, "%s: %s\n%s%s", name, e.msg.c_str(), usage, common_usage().c_str());
    rc = 2;
  }
  std::fflush(stdout);  // results reach mpiexec before MPI_Finalize (which can hang across netns)
  std::fflush(stderr);
  MPI_Finalize();
  return rc;
}

}  // namespace zapp
