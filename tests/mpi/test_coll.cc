// MPI tests of zcoll's compressed collectives (the contract is the "compressed
// collectives" section of include/zcoll.h).
//
//   zcoll_mpi_coll_tests [section ...]      (no section: all of them)
//
// Sections: accuracy edge special incompressible passthrough errors loop subcomm
// mixedtypes codecs (each described where it is defined, near the end of this file).
// Every rank runs the same sequence of calls. Each rank can regenerate what any other
// rank sent (slices of the shipped real fields, chosen by owner rank and a per-call
// salt), so every received element is checked against the sender's original value:
// within the eb_abs that zcoll_last_stats reports (|got - want| <= eb_abs in double,
// no tolerance), bit for bit for a rank's own block, for NaN/Inf, and on every plain
// MPI path. Receive buffers carry guard elements on both sides (and allgatherv leaves
// gaps between blocks) that must come back untouched.
// A failing check prints "[rank r/p] FAIL file:line [case] ..." on the rank that saw it;
// every rank reaches MPI_Finalize and the exit code is non-zero if any rank failed.
#include <unistd.h>
#include <zcoll.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <csignal>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "mpi_check.h"

#ifndef ZCOLL_TEST_DATA_DIR
#error "ZCOLL_TEST_DATA_DIR must be defined"
#endif
#ifndef ZCOLL_TEST_SHARED_DIR
#define ZCOLL_TEST_SHARED_DIR ""
#endif

namespace {

const char* algo_name(int a) {
  switch (a) {
    case ZCOLL_ALGO_AUTO:
      return "AUTO";
    case ZCOLL_ALGO_MPI:
      return "MPI";
    case ZCOLL_ALGO_CPRP2P:
      return "CPRP2P";
    case ZCOLL_ALGO_RING:
      return "RING";
    case ZCOLL_ALGO_BRUCK:
      return "BRUCK";
    case ZCOLL_ALGO_BINOMIAL:
      return "BINOMIAL";
    case ZCOLL_ALGO_SCATTER_ALLGATHER:
      return "SCATTER_ALLGATHER";
    case ZCOLL_ALGO_PAIRWISE:
      return "PAIRWISE";
    default:
      return "?";
  }
}

// ------------------------------------------------------------------ element types

struct F3 {  // passed as MPI_Type_contiguous(3, MPI_FLOAT): never compressed
  float v[3];
};
MPI_Datatype g_f3_type = MPI_DATATYPE_NULL;

template <class T>
struct Ty;
template <>
struct Ty<float> {
  static MPI_Datatype mpi() { return MPI_FLOAT; }
  static constexpr bool fp = true;
  using Bits = uint32_t;
  static constexpr Bits sentinel = 0x7fa5a5a5u;  // a NaN no codec or MPI path produces
  static const char* name() { return "f32"; }
};
template <>
struct Ty<double> {
  static MPI_Datatype mpi() { return MPI_DOUBLE; }
  static constexpr bool fp = true;
  using Bits = uint64_t;
  static constexpr Bits sentinel = 0x7ff5a5a5a5a5a5a5ull;
  static const char* name() { return "f64"; }
};
template <>
struct Ty<int32_t> {
  static MPI_Datatype mpi() { return MPI_INT; }
  static constexpr bool fp = false;
  static const char* name() { return "MPI_INT"; }
};
template <>
struct Ty<char> {
  static MPI_Datatype mpi() { return MPI_CHAR; }
  static constexpr bool fp = false;
  static const char* name() { return "MPI_CHAR"; }
};
template <>
struct Ty<F3> {
  static MPI_Datatype mpi() { return g_f3_type; }
  static constexpr bool fp = false;
  static const char* name() { return "contiguous(3,MPI_FLOAT)"; }
};

template <class T>
void set_sentinel(T* p, size_t n) {
  if constexpr (Ty<T>::fp) {
    const typename Ty<T>::Bits b = Ty<T>::sentinel;
    for (size_t i = 0; i < n; ++i) std::memcpy(p + i, &b, sizeof b);
  } else {
    std::memset(static_cast<void*>(p), 0xA5, n * sizeof(T));
  }
}

template <class T>
bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// ------------------------------------------------------------------ fields

template <class T>
std::vector<T> load_raw(const std::string& path, bool required) {
  std::vector<T> v;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    if (required) EXPECT(false, "cannot open %s", path.c_str());
    return v;
  }
  std::fseek(f, 0, SEEK_END);
  const long bytes = std::ftell(f);
  std::fseek(f, 0, SEEK_SET);
  v.resize(static_cast<size_t>(bytes) / sizeof(T));
  const size_t got = std::fread(v.data(), sizeof(T), v.size(), f);
  std::fclose(f);
  EXPECT(got == v.size() && !v.empty(), "short read of %s", path.c_str());
  v.resize(got);
  return v;  // the files are little-endian, as is every machine this runs on
}

std::vector<std::vector<float>> g_f32;
std::vector<std::vector<double>> g_f64;
std::vector<std::string> g_f32_names, g_f64_names;

void load_fields() {
  const std::string data = ZCOLL_TEST_DATA_DIR, shared = ZCOLL_TEST_SHARED_DIR;
  for (const char* n : {"cesm_TS_10x192x288.f32", "echam5_T_17x96x192.f32", "turb_wmag_91x91x91.f32"}) {
    g_f32.push_back(load_raw<float>(data + "/" + n, true));
    g_f32_names.push_back(n);
  }
  if (!shared.empty()) {
    std::vector<float> s = load_raw<float>(shared + "/seismic_mobilavo_crg_60x1000.f32", false);
    if (!s.empty()) {
      g_f32.push_back(std::move(s));
      g_f32_names.push_back("seismic_mobilavo_crg_60x1000.f32");
    }
    for (const char* n : {"nyx_phigrav_128x128x128.f64", "isabel_velmag_t48_25x125x125.f64"}) {
      std::vector<double> d = load_raw<double>(shared + "/" + n, false);
      if (!d.empty()) {
        g_f64.push_back(std::move(d));
        g_f64_names.push_back(n);
      }
    }
  }
  if (g_f64.empty()) {  // no native float64 fields here: the float fields, widened
    for (size_t i = 0; i < g_f32.size(); ++i) {
      g_f64.emplace_back(g_f32[i].begin(), g_f32[i].end());
      g_f64_names.push_back(g_f32_names[i] + " (as f64)");
    }
  }
  for (size_t i = 0; i < g_f32.size(); ++i) EXPECT(!g_f32[i].empty(), "float field %zu is empty", i);
  for (size_t i = 0; i < g_f64.size(); ++i) EXPECT(!g_f64[i].empty(), "double field %zu is empty", i);
}

// How a generated block is altered.
enum class Spec {
  kNone,
  kSpecial,  // NaN (several payloads, a signalling one, a negative one), +-Inf, -0.0 sprinkled in
  kConst,    // every value 5.25 (a field without a range)
  kAllNan    // every value NaN (no finite value at all)
};

template <class T>
T special_value(unsigned k) {
  if constexpr (sizeof(T) == 4) {
    static const uint32_t b[] = {0x7fc00000u, 0x7fc12345u, 0xffc00001u, 0x7f800001u,
                                 0x7f800000u, 0xff800000u, 0x80000000u};
    T v;
    std::memcpy(&v, &b[k % 7], 4);
    return v;
  } else {
    static const uint64_t b[] = {0x7ff8000000000000ull, 0x7ff8000000012345ull, 0xfff8000000000001ull,
                                 0x7ff0000000000001ull, 0x7ff0000000000000ull, 0xfff0000000000000ull,
                                 0x8000000000000000ull};
    T v;
    std::memcpy(&v, &b[k % 7], 8);
    return v;
  }
}

size_t slice_start(size_t len, int owner, uint64_t salt) {
  return static_cast<size_t>((static_cast<uint64_t>(owner) * (len / 7 + 1009) + salt * 104729u) % len);
}

// Elements [offset, offset + n) of what `owner` sends in the call with this salt.
template <class T>
void gen(T* out, int fid, int owner, uint64_t salt, size_t n, size_t offset = 0, Spec spec = Spec::kNone) {
  if constexpr (Ty<T>::fp) {
    const std::vector<T>* f;
    if constexpr (std::is_same_v<T, float>)
      f = &g_f32[static_cast<size_t>(fid) % g_f32.size()];
    else
      f = &g_f64[static_cast<size_t>(fid) % g_f64.size()];
    const size_t len = f->size(), start = slice_start(len, owner, salt);
    for (size_t i = 0; i < n; ++i) out[i] = (*f)[(start + offset + i) % len];
    if (spec == Spec::kSpecial) {
      for (size_t i = 0; i < n; ++i) {
        const uint64_t j = offset + i, h = (j * 2654435761u + static_cast<uint64_t>(owner) * 40503u + salt) % 53;
        if (h < 7) out[i] = special_value<T>(static_cast<unsigned>(h));
      }
    } else if (spec == Spec::kConst) {
      for (size_t i = 0; i < n; ++i) out[i] = static_cast<T>(5.25);
    } else if (spec == Spec::kAllNan) {
      for (size_t i = 0; i < n; ++i) out[i] = special_value<T>(static_cast<unsigned>((offset + i) % 3));
    }
  } else {  // other types: the bytes of a float field
    const std::vector<float>& f = g_f32[static_cast<size_t>(fid) % g_f32.size()];
    const unsigned char* b = reinterpret_cast<const unsigned char*>(f.data());
    const size_t len = f.size() * sizeof(float), start = slice_start(len, owner, salt);
    unsigned char* o = reinterpret_cast<unsigned char*>(out);
    for (size_t i = 0; i < n * sizeof(T); ++i) o[i] = b[(start + offset * sizeof(T) + i) % len];
  }
}

// ------------------------------------------------------------------ buffers and checks

constexpr size_t kGuard = 17;  // guard elements on each side of every receive buffer

template <class T>
struct Buf {
  std::vector<T> v;
  explicit Buf(size_t n) : v(n + 2 * kGuard) { set_sentinel(v.data(), v.size()); }
  T* data() { return v.data() + kGuard; }
  size_t size() const { return v.size() - 2 * kGuard; }
};

// What a whole guarded buffer must hold afterwards: per element the value and whether
// it must be bit-exact (else within eb_abs; NaN and Inf are always compared by bits).
template <class T>
struct Expect {
  std::vector<T> want;
  std::vector<uint8_t> exact;
  explicit Expect(size_t n) : want(n + 2 * kGuard), exact(n + 2 * kGuard, 1) { set_sentinel(want.data(), want.size()); }
  T* at(size_t i) { return want.data() + kGuard + i; }
  void mark(size_t i, size_t n, bool ex) { std::fill_n(exact.begin() + static_cast<long>(kGuard + i), n, ex ? 1 : 0); }
};

template <class T>
void describe(char* out, size_t cap, const T& x) {
  if constexpr (Ty<T>::fp) {
    typename Ty<T>::Bits b;
    std::memcpy(&b, &x, sizeof b);
    std::snprintf(out, cap, "%.17g (0x%llx)", static_cast<double>(x), static_cast<unsigned long long>(b));
  } else {
    const unsigned char* p = reinterpret_cast<const unsigned char*>(&x);
    size_t k = 0;
    for (size_t i = 0; i < sizeof(T) && k + 3 < cap; ++i) k += std::snprintf(out + k, cap - k, "%02x", p[i]);
  }
}

// Compares the whole guarded buffer `got` with `e`.
template <class T>
void verify(const Buf<T>& got, const Expect<T>& e, double eb, const char* what) {
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < got.v.size(); ++i) {
    const T& g = got.v[i];
    const T& w = e.want[i];
    bool ok;
    if constexpr (Ty<T>::fp) {
      if (e.exact[i] || !std::isfinite(w))
        ok = same_bits(g, w);
      else
        ok = std::fabs(static_cast<double>(g) - static_cast<double>(w)) <= eb;
    } else {
      ok = same_bits(g, w);
    }
    if (!ok) {
      if (bad < 4 && g_failures < 60) {
        char gs[80], ws[80];
        describe(gs, sizeof gs, g);
        describe(ws, sizeof ws, w);
        const long idx = static_cast<long>(i) - static_cast<long>(kGuard);
        std::fprintf(stderr, "[rank %d/%d]   %s: element %ld (of %zu%s): got %s want %s (%s, eb_abs %.17g)\n", g_rank,
                     g_size, what, idx, got.size(), idx < 0 || idx >= static_cast<long>(got.size()) ? ", guard" : "",
                     gs, ws, e.exact[i] ? "bit-exact" : "within eb", eb);
      }
      if (!bad) first = i;
      ++bad;
    }
  }
  EXPECT(bad == 0, "%s: %zu of %zu elements wrong (first at %ld)", what, bad, got.v.size(),
         static_cast<long>(first) - static_cast<long>(kGuard));
}

// A send buffer must come back unchanged.
template <class T>
void verify_unchanged(const std::vector<T>& now, const std::vector<T>& before, const char* what) {
  EXPECT(now.size() == before.size() &&
             (now.empty() || std::memcmp(static_cast<const void*>(now.data()), static_cast<const void*>(before.data()),
                                         now.size() * sizeof(T)) == 0),
         "%s was modified by the collective", what);
}

// ------------------------------------------------------------------ groups, configs, stats

struct Group {
  MPI_Comm comm;
  int rank, size;
  int id;  // makes the data of different groups differ
};
Group g_world;

// MPICH before 4.1 ignores displs in MPI_Allgatherv on a one-rank communicator
// (pmodels/mpich#6374); probed at start-up.
bool g_mpi_allgatherv_self_bug = false;

uint64_t g_salt = 1;
uint64_t next_salt() { return g_salt++; }  // same sequence on every rank

struct Cfg {
  int algo = ZCOLL_ALGO_AUTO;
  int mode = ZCOLL_EB_ABS;
  double eb = 1e-2;
  size_t min_bytes = 1024;
  size_t chunk = 0;
  int threads = 0;
  int codec = ZCOLL_CODEC_FZL;
  int reduction = ZCOLL_REDUCTION_AUTO;
};

std::string cfg_str(const Cfg& c) {
  char b[200];
  std::snprintf(b, sizeof b, "algo=%s %s eb=%g min_bytes=%zu chunk_len=%zu threads=%d", algo_name(c.algo),
                c.mode == ZCOLL_EB_REL ? "REL" : "ABS", c.eb, c.min_bytes, c.chunk, c.threads);
  return b;
}

zcoll_comm make_comm(const Group& g, const Cfg& c, int want_rc = ZCOLL_SUCCESS) {
  zcoll_config cfg;
  zcoll_config_init(&cfg);
  EXPECT(cfg.min_bytes == ZCOLL_DEFAULT_MIN_BYTES && cfg.algorithm == ZCOLL_ALGO_AUTO,
         "zcoll_config_init defaults: min_bytes %zu algorithm %d", cfg.min_bytes, cfg.algorithm);
  cfg.codec.eb_mode = c.mode;
  cfg.codec.eb = c.eb;
  cfg.codec.chunk_len = c.chunk;
  cfg.codec.threads = c.threads;
  cfg.min_bytes = c.min_bytes;
  cfg.algorithm = c.algo;
  cfg.codec.codec = c.codec;
  cfg.reduction = c.reduction;
  zcoll_comm zc = nullptr;
  const int rc = zcoll_comm_create(g.comm, &cfg, &zc);
  EXPECT(rc == want_rc && (zc != nullptr) == (rc == ZCOLL_SUCCESS), "zcoll_comm_create(%s) returned %d (%s)",
         cfg_str(c).c_str(), rc, zcoll_strerror(rc));
  return zc;
}

void flush();
void free_comm(zcoll_comm& zc) {
  flush();  // zcoll_comm_free is collective anyway
  const int rc = zcoll_comm_free(&zc);
  EXPECT_RC(rc, ZCOLL_SUCCESS);
  EXPECT(zc == nullptr, "zcoll_comm_free left the handle at %p", static_cast<void*>(zc));
}

enum Coll { kAllgather, kAllgatherv, kBcast, kScatter, kGather, kAlltoall, kNumColl };
const char* coll_name(Coll c) {
  static const char* n[] = {"allgather", "allgatherv", "bcast", "scatter", "gather", "alltoall"};
  return n[c];
}
bool applies(Coll c, int algo) {
  switch (algo) {
    case ZCOLL_ALGO_RING:
    case ZCOLL_ALGO_BRUCK:
      return c == kAllgather || c == kAllgatherv;
    case ZCOLL_ALGO_BINOMIAL:
      return c == kBcast || c == kScatter || c == kGather;
    case ZCOLL_ALGO_SCATTER_ALLGATHER:
      return c == kBcast;
    case ZCOLL_ALGO_PAIRWISE:
      return c == kAlltoall;
    default:
      return false;
  }
}
bool rooted_bound(Coll c) { return c == kBcast || c == kScatter; }  // REL from the root's range

template <class T>
bool expect_compressed(const Cfg& c, size_t bytes_per_rank) {
  return Ty<T>::fp && c.algo != ZCOLL_ALGO_MPI && bytes_per_rank >= c.min_bytes;
}

// Finite range of this rank's contribution (lo > hi when it has no finite value).
template <class T>
void local_range(const T* v, size_t n, double& lo, double& hi) {
  lo = INFINITY;
  hi = -INFINITY;
  if constexpr (Ty<T>::fp) {
    for (size_t i = 0; i < n; ++i) {
      const double x = static_cast<double>(v[i]);
      if (!std::isfinite(x)) continue;
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
  }
}

// eb_abs for a REL bound over the finite range [lo, hi], as include/zcoll.h resolves it.
double rel_to_abs_expected(double rel, double lo, double hi) {
  double range = hi - lo;
  if (!(range > 0)) range = lo <= hi ? std::max(std::fabs(lo), std::fabs(hi)) : 0.0;
  if (!(range > 0)) return std::min(rel, DBL_MAX / 4);
  return std::min(rel * range, DBL_MAX / 4);
}

// The checks that need other ranks' values (the global range for a REL bound, the
// root's eb_abs, agreement across ranks) are deferred and done in batches with one
// MPI_Allgather: every synchronisation costs milliseconds on an oversubscribed,
// busy-polling MPI, and this halves the suite's time there. Every rank makes the same
// calls in the same order, so every rank has the same number of pending checks.
struct Pending {
  std::vector<std::string> ctx;  // what was being tested
  Coll coll;
  Cfg cfg;
  int root;  // bcast/scatter: whose range and eb_abs count
  bool want_comp;
  double lo, hi;  // this rank's contribution to the range a REL bound is taken from
  // Uncompressed bytes that must leave their owners, whatever the algorithm (every block
  // needed on another rank is sent at least once): a lower bound on the sum of raw_bytes.
  double min_sent;
  zcoll_stats st;
  std::function<void(double eb)> verify;  // element checks against the senders' eb_abs
  size_t bytes;
};

struct Batch {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  std::vector<Pending> items;
  size_t bytes = 0;
} g_batch;

constexpr size_t kFields = 6;  // per pending check and rank: lo, hi, eb_abs, compressed, raw_bytes, wire_bytes

void check_pending(const Pending& q, const double* all, size_t stride, int size, int rank) {
  auto lo_of = [&](int i) { return all[static_cast<size_t>(i) * stride]; };
  auto hi_of = [&](int i) { return all[static_cast<size_t>(i) * stride + 1]; };
  auto eb_of = [&](int i) { return all[static_cast<size_t>(i) * stride + 2]; };
  auto comp_of = [&](int i) { return all[static_cast<size_t>(i) * stride + 3]; };
  auto raw_of = [&](int i) { return all[static_cast<size_t>(i) * stride + 4]; };
  auto wire_of = [&](int i) { return all[static_cast<size_t>(i) * stride + 5]; };
  double glo = INFINITY, ghi = -INFINITY;
  for (int i = 0; i < size; ++i) {
    glo = std::min(glo, lo_of(i));
    ghi = std::max(ghi, hi_of(i));
  }
  const Cfg& c = q.cfg;
  const zcoll_stats& st = q.st;
  EXPECT(std::isfinite(st.t_compress) && std::isfinite(st.t_comm) && std::isfinite(st.t_decompress) &&
             st.t_compress >= 0 && st.t_decompress >= 0 && st.t_comm >= -1e-9,
         "stats times: t_compress %g t_comm %g t_decompress %g", st.t_compress, st.t_comm, st.t_decompress);
  EXPECT(st.compressed == (q.want_comp ? 1 : 0), "stats.compressed = %d, expected %d", st.compressed,
         q.want_comp ? 1 : 0);
  for (int i = 0; i < size; ++i)
    EXPECT(comp_of(i) == comp_of(0), "ranks disagree on stats.compressed: rank %d says %g, rank 0 says %g", i,
           comp_of(i), comp_of(0));
  double eb = 0.0;
  if (!q.want_comp) {
    EXPECT(st.algorithm == ZCOLL_ALGO_MPI, "plain MPI path reports algorithm %d (%s)", st.algorithm,
           algo_name(st.algorithm));
    EXPECT(st.eb_abs == 0.0, "plain MPI path reports eb_abs %.17g", st.eb_abs);
  } else {
    // The algorithm that ran.
    if (c.algo == ZCOLL_ALGO_CPRP2P || applies(q.coll, c.algo)) {
      EXPECT(st.algorithm == c.algo, "ran algorithm %d (%s), configured %s", st.algorithm, algo_name(st.algorithm),
             algo_name(c.algo));
    } else {
      EXPECT(applies(q.coll, st.algorithm), "%s with configured %s ran %d (%s), which is not one of its algorithms",
             coll_name(q.coll), algo_name(c.algo), st.algorithm, algo_name(st.algorithm));
    }
    // The bound: one value every rank uses; the root's for bcast/scatter, whose other
    // ranks may report 0 instead.
    const int ref = rooted_bound(q.coll) ? q.root : 0;
    eb = eb_of(ref);
    if (rank == ref || !rooted_bound(q.coll) || eb_of(rank) != 0.0)
      EXPECT(eb_of(rank) == eb, "this rank reports eb_abs %.17g, rank %d reports %.17g%s", eb_of(rank), ref, eb,
             rooted_bound(q.coll) ? " (the root)" : "");
    if (c.mode == ZCOLL_EB_ABS) {
      EXPECT(eb == std::min(c.eb, DBL_MAX / 4), "ABS: eb_abs %.17g, configured eb %.17g", eb, c.eb);
    } else {
      const double want = rel_to_abs_expected(c.eb, glo, ghi);
      EXPECT(std::fabs(eb - want) <= 1e-12 * want,
             "REL: eb_abs %.17g, expected %.17g = %g x range of [%.17g, %.17g] (relative difference %.3g)", eb, want,
             c.eb, glo, ghi, (eb - want) / want);
    }
    // What was sent.
    if (size > 1 && q.min_sent > 0) {
      double raw = 0, wire = 0;
      for (int i = 0; i < size; ++i) {
        raw += raw_of(i);
        wire += wire_of(i);
      }
      EXPECT(raw >= q.min_sent && wire > 0,
             "raw_bytes summed over ranks %.0f (at least %.0f must have been sent), wire_bytes summed %.0f", raw,
             q.min_sent, wire);
    }
  }
  q.verify(eb);
}

// Runs the pending checks (collective over the batch's communicator).
void flush() {
  if (g_batch.comm == MPI_COMM_NULL) return;
  int size = 1;
  MPI_Comm_size(g_batch.comm, &size);
  const size_t n = g_batch.items.size(), stride = kFields * n;
  std::vector<double> mine(stride), all(stride * static_cast<size_t>(size));
  for (size_t i = 0; i < n; ++i) {
    const Pending& q = g_batch.items[i];
    double* m = &mine[kFields * i];
    m[0] = q.lo;
    m[1] = q.hi;
    m[2] = q.st.eb_abs;
    m[3] = q.st.compressed;
    m[4] = static_cast<double>(q.st.raw_bytes);
    m[5] = static_cast<double>(q.st.wire_bytes);
  }
  if (n)
    MPI_Allgather(mine.data(), static_cast<int>(stride), MPI_DOUBLE, all.data(), static_cast<int>(stride), MPI_DOUBLE,
                  g_batch.comm);
  std::vector<std::string> saved;
  saved.swap(g_ctx);
  for (size_t i = 0; i < n; ++i) {
    g_ctx = g_batch.items[i].ctx;
    check_pending(g_batch.items[i], all.data() + kFields * i, stride, size, g_batch.rank);
  }
  g_ctx.swap(saved);
  g_batch.items.clear();
  g_batch.bytes = 0;
  g_batch.comm = MPI_COMM_NULL;
}

// Reads zcoll_last_stats after a collective and queues the checks of the call.
void defer(const Group& g, zcoll_comm zc, const Cfg& c, Coll coll, bool want_comp, double lo, double hi, int root,
           double min_sent, size_t bytes, std::function<void(double)> verify) {
  if (g_batch.comm != g.comm) flush();
  g_batch.comm = g.comm;
  g_batch.rank = g.rank;
  Pending q{g_ctx, coll, c, root, want_comp, lo, hi, min_sent, zcoll_stats{}, std::move(verify), bytes};
  std::memset(&q.st, 0xff, sizeof q.st);
  const int rc = zcoll_last_stats(zc, &q.st);
  EXPECT_RC(rc, ZCOLL_SUCCESS);
  g_batch.bytes += bytes;
  g_batch.items.push_back(std::move(q));
  if (g_batch.items.size() >= 64 || g_batch.bytes >= (size_t{24} << 20)) flush();
}

// ------------------------------------------------------------------ the collectives

// One call's shape. count: elements per block (bcast: the whole buffer).
struct Call {
  int fid = 0;
  size_t count = 0;
  int root = 0;
  bool in_place = false;
  Spec spec = Spec::kNone;
  bool null_bufs = false;  // count 0 only: pass NULL buffers (MPI allows it)
};

template <class T>
void* ptr_or_null(std::vector<T>& v, const Call& k) {
  return k.null_bufs ? nullptr : static_cast<void*>(v.data());
}
template <class T>
void* ptr_or_null(Buf<T>& b, const Call& k) {
  return k.null_bufs ? nullptr : static_cast<void*>(b.data());
}

int owner_id(const Group& g, int r) { return r + 1000 * g.id; }

template <class T>
void run_allgather(const Group& g, zcoll_comm zc, const Cfg& c, const Call& k) {
  Ctx cx("allgather %s count=%zu in_place=%d%s", Ty<T>::name(), k.count, k.in_place, k.null_bufs ? " NULL bufs" : "");
  const int p = g.size, r = g.rank;
  const size_t n = k.count;
  const uint64_t salt = next_salt();
  std::vector<T> send(std::max<size_t>(n, 1));
  gen(send.data(), k.fid, owner_id(g, r), salt, n, 0, k.spec);
  const std::vector<T> send0 = send;
  Buf<T> recv(static_cast<size_t>(p) * n);
  if (k.in_place) std::memcpy(static_cast<void*>(recv.data() + static_cast<size_t>(r) * n), send.data(), n * sizeof(T));
  const int rc = zcoll_allgather(k.in_place ? MPI_IN_PLACE : ptr_or_null(send, k), static_cast<int>(n), Ty<T>::mpi(),
                                 ptr_or_null(recv, k), static_cast<int>(n), Ty<T>::mpi(), zc);
  EXPECT_RC(rc, ZCOLL_SUCCESS);
  double lo, hi;
  local_range(send.data(), n, lo, hi);
  const bool comp = expect_compressed<T>(c, n * sizeof(T));
  auto e = std::make_shared<Expect<T>>(static_cast<size_t>(p) * n);
  for (int s = 0; s < p; ++s) {
    gen(e->at(static_cast<size_t>(s) * n), k.fid, owner_id(g, s), salt, n, 0, k.spec);
    e->mark(static_cast<size_t>(s) * n, n, s == r || !comp);
  }
  auto got = std::make_shared<Buf<T>>(std::move(recv));
  defer(g, zc, c, kAllgather, comp, lo, hi, -1, static_cast<double>(p) * n * sizeof(T), 2 * got->v.size() * sizeof(T),
        [got, e](double eb) { verify(*got, *e, eb, "recvbuf"); });
  if (!k.in_place) verify_unchanged(send, send0, "sendbuf");
}

// Counts per rank: uneven, zero for some ranks (pattern 0..2); blocks placed with gaps
// between them, in reverse rank order for `reversed`.
template <class T>
void run_allgatherv(const Group& g, zcoll_comm zc, const Cfg& c, const Call& k, int pattern, bool reversed) {
  Ctx cx("allgatherv %s base=%zu pattern=%d reversed=%d in_place=%d%s", Ty<T>::name(), k.count, pattern, reversed,
         k.in_place, k.null_bufs ? " NULL bufs" : "");
  const int p = g.size, r = g.rank;
  std::vector<int> counts(static_cast<size_t>(p)), displs(static_cast<size_t>(p));
  for (int i = 0; i < p; ++i) {
    size_t n = k.count;
    if (pattern == 1) n = (i % 3 == 1) ? 0 : k.count + static_cast<size_t>(i) * 1733 % 2900;
    if (pattern == 2) n = (i == 0 && p > 1) ? 0 : k.count / static_cast<size_t>(1 + (i % 4));
    if (pattern == 3) n = (i == p - 1) ? k.count : 0;  // one rank has everything
    counts[static_cast<size_t>(i)] = static_cast<int>(n);
  }
  const size_t gap = 5;
  size_t pos = gap;
  for (int j = 0; j < p; ++j) {
    const int i = reversed ? p - 1 - j : j;
    displs[static_cast<size_t>(i)] = static_cast<int>(pos);
    pos += static_cast<size_t>(counts[static_cast<size_t>(i)]) + gap + static_cast<size_t>(j % 3);
  }
  const size_t total_len = pos;
  size_t total = 0;
  for (int i = 0; i < p; ++i) total += static_cast<size_t>(counts[static_cast<size_t>(i)]);
  const uint64_t salt = next_salt();
  const size_t n = static_cast<size_t>(counts[static_cast<size_t>(r)]);
  std::vector<T> send(std::max<size_t>(n, 1));
  gen(send.data(), k.fid, owner_id(g, r), salt, n, 0, k.spec);
  const std::vector<T> send0 = send;
  Buf<T> recv(k.null_bufs ? 0 : total_len);
  if (k.in_place)
    std::memcpy(static_cast<void*>(recv.data() + displs[static_cast<size_t>(r)]), send.data(), n * sizeof(T));
  const int rc = zcoll_allgatherv(k.in_place ? MPI_IN_PLACE : ptr_or_null(send, k), static_cast<int>(n), Ty<T>::mpi(),
                                  ptr_or_null(recv, k), counts.data(), displs.data(), Ty<T>::mpi(), zc);
  EXPECT_RC(rc, ZCOLL_SUCCESS);
  double lo, hi;
  local_range(send.data(), n, lo, hi);
  // The per-rank size of an allgatherv is taken as the average block (total / p).
  const bool comp = expect_compressed<T>(c, total * sizeof(T) / static_cast<size_t>(p));
  auto ep = std::make_shared<Expect<T>>(recv.size());
  Expect<T>& e = *ep;
  if (!comp && p == 1 && g_mpi_allgatherv_self_bug && !k.null_bufs) {
    // This MPI's own MPI_Allgatherv misplaces the block on one rank (see main); zcoll's
    // plain path must still give exactly what that MPI call gives.
    Buf<T> ref(total_len);
    if (k.in_place) std::memcpy(static_cast<void*>(ref.data() + displs[0]), send.data(), n * sizeof(T));
    MPI_Allgatherv(k.in_place ? MPI_IN_PLACE : send.data(), static_cast<int>(n), Ty<T>::mpi(), ref.data(),
                   counts.data(), displs.data(), Ty<T>::mpi(), g.comm);
    std::copy(ref.v.begin(), ref.v.end(), e.want.begin());
  } else if (!k.null_bufs)
    for (int s = 0; s < p; ++s) {
      const size_t cs = static_cast<size_t>(counts[static_cast<size_t>(s)]),
                   d = static_cast<size_t>(displs[static_cast<size_t>(s)]);
      gen(e.at(d), k.fid, owner_id(g, s), salt, cs, 0, k.spec);
      e.mark(d, cs, s == r || !comp);
    }
  auto got = std::make_shared<Buf<T>>(std::move(recv));
  defer(g, zc, c, kAllgatherv, comp, lo, hi, -1, static_cast<double>(total * sizeof(T)), 2 * got->v.size() * sizeof(T),
        [got, ep](double eb) { verify(*got, *ep, eb, "recvbuf (blocks, gaps and guards)"); });
  if (!k.in_place) verify_unchanged(send, send0, "sendbuf");
}

template <class T>
void run_bcast(const Group& g, zcoll_comm zc, const Cfg& c, const Call& k) {
  Ctx cx("bcast %s count=%zu root=%d%s", Ty<T>::name(), k.count, k.root, k.null_bufs ? " NULL buf" : "");
  const int r = g.rank;
  const size_t n = k.count;
  const uint64_t salt = next_salt();
  Buf<T> buf(n);
  if (r == k.root)
    gen(buf.data(), k.fid, owner_id(g, k.root), salt, n, 0, k.spec);
  else
    gen(buf.data(), k.fid + 1, owner_id(g, r) + 77, salt, n);  // stale data to be overwritten
  const int rc = zcoll_bcast(ptr_or_null(buf, k), static_cast<int>(n), Ty<T>::mpi(), k.root, zc);
  EXPECT_RC(rc, ZCOLL_SUCCESS);
  auto e = std::make_shared<Expect<T>>(n);
  gen(e->at(0), k.fid, owner_id(g, k.root), salt, n, 0, k.spec);
  double lo = INFINITY, hi = -INFINITY;
  if (r == k.root) local_range(e->at(0), n, lo, hi);
  const bool comp = expect_compressed<T>(c, n * sizeof(T));
  e->mark(0, n, r == k.root || !comp);
  auto got = std::make_shared<Buf<T>>(std::move(buf));
  const char* what = r == k.root ? "root's buffer" : "buffer";
  defer(g, zc, c, kBcast, comp, lo, hi, k.root, static_cast<double>(n * sizeof(T)), 2 * got->v.size() * sizeof(T),
        [got, e, what](double eb) { verify(*got, *e, eb, what); });
}

template <class T>
void run_scatter(const Group& g, zcoll_comm zc, const Cfg& c, const Call& k) {
  Ctx cx("scatter %s count=%zu root=%d in_place=%d%s", Ty<T>::name(), k.count, k.root, k.in_place,
         k.null_bufs ? " NULL bufs" : "");
  const int p = g.size, r = g.rank;
  const bool is_root = r == k.root;
  const size_t n = k.count, all = n * static_cast<size_t>(p);
  const uint64_t salt = next_salt();
  std::vector<T> send;
  if (is_root) {
    send.resize(std::max<size_t>(all, 1));
    gen(send.data(), k.fid, owner_id(g, k.root), salt, all, 0, k.spec);
  }
  const std::vector<T> send0 = send;
  Buf<T> recv(n);
  const bool in_place = is_root && k.in_place;
  // sendbuf is not significant on non-roots: pass NULL there.
  const int rc =
      zcoll_scatter(is_root ? ptr_or_null(send, k) : nullptr, static_cast<int>(n), Ty<T>::mpi(),
                    in_place ? MPI_IN_PLACE : ptr_or_null(recv, k), static_cast<int>(n), Ty<T>::mpi(), k.root, zc);
  EXPECT_RC(rc, ZCOLL_SUCCESS);
  double lo = INFINITY, hi = -INFINITY;
  if (is_root) local_range(send.data(), all, lo, hi);
  const bool comp = expect_compressed<T>(c, n * sizeof(T));
  auto e = std::make_shared<Expect<T>>(n);
  if (!in_place) {
    gen(e->at(0), k.fid, owner_id(g, k.root), salt, n, static_cast<size_t>(r) * n, k.spec);
    e->mark(0, n, is_root || !comp);
  }  // in place: the root's receive buffer is not touched at all
  auto got = std::make_shared<Buf<T>>(std::move(recv));
  defer(g, zc, c, kScatter, comp, lo, hi, k.root, static_cast<double>(p - 1) * n * sizeof(T),
        2 * got->v.size() * sizeof(T), [got, e](double eb) { verify(*got, *e, eb, "recvbuf"); });
  if (is_root) verify_unchanged(send, send0, "root's sendbuf");
}

template <class T>
void run_gather(const Group& g, zcoll_comm zc, const Cfg& c, const Call& k) {
  Ctx cx("gather %s count=%zu root=%d in_place=%d%s", Ty<T>::name(), k.count, k.root, k.in_place,
         k.null_bufs ? " NULL bufs" : "");
  const int p = g.size, r = g.rank;
  const bool is_root = r == k.root, in_place = is_root && k.in_place;
  const size_t n = k.count;
  const uint64_t salt = next_salt();
  std::vector<T> send(std::max<size_t>(n, 1));
  gen(send.data(), k.fid, owner_id(g, r), salt, n, 0, k.spec);
  const std::vector<T> send0 = send;
  Buf<T> recv(is_root ? n * static_cast<size_t>(p) : 0);
  if (in_place) std::memcpy(static_cast<void*>(recv.data() + static_cast<size_t>(r) * n), send.data(), n * sizeof(T));
  // recvbuf is not significant on non-roots: pass NULL there.
  const int rc = zcoll_gather(in_place ? MPI_IN_PLACE : ptr_or_null(send, k), static_cast<int>(n), Ty<T>::mpi(),
                              is_root ? ptr_or_null(recv, k) : nullptr, static_cast<int>(n), Ty<T>::mpi(), k.root, zc);
  EXPECT_RC(rc, ZCOLL_SUCCESS);
  double lo, hi;
  local_range(send.data(), n, lo, hi);
  const bool comp = expect_compressed<T>(c, n * sizeof(T));
  auto e = std::make_shared<Expect<T>>(recv.size());
  if (is_root)
    for (int s = 0; s < p; ++s) {
      gen(e->at(static_cast<size_t>(s) * n), k.fid, owner_id(g, s), salt, n, 0, k.spec);
      e->mark(static_cast<size_t>(s) * n, n, s == r || !comp);
    }
  auto got = std::make_shared<Buf<T>>(std::move(recv));
  defer(g, zc, c, kGather, comp, lo, hi, k.root, static_cast<double>(p - 1) * n * sizeof(T),
        2 * got->v.size() * sizeof(T), [got, e](double eb) { verify(*got, *e, eb, "recvbuf"); });
  if (!in_place) verify_unchanged(send, send0, "sendbuf");
}

template <class T>
void run_alltoall(const Group& g, zcoll_comm zc, const Cfg& c, const Call& k) {
  Ctx cx("alltoall %s count=%zu in_place=%d%s", Ty<T>::name(), k.count, k.in_place, k.null_bufs ? " NULL bufs" : "");
  const int p = g.size, r = g.rank;
  const size_t n = k.count, all = n * static_cast<size_t>(p);
  const uint64_t salt = next_salt();
  std::vector<T> send(std::max<size_t>(all, 1));
  gen(send.data(), k.fid, owner_id(g, r), salt, all, 0, k.spec);
  const std::vector<T> send0 = send;
  Buf<T> recv(all);
  if (k.in_place) std::memcpy(static_cast<void*>(recv.data()), send.data(), all * sizeof(T));
  const int rc = zcoll_alltoall(k.in_place ? MPI_IN_PLACE : ptr_or_null(send, k), static_cast<int>(n), Ty<T>::mpi(),
                                ptr_or_null(recv, k), static_cast<int>(n), Ty<T>::mpi(), zc);
  EXPECT_RC(rc, ZCOLL_SUCCESS);
  double lo, hi;
  local_range(send.data(), all, lo, hi);
  const bool comp = expect_compressed<T>(c, n * sizeof(T));
  auto e = std::make_shared<Expect<T>>(all);
  for (int s = 0; s < p; ++s) {
    gen(e->at(static_cast<size_t>(s) * n), k.fid, owner_id(g, s), salt, n, static_cast<size_t>(r) * n, k.spec);
    e->mark(static_cast<size_t>(s) * n, n, s == r || !comp);
  }
  auto got = std::make_shared<Buf<T>>(std::move(recv));
  defer(g, zc, c, kAlltoall, comp, lo, hi, -1, static_cast<double>(p) * (p - 1) * n * sizeof(T),
        2 * got->v.size() * sizeof(T), [got, e](double eb) { verify(*got, *e, eb, "recvbuf"); });
  if (!k.in_place) verify_unchanged(send, send0, "sendbuf");
}

std::vector<int> roots_of(int p) {
  std::set<int> s = {0, p / 2, p - 1};
  return {s.begin(), s.end()};
}

unsigned bit(Coll c) { return 1u << c; }
constexpr unsigned kEvery = (1u << kNumColl) - 1;
// The collectives an algorithm is specific to; every collective for AUTO, MPI and CPRP2P.
unsigned mask_of(int algo) {
  unsigned m = 0;
  for (int c = 0; c < kNumColl; ++c)
    if (applies(static_cast<Coll>(c), algo)) m |= bit(static_cast<Coll>(c));
  return m ? m : kEvery;
}
bool specific(int algo) { return mask_of(algo) != kEvery; }

// Elements per block: allgather(v) base, bcast buffer, scatter/gather block, alltoall block.
struct Sizes {
  size_t ag, bc, sg, a2a;
};
constexpr Sizes kStd{6007, 10007, 5003, 2501};  // none divisible by any rank count used
Sizes same(size_t n) { return Sizes{n, n, n, n}; }

// The collectives in `mask`: allgather, allgatherv (uneven counts with zeros and gaps;
// reversed block order in place) and alltoall, also with MPI_IN_PLACE if `in_place`;
// bcast, scatter and gather at each of `roots`, scatter and gather also with
// MPI_IN_PLACE at each of `ip_roots` (if `in_place`).
template <class T>
void run_all(const Group& g, zcoll_comm zc, const Cfg& c, const Sizes& z, unsigned mask, Spec spec, bool in_place,
             const std::vector<int>& roots, const std::vector<int>& ip_roots, int fid0) {
  std::vector<bool> places = in_place ? std::vector<bool>{false, true} : std::vector<bool>{false};
  for (bool ip : places) {
    Call k;
    k.spec = spec;
    k.in_place = ip;
    if (mask & bit(kAllgather)) {
      k.fid = fid0;
      k.count = z.ag;
      run_allgather<T>(g, zc, c, k);
    }
    if (mask & bit(kAllgatherv)) {
      k.fid = fid0 + 1;
      k.count = z.ag;
      run_allgatherv<T>(g, zc, c, k, ip ? 2 : 1, ip);
    }
    if (mask & bit(kAlltoall)) {
      k.fid = fid0 + 2;
      k.count = z.a2a;
      run_alltoall<T>(g, zc, c, k);
    }
  }
  for (bool ip : places)
    for (int root : ip ? ip_roots : roots) {
      Call k;
      k.spec = spec;
      k.root = root;
      k.in_place = ip;
      if ((mask & bit(kBcast)) && !ip) {
        k.fid = fid0 + 2;
        k.count = z.bc;
        run_bcast<T>(g, zc, c, k);
      }
      k.count = z.sg;
      if (mask & bit(kScatter)) {
        k.fid = fid0;
        run_scatter<T>(g, zc, c, k);
      }
      if (mask & bit(kGather)) {
        k.fid = fid0 + 1;
        run_gather<T>(g, zc, c, k);
      }
    }
}

const int kAlgos[] = {ZCOLL_ALGO_AUTO,    ZCOLL_ALGO_CPRP2P,   ZCOLL_ALGO_RING,
                      ZCOLL_ALGO_BRUCK,   ZCOLL_ALGO_BINOMIAL, ZCOLL_ALGO_SCATTER_ALLGATHER,
                      ZCOLL_ALGO_PAIRWISE};

template <class T>
Cfg accuracy_cfg(int algo, int mode) {
  Cfg c;
  c.algo = algo;
  c.mode = mode;
  c.min_bytes = 1024;
  if (std::is_same_v<T, float>) {
    c.eb = mode == ZCOLL_EB_ABS ? 1e-2 : 1e-3;
  } else {  // several chunks per block and two threads, to exercise the parallel codec paths
    c.eb = mode == ZCOLL_EB_ABS ? 1e-4 : 1e-5;
    c.chunk = 2048;
    c.threads = 2;
  }
  return c;
}

// On 5 and more ranks (oversubscribed: every synchronisation costs milliseconds with a
// busy-polling MPI) some combinations are thinned out; every collective and every
// algorithm stays covered.
bool heavy() { return g_world.size >= 5; }

// ------------------------------------------------------------------ sections

// A bcast of 512 KiB and a little more: where AUTO switches to scatter-allgather (p > 3)
// and CPRP2P sends the buffer in pieces.
template <class T>
void large_bcast(const Cfg& c, int fid, zcoll_comm zc = nullptr) {
  const bool own = zc == nullptr;
  if (own) zc = make_comm(g_world, c);
  if (!zc) return;
  Call k;
  k.fid = fid;
  k.count = (size_t{512} << 10) / sizeof(T) + 3;
  k.root = g_world.size - 1;
  run_bcast<T>(g_world, zc, c, k);
  if (own) free_comm(zc);
}

// Every collective x every algorithm that applies x float/double x ABS/REL, roots 0,
// p/2 and p-1, MPI_IN_PLACE, counts not divisible by p. A specific algorithm is also
// configured once for the collectives it does not apply to: they must choose their own.
template <class T>
void accuracy_type() {
  const int p = g_world.size;
  const bool f32 = std::is_same_v<T, float>;
  for (int algo : kAlgos)
    for (int mode : {ZCOLL_EB_ABS, ZCOLL_EB_REL}) {
      if (heavy() && algo == ZCOLL_ALGO_CPRP2P && f32 != (mode == ZCOLL_EB_ABS)) continue;
      const Cfg c = accuracy_cfg<T>(algo, mode);
      Ctx cx("accuracy %s", cfg_str(c).c_str());
      zcoll_comm zc = make_comm(g_world, c);
      if (!zc) continue;
      const std::vector<int> roots = roots_of(p);
      const std::vector<int> ip_roots = algo == ZCOLL_ALGO_AUTO ? roots : std::vector<int>{p - 1};
      run_all<T>(g_world, zc, c, kStd, mask_of(algo), Spec::kNone, true, roots, ip_roots, algo);
      if (mask_of(algo) & bit(kBcast)) large_bcast<T>(c, algo);
      if (specific(algo) && mode == ZCOLL_EB_ABS && f32)
        run_all<T>(g_world, zc, c, kStd, kEvery & ~mask_of(algo), Spec::kNone, false, {p / 2}, {}, algo);
      free_comm(zc);
    }
}

void section_accuracy() {
  accuracy_type<float>();
  accuracy_type<double>();
}

// Counts 0 and 1 (2, 3 and p+1 too) with min_bytes 0, so that the compressed path runs
// on them; count 0 with NULL buffers; allgatherv where one rank has all the data; bcast
// lengths around multiples of p (the scatter-allgather bcast splits the buffer in p).
void section_edge() {
  const int p = g_world.size;
  for (int algo : kAlgos)
    for (int mode : {ZCOLL_EB_ABS, ZCOLL_EB_REL}) {
      if (mode == ZCOLL_EB_REL && (specific(algo) || (heavy() && algo == ZCOLL_ALGO_CPRP2P))) continue;
      Cfg c = accuracy_cfg<float>(algo, mode);
      c.min_bytes = 0;
      Ctx cx("edge %s", cfg_str(c).c_str());
      zcoll_comm zc = make_comm(g_world, c);
      if (!zc) continue;
      const unsigned mask = mask_of(algo);
      run_all<float>(g_world, zc, c, same(0), mask, Spec::kNone, true, {p - 1}, {p - 1}, algo);
      run_all<float>(g_world, zc, c, same(1), mask, Spec::kNone, true,
                     algo == ZCOLL_ALGO_AUTO ? roots_of(p) : std::vector<int>{p / 2}, {p - 1}, algo);
      if (mode == ZCOLL_EB_ABS) {
        run_all<double>(g_world, zc, c, same(1), mask, Spec::kNone, false, {p - 1}, {}, algo);
        if (algo == ZCOLL_ALGO_AUTO)
          for (size_t n : {size_t{2}, size_t{3}, static_cast<size_t>(p) + 1})
            run_all<float>(g_world, zc, c, same(n), mask, Spec::kNone, false, {p / 2}, {}, algo);
        if (!specific(algo)) {  // count 0, NULL buffers everywhere
          Call k;
          k.null_bufs = true;
          k.root = p - 1;
          run_allgather<float>(g_world, zc, c, k);
          run_allgatherv<float>(g_world, zc, c, k, 0, false);
          run_bcast<float>(g_world, zc, c, k);
          run_scatter<float>(g_world, zc, c, k);
          run_gather<float>(g_world, zc, c, k);
          run_alltoall<double>(g_world, zc, c, k);
        }
        if (mask & bit(kAllgatherv)) {  // one rank has every element, the others none
          Call k;
          k.count = 3001;
          k.fid = algo;
          run_allgatherv<float>(g_world, zc, c, k, 3, false);
          k.in_place = true;
          run_allgatherv<double>(g_world, zc, c, k, 3, true);
        }
      }
      free_comm(zc);
    }
  for (int algo : {ZCOLL_ALGO_SCATTER_ALLGATHER, ZCOLL_ALGO_BINOMIAL, ZCOLL_ALGO_CPRP2P}) {
    Cfg c = accuracy_cfg<float>(algo, ZCOLL_EB_ABS);
    c.min_bytes = 0;
    Ctx cx("edge bcast lengths %s", cfg_str(c).c_str());
    zcoll_comm zc = make_comm(g_world, c);
    if (!zc) continue;
    for (size_t n : {static_cast<size_t>(p) - 1, static_cast<size_t>(p), static_cast<size_t>(3 * p + 1),
                     size_t{4096} * static_cast<size_t>(p) + 1}) {
      Call k;
      k.count = n;
      k.root = p / 2;
      k.fid = static_cast<int>(n);
      run_bcast<float>(g_world, zc, c, k);
      if (!heavy() || algo == ZCOLL_ALGO_SCATTER_ALLGATHER) run_bcast<double>(g_world, zc, c, k);
    }
    free_comm(zc);
  }
  // Blocks of several pieces (a piece is 4 chunks; chunk_len 64 makes it 256 values), the
  // last one short, on the piece engine's ring allgather(v) and pairwise alltoall: each
  // step interleaves sends, receives and decompression.
  for (int algo : {ZCOLL_ALGO_RING, ZCOLL_ALGO_PAIRWISE})
    for (int mode : {ZCOLL_EB_ABS, ZCOLL_EB_REL}) {
      Cfg c = accuracy_cfg<float>(algo, mode);
      c.chunk = 64;
      Ctx cx("edge pieces %s", cfg_str(c).c_str());
      zcoll_comm zc = make_comm(g_world, c);
      if (!zc) continue;
      const unsigned mask = mask_of(algo);
      for (size_t n : {size_t{1001}, size_t{2048}}) {
        if (mode == ZCOLL_EB_ABS) run_all<float>(g_world, zc, c, same(n), mask, Spec::kNone, true, {}, {}, algo);
        else run_all<double>(g_world, zc, c, same(n), mask, Spec::kNone, true, {}, {}, algo + 10);
      }
      free_comm(zc);
    }
}

// NaN (several payloads, signalling, negative), +Inf, -Inf and -0.0 inside the data, on
// the compressed path: NaN and Inf come back bit for bit; -0.0 comes back as a zero
// within eb (include/zcoll.h promises its sign only when the value is stored exactly).
// Also the REL bound of fields without a range (constant, no finite value at all).
void section_special() {
  const int p = g_world.size;
  const Sizes z{3001, 7001, 2003, 1201};
  for (int algo : kAlgos)
    for (int mode : {ZCOLL_EB_ABS, ZCOLL_EB_REL}) {
      if (heavy() && specific(algo) && mode == ZCOLL_EB_REL) continue;
      const Cfg c = accuracy_cfg<float>(algo, mode);
      Ctx cx("special %s", cfg_str(c).c_str());
      zcoll_comm zc = make_comm(g_world, c);
      if (!zc) continue;
      const bool gen_algo = !specific(algo);
      run_all<float>(g_world, zc, c, z, mask_of(algo), Spec::kSpecial, algo == ZCOLL_ALGO_AUTO, {p - 1}, {p - 1}, algo);
      if (gen_algo && !(heavy() && algo == ZCOLL_ALGO_CPRP2P && mode == ZCOLL_EB_ABS))
        run_all<double>(g_world, zc, c, z, kEvery, Spec::kSpecial, false, {p / 2}, {}, algo);
      if (mode == ZCOLL_EB_REL && (algo == ZCOLL_ALGO_AUTO || (gen_algo && !heavy()))) {
        run_all<float>(g_world, zc, c, same(1001), kEvery, Spec::kConst, false, {p - 1}, {}, algo);
        run_all<double>(g_world, zc, c, same(1001), kEvery, Spec::kAllNan, false, {p - 1}, {}, algo);
      }
      free_comm(zc);
    }
}

// The real fields with a bound so tight that every value is stored exactly: the codec's
// worst case, where compressed blocks are as large as raw ones.
void section_incompressible() {
  const int p = g_world.size;
  for (int algo : kAlgos)
    for (int t = 0; t < 2; ++t) {
      Cfg c;
      c.algo = algo;
      c.mode = ZCOLL_EB_ABS;
      c.eb = 1e-30;
      c.min_bytes = 1024;
      c.chunk = t ? 1024 : 0;
      Ctx cx("incompressible %s", cfg_str(c).c_str());
      zcoll_comm zc = make_comm(g_world, c);
      if (!zc) continue;
      if (t == 0)
        run_all<float>(g_world, zc, c, kStd, mask_of(algo), Spec::kNone, false, {p - 1}, {}, algo);
      else
        run_all<double>(g_world, zc, c, kStd, mask_of(algo), Spec::kNone, false, {p / 2}, {}, algo);
      if (mask_of(algo) & bit(kBcast)) {
        if (t == 0)
          large_bcast<float>(c, algo, zc);
        else
          large_bcast<double>(c, algo, zc);
      }
      free_comm(zc);
    }
}

// Types other than MPI_FLOAT/MPI_DOUBLE, float messages below min_bytes, and
// ZCOLL_ALGO_MPI: plain MPI, bit-exact, stats.compressed == 0.
void section_passthrough() {
  const int p = g_world.size;
  for (int algo : {ZCOLL_ALGO_AUTO, ZCOLL_ALGO_MPI, ZCOLL_ALGO_CPRP2P, ZCOLL_ALGO_RING, ZCOLL_ALGO_BRUCK,
                   ZCOLL_ALGO_BINOMIAL, ZCOLL_ALGO_SCATTER_ALLGATHER, ZCOLL_ALGO_PAIRWISE}) {
    Cfg c;
    c.algo = algo;
    c.eb = 1e-2;
    c.min_bytes = 0;  // would compress anything compressible
    Ctx cx("passthrough types %s", cfg_str(c).c_str());
    zcoll_comm zc = make_comm(g_world, c);
    if (!zc) continue;
    const bool a = algo == ZCOLL_ALGO_AUTO;
    const unsigned mask = mask_of(algo);
    const std::vector<int> roots = a ? roots_of(p) : std::vector<int>{p - 1};
    run_all<int32_t>(g_world, zc, c, Sizes{3001, 5003, 2001, 1001}, mask, Spec::kNone, a, roots, {p / 2}, algo);
    if (!heavy() || a || algo == ZCOLL_ALGO_MPI) {
      run_all<char>(g_world, zc, c, Sizes{3001, 5003, 2001, 1001}, mask, Spec::kNone, a, roots, {p / 2}, algo);
      run_all<F3>(g_world, zc, c, Sizes{1001, 3001, 701, 301}, mask, Spec::kNone, a, roots, {p / 2}, algo);
    }
    if (algo == ZCOLL_ALGO_MPI) {  // floats, large, NaN/Inf/-0.0 included: all plain and exact
      run_all<float>(g_world, zc, c, kStd, kEvery, Spec::kSpecial, true, roots_of(p), {p - 1}, algo);
      run_all<double>(g_world, zc, c, kStd, kEvery, Spec::kNone, false, {p / 2}, {}, algo);
      run_all<float>(g_world, zc, c, same(0), kEvery, Spec::kNone, false, {p - 1}, {}, algo);
      run_all<double>(g_world, zc, c, same(1), kEvery, Spec::kNone, false, {p - 1}, {}, algo);
    }
    free_comm(zc);
  }
  // Below the default min_bytes (65536 bytes per rank): plain MPI, bit-exact.
  for (int algo : kAlgos) {
    Cfg c;
    c.algo = algo;
    c.min_bytes = ZCOLL_DEFAULT_MIN_BYTES;
    c.eb = 1.0;  // coarse: any compression would show
    Ctx cx("passthrough small %s", cfg_str(c).c_str());
    zcoll_config cfg;
    zcoll_config_init(&cfg);  // min_bytes left at its default
    cfg.codec.eb = c.eb;
    cfg.algorithm = c.algo;
    zcoll_comm zc = nullptr;
    EXPECT_RC(zcoll_comm_create(MPI_COMM_WORLD, &cfg, &zc), ZCOLL_SUCCESS);
    if (!zc) continue;
    const size_t f = 65536 / 4 - 1, d = 65536 / 8 - 1;  // one element short of min_bytes
    const bool a = algo == ZCOLL_ALGO_AUTO;
    run_all<float>(g_world, zc, c, Sizes{f, f, f, 1000}, mask_of(algo), Spec::kSpecial, a, {p - 1}, {p / 2}, algo);
    if (!specific(algo))
      run_all<double>(g_world, zc, c, Sizes{d, d, 1000, 1000}, kEvery, Spec::kNone, false, {0}, {}, algo);
    free_comm(zc);
  }
  // The threshold itself: min_bytes = 4000 bytes per rank compresses 1000 floats, not 999.
  for (int algo : {ZCOLL_ALGO_AUTO, ZCOLL_ALGO_CPRP2P}) {
    if (heavy() && algo == ZCOLL_ALGO_CPRP2P) continue;
    Cfg c;
    c.algo = algo;
    c.min_bytes = 4000;
    c.eb = 1e-2;
    Ctx cx("passthrough threshold %s", cfg_str(c).c_str());
    zcoll_comm zc = make_comm(g_world, c);
    if (!zc) continue;
    run_all<float>(g_world, zc, c, same(1000), kEvery, Spec::kNone, false, {p - 1}, {}, algo);
    run_all<float>(g_world, zc, c, same(999), kEvery, Spec::kNone, false, {p - 1}, {}, algo);
    run_all<double>(g_world, zc, c, same(500), kEvery, Spec::kNone, false, {p / 2}, {}, algo);
    run_all<double>(g_world, zc, c, same(499), kEvery, Spec::kNone, false, {p / 2}, {}, algo);
    free_comm(zc);
  }
}

// An error must come back on every rank (each rank checks its own code; a rank that
// went on to communicate would leave the others waiting, which the test's timeout catches).
void expect_everywhere(int rc, int want, const char* what) {
  Ctx cx("%s", what);
  EXPECT_RC(rc, want);
}

template <class T>
void bad_args(zcoll_comm zc) {
  Ctx cx("bad arguments %s", Ty<T>::name());
  const int p = g_world.size;
  const MPI_Datatype t = Ty<T>::mpi();
  const size_t n = 4096;
  std::vector<T> send(n * static_cast<size_t>(p)), recv(n * static_cast<size_t>(p));
  gen(send.data(), 0, g_world.rank, next_salt(), send.size());
  std::vector<int> counts(static_cast<size_t>(p), static_cast<int>(n)), displs(static_cast<size_t>(p));
  for (int i = 0; i < p; ++i) displs[static_cast<size_t>(i)] = i * static_cast<int>(n);
  const int N = static_cast<int>(n);
  // A NULL zcoll_comm.
  expect_everywhere(zcoll_allgather(send.data(), N, t, recv.data(), N, t, nullptr), ZCOLL_ERR_ARG,
                    "allgather NULL comm");
  expect_everywhere(zcoll_allgatherv(send.data(), N, t, recv.data(), counts.data(), displs.data(), t, nullptr),
                    ZCOLL_ERR_ARG, "allgatherv NULL comm");
  expect_everywhere(zcoll_bcast(send.data(), N, t, 0, nullptr), ZCOLL_ERR_ARG, "bcast NULL comm");
  expect_everywhere(zcoll_scatter(send.data(), N, t, recv.data(), N, t, 0, nullptr), ZCOLL_ERR_ARG,
                    "scatter NULL comm");
  expect_everywhere(zcoll_gather(send.data(), N, t, recv.data(), N, t, 0, nullptr), ZCOLL_ERR_ARG, "gather NULL comm");
  expect_everywhere(zcoll_alltoall(send.data(), N, t, recv.data(), N, t, nullptr), ZCOLL_ERR_ARG, "alltoall NULL comm");
  // Negative counts on every rank.
  expect_everywhere(zcoll_allgather(send.data(), -1, t, recv.data(), -1, t, zc), ZCOLL_ERR_ARG, "allgather count -1");
  expect_everywhere(zcoll_allgather(send.data(), N, t, recv.data(), -5, t, zc), ZCOLL_ERR_ARG,
                    "allgather recvcount -5");
  expect_everywhere(zcoll_allgather(MPI_IN_PLACE, 0, t, recv.data(), -1, t, zc), ZCOLL_ERR_ARG,
                    "allgather in place recvcount -1");
  {
    std::vector<int> neg = counts;
    neg[static_cast<size_t>(p - 1)] = -1;
    expect_everywhere(
        zcoll_allgatherv(send.data(), g_world.rank == p - 1 ? -1 : N, t, recv.data(), neg.data(), displs.data(), t, zc),
        ZCOLL_ERR_ARG, "allgatherv a recvcount -1");
    expect_everywhere(zcoll_allgatherv(send.data(), -1, t, recv.data(), counts.data(), displs.data(), t, zc),
                      ZCOLL_ERR_ARG, "allgatherv sendcount -1");
  }
  expect_everywhere(zcoll_bcast(send.data(), -1, t, 0, zc), ZCOLL_ERR_ARG, "bcast count -1");
  expect_everywhere(zcoll_scatter(send.data(), -1, t, recv.data(), -1, t, 0, zc), ZCOLL_ERR_ARG, "scatter count -1");
  expect_everywhere(zcoll_scatter(send.data(), -1, t, MPI_IN_PLACE, -1, t, p - 1, zc), ZCOLL_ERR_ARG,
                    "scatter count -1, in place at the root");
  expect_everywhere(zcoll_gather(send.data(), -1, t, recv.data(), -1, t, p - 1, zc), ZCOLL_ERR_ARG, "gather count -1");
  expect_everywhere(zcoll_alltoall(send.data(), -1, t, recv.data(), -1, t, zc), ZCOLL_ERR_ARG, "alltoall count -1");
  expect_everywhere(zcoll_alltoall(MPI_IN_PLACE, 0, t, recv.data(), -1, t, zc), ZCOLL_ERR_ARG,
                    "alltoall in place count -1");
  // Root out of range.
  for (int root : {p, -1, p + 7}) {
    char what[64];
    std::snprintf(what, sizeof what, "bcast root %d", root);
    expect_everywhere(zcoll_bcast(send.data(), N, t, root, zc), ZCOLL_ERR_ARG, what);
    std::snprintf(what, sizeof what, "scatter root %d", root);
    expect_everywhere(zcoll_scatter(send.data(), N, t, recv.data(), N, t, root, zc), ZCOLL_ERR_ARG, what);
    std::snprintf(what, sizeof what, "gather root %d", root);
    expect_everywhere(zcoll_gather(send.data(), N, t, recv.data(), N, t, root, zc), ZCOLL_ERR_ARG, what);
  }
  // NULL buffers with data, on every rank.
  expect_everywhere(zcoll_bcast(nullptr, N, t, 0, zc), ZCOLL_ERR_ARG, "bcast NULL buffer");
  expect_everywhere(zcoll_allgather(send.data(), N, t, nullptr, N, t, zc), ZCOLL_ERR_ARG, "allgather NULL recvbuf");
  expect_everywhere(zcoll_allgather(nullptr, N, t, recv.data(), N, t, zc), ZCOLL_ERR_ARG, "allgather NULL sendbuf");
  expect_everywhere(zcoll_allgatherv(send.data(), N, t, nullptr, counts.data(), displs.data(), t, zc), ZCOLL_ERR_ARG,
                    "allgatherv NULL recvbuf");
  expect_everywhere(zcoll_allgatherv(send.data(), N, t, recv.data(), nullptr, displs.data(), t, zc), ZCOLL_ERR_ARG,
                    "allgatherv NULL recvcounts");
  expect_everywhere(zcoll_allgatherv(send.data(), N, t, recv.data(), counts.data(), nullptr, t, zc), ZCOLL_ERR_ARG,
                    "allgatherv NULL displs");
  expect_everywhere(zcoll_scatter(send.data(), N, t, nullptr, N, t, 0, zc), ZCOLL_ERR_ARG, "scatter NULL recvbuf");
  expect_everywhere(zcoll_gather(nullptr, N, t, recv.data(), N, t, 0, zc), ZCOLL_ERR_ARG, "gather NULL sendbuf");
  expect_everywhere(zcoll_alltoall(nullptr, N, t, recv.data(), N, t, zc), ZCOLL_ERR_ARG, "alltoall NULL sendbuf");
  expect_everywhere(zcoll_alltoall(send.data(), N, t, nullptr, N, t, zc), ZCOLL_ERR_ARG, "alltoall NULL recvbuf");
}

void section_errors() {
  const int p = g_world.size;
  {
    Ctx cx("zcoll_comm_create");
    zcoll_config cfg;
    zcoll_config_init(&cfg);
    cfg.codec.eb = 1e-3;
    zcoll_comm zc = nullptr;
    expect_everywhere(zcoll_comm_create(MPI_COMM_NULL, &cfg, &zc), ZCOLL_ERR_ARG, "MPI_COMM_NULL");
    const double bad_eb[] = {0.0,
                             -0.0,
                             -1e-3,
                             -INFINITY,
                             INFINITY,
                             std::numeric_limits<double>::quiet_NaN(),
                             -std::numeric_limits<double>::quiet_NaN()};
    for (int mode : {ZCOLL_EB_ABS, ZCOLL_EB_REL})
      for (double eb : bad_eb) {
        zcoll_config b = cfg;
        b.codec.eb_mode = mode;
        b.codec.eb = eb;
        char what[96];
        std::snprintf(what, sizeof what, "%s eb=%g", mode == ZCOLL_EB_REL ? "REL" : "ABS", eb);
        expect_everywhere(zcoll_comm_create(MPI_COMM_WORLD, &b, &zc), ZCOLL_ERR_ARG, what);
      }
    zcoll_config b = cfg;
    b.algorithm = 99;
    expect_everywhere(zcoll_comm_create(MPI_COMM_WORLD, &b, &zc), ZCOLL_ERR_ARG, "algorithm 99");
    b.algorithm = -1;
    expect_everywhere(zcoll_comm_create(MPI_COMM_WORLD, &b, &zc), ZCOLL_ERR_ARG, "algorithm -1");
    b = cfg;
    b.codec.chunk_len = 33;
    expect_everywhere(zcoll_comm_create(MPI_COMM_WORLD, &b, &zc), ZCOLL_ERR_ARG, "chunk_len 33");
    b = cfg;
    b.codec.eb_mode = 7;
    expect_everywhere(zcoll_comm_create(MPI_COMM_WORLD, &b, &zc), ZCOLL_ERR_ARG, "eb_mode 7");
    expect_everywhere(zcoll_comm_create(MPI_COMM_WORLD, nullptr, &zc), ZCOLL_ERR_ARG, "NULL config");
    expect_everywhere(zcoll_comm_create(MPI_COMM_WORLD, &cfg, nullptr), ZCOLL_ERR_ARG, "NULL handle");
    zcoll_stats st;
    expect_everywhere(zcoll_last_stats(nullptr, &st), ZCOLL_ERR_ARG, "zcoll_last_stats(NULL comm)");
  }
  for (int algo : {ZCOLL_ALGO_AUTO, ZCOLL_ALGO_CPRP2P, ZCOLL_ALGO_MPI}) {
    Cfg c;
    c.algo = algo;
    c.mode = ZCOLL_EB_REL;
    c.eb = 1e-3;
    c.min_bytes = 1024;
    Ctx cx("errors %s", cfg_str(c).c_str());
    zcoll_comm zc = make_comm(g_world, c);
    if (!zc) continue;
    // A valid call first, so that there is state the errors must not disturb.
    run_all<float>(g_world, zc, c, same(3001), kEvery, Spec::kNone, false, {p - 1}, {}, algo);
    bad_args<float>(zc);
    bad_args<double>(zc);
    bad_args<int32_t>(zc);
    expect_everywhere(zcoll_last_stats(zc, nullptr), ZCOLL_ERR_ARG, "zcoll_last_stats(NULL stats)");
    // The communicator still works: every collective, roots, in place.
    const bool a = algo == ZCOLL_ALGO_AUTO || !heavy();
    run_all<float>(g_world, zc, c, kStd, kEvery, Spec::kNone, a, a ? roots_of(p) : std::vector<int>{p / 2}, {p - 1},
                   algo);
    if (a) run_all<double>(g_world, zc, c, same(3001), kEvery, Spec::kNone, false, {0}, {}, algo);
    free_comm(zc);
  }
}

// The comm reuses its buffers: the same collective 20 times with new data each time,
// sizes growing and shrinking, float and double interleaved, roots moving.
void loop_calls(zcoll_comm zc, const Cfg& c, Coll coll, int iters) {
  const int p = g_world.size;
  Ctx cx("loop of %d %s", iters, coll_name(coll));
  for (int it = 0; it < iters; ++it) {
    Ctx ci("iteration %d", it);
    Call k;
    k.fid = it;
    k.count = 1500 + static_cast<size_t>((it * 2311) % 5000);
    k.root = it % p;
    k.in_place = it % 3 == 2;
    const bool dbl = it % 4 == 3;
    switch (coll) {
      case kAllgather:
        dbl ? run_allgather<double>(g_world, zc, c, k) : run_allgather<float>(g_world, zc, c, k);
        break;
      case kAllgatherv:
        dbl ? run_allgatherv<double>(g_world, zc, c, k, 1 + it % 2, it % 5 == 0)
            : run_allgatherv<float>(g_world, zc, c, k, 1 + it % 2, it % 5 == 0);
        break;
      case kBcast:
        k.count *= 2;
        dbl ? run_bcast<double>(g_world, zc, c, k) : run_bcast<float>(g_world, zc, c, k);
        break;
      case kScatter:
        dbl ? run_scatter<double>(g_world, zc, c, k) : run_scatter<float>(g_world, zc, c, k);
        break;
      case kGather:
        dbl ? run_gather<double>(g_world, zc, c, k) : run_gather<float>(g_world, zc, c, k);
        break;
      case kAlltoall:
        k.count /= 2;
        dbl ? run_alltoall<double>(g_world, zc, c, k) : run_alltoall<float>(g_world, zc, c, k);
        break;
      default:
        break;
    }
  }
}

void section_loop() {
  const int p = g_world.size;
  {
    const Cfg c = accuracy_cfg<float>(ZCOLL_ALGO_AUTO, ZCOLL_EB_ABS);
    Ctx cx("loop %s", cfg_str(c).c_str());
    zcoll_comm zc = make_comm(g_world, c);
    if (zc) {
      for (int coll = 0; coll < kNumColl; ++coll) loop_calls(zc, c, static_cast<Coll>(coll), 20);
      free_comm(zc);
    }
  }
  for (int algo : {ZCOLL_ALGO_AUTO, ZCOLL_ALGO_CPRP2P}) {
    const Cfg c = accuracy_cfg<float>(algo, algo == ZCOLL_ALGO_AUTO ? ZCOLL_EB_REL : ZCOLL_EB_ABS);
    Ctx cx("loop %s", cfg_str(c).c_str());
    zcoll_comm zc = make_comm(g_world, c);
    if (!zc) continue;
    const int iters = heavy() ? 8 : 20;
    if (algo == ZCOLL_ALGO_AUTO) {
      loop_calls(zc, c, kAllgatherv, iters);
      loop_calls(zc, c, kBcast, iters);
      loop_calls(zc, c, kScatter, iters);
    } else {
      loop_calls(zc, c, kAllgather, iters);
      loop_calls(zc, c, kGather, iters);
      loop_calls(zc, c, kAlltoall, iters);
    }
    free_comm(zc);
  }
  // Several communicators alive at once, used in turns (each has its own buffers).
  {
    Ctx cx("loop: three communicators interleaved");
    const Cfg a = accuracy_cfg<float>(ZCOLL_ALGO_AUTO, ZCOLL_EB_ABS),
              b = accuracy_cfg<double>(ZCOLL_ALGO_AUTO, ZCOLL_EB_REL),
              d = accuracy_cfg<float>(ZCOLL_ALGO_CPRP2P, ZCOLL_EB_REL);
    zcoll_comm za = make_comm(g_world, a), zb = make_comm(g_world, b), zd = make_comm(g_world, d);
    if (za && zb && zd)
      for (int it = 0; it < 5; ++it) {
        Call k;
        k.fid = it;
        k.count = 2000 + static_cast<size_t>(it) * 1000;
        k.root = (it * 3) % p;
        run_allgather<float>(g_world, za, a, k);
        run_bcast<double>(g_world, zb, b, k);
        run_alltoall<float>(g_world, zd, d, k);
        run_gather<float>(g_world, za, a, k);
      }
    if (za) free_comm(za);
    if (zb) free_comm(zb);
    if (zd) free_comm(zd);
  }
}

// A communicator other than MPI_COMM_WORLD: two halves, ranks in reverse order. And
// zcoll works on its own duplicate: a receive the application has posted on the same
// communicator (any source, any tag) must not catch zcoll's messages.
void section_subcomm() {
  const int r = g_world.rank, p = g_world.size;
  {
    Ctx cx("isolation: MPI_Irecv(MPI_ANY_SOURCE, MPI_ANY_TAG) pending on MPI_COMM_WORLD during collectives");
    int token = -1;
    MPI_Request req;
    MPI_Irecv(&token, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req);
    for (int algo : {ZCOLL_ALGO_AUTO, ZCOLL_ALGO_CPRP2P}) {
      const Cfg c = accuracy_cfg<float>(algo, ZCOLL_EB_REL);
      zcoll_comm zc = make_comm(g_world, c);
      if (!zc) continue;
      run_all<float>(g_world, zc, c, Sizes{2001, 4001, 1001, 501}, kEvery, Spec::kNone, false, {p - 1}, {}, algo);
      free_comm(zc);
    }
    int flag = 0;
    MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
    EXPECT(!flag, "the application's pending receive matched a message (token %d)", token);
    MPI_Barrier(MPI_COMM_WORLD);  // everyone has looked before anyone sends
    const int mine = 1000 + r;
    MPI_Send(&mine, 1, MPI_INT, (r + 1) % p, 77, MPI_COMM_WORLD);
    MPI_Status st;
    if (!flag) MPI_Wait(&req, &st);
    EXPECT(token == 1000 + (r - 1 + p) % p && (flag || st.MPI_TAG == 77),
           "the application's receive got %d (expected %d from rank %d)", token, 1000 + (r - 1 + p) % p,
           (r - 1 + p) % p);
  }
  {
    Ctx cx("zcoll_comm_free of a NULL handle");
    zcoll_comm none = nullptr;
    const int rc = zcoll_comm_free(&none);
    EXPECT(rc == ZCOLL_SUCCESS || rc == ZCOLL_ERR_ARG, "returned %d", rc);
    EXPECT(none == nullptr, "the handle is no longer NULL");
    EXPECT_RC(zcoll_comm_free(nullptr), ZCOLL_ERR_ARG);
  }
  MPI_Comm sub;
  MPI_Comm_split(MPI_COMM_WORLD, r % 2, -r, &sub);
  Group g{sub, 0, 1, 1 + r % 2};
  MPI_Comm_rank(sub, &g.rank);
  MPI_Comm_size(sub, &g.size);
  for (int algo : kAlgos)
    for (int mode : {ZCOLL_EB_ABS, ZCOLL_EB_REL}) {
      if (mode == ZCOLL_EB_REL && algo != ZCOLL_ALGO_AUTO) continue;
      const Cfg c = accuracy_cfg<float>(algo, mode);
      Ctx cx("subcomm (color %d, size %d, rank %d) %s", r % 2, g.size, g.rank, cfg_str(c).c_str());
      zcoll_comm zc = make_comm(g, c);
      if (!zc) continue;
      const bool a = algo == ZCOLL_ALGO_AUTO;
      run_all<float>(g, zc, c, Sizes{4001, 9001, 3001, 1501}, mask_of(algo), Spec::kNone, a,
                     a ? roots_of(g.size) : std::vector<int>{g.size - 1}, {g.size / 2}, algo);
      if (a && mode == ZCOLL_EB_ABS)
        run_all<double>(g, zc, c, Sizes{4001, 9001, 3001, 1501}, kEvery, Spec::kNone, false, {0}, {}, algo);
      free_comm(zc);
    }
  MPI_Comm_free(&sub);
}

// Send and receive datatypes that differ while their type signatures match (legal MPI:
// a strided vector of floats sent, plain MPI_FLOATs received; MPI_FLOAT at the root and
// contiguous(n, MPI_FLOAT) elsewhere). MPI's semantics must hold whether or not zcoll
// compresses. A call that does not return within the watchdog's time (ranks that took
// different paths wait for each other) ends the program with a message.
const char* g_watch = "";
extern "C" void watchdog_fired(int) {
  const char* a = "\nFAIL: watchdog: no return within 10 s (deadlock?) in ";
  ssize_t ignored = write(2, a, std::strlen(a));
  ignored = write(2, g_watch, std::strlen(g_watch));
  ignored = write(2, "\n", 1);
  (void)ignored;
  _exit(3);
}
struct Watchdog {
  explicit Watchdog(const char* what) {
    g_watch = what;
    std::signal(SIGALRM, watchdog_fired);
    alarm(10);
  }
  ~Watchdog() { alarm(0); }
};

void section_mixedtypes() {
  const int p = g_world.size, r = g_world.rank;
  const size_t n = 3001;
  const int N = static_cast<int>(n);
  MPI_Datatype strided, strided_block, block;
  MPI_Type_vector(N, 1, 2, MPI_FLOAT, &strided);  // n floats, every other one of 2n
  MPI_Type_create_resized(strided, 0, static_cast<MPI_Aint>(2 * n * sizeof(float)), &strided_block);
  MPI_Type_commit(&strided);
  MPI_Type_commit(&strided_block);
  MPI_Type_contiguous(N, MPI_FLOAT, &block);
  MPI_Type_commit(&block);
  // ZCOLL_ALGO_MPI first: plain MPI calls, which validates the expectations themselves.
  for (int algo : {ZCOLL_ALGO_MPI, ZCOLL_ALGO_AUTO, ZCOLL_ALGO_CPRP2P}) {
    Cfg c = accuracy_cfg<float>(algo, ZCOLL_EB_ABS);
    Ctx cx("mixed types %s", cfg_str(c).c_str());
    zcoll_comm zc = make_comm(g_world, c);
    if (!zc) continue;
    const double eb = c.eb;  // ABS: the bound whether or not zcoll compresses
    {
      Ctx c1("allgather: sendtype vector(n,1,2,MPI_FLOAT) x 1, recvtype MPI_FLOAT x n (n=%zu)", n);
      const uint64_t salt = next_salt();
      std::vector<float> send(2 * n);
      gen(send.data(), 0, r, salt, 2 * n);
      Buf<float> recv(n * static_cast<size_t>(p));
      int rc;
      {
        Watchdog w("mixed types: allgather");
        rc = zcoll_allgather(send.data(), 1, strided, recv.data(), N, MPI_FLOAT, zc);
      }
      EXPECT_RC(rc, ZCOLL_SUCCESS);
      Expect<float> e(n * static_cast<size_t>(p));
      std::vector<float> tmp(2 * n);
      for (int s = 0; s < p; ++s) {
        gen(tmp.data(), 0, s, salt, 2 * n);
        for (size_t i = 0; i < n; ++i) *e.at(static_cast<size_t>(s) * n + i) = tmp[2 * i];
        e.mark(static_cast<size_t>(s) * n, n, s == r);
      }
      verify(recv, e, eb, "recvbuf");
    }
    {
      Ctx c1("alltoall: sendtype resized vector(n,1,2,MPI_FLOAT) x 1, recvtype MPI_FLOAT x n (n=%zu)", n);
      const uint64_t salt = next_salt();
      std::vector<float> send(2 * n * static_cast<size_t>(p));
      gen(send.data(), 1, r, salt, send.size());
      Buf<float> recv(n * static_cast<size_t>(p));
      int rc;
      {
        Watchdog w("mixed types: alltoall");
        rc = zcoll_alltoall(send.data(), 1, strided_block, recv.data(), N, MPI_FLOAT, zc);
      }
      EXPECT_RC(rc, ZCOLL_SUCCESS);
      Expect<float> e(n * static_cast<size_t>(p));
      std::vector<float> tmp(2 * n);
      for (int s = 0; s < p; ++s) {
        gen(tmp.data(), 1, s, salt, 2 * n, 2 * n * static_cast<size_t>(r));  // s's block for this rank
        for (size_t i = 0; i < n; ++i) *e.at(static_cast<size_t>(s) * n + i) = tmp[2 * i];
        e.mark(static_cast<size_t>(s) * n, n, s == r);
      }
      verify(recv, e, eb, "recvbuf");
    }
    {
      Ctx c1("bcast: MPI_FLOAT x n at the root, contiguous(n, MPI_FLOAT) x 1 elsewhere (n=%zu, root %d)", n, p - 1);
      const uint64_t salt = next_salt();
      const int root = p - 1;
      Buf<float> buf(n);
      gen(buf.data(), 2, r == root ? root : r + 50, salt, n);
      int rc;
      {
        Watchdog w("mixed types: bcast");
        rc = zcoll_bcast(buf.data(), r == root ? N : 1, r == root ? MPI_FLOAT : block, root, zc);
      }
      EXPECT_RC(rc, ZCOLL_SUCCESS);
      Expect<float> e(n);
      gen(e.at(0), 2, root, salt, n);
      e.mark(0, n, r == root);
      verify(buf, e, eb, "buffer");
    }
    {
      Ctx c1("scatter: MPI_FLOAT x n at the root, recvtype contiguous(n, MPI_FLOAT) x 1 elsewhere (n=%zu, root %d)", n,
             p / 2);
      const uint64_t salt = next_salt();
      const int root = p / 2;
      std::vector<float> send(r == root ? n * static_cast<size_t>(p) : 1);
      if (r == root) gen(send.data(), 0, root, salt, send.size());
      Buf<float> recv(n);
      int rc;
      {
        Watchdog w("mixed types: scatter");
        rc = zcoll_scatter(send.data(), N, MPI_FLOAT, recv.data(), r == root ? N : 1, r == root ? MPI_FLOAT : block,
                           root, zc);
      }
      EXPECT_RC(rc, ZCOLL_SUCCESS);
      Expect<float> e(n);
      gen(e.at(0), 0, root, salt, n, n * static_cast<size_t>(r));
      e.mark(0, n, r == root);
      verify(recv, e, eb, "recvbuf");
    }
    {
      Ctx c1("gather: sendtype contiguous(n, MPI_FLOAT) x 1 off the root, MPI_FLOAT x n at the root (n=%zu, root %d)",
             n, p - 1);
      const uint64_t salt = next_salt();
      const int root = p - 1;
      std::vector<float> send(n);
      gen(send.data(), 1, r, salt, n);
      Buf<float> recv(r == root ? n * static_cast<size_t>(p) : 0);
      int rc;
      {
        Watchdog w("mixed types: gather");
        rc = zcoll_gather(send.data(), r == root ? N : 1, r == root ? MPI_FLOAT : block, recv.data(), N, MPI_FLOAT,
                          root, zc);
      }
      EXPECT_RC(rc, ZCOLL_SUCCESS);
      Expect<float> e(recv.size());
      if (r == root)
        for (int s = 0; s < p; ++s) {
          gen(e.at(static_cast<size_t>(s) * n), 1, s, salt, n);
          e.mark(static_cast<size_t>(s) * n, n, s == r);
        }
      verify(recv, e, eb, "recvbuf");
    }
    free_comm(zc);
  }
  MPI_Type_free(&strided);
  MPI_Type_free(&strided_block);
  MPI_Type_free(&block);
}

// codecs: the linear-predictor codecs (ZCOLL_CODEC_LPBYTE, ZCOLL_CODEC_LPBIT) and szx through the
// collectives, on real-field slices, float and double: bcast and alltoall (checked as in
// every other section), and allreduce MPI_SUM, which with these codecs runs
// decompress-operate-compress (ZCOLL_REDUCTION_AUTO): every element within p x eps of the
// exact sum (+ the element type's rounding, p u sum|x_i| + u |sum|), eps = the REL bound
// over every rank's input, and the same result on every rank. ZCOLL_REDUCTION_HOMOMORPHIC
// with them, and an unknown codec, are refused by zcoll_comm_create (ZCOLL_ERR_CODEC).
template <class T>
void codec_allreduce(zcoll_comm zc, const Cfg& c, int fid, size_t n) {
  Ctx cx("allreduce MPI_SUM %s count=%zu", Ty<T>::name(), n);
  const int p = g_world.size, r = g_world.rank;
  const uint64_t salt = next_salt();
  std::vector<std::vector<T>> in(static_cast<size_t>(p), std::vector<T>(n));
  for (int s = 0; s < p; ++s) gen(in[static_cast<size_t>(s)].data(), fid, owner_id(g_world, s), salt, n);
  Buf<T> out(n);
  EXPECT_RC(zcoll_allreduce(in[static_cast<size_t>(r)].data(), out.data(), static_cast<int>(n), Ty<T>::mpi(), MPI_SUM, zc),
            ZCOLL_SUCCESS);
  zcoll_stats st;
  EXPECT_RC(zcoll_last_stats(zc, &st), ZCOLL_SUCCESS);
  EXPECT(st.compressed == 1, "stats.compressed = %d", st.compressed);
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& v : in) {
    double l, h;
    local_range(v.data(), n, l, h);
    lo = std::min(lo, l);
    hi = std::max(hi, h);
  }
  const double eps = st.eb_abs;
  const double want = c.mode == ZCOLL_EB_REL ? rel_to_abs_expected(c.eb, lo, hi) : c.eb;
  EXPECT(std::fabs(eps - want) <= 1e-12 * want, "eb_abs %.17g, expected %.17g", eps, want);
  const long double u = sizeof(T) == 4 ? 0x1p-24L : 0x1p-53L;
  size_t bad = 0;
  uint64_t hash = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) {
    long double ref = 0, asum = 0;
    for (int s = 0; s < p; ++s) {
      const long double x = in[static_cast<size_t>(s)][i];
      ref += x;
      asum += std::fabs(x);
    }
    const T g = out.data()[i];
    const long double lim = static_cast<long double>(p) * eps + p * u * asum + u * std::fabs(ref);
    if (!(std::isfinite(g) && std::fabs(static_cast<long double>(g) - ref) <= lim)) {
      if (bad < 4)
        std::fprintf(stderr, "[rank %d/%d]   %s: element %zu: got %.17g, exact sum %.21Lg, allowed %.6Lg (eps %.6g)\n",
                     r, p, ctx().c_str(), i, static_cast<double>(g), ref, lim, eps);
      ++bad;
    }
    typename Ty<T>::Bits b;
    std::memcpy(&b, &g, sizeof b);
    hash = (hash ^ static_cast<uint64_t>(b)) * 1099511628211ull;
  }
  EXPECT(bad == 0, "%zu of %zu elements outside p x eps (+ rounding)", bad, n);
  for (size_t i = 0; i < kGuard; ++i)
    EXPECT(same_bits(out.v[i], out.v[0]) && same_bits(out.v[kGuard + n + i], out.v[0]), "guard element %zu written", i);
  std::vector<uint64_t> hashes(static_cast<size_t>(p));
  MPI_Allgather(&hash, 1, MPI_UINT64_T, hashes.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
  for (int s = 0; s < p; ++s)
    EXPECT(hashes[static_cast<size_t>(s)] == hashes[0], "rank %d's result differs from rank 0's", s);
}

template <class T>
void codecs_type() {
  const int p = g_world.size;
  Cfg c;
  c.min_bytes = 1024;
  if (std::is_same_v<T, float>) {
    c.mode = ZCOLL_EB_REL;
    c.eb = 1e-3;
  } else {  // several chunks, lanes and not, and two threads
    c.mode = ZCOLL_EB_ABS;
    c.eb = 1e-4;
    c.chunk = 2048;
    c.threads = 2;
  }
  for (int codec : {ZCOLL_CODEC_LPBYTE, ZCOLL_CODEC_LPBIT, ZCOLL_CODEC_SZX}) {
    c.codec = codec;
    Ctx cx("codecs %s %s",
           codec == ZCOLL_CODEC_LPBYTE ? "lpbyte" : codec == ZCOLL_CODEC_LPBIT ? "lpbit" : "szx",
           cfg_str(c).c_str());
    Cfg homomorphic = c;
    homomorphic.reduction = ZCOLL_REDUCTION_HOMOMORPHIC;
    zcoll_comm bad = make_comm(g_world, homomorphic, ZCOLL_ERR_CODEC);
    if (bad) zcoll_comm_free(&bad);
    zcoll_comm zc = make_comm(g_world, c);
    if (!zc) continue;
    Call k;
    k.fid = 0;
    k.count = 10007;
    k.root = p - 1;
    run_bcast<T>(g_world, zc, c, k);
    k.fid = 1;
    k.count = 2501;
    run_alltoall<T>(g_world, zc, c, k);
    flush();
    codec_allreduce<T>(zc, c, 2, 30011);
    free_comm(zc);
  }
}

void section_codecs() {
  Cfg unknown;
  unknown.codec = 99;
  zcoll_comm zc = make_comm(g_world, unknown, ZCOLL_ERR_CODEC);
  if (zc) zcoll_comm_free(&zc);
  codecs_type<float>();
  codecs_type<double>();
}

const Section kSections[] = {
    {"accuracy", section_accuracy},
    {"edge", section_edge},
    {"special", section_special},
    {"incompressible", section_incompressible},
    {"passthrough", section_passthrough},
    {"errors", section_errors},
    {"loop", section_loop},
    {"subcomm", section_subcomm},
    {"mixedtypes", section_mixedtypes},
    {"codecs", section_codecs},
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  g_world = Group{MPI_COMM_WORLD, g_rank, g_size, 0};
  MPI_Type_contiguous(3, MPI_FLOAT, &g_f3_type);
  MPI_Type_commit(&g_f3_type);
  load_fields();
  {
    int one = 42, out[4] = {-1, -1, -1, -1}, cnt = 1, disp = 2;
    MPI_Allgatherv(&one, 1, MPI_INT, out, &cnt, &disp, MPI_INT, MPI_COMM_SELF);
    g_mpi_allgatherv_self_bug = out[2] != 42;
    if (g_mpi_allgatherv_self_bug && g_rank == 0)
      std::printf(
          "NOTE: this MPI's MPI_Allgatherv ignores displs on a one-rank communicator (MPICH < 4.1, "
          "pmodels/mpich#6374); on one rank zcoll's plain allgatherv is compared with that MPI call\n");
  }

  if (g_rank == 0) {
    std::printf("float fields:");
    for (const std::string& n : g_f32_names) std::printf(" %s", n.c_str());
    std::printf("\ndouble fields:");
    for (const std::string& n : g_f64_names) std::printf(" %s", n.c_str());
    std::printf("\n");
  }
  const int status = run_sections(argc, argv, kSections, flush, &g_salt);
  MPI_Type_free(&g_f3_type);
  MPI_Finalize();
  return status;
}
