// image-stacking-plain: the image stacking case study (apps/image_stacking) written as an
// ordinary MPI program: the ranks' stacks are summed with MPI_Allreduce and nothing else,
// no zcoll call. Run it as it is for plain MPI, or under tools/zcoll-run to have the layer
// compress that MPI_Allreduce (docs/pmpi.md).
//
//   mpiexec -n P image-stacking-plain [--field FILE] [--size WxH] [--iters N] [--warmup W]
//        [--check-rel-eb X]
//
// Each rank adds its images of FILE (NAME_AxBxC.f32/.f64: images of BxC) in double, rounds
// the sum to float and tiles it by reflection to W x H, as zcoll-image-stacking does, so the
// two programs reduce the same data. Rank 0 prints the median time of the slowest rank,
// and the error of the result against the exact stack (the ranks' float images summed in
// double): max error, PSNR, NRMSE. With --check-rel-eb X it also checks every pixel against
// the bound the layer guarantees for a REL bound X on P ranks (P x X x the inputs' global
// range, plus the float rounding of the sum) and exits 1 if one is outside.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tool_support.h"

namespace {

struct Options {
  std::string field = zsupport::data_file("cesm_TS_10x192x288.f32");
  size_t width = 4096, height = 4096;
  int iters = 3, warmup = 1;
  double check_rel_eb = 0;
};

bool parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return false;
    const std::string v = argv[++i];
    if (a == "--field") o->field = v;
    else if (a == "--size") {
      if (std::sscanf(v.c_str(), "%zux%zu", &o->width, &o->height) != 2 || !o->width || !o->height) return false;
    } else if (a == "--iters") o->iters = std::atoi(v.c_str());
    else if (a == "--warmup") o->warmup = std::atoi(v.c_str());
    else if (a == "--check-rel-eb") o->check_rel_eb = std::atof(v.c_str());
    else return false;
  }
  return o->iters > 0 && o->warmup >= 0 && o->check_rel_eb >= 0 && o->width * o->height <= INT32_MAX;
}

size_t reflect(size_t i, size_t n) {
  const size_t m = i % (2 * n);
  return m < n ? m : 2 * n - 1 - m;
}

// Rank r's stack of one image: images r*k .. r*k+k-1 added in double, rounded to float.
std::vector<float> stack_of(const std::vector<float>& field, size_t images, size_t pixels, int r, int k) {
  std::vector<double> acc(pixels, 0.0);
  for (int j = 0; j < k; ++j) {
    const float* img = field.data() + ((static_cast<size_t>(r) * k + j) % images) * pixels;
    for (size_t i = 0; i < pixels; ++i) acc[i] += img[i];
  }
  return std::vector<float>(acc.begin(), acc.end());
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  Options o;
  std::string err;
  std::vector<float> field;
  bool ok = parse(argc, argv, &o);
  const std::vector<size_t> shape = zsupport::shape_from_name(o.field);
  if (ok && shape.size() >= 2) {
    if (zsupport::dtype_from_name(o.field) == "f64") {
      std::vector<double> d;
      ok = zsupport::read_values(o.field, &d, &err);
      field.assign(d.begin(), d.end());
    } else {
      ok = zsupport::read_values(o.field, &field, &err);
    }
  } else {
    ok = false;
    err = "usage: image-stacking-plain [--field NAME_AxBxC.f32] [--size WxH] [--iters N] [--warmup W] "
          "[--check-rel-eb X]";
  }
  if (!ok) {
    if (rank == 0) std::fprintf(stderr, "image-stacking-plain: %s\n", err.c_str());
    MPI_Finalize();
    return 2;
  }
  const size_t rows = shape[shape.size() - 2], cols = shape.back(), pixels = rows * cols;
  const size_t images = std::max<size_t>(1, field.size() / pixels);
  const int k = std::max<int>(1, static_cast<int>(images) / ranks);

  const std::vector<float> tile = stack_of(field, images, pixels, rank, k);
  std::vector<float> image(o.width * o.height), result(image.size());
  for (size_t y = 0; y < o.height; ++y)
    for (size_t x = 0; x < o.width; ++x) image[y * o.width + x] = tile[reflect(y, rows) * cols + reflect(x, cols)];
  const int count = static_cast<int>(image.size());

  std::vector<double> times;
  int failed = 0;
  const double t = zsupport::time_collective(
      o.warmup, o.iters,
      [&] { return MPI_Allreduce(image.data(), result.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); },
      &failed, &times);
  if (failed) {
    if (rank == 0) std::fprintf(stderr, "image-stacking-plain: MPI_Allreduce failed (%d)\n", failed);
    MPI_Finalize();
    return 1;
  }

  int status = 0;
  if (rank == 0) {
    // The exact stack, its range, the inputs' range (for the REL bound) and |inputs| summed.
    std::vector<double> exact(pixels, 0.0), magnitude(pixels, 0.0);
    double in_lo = INFINITY, in_hi = -INFINITY;
    for (int r = 0; r < ranks; ++r) {
      const std::vector<float> s = stack_of(field, images, pixels, r, k);
      for (size_t i = 0; i < pixels; ++i) {
        exact[i] += s[i];
        magnitude[i] += std::fabs(static_cast<double>(s[i]));
        in_lo = std::min<double>(in_lo, s[i]);
        in_hi = std::max<double>(in_hi, s[i]);
      }
    }
    const auto [lo, hi] = std::minmax_element(exact.begin(), exact.end());
    const double range = *hi - *lo, eb_abs = o.check_rel_eb * (in_hi - in_lo), u = std::ldexp(1.0, -24);
    double max_err = 0, sq = 0, worst = 0;
    for (size_t y = 0; y < o.height; ++y)
      for (size_t x = 0; x < o.width; ++x) {
        const size_t tpx = reflect(y, rows) * cols + reflect(x, cols);
        const double e = std::fabs(result[y * o.width + x] - exact[tpx]);
        max_err = std::max(max_err, e);
        sq += e * e;
        const double bound = ranks * eb_abs + ranks * u * magnitude[tpx];
        worst = std::max(worst, bound > 0 ? e / bound : e > 0 ? INFINITY : 0);
      }
    const double rmse = std::sqrt(sq / static_cast<double>(image.size()));
    std::printf("image-stacking-plain: %d ranks, %zux%zu float (%.1f MiB per rank), MPI_Allreduce only\n", ranks,
                o.width, o.height, image.size() * 4.0 / (1 << 20));
    std::printf("  time_s %.4f (median of %d after %d warm-up, slowest rank)  max_err %.4g  PSNR_dB %.2f  NRMSE %.3g",
                t, o.iters, o.warmup, max_err, zsupport::psnr_db(range, rmse), zsupport::nrmse(range, rmse));
    if (o.check_rel_eb > 0) {
      std::printf("  err/bound %.4f (REL %g: eb_abs %.6g)", worst, o.check_rel_eb, eb_abs);
      if (worst > 1) status = 1;
    }
    std::printf("\n");
    if (status) std::fprintf(stderr, "image-stacking-plain: FAILED: a pixel is outside the bound\n");
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}
