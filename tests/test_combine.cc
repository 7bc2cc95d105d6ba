// zcoll_combine: homomorphic MIN, MAX and SUM of two compressed streams, tested
// against the contract in zcoll.h ("homomorphic combination"). With a' and b' what
// zcoll_decompress gives for the streams a and b:
//  * MIN/MAX decompress to exactly min/max(a', b') (a NaN on either side gives NaN),
//    within eb_abs of the min/max of the original inputs however many streams are folded;
//  * SUM decompresses to a' + b' rounded once to the element type (IEEE where a value
//    is NaN, Inf or stored exactly), so a fold of n streams is within n x eb_abs of the
//    sum of the inputs plus the element type's rounding of the sum;
//  * the result is a valid stream of the same kind (dtype, count, eb_abs, chunk length,
//    shape), the same for every thread count;
//  * ZCOLL_ERR_MISMATCH / CORRUPT / ARG / BUFFER_TOO_SMALL as documented.
//
// Data: slices of the shipped real fields (data/: cesm_TS, echam5_T, turb_wmag, as
// float or converted to double; the native ../shared fields where present), with a and
// b always from different fields or different slices. Special values and random bits
// are injected only where a test is about them.
//
// Tolerances (u = unit roundoff of the element type, ulp(v) = spacing of the element
// type at |v|):
//  * SUM vs the decompressed operands: the stream holds integers, x' = T(2 eb q), and a
//    sum decodes to T(2 eb (q_a + q_b)); each of a', b' and the result carries its own
//    rounding to T, so |res - (a' + b')| <= (ulp(a') + ulp(b') + ulp(res)) / 2 (plus
//    double-precision slack). This is at most 1.5 ulp at max(|a'|, |b'|, |res|) and
//    usually 1 ulp; where the sum is stored exactly it is 0.5 ulp(res).
//  * SUM of n streams vs the sum of the n inputs: n eb + (n + 1) u (sum|x| + n eb).
#include "test_util.h"

#include <cfloat>
#include <cstdlib>

#include "codec/container.h"

using namespace zt;

namespace {

using Bytes = std::vector<unsigned char>;
constexpr size_t kHeader = zcoll::codec::kHeaderBytes;
constexpr size_t kEntry = zcoll::codec::kIndexEntryBytes;
constexpr size_t kVersionByte = 4;

const int kOps[] = {ZCOLL_OP_SUM, ZCOLL_OP_MIN, ZCOLL_OP_MAX};
const int kMinMax[] = {ZCOLL_OP_MIN, ZCOLL_OP_MAX};

std::string op_name(int op) {
  switch (op) {
    case ZCOLL_OP_SUM: return "SUM";
    case ZCOLL_OP_MIN: return "MIN";
    case ZCOLL_OP_MAX: return "MAX";
    default: return "op" + std::to_string(op);
  }
}

template <class T> class Combine : public ::testing::Test {};
template <class T> class CombineErrors : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
struct TypeNames {
  template <class T> static std::string GetName(int) { return Dt<T>::name(); }
};
TYPED_TEST_SUITE(Combine, Types, TypeNames);
TYPED_TEST_SUITE(CombineErrors, Types, TypeNames);

template <class T> std::string show(T v) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.17g (0x%llx)", static_cast<double>(v),
                static_cast<unsigned long long>(bits_of(v)));
  return buf;
}

// ------------------------------------------------------------------ data

template <class T> const std::vector<T>& values_of(const Field& f);
template <> const std::vector<float>& values_of<float>(const Field& f) { return f.f32; }
template <> const std::vector<double>& values_of<double>(const Field& f) { return f.f64; }

// Whole fields in the element type, in available_fields() order: the three data/ fields
// first (always shipped), then the native ../shared ones when present.
template <class T> const std::vector<std::pair<std::string, const std::vector<T>*>>& sources() {
  static const auto v = [] {
    std::vector<std::pair<std::string, const std::vector<T>*>> out;
    for (const FieldSpec& s : available_fields()) {
      if (s.dtype != Dt<T>::value) continue;
      const Field& f = load_field(s, size_t(1) << 26);
      out.push_back({s.name, &values_of<T>(f)});
    }
    return out;
  }();
  return v;
}

// n consecutive values of data/ field k % 3 (cesm_TS, echam5_T, turb_wmag), starting at
// `at` modulo what fits.
template <class T> std::vector<T> slice(size_t k, size_t at, size_t n) {
  const auto& src = sources<T>();
  if (src.size() < 3) {
    ADD_FAILURE() << "the data/ fields are missing";
    return std::vector<T>(n, T(1));
  }
  const std::vector<T>& v = *src[k % 3].second;
  if (n > v.size()) {
    ADD_FAILURE() << "slice of " << n << " values from a field of " << v.size();
    return std::vector<T>(n, T(1));
  }
  const size_t off = at % (v.size() - n + 1);
  return std::vector<T>(v.begin() + static_cast<std::ptrdiff_t>(off),
                        v.begin() + static_cast<std::ptrdiff_t>(off + n));
}

struct Shape {
  int ndims = 0;
  size_t dims[3] = {0, 0, 0};
};
Shape shape(size_t d0, size_t d1, size_t d2 = 0) {
  Shape s;
  s.ndims = d2 ? 3 : 2;
  s.dims[0] = d0;
  s.dims[1] = d1;
  s.dims[2] = d2;
  return s;
}

// How the first stream's bound is given; REL is resolved to one absolute bound that all
// streams of a test then use (ABS).
struct Bound {
  int mode;
  double eb;
};
const Bound kBounds[] = {{ZCOLL_EB_ABS, 0.01}, {ZCOLL_EB_REL, 1e-4}};
std::string bound_str(const Bound& b) {
  return std::string(b.mode == ZCOLL_EB_REL ? "REL " : "ABS ") + std::to_string(b.eb);
}

template <class T> Bytes encode(const std::vector<T>& x, int mode, double eb, size_t chunk_len,
                                const Shape& sh = Shape(), double* eb_abs = nullptr) {
  zcoll_codec_params p = params(eb, mode, chunk_len, 1);
  p.ndims = sh.ndims;
  for (int d = 0; d < 3; ++d) p.dims[d] = sh.dims[d];
  Compressed c = compress(p, x);
  EXPECT_EQ(c.rc, ZCOLL_SUCCESS) << "zcoll_compress: " << zcoll_strerror(c.rc) << " " << zt::describe(p);
  if (eb_abs) *eb_abs = c.eb_abs;
  return c.stream;
}

// The absolute bound a Bound gives for x (as zcoll_compress reports it).
template <class T> double resolve(const std::vector<T>& x, const Bound& b) {
  double e = std::numeric_limits<double>::quiet_NaN();
  encode(x, b.mode, b.eb, 0, Shape(), &e);
  return e;
}

// xs[0] with bound b, the others with ABS and xs[0]'s resolved bound: one eb_abs for all.
template <class T>
std::vector<Bytes> encode_all(const std::vector<std::vector<T>>& xs, const Bound& b, size_t chunk_len,
                              double* eb_abs, const Shape& sh = Shape()) {
  std::vector<Bytes> out;
  double eb = std::numeric_limits<double>::quiet_NaN();
  for (size_t i = 0; i < xs.size(); ++i) {
    double e = 0;
    out.push_back(encode(xs[i], i ? ZCOLL_EB_ABS : b.mode, i ? eb : b.eb, chunk_len, sh, &e));
    if (i == 0) eb = e;
    else EXPECT_EQ(e, eb) << "stream " << i;
  }
  *eb_abs = eb;
  return out;
}

template <class T> std::vector<T> dec(const Bytes& s, size_t n, int threads = 1) {
  std::vector<T> out;
  bool guards = false;
  const int rc = decompress<T>(s, n, &out, threads, &guards);
  EXPECT_EQ(rc, ZCOLL_SUCCESS) << "zcoll_decompress: " << zcoll_strerror(rc);
  EXPECT_TRUE(guards) << "zcoll_decompress wrote outside its output";
  return out;
}

zcoll_stream_info info_of(const Bytes& s) {
  zcoll_stream_info info;
  std::memset(&info, 0, sizeof info);
  const int rc = zcoll_stream_inspect(s.data(), s.size(), &info);
  EXPECT_EQ(rc, ZCOLL_SUCCESS) << zcoll_strerror(rc);
  return info;
}

int combine_rc(int op, const Bytes& a, const Bytes& b, int threads = 1) {
  const size_t cap = std::max(zcoll_codec_bound(info_of(a).count, info_of(a).dtype), size_t(4096));
  Guarded g(cap);
  size_t out_size = 0;
  const int rc = zcoll_combine(static_cast<zcoll_op>(op), a.data(), a.size(), b.data(), b.size(), g.data(), cap,
                               &out_size, threads);
  EXPECT_TRUE(g.intact()) << "zcoll_combine wrote outside [out, out + out_cap)";
  return rc;
}

// call(out, out_cap, &out_size) into a guarded buffer of exactly zcoll_codec_bound(count,
// dtype) bytes; checks that nothing is written outside it and that the result is a
// valid stream of the same kind as `like` whose length is out_size.
template <class Call>
::testing::AssertionResult result_ok(const std::string& what, const Bytes& like, Bytes* out, Call&& call) {
  const Bytes& a = like;
  zcoll_stream_info ia;
  int rc = zcoll_stream_inspect(a.data(), a.size(), &ia);
  if (rc != ZCOLL_SUCCESS) return ::testing::AssertionFailure() << "input a does not inspect: " << zcoll_strerror(rc);
  const size_t cap = zcoll_codec_bound(ia.count, ia.dtype);
  if (cap == 0) return ::testing::AssertionFailure() << "zcoll_codec_bound gave 0";
  Guarded g(cap);
  g.fill(0x3C);
  size_t out_size = ~size_t(0);
  rc = call(g.data(), cap, &out_size);
  if (rc != ZCOLL_SUCCESS)
    return ::testing::AssertionFailure() << what << " returned " << rc << " (" << zcoll_strerror(rc) << ")";
  if (!g.intact()) return ::testing::AssertionFailure() << what << " wrote outside [out, out + out_cap)";
  if (out_size > cap || out_size < kHeader)
    return ::testing::AssertionFailure() << "out_size " << out_size << " outside [" << kHeader << ", " << cap << "]";
  Bytes res(g.data(), g.data() + out_size);
  zcoll_stream_info ir;
  std::memset(&ir, 0xCD, sizeof ir);
  rc = zcoll_stream_inspect(res.data(), res.size(), &ir);
  if (rc != ZCOLL_SUCCESS)
    return ::testing::AssertionFailure() << "the result does not inspect as a stream: " << zcoll_strerror(rc);
  std::string diff;
  auto field = [&](const char* name, unsigned long long x, unsigned long long y) {
    if (x != y) diff += std::string(" ") + name + ": " + std::to_string(x) + " (a) vs " + std::to_string(y) + " (result)";
  };
  field("codec", ia.codec, ir.codec);
  field("format_version", ia.format_version, ir.format_version);
  field("dtype", ia.dtype, ir.dtype);
  field("count", ia.count, ir.count);
  field("eb_abs bits", bits_of(ia.eb_abs), bits_of(ir.eb_abs));
  field("chunk_len", ia.chunk_len, ir.chunk_len);
  field("nchunks", ia.nchunks, ir.nchunks);
  field("ndims", static_cast<unsigned long long>(ia.ndims), static_cast<unsigned long long>(ir.ndims));
  for (int d = 0; d < 3; ++d) field("dims[d]", ia.dims[d], ir.dims[d]);
  field("stream_bytes vs out_size", out_size, ir.stream_bytes);
  if (!diff.empty()) return ::testing::AssertionFailure() << "the result's header differs:" << diff;
  *out = std::move(res);
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult combine_ok(int op, const Bytes& a, const Bytes& b, Bytes* out, int threads = 1) {
  return result_ok("zcoll_combine(" + op_name(op) + ", threads=" + std::to_string(threads) + ")", a, out,
                   [&](unsigned char* dst, size_t cap, size_t* len) {
                     return zcoll_combine(static_cast<zcoll_op>(op), a.data(), a.size(), b.data(), b.size(), dst, cap,
                                          len, threads);
                   });
}

// zcoll_combine_values(op, x, b), checked as combine_ok checks zcoll_combine (like b).
template <class T>
::testing::AssertionResult fold_ok(int op, const std::vector<T>& x, const Bytes& b, Bytes* out, int threads = 1) {
  return result_ok("zcoll_combine_values(" + op_name(op) + ", threads=" + std::to_string(threads) + ")", b, out,
                   [&](unsigned char* dst, size_t cap, size_t* len) {
                     return zcoll_combine_values(static_cast<zcoll_op>(op), x.data(), x.size(), Dt<T>::value,
                                                 b.data(), b.size(), dst, cap, len, threads);
                   });
}

// ------------------------------------------------------------------ checks

template <class T> double ulp(T v) {
  const T m = std::fabs(v);
  if (!std::isfinite(m)) return 0;
  if (m == std::numeric_limits<T>::max()) return static_cast<double>(m) - static_cast<double>(std::nextafter(m, T(0)));
  return static_cast<double>(std::nextafter(m, std::numeric_limits<T>::infinity())) - static_cast<double>(m);
}

struct Report {
  size_t bad = 0;
  std::string msg;
  void add(size_t i, const std::string& what) {
    if (bad < 8) msg += "\n  [" + std::to_string(i) + "] " + what;
    ++bad;
  }
  ::testing::AssertionResult result(size_t n, const char* rule) const {
    if (bad == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << bad << " of " << n << " elements break: " << rule << msg;
  }
};

// MIN/MAX: exactly min(a', b') / max(a', b'): the value, and the bits of one operand
// (either one where they are zeros of opposite sign); NaN on either side gives NaN.
template <class T>
::testing::AssertionResult minmax_exact(int op, const std::vector<T>& a, const std::vector<T>& b,
                                        const std::vector<T>& r) {
  if (a.size() != r.size() || b.size() != r.size()) return ::testing::AssertionFailure() << "sizes differ";
  Report rep;
  for (size_t i = 0; i < r.size(); ++i) {
    const T x = a[i], y = b[i], z = r[i];
    bool ok;
    if (std::isnan(x) || std::isnan(y)) {
      ok = std::isnan(z);
    } else {
      const T e = op == ZCOLL_OP_MIN ? (y < x ? y : x) : (y > x ? y : x);
      ok = z == e && (bits_of(z) == bits_of(x) || bits_of(z) == bits_of(y));
    }
    if (!ok) rep.add(i, "a'=" + show(x) + " b'=" + show(y) + " result=" + show(z));
  }
  return rep.result(r.size(), op == ZCOLL_OP_MIN ? "result == min(a', b')" : "result == max(a', b')");
}

// MIN/MAX vs the original inputs (where all are finite): within eb_abs.
template <class T>
::testing::AssertionResult minmax_vs_inputs(int op, const std::vector<const std::vector<T>*>& xs,
                                            const std::vector<T>& r, double eb) {
  Report rep;
  for (size_t i = 0; i < r.size(); ++i) {
    bool fin = true;
    double m = op == ZCOLL_OP_MIN ? INFINITY : -INFINITY;
    for (const auto* x : xs) {
      const double v = static_cast<double>((*x)[i]);
      if (!std::isfinite(v)) fin = false;
      m = op == ZCOLL_OP_MIN ? std::min(m, v) : std::max(m, v);
    }
    if (!fin) continue;  // NaN/Inf are reproduced bit for bit: minmax_exact covers them
    const double err = std::fabs(static_cast<double>(r[i]) - m);
    if (!(err <= eb)) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "%s of inputs=%.17g result=%s |err|=%.3g eb=%.3g",
                    op == ZCOLL_OP_MIN ? "min" : "max", m, show(r[i]).c_str(), err, eb);
      rep.add(i, buf);
    }
  }
  return rep.result(r.size(), "|result - min/max of the inputs| <= eb_abs");
}

// SUM vs the decompressed operands (see the tolerance note at the top).
template <class T>
::testing::AssertionResult sum_vs_decoded(const std::vector<T>& a, const std::vector<T>& b, const std::vector<T>& r) {
  if (a.size() != r.size() || b.size() != r.size()) return ::testing::AssertionFailure() << "sizes differ";
  Report rep;
  double worst = 0;  // in units of ulp at max(|a'|, |b'|, |res|), for the message
  for (size_t i = 0; i < r.size(); ++i) {
    const T x = a[i], y = b[i], z = r[i];
    const double s = static_cast<double>(x) + static_cast<double>(y);
    const T ieee = static_cast<T>(s);  // IEEE a' + b' in T (for float: exact double sum, one rounding)
    bool ok;
    std::string why;
    if (std::isnan(x) || std::isnan(y) || std::isnan(ieee)) {
      ok = std::isnan(z);
      if (!ok) why = "expected NaN";
    } else if (std::isinf(ieee)) {
      ok = bits_of(z) == bits_of(ieee);
      if (!ok) why = "expected " + show(ieee);
    } else {
      // two-sum: s + e == x + y exactly (doubles)
      const double bb = s - static_cast<double>(x);
      const double e = (static_cast<double>(x) - (s - bb)) + (static_cast<double>(y) - bb);
      const double dev = std::fabs((static_cast<double>(z) - s) - e);
      const double mag = std::fabs(static_cast<double>(x)) + std::fabs(static_cast<double>(y)) +
                         std::fabs(static_cast<double>(z));
      const double tol = 0.5 * (ulp(x) + ulp(y) + ulp(z)) + 4 * DBL_EPSILON * mag;
      ok = std::isfinite(z) && dev <= tol;
      if (ok && z == 0 && ieee == 0) ok = std::signbit(z) == std::signbit(ieee);
      if (std::isfinite(z)) {
        const T big = std::max(std::max(std::fabs(x), std::fabs(y)), std::fabs(z));
        if (ulp(big) > 0) worst = std::max(worst, dev / ulp(big));
      }
      if (!ok) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "|res - (a'+b')|=%.3g tol=%.3g (ieee %s)", dev, tol, show(ieee).c_str());
        why = buf;
      }
    }
    if (!ok) rep.add(i, "a'=" + show(x) + " b'=" + show(y) + " result=" + show(z) + ": " + why);
  }
  auto res = rep.result(r.size(), "result == a' + b' rounded once to the element type");
  if (!res) res << "\n  (largest deviation seen: " << worst << " ulp at max(|a'|,|b'|,|res|))";
  return res;
}

// SUM of n streams vs the sum of the n original inputs, where all inputs are finite and
// their sum is finite in T: |res - sum x| <= n eb + (n + 1) u (sum|x| + n eb).
template <class T>
::testing::AssertionResult sum_vs_inputs(const std::vector<const std::vector<T>*>& xs, const std::vector<T>& r,
                                         double eb) {
  const double n = static_cast<double>(xs.size());
  const double u = std::numeric_limits<T>::epsilon() / 2;
  Report rep;
  for (size_t i = 0; i < r.size(); ++i) {
    long double s = 0, sabs = 0;
    bool fin = true;
    for (const auto* x : xs) {
      const T v = (*x)[i];
      if (!std::isfinite(v)) fin = false;
      s += static_cast<long double>(v);
      sabs += std::fabs(static_cast<long double>(v));
    }
    if (!fin || !std::isfinite(static_cast<T>(static_cast<double>(s)))) continue;
    const double allow = n * eb + (n + 1) * u * (static_cast<double>(sabs) + n * eb) +
                         (n + 1) * static_cast<double>(std::numeric_limits<T>::denorm_min());
    const long double dev = std::fabs(static_cast<long double>(r[i]) - s);
    if (!(std::isfinite(r[i]) && dev <= allow)) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "sum of %g inputs=%.17Lg result=%s |err|=%.4Lg allowed=%.4g (eb=%.3g)", n, s,
                    show(r[i]).c_str(), dev, allow, eb);
      rep.add(i, buf);
    }
  }
  return rep.result(r.size(), "|result - sum of inputs| <= n eb + (n+1) u (sum|x| + n eb)");
}

// Mean of (result - sum of the inputs) over the elements whose inputs are all finite.
template <class T> double mean_error(const std::vector<const std::vector<T>*>& xs, const std::vector<T>& r) {
  long double acc = 0;
  size_t cnt = 0;
  for (size_t i = 0; i < r.size(); ++i) {
    long double s = 0;
    bool fin = std::isfinite(r[i]);
    for (const auto* x : xs) {
      fin = fin && std::isfinite((*x)[i]);
      s += static_cast<long double>((*x)[i]);
    }
    if (!fin) continue;
    acc += static_cast<long double>(r[i]) - s;
    ++cnt;
  }
  return cnt ? static_cast<double>(acc / cnt) : 0.0;
}

// All value checks of one combination of two streams, given what a, b and the
// result decompress to and the original inputs behind a and b.
template <class T>
void check_pair(int op, const std::vector<T>& ad, const std::vector<T>& bd, const std::vector<T>& rd,
                const std::vector<T>& xa, const std::vector<T>& xb, double eb) {
  if (op == ZCOLL_OP_SUM) {
    EXPECT_TRUE(sum_vs_decoded(ad, bd, rd));
    EXPECT_TRUE(sum_vs_inputs<T>({&xa, &xb}, rd, eb));
  } else {
    EXPECT_TRUE(minmax_exact(op, ad, bd, rd));
    EXPECT_TRUE(minmax_vs_inputs<T>(op, {&xa, &xb}, rd, eb));
  }
}

// ------------------------------------------------------------ special values

template <class T> struct SpecialPair {
  bool keep_a;  // keep the field value
  T a;
  bool keep_b;
  T b;
  std::string what;
};

template <class T> std::vector<SpecialPair<T>> special_pairs(bool with_nan) {
  using L = std::numeric_limits<T>;
  const T inf = L::infinity(), H = static_cast<T>(1e30), M = L::max(), z = T(0), nz = -T(0);
  const auto nans = nan_patterns<T>();
  std::vector<SpecialPair<T>> v = {
      {false, inf, true, 0, "inf+x"},       {true, 0, false, -inf, "x+-inf"},      {false, inf, false, inf, "inf+inf"},
      {false, -inf, false, -inf, "-inf+-inf"}, {false, nz, true, 0, "-0+x"},       {true, 0, false, nz, "x+-0"},
      {false, nz, false, nz, "-0+-0"},       {false, z, false, nz, "0+-0"},         {false, nz, false, z, "-0+0"},
      {false, H, true, 0, "H+x"},           {true, 0, false, -H, "x+-H"},          {false, H, false, H, "H+H"},
      {false, H, false, -H, "H+-H"},        {false, -H, false, -H, "-H+-H"},       {false, H, false, T(2.5e30), "H+2.5H"},
      {false, M, false, M, "max+max"},      {false, -M, false, -M, "lowest+lowest"}, {false, M, true, 0, "max+x"},
      {false, M, false, -M, "max+lowest"},  {false, H, false, inf, "H+inf"},       {false, -H, false, inf, "-H+inf"},
      {false, H, false, -inf, "H+-inf"},    {false, L::denorm_min(), true, 0, "denorm+x"},
      {false, -L::denorm_min(), false, L::denorm_min(), "-denorm+denorm"},
  };
  if (with_nan) {
    v.push_back({false, nans[0], true, 0, "nan+x"});
    v.push_back({true, 0, false, nans[1], "x+nan"});
    v.push_back({false, nans[2], false, nans[5], "nan+nan"});
    v.push_back({false, nans[4], false, inf, "nan+inf"});
    v.push_back({false, -inf, false, nans[3], "-inf+nan"});
    v.push_back({false, H, false, nans[6], "H+nan"});
    v.push_back({false, inf, false, -inf, "inf+-inf"});
    v.push_back({false, -inf, false, inf, "-inf+inf"});
  }
  return v;
}

// Injects the special pairs into copies of a and b; marks[i] = pair index or -1.
template <class T>
void inject(const std::vector<SpecialPair<T>>& sp, std::vector<T>* a, std::vector<T>* b, std::vector<int>* marks,
            size_t shift = 0) {
  const size_t n = a->size();
  marks->assign(n, -1);
  for (size_t j = 0; j < sp.size(); ++j) {
    for (size_t r = 0; r < 4; ++r) {
      const size_t p = 11 + shift + 53 * j + 1031 * r;
      if (p >= n) continue;
      if (!sp[j].keep_a) (*a)[p] = sp[j].a;
      if (!sp[j].keep_b) (*b)[p] = sp[j].b;
      (*marks)[p] = static_cast<int>(j);
    }
  }
  // and at the very first and last element
  (*a)[0] = std::numeric_limits<T>::quiet_NaN();
  (*b)[n - 1] = -std::numeric_limits<T>::infinity();
}

// Finite values too large to quantize at eb 0.01 (|x| >= 2^25 > 2^30 x 2 eb), random
// sign, exponent and mantissa: every value is stored exactly, so chunks of them do not
// compress and are stored raw.
template <class T> std::vector<T> incompressible(size_t n, uint64_t seed) {
  using B = typename Dt<T>::Bits;
  constexpr int kMant = std::numeric_limits<T>::digits - 1;
  constexpr B kBias = sizeof(T) == 4 ? 127 : 1023, kEmax = 2 * kBias;  // largest finite exponent field
  std::mt19937_64 g(seed);
  std::vector<T> v(n);
  for (auto& x : v) {
    const B m = static_cast<B>(g()) & ((B(1) << kMant) - 1);
    const B e = kBias + 25 + static_cast<B>(g() % (kEmax - kBias - 25 + 1));
    const B s = static_cast<B>(g() & 1);
    x = from_bits<T>(static_cast<B>((s << (8 * sizeof(T) - 1)) | (e << kMant) | m));
  }
  return v;
}

// RAII for an environment variable.
struct EnvRestore {
  std::string name;
  bool had = false;
  std::string old;
  explicit EnvRestore(const char* n) : name(n) {
    const char* v = std::getenv(n);
    had = v != nullptr;
    if (had) old = v;
  }
  ~EnvRestore() {
    if (had) setenv(name.c_str(), old.c_str(), 1);
    else unsetenv(name.c_str());
  }
};

// run(threads, &out), a combine_ok-style check, gives exactly ref for each thread count
// in `threads`, and with the generic kernels (ZCOLL_ISA=generic) for 1 and 3 threads.
template <class Run>
void expect_deterministic(const Bytes& ref, std::initializer_list<int> threads, Run&& run) {
  for (int t : threads) {
    Bytes r;
    ASSERT_TRUE(run(t, &r));
    EXPECT_TRUE(r == ref) << "output differs with threads=" << t << " (" << r.size() << " vs " << ref.size()
                          << " bytes)";
  }
  EnvRestore env("ZCOLL_ISA");
  setenv("ZCOLL_ISA", "generic", 1);
  Bytes g1, g3;
  const bool ok1 = run(1, &g1), ok3 = run(3, &g3);
  unsetenv("ZCOLL_ISA");
  ASSERT_TRUE(ok1 && ok3) << "failed with ZCOLL_ISA=generic";
  EXPECT_TRUE(g1 == ref) << "output differs with ZCOLL_ISA=generic";
  EXPECT_TRUE(g3 == ref) << "output differs with ZCOLL_ISA=generic, threads=3";
}

}  // namespace

// ============================================================== MIN / MAX

TYPED_TEST(Combine, MinMaxPairsAndFolds) {
  using T = TypeParam;
  for (size_t n : {size_t(7199), size_t(20013), size_t(49252)}) {
    std::vector<std::vector<T>> xs;
    for (size_t k = 0; k < 5; ++k) xs.push_back(slice<T>(k, 31337 * k + 3 * n, n));
    for (size_t cl : {size_t(32), size_t(1024), size_t(0)}) {
      for (const Bound& bd : kBounds) {
        SCOPED_TRACE("n=" + std::to_string(n) + " chunk_len=" + std::to_string(cl) + " " + bound_str(bd));
        double eb = 0;
        auto s = encode_all(xs, bd, cl, &eb);
        ASSERT_FALSE(::testing::Test::HasFailure());
        std::vector<std::vector<T>> d;
        for (auto& st : s) d.push_back(dec<T>(st, n));
        for (int op : kMinMax) {
          SCOPED_TRACE(op_name(op));
          Bytes r;
          ASSERT_TRUE(combine_ok(op, s[0], s[1], &r, cl == 1024 ? 2 : 1));
          std::vector<T> rd = dec<T>(r, n);
          check_pair(op, d[0], d[1], rd, xs[0], xs[1], eb);
          // fold three more streams: the error does not grow
          for (size_t k = 2; k < s.size(); ++k) {
            Bytes r2;
            ASSERT_TRUE(combine_ok(op, r, s[k], &r2)) << "fold step " << k;
            std::vector<T> rd2 = dec<T>(r2, n);
            EXPECT_TRUE(minmax_exact(op, rd, d[k], rd2)) << "fold step " << k;
            r = std::move(r2);
            rd = std::move(rd2);
          }
          EXPECT_TRUE(minmax_vs_inputs<T>(op, {&xs[0], &xs[1], &xs[2], &xs[3], &xs[4]}, rd, eb));
        }
      }
    }
  }
}

// =================================================================== SUM

TYPED_TEST(Combine, SumPairsFoldsAndBias) {
  using T = TypeParam;
  const size_t n = 60013;
  std::vector<std::vector<T>> xs;
  for (size_t k = 0; k < 8; ++k) xs.push_back(slice<T>(k, 50021 * k + 777, n));
  for (size_t cl : {size_t(1024), size_t(0)}) {
    for (const Bound& bd : kBounds) {
      SCOPED_TRACE("chunk_len=" + std::to_string(cl) + " " + bound_str(bd));
      double eb = 0;
      auto s = encode_all(xs, bd, cl, &eb);
      ASSERT_FALSE(::testing::Test::HasFailure());
      std::vector<std::vector<T>> d;
      for (auto& st : s) d.push_back(dec<T>(st, n));
      Bytes r = s[0];
      std::vector<T> rd = d[0];
      std::vector<const std::vector<T>*> used = {&xs[0]};
      for (size_t k = 1; k < s.size(); ++k) {
        SCOPED_TRACE("n streams=" + std::to_string(k + 1));
        Bytes r2;
        ASSERT_TRUE(combine_ok(ZCOLL_OP_SUM, r, s[k], &r2, static_cast<int>(k % 3)));
        std::vector<T> rd2 = dec<T>(r2, n);
        EXPECT_TRUE(sum_vs_decoded(rd, d[k], rd2));
        used.push_back(&xs[k]);
        EXPECT_TRUE(sum_vs_inputs(used, rd2, eb));
        const double mean = mean_error(used, rd2), lim = 0.05 * eb * std::sqrt(double(k + 1));
        EXPECT_LE(std::fabs(mean), lim) << "biased sum: mean error " << mean << " over " << n << " elements";
        r = std::move(r2);
        rd = std::move(rd2);
      }
    }
  }
}

// Values whose integers are large enough that q_a + q_b leaves the integer range
// (|q| <= 2^30 - 1): the sum must fall back to a stored value, not wrap.
TYPED_TEST(Combine, SumOverflowFallsBackToExact) {
  using T = TypeParam;
  const size_t n = 10007;
  const double eb = 0.3, twoeb = 2 * eb, lim = 1073741823.0;
  // Real-field shapes mapped to |x / 2eb| in [lo, hi] x 2^30, same sign in a, b and c
  // element by element (sign flips every 50 elements); every 7th b small (no overflow).
  auto mapped = [&](size_t k, size_t at, double lo, double hi) {
    std::vector<T> f = slice<T>(k, at, n);
    double mn, mx;
    finite_range(f.data(), n, &mn, &mx);
    std::vector<T> v(n);
    for (size_t i = 0; i < n; ++i) {
      const double t = (static_cast<double>(f[i]) - mn) / (mx - mn);
      const double sgn = (i / 50) % 2 ? -1.0 : 1.0;
      v[i] = static_cast<T>(sgn * twoeb * 1073741824.0 * (lo + (hi - lo) * t));
    }
    return v;
  };
  std::vector<T> xa = mapped(0, 1000, 0.70, 0.99), xb = mapped(1, 5000, 0.70, 0.99), xc = mapped(2, 9000, 0.5, 0.99);
  for (size_t i = 0; i < n; i += 7) xb[i] = static_cast<T>(static_cast<double>(xb[i]) * 0.2);
  if (std::is_same<T, double>::value) {
    // integers right at the limit: q_a + q_b = 2^30 - 1 + d, d = -2..2 (eb 0.3: q = x / 0.6)
    for (int d = -2; d <= 2; ++d) {
      const size_t i = 4000 + static_cast<size_t>(d + 2);
      const double qa = 536870912.0, qb = lim - qa + d;
      xa[i] = static_cast<T>(qa * twoeb);
      xb[i] = static_cast<T>(qb * twoeb);
    }
  }
  for (size_t cl : {size_t(32), size_t(1024)}) {
    SCOPED_TRACE("chunk_len=" + std::to_string(cl));
    double e = 0;
    auto s = encode_all<T>({xa, xb, xc}, Bound{ZCOLL_EB_ABS, eb}, cl, &e);
    ASSERT_FALSE(::testing::Test::HasFailure());
    auto ad = dec<T>(s[0], n), bd = dec<T>(s[1], n), cd = dec<T>(s[2], n);
    ASSERT_TRUE(within_bound(xa.data(), ad.data(), n, eb));
    // the premise: most elements' integers overflow when added
    size_t over = 0;
    for (size_t i = 0; i < n; ++i)
      if (std::fabs(std::nearbyint(static_cast<double>(ad[i]) / twoeb) + std::nearbyint(static_cast<double>(bd[i]) / twoeb)) > lim)
        ++over;
    EXPECT_GT(over, n / 2) << "test premise: q_a + q_b should exceed 2^30 - 1 for most elements";
    Bytes r;
    ASSERT_TRUE(combine_ok(ZCOLL_OP_SUM, s[0], s[1], &r));
    auto rd = dec<T>(r, n);
    EXPECT_TRUE(sum_vs_decoded(ad, bd, rd));
    EXPECT_TRUE(sum_vs_inputs<T>({&xa, &xb}, rd, eb));
    // and once more with a third large stream
    Bytes r3;
    ASSERT_TRUE(combine_ok(ZCOLL_OP_SUM, r, s[2], &r3, 2));
    auto rd3 = dec<T>(r3, n);
    EXPECT_TRUE(sum_vs_decoded(rd, cd, rd3));
    EXPECT_TRUE(sum_vs_inputs<T>({&xa, &xb, &xc}, rd3, eb));
    // the other order, and the third stream first
    Bytes r3b, rcb;
    ASSERT_TRUE(combine_ok(ZCOLL_OP_SUM, s[2], s[1], &rcb));
    ASSERT_TRUE(combine_ok(ZCOLL_OP_SUM, rcb, s[0], &r3b));
    auto rd3b = dec<T>(r3b, n);
    EXPECT_TRUE(sum_vs_inputs<T>({&xa, &xb, &xc}, rd3b, eb));
    // MIN/MAX of the same streams (no overflow possible, still exact)
    for (int op : kMinMax) {
      Bytes m;
      ASSERT_TRUE(combine_ok(op, s[0], s[1], &m));
      check_pair(op, ad, bd, dec<T>(m, n), xa, xb, eb);
    }
  }
}

// ========================================================== special values

TYPED_TEST(Combine, SpecialValues) {
  using T = TypeParam;
  const size_t n = 4099;
  const auto sp = special_pairs<T>(true);
  const std::vector<T> fa = slice<T>(0, 20000, n), fb = slice<T>(1, 70000, n), fc = slice<T>(2, 123456, n);
  for (const Bound& bd : kBounds) {
    // REL is resolved on the field alone (before the huge values go in), then used as ABS.
    const double eb = resolve(fa, bd);
    for (size_t cl : {size_t(64), size_t(0)}) {
      SCOPED_TRACE("chunk_len=" + std::to_string(cl) + " " + bound_str(bd) + " eb_abs=" + std::to_string(eb));
      std::vector<T> xa = fa, xb = fb, xc = fc, dummy = fc;
      std::vector<int> marks, marks_c;
      inject(sp, &xa, &xb, &marks);
      inject(sp, &xc, &dummy, &marks_c, 5);  // c: the a-side specials, elsewhere
      std::vector<Bytes> s = {encode(xa, ZCOLL_EB_ABS, eb, cl), encode(xb, ZCOLL_EB_ABS, eb, cl),
                              encode(xc, ZCOLL_EB_ABS, eb, cl)};
      ASSERT_FALSE(::testing::Test::HasFailure());
      auto ad = dec<T>(s[0], n), bd2 = dec<T>(s[1], n), cd = dec<T>(s[2], n);
      // 1e30 with this eb is stored exactly
      for (size_t i = 0; i < n; ++i) {
        if (marks[i] >= 0 && !sp[marks[i]].keep_a && std::fabs(sp[marks[i]].a) >= T(1e30)) {
          ASSERT_EQ(bits_of(ad[i]), bits_of(xa[i])) << "premise: huge value stored exactly at " << i;
        }
      }
      for (int op : kOps) {
        SCOPED_TRACE(op_name(op));
        Bytes r;
        ASSERT_TRUE(combine_ok(op, s[0], s[1], &r));
        auto rd = dec<T>(r, n);
        check_pair(op, ad, bd2, rd, xa, xb, eb);
        // spelled out for a few cases
        for (size_t i = 0; i < n; ++i) {
          if (marks[i] < 0) continue;
          const std::string& w = sp[marks[i]].what;
          SCOPED_TRACE(w + " at " + std::to_string(i));
          if (w.find("nan") != std::string::npos) { EXPECT_TRUE(std::isnan(rd[i])) << show(rd[i]); }
          if (w == "nan+nan") {
            // a's NaN whatever order the compiler gave the add (exact_sum): quieted by a
            // SUM, passed on as it is by MIN and MAX
            using B = typename Dt<T>::Bits;
            const B quiet = B(1) << (std::numeric_limits<T>::digits - 2);
            EXPECT_EQ(bits_of(rd[i]), op == ZCOLL_OP_SUM ? B(bits_of(xa[i]) | quiet) : bits_of(xa[i])) << show(rd[i]);
          }
          if (op != ZCOLL_OP_SUM) continue;
          if (w == "inf+-inf" || w == "-inf+inf") { EXPECT_TRUE(std::isnan(rd[i])) << show(rd[i]); }
          if (w == "inf+x" || w == "inf+inf" || w == "H+inf" || w == "-H+inf" || w == "max+max") {
            EXPECT_EQ(rd[i], std::numeric_limits<T>::infinity()) << show(rd[i]);
          }
          if (w == "x+-inf" || w == "-inf+-inf" || w == "H+-inf" || w == "lowest+lowest") {
            EXPECT_EQ(rd[i], -std::numeric_limits<T>::infinity()) << show(rd[i]);
          }
          if (w == "H+H") { EXPECT_EQ(rd[i], static_cast<T>(2 * static_cast<double>(T(1e30)))) << show(rd[i]); }
          if (w == "H+-H" || w == "max+lowest") { EXPECT_EQ(bits_of(rd[i]), bits_of(T(0))) << show(rd[i]); }
        }
        if (op == ZCOLL_OP_SUM) {
          // fold a third stream with specials into the sum
          Bytes r3;
          ASSERT_TRUE(combine_ok(op, r, s[2], &r3));
          auto rd3 = dec<T>(r3, n);
          EXPECT_TRUE(sum_vs_decoded(rd, cd, rd3));
          EXPECT_TRUE(sum_vs_inputs<T>({&xa, &xb, &xc}, rd3, eb));
        } else {
          Bytes r3;
          ASSERT_TRUE(combine_ok(op, s[2], r, &r3));
          EXPECT_TRUE(minmax_exact(op, cd, rd, dec<T>(r3, n)));
        }
      }
    }
  }
}

// ============================================================= raw chunks

TYPED_TEST(Combine, RawChunks) {
  using T = TypeParam;
  const size_t cl = 256, n = 9 * cl + 77;
  const double eb = 0.01;
  // a: chunks 0, 3, 6, 9 random incompressible values (stored raw), the rest a field.
  // b: chunks 0, 1, 4, 7 incompressible: raw with raw, raw with encoded, encoded with raw.
  std::vector<T> xa = slice<T>(0, 4242, n), xb = slice<T>(2, 77777, n);
  const std::vector<T> ra = incompressible<T>(n, 101), rb = incompressible<T>(n, 202);
  auto raw_chunk = [&](size_t k, std::initializer_list<size_t> ks) {
    for (size_t x : ks)
      if (x == k) return true;
    return false;
  };
  for (size_t i = 0; i < n; ++i) {
    if (raw_chunk(i / cl, {0, 3, 6, 9})) xa[i] = ra[i];
    if (raw_chunk(i / cl, {0, 1, 4, 7})) xb[i] = rb[i];
  }
  // signed zeros and non-finite values inside the raw chunks (stored as they are there)
  xa[5] = -T(0); xb[5] = -T(0);   // raw + raw: -0 + -0 = -0
  xa[6] = -T(0); xb[6] = T(0);
  xa[300] = -T(0);                // chunk 1 of a is encoded, of b raw
  xb[301] = -T(0);
  xa[7] = std::numeric_limits<T>::quiet_NaN();
  xb[8] = std::numeric_limits<T>::infinity();
  xa[9] = -std::numeric_limits<T>::infinity(); xb[9] = std::numeric_limits<T>::infinity();
  {  // premise: such a chunk alone compresses to header + one index entry + raw values
    std::vector<T> one(ra.begin(), ra.begin() + static_cast<std::ptrdiff_t>(cl));
    Bytes s1 = encode(one, ZCOLL_EB_ABS, eb, cl);
    ASSERT_EQ(s1.size(), kHeader + kEntry + cl * sizeof(T)) << "premise: the chunk is stored raw";
  }
  auto sa = encode(xa, ZCOLL_EB_ABS, eb, cl), sb = encode(xb, ZCOLL_EB_ABS, eb, cl);
  ASSERT_FALSE(::testing::Test::HasFailure());
  EXPECT_GE(sa.size(), (3 * cl + 77) * sizeof(T)) << "premise: four raw chunks in a";
  auto ad = dec<T>(sa, n), bd = dec<T>(sb, n);
  ASSERT_EQ(bits_of(ad[5]), bits_of(-T(0))) << "premise: -0.0 kept in a raw chunk";
  for (int op : kOps) {
    SCOPED_TRACE(op_name(op));
    for (int order = 0; order < 2; ++order) {
      Bytes r;
      ASSERT_TRUE(combine_ok(op, order ? sb : sa, order ? sa : sb, &r, order + 1));
      auto rd = dec<T>(r, n);
      if (order) check_pair(op, bd, ad, rd, xb, xa, eb);
      else check_pair(op, ad, bd, rd, xa, xb, eb);
      if (op == ZCOLL_OP_SUM) {
        EXPECT_EQ(bits_of(rd[5]), bits_of(-T(0))) << "-0 + -0 (both stored exactly) is -0: " << show(rd[5]);
        EXPECT_EQ(bits_of(rd[6]), bits_of(T(0))) << "-0 + 0 is +0: " << show(rd[6]);
        EXPECT_TRUE(std::isnan(rd[9])) << "-inf + inf: " << show(rd[9]);
      }
      // and the result combines again with a normal stream
      Bytes r2;
      ASSERT_TRUE(combine_ok(op, r, sb, &r2));
      auto rd2 = dec<T>(r2, n);
      if (op == ZCOLL_OP_SUM) { EXPECT_TRUE(sum_vs_decoded(rd, bd, rd2)); }
      else EXPECT_TRUE(minmax_exact(op, rd, bd, rd2));
    }
  }
}

// ============================================================= shape hint

TYPED_TEST(Combine, ShapeHint) {
  using T = TypeParam;
  struct Case {
    size_t ka, at_a, kb, at_b;
    Shape sh;
    std::vector<size_t> chunk_lens;
  };
  const std::vector<Case> cases = {
      {0, 0, 0, 5 * 192 * 288, shape(40, 288), {32, 1024, 0}},               // cesm rows, days apart
      {1, 0, 1, 9 * 96 * 192, shape(3, 96, 192), {4096, 0}},                 // echam levels
      {2, 91 * 91 * 10, 0, 333333, shape(37, 41), {32, 256}},                // odd 2-D, two fields
      {2, 91 * 91 * 40, 1, 100000, shape(5, 13, 31), {64, 0}},               // odd 3-D
  };
  for (const Case& c : cases) {
    size_t n = 1;
    for (int d = 0; d < c.sh.ndims; ++d) n *= c.sh.dims[d];
    const std::vector<T> xa = slice<T>(c.ka, c.at_a, n), xb = slice<T>(c.kb, c.at_b, n);
    for (size_t cl : c.chunk_lens) {
      for (const Bound& bd : kBounds) {
        SCOPED_TRACE("ndims=" + std::to_string(c.sh.ndims) + " n=" + std::to_string(n) + " chunk_len=" +
                     std::to_string(cl) + " " + bound_str(bd));
        double eb = 0;
        auto s = encode_all<T>({xa, xb}, bd, cl, &eb, c.sh);
        ASSERT_FALSE(::testing::Test::HasFailure());
        ASSERT_EQ(info_of(s[0]).ndims, c.sh.ndims);
        auto ad = dec<T>(s[0], n), bd2 = dec<T>(s[1], n);
        for (int op : kOps) {
          SCOPED_TRACE(op_name(op));
          Bytes r;
          ASSERT_TRUE(combine_ok(op, s[0], s[1], &r, 2));  // also checks ndims and dims
          check_pair(op, ad, bd2, dec<T>(r, n), xa, xb, eb);
        }
        // the same count without the shape hint does not combine with it
        Bytes flat = encode(xb, ZCOLL_EB_ABS, eb, cl);
        EXPECT_EQ(combine_rc(ZCOLL_OP_SUM, s[0], flat), ZCOLL_ERR_MISMATCH);
        EXPECT_EQ(combine_rc(ZCOLL_OP_MIN, flat, s[0]), ZCOLL_ERR_MISMATCH);
      }
    }
  }
}

// ============================================================ determinism

TYPED_TEST(Combine, Deterministic) {
  using T = TypeParam;
  EnvRestore env("ZCOLL_ISA");
  unsetenv("ZCOLL_ISA");
  const size_t n = 100003;
  const std::vector<T> xa = slice<T>(0, 11, n), xb = slice<T>(2, 222222, n);
  // NaN-free specials too: stored values, infinities of one sign, -0
  std::vector<T> ya = slice<T>(1, 0, n), yb = slice<T>(0, 300000, n);
  {
    std::vector<int> marks;
    inject(special_pairs<T>(false), &ya, &yb, &marks);
    ya[0] = T(1e30);  // inject() puts a NaN at a[0] and -inf at b[n-1]
    yb[n - 1] = -T(1e30);
  }
  for (size_t cl : {size_t(1024), size_t(0)}) {
    for (const Bound& bd : kBounds) {
      for (int data = 0; data < 3; ++data) {
        SCOPED_TRACE("chunk_len=" + std::to_string(cl) + " " + bound_str(bd) +
                     (data == 0 ? " fields" : data == 1 ? " with specials" : " with specials and raw chunks"));
        const double eb = resolve(xa, bd);
        std::vector<T> a = data ? ya : xa, b = data ? yb : xb;
        Bytes sa, sb;
        if (data == 2) {
          // Every third chunk of a and of b (not the same ones) incompressible, so raw;
          // in them values equal to the other side's integer values (-0 vs 0, and b's
          // reconstruction itself): MIN/MAX ties between a stored value and an integer.
          const size_t ce = cl ? cl : ZCOLL_DEFAULT_CHUNK_LEN;
          const auto na = incompressible<T>(n, 7), nb = incompressible<T>(n, 8);
          for (size_t i = 0; i < n; ++i) {
            const size_t c = (i / ce) % 3;
            if (c == 1) a[i] = i % 97 == 1 ? -T(0) : na[i];
            if (c == 2) b[i] = i % 97 == 1 ? -T(0) : nb[i];
            if (c == 1 && i % 97 == 1) b[i] = T(0);
            if (c == 2 && i % 97 == 1) a[i] = T(0);
          }
          sb = encode(b, ZCOLL_EB_ABS, eb, cl);
          const std::vector<T> bd2 = dec<T>(sb, n);
          for (size_t i = 0; i < n; ++i)
            if ((i / ce) % 3 == 1 && i % 97 == 0) a[i] = bd2[i];
          sa = encode(a, ZCOLL_EB_ABS, eb, cl);
          const std::vector<T> ad2 = dec<T>(sa, n);
          const size_t first_neg0 = ce + (1 + 97 - ce % 97) % 97;  // in chunk 1, i % 97 == 1
          ASSERT_EQ(bits_of(ad2[first_neg0]), bits_of(-T(0))) << "premise: chunk 1 of a is stored raw";
        } else {
          sa = encode(a, ZCOLL_EB_ABS, eb, cl);
          sb = encode(b, ZCOLL_EB_ABS, eb, cl);
        }
        ASSERT_FALSE(::testing::Test::HasFailure());
        for (int op : kOps) {
          SCOPED_TRACE(op_name(op));
          Bytes ref;
          ASSERT_TRUE(combine_ok(op, sa, sb, &ref, 1));
          Bytes ba;
          ASSERT_TRUE(combine_ok(op, sb, sa, &ba, 2));
          EXPECT_TRUE(ba == ref) << "combine(b, a) differs from combine(a, b) (" << ba.size() << " vs "
                                 << ref.size() << " bytes)";
          expect_deterministic(ref, {2, 4, 0}, [&](int t, Bytes* r) { return combine_ok(op, sa, sb, r, t); });
        }
      }
    }
  }
}

// ====================================================== the result stream

TYPED_TEST(Combine, SameStreamAsBothInputs) {
  using T = TypeParam;
  const size_t n = 30011;
  const std::vector<T> x = slice<T>(2, 5555, n);
  Bytes s = encode(x, ZCOLL_EB_REL, 1e-4, 1024);
  ASSERT_FALSE(::testing::Test::HasFailure());
  const double eb = info_of(s).eb_abs;
  auto d = dec<T>(s, n);
  for (int op : kOps) {
    SCOPED_TRACE(op_name(op));
    Bytes r;
    ASSERT_TRUE(combine_ok(op, s, s, &r));  // a and b may be the same buffer
    auto rd = dec<T>(r, n);
    check_pair(op, d, d, rd, x, x, eb);
    if (op != ZCOLL_OP_SUM) { EXPECT_TRUE(same_bits(rd, d)) << "min/max(a', a') must be a'"; }
  }
}

TYPED_TEST(Combine, CountZero) {
  using T = TypeParam;
  const std::vector<T> empty;
  for (const Bound& bd : kBounds) {
    SCOPED_TRACE(bound_str(bd));
    Bytes a = encode(empty, bd.mode, bd.eb, 0), b = encode(empty, bd.mode, bd.eb, 0);
    ASSERT_FALSE(::testing::Test::HasFailure());
    for (int op : kOps) {
      Bytes r;
      ASSERT_TRUE(combine_ok(op, a, b, &r)) << op_name(op);
      const zcoll_stream_info info = info_of(r);
      EXPECT_EQ(info.count, 0u);
      EXPECT_EQ(info.nchunks, 0u);
      EXPECT_EQ(info.stream_bytes, r.size());
      EXPECT_EQ(zcoll_decompress(r.data(), r.size(), Dt<T>::value, nullptr, 0, 1), ZCOLL_SUCCESS);
      Bytes r2;
      EXPECT_TRUE(combine_ok(op, r, a, &r2)) << "a count-0 result combines again";
    }
    // count 0 vs count 1
    const std::vector<T> one = {T(1.5)};
    Bytes c1 = encode(one, ZCOLL_EB_ABS, info_of(a).eb_abs, 0);
    EXPECT_EQ(combine_rc(ZCOLL_OP_SUM, a, c1), ZCOLL_ERR_MISMATCH);
    EXPECT_EQ(combine_rc(ZCOLL_OP_MAX, c1, a), ZCOLL_ERR_MISMATCH);
  }
}

// Native float64 (and the extra float32) fields of ../shared/datasets, when present.
TYPED_TEST(Combine, SharedFields) {
  using T = TypeParam;
  const auto& src = sources<T>();
  if (src.size() <= 3) GTEST_SKIP() << "../shared/datasets not available";
  for (size_t k = 3; k < src.size(); ++k) {
    const std::vector<T>& v = *src[k].second;
    const size_t n = std::min<size_t>(v.size() / 2, 100000) - 13;
    const std::vector<T> xa(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n));
    const std::vector<T> xb(v.end() - static_cast<std::ptrdiff_t>(n), v.end());
    SCOPED_TRACE(src[k].first + " n=" + std::to_string(n));
    double eb = 0;
    auto s = encode_all<T>({xa, xb}, Bound{ZCOLL_EB_REL, 1e-4}, 0, &eb);
    ASSERT_FALSE(::testing::Test::HasFailure());
    auto ad = dec<T>(s[0], n), bd = dec<T>(s[1], n);
    for (int op : kOps) {
      SCOPED_TRACE(op_name(op));
      Bytes r;
      ASSERT_TRUE(combine_ok(op, s[0], s[1], &r, 0));
      check_pair(op, ad, bd, dec<T>(r, n), xa, xb, eb);
    }
  }
}

// ================================================================= errors

TYPED_TEST(CombineErrors, Mismatch) {
  using T = TypeParam;
  using Other = typename std::conditional<std::is_same<T, float>::value, double, float>::type;
  const size_t n = 5000;
  const double eb = 0.01;
  const std::vector<T> x = slice<T>(0, 100, n), y = slice<T>(1, 100, n);
  const std::vector<T> y1 = slice<T>(1, 100, n + 1);
  const std::vector<Other> yo = slice<Other>(1, 100, n);
  const Bytes base = encode(x, ZCOLL_EB_ABS, eb, 1024);
  struct Variant {
    std::string what;
    Bytes s;
  };
  const std::vector<Variant> vs = {
      {"other dtype", encode(yo, ZCOLL_EB_ABS, eb, 1024)},
      {"count + 1", encode(y1, ZCOLL_EB_ABS, eb, 1024)},
      {"eb next double up", encode(y, ZCOLL_EB_ABS, std::nextafter(eb, 1.0), 1024)},
      {"eb x 2", encode(y, ZCOLL_EB_ABS, 2 * eb, 1024)},
      {"eb from REL", encode(y, ZCOLL_EB_REL, 1e-4, 1024)},
      {"chunk_len 2048", encode(y, ZCOLL_EB_ABS, eb, 2048)},
      {"chunk_len default", encode(y, ZCOLL_EB_ABS, eb, 0)},
      {"2-D 50x100", encode(y, ZCOLL_EB_ABS, eb, 1024, shape(50, 100))},
      {"3-D 2x50x50", encode(y, ZCOLL_EB_ABS, eb, 1024, shape(2, 50, 50))},
  };
  ASSERT_FALSE(::testing::Test::HasFailure());
  // sanity: every variant is valid (combines with itself)
  for (const auto& v : vs) {
    Bytes r;
    EXPECT_TRUE(combine_ok(ZCOLL_OP_SUM, v.s, v.s, &r)) << v.what;
  }
  for (int op : kOps) {
    for (const auto& v : vs) {
      SCOPED_TRACE(op_name(op) + ", " + v.what);
      EXPECT_EQ(combine_rc(op, base, v.s), ZCOLL_ERR_MISMATCH);
      EXPECT_EQ(combine_rc(op, v.s, base, 2), ZCOLL_ERR_MISMATCH);
    }
    // shapes that differ from each other but not in count
    const Bytes s2 = encode(y, ZCOLL_EB_ABS, eb, 1024, shape(50, 100));
    const Bytes s2t = encode(x, ZCOLL_EB_ABS, eb, 1024, shape(100, 50));
    const Bytes s3 = encode(x, ZCOLL_EB_ABS, eb, 1024, shape(2, 50, 50));
    const Bytes s3b = encode(x, ZCOLL_EB_ABS, eb, 1024, shape(5, 20, 50));
    EXPECT_EQ(combine_rc(op, s2, s2t), ZCOLL_ERR_MISMATCH) << "2-D dims 50x100 vs 100x50";
    EXPECT_EQ(combine_rc(op, s2, s3), ZCOLL_ERR_MISMATCH) << "2-D vs 3-D";
    EXPECT_EQ(combine_rc(op, s3, s3b), ZCOLL_ERR_MISMATCH) << "3-D dims 2x50x50 vs 5x20x50";
    const Bytes s3c = encode(x, ZCOLL_EB_ABS, eb, 1024, shape(2, 25, 100));
    EXPECT_EQ(combine_rc(op, s3, s3c), ZCOLL_ERR_MISMATCH) << "3-D dims 2x50x50 vs 2x25x100";
  }
}

namespace {

// A small stream with every kind of content: encoded blocks, exact values (NaN, 1e30),
// several chunks, the last one short.
template <class T> Bytes small_stream(size_t k, size_t n, size_t cl) {
  std::vector<T> x = slice<T>(k, 1234 * (k + 1), n);
  x[5] = std::numeric_limits<T>::quiet_NaN();
  x[n / 3] = T(1e30);
  x[n / 2] = -std::numeric_limits<T>::infinity();
  return encode(x, ZCOLL_EB_ABS, 0.01, cl);
}

// Both argument orders: ZCOLL_ERR_CORRUPT (or ZCOLL_ERR_VERSION where the version byte
// was hit), and nothing written outside out.
::testing::AssertionResult rejected(const Bytes& bad, const Bytes& good, int op, bool version_ok,
                                    const std::string& what, int threads = 1) {
  for (int order = 0; order < 2; ++order) {
    const Bytes& a = order ? good : bad;
    const Bytes& b = order ? bad : good;
    const size_t cap = zcoll_codec_bound(info_of(good).count, info_of(good).dtype);
    Guarded g(cap);
    size_t out_size = 0;
    // a truncated-to-0 stream still gets a valid pointer
    static const unsigned char one = 0;
    const unsigned char* pa = a.empty() ? &one : a.data();
    const unsigned char* pb = b.empty() ? &one : b.data();
    const int rc = zcoll_combine(static_cast<zcoll_op>(op), pa, a.size(), pb, b.size(), g.data(), cap, &out_size,
                                 threads);
    if (!g.intact()) return ::testing::AssertionFailure() << what << ": wrote outside out (order " << order << ")";
    if (!(rc == ZCOLL_ERR_CORRUPT || (version_ok && rc == ZCOLL_ERR_VERSION)))
      return ::testing::AssertionFailure() << what << ", " << op_name(op) << ", corrupt stream as "
                                           << (order ? "b" : "a") << ": returned " << rc << " ("
                                           << zcoll_strerror(rc) << "), expected ZCOLL_ERR_CORRUPT";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace

TYPED_TEST(CombineErrors, Truncated) {
  using T = TypeParam;
  for (size_t cl : {size_t(64), size_t(4096)}) {
    const size_t n = cl == 64 ? 300 : 50000;
    const Bytes a = small_stream<T>(0, n, cl), b = small_stream<T>(1, n, cl);
    ASSERT_FALSE(::testing::Test::HasFailure());
    std::vector<size_t> lens;
    const size_t idx_end = kHeader + info_of(a).nchunks * kEntry;
    for (size_t i = 0; i < a.size(); ++i)
      if (i <= idx_end + 16 || i + 16 >= a.size() || i % (cl == 64 ? 1 : 97) == 0) lens.push_back(i);
    for (size_t len : lens) {
      Bytes t(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(len));
      ASSERT_TRUE(rejected(t, b, kOps[len % 3], false, "truncated to " + std::to_string(len) + " of " +
                                                          std::to_string(a.size())));
    }
  }
}

TYPED_TEST(CombineErrors, TrailingBytes) {
  using T = TypeParam;
  const Bytes a = small_stream<T>(0, 300, 64), b = small_stream<T>(1, 300, 64);
  for (size_t extra : {1, 7, 8, 64}) {
    Bytes t = a;
    t.resize(a.size() + extra, 0);
    EXPECT_TRUE(rejected(t, b, ZCOLL_OP_SUM, false, std::to_string(extra) + " trailing zero bytes"));
  }
}

TYPED_TEST(CombineErrors, BitFlips) {
  using T = TypeParam;
  for (size_t cl : {size_t(64), size_t(4096)}) {
    const size_t n = cl == 64 ? 300 : 50000;
    const Bytes a = small_stream<T>(0, n, cl), b = small_stream<T>(1, n, cl);
    ASSERT_FALSE(::testing::Test::HasFailure());
    {
      Bytes r;
      ASSERT_TRUE(combine_ok(ZCOLL_OP_SUM, a, b, &r)) << "premise: the intact streams combine";
    }
    const size_t idx_end = kHeader + info_of(a).nchunks * kEntry;
    std::vector<size_t> where;
    std::mt19937_64 g(cl);
    for (size_t i = 0; i < a.size(); ++i)
      if (i < idx_end || cl == 64) where.push_back(i);
    for (int k = 0; k < 200 && cl != 64; ++k) where.push_back(idx_end + g() % (a.size() - idx_end));
    for (size_t i = a.size() - 8; i < a.size(); ++i) where.push_back(i);
    for (size_t pos : where) {
      // whole-byte damage everywhere; every single bit in the header and index
      std::vector<unsigned> masks = {0xFFu, 0x01u, 0x80u};
      if (pos < idx_end) masks = {0xFFu, 0x01u, 0x02u, 0x04u, 0x08u, 0x10u, 0x20u, 0x40u, 0x80u};
      for (unsigned m : masks) {
        Bytes t = a;
        t[pos] ^= static_cast<unsigned char>(m);
        const std::string what = "byte " + std::to_string(pos) + " ^= " + std::to_string(m) + " (" +
                                 (pos < kHeader ? "header" : pos < idx_end ? "index" : "payload") + ", " +
                                 std::to_string(a.size()) + " bytes)";
        // threads > 1 for a sample (thread start-up dominates these small calls)
        const int threads = cl != 64 && pos >= idx_end && pos % 7 == 0 ? 2 : 1;
        ASSERT_TRUE(rejected(t, b, kOps[(pos + m) % 3], pos == kVersionByte, what, threads));
      }
    }
  }
}

TYPED_TEST(CombineErrors, BadArguments) {
  using T = TypeParam;
  const Bytes a = small_stream<T>(0, 300, 64), b = small_stream<T>(1, 300, 64);
  const size_t cap = zcoll_codec_bound(300, Dt<T>::value);
  Guarded g(cap);
  size_t out_size = 0;
  // Only 0 of the invalid ops fits zcoll_op's range in C++; c_api_smoke passes 4, 77 and
  // -1 from C, where they are defined.
  for (int op : {0}) {
    EXPECT_EQ(zcoll_combine(static_cast<zcoll_op>(op), a.data(), a.size(), b.data(), b.size(), g.data(), cap,
                            &out_size, 1),
              ZCOLL_ERR_ARG)
        << "op " << op;
    EXPECT_TRUE(g.intact());
  }
  for (int op : kOps) {
    const zcoll_op o = static_cast<zcoll_op>(op);
    EXPECT_EQ(zcoll_combine(o, nullptr, a.size(), b.data(), b.size(), g.data(), cap, &out_size, 1), ZCOLL_ERR_ARG);
    EXPECT_EQ(zcoll_combine(o, a.data(), a.size(), nullptr, b.size(), g.data(), cap, &out_size, 1), ZCOLL_ERR_ARG);
    EXPECT_EQ(zcoll_combine(o, a.data(), a.size(), b.data(), b.size(), nullptr, cap, &out_size, 1), ZCOLL_ERR_ARG);
    EXPECT_EQ(zcoll_combine(o, a.data(), a.size(), b.data(), b.size(), g.data(), cap, nullptr, 1), ZCOLL_ERR_ARG);
    EXPECT_TRUE(g.intact());
  }
}

TYPED_TEST(CombineErrors, OutputOverlapsInput) {
  using T = TypeParam;
  const size_t n = 3000;
  const Bytes a = small_stream<T>(0, n, 256), b = small_stream<T>(1, n, 256);
  const size_t cap = zcoll_codec_bound(n, Dt<T>::value);
  Bytes ref;
  ASSERT_TRUE(combine_ok(ZCOLL_OP_MAX, a, b, &ref));
  for (int side = 0; side < 2; ++side) {
    const Bytes& in = side ? b : a;    // the input that shares memory with out
    const Bytes& other = side ? a : b;
    SCOPED_TRACE(side ? "out overlaps b" : "out overlaps a");
    // arena: [pre | in | post], out placed at various offsets
    const size_t pre = cap + 64, total = pre + in.size() + cap + 64;
    auto run = [&](size_t in_at, size_t out_at, size_t out_cap, Bytes* res) {
      Bytes arena(total, 0x11);
      std::memcpy(arena.data() + in_at, in.data(), in.size());
      const unsigned char* pin = arena.data() + in_at;
      size_t out_size = 0;
      const int rc = side ? zcoll_combine(ZCOLL_OP_MAX, other.data(), other.size(), pin, in.size(),
                                          arena.data() + out_at, out_cap, &out_size, 1)
                          : zcoll_combine(ZCOLL_OP_MAX, pin, in.size(), other.data(), other.size(),
                                          arena.data() + out_at, out_cap, &out_size, 1);
      if (rc == ZCOLL_SUCCESS && res) res->assign(arena.data() + out_at, arena.data() + out_at + out_size);
      return rc;
    };
    EXPECT_EQ(run(pre, pre, cap, nullptr), ZCOLL_ERR_ARG) << "out == input";
    EXPECT_EQ(run(pre, pre + in.size() / 2, cap, nullptr), ZCOLL_ERR_ARG) << "out starts inside the input";
    EXPECT_EQ(run(pre, pre + in.size() - 1, cap, nullptr), ZCOLL_ERR_ARG) << "out starts at the input's last byte";
    EXPECT_EQ(run(pre, pre - cap + 1, cap, nullptr), ZCOLL_ERR_ARG) << "out's last byte is the input's first";
    EXPECT_EQ(run(pre, pre - 100, cap, nullptr), ZCOLL_ERR_ARG) << "out ends inside the input";
    // adjacent but disjoint: fine, and the same result
    Bytes r1, r2;
    EXPECT_EQ(run(pre, pre + in.size(), cap, &r1), ZCOLL_SUCCESS) << "out right after the input";
    EXPECT_TRUE(r1 == ref);
    EXPECT_EQ(run(pre, pre - cap, cap, &r2), ZCOLL_SUCCESS) << "out right before the input";
    EXPECT_TRUE(r2 == ref);
  }
}

TYPED_TEST(CombineErrors, BufferTooSmall) {
  using T = TypeParam;
  const size_t n = 5000, cl = 256;
  const Bytes a = small_stream<T>(0, n, cl), b = small_stream<T>(2, n, cl);
  for (int op : kOps) {
    SCOPED_TRACE(op_name(op));
    Bytes ref;
    ASSERT_TRUE(combine_ok(op, a, b, &ref));
    const size_t idx_end = kHeader + info_of(a).nchunks * kEntry;
    for (size_t cap : {size_t(0), size_t(1), kHeader - 1, kHeader, idx_end - 1, idx_end, idx_end + 1,
                       ref.size() / 2, ref.size() - 9, ref.size() - 1}) {
      Guarded g(cap);
      size_t out_size = 12345;
      const int rc = zcoll_combine(static_cast<zcoll_op>(op), a.data(), a.size(), b.data(), b.size(), g.data(), cap,
                                   &out_size, cap % 2 + 1);
      EXPECT_EQ(rc, ZCOLL_ERR_BUFFER_TOO_SMALL) << "out_cap=" << cap << " of " << ref.size() << " needed";
      EXPECT_TRUE(g.intact()) << "wrote past out_cap=" << cap;
    }
    for (size_t extra : {size_t(0), size_t(1), size_t(100)}) {
      const size_t cap = ref.size() + extra;
      Guarded g(cap);
      size_t out_size = 0;
      const int rc = zcoll_combine(static_cast<zcoll_op>(op), a.data(), a.size(), b.data(), b.size(), g.data(), cap,
                                   &out_size, 2);
      ASSERT_EQ(rc, ZCOLL_SUCCESS) << "out_cap=" << cap << ": " << zcoll_strerror(rc);
      EXPECT_TRUE(g.intact());
      ASSERT_EQ(out_size, ref.size());
      EXPECT_EQ(std::memcmp(g.data(), ref.data(), out_size), 0) << "result differs with out_cap=" << cap;
    }
  }
}

// zcoll_codec_bound(count, dtype) suffices even where nothing compresses: 32-value
// chunks (the most index entries), incompressible values on both sides or on one.
TYPED_TEST(CombineErrors, BoundAlwaysSuffices) {
  using T = TypeParam;
  const size_t n = 32 * 40 + 5;
  const double eb = 0.01;
  const Bytes r1 = encode(incompressible<T>(n, 11), ZCOLL_EB_ABS, eb, 32);
  const Bytes r2 = encode(incompressible<T>(n, 12), ZCOLL_EB_ABS, eb, 32);
  std::vector<T> mixed = slice<T>(1, 999, n);
  const auto noise = incompressible<T>(n, 13);
  for (size_t i = 0; i < n; i += 2) mixed[i] = noise[i];  // every other value stored exactly
  const Bytes f = encode(slice<T>(0, 77, n), ZCOLL_EB_ABS, eb, 32), m = encode(mixed, ZCOLL_EB_ABS, eb, 32);
  ASSERT_FALSE(::testing::Test::HasFailure());
  EXPECT_EQ(r1.size(), zcoll_codec_bound(n, Dt<T>::value)) << "premise: all-raw stream of the bound's size";
  const std::vector<std::pair<const Bytes*, const Bytes*>> pairs = {{&r1, &r2}, {&r1, &f}, {&f, &r2}, {&m, &f},
                                                                    {&m, &r1}, {&f, &m}};
  for (int op : kOps)
    for (const auto& p : pairs) {
      Bytes r;
      EXPECT_TRUE(combine_ok(op, *p.first, *p.second, &r)) << op_name(op);  // out_cap = the bound, guarded
    }
}

// ================================================== zcoll_combine_values
//
// op(x, b) for uncompressed x must decompress, bit for bit, to what zcoll_combine(op, a, b)
// gives for a = x compressed with ABS, b's eb_abs, chunk length and shape, except in the
// chunks that a stores raw (zcoll.h); there, and everywhere, the guarantees against the
// original inputs hold. Its bytes are the same for every thread count and with the
// generic kernels.

std::vector<bool> raw_chunks(const Bytes& s) {
  const zcoll_stream_info in = info_of(s);
  std::vector<bool> raw(in.nchunks);
  for (size_t k = 0; k < in.nchunks; ++k) {
    uint32_t e;
    std::memcpy(&e, s.data() + kHeader + k * kEntry, sizeof e);
    raw[k] = (e & zcoll::codec::kRawChunkFlag) != 0;
  }
  return raw;
}

template <class T>
void check_fold(int op, const std::vector<T>& x, const std::vector<T>& xb, const Bytes& sb, double eb,
                const Shape& sh = Shape()) {
  SCOPED_TRACE(op_name(op));
  const size_t n = x.size(), cl = info_of(sb).chunk_len;
  const Bytes sa = encode(x, ZCOLL_EB_ABS, eb, cl, sh);
  Bytes ref, r;
  ASSERT_TRUE(combine_ok(op, sa, sb, &ref));
  ASSERT_TRUE(fold_ok(op, x, sb, &r));
  const std::vector<T> want = dec<T>(ref, n), got = dec<T>(r, n);
  const std::vector<bool> raw = raw_chunks(sa);
  size_t compared = 0, diffs = 0, first = 0;
  for (size_t i = 0; i < n; ++i) {
    if (raw[i / cl]) continue;
    ++compared;
    if (bits_of(got[i]) != bits_of(want[i]) && diffs++ == 0) first = i;
  }
  EXPECT_EQ(diffs, 0u) << "of " << compared << " values in chunks that compress; first at " << first << ": "
                       << show(got[first]) << " against zcoll_combine's " << show(want[first]);
  if (op == ZCOLL_OP_SUM) EXPECT_TRUE(sum_vs_inputs<T>({&x, &xb}, got, eb));
  else EXPECT_TRUE(minmax_vs_inputs<T>(op, {&x, &xb}, got, eb));
  expect_deterministic(r, {2, 0}, [&](int t, Bytes* out) { return fold_ok(op, x, sb, out, t); });
}

TYPED_TEST(Combine, ValuesLikeCompressedOperand) {
  using T = TypeParam;
  EnvRestore env("ZCOLL_ISA");
  unsetenv("ZCOLL_ISA");
  const size_t n = 100003;
  for (size_t cl : {size_t(32), size_t(1024), size_t(0)}) {
    for (const Bound& bd : kBounds) {
      for (int data = 0; data < 3; ++data) {
        SCOPED_TRACE("chunk_len=" + std::to_string(cl) + " " + bound_str(bd) +
                     (data == 0 ? " fields" : data == 1 ? " with specials" : " with specials and raw chunks"));
        std::vector<T> x = slice<T>(0, 11 + cl, n), b = slice<T>(2, 222222, n);
        const double eb = resolve(x, bd);
        if (data) {
          std::vector<int> marks;
          inject(special_pairs<T>(true), &x, &b, &marks);
        }
        if (data == 2) {  // every third chunk of x and of b (not the same ones) incompressible
          const size_t ce = cl ? cl : ZCOLL_DEFAULT_CHUNK_LEN;
          const auto nx = incompressible<T>(n, 7), nb = incompressible<T>(n, 8);
          for (size_t i = 0; i < n; ++i) {
            if ((i / ce) % 3 == 1) x[i] = nx[i];
            if ((i / ce) % 3 == 2) b[i] = nb[i];
          }
        }
        const Bytes sb = encode(b, ZCOLL_EB_ABS, eb, cl);
        ASSERT_FALSE(::testing::Test::HasFailure());
        if (data == 2) {
          const auto rb = raw_chunks(sb);
          ASSERT_TRUE(rb.size() > 2 && rb[2]) << "premise: chunk 2 of b is stored raw";
        }
        for (int op : kOps) check_fold(op, x, b, sb, eb);
      }
    }
  }
}

TYPED_TEST(Combine, ValuesShapeHintAndIntegerLimit) {
  using T = TypeParam;
  {  // a 3-D stream takes the whole-chunk path
    const Shape sh = shape(7, 33, 41);
    const size_t n = 7 * 33 * 41;
    const std::vector<T> x = slice<T>(1, 500, n), b = slice<T>(0, 9000, n);
    const double eb = resolve(x, Bound{ZCOLL_EB_REL, 1e-3});
    const Bytes sb = encode(b, ZCOLL_EB_ABS, eb, 0, sh);
    ASSERT_EQ(info_of(sb).ndims, 3);
    for (int op : kOps) check_fold(op, x, b, sb, eb, sh);
  }
  {  // integers near 2^30: most sums leave the quantizer's range and are stored exactly
    const size_t n = 10007;
    const double eb = 0.3;
    auto near_limit = [&](size_t k, size_t at) {
      std::vector<T> f = slice<T>(k, at, n);
      double mn, mx;
      finite_range(f.data(), n, &mn, &mx);
      std::vector<T> v(n);
      for (size_t i = 0; i < n; ++i)
        v[i] = static_cast<T>(((i / 50) % 2 ? -1.0 : 1.0) * 2 * eb * 1073741824.0 *
                              (0.7 + 0.29 * (static_cast<double>(f[i]) - mn) / (mx - mn)));
      return v;
    };
    const std::vector<T> x = near_limit(0, 1000), b = near_limit(1, 5000);
    for (size_t cl : {size_t(32), size_t(1024)}) {
      SCOPED_TRACE("near the integer limit, chunk_len=" + std::to_string(cl));
      const Bytes sb = encode(b, ZCOLL_EB_ABS, eb, cl);
      for (int op : kOps) check_fold(op, x, b, sb, eb);
    }
  }
}

TYPED_TEST(CombineErrors, ValuesArguments) {
  using T = TypeParam;
  using Other = typename std::conditional<std::is_same<T, float>::value, double, float>::type;
  const size_t n = 300;
  const std::vector<T> x = slice<T>(0, 5, n);
  const std::vector<Other> xo = slice<Other>(0, 5, n);
  const Bytes b = small_stream<T>(1, n, 64);
  const size_t cap = zcoll_codec_bound(n, Dt<T>::value);
  Guarded g(cap);
  size_t len = 0;
  auto call = [&](int op, const void* v, size_t cnt, zcoll_dtype dt, const void* s, size_t s_size, void* out,
                  size_t out_cap, size_t* out_size) {
    const int rc = zcoll_combine_values(static_cast<zcoll_op>(op), v, cnt, dt, s, s_size, out, out_cap, out_size, 1);
    EXPECT_TRUE(g.intact()) << "zcoll_combine_values wrote outside its output";
    return rc;
  };
  const zcoll_dtype dt = Dt<T>::value;
  // (c_api_smoke passes the out-of-range ops and dtypes from C)
  for (int op : {0}) EXPECT_EQ(call(op, x.data(), n, dt, b.data(), b.size(), g.data(), cap, &len), ZCOLL_ERR_ARG);
  EXPECT_EQ(call(ZCOLL_OP_SUM, nullptr, n, dt, b.data(), b.size(), g.data(), cap, &len), ZCOLL_ERR_ARG);
  EXPECT_EQ(call(ZCOLL_OP_SUM, x.data(), n, dt, nullptr, b.size(), g.data(), cap, &len), ZCOLL_ERR_ARG);
  EXPECT_EQ(call(ZCOLL_OP_SUM, x.data(), n, dt, b.data(), b.size(), nullptr, cap, &len), ZCOLL_ERR_ARG);
  EXPECT_EQ(call(ZCOLL_OP_SUM, x.data(), n, dt, b.data(), b.size(), g.data(), cap, nullptr), ZCOLL_ERR_ARG);
  EXPECT_EQ(call(ZCOLL_OP_SUM, x.data(), n, static_cast<zcoll_dtype>(3), b.data(), b.size(), g.data(), cap, &len),
            ZCOLL_ERR_DTYPE);
  // b's count and dtype
  EXPECT_EQ(call(ZCOLL_OP_SUM, x.data(), n - 1, dt, b.data(), b.size(), g.data(), cap, &len), ZCOLL_ERR_MISMATCH);
  EXPECT_EQ(call(ZCOLL_OP_MAX, xo.data(), n, Dt<Other>::value, b.data(), b.size(), g.data(), cap, &len),
            ZCOLL_ERR_MISMATCH);
  // a stream that is not fzl
  zcoll_codec_params lp = params(0.01, ZCOLL_EB_ABS, 64, 1);
  lp.codec = ZCOLL_CODEC_LPBIT;
  const Compressed c = compress(lp, slice<T>(1, 5, n));
  ASSERT_EQ(c.rc, ZCOLL_SUCCESS);
  EXPECT_EQ(call(ZCOLL_OP_SUM, x.data(), n, dt, c.stream.data(), c.stream.size(), g.data(), cap, &len),
            ZCOLL_ERR_CODEC);
  // a corrupt or truncated b
  Bytes bad = b;
  bad[kHeader + kEntry + 3] ^= 0x10;
  EXPECT_EQ(call(ZCOLL_OP_SUM, x.data(), n, dt, bad.data(), bad.size(), g.data(), cap, &len), ZCOLL_ERR_CORRUPT);
  EXPECT_EQ(call(ZCOLL_OP_SUM, x.data(), n, dt, b.data(), b.size() - 1, g.data(), cap, &len), ZCOLL_ERR_CORRUPT);
  // too small an output
  EXPECT_EQ(call(ZCOLL_OP_SUM, x.data(), n, dt, b.data(), b.size(), g.data(), kHeader, &len),
            ZCOLL_ERR_BUFFER_TOO_SMALL);
  // output overlapping the values or b
  std::vector<unsigned char> shared(cap + n * sizeof(T));
  std::memcpy(shared.data(), x.data(), n * sizeof(T));
  size_t olen = 0;
  EXPECT_EQ(zcoll_combine_values(ZCOLL_OP_SUM, shared.data(), n, dt, b.data(), b.size(), shared.data() + 8, cap, &olen,
                                 1),
            ZCOLL_ERR_ARG);
  Bytes bs(b);
  bs.resize(b.size() + cap);
  EXPECT_EQ(zcoll_combine_values(ZCOLL_OP_SUM, x.data(), n, dt, bs.data(), b.size(), bs.data() + 4, cap, &olen, 1),
            ZCOLL_ERR_ARG);
  // count 0 against an empty stream: an empty result
  const Bytes e = encode(std::vector<T>(), ZCOLL_EB_ABS, 0.01, 64);
  Bytes r;
  ASSERT_TRUE(fold_ok(ZCOLL_OP_SUM, std::vector<T>(), e, &r));
  EXPECT_EQ(info_of(r).count, 0u);
}
