// The Himeno benchmark's grid, initial condition and Jacobi sweep (apps/himeno.cc states the
// method and its error bound), shared by zcoll-himeno and its plain-MPI twin himeno-plain
// (apps/plain/himeno_plain.cc), so that the two compute the same thing and differ only in how
// the halos and gosa are communicated.
#ifndef ZCOLL_APPS_HIMENO_H
#define ZCOLL_APPS_HIMENO_H

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

namespace himeno {

constexpr float kOmega = 0.8f;

// Grid points i x j x k, the boundary ones included.
struct Grid {
  long imax, jmax, kmax;
};

// XS 64x32x32, S 128x64x64, M 256x128x128, L 512x256x256 (the original's static sizes) or
// IxJxK with each extent >= 3; false for anything else.
inline bool parse_size(const std::string& s, Grid* g) {
  if (s == "XS") *g = {64, 32, 32};
  else if (s == "S") *g = {128, 64, 64};
  else if (s == "M") *g = {256, 128, 128};
  else if (s == "L") *g = {512, 256, 256};
  else {
    char tail = 0;
    return std::sscanf(s.c_str(), "%ldx%ldx%ld%c", &g->imax, &g->jmax, &g->kmax, &tail) == 3 && g->imax >= 3 &&
           g->jmax >= 3 && g->kmax >= 3;
  }
  return true;
}

// The interior points 1 .. n-2 split as evenly as possible: this coordinate's count and the
// global index of its local index 0 (the ghost below its first point).
inline void split(long n, int parts, int coord, long* count, long* origin) {
  const long inner = n - 2, base = inner / parts, extra = inner % parts;
  *count = base + (coord < extra);
  *origin = coord * base + std::min<long>(coord, extra);
}

// One rank's block: li x lj interior points in i and j, all kmax in k, with a ghost layer on
// each side in i and j; i0 is the global i index of local i = 0. The coefficients are the
// benchmark's: a = 1, 1, 1, 1/6; b = 0; c = 1; bnd = 1; wrk1 = 0.
class Block {
 public:
  Block(const Grid& g, long li_, long lj_, long i0_)
      : li(li_), lj(lj_), ni(li_ + 2), nj(lj_ + 2), nk(g.kmax), plane(nj * nk), i0(i0_), imax(g.imax),
        a0_(cells(), 1.f), a1_(cells(), 1.f), a2_(cells(), 1.f), a3_(cells(), 1.f / 6), b0_(cells(), 0.f),
        b1_(cells(), 0.f), b2_(cells(), 0.f), c0_(cells(), 1.f), c1_(cells(), 1.f), c2_(cells(), 1.f),
        bnd_(cells(), 1.f), wrk1_(cells(), 0.f) {}

  const long li, lj, ni, nj, nk, plane, i0, imax;

  size_t cells() const { return static_cast<size_t>(ni * plane); }
  size_t at(long i, long j, long k) const { return static_cast<size_t>((i * nj + j) * nk + k); }

  // p = i^2 / (imax-1)^2 with i the global index, ghosts included.
  std::vector<float> initial_pressure() const {
    std::vector<float> p(cells());
    const float denom = static_cast<float>((imax - 1) * (imax - 1));
    for (long i = 0; i < ni; ++i)
      for (size_t q = 0; q < static_cast<size_t>(plane); ++q)
        p[at(i, 0, 0) + q] = static_cast<float>((i0 + i) * (i0 + i)) / denom;
    return p;
  }

  // One Jacobi sweep of the interior of p (wrk2: scratch of cells() values); returns the
  // block's gosa, the sum of the squared residuals, accumulated in double.
  double sweep(std::vector<float>& p, std::vector<float>& wrk2) const {
    double gosa = 0;
    for (long i = 1; i <= li; ++i)
      for (long j = 1; j <= lj; ++j)
        for (long k = 1; k < nk - 1; ++k) {
          const size_t x = at(i, j, k), ip = at(i + 1, j, k), im = at(i - 1, j, k);
          const size_t jp = at(i, j + 1, k), jm = at(i, j - 1, k);
          const float s0 = a0_[x] * p[ip] + a1_[x] * p[jp] + a2_[x] * p[x + 1] +
                           b0_[x] * (p[ip + nk] - p[ip - nk] - p[im + nk] + p[im - nk]) +
                           b1_[x] * (p[jp + 1] - p[jm + 1] - p[jp - 1] + p[jm - 1]) +
                           b2_[x] * (p[ip + 1] - p[im + 1] - p[ip - 1] + p[im - 1]) + c0_[x] * p[im] +
                           c1_[x] * p[jm] + c2_[x] * p[x - 1] + wrk1_[x];
          const float ss = (s0 * a3_[x] - p[x]) * bnd_[x];
          gosa += static_cast<double>(ss) * ss;
          wrk2[x] = p[x] + kOmega * ss;
        }
    for (long i = 1; i <= li; ++i)
      for (long j = 1; j <= lj; ++j)
        for (long k = 1; k < nk - 1; ++k) p[at(i, j, k)] = wrk2[at(i, j, k)];
    return gosa;
  }

  // The interior points of p in i, j, k order.
  std::vector<float> interior(const std::vector<float>& p) const {
    std::vector<float> inner;
    inner.reserve(static_cast<size_t>(li * lj * (nk - 2)));
    for (long i = 1; i <= li; ++i)
      for (long j = 1; j <= lj; ++j)
        for (long k = 1; k < nk - 1; ++k) inner.push_back(p[at(i, j, k)]);
    return inner;
  }

 private:
  std::vector<float> a0_, a1_, a2_, a3_, b0_, b1_, b2_, c0_, c1_, c2_, bnd_, wrk1_;
};

}  // namespace himeno

#endif
