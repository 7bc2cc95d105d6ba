// zcoll-kmeans: Lloyd's K-means as in seed 002 (after dzdao/k-means-clustering-mpi): the root
// scatters the points once, then every iteration broadcasts the centroids, each rank assigns
// its points to the nearest centroid, and the partial sums and counts are reduced to the root,
// which computes the new centroids. The scatter and the broadcasts are float64 messages and go
// through zcoll in zcoll mode (seed 002 compressed both); the reduction of sums and counts stays
// plain MPI.
//
// Points: one per grid cell of a real field, with two features, the value and the magnitude of
// its gradient in the last two axes (central differences, one-sided at the edges), each
// standardised to zero mean and unit variance so that both count alike in the distance. Each
// rank's block is sent feature by feature (all values, then all gradients), which is what a
// 1-D predictor can compress. Initial centroids: the points at indices i x N / K, the same in
// every run.
//
// Reported against the plain-MPI run of the same launch: the fraction of points assigned to the
// same cluster (agreement), the largest and the relative (L2) centroid difference, and the
// largest error of the scattered points. Exit status 1 if that error exceeds the scatter's bound
// (REL: eb x the range of the root's send buffer); the clustering itself has no bound to check.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "app_common.h"

namespace {

const char* const kUsage =
    "usage: mpiexec -n N zcoll-kmeans [--k K] [--points P] [common flags]\n"
    "  --k K          clusters (default 32)\n"
    "  --points P     use the first P grid cells of the field (default 0: all)\n"
    "  --iters K      Lloyd iterations, one centroid broadcast each (default 30)\n"
    "  default input: cesm_TS_10x192x288.f32 (all 10 days: 552,960 points)\n";

constexpr int kDims = 2;

// Feature-major: f[d * n + i] is feature d of point i.
std::vector<double> features(const zapp::Field& fld, size_t limit) {
  const auto& s = fld.shape;
  const size_t nx = s.back(), ny = s.size() >= 2 ? s[s.size() - 2] : 1, n = fld.v.size();
  const size_t np = limit ? std::min(limit, n) : n;
  std::vector<double> f(kDims * np);
  auto at = [&](size_t plane, size_t y, size_t x) { return fld.v[(plane * ny + y) * nx + x]; };
  for (size_t i = 0; i < np; ++i) {
    const size_t x = i % nx, y = (i / nx) % ny, plane = i / (nx * ny);
    const size_t x0 = x ? x - 1 : x, x1 = x + 1 < nx ? x + 1 : x, y0 = y ? y - 1 : y, y1 = y + 1 < ny ? y + 1 : y;
    const double gx = x1 > x0 ? (at(plane, y, x1) - at(plane, y, x0)) / static_cast<double>(x1 - x0) : 0;
    const double gy = y1 > y0 ? (at(plane, y1, x) - at(plane, y0, x)) / static_cast<double>(y1 - y0) : 0;
    f[i] = fld.v[i];
    f[np + i] = std::sqrt(gx * gx + gy * gy);
  }
  for (int d = 0; d < kDims; ++d) {
    double* v = f.data() + d * np;
    double mean = 0, var = 0;
    for (size_t i = 0; i < np; ++i) mean += v[i];
    mean /= static_cast<double>(np);
    for (size_t i = 0; i < np; ++i) var += (v[i] - mean) * (v[i] - mean);
    const double sd = std::sqrt(var / static_cast<double>(np));
    for (size_t i = 0; i < np; ++i) v[i] = sd > 0 ? (v[i] - mean) / sd : 0;
  }
  return f;
}

int run(zapp::Args& a) {
  const int k = static_cast<int>(a.integer("--k", 32, 1, 1 << 20));
  const long limit = a.integer("--points", 0, 0, 1L << 40);
  const zapp::Common c = zapp::parse_common(a, 30, zapp::dataset_file("cesm_TS_10x192x288.f32"));
  a.finish();
  const int p = zapp::g_size, r = zapp::g_rank;
  const std::vector<double> all = features(zapp::load_field(c.input), static_cast<size_t>(limit));
  const size_t n = all.size() / kDims, per = (n + p - 1) / p;
  if (static_cast<size_t>(k) > n) throw zapp::UsageError{"--k is larger than the number of points"};
  if (kDims * per > static_cast<size_t>(std::numeric_limits<int>::max()))
    throw zapp::UsageError{"too many points per rank for an int count"};
  const int block = static_cast<int>(kDims * per);

  // The root's send buffer: rank q's block is its points' values, then their gradients; the
  // last block is padded with the last point, which no rank counts.
  std::vector<double> send(static_cast<size_t>(p) * block);
  for (int q = 0; q < p; ++q)
    for (int d = 0; d < kDims; ++d)
      for (size_t i = 0; i < per; ++i) send[q * block + d * per + i] = all[d * n + std::min(q * per + i, n - 1)];
  const size_t mine = std::min(per, n - std::min(n, r * per));  // points of this rank
  const double* own = send.data() + static_cast<size_t>(r) * block;

  std::vector<int> ref_labels;
  std::vector<double> ref_cent;
  zapp::RunFn body = [&](const zapp::Config& cfg, zapp::Net& net, zapp::Record& rec) {
    std::vector<double> pts(block), cent(static_cast<size_t>(kDims) * k), acc(static_cast<size_t>(kDims + 1) * k);
    std::vector<int> labels(mine);
    if (r == 0)
      for (int j = 0; j < k; ++j)
        for (int d = 0; d < kDims; ++d) cent[d * k + j] = all[d * n + static_cast<size_t>(j) * n / k];
    net.start();
    net.scatter(send.data(), pts.data(), block, MPI_DOUBLE, 0);
    for (int it = 0; it < c.iters; ++it) {
      net.bcast(cent.data(), kDims * k, MPI_DOUBLE, 0);
      std::fill(acc.begin(), acc.end(), 0.0);
      for (size_t i = 0; i < mine; ++i) {
        int best = 0;
        double best_d = INFINITY;
        for (int j = 0; j < k; ++j) {
          double dist = 0;
          for (int d = 0; d < kDims; ++d) {
            const double e = pts[d * per + i] - cent[d * k + j];
            dist += e * e;
          }
          if (dist < best_d) {
            best_d = dist;
            best = j;
          }
        }
        labels[i] = best;
        for (int d = 0; d < kDims; ++d) acc[d * k + best] += pts[d * per + i];
        acc[kDims * k + best] += 1;
      }
      net.reduce(acc.data(), static_cast<int>(acc.size()), MPI_DOUBLE, MPI_SUM, 0);
      if (r == 0)
        for (int j = 0; j < k; ++j)
          if (acc[kDims * k + j] > 0)  // an empty cluster keeps its centroid
            for (int d = 0; d < kDims; ++d) cent[d * k + j] = acc[d * k + j] / acc[kDims * k + j];
    }
    net.stop();
    if (cfg.mode == "mpi") {
      ref_labels = labels;
      ref_cent = cent;
    }
    double same = 0;
    for (size_t i = 0; i < mine; ++i) same += labels[i] == ref_labels[i];
    MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    const zapp::ErrStats ce = zapp::compare(ref_cent.data(), cent.data(), r == 0 ? cent.size() : 0);
    // Every rank knows its own block exactly (it computed all the features), so the points it
    // received are checked against their originals; the padding is not a point.
    std::vector<double> own_pts, got_pts;
    for (int d = 0; d < kDims; ++d) {
      own_pts.insert(own_pts.end(), own + d * per, own + d * per + mine);
      got_pts.insert(got_pts.end(), pts.begin() + d * per, pts.begin() + d * per + mine);
    }
    const zapp::ErrStats pe = zapp::compare(own_pts.data(), got_pts.data(), own_pts.size());
    const double eb_abs = cfg.mode == "mpi" ? 0 : zapp::eb_abs_for(send.data(), send.size(), cfg.eb_mode, cfg.eb);
    rec.num("k", k);
    rec.num("points", static_cast<double>(n), "%.0f");
    rec.num("agreement", same / static_cast<double>(n), "%.6f", true);
    rec.num("centroid_max_err", ce.max_abs, "%.3g", true);
    rec.num("centroid_rel_err", ce.l2_rel, "%.3g");
    rec.within("point_max_err", pe.max_abs, eb_abs);
  };
  return zapp::run_configs("kmeans", c, body);
}

}  // namespace

int main(int argc, char** argv) { return zapp::app_main(argc, argv, "zcoll-kmeans", kUsage, run); }
