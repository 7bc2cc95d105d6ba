// MPI tests of zcoll's compressed reductions (the contract is the reductions block and
// "homomorphic combination" in include/zcoll.h): zcoll_allreduce, zcoll_reduce,
// zcoll_reduce_scatter_block and zcoll_reduce_scatter.
//
//   zcoll_mpi_reduce_tests [section ...]      (no section: all of them)
//
// Sections: bound identical agree edge overflow special passthrough result_bound errors
// (each described where it is defined). Every rank regenerates every rank's input (slices
// of the shipped real fields, chosen by owner rank and a per-call salt) and checks every
// element it received against a reference computed in long double from all inputs:
//   |result - reference| <= k x eps (+ rounding for SUM), with eps the per-input bound
//   (zcoll_last_stats().eb_abs, itself checked against ABS / REL x global range), k from
//   the header's table (homomorphic SUM p; homomorphic MIN/MAX 1 with no slack at all;
//   DOC reduce_scatter p-1, DOC allreduce/reduce p; CPRP2P allreduce 2p-2),
//   rounding = p u sum|x_i| + u |reference| (u: unit roundoff of the element type).
// NaN/Inf results follow IEEE. Every plain-MPI path must be bit-identical to the same MPI
// call. Receive buffers carry guard elements that must come back untouched. Allreduce
// results, eb_abs and stats.compressed must agree across ranks (checked in batches).
// A failing check prints "[rank r/p] FAIL file:line [case] ..."; every rank reaches
// MPI_Finalize and the exit code is non-zero if any rank failed. ZCOLL_TEST_TRACE=1 in the
// environment prints every call before it is made (to find a crash or a hang).
#include <zcoll.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "fields.h"
#include "mpi_check.h"

namespace {

// ------------------------------------------------------------------ element types

template <class T>  // float, double, int32_t (MPI_INT)
struct Ty {
  static constexpr bool fp = std::is_floating_point_v<T>, f32 = std::is_same_v<T, float>;
  static constexpr double u = f32 ? 0x1p-24 : fp ? 0x1p-53 : 0;  // unit roundoff
  static MPI_Datatype mpi() { return f32 ? MPI_FLOAT : fp ? MPI_DOUBLE : MPI_INT; }
  static const char* name() { return f32 ? "f32" : fp ? "f64" : "MPI_INT"; }
};

template <class T>
void set_sentinel(T* p, size_t n) {
  std::memset(static_cast<void*>(p), 0xA5, n * sizeof(T));  // 0xa5a5a5a5: a float/double no path produces here
}

template <class T>
std::string show(T x) {
  char b[96];
  uint64_t bits = 0;
  std::memcpy(&bits, &x, sizeof x);
  std::snprintf(b, sizeof b, "%.17g (0x%llx)", static_cast<double>(x), static_cast<unsigned long long>(bits));
  return b;
}

// ------------------------------------------------------------------ fields and inputs

// kSpecial: NaN (several payloads, a signalling one) and +-Inf, sprinkled and at fixed places;
// kOverflow: |x / (2 eb)| near and above the quantizer's 2^30 integer limit (eb = Data::ob).
enum class Spec { kNone, kSpecial, kOverflow };
struct Data {
  int fid = 0;  // which field
  Spec spec = Spec::kNone;
  double ob = 0, scale = 1;  // kOverflow's eb; a power-of-two factor on the field values
};

uint64_t g_salt = 1;
uint64_t next_salt() { return g_salt++; }  // the same sequence on every rank

// NaN, a NaN payload, a negative NaN, a signalling NaN, +Inf, -Inf.
template <class T>
T special_value(unsigned k) {
  static const uint32_t b32[] = {0x7fc00000u, 0x7fc12345u, 0xffc00001u, 0x7f800001u, 0x7f800000u, 0xff800000u};
  static const uint64_t b64[] = {0x7ff8000000000000ull, 0x7ff8000000012345ull, 0xfff8000000000001ull,
                                 0x7ff0000000000001ull, 0x7ff0000000000000ull, 0xfff0000000000000ull};
  T v;
  std::memcpy(&v, sizeof(T) == 4 ? static_cast<const void*>(&b32[k % 6]) : &b64[k % 6], sizeof(T));
  return v;
}

// Element i of what `owner` contributes to the call with this salt: a slice of a field.
// Doubles are the float values plus a smooth term, so that they are not float values.
template <class T>
void gen(T* out, const Data& d, int owner, uint64_t salt, size_t n) {
  const std::vector<float>& f = g_f32[static_cast<size_t>(d.fid) % g_f32.size()];
  const size_t len = f.size();
  const size_t start = static_cast<size_t>((static_cast<uint64_t>(owner) * (len / 7 + 1009) + salt * 104729u) % len);
  for (size_t i = 0; i < n; ++i) {
    const size_t k = (start + i) % len;
    if constexpr (std::is_same_v<T, int32_t>) {
      uint32_t b;
      std::memcpy(&b, &f[k], 4);
      out[i] = static_cast<int32_t>((b >> 3) % 7) - 3;  // -3..3, zeros included
    } else if (d.spec == Spec::kOverflow) {
      // L = 2^30 x 2 eb: the quantizer's integer limit. Classes, in runs of 64 elements (so
      // that whole codec blocks are free of exact values) and mixed element by element in
      // every fifth run: 0/1 the same sign on every rank (sums of two leave the integer
      // range), 2 the sign varies by rank, 3 just above L (stored exactly).
      const double L = 0x1p30 * 2 * d.ob, frac = 0.5 + 0.5 * std::sin(0.001 * static_cast<double>(k) + 0.7 * owner);
      const size_t run = i / 64, cls = run % 5 == 4 ? i % 4 : run % 5;
      const double m = (cls == 3 ? 1.0 + 0.05 * frac : 0.9 + 0.09 * frac) * L;
      const double s = cls == 0 ? 1 : cls == 1 ? -1 : cls == 2 ? ((owner + run) % 2 ? -1 : 1) : (i % 8 < 4 ? 1 : -1);
      out[i] = static_cast<T>(s * m);
    } else {
      double v = static_cast<double>(f[k]);
      if (std::is_same_v<T, double>) v += 0.25 * std::sin(0.0123 * static_cast<double>(k));
      out[i] = static_cast<T>(v * d.scale);
      if (d.spec == Spec::kSpecial) {
        const uint64_t h = (i * 2654435761u + static_cast<uint64_t>(owner) * 40503u + salt * 977u) % 151;
        if (h < 5) out[i] = special_value<T>(h == 4 ? 5 : static_cast<unsigned>(h));  // NaNs, or -Inf
        if (h == 5) out[i] = special_value<T>(4);                                         // +Inf
        const size_t m = i % 97;
        if (m == 5) out[i] = special_value<T>(4);                                  // +Inf everywhere
        if (m == 11) out[i] = special_value<T>(5);                                 // -Inf everywhere
        if (m == 23 && owner < 2) out[i] = special_value<T>(owner == 0 ? 4 : 5);  // +Inf + -Inf = NaN
        if (m == 31 && owner == 0) out[i] = special_value<T>(1);                   // one NaN
      }
    }
  }
}

// ------------------------------------------------------------------ configurations

struct Cfg {  // Cfg{algorithm, reduction, eb mode, eb, chunk_len, min_bytes, bound_target}
  int algo = ZCOLL_ALGO_AUTO, red = ZCOLL_REDUCTION_AUTO, mode = ZCOLL_EB_ABS;
  double eb = 1e-2;
  size_t chunk = 0, min_bytes = 1024;
  int target = ZCOLL_BOUND_INPUT;
};

const char* algo_name(int a) {
  static const char* n[] = {"AUTO", "MPI", "CPRP2P", "RING", "BRUCK", "BINOMIAL", "SCATTER_ALLGATHER", "PAIRWISE", "RD",
                            "HIERARCHICAL"};
  return a >= 0 && a <= ZCOLL_ALGO_HIERARCHICAL ? n[a] : "?";
}

std::string cfg_str(const Cfg& c) {
  char b[200];
  std::snprintf(b, sizeof b, "algo=%s red=%s target=%s %s eb=%g min_bytes=%zu chunk=%zu", algo_name(c.algo),
                c.red == ZCOLL_REDUCTION_DOC ? "DOC" : c.red == ZCOLL_REDUCTION_HOMOMORPHIC ? "HOMO" : "AUTO",
                c.target == ZCOLL_BOUND_RESULT ? "RESULT" : "INPUT", c.mode == ZCOLL_EB_REL ? "REL" : "ABS", c.eb,
                c.min_bytes, c.chunk);
  return b;
}

zcoll_comm make_comm(const Cfg& c) {
  zcoll_config cfg;
  zcoll_config_init(&cfg);
  EXPECT(cfg.reduction == ZCOLL_REDUCTION_AUTO && cfg.bound_target == ZCOLL_BOUND_INPUT,
         "zcoll_config_init defaults: reduction %d bound_target %d", cfg.reduction, cfg.bound_target);
  cfg.codec.eb_mode = c.mode;
  cfg.codec.eb = c.eb;
  cfg.codec.chunk_len = c.chunk;
  cfg.codec.threads = 1;
  cfg.min_bytes = c.min_bytes;
  cfg.algorithm = c.algo;
  cfg.reduction = c.red;
  cfg.bound_target = c.target;
  zcoll_comm zc = nullptr;
  const int rc = zcoll_comm_create(MPI_COMM_WORLD, &cfg, &zc);
  EXPECT(rc == ZCOLL_SUCCESS && zc, "zcoll_comm_create(%s) returned %d (%s)", cfg_str(c).c_str(), rc,
         zcoll_strerror(rc));
  return rc == ZCOLL_SUCCESS ? zc : nullptr;
}

void free_comm(zcoll_comm& zc) {
  if (!zc) return;
  EXPECT_RC(zcoll_comm_free(&zc), ZCOLL_SUCCESS);
  EXPECT(zc == nullptr, "zcoll_comm_free left the handle set");
}

// ------------------------------------------------------------------ cross-rank agreement

// Values every rank must agree on (allreduce result hashes, eb_abs, stats.compressed),
// compared in one MPI_Allgather per section: every rank pushes the same number.
struct Agree {
  std::vector<uint64_t> v;
  std::vector<std::string> what;
} g_agree;

void agree_push(uint64_t x, const char* what) {
  g_agree.v.push_back(x);
  g_agree.what.push_back(ctx() + " | " + what);
}

void agree_flush() {
  const size_t p = static_cast<size_t>(g_size), n = g_agree.v.size();
  long mine = static_cast<long>(n), lo = 0, hi = 0;
  MPI_Allreduce(&mine, &lo, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&mine, &hi, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  EXPECT(lo == hi, "ranks pushed between %ld and %ld agreement values (this rank %ld)", lo, hi, mine);
  if (lo == hi && n > 0) {
    std::vector<uint64_t> all(n * p);
    MPI_Allgather(g_agree.v.data(), static_cast<int>(n), MPI_UINT64_T, all.data(), static_cast<int>(n), MPI_UINT64_T,
                  MPI_COMM_WORLD);
    for (size_t i = 0; i < n; ++i)
      for (size_t s = 0; s < p; ++s)
        EXPECT(all[s * n + i] == g_agree.v[i], "[%s] rank %zu has 0x%llx, this rank 0x%llx", g_agree.what[i].c_str(),
               s, static_cast<unsigned long long>(all[s * n + i]), static_cast<unsigned long long>(g_agree.v[i]));
  }
  g_agree = Agree{};
}

// ------------------------------------------------------------------ one reduction call

enum Coll { kAllreduce, kReduce, kRsb, kRs };
const char* coll_name(Coll c) {
  static const char* n[] = {"allreduce", "reduce", "reduce_scatter_block", "reduce_scatter"};
  return n[c];
}

MPI_Op g_absmax = MPI_OP_NULL;  // a user-defined op
const char* op_name(MPI_Op op) {
  return op == MPI_SUM ? "SUM" : op == MPI_MIN ? "MIN" : op == MPI_MAX ? "MAX" : op == MPI_PROD ? "PROD"
         : op == MPI_LAND ? "LAND" : "user op";
}
bool supported(MPI_Op op) { return op == MPI_SUM || op == MPI_MIN || op == MPI_MAX; }

struct Call {
  Coll coll = kAllreduce;
  MPI_Op op = MPI_SUM;
  size_t count = 0;  // allreduce/reduce: count; reduce_scatter_block: recvcount; reduce_scatter: base count
  int pattern = 0, root = 0;  // pattern: reduce_scatter's recvcounts (rs_counts)
  bool in_place = false, null_recv = false;  // null_recv: reduce with NULL recvbuf on the non-roots
  uint64_t salt = 0;                         // 0: a new one
  Data data;
};

std::vector<int> rs_counts(size_t base, int pattern, int p) {
  std::vector<int> c(static_cast<size_t>(p));
  for (int i = 0; i < p; ++i) {
    size_t n = base;
    if (pattern == 0) n = i % 3 == 1 ? 0 : base + static_cast<size_t>(i) * 733 % (base / 2 + 1);
    if (pattern == 1) n = i == p - 1 ? base : 0;  // one rank gets everything
    if (pattern == 2) n = i == 0 && p > 1 ? 0 : base + static_cast<size_t>(i);
    c[static_cast<size_t>(i)] = static_cast<int>(n);
  }
  return c;
}

template <class T>
struct Out {
  std::vector<T> got;                   // this rank's result block
  std::vector<long double> ref, asum;   // reference and sum of |inputs| per element
  double eps = 0, allowed = 0;          // per-input bound; allowed error (before rounding terms)
  bool comp = false;
};

constexpr size_t kGuard = 13;

const MPI_Op kOps[] = {MPI_SUM, MPI_MIN, MPI_MAX};
const int kHomo = ZCOLL_REDUCTION_HOMOMORPHIC, kDoc = ZCOLL_REDUCTION_DOC, kAuto = ZCOLL_ALGO_AUTO,
          kRing = ZCOLL_ALGO_RING, kRD = ZCOLL_ALGO_RECURSIVE_DOUBLING, kCpr = ZCOLL_ALGO_CPRP2P;

// The bound multiplier from the header's table (homo: homomorphic path).
double multiplier(Coll coll, const Cfg& c, MPI_Op op, int p) {
  if (c.algo == ZCOLL_ALGO_CPRP2P) return coll == kAllreduce ? 2 * p - 2 : coll == kReduce ? p : p - 1;
  if (c.red == ZCOLL_REDUCTION_DOC) return coll == kRsb || coll == kRs ? p - 1 : p;
  if (op != MPI_SUM) return 1;
  return coll == kRsb || coll == kRs ? p - 1 : p;  // a reduce-scatter's own values stay unquantized
}

// The call through zcoll, or straight to MPI (on MPI_COMM_WORLD) with zc == nullptr.
int call(const Call& k, const void* sb, void* rb, const std::vector<int>& counts, MPI_Datatype t, zcoll_comm zc) {
  const int n = static_cast<int>(k.count);
  const MPI_Comm w = MPI_COMM_WORLD;
  switch (k.coll) {
    case kAllreduce: return zc ? zcoll_allreduce(sb, rb, n, t, k.op, zc) : MPI_Allreduce(sb, rb, n, t, k.op, w);
    case kReduce: return zc ? zcoll_reduce(sb, rb, n, t, k.op, k.root, zc) : MPI_Reduce(sb, rb, n, t, k.op, k.root, w);
    case kRsb:
      return zc ? zcoll_reduce_scatter_block(sb, rb, n, t, k.op, zc) : MPI_Reduce_scatter_block(sb, rb, n, t, k.op, w);
    default:
      return zc ? zcoll_reduce_scatter(sb, rb, counts.data(), t, k.op, zc)
                : MPI_Reduce_scatter(sb, rb, counts.data(), t, k.op, w);
  }
}

// Runs one reduction with zcoll and checks it completely (see the top of the file).
template <class T>
Out<T> run(zcoll_comm zc, const Cfg& c, const Call& k) {
  const int p = g_size, r = g_rank;
  Ctx cx("%s %s %s count=%zu%s%s root=%d", coll_name(k.coll), Ty<T>::name(), op_name(k.op), k.count,
         k.in_place ? " IN_PLACE" : "", k.null_recv ? " NULL non-root recvbuf" : "", k.root);
  // Layout: every rank's input has `total` elements; this rank's result is [my_off, my_off + my_n).
  const std::vector<int> counts = k.coll == kRs ? rs_counts(k.count, k.pattern, p)
                                                : std::vector<int>(static_cast<size_t>(p), static_cast<int>(k.count));
  const bool scatter = k.coll == kRsb || k.coll == kRs, root = k.coll != kReduce || r == k.root;
  const size_t total = scatter ? std::accumulate(counts.begin(), counts.end(), size_t{0}) : k.count;
  const size_t my_off = scatter ? std::accumulate(counts.begin(), counts.begin() + r, size_t{0}) : 0;
  const size_t my_n = !root ? 0 : scatter ? static_cast<size_t>(counts[static_cast<size_t>(r)]) : k.count;
  const bool in_place = k.in_place && root;
  const uint64_t salt = k.salt ? k.salt : next_salt();
  std::vector<std::vector<T>> in(static_cast<size_t>(p), std::vector<T>(std::max<size_t>(total, 1)));
  for (int s = 0; s < p; ++s) gen(in[static_cast<size_t>(s)].data(), k.data, s, salt, total);
  std::vector<T> send = in[static_cast<size_t>(r)];
  const size_t rlen = in_place ? total : root ? my_n : k.null_recv ? 0 : total;
  std::vector<T> recv(rlen + 2 * kGuard);
  set_sentinel(recv.data(), recv.size());
  T* rb = recv.data() + kGuard;
  if (in_place) std::memcpy(static_cast<void*>(rb), send.data(), total * sizeof(T));
  const void* sb = in_place ? MPI_IN_PLACE : send.data();
  void* rbp = !root && k.null_recv ? nullptr : rb;
  const MPI_Datatype t = Ty<T>::mpi();
  if (std::getenv("ZCOLL_TEST_TRACE")) std::fprintf(stderr, "[rank %d/%d] %s\n", r, p, ctx().c_str());
  EXPECT_RC(call(k, sb, rbp, counts, t, zc), ZCOLL_SUCCESS);
  zcoll_stats st;
  std::memset(&st, 0xff, sizeof st);
  EXPECT_RC(zcoll_last_stats(zc, &st), ZCOLL_SUCCESS);

  Out<T> o;
  o.got.assign(rb, rb + my_n);
  // Whether the compressed path must run ("message" = this rank's input, total elements).
  const size_t bytes = total * sizeof(T);
  o.comp = p > 1 && Ty<T>::fp && supported(k.op) && c.algo != ZCOLL_ALGO_MPI && bytes >= c.min_bytes;
  if (total > 0) {
    EXPECT(st.compressed == (o.comp ? 1 : 0), "stats.compressed %d, expected %d (%zu bytes per rank, min_bytes %zu)",
           st.compressed, o.comp ? 1 : 0, bytes, c.min_bytes);
    agree_push(static_cast<uint64_t>(st.compressed), "stats.compressed");
    uint64_t ebits;
    std::memcpy(&ebits, &st.eb_abs, 8);
    agree_push(ebits, "stats.eb_abs");
  }
  if (k.coll == kAllreduce) agree_push(fnv(rb, my_n * sizeof(T)), "allreduce result bytes");
  // Guards, the non-roots' untouched recvbuf, an unchanged sendbuf.
  std::vector<T> sentinel(recv.size());
  set_sentinel(sentinel.data(), sentinel.size());
  size_t bad = 0;
  for (size_t i = 0, keep_from = root ? kGuard + (in_place ? total : my_n) : 0; i < recv.size(); ++i)
    bad += (i < kGuard || i >= keep_from) && std::memcmp(&recv[i], &sentinel[i], sizeof(T)) != 0;
  EXPECT(bad == 0, "%zu guard (or non-root recvbuf) elements overwritten", bad);
  EXPECT(in_place || total == 0 || std::memcmp(send.data(), in[static_cast<size_t>(r)].data(), total * sizeof(T)) == 0,
         "sendbuf was modified");
  if (!o.comp) {
    EXPECT(total == 0 || (st.eb_abs == 0.0 && st.algorithm == ZCOLL_ALGO_MPI),
           "plain path reports eb_abs %g, algorithm %d (%s)", st.eb_abs, st.algorithm, algo_name(st.algorithm));
    // Bit-identical to the same MPI call on the same input.
    std::vector<T> mrecv(std::max<size_t>(rlen, 1));
    if (in_place) std::memcpy(static_cast<void*>(mrecv.data()), send.data(), total * sizeof(T));
    void* mrb = !root && k.null_recv ? nullptr : mrecv.data();
    EXPECT(call(k, in_place ? MPI_IN_PLACE : send.data(), mrb, counts, t, nullptr) == MPI_SUCCESS, "MPI call failed");
    size_t i = 0;
    while (i < my_n && std::memcmp(&mrecv[i], &rb[i], sizeof(T)) == 0) ++i;
    EXPECT(i == my_n, "plain path result differs from the MPI call's at element %zu: zcoll %s, MPI %s", i,
           show(rb[i]).c_str(), show(mrecv[i]).c_str());
    return o;
  }
  if constexpr (Ty<T>::fp) {
    // The per-input bound the header promises.
    double lo = INFINITY, hi = -INFINITY;
    for (int s = 0; s < p; ++s)
      for (size_t i = 0; i < total; ++i) {
        const double x = static_cast<double>(in[static_cast<size_t>(s)][i]);
        if (std::isfinite(x)) lo = std::min(lo, x), hi = std::max(hi, x);
      }
    double base = c.eb;
    if (c.mode == ZCOLL_EB_REL) {
      double range = hi - lo;
      if (!(range > 0)) range = lo <= hi ? std::max(std::fabs(lo), std::fabs(hi)) : 0.0;
      base = range > 0 ? c.eb * range : c.eb;
    }
    const bool homo = c.red != ZCOLL_REDUCTION_DOC && c.algo != ZCOLL_ALGO_CPRP2P;
    const bool homo_minmax = homo && k.op != MPI_SUM;
    const bool result = c.target == ZCOLL_BOUND_RESULT;
    // ZCOLL_BOUND_RESULT divides eb by the path's worst-case factor (zcoll.h).
    o.eps = result ? base / multiplier(k.coll, c, k.op, p) : base;
    // ABS exactly; REL (and RESULT) within 1e-12 relative.
    const bool exact = c.mode == ZCOLL_EB_ABS && !result;
    EXPECT(st.eb_abs > 0 && (exact ? st.eb_abs == c.eb : std::fabs(st.eb_abs - o.eps) <= 1e-12 * o.eps),
           "stats.eb_abs %.17g, expected %.17g (eb %g, global finite range [%.17g, %.17g], bound_target %s, p=%d)",
           st.eb_abs, o.eps, c.eb, lo, hi, result ? "RESULT" : "INPUT", p);
    // The algorithm that ran: CPRP2P as configured; allreduce RD if configured or AUTO picks
    // it (homomorphic, p >= 4, < 512 KiB), else the ring; reduce and reduce_scatter the ring.
    const bool rd = homo && k.coll == kAllreduce &&
                    (c.algo == kRD || (c.algo == kAuto && p >= 4 && bytes < (size_t{512} << 10)));
    const int want = c.algo == kCpr ? kCpr : rd ? kRD : kRing;
    EXPECT(st.algorithm == want, "ran algorithm %d (%s), expected %s", st.algorithm, algo_name(st.algorithm),
           algo_name(want));
    // Reference and element checks.
    o.allowed = result ? base : multiplier(k.coll, c, k.op, p) * o.eps;
    const double slack = homo_minmax ? 1.0 : 1.0 + 1e-12;  // homomorphic MIN/MAX: none at all
    o.ref.resize(my_n);
    o.asum.resize(my_n);
    size_t bad = 0;
    double worst = 0;
    for (size_t i = 0; i < my_n; ++i) {
      long double ref = k.op == MPI_SUM ? 0 : k.op == MPI_MIN ? INFINITY : -INFINITY, asum = 0;
      for (int s = 0; s < p; ++s) {  // IEEE sums; MIN/MAX: NaN if any input is NaN
        const long double x = in[static_cast<size_t>(s)][my_off + i];
        asum += std::fabs(x);
        if (k.op == MPI_SUM) ref += x;
        else ref = std::isnan(x) || std::isnan(ref) ? NAN : k.op == MPI_MIN ? std::min(ref, x) : std::max(ref, x);
      }
      o.ref[i] = ref;
      o.asum[i] = asum;
      const T g = rb[i];
      bool ok;
      if (std::isnan(ref)) {
        // IEEE for SUM; "NaN on either side gives NaN" on the homomorphic path. DOC and
        // CPRP2P MIN/MAX with a NaN input are not specified.
        if (k.op != MPI_SUM && !homo) continue;
        ok = std::isnan(g);
      } else if (std::isinf(ref)) {
        ok = std::isinf(g) && std::signbit(g) == std::signbit(ref);
      } else if (homo_minmax) {
        ok = std::isfinite(g) && std::fabs(static_cast<double>(g) - static_cast<double>(ref)) <= o.allowed;
        worst = std::max(worst, std::fabs(static_cast<double>(g) - static_cast<double>(ref)) / o.eps);
      } else {
        const long double err = std::fabs(static_cast<long double>(g) - ref);
        long double lim = static_cast<long double>(o.allowed) * slack;
        if (k.op == MPI_SUM) lim += p * Ty<T>::u * asum + Ty<T>::u * std::fabs(ref);
        ok = std::isfinite(g) && err <= lim;
        worst = std::max(worst, static_cast<double>(err) / o.eps);
      }
      if (!ok) {
        if (bad < 4 && g_failures < 60)
          std::fprintf(stderr,
                       "[rank %d/%d]   %s: element %zu of %zu (input index %zu): got %s, reference %.21Lg "
                       "(|err| %.6Lg, allowed %.6g + rounding, eps %.6g)\n",
                       r, p, ctx().c_str(), i, my_n, my_off + i, show(g).c_str(), ref,
                       std::fabs(static_cast<long double>(g) - ref), o.allowed, o.eps);
        ++bad;
      }
    }
    EXPECT(bad == 0, "%zu of %zu result elements outside the bound (worst %.4g eps; allowed %.4g eps)", bad, my_n,
           worst, o.allowed / o.eps);
  }
  return o;
}


// A communicator for a block of calls (the context names the section and configuration).
struct With {
  Cfg c;
  Ctx cx;
  zcoll_comm zc;
  With(const char* section, const Cfg& cf) : c(cf), cx("%s %s", section, cfg_str(cf).c_str()), zc(make_comm(cf)) {}
  ~With() { free_comm(zc); }
};

enum { kF64 = 1, kIP = 2, kNullRecv = 4, kSpecialData = 8, kOverflowData = 16, kI32 = 32, kScaled = 64 };

// One call: collective, op, count, flags (element type, MPI_IN_PLACE, data), root,
// reduce_scatter pattern.
void go(With& w, Coll coll, MPI_Op op, size_t count, int flags = 0, int root = 0, int pattern = 0) {
  if (!w.zc) return;
  const Spec spec = flags & kSpecialData ? Spec::kSpecial : flags & kOverflowData ? Spec::kOverflow : Spec::kNone;
  const Data d{static_cast<int>(g_salt % 3), spec, w.c.eb, flags & kScaled ? 1.0 / 256 : 1.0};
  const Call k{coll, op, count, pattern, root, (flags & kIP) != 0, (flags & kNullRecv) != 0, 0, d};
  if (flags & kI32) (void)run<int32_t>(w.zc, w.c, k);
  else if (flags & kF64) (void)run<double>(w.zc, w.c, k);
  else (void)run<float>(w.zc, w.c, k);
}

constexpr int kLast = -1, kMid = -2;  // roots p - 1 and p / 2
struct Step {
  int v = 0;  // index of the configuration
  Coll coll = kAllreduce;
  MPI_Op op = MPI_SUM;
  size_t count = 0;
  int flags = 0, root = 0, pattern = 0;
};

// Runs the steps, with one communicator per configuration that has any.
void steps(const char* section, const std::vector<Cfg>& cfgs, const std::vector<Step>& list) {
  auto on = [](const Step& s, size_t v) { return s.v == static_cast<int>(v); };
  for (size_t v = 0; v < cfgs.size(); ++v) {
    if (std::none_of(list.begin(), list.end(), [&](const Step& s) { return on(s, v); })) continue;
    With w(section, cfgs[v]);
    for (const Step& s : list)
      if (on(s, v))
        go(w, s.coll, s.op, s.count, s.flags, s.root == kLast ? g_size - 1 : s.root == kMid ? g_size / 2 : s.root,
           s.pattern);
  }
}

// bound: every reduction with the homomorphic, DOC and CPRP2P paths x ABS 0.01, REL 1e-3,
// REL 1e-5 (op and element type rotate, so that each path and collective meets every op
// and both types), roots 0, p-1, p/2, uneven reduce_scatter counts with zeros; allreduce
// also with RING and RECURSIVE_DOUBLING explicitly and everything left at AUTO.
void section_bound() {
  const int p = g_size;
  const int full[][3] = {{kAuto, kHomo, 256}, {kAuto, kDoc, 256}, {kCpr, ZCOLL_REDUCTION_AUTO, 0}};
  const int modes[] = {ZCOLL_EB_ABS, ZCOLL_EB_REL, ZCOLL_EB_REL};
  const double ebs[] = {0.01, 1e-3, 1e-5};
  for (int v = 0; v < 3; ++v)
    for (int e = 0; e < 3; ++e) {
      With w("bound", Cfg{full[v][0], full[v][1], modes[e], ebs[e], static_cast<size_t>(full[v][2])});
      for (int coll = 0; coll < 4; ++coll) {
        const MPI_Op op = kOps[(coll + e + v) % 3];
        const int f = (coll + e) % 2 ? kF64 : 0;
        if (coll == 0) go(w, kAllreduce, op, 20011, f);
        if (coll == 1) go(w, kReduce, op, 15013, f, e == 0 ? 0 : e == 1 ? p - 1 : p / 2);
        if (coll == 2) go(w, kRsb, op, 20000 / static_cast<size_t>(p) + 301, f);
        if (coll == 3) go(w, kRs, op, 3001, f, 0, e == 2 ? 2 : 0);
      }
    }
  const int ar[][3] = {{kRing, kHomo, ZCOLL_EB_REL}, {kRD, kHomo, ZCOLL_EB_ABS}, {kRing, kDoc, ZCOLL_EB_REL},
                       {kAuto, ZCOLL_REDUCTION_AUTO, ZCOLL_EB_REL}};
  for (int v = 0; v < 4; ++v) {
    With w("bound", Cfg{ar[v][0], ar[v][1], ar[v][2], ar[v][2] == ZCOLL_EB_ABS ? 0.01 : 1e-4, v % 2 ? 0u : 512u});
    for (int o = 0; o < 3; ++o)
      go(w, kAllreduce, kOps[o], 10007 + 1000 * static_cast<size_t>(o), (o + v) % 2 ? kF64 : 0);
  }
}

// identical: allreduce results bit-identical on every rank (all allreduce results of
// every section are compared across ranks; here NaN payloads and +-Inf too, in place).
void section_identical() {
  const int f = kSpecialData | kIP;
  const int rel = ZCOLL_EB_REL;
  steps("identical",
        {Cfg{kRing, kHomo, rel, 1e-4, 512}, Cfg{kRD, kHomo, rel, 1e-4, 512}, Cfg{kRD, kDoc, rel, 1e-4, 512},
         Cfg{kRing, kDoc, rel, 1e-4, 512}, Cfg{kCpr, ZCOLL_REDUCTION_AUTO, rel, 1e-4, 512}},
        {{0, kAllreduce, MPI_SUM, 9001, f}, {0, kAllreduce, MPI_MAX, 5003, kF64},
         {1, kAllreduce, MPI_SUM, 9001, f}, {1, kAllreduce, MPI_MIN, 5003, kF64},
         {2, kAllreduce, MPI_SUM, 9001, f}, {2, kAllreduce, MPI_MAX, 5003, kF64},
         {3, kAllreduce, MPI_SUM, 9001, f}, {4, kAllreduce, MPI_MIN, 5003, kF64}});
}

// agree: homomorphic and DOC results for the same input differ by at most the sum of their
// bounds; homomorphic SUM errors look like sums of p uniforms on [-eps, eps].
void section_agree() {
  const int p = g_size;
  With h("agree", Cfg{kRing, kHomo, ZCOLL_EB_REL, 1e-4}), d("agree", Cfg{kAuto, kDoc, ZCOLL_EB_REL, 1e-4});
  if (!h.zc || !d.zc) return;
  for (Coll coll : {kAllreduce, kRsb}) {
    Ctx cx("agree %s", coll_name(coll));
    Call k;
    k.coll = coll;
    k.count = coll == kAllreduce ? 65536 : 8192;
    k.salt = next_salt();
    const Out<float> a = run<float>(h.zc, h.c, k), b = run<float>(d.zc, d.c, k);
    if (!a.comp || !b.comp || a.got.size() != b.got.size() || a.ref.size() != a.got.size()) continue;
    size_t bad = 0, within = 0;
    double mean = 0;
    std::vector<double> errs(a.got.size());
    for (size_t i = 0; i < a.got.size(); ++i) {
      const long double round = p * Ty<float>::u * a.asum[i] + Ty<float>::u * std::fabs(a.ref[i]);
      const long double lim = (a.allowed + b.allowed) * (1 + 1e-12) + 2 * round;
      if (!(std::fabs(static_cast<long double>(a.got[i]) - b.got[i]) <= lim)) ++bad;
      const double e = static_cast<double>(static_cast<long double>(a.got[i]) - a.ref[i]) / a.eps;
      errs[i] = std::fabs(e);
      mean += e;
      if (errs[i] <= 2 * std::sqrt(p / 3.0)) ++within;
    }
    EXPECT(bad == 0, "%zu elements: |homomorphic - DOC| above the sum of their bounds", bad);
    if (coll != kAllreduce) continue;
    mean /= static_cast<double>(errs.size());
    const double frac = static_cast<double>(within) / static_cast<double>(errs.size());
    std::nth_element(errs.begin(), errs.begin() + static_cast<long>(errs.size() * 95 / 100), errs.end());
    if (g_rank == 0)
      std::printf("agree: homomorphic SUM, %zu elements, p=%d: mean error %.4f eps, p95 |error| %.4f eps "
                  "(2 sqrt(p/3) = %.4f), %.2f%% within 2 sqrt(p/3) eps\n",
                  errs.size(), p, mean, errs[errs.size() * 95 / 100], 2 * std::sqrt(p / 3.0), 100 * frac);
    EXPECT(std::fabs(mean) <= 0.05 * std::sqrt(static_cast<double>(p)), "mean error %.4f eps, limit %.4f eps", mean,
           0.05 * std::sqrt(static_cast<double>(p)));
    EXPECT(frac >= 0.90, "only %.2f%% of errors within 2 sqrt(p/3) eps (expected ~95%%)", 100 * frac);
  }
}

// edge: counts 0, 1 and 7p+3 with min_bytes 0; MPI_IN_PLACE for every reduction (reduce
// at a root other than 0); NULL recvbuf on the non-roots of reduce; reduce_scatter with
// all counts 0, one rank getting everything, rank 0 getting nothing.
void section_edge() {
  const int p = g_size;
  const int v[][3] = {{kRing, kHomo, 32}, {kAuto, kDoc, 32}, {kRD, kHomo, 0}, {kCpr, ZCOLL_REDUCTION_AUTO, 64}};
  const size_t counts[] = {0, 1, 7 * static_cast<size_t>(p) + 3};
  for (int i = 0; i < 4; ++i) {
    With w("edge", Cfg{v[i][0], v[i][1], ZCOLL_EB_REL, 1e-3, static_cast<size_t>(v[i][2]), 0});
    if (i == 2) {
      go(w, kAllreduce, MPI_SUM, 1, kIP);
      go(w, kAllreduce, MPI_MAX, counts[2], kF64);
      continue;
    }
    if (i == 3) {
      go(w, kRsb, MPI_SUM, counts[2], kIP);
      go(w, kRs, MPI_MAX, counts[2], kIP, 0, 2);
      go(w, kAllreduce, MPI_SUM, 1);
      continue;
    }
    for (int ci = 0; ci < 3; ++ci) {
      const size_t n = counts[ci];
      const MPI_Op op = (ci + i) % 2 ? MPI_MAX : MPI_SUM;
      go(w, kAllreduce, op, n, ci == 1 ? kIP : 0);
      go(w, kReduce, op, n, ci == 1 ? kIP : kNullRecv, ci == 1 ? p - 1 : ci == 0 ? 0 : p / 2);
      const MPI_Op other = op == MPI_SUM ? MPI_MAX : MPI_SUM;  // both ops at every count
      go(w, kRsb, other, n, ci ? kIP : 0);
      go(w, kRs, other, n, ci == 2 ? kIP : 0, 0, ci == 0 ? 0 : ci == 1 ? 1 : 2);
      if (ci == 2) {
        go(w, kAllreduce, MPI_SUM, n, kF64 | kIP);
        go(w, kRs, MPI_MIN, n, kF64);
      }
    }
  }
}

// overflow: ABS eb 2^-10 and values whose integers are near the quantizer's 2^30 limit
// (same sign on every rank for some elements, so that sums of two leave the range, and
// some just above the limit): SUM within p eps + rounding (the library stores such sums
// exactly), MIN/MAX within eps. float values lie on the grid, doubles do not.
void section_overflow() {
  const int f = kOverflowData;
  const int abs = ZCOLL_EB_ABS;
  steps("overflow",
        {Cfg{kRing, kHomo, abs, 0x1p-10, 256}, Cfg{kRD, kHomo, abs, 0x1p-10, 256}, Cfg{kAuto, kDoc, abs, 0x1p-10, 256}},
        {{0, kAllreduce, MPI_SUM, 8003, f}, {0, kAllreduce, MPI_MIN, 8003, f | kF64}, {0, kRsb, MPI_SUM, 2001, f | kF64},
         {0, kAllreduce, MPI_MAX, 8003, f}, {0, kAllreduce, MPI_SUM, 8003, f | kF64},
         {0, kReduce, MPI_SUM, 4001, f, kMid}, {1, kAllreduce, MPI_SUM, 8003, f | kF64},
         {1, kAllreduce, MPI_SUM, 8003, f}, {2, kAllreduce, MPI_SUM, 8003, f | kF64}, {2, kRsb, MPI_SUM, 2001, f}});
}

// special: NaN (several payloads, a signalling one) and +-Inf in the inputs, at fixed
// places on every rank and sprinkled per rank: SUM follows IEEE (Inf + -Inf = NaN), MIN/MAX
// give NaN where any input is NaN on the homomorphic path; other elements within bound.
void section_special() {
  const int f = kSpecialData;
  const int rel = ZCOLL_EB_REL;
  steps("special",
        {Cfg{kRing, kHomo, rel, 1e-3, 512}, Cfg{kRD, kHomo, rel, 1e-3, 512}, Cfg{kAuto, kDoc, rel, 1e-3, 512},
         Cfg{kCpr, ZCOLL_REDUCTION_AUTO, rel, 1e-3}},
        {{0, kAllreduce, MPI_SUM, 9001, f}, {0, kAllreduce, MPI_MAX, 9001, f | kF64}, {0, kRs, MPI_SUM, 3001, f | kF64},
         {0, kAllreduce, MPI_MIN, 9001, f}, {0, kReduce, MPI_MAX, 9001, f, kLast},
         {1, kAllreduce, MPI_MIN, 9001, f | kF64}, {1, kAllreduce, MPI_SUM, 9001, f},
         {2, kAllreduce, MPI_SUM, 9001, f}, {2, kRsb, MPI_MAX, 3001, f | kF64},
         {3, kAllreduce, MPI_SUM, 9001, f | kF64}, {3, kRs, MPI_MIN, 3001, f}});
}

void absmax(void* in, void* inout, int* len, MPI_Datatype*) {
  const float* a = static_cast<const float*>(in);
  float* b = static_cast<float*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = std::max(std::fabs(a[i]), std::fabs(b[i]));
}

// passthrough: MPI_PROD, a user-defined op, MPI_INT (LAND, SUM, MAX), float/double below
// the default min_bytes (and the threshold itself), ZCOLL_ALGO_MPI: bit-identical to the
// same MPI call, compressed == 0. MPICH 4.0-4.1.1 crashes in MPI_Reduce with MPI_IN_PLACE at
// a root other than 0 (pmodels/mpich#6540), and the plain path is that call: root 0 there.
void section_passthrough() {
  const int I = kI32, R = ZCOLL_REDUCTION_AUTO, abs = ZCOLL_EB_ABS;
  steps("passthrough",
        {Cfg{kAuto, R, abs, 1.0, 0, 0}, Cfg{kAuto, R, abs, 1.0, 0, ZCOLL_DEFAULT_MIN_BYTES},
         Cfg{ZCOLL_ALGO_MPI, R, abs, 1.0, 0, 0}},
        {{0, kAllreduce, MPI_PROD, 3001, kScaled}, {0, kRsb, g_absmax, 1001, kIP},
         {0, kAllreduce, MPI_LAND, 3001, I | kIP}, {0, kReduce, MPI_SUM, 3001, I | kIP},
         {0, kReduce, MPI_PROD, 3001, kScaled, kLast}, {0, kRs, g_absmax, 1001},
         {0, kRsb, MPI_SUM, 1001, I}, {0, kRs, MPI_MAX, 1001, I | kIP},
         // The default min_bytes (65536 bytes per rank): 16383 floats stay plain, 16384 compress.
         {1, kAllreduce, MPI_SUM, 16383}, {1, kAllreduce, MPI_SUM, 16384}, {1, kRsb, MPI_MAX, 1001},
         {1, kReduce, MPI_MIN, 4001, kIP}, {1, kRs, MPI_SUM, 1001},
         {1, kAllreduce, MPI_MAX, 8191, kF64 | kIP}, {1, kRs, MPI_SUM, 501, kF64},
         {2, kAllreduce, MPI_SUM, 5001, kSpecialData | kIP}, {2, kRs, MPI_SUM, 1001, kSpecialData | kIP},
         {2, kReduce, MPI_SUM, 5001, kSpecialData, kLast}, {2, kRsb, MPI_MIN, 1001},
         {2, kAllreduce, MPI_MIN, 3001, kF64}});
}

// result_bound: ZCOLL_BOUND_RESULT: the result's error is within eb itself (+ rounding for
// SUM); stats.eb_abs = eb / the path's worst-case factor (homomorphic SUM p, reduce_scatter
// p - 1, MIN/MAX 1; DOC reduce_scatter p - 1, allreduce/reduce p; CPRP2P allreduce 2p - 2).
void section_result_bound() {
  const int T = ZCOLL_BOUND_RESULT, abs = ZCOLL_EB_ABS, rel = ZCOLL_EB_REL;
  steps("result_bound",
        {Cfg{kAuto, kHomo, abs, 0.5, 1024, 1024, T}, Cfg{kRD, kHomo, rel, 1e-3, 1024, 1024, T},
         Cfg{kAuto, kDoc, abs, 0.5, 1024, 1024, T}, Cfg{kRing, kDoc, rel, 1e-3, 1024, 1024, T},
         Cfg{kCpr, ZCOLL_REDUCTION_AUTO, abs, 0.5, 1024, 1024, T}},
        {{0, kAllreduce, MPI_SUM, 8001}, {0, kRsb, MPI_SUM, 2001, kF64}, {0, kReduce, MPI_MAX, 8001, 0, kLast},
         {0, kAllreduce, MPI_MIN, 8001}, {1, kAllreduce, MPI_SUM, 8001, kF64}, {1, kAllreduce, MPI_MAX, 8001},
         {2, kAllreduce, MPI_SUM, 8001}, {2, kRsb, MPI_MIN, 2001}, {2, kReduce, MPI_SUM, 8001, kF64, kMid},
         {3, kRsb, MPI_SUM, 2001, kF64}, {3, kAllreduce, MPI_MAX, 8001}, {4, kAllreduce, MPI_SUM, 8001},
         {4, kRsb, MPI_MAX, 2001, kF64}});
}

// errors: bad arguments give ZCOLL_ERR_ARG on every rank without communicating (a rank
// that communicated would leave the others waiting, or its messages would spoil the next
// calls); the communicator keeps working; 20 allreduces in a loop on one communicator.
void section_errors() {
  const int p = g_size, r = g_rank;
  {
    Ctx cx("zcoll_comm_create with bad reduction settings");
    zcoll_comm zc = nullptr;
    for (int bad = 0; bad < 4; ++bad) {  // reduction 99, -1; bound_target 7; algorithm one past the last
      zcoll_config b;
      zcoll_config_init(&b);
      b.codec.eb = 1e-3;
      (bad < 2 ? b.reduction : bad == 2 ? b.bound_target : b.algorithm) =
          bad == 0 ? 99 : bad == 1 ? -1 : bad == 2 ? 7 : ZCOLL_ALGO_PLAIN_HIERARCHICAL + 1;
      Ctx cb("case %d", bad);
      EXPECT_RC(zcoll_comm_create(MPI_COMM_WORLD, &b, &zc), ZCOLL_ERR_ARG);
    }
  }
  // ABS on 5 and more ranks, REL below: both bounds meet the error paths.
  const bool abs_bound = g_size >= 5;
  With w("errors", Cfg{kAuto, ZCOLL_REDUCTION_AUTO, abs_bound ? ZCOLL_EB_ABS : ZCOLL_EB_REL, abs_bound ? 0.01 : 1e-4});
  zcoll_comm zc = w.zc;
  if (!zc) return;
  go(w, kAllreduce, MPI_SUM, 3001);  // state the errors must not disturb
  const int N = 4096, E = ZCOLL_ERR_ARG;
  std::vector<double> s(static_cast<size_t>(N) * static_cast<size_t>(p), 1.0), d(s.size());
  std::vector<int> cnt(static_cast<size_t>(p), N), neg = cnt;
  neg[static_cast<size_t>(p - 1)] = -1;
  void *sb = s.data(), *rb = d.data();
  for (MPI_Datatype t : {MPI_FLOAT, MPI_DOUBLE, MPI_INT})
    for (MPI_Op op : {MPI_SUM, MPI_MAX}) {
      Ctx ct("datatype %s %s", t == MPI_FLOAT ? "MPI_FLOAT" : t == MPI_DOUBLE ? "MPI_DOUBLE" : "MPI_INT", op_name(op));
      EXPECT_RC(zcoll_allreduce(sb, rb, N, t, op, nullptr), E);
      EXPECT_RC(zcoll_reduce(sb, rb, N, t, op, 0, nullptr), E);
      EXPECT_RC(zcoll_reduce_scatter_block(sb, rb, N, t, op, nullptr), E);
      EXPECT_RC(zcoll_reduce_scatter(sb, rb, cnt.data(), t, op, nullptr), E);
      EXPECT_RC(zcoll_allreduce(sb, rb, -1, t, op, zc), E);
      EXPECT_RC(zcoll_allreduce(MPI_IN_PLACE, rb, -3, t, op, zc), E);
      EXPECT_RC(zcoll_reduce(sb, rb, -1, t, op, 0, zc), E);
      EXPECT_RC(zcoll_reduce_scatter_block(sb, rb, -1, t, op, zc), E);
      EXPECT_RC(zcoll_reduce_scatter(sb, rb, neg.data(), t, op, zc), E);
      for (int root : {p, -1, p + 5}) {
        Ctx cr("root %d", root);
        EXPECT_RC(zcoll_reduce(sb, rb, N, t, op, root, zc), E);
        EXPECT_RC(zcoll_reduce(r == 0 ? MPI_IN_PLACE : sb, rb, N, t, op, root, zc), E);
      }
      EXPECT_RC(zcoll_reduce_scatter(sb, rb, nullptr, t, op, zc), E);
      EXPECT_RC(zcoll_allreduce(sb, nullptr, N, t, op, zc), E);
      EXPECT_RC(zcoll_allreduce(MPI_IN_PLACE, nullptr, N, t, op, zc), E);
      EXPECT_RC(zcoll_reduce_scatter_block(sb, nullptr, N, t, op, zc), E);
      EXPECT_RC(zcoll_reduce_scatter_block(MPI_IN_PLACE, nullptr, N, t, op, zc), E);
      EXPECT_RC(zcoll_reduce_scatter(sb, nullptr, cnt.data(), t, op, zc), E);
      EXPECT_RC(zcoll_allreduce(nullptr, rb, N, t, op, zc), E);
      EXPECT_RC(zcoll_reduce(nullptr, rb, N, t, op, p - 1, zc), E);
      EXPECT_RC(zcoll_reduce_scatter_block(nullptr, rb, N, t, op, zc), E);
      EXPECT_RC(zcoll_reduce_scatter(nullptr, rb, cnt.data(), t, op, zc), E);
    }
  MPI_Barrier(MPI_COMM_WORLD);
  // Still working (a stray message from an erroneous call would be received here).
  go(w, kRs, MPI_MAX, 1001, 0, 0, 2);
  go(w, kReduce, MPI_SUM, 3001, kF64, p - 1);
  // Buffer reuse: 20 allreduces on one communicator, sizes growing and shrinking (some
  // above 512 KiB, where AUTO switches from recursive doubling to the ring), float and
  // double interleaved, ops rotating, some in place.
  for (int it = 0; it < 20; ++it) {
    Ctx ci("loop iteration %d", it);
    const int f = (it % 4 == 3 ? kF64 : 0) | (it % 5 == 4 ? kIP : 0);
    const size_t big = (size_t{600} << 10) / (f & kF64 ? 8 : 4);
    go(w, kAllreduce, kOps[it % 3], it % 7 == 6 ? big : 500 + static_cast<size_t>(it * 3917 % 20000), f);
  }
}

const Section kSections[] = {
    {"bound", section_bound},         {"identical", section_identical},     {"agree", section_agree},
    {"edge", section_edge},           {"overflow", section_overflow},       {"special", section_special},
    {"passthrough", section_passthrough}, {"result_bound", section_result_bound}, {"errors", section_errors}};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  MPI_Op_create(absmax, 1, &g_absmax);
  load_fields();
  const int status = run_sections(argc, argv, kSections, agree_flush, &g_salt);
  MPI_Op_free(&g_absmax);
  MPI_Finalize();
  return status;
}
