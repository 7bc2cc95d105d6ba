// zcoll-himeno: the Himeno benchmark (RIKEN; Jacobi iterations of a Poisson equation with the
// 19-point stencil of its coefficient arrays a[4], b[3], c[3], bnd and wrk1, omega = 0.8, in
// float32), decomposed over the ranks along i (1d) or along i and j (2d, or PXxPY), with the
// halo planes exchanged by Isend/Irecv (zcoll_isend/zcoll_irecv in zcoll mode) after every
// sweep and gosa (the sum of squared residuals) reduced with plain MPI_Allreduce, as in the
// MPI original. Sizes follow the original's static version: XS 64x32x32, S 128x64x64,
// M 256x128x128 (seed 002's "m"), L 512x256x256 grid points (i x j x k), or IxJxK. The initial
// condition is the benchmark's own: a = 1, 1, 1, 1/6; b = 0; c = 1; bnd = 1; wrk1 = 0;
// p = i^2 / (imax-1)^2 with i the global index. gosa is accumulated in double here (the
// original uses float), so that its difference between runs is not rounding noise.
//
// Halos: i-planes (j x k values, contiguous; 16,384 floats for M on 1d, seed 002's Table 1)
// go first; then j-planes, packed over the full local i range, ghosts included, so that the
// edge values the b terms read are current, as in the original's sequential exchanges.
//
// Reported against the plain-MPI run of the same launch: gosa and its relative difference,
// and the pressure field's largest and relative (L2) difference. Check (exit status 1): with
// b = 0 the update is p' = (1 - omega) p + (omega / 6) x (sum of the 6 face neighbours), a
// convex combination, so an error grows by at most omega x eb_abs per sweep (a received halo
// value is within eb_abs of the sender's, whose own error is at most the current maximum):
// max |p - p_ref| <= iters x omega x (largest eb_abs of any halo message) + an allowance for the
// two runs' different float rounding, 64 u x iters x max |p| (u = 2^-24).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "app_common.h"

namespace {

const char* const kUsage =
    "usage: mpiexec -n N zcoll-himeno [--size XS|S|M|L|IxJxK] [--decomp 1d|2d|PXxPY] [common flags]\n"
    "  --size         grid points i x j x k (default M = 256x128x128)\n"
    "  --decomp       split along i (1d, default), along i and j (2d, MPI_Dims_create), or PX x PY\n"
    "  --iters K      Jacobi sweeps (default 100)\n"
    "  (no input field: the benchmark's own initial condition)\n";

constexpr float kOmega = 0.8f;

struct Grid {
  long imax, jmax, kmax;
};

Grid parse_size(const std::string& s) {
  if (s == "XS") return {64, 32, 32};
  if (s == "S") return {128, 64, 64};
  if (s == "M") return {256, 128, 128};
  if (s == "L") return {512, 256, 256};
  Grid g{};
  char tail = 0;
  if (std::sscanf(s.c_str(), "%ldx%ldx%ld%c", &g.imax, &g.jmax, &g.kmax, &tail) != 3 || g.imax < 3 || g.jmax < 3 ||
      g.kmax < 3)
    throw zapp::UsageError{"--size must be XS, S, M, L or IxJxK with each extent >= 3"};
  return g;
}

// The interior points 1 .. n-2 split as evenly as possible: this coordinate's count and the
// global index of its local index 0 (the ghost below its first point).
void split(long n, int parts, int coord, long* count, long* origin) {
  const long inner = n - 2, base = inner / parts, extra = inner % parts;
  *count = base + (coord < extra);
  *origin = coord * base + std::min<long>(coord, extra);
}

int run(zapp::Args& a) {
  const Grid g = parse_size(a.str("--size", "M"));
  const std::string decomp = a.str("--decomp", "1d");
  const zapp::Common c = zapp::parse_common(a, 100, "");
  a.finish();
  if (!c.input.empty()) throw zapp::UsageError{"Himeno takes no --input: its initial condition is its own"};
  int dims[2] = {0, 0};
  char tail = 0;
  if (decomp == "1d") {
    dims[0] = zapp::g_size;
    dims[1] = 1;
  } else if (decomp == "2d") {
    MPI_Dims_create(zapp::g_size, 2, dims);
  } else if (std::sscanf(decomp.c_str(), "%dx%d%c", &dims[0], &dims[1], &tail) != 2 || dims[0] < 1 || dims[1] < 1 ||
             dims[0] * dims[1] != zapp::g_size) {
    throw zapp::UsageError{"--decomp must be 1d, 2d or PXxPY with PX x PY = the number of ranks"};
  }
  if (g.imax - 2 < dims[0] || g.jmax - 2 < dims[1]) throw zapp::UsageError{"more ranks than interior planes"};
  const int ci = zapp::g_rank / dims[1], cj = zapp::g_rank % dims[1];
  long li, lj, i0, j0;
  split(g.imax, dims[0], ci, &li, &i0);
  split(g.jmax, dims[1], cj, &lj, &j0);
  const long ni = li + 2, nj = lj + 2, nk = g.kmax, plane = nj * nk;
  const size_t cells = static_cast<size_t>(ni * plane);
  auto at = [&](long i, long j, long k) { return static_cast<size_t>((i * nj + j) * nk + k); };
  auto rank_of = [&](int x, int y) {
    return x < 0 || y < 0 || x >= dims[0] || y >= dims[1] ? MPI_PROC_NULL : x * dims[1] + y;
  };
  const int down = rank_of(ci - 1, cj), up = rank_of(ci + 1, cj), left = rank_of(ci, cj - 1),
            right = rank_of(ci, cj + 1);

  std::vector<float> a0(cells, 1.f), a1(cells, 1.f), a2(cells, 1.f), a3(cells, 1.f / 6), b0(cells, 0.f), b1(cells, 0.f),
      b2(cells, 0.f), c0(cells, 1.f), c1(cells, 1.f), c2(cells, 1.f), bnd(cells, 1.f), wrk1(cells, 0.f), p0(cells);
  const float denom = static_cast<float>((g.imax - 1) * (g.imax - 1));
  for (long i = 0; i < ni; ++i)
    for (size_t q = 0; q < static_cast<size_t>(plane); ++q)
      p0[at(i, 0, 0) + q] = static_cast<float>((i0 + i) * (i0 + i)) / denom;

  std::vector<float> ref_p;
  double ref_gosa = 0;
  zapp::RunFn body = [&](const zapp::Config& cfg, zapp::Net& net, zapp::Record& rec) {
    std::vector<float> p = p0, wrk2(cells, 0.f);
    std::vector<float> jsend[2], jrecv[2];
    for (auto* v : {&jsend[0], &jsend[1], &jrecv[0], &jrecv[1]}) v->resize(static_cast<size_t>(ni * nk));
    auto halo = [&]() {
      net.irecv(&p[at(0, 0, 0)], static_cast<int>(plane), MPI_FLOAT, down, 1);
      net.irecv(&p[at(li + 1, 0, 0)], static_cast<int>(plane), MPI_FLOAT, up, 0);
      net.isend(&p[at(1, 0, 0)], static_cast<int>(plane), MPI_FLOAT, down, 0);
      net.isend(&p[at(li, 0, 0)], static_cast<int>(plane), MPI_FLOAT, up, 1);
      net.waitall();
      if (dims[1] == 1) return;
      const long jsrc[2] = {1, lj}, jdst[2] = {0, lj + 1};
      const int peer[2] = {left, right};
      for (int s = 0; s < 2; ++s) {
        for (long i = 0; i < ni; ++i)
          for (long k = 0; k < nk; ++k) jsend[s][i * nk + k] = p[at(i, jsrc[s], k)];
        net.irecv(jrecv[s].data(), static_cast<int>(ni * nk), MPI_FLOAT, peer[s], 3 - s);
        net.isend(jsend[s].data(), static_cast<int>(ni * nk), MPI_FLOAT, peer[s], 2 + s);
      }
      net.waitall();
      for (int s = 0; s < 2; ++s)
        if (peer[s] != MPI_PROC_NULL)
          for (long i = 0; i < ni; ++i)
            for (long k = 0; k < nk; ++k) p[at(i, jdst[s], k)] = jrecv[s][i * nk + k];
    };
    double gosa = 0;
    net.start();
    for (int it = 0; it < c.iters; ++it) {
      gosa = 0;
      for (long i = 1; i <= li; ++i)
        for (long j = 1; j <= lj; ++j)
          for (long k = 1; k < nk - 1; ++k) {
            const size_t x = at(i, j, k), ip = at(i + 1, j, k), im = at(i - 1, j, k);
            const size_t jp = at(i, j + 1, k), jm = at(i, j - 1, k);
            const float s0 = a0[x] * p[ip] + a1[x] * p[jp] + a2[x] * p[x + 1] +
                             b0[x] * (p[ip + nk] - p[ip - nk] - p[im + nk] + p[im - nk]) +
                             b1[x] * (p[jp + 1] - p[jm + 1] - p[jp - 1] + p[jm - 1]) +
                             b2[x] * (p[ip + 1] - p[im + 1] - p[ip - 1] + p[im - 1]) + c0[x] * p[im] + c1[x] * p[jm] +
                             c2[x] * p[x - 1] + wrk1[x];
            const float ss = (s0 * a3[x] - p[x]) * bnd[x];
            gosa += static_cast<double>(ss) * ss;
            wrk2[x] = p[x] + kOmega * ss;
          }
      for (long i = 1; i <= li; ++i)
        for (long j = 1; j <= lj; ++j)
          for (long k = 1; k < nk - 1; ++k) p[at(i, j, k)] = wrk2[at(i, j, k)];
      halo();
      net.allreduce(&gosa, 1, MPI_DOUBLE, MPI_SUM);
    }
    net.stop();

    std::vector<float> inner;
    inner.reserve(static_cast<size_t>(li * lj * (nk - 2)));
    float pmax = 0;
    for (long i = 1; i <= li; ++i)
      for (long j = 1; j <= lj; ++j)
        for (long k = 1; k < nk - 1; ++k) {
          inner.push_back(p[at(i, j, k)]);
          pmax = std::max(pmax, std::fabs(p[at(i, j, k)]));
        }
    if (cfg.mode == "mpi") {
      ref_p = inner;
      ref_gosa = gosa;
    }
    const zapp::ErrStats e = zapp::compare(ref_p.data(), inner.data(), inner.size());
    const double eb_abs = net.eb_abs_max();
    double pm = pmax;
    MPI_Allreduce(MPI_IN_PLACE, &pm, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    const double bound = cfg.mode == "mpi" ? 0 : c.iters * (static_cast<double>(kOmega) * eb_abs + 64 * 0x1p-24 * pm);
    const double flops = 34.0 * (g.imax - 2) * (g.jmax - 2) * (g.kmax - 2) * c.iters;
    rec.str("size", std::to_string(g.imax) + "x" + std::to_string(g.jmax) + "x" + std::to_string(g.kmax));
    rec.str("decomp", std::to_string(dims[0]) + "x" + std::to_string(dims[1]));
    rec.num("halo_floats_i", static_cast<double>(plane), "%.0f");
    rec.num("mflops", net.total_s() > 0 ? flops / net.total_s() / 1e6 : 0, "%.1f", true);
    rec.num("gosa", gosa, "%.9g", true);
    rec.num("gosa_rel_diff", ref_gosa != 0 ? std::fabs(gosa - ref_gosa) / std::fabs(ref_gosa) : 0, "%.3g", true);
    rec.num("p_rel_diff", e.l2_rel, "%.3g", true);
    rec.within("p_max_diff", e.max_abs, bound);
  };
  return zapp::run_configs("himeno", c, body);
}

}  // namespace

int main(int argc, char** argv) { return zapp::app_main(argc, argv, "zcoll-himeno", kUsage, run); }
