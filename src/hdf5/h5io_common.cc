// Helpers shared by the writer and the reader (h5io_common.h).
#include "h5io_common.h"

#include <algorithm>
#include <cstring>

#include "codec/stream.h"
#include "shape_hint.h"

namespace zcoll::h5 {

const char* const kTableNames[kTables] = {"region_offset", "region_size",     "predicted_size",
                                          "stream_size",   "overflow_offset", "overflow_size"};

Handle& Handle::operator=(Handle&& o) noexcept {
  if (this != &o) {
    reset();
    id_ = o.id_;
    o.id_ = H5I_INVALID_HID;
  }
  return *this;
}

bool Handle::close() {
  if (id_ < 0) return true;
  herr_t rc = -1;
  switch (H5Iget_type(id_)) {
    case H5I_FILE: rc = H5Fclose(id_); break;
    case H5I_GROUP: rc = H5Gclose(id_); break;
    case H5I_DATASET: rc = H5Dclose(id_); break;
    case H5I_DATASPACE: rc = H5Sclose(id_); break;
    case H5I_DATATYPE: rc = H5Tclose(id_); break;
    case H5I_ATTR: rc = H5Aclose(id_); break;
    case H5I_GENPROP_LST: rc = H5Pclose(id_); break;
    default: rc = H5Idec_ref(id_); break;
  }
  id_ = H5I_INVALID_HID;
  return rc >= 0;
}

void Handle::reset() {
  QuietHdf5 quiet;
  close();
}

QuietHdf5::QuietHdf5() {
  H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

QuietHdf5::~QuietHdf5() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }

Handle file_access() {
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS));
#if H5_VERSION_GE(1, 10, 7)
  if (fapl.ok()) H5Pset_file_locking(fapl.get(), false, true);
#endif
  return fapl;
}

Handle untimed(hid_t cls) {
  Handle p(H5Pcreate(cls));
  if (p.ok()) H5Pset_obj_track_times(p.get(), false);
  return p;
}

namespace {

Handle scalar_space() { return Handle(H5Screate(H5S_SCALAR)); }

bool write_attr(hid_t obj, const char* name, hid_t file_type, hid_t mem_type, hid_t space, const void* v) {
  if (space < 0) return false;
  if (H5Aexists(obj, name) > 0 && H5Adelete(obj, name) < 0) return false;
  Handle a(H5Acreate2(obj, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT));
  return a.ok() && H5Awrite(a.get(), mem_type, v) >= 0 && a.close();
}

// Opens attribute `name` if it exists with `cls` and n elements (n_max: up to that many).
Handle open_attr(hid_t obj, const char* name, H5T_class_t cls, hssize_t n_min, hssize_t n_max, hssize_t* n) {
  if (H5Aexists(obj, name) <= 0) return Handle();
  Handle a(H5Aopen(obj, name, H5P_DEFAULT));
  if (!a.ok()) return Handle();
  Handle type(H5Aget_type(a.get())), space(H5Aget_space(a.get()));
  if (!type.ok() || !space.ok() || H5Tget_class(type.get()) != cls) return Handle();
  const hssize_t count = H5Sget_simple_extent_npoints(space.get());
  if (count < n_min || count > n_max) return Handle();
  if (n) *n = count;
  return a;
}

}  // namespace

bool write_attr_u32(hid_t obj, const char* name, uint32_t v) {
  Handle s = scalar_space();
  return write_attr(obj, name, H5T_STD_U32LE, H5T_NATIVE_UINT32, s.get(), &v);
}

bool write_attr_f64(hid_t obj, const char* name, double v) {
  Handle s = scalar_space();
  return write_attr(obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, s.get(), &v);
}

bool write_attr_u64s(hid_t obj, const char* name, const uint64_t* v, size_t n) {
  const hsize_t dim = n;
  Handle s(H5Screate_simple(1, &dim, nullptr));
  return write_attr(obj, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, s.get(), v);
}

bool write_attr_string(hid_t obj, const char* name, const std::string& v) {
  Handle type(H5Tcopy(H5T_C_S1));
  if (!type.ok() || H5Tset_size(type.get(), std::max<size_t>(v.size(), 1)) < 0 ||
      H5Tset_strpad(type.get(), H5T_STR_NULLPAD) < 0)
    return false;
  std::string padded = v;
  padded.resize(std::max<size_t>(v.size(), 1), '\0');
  Handle s = scalar_space();
  return write_attr(obj, name, type.get(), type.get(), s.get(), padded.data());
}

bool read_attr_u32(hid_t obj, const char* name, uint32_t* v) {
  Handle a = open_attr(obj, name, H5T_INTEGER, 1, 1, nullptr);
  return a.ok() && H5Aread(a.get(), H5T_NATIVE_UINT32, v) >= 0;
}

bool read_attr_f64(hid_t obj, const char* name, double* v) {
  Handle a = open_attr(obj, name, H5T_FLOAT, 1, 1, nullptr);
  return a.ok() && H5Aread(a.get(), H5T_NATIVE_DOUBLE, v) >= 0;
}

bool read_attr_u64s(hid_t obj, const char* name, std::vector<uint64_t>* v, size_t max_n) {
  hssize_t n = 0;
  Handle a = open_attr(obj, name, H5T_INTEGER, 1, static_cast<hssize_t>(max_n), &n);
  if (!a.ok()) return false;
  v->assign(static_cast<size_t>(n), 0);
  return H5Aread(a.get(), H5T_NATIVE_UINT64, v->data()) >= 0;
}

bool read_attr_string(hid_t obj, const char* name, std::string* v) {
  Handle a = open_attr(obj, name, H5T_STRING, 1, 1, nullptr);
  if (!a.ok()) return false;
  Handle type(H5Aget_type(a.get()));
  if (!type.ok() || H5Tis_variable_str(type.get()) != 0) return false;
  const size_t size = H5Tget_size(type.get());
  if (size == 0 || size > 4096) return false;
  std::string s(size, '\0');
  if (H5Aread(a.get(), type.get(), s.data()) < 0) return false;
  s.resize(std::strlen(s.c_str()));
  *v = s;
  return true;
}

bool write_table(hid_t group, const char* name, const std::vector<uint64_t>& v, const std::vector<hsize_t>& shape) {
  Handle space(H5Screate_simple(static_cast<int>(shape.size()), shape.data(), nullptr));
  if (!space.ok()) return false;
  Handle dcpl = untimed(H5P_DATASET_CREATE);
  Handle d(H5Dcreate2(group, name, H5T_STD_U64LE, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT));
  return d.ok() && (v.empty() || H5Dwrite(d.get(), H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0) &&
         d.close();
}

bool read_table(hid_t group, const char* name, const std::vector<hsize_t>& shape, std::vector<uint64_t>* v) {
  if (H5Lexists(group, name, H5P_DEFAULT) <= 0) return false;
  Handle d(H5Dopen2(group, name, H5P_DEFAULT));
  if (!d.ok()) return false;
  Handle type(H5Dget_type(d.get())), space(H5Dget_space(d.get()));
  if (!type.ok() || !space.ok() || H5Tget_class(type.get()) != H5T_INTEGER) return false;
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank != static_cast<int>(shape.size())) return false;
  std::vector<hsize_t> got(shape.size());
  H5Sget_simple_extent_dims(space.get(), got.data(), nullptr);
  if (got != shape) return false;
  size_t n = 1;
  for (hsize_t e : shape) n *= e;
  v->assign(n, 0);
  return n == 0 || H5Dread(d.get(), H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v->data()) >= 0;
}

uint64_t volume(const uint64_t* count, int ndims) {
  uint64_t v = 1;
  for (int d = 0; d < ndims; ++d) {
    if (count[d] == 0) return 0;
    if (v > UINT64_MAX / count[d]) return UINT64_MAX;
    v *= count[d];
  }
  return v;
}

bool intersect(const uint64_t* a_start, const uint64_t* a_count, const uint64_t* b_start,
               const uint64_t* b_count, int ndims, uint64_t* lo, uint64_t* n) {
  for (int d = 0; d < ndims; ++d) {
    const uint64_t l = std::max(a_start[d], b_start[d]);
    const uint64_t h = std::min(a_start[d] + a_count[d], b_start[d] + b_count[d]);
    if (h <= l) return false;
    lo[d] = l;
    n[d] = h - l;
  }
  return true;
}

namespace {

template <class S, class D>
void convert_run(const void* src, void* dst, uint64_t n) {
  const S* s = static_cast<const S*>(src);
  D* d = static_cast<D*>(dst);
  for (uint64_t i = 0; i < n; ++i) d[i] = static_cast<D>(s[i]);
}

// Element offset of global point p inside the box (start, count), C order.
uint64_t offset_in(const uint64_t* p, const uint64_t* start, const uint64_t* count, int ndims) {
  uint64_t off = 0;
  for (int d = 0; d < ndims; ++d) off = off * count[d] + (p[d] - start[d]);
  return off;
}

}  // namespace

void copy_box(const void* src, zcoll_dtype src_dtype, const uint64_t* src_start, const uint64_t* src_count,
              void* dst, zcoll_dtype dst_dtype, const uint64_t* dst_start, const uint64_t* dst_count,
              const uint64_t* lo, const uint64_t* n, int ndims) {
  const size_t ss = codec::element_size(src_dtype), ds = codec::element_size(dst_dtype);
  const uint64_t run = n[ndims - 1];
  // Walk every row of the box (all dimensions but the fastest) like an odometer.
  uint64_t p[ZCOLL_H5_MAX_DIMS];
  std::copy(lo, lo + ndims, p);
  for (;;) {
    const void* s = static_cast<const uint8_t*>(src) + offset_in(p, src_start, src_count, ndims) * ss;
    void* d = static_cast<uint8_t*>(dst) + offset_in(p, dst_start, dst_count, ndims) * ds;
    if (src_dtype == dst_dtype) std::memcpy(d, s, run * ss);
    else if (src_dtype == ZCOLL_FLOAT32) convert_run<float, double>(s, d, run);
    else convert_run<double, float>(s, d, run);
    int dim = ndims - 2;
    for (; dim >= 0; --dim) {
      if (++p[dim] < lo[dim] + n[dim]) break;
      p[dim] = lo[dim];
    }
    if (dim < 0) return;
  }
}

bool partition_valid(const std::vector<uint64_t>& boxes, int ranks, const uint64_t* dims, int ndims, std::string* why) {
  const size_t w = 2 * static_cast<size_t>(ndims);
  if (boxes.size() != static_cast<size_t>(ranks) * w) {
    *why = "the partition table has the wrong size";
    return false;
  }
  const uint64_t total = volume(dims, ndims);
  uint64_t sum = 0;
  for (int r = 0; r < ranks; ++r) {
    const uint64_t* s = &boxes[r * w];
    const uint64_t* c = s + ndims;
    for (int d = 0; d < ndims; ++d) {
      if (c[d] > dims[d] || s[d] > dims[d] - c[d]) {
        *why = "rank " + std::to_string(r) + "'s hyperslab lies outside the field's dims";
        return false;
      }
    }
    sum += volume(c, ndims);
  }
  if (sum != total) {
    *why = "the ranks' hyperslabs hold " + std::to_string(sum) + " elements, the field " + std::to_string(total);
    return false;
  }
  // Equal volumes and no overlap mean exact cover. The pairwise test is quadratic in the
  // rank count but touches no data (thousands of ranks: milliseconds).
  uint64_t lo[ZCOLL_H5_MAX_DIMS], n[ZCOLL_H5_MAX_DIMS];
  for (int a = 0; a < ranks; ++a) {
    const uint64_t* as = &boxes[a * w];
    if (volume(as + ndims, ndims) == 0) continue;
    for (int b = a + 1; b < ranks; ++b) {
      const uint64_t* bs = &boxes[b * w];
      if (volume(bs + ndims, ndims) == 0) continue;
      if (intersect(as, as + ndims, bs, bs + ndims, ndims, lo, n)) {
        *why = "the hyperslabs of ranks " + std::to_string(a) + " and " + std::to_string(b) + " overlap";
        return false;
      }
    }
  }
  return true;
}

zcoll_codec_params stream_params(int codec, double eb_abs, const uint64_t* count, int ndims, int threads) {
  zcoll_codec_params p;
  zcoll_codec_params_init(&p);
  p.codec = codec;
  p.eb_mode = ZCOLL_EB_ABS;
  p.eb = eb_abs;
  p.threads = threads;
  uint64_t hint[3];
  const int r = fold_shape(count, ndims, hint);
  p.ndims = r;
  for (int d = 0; d < r; ++d) p.dims[d] = static_cast<size_t>(hint[d]);
  if (r == 1) {  // 1-D is the codec's default: no hint
    p.ndims = 0;
    p.dims[0] = 0;
  }
  return p;
}

}  // namespace zcoll::h5
