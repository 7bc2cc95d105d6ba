// zcoll-fft2d: a distributed 2-D complex FFT as in seed 002 (FFTSS, float64): rank r holds
// rows [r N/p, (r+1) N/p) of an N x N complex array, transforms its rows, transposes the array
// with one alltoall, transforms the rows again (the original columns) and transposes back with
// a second alltoall, so the result has the input's layout. Each alltoall block is (N/p)^2
// complex values sent as 2 (N/p)^2 MPI_DOUBLEs, which zcoll compresses in zcoll mode (REL:
// eb x the range over all ranks' send buffers). The transform itself (an iterative radix-2 FFT
// and the transposes' packing) is in fft2d.h, shared with the plain-MPI apps/plain/fft2d_plain.cc.
//
// Input: one 2-D plane of a real field (--slice along the first axis of a 3-D field; a 2-D
// field is its own plane), mapped onto N x N by mirroring at the edges (index i reads
// i mod 2n, reflected into [0, n)): a larger plane is cropped, a smaller one tiled without
// jumps at the seams. The imaginary parts are 0. Every iteration transforms the same input.
//
// Reported against the plain-MPI run of the same launch: max |F - F_ref| over the real and
// imaginary parts, and ||F - F_ref|| / ||F_ref||. Check (exit status 1): each component of
// the first transpose is within eb1 of what was sent, so a complex input of the column FFTs is
// off by at most sqrt(2) eb1 and each of the N terms of an output adds at most that; the second
// transpose adds eb2. So max |F - F_ref| <= sqrt(2) N eb1 + eb2, with eb1, eb2 <= the largest
// eb_abs zcoll resolved, plus an allowance for the two runs' different float64 rounding,
// 16 log2(N^2) u N ||x|| (u = 2^-53; ||F|| = N ||x||).
#include <cmath>
#include <complex>
#include <cstdio>
#include <string>
#include <vector>

#include "app_common.h"
#include "fft2d.h"

namespace {

const char* const kUsage =
    "usage: mpiexec -n N zcoll-fft2d [--n SIZE] [--slice S] [common flags]\n"
    "  --n SIZE       transform size, a power of two divisible by the rank count (default 256)\n"
    "  --slice S      plane of a 3-D field along its first axis (default 0)\n"
    "  --iters K      forward transforms, each with two alltoalls (default 10)\n"
    "  default input: cesm_TS_10x192x288.f32, day 0 (192 x 288, mirrored/cropped to SIZE x SIZE)\n";

using fft2d::cplx;

int run(zapp::Args& a) {
  const long n_arg = a.integer("--n", 256, 2, 1 << 15);
  const long slice = a.integer("--slice", 0, 0, 1L << 40);
  const zapp::Common c = zapp::parse_common(a, 10, zapp::dataset_file("cesm_TS_10x192x288.f32"));
  a.finish();
  const size_t n = static_cast<size_t>(n_arg), p = static_cast<size_t>(zapp::g_size),
               r = static_cast<size_t>(zapp::g_rank);
  if (n & (n - 1)) throw zapp::UsageError{"--n must be a power of two"};
  if (n % p) throw zapp::UsageError{"--n must be divisible by the number of ranks"};
  const zapp::Field fld = zapp::load_field(c.input);
  if (fld.shape.size() < 2)
    throw zapp::UsageError{c.input + ": need a 2-D or 3-D field (shape _AxB or _AxBxC in its name)"};
  const size_t ny = fld.shape[fld.shape.size() - 2], nx = fld.shape.back();
  if (static_cast<size_t>(slice) >= fld.v.size() / (ny * nx)) throw zapp::UsageError{"--slice is past the field"};
  const double* plane = fld.v.data() + static_cast<size_t>(slice) * ny * nx;

  fft2d::Distributed dist(n, p, r);
  const std::vector<cplx> x = dist.input_rows(plane, ny, nx);
  double sumsq = 0;
  for (const cplx& v : x) sumsq += std::norm(v);
  MPI_Allreduce(MPI_IN_PLACE, &sumsq, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  const double x_norm = std::sqrt(sumsq);
  const int block = dist.block_doubles();

  std::vector<cplx> ref;
  zapp::RunFn body = [&](const zapp::Config& cfg, zapp::Net& net, zapp::Record& rec) {
    std::vector<cplx> f;
    net.start();
    for (int it = 0; it < c.iters; ++it) {
      f = x;
      dist.forward(f.data(), [&](const double* send, double* recv) { net.alltoall(send, recv, block, MPI_DOUBLE); });
    }
    net.stop();
    if (cfg.mode == "mpi") ref = f;
    const zapp::ErrStats e = zapp::compare(reinterpret_cast<const double*>(ref.data()),
                                           reinterpret_cast<const double*>(f.data()), 2 * f.size());
    const double eb_abs = net.eb_abs_max();
    const double rounding = 16 * std::log2(static_cast<double>(n * n)) * 0x1p-53 * static_cast<double>(n) * x_norm;
    const double bound = (std::sqrt(2.0) * static_cast<double>(n) + 1) * eb_abs + (cfg.mode == "mpi" ? 0 : rounding);
    rec.num("n", static_cast<double>(n), "%.0f");
    rec.num("slice", static_cast<double>(slice), "%.0f");
    rec.num("block_doubles", block, "%.0f");
    rec.num("rel_err", e.l2_rel, "%.3g", true);
    rec.within("max_abs_err", e.max_abs, bound);
  };
  return zapp::run_configs("fft2d", c, body);
}

}  // namespace

int main(int argc, char** argv) { return zapp::app_main(argc, argv, "zcoll-fft2d", kUsage, run); }
