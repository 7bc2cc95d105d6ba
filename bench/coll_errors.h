// zcoll-bench coll's error statistics: what each output element should be, the errors of
// one rank's output against it, and their summary over all ranks (max, mean, rmse, range,
// the 95th percentile of |error| / eb_abs). See the top comment of coll_bench.cc.
#ifndef ZCOLL_BENCH_COLL_ERRORS_H
#define ZCOLL_BENCH_COLL_ERRORS_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "zcoll.h"

namespace coll_errors {

enum class RedOp { Sum, Min, Max };

// What an output element should be, in double (value), and the rounding the element type's
// arithmetic may add to it (allow); special_ok: whether got reproduces a non-finite reference.
// The data-movement ops: what plain MPI delivered, bit for bit.
template <class T>
struct CopyRef {
  const T* ref;
  double value(size_t i, double* allow) const {
    *allow = 0;
    return ref[i];
  }
  bool special_ok(size_t i, double, T got) const { return std::memcmp(&ref[i], &got, sizeof(T)) == 0; }
};

// The reductions: element off + i of every rank's input, regenerated from the field (rank q
// holds it rotated by shift[q] and tiled), reduced in double.
template <class T>
struct ReduceRef {
  const std::vector<T>* field;
  std::vector<size_t> shift;  // each below the field's size
  size_t off;
  RedOp op;
  double value(size_t i, double* allow) const {
    const size_t n = field->size(), at = (off + i) % n;
    const T* f = field->data();
    double acc = 0, mag = 0;
    for (size_t q = 0; q < shift.size(); ++q) {
      const size_t k = at + shift[q] >= n ? at + shift[q] - n : at + shift[q];
      const double x = f[k];
      if (std::isfinite(x)) mag = op == RedOp::Sum ? mag + std::fabs(x) : std::max(mag, std::fabs(x));
      if (op == RedOp::Sum) acc += x;
      else if (q == 0 || std::isnan(x)) acc = x;
      else if (!std::isnan(acc)) acc = op == RedOp::Min ? std::min(acc, x) : std::max(acc, x);
    }
    const double u = sizeof(T) == 4 ? 0x1p-24 : 0x1p-53;
    *allow = op == RedOp::Sum ? static_cast<double>(shift.size()) * u * mag : u * mag;
    return acc;
  }
  bool special_ok(size_t, double ref, T got) const { return std::isnan(ref) ? std::isnan(got) : got == ref; }
};

// |error| / eb_abs in 128 bins per power of two (2^-40 to 2^24), plus one bin each for exact
// zeros, for anything smaller and for anything larger or not a number. A quantile is reported
// as the upper edge of the bin holding it: at most 1/128 above the exact value.
class ErrHist {
 public:
  ErrHist() : bins_(kBins, 0) {}
  void add(double x) { ++bins_[index(x)]; }
  std::vector<uint64_t>& bins() { return bins_; }
  double quantile(double q) const {
    uint64_t total = 0;
    for (uint64_t c : bins_) total += c;
    if (total == 0) return 0;
    const uint64_t target = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(q * static_cast<double>(total))));
    uint64_t cum = 0;
    for (int i = 0; i < kBins; ++i)
      if ((cum += bins_[i]) >= target) return upper(i);
    return INFINITY;
  }

 private:
  static constexpr int kSub = 128, kEmin = -39, kEmax = 24;  // frexp exponents: [2^(e-1), 2^e)
  static constexpr int kBins = 3 + (kEmax - kEmin + 1) * kSub;
  static int index(double x) {
    if (x == 0) return 0;
    if (!(x < INFINITY)) return kBins - 1;
    int e = 0;
    const double m = std::frexp(x, &e);  // x = m 2^e, m in [0.5, 1)
    if (e < kEmin) return 1;
    if (e > kEmax) return kBins - 1;
    return 2 + (e - kEmin) * kSub + static_cast<int>((m - 0.5) * 2 * kSub);
  }
  static double upper(int i) {
    if (i == 0) return 0;
    if (i == 1) return std::ldexp(0.5, kEmin);
    if (i == kBins - 1) return INFINITY;
    return std::ldexp(0.5 + ((i - 2) % kSub + 1) / (2.0 * kSub), kEmin + (i - 2) / kSub);
  }
  std::vector<uint64_t> bins_;
};

struct Errors {
  double max_abs = 0, sum = 0, sumsq = 0, n = 0, lo = INFINITY, hi = -INFINITY;
  double bad_specials = 0;  // non-finite references not reproduced
  double max_allow = 0;     // largest rounding allowance of a compared element
};

// got[0..n) against ref; |error| / eb_unit goes into hist where one is given. stride > 1
// compares every stride-th element only (the reductions' p^2 reference at scale).
template <class T, class Ref>
Errors compare(const Ref& ref, const T* got, size_t n, double eb_unit, ErrHist* hist, size_t stride = 1) {
  Errors e;
  for (size_t i = 0; i < n; i += stride) {
    double allow = 0;
    const double a = ref.value(i, &allow), b = got[i];
    if (!std::isfinite(a)) {
      if (!ref.special_ok(i, a, got[i])) {
        e.bad_specials += 1;
        e.max_abs = INFINITY;
      }
      continue;
    }
    const double d = b - a, ad = std::fabs(d);  // inf or NaN if got is not finite
    e.max_abs = std::isnan(d) ? INFINITY : std::max(e.max_abs, ad);
    e.sum += d;
    e.sumsq += d * d;
    e.n += 1;
    e.lo = std::min(e.lo, a);
    e.hi = std::max(e.hi, a);
    e.max_allow = std::max(e.max_allow, allow);
    if (hist) hist->add(eb_unit > 0 ? ad / eb_unit : (ad > 0 ? INFINITY : 0));
  }
  return e;
}

// Errors over all ranks of comm, on every rank; the histograms are merged on rank 0, so
// p95_over_eb is rank 0's only.
struct ErrorSummary {
  double max_abs = 0, mean = 0, rmse = 0, range = 0, bad_specials = 0, max_allow = 0, p95_over_eb = 0;
};

inline ErrorSummary summarize(const Errors& e, ErrHist* hist, MPI_Comm comm) {
  double mx[4] = {e.max_abs, -e.lo, e.hi, e.max_allow}, sm[4] = {e.sum, e.sumsq, e.n, e.bad_specials};
  MPI_Allreduce(MPI_IN_PLACE, mx, 4, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(MPI_IN_PLACE, sm, 4, MPI_DOUBLE, MPI_SUM, comm);
  ErrorSummary s;
  s.max_abs = mx[0];
  s.range = mx[2] + mx[1];
  s.max_allow = mx[3];
  s.mean = sm[2] > 0 ? sm[0] / sm[2] : 0;
  s.rmse = sm[2] > 0 ? std::sqrt(sm[1] / sm[2]) : 0;
  s.bad_specials = sm[3];
  if (hist) {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    auto& b = hist->bins();
    MPI_Reduce(rank == 0 ? MPI_IN_PLACE : b.data(), b.data(), static_cast<int>(b.size()), MPI_UINT64_T, MPI_SUM, 0,
               comm);
    s.p95_over_eb = hist->quantile(0.95);
  }
  return s;
}

}  // namespace coll_errors

#endif
