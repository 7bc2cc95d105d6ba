// The harness of zcoll_mpi_coll_tests (test_coll.cc runs the sections; each collective's
// runner and its own checks are in coll_<collective>.h). Every rank runs the same
// sequence of calls. Each rank can regenerate what any other rank sent (slices of the
// shipped real fields, chosen by owner rank and a per-call salt), so every received
// element is checked against the sender's original value: within the eb_abs that
// zcoll_last_stats reports (|got - want| <= eb_abs in double, no tolerance), bit for bit
// for a rank's own block, for NaN/Inf, and on every plain MPI path. Receive buffers carry
// guard elements on both sides (and allgatherv leaves gaps between blocks) that must
// come back untouched. The checks that need other ranks' values are deferred (defer()).
#pragma once
#include <zcoll.h>

#include <algorithm>
#include <cfloat>
#include <cstdarg>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
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
  static const char* const n[] = {"AUTO",     "MPI",      "CPRP2P", "RING", "BRUCK", "BINOMIAL", "SCATTER_ALLGATHER",
                                  "PAIRWISE", "RECURSIVE_DOUBLING", "HIERARCHICAL"};
  return a >= 0 && a < static_cast<int>(sizeof n / sizeof n[0]) ? n[a] : "?";
}

// ------------------------------------------------------------------ element types

struct F3 {  // passed as MPI_Type_contiguous(3, MPI_FLOAT): never compressed
  float v[3];
};
MPI_Datatype g_f3_type = MPI_DATATYPE_NULL;

// Per element type: its MPI datatype, whether zcoll may compress it, its name, and for
// the floating-point types the bits of a NaN that no codec or MPI path produces (what
// receive buffers are filled with).
template <class T>
struct Ty;
#define ZCOLL_TEST_TYPE(T, datatype, is_fp, BitsT, sentinel_bits, type_name)  \
  template <>                                                                 \
  struct Ty<T> {                                                              \
    static MPI_Datatype mpi() { return datatype; }                            \
    static constexpr bool fp = is_fp;                                         \
    using Bits = BitsT;                                                       \
    static constexpr Bits sentinel = sentinel_bits;                           \
    static const char* name() { return type_name; }                           \
  };
ZCOLL_TEST_TYPE(float, MPI_FLOAT, true, uint32_t, 0x7fa5a5a5u, "f32")
ZCOLL_TEST_TYPE(double, MPI_DOUBLE, true, uint64_t, 0x7ff5a5a5a5a5a5a5ull, "f64")
ZCOLL_TEST_TYPE(int32_t, MPI_INT, false, uint8_t, 0xA5, "MPI_INT")
ZCOLL_TEST_TYPE(char, MPI_CHAR, false, uint8_t, 0xA5, "MPI_CHAR")
ZCOLL_TEST_TYPE(F3, g_f3_type, false, uint8_t, 0xA5, "contiguous(3,MPI_FLOAT)")
#undef ZCOLL_TEST_TYPE

template <class T>
void set_sentinel(T* p, size_t n) {
  if constexpr (Ty<T>::fp) {
    const typename Ty<T>::Bits b = Ty<T>::sentinel;
    for (size_t i = 0; i < n; ++i) std::memcpy(p + i, &b, sizeof b);
  } else {
    std::memset(static_cast<void*>(p), Ty<T>::sentinel, n * sizeof(T));
  }
}

template <class T>
bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// ------------------------------------------------------------------ fields

std::vector<std::vector<float>> g_f32;
std::vector<std::vector<double>> g_f64;
std::vector<std::string> g_f32_names, g_f64_names;

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

// The shipped fields, and the optional ones of ../shared/datasets.
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
  auto field = [&](int i, size_t f) { return all[static_cast<size_t>(i) * stride + f]; };
  auto lo_of = [&](int i) { return field(i, 0); };
  auto hi_of = [&](int i) { return field(i, 1); };
  auto eb_of = [&](int i) { return field(i, 2); };
  auto comp_of = [&](int i) { return field(i, 3); };
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
  // What came before the decision is its own part, not communication: the parts add up to
  // no more than the whole (t_total is read last), and a compressed call always agreed first.
  const double parts = st.t_setup + st.t_compress + st.t_comm + st.t_decompress + st.t_reduce;
  EXPECT(std::isfinite(st.t_setup) && st.t_setup >= 0 && st.t_setup <= st.t_total &&
             st.t_model <= st.t_setup + 1e-9 && (!st.compressed || (st.t_setup > 0 && parts <= st.t_total + 1e-9)),
         "stats times: t_setup %g (t_model %g) and the parts %g against t_total %g (compressed %d)", st.t_setup,
         st.t_model, parts, st.t_total, st.compressed);
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
        raw += field(i, 4);
        wire += field(i, 5);
      }
      EXPECT(raw >= q.min_sent && wire > 0,
             "raw_bytes summed over ranks %.0f (at least %.0f must have been sent), wire_bytes summed %.0f", raw,
             q.min_sent, wire);
    }
  }
  q.verify(eb);
}

// Runs the checks that defer() queued (collective over their communicator).
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

// Reads zcoll_last_stats after a collective and queues the checks of the call: the
// stats against cfg and the other ranks', then verify(eb_abs) on the elements.
// min_sent: uncompressed bytes that must leave their owners, whatever the algorithm;
// bytes: memory the queued check holds on to (a batch is flushed before it grows large).
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

// defer() of the element check of `recv` against `e`.
template <class T>
void defer_verify(const Group& g, zcoll_comm zc, const Cfg& c, Coll coll, bool comp, double lo, double hi, int root,
                  double min_sent, Buf<T>&& recv, std::shared_ptr<Expect<T>> e, const char* what) {
  auto got = std::make_shared<Buf<T>>(std::move(recv));
  defer(g, zc, c, coll, comp, lo, hi, root, min_sent, 2 * got->v.size() * sizeof(T),
        [got, e, what](double eb) { verify(*got, *e, eb, what); });
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

// What this rank sends: n elements of its data (at least one allocated, so that data()
// is never NULL) and a copy the collective must leave as it was.
template <class T>
struct Send {
  std::vector<T> v, before;
  Send(size_t n, const Group& g, const Call& k, uint64_t salt) : v(std::max<size_t>(n, 1)) {
    gen(v.data(), k.fid, owner_id(g, g.rank), salt, n, 0, k.spec);
    before = v;
  }
  void check(const char* what) const { verify_unchanged(v, before, what); }
};

// Blocks s = 0..p-1 of n elements at s * n: what rank s sent from its element `offset`
// on, bit-exact for this rank's own block and when nothing is compressed.
template <class T>
void expect_blocks(Expect<T>& e, const Group& g, const Call& k, uint64_t salt, size_t n, size_t offset, bool comp) {
  for (int s = 0; s < g.size; ++s) {
    gen(e.at(static_cast<size_t>(s) * n), k.fid, owner_id(g, s), salt, n, offset, k.spec);
    e.mark(static_cast<size_t>(s) * n, n, s == g.rank || !comp);
  }
}

}  // namespace
