// zcoll-bench h5write: writing real fields from every rank to one shared HDF5 file, four ways
// (issue 18, seed 004), each timed until the data is on storage and then read back.
//
//   mpiexec -n N zcoll-bench h5write --input F [--input F ...] --out FILE
//       --mode raw|filter|predictive|pipelined [--eb-mode rel|abs] [--eb X] [--reorder on|off]
//       [--extra-space 1.25] [--mib-per-rank M] [--fields K] [--codec fzl] [--threads T]
//       [--no-verify] [--json]
//
// Data: each --input is a raw little-endian field whose name gives its extents and type
// ("nyx_phigrav_128x128x128.f64": extents slowest first, .f32 or .f64). K fields (--fields,
// default one per input) are made from the inputs cyclically and named fKK_STEM
// ("f03_nyx_phigrav"). Each field is the whole input repeated T times along its slowest axis
// (T = round(M MiB x N / the input's size), at least 1; M = --mib-per-rank, default 32), so
// its global extents are [T d0, d1, ...]; the slowest axis is split evenly over the ranks
// (the first ranks one row more where it does not divide), so every rank's part is one
// contiguous hyperslab in C order of about M MiB. Fields from the same input share that
// input's part on each rank (the writers only read the buffers).
//
// Modes (all write FILE, which rank 0 deletes first):
//   raw         uncompressed: parallel HDF5 (MPI-IO driver), one contiguous dataset per field,
//               each rank writes its hyperslab with an independent H5Dwrite.
//   filter      seed 004's baseline: parallel HDF5, one chunked dataset per field with the zcoll
//               filter (id 401) and a collective H5Dwrite (HDF5 1.10 writes filtered datasets in
//               parallel only collectively); chunk = the largest rank's part; the bound is ABS
//               eb_abs, resolved over the whole field like the other modes (REL: eb x (max - min)
//               from an allreduce of the ranks' extremes), so it is field-wide, not per chunk.
//   predictive  zcoll_h5_writer, ZCOLL_H5_PREDICTIVE (include/zcoll_h5io.h): sampled size
//               predictions, reserved regions x --extra-space, independent writes overlapped with
//               compression, fields reordered unless --reorder off, overflow appended.
//   pipelined   zcoll_h5_writer, ZCOLL_H5_PIPELINED: exact offsets after each field, no extra space.
// --threads T: codec threads per rank (default 1; 0 = the OpenMP default): the writer's
// option, or ZCOLL_H5_THREADS for the filter. --codec: any zcoll codec (default fzl).
//
// Timing: MPI_Barrier, clock starts, the mode writes every field and closes the file, every
// rank fsyncs the file (close alone leaves the data in the page cache: what a throttled
// storage target must see is the durable write), MPI_Barrier, clock stops; time_s is the
// slowest rank's. t_fsync is that fsync. The parts, each the largest over the ranks:
//   t_predict, t_compress, t_write, t_write_exposed, t_sync: the writer's report (predictive,
//     pipelined); raw and filter: t_write = the H5Dwrite calls (for filter they include the
//     compression, which happens inside HDF5: t_compress is null), t_sync = the rest (file and
//     dataset creation, the bound's allreduce, closes), t_predict 0, t_write_exposed = t_write;
//   overlap: the mean over the ranks of the writer's overlap (0 for raw and filter).
// predicted_ratio_err (the writer's median), extra_space and reorder are null for the modes
// without prediction; overflow_bytes and overflow_ranks are 0 there.
//
// Sizes: raw_bytes = the fields' values; file_bytes = the file's size after close (stat);
// stream_bytes = the compressed bytes (the writer's streams; filter: the chunks HDF5 stores,
// H5Dget_storage_size; raw: the values); ratio = raw_bytes / file_bytes; storage_overhead =
// file_bytes / stream_bytes (what the layout adds to the ideal compressed size).
//
// Verification (unless --no-verify; after the clock): every rank reads its own part of every
// field back (predictive, pipelined: zcoll_h5_reader_open and zcoll_h5_read_field; raw, filter:
// H5Dread) and compares each element with the value written: max_err_over_eb = the largest
// |x - x'| / eb_abs over all elements and fields, eb_abs per field being the writer's
// (zcoll_h5_field_info) or, for filter, the one computed here; raw must be bit-exact, and so
// must non-finite values in every mode. The writer's eb_abs may be tighter than the bound
// asked for, never looser.
//
// Output: one JSON object (--json, rank 0, stdout) or a short summary.
// Exit status: 0; 1 if an element is outside its bound, raw differs, a zcoll_h5 call fails
// (zcoll_strerror and zcoll_h5_error_detail are printed) or an input is unusable; 2 for a usage
// error, and for raw and filter where HDF5 is not parallel.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <hdf5.h>
#include <mpi.h>

#include "tool_support.h"
#include "zcoll.h"
#include "zcoll_h5.h"
#include "zcoll_h5io.h"

namespace fs = std::filesystem;

namespace {

using zsupport::json_number;
using zsupport::UsageError;

const char* const kUsage =
    "usage: mpiexec -n N zcoll-bench h5write --input F [--input F ...] --out FILE\n"
    "           --mode raw|filter|predictive|pipelined [--eb-mode rel|abs] [--eb X]\n"
    "           [--reorder on|off] [--extra-space X] [--mib-per-rank M] [--fields K]\n"
    "           [--codec NAME] [--threads T] [--no-verify] [--json]\n"
    "  --input F        raw little-endian field named NAME_AxBxC.f32 or .f64 (extents slowest\n"
    "                   first); every --input is one field\n"
    "  --out FILE       the HDF5 file written (deleted first)\n"
    "  --mode           raw: uncompressed, independent writes (parallel HDF5); filter: the zcoll\n"
    "                   HDF5 filter, collective writes (parallel HDF5); predictive / pipelined:\n"
    "                   zcoll_h5_writer (include/zcoll_h5io.h)\n"
    "  --eb-mode/--eb   error bound, REL over the whole field or ABS (default rel 1e-4)\n"
    "  --reorder        predictive: order each rank's fields for overlap (default on)\n"
    "  --extra-space X  predictive: region = predicted size x X, X >= 1 (default 1.25)\n"
    "  --mib-per-rank M each field tiled along its slowest axis to about M MiB per rank (default 32)\n"
    "  --fields K       K fields from the inputs, cyclically (default: one per input)\n"
    "  --codec NAME     zcoll codec (default fzl)\n"
    "  --threads T      codec threads per rank (default 1; 0 = the OpenMP default)\n"
    "  --no-verify      skip reading the file back\n"
    "  --json           one JSON object (rank 0)\n"
    "Timed from a barrier to the last rank's fsync of the file. Exit status 1 if an element read\n"
    "back is outside its bound (raw: not bit-exact), 2 for a usage error.\n";

enum class Mode { Raw, Filter, Predictive, Pipelined };

const char* const kModeNames[] = {"raw", "filter", "predictive", "pipelined"};

struct Opts {
  std::vector<std::string> inputs;
  std::string out, eb_mode = "rel", codec_name = "fzl";
  Mode mode = Mode::Raw;
  int codec = ZCOLL_CODEC_FZL, fields = 0, threads = 1;
  double eb = 1e-4, extra_space = 1.25, mib_per_rank = 32;
  bool reorder = true, verify = true, json = false, help = false;
  bool predictive() const { return mode == Mode::Predictive; }
  bool uses_writer() const { return mode == Mode::Predictive || mode == Mode::Pipelined; }
};

int g_rank = 0, g_size = 1;

double parse_positive(const std::string& name, const std::string& v) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end || !std::isfinite(x) || !(x > 0)) throw UsageError{"bad value for " + name + ": " + v};
  return x;
}

Opts parse(int argc, char** argv) {
  Opts o;
  std::string mode;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError{"missing value for " + a};
      return argv[++i];
    };
    if (a == "--input") o.inputs.push_back(val());
    else if (a == "--out") o.out = val();
    else if (a == "--mode") mode = val();
    else if (a == "--eb-mode") o.eb_mode = val();
    else if (a == "--eb") o.eb = parse_positive(a, val());
    else if (a == "--reorder") {
      const std::string v = val();
      if (v != "on" && v != "off") throw UsageError{"--reorder must be on or off"};
      o.reorder = v == "on";
    } else if (a == "--extra-space") o.extra_space = parse_positive(a, val());
    else if (a == "--mib-per-rank") o.mib_per_rank = parse_positive(a, val());
    else if (a == "--fields") o.fields = static_cast<int>(zsupport::parse_long(a, val(), 1, 9999));
    else if (a == "--codec") o.codec_name = val();
    else if (a == "--threads") o.threads = static_cast<int>(zsupport::parse_long(a, val(), 0, 1024));
    else if (a == "--no-verify") o.verify = false;
    else if (a == "--json") o.json = true;
    else if (a == "--help" || a == "-h") o.help = true;
    else throw UsageError{"unknown option " + a};
  }
  if (o.help) return o;
  if (o.inputs.empty()) throw UsageError{"--input is required"};
  if (o.out.empty()) throw UsageError{"--out is required"};
  const auto m = std::find(std::begin(kModeNames), std::end(kModeNames), mode);
  if (m == std::end(kModeNames)) throw UsageError{"--mode must be raw, filter, predictive or pipelined"};
  o.mode = static_cast<Mode>(m - std::begin(kModeNames));
  if (o.eb_mode != "abs" && o.eb_mode != "rel") throw UsageError{"--eb-mode must be abs or rel"};
  if (o.extra_space < 1) throw UsageError{"--extra-space must be at least 1"};
  o.codec = zsupport::codec_id(o.codec_name);
  if (!o.codec) throw UsageError{"--codec must be " + zsupport::codec_names(", ", " or ")};
  for (const std::string& f : o.inputs)
    if (zsupport::dtype_from_name(f).empty() || zsupport::shape_from_name(f).empty())
      throw UsageError{f + ": the name must end in _AxBxC.f32 or _AxBxC.f64 (the extents, slowest first)"};
  if (o.fields == 0) o.fields = static_cast<int>(o.inputs.size());
  return o;
}

// ------------------------------------------------------------------------------ data

// v's data, never null: HDF5 refuses a null buffer unless nothing is selected, and an empty
// vector's data() may be null.
template <class V>
auto nonnull(V& v) -> decltype(v.data()) {
  static unsigned char none;
  return v.empty() ? &none : v.data();
}

// One input file and this rank's part of the tiled field made from it (see the top comment).
struct Input {
  std::string path, stem;  // stem: the file name without extents and suffix ("nyx_phigrav")
  zcoll_dtype dtype = ZCOLL_FLOAT32;
  size_t elem = 4;
  uint64_t tiles = 1;
  std::vector<uint64_t> dims, start, count;  // global extents; this rank's hyperslab
  std::vector<unsigned char> part;           // this rank's values, C order
  uint64_t part_elems() const { return part.size() / elem; }
  uint64_t raw_bytes() const {
    uint64_t n = elem;
    for (uint64_t d : dims) n *= d;
    return n;
  }
  const void* data() const { return nonnull(part); }
};

struct Field {
  std::string name;
  const Input* in = nullptr;
  double eb_abs = 0;  // the bound asked for, resolved over the whole field (all ranks)
};

// Rank r's rows of the slowest axis: rows / N each, the first rows % N ranks one more.
void partition(const std::vector<uint64_t>& dims, std::vector<uint64_t>* start, std::vector<uint64_t>* count) {
  const uint64_t rows = dims[0], p = g_size, r = g_rank, base = rows / p, extra = rows % p;
  start->assign(dims.size(), 0);
  *count = dims;
  (*start)[0] = r * base + std::min(r, extra);
  (*count)[0] = base + (r < extra ? 1 : 0);
}

// Reads the input (every rank: inputs are a few MiB), checks its size against the name, tiles
// it and keeps this rank's rows. false with the reason in *err.
bool load_input(const std::string& path, double mib_per_rank, Input* in, std::string* err) {
  const std::vector<size_t> shape = zsupport::shape_from_name(path);
  in->path = path;
  const std::string stem = fs::path(path).stem().string();
  in->stem = stem.substr(0, stem.rfind('_'));
  in->dtype = zsupport::dtype_from_name(path) == "f64" ? ZCOLL_FLOAT64 : ZCOLL_FLOAT32;
  in->elem = in->dtype == ZCOLL_FLOAT64 ? 8 : 4;
  std::vector<unsigned char> bytes;
  if (!zsupport::read_file(path, &bytes, err)) return false;
  uint64_t want = in->elem;
  for (size_t e : shape) want *= e;
  if (bytes.size() != want) {
    *err = path + ": " + std::to_string(bytes.size()) + " bytes, its name says " + std::to_string(want);
    return false;
  }
  in->tiles = std::max<uint64_t>(1, std::llround(mib_per_rank * 1048576.0 * g_size / static_cast<double>(want)));
  in->dims.assign(shape.begin(), shape.end());
  in->dims[0] *= in->tiles;
  partition(in->dims, &in->start, &in->count);
  const size_t row_bytes = bytes.size() / shape[0];
  in->part.resize(in->count[0] * row_bytes);
  for (uint64_t i = 0; i < in->count[0]; ++i)
    std::memcpy(in->part.data() + i * row_bytes, bytes.data() + (in->start[0] + i) % shape[0] * row_bytes, row_bytes);
  return true;
}

// The absolute bound of o's eb for a field, over all ranks' parts (collective): ABS as given;
// REL by zcoll.h's rule (ValueRange::rel_bound).
double resolve_eb_abs(const Opts& o, const Input& in) {
  if (o.eb_mode == "abs") return o.eb;
  zsupport::ValueRange range;
  if (in.dtype == ZCOLL_FLOAT64) range.add(reinterpret_cast<const double*>(in.part.data()), in.part_elems());
  else range.add(reinterpret_cast<const float*>(in.part.data()), in.part_elems());
  double ext[3] = {-range.lo, range.hi, range.mag};
  MPI_Allreduce(MPI_IN_PLACE, ext, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  range.lo = -ext[0];
  range.hi = ext[1];
  range.mag = ext[2];
  return range.rel_bound(o.eb);
}

// ------------------------------------------------------------------------- results

struct Result {
  double time_s = 0, t_predict = 0, t_compress = 0, t_write = 0, t_write_exposed = 0, t_sync = 0, t_fsync = 0;
  double t_flush = 0;  // predictive, pipelined: the writer's flush (zcoll_h5_report.t_total), the rest is create and close
  double t_compress_predicted = 0;  // predictive: the writer's model of t_compress (this rank's)
  double overlap = 0, predicted_ratio_err = NAN;
  uint64_t raw_bytes = 0, file_bytes = 0, stream_bytes = 0, reserved_bytes = 0, overflow_bytes = 0;
  int overflow_ranks = 0;
  bool verified = false;
  double max_err_over_eb = NAN;
  uint64_t bad_elements = 0;
  std::vector<double> eb_abs;  // per field: the writer's (verified predictive, pipelined) or resolved here
};

// Prints a failed zcoll_h5 call's code and detail (right away: the detail lasts until this
// thread's next zcoll call).
void zcoll_failed(const std::string& what, int rc) {
  const std::string detail = zcoll_h5_error_detail();
  std::fprintf(stderr, "zcoll-bench h5write: rank %d: %s: %s%s\n", g_rank, what.c_str(), zcoll_strerror(rc),
               detail.empty() ? "" : (": " + detail).c_str());
}

// ----------------------------------------------------------------- raw and filter

#ifdef H5_HAVE_PARALLEL

// An HDF5 call failed (HDF5 has printed its error stack). Inside a collective HDF5 operation
// the other ranks would wait for this one forever, so the job is aborted.
template <class T>
T h5ok(T v, const char* what) {
  if (v < 0) {
    std::fprintf(stderr, "zcoll-bench h5write: rank %d: %s failed\n", g_rank, what);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return v;
}

hid_t file_type(zcoll_dtype dt) { return dt == ZCOLL_FLOAT64 ? H5T_IEEE_F64LE : H5T_IEEE_F32LE; }
hid_t mem_type(zcoll_dtype dt) { return dt == ZCOLL_FLOAT64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT; }

// This rank's hyperslab selected in a dataset's file space, and a 1-D memory space of its
// values; both select nothing for an empty part, whose rank still takes part in collective
// writes.
struct PartSpaces {
  hid_t file, mem;
  PartSpaces(hid_t dset, const Input& in) {
    file = h5ok(H5Dget_space(dset), "H5Dget_space");
    const hsize_t n = std::max<hsize_t>(in.part_elems(), 1);
    mem = h5ok(H5Screate_simple(1, &n, nullptr), "H5Screate_simple");
    if (in.part_elems() == 0) {
      h5ok(H5Sselect_none(file), "H5Sselect_none");
      h5ok(H5Sselect_none(mem), "H5Sselect_none");
    } else {
      const std::vector<hsize_t> st(in.start.begin(), in.start.end()), ct(in.count.begin(), in.count.end());
      h5ok(H5Sselect_hyperslab(file, H5S_SELECT_SET, st.data(), nullptr, ct.data(), nullptr), "H5Sselect_hyperslab");
    }
  }
  ~PartSpaces() {
    H5Sclose(mem);
    H5Sclose(file);
  }
  PartSpaces(const PartSpaces&) = delete;
  PartSpaces& operator=(const PartSpaces&) = delete;
};

// raw and filter: one dataset per field at the root, created with dcpl_for(field) (which may
// call collectives: every rank creates every dataset in the same order), each rank's part
// written with one H5Dwrite of transfer mode xfer. t_write = the H5Dwrite calls, t_sync = the
// rest; H5Fclose ends it.
void write_hdf5(const Opts& o, const std::vector<Field>& fields, H5FD_mpio_xfer_t xfer,
                const std::function<hid_t(const Field&)>& dcpl_for, Result* res) {
  const double t0 = MPI_Wtime();
  const hid_t fapl = h5ok(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate");
  h5ok(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL), "H5Pset_fapl_mpio");
  const hid_t file = h5ok(H5Fcreate(o.out.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), "H5Fcreate");
  H5Pclose(fapl);
  const hid_t dxpl = h5ok(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate");
  h5ok(H5Pset_dxpl_mpio(dxpl, xfer), "H5Pset_dxpl_mpio");
  double t_write = 0;
  for (const Field& f : fields) {
    const std::vector<hsize_t> dims(f.in->dims.begin(), f.in->dims.end());
    const hid_t space = h5ok(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), "H5Screate_simple");
    const hid_t dcpl = dcpl_for(f);
    const hid_t dset = h5ok(H5Dcreate2(file, f.name.c_str(), file_type(f.in->dtype), space, H5P_DEFAULT, dcpl, H5P_DEFAULT),
                            "H5Dcreate2");
    H5Pclose(dcpl);
    H5Sclose(space);
    {
      const PartSpaces sel(dset, *f.in);
      const double tw = MPI_Wtime();
      h5ok(H5Dwrite(dset, mem_type(f.in->dtype), sel.mem, sel.file, dxpl, f.in->data()), "H5Dwrite");
      t_write += MPI_Wtime() - tw;
    }
    h5ok(H5Dclose(dset), "H5Dclose");
  }
  H5Pclose(dxpl);
  h5ok(H5Fclose(file), "H5Fclose");
  res->t_write = res->t_write_exposed = t_write;
  res->t_sync = MPI_Wtime() - t0 - t_write;
}

// A dataset creation property list without fill values: parallel HDF5 allocates every
// dataset's space when it is created, and fill values would be written there first, every
// byte twice (for the filter: a compressed fill chunk per chunk) before the real data.
hid_t dcpl_no_fill() {
  const hid_t dcpl = h5ok(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate");
  h5ok(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER), "H5Pset_fill_time");
  return dcpl;
}

void write_raw(const Opts& o, const std::vector<Field>& fields, Result* res) {
  write_hdf5(o, fields, H5FD_MPIO_INDEPENDENT, [](const Field&) {
    const hid_t dcpl = dcpl_no_fill();
    // Independent writes need the space allocated beforehand, collectively: early allocation
    // (what HDF5 forces on MPI-IO files anyway).
    h5ok(H5Pset_layout(dcpl, H5D_CONTIGUOUS), "H5Pset_layout");
    h5ok(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY), "H5Pset_alloc_time");
    return dcpl;
  }, res);
}

void write_filter(const Opts& o, const std::vector<Field>& fields, Result* res) {
  // The filter takes its thread count from the environment (HDF5 passes it nothing else).
  setenv("ZCOLL_H5_THREADS", std::to_string(o.threads).c_str(), 1);
  write_hdf5(o, fields, H5FD_MPIO_COLLECTIVE, [&o](const Field& f) {
    const hid_t dcpl = dcpl_no_fill();
    // One chunk per rank's part (the largest part, so the rows of the smaller ones straddle a
    // chunk border, which HDF5's collective filtered write resolves).
    std::vector<hsize_t> chunk(f.in->dims.begin(), f.in->dims.end());
    chunk[0] = (chunk[0] + g_size - 1) / g_size;
    h5ok(H5Pset_chunk(dcpl, static_cast<int>(chunk.size()), chunk.data()), "H5Pset_chunk");
    // HDF5 1.10 and 1.12 force early allocation on MPI-IO files (each chunk at its full size,
    // reallocated at its compressed size when written); 1.13 and later allow incremental
    // allocation for filtered datasets, which writes collectively anyway.
#if H5_VERSION_GE(1, 13, 0)
    h5ok(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_INCR), "H5Pset_alloc_time");
#else
    h5ok(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY), "H5Pset_alloc_time");
#endif
    // The bound field-wide, as the other modes have it: the filter's own REL is per chunk.
    const double eb_abs = resolve_eb_abs(o, *f.in);
    h5ok(zcoll_h5_set_filter(dcpl, o.codec, ZCOLL_EB_ABS, eb_abs), "zcoll_h5_set_filter");
    return dcpl;
  }, res);
}

// Bytes HDF5 stores for the fields' values (for filter: the compressed chunks). Rank 0.
uint64_t hdf5_storage_bytes(const std::string& path, const std::vector<Field>& fields) {
  const hid_t file = h5ok(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "H5Fopen");
  uint64_t sum = 0;
  for (const Field& f : fields) {
    const hid_t dset = h5ok(H5Dopen2(file, f.name.c_str(), H5P_DEFAULT), "H5Dopen2");
    sum += H5Dget_storage_size(dset);
    H5Dclose(dset);
  }
  H5Fclose(file);
  return sum;
}

#endif  // H5_HAVE_PARALLEL

// ----------------------------------------------------------- predictive and pipelined

// Queues every field with zcoll_h5_writer and closes it; the report's parts (this rank's
// times, all ranks' sizes) into res. false on every rank where a call failed on any.
bool write_zcoll(const Opts& o, const std::vector<Field>& fields, Result* res) {
  zcoll_h5_options opt;
  zcoll_h5_options_init(&opt);
  opt.mode = o.predictive() ? ZCOLL_H5_PREDICTIVE : ZCOLL_H5_PIPELINED;
  opt.codec = o.codec;
  opt.threads = o.threads;
  opt.extra_space = o.extra_space;
  opt.reorder = o.reorder ? 1 : 0;
  zcoll_h5_writer w = nullptr;
  int rc = zcoll_h5_writer_create(MPI_COMM_WORLD, o.out.c_str(), &opt, &w);
  if (rc) {  // collective: the same code on every rank
    zcoll_failed("zcoll_h5_writer_create", rc);
    return false;
  }
  // Queuing is checked on this rank only: after a failure this rank queues no more and still
  // closes, where the ranks' fields disagree and the close fails on every rank.
  bool queued = true;
  const zcoll_eb_mode eb_mode = o.eb_mode == "abs" ? ZCOLL_EB_ABS : ZCOLL_EB_REL;
  for (const Field& f : fields) {
    const Input& in = *f.in;
    rc = zcoll_h5_write_field(w, f.name.c_str(), in.dtype, static_cast<int>(in.dims.size()), in.dims.data(),
                              in.start.data(), in.count.data(), in.data(), eb_mode, o.eb);
    if (rc) {
      zcoll_failed("zcoll_h5_write_field " + f.name, rc);
      queued = false;
      break;
    }
  }
  zcoll_h5_report rep{};
  rc = zcoll_h5_writer_close(&w, &rep);
  if (rc) zcoll_failed("zcoll_h5_writer_close", rc);
  int ok = queued && rc == 0;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!ok) return false;
  res->t_predict = rep.t_predict;
  res->t_compress = rep.t_compress;
  res->t_compress_predicted = rep.t_compress_predicted;
  res->t_write = rep.t_write;
  res->t_write_exposed = rep.t_write_exposed;
  res->t_sync = rep.t_sync;
  res->t_flush = rep.t_total;
  res->overlap = rep.overlap;
  res->predicted_ratio_err = rep.predicted_ratio_err;
  res->stream_bytes = rep.stream_bytes;
  res->reserved_bytes = rep.reserved_bytes;
  res->overflow_bytes = rep.overflow_bytes;
  res->overflow_ranks = rep.overflow_ranks;
  return true;
}

// ---------------------------------------------------------------------- verification

// Errors of one rank's parts read back.
struct Check {
  double max_over_eb = 0;
  uint64_t bad = 0;
  bool failed = false;  // a read failed, or the writer's bound is looser than asked
};

// got against want (n elements): |x - x'| <= eb_abs, bit-exact where exact or where the
// value is not finite. NaN errors count as infinite.
template <class T>
void compare(const T* want, const T* got, size_t n, double eb_abs, bool exact, Check* c) {
  double worst = 0;
  for (size_t i = 0; i < n; ++i) {
    const double a = want[i], b = got[i];
    double e = std::fabs(a - b);
    if (exact || !std::isfinite(a)) {
      if (std::memcmp(&want[i], &got[i], sizeof(T)) == 0) continue;
      if (!(e > 0)) e = INFINITY;  // bits differ but the values do not compare apart
      ++c->bad;
    } else if (!(e <= eb_abs)) {
      ++c->bad;
      if (std::isnan(e)) e = INFINITY;
    }
    worst = std::max(worst, e);
  }
  c->max_over_eb = std::max(c->max_over_eb, worst / eb_abs);
}

void compare_part(const Input& in, const std::vector<unsigned char>& got, double eb_abs, bool exact, Check* c) {
  if (in.dtype == ZCOLL_FLOAT64)
    compare(reinterpret_cast<const double*>(in.part.data()), reinterpret_cast<const double*>(got.data()),
            in.part_elems(), eb_abs, exact, c);
  else
    compare(reinterpret_cast<const float*>(in.part.data()), reinterpret_cast<const float*>(got.data()),
            in.part_elems(), eb_abs, exact, c);
}

#ifdef H5_HAVE_PARALLEL
// raw (bit-exact) and filter: H5Dread of this rank's part of each dataset, independently.
void verify_hdf5(const Opts& o, const std::vector<Field>& fields, Check* c) {
  const hid_t file = H5Fopen(o.out.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) {
    std::fprintf(stderr, "zcoll-bench h5write: rank %d: cannot open %s to verify\n", g_rank, o.out.c_str());
    c->failed = true;
    return;
  }
  std::vector<unsigned char> got;
  for (const Field& f : fields) {
    const hid_t dset = H5Dopen2(file, f.name.c_str(), H5P_DEFAULT);
    got.assign(f.in->part.size(), 0);
    bool ok = dset >= 0;
    if (ok) {
      const PartSpaces sel(dset, *f.in);
      ok = H5Dread(dset, mem_type(f.in->dtype), sel.mem, sel.file, H5P_DEFAULT, nonnull(got)) >= 0;
      H5Dclose(dset);
    }
    if (!ok) {
      std::fprintf(stderr, "zcoll-bench h5write: rank %d: cannot read %s back\n", g_rank, f.name.c_str());
      c->failed = true;
      continue;
    }
    compare_part(*f.in, got, f.eb_abs, o.mode == Mode::Raw, c);
  }
  H5Fclose(file);
}
#endif

// predictive and pipelined: zcoll_h5_read_field of this rank's part of each field, against
// the bound the file states (which must not be looser than the one asked for). eb_abs: the
// file's bound per field.
void verify_zcoll(const Opts& o, const std::vector<Field>& fields, Check* c, std::vector<double>* eb_abs) {
  zcoll_h5_reader rd = nullptr;
  int rc = zcoll_h5_reader_open(o.out.c_str(), &rd);
  if (rc) {
    zcoll_failed("zcoll_h5_reader_open", rc);
    c->failed = true;
    return;
  }
  std::vector<unsigned char> got;
  for (size_t k = 0; k < fields.size(); ++k) {
    const Field& f = fields[k];
    zcoll_h5_field_info info{};
    rc = zcoll_h5_reader_field_info(rd, static_cast<int>(k), &info);
    if (rc) {
      zcoll_failed("zcoll_h5_reader_field_info " + f.name, rc);
      c->failed = true;
      continue;
    }
    if (f.name != info.name)
      std::fprintf(stderr, "zcoll-bench h5write: field %zu is %s in the file, %s was written\n", k, info.name,
                   f.name.c_str());
    if (!(info.eb_abs <= f.eb_abs * (1 + 1e-9)))
      std::fprintf(stderr, "zcoll-bench h5write: %s: the file's eb_abs %.9g is looser than the %.9g asked for\n",
                   f.name.c_str(), info.eb_abs, f.eb_abs);
    c->failed = c->failed || f.name != info.name || !(info.eb_abs <= f.eb_abs * (1 + 1e-9));
    (*eb_abs)[k] = info.eb_abs;
    got.assign(f.in->part.size(), 0);
    rc = zcoll_h5_read_field(rd, f.name.c_str(), f.in->dtype, f.in->start.data(), f.in->count.data(),
                             nonnull(got), o.threads);
    if (rc) {
      zcoll_failed("zcoll_h5_read_field " + f.name, rc);
      c->failed = true;
      continue;
    }
    compare_part(*f.in, got, info.eb_abs, false, c);
  }
  zcoll_h5_reader_close(&rd);
}

// Reads the file back (every rank its own parts) and puts the errors over all ranks into res.
// false (on every rank) where a read failed or an element is outside its bound.
bool verify(const Opts& o, const std::vector<Field>& fields, Result* res) {
  Check c;
  if (o.uses_writer()) verify_zcoll(o, fields, &c, &res->eb_abs);
#ifdef H5_HAVE_PARALLEL
  else verify_hdf5(o, fields, &c);
#endif
  double v[2] = {c.max_over_eb, c.failed ? 1.0 : 0.0};
  MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  uint64_t bad = c.bad;
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  // eb_abs of the file as rank 0 read it (every rank reads the same tables).
  MPI_Bcast(res->eb_abs.data(), static_cast<int>(res->eb_abs.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  res->verified = true;
  res->max_err_over_eb = v[0];
  res->bad_elements = bad;
  return v[1] == 0 && bad == 0;
}

// ------------------------------------------------------------------------- the run

// Every rank opens the file it wrote and fsyncs it: the data is on storage, not only in this
// node's page cache, before the clock stops. false where it cannot.
bool fsync_file(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY);
  const bool ok = fd >= 0 && fsync(fd) == 0;
  if (!ok) std::fprintf(stderr, "zcoll-bench h5write: rank %d: fsync %s: %s\n", g_rank, path.c_str(), std::strerror(errno));
  if (fd >= 0) close(fd);
  return ok;
}

// Deletes the old file, then times the mode's write (see the top comment). false on every
// rank where it failed.
bool timed_write(const Opts& o, const std::vector<Field>& fields, Result* res) {
  if (g_rank == 0 && unlink(o.out.c_str()) != 0 && errno != ENOENT)
    std::fprintf(stderr, "zcoll-bench h5write: cannot delete %s: %s\n", o.out.c_str(), std::strerror(errno));
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  bool ok = true;
  switch (o.mode) {
#ifdef H5_HAVE_PARALLEL
    case Mode::Raw: write_raw(o, fields, res); break;
    case Mode::Filter: write_filter(o, fields, res); break;
#else
    case Mode::Raw:
    case Mode::Filter: break;  // refused before (main)
#endif
    case Mode::Predictive:
    case Mode::Pipelined: ok = write_zcoll(o, fields, res); break;
  }
  const double t_sync_start = MPI_Wtime();
  int synced = ok && fsync_file(o.out);
  res->t_fsync = MPI_Wtime() - t_sync_start;
  MPI_Allreduce(MPI_IN_PLACE, &synced, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);  // doubles as the closing barrier
  res->time_s = MPI_Wtime() - t0;
  // The slowest rank's times; the mean overlap.
  double t[7] = {res->time_s, res->t_predict, res->t_compress, res->t_write, res->t_write_exposed, res->t_sync,
                 res->t_fsync};
  MPI_Allreduce(MPI_IN_PLACE, t, 7, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  res->time_s = t[0], res->t_predict = t[1], res->t_compress = t[2], res->t_write = t[3];
  res->t_write_exposed = t[4], res->t_sync = t[5], res->t_fsync = t[6];
  MPI_Allreduce(MPI_IN_PLACE, &res->overlap, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  res->overlap /= g_size;
  return synced;
}

// The file's size, and for raw and filter the bytes HDF5 stores for the values. Rank 0's
// figures, for every rank.
void measure_file(const Opts& o, const std::vector<Field>& fields, Result* res) {
  uint64_t v[2] = {0, res->stream_bytes};
  if (g_rank == 0) {
    struct stat st {};
    if (stat(o.out.c_str(), &st) == 0) v[0] = static_cast<uint64_t>(st.st_size);
#ifdef H5_HAVE_PARALLEL
    if (!o.uses_writer()) v[1] = hdf5_storage_bytes(o.out, fields);
#else
    (void)fields;
#endif
  }
  MPI_Bcast(v, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  res->file_bytes = v[0];
  res->stream_bytes = v[1];
}

// ------------------------------------------------------------------------- output

// A JSON object, key by key.
struct Json {
  std::string s;
  Json& raw(const char* key, const std::string& v) {
    s += (s.empty() ? "{" : ",") + zsupport::json_string(key) + ":" + v;
    return *this;
  }
  Json& num(const char* key, double v, const char* fmt = "%.6f") { return raw(key, json_number(v, fmt)); }
  Json& u64(const char* key, uint64_t v) { return raw(key, std::to_string(v)); }
  Json& str(const char* key, const std::string& v) { return raw(key, zsupport::json_string(v)); }
  template <class T, class F>
  Json& list(const char* key, const std::vector<T>& items, F&& render) {
    std::string v = "[";
    for (size_t i = 0; i < items.size(); ++i) v += (i ? "," : "") + render(items[i]);
    return raw(key, v + "]");
  }
};

std::string extents(const std::vector<uint64_t>& dims) {
  std::string s;
  for (uint64_t d : dims) s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

double ratio_of(double a, double b) { return b > 0 ? a / b : NAN; }

void print(const Opts& o, const std::vector<Input>& inputs, const std::vector<Field>& fields, const Result& r) {
  const double ratio = ratio_of(r.raw_bytes, r.file_bytes), overhead = ratio_of(r.file_bytes, r.stream_bytes);
  const double mib_s = ratio_of(r.raw_bytes / 1048576.0, r.time_s);
  if (o.json) {
    Json j;
    j.str("mode", kModeNames[static_cast<int>(o.mode)]).raw("ranks", std::to_string(g_size));
    j.raw("fields", std::to_string(fields.size()));
    j.list("field_names", fields, [](const Field& f) { return zsupport::json_string(f.name); });
    j.list("inputs", inputs, [](const Input& in) { return zsupport::json_string(in.path); });
    j.list("tiled", inputs, [](const Input& in) { return std::to_string(in.tiles); });
    j.list("global_dims", inputs, [](const Input& in) { return zsupport::json_string(extents(in.dims)); });
    j.num("mib_per_rank", o.mib_per_rank, "%.6g").str("codec", o.codec_name).raw("threads", std::to_string(o.threads));
    j.str("eb_mode", o.eb_mode).num("eb", o.eb, "%.6g");
    j.list("eb_abs", r.eb_abs, [](double v) { return json_number(v, "%.9g"); });
    j.u64("raw_bytes", r.raw_bytes).u64("file_bytes", r.file_bytes).u64("stream_bytes", r.stream_bytes);
    j.num("ratio", ratio, "%.4f").num("storage_overhead", overhead, "%.4f");
    j.num("time_s", r.time_s).num("mib_s", mib_s, "%.2f");
    j.num("t_predict", r.t_predict).num("t_compress", r.t_compress).num("t_write", r.t_write);
    j.num("t_write_exposed", r.t_write_exposed).num("t_sync", r.t_sync).num("t_fsync", r.t_fsync);
    j.num("t_flush", r.t_flush).num("t_compress_predicted", r.t_compress_predicted);
    j.num("overlap", r.overlap, "%.4f").num("predicted_ratio_err", r.predicted_ratio_err, "%.4f");
    j.num("extra_space", o.predictive() ? o.extra_space : NAN, "%.4g");
    j.raw("reorder", o.predictive() ? (o.reorder ? "true" : "false") : "null");
    j.u64("reserved_bytes", r.reserved_bytes).u64("overflow_bytes", r.overflow_bytes);
    j.raw("overflow_ranks", std::to_string(r.overflow_ranks));
    j.raw("verified", r.verified ? "true" : "false").num("max_err_over_eb", r.max_err_over_eb, "%.6f");
    j.u64("bad_elements", r.bad_elements).str("out", o.out).str("mpi_library", zsupport::mpi_library());
    std::printf("%s}\n", j.s.c_str());
    return;
  }
  std::printf("h5write %s: %d ranks, %zu fields, %.1f MiB -> %.1f MiB file (ratio %.2f, %.3fx the %.1f MiB of "
              "streams) in %.3f s (%.1f MiB/s)\n",
              kModeNames[static_cast<int>(o.mode)], g_size, fields.size(), r.raw_bytes / 1048576.0,
              r.file_bytes / 1048576.0, ratio, overhead, r.stream_bytes / 1048576.0, r.time_s, mib_s);
  for (const Input& in : inputs)
    std::printf("  %s: tiled %llu times to %s\n", in.path.c_str(), static_cast<unsigned long long>(in.tiles),
                extents(in.dims).c_str());
  std::printf("  predict %.3f  compress %s  write %.3f (exposed %.3f)  sync %.3f  fsync %.3f s; overlap %.2f\n",
              r.t_predict, std::isnan(r.t_compress) ? "(in write)" : zsupport::format("%.3f", r.t_compress).c_str(),
              r.t_write, r.t_write_exposed, r.t_sync, r.t_fsync, r.overlap);
  if (o.predictive())
    std::printf("  predicted ratio error %.1f%%, extra space %.3g, reorder %s, overflow %llu bytes on %d ranks\n",
                100 * r.predicted_ratio_err, o.extra_space, o.reorder ? "on" : "off",
                static_cast<unsigned long long>(r.overflow_bytes), r.overflow_ranks);
  if (r.verified)
    std::printf("  read back: max error / eb %.4f, %llu elements outside the bound\n", r.max_err_over_eb,
                static_cast<unsigned long long>(r.bad_elements));
  else
    std::printf("  not read back (--no-verify)\n");
}

int finish(int rc) {
  std::fflush(stdout);
  std::fflush(stderr);
  MPI_Finalize();
  return rc;
}

}  // namespace

int h5write_main(int argc, char** argv) {
  int provided = 0;
  // The writer's helper thread never calls MPI (zcoll_h5io.h): FUNNELED is enough.
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    std::fprintf(stderr, "zcoll-bench h5write: MPI_Init failed\n");
    return 1;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  Opts o;
  try {
    o = parse(argc, argv);
  } catch (const UsageError& e) {
    if (g_rank == 0) std::fprintf(stderr, "zcoll-bench h5write: %s\n%s", e.msg.c_str(), kUsage);
    return finish(2);
  }
  if (o.help) {
    if (g_rank == 0) std::fputs(kUsage, stdout);
    return finish(0);
  }
#ifndef H5_HAVE_PARALLEL
  if (!o.uses_writer()) {
    if (g_rank == 0) std::fprintf(stderr, "zcoll-bench h5write: raw and filter modes need parallel HDF5\n");
    return finish(2);
  }
#endif
  // The inputs, then the fields made from them cyclically.
  std::vector<Input> inputs(o.inputs.size());
  std::string err;
  int ok = 1;
  for (size_t i = 0; i < inputs.size() && ok; ++i) ok = load_input(o.inputs[i], o.mib_per_rank, &inputs[i], &err);
  if (!ok) std::fprintf(stderr, "zcoll-bench h5write: rank %d: %s\n", g_rank, err.c_str());
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!ok) return finish(1);
  std::vector<Field> fields(o.fields);
  Result res;
  for (int k = 0; k < o.fields; ++k) {
    Field& f = fields[k];
    f.in = &inputs[k % inputs.size()];
    f.name = (k < 10 ? "f0" : "f") + std::to_string(k) + "_" + f.in->stem;
    f.eb_abs = resolve_eb_abs(o, *f.in);
    res.eb_abs.push_back(f.eb_abs);
    res.raw_bytes += f.in->raw_bytes();
  }
  if (!timed_write(o, fields, &res)) return finish(1);
  measure_file(o, fields, &res);
  // What does not apply, null in the JSON (set after timed_write's reductions).
  if (o.mode == Mode::Filter) res.t_compress = NAN;  // inside H5Dwrite
  if (!o.predictive()) res.predicted_ratio_err = NAN;
  bool within = true;
  if (o.verify) within = verify(o, fields, &res);
  if (g_rank == 0) print(o, inputs, fields, res);
  if (!within && g_rank == 0)
    std::fprintf(stderr, "zcoll-bench h5write: verification failed: %llu elements outside their bound%s\n",
                 static_cast<unsigned long long>(res.bad_elements), o.mode == Mode::Raw ? " (raw: not bit-exact)" : "");
  return finish(within ? 0 : 1);
}
