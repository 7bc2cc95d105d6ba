// Value range (for relative error bounds): min and max over the finite values.
#pragma once
#include "codec/kernels/common.h"

namespace zcoll::fzl::ZCOLL_KERNELS_ISA {

#if defined(__AVX2__)
// The few 256-bit operations finite_range needs, for float and double alike.
template <class T> struct RangeVec;
template <> struct RangeVec<float> {
  using V = __m256;
  static constexpr unsigned kLanes = 8;
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static V set1(float x) { return _mm256_set1_ps(x); }
  static V min(V a, V b) { return _mm256_min_ps(a, b); }
  static V max(V a, V b) { return _mm256_max_ps(a, b); }
  static V finite(V v) {
    const V absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    return _mm256_cmp_ps(_mm256_and_ps(v, absm), set1(std::numeric_limits<float>::infinity()), _CMP_LT_OQ);
  }
  static V blend(V a, V b, V m) { return _mm256_blendv_ps(a, b, m); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
};
template <> struct RangeVec<double> {
  using V = __m256d;
  static constexpr unsigned kLanes = 4;
  static V load(const double* p) { return _mm256_loadu_pd(p); }
  static V set1(double x) { return _mm256_set1_pd(x); }
  static V min(V a, V b) { return _mm256_min_pd(a, b); }
  static V max(V a, V b) { return _mm256_max_pd(a, b); }
  static V finite(V v) {
    const V absm = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffll));
    return _mm256_cmp_pd(_mm256_and_pd(v, absm), set1(std::numeric_limits<double>::infinity()), _CMP_LT_OQ);
  }
  static V blend(V a, V b, V m) { return _mm256_blendv_pd(a, b, m); }
  static void store(double* p, V v) { _mm256_storeu_pd(p, v); }
};

template <class T, class V>
void fold_lanes(V vmn, V vmx, T& mn, T& mx) {
  using R = RangeVec<T>;
  T a[R::kLanes], b[R::kLanes];
  R::store(a, vmn);
  R::store(b, vmx);
  for (unsigned j = 0; j < R::kLanes; ++j) {
    mn = a[j] < mn ? a[j] : mn;
    mx = b[j] > mx ? b[j] : mx;
  }
}
#endif

// min and max over the finite values (lo > hi when there are none).
template <class T>
void finite_range(const T* x, size_t n, double* lo, double* hi) {
  T mn = std::numeric_limits<T>::infinity(), mx = -mn;
  size_t i = 0;
#if defined(__AVX2__)
  using R = RangeVec<T>;
  constexpr size_t kStep = 2 * R::kLanes;
  // First a plain min/max: min(v, m) returns m when v is NaN (the second operand wins
  // an unordered compare), so NaNs drop out for free; only an infinity in the result
  // sends the array to the careful pass below.
  {
    typename R::V a0 = R::set1(mn), a1 = a0, b0 = R::set1(mx), b1 = b0;
    size_t k = 0;
    for (; k + kStep <= n; k += kStep) {
      const typename R::V v0 = R::load(x + k), v1 = R::load(x + k + R::kLanes);
      a0 = R::min(v0, a0);
      a1 = R::min(v1, a1);
      b0 = R::max(v0, b0);
      b1 = R::max(v1, b1);
    }
    T fmn = mn, fmx = mx;
    fold_lanes(R::min(a0, a1), R::max(b0, b1), fmn, fmx);
    if (std::isfinite(fmn) && std::isfinite(fmx)) {
      mn = fmn;
      mx = fmx;
      i = k;
    }
  }
  // Careful pass: infinities masked out lane by lane.
  typename R::V vmn = R::set1(mn), vmx = R::set1(mx);
  for (; i + R::kLanes <= n; i += R::kLanes) {
    const typename R::V v = R::load(x + i), fin = R::finite(v);
    vmn = R::blend(vmn, R::min(vmn, v), fin);
    vmx = R::blend(vmx, R::max(vmx, v), fin);
  }
  fold_lanes(vmn, vmx, mn, mx);
#endif
  for (; i < n; ++i) {  // the rest, skipping NaN and infinities
    const T v = load<T>(x + i);
    if (std::isfinite(v)) {
      mn = v < mn ? v : mn;
      mx = v > mx ? v : mx;
    }
  }
  *lo = mn;
  *hi = mx;
}

}  // namespace zcoll::fzl::ZCOLL_KERNELS_ISA
