// zcoll_h5_writer and zcoll_h5_reader (zcoll_h5io.h) on the real fields in data/:
//   test_h5io DATA_DIR WORK_DIR            every check below, on any number of ranks
//   test_h5io --diskfull DIR DATA_DIR      a write to a full file system fails on every rank
// Checks: predictive and pipelined round trips (float32 and float64, 1-D to 3-D, ABS and
// REL, uneven partitions along different axes, an empty hyperslab), every element within
// eb_abs; reads of hyperslabs across rank borders, into the other type, and with another
// rank count than the writer's; forced overflow (extra space 1.0, and data whose ratio the
// sampler misjudges); reorder on and off give byte-identical files; disagreeing arguments
// fail on every rank; damaged files (truncated, a flipped stream byte, a partition that
// overlaps, a newer version, an incomplete file) give the right error on every rank.
#include <hdf5.h>
#include <mpi.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "zcoll_h5io.h"

namespace {

int g_rank = 0, g_size = 1, g_failures = 0;

#define CHECK(cond)                                                                         \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      std::fprintf(stderr, "rank %d: %s:%d: CHECK failed: %s (detail: %s)\n", g_rank, __FILE__, \
                   __LINE__, #cond, zcoll_h5_error_detail());                               \
      ++g_failures;                                                                         \
    }                                                                                       \
  } while (0)

std::string g_data, g_work;

std::vector<float> load_f32(const std::string& name, size_t n) {
  std::vector<float> v(n);
  std::ifstream in(g_data + "/" + name, std::ios::binary);
  in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n * 4));
  if (!in) {
    std::fprintf(stderr, "cannot read %s/%s\n", g_data.c_str(), name.c_str());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return v;
}

// A field held globally by every rank (tests only), with this rank's hyperslab.
struct Global {
  std::string name;
  zcoll_dtype dtype;
  std::vector<uint64_t> dims;
  std::vector<float> f32;
  std::vector<double> f64;
  zcoll_eb_mode mode;
  double eb;
  const void* data() const { return dtype == ZCOLL_FLOAT32 ? static_cast<const void*>(f32.data()) : f64.data(); }
  double at(uint64_t i) const { return dtype == ZCOLL_FLOAT32 ? f32[i] : f64[i]; }
};

uint64_t vol(const std::vector<uint64_t>& c) {
  uint64_t v = 1;
  for (uint64_t e : c) v *= e;
  return v;
}

// Rank r of p's block of the axis-`axis` split (remainder to the first ranks); `empty_rank`
// gets nothing and its share goes to the others.
void split(const std::vector<uint64_t>& dims, int axis, int r, int p, int empty_rank, std::vector<uint64_t>* start,
           std::vector<uint64_t>* count) {
  *start = std::vector<uint64_t>(dims.size(), 0);
  *count = dims;
  const int holders = empty_rank >= 0 && p > 1 ? p - 1 : p;
  if (empty_rank >= 0 && p > 1 && r == empty_rank) {
    (*count)[axis] = 0;
    return;
  }
  const int k = empty_rank >= 0 && p > 1 && r > empty_rank ? r - 1 : r;
  const uint64_t n = dims[axis], base = n / holders, extra = n % holders;
  (*start)[axis] = k * base + std::min<uint64_t>(k, extra);
  (*count)[axis] = base + (static_cast<uint64_t>(k) < extra ? 1 : 0);
}

// Copies the hyperslab of a C-order array (dims) out.
template <class T>
std::vector<T> slab(const std::vector<T>& g, const std::vector<uint64_t>& dims, const std::vector<uint64_t>& start,
                    const std::vector<uint64_t>& count) {
  std::vector<T> out(vol(count));
  const size_t nd = dims.size();
  std::vector<uint64_t> p(nd, 0);
  for (uint64_t i = 0; i < out.size(); ++i) {
    uint64_t off = 0, rem = i;
    for (size_t d = nd; d-- > 0;) {
      p[d] = rem % count[d];
      rem /= count[d];
    }
    for (size_t d = 0; d < nd; ++d) off = off * dims[d] + start[d] + p[d];
    out[i] = g[off];
  }
  return out;
}

struct Spec {
  const Global* g;
  int axis;
  int empty_rank;
};

// Writes the specs over comm; returns the close's code and report.
int write_file(MPI_Comm comm, const std::string& path, const zcoll_h5_options& o, const std::vector<Spec>& specs,
               zcoll_h5_report* rep) {
  int r, p;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &p);
  zcoll_h5_writer w = nullptr;
  int rc = zcoll_h5_writer_create(comm, path.c_str(), &o, &w);
  if (rc) return rc;
  std::vector<std::vector<float>> keep32;
  std::vector<std::vector<double>> keep64;
  keep32.reserve(specs.size());
  keep64.reserve(specs.size());
  for (const Spec& s : specs) {
    std::vector<uint64_t> st, ct;
    split(s.g->dims, s.axis, r, p, s.empty_rank, &st, &ct);
    const void* buf;
    if (s.g->dtype == ZCOLL_FLOAT32) {
      keep32.push_back(slab(s.g->f32, s.g->dims, st, ct));
      buf = keep32.back().data();
    } else {
      keep64.push_back(slab(s.g->f64, s.g->dims, st, ct));
      buf = keep64.back().data();
    }
    rc = zcoll_h5_write_field(w, s.g->name.c_str(), s.g->dtype, static_cast<int>(s.g->dims.size()),
                              s.g->dims.data(), st.data(), ct.data(), buf, s.g->mode, s.g->eb);
    CHECK(rc == ZCOLL_SUCCESS);
  }
  return zcoll_h5_writer_close(&w, rep);
}

// Reads hyperslab (start, count) of every field into `dtype` and checks each element
// against the field's eb_abs (plus the rounding of a conversion to float32).
void check_read(const std::string& path, const std::vector<const Global*>& fields, zcoll_dtype dtype,
                const std::vector<std::vector<uint64_t>>& starts, const std::vector<std::vector<uint64_t>>& counts,
                double* worst_ratio) {
  zcoll_h5_reader rd = nullptr;
  int rc = zcoll_h5_reader_open(path.c_str(), &rd);
  CHECK(rc == ZCOLL_SUCCESS);
  if (rc) return;
  int nf = 0;
  zcoll_h5_reader_nfields(rd, &nf);
  CHECK(nf == static_cast<int>(fields.size()));
  for (size_t i = 0; i < fields.size(); ++i) {
    const Global& g = *fields[i];
    zcoll_h5_field_info info;
    CHECK(zcoll_h5_reader_field_info(rd, static_cast<int>(i), &info) == ZCOLL_SUCCESS);
    CHECK(g.name == info.name && info.dtype == g.dtype && info.ndims == static_cast<int>(g.dims.size()));
    CHECK(info.stream_bytes > 0 && info.stream_bytes < info.raw_bytes);
    const std::vector<uint64_t>& st = starts[i];
    const std::vector<uint64_t>& ct = counts[i];
    const uint64_t n = vol(ct);
    std::vector<double> got(n);
    std::vector<float> got32(n);
    void* buf = dtype == ZCOLL_FLOAT64 ? static_cast<void*>(got.data()) : got32.data();
    CHECK(zcoll_h5_read_field(rd, g.name.c_str(), dtype, st.data(), ct.data(), buf, 0) == ZCOLL_SUCCESS);
    if (dtype == ZCOLL_FLOAT32) got.assign(got32.begin(), got32.end());
    std::vector<double> ref;
    if (g.dtype == ZCOLL_FLOAT32) {
      std::vector<float> s = slab(g.f32, g.dims, st, ct);
      ref.assign(s.begin(), s.end());
    } else {
      ref = slab(g.f64, g.dims, st, ct);
    }
    uint64_t bad = 0;
    for (uint64_t k = 0; k < n; ++k) {
      // A float64 field read as float32 is rounded once more after decoding.
      const double slack = dtype == ZCOLL_FLOAT32 && g.dtype == ZCOLL_FLOAT64 ? std::fabs(ref[k]) * 6e-8 : 0;
      const double err = std::fabs(got[k] - ref[k]);
      if (!(err <= info.eb_abs + slack)) ++bad;
      if (worst_ratio) *worst_ratio = std::max(*worst_ratio, err / info.eb_abs);
    }
    if (bad) std::fprintf(stderr, "rank %d: field %s: %llu of %llu elements outside eb_abs\n", g_rank, g.name.c_str(),
                          static_cast<unsigned long long>(bad), static_cast<unsigned long long>(n));
    CHECK(bad == 0);
  }
  CHECK(zcoll_h5_reader_close(&rd) == ZCOLL_SUCCESS);
}

std::vector<std::vector<uint64_t>> whole(const std::vector<const Global*>& fs, bool counts) {
  std::vector<std::vector<uint64_t>> v;
  for (const Global* g : fs) v.push_back(counts ? g->dims : std::vector<uint64_t>(g->dims.size(), 0));
  return v;
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

int open_code(const std::string& path) {
  zcoll_h5_reader rd = nullptr;
  const int rc = zcoll_h5_reader_open(path.c_str(), &rd);
  if (rd) zcoll_h5_reader_close(&rd);
  return rc;
}

int read_code(const std::string& path, const Global& g) {
  zcoll_h5_reader rd = nullptr;
  int rc = zcoll_h5_reader_open(path.c_str(), &rd);
  if (rc) return rc;
  std::vector<double> out(vol(g.dims));
  std::vector<uint64_t> st(g.dims.size(), 0);
  rc = zcoll_h5_read_field(rd, g.name.c_str(), ZCOLL_FLOAT64, st.data(), g.dims.data(), out.data(), 1);
  zcoll_h5_reader_close(&rd);
  return rc;
}

// Rank 0 damages a copy of `good` with `edit`; every rank then sees `expect`.
template <class Edit>
void damaged(const std::string& good, const std::string& tag, Edit edit, int expect, bool on_read, const Global& g) {
  const std::string bad = g_work + "/damaged_" + tag + ".zh5";
  if (g_rank == 0) {
    std::ofstream(bad, std::ios::binary) << file_bytes(good);
    edit(bad);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const int rc = on_read ? read_code(bad, g) : open_code(bad);
  if (rc != expect) std::fprintf(stderr, "rank %d: damaged file '%s': code %d, expected %d\n", g_rank, tag.c_str(), rc, expect);
  CHECK(rc == expect);
  MPI_Barrier(MPI_COMM_WORLD);
}

void set_root_u32(const std::string& path, const char* attr, uint32_t v) {
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t a = H5Aopen(f, attr, H5P_DEFAULT);
  H5Awrite(a, H5T_NATIVE_UINT32, &v);
  H5Aclose(a);
  H5Fclose(f);
}

// Address of field/dataset in the file.
haddr_t dataset_addr(const std::string& path, const std::string& ds) {
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d = H5Dopen2(f, ds.c_str(), H5P_DEFAULT);
  const haddr_t a = H5Dget_offset(d);
  H5Dclose(d);
  H5Fclose(f);
  return a;
}

int run_all() {
  // Real fields: cesm TS (float32, 2-D per day), echam5 T (float64 from float32), turb.
  Global cesm{"cesm_TS", ZCOLL_FLOAT32, {10, 192, 288}, load_f32("cesm_TS_10x192x288.f32", 10 * 192 * 288), {},
              ZCOLL_EB_REL, 1e-4};
  std::vector<float> e = load_f32("echam5_T_17x96x192.f32", 17 * 96 * 192);
  Global echam{"echam5_T", ZCOLL_FLOAT64, {17, 96, 192}, {}, std::vector<double>(e.begin(), e.end()), ZCOLL_EB_ABS,
               0.01};
  std::vector<float> t = load_f32("turb_wmag_91x91x91.f32", 91 * 91 * 91);
  Global turb1d{"turb_1d", ZCOLL_FLOAT32, {91 * 91 * 91}, t, {}, ZCOLL_EB_REL, 1e-3};
  Global cesm4d{"cesm_4d", ZCOLL_FLOAT32, {2, 5, 192, 288}, cesm.f32, {}, ZCOLL_EB_ABS, 0.05};
  const std::vector<Spec> specs = {{&cesm, 0, -1}, {&echam, 1, -1}, {&turb1d, 0, g_size - 1}, {&cesm4d, 2, 0}};
  const std::vector<const Global*> fields = {&cesm, &echam, &turb1d, &cesm4d};

  // Round trips in both modes; every rank reads everything, and a block across borders.
  for (int mode : {ZCOLL_H5_PREDICTIVE, ZCOLL_H5_PIPELINED}) {
    zcoll_h5_options o;
    zcoll_h5_options_init(&o);
    o.mode = mode;
    o.threads = 1;
    const std::string path = g_work + "/roundtrip_" + std::to_string(mode) + "_np" + std::to_string(g_size) + ".zh5";
    zcoll_h5_report rep;
    CHECK(write_file(MPI_COMM_WORLD, path, o, specs, &rep) == ZCOLL_SUCCESS);
    CHECK(rep.fields == 4 && rep.stream_bytes > 0 && rep.stream_bytes < rep.raw_bytes);
    CHECK(rep.file_bytes >= rep.stream_bytes);
    if (mode == ZCOLL_H5_PIPELINED) CHECK(rep.overflow_bytes == 0 && rep.reserved_bytes == rep.stream_bytes);
    if (mode == ZCOLL_H5_PREDICTIVE) CHECK(rep.predicted_ratio_err < 0.5);
    double worst = 0;
    check_read(path, fields, ZCOLL_FLOAT64, whole(fields, false), whole(fields, true), &worst);
    CHECK(worst > 0.05 && worst <= 1.0);  // the comparison sees real errors
    // A block from the middle of every field, read as float32.
    std::vector<std::vector<uint64_t>> st, ct;
    for (const Global* g : fields) {
      std::vector<uint64_t> s, c;
      for (uint64_t d : g->dims) {
        s.push_back(d / 3);
        c.push_back(std::max<uint64_t>(1, d / 2));
      }
      st.push_back(s);
      ct.push_back(c);
    }
    check_read(path, fields, ZCOLL_FLOAT32, st, ct, nullptr);
  }

  // Two flushes into one file: a field, a flush, two more fields, the close.
  {
    zcoll_h5_options o;
    zcoll_h5_options_init(&o);
    const std::string path = g_work + "/two_flushes.zh5";
    zcoll_h5_writer w = nullptr;
    CHECK(zcoll_h5_writer_create(MPI_COMM_WORLD, path.c_str(), &o, &w) == ZCOLL_SUCCESS);
    std::vector<std::vector<float>> k32;
    std::vector<std::vector<double>> k64;
    auto queue = [&](const Global& g, int axis) {
      std::vector<uint64_t> st, ct;
      split(g.dims, axis, g_rank, g_size, -1, &st, &ct);
      const void* buf;
      if (g.dtype == ZCOLL_FLOAT32) {
        k32.push_back(slab(g.f32, g.dims, st, ct));
        buf = k32.back().data();
      } else {
        k64.push_back(slab(g.f64, g.dims, st, ct));
        buf = k64.back().data();
      }
      CHECK(zcoll_h5_write_field(w, g.name.c_str(), g.dtype, static_cast<int>(g.dims.size()), g.dims.data(),
                                 st.data(), ct.data(), buf, g.mode, g.eb) == ZCOLL_SUCCESS);
    };
    k32.reserve(3);
    k64.reserve(3);
    queue(cesm, 0);
    zcoll_h5_report rep;
    CHECK(zcoll_h5_writer_flush(w, &rep) == ZCOLL_SUCCESS && rep.fields == 1);
    queue(echam, 1);
    queue(turb1d, 0);
    CHECK(zcoll_h5_writer_close(&w, &rep) == ZCOLL_SUCCESS && rep.fields == 3);
    const std::vector<const Global*> three = {&cesm, &echam, &turb1d};
    check_read(path, three, ZCOLL_FLOAT64, whole(three, false), whole(three, true), nullptr);
  }

  // NaN and +-Inf: the REL range ignores them, and they come back bit for bit.
  {
    Global odd{"nonfinite", ZCOLL_FLOAT32, {10, 192, 288}, cesm.f32, {}, ZCOLL_EB_REL, 1e-3};
    const size_t n = odd.f32.size();
    for (size_t i = 7; i < n; i += 9973) odd.f32[i] = (i / 9973) % 3 == 0 ? NAN : (i / 9973) % 3 == 1 ? INFINITY : -INFINITY;
    zcoll_h5_options o;
    zcoll_h5_options_init(&o);
    const std::string path = g_work + "/nonfinite.zh5";
    CHECK(write_file(MPI_COMM_WORLD, path, o, {{&odd, 1, -1}}, nullptr) == ZCOLL_SUCCESS);
    zcoll_h5_reader rd = nullptr;
    CHECK(zcoll_h5_reader_open(path.c_str(), &rd) == ZCOLL_SUCCESS);
    zcoll_h5_field_info info;
    CHECK(zcoll_h5_reader_field_info(rd, 0, &info) == ZCOLL_SUCCESS);
    CHECK(std::fabs(info.eb_abs - 1e-3 * (315.58 - 211.99)) < 1e-3 * 0.1);  // the finite range only
    std::vector<float> back(n);
    const uint64_t st[3] = {0, 0, 0};
    CHECK(zcoll_h5_read_field(rd, "nonfinite", ZCOLL_FLOAT32, st, odd.dims.data(), back.data(), 0) == ZCOLL_SUCCESS);
    uint64_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
      if (std::isfinite(odd.f32[i])) bad += !(std::fabs(static_cast<double>(back[i]) - odd.f32[i]) <= info.eb_abs);
      else bad += std::memcmp(&back[i], &odd.f32[i], 4) != 0;
    }
    CHECK(bad == 0);
    zcoll_h5_reader_close(&rd);
  }

  // Another rank count: all but the last rank write, every rank reads its own block.
  {
    const int writers = g_size > 1 ? g_size - 1 : 1;
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, g_rank < writers ? 0 : MPI_UNDEFINED, g_rank, &sub);
    const std::string path = g_work + "/subset_np" + std::to_string(g_size) + ".zh5";
    zcoll_h5_options o;
    zcoll_h5_options_init(&o);
    const std::vector<Spec> two = {{&cesm, 1, -1}, {&echam, 0, -1}};
    if (sub != MPI_COMM_NULL) {
      CHECK(write_file(sub, path, o, two, nullptr) == ZCOLL_SUCCESS);
      MPI_Comm_free(&sub);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    std::vector<std::vector<uint64_t>> st(2), ct(2);
    for (int i = 0; i < 2; ++i) split(fields[i]->dims, 2, g_rank, g_size, -1, &st[i], &ct[i]);
    check_read(path, {&cesm, &echam}, ZCOLL_FLOAT64, st, ct, nullptr);
  }

  // Overflow: extra space 1.0; and a field whose one sampled chunk (the middle one) is smooth
  // while the rest is turbulence, so the sampler predicts far too few bytes.
  {
    const size_t chunk = 16384, chunks = 9;
    std::vector<float> mixed(chunk * chunks * g_size);
    for (int r = 0; r < g_size; ++r)
      for (size_t c = 0; c < chunks; ++c) {
        const float* src = c == chunks / 2 ? cesm.f32.data() : t.data() + c * chunk;
        std::copy(src, src + chunk, mixed.begin() + (r * chunks + c) * chunk);
      }
    Global mis{"misjudged", ZCOLL_FLOAT32, {mixed.size()}, mixed, {}, ZCOLL_EB_ABS, 0.01};
    zcoll_h5_options o;
    zcoll_h5_options_init(&o);
    o.sample_fraction = 0.01;  // one chunk of nine
    zcoll_h5_report rep;
    const std::string path = g_work + "/overflow_np" + std::to_string(g_size) + ".zh5";
    CHECK(write_file(MPI_COMM_WORLD, path, o, {{&mis, 0, -1}, {&cesm, 0, -1}}, &rep) == ZCOLL_SUCCESS);
    CHECK(rep.overflow_bytes > 0 && rep.overflow_ranks == g_size);
    check_read(path, {&mis, &cesm}, ZCOLL_FLOAT64, whole({&mis, &cesm}, false), whole({&mis, &cesm}, true), nullptr);
    o.extra_space = 1.0;
    o.sample_fraction = 0.05;
    const std::string tight = g_work + "/extra1_np" + std::to_string(g_size) + ".zh5";
    CHECK(write_file(MPI_COMM_WORLD, tight, o, specs, &rep) == ZCOLL_SUCCESS);
    check_read(tight, fields, ZCOLL_FLOAT64, whole(fields, false), whole(fields, true), nullptr);
  }

  // Reorder on and off: the same bytes.
  {
    zcoll_h5_options o;
    zcoll_h5_options_init(&o);
    const std::string a = g_work + "/reorder_on.zh5", b = g_work + "/reorder_off.zh5";
    CHECK(write_file(MPI_COMM_WORLD, a, o, specs, nullptr) == ZCOLL_SUCCESS);
    o.reorder = 0;
    CHECK(write_file(MPI_COMM_WORLD, b, o, specs, nullptr) == ZCOLL_SUCCESS);
    if (g_rank == 0) CHECK(file_bytes(a) == file_bytes(b) && !file_bytes(a).empty());
  }

  // Disagreeing or invalid arguments fail on every rank, and leave no complete file.
  {
    zcoll_h5_options o;
    zcoll_h5_options_init(&o);
    zcoll_h5_writer w = nullptr;
    const std::string path = g_work + "/mismatch.zh5";
    CHECK(zcoll_h5_writer_create(MPI_COMM_WORLD, path.c_str(), &o, &w) == ZCOLL_SUCCESS);
    const uint64_t dims[1] = {100}, start[1] = {0}, count[1] = {g_rank == 0 ? 100u : 0u};
    std::vector<float> v(t.begin(), t.begin() + 100);
    const double eb = g_rank == 0 || g_size == 1 ? 0.5 : 0.25;  // differs across ranks
    CHECK(zcoll_h5_write_field(w, "x", ZCOLL_FLOAT32, 1, dims, start, count, v.data(), ZCOLL_EB_ABS, eb) == 0);
    const int rc = zcoll_h5_writer_close(&w, nullptr);
    CHECK(g_size == 1 ? rc == ZCOLL_SUCCESS : rc == ZCOLL_ERR_MISMATCH);
    if (g_size > 1) CHECK(open_code(path) == ZCOLL_ERR_CORRUPT);
    // Overlapping hyperslabs: every rank claims the whole field.
    CHECK(zcoll_h5_writer_create(MPI_COMM_WORLD, path.c_str(), &o, &w) == ZCOLL_SUCCESS);
    const uint64_t all[1] = {100};
    CHECK(zcoll_h5_write_field(w, "x", ZCOLL_FLOAT32, 1, dims, start, all, v.data(), ZCOLL_EB_ABS, 0.5) == 0);
    CHECK(zcoll_h5_writer_close(&w, nullptr) == (g_size == 1 ? ZCOLL_SUCCESS : ZCOLL_ERR_ARG));
    // Refused locally: bad names, bounds, extents.
    CHECK(zcoll_h5_writer_create(MPI_COMM_WORLD, path.c_str(), &o, &w) == ZCOLL_SUCCESS);
    CHECK(zcoll_h5_write_field(w, "a/b", ZCOLL_FLOAT32, 1, dims, start, count, v.data(), ZCOLL_EB_ABS, 0.5) == ZCOLL_ERR_ARG);
    CHECK(zcoll_h5_write_field(w, "_x", ZCOLL_FLOAT32, 1, dims, start, count, v.data(), ZCOLL_EB_ABS, 0.5) == ZCOLL_ERR_ARG);
    CHECK(zcoll_h5_write_field(w, "y", ZCOLL_FLOAT32, 1, dims, start, count, v.data(), ZCOLL_EB_ABS, NAN) == ZCOLL_ERR_ARG);
    const uint64_t big[1] = {101};
    CHECK(zcoll_h5_write_field(w, "y", ZCOLL_FLOAT32, 1, dims, start, big, v.data(), ZCOLL_EB_ABS, 0.5) == ZCOLL_ERR_ARG);
    CHECK(zcoll_h5_writer_close(&w, nullptr) == ZCOLL_SUCCESS);
    // Bad options, and a file rank 0 cannot create: every rank gets the code and no writer.
    const auto create_code = [&](const zcoll_h5_options& opt, const std::string& where) {
      w = reinterpret_cast<zcoll_h5_writer>(&w);  // create must set it to NULL on failure
      const int code = zcoll_h5_writer_create(MPI_COMM_WORLD, where.c_str(), &opt, &w);
      CHECK(w == nullptr);
      return code;
    };
    zcoll_h5_options bad = o;
    bad.extra_space = 0.5;
    CHECK(create_code(bad, path) == ZCOLL_ERR_ARG);
    bad = o;
    bad.codec = 99;
    CHECK(create_code(bad, path) == ZCOLL_ERR_CODEC);
    bad = o;
    bad.mode = 7;
    CHECK(create_code(bad, path) == ZCOLL_ERR_ARG);
    const int io = create_code(o, g_work + "/no-such-directory/x.zh5");
    if (io != ZCOLL_ERR_IO) std::fprintf(stderr, "rank %d: create gave %d (%s)\n", g_rank, io, zcoll_h5_error_detail());
    CHECK(io == ZCOLL_ERR_IO);
  }

  // Damaged files: every rank gets the error.
  {
    zcoll_h5_options o;
    zcoll_h5_options_init(&o);
    const std::string good = g_work + "/good.zh5";
    CHECK(write_file(MPI_COMM_WORLD, good, o, {{&cesm, 0, -1}}, nullptr) == ZCOLL_SUCCESS);
    const long size = static_cast<long>(file_bytes(good).size());
    damaged(good, "truncated", [&](const std::string& p) { CHECK(truncate(p.c_str(), size / 2) == 0); },
            ZCOLL_ERR_CORRUPT, false, cesm);
    damaged(good, "version", [](const std::string& p) { set_root_u32(p, "zcoll_h5_format_version", 2); },
            ZCOLL_ERR_VERSION, false, cesm);
    damaged(good, "incomplete", [](const std::string& p) { set_root_u32(p, "zcoll_h5_complete", 0); },
            ZCOLL_ERR_CORRUPT, false, cesm);
    damaged(good, "partition", [](const std::string& p) {
      hid_t f = H5Fopen(p.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
      hid_t d = H5Dopen2(f, "cesm_TS/partition", H5P_DEFAULT);
      std::vector<uint64_t> part(static_cast<size_t>(g_size) * 6);
      H5Dread(d, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, part.data());
      part[3] += 1;  // rank 0's first extent one longer: overlaps or leaves the field
      H5Dwrite(d, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, part.data());
      H5Dclose(d);
      H5Fclose(f);
    }, ZCOLL_ERR_CORRUPT, false, cesm);
    damaged(good, "flipped", [](const std::string& p) {
      const haddr_t a = dataset_addr(p, "cesm_TS/streams");
      std::fstream io(p, std::ios::in | std::ios::out | std::ios::binary);
      io.seekg(static_cast<std::streamoff>(a + 200));
      char c = 0;
      io.read(&c, 1);
      c = static_cast<char>(c ^ 0x5a);
      io.seekp(static_cast<std::streamoff>(a + 200));
      io.write(&c, 1);
    }, ZCOLL_ERR_CORRUPT, true, cesm);
    CHECK(read_code(good, cesm) == ZCOLL_SUCCESS);
  }
  return 0;
}

// A file system too small for the data: close fails with ZCOLL_ERR_IO on every rank, and
// the file (if any) is not complete.
int run_diskfull(const std::string& dir) {
  std::vector<float> e = load_f32("echam5_T_17x96x192.f32", 17 * 96 * 192);
  Global echam{"echam5_T", ZCOLL_FLOAT64, {17, 96, 192}, {}, std::vector<double>(e.begin(), e.end()), ZCOLL_EB_ABS,
               1e-9};
  zcoll_h5_options o;
  zcoll_h5_options_init(&o);
  const std::string path = dir + "/full.zh5";
  const int rc = write_file(MPI_COMM_WORLD, path, o, {{&echam, 0, -1}}, nullptr);
  if (rc != ZCOLL_ERR_IO) std::fprintf(stderr, "rank %d: close gave %d (%s)\n", g_rank, rc, zcoll_h5_error_detail());
  CHECK(rc == ZCOLL_ERR_IO);
  if (access(path.c_str(), F_OK) == 0) CHECK(open_code(path) != ZCOLL_SUCCESS);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  if (argc == 4 && std::strcmp(argv[1], "--diskfull") == 0) {
    g_data = argv[3];
    run_diskfull(argv[2]);
  } else if (argc == 3) {
    g_data = argv[1];
    g_work = argv[2];
    run_all();
  } else {
    if (g_rank == 0) std::fprintf(stderr, "usage: test_h5io DATA_DIR WORK_DIR | --diskfull DIR DATA_DIR\n");
    MPI_Finalize();
    return 2;
  }
  int total = 0;
  MPI_Allreduce(&g_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0) std::printf("test_h5io on %d ranks: %s (%d failed checks)\n", g_size, total ? "FAILED" : "ok", total);
  MPI_Finalize();
  return total ? 1 : 0;
}
