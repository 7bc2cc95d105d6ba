// zcoll-image-stacking: the case study. Every rank holds distinct real 2-D images (time
// steps, levels or slices of a field), stacks them locally, and the ranks' stacks are summed
// with zcoll_allreduce and with MPI_Allreduce in the same run. Rank 0 prints the time of
// each, the speedup, the compression ratio and the quality of zcoll's stack (PSNR, NRMSE,
// max error) against the exact stack, checks the documented bound on every pixel, and
// writes three PNGs: the exact stack, zcoll's stack and the error map.
//
//   mpiexec -n P zcoll-image-stacking [--field FILE] [--size WxH] [--images-per-rank K]
//        [--eb X] [--eb-mode rel|abs] [--iters N] [--warmup W] [--threads T]
//        [--algo NAME] [--out DIR] [--link TEXT] [--json]
//
// --algo: zcoll's allreduce algorithm by zcoll_algorithm_name (default auto, the cost
// model's choice, which may be plain MPI where that is faster; a fixed compressing one makes
// the run fail if its last call did not compress).
//
// Images: FILE is a raw little-endian float32 or float64 field named NAME_AxBxC.f32 (or
// .f64, converted to float), as in data/. Its last two dimensions are the image, the leading
// ones the stack of images (cesm_TS_10x192x288: 10 monthly surface-temperature maps).
// Rank r takes images r*K .. r*K+K-1 (K defaults to the number of images over P, so every
// image is used once), adds them in double and rounds the sum to float: that float image is
// what both MPI and zcoll reduce. To make messages large enough to matter on a network, each
// image is tiled to W x H by reflection (mirrored copies, so there are no seams). The exact
// stack is the sum over ranks of those float images in double; rank 0 rebuilds it from the
// file, without communication, because the tiling makes it one small tile repeated.
//
// Bound: zcoll's homomorphic SUM guarantees |stack - exact| <= P x eb_abs plus the float
// rounding of the sum (P x 2^-24 x sum over ranks of |image|); the program exits 1 if any
// pixel breaks it.
#include <mpi.h>
#include <zcoll.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "png_writer.h"
#include "tool_support.h"

namespace {

using zcoll_apps::write_png;

struct Options {
  std::string field = zsupport::data_file("cesm_TS_10x192x288.f32");
  size_t width = 4096, height = 4096;
  int images_per_rank = 0;  // 0: images / ranks
  double eb = 1e-4;
  int eb_mode = ZCOLL_EB_REL;
  // AUTO runs each candidate path in its first calls (cost_model.cc); the warm-up covers them.
  int iters = 5, warmup = 4, threads = 0;
  int algorithm = ZCOLL_ALGO_AUTO;
  std::string out = "image_stacking_out";
  std::string link = "unspecified";
  bool json = false;
};

[[noreturn]] void usage(const char* msg) {
  std::fprintf(stderr,
               "zcoll-image-stacking: %s\n"
               "usage: mpiexec -n P zcoll-image-stacking [--field FILE] [--size WxH] [--images-per-rank K]\n"
               "         [--eb X] [--eb-mode rel|abs] [--iters N] [--warmup W] [--threads T] [--out DIR]\n"
               "         [--algo NAME] [--link TEXT] [--json]\n",
               msg);
  MPI_Abort(MPI_COMM_WORLD, 2);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value for " + a).c_str());
      return argv[++i];
    };
    if (a == "--field") o.field = value();
    else if (a == "--size") {
      const std::string v = value();
      if (std::sscanf(v.c_str(), "%zux%zu", &o.width, &o.height) != 2 || !o.width || !o.height)
        usage("--size takes WxH");
    } else if (a == "--images-per-rank") o.images_per_rank = std::atoi(value().c_str());
    else if (a == "--eb") o.eb = std::atof(value().c_str());
    else if (a == "--eb-mode") {
      const std::string v = value();
      if (v != "rel" && v != "abs") usage("--eb-mode takes rel or abs");
      o.eb_mode = v == "rel" ? ZCOLL_EB_REL : ZCOLL_EB_ABS;
    } else if (a == "--iters") o.iters = std::atoi(value().c_str());
    else if (a == "--warmup") o.warmup = std::atoi(value().c_str());
    else if (a == "--threads") o.threads = std::atoi(value().c_str());
    else if (a == "--algo") {
      if (zcoll_algorithm_from_name(value().c_str(), &o.algorithm)) usage("--algo takes an algorithm's name");
    } else if (a == "--out") o.out = value();
    else if (a == "--link") o.link = value();
    else if (a == "--json") o.json = true;
    else usage(("unknown option " + a).c_str());
  }
  if (o.iters < 1 || o.warmup < 0 || o.threads < 0 || !(o.eb > 0) || o.images_per_rank < 0)
    usage("bad numeric option");
  if (o.width * o.height > static_cast<size_t>(INT32_MAX)) usage("image too large for one MPI call");
  return o;
}

// A field file: its images (the last two dimensions) as float.
struct Field {
  std::string name;
  size_t images = 0, rows = 0, cols = 0;
  std::vector<float> values;
  const float* image(size_t k) const { return values.data() + k * rows * cols; }
};

template <class T>
bool read_as_float(const std::string& path, size_t n, std::vector<float>* out, std::string* err) {
  std::vector<T> raw;
  if (!zsupport::read_values(path, &raw, err)) return false;
  if (raw.size() < n) {
    *err = "short file (size does not match its dimensions): " + path;
    return false;
  }
  out->assign(raw.begin(), raw.begin() + static_cast<ptrdiff_t>(n));
  return true;
}

bool load_field(const std::string& path, Field* f, std::string* err) {
  const std::string base = std::filesystem::path(path).filename().string();
  const std::vector<size_t> dims = zsupport::shape_from_name(path);
  if (dims.empty()) {
    *err = "file name must look like NAME_AxBxC.f32 or .f64: " + base;
    return false;
  }
  const std::string dtype = zsupport::dtype_from_name(path);
  if (dtype.empty()) {
    *err = "extension must be .f32 or .f64: " + base;
    return false;
  }
  if (dims.size() < 2) {
    *err = "need at least two dimensions (an image) in " + base;
    return false;
  }
  f->name = base.substr(0, base.find_last_of('_'));
  f->rows = dims[dims.size() - 2];
  f->cols = dims.back();
  f->images = 1;
  for (size_t i = 0; i + 2 < dims.size(); ++i) f->images *= dims[i];
  const size_t n = f->images * f->rows * f->cols;
  return dtype == "f32" ? read_as_float<float>(path, n, &f->values, err)
                        : read_as_float<double>(path, n, &f->values, err);
}

// Rank r's stack of one tile: its K images added in double, rounded to float.
std::vector<float> local_tile(const Field& f, int rank, int k) {
  std::vector<double> acc(f.rows * f.cols, 0.0);
  for (int j = 0; j < k; ++j) {
    const float* img = f.image((static_cast<size_t>(rank) * k + j) % f.images);
    for (size_t i = 0; i < acc.size(); ++i) acc[i] += img[i];
  }
  return std::vector<float>(acc.begin(), acc.end());
}

// Index into a tile of n for coordinate i of the tiled image: mirrored repetition.
size_t reflect(size_t i, size_t n) {
  const size_t m = i % (2 * n);
  return m < n ? m : 2 * n - 1 - m;
}

template <class T>
void tile_to(const std::vector<T>& tile, size_t rows, size_t cols, size_t height, size_t width, std::vector<T>* out) {
  out->resize(height * width);
  for (size_t y = 0; y < height; ++y) {
    const T* src = tile.data() + reflect(y, rows) * cols;
    T* dst = out->data() + y * width;
    for (size_t x = 0; x < width; ++x) dst[x] = src[reflect(x, cols)];
  }
}

// The median of the slowest rank's time over the timed calls; -1 where a call failed.
// The slowest rank's time of every call, warm-up calls first, in *times; returns the median
// of the timed ones, or -1 where a call failed.
double time_calls(const Options& o, const std::function<bool()>& call, std::vector<double>* times) {
  int failed = 0;
  zsupport::time_collective(0, o.warmup + o.iters, [&] { return call() ? 0 : 1; }, &failed, times);
  if (failed) return -1;
  return zsupport::median(std::vector<double>(times->begin() + o.warmup, times->end()));
}

// What zcoll ran in each call: with AUTO its first calls try the candidate paths (the cost
// model learns each from its own runs), so the demo says which path every call took.
struct CallPath {
  int algorithm = ZCOLL_ALGO_MPI;
  size_t raw_bytes = 0, wire_bytes = 0;
  double eb_abs = 0;  // 0: plain MPI
};

// "ring x4, recursive_doubling x1": the paths of calls [begin, end), in order of first use.
std::string path_counts(const std::vector<CallPath>& calls, size_t begin, size_t end) {
  std::vector<std::pair<int, int>> counts;
  for (size_t i = begin; i < end; ++i) {
    auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == calls[i].algorithm; });
    if (it == counts.end()) counts.emplace_back(calls[i].algorithm, 1);
    else ++it->second;
  }
  std::string text;
  for (const auto& [algorithm, n] : counts)
    text += (text.empty() ? "" : ", ") + std::string(zcoll_algorithm_name(algorithm)) + " x" + std::to_string(n);
  return text;
}

struct Quality {
  double max_err = 0, mean_err = 0, rmse = 0, psnr_db = INFINITY, nrmse = 0, worst_over_bound = 0;
};

// result against the exact stack (ref, tiled from its tile), with the per-pixel bound.
Quality compare(const std::vector<float>& result, const std::vector<double>& ref_tile,
                const std::vector<double>& abs_tile, const Field& f, const Options& o, int ranks, double eb_abs) {
  Quality q;
  double lo = INFINITY, hi = -INFINITY, sum = 0, sq = 0;
  const double u = std::ldexp(1.0, -24);
  for (size_t y = 0; y < o.height; ++y) {
    const size_t ty = reflect(y, f.rows) * f.cols;
    for (size_t x = 0; x < o.width; ++x) {
      const size_t t = ty + reflect(x, f.cols);
      const double ref = ref_tile[t], e = static_cast<double>(result[y * o.width + x]) - ref;
      lo = std::min(lo, ref);
      hi = std::max(hi, ref);
      sum += e;
      sq += e * e;
      q.max_err = std::max(q.max_err, std::fabs(e));
      const double bound = ranks * eb_abs + ranks * u * abs_tile[t];
      if (bound > 0) q.worst_over_bound = std::max(q.worst_over_bound, std::fabs(e) / bound);
      else if (e != 0) q.worst_over_bound = INFINITY;
    }
  }
  const double n = static_cast<double>(o.width * o.height);
  q.mean_err = sum / n;
  q.rmse = std::sqrt(sq / n);
  const double range = hi - lo;
  q.nrmse = zsupport::nrmse(range, q.rmse);
  q.psnr_db = zsupport::psnr_db(range, q.rmse);
  return q;
}

// One tile of a stack, as a picture: grey over the exact stack's range, enlarged by an
// integer factor so that small tiles are visible.
struct Picture {
  unsigned scale, width, height;
  explicit Picture(const Field& f)
      : scale(static_cast<unsigned>(std::max<size_t>(1, (512 + std::max(f.rows, f.cols) - 1) /
                                                           std::max(f.rows, f.cols)))),
        width(static_cast<unsigned>(f.cols) * scale),
        height(static_cast<unsigned>(f.rows) * scale) {}

  template <class Pixel>
  std::vector<uint8_t> render(const Field& f, unsigned channels, Pixel&& pixel) const {
    std::vector<uint8_t> px(static_cast<size_t>(width) * height * channels);
    for (unsigned y = 0; y < height; ++y)
      for (unsigned x = 0; x < width; ++x) pixel((y / scale) * f.cols + x / scale, &px[(y * width + x) * channels]);
    return px;
  }
};

uint8_t to_byte(double t) { return static_cast<uint8_t>(std::lround(255 * std::clamp(t, 0.0, 1.0))); }

bool write_pictures(const Options& o, const Field& f, const std::vector<float>& zc,
                    const std::vector<double>& ref_tile, const std::vector<double>& abs_tile, int ranks,
                    double eb_abs, std::string* names) {
  const Picture pic(f);
  const auto [lo_it, hi_it] = std::minmax_element(ref_tile.begin(), ref_tile.end());
  const double lo = *lo_it, span = *hi_it > *lo_it ? *hi_it - *lo_it : 1.0;
  // The tile's pixels in zcoll's result are the top-left tile of the image (reflection
  // leaves the first tile as it is).
  auto result_at = [&](size_t t) { return static_cast<double>(zc[(t / f.cols) * o.width + t % f.cols]); };
  const double u = std::ldexp(1.0, -24);
  const std::string exact = o.out + "/stack_exact.png", zcoll = o.out + "/stack_zcoll.png",
                    error = o.out + "/stack_error.png";
  *names = exact + " " + zcoll + " " + error;
  return write_png(exact, pic.render(f, 1, [&](size_t t, uint8_t* p) { *p = to_byte((ref_tile[t] - lo) / span); }),
                   pic.width, pic.height, 1) &&
         write_png(zcoll, pic.render(f, 1, [&](size_t t, uint8_t* p) { *p = to_byte((result_at(t) - lo) / span); }),
                   pic.width, pic.height, 1) &&
         // Error over its bound: blue below zero, red above, white where it is 0.
         write_png(error,
                   pic.render(f, 3,
                              [&](size_t t, uint8_t* p) {
                                const double bound = ranks * eb_abs + ranks * u * abs_tile[t];
                                const double e = bound > 0 ? (result_at(t) - ref_tile[t]) / bound : 0;
                                const uint8_t fade = to_byte(1 - std::fabs(e));
                                p[0] = e < 0 ? fade : 255;
                                p[1] = fade;
                                p[2] = e > 0 ? fade : 255;
                              }),
                   pic.width, pic.height, 3);
}

int run(const Options& o, int rank, int ranks) {
  Field f;
  std::string err;
  if (!load_field(o.field, &f, &err)) {
    if (rank == 0) std::fprintf(stderr, "zcoll-image-stacking: %s\n", err.c_str());
    return 1;
  }
  const int k = o.images_per_rank ? o.images_per_rank : std::max<int>(1, static_cast<int>(f.images) / ranks);
  const bool distinct = static_cast<size_t>(k) * ranks <= f.images;

  std::vector<float> image;
  tile_to(local_tile(f, rank, k), f.rows, f.cols, o.height, o.width, &image);
  const int count = static_cast<int>(image.size());
  std::vector<float> mpi_stack(image.size()), zcoll_stack(image.size());

  zcoll_config cfg;
  zcoll_config_init(&cfg);
  cfg.codec.eb_mode = o.eb_mode;
  cfg.codec.eb = o.eb;
  cfg.codec.threads = o.threads;
  cfg.algorithm = o.algorithm;
  zcoll_comm zc = nullptr;
  int rc = zcoll_comm_create(MPI_COMM_WORLD, &cfg, &zc);
  if (rc) {
    if (rank == 0) std::fprintf(stderr, "zcoll_comm_create: %s\n", zcoll_strerror(rc));
    return 1;
  }
  std::vector<double> mpi_times, zcoll_times;
  const double t_mpi = time_calls(
      o,
      [&] {
        return MPI_Allreduce(image.data(), mpi_stack.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD) ==
               MPI_SUCCESS;
      },
      &mpi_times);
  zcoll_stats st{};
  std::vector<CallPath> paths;
  const double t_zcoll = time_calls(
      o,
      [&] {
        rc = zcoll_allreduce(image.data(), zcoll_stack.data(), count, MPI_FLOAT, MPI_SUM, zc);
        zcoll_last_stats(zc, &st);
        paths.push_back({st.algorithm, st.raw_bytes, st.wire_bytes, st.eb_abs});
        return rc == ZCOLL_SUCCESS;
      },
      &zcoll_times);
  zcoll_comm_free(&zc);
  if (t_zcoll < 0 || t_mpi < 0) {
    if (rc) std::fprintf(stderr, "rank %d: zcoll_allreduce: %s\n", rank, zcoll_strerror(rc));
    return 1;
  }
  // Compression ratio over all ranks and the timed calls: raw bytes sent / bytes on the wire.
  // The paths differ in what they send (the ring's second half carries sums, which compress
  // less), so one call's ratio would depend on which path AUTO tried last.
  double bytes[2] = {0, 0}, total[2];
  for (size_t i = static_cast<size_t>(o.warmup); i < paths.size(); ++i) {
    bytes[0] += static_cast<double>(paths[i].raw_bytes);
    bytes[1] += static_cast<double>(paths[i].wire_bytes);
  }
  MPI_Reduce(bytes, total, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  const auto [lo_it, hi_it] = std::minmax_element(image.begin(), image.end());
  double range[2] = {-static_cast<double>(*lo_it), static_cast<double>(*hi_it)};  // -min, max
  MPI_Allreduce(MPI_IN_PLACE, range, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (rank != 0) return 0;

  // The exact stack and the sum of magnitudes (for the rounding allowance), one tile.
  std::vector<double> ref_tile(f.rows * f.cols, 0.0), abs_tile(ref_tile.size(), 0.0);
  for (int r = 0; r < ranks; ++r) {
    const std::vector<float> t = local_tile(f, r, k);
    for (size_t i = 0; i < t.size(); ++i) {
      ref_tile[i] += t[i];
      abs_tile[i] += std::fabs(static_cast<double>(t[i]));
    }
  }
  // The bound a compressed call resolved; where AUTO ran plain MPI in every call, the one it
  // would have (REL: eb times the range of every rank's image).
  const auto compressed = std::find_if(paths.begin(), paths.end(), [](const CallPath& c) { return c.eb_abs > 0; });
  const double eb_abs = compressed != paths.end()     ? compressed->eb_abs
                        : o.eb_mode == ZCOLL_EB_REL ? o.eb * (range[1] + range[0])
                                                    : o.eb;
  const Quality qz = compare(zcoll_stack, ref_tile, abs_tile, f, o, ranks, eb_abs);
  const Quality qm = compare(mpi_stack, ref_tile, abs_tile, f, o, ranks, eb_abs);
  const double ratio = total[1] > 0 ? total[0] / total[1] : 0;
  std::string pngs;
  std::error_code mkdir_error;
  std::filesystem::create_directories(o.out, mkdir_error);
  const bool pictures = write_pictures(o, f, zcoll_stack, ref_tile, abs_tile, ranks, eb_abs, &pngs);
  const bool within = qz.worst_over_bound <= 1.0;
  // A fixed compressing algorithm must compress a call above min_bytes; AUTO may choose plain
  // MPI, whose result is within the bound too (its float rounding only).
  const bool path_ok = st.compressed || o.algorithm == ZCOLL_ALGO_AUTO || o.algorithm == ZCOLL_ALGO_MPI;

  const double mib = static_cast<double>(image.size()) * sizeof(float) / (1 << 20);
  const size_t warm = static_cast<size_t>(o.warmup);
  const std::string timed_paths = path_counts(paths, warm, paths.size());
  std::string warmup_paths, warmup_times;
  for (size_t i = 0; i < warm; ++i) {
    char t[32];
    std::snprintf(t, sizeof t, "%s%.4f", i ? "," : "", zcoll_times[i]);
    warmup_paths += (i ? "," : "") + ("\"" + std::string(zcoll_algorithm_name(paths[i].algorithm)) + "\"");
    warmup_times += t;
  }
  if (o.json) {
    std::printf(
        "{\"app\":\"image_stacking\",\"field\":\"%s\",\"ranks\":%d,\"images_per_rank\":%d,\"width\":%zu,"
        "\"height\":%zu,\"mib_per_rank\":%.1f,\"link\":\"%s\",\"eb_mode\":\"%s\",\"eb\":%g,\"eb_abs\":%.9g,"
        "\"time_mpi_s\":%.6f,\"time_zcoll_s\":%.6f,\"speedup_vs_mpi\":%.4f,\"ratio\":%.4f,\"psnr_db\":%.3f,"
        "\"nrmse\":%.6g,\"max_abs_err\":%.9g,\"mean_err\":%.6g,\"max_err_over_bound\":%.6f,"
        "\"mpi_max_abs_err\":%.9g,\"within_bound\":%s,\"last_call_compressed\":%s,\"warmup\":%d,"
        "\"iters\":%d,\"timed_paths\":\"%s\",\"warmup_paths\":[%s],\"warmup_times_s\":[%s]}\n",
        f.name.c_str(), ranks, k, o.width, o.height, mib, o.link.c_str(), o.eb_mode == ZCOLL_EB_REL ? "rel" : "abs",
        o.eb, eb_abs, t_mpi, t_zcoll, t_mpi / t_zcoll, ratio, qz.psnr_db, qz.nrmse, qz.max_err, qz.mean_err,
        qz.worst_over_bound, qm.max_err, within ? "true" : "false", st.compressed ? "true" : "false", o.warmup,
        o.iters, timed_paths.c_str(), warmup_paths.c_str(), warmup_times.c_str());
  } else {
    std::printf("image stacking: %s, %zu images of %zux%zu; %d ranks x %d images each%s\n", f.name.c_str(), f.images,
                f.rows, f.cols, ranks, k, distinct ? "" : " (more than the field has: some repeat)");
    std::printf("  each rank's stack tiled by reflection to %zux%zu float (%.1f MiB per rank)\n", o.width, o.height,
                mib);
    std::printf("  link: %s\n", o.link.c_str());
    std::printf("  eb: %s %g -> eb_abs %.6g per input; guaranteed |stack - exact| <= %d x eb_abs (+ float rounding)\n",
                o.eb_mode == ZCOLL_EB_REL ? "REL" : "ABS", o.eb, eb_abs, ranks);
    std::printf("\n  %-16s %9s %8s %7s %11s %9s %10s %12s\n", "", "time_s", "speedup", "ratio", "max_err",
                "PSNR_dB", "NRMSE", "err/bound");
    std::printf("  %-16s %9.4f %8.2f %7.2f %11.4g %9.2f %10.3g %12s\n", "MPI_Allreduce", t_mpi, 1.0, 1.0, qm.max_err,
                qm.psnr_db, qm.nrmse, "-");
    char ratio_text[16] = "-";  // no timed call compressed
    if (ratio > 0) std::snprintf(ratio_text, sizeof ratio_text, "%.2f", ratio);
    std::printf("  %-16s %9.4f %8.2f %7s %11.4g %9.2f %10.3g %12.4f\n", "zcoll_allreduce", t_zcoll, t_mpi / t_zcoll,
                ratio_text, qz.max_err, qz.psnr_db, qz.nrmse, qz.worst_over_bound);
    std::printf("\n  times: median of %d calls after %d warm-up, slowest rank; errors against the exact stack\n",
                o.iters, o.warmup);
    std::printf("  (sum of the ranks' float images in double); MPI's error is its own float rounding.\n");
    const bool automatic = o.algorithm == ZCOLL_ALGO_AUTO;
    std::printf("  zcoll's paths (%s), timed calls: %s; the ratio is theirs\n",
                automatic ? "AUTO's choice, the same on every rank" : "--algo", timed_paths.c_str());
    if (warm && automatic) {
      std::printf("  warm-up, where AUTO runs each candidate once or twice to learn its time:");
      constexpr size_t kListed = 8;
      for (size_t i = 0; i < std::min(warm, kListed); ++i)
        std::printf("%s %s %.4f s", i ? "," : "", zcoll_algorithm_name(paths[i].algorithm), zcoll_times[i]);
      if (warm > kListed) std::printf("; then %s", path_counts(paths, kListed, warm).c_str());
      std::printf("\n");
    }
    if (o.link.find("shared memory") != std::string::npos)
      std::printf("  NOTE: shared memory is not a network; the speedup here says nothing about one.\n");
    std::printf("  pictures (one tile, x%u): %s\n", Picture(f).scale, pictures ? pngs.c_str() : "NOT WRITTEN");
  }
  if (!st.compressed)
    std::fprintf(stderr, "zcoll-image-stacking: %szcoll's last call ran plain MPI (%s)\n", path_ok ? "" : "FAILED: ",
                 o.algorithm == ZCOLL_ALGO_AUTO ? "AUTO's choice" : "message below min_bytes?");
  if (!within) std::fprintf(stderr, "zcoll-image-stacking: FAILED: a pixel is outside the guaranteed bound\n");
  if (!pictures) std::fprintf(stderr, "zcoll-image-stacking: cannot write the PNGs into %s\n", o.out.c_str());
  return within && pictures && path_ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const Options o = parse(argc, argv);
  int rc = run(o, rank, ranks);
  // Every rank leaves with the worst status, and they enter MPI_Finalize together: MPICH's
  // finalize over TCP can hang when one rank arrives late (docs/pmpi.md). The last line
  // tells bench/netem/run.sh (--exit-line) that the work is done, should that hang happen.
  MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) std::fprintf(stderr, "zcoll-image-stacking: exit status %d\n", rc);
  MPI_Finalize();
  return rc;
}
