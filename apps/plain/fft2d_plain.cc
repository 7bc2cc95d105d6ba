// fft2d-plain: the distributed 2-D complex FFT of zcoll-fft2d (apps/fft2d.cc) written as an
// ordinary MPI program, no zcoll call: rank r holds rows [r N/p, (r+1) N/p) of an N x N
// complex array, transforms its rows, transposes with MPI_Alltoall of MPI_DOUBLE, transforms
// the rows again and transposes back. Run it as it is for plain MPI, or under tools/zcoll-run
// to have the layer compress the two MPI_Alltoall calls of every transform (docs/pmpi.md).
//
//   mpiexec -n P fft2d-plain [--field FILE] [--slice S] [--n N] [--iters K] [--warmup W] [--out FILE]
//
// Input as zcoll-fft2d's (fft2d.h): plane S of FILE (NAME_AxBxC.f32/.f64, or a 2-D AxB),
// mirrored onto N x N, imaginary parts 0; every transform starts again from it. Rank 0 prints
// time_s, the median over the K timed transforms (after W warm-up ones) of the slowest rank's
// time for one transform (two alltoalls). --out FILE writes the transform, N x N complex
// values as interleaved real and imaginary float64, row-major, raw little-endian.
//
// The layer's error (apps/fft2d.cc derives it): max |F - F_plain| <= (sqrt(2) N + 1) eb_abs
// plus 16 log2(N^2) 2^-53 ||F_plain|| for the float64 rounding, eb_abs the largest absolute
// bound the layer applied (the report's max_eb_abs; the bound itself under --eb-mode abs).
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "fft2d.h"
#include "plain_support.h"
#include "tool_support.h"

namespace {

const char* const kUsage =
    "usage: mpiexec -n P fft2d-plain [--field NAME_AxBxC.f32] [--slice S] [--n N] [--iters K] [--warmup W] "
    "[--out FILE]\n"
    "  --n N       transform size, a power of two divisible by P (default 256)\n"
    "  --slice S   plane of a 3-D field along its first axis (default 0)\n"
    "  --iters K   timed transforms, two MPI_Alltoall each (default 10); --warmup W untimed first (default 1)\n"
    "  --out FILE  the N x N result as interleaved complex float64\n";

struct Options {
  std::string field = zsupport::data_file("cesm_TS_10x192x288.f32"), out;
  long n = 256, slice = 0, iters = 10, warmup = 1;
};

// Throws zsupport::UsageError.
Options parse(int argc, char** argv) {
  Options o;
  for_each_option(argc, argv, [&](const std::string& name, const std::string& v) {
    if (name == "--field") o.field = v;
    else if (name == "--out") o.out = v;
    else if (name == "--n") o.n = zsupport::parse_long(name, v, 2, 1 << 15);
    else if (name == "--slice") o.slice = zsupport::parse_long(name, v, 0, 1L << 40);
    else if (name == "--iters") o.iters = zsupport::parse_long(name, v, 1, 1 << 20);
    else if (name == "--warmup") o.warmup = zsupport::parse_long(name, v, 0, 1 << 20);
    else throw zsupport::UsageError{"unknown option " + name};
  });
  if (o.n & (o.n - 1)) throw zsupport::UsageError{"--n must be a power of two"};
  return o;
}

int run(int argc, char** argv, int rank, int ranks) {
  const Options o = parse(argc, argv);
  const size_t n = static_cast<size_t>(o.n), p = static_cast<size_t>(ranks);
  if (n % p) throw zsupport::UsageError{"--n must be divisible by the number of ranks"};
  std::vector<double> field;
  std::string err;
  if (!zsupport::read_as_double(o.field, &field, &err)) throw zsupport::UsageError{err};
  const std::vector<size_t> shape = zsupport::shape_from_name(o.field);
  if (shape.size() < 2) throw zsupport::UsageError{o.field + ": need a 2-D or 3-D field (NAME_AxB or NAME_AxBxC)"};
  const size_t ny = shape[shape.size() - 2], nx = shape.back();
  if (static_cast<size_t>(o.slice) >= field.size() / (ny * nx)) throw zsupport::UsageError{"--slice is past the field"};

  fft2d::Distributed dist(n, p, static_cast<size_t>(rank));
  const std::vector<fft2d::cplx> x = dist.input_rows(field.data() + static_cast<size_t>(o.slice) * ny * nx, ny, nx);
  std::vector<fft2d::cplx> f;
  int alltoall_rc = MPI_SUCCESS, failed = 0;
  auto alltoall = [&](const double* send, double* recv) {
    const int rc = MPI_Alltoall(send, dist.block_doubles(), MPI_DOUBLE, recv, dist.block_doubles(), MPI_DOUBLE,
                                MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) alltoall_rc = rc;
  };
  std::vector<double> times;
  const double t = zsupport::time_collective(
      static_cast<int>(o.warmup), static_cast<int>(o.iters),
      [&] {
        f = x;
        dist.forward(f.data(), alltoall);
        return alltoall_rc;
      },
      &failed, &times);
  if (failed) {
    if (rank == 0) std::fprintf(stderr, "fft2d-plain: MPI_Alltoall failed (%d)\n", failed);
    return 1;
  }
  if (rank == 0)
    std::printf("fft2d-plain: %d ranks, %zux%zu complex float64, MPI_Alltoall blocks of %d doubles\n"
                "  time_s %.4f (median of %ld transforms after %ld warm-up, slowest rank; 2 alltoalls each)\n",
                ranks, n, n, dist.block_doubles(), t, o.iters, o.warmup);
  if (!o.out.empty() && !write_in_rank_order(o.out, f.data(), f.size() * sizeof(fft2d::cplx), &err)) {
    if (rank == 0) std::fprintf(stderr, "fft2d-plain: %s\n", err.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return plain_main(argc, argv, "fft2d-plain", kUsage, run);
}
