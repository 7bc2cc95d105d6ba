// zcoll-himeno: the Himeno benchmark (RIKEN; Jacobi iterations of a Poisson equation with the
// 19-point stencil of its coefficient arrays a[4], b[3], c[3], bnd and wrk1, omega = 0.8, in
// float32), decomposed over the ranks along i (1d) or along i and j (2d, or PXxPY), with the
// halo planes exchanged by Isend/Irecv (zcoll_isend/zcoll_irecv in zcoll mode) after every
// sweep and gosa (the sum of squared residuals) reduced with plain MPI_Allreduce, as in the
// MPI original. Sizes follow the original's static version: XS 64x32x32, S 128x64x64,
// M 256x128x128 (seed 002's "m"), L 512x256x256 grid points (i x j x k), or IxJxK. The initial
// condition is the benchmark's own: a = 1, 1, 1, 1/6; b = 0; c = 1; bnd = 1; wrk1 = 0;
// p = i^2 / (imax-1)^2 with i the global index. gosa is accumulated in double here (the
// original uses float), so that its difference between runs is not rounding noise. The grid,
// the initial condition and the sweep are in himeno.h, shared with apps/plain/himeno_plain.cc.
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
#include "himeno.h"

namespace {

const char* const kUsage =
    "usage: mpiexec -n N zcoll-himeno [--size XS|S|M|L|IxJxK] [--decomp 1d|2d|PXxPY] [common flags]\n"
    "  --size         grid points i x j x k (default M = 256x128x128)\n"
    "  --decomp       split along i (1d, default), along i and j (2d, MPI_Dims_create), or PX x PY\n"
    "  --iters K      Jacobi sweeps (default 100)\n"
    "  (no input field: the benchmark's own initial condition)\n";

int run(zapp::Args& a) {
  himeno::Grid g{};
  if (!himeno::parse_size(a.str("--size", "M"), &g))
    throw zapp::UsageError{"--size must be XS, S, M, L or IxJxK with each extent >= 3"};
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
  himeno::split(g.imax, dims[0], ci, &li, &i0);
  himeno::split(g.jmax, dims[1], cj, &lj, &j0);
  const himeno::Block blk(g, li, lj, i0);
  const long ni = blk.ni, nk = blk.nk, plane = blk.plane;
  auto at = [&](long i, long j, long k) { return blk.at(i, j, k); };
  auto rank_of = [&](int x, int y) {
    return x < 0 || y < 0 || x >= dims[0] || y >= dims[1] ? MPI_PROC_NULL : x * dims[1] + y;
  };
  const int down = rank_of(ci - 1, cj), up = rank_of(ci + 1, cj), left = rank_of(ci, cj - 1),
            right = rank_of(ci, cj + 1);

  const std::vector<float> p0 = blk.initial_pressure();

  std::vector<float> ref_p;
  double ref_gosa = 0;
  zapp::RunFn body = [&](const zapp::Config& cfg, zapp::Net& net, zapp::Record& rec) {
    std::vector<float> p = p0, wrk2(blk.cells(), 0.f);
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
      gosa = blk.sweep(p, wrk2);
      halo();
      net.allreduce(&gosa, 1, MPI_DOUBLE, MPI_SUM);
    }
    net.stop();

    const std::vector<float> inner = blk.interior(p);
    float pmax = 0;
    for (float v : inner) pmax = std::max(pmax, std::fabs(v));
    if (cfg.mode == "mpi") {
      ref_p = inner;
      ref_gosa = gosa;
    }
    const zapp::ErrStats e = zapp::compare(ref_p.data(), inner.data(), inner.size());
    const double eb_abs = net.eb_abs_max();
    double pm = pmax;
    MPI_Allreduce(MPI_IN_PLACE, &pm, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    const double bound =
        cfg.mode == "mpi" ? 0 : c.iters * (static_cast<double>(himeno::kOmega) * eb_abs + 64 * 0x1p-24 * pm);
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
