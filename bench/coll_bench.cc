// zcoll-bench coll: one collective, compressed (zcoll) against plain MPI on the same data.
//
//   mpiexec -n N zcoll-bench coll --op allgather|bcast|scatter|gather|alltoall --input FILE
//       [--dtype f32|f64] [--eb-mode abs|rel] [--eb X] [--algo ALGO] [--bytes PER_RANK]
//       [--iters K] [--warmup W] [--threads T] [--root R] [--json]
//
// Data: rank r holds the field from FILE (raw little-endian) rotated by r*n/N elements and
// tiled to the size asked for, so every rank holds different real data. --bytes is the
// message of the MPI call, i.e. sendcount (recvcount for gather, count for bcast) times the
// element size: per rank for allgather/gather, the whole buffer for bcast, each rank's block
// for scatter (the root holds N x bytes) and each destination's block for alltoall (every
// rank holds N x bytes). Bcast and scatter use the root's rotated field.
//
// Timing: W warm-up calls, then K timed ones; each is MPI_Barrier, t0 = MPI_Wtime(), the
// call, t = MPI_Wtime() - t0, MPI_Allreduce(MAX of t). time_s is the median over the K
// calls of the slowest rank's time. Plain MPI (MPI_Allgather, ... on the same buffers, same
// discipline) is measured first in the same run (time_mpi_s), then the requested algorithm.
//
// Errors: every element of every rank's output buffer (the root's for gather; the non-roots'
// for bcast, whose root only sends) from the last zcoll call is compared in double with what
// plain MPI delivered there. max_abs_err is the largest difference on any rank;
// max_err_over_eb divides it by eb_abs from zcoll_last_stats (the root's, which for
// bcast/scatter is the rank that resolved the bound); psnr_db = 20 log10(range / rmse) and
// nrmse = rmse / range, with the reference's value range and the rmse over all those
// elements on all ranks. Exit status: 0, 1 if an error exceeds the bound (or the reported
// eb_abs is looser than the bound asked for), a zcoll call fails, or the data is unusable;
// 2 for a usage error.
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cctype>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "zcoll.h"  // with <mpi.h>: zcoll-bench links zcoll::zcoll_static, not the codec-only target

namespace {

const char* const kUsage =
    "usage: mpiexec -n N zcoll-bench coll --op allgather|bcast|scatter|gather|alltoall --input FILE\n"
    "           [--dtype f32|f64] [--eb-mode abs|rel] [--eb X]\n"
    "           [--algo mpi|zcoll|cprp2p|ring|bruck|binomial|scatter-allgather|pairwise]\n"
    "           [--bytes PER_RANK] [--iters K] [--warmup W] [--threads T] [--root R] [--json]\n"
    "  --input FILE   raw little-endian field; dtype from --dtype or the .f32/.f64 suffix\n"
    "  --eb-mode/--eb error bound (default rel 1e-4)\n"
    "  --algo         mpi = plain MPI only; zcoll = zcoll's automatic choice; cprp2p = compress\n"
    "                 before every send (baseline); the others force that zcoll algorithm\n"
    "                 (default zcoll)\n"
    "  --bytes        message size of the MPI call (sendcount x element size), with K/M/G\n"
    "                 suffixes (powers of 1024); rounded to whole elements. Default 64M.\n"
    "                 scatter: each rank's block (the root holds N x bytes); alltoall: each\n"
    "                 destination's block (every rank holds N x bytes)\n"
    "  --iters K      timed calls (default 5), median of the slowest rank's time\n"
    "  --warmup W     untimed calls first (default 2)\n"
    "  --threads T    codec threads per rank (default 1; 0 = the OpenMP default)\n"
    "  --root R       root of bcast/scatter/gather (default 0)\n"
    "  --json         one JSON line per run (from rank 0)\n";

struct Opts {
  std::string op, input, dtype, eb_mode = "rel", algo = "zcoll";
  double eb = 1e-4;
  size_t bytes = size_t{64} << 20;
  int iters = 5, warmup = 2, threads = 1, root = 0;
  bool json = false, help = false;
};

enum class Op { Allgather, Bcast, Scatter, Gather, Alltoall };

int g_rank = 0, g_size = 1;

// Usage errors: printed once, by rank 0; every rank parses the same arguments.
struct UsageError {
  std::string msg;
};

bool parse_size(const std::string& s, size_t* out) {
  if (s.empty() || !(s[0] >= '0' && s[0] <= '9')) return false;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (errno || end == s.c_str()) return false;
  std::string suf(end);
  for (auto& ch : suf) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  double mul = 1;
  if (suf == "" || suf == "B") mul = 1;
  else if (suf == "K" || suf == "KB" || suf == "KIB") mul = 1024.0;
  else if (suf == "M" || suf == "MB" || suf == "MIB") mul = 1024.0 * 1024;
  else if (suf == "G" || suf == "GB" || suf == "GIB") mul = 1024.0 * 1024 * 1024;
  else return false;
  const double b = v * mul;
  if (!(b >= 1) || b > 1e15) return false;
  *out = static_cast<size_t>(std::llround(b));
  return true;
}

int parse_int(const std::string& a, const std::string& v, int lo) {
  char* end = nullptr;
  errno = 0;
  const long x = std::strtol(v.c_str(), &end, 10);
  if (errno || end == v.c_str() || *end || x < lo || x > INT_MAX) throw UsageError{"bad value for " + a + ": " + v};
  return static_cast<int>(x);
}

Opts parse(int argc, char** argv) {
  Opts o;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError{"missing value for " + a};
      return argv[++i];
    };
    if (a == "--op") o.op = val();
    else if (a == "--input") o.input = val();
    else if (a == "--dtype") o.dtype = val();
    else if (a == "--eb-mode") o.eb_mode = val();
    else if (a == "--eb") {
      const std::string v = val();
      char* end = nullptr;
      o.eb = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end || !std::isfinite(o.eb) || !(o.eb > 0)) throw UsageError{"bad --eb " + v};
    } else if (a == "--algo") o.algo = val();
    else if (a == "--bytes") {
      const std::string v = val();
      if (!parse_size(v, &o.bytes)) throw UsageError{"bad --bytes " + v};
    } else if (a == "--iters") o.iters = parse_int(a, val(), 1);
    else if (a == "--warmup") o.warmup = parse_int(a, val(), 0);
    else if (a == "--threads") o.threads = parse_int(a, val(), 0);
    else if (a == "--root") o.root = parse_int(a, val(), 0);
    else if (a == "--json") o.json = true;
    else if (a == "--help" || a == "-h") o.help = true;
    else throw UsageError{"unknown option " + a};
  }
  if (o.help) return o;
  if (o.op.empty()) throw UsageError{"--op is required"};
  if (o.input.empty()) throw UsageError{"--input is required"};
  if (o.eb_mode != "abs" && o.eb_mode != "rel") throw UsageError{"--eb-mode must be abs or rel"};
  if (o.dtype.empty()) {
    const auto dot = o.input.rfind('.');
    const std::string ext = dot == std::string::npos ? "" : o.input.substr(dot);
    if (ext == ".f32") o.dtype = "f32";
    else if (ext == ".f64") o.dtype = "f64";
    else throw UsageError{"--dtype not given and the input has no .f32/.f64 suffix"};
  }
  if (o.dtype != "f32" && o.dtype != "f64") throw UsageError{"--dtype must be f32 or f64"};
  return o;
}

bool parse_op(const std::string& s, Op* op) {
  if (s == "allgather") *op = Op::Allgather;
  else if (s == "bcast") *op = Op::Bcast;
  else if (s == "scatter") *op = Op::Scatter;
  else if (s == "gather") *op = Op::Gather;
  else if (s == "alltoall") *op = Op::Alltoall;
  else return false;
  return true;
}

// --algo -> zcoll_algorithm; "mpi" = plain MPI only (no zcoll run).
bool parse_algo(const std::string& s, int* algo) {
  static const struct {
    const char* name;
    int algo;
  } table[] = {{"mpi", ZCOLL_ALGO_MPI},          {"zcoll", ZCOLL_ALGO_AUTO},
               {"auto", ZCOLL_ALGO_AUTO},        {"cprp2p", ZCOLL_ALGO_CPRP2P},
               {"ring", ZCOLL_ALGO_RING},        {"bruck", ZCOLL_ALGO_BRUCK},
               {"binomial", ZCOLL_ALGO_BINOMIAL}, {"scatter-allgather", ZCOLL_ALGO_SCATTER_ALLGATHER},
               {"pairwise", ZCOLL_ALGO_PAIRWISE}};
  for (const auto& t : table)
    if (s == t.name) {
      *algo = t.algo;
      return true;
    }
  return false;
}

const char* algo_name(int a) {
  switch (a) {
    case ZCOLL_ALGO_AUTO: return "auto";
    case ZCOLL_ALGO_MPI: return "mpi";
    case ZCOLL_ALGO_CPRP2P: return "cprp2p";
    case ZCOLL_ALGO_RING: return "ring";
    case ZCOLL_ALGO_BRUCK: return "bruck";
    case ZCOLL_ALGO_BINOMIAL: return "binomial";
    case ZCOLL_ALGO_SCATTER_ALLGATHER: return "scatter-allgather";
    case ZCOLL_ALGO_PAIRWISE: return "pairwise";
  }
  return "unknown";
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (unsigned char ch : s) {
    if (ch == '"' || ch == '\\') {
      o += '\\';
      o += static_cast<char>(ch);
    } else if (ch < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", ch);
      o += buf;
    } else {
      o += static_cast<char>(ch);
    }
  }
  return o;
}

// A double as JSON: non-finite values have no JSON number, so they print as null.
std::string jnum(double v, const char* fmt = "%.9g") {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string mpi_library() {
  char buf[MPI_MAX_LIBRARY_VERSION_STRING + 1] = {0};
  int len = 0;
  MPI_Get_library_version(buf, &len);
  std::string s(buf, std::min<size_t>(static_cast<size_t>(std::max(len, 0)), sizeof buf - 1));
  s = s.substr(0, s.find('\n'));
  std::replace(s.begin(), s.end(), '\t', ' ');
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\0')) s.pop_back();
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<unsigned char> read_all(const std::string& path, std::string* err) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    *err = "cannot open " + path;
    return {};
  }
  return std::vector<unsigned char>(std::istreambuf_iterator<char>(f), {});
}

// dst[0..m) = field rotated left by shift, repeated as often as needed.
template <class T>
void fill_rotated(T* dst, size_t m, const std::vector<T>& field, size_t shift) {
  const size_t n = field.size();
  size_t pos = shift % n, done = 0;
  while (done < m) {
    const size_t k = std::min(m - done, n - pos);
    std::memcpy(dst + done, field.data() + pos, k * sizeof(T));
    done += k;
    pos = 0;
  }
}

template <class T>
MPI_Datatype mpi_type() {
  return sizeof(T) == 4 ? MPI_FLOAT : MPI_DOUBLE;
}

// min/max over the finite values.
template <class T>
void local_range(const T* x, size_t n, double* lo, double* hi) {
  for (size_t i = 0; i < n; ++i) {
    const double v = x[i];
    if (!std::isfinite(v)) continue;
    *lo = std::min(*lo, v);
    *hi = std::max(*hi, v);
  }
}

// One op's buffers on this rank: input (send / bcast root) and output for plain MPI (ref)
// and for zcoll (got).
template <class T>
struct Buffers {
  std::vector<T> send, ref, got;
  size_t cmp_off = 0, cmp_len = 0;  // elements of the output buffer compared (ref vs got)
};

struct Errors {
  double max_abs = 0, sumsq = 0, n = 0, lo = INFINITY, hi = -INFINITY;
  double bad_specials = 0;  // non-finite references not reproduced bit for bit
};

template <class T>
Errors compare(const T* ref, const T* got, size_t n) {
  Errors e;
  for (size_t i = 0; i < n; ++i) {
    const double a = ref[i], b = got[i];
    if (!std::isfinite(a)) {
      if (std::memcmp(&ref[i], &got[i], sizeof(T)) != 0) {
        e.bad_specials += 1;
        e.max_abs = INFINITY;
      }
      continue;
    }
    const double d = std::fabs(b - a);  // inf or NaN if got is not finite
    e.max_abs = std::isnan(d) ? INFINITY : std::max(e.max_abs, d);
    e.sumsq += d * d;
    e.n += 1;
    e.lo = std::min(e.lo, a);
    e.hi = std::max(e.hi, a);
  }
  return e;
}

struct Result {
  std::string op, algo, algo_ran = "mpi", dtype, eb_mode, input;
  int ranks = 0, iters = 0, warmup = 0, threads = 0, root = 0, compressed = 0;
  size_t bytes_per_rank = 0;
  double eb = 0, eb_abs = 0, eb_abs_expected = 0, time_s = 0, time_mpi_s = 0, speedup = 1, ratio = 1;
  double raw_bytes = 0, wire_bytes = 0, max_abs_err = 0, max_err_over_eb = 0, psnr_db = INFINITY, nrmse = 0;
  double t_compress = 0, t_comm = 0, t_decompress = 0, bad_specials = 0;
  std::vector<double> times, times_mpi;
};

// Runs f (returning an MPI or zcoll code) W + K times with the barrier discipline; returns
// the median of the per-call maximum over ranks, or sets *rc to the first failure anywhere
// (the largest code over the ranks).
template <class F>
double measure(int warmup, int iters, F&& f, int* rc, std::vector<double>* times) {
  times->clear();
  for (int i = 0; i < warmup + iters; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    const int code = f();
    const double t = MPI_Wtime() - t0;
    double v[2] = {t, static_cast<double>(code)}, m[2];
    MPI_Allreduce(v, m, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (m[1] != 0) {
      *rc = code ? code : static_cast<int>(m[1]);
      return 0;
    }
    if (i >= warmup) times->push_back(m[0]);
  }
  *rc = 0;
  return median(*times);
}

template <class T>
int run(const Opts& o, Op op, int algo, const std::vector<T>& field, Result* res) {
  const int p = g_size, r = g_rank, root = o.root;
  const size_t es = sizeof(T);
  const size_t count = std::max<size_t>(1, (o.bytes + es / 2) / es);
  if (count > static_cast<size_t>(INT_MAX)) {
    if (r == 0) std::fprintf(stderr, "zcoll-bench coll: --bytes gives %zu elements, more than an int count\n", count);
    return 1;
  }
  const int icount = static_cast<int>(count);
  const size_t total = count * p;
  const size_t n0 = field.size();
  const MPI_Datatype mt = mpi_type<T>();
  const T sentinel = std::numeric_limits<T>::quiet_NaN();  // output not written shows as an error
  Buffers<T> b;
  switch (op) {
    case Op::Allgather:
    case Op::Gather:
      b.send.resize(count);
      fill_rotated(b.send.data(), count, field, r * n0 / p);
      if (op == Op::Allgather || r == root) {
        b.ref.assign(total, sentinel);
        b.got.assign(total, sentinel);
        b.cmp_len = total;
      }
      break;
    case Op::Bcast:
      // One buffer per path; the root's holds its field, the others' the sentinel.
      if (r == root) {
        b.ref.resize(count);
        fill_rotated(b.ref.data(), count, field, root * n0 / p);
        b.got = b.ref;
      } else {
        b.ref.assign(count, sentinel);
        b.got.assign(count, sentinel);
        b.cmp_len = count;
      }
      break;
    case Op::Scatter:
      if (r == root) {
        b.send.resize(total);
        fill_rotated(b.send.data(), total, field, root * n0 / p);
      }
      b.ref.assign(count, sentinel);
      b.got.assign(count, sentinel);
      b.cmp_len = count;
      break;
    case Op::Alltoall:
      b.send.resize(total);
      fill_rotated(b.send.data(), total, field, r * n0 / p);
      b.ref.assign(total, sentinel);
      b.got.assign(total, sentinel);
      b.cmp_len = total;
      break;
  }

  // The bound the caller asked for, resolved here independently of zcoll: ABS as given,
  // REL from the global range (allgather, gather, alltoall) or the root's (bcast, scatter).
  double eb_expected = o.eb;
  if (o.eb_mode == "rel") {
    double lo = INFINITY, hi = -INFINITY;
    const bool rooted = op == Op::Bcast || op == Op::Scatter;
    if (op == Op::Bcast) {
      if (r == root) local_range(b.ref.data(), count, &lo, &hi);
    } else if (!rooted || r == root) {
      local_range(b.send.data(), b.send.size(), &lo, &hi);
    }
    double ext[2] = {-lo, hi};
    MPI_Allreduce(MPI_IN_PLACE, ext, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    lo = -ext[0];
    hi = ext[1];
    eb_expected = hi > lo ? o.eb * (hi - lo) : 0;  // 0: no range; zcoll's own rule applies
  }

  auto mpi_call = [&](T* out) -> int {
    switch (op) {
      case Op::Allgather: return MPI_Allgather(b.send.data(), icount, mt, out, icount, mt, MPI_COMM_WORLD);
      case Op::Bcast: return MPI_Bcast(out, icount, mt, root, MPI_COMM_WORLD);
      case Op::Scatter: return MPI_Scatter(b.send.data(), icount, mt, out, icount, mt, root, MPI_COMM_WORLD);
      case Op::Gather: return MPI_Gather(b.send.data(), icount, mt, out, icount, mt, root, MPI_COMM_WORLD);
      case Op::Alltoall: return MPI_Alltoall(b.send.data(), icount, mt, out, icount, mt, MPI_COMM_WORLD);
    }
    return MPI_ERR_OTHER;
  };

  res->ranks = p;
  res->bytes_per_rank = count * es;
  res->eb_abs_expected = eb_expected;
  int rc = 0;
  res->time_mpi_s = measure(o.warmup, o.iters, [&] { return mpi_call(b.ref.data()); }, &rc, &res->times_mpi);
  if (rc) {
    if (r == 0) std::fprintf(stderr, "zcoll-bench coll: MPI %s failed (code %d)\n", o.op.c_str(), rc);
    return 1;
  }
  if (algo == ZCOLL_ALGO_MPI) {
    res->time_s = res->time_mpi_s;
    res->times = res->times_mpi;
    res->eb_abs = eb_expected;
    return 0;
  }

  zcoll_config cfg;
  zcoll_config_init(&cfg);  // min_bytes stays at its default
  cfg.codec.eb_mode = o.eb_mode == "abs" ? ZCOLL_EB_ABS : ZCOLL_EB_REL;
  cfg.codec.eb = o.eb;
  cfg.codec.threads = o.threads;
  cfg.algorithm = algo;
  zcoll_comm zc = nullptr;
  rc = zcoll_comm_create(MPI_COMM_WORLD, &cfg, &zc);
  int worst = rc;
  MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (worst) {
    if (rc) std::fprintf(stderr, "zcoll-bench coll: rank %d: zcoll_comm_create: %s\n", r, zcoll_strerror(rc));
    if (zc) zcoll_comm_free(&zc);
    return 1;
  }
  auto z_call = [&]() -> int {
    T* out = b.got.data();
    switch (op) {
      case Op::Allgather: return zcoll_allgather(b.send.data(), icount, mt, out, icount, mt, zc);
      case Op::Bcast: return zcoll_bcast(out, icount, mt, root, zc);
      case Op::Scatter: return zcoll_scatter(b.send.data(), icount, mt, out, icount, mt, root, zc);
      case Op::Gather: return zcoll_gather(b.send.data(), icount, mt, out, icount, mt, root, zc);
      case Op::Alltoall: return zcoll_alltoall(b.send.data(), icount, mt, out, icount, mt, zc);
    }
    return ZCOLL_ERR_INTERNAL;
  };
  int zrc = 0;
  // zcoll_* return zcoll codes; keep this rank's own code for the message.
  int mine = 0;
  res->time_s = measure(o.warmup, o.iters, [&] { return mine = z_call(); }, &zrc, &res->times);
  if (zrc) {
    if (mine) std::fprintf(stderr, "zcoll-bench coll: rank %d: zcoll_%s: %s\n", r, o.op.c_str(), zcoll_strerror(mine));
    else if (r == 0) std::fprintf(stderr, "zcoll-bench coll: zcoll_%s failed on another rank\n", o.op.c_str());
    zcoll_comm_free(&zc);
    return 1;
  }
  zcoll_stats st{};
  zcoll_last_stats(zc, &st);
  zcoll_comm_free(&zc);

  // Stats of the last call. eb_abs and the algorithm: the root's (for bcast/scatter only the
  // root resolves a REL bound; for the global ops every rank has the same).
  double head[3] = {st.eb_abs, static_cast<double>(st.algorithm), static_cast<double>(st.compressed)};
  MPI_Bcast(head, 3, MPI_DOUBLE, root, MPI_COMM_WORLD);
  res->eb_abs = head[0];
  res->algo_ran = algo_name(static_cast<int>(head[1]));
  res->compressed = static_cast<int>(head[2]);
  double sums[2] = {st.compressed ? static_cast<double>(st.raw_bytes) : 0.0,
                    static_cast<double>(st.wire_bytes)};
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  res->raw_bytes = sums[0];
  res->wire_bytes = sums[1];
  res->ratio = res->compressed && sums[1] > 0 ? sums[0] / sums[1] : 1.0;
  double tm[3] = {st.t_compress, st.t_comm, st.t_decompress};
  MPI_Allreduce(MPI_IN_PLACE, tm, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  res->t_compress = tm[0];
  res->t_comm = tm[1];
  res->t_decompress = tm[2];
  res->speedup = res->time_s > 0 ? res->time_mpi_s / res->time_s : 0;

  // Errors against plain MPI's output, over all ranks.
  Errors e = compare(b.ref.data() + b.cmp_off, b.got.data() + b.cmp_off, b.cmp_len);
  double mx[4] = {e.max_abs, -e.lo, e.hi, 0}, sm[3] = {e.sumsq, e.n, e.bad_specials};
  MPI_Allreduce(MPI_IN_PLACE, mx, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, sm, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  const double range = mx[2] + mx[1], rmse = sm[1] > 0 ? std::sqrt(sm[0] / sm[1]) : 0;
  res->max_abs_err = mx[0];
  res->bad_specials = sm[2];
  res->max_err_over_eb = res->eb_abs > 0 ? mx[0] / res->eb_abs : (mx[0] > 0 ? INFINITY : 0);
  res->nrmse = range > 0 ? rmse / range : 0;
  res->psnr_db = rmse > 0 && range > 0 ? 20 * std::log10(range / rmse) : INFINITY;
  return 0;
}

void print(const Result& r, bool json, const std::string& lib) {
  if (json) {
    std::printf(
        "{\"op\":\"%s\",\"ranks\":%d,\"algo\":\"%s\",\"algo_ran\":\"%s\",\"compressed\":%d,\"dtype\":\"%s\","
        "\"bytes_per_rank\":%zu,\"eb_mode\":\"%s\",\"eb\":%s,\"eb_abs\":%s,\"eb_abs_expected\":%s,"
        "\"time_s\":%s,\"time_mpi_s\":%s,\"speedup_vs_mpi\":%s,\"ratio\":%s,\"raw_bytes\":%.0f,"
        "\"wire_bytes\":%.0f,\"max_abs_err\":%s,\"max_err_over_eb\":%s,\"psnr_db\":%s,\"nrmse\":%s,"
        "\"t_compress_s\":%s,\"t_comm_s\":%s,\"t_decompress_s\":%s,\"iters\":%d,\"warmup\":%d,\"threads\":%d,"
        "\"root\":%d,\"input\":\"%s\",\"mpi_library\":\"%s\"}\n",
        r.op.c_str(), r.ranks, r.algo.c_str(), r.algo_ran.c_str(), r.compressed, r.dtype.c_str(), r.bytes_per_rank,
        r.eb_mode.c_str(), jnum(r.eb, "%.6g").c_str(), jnum(r.eb_abs).c_str(), jnum(r.eb_abs_expected).c_str(),
        jnum(r.time_s, "%.6f").c_str(), jnum(r.time_mpi_s, "%.6f").c_str(), jnum(r.speedup, "%.4f").c_str(),
        jnum(r.ratio, "%.4f").c_str(), r.raw_bytes, r.wire_bytes, jnum(r.max_abs_err).c_str(),
        jnum(r.max_err_over_eb, "%.6f").c_str(), jnum(r.psnr_db, "%.3f").c_str(), jnum(r.nrmse, "%.6g").c_str(),
        jnum(r.t_compress, "%.6f").c_str(), jnum(r.t_comm, "%.6f").c_str(), jnum(r.t_decompress, "%.6f").c_str(),
        r.iters, r.warmup, r.threads, r.root, json_escape(r.input).c_str(), json_escape(lib).c_str());
  } else {
    std::printf("%s %s(%s) %d ranks %s %.4g MiB/rank: %.4f s vs MPI %.4f s (%.2fx), ratio %.2f, "
                "max_err/eb %.4f, PSNR %.2f dB, NRMSE %.3g [compress %.4f comm %.4f decompress %.4f s]\n",
                r.op.c_str(), r.algo.c_str(), r.algo_ran.c_str(), r.ranks, r.dtype.c_str(),
                r.bytes_per_rank / 1048576.0, r.time_s, r.time_mpi_s, r.speedup, r.ratio, r.max_err_over_eb,
                r.psnr_db, r.nrmse, r.t_compress, r.t_comm, r.t_decompress);
  }
}

template <class T>
bool load_field(const std::string& path, std::vector<T>* field, std::string* err) {
  const auto raw = read_all(path, err);
  if (!err->empty()) return false;
  if (raw.size() < sizeof(T) || raw.size() % sizeof(T)) {
    *err = path + ": size " + std::to_string(raw.size()) + " is not a positive multiple of " +
           std::to_string(sizeof(T)) + " bytes";
    return false;
  }
  field->resize(raw.size() / sizeof(T));
  std::memcpy(field->data(), raw.data(), raw.size());  // raw little-endian; x86/arm64 hosts
  return true;
}

template <class T>
int run_typed(const Opts& o, Op op, int algo, Result* res) {
  std::vector<T> field;
  std::string err;
  int ok = load_field(o.input, &field, &err) ? 1 : 0, all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all) {
    if (!ok) std::fprintf(stderr, "zcoll-bench coll: rank %d: %s\n", g_rank, err.c_str());
    return 1;
  }
  return run<T>(o, op, algo, field, res);
}

int finish(int rc) {
  std::fflush(stdout);  // results reach mpiexec before MPI_Finalize (which can hang across netns)
  std::fflush(stderr);
  MPI_Finalize();
  return rc;
}

}  // namespace

int coll_main(int argc, char** argv) {
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    std::fprintf(stderr, "zcoll-bench coll: MPI_Init failed\n");
    return 1;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  Opts o;
  Op op{};
  int algo = 0;
  try {
    o = parse(argc, argv);
    if (o.help) {
      if (g_rank == 0) std::fputs(kUsage, stdout);
      return finish(0);
    }
    if (!parse_op(o.op, &op)) throw UsageError{"unknown --op " + o.op};
    if (!parse_algo(o.algo, &algo)) throw UsageError{"unknown --algo " + o.algo};
    if (o.root >= g_size) throw UsageError{"--root must be below the number of ranks"};
  } catch (const UsageError& e) {
    if (g_rank == 0) std::fprintf(stderr, "zcoll-bench coll: %s\n%s", e.msg.c_str(), kUsage);
    return finish(2);
  }
  Result res;
  res.op = o.op;
  res.algo = o.algo;
  res.dtype = o.dtype;
  res.eb_mode = o.eb_mode;
  res.eb = o.eb;
  res.input = o.input;
  res.iters = o.iters;
  res.warmup = o.warmup;
  res.threads = o.threads;
  res.root = o.root;
  int rc = o.dtype == "f32" ? run_typed<float>(o, op, algo, &res) : run_typed<double>(o, op, algo, &res);
  if (rc) return finish(rc);
  const std::string lib = mpi_library();
  if (g_rank == 0) print(res, o.json, lib);
  bool fail = false;
  if (g_rank == 0) {
    if (!(res.max_err_over_eb <= 1.0)) {
      std::fprintf(stderr, "zcoll-bench coll: error beyond the bound: max_err_over_eb = %g\n", res.max_err_over_eb);
      fail = true;
    }
    if (res.bad_specials > 0) {
      std::fprintf(stderr, "zcoll-bench coll: %.0f non-finite values not reproduced\n", res.bad_specials);
      fail = true;
    }
    // zcoll may tighten the bound, never loosen it.
    if (res.compressed && res.eb_abs_expected > 0 && res.eb_abs > res.eb_abs_expected * (1 + 1e-9)) {
      std::fprintf(stderr, "zcoll-bench coll: reported eb_abs %.9g is looser than the requested %.9g\n", res.eb_abs,
                   res.eb_abs_expected);
      fail = true;
    }
  }
  return finish(fail ? 1 : 0);
}
