// zcoll-bench: benchmarks that print measured ratios side by side.
//   zcoll-bench codec [--input FILE --dtype f32|f64] [--eb-mode abs|rel] [--eb X] [--codec fzl|lpbyte|lpbit|szx]
//                     [--threads N] [--repeat K] [--chunk N] [--dims AxBxC|auto] [--json]
// Without --input it runs every field in data/ and ../shared/datasets at REL 1e-2..1e-5 and
// prints a table. Throughput is uncompressed bytes per second, best of K runs; memcpy of a
// buffer of the same size is measured in the same run as the yardstick.
//   zcoll-bench homomorphic --input A --input B [--dtype f32|f64] [--eb-mode abs|rel] [--eb X]
//                           [--threads N] [--iters K] [--json]
// C = A + B on compressed data (no MPI). A and B (the first count elements of each, count the
// shorter length) are compressed with the same absolute bound (REL: eb x the value range of A
// and B together); then, median of K runs (default 5) each, alternating (a) and (b) after one
// warm-up, (a) homomorphic:
// zcoll_combine(ZCOLL_OP_SUM) of the two streams, (b) decompress-add-compress (DOC): both
// streams decompressed, added elementwise in the element type (OpenMP, same threads) and the
// sum compressed with ABS eb_abs. Throughput = count x element size (one operand's raw bytes)
// / seconds. max_err_over_eb = max |decompressed result - (A + B in double)| / eb_abs, also for
// DOC (doc_max_err_over_eb). Exit status 1 if a zcoll call fails, an input is unusable, or an
// error exceeds zcoll.h's bound: 2 eb_abs for the homomorphic sum, 3 eb_abs for DOC (each
// operand's eb plus the recompression's), each plus the element type's rounding of the sum,
// 2 u (|a| + |b|) (u = 2^-24 for f32, 2^-53 for f64; the largest over the elements); bound_over_eb
// reports the homomorphic one. The same run also times the step a ring reduction makes on
// every rank, B compressed plus A uncompressed: (c) zcoll_combine_values(SUM, A, B) against
// (d) B decompressed, A added, the sum compressed (bound 2 eb_abs each, plus rounding; keys
// fold_*). 2 for a usage error.
//   mpiexec -n N zcoll-bench coll --op OP --input FILE ... (see coll_bench.cc): compressed
// collectives (reductions included) against plain MPI on the same buffers; MPI is initialised
// only there.
//   mpiexec -n N zcoll-bench calls ... (see calls_bench.cc): the per-call cost of zcoll's front end
// on small collectives that it does not compress, against PMPI_ and MPI_ entry points.
//   mpiexec -n N zcoll-bench h5write --input FILE ... --out FILE.h5 --mode MODE (see
// h5write_bench.cc): compressed parallel HDF5 writes, timed to storage and read back; only in
// builds with libzcoll_h5 (ZCOLL_BENCH_H5WRITE).
// `zcoll-bench --help` lists the verbs; `zcoll-bench VERB --help` describes one.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <omp.h>
#include <string>
#include <vector>

#include "tool_support.h"
#include "zcoll.h"

namespace fs = std::filesystem;

namespace {

struct Options {
  std::string input, dtype, eb_mode = "rel", codec = "fzl", dims;
  std::vector<std::string> inputs;  // every --input, in order (homomorphic: A and B)
  double eb = 1e-4;
  int threads = 1, repeat = 5, iters = 5;
  size_t chunk = 0;
  bool json = false, eb_given = false;
};

std::string codec_usage() {
  return "usage: zcoll-bench codec [--input FILE --dtype f32|f64] [--eb-mode abs|rel] [--eb X]\n"
         "                         [--codec " + zsupport::codec_names("|", "|") +
         "] [--threads N] [--repeat K] [--chunk N]\n"
         "                         [--dims AxBxC|auto] [--json]\n";
}

const char* const kHomomorphicUsage =
    "usage: zcoll-bench homomorphic --input A --input B [--dtype f32|f64] [--eb-mode abs|rel]\n"
    "                         [--eb X] [--threads N] [--iters K] [--json]\n"
    "                         (A + B: zcoll_combine against decompress-add-compress, medians of K\n"
    "                         (default 5) alternating runs each; REL: of the range of A and B; threads\n"
    "                         default 1)\n";

const char* const kCollSynopsis =
    "usage: mpiexec -n N zcoll-bench coll --op OP --input FILE [--dtype f32|f64] [--eb-mode abs|rel]\n"
    "                         [--eb X] [--algo mpi|zcoll|zcoll-homomorphic|zcoll-doc|cprp2p|...]\n"
    "                         [--bytes PER_RANK] [--reduce-op sum|min|max] [--iters K] [--warmup W]\n"
    "                         [--threads T] [--root R] [--json]\n"
    "                         OP: allgather|bcast|scatter|gather|alltoall|reduce_scatter|allreduce|reduce\n"
    "                         (zcoll-bench coll --help for details)\n";

#ifdef ZCOLL_BENCH_H5WRITE
const char* const kH5writeSynopsis =
    "usage: mpiexec -n N zcoll-bench h5write --input F [--input F ...] --out FILE\n"
    "                         --mode raw|filter|predictive|pipelined [--eb-mode rel|abs] [--eb X]\n"
    "                         [--reorder on|off] [--extra-space X] [--mib-per-rank M] [--fields K]\n"
    "                         [--codec NAME] [--threads T] [--no-verify] [--json]\n"
    "                         (zcoll-bench h5write --help for details)\n";
#endif

const char* const kCallsSynopsis =
    "usage: mpiexec -n N zcoll-bench calls [--op allreduce|bcast|allgather] [--counts N,N,...]\n"
    "                         [--input FILE] [--calls K] [--rounds R] [--warmup W] [--json]\n"
    "                         (zcoll-bench calls --help for details)\n";

// Every verb's synopsis, "usage: " dropped after the first.
std::string all_usage() {
  std::vector<std::string> verbs = {codec_usage(), kHomomorphicUsage, kCollSynopsis, kCallsSynopsis};
#ifdef ZCOLL_BENCH_H5WRITE
  verbs.push_back(kH5writeSynopsis);
#endif
  std::string out;
  for (const std::string& u : verbs) out += out.empty() ? u : "       " + u.substr(7);
  return out;
}

[[noreturn]] void usage(const char* msg) {
  std::fprintf(stderr, "zcoll-bench: %s\n%s", msg, all_usage().c_str());
  std::exit(2);
}

[[noreturn]] void help(const std::string& text) {
  std::fputs(text.c_str(), stdout);
  std::exit(0);
}

const char* const kCodecHelp =
    "Without --input: every field in data/ and ../shared/datasets (or the directories in\n"
    "$ZCOLL_DATA_DIRS) at REL 1e-2..1e-5, as a table. With --input: that field, one line (or JSON\n"
    "object with --json). Throughput is uncompressed bytes per second, best of --repeat runs\n"
    "(default 5), next to memcpy of a buffer of the same size. --dims gives the shape hint (auto:\n"
    "from the _AxBxC in the file name); --chunk the chunk length in elements. Exit status 1 if an\n"
    "element is outside the bound, 2 for a usage error.\n";

const char* const kHomomorphicHelp =
    "C = A + B on compressed data (no MPI): zcoll_combine of the two streams against\n"
    "decompress-add-compress, and zcoll_combine_values (A uncompressed, B compressed: a ring\n"
    "reduction's step) against B decompressed, A added, compressed. Exit status 1 if an error\n"
    "exceeds zcoll.h's bound, 2 for a usage error.\n";

const char* const kVerbs =
    "zcoll-bench: benchmarks of zcoll's codecs and collectives. Verbs:\n"
    "  codec        ratio, throughput and error of one field, or the table of the data/ fields\n"
    "  homomorphic  A + B on compressed streams against decompress-add-compress (no MPI)\n"
    "  coll         one collective, compressed against plain MPI on the same buffers (under mpiexec)\n"
    "  calls        what zcoll adds to small collectives it does not compress: per-call time against\n"
    "               PMPI_ and MPI_ (under mpiexec; under zcoll-run, MPI_ is the drop-in layer's)\n"
#ifdef ZCOLL_BENCH_H5WRITE
    "  h5write      fields written to one parallel HDF5 file: uncompressed, through the zcoll filter,\n"
    "               or with zcoll_h5_writer (predictive, pipelined); timed to storage (under mpiexec)\n"
#endif
    "zcoll-bench VERB --help describes one.\n\n";

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Seconds of each of k calls of f.
template <class F>
std::vector<double> time_calls(int k, F&& f) {
  std::vector<double> t;
  for (int i = 0; i < k; ++i) {
    const double t0 = now();
    f();
    t.push_back(now() - t0);
  }
  return t;
}

template <class F>
double best_of(int k, F&& f) {
  const auto t = time_calls(k, f);
  return *std::min_element(t.begin(), t.end());
}

// Medians of k calls each of f and g, alternated (f, g, f, g, ...) after one untimed
// warm-up call of each, so that a change in the host's speed during the run affects
// both sides alike.
template <class F, class G>
std::pair<double, double> medians_alternating(int k, F&& f, G&& g) {
  f();
  g();
  std::vector<double> tf, tg;
  for (int i = 0; i < k; ++i) {
    tf.push_back(time_calls(1, f)[0]);
    tg.push_back(time_calls(1, g)[0]);
  }
  return {zsupport::median(tf), zsupport::median(tg)};
}

// Published fZ-light ratios measured on these machines (shared/notes/anchors.md), the
// reference the codec's ratio target is stated against. Not zcoll results.
double fzlight_reference(const std::string& file, double rel) {
  static const std::map<std::string, std::vector<double>> table = {
      {"cesm_TS", {7.83, 4.47, 3.06}},     {"echam5_T", {12.12, 6.06, 3.77}},
      {"seismic_mobilavo", {9.83, 5.03, 3.30}}, {"turb_wmag", {6.67, 3.98, 2.82}},
      {"isabel_velmag", {11.99, 7.43, 5.38}}, {"nyx_phigrav", {21.60, 11.22, 7.16}}};
  for (const auto& [key, v] : table) {
    if (file.find(key) == std::string::npos) continue;
    if (std::fabs(rel - 1e-2) < 1e-12) return v[0];
    if (std::fabs(rel - 1e-3) < 1e-13) return v[1];
    if (std::fabs(rel - 1e-4) < 1e-14) return v[2];
  }
  return 0;
}

struct Result {
  std::string file, dtype, eb_mode, codec;
  size_t n = 0, bytes = 0, compressed = 0;
  double eb = 0, eb_abs = 0, ratio = 0, comp_gbps = 0, decomp_gbps = 0, memcpy_gbps = 0;
  double max_abs_err = 0, max_err_over_eb = 0, mean_err = 0, rmse = 0, psnr_db = 0, nrmse = 0;
  int threads = 1, ndims = 1;
  bool exact_specials = true;
};

template <class T>
void quality(const T* x, const T* y, size_t n, double eb_abs, Result& r) {
  double lo = INFINITY, hi = -INFINITY, sum = 0, sq = 0, mx = 0;
  size_t finite = 0;
  for (size_t i = 0; i < n; ++i) {
    const double a = x[i], b = y[i];
    if (!std::isfinite(a)) {
      if (std::memcmp(&x[i], &y[i], sizeof(T)) != 0) r.exact_specials = false;
      continue;
    }
    const double e = b - a;
    lo = std::min(lo, a);
    hi = std::max(hi, a);
    sum += e;
    sq += e * e;
    mx = std::max(mx, std::fabs(e));
    ++finite;
  }
  const double range = hi - lo;
  r.max_abs_err = mx;
  r.max_err_over_eb = mx / eb_abs;
  r.mean_err = finite ? sum / finite : 0;
  r.rmse = finite ? std::sqrt(sq / finite) : 0;
  r.nrmse = zsupport::nrmse(range, r.rmse);
  r.psnr_db = zsupport::psnr_db(range, r.rmse);
}

template <class T>
Result run_codec(const std::string& file, const std::vector<unsigned char>& raw, const Options& o,
                 const std::vector<size_t>& dims) {
  const size_t n = raw.size() / sizeof(T);
  std::vector<T> x(n), y(n);
  std::memcpy(x.data(), raw.data(), n * sizeof(T));
  const zcoll_dtype dt = sizeof(T) == 4 ? ZCOLL_FLOAT32 : ZCOLL_FLOAT64;
  zcoll_codec_params p;
  zcoll_codec_params_init(&p);
  p.codec = zsupport::codec_id(o.codec);
  p.eb_mode = o.eb_mode == "abs" ? ZCOLL_EB_ABS : ZCOLL_EB_REL;
  p.eb = o.eb;
  p.threads = o.threads;
  p.chunk_len = o.chunk;
  if (dims.size() >= 2 && dims.size() <= 3) {
    p.ndims = static_cast<int>(dims.size());
    for (size_t d = 0; d < dims.size(); ++d) p.dims[d] = dims[d];
  }
  std::vector<unsigned char> out(zcoll_codec_bound(n, dt));
  size_t csize = 0;
  double eb_abs = 0;
  int rc = ZCOLL_SUCCESS;
  const double tc = best_of(o.repeat, [&] {
    rc = zcoll_compress(&p, dt, x.data(), n, out.data(), out.size(), &csize, &eb_abs);
  });
  if (rc) {
    std::fprintf(stderr, "zcoll-bench: compress %s: %s\n", file.c_str(), zcoll_strerror(rc));
    std::exit(1);
  }
  const double td = best_of(o.repeat, [&] {
    rc = zcoll_decompress(out.data(), csize, dt, y.data(), n, o.threads);
  });
  if (rc) {
    std::fprintf(stderr, "zcoll-bench: decompress %s: %s\n", file.c_str(), zcoll_strerror(rc));
    std::exit(1);
  }
  std::vector<T> copy(n);
  const double tm = best_of(o.repeat, [&] { std::memcpy(copy.data(), x.data(), n * sizeof(T)); });
  Result r;
  r.file = fs::path(file).filename().string();
  r.dtype = sizeof(T) == 4 ? "f32" : "f64";
  r.eb_mode = o.eb_mode;
  r.codec = o.codec;
  r.n = n;
  r.bytes = n * sizeof(T);
  r.compressed = csize;
  r.eb = o.eb;
  r.eb_abs = eb_abs;
  r.threads = o.threads;
  r.ndims = p.ndims > 1 ? p.ndims : 1;
  r.ratio = static_cast<double>(r.bytes) / csize;
  r.comp_gbps = r.bytes / tc / 1e9;
  r.decomp_gbps = r.bytes / td / 1e9;
  r.memcpy_gbps = r.bytes / tm / 1e9;
  quality(x.data(), y.data(), n, eb_abs, r);
  return r;
}

// Exits (status 1) where the file cannot be read.
std::vector<unsigned char> read_or_exit(const std::string& path) {
  std::vector<unsigned char> raw;
  std::string err;
  if (!zsupport::read_file(path, &raw, &err)) {
    std::fprintf(stderr, "zcoll-bench: %s\n", err.c_str());
    std::exit(1);
  }
  return raw;
}

Result run_one(const std::string& file, const std::string& dtype, const Options& o) {
  const auto raw = read_or_exit(file);
  std::vector<size_t> dims;
  if (o.dims == "auto") dims = zsupport::shape_from_name(file);
  else if (!o.dims.empty()) dims = zsupport::parse_extents(o.dims);
  if (dtype == "f32") return run_codec<float>(file, raw, o, dims);
  if (dtype == "f64") return run_codec<double>(file, raw, o, dims);
  usage("--dtype must be f32 or f64");
}

void print_json(const Result& r) {
  // An exact reconstruction has no finite PSNR: null.
  const std::string psnr = zsupport::json_number(r.psnr_db, "%.3f");
  std::printf(
      "{\"file\":\"%s\",\"dtype\":\"%s\",\"n\":%zu,\"codec\":\"%s\",\"eb_mode\":\"%s\",\"eb\":%.6g,"
      "\"eb_abs\":%.9g,\"threads\":%d,\"ndims\":%d,\"bytes\":%zu,\"compressed_bytes\":%zu,\"ratio\":%.4f,"
      "\"comp_gbps\":%.4f,\"decomp_gbps\":%.4f,\"memcpy_gbps\":%.4f,\"max_abs_err\":%.9g,"
      "\"max_err_over_eb\":%.6f,\"mean_err\":%.6g,\"rmse\":%.6g,\"psnr_db\":%s,\"nrmse\":%.6g,"
      "\"specials_exact\":%s}\n",
      r.file.c_str(), r.dtype.c_str(), r.n, r.codec.c_str(), r.eb_mode.c_str(), r.eb, r.eb_abs, r.threads,
      r.ndims, r.bytes, r.compressed, r.ratio, r.comp_gbps, r.decomp_gbps, r.memcpy_gbps, r.max_abs_err,
      r.max_err_over_eb, r.mean_err, r.rmse, psnr.c_str(), r.nrmse, r.exact_specials ? "true" : "false");
}

int codec_table(Options o) {
  const auto files = zsupport::field_files();
  if (files.empty()) {
    std::fprintf(stderr, "zcoll-bench: no fields found in data/ or ../shared/datasets\n");
    return 1;
  }
  if (!o.json) {
    std::printf("zcoll-bench codec: %s, %d thread(s), best of %d, REL bounds; 'shape' = Lorenzo over the field's\n"
                "dims (hint from the file name; fzl only, lpbyte and lpbit predict in array order), '1-D' = the\n"
                "default. fZ-light = published ratio measured on this machine class (shared/notes/anchors.md), for\n"
                "reference. Errors in units of eb_abs.\n\n",
                o.codec.c_str(), o.threads, o.repeat);
    std::printf("%-34s %6s %7s %7s %6s %6s %8s %8s %7s %8s %9s %7s %9s\n", "field", "rel", "ratio", "shape",
                "fZ-l", "gain", "comp", "decomp", "memcpy", "maxerr", "mean", "PSNR", "NRMSE");
    std::printf("%-34s %6s %7s %7s %6s %6s %8s %8s %7s %8s %9s %7s %9s\n", "", "eb", "1-D", "hint", "ratio",
                "best", "GB/s", "GB/s", "GB/s", "/eb", "err/eb", "dB", "");
  }
  std::vector<double> comp32, decomp32;
  bool all_within = true;
  for (const auto& f : files) {
    const std::string dtype = zsupport::dtype_from_name(f);
    for (double rel : {1e-2, 1e-3, 1e-4, 1e-5}) {
      Options a = o;
      a.eb_mode = "rel";
      a.eb = rel;
      a.dims.clear();
      Result r1 = run_one(f, dtype, a);
      a.dims = "auto";
      // The shape hint changes nothing for the linear-predictor codecs: not run twice.
      Result r2 = o.codec == "fzl" ? run_one(f, dtype, a) : r1;
      all_within = all_within && r1.max_err_over_eb <= 1.0 && r2.max_err_over_eb <= 1.0;
      if (o.json) {
        print_json(r1);
        if (o.codec == "fzl") print_json(r2);
        continue;
      }
      if (dtype == "f32" && std::fabs(rel - 1e-4) < 1e-14) {
        comp32.push_back(r1.comp_gbps);
        decomp32.push_back(r1.decomp_gbps);
      }
      const double ref = fzlight_reference(r1.file, rel);
      char refs[16] = "-", gains[16] = "-";
      if (ref > 0) {
        std::snprintf(refs, sizeof refs, "%.2f", ref);
        std::snprintf(gains, sizeof gains, "%.2fx", std::max(r1.ratio, r2.ratio) / ref);
      }
      std::printf("%-34s %6.0e %7.2f %7.2f %6s %6s %8.2f %8.2f %7.2f %8.4f %9.5f %7.2f %9.3g\n", r1.file.c_str(),
                  rel, r1.ratio, r2.ratio, refs, gains, r1.comp_gbps, r1.decomp_gbps, r1.memcpy_gbps,
                  std::max(r1.max_err_over_eb, r2.max_err_over_eb), r1.mean_err / r1.eb_abs, r1.psnr_db, r1.nrmse);
    }
  }
  if (!o.json && !comp32.empty()) {
    std::printf("\nmedian over the f32 fields at REL 1e-4, %d thread(s), 1-D: compress %.2f GB/s, decompress %.2f GB/s\n",
                o.threads, zsupport::median(comp32), zsupport::median(decomp32));
    std::printf("every element within eb: %s\n", all_within ? "yes" : "NO");
  }
  return all_within ? 0 : 1;
}

// Options of the codec and homomorphic commands; each takes the ones its usage lists.
Options parse_options(int argc, char** argv, bool homomorphic) {
  Options o;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") help(homomorphic ? std::string(kHomomorphicUsage) + kHomomorphicHelp
                                                     : codec_usage() + kCodecHelp);
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value for " + a).c_str());
      return argv[++i];
    };
    if (a == "--input") o.inputs.push_back(o.input = val());
    else if (a == "--dtype") o.dtype = val();
    else if (a == "--eb-mode") o.eb_mode = val();
    else if (a == "--eb") { o.eb = std::atof(val().c_str()); o.eb_given = true; }
    else if (a == "--threads") o.threads = std::atoi(val().c_str());
    else if (a == "--json") o.json = true;
    else if (homomorphic && a == "--iters") o.iters = std::atoi(val().c_str());
    else if (!homomorphic && a == "--codec") o.codec = val();
    else if (!homomorphic && a == "--repeat") o.repeat = std::max(1, std::atoi(val().c_str()));
    else if (!homomorphic && a == "--chunk") o.chunk = std::strtoull(val().c_str(), nullptr, 10);
    else if (!homomorphic && a == "--dims") {
      o.dims = val();
      if (o.dims != "auto" && zsupport::parse_extents(o.dims).empty()) usage("--dims takes AxBxC or auto");
    }
    else usage(("unknown option " + a).c_str());
  }
  if (o.eb_mode != "abs" && o.eb_mode != "rel") usage("--eb-mode must be abs or rel");
  return o;
}

int codec_main(int argc, char** argv) {
  Options o = parse_options(argc, argv, false);
  const int codec = zsupport::codec_id(o.codec);
  if (!codec) usage(("--codec must be " + zsupport::codec_names(", ", " or ")).c_str());
  o.codec = zcoll_codec_name(codec);
  if (o.input.empty()) return codec_table(o);
  if (o.dtype.empty()) o.dtype = zsupport::dtype_from_name(o.input) == "f64" ? "f64" : "f32";
  const Result r = run_one(o.input, o.dtype, o);
  if (o.json) {
    print_json(r);
  } else {
    std::printf("%s %s n=%zu eb_abs=%.6g ratio=%.3f comp=%.2f GB/s decomp=%.2f GB/s memcpy=%.2f GB/s "
                "max_err/eb=%.4f mean_err=%.3g psnr=%.2f dB nrmse=%.3g\n",
                r.file.c_str(), r.dtype.c_str(), r.n, r.eb_abs, r.ratio, r.comp_gbps, r.decomp_gbps, r.memcpy_gbps,
                r.max_err_over_eb, r.mean_err, r.psnr_db, r.nrmse);
  }
  return r.max_err_over_eb <= 1.0 && r.exact_specials ? 0 : 1;
}

// ---------------------------------------------------------------- homomorphic

// The values of a raw little-endian file; exits (status 1) if it holds no whole element.
template <class T>
std::vector<T> load_values(const std::string& file) {
  std::vector<T> v;
  std::string err;
  if (!zsupport::read_values(file, &v, &err)) {
    std::fprintf(stderr, "zcoll-bench: %s\n", err.c_str());
    std::exit(1);
  }
  return v;
}

void check(int rc, const char* what) {
  if (rc == ZCOLL_SUCCESS) return;
  std::fprintf(stderr, "zcoll-bench homomorphic: %s: %s\n", what, zcoll_strerror(rc));
  std::exit(1);
}

// max |y - (a + b)| over the elements (a + b in double; a non-finite sum must be reproduced,
// else the error is infinite), and the largest rounding allowance 2 u (|a| + |b|).
template <class T>
void sum_error(const T* a, const T* b, const T* y, size_t n, double* max_err, double* max_allow) {
  const double u = sizeof(T) == 4 ? 0x1p-24 : 0x1p-53;
  double mx = 0, allow = 0;
  for (size_t i = 0; i < n; ++i) {
    const double ref = static_cast<double>(a[i]) + static_cast<double>(b[i]), got = y[i];
    if (!std::isfinite(ref)) {
      if (!(std::isnan(ref) ? std::isnan(got) : got == ref)) mx = INFINITY;
      continue;
    }
    const double d = std::fabs(got - ref);
    mx = std::isnan(d) ? INFINITY : std::max(mx, d);
    allow = std::max(allow, 2 * u * (std::fabs(static_cast<double>(a[i])) + std::fabs(static_cast<double>(b[i]))));
  }
  *max_err = mx;
  *max_allow = allow;
}

struct HomoResult {
  std::string input_a, input_b, dtype, eb_mode;
  size_t count = 0;
  int threads = 1, iters = 0;
  double eb = 0, eb_abs = 0, ratio_a = 0, ratio_b = 0, ratio_out = 0, ratio_doc = 0;
  double homo_s = 0, doc_s = 0, homo_gbps = 0, doc_gbps = 0, speedup = 0;
  double max_err_over_eb = 0, bound_over_eb = 0, doc_max_err_over_eb = 0, doc_bound_over_eb = 0;
  // A uncompressed + B compressed (one ring step of a reduction)
  double fold_s = 0, fold_doc_s = 0, fold_gbps = 0, fold_doc_gbps = 0, fold_speedup = 0;
  double fold_max_err_over_eb = 0, fold_doc_max_err_over_eb = 0, fold_bound_over_eb = 0;
};

template <class T>
HomoResult run_homomorphic(const Options& o) {
  const zcoll_dtype dt = sizeof(T) == 4 ? ZCOLL_FLOAT32 : ZCOLL_FLOAT64;
  std::vector<T> a = load_values<T>(o.inputs[0]), b = load_values<T>(o.inputs[1]);
  const size_t n = std::min(a.size(), b.size()), bytes = n * sizeof(T);
  a.resize(n);
  b.resize(n);

  // One absolute bound for both operands (zcoll's REL rule, over A and B together).
  double eb_abs = o.eb;
  if (o.eb_mode == "rel") {
    zsupport::ValueRange range;
    range.add(a.data(), n);
    range.add(b.data(), n);
    eb_abs = range.rel_bound(o.eb);
  }
  zcoll_codec_params prm;
  zcoll_codec_params_init(&prm);
  prm.eb_mode = ZCOLL_EB_ABS;
  prm.eb = eb_abs;
  prm.threads = o.threads;
  const size_t cap = zcoll_codec_bound(n, dt);
  std::vector<unsigned char> ca(cap), cb(cap), homo(cap), doc(cap);
  size_t sa = 0, sb = 0, sh = 0, sd = 0;
  double eb_a = 0, eb_b = 0;
  check(zcoll_compress(&prm, dt, a.data(), n, ca.data(), cap, &sa, &eb_a), "compress A");
  check(zcoll_compress(&prm, dt, b.data(), n, cb.data(), cap, &sb, &eb_b), "compress B");
  eb_abs = eb_a;  // the bound used (lowered only if huge); the same for both streams

  // (a) homomorphic: the two streams combined as integers; (b) decompress-add-compress,
  // the sum formed in the element type.
  int rc_h = ZCOLL_SUCCESS, rc = ZCOLL_SUCCESS;
  std::vector<T> xa(n), xb(n);
  const int nt = o.threads > 0 ? o.threads : omp_get_max_threads();
  // The DOC side: stream s decompressed into x, y added in the element type, compressed.
  auto add_and_compress = [&](const unsigned char* s, size_t s_len, T* x, const T* y, unsigned char* out,
                              size_t* out_len) {
    int r = zcoll_decompress(s, s_len, dt, x, n, o.threads);
    if (r != ZCOLL_SUCCESS) return r;
    const ptrdiff_t m = static_cast<ptrdiff_t>(n);
#pragma omp parallel for num_threads(nt) schedule(static)
    for (ptrdiff_t i = 0; i < m; ++i) x[i] += y[i];
    return zcoll_compress(&prm, dt, x, n, out, cap, out_len, nullptr);
  };
  const auto [th, td] = medians_alternating(
      o.iters,
      [&] { rc_h = zcoll_combine(ZCOLL_OP_SUM, ca.data(), sa, cb.data(), sb, homo.data(), cap, &sh, o.threads); },
      [&] {
        rc = zcoll_decompress(ca.data(), sa, dt, xa.data(), n, o.threads);
        if (rc == ZCOLL_SUCCESS) rc = add_and_compress(cb.data(), sb, xb.data(), xa.data(), doc.data(), &sd);
      });
  check(rc_h, "zcoll_combine");
  check(rc, "decompress-add-compress");
  // (c) A folded into B as it is quantized; (d) B decompressed, A added, compressed.
  std::vector<unsigned char> fold(cap), fold_doc(cap);
  size_t sf = 0, sfd = 0;
  const auto [tf, tfd] = medians_alternating(
      o.iters,
      [&] {
        rc_h = zcoll_combine_values(ZCOLL_OP_SUM, a.data(), n, dt, cb.data(), sb, fold.data(), cap, &sf, o.threads);
      },
      [&] { rc = add_and_compress(cb.data(), sb, xb.data(), a.data(), fold_doc.data(), &sfd); });
  check(rc_h, "zcoll_combine_values");
  check(rc, "decompress-add-compress (A uncompressed)");

  HomoResult r;
  r.input_a = o.inputs[0];
  r.input_b = o.inputs[1];
  r.dtype = sizeof(T) == 4 ? "f32" : "f64";
  r.eb_mode = o.eb_mode;
  r.eb = o.eb;
  r.eb_abs = eb_abs;
  r.count = n;
  r.threads = o.threads;
  r.iters = o.iters;
  r.ratio_a = static_cast<double>(bytes) / sa;
  r.ratio_b = static_cast<double>(bytes) / sb;
  r.ratio_out = static_cast<double>(bytes) / sh;
  r.ratio_doc = static_cast<double>(bytes) / sd;
  r.homo_s = th;
  r.doc_s = td;
  r.homo_gbps = bytes / th / 1e9;
  r.doc_gbps = bytes / td / 1e9;
  r.speedup = td / th;
  double err = 0, allow = 0;
  check(zcoll_decompress(homo.data(), sh, dt, xa.data(), n, o.threads), "decompress the homomorphic sum");
  sum_error(a.data(), b.data(), xa.data(), n, &err, &allow);
  r.max_err_over_eb = err / eb_abs;
  r.bound_over_eb = 2 + allow / eb_abs;
  check(zcoll_decompress(doc.data(), sd, dt, xa.data(), n, o.threads), "decompress the DOC sum");
  sum_error(a.data(), b.data(), xa.data(), n, &err, &allow);
  r.doc_max_err_over_eb = err / eb_abs;
  r.doc_bound_over_eb = 3 + allow / eb_abs;
  r.fold_s = tf;
  r.fold_doc_s = tfd;
  r.fold_gbps = bytes / tf / 1e9;
  r.fold_doc_gbps = bytes / tfd / 1e9;
  r.fold_speedup = tfd / tf;
  check(zcoll_decompress(fold.data(), sf, dt, xa.data(), n, o.threads), "decompress the folded sum");
  sum_error(a.data(), b.data(), xa.data(), n, &err, &allow);
  r.fold_max_err_over_eb = err / eb_abs;
  r.fold_bound_over_eb = 2 + allow / eb_abs;
  check(zcoll_decompress(fold_doc.data(), sfd, dt, xa.data(), n, o.threads), "decompress the DOC sum (A uncompressed)");
  sum_error(a.data(), b.data(), xa.data(), n, &err, &allow);
  r.fold_doc_max_err_over_eb = err / eb_abs;
  return r;
}

int homomorphic_main(int argc, char** argv) {
  Options o = parse_options(argc, argv, true);
  if (o.inputs.size() != 2) usage("homomorphic needs two --input files (A and B)");
  if (!std::isfinite(o.eb) || !(o.eb > 0)) usage("--eb must be a positive number");
  if (o.iters < 1) usage("--iters must be at least 1");
  if (o.threads < 0) usage("--threads must be 0 (the OpenMP default) or more");
  if (o.dtype.empty()) {
    o.dtype = zsupport::dtype_from_name(o.inputs[0]);
    if (o.dtype.empty()) usage("--dtype not given and A has no .f32/.f64 suffix");
    if (zsupport::dtype_from_name(o.inputs[1]) != o.dtype) usage("A and B have different element types (.f32/.f64)");
  }
  if (o.dtype != "f32" && o.dtype != "f64") usage("--dtype must be f32 or f64");
  const HomoResult r = o.dtype == "f32" ? run_homomorphic<float>(o) : run_homomorphic<double>(o);
  if (o.json) {
    std::printf(
        "{\"input_a\":\"%s\",\"input_b\":\"%s\",\"dtype\":\"%s\",\"count\":%zu,\"eb_mode\":\"%s\",\"eb\":%.6g,"
        "\"eb_abs\":%.9g,\"threads\":%d,\"iters\":%d,\"ratio_a\":%.4f,\"ratio_b\":%.4f,\"ratio_out\":%.4f,"
        "\"ratio_doc\":%.4f,\"homo_s\":%.6g,\"doc_s\":%.6g,\"homo_gbps\":%.4f,\"doc_gbps\":%.4f,"
        "\"speedup_vs_doc\":%.4f,\"max_err_over_eb\":%.6f,\"bound_over_eb\":%.6f,\"doc_max_err_over_eb\":%.6f,"
        "\"fold_gbps\":%.4f,\"fold_doc_gbps\":%.4f,\"fold_speedup_vs_doc\":%.4f,\"fold_max_err_over_eb\":%.6f,"
        "\"fold_doc_max_err_over_eb\":%.6f}\n",
        fs::path(r.input_a).filename().c_str(), fs::path(r.input_b).filename().c_str(), r.dtype.c_str(), r.count,
        r.eb_mode.c_str(), r.eb, r.eb_abs, r.threads, r.iters, r.ratio_a, r.ratio_b, r.ratio_out, r.ratio_doc,
        r.homo_s, r.doc_s, r.homo_gbps, r.doc_gbps, r.speedup, r.max_err_over_eb, r.bound_over_eb,
        r.doc_max_err_over_eb, r.fold_gbps, r.fold_doc_gbps, r.fold_speedup, r.fold_max_err_over_eb,
        r.fold_doc_max_err_over_eb);
  } else {
    std::printf("zcoll-bench homomorphic: C = A + B on compressed streams, %s, %zu elements, eb_abs %.6g (%s %.3g),\n"
                "%d thread(s), median of %d after a warm-up; GB/s = one operand's raw bytes per second\n"
                "  A %s (ratio %.2f), B %s (ratio %.2f)\n\n",
                r.dtype.c_str(), r.count, r.eb_abs, r.eb_mode.c_str(), r.eb, r.threads, r.iters,
                fs::path(r.input_a).filename().c_str(), r.ratio_a, fs::path(r.input_b).filename().c_str(), r.ratio_b);
    std::printf("%-28s %10s %8s %8s %11s %9s\n", "method", "seconds", "GB/s", "ratio", "max_err/eb", "bound/eb");
    std::printf("%-28s %10.6f %8.3f %8.2f %11.4f %9.4f\n", "homomorphic (zcoll_combine)", r.homo_s, r.homo_gbps,
                r.ratio_out, r.max_err_over_eb, r.bound_over_eb);
    std::printf("%-28s %10.6f %8.3f %8.2f %11.4f %9.4f\n", "decompress-add-compress", r.doc_s, r.doc_gbps,
                r.ratio_doc, r.doc_max_err_over_eb, r.doc_bound_over_eb);
    std::printf("\nspeedup of homomorphic over decompress-add-compress: %.2fx\n", r.speedup);
    std::printf("\nA uncompressed + B compressed (a ring reduction's step):\n");
    std::printf("%-28s %10.6f %8.3f %8s %11.4f %9.4f\n", "zcoll_combine_values", r.fold_s, r.fold_gbps, "",
                r.fold_max_err_over_eb, r.fold_bound_over_eb);
    std::printf("%-28s %10.6f %8.3f %8s %11.4f %9.4f\n", "decompress B, add, compress", r.fold_doc_s,
                r.fold_doc_gbps, "", r.fold_doc_max_err_over_eb, r.fold_bound_over_eb);
    std::printf("\nspeedup of zcoll_combine_values over decompress-add-compress: %.2fx\n", r.fold_speedup);
  }
  return r.max_err_over_eb <= r.bound_over_eb && r.doc_max_err_over_eb <= r.doc_bound_over_eb &&
                 r.fold_max_err_over_eb <= r.fold_bound_over_eb && r.fold_doc_max_err_over_eb <= r.fold_bound_over_eb
             ? 0
             : 1;
}

}  // namespace

int coll_main(int argc, char** argv);   // coll_bench.cc
int calls_main(int argc, char** argv);  // calls_bench.cc
#ifdef ZCOLL_BENCH_H5WRITE
int h5write_main(int argc, char** argv);  // h5write_bench.cc
#endif

int main(int argc, char** argv) {
  if (argc < 2) usage("missing command (codec, homomorphic, coll or calls)");
  const std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") help(kVerbs + all_usage());
  if (cmd == "codec") return codec_main(argc - 2, argv + 2);
  if (cmd == "homomorphic") return homomorphic_main(argc - 2, argv + 2);
  if (cmd == "coll") return coll_main(argc - 2, argv + 2);
  if (cmd == "calls") return calls_main(argc - 2, argv + 2);
#ifdef ZCOLL_BENCH_H5WRITE
  if (cmd == "h5write") return h5write_main(argc - 2, argv + 2);
#endif
  usage(("unknown command " + cmd).c_str());
}
